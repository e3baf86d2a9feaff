"""The compact assistant stream: records, packing, strict expansion and record-level readers.

Since format v2 every ``assistant/message`` and ``assistant/attempt`` carries ``data.stream``, one
provider attempt as a list of compact records (FORMAT.md §4.2)::

    {type: "text-chunks",      time0, index, dt, texts}
    {type: "reasoning-chunks", time0, index, dt, texts}
    {type: "tool-call-chunks", time0, index, dt, id, name?, args}
    {type: "chunk",            time, chunk}

A run stands for ``len(texts)`` (or ``len(args)``) deltas of one block; member ``k`` was received at
``time0 + dt[0] + ... + dt[k-1]``. Fragments are never joined, so a run expands back to the exact chunk
sequence. Chunks are plain dicts in dsh's JSON shape (§4.1); a *timed chunk* is ``(time, chunk)``.

What lives here, and why:

* ``Accumulator`` packs timed chunks exactly as dsh's ``AssistantStreamAccumulator`` does (§4.3), and
  appends whole v0/v1 packed rows with ``push_run`` the way the v1→v2 fold does (§2.4, §2.6).
* ``expand_strict`` is the validating path for records read at a durable boundary (§4.4). It works on
  raw JSON values, not typed records, because the rules are about the JSON (exact key sets, ``-0``, safe
  integers). Parse the JSON with :func:`dshctl.jsvalues.loads_strict` so that the literal ``-0`` stays
  detectable.
* ``decode_stream`` and ``stream_from_builtins`` type a stream only when every run has a shape readers
  can follow (``check_shape``): at least one member, one ``dt`` entry per further member, safe-integer
  times, gaps and indexes. A damaged stream raises instead, so no reader ever meets a run whose members
  and times disagree; ``expand_strict`` (below) remains the full §4.4 check.
* The readers (§4.5) answer the common questions — first token time, visible content, last usage,
  joined text — straight from typed records without building a dict per member, with early exit, in
  O(records) where dsh's readers are. They trust their input, like dsh's: validate first. (Assembly into
  content blocks is :func:`dshctl.assembler.assemble`.)
* ``is_token_delta``, ``is_visible_chunk`` and ``chunk_has_visible_text`` are the one home of the
  per-chunk rules every timing and visibility fold in dshctl must share.

The number and whitespace rules these lean on (safe integers, ``-0``, lossless JSON, JavaScript's ``\\s``)
are JavaScript's, and live in :mod:`dshctl.jsvalues`.
"""

from __future__ import annotations

from itertools import accumulate, islice
from typing import Any, Iterable, Iterator, NamedTuple, cast

import msgspec

from dshctl.build import mypyc_attr
from dshctl.errors import StreamError
from dshctl.jsvalues import (
    MAX_SAFE_INTEGER,
    NON_WHITESPACE,
    has_non_whitespace,
    is_lossless_json,
    safe_index,
    safe_int,
)
# The record types are declared in dshctl.stream_records, a module left pure (msgspec's class keywords
# are what mypyc cannot compile), and re-exported here, where every reader takes them from.
from dshctl.stream_records import (
    BlockIndex,
    Members,
    RawChunk,
    ReasoningChunks,
    Record,
    SafeInt,
    Stream,
    TextChunks,
    ToolCallChunks,
)

__all__ = [
    "RAW_CHUNK_TYPES",
    "TextChunks",
    "ReasoningChunks",
    "ToolCallChunks",
    "RawChunk",
    "Record",
    "Stream",
    "Accumulator",
    "decode_stream",
    "stream_from_builtins",
    "check_shape",
    "expand_strict",
    "iter_members",
    "run_times",
    "record_member_count",
    "is_token_delta",
    "is_visible_chunk",
    "chunk_has_visible_text",
    "run_first_token_time",
    "run_first_visible_time",
    "first_token_time",
    "first_visible_time",
    "has_visible_content",
    "has_visible_text",
    "last_raw_chunk",
    "raw_chunks",
    "joined_text",
    "BlockText",
    "block_texts",
    "StreamBlock",
    "BlockStep",
    "walk_blocks",
]

# --------------------------------------------------------------------------------------------------
# Records (§4.2): declared in dshctl.stream_records


_RUN_CLASSES = (TextChunks, ReasoningChunks, ToolCallChunks)

