"""``dshctl grep`` (issue #12): what is searched, how it matches, where hits are placed, the output forms,
the exit statuses, and the byte test that lets ``-F`` skip a log without decoding it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import re
import string
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dshctl
from dshctl.grep import compile_pattern, grep_log
from dshctl.grep.render import SessionIds, group_lines
from dshctl.grep.search import _grep_one
from dshctl.options import GrepOptions
from dshctl.grep.skip import _CASE_TWINS, ByteTest
from dshctl.stream import Accumulator, iter_members

from conftest import CORPUS, REPO as ROOT, SAMPLES, PipeFeeder, corpus_file, invoke as run_cli

TOUR = {0: "tour.session.jsonl.zstd", 2: "tour.session.v2.jsonl.zstd", 3: "tour.session.v3.jsonl.zstd", 4: "tour.session.v4.jsonl.zstd"}


def places(result) -> list[tuple]:
    """What a log's hits are, whatever its generation (seqs differ between generations)."""
    return [(hit.turn, hit.step, hit.kind, hit.text, hit.match) for hit in result.hits]


def invoke(*args: str, status: int | None = 0):
    return run_cli(*args, status=status)


# --------------------------------------------------------------------------------------------------
# Crafted logs


V4_HEADER = {"type": "session", "version": 4, "id": "11111111-2222-3333-4444-555555555555", "createdAt": 1_790_000_000_000,
             "cwd": "/w", "delegationDepth": 0, "isSeeded": False}


def v4_log(path: Path, settlements: list[list[tuple[int, dict]]], *, extra: list[dict] = (), header: dict | None = None) -> Path:
    """A v4 log of one turn: each settlement (a list of timed chunks, packed by dsh's accumulator) its own step."""
    events: list[dict] = []

    def add(kind: str, data, **envelope) -> None:
        events.append({"type": kind, "seq": len(events), "time": 1000 + len(events), "data": data, **envelope})

    add("turn/start", {"turn": 1})
    for step, chunks in enumerate(settlements, start=1):
        add("step/start", {"turn": 1, "step": step})
        accumulator = Accumulator()
        for time, chunk in chunks:
            accumulator.push(time, chunk)
        stream = [json.loads(json.dumps(record, default=_builtins)) for record in accumulator.records]
        message = {"id": f"a{step}", "role": "assistant", "content": [], "source": {"kind": "model", "provider": "p", "model": "m"}}
        add("assistant/message", {"turn": 1, "step": step, "message": message, "stream": stream}, surfaceOp="append")
        add("step/end", {"turn": 1, "step": step})
    for event in extra:
        add(event["type"], event["data"], **{k: v for k, v in event.items() if k not in ("type", "data")})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    lines = [header or V4_HEADER] + events
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _builtins(value):
    import msgspec

    return msgspec.to_builtins(value)


def text(index: int, value: str, kind: str = "text") -> tuple[int, dict]:
    return 2000, {"type": f"{kind}-delta", "index": index, "text": value}


