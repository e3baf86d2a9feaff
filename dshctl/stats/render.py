"""Rich tables for ``dshctl stats`` (the default output). Data only on stdout; colour per ``--no-color``/``NO_COLOR``."""

from __future__ import annotations

import math
from typing import Any

from ..humanize import format_duration, format_ms, utc_moment
from ..tables import LAST_RESORT, Cell, SessionNames, Tables, distinct_least, distinct_paths, iso_moment, number, text
from ..textsafe import visible_line
from .figures import format_rate, format_tokens, sparkline
from .records import (
    UNSET,
    AggregateOwnFigures,
    CostBasis,
    AggregateRecord,
    LogError,
    ModelTotals,
    Percentiles,
    RollupRow,
    SessionOwnFigures,
    SessionRecord,
    StepRecord,
    ToolRow,
    TurnRecord,
)

def stats_tables(color: bool, form: str = "auto") -> Tables:
    """The shared table printer (literal cells, numbers never cut), in ``form`` (:mod:`dshctl.tables`)."""
    return Tables(color=color, form=form)


def _number_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


def _percent_text(value: Any) -> str:
    return "—" if value is None else f"{value}%"


def stats_line(figures: SessionRecord | AggregateRecord) -> str:
    """The figures of dsh's stats line, in its order and formats (labels in English)."""
    groups: list[str] = []
    if figures.steps > 0:
        groups.append(f"{figures.turns} turn{'s' if figures.turns != 1 else ''} · {figures.steps} step{'s' if figures.steps != 1 else ''}")
        durations = []
        if figures.llm_ms:
            durations.append(f"LLM {format_duration(figures.llm_ms)}")
        if figures.tool_ms:
            durations.append(f"tools {format_duration(figures.tool_ms)}")
        if durations:
            groups.append(" · ".join(durations))
        speeds = []
        if figures.ttft_steps and figures.mean_ttft_ms is not None:
            speeds.append(f"TTFT {format_duration(figures.mean_ttft_ms)}")
        if figures.decode_ms:
            speeds.append(f"{format_rate(figures.tokens_per_second)} tok/s")
        if speeds:
            groups.append(" · ".join(speeds))
    billed, output = figures.billed_input_tokens, figures.output_tokens
    if billed is not None and (billed > 0 or (output or 0) > 0):
        if figures.cache_hit_percent is not None:
            groups.append(f"cache hit {figures.cache_hit_percent}%")
        groups.append(f"in {format_tokens(billed)} · out {format_tokens(output)}")
    return " | ".join(groups) if groups else "(no figures)"


def dsh_rows(figures: SessionRecord | AggregateRecord) -> list[list[str]]:
    rows = [
        ["turns · steps", f"{figures.turns:,} · {figures.steps:,}"],
        ["LLM time", format_ms(figures.llm_ms)],
        ["tool time", format_ms(figures.tool_ms)],
        [
            "mean TTFT",
            "—" if figures.mean_ttft_ms is None else f"{format_ms(figures.mean_ttft_ms)} over {figures.ttft_steps:,} step(s)",
        ],
        [
            "decode speed",
            "—"
            if figures.tokens_per_second is None
            else f"{format_rate(figures.tokens_per_second)} tok/s ({figures.decode_tokens:,} tokens in {format_ms(figures.decode_ms)})",
        ],
        [
            "billed input",
            "—"
            if figures.billed_input_tokens is None
            else f"{figures.billed_input_tokens:,} (uncached {figures.uncached_input_tokens:,} · cache read {figures.cache_read_tokens:,} · cache write {figures.cache_write_tokens:,})",
        ],
        ["output", _number_text(figures.output_tokens)],
        ["cache hit", _percent_text(figures.cache_hit_percent)],
    ]
    if has_costs(figures):
        rows.append(["cost (estimate)", cost_text(figures)])
    inherited = getattr(figures, "inherited", None)
    if inherited is not None:
        rows.append(
            [
                f"inherited {SEEDED_MARK}",
                f"{inherited.turns:,} turn(s) · {inherited.steps:,} step(s) · in {_number_text(inherited.billed_input_tokens)} · "
                f"out {_number_text(inherited.output_tokens)} (before the fork cut, included above as dsh counts them)",
            ]
        )
    if isinstance(figures, SessionRecord):
        occupancy = figures.context_occupancy_percent
        rows.append(
            [
                "context occupancy",
                "—"
                if occupancy is None
                else f"{occupancy}% ({figures.pressure_tokens:,} of {figures.context_window:,}; latest sample, pressure only)",
            ]
        )
    return rows


