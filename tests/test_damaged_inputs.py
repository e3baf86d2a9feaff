"""Every command finishes on damaged input, in bounded time and memory, with its output or one clear error.

Inputs: every mutant of ``tests/mutate.py`` and hypothesis-damaged stream records of the v2–v4 samples
(``dt``/``texts``/``args`` lengths, indexes, ``time0``, negative and huge gaps, empty runs). Commands: every
command and output mode, plus the interactive player's model stepped through the whole timeline.

The commands run in-process (``CliRunner``) under a watchdog: one wall-clock budget per input, enforced by
a timer signal that raises inside the running command, and an address-space cap (``RLIMIT_AS``, the
current size + 1 GiB) that turns runaway allocation into a MemoryError, which dshctl reports as "out of
memory" — a failure here. ``faulthandler`` ends the run if a C call ever ignores the timer.
"""

from __future__ import annotations

import copy
import faulthandler
import json
import os
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dshctl.cli import app
from dshctl.errors import DshctlError
from dshctl.reader import open_log
from dshctl.replay.player import Player
from dshctl.replay.render import screen_rows, status_text
from dshctl.replay.timeline import Timeline

import mutate
from conftest import SAMPLES

resource = pytest.importorskip("resource")

BUDGET_SECONDS = 10.0
MEMORY_HEADROOM = 1 << 30
STREAM_BASES = [f"{name}.session{generation}.jsonl" for name in ("tour", "fork-child") for generation in ("", ".v2", ".v3", ".v4")]

runner = CliRunner()


# --------------------------------------------------------------------------------------------------
# The watchdog


class OverBudget(BaseException):
    """Raised inside the running command when the input's wall-clock budget is spent (a BaseException,
    so no ``except Exception`` in dshctl swallows it)."""


def _address_space_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def bounded(seconds: float = BUDGET_SECONDS, headroom: int = MEMORY_HEADROOM):
    """Run the body with a wall-clock budget and at most ``headroom`` more bytes of address space."""

    def expire(signum, frame):
        raise OverBudget(f"still running after {seconds} s")

    previous_handler = signal.signal(signal.SIGALRM, expire)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    capped = os.path.exists("/proc/self/statm")
    if capped:
        cap = _address_space_bytes() + headroom
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    faulthandler.dump_traceback_later(seconds + 30, exit=True)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        if capped:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, previous_handler)


# --------------------------------------------------------------------------------------------------
# One input, every command


def place(data: bytes, file_name: str, tmp_path: Path) -> tuple[Path, Path]:
    """Write the log as a session of a sessions root; returns (log path, root)."""
    root = tmp_path / "root"
    session = root / "--home-damaged--" / "0b0e7c1e-5a2d-4b9f-9e61-a8d42f0b6c9e"
    session.mkdir(parents=True)
    log = session / file_name
    log.write_bytes(data)
    return log, root


def commands(log: Path, root: Path, out: Path) -> list[list[str]]:
    log_arg = str(log)
    return [
        ["cat", log_arg],
        ["cat", "--expand", log_arg],
        ["ls", str(root)],
        ["stats", "--json", log_arg],
        ["stats", log_arg],
        ["stats", "--by", "step", log_arg],
        ["stats", "--by", "tool", "--json", log_arg],
        ["cat", "--salvage", log_arg],
        ["grep", "-F", "the", log_arg],
        ["grep", "-i", "-C", "1", "c.i", log_arg],
        ["replay", "--instant", log_arg],
        ["replay", "--instant", "--timestamps", log_arg],
        ["replay", "--export", str(out / "replay.cast"), log_arg],
        ["replay", "--export", str(out / "replay.md"), log_arg],
        ["replay", "--export", str(out / "replay.ndjson"), log_arg],
        ["validate", log_arg],
        ["images", log_arg],
        ["images", "--json", "--out", str(out / "images"), "--store", str(SAMPLES / "attachments"), log_arg],
    ]


