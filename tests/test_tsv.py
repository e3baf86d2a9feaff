"""``--tsv`` is one table (issue 26): a header line, then one line per row, every row as wide as the
header, no blank line and no second table, cells that are values (no units, no ``yes``/``no``, no
``—``, no ids or titles cut with ``…``), and text from a log on one line whatever it holds.

Every command with ``--tsv`` is read back with the csv module (``delimiter='\\t'``, no quoting), as a
program would read it.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES, invoke, sample

TOUR = sample("tour.session.v4.jsonl")
ROOT = sample("sessions")
STORE = sample("attachments")

FORMS = [
    ("stats-one", ["stats", str(TOUR)]),
    ("stats-one-turn", ["stats", "--by", "turn", str(TOUR)]),
    ("stats-one-step", ["stats", "--by", "step", str(TOUR)]),
    ("stats-one-tool", ["stats", "--by", "tool", str(TOUR)]),
    ("stats-folder", ["stats", str(SAMPLES)]),
    ("stats-root", ["stats", str(ROOT)]),
    ("stats-turn", ["stats", "--by", "turn", str(SAMPLES)]),
    ("stats-step", ["stats", "--by", "step", str(SAMPLES)]),
    ("stats-day", ["stats", "--by", "day", "--tz", "UTC", str(SAMPLES)]),
    ("stats-week", ["stats", "--by", "week", "--tz", "UTC", str(SAMPLES)]),
    ("stats-month", ["stats", "--by", "month", "--tz", "UTC", str(SAMPLES)]),
    ("stats-project", ["stats", "--by", "project", str(SAMPLES)]),
    ("stats-model", ["stats", "--by", "model", str(SAMPLES)]),
    ("stats-tool", ["stats", "--by", "tool", str(SAMPLES)]),
    ("stats-top", ["stats", "--top", "2", str(SAMPLES)]),
    ("stats-no-cost", ["stats", "--no-cost", str(ROOT)]),
    ("ls", ["ls", str(ROOT)]),
    ("ls-folder", ["ls", str(SAMPLES)]),
    ("images", ["images", str(TOUR)]),
    ("images-checked", ["images", "--store", str(STORE), str(TOUR)]),
    ("images-store", ["images", "--store", str(STORE)]),
    ("prices", ["prices"]),
    ("prices-paths", ["prices", str(TOUR), str(ROOT)]),
    ("prices-files", ["prices", "--files"]),
    ("prices-routes", ["prices", "--routes"]),
    ("prices-routes-paths", ["prices", "--routes", str(SAMPLES)]),
]

DISPLAY = re.compile(
    r"[\d.,]+[KMG]|[\d.]+(ms|s|m|h|d)|\d+m\d+s|\d+h\d+m|v\d+|\d+:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d|[\d.]+ [A-Z]{3}|"
    r"\d{1,3}(,\d{3})+|[\d.]+%|yes|no|by seq \d+|\(unknown\)|\(undated\)|any time|other hours|no price.*|[\d.]+e-?\d+"
)
"""What people read and a program cannot use: 84.7K, 1m05s, v4, 14:13, "0.006 USD", 1,234, 57%, yes,
by seq 10, a label for none, an exponent."""


def tsv_rows(stdout: str) -> list[list[str]]:
    """The TSV as a program reads it: every line a row (the header first), split on tabs only."""
    assert stdout.endswith("\n"), repr(stdout[-80:])
    rows = list(csv.reader(stdout[:-1].split("\n"), delimiter="\t", quoting=csv.QUOTE_NONE))
    return rows


def assert_one_table(stdout: str) -> list[dict[str, str]]:
    assert "\n\n" not in stdout and not stdout.startswith("\n"), stdout  # no second table after a blank line
    rows = tsv_rows(stdout)
    header = rows[0]
    assert len(header) == len(set(header)) and all(header), header  # one header, each column named once
    for row in rows[1:]:
        assert len(row) == len(header), (header, row)
        assert row != header, "a second header line"
    return [dict(zip(header, row)) for row in rows[1:]]


def _tsv(*args: str, status: tuple[int, ...] = (0,)) -> list[dict[str, str]]:
    result = invoke(*args, "--tsv")
    assert result.exit_code in status, result.output
    return assert_one_table(result.stdout)


@pytest.mark.parametrize("name, args", FORMS, ids=[name for name, _ in FORMS])
def test_every_tsv_is_one_table_of_values(name, args):
    rows = _tsv(*args)
    assert rows, name
    for row in rows:
        for column, cell in row.items():
            assert cell != "-" and "—" not in cell and "…" not in cell, (name, column, cell)
            assert not DISPLAY.fullmatch(cell), (name, column, cell)
            assert not re.search(r"[\x00-\x1f\x7f]", cell), (name, column, cell)


def test_sql_tsv_is_one_table_with_empty_nulls():
    pytest.importorskip("duckdb")
    rows = _tsv("sql", "select 1.5::double as a, NULL as b, true as c, 1e-7::double as d, 'nan'::double as e, "
                "'x' || chr(9) || 'y' || chr(10) || 'z' as f", str(TOUR))
    assert rows == [{"a": "1.5", "b": "", "c": "true", "d": "0.0000001", "e": "", "f": "x␉y␊z"}]
    sessions = _tsv("sql", "select * from sessions", str(SAMPLES))
    assert len(sessions) == len(json.loads(invoke("sql", "--json", "select * from sessions", str(SAMPLES)).stdout))


# --------------------------------------------------------------------------------------------------
# prices


def test_prices_tsv_is_the_price_rows():
    """Without PATH: a row per entry and per window of each key, the window's zone, days and hours apart."""
    document = json.loads(invoke("prices", "--json").stdout)
    rows = _tsv("prices")
    assert list(rows[0]) == ["price key", "since", "zone", "days", "hours", "in", "cache read", "cache write", "out", "currency"]
    expected = []
    for key, entries in document["prices"].items():
        for entry in entries:
            since = entry["since"] or ""
            expected.append((key, since, "", "", "", entry["input"], entry["output"], entry["currency"]))
            for window in entry["windows"]:
                days = ",".join(window["days"] or ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
                expected.append((key, since, window["zone"], days, ",".join(window["hours"]), window["input"], window["output"],
                                 entry["currency"]))
    got = [(r["price key"], r["since"], r["zone"], r["days"], r["hours"], float(r["in"]), float(r["out"]), r["currency"]) for r in rows]
    assert got == expected
    assert any(r["days"] == "mon,tue,wed,thu,fri" and r["hours"] == "09:00-12:00,14:00-18:00" for r in rows)


def test_prices_tsv_with_paths_joins_each_route_to_its_price_rows(tmp_path):
    """With PATHs: each route found, its sessions, then the rows of the key it bills as; a route without
    a price is one row with empty price cells."""
    unpriced = tmp_path / "acme.session.v4.jsonl"
    unpriced.write_text(TOUR.read_text().replace('"provider":"deepseek-official"', '"provider":"acme"'))
    shutil.copy(TOUR, tmp_path / "tour.session.v4.jsonl")
    document = json.loads(invoke("prices", "--json", str(tmp_path)).stdout)
    rows = _tsv("prices", str(tmp_path))
    assert list(rows[0])[:3] == ["route", "sessions", "price key"]
    routes = {route["route"]: route for route in document["routes"]}
    assert {row["route"] for row in rows} == set(routes)
    for route, found in routes.items():
        mine = [row for row in rows if row["route"] == route]
        assert {row["sessions"] for row in mine} == {str(found["sessions"])}
        key = found["priceKey"]
        if key is None:
            assert len(mine) == 1 and all(mine[0][c] == "" for c in ("price key", "since", "in", "out", "currency"))
        else:
            assert {row["price key"] for row in mine} == {key}
            assert len(mine) == sum(1 + len(entry["windows"]) for entry in document["prices"][key])
    assert any(routes[r]["priceKey"] is None for r in routes) and any(routes[r]["priceKey"] for r in routes)


def test_prices_files_and_routes_choose_the_other_tables():
    document = json.loads(invoke("prices", "--json", str(TOUR)).stdout)
    files = _tsv("prices", "--files")
    assert [(r["table"], r["file"], r["source"], r["version"]) for r in files] == [
        (t["name"], t["path"], t["source"] or "", t["version"] or "") for t in document["tables"]]
    mapping = _tsv("prices", "--routes")
    assert {r["route or model"] for r in mapping} == {*document["providers"], *document["aliases"]}
    found = _tsv("prices", "--routes", str(TOUR))
    assert [(r["route"], int(r["sessions"]), r["price key"]) for r in found] == [
        (r["route"], r["sessions"], r["priceKey"]) for r in document["routes"]]
    piped = invoke("prices", "--routes", str(TOUR)).stdout.splitlines()  # a pipe: the header and its rows
    assert piped[0].split() == ["route", "sessions", "bills", "as"] and len(piped) == 1 + len(found)
    assert invoke("prices", "--files").stdout.splitlines()[0].split()[:2] == ["table", "file"]
    for refused in (["--files", "--routes"], ["--files", "--json"], ["--routes", "--json"], ["--files", str(TOUR)]):
        result = invoke("prices", *refused)
        assert result.exit_code == 2 and "error:" in result.stderr, (refused, result.output)


# --------------------------------------------------------------------------------------------------
# text from a log, and values for what a terminal says in words


def _hostile_copy(into: Path) -> Path:
    """The tour with a tab, a line feed, a CR and a backslash in its title, cwd, a tool's name, an image's
    name and its route."""
    text = TOUR.read_text()
    for old, new in (
        ('"title":"Fix the red CI build"', '"title":"Fix\\tthe\\nred\\rCI \\\\ build"'),
        ('"cwd":"/home/alice/dev/dsh tour"', '"cwd":"/home/alice/dev/dsh\\ttour\\nx"'),
        ('"name":"read"', '"name":"re\\tad\\n"'),
        ('"name":"ci-failure.png"', '"name":"ci\\tfail\\nure.png"'),
        ('"provider":"deepseek-official"', '"provider":"acme\\tlabs\\n"'),
    ):
        assert old in text
        text = text.replace(old, new)
    into.mkdir(parents=True, exist_ok=True)
    (into / "tour.session.v4.jsonl").write_text(text)
    return into


HOSTILE_FORMS = [
    ["stats"], ["stats", "--by", "turn"], ["stats", "--by", "step"], ["stats", "--by", "tool"], ["stats", "--by", "model"],
    ["stats", "--by", "project"], ["ls"], ["images"], ["prices", "--routes"],
]


@pytest.mark.parametrize("args", HOSTILE_FORMS, ids=["-".join(a) for a in HOSTILE_FORMS])
def test_tabs_and_line_breaks_from_a_log_keep_a_row_on_one_line(tmp_path, args):
    hostile = _hostile_copy(tmp_path / "hostile")
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(TOUR, plain / "tour.session.v4.jsonl")
    target = [str(hostile / "tour.session.v4.jsonl")] if args[0] == "images" else [str(hostile)]
    original = [str(plain / "tour.session.v4.jsonl")] if args[0] == "images" else [str(plain)]
    rows = _tsv(*args, *target)
    assert len(rows) == len(_tsv(*args, *original))  # as many rows as the log without them
    cells = {cell for row in rows for cell in row.values()}
    wanted = {"stats": ["title", "cwd"], "ls": ["title", "cwd"], "images": ["name"], "prices": ["route"]}.get(args[0], [])
    if args[:3] == ["stats", "--by", "tool"]:
        assert "re␉ad␊" in cells
    elif args[:3] == ["stats", "--by", "model"]:
        assert any(cell.startswith("acme␉labs␊") for cell in cells)
    elif args[:3] == ["stats", "--by", "project"]:
        assert "/home/alice/dev/dsh␉tour␊x" in cells
    elif len(args) == 1 or args[0] == "prices":
        for column in wanted:
            assert any("␉" in row[column] and "␊" in row[column] for row in rows), (column, rows)


def test_rollup_without_a_key_and_step_finish_are_values(tmp_path):
    project = _tsv("stats", "--by", "project", str(SAMPLES))
    keys = [row["project"] for row in project]
    assert "" in keys and "(unknown)" not in keys and keys[-1] == "total"
    steps = _tsv("stats", "--by", "step", str(SAMPLES))
    assert {"failure", "interrupted", "ended", "finish"} <= set(steps[0])
    document = [json.loads(line) for line in invoke("stats", "--by", "step", "--ndjson", str(SAMPLES)).stdout.splitlines()]
    records = [record for record in document if "step" in record]
    assert len(records) == len(steps)
    for row, record in zip(steps, records):
        assert row["finish"] == (record["finishReason"] or "")
        assert row["failure"] == (record["failureCode"] or "")
        assert (row["interrupted"], row["ended"]) == (json.dumps(record["interrupted"]), json.dumps(record["ended"]))
    assert {row["ended"] for row in steps} == {"true", "false"}


def test_tsv_numbers_never_use_an_exponent():
    for row in _tsv("stats", "--by", "step", str(SAMPLES)):
        for column in ("cost", "tok/s"):
            assert "e" not in row[column].lower(), row
            if row[column]:
                float(row[column])
