"""Differential check: dshctl's accept/refuse verdict on the codec and relationship levels equals the
verdict of dsh's own released packages, run under node.

The packages are the exact versions of ``tests/dsh_packages.py`` (FORMAT.md §0: the format package and
the v0→v1, v1→v2 edges at 0.1.3-alpha.2, the v2→v3 edge at 0.1.5-alpha.1, dsh-util-values
0.1.2-alpha.2), fetched from the npm registry and checked against their published shasums: from the
directory ``DSHCTL_DSH_PACKAGES`` names (one unpacked ``package/`` per directory; .ci/run fetches them
into its cache and sets it), else fetched by this test into ``~/.cache/dshctl``. Skipped only where
``node`` is not installed; a fetch that fails is an error.

``@deepseek-ai/dsh-llm@0.1.3`` (needed for ``AssistantStreamAccumulator``) was never published; the test
supplies a shim that implements the packing rule of FORMAT §4.3. The harness composes the catalogs the
way ``@deepseek-ai/dsh-session-format-catalog@0.1.3-alpha.2`` does (v0/v2 logs: current v2, restore
with ``restoreReleasedV2Artifact``) and, for v3 logs, the 0.1.5 chain (``restoreReleasedV3Artifact``),
restoring in ``recoverable`` mode as an ordinary open does. Not covered by the packages (so not compared):
the installed ``Session.fromRestore`` checks of ``@deepseek-ai/dsh-session``, zstd framing and torn tails
(the harness gets complete lines), and v4 logs.

Run: ``pytest tests/test_validate_dsh_agreement.py -q`` (``DSHCTL_DSH_EDITS``, ``DSHCTL_DSH_SEED``: more
or other random edits)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import dsh_packages
import mutate
from conftest import CORPUS, MACHINE_CACHE
from dshctl.model import KNOWN_EVENT_TYPES
from dshctl.source import LineReader, resolve
from dshctl.validate import validate_log

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: dsh's released packages run under node")
NAMES = list(dsh_packages.PACKAGES)

# Rules whose refusal comes from checks outside the released format packages (dsh-session's
# Session.fromRestore / surface.ts), or from dshctl's own documented choices.
OUTSIDE_PACKAGES = {
    "codec/source-event-seqs",  # v2 surface provenance rules of the installed Session (FORMAT §3.2, [G])
    "codec/settlement-fields",  # Session.fromRestore's settlement-shape check (FORMAT §8.7 layer 2)
}

HARNESS = r"""// dshctl dev harness: accept/refuse verdicts of dsh's released session-format packages.
// stdin: JSON {v2Types, v3Types, logs:[{id, lines:[string]}]}; stdout: JSON [{id, verdict, reason, dsh}]
import { createSessionFormatCatalog } from "@deepseek-ai/dsh-session-format";
import { releasedV0SessionFormatCodec, releasedV1SessionFormatCodec, sessionFormatV0ToV1 } from "@deepseek-ai/dsh-session-format-v0-to-v1";
import { assertReleasedV2Header, releasedV2SessionFormatCodec, restoreReleasedV2Artifact, sessionFormatV1ToV2 } from "@deepseek-ai/dsh-session-format-v1-to-v2";
import { assertReleasedV3Header, releasedV3SessionFormatCodec, restoreReleasedV3Artifact, sessionFormatV2ToV3 } from "@deepseek-ai/dsh-session-format-v2-to-v3";

const input = JSON.parse(await new Promise((resolve) => { let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => resolve(s)); }));
const v2Known = new Set(input.v2Types);
const v3Known = new Set(input.v3Types);
const catalog2 = createSessionFormatCatalog({
  currentVersion: 2,
  codecs: [releasedV0SessionFormatCodec, releasedV1SessionFormatCodec, releasedV2SessionFormatCodec],
  currentEncoder: releasedV2SessionFormatCodec,
  migrations: [sessionFormatV0ToV1, sessionFormatV1ToV2],
  restoreCurrent: (a) => restoreReleasedV2Artifact(a, v2Known),
  restoreTransformedCurrent: (a) => restoreReleasedV2Artifact(a, v2Known),
  restoreCurrentHeader: (h) => { assertReleasedV2Header(h); return h; },
});
const catalog3 = createSessionFormatCatalog({
  currentVersion: 3,
  codecs: [releasedV0SessionFormatCodec, releasedV1SessionFormatCodec, releasedV2SessionFormatCodec, releasedV3SessionFormatCodec],
  currentEncoder: releasedV3SessionFormatCodec,
  migrations: [sessionFormatV0ToV1, sessionFormatV1ToV2, sessionFormatV2ToV3],
  restoreCurrent: (a) => restoreReleasedV3Artifact(a, v3Known),
  restoreTransformedCurrent: (a) => restoreReleasedV3Artifact(a, v3Known),
  restoreCurrentHeader: (h) => { assertReleasedV3Header(h); return h; },
});

