"""The layout defects an audit of issue 26 ("Tables") found, at 60, 80 and 120 columns: columns hidden
that would fit, a log column that shows less on a wider terminal, the session table's title hidden, the
store listing folding a path over four lines, ``ls`` putting a path in its id column, line separators in
cells, and plain figures holding a space."""

from __future__ import annotations

import io
import re
import shutil
import sys
import zipfile

import pytest
from hypothesis import given, settings, strategies as st

import dshctl.tables as tables
from conftest import SAMPLES, invoke, sample
from test_table_forms import BOX, ROOT, STORE, TABLE_COMMANDS, WIDTHS, _boxed_rows, _headers, plain_rows, run

TOUR = sample("tour.session.v4.jsonl")


def _footer_hidden(out: str) -> list[str]:
    found = re.search(r"hidden to fit \d+ columns: ([^(]*)", " ".join(out.split()))
    return [name.strip() for name in found.group(1).split(",")] if found else []


def _header_names(out: str) -> list[str]:
    return [" ".join(words) for words in _headers(out.split("└", 1)[0] + "└")]


# -------------------------------------------------------------------------------------------- 3: hidden that fit


@st.composite
def _tables(draw):
    count = draw(st.integers(2, 7))
    columns = []
    for i in range(count):
        kind = draw(st.sampled_from(["number", "cut", "fold", "whole"] if draw(st.booleans()) else ["number", "cut", "whole"]))
        drop = draw(st.one_of(st.none(), st.integers(0, 5)))
        header = f"c{i}"
        if kind == "number":
            columns.append(tables.number(header, drop=drop))
        elif kind == "cut":
            columns.append(tables.text(header, cut=draw(st.sampled_from(["end", "start", "middle"])), drop=drop,
                                       least=draw(st.one_of(st.none(), st.integers(4, 30)))))
        else:
            columns.append(tables.text(header, fold=kind == "fold", drop=drop))
    words = st.text(alphabet="abcdefghij", min_size=1, max_size=40)
    rows = draw(st.lists(st.lists(words, min_size=count, max_size=count), min_size=1, max_size=4))
    return columns, rows, draw(st.integers(20, 140))


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_no_hidden_column_would_fit(table):
    """After hiding, every column still hidden would make the table too wide at the least widths the
    layout fits to (it hid them in their fixed order and never added one back)."""
    columns, rows, width = table
    fitted = tables.layout(columns, rows, width)
    natural = tables._natural_widths([c.header for c in columns], rows)
    hidden = [i for i in range(len(columns)) if i not in fitted.shown]
    assert sorted(fitted.hidden) == sorted(columns[i].header for i in hidden)
    assert [columns[i].header for i in sorted(hidden, key=lambda i: (columns[i].drop, i))] == fitted.hidden  # in hide order
    for i in hidden:
        with_it = sorted([*fitted.shown, i])
        # a column comes back only in the room that leaves whole the columns shown that hide after it
        ahead = {j for j in fitted.shown if columns[j].drop is not None and columns[i].drop is not None and columns[j].drop > columns[i].drop}
        least = tables._overhead(len(with_it)) + sum(natural[j] if j in ahead else tables._least_width(columns[j], natural[j]) for j in with_it)
        if any(column.fold for column in columns):  # a fold that leaves a short tail hides one more: checked below
            continue
        assert least > width, (columns[i].header, fitted)


def test_ls_of_the_samples_shows_every_column_that_fits():
    """The audit: 43 wide at 60 columns (id and title), turns and gen hidden though they fit (57); 70 wide
    at 80 with a column hidden that fits."""
    narrow = run("ls", columns=60, terminal=True, env={"DSH_HOME": str(SAMPLES)}).stdout
    assert _header_names(narrow) == ["id", "turns", "gen", "title"], narrow
    assert _footer_hidden(narrow) == ["zstd", "cwd", "size", "duration", "created"]
    wide = run("ls", columns=80, terminal=True, env={"DSH_HOME": str(SAMPLES)}).stdout
    assert _header_names(wide) == ["id", "created", "turns", "size", "title"], wide
    for out, width in ((narrow, 60), (wide, 80)):
        lines = [line for line in out.splitlines() if line[:1] in BOX]
        assert max(map(len, lines)) > width - 6 and max(map(len, lines)) <= width  # the room is used


