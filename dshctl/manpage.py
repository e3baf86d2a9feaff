"""The generated parts of ``man/dshctl.1``, the one reference: written from the code they describe.

``python -m dshctl.manpage`` rewrites, in place, every block of the man page that lies between a pair
of marker comments::

    .\\" generated: NAME (python -m dshctl.manpage); edit the code, not this block
    ...
    .\\" end generated: NAME

and leaves every other line as it is. ``--check`` rewrites nothing and exits 1 when a block differs
from the code (``tests/test_manpage.py`` does the same). The blocks:

* ``validate-rules`` — every rule of :mod:`dshctl.validate.rules`, by level: id, severity, what it
  checks, where dsh states it, the FORMAT.md sections;
* ``stats-records``, ``rollup-rows``, ``costs``, ``export-rows`` — the records of
  :mod:`dshctl.stats.records`: each record's keys in their wire order (camelCase, from the Struct's
  fields), then the rule of each key, from the Struct's docstring.

A record's docstring is its documentation here: its first paragraph introduces the record, then a
bullet list gives the keys' rules, one bullet per key or group of keys::

    * ``llmMs`` — Sum of ``step/start`` → ``assistant/message`` ...
    * ``ttftMs``, ``ttftSteps``, ``meanTtftMs`` — ...
    * ``uncachedInputTokens`` … ``outputTokens`` — (a range, in declaration order) ...

Every key of the record must be named by exactly one bullet and every bullet must name keys the
record has: a field added without its rule, or a rule left behind by a removed field, fails the
generator. Paragraphs after the list are rendered after it. ````x```` becomes bold; the few non-ASCII
characters become troff escapes.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
import typing
from dataclasses import dataclass
from pathlib import Path

from msgspec import UnsetType

from .stats import records as R

__all__ = ["COSTS", "EXPORT_ROWS", "ROLLUP_ROWS", "STATS_RECORDS", "DocError", "GeneratedBlock", "RecordDoc", "blocks",
           "main", "plain", "record_lines", "regenerate", "troff"]

MAN_PAGE = Path(__file__).resolve().parent.parent / "man" / "dshctl.1"
COMMAND = "python -m dshctl.manpage"
_BEGIN = '.\\" generated: {name} ({command}); edit the code, not this block'
_END = '.\\" end generated: {name}'
_MARKER = re.compile(r'^\.\\" (end )?generated: ([\w-]+)')


class DocError(Exception):
    """The code's documentation cannot be rendered: a key without its rule, a rule without its key."""


# -- troff ---------------------------------------------------------------------------------------

_CHARS = {
    "\\": "\\e", "-": "\\-", "'": "\\(aq", "§": "\\(sc", "—": "\\(em", "–": "\\(en", "→": "\\(->",
    "×": "\\(mu", "…": "...", "·": "\\(pc", "↑": "\\(ua", "±": "\\(+-", "^": "\\(ha", "≤": "\\(<=",
    "≥": "\\(>=", "Σ": "\\[*S]", "µ": "\\(mc",
}


def _escape(text: str) -> str:
    out = []
    for char in text:
        if char in _CHARS:
            out.append(_CHARS[char])
        elif ord(char) > 126:
            out.append(f"\\[u{ord(char):04X}]")
        else:
            out.append(char)
    return "".join(out)


def troff(text: str) -> str:
    """A docstring paragraph as troff text: ````code```` bold and never hyphenated, characters escaped
    (one line)."""
    pieces = re.split(r"``(.+?)``", " ".join(text.split()))
    return "".join(f"\\%\\fB{_escape(piece)}\\fR" if index % 2 else _escape(piece) for index, piece in enumerate(pieces))


