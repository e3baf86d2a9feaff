"""Exports of a timeline: asciicast v2/v3, a markdown transcript, the timeline as NDJSON.

Casts carry the transcript (:mod:`.transcript`) fragment by fragment at the recorded times (real
per-fragment cadence, seconds from the first exported fragment), with every ``\\n`` written as
``\\r\\n``, plus a marker (``"m"`` event) at each turn header and each ``tool/call``. Idle pauses are
kept in the file; the header's ``idle_time_limit`` (from ``--idle-limit``) tells players to compress
them, so the file stays faithful and playback stays brisk. asciinema 2.x plays v2 (``asciinema play``,
``asciinema cat``); asciinema 3.x, the web player and agg play both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from .items import (
    ATTEMPT_FAILED,
    BLOCK,
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
    shown,
)
from .timeline import Timeline
from ..textsafe import escape_json_text, visible, visible_line
from . import layout, view
from .frames import terminal_output
from ..humanize import format_clock

DEFAULT_COLS = 100
DEFAULT_ROWS = 30


def _dump(value: Any) -> str:
    """One JSON value; log strings are kept, control characters escaped (DEL and C1 too)."""
    return escape_json_text(json.dumps(value, ensure_ascii=False))


def cast_header(timeline: Timeline, *, version: int, cols: int, rows: int, idle_limit: float) -> dict:
    header: dict[str, Any] = {"version": version}
    if version == 2:
        header["width"] = cols
        header["height"] = rows
    else:
        header["term"] = {"cols": cols, "rows": rows, "type": "xterm-256color"}
    session = timeline.session
    created = session["createdAt"]
    if isinstance(created, int) and not isinstance(created, bool) and created > 10**11:
        header["timestamp"] = created // 1000
    if idle_limit > 0:
        header["idle_time_limit"] = idle_limit
    title = timeline.titles[-1][1] if timeline.titles else None
    session_id = session["id"]
    header["title"] = title or (f"dsh session {visible_line(session_id)}" if session_id else "dsh session")
    if version == 2:
        header["env"] = {"TERM": "xterm-256color"}
    return header


def cast_events(timeline: Timeline, start: int = 0, *, color: bool = True, cols: int = DEFAULT_COLS, rows: int = DEFAULT_ROWS) -> Iterator[tuple[float, str, str]]:
    """``(seconds from the first exported fragment, code, data)``: ``"o"`` output and ``"m"`` markers,
    the output being what a ``cols``×``rows`` terminal is sent to show the replay as the player does
    (:mod:`.frames`)."""
    timeline.ensure(start + 1)
    if start >= len(timeline):
        return
    base = timeline.times[start]
    markers: dict[int, str] = {}
    for item in timeline.items:
        if item.marker is not None and item.start >= start:
            markers[item.start] = item.marker
    for fragment, text in terminal_output(timeline, start, color=color, cols=cols, rows=rows):
        seconds = (timeline.times[fragment] - base) / 1000
        if marker := markers.get(fragment):
            yield seconds, "m", marker
        if text:
            yield seconds, "o", text.replace("\n", "\r\n")


def write_cast(timeline: Timeline, out: TextIO, *, version: int = 2, start: int = 0, cols: int = DEFAULT_COLS, rows: int = DEFAULT_ROWS, idle_limit: float = 2.0, color: bool = True) -> int:
    """Write an asciicast v2 (absolute times) or v3 (intervals) file; returns the number of events."""
    timeline.ensure_all()
    out.write(_dump(cast_header(timeline, version=version, cols=cols, rows=rows, idle_limit=idle_limit)) + "\n")
    previous = 0.0
    count = 0
    lines: list[str] = []
    for seconds, code, data in cast_events(timeline, start, color=color, cols=cols, rows=rows):
        if version == 2:
            stamp = seconds
        else:
            stamp = seconds - previous
            previous = seconds
        lines.append(f"[{stamp:.6f}, {_dump(code)}, {_dump(data)}]")
        count += 1
        if len(lines) >= 1024:
            out.write("\n".join(lines) + "\n")
            lines.clear()
    if lines:
        out.write("\n".join(lines) + "\n")
    return count


# --------------------------------------------------------------------------------------------------
# NDJSON: the timeline itself

NDJSON_INFO: dict[str, tuple[str, ...]] = {
    SESSION: ("id", "version", "cwd", "createdAt"),
    USER: ("text",),
    CONTEXT: ("source",),
    COMMAND: ("name",),
    TITLE: ("title",),
    BLOCK: ("type",),
    REASONING: ("type",),
    ATTEMPT_FAILED: ("code", "message", "kind"),
    TOOL_CALL: ("name", "callId", "arguments"),
    TOOL_RESULT: ("name", "callId", "isError"),
    RETRY: ("retry", "code"),
    TURN_END: ("reason",),
    TOOL_NAME: ("name",),
    TOOL_START: ("name", "dropped"),
    TOOL_END: ("dropped",),
    NOTE: ("cwd",),
}
"""The ``info`` keys an item record carries, by kind: the export's own schema (an item holds more, for
the view; a tool result's lines are in its ``text``)."""


