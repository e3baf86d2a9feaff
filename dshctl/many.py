"""Reading many logs: resolve several PATH arguments, then map a per-log function over them,
in worker processes when there are many, with a progress bar on a terminal's stderr
(:mod:`dshctl.progress`).

A log that cannot be read yields its :class:`~dshctl.errors.DshctlError` in place of a
result; the caller reports it, skips it and sets the exit status.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator, TypeVar

from .errors import DshctlError
from .source import LogRef, resolve_named, sessions_root

R = TypeVar("R")

PARALLEL_THRESHOLD = 8
"""Fewer logs than this are read in-process: worker start-up would cost more than it saves."""


def resolve_many(paths: list) -> list[LogRef]:
    """Every log named by ``paths`` (files, session dirs, roots, ``-``, or :class:`LogRef` as resolved);
    the default sessions root when none is given. Each must hold a log. Duplicates (the same file reached
    twice) are read once."""
    specs = paths or [str(sessions_root())]
    return unique_refs(ref for spec in specs for ref in ([spec] if isinstance(spec, LogRef) else resolve_named(spec)))


def project_refs(refs: list[LogRef], project: str | None, paths: list | None = None) -> list[LogRef]:
    """The logs of ``refs`` stored under project ``project``'s directory (``--project``, as dsh groups
    sessions: :func:`dshctl.source.in_project`); all of them without a project. None left is an error."""
    from .errors import SourceError
    from .source import in_project, project_dir_name

    if project is None:
        return refs
    kept = [ref for ref in refs if ref.path is not None and ref.member is None and in_project(ref.path, project)]
    if not kept:
        where = ", ".join(str(path) for path in paths) if paths else str(sessions_root())
        raise SourceError(f"no session of project {project} (stored under {project_dir_name(project)})", file=where)
    return kept


def unique_refs(refs) -> list[LogRef]:
    """The one rule for a file reached twice (a symlink, a path named twice): it is read once, where
    it is first reached."""
    unique: list[LogRef] = []
    seen: set = set()
    for ref in refs:
        key = _file_identity(ref)
        if key not in seen:
            seen.add(key)
            unique.append(ref)
    return unique


def _file_identity(ref: LogRef):
    """What makes two refs the same file: device and inode (one stat, where resolving the path costs a
    stat per component: 90 ms over 1,200 sessions); the resolved path when the file cannot be stat'ed."""
    member = ref.member.name if ref.member is not None else None  # the logs of one export ZIP
    if ref.path is None:
        return "-", member  # standard input: its log, or the members of the ZIP it held
    try:
        status = os.stat(ref.path)
    except OSError:
        return ref.path.resolve(), member
    return status.st_dev, status.st_ino, member


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _result_or_error(func: Callable[[LogRef], R], ref: LogRef) -> R | DshctlError:
    try:
        return func(ref)
    except DshctlError as exc:
        return exc.located(file=ref.display)


def reading_path(label: str, path: Any, *, allowed: bool = True, streams: bool = False, color: Any = "auto"):
    """:func:`dshctl.progress.reading` for a command that reads the one log ``path`` names (a path, ``-`` or a
    :class:`~dshctl.source.LogRef`); a path that does not resolve is left to the reading to report."""
    from .errors import DshctlError
    from .progress import reading
    from .source import as_ref

    try:
        refs = [as_ref(path)] if allowed else []
    except (DshctlError, TypeError):
        refs = []
    return reading(label, refs, allowed=allowed and bool(refs), streams=streams, color=color)


def map_logs(
    func: Callable[[LogRef], R],
    refs: list[LogRef],
    *,
    jobs: int | None = None,
    progress: bool = True,
    label: str = "reading",
    color: bool | str = "auto",
    streams: bool = False,
    until_output: bool = False,
    parts: bool = False,
) -> Iterator[tuple[LogRef, R | DshctlError]]:
    """``(ref, func(ref) or the error)`` for every ref, in the order of ``refs``.

    Many logs are read in worker processes, in batches of about :data:`BATCH_BYTES` (big logs first);
    ``func`` must then be picklable (a module-level function or a partial of one).

    ``progress``: a bar may be shown on a terminal's standard error (:func:`dshctl.progress.reading`:
    after a second, bytes and logs done), coloured as ``--color`` says (``color``: its value, or a
    bool); ``streams``: the caller writes its output as the results come (no bar over a terminal's
    output; ``until_output``: but one until the output begins, :func:`dshctl.progress.output_begins`).

    ``parts``: ``func(ref)`` yields a log's result in parts, and each part is a pair of its own (an error
    after some parts ends that log's pairs). In-process the parts come as the log is read, so a caller
    that stops (a closed pipe) stops the reading of a big log too; a worker sends all of a log's at once.

    Its caller closes it when it stops (``with contextlib.closing(map_logs(...))``; every caller here does,
    and so does each caller of theirs that holds their generator): closing ends the workers and the
    progress meter. Left suspended, as the frames of a traceback a library caller keeps would leave it, its
    meter would stay the process's, and a later reading would count into it.
    """
    from .progress import reading

    from .progress import log_size

    jobs = default_jobs() if jobs is None else max(1, jobs)
    sizes = [log_size(ref) for ref in refs]  # one stat a log: the bar's total, the batches, each log done
    batches = _plan_batches(refs, jobs, sizes) if jobs > 1 and len(refs) >= PARALLEL_THRESHOLD else []
    with reading(label, refs, allowed=progress, streams=streams, until_output=until_output, color=color, sizes=sizes) as meter:
        if len(batches) < 2:
            yield from _map_in_process(func, refs, sizes, meter, parts)
        elif parts:
            for ref, results in _map_in_pool(partial(_all_parts, func), refs, sizes, batches, min(jobs, len(batches)), meter):
                yield from ((ref, result) for result in results) if isinstance(results, list) else [(ref, results)]
        else:
            yield from _map_in_pool(func, refs, sizes, batches, min(jobs, len(batches)), meter)