RAW_CHUNK_TYPES = frozenset({"block-start", "block-end", "usage", "finish"})
"""Chunk types the accumulator never packs, so every occurrence is a raw record (§4.3)."""

_stream_decoder = msgspec.json.Decoder(list[Record])


def decode_stream(json_bytes: bytes | str) -> list[Record]:
    """Decode a JSON array of stream records into typed records (unknown extra keys are ignored).

    Raises ``msgspec.ValidationError`` or ``ValueError`` for a stream that breaks the shape every reader
    relies on (see ``check_shape``)."""
    return check_shape(_stream_decoder.decode(json_bytes))


def stream_from_builtins(records: Iterable[Any]) -> list[Record]:
    """Convert already-parsed JSON (a list of dicts) into typed records (unknown extra keys are ignored).

    Raises like ``decode_stream``."""
    return check_shape(msgspec.convert(records, list[Record]))


def check_shape(records: list[Record]) -> list[Record]:
    """Refuse typed records whose run shape no reader can follow, and return them.

    The record types already bound ``time0``, ``time``, ``index`` and every ``dt`` entry to safe integers
    and require at least one member; this adds ``len(dt) == members - 1`` and safe member times (the
    ``dt-length`` and ``member-time`` rules of §4.4). Every reader below trusts these two facts: a run of
    ``n`` members has ``n`` times, all within ±``MAX_SAFE_INTEGER``.
    """
    for position, record in enumerate(records):
        if type(record) is RawChunk:
            continue
        members = record_member_count(record)
        if len(record.dt) != members - 1:
            raise ValueError(f"stream record {position} has {members} members but {len(record.dt)} dt entries")
        if record.dt and not _member_times_are_safe(record):
            raise ValueError(f"stream record {position} has member times beyond the safe integers")
    return records


def _member_times_are_safe(record: TextChunks | ReasoningChunks | ToolCallChunks) -> bool:
    if abs(record.time0) + sum(map(abs, record.dt)) <= MAX_SAFE_INTEGER:
        return True
    times = list(accumulate(record.dt, initial=record.time0))
    return -MAX_SAFE_INTEGER <= min(times) and max(times) <= MAX_SAFE_INTEGER


def _time_gap(previous: int, time: int) -> int | None:
    gap = time - previous
    return gap if -MAX_SAFE_INTEGER <= gap <= MAX_SAFE_INTEGER else None


# --------------------------------------------------------------------------------------------------
# Packing (§4.3, §2.6)


