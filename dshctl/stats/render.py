"""Rich tables for ``dshctl stats`` (the default output). Data only on stdout; colour per ``--no-color``/``NO_COLOR``."""

from __future__ import annotations

import math
from typing import Any

from ..humanize import utc_moment
from ..output import Tables, number, text
from .figures import format_duration, format_ms, format_rate, format_tokens, sparkline

def stats_tables(color: bool) -> Tables:
    """The shared table printer (literal cells, numbers never cut)."""
    return Tables(color=color)


def _number_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


def _percent_text(value: Any) -> str:
    return "—" if value is None else f"{value}%"


def stats_line(figures: dict) -> str:
    """The figures of dsh's stats line, in its order and formats (labels in English)."""
    groups: list[str] = []
    if figures["steps"] > 0:
        groups.append(f"{figures['turns']} turn{'s' if figures['turns'] != 1 else ''} · {figures['steps']} step{'s' if figures['steps'] != 1 else ''}")
        durations = []
        if figures["llmMs"]:
            durations.append(f"LLM {format_duration(figures['llmMs'])}")
        if figures["toolMs"]:
            durations.append(f"tools {format_duration(figures['toolMs'])}")
        if durations:
            groups.append(" · ".join(durations))
        speeds = []
        if figures["ttftSteps"] and figures["meanTtftMs"] is not None:
            speeds.append(f"TTFT {format_duration(figures['meanTtftMs'])}")
        if figures["decodeMs"]:
            speeds.append(f"{format_rate(figures['tokensPerSecond'])} tok/s")
        if speeds:
            groups.append(" · ".join(speeds))
    billed, output = figures["billedInputTokens"], figures["outputTokens"]
    if billed is not None and (billed > 0 or (output or 0) > 0):
        if figures["cacheHitPercent"] is not None:
            groups.append(f"cache hit {figures['cacheHitPercent']}%")
        groups.append(f"in {format_tokens(billed)} · out {format_tokens(output)}")
    return " | ".join(groups) if groups else "(no figures)"


def _dsh_rows(figures: dict) -> list[list[str]]:
    rows = [
        ["turns · steps", f"{figures['turns']:,} · {figures['steps']:,}"],
        ["LLM time", format_ms(figures["llmMs"])],
        ["tool time", format_ms(figures["toolMs"])],
        [
            "mean TTFT",
            "—" if figures["meanTtftMs"] is None else f"{format_ms(figures['meanTtftMs'])} over {figures['ttftSteps']:,} step(s)",
        ],
        [
            "decode speed",
            "—"
            if figures["tokensPerSecond"] is None
            else f"{format_rate(figures['tokensPerSecond'])} tok/s ({figures['decodeTokens']:,} tokens in {format_ms(figures['decodeMs'])})",
        ],
        [
            "billed input",
            "—"
            if figures["billedInputTokens"] is None
            else f"{figures['billedInputTokens']:,} (uncached {figures['uncachedInputTokens']:,} · cache read {figures['cacheReadTokens']:,} · cache write {figures['cacheWriteTokens']:,})",
        ],
        ["output", _number_text(figures["outputTokens"])],
        ["cache hit", _percent_text(figures["cacheHitPercent"])],
    ]
    inherited = figures.get("inherited")
    if inherited is not None:
        rows.append(
            [
                f"inherited {SEEDED_MARK}",
                f"{inherited['turns']:,} turn(s) · {inherited['steps']:,} step(s) · in {_number_text(inherited['billedInputTokens'])} · "
                f"out {_number_text(inherited['outputTokens'])} (before the fork cut, included above as dsh counts them)",
            ]
        )
    if "contextOccupancyPercent" in figures:
        occupancy = figures["contextOccupancyPercent"]
        rows.append(
            [
                "context occupancy",
                "—"
                if occupancy is None
                else f"{occupancy}% ({figures['pressureTokens']:,} of {figures['contextWindow']:,}; latest sample, pressure only)",
            ]
        )
    return rows


def _distribution_text(distribution: dict, fmt=format_ms) -> str:
    if not distribution or not distribution.get("n"):
        return "—"
    text = f"p50 {fmt(distribution['p50'])} · p90 {fmt(distribution['p90'])} · p99 {fmt(distribution['p99'])}"
    if distribution.get("mean") is not None:
        text = f"mean {fmt(distribution['mean'])} · " + text
    return f"{text} (n={distribution['n']:,})"


def _own_rows(own: dict) -> list[list[str]]:
    waste = own["retryWaste"]
    waste_text = "—"
    if waste["failedAttempts"]:
        parts = [f"{waste['failedAttempts']} attempt(s) without a message", f"{waste['billedInputTokens']:,} in / {waste['outputTokens']:,} out tokens"]
        if waste["attemptMs"] is not None:
            parts.append(f"{format_ms(waste['attemptMs'])} in attempts")
        if waste["backoffMs"] is not None:
            parts.append(f"{format_ms(waste['backoffMs'])} back-off")
        waste_text = "; ".join(parts)
    gaps = own["interTokenGapMs"]
    return [
        ["provider TTFT", _distribution_text(own["providerTtftMs"])],
        ["first visible output", _distribution_text(own["firstVisibleMs"])],
        ["inter-token gap", _distribution_text(gaps)],
        ["stalls > 1 s", "—" if not gaps.get("n") else f"{own['stalls']:,} ({format_ms(own['stallMs'])})"],
        ["attempts · retries", f"{own['attempts']:,} · {own['retries']:,}"],
        ["retry waste", waste_text],
    ]


