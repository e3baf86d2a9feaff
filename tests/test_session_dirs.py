"""What a folder holding ``session.jsonl`` is, and how sessions are named (issue 26, left open by the last
trial).

A directory is a dsh session directory when it holds only what dsh writes there (FORMAT.md §1.2–§1.5,
§1.10: generation files, ``session.lock``, staging ``*.tmp`` files, an export's ``subagents/`` and
``media/``) or when it stands where dsh puts one (inside a project directory). A folder that also holds
other logs is a plain folder of logs: every log in it is read, its ``session.jsonl`` as one of them, in
every command that takes PATH.

Sessions are named in ``ls``, ``stats`` and ``grep`` by one rule (:func:`dshctl.source.shown_ids`): the
shortest prefix no other session of the run and no session of the sessions root shares.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import zstandard

import dshctl
import dshctl.tables
from conftest import invoke as run_cli, sample
from dshctl.source import find_session, resolve, resolve_one, shown_ids, short_ids

TOUR = sample("tour.session.v4.jsonl")
FORK = sample("fork-child.session.v4.jsonl")
CWD_CHANGE = sample("cwd-change.session.v4.jsonl")
WIDTHS = (60, 80, 120)
BOX_BODY = "│"


def invoke(*args, columns: int | None = None, terminal: bool = False, home: Path | None = None, status: int | None = None):
    """dshctl in process with no sessions root but ``home``'s; ``terminal``: standard output counts as a
    terminal of ``columns``."""
    return run_cli(*args, env={"COLUMNS": str(columns) if columns else None,
                               "DSH_HOME": str(home) if home else "/nonexistent-dsh-home"}, status=status, terminal=terminal)


def _with_id(source: Path, session_id: str) -> bytes:
    lines = source.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["id"] = session_id
    return b"\n".join([json.dumps(header).encode(), *lines[1:]])


def _zstd(data: bytes) -> bytes:
    """A log as dsh compresses it: the header line in a frame of its own, then the rest."""
    head, _, rest = data.partition(b"\n")
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return compressor.compress(head + b"\n") + compressor.compress(rest)


def _names(refs) -> list[str]:
    return [ref.display.rsplit(os.sep, 1)[-1] for ref in refs]


@pytest.fixture
def mixed(tmp_path) -> Path:
    """A folder of downloaded logs, one of them called ``session.jsonl``."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    shutil.copy(TOUR, folder / "session.jsonl")
    shutil.copy(FORK, folder / "fork.jsonl")
    (folder / "cwd.jsonl.zst").write_bytes(_zstd(CWD_CHANGE.read_bytes()))
    (folder / "notes.txt").write_text("not a log\n")
    return folder


# ----------------------------------------------------------------------------- which folder is which


def test_a_folder_holding_session_jsonl_and_other_logs_is_a_plain_folder_of_logs(mixed):
    refs = resolve(str(mixed))
    assert _names(refs) == ["cwd.jsonl.zst", "fork.jsonl", "session.jsonl"]  # every log, none passed over
    assert all(ref.session_dir is None for ref in refs)
    result = dshctl.stats(str(mixed))
    assert sorted(session.id for session in result.sessions) == sorted(
        json.loads(path.read_bytes().split(b"\n")[0])["id"] for path in (TOUR, FORK, CWD_CHANGE))


def test_a_session_directory_holds_only_what_dsh_writes_there(tmp_path):
    directory = tmp_path / "7c1e5a2d"
    directory.mkdir()
    for name in ("session.jsonl", "session.v2.jsonl", "session.v4.jsonl"):
        shutil.copy(TOUR, directory / name)
    (directory / "session.lock").write_text("")
    (directory / "session.v4.jsonl.0123456789ab.tmp").write_bytes(TOUR.read_bytes()[:100])  # a crash's staging file
    (directory / "README.md").write_text("not a log\n")  # no log: the directory is still the session's
    (refs,) = [resolve(str(directory))]
    assert _names(refs) == ["session.v4.jsonl"] and refs[0].session_dir == directory  # the highest generation alone
    assert resolve_one(str(directory)).path == directory / "session.v4.jsonl"