class Accumulator:
    """Packs timed chunks into compact records exactly as dsh's ``AssistantStreamAccumulator``.

    ``push`` rules (§4.3): text/reasoning deltas (empty text included) join the previous record when it
    is a run of the same kind and block index and the gap from its last member time is a safe integer.
    Tool-call deltas join only a tool-call run with the same index, the same id and the same presence
    and value of ``name``; a delta whose ``id`` or ``name`` is ``""`` becomes a raw record. ``block-start``,
    ``block-end``, ``usage`` and ``finish`` are raw records; an unknown chunk type raises ValueError, as do a
    time that is not a safe integer, an index that is not a non-negative safe integer (``-0`` included),
    a non-string text/id/name/argumentsDelta, and a chunk that is not lossless JSON.

    Deltas are packed from their fields alone, so extra keys on a delta are dropped (dsh does the same).
    Raw chunk dicts are stored by reference, not copied: do not mutate a chunk after pushing it.

    ``push_run`` appends a whole packed run (a v0/v1 storage row, §2.4) and merges it into the previous
    run under the v1→v2 fold's rule (§2.6): same run type and index, for tool calls the same id and name,
    and a safe gap from the previous run's last member time to the new run's ``time0``. For a valid row (safe
    ``dt`` entries) the result equals pushing its members one by one. One deliberate difference from dsh: a tool-call row
    with ``id`` or ``name`` equal to ``""`` (a v0 writer packs such deltas) is expanded into raw records, as
    ``push`` would; dsh's migration appends it as a run that its own strict expansion then refuses.
    """

    __slots__ = ("_records", "_last_time")

    def __init__(self) -> None:
        self._records: list[Record] = []
        # Time of the last member of the last record, when that record is a run.
        self._last_time = 0

    @property
    def records(self) -> list[Record]:
        """The packed records so far (the live list: read it, do not mutate it)."""
        return self._records

    def __len__(self) -> int:
        return len(self._records)

    def push(self, time: Any, chunk: Any) -> None:
        # Any: a time or chunk that is not an int or a dict is refused here with ValueError (the compiled
        # build would raise TypeError at the call for a narrower annotation)
        safe_time: int | None
        if time.__class__ is int and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
            safe_time = time
        else:
            safe_time = safe_int(time)
            if safe_time is None:
                raise ValueError(f"assistant stream time must be a safe integer, got {time!r}")
        if not isinstance(chunk, dict):
            raise ValueError(f"assistant stream chunk must be an object, got {type(chunk).__name__}")
        for value in chunk.values():
            if value.__class__ is not str and value.__class__ is not int and not is_lossless_json(value):
                raise ValueError("assistant stream chunk must be losslessly JSON-serializable")
        kind = chunk.get("type")
        records = self._records

        if kind == "text-delta" or kind == "reasoning-delta":
            index = chunk.get("index")
            if index.__class__ is not int or index < 0 or index > MAX_SAFE_INTEGER:
                index = safe_index(index)
                if index is None:
                    raise ValueError(f"{kind} index must be a non-negative safe integer, got {chunk.get('index')!r}")
            text = chunk.get("text")
            if text.__class__ is not str and not isinstance(text, str):
                raise ValueError(f"{kind} text must be a string")
            run_class = TextChunks if kind == "text-delta" else ReasoningChunks
            if records:
                last = records[-1]
                if type(last) is run_class and last.index == index:
                    gap = safe_time - self._last_time
                    if -MAX_SAFE_INTEGER <= gap <= MAX_SAFE_INTEGER:
                        last.dt.append(gap)
                        last.texts.append(text)
                        self._last_time = safe_time
                        return
            records.append(run_class(safe_time, index, [], [text]))
            self._last_time = safe_time
            return

        previous: Record | None = records[-1] if records else None
        if kind == "tool-call-delta":
            index = safe_index(chunk.get("index"))
            if index is None:
                raise ValueError(f"tool-call-delta index must be a non-negative safe integer, got {chunk.get('index')!r}")
            call_id = chunk.get("id")
            if not isinstance(call_id, str):
                raise ValueError("tool-call-delta id must be a string")
            named = "name" in chunk
            name = chunk["name"] if named else msgspec.UNSET
            if named and not isinstance(name, str):
                raise ValueError("tool-call-delta name must be a string")
            arguments = chunk.get("argumentsDelta")
            if not isinstance(arguments, str):
                raise ValueError("tool-call-delta argumentsDelta must be a string")
            if call_id == "" or name == "":
                records.append(RawChunk(safe_time, chunk))
                return
            if (
                previous is not None
                and type(previous) is ToolCallChunks
                and previous.index == index
                and previous.id == call_id
                and previous.name == name
            ):
                call_gap = _time_gap(self._last_time, safe_time)
                if call_gap is not None:
                    previous.dt.append(call_gap)
                    previous.args.append(arguments)
                    self._last_time = safe_time
                    return
            records.append(ToolCallChunks(time0=safe_time, index=index, dt=[], id=call_id, name=name, args=[arguments]))
            self._last_time = safe_time
            return

        if kind in RAW_CHUNK_TYPES:
            records.append(RawChunk(safe_time, chunk))
            return
        raise ValueError(f"unknown assistant stream chunk type {kind!r}")

    def push_run(self, record: Any) -> None:
        # Any: anything but a packed run is refused here with ValueError (see push)
        cls = record.__class__
        if cls not in _RUN_CLASSES:
            raise ValueError(f"push_run takes a packed run, got {cls.__name__}")
        time0 = safe_int(record.time0)
        if time0 is None:
            raise ValueError(f"run time0 must be a safe integer, got {record.time0!r}")
        members = record.args if type(record) is ToolCallChunks else record.texts
        if not members or len(record.dt) != len(members) - 1:
            raise ValueError("a run needs at least one member and exactly one dt entry per further member")
        if type(record) is ToolCallChunks and (record.id == "" or record.name == ""):
            # Such members are raw records under push's rules; keep push_run equal to pushing the members.
            for time, chunk in iter_members([record]):
                self.push(time, chunk)
            return
        last_time = time0 + sum(record.dt)
        records = self._records
        previous: Any = records[-1] if records else None
        if previous is not None and type(previous) is cls and previous.index == record.index:
            gap = _time_gap(self._last_time, time0)
            same_call = type(record) is not ToolCallChunks or (previous.id == record.id and previous.name == record.name)
            if gap is not None and same_call:
                previous.dt.append(gap)
                previous.dt.extend(record.dt)
                if type(record) is ToolCallChunks:
                    previous.args.extend(record.args)
                else:
                    previous.texts.extend(record.texts)
                self._last_time = last_time
                return
        if type(record) is ToolCallChunks:
            copy: Record = ToolCallChunks(
                time0=time0, index=record.index, dt=list(record.dt), id=record.id, name=record.name, args=list(record.args)
            )
        else:
            copy = cls(time0, record.index, list(record.dt), list(record.texts))
        records.append(copy)
        self._last_time = last_time


