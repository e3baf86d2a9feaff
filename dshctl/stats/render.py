"""Rich tables for ``dshctl stats`` (the default output). Data only on stdout; colour per ``--no-color``/``NO_COLOR``."""

from __future__ import annotations

import math
from typing import Any

from ..output import Tables
from .figures import format_duration, format_ms, format_rate, format_tokens, sparkline

STATS_PIPE_WIDTH = 240
"""Width of the tables when stdout is a file or pipe and COLUMNS is unset: the per-step table is wide."""


def stats_tables(color: bool) -> Tables:
    """The shared table printer (literal cells); every column but the last keeps its cells on one line."""
    return Tables(color=color, pipe_width=STATS_PIPE_WIDTH, wrap_last_only=True)


def _n(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


def _pct(value: Any) -> str:
    return "—" if value is None else f"{value}%"


def stats_line(s: dict) -> str:
    """The figures of dsh's stats line, in its order and formats (labels in English)."""
    groups: list[str] = []
    if s["steps"] > 0:
        groups.append(f"{s['turns']} turn{'s' if s['turns'] != 1 else ''} · {s['steps']} step{'s' if s['steps'] != 1 else ''}")
        durations = []
        if s["llmMs"]:
            durations.append(f"LLM {format_duration(s['llmMs'])}")
        if s["toolMs"]:
            durations.append(f"tools {format_duration(s['toolMs'])}")
        if durations:
            groups.append(" · ".join(durations))
        speeds = []
        if s["ttftSteps"] and s["meanTtftMs"] is not None:
            speeds.append(f"TTFT {format_duration(s['meanTtftMs'])}")
        if s["decodeMs"]:
            speeds.append(f"{format_rate(s['tokensPerSecond'])} tok/s")
        if speeds:
            groups.append(" · ".join(speeds))
    billed, output = s["billedInputTokens"], s["outputTokens"]
    if billed is not None and (billed > 0 or (output or 0) > 0):
        if s["cacheHitPercent"] is not None:
            groups.append(f"cache hit {s['cacheHitPercent']}%")
        groups.append(f"in {format_tokens(billed)} · out {format_tokens(output)}")
    return " | ".join(groups) if groups else "(no figures)"


def _dsh_rows(s: dict) -> list[list[str]]:
    rows = [
        ["turns · steps", f"{s['turns']:,} · {s['steps']:,}"],
        ["LLM time", format_ms(s["llmMs"])],
        ["tool time", format_ms(s["toolMs"])],
        [
            "mean TTFT",
            "—" if s["meanTtftMs"] is None else f"{format_ms(s['meanTtftMs'])} over {s['ttftSteps']:,} step(s)",
        ],
        [
            "decode speed",
            "—"
            if s["tokensPerSecond"] is None
            else f"{format_rate(s['tokensPerSecond'])} tok/s ({s['decodeTokens']:,} tokens in {format_ms(s['decodeMs'])})",
        ],
        [
            "billed input",
            "—"
            if s["billedInputTokens"] is None
            else f"{s['billedInputTokens']:,} (uncached {s['uncachedInputTokens']:,} · cache read {s['cacheReadTokens']:,} · cache write {s['cacheWriteTokens']:,})",
        ],
        ["output", _n(s["outputTokens"])],
        ["cache hit", _pct(s["cacheHitPercent"])],
    ]
    inherited = s.get("inherited")
    if inherited is not None:
        rows.append(
            [
                f"inherited {SEEDED_MARK}",
                f"{inherited['turns']:,} turn(s) · {inherited['steps']:,} step(s) · in {_n(inherited['billedInputTokens'])} · "
                f"out {_n(inherited['outputTokens'])} (before the fork cut, included above as dsh counts them)",
            ]
        )
    if "contextOccupancyPercent" in s:
        occupancy = s["contextOccupancyPercent"]
        rows.append(
            [
                "context occupancy",
                "—"
                if occupancy is None
                else f"{occupancy}% ({s['pressureTokens']:,} of {s['contextWindow']:,}; latest sample, pressure only)",
            ]
        )
    return rows


def _dist(d: dict, fmt=format_ms) -> str:
    if not d or not d.get("n"):
        return "—"
    text = f"p50 {fmt(d['p50'])} · p90 {fmt(d['p90'])} · p99 {fmt(d['p99'])}"
    if d.get("mean") is not None:
        text = f"mean {fmt(d['mean'])} · " + text
    return f"{text} (n={d['n']:,})"


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
        ["provider TTFT", _dist(own["providerTtftMs"])],
        ["first visible output", _dist(own["firstVisibleMs"])],
        ["inter-token gap", _dist(gaps)],
        ["stalls > 1 s", "—" if not gaps.get("n") else f"{own['stalls']:,} ({format_ms(own['stallMs'])})"],
        ["attempts · retries", f"{own['attempts']:,} · {own['retries']:,}"],
        ["retry waste", waste_text],
    ]


