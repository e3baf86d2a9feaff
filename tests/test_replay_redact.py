"""``replay --redact`` / ``--redact-secrets`` in every form, from one home: the timeline is redacted as
it is built (:mod:`dshctl.replay.redact`), so the transcript (``--instant``, and the timed stream to a
terminal), the interactive player's screen, markdown, cast, the NDJSON timeline and the HTML page all
show the same text; a secret is in none of them. (Until now the options applied to HTML only and were
refused elsewhere.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshctl.reader import open_log
from dshctl.replay.items import shown
from dshctl.replay.redact import MARKER, Redactor
from dshctl.replay.render import screen_text
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript
from dshctl.replay.transform import make_filters
from conftest import invoke
from html_logs import SECRETS, embedded_bytes, secret_log, without_layout

REDACT = ("--redact-secrets", "--redact", r"project-x\d+")


def _output(log: Path, tmp_path: Path, form: str, *extra: str) -> str:
    """What ``replay`` writes in ``form``: the transcript on stdout, or the exported file's text (the
    page's embedded data inflated)."""
    if form == "instant":
        result = invoke("replay", str(log), "--instant", *extra)
        assert result.exit_code == 0, result.output
        return result.stdout
    target = tmp_path / f"x.{form}"
    result = invoke("replay", str(log), "--export", str(target), "--force", *extra)
    assert result.exit_code == 0, result.output
    text = target.read_text(encoding="utf-8")
    if form == "md":  # markdown escapes brackets (outside code): read it as it renders
        return text.replace("\\[", "[").replace("\\]", "]")
    return embedded_bytes(text).decode() + text if form == "html" else text


@pytest.mark.parametrize("form", ["instant", "md", "cast", "ndjson", "html"])
def test_no_secret_is_left_in_any_form(tmp_path, form):
    log = secret_log(tmp_path)
    plain = _output(log, tmp_path, form)
    shown = [secret for secret in SECRETS if secret in plain]
    assert len(shown) >= 6, shown  # the log's secrets are there without redaction (a form may cut some long text)
    redacted = _output(log, tmp_path, form, *REDACT)
    for secret in SECRETS:
        assert secret not in redacted, (form, secret)
    assert MARKER in redacted
    assert "[redacted] rollout" in redacted or form == "instant"  # the title (the transcript shows none)


def test_every_form_shows_the_same_redacted_text(tmp_path):
    """The transcript redacted is the page's text redacted as a whole (the text the browser test reads),
    and markdown holds the same lines: one rule, applied once."""
    log = secret_log(tmp_path)
    instant = _output(log, tmp_path, "instant", *REDACT)
    whole = Redactor([r"project-x\d+"], secrets=True).redact(_output(log, tmp_path, "instant"))
    assert without_layout(instant) == without_layout(whole)
    markdown = _output(log, tmp_path, "md", *REDACT)
    assert "the key is [redacted] and codename [redacted]." in instant
    assert "the key is [redacted] and codename [redacted]." in markdown
    assert "Bearer [redacted]" in instant and "https://bob:[redacted]@example.com" in instant


def test_the_cast_streams_the_marker_where_the_key_began(tmp_path):
    """A key streamed over three deltas is one match: the marker comes with the first delta, the two it
    covered show nothing (so write no output event), the fragment times unchanged."""
    log = secret_log(tmp_path)
    plain = [json.loads(line) for line in _output(log, tmp_path, "cast").splitlines()[1:]]
    redacted = [json.loads(line) for line in _output(log, tmp_path, "cast", *REDACT).splitlines()[1:]]
    plain_times = {event[0] for event in plain if event[1] == "o"}
    assert {event[0] for event in redacted if event[1] == "o"} <= plain_times  # fragments keep their times
    assert redacted[-1][0] == plain[-1][0]
    text = "".join(event[2] for event in redacted if event[1] == "o")
    assert "the key is [redacted]" in text and "sk-abc" not in text
    markers = [event for event in redacted if event[1] == "m"]
    assert markers and all("project-x" not in event[2] for event in markers)


def test_the_words_outputs_branch_on_are_shown_redacted_and_looked_up_as_they_are(tmp_path):
    """A pattern matching a word the outputs look up (``completed``, a turn's end reason) redacts what they
    show of it — the NDJSON ``info`` and the turn's end line — as it redacts a tool's name; the timeline
    keeps the word for the outputs to branch on (``shown`` holds the redacted value beside it)."""
    log = secret_log(tmp_path)
    items = [json.loads(line) for line in _output(log, tmp_path, "ndjson", "--redact", "completed|bash").splitlines()]
    ends = [item for item in items if item.get("kind") == "turn-end"]
    assert [item["info"]["reason"] for item in ends] == ["[redacted]"]
    assert ends[0]["text"].startswith("── turn 1 ended: [redacted]")
    assert [item["info"]["name"] for item in items if item.get("kind") == "tool-call"] == ["[redacted]"]
    assert [item["marker"] for item in items if item.get("kind") == "tool-call"] == ["tool: [redacted]"]
    text = _output(log, tmp_path, "instant", "--redact", "completed|bash")
    assert "bash" not in text and "completed" not in text and "turn 1 ended: [redacted]" in text
    with open_log(str(log)) as opened:
        timeline = Timeline(opened, make_filters(redact=("completed",)))
        timeline.ensure_all()
        end = next(item for item in timeline.items if item.kind == "turn-end")
        assert end.info["reason"] == "completed" and shown(end.info, "reason") == "[redacted]"


