"""``dshctl export --format otlp`` (issue #24): every line parses with opentelemetry-proto's own JSON
parser, the span tree is well formed, attribute values are the stats rows', content only on request."""

from __future__ import annotations

import base64
import json
import re

import pytest

json_format = pytest.importorskip("google.protobuf.json_format")
trace_pb2 = pytest.importorskip("opentelemetry.proto.trace.v1.trace_pb2")

from stats_logs import rollup_session, rollup_step  # noqa: E402
from conftest import CORPUS, SAMPLES, corpus_file, invoke  # noqa: E402
from test_stats_rollups import T1  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-dsh-home"))


def traces(tmp_path, *paths, extra=()) -> list[dict]:
    out = tmp_path / "traces.jsonl"
    result = invoke("export", "--format", "otlp", "--out", str(out), "--force", *map(str, paths), *extra)
    assert result.exit_code in (0, 1), result.output
    lines = out.read_bytes().splitlines()
    for line in lines:
        parsed = json_format.Parse(line, trace_pb2.TracesData())  # the package's own parser: names, enums, types
        for resource in parsed.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    assert span.name and span.span_id and span.trace_id
    return [json.loads(line) for line in lines]


def spans_of(lines: list[dict]) -> list[dict]:
    return [span for line in lines for resource in line["resourceSpans"] for scope in resource["scopeSpans"] for span in scope["spans"]]


def attrs(span: dict) -> dict:
    out = {}
    for kv in span["attributes"]:
        value = kv["value"]
        (kind, raw), = value.items()
        out[kv["key"]] = int(raw) if kind == "intValue" else [next(iter(v.values())) for v in raw["values"]] if kind == "arrayValue" else raw
    return out


def check_tree(spans: list[dict]) -> None:
    ids = [span["spanId"] for span in spans]
    assert len(ids) == len(set(ids)), "span ids are unique"
    by_id = {span["spanId"]: span for span in spans}
    for span in spans:
        assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and int(span["traceId"], 16) and int(span["spanId"], 16)
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
        parent_id = span["parentSpanId"]
        if not parent_id:
            assert span["name"].startswith("invoke_agent")
            continue
        parent = by_id[parent_id]  # every parent exists
        assert parent["traceId"] == span["traceId"]
        if span["name"].startswith("invoke_agent"):
            continue  # a subagent session may outlive the call that started it (run in the background)
        assert int(parent["startTimeUnixNano"]) <= int(span["startTimeUnixNano"]), span["name"]
        assert int(span["endTimeUnixNano"]) <= int(parent["endTimeUnixNano"]), span["name"]


def _all_logs():
    paths = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and ".jsonl" in p.name)
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.jsonl"))
    return [p for p in paths if invoke("stats", "--json", str(p)).exit_code == 0]


def test_every_sample_and_corpus_line_parses_and_the_tree_is_well_formed(tmp_path):
    lines = []
    for log in _all_logs():  # one at a time: the samples hold one session in several generations (the same ids)
        mine = traces(tmp_path, log)
        check_tree(spans_of(mine))
        lines += mine
    spans = spans_of(lines)
    assert len(spans) > 100
    for line in lines:
        resource = line["resourceSpans"][0]
        assert resource["schemaUrl"] == "https://opentelemetry.io/schemas/1.41.0"
        for span in resource["scopeSpans"][0]["spans"]:
            assert isinstance(span["startTimeUnixNano"], str) and span["startTimeUnixNano"].isdigit()
            assert isinstance(span["kind"], int)
    kinds = {span["name"].split(" ")[0]: span["kind"] for span in spans}
    assert kinds == {"invoke_agent": 1, "turn": 1, "chat": 3, "execute_tool": 1}


def test_ids_are_deterministic(tmp_path):
    a = traces(tmp_path, SAMPLES / "tour.session.v4.jsonl")
    b = traces(tmp_path, SAMPLES / "tour.session.v4.jsonl")
    assert a == b