def _model_table(out: Tables, models: list[dict], title: str) -> None:
    if not models:
        return
    out.table(
        title,
        [("model", "left"), ("settlements", "right"), ("messages", "right"), ("billed in", "right"), ("out", "right"), ("mean TTFT", "right"), ("tok/s", "right")],
        [
            [
                m["model"] or "(unknown)",
                _n(m["settlements"]),
                _n(m["messages"]),
                _n(m["billedInputTokens"]),
                _n(m["outputTokens"]),
                format_ms(m["meanTtftMs"]),
                format_rate(m["tokensPerSecond"]),
            ]
            for m in models
        ],
    )


def _summary(out: Tables, s: dict, title: str, spark: Any = None) -> None:
    rows = _dsh_rows(s)
    if spark is not None and len(spark) >= 2:
        values = [None if math.isnan(v) else v for v in spark]
        if sum(v is not None for v in values) >= 2:
            rows.append(["tok/s per step", sparkline(values)])
    out.table(f"{title} — dsh's figures (as dsh computes them)", [("figure", "left"), ("value", "left")], rows, caption=stats_line(s))
    out.table("dshctl's own figures (not computed by dsh)", [("figure", "left"), ("value", "left")], _own_rows(s["dshctl"]))
    _model_table(out, s["dshctl"]["models"], "per model (dshctl)")
    for note in s.get("notes") or []:
        out.line(f"note: {note}")


def _percentile_table(out: Tables, aggregate: dict) -> None:
    p = aggregate["percentiles"]
    rows = []
    for label, key, fmt in (
        ("TTFT per step", "ttftMs", format_ms),
        ("tok/s per step", "tokensPerSecond", format_rate),
        ("output tokens per turn", "outputTokensPerTurn", _n),
        ("billed input tokens per turn", "billedInputTokensPerTurn", _n),
    ):
        d = p[key]
        rows.append([label, _n(d["n"]), fmt(d["p50"]), fmt(d["p90"]), fmt(d["p99"])])
    out.table(
        f"percentiles across sessions ({aggregate['percentileMethod']})",
        [("figure", "left"), ("n", "right"), ("p50", "right"), ("p90", "right"), ("p99", "right")],
        rows,
    )


def _short(session_id: Any, path: str) -> str:
    if isinstance(session_id, str) and session_id:
        return session_id if len(session_id) <= 12 else session_id[:8] + "…"
    return path


def _turn_table(out: Tables, rows: list[dict], multi: bool, caption: str | None) -> None:
    columns = [("session", "left")] if multi else []
    columns += [
        ("turn", "right"),
        ("TTFT", "right"),
        ("in", "right"),
        ("out", "right"),
        ("tok/s", "right"),
        ("steps", "right"),
        ("tools", "right"),
        ("duration", "right"),
        ("end", "left"),
        ("tok/s by step", "left"),
    ]
    body = []
    for r in rows:
        rates = r.get("stepRates") or []
        spark = sparkline(rates, width=16) if sum(v is not None for v in rates) >= 2 else ""
        line = [_short(r["session"], r["path"])] if multi else []
        line += [
            _numbered(r["turn"], r["inherited"]),
            format_ms(r["ttftMs"]),
            _n(r["billedInputTokens"]),
            _n(r["outputTokens"]),
            format_rate(r["tokensPerSecond"]),
            _n(r["steps"]),
            _n(r["toolCalls"]),
            format_duration(r["durationMs"]),
            r["endReason"] or "—",
            spark,
        ]
        body.append(line)
    out.table("per turn", columns, body, caption=_with_note(caption, rows))


