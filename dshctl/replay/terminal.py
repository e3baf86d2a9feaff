"""The thin interactive driver: rich draws, prompt_toolkit reads keys. Everything else is pure.

:func:`play_interactive` runs when standard input and output are both terminals: it draws
``render.screen_rows`` + ``render.status_text`` on the alternate screen and maps keys to
:class:`~.player.Player` commands. The player decides what to show, this driver when: at most
:data:`FRAME_INTERVAL` apart and only when something changed, writing only the rows that differ from
the last frame (after scrolling the transcript rows when text moved up or down), each frame wrapped in
synchronized output. The terminal is restored on every way out — ``q`` (status 0), Ctrl-C (a key in
raw mode; status 130, "interrupted"), SIGTERM, an error while reading the log — by ``try/finally``
around prompt_toolkit's raw-mode context manager, the echo switch and rich's alternate screen /
cursor switches; Ctrl-Z gives the terminal back before the process stops and takes it again on
``fg``. ``?`` draws a help panel over the transcript; scrolling back pins the screen where it was
(marked on its last row) while playback goes on, until End or G.

:func:`play_stream` runs when only standard output is a terminal (the log comes from a pipe, or stdin
is redirected): it prints the transcript with the recorded timing (idle limit and speed applied), no
keys; Ctrl-C stops it.

prompt_toolkit is imported after the first frame is on screen: it is the slowest import of the
command, and the first frame must not wait for it. Once it is, the rest of the timeline is built in a
thread of its own (:meth:`~.timeline.Timeline.build_in_background`): the loop only ever takes what is
built, so keys are answered at once whatever the log's size. A command that needs more than is built
(a digit jump before the duration is known, a search reaching the end of what is built) shows
"seeking…" and is tried again as the timeline grows; Esc (or any other command) cancels it, ``q`` and
Ctrl-C quit in every state.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import termios
import time
from contextlib import contextmanager
from functools import partial
from typing import Callable

from ..interrupt import EXIT_INTERRUPTED
from ..terminal import terminal_size
from .player import PENDING, Player
from .render import screen_rows, status_text
from .timeline import Timeline
from .frames import terminal_output
from .transform import PlaybackClock

FRAME_INTERVAL = 1 / 30
"""At most 30 frames a second: a frame shows the latest position, the fragments due in between are
drawn together (the screen cannot show a thousand tokens a second one by one anyway)."""
POLL_INTERVAL = 0.25
BUILD_BATCH = 32
BUILDING_POLL = 0.05
"""While the timeline is built in the background: how often the loop looks at what it has built."""
SEARCH_SLICE = 0.02
"""Seconds of searching between two looks at the keys."""
MAX_SLEEP_SECONDS = 3600.0

SYNC_BEGIN = "\x1b[?2026h"
SYNC_END = "\x1b[?2026l"
"""Synchronized output (DEC private mode 2026): the terminal shows a frame once it is complete, so a
half-written frame never tears. Terminals that lack the mode ignore it, as they ignore every unknown
private mode."""
ERASE_TO_END = "\x1b[K"

HELP_TITLE = "keys"
HELP_LINES = (
    "space  pause/play    q ^C  quit",
    "← →    -5 s/+5 s     0-9   0%…90%",
    ". ,    step          ] [   turn",
    "n p    tool call     g     go to turn",
    "/      search        + -   speed",
    "↑↓ PgUp PgDn  scroll back",
    "End G  follow        ^L    redraw",
    "Esc    cancel a seek",
    "^Z     suspend       ?     close",
)
"""The help overlay (``?``): one key a line, so it fits 40 columns; rows that do not fit a short
terminal are left out from the end of the list."""


class View:
    """How the screen looks besides the player's position: the help panel shown, and the position a
    scrolled-back screen stays at while playback goes on (``None``: following the output)."""

    __slots__ = ("help", "pinned")

    def __init__(self) -> None:
        self.help = False
        self.pinned: int | None = None


def help_panel(width: int, height: int, keys: tuple[str, ...] = HELP_LINES) -> list[str]:
    """The help overlay's rows, boxed: every key on a 40×12 terminal; on a smaller one the lines that
    do not fit are left out from the end, and each is cut to ``width``. ``keys``: the lines (the live
    view of ``--follow`` adds its own)."""
    inner = min(max(len(line) for line in keys) + 2, max(width - 2, 1))
    lines = [f" {line}" for line in keys][: max(height - 2, 0)]
    top = f"─ {HELP_TITLE} · any key closes "
    rows = ["┌" + (top + "─" * inner)[:inner] + "┐"]
    rows += [f"│{line[:inner]:<{inner}}│" for line in lines]
    rows.append("└" + "─" * inner + "┘")
    return rows


def overlay(rows: list, panel: list[str], width: int) -> list:
    """``panel`` drawn over the middle of ``rows`` (rich Text), the transcript left of it kept."""
    from rich.text import Text

    top = max((len(rows) - len(panel)) // 2, 0)
    left = max((width - len(panel[0])) // 2, 0)
    out = list(rows)
    for offset, line in enumerate(panel[: len(rows)]):
        row = out[top + offset].copy()
        row.truncate(left, pad=True)
        row.append(Text(line, style="reverse"))
        out[top + offset] = row
    return out


class _Screen:
    """Draws frames on the alternate screen, rewriting only the rows that differ from what it drew last."""

    def __init__(self, console) -> None:
        from rich.console import COLOR_SYSTEMS

        self.console = console
        self.size = (0, 0)
        self.shown: list = []  # the rows (rich Text) on the terminal now, status line last
        self.color_system = COLOR_SYSTEMS.get(console.color_system) if console.is_terminal else None

    def wanted_size(self) -> tuple[int, int]:
        """The terminal's size now, as tables see it (rich would say 80 × 25 for ``TERM=dumb``)."""
        return terminal_size(self.console.file)

    def draw(self, player: Player, *, scroll: int, message: str | None, keys: bool, view: View | None = None) -> None:
        width, height = self.wanted_size()
        if (width, height) != self.size:
            self.size = (width, height)
            self.invalidate()  # the terminal may have reflowed the old rows
        rows = self.frame(player, width, height, scroll=scroll, message=message, keys=keys, view=view)
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
    def frame(player: Player, width: int, height: int, *, scroll: int, message: str | None, keys: bool,
              view: View | None = None) -> list:
        """The ``height`` rows of the screen: the transcript rows, blank rows under them, the status line;
        a scrolled-back view's mark on the last transcript row, the help panel over the rows."""
        from rich.text import Text

        view = view or View()
        body = max(height - 1, 1)
        position = player.position if view.pinned is None else view.pinned
        rows = screen_rows(player.timeline, position, width, body, scroll)
        rows += [Text() for _ in range(body - len(rows))]
        if scroll > 0 and body > 1:
            rows[-1] = Text(f" scrolled ↑ {scroll} line{'s' if scroll != 1 else ''} — End to follow "[:width], style="reverse")
        if view.help:
            rows = overlay(rows, help_panel(width, body), width)
        status = status_text(
            player.timeline,
            player.position,
            speed=player.speed,
            paused=player.paused,
            width=width,
            message=message,
            keys=keys,
            clock_ms=player.clock_ms,
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

    from ..tables import color_system

    return Console(highlight=False, no_color=not color, soft_wrap=False, color_system=color_system(color))


def play_interactive(
    timeline: Timeline, player: Player, *, color: bool = True, now: Callable[[], float] = time.monotonic
) -> int:
    """Play with keys until ``q`` (status 0) or Ctrl-C (130, "interrupted", as for every command)."""
    console = _console(color)
    screen = _Screen(console)
    previous_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):  # pragma: no cover - exercised by hand
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_term)
    try:
        cooked = _terminal_mode(sys.stdin)
        with _keys_not_echoed(sys.stdin):
            _enter_screen(console)
            try:
                player.tick(now())
                screen.draw(player, scroll=0, message=None, keys=True)
                timeline.build_in_background()
                from prompt_toolkit.input import create_input

                source = create_input(sys.stdin)
                with source.raw_mode():
                    suspend = partial(_suspend, screen, sys.stdin, cooked)
                    status = _loop(source, player, screen, now, suspend)
            finally:
                timeline.stop()
                _leave_screen(console)
    except KeyboardInterrupt:
        from ..interrupt import interrupted_status

        timeline.stop()
        return interrupted_status()  # the screen is restored by now: the message reaches a clean terminal
    finally:
        signal.signal(signal.SIGTERM, previous_term)
    timeline.raise_failure()  # an error reading the log ended the player: reported on a restored terminal
    return status