def _distribution_text(distribution: Percentiles, fmt=format_ms) -> str:
    if not distribution.n:
        return "—"
    text = f"p50 {fmt(distribution.p50)} · p90 {fmt(distribution.p90)} · p99 {fmt(distribution.p99)}"
    if getattr(distribution, "mean", None) is not None:
        text = f"mean {fmt(distribution.mean)} · " + text
    return f"{text} (n={distribution.n:,})"


def _own_rows(own: SessionOwnFigures | AggregateOwnFigures) -> list[list[str]]:
    waste = own.retry_waste
    waste_text = "—"
    if waste.failed_attempts:
        parts = [f"{waste.failed_attempts} attempt(s) without a message", f"{waste.billed_input_tokens:,} in / {waste.output_tokens:,} out tokens"]
        if waste.attempt_ms is not None:
            parts.append(f"{format_ms(waste.attempt_ms)} in attempts")
        if waste.backoff_ms is not None:
            parts.append(f"{format_ms(waste.backoff_ms)} back-off")
        waste_text = "; ".join(parts)
    gaps = own.inter_token_gap_ms
    return [
        ["provider TTFT", _distribution_text(own.provider_ttft_ms)],
        ["first visible output", _distribution_text(own.first_visible_ms)],
        ["inter-token gap", _distribution_text(gaps)],
        ["stalls > 1 s", "—" if not gaps.n else f"{own.stalls:,} ({format_ms(own.stall_ms)})"],
        ["attempts · retries", f"{own.attempts:,} · {own.retries:,}"],
        ["retry waste", waste_text],
    ]


ROUTE_LEAST = 48
"""A model route (``provider/model``) up to this long stays whole on one line while another column can
be hidden; a longer one, or any when none is left to hide, is cut in its middle with "…" (never folded:
a fold splits it mid-word)."""


def _route_least(routes) -> int:
    return min(ROUTE_LEAST, max((len(route or "(unknown)") for route in routes), default=8))


def _route_column(header: str, routes) -> Any:
    return text(header, cut="middle", least=_route_least(routes))


# -- cells: what a table shows, and (TSV) the machine value -----------------------------------------------


def _count(value: Any) -> Cell:
    return Cell(_number_text(value), value)


def _tokens(value: Any) -> Cell:
    return Cell(format_tokens(value), value)


def _millis(value: Any) -> Cell:
    return Cell(format_ms(value), value)


def _span(value: Any) -> Cell:
    return Cell(format_duration(value), value)


def _rate(value: Any) -> Cell:
    return Cell(format_rate(value), value)


def _percent(value: Any) -> Cell:
    return Cell(_percent_text(value), value)


def _moment(ms: Any) -> Cell:
    return Cell(utc_moment(ms, "%Y-%m-%d %H:%M") or "—", iso_moment(ms))


def _ms(header: str, drop: int | None = None) -> Any:
    """A column of milliseconds, shown as people read a span (``1m05s``), given in ms in TSV."""
    return number(header, drop, tsv=f"{header} ms")


def _record_table(out: Tables, title: str, fields: list, records: list, caption: str | None = None, *, cost_last: bool | None = True,
                  priced: bool | None = None) -> None:
    """A table of one row per record from ``fields``, ``(column, cell of a record)`` pairs, with a cost
    column when the records have costs (:func:`_with_cost_column`; ``cost_last`` None: none; ``priced``:
    whether a table without records has one)."""
    columns = [column for column, _ in fields]
    body = [[cell(record) for _, cell in fields] for record in records]
    if cost_last is not None:
        columns, body = _with_cost_column(columns, body, records, last=cost_last, priced=priced)
    out.table(title, columns, body, caption=caption)


def _session_fields(records: list, id_of, multi: bool) -> list:
    """The session column of a table of many sessions (the shortest unique id; the whole one in TSV); of
    one session's, in TSV only (its columns are the same whatever the logs)."""
    name = SessionNames([id_of(record) for record in records] if multi else [])
    return [(text("session", fold=True, least=max(ID_LEAST, name.longest), forms=None if multi else ("tsv",)),
             lambda record: Cell(name(id_of(record), record.path), id_of(record) or record.path))]


