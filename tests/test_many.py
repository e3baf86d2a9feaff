"""Reading many logs (:mod:`dshctl.many`): batches, worker processes, order, errors, and the same figures
whatever the number of jobs. ``BATCH_BYTES`` is lowered so that a few dozen small logs take the pool path."""

from __future__ import annotations

import calendar
import functools
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from dshctl import many
from dshctl.errors import DshctlError
from dshctl.many import map_logs, resolve_many

from conftest import SAMPLES, invoke
from stats_logs import FILE_NAMES, generations

SCENARIOS = ("retry", "mixed", "nousage", "child")
MIXED = set(generations("mixed").values())
SMALL_BATCH = 3000
"""Bytes per batch in these tests: the 2–5 KB logs make batches of one or two, the zstd samples go alone."""


@pytest.fixture
def root(tmp_path) -> Path:
    """A sessions root of 36 logs: every scenario in every generation twice, two zstd samples, two broken."""
    root = tmp_path / "sessions"
    index = 0

    def session(name: str) -> Path:
        nonlocal index
        directory = root / f"--project-{index % 3}--" / f"s{index:02d}"
        directory.mkdir(parents=True)
        index += 1
        return directory / name

    for _ in range(2):
        for scenario in SCENARIOS:
            for generation, text in generations(scenario).items():
                session(FILE_NAMES[generation]).write_text(text)
    shutil.copy(SAMPLES / "tour.session.v4.jsonl.zstd", session("session.v4.jsonl.zstd"))
    shutil.copy(SAMPLES / "tour.session.jsonl.zstd", session("session.jsonl.zstd"))
    session("session.v2.jsonl").write_text("this is not json\n")
    session("session.v4.jsonl.zstd").write_bytes(b"\x28\xb5\x2f\xfd broken frame")
    return root


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(many, "BATCH_BYTES", SMALL_BATCH)


def display_and_pid(ref) -> tuple[str, int]:
    from dshctl.reader import open_log

    open_log(ref).close()  # the broken logs raise here
    return ref.display, os.getpid()


def marked_slow_display(marks: Path, ref) -> str:
    (marks / ref.path.parent.name).touch()
    time.sleep(0.05)
    return ref.display


def test_batches_cover_every_log_once_big_logs_first(root, small_batches):
    refs = resolve_many([str(root)])
    batches = many._plan_batches(refs, jobs=2)
    flat = [index for batch in batches for index in batch]
    assert sorted(flat) == list(range(len(refs)))
    work = [many._work_estimate(ref) for ref in refs]
    alone = [batch[0] for batch in batches if len(batch) == 1 and work[batch[0]] >= SMALL_BATCH]
    assert alone and [batch[0] for batch in batches[: len(alone)]] == alone  # the big logs come first...
    assert [work[i] for i in alone] == sorted((work[i] for i in alone), reverse=True)  # ...largest first
    rest = flat[len(alone):]
    assert rest == sorted(rest)  # the others in their own order
    assert any(len(batch) > 1 for batch in batches)  # small logs share a task


def test_little_work_or_stdin_stays_in_process(root):
    refs = resolve_many([str(root)])
    assert many._plan_batches(refs, jobs=2) == []  # ~100 KB: less than two batches of the default size
    stdin = resolve_many(["-"])
    assert many._plan_batches(refs + stdin, jobs=2) == []


def test_pool_keeps_the_order_and_the_error_of_each_log(root, small_batches):
    refs = resolve_many([str(root)])
    results = list(map_logs(display_and_pid, refs, jobs=2, progress=False))
    assert [ref for ref, _ in results] == refs
    errors = [(ref, result) for ref, result in results if isinstance(result, DshctlError)]
    assert len(errors) == 2
    for ref, error in errors:
        assert error.file == ref.display
    read = [result for _, result in results if not isinstance(result, DshctlError)]
    assert [display for display, _ in read] == [ref.display for ref in refs if ref not in dict(errors)]
    assert {pid for _, pid in read} - {os.getpid()}, "the logs were read in worker processes"
    in_process = list(map_logs(display_and_pid, refs, jobs=1, progress=False))
    assert [(ref, str(r) if isinstance(r, DshctlError) else r[0]) for ref, r in in_process] == [
        (ref, str(r) if isinstance(r, DshctlError) else r[0]) for ref, r in results
    ]


def test_closing_early_cancels_the_batches_not_started(root, small_batches, tmp_path):
    refs = resolve_many([str(root)])
    marks = tmp_path / "marks"
    marks.mkdir()
    results = map_logs(functools.partial(marked_slow_display, marks), refs, jobs=2, progress=False)
    first = next(results)
    results.close()
    assert first == (refs[0], refs[0].display)
    assert len(list(marks.iterdir())) < len(refs)