# --------------------------------------------------------------------------------------------------
# Expansion


def record_member_count(record: Record) -> int:
    """How many timed chunks a record stands for (1 for a raw record)."""
    if type(record) is RawChunk:
        return 1
    if type(record) is ToolCallChunks:
        return len(record.args)
    return len(record.texts)


def run_times(record: Record) -> Iterator[int]:
    """The receipt time of each member (a raw record has one)."""
    if type(record) is RawChunk:
        return iter((record.time,))
    return islice(accumulate(record.dt, initial=record.time0), record_member_count(record))


def iter_members(stream: Iterable[Record]) -> Iterator[tuple[int, dict]]:
    """Expand typed records lazily into timed chunks. Trusts its input (see ``expand_strict``)."""
    for record in stream:
        if type(record) is RawChunk:
            yield record.time, record.chunk
            continue
        index = record.index
        times = accumulate(record.dt, initial=record.time0)
        if type(record) is ToolCallChunks:
            call_id = record.id
            name = record.name
            if name is msgspec.UNSET:
                for time, fragment in zip(times, record.args):
                    yield time, {"type": "tool-call-delta", "index": index, "id": call_id, "argumentsDelta": fragment}
            else:
                for time, fragment in zip(times, record.args):
                    yield time, {
                        "type": "tool-call-delta",
                        "index": index,
                        "id": call_id,
                        "name": name,
                        "argumentsDelta": fragment,
                    }
        else:
            kind = "text-delta" if type(record) is TextChunks else "reasoning-delta"
            for time, text in zip(times, record.texts):
                yield time, {"type": kind, "index": index, "text": text}


_TEXT_RUN_KEYS = frozenset({"type", "time0", "index", "dt", "texts"})
_TOOL_RUN_KEYS = frozenset({"type", "time0", "index", "dt", "id", "args"})
_NAMED_TOOL_RUN_KEYS = _TOOL_RUN_KEYS | {"name"}
_RAW_KEYS = frozenset({"type", "time", "chunk"})


def _refuse(position: int, rule: str, detail: str) -> StreamError:
    return StreamError(f"assistant stream record {position}: {detail} (rule {rule})", record=position, rule=rule)


def _require_exact_keys(record: dict, keys: frozenset, position: int, label: str) -> None:
    if record.keys() != keys:
        expected = ", ".join(sorted(keys))
        found = ", ".join(sorted(map(str, record.keys())))
        raise _refuse(position, "exact-keys", f"{label} record must have exactly the keys {expected}; has {found}")


def _is_string_list(value: Any) -> bool:
    return value.__class__ is list and all(isinstance(member, str) for member in value)


def _validated_run_times(record: dict, members: int, position: int, label: str) -> tuple[int, list[int]]:
    """Check time0, index and dt (§4.4) and return the index and every member's time."""
    time0 = safe_int(record["time0"])
    if time0 is None:
        raise _refuse(position, "safe-integer", f"{label} time0 must be a safe integer, got {record['time0']!r}")
    index = safe_index(record["index"])
    if index is None:
        raise _refuse(position, "index", f"{label} index must be a non-negative safe integer (not -0), got {record['index']!r}")
    dt = record["dt"]
    if dt.__class__ is not list:
        raise _refuse(position, "safe-integer", f"{label} dt must be an array of safe integers")
    gaps = [safe_int(gap) for gap in dt]
    if None in gaps:
        bad = dt[gaps.index(None)]
        raise _refuse(position, "safe-integer", f"{label} dt entries must be safe integers, got {bad!r}")
    if len(gaps) != members - 1:
        raise _refuse(position, "dt-length", f"{label} has {members} members but {len(gaps)} dt entries (want {members - 1})")
    times = list(accumulate(cast("list[int]", gaps), initial=time0))  # no None: checked above
    if min(times) < -MAX_SAFE_INTEGER or max(times) > MAX_SAFE_INTEGER:
        raise _refuse(position, "member-time", f"{label} member times must stay safe integers")
    return index, times