def problem_with(args: list[str], result) -> str | None:
    """What is wrong with one command's outcome, or None: it must end with a documented status, print no
    traceback and, when it fails, say so in one ``dshctl: error:`` line (validate and ls: in their report,
    which marks the log unreadable)."""
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        return f"raised {type(exc).__name__}: {exc}"
    if result.exit_code not in (0, 1, 2):
        return f"exit status {result.exit_code}"
    err = result.stderr
    if "Traceback" in err:
        return "printed a traceback"
    if "out of memory" in err:
        return "ran out of the memory cap"
    errors = [line for line in err.splitlines() if line.startswith("dshctl: error:")]
    if len(errors) > 1:
        return f"printed {len(errors)} error lines"
    if result.exit_code == 2:
        if args[0] in ("validate", "ls"):
            return None if "unreadable" in result.stdout else "exit 2 without an unreadable verdict"
        if len(errors) != 1:
            return f"exit 2 with stderr {err!r}"
    return None


def timeline_problem(timeline: Timeline) -> str | None:
    """Items must tile the fragments: each holds ≥ 1 fragment and has exactly one time per fragment."""
    expected_start = 0
    for item in timeline.items:
        if item.start != expected_start or item.count < 1:
            return f"{item!r} does not follow fragment {expected_start}"
        expected_start += item.count
    if len(timeline.times) != expected_start:
        return f"{len(timeline.times)} fragment times for {expected_start} fragments"
    return None


def walk_player(log: Path) -> str | None:
    """Step the interactive player's model through the whole timeline and back, as the keys would."""
    try:
        opened = open_log(str(log))
    except DshctlError:
        return None
    try:
        timeline = Timeline(opened)
        player = Player(timeline, paused=True, now=0.0)
        now = 0.0
        steps = 0
        while not player.at_end:
            player.step_forward(now)
            steps += 1
            now += 0.05
            if steps % 16 == 0:
                screen_rows(timeline, player.position, 80, 24)
                status_text(timeline, player.position, speed=1.0, paused=True, width=80, message=None, keys=True)
        for move in (player.step_back, player.prev_turn, player.prev_tool, player.next_turn, player.next_tool):
            move(now)
        player.search("the", now)
        player.goto_turn(1, now)
        player.toggle_pause(now)
        player.tick(now + 10**9)
        screen_rows(timeline, player.position, 80, 24)
        return timeline_problem(timeline)
    except DshctlError:
        return None  # the driver restores the terminal and prints it as one error line
    finally:
        opened.close()