def test_chat_and_tool_attributes_are_the_stats_rows(tmp_path):
    log = SAMPLES / "tour.session.v4.jsonl"
    spans = spans_of(traces(tmp_path, log))
    steps = json.loads(invoke("stats", "--json", "--by", "step", str(log)).stdout)["steps"]
    chats = [attrs(s) | {"_status": s.get("status"), "_events": s.get("events", [])} for s in spans if s["name"].startswith("chat")]
    assert len(chats) == sum(row["attempts"] for row in steps)
    for row in steps:
        mine = [c for c in chats if (c["dsh.turn"], c["dsh.step"]) == (row["turn"], row["step"])]
        # usage absent where the settlement reported none (as its steps row is null)
        assert sum(c.get("gen_ai.usage.output_tokens", 0) for c in mine) == (row["outputTokens"] or 0)
        assert sum(c.get("gen_ai.usage.input_tokens", 0) for c in mine) == (row["billedInputTokens"] or 0)
        assert sum(c.get("gen_ai.usage.cache_read.input_tokens", 0) for c in mine) == (row["cacheReadTokens"] or 0)
        assert {c["gen_ai.request.model"] for c in mine} == {row["model"].split("/", 1)[1]}
        for c in mine:
            assert c["gen_ai.operation.name"] == "chat" and c["gen_ai.provider.name"] == "deepseek"
            if c["dsh.outcome"] == "attempt":
                assert c["error.type"] == row["failureCode"] or c["error.type"] and c["_status"]["code"] == 2
    failed = [c for c in chats if c["dsh.outcome"] == "attempt"]
    assert failed and failed[0]["_events"][0]["name"] == "dsh.llm.retry"
    session = json.loads(invoke("stats", "--json", str(log)).stdout)["sessions"][0]
    tools = [attrs(s) for s in spans if s["name"].startswith("execute_tool")]
    assert len(tools) == session["dshctl"]["toolCalls"]
    assert sum(t.get("dsh.tool_ms", 0) for t in tools) == session["toolMs"]
    assert all(t["gen_ai.tool.call.id"] and t["gen_ai.tool.name"] for t in tools)
    root = next(attrs(s) for s in spans if s["name"].startswith("invoke_agent"))
    assert root["gen_ai.conversation.id"] == session["id"] and root["gen_ai.usage.output_tokens"] == session["outputTokens"]


def test_content_only_with_include_content(tmp_path):
    log = SAMPLES / "tour.session.v4.jsonl"
    plain = json.dumps(traces(tmp_path, log))
    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "dsh.prompt"):
        assert key not in plain
    prompt = json.loads(invoke("stats", "--json", "--by", "turn", str(log)).stdout)["turns"][0]["prompt"]
    assert prompt and prompt not in plain
    rich = spans_of(traces(tmp_path, log, extra=("--include-content",)))
    chat = next(attrs(s) for s in rich if s["name"].startswith("chat") and "gen_ai.output.messages" in attrs(s))
    messages = json.loads(chat["gen_ai.output.messages"])
    assert messages[0]["role"] == "assistant" and messages[0]["parts"]
    assert any("gen_ai.tool.call.arguments" in attrs(s) for s in rich if s["name"].startswith("execute_tool"))


@pytest.mark.corpus
def test_subagent_session_sits_under_its_parents_tool_call(tmp_path):
    parent = corpus_file("v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl")
    child = corpus_file("v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl")
    spans = spans_of(traces(tmp_path, parent, child))
    check_tree(spans)
    roots = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(roots) == 2 and roots[0]["traceId"] == roots[1]["traceId"]
    child_root = next(s for s in roots if attrs(s)["gen_ai.conversation.id"] == "preview-architecture-review")
    under = next(s for s in spans if s["spanId"] == child_root["parentSpanId"])
    assert under["name"].startswith("execute_tool")


