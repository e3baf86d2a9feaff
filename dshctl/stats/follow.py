"""``dshctl stats --follow``: dsh's figures of a session that is still being written.

The fold is the one ``dshctl stats`` runs (:class:`~dshctl.stats.fold.StatsFold`), fed event by event as
the log grows (:mod:`dshctl.follow`). Two outputs:

* to a terminal, a rich ``Live`` summary redrawn as the log grows (at most four times a second) and once
  a second while it is idle (the current step's elapsed time keeps counting): the session table of ``dshctl stats``
  plus the step in progress; when following ends, it gives way to the tables ``dshctl stats`` prints for
  the log as it stands (the fold has read all of it);
* to a pipe (or with ``--ndjson``), one NDJSON record per completed turn — the record ``stats --by turn
  --ndjson`` prints (``--by step``: per step, written when its turn completes). A turn is complete at
  its ``turn/end`` once the log pauses, or when the next turn starts; when following ends, the rest
  comes out as ``stats`` would print it for the file as it stands. After a migration to a higher
  generation the turns already written are not written again.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ..errors import UsageError
from ..stdio import is_terminal
from .fold import StatsFold

REDRAW_SECONDS = 0.25
"""At most this often while events arrive."""
CLOCK_SECONDS = 1.0
"""While nothing arrives, the open step's elapsed time is redrawn this often (nothing else changes)."""


def run_stats_follow(paths: list[str], options, prices) -> int:
    """The ``stats --follow`` command: one PATH; the live table on a terminal, else NDJSON records.
    ``options``: the :class:`~dshctl.options.StatsOptions` (which refuse what does not apply to one log
    followed); ``prices``: the table to cost with, or None."""
    from ..follow import Follower
    from ..stdio import warn

    if len(paths) > 1:
        raise UsageError("--follow watches one log: give one PATH (a sessions root follows its latest session)")
    live = options.output == "table" and is_terminal()
    held: list[str] = []  # a warning written under the live table would be drawn over: it waits
    follower = Follower(paths[0] if paths else _default_root(), strict=options.strict, on_warning=held.append if live else None)
    try:
        if live:
            return _LiveSummary(follower, prices, color=options.colored).run()
        return _TurnRecords(follower, prices, by="step" if options.by == "step" else "turn").run()
    finally:
        for text in held:
            warn(text)


def _default_root() -> str:
    from ..source import sessions_root

    return str(sessions_root())


def _fold_for(log, prices, *, keep_turns: bool = False, keep_steps: bool = False) -> StatsFold:
    """The fold ``log_stats`` runs over ``log``: the same seed cut and the same pricing."""
    from .prices import session_pricer

    pricing = session_pricer(prices, log.header.createdAt)
    seed_length = log.cut if log.generation <= 1 else None
    return StatsFold(keep_turns=keep_turns, keep_steps=keep_steps, seed_length=seed_length, pricing=pricing)


class _TurnRecords:
    """NDJSON: each turn's (or step's) record as soon as its turn is complete."""

    def __init__(self, follower, prices, *, by: str) -> None:
        self.follower = follower
        self.prices = prices
        self.by = by
        self.out = sys.stdout.buffer
        self.fold: StatsFold | None = None
        self.log: Any = None
        self.written = 0  # rows of the fold written
        self.done: set = set()  # the turns (or steps) written from earlier logs: a migrated log skips them
        self.current: set = set()
        follower.on_idle = self._idle

    def run(self) -> int:
        return self.follower.run(self._consume)

    def _consume(self, log) -> None:
        self.log = log
        self.fold = fold = _fold_for(log, self.prices, keep_turns=self.by == "turn", keep_steps=self.by == "step")
        self.written = 0
        self.done |= self.current
        self.current = set()
        for event in log.events():
            fold.feed(event)
            self._write_new()
        fold.finish()
        self._write_new(final=True)

    def _idle(self) -> None:
        if self.fold is not None and not self._before_cut():
            self.fold.close_ended_turns()
            self._write_new()
        self.out.flush()

    def _before_cut(self) -> bool:
        """A forked or seeded log whose cut was not read yet: the fold will still mark the rows so far
        inherited, so none is written until then."""
        return self.log.header.seeded and self.fold.prefix is None  # type: ignore[union-attr]

    def _write_new(self, *, final: bool = False) -> None:
        from ..output import to_json
        from .results import in_session

        if not final and self._before_cut():
            return
        rows = self.fold.turn_rows if self.by == "turn" else self.fold.step_rows  # type: ignore[union-attr]
        header = self.log.header
        while self.written < len(rows):
            row = rows[self.written]
            self.written += 1
            key = (row.turn, getattr(row, "step", None))
            if key in self.done:
                continue
            self.current.add(key)
            currency = self._session_currency() if getattr(getattr(row, "costs", None), "currency", 1) is None else None
            self.out.write(to_json(in_session(row, header.id, self.log.display, currency)) + b"\n")

    def _session_currency(self) -> str | None:
        """The currency of the session read so far: a turn or step without usage costs 0 in it, as in
        ``dshctl stats`` (the finished log's, unless the session's first billed call is still to come)."""
        return getattr(self.fold.session().costs, "currency", None)  # type: ignore[union-attr]


