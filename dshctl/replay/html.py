"""``replay --export FILE.html``: one self-contained page that replays the session at its recorded timing.

The page is the project's own HTML, CSS and JavaScript (``page/``, shipped as package data) around the
session's **page data**: a JSON document built here from the timeline's items, deflated and embedded
as base64 (the browser inflates it with ``DecompressionStream``). Nothing else goes in: no CDN, no
request of any kind; a Content-Security-Policy meta tag allows only the page's own inline script and
style (by hash), ``data:`` images and the page's own ``data:`` font of the symbols common fonts lack
(:mod:`.glyphs_generate`).

**What the data holds** (``format`` :data:`PAGE_FORMAT`):

* ``dt`` — per fragment, the milliseconds since the fragment before it on the timeline's axis (the first
  is 0). The page's clock is :class:`~dshctl.replay.transform.PlaybackClock`'s rule applied to them:
  every gap longer than the idle limit capped to it, seconds summed from fragment 0 — the terminal
  player's clock, so ``seek(t)`` shows exactly the fragments the player shows at ``t``;
* ``items`` — one record per timeline item (consecutive streamed items of one block merged into one
  run), in fragment order: ``k`` kind, ``s`` first fragment, ``n`` fragment count (runs), ``b`` the
  block (an index into ``blocks``) for everything of a content block, and what the kind shows:
  ``x`` streamed or whole text and ``l`` the length of each fragment of a run (UTF-16 code units, as
  JavaScript slices strings); ``g`` the view's wording of a one-line event (the session line, a tool
  result's header) as ``[text, style]`` segments; ``u`` and ``label`` of a turn; ``lines`` of a prompt or
  tool result (``err``: an error result); ``hd`` a whole reasoning block shows its header; ``name``,
  ``args``, ``end``, ``foot`` of a tool-call block (``dr``: a max-tokens finish dropped the call after its
  frame closed); ``drop`` ``[block, words]`` on the item whose output closed the frame of a call that a
  max-tokens finish then dropped (the terminal says so in that item's layout marks; the page on the
  call's node); ``ph`` a placeholder; ``im`` embedded image keys.
  The interleaved blocks of one message (a :data:`~.items.BLOCKS` item, its parts in a
  :class:`~.items.Region`) are no record of their own: each part is one, in fragment order like every
  other, with ``rg`` its region (numbered from 0) and ``o`` its block's rank in the message's block order
  (:mod:`.layout`'s: first seen, as the assembler orders them), which is where the page places the
  block's node among the region's, whichever block streamed first;
* ``blocks`` — ``[type, settlement seq, block index]`` per content block: each block is one node on
  the page that grows as its fragments arrive, wherever its fragments interleave with other blocks';
* ``fig`` — per turn number, dsh's figures from the stats library (TTFT, duration, tokens, cost when
  priced; :func:`turn_figures`);
* ``im`` — with ``--embed-images``, the verified pictures as ``data:`` URLs, by attachment id;
* ``session``, ``title``, ``idle``, ``speed``, ``start``.

Every string from the log is made visible (:mod:`dshctl.textsafe`) here, before anything is encoded, and
was redacted as the timeline was built (:mod:`.redact`: ``--redact`` is the same in every output; the
log's header, which is no item, through the timeline's redactor); the page inserts text only as text.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, TextIO

from ..textsafe import visible, visible_line
from . import view
from .items import (
    BLOCK,
    BLOCK_END,
    REASONING,
    STREAMED_KINDS,
    TEXT,
    THINKING,
    TOOL_ARGS,
    TOOL_END,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_START,
    TURN,
    USER,
    Item,
    Prefix,
)
from .timeline import Timeline

PAGE_FORMAT = "dshctl-replay-html/1"
_BLOCK_TYPES = {REASONING: "reasoning", THINKING: "reasoning", TEXT: "text", TOOL_ARGS: "tool", TOOL_START: "tool",
                TOOL_NAME: "tool", TOOL_END: "tool"}


@dataclass(frozen=True)
class HtmlOptions:
    """What only the HTML export takes: pictures and costs (redaction is the timeline's: :mod:`.redact`)."""

    embed_images: bool = False
    store: Path | None = None
    """``--store DIR`` for ``--embed-images`` (default: the export's ``media/``, else dsh's store)."""
    prices: str | None = None
    """``--prices FILE``: the price table over the built-in and user ones, for the per-turn costs."""
    no_cost: bool = False
    """``--no-cost``: no costs on the page."""


# --------------------------------------------------------------------------------------------------
# Writing the page


def write_html(timeline: Timeline, out: TextIO, *, start: int = 0, idle_limit: float = 2.0, speed: float = 1.0,
               options: HtmlOptions | None = None, on_note=None) -> dict:
    """Write the page of ``timeline`` to ``out``; returns what the summary line says (sizes, counts)."""
    options = options or HtmlOptions()
    data = page_data(timeline, start=start, idle_limit=idle_limit, speed=speed,
                     figures=_figures_of(timeline, options, on_note),
                     images=_images(timeline, options.store, on_note) if options.embed_images else None)
    page = render_page(data)
    out.write(page)
    return {"bytes": len(page.encode("utf-8")), "fragments": len(timeline), "images": len(data.get("im", {}))}


def render_page(data: dict) -> str:
    """The page around ``data``: the template with its script, style, CSP and the data filled in."""
    folder = resources.files(__package__) / "page"
    template = (folder / "page.html").read_text(encoding="utf-8")
    script = (folder / "player.js").read_text(encoding="utf-8")
    style = _font_face() + (folder / "player.css").read_text(encoding="utf-8")
    for name, text in (("script", script), ("style", style)):
        if f"</{name}" in text.lower():  # the page's own code, checked anyway
            raise AssertionError(f"page/{name} holds a closing </{name}> tag")
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    encoded = base64.b64encode(zlib.compress(payload, 9)).decode("ascii")
    csp = "; ".join([
        "default-src 'none'",
        f"script-src {_hash(script)}",
        f"style-src {_hash(style)}",
        "img-src data:",
        "font-src data:",
        "base-uri 'none'",
        "form-action 'none'",
    ])
    fields = {
        "csp": html.escape(csp, quote=True),
        "title": html.escape(data["title"], quote=False),
        "style": style,
        "script": script,
        "data": encoded,
        "format": PAGE_FORMAT,
    }
    return _fill(template, fields)


def _font_face() -> str:
    """The page's own font of the symbols common fonts lack (:mod:`.glyphs_generate`): embedded, so the
    stop sign and the control pictures are never a box where the system has no glyph for them."""
    from .glyphs_font import FAMILY, UNICODE_RANGE, WOFF_BASE64

    return (f'@font-face {{ font-family: "{FAMILY}"; src: url(data:font/woff;base64,{WOFF_BASE64}) format("woff"); '
            f"unicode-range: {UNICODE_RANGE}; }}\n")


def _fill(template: str, fields: dict[str, str]) -> str:
    """``{{name}}`` → its field, in one pass (a field's text is never looked at again)."""
    out: list[str] = []
    at = 0
    while (opening := template.find("{{", at)) >= 0:
        closing = template.index("}}", opening)
        out += [template[at:opening], fields[template[opening + 2 : closing]]]
        at = closing + 2
    out.append(template[at:])
    return "".join(out)


def _hash(text: str) -> str:
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"


# --------------------------------------------------------------------------------------------------
# The page data


def page_data(timeline: Timeline, *, start: int = 0, idle_limit: float = 2.0, speed: float = 1.0,
              figures: dict | None = None, images: dict | None = None) -> dict:
    """The JSON document the page replays (see the module docstring)."""
    from ..options.window import created_ms

    timeline.ensure_all()
    items, places = _flattened(timeline.items)
    blocks = _Blocks()
    streamed = _streams(items)
    records: list[dict] = []
    image_slots = _ImageSlots(images)
    for record in _records(items, places, streamed, blocks, image_slots):
        previous = records[-1] if records else None
        if previous is not None and _continues(previous, record):
            _merge(previous, record)
        else:
            records.append(record)
    kept_images = {key: image_slots.pictures[key] for key in sorted(image_slots.used)}
    times = timeline.times
    dt = [0] * len(times)
    for i in range(1, len(times)):
        dt[i] = times[i] - times[i - 1]
    shown_turns = _turns_shown(items)
    header = timeline.session
    session = {
        "id": visible_line(header["id"]),
        "version": header["version"],
        "cwd": visible_line(header["cwd"]) if header["cwd"] else None,
        "createdAt": created_ms(header["createdAt"]) if not timeline.log.fixture else None,
        "synthetic": timeline.synthetic,
    }
    title = timeline.titles[-1][1] if timeline.titles else None
    data: dict[str, Any] = {
        "format": PAGE_FORMAT,
        "title": title or f"dsh session {session['id'] or '?'}",
        "session": session,
        "idle": idle_limit,
        "speed": speed,
        "start": start,
        "dt": dt,
        "blocks": blocks.table,
        "items": records,
        "fig": {str(turn): value for turn, value in (figures or {}).items() if turn in shown_turns},
    }
    if kept_images:
        data["im"] = kept_images
    return data


def _flattened(items: list[Item]) -> tuple[list[Item], dict[int, tuple[int, int]]]:
    """The items with every region's parts in its place, in fragment order (the order they streamed), and
    the place of each part in its region's layout: ``{index: (region number, rank)}``, the rank being
    its block's place in the message's block order (an event shown among the blocks is a block of its own)."""
    flat: list[Item] = []
    places: dict[int, tuple[int, int]] = {}
    regions = 0
    for item in items:
        region = item.region
        if region is None:
            flat.append(item)
            continue
        rank_of = {index: rank for rank, block in enumerate(region.blocks) for index in block}
        for index, part in enumerate(region.parts):
            places[len(flat)] = (regions, rank_of[index])
            flat.append(part)
        regions += 1
    return flat, places


def _records(items: list[Item], places: dict, streamed: dict, blocks: "_Blocks", images: "_ImageSlots") -> Iterator[dict]:
    """Each item's record, in fragment order. A region's parts are read in its layout order (so the k-th
    picture of a message goes with its k-th image block, and its blocks are numbered as they are laid
    out) and placed in fragment order, each with its region ``rg`` and its block's rank ``o``."""
    index = 0
    while index < len(items):
        if index not in places:
            record = _record(items[index], streamed.get(index), blocks, images)
            if index and items[index].prefix is not None and items[index].prefix.dropped:
                _dropped_by_prefix(record, items[index - 1], blocks)
            yield record
            index += 1
            continue
        region = places[index][0]
        members = []
        while index < len(items) and places.get(index, (None,))[0] == region:
            members.append(index)
            index += 1
        made: dict[int, dict] = {}
        for member in sorted(members, key=lambda member: places[member][1]):  # stable: a block's parts as they streamed
            record = made[member] = _record(items[member], streamed.get(member), blocks, images)
            record["rg"], record["o"] = places[member]
        for member in members:
            yield made[member]


def _dropped_by_prefix(record: dict, previous: Item, blocks: "_Blocks") -> None:
    """A streamed call whose frame another block's output (or an event) closed before a max-tokens finish
    dropped it: the terminal says so in the closing item's marks, the page on the call's own node (the
    block of the item before, whose frame those marks close)."""
    block = blocks.ids.get(previous.block_key) if previous.block_key is not None else None
    if block is not None:
        record["drop"] = [block, view.prefix_text(Prefix(close_frame=True, dropped=True)).strip().removeprefix("╰─").strip()]


def _turns_shown(items: list[Item]) -> set[int]:
    return {item.turn for item in items if item.kind == TURN and item.turn is not None}


class _Blocks:
    """Block ids by ``block_key``, in the order the blocks first appear."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.table: list[list] = []

    def id(self, item: Item) -> int | None:
        key = item.block_key
        if key is None:
            return None
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.table)
            kind = "text" if item.kind == BLOCK else _BLOCK_TYPES.get(item.kind, "text")
            seq, index = key if isinstance(key, tuple) and len(key) == 2 else (None, None)
            self.table.append([kind, seq, index])
        return found


def _pieces(item: Item) -> list[str]:
    return list(item.fragments) if item.fragments is not None else [item.text or ""]


def _streams(items: list[Item]) -> dict[int, list[str]]:
    """Per streamed item (by index), its fragments."""
    return {index: _pieces(item) for index, item in enumerate(items) if item.kind in STREAMED_KINDS and item.info is None}


def _js_length(text: str) -> int:
    """The length of ``text`` as JavaScript counts it (UTF-16 code units: a character beyond U+FFFF is 2)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _continues(previous: dict, record: dict) -> bool:
    """Whether ``record`` is the next fragments of the run ``previous`` (same kind, block, adjacent)."""
    return ("l" in record and "l" in previous and previous["k"] == record["k"] and previous.get("b") == record.get("b")
            and previous.get("rg") == record.get("rg") and previous["s"] + previous["n"] == record["s"])


def _merge(previous: dict, record: dict) -> None:
    previous["x"] += record["x"]
    previous["l"].extend(record["l"])
    previous["n"] += record["n"]


def _segments(item: Item) -> list[list]:
    """The view's wording of a one-fragment item (its layout marks left out), as ``[text,
    style]`` pairs with adjacent pieces of one style joined and the closing line break dropped."""
    clone = copy.copy(item)
    if getattr(clone, "prefix", None) is not None:  # the terminal's layout marks are not the page's
        clone.prefix = None
    out: list[list] = []
    for text, style in view.segments(clone, 0):
        if not text:
            continue
        if out and out[-1][1] == style:
            out[-1][0] += text
        else:
            out.append([text, style])
    while out and out[-1][0].endswith("\n"):
        out[-1][0] = out[-1][0][:-1]
        if not out[-1][0]:
            out.pop()
    return out


def _record(item: Item, pieces: list[str] | None, blocks: _Blocks, images: "_ImageSlots") -> dict:
    """The page's record of one item (see the module docstring)."""
    record: dict[str, Any] = {"k": item.kind, "s": item.start}
    block = blocks.id(item)
    if block is not None:
        record["b"] = block
    if pieces is not None:  # streamed text: a run, or one delta
        record["n"] = len(pieces)
        record["x"] = "".join(pieces)
        record["l"] = [_js_length(piece) for piece in pieces]
    else:
        _FILLS.get(item.kind, _event)(record, item, images)
    return record


def _event(record: dict, item: Item, images) -> None:
    """Every one-line event (and the session line), as the view words it."""
    record["g"] = _segments(item)


def _turn(record: dict, item: Item, images) -> None:
    record["u"] = item.turn
    record["label"] = f"turn {item.turn}" if item.turn is not None else "turn"


def _prompt(record: dict, item: Item, images) -> None:
    record["lines"] = [visible(line) for line in item.info["lines"]]
    images.attach(record, item, "user")


def _tool_result(record: dict, item: Item, images) -> None:
    info = item.info
    record["g"] = _first_line(_segments(item))
    record["lines"] = [visible(line) for line in info["lines"] or []]
    record["err"] = bool(info["isError"])
    images.attach(record, item, "tool-result")


def _nothing(record: dict, item: Item, images) -> None:
    """A block's header or end, shown by the block's node itself."""


def _whole_reasoning(record: dict, item: Item, images) -> None:
    record["x"] = visible(item.info["text"])
    record["hd"] = bool(item.info.get("header"))


def _tool_start(record: dict, item: Item, images) -> None:
    if item.info is not None:  # a whole tool-call block
        _tool_whole(record, item.info)
        _dropped_foot(record, item)


def _dropped_foot(record: dict, item: Item) -> None:
    """A whole call that a max-tokens finish dropped (dsh never ran it): the view's words for it."""
    if item.info.get("dropped"):
        record["foot"] = view.body_text(item).rstrip().rsplit("\n", 1)[-1].removeprefix("╰─").strip()


def _tool_name(record: dict, item: Item, images) -> None:
    record["name"] = _name(item.info.get("name"))


def _tool_end(record: dict, item: Item, images) -> None:
    end = record["end"] = item.info["end"]
    if item.info.get("dropped"):
        record["dr"] = True
    if end == "whole":
        _tool_whole(record, item.info)
        _dropped_foot(record, item)
    else:  # the view's words for how the call ended, without its frame
        record["foot"] = view.body_text(item).strip().removeprefix("╰─").strip()


def _tool_whole(record: dict, info: dict) -> None:
    record["name"] = _name(info.get("name"))
    record["args"] = _arguments(info.get("arguments"))


def _whole_block(record: dict, item: Item, images) -> None:
    info = item.info
    if info.get("type") == "text":
        record["x"] = visible(info["text"])
        return
    record["ph"] = visible_line(info.get("placeholder"))
    if info.get("type") == "image":
        images.attach(record, item, "assistant")


_FILLS = {
    TURN: _turn,
    USER: _prompt,
    TOOL_RESULT: _tool_result,
    THINKING: _nothing,
    BLOCK_END: _nothing,
    REASONING: _whole_reasoning,
    TOOL_START: _tool_start,
    TOOL_NAME: _tool_name,
    TOOL_END: _tool_end,
    BLOCK: _whole_block,
}
"""What a record holds besides kind and place, by item kind; every other kind is a one-line event."""


def _first_line(segments: list[list]) -> list[list]:
    """The segments before the first line break, the frame's opening glyph left out."""
    out: list[list] = []
    for text, style in segments:
        head, newline, _ = text.partition("\n")
        if head:
            out.append([head, style])
        if newline:
            break
    if out and out[0][0].startswith("╭─"):
        out[0][0] = out[0][0][2:].lstrip()
        if not out[0][0]:
            out.pop(0)
    return out


def _name(value: Any) -> str | None:
    return visible_line(value) if isinstance(value, str) and value else None


def _arguments(value: Any) -> str:
    return visible(value) if isinstance(value, str) else ""


# --------------------------------------------------------------------------------------------------
# Per-turn figures (the stats library)


def turn_figures(record: Any) -> dict:
    """What the page shows beside a turn, from one ``stats --by turn`` record: the one place that reads
    the stats library's record (a dict today; a msgspec Struct with the same JSON names tomorrow)."""
    if not isinstance(record, dict):
        import msgspec

        record = msgspec.to_builtins(record)
    costs = record.get("costs") if isinstance(record.get("costs"), dict) else {}
    figures = {
        "ttft": record.get("ttftMs"),
        "dur": record.get("durationMs"),
        "in": record.get("billedInputTokens"),
        "out": record.get("outputTokens"),
        "tps": record.get("tokensPerSecond"),
        "cost": costs.get("total") if costs.get("currency") else None,
        "cur": costs.get("currency"),
        "steps": record.get("steps"),
        "inh": bool(record.get("inherited")),
    }
    return {key: value for key, value in figures.items() if value is not None and value is not False}


def page_prices(options: HtmlOptions, on_note=None):
    """The price table of the page's costs: none with ``--no-cost``; ``--prices FILE`` that cannot be read
    is an error (as in ``stats``); the user's table that cannot be read, a note and no costs."""
    from ..errors import DshctlError
    from ..stats.prices import load_prices

    if options.no_cost:
        return None
    if options.prices is not None:
        table = load_prices(options.prices)
    else:
        try:
            table = load_prices()
        except (ValueError, OSError, DshctlError) as exc:
            if on_note is not None:
                on_note(f"no costs on the page: {exc}")
            return None
    return table if table.models else None


class FiguresLog:
    """A log read for a page: the timeline is built from it (it answers as the log does), and every event
    the timeline reads also goes through dsh's stats fold, so the page's per-turn figures come from the
    same read of the log — standard input included — instead of a second one."""

    def __init__(self, log, options: HtmlOptions | None = None, *, on_note=None) -> None:
        from ..stats import stats_fold

        self._log = log
        self._fold = stats_fold(log, prices=page_prices(options or HtmlOptions(), on_note), keep_turns=True)
        self._read = False

    def __getattr__(self, name: str):
        return getattr(self._log, name)

    def events(self):
        feed = self._fold.feed
        for event in self._log.events():
            feed(event)
            yield event
        self._read = True

    def figures(self) -> dict[int, dict] | None:
        """By turn number, once the timeline has read the whole log (None before)."""
        from ..stats.results import folded_stats

        if not self._read:
            return None
        self._fold.finish()
        return _by_turn(folded_stats(self._log, self._fold, by="turn", salvage=self._log.salvage).turns)


def _figures_of(timeline: Timeline, options: HtmlOptions, on_note) -> dict[int, dict]:
    read = timeline.log.figures() if isinstance(timeline.log, FiguresLog) else None
    return read if read is not None else session_figures(timeline, options=options, on_note=on_note)


def _by_turn(records) -> dict[int, dict]:
    figures: dict[int, dict] = {}
    for record in records or []:
        turn = record.get("turn") if isinstance(record, dict) else getattr(record, "turn", None)
        if isinstance(turn, int):
            figures[turn] = turn_figures(record)
    return figures


def session_figures(timeline: Timeline, *, options: HtmlOptions | None = None, on_note=None) -> dict[int, dict]:
    """dsh's per-turn figures of the timeline's log, read again, by turn number, for a timeline not built
    from a :class:`FiguresLog` ({} when the log cannot be read again: standard input is read once)."""
    log = timeline.log
    if log.ref.reads_stdin:
        if on_note is not None:
            on_note("per-turn figures need a log file; standard input is read once")
        return {}
    from ..errors import DshctlError
    from ..options import StatsOptions
    from ..stats import log_stats

    prices = page_prices(options or HtmlOptions(), on_note)
    try:
        result = log_stats(log.ref, StatsOptions(by="turn", salvage=log.salvage), prices=prices)
    except DshctlError as exc:  # the log changed since it was read
        if on_note is not None:
            on_note(f"no per-turn figures: {exc}")
        return {}
    return _by_turn(result.turns)


# --------------------------------------------------------------------------------------------------
# Pictures (--embed-images)


def _images(timeline: Timeline, store_dir: Path | None, on_note) -> dict:
    """``{(seq, where): [attachment id …]}`` and the verified pictures, as :class:`_ImageSlots` reads
    them: ``{"refs": …, "pictures": {id: data URL}}``."""
    from ..images import default_store, detect_store, scan_log, verify
    from ..images.scan import ID_PATTERN
    from ..images.store import MEDIA_EXTENSIONS, probe_image
    from ..reader import open_log

    log = timeline.log
    if log.ref.reads_stdin:
        if on_note is not None:
            on_note("--embed-images needs a log file; standard input is read once")
        return {"refs": {}, "pictures": {}}
    from ..options import ReplayOptions

    how = ReplayOptions.fields["store"].long
    log_path = None if log.ref.path is None else Path(log.ref.path)
    store = detect_store(store_dir, how=how) if store_dir is not None else default_store(log_path, archive=log.ref.archive)
    scan = scan_log(open_log(log.ref, salvage=log.salvage))
    refs: dict[tuple, list[str]] = {}
    pictures: dict[str, str] = {}
    missing = 0
    try:
        for ref in scan.refs:
            where = {"user": "user", "tool-result": "tool-result", "assistant-stream": "assistant", "attempt-stream": "assistant",
                     "assistant-content": "assistant-content", "attempt-content": "assistant-content"}.get(ref.where)
            identifier = ref.attachment_id
            if where is None or not isinstance(identifier, str):
                continue
            refs.setdefault((ref.seq, where), []).append(identifier)
            if identifier in pictures:
                continue
            match = ID_PATTERN.fullmatch(identifier)
            if match is None:
                continue
            status, data, _ = store.read(match.group(1), ref.declared("mediaType"))
            if status != "ok" or data is None or verify(ref, match.group(1), data) is not None:
                missing += 1
                continue
            probed = probe_image(data)
            if probed is None or probed[0] not in MEDIA_EXTENSIONS:
                missing += 1
                continue
            pictures[identifier] = f"data:{probed[0]};base64," + base64.b64encode(data).decode("ascii")
    finally:
        store.close()
    if missing and on_note is not None:
        on_note(f"{missing} picture(s) not embedded: not in the store {store.path} or not matching their id")
    return {"refs": refs, "pictures": pictures}


class _ImageSlots:
    """Which picture goes with which item: an event's image references in log order — a prompt or a
    tool result shows all of its own, the k-th image block of a settlement its k-th."""

    def __init__(self, images: dict | None) -> None:
        self.refs = images["refs"] if images else {}
        self.pictures = images["pictures"] if images else {}
        self.taken: dict[tuple, int] = {}
        self.used: set[str] = set()

    def attach(self, record: dict, item: Item, where: str) -> None:
        if not self.pictures or item.seq is None:
            return
        if where == "assistant":
            ids = self.refs.get((item.seq, "assistant")) or self.refs.get((item.seq, "assistant-content"), [])
            k = self.taken.get((item.seq, where), 0)
            self.taken[(item.seq, where)] = k + 1
            ids = ids[k : k + 1]
        else:
            ids = self.refs.get((item.seq, where), [])
        shown = [identifier for identifier in ids if identifier in self.pictures]
        if shown:
            record["im"] = shown
            self.used.update(shown)
