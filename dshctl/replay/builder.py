"""Building a replay timeline: the normalized events of one log walked once, every visible thing placed
on the time axis as an :class:`~.items.Item` with its fragment times.

**Time axis.** Fragment times are milliseconds on one monotone axis. For a log with envelope times
(every real log) the axis *is* the recorded epoch-ms clock: each stream member sits at its receipt
time (``time0 + Σdt``), every other item at its event's time. The axis never runs backwards: a clock
that stepped back (negative ``dt``) is held at the last time. Where the log lacks times the builder
places items with fixed gaps and flags them ``synthetic``:

* fixture-form logs (no envelope ``seq``/``time``): :data:`~.items.EVENT_GAP_MS` between visible
  events; stream members keep their recorded spacing (v2+ record times; v0 rows keep only ``dt``);
* streams whose record times are all ``0`` (scripted fixtures) or implausibly far from their
  settlement: :data:`~.items.TOKEN_GAP_MS` between fragments.

The real spacing between two timed points is kept even across synthetic items: a recorded gap between
two stream members of different steps still shows, synthetic gaps only fill where nothing is known.

A settlement's stream is read block by block through :func:`dshctl.stream.walk_blocks`, the one
per-block walk of the stream core.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Iterator

import msgspec

from ..humanize import format_bytes
from ..model import Event, tool_result_blocks, tool_result_call_id
from ..stream import CHUNK, DELTA, END, RawChunk, StreamBlock, run_times, walk_blocks
from ..textsafe import visible_line
from ..turns import Position
from . import layout
from .items import (
    ATTEMPT_FAILED,
    BLOCK,
    BLOCKS,
    BLOCK_END,
    COMMAND,
    CONTEXT,
    EVENT_GAP_MS,
    INTERRUPTED,
    NOTE,
    REASONING,
    RETRY,
    RETRY_STARTED,
    SESSION,
    STEP,
    TEXT,
    THINKING,
    TITLE,
    TOKEN_GAP_MS,
    TOOL_ARGS,
    TOOL_CALL,
    TOOL_END,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_START,
    TURN,
    TURN_END,
    USER,
    Filters,
    Item,
    Prefix,
    Region,
)

_PLAUSIBLE_SKEW_MS = 24 * 3600 * 1000


def built_items(log, filters: Filters | None = None) -> Iterator[tuple[Item, list[int]]]:
    """The ``(item, fragment times)`` a :class:`Timeline` of ``log`` is built from, in order (the live
    player builds them in a thread of its own)."""
    return Builder(log, filters or Filters()).run()




class _Block(StreamBlock):
    """What the builder knows of one content block of a message while its stream is walked: the walk's
    own facts (type, streamed, ended, name) and what has been shown of it."""

    __slots__ = ("header", "named", "body", "interrupted", "line_end", "end_item", "closer")

    def __init__(self, index: int, kind: str, order: int = 0) -> None:
        super().__init__(index, kind, order)
        self.line_end = True
        """Whether its own output so far ends a line (a region's text block then needs no line break)."""
        self.end_item: Item | None = None
        """A tool call's frame end, once shown."""
        self.closer: Item | None = None
        """The item whose prefix closed this tool call's frame (another block's output came first)."""
        self.header = False
        """Its header is shown (``✻ thinking``, ``╭─ tool call``)."""
        self.named = False
        """A tool call's name is shown."""
        self.body = False
        """A tool call's frame body has begun (arguments follow inside it)."""
        self.interrupted = False
        """Another block's output came after it while it had not ended: if it shows more, the message's
        blocks interleave and are laid out as a region."""


class _Interleaved(Exception):
    """A block shows more after another block's output: its message is laid out as a region."""


class Builder:
    """Walks the events once, placing every visible thing on the time axis.

    A settlement's items are emitted in the order they streamed. When one of its blocks shows more after
    another block has shown output (their deltas interleave), the settlement is read again in region
    mode: its items become the parts of one :data:`~.items.BLOCKS` item, laid out block by block
    (:mod:`.layout`); every tool call there gets its frame end and every text block its line end,
    whichever block streamed last."""

    def __init__(self, log, filters: Filters) -> None:
        self.log = log
        self.filters = filters
        self.v0_fixture = bool(getattr(log, "fixture", False)) and log.header.version <= 1
        self.cursor: int | None = None
        self.anchor: tuple[int, int] | None = None
        self.pushed = False
        self.position = Position()
        self.turn: int | None = None
        self.step: int | None = None
        """The place of the event being read (see ``dshctl.turns``)."""
        self.seq: int | None = None
        self.line_start = True
        self.first_item = True
        self.active_key: Any = None
        """The block key of the output shown last (None: an event's)."""
        self.active_block: _Block | None = None
        self.call_names: dict[str, str] = {}
        self.streamed_calls: set[str] = set()
        self.turn_start_time: dict[int, int] = {}
        self.out: list[tuple[Item, list[int]]] = []
        self.region: list | None = None
        """Region mode: the order key of each part emitted so far (None: items are laid out as they stream)."""
        self.region_prefix: Prefix | None = None
        self.region_from = 0
        """Where the region's parts begin in ``out``."""
        self.blocks: dict = {}
        """The blocks of the settlement being read (its walk's)."""
        self.closed_block: _Block | None = None

    # -- time placement ------------------------------------------------------

    def _place(self, real: int | None, gap: int) -> tuple[int, bool]:
        """Axis time for something recorded at ``real`` (None = unknown: ``gap`` after the last item).

        Timed points keep their recorded spacing (axis = recorded time + a fixed offset). A timed point
        that would land before the cursor is held at the cursor: if the cursor got there through
        synthetic gaps, the offset moves with it (the synthetic time stays); if the recorded clock
        stepped back, the offset stays, so the clock resumes where it left off."""
        cursor = self.cursor
        if cursor is None:
            t = real if real is not None else 0
            synthetic = real is None
            if real is not None:
                self.anchor = (t, real)
        elif real is not None:
            anchor = self.anchor
            if anchor is None:
                t = cursor + gap
                synthetic = True
                self.anchor = (t, real)
            else:
                t = anchor[0] + (real - anchor[1])
                if t < cursor:
                    t = cursor
                    if self.pushed:
                        self.anchor = (t, real)
                synthetic = False
        else:
            t = cursor + gap
            synthetic = True
        self.pushed = synthetic
        self.cursor = t
        return t, synthetic

    def _run_times(self, record, anchored: bool, first_gap: int) -> tuple[list[int], bool]:
        dt = record.dt
        if anchored:
            t0, synthetic = self._place(record.time0, first_gap)
            if not dt:
                return [t0], synthetic
            offset = self.anchor[0] - self.anchor[1]
            if t0 == record.time0 + offset and min(dt) >= 0:
                times = list(accumulate(dt, initial=t0))
            else:
                times = [t0]
                real = record.time0
                last = t0
                for gap in dt:
                    real += gap
                    value = real + offset
                    if value > last:
                        last = value
                    times.append(last)
            self.cursor = times[-1]
            self.pushed = False
            return times, synthetic
        t0, synthetic = self._place(None, first_gap)
        if dt and (self.v0_fixture and any(dt)):
            gaps = [gap if gap > 0 else 0 for gap in dt]
        else:
            gaps = [TOKEN_GAP_MS] * len(dt)
        times = list(accumulate(gaps, initial=t0))
        self.cursor = times[-1]
        return times, True

    # -- emitting ------------------------------------------------------------

    def _keeps(self, kind: str) -> bool:
        return self.filters.keeps(kind, self.turn)

    def _prefix(self, block_key: Any, block: _Block | None, blank: bool = False) -> Prefix | None:
        """The layout marks before output of the block ``block_key`` (None for an event's output):
        none when it continues the active block; else a line break unless a line just ended, the close
        of a tool-call frame left open and a blank line when asked. A block left earlier that shows more
        means its message interleaves (:class:`_Interleaved`)."""
        if block_key is not None and block_key == self.active_key:
            return None
        if block is not None and block.interrupted:
            raise _Interleaved
        line_break = not self.line_start
        close_frame = False
        previous = self.active_block
        self.closed_block = None
        if previous is not None and not previous.ended:
            previous.interrupted = True
            close_frame = previous.type == "tool-call" and previous.body
            if close_frame:
                self.closed_block = previous
        blank_line = blank and not self.first_item
        self.active_key = block_key
        self.active_block = block
        if not (line_break or close_frame or blank_line):
            return None
        return Prefix(line_break, close_frame, blank_line)

    def _layout(self, block_key: Any, block: _Block | None, blank: bool = False) -> Prefix | None:
        """The prefix of the next item: in region mode only the region's first part has one (the layout
        draws the rest); each part's place in the layout is its block's first-seen order (an event: where
        it happened among the blocks)."""
        if self.region is None:
            return self._prefix(block_key, block, blank)
        if not self.region:
            self.region_prefix = self._prefix(block_key, block, blank)
        self.region.append((block.order, 0) if block is not None else (len(self.blocks) - 1, 1))
        return None

    def _push(self, item: Item, times: list[int], synthetic: bool, block: _Block | None = None) -> None:
        item.turn = self.turn
        item.step = self.step
        item.seq = self.seq
        item.synthetic = synthetic
        self.first_item = False
        ends_line = item.ends_line()
        if ends_line is not None:
            self.line_start = ends_line
            if block is not None:
                block.line_end = ends_line
        if self.closed_block is not None:
            self.closed_block.closer = item
            self.closed_block = None
        self.out.append((item, times))

    def emit(
        self,
        kind: str,
        real: int | None,
        *,
        info: dict | None = None,
        text: str | None = None,
        gap: int = EVENT_GAP_MS,
        block_key: Any = None,
        block: _Block | None = None,
        blank: bool = False,
        marker: str | None = None,
    ) -> bool:
        """Emit a one-fragment item; False if a filter dropped it."""
        if not self._keeps(kind):
            return False
        prefix = self._layout(block_key, block, blank)
        t, synthetic = self._place(real, gap)
        item = Item(kind, text=text, info=info, prefix=prefix, marker=marker, block_key=block_key)
        if block is not None and (kind == TOOL_END or kind == TOOL_START and info is not None):
            block.end_item = item  # the end of a tool call's frame (a whole block: all of it)
        self._push(item, [t], synthetic, block)
        return True

    def emit_run(self, kind: str, record, fragments: list[str], anchored: bool, *, first_gap: int, block_key: Any, block: _Block) -> bool:
        if not self._keeps(kind):
            return False
        if not any(fragments):
            # nothing visible; still advance the clock so later spacing stays honest
            self._run_times(record, anchored, first_gap)
            return True
        prefix = self._layout(block_key, block)
        times, synthetic = self._run_times(record, anchored, first_gap)
        item = Item(kind, fragments=fragments, prefix=prefix, block_key=block_key)
        self._push(item, times, synthetic, block)
        return True

    def _region_item(self) -> None:
        """Region mode, after the stream: the parts emitted become one BLOCKS item, and the output after
        it continues where its layout ends."""
        parts = self.out[self.region_from :]
        keys, self.region = self.region, None
        if not parts:
            return
        groups: dict = {}
        for index, ((item, _), key) in enumerate(zip(parts, keys)):
            group = item.block_key if item.block_key is not None else ("event", index)
            groups.setdefault(group, (key, []))[1].append(index)
        blocks = [indexes for _, indexes in sorted(groups.values(), key=lambda entry: entry[0])]
        region = Item(BLOCKS, region=Region([item for item, _ in parts], blocks), prefix=self.region_prefix)
        times = [t for _, part_times in parts for t in part_times]
        region.turn, region.step, region.seq = self.turn, self.step, self.seq
        region.synthetic = any(item.synthetic for item, _ in parts)
        del self.out[self.region_from :]
        self.out.append((region, times))
        ends_line = layout.ends_line(region)
        self.line_start = ends_line if ends_line is not None else self.line_start

    # -- events ----------------------------------------------------------------

    def run(self) -> Iterator[tuple[Item, list[int]]]:
        out = self.out
        redactor = self.filters.redactor
        if redactor:
            from .redact import redact_items
        header_done = False
        for event in self.log.events():
            if not header_done:
                header_done = True
                self._session_header(event)
            self.seq = event.seq
            self._event(event)
            if out:
                if redactor:  # an event's items are complete here: a streamed block is all of them
                    redact_items(out, redactor)
                yield from out
                out.clear()
        if not header_done:
            self._session_header(None)
        if self.position.turn is not None:
            info = {"note": "unended-turn", "turn": self.position.turn}
            self.emit(NOTE, self.anchor[1] if self.anchor else None, gap=0, info=info)
        if out:
            if redactor:
                redact_items(out, redactor)
            yield from out
            out.clear()

    def _session_header(self, event: Event | None) -> None:
        header = self.log.header
        fixture = bool(getattr(self.log, "fixture", False))
        real = event.time if event is not None else None
        if event is None and not fixture and isinstance(header.createdAt, int):
            real = header.createdAt
        t, synthetic = self._place(real, 0)
        info = {"id": header.id, "version": header.version, "cwd": header.cwd, "createdAt": header.createdAt, "fixture": fixture}
        item = Item(SESSION, info=info)
        item.synthetic = synthetic
        self.first_item = False
        self.line_start = True
        self.out.append((item, [t]))

    def _event(self, event: Event) -> None:
        kind = event.type
        data = event.data if isinstance(event.data, dict) else {}
        open_turn = self.position.turn
        self.turn, self.step = self.position.place(event)
        if kind == "turn/start":
            # what pairs tool calls, results and turn ends lives within a turn: kept for the open one
            # only, so the builder's state stays bounded however long the log
            self.call_names.clear()
            self.streamed_calls.clear()
            self.turn_start_time.clear()
            if event.time is not None and self.turn is not None:
                self.turn_start_time[self.turn] = event.time
            label = f"turn {self.turn}" if self.turn is not None else "turn"
            self.emit(TURN, event.time, blank=True, marker=label)
        elif kind == "step/start":
            if self.step is not None and self.step > 1:
                self.emit(STEP, event.time)
        elif kind == "user/message":
            self._user(event, data)
        elif kind in ("assistant/message", "assistant/attempt"):
            self._settlement(event, data)
        elif kind == "tool/call":
            self._tool_call(event, data)
        elif kind == "tool/result":
            self._tool_result(event)
        elif kind == "llm/retry":
            self._retry(event, data)
        elif kind == "llm/retry-started":
            self.emit(RETRY_STARTED, event.time, info={"retry": _int(data.get("retry"))})
        elif kind == "turn/end":
            self._turn_end(event, data, open_turn)
        elif kind == "session/title":
            title = data.get("title")
            if isinstance(title, str) and title:
                self.emit(TITLE, event.time, info={"title": visible_line(title)})
        elif kind == "command/run":
            name = data.get("name")
            if isinstance(name, str) and name:
                self.emit(COMMAND, event.time, info={"name": name, "args": data.get("args")})
        elif kind == "todo/write":
            todos = data.get("todos")
            if isinstance(todos, list):
                self.emit(NOTE, event.time, info={"note": "todos", "todos": todos})
        elif kind == "compaction/summary":
            shadowed = data.get("shadowedSeqs")
            count = len(shadowed) if isinstance(shadowed, list) else None
            self.emit(NOTE, event.time, info={"note": "compaction", "summarised": count})
        elif kind == "working-directory/change":
            self.emit(NOTE, event.time, info={"note": "working-directory", "cwd": data.get("cwd")})
        elif kind == "session/end-seed":
            # v2+: the last `inherited: true` marker; v0/v1: the marker at seq = header.seedLength
            if data.get("inherited") is True or (self.log.header.version <= 1 and event.seq == self.log.cut):
                self.emit(NOTE, event.time, info={"note": "inherited-prefix-ends"})

    # -- per event type --------------------------------------------------------

    def _user(self, event: Event, message: dict) -> None:
        source = message.get("source")
        source_kind = source.get("kind") if isinstance(source, dict) else None
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if source_kind == "user":
            lines: list[str] = []
            texts: list[str] = []
            placeholders: list[int] = []
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    lines.extend(block["text"].split("\n"))
                    texts.append(block["text"])
                else:
                    placeholder = block_placeholder(block)
                    lines.append(placeholder)
                    placeholders.append(len(texts))
                    texts.append(placeholder)
            while lines and not lines[-1].strip():
                lines.pop()
            info = {"text": "\n".join(texts), "lines": lines, "parts": texts, "placeholders": placeholders}
            self.emit(USER, event.time, info=info)
            return
        chars = sum(len(b.get("text") or "") for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
        replaces = event.surfaceOp is not None and isinstance(event.surfaceOp, dict)
        info = {"source": source_kind, "label": source_label(source), "replacesHistory": replaces, "chars": chars}
        self.emit(CONTEXT, event.time, info=info)

    def _anchored(self, event: Event, stream: list) -> bool:
        """Whether the stream's recorded times place it on the axis. Not when they are all ``0`` (a
        scripted fixture), nor when any member lies more than a day from the settlement (from the first
        record when the settlement has no time): such a clock is damaged, and following it would stretch
        the axis by years."""
        if self.v0_fixture or not stream:
            return False
        starts = [record.time if record.__class__ is RawChunk else record.time0 for record in stream]
        if not any(starts):
            return False
        reference = event.time if event.time is not None else starts[0]
        low, high = _time_span(stream)
        return reference - _PLAUSIBLE_SKEW_MS <= low and high <= reference + _PLAUSIBLE_SKEW_MS

    def _settlement(self, event: Event, data: dict) -> None:
        damaged = event.stream is None  # the reader could not type it (FORMAT §4.4; validate names it)
        if damaged:
            self.emit(NOTE, event.time, info={"note": "damaged-stream", "settlement": event.type})
        stream = event.stream or []
        anchored = self._anchored(event, stream)
        saved = (self.cursor, self.anchor, self.pushed, self.line_start, self.first_item, len(self.out))
        try:
            shown, finish = self._stream(event.seq, stream, anchored)
        except _Interleaved:
            self.cursor, self.anchor, self.pushed, self.line_start, self.first_item, mark = saved
            del self.out[mark:]
            self.region, self.region_from = [], mark
            shown, finish = self._stream(event.seq, stream, anchored)
            self._region_item()
        if event.type == "assistant/message":
            if not shown and not stream:
                self._whole_message(event, data)
            if data.get("interrupted") is True:
                self.emit(INTERRUPTED, event.time)
        elif finish is None and not damaged:
            self.emit(ATTEMPT_FAILED, event.time, info={"code": None})
        self.active_key = None
        self.active_block = None

    def _stream(self, key: int, stream: list, anchored: bool) -> tuple[bool, dict | None]:
        """The stream's items; returns whether any was shown and its finish chunk (None: no finish)."""
        blocks: dict[int, _Block] = {}
        self.blocks = blocks
        self.active_key = None
        self.active_block = None
        state = {"gap": EVENT_GAP_MS, "shown": False, "finish": None}

        def gap() -> int:
            value = state["gap"]
            state["gap"] = TOKEN_GAP_MS
            return value

        # block-starts show nothing: headers wait for the block's first fragment, so blocks opened
        # together do not interleave empty headers
        for step in walk_blocks(stream, blocks, _Block):
            kind = step.kind
            record = step.record
            if kind == DELTA:
                if record.__class__ is RawChunk:
                    shown = self._delta(key, step, record.time if anchored else None, gap)
                else:
                    shown = self._run(key, step, anchored, gap)
            elif kind == END:
                shown = self._block_end(key, step.block, step.payload, record.time if anchored else None, gap)
            elif kind == CHUNK and step.payload.get("type") == "finish":
                state["finish"] = step.payload
                self._finish(key, step.payload, blocks, record.time if anchored else None, gap)
                continue
            else:
                continue
            if shown:
                state["shown"] = True
        # close a tool frame the stream left open (cancelled, or cut by max-tokens without block-end)
        for index, block in blocks.items():
            if block.type == "tool-call" and block.header and not block.ended:
                block.ended = True
                if self.region is not None or self.active_key == (key, index):
                    real = self.anchor[1] if anchored and self.anchor is not None else None
                    self.emit(TOOL_END, real, gap=0, block_key=(key, index), block=block, info={"end": "not-completed"})
        return state["shown"], state["finish"]

    def _delta(self, key, step, real, gap) -> bool:
        """One raw delta (a record the accumulator could not pack)."""
        block = step.block
        index = block.index
        text = step.members[0]
        if step.delta == "tool-call":
            if isinstance(step.id, str):
                self.streamed_calls.add(step.id)
            name = step.name
            shown = self._tool_prelude(key, index, block, name if isinstance(name, str) else None, real, gap)
            if isinstance(text, str) and text:
                shown = self.emit(TOOL_ARGS, real, text=text, gap=gap(), block_key=(key, index), block=block) or shown
            return shown
        shown = False
        if step.delta == "reasoning" and not block.header:
            if self.emit(THINKING, real, gap=gap(), block_key=(key, index), block=block):
                block.header = True
                shown = True
        if isinstance(text, str) and text:
            item_kind = REASONING if step.delta == "reasoning" else TEXT
            shown = self.emit(item_kind, real, text=text, gap=gap(), block_key=(key, index), block=block) or shown
        return shown

    def _tool_prelude(self, key, index: int, block: _Block, name: str | None, real, gap) -> bool:
        """Header, then the name, then the frame body — each at most once per block."""
        shown = False
        block_key = (key, index)
        if not block.header:
            if self.emit(TOOL_START, real, gap=gap(), block_key=block_key, block=block):
                block.header = True
                shown = True
            else:
                return False
        if name and not block.named:
            block.named = True
            block.body = True
            shown = self.emit(TOOL_NAME, real, gap=gap(), block_key=block_key, block=block, info={"name": name}) or shown
        elif not block.body and not name:
            return shown
        return shown

    def _run(self, key, step, anchored: bool, gap) -> bool:
        """One packed run: its members are one item."""
        record = step.record
        block = step.block
        index = block.index
        block_key = (key, index)
        shown = False
        if step.delta == "tool-call":
            self.streamed_calls.add(record.id)
            real = record.time0 if anchored else None
            shown = self._tool_prelude(key, index, block, step.name, real, gap)
            if not block.header:
                return shown
            if not block.body:
                # arguments before any name: open the body without one
                if not any(record.args):
                    return shown
                block.body = True
                shown = self.emit(TOOL_NAME, real, gap=gap(), block_key=block_key, block=block, info={"name": None}) or shown
            fragments = record.args
            if self.emit_run(TOOL_ARGS, record, fragments, anchored, first_gap=0 if shown else gap(), block_key=block_key, block=block):
                shown = shown or any(fragments)
            return shown
        item_kind = REASONING if step.delta == "reasoning" else TEXT
        if step.delta == "reasoning" and not block.header:
            real = record.time0 if anchored else None
            if self.emit(THINKING, real, gap=gap(), block_key=block_key, block=block):
                block.header = True
                shown = True
        fragments = record.texts
        if self.emit_run(item_kind, record, fragments, anchored, first_gap=0 if shown else gap(), block_key=block_key, block=block):
            shown = shown or any(fragments)
        return shown

    def _block_end(self, key, block: _Block, payload: Any, real, gap) -> bool:
        index = block.index
        block_key = (key, index)
        if block.type == "tool-call":
            if isinstance(payload, dict) and isinstance(payload.get("id"), str):
                self.streamed_calls.add(payload["id"])
            if block.header and block.body:
                if self.region is None and self.active_key != block_key:
                    return False  # another block's output closed its frame already
                return self.emit(TOOL_END, real, gap=gap(), block_key=block_key, block=block, info={"end": "closed"})
            if block.header:
                # header shown, no name or arguments streamed: complete it from the block
                name = payload.get("name") if isinstance(payload, dict) else None
                arguments = payload.get("arguments") if isinstance(payload, dict) else None
                info = {"end": "whole", "name": name, "arguments": arguments}
                return self.emit(TOOL_END, real, gap=gap(), block_key=block_key, block=block, info=info)
            if isinstance(payload, dict) and payload.get("type") == "tool-call":
                info = {"name": payload.get("name"), "arguments": payload.get("arguments")}
                return self.emit(TOOL_START, real, gap=gap(), block_key=block_key, block=block, info=info)
            return False
        if block.streamed:
            if self.region is not None:
                return False if block.line_end else self.emit(BLOCK_END, real, gap=gap(), block_key=block_key, block=block)
            if self.active_key == block_key and not self.line_start:
                return self.emit(BLOCK_END, real, gap=gap(), block_key=block_key, block=block)
            return False
        # a block that arrived whole (no deltas): show its content now
        if not isinstance(payload, dict):
            return False
        ptype = payload.get("type")
        if ptype in ("text", "reasoning"):
            text = payload.get("text")
            if not isinstance(text, str) or not text:
                return False
            kind = BLOCK if ptype == "text" else REASONING
            info = {"type": ptype, "text": text}
            if ptype == "reasoning":
                info["header"] = not block.header
            return self.emit(kind, real, gap=gap(), block_key=block_key, block=block, info=info)
        return self.emit(BLOCK, real, gap=gap(), block_key=block_key, block=block, info={"type": ptype, "placeholder": block_placeholder(payload)})

    def _finish(self, key, chunk: dict, blocks: dict, real, gap) -> None:
        reason = chunk.get("reason")
        kind = reason.get("kind") if isinstance(reason, dict) else None
        if kind in ("error", "aborted"):
            failure = reason.get("failure") if isinstance(reason, dict) else None
            code = failure.get("code") if isinstance(failure, dict) else None
            message = failure.get("message") if isinstance(failure, dict) else None
            self.emit(ATTEMPT_FAILED, real, gap=gap(), info={"code": code, "message": message, "kind": kind})
        elif kind == "max-tokens":
            # dsh drops every tool call of a reply cut by max tokens (FORMAT §4.6): each is marked so
            for index, block in blocks.items():
                if block.type != "tool-call":
                    continue
                if block.end_item is not None:
                    block.end_item.info["dropped"] = True
                elif block.header and not block.ended:
                    block.ended = True
                    if self.region is not None or self.active_key == (key, index):
                        self.emit(TOOL_END, real, gap=gap(), block_key=(key, index), block=block, info={"end": "max-tokens", "dropped": True})
                    elif block.closer is not None:
                        block.closer.prefix = block.closer.prefix._replace(dropped=True)
            self.emit(NOTE, real, gap=gap(), info={"note": "max-tokens"})

    def _whole_message(self, event: Event, data: dict) -> None:
        """A message without a stream (migrated legacy, synthetic writers): its content at once."""
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        key = event.seq
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            holder = _Block(index, block.get("type") if isinstance(block.get("type"), str) else "?")
            self._block_end(key, holder, block, event.time, lambda: EVENT_GAP_MS)
            if block.get("type") == "tool-call" and isinstance(block.get("id"), str):
                self.streamed_calls.add(block["id"])

    def _tool_call(self, event: Event, data: dict) -> None:
        name = data.get("name") if isinstance(data.get("name"), str) else "?"
        call_id = data.get("callId")
        if isinstance(call_id, str):
            self.call_names[call_id] = name
        streamed = isinstance(call_id, str) and call_id in self.streamed_calls
        info = {"name": name, "callId": call_id, "arguments": data.get("arguments"), "streamed": streamed}
        self.emit(TOOL_CALL, event.time, marker=f"tool: {name}", info=info)

    def _tool_result(self, event: Event) -> None:
        call_id = tool_result_call_id(event)
        blocks, is_error = tool_result_blocks(event)
        data = event.data if isinstance(event.data, dict) else {}
        error = data.get("error")
        if isinstance(error, dict):
            is_error = True
        else:
            error = None
        name = self.call_names.get(call_id or "", None)
        info = {"name": name, "callId": call_id, "isError": is_error, "lines": result_lines(blocks), "error": error}
        self.emit(TOOL_RESULT, event.time, info=info)

    def _retry(self, event: Event, data: dict) -> None:
        failure = data.get("failure")
        info = {
            "retry": _int(data.get("retry")),
            "code": failure.get("code") if isinstance(failure, dict) else None,
            "maxRetries": _int(data.get("maxRetries")),
            "delayMs": data.get("delayMs"),
        }
        self.emit(RETRY, event.time, info=info)

    def _turn_end(self, event: Event, data: dict, open_turn: int | None) -> None:
        # the turn the user saw closing is the open one, whatever number a damaged turn/end names
        reason = data.get("reason")
        kind = reason.get("kind") if isinstance(reason, dict) else None
        turn = open_turn if open_turn is not None else _int(data.get("turn"))
        info: dict[str, Any] = {"reason": kind, "turn": turn}
        if kind == "aborted":
            inner = reason.get("reason")
            info["by"] = inner.get("kind") if isinstance(inner, dict) else None
        elif kind == "error":
            error = reason.get("error")
            info["code"] = error.get("code") if isinstance(error, dict) else None
            info["message"] = error.get("message") if isinstance(error, dict) else None
        start = self.turn_start_time.get(turn) if turn is not None else None
        if start is not None and event.time is not None and event.time >= start:
            info["durationMs"] = event.time - start
        self.emit(TURN_END, event.time, info=info)


# --------------------------------------------------------------------------------------------------
# Helpers: message sources and non-text content blocks as words


def _time_span(stream: list) -> tuple[int, int]:
    """The earliest and the latest member time of a non-empty stream."""
    lows: list[int] = []
    highs: list[int] = []
    for record in stream:
        if record.__class__ is RawChunk:
            lows.append(record.time)
            highs.append(record.time)
        elif not record.dt or min(record.dt) >= 0:  # a clock that never stepped back: first and last
            lows.append(record.time0)
            highs.append(record.time0 + sum(record.dt))
        else:
            times = list(run_times(record))
            lows.append(min(times))
            highs.append(max(times))
    return min(lows), max(highs)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_SAME_NAME_PRODUCERS = frozenset(
    """agent-instructions session-reference team-message goal skill-invocation skill-catalog coordinator
    subagent-report subagent-settled webhook agent-message model-selection plan-mode time-context tmux-context
    user-approval repeat-tool-reminder tool-cordis cordis-host-runner tool-goal tool-jobs hooks-codex
    hooks-claude-code schedule dsh-session-title-llm""".split()
)
_RENAMED_PRODUCERS = {
    "compact": "compact-checkpoint",
    "tools-code-mode": "ptc-mode",
    "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
    "dsh-system-prompt": "runtime-context",
}


def source_label(source: Any) -> str:
    """A user-role message source as v4 names it (``{kind:"plugin", plugin:P}`` mapped as the v3→v4
    edge maps it, FORMAT §2.10.3), plus its ``form``."""
    if not isinstance(source, dict):
        return "message"
    kind = source.get("kind") if isinstance(source.get("kind"), str) else "message"
    plugin = source.get("plugin")
    if kind == "plugin" and isinstance(plugin, str) and plugin:
        bare = plugin.rsplit("/", 1)[-1]
        if bare in _RENAMED_PRODUCERS:
            kind = _RENAMED_PRODUCERS[bare]
        elif bare in _SAME_NAME_PRODUCERS:
            kind = bare
        else:
            kind = "plugin:" + plugin
    form = source.get("form")
    return kind + (f" {form}" if isinstance(form, str) and form else "")


def block_placeholder(block: Any) -> str:
    """``[image name · image/png · 69 B · 1×1]`` and friends for non-text content blocks."""
    if not isinstance(block, dict):
        return "[?]"
    kind = block.get("type")
    attachment = block.get("attachment")
    if kind == "image" and isinstance(attachment, dict):
        bits = []
        if isinstance(attachment.get("name"), str):
            bits.append(attachment["name"])
        if isinstance(attachment.get("mediaType"), str):
            bits.append(attachment["mediaType"])
        bits.append(format_bytes(attachment.get("bytes"), missing="? B", largest="MiB"))
        width, height = attachment.get("width"), attachment.get("height")
        if isinstance(width, int) and isinstance(height, int):
            dims = f"{width}×{height}"
            original = attachment.get("originalDimensions")
            if isinstance(original, dict) and isinstance(original.get("width"), int) and isinstance(original.get("height"), int):
                dims += f" (from {original['width']}×{original['height']})"
            bits.append(dims)
        if block.get("offloaded") is True:
            bits.append("offloaded")
        return "[image " + " · ".join(bits) + "]"
    if kind == "file" and isinstance(attachment, dict):
        bits = [str(attachment.get("name") or "file"), format_bytes(attachment.get("bytes"), missing="? B", largest="MiB")]
        return "[file " + " · ".join(bits) + "]"
    if kind == "tool-call":
        return f"[tool call {block.get('name') or '?'}]"
    if kind in ("tool-addition", "tool-removal"):
        return f"[{kind} {block.get('toolName') or '?'}]"
    return f"[{kind or 'block'}]"


def result_lines(blocks: list) -> list[str]:
    """The lines of a tool result's content blocks (text split on line breaks, others as placeholders)."""
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if text.endswith("\n"):
                text = text[:-1]
            lines.extend(text.split("\n"))
        elif isinstance(block, dict) and block.get("type") == "tool-result":
            inner = block.get("content")
            lines.extend(result_lines(inner if isinstance(inner, list) else []))
        else:
            lines.append(block_placeholder(block))
    return lines