def _log_fields(records: list, id_of) -> list:
    """The log column of a table of sessions, turns or steps: in TSV always (a row there names its file,
    what tells copies of one session apart); on a terminal and in a pipe only when rows of one session
    come from more than one log (copies of a log, a session's generations), cut by the rule of a log
    column (:func:`dshctl.tables.distinct_paths`, ``cut="distinct"``)."""
    paths: dict[Any, set] = {}
    for record in records:
        if id_of(record):
            paths.setdefault(id_of(record), set()).add(record.path)
    if not any(len(logs) > 1 for logs in paths.values()):
        return [(text("log", forms=("tsv",)), lambda record: record.path or "")]
    distinct = dict(zip(sorted({record.path for record in records}, key=str),
                        distinct_paths(sorted({record.path for record in records}, key=str))))
    return [(text("log", cut="distinct", least=distinct_least(list(distinct.values())), forms=("box",)),
             lambda record: distinct[record.path]),
            (text("log", forms=("plain", "tsv")), lambda record: record.path or "")]


def _mark_fields(header: str, records: list, marked) -> list:
    """A mark (``⑂``) beside the cell before it on a terminal; its own column in a pipe (true/false in
    TSV), so the cell before it stays a value dshctl takes back. When no record is marked, in TSV only
    (all false there: its columns are the same whatever the logs)."""
    forms = None if any(marked(record) for record in records) else ("tsv",)
    return [(text(header, beside=True, forms=forms),
             lambda record: Cell(SEEDED_MARK if marked(record) else "", bool(marked(record))))]


def _model_table(out: Tables, models: list[ModelTotals], title: str) -> None:
    if not models:
        return
    fields = [
        (_route_column("model", [model.model for model in models]), lambda m: m.model or "(unknown)"),
        (number("settlements", drop=2), lambda m: _count(m.settlements)),
        (number("messages", drop=1), lambda m: _count(m.messages)),
        (number("billed in"), lambda m: _count(m.billed_input_tokens)),  # its tokens stay: the route is cut first
        (number("out"), lambda m: _count(m.output_tokens)),
        (_ms("mean TTFT", drop=0), lambda m: _millis(m.mean_ttft_ms)),
        (number("tok/s", drop=3), lambda m: _rate(m.tokens_per_second)),
    ]
    _record_table(out, title, fields, models, cost_last=None)  # the summary above has the cost


def _summary_tables(out: Tables, figures: SessionRecord | AggregateRecord, title: str, spark: Any = None) -> None:
    rows = dsh_rows(figures)
    if spark is not None and len(spark) >= 2:
        values = [None if math.isnan(v) else v for v in spark]
        if sum(v is not None for v in values) >= 2:
            rows.append(["tok/s per step", sparkline(values)])
    out.table(f"{title} — dsh's figures (as dsh computes them)", [("figure", "left"), ("value", "left")], rows, caption=stats_line(figures))
    out.table("dshctl's own figures (not computed by dsh)", [("figure", "left"), ("value", "left")], _own_rows(figures.dshctl))
    _model_table(out, figures.dshctl.models, "per model (dshctl)")
    for note in getattr(figures, "notes", None) or []:
        out.line(f"note: {note}")


def _percentile_table(out: Tables, aggregate: AggregateRecord) -> None:
    by_figure = aggregate.percentiles
    rows = []
    for label, distribution, cell in (
        (Cell("TTFT per step", "TTFT per step ms"), by_figure.ttft_ms, _millis),
        ("tok/s per step", by_figure.tokens_per_second, _rate),
        ("output tokens per turn", by_figure.output_tokens_per_turn, _count),
        ("billed input tokens per turn", by_figure.billed_input_tokens_per_turn, _count),
    ):
        rows.append([label, _count(distribution.n), cell(distribution.p50), cell(distribution.p90), cell(distribution.p99)])
    out.table(
        f"percentiles across sessions ({aggregate.percentile_method})",
        [text("figure", fold=True), number("n", drop=2), number("p50"), number("p90", drop=1), number("p99", drop=0)],
        rows,
    )


