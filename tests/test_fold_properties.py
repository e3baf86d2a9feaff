"""Property: chunks written as a v0 log (events and packed rows, split into durable batches) fold back
into exactly the compact records dsh's accumulator rules produce for the same chunks."""

from __future__ import annotations

import json

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.reader import open_log
from dshctl.stream import Accumulator

T0 = 1_790_000_000_000

texts = st.sampled_from(["", " ", "a", "bc", "{\"", "é", "\n"])
indexes = st.integers(min_value=0, max_value=2)


def _delta(kind):
    return st.builds(lambda i, t: {"type": kind, "index": i, "text": t}, indexes, texts)


tool_delta = st.builds(
    lambda i, call_id, name, args: {"type": "tool-call-delta", "index": i, "id": call_id, **name, "argumentsDelta": args},
    indexes,
    st.sampled_from(["c1", "c2", ""]),
    st.sampled_from([{}, {}, {"name": "read"}, {"name": ""}]),
    texts,
)
raw_chunk = st.one_of(
    st.builds(lambda i: {"type": "block-start", "index": i, "blockType": "text"}, indexes),
    st.builds(lambda i: {"type": "block-end", "index": i, "block": {"type": "text", "text": "x"}}, indexes),
    st.just({"type": "usage", "usage": {"inputTokens": 3, "outputTokens": 2}}),
)
# runs of the same delta make packed rows likely
delta_run = st.tuples(st.one_of(_delta("text-delta"), _delta("reasoning-delta"), tool_delta), st.integers(1, 6))
chunks_strategy = st.lists(st.one_of(delta_run, st.tuples(raw_chunk, st.just(1))), min_size=1, max_size=12).map(
    lambda parts: [dict(chunk) for chunk, repeat in parts for _ in range(repeat)]
)
gaps = st.lists(st.integers(min_value=-3, max_value=40), min_size=80, max_size=80)
cuts = st.sets(st.integers(min_value=1, max_value=79), max_size=6)


def _packable(chunk: dict) -> bool:
    keys = set(chunk)
    if chunk["type"] in ("text-delta", "reasoning-delta"):
        return keys == {"type", "index", "text"}
    if chunk["type"] == "tool-call-delta":
        return keys in ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"})
    return False


def _continues(prev: dict, cur: dict) -> bool:
    if prev["type"] != cur["type"] or prev["index"] != cur["index"]:
        return False
    if cur["type"] == "tool-call-delta":
        return prev["id"] == cur["id"] and ("name" in prev) == ("name" in cur) and prev.get("name") == cur.get("name")
    return True


def _row(first_seq: int, members: list[tuple[int, dict]]) -> dict:
    first_time, first_chunk = members[0]
    dt = [members[k][0] - members[k - 1][0] for k in range(1, len(members))]
    data = {"turn": 1, "step": 1, "index": first_chunk["index"]}
    if first_chunk["type"] == "tool-call-delta":
        data["id"] = first_chunk["id"]
        if "name" in first_chunk:
            data["name"] = first_chunk["name"]
        data["dt"] = dt
        data["args"] = [c["argumentsDelta"] for _, c in members]
        tag = "tool-call-chunks"
    else:
        data["dt"] = dt
        data["texts"] = [c["text"] for _, c in members]
        tag = "text-chunks" if first_chunk["type"] == "text-delta" else "reasoning-chunks"
    return {"type": tag, "seq0": first_seq, "time0": first_time, "data": data}


def write_v0(timed: list[tuple[int, dict]], batch_cuts: set[int]) -> str:
    """A v0 log of one turn/step whose chunks are packed like dsh's writer: runs of ≥ 3 per durable batch."""
    lines = [{"type": "session", "version": 0, "id": "prop", "createdAt": T0, "delegationDepth": 0}]
    seq = 0

    def event(kind, data, time):
        nonlocal seq
        lines.append({"type": kind, "seq": seq, "time": time, "data": data})
        seq += 1

    event("turn/start", {"turn": 1}, T0)
    event("step/start", {"turn": 1, "step": 1}, T0)
    batches: list[list[tuple[int, dict]]] = [[]]
    for position, item in enumerate(timed):
        if position in batch_cuts and batches[-1]:
            batches.append([])
        batches[-1].append(item)
    for batch in batches:
        i = 0
        while i < len(batch):
            j = i
            if _packable(batch[i][1]):
                while j + 1 < len(batch) and _packable(batch[j + 1][1]) and _continues(batch[j][1], batch[j + 1][1]):
                    j += 1
            if j - i + 1 >= 3:
                lines.append(_row(seq, batch[i : j + 1]))
                seq += j - i + 1
            else:
                for time, chunk in batch[i : j + 1]:
                    event("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk}, time)
            i = j + 1
    end_time = timed[-1][0] if timed else T0
    event("step/end", {"turn": 1, "step": 1}, end_time)
    event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, end_time)
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=chunks_strategy, gap_list=gaps, batch_cuts=cuts)
def test_v0_rows_fold_into_accumulator_records(tmp_path_factory, chunks, gap_list, batch_cuts):
    time = T0
    timed = []
    for chunk, gap in zip(chunks, gap_list):
        time += gap
        timed.append((time, chunk))
    expected = Accumulator()
    for t, chunk in timed:
        expected.push(t, chunk)

    path = tmp_path_factory.mktemp("fold") / "session.jsonl"
    path.write_text(write_v0(timed, batch_cuts), encoding="utf-8")
    events = list(open_log(str(path)).events())
    attempts = [e for e in events if e.type == "assistant/attempt"]
    assert len(attempts) == 1
    assert msgspec.to_builtins(attempts[0].stream) == msgspec.to_builtins(expected.records)
    assert attempts[0].time == timed[-1][0]


# gaps as a stream's are: mostly small and repeated, some beyond a byte, negative (a clock stepping back)
gap_values = st.one_of(st.integers(0, 12), st.integers(0, 255), st.integers(-3, 3), st.integers(250, 70_000))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(gap_values, max_size=80), max_size=4))
def test_count_gaps_is_counter_update(batches):
    """The fold's gap histogram counts exactly what Counter.update counts, batch after batch."""
    from collections import Counter

    from dshctl.stats.fold import count_gaps

    counted, expected = Counter(), Counter()
    for gaps in batches:
        count_gaps(counted, gaps)
        expected.update(gaps)
    assert counted == expected
    assert all(type(value) is int for value in counted)
