"""``dshctl images``: listing every image reference, and extracting verified objects safely.

Every test builds its own attachment store and logs in a temporary directory, with real (tiny) PNG and
JPEG bytes; the public corpus and the bundled samples are checked too when present.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from conftest import CORPUS, SAMPLES, corpus_file, invoke as run_cli, sample
from dshctl.images import store as store_mod
from dshctl.errors import DshctlError, UsageError
from dshctl.images import NameTemplate, probe_image, safe_base_name, scan_log
from dshctl.reader import open_log

T0 = 1_790_000_000_000


# --------------------------------------------------------------------------------------------------
# Real image bytes


def make_png(width: int, height: int, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def make_jpeg(width: int, height: int) -> bytes:
    """A baseline grayscale JPEG of mid-grey: every 8×8 block has DC difference 0 and an immediate EOB,
    coded with one-symbol Huffman tables (decodes with libjpeg)."""

    def seg(marker: int, body: bytes) -> bytes:
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body

    table = b"\x01" + b"\x00" * 15 + b"\x00"
    out = b"\xff\xd8" + seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    out += seg(0xDB, b"\x00" + b"\x01" * 64)
    out += seg(0xC0, b"\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00")
    out += seg(0xC4, b"\x00" + table) + seg(0xC4, b"\x10" + table)
    out += seg(0xDA, b"\x01\x01\x00\x00\x3f\x00")
    bits = "00" * (((width + 7) // 8) * ((height + 7) // 8))
    bits += "1" * (-len(bits) % 8)
    scan = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8)).replace(b"\xff", b"\xff\x00")
    return out + scan + b"\xff\xd9"


PNG = make_png(3, 2)
PNG2 = make_png(1, 1, (0, 0, 255))
JPEG = make_jpeg(16, 8)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ref(data: bytes, media_type: str, width: int, height: int, **extra) -> dict:
    return {"attachmentId": f"sha256:{sha(data)}", "mediaType": media_type, "bytes": len(data), "width": width, "height": height, **extra}


PNG_REF = ref(PNG, "image/png", 3, 2, name="shot.png")
PNG2_REF = ref(PNG2, "image/png", 1, 1)
JPEG_REF = ref(JPEG, "image/jpeg", 16, 8, name="photo.jpg", originalDimensions={"width": 32, "height": 16})


def image(attachment: dict, **extra) -> dict:
    return {"type": "image", "attachment": attachment, **extra}


def make_store(root: Path, *objects: bytes) -> Path:
    """A DSH home's ``attachments`` dir holding ``objects`` at ``v1/objects/<2 hex>/<64 hex>``."""
    store = root / "attachments"
    for data in objects:
        digest = sha(data)
        folder = store / "v1" / "objects" / digest[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / digest).write_bytes(data)
    (store / "v1" / "objects").mkdir(parents=True, exist_ok=True)
    return store


def object_path(store: Path, data_or_digest) -> Path:
    digest = data_or_digest if isinstance(data_or_digest, str) else sha(data_or_digest)
    return store / "v1" / "objects" / digest[:2] / digest


# --------------------------------------------------------------------------------------------------
# Logs


def write_log(path: Path, version: int, events: list[dict]) -> Path:
    header = {"type": "session", "version": version, "id": "s-img", "createdAt": T0, "cwd": "/w", "delegationDepth": 0}
    if version >= 2:
        header["isSeeded"] = False
    lines = [header] + [{"seq": i, "time": T0 + i, **event} for i, event in enumerate(events)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    return path


def user(content: list, **extra) -> dict:
    return {"type": "user/message", "data": {"id": "u", "role": "user", "source": {"kind": "user"}, "content": content, **extra}, "surfaceOp": "append"}


def v4_events() -> list[dict]:
    """A v4 session with images in every place the listing covers."""
    model = {"kind": "model", "provider": "p", "model": "m"}
    stream = [
        {"type": "chunk", "time": T0, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
        {"type": "text-chunks", "time0": T0, "index": 0, "dt": [1, 1], "texts": ["he", "re", "!"]},
        {"type": "chunk", "time": T0 + 3, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "here!"}}},
        {"type": "chunk", "time": T0 + 4, "chunk": {"type": "block-end", "index": 1, "block": image(JPEG_REF)}},
        {"type": "chunk", "time": T0 + 5, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]
    attempt = [
        {"type": "reasoning-chunks", "time0": T0, "index": 0, "dt": [2], "texts": ["hm", "m"]},
        {"type": "chunk", "time": T0 + 6, "chunk": {"type": "block-end", "index": 1, "block": image(PNG2_REF)}},
        {"type": "chunk", "time": T0 + 7, "chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"message": "x", "code": "IMAGE_OFFLOAD_REQUIRED", "offloadImages": 1}}}},
    ]
    return [
        # 0
        {"type": "agent/inbox/spliced", "data": {"target": "next-turn", "start": 0, "inserted": [
            {"id": "u", "role": "user", "source": {"kind": "user"}, "content": [{"type": "text", "text": "look"}, image(PNG_REF)]}]}},
        {"type": "turn/start", "data": {"turn": 1}},  # 1
        {"type": "step/start", "data": {"turn": 1, "step": 1}},  # 2
        {"type": "system/message", "data": {"turn": 1, "step": 1, "message": {"id": "s", "role": "system", "source": {"kind": "system-prompt"}, "content": [image(PNG2_REF)]}}, "surfaceOp": "append"},  # 3
        user([{"type": "text", "text": "look"}, image(PNG_REF), image(JPEG_REF)]),  # 4
        {"type": "developer/message", "data": {"turn": 1, "step": 1, "message": {"id": "d", "role": "developer", "source": {"kind": "tool-registry"}, "content": [image(PNG2_REF)]}}, "surfaceOp": "append"},  # 5
        {"type": "assistant/attempt", "data": {"turn": 1, "step": 1, "stream": attempt}},  # 6
        {"type": "tool/call", "data": {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}},  # 7
        {"type": "tool/result", "data": {"turn": 1, "step": 1, "message": {"role": "tool", "source": {"kind": "tool", "callId": "c1"}, "toolCallId": "c1",
            "content": [{"type": "text", "text": "img"}, image(JPEG_REF), image(PNG_REF, offloaded=True)], "isError": False, "id": "r"}}, "surfaceOp": "append", "sourceEventSeqs": [7]},  # 8
        {"type": "tool/ptc-dispatch", "data": {"rootCallId": "c1", "parentCallId": "c1", "subCallId": "c1:code:1", "name": "read", "arguments": "{}", "isError": False, "content": [image(PNG_REF)]}},  # 9
        {"type": "image/offload", "data": {"targets": [{"seq": 4, "imageIndexes": [1]}, {"seq": 8, "imageIndexes": [0]}]}},  # 10
        {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant", "source": model,
            "content": [{"type": "text", "text": "here!"}, image(JPEG_REF)]}, "usage": {"inputTokens": 1, "outputTokens": 1}, "stream": stream}, "surfaceOp": "append"},  # 11
        {"type": "compaction/summary", "data": {"compactionId": "k", "summary": [image(PNG2_REF)], "shadowedRange": {"start": 0, "end": 1}, "shadowedSeqs": [], "shadowedTokenCount": 0, "provider": "p", "model": "m"}},  # 12
        {"type": "step/end", "data": {"turn": 1, "step": 1}},  # 13
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},  # 14
    ]