ID_LEAST = 24
"""A session column hides other columns before it folds a short id (at most this long): an id is
copied whole."""


def _turn_table(out: Tables, rows: list[TurnRecord], multi: bool, caption: str | None, priced: bool | None = None) -> None:
    def spark(row: TurnRecord) -> str:
        rates = row.step_rates or []
        return sparkline(rates, width=16) if sum(v is not None for v in rates) >= 2 else ""

    fields = _session_fields(rows, lambda row: row.session, multi) + _log_fields(rows, lambda row: row.session) + [
        (number("turn"), lambda row: _count(row.turn)),
        *_mark_fields("inherited", rows, lambda row: row.inherited),
        (_ms("TTFT", drop=3), lambda row: _millis(row.ttft_ms)),
        (number("in", drop=7), lambda row: _count(row.billed_input_tokens)),
        (number("out"), lambda row: _count(row.output_tokens)),
        (number("tok/s", drop=4), lambda row: _rate(row.tokens_per_second)),
        (number("steps", drop=2), lambda row: _count(row.steps)),
        (number("tools", drop=1), lambda row: _count(row.tool_calls)),
        (_ms("duration", drop=6), lambda row: _span(row.duration_ms)),
        (text("end", drop=5), lambda row: Cell(row.end_reason or "—", row.end_reason)),
        (text("tok/s by step", drop=0, forms=("box", "plain")), spark),
    ]
    _record_table(out, "per turn", fields, rows, _with_note(caption, rows), priced=priced)


def _step_table(out: Tables, rows: list[StepRecord], multi: bool, caption: str | None, priced: bool | None = None) -> None:
    def finish(row: StepRecord) -> str:
        shown = row.finish_reason or ("interrupted" if row.interrupted else "—")
        if row.failure_code:
            shown = f"{shown} {row.failure_code}"
        return Cell(shown if row.ended else shown + " (no step/end)", row.finish_reason)

    fields = _session_fields(rows, lambda row: row.session, multi) + _log_fields(rows, lambda row: row.session) + [
        (number("turn"), lambda row: _count(row.turn)),
        *_mark_fields("inherited", rows, lambda row: row.inherited),
        (number("step"), lambda row: _count(row.step)),
        (number("att", drop=2, tsv="attempts"), lambda row: _count(row.attempts)),
        (number("rty", drop=3, tsv="retries"), lambda row: _count(row.retries)),
        (_ms("TTFT", drop=5), lambda row: _millis(row.ttft_ms)),
        (_ms("total", drop=6), lambda row: _millis(row.llm_ms)),
        (_ms("gen", drop=1), lambda row: _millis(row.generation_ms)),
        (number("out"), lambda row: _count(row.output_tokens)),
        (number("tok/s", drop=4), lambda row: _rate(row.tokens_per_second)),
        (number("tools", drop=0), lambda row: _count(row.tool_calls)),
        # TSV: what the finish cell says in words, as values of their own
        (text("failure", forms=("tsv",)), lambda row: row.failure_code or ""),
        (text("interrupted", forms=("tsv",)), lambda row: Cell("", bool(row.interrupted))),
        (text("ended", forms=("tsv",)), lambda row: Cell("", bool(row.ended))),
        (text("finish", fold=True, drop=7), finish),
    ]
    title = "per step (att = attempts, rty = retries, total = step/start → message, gen = first token → message)"
    _record_table(out, title, fields, rows, _with_note(caption, rows), priced=priced)


SEEDED_MARK = "⑂"
_SEEDED_NOTE = (
    f"{SEEDED_MARK} forked from another session: its row counts the inherited prefix, as dsh does; "
    "the totals below count each prefix once (in the parent when it is listed)"
)
_INHERITED_ROWS_NOTE = f"{SEEDED_MARK} inherited from the parent session (before the fork cut)"


def _with_note(caption: str | None, rows: list[TurnRecord] | list[StepRecord]) -> str | None:
    if not any(row.inherited for row in rows):
        return caption
    return _INHERITED_ROWS_NOTE if caption is None else f"{caption}\n{_INHERITED_ROWS_NOTE}"


def by_start(sessions: list[SessionRecord]) -> list[SessionRecord]:
    """Sessions in the order the session table shows them: by start time, newest last (as ``ls``), those
    without one after them; ties by path."""
    return sorted(sessions, key=lambda s: (s.created_at is None, s.created_at or 0, s.path or ""))