def run_everything(data: bytes, file_name: str, tmp_path: Path) -> list[str]:
    """Every command and the player walk on one input within one budget; the problems found."""
    log, root = place(data, file_name, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    problems: list[str] = []
    current = "setup"
    try:
        with bounded():
            for args in commands(log, root, out):
                current = " ".join(args[:-1])
                problem = problem_with(args, runner.invoke(app, args))
                if problem:
                    problems.append(f"dshctl {current}: {problem}")
            current = "player walk"
            try:
                problem = walk_player(log)
            except Exception as exc:  # noqa: BLE001 - the interactive player would show it as a traceback
                problem = f"raised {type(exc).__name__}: {exc}"
            if problem:
                problems.append(f"player: {problem}")
    except OverBudget as exc:
        problems.append(f"{current}: {exc} (the budget covers every command of one input)")
    if log.read_bytes() != data:
        problems.append("a command wrote to the log it read")
    return problems


def session_file_name(base: str, suffix: str) -> str:
    """``tour.session.v2.jsonl`` → ``session.v2.jsonl`` (+ ``.zstd`` when the mutant is compressed)."""
    name = base.split(".", 1)[1]
    return name + ".zstd" if suffix.endswith(".zstd") else name


# --------------------------------------------------------------------------------------------------
# Every mutant


@pytest.mark.parametrize("m", mutate.mutants(), ids=lambda m: m.id)
def test_every_command_finishes_on_every_mutant(m, tmp_path):
    assert run_everything(m.build(), session_file_name(m.base, m.suffix), tmp_path) == []


# --------------------------------------------------------------------------------------------------
# The file: one run's dt one entry too long or too short


def with_stream_edit(base: str, edit) -> bytes:
    """The sample with ``edit(record)`` applied to the first run of the first settlement that has one."""
    objs = mutate.load(base)
    for obj in objs[1:]:
        stream = obj.get("data", {}).get("stream") if isinstance(obj.get("data"), dict) else None
        runs = [record for record in stream or [] if record["type"] != "chunk" and len(record["dt"]) > 1]
        if runs:
            edit(runs[0])
            return mutate.dump(objs)
    raise AssertionError(f"{base} has no run with several members")


DT_EDITS = {"dt one too long": lambda record: record["dt"].append(5), "dt one too short": lambda record: record["dt"].pop()}


@pytest.mark.parametrize("base", ["tour.session.v2.jsonl", "tour.session.v3.jsonl"])
@pytest.mark.parametrize("edit", list(DT_EDITS), ids=list(DT_EDITS))
def test_replay_ends_on_a_run_whose_dt_has_a_wrong_length(base, edit, tmp_path):
    assert run_everything(with_stream_edit(base, DT_EDITS[edit]), session_file_name(base, ".jsonl"), tmp_path) == []


@pytest.mark.parametrize("base", ["tour.session.v2.jsonl", "tour.session.v3.jsonl"])
@pytest.mark.parametrize("edit", list(DT_EDITS), ids=list(DT_EDITS))
def test_the_player_steps_through_a_run_whose_dt_has_a_wrong_length(base, edit, tmp_path):
    log, _ = place(with_stream_edit(base, DT_EDITS[edit]), session_file_name(base, ".jsonl"), tmp_path)
    with bounded():
        assert walk_player(log) is None


# --------------------------------------------------------------------------------------------------
# Hypothesis: damaged stream records


UNSAFE_NUMBERS = st.sampled_from([2**53, -(2**53), 2**63, -(2**63) - 1, 10**300, -(10**300), 1e300, -1e300, 0.5])
TIMES = st.integers(-(2**70), 2**70) | st.integers(-(10**7), 10**7) | UNSAFE_NUMBERS
NOT_NUMBERS = st.sampled_from([None, "7", [], {}, True])


def _members_key(run_type: str) -> str:
    return "args" if run_type == "tool-call-chunks" else "texts"


@st.composite
def run_damage(draw, run: dict, members: str, timed: dict) -> str:
    """Damage one run in place (``run`` holds dt, index and the members, ``timed`` holds time0), the way a
    hand edit or a broken writer could; says what it did."""
    kind = draw(st.sampled_from(["dt-length", "members-length", "empty", "index", "time0", "gap", "drop-key"]))
    if kind == "dt-length":
        change = draw(st.integers(-3, 3).filter(bool))
        dt = run.get("dt", [])
        run["dt"] = dt[:change] if change < 0 else dt + draw(st.lists(TIMES, min_size=change, max_size=change))
        return f"dt length {change:+d}"
    if kind == "members-length":
        change = draw(st.integers(-3, 3).filter(bool))
        items = run.get(members, [])
        run[members] = items[:change] if change < 0 else items + ["x"] * change
        return f"{members} length {change:+d}"
    if kind == "empty":
        run[members] = []
        run["dt"] = draw(st.sampled_from([[], [0], run.get("dt", [])]))
        return f"no {members}, dt {run['dt']}"
    if kind == "index":
        run["index"] = draw(TIMES | NOT_NUMBERS)
        return f"index = {run['index']!r:.40}"
    if kind == "time0":
        timed["time0"] = draw(TIMES | NOT_NUMBERS)
        return f"time0 = {timed['time0']!r:.40}"
    if kind == "gap":
        gaps = run.get("dt") or [0]
        position = draw(st.integers(0, len(gaps) - 1))
        gaps[position] = draw(TIMES)
        run["dt"] = gaps
        return f"dt[{position}] = {gaps[position]!r:.40}"
    present = [key for key in ("dt", "index", members) if key in run]  # an earlier damage may have dropped some
    if not present:
        return "nothing left to drop"
    key = draw(st.sampled_from(present))
    del run[key]
    return f"no {key}"


@st.composite
def raw_damage(draw, timed: dict, chunk: dict) -> str:
    """Damage one raw chunk in place: its time (held by ``timed``), or its block index."""
    if draw(st.booleans()) and "index" in chunk:
        chunk["index"] = draw(TIMES | NOT_NUMBERS)
        return f"chunk index = {chunk['index']!r:.40}"
    timed["time"] = draw(TIMES | NOT_NUMBERS)
    return f"time = {timed['time']!r:.40}"


def stream_records(objs: list) -> list[tuple[str, dict]]:
    """Every stream record of a log with a label: v2+ records inside settlements; v0 packed rows and
    ``assistant/chunk`` events, which the reader folds into streams."""
    found = []
    for obj in objs[1:]:
        data = obj.get("data")
        if obj["type"] in ("assistant/message", "assistant/attempt") and isinstance(data.get("stream"), list):
            found += [(f"seq {obj['seq']} record {n}", record) for n, record in enumerate(data["stream"])]
        elif obj["type"] in ("text-chunks", "reasoning-chunks", "tool-call-chunks", "assistant/chunk"):
            found.append((f"{obj['type']} at seq {obj.get('seq', obj.get('seq0'))}", obj))
    return found


def damage(record: dict):
    """The strategy that damages this record, whichever of the four shapes it has."""
    kind = record["type"]
    if kind == "chunk":
        return raw_damage(record, record["chunk"])
    if kind == "assistant/chunk":
        return raw_damage(record, record["data"]["chunk"])
    if "data" in record:  # a v0 packed row: time0 on the row, the rest in its data
        return run_damage(record["data"], _members_key(kind), record)
    return run_damage(record, _members_key(kind), record)


class DamagedLog:
    """A damaged sample, shown by what was done to it (not by its bytes) when hypothesis reports it."""

    def __init__(self, base: str, damages: list[str], data: bytes, file_name: str) -> None:
        self.base = base
        self.damages = damages
        self.data = data
        self.file_name = file_name

    def __repr__(self) -> str:
        return f"DamagedLog({self.file_name} from {self.base}: {'; '.join(self.damages)})"


@st.composite
def damaged_logs(draw) -> DamagedLog:
    """A sample with one to three stream records damaged; sometimes zstd-compressed."""
    base = draw(st.sampled_from(STREAM_BASES))
    objs = mutate.load(base)
    records = stream_records(objs)
    damages = []
    for _ in range(draw(st.integers(1, 3))):
        label, record = draw(st.sampled_from(records))
        damages.append(f"{label}: {draw(damage(record))}")
    data = mutate.dump(objs)
    name = session_file_name(base, ".jsonl")
    if draw(st.booleans()):
        return DamagedLog(base, damages, zstandard.ZstdCompressor(write_checksum=True).compress(data), name + ".zstd")
    return DamagedLog(base, damages, data, name)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(log=damaged_logs())
def test_every_command_finishes_on_damaged_streams(log, tmp_path_factory):
    assert run_everything(log.data, log.file_name, tmp_path_factory.mktemp("damaged")) == []


# A value anywhere in an event's data replaced by a JSON value of another shape: where a lookup key, a
# string or a number is expected, a list or an object must be damage or a miss, never a traceback.
HOSTILE_VALUES = st.sampled_from([[1], {"seq": 1}, True, None, 1.5, -1, 2**60, "", "x" * 300, [], {}])


def _value_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _value_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _value_paths(item, (*path, index))


@st.composite
def hostile_payloads(draw) -> DamagedLog:
    """A sample with one to three values of its events' data swapped for values of another shape."""
    base = draw(st.sampled_from(STREAM_BASES))
    objs = mutate.load(base)
    damages = []
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(1, len(objs) - 1))
        paths = [path for path in _value_paths(objs[index].get("data")) if path]
        if not paths:
            continue
        path, value = draw(st.sampled_from(paths)), copy.deepcopy(draw(HOSTILE_VALUES))  # never one object twice
        parent = objs[index]["data"]
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
        damages.append(f"line {index + 1} data{''.join(f'[{key!r}]' for key in path)} = {value!r:.40}")
    return DamagedLog(base, damages, mutate.dump(objs), session_file_name(base, ".jsonl"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(log=hostile_payloads())
def test_every_command_finishes_on_hostile_payload_values(log, tmp_path_factory):
    assert run_everything(log.data, log.file_name, tmp_path_factory.mktemp("hostile")) == []


# --------------------------------------------------------------------------------------------------
# The watchdog itself


def test_the_watchdog_stops_a_command_that_never_ends(monkeypatch, tmp_path):
    from dshctl.replay import transcript

    def forever(*args, **kwargs):
        while True:
            yield ""

    monkeypatch.setattr(transcript, "iter_chunks", forever)
    with pytest.raises(OverBudget):
        with bounded(seconds=0.5):
            runner.invoke(app, ["replay", "--instant", str(SAMPLES / "tour.session.v2.jsonl")])


def test_the_memory_cap_turns_runaway_allocation_into_a_failure(monkeypatch):
    from dshctl.replay import transcript

    def hoard(*args, **kwargs):
        kept = []
        while True:
            kept.append(bytearray(1 << 24))
            yield ""

    monkeypatch.setattr(transcript, "iter_chunks", hoard)
    with bounded(seconds=20, headroom=256 << 20):
        result = runner.invoke(app, ["replay", "--instant", str(SAMPLES / "tour.session.v2.jsonl")])
    assert problem_with(["replay"], result) == "ran out of the memory cap"


# --------------------------------------------------------------------------------------------------
# How replay shows what it cannot stream


def with_settlement_edit(base: str, seq: int, edit) -> bytes:
    """The sample with ``edit(record)`` applied to the first run of the settlement at ``seq``."""
    objs = mutate.load(base)
    edit(next(record for record in mutate.stream(objs, seq) if record["type"] != "chunk"))
    return mutate.dump(objs)


def replay_instant(data: bytes, tmp_path: Path) -> str:
    log = tmp_path / "session.v2.jsonl"
    log.write_bytes(data)
    result = runner.invoke(app, ["replay", "--instant", str(log)])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_replay_shows_a_message_with_a_damaged_stream_whole_and_says_so(tmp_path):
    clean = replay_instant((SAMPLES / "tour.session.v2.jsonl").read_bytes(), tmp_path)
    damaged = replay_instant(with_settlement_edit("tour.session.v2.jsonl", 12, DT_EDITS["dt one too long"]), tmp_path)
    note = "· damaged stream (dshctl validate names it): the message is shown whole\n"
    assert "damaged stream" not in clean
    assert damaged.replace(note, "", 1) == clean
    assert damaged.index(note) < damaged.index("A red test job in CI.")


def test_replay_says_an_attempt_with_a_damaged_stream_cannot_be_shown(tmp_path):
    damaged = replay_instant(with_settlement_edit("tour.session.v2.jsonl", 9, DT_EDITS["dt one too short"]), tmp_path)
    note = "· damaged stream (dshctl validate names it): the attempt cannot be shown\n"
    assert damaged.index(note) < damaged.index("↻ retry 1 of 3")
    assert "The screenshot shows" not in damaged and "attempt ended without a result" not in damaged


# --------------------------------------------------------------------------------------------------
# Envelope times


@pytest.mark.parametrize("time", [2**53, -(2**53), 2**63, 10**300, 1e300], ids=["2^53", "-2^53", "2^63", "1e300 int", "1e300 float"])
def test_an_event_time_beyond_the_safe_integers_is_damage_like_a_missing_one(time, tmp_path):
    objs = mutate.load("tour.session.v2.jsonl")
    mutate.at(objs, 5)["time"] = time
    data = mutate.dump(objs)
    assert run_everything(data, "session.v2.jsonl", tmp_path) == []
    for command in (["cat"], ["replay", "--instant"]):
        result = runner.invoke(app, [*command, str(place(data, "session.v2.jsonl", tmp_path / command[0])[0])])
        assert result.exit_code == 2
        assert "(seq 5): event time is not a safe integer; a later turn/end" in result.stderr


# --------------------------------------------------------------------------------------------------
# Stream clocks far from their settlement


def built_timeline(data: bytes, tmp_path: Path) -> Timeline:
    tmp_path.mkdir()
    log = tmp_path / "session.v2.jsonl"
    log.write_bytes(data)
    timeline = Timeline(open_log(str(log)))
    timeline.ensure_all()
    timeline.log.close()
    return timeline


@pytest.mark.parametrize("gap", [2**52, -(2**52)], ids=["+2^52 ms", "-2^52 ms"])
def test_a_safe_but_implausible_gap_inside_a_stream_does_not_stretch_the_replay(gap, tmp_path):
    def far_gap(record):
        record["dt"][1] = gap

    clean = built_timeline((SAMPLES / "tour.session.v2.jsonl").read_bytes(), tmp_path / "clean")
    damaged = built_timeline(with_settlement_edit("tour.session.v2.jsonl", 12, far_gap), tmp_path / "damaged")
    assert damaged.duration_ms <= clean.duration_ms + 1000
    runs = [item for item in damaged.items if item.seq == 12 and item.fragments is not None]
    assert runs and all(item.synthetic for item in runs)


# --------------------------------------------------------------------------------------------------
# Timed playback over a gap longer than time.sleep accepts


def test_timed_playback_without_an_idle_cap_waits_out_a_centuries_long_gap_in_slices(monkeypatch, tmp_path):
    import io

    from dshctl.replay import terminal

    objs = mutate.load("tour.session.v2.jsonl")
    last = objs[-1]
    last["time"] += 10**13  # 317 years: past time.sleep's limit (2**63 ns, ~292 years)
    timeline = built_timeline(mutate.dump(objs), tmp_path / "log")
    clock = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        if seconds * 1e9 >= 2**63:
            raise OverflowError("timestamp out of range for platform time_t")
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(terminal, "MAX_SLEEP_SECONDS", 1e8, raising=False)
    out = io.StringIO()
    terminal.play_stream(timeline, 0, speed=1.0, idle_limit=0, color=False, timestamps=False, out=out, sleep=sleep, now=lambda: clock[0])
    assert out.getvalue().endswith("── turn 4 aborted (user) · 2777777:46:41\n")
    assert max(slept) <= 1e8
    assert sum(slept) == pytest.approx(timeline.duration_ms / 1000, rel=1e-9)


# --------------------------------------------------------------------------------------------------
# Range-encoded sourceEventSeqs


@pytest.mark.parametrize("ranges", [[[0, 10**12]], [[0, 23], [0, 23]], [5, [0, 23]]], ids=["far past", "twice", "one too many"])
def test_a_seq_range_longer_than_its_event_seq_is_not_expanded(ranges, tmp_path):
    objs = mutate.load("tour.session.v2.jsonl")
    mutate.at(objs, 24)["sourceEventSeqs"] = ranges
    data = mutate.dump(objs)
    assert run_everything(data, "session.v2.jsonl", tmp_path / "all") == []
    log, _ = place(data, "session.v2.jsonl", tmp_path / "cat")
    result = runner.invoke(app, ["cat", "--type", "tool/result", str(log)])
    first = json.loads(result.stdout.splitlines()[0])
    assert "sourceEventSeqs" not in first
    assert first["notes"] == ["sourceEventSeqs is not a list of seqs and [start, end] pairs"]


def test_a_v0_message_citing_a_range_longer_than_its_seq_is_not_expanded(tmp_path):
    objs = mutate.load("tour.session.jsonl")
    next(obj for obj in objs if obj.get("type") == "assistant/message")["sourceEventSeqs"] = [[0, 10**12]]
    assert run_everything(mutate.dump(objs), "session.jsonl", tmp_path) == []


def test_a_seq_range_within_its_event_seq_is_expanded(tmp_path):
    objs = mutate.load("tour.session.v2.jsonl")
    mutate.at(objs, 24)["sourceEventSeqs"] = [[0, 23]]
    log, _ = place(mutate.dump(objs), "session.v2.jsonl", tmp_path)
    first = json.loads(runner.invoke(app, ["cat", "--type", "tool/result", str(log)]).stdout.splitlines()[0])
    assert first["sourceEventSeqs"] == list(range(24))


# --------------------------------------------------------------------------------------------------
# Settlements whose data is not an object


@pytest.mark.parametrize("base", ["tour.session.jsonl", "tour.session.v2.jsonl"])
def test_a_settlement_whose_data_is_not_an_object(base, tmp_path):
    objs = mutate.load(base)
    next(obj for obj in objs if obj.get("type") == "assistant/message")["data"] = [1]
    assert run_everything(mutate.dump(objs), session_file_name(base, ".jsonl"), tmp_path) == []


# --------------------------------------------------------------------------------------------------
# JSON nested deeper than the decoder's recursion limit


def nested(base: str, depth: int, line: int = 6) -> bytes:
    """``base`` with one more envelope key on body line ``line`` holding ``depth`` nested arrays (a
    line nested deeper than about 1000 levels is not JSON to dshctl: the man page's reading rules)."""
    lines = (SAMPLES / base).read_bytes().splitlines()
    lines[line] = lines[line][:-1] + b',"extra":' + b"[" * depth + b"]" * depth + b"}"
    return b"\n".join(lines) + b"\n"


def export_commands(log: Path, out: Path) -> list[list[str]]:
    return [
        ["export", "--format", "otlp", "--out", str(out / "traces.jsonl"), str(log)],
        ["export", "--out", str(out / "dataset"), str(log)],
        ["sql", "select count(*) from turns", str(log)],
    ]


@pytest.mark.parametrize("depth", [1000, 100_000])
@pytest.mark.parametrize("base", ["tour.session.v4.jsonl", "tour.session.jsonl"])
def test_a_line_nested_deeper_than_the_decoder_reads_is_an_unparsable_record(base, depth, tmp_path):
    data = nested(base, depth)
    name = session_file_name(base, "")
    assert run_everything(data, name, tmp_path) == []
    log, _root = place(data, name, tmp_path / "one")
    out = tmp_path / "one-out"
    out.mkdir()
    for args in [["stats", str(log)], ["cat", str(log)], ["replay", "--instant", str(log)],
                 ["grep", "x", str(log)], ["images", str(log)], *export_commands(log, out)]:
        result = runner.invoke(app, args)
        assert problem_with(args, result) is None, args
        assert result.exit_code == 2, args
        assert ":7 (seq 5): unparsable committed record: maximum recursion depth exceeded" in result.stderr, args


def test_among_many_logs_a_too_deeply_nested_one_is_reported_and_skipped(tmp_path):
    root = tmp_path / "root"
    for name, data in (("a", nested("tour.session.v4.jsonl", 5000)), ("b", (SAMPLES / "tour.session.v4.jsonl").read_bytes())):
        session = root / "--home-many--" / f"0b0e7c1e-5a2d-4b9f-9e61-a8d42f0b6c9{name}"
        session.mkdir(parents=True)
        (session / "session.v4.jsonl").write_bytes(data)
    for args in (["stats", "-j", "2", "--json", str(root)], ["grep", "-c", "CI", str(root)], ["ls", str(root)],
                 ["export", "--format", "otlp", "--out", "-", str(root)]):
        result = runner.invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
        assert "Traceback" not in result.stderr, args
        if args[0] != "ls":  # ls decodes only the lines that may hold a title or a turn
            assert "maximum recursion depth exceeded" in result.stderr, args
        assert result.stdout.strip(), args  # the other log's output


@pytest.mark.parametrize("depth", [200, 900])
def test_a_line_nested_within_the_limit_reads_as_any_other(depth, tmp_path):
    data = nested("tour.session.v4.jsonl", depth)
    assert run_everything(data, "session.v4.jsonl", tmp_path) == []
    log, _root = place(data, "session.v4.jsonl", tmp_path / "one")
    out = tmp_path / "one-out"
    out.mkdir()
    for args in [["stats", str(log)], ["cat", str(log)], ["replay", "--instant", str(log)], *export_commands(log, out)]:
        result = runner.invoke(app, args)
        assert problem_with(args, result) is None, args
        assert result.exit_code == 0, (args, result.stderr)
