"""Text from a log is data (issue #14): one hostile log through every command and output format.

The hostile logs are the sample tour (samples/) with every string a user sees made hostile: the header
id and cwd, the title, model names, tool names and arguments, image and file names, prompts, assistant
text, reasoning, tool results and failure messages all carry rich markup, emoji codes, terminal escape
sequences (OSC 0 title, ED clear screen, OSC 52 clipboard), a C1 CSI, DEL, NUL, CR, TAB, bidirectional
overrides, isolates and marks, and a backtick run; an unknown header key and an unknown event type make warnings and findings quote it. A v4 log with
a hostile stream-record key feeds validate's findings, and two unreadable logs have errors quoting
hostile text or a hostile path. Each command must then print no traceback, show the markup literally,
and let no control character from the log reach stdout, stderr or an exported file (JSON output escapes
them instead, keeping the value).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import zstandard

from conftest import SAMPLES, invoke, sample
from dshctl import output
from dshctl.textsafe import visible_line

STORE = sample("attachments")

HOSTILE = (
    "[/x][/][link=http://e]L[/link][blink]B[/blink] :smile: \u202egnp.exe\u202c\u2067\u200f\u061c "
    "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;SGk=\x07\x9b31m\x08\x7f\x00\r\t````` </details> <b>"
)
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""The bidirectional formatting characters: a terminal would reorder the text around them (Trojan Source)."""
MARKUP = ("[/x]", "[link=http://e]", ":smile:")
HOSTILE_KEYS = frozenset(
    {"cwd", "title", "text", "texts", "name", "toolName", "model", "arguments", "argumentsDelta", "args", "message",
     "content", "code"}
)
FILE_BLOCK = {"type": "file", "attachment": {"attachmentId": "sha256:" + "ab" * 32, "bytes": 3, "name": "notes.txt" + HOSTILE}}


