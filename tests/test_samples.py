"""The project's own sample logs (samples/): current, well-formed, and one conversation in five forms.

samples/generate.py writes them from one conversation model; these tests check that the committed files
are what the generator writes today, that they follow the dsh format rules they are meant to exercise
(FORMAT.md §1.6 frames, §2.4 packed rows, §2.6 folding, §2.8 citations, §4 streams, §5 images), and
that the v0, v2, v3 and v4 renderings carry the same chunks, messages and timings.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
import sys
import zipfile
from pathlib import Path

import pytest
import zstandard

from conftest import REPO, SAMPLES  # noqa: E402

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from dshctl.stream import expand_strict, iter_members, stream_from_builtins  # noqa: E402

STEMS = ("tour", "fork-child")
VERSIONS = (0, 2, 3, 4)
ROW_TYPES = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta", "tool-call-chunks": "tool-call-delta"}
SETTLEMENTS = ("assistant/message", "assistant/attempt")


def name(stem: str, version: int) -> str:
    return f"{stem}.session.jsonl" if version == 0 else f"{stem}.session.v{version}.jsonl"


def load_generator():
    spec = importlib.util.spec_from_file_location("samples_generate", SAMPLES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no samples/__pycache__
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    return module


def zstd_frames(data: bytes) -> tuple[list[bytes], bytes]:
    """Decoded complete frames, and the raw bytes of a torn final frame (b"" when there is none)."""
    frames = []
    pos = 0
    while pos < len(data):
        assert data[pos : pos + 4] == b"\x28\xb5\x2f\xfd", "every frame starts with the zstd magic"
        dobj = zstandard.ZstdDecompressor().decompressobj()
        try:
            content = dobj.decompress(data[pos:])
        except zstandard.ZstdError:
            return frames, data[pos:]
        if not dobj.eof:
            return frames, data[pos:]
        frames.append(content)
        pos = len(data) - len(dobj.unused_data)
    return frames, b""


def read_lines(path: Path) -> tuple[dict, list[dict]]:
    """Header and records (packed rows still packed) of a complete sample file."""
    text = path.read_bytes().decode("utf-8")
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def expand_row(row: dict) -> list[dict]:
    data = row["data"]
    kind = ROW_TYPES[row["type"]]
    members = data["args"] if kind == "tool-call-delta" else data["texts"]
    out = []
    time = row["time0"]
    for k, member in enumerate(members):
        if k:
            time += data["dt"][k - 1]
        if kind == "tool-call-delta":
            chunk = {"type": kind, "index": data["index"], "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": kind, "index": data["index"], "text": member}
        out.append({"type": "assistant/chunk", "seq": row["seq0"] + k, "time": time,
                    "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk}})
    return out


def events_of(stem: str, version: int) -> tuple[dict, list[dict]]:
    header, records = read_lines(SAMPLES / name(stem, version))
    events = []
    for record in records:
        events.extend(expand_row(record) if record["type"] in ROW_TYPES else [record])
    return header, events


def expand_seqs(cited: list) -> list[int]:
    out = []
    for item in cited:
        if isinstance(item, list):
            first, last = item
            out.extend(range(first, last + 1))
        else:
            out.append(item)
    return out


def v0_attempts(events: list[dict]) -> list[list[tuple[int, dict]]]:
    """Timed chunks of every attempt of a v0 log, grouped as the v1->v2 fold groups them (§2.6)."""
    attempts: list[list[tuple[int, dict]]] = []
    open_key = None
    terminated = False
    for ev in events:
        if ev["type"] == "assistant/chunk":
            key = (ev["data"]["turn"], ev["data"]["step"])
            if open_key is None or key != open_key or terminated:
                attempts.append([])
                open_key, terminated = key, False
            attempts[-1].append((ev["time"], ev["data"]["chunk"]))
            terminated = ev["data"]["chunk"]["type"] == "finish"
        elif ev["type"] in ("assistant/message", "turn/end", "step/end", "llm/retry", "llm/retry-started"):
            open_key = None
    return attempts


def all_sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name not in ("generate.py", "README.md")
                  and "__pycache__" not in p.parts)


# --------------------------------------------------------------------------------------------------


def test_generator_is_deterministic_and_files_are_current():
    generator = load_generator()
    assert generator.main(["--check"]) == 0, "samples/ is out of date: run python samples/generate.py"


def test_every_line_is_json():
    for path in all_sample_files():
        if "attachments" in path.parts:
            continue
        data = path.read_bytes()
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                text = archive.read("session.jsonl").decode("utf-8")
        elif path.name.endswith(".zstd"):
            frames, torn = zstd_frames(data)
            assert frames, path
            assert bool(torn) == path.name.startswith("torn-tail"), path
            for frame in frames:
                assert frame.endswith(b"\n"), f"{path}: a complete frame ends on a record boundary"
            text = b"".join(frames).decode("utf-8")
        else:
            text = data.decode("utf-8")
        lines = text.split("\n")
        if path.name.startswith("torn-tail") and not path.name.endswith(".zstd"):
            assert lines[-1] != "", "the raw torn tail ends inside its last line"
            with pytest.raises(json.JSONDecodeError):
                json.loads(lines[-1])
        else:
            assert lines[-1] == ""
        for line in lines[:-1]:
            assert line and isinstance(json.loads(line), dict), path


@pytest.mark.parametrize("stem", STEMS)
@pytest.mark.parametrize("version", VERSIONS)
def test_zstd_file_is_the_raw_file_in_frames(stem, version):
    raw = (SAMPLES / name(stem, version)).read_bytes()
    data = (SAMPLES / (name(stem, version) + ".zstd")).read_bytes()
    frames, torn = zstd_frames(data)
    assert not torn
    assert b"".join(frames) == raw
    assert frames[0] == raw[: raw.index(b"\n") + 1], "frame 1 holds the header line alone"
    assert len(frames) > 2
    pos = 0
    while pos < len(data):
        params = zstandard.get_frame_parameters(data[pos:])
        assert params.has_checksum, "dsh writes frames with a content checksum"
        dobj = zstandard.ZstdDecompressor().decompressobj()
        dobj.decompress(data[pos:])
        pos = len(data) - len(dobj.unused_data)


@pytest.mark.parametrize("stem", STEMS)
def test_v0_rows_and_seqs(stem):
    header, records = read_lines(SAMPLES / name(stem, 0))
    assert header["version"] == 0 and "isSeeded" not in header and header["delegationDepth"] in (0, 1)
    seq = 0
    rows = 0
    for record in records:
        if record["type"] in ROW_TYPES:
            rows += 1
            assert set(record) == {"type", "seq0", "time0", "data"}
            members = expand_row(record)
            assert len(members) >= 3, "packed rows have at least three members"
            assert len(record["data"]["dt"]) == len(members) - 1
            assert record["seq0"] == seq
            seq += len(members)
        else:
            assert set(record) <= {"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"}
            assert record["seq"] == seq, "seqs are dense after expanding rows"
            seq += 1
    assert rows > 0


def test_v0_batches_split_runs():
    """Packing is per durable batch: a run straddling a frame boundary splits, a piece < 3 stays unpacked."""
    data = (SAMPLES / "tour.session.jsonl.zstd").read_bytes()
    frames, _ = zstd_frames(data)
    split_rows = 0
    for before, after in zip(frames[1:], frames[2:]):
        last = json.loads(before.decode().rstrip("\n").split("\n")[-1])
        first = json.loads(after.decode().split("\n")[0])
        if last["type"] in ROW_TYPES and first["type"] in ROW_TYPES:
            a, b = last["data"], first["data"]
            if (last["type"], a["turn"], a["step"], a["index"]) == (first["type"], b["turn"], b["step"], b["index"]):
                split_rows += 1
    assert split_rows >= 2, "the 40-delta answer spans three batches"
    _, records = read_lines(SAMPLES / "tour.session.jsonl")
    loose = [r for r in records if r["type"] == "assistant/chunk" and r["data"]["chunk"]["type"] in ("text-delta", "reasoning-delta")]
    assert len(loose) >= 2, "pieces of fewer than three deltas stay ordinary events"
    named = [r for r in records if r["type"] == "tool-call-chunks" and "name" in r["data"]]
    unnamed = [r for r in records if r["type"] == "tool-call-chunks" and "name" not in r["data"]]
    assert named and unnamed


@pytest.mark.parametrize("stem", STEMS)
def test_v0_citations(stem):
    _, events = events_of(stem, 0)
    forms = set()
    for ev in events:
        if "sourceEventSeqs" not in ev:
            continue
        cited = ev["sourceEventSeqs"]
        forms.add("ranges" if any(isinstance(x, list) for x in cited) else "flat")
        seqs = expand_seqs(cited)
        assert all(s < ev["seq"] for s in seqs)
        if ev["type"] == "assistant/message":
            # every chunk of the final attempt, and only those
            turn, step = ev["data"]["turn"], ev["data"]["step"]
            chunks = [e for e in events[: ev["seq"]] if e["type"] == "assistant/chunk"
                      and (e["data"]["turn"], e["data"]["step"]) == (turn, step)]
            finishes = [i for i, e in enumerate(chunks[:-1]) if e["data"]["chunk"]["type"] == "finish"]
            final = chunks[finishes[-1] + 1 :] if finishes else chunks
            assert seqs == [e["seq"] for e in final]
        elif ev["type"] == "tool/result":
            call = events[seqs[0]]
            assert call["type"] == "tool/call" and call["data"]["callId"] == ev["data"]["message"]["source"]["callId"]
    assert forms == {"ranges", "flat"}


@pytest.mark.parametrize("stem", STEMS)
@pytest.mark.parametrize("version", (2, 3, 4))
def test_settlement_streams_assemble(stem, version):
    assembler_module = pytest.importorskip("dshctl.assembler")
    _, events = events_of(stem, version)
    settled = 0
    for ev in events:
        assert ev["seq"] == events.index(ev)
        if ev["type"] not in SETTLEMENTS:
            continue
        data = ev["data"]
        members = list(expand_strict(data["stream"]))
        assert members == list(iter_members(stream_from_builtins(data["stream"])))
        assembler = assembler_module.BlockAssembler()
        for _, chunk in members:
            assembler.push(chunk)
        if ev["type"] == "assistant/attempt":
            assert set(data) == {"turn", "step", "stream"}
            continue
        settled += 1
        message = data["message"]
        expected = assembler.interrupted_blocks() if data.get("interrupted") else assembler.blocks()
        assert message["content"] == expected
        assert data.get("usage") == assembler.usage
        assert message["source"].get("replayState") == assembler.replay_state()
        assert "sourceEventSeqs" not in ev
    assert settled >= 2


@pytest.mark.parametrize("stem", STEMS)
def test_one_conversation_in_every_generation(stem):
    """v0's chunk streams per attempt are the v2/v3/v4 settlement streams, member for member; every
    other event keeps its type, time and order (v3 only adds system/message events)."""
    _, v0 = events_of(stem, 0)
    attempts = v0_attempts(v0)
    v0_rest = [(e["type"], e["time"]) for e in v0 if e["type"] not in ("assistant/chunk", "assistant/message")]
    for version in (2, 3, 4):
        _, events = events_of(stem, version)
        streams = [list(iter_members(stream_from_builtins(e["data"]["stream"]))) for e in events if e["type"] in SETTLEMENTS]
        assert streams == attempts, f"v{version}"
        for e in events:
            if e["type"] == "assistant/attempt":
                members = list(iter_members(stream_from_builtins(e["data"]["stream"])))
                assert e["time"] == members[-1][0], "an attempt is stamped with its last chunk's time"
        rest = [(e["type"], e["time"]) for e in events if e["type"] not in SETTLEMENTS + ("system/message",)]
        assert rest == v0_rest, f"v{version}"
    v0_messages = [e for e in v0 if e["type"] == "assistant/message"]
    for version in (2, 3, 4):
        _, events = events_of(stem, version)
        messages = [e for e in events if e["type"] == "assistant/message"]
        assert [(m["time"], m["data"]["message"]) for m in messages] == [(m["time"], m["data"]["message"]) for m in v0_messages]


@pytest.mark.parametrize("stem", STEMS)
def test_references_point_at_the_same_events(stem):
    """Renumbering keeps every reference on its event: titles cite the same prompts, results their calls."""
    cited_by_version = []
    for version in VERSIONS:
        _, events = events_of(stem, version)
        cited = []
        for e in events:
            if "messageSeqs" in e["data"]:
                targets = [events[s] for s in e["data"]["messageSeqs"]]
                assert all(t["type"] == "user/message" and t["data"]["source"]["kind"] == "user" for t in targets)
                cited.append((e["type"], [t["data"]["id"] for t in targets]))
            if e["type"] == "tool/result":
                call = events[expand_seqs(e["sourceEventSeqs"])[0]]
                assert call["type"] == "tool/call"
                message = e["data"]["message"]
                call_id = message["toolCallId"] if version == 4 else message["content"][0]["toolCallId"]
                assert call["data"]["callId"] == call_id == message["source"]["callId"]
                cited.append((e["type"], [call_id]))
        assert cited
        cited_by_version.append(cited)
    assert all(c == cited_by_version[0] for c in cited_by_version)


def test_v3_system_prompt_heads():
    _, events = events_of("tour", 3)
    heads = [e for e in events if e["type"] == "system/message"]
    assert heads[0]["surfaceOp"] == "append" and heads[0]["data"]["message"]["content"] == []
    assert events[heads[0]["seq"] - 1]["type"] == "step/start"
    for previous, head in zip(heads, heads[1:]):
        assert head["surfaceOp"] == {"op": "replace", "startSeq": previous["seq"], "endSeq": previous["seq"]}
        assert head["sourceEventSeqs"] == [previous["seq"]]
        assert events[head["seq"] + 1]["type"] == "request/header"
    assert len(heads) == 3
    assert all("system" not in e["data"]["header"] for e in events if e["type"] == "request/header")
    reasons = [e["data"]["reason"] for e in events if e["type"] == "request/header"]
    assert reasons == ["initial", "change"]


def test_v4_shapes():
    _, events = events_of("tour", 4)
    for e in events:
        if e["type"] == "user/message":
            messages = [e["data"]]
        elif "message" in e["data"]:
            messages = [e["data"]["message"]]
        else:
            messages = e["data"].get("inserted", []) + e["data"].get("messages", [])
        for message in messages:
            assert message["source"]["kind"] != "plugin"
        if e["type"] == "tool/result":
            message = e["data"]["message"]
            assert list(message) == ["role", "source", "toolCallId", "content", "isError", "id"]
            assert message["role"] == "tool" and message["isError"] is False
        if e["type"] == "system/message":
            assert e["data"]["message"]["source"] == {"kind": "system-prompt"}
    kinds = {e["data"]["source"]["kind"] for e in events if e["type"] == "user/message"}
    assert kinds == {"user", "runtime-context"}


def test_fork_child_cut():
    header, v0 = events_of("fork-child", 0)
    _, tour = events_of("tour", 0)
    cut = header["seedLength"]
    assert header["parentSession"] == json.loads((SAMPLES / "tour.session.jsonl").read_text().split("\n")[0])["id"]
    assert header["origin"] == "subagent" and header["delegationDepth"] == 1
    assert v0[cut]["type"] == "session/end-seed"
    assert v0[:cut] == tour[:cut], "the inherited prefix is the parent's first events, verbatim"
    assert v0[cut - 2]["type"] == "turn/end" or v0[cut - 1]["type"] == "turn/end", "the cut follows a complete turn"
    for version in (2, 3, 4):
        header, events = events_of("fork-child", version)
        assert header["isSeeded"] is True and "seedLength" not in header
        markers = [e["seq"] for e in events if e["type"] == "session/end-seed" and e["data"].get("inherited") is True]
        assert len(markers) == 1
        _, parent = events_of("tour", version)
        inherited = events[: markers[0]]
        same = [(e["type"], e["time"]) for e in inherited]
        assert same == [(e["type"], e["time"]) for e in parent[: len(inherited)]]


def _image_dimensions(data: bytes, media_type: str) -> tuple[int, int]:
    if media_type == "image/png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
        return struct.unpack(">II", data[16:24])
    assert media_type == "image/jpeg" and data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9"
    pos = 2
    while pos < len(data):
        marker, length = data[pos + 1], struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        if marker == 0xC0:
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    raise AssertionError("no SOF0 segment")


def _image_refs(value):
    if isinstance(value, dict):
        if value.get("type") == "image" and "attachment" in value:  # (replayState entries are {"type": "image"})
            yield value["attachment"]
        for v in value.values():
            yield from _image_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _image_refs(v)


def test_images_are_real_and_stored():
    refs = {}
    for version in VERSIONS:
        _, events = events_of("tour", version)
        for e in events:
            for ref in _image_refs(e["data"]):
                refs[ref["attachmentId"]] = ref
    assert {r["mediaType"] for r in refs.values()} == {"image/png", "image/jpeg"}
    for attachment_id, ref in refs.items():
        assert set(ref) == {"attachmentId", "mediaType", "bytes", "width", "height", "name"}
        digest = attachment_id.removeprefix("sha256:")
        path = SAMPLES / "attachments" / "v1" / "objects" / digest[:2] / digest
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest
        assert len(data) == ref["bytes"]
        assert _image_dimensions(data, ref["mediaType"]) == (ref["width"], ref["height"])


def _project_key(cwd: str) -> str:
    out = []
    previous_separator = False
    for unit in struct.unpack(f"<{len(cwd.encode('utf-16-le')) // 2}H", cwd.encode("utf-16-le")):
        ch = chr(unit)
        if ch in "/\\:":
            if not previous_separator:
                out.append("-")
            previous_separator = True
            continue
        previous_separator = False
        out.append(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else f"~{unit:04X}")
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def test_sessions_root_layout():
    root = SAMPLES / "sessions"
    seen = {}
    for path in sorted(root.rglob("*.zstd")):
        project, session, filename = path.relative_to(root).parts
        frames, torn = zstd_frames(path.read_bytes())
        assert not torn
        header = json.loads(frames[0])
        assert project == (_project_key(header["cwd"]) if "cwd" in header else "_no-cwd")
        assert session == header["id"]  # the sample ids need no escaping
        assert header["version"] == (0 if filename == "session.jsonl.zstd" else int(filename.split(".")[1][1:]))
        seen.setdefault(session, []).append(filename)
        if session in ("7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57", "b4d2f6a8-1c3e-4a5b-9d7f-0e2c4a6b8d10"):
            stem = "tour" if session.startswith("7c1e") else "fork-child"
            assert path.read_bytes() == (SAMPLES / (name(stem, header["version"]) + ".zstd")).read_bytes()
    assert sorted(len(v) for v in seen.values()) == [1, 1, 3]
    assert "_no-cwd" in {p.name for p in root.iterdir()}


def test_torn_tails():
    raw = (SAMPLES / "torn-tail.session.v4.jsonl").read_bytes()
    assert not raw.endswith(b"\n")
    complete = raw[: raw.rindex(b"\n") + 1]
    frames, torn = zstd_frames((SAMPLES / "torn-tail.session.v4.jsonl.zstd").read_bytes())
    assert torn and len(frames) >= 2
    assert complete.startswith(b"".join(frames)), "the complete zstd frames are a prefix of the same log"
    events = [json.loads(line) for line in complete.decode().split("\n")[1:-1]]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "step/end", "only the final turn/end is torn"


def test_samples_stay_small():
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert total < 330_000  # 300 000 before the cwd-change sample (dsh 0.2.1's v4: 12 KB)


def test_the_export_zip_is_the_tour_and_its_images_as_dsh_web_ui_downloads_them():
    """FORMAT.md §1.10: session.jsonl (the log's text, whatever its generation) and media/<attachmentId>.<ext>."""
    (path,) = SAMPLES.glob("dsh-session-*.zip")
    assert path.name == "dsh-session-7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57.zip"
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    assert members.pop("session.jsonl") == (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    objects = SAMPLES / "attachments" / "v1" / "objects"
    stored = {p.name: p.read_bytes() for p in objects.rglob("*") if p.is_file()}
    extension = {True: "png", False: "jpg"}
    assert members == {f"media/sha256:{digest}.{extension[data.startswith(PNG_MAGIC)]}": data for digest, data in stored.items()}


PNG_MAGIC = bytes.fromhex("89504e470d0a1a0a")
