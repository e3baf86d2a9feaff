"""The live view of ``dshctl replay --follow`` on a terminal: the interactive player over a timeline that
grows while it plays.

Reading a followed log waits for the log to grow, and the player must never wait, so the two are split:
a thread reads the log (:mod:`dshctl.follow`) and builds the timeline's items
(:func:`~dshctl.replay.timeline.built_items`), handing each over a queue and waking the player through a
pipe; the player's :class:`LiveTimeline` takes what has arrived without ever blocking. Everything else
is the player of ``dshctl replay`` (:mod:`dshctl.replay.terminal`): the same screen, keys and status line.

At the live edge (playing, nothing left to play) the view jumps to each item as it lands, and the status
line says ``● live``. Pause, scroll back, step or jump and the view stays where it is while the log
keeps growing (``○ live · L``); playing catches up at the recorded pace, and ``L`` jumps back to the
edge at once.

A v0 log records every chunk as it streams, but the chunk fold holds an attempt back until its
settlement (it can still become a failed attempt). At the live edge the attempt being streamed is shown
as a *preview* under the transcript, dim, token by token as the chunk rows land (:class:`_Preview`, fed by
the reader's ``before_fold`` hook); when the settlement lands, the settled items take its place. v2+ logs
write a step only when it settles, so there is nothing to preview. ``q`` or Ctrl-C ends (status 0, the terminal restored); an error reading the log ends the
view and is reported once the terminal is restored.
"""

from __future__ import annotations

import os
import queue
import select
import sys
import threading
import time
from functools import partial
from types import SimpleNamespace

from ..generations.v0 import SETTLING_TYPES
from ..textsafe import visible, visible_line
from .player import Player
from .terminal import (
    BUILD_BATCH,
    HELP_LINES,
    POLL_INTERVAL,
    View,
    _console,
    _enter_screen,
    _keys_not_echoed,
    _leave_screen,
    _LoopState,
    _Screen,
    _suspend,
    _terminal_mode,
    _wait,
    help_panel,
    overlay,
)
from .builder import built_items
from .items import Filters
from .timeline import Timeline

LIVE_HELP_LINES = HELP_LINES[:-1] + ("^Z     suspend       L     live edge",)
"""The player's keys with the one ``--follow`` adds (``?`` closes the panel like any key)."""
_END = None
PREVIEW_LABEL = "· streaming (not settled yet)"


PREVIEW_LIMIT = 64 * 1024
"""The most preview text queued at once or kept for the screen, in characters: far more than the third
of a screen the preview is shown in, so the tail kept draws the same lines as the whole text."""


class _PreviewStart(str):
    """A queue entry: the preview starts over with this text ("" ends it); in order with the items (the
    settled items replace it)."""


class _PreviewMore(str):
    """A queue entry: text the attempt being streamed adds to the preview."""


class LiveTimeline(Timeline):
    """A timeline whose items arrive from another thread: building takes what has arrived and never
    waits; it is complete once the reading thread has ended. Its items are held like every timeline's
    (:class:`~.store.ItemStore`: a compact index, the text in bounded memory)."""

    live = True

    def __init__(self, filters: Filters, arrivals: "queue.SimpleQueue") -> None:
        super().__init__(SimpleNamespace(fixture=False, header=None), filters)
        self._arrivals = arrivals
        self._source = None
        self.preview = ""
        """The v0 attempt being streamed, not settled yet ("" when none)."""

    def _pull(self) -> bool:
        if self.complete:
            return False
        try:
            entry = self._arrivals.get_nowait()
        except queue.Empty:
            return False
        if entry is _END:
            self.complete = True
            self.preview = ""
            return False
        if type(entry) is _PreviewMore:
            self.preview = bounded_tail(self.preview + entry)
            return True
        if type(entry) is _PreviewStart:
            self.preview = str(entry)
            return True
        self._source = iter((entry,))
        return super()._pull()