def _map_in_process(func, refs, sizes, meter, parts: bool = False):
    for ref, size in zip(refs, sizes):
        if not parts:
            result = _result_or_error(func, ref)
            meter.finished(size)
            yield ref, result
            continue
        yield from _parts_or_error(func, ref)
        meter.finished(size)


def _parts_or_error(func, ref: LogRef):
    try:
        for part in func(ref):
            yield ref, part
    except DshctlError as exc:
        yield ref, exc.located(file=ref.display)


def _all_parts(func, ref: LogRef) -> list:
    """In a worker: every part of a log, as one picklable result."""
    return list(func(ref))


# --------------------------------------------------------------------------- the pool

BATCH_BYTES = 4 << 20
"""About this many bytes of JSON to read per task: tens of milliseconds of work, so that the cost of a
task (queueing, pickling, waking a worker) is small beside it; read at call time (tests lower it)."""

TASKS_PER_WORKER = 8
"""A smaller root is still cut into at least this many tasks per worker, so the workers finish together."""

ZSTD_EXPANSION = 4
"""Bytes of JSON a compressed byte stands for, roughly; it only orders and sizes the batches."""


def _work_estimate(ref: LogRef, size: int | None = -1) -> int:
    """Bytes of JSON the log probably holds (0 when it cannot be stat'ed: it fails fast); ``size``: its
    :func:`~dshctl.progress.log_size`, when known."""
    if ref.member is not None:
        return ref.member.size
    if size == -1:
        from .progress import log_size

        size = log_size(ref)
    if size is None:
        return 0
    return size * ZSTD_EXPANSION if ref.path.name.endswith(".zstd") else size