@pytest.fixture
def v4_log(tmp_path) -> Path:
    return write_log(tmp_path / "logs" / "session.v4.jsonl", 4, v4_events())


SEQ_NAMES = ("--name-template", "{seq}-{n}.{ext}")
"""The names before images were named after their original files (#26): the tests of other rules keep them."""


def invoke(*args: str, env: dict | None = None):
    return run_cli("images", *args, env=env)


def listing(path: Path) -> list[dict]:
    result = invoke(str(path), "--ndjson")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def manifest(result) -> dict:
    return json.loads(result.stdout)


def files_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


# --------------------------------------------------------------------------------------------------
# Image headers and names


def test_probe_reads_real_headers():
    assert probe_image(PNG) == ("image/png", 3, 2)
    assert probe_image(JPEG) == ("image/jpeg", 16, 8)
    assert probe_image(b"GIF89a\x05\x00\x07\x00rest") == ("image/gif", 5, 7)
    vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x0a\x00\x00\x00" + b"\x00" * 4 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert probe_image(vp8x) == ("image/webp", 100, 50)
    assert probe_image(b"not an image") is None


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("shot.png", "shot.png"),
        ("../../etc/passwd", "passwd"),
        ("/abs/path/evil.png", "evil.png"),
        ("C:\\Users\\me\\x.png", "x.png"),
        ("..", None),
        ("../", None),
        ("a\x00b\x1b[31m.png", "ab_31m.png"),
        ("-rf", "rf"),
        (".hidden", "hidden"),
        ("\u202ereversed.png", "reversed.png"),
        (42, None),
        ("   ", None),
    ],
)
def test_safe_base_name(raw, expected):
    assert safe_base_name(raw) == expected


def test_safe_base_name_is_bounded():
    assert len(safe_base_name("é" * 10_000).encode()) <= 100


@pytest.mark.parametrize(
    "template",
    ["", "../{seq}", "{seq}/{n}", "a\\b{n}", "x\x00{n}", "{foo}", "{seq!r}", "{seq:>99999999}", "{name.__class__}",
     "{name[0]}", "{}", "{hash:10}", "{", "x" * 201],
)
def test_bad_templates_are_usage_errors(template, tmp_path, v4_log):
    with pytest.raises(UsageError):
        NameTemplate(template)
    out = tmp_path / "out"
    result = invoke(str(v4_log), "--out", str(out), "--name-template", template)
    assert result.exit_code == 2
    assert not out.exists()


# --------------------------------------------------------------------------------------------------
# Listing


def test_listing_finds_every_place_in_log_order(v4_log):
    rows = listing(v4_log)
    got = [(r["seq"], r["n"], r["where"], r["at"], r["attachmentId"]) for r in rows]
    p, p2, j = PNG_REF["attachmentId"], PNG2_REF["attachmentId"], JPEG_REF["attachmentId"]
    assert got == [
        (0, 0, "inbox", "inserted[0].content[1]", p),
        (3, 0, "system", "message.content[0]", p2),
        (4, 0, "user", "content[1]", p),
        (4, 1, "user", "content[2]", j),
        (5, 0, "developer", "message.content[0]", p2),
        (6, 0, "attempt-stream", "stream.block-end[0].block", p2),
        (8, 0, "tool-result", "message.content[1]", j),
        (8, 1, "tool-result", "message.content[2]", p),
        (9, 0, "code-dispatch", "content[0]", p),
        (11, 0, "assistant-content", "message.content[1]", j),
        (11, 1, "assistant-stream", "stream.block-end[1].block", j),
        (12, 0, "compaction-summary", "summary[0]", p2),
    ]
    by = {(r["seq"], r["n"]): r for r in rows}
    assert by[(4, 0)]["turn"] == 1 and by[(4, 0)]["step"] == 1  # from step/start: user messages carry no turn
    assert by[(0, 0)]["turn"] is None
    assert by[(4, 1)]["name"] == "photo.jpg" and by[(4, 1)]["originalDimensions"] == {"width": 32, "height": 16}
    assert (by[(4, 1)]["mediaType"], by[(4, 1)]["bytes"], by[(4, 1)]["width"], by[(4, 1)]["height"]) == ("image/jpeg", len(JPEG), 16, 8)