class _Preview:
    """The text of the v0 attempt being streamed, grouped as the chunk fold groups it (FORMAT §2.6): a
    chunk of another (turn, step), or any chunk after a ``finish``, starts a new attempt; a settling
    event ends it."""

    SETTLING = SETTLING_TYPES | {"assistant/message"}  # the chunk fold's own rule

    def __init__(self, publish) -> None:
        self.publish = publish  # called with a queue entry: _PreviewStart or _PreviewMore
        self.key: tuple | None = None
        self.accumulator = None
        self.text: PreviewText | None = None
        self.finished = False
        self.started = False  # whether the attempt's first text is published

    def observe(self, item) -> None:
        from ..generations.v0 import PackedRow

        if type(item) is PackedRow:
            self._attempt(item.turn, item.step).push_run(item.record)
        elif item.type == "assistant/chunk":
            data = item.data if isinstance(item.data, dict) else {}
            chunk = data.get("chunk")
            if not isinstance(chunk, dict) or not isinstance(chunk.get("type"), str):
                return
            try:
                self._attempt(data.get("turn"), data.get("step")).push(item.time or 0, chunk)
            except ValueError:
                return self._end()
            self.finished = chunk["type"] == "finish"
        elif item.type in self.SETTLING:
            return self._end()
        else:
            return
        self._publish(self.text.update(self.accumulator.records))

    def _attempt(self, turn, step):
        from ..stream import Accumulator

        if self.accumulator is None or self.finished or self.key != (turn, step):
            self.accumulator, self.key, self.finished = Accumulator(), (turn, step), False
            self.text, self.started = PreviewText(), False
        return self.accumulator

    def _publish(self, change: tuple[bool, str]) -> None:
        restart, text = change
        if restart or not self.started or len(text) > PREVIEW_LIMIT:
            self.publish(_PreviewStart(bounded_tail(self.text.whole() if restart else text)))
            self.started = True
        elif text:
            self.publish(_PreviewMore(text))

    def _end(self) -> None:
        if self.accumulator is not None:
            self.accumulator = self.key = self.text = None
            self.publish(_PreviewStart(""))


class _PreviewBlock:
    """The text one block of the pending attempt has streamed: its last :data:`PREVIEW_LIMIT` characters
    at least (older text is dropped in batches, so appending stays linear)."""

    __slots__ = ("order", "parts", "size")

    def __init__(self, order: int) -> None:
        self.order = order
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.size += len(text)
            if self.size > 2 * PREVIEW_LIMIT:
                kept = "".join(self.parts)[-PREVIEW_LIMIT - 1 :]  # one more: where the tail's first line starts
                self.parts, self.size = [kept], len(kept)

    def text(self) -> str:
        return "".join(self.parts)

    def ends_line(self) -> bool:
        return bool(self.parts) and self.parts[-1].endswith("\n")


class PreviewText:
    """What a pending attempt's stream says so far, laid out as its settled items will be: its blocks
    (reasoning, text, tool-call arguments) in first-seen order, each with its text so far, a line break
    between two blocks. The records are walked by block (:func:`dshctl.stream.walk_blocks`, the
    assembler's rules: nothing of a block after its end) as they grow, which they must do as an
    :class:`~dshctl.stream.Accumulator`'s do (new records at the end, new members on the last one), so
    each member is read once."""

    def __init__(self) -> None:
        self.position = 0  # the last record read
        self.members_read = 0  # of the record at position
        self.walked: dict = {}  # the walk's blocks
        self.shown: dict[int, _PreviewBlock] = {}  # index -> the blocks laid out (each has streamed a delta)
        self.last: _PreviewBlock | None = None  # the block laid out last

    def update(self, records) -> tuple[bool, str]:
        """What the records added since the last call: ``(False, text)`` when they only extend the end of
        the layout (``text`` is what to append), ``(True, "")`` when a block above the last one grew or
        a block took its place above it (the layout, :meth:`whole`, changed in place)."""
        from ..stream import DELTA, walk_blocks

        appended: list[str] = []
        restart = False
        for position in range(self.position, len(records)):
            read = self.members_read if position == self.position else 0
            self.position, self.members_read = position, read
            for step in walk_blocks((records[position],), self.walked):
                if step.kind != DELTA:
                    continue
                self.members_read = len(step.members)
                text = "".join(member for member in step.members[read:] if isinstance(member, str))
                block = self.shown.get(step.block.index)
                if block is None:
                    block = self.shown[step.block.index] = _PreviewBlock(step.block.order)
                    if self.last is not None and block.order < self.last.order:
                        restart = True  # a block that began earlier: laid out above the last one
                    else:
                        if self.last is not None and not self.last.ends_line():
                            appended.append("\n")
                        self.last = block
                elif block is not self.last and text:
                    restart = True
                block.add(text)
                appended.append(text)
        return (True, "") if restart else (False, "".join(appended))

    def whole(self) -> str:
        """The layout: every block's text so far in first-seen order, a line break between two blocks."""
        parts: list[str] = []
        for block in sorted(self.shown.values(), key=lambda block: block.order):
            if parts and not parts[-1].endswith("\n"):
                parts.append("\n")
            parts.append(block.text())
        return "".join(parts)


