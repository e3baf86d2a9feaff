"""The thin interactive driver: rich draws, prompt_toolkit reads keys. Everything else is pure.

:func:`play_interactive` runs when standard input and output are both terminals: it draws
``render.screen_rows`` + ``render.status_text`` on the alternate screen and maps keys to
:class:`~.player.Player` commands. The terminal is restored on every way out — ``q``, Ctrl-C (a key in
raw mode), SIGTERM, an error while reading the log — by ``try/finally`` around prompt_toolkit's
raw-mode context manager and rich's alternate screen / cursor switches.

:func:`play_stream` runs when only standard output is a terminal (the log comes from a pipe, or stdin
is redirected): it prints the transcript with the recorded timing (idle limit and speed applied), no
keys; Ctrl-C stops it.

prompt_toolkit is imported after the first frame is on screen: it is the slowest import of the
command, and the first frame must not wait for it.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from typing import Callable

from .player import Player
from .render import screen_rows, status_text
from .timeline import Timeline
from .transcript import iter_fragments
from .transform import PlaybackClock

FRAME_INTERVAL = 1 / 60
POLL_INTERVAL = 0.25
BUILD_BATCH = 32
MAX_SLEEP_SECONDS = 3600.0

HELP = "space pause · +/- speed · . , step · ] [ turn · n p tool · / search · g turn no. · ↑↓ PgUp PgDn scroll · q quit"


class _Screen:
    """Writes whole frames to the alternate screen through a rich Console."""

    def __init__(self, console) -> None:
        self.console = console
        self.size = (0, 0)

    def draw(self, player: Player, *, scroll: int, message: str | None, keys: bool) -> None:
        from rich.text import Text

        console = self.console
        width, height = console.size
        self.size = (width, height)
        body = max(height - 1, 1)
        rows = screen_rows(player.timeline, player.position, width, body, scroll)
        lines = [row for row in rows]
        while len(lines) < body:
            lines.append(Text())
        for line in lines:
            line.truncate(width, pad=True)
        status = status_text(
            player.timeline,
            player.position,
            speed=player.speed,
            paused=player.paused,
            width=width,
            message=message,
            keys=keys,
        )
        frame = Text("\n").join(lines + [status])
        console.file.write("\x1b[H")
        console.print(frame, end="", overflow="crop", no_wrap=True, crop=True, soft_wrap=False)
        console.file.flush()


def _console():
    from rich.console import Console

    from ..output import color_enabled

    return Console(highlight=False, no_color=not color_enabled(), soft_wrap=False)


def play_interactive(timeline: Timeline, player: Player, *, now: Callable[[], float] = time.monotonic) -> int:
    """Play with keys until ``q`` / Ctrl-C. Returns the exit status (0)."""
    console = _console()
    screen = _Screen(console)
    previous_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):  # pragma: no cover - exercised by hand
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_term)
    console.set_alt_screen(True)
    console.show_cursor(False)
    try:
        player.tick(now())
        screen.draw(player, scroll=0, message=None, keys=True)
        from prompt_toolkit.input import create_input

        source = create_input(sys.stdin)
        with source.raw_mode():
            return _loop(source, player, screen, now)
    except KeyboardInterrupt:
        return 0
    finally:
        try:
            console.show_cursor(True)
            console.set_alt_screen(False)
            console.file.flush()
        finally:
            signal.signal(signal.SIGTERM, previous_term)


def _loop(source, player: Player, screen: _Screen, now: Callable[[], float]) -> int:
    from prompt_toolkit.keys import Keys

    timeline = player.timeline
    fd = source.fileno()
    scroll = 0
    mode: str | None = None  # "search" | "goto"
    buffer = ""
    message: str | None = None
    message_until = 0.0
    last_draw = 0.0
    dirty = True
    while True:
        current = now()
        if player.tick(current):
            dirty = True
        if player.message:
            message, player.message = player.message, None
            message_until = current + 2.0
            dirty = True
        if message and mode is None and current >= message_until:
            message = None
            dirty = True
        if screen.console.size != screen.size:
            dirty = True
        if dirty and current - last_draw >= FRAME_INTERVAL:
            shown = f"/{buffer}▏" if mode == "search" else f"go to turn: {buffer}▏" if mode == "goto" else message
            screen.draw(player, scroll=scroll, message=shown, keys=True)
            last_draw = current
            dirty = False
        if not timeline.complete:
            was = len(timeline)
            timeline.extend(BUILD_BATCH)
            if timeline.complete or len(timeline) != was:
                dirty = dirty or timeline.complete
            timeout = 0.0
        else:
            due = player.next_due(current)
            timeout = POLL_INTERVAL if due is None else min(due, POLL_INTERVAL)
            if dirty:
                timeout = min(timeout, max(FRAME_INTERVAL - (current - last_draw), 0.0))
            if message and mode is None:
                timeout = min(timeout, max(message_until - current, 0.0) + 0.01)
        ready, _, _ = select.select([fd], [], [], timeout)
        presses = source.read_keys() if ready else source.flush_keys()
        for press in presses:
            key = press.key
            stamp = now()
            if mode is not None:
                if key in (Keys.Enter, Keys.ControlM, Keys.ControlJ):
                    if mode == "search":
                        player.search(buffer, stamp)
                    elif buffer.isdigit():
                        player.goto_turn(int(buffer), stamp)
                    elif buffer:
                        player.message = f"not a turn number: {buffer}"
                    mode = None
                    scroll = 0
                elif key in (Keys.Escape, Keys.ControlC, Keys.ControlG):
                    mode = None
                elif key in (Keys.ControlH, Keys.Backspace):
                    buffer = buffer[:-1]
                elif isinstance(key, str) and len(key) == 1 and key.isprintable():
                    buffer += key
                dirty = True
                continue
            if key in ("q", "Q", Keys.ControlC, Keys.ControlD):
                return 0
            if key == " ":
                player.toggle_pause(stamp)
            elif key in ("+", "="):
                player.faster(stamp)
            elif key in ("-", "_"):
                player.slower(stamp)
            elif key == ".":
                player.step_forward(stamp)
                scroll = 0
            elif key == ",":
                player.step_back(stamp)
                scroll = 0
            elif key == "]":
                player.next_turn(stamp)
                scroll = 0
            elif key == "[":
                player.prev_turn(stamp)
                scroll = 0
            elif key == "n":
                player.next_tool(stamp)
                scroll = 0
            elif key == "p":
                player.prev_tool(stamp)
                scroll = 0
            elif key == "/":
                mode, buffer = "search", ""
            elif key == "g":
                mode, buffer = "goto", ""
            elif key in ("?", "h"):
                player.message = HELP
            elif key in (Keys.Up, "k"):
                scroll += 1
            elif key in (Keys.Down, "j"):
                scroll = max(scroll - 1, 0)
            elif key == Keys.PageUp:
                scroll += max(screen.size[1] - 2, 1)
            elif key == Keys.PageDown:
                scroll = max(scroll - max(screen.size[1] - 2, 1), 0)
            elif key in (Keys.End, "G"):
                scroll = 0
            dirty = True


def play_stream(timeline: Timeline, start: int, *, speed: float, idle_limit: float, color: bool, timestamps: bool, out=None, sleep=time.sleep, now=time.monotonic) -> int:
    """Print the prefix (fragments before ``start``) at once, then the rest at the recorded pace."""
    out = out if out is not None else sys.stdout
    clock = PlaybackClock(timeline, idle_limit)
    pending: list[str] = []
    began = base = None
    for fragment, text in iter_fragments(timeline, 0, color=color, timestamps=timestamps):
        if fragment >= start:
            if began is None:
                began, base = now(), clock[fragment]
            wait = (clock[fragment] - base) / speed - (now() - began)
            if wait > 0.002 and pending:
                out.write("".join(pending))
                pending.clear()
                out.flush()
            while wait > 0.002:
                # in slices: time.sleep overflows past ~292 years, and a damaged clock can ask for more
                sleep(min(wait, MAX_SLEEP_SECONDS))
                wait = (clock[fragment] - base) / speed - (now() - began)
        pending.append(text)
        if len(pending) > 256:
            out.write("".join(pending))
            pending.clear()
    if pending:
        out.write("".join(pending))
    out.flush()
    return 0


def stdin_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return False