# A v0 log: "the CI cache" split across a packed row and a chunk event, a tool call whose arguments are
# split over rows, a prompt, a tool result and a title.
V0_SPLIT = [
    {"type": "session", "version": 0, "id": "v0-split", "createdAt": 1_790_000_000_000, "cwd": "/w", "delegationDepth": 0},
    {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 1000, "data": {"turn": 1, "step": 1}},
    {"type": "user/message", "seq": 2, "time": 1001, "data": {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Which session fixed the CI cache?"}], "source": {"kind": "user"}}, "surfaceOp": "append"},
    {"type": "assistant/chunk", "seq": 3, "time": 1100, "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}},
    {"type": "text-chunks", "seq0": 4, "time0": 1101, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["I fixed the C", "I ", "ca"]}},
    {"type": "assistant/chunk", "seq": 7, "time": 1104, "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "che.\nDone."}}},
    {"type": "assistant/chunk", "seq": 8, "time": 1105, "data": {"turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "read", "argumentsDelta": ""}}},
    {"type": "tool-call-chunks", "seq0": 9, "time0": 1106, "data": {"turn": 1, "step": 1, "index": 1, "id": "c1", "dt": [1, 1], "args": ["{\"path\":", " \"ci.y", "ml\"}"]}},
    {"type": "assistant/chunk", "seq": 12, "time": 1110, "data": {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}}},
    {"type": "assistant/message", "seq": 13, "time": 1111, "data": {"turn": 1, "step": 1, "message": {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "I fixed the CI cache.\nDone."}, {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{\"path\": \"ci.yml\"}"}], "source": {"kind": "model", "provider": "p", "model": "m"}}}, "sourceEventSeqs": list(range(3, 13)), "surfaceOp": "append"},
    {"type": "tool/call", "seq": 14, "time": 1112, "data": {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": "{\"path\": \"ci.yml\"}"}},
    {"type": "tool/result", "seq": 15, "time": 1113, "data": {"turn": 1, "step": 1, "message": {"id": "r1", "role": "user", "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "cache: npm\nkey: ci-cache-v2"}]}], "source": {"kind": "tool", "callId": "c1"}}}, "sourceEventSeqs": [14], "surfaceOp": "append"},
    {"type": "step/end", "seq": 16, "time": 1114, "data": {"turn": 1, "step": 1}},
    {"type": "turn/end", "seq": 17, "time": 1115, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    {"type": "session/title", "seq": 18, "time": 1116, "data": {"title": "Fix the CI cache", "messageSeqs": [2]}},
]


@pytest.fixture
def v0_split(tmp_path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in V0_SPLIT))
    return path


# --------------------------------------------------------------------------------------------------
# What is searched, and where hits are placed


def test_v0_text_split_across_a_row_and_an_event_is_found_in_its_settlement(v0_split):
    result = grep_log(v0_split, "CI cache", GrepOptions(fixed_strings=True))
    assert [(h.turn, h.step, h.seq, h.kind, h.text, h.match) for h in result.hits] == [
        (1, 1, 2, "user", "Which session fixed the CI cache?", (24, 32)),
        (1, 1, 13, "assistant", "I fixed the CI cache.", (12, 20)),
        (None, None, 18, "title", "Fix the CI cache", (8, 16)),
    ]


def test_tool_call_arguments_split_across_rows_and_the_name(v0_split):
    assert places(grep_log(v0_split, '"ci.yml"', GrepOptions(fixed_strings=True, in_="tool-call"))) == [
        (1, 1, "tool-call", '{"path": "ci.yml"}', (9, 17))]
    assert places(grep_log(v0_split, "^read$", GrepOptions(in_="tool-call"))) == [(1, 1, "tool-call", "read", (0, 4))]


@pytest.mark.parametrize("kind, expected", [
    ("user", 1), ("assistant", 1), ("reasoning", 0), ("tool-call", 0), ("tool-result", 1), ("title", 1)])
def test_each_in_kind_narrows_the_search(v0_split, kind, expected):
    result = grep_log(v0_split, "(?i)ci.cache", GrepOptions(in_=kind))
    assert result.count == expected and {hit.kind for hit in result.hits} <= {kind}


def test_every_tour_generation_gives_the_same_hits():
    for pattern in ("Node 1[45]", "ci\\.yml", "(?m)^Stage \\d", "SyntaxError on `\\?\\?=`", "read", "Fix the red CI"):
        found = {version: places(grep_log(SAMPLES / name, pattern)) for version, name in TOUR.items()}
        assert found[0], pattern
        assert found[0] == found[2] == found[3] == found[4], pattern


def test_the_forty_delta_run_reads_as_one_text():
    hits = grep_log(SAMPLES / TOUR[4], "Stage 1 — checkout: the runner clones").hits
    assert len(hits) == 1 and hits[0].kind == "assistant"


def test_interleaved_blocks_read_whole_and_never_join(tmp_path):
    path = v4_log(tmp_path / "session.v4.jsonl", [[
        text(0, "hel"), text(1, "wor", "reasoning"), text(0, "lo the"), text(1, "ld of"), text(0, "re"), text(1, " it"),
    ]])
    assert places(grep_log(path, "hello there")) == [(1, 1, "assistant", "hello there", (0, 11))]
    assert places(grep_log(path, "world of it")) == [(1, 1, "reasoning", "world of it", (0, 11))]
    assert grep_log(path, "thereworld").count == 0
    assert grep_log(path, "lo thewor").count == 0


def test_deltas_after_their_block_end_were_not_seen(tmp_path):
    end = (2000, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "seen"}})
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "seen"), end, text(0, "unseen")]])
    assert grep_log(path, "seen").count == 1 and grep_log(path, "unseen").count == 0


def test_a_whole_block_and_a_message_without_stream_are_searched(tmp_path):
    end = (2000, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "whole thought"}})
    path = v4_log(tmp_path / "session.v4.jsonl", [[end]])
    assert places(grep_log(path, "thought")) == [(1, 1, "reasoning", "whole thought", (6, 13))]


def test_context_messages_are_not_prompts(tmp_path):
    context = {"type": "user/message", "data": {"id": "c", "role": "user", "content": [{"type": "text", "text": "needle"}],
                                                 "source": {"kind": "runtime-context"}}, "surfaceOp": "append"}
    path = v4_log(tmp_path / "session.v4.jsonl", [], extra=[context])
    assert grep_log(path, "needle").count == 0


# --------------------------------------------------------------------------------------------------
# Matching


def test_regex_and_fixed_string():
    tour = SAMPLES / TOUR[4]
    matches = lambda pattern: len(grep_log(tour, pattern).hits)  # noqa: E731
    assert matches("Node 1.") == matches("Node 14") + matches("Node 15")
    assert grep_log(tour, "Node 1.", GrepOptions(fixed_strings=True)).count == 0
    assert grep_log(tour, "??=", GrepOptions(fixed_strings=True)).count > 0
    with pytest.raises(dshctl.DshctlError, match="invalid regular expression"):
        grep_log(tour, "??=")