def test_a_block_whose_type_is_redacted_is_still_shown_as_its_type(tmp_path):
    """``^text$`` matches a text block's type (and no text): the block is still laid out as text (the
    outputs branch on the word as the log has it), its NDJSON ``type`` shows redacted."""
    log = secret_log(tmp_path)
    records = [json.loads(line) for line in _output(log, tmp_path, "ndjson", "--redact", "^text$").splitlines()]
    plain = [json.loads(line) for line in _output(log, tmp_path, "ndjson").splitlines()]
    assert [record.get("text") for record in records] == [record.get("text") for record in plain]
    instant = _output(log, tmp_path, "instant", "--redact", "^text$")
    assert instant == _output(log, tmp_path, "instant")


def test_the_players_screen_is_redacted(tmp_path):
    """The interactive player draws from the same timeline (Filters carries the redactor); every
    position's screen is free of the secrets."""
    log = secret_log(tmp_path)
    filters = make_filters(redact=(r"project-x\d+",), redact_secrets=True)
    with open_log(str(log)) as opened:
        timeline = Timeline(opened, filters)
        timeline.ensure_all()
        end = len(timeline)
        for position in range(0, end + 1):
            screen = screen_text(timeline, position, width=120, height=40)
            for secret in SECRETS:
                assert secret not in screen, (position, secret)
        assert MARKER in screen_text(timeline, end, width=120, height=40)
        assert transcript(timeline).count(MARKER) >= 6


def test_bad_patterns_are_refused_in_every_form(tmp_path):
    for extra in (["--instant"], ["--export", str(tmp_path / "x.md")]):
        result = invoke("replay", str(secret_log(tmp_path)), *extra, "--redact", "(")
        assert result.exit_code == 2 and "--redact '(': not a regular expression" in result.stderr


# -- every string of a log, redacted in every form ---------------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MARKED = ("tour.session.jsonl", "tour.session.v4.jsonl", "fork-child.session.v2.jsonl", "cwd-change.session.v4.jsonl")
"""Four sample logs: generations v0, v2 and v4, a fork, a working-directory change, failures, aborts."""
TAG = "QZleakQZ"


def _tagged(value, structure: bool = False, words: bool = True):
    """``value`` with :data:`TAG` appended to every string, but for the ``type`` of a record, a stream
    member and a chunk (the format's structure: a log without it is no log), and, unless ``words``,
    every other ``type`` (a block's: so its text is shown as text)."""
    if isinstance(value, dict):
        return {key: item if key == "type" and (structure or not words) else _tagged(item, key in ("stream", "chunk"), words)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_tagged(item, structure, words) for item in value]
    return value + TAG if isinstance(value, str) else value


@pytest.mark.parametrize("words", [True, False], ids=["words-tagged", "text-tagged"])
@pytest.mark.parametrize("sample", MARKED)
def test_every_string_of_a_log_is_redacted_in_every_form(tmp_path, sample, words):
    """Every string value of the log tagged (ids, paths, prompts, answers, call ids, end reasons, block
    types, context sources, failure kinds …), ``--redact TAG``: the tag is in no form's output, anywhere
    — header, title, text, NDJSON fields, the page's data — nor on the player's screen. Without
    ``--redact`` every form shows it."""
    log = tmp_path / sample
    lines = (SAMPLES / sample).read_text(encoding="utf-8").splitlines()
    log.write_text("".join(json.dumps(_tagged(json.loads(line), True, words)) + "\n" for line in lines), encoding="utf-8")
    for form in ("instant", "md", "cast", "ndjson", "html"):
        assert TAG in _output(log, tmp_path, form), form
        redacted = _output(log, tmp_path, form, "--redact", TAG)
        assert TAG not in redacted, (form, redacted[max(redacted.find(TAG) - 200, 0) : redacted.find(TAG) + 20])
        assert MARKER in redacted
    with open_log(str(log)) as opened:
        timeline = Timeline(opened, make_filters(redact=(TAG,)))
        timeline.ensure_all()
        for position in (1, len(timeline) // 2, len(timeline)):
            assert TAG not in screen_text(timeline, position, width=120, height=40)