def expand_strict(records: Iterable[Any]) -> Iterator[tuple[int, dict]]:
    """Validate raw JSON stream records as dsh's ``expandAssistantStream`` does (§4.4) and expand them.

    Lazy: each record is checked completely, then its members are yielded; the first violation raises
    ``StreamError`` with ``record`` (0-based position) and ``rule`` set. Rules, in dsh's checking order:
    ``not-object``, ``type``, ``exact-keys``, ``texts``/``args``, ``id``, ``name``, ``safe-integer`` (time0, dt
    entries, raw ``time``), ``index``, ``dt-length``, ``member-time``, ``raw-chunk``.

    Numbers are judged as JavaScript sees them: an integral float counts as an integer, a bool does
    not, ``NEG_ZERO``/``-0.0`` is refused as an index (it is a valid time). Yielded times and indexes are
    plain ints. A raw chunk must be lossless JSON (no -0, NaN or Infinity anywhere inside); its inner
    structure is not checked, and it is yielded as given (not copied).
    """
    for position, record in enumerate(records):
        if not isinstance(record, dict):
            raise _refuse(position, "not-object", f"record must be an object, got {type(record).__name__}")
        kind = record.get("type")
        if kind == "text-chunks" or kind == "reasoning-chunks":
            _require_exact_keys(record, _TEXT_RUN_KEYS, position, kind)
            texts = record["texts"]
            if not _is_string_list(texts):
                raise _refuse(position, "texts", f"{kind} texts must be an array of strings")
            if not texts:
                raise _refuse(position, "texts", f"{kind} texts must be non-empty")
            index, times = _validated_run_times(record, len(texts), position, kind)
            delta = "text-delta" if kind == "text-chunks" else "reasoning-delta"
            for time, text in zip(times, texts):
                yield time, {"type": delta, "index": index, "text": text}
        elif kind == "tool-call-chunks":
            named = "name" in record
            _require_exact_keys(record, _NAMED_TOOL_RUN_KEYS if named else _TOOL_RUN_KEYS, position, kind)
            args = record["args"]
            if not _is_string_list(args):
                raise _refuse(position, "args", "tool-call-chunks args must be an array of strings")
            if not args:
                raise _refuse(position, "args", "tool-call-chunks args must be non-empty")
            call_id = record["id"]
            if not isinstance(call_id, str) or not call_id:
                raise _refuse(position, "id", f"tool-call-chunks id must be a non-empty string, got {call_id!r}")
            name = record.get("name")
            if named and (not isinstance(name, str) or not name):
                raise _refuse(position, "name", f"tool-call-chunks name must be a non-empty string, got {name!r}")
            index, times = _validated_run_times(record, len(args), position, kind)
            for time, fragment in zip(times, args):
                if named:
                    chunk = {"type": "tool-call-delta", "index": index, "id": call_id, "name": name, "argumentsDelta": fragment}
                else:
                    chunk = {"type": "tool-call-delta", "index": index, "id": call_id, "argumentsDelta": fragment}
                yield time, chunk
        elif kind == "chunk":
            _require_exact_keys(record, _RAW_KEYS, position, "chunk")
            raw_time = safe_int(record["time"])
            if raw_time is None:
                raise _refuse(position, "safe-integer", f"raw chunk time must be a safe integer, got {record['time']!r}")
            chunk = record["chunk"]
            if not isinstance(chunk, dict):
                raise _refuse(position, "raw-chunk", "raw chunk must be a non-null, non-array object")
            if not is_lossless_json(chunk):
                raise _refuse(position, "raw-chunk", "raw chunk must be lossless JSON (no -0, NaN or Infinity)")
            yield raw_time, chunk
        else:
            raise _refuse(position, "type", f"unsupported record type {kind!r}")


# --------------------------------------------------------------------------------------------------
# Chunk rules (§4.5) — the one home for them


