"""Property tests: packing is lossless, readers equal naive folds over the expanded chunks, strict
expansion accepts everything the accumulator writes and refuses every single-rule violation."""

from __future__ import annotations

import copy

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.assembler import BlockAssembler, assemble
from dshctl.errors import StreamError
from dshctl.jsvalues import MAX_SAFE_INTEGER, NEG_ZERO
from dshctl.stream import (
    RAW_CHUNK_TYPES,
    Accumulator,
    RawChunk,
    ReasoningChunks,
    TextChunks,
    ToolCallChunks,
    chunk_has_visible_text,
    expand_strict,
    first_token_time,
    first_visible_time,
    has_visible_content,
    has_visible_text,
    is_token_delta,
    is_visible_chunk,
    iter_members,
    joined_text,
    last_raw_chunk,
    raw_chunks,
)

from chunks import call  # noqa: E402


def _tool_call(index, call_id, name, arguments):
    return call(index, call_id, arguments, name)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------------------------- strategies

indexes = st.integers(0, 2)
fragments = st.sampled_from(["", " ", "a", "\u00a0", "\ufeff\n", "\x85", "{\"", "hi there"]) | st.text(max_size=4)
call_ids = st.sampled_from(["c1", "c2", ""])
names = st.sampled_from([None, "read", "write_file", ""])
short_texts = st.sampled_from(["", " ", "done", "\u3000"])


