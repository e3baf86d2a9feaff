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

import os
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any, Callable, Iterator

import msgspec

from .errors import DshctlError, FormatError
from .generations import HEADER_NOT_JSON, NO_HEADER_LINE, TORN_HEADER_LINE, parse_header, unreadable_header
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
from .jsvalues import MAX_SAFE_INTEGER, NOT_JSON
from .model import KNOWN_EVENT_TYPES, Event, Header
from .source import LineReader, LogRef, TornTail, as_ref
from .wire import WireEvent, decode_wire_event

_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp"})
_decoder = msgspec.json.Decoder()


_WIRE_ERRORS = NOT_JSON  # msgspec.ValidationError is a DecodeError, a ValueError


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
    salvage: bool = False
    """Read past damage (FORMAT §8): a damaged zstd frame (located by the structural walk) or record
    is skipped and reported in :attr:`gaps` instead of ending the log."""
    record_gaps: list = field(default_factory=list)
    start_seq: int = 0
    """The seq of the first record after the header (0), or of the first record of a part of the log
    read on its own (:mod:`dshctl.stats.split`)."""
    _lines: Iterator[tuple[int, bytes]] | None = None
    _consumed: bool = False
    before_fold: Callable[[Event | PackedRow], None] | None = None
    """v0/v1: called with each record (a normalized event or a packed row) before the chunk fold holds
    it back (the live replay shows the attempt being streamed before its settlement)."""
    # Set when streaming starts: whether the generation is v0/v1, and its event-type inventory. Not
    # init=False: compiled with mypyc, such a field is left unset (read, it raises AttributeError).
    _v0: bool = field(default=False, repr=False)
    _known: frozenset = field(default=frozenset(), repr=False)
    _form_known: bool = field(default=False, repr=False)
    """Whether the first record has shown the envelope form (:attr:`fixture`)."""

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
    def gaps(self) -> list:
        """Salvage: every stretch of damage read past, in line order (:class:`~dshctl.source.lines.Gap`)."""
        return sorted([*self.reader.gaps, *self.record_gaps], key=lambda gap: gap.line)

    @property
    def time_known(self) -> bool:
        return not self.fixture

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(f"{self.display}: {text}")

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
                logical = self._normalize_legacy(self._physical(), normalizer)
                if self.before_fold is not None:
                    logical = _observed(logical, self.before_fold)
                yield from fold_chunks(logical, time_known=lambda: not self.fixture)
            else:
                for item in self._physical():
                    assert type(item) is Event  # packed rows are v0/v1's
                    attach_stream(item)
                    yield item
        except DshctlError as exc:
            raise exc.located(file=self.display)
        finally:
            self.reader.close()
        self._report_gaps()
        self._report_torn_tail()

    # -- internals ---------------------------------------------------------

    def _normalize_legacy(self, items, normalizer: LegacyNormalizer):
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
        """The records after the header, in seq order, under the damage policy of the module doc.

        The first record shows the envelope form (:meth:`_learn_form`); after it, lines written as
        dsh writes them take a one-pass typed decode (a v0 packed row: :func:`decode_row_line`; an
        event: :meth:`_decode_wire_event`) and anything else the general path
        (:meth:`_decode_general`), which judges it. Damage either ends the log here or starts a
        suspect tail (:meth:`_suspect_tail`)."""
        lines = self._lines
        assert lines is not None
        self._v0 = v0 = self.generation <= 1
        self._known = KNOWN_EVENT_TYPES[self.generation]
        position = self.start_seq  # the seq the next record must have
        suspect: _SuspectTail | None = None
        typed = False  # whether the typed decode applies: known from the first record
        decode_wire_event = self._decode_wire_event
        for lineno, raw in lines:
            item: Event | PackedRow | None = None
            if typed:
                if v0 and b'-chunks"' in raw[:30]:
                    item = decode_row_line(raw, lineno)
                if item is None:
                    item = decode_wire_event(raw, lineno, position)
            problem = None
            if item is None:
                item, problem = self._decode_general(raw, lineno, position)
                typed = self._form_known and not self.fixture
            if suspect is not None:
                suspect.saw(item, lineno)
                continue
            if problem is None:
                if type(item) is PackedRow:
                    seq, count = item.seq0, item.count
                else:
                    assert type(item) is Event  # no problem: it decoded
                    seq, count = item.seq, 1
                if seq == position:
                    position += count
                    yield item
                    continue
                problem = FormatError(
                    f"seq gap in committed region: expected seq {position}, found {seq}", line=lineno, seq=position
                )
            if self.salvage:
                after = self._salvaged(problem, item, position)
                if after is not None:
                    assert item is not None  # _salvaged reads on past a record only
                    position = after
                    yield item
                continue
            suspect = self._suspect_tail(problem, item, lineno)
        self.event_count = position
        if suspect is not None:
            self._drop_tail(suspect)

    def _learn_form(self, first: dict) -> None:
        """The first record shows the envelope form: dsh's own, or the test-fixture projection without
        seq and time (seq is then assigned by position)."""
        self._form_known = True
        self.fixture = "seq" not in first and "seq0" not in first
        if self.fixture:
            self.warn("events carry no seq/time (test-fixture form): seq assigned by position, times unknown")

    def _decode_wire_event(self, raw: bytes, lineno: int, position: int) -> Event | None:
        """An event line written as dsh writes it, decoded in one typed pass without a dict in between:
        its envelope has exactly the known keys and types. ``None`` for anything else, which
        :meth:`_decode_general` then decodes and judges."""
        try:
            wire: WireEvent = decode_wire_event(raw)
        except _WIRE_ERRORS:
            return None
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
            event.sourceEventSeqs = self._citation(wire.sourceEventSeqs, event, position)
        if not self._v0 and kind not in self._known:
            self._flag_unknown(event)
        if kind == "session/end-seed" and self.generation >= 2 and isinstance(wire.data, dict):
            if wire.data.get("inherited") is True:
                self.cut = wire.seq
        return event

    def _decode_general(self, raw: bytes, lineno: int, position: int) -> tuple[Event | PackedRow | None, FormatError | None]:
        """Any line: parsed as JSON and judged as a record. ``(record, None)``, or ``(None, the problem)``
        when it is damaged."""
        try:
            record = _decoder.decode(raw)
        except NOT_JSON as exc:
            return None, FormatError(f"unparsable committed record: {_brief(exc)}", line=lineno, seq=position)
        if type(record) is not dict:
            return None, FormatError(f"record is JSON {type(record).__name__}, not an event object", line=lineno, seq=position)
        if not self._form_known:
            self._learn_form(record)
        try:
            return self._decode_record(record, lineno, position), None
        except FormatError as exc:
            exc.located(line=lineno, seq=position)
            return None, exc

    def _suspect_tail(self, problem: FormatError, item: Event | PackedRow | None, lineno: int) -> _SuspectTail:
        """Damage at ``lineno``: fatal inside a complete zstd frame, or when the damaged record itself
        decoded to a ``turn/end``; otherwise where a torn tail may begin."""
        if self.reader.compressed and not self._in_torn_frame(lineno):
            raise problem.located(file=self.display)
        if _is_turn_end(item):
            raise problem
        return _SuspectTail(problem)

    def _drop_tail(self, suspect: _SuspectTail) -> None:
        """No later ``turn/end`` proved the damage committed: the lines from it on are the torn tail."""
        issue = suspect.issue
        self.dropped_tail = issue.message
        text = (
            f"{issue.message}; dropped {suspect.dropped} line(s) from there as the torn tail "
            "(no later turn/end, as dsh does)"
        )
        if self.strict:
            raise FormatError(text, line=issue.line, seq=issue.seq)  # the error names the line
        self.warn(f"line {issue.line}: {text}")

    def _in_torn_frame(self, lineno: int) -> bool:
        start = getattr(self.reader, "torn_frame_start_line", None)
        return start is not None and lineno >= start

    def _citation(self, value: Any, event: Event, position: int) -> Any:
        """Decoded ``sourceEventSeqs`` (``position``: the seq the event must have); a v0 message's stays as
        written for :func:`fold_chunks`, which compares it with the pending attempt's seq runs without
        expanding it."""
        if self._v0 and event.type == "assistant/message":
            return value
        return decode_source_event_seqs(value, event, position)

    def _decode_record(self, record: dict, lineno: int, position: int) -> Event | PackedRow:
        """A parsed record judged: a v0 packed row or an event, or FormatError saying what is wrong."""
        kind = record.get("type")
        if not isinstance(kind, str):
            raise FormatError("record has no string type")
        if self._v0 and kind in ROW_TAGS and "data" in record and ("seq0" in record or self.fixture):
            return decode_row(record, lineno, position, self.fixture)
        seq: Any
        time: Any
        if self.fixture:
            seq, time = position, None
        else:
            seq, time = record.get("seq"), record.get("time")
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
        if "data" not in record:
            raise FormatError("event has no data")
        event = Event(
            type=kind,
            seq=seq,
            time=time,
            data=record["data"],
            line=lineno,
            surfaceOp=record.get("surfaceOp"),
            ignorable=record.get("ignorable") is True,
        )
        if "sourceEventSeqs" in record:
            event.sourceEventSeqs = self._citation(record["sourceEventSeqs"], event, position)
        if not record.keys() <= _ENVELOPE_KEYS:
            extra = record.keys() - _ENVELOPE_KEYS
            event.note(f"envelope has keys dsh refuses: {', '.join(sorted(extra))}")
        if not self._v0 and kind not in self._known:
            self._flag_unknown(event)
        if kind == "session/end-seed" and isinstance(event.data, dict):
            if self.generation >= 2 and event.data.get("inherited") is True:
                self.cut = seq
        return event

    def _report_gaps(self) -> None:
        for gap in self.gaps:
            self.warn(f"line {gap.line}: salvage: {gap.message}")

    def _salvaged(self, problem: FormatError, item, position: int) -> int | None:
        """Salvage: damage at a record is a gap, not a torn tail. The position the next record must
        have: past ``item`` when it decoded (a seq gap: the lost records lie before it), else
        ``None`` (the line is skipped)."""
        from .source.lines import Gap

        if item is None:
            self.record_gaps.append(Gap(line=problem.line or 0, message=f"{problem.message}; line skipped"))
            return None
        seq, count = (item.seq0, item.count) if type(item) is PackedRow else (item.seq, 1)
        lost = seq - position
        message = f"{problem.message}; {lost} record(s) lost" if lost > 0 else f"{problem.message}; read on"
        self.record_gaps.append(Gap(line=problem.line or 0, message=message))
        return seq + count

    def _report_torn_tail(self) -> None:
        """The torn tail as one message: a warning naming its line, or with ``strict`` an error located there."""
        torn = self.reader.torn_tail
        if torn is None:
            return
        if torn.torn_frame is not None:
            text = f"torn tail dropped: {torn.torn_frame}"
        else:
            text = f"torn tail dropped ({torn.bytes} bytes, {torn.reason})"
        if self.strict:
            raise FormatError(text, file=self.display, line=torn.line)
        self.warn(f"line {torn.line}: {text}")