def is_token_delta(chunk: dict) -> bool:
    """Whether the chunk carries a model output token (the first-token boundary of every timing fold).

    Text/reasoning deltas with non-empty text; tool-call deltas with non-empty ``argumentsDelta`` or any
    ``name`` at all (even ``""``); never block, usage or finish chunks.
    """
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":
        return chunk.get("text") != ""
    if kind == "tool-call-delta":
        return chunk.get("argumentsDelta") != "" or "name" in chunk
    return False


def _block_is_visible(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind == "tool-call":
        return False
    if kind == "text" or kind == "reasoning":
        return has_non_whitespace(block.get("text"))
    return True


def is_visible_chunk(chunk: dict) -> bool:
    """Whether the chunk alone shows the reader something.

    Text/reasoning deltas with a non-whitespace character; a ``block-start`` of any kind other than
    text, reasoning and tool-call (e.g. image); a ``block-end`` whose block is text/reasoning with
    non-whitespace text or any other kind except tool-call. Usage and finish never count.
    """
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":
        return has_non_whitespace(chunk.get("text"))
    if kind == "block-start":
        return chunk.get("blockType") not in ("text", "reasoning", "tool-call")
    if kind == "block-end":
        return _block_is_visible(chunk.get("block"))
    return False


def chunk_has_visible_text(chunk: dict) -> bool:
    """A non-whitespace ``text-delta``, or the ``block-end`` of a ``text`` block with non-whitespace text."""
    kind = chunk.get("type")
    if kind == "text-delta":
        return has_non_whitespace(chunk.get("text"))
    if kind == "block-end":
        block = chunk.get("block")
        return isinstance(block, dict) and block.get("type") == "text" and has_non_whitespace(block.get("text"))
    return False


# --------------------------------------------------------------------------------------------------
# Record-level readers (§4.5): no member dicts, early exit


def _member_time(record: TextChunks | ReasoningChunks | ToolCallChunks, position: int) -> int:
    return record.time0 + sum(islice(record.dt, position))


def run_first_token_time(record: TextChunks | ReasoningChunks | ToolCallChunks) -> int | None:
    """A named tool-call run → ``time0``; otherwise the time of the first non-empty member."""
    if type(record) is ToolCallChunks:
        if record.name is not msgspec.UNSET:
            return record.time0
        fragments = record.args
    else:
        fragments = record.texts
    for position, fragment in enumerate(fragments):
        if fragment:
            return record.time0 if position == 0 else _member_time(record, position)
    return None


def run_first_visible_time(record: TextChunks | ReasoningChunks | ToolCallChunks) -> int | None:
    """The time of the first non-whitespace member of a text/reasoning run; tool-call runs have none."""
    if type(record) is ToolCallChunks:
        return None
    search = NON_WHITESPACE.search
    for position, text in enumerate(record.texts):
        if search(text) is not None:
            return record.time0 if position == 0 else _member_time(record, position)
    return None


def first_token_time(stream: Iterable[Record]) -> int | None:
    """Receipt time of the first token (``is_token_delta``), or None when the stream has none."""
    for record in stream:
        if type(record) is RawChunk:
            if is_token_delta(record.chunk):
                return record.time
        else:
            time = run_first_token_time(record)
            if time is not None:
                return time
    return None


def first_visible_time(stream: Iterable[Record]) -> int | None:
    """Receipt time of the first visible chunk (``is_visible_chunk``), or None."""
    for record in stream:
        if type(record) is RawChunk:
            if is_visible_chunk(record.chunk):
                return record.time
        else:
            time = run_first_visible_time(record)
            if time is not None:
                return time
    return None


def has_visible_content(stream: Iterable[Record]) -> bool:
    """Whether any chunk is visible (``is_visible_chunk``)."""
    for record in stream:
        if type(record) is RawChunk:
            if is_visible_chunk(record.chunk):
                return True
        elif type(record) is not ToolCallChunks:
            # One search over the joined run answers "does any member have a non-whitespace character".
            if NON_WHITESPACE.search("".join(record.texts)) is not None:
                return True
    return False


def has_visible_text(stream: Iterable[Record]) -> bool:
    """Whether any chunk carries visible text (``chunk_has_visible_text``)."""
    for record in stream:
        if type(record) is TextChunks:
            if NON_WHITESPACE.search("".join(record.texts)) is not None:
                return True
        elif type(record) is RawChunk and chunk_has_visible_text(record.chunk):
            return True
    return False


def _require_raw_type(chunk_type: str) -> None:
    if chunk_type not in RAW_CHUNK_TYPES:
        raise ValueError(
            f"{chunk_type!r} chunks may be packed into runs; ask for one of {', '.join(sorted(RAW_CHUNK_TYPES))}"
        )


def last_raw_chunk(stream: list[Record], chunk_type: str) -> dict | None:
    """The last raw chunk of a never-packed type (``usage``, ``finish``, …), scanning backwards."""
    _require_raw_type(chunk_type)
    for record in reversed(stream):
        if type(record) is RawChunk and record.chunk.get("type") == chunk_type:
            return record.chunk
    return None


def raw_chunks(stream: Iterable[Record], chunk_type: str) -> Iterator[dict]:
    """Every raw chunk of a never-packed type, in stream order."""
    _require_raw_type(chunk_type)
    for record in stream:
        if type(record) is RawChunk and record.chunk.get("type") == chunk_type:
            yield record.chunk


def joined_text(stream: Iterable[Record]) -> str:
    """All text-delta fragments (runs and raw) joined in order; reasoning and tool arguments excluded."""
    parts: list[Any] = []  # a raw delta's text is joined as recorded
    for record in stream:
        if type(record) is TextChunks:
            parts.append("".join(record.texts))
        elif type(record) is RawChunk and record.chunk.get("type") == "text-delta":
            parts.append(record.chunk.get("text"))
    return "".join(parts)


class BlockText(NamedTuple):
    """One content block of a stream as it streamed: its deltas joined (``block_texts``)."""

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    type: str
    """``text``, ``reasoning``, ``tool-call``, or another block type (``image`` …) whose text is empty."""
    text: str
    """Text and reasoning: the joined deltas; a tool call: its joined argument fragments."""
    name: str | None
    """A tool call's name: the first non-empty name of its deltas, else its block-end's; None otherwise."""


# --------------------------------------------------------------------------------------------------
# The per-block walk: the one reading of a stream by content block (§4.6)


@mypyc_attr(allow_interpreted_subclasses=True)  # the replay builder's _Block extends it
class StreamBlock:
    """One content block of an attempt, as :func:`walk_blocks` has seen it so far.

    ``order`` is its place in first-seen order (the order the assembler gives the message's blocks);
    ``streamed``: a delta of it was accepted; ``ended``: its (first) ``block-end`` was read; ``name``: a
    tool call's first non-empty name (of its deltas, else of its block-end)."""

    __slots__ = ("index", "type", "order", "streamed", "ended", "name")

    def __init__(self, index: int, kind: str, order: int) -> None:
        self.index = index
        self.type = kind
        self.order = order
        self.streamed = False
        self.ended = False
        self.name: str | None = None


START = "start"
DELTA = "delta"
END = "end"
CHUNK = "chunk"


class BlockStep(NamedTuple):
    """What one stream record does to the blocks (:func:`walk_blocks`).

    * ``start`` — the ``block-start`` of an index not seen before (``block`` was just created);
    * ``delta`` — deltas of an open block: ``delta`` is their kind (``text``, ``reasoning``, ``tool-call``),
      ``members`` the run's members or a raw delta's one value (as recorded: a raw delta's value may
      not be a string), ``name`` and ``id`` a tool call's (raw values; None when absent);
    * ``end`` — the first ``block-end`` of a block (``payload``: the block it carries); the block is
      already marked ended;
    * ``chunk`` — every other raw chunk (``usage``, ``finish`` …; ``payload``: the chunk).
    """

    kind: str
    record: Record
    block: StreamBlock | None = None
    delta: str | None = None
    members: list | None = None
    name: Any = None
    id: Any = None
    payload: Any = None


_RUN_BLOCK_TYPES = {TextChunks: "text", ReasoningChunks: "reasoning", ToolCallChunks: "tool-call"}
_DELTA_BLOCK_TYPES: dict[Any, str] = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "tool-call"}


