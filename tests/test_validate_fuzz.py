"""Mangled logs get the exit status the documents promise from ``dshctl validate``: random byte flips,
dropped, swapped and duplicated lines, truncation and replaced JSON values.

The promise (man/dshctl.1, validate and EXIT STATUS; FORMAT.md §1.6, §1.8, §8.5) is written out below
as :func:`raw_promise` and its zstd and JSON-value companions, from the damage alone and never from
what dshctl reports: 2 when line 1 is no session header (an empty file, no LF after line 1, no JSON
object with type "session" and a version 0–4), when a zstd frame that is complete on disk fails its
checksum or the header frame is incomplete, and when a record cannot be decoded in its place (an
unparsable or blank line, a record out of its seq order, a changed seq) and a later ``turn/end`` decodes
(the damage is committed: dsh refuses the log). The same damage without a later ``turn/end`` is the
crash tail dsh drops, and so is a truncation: what is left is the crash state of a clean log, status 0
(1 where a seeded log lost its inherited cut, codec/seed-cut). Where the damage leaves other values in
the records (a flipped byte inside a string …) no status is promised but that it is 0, 1 or 2, every
finding is worded and ``validate_log`` reports instead of raising. Every edit runs with and without
``--strict``: strict never passes what the default fails, and both say 2 alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import invoke, sample, samples
from dshctl.source import resolve
from dshctl.validate import exit_status, validate_log

BASES = samples("*.jsonl*")
RAW = [p for p in BASES if p.suffix == ".jsonl"]
WHOLE = [p for p in RAW if not p.name.startswith("torn-tail")]

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

# --------------------------------------------------------------------------------------------------
# What the documents promise


def _json(line: bytes):
    try:
        return json.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return None


def _is_header(value) -> bool:
    version = value.get("version") if isinstance(value, dict) else None
    # a JSON number, as JavaScript reads it: 0.0 is 0 (dsh's `version === 0` holds for it)
    integral = isinstance(version, int) or (isinstance(version, float) and version.is_integer())
    return (isinstance(value, dict) and value.get("type") == "session" and integral
            and not isinstance(version, bool) and 0 <= version <= 4)


def _seed_line(lines: list[bytes]) -> int | None:
    """The index (header = 0) of the line that completes a seeded log's inherited prefix: the record
    holding seq seedLength − 1 (v0), the last ``session/end-seed {inherited: true}`` (v2+)."""
    header = json.loads(lines[0])
    if header["version"] == 0:
        if not header.get("seedLength"):
            return None
        for index, line in enumerate(lines[1:], 1):
            obj = json.loads(line)
            data = obj["data"]
            last = obj["seq0"] + len(data.get("texts", data.get("args", []))) - 1 if "seq0" in obj else obj["seq"]
            if last >= header["seedLength"] - 1:
                return index
        raise AssertionError("seedLength beyond the log")
    if not header.get("isSeeded"):
        return None
    return [index for index, line in enumerate(lines[1:], 1) if (obj := json.loads(line))["type"] == "session/end-seed"
            and obj["data"].get("inherited") is True][-1]


def _seq(record: dict):
    """A record's seq as the decoder counts it (None when it has none it could count)."""
    seq = record.get("seq0", record.get("seq"))
    return seq if isinstance(seq, (int, float)) and not isinstance(seq, bool) else None


def _fixture_form(records) -> bool:
    """The first record that is an object has no envelope seq/time: dshctl reads the log as dsh's test
    fixture form (man page: validated as materialized, with a warning), which the damage does not decide."""
    first = next((record for record in records if isinstance(record, dict)), None)
    return first is not None and not any(key in first for key in ("seq", "time", "seq0", "time0"))


def _crash_state(clean: list[bytes], kept: int) -> set[int]:
    """The status of the first ``kept`` lines of a clean log (header included), which is what dsh leaves
    after a crash: clean, unless a seeded log lost its inherited cut."""
    seed = _seed_line(clean)
    return {1} if seed is not None and seed >= kept else {0}