def _sessions_table(out: Tables, sessions: list[SessionRecord], priced: bool | None = None) -> None:
    """One row per session, answering "which session burnt the most, and when?": on a narrow terminal the
    figures few ask for go first (generation, TTFT, decode rate, cache hit, LLM time, turns, billed input,
    cwd, tool time, steps, tokens out), the session, its start, its title (cut with "…", at least
    :data:`TITLE_LEAST` wide while a column can be hidden), its tokens in and out and its cost last. Two
    rows of one session (copies of a log, its generations) each name their log, cut around what tells
    them apart."""
    caption = f"{len(sessions)} session(s)"
    if any(session.seeded for session in sessions):
        caption += f"\n{_SEEDED_NOTE}"
    logs = _log_fields(sessions, lambda session: session.id)
    copies = len(logs) > 1  # copies share a title and a start: their log tells them apart, and goes last
    fields = _session_fields(sessions, lambda session: session.id, True) + [
        *_mark_fields("fork", sessions, lambda session: session.seeded),
        (text("title", cut="end", least=_title_least(), drop=11 if copies else 12, key=True), lambda session: session.title or ""),
        *logs,
        (text("created", drop=12 if copies else 11, key=True), lambda session: _moment(session.created_at)),
        (text("cwd", cut="start", least=12, drop=7), lambda session: session.cwd or "—"),
        (number("gen", drop=0), lambda session: Cell(f"v{session.generation}", session.generation)),
        (number("turns", drop=5), lambda session: _count(session.turns)),
        (number("steps", drop=9), lambda session: _count(session.steps)),
        (_ms("mean TTFT", drop=1), lambda session: _millis(session.mean_ttft_ms)),
        (number("tok/s", drop=2), lambda session: _rate(session.tokens_per_second)),
        (_ms("LLM", drop=4), lambda session: _span(session.llm_ms)),
        (_ms("tools", drop=8), lambda session: _span(session.tool_ms)),
        (number("billed in", drop=6), lambda session: _tokens(session.billed_input_tokens)),
        *_billed_parts(),
        (number("out", drop=10), lambda session: _tokens(session.output_tokens)),
        (number("in+out"), lambda session: _tokens(session.in_plus_out_tokens)),
        (number("cache hit", drop=3, tsv="cache hit %"), lambda session: _percent(session.cache_hit_percent)),
    ]
    _record_table(out, "sessions", fields, sessions, caption, cost_last=False, priced=priced)


TITLE_LEAST = 20
"""The session table's title is cut to no fewer characters while a column can be hidden: enough to tell
sessions apart by what they were about."""

NARROW = 80
NARROW_TITLE_LEAST = 10
"""On a terminal narrower than :data:`NARROW` the title's least width: a title cut to 10 characters still
tells sessions apart where a start time (often alike) does not, so it stays and the start hides first."""


def _title_least() -> int:
    from ..stdio import terminal_width

    width = terminal_width()
    return NARROW_TITLE_LEAST if width is not None and width < NARROW else TITLE_LEAST


def _billed_parts() -> list:
    """Billed input's parts (uncached, cache read, cache write), in TSV only: what the terminal's figure
    table says in a sentence, as fields of the one row a session has there."""
    def part(header: str, name: str):
        return (number(header, forms=("tsv",)), lambda session: _count(getattr(session, name)))

    return [part("uncached in", "uncached_input_tokens"), part("cache read", "cache_read_tokens"), part("cache write", "cache_write_tokens")]


