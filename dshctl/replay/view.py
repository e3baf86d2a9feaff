"""How a timeline item looks: every glyph, line layout and style name of the replay, in one place.

The timeline (:mod:`.timeline`) says what happened — an item's kind, its log text, what it means
(``info``) and the layout marks that go before it (``prefix``). This module turns an item into
**segments**, ``(text, style)`` pairs: the frames of a tool call (``╭─ tool call``, ``│ ``, ``╰─``),
the ``✻ thinking`` header of reasoning, the ``❯`` of a prompt, the wording of every event line.
Everything that shows a replay draws through it: the screen (:mod:`.render`), the transcript and the
timed stream (:mod:`.transcript`), the cast and NDJSON exports and the player's search. The markdown
export reads the items' meaning itself and uses only :func:`body_text` for one-line events.

A style is a name (``"frame"``, ``"error"`` …); :data:`STYLES` maps it to SGR parameters for
transcripts and casts and to a rich style for the screen. Colour is the caller's choice: segments carry
no colour, :func:`ansi` adds it.

Every string from the log that an item's ``info`` holds is made safe to show here, as it is composed
(:func:`dshctl.textsafe.visible`); the item's ``fragments`` and ``text`` already are.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from ..humanize import format_duration, utc_moment
from ..textsafe import visible, visible_line
from .items import (
    ATTEMPT_FAILED,
    BLOCK,
    BLOCK_END,
    COMMAND,
    CONTEXT,
    INTERRUPTED,
    NOTE,
    REASONING,
    RETRY,
    RETRY_STARTED,
    SESSION,
    STEP,
    TEXT,
    THINKING,
    TITLE,
    TOOL_ARGS,
    TOOL_CALL,
    TOOL_END,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_START,
    TURN,
    TURN_END,
    USER,
    Item,
    Prefix,
    shown,
)

Segment = tuple[str, "str | None"]

BAR = "│ "
"""The left edge of a tool-call or tool-result frame; the screen continues it on wrapped rows."""
NEWLINE: Segment = ("\n", None)
MAX_RESULT_LINES = 20
"""Tool-result lines shown; the rest is summarised as "… N more lines" (the markdown export keeps all)."""
MAX_LINE_CHARS = 400
"""Longest tool-result line shown before it is cut with "…"."""

# style name -> (SGR parameters for transcripts and casts, rich style for the screen)
STYLES: dict[str, tuple[str, str]] = {
    "session": ("1", "bold"),
    "note": ("2", "dim"),
    "title": ("35", "magenta"),
    "turn": ("1;36", "bold cyan"),
    "turn-end": ("2", "dim"),
    "user-label": ("1;36", "bold cyan"),
    "user": ("1", "bold"),
    "reasoning-label": ("2;3", "dim italic"),
    "reasoning": ("2;3", "dim italic"),
    "text": ("", ""),
    "frame": ("34", "blue"),
    "tool-name": ("1;34", "bold blue"),
    "args": ("", ""),
    "result": ("", ""),
    "ok": ("32", "green"),
    "error": ("31", "red"),
    "retry": ("33", "yellow"),
}

RUN_STYLES = {TEXT: "text", REASONING: "reasoning", TOOL_ARGS: "args"}
"""The style of streamed log text, by item kind."""


def sgr(style: str | None) -> str:
    """The SGR parameters of a style name ("" for none)."""
    if not style:
        return ""
    entry = STYLES.get(style)
    return entry[0] if entry else ""


def ansi(segments) -> str:
    """Segments as text with SGR colour, each styled piece reset at its end and at every line break."""
    out: list[str] = []
    for text, style in segments:
        code = sgr(style)
        if not code or not text:
            out.append(text)
            continue
        pieces = text.split("\n")
        for n, piece in enumerate(pieces):
            if n:
                out.append("\n")
            if piece:
                out.append(f"\x1b[{code}m{piece}\x1b[0m")
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# An item's output, fragment by fragment


def is_framed(item: Item) -> bool:
    """Whether the item's streamed text sits inside a tool-call frame (``│`` after each line break)."""
    return item.kind == TOOL_ARGS


