"""What the tests share: where the samples and the corpus are, and one way to run the command line.

* ``samples/`` is part of the repository, so a sample a test names must be there: :func:`sample` and
  :func:`samples` raise when it is not (renamed, or not regenerated), and the module fails to collect —
  loudly, never a skip.
* The corpus (dsh's own fixtures) is not: it lies beside the checkout, ``../shared/corpus``, or where
  ``$DSHCTL_CORPUS`` says. Where it is absent every corpus test (marked ``@pytest.mark.corpus``, or
  calling :func:`need_corpus`) skips with one reason, printed once in the header and once in the
  summary. A ``$DSHCTL_CORPUS`` that names no directory is a usage error, not a skip.
* :func:`invoke` runs ``dshctl ARGS`` in process (typer's ``CliRunner`` over ``dshctl.cli.app``);
  :func:`sigint_on_import` starts the console script in a process that a Ctrl-C hits while it starts.

Test modules import these names (``from conftest import SAMPLES, invoke``): tests/ is on ``sys.path``
under pytest, and for the scripts beside them (``golden.py``, ``mutate.py``) as their own directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
CORPUS_NAMED = os.environ.get("DSHCTL_CORPUS")
CORPUS = Path(CORPUS_NAMED) if CORPUS_NAMED else REPO.parent / "shared" / "corpus"
HAS_CORPUS = CORPUS.is_dir()
NO_CORPUS = f"the corpus is not at {CORPUS} (set DSHCTL_CORPUS to dsh's fixtures, shared/corpus)"
_MACHINE_CACHE = "DSHCTL_TEST_MACHINE_CACHE"
MACHINE_CACHE = Path(os.environ.get(_MACHINE_CACHE) or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
"""The user's cache directory, before the run points ``XDG_CACHE_HOME`` at its own (dshctl's caches);
for what the tests download, checked, and may keep across runs (dsh's npm packages). xdist's workers
start after that and learn it from ``_MACHINE_CACHE``."""


class MissingSample(LookupError):
    """A sample a test names is not in samples/ (they are committed: ``python samples/generate.py``)."""


def sample(name: str) -> Path:
    """``samples/NAME``, which must exist."""
    path = SAMPLES / name
    if not path.exists():
        raise MissingSample(f"samples/{name} is missing: samples are part of the repository "
                            "(renamed? regenerate with python samples/generate.py)")
    return path


def samples(pattern: str) -> list[Path]:
    """The files of samples/ matching ``pattern``, sorted; at least one."""
    found = sorted(path for path in SAMPLES.glob(pattern) if path.is_file())
    if not found:
        raise MissingSample(f"no file in samples/ matches {pattern!r}: samples are part of the repository")
    return found


def need_corpus() -> Path:
    """The corpus directory; skips the calling test (with the one reason) where it is absent."""
    if not HAS_CORPUS:
        pytest.skip(NO_CORPUS)
    return CORPUS


def corpus_file(relative: str) -> Path:
    """``CORPUS/RELATIVE``: where the corpus is present, the file must be in it."""
    path = CORPUS / relative
    if HAS_CORPUS and not path.exists():
        raise MissingSample(f"{relative} is not in the corpus at {CORPUS}")
    return path


def corpus_files(*patterns: str, names: bool = False) -> list:
    """For ``parametrize``: the corpus files matching each pattern in turn (each matching at least one
    where the corpus is present; with ``names``, their paths relative to the corpus), or one
    placeholder that skips with the corpus reason where it is absent."""
    if not HAS_CORPUS:
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.corpus)]
    found = []
    for pattern in patterns:
        matched = sorted(CORPUS.glob(pattern))
        if not matched:
            raise MissingSample(f"no file of the corpus at {CORPUS} matches {pattern!r}")
        found += sorted(str(path.relative_to(CORPUS)) for path in matched) if names else matched
    return found


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "corpus: reads dsh's fixtures (../shared/corpus or $DSHCTL_CORPUS); "
                            "skipped where they are absent")
    config.addinivalue_line("markers", "serial: times what it watches (a terminal, a browser, a process writing): "
                            "under pytest-xdist, no other test runs meanwhile")
    if not hasattr(config, "workerinput"):  # the run itself (xdist's controller, or a run without it)
        import tempfile

        # the workers start after this and inherit the variable: one directory of locks for the run
        os.environ[_LOCKS] = config._dshctl_locks = tempfile.mkdtemp(prefix="dshctl-test-locks-")
        os.environ[_SIZE] = repr({name: os.environ.get(name) for name in ("COLUMNS", "LINES")})
        os.environ[_MACHINE_CACHE] = str(MACHINE_CACHE)
    elif _SIZE in os.environ:
        # an xdist worker has COLUMNS=80 and LINES=24 set; the processes a test starts must see the
        # terminal size variables of the run's own environment (a tmux pane's size, not 80 columns)
        import ast

        for name, value in ast.literal_eval(os.environ[_SIZE]).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if CORPUS_NAMED and not HAS_CORPUS:
        raise pytest.UsageError(f"DSHCTL_CORPUS={CORPUS_NAMED} is not a directory")
    # dshctl's caches (stats, listings, sql) go to a directory of this run's own, shared by its tests and
    # the processes they start, never the machine's ~/.cache: no entry of another run or checkout answers
    import tempfile

    os.environ["XDG_CACHE_HOME"] = config._dshctl_cache = tempfile.mkdtemp(prefix="dshctl-test-cache-")
    _build_each_app_once()


def _build_each_app_once() -> None:
    """typer's ``CliRunner.invoke(app)`` turns the typer app into its click command anew on every call
    (~50 ms for dshctl's: most of an in-process run of a small log, and of the suite's time); the
    command is the same each time (built from the functions registered at import), so build it once per
    app."""
    import typer.testing

    build = typer.testing._get_command
    built: dict[int, tuple] = {}

    def get_command(app):
        if id(app) not in built:
            built[id(app)] = (app, build(app))  # the app kept, so that its id is never another's
        return built[id(app)][1]

    typer.testing._get_command = get_command


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    shutil.rmtree(getattr(config, "_dshctl_cache", ""), ignore_errors=True)
    shutil.rmtree(getattr(config, "_dshctl_locks", ""), ignore_errors=True)


_LOCKS = "DSHCTL_TEST_LOCKS"
_SIZE = "DSHCTL_TEST_TERMINAL_SIZE"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """Under pytest-xdist (``-n``), a test marked ``serial`` runs while no other test does: every test
    holds the run's room lock, shared, from its setup to its teardown (the module fixtures it sets up
    or tears down too: a module's processes all started at once); a serial one holds it exclusively.
    Whoever holds the gate is next in: a serial test waiting at it keeps new tests out until the
    running ones end."""
    if not hasattr(item.config, "workerinput") or _LOCKS not in os.environ:
        return (yield)
    import fcntl

    serial = item.get_closest_marker("serial") is not None
    locks = Path(os.environ[_LOCKS])
    with open(locks / "gate", "a") as gate, open(locks / "room", "a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        finally:
            if not serial:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)
            fcntl.flock(gate, fcntl.LOCK_UN)


def pytest_report_header(config: pytest.Config) -> str:
    return f"corpus: {CORPUS}" if HAS_CORPUS else f"corpus: absent, its tests skip: {NO_CORPUS}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("corpus") is not None:
        need_corpus()


@pytest.fixture
def corpus() -> Path:
    """The corpus directory (the test skips where it is absent)."""
    return need_corpus()


_SIGINT_ON_IMPORT = """
import builtins, os, signal, sys
sys.argv = ["dshctl", *sys.argv[1:]]
at, real_import = MODULES, builtins.__import__

def hooked(name, *args, **kwargs):
    if at and name == at[0]:
        at.pop(0)
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)