# -------------------------------------------------------------------------------------------- 4: copies' log


def _logs(command: str, directory, width: int) -> list[str]:
    out = run(command, str(directory), columns=width, terminal=True).stdout
    at = _header_names(out).index("log")
    return [row[at] for row in _boxed_rows(out.split("└", 1)[0])]


@pytest.mark.parametrize("command", ["ls", "stats"])
def test_a_wider_terminal_never_shows_less_of_the_log_of_copies(command, tmp_path):
    """``tour.session.v4.jsonl`` and a copy ``hostile.session.v4.jsonl``: 120 columns showed
    ``…r.session.v4.j…`` as it kept cwd, turns, duration and size, less than 80 did. Each width shows at
    least as much of each name as a narrower one, the two apart, and from 120 columns whole; with three
    copies too."""
    shutil.copy(TOUR, tmp_path / "tour.session.v4.jsonl")
    shutil.copy(TOUR, tmp_path / "hostile.session.v4.jsonl")
    for copies in (2, 3):
        if copies == 3:
            shutil.copy(SAMPLES / "tour.session.v4.jsonl.zstd", tmp_path / "tour.session.v4.jsonl.zstd")
        names = sorted(path.name for path in tmp_path.iterdir())
        seen = [_logs(command, tmp_path, width) for width in WIDTHS]
        for logs in seen:
            assert len(set(logs)) == copies and all(len(log) >= 16 for log in logs), seen
            for log in logs:
                assert any(name.endswith(log.strip("…")) or log.strip("…") in name for name in names), log
        for narrower, wider in zip(seen, seen[1:]):
            assert sum(map(len, narrower)) <= sum(map(len, wider)), seen
        assert sorted(seen[-1]) == names, seen  # 120 columns: whole
        assert sorted(seen[1]) == names, seen  # 80 too: the titles, all alike, are cut first


# -------------------------------------------------------------------------------------------- 5: stats' title


def _zip_of(path, tmp_path):
    archive = tmp_path / "dsh-session-7c1e5a2d.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(path, "session.jsonl")
    return archive


@pytest.mark.parametrize("width", WIDTHS)
def test_the_session_table_keeps_its_title_before_its_figures(width, tmp_path):
    """``stats X.zip DIR`` and ``stats ROOT samples/sessions`` at 80 columns hid the title (keeping out);
    at 120 it was cut to ``Fix the red…`` while steps, tools and cwd were shown."""
    for args in ([str(_zip_of(TOUR, tmp_path)), str(ROOT)], [str(ROOT), str(SAMPLES / "sessions")]):
        out = run("stats", *args, columns=width, terminal=True).stdout
        table = out.split("sessions\n", 1)[1].split("└", 1)[0]
        names = _header_names(table)
        assert {"session", "in+out", "cost USD"} <= set(names), names
        copies = "log" in names  # the zip's session is also in ROOT: a log column tells the two apart
        if width >= 120 or (width >= 80 and not copies):
            assert {"created", "title"} <= set(names), names
            at = names.index("title")
            whole = "Fix the red CI build"  # at 80 cut by the two characters a one-line ``cost USD`` needs
            assert [cell for row in _boxed_rows(table) if (cell := row[at]) == whole or width < 120 and cell == whole[:17] + "…"]
            assert names.index("title") < names.index("in+out")
        if width >= 80:
            assert "created" in names
        hidden = _footer_hidden(out.split("session(s)", 1)[1].split("\n\n")[0])
        if "title" in hidden:
            assert width == 60 or copies, (width, hidden)
        if "out" in names:
            assert "in+out" in names  # in+out is kept ahead of out


# -------------------------------------------------------------------------------------------- 6: store listing


@pytest.mark.parametrize("width", WIDTHS)
def test_the_store_listing_is_one_line_a_row_with_a_readable_id(width):
    """``images --store samples/attachments`` folded each row's ``2a/2ae6300793ac5d…beaf`` over 4 lines
    and cut the attachment id: one line a row, the id at least ``sha256:`` and 16 hex digits."""
    out = run("images", "--store", str(STORE), columns=width, terminal=True).stdout
    rows = _boxed_rows(out.split("└", 1)[0])
    assert len(rows) == 2 and all(row[0].startswith("sha256:") and row[1] == "verified" for row in rows), out
    for row in rows:
        assert len(row[0].rstrip("…")) >= 23, row
        assert all(cell for cell in row), row  # no continuation line
    assert all(len(line) <= width for line in out.splitlines() if line[:1] in BOX)
    full = run("images", "--store", str(STORE), columns=200, terminal=True).stdout
    assert "…" not in full.split("└", 1)[0]


