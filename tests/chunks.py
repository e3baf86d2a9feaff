"""Stream chunks in dsh's JSON shape (FORMAT §4.1), for building test streams."""

from __future__ import annotations


def text(index: int, value: str) -> dict:
    return {"type": "text-delta", "index": index, "text": value}


def reasoning(index: int, value: str) -> dict:
    return {"type": "reasoning-delta", "index": index, "text": value}


def call(index: int, call_id: str, arguments: str, name: str | None = None) -> dict:
    chunk = {"type": "tool-call-delta", "index": index, "id": call_id}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = arguments
    return chunk


def start(index: int, block_type: str) -> dict:
    return {"type": "block-start", "index": index, "blockType": block_type}


def end(index: int, block: dict) -> dict:
    return {"type": "block-end", "index": index, "block": block}