def test_an_unzipped_export_stays_an_export_and_one_with_other_logs_is_a_folder(tmp_path):
    export = tmp_path / "dsh-session-x"
    (export / "subagents" / "child").mkdir(parents=True)
    (export / "media").mkdir()
    shutil.copy(TOUR, export / "session.jsonl")
    shutil.copy(FORK, export / "subagents" / "child" / "session.jsonl")
    (export / "media" / "a.png").write_bytes(b"\x89PNG\r\n")
    assert [ref.path for ref in resolve(str(export))] == [export / "session.jsonl", export / "subagents" / "child" / "session.jsonl"]
    assert resolve_one(str(export)).path == export / "session.jsonl"  # the export's root session
    shutil.copy(CWD_CHANGE, export / "extra.jsonl")
    paths = [ref.path for ref in resolve(str(export))]
    assert paths == [export / "extra.jsonl", export / "session.jsonl", export / "subagents" / "child" / "session.jsonl"]


def test_a_folder_whose_subfolder_holds_logs_is_a_plain_folder(tmp_path):
    folder = tmp_path / "ci"
    (folder / "run-2").mkdir(parents=True)
    shutil.copy(TOUR, folder / "session.jsonl")
    shutil.copy(FORK, folder / "run-2" / "session.jsonl")
    assert [ref.path for ref in resolve(str(folder))] == [folder / "run-2" / "session.jsonl", folder / "session.jsonl"]
    (folder / "empty").mkdir()  # a folder without logs changes nothing
    assert len(resolve(str(folder))) == 2


def test_a_session_directory_of_a_sessions_root_is_read_as_dsh_reads_it(tmp_path):
    """Inside a project directory dsh reads a session directory's generation files alone, whatever else it
    holds (it keeps the directory for future per-session artifacts): so does dshctl, named or walked."""
    root = tmp_path / "home" / "sessions"
    directory = root / "--home-alice-proj--" / "session-7c1e5a2d-aaaa"
    directory.mkdir(parents=True)
    (directory / "session.v4.jsonl").write_bytes(_with_id(TOUR, "session-7c1e5a2d-aaaa"))
    shutil.copy(FORK, directory / "artifact.jsonl")
    for spec in (directory, root, root / "--home-alice-proj--"):
        assert [ref.path for ref in resolve(str(spec))] == [directory / "session.v4.jsonl"], spec
    assert find_session("session-7c1e5a2d", root=root) == directory
    result = invoke("cat", "--type", "session/title", "session-7c1e5a2d", home=tmp_path / "home", status=0)
    assert "Fix the red CI build" in result.stdout


@pytest.mark.parametrize("command", ["stats", "ls", "validate", "grep", "export"])
def test_every_command_reading_many_logs_reads_them_all(mixed, command, tmp_path):
    args = {
        "stats": ["stats", "--json", str(mixed)],
        "ls": ["ls", "--json", str(mixed)],
        "validate": ["validate", "--format", "json", str(mixed)],
        "grep": ["grep", "-c", "--json", "-i", "e", str(mixed)],
        "export": ["export", str(mixed), "--out", str(tmp_path / "out")],
    }[command]
    result = invoke(*args)
    assert result.exit_code in (0, 1), result.output
    logs = {"session.jsonl", "fork.jsonl", "cwd.jsonl.zst"}
    if command == "export":
        written = (tmp_path / "out").rglob("*")
        text = " ".join(str(path) for path in written) + result.output
        import duckdb

        sessions = duckdb.sql(f"select count(*) from read_parquet('{tmp_path / 'out'}/sessions/**/*.parquet')").fetchall()[0][0]
        assert sessions == 3, text
        return
    for name in logs:
        assert os.path.join(str(mixed), name) in result.stdout, (name, result.stdout)


