"""One big zstd log on several cores: its parts folded in worker processes, the folds merged (issue #25).

A large zstd log is hundreds of thousands of independent frames. ``stats`` of one such log (``--jobs``
above 1, the log at least :data:`dshctl.settings.SPLIT_MIN_BYTES` on disk per part) cuts it into parts and folds each
with the same :class:`~dshctl.stats.fold.StatsFold`, the first in the command's own process and the
others in forked workers, then merges the finished folds and builds the records from the merged fold
once, exactly as one pass builds them. Anything the merge cannot prove identical to one pass sends the
whole log back to the one-pass reader, which then reports every figure, warning and error as it always
does. So damage is never judged here: it is found, and one pass reads the log.

**Where a part starts.** At a frame boundary near each nominal cut point (file size × k / parts): the
first zstd magic number there from which whole frames decode on, where one frame's last line is a
``turn/end`` record, the frame after it decoding whole too (dsh writes each commit as one frame, and a
turn's last commit ends with its ``turn/end``; the benchmark log writes every row as one). The
search only proposes: the parts' own readers prove it, since the part before a boundary must end there
exactly (a complete frame, else a torn tail and one pass) at the seq the part after it starts with.
Nothing of the reader or the folds crosses such a point:

* the v0 chunk fold (:func:`~dshctl.generations.v0.fold_chunks`) settles its pending attempt at a
  ``turn/end``; the legacy normalizer's state (replaced tool results, retry chains, the open
  compaction) names only message, retry and compaction ids, which no statistic reads;
* the stats fold's open step is cleared, its tool calls awaiting a result dropped, at ``turn/end``;
* the part's reader starts its seq check at the ``turn/start``'s seq (:attr:`~dshctl.reader.Log.start_seq`),
  and the part before must end exactly at it.

What the fold keeps by turn (turn records, the open step key, the token meters' replacement slots, the
turn counter's previous turn, a model's turns) is independent between parts when no turn is opened in
two parts: each part's fold records the bounds of the turns it opened (``StatsFold.turn_bounds``), and
the parts' bounds must increase. What the fold keeps as "the latest" is read back at the merge: the
latest request header's route (a part that used its predecessor's, seen by a sentinel route, is refused),
the latest context window (a sentinel tells "not seen in this part"), the title, the working directory,
the first and last times. The figures are then sums, unions, in-order concatenations of observation
series and exact histograms (integer counts, integer costs in nano-units), so the merge is exact —
except for a sum of non-integral numbers (``outputTokens`` as a float), whose rounding depends on the
order of additions: a log with one is read in one pass.

The records a part holds before its first ``turn/start`` (dsh's commit often opens with
``agent/inbox/spliced`` or ``session/title``) are read by one pass while the previous turn is still open:
only a user message (a prompt for that turn) and a change of what the fold knows of times could reach it,
and both are refused.

Not searched (one pass instead): a log whose header is refused or outside ``--since``/``--until``.
The search gives up (one pass) when the frames it decodes near a cut point reach :data:`DECODE_BUDGET`, or
one frame's output passes the line limit (``DSHCTL_MAX_LINE_BYTES``) without a line feed: a compressed
log can decode to far more than its size on disk.

Refused (one pass instead): any error, warning or gap in any part, but a torn tail at the end of the log
(a log being written: the last part is read again in the command's process, numbering its lines as one
pass does, and keeps its warnings); a part that does not end
where the next starts; a fork or seed cut after the first part; a part with untimed events or placeholder
stream times; a user message ahead of a part's first ``turn/start``; turns opened in two parts; a float
token count. ``--salvage`` and ``--follow`` never split.

``DSHCTL_SPLIT_MIN_BYTES`` sets the smallest part (bytes on disk, K/M/G suffixes as
``DSHCTL_MAX_LINE_BYTES``); tests set it to 1 to split small logs.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import msgspec

from ..errors import DshctlError
from ..source.lines import SpanReader
from ..source.zstd import ZSTD_MAGIC, decode_sized_frame

__all__ = ["split_log_stats", "split_min_bytes"]

SEARCH_BYTES = 8 << 20
"""How far past a nominal cut point a turn boundary is looked for (compressed bytes)."""
FRAME_MAX = 8 << 20
"""The largest frame the search decodes (its declared size): dsh's writer's frames are small."""
DECODE_BUDGET = 2 * SEARCH_BYTES
"""The most the search decodes near one cut point, over every frame it tries (plain bytes): a log whose
frames decode to much more than that without a turn boundary (a decompression bomb) is read in one pass."""
UNKNOWN_ROUTE = "\x00(the route of the part before)"
"""A later part's fold starts with this as the latest request header's route: a part that uses it before
a request header of its own depends on the part before it, and is refused."""
UNSEEN_WINDOW = -1
"""A later part's fold starts with this as the latest context window: still there at its end, the part saw
no ``request/context`` and the window is its predecessor's."""