def segments(item: Item, k: int) -> list[Segment]:
    """The output of fragment ``k`` of ``item`` (a shared list: do not change it)."""
    if item.fragments is None:
        return _item_segments(item)
    text = item.fragments[k]
    out: list[Segment] = []
    if k == 0 and item.prefix is not None:
        out.extend(prefix_segments(item.prefix))
    if item.kind == TOOL_ARGS and "\n" in text:
        out.extend(_framed(text, "args"))
    elif text:
        out.append((text, RUN_STYLES[item.kind]))
    return out


def ansi_text(item: Item, k: int) -> str:
    """``ansi(segments(item, k))``, without building segments for a run's member in one style (the
    transcript and a cast colour every streamed delta)."""
    if item.fragments is not None and (k or item.prefix is None) and item.kind != TOOL_ARGS:
        fragment = item.fragments[k]
        code = sgr(RUN_STYLES[item.kind])
        if not code or not fragment:
            return fragment
        if "\n" not in fragment:
            return f"\x1b[{code}m{fragment}\x1b[0m"
    return ansi(segments(item, k))


def text(item: Item, k: int) -> str:
    """Plain output of fragment ``k`` of ``item``."""
    if item.fragments is None:
        return _item_text(item)
    fragment = item.fragments[k]
    if item.kind == TOOL_ARGS and "\n" in fragment:
        fragment = fragment.replace("\n", "\n" + BAR)
    return (prefix_text(item.prefix) + fragment) if k == 0 and item.prefix is not None else fragment


def plain(item: Item, first: int = 0, stop: int | None = None) -> str:
    """Plain output of fragments ``first … stop-1`` of ``item`` joined."""
    if item.fragments is None:
        return _item_text(item) if first == 0 and (stop is None or stop > 0) else ""
    stop = item.count if stop is None else stop
    if first >= stop:
        return ""
    body = "".join(item.fragments[first:stop])
    if item.kind == TOOL_ARGS and "\n" in body:
        body = body.replace("\n", "\n" + BAR)
    return (prefix_text(item.prefix) + body) if first == 0 and item.prefix is not None else body


def body_text(item: Item) -> str:
    """Plain output of a one-fragment item without its prefix (an event's own line or lines)."""
    return "".join(piece for piece, _ in _body_segments(item))


@lru_cache(maxsize=4096)
def _item_segments(item: Item) -> list[Segment]:
    out = list(_prefix_segments(item.prefix)) if item.prefix is not None else []
    out.extend(_body_segments(item))
    return out


@lru_cache(maxsize=4096)
def _item_text(item: Item) -> str:
    return "".join(piece for piece, _ in _item_segments(item))


def _body_segments(item: Item) -> list[Segment]:
    return [(visible(piece), style) for piece, style in _BODIES[item.kind](item)]


# --------------------------------------------------------------------------------------------------
# Layout marks


def prefix_segments(prefix: Prefix) -> list[Segment]:
    """What goes before an item, drawn from its layout marks."""
    return list(_prefix_segments(prefix))


def prefix_text(prefix: Prefix) -> str:
    return "".join(piece for piece, _ in _prefix_segments(prefix))


@lru_cache(maxsize=256)
def _prefix_segments(prefix: Prefix) -> tuple[Segment, ...]:
    out: list[Segment] = []
    if prefix.line_break:
        out.append(NEWLINE)
    if prefix.close_frame:
        out += [(_TOOL_ENDS["max-tokens"] if prefix.dropped else "╰─", "frame"), NEWLINE]
    if prefix.blank_line:
        out.append(NEWLINE)
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# One-fragment items, by kind: the raw segments (made visible by _body_segments)