@pytest.mark.parametrize("width", WIDTHS)
def test_images_tables_never_fold_a_problem(width, tmp_path):
    """A problem longer than its column is cut with … on its row's one line."""
    from test_table_forms import STORE as store

    bad = tmp_path / "objects"
    shutil.copytree(store, bad)
    for path in bad.rglob("*"):
        if path.is_file() and path.suffix != ".json":
            path.write_bytes(b"not the image")
    out = run("images", "--store", str(bad), str(TOUR), columns=width, terminal=True).stdout
    rows = _boxed_rows(out.split("└", 1)[0])
    assert rows and all(row[0] for row in rows), out  # every line is a row of its own: nothing folded


# -------------------------------------------------------------------------------------------- 7: ls, no id


@pytest.mark.parametrize("width", WIDTHS)
def test_ls_of_the_v0_corpus_shows_no_path_in_its_id_column(corpus, width):
    """Three corpus logs whose header cannot be read: their id cell was their path (28 wide at 60, the
    90-character path in a pipe); it is "—" ("-" in a pipe, empty in TSV) and the log column names them."""
    out = run("ls", str(corpus / "v0"), columns=width, terminal=True).stdout
    names = _header_names(out)
    assert names[:2] == ["id", "log"], names
    rows = _boxed_rows(out.split("└", 1)[0])
    unreadable = [row for row in rows if row[0] == "—"]
    assert len(unreadable) == 3 and all("snapshot-suite" in row[1] or "…" in row[1] for row in unreadable), rows
    assert all("jsonl" not in row[0] for row in rows)
    piped = plain_rows(run("ls", str(corpus / "v0")).stdout)
    assert piped[0][:2] == ["id", "log"]
    assert {row[0] for row in piped[1:] if "snapshot-suite" in row[1]} == {"-"}
    assert max(len(row[0]) for row in piped[1:]) < 40


# -------------------------------------------------------------------------------------------- 10: separators


SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.sampled_from(SEPARATORS + "ab \t\x1b…é"), max_size=12) | st.text(max_size=8),
                         min_size=2, max_size=2), min_size=1, max_size=4),
       st.sampled_from(["box", "plain", "tsv"]))
def test_any_string_in_a_cell_is_one_line_a_row(rows, form):
    """Whatever a cell holds, every form prints one line per row as ``str.splitlines()`` counts lines
    (it passed U+2028 and U+2029 through)."""
    out = io.StringIO()
    real, terminal, width = sys.stdout, tables.stdout_is_terminal, tables.terminal_width
    sys.stdout = out
    tables.stdout_is_terminal = lambda: form == "box"
    tables.terminal_width = lambda: 400
    try:
        tables.print_table(None, [tables.text("a", cut="end"), tables.text("b", cut="end")], rows, form=form, color=False)
    finally:
        sys.stdout, tables.stdout_is_terminal, tables.terminal_width = real, terminal, width
    lines = out.getvalue().splitlines()
    assert len(lines) == len(rows) + (4 if form == "box" else 1), lines  # box: its borders and header
    if form == "tsv":
        assert all(line.count("\t") == 1 for line in lines)


def test_a_title_with_a_line_separator_is_one_tsv_field(tmp_path):
    log = tmp_path / "sep.session.v4.jsonl"
    log.write_text(TOUR.read_text().replace("Fix the red CI build", "Fix the\\u2028red CI\\u2029build"))
    for form in ("--tsv", "--plain"):
        out = invoke("ls", str(log), form).stdout
        assert len(out.splitlines()) == 2 and "Fix the<U+2028>red CI<U+2029>build" in out, out


# -------------------------------------------------------------------------------------------- 15: plain figures


