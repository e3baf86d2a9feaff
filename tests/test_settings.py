"""dshctl's ``DSHCTL_*`` environment settings (:mod:`dshctl.settings`, issue 26, left open by the last stop).

A bad value is an error of the setting — ``dshctl: error: DSHCTL_X: …``, status 2, no traceback — before
any log is read, by every command and by the library; never an error of the log being read when the
setting is first used (``stats LOG`` said ``LOG: DSHCTL_SPLIT_MIN_BYTES must be …``, ``ls`` a row error
per session, ``grep`` a warning per log, ``validate`` an unreadable log). Each setting is declared once
and documented in the man page's ENVIRONMENT.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dshctl
from conftest import REPO, invoke, sample
from dshctl import settings
from dshctl.settings import SETTINGS, SettingError

TOUR = sample("tour.session.v4.jsonl")
TOUR_ZSTD = sample("tour.session.v4.jsonl.zstd")
NAMES = [setting.name for setting in SETTINGS]


def _root(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for session_id in ("session-aaaa1111", "session-bbbb2222"):
        directory = home / "sessions" / "--home-alice-proj--" / session_id
        directory.mkdir(parents=True)
        (directory / "session.v4.jsonl.zstd").write_bytes(TOUR_ZSTD.read_bytes())
    return home


COMMANDS = [
    ["stats", TOUR_ZSTD], ["stats", TOUR], ["stats", "--json", TOUR], ["stats"], ["ls"], ["grep", "red"],
    ["grep", "red", TOUR], ["validate", TOUR], ["validate"], ["cat", TOUR], ["cat", "session-aaaa"],
    ["replay", "--instant", TOUR], ["images", TOUR], ["export", "--format", "otlp", "--out", "-", TOUR],
    ["prices"],
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", ["abc", "0", "-5", "12X", "1.5M"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(str(arg) for arg in args))
def test_a_bad_setting_is_an_error_of_the_setting_before_any_log_is_read(tmp_path, name, value, args, monkeypatch):
    home = _root(tmp_path)
    opened = []
    monkeypatch.setattr("dshctl.source.lines.LineReader._open", lambda self: opened.append(self) or (_ for _ in ()).throw(AssertionError))
    result = invoke(*args, env={name: value}, home=home, status=2)
    assert result.stderr == f"dshctl: error: {name}: must be a positive byte count such as {_example(name)}, got {value!r}\n"
    assert result.stdout == "" and opened == []


def _example(name: str) -> str:
    return next(setting.example for setting in SETTINGS if setting.name == name)


@pytest.mark.parametrize("name", NAMES)
def test_good_values_are_taken(name, monkeypatch):
    setting = next(setting for setting in SETTINGS if setting.name == name)
    for value, expected in [("4096", 4096), ("2K", 2048), ("3MiB", 3 << 20), (" 1g ", 1 << 30), ("8mb", 8 << 20)]:
        monkeypatch.setenv(name, value)
        assert setting.read() == expected
    for blank in ("", "  "):
        monkeypatch.setenv(name, blank)
        assert setting.read() == setting.default
    monkeypatch.delenv(name)
    assert setting.read() == setting.default
    assert invoke("stats", "--json", TOUR, env={name: "64M"}).exit_code == 0


def test_help_reads_no_setting():
    assert invoke("help", "stats", env={NAMES[0]: "abc"}, status=0).stdout == invoke("stats", "--help").stdout


@pytest.mark.parametrize("call", [
    lambda: dshctl.stats(str(TOUR)), lambda: dshctl.ls(str(TOUR.parent)), lambda: dshctl.validate(str(TOUR)),
    lambda: dshctl.grep(str(TOUR), "red"), lambda: list(dshctl.cat(str(TOUR))),
])
def test_the_library_raises_the_settings_error(call, monkeypatch):
    monkeypatch.setenv("DSHCTL_SPLIT_MIN_BYTES", "lots")
    with pytest.raises(SettingError, match=r"^DSHCTL_SPLIT_MIN_BYTES: must be a positive byte count") as raised:
        call()
    assert raised.value.located(file="x.jsonl", line=1).where() == ""  # never any log's


def test_every_dshctl_setting_the_code_names_is_declared_and_documented():
    """One home: every ``DSHCTL_*`` name in the package is a setting of :mod:`dshctl.settings`, checked as a
    command starts, and the man page's ENVIRONMENT describes each one."""
    named = set()
    for path in (REPO / "dshctl").rglob("*.py"):
        named |= set(re.findall(r"\bDSHCTL_[A-Z_]+\b", path.read_text()))
    assert named == set(NAMES)
    page = (REPO / "man" / "dshctl.1").read_text()
    environment = page.split(".SH ENVIRONMENT", 1)[1].split("\n.SH ", 1)[0]
    for name in NAMES:
        assert f".B {name}\n" in environment, name
    assert settings.check() is None


def test_each_setting_is_declared_once_with_its_default_which_its_example_shows(monkeypatch):
    """Its name, default and example in its declaration alone: the default is what the code reads when it
    is unset, the error's example is that default (``DSHCTL_SPLIT_MIN_BYTES``'s said 64M while 8M is read)."""
    from dshctl.source.lines import max_line_bytes_from_env
    from dshctl.stats.split import split_min_bytes

    for setting in SETTINGS:
        monkeypatch.delenv(setting.name, raising=False)
    assert (settings.MAX_LINE_BYTES.default, settings.SPLIT_MIN_BYTES.default) == (64 << 20, 8 << 20)
    assert max_line_bytes_from_env() == settings.MAX_LINE_BYTES.default
    assert split_min_bytes() == settings.SPLIT_MIN_BYTES.default
    assert settings.MAX_LINE_BYTES.example == "67108864 or 64M"
    assert settings.SPLIT_MIN_BYTES.example == "8388608 or 8M"
    page = (REPO / "man" / "dshctl.1").read_text()
    assert "such as 8388608 or 8M" in page and "such as 67108864 or 64M" not in page


def test_no_setting_is_spelled_or_named_twice():
    """Outside :mod:`dshctl.settings`, no string spells a setting's name (code uses the declaration's
    ``.name``) and no module-level name is also a setting's (``split.SPLIT_MIN_BYTES`` was an int)."""
    import ast

    declared = {name for name, value in vars(settings).items() if isinstance(value, settings.ByteCount)}
    for path in (REPO / "dshctl").rglob("*.py"):
        if path.name == "settings.py" and path.parent.name == "dshctl":
            continue
        tree = ast.parse(path.read_text())
        spelled = [node.value for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES]
        assert spelled == [], (path, spelled)
        bound = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                 for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 if isinstance(target, ast.Name)}
        assert not bound & declared, (path, bound & declared)
