"""The one rule for showing log text (dshctl.textsafe) and the output helpers built on it."""

from __future__ import annotations

import json

from dshctl import output, stdio, tables
from dshctl.errors import FormatError
from dshctl.textsafe import escape_json_bytes, escape_json_text, visible, visible_line, visible_raw_line

ESCAPES = "\x1b]0;title\x07\x1b[2J\x1b]52;c;SGk=\x07"


def test_visible_shows_controls_as_pictures_and_keeps_line_breaks():
    assert visible("a" + ESCAPES + "b") == "a␛]0;title␇␛[2J␛]52;c;SGk=␇b"
    assert visible("one\r\ntwo\tthree\n") == "one\ntwo\tthree\n"
    assert visible("\x00\x08\x7f\x9b\x85") == "␀␈␡\ufffd\ufffd"
    assert visible("\ud800") == "\ufffd"  # a lone surrogate cannot be written as UTF-8


def test_visible_line_keeps_everything_on_one_line():
    assert visible_line("a\nb\tc\rd") == "a␊b␉c␍d"
    assert visible_line(None) == "" and visible_line(42) == "42"
    assert visible_line("abcdef", limit=4) == "abc…"
    text = "plain text, ünïcode, 漢字 [bold]"
    assert visible(text) is text and visible_line(text) is text


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_bidirectional_formatting_characters_are_shown_by_name_and_kept_in_json():
    shown = "<U+061C><U+200E><U+200F><U+202A><U+202B><U+202C><U+202D><U+202E><U+2066><U+2067><U+2068><U+2069>"
    assert visible("a" + BIDI + "\nb") == "a" + shown + "\nb"
    assert visible_line("title \u202egnp.exe") == "title <U+202E>gnp.exe"
    assert visible_raw_line(("x" + BIDI).encode()) == ("x" + shown).encode()
    assert visible("שלום עולם مرحبا") == "שלום עולם مرحبا"  # right-to-left text itself is untouched
    assert json.loads(output.to_json({"t": BIDI})) == {"t": BIDI}


def test_json_escapes_del_and_c1_keeping_the_value():
    value = {"k": "a\x1b\x7f\x9b\x85é©"}
    encoded = output.to_json(value)
    assert b"\x7f" not in encoded and b"\xc2\x9b" not in encoded and b"\xc2\x85" not in encoded
    assert json.loads(encoded) == value
    assert escape_json_bytes("é©".encode()) == "é©".encode()
    assert json.loads(escape_json_text(json.dumps(value, ensure_ascii=False))) == value


def test_ndjson_escapes_too(capsysbinary):
    output.emit_ndjson([{"a": "\x9b"}, {"b": "\x7f"}])
    out = capsysbinary.readouterr().out
    assert out == b'{"a":"\\u009b"}\n{"b":"\\u007f"}\n'


def test_table_cells_title_and_caption_are_literal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    hostile = "[/x] [link=http://e]L[/link] :smile: [blink]b" + ESCAPES
    tables.print_table(hostile, [(hostile, "left")], [[hostile], [None]], caption=hostile)
    out = capsys.readouterr().out
    assert out.count("[/x] [link=http://e]L[/link] :smile: [blink]b␛]0;title␇␛[2J") == 4
    assert "\x1b" not in out and "\x07" not in out


def test_warnings_and_errors_show_controls_as_pictures(capsys):
    stdio.warn("title " + ESCAPES + "\nnext")
    assert capsys.readouterr().err == "dshctl: warning: title ␛]0;title␇␛[2J␛]52;c;SGk=␇␊next\n"
    line = stdio.error_line(FormatError("bad " + ESCAPES, file="a\x1b.jsonl", line=3))
    assert line == "dshctl: error: a␛.jsonl:3: bad ␛]0;title␇␛[2J␛]52;c;SGk=␇"