def test_offload_marks_the_selected_occurrences(v4_log):
    rows = {(r["seq"], r["n"]): r for r in listing(v4_log)}
    offloaded = {key: (r["offloaded"], r["offloadedBy"]) for key, r in rows.items() if r["offloaded"]}
    # seq 4 image 1 and seq 8 image 0 by the image/offload at seq 10; seq 8 image 1 by its own flag
    assert offloaded == {(4, 1): (True, 10), (8, 0): (True, 10), (8, 1): (True, None)}
    doc = manifest(invoke(str(v4_log), "--json"))
    assert doc["offloads"] == [{"seq": 10, "targets": [{"seq": 4, "imageIndexes": [1]}, {"seq": 8, "imageIndexes": [0]}]}]
    assert doc["summary"] == {"references": 12, "distinct": 3, "offloaded": 3, "offloadEvents": 1}


def test_offload_index_counts_depth_first_through_tool_result_wrappers(tmp_path):
    """v3 tool results wrap their blocks; image/offload indexes count depth-first over all images."""
    wrapped = {"type": "tool/result", "data": {"turn": 1, "step": 1, "message": {"role": "user", "source": {"kind": "tool", "callId": "c"}, "id": "r",
        "content": [{"type": "tool-result", "toolCallId": "c", "content": [image(PNG_REF), {"type": "text", "text": "t"}, image(JPEG_REF)]}]}}, "surfaceOp": "append"}
    log = write_log(tmp_path / "session.v3.jsonl", 3, [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        wrapped,
        {"type": "image/offload", "data": {"targets": [{"seq": 2, "imageIndexes": [1]}, {"seq": 99, "imageIndexes": [0]}, {"seq": 2, "imageIndexes": [5]}]}},
    ])
    result = invoke(str(log), "--ndjson")
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["at"], r["offloaded"]) for r in rows] == [
        ("message.content[0].content[0]", False),
        ("message.content[0].content[2]", True),
    ]
    assert "seq 99" in result.stderr and "image 5 of seq 2" in result.stderr


def test_table_listing(v4_log):
    result = invoke(str(v4_log), env={"COLUMNS": "160"})
    assert result.exit_code == 0
    assert "12 reference(s) to 3 image(s); 3 offloaded (1 image/offload event(s))" in result.stdout
    assert "assistant-stream" in result.stdout and "by seq 10" in result.stdout
    assert PNG_REF["attachmentId"][7:17] in result.stdout


def _tsv(out: str) -> list[dict[str, str]]:
    header, *rows = out.splitlines()
    return [dict(zip(header.split("\t"), row.split("\t"), strict=True)) for row in rows]


@pytest.mark.parametrize("store", [False, True])
def test_tsv_gives_turn_step_width_and_height_as_values(store):
    """TSV's cells are machine values (man page, TABLES): turn and step, width and height each a column of
    whole numbers, empty for none; plain and terminal tables keep ``2/3`` and ``16×8``."""
    log, with_store = str(sample("tour.session.v4.jsonl")), ["--store", str(SAMPLES / "attachments")] if store else []
    tsv = invoke(log, "--tsv", *with_store)
    assert tsv.exit_code == 0, tsv.output
    rows = _tsv(tsv.stdout)
    records = [json.loads(line) for line in invoke(log, "--ndjson").stdout.splitlines()]
    assert len(rows) == len(records) > 0
    assert "turn/step" not in rows[0] and "size" not in rows[0]
    for row, record in zip(rows, records):
        for key in ("turn", "step", "width", "height"):
            assert row[key] == ("" if record[key] is None else str(record[key])), (key, row, record)
    assert {"turn": "", "step": ""}.items() <= rows[0].items()  # the inbox image: no turn yet
    assert any(row["turn"] == "2" and row["step"] == "3" and row["width"] == "16" and row["height"] == "8" for row in rows)
    plain = invoke(log, "--plain", *with_store).stdout
    assert plain.splitlines()[0].split()[:3] == ["seq", "n", "turn/step"] and " size " in plain.splitlines()[0]
    assert " 2/3 " in plain and " 16×8 " in plain


def test_tsv_of_a_store_gives_width_and_height_apart():
    out = invoke("--store", str(SAMPLES / "attachments"), "--tsv")
    assert out.exit_code == 0, out.output
    rows = _tsv(out.stdout)
    assert sorted((row["width"], row["height"]) for row in rows) == [("16", "8"), ("2", "2")]
    assert "size" not in rows[0]
    assert " 16×8 " in invoke("--store", str(SAMPLES / "attachments"), "--plain").stdout