@pytest.mark.parametrize("command", ["cat", "replay", "images"])
def test_a_command_reading_one_log_names_the_logs_of_a_plain_folder(mixed, command):
    args = {"cat": ["cat"], "replay": ["replay", "--instant"], "images": ["images"]}[command]
    result = invoke(*args, str(mixed), status=2)
    assert "expected one log, found 3" in result.stderr
    for name in ("cwd.jsonl.zst", "fork.jsonl", "session.jsonl"):
        assert os.path.join(str(mixed), name) in result.stderr  # the user can pick one
    assert "Traceback" not in result.output
    assert invoke(*args, str(mixed / "session.jsonl")).exit_code == 0  # and that one opens


def test_the_folder_rule_holds_below_a_plain_folder(tmp_path, mixed):
    """A folder read as a plain folder reads its subfolders by the same rule: a mixed one is read whole, a
    session directory by its highest generation."""
    top = tmp_path / "all"
    top.mkdir()
    shutil.move(str(mixed), top / "downloads")
    session = top / "sess"
    session.mkdir()
    shutil.copy(TOUR, session / "session.jsonl")
    shutil.copy(TOUR, session / "session.v4.jsonl")
    names = [str(ref.path.relative_to(top)) for ref in resolve(str(top))]
    assert names == ["downloads/cwd.jsonl.zst", "downloads/fork.jsonl", "downloads/session.jsonl", "sess/session.v4.jsonl"]


# ----------------------------------------------------------------------------- short ids, one rule


def _preview_folder(tmp_path) -> Path:
    """A plain folder of two sessions whose ids share ``preview-`` and more."""
    folder = tmp_path / "previews"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(_with_id(TOUR, "preview-architecture-review"))
    (folder / "b.jsonl").write_bytes(_with_id(FORK, "preview-showcase"))
    return folder


def test_shown_ids_are_unique_among_the_run_and_the_sessions_root(tmp_path):
    ids = ["preview-architecture-review", "preview-showcase", None, ""]
    assert shown_ids(ids, root=tmp_path) == {"preview-architecture-review": "preview-a", "preview-showcase": "preview-s"}
    root = tmp_path / "sessions"
    (root / "--p--" / "preview-archive").mkdir(parents=True)
    assert shown_ids(ids, root=root)["preview-architecture-review"] == "preview-archit"  # the root's ids too
    assert shown_ids([], root=root) == {}
    assert shown_ids(["7c1e5a2d-3b9f-4e61"], root=tmp_path) == short_ids(["7c1e5a2d-3b9f-4e61"])


def _grep_ids(out: str) -> dict[str, str]:
    """log (the path after the folder's) → the id grep's lines show for it."""
    shown = {}
    for line in out.splitlines():
        path, session = re.match(r"(.*?\.jsonl[^:]*):([^:]+):", line).groups()
        shown[path.rsplit(os.sep, 2)[-1] if "sessions" not in path else path.rsplit(os.sep, 2)[-2]] = session
    return shown


def _plain_ids(out: str) -> list[str]:
    """The first column of the first plain table (a session table, its title ``sessions`` left out)."""
    table = out.split("sessions\n", 1)[-1] if out.startswith("sessions\n") else out
    rows = table.split("\n\n")[0].splitlines()[1:]
    return [row.split()[0] for row in rows if "  " in row]


@pytest.mark.parametrize("width", WIDTHS)
def test_ls_stats_and_grep_name_the_sessions_of_a_plain_folder_alike(tmp_path, width):
    folder = _preview_folder(tmp_path)
    grep = _grep_ids(invoke("grep", "-m", "1", "-i", "e", str(folder), status=0).stdout)
    assert grep == {"a.jsonl": "preview-a", "b.jsonl": "preview-s"}  # the root alone made both preview-
    for command in ("ls", "stats"):
        piped = _plain_ids(invoke(command, str(folder), status=0).stdout)
        assert sorted(piped) == ["preview-a", "preview-s"], (command, piped)
        boxed = invoke(command, str(folder), columns=width, terminal=True, status=0).stdout
        body = [line for line in boxed.split("sessions\n")[-1].splitlines() if line.startswith(BOX_BODY)][:2]
        cells = [line.split(BOX_BODY)[1].split()[0] for line in body]
        assert sorted(cells) == ["preview-a", "preview-s"], (command, width, boxed)  # whole, one line each
        tsv = invoke(command, "--tsv", str(folder), status=0).stdout.splitlines()
        assert sorted(line.split("\t")[0] for line in tsv[1:3]) == ["preview-architecture-review", "preview-showcase"]