def gc_frozen(ref) -> int:
    """In a worker: how many objects are frozen (those it inherited from the parent)."""
    import gc

    return gc.get_freeze_count()


def test_the_parent_heap_is_frozen_for_the_workers_and_only_while_the_pool_runs(root, small_batches):
    import gc

    refs = resolve_many([str(root)])
    assert all(frozen > 0 for _, frozen in map_logs(gc_frozen, refs, jobs=2, progress=False))
    assert gc.get_freeze_count() == 0
    stopped = map_logs(gc_frozen, refs, jobs=2, progress=False)
    next(stopped)
    stopped.close()
    assert gc.get_freeze_count() == 0  # a caller that stops early unfreezes it too


@pytest.mark.parametrize("by", ["session", "turn", "step"])
def test_stats_same_document_with_one_or_two_jobs(root, small_batches, by):
    one = invoke("stats", str(root), "--json", "--by", by, "-j", "1")
    two = invoke("stats", str(root), "--json", "--by", by, "-j", "2")
    assert one.exit_code == two.exit_code == 1  # two unreadable logs among many
    assert one.stdout == two.stdout
    document = json.loads(two.stdout)
    assert len(document["sessions"]) == 34 and len(document["errors"]) == 2
    ndjson_one = invoke("stats", str(root), "--ndjson", "--by", by, "-j", "1")
    ndjson_two = invoke("stats", str(root), "--ndjson", "--by", by, "-j", "2")
    assert ndjson_one.stdout == ndjson_two.stdout


def test_validate_same_reports_with_one_or_two_jobs(root, small_batches):
    one = invoke("validate", str(root), "--format", "json", "-j", "1")
    two = invoke("validate", str(root), "--format", "json", "-j", "2")
    assert one.exit_code == two.exit_code == 2
    documents = [json.loads(result.stdout) for result in (one, two)]
    for document in documents:
        document.pop("elapsedSeconds")
    assert documents[0] == documents[1]


def test_ls_same_rows_in_worker_processes(root, small_batches, monkeypatch):
    pooled = invoke("ls", str(root), "--json")
    monkeypatch.setattr(many, "default_jobs", lambda: 1)
    in_process = invoke("ls", str(root), "--json")
    assert pooled.exit_code == in_process.exit_code == 1
    assert pooled.stdout == in_process.stdout
    assert len(json.loads(pooled.stdout)["sessions"]) == 36


def test_since_skips_logs_written_long_before_unopened(root, monkeypatch):
    from dshctl.options import window

    refs = resolve_many([str(root)])
    mixed = [ref for ref in refs if _text(ref.path) in MIXED]  # created 2027-01-15
    old = calendar.timegm((2027, 1, 1, 0, 0, 0))  # more than the slack before --since
    recent = calendar.timegm((2027, 1, 9, 0, 0, 0))  # within the slack: opened, the header decides
    for ref in refs:
        os.utime(ref.path, (old, old))
    for ref in mixed[1:]:
        os.utime(ref.path, (recent, recent))
    monkeypatch.setattr(window, "clock_ms", lambda: calendar.timegm((2028, 1, 1, 0, 0, 0)) * 1000)
    result = invoke("stats", str(root), "--json", "--since", "2027-01-10")
    document = json.loads(result.stdout)
    assert result.exit_code == 0 and document["errors"] == []  # the broken logs were never opened
    # mixed[0] was created after --since, but its mtime says otherwise: skipped unopened
    assert [s["path"] for s in document["sessions"]] == [ref.display for ref in mixed[1:]]
    assert document["aggregate"]["skipped"] == len(refs) - len(mixed) + 1


def test_since_still_to_come_opens_every_log(root, monkeypatch):
    from dshctl.options import window

    monkeypatch.setattr(window, "clock_ms", lambda: calendar.timegm((2026, 12, 1, 0, 0, 0)) * 1000)
    fresh = invoke("stats", str(root), "--json", "--since", "2027-01-10")
    old = calendar.timegm((2027, 1, 1, 0, 0, 0))
    for ref in resolve_many([str(root)]):
        os.utime(ref.path, (old, old))
    dated = invoke("stats", str(root), "--json", "--since", "2027-01-10")
    assert len(json.loads(dated.stdout)["sessions"]) > 0
    assert dated.stdout == fresh.stdout  # every log opened: future-dated logs' mtimes say nothing


def _text(path: Path) -> str | None:
    try:
        return path.read_text()
    except (UnicodeDecodeError, OSError):
        return None