def test_a_fork_is_its_own_trace_linked_to_its_parent(tmp_path):
    from test_stats_rollups import _logs

    logs = _logs()
    for name in ("s2", "s4"):  # s4 is forked from s2 (seeded, not a subagent)
        (tmp_path / f"{name}.session.v4.jsonl").write_text(logs[name])
    spans = spans_of(traces(tmp_path, tmp_path / "s2.session.v4.jsonl", tmp_path / "s4.session.v4.jsonl"))
    check_tree(spans)
    roots = {attrs(s)["gen_ai.conversation.id"]: s for s in spans if s["name"].startswith("invoke_agent")}
    parent, child = roots["s2"], roots["s4"]
    assert parent["traceId"] != child["traceId"] and not child["parentSpanId"]
    assert child["links"][0]["spanId"] == parent["spanId"] and child["links"][0]["traceId"] == parent["traceId"]
    turns = [attrs(s) for s in spans if s["traceId"] == child["traceId"] and s["name"].startswith("turn")]
    assert [a["dsh.inherited"] for a in turns] == [True, False]


def test_a_subagent_sample_joins_its_parents_trace(tmp_path):
    spans = spans_of(traces(tmp_path, SAMPLES / "tour.session.v4.jsonl", SAMPLES / "fork-child.session.v4.jsonl"))
    check_tree(spans)
    roots = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(roots) == 2 and roots[0]["traceId"] == roots[1]["traceId"]
    child = next(s for s in roots if s["parentSpanId"])
    assert next(s for s in spans if s["spanId"] == child["parentSpanId"])["traceId"] == child["traceId"]


def test_hostile_text_round_trips_in_attributes(tmp_path):
    name = 'to"ol\'\x01\n{"x": 1}'
    title = "It's \x1b[2J\"; DROP TABLE spans;--"
    text = rollup_session("h", created=T1, cwd="/w", turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30, tools=[(name, 5, True)])]])
    lines = text.splitlines()
    events = [json.loads(line) for line in lines[1:]]
    events.insert(1, {"type": "session/title", "seq": 0, "time": T1 + 11, "data": {"title": title, "messageSeqs": [], "source": {"kind": "user"}}})
    for seq, event in enumerate(events):
        event["seq"] = seq
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text("\n".join([lines[0], *map(json.dumps, events)]) + "\n")
    spans = spans_of(traces(tmp_path, log, extra=("--include-content",)))
    tool = next(s for s in spans if s["name"].startswith("execute_tool"))
    assert tool["name"] == f"execute_tool {name}" and attrs(tool)["gen_ai.tool.name"] == name
    assert tool["status"]["code"] == 2
    root = next(s for s in spans if s["name"].startswith("invoke_agent"))
    assert attrs(root)["dsh.session.title"] == title


