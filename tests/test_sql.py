"""``dshctl sql`` (issue #24): DuckDB over the export's tables — over logs (a cached incremental export)
or a dataset — in four output forms; the documented example queries run as written."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import REPO as ROOT, SAMPLES, invoke

pytest.importorskip("duckdb")


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
    assert "session_id" in shown and len(shown.splitlines()) == 4  # a pipe: the header and the rows
    assert all(line.split()[2] == "-" for line in shown.splitlines()[1:]) and "NULL" not in shown  # TABLES' one placeholder
    import dshctl.tables

    real, dshctl.tables.stdout_is_terminal = dshctl.tables.stdout_is_terminal, lambda: True
    try:
        assert "3 rows" in invoke("sql", query, str(SAMPLES), env={"COLUMNS": "200"}).stdout  # a terminal: the count too
    finally:
        dshctl.tables.stdout_is_terminal = real


def test_tsv_cells_follow_the_rules_every_tsv_form_shares():
    """As TABLES says of every --tsv: a cell without a value is empty (never NULL), times ISO 8601 UTC with
    milliseconds (…Z, as stats and ls write them), numbers as JavaScript prints them, text on one line."""
    query = ("SELECT 1 AS a, NULL AS b, TIMESTAMPTZ '2026-09-21 14:13:59.5+00' AS t, TIMESTAMPTZ '2026-09-21 16:13:59.123456+02' AS u, "
             "TIMESTAMP '2026-09-21 14:13:59' AS naive, 2.0::DOUBLE AS g, 'nan'::DOUBLE AS x, 1.50::DECIMAL(10,2) AS d, true AS yes, "
             "[1, 2] AS l, DATE '2026-01-02' AS day, 'a' || chr(9) || 'b' AS tab")
    shown = invoke("sql", query, str(SAMPLES), "--tsv", "--tz", "Europe/Berlin")
    assert shown.exit_code == 0, shown.output
    header, row = shown.stdout.splitlines()
    assert header.split("\t") == ["a", "b", "t", "u", "naive", "g", "x", "d", "yes", "l", "day", "tab"]
    assert row.split("\t") == ["1", "", "2026-09-21T14:13:59.500Z", "2026-09-21T14:13:59.123456Z", "2026-09-21T14:13:59.000",
                                "2", "", "1.50", "true", "[1,2]", "2026-01-02", "a\u2409b"]
    stored = invoke("sql", "SELECT created_at FROM sessions ORDER BY path LIMIT 1", str(SAMPLES), "--tsv").stdout.splitlines()[1]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stored)  # a stored time: milliseconds, as stats --tsv
    plain = invoke("sql", query, str(SAMPLES), "--plain").stdout
    assert plain.splitlines()[1].split()[1] == "-" and "None" not in plain  # no value: TABLES' placeholder; NaN is no "None"
    assert "None" not in invoke("sql", query, str(SAMPLES), "--csv").stdout


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
    utc = json.loads(invoke("sql", query, str(SAMPLES / "tour.session.v4.jsonl"), "--json", "--tz", "UTC").stdout)[0]["t"]
    tokyo = json.loads(invoke("sql", query, str(SAMPLES / "tour.session.v4.jsonl"), "--json", "--tz", "Asia/Tokyo").stdout)[0]["t"]
    assert (int(tokyo[:2]) - int(utc[:2])) % 24 == 9


def test_empty_tables_still_have_their_columns(tmp_path):
    rows = json.loads(invoke("sql", "SELECT count(*) AS n, count(DISTINCT carrier) AS c FROM images", str(SAMPLES / "torn-tail.session.v4.jsonl"), "--json").stdout)
    assert rows == [{"n": 0, "c": 0}]


def _documented_queries(where: str) -> list[str]:
    """The example queries (each ``dshctl sql "…"``) of the man page's sql section, the guide's section on
    a team's sessions, or the README."""
    if where == "man":
        from dshctl.manpage import plain

        text = plain((ROOT / "man" / "dshctl.1").read_text(encoding="utf-8"))
        start = text.index("dshctl sql QUERY [PATH...] Run a SQL query")
        section = text[start:text.index("READING RULES", start)]
    else:
        text = (ROOT / where).read_text(encoding="utf-8")
        section = text[text.index("## A team's sessions"):] if where == "docs/guide.md" else text
    return re.findall(r'dshctl sql "(.*?)"', section, flags=re.S)