def _step_table(out: Tables, rows: list[dict], multi: bool, caption: str | None) -> None:
    columns = [("session", "left")] if multi else []
    columns += [
        ("turn", "right"),
        ("step", "right"),
        ("att", "right"),
        ("rty", "right"),
        ("TTFT", "right"),
        ("total", "right"),
        ("gen", "right"),
        ("out", "right"),
        ("tok/s", "right"),
        ("tools", "right"),
        ("finish", "left"),
    ]
    body = []
    for r in rows:
        finish = r["finishReason"] or ("interrupted" if r["interrupted"] else "—")
        if r["failureCode"]:
            finish = f"{finish} {r['failureCode']}"
        if not r["ended"]:
            finish += " (no step/end)"
        line = [_short(r["session"], r["path"])] if multi else []
        line += [
            _numbered(r["turn"], r["inherited"]),
            _n(r["step"]),
            _n(r["attempts"]),
            _n(r["retries"]),
            format_ms(r["ttftMs"]),
            format_ms(r["llmMs"]),
            format_ms(r["generationMs"]),
            _n(r["outputTokens"]),
            format_rate(r["tokensPerSecond"]),
            _n(r["toolCalls"]),
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
    if not any(r["inherited"] for r in rows):
        return caption
    return _INHERITED_ROWS_NOTE if caption is None else f"{caption}\n{_INHERITED_ROWS_NOTE}"


def _numbered(value: Any, inherited: bool) -> str:
    return f"{_n(value)} {SEEDED_MARK}" if inherited else _n(value)


def _sessions_table(out: Tables, sessions: list[dict]) -> None:
    caption = f"{len(sessions)} session(s)"
    if any(s["seeded"] for s in sessions):
        caption += f"\n{_SEEDED_NOTE}"
    out.table(
        "sessions",
        [
            ("session", "left"),
            ("created", "left"),
            ("gen", "right"),
            ("turns", "right"),
            ("steps", "right"),
            ("mean TTFT", "right"),
            ("tok/s", "right"),
            ("LLM", "right"),
            ("tools", "right"),
            ("billed in", "right"),
            ("out", "right"),
            ("cache hit", "right"),
        ],
        [
            [
                _short(s["id"], s["path"]) + (f" {SEEDED_MARK}" if s["seeded"] else ""),
                (s["created"] or "—").replace("T", " ").rstrip("Z"),
                f"v{s['generation']}",
                _n(s["turns"]),
                _n(s["steps"]),
                format_ms(s["meanTtftMs"]),
                format_rate(s["tokensPerSecond"]),
                format_duration(s["llmMs"]),
                format_duration(s["toolMs"]),
                format_tokens(s["billedInputTokens"]),
                format_tokens(s["outputTokens"]),
                _pct(s["cacheHitPercent"]),
            ]
            for s in sessions
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
        s = sessions[0]
        title = f"{s['id'] or s['path']} (v{s['generation']})"
        if by == "session":
            _summary(out, s, title, spark)
        elif by == "turn":
            _turn_table(out, rows, False, caption=f"{title}: {stats_line(s)}")
        else:
            _step_table(out, rows, False, caption=f"{title}: {stats_line(s)}")
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
    _summary(out, aggregate, label)
    _percentile_table(out, aggregate)
    if errors:
        out.table("unreadable (skipped)", [("log", "left"), ("error", "left")], [[e["path"], e["error"]] for e in errors])