def _root_with_twins(tmp_path) -> Path:
    home = tmp_path / "home"
    for session_id, source in (("session-64c38c41-1961-aaaa", TOUR), ("session-64c38c41-2222-bbbb", FORK)):
        directory = home / "sessions" / "--home-alice-proj--" / session_id
        directory.mkdir(parents=True)
        (directory / "session.v4.jsonl").write_bytes(_with_id(source, session_id))
    return home


def test_each_shown_id_opens_its_session(tmp_path):
    """Of the sessions root (where ids are looked up), every id ls, stats and grep show is a PATH that
    opens that very session; they show the same one."""
    home = _root_with_twins(tmp_path)
    root = home / "sessions"
    grep = invoke("grep", "-m", "1", "-i", "e", str(root), home=home, status=0).stdout
    grep_ids = sorted(set(_grep_ids(grep).values()))
    ls_ids = sorted(_plain_ids(invoke("ls", str(root), home=home, status=0).stdout))
    stats_ids = sorted(_plain_ids(invoke("stats", str(root), home=home, status=0).stdout))
    assert grep_ids == ls_ids == stats_ids == ["session-64c38c41-1", "session-64c38c41-2"]
    for shown, whole in zip(grep_ids, ["session-64c38c41-1961-aaaa", "session-64c38c41-2222-bbbb"]):
        assert find_session(shown, root=root).name == whole
        header = json.loads(invoke("cat", shown, home=home, status=0).stdout.splitlines()[0])
        assert header["id"] == whole


def test_grep_names_a_session_of_a_plain_folder_apart_from_the_roots(tmp_path):
    """A plain folder's session that shares a prefix with one of the sessions root is shown long enough to
    tell them apart, so the prefix never opens the other one."""
    home = _root_with_twins(tmp_path)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(_with_id(CWD_CHANGE, "session-64c38c41-1961-zzzz"))
    (folder / "y.jsonl").write_bytes(_with_id(TOUR, "session-aaaa0000"))
    out = invoke("grep", "-m", "1", "-i", "e", str(folder), home=home, status=0).stdout
    assert _grep_ids(out) == {"x.jsonl": "session-64c38c41-1961-z", "y.jsonl": "session-aaaa0000"}
    ls = _plain_ids(invoke("ls", str(folder), home=home, status=0).stdout)
    assert sorted(ls) == ["session-64c38c41-1961-z", "session-aaaa0000"]


def test_grep_of_one_log_and_of_standard_input_name_it_as_before(tmp_path):
    log = tmp_path / "one.jsonl"
    log.write_bytes(_with_id(TOUR, "preview-architecture-review"))
    line = invoke("grep", "-m", "1", "-i", "e", str(log), status=0).stdout.splitlines()[0]
    assert line.startswith("preview-:")  # alone, 8 characters are unique
    piped = run_cli("grep", "-m", "1", "-i", "e", "-", input=log.read_bytes(), env={"DSH_HOME": "/nonexistent-dsh-home"})
    assert piped.stdout.splitlines()[0].startswith("preview-:")
    both = invoke("grep", "-m", "1", "-i", "e", str(log), str(_preview_folder(tmp_path) / "b.jsonl"), status=0).stdout
    assert _grep_ids(both) == {"one.jsonl": "preview-a", "b.jsonl": "preview-s"}


def test_grep_reads_no_header_of_a_sessions_root_to_name_its_sessions(tmp_path, monkeypatch):
    """The sessions of a sessions root are named by their directories (dsh checks a header against its
    directory's name): the run opens no log before searching it."""
    from dshctl.grep import run as grep_run

    home = _root_with_twins(tmp_path)
    refs = resolve(str(home / "sessions"))
    opened = []
    monkeypatch.setattr("dshctl.reader.open_log", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(AssertionError))
    assert grep_run.session_ids_of(refs) == ["session-64c38c41-1961-aaaa", "session-64c38c41-2222-bbbb"]
    assert opened == []


