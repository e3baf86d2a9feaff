"""``dshctl sql`` (issue #24): DuckDB over the export's tables — over logs (a cached incremental export)
or a dataset — in four output forms; the documented example queries run as written."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dshctl.cli import app

pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def invoke(*args, env=None):
    return CliRunner().invoke(app, ["--no-color", *args], env={"NO_COLOR": "1", **(env or {})})


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))


def test_forms_json_ndjson_csv_and_table():
    query = "SELECT session_id, turns, CAST(NULL AS VARCHAR) AS missing, created_at, notes FROM sessions ORDER BY path LIMIT 3"
    rows = json.loads(invoke("sql", query, str(SAMPLES), "--json").stdout)
    assert len(rows) == 3 and rows[0]["created_at"].endswith("+00:00") and isinstance(rows[0]["notes"], list)
    lines = [json.loads(line) for line in invoke("sql", query, str(SAMPLES), "--ndjson").stdout.splitlines()]
    assert lines == rows
    table = list(csv.reader(io.StringIO(invoke("sql", query, str(SAMPLES), "--csv").stdout)))
    assert table[0] == ["session_id", "turns", "missing", "created_at", "notes"] and len(table) == 4
    assert [r[1] for r in table[1:]] == [str(r["turns"]) for r in rows]
    shown = invoke("sql", query, str(SAMPLES)).stdout
    assert "session_id" in shown and "NULL" in shown and len(shown.splitlines()) == 4  # a pipe: the header and the rows
    import dshctl.tables

    real, dshctl.tables.stdout_is_terminal = dshctl.tables.stdout_is_terminal, lambda: True
    try:
        assert "3 rows" in invoke("sql", query, str(SAMPLES), env={"COLUMNS": "200"}).stdout  # a terminal: the count too
    finally:
        dshctl.tables.stdout_is_terminal = real


def test_the_same_query_over_logs_and_over_the_dataset(tmp_path):
    dataset = tmp_path / "ds"
    assert invoke("export", str(SAMPLES), "--out", str(dataset)).exit_code == 0
    query = "SELECT model, count(*) AS calls, sum(output_tokens) AS output FROM steps GROUP BY model ORDER BY model NULLS LAST"
    over_logs = invoke("sql", query, str(SAMPLES), "--json").stdout
    over_dataset = invoke("sql", query, str(dataset), "--json").stdout
    assert json.loads(over_logs) == json.loads(over_dataset) and json.loads(over_logs)
    # a second query over the same logs reads nothing again (the cache is an incremental dataset)
    cache = next((tmp_path / "cache" / "dshctl" / "sql").iterdir())
    before = json.loads((cache / "_dshctl_dataset.json").read_text())
    invoke("sql", "SELECT 1", str(SAMPLES))
    assert json.loads((cache / "_dshctl_dataset.json").read_text())["parts"] == before["parts"]


def test_errors_are_one_line_status_2():
    log = str(SAMPLES / "tour.session.v4.jsonl")
    result = invoke("sql", "SELEC nonsense", log)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ['dshctl: error: sql: Parser Error: syntax error at or near "SELEC"']
    result = invoke("sql", "SELECT * FROM nowhere", log)
    assert result.exit_code == 2 and result.output.startswith("dshctl: error: sql: Catalog Error")
    assert invoke("sql", "SELECT 1", str(SAMPLES), "--json", "--csv").exit_code == 2
    assert "unknown time zone" in invoke("sql", "SELECT 1", str(SAMPLES), "--tz", "Mars/Olympus").output


def test_time_zone(tmp_path):
    query = "SELECT strftime(min(created_at), '%H:%M') AS t FROM sessions"
    utc = json.loads(invoke("sql", query, str(SAMPLES / "tour.session.v4.jsonl"), "--json").stdout)[0]["t"]
    tokyo = json.loads(invoke("sql", query, str(SAMPLES / "tour.session.v4.jsonl"), "--json", "--tz", "Asia/Tokyo").stdout)[0]["t"]
    assert (int(tokyo[:2]) - int(utc[:2])) % 24 == 9


def test_empty_tables_still_have_their_columns(tmp_path):
    rows = json.loads(invoke("sql", "SELECT count(*) AS n, count(DISTINCT carrier) AS c FROM images", str(SAMPLES / "torn-tail.session.v4.jsonl"), "--json").stdout)
    assert rows == [{"n": 0, "c": 0}]


def _documented_queries() -> list[str]:
    """The example queries of the README's sql section (each ``dshctl sql "…"`` block)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### `dshctl sql"):]
    section = section[: section.index("\n### ", 5)] if "\n### " in section[5:] else section
    return re.findall(r'dshctl sql "(.*?)"', section, flags=re.S)


def test_the_documented_examples_run(tmp_path):
    queries = _documented_queries()
    assert len(queries) >= 4
    for query in queries:
        result = invoke("sql", query, str(SAMPLES), "--json")
        assert result.exit_code == 0, (query, result.output)
        json.loads(result.stdout)


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_tables_fit_the_terminal_width(columns):
    query = "SELECT session_id, title, project, model, turns, steps, output_tokens, cost_total FROM sessions"
    import dshctl.tables

    real = dshctl.tables.stdout_is_terminal
    dshctl.tables.stdout_is_terminal = lambda: True  # a terminal of COLUMNS width
    try:
        result = invoke("sql", query, str(SAMPLES), env={"COLUMNS": columns})
    finally:
        dshctl.tables.stdout_is_terminal = real
    assert result.exit_code == 0
    widths = {len(line) for line in result.stdout.splitlines() if line.startswith(("┃", "│"))}
    assert widths and max(widths) <= int(columns)


def test_help_does_not_import_duckdb():
    code = "import sys; from dshctl.cli import app; import dshctl.export, dshctl.export.sql; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
