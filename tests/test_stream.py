"""Stream core: packing, strict expansion, chunk rules and record-level readers (FORMAT.md §4.2–§4.5)."""

from __future__ import annotations

import json

import msgspec
import pytest

from dshctl.errors import StreamError
from dshctl.jsvalues import (
    JS_WHITESPACE,
    MAX_SAFE_INTEGER,
    NEG_ZERO,
    has_non_whitespace,
    is_negative_zero,
    is_plain_safe_int,
    loads_strict,
    safe_index,
    safe_int,
)
from dshctl.stream import (
    Accumulator,
    RawChunk,
    ReasoningChunks,
    TextChunks,
    ToolCallChunks,
    chunk_has_visible_text,
    decode_stream,
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
    record_member_count,
    run_times,
    stream_from_builtins,
)

from chunks import call, reasoning, text  # noqa: E402
from conftest import CORPUS


def packed(timed: list[tuple[int, dict]]) -> list:
    accumulator = Accumulator()
    for time, chunk in timed:
        accumulator.push(time, chunk)
    return accumulator.records


# ---------------------------------------------------------------------------------------------- records


def test_records_encode_in_dsh_key_order_and_omit_absent_name():
    named = ToolCallChunks(time0=5, index=1, dt=[2], id="c1", name="read", args=["{", "}"])
    unnamed = ToolCallChunks(time0=5, index=1, dt=[], id="c1", args=["{}"])
    assert msgspec.json.encode(named) == (
        b'{"type":"tool-call-chunks","time0":5,"index":1,"dt":[2],"id":"c1","name":"read","args":["{","}"]}'
    )
    assert b"name" not in msgspec.json.encode(unnamed)
    assert msgspec.json.encode(TextChunks(1, 0, [], ["a"])) == b'{"type":"text-chunks","time0":1,"index":0,"dt":[],"texts":["a"]}'
    assert msgspec.json.encode(RawChunk(1, {"type": "usage"})) == b'{"type":"chunk","time":1,"chunk":{"type":"usage"}}'


def test_decode_is_lenient_about_extra_keys_and_round_trips():
    raw = (
        b'[{"type":"reasoning-chunks","time0":1,"index":0,"dt":[1],"texts":["a","b"],"extra":true},'
        b'{"type":"tool-call-chunks","time0":3,"index":1,"dt":[],"id":"c","name":"n","args":[""]},'
        b'{"type":"chunk","time":4,"chunk":{"type":"finish","reason":{"kind":"stop"}}}]'
    )
    records = decode_stream(raw)
    assert records[0] == ReasoningChunks(1, 0, [1], ["a", "b"])
    assert records[1].name == "n"
    assert stream_from_builtins(json.loads(raw)) == records
    assert decode_stream(msgspec.json.encode(records)) == records


SHAPE_BREAKS = {
    "dt one too long": {"dt": [1, 2]},
    "dt one too short": {"dt": []},
    "no members": {"dt": [], "texts": []},
    "time0 beyond the safe integers": {"time0": MAX_SAFE_INTEGER + 1},
    "time0 past int64": {"time0": 2**63},
    "dt entry beyond the safe integers": {"dt": [-(10**300)]},
    "negative index": {"index": -1},
    "huge index": {"index": 2**70},
    "member time beyond the safe integers": {"time0": MAX_SAFE_INTEGER - 1, "dt": [2]},
}


@pytest.mark.parametrize("change", list(SHAPE_BREAKS.values()), ids=list(SHAPE_BREAKS))
def test_typed_decoding_refuses_runs_no_reader_can_follow(change):
    record = {"type": "text-chunks", "time0": 10, "index": 0, "dt": [1], "texts": ["a", "b"], **change}
    with pytest.raises((msgspec.ValidationError, ValueError)):
        stream_from_builtins([record])
    with pytest.raises((msgspec.ValidationError, ValueError)):
        decode_stream(json.dumps([record]))