def test_table_escapes_hostile_strings(tmp_path):
    hostile = dict(PNG_REF, name="[bold red]boom[/] \x1b]8;;http://x\x07link\x1b[2J", mediaType="image/png\x1b[31m")
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(hostile)])])
    result = invoke(str(log), env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "[bold red]boom" in result.stdout  # printed literally, not interpreted as markup
    assert "\\[bold" not in result.stdout  # and not escaped for a markup parser that never runs
    assert "[bold red]boom[/] ␛]8;;http://x␇link" in result.stdout  # controls shown as pictures


def test_v0_chunks_are_read_from_the_folded_stream(tmp_path):
    def chunk(c: dict) -> dict:
        return {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": c}}

    log = write_log(tmp_path / "session.jsonl", 0, [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        chunk({"type": "block-start", "index": 0, "blockType": "text"}),
        chunk({"type": "text-delta", "index": 0, "text": "a"}),
        chunk({"type": "text-delta", "index": 0, "text": "b"}),
        chunk({"type": "block-end", "index": 0, "block": {"type": "text", "text": "ab"}}),
        chunk({"type": "block-end", "index": 1, "block": image(PNG_REF)}),
        chunk({"type": "finish", "reason": {"kind": "stop"}}),
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ])
    rows = listing(log)
    assert [(r["where"], r["at"], r["attachmentId"], r["turn"], r["step"]) for r in rows] == [
        ("attempt-stream", "stream.block-end[1].block", PNG_REF["attachmentId"], 1, 1)
    ]


def test_scan_images_takes_a_path_a_pathlike_or_a_logref(v4_log):
    import msgspec

    from dshctl.images import ImageScan, scan_images
    from dshctl.source import resolve

    listed = listing(v4_log)
    for source in (str(v4_log), v4_log, resolve(str(v4_log))[0], v4_log.parent):
        scan = scan_images(source)
        assert isinstance(scan, ImageScan) and isinstance(scan, msgspec.Struct)
        assert [ref.to_json(extraction=False) for ref in scan.refs] == listed
        assert scan.log_file == str(v4_log) and not scan.problems
        assert scan.summary()["references"] == 12
    with pytest.raises(DshctlError):
        scan_images(v4_log.parent / "missing.jsonl")


def test_runs_are_never_expanded(monkeypatch, v4_log):
    import dshctl.stream as stream_mod

    def boom(*_args, **_kwargs):
        raise AssertionError("images must read block-end chunks with raw_chunks, not expand runs")

    monkeypatch.setattr(stream_mod, "iter_members", boom)
    monkeypatch.setattr(stream_mod, "expand_strict", boom)
    seen = []
    original = stream_mod.raw_chunks

    def spy(stream, kind):
        seen.append(kind)
        return original(stream, kind)

    monkeypatch.setattr(stream_mod, "raw_chunks", spy)
    scan = scan_log(open_log(str(v4_log)))
    assert len(scan.refs) == 12 and seen == ["block-end", "block-end"]
    for sample in sorted(SAMPLES.glob("tour.session*.jsonl*")):
        assert scan_log(open_log(str(sample))).refs


def test_attachmentless_image_blocks_are_reported_not_listed(tmp_path):
    log = write_log(tmp_path / "s.jsonl", 4, [user([{"type": "image"}, image(PNG_REF)])])
    result = invoke(str(log), "--ndjson")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["n"], r["at"]) for r in rows] == [(1, "content[1]")]
    assert "without an attachment object" in result.stderr


def test_undecodable_log_exits_2_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not a log\n")
    out = tmp_path / "out"
    result = invoke(str(bad), "--out", str(out))
    assert result.exit_code == 2 and not out.exists()


def test_extraction_options_need_out(v4_log, tmp_path):
    for extra in (["--force"], ["--all"], ["--name-template", "{seq}.{ext}"]):
        result = invoke(str(v4_log), *extra)
        assert result.exit_code == 2 and "--out" in result.stderr


# --------------------------------------------------------------------------------------------------
# Extraction


