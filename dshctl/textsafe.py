"""Text from a log is data: the one rule for showing a log string on a terminal or in a file a
terminal will show (a transcript, a cast, markdown, a table, a warning).

A JSON string can hold any code point, so a log can carry escape sequences (``ESC [ 2 J`` clears the
screen, ``ESC ] 0 ; … BEL`` retitles the window, ``ESC ] 52 ; …`` writes the clipboard), C1 controls
(U+009B is CSI to some terminals), backspaces and NULs. Every string from a log passes through
:func:`visible` (text whose line breaks are meant) or :func:`visible_line` (a field shown on one line):

* C0 controls become their control pictures, U+2400 + code (ESC → ␛, BEL → ␇, NUL → ␀); DEL → ␡;
* C1 controls (U+0080–U+009F) and lone surrogates → U+FFFD (there are no pictures for them);
* the bidirectional formatting characters — embeddings and overrides U+202A–U+202E, isolates
  U+2066–U+2069, the marks U+200E, U+200F and U+061C — are shown by name, ``<U+202E>``: invisible, they
  would reorder the text around them, the rest of a table row or line included ("Trojan Source");
  right-to-left text itself is shown as it is;
* in :func:`visible` LF and TAB stay and CR is dropped (CRLF line ends); in :func:`visible_line` they
  become ␊ ␉ ␍ too, and the line and paragraph separators U+2028 and U+2029 are shown by name
  (``<U+2028>``): with VT, FF, FS, GS, RS (pictures) and NEL (a C1 control) they are every character
  ``str.splitlines()`` breaks a line at, so a table cell, a TSV field or a one-line field holds none.

Markup is the other half of the rule: rich output is built from ``rich.text.Text`` (never parsed as
markup or emoji codes), see :func:`dshctl.tables.print_table`. JSON output keeps the exact values and
escapes instead (:func:`escape_json_bytes`).
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_MULTI_LINE_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")
_LINE_SEPARATORS = "\u2028\u2029"
_ONE_LINE_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}{_LINE_SEPARATORS}]")


def _picture(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return "\ufffd" if code < 0xA0 or 0xD800 <= code <= 0xDFFF else f"<U+{code:04X}>"


def _multi_line_picture(match: re.Match) -> str:
    return "" if match.group() == "\r" else _picture(match)


def without_cr(text: str) -> str:
    """``text`` as a terminal shows it through :func:`visible`: every CR dropped (so ``"cr\\rOVER"`` reads
    ``crOVER`` and a CRLF line ends at its LF). ``dshctl grep`` searches this text."""
    return text.replace("\r", "") if "\r" in text else text


def visible(text: str) -> str:
    """``text`` with every control character shown as a picture; line feeds and tabs kept, CR dropped."""
    if _MULTI_LINE_UNSAFE.search(text) is None:
        return text
    return _MULTI_LINE_UNSAFE.sub(_multi_line_picture, text)


def visible_line(value: object, limit: int | None = None) -> str:
    """A log value as one line: ``str(value)`` with every control character (LF, TAB and CR too) shown
    as a picture, cut to ``limit`` characters with "…". ``None`` is the empty string."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    if _ONE_LINE_UNSAFE.search(text) is None:
        return text
    return _ONE_LINE_UNSAFE.sub(_picture, text)


# in UTF-8: C0 and DEL, C1, U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069
_RAW_LINE_UNSAFE = re.compile(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def visible_raw_line(line: bytes) -> bytes:
    """A stored line (``cat --raw``) for a terminal: its bytes, unless they hold a control character,
    then :func:`visible_line` of its UTF-8 text. A sound JSON line holds none (JSON escapes them)."""
    if _RAW_LINE_UNSAFE.search(line) is None:
        return line
    return visible_line(line.decode("utf-8", "replace")).encode("utf-8")


def quoted(text: str) -> str:
    """A name from a log or an archive inside a message, in double quotes, its characters as they are:
    wherever the message is written, the one rule above shows its controls (:func:`visible_line` on a
    terminal, JSON escapes in JSON); never Python's escapes (``'a\\x1bb'``), which show no log's text."""
    return f'"{text}"'


def has_unsafe(text: str) -> bool:
    """True if :func:`visible` would change ``text``."""
    return _MULTI_LINE_UNSAFE.search(text) is not None


# JSON escapes C0 controls itself; DEL and the C1 controls are legal raw in a JSON string, so encoders
# write them as UTF-8 (C1 as C2 80…C2 9F). In UTF-8 JSON those bytes can only occur inside strings.
# The C1 pattern starts with a literal byte and DEL is tested with `in`: both are fast scans.
_RAW_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_RAW_JSON_CONTROLS_TEXT = re.compile("[\x7f-\x9f]")


def escape_json_bytes(data: bytes) -> bytes:
    """UTF-8 JSON with DEL and C1 controls written as ``\\u007f`` … ``\\u009f`` escapes (same values)."""
    if b"\x7f" in data:
        data = data.replace(b"\x7f", b"\\u007f")
    if b"\xc2" not in data or _RAW_C1.search(data) is None:  # `in` is a memchr scan, the regex is not
        return data
    return _RAW_C1.sub(lambda m: b"\\u%04x" % m.group()[1], data)


def escape_json_text(text: str) -> str:
    """:func:`escape_json_bytes` for JSON already decoded to ``str`` (``json.dumps(..., ensure_ascii=False)``)."""
    if _RAW_JSON_CONTROLS_TEXT.search(text) is None:
        return text
    return _RAW_JSON_CONTROLS_TEXT.sub(lambda m: "\\u%04x" % ord(m.group()), text)
