"""Mutation script: negative samples for ``dshctl validate``, at least one per rule, made from valid samples.

Every mutant starts from a sample in ``samples/`` (which validates clean), changes one thing, and
records which rule must fire and which exit status ``dshctl validate`` must give. The tests in
``tests/test_validate_rules.py`` run every mutant; ``python tests/mutate.py OUTDIR`` writes them all
to a directory (for a look by hand, or for the dsh differential check).
"""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import zstandard

from conftest import SAMPLES
NEG_ZERO = "\u0000-0\u0000"  # placeholder a mutation puts where the JSON literal -0 belongs


@dataclass
class Mutant:
    rule: str
    name: str
    base: str
    build: Callable[[], bytes]
    exit: int
    strict: bool = False
    absent: bool = False  # the rule must NOT fire (a control mutant)
    suffix: str = ".jsonl"

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.name}"


REGISTRY: list[Mutant] = []


def mutant(rule: str, base: str, exit: int, name: str | None = None, *, strict: bool = False, absent: bool = False):
    def register(func: Callable[[list], Any]) -> Callable:
        def build() -> bytes:
            objs = load(base)
            result = func(objs)
            if isinstance(result, bytes):
                return result
            return dump(objs if result is None else result)

        suffix = ".jsonl.zstd" if name and name.startswith("zstd") else ".jsonl"
        REGISTRY.append(Mutant(rule, name or func.__name__.strip("_"), base, build, exit, strict, absent, suffix))
        return func

    return register


# --------------------------------------------------------------------------- helpers


def load(name: str) -> list:
    return [json.loads(line) for line in (SAMPLES / name).read_text(encoding="utf-8").splitlines()]


