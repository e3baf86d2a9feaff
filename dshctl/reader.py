"""The one reading path: a source → header → normalized :class:`~dshctl.model.Event` values.

>>> log = open_log("samples/tour.session.jsonl.zstd")
>>> log.header.version, log.generation
(0, 0)
>>> for event in log.events(): ...

Memory stays bounded: lines stream from :mod:`dshctl.source`, events are
yielded one by one, and only the events of one pending v0 attempt are buffered.

Damage policy (dsh's, FORMAT §8.5): a torn final line or zstd frame is dropped
with a warning. An unparsable record or a seq gap makes the rest of the log
the torn tail — unless a later record is a ``turn/end``, which proves the
damage lies in the committed region: then the log is refused, naming file,
line and seq. In a zstd log, damage inside a complete frame is always fatal.
With ``strict=True`` any dropped tail is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any, Callable, Iterator

import msgspec

from .errors import DshctlError, FormatError
from .generations import parse_header
from .generations.current import attach_stream
from .generations.v0 import (
    ROW_TAGS,
    LegacyNormalizer,
    PackedRow,
    decode_row,
    decode_row_line,
    decode_source_event_seqs,
    fold_chunks,
)
from .jsvalues import MAX_SAFE_INTEGER
from .model import KNOWN_EVENT_TYPES, Event, Header
from .source import LineReader, LogRef, TornTail, as_ref
from .stream import SafeInt

_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp"})
_decoder = msgspec.json.Decoder()


class _WireEvent(msgspec.Struct, forbid_unknown_fields=True):
    """The common case of an event line, decoded without a dict in between. Anything else (packed rows,
    fixture lines, extra keys, wrong types) fails to decode here and takes the general path."""

    type: str
    seq: int
    time: SafeInt
    data: Any
    sourceEventSeqs: Any = None
    surfaceOp: Any = None
    ignorable: Any = None


_wire_decoder = msgspec.json.Decoder(_WireEvent)


@dataclass
class Log:
    """One opened log. :meth:`events` streams it once."""

    ref: LogRef
    header: Header
    reader: LineReader
    strict: bool = False
    on_warning: Callable[[str], None] | None = None
    warnings: list[str] = field(default_factory=list)
    fixture: bool = False
    """True when events carry no envelope seq/time (dsh's projected test-fixture form)."""
    cut: int | None = None
    """Seq of the first non-inherited event of a forked/seeded child (v0 seedLength; v2+ the last
    ``session/end-seed {inherited: true}``, known once the events were read)."""
    event_count: int = 0
    dropped_tail: str | None = None
    _lines: Iterator[tuple[int, bytes]] | None = None
    _consumed: bool = False

    @property
    def generation(self) -> int:
        return self.header.version

    @property
    def display(self) -> str:
        return self.ref.display

    @property
    def compressed(self) -> bool:
        return self.reader.compressed

    @property
    def torn_tail(self) -> TornTail | None:
        return self.reader.torn_tail

    @property
    def time_known(self) -> bool:
        return not self.fixture

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(f"{self.display}: {text}")

    def close(self) -> None:
        self.reader.close()

    def body_lines(self) -> Iterator[tuple[int, bytes]]:
        """The physical lines after the header, undecoded: ``(line number, bytes)``. For readers that
        look for one thing cheaply (``dshctl ls`` scans for titles); it consumes the log like
        :meth:`events`."""
        if self._consumed:
            raise RuntimeError("a Log can be streamed only once; open the log again")
        self._consumed = True
        assert self._lines is not None
        return self._lines

    def events(self) -> Iterator[Event]:
        """The normalized events in log order. A log can be streamed once."""
        if self._consumed:
            raise RuntimeError("a Log can be streamed only once; open the log again")
        self._consumed = True
        try:
            if self.generation <= 1:
                normalizer = LegacyNormalizer(self.header.id)
                logical = self._legacy(self._physical(), normalizer)
                yield from fold_chunks(logical, time_known=not self.fixture)
            else:
                for item in self._physical():
                    attach_stream(item)
                    yield item
        except DshctlError as exc:
            raise exc.located(file=self.display)
        finally:
            self.reader.close()
        self._finish()

    # -- internals ---------------------------------------------------------

    def _legacy(self, items, normalizer: LegacyNormalizer):
        known = KNOWN_EVENT_TYPES[self.generation]
        untouched = normalizer.UNTOUCHED
        for item in items:
            if isinstance(item, Event) and item.type not in untouched:
                try:
                    normalizer.normalize(item)
                except FormatError as exc:
                    raise exc.located(line=item.line, seq=item.seq)
                if item.type not in known:
                    self._flag_unknown(item)
            yield item

    def _flag_unknown(self, event: Event) -> None:
        if event.ignorable:
            event.note("unknown event type marked ignorable")
        else:
            event.note("unknown event type; dsh refuses a log holding it unless it is marked ignorable")

    def _physical(self) -> Iterator[Event | PackedRow]:
        lines = self._lines
        assert lines is not None
        v0 = self.generation <= 1
        known = KNOWN_EVENT_TYPES[self.generation]
        position = 0
        issue: FormatError | None = None
        dropped = 0
        first = True
        decode = _decoder.decode
        decode_wire = _wire_decoder.decode
        wire_errors = (msgspec.DecodeError, msgspec.ValidationError)
        fast = False
        for lineno, raw in lines:
            item: Event | PackedRow | None = None
            problem = None
            if fast:
                if v0 and b'-chunks"' in raw[:30]:
                    item = decode_row_line(raw, lineno)
                if item is None:
                    try:
                        wire = decode_wire(raw)
                    except wire_errors:
                        wire = None
                    if wire is not None:
                        item = self._event_from_wire(wire, lineno, position, v0, known)
            if item is None:
                try:
                    obj = decode(raw)
                except msgspec.DecodeError as exc:
                    obj = None
                    problem = FormatError(f"unparsable committed record: {_short(exc)}", line=lineno, seq=position)
            if problem is None and item is None:
                if type(obj) is not dict:
                    problem = FormatError(
                        f"record is JSON {type(obj).__name__}, not an event object", line=lineno, seq=position
                    )
                else:
                    if first:
                        first = False
                        self.fixture = "seq" not in obj and "seq0" not in obj
                        fast = not self.fixture
                        if self.fixture:
                            self.warn("events carry no seq/time (test-fixture form): seq assigned by position, times unknown")
                    try:
                        item = self._decode_record(obj, lineno, position, v0, known)
                    except FormatError as exc:
                        problem = exc.located(line=lineno, seq=position)
            if issue is not None:
                dropped += 1
                if _is_turn_end(item):
                    raise FormatError(
                        f"{issue.message}; a later turn/end at line {lineno} shows the damage is in the committed region",
                        line=issue.line,
                        seq=issue.seq,
                    )
                continue
            if problem is None:
                if type(item) is PackedRow:
                    seq, count = item.seq0, item.count
                else:
                    seq, count = item.seq, 1
                if seq == position:
                    position += count
                    yield item
                    continue
                problem = FormatError(
                    f"seq gap in committed region: expected seq {position}, found {seq}", line=lineno, seq=position
                )
            if self.reader.compressed and not self._in_torn_frame(lineno):
                raise problem.located(file=self.display)
            if _is_turn_end(item):
                raise problem
            issue = problem
            dropped = 1
        self.event_count = position
        if issue is not None:
            self.dropped_tail = issue.message
            text = (
                f"line {issue.line}: {issue.message}; dropped {dropped} line(s) from there as the torn tail "
                "(no later turn/end, as dsh does)"
            )
            if self.strict:
                raise FormatError(text, line=issue.line, seq=issue.seq)
            self.warn(text)

    def _in_torn_frame(self, lineno: int) -> bool:
        start = getattr(self.reader, "torn_frame_start_line", None)
        return start is not None and lineno >= start

    def _event_from_wire(self, wire: _WireEvent, lineno: int, position: int, v0: bool, known) -> Event:
        kind = wire.type
        event = Event(
            type=kind,
            seq=wire.seq,
            time=wire.time,
            data=wire.data,
            line=lineno,
            surfaceOp=wire.surfaceOp,
            ignorable=wire.ignorable is True,
        )
        if wire.sourceEventSeqs is not None:
            event.sourceEventSeqs = self._citation(wire.sourceEventSeqs, event, v0, position)
        if not v0 and kind not in known:
            self._flag_unknown(event)
        if kind == "session/end-seed" and self.generation >= 2 and isinstance(wire.data, dict):
            if wire.data.get("inherited") is True:
                self.cut = wire.seq
        return event

    @staticmethod
    def _citation(value: Any, event: Event, v0: bool, position: int) -> Any:
        """Decoded ``sourceEventSeqs`` (``position``: the seq the event must have); a v0 message's stays as
        written for :func:`fold_chunks`, which compares it with the pending attempt's seq runs without
        expanding it."""
        if v0 and event.type == "assistant/message":
            return value
        return decode_source_event_seqs(value, event, position)

    def _decode_record(self, obj: dict, lineno: int, position: int, v0: bool, known) -> Event | PackedRow:
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise FormatError("record has no string type")
        if v0 and kind in ROW_TAGS and "data" in obj and ("seq0" in obj or self.fixture):
            return decode_row(obj, lineno, position, self.fixture)
        if self.fixture:
            seq, time = position, None
        else:
            seq, time = obj.get("seq"), obj.get("time")
            if not isinstance(seq, int) or isinstance(seq, bool):
                raise FormatError("event has no integer seq")
            if not isinstance(time, int) or isinstance(time, bool):
                if isinstance(time, float) and time.is_integer():
                    time = int(time)
                else:
                    raise FormatError("event has no integer time")
            if not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
                # dsh's codec refuses it too; every clock computation downstream assumes it
                raise FormatError("event time is not a safe integer")
        if "data" not in obj:
            raise FormatError("event has no data")
        event = Event(
            type=kind,
            seq=seq,
            time=time,
            data=obj["data"],
            line=lineno,
            surfaceOp=obj.get("surfaceOp"),
            ignorable=obj.get("ignorable") is True,
        )
        if "sourceEventSeqs" in obj:
            event.sourceEventSeqs = self._citation(obj["sourceEventSeqs"], event, v0, position)
        if not obj.keys() <= _ENVELOPE_KEYS:
            extra = obj.keys() - _ENVELOPE_KEYS
            event.note(f"envelope has keys dsh refuses: {', '.join(sorted(extra))}")
        if not v0 and kind not in known:
            self._flag_unknown(event)
        if kind == "session/end-seed" and isinstance(event.data, dict):
            if self.generation >= 2 and event.data.get("inherited") is True:
                self.cut = seq
        return event

    def _finish(self) -> None:
        torn = self.reader.torn_tail
        if torn is not None:
            if torn.compressed_bytes is not None:
                text = (
                    f"torn tail dropped at line {torn.line}: the last zstd frame is incomplete "
                    f"({torn.compressed_bytes} bytes on disk, {torn.bytes} decoded bytes after its last complete line)"
                )
            else:
                text = f"torn tail dropped at line {torn.line} ({torn.bytes} bytes, {torn.reason})"
            if self.strict:
                raise FormatError(text, file=self.display, line=torn.line)
            self.warn(text)


def _is_turn_end(item) -> bool:
    """Whether a record *decoded* to a ``turn/end`` (dsh's proof of committed damage, FORMAT §8.5):
    an unparsable or malformed record proves nothing, whatever its type field says."""
    return type(item) is Event and item.type == "turn/end"


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 200 else text[:197] + "..."


def open_log(
    source: str | LogRef,
    *,
    strict: bool = False,
    on_warning: Callable[[str], None] | None = None,
    max_line_bytes: int | None = None,
    stop_at_line: int | None = None,
) -> Log:
    """Open one log and read its header. ``source`` is a path string (file or session directory) or
    ``-`` for stdin, or a :class:`~dshctl.source.LogRef` from :func:`dshctl.source.resolve`.

    ``stop_at_line`` ends the log before that physical line, as if it were the end of the file (the
    validator uses it to read only what precedes damage its stricter codec found)."""
    ref = as_ref(source)
    reader = LineReader(ref, max_line_bytes=max_line_bytes)
    lines = iter(reader)
    try:
        try:
            lineno, raw = next(lines)
        except StopIteration:
            torn = reader.torn_tail
            if torn is not None:
                raise FormatError("the header line is not terminated by LF (torn before the first record)", line=1)
            raise FormatError("no header line: not a dsh session log", line=1)
        try:
            obj = _decoder.decode(raw)
        except msgspec.DecodeError as exc:
            raise FormatError(f"line 1 is not JSON ({_short(exc)}): not a dsh session log", line=1)
        log = Log(ref=ref, header=Header(version=0), reader=reader, strict=strict, on_warning=on_warning)
        log.header = parse_header(obj, log.warn)
        if log.header.version <= 1 and log.header.seedLength is not None:
            log.cut = log.header.seedLength
        log._lines = lines if stop_at_line is None else takewhile(lambda item: item[0] < stop_at_line, lines)
        return log
    except DshctlError as exc:
        reader.close()
        raise exc.located(file=ref.display)
    except BaseException:
        reader.close()
        raise
