"""A session folder renamed away from its header's id (issue 26, left open by the last stop).

``ls``, ``stats`` and ``grep`` show a session by its header's id; dsh names a session's folder by that id
(FORMAT.md §1.2) and refuses a session whose folder says another (§1.4). dshctl reads it, and every id it
shows opens: :func:`dshctl.source.find_session` looks a session up by its folder's name and, only when no
name matches, by the header line of each session's log (:func:`dshctl.source.headers.header_id`). A
folder renamed onto another session's id is shown by its header's id and opens by it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import zstandard

from conftest import invoke as run_cli, sample
from dshctl.errors import SourceError, UsageError
from dshctl.source import find_session
from dshctl.source import headers as header_lines

TOUR = sample("tour.session.v4.jsonl")
FORK = sample("fork-child.session.v4.jsonl")
CWD_CHANGE = sample("cwd-change.session.v4.jsonl")
PROJECT = "--home-alice-proj--"
RENAMED = "session-64c38c41-1961-4698-aaaa-000000000001"
PLAIN = "session-9f00aa11-2222-4698-bbbb-000000000002"
WIDTHS = (60, 80, 120)


def invoke(*args, home: Path, columns: int | None = None, terminal: bool = False, status: int | None = None):
    return run_cli(*args, home=home, env={"COLUMNS": str(columns) if columns else None}, status=status, terminal=terminal)


def _with_id(source: Path, session_id: str) -> bytes:
    head, _, rest = source.read_bytes().partition(b"\n")
    header = json.loads(head)
    header["id"] = session_id
    return json.dumps(header).encode() + b"\n" + rest


def _zstd(data: bytes) -> bytes:
    """As dsh writes a log: the header line in a frame of its own, then the rest."""
    head, _, rest = data.partition(b"\n")
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return compressor.compress(head + b"\n") + compressor.compress(rest)


def _session(home: Path, folder: str, data: bytes, project: str = PROJECT) -> Path:
    directory = home / "sessions" / project / folder
    directory.mkdir(parents=True)
    (directory / "session.v4.jsonl.zstd").write_bytes(_zstd(data))
    return directory


@pytest.fixture
def home(tmp_path) -> Path:
    """A sessions root of two sessions: one whose folder was renamed ``mywork``, one as dsh names it."""
    home = tmp_path / "home"
    _session(home, "mywork", _with_id(TOUR, RENAMED))
    _session(home, PLAIN, _with_id(FORK, PLAIN))
    return home


def _first_column(out: str) -> list[str]:
    table = out.split("sessions\n", 1)[-1] if out.startswith("sessions\n") else out
    return [row.split()[0] for row in table.split("\n\n")[0].splitlines()[1:] if "  " in row]


def _grep_ids(out: str) -> list[str]:
    return sorted({re.match(r"(?:.*?\.jsonl\.zstd:)?([^:]+):", line).group(1) for line in out.splitlines()})


def _shown(home: Path) -> dict[str, list[str]]:
    return {
        "ls": sorted(_first_column(invoke("ls", home=home, status=0).stdout)),
        "stats": sorted(_first_column(invoke("stats", home=home, status=0).stdout)),
        "grep": _grep_ids(invoke("grep", "-m", "1", "-i", "e", home=home, status=0).stdout),
    }


def _opens(name: str, home: Path) -> str:
    """The header id of the session ``name`` opens, by every command that takes one session; each agrees."""
    header = json.loads(invoke("cat", name, home=home, status=0).stdout.splitlines()[0])
    assert invoke("replay", "--instant", name, home=home, status=0).stdout.startswith(f"dsh session {header['id']} ")
    stats = json.loads(invoke("stats", "--json", name, home=home, status=0).stdout)
    assert [session["id"] for session in stats["sessions"]] == [header["id"]]
    images = invoke("images", "--json", name, home=home)
    assert images.exit_code in (0, 1) and "no such" not in images.stderr, images.stderr
    return header["id"]


def test_the_id_shown_for_a_renamed_folder_opens_it(home):
    shown = _shown(home)
    assert shown["ls"] == shown["stats"] == shown["grep"] == ["session-64c38c41", "session-9f00aa11"]
    for name, whole in [("session-64c38c41", RENAMED), (RENAMED, RENAMED), ("64c38c41", RENAMED),
                        ("session-9f00aa11", PLAIN), ("mywork", RENAMED)]:
        assert _opens(name, home) == whole, name
    assert find_session("session-64c38c41", root=home / "sessions").name == "mywork"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_renamed_folders_short_id_is_whole_at_every_width(home, width):
    for command in ("ls", "stats"):
        out = invoke(command, home=home, columns=width, terminal=True, status=0).stdout
        body = [line for line in out.split("└")[0].splitlines() if line.startswith("│")][:2]
        assert sorted(line.split("│")[1].split()[0] for line in body) == ["session-64c38c41", "session-9f00aa11"], out


def test_headers_are_read_only_when_no_folder_name_matches(home, monkeypatch):
    read = []
    real = header_lines.header_id
    monkeypatch.setattr(header_lines, "header_id", lambda log: read.append(log) or real(log))
    root = home / "sessions"
    assert find_session(PLAIN, root=root).name == PLAIN
    assert find_session("mywork", root=root).name == "mywork"
    assert read == []  # a whole name matched: no log opened
    assert find_session("session-9f00", root=root).name == PLAIN
    assert [path.parent.name for path in read] == ["mywork"]  # a prefix: only the folder named as no id is
    read.clear()
    assert find_session("session-64c3", root=root).name == "mywork"
    assert sorted(path.parent.name for path in read) == sorted(["mywork", PLAIN])  # each log's header, once
    read.clear()
    with pytest.raises(SourceError, match="no such file, directory or session id"):
        find_session("session-0000", root=root)
    assert len(read) == 2


def test_two_renamed_folders_sharing_a_prefix_are_a_clear_ambiguity(home):
    _session(home, "elsewhere", _with_id(CWD_CHANGE, "session-64c38c41-1961-4698-cccc-000000000003"), project="--other--")
    with pytest.raises(UsageError) as raised:
        find_session("session-64c38c41-1961", root=home / "sessions")
    message = str(raised.value)
    assert "is ambiguous" in message and f"{RENAMED} ({PROJECT}/mywork)" in message and "(--other--/elsewhere)" in message
    result = invoke("cat", "session-64c38c41-1961", home=home, status=2)
    assert result.stderr.startswith("dshctl: error: session id prefix 'session-64c38c41-1961' is ambiguous")
    # the ids shown tell them apart, and each opens its own
    shown = sorted(_first_column(invoke("ls", home=home, status=0).stdout))
    assert shown == ["session-64c38c41-1961-4698-a", "session-64c38c41-1961-4698-c", "session-9f00aa11"]
    assert _opens(shown[0], home) == RENAMED
    assert _opens(shown[1], home) == "session-64c38c41-1961-4698-cccc-000000000003"


def test_a_prefix_a_folder_name_and_a_renamed_folders_header_share_is_ambiguous(tmp_path, monkeypatch):
    """``ls`` shows ``session-abcd1111`` and ``session-abcd2222`` (renamed ``mywork``): ``abcd`` names both,
    and is refused as ambiguous rather than opening the one whose folder's name says it; a folder named
    as an id is not read for it (its header is only read when several names match)."""
    home = tmp_path / "home"
    named, renamed = "session-abcd1111-0000-4698-aaaa-000000000001", "session-abcd2222-0000-4698-bbbb-000000000002"
    _session(home, named, _with_id(TOUR, named), project="--p--")
    _session(home, "mywork", _with_id(FORK, renamed), project="--p--")
    _session(home, PLAIN, _with_id(CWD_CHANGE, PLAIN), project="--p--")
    assert sorted(_first_column(invoke("ls", home=home, status=0).stdout)) == ["session-9f00aa11", "session-abcd1111", "session-abcd2222"]
    result = invoke("stats", "abcd", "--tsv", home=home, status=2)
    assert result.stderr.startswith("dshctl: error: session id prefix 'abcd' is ambiguous"), result.stderr
    assert f"{named} (--p--)" in result.stderr and f"{renamed} (--p--/mywork)" in result.stderr
    for query, whole in [("abcd1", named), ("session-abcd1111", named), (named, named), ("abcd2", renamed), ("mywork", renamed)]:
        assert _opens(query, home) == whole, query
    read = []
    real = header_lines.header_id
    monkeypatch.setattr(header_lines, "header_id", lambda log: read.append(log) or real(log))
    assert find_session("abcd1", root=home / "sessions").name == named
    assert [path.parent.name for path in read] == ["mywork"]
    # a whole id a renamed folder's header holds is that session, though a folder's name begins with it
    _session(home, renamed + "-copy", _with_id(CWD_CHANGE, renamed + "-copy"), project="--p--")
    assert find_session(renamed, root=home / "sessions").name == "mywork"


def test_a_folder_renamed_onto_another_sessions_id_opens_by_its_header(home):
    """A folder whose name is a session id but whose header says another: it is shown by its header's id,
    which opens it; the other session, whose folder bears the same name elsewhere, opens by its own."""
    stranger = "session-e8c1f3a5-7b9d-4e2f-8a6c-0d4b2f6e8a13"
    _session(home, PLAIN, _with_id(CWD_CHANGE, stranger), project="--other--")
    shown = _shown(home)
    assert shown["ls"] == shown["stats"] == shown["grep"] == ["session-64c38c41", "session-9f00aa11", "session-e8c1f3a5"]
    assert _opens("session-e8c1f3a5", home) == stranger
    assert _opens("session-9f00aa11", home) == PLAIN  # two folders of that name: the one whose header says it
    assert _opens(PLAIN, home) == PLAIN
    assert find_session("session-e8c1f3a5", root=home / "sessions").parent.name == "--other--"


def test_a_folder_named_as_an_id_its_header_does_not_hold_opens_by_both(tmp_path):
    home = tmp_path / "home"
    _session(home, "session-11112222-3333", _with_id(CWD_CHANGE, "session-e8c1f3a5-0000"))
    _session(home, PLAIN, _with_id(FORK, PLAIN))
    shown = _shown(home)
    assert shown["ls"] == shown["stats"] == shown["grep"] == ["session-9f00aa11", "session-e8c1f3a5"]
    assert _opens("session-e8c1f3a5", home) == "session-e8c1f3a5-0000"
    assert _opens("session-1111", home) == "session-e8c1f3a5-0000"


@pytest.mark.parametrize("content", [
    b"",                                   # empty
    b'{"type":"session","id":"session-64c38c41-x"',  # no line feed: torn
    b"not json\n",
    b'{"type":"turn/start","id":"session-64c38c41-x"}\n',  # no session header
    b'{"type":"session","id":42}\n',       # no string id
    b'{"type":"session","id":""}\n',
    b"{" + b" " * (2 << 20) + b"\n",        # a first line past the bound
])
def test_a_header_that_names_no_id_is_passed_over(tmp_path, content):
    log = tmp_path / "session.v4.jsonl"
    log.write_bytes(content)
    assert header_lines.header_id(log) is None


@pytest.mark.parametrize("form", ["zstd, the header in a frame of its own", "zstd, one frame", "raw"])
def test_the_header_lookup_reads_the_first_line_and_no_further(tmp_path, monkeypatch, form):
    """Bounded as dsh's listing: one line, of the first zstd frame, read and decoded in small steps; a long
    rest (a zstd bomb, a single frame holding the whole log, a raw log) is neither read nor decoded past a
    few KiB, and a FIFO named as a log is not opened."""
    head = json.dumps({"type": "session", "version": 4, "id": "session-abc", "createdAt": 1}).encode() + b"\n"
    rest = b"".join(b'{"type":"x","n":%d}\n' % n for n in range(1 << 16)) + b"x" * (4 << 20) + b"\n"
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    log = tmp_path / ("session.v4.jsonl" if form == "raw" else "session.v4.jsonl.zstd")
    log.write_bytes({"raw": head + rest, "zstd, one frame": compressor.compress(head + rest),
                     "zstd, the header in a frame of its own": compressor.compress(head) + compressor.compress(rest)}[form])
    made = []

    class Recorded(header_lines._HeaderLineReader):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(header_lines, "_HeaderLineReader", Recorded)
    assert header_lines.header_id(log) == "session-abc"
    assert made and made[0].bytes_read <= 16 << 10 and made[0].bytes_decoded <= 16 << 10, (made[0].bytes_read, made[0].bytes_decoded)
    fifo = tmp_path / "fifo" / "session.v4.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    assert header_lines.header_id(fifo) is None


def test_the_header_lookup_never_decodes_a_bomb(tmp_path):
    head = json.dumps({"type": "session", "version": 4, "id": "session-abc", "createdAt": 1}).encode() + b"\n"
    log = tmp_path / "session.v4.jsonl.zstd"
    log.write_bytes(zstandard.ZstdCompressor().compress(b"x" * (256 << 20)))  # no LF: a line past the bound
    assert header_lines.header_id(log) is None
    log.write_bytes(zstandard.ZstdCompressor().compress(head) + zstandard.ZstdCompressor().compress(b"x" * (256 << 20)))
    assert header_lines.header_id(log) == "session-abc"


def test_a_renamed_project_folder_beside_dshs_own_is_listed_and_opens(home):
    """Every sub-directory of the sessions root is a project directory, as dsh reads a root (§1.4), also
    beside the ``--slug--`` ones dsh names: its sessions are listed (they were passed over) and open."""
    _session(home, "session-77aa0000-1111", _with_id(CWD_CHANGE, "session-77aa0000-1111"), project="copied in")
    shown = _shown(home)
    assert shown["ls"] == shown["stats"] == shown["grep"] == ["session-64c38c41", "session-77aa0000", "session-9f00aa11"]
    assert _opens("session-77aa0000", home) == "session-77aa0000-1111"
    named = sorted(_first_column(invoke("ls", str(home / "sessions"), home=home, status=0).stdout))
    assert named == shown["ls"]  # the root named as a PATH reads alike
    (home / "sessions" / ".dsh-mkdir-1234" / "session-staged").mkdir(parents=True)
    (home / "sessions" / ".dsh-mkdir-1234" / "session-staged" / "session.v4.jsonl.zstd").write_bytes(_zstd(_with_id(TOUR, "session-staged")))
    assert _shown(home)["ls"] == shown["ls"]  # dsh's staging is no project


def test_another_folder_holding_project_folders_is_read_as_before(tmp_path):
    """Outside the sessions root, a folder with ``--slug--`` sub-directories reads only those (a folder
    beside them is not taken for a project, whose loose logs would be the obsolete flat layout)."""
    elsewhere = tmp_path / "backup"
    _session(elsewhere, "session-1234abcd", _with_id(TOUR, "session-1234abcd"))
    (elsewhere / "sessions" / "notes").mkdir()
    (elsewhere / "sessions" / "notes" / "x.jsonl").write_bytes(FORK.read_bytes())
    listed = invoke("ls", str(elsewhere / "sessions"), home=tmp_path / "home", status=0).stdout
    assert _first_column(listed) == ["session-1234abcd"]


def test_a_session_reachable_twice_through_a_link_is_one_session(tmp_path):
    """``sessions/alias -> --p--``: ``ls`` lists its sessions once (by directory identity), and the id it
    shows opens that one session, never an ambiguity between it and itself."""
    home = tmp_path / "home"
    named = "session-abcd1111-0000-4698-aaaa-000000000001"
    _session(home, named, _with_id(TOUR, named), project="--p--")
    _session(home, "mywork", _with_id(FORK, PLAIN), project="--p--")
    (home / "sessions" / "alias").symlink_to("--p--")
    (home / "sessions" / "--p--" / "copy").symlink_to("mywork")
    assert sorted(_first_column(invoke("ls", home=home, status=0).stdout)) == ["session-9f00aa11", "session-abcd1111"]
    for query, whole in [("session-abcd1111", named), ("abcd", named), (named, named), ("9f00", PLAIN),
                         ("session-9f00aa11", PLAIN), ("mywork", PLAIN)]:
        assert _opens(query, home) == whole, query
    assert find_session("abcd", root=home / "sessions").parent.name == "--p--"  # the path reached through no link
    assert find_session("9f00", root=home / "sessions").name == "mywork"