def test_case_options():
    assert compile_pattern("node", smart_case=True).ignore_case
    assert not compile_pattern("Node", smart_case=True).ignore_case
    assert compile_pattern("Node", smart_case=True, ignore_case=True).ignore_case
    assert compile_pattern(r"\W+node", smart_case=True).ignore_case  # escapes are not letters
    tour = SAMPLES / TOUR[4]
    exact = grep_log(tour, "Node 14").count
    assert grep_log(tour, "node 14").count == 0
    assert grep_log(tour, "node 14", GrepOptions(ignore_case=True)).count == exact
    assert grep_log(tour, "node 14", GrepOptions(smart_case=True, fixed_strings=True)).count == exact
    assert grep_log(tour, "NODE 14", GrepOptions(smart_case=True)).count == 0


def test_whole_words(tmp_path):
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "cache caches cached (cache) ci-cache")]])
    assert len(grep_log(path, "cache").hits) == 5 and grep_log(path, "cache").count == 1  # one line
    assert [hit.match for hit in grep_log(path, "cache", GrepOptions(word_regexp=True)).hits] == [(0, 5), (21, 26), (31, 36)]
    assert grep_log(path, "(cache)", GrepOptions(word_regexp=True, fixed_strings=True)).count == 1  # non-word ends still work


def test_hits_report_the_line_and_lines_spanned(tmp_path):
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "one\ntwo three\nfour")]])
    assert places(grep_log(path, "three")) == [(1, 1, "assistant", "two three", (4, 9))]
    assert places(grep_log(path, r"three\sfo")) == [(1, 1, "assistant", "two three\nfour", (4, 12))]
    assert [hit.match for hit in grep_log(path, "^").hits] == [(0, 0)] * 3  # a zero-length match once a line


# --------------------------------------------------------------------------------------------------
# -l, -c, -m, -C and the output forms


def test_max_count_count_only_and_context(tmp_path):
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "a\nb x\nc\nd x\ne\nf")]])
    assert grep_log(path, "x", GrepOptions(max_count=1)).count == 1
    assert grep_log(path, "x", GrepOptions(max_count=0)).count == 0
    counted = grep_log(path, "x", GrepOptions(count=True))
    assert counted.count == 2 and counted.hits == []
    first, second = grep_log(path, "x", GrepOptions(context=1)).hits
    assert (first.before, first.text, first.after) == (["a"], "b x", ["c"])
    assert (second.before, second.text, second.after) == (["c"], "d x", ["e"])
    assert grep_log(path, "^a", GrepOptions(context=2)).hits[0].before == []
    assert grep_log(path, "^f", GrepOptions(context=2)).hits[0].after == []


def test_files_with_matches_stops_at_the_first_hit(v0_split, tmp_path):
    """A log damaged after its first hit: -l never reads that far; a full search reports the damage."""
    lines = v0_split.read_text().splitlines()
    lines.insert(14, "{not json")  # in the committed region: a turn/end follows
    damaged = tmp_path / "damaged" / "session.jsonl"
    damaged.parent.mkdir()
    damaged.write_text("\n".join(lines) + "\n")
    assert invoke("grep", "-l", "CI cache", str(damaged)).stdout == f"{damaged}\n"
    invoke("grep", "CI cache", str(damaged), status=2)


def test_line_output_is_ripgrep_like(v0_split):
    result = invoke("grep", "CI cache", str(v0_split))
    assert result.stdout.splitlines() == [
        "v0-split:1:1:user:Which session fixed the CI cache?",
        "v0-split:1:1:assistant:I fixed the CI cache.",
        "v0-split:-:-:title:Fix the CI cache",
    ]
    context = invoke("grep", "-C", "1", "--in", "assistant", "fixed", str(v0_split)).stdout
    assert context.splitlines() == ["v0-split:1:1:assistant:I fixed the CI cache.", "v0-split:1:1:assistant-Done."]
    assert invoke("grep", "-c", "(?i)ci.cache", str(v0_split)).stdout == f"{v0_split}:4\n"


def test_ndjson_and_json_keys(v0_split):
    records = [json.loads(line) for line in invoke("grep", "--ndjson", "CI cache", str(v0_split)).stdout.splitlines()]
    assert [list(record) for record in records] == [["path", "id", "turn", "step", "seq", "kind", "text", "match"]] * 3
    assert records[0] == {"path": str(v0_split), "id": "v0-split", "turn": 1, "step": 1, "seq": 2, "kind": "user",
                          "text": "Which session fixed the CI cache?", "match": [24, 32]}
    document = json.loads(invoke("grep", "--json", "-C", "1", "fixed", str(v0_split)).stdout)
    assert document["schema"] == "dshctl-grep/1" and document["errors"] == []
    assert document["hits"][1]["after"] == ["Done."] and document["hits"][1]["before"] == []
    files = json.loads(invoke("grep", "--json", "-l", "CI", str(v0_split)).stdout)
    assert files["files"] == [{"path": str(v0_split), "id": "v0-split"}]
    counts = [json.loads(line) for line in invoke("grep", "--ndjson", "-c", "CI", str(v0_split)).stdout.splitlines()]
    assert counts == [{"path": str(v0_split), "id": "v0-split", "count": 3}]