def test_typed_decoding_refuses_an_unsafe_raw_chunk_time():
    with pytest.raises(msgspec.ValidationError):
        stream_from_builtins([{"type": "chunk", "time": -(2**63) - 1, "chunk": {"type": "usage"}}])


def test_typed_decoding_keeps_negative_gaps_and_extreme_safe_times():
    records = [
        {"type": "text-chunks", "time0": MAX_SAFE_INTEGER, "index": 0, "dt": [-MAX_SAFE_INTEGER, 5], "texts": ["a", "b", "c"]},
        {"type": "chunk", "time": -MAX_SAFE_INTEGER, "chunk": {"type": "usage"}},
    ]
    assert list(run_times(stream_from_builtins(records)[0])) == [MAX_SAFE_INTEGER, 0, 5]


def test_member_counts_and_times():
    run = TextChunks(10, 0, [3, -1, 0], ["a", "b", "c", "d"])
    assert record_member_count(run) == 4
    assert list(run_times(run)) == [10, 13, 12, 12]
    assert list(run_times(RawChunk(7, {"type": "usage"}))) == [7]
    assert record_member_count(RawChunk(7, {"type": "usage"})) == 1


# ---------------------------------------------------------------------------------------------- packing


def test_packing_follows_dsh_rules():
    records = packed(
        [
            (100, {"type": "block-start", "index": 0, "blockType": "reasoning"}),
            (100, reasoning(0, "")),
            (101, reasoning(0, "think")),
            (99, reasoning(0, "ing")),  # negative gap still packs
            (99, text(0, "x")),  # other kind: new run
            (99, text(1, "y")),  # other index: new run
            (105, call(2, "c1", "", name="write_file")),
            (105, call(2, "c1", "{")),  # name only on the first delta: new, unnamed run
            (106, call(2, "c1", "}")),
            (107, call(2, "c2", "")),  # other id
            (107, call(2, "", "x")),  # empty id: raw
            (107, call(2, "c2", "x", name="")),  # empty name: raw
            (108, {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}),
            (109, {"type": "finish", "reason": {"kind": "stop"}}),
        ]
    )
    assert records == [
        RawChunk(100, {"type": "block-start", "index": 0, "blockType": "reasoning"}),
        ReasoningChunks(100, 0, [1, -2], ["", "think", "ing"]),
        TextChunks(99, 0, [], ["x"]),
        TextChunks(99, 1, [], ["y"]),
        ToolCallChunks(time0=105, index=2, dt=[], id="c1", name="write_file", args=[""]),
        ToolCallChunks(time0=105, index=2, dt=[1], id="c1", args=["{", "}"]),
        ToolCallChunks(time0=107, index=2, dt=[], id="c2", args=[""]),
        RawChunk(107, call(2, "", "x")),
        RawChunk(107, call(2, "c2", "x", name="")),
        RawChunk(108, {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}),
        RawChunk(109, {"type": "finish", "reason": {"kind": "stop"}}),
    ]


def test_unsafe_gap_starts_a_new_run():
    records = packed([(-MAX_SAFE_INTEGER, text(0, "a")), (MAX_SAFE_INTEGER, text(0, "b")), (MAX_SAFE_INTEGER, text(0, "c"))])
    assert records == [TextChunks(-MAX_SAFE_INTEGER, 0, [], ["a"]), TextChunks(MAX_SAFE_INTEGER, 0, [0], ["b", "c"])]


@pytest.mark.parametrize(
    "time, chunk",
    [
        (2**53, text(0, "a")),
        (True, text(0, "a")),
        (1.5, text(0, "a")),
        (0, {"type": "mystery"}),
        (0, {"index": 0}),
        (0, text(-1, "a")),
        (0, text(NEG_ZERO, "a")),
        (0, text(-0.0, "a")),
        (0, text(True, "a")),
        (0, {"type": "text-delta", "index": 0, "text": None}),
        (0, {"type": "tool-call-delta", "index": 0, "id": 5, "argumentsDelta": ""}),
        (0, {"type": "tool-call-delta", "index": 0, "id": "c", "name": None, "argumentsDelta": ""}),
        (0, {"type": "tool-call-delta", "index": 0, "id": "c"}),
        (0, {"type": "usage", "usage": {"inputTokens": float("nan")}}),
        (0, {"type": "usage", "usage": {"inputTokens": NEG_ZERO}}),
    ],
)
def test_accumulator_refuses_what_dsh_refuses(time, chunk):
    with pytest.raises(ValueError):
        Accumulator().push(time, chunk)


