"""Finding the image references of a log: every ``image`` block, where it sits, and the ``image/offload``
marks that apply to it.

Where references are looked for (every event, in log order):

* ``data.content``, ``data.message.content`` and ``data.inserted[].content`` — dsh's own reachability
  rule (§5.4), which covers ``user/message``, ``system/message``, ``developer/message``,
  ``assistant/message`` content, ``tool/result`` in both shapes (v0–v3 wrapper, v4 direct content,
  §2.10.2), ``agent/inbox/spliced`` and ``tool/code-dispatch`` / ``tool/ptc-dispatch``;
* ``compaction/summary.summary`` and ``session/title-llm-request.messages[].content`` (beyond dsh's rule);
* the ``block-end`` chunks of every ``assistant/message`` / ``assistant/attempt`` stream, read with
  :func:`dshctl.stream.raw_chunks` — runs are never expanded (block-end chunks are never packed, §4.3).

Inside a content array the walk is depth-first, pre-order, and descends into any block that has a
``content`` array (``tool-result`` and unknown/``plugin:`` kinds). ``n`` is the 0-based occurrence index
of an image block within its event, in that order, so for a user message or tool result it equals the
depth-first image index that ``image/offload`` targets use (§2.10.8).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterator

import msgspec

from ..turns import Position

if TYPE_CHECKING:
    from ..reader import Log
    from ..source import LogRef

__all__ = ["ID_PATTERN", "MAX_NESTING", "ImageRef", "Offload", "ImageScan", "ImageScanner", "scan_log", "scan_images"]

ID_PATTERN = re.compile(r"sha256:([0-9a-f]{64})")
"""dsh's local-store id pattern (``packages/attachment/attachment-local/src/store.ts``); use fullmatch."""

MAX_NESTING = 64
"""Deepest nested ``content`` array followed inside one carrier."""

_SETTLEMENT_WHERE = {"assistant/message": "assistant-stream", "assistant/attempt": "attempt-stream"}
_CONTENT_WHERE = {
    "user/message": "user",
    "tool/result": "tool-result",
    "system/message": "system",
    "developer/message": "developer",
    "assistant/message": "assistant-content",
    "assistant/attempt": "attempt-content",
    "tool/code-dispatch": "code-dispatch",
    "tool/ptc-dispatch": "code-dispatch",
}
_OFFLOAD_TARGETS = frozenset({"user/message", "tool/result"})


class ImageRef(msgspec.Struct):
    """One occurrence of an image reference in a log. ``status``, ``path`` and ``error`` are filled by
    :func:`dshctl.images.extract.extract`."""

    seq: int
    line: int
    type: str
    turn: int | None
    step: int | None
    where: str
    at: str
    """Location inside the event's ``data``: ``content[1]``, ``message.content[0].content[2]``,
    ``inserted[0].content[1]``, ``stream.block-end[3].block`` (the 4th block-end chunk) …"""
    n: int
    attachment: dict
    """The ``ImageAttachmentRef`` as written (FORMAT §5.2), unchecked."""
    offload_index: int | None = None
    offloaded: bool = False
    offloaded_by: int | None = None
    status: str | None = None
    path: str | None = None
    error: str | None = None

    def declared(self, key: str) -> Any:
        """What the reference says of its image: ``declared("bytes")``, ``declared("mediaType")`` …"""
        return self.attachment.get(key)

    @property
    def attachment_id(self) -> Any:
        return self.attachment.get("attachmentId")

    @property
    def hex_digest(self) -> str | None:
        """The 64 hex digits of a well-formed ``sha256:`` id, else ``None``: the only form of an id that
        ever becomes part of a file name."""
        value = self.attachment.get("attachmentId")
        if isinstance(value, str):
            match = ID_PATTERN.fullmatch(value)
            if match is not None:
                return match.group(1)
        return None

    def to_json(self, *, extraction: bool) -> dict[str, Any]:
        attachment = self.attachment
        row: dict[str, Any] = {
            "seq": self.seq,
            "line": self.line,
            "type": self.type,
            "turn": self.turn,
            "step": self.step,
            "where": self.where,
            "at": self.at,
            "n": self.n,
            "attachmentId": attachment.get("attachmentId"),
            "mediaType": attachment.get("mediaType"),
            "bytes": attachment.get("bytes"),
            "width": attachment.get("width"),
            "height": attachment.get("height"),
            "name": attachment.get("name"),
            "originalDimensions": attachment.get("originalDimensions"),
            "offloaded": self.offloaded,
            "offloadedBy": self.offloaded_by,
        }
        if extraction:
            row["status"] = self.status
            row["path"] = self.path
            row["error"] = self.error
        return row