class _LiveSummary:
    """The session table, redrawn in place as the log grows."""

    def __init__(self, follower, prices, *, color: bool) -> None:
        self.follower = follower
        self.prices = prices
        self.color = color
        self.fold: StatsFold | None = None
        self.log: Any = None
        self.live: Any = None
        self.drawn_at = 0.0
        self.changed = False
        self.read_to_the_end = False
        follower.on_idle = self._idle

    def run(self) -> int:
        from rich.live import Live
        from rich.text import Text

        from ..tables import console

        with Live(console=console(color=self.color), auto_refresh=False, transient=False) as live:
            self.live = live
            try:
                status = self.follower.run(self._consume)
            except BaseException:
                self._draw(force=True, following=False)  # the state it stopped at stays on the screen
                raise
            if self.read_to_the_end:
                live.update(Text(""), refresh=True)
            else:  # a second Ctrl-C stopped the reading half-way
                self._draw(force=True, following=False)
        if self.read_to_the_end:
            self._print_final_tables()
        return status

    def _consume(self, log) -> None:
        self.log = log
        self.fold = fold = _fold_for(log, self.prices)
        self.read_to_the_end = False
        self._draw(force=True)
        for event in log.events():
            fold.feed(event)
            self.changed = True
            self._draw()
        self.read_to_the_end = True

    def _print_final_tables(self) -> None:
        """What ``dshctl stats`` prints for the log as it stood when following ended."""
        from .results import folded_stats
        from .render import render, stats_tables

        self.fold.finish()  # type: ignore[union-attr]
        result = folded_stats(self.log, self.fold)
        render(stats_tables(self.color), by="session", sessions=[result.session], rows=[], aggregate=None, errors=[],
               multi=False, spark=result.samples.spark)  # type: ignore[union-attr]
        if self.prices is not None:
            from .prices import cost_basis
            from .render import cost_basis_line

            stats_tables(self.color).line(cost_basis_line(cost_basis(self.prices)))

    def _idle(self) -> None:
        if self.changed:
            self._draw()
        elif self.fold is not None and self.fold.current_step is not None:
            self._draw(every=CLOCK_SECONDS)

    def _draw(self, force: bool = False, every: float = REDRAW_SECONDS, following: bool = True) -> None:
        now = time.monotonic()
        if self.fold is None or (not force and now - self.drawn_at < every):
            return
        self.drawn_at = now
        self.changed = False
        table = summary_table(self.log, self.fold, now_ms=time.time_ns() // 1_000_000, following=following)
        self.live.update(table, refresh=True)


def summary_table(log, fold: StatsFold, *, now_ms: int, following: bool = True):
    """The live summary: dsh's session figures so far and the step in progress (a rich Table)."""
    from rich.table import Table

    from ..tables import text_cell
    from .render import dsh_rows

    figures = fold.session()
    title = f"{log.display} (following; Ctrl-C ends)" if following else log.display
    table = Table(title=text_cell(title, "bold"), show_header=False)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in dsh_rows(figures) + [["current step", current_step_text(fold, now_ms)]]:
        table.add_row(text_cell(label), text_cell(value))
    return table


def current_step_text(fold: StatsFold, now_ms: int) -> str:
    """``turn T step S · running 12.3s`` for the step in progress, else ``—``. A step is in progress from
    its ``step/start`` to its ``step/end`` (or ``turn/end``): its model call settles before its tools run."""
    from ..humanize import format_duration

    step = fold.current_step
    if step is None:
        return "—"
    text = f"turn {step.turn} step {step.step}"
    if isinstance(step.start, int) and fold.timing_known:
        text += f" · running {format_duration(max(0, now_ms - step.start), 'fine')}"
    return text
