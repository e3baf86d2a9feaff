"""The stats cache (:mod:`dshctl.stats.cache`): a run over many logs served from it prints exactly what a
run that reads every log prints, re-reads a log that changed and no other, and survives a damaged,
foreign, unwritable or concurrently used cache without a different figure or a failure."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import importlib
from dshctl.cli import app
from dshctl.stats import cache as cache_module

stats_module = importlib.import_module("dshctl.stats")

from stats_logs import FILE_NAMES, generations

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def root(tmp_path) -> Path:
    """A root of two scenarios in every generation, the zstd samples, a torn one, a broken one."""
    root = tmp_path / "sessions"
    index = 0

    def session(name: str, directory_name: str | None = None) -> Path:
        nonlocal index
        directory = root / f"--project-{index % 2}--" / (directory_name or f"s{index:02d}")
        directory.mkdir(parents=True)
        index += 1
        return directory / name

    for scenario in ("retry", "mixed"):
        for generation, text in generations(scenario).items():
            session(FILE_NAMES[generation]).write_text(text)
    shutil.copy(SAMPLES / "tour.session.v4.jsonl.zstd", session("session.v4.jsonl.zstd"))
    shutil.copy(SAMPLES / "tour.session.jsonl.zstd", session("session.jsonl.zstd"))
    shutil.copy(SAMPLES / "torn-tail.session.v4.jsonl", session("session.v4.jsonl"))
    session("session.v4.jsonl.zstd", "zz-broken").write_bytes(b"\x28\xb5\x2f\xfd broken frame")
    return root


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The logs a run reads in this process (``-j 1``), by path."""
    seen: list[str] = []
    original = stats_module._stats_of_log

    def counted(ref, **kwargs):
        seen.append(ref.display)
        return original(ref, **kwargs)

    monkeypatch.setattr(stats_module, "_stats_of_log", counted)
    return seen


def broken(root: Path) -> str:
    return str(next(root.rglob("zz-broken/*")))


