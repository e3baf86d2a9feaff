"""One big log on several cores (dshctl.stats.split): the parts' folds merged are one pass's fold.

Every comparison runs the same command twice — ``-j 1`` (one pass) and ``-j 3`` with
``DSHCTL_SPLIT_MIN_BYTES=1`` (every log splits where it can) — and wants the same output, status and
messages. Generated logs that a split can read are checked to have been split (``read_split``), so the
properties cannot pass by always falling back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import invoke
from stats_logs import _rollup_step_events

from dshctl.options import StatsOptions
from dshctl.source import as_ref
from dshctl.stats import split, stats_fold
from dshctl.settings import SPLIT_MIN_BYTES
from dshctl.stats.split import find_boundaries, read_split

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from stats_bench import write_bench_v0  # noqa: E402

FORCED = {SPLIT_MIN_BYTES.name: "1"}
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # every example forks workers: shrinking takes minutes
BYS = ("session", "turn", "step", "model", "tool", "day")
T0 = 1_790_000_000_000
_compress = zstandard.ZstdCompressor(level=1).compress


@pytest.fixture(autouse=True)
def forced(monkeypatch):
    monkeypatch.setenv(SPLIT_MIN_BYTES.name, "1")


def outcome(path, *args, jobs: int):
    result = invoke("stats", path, "-j", jobs, *args, env=FORCED)
    return result.exit_code, result.stdout, result.stderr


def assert_same(path, *args) -> None:
    assert outcome(path, *args, jobs=3) == outcome(path, *args, jobs=1)


def was_split(path, jobs: int = 3, **options) -> bool:
    result = read_split(as_ref(str(path)), StatsOptions(jobs=jobs, **options), None, stats_fold)
    return not isinstance(result, str)


# -- generated logs ------------------------------------------------------------------------------------

steps = st.fixed_dictionaries({
    "model": st.sampled_from(["p/a", "p/b", "q/c"]),
    "gap": st.integers(0, 50),
    "ttft": st.integers(0, 900),
    "span": st.integers(0, 3000),
    "tokens": st.tuples(st.integers(0, 5000), st.integers(0, 900), st.integers(0, 3000), st.integers(0, 200)),
    "reasoning": st.one_of(st.none(), st.integers(0, 100)),
    "tools": st.lists(st.tuples(st.sampled_from(["read", "bash", "edit"]), st.integers(0, 400), st.booleans()), max_size=2),
})
extras = st.sampled_from(["title", "cwd", "context", "bad-context", "attempt", "retry", None])


@st.composite
def v4_logs(draw, hostile: bool = False):
    """A v4 log (header, then turns of steps) as lines, and whether each turn's lines may be whole frames."""
    turns = draw(st.lists(st.tuples(st.lists(steps, min_size=1, max_size=3), st.lists(extras, max_size=2)), min_size=4, max_size=10))
    header = {"type": "session", "version": 4, "id": "split", "createdAt": T0, "cwd": "/w", "isSeeded": False, "delegationDepth": 0}
    events: list[dict] = []

    def add(kind, time, data, **extra):
        events.append({"type": kind, "seq": len(events), "time": time, "data": data, **extra})

    clock = T0 + 1000
    numbers = list(range(1, len(turns) + 1))
    if hostile and draw(st.booleans()):
        numbers[draw(st.integers(1, len(numbers) - 1))] = numbers[0]  # a turn number again, parts apart
    for number, (specs, turn_extras) in zip(numbers, turns):
        add("turn/start", clock, {"turn": number})
        for extra in turn_extras:
            if extra == "title":
                add("session/title", clock, {"title": f"t{number}"})
            elif extra == "cwd":
                add("working-directory/change", clock, {"cwd": f"/w/{number}"})
            elif extra in ("context", "bad-context"):
                add("request/context", clock, {"contextWindow": 128000 if extra == "context" else "big"})
            elif extra == "attempt" and hostile:  # a failed attempt before this turn's request header
                add("assistant/attempt", clock, {"turn": number, "step": 9, "stream": [
                    {"type": "chunk", "time": clock, "chunk": {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": 1}}}]})
            elif extra == "retry":
                add("llm/retry", clock, {"turn": number, "step": 1, "retryId": f"r{number}"})
                add("llm/retry-started", clock + 1, {"turn": number, "step": 1, "retryId": f"r{number}"})
        for index, spec in enumerate(specs, start=1):
            start = clock + spec["gap"]
            first = start + spec["ttft"]
            end = first + spec["span"]
            tokens = spec["tokens"]
            step = {"model": spec["model"], "start": start, "first": first, "end": end, "tokens": tokens,
                    "reasoning": spec["reasoning"], "tools": spec["tools"]}
            _rollup_step_events(add, number, index, step, "do it" if index == 1 else None)
            clock = end + sum(ms for _, ms, _ in spec["tools"]) + 1
        add("turn/end", clock, {"turn": number, "reason": {"kind": "completed"}})
        clock += 10
    if hostile and draw(st.booleans()):
        message = next(e for e in reversed(events) if e["type"] == "assistant/message")
        message["data"]["usage"]["outputTokens"] += 0.5  # a non-integral count: sums round by order
    return [json.dumps(header, separators=(",", ":"))] + [json.dumps(e, separators=(",", ":")) for e in events]


@st.composite
def framings(draw, lines: list[str]) -> tuple[bytes, bool]:
    """The lines as zstd frames: each its own, one per turn, or cut at random; and whether every turn
    boundary falls between frames (so a split finds boundaries)."""
    how = draw(st.sampled_from(["line", "turn", "random"]))
    cuts = {1}  # the header is its own frame, as dsh writes it
    if how == "line":
        cuts.update(range(1, len(lines)))
    elif how == "turn":
        cuts.update(i for i, line in enumerate(lines) if i and '"type":"turn/start"' in line)
    else:
        cuts.update(draw(st.sets(st.integers(1, len(lines) - 1), max_size=len(lines) // 2)))
    bounds = sorted(cuts | {len(lines)})
    frames = [lines[0:1]] + [lines[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    data = b"".join(_compress(("\n".join(frame) + "\n").encode()) for frame in frames)
    return data, how != "random"


def _write(tmp_path, data: bytes, name: str = "split.jsonl.zstd") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@settings(max_examples=40, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), by=st.sampled_from(BYS), thread=st.booleans())
def test_split_equals_one_pass_on_generated_logs(tmp_path, monkeypatch, data, by, thread):
    lines = data.draw(v4_logs())
    framed, boundaries = data.draw(framings(lines))
    path = _write(tmp_path, framed)
    if thread:  # the parts' reader thread reads its own span
        monkeypatch.setattr("dshctl.source.overlap.OVERLAP_MIN_BYTES", 0)
    assert_same(path, "--json", "--by", by)
    if boundaries and find_boundaries(path, 3):
        assert was_split(path)


@settings(max_examples=40, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), by=st.sampled_from(BYS))
def test_split_refuses_what_it_cannot_merge_and_one_pass_reads_it(tmp_path, data, by):
    """Turn numbers again in a later part, a float token count, an attempt under the previous part's request
    header: the log is read in one pass, with the same result."""
    lines = data.draw(v4_logs(hostile=True))
    framed, _ = data.draw(framings(lines))
    path = _write(tmp_path, framed)
    assert_same(path, "--json", "--by", by)


# -- damage: one pass's findings, exactly --------------------------------------------------------------


def _bench_log(tmp_path, turns: int = 9) -> Path:
    path = tmp_path / "bench.jsonl.zstd"
    write_bench_v0(path, turns=turns, text_deltas=12)
    return path


@st.composite
def damaged(draw, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["cut", "flip", "garbage", "drop"]))
    at = draw(st.integers(100, len(data) - 1))
    if kind == "cut":
        return data[:at]
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if kind == "garbage":
        return data[:at] + draw(st.binary(min_size=1, max_size=40)) + data[at:]
    end = draw(st.integers(at, min(len(data), at + 400)))
    return data[:at] + data[end:]


@settings(max_examples=60, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), args=st.sampled_from([("--json",), ("--json", "--by", "step"), ("--by", "turn"), ("--json", "--strict")]))
def test_a_damaged_log_is_reported_as_one_pass_reports_it(tmp_path, data, args):
    clean = _bench_log(tmp_path).read_bytes()
    path = _write(tmp_path, data.draw(damaged(clean)), "damaged.jsonl.zstd")
    assert_same(path, *args)


def test_the_benchmark_shape_splits_and_equals_one_pass(tmp_path):
    path = _bench_log(tmp_path, turns=30)
    for by in BYS:
        assert_same(path, "--json", "--by", by)
    assert_same(path)  # the tables too
    assert was_split(path)
    assert was_split(path, jobs=2)


def test_damage_anywhere_sends_the_log_to_one_pass(tmp_path):
    data = _bench_log(tmp_path, turns=30).read_bytes()
    for at in (len(data) // 5, len(data) // 2, len(data) - 30):  # in each part, and in the last frame
        path = _write(tmp_path, data[:at] + b"\x00" * 7 + data[at + 7 :], f"d{at}.jsonl.zstd")
        assert not was_split(path)
        assert_same(path, "--json")



def test_a_torn_tail_keeps_the_split_and_one_pass_line_numbers(tmp_path):
    """A log being written ends in a torn frame: the last part is read again in the command's process,
    its warning naming the line one pass names."""
    data = _bench_log(tmp_path, turns=30).read_bytes()
    for cut in (25, 60, 200):
        torn = _write(tmp_path, data[:-cut], f"torn{cut}.jsonl.zstd")
        if cut < 200:  # 200 bytes cut the last message: its chunks settle as an attempt, refused (it has no header)
            assert was_split(torn)
            assert was_split(torn, jobs=2)
        for args in (("--json",), ("--json", "--by", "step"), ()):
            assert_same(torn, *args)
        code, _, stderr = outcome(torn, "--json", jobs=3)
        assert code == 0 and "torn tail dropped" in stderr
        assert not was_split(torn, strict=True)  # --strict: the torn tail is an error, one pass says so
        assert_same(torn, "--json", "--strict")


def test_what_never_splits(tmp_path, monkeypatch):
    path = _bench_log(tmp_path, turns=30)
    assert read_split(as_ref(str(path)), StatsOptions(jobs=1), None, stats_fold) == "one part"
    assert read_split(as_ref(str(path)), StatsOptions(jobs=3, salvage=True), None, stats_fold) == "one part"
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()))
    assert read_split(as_ref(str(plain)), StatsOptions(jobs=3), None, stats_fold) == "one part"
    monkeypatch.setenv(SPLIT_MIN_BYTES.name, str(path.stat().st_size))  # one part's worth of bytes only
    assert read_split(as_ref(str(path)), StatsOptions(jobs=3), None, stats_fold) == "one part"


def test_a_bad_threshold_is_a_usage_error(tmp_path):
    result = invoke("stats", _bench_log(tmp_path), "-j", "2", env={SPLIT_MIN_BYTES.name: "lots"})
    assert result.exit_code == 2 and SPLIT_MIN_BYTES.name in result.stderr


def test_a_fork_child_whose_cut_is_in_a_later_part_is_read_in_one_pass(tmp_path):
    from stats_logs import rollup_session, rollup_step

    parent = rollup_session("parent", created=T0, turns=[[rollup_step(start=T0 + i * 100, first=T0 + i * 100 + 5, end=T0 + i * 100 + 9)] for i in range(12)])
    inherited = parent.splitlines()[1:]
    child = rollup_session("child", created=T0 + 5000, parent="parent", inherited=inherited,
                           turns=[[rollup_step(start=T0 + 9000 + i * 100, first=T0 + 9000 + i * 100 + 5, end=T0 + 9000 + i * 100 + 9)] for i in range(3)])
    lines = child.splitlines()
    data = b"".join(_compress((line + "\n").encode()) for line in lines)
    path = _write(tmp_path, data, "child.jsonl.zstd")
    assert not was_split(path, jobs=2)  # the cut lies past the middle
    for by in ("session", "turn"):
        assert_same(path, "--json", "--by", by)


def test_the_merge_accounts_for_every_attribute_of_the_fold():
    """A figure added to the fold's state must be given a merge rule in split.MERGED."""
    from dshctl.stats import fold as fold_module

    fold = fold_module.StatsFold(keep_turns=True)
    if not hasattr(fold, "__dict__"):
        pytest.skip("the compiled fold has no instance dictionary to list")
    for name, rules in split.MERGED.items():
        known = {attribute for names in rules.values() for attribute in names}
        cls = getattr(fold_module, name)
        attributes = set(vars(fold)) if name == "StatsFold" else set(cls.__slots__)
        assert attributes == known, (name, attributes ^ known)


def test_a_turn_number_again_in_a_later_part_is_read_in_one_pass(tmp_path):
    from stats_logs import rollup_session, rollup_step

    text = rollup_session("again", created=T0, turns=[[rollup_step(start=T0 + i * 100, first=T0 + i * 100 + 5, end=T0 + i * 100 + 9, tokens=(3, 4, 0, 0))]
                                                      for i in range(12)])
    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        if isinstance(record.get("data"), dict) and record["data"].get("turn") == 11:
            record["data"]["turn"] = 2  # turn 2 again, in the last part: its meter slot and turn count are shared
        lines.append(json.dumps(record, separators=(",", ":")))
    path = _write(tmp_path, b"".join(_compress((line + "\n").encode()) for line in lines), "again.jsonl.zstd")
    assert read_split(as_ref(str(path)), StatsOptions(jobs=3), None, stats_fold) == "part 3 opens a turn an earlier part opened"
    for by in ("session", "turn", "model"):
        assert_same(path, "--json", "--by", by)


# -- hostile logs: the search ends ---------------------------------------------------------------------

_BOMB_HEADER = {"type": "session", "version": 4, "id": "bomb", "createdAt": T0, "cwd": "/w", "isSeeded": False, "delegationDepth": 0}


def _bomb(tmp_path, frames: int = 20_000, frame_bytes: int = 8 << 20) -> Path:
    """A header, then ``frames`` copies of one small frame that decodes to ``frame_bytes`` of ``a`` and no
    line feed: without a decoding budget the search decodes every frame in its window (80 GiB here)."""
    frame = _compress(b"a" * frame_bytes)
    return _write(tmp_path, _compress(json.dumps(_BOMB_HEADER).encode() + b"\n") + frame * frames, "bomb.jsonl.zst")


def _count_search(monkeypatch) -> list[int]:
    """What the search decodes, counted piece by piece as each frame's decoding gives it out
    (:func:`~dshctl.source.zstd.decode_sized_frame`'s ``observe``), failing past twice the budget."""
    tally = [0]
    decode = split.decode_sized_frame

    def counted(head, more, max_size, observe):
        def counting(piece):
            tally[0] += len(piece)
            assert tally[0] <= 2 * split.DECODE_BUDGET, "the search decoded past its budget"
            observe(piece)

        return decode(head, more, max_size, counting)

    monkeypatch.setattr(split, "decode_sized_frame", counted)
    return tally


def test_a_decompression_bomb_ends_the_search_and_one_pass_reports_it(tmp_path, monkeypatch):
    path = _bomb(tmp_path)
    tally = _count_search(monkeypatch)
    assert find_boundaries(path, 2) == []
    assert split.DECODE_BUDGET < tally[0] <= split.DECODE_BUDGET + split.FRAME_MAX
    monkeypatch.undo()
    monkeypatch.setenv(SPLIT_MIN_BYTES.name, "1")
    assert read_split(as_ref(str(path)), StatsOptions(jobs=2), None, stats_fold) == "no turn boundary near a cut point"
    result = invoke("stats", path, env=FORCED)  # the default jobs (2 here, or the cores)
    one_pass = outcome(path, jobs=1)
    assert (result.exit_code, result.stdout, result.stderr) == one_pass == outcome(path, jobs=2)
    assert one_pass[0] == 2 and "ends inside a record" in one_pass[2]


def test_a_frame_longer_than_the_line_limit_without_a_line_feed_ends_the_search(tmp_path, monkeypatch):
    path = _bomb(tmp_path, frames=40, frame_bytes=2 << 20)
    monkeypatch.setenv("DSHCTL_MAX_LINE_BYTES", "1M")
    tally = _count_search(monkeypatch)
    assert find_boundaries(path, 2) == []
    assert tally[0] <= 2 << 20  # the first frame tried, not the window's 20
    monkeypatch.undo()
    monkeypatch.setenv(SPLIT_MIN_BYTES.name, "1")
    one_pass = invoke("stats", path, "-j", "1", env={**FORCED, "DSHCTL_MAX_LINE_BYTES": "1M"})
    split_run = invoke("stats", path, "-j", "3", env={**FORCED, "DSHCTL_MAX_LINE_BYTES": "1M"})
    assert (split_run.exit_code, split_run.stdout, split_run.stderr) == (one_pass.exit_code, one_pass.stdout, one_pass.stderr)
    assert one_pass.exit_code == 2


def test_the_header_and_the_window_are_checked_before_the_search(tmp_path, monkeypatch):
    path = _bench_log(tmp_path, turns=30)

    def no_search(*args):
        raise AssertionError("searched")

    monkeypatch.setattr(split, "find_boundaries", no_search)
    late = StatsOptions(jobs=3, since="2099-01-01")
    assert read_split(as_ref(str(path)), late, None, stats_fold) == "outside --since/--until"
    bad = _write(tmp_path, _compress(b"[1, 2]\n") + path.read_bytes(), "bad.jsonl.zstd")
    assert read_split(as_ref(str(bad)), StatsOptions(jobs=3), None, stats_fold).startswith("part 1: ")
    assert_same(bad, "--json")


def test_the_workers_are_forked_before_part_one_starts_its_reader_thread(tmp_path, monkeypatch):
    import os

    from dshctl.source import overlap

    path = _bench_log(tmp_path, turns=30)
    monkeypatch.setattr(overlap, "OVERLAP_MIN_BYTES", 0)
    order: list[str] = []
    start = overlap._Prefetch.start

    def started(self):
        order.append("reader thread")
        start(self)

    monkeypatch.setattr(overlap._Prefetch, "start", started)
    _fork_watch.append(lambda: order.append("fork"))
    if not _fork_watch_registered:  # a hook cannot be unregistered: one, calling what the test lists
        os.register_at_fork(before=lambda: [watch() for watch in _fork_watch])
        _fork_watch_registered.append(True)
    try:
        assert was_split(path, jobs=3)
    finally:
        _fork_watch.clear()
    assert order == ["fork", "fork", "reader thread"]


_fork_watch: list = []
_fork_watch_registered: list = []