def test_short_ids_are_the_tables_unique_prefixes(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path))  # an empty sessions root
    names = SessionIds()
    assert names("7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57") == "7c1e5a2d"
    assert names("agent-session-5d9e2c71-0b3a-4f68-a1c4-7e2b9d0f3a86") == "agent-session-5d9e2c71"
    assert names("short") == "short"
    # unique among the sessions of the run (and of the root), so that the id shown opens the session
    names = SessionIds(["7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57", "7c1e5a2d-3b9f-0000-0000-000000000000"])
    assert names("7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57") == "7c1e5a2d-3b9f-4"
    (tmp_path / "sessions" / "--p--" / "7c1e5a2d-3b9f-4e61-0000").mkdir(parents=True)
    assert SessionIds()("7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57") == "7c1e5a2d-3b9f-4e61-a"


def test_hostile_text_is_shown_literally_and_only_our_colour_is_written(tmp_path):
    hostile = "[/bold][red]x[/red] \x1b[2J\x1b]0;pwned\x07 :smile: \x9b31m"
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "say " + hostile + " done")]])
    result = _grep_one(path, compile_pattern("pwned"), GrepOptions(), grouped=True)
    (group,) = result.groups
    plain = group_lines(result, group, color=False)
    assert "[/bold][red]x[/red] ␛[2J␛]0;pwned␇ :smile: \ufffd31m" in plain
    coloured = group_lines(result, group, color=True)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    assert "\x1b[1;31mpwned\x1b[0m" in coloured
    shown = invoke("grep", "pwned", str(path)).stdout
    assert shown == plain and "\x1b" not in shown


# --------------------------------------------------------------------------------------------------
# Exit statuses


def test_exit_statuses(v0_split, tmp_path):
    invoke("grep", "CI", str(v0_split), status=0)
    invoke("grep", "absent", str(v0_split), status=1)
    invoke("grep", "(", str(v0_split), status=2)
    invoke("grep", "--in", "nothing", "x", str(v0_split), status=2)
    bad = tmp_path / "bad" / "session.v4.jsonl"
    bad.parent.mkdir()
    bad.write_text("not a log\n")
    invoke("grep", "CI", str(bad), status=2)  # the only log given
    mixed = invoke("grep", "CI", str(v0_split), str(bad), status=0)  # hits elsewhere: reported, still 0
    assert "not a dsh session header" in mixed.stderr or "not JSON" in mixed.stderr
    invoke("grep", "absent", str(v0_split), str(bad), status=2)  # no hit, but a log went unsearched


def test_since_and_until_use_the_header(v0_split):
    invoke("grep", "--since", "2026-09-01", "CI", str(v0_split), status=0)
    invoke("grep", "--until", "2026-09-01", "CI", str(v0_split), status=1)
    invoke("grep", "-F", "--until", "2026-09-01", "CI", str(v0_split), status=1)


def test_many_logs_in_worker_processes_give_the_same_output(tmp_path, monkeypatch):
    from dshctl import many

    monkeypatch.setattr(many, "BATCH_BYTES", 1 << 10)
    root = tmp_path / "sessions"
    for index in range(10):
        folder = root / "--w--" / f"s{index}"
        folder.mkdir(parents=True)
        (folder / TOUR[index % 2 * 4].removeprefix("tour.")).write_bytes((SAMPLES / TOUR[index % 2 * 4]).read_bytes())
    single = invoke("grep", "-j", "1", "--ndjson", "ci\\.yml", str(root)).stdout
    assert invoke("grep", "-j", "2", "--ndjson", "ci\\.yml", str(root)).stdout == single and single.count("\n") == 80


# --------------------------------------------------------------------------------------------------
# The byte test of -F


def test_case_twins_table_is_pythons():
    """Every non-ASCII character Python's re.IGNORECASE matches with an ASCII letter is in the table."""
    letters = re.compile("[a-z]", re.IGNORECASE)
    twins: dict[str, str] = {}
    for code in range(0x80, 0x110000):
        if letters.fullmatch(chr(code)):
            letter = next(c for c in string.ascii_lowercase if re.fullmatch(c, chr(code), re.IGNORECASE))
            twins[letter] = twins.get(letter, "") + chr(code)
    assert twins == _CASE_TWINS


def test_byte_test_skips_what_cannot_be_there_and_keeps_what_may_be():
    data = b'{"type":"x","texts":["the C","I cache"],"text":"plain \\u00e9t\\u00e9 \\"q\\""}\n'
    assert ByteTest("CI cache", False).may_hold(data)  # split across two members
    assert ByteTest("abac", False).may_hold(b'["aba","bac"]')  # cut after "a", not after the longer "aba"
    assert not ByteTest("abac", False).may_hold(b'["aba","xac"]')
    assert ByteTest("plain", False).may_hold(data)
    assert not ByteTest("absent", False).may_hold(data)
    assert not ByteTest("type x", False).may_hold(data)  # "type" ends a key, not a member
    assert ByteTest("été", False).may_hold(data)  # written as escapes
    assert ByteTest('"q"', False).may_hold(data)
    assert ByteTest("PLAIN", True).may_hold(data) and not ByteTest("PLAIN", False).may_hold(data)
    assert ByteTest("kelvin", True).may_hold("\u212aelvin".encode())
    assert not ByteTest("", False).possible and not ByteTest("é", True).possible