def timeline_records(timeline: Timeline, start: int = 0) -> Iterator[dict]:
    """A header record, then one record per item (runs keep their fragments and per-fragment offsets)."""
    timeline.ensure_all()
    session = timeline.session
    origin = timeline.origin
    yield {
        "type": "replay/timeline",
        "session": session["id"],
        "generation": session["version"],
        "origin": origin,
        "originIsEpochMs": not timeline.log.fixture and origin > 10**11,
        "fragments": len(timeline),
        "items": len(timeline.items),
        "durationMs": timeline.duration_ms,
        "turns": timeline.max_turn,
        "syntheticTiming": timeline.synthetic,
        "start": start,
    }
    for item in timeline.items:
        if item.start + item.count <= start:
            continue
        yield _item_record(timeline, item)


def _item_record(timeline: Timeline, item: Item) -> dict:
    """One item's record; a region's parts are its ``parts``, in layout order, each with its ``block``
    (the block index; absent for an event shown among the blocks) and the fragments it covers."""
    origin = timeline.origin
    times = timeline.times
    record: dict[str, Any] = {
        "type": "replay/item",
        "kind": item.kind,
        "fragment": item.start,
        "count": item.count,
        "t": times[item.start] - origin,
        "turn": item.turn,
        "step": item.step,
        "seq": item.seq,
    }
    if item.synthetic:
        record["synthetic"] = True
    if item.marker is not None:
        record["marker"] = item.marker
    if item.region is not None:
        if item.prefix is not None:
            record["lead"] = view.prefix_text(item.prefix)
        parts = []
        for part in layout.in_order(item):
            entry = _item_record(timeline, part)
            del entry["type"], entry["turn"], entry["step"], entry["seq"]
            if part.block_key is not None:
                entry["block"] = part.block_key[1]
            parts.append(entry)
        record["parts"] = parts
        return record
    if item.fragments is not None:
        record["fragments"] = list(item.fragments)
        record["offsets"] = [times[item.start + k] - origin for k in range(item.count)]
        if item.prefix is not None:
            record["lead"] = view.prefix_text(item.prefix)
    else:
        record["text"] = view.text(item, 0)
    info = {key: shown(item.info, key) for key in NDJSON_INFO.get(item.kind, ()) if key in item.info} if item.info else None
    if info:
        record["info"] = info
    return record


def write_ndjson(timeline: Timeline, out: TextIO, start: int = 0) -> int:
    count = 0
    for record in timeline_records(timeline, start):
        out.write(_dump(record) + "\n")
        count += 1
    return count


# --------------------------------------------------------------------------------------------------
# Markdown
#
# The document is built from the items' meaning — kind, info and the log text — never from the screen's
# drawing: only the one-line events (notes, retries, failures, turn ends) are worded as the view words them.
# Prose the model or the user wrote (prompts, assistant text, reasoning) stays markdown — emphasis, lists,
# headings, code spans and fences — but never HTML and never a link (:func:`_prose`).
# Everything else from the log cannot become markup: names and ids go in code spans, titles and notes
# are backslash-escaped, tool arguments and results go in fences; the fence or span delimiter is a
# backtick run longer than any in the text, so the text cannot close it. Control characters become
# pictures (the whole document passes through textsafe.visible).

_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]<>&~|#])")
_BACKTICK_RUN = re.compile("`+")


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)