class Offload(msgspec.Struct):
    """One ``image/offload`` event: its seq and its ``targets`` as written."""

    seq: int
    targets: list

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "targets": self.targets}


class ImageScan(msgspec.Struct):
    """The image references of one log, in log order, with ``image/offload`` marks applied."""

    path: str
    """The log as shown (``LogRef.display``)."""
    log_file: str | None = None
    """The log's file path; ``None`` for standard input."""
    refs: list[ImageRef] = []
    offloads: list[Offload] = []
    problems: list[str] = []
    """What could not be read as a reference or an offload, one line each (``seq N: …``)."""

    def summary(self) -> dict[str, Any]:
        distinct = {ref.attachment_id for ref in self.refs if isinstance(ref.attachment_id, str)}
        return {
            "references": len(self.refs),
            "distinct": len(distinct),
            "offloaded": sum(1 for ref in self.refs if ref.offloaded),
            "offloadEvents": len(self.offloads),
        }


def scan_images(source: str | os.PathLike | LogRef, *, on_warning: Callable[[str], None] | None = None) -> ImageScan:
    """Open one log (a path, a session directory, ``-``, or a :class:`~dshctl.source.LogRef`) and scan it
    with :func:`scan_log`. Raises :class:`~dshctl.errors.DshctlError` when the log cannot be read."""
    from ..reader import open_log

    log = open_log(source, on_warning=on_warning)
    return scan_log(log)


def _walk(content: Any, at: str, *, countable: bool) -> Iterator[tuple[str, dict, bool]]:
    """Image blocks of a content array, depth-first pre-order: ``(at, block, dsh-countable)``.

    ``dsh-countable`` is true while the path descends only through ``tool-result`` blocks — the images
    dsh's ``image/offload`` indexes count (``project-message.ts`` visits image and tool-result blocks).
    """
    if not isinstance(content, list):
        return
    stack: list[tuple[Iterator[tuple[int, Any]], str, bool]] = [(iter(enumerate(content)), at, countable)]
    while stack:
        items, base, counted = stack[-1]
        for i, block in items:
            if not isinstance(block, dict):
                continue
            here = f"{base}[{i}]"
            kind = block.get("type")
            if kind == "image":
                yield here, block, counted
                continue
            inner = block.get("content")
            if isinstance(inner, list) and len(stack) < MAX_NESTING:
                stack.append((iter(enumerate(inner)), here + ".content", counted and kind == "tool-result"))
                break
        else:
            stack.pop()


def _carriers(event) -> Iterator[tuple[str, str, Any, bool]]:
    """``(where, at, content array, offload-indexed)`` for every content position of one event."""
    data = event.data
    if not isinstance(data, dict):
        return
    kind = event.type
    where = _CONTENT_WHERE.get(kind, "other")
    targetable = kind in _OFFLOAD_TARGETS
    if "content" in data:
        yield where, "content", data["content"], targetable and kind == "user/message"
    message = data.get("message")
    if isinstance(message, dict) and "content" in message:
        yield where, "message.content", message["content"], targetable and kind == "tool/result"
    inserted = data.get("inserted")
    if isinstance(inserted, list):
        for i, item in enumerate(inserted):
            if isinstance(item, dict):
                yield "inbox", f"inserted[{i}].content", item.get("content"), False
    if kind == "compaction/summary":
        yield "compaction-summary", "summary", data.get("summary"), False
    elif kind == "session/title-llm-request":
        messages = data.get("messages")
        if isinstance(messages, list):
            for i, item in enumerate(messages):
                if isinstance(item, dict):
                    yield "title-request", f"messages[{i}].content", item.get("content"), False