blocks = st.one_of(
    st.builds(lambda kind, value: {"type": kind, "text": value}, st.sampled_from(["text", "reasoning"]), short_texts),
    st.just({"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}),
    st.just({"type": "image", "attachment": {"attachmentId": "sha256:ab", "mediaType": "image/png"}}),
)
replay_states = st.builds(
    lambda count: {"response": {"kind": "deepseek-messages"}} if count is None else {"response": {"kind": "r"}, "blocks": [{"n": n} for n in range(count)]},
    st.none() | st.integers(0, 4),
)


def _finish(kind, replay):
    chunk = {"type": "finish", "reason": {"kind": kind}}
    if replay is not None:
        chunk["replayState"] = replay
    return chunk


chunks = st.one_of(
    st.builds(lambda i, t: {"type": "text-delta", "index": i, "text": t}, indexes, fragments),
    st.builds(lambda i, t: {"type": "reasoning-delta", "index": i, "text": t}, indexes, fragments),
    st.builds(_tool_call, indexes, call_ids, names, fragments),
    st.builds(_tool_call, indexes, call_ids, names, fragments),
    st.builds(lambda i, kind: {"type": "block-start", "index": i, "blockType": kind}, indexes, st.sampled_from(["text", "reasoning", "tool-call", "image"])),
    st.builds(lambda i, block: {"type": "block-end", "index": i, "block": block}, indexes, blocks),
    st.builds(lambda n: {"type": "usage", "usage": {"inputTokens": n, "outputTokens": 1}}, st.integers(0, 9)),
    st.builds(_finish, st.sampled_from(["stop", "tool-calls", "max-tokens", "error"]), st.none() | replay_states),
)

# Mostly small steps (zero and negative included); sometimes a jump to an extreme, so gaps go unsafe.
time_moves = st.one_of(
    st.integers(-3, 5).map(lambda gap: ("step", gap)),
    st.sampled_from([-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER, 0, MAX_SAFE_INTEGER - 1, -MAX_SAFE_INTEGER + 2]).map(lambda at: ("jump", at)),
)


@st.composite
def timed_chunks(draw, max_size=40):
    time = draw(st.integers(-1000, 10**13))
    timed = []
    for chunk, (move, amount) in draw(st.lists(st.tuples(chunks, time_moves), max_size=max_size)):
        time = amount if move == "jump" else max(-MAX_SAFE_INTEGER, min(MAX_SAFE_INTEGER, time + amount))
        timed.append((time, chunk))
    return timed


def packed(timed):
    accumulator = Accumulator()
    for time, chunk in timed:
        accumulator.push(time, chunk)
    return accumulator.records


# ---------------------------------------------------------------------------------------------- naive folds


def naive_first(timed, predicate):
    return next((time for time, chunk in timed if predicate(chunk)), None)


def naive_last(timed, chunk_type):
    matches = [chunk for _, chunk in timed if chunk["type"] == chunk_type]
    return matches[-1] if matches else None


def outcome(assembler: BlockAssembler) -> dict:
    result = {"usage": assembler.usage, "finish": assembler.finish}
    for method in ("blocks", "interrupted_blocks", "truncated_tool_calls", "replay_state"):
        try:
            result[method] = getattr(assembler, method)()
        except ValueError as error:
            result[method] = ("ValueError", str(error))
    return result


def per_member(timed) -> BlockAssembler:
    assembler = BlockAssembler()
    for _, chunk in timed:
        assembler.push(chunk)
    return assembler


# ---------------------------------------------------------------------------------------------- properties


@SETTINGS
@given(timed_chunks())
def test_packing_is_lossless(timed):
    records = packed(timed)
    assert list(iter_members(records)) == timed
    # Runs really pack: no two neighbours could have been one run.
    assert len(records) <= len(timed)


@SETTINGS
@given(timed_chunks())
def test_readers_equal_naive_folds_over_expanded_chunks(timed):
    records = packed(timed)
    assert first_token_time(records) == naive_first(timed, is_token_delta)
    assert first_visible_time(records) == naive_first(timed, is_visible_chunk)
    assert has_visible_content(records) == any(is_visible_chunk(chunk) for _, chunk in timed)
    assert has_visible_text(records) == any(chunk_has_visible_text(chunk) for _, chunk in timed)
    assert joined_text(records) == "".join(chunk["text"] for _, chunk in timed if chunk["type"] == "text-delta")
    for chunk_type in RAW_CHUNK_TYPES:
        assert last_raw_chunk(records, chunk_type) == naive_last(timed, chunk_type)
        assert list(raw_chunks(records, chunk_type)) == [chunk for _, chunk in timed if chunk["type"] == chunk_type]


@SETTINGS
@given(timed_chunks())
def test_assembling_per_run_equals_assembling_per_member(timed):
    assert outcome(assemble(packed(timed))) == outcome(per_member(timed))


@SETTINGS
@given(timed_chunks())
def test_strict_expansion_accepts_accumulator_output(timed):
    records = packed(timed)
    assert list(expand_strict(msgspec.to_builtins(records))) == list(iter_members(records)) == timed
    # JSON numbers written as integral floats are the same integers to JavaScript.
    as_floats = msgspec.to_builtins(records)
    for record in as_floats:
        for key in ("time0", "index", "time"):
            if key in record:
                record[key] = float(record[key])
    assert list(expand_strict(as_floats)) == timed


@SETTINGS
@given(timed_chunks(), st.data())
def test_push_run_of_arbitrarily_split_runs_equals_pushing_the_members(timed, data):
    records = packed(timed)
    rebuilt = Accumulator()
    for record in records:
        if isinstance(record, RawChunk):
            rebuilt.push(record.time, record.chunk)
            continue
        members = list(iter_members([record]))
        how = data.draw(st.sampled_from(["whole", "split", "members"]))
        if how == "members":
            for time, chunk in members:
                rebuilt.push(time, chunk)
            continue
        cuts = sorted(data.draw(st.sets(st.integers(1, len(members) - 1), max_size=3))) if how == "split" and len(members) > 1 else []
        for left, right in zip([0, *cuts], [*cuts, len(members)]):
            piece = packed(members[left:right])
            assert len(piece) == 1
            rebuilt.push_run(piece[0])
    assert rebuilt.records == records


@SETTINGS
@given(timed_chunks(), st.data())
def test_push_run_of_any_row_cut_from_a_delta_sequence_equals_pushing_the_members(timed, data):
    # Rows as a v0 writer cuts them: runs of same-kind, same-index (same id and name) deltas with safe
    # gaps, without the accumulator's empty id/name rule, so rows with "" ids and names occur too.
    by_rows, by_members = Accumulator(), Accumulator()
    position = 0
    while position < len(timed):
        time, chunk = timed[position]
        end = position + 1
        if chunk["type"].endswith("-delta"):
            key = lambda c: (c["type"], c.get("index"), c.get("id"), "name" in c, c.get("name"))  # noqa: E731
            while (
                end < len(timed)
                and key(timed[end][1]) == key(chunk)
                and abs(timed[end][0] - timed[end - 1][0]) <= MAX_SAFE_INTEGER
                and data.draw(st.booleans())
            ):
                end += 1
            members = timed[position:end]
            fields = {"time0": time, "index": chunk["index"], "dt": [b[0] - a[0] for a, b in zip(members, members[1:])]}
            if chunk["type"] == "tool-call-delta":
                row = ToolCallChunks(id=chunk["id"], args=[c["argumentsDelta"] for _, c in members], **fields)
                if "name" in chunk:
                    row.name = chunk["name"]
            else:
                run_class = TextChunks if chunk["type"] == "text-delta" else ReasoningChunks
                row = run_class(texts=[c["text"] for _, c in members], **fields)
            by_rows.push_run(row)
        else:
            by_rows.push(time, chunk)
        for member_time, member in timed[position:end]:
            by_members.push(member_time, member)
        position = end
    assert by_rows.records == by_members.records


# ---------------------------------------------------------------------------------------------- refusals

TEXT_RUNS = ("text-chunks", "reasoning-chunks")
RUNS = (*TEXT_RUNS, "tool-call-chunks")


def _members(record):
    return len(record["args"] if record["type"] == "tool-call-chunks" else record["texts"])


def _replace_dt_entry(record, value):
    record["dt"][0] = value


def _break_member_time(record):
    # Keeps time0 and every gap safe; only the running sum leaves the safe range.
    record["time0"] = MAX_SAFE_INTEGER
    record["dt"][0] = 1


def _without(key):
    return lambda record: record.pop(key)


# (rule, applies to, mutation). Each mutation breaks exactly one rule.
MUTATIONS = [
    ("exact-keys", lambda r: True, lambda r: r.__setitem__("extra", 1)),
    ("exact-keys", lambda r: r["type"] in RUNS, _without("dt")),
    ("exact-keys", lambda r: r["type"] in RUNS, _without("time0")),
    ("exact-keys", lambda r: r["type"] == "tool-call-chunks", _without("id")),
    ("exact-keys", lambda r: r["type"] in TEXT_RUNS, lambda r: r.__setitem__("id", "c1")),
    ("exact-keys", lambda r: r["type"] == "chunk", _without("time")),
    ("type", lambda r: True, lambda r: r.__setitem__("type", "text-chunk")),
    ("type", lambda r: True, lambda r: r.__setitem__("type", None)),
    ("texts", lambda r: r["type"] in TEXT_RUNS, lambda r: r.update(texts=[], dt=[])),
    ("texts", lambda r: r["type"] in TEXT_RUNS, lambda r: r["texts"].__setitem__(0, 7)),
    ("texts", lambda r: r["type"] in TEXT_RUNS, lambda r: r.__setitem__("texts", "abc")),
    ("args", lambda r: r["type"] == "tool-call-chunks", lambda r: r.update(args=[], dt=[])),
    ("args", lambda r: r["type"] == "tool-call-chunks", lambda r: r["args"].__setitem__(0, None)),
    ("id", lambda r: r["type"] == "tool-call-chunks", lambda r: r.__setitem__("id", "")),
    ("id", lambda r: r["type"] == "tool-call-chunks", lambda r: r.__setitem__("id", 5)),
    ("name", lambda r: r["type"] == "tool-call-chunks", lambda r: r.__setitem__("name", "")),
    ("name", lambda r: r["type"] == "tool-call-chunks", lambda r: r.__setitem__("name", None)),
    ("safe-integer", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("time0", 2**53)),
    ("safe-integer", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("time0", True)),
    ("safe-integer", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("time0", 0.5)),
    ("safe-integer", lambda r: r["type"] in RUNS and r["dt"], lambda r: _replace_dt_entry(r, -(2**53))),
    ("safe-integer", lambda r: r["type"] in RUNS and r["dt"], lambda r: _replace_dt_entry(r, "1")),
    ("safe-integer", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("dt", None)),
    ("safe-integer", lambda r: r["type"] == "chunk", lambda r: r.__setitem__("time", float("inf"))),
    ("safe-integer", lambda r: r["type"] == "chunk", lambda r: r.__setitem__("time", None)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", -1)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", NEG_ZERO)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", -0.0)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", 1.5)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", False)),
    ("index", lambda r: r["type"] in RUNS, lambda r: r.__setitem__("index", 2**53)),
    ("dt-length", lambda r: r["type"] in RUNS, lambda r: r["dt"].append(0)),
    ("dt-length", lambda r: r["type"] in RUNS and r["dt"], lambda r: r["dt"].pop()),
    ("member-time", lambda r: r["type"] in RUNS and _members(r) > 1, _break_member_time),
    ("raw-chunk", lambda r: r["type"] == "chunk", lambda r: r.__setitem__("chunk", None)),
    ("raw-chunk", lambda r: r["type"] == "chunk", lambda r: r.__setitem__("chunk", [r["chunk"]])),
    ("raw-chunk", lambda r: r["type"] == "chunk", lambda r: r["chunk"].__setitem__("extra", float("nan"))),
    ("raw-chunk", lambda r: r["type"] == "chunk", lambda r: r["chunk"].__setitem__("extra", [{"x": NEG_ZERO}])),
    ("raw-chunk", lambda r: r["type"] == "chunk", lambda r: r["chunk"].__setitem__("extra", -0.0)),
]


def assert_refused(records: list, position: int, rule: str, mutate) -> None:
    broken = copy.deepcopy(records)
    mutate(broken[position])
    yielded = []
    with pytest.raises(StreamError) as caught:
        for member in expand_strict(broken):
            yielded.append(member)
    assert (caught.value.rule, caught.value.record) == (rule, position)
    assert f"record {position}" in str(caught.value)
    # Lazy: everything before the broken record was yielded first.
    assert yielded == list(expand_strict(records[:position]))


@SETTINGS
@given(timed_chunks(max_size=20).filter(bool), st.data())
def test_strict_expansion_refuses_each_single_rule_violation(timed, data):
    records = msgspec.to_builtins(packed(timed))
    position = data.draw(st.integers(0, len(records) - 1))
    # Every applicable mutation, each on its own copy: drawing one would leave some rarely tried.
    for rule, applies, mutate in MUTATIONS:
        if applies(records[position]):
            assert_refused(records, position, rule, mutate)


FIXED_STREAM = msgspec.to_builtins(
    packed(
        [
            (10, {"type": "block-start", "index": 0, "blockType": "text"}),
            (11, {"type": "text-delta", "index": 0, "text": "a"}),
            (12, {"type": "text-delta", "index": 0, "text": "b"}),
            (12, {"type": "reasoning-delta", "index": 1, "text": "r"}),
            (13, {"type": "reasoning-delta", "index": 1, "text": "s"}),
            (14, _tool_call(2, "c1", "read", "{")),
            (15, _tool_call(2, "c1", "read", "}")),
            (16, _tool_call(3, "c2", None, "{")),
            (17, _tool_call(3, "c2", None, "}")),
        ]
    )
)


@pytest.mark.parametrize("rule, applies, mutate", MUTATIONS, ids=[f"{rule}-{n}" for n, (rule, _, _) in enumerate(MUTATIONS)])
def test_each_mutation_is_refused_on_a_fixed_stream(rule, applies, mutate):
    positions = [position for position, record in enumerate(FIXED_STREAM) if applies(record)]
    assert positions, "the fixed stream must exercise every mutation"
    for position in positions:
        assert_refused(FIXED_STREAM, position, rule, mutate)


@SETTINGS
@given(timed_chunks(max_size=20).filter(bool), st.data(), st.sampled_from([[], "record", 3, None]))
def test_strict_expansion_refuses_non_objects(timed, data, replacement):
    records = msgspec.to_builtins(packed(timed))
    position = data.draw(st.integers(0, len(records) - 1))
    records[position] = replacement
    with pytest.raises(StreamError) as caught:
        list(expand_strict(records))
    assert (caught.value.rule, caught.value.record) == ("not-object", position)


def test_every_rule_has_a_mutation():
    assert {rule for rule, _, _ in MUTATIONS} | {"not-object"} == {
        "exact-keys", "type", "texts", "args", "id", "name", "safe-integer", "index", "dt-length", "member-time",
        "raw-chunk", "not-object",
    }


def test_tool_call_runs_keep_name_presence():
    records = packed([(0, _tool_call(0, "c", "read", "")), (1, _tool_call(0, "c", None, "{"))])
    assert [type(record) for record in records] == [ToolCallChunks, ToolCallChunks]
