"""The live view's preview of a v0 attempt is built as its chunks land: each member is read once, the text
equals the whole-text definition at every step, and what is queued for the screen stays bounded."""

from __future__ import annotations

import queue

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.generations.v0 import PackedRow
from dshctl.jsvalues import MAX_SAFE_INTEGER
from dshctl.model import Event
from dshctl.replay.live import PREVIEW_LIMIT, LiveTimeline, PreviewText, _Preview, bounded_tail
from dshctl.replay.items import Filters
from dshctl.stream import Accumulator, RawChunk, ReasoningChunks, TextChunks, ToolCallChunks


def whole_preview_text(records) -> str:
    """The preview's definition, from the whole records at once, chunk by chunk: the blocks in first-seen
    order (a block-start, a delta or a block-end of an integer index makes a block seen), each with the
    text of its deltas up to its first block-end, laid out one after the other with a line break
    between two (a block shows once it has a delta)."""
    from dshctl.stream import iter_members

    order: dict[int, int] = {}
    texts: dict[int, list[str]] = {}
    ended: set[int] = set()
    for _, chunk in iter_members(records):
        index = chunk.get("index")
        kind = chunk.get("type")
        if index.__class__ is not int or kind not in ("block-start", "block-end", "text-delta", "reasoning-delta", "tool-call-delta"):
            continue
        order.setdefault(index, len(order))
        if kind == "block-end":
            ended.add(index)
        elif kind in ("text-delta", "reasoning-delta", "tool-call-delta") and index not in ended:
            value = chunk.get("argumentsDelta" if kind == "tool-call-delta" else "text")
            texts.setdefault(index, []).append(value if isinstance(value, str) else "")
    parts: list[str] = []
    for index in sorted(texts, key=order.__getitem__):
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append("".join(texts[index]))
    return "".join(parts)


# Far-apart times make a gap no safe integer holds: the next member starts a record of the same block.
times = st.sampled_from([0, 1, 5, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER])
small_text = st.text(alphabet="ab \n", max_size=4)
big_text = st.builds(lambda piece, count: piece * count, st.sampled_from(["x", "y\n", "z "]), st.integers(1, 30_000))
texts = st.one_of(small_text, small_text, small_text, big_text)
indexes = st.integers(0, 2)
call_ids = st.sampled_from(["a", "b", ""])


def _delta(kind):
    return st.fixed_dictionaries({"type": st.just(kind), "index": indexes, "text": texts})


tool_delta = st.fixed_dictionaries(
    {"type": st.just("tool-call-delta"), "index": indexes, "id": call_ids, "argumentsDelta": texts},
    optional={"name": st.sampled_from(["f", "g", ""])},
)
raw = st.builds(lambda kind, index: {"type": kind, "index": index}, st.sampled_from(["block-start", "block-end", "usage"]), indexes)
chunks = st.tuples(times, st.one_of(_delta("text-delta"), _delta("reasoning-delta"), tool_delta, raw))


def _run(cls, extra=None):
    def build(time0, index, members):
        dt = [0] * (len(members) - 1)
        if cls is ToolCallChunks:
            return ToolCallChunks(time0=time0, index=index, dt=dt, args=members, **extra)
        return cls(time0, index, dt, members)

    return st.builds(build, times, indexes, st.lists(texts, min_size=1, max_size=4))


runs = st.one_of(
    _run(TextChunks),
    _run(ReasoningChunks),
    st.builds(lambda call_id, run: ToolCallChunks(time0=run.time0, index=run.index, dt=run.dt, id=call_id, name="f", args=run.args), call_ids, _run(ToolCallChunks, {"id": "a"})),
)
steps = st.lists(st.one_of(chunks, runs), max_size=30)


def _push(accumulator: Accumulator, step) -> None:
    if isinstance(step, tuple):
        accumulator.push(*step)
    else:
        accumulator.push_run(step)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_the_text_built_chunk_by_chunk_ends_as_the_whole_text(sequence):
    accumulator, preview, built = Accumulator(), PreviewText(), ""
    for step in sequence:
        _push(accumulator, step)
        restart, text = preview.update(accumulator.records)
        built = preview.whole() if restart else built + text
        # each block keeps the end of its text: the layout's end (all the screen shows) is exact
        whole = whole_preview_text(accumulator.records)
        assert built[-PREVIEW_LIMIT:] == whole[-PREVIEW_LIMIT:]
        assert len(whole) > PREVIEW_LIMIT or built == whole


def _item(step, seq: int):
    if isinstance(step, tuple):
        time, chunk = step
        return Event(type="assistant/chunk", seq=seq, time=time, data={"turn": 1, "step": 1, "chunk": chunk}, line=seq)
    members = len(step.args if isinstance(step, ToolCallChunks) else step.texts)
    return PackedRow(record=step, seq0=seq, count=members, turn=1, step=1, line=seq, last_time=step.time0 + sum(step.dt))


def _watch(sequence, whole=True):
    """Feed the steps of one attempt to the live preview; yield what was queued and what the screen
    would show after each step, with the whole text of the attempt so far (without ``whole``, the
    accumulator's records instead: the definition reads them all, too slow to run after each step of a
    long attempt)."""
    arrivals = queue.SimpleQueue()
    queued: list[str] = []

    def publish(entry):
        queued.append(entry)
        arrivals.put(entry)

    preview = _Preview(publish)
    timeline = LiveTimeline(Filters(), arrivals)
    for seq, step in enumerate(sequence):
        preview.observe(_item(step, seq))
        timeline.extend(len(queued) + 1)
        yield queued, timeline.preview, whole_preview_text(preview.accumulator.records) if whole else preview.accumulator.records


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_the_screen_keeps_the_tail_of_the_whole_text(sequence):
    for queued, shown, whole in _watch(sequence):
        assert shown == bounded_tail(whole)
        assert all(len(entry) <= PREVIEW_LIMIT for entry in queued)


def test_a_long_attempt_is_queued_once_and_kept_bounded():
    """Every delta is queued as the text it adds, not as a copy of the whole attempt so far."""
    sequence = [(n, {"type": "text-delta", "index": 0, "text": f"token {n:05}\n" if n % 7 == 0 else f"token {n:05} "}) for n in range(20_000)]
    for queued, shown, records in _watch(sequence, whole=False):
        pass
    whole = whole_preview_text(records)
    assert len(whole) > 3 * PREVIEW_LIMIT
    assert sum(len(entry) for entry in queued) == len(whole)
    assert len(shown) <= PREVIEW_LIMIT and shown == bounded_tail(whole) and whole.endswith(shown)


def test_the_tail_starts_at_a_line_when_one_is_in_reach():
    assert bounded_tail("abc\ndef\nghi", 6) == "ghi"
    assert bounded_tail("abc\ndef\nghi", 7) == "def\nghi"
    assert bounded_tail("abcdefghi", 4) == "fghi"
    assert bounded_tail("short", 6) == "short"
