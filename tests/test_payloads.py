"""Typed payloads: every modeled event of every sample and v2/v4 corpus file converts, and the typed view
agrees with the JSON it came from."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from dshctl.model import (
    AssistantMessageData,
    ImageBlock,
    OtherBlock,
    SurfaceMessageData,
    ToolResultBlock,
    payload,
    tool_result_blocks,
    tool_result_call_id,
)
from dshctl.model import Event
from dshctl.reader import open_log

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLES = sorted(p for p in (ROOT / "samples").glob("*.session*.jsonl*"))
CORPUS_CURRENT = sorted(CORPUS.glob("v[24]/snapshot-form/*.jsonl")) + sorted(CORPUS.glob("v2/complete-envelope/*.jsonl"))


@pytest.mark.parametrize("path", SAMPLES + CORPUS_CURRENT, ids=lambda p: p.name)
def test_every_modeled_event_converts(path):
    converted = 0
    for event in open_log(str(path)).events():
        typed = payload(event)
        if typed is None:
            continue
        converted += 1
        if isinstance(typed, AssistantMessageData):
            assert typed.turn == event.data["turn"]
            assert len(typed.message.content) == len(event.data["message"]["content"])
            if "usage" in event.data:
                assert typed.usage.outputTokens == event.data["usage"]["outputTokens"]
        if event.type == "tool/result":
            blocks, is_error = tool_result_blocks(event)
            message = typed.message
            if message.role == "tool":
                assert message.toolCallId == tool_result_call_id(event)
                assert len(message.content) == len(blocks) and bool(message.isError) == is_error
            else:
                wrapper = message.content[0]
                assert isinstance(wrapper, ToolResultBlock) and wrapper.toolCallId == tool_result_call_id(event)
    assert converted > 5


def test_unmodeled_block_kinds_are_kept_as_other():
    event = Event(
        type="tool/result",
        seq=3,
        time=None,
        line=4,
        data={
            "turn": 1,
            "step": 1,
            "message": {
                "id": "r",
                "role": "tool",
                "toolCallId": "c",
                "isError": False,
                "source": {"kind": "tool", "callId": "c"},
                "content": [
                    {"type": "plugin:compaction", "blob": "x"},
                    {"type": "image", "attachment": {"attachmentId": "sha256:" + "0" * 64, "mediaType": "image/png", "bytes": 1, "width": 1, "height": 1}},
                ],
            },
        },
    )
    typed = payload(event)
    assert isinstance(typed, SurfaceMessageData)
    other, image = typed.message.content
    assert isinstance(other, OtherBlock) and other.kind == "plugin:compaction" and other.fields == {"blob": "x"}
    assert isinstance(image, ImageBlock) and image.attachment.bytes == 1


def test_wrong_shape_raises_naming_the_path():
    event = Event(type="tool/call", seq=0, time=None, line=2, data={"turn": 1, "step": 1, "callId": "c", "name": "n", "arguments": 5})
    with pytest.raises(msgspec.ValidationError, match="arguments"):
        payload(event)