def _session(item: Item) -> list[Segment]:
    info = item.info
    bits = [f"dsh session {visible_line(info['id']) or '?'}", f"log v{info['version']}"]
    if info["cwd"]:
        bits.append(visible_line(info["cwd"]))
    created = info["createdAt"]
    if isinstance(created, int) and created > 10**11:
        bits.append(utc_moment(created, "%Y-%m-%d %H:%M UTC") or str(created))
    out: list[Segment] = [(" · ".join(bits), "session")]
    if info["fixture"]:
        out += [NEWLINE, ("synthetic timing: the log has no event times (test-fixture form)", "note")]
    out.append(NEWLINE)
    return out


def _turn(item: Item) -> list[Segment]:
    label = f"turn {item.turn}" if item.turn is not None else "turn"
    return [(f"━━ {label} ━━", "turn"), NEWLINE]


def _step(item: Item) -> list[Segment]:
    return [(f"· step {item.step}", "note"), NEWLINE]


def _user(item: Item) -> list[Segment]:
    out: list[Segment] = [("❯ ", "user-label")]
    for n, line in enumerate(item.info["lines"] or [""]):
        if n:
            out.append(("\n  ", None))
        if line:
            out.append((line, "user"))
    out.append(NEWLINE)
    return out


def _context(item: Item) -> list[Segment]:
    info = item.info
    what = info["label"] + (", replaces earlier history" if info["replacesHistory"] else "")
    return [(f"· context: {what} · {info['chars']} chars", "note"), NEWLINE]


def _command(item: Item) -> list[Segment]:
    args = item.info["args"]
    line = f"/{item.info['name']}" + (f" {_one_line(args, 200)}" if isinstance(args, str) and args.strip() else "")
    return [("❯ ", "user-label"), (line, "user"), NEWLINE]


def _title(item: Item) -> list[Segment]:
    return [(f"· title: {item.info['title']}", "title"), NEWLINE]


_TODO_MARKS = {"pending": "◻", "in_progress": "▸", "completed": "✓"}


def _note(item: Item) -> list[Segment]:
    info = item.info
    note = info["note"]
    if note == "todos":
        out: list[Segment] = [("· todos", "note")]
        for todo in info["todos"]:
            if isinstance(todo, dict):
                status = todo.get("status")
                mark = _TODO_MARKS.get(status, "·") if isinstance(status, str) else "·"  # a list is no key
                out += [NEWLINE, (f"  {mark} {_one_line(todo.get('content'), 200)}", "note")]
        return out + [NEWLINE]
    if note == "compaction":
        count = info["summarised"]
        line = (f"· compaction: {count} earlier events summarised" if count is not None else "· compaction summary", "note")
    elif note == "inherited-prefix-ends":
        line = ("· ── end of the inherited prefix (forked session) ──", "note")
    elif note == "damaged-stream":
        what = "the message is shown whole" if info["settlement"] == "assistant/message" else "the attempt cannot be shown"
        line = (f"· damaged stream (dshctl validate names it): {what}", "note")
    elif note == "max-tokens":
        line = ("… output stopped: max tokens", "retry")
    elif note == "working-directory":
        cwd = info["cwd"]
        line = (f"· working directory → {visible_line(cwd) if isinstance(cwd, str) else '?'}", "note")
    else:  # "unended-turn"
        line = (f"── the log ends inside turn {info['turn']} (no turn/end)", "error")
    return [line, NEWLINE]


def _retry(item: Item) -> list[Segment]:
    info = item.info
    retry, limit, delay, code = info["retry"], info["maxRetries"], info["delayMs"], info["code"]
    line = "↻ retry"
    if retry is not None:
        line += f" {retry}" + (f" of {limit}" if limit is not None else "")
    if isinstance(delay, (int, float)) and not isinstance(delay, bool):
        line += f" in {delay / 1000:.1f} s"
    if code:
        line += f" after {code}"
    return [(line, "retry"), NEWLINE]