def test_plain_figures_hold_no_space(monkeypatch):
    """Every figure (a number column) of every plain table is one word: ``awk '{print $NF}'`` on stats
    printed ``cost``, ``USD``, ``USD``; its unit is in the header, as on a terminal."""
    seen: list[tuple[str, str]] = []
    real = tables._print_plain

    def spy(title, specs, cells, caption, color):
        real(title, specs, cells, caption, color)
        shown = [list(row) for row in cells]
        specs = tables._units_in_headers(list(specs), shown)
        seen.extend((spec.header, cell) for row in shown for spec, cell in zip(specs, row) if spec.number)

    monkeypatch.setattr(tables, "_print_plain", spy)
    printed = "".join(run(*args).stdout for _, args in TABLE_COMMANDS)
    monkeypatch.undo()
    assert len(seen) > 100
    spaced = {cell for _, cell in seen if " " in cell}
    assert {"1.2 KiB", "7.0 KiB"} <= spaced  # ls' sizes, as a terminal shows them
    for cell in spaced:
        assert f" {cell}" not in printed and f" {cell.replace(' ', '')}" in printed, cell
    out = run("stats", str(ROOT)).stdout.split("sessions\n", 1)[1].split("\n\n")[0]
    last = [line.split()[-1] for line in out.splitlines() if line and "session(s)" not in line and not line.startswith("⑂")]
    assert last[0] == "USD" and all(re.fullmatch(r"[\d.,]+", value) for value in last[1:]), last
    ls = plain_rows(run("ls", str(ROOT)).stdout)
    at = ls[0].index("size")
    assert all(re.fullmatch(r"[\d.]+[KMG]?i?B", row[at]) for row in ls[1:]), ls


# -------------------------------------------------------------------------------------------- log cut rule


@pytest.mark.parametrize("directory,width", [("v2", 80), ("v0", 60), ("v0", 120)])
def test_a_narrowed_log_column_cuts_every_row_by_one_rule(corpus, directory, width):
    """``ls corpus/v2`` at 80 showed ``…el.session.v2.jsonl`` (two characters of what differs); ``ls
    corpus/v0`` cut some rows at their start and the last at its end (losing ``.jsonl``). Each cut cell
    loses one end only, every cut cell of the column the same end, and the rows stay apart."""
    out = run("ls", str(corpus / directory), columns=width, terminal=True).stdout
    at = _header_names(out).index("log")
    logs = [row[at] for row in _boxed_rows(out.split("└", 1)[0])]
    cut = [log for log in logs if "…" in log]
    assert cut, logs
    assert len(set(logs)) == len(logs), logs
    assert not any(log.startswith("…") and log.endswith("…") for log in logs), logs
    assert all(log.startswith("…") for log in cut) or all(log.endswith("…") for log in cut), logs
    if directory == "v2":  # the file names' starts, what tells them apart, rather than their shared end
        assert "acp-cancel.session.…" in logs and not any(log.endswith(".session.v2.jsonl") for log in cut), logs


@pytest.mark.parametrize("by", ["turn", "step"])
def test_turn_and_step_tables_of_copies_name_each_rows_log(by, tmp_path):
    """Two copies of the tour: ``--by turn`` showed turns 1-4 of 7c1e5a2d twice, with no log column in
    boxed, plain or TSV. Each form names the row's log; TSV always (one log too)."""
    for name in ("first.session.v4.jsonl", "second.session.v4.jsonl"):
        shutil.copy(TOUR, tmp_path / name)
    boxed = run("stats", str(tmp_path), "--by", by, columns=120, terminal=True).stdout
    table = boxed.split("└", 1)[0]
    at = _header_names(table).index("log")
    rows = _boxed_rows(table)
    assert {row[at] for row in rows} == {"first.session.v4.jsonl", "second.session.v4.jsonl"}, boxed
    assert len({tuple(row) for row in rows}) == len(rows)  # no row repeats
    piped = plain_rows(run("stats", str(tmp_path), "--by", by).stdout)
    assert piped[0][:2] == ["session", "log"] and len({tuple(row) for row in piped}) == len(piped), piped
    tsv = [line.split("\t") for line in run("stats", str(tmp_path), "--by", by, "--tsv").stdout.splitlines()]
    assert tsv[0][:2] == ["session", "log"] and len({tuple(row) for row in tsv}) == len(tsv), tsv
    one = run("stats", str(TOUR), "--by", by, "--tsv").stdout.splitlines()
    assert one[0].split("\t")[:2] == ["session", "log"] and one[1].split("\t")[1] == str(TOUR)
    single = run("stats", str(TOUR), "--by", by, columns=120, terminal=True).stdout
    assert "log" not in _header_names(single.split("└", 1)[0])  # no copies: no log column on a terminal


