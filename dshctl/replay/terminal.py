"""The thin interactive driver: rich draws, prompt_toolkit reads keys. Everything else is pure.

:func:`play_interactive` runs when standard input and output are both terminals: it draws
``render.screen_rows`` + ``render.status_text`` on the alternate screen and maps keys to
:class:`~.player.Player` commands. The player decides what to show, this driver when: at most
:data:`FRAME_INTERVAL` apart and only when something changed, writing only the rows that differ from
the last frame (after scrolling the transcript rows when text moved up or down), each frame wrapped in
synchronized output. The terminal is restored on every way out — ``q``, Ctrl-C (a key in
raw mode), SIGTERM, an error while reading the log — by ``try/finally`` around prompt_toolkit's
raw-mode context manager, the echo switch and rich's alternate screen / cursor switches.

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
import termios
import time
from contextlib import contextmanager
from typing import Callable

from .player import Player
from .render import screen_rows, status_text
from .timeline import Timeline
from .transcript import iter_fragments
from .transform import PlaybackClock

FRAME_INTERVAL = 1 / 30
"""At most 30 frames a second: a frame shows the latest position, the fragments due in between are
drawn together (the screen cannot show a thousand tokens a second one by one anyway)."""
POLL_INTERVAL = 0.25
BUILD_BATCH = 32
MAX_SLEEP_SECONDS = 3600.0

SYNC_BEGIN = "\x1b[?2026h"
SYNC_END = "\x1b[?2026l"
"""Synchronized output (DEC private mode 2026): the terminal shows a frame once it is complete, so a
half-written frame never tears. Terminals that lack the mode ignore it, as they ignore every unknown
private mode."""
ERASE_TO_END = "\x1b[K"

HELP = "space pause · +/- speed · . , step · ] [ turn · n p tool · / search · g turn no. · ↑↓ PgUp PgDn scroll · ^L redraw · q quit"


class _Screen:
    """Draws frames on the alternate screen, rewriting only the rows that differ from what it drew last."""

    def __init__(self, console) -> None:
        from rich.console import COLOR_SYSTEMS

        self.console = console
        self.size = (0, 0)
        self.shown: list = []  # the rows (rich Text) on the terminal now, status line last
        self.color_system = COLOR_SYSTEMS.get(console.color_system) if console.is_terminal else None

    def draw(self, player: Player, *, scroll: int, message: str | None, keys: bool) -> None:
        width, height = self.console.size
        if (width, height) != self.size:
            self.size = (width, height)
            self.invalidate()  # the terminal may have reflowed the old rows
        rows = self.frame(player, width, height, scroll=scroll, message=message, keys=keys)
        out = [self.scroll_to(rows)]
        out += [
            f"\x1b[{number};1H{self.ansi(row, width)}"
            for number, row in enumerate(rows, 1)
            if number > len(self.shown) or row != self.shown[number - 1]
        ]
        self.shown = rows
        if any(out):
            file = self.console.file
            file.write(SYNC_BEGIN + "".join(out) + SYNC_END)
            file.flush()

    def invalidate(self) -> None:
        """Forget what the terminal shows: the next frame writes every row. Rows are only rewritten
        when they change, so output from anything else (a message written to the terminal) would
        otherwise stay; Ctrl-L clears it, as in most full-screen programs."""
        self.shown = []

    def scroll_to(self, rows: list) -> str:
        """When the transcript rows moved up or down (text streaming past the bottom, paging), scroll
        them on the terminal — the rows still on screen need not be written again — and update
        ``shown`` to match. Returns the escape sequence ("" when no scroll saves anything)."""
        shown, body = self.shown, len(rows) - 1
        shift = scroll_amount([row.plain for row in shown[:body]], [row.plain for row in rows[:body]])
        if shift == 0:
            return ""
        from rich.text import Text

        blank = [Text() for _ in range(abs(shift))]
        region = f"\x1b[1;{body}r"  # scroll only the transcript rows, never the status line
        if shift > 0:
            self.shown = shown[shift:body] + blank + shown[body:]
            return f"{region}\x1b[{body};1H" + "\x1bD" * shift + "\x1b[r"  # index at the bottom margin
        self.shown = blank + shown[: body + shift] + shown[body:]
        return f"{region}\x1b[1;1H" + "\x1bM" * -shift + "\x1b[r"  # reverse index at the top margin

    @staticmethod
    def frame(player: Player, width: int, height: int, *, scroll: int, message: str | None, keys: bool) -> list:
        """The ``height`` rows of the screen: the transcript rows, blank rows under them, the status line."""
        from rich.text import Text

        body = max(height - 1, 1)
        rows = screen_rows(player.timeline, player.position, width, body, scroll)
        rows += [Text() for _ in range(body - len(rows))]
        status = status_text(
            player.timeline,
            player.position,
            speed=player.speed,
            paused=player.paused,
            width=width,
            message=message,
            keys=keys,
        )
        return rows + [status]

    def ansi(self, row, width: int) -> str:
        """One row as terminal output, cut at ``width`` cells; a shorter row erases the rest of its line."""
        from rich.segment import Segment

        if row.cell_len > width:
            row = row.copy()
            row.truncate(width)
        segments = row.render(self.console)
        if row.style and not row.spans:  # Text.render applies the base style only along with spans
            segments = Segment.apply_style(segments, self.console.get_style(row.style))
        if self.console.no_color:
            segments = Segment.remove_color(segments)
        color_system = self.color_system
        out = "".join(style.render(text, color_system=color_system) if style and color_system else text for text, style, _ in segments)
        # A full row leaves the cursor in the last column, where erasing would blank that cell.
        return out if row.cell_len >= width else out + ERASE_TO_END


def scroll_amount(old: list[str], new: list[str]) -> int:
    """Rows to scroll ``old`` up (> 0) or down (< 0) so it shares the most rows with ``new``; 0 when
    scrolling would not leave more rows in place than not scrolling."""
    if len(old) != len(new) or len(new) < 2:
        return 0
    best, best_same = 0, sum(map(str.__eq__, old, new))
    for shift in range(1, len(new)):
        if old[shift] == new[0]:
            same = sum(map(str.__eq__, old[shift:], new))
            if same > best_same:
                best, best_same = shift, same
        if new[shift] == old[0]:
            same = sum(map(str.__eq__, old, new[shift:]))
            if same > best_same:
                best, best_same = -shift, same
    return best


def _console(color: bool):
    from rich.console import Console

    return Console(highlight=False, no_color=not color, soft_wrap=False)


def play_interactive(
    timeline: Timeline, player: Player, *, color: bool = True, now: Callable[[], float] = time.monotonic
) -> int:
    """Play with keys until ``q`` / Ctrl-C. Returns the exit status (0)."""
    console = _console(color)
    screen = _Screen(console)
    previous_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):  # pragma: no cover - exercised by hand
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_term)
    try:
        with _keys_not_echoed(sys.stdin):
            console.set_alt_screen(True)
            console.show_cursor(False)
            try:
                player.tick(now())
                screen.draw(player, scroll=0, message=None, keys=True)
                from prompt_toolkit.input import create_input

                source = create_input(sys.stdin)
                with source.raw_mode():
                    return _loop(source, player, screen, now)
            finally:
                console.show_cursor(True)
                console.set_alt_screen(False)
                console.file.flush()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous_term)


@contextmanager
def _keys_not_echoed(stream):
    """Turn off the terminal's echo until the block ends. prompt_toolkit's raw mode starts only after
    the first frame (its import is slow); a key typed meanwhile would be echoed after the status line
    and scroll the screen under the player, which redraws only the rows it changed."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (AttributeError, ValueError, OSError, termios.error):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _loop(source, player: Player, screen: _Screen, now: Callable[[], float]) -> int:
    """Until a quit key: take what the player did, draw when due, build more of the timeline or wait for
    keys, and hand each key to the loop's state."""
    from prompt_toolkit.keys import Keys

    state = _LoopState(player, screen, Keys)
    fd = source.fileno()
    while True:
        current = now()
        state.follow_player(current)
        state.draw_if_due(current)
        timeout = state.build_or_wait(current)
        ready, _, _ = select.select([fd], [], [], timeout)
        for press in source.read_keys() if ready else source.flush_keys():
            if not state.press(press.key, now()):
                return 0