def test_extracts_each_distinct_image_once(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    result = invoke(str(v4_log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    doc = manifest(result)
    assert doc["store"] == {"kind": "objects", "path": str(store / "v1" / "objects"), "from": "--store"}
    statuses = [(r["seq"], r["n"], r["status"]) for r in doc["images"]]
    assert [s for s in statuses if s[2] == "written"] == [(0, 0, "written"), (3, 0, "written"), (4, 1, "written")]
    assert all(s[2] == "duplicate" for s in statuses if s[2] != "written")
    assert sorted(os.listdir(out)) == ["0-0.png", "3-0.png", "4-1.jpg"]
    assert (out / "0-0.png").read_bytes() == PNG and (out / "4-1.jpg").read_bytes() == JPEG
    dup = next(r for r in doc["images"] if r["seq"] == 8 and r["n"] == 0)
    assert dup["path"] == str(out / "4-1.jpg") and dup["error"] is None
    assert doc["summary"]["written"] == 3 and doc["summary"]["duplicate"] == 9
    assert (os.stat(out / "0-0.png").st_mode & 0o777) == 0o666 & ~_umask()


def test_all_writes_every_reference(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    result = invoke(str(v4_log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--all", "--ndjson")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(r["status"] == "written" for r in rows) and len(os.listdir(out)) == 12
    assert (out / "11-1.jpg").read_bytes() == JPEG


def test_template_collisions_do_not_overwrite_within_a_run(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    result = invoke(str(v4_log), "--out", str(out), "--store", str(store), "--all", "--force", "--name-template", "{hash}.{ext}", "--json")
    doc = manifest(result)
    assert result.exit_code == 0
    assert sorted(os.listdir(out)) == sorted(f"{sha(d)}.{e}" for d, e in ((PNG, "png"), (PNG2, "png"), (JPEG, "jpg")))
    result = invoke(str(v4_log), "--out", str(tmp_path / "o2"), "--store", str(store), "--name-template", "same.bin", "--json")
    doc = manifest(result)
    assert result.exit_code == 1
    assert [r["status"] for r in doc["images"] if r["status"] != "duplicate"] == ["written", "exists", "exists"]
    assert os.listdir(tmp_path / "o2") == ["same.bin"] and (tmp_path / "o2" / "same.bin").read_bytes() == PNG


def test_name_template_with_hostile_names(tmp_path):
    names = ["../../escape.png", "/etc/cron.d/evil", "a\x00b.png", "x" * 5000 + ".png", "..", "\\\\server\\share\\s.png"]
    pngs = [make_png(i + 1, 1) for i in range(len(names))]
    blocks = [image(ref(data, "image/png", i + 1, 1, name=name)) for i, (data, name) in enumerate(zip(pngs, names))]
    log = write_log(tmp_path / "logs" / "s.jsonl", 4, [user(blocks)])
    store = make_store(tmp_path / "home", *pngs)
    out = tmp_path / "sandbox" / "out"
    out.parent.mkdir()
    before = files_under(tmp_path)
    result = invoke(str(log), "--out", str(out), "--store", str(store), "--name-template", "{n}-{name}", "--json")
    assert result.exit_code == 0, result.output
    written = sorted(os.listdir(out))
    assert len(written) == len(names)
    for name in written:
        assert "/" not in name and "\x00" not in name and not name.startswith(".") and len(name.encode()) <= 255
    assert "0-escape.png" in written and "1-evil" in written and "2-ab.png" in written and "5-s.png" in written
    assert f"4-{sha(pngs[4])[:12]}.png" in written  # ".." leaves nothing: the hash stands in
    assert files_under(tmp_path) - before == {"sandbox/out", *(f"sandbox/out/{n}" for n in written)}


@pytest.mark.parametrize("openat", [True, False], ids=["openat", "path-fallback"])
def test_tampered_wrong_size_and_missing_objects(tmp_path, monkeypatch, openat):
    monkeypatch.setattr(store_mod, "_DIR_FD", store_mod._DIR_FD and openat)
    other = make_png(2, 2)
    wrong_size = dict(ref(PNG2, "image/png", 1, 1), bytes=len(PNG2) + 1)
    wrong_dims = dict(ref(other, "image/png", 2, 2), width=9)
    wrong_type = ref(JPEG, "image/png", 16, 8)
    missing = ref(make_png(5, 5), "image/png", 5, 5)
    log = write_log(tmp_path / "s.jsonl", 4, [
        user([image(PNG_REF)]),  # 0: tampered in the store
        user([image(wrong_size)]),  # 1
        user([image(missing)]),  # 2
        user([image(wrong_dims)]),  # 3
        user([image(wrong_type)]),  # 4
        user([image(JPEG_REF)]),  # 5: fine, still extracted
    ])
    store = make_store(tmp_path / "home", PNG, PNG2, other, JPEG)
    os.chmod(object_path(store, PNG), 0o600)
    object_path(store, PNG).write_bytes(PNG[:-1] + b"\x00")
    out = tmp_path / "out"
    result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--json")
    assert result.exit_code == 1
    doc = manifest(result)
    by_seq = {r["seq"]: r for r in doc["images"]}
    assert by_seq[0]["status"] == "mismatch" and "SHA-256" in by_seq[0]["error"]
    assert by_seq[1]["status"] == "mismatch" and f"{len(PNG2)} bytes" in by_seq[1]["error"]
    assert by_seq[2]["status"] == "missing" and by_seq[2]["path"] is None
    assert by_seq[3]["status"] == "mismatch" and "2x2" in by_seq[3]["error"]
    assert by_seq[4]["status"] == "mismatch" and "image/jpeg" in by_seq[4]["error"]
    assert by_seq[5]["status"] == "written"
    assert os.listdir(out) == ["5-0.jpg"]
    assert "5 image(s) not extracted" in result.stderr


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "sha256:../../../../etc/passwd",
        "sha256:" + "A" * 64,
        "sha256:" + "a" * 63 + "\x00",
        "sha256:" + "a" * 64 + "\n",
        "sha256:" + "a" * 64 + "/../x",
        "sha256:" + "a" * 100_000,
        "md5:" + "a" * 32,
        "",
        None,
        12,
    ],
)
def test_hostile_ids_never_touch_the_filesystem(tmp_path, monkeypatch, bad_id):
    hostile = dict(PNG_REF, attachmentId=bad_id)
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(hostile), image(JPEG_REF)])])
    store = make_store(tmp_path / "home", JPEG)
    reads = []
    original = store_mod.Store.read

    def spy(self, digest, media_type):
        reads.append(digest)
        return original(self, digest, media_type)

    monkeypatch.setattr(store_mod.Store, "read", spy)
    out = tmp_path / "out"
    result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--json")
    assert result.exit_code == 1
    doc = manifest(result)
    assert [r["status"] for r in doc["images"]] == ["invalid-id", "written"]
    assert reads == [sha(JPEG)]
    assert os.listdir(out) == ["0-1.jpg"]


@pytest.mark.parametrize("openat", [True, False], ids=["openat", "path-fallback"])
def test_symlinks_out_of_the_store_are_not_followed(tmp_path, monkeypatch, openat):
    monkeypatch.setattr(store_mod, "_DIR_FD", store_mod._DIR_FD and openat)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(PNG)  # right content, wrong place
    store = make_store(tmp_path / "home")
    objects = store / "v1" / "objects"
    (objects / sha(PNG)[:2]).mkdir()
    os.symlink(outside / "secret", object_path(store, PNG))
    # a whole prefix directory linked out of the store
    os.symlink(outside, objects / sha(JPEG)[:2])
    (outside / sha(JPEG)).write_bytes(JPEG)
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(PNG_REF), image(JPEG_REF)])])
    out = tmp_path / "out"
    result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--json")
    assert result.exit_code == 1
    doc = manifest(result)
    assert [r["status"] for r in doc["images"]] == ["unsafe", "unsafe"]
    assert all("symlink" in r["error"] for r in doc["images"])
    assert not out.exists()  # nothing verified to write: no directory made


@pytest.mark.parametrize("openat", [True, False], ids=["openat", "path-fallback"])
def test_fifo_in_the_store_is_refused(tmp_path, monkeypatch, openat):
    monkeypatch.setattr(store_mod, "_DIR_FD", store_mod._DIR_FD and openat)
    store = make_store(tmp_path / "home")
    (store / "v1" / "objects" / sha(PNG)[:2]).mkdir()
    os.mkfifo(object_path(store, PNG))
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(PNG_REF)])])
    result = invoke(str(log), "--out", str(tmp_path / "out"), "--store", str(store), "--json")
    assert result.exit_code == 1 and manifest(result)["images"][0]["status"] == "unsafe"


