"""Walking a plain folder of logs ends on any tree (review of the sessdir walk): directory links that
leave the named folder are passed over (a link to ``/`` or ``/proc`` walked the whole filesystem), a
link that stays inside is followed once, a folder nested a thousand deep is walked without Python
recursion, and a walk stops with an error past :data:`~dshctl.source.paths.MAX_WALKED_DIRS`."""

from __future__ import annotations

import os
import shutil

import pytest

import dshctl
from conftest import sample
from dshctl.source import paths, resolve
from test_session_dirs import invoke

TOUR = sample("tour.session.v4.jsonl")
FORK = sample("fork-child.session.v4.jsonl")


@pytest.fixture
def escaping(tmp_path):
    """A folder with one log and links to ``/``, ``/proc`` and a sibling folder holding a log."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(TOUR, folder / "tour.jsonl")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(FORK, outside / "fork.jsonl")
    (folder / "root").symlink_to("/")
    (folder / "proc").symlink_to("/proc")
    (folder / "out").symlink_to(outside)
    return folder


def test_links_leaving_the_folder_are_passed_over(escaping):
    assert [ref.display for ref in resolve(str(escaping))] == [str(escaping / "tour.jsonl")]


@pytest.mark.parametrize("command", [["ls"], ["stats"], ["grep", "zzz-no-such-text"], ["validate"]])
def test_commands_on_a_folder_linking_to_root_and_proc_end(escaping, command):
    result = invoke(*command, str(escaping))
    assert result.exit_code in (0, 1), result.stderr
    assert "fork" not in result.stdout and "Traceback" not in result.stderr
    if command[0] in ("ls", "stats"):
        assert "tour" in result.stdout or "7c" in result.stdout or result.stdout.strip()


def test_a_link_inside_the_folder_is_followed_once(tmp_path):
    folder = tmp_path / "logs"
    (folder / "real").mkdir(parents=True)
    shutil.copy(FORK, folder / "real" / "fork.jsonl")
    (folder / "again").symlink_to("real")  # reached twice: read once, where first reached
    (folder / "nested").mkdir()
    (folder / "nested" / "up").symlink_to("../real")
    assert [ref.display for ref in resolve(str(folder))] == [str(folder / "again" / "fork.jsonl")]
    linked = tmp_path / "link"
    linked.symlink_to(folder)  # the named path may itself be a link: what is inside it is still inside
    assert [ref.display for ref in resolve(str(linked))] == [str(linked / "again" / "fork.jsonl")]


def _remove_nested(folder):
    """Remove ``folder/d/d/…`` a level at a time (shutil.rmtree, pytest's cleanup too, recurses per level)."""
    while (folder / "d").is_dir():
        if (folder / "d" / "d").is_dir():
            (folder / "d" / "d").rename(folder / "up")
        for entry in (folder / "d").iterdir():
            entry.unlink()
        (folder / "d").rmdir()
        if (folder / "up").is_dir():
            (folder / "up").rename(folder / "d")


@pytest.fixture
def deep(tmp_path):
    folder = tmp_path / "deep"
    yield folder
    _remove_nested(folder)


def test_a_folder_nested_a_thousand_deep_is_walked(deep):
    folder = deep
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(1000):  # one level at a time through a directory fd: no path near PATH_MAX
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("x.jsonl", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "wb") as out:
            out.write(TOUR.read_bytes())
    finally:
        os.close(fd)
    shutil.copy(FORK, folder / "fork.jsonl")
    refs = resolve(str(folder))
    assert [ref.display for ref in refs] == [str(folder) + (os.sep + "d") * 1000 + os.sep + "x.jsonl", str(folder / "fork.jsonl")]
    result = invoke("ls", str(folder))
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr


def test_a_walk_past_the_cap_is_an_error(tmp_path, monkeypatch):
    folder = tmp_path / "wide"
    for index in range(12):
        (folder / f"f{index:02}").mkdir(parents=True)
    shutil.copy(TOUR, folder / "f11" / "x.jsonl")
    assert len(resolve(str(folder))) == 1
    monkeypatch.setattr(paths, "MAX_WALKED_DIRS", 10)
    with pytest.raises(dshctl.DshctlError, match="more than 10 directories"):
        resolve(str(folder))
    result = invoke("ls", str(folder), status=2)
    assert "more than 10 directories" in result.stderr


def test_ls_of_a_log_gone_since_it_was_found_is_an_unreadable_row(tmp_path, monkeypatch):
    """``ls /`` found a log in another process's temporary folder that was deleted before it was read:
    a FileNotFoundError traceback from the listing's stat; now a row that says why, as stats says it."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(TOUR, folder / name)
    found = paths._FolderWalk.logs

    def found_then_deleted(self):
        refs = found(self)
        os.unlink(refs[0].path)
        return refs

    monkeypatch.setattr(paths._FolderWalk, "logs", found_then_deleted)
    result = invoke("ls", str(folder), status=1)
    assert "Traceback" not in result.stderr
    assert "No such file or directory" in result.stdout + result.stderr