function verdict(catalog, lines) {
  let header;
  try { header = JSON.parse(lines[0]); } catch { return { verdict: "refuse", reason: "header is not JSON" }; }
  const state = catalog.readHeader(header);
  if (state.status === "unsupported" || state.status === "malformed") return { verdict: "refuse", reason: `${state.status}: ${state.reason}` };
  try {
    const restore = catalog.createRestore(header, { recovery: "recoverable", validation: "current" });
    for (const line of lines.slice(1)) {
      let value;
      try { value = JSON.parse(line); } catch { value = null; }
      restore.decodeRow(value);
    }
    const artifact = restore.finish();
    return { verdict: "accept", events: artifact.events.length };
  } catch (error) {
    return { verdict: "refuse", reason: `${error?.name}: ${error?.message}` };
  }
}

const out = [];
for (const log of input.logs) {
  const version = (() => { try { return JSON.parse(log.lines[0]).version; } catch { return undefined; } })();
  const result = { id: log.id, "0.1.3": verdict(catalog2, log.lines), "0.1.5": verdict(catalog3, log.lines) };
  result.reference = version === 3 ? result["0.1.5"] : result["0.1.3"];
  out.push(result);
}
process.stdout.write(JSON.stringify(out));
"""
SHIM = r"""// dshctl test shim: the compact-stream packing rule of FORMAT.md §4.3 (dsh-llm 0.1.3 is not published).
import { isJsonValue } from "@deepseek-ai/dsh-util-values";
const safe = (n) => Number.isSafeInteger(n);
export class AssistantStreamAccumulator {
  records = []; lastTime = 0;
  push({ time, chunk }) {
    if (!safe(time)) throw new Error("assistant stream time must be a safe integer");
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) throw new Error("chunk must be an object");
    if (!isJsonValue(chunk)) throw new Error("assistant stream chunk must be lossless JSON");
    const copy = JSON.parse(JSON.stringify(chunk));
    const prev = this.records.at(-1);
    const idx = chunk.index;
    if (chunk.type === "text-delta" || chunk.type === "reasoning-delta") {
      if (!safe(idx) || idx < 0 || Object.is(idx, -0)) throw new Error("index");
      if (typeof chunk.text !== "string") throw new Error("text");
      const t = chunk.type === "text-delta" ? "text-chunks" : "reasoning-chunks";
      if (prev && prev.type === t && prev.index === idx && safe(time - this.lastTime)) { prev.dt.push(time - this.lastTime); prev.texts.push(chunk.text); this.lastTime = time; return; }
      this.records.push({ type: t, time0: time, index: idx, dt: [], texts: [chunk.text] }); this.lastTime = time; return;
    }
    if (chunk.type === "tool-call-delta") {
      if (!safe(idx) || idx < 0 || Object.is(idx, -0)) throw new Error("index");
      if (typeof chunk.id !== "string" || (chunk.name !== undefined && typeof chunk.name !== "string") || typeof chunk.argumentsDelta !== "string") throw new Error("tool-call-delta fields");
      if (chunk.id === "" || chunk.name === "") { this.records.push({ type: "chunk", time, chunk: copy }); return; }
      if (prev && prev.type === "tool-call-chunks" && prev.index === idx && prev.id === chunk.id && prev.name === chunk.name && safe(time - this.lastTime)) { prev.dt.push(time - this.lastTime); prev.args.push(chunk.argumentsDelta); this.lastTime = time; return; }
      this.records.push({ type: "tool-call-chunks", time0: time, index: idx, dt: [], id: chunk.id, ...(chunk.name === undefined ? {} : { name: chunk.name }), args: [chunk.argumentsDelta] }); this.lastTime = time; return;
    }
    if (["block-start", "block-end", "usage", "finish"].includes(chunk.type)) { this.records.push({ type: "chunk", time, chunk: copy }); return; }
    throw new Error(`unknown assistant stream chunk type ${JSON.stringify(chunk.type)}`);
  }
  snapshot() { return this.records.map((r) => JSON.parse(JSON.stringify(r))); }
}
"""


@pytest.fixture(scope="module")
def packages() -> Path:
    """The unpacked packages: where DSHCTL_DSH_PACKAGES says, else fetched (and checked) into the user's
    cache, once (not the run's own cache directory, which would fetch them on every run)."""
    named = os.environ.get("DSHCTL_DSH_PACKAGES")
    if not named:
        return dsh_packages.ensure(MACHINE_CACHE / "dshctl")
    missing = [name for name in NAMES if not (Path(named) / name / "package.json").is_file()]
    assert not missing, f"DSHCTL_DSH_PACKAGES={named} lacks {', '.join(missing)} (python3 tests/dsh_packages.py prints a directory that has them)"
    return Path(named)


@pytest.fixture(scope="module")
def harness(tmp_path_factory, packages: Path) -> Path:
    root = tmp_path_factory.mktemp("dshnode")
    scope = root / "node_modules" / "@deepseek-ai"
    scope.mkdir(parents=True)
    for name in NAMES:
        (scope / name).symlink_to(packages / name, target_is_directory=True)
    shim = scope / "dsh-llm"
    (shim / "lib").mkdir(parents=True)
    (shim / "package.json").write_text(json.dumps({"name": "@deepseek-ai/dsh-llm", "version": "0.0.0-dshctl-shim",
                                                    "type": "module", "exports": {".": {"default": "./lib/index.js"}}}))
    (shim / "lib" / "index.js").write_text(SHIM)
    script = root / "harness.mjs"
    script.write_text(HARNESS)
    return script


def dsh_verdicts(script: Path, logs: dict[str, list[str]]) -> dict[str, dict]:
    payload = {"v2Types": sorted(KNOWN_EVENT_TYPES[2]), "v3Types": sorted(KNOWN_EVENT_TYPES[3]),
               "logs": [{"id": key, "lines": lines} for key, lines in logs.items()]}
    done = subprocess.run([NODE, "--preserve-symlinks", str(script)], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=300, cwd=script.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return {item["id"]: item["reference"] for item in json.loads(done.stdout)}


def dshctl_refuses(path: Path) -> tuple[bool, list[str]]:
    report = validate_log(resolve(str(path))[0])
    reasons = []
    for finding in report.findings:
        if finding.rule in OUTSIDE_PACKAGES:
            continue
        dsh_level = finding.level in ("codec", "relationships") or (finding.rule == "stream/chunk" and (report.generation or 0) <= 1
                                                                     and "fold" in finding.message)
        if finding.fatal or (finding.severity == "error" and dsh_level):
            reasons.append(f"{finding.rule}: {finding.message}")
    return bool(reasons), reasons


def lines_of(path: Path) -> list[str]:
    return [raw.decode("utf-8", "replace") for _, raw in LineReader(resolve(str(path))[0])]


def materialize(path: Path, out: Path) -> Path:
    """A fixture-form log with seq (rows: seq0), time 0 and the header placeholders dsh's corpus gate fills."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    if isinstance(header.get("cwd"), str) and "{{" in header["cwd"]:
        header["cwd"] = "/materialized" + header["cwd"].split("}}", 1)[1]
    objs = [header]
    seq = 0
    for line in lines[1:]:
        obj = json.loads(line)
        if obj.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks") and "data" in obj and "seq0" not in obj:
            obj = {"type": obj["type"], "seq0": seq, "time0": 0, "data": obj["data"]}
            seq += len(obj["data"].get("texts", obj["data"].get("args", [])))
        else:
            if "seq" not in obj:
                obj = {"type": obj.get("type"), "seq": seq, "time": 0, **{k: v for k, v in obj.items() if k != "type"}}
            seq += 1
            data = obj.get("data")
            if obj.get("type") == "request/header" and isinstance(data, dict) and isinstance(data.get("header"), dict):
                tools = data["header"].get("tools")
                if isinstance(tools, str) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
                    del data["header"]["tools"]
        objs.append(obj)
    out.write_text("\n".join(json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in objs) + "\n")
    return out


def _inputs(tmp_path: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for path in sorted(mutate.SAMPLES.glob("*.jsonl")):
        if not path.name.startswith("torn-tail") and ".v4." not in path.name:
            files[f"sample:{path.name}"] = path
    for index, m in enumerate(mutate.mutants()):
        if m.suffix != ".jsonl" or m.base.endswith(".v4.jsonl") or m.rule in ("codec/torn-tail",):
            continue
        path = tmp_path / f"{index:03d}.jsonl"
        path.write_bytes(m.build())
        files[f"mutant:{m.id}"] = path
    if CORPUS.is_dir():
        for path in sorted(CORPUS.rglob("*.jsonl")):
            if path.parts[-2] == "snapshot-form" and "v4" in path.parts:
                continue
            name = str(path.relative_to(CORPUS))
            first = json.loads(path.read_text(encoding="utf-8").splitlines()[1]) if len(path.read_text().splitlines()) > 1 else {}
            if "seq" in first or "seq0" in first or len(path.read_text().splitlines()) < 2:
                files[f"corpus:{name}"] = path
            else:
                files[f"corpus:{name} (materialized)"] = materialize(path, tmp_path / (name.replace("/", "_")))
    return files


def _random_edits(tmp_path: Path, count: int, seed: int) -> dict[str, Path]:
    """Deterministic random JSON-value edits of the v0/v2/v3 samples (what a hand edit does)."""
    import copy
    import random

    rnd = random.Random(seed)
    values = [None, -1, 0, 1, "", "x", [], {}, 1.5, True, 2**60, [1, 2], {"a": 1}, "append", {"type": "text", "text": "t"}]
    bases = [p for p in sorted(mutate.SAMPLES.glob("*.jsonl")) if not p.name.startswith("torn-tail") and ".v4." not in p.name]
    files = {}
    for index in range(count):
        base = rnd.choice(bases)
        objs = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
        target = objs[0] if rnd.random() < 0.1 else objs[rnd.randrange(1, len(objs))]
        paths = []

        def walk(value, prefix=()):
            paths.append(prefix)
            if isinstance(value, dict):
                for key, item in value.items():
                    walk(item, prefix + (key,))
            elif isinstance(value, list):
                for position, item in enumerate(value):
                    walk(item, prefix + (position,))

        walk(target)
        path = rnd.choice(paths[1:])
        parent = target
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and rnd.random() < 0.3:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rnd.choice(values))
        out = tmp_path / f"edit{index:04d}.jsonl"
        out.write_text("\n".join(json.dumps(o, ensure_ascii=False) for o in objs) + "\n")
        files[f"edit:{index}:{base.name}:{'/'.join(map(str, path))}"] = out
    return files


def _random_line_edits(tmp_path: Path, count: int, seed: int) -> dict[str, Path]:
    """Deterministic random dropped, swapped, duplicated and garbage lines (what a crash or a bad merge does)."""
    import random

    rnd = random.Random(seed)
    bases = [p for p in sorted(mutate.SAMPLES.glob("*.jsonl")) if not p.name.startswith("torn-tail") and ".v4." not in p.name]
    files = {}
    for index in range(count):
        base = rnd.choice(bases)
        lines = base.read_bytes().split(b"\n")[:-1]
        ops = []
        for _ in range(rnd.randint(1, 2)):
            op = rnd.choice(["drop", "swap", "dup", "garbage", "blank"])
            i, j = rnd.randrange(1, len(lines)), rnd.randrange(1, len(lines))
            if op == "drop":
                del lines[i]
            elif op == "swap":
                lines[i], lines[j] = lines[j], lines[i]
            elif op == "dup":
                lines.insert(i, lines[j])
            elif op == "garbage":
                lines[i] = lines[i][: len(lines[i]) // 2]
            else:
                lines.insert(i, b"")
            ops.append(f"{op}{i}")
        out = tmp_path / f"lines{index:04d}.jsonl"
        out.write_bytes(b"\n".join(lines) + b"\n")
        files[f"lines:{index}:{base.name}:{','.join(ops)}"] = out
    return files


def test_verdicts_agree_with_dsh(harness: Path, tmp_path: Path):
    files = _inputs(tmp_path)
    count, seed = int(os.environ.get("DSHCTL_DSH_EDITS", "300")), int(os.environ.get("DSHCTL_DSH_SEED", "20261130"))
    files.update(_random_edits(tmp_path, count, seed=seed))
    files.update(_random_line_edits(tmp_path, count // 3, seed=seed + 71))
    dsh = dsh_verdicts(harness, {key: lines_of(path) for key, path in files.items()})
    disagreements = []
    for key, path in files.items():
        refuses, reasons = dshctl_refuses(path)
        theirs = dsh[key]
        if refuses != (theirs["verdict"] == "refuse"):
            disagreements.append(f"{key}: dshctl {'refuses' if refuses else 'accepts'} ({'; '.join(reasons)[:300]}), "
                                 f"dsh {theirs['verdict']}s ({theirs.get('reason', '')[:300]})")
    assert not disagreements, "\n".join(disagreements)