def bounded_tail(text: str, limit: int = PREVIEW_LIMIT) -> str:
    """The end of ``text``, at most ``limit`` characters, from the start of a line when there is one in
    reach: a line cut in two would wrap differently on the screen."""
    if len(text) <= limit:
        return text
    start = len(text) - limit
    newline = text.find("\n", start - 1)
    return text[newline + 1 :] if newline >= 0 else text[start:]


class _Feed:
    """The reading thread: it follows the log, builds the items and hands them over."""

    def __init__(self, path: str, filters: Filters) -> None:
        from ..follow import Follower

        self.arrivals: queue.SimpleQueue = queue.SimpleQueue()
        self.failure: BaseException | None = None
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.filters = filters
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        self.follower = Follower(path, on_warning=self.warnings.append)
        self.follower.on_note = self.notes.append
        self.thread = threading.Thread(target=self._run, name="dshctl-follow", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.follower.run(self._consume)
        except BaseException as exc:  # handed to the player, which reports it once the terminal is back
            self.failure = exc
        finally:
            self.arrivals.put(_END)
            self._wake()

    def _consume(self, log) -> None:
        if log.generation <= 1:
            log.before_fold = _Preview(self._preview).observe
        for entry in built_items(log, self.filters):
            self.arrivals.put(entry)
            self._wake()

    def _preview(self, entry: str) -> None:
        self.arrivals.put(entry)
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self.wake_write, b"!")
        except (BlockingIOError, OSError):
            pass  # the pipe is full: the player wakes anyway

    def drain(self) -> None:
        try:
            os.read(self.wake_read, 4096)
        except OSError:
            pass

    def stop(self) -> None:
        self.follower.stop.requested = True
        self.thread.join(1.0)
        for fd in (self.wake_read, self.wake_write):
            os.close(fd)


def at_live_edge(player: Player) -> bool:
    """Playing with nothing left to play: new output is shown as it lands."""
    return not player.paused and player.position >= len(player.timeline)