def test_integral_float_time_and_index_pack_as_ints():
    records = packed([(3.0, text(1.0, "a")), (4, text(1, "b"))])
    assert records == [TextChunks(3, 1, [1], ["a", "b"])]
    assert type(records[0].time0) is int and type(records[0].index) is int


def test_push_run_merges_rows_like_the_v1_to_v2_fold():
    accumulator = Accumulator()
    accumulator.push(10, text(0, "a"))
    accumulator.push_run(TextChunks(12, 0, [1, 1], ["b", "c", "d"]))
    accumulator.push(15, text(0, "e"))
    accumulator.push_run(ToolCallChunks(time0=20, index=1, dt=[0], id="c", name="n", args=["", "{"]))
    accumulator.push_run(ToolCallChunks(time0=21, index=1, dt=[], id="c", args=["}"]))  # name differs
    accumulator.push_run(ToolCallChunks(time0=22, index=1, dt=[], id="c", args=["!"]))
    assert accumulator.records == [
        TextChunks(10, 0, [2, 1, 1, 1], ["a", "b", "c", "d", "e"]),
        ToolCallChunks(time0=20, index=1, dt=[0], id="c", name="n", args=["", "{"]),
        ToolCallChunks(time0=21, index=1, dt=[1], id="c", args=["}", "!"]),
    ]
    assert len(accumulator) == 3


def test_push_run_does_not_alias_its_argument():
    row = TextChunks(0, 0, [1], ["a", "b"])
    accumulator = Accumulator()
    accumulator.push_run(row)
    accumulator.push(2, text(0, "c"))
    assert row == TextChunks(0, 0, [1], ["a", "b"])


def test_push_run_of_a_row_with_empty_id_or_name_equals_pushing_its_members():
    for row in (
        ToolCallChunks(time0=5, index=0, dt=[1, 1], id="c1", name="", args=["", "{", "}"]),
        ToolCallChunks(time0=5, index=0, dt=[1], id="", args=["{", "}"]),
    ):
        accumulator = Accumulator()
        accumulator.push_run(row)
        assert accumulator.records == packed(list(iter_members([row])))
        assert all(isinstance(record, RawChunk) for record in accumulator.records)


def test_push_run_refuses_raw_records_and_bad_runs():
    with pytest.raises(ValueError):
        Accumulator().push_run(RawChunk(0, {"type": "usage"}))
    with pytest.raises(ValueError):
        Accumulator().push_run(TextChunks(0, 0, [1, 1], ["a"]))
    with pytest.raises(ValueError):
        Accumulator().push_run(TextChunks(0, 0, [], []))


def _v0_lines() -> list[tuple[str, list[dict]]]:
    files = sorted((CORPUS / "v0").glob("*.jsonl"))
    return [(path.name, [json.loads(line) for line in path.read_text().splitlines()[1:]]) for path in files]


@pytest.mark.corpus
def test_v0_packed_rows_appended_whole_equal_their_members_pushed_one_by_one():
    rows_seen = 0
    for name, events in _v0_lines():
        by_rows, by_members = Accumulator(), Accumulator()
        for event in events:
            kind = event.get("type")
            data = event.get("data", {})
            if kind == "assistant/chunk":
                by_rows.push(event.get("time", 0), data["chunk"])
                by_members.push(event.get("time", 0), data["chunk"])
            elif kind in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
                rows_seen += 1
                fields = {key: data[key] for key in ("index", "dt", "texts", "id", "name", "args") if key in data}
                row = msgspec.convert({"type": kind, "time0": event.get("time0", 0), **fields}, TextChunks | ReasoningChunks | ToolCallChunks)
                by_rows.push_run(row)
                for time, chunk in iter_members([row]):
                    by_members.push(time, chunk)
        assert by_rows.records == by_members.records, name
    assert rows_seen > 50