def _retry_started(item: Item) -> list[Segment]:
    retry = item.info["retry"]
    return [(f"↻ retrying (retry {retry})" if retry is not None else "↻ retrying", "retry"), NEWLINE]


def _attempt_failed(item: Item) -> list[Segment]:
    info = item.info
    kind = info.get("kind")
    if kind is None:
        return [("✗ attempt ended without a result", "error"), NEWLINE]
    code, message = info["code"], info["message"]
    word = shown(info, "kind")
    if word != kind:  # a pattern matched the log's word: it is shown redacted, never worded
        line = f"✗ attempt {word}"
    else:
        line = f"✗ attempt {'failed' if kind == 'error' else 'aborted'}"
    if code or message:
        line += " — " + ": ".join(str(x) for x in (code, _one_line(message, 300) if message else None) if x)
    return [(line, "error"), NEWLINE]


def _interrupted(item: Item) -> list[Segment]:
    return [("⏹ interrupted", "error"), NEWLINE]


def _tool_call(item: Item) -> list[Segment]:
    info = item.info
    out: list[Segment] = [("▶ ", "frame"), (info["name"], "tool-name")]
    arguments = info["arguments"]
    if isinstance(arguments, str) and arguments and not info["streamed"]:
        out.append((" " + _one_line(arguments, 120), "args"))
    return out + [NEWLINE]


def _tool_result(item: Item) -> list[Segment]:
    info = item.info
    name = info["name"]
    out: list[Segment] = [(f"╭─ result{': ' + name if name else ''} ", "frame")]
    out.append(("✗ error", "error") if info["isError"] else ("✓", "ok"))
    error = info["error"]
    if error is not None:
        code = " ".join(str(error[k]) for k in ("name", "code") if isinstance(error.get(k), str))
        if code:
            out.append((f" ({code})", "error"))
    out.append(NEWLINE)
    lines = info["lines"]
    shown = lines[:MAX_RESULT_LINES]
    for line in shown:
        if line:
            out += [(BAR, "frame"), (_cut(line), "result")]
        else:
            out.append((BAR.rstrip(), "frame"))
        out.append(NEWLINE)
    if len(lines) > len(shown):
        out += [(BAR, "frame"), (f"… {len(lines) - len(shown)} more lines", "note"), NEWLINE]
    return out + [("╰─", "frame"), NEWLINE]


def _turn_end(item: Item) -> list[Segment]:
    info = item.info
    kind = info["reason"]
    turn = info["turn"]
    label = f"turn {turn}" if turn is not None else "turn"
    style = "turn-end"
    word = shown(info, "reason")
    if word != kind:  # a pattern matched the log's word: it is shown redacted, never worded
        line = f"── {label} ended: {word}"
    elif kind == "completed":
        line = f"── {label} completed"
    elif kind == "aborted":
        who = shown(info, "by")
        line = f"── {label} aborted" + (f" ({who})" if who else "")
        style = "error"
    elif kind == "error":
        code, message = info["code"], info["message"]
        line = f"── {label} failed" + (f" — {code}" if code else "") + (f": {_one_line(message, 200)}" if message else "")
        style = "error"
    elif kind == "max-tokens":
        line = f"── {label} ended: max tokens"
        style = "retry"
    elif kind == "interrupted":
        line = f"── {label} interrupted (closed by crash repair)"
        style = "error"
    elif kind:
        line = f"── {label} ended: {kind}"
    else:
        line = f"── {label} ended"
    if "durationMs" in info:
        line += f" · {format_duration(info['durationMs'], 'clock')}"
    return [(line, style), NEWLINE]


def _thinking(item: Item) -> list[Segment]:
    return [("✻ thinking", "reasoning-label"), NEWLINE]


def _streamed(item: Item) -> list[Segment]:
    """One streamed delta (text, reasoning, tool-call arguments)."""
    if item.kind == TOOL_ARGS and "\n" in item.text:
        return _framed(item.text, "args")
    return [(item.text, RUN_STYLES[item.kind])]