def test_a_session_directory_below_a_plain_folder_that_cannot_be_chosen_is_an_unreadable_log(tmp_path):
    """Where it stopped the whole folder (a newer generation) or was passed over without a word (both
    encodings), it is one unreadable log of the folder, and the others are read."""
    folder = tmp_path / "corpus"
    for name, files in (("newer", ["session.v4.jsonl", "session.v9.jsonl"]), ("mixed", ["session.v4.jsonl", "session.v4.jsonl.zstd"])):
        (folder / name).mkdir(parents=True)
        for file in files:
            shutil.copy(TOUR, folder / name / file)
    shutil.copy(FORK, folder / "fork.jsonl")
    refs = resolve(str(folder))
    assert [(ref.display.rsplit(os.sep, 1)[-1], ref.problem is not None) for ref in refs] == [
        ("fork.jsonl", False), ("mixed", True), ("newer", True)]
    result = invoke("stats", str(folder), status=1)
    assert "both raw and zstd" in result.stderr and "newer dsh" in result.stderr
    with pytest.raises(dshctl.DshctlError, match="newer dsh"):
        resolve(str(folder / "newer"))  # named, it is an error


def test_folders_linked_in_a_loop_are_walked_once(tmp_path):
    folder = tmp_path / "loop"
    folder.mkdir()
    shutil.copy(TOUR, folder / "x.jsonl")
    for name in ("a", "b", "c"):
        (folder / name).symlink_to(".")  # each level would triple the walk: 3**40 folders before ELOOP
    (folder / "session.jsonl").symlink_to("x.jsonl")
    assert [ref.display for ref in resolve(str(folder))] == [str(folder / "session.jsonl"), str(folder / "x.jsonl")]


def test_an_unzipped_export_whose_subagents_link_back_ends(tmp_path):
    export = tmp_path / "dsh-session-x"
    for child in ("x", "y"):
        (export / "subagents" / child).mkdir(parents=True)
        shutil.copy(FORK, export / "subagents" / child / "session.jsonl")
        (export / "subagents" / child / "subagents").symlink_to("../../subagents")  # 2**n paths, never ending
    shutil.copy(TOUR, export / "session.jsonl")
    assert [str(ref.path.relative_to(export)) for ref in resolve(str(export))] == [
        "session.jsonl", "subagents/x/session.jsonl", "subagents/y/session.jsonl"]


@pytest.mark.parametrize("form", ["60", "80", "120", "pipe", "tsv"])
@pytest.mark.parametrize("command", ["ls", "stats"])
def test_a_plain_folder_holding_session_jsonl_lists_each_log_at_every_width(mixed, command, form):
    if form == "tsv":
        lines = invoke(command, "--tsv", str(mixed), status=0).stdout.split("\n\n")[0].splitlines()
        header = lines[0].split("\t")
        logs = [line.split("\t")[header.index("log")] for line in lines[1:]]
        assert sorted(logs) == sorted(str(mixed / name) for name in ("session.jsonl", "fork.jsonl", "cwd.jsonl.zst"))
        return
    terminal = form != "pipe"
    out = invoke(command, str(mixed), columns=int(form) if terminal else None, terminal=terminal, status=0).stdout
    table = out.split("sessions\n", 1)[-1].split("\n\n")[0].split("└")[0]  # the first table
    ids = [line.strip(BOX_BODY + " ").split()[0] for line in table.splitlines() if line.strip(BOX_BODY + " ")]
    assert sorted(i for i in ids if re.fullmatch("[0-9a-f]{8}", i)) == ["7c1e5a2d", "b4d2f6a8", "e8c1f3a5"], out
    assert len([line for line in table.splitlines() if line.startswith(BOX_BODY)]) in ((3,) if terminal else (0,))  # one line a log
    if terminal:
        assert all(len(line) <= int(form) for line in out.splitlines() if line[:1] in "┏┃┡│└")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_short_id_stays_whole_in_ls_and_stats_alike(tmp_path, width):
    """An agent's ids (``<agent>-session-<uuid>``) give short ids past 24 characters: ls cut them at their
    start (``…t-long-name-session-5d9e2c71``, which opens nothing) and stats folded them over two lines;
    both show them whole, hiding other columns first."""
    home = tmp_path / "home"
    ids = [f"reviewer-agent-long-name-session-5d9e2c7{n}-0b3a-4f68-a1c4-7e2b9d0f3a86" for n in (1, 2)]
    for session_id in ids:
        directory = home / "sessions" / "--home-alice-proj--" / session_id
        directory.mkdir(parents=True)
        (directory / "session.v4.jsonl").write_bytes(_with_id(TOUR, session_id))
    shown = [session_id[: len("reviewer-agent-long-name-session-5d9e2c7x")] for session_id in ids]
    for command in ("ls", "stats"):
        out = invoke(command, str(home / "sessions"), columns=width, terminal=True, home=home, status=0).stdout
        body = [line for line in out.split("└")[0].splitlines() if line.startswith(BOX_BODY)]
        assert [line.split(BOX_BODY)[1].strip() for line in body] == shown, (command, out)
        assert all(len(line) <= width for line in out.split("└")[0].splitlines())
    for session_id, prefix in zip(ids, shown):
        assert find_session(prefix, root=home / "sessions").name == session_id