def render(
    out: Tables,
    *,
    by: str,
    sessions: list[SessionRecord],
    rows: list[TurnRecord] | list[StepRecord],
    aggregate: AggregateRecord | None,
    errors: list[LogError],
    multi: bool,
    spark: Any = None,
    reordered: bool = False,
    quiet: bool = False,
) -> None:
    """The tables of a stats run; ``spark`` is a single log's tok/s per step (NaN where unknown). The
    session table is in start order unless ``reordered`` (``--sort``, ``--top``, ``--reverse``). No
    session: :func:`_no_sessions`."""
    if out.form == "tsv" or not sessions:  # one table: a row per session (the one log's too), turn or step
        priced = aggregate is not None and has_costs(aggregate)
        if not sessions:
            _no_sessions(out, aggregate, quiet)
            if out.form == "box":
                return
            out = _HeaderOnly(out)  # type: ignore[assignment]
        if by == "session":
            _sessions_table(out, sessions if reordered or not multi else by_start(sessions), priced)
        elif by == "turn":
            _turn_table(out, rows, multi, None, priced)
        else:
            _step_table(out, rows, multi, None, priced)
        return
    if not multi:
        session = sessions[0]
        title = f"{session.id or session.path} (v{session.generation})"
        if by == "session":
            _summary_tables(out, session, title, spark)
        elif by == "turn":
            _turn_table(out, rows, False, caption=f"{title}: {stats_line(session)}")
        else:
            _step_table(out, rows, False, caption=f"{title}: {stats_line(session)}")
        return
    if by == "session":
        _sessions_table(out, sessions if reordered else by_start(sessions))
    elif by == "turn":
        _turn_table(out, rows, True, caption=None)
    else:
        _step_table(out, rows, True, caption=None)
    label = f"all {aggregate.sessions} sessions"
    if aggregate.skipped:
        label += f" ({aggregate.skipped} outside --since/--until)"
    if aggregate.inherited_prefixes.excluded:
        label += f", {aggregate.inherited_prefixes.excluded} inherited prefix(es) counted in the parent only"
    _summary_tables(out, aggregate, label)
    _percentile_table(out, aggregate)
    _unreadable_table(out, errors)


# -- costs and rollups (#16) -------------------------------------------------------------------------------


def _amount_text(amount: float) -> str:
    """An amount with cents, or four significant decimals under one unit (0.0119)."""
    if amount == 0:
        return "0"
    if abs(amount) >= 1:
        return f"{amount:,.2f}"
    if abs(amount) < 0.0001:  # three significant digits, never an exponent: 0.00000756
        return f"{float(f'{amount:.3g}'):.9f}".rstrip("0")
    return f"{amount:.4f}"


COST_DROP = LAST_RESORT
"""The cost column of session, turn and step tables is hidden last of all, only when the table cannot
fit otherwise (the footer names it); a rollup never hides its cost."""


def cost_basis_line(basis: CostBasis) -> str:
    """The label under tables with costs: estimates, from which tables."""
    tables = []
    for table in basis.tables:
        if table.source is not None:
            tables.append(f"{table.name}: {table.source}{' ' + table.version if table.version else ''}")
        else:
            tables.append(f"{table.name}: {table.path}")
    return f"cost: an estimate at {basis.estimate} ({'; '.join(tables)}), not a bill; dshctl prices lists them"


def has_costs(record: Any) -> bool:
    """Whether a record carries costs (it does whenever prices were asked for, even a null cost)."""
    return getattr(record, "costs", UNSET) is not UNSET


def cost_text(record: Any) -> str:
    """A record's cost with its currency; per currency when they differ; "—" when unknown."""
    costs = getattr(record, "costs", None)
    costs = None if costs is UNSET else costs
    if costs is not None:
        return _amount_text(costs.total) + (f" {costs.currency}" if costs.currency else "")
    by_currency = getattr(record, "costs_by_currency", None) or []
    if len(by_currency) > 1 and not getattr(record, "unpriced_models", None):
        return " + ".join(f"{_amount_text(c.total)} {c.currency}" for c in by_currency)
    return "—"


def cost_cell(record: Any) -> Cell:
    """A record's cost (:func:`cost_text`); in TSV its amount alone (its currency in a column of its own),
    empty when it has no single amount."""
    costs = getattr(record, "costs", None)
    return Cell(cost_text(record), None if costs is None or costs is UNSET else costs.total)


def _currency_cell(record: Any) -> Cell:
    costs = getattr(record, "costs", None)
    return Cell("", None if costs is None or costs is UNSET else costs.currency)


def cost_columns(drop: int | None = None) -> list:
    """The cost column, and in TSV its currency beside it."""
    return [number("cost", drop=drop, unit=True), text("currency", forms=("tsv",))]