def _plan_batches(refs: list[LogRef], jobs: int, sizes: list | None = None) -> list[list[int]]:
    """Indices into ``refs`` grouped into tasks of about one batch of work each: every log of a batch or
    more alone, largest first, so that a big log starts early instead of holding up the end; then the
    others in their own order, consecutive logs together, so results come back nearly in the order
    they are yielded. Empty when a log is standard input, or when there is less than two batches of
    work: worker start-up would cost more than it saves."""
    if any(ref.path is None for ref in refs):
        return []
    work = [_work_estimate(ref, size) for ref, size in zip(refs, sizes)] if sizes else [_work_estimate(ref) for ref in refs]
    if sum(work) < 2 * BATCH_BYTES:
        return []
    target = max(1, min(BATCH_BYTES, sum(work) // (jobs * TASKS_PER_WORKER)))
    big = sorted((index for index, size in enumerate(work) if size >= target), key=work.__getitem__, reverse=True)
    batches = [[index] for index in big]
    batch: list[int] = []
    size = 0
    for index, log_work in enumerate(work):
        if log_work >= target:
            continue
        batch.append(index)
        size += log_work
        if size >= target:
            batches.append(batch)
            batch, size = [], 0
    if batch:
        batches.append(batch)
    return batches


def _map_in_pool(func, refs, sizes: list, batches: list[list[int]], workers: int, meter):
    import gc
    from concurrent.futures import FIRST_COMPLETED, wait

    try:
        with worker_pool(workers, _install_work, (func, refs)) as submit:
            # the workers are forked here, by the submits, before the progress bar draws (it waits a second).
            # What this process holds now is frozen while the pool runs: no collection, here or in a worker,
            # walks the modules and refs it holds (a worker's would also write to pages fork shares)
            gc.freeze()
            pending = {submit(_run_batch, batch): batch for batch in batches}
            results: dict[int, object] = {}
            next_index = 0
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    batch = pending.pop(future)
                    results.update(zip(batch, future.result()))
                    meter.finished(sum(sizes[index] or 0 for index in batch), logs=len(batch))
                while next_index in results:
                    yield refs[next_index], results.pop(next_index)
                    next_index += 1
    finally:
        gc.unfreeze()


@contextmanager
def worker_pool(workers: int, install: Callable[..., None], args: tuple = ()) -> Iterator[Callable[..., Any]]:
    """Worker processes for one piece of work (forked where the platform allows: :func:`pool_context`),
    each set up by ``install(*args)``, with no progress meter of its own and Ctrl-C ignored (it reaches the
    whole process group: the parent alone decides, and ends the workers itself). Yields ``submit(fn, *args)``,
    which returns a future (the first submit forks every worker).

    On leaving, work not started is cancelled; and when some submitted work is not done (Ctrl-C, an
    error, the caller gone), the workers are ended at once: one may be deep in a log (a pathological
    regular expression never ends), and shutting down would wait for it and for the work queued next."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=_start_worker,
                               initargs=(install, args))
    futures: list = []

    def submit(fn: Callable[..., Any], *fn_args: Any) -> Any:
        future = pool.submit(fn, *fn_args)
        futures.append(future)
        return future

    try:
        yield submit
    finally:
        if not all(future.done() for future in futures):
            _terminate_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _terminate_workers(pool) -> None:
    """SIGTERM to every worker (``ProcessPoolExecutor`` has no public way before Python 3.14)."""
    for process in list((pool._processes or {}).values()):
        process.terminate()


def pool_context():
    """The multiprocessing context of dshctl's worker processes: ``fork`` on Linux, so that a worker starts
    with the command's modules already imported (``spawn`` and ``forkserver`` import them again in every
    worker); elsewhere the platform's default (None)."""
    import multiprocessing

    return multiprocessing.get_context("fork") if sys.platform == "linux" else None


def _start_worker(install: Callable[..., None], args: tuple) -> None:
    import signal

    from .progress import forget

    forget()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    install(*args)


_installed: dict = {}
"""In a worker: the function and the logs, set once by :func:`_install_work`; tasks then carry only indices."""


def _install_work(func, refs) -> None:
    _installed["func"] = func
    _installed["refs"] = refs


def _run_batch(batch: list[int]) -> list:
    func, refs = _installed["func"], _installed["refs"]
    return [_result_or_error(func, refs[index]) for index in batch]


# --------------------------------------------------------------------------- warnings

WARNING_EXAMPLES = 3
"""How many paths a summarized warning names before "and N more"."""


class Warnings:
    """The warnings of many logs, told after the table: one line per kind of warning (its text with the
    numbers taken out) naming how many logs have it, the span of each number across them and the first
    few paths — ``torn tail dropped in 3 logs (12–340 bytes, no final LF): a, b, c; --verbose lists each``
    — or every warning with ``verbose``. One log's warnings are told as they are. JSON output keeps every
    warning in its records."""

    def __init__(self, *, verbose: bool = False):
        self.verbose = verbose
        self._by_kind: dict[str, list[tuple[str, str]]] = {}

    def add(self, path: str, text: str) -> None:
        self._by_kind.setdefault(_warning_kind(text), []).append((path, text))

    def add_unreadable(self, path: str, error: DshctlError) -> None:
        """A log that could not be read: its error, located by line and seq (the warning names the file)."""
        self.add(path, error.detail())

    def report(self) -> None:
        from .stdio import warn

        for kind, found in self._by_kind.items():
            if self.verbose or len(found) == 1:
                for path, text in found:
                    warn(f"{path}: {text}")
                continue
            paths = ", ".join(path for path, _ in found[:WARNING_EXAMPLES])
            more = f" and {len(found) - WARNING_EXAMPLES} more" if len(found) > WARNING_EXAMPLES else ""
            warn(f"{summarize([text for _, text in found])}: {paths}{more}; --verbose lists each")


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LOCATION = re.compile(r"^line \d+: ")
"""Where one log's warning sits: meaningless across logs, so a summary leaves it out."""


def _warning_kind(text: str) -> str:
    return _NUMBER.sub("N", _LOCATION.sub("", text))


def summarize(texts: list[str]) -> str:
    """Warnings of one kind, in several logs, as one: each number shown as its span across them
    (``12–340``, or ``12`` when they agree), and where the logs are counted: ``torn tail dropped in 3
    logs (12–340 bytes, no final LF)``."""
    bodies = [_LOCATION.sub("", text) for text in texts]
    slots = [_NUMBER.findall(body) for body in bodies]
    pieces = _NUMBER.split(bodies[0])
    out = [pieces[0]]
    for index, piece in enumerate(pieces[1:]):
        out.append(_span([numbers[index] for numbers in slots if index < len(numbers)]))
        out.append(piece)
    text = "".join(out)
    counted = f" in {len(texts)} logs"
    cut = min((at for at in (text.find(" ("), text.find(": ")) if at >= 0), default=len(text))
    return text[:cut] + counted + text[cut:]


def _span(numbers: list[str]) -> str:
    """The smallest and the largest of numbers written alike (``1,024``, ``3.5``), as they are written."""
    def value(number: str) -> float:
        return float(number.replace(",", ""))

    low, high = min(numbers, key=value), max(numbers, key=value)
    return low if value(low) == value(high) else f"{low}–{high}"