def _fence(text: str, lang: str = "") -> str:
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _code(value: Any) -> str:
    """An inline code span holding ``value`` on one line, literally."""
    text = visible_line(value) or "?"
    ticks = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _literal(text: str) -> str:
    """``text`` shown as written: every character markdown or HTML would act on is backslash-escaped."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", visible_line(text))


_PROSE_ESCAPES = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "[": "\\[", "]": "\\]"}
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_QUOTE_MARKERS = re.compile(r"(?:[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*>)+")
"""Blockquote markers at a line's start (after list markers): block structure, kept."""
_BLANK_AT = re.compile(r"(?=(\n[ \t>]*\n))")
"""Every place a blank line starts, overlapping ones too."""
_RENDERED_TAGS = re.compile(r"<(?!/?(?:p|em|strong|code|pre|blockquote|ul|li|h[1-6]|ol)>|ol start=\"\d+\">|code class=\"language-[^\"<>]*\">|hr />|br />)")
"""A tag a CommonMark renderer makes of markdown without HTML or links; any other means HTML got through."""


def _prose(text: str) -> str:
    """Markdown the model or the user wrote, kept as markdown but never HTML or a link: outside code
    spans and code blocks (where text is literal already) ``<``, ``>`` and ``&`` become entities and
    ``[``, ``]`` backslash escapes, so no tag, autolink, link or image is left; a backslash escape the
    text has is kept whole. The code blocks are found by a CommonMark parser (markdown-it, which rich
    brings); the result is rendered once more, and if anything but plain markdown's tags comes out
    (a code span found where the renderer finds none), the text is fenced whole instead."""
    from markdown_it import MarkdownIt

    if not any(c in text for c in "<>&[]"):
        return text
    lines = text.split("\n")
    code = [False] * len(lines)
    for token in MarkdownIt("commonmark", {"html": False}).disable("reference").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            for number in range(*token.map):
                code[number] = True
    out: list[str] = []
    prose: list[str] = []
    for line, literal in zip(lines, code):
        if literal:
            if prose:
                out.append(_prose_inline("\n".join(prose)))
                prose = []
            out.append(line)
        else:
            prose.append(line)
    if prose:
        out.append(_prose_inline("\n".join(prose)))
    escaped = "\n".join(out)
    if _RENDERED_TAGS.search(MarkdownIt("commonmark").render(escaped)):
        return _fence(text)
    return escaped