def _observed(items: Iterator[Event | PackedRow], observe: Callable[[Event | PackedRow], None]) -> Iterator[Event | PackedRow]:
    for item in items:
        observe(item)
        yield item


def _is_turn_end(item) -> bool:
    """Whether a record *decoded* to a ``turn/end`` (dsh's proof of committed damage, FORMAT §8.5):
    an unparsable or malformed record proves nothing, whatever its type field says."""
    return type(item) is Event and item.type == "turn/end"


class _SuspectTail:
    """Damage where a torn tail may begin (FORMAT §8.5): the lines from it on are dropped, unless a later
    record decodes to a ``turn/end``, which proves the damage lies in the committed region."""

    __slots__ = ("issue", "dropped")

    def __init__(self, issue: FormatError):
        self.issue = issue
        self.dropped = 1  # lines dropped so far, the damaged one included

    def saw(self, item: Event | PackedRow | None, lineno: int) -> None:
        """One more line after the damage; refuse the log if it is a ``turn/end``."""
        self.dropped += 1
        if _is_turn_end(item):
            raise FormatError(
                f"{self.issue.message}; a later turn/end at line {lineno} shows the damage is in the committed region",
                line=self.issue.line,
                seq=self.issue.seq,
            )


def _brief(exc: Exception) -> str:
    """An exception's text, cut to 200 characters."""
    text = str(exc)
    return text if len(text) < 200 else text[:197] + "..."


