"""``--since`` / ``--until`` on validate, export and sql mean what they mean on stats and ls: the sessions whose
header ``createdAt`` the window holds (FORMAT.md's createdAt; one without a positive time is outside every
window). Each command is checked against stats over the same logs and windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke, sample

import dshctl

ROOT = sample("sessions")  # sessions created 14:13:20, 14:13:26 and 14:13:59.5 UTC on 2026-09-21
TOUR = sample("tour.session.v4.jsonl")  # 14:13:20
FORK = sample("fork-child.session.jsonl")  # 14:13:26
PATHS = [str(ROOT), str(TOUR), str(FORK)]
WINDOWS = [
    [],
    ["--since", "2026-09-21T14:13:25Z"],
    ["--until", "2026-09-21T14:13:25Z"],
    ["--since", "2026-09-21T14:13:21Z", "--until", "2026-09-21T14:13:30Z"],
    ["--since", "2026-09-22"],
]

duckdb = pytest.importorskip("duckdb", reason="export and sql need dshctl[export] (duckdb)")


def stats_paths(window: list[str]) -> set[str]:
    result = invoke("stats", "--json", "--no-cache", *window, *PATHS)
    assert result.exit_code == 0, result.output
    return {session["path"] for session in json.loads(result.stdout)["sessions"]}


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: " ".join(w) or "none")
def test_validate_keeps_the_logs_stats_keeps(window):
    wanted = stats_paths(window)
    result = invoke("validate", "--format", "json", *window, *PATHS)
    document = json.loads(result.stdout)
    assert {log["file"] for log in document["logs"]} == wanted
    if window:
        assert document["summary"]["outsideWindow"] == 5 - len(wanted)
    else:
        assert "outsideWindow" not in document["summary"]  # the document of a run without a window is unchanged
    text = invoke("validate", *window, *PATHS).stdout.splitlines()[-1]
    assert text.startswith(f"{len(wanted)} log") and (f"; {5 - len(wanted)} outside --since/--until" in text) == (len(wanted) < 5)


def test_validate_reads_a_log_outside_no_further_than_its_header(monkeypatch):
    import importlib

    V = importlib.import_module("dshctl.validate")

    seen = []
    monkeypatch.setattr(V, "validate_log", lambda ref, options=None: seen.append(ref) or V.LogReport(file=str(ref.display)))
    assert V.validate_paths([str(TOUR), str(FORK)], dshctl.ValidateOptions(since="2026-09-21T14:13:25Z")) != []
    assert [Path(ref.path).name for ref in seen] == ["fork-child.session.jsonl"]


def test_validate_still_reports_a_log_whose_header_cannot_be_read(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    result = invoke("validate", "--since", "2026-09-21", str(broken), str(TOUR))
    assert result.exit_code == 2 and "broken.jsonl" in result.stdout and "[codec/" in result.stdout


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: " ".join(w) or "none")
def test_export_and_sql_keep_the_sessions_stats_keeps(window, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    wanted = stats_paths(window)
    dataset = tmp_path / "ds"
    exported = invoke("export", "--out", str(dataset), *window, *PATHS)
    assert exported.exit_code == 0, exported.output
    assert (f"{5 - len(wanted)} log" in exported.stderr and "outside --since/--until" in exported.stderr) == (len(wanted) < 5)
    con = duckdb.connect()
    paths = {row[0] for row in con.execute(f"SELECT path FROM read_parquet('{dataset}/sessions/*.parquet')").fetchall()} \
        if list((dataset / "sessions").glob("*.parquet")) else set()
    assert paths == wanted
    query = "SELECT path FROM sessions UNION SELECT path FROM turns UNION SELECT path FROM steps"
    for over in (PATHS, [str(tmp_path / "all")]):
        if over != PATHS:  # a dataset of every session, filtered by sql itself
            assert invoke("export", "--out", over[0], *PATHS).exit_code == 0
        rows = invoke("sql", "--json", *window, query, *over)
        assert rows.exit_code == 0, rows.output
        assert {row["path"] for row in json.loads(rows.stdout)} == wanted, over
    traces = tmp_path / "t.jsonl"
    assert invoke("export", "--format", "otlp", "--out", str(traces), *window, *PATHS).exit_code == 0
    assert len(traces.read_text().splitlines()) == len(wanted)  # one TracesData line per session


def test_a_window_keeps_what_an_earlier_export_wrote(tmp_path):
    dataset = tmp_path / "ds"
    assert invoke("export", "--out", str(dataset), str(ROOT)).exit_code == 0
    again = invoke("export", "--out", str(dataset), "--since", "2026-09-21T14:13:50Z", str(ROOT))
    assert again.exit_code == 0 and "0 logs read, 1 unchanged" in again.stderr and "2 logs outside" in again.stderr
    assert "sessions 3" in again.stderr


def test_otlp_from_standard_input_outside_the_window(tmp_path):
    out = tmp_path / "t.jsonl"
    result = invoke("export", "--format", "otlp", "--out", str(out), "--since", "2026-09-22", "-", input=TOUR.read_bytes())
    assert result.exit_code == 0 and out.read_text() == "" and "1 log outside --since/--until" in result.stderr
    inside = invoke("export", "--format", "otlp", "--out", str(tmp_path / "u.jsonl"), "--until", "2026-09-22", "-", input=TOUR.read_bytes())
    assert inside.exit_code == 0 and (tmp_path / "u.jsonl").read_text().count("\n") == 1


def test_the_library_takes_the_window_too():
    assert len(dshctl.validate(PATHS, since="2026-09-21T14:13:25Z").reports) == 3
    with pytest.raises(dshctl.UsageError, match="not after --since"):
        dshctl.ValidateOptions(since="2026-09-22", until="2026-09-21")
    with pytest.raises(dshctl.UsageError, match="--since"):
        dshctl.SqlOptions(since="soon")


def test_validate_applies_the_window_to_a_zip_on_standard_input(tmp_path):
    """A ZIP piped in is held whole, so its members' headers can be read before validating, as stats does."""
    from test_zip_exports import web_export

    export = web_export(tmp_path)  # both members created on 2026-09-21
    piped = invoke("validate", "--format", "json", "--since", "2099-01-01", "-", input=export.read_bytes())
    document = json.loads(piped.stdout)
    assert document["logs"] == [] and document["summary"]["outsideWindow"] == 2, piped.output
    assert "2 outside --since/--until" in invoke("validate", "--since", "2099-01-01", "-", input=export.read_bytes()).stdout
    stats = invoke("stats", "--json", "--no-cache", "--since", "2099-01-01", "-", input=export.read_bytes())
    assert json.loads(stats.stdout)["sessions"] == []
    kept = json.loads(invoke("validate", "--format", "json", "--until", "2099-01-01", "-", input=export.read_bytes()).stdout)
    assert len(kept["logs"]) == 2 and kept["summary"]["outsideWindow"] == 0


