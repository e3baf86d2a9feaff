"""Logs and helpers for the HTML export's tests (tests/test_replay_html*.py): hand-written v4 logs, the
page's embedded data read back, and the text comparison's normalization."""

from __future__ import annotations

import base64
import json
import re
import zlib
from pathlib import Path

from conftest import CORPUS, SAMPLES

T0 = 1_790_000_000_000

LAYOUT = re.compile(r"[\s╭╰│─━❯✻]+")
"""What "layout aside" leaves out when the page's text is compared with ``replay --instant``'s: every
whitespace character and every frame glyph the terminal draws around blocks (``╭─ … │ … ╰─``, the
``━━`` of a turn header, the ``❯`` of a prompt, the ``✻`` of thinking). Everything else — every word,
digit and punctuation mark, of the log's text and of the labels — must be equal, in the same order."""


def without_layout(text: str) -> str:
    return LAYOUT.sub("", text)


def write_log(path: Path, events: list[tuple[str, dict]], *, header: dict | None = None) -> Path:
    """A v4 log of ``events`` (``(type, data)``; ``data["_time"]`` sets the event time, else T0 + seq)."""
    fields = {"type": "session", "version": 4, "id": "html-test", "createdAt": T0, "cwd": "/w", "isSeeded": False, "delegationDepth": 0}
    lines = [json.dumps({**fields, **(header or {})}, ensure_ascii=False)]
    for seq, (kind, data) in enumerate(events):
        data = dict(data)
        record = {"type": kind, "seq": seq, "time": data.pop("_time", T0 + seq), "data": data}
        if kind in ("user/message", "assistant/message", "tool/result"):
            record["surfaceOp"] = "append"
        lines.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prompt(turn: int, text: str, time: int) -> tuple[str, dict]:
    return "user/message", {"role": "user", "id": f"u{turn}", "source": {"kind": "user"}, "content": [{"type": "text", "text": text}],
                            "_time": time}


def assistant(turn: int, step: int, stream: list, content: list, time: int, **extra) -> tuple[str, dict]:
    message = {"role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}, "id": f"a{turn}{step}"}
    return "assistant/message", {"turn": turn, "step": step, "message": message, "stream": stream, "_time": time, **extra}


def tool_result(turn: int, step: int, call_id: str, text: str, time: int, *, error: bool = False) -> tuple[str, dict]:
    message = {"role": "tool", "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id,
               "content": [{"type": "text", "text": text}], "isError": error, "id": f"r-{call_id}"}
    return "tool/result", {"turn": turn, "step": step, "message": message, "_time": time}


def chunk(time: int, value: dict) -> dict:
    return {"type": "chunk", "time": time, "chunk": value}


def one_turn(turn: int, t: int, prompt_text: str, stream: list, content: list, *, after: list | None = None, title: str | None = None) -> list:
    """turn/start, a prompt, one step with the assistant's ``stream``, ``after`` (tool events), turn/end."""
    events = [("turn/start", {"turn": turn, "_time": t}), ("step/start", {"turn": turn, "step": 1, "_time": t + 1}), prompt(turn, prompt_text, t + 2)]
    if title is not None:
        events.append(("session/title", {"title": title, "messageSeqs": [], "source": {"kind": "fallback"}, "_time": t + 3}))
    end = max([t + 10] + [record.get("time", 0) for record in stream if isinstance(record, dict)] + [record.get("time0", 0) for record in stream]) + 10
    events.append(assistant(turn, 1, stream, content, end))
    events.extend(after or [])
    last = max([end] + [data.get("_time", 0) for _, data in after or []]) + 5
    events.append(("step/end", {"turn": turn, "step": 1, "_time": last}))
    events.append(("turn/end", {"turn": turn, "reason": {"kind": "completed"}, "_time": last + 1}))
    return events


def page_data_of(html_text: str) -> dict:
    """The JSON document a page embeds (base64 → inflate → JSON), as the browser reads it."""
    return json.loads(embedded_bytes(html_text))


def embedded_bytes(html_text: str) -> bytes:
    match = re.search(r'<script type="application/octet-stream" id="dshctl-data"[^>]*>([^<]*)</script>', html_text)
    assert match, "no embedded data"
    return zlib.decompress(base64.b64decode(match.group(1)))


def logs_to_compare() -> list[Path]:
    """Every sample log and every corpus log (the corpus when it is beside the checkout)."""
    logs = sorted(path for path in SAMPLES.glob("*.jsonl*"))
    if CORPUS.is_dir():
        logs += sorted(CORPUS.rglob("*.jsonl"))
    return logs