def _enter_screen(console) -> None:
    console.set_alt_screen(True)
    console.show_cursor(False)


def _leave_screen(console) -> None:
    console.show_cursor(True)
    console.set_alt_screen(False)
    console.file.flush()


def _terminal_mode(stream):
    """The terminal's mode (termios attributes) now, or ``None`` when ``stream`` is no terminal."""
    try:
        return termios.tcgetattr(stream.fileno())
    except (AttributeError, ValueError, OSError, termios.error):
        return None


def _suspend(screen: "_Screen", stream, cooked) -> None:
    """Ctrl-Z: give the terminal back as it was (main screen, cursor, line mode), stop the process as
    the shell's job control expects, and on ``fg`` take the terminal again and draw the whole screen."""
    raw = _terminal_mode(stream)
    _leave_screen(screen.console)
    if cooked is not None:
        termios.tcsetattr(stream.fileno(), termios.TCSADRAIN, cooked)
    os.kill(os.getpid(), signal.SIGTSTP)  # stops here until SIGCONT
    if raw is not None:
        termios.tcsetattr(stream.fileno(), termios.TCSADRAIN, raw)
    _enter_screen(screen.console)
    screen.invalidate()


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


def _loop(source, player: Player, screen: _Screen, now: Callable[[], float], suspend: Callable[[], None] = lambda: None) -> int:
    """Until a quit key: take what the player did, draw when due, build more of the timeline or wait for
    keys, and hand each key to the loop's state. Returns the exit status the quit key means."""
    from prompt_toolkit.keys import Keys

    state = _LoopState(player, screen, Keys, suspend)
    fd = source.fileno()
    while player.timeline.failure is None:
        current = now()
        state.retry_pending(current)
        state.follow_player(current)
        state.draw_if_due(current)
        timeout = state.build_or_wait(current)
        ready, _, _ = select.select([fd], [], [], timeout)
        for press in source.read_keys() if ready else source.flush_keys():
            status = state.press(press.key, now())
            if status is not None:
                return status
    return 0


