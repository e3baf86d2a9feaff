"""No home directory (``HOME`` unset, a uid without a passwd entry: ``env -i``, ``setpriv``, a container).

``Path.home()`` raises RuntimeError there. A log named by its path reads all the same (the sessions root
is only consulted: for the ids a short id is shown among, or whether a PATH is the root); a command that
needs the root says so (``no home directory: set HOME or DSH_HOME``, status 2); never a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import invoke, sample

TOUR = sample("tour.session.v4.jsonl")
NO_HOME = "no home directory: set HOME or DSH_HOME"


@pytest.fixture
def no_home(monkeypatch):
    def home(cls=None):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", classmethod(home))
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("DSH_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


@pytest.fixture
def root(tmp_path) -> Path:
    session = tmp_path / "sessions" / "--p--" / "session-7c1e"
    session.mkdir(parents=True)
    shutil.copy(TOUR, session / "session.v4.jsonl")
    return tmp_path / "sessions"


@pytest.mark.parametrize("command", [["stats"], ["stats", "--json"], ["ls"], ["grep", "-m", "1", "e"], ["cat"],
                                     ["validate"], ["replay", "--instant"], ["images"]])
def test_a_log_named_by_its_path_reads_without_a_home(no_home, root, command):
    for path in (TOUR, root):
        if command[0] in ("cat", "replay", "images") and path == root:
            continue
        result = invoke(*command, path, env={"DSH_HOME": None, "HOME": None})
        assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
        assert NO_HOME not in result.stderr


@pytest.mark.parametrize("command", [["ls"], ["stats"], ["stats", "7c1e"], ["stats", "--latest"], ["validate"],
                                     ["replay", "--latest"]])
def test_what_needs_the_sessions_root_says_there_is_no_home(no_home, command):
    result = invoke(*command, env={"DSH_HOME": None, "HOME": None}, status=2)
    assert result.stderr == f"dshctl: error: {NO_HOME}\n"


def test_dsh_home_stands_for_the_home(no_home, root):
    result = invoke("ls", env={"DSH_HOME": str(root.parent), "HOME": None}, status=0)
    assert "7c1e5a2d" in result.stdout


def _setpriv() -> list[str] | None:
    tool = shutil.which("setpriv")
    if tool is None or os.geteuid() != 0:
        return None
    probe = subprocess.run([tool, "--reuid", "54321", "--regid", "54321", "--clear-groups", "true"], capture_output=True)
    return [tool, "--reuid", "54321", "--regid", "54321", "--clear-groups"] if probe.returncode == 0 else None


@pytest.mark.skipif(_setpriv() is None, reason="needs setpriv as root (a uid without a passwd entry)")
def test_a_uid_without_a_passwd_entry():
    """The real thing: ``env -i`` and a uid no passwd entry names, as the review found it."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="dshctl-no-home-"))  # readable by that uid (pytest's tmp is not)
    try:
        log = folder / "tour.session.v4.jsonl"
        shutil.copy(TOUR, log)
        os.chmod(folder, 0o755)
        os.chmod(log, 0o644)
        repo = Path(__file__).resolve().parent.parent
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
        run = lambda *args: subprocess.run([*_setpriv(), sys.executable, "-m", "dshctl", "--no-color", *args],
                                           capture_output=True, text=True, env=env, cwd=folder)
        for args in (["stats", str(log)], ["ls", str(folder)], ["grep", "-m", "1", "e", str(log)]):
            result = run(*args)
            assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
        result = run("ls")
        assert (result.returncode, result.stderr) == (2, f"dshctl: error: {NO_HOME}\n")
    finally:
        shutil.rmtree(folder)