_ALPHABET = st.sampled_from(list("ab cK\u212a\u00e9\"\\/\n\u0130s\u017f😀"))
_writers = st.sampled_from([
    lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False),
    lambda value: json.dumps(value),
    lambda value: json.dumps(value, ensure_ascii=False, indent=1).replace("\n", " "),
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    members=st.lists(st.text(_ALPHABET, max_size=6), min_size=1, max_size=6),
    needle=st.text(_ALPHABET, min_size=1, max_size=4),
    ignore_case=st.booleans(),
    write=_writers,
)
def test_byte_test_never_skips_a_possible_hit(members, needle, ignore_case, write):
    record = {"type": "text-chunks", "time0": 1, "index": 0, "dt": [1] * (len(members) - 1), "texts": members}
    data = write(record).encode()
    pattern = compile_pattern(needle, fixed=True, ignore_case=ignore_case)
    if pattern.regex.search("".join(members)):
        assert ByteTest(needle, ignore_case).may_hold(data)


def test_fixed_strings_find_the_same_with_and_without_the_byte_test():
    """On every sample and corpus log: -F (which may skip a log) finds what the same regex finds."""
    logs = sorted(SAMPLES.glob("*.jsonl*")) + (sorted(CORPUS.rglob("*.jsonl")) if CORPUS.is_dir() else [])
    for needle in ("Node 14", "ci.yml", "the", "tool", "é", '"'):
        for log in logs:
            try:
                regex = places(grep_log(log, re.escape(needle), GrepOptions(ignore_case=True)))
            except dshctl.DshctlError:
                continue
            assert places(grep_log(log, needle, GrepOptions(fixed_strings=True, ignore_case=True))) == regex, (log, needle)


def test_a_skipped_log_still_has_its_header_checked(tmp_path):
    newer = tmp_path / "session.v4.jsonl"
    newer.write_text(json.dumps({**V4_HEADER, "version": 9}) + "\n")
    with pytest.raises(dshctl.DshctlError, match="newer dsh"):
        grep_log(newer, "absent", GrepOptions(fixed_strings=True))
    compressed = tmp_path / "z" / "session.v4.jsonl.zstd"
    compressed.parent.mkdir()
    lines = (SAMPLES / "tour.session.v4.jsonl").read_bytes().splitlines(keepends=True)
    zstd = zstandard.ZstdCompressor()
    frames = [zstd.compress(lines[0]), zstd.compress(b"".join(lines[1:40])), zstd.compress(b"".join(lines[40:]))[:-200]]
    compressed.write_bytes(b"".join(frames))  # the last frame torn
    torn = grep_log(compressed, "Node 14", GrepOptions(fixed_strings=True))
    assert torn.count == grep_log(compressed, "Node 14").count > 0
    assert any("torn" in warning for warning in torn.warnings)


# --------------------------------------------------------------------------------------------------
# The property: grep's count is a naive search over the expanded stream


_PIECES = st.text(st.sampled_from(list("ab \nc")), max_size=5)
_CHUNKS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["text", "reasoning", "tool-call"]), _PIECES), min_size=1, max_size=25
)


def _chunk(index: int, kind: str, piece: str) -> tuple[int, dict]:
    if kind == "tool-call":
        return 2000, {"type": "tool-call-delta", "index": index, "id": f"c{index}", "argumentsDelta": piece}
    return 2000, {"type": f"{kind}-delta", "index": index, "text": piece}


def _naive_count(chunks: list[tuple[int, dict]], regex: re.Pattern) -> int:
    """Every member expanded (no record-level reader), joined per block, searched block by block."""
    accumulator = Accumulator()
    for time, chunk in chunks:
        accumulator.push(time, chunk)
    blocks: dict[int, list[str]] = {}
    for _, member in iter_members(accumulator.records):
        blocks.setdefault(member["index"], []).append(member.get("text", member.get("argumentsDelta")))
    return sum(len(regex.findall("".join(parts))) for parts in blocks.values())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(chunks=_CHUNKS, needle=st.text(st.sampled_from(list("ab c")), min_size=1, max_size=3), fixed=st.booleans())
def test_match_count_equals_a_naive_search_of_the_expanded_stream(tmp_path_factory, chunks, needle, fixed):
    # one block index keeps one kind (as a real stream does)
    kinds: dict[int, str] = {}
    chunks = [_chunk(index, kinds.setdefault(index, kind), piece) for index, kind, piece in chunks]
    path = v4_log(tmp_path_factory.mktemp("p") / "session.v4.jsonl", [chunks])
    pattern = needle if fixed else re.escape(needle).replace("a", "a+")
    assert len(grep_log(path, pattern, GrepOptions(fixed_strings=fixed)).hits) == _naive_count(chunks, re.compile(re.escape(needle) if fixed else pattern))


# --------------------------------------------------------------------------------------------------
# The new-user review of grep


