"""The library façade: `import dshctl` is cheap, exposes the documented names, and every example on
the API page (docs/api.md) runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", API_PAGE.read_text(), re.S)


def test_import_dshctl_loads_no_heavy_module():
    code = "import sys, dshctl; print(sorted(m for m in ('msgspec', 'rich', 'zstandard', 'typer') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_documented_names_resolve_and_are_listed():
    import dshctl

    names = {"open_log", "Log", "LogRef", "resolve", "log_stats", "grep_log", "grep_logs", "validate_log", "scan_images", "Timeline", "DshctlError"}
    assert names <= set(dshctl.__all__) and names <= set(dir(dshctl))
    for name in names:
        assert getattr(dshctl, name) is not None
    with pytest.raises(AttributeError):
        dshctl.no_such_name  # noqa: B018


def test_every_function_on_the_page_has_an_example():
    for name in ("open_log", "resolve", "log_stats", "grep_log", "validate_log", "scan_images", "Timeline.open"):
        assert f"## `{name}(" in API_PAGE.read_text(), name


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_api_page_example_runs(number, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(EXAMPLES[number], f"{API_PAGE}:example {number + 1}", "exec"), {})


def test_functions_take_a_path_object_or_a_logref():
    import dshctl

    path = ROOT / "samples" / "tour.session.v4.jsonl"
    (ref,) = dshctl.resolve(str(path))
    for source in (str(path), path, ref):
        assert dshctl.validate_log(source).events == 58
        assert len(dshctl.scan_images(source).refs) == 4
        with dshctl.open_log(source) as log:
            assert sum(1 for _ in log.events()) == 58
        assert dshctl.log_stats(source).session.turns == 4


def test_package_is_typed():
    assert (ROOT / "dshctl" / "py.typed").exists()
    assert os.path.getsize(ROOT / "dshctl" / "py.typed") == 0
