"""Colour that can be forced and progress on long work (issue 26), in process and in a real terminal.

``--color auto|always|never`` on every command (before or after its name), ``FORCE_COLOR`` and
``CLICOLOR_FORCE`` honoured, ``NO_COLOR`` and ``--no-color`` kept. A progress bar on standard error after
about a second of reading — bytes, rate, time left — never in a pipe, over streamed output or with
``--quiet``. The tmux tests run dshctl on a real terminal (their own tmux server each).
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from conftest import REPO, invoke as run_cli, sample, wait_until
from dshctl import progress
from dshctl.terminal import color_wanted

pytestmark = pytest.mark.serial  # a bar shows after a second: nothing else on the cores meanwhile

TOUR = sample("tour.session.v4.jsonl")
TORN = sample("torn-tail.session.v4.jsonl")
ROOT = sample("sessions")
TMUX = shutil.which("tmux")
ESC = "\x1b["

def invoke(*args: str, env: dict | None = None):
    """conftest's invoke with colour left to the command line and ``env``: no colour variable set unless
    ``env`` sets it."""
    base = {"NO_COLOR": None, "FORCE_COLOR": None, "CLICOLOR_FORCE": None, "COLUMNS": None}
    return run_cli(*args, env={**base, **(env or {})}, color=True)


# -------------------------------------------------------------------------------------------- colour


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "when, env, tty, wanted",
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # empty: unset
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "0"}, False, False),
        ("auto", {"CLICOLOR_FORCE": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),  # NO_COLOR wins
        ("always", {"NO_COLOR": "1"}, False, True),  # the flag wins over every variable
        ("never", {"FORCE_COLOR": "1"}, True, False),
        ("auto", {"TERM": "dumb"}, True, False),  # a terminal without colour, as git and ripgrep
        ("auto", {"TERM": "unknown"}, True, False),
        ("always", {"TERM": "dumb"}, True, True),  # asked for: colour whatever TERM says
        ("auto", {"TERM": "dumb", "FORCE_COLOR": "1"}, True, True),
    ],
)
def test_the_colour_rule(monkeypatch, when, env, tty, wanted):
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert color_wanted(when, _Tty() if tty else io.StringIO()) is wanted


@pytest.mark.parametrize(
    "args",
    [
        ["grep", "--color", "always", "red", str(TOUR)],
        ["--color", "always", "grep", "red", str(TOUR)],
        ["replay", "--instant", "--color", "always", str(TOUR)],
        ["ls", "--color", "always", str(ROOT)],
        ["stats", "--color", "always", str(ROOT)],
        ["images", "--color", "always", str(TOUR)],
        ["grep", "-c", "--color", "always", "red", str(TOUR), str(TORN)],
        ["grep", "-l", "--color", "always", "red", str(TOUR)],
        ["validate", "--color", "always", str(TORN), str(TOUR)],
        ["--color", "always", "validate", str(TOUR)],
        ["validate", "--list-rules", "--color", "always"],
        ["stats", "--by", "turn", "--color", "always", str(TOUR)],
        ["prices", "--color", "always"],
        ["sql", "--color", "always", "select count(*) as n from sessions", str(TOUR)],
    ],
)
def test_color_always_colours_a_pipe_and_never_does_not(args):
    coloured = invoke(*args)
    assert coloured.exit_code == 0, coloured.output
    assert ESC in coloured.stdout
    plain = invoke(*[("never" if arg == "always" else arg) for arg in args])
    assert ESC not in plain.stdout and plain.stdout == _unstyled(coloured.stdout)
    assert ESC not in invoke(*args, "--no-color").stdout  # --no-color after the command wins, as "never"


def _unstyled(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.parametrize("args", [["grep", "red", str(TOUR)], ["validate", str(TORN)], ["stats", str(TOUR)]])
def test_force_color_and_no_color(args):
    assert ESC not in invoke(*args).stdout  # a pipe: auto means no
    assert ESC in invoke(*args, env={"FORCE_COLOR": "1"}).stdout
    assert ESC in invoke(*args, env={"CLICOLOR_FORCE": "1"}).stdout
    assert ESC not in invoke(*args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ESC in invoke("--color", "always", *args, env={"NO_COLOR": "1"}).stdout


def test_log_text_stays_data_in_colour(tmp_path):
    hostile = tmp_path / "h.session.v4.jsonl"
    text = TOUR.read_text().replace("Fix the red CI build", "red \\u001b[2J\\u001b]0;owned\\u0007")
    hostile.write_text(text)
    for args in (["grep", "--color", "always", "red", str(hostile)], ["ls", "--color", "always", str(hostile)],
                 ["stats", "--color", "always", str(hostile)]):
        out = invoke(*args).stdout
        assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out, args


def test_validate_colours_its_labels_and_keeps_log_text_data(tmp_path):
    hostile = tmp_path / "red \x1b[2J\x07.session.v4.jsonl"  # a file name is text from outside too
    hostile.write_bytes(TORN.read_bytes())
    out = invoke("validate", "--color", "always", str(hostile)).stdout
    assert "\x1b[2J" not in out and "\x07" not in out and "red ␛[2J␇" in out
    first = out.splitlines()[0]
    assert "\x1b[1;33mwarning\x1b[0m" in first and "\x1b[36m[relationships/open-turn]\x1b[0m" in first
    assert out.splitlines()[-1].startswith("\x1b[1;33m1 log: 1 clean")  # warnings only: the summary in yellow
    assert ESC not in invoke("validate", str(hostile)).stdout  # a pipe, auto: plain, as golden runs see it


def test_a_cast_export_is_coloured_whatever_stdout_is(tmp_path):
    cast = tmp_path / "x.cast"
    assert invoke("replay", str(TOUR), "--export", str(cast)).exit_code == 0
    assert "\\u001b[1m" in cast.read_text()
    plain = tmp_path / "y.cast"
    assert invoke("replay", str(TOUR), "--export", str(plain), env={"NO_COLOR": "1"}).exit_code == 0
    assert "\\u001b[" not in plain.read_text()


# -------------------------------------------------------------------------------------------- progress


def test_progress_is_never_shown_to_a_pipe_a_streamed_terminal_or_quiet(monkeypatch):
    import dshctl.terminal as terminal

    state = {"stderr": True, "stdout_tty": False, "pipe": False}
    monkeypatch.setattr(terminal, "is_terminal", lambda stream=None: state["stderr"] if stream is sys.stderr else state["stdout_tty"])
    monkeypatch.setattr(terminal, "stdout_is_pipe", lambda: state["pipe"])
    assert progress.progress_wanted(True)
    assert not progress.progress_wanted(False)  # --quiet
    state["pipe"] = True
    assert not progress.progress_wanted(True)  # another program reads the output
    state.update(pipe=False, stdout_tty=True)
    assert progress.progress_wanted(True) and not progress.progress_wanted(True, streams=True)
    state["stderr"] = False
    assert not progress.progress_wanted(True)


def test_the_meter_counts_the_bytes_of_a_log_as_it_is_read(tmp_path):
    from dshctl.reader import open_log
    from dshctl.source import resolve_one

    ref = resolve_one(str(TOUR))
    seen = []
    with progress.reading("stats", [ref], allowed=False) as meter:
        assert meter.total == TOUR.stat().st_size and meter.logs == 1
        log = open_log(ref)
        for _ in log.events():
            seen.append(meter.bytes_now())
        log.close()
        meter.finished(progress.log_size(ref))
    assert seen[-1] == TOUR.stat().st_size and meter.bytes_now() == TOUR.stat().st_size  # read once, counted once
    assert progress._active is None


def test_a_log_read_on_another_thread_is_not_the_meters_work():
    import threading

    from dshctl.reader import open_log
    from dshctl.source import resolve_one

    ref = resolve_one(str(TOUR))
    reading, release = threading.Event(), threading.Event()

    def elsewhere():
        log = open_log(ref)
        events = log.events()
        next(events)
        reading.set()  # halfway through its log, as a library caller's thread may be
        release.wait(10)
        for _ in events:
            pass
        log.close()

    with progress.reading("stats", [ref], allowed=False) as meter:
        thread = threading.Thread(target=elsewhere)
        thread.start()
        assert reading.wait(10)
        try:
            assert meter.readers == [] and meter.bytes_now() == 0  # another thread's reading is not this command's
        finally:
            release.set()
            thread.join()
        log = open_log(ref)
        seen = [meter.bytes_now() for _ in log.events()]
        log.close()
        assert seen[-1] == TOUR.stat().st_size  # the meter's own thread still counts


def test_the_bar_draws_on_stderr_only_and_erases_itself(monkeypatch, capsys):
    monkeypatch.setattr(progress, "progress_wanted", lambda allowed, streams=False, until_output=False: allowed)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "REFRESH_S", 0.01)
    from dshctl.source import resolve_one

    ref = resolve_one(str(TOUR))
    with progress.reading("stats", [ref, ref]) as meter:
        meter.finished(1000)
        time.sleep(0.3)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "stats" in captured.err and "1/2 logs" in captured.err and "kB" in captured.err


def test_the_figures_beside_the_bar_are_blank_until_there_is_a_rate(monkeypatch):
    meter = progress.Meter("stats", 3, 12_000_000)
    start = meter.started
    assert meter.figures(start + 1.0) == ("0.0/12.0 MB", "", "")  # nothing counted yet: no rate, no time left
    meter.finished(3_000_000)
    assert meter.figures(start + 1.0) == ("3.0/12.0 MB", "3.0 MB/s", "0:03 left")  # the mean since the work began
    assert meter.figures(start + 1.0)[2] and "?" not in "".join(meter.figures(start + 1.0))
    unknown = progress.Meter("stats", 1, None)  # standard input: bytes done, a rate, never a time left
    unknown.finished(2_500)
    assert unknown.figures(unknown.started + 0.5) == ("2.5 kB", "5.0 kB/s", "")
    big = progress.Meter("stats", 1, 10_000_000_000)
    big.finished(1_000_000_000)
    assert big.figures(big.started + 10) == ("1.0/10.0 GB", "100.0 MB/s", "1:30 left")
    assert progress.Meter("x", 1, 900).figures() == ("0/900 bytes", "", "")


def test_workers_forget_the_parents_meter():
    with progress.reading("x", [], allowed=False):
        progress.forget()
        assert progress._active is None and progress.bar_console() is None


@pytest.mark.parametrize("term", ["dumb", "unknown"])
@pytest.mark.parametrize(
    "args, forced",
    [
        (["stats", str(TOUR)], {}),
        (["ls", str(ROOT)], {}),
        (["validate", str(TORN)], {}),
        (["prices"], {}),
        (["grep", "red", str(TOUR)], {}),
        (["stats", str(TOUR)], {"FORCE_COLOR": "1"}),
        (["ls", str(ROOT)], {"CLICOLOR_FORCE": "1"}),
    ],
)
def test_colour_asked_for_colours_whatever_term_says(args, forced, term):
    """rich draws no colour for TERM=dumb unless told which colours: --color always (or FORCE_COLOR,
    CLICOLOR_FORCE) is a request, so the 8 standard colours; auto on a pipe stays plain."""
    extra = [] if forced else ["--color", "always"]
    coloured = invoke(*args, *extra, env={"TERM": term, **forced})
    assert coloured.exit_code in (0, 1), coloured.output
    assert ESC in coloured.stdout, f"{args[0]}: no colour with TERM={term}"
    plain = invoke(*args, env={"TERM": term})
    assert ESC not in plain.stdout and plain.stdout == _unstyled(coloured.stdout)



@pytest.mark.parametrize(
    "flags, coloured",
    [
        (["--no-color", "--color", "always"], True),
        (["--color", "always", "--no-color"], False),
        (["--color", "never", "--color", "always"], True),
        (["--color", "always", "--color", "never"], False),
        (["--no-color", "CMD", "--color", "always"], True),  # before the command name, then after it
        (["--color", "always", "CMD", "--no-color"], False),
        (["--color", "never", "CMD"], False),
        (["--color", "always", "CMD"], True),
    ],
)
@pytest.mark.parametrize("command", [["stats", str(TOUR)], ["grep", "red", str(TOUR)], ["ls", str(ROOT)]])
def test_the_last_colour_flag_wins(flags, coloured, command):
    """As git's --color/--no-color and ripgrep's --color: the last one typed wins, wherever it is."""
    before, after = (flags[: flags.index("CMD")], flags[flags.index("CMD") + 1 :]) if "CMD" in flags else ([], flags)
    shown = invoke(*before, *command, *after)
    assert shown.exit_code == 0, shown.output
    assert (ESC in shown.stdout) is coloured



@pytest.mark.parametrize(
    "args",
    [
        ["help", "stats", "--color", "always"],
        ["help", "--no-color", "stats"],
        ["help", "stats", "--color", "never"],
        ["--color", "always", "help", "stats", "--no-color"],
        ["help", "--color", "always"],
    ],
)
def test_help_takes_the_colour_options_as_every_command(args):
    """The man page: --color works on every command, ``help`` too; what it prints is ``COMMAND --help``'s
    text (plain, as that is), whatever the flag says."""
    shown = invoke(*args)
    assert shown.exit_code == 0, shown.output
    named = [arg for arg in args if arg == "stats"]
    assert shown.stdout == invoke(*named, "--help").stdout
    assert invoke("help", "stats", "--color", "sometimes").exit_code == 2  # the choices are --color's


# -------------------------------------------------------------------------------------------- a real terminal


class Pane:
    """A tmux pane of its own server, running ``command`` in REPO."""

    def __init__(self, command: str, width: int = 100, height: int = 40, env: dict | None = None) -> None:
        self.socket = f"dshctl-26-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        environment = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(REPO), **(env or {})}
        for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "COLUMNS"):
            if name not in (env or {}):
                environment.pop(name, None)
        wrapped = f"{command}; echo EXITED $?; sleep 60"
        subprocess.run([TMUX, "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                        wrapped], check=True, env=environment, cwd=REPO, timeout=10)

    def text(self, escapes: bool = False) -> str:
        flags = ["-e"] if escapes else []
        result = subprocess.run([TMUX, "-L", self.socket, "capture-pane", "-p", "-J", *flags, "-t", "t"], capture_output=True, timeout=10)
        return result.stdout.decode("utf-8", "replace")

    def wait(self, predicate, what: str, timeout: float = 60.0) -> str:
        return wait_until(self.text, predicate, what, timeout)

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


DSHCTL = f"{shlex.quote(sys.executable)} -m dshctl"
SLOW = (f"{shlex.quote(sys.executable)} -c \"import sys, time; d = open({str(TOUR)!r}, 'rb').read(); "
        "sys.stdout.buffer.write(d[:3000]); sys.stdout.flush(); time.sleep(4); sys.stdout.buffer.write(d[3000:])\"")
"""Standard input that takes four seconds to arrive: a read of more than a second."""

tmux_only = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


@pytest.fixture
def pane():
    opened = []

    def open_(*args, **kwargs) -> Pane:
        opened.append(Pane(*args, **kwargs))
        return opened[-1]

    yield open_
    for each in opened:
        each.close()


@tmux_only
def test_a_long_read_shows_a_progress_bar_then_the_tables(pane):
    shown = pane(f"{SLOW} | {DSHCTL} stats -", height=120)
    bar = shown.wait(lambda s: "stats ━" in s, "the progress bar")
    assert " bytes" in bar and "┏" not in bar  # standard input: bytes so far of an unknown total; no output yet
    assert "?" not in bar and "-:--" not in bar and "left" not in bar  # no rate yet, and never a time left without a total
    done = shown.wait(lambda s: "EXITED 0" in s, "the end")
    assert "stats ━" not in done  # the bar was erased before the output
    assert "turns · steps" in done and "┏" in done  # a terminal: boxed tables


@tmux_only
@pytest.mark.parametrize("how", ["--quiet", "| cat"])
def test_no_bar_with_quiet_or_into_a_pipe(pane, how):
    command = f"{SLOW} | {DSHCTL} stats - {how}" if how == "--quiet" else f"{SLOW} | {DSHCTL} stats - {how}"
    shown = pane(command)
    time.sleep(2.5)  # past the second after which a bar would show
    assert "stats ━" not in shown.text()
    done = shown.wait(lambda s: "EXITED 0" in s, "the end")
    assert ("┏" in done) == (how == "--quiet")  # into a pipe: the plain form


@tmux_only
@pytest.mark.parametrize("width", [60, 80, 120])
def test_tables_fit_a_real_terminal(pane, width):
    shown = pane(f"{DSHCTL} stats {shlex.quote(str(ROOT))}; {DSHCTL} ls {shlex.quote(str(ROOT))}", width=width, height=120)
    screen = shown.wait(lambda s: "EXITED 0" in s, "the end")
    boxed = [line for line in screen.splitlines() if line[:1] in "┏┃│└"]
    assert boxed and all(len(line.rstrip()) <= width for line in boxed)
    assert "7c1e5a2d" in screen and "b4d2f6a8" in screen


@tmux_only
def test_colour_on_a_terminal_and_forced_into_less(pane):
    shown = pane(f"{DSHCTL} grep red {shlex.quote(str(TOUR))} | head -1; {DSHCTL} grep --color always red {shlex.quote(str(TOUR))} | head -1; "
                 f"{DSHCTL} grep red {shlex.quote(str(TOUR))} | head -1 >/dev/null")
    shown.wait(lambda s: "EXITED 0" in s, "the end")
    lines = [line for line in shown.text(escapes=True).splitlines() if "red" in line]
    assert "\x1b[" not in lines[0] and "\x1b[" in lines[1]  # a pipe is plain unless forced
    tty = pane(f"{DSHCTL} grep red {shlex.quote(str(TOUR))}")
    tty.wait(lambda s: "EXITED 0" in s, "the end")
    assert "\x1b[" in tty.text(escapes=True).split("EXITED")[0]
    less = pane(f"{DSHCTL} replay --instant --color always {shlex.quote(str(TOUR))} | less -R", env={"LESS": ""})
    screen = less.wait(lambda s: "turn 1" in s, "less showing the transcript")
    assert "ESC" not in screen and "\x1b[" in less.text(escapes=True)  # less -R draws the colour, not ^[ codes


@tmux_only
@pytest.mark.parametrize("term", ["dumb", "unknown"])
def test_auto_draws_no_colour_on_a_dumb_terminal_and_always_still_does(pane, term):
    """As git and ripgrep: ``--color auto`` on a terminal whose TERM says it has no colour draws none (no
    SGR, no bold headers); ``--color always`` is a request and colours it still, in the 8 standard colours."""
    where = shlex.quote(str(ROOT))
    steps = [f"TERM={term} {DSHCTL} grep red {where}", f"echo ==ls; TERM={term} {DSHCTL} ls {where}",
             f"echo ==always; TERM={term} {DSHCTL} grep --color always red {where}",
             f"echo ==ls-always; TERM={term} {DSHCTL} ls --color always {where}"]
    shown = pane("; ".join(steps), width=200, height=200)
    shown.wait(lambda s: "EXITED 0" in s, "the end")
    screen = shown.text(escapes=True).split("EXITED")[0]
    auto, rest = screen.split("==ls\n", 1)
    ls_auto, rest = rest.split("==always", 1)
    always, ls_always = rest.split("==ls-always", 1)
    assert "red" in auto and "7c1e5a2d" in ls_auto  # the commands ran and drew their output
    assert "\x1b[" not in _unstyled_prompt(auto) and "\x1b[" not in _unstyled_prompt(ls_auto)
    assert "\x1b[35m" in always  # grep's paths in magenta, as asked
    assert "\x1b[" in _unstyled_prompt(ls_always)


def test_quiet_export_writes_no_note(tmp_path):
    out = tmp_path / "t.jsonl"
    shown = invoke("export", "--format", "otlp", "--out", str(out), str(TOUR))
    assert shown.exit_code == 0 and "spans" in shown.stderr
    quiet = invoke("export", "--format", "otlp", "--out", str(tmp_path / "q.jsonl"), "--quiet", str(TOUR))
    assert quiet.exit_code == 0 and quiet.stderr == "" and (tmp_path / "q.jsonl").stat().st_size > 0


def test_a_bar_until_the_output_begins_then_never_again(monkeypatch, capsys):
    import dshctl.terminal as terminal

    monkeypatch.setattr(terminal, "is_terminal", lambda stream=None: True)
    monkeypatch.setattr(terminal, "stdout_is_pipe", lambda: False)
    assert not progress.progress_wanted(True, streams=True)  # cat, a transcript: the output is the progress
    assert progress.progress_wanted(True, streams=True, until_output=True)  # grep: until its first hit
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "REFRESH_S", 0.01)
    with progress.reading("grep", [], streams=True, until_output=True):
        time.sleep(0.2)
        assert progress.bar_console() is not None  # drawn while nothing is written
        progress.output_begins()
        assert progress.bar_console() is None and progress._bar is None
        time.sleep(0.1)
        capsys.readouterr()
        time.sleep(0.1)
        assert capsys.readouterr().err == ""  # erased, and not redrawn under the output
    progress.output_begins()  # no bar: nothing to do


@tmux_only
def test_grep_shows_a_bar_while_no_hit_has_come_then_its_lines(pane):
    shown = pane(f"{SLOW} | {DSHCTL} grep red -", height=60)
    bar = shown.wait(lambda s: "grep ━" in s, "the progress bar")
    assert " bytes" in bar and "?" not in bar and "user:" not in bar
    done = shown.wait(lambda s: "EXITED 0" in s, "the end")
    assert "grep ━" not in done and "CI on main is red." in done


@tmux_only
def test_the_first_frame_of_a_bar_is_meaningful(pane, tmp_path):
    """The first frame a user sees (after a second of reading) has figures or nothing, never rich's
    placeholders for a rate not yet measured (``?``, ``-:--:--``)."""
    LOGS = 6000  # a read of several seconds on an idle machine (1,000 logs ended before the bar's first second in CI)
    root = tmp_path / "root"
    root.mkdir()
    for number in range(LOGS):
        shutil.copyfile(TOUR, root / f"s{number}.session.v4.jsonl")  # copies: one file under many names is read once
    shown = pane(f"{DSHCTL} stats --no-cache -j 1 {shlex.quote(str(root))} >/dev/null", env={"XDG_CACHE_HOME": str(tmp_path)})
    first = shown.wait(lambda s: "stats ━" in s, "the progress bar")
    bar = next(line for line in first.splitlines() if "stats ━" in line)
    assert "?" not in bar and "-:--" not in bar and f"/{LOGS:,} logs" in bar and "MB" in bar
    shown.wait(lambda s: "EXITED 0" in s, "the end")


@pytest.mark.parametrize("command, label", [(["sql", "select count(*) from turns"], "sql"),
                                            (["export", "--format", "otlp", "--out", "-"], "export")])
def test_the_bar_is_labelled_with_the_command_typed(monkeypatch, tmp_path, command, label):
    """sql reads its logs through an export into its cache: its bar is still labelled sql, the command typed."""
    pytest.importorskip("duckdb")
    import dshctl.many

    labels = []
    real = dshctl.many.map_logs

    def recorded(*args, **kwargs):
        labels.append(kwargs.get("label"))
        return real(*args, **kwargs)

    monkeypatch.setattr(dshctl.many, "map_logs", recorded)
    shown = invoke(*command, str(TOUR), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert shown.exit_code == 0, shown.output
    assert labels == [label]


@tmux_only
def test_sql_shows_its_own_name_on_the_bar(pane, tmp_path):
    pytest.importorskip("duckdb")
    root = tmp_path / "root"
    root.mkdir()
    for number in range(800):  # a read of more than the bar's second (about 3 s here, under load)
        shutil.copyfile(TOUR, root / f"s{number}.session.v4.jsonl")
    shown = pane(f"{DSHCTL} sql -j 1 'select count(*) as n from turns' {shlex.quote(str(root))}", env={"XDG_CACHE_HOME": str(tmp_path)})
    screen = shown.wait(lambda s: "━" in s or "EXITED" in s, "the progress bar")
    assert "export ━" not in screen
    if "sql ━" not in screen:  # the wiring itself is test_the_bar_is_labelled_with_the_command_typed's
        pytest.skip("the read ended before the bar's first second")
    done = shown.wait(lambda s: "EXITED 0" in s, "the end", timeout=120)
    assert "3200" in done and "sql ━" not in done


COMMANDS_IN_COLOUR = {
    "validate": f"validate {shlex.quote(str(TORN))}",
    "stats": f"stats {shlex.quote(str(TOUR))}",
    "ls": f"ls {shlex.quote(str(ROOT))}",
    "images": f"images {shlex.quote(str(TOUR))}",
    "prices": "prices",
    "replay": f"replay --instant {shlex.quote(str(TOUR))}",
    "grep": f"grep red {shlex.quote(str(TOUR))}",
    "grep -l": f"grep -l red {shlex.quote(str(TOUR))}",
}


@tmux_only
def test_every_command_colours_a_terminal_and_a_forced_pipe_only(pane):
    """On a real terminal each command is coloured; into a pipe it is plain, unless --color always."""
    steps = []
    for name, command in COMMANDS_IN_COLOUR.items():
        steps += [f"clear; {DSHCTL} {command} 2>/dev/null; echo '=={name} piped'; {DSHCTL} {command} 2>/dev/null | cat;"
                  f" echo '=={name} always'; {DSHCTL} {command} --color always 2>/dev/null | cat; echo '=={name} end'; sleep 1.5"]
    seen: dict[str, str] = {}
    shown = pane("; ".join(steps), width=200, height=200)
    deadline = time.monotonic() + 120
    while len(seen) < len(COMMANDS_IN_COLOUR) and time.monotonic() < deadline:
        screen = shown.text(escapes=True)
        for name in COMMANDS_IN_COLOUR:
            if name not in seen and f"=={name} end" in screen:
                seen[name] = screen
        time.sleep(0.1)
    assert set(seen) == set(COMMANDS_IN_COLOUR), f"not finished: {set(COMMANDS_IN_COLOUR) - set(seen)}"
    for name, screen in seen.items():
        tty, rest = screen.split(f"=={name} piped", 1)
        piped, always = rest.split(f"=={name} always", 1)
        always = always.split(f"=={name} end", 1)[0]
        assert "\x1b[" in _unstyled_prompt(tty), f"{name}: no colour on a terminal"
        assert "\x1b[" not in _unstyled_prompt(piped), f"{name}: colour into a pipe"
        assert "\x1b[" in _unstyled_prompt(always), f"{name}: --color always ignored in a pipe"


def _unstyled_prompt(text: str) -> str:
    """The capture without what is not the command's colour: tmux's capture with escapes ends a line's
    styles with resets (``0``, ``39``, ``49``, alone or together), and a reset alone is no colour; what
    is left is an SGR that sets a colour or an attribute."""
    import re

    resets = re.compile(r"\x1b\[(?:0|39|49)?(?:;(?:0|39|49))*m")
    return resets.sub("", text)
