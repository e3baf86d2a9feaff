"""man/dshctl.1 is the one reference, and its rules table and record keys are the code's.

``python -m dshctl.manpage`` writes the man page's generated blocks (validate's rules, the stats,
rollup, cost and export records) from ``dshctl.validate.rules`` and ``dshctl.stats.records``; these
tests fail when the committed page and the code disagree, and check that the generator refuses a key
without its rule.
"""

from __future__ import annotations

import subprocess
import sys
import typing
import msgspec
import pytest

from dshctl import manpage
from dshctl.stats import records as R
from dshctl.validate.rules import RULES

from conftest import REPO as ROOT

PAGE = ROOT / "man" / "dshctl.1"


def test_the_man_page_is_what_the_code_says():
    source = PAGE.read_text(encoding="utf-8")
    assert manpage.regenerate(source) == source, "man/dshctl.1 differs from the code: run python -m dshctl.manpage"


def _block(name: str) -> str:
    source = PAGE.read_text(encoding="utf-8")
    start = source.index(f'.\\" generated: {name} ')
    return source[start : source.index(f'.\\" end generated: {name}\n', start)]


def test_every_rule_is_in_the_rules_block_with_its_severity_and_source():
    block = manpage.plain(_block("validate-rules"))
    for rule in RULES.values():
        entry = f"{rule.id} ({rule.severity}"
        assert entry in block, rule.id
        assert " ".join(rule.source.split()) in block, rule.id
    assert block.count("(error") + block.count("(warning") == len(RULES)


def _reachable(*roots: type) -> set[type]:
    """The record types reachable from ``roots`` through their fields (nested and listed records)."""
    seen: set[type] = set()
    todo = list(roots)
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            stack = [hint]
            while stack:
                item = stack.pop()
                if isinstance(item, type) and issubclass(item, R.Record):
                    todo.append(item)
                stack += typing.get_args(item)
    return seen


def test_every_record_the_commands_write_has_its_block():
    """A nested record added to a session, turn, step, aggregate, rollup or export row without a block of
    its own would leave its keys undocumented."""
    documented = {doc.cls for docs in (manpage.STATS_RECORDS, manpage.ROLLUP_ROWS, manpage.COSTS, manpage.EXPORT_ROWS)
                  for doc in docs}
    written = _reachable(R.SessionRecord, R.TurnRecord, R.StepRecord, R.AggregateRecord, R.RollupRow, R.ToolRow,
                         R.SettlementRecord, R.ToolCallRecord, R.ImageRecord)
    assert written - documented == set()


@pytest.mark.parametrize("cls", [R.SessionRecord, R.TurnRecord, R.StepRecord, R.AggregateRecord, R.RollupRow, R.ToolRow,
                                 R.CostRecord, R.SettlementRecord])
def test_a_block_lists_the_keys_in_wire_order(cls):
    """The ``Keys:`` sentence is the record's wire order (``--json`` writes the keys in that order)."""
    encoded = list(msgspec.json.decode(msgspec.json.encode(_sample(cls))))
    lines = "\n".join(manpage.record_lines(manpage.RecordDoc(cls, "X"), {cls: "X"}))
    listed = manpage.plain(lines).split("Keys: ", 1)[1].split(".", 1)[0].split(", ")
    assert [key for key in listed if key in encoded] == encoded


def _sample(cls: type):
    """A record of ``cls`` with every field set (nested records built likewise), so every key is written."""
    values = {}
    for name, hint in typing.get_type_hints(cls).items():
        if name not in cls.__struct_fields__:
            continue
        options = [option for option in typing.get_args(hint) or (hint,) if option not in (type(None), msgspec.UnsetType)]
        option = options[0]
        origin = typing.get_origin(option)
        if isinstance(option, type) and issubclass(option, R.Record):
            values[name] = _sample(option)
        elif origin is list:
            values[name] = []
        elif option in (int, float) or option is R.Number or typing.get_origin(option) is typing.Union:
            values[name] = 0
        elif option is bool:
            values[name] = False
        else:
            values[name] = ""
    return cls(**values)


class _Undocumented(R.Record, kw_only=True):
    """A record whose new key has no rule.

    * ``first`` — The first key."""

    first: int
    second: int


class _Stale(R.Record, kw_only=True):
    """A record whose docstring names a key it no longer has.

    * ``first`` — The first key.
    * ``gone`` — A removed key."""

    first: int


class _Twice(R.Record, kw_only=True):
    """A key with two rules.

    * ``first`` … ``second`` — Both.
    * ``second`` — Again."""

    first: int
    second: int


@pytest.mark.parametrize("cls, message", [
    (_Undocumented, "no rule for second"),
    (_Stale, "has no key 'gone'"),
    (_Twice, "key 'second' has two rules"),
])
def test_the_generator_refuses_a_key_without_exactly_one_rule(cls, message):
    with pytest.raises(manpage.DocError, match=message):
        manpage.record_lines(manpage.RecordDoc(cls, "test"), {cls: "test"})


def test_check_fails_on_a_hand_edited_block_and_regenerating_restores_it(tmp_path):
    page = tmp_path / "dshctl.1"
    source = PAGE.read_text(encoding="utf-8")
    edited = source.replace("(error; unreadable) the bytes can be read", "(warning) the bytes can be read", 1)
    assert edited != source
    page.write_text(edited, encoding="utf-8")
    command = [sys.executable, "-m", "dshctl.manpage"]
    check = subprocess.run(command + ["--check", str(page)], capture_output=True, text=True, cwd=ROOT)
    assert check.returncode == 1 and "run python -m dshctl.manpage" in check.stderr
    assert subprocess.run(command + [str(page)], cwd=ROOT).returncode == 0
    assert page.read_text(encoding="utf-8") == source
    assert subprocess.run(command + ["--check", str(page)], cwd=ROOT).returncode == 0


def test_text_outside_the_blocks_is_kept_and_a_missing_marker_is_an_error(tmp_path):
    source = PAGE.read_text(encoding="utf-8")
    assert manpage.regenerate(source.replace(".SH NAME", ".SH NAME\n.\\\" a comment of ours")).count("a comment of ours") == 1
    without_end = source.replace('.\\" end generated: costs\n', "", 1)
    with pytest.raises(manpage.DocError, match="costs"):
        manpage.regenerate(without_end)


def test_plain_reads_the_page_as_words():
    assert manpage.plain(".TP\n.B \\-\\-in\nsearch \\%\\fBonly\\fR these \\(em kinds\n") == "--in search only these — kinds"