def logs(root: Path) -> int:
    return sum(1 for _ in root.rglob("session*"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["stats", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_warm_run_prints_what_a_cold_run_prints_and_reads_nothing(root, cache_home, reads):
    for by in ("session", "turn", "step", "model", "day"):
        uncached = run("--json", "--no-cache", "--by", by, "-j", "1", str(root))
        reads.clear()
        cold = run("--json", "--by", by, "-j", "1", str(root))
        # a rollup folds the session records: the session run's entries serve it
        assert len(reads) == (1 if by in ("model", "day") else logs(root))
        reads.clear()
        warm = run("--json", "--by", by, "-j", "1", str(root))
        assert reads == [broken(root)]
        assert uncached == cold == warm  # exit status, document and warnings alike
        assert uncached[0] == 1
        document = json.loads(warm[1])
        assert len(document["errors"]) == 1 and document["aggregate"]["sessions"] == logs(root) - 1
    assert (cache_home / "dshctl" / "stats.sqlite3").is_file()


def test_ndjson_and_tables_are_served_as_well(root, cache_home, reads):
    for form in (["--ndjson"], ["--no-color"], ["--json", "--since", "2020-01-01", "--until", "2030-01-01"]):
        cold = run(*form, "-j", "1", "--no-cache", str(root))
        run(*form, "-j", "1", str(root))
        reads.clear()
        assert run(*form, "-j", "1", str(root)) == cold
        assert len(reads) == 1  # the broken log only


def test_a_changed_log_is_read_again_and_no_other(root, cache_home, reads):
    run("--json", "-j", "1", str(root))
    log = next(root.rglob("session.v4.jsonl"))  # the torn one: its tail completed
    text = log.read_bytes()
    log.write_bytes(text + b"\n" if not text.endswith(b"\n") else text + b"{}\n")
    reads.clear()
    warm = run("--json", "-j", "1", str(root))
    assert sorted(reads) == sorted([str(log), broken(root)])
    assert warm == run("--json", "-j", "1", "--no-cache", str(root))


def test_a_cached_log_is_named_as_this_run_names_it(root, cache_home, tmp_path, monkeypatch):
    run("--json", "-j", "1", str(root))
    monkeypatch.chdir(tmp_path)
    relative = run("--json", "-j", "1", "sessions")
    assert relative == run("--json", "-j", "1", "--no-cache", "sessions")
    assert all(s["path"].startswith("sessions/") for s in json.loads(relative[1])["sessions"])


def test_the_since_window_skips_cached_logs_as_it_skips_read_ones(root, cache_home):
    run("--json", "-j", "1", str(root))
    for window in (["--since", "2100-01-01"], ["--until", "2000-01-01"]):
        assert run("--json", "-j", "1", *window, str(root)) == run("--json", "-j", "1", "--no-cache", *window, str(root))


def test_prices_and_line_limit_are_part_of_the_context(root, cache_home, tmp_path, monkeypatch, reads):
    run("--json", "-j", "1", str(root))
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."deepseek-official/deepseek-v4-flash"]\ninput = 1.0\noutput = 2.0\ncurrency = "EUR"\n')
    reads.clear()
    priced = run("--json", "-j", "1", "--prices", str(prices), str(root))
    assert len(reads) == logs(root)
    assert priced == run("--json", "-j", "1", "--no-cache", "--prices", str(prices), str(root))
    monkeypatch.setenv("DSHCTL_MAX_LINE_BYTES", "100")
    reads.clear()
    limited = run("--json", "-j", "1", str(root))
    assert len(reads) == logs(root)
    assert limited == run("--json", "-j", "1", "--no-cache", str(root))


def test_no_cache_neither_reads_nor_writes_it(root, cache_home):
    run("--json", "-j", "1", "--no-cache", str(root))
    assert not (cache_home / "dshctl").exists()


def test_one_log_is_always_read(cache_home, reads):
    run("--json", str(SAMPLES / "tour.session.v4.jsonl.zstd"))
    run("--json", str(SAMPLES / "tour.session.v4.jsonl.zstd"))
    assert len(reads) == 2
    assert not (cache_home / "dshctl").exists()


def test_a_damaged_cache_file_is_set_aside_and_rebuilt(root, cache_home, reads):
    expected = run("--json", "-j", "1", "--no-cache", str(root))
    path = cache_home / "dshctl" / "stats.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    assert run("--json", "-j", "1", str(root)) == expected
    assert (path.parent / "stats.sqlite3.damaged").read_bytes().startswith(b"this is not")
    reads.clear()
    assert run("--json", "-j", "1", str(root)) == expected
    assert len(reads) == 1  # rebuilt: only the broken log is read again


def test_a_foreign_or_damaged_entry_is_a_miss_never_code(root, cache_home, reads, tmp_path):
    expected = run("--json", "-j", "1", str(root))
    path = cache_home / "dshctl" / "stats.sqlite3"
    marker = tmp_path / "pwned"
    hostile = pickle.dumps(_Hostile(str(marker)))
    with sqlite3.connect(path) as db:
        keys = db.execute("SELECT dev, ino, context FROM stats ORDER BY ino").fetchall()
        assert len(keys) == logs(root) - 1
        # a valid digest over a pickle that names another global, a bad digest, bytes that are no pickle
        db.execute("UPDATE stats SET entry = ?, digest = ? WHERE ino = ?", (hostile, hashlib.blake2b(hostile, digest_size=16).digest(), keys[0][1]))
        db.execute("UPDATE stats SET digest = ? WHERE ino = ?", (b"0" * 16, keys[1][1]))
        junk = b"\x80\x05junk"
        db.execute("UPDATE stats SET entry = ?, digest = ? WHERE ino = ?", (junk, hashlib.blake2b(junk, digest_size=16).digest(), keys[2][1]))
    reads.clear()
    assert run("--json", "-j", "1", str(root)) == expected
    assert len(reads) == 4 and not marker.exists()
    reads.clear()
    assert run("--json", "-j", "1", str(root)) == expected
    assert len(reads) == 1  # the three entries were replaced


class _Hostile:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_foreign_schema_is_replaced(root, cache_home):
    path = cache_home / "dshctl" / "stats.sqlite3"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE stats (something TEXT)")
        db.execute("PRAGMA user_version = 99")
    expected = run("--json", "-j", "1", "--no-cache", str(root))
    assert run("--json", "-j", "1", str(root)) == expected
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM stats").fetchone()[0] == logs(root) - 1


def test_an_unwritable_cache_is_no_failure(root, tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    expected = run("--json", "-j", "1", "--no-cache", str(root))
    assert run("--json", "-j", "1", str(root)) == expected


def test_concurrent_runs_agree_and_share_one_cache(root, cache_home):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    command = [sys.executable, "-m", "dshctl", "stats", "--json", str(root)]
    expected = subprocess.run([*command, "--no-cache"], capture_output=True, env=env)
    for _ in range(2):
        runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(4)]
        outputs = [(p.wait(), *p.communicate()) for p in runs]
        assert all(output == (expected.returncode, expected.stdout, expected.stderr) for output in outputs)
    with sqlite3.connect(cache_home / "dshctl" / "stats.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM stats").fetchone()[0] == logs(root) - 1


def test_a_log_that_changes_while_it_is_read_is_not_kept(root, cache_home, monkeypatch, reads):
    log = next(root.rglob("session.v4.jsonl"))
    original = stats_module._stats_of_log

    def growing(ref, **kwargs):
        result = original(ref, **kwargs)
        if ref.path == log:
            with open(log, "ab") as f:
                f.write(b"")
            os.utime(log, ns=(os.stat(log).st_atime_ns, os.stat(log).st_mtime_ns + 1))
        return result

    monkeypatch.setattr(stats_module, "_stats_of_log", growing)
    run("--json", "-j", "1", str(root))
    with sqlite3.connect(cache_home / "dshctl" / "stats.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM stats").fetchone()[0] == logs(root) - 2


def test_the_unpickler_knows_only_the_records():
    with pytest.raises(pickle.UnpicklingError):
        cache_module._RecordsUnpickler(__import__("io").BytesIO(pickle.dumps(os.getcwd))).load()


def ls(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["ls", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def listed(monkeypatch) -> list[str]:
    """The logs a listing reads in this process."""
    ls_module = importlib.import_module("dshctl.ls")

    seen: list[str] = []
    original = ls_module.session_row

    def counted(ref):
        seen.append(ref.display)
        return original(ref)

    monkeypatch.setattr(ls_module, "session_row", counted)
    return seen


def test_ls_is_served_from_the_cache_and_reads_only_what_changed(root, cache_home, listed, tmp_path, monkeypatch):
    for form in (["--json"], ["--ndjson", "--sort", "title"], ["--no-color"], ["--json", "--since", "2000-01-01"]):
        expected = ls(*form, "--no-cache", str(root))
        ls(*form, str(root))
        listed.clear()
        assert ls(*form, str(root)) == expected
        assert listed == [broken(root)]  # an unreadable log is read again
    log = next(root.rglob("session.v4.jsonl"))
    with open(log, "ab") as f:
        f.write(b"\n")
    listed.clear()
    warm = ls("--json", str(root))
    assert sorted(listed) == sorted([str(log), broken(root)])
    assert warm == ls("--json", "--no-cache", str(root))
    monkeypatch.chdir(tmp_path)
    assert ls("--json", "sessions") == ls("--json", "--no-cache", "sessions")  # named as this run names them


def test_an_entry_is_typed_where_that_gives_back_the_same_records_and_pickled_where_not():
    from dshctl.options import StatsOptions
    from dshctl.stats import log_stats

    result = log_stats(SAMPLES / "tour.session.v4.jsonl.zstd", StatsOptions(by="turn"))
    typed = cache_module.StatsCache._dump(result)
    assert typed[:1] == b"T"
    back = cache_module.StatsCache._load(typed)
    encode = __import__("msgspec").json.encode
    assert back.turns and encode([back.session, back.turns]) == encode([result.session, result.turns])
    assert pickle.dumps(back.samples) == pickle.dumps(result.samples)
    result.session.title = 5  # not what the record's type says: msgspec would refuse it on the way back
    kept = cache_module.StatsCache._dump(result)
    assert kept[:1] == b"\x80"
    assert cache_module.StatsCache._load(kept).session.title == 5


def test_a_typed_entry_with_a_foreign_samples_pickle_is_refused(tmp_path):
    from dshctl.options import StatsOptions
    from dshctl.stats import log_stats

    result = log_stats(SAMPLES / "tour.session.v4.jsonl.zstd", StatsOptions())
    marker = tmp_path / "pwned"
    entry = cache_module._TYPED + __import__("msgspec").msgpack.encode(
        cache_module._Entry(result.session, None, None, pickle.dumps(_Hostile(str(marker))))
    )
    with pytest.raises(pickle.UnpicklingError):
        cache_module.StatsCache._load(entry)
    assert not marker.exists()