_decode = msgspec.json.Decoder().decode
_NOT_JSON = (msgspec.DecodeError, UnicodeDecodeError)


def split_min_bytes() -> int:
    """The smallest part, :data:`dshctl.settings.SPLIT_MIN_BYTES` (its setting, else its default)."""
    from ..settings import SPLIT_MIN_BYTES

    return SPLIT_MIN_BYTES.read()


def planned_parts(ref: Any, options: Any) -> int:
    """How many parts the log of ``ref`` is read in: 0 or 1 (one pass) unless it is a zstd file of at
    least two parts' worth of bytes and the run allows more than one job."""
    from ..many import default_jobs

    if options.salvage or options.follow or ref.path is None or ref.member is not None or ref.problem is not None:
        return 0
    jobs = default_jobs() if options.jobs is None else max(1, options.jobs)
    if jobs < 2:
        return 0
    try:
        size = os.stat(ref.path).st_size
        with open(ref.path, "rb") as file:
            if file.read(4) != ZSTD_MAGIC:
                return 0
    except OSError:
        return 0
    return min(jobs, size // split_min_bytes())


# -- where the parts start ---------------------------------------------------------------------------


class _GiveUp(Exception):
    """The search near a cut point decoded its :data:`DECODE_BUDGET`, or met a frame holding a line longer
    than the line limit: the log is read in one pass (which reports such a line itself)."""


class _Window:
    """Bytes of the file from ``base`` on, read as needed, at most :data:`SEARCH_BYTES`; the frames decoded
    from them, at most :data:`DECODE_BUDGET` bytes in all."""

    def __init__(self, file: Any, base: int, max_line_bytes: int):
        self.file = file
        self.base = base
        self.data = bytearray()
        self.eof = False
        self.max_line_bytes = max_line_bytes
        self.decoded = 0
        file.seek(base)

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def ensure(self, upto: int) -> bool:
        while self.end < upto and not self.eof:
            if len(self.data) >= SEARCH_BYTES:
                return False
            chunk = self.file.read(1 << 20)
            if not chunk:
                self.eof = True
            self.data += chunk
        return self.end >= upto

    def find_magic(self, offset: int) -> int | None:
        while True:
            at = self.data.find(ZSTD_MAGIC, max(0, offset - self.base))
            if at >= 0:
                return self.base + at
            offset = max(offset, self.end - 3)
            if not self.ensure(self.end + 1):
                return None

    def frame(self, start: int) -> tuple[bytes, int] | None:
        """The frame at ``start`` decoded (:func:`~dshctl.source.zstd.decode_sized_frame`), and its end;
        None unless it is a whole frame of a declared size up to :data:`FRAME_MAX` within the window."""
        if not self.ensure(start + 18) and self.end < start + 6:
            return None
        at = start - self.base
        decoded = 0
        line_feed = False

        def more(offset: int) -> bytes:
            position = start + offset
            if position >= self.end and not self.ensure(position + 1):
                return b""
            return bytes(self.data[position - self.base : position - self.base + (64 << 10)])

        def observe(piece: bytes) -> None:
            nonlocal decoded, line_feed
            self.decoded += len(piece)
            decoded += len(piece)
            line_feed = line_feed or b"\n" in piece
            if self.decoded > DECODE_BUDGET or (decoded > self.max_line_bytes and not line_feed):
                raise _GiveUp

        frame = decode_sized_frame(bytes(self.data[at : at + 18]), more, FRAME_MAX, observe)
        return None if frame is None else (frame[0], start + frame[1])


def _record_type(line: bytes, kind: bytes) -> dict | None:
    """The record ``line`` holds when it is a JSON object of type ``kind``."""
    if kind not in line:
        return None
    try:
        record = _decode(line)
    except _NOT_JSON:
        return None
    if type(record) is not dict or record.get("type") != kind.decode():
        return None
    return record


def _first_seq(line: bytes) -> int | None:
    """The seq a part's first record says it has (a packed row's ``seq0``), else None."""
    try:
        record = _decode(line)
    except _NOT_JSON:
        return None
    if type(record) is not dict:
        return None
    seq = record.get("seq", record.get("seq0"))
    return seq if type(seq) is int and seq >= 1 else None


def _boundary_from(window: _Window, start: int) -> tuple[int, int] | None | bool:
    """From a magic number at ``start``: ``(offset, seq)`` of the first frame after one that ends with a
    ``turn/end``, the frames from ``start`` to it and the one after it (or the end of the file) decoded whole; ``False`` when no whole frame starts at
    ``start`` (try the next magic number); None when the frames run out first (no boundary near here)."""
    position = start
    frames = 0
    after_turn_end = False
    while True:
        frame = window.frame(position)
        if frame is None or not frame[0].endswith(b"\n"):
            return False if frames == 0 else None
        decoded, end = frame
        if after_turn_end:
            seq = _first_seq(decoded[: decoded.find(b"\n")])
            if seq is not None and (window.frame(end) is not None or (not window.ensure(end + 1) and window.eof)):
                return position, seq
        last = decoded[decoded.rfind(b"\n", 0, len(decoded) - 1) + 1 : -1]
        after_turn_end = _record_type(last, b"turn/end") is not None
        frames += 1
        position = end


def find_boundaries(path: Any, parts: int) -> list[tuple[int, int]]:
    """``(file offset, seq)`` where each part after the first starts, in file order (fewer than
    ``parts - 1`` when no boundary is found near a cut point; none when the search gives up)."""
    from ..source.lines import max_line_bytes_from_env

    size = os.stat(path).st_size
    max_line_bytes = max_line_bytes_from_env()
    found: list[tuple[int, int]] = []
    with open(path, "rb") as file:
        for k in range(1, parts):
            nominal = max(size * k // parts, found[-1][0] + 1 if found else 1)
            window = _Window(file, nominal, max_line_bytes)
            try:
                at = window.find_magic(nominal)
                while at is not None:
                    boundary = _boundary_from(window, at)
                    if boundary is not False:
                        if boundary is not None:
                            found.append(boundary)
                        break
                    at = window.find_magic(at + 1)
            except _GiveUp:
                return []
    return found


# -- reading a part ------------------------------------------------------------------------------------


class _Plan:
    """What every part's reading needs: set before the workers fork, so a task carries only its index."""

    def __init__(self, ref: Any, header: Any, options: Any, prices: Any, starts: list[tuple[int, int]], size: int,
                 new_fold: Callable[..., Any]):
        self.new_fold = new_fold  # :func:`dshctl.stats.stats_fold`, the one way a log's fold is made
        self.ref = ref
        self.header = header
        self.options = options
        self.prices = prices
        self.starts = starts  # (offset, seq) of every part, the first (0, 0)
        self.size = size

    def span(self, index: int) -> tuple[int, int]:
        start = self.starts[index][0]
        end = self.starts[index + 1][0] if index + 1 < len(self.starts) else self.size
        return start, end


_plan: dict = {}


def _fold(plan: _Plan, log: Any, *, before: Any = None) -> Any:
    """The part's fold; ``before``, for a part after the first, stands for the turn the part before ended
    with (a user message ahead of the part's first ``turn/start`` gives that turn its prompt)."""
    by = plan.options.record_by
    fold = plan.new_fold(log, prices=plan.prices, keep_turns=by == "turn", keep_steps=by == "step")
    if before is not None:
        fold.own.header_route = UNKNOWN_ROUTE
        fold.context.window = UNSEEN_WINDOW
        fold.current_turn = before
    fold.run(log.events())
    return fold


def _clean(log: Any, warnings_before: int) -> bool:
    return (len(log.warnings) == warnings_before and log.reader.torn_tail is None and log.dropped_tail is None
            and not log.gaps and not log.fixture)


REREAD = "the last part ends in a torn tail"
"""What a worker says of the last part when it ends in a torn tail (a log being written): its warnings
name lines, which only the command's process can number, once the parts before are read; it reads the
part again itself, numbering them as one pass does (:func:`_fold_part`'s ``line_offset``)."""


def _fold_part(index: int, line_offset: int | None = None) -> "PartState | str":
    """In a worker: part ``index`` (1 or later) read and folded, its finished fold as a :class:`PartState`;
    or why it cannot be merged. ``line_offset``: the lines before the part (the last part read again in
    the command's process): its warnings are then kept, numbered as one pass numbers them."""
    from ..reader import open_part
    from .fold import TurnFigures

    plan: _Plan = _plan["plan"]
    start, end = plan.span(index)
    reader = SpanReader(plan.ref, start, end, lines_before=line_offset or 0)
    log = open_part(plan.ref, plan.header, reader, strict=plan.options.strict, start_seq=plan.starts[index][1])
    try:
        before = TurnFigures(None)
        fold = _fold(plan, log, before=before)
    except DshctlError as exc:
        return f"part {index + 1}: {exc.message}"
    except Exception as exc:  # one pass reads the log then, and meets whatever this was itself
        return f"part {index + 1}: {type(exc).__name__}: {exc}"
    finally:
        reader.close()
    if log.gaps or log.fixture:
        return f"part {index + 1}: warnings"
    if not _clean(log, 0) and line_offset is None:
        return REREAD if index + 1 == len(plan.starts) else f"part {index + 1}: warnings"
    if fold.prefix is not None:
        return f"part {index + 1}: a fork or seed cut"
    if UNKNOWN_ROUTE in fold.own.models:
        return f"part {index + 1}: an attempt under the previous part's request header"
    if before.prompt is not None:
        return f"part {index + 1}: a prompt for the previous part's last turn"
    state = PartState.of(fold, log.event_count, reader.last_line)
    state.warnings = list(log.warnings)
    return state


def _install(plan: _Plan) -> None:
    _plan["plan"] = plan


# -- the finished fold of a part, and the merge ----------------------------------------------------------

_DSH_SUMS = ("turns", "steps", "llm_ms", "tool_ms", "ttft_ms", "ttft_steps", "decode_ms", "decode_tokens")
_OWN_SUMS = ("attempts", "messages", "interrupted_messages", "failed_attempts", "retries", "tool_calls",
             "unmatched_results", "waste_input", "waste_output", "waste_ms", "backoff_ms")
_MODEL_SUMS = ("settlements", "messages", "ttft_ms", "ttft_steps", "decode_ms", "decode_tokens", "steps", "llm_ms", "tool_ms")
_TOOL_SUMS = ("calls", "failures", "tool_ms")
MERGED = {
    "StatsFold": {
        "merged": ("dsh", "meter", "meter011", "context", "own", "timing_known", "placeholder_times", "outside_steps",
                   "turn_rows", "step_rows", "observed", "_billing", "turn_bounds", "unnumbered_turn"),
        "the first part's": ("prefix", "pricing", "seed_length", "keep_turns", "keep_steps", "keep_settlements", "_handlers"),
        "empty once finished": ("turn_records", "current_step"),
        "a sentinel in later parts, then read only while folding": ("current_turn",),
        "never kept by stats": ("settlement_rows", "tool_call_rows"),
    },
    "DshSessionStats": {
        "merged": _DSH_SUMS,
        "read only while folding": ("last_turn", "last_turn_set", "open_key", "open_start", "open_first", "pending_calls"),
    },
    "TokenMeter": {"merged": ("totals",), "read only while folding": ("slot_key", "slot_buckets", "slot_step", "slot_route",
                                                                       "slot_reasoning", "slot_share", "slot_charge", "slot_minute")},
    "TokenMeter011": {"merged": ("totals",), "read only while folding": ("key", "buckets")},
    "ContextPressure": {"merged": ("tokens", "window")},
    "OwnFigures": {"merged": (*_OWN_SUMS, "models", "tools", "title", "working_directory", "first_time", "last_time"),
                   "read only while folding": ("header_route",)},
    "ModelFigures": {"merged": (*_MODEL_SUMS, "tokens", "turns", "reasoning", "cost")},
    "ToolFigures": {"merged": _TOOL_SUMS},
}
"""Every attribute of the fold's state and what the merge does with it (a test holds it to the fold's
``__slots__``, so a new figure cannot be left out of the merge unnoticed)."""


class PartState:
    """A finished fold's state, as plain values that cross the process boundary."""

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)

    @classmethod
    def of(cls, fold: Any, event_count: int, lines: int) -> "PartState":
        # the gap histogram as the fold left it: the merged fold clamps negative gaps once, when its records
        # are built, as one pass's does (the same counts, in one pass's order)
        own = fold.own
        models = [(route, {name: getattr(model, name) for name in MERGED["ModelFigures"]["merged"]})
                  for route, model in own.models.items()]
        tools = [(name, tuple(getattr(tool, key) for key in _TOOL_SUMS)) for name, tool in own.tools.items()]
        return cls(
            event_count=event_count, lines=lines, warnings=[],
            dsh={name: getattr(fold.dsh, name) for name in _DSH_SUMS},
            own={name: getattr(own, name) for name in _OWN_SUMS},
            meter=fold.meter.totals, meter011=fold.meter011.totals,
            context=(fold.context.tokens, fold.context.window),
            header_route=own.header_route, title=own.title, working_directory=own.working_directory,
            first_time=own.first_time, last_time=own.last_time,
            models=models, tools=tools,
            timing_known=fold.timing_known, placeholder_times=fold.placeholder_times, outside_steps=fold.outside_steps,
            turn_bounds=fold.turn_bounds, unnumbered_turn=fold.unnumbered_turn,
            observed=fold.observed, turn_rows=fold.turn_rows, step_rows=fold.step_rows,
        )

    def floats(self) -> bool:
        """Whether a sum holds a non-integral type (its merge would round differently)."""
        return type(self.dsh["decode_tokens"]) is not int or any(type(fields["decode_tokens"]) is not int for _, fields in self.models)


def _buckets(total: list[int] | None, more: list[int] | None) -> list[int] | None:
    if more is None:
        return total
    return list(more) if total is None else [a + b for a, b in zip(total, more)]


def _merge(fold: Any, part: PartState) -> None:
    """``part``, the fold of the part after those ``fold`` holds, added to ``fold``: as if one fold had read on."""
    from .costs import CostTally

    dsh = fold.dsh
    for name, value in part.dsh.items():
        setattr(dsh, name, getattr(dsh, name) + value)
    own = fold.own
    for name, value in part.own.items():
        setattr(own, name, getattr(own, name) + value)
    fold.meter.totals = _buckets(fold.meter.totals, part.meter)
    fold.meter011.totals = _buckets(fold.meter011.totals, part.meter011)
    tokens, window = part.context
    if tokens is not None:
        fold.context.tokens = tokens
    if window != UNSEEN_WINDOW:
        fold.context.window = window
    if part.header_route != UNKNOWN_ROUTE:
        own.header_route = part.header_route
    if part.title is not None:
        own.title = part.title
    if part.working_directory is not None:
        own.working_directory = part.working_directory
    if own.first_time is None:
        own.first_time = part.first_time
    if part.last_time is not None and (own.last_time is None or part.last_time > own.last_time):
        own.last_time = part.last_time
    for route, fields in part.models:
        model = own.model(route)
        for name in _MODEL_SUMS:
            setattr(model, name, getattr(model, name) + fields[name])
        model.tokens = _buckets(model.tokens, fields["tokens"])
        model.turns.update(fields["turns"])
        if fields["reasoning"] is not None:
            model.reasoning = fields["reasoning"] if model.reasoning is None else model.reasoning + fields["reasoning"]
        if fields["cost"] is not None:
            if model.cost is None:
                model.cost = CostTally()
            model.cost.merge(fields["cost"])
    for name, sums in part.tools:
        tool = own.tool(name)
        for key, value in zip(_TOOL_SUMS, sums):
            setattr(tool, key, getattr(tool, key) + value)
    fold.timing_known = fold.timing_known and part.timing_known
    fold.placeholder_times = fold.placeholder_times or part.placeholder_times
    fold.outside_steps += part.outside_steps
    _merge_observed(fold.observed, part.observed)
    fold.turn_rows.extend(part.turn_rows)
    fold.step_rows.extend(part.step_rows)


def _merge_observed(observed: Any, more: Any) -> None:
    from .billing import CallBilling
    from .results import OBSERVATIONS

    for name in OBSERVATIONS:
        getattr(observed, name).extend(getattr(more, name))
    observed.gaps.update(more.gaps)
    for series in ("model_ttft", "tool_ms"):
        mine = getattr(observed, series)
        for key, values in getattr(more, series).items():
            if key in mine:
                mine[key].extend(values)
            else:
                mine[key] = values
    observed.spark.extend(more.spark)
    billing = observed.billing
    for minute, routes in more.billing.items():
        mine = billing.setdefault(minute, {})
        for route, entry in routes.items():
            if route in mine:
                mine[route].merge(entry)
            else:
                twin = mine[route] = CallBilling()
                twin.merge(entry)


def _refusal(first: PartState, parts: list[PartState], starts: list[tuple[int, int]]) -> str | None:
    """Why the parts' folds cannot be merged into one pass's, or None."""
    everything = [first, *parts]
    high: int | None = None
    unnumbered = False
    for index, part in enumerate(everything):
        if index + 1 < len(everything) and part.event_count != starts[index + 1][1]:
            return f"part {index + 1} ends at seq {part.event_count}, not where part {index + 2} starts"
        if not part.timing_known or part.placeholder_times:
            # a part's rows are finalized under what the fold knows of times then: the turns a part
            # ends with, under what the next part's first events (before its turn/start) tell
            return f"part {index + 1} has untimed figures"
        if part.floats():
            return f"part {index + 1} sums non-integral token counts"
        bounds = part.turn_bounds
        if bounds is not None:
            if high is not None and bounds[0] <= high:
                return f"part {index + 1} opens a turn an earlier part opened"
            high = bounds[1]
        if part.unnumbered_turn:
            if unnumbered:
                return f"part {index + 1} opens an unnumbered turn as an earlier part did"
            unnumbered = True
    return None


# -- the whole ---------------------------------------------------------------------------------------------


def split_log_stats(ref: Any, options: Any, prices: Any, new_fold: Callable[..., Any]) -> Any:
    """The :class:`~dshctl.stats.results.LogStats` of one big zstd log read in parts, exactly as one pass
    reads it; None where the split does not apply or cannot prove that (the caller reads it in one pass)."""
    result = read_split(ref, options, prices, new_fold)
    return None if isinstance(result, str) else result


def read_split(ref: Any, options: Any, prices: Any, new_fold: Callable[..., Any]) -> Any:
    """:func:`split_log_stats`, or why the log is read in one pass instead (a sentence)."""
    parts = planned_parts(ref, options)
    if parts < 2:
        return "one part"
    from ..reader import open_log

    size = os.stat(ref.path).st_size
    try:  # the header first, without a reader thread: a log it refuses, or outside the window, is not searched
        with open_log(ref, strict=options.strict, reader=SpanReader(ref, 0, size, overlap=False)) as log:
            header = log.header
    except DshctlError as exc:
        return f"part 1: {exc.message}"
    if not options.window.holds(header.createdAt):
        return "outside --since/--until"  # one pass reads only the header
    boundaries = find_boundaries(ref.path, parts)
    if not boundaries:
        return "no turn boundary near a cut point"
    plan = _Plan(ref, header, options, prices, [(0, 0), *boundaries], size, new_fold)
    return _read_in_parts(plan)


def _read_in_parts(plan: _Plan) -> Any:
    from concurrent.futures.process import BrokenProcessPool

    from ..many import worker_pool
    from ..reader import open_log
    from .results import folded_stats

    count = len(plan.starts)
    with worker_pool(count - 1, _install, (plan,)) as submit:
        # every worker is forked by the first submit (a fork context launches them all), so part 1's
        # reader thread, started by open_log below, never runs while the command's process forks
        futures = [submit(_fold_part, index) for index in range(1, count)]
        try:
            log = open_log(plan.ref, strict=plan.options.strict, reader=SpanReader(plan.ref, 0, plan.starts[1][0]))
        except DshctlError as exc:
            return f"part 1: {exc.message}"
        with log:
            warnings_before = len(log.warnings)
            try:
                fold = _fold(plan, log)
            except DshctlError as exc:
                return f"part 1: {exc.message}"
        try:
            results = [future.result() for future in futures]
        except BrokenProcessPool:  # a worker died (killed, out of memory): one pass instead
            return "a worker died"
    if not _clean(log, warnings_before):
        return "part 1: warnings"
    for result in results[:-1]:
        if isinstance(result, str):
            return result
    if results[-1] == REREAD:
        _plan["plan"] = plan
        try:
            results[-1] = _fold_part(count - 1, line_offset=log.reader.last_line + sum(part.lines for part in results[:-1]))
        finally:
            _plan.clear()
    if isinstance(results[-1], str):
        return results[-1]
    first = PartState.of(fold, log.event_count, log.reader.last_line)
    refusal = _refusal(first, results, plan.starts)
    if refusal is not None:
        return refusal
    for part in results:
        _merge(fold, part)
    log.event_count = results[-1].event_count
    log.warnings.extend(results[-1].warnings)  # a torn tail's, the last of one pass's warnings too
    return folded_stats(log, fold, by=plan.options.record_by, salvage=False)