def raw_promise(original: bytes, edited: bytes) -> set[int] | None:
    """The statuses allowed for ``edited``, a damaged copy of the clean raw log ``original``; None where
    the documents promise no more than 0, 1 or 2."""
    if b"\n" not in edited or not _is_header(_json(edited.split(b"\n", 1)[0])):
        return {2}
    before, after = original.split(b"\n"), edited.split(b"\n")
    if after[0] != before[0]:
        return None  # another header, still one
    clean = before[:-1]  # the committed lines; the last piece is "" or a torn fragment, never parsed
    lines = after[:-1]
    if _fixture_form(_json(line) for line in lines[1:]):
        return None
    known = set(clean[1:])
    damage = None  # the first line that cannot be decoded where it stands
    changed = False  # a record with other values: what they do is not promised
    for index, line in enumerate(lines[1:], 1):
        if index < len(clean) and line == clean[index]:
            continue
        value = _json(line)
        if (isinstance(value, dict) and line not in known and value.get("type") != "session"
                and not (index < len(clean) and _seq(value) != _seq(json.loads(clean[index])))):
            changed = True
        elif damage is None:
            damage = index  # unparsable, blank, no object, a header copy, out of its place, another seq
    if damage is not None:
        rest = lines[damage:]  # the damaged record counts too (§8.5)
        if any(line in known and _json(line)["type"] == "turn/end" for line in rest):
            return {2}
        if any(isinstance(value := _json(line), dict) and value.get("type") == "turn/end" for line in rest):
            return None  # an edited turn/end may or may not decode as one
    if changed:
        return None
    return _crash_state(clean, len(lines) if damage is None else damage)