@pytest.mark.parametrize("where, least", [("man", 4), ("docs/guide.md", 4), ("README.md", 1)])
def test_the_documented_examples_run(where, least):
    queries = _documented_queries(where)
    assert len(queries) >= least
    for query in queries:
        result = invoke("sql", query, str(SAMPLES), "--json")
        assert result.exit_code == 0, (query, result.output)
        json.loads(result.stdout)


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_tables_fit_the_terminal_width(columns):
    query = "SELECT session_id, title, project, model, turns, steps, output_tokens, cost_total FROM sessions"
    result = invoke("sql", query, str(SAMPLES), env={"COLUMNS": columns}, terminal=True)  # a terminal of COLUMNS width
    assert result.exit_code == 0
    widths = {len(line) for line in result.stdout.splitlines() if line.startswith(("┃", "│"))}
    assert widths and max(widths) <= int(columns)


def test_help_does_not_import_duckdb():
    code = "import sys; from dshctl.cli import app; import dshctl.export, dshctl.export.sql; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- wave-1 review: views over any datasets, terminal-safe CSV, one --tz, a bounded cache, the usage -------------

from stats_logs import rollup_session, rollup_step  # noqa: E402
from test_stats_rollups import T1, _logs  # noqa: E402


def _dataset(tmp_path, name, *extra, logs=None):
    out = tmp_path / name
    result = invoke("export", *(map(str, logs or [SAMPLES / "tour.session.v4.jsonl"])), "--out", str(out), *extra)
    assert result.exit_code == 0, result.output
    return out


def test_datasets_partitioned_differently_and_logs_read_together(tmp_path):
    by_day = _dataset(tmp_path, "by-day", "--partition-by", "day")
    by_project = _dataset(tmp_path, "by-project", "--partition-by", "project", logs=[SAMPLES / "cwd-change.session.v4.jsonl"])
    plain = _dataset(tmp_path, "plain", logs=[SAMPLES / "fork-child.session.v4.jsonl"])
    log = SAMPLES / "torn-tail.session.v4.jsonl"
    query = "SELECT session_id, project, day FROM sessions ORDER BY path"
    result = invoke("sql", query, str(by_day), str(by_project), str(plain), str(log), "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 4 and sum(row["day"] is not None for row in rows) == 1
    projects = {row["session_id"]: row["project"] for row in rows}
    expected = {s["id"]: s["cwd"] for s in json.loads(invoke("stats", "--json", str(SAMPLES / "tour.session.v4.jsonl"),
                str(SAMPLES / "cwd-change.session.v4.jsonl"), str(SAMPLES / "fork-child.session.v4.jsonl"), str(log)).stdout)["sessions"]}
    assert projects == expected


def test_a_key_value_directory_above_a_dataset_is_no_column(tmp_path):
    """DuckDB reads every k=v directory of a path as a Hive column, and one named like a column hides the
    file's own: a dataset under /…/model=x/ keeps its model column and gains none."""
    for extra in ((), ("--partition-by", "day")):
        out = _dataset(tmp_path / f"model=x{len(extra)}" / "run=1", "ds", *extra)
        columns = [row["column_name"] for row in json.loads(invoke("sql", "DESCRIBE sessions", str(out), "--json").stdout)]
        assert "run" not in columns and columns.count("model") == 1
        models = json.loads(invoke("sql", "SELECT DISTINCT model FROM steps", str(out), "--json").stdout)
        assert [row["model"] for row in models] == ["deepseek-official/deepseek-v4-flash"]
        assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("dshctl-sql-*/d0"))  # the alias went with the query