def test_the_session_table_at_60_columns_keeps_the_title_before_the_start():
    """``stats samples/sessions`` at 60 columns showed session, created, in+out and cost, the title hidden:
    a title cut with "…" tells sessions apart, a start time (three alike here) does not."""
    out = run("stats", str(ROOT), columns=60, terminal=True).stdout
    table = out.split("sessions\n", 1)[1].split("└", 1)[0]
    names = _header_names(table)
    assert "title" in names and "created" not in names, names
    assert "created" in _footer_hidden(out)
    titles = [row[names.index("title")] for row in _boxed_rows(table)]
    assert any(title.startswith("Fix the red") for title in titles), titles


def test_a_cell_without_a_value_shows_a_dash_on_a_terminal(corpus):
    """``ls`` at 120 left the no-cwd session's cwd and title blank (``stats`` showed "—" for the cwd, its
    title blank) and ``ls corpus/v0`` a blank start: every table shows "—" there ("-" in plain, empty in TSV)."""
    for args, header in ((["ls", str(ROOT)], "id"), (["stats", str(ROOT)], "session")):
        out = run(*args, columns=120, terminal=True).stdout
        table = out.split(f"┃ {header}", 1)[1].split("└", 1)[0]
        table = "┃ " + header + table
        names = _header_names(table)
        row = next(row for row in _boxed_rows(table) if row[0] == "session-5d9e2c71")
        assert row[names.index("cwd")] == "—" and row[names.index("title")] == "—", (names, row)
        assert all(cell for row in _boxed_rows(table) for cell in row), table
        piped = plain_rows(run(*args).stdout)
        row = next(row for row in piped if row[0] == "session-5d9e2c71")
        assert row[piped[0].index("title")] == "-", row
    v0 = run("ls", str(corpus / "v0"), columns=120, terminal=True).stdout.split("└", 1)[0]
    names = _header_names(v0)
    created = [row[names.index("created")] for row in _boxed_rows(v0)]
    assert "—" in created and "" not in created, created
    tsv = [line.split("\t") for line in run("ls", str(ROOT), "--tsv").stdout.splitlines()]
    row = next(row for row in tsv if row[0].startswith("session-5d9e2c71"))
    assert row[tsv[0].index("title")] == "" and row[tsv[0].index("cwd")] == ""


@pytest.mark.parametrize("by", [None, "turn", "step"])
def test_an_empty_result_has_the_header_of_a_populated_one(by):
    """``stats --since 'last week' | cat`` printed ``session title created cwd … cost`` where a populated
    table has ``session fork title … cost USD``: the same columns but those its rows decide (a mark a row
    needs, the currency all its costs share), the same on a pipe and in TSV."""
    extra = ["--by", by] if by else []
    for form in ([], ["--tsv"]):
        empty = run("stats", str(ROOT), "--since", "last week", *extra, *form)
        assert empty.exit_code == 0 and len(empty.stdout.splitlines()) == 1, empty.stdout
        full = run("stats", str(ROOT), *extra, *form).stdout.split("\n\n")[0].splitlines()
        header = next(line for line in full if line.startswith(("session ", "session\t")))
        split = (lambda line: line.split("\t")) if form else (lambda line: re.split(r"\s{2,}", line.strip()))
        populated = [name for name in split(header) if name not in ("fork", "inherited")]
        assert [name for name in split(empty.stdout.splitlines()[0]) if name not in ("fork", "inherited")] == \
            [name.replace("cost USD", "cost") for name in populated]


def test_ls_and_stats_say_an_empty_result_alike_on_a_terminal():
    """On a terminal ``ls --since`` drew an empty box and "0 session(s) of 3" while ``stats`` drew nothing:
    both draw nothing and note why on standard error (``--quiet`` hides the note)."""
    notes = []
    for command in ("ls", "stats"):
        result = run(command, str(ROOT), "--since", "last week", columns=80, terminal=True)
        assert result.exit_code == 0 and result.stdout == "", (command, result.stdout)
        notes.append(result.stderr)
    assert notes[0] == notes[1] == "dshctl: no sessions (3 outside --since/--until)\n", notes
    piped = run("ls", str(ROOT), "--since", "last week").stdout.splitlines()
    assert len(piped) == 1 and piped[0].split()[0] == "id"