builtins.__import__ = hooked
from dshctl.entry import main
main()
"""


def sigint_on_import(*modules: str) -> list[str]:
    """The command line (``python -c SCRIPT``; the dshctl arguments follow) of the console script
    (``dshctl.entry.main``) that sends itself SIGINT as it first imports each of ``modules`` in turn:
    a Ctrl-C while the command line is still being imported."""
    import sys

    return [sys.executable, "-c", _SIGINT_ON_IMPORT.replace("MODULES", repr(list(modules)))]


_runner = None


def invoke(*args, env: dict | None = None, color: bool = False, status: int | None = None,
           home: Path | str | None = None, input: str | bytes | None = None, cwd: Path | str | None = None,
           terminal: bool = False):
    """``dshctl ARGS`` in process; its ``Result``.

    Without ``color`` the command runs as ``dshctl --no-color ARGS`` with ``NO_COLOR=1``; ``env`` is set
    on top for the run (a value of None unsets the variable), ``home`` is its ``DSH_HOME`` and ``cwd``
    its working directory; with ``terminal`` its tables take standard output for a terminal (of
    ``COLUMNS`` width).
    A traceback fails the test: whatever the input, a command ends in a status and a message. With
    ``status``, the exit status must be it."""
    global _runner
    from typer.testing import CliRunner

    import dshctl.tables
    from dshctl.cli import app

    if _runner is None:
        _runner = CliRunner()
    argv = [str(arg) for arg in args]
    variables = dict(env or {})
    if home is not None:
        variables["DSH_HOME"] = str(home)
    if not color:
        argv.insert(0, "--no-color")
        variables = {"NO_COLOR": "1", **variables}
    here, real = os.getcwd(), dshctl.tables.stdout_is_terminal
    if cwd is not None:
        os.chdir(cwd)
    if terminal:
        dshctl.tables.stdout_is_terminal = lambda: True
    try:
        result = _runner.invoke(app, argv, env=variables, input=input)
    finally:
        os.chdir(here)
        dshctl.tables.stdout_is_terminal = real
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"dshctl {' '.join(argv)} raised {type(result.exception).__name__}: "
                             f"{result.exception}") from result.exception
    if status is not None:
        assert result.exit_code == status, (result.exit_code, result.stdout, result.stderr)
    return result


class PipeFeeder:
    """Writes ``data`` to ``process``'s standard input in 64 KiB pieces from a thread, counting in
    ``written`` what went through, and stops quietly when the process closes its end (a command that
    ends early must have read less than all of it)."""

    PIECE = 1 << 16

    def __init__(self, process, data: bytes) -> None:
        import threading

        self.process, self.data, self.written = process, data, 0
        self._thread = threading.Thread(target=self._feed, daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        try:
            for start in range(0, len(self.data), self.PIECE):
                self.process.stdin.write(self.data[start:start + self.PIECE])
                self.process.stdin.flush()
                self.written = min(len(self.data), start + self.PIECE)
            self.process.stdin.close()
        except (OSError, ValueError):  # a broken pipe, or stdin closed under the write
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout=timeout)


def wait_until(read, predicate, what: str, timeout: float) -> str:
    """``read()`` again every 50 ms until ``predicate`` holds of it (a tmux screen); its text, or an
    AssertionError showing the last one."""
    import time

    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = read()
        if predicate(screen):
            return screen
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; screen was:\n{screen}")


@pytest.fixture(autouse=True)
def _no_meter_left_behind():
    """No test leaves a progress meter behind. Every reading's meter ends with it: a command or a library
    call that fails inside ``map_logs`` closes that generator (each consumer does), even while CliRunner's
    result or the caller keeps the traceback. A test that failed otherwise may still hold one in its own
    frames (pytest keeps them for the report): it is dropped, so that the next test is not disturbed."""
    from dshctl import progress

    yield
    left = progress._active
    progress.forget()
    assert left is None, "the test left a progress meter active: some map_logs generator was not closed"
