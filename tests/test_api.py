"""The library façade: `import dshctl` is cheap, exposes the documented names, and every example on
the API page (docs/api.md) runs as written."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO as ROOT, sample

API_PAGE = ROOT / "docs" / "api.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", API_PAGE.read_text(), re.S)


def _reference() -> dict[str, str | None]:
    """The signature reference of the page: ``name`` → its parameters as written (None: not called)."""
    block = re.search(r"## Signature reference\n\n```text\n(.*?)```", API_PAGE.read_text(), re.S).group(1)
    entries = {}
    for line in block.splitlines():
        match = re.fullmatch(r"dshctl\.(\w+)(?:\((.*)\))?(?: -> .+)?", line.strip())
        assert match, f"reference line not understood: {line!r}"
        entries[match.group(1)] = match.group(2)
    return entries


REFERENCE = _reference()


def test_import_dshctl_loads_no_heavy_module():
    code = "import sys, dshctl; print(sorted(m for m in ('msgspec', 'rich', 'zstandard', 'typer') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_all_is_the_public_surface():
    import dshctl

    assert dir(dshctl) == sorted(dshctl.__all__)  # no stray module globals (``annotations``, ``_sys``)
    for name in dshctl.__all__:
        assert getattr(dshctl, name) is not None
    with pytest.raises(AttributeError):
        dshctl.no_such_name  # noqa: B018


def test_the_page_documents_exactly_all():
    import dshctl

    assert set(REFERENCE) == set(dshctl.__all__)
    page = API_PAGE.read_text()
    for name in dshctl.__all__:
        assert re.search(rf"^## .*`{re.escape(name)}[`(]", page, re.M), f"{name} has no section"


def _signature_text(obj) -> str:
    """A signature as the reference writes it: names, kinds and defaults, no annotations."""
    parts, star_done = [], False
    for parameter in inspect.signature(obj).parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            parts.append(f"**{parameter.name}")
            continue
        if parameter.kind is parameter.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        if parameter.kind is parameter.VAR_POSITIONAL:
            parts.append(f"*{parameter.name}")
            star_done = True
            continue
        default = "" if parameter.default is parameter.empty else f"={parameter.default!r}"
        parts.append(f"{parameter.name}{default}")
    return ", ".join(parts)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_signature_reference_is_the_code(name):
    import dshctl

    documented = REFERENCE[name]
    if documented is None:
        return
    obj = getattr(dshctl, name)
    assert documented == _signature_text(obj), f"docs/api.md: dshctl.{name}({documented}); code: ({_signature_text(obj)})"


def test_gone_names_say_what_replaces_them():
    import dshctl

    for name in ("log_stats", "grep_log", "grep_logs", "validate_log", "scan_images"):
        with pytest.raises(AttributeError, match="is gone: use dshctl"):
            getattr(dshctl, name)


def test_importing_a_command_module_keeps_the_function():
    """``import dshctl.stats`` binds the module on its package; the function of that name stays."""
    code = (
        "import dshctl, importlib\n"
        "for name in ('stats', 'grep', 'validate', 'images', 'replay', 'ls', 'cat'):\n"
        "    importlib.import_module('dshctl.' + name)\n"
        "    assert callable(getattr(dshctl, name)) and getattr(dshctl, name).__module__ == 'dshctl.api', name\n"
        "import dshctl.stats.prices\n"
        "assert dshctl.stats('samples/tour.session.v4.jsonl').sessions\n"
        "assert callable(dshctl.stats)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_one_error_model():
    import dshctl

    with pytest.raises(dshctl.UsageError, match="mutually exclusive"):
        dshctl.grep("samples/tour.session.v4.jsonl", "x", json=True, ndjson=True)
    with pytest.raises(TypeError, match="has no option"):
        dshctl.stats("samples/tour.session.v4.jsonl", no_such_option=True)
    with pytest.raises(TypeError, match="not both"):
        dshctl.stats("samples/tour.session.v4.jsonl", dshctl.StatsOptions(), by="turn")
    with pytest.raises(dshctl.UsageError, match="follow"):
        dshctl.cat("samples/tour.session.v4.jsonl", follow=True)
    with pytest.raises(dshctl.DshctlError):  # the only log given, unreadable
        dshctl.grep(ROOT / "README.md", "x")
    with pytest.raises(dshctl.DshctlError):  # raised when called, not when first iterated
        dshctl.cat(ROOT / "README.md")


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_api_page_example_runs(number, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(EXAMPLES[number], f"{API_PAGE}:example {number + 1}", "exec"), {})


def test_functions_take_a_path_object_or_a_logref():
    import dshctl

    path = sample("tour.session.v4.jsonl")
    (ref,) = dshctl.resolve(str(path))
    for source in (str(path), path, ref, [path]):
        assert dshctl.validate(source).reports[0].events == 58
        assert dshctl.stats(source).as_json()["sessions"][0]["turns"] == 4
        assert dshctl.grep(source, "Node 14").count == 3
    for source in (str(path), path, ref):
        assert len(dshctl.images(source).refs) == 4
        with dshctl.open_log(source) as log:
            assert sum(1 for _ in log.events()) == 58
        assert sum(1 for _ in dshctl.cat(source)) == 59
        assert dshctl.timeline(source).log.header.version == 4


def test_package_is_typed():
    assert (ROOT / "dshctl" / "py.typed").exists()
    assert os.path.getsize(ROOT / "dshctl" / "py.typed") == 0


def test_export_and_sql_write_nothing_and_return_failures_and_warnings(tmp_path, capfd, monkeypatch):
    """The library never writes to the terminal: a log that cannot be read is a LogFailure in the result,
    a log's warnings are values too, and ``out='-'`` (the command's standard output) is refused."""
    pytest.importorskip("duckdb")
    import dshctl
    from dshctl import api

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert {"export", "sql"} <= set(api.__all__)
    bad = tmp_path / "bad.session.v4.jsonl"
    bad.write_text("this is not a dsh log\n")
    logs = [ROOT / "samples" / "tour.session.v4.jsonl", ROOT / "samples" / "torn-tail.session.v4.jsonl", bad]
    capfd.readouterr()
    results = [
        dshctl.export(logs, format="parquet", out=str(tmp_path / "ds")),
        dshctl.export(logs, format="otlp", out=str(tmp_path / "t.jsonl")),
        dshctl.sql("SELECT count(*) FROM sessions", logs),
    ]
    assert capfd.readouterr() == ("", "")
    for result in results:
        assert [(type(f), f.path) for f in result.failures] == [(dshctl.LogFailure, str(bad))]
        assert isinstance(result.failures[0].error, dshctl.DshctlError)
        assert any(path.endswith("torn-tail.session.v4.jsonl") and "torn tail" in text for path, text in result.warnings)
    assert results[0].status == 1 and results[2].rows == [(2,)]
    with pytest.raises(dshctl.UsageError, match="standard output"):
        dshctl.export(logs[0], format="otlp", out="-")
    assert capfd.readouterr() == ("", "")