def _with_cost_column(columns: list, body: list, records: list, *, last: bool = True, priced: bool | None = None) -> tuple[list, list]:
    """The table with a cost column when its records have costs (``priced``, when there are none): before
    the last column (which alone may wrap), or at the end."""
    if not (has_costs(records[0]) if records else priced):
        return columns, body
    at = len(columns) - 1 if last else len(columns)
    columns = columns[:at] + cost_columns(COST_DROP) + columns[at:]
    body = [line[:at] + [cost_cell(record), _currency_cell(record)] + line[at:] for line, record in zip(body, records)]
    return columns, body


_ROLLUP_TITLES = {"day": "per day", "week": "per ISO week (Monday to Sunday)", "month": "per month", "project": "per project (cwd)", "model": "per model"}


def _rollup_line(row: RollupRow, cost: bool) -> list:
    line = [
        _key_cell(row.key),
        _count(row.sessions),
        _count(row.turns),
        _count(row.steps),
        _tokens(row.uncached_input_tokens),
        _tokens(row.cache_read_tokens),
        _tokens(row.cache_write_tokens),
        _tokens(row.output_tokens),
        _tokens(row.in_plus_out_tokens),
        _percent(row.cache_hit_percent),
        _span(row.llm_ms),
        _span(row.tool_ms),
        _millis(row.mean_ttft_ms),
        _millis(row.p90_ttft_ms),
        _rate(row.tokens_per_second),
    ]
    return line + [cost_cell(row), _currency_cell(row)] if cost else line


_ROLLUP_COLUMNS = [  # hidden first on a narrow terminal: the lowest drop rank (README "Tables")
    number("sessions", drop=11), number("turns", drop=4), number("steps", drop=10), number("uncached in", drop=8),
    number("cache read", drop=7), number("cache write", drop=1), number("out", drop=12), number("in+out"),
    number("cache hit", drop=2, tsv="cache hit %"), _ms("LLM", drop=9), _ms("tools", drop=5), _ms("mean TTFT", drop=6),
    _ms("p90 TTFT", drop=0), number("tok/s", drop=3),
]
"""A rollup hides its calls (steps), sessions and tokens out last, and never its tokens (in+out) or its
cost: "which burnt the most" is what it answers, so on a narrow terminal its key (a route, a cwd) is cut
before they go."""


def _key_cell(key: str) -> Cell:
    """A rollup row's key; in TSV empty for the row of sessions without one (shown ``(unknown)``)."""
    from .rollup import UNKNOWN

    return Cell(key, None if key == UNKNOWN else key)


def _shown_note(shown: int, count: int) -> str | None:
    return None if shown == count else f"{shown} of {count} rows shown; the total counts all {count}"


SPARK_DAYS = 92
"""Up to this many calendar days the day sparkline has a cell per day (0 on days without sessions);
over a longer span, a cell per row shown."""


def _day_sparkline(rows: list[RollupRow]) -> str | None:
    """Billed input + output tokens per day: one bar per calendar day from the first to the last."""
    import datetime as _dt

    tokens: dict[_dt.date, int] = {}
    for row in rows:
        try:
            day = _dt.date.fromisoformat(row.key)
        except ValueError:
            continue
        tokens[day] = row.in_plus_out_tokens or 0
    if len(tokens) < 2:
        return None
    first, last = min(tokens), max(tokens)
    if (last - first).days < SPARK_DAYS:
        series = [tokens.get(first + _dt.timedelta(days=i), 0) for i in range((last - first).days + 1)]
        return f"tokens per day {first}…{last}: {sparkline(series, width=SPARK_DAYS)}"
    series = [tokens[day] for day in sorted(tokens)]
    return f"tokens per day shown ({len(series)} days, {first}…{last}): {sparkline(series, width=SPARK_DAYS)}"


def _no_sessions(out: Tables, aggregate: AggregateRecord | None, quiet: bool) -> None:
    """Says there is no session, as ``ls`` does: a note on standard error (``--quiet`` hides it, as every
    note: no session is an answer, status 0, not a warning); standard output has the table's header line
    alone in TSV and plain (:class:`_HeaderOnly`), nothing on a terminal (the callers)."""
    skipped = aggregate.skipped if aggregate is not None else 0
    if not quiet:
        from ..stdio import note

        note(f"no sessions ({skipped} outside --since/--until)" if skipped else "no sessions")


