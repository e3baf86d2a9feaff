"""``dshctl export --format parquet`` (issue #24): the tables against ``stats --json``, the schema read back
by DuckDB, partitions, incremental runs, refusals.

Every check reads the Parquet files back with DuckDB, the way a user would (``read_parquet``)."""

from __future__ import annotations

import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb")

from stats_logs import log_lines, rollup_session, rollup_step  # noqa: E402
from conftest import CORPUS, REPO as ROOT, SAMPLES, invoke  # noqa: E402
from test_stats_rollups import PRICES, T1, _logs  # noqa: E402

TABLES = ("sessions", "turns", "steps", "tool_calls", "images")
SAMPLE_PRICES = PRICES + """
[models."deepseek-official/deepseek-v4-flash"]
currency = "USD"
input = 0.28
cacheRead = 0.028
cacheWrite = 0.28
output = 0.42
"""


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user price file of the machine's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-dsh-home"))


@pytest.fixture()
def prices(tmp_path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(SAMPLE_PRICES)
    return path


def export(*paths, out, extra=(), status=0):
    result = invoke("export", *map(str, paths), "--out", str(out), *extra)
    assert result.exit_code == status, result.output
    return result


def connect(dataset: Path):
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    for table in TABLES:
        files = list(dataset.glob(f"{table}/**/*.parquet"))
        if files:
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{dataset}/{table}/**/*.parquet', hive_partitioning=true)")
    return con


def stats_json(*paths, by="session", extra=()):
    result = invoke("stats", "--json", "-j", "1", "--by", by, *map(str, paths), *extra)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _logs_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.zstd")))


def _readable(paths):
    out = []
    for path in paths:
        if invoke("stats", "--json", str(path)).exit_code == 0:
            out.append(path)
    return out


@pytest.fixture(scope="module")
def many_root(tmp_path_factory) -> Path:
    """40 sessions in dsh's layout: 4 projects, 5 days, two models, forks of some of them."""
    root = tmp_path_factory.mktemp("root") / "sessions"
    texts = {}
    for i in range(40):
        created = T1 + i * 7 * 3_600_000
        steps = [
            rollup_step(model="p/m" if i % 3 else "q/n", start=created + 1000, first=created + 1100 + i, end=created + 1600 + i,
                        tokens=(100 + i, 10 + i, 50 * (i % 4), 0), tools=[("read", 20 + i, i % 5 == 0)]),
            rollup_step(model="p/m", start=created + 3000, first=created + 3300, end=created + 4000, tokens=(7, 3, 0, 0)),
        ]
        sid = f"session-{i:04d}"
        parent = f"session-{i - 1:04d}" if i % 10 == 9 else None
        texts[sid] = rollup_session(sid, created=created, cwd=f"/home/u/p{i % 4}", turns=[steps],
                                    parent=parent, inherited=log_lines(texts[parent]) if parent else None)
        folder = root / f"--home-u-p{i % 4}--" / sid
        folder.mkdir(parents=True)
        (folder / "session.v4.jsonl").write_text(texts[sid])
    return root


# -- totals against stats ----------------------------------------------------------------------------------

BUCKETS = ("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "billed_input_tokens", "output_tokens")
STEP_SUMS = BUCKETS + ("llm_ms", "ttft_ms", "decode_ms", "tool_ms", "tool_calls", "attempts", "retries", "reasoning_tokens")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _check_against_stats(dataset: Path, paths: list, prices: Path) -> None:
    con = connect(dataset)
    sessions = stats_json(*paths, extra=("--prices", str(prices)))["sessions"]
    by_path = {s["path"]: s for s in sessions}
    rows = con.execute("SELECT * FROM sessions").fetchall()
    assert len(rows) == len(sessions)
    columns = [d[0] for d in con.description]
    for row in rows:
        got = dict(zip(columns, row))
        record = by_path[got["path"]]
        for key in ("turns", "steps", *BUCKETS, "in_plus_out_tokens", "llm_ms", "tool_ms", "ttft_ms", "ttft_steps"):
            assert got[key] == record[_camel(key)], (got["path"], key)
        assert got["session_id"] == record["id"] and got["parent_session_id"] == record["parentSession"]
        costs = record.get("costs")
        if costs is None:
            assert got["cost_total"] is None
        else:
            assert got["cost_total"] == Decimal(str(costs["total"])) and got["cost_currency"] == costs["currency"]
    # every step and tool call adds up to its session exactly
    step_sums = con.execute(
        "SELECT path, count(*) FILTER (WHERE ended), " + ", ".join(f"sum({c})" for c in STEP_SUMS)
        + ", sum(cost_total) FROM steps GROUP BY path").fetchall()
    for path, ended, *sums in step_sums:
        record = by_path[path]
        assert ended == record["steps"], path
        for key, value in zip(STEP_SUMS, sums):
            wire = {"tool_calls": ("dshctl", "toolCalls"), "attempts": ("dshctl", "attempts"), "retries": ("dshctl", "retries")}.get(key)
            expected = record[wire[0]][wire[1]] if wire else record[_camel(key)]
            assert (value or 0) == (expected or 0), (path, key)
        if record.get("costs") and record["costs"]["currency"]:
            assert sums[-1] == Decimal(str(record["costs"]["total"])), path
    calls = dict(con.execute("SELECT path, count(*) FROM tool_calls GROUP BY path").fetchall())
    for path, record in by_path.items():
        assert calls.get(path, 0) == record["dshctl"]["toolCalls"], path
    tool_ms = dict(con.execute("SELECT path, sum(tool_ms) FROM tool_calls GROUP BY path").fetchall())
    for path, value in tool_ms.items():
        assert (value or 0) == (by_path[path]["toolMs"] or 0), path


def test_sample_and_corpus_tables_add_up_to_stats(tmp_path, prices):
    paths = _readable(_logs_of(SAMPLES) + (_logs_of(CORPUS) if CORPUS.is_dir() else []))
    assert len(paths) > (40 if CORPUS.is_dir() else 15)
    dataset = tmp_path / "ds"
    export(*paths, out=dataset, extra=("--prices", str(prices), "-j", "1"))
    _check_against_stats(dataset, paths, prices)


def test_steps_rows_add_up_to_stats_by_step(tmp_path, prices):
    paths = _readable(_logs_of(SAMPLES) + (_logs_of(CORPUS) if CORPUS.is_dir() else []))
    dataset = tmp_path / "ds"
    export(*paths, out=dataset, extra=("--prices", str(prices)))
    con = connect(dataset)
    steps = stats_json(*paths, by="step", extra=("--prices", str(prices)))["steps"]
    got = {
        (path, turn, step): rest
        for path, turn, step, *rest in con.execute(
            "SELECT path, turn, step, count(*) FILTER (WHERE ended), " + ", ".join(f"sum({c})" for c in STEP_SUMS[:-1])
            + ", sum(dshctl_failed_attempts), sum(dshctl_backoff_ms) FROM steps GROUP BY ALL").fetchall()
    }
    assert steps
    for row in steps:
        values = got[(row["path"], row["turn"], row["step"])]
        assert values[0] == int(row["ended"])
        for key, value in zip(STEP_SUMS[:-1], values[1:]):
            assert (value or 0) == (row[_camel(key)] or 0), (row["path"], row["turn"], row["step"], key)
        assert values[-2] == row["dshctl"]["failedAttempts"]


def test_many_session_root_and_rollups_equal_stats_by(tmp_path, many_root, prices):
    dataset = tmp_path / "ds"
    export(many_root, out=dataset, extra=("--prices", str(prices), "-j", "2"))
    paths = _logs_of(many_root)
    _check_against_stats(dataset, paths, prices)
    con = connect(dataset)
    # an inherited prefix counts once: in its parent when the parent is among the sessions
    counted = "(NOT s.inherited OR p.session_id IS NULL)"
    join = "FROM steps s JOIN sessions x USING (session_id) LEFT JOIN sessions p ON p.session_id = x.parent_session_id"
    day = {k: v for k, *v in con.execute(
        f"SELECT strftime(x.created_at, '%Y-%m-%d'), count(DISTINCT session_id), count(*) FILTER (WHERE s.ended AND {counted}), "
        f"sum(s.output_tokens) FILTER (WHERE {counted}), sum(s.uncached_input_tokens) FILTER (WHERE {counted}), "
        f"sum(s.llm_ms) FILTER (WHERE {counted}), sum(s.cost_total) FILTER (WHERE {counted}) {join} GROUP BY 1").fetchall()}
    doc = stats_json(many_root, by="day", extra=("--tz", "UTC", "--prices", str(prices)))
    assert set(day) == {row["key"] for row in doc["rows"]}
    for row in doc["rows"]:
        sessions, steps, output, uncached, llm, cost = day[row["key"]]
        assert (sessions, steps, output, uncached, llm) == (row["sessions"], row["steps"], row["outputTokens"], row["uncachedInputTokens"], row["llmMs"])
        assert cost == Decimal(str(row["costs"]["total"]))
    model = {k: v for k, *v in con.execute(
        f"SELECT s.model, count(*) FILTER (WHERE s.ended AND {counted}), sum(s.output_tokens) FILTER (WHERE {counted}), "
        f"sum(s.tool_ms) FILTER (WHERE {counted}), count(*) FILTER (WHERE s.attempt IS NOT NULL AND {counted}) {join} GROUP BY 1").fetchall()}
    doc = stats_json(many_root, by="model", extra=("--prices", str(prices)))
    for row in doc["rows"]:
        assert tuple(model[row["key"]]) == (row["steps"], row["outputTokens"], row["toolMs"], row["settlements"]), row["key"]
    project = {k: v for k, *v in con.execute(
        f"SELECT x.project, count(DISTINCT session_id), sum(s.billed_input_tokens) FILTER (WHERE {counted}) {join} GROUP BY 1").fetchall()}
    doc = stats_json(many_root, by="project", extra=("--prices", str(prices)))
    for row in doc["rows"]:
        assert tuple(project[row["key"]]) == (row["sessions"], row["billedInputTokens"]), row["key"]


# -- schema ----------------------------------------------------------------------------------------------


def test_schema_types_timestamps_nullability_and_metadata(tmp_path, prices):
    from dshctl.export.schema import SCHEMA, TABLES as SPEC

    dataset = tmp_path / "ds"
    export(SAMPLES, out=dataset, extra=("--prices", str(prices)))
    con = connect(dataset)
    for name, table in SPEC.items():
        described = {row[0]: row[1].replace('"', "") for row in con.execute(f"DESCRIBE {name}").fetchall()}
        expected = {c.name: c.type.replace("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE") for c in table.columns}
        assert described == expected, name
        for column in table.columns:
            if not column.nullable:
                nulls = con.execute(f'SELECT count(*) FROM {name} WHERE "{column.name}" IS NULL').fetchone()[0]
                assert nulls == 0, (name, column.name)
        meta = dict(con.execute(f"SELECT key::VARCHAR, value::VARCHAR FROM parquet_kv_metadata('{dataset}/{name}/**/*.parquet')").fetchall())
        assert meta["dshctl.schema"] == SCHEMA and meta["dshctl.table"] == name
    for name in TABLES:  # every row names its session and log
        assert con.execute(f"SELECT count(*) FROM {name} WHERE session_id IS NULL OR path = ''").fetchone()[0] == 0, name
    logical = dict(con.execute(
        f"SELECT name, logical_type FROM parquet_schema('{dataset}/steps/**/*.parquet') WHERE name IN ('settled_at', 'cost_total')").fetchall())
    assert "isAdjustedToUTC=1" in logical["settled_at"] and "MICROS" in logical["settled_at"]
    assert "scale=9" in logical["cost_total"]
    # a time is the log's epoch milliseconds, exactly
    events = [json.loads(line) for line in invoke("cat", str(SAMPLES / "tour.session.v4.jsonl")).stdout.splitlines()]
    first = next(event for event in events if event.get("type") == "turn/start")
    start = con.execute("SELECT epoch_ms(min(start_time)) FROM turns WHERE path LIKE '%tour.session.v4.jsonl'").fetchone()[0]
    assert start == first["time"]


def test_docs_schema_page_is_the_generated_one():
    from dshctl.export.schema import markdown

    assert (ROOT / "docs" / "schema.md").read_text() == markdown(), "regenerate: python -m dshctl.export.schema > docs/schema.md"


def _widened(old: str, new: str) -> bool:
    """A type a later schema may give a column instead: the same, or with DECIMALs of more digits (same
    scale), inside a STRUCT too."""
    import re

    decimal = re.compile(r"DECIMAL\((\d+),(\d+)\)")
    if decimal.sub(r"DECIMAL(\2)", old) != decimal.sub(r"DECIMAL(\2)", new):
        return False
    return all(int(b[0]) >= int(a[0]) for a, b in zip(decimal.findall(old), decimal.findall(new)))


def test_columns_are_only_ever_added_or_widened():
    """Every column of every schema version (tests/export_schema_v*.txt) is still there, with its type or
    a wider decimal; the current version's list is the current schema."""
    from dshctl.export.schema import SCHEMA_VERSION, TABLES as SPEC

    now = {f"{t.name}.{c.name}": c.type for t in SPEC.values() for c in t.columns}
    versions = sorted(ROOT.joinpath("tests").glob("export_schema_v*.txt"))
    assert [p.name for p in versions][-1] == f"export_schema_v{SCHEMA_VERSION}.txt"
    for listed in versions:
        for line in listed.read_text().splitlines():
            name, kind = line.split(" ", 1)
            assert name in now and _widened(kind, now[name]), (listed.name, line, now.get(name))
    assert versions[-1].read_text().splitlines() == [f"{name} {kind}" for name, kind in now.items()]


# -- partitions -------------------------------------------------------------------------------------------


def test_partition_by_day_writes_hive_directories_and_prunes(tmp_path, many_root):
    dataset = tmp_path / "ds"
    export(many_root, out=dataset, extra=("--partition-by", "day"))
    days = sorted(p.name for p in (dataset / "steps").iterdir())
    assert days[0].startswith("day=2026-03-0") and len(days) > 3
    con = connect(dataset)
    wanted = days[0].split("=", 1)[1]  # the view's schema comes from the first file: keep that one readable
    expected = con.execute(f"SELECT count(*) FROM steps WHERE day = DATE '{wanted}'").fetchone()[0]
    assert expected > 0
    for other in days:  # pruned partitions are never opened: make them unreadable
        if other != days[0]:
            for file in (dataset / "steps" / other).iterdir():
                file.write_bytes(b"not parquet")
    con = connect(dataset)
    assert con.execute(f"SELECT count(*) FROM steps WHERE day = DATE '{wanted}'").fetchone()[0] == expected
    with pytest.raises(duckdb.Error):
        con.execute("SELECT count(*) FROM steps").fetchone()


def test_partition_by_project_escapes_values_and_round_trips(tmp_path):
    cwd = "/home/o'neil/a=b/100% [x]"
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.session.v4.jsonl").write_text(rollup_session("a", created=T1, cwd=cwd, turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]]))
    (logs / "b.session.v4.jsonl").write_text(rollup_session("b", created=T1, cwd=None, turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30)]]))
    dataset = tmp_path / "ds"
    export(logs, out=dataset, extra=("--partition-by", "project"))
    names = sorted(p.name for p in (dataset / "sessions").iterdir())
    assert "project=__HIVE_DEFAULT_PARTITION__" in names
    assert "project=%2Fhome%2Fo%27neil%2Fa%3Db%2F100%25 %5Bx%5D" in names
    con = connect(dataset)
    got = dict(con.execute("SELECT session_id, project FROM sessions").fetchall())
    assert got == {"a": cwd, "b": None}
    assert "project" not in [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{dataset}/sessions/*/*.parquet', hive_partitioning=false)").fetchall()]


# -- incremental ----------------------------------------------------------------------------------------------


def _dataset_counts(dataset: Path) -> dict:
    con = connect(dataset)
    return {table: con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("sessions", "turns", "steps", "tool_calls")}


def test_incremental_unchanged_new_grown_and_pruned(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    texts = _logs()
    for name in ("s1", "s2", "s3"):
        (root / f"{name}.session.v4.jsonl").write_text(texts[name])
    dataset = tmp_path / "ds"
    first = export(root, out=dataset)
    assert "3 logs read, 0 unchanged" in first.output
    counts = _dataset_counts(dataset)
    again = export(root, out=dataset)
    assert "0 logs read, 3 unchanged" in again.output
    assert _dataset_counts(dataset) == counts
    # one new log
    (root / "s4.session.v4.jsonl").write_text(texts["s4"])
    export(root, out=dataset)
    grown = _dataset_counts(dataset)
    assert grown["sessions"] == 4
    # one grown log (a session still running): its rows are replaced, never duplicated
    s3 = root / "s3.session.v4.jsonl"
    before = s3.read_text()
    longer = rollup_session("s3", created=T1, cwd="/b", turns=[
        [rollup_step(start=T1 + 1000, first=T1 + 1500, end=T1 + 3000, tokens=(100, 10, 0, 0))],
        [rollup_step(start=T1 + 9000, first=T1 + 9500, end=T1 + 9900, tokens=(5, 5, 0, 0))],
    ])
    s3.write_text(longer)
    os.utime(s3, ns=(os.stat(s3).st_atime_ns, os.stat(s3).st_mtime_ns + 10**9))
    result = export(root, out=dataset)
    assert "1 log read, 3 unchanged" in result.output
    con = connect(dataset)
    assert con.execute("SELECT count(*) FROM sessions WHERE session_id = 's3'").fetchone()[0] == 1
    assert con.execute("SELECT turns FROM sessions WHERE session_id = 's3'").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM turns WHERE session_id = 's3'").fetchone()[0] == 2
    assert before != longer
    # a deleted log: kept without --prune (and said), gone with it
    (root / "s1.session.v4.jsonl").unlink()
    kept = export(root, out=dataset)
    assert "1 no longer on disk" in kept.output
    assert _dataset_counts(dataset)["sessions"] == 4
    export(root, out=dataset, extra=("--prune",))
    con = connect(dataset)
    assert sorted(r[0] for r in con.execute("SELECT session_id FROM sessions").fetchall()) == ["s2", "s3", "s4"]
    assert con.execute("SELECT count(*) FROM steps WHERE session_id = 's1'").fetchone()[0] == 0
    # every part file on disk is one the manifest names
    manifest = json.loads((dataset / "_dshctl_dataset.json").read_text())
    named = {str(dataset / f) for part in manifest["parts"].values() for f in part["files"].values()}
    assert {str(p) for p in dataset.rglob("*.parquet")} == named


def test_leftovers_of_an_interrupted_export_are_removed(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    (root / "s1.session.v4.jsonl").write_text(_logs()["s1"])
    dataset = tmp_path / "ds"
    export(root, out=dataset)
    stray = dataset / "sessions" / "part-deadbeef-0001.parquet"
    shutil.copy(next((dataset / "sessions").glob("part-*.parquet")), stray)
    export(root, out=dataset)
    assert not stray.exists()
    assert _dataset_counts(dataset)["sessions"] == 1


# -- refusals and bad input -----------------------------------------------------------------------------------


def test_an_existing_directory_that_is_not_a_dataset_is_refused(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    result = export(SAMPLES / "tour.session.v4.jsonl", out=other, status=2)
    assert "not a dshctl dataset" in result.output
    assert sorted(p.name for p in other.iterdir()) == ["precious.txt"]
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert "not a directory" in export(SAMPLES / "tour.session.v4.jsonl", out=afile, status=2).output
    dataset = tmp_path / "ds"
    export(SAMPLES / "tour.session.v4.jsonl", out=dataset)
    assert "partitioned by nothing" in export(SAMPLES / "tour.session.v4.jsonl", out=dataset, extra=("--partition-by", "day"), status=2).output


def test_unreadable_logs_are_reported_and_skipped(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "good.session.v4.jsonl").write_text(_logs()["s1"])
    (logs / "bad.session.v4.jsonl").write_text("this is not a dsh log\n")
    result = export(logs, out=tmp_path / "ds", status=1)
    assert "bad.session.v4.jsonl" in result.output and "1 unreadable" in result.output
    assert _dataset_counts(tmp_path / "ds")["sessions"] == 1
    only = export(logs / "bad.session.v4.jsonl", out=tmp_path / "ds2", status=2)
    assert "bad.session.v4.jsonl" in only.output


def test_without_duckdb_one_line_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "duckdb" else real(name, *a))
    for args in (("export", str(SAMPLES / "tour.session.v4.jsonl"), "--out", str(tmp_path / "ds")), ("sql", "select 1", str(SAMPLES))):
        result = invoke(*args)
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [f"dshctl: error: {args[0] if args[0] == 'sql' else 'export --format parquet'} needs DuckDB: pip install 'dshctl[export]'"]
    assert not (tmp_path / "ds").exists()


def test_options_are_checked_when_built():
    from dshctl.errors import UsageError
    from dshctl.export import ExportOptions

    for bad in ({"format": "csv"}, {"partition_by": "week"}, {"jobs": 0}, {"format": "otlp", "prune": True},
                {"include_content": True}, {"format": "otlp", "partition_by": "day"}):
        with pytest.raises(UsageError):
            ExportOptions(out="x", **bad)


def test_hostile_text_round_trips_as_data(tmp_path):
    title = "It's \"quoted\"; DROP TABLE sessions;-- \x1b[31mred\x07 \u202e"
    text = rollup_session("h1", created=T1, cwd="/w/'; select 1; --", turns=[[rollup_step(
        start=T1 + 10, first=T1 + 20, end=T1 + 30, tools=[('na"me\'\x01', 5, False)])]], prompt="') or 1=1 --\x00")
    lines = text.splitlines()
    lines.insert(2, json.dumps({"type": "session/title", "seq": 0, "time": T1 + 11, "data": {"title": title, "messageSeqs": [], "source": {"kind": "user"}}}))
    # keep seqs dense: renumber
    events = [json.loads(line) for line in lines[1:]]
    for seq, event in enumerate(events):
        event["seq"] = seq
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text("\n".join([lines[0], *map(json.dumps, events)]) + "\n")
    dataset = tmp_path / "ds"
    export(log, out=dataset)
    con = connect(dataset)
    assert con.execute("SELECT title, project FROM sessions").fetchone() == (title, "/w/'; select 1; --")
    assert con.execute("SELECT name FROM tool_calls").fetchone()[0] == 'na"me\'\x01'
    assert con.execute("SELECT tools FROM steps").fetchone()[0] == ['na"me\'\x01']
    assert con.execute("SELECT prompt FROM turns").fetchone()[0] == "') or 1=1 --\x00"


# -- wave-1 review: prices digest, exact costs, broken parts, hostile numbers ---------------------------------


def test_a_price_table_whose_alias_or_provider_changed_re_exports_the_costs(tmp_path):
    """The dataset's costs depend on the whole table in force (models, providers, aliases): a change of
    any of them re-reads every log, and the costs are then stats' at the new table."""
    log = SAMPLES / "tour.session.v4.jsonl"
    models = '[[models."x/cheap"]]\ncurrency = "USD"\ninput = 1\ncacheRead = 1\ncacheWrite = 1\noutput = 1\n' \
             '[[models."x/dear"]]\ncurrency = "USD"\ninput = 1000\ncacheRead = 1000\ncacheWrite = 1000\noutput = 1000\n'
    tables = {}
    for name, alias, provider in (("a", "x/cheap", "x"), ("b", "x/dear", "x"), ("c", "y/dear", "y")):
        tables[name] = tmp_path / f"{name}.toml"
        tables[name].write_text(f'[providers]\ndeepseek-official = "{provider}"\n[aliases]\n"{provider}/deepseek-v4-flash" = "{alias}"\n'
                                + models.replace('"x/', f'"{provider}/'))
    dataset = tmp_path / "ds"
    seen = set()
    for name in ("a", "b", "c"):
        result = export(log, out=dataset, extra=("--prices", str(tables[name])))
        assert "1 log read, 0 unchanged" in result.output, name
        cost = connect(dataset).execute("SELECT cost_total FROM sessions").fetchone()[0]
        expected = stats_json(log, extra=("--prices", str(tables[name])))["sessions"][0]["costs"]["total"]
        assert cost == Decimal(str(expected)), name
        seen.add(cost)
    assert len(seen) == 2  # a and b differ by the alias only; c is b under another provider name
    assert "0 logs read, 1 unchanged" in export(log, out=dataset, extra=("--prices", str(tables["c"]))).output


def _priced_log(tmp_path, name: str, tokens: list[tuple]) -> Path:
    steps = [rollup_step(start=T1 + 1000 * i, first=T1 + 1000 * i + 100, end=T1 + 1000 * i + 500, tokens=t) for i, t in enumerate(tokens)]
    path = tmp_path / f"{name}.session.v4.jsonl"
    path.write_text(rollup_session(name, created=T1, turns=[steps]))
    return path


def test_costs_above_a_billion_and_beyond_float_precision_are_exact_decimals(tmp_path):
    """Costs are DECIMAL(38,9) from the fold's integer nano-units: a session above a billion (which
    DECIMAL(18,9) refused, failing the whole export) and amounts beyond 2**53 nano-units (where a float
    amount is not exact) equal stats' integer sums to the nano-unit; the other logs are written too."""
    import dshctl
    from dshctl.stats.records import cost_nanos

    prices = tmp_path / "dear.toml"
    prices.write_text('[models."p/m"]\ncurrency = "USD"\ninput = 999999.999\noutput = 999999.999\ncacheRead = 0.001\n')
    per_token = 999_999_999  # nano-units
    beyond = _priced_log(tmp_path, "beyond", [(3_000_001, 7_000_003, 0, 0), (1, 3, 3, 0)])
    billion = _priced_log(tmp_path, "billion", [(1_234_567_891, 0, 0, 0)])
    small = SAMPLES / "tour.session.v4.jsonl"
    dataset = tmp_path / "ds"
    export(beyond, billion, small, out=dataset, extra=("--prices", str(prices)))
    con = connect(dataset)
    got = dict(con.execute("SELECT session_id, cost_total FROM sessions").fetchall())
    steps = dict(con.execute("SELECT session_id, sum(cost_total) FROM steps GROUP BY ALL").fetchall())
    assert set(got) >= {"beyond", "billion"} and len(got) == 3
    by_hand = {"beyond": (3_000_001 + 7_000_003 + 1 + 3) * per_token + 3 * 1, "billion": 1_234_567_891 * per_token}
    assert by_hand["beyond"] > 2**53 and by_hand["billion"] > 10**18
    for name, path in (("beyond", beyond), ("billion", billion)):
        record = dshctl.stats(path, prices=str(prices)).sessions[0]
        nanos = cost_nanos(record.costs)
        assert sum(nanos) == by_hand[name]  # stats' integer sum
        exact = Decimal(sum(nanos)).scaleb(-9)
        assert got[name] == exact and steps[name] == exact, name
        assert name == "billion" or round(record.costs.total * 10**9) != sum(nanos)  # the float does not hold it
        parts = con.execute("SELECT cost_input, cost_output, cost_cache_read FROM sessions WHERE session_id = ?", [name]).fetchone()
        assert parts == tuple(Decimal(n).scaleb(-9) for n in (nanos[0], nanos[3], nanos[1]))
    # the integers stay off the wire: stats --json is what it was
    text = invoke("stats", "--json", str(beyond), "--prices", str(prices)).stdout
    assert "nanos" not in text and json.loads(text)["sessions"][0]["costs"]["total"] == float(by_hand["beyond"] / 10**9)


def test_a_dataset_missing_a_part_file_is_repaired_by_the_next_export(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    texts = _logs()
    for name in ("s1", "s2"):
        (logs / f"{name}.session.v4.jsonl").write_text(texts[name])
    dataset = tmp_path / "ds"
    export(logs, out=dataset)
    counts = _dataset_counts(dataset)
    next((dataset / "turns").glob("*.parquet")).unlink()
    result = export(logs, out=dataset)
    assert "2 logs read" in result.output
    assert _dataset_counts(dataset) == counts
    manifest = json.loads((dataset / "_dshctl_dataset.json").read_text())
    named = {str(dataset / f) for part in manifest["parts"].values() for f in part["files"].values()}
    assert {str(p) for p in dataset.rglob("*.parquet")} == named


def test_an_out_of_range_image_dimension_is_null_not_a_failed_export(tmp_path):
    """Numbers in a log are JavaScript's (jsvalues.safe_int): a width beyond 2**53 is no integer dsh wrote
    (and one beyond INT64 failed the whole export); a whole float is the integer it is."""
    text = (SAMPLES / "tour.session.v4.jsonl").read_text()
    assert '"width":2,' in text
    log = tmp_path / "big.session.v4.jsonl"
    log.write_text(text.replace('"width":2,', '"width":100000000000000000000000,', 1).replace('"height":2,', '"height":2.0,', 1))
    export(log, out=tmp_path / "ds")
    export(SAMPLES / "tour.session.v4.jsonl", out=tmp_path / "plain")
    query = "SELECT width, height FROM images ORDER BY seq, n"
    rows, plain = (connect(tmp_path / name).execute(query).fetchall() for name in ("ds", "plain"))
    assert plain[0] == (2, 2) and rows[0] == (None, 2) and rows[1:] == plain[1:]


def test_partition_by_is_checked_through_its_choices():
    from dshctl.export import ExportOptions
    from dshctl.options.export import PARTITIONS

    assert ExportOptions.fields["partition_by"].choices == PARTITIONS
    result = invoke("export", str(SAMPLES), "--out", "x", "--partition-by", "week")
    assert result.exit_code == 2 and "week" in result.output
    assert "day|month|project" in invoke("export", "--help").output


def test_a_failed_export_leaves_no_new_directory_and_an_existing_dataset_as_it_was(tmp_path):
    text = tmp_path / "n.txt"
    text.write_text("hi\n")
    export(text, out=tmp_path / "o1", status=2)
    export(text, out=tmp_path / "a" / "b" / "o2", status=2)
    empty = tmp_path / "empty"
    empty.mkdir()
    export(empty, out=tmp_path / "o3", status=2)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.session.v4.jsonl").write_text("not a dsh log\n")
    (bad / "y.session.v4.jsonl").write_text("nor this\n")
    assert "nothing exported" in export(bad, out=tmp_path / "o4", status=1).output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "empty", "n.txt"]
    dataset = tmp_path / "ds"
    export(SAMPLES / "tour.session.v4.jsonl", out=dataset)
    before = {p: p.read_bytes() for p in dataset.rglob("*") if p.is_file()}
    export(text, out=dataset, status=2)
    export(bad, out=dataset, status=1)
    assert {p: p.read_bytes() for p in dataset.rglob("*") if p.is_file()} == before