def _reasoning(item: Item) -> list[Segment]:
    if item.info is None:
        return _streamed(item)
    # a whole reasoning block
    body = item.info["text"]
    out: list[Segment] = [("✻ thinking", "reasoning-label"), NEWLINE] if item.info["header"] else []
    return out + [(body, "reasoning"), ("" if body.endswith("\n") else "\n", None)]


def _tool_start(item: Item) -> list[Segment]:
    header: list[Segment] = [("╭─ tool call", "frame")]
    if item.info is None:
        return header
    # a whole tool-call block
    return header + _tool_block_body(item.info["name"], item.info["arguments"], item.info.get("dropped", False))


def _tool_name(item: Item) -> list[Segment]:
    name = item.info["name"]
    head: list[Segment] = [(" ", None), (name, "tool-name")] if name else []
    return head + [NEWLINE, (BAR, "frame")]


_TOOL_ENDS = {
    "closed": "╰─",
    "not-completed": "╰─ (not completed)",
    "max-tokens": "╰─ cut off by max tokens; the call was dropped",
    "dropped": "╰─ dropped: the reply was cut off by max tokens",
}
"""A tool call's frame end, by how the call ended (``dropped``: complete, but its reply hit max tokens)."""


def _tool_end(item: Item) -> list[Segment]:
    info = item.info
    if info["end"] == "whole":
        return _tool_block_body(info["name"], info["arguments"], info.get("dropped", False))
    end = "dropped" if info["end"] == "closed" and info.get("dropped") else info["end"]
    return [NEWLINE, (_TOOL_ENDS[end], "frame"), NEWLINE]


def _block_end(item: Item) -> list[Segment]:
    return [NEWLINE]


def _block(item: Item) -> list[Segment]:
    info = item.info
    if info["type"] == "text":
        body = info["text"]
        return [(body, "text"), ("" if body.endswith("\n") else "\n", None)]
    return [(info["placeholder"], "note"), NEWLINE]


_BODIES: dict[str, Callable[[Item], list[Segment]]] = {
    SESSION: _session,
    TURN: _turn,
    STEP: _step,
    USER: _user,
    CONTEXT: _context,
    COMMAND: _command,
    TITLE: _title,
    NOTE: _note,
    RETRY: _retry,
    RETRY_STARTED: _retry_started,
    ATTEMPT_FAILED: _attempt_failed,
    INTERRUPTED: _interrupted,
    TOOL_CALL: _tool_call,
    TOOL_RESULT: _tool_result,
    TURN_END: _turn_end,
    THINKING: _thinking,
    TEXT: _streamed,
    REASONING: _reasoning,
    TOOL_ARGS: _streamed,
    TOOL_START: _tool_start,
    TOOL_NAME: _tool_name,
    TOOL_END: _tool_end,
    BLOCK_END: _block_end,
    BLOCK: _block,
}


def _framed(text: str, style: str) -> list[Segment]:
    """``text`` inside a frame: ``│`` begins every line after a line break."""
    out: list[Segment] = []
    for n, piece in enumerate(text.split("\n")):
        if n:
            out += [NEWLINE, (BAR, "frame")]
        if piece:
            out.append((piece, style))
    return out


def _tool_block_body(name: Any, arguments: Any, dropped: bool = False) -> list[Segment]:
    """The rest of a tool-call frame shown at once: the name, the arguments inside the frame, its end."""
    out: list[Segment] = [(" ", None), (name, "tool-name")] if isinstance(name, str) and name else []
    out += [NEWLINE, (BAR, "frame")]
    if isinstance(arguments, str) and arguments:
        out += _framed(arguments, "args")
    return out + [NEWLINE, (_TOOL_ENDS["dropped" if dropped else "closed"], "frame"), NEWLINE]


def _one_line(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