def test_existing_outputs_need_force_and_symlinks_are_replaced_not_followed(tmp_path):
    store = make_store(tmp_path / "home", PNG, JPEG)
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(PNG_REF), image(JPEG_REF)])])
    out = tmp_path / "out"
    out.mkdir()
    (out / "0-0.png").write_bytes(b"mine")
    victim = tmp_path / "victim"
    victim.write_bytes(b"do not touch")
    os.symlink(victim, out / "0-1.jpg")
    result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--json")
    assert result.exit_code == 1
    assert [r["status"] for r in manifest(result)["images"]] == ["exists", "exists"]
    assert (out / "0-0.png").read_bytes() == b"mine" and victim.read_bytes() == b"do not touch"

    result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--store", str(store), "--force", "--json")
    assert result.exit_code == 0, result.output
    assert [r["status"] for r in manifest(result)["images"]] == ["written", "written"]
    assert (out / "0-0.png").read_bytes() == PNG
    assert not (out / "0-1.jpg").is_symlink() and (out / "0-1.jpg").read_bytes() == JPEG
    assert victim.read_bytes() == b"do not touch"
    assert sorted(os.listdir(out)) == ["0-0.png", "0-1.jpg"]  # no temporary left behind


def test_out_dir_is_created_but_not_its_parents(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    result = invoke(str(v4_log), "--out", str(tmp_path / "a" / "b"), "--store", str(store))
    assert result.exit_code == 2 and not (tmp_path / "a").exists()
    (tmp_path / "file").write_bytes(b"")
    assert invoke(str(v4_log), "--out", str(tmp_path / "file"), "--store", str(store)).exit_code == 2


def test_text_manifest(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, JPEG)  # PNG2 missing
    out = tmp_path / "out"
    result = invoke(str(v4_log), "--out", str(out), "--store", str(store), *SEQ_NAMES, env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "12 reference(s): 2 written, 9 duplicate, 1 missing" in result.stdout
    assert "0-0.png" in result.stdout and "not in store" in result.stdout


# --------------------------------------------------------------------------------------------------
# Finding the store


@pytest.mark.parametrize("point_at", ["home", "attachments", "v1", "objects"])
def test_store_may_name_any_level_of_a_dsh_home(tmp_path, point_at):
    store = make_store(tmp_path / "home", PNG)
    target = {"home": tmp_path / "home", "attachments": store, "v1": store / "v1", "objects": store / "v1" / "objects"}[point_at]
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(PNG_REF)])])
    result = invoke(str(log), "--out", str(tmp_path / "out"), "--store", str(target), "--json")
    assert result.exit_code == 0, result.output
    assert manifest(result)["store"]["path"] == str(store / "v1" / "objects")


def test_store_that_is_not_a_store_is_a_usage_error(tmp_path, v4_log):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    assert invoke(str(v4_log), "--out", str(tmp_path / "out"), "--store", str(tmp_path / "empty")).exit_code == 2
    assert invoke(str(v4_log), "--out", str(tmp_path / "out"), "--store", str(tmp_path / "nope")).exit_code == 2
    assert not (tmp_path / "out").exists()


def test_default_store_is_dsh_home_then_home_dir(tmp_path):
    log = write_log(tmp_path / "s.jsonl", 4, [user([image(PNG_REF)])])
    make_store(tmp_path / "dshhome", PNG)
    result = invoke(str(log), "--out", str(tmp_path / "o1"), "--json", env={"DSH_HOME": str(tmp_path / "dshhome")})
    assert result.exit_code == 0, result.output
    assert manifest(result)["store"]["from"] == "DSH_HOME"
    make_store(tmp_path / "user" / ".dsh", PNG)
    result = invoke(str(log), "--out", str(tmp_path / "o2"), "--json", env={"DSH_HOME": "  ", "HOME": str(tmp_path / "user")})
    assert result.exit_code == 0, result.output
    doc = manifest(result)
    assert doc["store"] == {"kind": "objects", "path": str(tmp_path / "user" / ".dsh" / "attachments" / "v1" / "objects"), "from": "default"}
    result = invoke(str(log), "--out", str(tmp_path / "o3"), "--json", env={"DSH_HOME": str(tmp_path / "none")})
    assert result.exit_code == 1 and manifest(result)["images"][0]["status"] == "missing"
    assert "cannot be opened" in result.stderr
    assert not (tmp_path / "o3").exists()  # nothing to write: no directory made


def test_unzipped_export_uses_its_media_dir(tmp_path):
    export = tmp_path / "dsh-session-x"
    write_log(export / "session.jsonl", 4, [user([image(PNG_REF)])])
    write_log(export / "subagents" / "child" / "session.jsonl", 4, [user([image(JPEG_REF)])])
    media = export / "media"
    media.mkdir()
    (media / f"{PNG_REF['attachmentId']}.png").write_bytes(PNG)
    (media / f"sha256_{sha(JPEG)}.jpg").write_bytes(JPEG)  # as unzipped where ':' is not allowed
    for log, data, name in ((export / "session.jsonl", PNG, "0-0.png"), (export / "subagents" / "child" / "session.jsonl", JPEG, "0-0.jpg")):
        out = tmp_path / f"out-{name}"
        result = invoke(str(log), "--out", str(out), *SEQ_NAMES, "--json", env={"DSH_HOME": str(tmp_path / "none")})
        assert result.exit_code == 0, result.output
        assert manifest(result)["store"] == {"kind": "media", "path": str(media), "from": "export"}
        assert (out / name).read_bytes() == data
    single = tmp_path / "dsh-session-y"  # an export directory named as the log (no subagents: one log)
    write_log(single / "session.jsonl", 4, [user([image(PNG_REF)])])
    (single / "media").mkdir()
    (single / "media" / f"{PNG_REF['attachmentId']}.png").write_bytes(PNG)
    result = invoke(str(single), "--out", str(tmp_path / "o-dir"), "--json")
    assert result.exit_code == 0, result.output
    assert manifest(result)["store"] == {"kind": "media", "path": str(single / "media"), "from": "export"}
    for target in (export, media):
        result = invoke(str(export / "session.jsonl"), "--out", str(tmp_path / f"o-{target.name}"), "--store", str(target), "--json")
        assert result.exit_code == 0 and manifest(result)["store"]["path"] == str(media)
    os.symlink(tmp_path / "outside.png", media / f"sha256:{sha(PNG2)}.png")
    (tmp_path / "outside.png").write_bytes(PNG2)
    log = write_log(tmp_path / "e2" / "session.jsonl", 4, [user([image(PNG2_REF)])])
    result = invoke(str(log), "--out", str(tmp_path / "o-link"), "--store", str(media), "--json")
    assert result.exit_code == 1 and manifest(result)["images"][0]["status"] == "unsafe"


