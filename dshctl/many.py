"""Reading many logs: resolve several PATH arguments, then map a per-log function over them,
in worker processes when there are many, with a progress bar on a terminal's stderr.

A log that cannot be read yields its :class:`~dshctl.errors.DshctlError` in place of a
result; the caller reports it, skips it and sets the exit status.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Iterator, TypeVar

from .errors import DshctlError
from .source import LogRef, resolve_named, sessions_root

R = TypeVar("R")

PARALLEL_THRESHOLD = 8
"""Fewer logs than this are read in-process: worker start-up would cost more than it saves."""


def resolve_many(paths: list[str]) -> list[LogRef]:
    """Every log named by ``paths`` (files, session dirs, roots, ``-``); the default sessions root when
    none is given. Each must hold a log. Duplicates (the same file reached twice) are read once."""
    specs = paths or [str(sessions_root())]
    refs: list[LogRef] = []
    seen: set = set()
    for spec in specs:
        for ref in resolve_named(spec):
            key = ref.path.resolve() if ref.path is not None else "-"
            if key in seen:
                continue
            seen.add(key)
            refs.append(ref)
    return refs


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # AttributeError: closed at start (None)
        return False


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _call(func: Callable[[LogRef], R], ref: LogRef) -> R | DshctlError:
    try:
        return func(ref)
    except DshctlError as exc:
        return exc.located(file=ref.display)


def map_logs(
    func: Callable[[LogRef], R],
    refs: list[LogRef],
    *,
    jobs: int | None = None,
    progress: bool = True,
    label: str = "reading",
) -> Iterator[tuple[LogRef, R | DshctlError]]:
    """``(ref, func(ref) or the error)`` for every ref, in the order of ``refs``.

    ``func`` must be a module-level function (it is pickled to worker processes).
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    use_pool = jobs > 1 and len(refs) >= PARALLEL_THRESHOLD and all(r.path is not None for r in refs)
    show = progress and len(refs) >= PARALLEL_THRESHOLD and _is_terminal(sys.stderr)
    bar = _progress(len(refs), label) if show else None
    try:
        if not use_pool:
            for ref in refs:
                result = _call(func, ref)
                if bar:
                    bar.advance()
                yield ref, result
            return
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_call, func, ref) for ref in refs]
            for ref, future in zip(refs, futures):
                result = future.result()
                if bar:
                    bar.advance()
                yield ref, result
    finally:
        if bar:
            bar.stop()


class _progress:
    def __init__(self, total: int, label: str):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from .output import console

        self._progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task(label, total=total)
        self._progress.start()

    def advance(self) -> None:
        self._progress.advance(self._task)

    def stop(self) -> None:
        self._progress.stop()
