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
from pathlib import Path

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, OutputError, UsageError
from ..options.export import FORMATS, ExportOptions

INSTALL_HINT = "pip install 'dshctl[export]'"

__all__ = ["FORMATS", "ExportOptions", "ExportResult", "export_logs", "run_export", "require_duckdb"]


def require_duckdb(what: str) -> None:
    """Status 2 with one line when DuckDB is missing (it is an extra); never imported here."""
    import importlib.util

    if importlib.util.find_spec("duckdb") is None:
        raise UsageError(f"{what} needs DuckDB: {INSTALL_HINT}")


class ExportResult(msgspec.Struct, kw_only=True):
    """What one export did: logs read, left unchanged, removed (changed or pruned), and those missing
    from disk but still in the dataset (without ``--prune``); per table the rows written this run and in
    the whole dataset; the logs that could not be read."""

    out: str
    format: str
    read: int = 0
    unchanged: int = 0
    removed: int = 0
    missing: list[str] = []
    rows: dict[str, int] = {}
    dataset_rows: dict[str, int] = {}
    errors: list[tuple[str, str]] = []
    spans: int = 0

    @property
    def status(self) -> int:
        return EXIT_FINDINGS if self.errors else EXIT_OK


def export_logs(paths: list[str], options: ExportOptions) -> ExportResult:
    """Export the logs under ``paths`` (files, session directories, roots; default: the sessions root)."""
    if options.format == "parquet":
        return _parquet(list(paths), options, options.colored)
    return _otlp(list(paths), options, options.colored)


def _prices(options: ExportOptions):
    if options.no_cost:
        return None
    from ..stats.prices import load_prices

    table = load_prices(options.prices)
    return table if table.models else None


def _prices_digest(prices) -> str:
    import hashlib

    if prices is None:
        return "none"
    text = repr(sorted((name, [msgspec.structs.asdict(p) for p in entries]) for name, entries in prices.models.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _absolute(paths: list[str]) -> list[str]:
    """PATHs as absolute paths (a dataset names its logs so), session ids and ``-`` as given."""
    out = []
    for path in paths:
        expanded = os.path.expanduser(path)
        out.append(os.path.abspath(expanded) if path != "-" and os.path.exists(expanded) else path)
    return out


def _read_all(func, refs, options: ExportOptions, color: bool, result: ExportResult, warnings, *, single: bool):
    """Every log read by ``func`` (in workers when there are many): the results, errors recorded. The
    only log given being unreadable is an error (status 2), as in stats."""
    from ..many import map_logs
    from .parquet import located_message

    done = []
    for ref, outcome in map_logs(func, refs, jobs=options.jobs, label="export", color=options.color_when, progress=options.progress,
                                 streams=options.out == "-"):
        if isinstance(outcome, DshctlError):
            if single:
                raise outcome
            warnings.add(ref.display, located_message(outcome))
            result.errors.append((ref.display, outcome.message))
            continue
        for text in outcome.warnings:
            warnings.add(ref.display, text)
        done.append(outcome)
    return done


def _parquet(paths: list[str], options: ExportOptions, color: bool) -> ExportResult:
    from ..many import Warnings, resolve_many
    from . import parquet as P
    from .manifest import DatasetLock, read_manifest, write_manifest
    from .schema import TABLES, fingerprint

    require_duckdb("export --format parquet")
    directory = Path(os.path.expanduser(options.out)).absolute()
    manifest = read_manifest(directory)  # refuses a directory that is not a dataset, before any reading
    partition_by = _partitioning(options.partition_by, manifest)
    prices = _prices(options)
    digest = _prices_digest(prices)
    refs = resolve_many(_absolute(paths))
    if any(ref.path is None for ref in refs):
        raise UsageError("export --format parquet cannot read standard input: a dataset names each log by its path")
    result = ExportResult(out=str(directory), format="parquet")
    warnings = Warnings(verbose=options.verbose)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{directory}: cannot create the dataset directory: {exc.strerror or exc}") from None
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
        plan = P.plan(refs, manifest, prune=options.prune, rebuild=rebuild)
        result.unchanged = plan.kept
        result.missing = [path for path in plan.missing if path not in plan.drop]
        spool = P.spool_directory(directory)
        writer = P.Writer(directory, manifest, spool, partition_by)
        try:
            done = _read_all(P.reader_for(spool, prices, partition_by, plan.read), plan.read, options, color,
                             result, warnings, single=len(refs) == 1)
            result.read = len(done)
            result.removed = len([path for path in plan.drop if path not in {r.path for r in done}])
            writer.drop(plan.drop)
            writer.add(done)
            write_manifest(directory, manifest)
            writer.remove_superseded()
        finally:
            writer.close()
            shutil.rmtree(spool, ignore_errors=True)
        result.rows = {table: sum(r.rows.get(table, 0) for r in done) for table in TABLES}
        result.dataset_rows = {table: sum(entry.rows.get(table, 0) for entry in manifest.logs.values()) for table in TABLES}
    warnings.report()
    return result


def _partitioning(asked: str | None, manifest) -> str | None:
    if manifest is None:
        return asked
    if asked is not None and asked != manifest.partition_by:
        kept = manifest.partition_by or "nothing (not partitioned)"
        raise UsageError(f"--partition-by {asked}: this dataset is partitioned by {kept}; export into a new directory to change it")
    return manifest.partition_by


def _otlp(paths: list[str], options: ExportOptions, color: bool) -> ExportResult:
    import tempfile

    from ..many import Warnings, resolve_many
    from . import otlp as O

    out = options.out
    to_stdout = out == "-"
    target = Path(os.path.expanduser(out)) if not to_stdout else None
    if target is not None and target.exists() and not options.force:
        raise UsageError(f"{target}: exists (--force overwrites it)")
    if target is not None and target.is_dir():
        raise UsageError(f"{target}: is a directory (--out names the FILE.jsonl to write)")
    refs = resolve_many(paths)
    result = ExportResult(out=out, format="otlp")
    warnings = Warnings(verbose=options.verbose)
    spool = Path(tempfile.mkdtemp(prefix="dshctl-otlp-"))
    try:
        done = _read_all(O.reader_for(spool, _prices(options), options.include_content, refs), refs, options, color,
                         result, warnings, single=len(refs) == 1)
        result.read = len(done)
        if to_stdout:
            result.spans = O.write_traces(done, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                with open(temporary, "wb") as handle:
                    result.spans = O.write_traces(done, handle)
                os.replace(temporary, target)
            except OSError as exc:
                try:
                    temporary.unlink()
                except OSError:
                    pass
                raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    warnings.report()
    return result


def run_export(paths: list[str], options: ExportOptions) -> int:
    """The ``dshctl export`` command: export, then one summary line on stderr. Returns the exit status."""
    from ..output import note

    result = export_logs(paths, options)
    if options.quiet:
        return result.status
    if result.format == "parquet":
        tables = " · ".join(f"{name} {count:,}" for name, count in result.dataset_rows.items())
        missing = f"; {len(result.missing):,} no longer on disk (--prune removes their rows)" if result.missing else ""
        failed = f"; {len(result.errors):,} unreadable" if result.errors else ""
        note(f"{result.out}: {result.read:,} logs read, {result.unchanged:,} unchanged, {result.removed:,} removed"
             f"{failed}{missing}; the dataset holds {tables}")
    elif result.out != "-":
        failed = f"; {len(result.errors):,} unreadable" if result.errors else ""
        note(f"{result.out}: {result.read:,} sessions, {result.spans:,} spans{failed}")
    return result.status