def walk_blocks(stream: Iterable[Record], blocks: dict | None = None, new_block=StreamBlock) -> Iterator[BlockStep]:
    """The records of one attempt's stream as steps of its content blocks, under the assembler's rules
    (§4.6): blocks tracked per index in first-seen order (a ``block-start``, a delta or a ``block-end``
    creates one; a ``block-start`` of a known index is nothing), deltas after a block's end left out,
    the first ``block-end`` wins. A raw record whose ``index`` is not an integer is left out (a
    ``block-start``/``block-end``/delta) or passed on as a ``chunk``.

    ``blocks`` (index → block, in first-seen order) is filled as the walk goes; ``new_block(index, type,
    order)`` makes a block (readers keep their own state on it). This is the one place the stream is
    read by block: :func:`block_texts`, the replay timeline and its live preview all walk it."""
    if blocks is None:
        blocks = {}

    def block_of(index: int, kind: str) -> StreamBlock:
        block = blocks.get(index)
        if block is None:
            block = blocks[index] = new_block(index, kind, len(blocks))
        return block

    for record in stream:
        cls = record.__class__
        if type(record) is RawChunk:
            chunk = record.chunk
            kind = chunk.get("type")
            index = chunk.get("index")
            delta = _DELTA_BLOCK_TYPES.get(kind) if kind.__class__ is str else None  # a list is no key
            if delta is not None:
                if index.__class__ is not int:
                    continue
                block = block_of(index, delta)
                if block.ended:
                    continue
                block.streamed = True
                if delta == "tool-call":
                    name = chunk.get("name")
                    if block.name is None and isinstance(name, str) and name:
                        block.name = name
                    yield BlockStep(DELTA, record, block, delta, [chunk.get("argumentsDelta")], name, chunk.get("id"))
                else:
                    yield BlockStep(DELTA, record, block, delta, [chunk.get("text")])
            elif kind == "block-start":
                if index.__class__ is int and index not in blocks:
                    block_type = chunk.get("blockType")
                    yield BlockStep(START, record, block_of(index, block_type if isinstance(block_type, str) else "?"))
            elif kind == "block-end":
                if index.__class__ is not int:
                    continue
                payload = chunk.get("block")
                block_type = payload.get("type") if isinstance(payload, dict) else None
                block = block_of(index, block_type if isinstance(block_type, str) else "?")
                if block.ended:
                    continue  # the first close wins
                block.ended = True
                if isinstance(payload, dict) and block.name is None:
                    name = payload.get("name")
                    if isinstance(name, str) and name:
                        block.name = name
                yield BlockStep(END, record, block, payload=payload)
            else:
                yield BlockStep(CHUNK, record, payload=chunk)
        else:
            delta = _RUN_BLOCK_TYPES[cls]
            block = block_of(record.index, delta)
            if block.ended:
                continue  # the assembler ignores deltas after the block's end; nobody saw them
            block.streamed = True
            if type(record) is ToolCallChunks:
                name = record.name if record.name is not msgspec.UNSET else None
                if block.name is None and name:
                    block.name = name
                yield BlockStep(DELTA, record, block, delta, record.args, name, record.id)
            else:
                yield BlockStep(DELTA, record, block, delta, record.texts)