def test_partitions_are_pruned_in_sql_as_in_duckdb(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, text in _logs().items():
        (logs / f"{name}.session.v4.jsonl").write_text(text)
    out = _dataset(tmp_path, "ds", "--partition-by", "day", logs=[logs])
    days = sorted(p.name for p in (out / "steps").iterdir())
    wanted = days[0].split("=", 1)[1]
    query = f"SELECT count(*) AS n FROM steps WHERE day = DATE '{wanted}'"
    expected = json.loads(invoke("sql", query, str(out), "--json").stdout)[0]["n"]
    for other in days[1:]:
        for file in (out / "steps" / other).iterdir():
            file.write_bytes(b"not parquet")
    assert json.loads(invoke("sql", query, str(out), "--json").stdout) == [{"n": expected}] and expected > 0
    broken = invoke("sql", "SELECT count(*) FROM steps", str(out))
    assert broken.exit_code == 2 and broken.output.startswith("dshctl: error: sql: ") and len(broken.output.strip().splitlines()) == 1


def test_a_dataset_missing_a_part_is_one_line_status_2(tmp_path):
    out = _dataset(tmp_path, "ds")
    part = next((out / "turns").glob("*.parquet"))
    part.unlink()
    result = invoke("sql", "SELECT count(*) FROM sessions", str(out))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"dshctl: error: {out}: turns/{part.name}, a part file its manifest names, "
                                                  "is missing (dshctl export into the dataset again rewrites it)"]


def test_csv_shows_control_characters_as_pictures_on_a_terminal_only(tmp_path):
    import shutil

    log = tmp_path / "h.session.v4.jsonl"
    log.write_text(rollup_session("h", created=T1, cwd="/w/\x1b]0;PWNED\x07\x1b[2J", turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]]))
    query = "SELECT project AS \"p\x1b[31m\" FROM sessions"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    piped = subprocess.run([sys.executable, "-m", "dshctl", "sql", query, str(log), "--csv"], capture_output=True, env=env)
    assert piped.stdout.decode().splitlines() == ["p\x1b[31m", "/w/\x1b]0;PWNED\x07\x1b[2J"]
    assert shutil.which("script"), "util-linux script(1) runs the command on a terminal"
    command = " ".join(map(shlex_quote, [sys.executable, "-m", "dshctl", "sql", query, str(log), "--csv"]))
    on_terminal = subprocess.run(["script", "-qc", command, "/dev/null"], capture_output=True, env=env, cwd=ROOT)
    assert b"\x1b" not in on_terminal.stdout.replace(b"\r\n", b"\n")
    assert "/w/␛]0;PWNED␇␛[2J".encode() in on_terminal.stdout and "p␛[31m".encode() in on_terminal.stdout


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def test_json_escapes_del_and_c1_controls(tmp_path):
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text(rollup_session("h", created=T1, cwd="/w/\x7f\x9b2J", turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]]))
    for form in ("--json", "--ndjson"):
        out = invoke("sql", "SELECT project FROM sessions", str(log), form).stdout_bytes
        assert b"\x7f" not in out and b"\xc2\x9b" not in out and b"\\u007f\\u009b2J" in out
        assert json.loads(out.decode().splitlines()[0].lstrip("[").rstrip("]"))["project"] == "/w/\x7f\x9b2J"