def _fill(text: str, width: int = 110) -> list[str]:
    """Troff text wrapped for the source's sake (troff fills it anyway); no line starts with a control
    character."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return ["\\&" + line if line[:1] in ".'" else line for line in lines]


_PLAIN = [(r"\\f[BIRP]", ""), (r"\\\(em", "—"), (r"\\\(en", "–"), (r"\\\(->", "→"), (r"\\\(mu", "×"),
          (r"\\\(sc", "§"), (r"\\\(aq", "'"), (r"\\\(pc", "·"), (r"\\\(ua", "↑"), (r"\\\(\+-", "±"), (r"\\\(ha", "^"),
          (r"\\\(<=", "≤"), (r"\\\(>=", "≥"), (r"\\\[\*S\]", "Σ"), (r"\\\(mc", "µ"), (r"\\\(bu", "•"),
          (r"\\\[u([0-9A-F]{4,5})\]", lambda m: chr(int(m.group(1), 16))), (r"\\-", "-"), (r"\\&", ""), (r"\\%", ""),
          (r"\\e", "\\\\")]


def plain(source: str) -> str:
    """Man page source as plain words: requests dropped, escapes undone, white space collapsed. For
    tests that look for a sentence in the reference (``-i`` wins over ``-S``) without rendering it."""
    kept = []
    for line in source.splitlines():
        if line.startswith(('.\\"', "'")):
            continue
        if line.startswith("."):
            request, _, rest = line.partition(" ")
            if request in (".B", ".I", ".BR", ".BI", ".IR", ".SS", ".SH", ".TP", ".IP"):
                line = rest.replace('"', "")
            else:
                continue
        kept.append(line)
    text = "\n".join(kept)
    for pattern, replacement in _PLAIN:
        text = re.sub(pattern, replacement, text)
    return " ".join(text.split())


# -- validate rules ------------------------------------------------------------------------------


def validate_rules() -> list[str]:
    from .validate.rules import BEYOND_DSH_LEVELS, LEVEL_SUMMARIES, LEVELS, RULES

    lines = [".ad l", ".RS"]
    for level in LEVELS:
        lines += [".TP", f".B {level}" + (" (beyond dsh's load)" if level in BEYOND_DSH_LEVELS else "")]
        lines += _fill(_escape(LEVEL_SUMMARIES[level][0].upper() + LEVEL_SUMMARIES[level][1:]) + ".") + [".RS"]
        for rule in RULES.values():
            if rule.level != level:
                continue
            kind = "; unreadable" if rule.fatal else "; damage rule" if rule.damage else ""
            lines += [".TP", f".B {_escape(rule.id)}",
                      f"({rule.severity}{kind}) {_escape(rule.summary)}. dsh: {_escape(rule.source)}; "
                      f"FORMAT.md {_escape(rule.section)}."]
        lines.append(".RE")
    return lines + [".RE", ".ad"]


# -- records -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordDoc:
    """One record's block: its Struct and the heading it is shown under."""

    cls: type
    title: str


def _fields(cls: type) -> list[tuple[str, str, bool]]:
    """(attribute, wire key, sometimes absent) of every field, in wire order."""
    hints = typing.get_type_hints(cls)
    absent = {name for name, hint in hints.items() if UnsetType in typing.get_args(hint)}
    return [(name, wire, name in absent) for name, wire in zip(cls.__struct_fields__, cls.__struct_encode_fields__)]


def _own_fields(cls: type, documented: set[type]) -> tuple[type | None, list[tuple[str, str, bool]]]:
    """The base whose block lists the inherited keys (None: this block lists them all) and this block's
    own fields."""
    base = next((b for b in cls.__mro__[1:] if b in documented), None)
    fields = _fields(cls)
    if base is None:
        return None, fields
    inherited = set(base.__struct_fields__)
    return base, [field for field in fields if field[0] not in inherited]


def _docstring_parts(cls: type) -> tuple[str, list[tuple[str, str]], list[str]]:
    """A docstring's intro, its bullets (key spec, text) and the paragraphs after the list."""
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    intro: list[str] = []
    bullets: list[tuple[str, str]] = []
    after: list[str] = []
    for paragraph in re.split(r"\n\s*\n", doc):
        lines = paragraph.splitlines()
        if lines and lines[0].startswith("* "):
            items: list[list[str]] = []
            for line in lines:
                if line.startswith("* "):
                    items.append([line[2:]])
                else:
                    items[-1].append(line.strip())
            for item in items:
                spec, sep, text = " ".join(item).partition(" — ")
                if not sep:
                    raise DocError(f"{cls.__name__}: a bullet names its keys before ' — ': {' '.join(item)[:60]!r}")
                bullets.append((spec, text))
        elif bullets:
            after.append(paragraph)
        else:
            intro.append(paragraph)
    return " ".join(intro), bullets, after