def _frames(data: bytes) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(start, end, byte ranges of its frame and block headers) of each zstd frame, by RFC 8878's layout;
    an incomplete last frame ends past the data."""
    frames = []
    at = 0
    while at < len(data):
        start, descriptor = at, data[at + 4]
        single = descriptor >> 5 & 1
        header = 4 + 1 + (not single) + (0, 1, 2, 4)[descriptor & 3] + (single, 2, 4, 8)[descriptor >> 6]
        layout = [(at, at + header)]
        at += header
        while at + 3 <= len(data):
            block = int.from_bytes(data[at:at + 3], "little")
            layout.append((at, at + 3))
            at += 3 + (1 if block >> 1 & 3 == 1 else block >> 3)
            if block & 1:
                break
        else:
            at = len(data) + 1
        at += 4 if descriptor & 4 else 0
        frames.append((start, at, layout))
    return frames


def _decoded(data: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompressobj().decompress(data)


def zstd_truncation_promise(original: bytes, cut: int) -> set[int] | None:
    frames = _frames(original)
    clean = b"".join(_decoded(original[start:end]) for start, end, _ in frames if end <= len(original)).split(b"\n")[:-1]
    if frames[0][1] - 4 <= cut < frames[0][1]:
        return None  # test_a_header_frame_without_its_checksum_is_unreadable
    complete = [(start, end) for start, end, _ in frames if end <= cut]
    if not complete:
        return {2}  # no complete header frame
    kept = b"".join(_decoded(original[start:end]) for start, end in complete)
    for start, end, _ in frames:
        if start < cut < end:  # the torn frame: its decodable complete lines are kept
            partial = _decoded(original[start:cut])
            kept += partial[: partial.rfind(b"\n") + 1]
    return _crash_state(clean, kept.count(b"\n"))


def zstd_flip_promise(original: bytes, edited: bytes) -> set[int] | None:
    frames = _frames(original)
    headers = [span for _, _, layout in frames for span in layout]
    changed = [index for index, (a, b) in enumerate(zip(original, edited)) if a != b]
    for index in changed:
        in_complete_frame = any(start <= index < end <= len(original) for start, end, _ in frames)
        if not in_complete_frame or any(start <= index < end for start, end in headers):
            return None  # the frame layout itself changed, or a torn frame (no checksum) did
    for start, end, _ in frames:
        if any(start <= index < end for index in changed):
            try:
                if _decoded(edited[start:end]) != _decoded(original[start:end]):
                    return None  # another content that passes the checksum: not promised
            except zstandard.ZstdError:
                return {2}  # a complete frame that fails to decode or its checksum
    return {0}  # bits the decoder never reads: the same log


def _same(a, b) -> bool:
    return json.dumps(a) == json.dumps(b)  # not ==: 0 == False and 1 == 1.0 in Python


def json_promise(original: list, edited: list) -> set[int] | None:
    """For records edited in place (a JSON value replaced, a member removed), re-serialized."""
    if not _is_header(edited[0]):
        return {2}
    if _same(edited, original):
        return {0}
    if not _same(edited[0], original[0]) or _fixture_form(edited[1:]):
        return None
    for index in range(1, len(edited)):
        record = edited[index]
        if not (isinstance(record, dict) and ("seq0" in record) == ("seq0" in original[index])
                and _seq(record) is not None and _seq(record) == _seq(original[index])):
            # a seq gap: committed when a later (or this) record is an unchanged turn/end
            if any(_same(edited[later], original[later]) and original[later]["type"] == "turn/end"
                   for later in range(index, len(edited))):
                return {2}
            return None
    return None


# --------------------------------------------------------------------------------------------------
# The verdicts


def verdict(data: bytes, tmp_path: Path, name: str, promise: set[int] | None) -> int:
    path = tmp_path / name
    path.write_bytes(data)
    report = validate_log(resolve(str(path))[0])  # reports what is wrong; never raises for a file
    status, strict = exit_status([report], False), exit_status([report], True)
    findings = [(f.rule, f.severity, f.message) for f in report.findings]
    assert status in (promise or {0, 1, 2}), (status, promise, findings)
    assert strict >= status and (strict == 2) == (status == 2) == report.unreadable, (status, strict, findings)
    for finding in report.findings:
        assert finding.severity in ("error", "warning") and finding.message
    return status


def _promise(base: Path, data: bytes) -> set[int] | None:
    original = base.read_bytes()
    return zstd_flip_promise(original, data) if base.suffix == ".zstd" else raw_promise(original, data)


byte_edits = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=12)


@FUZZ
@given(base=st.sampled_from(BASES), edits=byte_edits)
def test_byte_flips(base: Path, edits, tmp_path: Path):
    data = bytearray(base.read_bytes())
    for where, value in edits:
        data[int(where * len(data))] = value
    verdict(bytes(data), tmp_path, base.name, _promise(base, bytes(data)))


def _truncation_promise(base: Path, cut: int) -> set[int] | None:
    original = base.read_bytes()
    if base.suffix == ".zstd":
        return zstd_truncation_promise(original, cut)
    return raw_promise(original, original[:cut])


@FUZZ
@given(base=st.sampled_from(BASES), cut=st.floats(0, 1))
def test_truncation(base: Path, cut: float, tmp_path: Path):
    data = base.read_bytes()
    at = int(cut * len(data))
    promise = _truncation_promise(base, at)
    assert promise is not None or base.suffix == ".zstd"  # a truncation always has a promise but one
    verdict(data[:at], tmp_path, base.name, promise)


@pytest.mark.parametrize("base", BASES, ids=lambda p: p.name)
def test_truncation_at_every_boundary(base: Path, tmp_path: Path):
    """Cut at every line end (raw) or frame end (zstd), and halfway into each line or frame."""
    data = base.read_bytes()
    if base.suffix == ".zstd":
        ends = [end for _, end, _ in _frames(data) if end <= len(data)]
    else:
        ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    cuts = sorted({0, len(data), *ends, *((a + b) // 2 for a, b in zip([0, *ends], ends))})
    statuses = {cut: verdict(data[:cut], tmp_path, base.name, _truncation_promise(base, cut)) for cut in cuts}
    assert statuses[0] == 2 and statuses[len(data)] == 0


line_ops = st.lists(st.tuples(st.sampled_from(["drop", "swap", "dup"]), st.floats(0, 1, exclude_max=True),
                              st.floats(0, 1, exclude_max=True)), min_size=1, max_size=5)


@FUZZ
@given(base=st.sampled_from(RAW), ops=line_ops)
def test_line_edits(base: Path, ops, tmp_path: Path):
    lines = base.read_bytes().split(b"\n")
    for op, a, b in ops:
        if len(lines) < 2:
            break
        i, j = int(a * len(lines)), int(b * len(lines))
        if op == "drop":
            del lines[i]
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, lines[j])
    data = b"\n".join(lines)
    verdict(data, tmp_path, base.name, raw_promise(base.read_bytes(), data))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "index", "text", "seq"]), inner,
                                                                 max_size=3),
    max_leaves=6,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


@FUZZ
@example(base=sample("tour.session.jsonl"), picks=[(0.0, 0.25, 0.0, False)])  # "version": 0.0 is version 0
@given(base=st.sampled_from(WHOLE), picks=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True),
                                                           json_values, st.booleans()), min_size=1, max_size=3))
def test_json_value_edits(base: Path, picks, tmp_path: Path):
    original = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    objs = json.loads(json.dumps(original))
    for a, b, value, remove in picks:
        target = objs[int(a * len(objs))]
        paths = list(_paths(target))[1:]
        if not paths:
            continue
        path = paths[int(b * len(paths))]
        parent = target
        for key in path[:-1]:
            parent = parent[key]
        if remove and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    data = ("\n".join(json.dumps(o) for o in objs) + "\n").encode()
    verdict(data, tmp_path, base.name, json_promise(original, objs))


def test_a_header_frame_without_its_checksum_is_unreadable(tmp_path: Path):
    data = sample("tour.session.v4.jsonl.zstd").read_bytes()
    header_frame_end = _frames(data)[0][1]
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data[: header_frame_end - 2])
    assert exit_status([validate_log(resolve(str(path))[0])], False) == 2


def test_cli_on_mangled_input(tmp_path: Path):
    """The command's status in every format is the promised one: a torn tail (crash state) 0, a seq gap
    before a turn/end 2, a binary first line 2, an empty file 2."""
    base = sample("tour.session.v2.jsonl").read_bytes()
    cases = [base[:777], base.replace(b'"seq":12', b'"seq":99'), b"\x00\xff" + base, b""]
    assert [raw_promise(base, data) for data in cases] == [{0}, {2}, {2}, {2}]
    for index, data in enumerate(cases):
        path = tmp_path / f"m{index}.jsonl"
        path.write_bytes(data)
        for fmt in ("text", "json", "sarif", "junit"):
            assert invoke("validate", "--format", fmt, str(path)).exit_code == [0, 2, 2, 2][index], (index, fmt)
        assert invoke("validate", "--strict", str(path)).exit_code == [1, 2, 2, 2][index], index


def test_a_cut_header_frame_is_one_clear_error_in_every_command(tmp_path: Path):
    """FORMAT.md §1.6: EOF inside the header frame is corruption, not a torn tail; --salvage still reads
    the header line that its prefix holds."""
    data = sample("tour.session.v4.jsonl.zstd").read_bytes()
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data[: _frames(data)[0][1] - 2])
    for command in (["stats", "--json"], ["cat"], ["validate"], ["replay"], ["grep", "x"]):
        result = invoke(*command, str(path))
        assert result.exit_code == 2, (command, result.output)
        assert "header frame, is cut off" in result.output + result.stderr, command
    for command in (["stats", "--json"], ["cat"]):
        salvaged = invoke(*command, "--salvage", str(path))
        assert salvaged.exit_code == 1, (command, salvaged.output)  # damage read past, as the man page says
        assert "header frame, is cut off" in salvaged.stderr, command


def test_a_cut_frame_1_says_what_its_prefix_decodes_to(tmp_path: Path):
    """A cut first frame whose decoded prefix is no JSON object was never a header: it is zstd of
    something else, without the --salvage hint; a cut that left line 1 whole keeps the hint, and one that
    did not drops it (--salvage could not read a header line)."""
    import zstandard

    lines = b"".join(b"line %d of some text\n" % number for number in range(20_000))  # over one 128 KiB block
    text = zstandard.ZstdCompressor().compress(lines)
    cut_text = tmp_path / "text.jsonl.zst"
    cut_text.write_bytes(text[: len(text) - 3])
    result = invoke("stats", str(cut_text))
    assert result.exit_code == 2 and "zstd data that is not JSON once decompressed" in result.stderr
    assert "--salvage" not in result.stderr and "header frame" not in result.stderr

    header = sample("tour.session.v4.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n"
    whole = zstandard.ZstdCompressor(level=1).compress(header + b"".join(b'{"seq":%d,' % n for n in range(40_000)))
    cut = tmp_path / "whole-line.jsonl.zst"
    cut.write_bytes(whole[: len(whole) - 3])
    assert "reads its header line" in invoke("stats", str(cut)).stderr

    unterminated = zstandard.ZstdCompressor().compress(header[:-1] * 50)
    torn = tmp_path / "no-line.jsonl.zst"
    torn.write_bytes(unterminated[:40])
    result = invoke("stats", str(torn))
    assert result.exit_code == 2 and "header frame, is cut off" in result.stderr and "--salvage" not in result.stderr
