"""Output that cannot be written is an error with one line and status 2, never a traceback; standard error
is best effort and never changes the status; a closed pipe stays quiet with status 0; a closed standard
input given as ``-`` is unreadable input.

Every case runs in its own process (stdout must really be /dev/full, closed or a broken pipe); the
processes of the whole matrix are started together so the module stays fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, sample, sigint_on_import

LOG = str(sample("tour.session.v4.jsonl.zstd"))
TORN = str(sample("torn-tail.session.v4.jsonl.zstd"))
ROOT = str(sample("sessions"))
STORE = str(sample("attachments"))
DSHCTL = [sys.executable, "-m", "dshctl.cli"]

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")

# every command, and every way dshctl writes standard output: NDJSON in batches, JSON, rich tables (ls,
# stats), validate's rendered reports, the replay transcript, the images manifest after extraction,
# click's own --version; small outputs fail only at the final flush, large ones mid-command. (One
# process per case costs ~0.15 s: modes that share a writer with a listed one are left out.)
# {out} is a directory of the case's own.
OUTPUT_MODES = {
    "cat": ["cat", LOG],
    "ls": ["ls", ROOT],
    "ls --ndjson": ["ls", "--ndjson", ROOT],
    "stats": ["stats", ROOT],
    "stats --json": ["stats", "--json", LOG],
    "validate junit": ["validate", "--format", "junit", LOG],
    "replay --instant": ["replay", "--instant", "--timestamps", LOG],
    "images --out --json": ["images", LOG, "--store", STORE, "--json", "--out", "{out}"],
    "--version": ["--version"],
}

# (name, arguments, shell redirections, expected status)
STDERR_CASES = [
    ("success, stderr full", ["cat", LOG], ">/dev/null 2>/dev/full", 0),
    ("warning, stderr closed", ["replay", "--instant", TORN], ">/dev/null 2>&-", 0),
    ("error, stderr full", ["cat", "/nonexistent/log"], ">/dev/null 2>/dev/full", 2),
    ("usage error, stderr full", ["cat", "--no-such-option"], ">/dev/null 2>/dev/full", 2),
    ("usage error, stderr closed", ["cat"], ">/dev/null 2>&-", 2),
    ("stdout full, stderr closed", ["validate", "--format", "sarif", LOG], ">/dev/full 2>&-", 2),
    ("export note, stderr closed", ["replay", LOG, "--export", "{out}/x.cast"], ">/dev/null 2>&-", 0),
]

STDIN_CLOSED = {"cat -": ["cat", "-"], "validate -": ["validate", "-"]}

BROKEN_PIPE = {
    "ls": ["ls", ROOT],
    "validate sarif": ["validate", "--format", "sarif", LOG],
    "replay --instant": ["replay", "--instant", LOG],
    "images --out": ["images", LOG, "--store", STORE, "--out", "{out}"],
}


def _out_dir(tmp: Path, case: str) -> Path:
    return tmp / "".join(c if c.isalnum() else "_" for c in case)


def _argv(args: list[str], tmp: Path, case: str) -> list[str]:
    """``{out}``: a directory of this case's own (images --out creates it; an export needs it)."""
    out = _out_dir(tmp, case)
    if any(a.startswith("{out}/") for a in args):
        out.mkdir()
    return [a.replace("{out}", str(out)) for a in args]


USER_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
"""A user's shell: standard error buffered, as Python has it without PYTHONUNBUFFERED (which CI machines
often set, and which hid a failing stderr turning the status into 120 at interpreter exit)."""


def _in_shell(args: list[str], redirections: str, stdout=subprocess.PIPE, command=DSHCTL) -> subprocess.CompletedProcess:
    script = f'exec "$@" {redirections}'
    return subprocess.run(["sh", "-c", script, "sh", *command, *args], stdout=stdout, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, cwd=REPO, env=USER_ENV, timeout=120)