class _HeaderOnly:
    """The tables of no session drawn as their header lines: no title, no rows, no caption."""

    def __init__(self, out: Tables) -> None:
        self.out, self.form = out, out.form

    def table(self, title: str | None, columns: list, rows: Any, caption: str | None = None) -> None:
        self.out.table(None, columns, [])

    def line(self, text: str) -> None:
        pass


def render_rollup(
    out: Tables,
    *,
    by: str,
    rows: list[RollupRow] | list[ToolRow],
    total: RollupRow | ToolRow,
    count: int,
    aggregate: AggregateRecord,
    errors: list[LogError],
    zone: Any,
    cost: bool,
    quiet: bool = False,
) -> None:
    """A rollup table (rows, then the total row) and the unreadable logs. A rollup of no sessions is
    said as the session table says it (:func:`_no_sessions`): a total of nothing reads as figures."""
    empty = not aggregate.sessions
    shown: Any = out
    if empty:
        _no_sessions(out, aggregate, quiet)
        shown = _HeaderOnly(out)
    if empty and out.form == "box":
        pass
    elif by == "tool":
        _tool_table(shown, rows, total, count, empty)
    else:
        from .rollup import zone_name

        # a date stays whole; a model route too while a column can be hidden, then is cut in its middle (a
        # fold splits it mid-word); a project is a cwd, cut at its start on one line as ls cuts it (its end
        # tells projects apart)
        if by == "project":
            key = text(by, cut="start", least=min(max((len(row.key or "") for row in rows), default=8), 40))
        elif by == "model":
            key = _route_column(by, [row.key for row in rows])
        else:
            key = text(by)
        columns = [key] + _ROLLUP_COLUMNS + (cost_columns() if cost else [])  # a rollup never hides its cost
        body = [] if empty else [_rollup_line(row, cost) for row in rows] + [_rollup_line(total, cost)]
        notes = [_shown_note(len(rows), count)]
        if by in ("day", "week", "month"):
            notes.append(f"tokens and costs on the {by} of each call; turns, steps and times on the {by} a session started; time zone {zone_name(zone)}")
            if by == "day":
                notes.append(_day_sparkline(rows))
        if by == "model":
            notes.append("a step counts for the model of its message; sessions and turns count each model they used")
        if aggregate.inherited_prefixes.excluded:
            notes.append(f"{SEEDED_MARK} {aggregate.inherited_prefixes.excluded} inherited fork prefix(es) counted in the parent only")
        if cost and total.unpriced_models:
            unpriced = ", ".join(visible_line(model) or "(unknown)" for model in total.unpriced_models)
            notes.append(f"cost — : a model without a price ({unpriced})")
        shown.table(_ROLLUP_TITLES[by], columns, body, caption="\n".join(note for note in notes if note) or None)
    _unreadable_table(out, errors)


def _unreadable_table(out: Tables, errors: list[LogError]) -> None:
    """The logs left out, after a run's tables; not in TSV, which is one table (each is a warning on
    standard error, and the status is 1)."""
    if errors and out.form != "tsv":
        out.table("unreadable (skipped)", [text("log", cut="middle", least=16), text("error", fold=True)], [[e.path, e.error] for e in errors])


def _tool_line(row: ToolRow) -> list:
    return [
        _key_cell(row.key),
        _count(row.sessions),
        _count(row.calls),
        _count(row.failures),
        _millis(row.tool_ms),
        _millis(row.p50_ms),
        _millis(row.p90_ms),
        _millis(row.max_ms),
        _percent(row.share_percent),
    ]


def _tool_table(out: Tables, rows: list[ToolRow], total: ToolRow, count: int, empty: bool = False) -> None:
    columns = [
        # a tool's name stays whole on one line while a column can hide (a fold split it mid-word)
        text("tool", cut="end", least=min(max((len(row.key or "") for row in rows), default=8), 32)), number("sessions", drop=1), number("calls"), number("failures"), _ms("tool time"),
        _ms("p50", drop=2), _ms("p90", drop=3), _ms("max", drop=0), number("share", tsv="share %"),
    ]
    notes = [
        _shown_note(len(rows), count),
        "durations: tool/call → its tool/result as dsh times them; failures: results flagged isError or with an error",
    ]
    body = [] if empty else [_tool_line(row) for row in rows] + [_tool_line(total)]
    out.table("per tool", columns, body, caption="\n".join(n for n in notes if n))