def _hostile(value, key=None):
    """Every string under a key a user sees gets the hostile suffix (list items too: stream pieces)."""
    if isinstance(value, dict):
        return {k: _hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [v + HOSTILE if isinstance(v, str) and key in HOSTILE_KEYS else _hostile(v) for v in value]
    if isinstance(value, str) and key in HOSTILE_KEYS:
        return value + HOSTILE
    return value


def hostile_lines(sample: str) -> list[dict]:
    """The sample as hostile records: header, events, a file block in the first prompt, and an unknown
    ignorable event type (validate quotes it)."""
    records = [json.loads(line) for line in (SAMPLES / sample).read_text().splitlines()]
    header = records[0]
    header["id"] = HOSTILE + header["id"]  # the start too: stats shows a prefix of an id
    header["cwd"] = header["cwd"] + HOSTILE
    header["x" + HOSTILE] = 1  # an unknown header key: every command warns, quoting it
    events = [_hostile(event) for event in records[1:]]
    prompt = next(e for e in events if e["type"] == "user/message" and e["data"]["source"]["kind"] == "user")
    prompt["data"]["content"].append(FILE_BLOCK)
    last = events[-1]  # both samples end with a plain turn/end
    events.append({"type": "x/" + HOSTILE, "seq": last["seq"] + 1, "time": last["time"], "data": {}, "ignorable": True})
    return [header] + events


def encode(records: list[dict], compressed: bool) -> bytes:
    lines = [json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records]
    if not compressed:
        return b"".join(lines)
    zstd = zstandard.ZstdCompressor()
    return zstd.compress(lines[0]) + zstd.compress(b"".join(lines[1:]))


def bad_stream_key(records: list[dict]) -> list[dict]:
    """A v4 log with a hostile extra key in one stream run record: ``validate`` quotes the key raw."""
    records = json.loads(json.dumps(records))
    settlement = next(r for r in records if r["type"] == "assistant/message" and r["data"].get("stream"))
    run_record = next(record for record in settlement["data"]["stream"] if record["type"].endswith("-chunks"))
    run_record[HOSTILE] = 1
    return records


def bad_chunk_index(records: list[dict]) -> list[dict]:
    """A v0 log whose text delta has a hostile index: unreadable, the error quotes the index."""
    records = json.loads(json.dumps(records))
    delta = next(r for r in records if r["type"] == "assistant/chunk" and r["data"]["chunk"]["type"] == "text-delta")
    delta["data"]["chunk"]["index"] = HOSTILE
    return records


SAMPLE_OF = {0: "tour.session.jsonl", 4: "tour.session.v4.jsonl"}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A sessions root: the hostile tour as v0 and v4, raw and zstd, a v4 log with a hostile stream key
    (validate quotes it), and two unreadable logs whose errors quote hostile text or a hostile path."""
    root = tmp_path_factory.mktemp("hostile") / "sessions"
    project = root / "--hostile--"
    for version, sample in SAMPLE_OF.items():
        records = hostile_lines(sample)
        name = sample.removeprefix("tour.")
        for compressed in (False, True):
            folder = project / f"v{version}-{'zstd' if compressed else 'raw'}"
            folder.mkdir(parents=True)
            (folder / (name + (".zstd" if compressed else ""))).write_bytes(encode(records, compressed))
    (project / "bad-stream-key").mkdir()
    (project / "bad-stream-key" / "session.v4.jsonl").write_bytes(encode(bad_stream_key(hostile_lines(SAMPLE_OF[4])), False))
    (project / "bad-chunk").mkdir()
    (project / "bad-chunk" / "session.jsonl").write_bytes(encode(bad_chunk_index(hostile_lines(SAMPLE_OF[0])), False))
    (project / BAD_HEADER).mkdir()
    header = {"type": "session", "version": HOSTILE, "id": HOSTILE, "createdAt": 1, "cwd": HOSTILE}
    (project / BAD_HEADER / "session.v4.jsonl").write_bytes(encode([header], False))
    return root


BAD_HEADER = "bad-header [blink]:smile:\x1b[2J"  # errors name its path: a path is not markup either
READABLE = ["v0-raw", "v0-zstd", "v4-raw", "v4-zstd"]
UNREADABLE = ["bad-chunk", BAD_HEADER]


def log_path(root: Path, name: str) -> str:
    return str(next((root / "--hostile--" / name).iterdir()))


@pytest.fixture(autouse=True)
def colour(monkeypatch):
    """Each invocation starts with colour on."""
    monkeypatch.delenv("NO_COLOR", raising=False)


# --------------------------------------------------------------------------------------------------
# What must hold for every output

_OUR_SGR = re.compile(r"\x1b\[[0-9;]*m")


def log_controls(text: str, *, ours_allowed: bool = False, data: bool = False) -> list[str]:
    """Control characters in ``text`` (line feed and tab excepted) and, unless ``text`` is JSON ``data``
    (which keeps the exact values, escaped by JSON's rules only), bidirectional formatting characters;
    with ``ours_allowed`` the SGR colour sequences dshctl itself writes are removed first. The hostile
    text has no SGR sequence of its own."""
    if ours_allowed:
        text = _OUR_SGR.sub("", text)
    bidi = "" if data else BIDI
    return sorted({hex(ord(c)) for c in text if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f" or c in bidi})


def is_json_output(args: tuple[str, ...]) -> bool:
    return args[0] == "cat" or any(a in ("--json", "--ndjson", "json", "sarif") for a in args)


def run(*args: str, status: tuple[int, ...] = (0, 1), columns: int = 400):
    result = invoke(*args, env={"COLUMNS": str(columns)}, color=True)
    shown = f"dshctl {' '.join(args)}\n--- stdout\n{result.stdout[-2000:]}\n--- stderr\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr, shown
    assert result.exit_code in status, shown
    assert log_controls(result.stdout, data=is_json_output(args)) == [], shown
    assert log_controls(result.stderr) == [], shown
    return result


def assert_markup_literal(text: str, literals=MARKUP) -> None:
    for literal in literals:
        assert literal in text, f"{literal!r} not shown literally in:\n{text[:3000]}"
    assert "😄" not in text  # :smile: stays text


# --------------------------------------------------------------------------------------------------
# cat, ls, stats


@pytest.mark.parametrize("name", READABLE)
def test_cat_escapes_and_keeps_the_values(root, name):
    result = run("cat", log_path(root, name))
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["cwd"].endswith(HOSTILE)
    assert any(r["type"] == "x/" + HOSTILE for r in records)


def test_ls_table_shows_markup_literally(root):
    result = run("ls", str(root))
    assert_markup_literal(result.stdout)
    assert "bad-header [blink]:smile:␛[2J" in result.stdout and "(unreadable: " in result.stdout


@pytest.mark.parametrize("fmt", ["--json", "--ndjson"])
def test_ls_json_keeps_the_values(root, fmt):
    result = run("ls", fmt, str(root))
    rows = json.loads(result.stdout)["sessions"] if fmt == "--json" else [json.loads(line) for line in result.stdout.splitlines()]
    readable = [row for row in rows if not row["error"]]
    assert len(readable) == 6  # ls reads only headers and titles: the bad chunk and stream key do not show
    assert all(row["cwd"].endswith(HOSTILE) and row["title"].endswith(HOSTILE) for row in readable)


@pytest.mark.parametrize("by", ["session", "turn", "step"])
@pytest.mark.parametrize("name", READABLE)
def test_stats_table_of_one_log(root, by, name):
    result = run("stats", "--by", by, log_path(root, name))
    assert_markup_literal(result.stdout)


@pytest.mark.parametrize("flags", [[], ["-F"], ["-C", "2"], ["-l"], ["-c"]])
def test_grep_lines_show_markup_literally(root, flags):
    result = run("grep", *flags, "pwned", str(root), status=(0,))
    assert "pwned" in result.stdout or flags in (["-l"], ["-c"])
    if not flags or flags == ["-C", "2"]:
        assert_markup_literal(result.stdout)
    assert "bad-header [blink]:smile:␛[2J" in result.stderr  # the unreadable log is reported, literally


@pytest.mark.parametrize("fmt", ["--json", "--ndjson"])
def test_grep_json_keeps_the_values(root, fmt):
    result = run("grep", fmt, "--in", "assistant", "-F", "pwned", str(root), status=(0,))
    hits = json.loads(result.stdout)["hits"] if fmt == "--json" else [json.loads(line) for line in result.stdout.splitlines()]
    assert hits and all("\x1b]0;pwned\x07\x1b[2J" in hit["text"] for hit in hits)  # the exact value, escaped in JSON


@pytest.mark.parametrize("by", ["session", "turn", "step"])
def test_stats_table_of_the_root_lists_unreadable_logs_literally(root, by):
    result = run("stats", "--by", by, "-j", "1", str(root))
    assert "unreadable (skipped)" in result.stdout
    assert "[/x]" in result.stdout
    assert "[/x][/][link=http://e]L" in result.stdout or by != "session"  # the session column's short id


@pytest.mark.parametrize("fmt", ["--json", "--ndjson"])
@pytest.mark.parametrize("by", ["session", "turn", "step"])
def test_stats_json(root, fmt, by):
    result = run("stats", fmt, "--by", by, "-j", "1", str(root))
    if fmt == "--json":
        document = json.loads(result.stdout)
        assert all(s["cwd"].endswith(HOSTILE) for s in document["sessions"])
    else:
        assert all(json.loads(line) for line in result.stdout.splitlines())


# --------------------------------------------------------------------------------------------------
# replay


@pytest.mark.parametrize("options", [[], ["--no-color"], ["--timestamps"], ["--no-color", "--timestamps"]])
@pytest.mark.parametrize("name", READABLE)
def test_replay_instant(root, name, options):
    color = [] if "--no-color" not in options else ["--no-color"]
    rest = [o for o in options if o != "--no-color"]
    result = run(*color, "replay", "--instant", *rest, log_path(root, name))
    assert_markup_literal(result.stdout)
    assert "␛]0;pwned␇␛[2J" in result.stdout  # the header's cwd, shown as pictures


@pytest.mark.parametrize("name", ["v0-raw", "v4-zstd"])
def test_replay_coloured_transcript(root, name):
    from dshctl.reader import open_log
    from dshctl.replay.timeline import Timeline
    from dshctl.replay.transcript import write_transcript

    for timestamps in (False, True):
        out = io.StringIO()
        write_transcript(Timeline(open_log(log_path(root, name))), out, color=True, timestamps=timestamps)
        text = out.getvalue()
        assert "\x1b[" in text  # coloured
        assert log_controls(text, ours_allowed=True) == []


@pytest.mark.parametrize("suffix", [".cast", ".md", ".ndjson"])
@pytest.mark.parametrize("name", READABLE)
def test_replay_export(root, tmp_path, name, suffix):
    target = tmp_path / f"out{suffix}"
    run("replay", "--export", str(target), log_path(root, name))
    text = target.read_text(encoding="utf-8")
    assert log_controls(text, data=suffix == ".ndjson") == []
    if suffix == ".cast":
        events = [json.loads(line) for line in text.splitlines()]
        played = "".join(e[2] for e in events[1:] if e[1] == "o")
        assert log_controls(played.replace("\r\n", "\n"), ours_allowed=True) == []
        assert log_controls(events[0]["title"]) == []
    elif suffix == ".ndjson":
        records = [json.loads(line) for line in text.splitlines()]
        session = next(r for r in records if r.get("kind") == "session")
        assert session["info"]["cwd"].endswith(HOSTILE)  # the data export keeps the value, escaped


@pytest.mark.parametrize("name", ["v0-zstd", "v4-raw"])
def test_markdown_export_keeps_log_text_inert(root, tmp_path, name):
    """Titles are escaped text, ids and names code spans, arguments and results fences: the backtick
    runs and HTML in the log close none of them (checked with a CommonMark parser)."""
    markdown_it = pytest.importorskip("markdown_it")
    target = tmp_path / "out.md"
    run("replay", "--export", str(target), log_path(root, name))
    text = target.read_text(encoding="utf-8")
    tokens = markdown_it.MarkdownIt("commonmark").parse(text)
    shown = visible_line(HOSTILE)
    heading = tokens[1].children
    assert [t.type for t in heading] == ["text"] and heading[0].content.endswith(shown)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == text.count("\n**tool call** ") + text.count("\n**result** ") > 0
    assert all("`````" in fence.content for fence in fences)  # the log's backtick run stayed inside
    spans = [c.content for t in tokens if t.type == "inline" for c in t.children if c.type == "code_inline"]
    assert shown + "7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57" in spans  # the session id, whole
    assert any(span.startswith("read") and span.endswith(shown) for span in spans)  # a tool name
    # an attachment's name in a prompt is metadata, not the user's prose: one text, HTML and markup inert
    texts = [c.content for t in tokens if t.type == "inline" for c in t.children if c.type == "text"]
    assert any(f"[image ci-failure.png{shown} · image/png" in text for text in texts)


@pytest.mark.parametrize("name", READABLE)
def test_player_frame_has_no_escape_from_the_log(root, name):
    from rich.console import Console

    from dshctl.reader import open_log
    from dshctl.replay.render import screen_rows, status_text
    from dshctl.replay.timeline import Timeline

    timeline = Timeline(open_log(log_path(root, name)))
    timeline.ensure_all()
    console = Console(file=io.StringIO(), width=120, force_terminal=True, color_system="truecolor")
    for position in range(0, len(timeline) + 1, max(len(timeline) // 40, 1)):
        for row in screen_rows(timeline, position, 120, 30):
            console.print(row)
        console.print(status_text(timeline, position, speed=1.0, paused=False, width=120))
    drawn = console.file.getvalue()
    assert log_controls(drawn, ours_allowed=True) == []
    assert "␛[2J" in drawn


# --------------------------------------------------------------------------------------------------
# validate


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit"])
def test_validate(root, fmt):
    result = run("validate", "--format", fmt, "-j", "1", str(root), status=(2,))
    quoted_key = "has " + visible_line(HOSTILE)  # the stream record's hostile key, as the finding quotes it
    if fmt == "text":
        assert "unknown event type" in result.stdout and quoted_key in result.stdout
    elif fmt == "json":
        document = json.loads(result.stdout)
        assert document["summary"]["unreadable"] == 1  # the bad header (validate reports the bad chunk as a finding)
        assert any("has " + HOSTILE in f["message"] for log in document["logs"] for f in log["findings"])
    elif fmt == "sarif":
        messages = [r["message"]["text"] for r in json.loads(result.stdout)["runs"][0]["results"]]
        assert any("has " + HOSTILE in m for m in messages)  # SARIF is data: the value is kept, escaped
    else:
        suites = ElementTree.fromstring(result.stdout)  # no control character: XML 1.0 cannot carry them
        assert len(suites.findall("testsuite")) == 7
        assert any(quoted_key in (f.get("message") or "") for f in suites.iter("failure"))


# --------------------------------------------------------------------------------------------------
# images


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--ndjson"]])
@pytest.mark.parametrize("name", READABLE)
def test_images_listing(root, name, fmt):
    result = run("images", *fmt, log_path(root, name))
    if not fmt:
        assert_markup_literal(result.stdout, MARKUP[:2])  # names are cut before :smile:


@pytest.mark.parametrize("name", READABLE)
def test_images_extraction_with_a_name_template(root, tmp_path, name):
    out = tmp_path / "out"
    result = run("images", "--out", str(out), "--store", str(STORE), "--name-template", "{seq}-{name}", log_path(root, name))
    written = sorted(p.name for p in out.iterdir())
    assert written and all(n.isprintable() and "[" not in n for n in written)
    assert "written" in result.stdout


# --------------------------------------------------------------------------------------------------
# unreadable logs: the error quotes the hostile text or the hostile path


@pytest.mark.parametrize("name", UNREADABLE)
@pytest.mark.parametrize(
    "command", [["cat"], ["stats"], ["replay", "--instant"], ["images"], ["validate"], ["validate", "--format", "junit"]]
)
def test_errors_that_quote_the_log(root, name, command):
    result = run(*command, log_path(root, name), status=(1, 2) if command[0] == "validate" else (2,))
    assert ("[blink]:smile:␛[2J" if name == BAD_HEADER else "[/x]") in result.stderr + result.stdout
    assert "😄" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "command", [["cat"], ["stats", "--json"], ["images", "--ndjson"], ["validate", "--format", "sarif"], ["ls", "--json"]]
)
def test_json_output_does_not_import_rich(root, command):
    """Escaping for JSON lives in textsafe, which needs only re: JSON output stays rich-free."""
    import subprocess
    import sys

    target = str(root) if command[0] == "ls" else log_path(root, "v4-zstd")
    code = (
        "import sys\nfrom dshctl.cli import app\n"
        f"sys.argv = ['dshctl', *{command + [target]!r}]\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('rich imported' if 'rich' in sys.modules else 'rich not imported')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.stderr.decode().endswith("rich not imported"), result.stderr[-500:]


def test_cat_raw_shows_a_damaged_line_s_controls_as_pictures_on_a_terminal_only(tmp_path):
    """--raw writes the stored bytes to a pipe or file; a terminal never runs a control sequence from
    a log, so there a line holding raw controls (only a damaged one can) shows them as pictures."""
    import subprocess
    import sys

    log = tmp_path / "raw.session.v4.jsonl"
    stored = b'{"type":"a\x1b]0;PWNED\x07"}'
    log.write_bytes(b'{"type":"session","version":4,"id":"x","createdAt":1,"cwd":"/"}\n' + stored + b"\n")
    piped = subprocess.run([sys.executable, "-m", "dshctl", "cat", "--raw", str(log)], capture_output=True)
    assert piped.stdout.splitlines()[1] == stored
    on_terminal = subprocess.run(["script", "-qc", f"{sys.executable} -m dshctl cat --raw {log}", "/dev/null"],
                                 capture_output=True, cwd=Path(__file__).resolve().parent.parent)
    assert b"\x1b]0;" not in on_terminal.stdout and "␛]0;PWNED␇".encode() in on_terminal.stdout
