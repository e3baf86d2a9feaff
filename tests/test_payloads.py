"""Payload accessors: the tool-result accessors of dshctl.model read both shapes (v4 tool-role messages,
v0–v3 user messages wrapping a tool-result block) in every sample and v2/v4 corpus file, and agree with
the JSON they read."""

from __future__ import annotations

import pytest

from conftest import corpus_files, samples
from dshctl.model import Event, message_of, tool_result_blocks, tool_result_call_id
from dshctl.reader import open_log

SAMPLES = samples("*.session*.jsonl*")
CORPUS_CURRENT = corpus_files("v[24]/snapshot-form/*.jsonl", "v2/complete-envelope/*.jsonl")


@pytest.mark.parametrize("path", SAMPLES + CORPUS_CURRENT, ids=lambda p: p.name)
def test_tool_result_accessors_agree_with_the_json(path):
    results = 0
    with open_log(path) as log:
        for event in log.events():
            if event.type != "tool/result":
                continue
            results += 1
            message = message_of(event)
            blocks, is_error = tool_result_blocks(event)
            if message["role"] == "tool":
                assert tool_result_call_id(event) == message["toolCallId"]
                assert blocks == message["content"] and is_error == (message.get("isError") is True)
            else:
                [wrapper] = [block for block in message["content"] if block.get("type") == "tool-result"][:1]
                assert tool_result_call_id(event) == message["source"]["callId"] == wrapper["toolCallId"]
                assert blocks == wrapper["content"] and is_error == (wrapper.get("isError") is True)
    if path.name.startswith("tour."):
        assert results > 0  # the tour samples call tools in every generation


def test_accessors_of_a_malformed_tool_result_answer_nothing():
    event = Event(type="tool/result", seq=3, time=None, line=4, data={"turn": 1, "message": "not an object"})
    assert message_of(event) is None
    assert tool_result_call_id(event) is None
    assert tool_result_blocks(event) == ([], False)