def _into_broken_pipe(args: list[str]) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write fails with EPIPE, whatever its size
    try:
        return _in_shell(args, "", stdout=write_end)
    finally:
        os.close(write_end)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("output-errors")
    jobs: dict[tuple[str, str], object] = {}
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 2)) as pool:
        for name, args in OUTPUT_MODES.items():
            jobs["full", name] = pool.submit(_in_shell, _argv(args, tmp, "full " + name), ">/dev/full")
            jobs["closed", name] = pool.submit(_in_shell, _argv(args, tmp, "closed " + name), ">&-")
        for name, args in BROKEN_PIPE.items():
            jobs["pipe", name] = pool.submit(_into_broken_pipe, _argv(args, tmp, "pipe " + name))
        for name, args, redirections, _ in STDERR_CASES:
            jobs["stderr", name] = pool.submit(_in_shell, _argv(args, tmp, "stderr " + name), redirections)
        for name, args in STDIN_CLOSED.items():
            jobs["stdin", name] = pool.submit(_in_shell, args, "<&-")
        done = {key: job.result() for key, job in jobs.items()}
    return tmp, done


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    err = result.stderr.decode()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.count("\n") == 1 and err.startswith("dshctl: error: "), err
    return err.strip()


@pytest.mark.parametrize("name", OUTPUT_MODES)
def test_stdout_full_is_one_error_line_and_status_2(results, name):
    result = results[1]["full", name]
    assert result.returncode == 2, result.stderr
    assert _one_error_line(result) == "dshctl: error: cannot write standard output: No space left on device"


@pytest.mark.parametrize("name", OUTPUT_MODES)
def test_stdout_closed_is_one_error_line_and_status_2(results, name):
    result = results[1]["closed", name]
    assert result.returncode == 2, result.stderr
    assert _one_error_line(result) == "dshctl: error: cannot write standard output: it is closed"


def test_stdin_closed_is_one_error_line_and_status_2(results):
    result = results[1]["stdin", "cat -"]
    assert result.returncode == 2, result.stderr
    assert _one_error_line(result) == "dshctl: error: <stdin>: standard input is closed"


def test_validate_reports_a_closed_stdin_as_unreadable(results):
    result = results[1]["stdin", "validate -"]
    assert result.returncode == 2, result.stderr
    assert b"<stdin>: unreadable [codec/read] standard input is closed" in result.stdout
    assert result.stderr == b""


@pytest.mark.parametrize("name", BROKEN_PIPE)
def test_closed_pipe_stays_quiet_with_status_0(results, name):
    result = results[1]["pipe", name]
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""


@pytest.mark.parametrize("name, args, redirections, status", STDERR_CASES, ids=[c[0] for c in STDERR_CASES])
def test_failing_stderr_never_changes_the_status(results, name, args, redirections, status):
    result = results[1]["stderr", name]
    assert result.returncode == status
    assert result.stderr == b""  # the shell's pipe is not where the redirected stderr went


def test_export_with_stderr_closed_still_writes_the_file(results):
    cast = _out_dir(results[0], "stderr export note, stderr closed") / "x.cast"
    assert results[1]["stderr", "export note, stderr closed"].returncode == 0
    assert cast.read_text().startswith('{"version": 2')


@pytest.mark.parametrize(
    "when, args",
    [(["cat"], ["cat", LOG]), (["commands", "options"], ["cat", LOG]), (["typer", "msgspec"], ["cat", "--", LOG])],
    ids=["while the command starts", "while imported", "while typer is imported"],
)
def test_ctrl_c_with_a_failing_stderr_is_still_status_130(when, args):
    """Ctrl-C ends a command with 130 and ``dshctl: interrupted`` on standard error; standard error full
    loses the line, never the status: through the command's error path (a Ctrl-C noted while the command
    starts) and through the console script's own (a second Ctrl-C while the command line is imported:
    the fast parse's modules, or typer for a command line only typer reads, ``--``)."""
    result = _in_shell(args, ">/dev/null 2>/dev/full", command=sigint_on_import(*when))
    assert result.returncode == 130