class _LoopState:
    """What the interactive loop keeps besides the player: rows scrolled back, a prompt being typed
    (``/`` search, ``g`` go to turn), the message on the status line, and whether a frame is due."""

    def __init__(self, player: Player, screen: _Screen, keys, suspend: Callable[[], None] = lambda: None) -> None:
        self.player = player
        self.screen = screen
        self.suspend = suspend
        self.view = View()
        self.scroll = 0
        self.prompt: str | None = None  # "search" | "goto"
        self.typed = ""
        self.message: str | None = None
        self.message_until = 0.0
        self.pending: Callable[[float], object] | None = None
        """A command waiting for more of the timeline (tried again each turn of the loop)."""
        self.pending_size = -1
        self.building_shown = False
        self.last_draw = 0.0
        self.dirty = True
        self.keys = keys
        self.quit_keys = {"q": 0, "Q": 0, keys.ControlD: 0, keys.ControlC: EXIT_INTERRUPTED}
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
            keys.Left: (Player.seek_back, True),
            keys.Right: (Player.seek_ahead, True),
            "]": (Player.next_turn, True),
            "[": (Player.prev_turn, True),
            "n": (Player.next_tool, True),
            "p": (Player.prev_tool, True),
        }

    # -- each turn of the loop ------------------------------------------------------

    def run(self, command: Callable[[float], object], now: float, label: str = "seeking…") -> None:
        """Run a player command; one that needs more of the timeline waits, shown, until it can finish."""
        self.pending = None
        if command(now) is PENDING:
            self.pending = command
            self.pending_size = len(self.player.timeline)
            self.message, self.message_until = f"{label} (Esc cancels)", float("inf")

    def retry_pending(self, now: float) -> None:
        """Try the waiting command again once the timeline has grown (a search goes on at once)."""
        command = self.pending
        timeline = self.player.timeline
        if command is None:
            return
        if self.player.searching is None and len(timeline) == self.pending_size and not timeline.complete:
            return
        self.pending_size = len(timeline)
        if command(now) is not PENDING:
            self.pending = None
            self.message, self.message_until = None, 0.0
            self.dirty = True

    def cancel_pending(self) -> bool:
        if self.pending is None:
            return False
        self.pending = None
        self.player.searching = None
        self.message, self.message_until = None, 0.0
        self.player.message = "cancelled"
        return True

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
        if self.screen.wanted_size() != self.screen.size:
            self.dirty = True

    def draw_if_due(self, now: float) -> None:
        """Draw a frame when something changed and the last one is at least FRAME_INTERVAL old."""
        if self.dirty and now - self.last_draw >= FRAME_INTERVAL:
            self.screen.draw(self.player, scroll=self.scroll, message=self.status_message(), keys=True, view=self.view)
            self.last_draw = now
            self.dirty = False

    def status_message(self) -> str | None:
        if self.prompt == "search":
            return f"/{self.typed}▏"
        if self.prompt == "goto":
            return f"go to turn: {self.typed}▏"
        return self.message

    def build_or_wait(self, now: float) -> float:
        """The seconds to wait for keys: building in the background, look again soon (what was built
        may be due, a waiting command may finish); a search goes on at once; building here (no thread),
        a batch more first."""
        timeline = self.player.timeline
        if self.pending is not None and self.player.searching is not None:
            return 0.0
        if not timeline.complete and not timeline.building:
            timeline.extend(BUILD_BATCH)
            if timeline.complete:  # the status line now shows the whole duration
                self.dirty = True
            return 0.0
        timeout = _wait(self.player.next_due(now), self.dirty, max(self.last_draw + FRAME_INTERVAL - now, 0.0))
        if self.message and self.prompt is None:
            timeout = min(timeout, max(self.message_until - now, 0.0) + 0.01)
        if timeline.building or self.building_shown != timeline.complete:
            self.dirty = self.dirty or self.building_shown != timeline.complete
            self.building_shown = timeline.complete
            timeout = min(timeout, BUILDING_POLL)
        return timeout

    # -- keys ---------------------------------------------------------------------------

    def press(self, key, now: float) -> int | None:
        """Act on one key; the exit status when it quits, else ``None``. With the help panel open, a key
        closes it (a quit key still quits)."""
        if self.prompt is not None:
            self._prompt_key(key, now)
        elif key in self.quit_keys:
            return self.quit_keys[key]
        elif key == self.keys.Escape and self.cancel_pending():
            pass
        elif self.view.help:
            self.view.help = False
        else:
            self._command_key(key, now)
        self.dirty = True
        return None

    def _prompt_key(self, key, now: float) -> None:
        """A key while a prompt is open: Enter runs it, Escape (or ^C, ^G) drops it, Backspace erases."""
        if key in self.enter_keys:
            if self.prompt == "search":
                typed = self.typed
                first = [True]

                def search(at: float):
                    if first[0]:
                        first[0] = False
                        return self.player.search(typed, at, budget=SEARCH_SLICE)
                    return self.player.search_more(at, budget=SEARCH_SLICE)

                self.prompt = None
                self.run(search, now, "searching…")
            elif self.typed.isdigit():
                turn = int(self.typed)
                self.prompt = None
                self.run(lambda at: self.player.goto_turn(turn, at), now)
            elif self.typed:
                self.player.message = f"not a turn number: {self.typed}"
            self.prompt = None
            self._follow()
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
            self.run(partial(action, self.player), now)
            if to_bottom:
                self._follow()
        elif isinstance(key, str) and len(key) == 1 and key.isdigit():
            percent = int(key) * 10
            self.run(lambda at: self.player.jump_to_percent(percent, at), now)
            self._follow()
        elif key == "/":
            self.prompt, self.typed = "search", ""
        elif key == "g":
            self.prompt, self.typed = "goto", ""
        elif key in ("?", "h"):
            self.view.help = True
        elif key in (keys.Up, "k", keys.PageUp):
            self._scroll_back(1 if key != keys.PageUp else self._page())
        elif key in (keys.Down, "j", keys.PageDown):
            self._scroll_back(-(1 if key != keys.PageDown else self._page()))
        elif key in (keys.End, "G"):
            self._follow()
        elif key == keys.ControlL:
            self.screen.invalidate()
        elif key == keys.ControlZ:
            self.player.pause(now)  # fg comes back paused, as the key table says
            self.suspend()

    def _scroll_back(self, rows: int) -> None:
        """Scroll back (or forward) ``rows``: a scrolled-back screen stays where it was while playback
        goes on, until End or G (or the bottom) follows the output again."""
        if self.scroll == 0 and rows > 0:
            self.view.pinned = self.player.position
        self.scroll = max(self.scroll + rows, 0)
        if self.scroll == 0:
            self._follow()

    def _follow(self) -> None:
        self.scroll = 0
        self.view.pinned = None

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
    cols, rows = _terminal_size(out)
    for fragment, text in terminal_output(timeline, 0, color=color, timestamps=timestamps, cols=cols, rows=rows, wrap=True):
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


def _terminal_size(out) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(out.fileno())
        return size.columns, size.lines
    except (AttributeError, ValueError, OSError):
        return 80, 24


def stdin_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return False
