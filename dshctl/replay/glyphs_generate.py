"""Generate the HTML page's own font of the symbols common fonts lack (``dshctl/replay/glyphs_font.py``).

    python -m dshctl.replay.glyphs_generate            # rewrite dshctl/replay/glyphs_font.py
    python -m dshctl.replay.glyphs_generate --check    # status 1 when the committed file differs

The page shows two kinds of symbol that Debian's Chromium fonts (DejaVu, Liberation) have no glyph for,
so they showed as a box: the view's ``⏹`` (an interrupted message; ``⏸`` beside it for the player's
state) and the control pictures (U+2400-U+241F, U+2421) that :mod:`dshctl.textsafe` shows a control
character of the log as — ESC in a tool's coloured output above all. This module draws them into one
small font, which the page embeds as a ``data:`` URL (no request) and names last before the generic
family in its font stacks, limited by ``unicode-range`` to these code points: where a system font has
the glyph it is used, and otherwise this one, never a box.

The control pictures are drawn as the Unicode charts draw them, the letters of the control's name set
on a diagonal (two or three small capitals), the letters taken from DejaVu Sans Mono
(``/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf``, Debian's ``fonts-dejavu-core``); the stop and
pause signs are a square and two bars. The result keeps DejaVu's metrics (its monospace advance), so a
monospaced line stays aligned. DejaVu's fonts are Bitstream Vera's, under its licence (modified copies
may be distributed under another name, with its notice): the font is named ``dshctl glyphs`` and carries
the notice in its name table. Needs fontTools (``pip install fonttools``), never at run time.
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
import textwrap
from pathlib import Path

SOURCE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
TARGET = Path(__file__).with_name("glyphs_font.py")
FAMILY = "dshctl glyphs"

CONTROL_NAMES = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
"""The C0 controls' abbreviations, code 0 to 31: U+2400 + code pictures each; DEL is U+2421."""

STOP, PAUSE = 0x23F9, 0x23F8


def codepoints() -> list[int]:
    """Every code point the font draws, ascending."""
    return sorted([0x2400 + code for code in range(32)] + [0x2421, PAUSE, STOP])


def build() -> bytes:
    """The font as WOFF (zlib; deterministic: no timestamps)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.recordingPen import DecomposingRecordingPen
    from fontTools.pens.transformPen import TransformPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import TTFont

    source = TTFont(SOURCE)
    letters = source.getGlyphSet()
    cmap = source.getBestCmap()
    upm = source["head"].unitsPerEm
    advance = source["hmtx"][cmap[ord("A")]][0]
    ascent, descent = source["hhea"].ascent, source["hhea"].descent
    cap = 1493 * upm // 2048  # DejaVu's capital height

    def letters_glyph(name: str):
        """The letters of ``name`` on a diagonal, top left to bottom right, from the baseline to a
        little above the capitals: half size for two, 0.42 for three."""
        pen = TTGlyphPen(None)
        scale = 0.5 if len(name) < 3 else 0.42
        step = advance * (1 - scale) / (len(name) - 1)
        top = cap * 1.2 - cap * scale
        for index, letter in enumerate(name):
            baseline = top - index * top / (len(name) - 1)
            recording = DecomposingRecordingPen(letters)
            letters[cmap[ord(letter)]].draw(recording)
            recording.replay(TransformPen(pen, (scale, 0, 0, scale, round(index * step), round(baseline))))
        return pen.glyph()

    def boxes(*rectangles: tuple[float, float, float, float]):
        pen = TTGlyphPen(None)
        for left, bottom, right, top in rectangles:
            pen.moveTo((left, bottom))
            pen.lineTo((left, top))
            pen.lineTo((right, top))
            pen.lineTo((right, bottom))
            pen.closePath()
        return pen.glyph()

    middle, half = cap / 2, cap * 0.33
    centre = advance / 2
    glyphs = {".notdef": TTGlyphPen(None).glyph()}
    names = {}
    for code, name in enumerate(CONTROL_NAMES):
        glyphs[f"ctrl{code:02d}"] = letters_glyph(name)
        names[0x2400 + code] = f"ctrl{code:02d}"
    glyphs["ctrlDEL"] = letters_glyph("DEL")
    names[0x2421] = "ctrlDEL"
    glyphs["stop"] = boxes((round(centre - half), round(middle - half), round(centre + half), round(middle + half)))
    names[STOP] = "stop"
    bar = half * 0.62
    glyphs["pause"] = boxes(
        (round(centre - half), round(middle - half), round(centre - half + bar), round(middle + half)),
        (round(centre + half - bar), round(middle - half), round(centre + half), round(middle + half)),
    )
    names[PAUSE] = "pause"

    order = list(glyphs)
    builder = FontBuilder(upm, isTTF=True)
    builder.font.recalcTimestamp = False
    builder.setupGlyphOrder(order)
    builder.setupCharacterMap(names)
    builder.setupGlyf(glyphs)
    metrics = {}
    for name in order:
        glyph = glyphs[name]
        glyph.recalcBounds(builder.font["glyf"])
        metrics[name] = (advance, getattr(glyph, "xMin", 0))
    builder.setupHorizontalMetrics(metrics)
    builder.setupHorizontalHeader(ascent=ascent, descent=descent)
    notice = source["name"].getDebugName(13) or ""
    builder.setupNameTable({
        "copyright": "Drawn from DejaVu Sans Mono: " + (source["name"].getDebugName(0) or "").replace("\n", " "),
        "familyName": FAMILY,
        "styleName": "Regular",
        "uniqueFontIdentifier": FAMILY,
        "fullName": FAMILY,
        "psName": "dshctl-glyphs",
        "licenseDescription": notice,
    })
    builder.setupOS2(sTypoAscender=ascent, sTypoDescender=descent, usWinAscent=ascent, usWinDescent=-descent)
    builder.setupPost()
    builder.font["head"].created = builder.font["head"].modified = 0
    out = io.BytesIO()
    builder.font.flavor = "woff"
    builder.font.save(out)
    return out.getvalue()


def module_text(font: bytes) -> str:
    encoded = base64.b64encode(font).decode("ascii")
    ranges = _ranges(codepoints())
    lines = textwrap.wrap(encoded, 96)
    body = "\n".join(f'    "{line}"' for line in lines)
    return (
        '"""The HTML page\'s font of the symbols common fonts lack: generated by\n'
        '``python -m dshctl.replay.glyphs_generate`` (see there); do not edit. Its letters are drawn from\n'
        'DejaVu Sans Mono, so the font is under the Bitstream Vera licence (LICENSE.Bitstream-Vera)."""\n\n'
        f'FAMILY = "{FAMILY}"\n'
        f'UNICODE_RANGE = "{ranges}"\n'
        '"""The code points it draws, as a CSS ``unicode-range``."""\n'
        f"WOFF_BASE64 = (\n{body}\n)\n"
    )


def _ranges(points: list[int]) -> str:
    spans: list[list[int]] = []
    for point in points:
        if spans and spans[-1][1] == point - 1:
            spans[-1][1] = point
        else:
            spans.append([point, point])
    return ", ".join(f"U+{a:04X}" if a == b else f"U+{a:04X}-{b:04X}" for a, b in spans)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dshctl.replay.glyphs_generate", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="status 1 when the committed file differs")
    args = parser.parse_args(argv)
    text = module_text(build())
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'up to date' if same else 'differs: run python -m dshctl.replay.glyphs_generate'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