def _block_ends(event) -> Iterator[dict]:
    """The ``block-end`` chunks of a settlement's stream, never expanding a run."""
    from .. import stream  # looked up at call time: tests watch stream.raw_chunks

    if event.stream is not None:
        yield from stream.raw_chunks(event.stream, "block-end")
        return
    # A stream that did not decode into typed records stays as written in data["stream"] (the reader
    # notes it); its raw records can still be read one by one, runs untouched.
    data = event.data
    raw = data.get("stream") if isinstance(data, dict) else None
    if isinstance(raw, list):
        for record in raw:
            if isinstance(record, dict) and record.get("type") == "chunk":
                chunk = record.get("chunk")
                if isinstance(chunk, dict) and chunk.get("type") == "block-end":
                    yield chunk


def scan_log(log: Log) -> ImageScan:
    """Every image reference of one opened log, in log order, with ``image/offload`` marks applied."""
    scanner = ImageScanner(ImageScan(path=log.display, log_file=None if log.ref.path is None else str(log.ref.path)))
    for event in log.events():
        scanner.feed(event)
    return scanner.scan


class ImageScanner:
    """:func:`scan_log` one event at a time (``feed`` each event in log order), for readers that make
    one pass for several purposes (``dshctl export``)."""

    def __init__(self, scan: ImageScan):
        self.scan = scan
        self.position = Position()
        self.by_target: dict[int, tuple[str, list[ImageRef], int]] = {}

    def feed(self, event) -> None:
        scan = self.scan
        kind = event.type
        event_turn, event_step = self.position.place(event)
        n = 0
        offload_count = 0
        refs_here: list[ImageRef] = []

        def take(where: str, at: str, block: dict, offload_index: int | None) -> None:
            """One image block of this event: a reference, or a problem when it has no attachment."""
            nonlocal n
            attachment = block.get("attachment")
            if not isinstance(attachment, dict):
                scan.problems.append(f"seq {event.seq}: image block without an attachment object at {at}")
            else:
                ref = ImageRef(
                    seq=event.seq,
                    line=event.line,
                    type=kind,
                    turn=event_turn,
                    step=event_step,
                    where=where,
                    at=at,
                    n=n,
                    attachment=attachment,
                    offload_index=offload_index,
                    offloaded=block.get("offloaded") is True,
                )
                refs_here.append(ref)
            n += 1

        for where, base, content, indexed in _carriers(event):
            for at, block, countable in _walk(content, base, countable=indexed):
                index = None
                if indexed and countable:
                    index = offload_count
                    offload_count += 1
                take(where, at, block, index)
        if kind in _SETTLEMENT_WHERE:
            where = _SETTLEMENT_WHERE[kind]
            for k, chunk in enumerate(_block_ends(event)):
                for at, block, _ in _walk([chunk.get("block")], f"stream.block-end[{k}].block", countable=False):
                    take(where, at.replace(".block[0]", ".block", 1), block, None)
        if kind in _OFFLOAD_TARGETS:
            self.by_target[event.seq] = (kind, refs_here, offload_count)
        elif kind == "image/offload":
            _apply_offload(event, self.by_target, scan)
        scan.refs.extend(refs_here)


def _apply_offload(event, by_target: dict, scan: ImageScan) -> None:
    data = event.data if isinstance(event.data, dict) else {}
    targets = data.get("targets")
    if not isinstance(targets, list):
        scan.problems.append(f"seq {event.seq}: image/offload without a targets list")
        return
    scan.offloads.append(Offload(seq=event.seq, targets=targets))
    for target in targets:
        seq = target.get("seq") if isinstance(target, dict) else None
        indexes = target.get("imageIndexes") if isinstance(target, dict) else None
        if not isinstance(seq, int) or not isinstance(indexes, list):
            scan.problems.append(f"seq {event.seq}: image/offload target is not {{seq, imageIndexes}}")
            continue
        entry = by_target.get(seq)
        if entry is None:
            scan.problems.append(f"seq {event.seq}: image/offload names seq {seq}, not an earlier user message or tool result")
            continue
        _, refs, count = entry
        by_index = {ref.offload_index: ref for ref in refs if ref.offload_index is not None}
        for index in indexes:
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                scan.problems.append(f"seq {event.seq}: image/offload names image {index!r} of seq {seq}, which has {count}")
                continue
            ref = by_index.get(index)
            if ref is not None:  # None: an image block without an attachment object
                ref.offloaded = True
                ref.offloaded_by = event.seq
