"""``replay --export``: the file is written whole or not at all, an existing file only with ``--force``
(a device or FIFO is a stream, written in place without it), and every way the file cannot be written is one error line with status 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, invoke, sample

LOG = str(sample("tour.session.v4.jsonl"))


def export(target: Path, *extra: str):
    return invoke("replay", LOG, "--export", str(target), *extra)


def error_of(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dshctl: error: "), result.stderr
    return lines[0]


def test_into_a_missing_directory(tmp_path):
    target = tmp_path / "missing" / "x.cast"
    assert error_of(export(target)) == f"dshctl: error: cannot write {target}: No such file or directory"


def test_onto_a_directory_even_with_force(tmp_path):
    target = tmp_path / "x.cast"
    target.mkdir()
    for extra in ((), ("--force",)):
        assert error_of(export(target, *extra)) == f"dshctl: error: cannot write {target}: it is a directory"
    assert target.is_dir() and not any(target.iterdir())


def test_an_existing_file_needs_force(tmp_path):
    target = tmp_path / "x.md"
    target.write_text("keep me")
    assert error_of(export(target)) == f"dshctl: error: {target} already exists (--force overwrites)"
    assert target.read_text() == "keep me"
    result = export(target, "--force")
    assert result.exit_code == 0, result.output
    assert target.read_text().startswith("# ")
    assert os.listdir(tmp_path) == ["x.md"]


def drained(fifo: Path):
    """A reader thread draining ``fifo`` (opened for reading, as a shell pipeline would); its ``join()``
    returns what it read."""
    import threading

    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:
            got.append(stream.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()

    class Reader:
        @staticmethod
        def join() -> bytes:
            thread.join(timeout=30)
            if thread.is_alive():  # never opened for writing: let the reader go before failing
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                thread.join(timeout=5)
                pytest.fail(f"nothing wrote through {fifo}")
            return got[0]

    return Reader


def test_a_device_is_written_without_force():
    """/dev/null is a stream, not a file being overwritten: written in place, no --force, still a device."""
    import stat

    for form in ("md", "cast", "html"):
        result = export(Path("/dev/null"), "--format", form)
        assert result.exit_code == 0, result.output
        assert result.stderr.startswith("dshctl: wrote /dev/null"), result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("extra", [(), ("--force",)])
def test_a_fifo_is_written_in_place(tmp_path, extra):
    """A named pipe gets the export through it, with or without --force; it stays a pipe, and nothing is
    left beside it."""
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = drained(fifo)
    result = export(fifo, "--format", "md", *extra)
    assert result.exit_code == 0, result.output
    assert reader.join().decode().startswith("# ")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["pipe"]


def test_dev_stdout_on_a_pipe_is_standard_output():
    done = subprocess.run([sys.executable, "-m", "dshctl", "--no-color", "replay", LOG, "--export", "/dev/stdout", "--format", "md"],
                          capture_output=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("# ") and done.stderr.decode() == "dshctl: wrote /dev/stdout (markdown)\n"


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1"])
def test_dev_stdout_redirected_to_a_file_is_written_through(tmp_path, name):
    """``--export /dev/stdout >> out.md``: the name of a descriptor, not a file to replace (replacing it
    would replace the /dev/stdout link): written in place, appended, without --force."""
    out = tmp_path / "out.md"
    out.write_text("kept\n")
    with open(out, "ab") as stdout:
        done = subprocess.run([sys.executable, "-m", "dshctl", "--no-color", "replay", LOG, "--export", name, "--format", "md"],
                              stdout=stdout, stderr=subprocess.PIPE, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("kept\n# ") and os.listdir(tmp_path) == ["out.md"]
    assert os.path.islink("/dev/stdout")


def test_a_dangling_symlink_is_an_existing_name(tmp_path):
    target = tmp_path / "x.ndjson"
    target.symlink_to(tmp_path / "elsewhere.ndjson")
    assert "already exists" in error_of(export(target))
    assert not (tmp_path / "elsewhere.ndjson").exists()


def test_force_only_with_export():
    result = invoke("replay", LOG, "--instant", "--force")
    assert error_of(result) == "dshctl: error: --force only applies with --export FILE"


def test_never_onto_the_log_being_replayed(tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_bytes(Path(LOG).read_bytes())
    result = invoke("replay", str(log), "--export", str(log), "--force")
    assert "is the log being replayed" in error_of(result)
    assert log.read_bytes() == Path(LOG).read_bytes()


def _export_with_file_size_limit(target: Path, *extra: str) -> subprocess.CompletedProcess:
    """A file system that fills up mid-export: writes past a few KiB fail (EFBIG; Python ignores SIGXFSZ)."""
    script = 'ulimit -f 2 && exec "$@"'
    argv = [sys.executable, "-m", "dshctl.cli", "--no-color", "replay", LOG, "--export", str(target), *extra]
    return subprocess.run(["sh", "-c", script, "sh", *argv], capture_output=True, cwd=REPO, timeout=60)


def test_a_failed_export_leaves_no_file_and_keeps_the_old_one(tmp_path):
    fresh = tmp_path / "fresh.cast"
    result = _export_with_file_size_limit(fresh)
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode() == f"dshctl: error: cannot write {fresh}: File too large\n"
    assert os.listdir(tmp_path) == []

    old = tmp_path / "old.cast"
    old.write_text("the previous export")
    result = _export_with_file_size_limit(old, "--force")
    assert result.returncode == 2, result.stderr
    assert old.read_text() == "the previous export"
    assert os.listdir(tmp_path) == ["old.cast"]


@pytest.mark.parametrize("hard_links", [True, False], ids=["link", "no hard links"])
def test_a_file_that_appears_during_the_export_is_kept(tmp_path, monkeypatch, hard_links):
    from dshctl.errors import OutputError
    from dshctl.files import new_text_file

    def no_hard_links(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    if not hard_links:
        monkeypatch.setattr(os, "link", no_hard_links)
    written = tmp_path / "written.md"
    with new_text_file(written, force=False) as out:
        out.write("export")
    assert written.read_text() == "export"

    raced = tmp_path / "raced.md"
    try:
        with new_text_file(raced, force=False) as out:
            out.write("export")
            raced.write_text("appeared meanwhile")
    except OutputError as exc:
        assert "already exists" in str(exc)
    else:
        raise AssertionError("a file was overwritten without --force")
    assert raced.read_text() == "appeared meanwhile"
    assert sorted(os.listdir(tmp_path)) == ["raced.md", "written.md"]
