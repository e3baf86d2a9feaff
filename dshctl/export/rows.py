"""One pass over one log for the exports: the stats fold, the image scan and any extra reader see every
event once, and the rows come out in batches as they become final.

The rows are the records of :mod:`dshctl.stats.records` — turns (:class:`TurnRecord`), settlements
(:class:`SettlementRecord`), tool calls (:class:`ToolCallRecord`), images (:class:`ImageRecord`) and,
at the end, the session (:class:`SessionRecord`) — with the join keys each table adds
(:data:`dshctl.export.schema.KEY_ORDER`). A sink receives them: the Parquet spool, or the OTLP builder.

A forked child's rows read before its cut are ``inherited``; the cut is the log's *last* tagged
``session/end-seed``, known only at the end, so a sink is told at the end how many rows of each table
came before it (:meth:`Sink.inherited_before`).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..jsvalues import safe_int
from ..stats.records import ImageRecord, SessionRecord

BATCH_ROWS = 2048
"""Rows are handed to the sink about this many at a time (a long log never holds all of them)."""


class Sink(Protocol):
    def rows(self, table: str, records: list, keys: dict) -> None: ...

    def session(self, record: SessionRecord, keys: dict) -> None: ...

    def inherited_before(self, counts: dict[str, int]) -> None: ...


def main_model(session: SessionRecord) -> str | None:
    """The route with most steps (then settlements; the first such in dshctl's order)."""
    best = None
    for entry in session.dshctl.models:
        if best is None or (entry.steps, entry.settlements) > (best.steps, best.settlements):
            best = entry
    return best.model if best is not None else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def image_record(ref) -> ImageRecord:
    """A scanned :class:`~dshctl.images.scan.ImageRef` as a typed row."""
    attachment = ref.attachment
    original = attachment.get("originalDimensions")
    original = original if isinstance(original, dict) else {}
    return ImageRecord(
        seq=ref.seq,
        line=ref.line,
        event_type=ref.type,
        turn=ref.turn,
        step=ref.step,
        carrier=ref.where,
        location=ref.at,
        n=ref.n,
        attachment_id=_str(attachment.get("attachmentId")),
        media_type=_str(attachment.get("mediaType")),
        bytes=safe_int(attachment.get("bytes")),
        width=safe_int(attachment.get("width")),
        height=safe_int(attachment.get("height")),
        name=_str(attachment.get("name")),
        original_width=safe_int(original.get("width")),
        original_height=safe_int(original.get("height")),
        offloaded=ref.offloaded,
        offloaded_by=ref.offloaded_by,
    )


class LogPass:
    """Read one opened log once and feed ``sink``. ``extra`` readers get every event too (``feed``)."""

    def __init__(self, log, sink: Sink, *, prices=None, extra: tuple = (), path: str | None = None, per_turn: bool = False):
        from ..images.scan import ImageScan, ImageScanner
        from ..stats import stats_fold

        self.log = log
        self.path = path if path is not None else log.display  # the rows' ``path`` (a dataset's key of the log)
        self.sink = sink
        self.extra = extra
        self.per_turn = per_turn  # hand rows over at every turn's end (the OTLP sink builds a turn at a time)
        self.fold = stats_fold(log, prices=prices, keep_turns=True, keep_settlements=True)
        self.images = ImageScanner(ImageScan(path=log.display))
        header = log.header
        self.keys = {"session_id": header.id, "parent_session_id": header.parentSession, "project": header.cwd}
        self.sent = {"turns": 0, "steps": 0, "tool_calls": 0, "images": 0}
        self.at_cut: dict[str, int] = {}
        self.turn_models: dict[Any, Any] = {}
        self.image_models: list = []

    def run(self) -> SessionRecord:
        from ..stats.results import folded_stats

        fold = self.fold
        feed = fold.feed
        scan = self.images.feed
        refs = self.images.scan.refs
        extra = [reader.feed for reader in self.extra]
        prefix = None
        pending = 0
        for event in self.log.events():
            feed(event)
            before = len(refs)
            scan(event)
            if len(refs) > before:
                self._place_images(before)
            for read in extra:
                read(event)
            if fold.prefix is not prefix:  # a cut: everything handed over so far was inherited
                prefix = fold.prefix
                self._drain()
                self.at_cut = dict(self.sent)
            elif self.per_turn and fold.turn_rows:
                self._drain()
            pending += 1
            if pending >= 256:
                pending = 0
                if len(fold.turn_rows) + len(fold.settlement_rows) + len(fold.tool_call_rows) >= BATCH_ROWS:
                    self._drain()
        fold.finish()
        self._drain()
        images = [_placed(image_record(ref), self.keys["session_id"], self.path) for ref in self.images.scan.refs]
        if images:
            keys = dict(self.keys)
            for record, model in zip(images, self.image_models):
                keys["model"] = model
                self.sink.rows("images", [record], dict(keys))
            self.sent["images"] = len(images)
        if any(self.at_cut.values()):
            self.sink.inherited_before(self.at_cut)
        session = folded_stats(self.log, fold).session
        session.path = self.path
        self.sink.session(session, {**self.keys, "model": main_model(session)})
        return session

    def _place_images(self, before: int) -> None:
        """The model of each new image's step: the open step's route when the image sits in it."""
        refs = self.images.scan.refs
        step = self.fold.current_step
        for ref in refs[before:]:
            same = step is not None and step.turn == ref.turn and step.step == ref.step
            self.image_models.append(step.route if same else None)

    def _drain(self) -> None:
        fold = self.fold
        sink = self.sink
        keys = self.keys
        settlements, fold.settlement_rows = fold.settlement_rows, []
        calls, fold.tool_call_rows = fold.tool_call_rows, []
        turns, fold.turn_rows = fold.turn_rows, []
        session_id, path = keys["session_id"], self.path
        if settlements:
            for row in settlements:
                if row.ended or row.attempt is None:
                    self.turn_models[row.turn] = row.model
            sink.rows("steps", [_placed(row, session_id, path) for row in settlements], keys)
            self.sent["steps"] += len(settlements)
        if calls:
            sink.rows("tool_calls", [_placed(row, session_id, path) for row in calls], keys)
            self.sent["tool_calls"] += len(calls)
        if turns:
            models = self.turn_models
            for row in turns:
                sink.rows("turns", [_placed(row, session_id, path)], {**keys, "model": models.get(row.turn)})
            self.sent["turns"] += len(turns)


def _placed(row, session_id: str | None, path: str):
    row.session = session_id
    row.path = path
    return row