def _keys(cls: type, spec: str, order: list[str]) -> list[str]:
    """The wire keys a bullet names: ````a````, ````b```` and ````c```` … ````d```` (a range in ``order``)."""
    if re.sub(r"``[^`]+``|, | and | … ", "", spec):
        raise DocError(f"{cls.__name__}: a bullet's keys are ``key``s joined by ', ', ' and ' or ' … ': {spec!r}")
    keys: list[str] = []
    for part in re.split(r", | and ", spec):
        names = re.findall(r"``([^`]+)``", part)
        for name in names:
            if name not in order:
                raise DocError(f"{cls.__name__} has no key {name!r} (a bullet of its docstring names it)")
        if " … " in part:
            first, last = order.index(names[0]), order.index(names[-1])
            if last < first:
                raise DocError(f"{cls.__name__}: the range {spec!r} runs backwards")
            keys += order[first : last + 1]
        else:
            keys += names
    return keys


def record_lines(doc: RecordDoc, documented: dict[type, str]) -> list[str]:
    cls = doc.cls
    base, own = _own_fields(cls, set(documented) - {cls})
    intro, bullets, after = _docstring_parts(cls)
    if base is None:
        # a base without its own block (SessionIdentity): its bullets are this record's
        for ancestor in reversed(cls.__mro__[1:]):
            if hasattr(ancestor, "__struct_fields__") and ancestor.__dict__.get("__doc__"):
                bullets = _docstring_parts(ancestor)[1] + bullets
    order = [wire for _, wire, _ in own]
    named: dict[str, str] = {}
    rows = []
    for spec, text in bullets:
        keys = _keys(cls, spec, order)
        for key in keys:
            if key in named:
                raise DocError(f"{cls.__name__}: key {key!r} has two rules ({named[key]!r} and {spec!r})")
            named[key] = spec
        rows.append((keys, spec, text))
    missing = [key for key in order if key not in named]
    if missing:
        raise DocError(f"{cls.__name__}: no rule for {', '.join(missing)} (add a bullet to its docstring)")
    if re.search(r":(class|func|mod|data|meth|attr):", intro + " ".join(t for *_, t in rows) + " ".join(after)):
        raise DocError(f"{cls.__name__}: its docstring refers to Python objects; the man page shows it to users")

    key_list = ", ".join(f"\\%\\fB{_escape(key)}\\fR" for key in order)
    heading = f"Keys: {key_list}."
    if base is not None:
        heading = f"Keys: those of \\fB{_escape(documented[base])}\\fR, then {key_list}."
    sometimes = [wire for _, wire, absent in own if absent]
    if sometimes:
        heading += " Left out where they do not apply: " + ", ".join(f"\\%\\fB{_escape(key)}\\fR" for key in sometimes) + "."
    title = f"\\fB{_escape(doc.title)}\\fR" + ("" if intro.startswith("(") else ":")
    lines = [".PP"] + _fill(f"{title} {troff(intro)} {heading}")
    for keys, spec, text in sorted(rows, key=lambda row: order.index(row[0][0])):
        tag = re.sub(r"``([^`]+)``", r"\1", spec).replace(" … ", " ... ")
        lines += [".TP", ".B " + " ".join("\\%" + word for word in _escape(tag).split())] + _fill(troff(text))
    for paragraph in after:
        lines += [".PP"] + _fill(troff(paragraph))
    return lines


def _records(*docs: RecordDoc, elsewhere: dict[type, str] | None = None) -> list[str]:
    """The blocks of ``docs``; ``elsewhere``: records documented in another block, whose keys a
    subclass here refers to by title."""
    documented = {**(elsewhere or {}), **{doc.cls: doc.title for doc in docs}}
    lines = [".ad l"]  # long key names: justified lines would gape around them
    for doc in docs:
        lines += record_lines(doc, documented)
    return lines + [".ad"]


