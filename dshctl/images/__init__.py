"""``dshctl images``: list the image references of a session; extract and verify them from the store.

dsh never writes image bytes into a log. An ``image`` content block carries an ``ImageAttachmentRef``
(FORMAT §5.2: ``attachmentId`` = ``sha256:`` + hex digest of the normalized bytes, ``mediaType``,
``bytes``, ``width``, ``height``, ``name?``, ``originalDimensions?``); the bytes live in the attachment
store, ``<DSH_HOME>/attachments/v1/objects/<first 2 hex>/<64 hex>`` (§5.3), or in a web export as
``media/<attachmentId>.<ext>`` (§1.10).

* :mod:`.scan` finds the references of a log (:func:`scan_images`, :func:`scan_log` → :class:`ImageScan`);
* :mod:`.store` finds and reads the store, and probes image headers;
* :mod:`.extract` names, verifies and writes the objects.

Nothing read from a log is executed, fetched, or used as a path: an id must match
``sha256:[0-9a-f]{64}`` before it touches the filesystem, display names are reduced to a safe base name,
store objects are opened relative to the store directory without following symlinks, and output files
are created relative to the output directory with ``O_CREAT|O_EXCL|O_NOFOLLOW``, as a temporary file linked
to its name once whole (``--force``: renamed over the target, which replaces a symlink instead of following it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, UsageError
from ..options import ImagesOptions, chosen_log
from ..textsafe import visible_line
from .extract import (
    DEFAULT_TEMPLATE,
    FAILED,
    STATUSES,
    NameTemplate,
    extension_for,
    extract,
    object_problem,
    reference_problem,
    safe_base_name,
    verify,
)
from .scan import ID_PATTERN, ImageRef, ImageScan, Offload, scan_images, scan_log
from .store import MEDIA_EXTENSIONS, Store, default_store, detect_store, probe_image

__all__ = [
    "run_images",
    "scan_images",
    "scan_log",
    "ImageScan",
    "ImageRef",
    "Offload",
    "ID_PATTERN",
    "MEDIA_EXTENSIONS",
    "probe_image",
    "Store",
    "detect_store",
    "default_store",
    "NameTemplate",
    "DEFAULT_TEMPLATE",
    "safe_base_name",
    "extension_for",
    "object_problem",
    "reference_problem",
    "verify",
    "extract",
    "STATUSES",
    "FAILED",
    "UsageError",
]


def run_images(path: str | None, options: ImagesOptions) -> int:
    """The ``dshctl images`` command body; returns the exit status."""
    from ..stdio import warn

    chosen = detect_store(options.store, how=options.fields["store"].long) if options.store is not None else None
    if chosen is not None and path is None and not options.latest and options.out is None:
        return _store_step(chosen, options)
    from ..many import reading_path

    path = chosen_log(path, options)
    with reading_path("images", path, allowed=options.progress, color=options.color_when):
        scan = scan_images(path, on_warning=warn)
    for problem in scan.problems:
        warn(f"{scan.path}: {visible_line(problem, 300)}")
    if options.out is None:
        if chosen is not None:
            check_all(scan, chosen)
        _list_step(scan, output=options.output, color=options.colored, form=options.table_form, store=chosen)
        return EXIT_FINDINGS if chosen is not None and any(ref.status in FAILED for ref in scan.refs) else EXIT_OK
    if chosen is None:
        chosen = default_store(None if scan.log_file is None else Path(scan.log_file), archive=_held_archive(path))
    return _extract_step(scan, options, store=chosen)


def _held_archive(path: Any):
    """The export ZIP read from standard input that holds the log ``path`` names (``-``, ``-!member``), else
    None: its ``media/`` is the store."""
    from ..errors import DshctlError
    from ..source import as_ref

    try:
        return as_ref(path).archive
    except (DshctlError, TypeError):
        return None


# --------------------------------------------------------------------------------------------------
# Listing


ID_LEAST = 24
"""An attachment id is cut to no fewer characters while a column can be hidden: ``sha256:`` and 16 hex
digits, enough to tell images apart and find one in the store."""


def _list_columns() -> list:
    """The listing's columns, hidden on a narrow terminal in this order: offloaded, size, bytes, n,
    mediaType, turn/step, where, name; the attachment id is cut with "…" there, whole in a pipe. TSV
    gives machine values: ``turn`` and ``step``, ``width`` and ``height`` apart (:func:`_split_cells`);
    ``offloaded`` (true/false) and ``offloaded by`` (the ``image/offload`` event's seq, empty for none)
    always, where the other forms show ``yes`` or ``by seq N`` when anything was offloaded; with a store,
    ``stored`` true/false and the check's ``status`` word (``verified``, ``missing``, …)."""
    from ..tables import number, text

    return [number("seq"), number("n", drop=3), *_turn_step_columns(drop=5), text("where", drop=6),
            text("attachmentId", cut="end", least=ID_LEAST), text("mediaType", cut="end", least=10, drop=4), number("bytes", drop=2),
            *_size_columns(drop=1), text("name", cut="end", least=10, drop=7)]


_SHOWN = ("box", "plain")
"""The forms that show ``2/3`` and ``16×8`` as people read them; TSV has a column per value instead."""


def _turn_step_columns(drop: int) -> list:
    from ..tables import number

    return [number("turn/step", drop=drop, forms=_SHOWN), number("turn", forms=("tsv",)), number("step", forms=("tsv",))]


def _size_columns(drop: int) -> list:
    from ..tables import number

    return [number("size", drop=drop, forms=_SHOWN), number("width", forms=("tsv",)), number("height", forms=("tsv",))]


def _split_cells(shown: str, *values: Any) -> list:
    """A display cell (``2/3``, ``16×8``) and, for TSV only, each of its values as written (none: empty)."""
    from ..tables import Cell

    return [shown, *(Cell("", value if value is None or isinstance(value, (int, float)) else _cell(value))
                     for value in values)]


def _list_step(scan: ImageScan, *, output: str, color: bool, form: str = "auto", store: Store | None = None) -> None:
    """Without ``--out``: every reference, as a table, one JSON document or NDJSON records; with a
    ``store``, what it holds of each (:func:`check_all`)."""
    from ..output import emit
    from ..tables import Cell, number, print_table, text

    refs = scan.refs
    summary = scan.summary()

    def table() -> None:
        columns = _list_columns()
        marked = any(ref.offloaded for ref in refs)
        if marked:
            columns.append(text("offloaded", drop=0, forms=_SHOWN))
        columns += [text("offloaded", forms=("tsv",)), number("offloaded by", forms=("tsv",))]
        if store is not None:
            columns += [text("stored"), text("status", forms=("tsv",)), text("problem", cut="end", least=16, drop=8)]
        rows = []
        for ref in refs:
            row = [ref.seq, ref.n, *_split_cells(_turn_step(ref), ref.turn, ref.step), ref.where, _whole_id(ref),
                   _cell(ref.declared("mediaType")), _cell(ref.declared("bytes")),
                   *_split_cells(_dimensions(ref), ref.declared("width"), ref.declared("height")), _cell(ref.declared("name"))]
            if marked:
                row.append(_offload_mark(ref))
            row += [Cell("", ref.offloaded), Cell("", ref.offloaded_by)]
            if store is not None:
                row += [Cell(_stored(ref.status), ref.status == "verified"), Cell("", ref.status), _cell(ref.error or "")]
            rows.append(row)
        caption = f"{summary['references']} reference(s) to {summary['distinct']} image(s)"
        count_only = store is None and not (summary["offloaded"] or scan.offloads)  # else a finding: kept in a pipe
        if store is not None:
            held = sum(1 for ref in refs if ref.status == "verified")
            caption += f"; {held} held and verified by the store {_cell(str(store.path))}"
        if summary["offloaded"] or scan.offloads:
            caption += f"; {summary['offloaded']} offloaded ({len(scan.offloads)} image/offload event(s))"
        print_table(None, columns, rows, caption=caption, color=color, form=form, listing=count_only)

    checked = store is not None
    document = {"path": scan.path}
    if checked:
        document["store"] = store.to_json()
    emit(
        output,
        document=lambda: {**document, "images": [ref.to_json(extraction=checked) for ref in refs],
                          "offloads": [offload.to_json() for offload in scan.offloads], "summary": summary},
        records=lambda: (ref.to_json(extraction=checked) for ref in refs),
        table=table,
    )


def _stored(status: str | None) -> str:
    return "yes" if status == "verified" else status or ""


def check_all(scan: ImageScan, store: Store) -> None:
    """``--store`` without ``--out``: each reference's ``status`` says what the store holds of its image —
    ``verified`` (its bytes hash to the id and match what the reference says), or why not (``missing``,
    ``mismatch``, ``unsafe``, ``invalid-id``) in ``error``; nothing is written."""
    known: dict[tuple, tuple[str, str | None]] = {}
    try:
        for ref in scan.refs:
            digest = ref.hex_digest
            if digest is None:
                ref.status, ref.error = "invalid-id", "attachmentId does not match sha256:<64 lowercase hex>"
                continue
            claim = (digest, *(repr(ref.declared(k)) for k in ("bytes", "mediaType", "width", "height")))
            if claim not in known:
                status, data, error = store.read(digest, ref.declared("mediaType"))
                if status == "ok" and data is not None:
                    problem = verify(ref, digest, data)
                    status, error = ("mismatch", problem) if problem else ("verified", None)
                known[claim] = (status, error)
            ref.status, ref.error = known[claim]
    finally:
        store.close()



def _store_step(store: Store, options: ImagesOptions) -> int:
    """``--store DIR`` alone: every object of the store read, its SHA-256 checked against its name, its
    header probed; listed. Status 1 when one does not verify."""
    import hashlib

    from ..output import emit
    from ..tables import Cell, number, print_table, text

    objects = []
    try:
        for digest, media_type, shown in store.objects():
            status, data, error = store.read(digest, media_type)
            record: dict[str, Any] = {"attachmentId": f"sha256:{digest}", "name": shown, "status": status, "error": error,
                                      "bytes": None, "mediaType": None, "width": None, "height": None}
            if status == "ok" and data is not None:
                actual = hashlib.sha256(data).hexdigest()
                probed = probe_image(data)
                record.update(bytes=len(data), status="verified" if actual == digest else "mismatch",
                              error=None if actual == digest else f"SHA-256 of the object is {actual}, not its name's")
                if probed is not None:
                    record.update(mediaType=probed[0], width=probed[1], height=probed[2])
                elif record["status"] == "verified":
                    record.update(status="mismatch", error="not a PNG, JPEG, GIF or WebP image")
            objects.append(record)
    finally:
        store.close()
    bad = [record for record in objects if record["status"] != "verified"]
    summary = {"objects": len(objects), "verified": len(objects) - len(bad), "failed": len(bad)}

    def table() -> None:
        # one line a row: the id readable (ID_LEAST), its path in the store (the id again) cut first
        columns = [text("attachmentId", cut="end", least=ID_LEAST), text("status"), text("mediaType", drop=2),
                   number("bytes", drop=1), *_size_columns(drop=0), text("name / problem", cut="end", least=16, drop=3, forms=_SHOWN),
                   text("name", forms=("tsv",)), text("problem", forms=("tsv",))]
        rows = [[r["attachmentId"], r["status"], r["mediaType"] or "", Cell("" if r["bytes"] is None else f"{r['bytes']:,}", r["bytes"]),
                 *_split_cells("" if r["width"] is None else f"{r['width']}×{r['height']}", r["width"], r["height"]),
                 _cell(r["error"] or r["name"]), _cell(r["name"]), _cell(r["error"] or "")] for r in objects]
        caption = f"{len(objects)} object(s) in {_cell(str(store.path))}: {summary['verified']} verified" + (
            f", {len(bad)} not" if bad else "")
        print_table(None, columns, rows, caption=caption, color=options.colored, form=options.table_form)

    emit(options.output, document=lambda: {"store": store.to_json(), "objects": objects, "summary": summary},
         records=lambda: objects, table=table)
    if store.missing:
        from ..stdio import warn

        warn(store.missing)
        return EXIT_UNREADABLE
    return EXIT_FINDINGS if bad else EXIT_OK


# --------------------------------------------------------------------------------------------------
# Extraction


def _extract_columns() -> list:
    from ..tables import number, text

    return [number("seq"), number("n", drop=1), text("where", drop=0), text("attachmentId", cut="end", least=14, drop=2),
            text("status"), text("file / problem", cut="end", least=16, forms=_SHOWN), text("file", forms=("tsv",)),
            text("problem", forms=("tsv",))]


def _extract_step(scan: ImageScan, options: ImagesOptions, *, store: Store) -> int:
    """With ``--out``: extract, then the manifest of what became of every reference."""
    from ..output import emit
    from ..stdio import warn
    from ..tables import print_table

    refs = scan.refs
    output, out, color = options.output, options.out, options.colored
    extract_all(scan, options, store=store)
    if store.missing:
        warn(store.missing)
    counts = {status: 0 for status in STATUSES}
    for ref in refs:
        counts[ref.status] = counts.get(ref.status, 0) + 1

    def table() -> None:
        rows = [[ref.seq, ref.n, ref.where, _whole_id(ref), ref.status, _file_or_problem(ref), _written(ref), _cell(ref.error or "")]
                for ref in refs]
        parts = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
        caption = (f"{len(refs)} reference(s): {parts or 'nothing to extract'} → {_cell(str(out))} "
                   f"(store: {_cell(str(store.path))})")
        print_table(None, _extract_columns(), rows, caption=caption, color=color, form=options.table_form)

    emit(
        output,
        document=lambda: {"path": scan.path, "out": str(out), "store": store.to_json(),
                          "images": [ref.to_json(extraction=True) for ref in refs],
                          "offloads": [offload.to_json() for offload in scan.offloads],
                          "summary": {**scan.summary(), **counts}},
        records=lambda: (ref.to_json(extraction=True) for ref in refs),
        table=table,
    )
    failed = sum(counts[s] for s in FAILED)
    if failed:
        warn(f"{scan.path}: {failed} image(s) not extracted: "
             + ", ".join(f"{counts[s]} {s}" for s in STATUSES if s in FAILED and counts[s]))
        return EXIT_FINDINGS
    return EXIT_OK


def extract_all(scan: ImageScan, options: ImagesOptions, *, store: Store) -> None:
    """``--out DIR``: write the images of ``scan`` as ``options`` say; each reference's ``status`` says
    what became of it."""
    extract(scan.refs, store=store, out=options.out, template=options.template, force=options.force, all_refs=options.all,
            original=options.name_template is None)


# --------------------------------------------------------------------------------------------------
# Table cells


def _cell(value: Any, limit: int | None = None) -> str:
    """A log value for a table cell: one line, control characters as pictures (cut to ``limit`` only in
    captions: a table's cells are whole, and a terminal's table cuts its own). The table shows it
    literally (cells are never markup)."""
    return visible_line(value, limit)


def _whole_id(ref: ImageRef) -> str:
    """The attachment id as the log holds it (a terminal's table cuts it; a pipe gets it whole)."""
    return _cell(ref.attachment_id)


def _turn_step(ref: ImageRef) -> str:
    if ref.turn is None and ref.step is None:
        return ""
    return f"{'' if ref.turn is None else ref.turn}/{'' if ref.step is None else ref.step}"


def _dimensions(ref: ImageRef) -> str:
    """``width×height`` as the reference declares them (the ``size`` column)."""
    width, height = ref.declared("width"), ref.declared("height")
    if width is None and height is None:
        return ""
    return f"{_cell(width)}×{_cell(height)}"


def _offload_mark(ref: ImageRef) -> str:
    if ref.offloaded_by is not None:
        return "by seq " + str(ref.offloaded_by)
    return "yes" if ref.offloaded else ""


def _written(ref: ImageRef) -> str:
    """TSV's ``file``: the path of the file the reference's image is in (written, present or a
    duplicate's), as dshctl wrote it; empty when there is none (a duplicate of an image not written)."""
    return _cell(ref.path) if ref.path and ref.status in ("written", "present", "duplicate") and not ref.error else ""


def _file_or_problem(ref: ImageRef) -> str:
    """The written file's name, or why there is none."""
    if ref.path and ref.status in ("written", "present", "duplicate") and not ref.error:
        return _cell(os.path.basename(ref.path))
    return _cell(ref.error or "")
