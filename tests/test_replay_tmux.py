"""An interactive replay in a real terminal: tmux runs it, sends keys, and reads the screen back.

Each test uses its own tmux server socket, so it never touches another tmux session, and polls the pane
with deadlines instead of sleeping fixed amounts.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import REPO, sample, wait_until
from dshctl.humanize import format_clock

SAMPLE = sample("tour.session.v4.jsonl.zstd")
TMUX = shutil.which("tmux")

pytestmark = [pytest.mark.skipif(TMUX is None, reason="tmux is not installed"), pytest.mark.serial]


class Pane:
    def __init__(self, command: str, width: int = 100, height: int = 30) -> None:
        self.socket = f"dshctl-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.name = "replay"
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        env["TERM"] = "xterm-256color"
        wrapped = f"{command}; echo EXITED $?; sleep 30"
        subprocess.run(
            [TMUX, "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), wrapped],
            check=True,
            env=env,
            cwd=REPO,
            timeout=10,
        )

    def text(self) -> str:
        result = subprocess.run([TMUX, "-L", self.socket, "capture-pane", "-p", "-t", self.name], capture_output=True, timeout=10)
        return result.stdout.decode("utf-8", "replace")

    def status(self) -> str:
        lines = [line for line in self.text().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def keys(self, *keys: str) -> None:
        subprocess.run([TMUX, "-L", self.socket, "send-keys", "-t", self.name, *keys], check=True, timeout=10)

    def wait(self, predicate, what: str, timeout: float = 15.0) -> str:
        return wait_until(self.text, predicate, what, timeout)

    def pid(self) -> int:
        """The replay process (a child of the pane's shell)."""
        shell = int(subprocess.run([TMUX, "-L", self.socket, "display-message", "-p", "-t", self.name, "#{pane_pid}"], capture_output=True, text=True, timeout=10).stdout)
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text()
                if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == shell and b"dshctl.cli" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except (OSError, ValueError):
                continue
        raise AssertionError("the replay process is not running")

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


def replay_command(*args: str, log: Path = SAMPLE) -> str:
    return " ".join(shlex.quote(part) for part in [sys.executable, "-m", "dshctl.cli", "replay", str(log), *args])


def status_of(screen: str) -> str:
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def content_of(screen: str) -> list[str]:
    lines = [line.rstrip() for line in screen.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return [line for line in lines[:-1] if line]


def test_pause_step_next_turn_and_quit():
    pane = Pane(replay_command("--speed", "1"))
    try:
        pane.wait(lambda s: "turn 1" in status_of(s) and "▶" in status_of(s), "playback of turn 1")
        pane.keys("Space")
        paused = pane.wait(lambda s: "⏸" in status_of(s), "the paused status")
        time.sleep(0.3)
        assert pane.text() == paused or "⏸" in pane.status()  # nothing moves while paused
        before = content_of(pane.text())

        pane.keys(".")
        stepped = pane.wait(lambda s: content_of(s) != before, "one step forward")
        assert "⏸" in status_of(stepped)
        pane.keys(",")
        pane.wait(lambda s: content_of(s) == before, "one step back to the same screen")

        pane.keys("]")
        turn2 = pane.wait(lambda s: "turn 2/4" in status_of(s), "the next turn")
        assert content_of(turn2)[-1] == "━━ turn 2 ━━"
        assert "⏸" in status_of(turn2)
        assert "00:09.010" in status_of(turn2)  # recorded clock of turn 2's header

        pane.keys("q")
        done = pane.wait(lambda s: "EXITED" in s, "the exit")
        assert "EXITED 0" in done
        # the alternate screen is gone: the shell's line is all that is left
        assert "━━ turn" not in done and "⏸" not in done
    finally:
        pane.close()


def test_fast_playback_reaches_the_end_and_ctrl_c_quits():
    pane = Pane(replay_command("--speed", "50"), width=80, height=24)
    try:
        end = pane.wait(lambda s: "end" in status_of(s) and "■" in status_of(s), "the end of the session")
        assert "turn 4/4" in status_of(end)
        assert "00:30.012 / 00:30.012" in status_of(end)
        assert any("interrupted" in line for line in content_of(end))
        pane.keys("C-c")
        done = pane.wait(lambda s: "EXITED" in s, "the exit")
        assert "EXITED 130" in done  # interrupted, as the README says
    finally:
        pane.close()


def test_search_and_goto_turn():
    pane = Pane(replay_command("--speed", "1"))
    try:
        pane.wait(lambda s: "turn 1" in status_of(s), "playback")
        pane.keys("Space")
        pane.wait(lambda s: "⏸" in status_of(s), "pause")
        pane.keys("/", "node 15", "Enter")
        found = pane.wait(lambda s: "/node 15" in status_of(s), "the search result")
        assert "Node 15" in content_of(found)[-1]
        pane.keys("g", "3", "Enter")
        turn3 = pane.wait(lambda s: "turn 3/4" in status_of(s), "turn 3")
        assert content_of(turn3)[-1] == "━━ turn 3 ━━"
        pane.keys("q")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED" in s, "the exit")
    finally:
        pane.close()


def test_stdin_not_a_terminal_plays_with_timing_but_no_keys():
    command = f"cat {shlex.quote(str(SAMPLE))} | " + " ".join(
        shlex.quote(part) for part in [sys.executable, "-m", "dshctl.cli", "replay", "-", "--speed", "20", "--turns", "1-2"]
    )
    pane = Pane(command)
    try:
        began = time.monotonic()
        done = pane.wait(lambda s: "EXITED" in s, "the end of the timed stream", timeout=10)
        assert "EXITED 0" in done
        assert "━━ turn 3 ━━" not in done and "Now patch" not in done
        assert "── turn 2 completed · 2.0 s" in done
        # turns 1-2 last 11 s recorded; idle-capped at 2 s and at 20× they still take a little while
        assert time.monotonic() - began > 0.2
    finally:
        pane.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Expected:
    """The screens the pure model renders, to hold the terminal's screen against."""

    def __init__(self, log: Path, width: int, height: int) -> None:
        from dshctl.reader import open_log
        from dshctl.replay.timeline import Timeline

        self.timeline = Timeline(open_log(str(log)))
        self.timeline.ensure_all()
        self.width, self.height = width, height

    def screen(self, position: int, *, paused: bool, speed: float, scroll: int = 0) -> list[str]:
        from dshctl.replay.render import screen_text, status_text

        rows = screen_text(self.timeline, position, self.width, self.height - 1, scroll).split("\n")
        rows += [""] * (self.height - 1 - len(rows))
        if scroll:
            rows[-1] = f" scrolled ↑ {scroll} line{'s' if scroll != 1 else ''} — End to follow"
        status = status_text(self.timeline, position, speed=speed, paused=paused, width=self.width).plain
        return rows + [status.rstrip()]

    def matches(self, screen: str, *, paused: bool, speed: float, scroll: int = 0) -> int | None:
        """The position whose rendering is exactly ``screen`` (looked up by the clock in its status line)."""
        lines = [line.rstrip() for line in screen.splitlines()]
        lines += [""] * (self.height - len(lines))
        clock = re.search(r"\d\d:\d\d\.\d\d\d", lines[-1])
        if clock is None:
            return None
        timeline = self.timeline
        for position in range(len(timeline) + 1):
            if format_clock(timeline.clock_ms(position)) == clock.group() and self.screen(position, paused=paused, speed=speed, scroll=scroll) == lines:
                return position
        return None


def test_screens_while_playing_and_paused_are_the_rendered_positions(tmp_path):
    """Rows are redrawn only where they changed and scrolled when text streams past the bottom: the
    terminal's screen must still be exactly the pure rendering of a position, at any moment."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from replay_first_frame import generate

    log = tmp_path / "bench.session.jsonl.zstd"
    generate(log, turns=4, text_deltas=500)  # dsh's benchmark shape: a delta a millisecond
    width, height = 120, 35
    expected = Expected(log, width, height)
    pane = Pane(replay_command("--speed", "0.5", "--turn", "2", log=log), width=width, height=height)  # a full screen from the start
    try:
        seen: list[int] = []
        for _ in range(4):
            time.sleep(0.3)
            screen = pane.wait(lambda s: expected.matches(s, paused=False, speed=0.5) not in (None, *seen), "a rendered position while playing")
            seen.append(expected.matches(screen, paused=False, speed=0.5))
        assert seen == sorted(seen) and seen[-1] > seen[0] + 100  # captured while it played on

        pane.keys("Space")
        paused = pane.wait(lambda s: "⏸" in status_of(s), "the paused status")
        position = expected.matches(paused, paused=True, speed=0.5)
        assert position is not None, paused
        for scroll in (1, 2, 3):
            pane.keys("k")
            pane.wait(lambda s: expected.screen(position, paused=True, speed=0.5, scroll=scroll) == [line.rstrip() for line in s.splitlines()], f"scrolled up {scroll}")
        pane.keys("j")
        pane.wait(lambda s: expected.screen(position, paused=True, speed=0.5, scroll=2) == [line.rstrip() for line in s.splitlines()], "scrolled down to 2")
        pane.keys("q")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED" in s, "the exit")
    finally:
        pane.close()


def test_a_paused_player_uses_no_cpu_and_quitting_restores_echo():
    pane = Pane(replay_command("--speed", "1"))
    try:
        pane.wait(lambda s: "turn 1" in status_of(s) and "▶" in status_of(s), "playback of turn 1")
        pane.keys("Space")
        pane.wait(lambda s: "⏸" in status_of(s), "the paused status")
        pid = pane.pid()
        time.sleep(0.5)
        before = cpu_seconds(pid)
        time.sleep(2.0)
        used = cpu_seconds(pid) - before
        assert used <= 0.04, f"{used:.2f} s of CPU in 2 s while paused"

        pane.keys("q")
        pane.wait(lambda s: "EXITED 0" in s, "the exit")
        pane.keys("typed after quitting")
        pane.wait(lambda s: "typed after quitting" in s, "the shell's echo back")
    finally:
        pane.close()


def test_ctrl_l_repaints_what_something_else_wrote_over_the_screen():
    pane = Pane(replay_command("--speed", "1"))
    try:
        pane.wait(lambda s: "turn 1" in status_of(s), "playback")
        pane.keys("Space")
        clean = pane.wait(lambda s: "⏸" in status_of(s), "pause")
        tty = subprocess.run([TMUX, "-L", pane.socket, "display-message", "-p", "-t", pane.name, "#{pane_tty}"], capture_output=True, text=True, timeout=10).stdout.strip()
        with open(tty, "w") as terminal:
            terminal.write("\x1b[3;5HSOMETHING ELSE WROTE THIS")
        pane.wait(lambda s: "SOMETHING ELSE" in s, "the foreign output")
        pane.keys("C-l")
        assert pane.wait(lambda s: "SOMETHING ELSE" not in s, "the repaint") == clean
    finally:
        pane.close()


def test_help_overlay_fits_40_by_12_and_the_status_keeps_the_essentials():
    from dshctl.replay.terminal import HELP_LINES

    pane = Pane(replay_command("--speed", "1"), width=40, height=12)
    try:
        playing = pane.wait(lambda s: "▶" in status_of(s) and "/ 00:30.012" in status_of(s), "playback, the duration known")
        assert re.search(r"▶ · \d\d:\d\d\.\d{3} / 00:30\.012 · 1×", status_of(playing))  # state, position, duration, speed
        pane.keys("?")
        shown = pane.wait(lambda s: "any key closes" in s, "the help panel")
        for line in HELP_LINES:
            assert line.rstrip() in shown, line
        assert max(len(line) for line in shown.splitlines()) <= 40
        pane.keys("x")
        pane.wait(lambda s: "any key closes" not in s, "the panel closed")
        pane.keys("q")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED" in s, "the exit")
    finally:
        pane.close()


def test_scrolling_back_while_playing_stays_put_until_end():
    pane = Pane(replay_command("--speed", "1"), width=80, height=12)
    try:
        pane.wait(lambda s: "turn 1" in status_of(s) and "▶" in status_of(s), "playback")
        pane.keys("PageUp", "PageUp")
        marked = pane.wait(lambda s: "scrolled ↑ 20 lines — End to follow" in s, "the scrolled-back mark")
        rows = content_of(marked)
        for _ in range(6):  # 1.2 s of playback: the view stays where it was, the clock runs on
            time.sleep(0.2)
            assert content_of(pane.text()) == rows
        assert status_of(pane.text()) != status_of(marked)
        pane.keys("End")
        pane.wait(lambda s: "End to follow" not in s, "following the output again")
        pane.keys("q")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED" in s, "the exit")
    finally:
        pane.close()


def clock_of(screen: str) -> float:
    minutes, seconds = re.search(r"(\d\d):(\d\d\.\d{3}) /", status_of(screen)).groups()
    return int(minutes) * 60 + float(seconds)


def test_arrows_seek_five_seconds_digits_jump_and_the_bar_shows_progress():
    pane = Pane(replay_command("--speed", "1"), width=100, height=20)
    try:
        pane.wait(lambda s: "▶" in status_of(s), "playback")
        pane.keys("Space")
        pane.wait(lambda s: "⏸" in status_of(s), "pause")
        pane.keys("5")
        half = pane.wait(lambda s: "50%" in status_of(s), "the jump to 50%")
        assert clock_of(half) == 15.006  # 50 % of 30.012 s, though the last output before it is at 11.5 s
        filled = round(clock_of(half) / 30.012 * 16)
        assert "━" * filled + "─" * (16 - filled) + " 50%" in status_of(half)  # the bar: the recorded time played
        pane.keys("Right")
        ahead = pane.wait(lambda s: "+5 s" in status_of(s), "five seconds on")
        assert clock_of(ahead) > clock_of(half)  # 5 s on, or across an idle stretch to the next output
        pane.keys("Left")
        back = pane.wait(lambda s: "-5 s" in status_of(s), "five seconds back")
        assert clock_of(back) < clock_of(ahead)
        pane.keys("0")
        pane.wait(lambda s: "0%" in status_of(s) and clock_of(s) == 0, "the start")
        pane.keys("q")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED" in s, "the exit")
    finally:
        pane.close()


def test_ctrl_z_suspends_and_fg_restores_the_screen():
    pane = Pane("exec bash --norc --noprofile -i", width=80, height=16)
    try:
        pane.keys("PS1='$ '", "Enter")
        pane.keys(replay_command("--speed", "1"), "Enter")
        pane.wait(lambda s: "▶" in status_of(s), "playback")
        pane.keys("Space")
        paused = pane.wait(lambda s: "⏸" in status_of(s), "pause")
        pane.keys("C-z")
        pane.wait(lambda s: "Stopped" in s and "⏸" not in s, "the shell's job control")
        pane.keys("fg", "Enter")
        restored = pane.wait(lambda s: "⏸" in status_of(s) and content_of(s) == content_of(paused), "the screen back")
        assert status_of(restored) == status_of(paused)
        pane.keys("Space")
        pane.wait(lambda s: "▶" in status_of(s), "playback again")
        pane.keys("C-z")
        pane.wait(lambda s: "Stopped" in s and "▶" not in s, "the second stop")
        pane.keys("fg", "Enter")
        resumed = pane.wait(lambda s: "⏸" in status_of(s) or "■" in status_of(s), "the screen back, paused")
        time.sleep(1.5)  # playing at 1×, the clock would move on meanwhile
        assert "⏸" in status_of(pane.text()) and clock_of(pane.text()) == clock_of(resumed), status_of(resumed)
        pane.keys("q")
        pane.wait(lambda s: "⏸" not in s, "the exit")
        pane.keys("echo EXITED $?", "Enter")
        assert "EXITED 0" in pane.wait(lambda s: "EXITED 0" in s or "EXITED 1" in s, "the status")
    finally:
        pane.close()


# -- a large log: the player never blocks (#20 item 2) ------------------------------------------------


@pytest.fixture(scope="module")
def large_log(tmp_path_factory) -> Path:
    """dsh's benchmark shape (a zstd frame a row, 625 deltas a turn) grown to 80 MiB of JSON: building its
    whole timeline takes seconds, so a key that waited for it would be seen waiting."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from stats_bench import write_bench_v0

    path = tmp_path_factory.mktemp("large") / "session.jsonl.zstd"
    write_bench_v0(path, turns=None, max_bytes=80 * 1024 * 1024)
    return path


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _exits_within(pane: Pane, pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or "EXITED" in pane.text():
            return True
        time.sleep(0.01)
    return False


def test_a_seek_on_a_large_log_answers_at_once_and_can_be_cancelled(large_log):
    pane = Pane(replay_command(log=large_log), width=120, height=35)
    try:
        pane.wait(lambda s: "keys" in status_of(s), "the first frame")
        pane.keys("9")  # 90 %: the duration is not known until the whole log is read
        pane.wait(lambda s: "seeking" in status_of(s), "the seek to be answered", timeout=5)
        pane.keys("Escape")
        pane.wait(lambda s: "cancelled" in status_of(s), "the seek to be cancelled", timeout=5)
        assert "seeking" not in status_of(pane.text())
        pane.keys("9")
        screen = pane.wait(lambda s: "90%" in status_of(s), "the seek to land", timeout=240)
        pid = pane.pid()
        # memory stays bounded: the timeline's text lives in chunks, the oldest spilled compressed
        assert _peak_rss_mb(pid) < 220
        clock, total = re.search(r"([\d:.]+) / ([\d:]+)", status_of(screen)).groups()
        seconds = [sum(float(part) * 60**n for n, part in enumerate(reversed(value.split(":")))) for value in (clock, total)]
        assert abs(seconds[0] - 0.9 * seconds[1]) < 1.5  # the clock shows 90 % of the recorded duration
        pane.keys("C-c")
        assert _exits_within(pane, pid, 3.0)
        assert "EXITED 130" in pane.wait(lambda s: "EXITED" in s, "the exit status")
    finally:
        pane.close()


@pytest.mark.parametrize("key", ["q", "C-c"])
def test_quitting_while_a_seek_waits_for_the_log_is_immediate(large_log, key):
    pane = Pane(replay_command(log=large_log), width=120, height=35)
    try:
        pane.wait(lambda s: "keys" in status_of(s), "the first frame")
        pid = pane.pid()
        pane.keys("9")
        pane.wait(lambda s: "seeking" in status_of(s), "the seek to be answered", timeout=5)
        pane.keys(key)
        # the old player read the whole log before it looked at the keys again (seconds here, 45 s on
        # 1 GB); measured with benchmarks/replay_seek.py: a few milliseconds
        assert _exits_within(pane, pid, 2.0)
        status = "EXITED 0" if key == "q" else "EXITED 130"
        assert status in pane.wait(lambda s: "EXITED" in s, "the exit status")
    finally:
        pane.close()