# ---------------------------------------------------------------------------------------------- strict expansion


def builtins(records) -> list:
    return msgspec.to_builtins(records)


SAMPLE = [
    (1, {"type": "block-start", "index": 0, "blockType": "text"}),
    (2, text(0, "hel")),
    (3, text(0, "lo")),
    (3, call(1, "c1", "{", name="read")),
    (4, call(1, "c1", "}", name="read")),
    (5, call(1, "", "x")),
    (6, {"type": "finish", "reason": {"kind": "stop"}}),
]


def test_strict_expansion_is_the_exact_timed_chunk_sequence():
    assert list(expand_strict(builtins(packed(SAMPLE)))) == SAMPLE
    assert list(iter_members(packed(SAMPLE))) == SAMPLE


def test_loads_strict_keeps_negative_zero_detectable():
    assert loads_strict("-0") is NEG_ZERO
    assert loads_strict("[0, -0, -0.0, 1.0]")[0].__class__ is int
    value = loads_strict("-0.0")
    assert value == 0 and str(value) == "-0.0"
    with pytest.raises(ValueError):
        loads_strict("NaN")


@pytest.mark.parametrize(
    "value, as_safe_int, plain",
    [
        (3, 3, True),
        (3.0, 3, False),  # JSON/JavaScript: an integral float is an integer; a v0 row field is not
        (3.5, None, False),
        (True, None, False),
        (NEG_ZERO, 0, True),
        (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER, True),
        (-MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, True),
        (MAX_SAFE_INTEGER + 1, None, False),
        (float(MAX_SAFE_INTEGER + 1), None, False),
        ("3", None, False),
        (None, None, False),
    ],
)
def test_the_two_safe_integer_rules(value, as_safe_int, plain):
    assert safe_int(value) == as_safe_int
    assert safe_int(value).__class__ is (int if as_safe_int is not None else type(None))
    assert is_plain_safe_int(value) is plain


def test_negative_zero_is_no_index():
    assert is_negative_zero(NEG_ZERO) and is_negative_zero(-0.0)
    assert not is_negative_zero(0) and not is_negative_zero(0.0)
    assert safe_index(NEG_ZERO) is None and safe_index(-0.0) is None
    assert safe_index(0) == 0 and safe_index(2.0) == 2 and safe_index(-1) is None


def _refusal(records) -> StreamError:
    with pytest.raises(StreamError) as caught:
        list(expand_strict(records))
    return caught.value


@pytest.mark.parametrize(
    "json_text, rule",
    [
        ('[{"type":"text-chunks","time0":0,"index":-0,"dt":[],"texts":["a"]}]', "index"),
        ('[{"type":"text-chunks","time0":0,"index":-0.0,"dt":[],"texts":["a"]}]', "index"),
        ('[{"type":"text-chunks","time0":0,"index":0.5,"dt":[],"texts":["a"]}]', "index"),
        ('[{"type":"text-chunks","time0":9007199254740992,"index":0,"dt":[],"texts":["a"]}]', "safe-integer"),
        ('[{"type":"text-chunks","time0":1e400,"index":0,"dt":[],"texts":["a"]}]', "safe-integer"),
        ('[{"type":"text-chunks","time0":true,"index":0,"dt":[],"texts":["a"]}]', "safe-integer"),
        ('[{"type":"text-chunks","time0":9007199254740991,"index":0,"dt":[1],"texts":["a","b"]}]', "member-time"),
        ('[{"type":"chunk","time":0,"chunk":{"usage":{"inputTokens":-0}}}]', "raw-chunk"),
        ('[{"type":"chunk","time":0,"chunk":{"x":[-0.0]}}]', "raw-chunk"),
        ('[{"type":"chunk","time":0,"chunk":null}]', "raw-chunk"),
        ('[{"type":"chunk","time":0,"chunk":[]}]', "raw-chunk"),
        ('[{"type":"chunk","time":0,"chunk":{},"extra":1}]', "exact-keys"),
        ('[{"time":0,"chunk":{}}]', "type"),
        ("[[]]", "not-object"),
    ],
)
def test_strict_expansion_refuses_json_texts(json_text, rule):
    error = _refusal(loads_strict(json_text))
    assert error.rule == rule and error.record == 0
    assert "record 0" in str(error) and rule in str(error)