def _prose_inline(text: str) -> str:
    """:func:`_prose` for lines outside code blocks: code spans (CommonMark's backtick strings, not
    across a blank line) and backslash escapes kept, blockquote markers kept, the rest escaped."""
    out: list[str] = []
    closers = _closing_runs(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if i == 0 or text[i - 1] == "\n":
            marker = _QUOTE_MARKERS.match(text, i)
            if marker:
                out.append(marker.group())
                i = marker.end()
                continue
        if c == "\\" and i + 1 < n and text[i + 1] in _ASCII_PUNCTUATION:
            out.append(text[i : i + 2])
            i += 2
        elif c == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            end = closers(i, j)
            out.append(text[i:end])
            i = end
        else:
            out.append(_PROSE_ESCAPES.get(c, c))
            i += 1
    return "".join(out)


def _closing_runs(text: str) -> Callable[[int, int], int]:
    """``close(i, j)``: where the code span opened by the backtick run ``text[i:j]`` ends — after the
    next run of the same length, unless a blank line comes before it — else ``j``. Indexed once per
    text (runs by length, blank lines by where they start), so a text of many unmatched runs stays
    linear where a scan per opener was quadratic."""
    from bisect import bisect_left, bisect_right

    by_length: dict[int, list[int]] = {}
    for run in _BACKTICK_RUN.finditer(text):
        by_length.setdefault(run.end() - run.start(), []).append(run.start())
    blanks = [(match.start(), match.start() + len(match.group(1))) for match in _BLANK_AT.finditer(text)]
    blank_starts = [start for start, _ in blanks]

    def close(i: int, j: int) -> int:
        starts = by_length.get(j - i, [])
        k = bisect_right(starts, i)
        if k == len(starts):
            return j
        closer = starts[k]
        b = bisect_left(blank_starts, j)  # the blank line starting first at or after the opener ends first
        if b < len(blanks) and blanks[b][1] <= closer:
            return j
        return closer + (j - i)

    return close


def _prompt(info: dict) -> str:
    """A prompt as markdown: what the user wrote stays markdown, a placeholder (an attachment's name and
    size) is metadata from the log, escaped as a title is, in a paragraph of its own (a code span or HTML
    block the prose leaves open ends at the blank line before it)."""
    parts, placeholders = info.get("parts"), info.get("placeholders")
    if parts is None or not placeholders:
        return _prose(info.get("text", ""))
    chunks: list[str] = []
    prose: list[str] = []
    for n, part in enumerate(parts):
        if n in placeholders:
            if prose:
                chunks.append(_prose("\n".join(prose)))
                prose = []
            chunks.append(_literal(part))
        else:
            prose.append(part)
    if prose:
        chunks.append(_prose("\n".join(prose)))
    return "\n\n".join(chunks)


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def markdown(timeline: Timeline, start: int = 0) -> str:
    """A readable markdown transcript: turns as sections, reasoning folded, tools fenced."""
    timeline.ensure_all()
    document = _Markdown(timeline)
    for item in timeline.items:
        if item.start + item.count <= start:
            continue
        if item.region is not None:  # interleaved blocks: each once, whole, in the message's order
            for part in layout.in_order(item):
                document.add(part, first=0)
        else:
            document.add(item, first=max(start - item.start, 0))
    document.flush()
    return visible("\n".join(document.lines).rstrip("\n") + "\n")


_NOTE_KINDS = frozenset({CONTEXT, TITLE, NOTE, COMMAND, RETRY, RETRY_STARTED, ATTEMPT_FAILED, INTERRUPTED, TURN_END, BLOCK})
"""Kinds written as an emphasised line (the view's wording), further lines as a list."""


class _Markdown:
    """The document so far (``lines``), and the streamed text of the block being read: gathered until
    the block ends, then written — prose as it is, reasoning folded, tool arguments fenced."""

    def __init__(self, timeline: Timeline) -> None:
        session = timeline.session
        title = timeline.titles[-1][1] if timeline.titles else None
        meta = [f"session {_code(session['id'])}", f"log v{session['version']}"]
        if session["cwd"]:
            meta.append(f"cwd {_code(session['cwd'])}")
        if timeline.synthetic:
            meta.append("synthetic timing")
        self.lines: list[str] = [f"# {_literal(title or 'dsh session ' + str(session['id']))}", "", " · ".join(meta), ""]
        self.gathered: list[str] = []
        self.gathered_kind: str | None = None
        self.gathered_block: Any = None
        self.tool_name: Any = None
        """The name of the tool call being gathered (None until its name streamed)."""
        self.dropped = False
        """The tool call being gathered was dropped by a max-tokens finish."""

    def paragraph(self, text: str) -> None:
        self.lines += [text, ""]

    def add(self, item: Item, first: int) -> None:
        """Write ``item`` from its fragment ``first`` on (0 but for the first item of an export that
        starts inside a run)."""
        kind = item.kind
        info = item.info or {}
        if item.prefix is not None and item.prefix.dropped and self.gathered_kind == TOOL_ARGS:
            self.dropped = True  # the frame this item closes was a dropped call's
        if kind in (REASONING, TEXT) and item.fragments is not None:
            self.gather(kind, item.block_key, "".join(item.fragments[first:]))
        elif kind == TOOL_ARGS:
            self.gather(TOOL_ARGS, item.block_key, "".join(item.fragments[first:]) if item.fragments is not None else item.text)
        elif kind == TOOL_NAME:
            if self.gathered_kind != TOOL_ARGS or self.gathered_block != item.block_key:
                self.flush()
                self.gather(TOOL_ARGS, item.block_key, "")
            if info.get("name"):
                self.tool_name = info["name"]
        elif kind in (THINKING, STEP):
            pass
        elif kind == TOOL_END:
            if info.get("end") == "whole":
                self.gather(TOOL_ARGS, item.block_key, info["arguments"] if isinstance(info.get("arguments"), str) else "")
                if info.get("name"):
                    self.tool_name = info["name"]
            if info.get("dropped"):
                self.dropped = True
            self.flush()
        elif kind == TOOL_START:
            self.flush()
            if info.get("name") is not None:  # a whole tool-call block shown at once
                self.gather(TOOL_ARGS, item.block_key, info["arguments"] if isinstance(info.get("arguments"), str) else "")
                self.tool_name = info["name"]
                self.dropped = bool(info.get("dropped"))
                self.flush()
            else:
                self.gather(TOOL_ARGS, item.block_key, "")
        else:
            self.flush()
            self.event(item, info)

    def event(self, item: Item, info: dict) -> None:
        """Everything but streamed text and tool-call frames."""
        kind = item.kind
        if kind == TURN:
            self.paragraph(f"## Turn {item.turn}" if item.turn is not None else "## Turn")
        elif kind == USER:
            self.paragraph("**You**")
            self.paragraph(_quote(_prompt(info)))
        elif kind == TOOL_CALL:
            self.paragraph(f"▶ running {_code(info.get('name'))}")
        elif kind == TOOL_RESULT:
            mark = "✗ error" if info.get("isError") else "✓"
            self.paragraph(f"**result** {_code(info.get('name'))} {mark}")
            self.paragraph(_fence("\n".join(info.get("lines") or [])))
        elif kind == BLOCK and info.get("type") == "text":
            self.paragraph(_prose(visible(info["text"]).strip("\n")))
        elif kind == REASONING:  # a whole block, or one delta that was not part of a run
            body = _prose(visible(info["text"] if item.info is not None else item.text).strip("\n"))
            self.paragraph("<details><summary>thinking</summary>\n\n" + body + "\n\n</details>")
        elif kind in _NOTE_KINDS:
            lines = view.body_text(item).strip("\n").split("\n")
            self.lines.append("*" + _literal(lines[0].strip()) + "*" if lines[0].strip() else "")
            self.lines += ["- " + _literal(line.strip()) for line in lines[1:]]
            self.lines.append("")

    def gather(self, kind: str, block: Any, text: str) -> None:
        """Streamed text of ``kind`` from ``block``; another kind or block writes what was gathered first."""
        if self.gathered_kind != kind or self.gathered_block != block:
            self.flush()
            self.gathered_kind = kind
            self.gathered_block = block
            self.tool_name = None
            self.dropped = False
        self.gathered.append(text)

    def flush(self) -> None:
        """Write the gathered text."""
        kind = self.gathered_kind
        if kind is None:
            return
        text = "".join(self.gathered)
        if kind == REASONING:
            if body := text.strip("\n"):
                self.paragraph("<details><summary>thinking</summary>\n\n" + _prose(body) + "\n\n</details>")
        elif kind == TEXT:
            if body := text.strip("\n"):
                self.paragraph(_prose(body))
        elif kind == TOOL_ARGS:
            self.paragraph(f"**tool call** {_code(self.tool_name)}")
            self.paragraph(_fence(text, "json"))
            if self.dropped:
                self.paragraph("*dropped: the reply was cut off by max tokens, so dsh never ran this call*")
        self.gathered.clear()
        self.gathered_kind = None
        self.gathered_block = None


def write_markdown(timeline: Timeline, out: TextIO, start: int = 0) -> None:
    out.write(markdown(timeline, start))


_SUFFIX_FORMATS = {".cast": "cast", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def export(timeline: Timeline, path: Path | None, *, start: int, cast_version: int, cols: int, rows: int, idle_limit: float, color: bool, force: bool = False,
           speed: float = 1.0, html_options=None, on_note=None, form: str | None = None) -> str:
    """Write ``path`` (None: standard output) as ``form`` says (cast, md, ndjson, html; by default what its
    suffix says), whole or not at all (an existing file only with ``force``); returns a one-line summary."""
    import contextlib
    import sys

    from ..files import new_text_file

    form = form or (_SUFFIX_FORMATS.get(path.suffix.lower(), "ndjson") if path is not None else "ndjson")
    shown = "standard output" if path is None else str(path)

    def target():
        return contextlib.nullcontext(sys.stdout) if path is None else new_text_file(path, force=force)

    if form == "html":
        from .html import write_html

        timeline.ensure_all()  # the log is read (and any error raised) before the file is created
        with target() as out:
            written = write_html(timeline, out, start=start, idle_limit=idle_limit, speed=speed, options=html_options, on_note=on_note)
        return f"wrote {shown} (replay page, {written['fragments']} fragments, {format_clock(timeline.duration_ms or 0)} recorded, {written['bytes']:,} bytes)"
    with target() as out:
        if form == "cast":
            count = write_cast(timeline, out, version=cast_version, start=start, cols=cols, rows=rows, idle_limit=idle_limit, color=color)
            return f"wrote {shown} (asciicast v{cast_version}, {count} events, {format_clock(timeline.duration_ms or 0)} recorded)"
        if form == "md":
            write_markdown(timeline, out, start)
            return f"wrote {shown} (markdown)"
        count = write_ndjson(timeline, out, start)
        return f"wrote {shown} (timeline, {count} records)"