def test_stdout_and_refusing_to_overwrite(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_text("keep")
    result = invoke("export", "--format", "otlp", "--out", str(out), str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 2 and "--force" in result.output and out.read_text() == "keep"
    result = invoke("export", "--format", "otlp", "--out", "-", str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 0
    for line in result.stdout.splitlines():
        json_format.Parse(line, trace_pb2.TracesData())
    decoded = base64.b64decode  # proto3 JSON reads hex ids as base64: the OTLP encoding differs there, on purpose
    assert decoded


def test_a_device_or_fifo_is_written_without_force(tmp_path):
    """/dev/null and a named pipe are streams, not files being overwritten (the rule of dshctl.files)."""
    import os
    import stat

    from test_replay_export_file import drained

    log = str(SAMPLES / "tour.session.v4.jsonl")
    result = invoke("export", "--format", "otlp", "--out", "/dev/null", log)
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = drained(fifo)
    result = invoke("export", "--format", "otlp", "--out", str(fifo), log)
    assert result.exit_code == 0, result.output
    lines = reader.join().decode().splitlines()
    assert sum(len(json_format.Parse(line, trace_pb2.TracesData()).resource_spans) for line in lines) > 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["pipe"]


@pytest.mark.parametrize(
    "args, held",
    [
        (["export", "--format", "parquet", "--out", "-"], "a Parquet dataset"),
        (["images", "--out", "-"], "the images"),
    ],
)
def test_dash_is_refused_where_out_is_a_directory(tmp_path, monkeypatch, args, held):
    """``-`` is standard output where --out is a file (otlp above); where it is a directory it is refused,
    never made a directory named ``-`` in the current one."""
    monkeypatch.chdir(tmp_path)
    result = invoke(*args, str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"dshctl: error: --out - is standard output, which cannot hold {held}" + result.stderr.split(held, 1)[1]
    assert result.stderr.endswith(": name a directory\n")
    assert list(tmp_path.iterdir()) == []


def test_dash_is_refused_by_the_library_too(tmp_path):
    from dshctl.errors import UsageError
    from dshctl.options import ExportOptions

    with pytest.raises(UsageError, match="standard output"):
        ExportOptions(format="parquet", out="-")
    assert ExportOptions(format="otlp", out="-").out == "-"


# -- wave-1 review: never the log itself, whole or nothing, bounded memory, unique ids, real times ---------------


def test_out_naming_a_log_being_read_is_refused_even_with_force(tmp_path):
    log = tmp_path / "victim.session.v4.jsonl"
    log.write_bytes((SAMPLES / "tour.session.v4.jsonl").read_bytes())
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    before = log.read_bytes()
    for out in (log, link):
        result = invoke("export", "--format", "otlp", "--out", str(out), "--force", str(SAMPLES / "fork-child.session.v4.jsonl"), str(log))
        assert result.exit_code == 2 and "never writes to a log it reads" in result.output, result.output
    assert log.read_bytes() == before and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "victim.session.v4.jsonl"]


def test_an_interrupted_export_leaves_no_file_nor_temporary(tmp_path, monkeypatch):
    from dshctl.export import ExportOptions, export_logs
    from dshctl.export import otlp as O

    def interrupted(results, out):
        out.write(b'{"resourceSpans": []}\n')
        raise KeyboardInterrupt

    monkeypatch.setattr(O, "write_traces", interrupted)
    out = tmp_path / "t.jsonl"
    with pytest.raises(KeyboardInterrupt):
        export_logs([str(SAMPLES / "tour.session.v4.jsonl")], ExportOptions(format="otlp", out=str(out)))
    assert list(tmp_path.iterdir()) == []
    out.write_text("keep")
    with pytest.raises(KeyboardInterrupt):
        export_logs([str(SAMPLES / "tour.session.v4.jsonl")], ExportOptions(format="otlp", out=str(out), force=True))
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"] and out.read_text() == "keep"


def test_what_a_long_seeded_log_holds_stays_about_one_turn(tmp_path, monkeypatch):
    """Rows wait for their turn's end, content for its row; what no row takes (a result whose call is not
    in the log) is forgotten a turn later. A seeded log (a fork) is not held whole to its end."""
    from test_stats_rollups import _logs
    from dshctl.export import otlp as O
    from dshctl.source import resolve_one
    from stats_logs import log_lines

    parent = rollup_session("p", created=T1, turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]])
    turns = [[rollup_step(start=T1 + 1000 * i, first=T1 + 1000 * i + 10, end=T1 + 1000 * i + 20, tools=[("read", 5, False), ("grep", 5, True)])]
             for i in range(1, 61)]
    child = rollup_session("c", created=T1, parent="p", inherited=log_lines(parent), turns=turns).splitlines()
    events = [json.loads(line) for line in child[1:]]
    orphans = [dict(e, data={**e["data"], "message": {**e["data"]["message"], "toolCallId": "gone" + str(i)}})
               for i, e in enumerate(events) if e["type"] == "tool/result"]
    for i, orphan in enumerate(orphans):  # results of calls the log does not hold
        orphan["data"]["message"]["source"] = {"kind": "tool", "callId": f"gone{i}"}
        events.insert(events.index(next(e for e in events if e["type"] == "tool/result" and e["seq"] == orphan["seq"])) + 1, orphan)
    for seq, event in enumerate(events):
        event["seq"] = seq
    log = tmp_path / "c.session.v4.jsonl"
    log.write_text("\n".join([child[0], *map(json.dumps, events)]) + "\n")
    held = []
    feed = O.Extras.feed

    def watching(extras, event):
        feed(extras, event)
        kept = sum(len(d) for d in (extras.inputs, extras.outputs, extras.arguments, extras.results, extras.retries))
        sinks = watching.sinks
        rows = sum(len(v) for sink in sinks for v in (*sink.steps.values(), *sink.calls.values())) + sum(
            len(records) for sink in sinks for _, records in getattr(sink, "held", ()))
        held.append((kept, rows))

    watching.sinks = []
    init = O.SessionSpans.__init__

    def remembered(self, *args, **kwargs):
        init(self, *args, **kwargs)
        watching.sinks.append(self)

    monkeypatch.setattr(O.Extras, "feed", watching)
    monkeypatch.setattr(O.SessionSpans, "__init__", remembered)
    result = O.trace_log(resolve_one(str(log)), spool_dir=str(tmp_path), prices=None, content=True, names={str(log): "x"})
    assert len(held) > 600
    assert max(kept for kept, _ in held) <= 16 and max(rows for _, rows in held) <= 8, (max(held), len(orphans))
    assert result.inherited == {"turns": 1, "steps": 1}  # the parent's turn, marked when the file is written
    out = tmp_path / "t.jsonl"
    with open(out, "wb") as handle:
        O.write_traces([result], handle)
    spans = spans_of([json.loads(line) for line in out.read_text().splitlines()])
    check_tree(spans)
    turns = {attrs(s)["dsh.turn"]: attrs(s)["dsh.inherited"] for s in spans if s["name"].startswith("turn")}
    assert turns[1] is True and not any(turns[n] for n in range(2, 62))
    assert all("dshctlRow" not in s for s in spans)
    tools = [attrs(s) for s in spans if s["name"].startswith("execute_tool")]
    assert len(tools) == 120 and all(t["gen_ai.tool.call.result"] == "r" for t in tools)


def test_one_export_of_every_sample_and_corpus_log_has_unique_ids_and_real_times(tmp_path):
    """The samples hold one session in several generations (the same session id): every file after the
    first mixes its path into its ids. A span's time is the log's; a log in test-fixture form (no times)
    has no spans, and says so."""
    logs = _all_logs()
    out = tmp_path / "all.jsonl"
    result = invoke("export", "--format", "otlp", "--out", str(out), *map(str, logs))
    assert result.exit_code == 0, result.output
    for line in out.read_bytes().splitlines():  # the package's own parser reads every line, the twins' too
        json_format.Parse(line, trace_pb2.TracesData())
    spans = spans_of([json.loads(line) for line in out.read_text().splitlines()])
    keys = [(s["traceId"], s["spanId"]) for s in spans]
    assert len(keys) == len(set(keys)) and len(spans) > (300 if CORPUS.is_dir() else 200)  # the samples alone: 223
    check_tree(spans)
    assert min(int(s["startTimeUnixNano"]) for s in spans) >= 10**18  # 2001: no 1970 spans
    tours = {attrs(s)["dsh.session.path"]: s for s in spans if s["name"].startswith("invoke_agent") and "tour.session" in attrs(s)["dsh.session.path"]}
    named = [log for log in logs if "tour.session" in log.name]
    assert len(named) > 4 and len(tours) == len(named) and len({s["traceId"] for s in tours.values()}) == len(named)
    if CORPUS.is_dir():  # the corpus holds logs in dsh's fixture form (no times); the samples do not
        assert "a span needs a time, so this session is left out of the traces" in result.output
    fixture = CORPUS / "v0" / "examples-acp-agent-cancel.jsonl"
    if fixture.is_file():
        alone = traces(tmp_path, fixture)
        assert spans_of(alone) == []


def test_the_summary_counts_in_words(tmp_path):
    result = invoke("export", "--format", "otlp", "--out", str(tmp_path / "one.jsonl"), str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 0, result.output
    assert re.search(r": 1 session, \d+ spans$", result.stderr.strip()), result.stderr
