"""Mangled logs never make ``dshctl validate`` crash: random byte flips, dropped, swapped and duplicated
lines, truncation and replaced JSON values always end in a verdict with exit status 0, 1 or 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dshctl.errors import DshctlError
from dshctl.source import resolve
from dshctl.validate import exit_status, validate_log

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
BASES = sorted(p for p in SAMPLES.glob("*.jsonl*") if p.is_file()) if SAMPLES.is_dir() else []
pytestmark = pytest.mark.skipif(not BASES, reason="samples/ not generated")

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])


def _verdict(data: bytes, tmp_path: Path, name: str) -> int:
    path = tmp_path / name
    path.write_bytes(data)
    try:
        report = validate_log(resolve(str(path))[0])
    except DshctlError:  # allowed by contract, though validate_log reports instead of raising
        return 2
    except Exception as exc:  # noqa: BLE001 - any other exception is a traceback for the user
        pytest.fail(f"validate raised {type(exc).__name__}: {exc}")
    status = exit_status([report], False)
    assert status in (0, 1, 2)
    assert exit_status([report], True) in (0, 1, 2)
    for finding in report.findings:
        assert finding.severity in ("error", "warning") and finding.message
    return status


byte_edits = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=12)


@FUZZ
@given(base=st.sampled_from(BASES), edits=byte_edits)
def test_byte_flips(base: Path, edits, tmp_path: Path):
    data = bytearray(base.read_bytes())
    for where, value in edits:
        data[int(where * len(data))] = value
    _verdict(bytes(data), tmp_path, base.name)


@FUZZ
@given(base=st.sampled_from(BASES), cut=st.floats(0, 1))
def test_truncation(base: Path, cut: float, tmp_path: Path):
    data = base.read_bytes()
    _verdict(data[: int(cut * len(data))], tmp_path, base.name)


line_ops = st.lists(st.tuples(st.sampled_from(["drop", "swap", "dup"]), st.floats(0, 1, exclude_max=True),
                              st.floats(0, 1, exclude_max=True)), min_size=1, max_size=5)
RAW = [p for p in BASES if p.suffix == ".jsonl"]


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
    _verdict(b"\n".join(lines), tmp_path, base.name)


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


WHOLE = [p for p in RAW if not p.name.startswith("torn-tail")]


@FUZZ
@given(base=st.sampled_from(WHOLE), picks=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True),
                                                           json_values, st.booleans()), min_size=1, max_size=3))
def test_json_value_edits(base: Path, picks, tmp_path: Path):
    objs = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
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
    _verdict(("\n".join(json.dumps(o) for o in objs) + "\n").encode(), tmp_path, base.name)


def test_cli_on_mangled_input(tmp_path: Path):
    from dshctl.cli import app

    base = (SAMPLES / "tour.session.v2.jsonl").read_bytes()
    runner = CliRunner()
    for index, data in enumerate([base[:777], base.replace(b'"seq":12', b'"seq":99'), b"\x00\xff" + base, b""]):
        path = tmp_path / f"m{index}.jsonl"
        path.write_bytes(data)
        for fmt in ("text", "sarif", "junit"):
            result = runner.invoke(app, ["validate", "--format", fmt, str(path)])
            assert isinstance(result.exception, (SystemExit, type(None))), result.exception
            assert result.exit_code in (0, 1, 2)