# --------------------------------------------------------------------------------------------------
# Corpus and samples

CORPUS_IMAGES = {
    "v0/examples-acp-agent-read-image.jsonl": [("tool-result", "message.content[0].content[1]")],
    "v0/examples-acp-agent-inline-image-prompt.jsonl": [("inbox", "inserted[0].content[1]"), ("user", "content[1]")],
    "v2/snapshot-form/sdk-inline-image-prompt.session.v2.jsonl": [("inbox", "inserted[0].content[1]"), ("user", "content[1]")],
    "v4/snapshot-form/session-read-image.session.v4.jsonl": [("tool-result", "message.content[1]")],
}
CORPUS_ID = "sha256:b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640"


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(CORPUS_IMAGES))
def test_corpus_images_are_listed_and_reported_missing(name, tmp_path):
    rows = listing(corpus_file(name))
    assert [(r["where"], r["at"]) for r in rows] == CORPUS_IMAGES[name]
    assert all((r["attachmentId"], r["mediaType"], r["bytes"], r["width"], r["height"]) == (CORPUS_ID, "image/png", 69, 1, 1) for r in rows)
    store = make_store(tmp_path / "home")
    result = invoke(str(CORPUS / name), "--out", str(tmp_path / "out"), "--store", str(store), "--json")
    assert result.exit_code == 1
    statuses = [r["status"] for r in manifest(result)["images"]]
    assert statuses[0] == "missing" and all(s == "duplicate" for s in statuses[1:])
    assert not (tmp_path / "out").exists()


@pytest.mark.corpus
def test_corpus_files_without_images_list_nothing():
    for path in sorted(CORPUS.rglob("*.jsonl")):
        name = str(path.relative_to(CORPUS))
        if name in CORPUS_IMAGES or b'"image"' in path.read_bytes():
            continue
        try:
            log = open_log(str(path))
            refs = scan_log(log).refs
        except DshctlError:
            continue  # the corpus's documented refusals
        assert refs == [], name


SAMPLE_STORE = sample("attachments")


def test_samples_with_images_list_and_extract(tmp_path):
    logs = [p for p in sorted(SAMPLES.glob("*.jsonl*")) if "torn" not in p.name]
    found = 0
    for log in logs:
        rows = listing(log)
        if not rows:
            continue
        found += 1
        assert {r["where"] for r in rows} & {"user", "assistant-stream", "tool-result", "inbox"}
        out = tmp_path / log.name.replace(".", "_")
        result = invoke(str(log), "--out", str(out), "--store", str(SAMPLE_STORE), "--json")
        assert result.exit_code == 0, (log, result.output)
        doc = manifest(result)
        for row in doc["images"]:
            assert row["status"] in ("written", "duplicate")
            data = Path(row["path"]).read_bytes()
            assert "sha256:" + sha(data) == row["attachmentId"]
    assert found


def test_two_images_with_one_original_name_get_free_names(tmp_path):
    # Was a traceback: the second image found the name used in this run and never took the next one.
    tour = sample("tour.session.v4.jsonl").read_text()
    assert "pipeline.jpg" in tour and "ci-failure.png" in tour
    log = tmp_path / "same.jsonl"
    log.write_text(tour.replace("pipeline.jpg", "ci-failure.png"))
    out = tmp_path / "out"
    result = invoke(str(log), "--out", str(out), "--store", str(SAMPLE_STORE), "--json")
    assert result.exit_code == 0, result.output
    rows = manifest(result)["images"]
    assert [(r["status"], Path(r["path"]).name) for r in rows] == [
        ("written", "ci-failure.png"), ("duplicate", "ci-failure.png"),
        ("written", "ci-failure-2.png"), ("duplicate", "ci-failure-2.png"),
    ]
    assert set(os.listdir(out)) == {"ci-failure.png", "ci-failure-2.png"}
    for row in rows:  # each file holds its own image (the JPEG keeps the .png name it was given)
        assert "sha256:" + sha(Path(row["path"]).read_bytes()) == row["attachmentId"]
    again = invoke(str(log), "--out", str(out), "--store", str(SAMPLE_STORE), "--json")
    assert again.exit_code == 0, again.output
    assert [r["status"] for r in manifest(again)["images"]] == ["present", "duplicate", "present", "duplicate"]
    assert set(os.listdir(out)) == {"ci-failure.png", "ci-failure-2.png"}


# --------------------------------------------------------------------------------------------------
# Files as other tools write them; a store that is none


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
@pytest.mark.parametrize("force", [False, True])
def test_extracted_images_get_the_mode_every_tool_gives(tmp_path, v4_log, mask, force):
    """0666 less the umask (as cp, curl and unzip write a file), not a private 0600; the directory made
    for them as mkdir makes it."""
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    old = os.umask(mask)
    try:
        result = invoke(str(v4_log), "--out", str(out), "--store", str(store), *(["--force"] if force else []))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert os.listdir(out) and {os.stat(out / name).st_mode & 0o777 for name in os.listdir(out)} == {0o666 & ~mask}
    assert os.stat(out).st_mode & 0o777 == 0o777 & ~mask