class _LoopState:
    """What the interactive loop keeps besides the player: rows scrolled back, a prompt being typed
    (``/`` search, ``g`` go to turn), the message on the status line, and whether a frame is due."""

    def __init__(self, player: Player, screen: _Screen, keys) -> None:
        self.player = player
        self.screen = screen
        self.scroll = 0
        self.prompt: str | None = None  # "search" | "goto"
        self.typed = ""
        self.message: str | None = None
        self.message_until = 0.0
        self.last_draw = 0.0
        self.dirty = True
        self.keys = keys
        self.quit_keys = ("q", "Q", keys.ControlC, keys.ControlD)
        self.enter_keys = (keys.Enter, keys.ControlM, keys.ControlJ)
        self.cancel_keys = (keys.Escape, keys.ControlC, keys.ControlG)
        self.erase_keys = (keys.ControlH, keys.Backspace)
        # player commands; the ones that move to another place also scroll back to the bottom
        self.commands = {
            " ": (Player.toggle_pause, False),
            "+": (Player.faster, False),
            "=": (Player.faster, False),
            "-": (Player.slower, False),
            "_": (Player.slower, False),
            ".": (Player.step_forward, True),
            ",": (Player.step_back, True),
            "]": (Player.next_turn, True),
            "[": (Player.prev_turn, True),
            "n": (Player.next_tool, True),
            "p": (Player.prev_tool, True),
        }

    # -- each turn of the loop ------------------------------------------------------

    def follow_player(self, now: float) -> None:
        """Advance the player to ``now``; take its message (shown for two seconds); notice a resize."""
        player = self.player
        if player.tick(now):
            self.dirty = True
        if player.message:
            self.message, player.message = player.message, None
            self.message_until = now + 2.0
            self.dirty = True
        if self.message and self.prompt is None and now >= self.message_until:
            self.message = None
            self.dirty = True
        if self.screen.console.size != self.screen.size:
            self.dirty = True

    def draw_if_due(self, now: float) -> None:
        """Draw a frame when something changed and the last one is at least FRAME_INTERVAL old."""
        if self.dirty and now - self.last_draw >= FRAME_INTERVAL:
            self.screen.draw(self.player, scroll=self.scroll, message=self.status_message(), keys=True)
            self.last_draw = now
            self.dirty = False

    def status_message(self) -> str | None:
        if self.prompt == "search":
            return f"/{self.typed}▏"
        if self.prompt == "goto":
            return f"go to turn: {self.typed}▏"
        return self.message

    def build_or_wait(self, now: float) -> float:
        """Build a batch more of the timeline (then look for keys without waiting), or the seconds to wait
        for keys once it is complete."""
        timeline = self.player.timeline
        if not timeline.complete:
            timeline.extend(BUILD_BATCH)
            if timeline.complete:  # the status line now shows the whole duration
                self.dirty = True
            return 0.0
        timeout = _wait(self.player.next_due(now), self.dirty, max(self.last_draw + FRAME_INTERVAL - now, 0.0))
        if self.message and self.prompt is None:
            timeout = min(timeout, max(self.message_until - now, 0.0) + 0.01)
        return timeout

    # -- keys ---------------------------------------------------------------------------

    def press(self, key, now: float) -> bool:
        """Act on one key; False when it quits."""
        if self.prompt is not None:
            self._prompt_key(key, now)
        elif key in self.quit_keys:
            return False
        else:
            self._command_key(key, now)
        self.dirty = True
        return True

    def _prompt_key(self, key, now: float) -> None:
        """A key while a prompt is open: Enter runs it, Escape (or ^C, ^G) drops it, Backspace erases."""
        if key in self.enter_keys:
            if self.prompt == "search":
                self.player.search(self.typed, now)
            elif self.typed.isdigit():
                self.player.goto_turn(int(self.typed), now)
            elif self.typed:
                self.player.message = f"not a turn number: {self.typed}"
            self.prompt = None
            self.scroll = 0
        elif key in self.cancel_keys:
            self.prompt = None
        elif key in self.erase_keys:
            self.typed = self.typed[:-1]
        elif isinstance(key, str) and len(key) == 1 and key.isprintable():
            self.typed += key

    def _command_key(self, key, now: float) -> None:
        keys = self.keys
        command = self.commands.get(key)
        if command is not None:
            action, to_bottom = command
            action(self.player, now)
            if to_bottom:
                self.scroll = 0
        elif key == "/":
            self.prompt, self.typed = "search", ""
        elif key == "g":
            self.prompt, self.typed = "goto", ""
        elif key in ("?", "h"):
            self.player.message = HELP
        elif key in (keys.Up, "k"):
            self.scroll += 1
        elif key in (keys.Down, "j"):
            self.scroll = max(self.scroll - 1, 0)
        elif key == keys.PageUp:
            self.scroll += self._page()
        elif key == keys.PageDown:
            self.scroll = max(self.scroll - self._page(), 0)
        elif key in (keys.End, "G"):
            self.scroll = 0
        elif key == keys.ControlL:
            self.screen.invalidate()

    def _page(self) -> int:
        return max(self.screen.size[1] - 2, 1)


def _wait(due: float | None, dirty: bool, next_frame: float) -> float:
    """Seconds to wait for keys before the loop looks again: until the next frame may be drawn when
    something changed, else until the next fragment is due — but no sooner than the next frame, which
    is the first moment it could show — and at most ``POLL_INTERVAL`` (resizes are polled)."""
    if dirty:
        return next_frame
    if due is None:
        return POLL_INTERVAL
    return min(max(due, next_frame), POLL_INTERVAL)


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