@pytest.mark.parametrize("needle", ["straße", "STRAßE", "ŉ", "ﬁx"])
@pytest.mark.parametrize("option", ["-i", "-S"])
def test_letters_whose_case_mapping_is_several_characters(tmp_path, needle, option):
    """ß upper-cases to "SS", ŉ to "ʼN", ﬁ to "FI": the byte test reads such a log instead of failing,
    and -F finds what the regular expression finds."""
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "die Straße, ŉ und ﬁx")]])
    fixed = invoke("grep", "--ndjson", "-F", option, needle, str(path), status=None)
    regex = invoke("grep", "--ndjson", option, re.escape(needle), str(path), status=None)
    assert fixed.exit_code == regex.exit_code and fixed.stdout == regex.stdout
    assert fixed.exit_code == (0 if needle != "STRAßE" or option == "-i" else 1)


def test_a_long_fixed_string_is_looked_for(tmp_path):
    """A needle of hundreds of characters: the byte test stays bounded and the string is found, also
    when a delta ends with a long prefix of it."""
    long = " ".join(f"word{n}" for n in range(200))
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, long[:900]), text(0, long[900:])]])
    assert json.loads(invoke("grep", "--ndjson", "-F", long, str(path)).stdout)["match"] == [0, len(long)]
    assert ByteTest(long, False).may_hold(json.dumps([long[:900], long[900:]]).encode())
    assert not ByteTest(long, False).may_hold(json.dumps([long[:50], "x" + long[50:]]).encode())
    invoke("grep", "-F", long + "!", str(path), status=1)


def _worker_count(pid: int) -> int:
    try:
        return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:
        return 0


@pytest.mark.serial
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and forks workers")
def test_ctrl_c_ends_a_runaway_regex_in_worker_processes(tmp_path):
    """A catastrophic pattern never ends on long text; Ctrl-C (SIGINT to the process group, as a terminal
    sends it) ends the command with status 130 and leaves no worker behind."""
    root = tmp_path / "sessions"
    prompt = {"type": "user/message", "data": {"id": "u", "role": "user", "source": {"kind": "user"},
                                                "content": [{"type": "text", "text": "abc def " * 40}]}, "surfaceOp": "append"}
    for index in range(8):
        header = {**V4_HEADER, "id": f"{index:08}-2222-3333-4444-555555555555"}
        folder = root / "--w--" / f"s{index}"
        folder.mkdir(parents=True)
        v4_log(folder / "session.v4.jsonl", [], extra=[prompt], header=header)
    script = "import sys, dshctl.many as m; m.BATCH_BYTES = 100; from dshctl.cli import app; app(sys.argv[1:])"
    command = [sys.executable, "-c", script, "grep", "-j", "2", r"(\w+\s?)*!", str(root)]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while _worker_count(process.pid) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # the workers are in the pattern now
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
        assert process.returncode == 130 and "interrupted" in stderr
        time.sleep(0.5)
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.corpus
@pytest.mark.parametrize("log", ["v0/apps-web-permission-policy-context.jsonl", "v0/apps-web-goal-multi-turn-actions.jsonl",
                                 "v0/apps-web-plan-review.jsonl", "v2/snapshot-form/sdk-text-turn.session.v2.jsonl"])
def test_every_line_replay_shows_as_user_input_is_found_as_user(log):
    """Slash commands (`command/run`) are shown by replay as prompts (``❯ /permission read-only``)."""
    path = corpus_file(log)
    shown = [line[2:] for line in invoke("replay", "--instant", str(path)).stdout.splitlines() if line.startswith("❯ ")]
    assert any(line.startswith("/") for line in shown)
    found = [json.loads(line)["text"] for line in invoke("grep", "--ndjson", "--in", "user", "^", str(path)).stdout.splitlines()]
    def is_found(line: str) -> bool:  # replay cuts a long command line with "…"
        return line in found or line.endswith("…") and any(text.startswith(line[:-1]) for text in found)

    assert [line for line in shown if not is_found(line)] == []


@pytest.mark.corpus
def test_a_slash_command_is_found_with_its_argument():
    path = corpus_file("v0/apps-web-permission-policy-context.jsonl")
    lines = invoke("grep", "-F", "/permission read", str(path)).stdout.splitlines()
    assert len(lines) == 2 and all(line.endswith(":user:/permission read-only") for line in lines)


def test_each_matching_line_is_shown_once_with_all_its_matches(tmp_path):
    """ripgrep's layout: one line per matching line, context runs joined, ``--`` between runs; -c and -m
    count matching lines; JSON keeps one record per match."""
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "x1 x2\nb\nx3\nd\ne\nf\ng\nx4")]])
    prefix = "11111111:1:1:assistant"
    assert invoke("grep", "x", str(path)).stdout.splitlines() == [f"{prefix}:x1 x2", f"{prefix}:x3", f"{prefix}:x4"]
    assert invoke("grep", "-C", "1", "x", str(path)).stdout.splitlines() == [
        f"{prefix}:x1 x2", f"{prefix}-b", f"{prefix}:x3", f"{prefix}-d", "--", f"{prefix}-g", f"{prefix}:x4"]
    assert invoke("grep", "-c", "x", str(path)).stdout == f"{path}:3\n"
    assert len(invoke("grep", "--ndjson", "x", str(path)).stdout.splitlines()) == 4
    assert [json.loads(line)["text"] for line in invoke("grep", "--ndjson", "-m", "2", "x", str(path)).stdout.splitlines()] == [
        "x1 x2", "x1 x2", "x3"]
    assert invoke("grep", "-m", "1", "x", str(path)).stdout.splitlines() == [f"{prefix}:x1 x2"]
    result = _grep_one(path, compile_pattern("x"), GrepOptions(), grouped=True)
    assert group_lines(result, result.groups[0], color=True).count("\x1b[1;31mx\x1b[0m") == 2