def open_log(
    source: str | os.PathLike | LogRef,
    *,
    strict: bool = False,
    on_warning: Callable[[str], None] | None = None,
    max_line_bytes: int | None = None,
    stop_at_line: int | None = None,
    salvage: bool = False,
    reader: LineReader | None = None,
) -> Log:
    """Open one log and read its header. ``source`` is a path (``str`` or ``os.PathLike``: a file or a
    session directory; the string ``-`` is stdin) or a :class:`~dshctl.source.LogRef` from
    :func:`dshctl.source.resolve` (see :func:`dshctl.source.as_ref`). The log is a context manager::

        with open_log(path) as log:
            for event in log.events(): ...

    ``stop_at_line`` ends the log before that physical line, as if it were the end of the file (the
    validator uses it to read only what precedes damage its stricter codec found). ``salvage`` reads
    past damage, reporting each gap (:attr:`Log.gaps`) instead of refusing the log. ``reader`` reads the
    lines instead of a new :class:`~dshctl.source.LineReader` over ``source`` (``--follow`` passes one
    that waits for the log to grow: :mod:`dshctl.source.follow`)."""
    ref = as_ref(source)
    if reader is None:
        reader = LineReader(ref, max_line_bytes=max_line_bytes, salvage=salvage)
    lines = iter(reader)
    try:
        try:
            lineno, raw = next(lines)
        except StopIteration:
            if reader.torn_tail is None:
                raise FormatError(NO_HEADER_LINE, line=1) from None
            message, line = unreadable_header(TORN_HEADER_LINE, compressed=reader.compressed, name=ref.display)
            raise FormatError(message, line=line) from None
        try:
            header_json = _decoder.decode(raw)
        except NOT_JSON:
            message, line = unreadable_header(HEADER_NOT_JSON, compressed=reader.compressed, name=ref.display)
            raise FormatError(message, line=line) from None
        log = Log(ref=ref, header=Header(version=0), reader=reader, strict=strict, on_warning=on_warning,
                  salvage=salvage)
        log.header = parse_header(header_json, log.warn)
        return _with_body(log, lines if stop_at_line is None else takewhile(lambda item: item[0] < stop_at_line, lines))
    except DshctlError as exc:
        reader.close()
        raise exc.located(file=ref.display)
    except BaseException:
        reader.close()
        raise


def open_part(ref: LogRef, header: Header, reader: LineReader, *, strict: bool = False, start_seq: int = 0) -> Log:
    """A part of a log read on its own (:mod:`dshctl.stats.split`): the records ``reader`` reads (a stretch
    of the file that starts at a record, not at the header), under ``header``, the log's own, read at its
    start; the first of them has seq ``start_seq``. Nothing is read until its events are."""
    return _with_body(Log(ref=ref, header=header, reader=reader, strict=strict, start_seq=start_seq), iter(reader))


def _with_body(log: Log, lines: Iterator[tuple[int, bytes]]) -> Log:
    """``log`` with ``lines`` as the lines after its header; a v0/v1 header's ``seedLength`` is where a
    seeded child's own records begin."""
    if log.header.version <= 1 and log.header.seedLength is not None:
        log.cut = log.header.seedLength
    log._lines = lines
    return log