class _LiveScreen(_Screen):
    """The player's screen with the live mark on the status line."""

    def frame(self, player: Player, width: int, height: int, *, scroll: int, message: str | None, keys: bool,
              view: View | None = None) -> list:
        from .render import status_text

        view = view or View()
        timeline = player.timeline
        edge = at_live_edge(player) and scroll == 0
        preview = self.preview_rows(timeline.preview, width, height) if edge else []
        plain = View()
        plain.pinned = view.pinned
        rows = _Screen.frame(player, width, height - len(preview), scroll=scroll, message=message, keys=keys, view=plain)
        rows[-1:-1] = preview
        if view.help:
            rows[:-1] = overlay(rows[:-1], help_panel(width, height - 1, LIVE_HELP_LINES), width)
        if not timeline.complete:
            live = ("● live" + (" · streaming" if preview else "")) if edge else "○ live · L"
            rows[-1] = status_text(
                timeline, player.position, speed=player.speed, paused=player.paused, width=width, message=message, keys=keys, live=live
            )
        return rows

    def preview_rows(self, text: str, width: int, height: int) -> list:
        """The last lines of the attempt being streamed, dim under a label; at most a third of the screen."""
        from rich.text import Text

        if not text or height < 6:
            return []
        lines = Text(visible(text), style="dim").wrap(self.console, width)
        room = max(height // 3, 2) - 1
        return [Text(PREVIEW_LABEL, style="dim italic")] + list(lines)[-room:]


class _LiveLoopState(_LoopState):
    """The player's loop state, plus new items landing and the key back to the live edge."""

    def __init__(self, player: Player, screen: _Screen, keys, feed: _Feed, suspend) -> None:
        super().__init__(player, screen, keys, suspend)
        self.quit_keys[keys.ControlC] = 0  # Ctrl-C is how following ends
        self.feed = feed
        self.notes_shown = 0

    def take_arrivals(self, now: float) -> None:
        """Take what the reading thread built (a batch: catching up on a long log, the keys come between
        batches); at the live edge, show it at once."""
        player = self.player
        timeline = player.timeline
        edge = at_live_edge(player)
        before, complete, preview = len(timeline), timeline.complete, timeline.preview
        deadline = time.monotonic() + 0.02
        while timeline.extend(BUILD_BATCH) and time.monotonic() < deadline:
            pass
        if timeline.preview != preview:
            self.dirty = True
        if len(timeline) != before or timeline.complete != complete:
            self.dirty = True
            while edge and player.position < len(timeline):  # seeking builds one more item when one has arrived
                player.seek(len(timeline), now)
        notes = self.feed.notes
        if len(notes) > self.notes_shown:
            player.message = visible_line(notes[-1])
            self.notes_shown = len(notes)

    def build_or_wait(self, now: float) -> float:
        timeout = _wait(self.player.next_due(now), self.dirty, max(self.last_draw + 1 / 30 - now, 0.0))
        if self.message and self.prompt is None:
            timeout = min(timeout, max(self.message_until - now, 0.0) + 0.01)
        return min(timeout, POLL_INTERVAL)

    def _command_key(self, key, now: float) -> None:
        if key in ("L", "l"):
            self.player.paused = False
            self.player.seek(len(self.player.timeline), now)
            self._follow()
            return
        super()._command_key(key, now)


def play_live(path: str, filters: Filters, *, speed: float = 1.0, idle_limit: float = 2.0, color: bool = True, now=time.monotonic) -> int:
    """The live view until ``q`` / Ctrl-C; exit status 0, or the error that ended the reading."""
    from ..interrupt import take_over

    if take_over():  # Ctrl-C while the command was starting
        return 0
    feed = _Feed(path, filters)
    timeline = LiveTimeline(filters, feed.arrivals)
    player = Player(timeline, idle_limit=idle_limit, speed=speed, position=0, now=now())
    console = _console(color)
    screen = _LiveScreen(console)
    feed.start()
    try:
        cooked = _terminal_mode(sys.stdin)
        with _keys_not_echoed(sys.stdin):
            _enter_screen(console)
            try:
                screen.draw(player, scroll=0, message=None, keys=True)
                from prompt_toolkit.input import create_input

                source = create_input(sys.stdin)
                with source.raw_mode():
                    _live_loop(source, player, screen, feed, now, partial(_suspend, screen, sys.stdin, cooked))
            finally:
                _leave_screen(console)
    except KeyboardInterrupt:
        pass
    finally:
        feed.stop()
        _report(feed)
    return 0


def _live_loop(source, player: Player, screen: _Screen, feed: _Feed, now, suspend) -> None:
    from prompt_toolkit.keys import Keys

    state = _LiveLoopState(player, screen, Keys, feed, suspend)
    keys_fd = source.fileno()
    while feed.failure is None:
        current = now()
        state.take_arrivals(current)
        state.retry_pending(current)
        state.follow_player(current)
        state.draw_if_due(current)
        ready, _, _ = select.select([keys_fd, feed.wake_read], [], [], state.build_or_wait(current))
        if feed.wake_read in ready:
            feed.drain()
        for press in source.read_keys() if keys_fd in ready else source.flush_keys():
            if state.press(press.key, now()) is not None:
                return


def _report(feed: _Feed) -> None:
    """Once the terminal is restored: the warnings and notes held back, then the error that ended it."""
    from ..stdio import note, warn

    for text in feed.warnings:
        warn(text)
    for text in feed.notes:
        note(text)
    if feed.failure is not None:
        raise feed.failure