def test_the_library_counts_the_logs_validate_leaves_out():
    """``ValidateResult.outside`` is what the command prints as ``summary.outsideWindow``."""
    for window in WINDOWS[1:]:
        options = dict(zip(("since" if w == "--since" else "until" for w in window[::2]), window[1::2]))
        result = dshctl.validate(PATHS, dshctl.ValidateOptions(**options))
        document = json.loads(invoke("validate", "--format", "json", *window, *PATHS).stdout)
        assert result.outside == document["summary"]["outsideWindow"] and len(result.reports) == 5 - result.outside
    assert dshctl.validate(PATHS).outside == 0


def test_a_re_export_with_a_window_writes_the_window_alone(tmp_path, monkeypatch):
    """A re-export (here: another price table) rewrites every row; with --since / --until it writes the
    sessions inside the window only: those outside are neither read nor kept (the man page's export)."""
    import importlib

    P = importlib.import_module("dshctl.export.parquet")
    dataset = tmp_path / "ds"
    assert invoke("export", "--out", str(dataset), str(ROOT), str(TOUR)).exit_code == 0
    read = []
    real = P.reader_for
    monkeypatch.setattr(P, "reader_for", lambda spool, prices, partition_by, refs: read.extend(r.location for r in refs)
                        or real(spool, prices, partition_by, refs))
    again = invoke("export", "--out", str(dataset), "--no-cost", "--since", "2026-09-21T14:13:50Z", str(ROOT))
    assert again.exit_code == 0, again.output
    assert len(read) == 1 and "1 log read" in again.stderr and "3 logs outside --since/--until" in again.stderr, again.stderr
    con = duckdb.connect()
    created = con.execute(f"SELECT count(*), min(path) FROM read_parquet('{dataset}/sessions/*.parquet')").fetchone()
    assert created == (1, read[0])  # the tour given before, outside the window, is gone too
    manifest = json.loads((dataset / "_dshctl_dataset.json").read_text())
    assert list(manifest["logs"]) == read