def test_strict_expansion_accepts_js_integers():
    # -0 is a valid time (only indexes refuse it); 3.0 is the integer 3 in JSON.
    records = loads_strict('[{"type":"text-chunks","time0":-0,"index":1.0,"dt":[2.0],"texts":["a","b"]}]')
    assert list(expand_strict(records)) == [(0, text(1, "a")), (2, text(1, "b"))]
    assert all(type(time) is int and type(chunk["index"]) is int for time, chunk in expand_strict(records))


def test_strict_expansion_is_lazy_and_names_the_position():
    records = builtins(packed(SAMPLE)) + [{"type": "text-chunks", "time0": 0, "index": 0, "dt": [], "texts": []}]
    members = expand_strict(records)
    assert next(members) == SAMPLE[0]
    taken = [SAMPLE[0]]
    with pytest.raises(StreamError) as caught:
        for member in members:
            taken.append(member)
    assert taken == SAMPLE
    assert caught.value.record == len(records) - 1 and caught.value.rule == "texts"


# ---------------------------------------------------------------------------------------------- chunk rules


def test_whitespace_is_javascripts():
    for char in JS_WHITESPACE:
        assert not has_non_whitespace(char * 3), hex(ord(char))
    # Python's isspace() says these are whitespace; JavaScript's \s does not.
    for char in "\x1c\x1d\x1e\x1f\x85":
        assert char.isspace() and has_non_whitespace(char), hex(ord(char))
    assert not "\ufeff".isspace() and not has_non_whitespace("\ufeff")
    assert not has_non_whitespace("") and has_non_whitespace(" \u3000x")
    assert not has_non_whitespace(None)


def test_token_delta_rule():
    assert is_token_delta(text(0, "a")) and not is_token_delta(text(0, ""))
    assert is_token_delta(reasoning(0, " ")) and not is_token_delta(reasoning(0, ""))
    assert is_token_delta(call(0, "c", "{")) and not is_token_delta(call(0, "c", ""))
    assert is_token_delta(call(0, "c", "", name="")) and is_token_delta(call(0, "c", "", name="read"))
    for chunk in ({"type": "block-start", "index": 0, "blockType": "text"}, {"type": "usage", "usage": {}}):
        assert not is_token_delta(chunk)