# ----------------------------------------------------------------------------- every shown id opens

PREVIEWS = ("v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl",
            "v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl")


def _renamed_root(tmp_path, project: str) -> Path:
    """A sessions root whose one project folder is not named as dsh names one (renamed or copied in:
    ``<root>/proj/<id>/session.v2.jsonl``), holding the corpus's two preview sessions."""
    from conftest import corpus_file

    home = tmp_path / "home"
    for relative in PREVIEWS:
        log = corpus_file(relative)
        session_id = json.loads(log.read_bytes().split(b"\n", 1)[0])["id"]
        directory = home / "sessions" / project / session_id
        directory.mkdir(parents=True)
        shutil.copy(log, directory / "session.v2.jsonl")
    return home


@pytest.mark.corpus
@pytest.mark.parametrize("project", ["proj", "--dsh-workspace--", "copy of --dsh-workspace--"])
def test_every_id_ls_stats_and_grep_show_opens_with_cat_and_replay(tmp_path, project):
    """Every sub-directory of a sessions root is a project directory (FORMAT.md §1.4), whatever its name:
    the ids ls, stats and grep show of the default root open with cat and replay, short and whole."""
    home = _renamed_root(tmp_path, project)
    ls_ids = sorted(_plain_ids(invoke("ls", home=home, status=0).stdout))
    stats_ids = sorted(_plain_ids(invoke("stats", home=home, status=0).stdout))
    grep_ids = sorted(set(_grep_ids(invoke("grep", "-m", "1", "-i", "e", home=home, status=0).stdout).values()))
    assert ls_ids == stats_ids == grep_ids == ["preview-a", "preview-s"]
    for shown, whole in [("preview-a", "preview-architecture-review"), ("preview-s", "preview-showcase")]:
        for name in (shown, whole):
            header = json.loads(invoke("cat", name, home=home, status=0).stdout.splitlines()[0])
            assert header["id"] == whole
            replayed = invoke("replay", "--instant", name, home=home, status=0).stdout
            assert replayed.startswith(f"dsh session {whole} ")
        assert find_session(shown, root=home / "sessions").parent.name == project


def test_a_staging_folder_of_a_sessions_root_is_no_project(tmp_path):
    """dsh's ``.dsh-mkdir-*`` staging folders hold no session of the root."""
    home = tmp_path / "home"
    staged = home / "sessions" / ".dsh-mkdir-1234" / "session-staged"
    staged.mkdir(parents=True)
    (staged / "session.v4.jsonl").write_bytes(_with_id(TOUR, "session-staged"))
    with pytest.raises(dshctl.errors.SourceError):
        find_session("session-staged", root=home / "sessions")
