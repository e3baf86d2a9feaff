"""BlockAssembler rules (FORMAT.md §4.6), the seed failure modes, and corpus conformance."""

from __future__ import annotations

import json

import pytest

from dshctl.assembler import BlockAssembler, assemble
from dshctl.jsvalues import loads_strict
from dshctl.stream import Accumulator, ToolCallChunks, stream_from_builtins

from chunks import call, end, start, text  # noqa: E402
from conftest import CORPUS


def fed(chunks: list[dict]) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(chunk)
    return assembler


def packed(chunks: list[dict]) -> list:
    accumulator = Accumulator()
    for time, chunk in enumerate(chunks):
        accumulator.push(time, chunk)
    return accumulator.records


# ---------------------------------------------------------------------------------------------- seed failure modes

WRITE_FILE_ARGUMENTS = json.dumps(
    {
        "path": "src/greeting/main.py",
        "content": "import sys\n\n\ndef main(argv: list[str]) -> int:\n"
        "    name = argv[1] if len(argv) > 1 else \"world\"\n    print(f\"hello, {name}\")\n    return 0\n\n\n"
        "if __name__ == \"__main__\":\n    sys.exit(main(sys.argv))\n",
    }
)


def _fragments(whole: str, count: int) -> list[str]:
    cuts = [len(whole) * part // count for part in range(count + 1)]
    return [whole[left:right] for left, right in zip(cuts, cuts[1:])]


def test_write_file_arguments_in_35_fragments_assemble_to_the_exact_string():
    fragments = _fragments(WRITE_FILE_ARGUMENTS, 35)
    assert len(fragments) == 35
    for fragment in fragments:
        with pytest.raises(json.JSONDecodeError):
            json.loads(fragment)
    chunks = [start(0, "tool-call"), call(0, "call_w", fragments[0], name="write_file")]
    chunks += [call(0, "call_w", fragment) for fragment in fragments[1:]]
    records = packed(chunks)
    # The name arrives once, so the call is a named one-member run followed by an unnamed run.
    assert [type(record).__name__ for record in records] == ["RawChunk", "ToolCallChunks", "ToolCallChunks"]
    assert records[1].name == "write_file" and len(records[2].args) == 34
    expected = [{"type": "tool-call", "id": "call_w", "name": "write_file", "arguments": WRITE_FILE_ARGUMENTS}]
    assert assemble(records).blocks() == expected
    assert fed(chunks).blocks() == expected
    assert json.loads(assemble(records).blocks()[0]["arguments"])["path"] == "src/greeting/main.py"


def test_two_interleaved_tool_calls_stay_apart_by_index():
    first = _fragments('{"path": "a.txt"}', 6)
    second = _fragments('{"command": "ls -la"}', 6)
    chunks = [start(0, "tool-call"), start(1, "tool-call")]
    for position, (left, right) in enumerate(zip(first, second)):
        chunks.append(call(0, "c0", left, name="read" if position == 0 else None))
        chunks.append(call(1, "c1", right, name="bash" if position == 0 else None))
    expected = [
        {"type": "tool-call", "id": "c0", "name": "read", "arguments": '{"path": "a.txt"}'},
        {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"command": "ls -la"}'},
    ]
    records = packed(chunks)
    assert all(len(record.args) == 1 for record in records if isinstance(record, ToolCallChunks))
    assert assemble(records).blocks() == expected
    assert fed(chunks).blocks() == expected


def test_deltas_after_block_end_change_nothing():
    closed = {"type": "text", "text": "final"}
    chunks = [start(0, "text"), text(0, "fin"), text(0, "al"), end(0, closed)]
    before = fed(chunks).blocks()
    after = fed(chunks + [text(0, " and more"), end(0, {"type": "text", "text": "other"}), start(0, "reasoning")])
    assert before == after.blocks() == [closed]
    assert assemble(packed(chunks + [text(0, " and more")])).blocks() == [closed]


def test_max_tokens_drops_the_truncated_call_and_prunes_replay_blocks():
    answer = {"type": "text", "text": "Starting the write now."}
    replay = {"response": {"kind": "pi-ai", "stopReason": "length"}, "blocks": [{"type": "text"}, {"type": "tool-call"}]}
    chunks = [
        start(0, "text"),
        text(0, "Starting the write now."),
        end(0, answer),
        start(1, "tool-call"),
        call(1, "call-cut", '{"command":"echo demo > ', name="bash"),
        {"type": "usage", "usage": {"inputTokens": 2864, "outputTokens": 12}},
        {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": replay},
    ]
    for assembler in (fed(chunks), assemble(packed(chunks))):
        assert assembler.blocks() == [answer]
        assert assembler.replay_state() == {"response": replay["response"], "blocks": [{"type": "text"}]}
        assert assembler.truncated_tool_calls() == [
            {"type": "tool-call", "id": "call-cut", "name": "bash", "arguments": '{"command":"echo demo > '}
        ]
        assert assembler.finish == {"kind": "max-tokens"}
        assert assembler.usage == {"inputTokens": 2864, "outputTokens": 12}


# ---------------------------------------------------------------------------------------------- the other rules


def test_first_seen_order_not_numeric_order():
    chunks = [text(2, "b"), start(0, "reasoning"), text(1, "a"), {"type": "reasoning-delta", "index": 0, "text": "r"}]
    assert fed(chunks).blocks() == [
        {"type": "text", "text": "b"},
        {"type": "reasoning", "text": "r"},
        {"type": "text", "text": "a"},
    ]


def test_block_start_without_deltas_is_an_empty_text_block():
    assert fed([start(0, "text")]).blocks() == [{"type": "text", "text": ""}]
    assert fed([start(0, "text")]).interrupted_blocks() == []


def test_second_block_start_is_ignored_and_first_close_wins():
    chunks = [start(0, "text"), start(0, "reasoning"), text(0, "x"), end(0, {"type": "text", "text": "one"}), end(0, {"type": "text", "text": "two"})]
    assert fed(chunks).blocks() == [{"type": "text", "text": "one"}]


def test_block_end_overrides_deltas_and_can_open_a_block():
    image = {"type": "image", "attachment": {"attachmentId": "sha256:00"}}
    assert fed([text(0, "draft"), end(0, {"type": "text", "text": "final"}), end(1, image)]).blocks() == [
        {"type": "text", "text": "final"},
        image,
    ]


def test_tool_call_partial_keeps_last_id_and_last_truthy_name():
    chunks = [call(0, "a", "{", name="read"), call(0, "b", '"x"', name=""), call(0, "b", "}")]
    assert fed(chunks).blocks() == [{"type": "tool-call", "id": "b", "name": "read", "arguments": '{"x"}'}]


def test_unclosed_tool_call_defaults():
    assert fed([start(3, "tool-call")]).blocks() == [{"type": "tool-call", "id": "call-3", "name": "", "arguments": ""}]
    # dsh falls back with ??, so an empty id from a delta is kept.
    assert fed([call(0, "", "{}")]).blocks() == [{"type": "tool-call", "id": "", "name": "", "arguments": "{}"}]
    assert list(fed([call(0, "c", "")]).blocks()[0]) == ["type", "id", "name", "arguments"]


def test_unclosed_unknown_block_type_fails_blocks_but_not_interrupted_blocks():
    assembler = fed([start(0, "reasoning"), {"type": "reasoning-delta", "index": 0, "text": "r"}, start(1, "image")])
    with pytest.raises(ValueError, match="image"):
        assembler.blocks()
    assert assembler.interrupted_blocks() == [{"type": "reasoning", "text": "r"}]
    assert fed([start(1, "image"), end(1, {"type": "image", "attachment": {}})]).blocks() == [{"type": "image", "attachment": {}}]


def test_interrupted_blocks_keep_only_visible_text_and_reasoning():
    chunks = [
        start(0, "reasoning"),
        {"type": "reasoning-delta", "index": 0, "text": "plan"},
        end(0, {"type": "reasoning", "text": "plan"}),
        start(1, "text"),
        text(1, "\u00a0\ufeff "),
        start(2, "tool-call"),
        call(2, "c", "{"),
        start(3, "text"),
        text(3, "partial"),
    ]
    assert fed(chunks).interrupted_blocks() == [{"type": "reasoning", "text": "plan"}, {"type": "text", "text": "partial"}]


def test_usage_and_finish_last_wins_and_default_stop():
    assembler = fed([text(0, "x")])
    assert assembler.usage is None and assembler.finish == {"kind": "stop"} and assembler.replay_state() is None
    assembler = fed(
        [
            {"type": "finish", "reason": {"kind": "error"}, "replayState": {"response": 1}},
            {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}},
            {"type": "usage", "usage": {"inputTokens": 2, "outputTokens": 2}},
            {"type": "finish", "reason": {"kind": "stop"}},
        ]
    )
    assert assembler.usage == {"inputTokens": 2, "outputTokens": 2}
    assert assembler.finish == {"kind": "stop"} and assembler.replay_state() is None


def test_replay_state_alignment():
    envelope = {"response": {"kind": "x"}, "blocks": [{"type": "text"}]}
    assert fed([text(0, "a"), {"type": "finish", "reason": {"kind": "stop"}, "replayState": envelope}]).replay_state() is envelope
    no_blocks = {"response": {"kind": "x"}}
    assert fed([{"type": "finish", "reason": {"kind": "stop"}, "replayState": no_blocks}]).replay_state() is no_blocks
    # Counted against all blocks, before a max-tokens drop.
    mismatched = [text(0, "a"), call(1, "c", "{"), {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": envelope}]
    assert fed(mismatched).replay_state() is None
    assert fed(mismatched).blocks() == [{"type": "text", "text": "a"}]
    aligned_no_calls = [text(0, "a"), {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": envelope}]
    assert fed(aligned_no_calls).replay_state() is envelope
    assert fed(aligned_no_calls).truncated_tool_calls() == []


def test_unknown_chunk_type_is_refused():
    with pytest.raises(ValueError):
        BlockAssembler().push({"type": "mystery"})


# ---------------------------------------------------------------------------------------------- corpus conformance


def _messages():
    for path in sorted(CORPUS.glob("v[24]/**/*.jsonl")):
        for line in path.read_text().splitlines()[1:]:
            event = loads_strict(line)
            if event.get("type") == "assistant/message":
                yield path.relative_to(CORPUS).as_posix(), event["data"]


@pytest.mark.corpus
def test_corpus_messages_are_reproduced_from_their_streams():
    checked = interrupted = replays = pruned = 0
    for name, data in _messages():
        message = data["message"]
        records = stream_from_builtins(data["stream"])
        per_run = assemble(records)
        per_member = fed([chunk for record in records for _, chunk in _members(record)])
        for assembler in (per_run, per_member):
            content = assembler.interrupted_blocks() if data.get("interrupted") else assembler.blocks()
            assert content == message["content"], name
            assert assembler.usage == data.get("usage"), name
            assert assembler.replay_state() == message.get("source", {}).get("replayState"), name
        checked += 1
        interrupted += bool(data.get("interrupted"))
        replays += "replayState" in message.get("source", {})
        pruned += bool(per_run.truncated_tool_calls())
    assert checked >= 60 and interrupted >= 1 and replays >= 3 and pruned >= 1


def _members(record):
    from dshctl.stream import iter_members

    return iter_members([record])