def test_the_same_file_reached_twice_is_read_once(root, tmp_path):
    log = resolve_many([str(root)])[0].path
    link = tmp_path / "link"
    link.symlink_to(log.parent, target_is_directory=True)
    refs = resolve_many([str(log), str(link), str(root)])
    assert len(refs) == 36 and refs[0].path == log


def test_a_warning_summary_spans_the_numbers_of_its_logs():
    from dshctl.many import Warnings, summarize

    texts = ["line 12: torn tail dropped (340 bytes, no final LF)", "line 3: torn tail dropped (12 bytes, no final LF)",
             "line 40: torn tail dropped (1,024 bytes, no final LF)"]
    assert summarize(texts) == "torn tail dropped in 3 logs (12–1,024 bytes, no final LF)"
    assert summarize(texts[:1] * 2) == "torn tail dropped in 2 logs (340 bytes, no final LF)"
    assert summarize(["header lacks a session id"] * 4) == "header lacks a session id in 4 logs"
    zstd = "line {}: torn tail dropped: the last zstd frame is incomplete ({} bytes on disk, 0 decoded bytes after its last complete line)"
    assert summarize([zstd.format(5, 43), zstd.format(9, 61)]) == (
        "torn tail dropped in 2 logs: the last zstd frame is incomplete (43–61 bytes on disk, 0 decoded bytes after its last "
        "complete line)")

    told = []
    warnings = Warnings()
    for index, text in enumerate(texts + ["header lacks a session id"]):
        warnings.add(f"log-{index}", text)
    import dshctl.stdio

    real = dshctl.stdio.warn
    dshctl.stdio.warn = told.append
    try:
        warnings.report()
    finally:
        dshctl.stdio.warn = real
    assert told == ["torn tail dropped in 3 logs (12–1,024 bytes, no final LF): log-0, log-1, log-2; --verbose lists each",
                    "log-3: header lacks a session id"]


@pytest.fixture
def meters(monkeypatch):
    """The meters made (``made``) and every ``(meter, size)`` counted as one log done (``counted``)."""
    from types import SimpleNamespace

    from dshctl import progress

    seen = SimpleNamespace(made=[], counted=[])
    init, finished = progress.Meter.__init__, progress.Meter.finished

    def making(meter, *args):
        seen.made.append(meter)
        init(meter, *args)

    def counting(meter, size, logs=1):
        seen.counted.append((meter, size))
        finished(meter, size, logs)

    monkeypatch.setattr(progress.Meter, "__init__", making)
    monkeypatch.setattr(progress.Meter, "finished", counting)
    return seen


def _stats_stops_in_the_fold(monkeypatch):
    """``dshctl.stats`` of two logs stopped by Ctrl-C while it folds the first result (in the consumer of
    ``map_logs``, which is suspended at its first result)."""
    import importlib

    import dshctl

    aggregate = importlib.import_module("dshctl.stats.aggregate").Aggregate

    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(aggregate, "add", interrupted)
        dshctl.stats([str(SAMPLES / "tour.session.v4.jsonl"), str(SAMPLES / "tour.session.v2.jsonl")], no_cache=True)


def _grep_of_an_unreadable_log(tmp_path):
    import dshctl

    bad = tmp_path / "bad.session.v4.jsonl"
    bad.write_text("this is not json\n")
    dshctl.grep(str(bad), "red")


@pytest.mark.parametrize("failing", ["grep", "stats"])
def test_a_library_call_that_raises_in_map_logs_leaves_no_meter_for_the_next(failing, tmp_path, monkeypatch, meters):
    import dshctl
    from dshctl import progress

    kept = []  # a caller that keeps the exception keeps its traceback, and every frame in it
    try:
        if failing == "grep":
            _grep_of_an_unreadable_log(tmp_path)
        else:
            _stats_stops_in_the_fold(monkeypatch)
    except (DshctlError, KeyboardInterrupt) as exc:
        kept.append(exc)
    assert kept and len(meters.made) == 1, "the first call raised inside its reading"
    first = meters.made[0]
    meters.counted.clear()
    tour = SAMPLES / "tour.session.v4.jsonl"
    dshctl.stats(str(tour))
    dshctl.grep(str(tour), "red")
    assert all(meter is not first for meter, _ in meters.counted), "a later call counted into the failed call's meter"
    assert [size for _, size in meters.counted] == [tour.stat().st_size] * 2
    assert len(meters.made) == 3 and [meter.done_logs for meter in meters.made[1:]] == [1, 1]  # a meter a call
    assert progress._active is None
