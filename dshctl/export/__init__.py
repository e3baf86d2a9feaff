"""``dshctl export``: the sessions as Parquet tables (a dataset kept current incrementally) or as
OpenTelemetry traces (OTLP/JSON).

Library use::

    import dshctl

    result = dshctl.export(["~/.dsh/sessions"], dshctl.ExportOptions(format="parquet", out="sessions-dataset"))
    result.read, result.unchanged, result.rows["steps"]

The tables and their columns: :mod:`dshctl.export.schema` (``docs/schema.md``); the Parquet layout and
the incremental rules: :mod:`dshctl.export.parquet`; the trace mapping: :mod:`dshctl.export.otlp`.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import closing
from pathlib import Path
from typing import BinaryIO

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, LogFailure, OutputError, UsageError
from ..options.export import FORMATS, ExportOptions

INSTALL_HINT = "pip install 'dshctl[export]'"

__all__ = ["FORMATS", "ExportOptions", "ExportResult", "export_logs", "report_logs", "run_export", "require_duckdb"]


def require_duckdb(what: str) -> None:
    """Status 2 with one line when DuckDB is missing (it is an extra); never imported here."""
    import importlib.util

    if importlib.util.find_spec("duckdb") is None:
        raise UsageError(f"{what} needs DuckDB: {INSTALL_HINT}")


class ExportResult(msgspec.Struct, kw_only=True):
    """What one export did: logs read, left unchanged, removed (changed or pruned), and those missing
    from disk but still in the dataset (without ``--prune``); per table the rows written this run and in
    the whole dataset; OTLP: the spans written. ``failures``: the logs that could not be read
    (:class:`~dshctl.errors.LogFailure`, skipped); ``warnings``: what reading the others found, as
    ``(path, text)``. Nothing is written to the terminal: the command tells these (:func:`report_logs`)."""

    out: str
    format: str
    read: int = 0
    unchanged: int = 0
    removed: int = 0
    missing: list[str] = []
    rows: dict[str, int] = {}
    dataset_rows: dict[str, int] = {}
    spans: int = 0
    outside: int = 0
    """Logs left unread: their sessions are outside ``--since`` / ``--until`` (a dataset keeps any rows
    of theirs that an earlier run wrote)."""
    created: str | None = None
    """Parquet: the outermost directory this run made (the dataset's or an ancestor), else None."""
    failures: list[LogFailure] = []
    warnings: list[tuple[str, str]] = []

    @property
    def status(self) -> int:
        return EXIT_FINDINGS if self.failures else EXIT_OK


def export_logs(paths: list[str], options: ExportOptions, *, progress: bool | str = False, stdout: BinaryIO | None = None) -> ExportResult:
    """Export the logs under ``paths`` (files, session directories, roots; default: the sessions root).
    ``progress``: a progress bar on a terminal's stderr, labelled with the command's name (True:
    ``export``; ``sql`` names itself: the user typed sql); ``stdout``: where ``--out -``
    writes (the command's standard output; a program names a file)."""
    if options.format == "parquet":
        return _parquet(list(paths), options, progress)
    return _otlp(list(paths), options, progress, stdout)


def report_logs(failures: list[LogFailure], warnings: list[tuple[str, str]], *, verbose: bool) -> None:
    """What reading many logs found, on stderr as stats tells it: the logs that could not be read, then
    the warnings (one line per kind, or each with ``verbose``)."""
    from ..many import Warnings
    from .parquet import located_message

    told = Warnings(verbose=verbose)
    for failure in failures:
        told.add(failure.path, located_message(failure.error))
    for path, text in warnings:
        told.add(path, text)
    told.report()


def _prices(options: ExportOptions):
    if options.no_cost:
        return None
    from ..stats.prices import load_prices

    table = load_prices(options.prices)
    return table if table.models else None


def prices_digest(prices) -> str:
    """A digest of the whole table in force, which the costs depend on: its models' entries, the providers
    it maps dsh's to and its aliases (a dataset re-exports every log when it changes)."""
    import hashlib

    if prices is None:
        return "none"
    table = {"models": prices.models, "providers": prices.providers, "aliases": prices.aliases}
    return hashlib.sha256(msgspec.json.encode(table, order="sorted")).hexdigest()[:16]


def _absolute(paths: list[str]) -> list[str]:
    """PATHs as absolute paths (a dataset names its logs so), session ids and ``-`` as given."""
    out = []
    for path in paths:
        expanded = os.path.expanduser(path)
        out.append(os.path.abspath(expanded) if path != "-" and os.path.exists(expanded) else path)
    return out


def _read_all(func, refs, options: ExportOptions, progress: bool | str, result: ExportResult, *, single: bool):
    """Every log read by ``func`` (in workers when there are many): the results; the failures and
    warnings recorded in ``result``. The only log given being unreadable is an error (status 2), as in
    stats."""
    from ..many import map_logs

    done = []
    label = progress if isinstance(progress, str) else "export"
    with closing(map_logs(func, refs, jobs=options.jobs, progress=bool(progress) and options.progress, label=label,
                             color=options.color_when, streams=options.out == "-")) as mapped:
        for ref, outcome in mapped:
            if isinstance(outcome, DshctlError):
                if single:
                    raise outcome
                result.failures.append(LogFailure(ref.display, outcome))
                continue
            if outcome is None:  # standard input, read: its session is outside --since / --until
                result.outside += 1
                continue
            result.warnings.extend((ref.display, text) for text in outcome.warnings)
            done.append(outcome)
    return done


def _parquet(paths: list[str], options: ExportOptions, progress: bool | str) -> ExportResult:
    from ..many import resolve_many
    from .manifest import read_manifest

    require_duckdb("export --format parquet")
    directory = Path(os.path.expanduser(options.out)).absolute()
    manifest = read_manifest(directory)  # refuses a directory that is not a dataset, before any reading
    partition_by = _partitioning(options.partition_by, manifest)
    prices = _prices(options)
    digest = prices_digest(prices)
    refs = resolve_many(_absolute(paths))
    if any(ref.path is None for ref in refs):
        raise UsageError("export --format parquet cannot read standard input: a dataset names each log by its path")
    result = ExportResult(out=str(directory), format="parquet")
    named = {ref.location for ref in refs}
    refs = _in_window(refs, options, result)
    left_out = named - {ref.location for ref in refs}  # counted as outside already
    created = _first_missing(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{directory}: cannot create the dataset directory: {exc.strerror or exc}") from None
    try:
        _fill(directory, refs, options, progress, partition_by, digest, prices, result, left_out)
    except BaseException:
        if created is not None:  # a run that failed leaves no new directory behind
            shutil.rmtree(created, ignore_errors=True)
        raise
    result.created = None if created is None else str(created)
    return result


def _in_window(refs: list, options: ExportOptions, result: ExportResult) -> list:
    """The logs whose sessions ``--since`` / ``--until`` keep (their header's ``createdAt``, as stats
    reads it), chosen before the incremental plan, so the rows of a log outside are neither read nor
    dropped; standard input is checked as it is read (:func:`~dshctl.export.otlp.trace_log`)."""
    kept = [ref for ref in refs if not options.window.excludes(ref)]
    result.outside += len(refs) - len(kept)
    return kept


def _first_missing(directory: Path) -> Path | None:
    """The outermost directory of ``directory`` (itself or an ancestor) that does not exist yet."""
    missing = None
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def _fill(directory: Path, refs, options: ExportOptions, progress: bool | str, partition_by, digest, prices,
          result: ExportResult, left_out: set[str] = frozenset()) -> None:
    from . import parquet as P
    from .manifest import DatasetLock, read_manifest, write_manifest
    from .schema import TABLES, fingerprint

    with DatasetLock(directory):
        manifest = read_manifest(directory)  # again, now that no other export can change it
        P.remove_stale_spools(directory)
        P.remove_strays(directory, manifest)
        rebuild = manifest is not None and (manifest.fingerprint != fingerprint() or manifest.prices != digest)
        if manifest is None:
            manifest = P.new_manifest(partition_by, digest)
            write_manifest(directory, manifest)  # from now on DIR is a dataset, even if this run fails
        elif rebuild:
            manifest.fingerprint, manifest.prices, manifest.schema = fingerprint(), digest, P.SCHEMA
        broken = P.broken_logs(directory, manifest)
        plan = P.plan(refs, manifest, prune=options.prune, rebuild=rebuild, broken=broken,
                      window=options.window if options.window.bounded else None)
        result.outside += len([path for path in plan.outside if path not in left_out])
        result.unchanged = plan.kept
        result.missing = [path for path in plan.missing if path not in plan.drop]
        spool = P.spool_directory(directory)
        writer = P.Writer(directory, manifest, spool, partition_by)
        try:
            done = _read_all(P.reader_for(spool, prices, partition_by, plan.read), plan.read, options, progress,
                             result, single=len(refs) == 1)
            result.read = len(done)
            result.removed = len([path for path in plan.drop if path not in {r.path for r in done}])
            writer.drop(plan.drop)
            writer.add(done)
            write_manifest(directory, manifest)
            writer.remove_superseded()
            if broken:
                P.remove_strays(directory, manifest)  # the files left of the broken parts
        finally:
            writer.close()
            shutil.rmtree(spool, ignore_errors=True)
        result.rows = {table: sum(r.rows.get(table, 0) for r in done) for table in TABLES}
        result.dataset_rows = {table: sum(entry.rows.get(table, 0) for entry in manifest.logs.values()) for table in TABLES}


def _partitioning(asked: str | None, manifest) -> str | None:
    if manifest is None:
        return asked
    if asked is not None and asked != manifest.partition_by:
        kept = manifest.partition_by or "nothing (not partitioned)"
        raise UsageError(f"--partition-by {asked}: this dataset is partitioned by {kept}; export into a new directory to change it")
    return manifest.partition_by


def _otlp(paths: list[str], options: ExportOptions, progress: bool | str, stdout: BinaryIO | None) -> ExportResult:
    import tempfile
    from contextlib import nullcontext

    from ..files import new_binary_file
    from ..many import resolve_many
    from . import otlp as O

    out = options.out
    if out == "-" and stdout is None:
        raise UsageError("out '-' is the command line's standard output: a program names the FILE.jsonl to write")
    target = Path(os.path.expanduser(out)) if out != "-" else None
    refs = resolve_many(paths)
    if target is not None:
        _refuse_the_logs_themselves(target, refs)
    result = ExportResult(out=out, format="otlp")
    refs = _in_window(refs, options, result)
    spool = Path(tempfile.mkdtemp(prefix="dshctl-otlp-"))
    try:
        # the file is refused (it exists, without --force) before any log is read; it takes its name at the end
        with (new_binary_file(target, force=options.force) if target is not None else nullcontext(stdout)) as handle:
            done = _read_all(O.reader_for(spool, _prices(options), options.include_content, refs, options.window), refs, options, progress,
                             result, single=len(refs) == 1)
            result.read = len(done)
            result.spans = O.write_traces(done, handle)
            handle.flush()
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    return result


def _refuse_the_logs_themselves(target: Path, refs) -> None:
    """``--out`` may end in .jsonl, so it can name a log being exported: dshctl never writes to a log it
    reads, not even with ``--force``."""
    if not os.path.lexists(target):
        return
    for ref in refs:
        try:
            same = ref.path is not None and os.path.samefile(target, ref.path)
        except OSError:  # a log that cannot be stat'ed (reading it reports why), or a dangling --out
            same = False
        if same:
            raise UsageError(f"--out {target} is a log being exported; dshctl never writes to a log it reads")


def run_export(paths: list[str], options: ExportOptions) -> int:
    """The ``dshctl export`` command: export, the logs' warnings, then one summary line on stderr.
    Returns the exit status."""
    from ..humanize import count as counted
    from ..stdio import note

    result = export_logs(paths, options, progress=True, stdout=sys.stdout.buffer)
    report_logs(result.failures, result.warnings, verbose=options.verbose)
    if result.created is not None and result.failures and not result.read:
        shutil.rmtree(result.created, ignore_errors=True)  # every log unreadable: nothing exported, no dataset made
    if options.quiet:  # no summary note; the logs' failures and warnings are still told
        return result.status
    failed = f"; {len(result.failures):,} unreadable" if result.failures else ""
    failed += f"; {counted(result.outside, 'log')} outside --since/--until" if result.outside else ""
    if result.format == "parquet":
        tables = " · ".join(f"{name} {count:,}" for name, count in result.dataset_rows.items())
        missing = f"; {len(result.missing):,} no longer on disk (--prune removes their rows)" if result.missing else ""
        if os.path.isdir(result.out):
            note(f"{result.out}: {counted(result.read, 'log')} read, {result.unchanged:,} unchanged, {result.removed:,} removed"
                 f"{failed}{missing}; the dataset holds {tables}")
        else:
            note(f"{result.out}: nothing exported{failed}; no dataset written")
    elif result.out != "-":
        note(f"{result.out}: {counted(result.read, 'session')}, {counted(result.spans, 'span')}{failed}")
    return result.status