def _model_table(out: Tables, models: list[dict], title: str) -> None:
    if not models:
        return
    out.table(
        title,
        [text("model", fold=True), number("settlements", drop=2), number("messages", drop=1), number("billed in", drop=3),
         number("out"), number("mean TTFT", drop=0), number("tok/s", drop=4)],
        [
            [
                model["model"] or "(unknown)",
                _number_text(model["settlements"]),
                _number_text(model["messages"]),
                _number_text(model["billedInputTokens"]),
                _number_text(model["outputTokens"]),
                format_ms(model["meanTtftMs"]),
                format_rate(model["tokensPerSecond"]),
            ]
            for model in models
        ],
    )


def _summary_tables(out: Tables, figures: dict, title: str, spark: Any = None) -> None:
    rows = _dsh_rows(figures)
    if spark is not None and len(spark) >= 2:
        values = [None if math.isnan(v) else v for v in spark]
        if sum(v is not None for v in values) >= 2:
            rows.append(["tok/s per step", sparkline(values)])
    out.table(f"{title} — dsh's figures (as dsh computes them)", [("figure", "left"), ("value", "left")], rows, caption=stats_line(figures))
    out.table("dshctl's own figures (not computed by dsh)", [("figure", "left"), ("value", "left")], _own_rows(figures["dshctl"]))
    _model_table(out, figures["dshctl"]["models"], "per model (dshctl)")
    for note in figures.get("notes") or []:
        out.line(f"note: {note}")


def _percentile_table(out: Tables, aggregate: dict) -> None:
    by_figure = aggregate["percentiles"]
    rows = []
    for label, key, fmt in (
        ("TTFT per step", "ttftMs", format_ms),
        ("tok/s per step", "tokensPerSecond", format_rate),
        ("output tokens per turn", "outputTokensPerTurn", _number_text),
        ("billed input tokens per turn", "billedInputTokensPerTurn", _number_text),
    ):
        distribution = by_figure[key]
        rows.append([label, _number_text(distribution["n"]), fmt(distribution["p50"]), fmt(distribution["p90"]), fmt(distribution["p99"])])
    out.table(
        f"percentiles across sessions ({aggregate['percentileMethod']})",
        [text("figure", fold=True), number("n", drop=2), number("p50"), number("p90", drop=1), number("p99", drop=0)],
        rows,
    )


class _SessionNames:
    """How a table names the sessions of its rows: the shortest unique prefix of each id (as git shows
    hashes), the log's path when it has no id."""

    def __init__(self, ids: list[Any]):
        from ..source import short_ids

        self._short = short_ids([i for i in ids if isinstance(i, str) and i])

    def __call__(self, session_id: Any, path: str) -> str:
        return self._short.get(session_id, path) if isinstance(session_id, str) and session_id else path


def _turn_table(out: Tables, rows: list[dict], multi: bool, caption: str | None) -> None:
    columns = [text("session", fold=True)] if multi else []
    columns += [
        number("turn"),
        number("TTFT", drop=4),
        number("in", drop=3),
        number("out"),
        number("tok/s", drop=5),
        number("steps", drop=2),
        number("tools", drop=1),
        number("duration", drop=6),
        text("end", drop=7),
        text("tok/s by step", drop=0),
    ]
    name = _SessionNames([row["session"] for row in rows])
    body = []
    for row in rows:
        rates = row.get("stepRates") or []
        spark = sparkline(rates, width=16) if sum(v is not None for v in rates) >= 2 else ""
        line = [name(row["session"], row["path"])] if multi else []
        line += [
            _turn_number_text(row["turn"], row["inherited"]),
            format_ms(row["ttftMs"]),
            _number_text(row["billedInputTokens"]),
            _number_text(row["outputTokens"]),
            format_rate(row["tokensPerSecond"]),
            _number_text(row["steps"]),
            _number_text(row["toolCalls"]),
            format_duration(row["durationMs"]),
            row["endReason"] or "—",
            spark,
        ]
        body.append(line)
    out.table("per turn", columns, body, caption=_with_note(caption, rows))