STATS_RECORDS = (
    RecordDoc(R.SessionRecord, "Session record"),
    RecordDoc(R.InheritedFigures, "inherited (session record)"),
    RecordDoc(R.SalvageGap, "gaps[] (session record)"),
    RecordDoc(R.SessionOwnFigures, "dshctl (session record)"),
    RecordDoc(R.Percentiles, "Percentiles"),
    RecordDoc(R.MeanPercentiles, "Percentiles with a mean"),
    RecordDoc(R.RetryWaste, "dshctl.retryWaste"),
    RecordDoc(R.ModelTotals, "dshctl.models[] (aggregate)"),
    RecordDoc(R.ModelRecord, "dshctl.models[] (session record)"),
    RecordDoc(R.ToolRecord, "dshctl.tools[] (session record)"),
    RecordDoc(R.MeterTotals, "dshctl.tokenMeter011"),
    RecordDoc(R.TurnRecord, "Turn record"),
    RecordDoc(R.StepRecord, "Step record"),
    RecordDoc(R.StepOwnFigures, "dshctl (step record)"),
    RecordDoc(R.AggregateRecord, "Aggregate"),
    RecordDoc(R.PrefixCounts, "inheritedPrefixes (aggregate)"),
    RecordDoc(R.AggregatePercentiles, "percentiles (aggregate)"),
    RecordDoc(R.AggregateOwnFigures, "dshctl (aggregate)"),
)
"""STATS RECORDS, in this order."""
ROLLUP_ROWS = (RecordDoc(R.RollupRow, "Rollup row"), RecordDoc(R.ToolRow, "Tool row"))
"""ROLLUPS."""
COSTS = (RecordDoc(R.CostRecord, "costs"),)
"""PRICES."""
EXPORT_ROWS = (
    RecordDoc(R.SettlementRecord, "Settlement row (steps table)"),
    RecordDoc(R.ToolCallRecord, "Tool call row (tool_calls table)"),
    RecordDoc(R.ImageRecord, "Image row (images table)"),
)
"""EXPORT: the rows of the tables that have no stats record of their own (the settlement row's
inherited keys are the step record's, in STATS RECORDS)."""


# -- the page ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedBlock:
    name: str
    render: typing.Callable[[], list[str]]


def blocks() -> dict[str, GeneratedBlock]:
    return {block.name: block for block in (
        GeneratedBlock("validate-rules", validate_rules),
        GeneratedBlock("stats-records", lambda: _records(*STATS_RECORDS)),
        GeneratedBlock("rollup-rows", lambda: _records(*ROLLUP_ROWS)),
        GeneratedBlock("costs", lambda: _records(*COSTS)),
        GeneratedBlock("export-rows", lambda: _records(*EXPORT_ROWS, elsewhere={R.StepRecord: "Step record"})),
    )}


def regenerate(source: str) -> str:
    """The man page with every generated block written anew from the code. Raises :class:`DocError`
    when a block's markers are missing, unbalanced or unknown."""
    known = blocks()
    out: list[str] = []
    open_block: str | None = None
    seen: list[str] = []
    for number, line in enumerate(source.splitlines(), 1):
        marker = _MARKER.match(line)
        if open_block is None:
            if marker is None:
                out.append(line)
                continue
            if marker.group(1) or marker.group(2) not in known:
                raise DocError(f"line {number}: unexpected marker {line!r}")
            open_block = marker.group(2)
            out.append(_BEGIN.format(name=open_block, command=COMMAND))
            out += known[open_block].render()
        elif marker is not None:
            if not marker.group(1) or marker.group(2) != open_block:
                raise DocError(f"line {number}: {line!r} inside the generated block {open_block}")
            out.append(_END.format(name=open_block))
            seen.append(open_block)
            open_block = None
    if open_block is not None:
        raise DocError(f"the generated block {open_block} has no end marker")
    if sorted(seen) != sorted(known):
        raise DocError(f"generated blocks: {seen}, expected each of {sorted(known)} once")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Write the generated blocks of the man page from the code.")
    parser.add_argument("page", nargs="?", type=Path, default=MAN_PAGE, help="the man page (default: man/dshctl.1 of the checkout)")
    parser.add_argument("--check", action="store_true", help="write nothing; status 1 when a block differs from the code")
    args = parser.parse_args(argv)
    source = args.page.read_text(encoding="utf-8")
    try:
        fresh = regenerate(source)
    except DocError as error:
        print(f"{COMMAND}: {args.page}: {error}", file=sys.stderr)
        return 2
    if args.check:
        if fresh != source:
            print(f"{COMMAND}: {args.page} differs from the code; run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if fresh != source:
        args.page.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