def line_of(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text.replace(json.dumps(NEG_ZERO), "-0")


def dump(objs: list) -> bytes:
    return ("\n".join(line_of(o) for o in objs) + "\n").encode("utf-8")


def raw_lines(name: str) -> list[bytes]:
    return (SAMPLES / name).read_bytes().split(b"\n")[:-1]


def at(objs: list, seq: int) -> dict:
    """The event with this envelope seq (v2+ samples: list index seq + 1)."""
    for obj in objs[1:]:
        if obj.get("seq") == seq:
            return obj
    raise KeyError(seq)


def first(objs: list, kind: str, n: int = 0, **data) -> dict:
    found = [o for o in objs[1:] if o.get("type") == kind and all(o.get("data", {}).get(k) == v for k, v in data.items())]
    return found[n]


def stream(objs: list, seq: int) -> list:
    return at(objs, seq)["data"]["stream"]


def raw_index(records: list, chunk_type: str, n: int = 0, index: int | None = None) -> int:
    hits = [i for i, r in enumerate(records) if r.get("type") == "chunk" and r["chunk"].get("type") == chunk_type
            and (index is None or r["chunk"].get("index") == index)]
    return hits[n]


def _shift(value: Any, at_seq: int, by: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return value + by if value >= at_seq else value


def insert(objs: list, seq: int, event: dict) -> list:
    """Insert an event at ``seq`` in a v2+ log, renumbering later events and same-log references."""
    for obj in objs[1:]:
        if obj.get("seq", -1) >= seq:
            obj["seq"] += 1
        if isinstance(obj.get("sourceEventSeqs"), list):
            obj["sourceEventSeqs"] = [[_shift(x, seq, 1) for x in s] if isinstance(s, list) else _shift(s, seq, 1)
                                      for s in obj["sourceEventSeqs"]]
        op = obj.get("surfaceOp")
        if isinstance(op, dict):
            for key in ("start", "end", "startSeq", "endSeq"):
                if key in op:
                    op[key] = _shift(op[key], seq, 1)
        data = obj.get("data")
        if isinstance(data, dict):
            if isinstance(data.get("messageSeqs"), list):
                data["messageSeqs"] = [_shift(s, seq, 1) for s in data["messageSeqs"]]
            if "sourceEventSeq" in data:
                data["sourceEventSeq"] = _shift(data["sourceEventSeq"], seq, 1)
            if "throughSeq" in data:
                data["throughSeq"] = _shift(data["throughSeq"], seq, 1)
    event = dict(event)
    event["seq"] = seq
    event.setdefault("time", at(objs, seq - 1)["time"] if seq > 0 else 0)
    position = next(i for i, o in enumerate(objs) if i > 0 and o.get("seq") == seq + 1) if any(
        o.get("seq") == seq + 1 for o in objs[1:]) else len(objs)
    objs.insert(position, {"type": event.pop("type"), "seq": event.pop("seq"), "time": event.pop("time"), **event})
    return objs


def delete(objs: list, seq: int) -> list:
    """Remove the event at ``seq`` of a v2+ log and renumber later events (references left as they were)."""
    objs[:] = [o for o in objs if o.get("seq") != seq or o is objs[0]]
    for obj in objs[1:]:
        if obj.get("seq", -1) > seq:
            obj["seq"] -= 1
    return objs


def zstd_frames(chunks: list[bytes]) -> bytes:
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(cctx.compress(chunk) for chunk in chunks)


V0, V2, V3, V4 = "tour.session.jsonl", "tour.session.v2.jsonl", "tour.session.v3.jsonl", "tour.session.v4.jsonl"
FORK0, FORK2, FORK4 = "fork-child.session.jsonl", "fork-child.session.v2.jsonl", "fork-child.session.v4.jsonl"


# =========================================================================== codec


@mutant("codec/read", V2, 2, "zstd-corrupt-frame")
def _zstd_corrupt(objs):
    lines = dump(objs).split(b"\n")[:-1]
    frames = [lines[0] + b"\n"] + [b"\n".join(lines[i:i + 10]) + b"\n" for i in range(1, len(lines), 10)]
    data = bytearray(zstd_frames(frames))
    header_frame = len(zstd_frames(frames[:1]))
    second = len(zstd_frames(frames[:2]))
    data[header_frame + (second - header_frame) // 2] ^= 0xFF  # inside frame 2's compressed blocks
    return bytes(data)


@mutant("codec/zstd-header-frame", V2, 1, "zstd-header-shares-frame")
def _zstd_header(objs):
    lines = dump(objs).split(b"\n")[:-1]
    return zstd_frames([b"\n".join(lines[:3]) + b"\n", b"\n".join(lines[3:]) + b"\n"])


@mutant("codec/torn-tail", V2, 0)
def _torn(objs):
    return dump(objs)[:-1]


@mutant("codec/torn-tail", V2, 1, "torn_strict", strict=True)
def _torn_strict(objs):
    return dump(objs)[:-1]


@mutant("codec/fixture-form", V2, 0)
def _fixture(objs):
    for obj in objs[1:]:
        obj.pop("seq", None)
        obj.pop("time", None)


@mutant("codec/header", V2, 2)
def _not_json_header(objs):
    return b"{not a header\n" + dump(objs[1:])


@mutant("codec/header", V2, 2, "header_no_version")
def _header_no_version(objs):
    del objs[0]["version"]


@mutant("codec/version", V2, 2)
def _newer_version(objs):
    objs[0]["version"] = 5


@mutant("codec/header-keys", V2, 1)
def _header_extra(objs):
    objs[0]["sandboxMode"] = "read-only"


@mutant("codec/header-keys", V0, 1, "header_v2_key_in_v0")
def _header_v2_key(objs):
    objs[0]["isSeeded"] = False


@mutant("codec/header-fields", V2, 1)
def _header_relative_cwd(objs):
    objs[0]["cwd"] = "home/alice"


@mutant("codec/delegation-depth", V2, 1)
def _no_delegation_depth(objs):
    del objs[0]["delegationDepth"]


@mutant("codec/delegation-depth", V0, 1, "delegation_depth_neg_zero")
def _neg_zero_depth(objs):
    objs[0]["delegationDepth"] = NEG_ZERO


@mutant("codec/seed-cut", FORK2, 1)
def _seeded_false(objs):
    objs[0]["isSeeded"] = False


@mutant("codec/seed-cut", V2, 1, "seeded_without_marker")
def _seeded_true(objs):
    objs[0]["isSeeded"] = True


@mutant("codec/seed-cut", V0, 1, "seed_length_past_end")
def _seed_past_end(objs):
    objs[0]["seedLength"] = 10_000


@mutant("codec/seed-cut", FORK0, 1, "seed_cut_splits_attempt")
def _seed_splits(objs):
    objs[0]["seedLength"] = 12  # inside the first attempt's chunks (seqs 9..14)


@mutant("codec/json", V2, 2)
def _garbage_line(objs):
    lines = dump(objs).split(b"\n")
    lines[5] = b'{"type": "user/message", broken'
    return b"\n".join(lines)


@mutant("codec/json", V2, 0, "json_damaged_tail")
def _garbage_tail(objs):
    return dump(objs) + b"garbage after a crash\n"


@mutant("codec/json", V2, 2, "json_blank_line")
def _blank_line(objs):
    lines = dump(objs).split(b"\n")
    lines.insert(8, b"")
    return b"\n".join(lines)


@mutant("codec/seq-dense", V2, 2)
def _seq_gap(objs):
    for obj in objs[10:]:
        obj["seq"] += 5


@mutant("codec/seq-dense", V0, 2, "seq_gap_v0")
def _seq_gap_v0(objs):
    for obj in objs[10:]:
        if "seq" in obj:
            obj["seq"] += 1
        else:
            obj["seq0"] += 1


@mutant("codec/packed-row", V0, 2)
def _row_dt(objs):
    row = next(o for o in objs if o.get("type") == "text-chunks")
    row["data"]["dt"].append(1)


@mutant("codec/packed-row", V0, 2, "row_extra_key")
def _row_extra(objs):
    row = next(o for o in objs if o.get("type") == "reasoning-chunks")
    row["data"]["extra"] = True


@mutant("codec/record", V2, 2)
def _extra_top_level(objs):
    at(objs, 7)["extra"] = 1


@mutant("codec/record", V2, 2, "record_time_float")
def _time_float(objs):
    at(objs, 7)["time"] = 1.5


@mutant("codec/envelope-keys", V2, 1)
def _surface_op_on_log_event(objs):
    at(objs, 7)["surfaceOp"] = "append"


@mutant("codec/envelope-keys", V0, 1, "envelope_extra_v0")
def _extra_v0(objs):
    first(objs, "request/context")["meta"] = {}


@mutant("codec/envelope-keys", V3, 2, "envelope_v3_decoder")
def _surface_on_log_v3(objs):
    at(objs, 9)["sourceEventSeqs"] = [3]


@mutant("codec/time", V0, 1)
def _time_neg_zero(objs):
    first(objs, "request/context")["time"] = NEG_ZERO


@mutant("codec/ignorable", V0, 1)
def _ignorable_false(objs):
    first(objs, "request/context")["ignorable"] = False


@mutant("codec/unknown-type", V2, 1)
def _unknown_type(objs):
    insert(objs, 8, {"type": "custom/progress", "data": {"percent": 50}})


@mutant("codec/unknown-type", V2, 0, "unknown_ignorable", absent=True)
def _unknown_ignorable(objs):
    insert(objs, 8, {"type": "custom/progress", "data": {"percent": 50}, "ignorable": True})


@mutant("codec/unknown-type", V0, 1, "unknown_ignorable_v0_closed")
def _unknown_v0(objs):
    first(objs, "request/context")["type"] = "custom/progress"
    first(objs, "custom/progress")["ignorable"] = True


@mutant("codec/unknown-type", V0, 1, "retired_legacy_type")
def _legacy_type(objs):
    first(objs, "request/context")["type"] = "mode/set"


@mutant("codec/source-event-seqs", V2, 1)
def _empty_sources(objs):
    at(objs, 24)["sourceEventSeqs"] = []


@mutant("codec/source-event-seqs", V2, 1, "assistant_chunk_provenance_v2")
def _assistant_sources(objs):
    at(objs, 12)["sourceEventSeqs"] = [9]


@mutant("codec/record", V2, 2, "sources_not_increasing_ranges")
def _bad_ranges(objs):
    at(objs, 24)["sourceEventSeqs"] = [[5, 7], 6]


@mutant("codec/surface-op", V2, 1)
def _no_surface_op(objs):
    del at(objs, 4)["surfaceOp"]


@mutant("codec/surface-op", V2, 1, "replace_op_keys")
def _replace_keys(objs):
    at(objs, 5)["surfaceOp"] = {"op": "replace", "startSeq": 4, "endSeq": 4}
    at(objs, 5)["sourceEventSeqs"] = [4]


@mutant("codec/surface-op", V3, 2, "surface_op_v3_decoder")
def _no_surface_op_v3(objs):
    del at(objs, 5)["surfaceOp"]


@mutant("codec/settlement-fields", V2, 1)
def _stream_not_array(objs):
    at(objs, 9)["data"]["stream"] = {"records": []}


@mutant("codec/settlement-fields", V2, 1, "settlement_step_negative")
def _step_negative(objs):
    at(objs, 9)["data"]["step"] = -1


@mutant("codec/payload", V0, 1)
def _payload_v0(objs):
    first(objs, "step/start")["data"]["phase"] = "planning"


@mutant("codec/payload", V0, 1, "payload_v0_legacy_turn_end")
def _payload_turn_end(objs):
    first(objs, "turn/end")["data"]["reason"] = {"kind": "completed", "note": "x"}


@mutant("codec/payload", V3, 1, "payload_v3_header_system")
def _payload_v3(objs):
    first(objs, "request/header")["data"]["header"]["system"] = ""


@mutant("codec/payload", V4, 1, "payload_v4_plugin_source")
def _payload_v4(objs):
    first(objs, "user/message")["data"]["source"] = {"kind": "plugin", "plugin": "x"}


@mutant("codec/payload", V4, 1, "payload_v4_tool_role")
def _payload_v4_tool(objs):
    first(objs, "tool/result")["data"]["message"]["role"] = "user"


@mutant("codec/payload-v3-migration", V2, 0)
def _v3_migration(objs):
    at(objs, 4)["data"]["content"].append({"type": "sticker", "ref": "x"})


# Descriptor versions per generation ([v01] assertReleasedEventPayload; [v12] restore; [v23] assertEvent):
# v0 accepts only 3 (the migration refuses any other count), v1 passes another count through unread,
# v2 loads anything but 0.1.5's v2→v3 migration wants 3, v3/v4 admission never looks at it.


@mutant("codec/descriptor-version", FORK0, 1)
def _descriptor(objs):
    first(objs, "subagent/descriptor")["data"]["version"] = 2


@mutant("codec/payload", FORK0, 1, "descriptor_version_not_a_count")
def _descriptor_not_a_count(objs):
    first(objs, "subagent/descriptor")["data"]["version"] = "2"


@mutant("codec/descriptor-version", FORK0, 0, "descriptor_v2_in_v1", absent=True)
def _descriptor_v1(objs):
    objs[0]["version"] = 1
    descriptor = first(objs, "subagent/descriptor")["data"]
    descriptor["version"] = 2
    descriptor["retiredMember"] = True  # unread: a v1 payload with another version skips the shape check


@mutant("codec/payload-v3-migration", FORK2, 0, "descriptor_v2_in_v2")
def _descriptor_v2(objs):
    first(objs, "subagent/descriptor")["data"]["version"] = 2


@mutant("codec/descriptor-version", FORK4, 0, "descriptor_v2_in_v4", absent=True)
def _descriptor_v4(objs):
    first(objs, "subagent/descriptor")["data"]["version"] = 2


# dsh 0.2.1-alpha.2 (v4, same version): the cwd-change sample starts with a working-directory/change at seq 0,
# moves again at seq 12 and presents a file at seq 22
CWD4 = "cwd-change.session.v4.jsonl"


@mutant("codec/working-directory", CWD4, 1, "relative_cwd")
def _relative_cwd(objs):
    at(objs, 12)["data"]["cwd"] = "site"


@mutant("codec/working-directory", CWD4, 1, "cwd_not_a_string")
def _cwd_not_a_string(objs):
    at(objs, 0)["data"]["cwd"] = ["/home/alice"]


@mutant("codec/working-directory", CWD4, 1, "no_cwd")
def _no_cwd(objs):
    at(objs, 0)["data"] = {"path": "/home/alice"}


@mutant("codec/working-directory", CWD4, 0, "unknown_member_passes", absent=True)
def _working_directory_extra_member(objs):
    at(objs, 12)["data"]["reason"] = "tool"  # v4 gains optional members without a version bump


@mutant("codec/unknown-type", V3, 1, "working_directory_in_v3")
def _working_directory_in_v3(objs):
    insert(objs, 1, {"type": "working-directory/change", "data": {"cwd": "/home/alice"}})


@mutant("codec/deliverables", CWD4, 0, "files_not_an_array")
def _deliverables_files(objs):
    at(objs, 22)["data"]["files"] = "index.html"


@mutant("codec/deliverables", CWD4, 1, "file_without_path_strict", strict=True)
def _deliverables_path(objs):
    at(objs, 22)["data"]["files"] = [{"description": "The docs home page"}]


@mutant("codec/deliverables", CWD4, 0, "unknown_members_pass", absent=True)
def _deliverables_extra(objs):
    at(objs, 22)["data"]["files"][0]["bytes"] = 1024


# =========================================================================== stream (v2 tour: 12 = reasoning + text message)


@mutant("stream/not-object", V2, 1)
def _not_object(objs):
    stream(objs, 12).insert(0, 5)


@mutant("stream/type", V2, 1)
def _record_type(objs):
    stream(objs, 12)[1]["type"] = "thought-chunks"


@mutant("stream/exact-keys", V2, 1)
def _record_keys(objs):
    stream(objs, 12)[1]["extra"] = 1


@mutant("stream/texts", V2, 1)
def _texts_empty(objs):
    record = stream(objs, 44)[1]
    record["texts"] = []
    record["dt"] = []


@mutant("stream/args", V2, 1)
def _args_empty(objs):
    record = next(r for r in stream(objs, 21) if r["type"] == "tool-call-chunks")
    record["args"] = []


@mutant("stream/id", V2, 1)
def _id_empty(objs):
    next(r for r in stream(objs, 21) if r["type"] == "tool-call-chunks")["id"] = ""


@mutant("stream/name", V2, 1)
def _name_empty(objs):
    next(r for r in stream(objs, 21) if r["type"] == "tool-call-chunks" and "name" in r)["name"] = ""


@mutant("stream/safe-integer", V2, 1)
def _time0(objs):
    stream(objs, 12)[1]["time0"] = 1.5


@mutant("stream/index", V2, 1)
def _index(objs):
    stream(objs, 12)[1]["index"] = NEG_ZERO


@mutant("stream/dt-length", V2, 1)
def _dt_length(objs):
    stream(objs, 12)[1]["dt"].append(5)


@mutant("stream/member-time", V2, 1)
def _member_time(objs):
    record = stream(objs, 12)[1]
    record["time0"] = 2**53 - 1
    record["dt"][0] = 10


@mutant("stream/raw-chunk", V2, 1)
def _raw_chunk(objs):
    stream(objs, 12)[0]["chunk"] = [1, 2]


@mutant("stream/chunk", V2, 1)
def _chunk_shape(objs):
    records = stream(objs, 12)
    records[raw_index(records, "usage")]["chunk"]["usage"] = {"inputTokens": 1}


@mutant("stream/chunk", V0, 1, "chunk_v0_unknown_type")
def _chunk_v0(objs):
    chunk = next(o for o in objs if o.get("type") == "assistant/chunk" and o["data"]["chunk"]["type"] == "usage")
    chunk["data"]["chunk"] = {"type": "heartbeat"}


# =========================================================================== settlement


@mutant("settlement/content", V2, 1)
def _content(objs):
    at(objs, 12)["data"]["message"]["content"][1]["text"] = "Something else entirely."


@mutant("settlement/content", V2, 1, "content_interrupted")
def _content_interrupted(objs):
    at(objs, 52)["data"]["message"]["content"].pop()


@mutant("settlement/usage", V2, 1)
def _usage(objs):
    at(objs, 12)["data"]["usage"]["outputTokens"] += 1


@mutant("settlement/replay-state", V2, 1)
def _replay(objs):
    at(objs, 12)["data"]["message"]["source"]["replayState"]["blocks"].pop()


@mutant("settlement/assemble", V2, 1)
def _assemble(objs):
    records = stream(objs, 44)
    records.insert(raw_index(records, "finish"), {"type": "chunk", "time": records[-1]["time"],
                                                 "chunk": {"type": "block-start", "index": 9, "blockType": "diagram"}})


# =========================================================================== grammar


def _raw(records: list, chunk: dict) -> dict:
    return {"type": "chunk", "time": records[-1].get("time", records[-1].get("time0")), "chunk": chunk}


@mutant("grammar/block-start", V2, 1)
def _block_start(objs):
    records = stream(objs, 12)
    records.insert(1, copy.deepcopy(records[0]))


@mutant("grammar/index-reuse", V2, 1)
def _index_reuse(objs):
    records = stream(objs, 12)
    at_finish = raw_index(records, "usage")
    records.insert(at_finish, _raw(records, {"type": "block-start", "index": 0, "blockType": "reasoning"}))


@mutant("grammar/delta-target", V2, 1)
def _delta_target(objs):
    records = stream(objs, 12)
    records.insert(1, _raw(records, {"type": "text-delta", "index": 0, "text": ""}))


@mutant("grammar/delta-after-end", V2, 1)
def _delta_after_end(objs):
    records = stream(objs, 12)
    records.insert(raw_index(records, "usage"), _raw(records, {"type": "reasoning-delta", "index": 0, "text": " more"}))


@mutant("grammar/block-end", V2, 1)
def _block_end(objs):
    records = stream(objs, 12)
    records.insert(raw_index(records, "usage"), _raw(records, {"type": "block-end", "index": 4,
                                                               "block": {"type": "text", "text": ""}}))


@mutant("grammar/second-block-end", V2, 1)
def _second_block_end(objs):
    records = stream(objs, 12)
    end = raw_index(records, "block-end", index=1)
    records.insert(end + 1, copy.deepcopy(records[end]))


@mutant("grammar/usage-repeat", V2, 1)
def _usage_repeat(objs):
    records = stream(objs, 12)
    usage = raw_index(records, "usage")
    records.insert(usage, copy.deepcopy(records[usage]))


@mutant("grammar/usage-order", V2, 1)
def _usage_order(objs):
    records = stream(objs, 12)
    records.append(records.pop(raw_index(records, "usage")))


@mutant("grammar/after-finish", V2, 1)
def _after_finish(objs):
    records = stream(objs, 12)
    records.append(_raw(records, {"type": "block-start", "index": 5, "blockType": "text"}))
    records.append(_raw(records, {"type": "block-end", "index": 5, "block": {"type": "text", "text": ""}}))


@mutant("grammar/open-at-finish", V2, 1)
def _open_at_finish(objs):
    records = stream(objs, 12)
    del records[raw_index(records, "block-end", index=1)]


@mutant("grammar/max-tokens-open", V2, 0)
def _max_tokens_open(objs):
    return None  # the tour's turn 3 stops at the output limit inside a tool call, as dsh writes it


@mutant("grammar/max-tokens-tool-calls", V2, 1)
def _max_tokens_tool_calls(objs):
    at(objs, 44)["data"]["message"]["content"].append(
        {"type": "tool-call", "id": "call_00_Pz5cRw9KeTj3Ln8Dv4Sb0004", "name": "write_file", "arguments": "{"})


@mutant("grammar/no-finish", V2, 0)
def _no_finish(objs):
    records = stream(objs, 34)
    records.remove(records[raw_index(records, "finish")])
    del at(objs, 34)["data"]["message"]["source"]["replayState"]  # it came from the finish chunk


# =========================================================================== relationships


@mutant("relationships/turn-order", V2, 1)
def _turn_order(objs):
    first(objs, "turn/start", 1)["data"]["turn"] = 3


@mutant("relationships/turn-order", V2, 1, "turn_end_mismatch")
def _turn_end_mismatch(objs):
    first(objs, "turn/end", 0)["data"]["turn"] = 2


@mutant("relationships/step-order", V2, 1)
def _step_order(objs):
    at(objs, 27)["data"]["step"] = 3


@mutant("relationships/step-end", V2, 1)
def _step_end(objs):
    delete(objs, 13)


@mutant("relationships/open-turn", V2, 0)
def _open_turn(objs):
    delete(objs, 54)


@mutant("relationships/in-step", V2, 1)
def _in_step(objs):
    at(objs, 9)["data"]["step"] = 2


@mutant("relationships/in-turn", V2, 1)
def _in_turn(objs):
    insert(objs, 15, {"type": "request/context", "data": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}})


@mutant("relationships/tool-call-pairing", V2, 1)
def _tool_call(objs):
    at(objs, 22)["data"]["arguments"] = '{"file_path": "other.log"}'


@mutant("relationships/tool-result-pairing", V2, 1)
def _tool_result(objs):
    message = at(objs, 24)["data"]["message"]
    message["source"]["callId"] = "call_unknown"
    message["content"][0]["toolCallId"] = "call_unknown"


@mutant("relationships/tool-result-pairing", V2, 1, "result_without_call")
def _result_without_call(objs):
    delete(objs, 29)
    at(objs, 30)["sourceEventSeqs"] = [28]


@mutant("relationships/tool-unresolved", V2, 1)
def _tool_unresolved(objs):
    delete(objs, 25)


@mutant("relationships/retry-chain", V2, 1)
def _retry_chain(objs):
    at(objs, 10)["data"]["retry"] = 2
    at(objs, 11)["data"]["retry"] = 2


@mutant("relationships/retry-provider", V2, 1)
def _retry_provider(objs):
    at(objs, 10)["data"]["provider"] = "other-provider"


@mutant("relationships/retry-started", V2, 1)
def _retry_started(objs):
    at(objs, 11)["data"]["retryId"] = "retry-elsewhere"


@mutant("relationships/title-sources", V2, 1)
def _title_sources(objs):
    at(objs, 6)["data"]["messageSeqs"] = [5]


@mutant("relationships/surface-replace", V2, 1)
def _surface_replace(objs):
    at(objs, 5)["surfaceOp"] = {"op": "replace", "start": 2, "end": 2}
    at(objs, 5)["sourceEventSeqs"] = [2]


@mutant("relationships/surface-replace", V2, 1, "replace_sources_omit")
def _surface_sources(objs):
    at(objs, 5)["surfaceOp"] = {"op": "replace", "start": 4, "end": 4}
    at(objs, 5)["sourceEventSeqs"] = [3]


@mutant("relationships/compaction", V2, 1)
def _compaction(objs):
    insert(objs, 13, {"type": "compaction/end", "data": {"compactionId": "compaction-1", "turn": 1}})


@mutant("relationships/compaction", V0, 0, "legacy_compaction_without_ids", absent=True)
def _legacy_compaction(objs):
    # [v01] gives a legacy compaction one minted id, shared by its end: no bracket error
    last = objs[-1]
    objs.append({"type": "compaction/start", "seq": last["seq"] + 1, "time": last["time"], "data": {"turn": None}})
    objs.append({"type": "compaction/end", "seq": last["seq"] + 2, "time": last["time"],
                 "data": {"turn": None, "error": "summary failed"}})


@mutant("relationships/command", V2, 1)
def _command(objs):
    insert(objs, 15, {"type": "command/done", "data": {"commandId": "cmd-1", "kind": "success"}})


@mutant("relationships/delivery-marker", V2, 1)
def _delivery(objs):
    insert(objs, 14, {"type": "session-log-deepseek/delivery-accepted",
                      "data": {"sessionId": "another-session", "throughSeq": 12, "sessionFormatVersion": 2}})


@mutant("relationships/code-dispatch", V2, 1)
def _code_dispatch(objs):
    insert(objs, 23, {"type": "tool/code-dispatch", "data": {
        "rootCallId": "call_00_Qm3vTn8RkLw2Yd5Ps7Xc0001", "parentCallId": "call_00_Qm3vTn8RkLw2Yd5Ps7Xc0001",
        "subCallId": "call_00_Qm3vTn8RkLw2Yd5Ps7Xc0001:code:1", "name": "read", "arguments": {},
        "isError": False, "content": []}})


@mutant("relationships/system-head", V3, 1)
def _system_head(objs):
    at(objs, 5)["surfaceOp"] = {"op": "replace", "startSeq": 4, "endSeq": 4}
    at(objs, 5)["sourceEventSeqs"] = [4]


@mutant("relationships/system-head", V3, 1, "system_outside_step")
def _system_outside(objs):
    at(objs, 45)["data"]["step"] = 2


@mutant("relationships/chunk-provenance", V0, 1)
def _chunk_provenance(objs):
    message = first(objs, "assistant/message")
    message["sourceEventSeqs"] = [[17, 35]]


def mutants() -> list[Mutant]:
    return list(REGISTRY)


def write_all(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, m in enumerate(REGISTRY):
        path = outdir / f"{index:03d}-{m.rule.replace('/', '_')}-{m.name}{m.suffix}"
        path.write_bytes(m.build())
        paths.append(path)
    return paths


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/mutate.py OUTDIR")
    for path in write_all(Path(sys.argv[1])):
        print(path)