def test_visibility_rules():
    image = {"type": "image", "attachment": {}}
    assert is_visible_chunk(reasoning(0, " x")) and not is_visible_chunk(text(0, "\u00a0\n"))
    assert not is_visible_chunk(call(0, "c", "{}", name="read"))
    assert is_visible_chunk({"type": "block-start", "index": 0, "blockType": "image"})
    assert not is_visible_chunk({"type": "block-start", "index": 0, "blockType": "tool-call"})
    assert is_visible_chunk({"type": "block-end", "index": 0, "block": image})
    assert is_visible_chunk({"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "r"}})
    assert not is_visible_chunk({"type": "block-end", "index": 0, "block": {"type": "text", "text": " "}})
    assert not is_visible_chunk({"type": "block-end", "index": 0, "block": {"type": "tool-call", "id": "c", "name": "n", "arguments": ""}})
    assert not is_visible_chunk({"type": "finish", "reason": {"kind": "stop"}})
    assert chunk_has_visible_text(text(0, "a")) and not chunk_has_visible_text(reasoning(0, "a"))
    assert chunk_has_visible_text({"type": "block-end", "index": 0, "block": {"type": "text", "text": "a"}})
    assert not chunk_has_visible_text({"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "a"}})
    assert not chunk_has_visible_text({"type": "block-end", "index": 0, "block": image})


# ---------------------------------------------------------------------------------------------- readers


class CountingList(list):
    """A list that counts item reads, to show a reader stopped early."""

    reads = 0

    def __iter__(self):
        for item in super().__iter__():
            CountingList.reads += 1
            yield item


def test_first_token_time_of_a_named_tool_run_is_its_start():
    stream = packed([(5, call(0, "c", "", name="read")), (9, call(0, "c", "", name="read"))])
    assert first_token_time(stream) == 5


def test_first_token_time_reads_members_only_up_to_the_first_token():
    run = TextChunks(100, 0, [1, 1, 1, 1], CountingList(["", "", "a", "b", "c"]))
    CountingList.reads = 0
    assert first_token_time([RawChunk(99, {"type": "block-start", "index": 0, "blockType": "text"}), run]) == 102
    assert CountingList.reads == 3


def test_readers_on_a_small_stream():
    stream = packed(
        [
            (1, {"type": "block-start", "index": 0, "blockType": "reasoning"}),
            (2, reasoning(0, "")),
            (3, reasoning(0, "  ")),
            (4, reasoning(0, "why")),
            (5, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "  why"}}),
            (6, text(1, " ")),
            (7, text(1, "Hi")),
            (8, call(2, "", "x")),
            (9, {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}}),
            (10, {"type": "usage", "usage": {"inputTokens": 2, "outputTokens": 2}}),
            (11, {"type": "finish", "reason": {"kind": "stop"}}),
        ]
    )
    assert first_token_time(stream) == 3
    assert first_visible_time(stream) == 4
    assert has_visible_content(stream) and has_visible_text(stream)
    assert joined_text(stream) == " Hi"
    assert last_raw_chunk(stream, "usage") == {"type": "usage", "usage": {"inputTokens": 2, "outputTokens": 2}}
    assert last_raw_chunk(stream, "block-start") == {"type": "block-start", "index": 0, "blockType": "reasoning"}
    assert [chunk["index"] for chunk in raw_chunks(stream, "block-end")] == [0]
    with pytest.raises(ValueError):
        last_raw_chunk(stream, "text-delta")
    with pytest.raises(ValueError):
        list(raw_chunks(stream, "tool-call-delta"))


def test_readers_on_empty_and_invisible_streams():
    assert first_token_time([]) is None and first_visible_time([]) is None
    stream = packed([(1, text(0, "")), (2, reasoning(1, " \u2028")), (3, call(2, "c", ""))])
    assert first_token_time(stream) == 2  # whitespace is a token, just not a visible one
    assert first_token_time([stream[0], stream[2]]) is None
    assert first_visible_time(stream) is None
    assert not has_visible_content(stream) and not has_visible_text(stream)
    assert last_raw_chunk(stream, "finish") is None
    only_reasoning = packed([(1, reasoning(0, "thinking"))])
    assert has_visible_content(only_reasoning) and not has_visible_text(only_reasoning)


# ---------------------------------------------------------------------------------------------- corpus


def _settlements():
    for path in sorted(CORPUS.glob("v[24]/**/*.jsonl")):
        for line in path.read_text().splitlines()[1:]:
            event = loads_strict(line)
            if event.get("type") in ("assistant/message", "assistant/attempt"):
                yield path.name, event


@pytest.mark.corpus
def test_corpus_streams_pass_strict_expansion_and_repack_identically():
    count = 0
    for name, event in _settlements():
        raw = event["data"]["stream"]
        records = stream_from_builtins(raw)
        members = list(expand_strict(raw))
        assert members == list(iter_members(records)), name
        assert packed(members) == records, name
        assert builtins(records) == raw, name
        count += 1
    assert count >= 60