def _step_table(out: Tables, rows: list[dict], multi: bool, caption: str | None) -> None:
    columns = [text("session", fold=True)] if multi else []
    columns += [
        number("turn"),
        number("step"),
        number("att", drop=2),
        number("rty", drop=3),
        number("TTFT", drop=5),
        number("total", drop=6),
        number("gen", drop=1),
        number("out"),
        number("tok/s", drop=4),
        number("tools", drop=0),
        text("finish", fold=True, drop=7),
    ]
    name = _SessionNames([row["session"] for row in rows])
    body = []
    for row in rows:
        finish = row["finishReason"] or ("interrupted" if row["interrupted"] else "—")
        if row["failureCode"]:
            finish = f"{finish} {row['failureCode']}"
        if not row["ended"]:
            finish += " (no step/end)"
        line = [name(row["session"], row["path"])] if multi else []
        line += [
            _turn_number_text(row["turn"], row["inherited"]),
            _number_text(row["step"]),
            _number_text(row["attempts"]),
            _number_text(row["retries"]),
            format_ms(row["ttftMs"]),
            format_ms(row["llmMs"]),
            format_ms(row["generationMs"]),
            _number_text(row["outputTokens"]),
            format_rate(row["tokensPerSecond"]),
            _number_text(row["toolCalls"]),
            finish,
        ]
        body.append(line)
    out.table("per step (att = attempts, rty = retries, total = step/start → message, gen = first token → message)", columns, body, caption=_with_note(caption, rows))


SEEDED_MARK = "⑂"
_SEEDED_NOTE = (
    f"{SEEDED_MARK} forked from another session: its row counts the inherited prefix, as dsh does; "
    "the totals below count each prefix once (in the parent when it is listed)"
)
_INHERITED_ROWS_NOTE = f"{SEEDED_MARK} inherited from the parent session (before the fork cut)"


def _with_note(caption: str | None, rows: list[dict]) -> str | None:
    if not any(row["inherited"] for row in rows):
        return caption
    return _INHERITED_ROWS_NOTE if caption is None else f"{caption}\n{_INHERITED_ROWS_NOTE}"


def _turn_number_text(value: Any, inherited: bool) -> str:
    return f"{_number_text(value)} {SEEDED_MARK}" if inherited else _number_text(value)


def _sessions_table(out: Tables, sessions: list[dict]) -> None:
    caption = f"{len(sessions)} session(s)"
    if any(session["seeded"] for session in sessions):
        caption += f"\n{_SEEDED_NOTE}"
    name = _SessionNames([session["id"] for session in sessions])
    out.table(
        "sessions",
        [
            text("session", fold=True),
            text("cwd", fold=True, drop=0),
            text("created", drop=4),
            number("gen", drop=2),
            number("turns"),
            number("steps", drop=6),
            number("mean TTFT", drop=7),
            number("tok/s", drop=8),
            number("LLM", drop=9),
            number("tools", drop=3),
            number("billed in", drop=5),
            number("out"),
            number("cache hit", drop=1),
        ],
        [
            [
                name(session["id"], session["path"]) + (f" {SEEDED_MARK}" if session["seeded"] else ""),
                session["cwd"] or "—",
                utc_moment(session["createdAt"], "%Y-%m-%d %H:%M:%S") or "—",
                f"v{session['generation']}",
                _number_text(session["turns"]),
                _number_text(session["steps"]),
                format_ms(session["meanTtftMs"]),
                format_rate(session["tokensPerSecond"]),
                format_duration(session["llmMs"]),
                format_duration(session["toolMs"]),
                format_tokens(session["billedInputTokens"]),
                format_tokens(session["outputTokens"]),
                _percent_text(session["cacheHitPercent"]),
            ]
            for session in sessions
        ],
        caption=caption,
    )


def render(
    out: Tables,
    *,
    by: str,
    sessions: list[dict],
    rows: list[dict],
    aggregate: dict,
    errors: list[dict],
    multi: bool,
    spark: Any = None,
) -> None:
    """The tables of a stats run; ``spark`` is a single log's tok/s per step (NaN where unknown)."""
    if not sessions:
        note = f"no sessions ({aggregate['skipped']} outside --since/--until)" if aggregate["skipped"] else "no sessions"
        out.table(None, [("stats", "left")], [[note]])
        return
    if not multi:
        session = sessions[0]
        title = f"{session['id'] or session['path']} (v{session['generation']})"
        if by == "session":
            _summary_tables(out, session, title, spark)
        elif by == "turn":
            _turn_table(out, rows, False, caption=f"{title}: {stats_line(session)}")
        else:
            _step_table(out, rows, False, caption=f"{title}: {stats_line(session)}")
        return
    if by == "session":
        _sessions_table(out, sessions)
    elif by == "turn":
        _turn_table(out, rows, True, caption=None)
    else:
        _step_table(out, rows, True, caption=None)
    label = f"all {aggregate['sessions']} sessions"
    if aggregate["skipped"]:
        label += f" ({aggregate['skipped']} outside --since/--until)"
    if aggregate["inheritedPrefixes"]["excluded"]:
        label += f", {aggregate['inheritedPrefixes']['excluded']} inherited prefix(es) counted in the parent only"
    _summary_tables(out, aggregate, label)
    _percentile_table(out, aggregate)
    if errors:
        out.table("unreadable (skipped)", [("log", "left"), ("error", "left")], [[e["path"], e["error"]] for e in errors])