def test_an_image_appears_whole_or_not_at_all(tmp_path, v4_log, monkeypatch):
    """The bytes are written to a temporary file first and linked to the name once whole: a write that
    fails half-way leaves no file under the image's name, and no temporary file."""
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    out.mkdir()
    seen: list[str] = []
    real_write = os.write

    def failing_write(fd, data):
        seen.extend(os.listdir(out))
        real_write(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", failing_write)
    result = invoke(str(v4_log), "--out", str(out), "--store", str(store), *SEQ_NAMES)
    monkeypatch.undo()
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert seen and all(name.startswith(".dshctl-") for name in seen)  # nothing under an image's name while written
    assert os.listdir(out) == []


def test_a_taken_name_is_never_overwritten_by_the_link(tmp_path, v4_log):
    store = make_store(tmp_path / "home", PNG, PNG2, JPEG)
    out = tmp_path / "out"
    out.mkdir()
    (out / "0-0.png").write_bytes(b"mine")
    (out / "3-0.png").symlink_to(tmp_path / "elsewhere")
    result = invoke(str(v4_log), "--out", str(out), "--store", str(store), *SEQ_NAMES, "--json")
    assert result.exit_code == 1
    statuses: dict[str, str] = {}
    for r in manifest(result)["images"]:
        if r["path"]:
            statuses.setdefault(r["path"].rsplit("/", 1)[-1], r["status"])
    assert statuses["0-0.png"] == statuses["3-0.png"] == "exists"
    assert (out / "0-0.png").read_bytes() == b"mine" and not (tmp_path / "elsewhere").exists()
    assert not [name for name in os.listdir(out) if name.startswith(".dshctl-")]


def test_a_store_option_on_what_holds_no_store_is_a_usage_error(tmp_path):
    """A git objects directory, a folder of photos named media, a ZIP that is no export: status 2 saying so,
    where it listed "0 objects" with status 0."""
    git = tmp_path / "repo" / ".git" / "objects"
    (git / "ab").mkdir(parents=True)
    (git / "ab" / ("c" * 38)).write_bytes(b"x")
    (git / "pack").mkdir()
    photos = tmp_path / "media"
    photos.mkdir()
    (photos / "holiday.jpg").write_bytes(JPEG)
    archive = tmp_path / "photos.zip"
    import zipfile

    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("holiday.jpg", JPEG)
    for store, why in ((tmp_path / "repo" / ".git", f"2 entries in {git}, none of them an object (<2 hex>/<64 hex>)"),
                       (photos, f"1 entry in {photos}, none of them an export image (sha256:<64 hex>.<ext>)"),
                       (archive, "a ZIP with neither session.jsonl nor images under media/, so not a dsh session export")):
        result = invoke("--store", str(store))
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [f"dshctl: error: --store {store}: holds no attachment store: {why}"]


def test_an_empty_store_is_a_store_of_no_objects(tmp_path):
    home = tmp_path / "home"
    (home / "attachments" / "v1" / "objects" / "ab").mkdir(parents=True)  # its objects removed, its folder kept
    (home / "attachments" / "v1" / "objects" / ".tmp-write").write_bytes(b"")
    result = invoke("--store", str(home), "--json")
    assert result.exit_code == 0, result.output
    assert manifest(result)["summary"] == {"objects": 0, "verified": 0, "failed": 0}
    store = make_store(tmp_path / "other", PNG)
    (store / "v1" / "objects" / "notes.txt").write_text("kept by hand")
    listed = invoke("--store", str(store), "--json")
    assert listed.exit_code == 0 and manifest(listed)["summary"]["verified"] == 1


def test_tsv_gives_offloaded_and_stored_as_values(v4_log, tmp_path):
    """TSV: ``offloaded`` true/false and ``offloaded by`` a seq or empty, never ``yes`` / ``by seq N``;
    with a store, ``stored`` true/false beside the check's ``status``; the manifest's file and problem apart."""
    import csv

    def tsv(*args: str) -> list[dict]:
        result = invoke(*args, "--tsv")
        assert result.exit_code in (0, 1), result.output
        rows = list(csv.reader(result.stdout.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
        assert all(len(row) == len(rows[0]) for row in rows), result.stdout
        return [dict(zip(rows[0], row)) for row in rows[1:]]

    json_rows = {(r["seq"], r["n"]): r for r in listing(v4_log)}
    rows = tsv(str(v4_log))
    assert len(rows) == len(json_rows)
    for row in rows:
        expected = json_rows[(int(row["seq"]), int(row["n"]))]
        assert row["offloaded"] == ("true" if expected["offloaded"] else "false")
        assert row["offloaded by"] == ("" if expected["offloadedBy"] is None else str(expected["offloadedBy"]))
    assert {row["offloaded by"] for row in rows} == {"", "10"}
    # a log without offloads has the same columns
    plain_log = write_log(tmp_path / "plain" / "session.v4.jsonl", 4, [user([image(PNG_REF)])])
    (only,) = tsv(str(plain_log))
    assert (only["offloaded"], only["offloaded by"]) == ("false", "")
    store = tmp_path / "store"
    for data in (PNG,):
        digest = hashlib.sha256(data).hexdigest()
        (store / "v1" / "objects" / digest[:2]).mkdir(parents=True)
        (store / "v1" / "objects" / digest[:2] / digest).write_bytes(data)
    checked = tsv(str(v4_log), "--store", str(store))
    assert {(row["stored"], row["status"]) for row in checked} == {("true", "verified"), ("false", "missing")}
    assert all(cell not in ("yes", "no") for row in checked for cell in row.values())
    out = tmp_path / "out"
    written = tsv(str(v4_log), "--store", str(store), "--out", str(out), *SEQ_NAMES)
    assert {row["status"] for row in written} >= {"written", "missing"}
    for row in written:
        assert (row["file"] == "") == (row["problem"] != "") and (row["file"] == "") == (row["status"] not in ("written", "present", "duplicate") or "same image" in row["problem"])
        assert not row["file"] or Path(row["file"]).is_file()