def test_tz_is_one_declaration_checked_before_any_work(tmp_path):
    from dshctl.errors import UsageError
    from dshctl.options import SqlOptions, StatsOptions

    sql, stats = SqlOptions.fields["tz"], StatsOptions.fields["tz"]
    assert (sql.flags, sql.default, sql.metavar) == (stats.flags, stats.default, stats.metavar)
    with pytest.raises(UsageError, match="unknown time zone"):
        SqlOptions(tz="Mars/Olympus")
    result = invoke("sql", "SELECT 1", str(SAMPLES / "tour.session.v4.jsonl"), "--tz", "Mars/Olympus")
    assert result.exit_code == 2 and result.output.strip().splitlines() == [
        "dshctl: error: --tz: unknown time zone 'Mars/Olympus' (an IANA name such as Europe/Berlin, America/New_York or UTC)"]
    assert not (tmp_path / "cache").exists()  # refused before anything was exported


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/Los_Angeles"])
def test_sql_days_are_stats_days_in_the_local_zone_by_default(tmp_path, zone):
    """``date_trunc('day', created_at)`` puts a session on the day ``stats --by day`` shows: both follow
    the local zone unless --tz (here TZ names it), as DuckDB itself does over the exported Parquet."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(8):  # around midnight UTC, and around midnight in both zones
        created = T1 + i * 3 * 3_600_000
        (logs / f"s{i}.session.v4.jsonl").write_text(rollup_session(f"s{i}", created=created, turns=[[rollup_step(start=created + 10, first=created + 20, end=created + 30)]]))
    env = {"TZ": zone}
    days = json.loads(invoke("sql", "SELECT strftime(date_trunc('day', created_at), '%Y-%m-%d') AS day, count(*) AS n "
                                    "FROM sessions GROUP BY 1 ORDER BY 1", str(logs), "--json", env=env).stdout)
    stats = invoke("stats", str(logs), "--by", "day", "--json", env=env)
    assert [(row["day"], row["n"]) for row in days] == [(row["key"], row["sessions"]) for row in json.loads(stats.stdout)["rows"]]
    assert len(days) >= 2
    query = "SELECT strftime(date_trunc('day', created_at), '%Y-%m-%d') AS day, count(*) AS n FROM sessions GROUP BY 1 ORDER BY 1"
    utc = json.loads(invoke("sql", query, str(logs), "--json", "--tz", "UTC", env=env).stdout)
    stats = invoke("stats", str(logs), "--by", "day", "--json", "--tz", "UTC", env=env)
    assert [(row["day"], row["n"]) for row in utc] == [(row["key"], row["sessions"]) for row in json.loads(stats.stdout)["rows"]] != days


def test_the_cache_keeps_the_most_recently_queried_datasets(tmp_path, monkeypatch):
    import dshctl
    from dshctl.export import sql as S

    monkeypatch.setattr(S, "CACHE_KEEP", 2)
    logs = []
    for i in range(4):
        path = tmp_path / f"s{i}.session.v4.jsonl"
        path.write_text(rollup_session(f"s{i}", created=T1, turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]]))
        logs.append(path)
        assert dshctl.sql("SELECT session_id FROM sessions", path).rows == [(f"s{i}",)]
    cached = sorted(S.cache_root().iterdir())
    assert len(cached) == 2
    kept = {json.loads((entry / "_dshctl_dataset.json").read_text())["logs"].popitem()[0] for entry in cached}
    assert kept == {str(logs[2]), str(logs[3])}


def test_usage_and_man_page_name_every_sql_option():
    from dshctl.options import SqlOptions

    usage = invoke("sql", "--help").output
    assert "Usage: dshctl sql [OPTIONS] QUERY [PATH]..." in usage
    man = (ROOT / "man" / "dshctl.1").read_text()
    section = man[man.index('.SS "dshctl sql'):]
    section = section[: section.index("\n.SH ")]
    for declared in SqlOptions.fields.values():
        for flag in declared.flags:
            if flag in ("--color", "--no-color", "--quiet"):
                continue  # every command's (--color, --no-color: the group's too): described once, under GLOBAL OPTIONS
            assert flag.replace("-", "\\-") in section, flag


def _stats_rows(path: Path, by: str) -> dict:
    result = invoke("stats", "--json", "-j", "1", "--by", by, str(path))
    assert result.exit_code in (0, 1), result.output
    return {row["key"]: row for row in json.loads(result.stdout, parse_float=Decimal)["rows"]}


def _iso_week(value: str) -> str:
    year, week, _ = _dt.date.fromisoformat(value[:10]).isocalendar()
    return f"{year}-W{week:02d}"


def _sums(rows: list[dict], key, column: str) -> dict:
    out: dict = {}
    for row in rows:
        out[key(row)] = out.get(key(row), 0) + row[column]
    return out


@pytest.mark.parametrize("where", ["man", "docs/guide.md", "README.md"])
@pytest.mark.parametrize("logs", [SAMPLES, SAMPLES / "sessions"], ids=["samples", "sessions-root"])
def test_the_documented_examples_count_as_stats_does(tmp_path, where, logs):
    """Every documented query's figures are stats' over the same logs: samples hold one session in several
    logs (a join on session_id multiplied each step) and forks whose inherited prefix stats counts once."""
    dataset = tmp_path / "ds"
    assert invoke("export", str(logs), "--out", str(dataset)).exit_code == 0
    project = lambda row: row.get("project") or "(unknown)"  # noqa: E731
    checked = 0
    for query in _documented_queries(where):
        result = invoke("sql", query, str(dataset), "--json")
        assert result.exit_code == 0, (query, result.output)
        rows = json.loads(result.stdout, parse_float=Decimal)
        assert rows, query
        columns = set(rows[0])
        if "cost" in columns:
            by_project = _stats_rows(logs, "project")
            assert _sums(rows, project, "cost") == {k: r["costs"]["total"] for k, r in by_project.items()}, query
            if "sessions" in columns:
                assert _sums(rows, project, "sessions") == {k: r["sessions"] for k, r in by_project.items()}, query
            if "week" in columns:
                by_week = _stats_rows(logs, "week")
                assert _sums(rows, lambda row: _iso_week(row["week"]), "cost") == {
                    k: r["costs"]["total"] for k, r in by_week.items()}, query
        elif "mean_ttft_ms" in columns:
            by_model = _stats_rows(logs, "model")
            assert {row["model"]: row["calls"] for row in rows} == {k: r["ttftSteps"] for k, r in by_model.items()}, query
            for row in rows:
                assert float(row["mean_ttft_ms"]) == pytest.approx(float(by_model[row["model"]]["meanTtftMs"])), query
        elif "failures" in columns:
            by_tool = _stats_rows(logs, "tool")
            assert {row["name"]: (row["calls"], row["failures"]) for row in rows} == {
                k: (r["calls"], r["failures"]) for k, r in by_tool.items()}, query
        else:
            continue
        checked += 1
    assert checked == (1 if where == "README.md" else 3)


def test_a_decimal_zero_is_printed_with_its_scale_never_as_an_exponent(tmp_path):
    dataset = tmp_path / "ds"
    assert invoke("export", str(SAMPLES / "tour.session.v4.jsonl"), "--out", str(dataset)).exit_code == 0
    query = "SELECT turn, cost_total, [cost_total] AS listed, -0.000000001::DECIMAL(38,9) AS tiny FROM turns WHERE turn = 4"
    table = invoke("sql", query, str(dataset)).stdout
    assert "0.000000000" in table and "E-" not in table
    assert invoke("sql", query, str(dataset), "--csv").stdout.splitlines()[1] == "4,0.000000000,[0.000000000],-0.000000001"
    text = invoke("sql", query, str(dataset), "--json").stdout
    assert text == '[{"turn":4,"cost_total":0.000000000,"listed":[0.000000000],"tiny":-0.000000001}]\n'
    assert json.loads(text, parse_float=Decimal)[0]["tiny"] == Decimal("-0.000000001")


def test_standard_input_is_refused_naming_sql(tmp_path):
    result = invoke("sql", "SELECT 1", "-", input=(SAMPLES / "tour.session.v4.jsonl").read_text())
    assert result.exit_code == 2
    assert "sql cannot read standard input" in result.output and "export" not in result.output


def test_logs_all_unreadable_are_empty_tables_and_status_1(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("x", "y"):
        (logs / f"{name}.session.v4.jsonl").write_text("not a dsh log\n")
    result = invoke("sql", "SELECT count(*) AS n FROM sessions", str(logs), "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout) == [{"n": 0}]
