"""Level ``codec`` (and the raw half of ``stream``): one pass over the physical lines of a log.

The normalized model of :mod:`dshctl.reader` no longer shows exact key sets, ``-0``, packed-row
envelopes or the physical line a problem sits on, so this level reads the raw lines itself with
:class:`~dshctl.source.LineReader` and :func:`~dshctl.jsvalues.loads_strict` (stdlib JSON that keeps
``-0`` visible), reusing the header parser, the row decoder, the legacy normalizer and the
vocabularies of the reader.

Damage follows dsh's scanner (FORMAT §8.5, [v01] ``scanRows``, [v12] ``createDecoder``, [v23] v3
codec): the first record the physical decoder refuses (unparsable, malformed row, seq gap, and for
v2+ a malformed envelope) opens an *issue*; later records are only inspected for a ``turn/end``. If
one decodes, the damage is committed and the log is unreadable (exit 2); otherwise the records from
the issue on are the crash tail dsh drops, and the finding is a warning. In a zstd log an issue
inside a complete frame is always fatal. Everything past the decoder (validator refusals) is an
error finding on an otherwise readable log.

For v2+ settlements the embedded stream is expanded strictly here (level ``stream``), because the
strict rules are about the JSON as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshctl.errors import DshctlError
from dshctl.generations import (
    NO_HEADER_LINE,
    NO_NUMERIC_VERSION,
    NOT_A_SESSION_HEADER,
    HEADER_NOT_JSON,
    TORN_HEADER_LINE,
    unreadable_header,
    invalid_version,
    newer_version,
)
from dshctl.generations.v0 import ROW_TAGS, LegacyNormalizer, decode_row
from dshctl.jsvalues import loads_strict
from dshctl.model import KNOWN_EVENT_TYPES, SURFACE_EVENT_TYPES, Event
from dshctl.source import LineReader, LogRef, MAX_SUPPORTED_GENERATION

from . import payload
from .findings import Collector
from .streams import check_chunk_event, check_embedded_stream
from .values import as_int, count, has_placeholder, is_absolute_path, non_empty_str, safe_integer, short, type_name

__all__ = ["CodecResult", "run_codec"]

V0_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "delegationDepth")
V0_HEADER_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
V2_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "isSeeded", "delegationDepth")
V2_HEADER_OPTIONAL = ("cwd", "parentSession", "origin", "agentPreset")
RETIRED_HEADER_KEYS = ("sandboxMode", "approvalPolicy")

EVENT_REQUIRED = ("type", "seq", "time", "data")
EVENT_OPTIONAL = ("ignorable", "sourceEventSeqs", "surfaceOp")
LEGACY_V0_TYPES = frozenset({"steering/message", "compact/start", "compact/summary", "compact/end", "compact/prune"})
REFUSED_LEGACY_TYPES = frozenset({"request/header-delta", "mode/set"})
SETTLEMENTS = frozenset({"assistant/message", "assistant/attempt"})
STEP_EVENTS_V3 = frozenset({"system/message"})


@dataclass
class CodecResult:
    generation: int | None = None
    fixture: bool = False
    header: dict | None = None
    readable: bool = False
    events: int = 0  # logical events accepted (rows expanded)
    limit_seq: int | None = None  # first seq of the dropped damaged tail
    limit_line: int | None = None  # its physical line: the model levels read only the lines before it
    bad_streams: set[int] = field(default_factory=set)  # seqs whose stream failed strict expansion / chunk rules
    payload_refused: set[int] = field(default_factory=set)


class _Issue:
    __slots__ = ("rule", "message", "line", "seq", "frames", "dropped")

    def __init__(self, rule: str, message: str, line: int, seq: int, frames: int):
        self.rule, self.message, self.line, self.seq, self.frames = rule, message, line, seq, frames
        self.dropped = 1


class _Damage(Exception):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


def run_codec(ref: LogRef, col: Collector) -> CodecResult:
    return _CodecPass(ref, col).run()


class _CodecPass:
    def __init__(self, ref: LogRef, col: Collector):
        self.ref = ref
        self.col = col
        self.result = CodecResult()
        self.reader: LineReader | None = None
        self.fixture = False

    # ------------------------------------------------------------------ driver

    def run(self) -> CodecResult:
        result = self.result
        try:
            self.reader = LineReader(self.ref)
            lines = iter(self.reader)
            first = next(lines, None)
            if first is None:
                if self.reader.torn_tail is None:
                    self.col.add("codec/header", NO_HEADER_LINE, line=1)
                    return result
                message, line = unreadable_header(TORN_HEADER_LINE, compressed=self.reader.compressed,
                                                  name=self.ref.display)
                self.col.add("codec/header", message, line=line)
                return result
            if not self._header(*first):
                return result
            self._body(lines)
        except DshctlError as exc:
            self.col.add("codec/read", exc.message, line=exc.line)
            return result
        finally:
            if self.reader is not None:
                self.reader.close()
        return result

    # ------------------------------------------------------------------ header

    def _header(self, lineno: int, raw: bytes) -> bool:
        col = self.col
        try:
            obj = loads_strict(raw)
        except (ValueError, RecursionError):
            message, line = unreadable_header(HEADER_NOT_JSON, compressed=self.reader.compressed, name=self.ref.display)
            col.add("codec/header", message, line=line)
            return False
        if not isinstance(obj, dict) or obj.get("type") != "session":
            col.add("codec/header", NOT_A_SESSION_HEADER, line=1)
            return False
        version = obj.get("version")
        if isinstance(version, bool) or not isinstance(version, (int, float)):
            col.add("codec/header", NO_NUMERIC_VERSION, line=1)
            return False
        if not count(version):
            col.add("codec/version", invalid_version(short(version)), line=1)
            return False
        generation = int(version)
        if generation > MAX_SUPPORTED_GENERATION:
            col.add("codec/version", newer_version(generation), line=1)
            return False
        self.result.generation = generation
        self.result.header = obj
        self.result.readable = True
        self.gen = generation
        self.known = KNOWN_EVENT_TYPES[generation]
        self.surface = SURFACE_EVENT_TYPES[generation] | ({"steering/message"} if generation <= 1 else frozenset())
        self._check_header(obj)
        return True

    def _check_header(self, obj: dict) -> None:
        col, gen = self.col, self.gen
        required, optional = (V0_HEADER_REQUIRED, V0_HEADER_OPTIONAL) if gen <= 1 else (V2_HEADER_REQUIRED, V2_HEADER_OPTIONAL)
        unexpected = [k for k in obj if k not in required and k not in optional]
        missing = [k for k in required if k not in obj and k != "delegationDepth"]
        if unexpected or missing:
            parts = []
            if missing:
                parts.append("lacks " + ", ".join(missing))
            if unexpected:
                retired = [k for k in unexpected if k in RETIRED_HEADER_KEYS]
                parts.append("has keys the released v%d codec refuses: %s%s" % (
                    gen, ", ".join(unexpected), " (retired policy baseline fields)" if retired else ""))
            col.add("codec/header-keys", "header " + "; ".join(parts), line=1)
        fixture_cwd = has_placeholder(obj.get("cwd"))
        if "delegationDepth" not in obj:
            col.add("codec/delegation-depth", "header lacks delegationDepth, which dsh's reader requires on disk", line=1)
        elif not count(obj["delegationDepth"]):
            col.add("codec/delegation-depth", f"header delegationDepth {short(obj['delegationDepth'])} is not a "
                    "non-negative safe integer", line=1)
        problems = []
        if "id" in obj and not isinstance(obj["id"], str):
            problems.append("id must be a string")
        if "createdAt" in obj and not count(obj["createdAt"]):
            problems.append("createdAt must be a non-negative safe integer")
        for key in ("cwd", "parentSession", "agentPreset"):
            if key in obj and not isinstance(obj[key], str):
                problems.append(f"{key} must be a string")
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and not fixture_cwd and not is_absolute_path(cwd):
            problems.append(f"cwd {short(cwd)} must be an absolute path")
        if "origin" in obj and obj["origin"] != "subagent":
            problems.append('origin must be "subagent"')
        if gen >= 2 and "isSeeded" in obj and not isinstance(obj["isSeeded"], bool):
            problems.append("isSeeded must be a boolean")
        if gen <= 1 and "seedLength" in obj and not count(obj["seedLength"]):
            problems.append("seedLength must be a non-negative safe integer")
        for problem in problems:
            col.add("codec/header-fields", f"header {problem}", line=1)

    # ------------------------------------------------------------------ body

    def _body(self, lines) -> None:
        col, gen, result = self.col, self.gen, self.result
        reader = self.reader
        position = 0
        issue: _Issue | None = None
        fixture: bool | None = None
        v0 = gen <= 1
        self.marker: int | None = None  # last session/end-seed {inherited:true} (v2+)
        self.normalizer = LegacyNormalizer(result.header.get("id"))
        for lineno, raw in lines:
            obj: Any = None
            try:
                if not raw:
                    raise _Damage("codec/json", "blank line: an empty record is unparsable")
                try:
                    obj = loads_strict(raw)
                except (ValueError, RecursionError) as exc:
                    raise _Damage("codec/json", f"unparsable record: {_short_error(exc)}")
                if issue is not None:
                    if self._decodes_turn_end(obj, fixture):
                        self._committed(issue, lineno)
                        return
                    if self.gen >= 3:
                        self._v3_row_admission(obj, lineno)
                    issue.dropped += 1
                    continue
                if not isinstance(obj, dict):
                    raise _Damage("codec/json", f"record is JSON {type_name(obj)}, not an event object")
                if fixture is None:
                    # dsh's fixture form drops seq and time together; a record missing only one is damage
                    fixture = not any(key in obj for key in ("seq", "time", "seq0", "time0"))
                    result.fixture = fixture
                    self.fixture = fixture
                    if fixture:
                        col.add("codec/fixture-form", "events carry no seq/time (dsh's projected test-fixture form): "
                                "dsh cannot load this as-is; validated as materialized (seq by position, times unknown)",
                                line=lineno)
                kind = obj.get("type")
                if v0 and kind in ROW_TAGS and "data" in obj:
                    position = self._row(obj, lineno, position)
                    continue
                self._decoder(obj, lineno, position)
                try:
                    self._event(obj, lineno, position)
                except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
                    col.add("codec/payload", f"{_record_type(obj)} has a shape dshctl cannot inspect "
                            f"({type(exc).__name__}: {_short_error(exc)})", line=lineno, seq=position)
                    result.payload_refused.add(position)
                position += 1
            except _Damage as damage:
                if issue is not None:
                    issue.dropped += 1
                    continue
                issue = _Issue(damage.rule, damage.message, lineno, position, reader.frames)
                if self._decodes_turn_end(obj, fixture):
                    self._committed(issue, lineno)
                    return
        result.events = position
        self._finish(issue, position)

    def _v3_row_admission(self, obj: Any, lineno: int) -> None:
        """[v23] ``assertV3RowAdmission`` runs on every row before recovery: even a dropped tail row is refused
        when it is a request/header with ``system``, a malformed system/message or a non-ignorable
        tool/code-dispatch."""
        if not isinstance(obj, dict):
            return
        kind = obj.get("type")
        if kind in ("tool/code-dispatch-start", "tool/code-dispatch") and obj.get("ignorable") is not True:
            self.col.add("codec/unknown-type", f"{kind} (retired in v3) in the dropped tail is still refused", line=lineno)
        elif kind in ("request/header", "system/message"):
            try:
                data = obj.get("data")
                if kind == "system/message":
                    payload.check_v3_event(kind, 0, data) if self.gen == 3 else payload.check_v4_event(kind, 0, data)
                elif "system" in data["header"]:
                    raise payload.PayloadError("request/header carries the retired header.system")
            except payload.PayloadError as exc:
                self.col.add("codec/payload", f"{exc} (checked even in the dropped tail)", line=lineno)
            except (TypeError, AttributeError, KeyError, ValueError):
                self.col.add("codec/payload", f"{kind} in the dropped tail has a shape dsh's v3 admission refuses",
                             line=lineno)

    def _committed(self, issue: _Issue, turn_end_line: int) -> None:
        self.col.add(issue.rule, f"{issue.message}; a later turn/end (line {turn_end_line}) shows the damage is in "
                     "the committed region, so dsh refuses the whole log as corrupt",
                     line=issue.line, seq=issue.seq, fatal=True)

    def _decodes_turn_end(self, obj: Any, fixture: bool | None) -> bool:
        if not isinstance(obj, dict) or obj.get("type") != "turn/end":
            return False
        if fixture is None:
            fixture = "seq" not in obj
        if self.gen >= 2 and not fixture:
            saved, self.fixture = self.fixture, False
            try:
                # the v3 codec's event admission runs after decoding: a decoded turn/end that fails it
                # still proves the damage committed ([v23] releasedV3SessionFormatCodec.decodeRow)
                self._decoder(obj, 0, None, admission=False)
            except _Damage:
                return False
            finally:
                self.fixture = saved
        return True

    def _finish(self, issue: _Issue | None, position: int) -> None:
        col, result, reader = self.col, self.result, self.reader
        torn = reader.torn_tail
        if issue is not None:
            in_torn_frame = torn is not None and issue.frames == reader.frames
            if reader.compressed and not in_torn_frame:
                col.add(issue.rule, f"{issue.message}; in a zstd log damage inside a complete frame is corruption",
                        line=issue.line, seq=issue.seq, fatal=True)
                return
            result.limit_seq = issue.seq
            result.limit_line = issue.line
            col.add(issue.rule, f"{issue.message}; no later turn/end, so dsh drops this record and the {issue.dropped - 1} "
                    "after it as the crash boundary", line=issue.line, seq=issue.seq, severity="warning")
        if torn is not None:
            what = torn.torn_frame or f"{torn.bytes} bytes after the last complete record ({torn.reason})"
            col.add("codec/torn-tail", f"torn tail: {what}; dsh drops it", line=torn.line)
        if reader.compressed and reader.first_frame_lines is not None and reader.first_frame_lines != 1:
            col.add("codec/zstd-header-frame", f"the first zstd frame holds {reader.first_frame_lines} lines; dsh requires "
                    "the header alone in frame 1", line=1)
        self._seed_cut(position)

    def _seed_cut(self, events: int) -> None:
        header, col = self.result.header, self.col
        if self.gen <= 1:
            seed = header.get("seedLength")
            if count(seed) and int(seed) > events:
                col.add("codec/seed-cut", f"header seedLength {int(seed)} exceeds the log's {events} events", line=1)
            return
        seeded = header.get("isSeeded")
        if seeded is True and self.marker is None:
            col.add("codec/seed-cut", "header isSeeded is true but no session/end-seed {inherited:true} marks the cut", line=1)
        elif seeded is False and self.marker is not None:
            col.add("codec/seed-cut", f"header isSeeded is false but session/end-seed at seq {self.marker} is "
                    "marked inherited", line=1, seq=self.marker)

    # ------------------------------------------------------------------ v0 packed rows

    def _row(self, obj: dict, lineno: int, position: int) -> int:
        fixture = self.fixture
        try:
            row = decode_row(obj, lineno, position, fixture)
        except DshctlError as exc:
            raise _Damage("codec/packed-row", exc.message)
        data = obj["data"]
        problems = []
        for key in ("turn", "step"):
            if not count(data.get(key)):
                problems.append(f"{key} must be a non-negative safe integer")
        if not count(data.get("index")):
            problems.append("index must be a non-negative safe integer (not -0)")
        if not fixture:
            if not count(obj.get("seq0")):
                problems.append("seq0 must be a non-negative safe integer")
            if not safe_integer(obj.get("time0")):
                problems.append("time0 must be a safe integer (not -0)")
        if any(not safe_integer(gap) for gap in data.get("dt", [])):
            problems.append("dt entries must be safe integers (not -0)")
        if obj["type"] == "tool-call-chunks" and not non_empty_str(data.get("id")):
            problems.append("id must be a non-empty string")
        if problems:
            raise _Damage("codec/packed-row", f"malformed {obj['type']} storage row: " + "; ".join(problems))
        if not fixture and row.seq0 != position:
            raise _Damage("codec/seq-dense", f"seq gap: expected seq {position}, the row starts at seq0 {row.seq0}")
        return position + row.count

    # ------------------------------------------------------------------ decoder (damage class)

    def _decoder(self, obj: dict, lineno: int, position: int | None, admission: bool = True) -> None:
        """What the physical decoder refuses: raises :class:`_Damage`."""
        gen, fixture = self.gen, self.fixture
        kind = obj.get("type")
        seq = obj.get("seq")
        if gen >= 2:
            required = ("type", "data") if fixture else EVENT_REQUIRED
            missing = [k for k in required if k not in obj]
            if missing:
                raise _Damage("codec/record", f"event lacks required field {', '.join(missing)}")
            unexpected = [k for k in obj if k not in EVENT_REQUIRED and k not in EVENT_OPTIONAL]
            if unexpected:
                raise _Damage("codec/record", f"event has unexpected field {', '.join(map(str, unexpected))} "
                              "(the v2+ decoder refuses any other top-level key)")
            if not isinstance(kind, str):
                raise _Damage("codec/record", "event type must be a string")
            if not fixture and not safe_integer(obj["time"]):
                raise _Damage("codec/record", f"event time {short(obj['time'])} must be a safe integer")
            if "ignorable" in obj and obj["ignorable"] is not True:
                raise _Damage("codec/record", "event ignorable must be true when present")
        if "sourceEventSeqs" in obj:
            own = position if fixture else seq
            message = _seq_ranges_problem(obj["sourceEventSeqs"], own, v0=gen <= 1)
            if message is not None:
                raise _Damage("codec/record", f"sourceEventSeqs {message}")
        if position is not None and not fixture and (isinstance(seq, bool) or not isinstance(seq, (int, float))
                                                     or seq != position):
            raise _Damage("codec/seq-dense", f"seq gap: expected seq {position}, found {short(seq)}")
        if gen >= 3 and admission:
            self._v3_admission(obj, position if fixture else seq)

    def _v3_admission(self, obj: dict, seq: Any) -> None:
        """[v23] ``assertV3Event``: canonical envelopes, checked by the v3 decoder (damage class)."""
        kind = obj["type"]
        surface = kind in self.surface
        opaque = kind in ("tool/code-dispatch-start", "tool/code-dispatch") or (not surface and kind not in self.known)
        if not (surface or opaque):
            extra = [k for k in ("surfaceOp", "sourceEventSeqs") if k in obj]
            if extra:
                raise _Damage("codec/envelope-keys", f"{kind} is not a surface event but carries {', '.join(extra)}")
        if surface:
            op = obj.get("surfaceOp")
            if op is None:
                raise _Damage("codec/surface-op", f"{kind} requires a surfaceOp marker")
            if op != "append":
                if not isinstance(op, dict) or set(op) != {"op", "startSeq", "endSeq"} or op.get("op") != "replace":
                    raise _Damage("codec/surface-op", f"{kind} replace op must be exactly {{op:\"replace\", startSeq, endSeq}}")
                for key in ("startSeq", "endSeq"):
                    if not count(op[key]) or (isinstance(seq, int) and op[key] >= seq):
                        raise _Damage("codec/surface-op", f"{kind} replace {key} must name an earlier event")
            sources = obj.get("sourceEventSeqs")
            if kind == "assistant/message" and "sourceEventSeqs" in obj:
                raise _Damage("codec/source-event-seqs", "assistant/message embeds its stream and cannot carry sourceEventSeqs")
            if "sourceEventSeqs" in obj and (not isinstance(sources, list) or not sources):
                raise _Damage("codec/source-event-seqs", f"{kind} sourceEventSeqs must be a non-empty array")

    # ------------------------------------------------------------------ validator (findings)

    def _event(self, obj: dict, lineno: int, position: int) -> None:
        col, gen, fixture = self.col, self.gen, self.fixture
        kind = obj.get("type")
        seq = position
        data = obj.get("data")
        where = {"line": lineno, "seq": seq}
        if isinstance(data, dict):
            where["turn"] = data.get("turn")
            where["step"] = data.get("step")
        add = col.add
        # --- envelope keys (v0: the released v2 validator after migration; v2: validateReleasedV2Artifact)
        if gen <= 2:
            required = ("type", "data") if fixture else EVENT_REQUIRED
            missing = [k for k in required if k not in obj]
            unexpected = [k for k in obj if k not in EVENT_REQUIRED and k not in EVENT_OPTIONAL]
            if missing or unexpected:
                parts = ([f"lacks {', '.join(missing)}"] if missing else []) + \
                        ([f"has {', '.join(map(str, unexpected))}"] if unexpected else [])
                add("codec/envelope-keys", f"{kind} envelope " + "; ".join(parts), **where)
            known_non_surface = isinstance(kind, str) and kind in self.known and kind not in self.surface \
                and kind != "assistant/chunk"
            if known_non_surface:
                extra = [k for k in ("surfaceOp", "sourceEventSeqs") if k in obj]
                if extra:
                    add("codec/envelope-keys", f"{kind} is not a surface event but carries {', '.join(extra)}", **where)
            if gen <= 1:
                if not isinstance(kind, str):
                    add("codec/envelope-keys", "event type must be a string", **where)
                    return
                if not fixture and "time" in obj and not safe_integer(obj["time"]):
                    add("codec/time", f"event time {short(obj['time'])} must be a safe integer (not -0)", **where)
                if "ignorable" in obj and obj["ignorable"] is not True:
                    add("codec/ignorable", "ignorable must be true when present", **where)
        # --- vocabulary
        if not self._vocabulary(obj, kind, where):
            return
        # --- surface metadata
        self._surface(obj, kind, seq, where)
        # --- settlements
        if kind in SETTLEMENTS and isinstance(data, dict):
            self._settlement(obj, kind, data, seq, where)
        if not isinstance(data, dict) and kind != "assistant/chunk":
            if gen >= 2 or kind in self.known:
                add("codec/payload", f"{kind} data must be a JSON object, got {type_name(data)}", **where)
                self.result.payload_refused.add(seq)
            return
        # --- v0 chunks (the v1→v2 fold packs them)
        if kind == "assistant/chunk" and gen <= 1:
            self._v0_chunk(obj, data, seq, where)
            return
        # --- end-seed marker
        if kind == "session/end-seed" and gen >= 2 and data.get("inherited") is True:
            self.marker = seq
        # --- payload admission
        self._payload(obj, kind, data, seq, where)

    def _vocabulary(self, obj: dict, kind: str, where: dict) -> bool:
        gen, add = self.gen, self.col.add
        if gen <= 1:
            if kind in REFUSED_LEGACY_TYPES:
                add("codec/unknown-type", f"retired legacy event type {kind} is refused", **where)
                return False
            if kind == "request/header" and isinstance(obj.get("data"), dict) and obj["data"].get("reason") == "fallback":
                add("codec/unknown-type", 'request/header reason "fallback" is retired legacy vocabulary and refused', **where)
            if kind not in self.known and kind not in LEGACY_V0_TYPES:
                add("codec/unknown-type", f"unknown event type {kind!r}: the released v{gen} inventory is closed "
                    "(refused even when ignorable)", **where)
                return False
            return True
        if kind not in self.known:
            if obj.get("ignorable") is True:
                return False  # an ignorable extension: opaque to dsh and to dshctl
            add("codec/unknown-type", f"unknown event type {kind!r} not marked ignorable: dsh refuses the log "
                "as unsupported", **where)
            return False
        return True

    def _surface(self, obj: dict, kind: str, seq: int, where: dict) -> None:
        gen, add = self.gen, self.col.add
        surface = kind in self.surface
        if not surface:
            return
        if gen <= 2:
            op = obj.get("surfaceOp")
            if op is None:
                add("codec/surface-op", f"{kind} requires a surfaceOp marker", **where)
            elif op != "append":
                if not isinstance(op, dict) or set(op) != {"op", "start", "end"} or op.get("op") != "replace":
                    add("codec/surface-op", f"{kind} replace op must be exactly {{op:\"replace\", start, end}}, got {short(op)}",
                        **where)
                else:
                    for key in ("start", "end"):
                        if not count(op[key]) or int(op[key]) >= seq:
                            add("codec/surface-op", f"{kind} replace {key} {short(op[key])} must name an earlier event",
                                **where)
                            break
        if "sourceEventSeqs" not in obj:
            return
        sources = obj["sourceEventSeqs"]
        from dshctl.model import decode_seq_ranges

        decoded = decode_seq_ranges(sources, seq) if isinstance(sources, list) else None
        if decoded is None:
            return  # the decoder already refused it
        if len(set(decoded)) != len(decoded) or any(s >= seq for s in decoded):
            add("codec/source-event-seqs", f"{kind} sourceEventSeqs must be unique seqs earlier than {seq}", **where)
        elif not decoded and kind != "assistant/message":
            add("codec/source-event-seqs", f"{kind} sourceEventSeqs must be non-empty (only a v0 assistant/message "
                "may record an empty provider stream)", **where)
        elif gen == 2 and kind == "assistant/message":
            add("codec/source-event-seqs", "v2 assistant/message embeds its stream and must not carry chunk provenance",
                **where)

    def _settlement(self, obj: dict, kind: str, data: dict, seq: int, where: dict) -> None:
        add, gen = self.col.add, self.gen
        for key in ("turn", "step"):
            if not count(data.get(key)):
                add("codec/settlement-fields", f"{kind} {key} {short(data.get(key))} must be a non-negative safe integer",
                    **where)
        if gen <= 1:
            return
        if "stream" not in data:
            add("codec/settlement-fields", f"{kind} has no stream", **where)
            self.result.bad_streams.add(seq)
            return
        stream = data["stream"]
        if not isinstance(stream, list):
            add("codec/settlement-fields", f"{kind} stream must be an array, got {type_name(stream)}", **where)
            self.result.bad_streams.add(seq)
            return
        if not check_embedded_stream(stream, self.col, where):
            self.result.bad_streams.add(seq)

    def _v0_chunk(self, obj: dict, data: dict, seq: int, where: dict) -> None:
        for key in ("turn", "step"):
            if not count(data.get(key)):
                self.col.add("codec/payload", f"assistant/chunk {key} {short(data.get(key))} must be a non-negative "
                             "safe integer", **where)
        if not check_chunk_event(data.get("chunk"), self.col, where):
            self.result.bad_streams.add(seq)

    def _payload(self, obj: dict, kind: str, data: dict, seq: int, where: dict) -> None:
        add, gen, fixture = self.col.add, self.gen, self.fixture
        if gen >= 3 and kind in payload.DECLARED_RULES:
            self._declared(kind, data, seq, where)
        if not self.col.enabled("codec/payload") and not self.col.enabled("codec/payload-v3-migration") \
                and not self.col.enabled("codec/descriptor-version"):
            return
        try:
            if gen <= 1:
                event = Event(type=kind, seq=seq, time=obj.get("time"), data=data, line=where["line"],
                              surfaceOp=obj.get("surfaceOp"))
                try:
                    self.normalizer.normalize(event)
                except DshctlError as exc:
                    raise payload.PayloadError(exc.message)
                payload.check_v0_event(event.type, seq, event.data, fixture, gen)
            elif gen == 2:
                try:
                    payload.check_v2_migration(kind, seq, data, stream_ok=seq not in self.result.bad_streams,
                                               fixture=fixture)
                except payload.PayloadError as exc:
                    add("codec/payload-v3-migration", f"dsh 0.1.5+ refuses to migrate this log to v3: {exc}", **where)
            else:
                payload.check_v3_event(kind, seq, data) if gen == 3 else payload.check_v4_event(kind, seq, data)
        except payload.DescriptorVersion as exc:
            add("codec/descriptor-version", str(exc), **where)
        except payload.PayloadError as exc:
            add("codec/payload", str(exc), **where)
            self.result.payload_refused.add(seq)
        except (TypeError, AttributeError, KeyError, IndexError) as exc:  # shapes too broken to inspect
            if gen == 2:
                add("codec/payload-v3-migration", f"dsh 0.1.5+ refuses to migrate this log to v3: {kind} payload has "
                    f"an unexpected shape ({type(exc).__name__})", **where)
                return
            add("codec/payload", f"{kind} payload has an unexpected shape ({type(exc).__name__})", **where)
            self.result.payload_refused.add(seq)


    def _declared(self, kind: str, data: dict, seq: int, where: dict) -> None:
        """An event newer than the released admission, judged by its declared payload under a rule of its own."""
        rule = payload.DECLARED_RULES[kind]
        if not self.col.enabled(rule):
            return
        try:
            payload.check_declared(kind, seq, data, fixture=self.fixture)
        except payload.PayloadError as exc:
            self.col.add(rule, str(exc), **where)


def _seq_ranges_problem(value: Any, own_seq: Any, *, v0: bool) -> str | None:
    """[v01]/[v12] ``decodeSeqRanges``: None when decodable, else why not."""
    if not isinstance(value, list):
        return "must be an array"
    limit = as_int(own_seq) if count(own_seq) else None
    if limit is None:
        return "needs a valid envelope seq"
    output: list[int] = []
    has_range = False
    for entry in value:
        if isinstance(entry, list):
            if len(entry) != 2:
                return "range must be a [start, end] pair"
            if not count(entry[0]) or not count(entry[1]):
                return "range bounds must be non-negative safe integers"
            start, end = int(entry[0]), int(entry[1])
            if start > end or end - start + 1 > limit - len(output) or (not v0 and end >= limit):
                return "range exceeds its event seq"
            output.extend(range(start, end + 1))
            has_range = True
        else:
            if v0 and (isinstance(entry, bool) or not isinstance(entry, (int, float))):
                return "range must be a [start, end] pair"
            if v0 and len(output) >= limit:
                return "exceeds its event seq"
            if not count(entry):
                return "members must be non-negative safe integers"
            output.append(int(entry))
    if not v0 and (len(set(output)) != len(output) or any(s >= limit for s in output)):
        return "ranges must contain unique earlier seqs"
    if has_range and any(b <= a for a, b in zip(output, output[1:])):
        return "ranges must be strictly increasing"
    return None


def _record_type(obj: Any) -> str:
    """A record's ``type`` for a message, or ``event`` when it has none."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    return kind if isinstance(kind, str) else "event"


def _short_error(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 160 else text[:157] + "..."