def test_the_tour_prints_each_line_once():
    tour = str(SAMPLES / TOUR[4])
    lines = invoke("grep", "e", tour).stdout.splitlines()
    assert len(lines) == int(invoke("grep", "-c", "e", tour).stdout.rsplit(":", 1)[1]) < 40


def test_text_is_searched_as_the_user_saw_it_without_carriage_returns(tmp_path):
    """The search drops CRs (``cr\\rOVER`` reads ``crOVER``); the JSON record keeps the exact text, CRs
    included, and ``match`` is where the match lies in it."""
    path = v4_log(tmp_path / "session.v4.jsonl", [[text(0, "cr\rOVER\r\nDone\r\nnext")]])
    record = json.loads(invoke("grep", "--ndjson", "-F", "crOVER", str(path)).stdout)
    assert (record["text"], record["match"]) == ("cr\rOVER\r", [0, 7])
    record = json.loads(invoke("grep", "--ndjson", "Done$", str(path)).stdout)
    assert (record["text"], record["match"]) == ("Done\r", [0, 4])
    assert invoke("grep", "crOVER", str(path)).stdout.endswith(":crOVER\n")  # the terminal shows no CR
    assert ByteTest("crOVER", False).may_hold(json.dumps(["cr\rOVER"]).encode())


def test_json_keeps_the_carriage_returns_of_a_hit_and_its_context(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    prompt = {"type": "user/message", "data": {"id": "u1", "role": "user", "content": [
        {"type": "text", "text": "\rbefore\r\na\r\rpwned\r\n\rafter"}], "source": {"kind": "user"}}, "surfaceOp": "append"}
    v4_log(path, [], extra=[prompt])
    for args in (["--ndjson"], ["--json"]):
        out = invoke("grep", *args, "-C", "1", "apwned", str(path)).stdout
        hits = json.loads(out)["hits"] if args == ["--json"] else [json.loads(line) for line in out.splitlines()]
        assert [(h["text"], h["match"], h["before"], h["after"]) for h in hits] == [
            ("a\r\rpwned\r", [0, 8], ["\rbefore\r"], ["\rafter"])]
    assert invoke("grep", "apwned", str(path)).stdout.rstrip("\n").endswith(":apwned")


@pytest.mark.parametrize("pattern", [r"ci\.yml\n", r"\n", r"yml\n\S", r"(?s)Node.{0,60}\n", "^$"])
def test_text_sliced_by_match_is_the_matched_string(pattern):
    records = invoke("grep", "--ndjson", pattern, str(SAMPLES / TOUR[4]), status=None).stdout.splitlines()
    regex = compile_pattern(pattern).regex
    for record in map(json.loads, records):
        assert regex.fullmatch(record["text"][slice(*record["match"])].replace("\r", "")), record
    assert records or pattern == "^$"


@pytest.mark.parametrize("command", ["grep", "stats", "ls"])
def test_an_empty_time_window_is_a_usage_error(command, v0_split):
    pattern = ["x"] if command == "grep" else []
    where = [str(SAMPLES / "sessions")] if command != "grep" else [str(v0_split)]
    for since, until in [("2026-03-02", "2026-03-01"), ("1d", "1d"), ("2d", "3d")]:
        result = invoke(command, *pattern, *where, "--since", since, "--until", until, status=2)
        assert "not after --since" in result.stderr


@pytest.mark.parametrize("command", ["grep", "stats", "ls"])
def test_an_age_beyond_any_float_is_a_usage_error_not_a_traceback(command, v0_split):
    pattern = ["x"] if command == "grep" else []
    where = [str(SAMPLES / "sessions")] if command != "grep" else [str(v0_split)]
    result = invoke(command, *pattern, *where, "--since", "9" * 400 + "w", status=2)
    assert "reaches back further than" in result.stderr


def test_hits_of_many_logs_name_their_path():
    """The tour's copies across generations share an id: with several logs each line starts with its path."""
    paths = [str(SAMPLES / TOUR[generation]) for generation in (0, 4)]
    lines = invoke("grep", "-F", "Node 14 lacks", *paths).stdout.splitlines()
    assert lines and {line.split(":", 1)[0] for line in lines} == set(paths)
    assert all(line.split(":")[1] == "7c1e5a2d" for line in lines)
    assert not invoke("grep", "-F", "Node 14 lacks", paths[0]).stdout.startswith(paths[0])


def test_help_says_what_the_man_page_says(v0_split):
    shown = re.sub(r"(\w)- (\w)", r"\1-\2", " ".join(invoke("grep", "--help").stdout.split()))  # joined where wrapped
    assert "Usage: dshctl grep [OPTIONS] PATTERN [PATH]..." in shown
    assert "(comma-separated or repeated)" in shown
    assert "ignore case unless PATTERN has an upper-case letter outside an escape; -i wins" in shown
    from dshctl.manpage import plain

    reference = plain((ROOT / "man" / "dshctl.1").read_text(encoding="utf-8"))
    assert "--in KINDS Search only these kinds (comma-separated or repeated)" in reference
    assert "Ignore case unless PATTERN has an upper-case letter outside an escape; -i wins." in reference
    assert "at least 8 characters after any session-, that no other log searched and no session of the sessions root shares" in reference
    both = invoke("grep", "--ndjson", "--in", "user", "--in", "title,tool-result", "(?i)ci", str(v0_split)).stdout
    assert {json.loads(line)["kind"] for line in both.splitlines()} == {"user", "title", "tool-result"}


def test_context_is_searched_only_when_named():
    """Harness-injected messages (a runtime snapshot here) are what replay shows as one ``· context:`` line:
    ``--in context`` searches them, the default does not."""
    from dshctl.replay.items import CONTEXT
    from dshctl.replay.timeline import Timeline
    from dshctl.replay.transform import make_filters

    log = str(SAMPLES / "tour.session.v4.jsonl")
    assert dshctl.grep(log, "File sandbox", fixed_strings=True).hits == []
    hits = dshctl.grep(log, "File sandbox", fixed_strings=True, in_=("context",)).hits
    assert [(h.kind, h.turn, h.step, h.text) for h in hits][:1] == [("context", 1, 1, "File sandbox: workspace-write.")]
    timeline = Timeline(dshctl.open_log(log), make_filters())
    timeline.ensure_all()
    context_seqs = {item.seq for item in timeline.items if item.kind == CONTEXT}
    assert hits and {h.seq for h in hits} <= context_seqs
    counted = invoke("grep", "--in", "context,user", "-c", "-F", "File sandbox", log)
    assert counted.stdout.strip().endswith(f":{len(hits)}")


# --------------------------------------------------------------------------------------------------
# Warnings of many logs


def test_the_warnings_of_many_logs_are_summarised_by_kind_as_stats_does(tmp_path):
    lenient = {k: v for k, v in V4_HEADER.items() if k != "delegationDepth"}
    for n in range(5):
        v4_log(tmp_path / f"lenient-{n}.session.v4.jsonl", [[text(0, "an error here")]], header=lenient)
    for n in range(2):
        (tmp_path / f"bad-{n}.session.v4.jsonl").write_text('{"type":"session"}\n')
    result = invoke("grep", "-c", "error", str(tmp_path))
    warnings = result.stderr.splitlines()
    assert len(result.stdout.splitlines()) == 5
    assert len(warnings) == 2, warnings
    assert "line 1 is not a dsh session header in 2 logs" in warnings[0]  # the unreadable ones, as stats says
    assert "header lacks delegationDepth" in warnings[1] and " in 5 logs" in warnings[1]
    assert all(line.endswith("; --verbose lists each") for line in warnings)
    assert set(warnings) <= set(invoke("stats", "-j", "1", str(tmp_path), status=None).stderr.splitlines())
    verbose = invoke("grep", "-c", "--verbose", "error", str(tmp_path)).stderr.splitlines()
    assert len(verbose) == 7 and all("lists each" not in line for line in verbose)
    one = invoke("grep", "error", str(tmp_path / "lenient-0.session.v4.jsonl")).stderr.splitlines()
    assert len(one) == 1 and "lenient-0.session.v4.jsonl: header lacks delegationDepth" in one[0]


# --------------------------------------------------------------------------------------------------
# A closed pipe


@pytest.mark.parametrize("form", [[], ["--ndjson"]])
def test_a_closed_pipe_stops_the_reading_of_one_big_log(tmp_path, form):
    """``dshctl grep def BIG | head -1`` ends at the closed pipe, as ripgrep does, instead of reading
    the log to its end first: fed on standard input, the process ends (status 0, nothing on stderr)
    while the test still holds most of the log unwritten. No clock: the writer blocks on the pipe."""

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from stats_bench import write_v4

    big = tmp_path / "big.session.v4.jsonl"
    write_v4(big, turns=300, compress=False)  # ~16 MB, some 90 000 matching lines
    data = big.read_bytes()
    stderr = (tmp_path / "stderr").open("w+b")
    process = subprocess.Popen([sys.executable, "-m", "dshctl.cli", "grep", *form, "def", "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT)
    feeder = PipeFeeder(process, data)
    first = process.stdout.readline()
    process.stdout.close()
    try:
        status = process.wait(timeout=300)  # a safety net only: a hang fails here, nothing is timed
    finally:
        process.kill()
    feeder.join(timeout=60)
    stderr.seek(0)
    assert b"def function_0" in first
    assert status == 0 and stderr.read() == b""
    assert feeder.written < len(data) // 2, f"read {feeder.written} of {len(data)} bytes before ending"