def block_texts(stream: Iterable[Record]) -> list[BlockText]:
    """Every content block of one attempt's stream, in first-seen order (as the assembler orders them),
    with the text it streamed: each run's members joined once (as :func:`joined_text` joins them), the
    runs and raw deltas of one block index concatenated, so text split across deltas, runs and
    interleaved blocks reads whole, never across two blocks. Deltas after a block's ``block-end`` are left
    out (the assembler ignores them); a block that streamed nothing takes its text from its ``block-end``.
    The text blocks' texts concatenated equal :func:`joined_text` when no delta follows its block's end.
    """
    blocks: dict[int, StreamBlock] = {}
    parts: dict[int, list[str]] = {}
    for step in walk_blocks(stream, blocks):
        kind = step.kind
        if kind == DELTA:
            members = step.members
            assert members is not None and step.block is not None  # a delta step has both
            text = members[0] if len(members) == 1 else "".join(members)
            if isinstance(text, str):
                parts.setdefault(step.block.index, []).append(text)
        elif kind == END:
            block = step.block
            assert block is not None  # an end step has its block
            payload = step.payload
            if not block.streamed and isinstance(payload, dict):
                whole = payload.get("arguments") if block.type == "tool-call" else payload.get("text")
                if isinstance(whole, str):
                    parts.setdefault(block.index, []).append(whole)
    return [BlockText(index, block.type, "".join(parts.get(index, ())), block.name) for index, block in blocks.items()]
