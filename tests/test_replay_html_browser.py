"""The HTML replay page in a real browser: Debian's Chromium (/usr/bin/chromium) driven by Playwright.

One headless browser for the module (Playwright gives each launch a fresh temporary profile), a fresh
context per page. Where Playwright or Chromium is missing the module is skipped with one reason.

What "the same text as ``replay --instant``" means here: the page's transcript text is the
``textContent`` of ``#transcript`` without its ``.ui`` elements (the "you" label, per-turn figures,
copy and show-all buttons, pictures); ``replay --instant``'s is its output with the two display cuts of
tool results lifted (``view.MAX_RESULT_LINES``, ``view.MAX_LINE_CHARS``: the page shows a result whole,
collapsed). Both are compared after :data:`html_logs.LAYOUT` removes whitespace and frame glyphs.
"""

from __future__ import annotations

import http.server
import os
import threading
from functools import partial
from pathlib import Path

import pytest

from conftest import invoke
from html_logs import (CROSSED_KEY, CROSSED_TOKEN, DROPPED, MESSAGES, SAMPLES, T0, assembled_blocks, assistant, chunk, dropped_call_log,
                        interleaved_log, logs_to_compare, message, one_turn, tool_result, without_layout, write_log)
from test_replay_parallel import GENERATIONS

pytestmark = pytest.mark.serial  # a page playing in time: nothing else on the cores meanwhile

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-default-apps", "--disable-extensions", "--metrics-recording-only", "--mute-audio"]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (pip install '.[test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    return None


if (_why := _missing()) is not None:
    pytest.skip(f"browser tests skipped: {_why}", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402

from dshctl.reader import open_log  # noqa: E402
from dshctl.replay import view  # noqa: E402
from dshctl.replay.redact import MARKER, Redactor  # noqa: E402
from dshctl.replay.timeline import Timeline  # noqa: E402
from dshctl.replay.transcript import iter_fragments, transcript  # noqa: E402
from dshctl.replay.transform import PlaybackClock  # noqa: E402

TOUR = SAMPLES / "tour.session.v4.jsonl.zstd"

PAGE_TEXT = """() => {
  const copy = document.getElementById('transcript').cloneNode(true);
  copy.querySelectorAll('.ui').forEach((node) => node.remove());
  return copy.textContent;
}"""

WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (event) => window.__csp.push(event.violatedDirective + ' ' + event.blockedURI));
window.__dialogs = 0;
"""


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Exports, each written once per module: ``pages(log, *options) -> Path``."""
    folder = tmp_path_factory.mktemp("pages")
    made: dict[tuple, Path] = {}

    def export(log: Path, *extra: str, env: dict | None = None) -> Path:
        key = (str(log), extra, tuple(sorted((env or {}).items())))
        if key not in made:
            target = folder / f"page{len(made)}.html"
            result = invoke("replay", log, "--export", target, *extra, env=env, color=True)
            assert result.exit_code in (0, 1), result.output
            made[key] = target
        return made[key]

    return export


class Opened:
    """A page in a fresh context, with what it asked the network for, its errors and its dialogs."""

    def __init__(self, browser, path: Path, hash_: str = "#t=0", *, url: str | None = None, ready: bool = True, **context):
        self.context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **context})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.add_init_script(WATCH)
        self.page.goto((url or path.as_uri()) + hash_)
        if ready:
            self.wait("window.dshctlReplay !== undefined")

    def js(self, expression: str, arg=None):
        return self.page.evaluate(expression, arg)

    def wait(self, expression: str, timeout: float = 15.0) -> None:
        """Until ``expression`` is true (Playwright's wait_for_function evaluates strings, which the
        page's CSP forbids — as it should)."""
        import time

        deadline = time.monotonic() + timeout
        while not self.page.evaluate(expression):
            assert time.monotonic() < deadline, f"still false after {timeout} s: {expression}"
            self.page.wait_for_timeout(20)

    def text(self) -> str:
        return self.page.evaluate(PAGE_TEXT)

    def state(self) -> dict:
        return self.js("window.dshctlReplay.getState()")

    def close(self) -> None:
        assert self.errors == [], self.errors
        assert self.js("window.__csp") == []
        self.context.close()


@pytest.fixture
def open_page(browser):
    opened: list[Opened] = []

    def open_(path: Path, hash_: str = "#t=0", **kwargs) -> Opened:
        page = Opened(browser, path, hash_, **kwargs)
        opened.append(page)
        return page

    yield open_
    for page in opened:
        page.close()


def instant_text(log: Path, monkeypatch) -> str:
    """``replay --instant``'s output, the display cuts of tool results lifted."""
    monkeypatch.setattr(view, "MAX_RESULT_LINES", 10**9)
    monkeypatch.setattr(view, "MAX_LINE_CHARS", 10**9)
    result = invoke("replay", log, "--instant")
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def timeline_of(log: Path) -> Timeline:
    timeline = Timeline(open_log(str(log)))
    timeline.ensure_all()
    return timeline


def prefix_text(timeline: Timeline, position: int) -> str:
    return "".join(text for fragment, text in iter_fragments(timeline) if fragment < position)


# -- the transcript --------------------------------------------------------------------------------------


def readable(log: Path) -> bool:
    try:
        timeline_of(log)
    except Exception:  # a log dshctl refuses (the corpus has three); replay refuses it too
        return False
    return True


COMPARED = [log for log in logs_to_compare() if readable(log)]


def test_the_logs_compared_are_every_sample_and_corpus_log():
    samples = sorted(SAMPLES.glob("*.jsonl*"))
    assert len(samples) >= 18  # the bundled samples, each in its raw and zstd form
    assert [log for log in COMPARED if log.parent == SAMPLES] == samples  # every sample is readable and compared


@pytest.mark.parametrize("log", COMPARED, ids=lambda log: log.name)
def test_the_text_at_the_end_is_replay_instants(log, pages, open_page, monkeypatch):
    page = open_page(pages(log), "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    assert page.state()["position"] == page.state()["fragments"]
    assert without_layout(page.text()) == without_layout(instant_text(log, monkeypatch))


@pytest.mark.parametrize("log, idle", [(TOUR, 2.0), (TOUR, 0.0), (SAMPLES / "tour.session.jsonl", 2.0), (SAMPLES / "fork-child.session.v2.jsonl", 0.5)],
                         ids=["tour-v4", "tour-v4-no-cap", "tour-v0", "fork-v2"])
def test_after_seek_t_the_page_shows_exactly_what_had_streamed_by_t(log, idle, pages, open_page):
    page = open_page(pages(log, "--idle-limit", str(idle)), "#t=0")
    timeline = timeline_of(log)
    clock = PlaybackClock(timeline, idle)
    n = len(timeline)
    assert page.js("window.dshctlReplay.getDuration()") == clock[n - 1]
    moments = sorted({clock[i] for i in range(n)} | {(clock[i] + clock[i + 1]) / 2 for i in range(n - 1)} | {0.0, clock[n - 1] + 1})
    seen = page.js("""(moments) => moments.map((t) => {
      window.dshctlReplay.seek(t);
      const copy = document.getElementById('transcript').cloneNode(true);
      copy.querySelectorAll('.ui').forEach((node) => node.remove());
      return [window.dshctlReplay.getCurrentTime(), window.dshctlReplay.getState().position, copy.textContent];
    })""", moments)
    for t, (now, position, text) in zip(moments, seen):
        expected = clock.due_count(t, 0)
        assert position == expected, t
        assert now == min(t, clock[n - 1])
        assert without_layout(text) == without_layout(prefix_text(timeline, expected)), t


def test_parallel_tool_calls_grow_side_by_side_and_end_whole(tmp_path, open_page):
    """Interleaved blocks of one message: each is one node with its own complete text (never one box per
    fragment), and mid-stream each holds exactly its fragments so far."""
    t = T0 + 1000
    a = ['{"path": ', '"a.txt"', ', "limit": 5}']
    b = ['{"pattern": ', '"TODO"', ', "path": "src"}']
    stream = [chunk(t + 10, {"type": "block-start", "index": 0, "blockType": "text"}),
              chunk(t + 11, {"type": "text-delta", "index": 0, "text": "Looking "})]
    for k in range(3):
        stream.append(chunk(t + 20 + 10 * k, {"type": "tool-call-delta", "index": 1, "id": "ca", **({"name": "read"} if k == 0 else {}), "argumentsDelta": a[k]}))
        stream.append(chunk(t + 25 + 10 * k, {"type": "tool-call-delta", "index": 2, "id": "cb", **({"name": "grep"} if k == 0 else {}), "argumentsDelta": b[k]}))
        if k == 1:
            stream.append(chunk(t + 27 + 10 * k, {"type": "text-delta", "index": 0, "text": "at both."}))
    stream += [chunk(t + 60, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Looking at both."}}),
               chunk(t + 61, {"type": "block-end", "index": 1, "block": {"type": "tool-call", "id": "ca", "name": "read", "arguments": "".join(a)}}),
               chunk(t + 62, {"type": "block-end", "index": 2, "block": {"type": "tool-call", "id": "cb", "name": "grep", "arguments": "".join(b)}}),
               chunk(t + 63, {"type": "finish", "reason": {"kind": "tool-calls"}})]
    content = [{"type": "text", "text": "Looking at both."}, {"type": "tool-call", "id": "ca", "name": "read", "arguments": "".join(a)},
               {"type": "tool-call", "id": "cb", "name": "grep", "arguments": "".join(b)}]
    log = write_log(tmp_path / "parallel.session.v4.jsonl", one_turn(1, t, "look", stream, content))
    target = tmp_path / "parallel.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", color=True).exit_code == 0
    page = open_page(target)
    blocks = """() => [...document.querySelectorAll('#transcript .blk')].map((node) =>
        [node.className.split(' ')[1], (node.querySelector('.name') || {}).textContent || '', node.querySelector('.body').textContent])"""
    page.js("window.dshctlReplay.seek('end')")
    assert page.js(blocks) == [["text", "", "Looking at both."], ["tool", " read", "".join(a)], ["tool", " grep", "".join(b)]]
    page.js("window.dshctlReplay.seek(0.038)")  # 38 ms after the session starts: the second fragments of all three are in
    assert page.js(blocks) == [["text", "", "Looking at both."], ["tool", " read", "".join(a[:2])], ["tool", " grep", "".join(b[:2])]]


BLOCK_NODES = """() => [...document.querySelectorAll('#transcript .blk')].map((node) => [node.className.split(' ')[1],
    (node.querySelector('.name') || {}).textContent || '', node.querySelector('.body').textContent, (node.querySelector('.foot') || {}).textContent || ''])"""
"""Each block node on the page: its type, its tool name (`` name``), its body text and its foot."""


def blocks_at(timeline: Timeline, position: int) -> list[list[str]]:
    """What :data:`BLOCK_NODES` must read at ``position`` (fragments shown), from the timeline: each block
    of an interleaved message that has shown anything, in the message's block order, with exactly the
    fragments of it that streamed before ``position``; a call's foot once a max-tokens finish dropped it."""
    out = []
    for item in timeline.items:
        if item.region is None:
            continue
        for block in item.region.blocks:
            parts = [item.region.parts[index] for index in block]
            if parts[0].block_key is None or parts[0].start >= position:
                continue  # an event shown among the blocks, or a block not begun
            kind = "text" if parts[0].kind == "text" else "tool"
            name = body = foot = ""
            for part in parts:
                shown = min(max(position - part.start, 0), part.count)
                if part.kind == "tool-name" and shown:
                    name = " " + part.info["name"]
                elif part.kind in ("text", "tool-args"):
                    body += "".join(part.fragments[:shown])
                elif part.kind == "tool-end" and shown and part.info.get("dropped"):
                    foot = DROPPED
            out.append([kind, name, body, foot])
    return out


def seen_at_every_moment(page: Opened, moments: list[float]) -> list:
    return page.js("""([moments, nodes]) => moments.map((t) => {
      window.dshctlReplay.seek(t);
      const copy = document.getElementById('transcript').cloneNode(true);
      copy.querySelectorAll('.ui').forEach((node) => node.remove());
      return [window.dshctlReplay.getState().position, copy.textContent, eval(nodes)(), document.getElementById('transcript').outerHTML];
    })""".replace("eval(nodes)()", "(" + BLOCK_NODES + ")()"), [moments, None])


def every_moment(clock: PlaybackClock, n: int) -> list[float]:
    """Each fragment's time, the midpoints between, before the start and after the end."""
    return sorted({clock[i] for i in range(n)} | {(clock[i] + clock[i + 1]) / 2 for i in range(n - 1)} | {0.0, clock[n - 1] + 1})


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("name", MESSAGES)
def test_interleaved_blocks_stream_delta_by_delta_each_in_its_own_node(tmp_path, name, generation, open_page, monkeypatch):
    """A message whose blocks interleave (v0 packed rows, v2 runs, v4): at every moment each block is one
    node, in the message's block order, holding exactly its fragments so far; at the end each call once,
    under its name, with the assembled block's arguments (a dropped call says so), and the whole text is
    ``replay --instant``'s."""
    timed, content, finish = message(name)
    log = interleaved_log(tmp_path, generation, timed, content, finish)
    target = tmp_path / "page.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", color=True).exit_code == 0
    timeline = timeline_of(log)
    assert any(item.kind == "blocks" for item in timeline.items)
    clock = PlaybackClock(timeline, 0.0)
    n = len(timeline)
    page = open_page(target)
    moments = every_moment(clock, n)
    for t, (position, text, nodes, _) in zip(moments, seen_at_every_moment(page, moments)):
        assert position == clock.due_count(t, 0), t
        assert nodes == blocks_at(timeline, position), (t, position)
        assert without_layout(text) == without_layout(prefix_text(timeline, position)), (t, position)
    page.js("window.dshctlReplay.seek('end')")
    assert without_layout(page.text()) == without_layout(instant_text(log, monkeypatch))
    calls = [[" " + block["name"], block["arguments"]] for block in assembled_blocks(timed) if block["type"] == "tool-call"]
    ends = page.js(BLOCK_NODES)
    if finish == "max-tokens":
        assert calls == [] and [node[1] for node in ends] == [" grep", " bash"] and {node[3] for node in ends} == {DROPPED}
        assert page.js("document.querySelectorAll('.blk.ended-max-tokens').length") == 2
    else:
        assert [node[1:3] for node in ends if node[0] == "tool"] == calls and {node[3] for node in ends} == {""}
    # played rather than seeked, the page ends the same
    page.js("window.dshctlReplay.seek(0); window.dshctlReplay.setSpeed(0.5); window.dshctlReplay.play()")
    page.wait("window.dshctlReplay.getState().state === 'ended'")
    assert page.js(BLOCK_NODES) == ends and without_layout(page.text()) == without_layout(instant_text(log, monkeypatch))


def test_interleaved_blocks_are_laid_out_in_the_messages_order_as_they_first_stream(tmp_path, open_page):
    """The crossed message streams its read call first and its text last; the page, as the transcript,
    places them text, bash, read — each node where it belongs the moment it appears."""
    timed, content, finish = message("crossed")
    log = interleaved_log(tmp_path, "v4", timed, content, finish)
    target = tmp_path / "page.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", color=True).exit_code == 0
    timeline = timeline_of(log)
    region = next(item for item in timeline.items if item.kind == "blocks")
    starts = {part.block_key[1]: part.start for part in reversed(region.region.parts) if part.block_key is not None}
    page = open_page(target)
    names = "() => [...document.querySelectorAll('#transcript .blk')].map((node) => Number(node.dataset.block))"
    page.js("(p) => window.dshctlReplay.seek(p)", PlaybackClock(timeline, 0.0)[starts[1]])
    assert page.js(names) == [1, 2]  # bash began after read: above it
    page.js("(p) => window.dshctlReplay.seek(p)", PlaybackClock(timeline, 0.0)[starts[0]])
    assert page.js(names) == [0, 1, 2]
    text = transcript(timeline)
    assert text.index("Checking the key") < text.index("tool call bash") < text.index("tool call read")


def test_search_finds_text_split_across_parts_of_interleaved_blocks(tmp_path, open_page):
    timed, content, finish = message("crossed")
    log = interleaved_log(tmp_path, "v2", timed, content, finish)
    target = tmp_path / "page.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", color=True).exit_code == 0
    timeline = timeline_of(log)
    page = open_page(target)
    # "README.md" streams in three deltas, two of them in a later burst than the first: the hit is one,
    # and the playhead goes to the fragment that completes it
    assert page.js("window.dshctlReplay.search('README.md')") == 1
    position = page.state()["position"]
    read = lambda p: blocks_at(timeline, p)[-1][2]
    assert "README.md" in read(position) and "README.md" not in read(position - 1)
    current = "() => { const h = CSS.highlights.get('dshctl-current'); return h ? [...h].map((r) => r.toString()) : []; }"
    assert page.js(current) == ["README.md"]
    page.js("window.dshctlReplay.seek('end')")
    full = page.text().lower()
    for query in ("bearer zq8w", "example.com", "checking the key", "tool call", '"', "e"):
        assert page.js("(q) => window.dshctlReplay.search(q)", query) == full.count(query), query


@pytest.mark.parametrize("generation", GENERATIONS)
def test_redaction_holds_in_every_part_of_interleaved_blocks_at_every_moment(tmp_path, generation, open_page, monkeypatch):
    timed, content, finish = message("crossed")
    log = interleaved_log(tmp_path, generation, timed, content, finish)
    target = tmp_path / "page.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", "--redact-secrets", color=True).exit_code == 0
    timeline = timeline_of(log)
    clock = PlaybackClock(timeline, 0.0)
    page = open_page(target)
    pieces = (CROSSED_KEY, CROSSED_TOKEN, "sk-abc", "DEF123456789", "XYZ0000", CROSSED_TOKEN[:9], CROSSED_TOKEN[9:])
    for t, (_, _, _, dom) in zip(every_moment(clock, len(timeline)), seen_at_every_moment(page, every_moment(clock, len(timeline)))):
        assert not [piece for piece in pieces if piece in dom], t
    page.js("window.dshctlReplay.seek('end')")
    assert all(page.js("(s) => window.dshctlReplay.search(s)", piece) == 0 for piece in pieces)
    assert page.js("window.dshctlReplay.search('[redacted]')") == 2
    page.js("window.dshctlReplay.seek('end')")
    redacted = Redactor(secrets=True).redact(instant_text(log, monkeypatch))
    assert redacted.count(MARKER) == 2 and without_layout(page.text()) == without_layout(redacted)


@pytest.mark.parametrize("how", ["closed", "open", "whole"])
def test_a_call_dropped_by_max_tokens_is_marked_on_its_node_however_its_frame_ended(tmp_path, how, open_page, monkeypatch):
    log = dropped_call_log(tmp_path, how)
    target = tmp_path / "page.html"
    assert invoke("replay", log, "--export", target, "--idle-limit", "0", color=True).exit_code == 0
    timeline = timeline_of(log)
    clock = PlaybackClock(timeline, 0.0)
    page = open_page(target)
    page.js("window.dshctlReplay.seek('end')")
    assert without_layout(page.text()) == without_layout(instant_text(log, monkeypatch))
    words = DROPPED if how == "open" else "dropped: the reply was cut off by max tokens"
    assert page.js(BLOCK_NODES) == [["tool", " bash", '{"cmd": "ls"}', words], ["text", "", "and then", ""]]
    assert page.js("document.querySelector('.blk.tool .foot').className") == "foot s-retry"
    assert page.js("(q) => window.dshctlReplay.search(q)", words) == 1
    # before the output that closed the frame, the call is not marked yet; after it, it is
    text = next(item for item in timeline.items if item.kind == "text")
    page.js("(t) => window.dshctlReplay.seek(t)", clock[text.start] - 0.001)
    assert page.js(BLOCK_NODES)[0][3] == ("" if how == "open" else words)
    page.js("(t) => window.dshctlReplay.seek(t)", clock[text.start])
    assert page.js(BLOCK_NODES)[0][3] == words


# -- playing ----------------------------------------------------------------------------------------------


def test_play_pause_and_the_state_event(pages, open_page):
    page = open_page(pages(TOUR), "#t=0")
    page.js("""() => { window.__states = [];
      window.dshctlReplay.addEventListener('state', (event) => window.__states.push(event.detail)); }""")
    page.js("window.dshctlReplay.setSpeed(16); window.dshctlReplay.play()")
    page.wait("window.dshctlReplay.getCurrentTime() > 2")
    page.js("window.dshctlReplay.pause()")
    paused = page.state()
    assert paused["state"] == "paused" and paused["speed"] == 16 and paused["position"] > 0
    page.page.wait_for_timeout(200)
    assert page.js("window.dshctlReplay.getCurrentTime()") == paused["time"]  # paused: the clock stands
    page.js("window.dshctlReplay.setSpeed(2048); window.dshctlReplay.play()")
    page.wait("window.dshctlReplay.getState().state === 'ended'")
    states = [entry["state"] for entry in page.js("window.__states")]
    assert states[0] == "paused" and "playing" in states and states[-1] == "ended"  # setSpeed, play, pause, …, the end
    assert page.state()["position"] == page.state()["fragments"]
    assert without_layout(page.text()).endswith(without_layout("── turn 4 aborted (user) · 1.0 s"))


def test_the_controls_speed_idle_limit_seek_bar_and_buttons(pages, open_page):
    page = open_page(pages(TOUR), "#t=0")
    timeline = timeline_of(TOUR)
    n = len(timeline)
    turns = [start + 1 for start, _ in timeline.turn_marks]
    page.js("window.dshctlReplay.seek(4)")
    position = page.state()["position"]
    page.page.select_option("#idle", "0")  # the idle limit changes the clock, not what is on screen
    assert page.js("window.dshctlReplay.getDuration()") == PlaybackClock(timeline, 0.0)[n - 1]
    assert page.state()["position"] == position and page.state()["idleLimit"] == 0
    page.page.select_option("#idle", "2")
    page.page.select_option("#speed", "0.25")
    assert page.state()["speed"] == 0.25
    # the seek bar: a click at a share of its width seeks to that share of the duration
    box = page.page.locator("#seek").bounding_box()
    page.page.mouse.click(box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2)
    clock = PlaybackClock(timeline, 2.0)
    assert page.state()["time"] == pytest.approx(clock[n - 1] * 0.75, abs=clock[n - 1] / box["width"] * 2)
    # a mark is drawn at each turn: the canvas is painted where turn 2 starts
    painted = page.js("""(share) => { const canvas = document.getElementById('marks'); const context = canvas.getContext('2d');
        const x = Math.round(share * (canvas.width / devicePixelRatio - 2)) + 1;
        return context.getImageData(x * devicePixelRatio, 1, 1, 1).data[3]; }""", clock[turns[1] - 1] / clock[n - 1])
    assert painted > 0
    page.js("window.dshctlReplay.seek(0)")
    page.page.locator("#next-turn").click()
    page.page.locator("#next-turn").click()
    assert page.state()["position"] == turns[1]
    page.page.locator("#prev-turn").click()
    assert page.state()["position"] == turns[0]
    page.page.locator("#next-block").click()
    assert page.state()["position"] > turns[0]
    page.page.select_option("#turns", "3")
    assert page.state()["position"] == turns[2]
    page.page.locator("#play").click()
    assert page.state()["state"] == "playing"
    page.page.locator("#play").click()
    assert page.state()["state"] == "paused"
    page.page.locator("#next-turn").click()  # a clicked button keeps no focus: Space is still play/pause
    at = page.state()["position"]
    assert press(page, " ")["state"] == "playing" and press(page, " ")["state"] == "paused"
    assert page.state()["position"] >= at and page.state()["turn"] == 4


def test_the_page_starts_where_turn_and_from_say(pages, open_page):
    timeline = timeline_of(TOUR)
    page = open_page(pages(TOUR, "--turn", "3", "--speed", "2"), "")
    state = page.state()
    assert state["position"] >= timeline.ensure_turn(3) and state["turn"] == 3 and state["speed"] == 2


def test_playing_shows_the_fragments_due_and_never_one_node_per_delta(tmp_path, open_page):
    """A turn of 3 000 deltas streams into one text node per block; the page's node count follows the
    blocks and events, not the deltas."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from replay_first_frame import generate

    log = tmp_path / "big.session.jsonl.zstd"
    generate(log, 4, 2400)
    target = tmp_path / "big.html"
    assert invoke("replay", log, "--export", target, color=True).exit_code == 0
    page = open_page(target, "#t=0")
    page.js("window.dshctlReplay.setSpeed(64); window.dshctlReplay.play()")
    page.wait("window.dshctlReplay.getState().position > 4000")
    page.js("window.dshctlReplay.pause()")
    state = page.state()
    assert state["position"] == page.js("(t) => { window.dshctlReplay.seek(t); return window.dshctlReplay.getState().position; }", state["time"])
    page.js("window.dshctlReplay.seek('end')")
    nodes = page.js("""() => { const root = document.getElementById('transcript');
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ALL); let count = 0; while (walker.nextNode()) count++; return count; }""")
    assert state["fragments"] > 12000 and nodes < 400, nodes
    assert page.js("window.dshctlReplay.search('w2399 ')") == 4


# -- search, keys, links ----------------------------------------------------------------------------------


def test_search_covers_the_whole_session_and_moves_the_playhead(pages, open_page):
    page = open_page(pages(TOUR), "#t=0")
    timeline = timeline_of(TOUR)
    # from the start, a word only turn 4 has: the playhead goes there, though nothing of it has played
    assert page.js("window.dshctlReplay.search('checkout')") == 2
    state = page.state()
    assert state["turn"] == 4 and state["state"] == "paused"
    assert "checkout" in prefix_text(timeline, state["position"]) and "checkout" not in prefix_text(timeline, state["position"] - 1)
    current = "() => { const h = CSS.highlights.get('dshctl-current'); return h ? [...h].map((r) => r.toString()) : []; }"
    assert page.js(current) == ["checkout"]
    assert page.page.locator("#search-count").text_content() == "1 / 2"
    # the count is every occurrence the whole page shows, case-insensitive
    page.js("window.dshctlReplay.seek('end')")
    full = page.text().lower()
    for query in ("node", "read", "ci.yml", "✓", "TURN"):
        assert page.js("(q) => window.dshctlReplay.search(q)", query) == full.count(query.lower()), query
    # next and previous walk the hits in order and wrap; every hit on screen is highlighted
    page.js("window.dshctlReplay.search('read')")
    positions = [page.js("() => { window.dshctlReplay.searchNext(); return window.dshctlReplay.getState().position; }") for _ in range(12)]
    page.js("window.dshctlReplay.seek('end')")
    hits = page.js("window.dshctlReplay.search('read')")  # from the end: the first hit (wrapped)
    assert page.state()["position"] == positions[hits - 1]
    assert positions[: hits - 1] == sorted(positions[: hits - 1]) and positions[hits - 1] < positions[hits - 2]
    page.js("window.dshctlReplay.searchPrevious()")  # from the first hit back to the last: every hit is on screen
    assert page.js("CSS.highlights.get('dshctl-hit').size + CSS.highlights.get('dshctl-current').size") == hits
    assert page.js("window.dshctlReplay.search('no such words here')") == 0
    assert page.page.locator("#search-count").text_content() == "no match"


def press(page: Opened, *keys: str) -> dict:
    for key in keys:
        page.page.keyboard.press(key)
    return page.state()


def test_keys_are_the_terminal_players(pages, open_page):
    page = open_page(pages(TOUR), "#t=0")
    timeline = timeline_of(TOUR)
    turns = [start + 1 for start, _ in timeline.turn_marks]
    tools = [start + 1 for start in timeline.tool_marks]
    clock = PlaybackClock(timeline, 2.0)
    page.page.locator("body").click(position={"x": 5, "y": 300})
    assert press(page, "]")["position"] == turns[0]
    assert press(page, "]")["position"] == turns[1]
    assert press(page, "[")["position"] == turns[0]
    assert press(page, "n")["position"] == tools[0]
    assert press(page, "n")["position"] == tools[1]
    assert press(page, "p")["position"] == tools[0]
    at = page.state()["position"]
    assert press(page, ".")["position"] == at + 1 and press(page, ",")["position"] == at
    block = press(page, ">")["position"]
    assert block > at and press(page, "<")["position"] < block
    assert press(page, "g", "3", "Enter")["position"] == turns[2]
    assert press(page, "End")["position"] == len(timeline) and press(page, "Home")["position"] == 0
    assert press(page, "5")["position"] == clock.due_count(clock[len(timeline) - 1] * 0.5, 0)
    assert press(page, "ArrowRight")["time"] == pytest.approx(clock[len(timeline) - 1] * 0.5 + 5)
    assert press(page, "ArrowLeft", "ArrowLeft")["time"] == pytest.approx(clock[len(timeline) - 1] * 0.5 - 5)
    assert press(page, "+")["speed"] == 2 and press(page, "+", "-", "-", "-")["speed"] == 0.5
    assert press(page, " ")["state"] == "playing" and press(page, " ")["state"] == "paused"
    press(page, "?")
    assert page.page.locator("#help").is_visible()
    press(page, "Escape")
    assert page.page.locator("#help").is_hidden()
    press(page, "/")
    assert page.js("document.activeElement.id") == "search"
    page.page.keyboard.type("read")
    page.page.keyboard.press("Enter")
    page.wait("document.getElementById('search-count').textContent.includes('/')")
    first = page.state()["position"]
    page.page.keyboard.press("Enter")
    assert page.state()["position"] >= first
    page.page.keyboard.press("Escape")
    assert page.page.locator("#searchbar").is_hidden()


def test_deep_links(pages, open_page):
    timeline = timeline_of(TOUR)
    clock = PlaybackClock(timeline, 2.0)
    page = open_page(pages(TOUR), "#t=5.5")
    state = page.state()
    assert state["state"] == "paused" and state["time"] == 5.5 and state["position"] == clock.due_count(5.5, 0)
    page = open_page(pages(TOUR), "#turn=3")
    assert page.state()["position"] == timeline.ensure_turn(3) + 1 and page.state()["turn"] == 3
    page.js("location.hash = '#turn=2'")
    page.wait("window.dshctlReplay.getState().turn === 2")
    page.js("location.hash = '#t=0'")
    page.wait("window.dshctlReplay.getState().position === 1")
    # no link: the page plays from the start; prefers-reduced-motion: it opens on the whole session, paused
    playing = open_page(pages(TOUR), "")
    playing.wait("window.dshctlReplay.getState().state === 'playing'")
    calm = open_page(pages(TOUR), "", reduced_motion="reduce")
    assert calm.state()["state"] == "ended" and calm.state()["position"] == len(timeline)


@pytest.mark.parametrize("fragment", ["#%", "#t=%E0", "#turn=%", "#t=%zz&turn=1%"])
def test_a_malformed_link_is_no_link(fragment, pages, open_page):
    """A fragment that is no valid percent-encoding (decodeURIComponent throws on it) opens the page as
    no link does — playing from the start — and, set later, leaves the page where it is."""
    page = open_page(pages(TOUR), fragment)
    page.wait("window.dshctlReplay.getState().state === 'playing'")
    assert page.js("document.querySelectorAll('#transcript *').length") > 0
    page.js("window.dshctlReplay.seek(5.5)")
    page.js(f"location.hash = {fragment!r}")
    page.js("location.hash = '#t=5.5&x=%'")
    page.wait("window.dshctlReplay.getState().time === 5.5 && window.dshctlReplay.getState().state === 'paused'")
    page.js("window.dshctlReplay.seek(2)")
    page.js(f"location.hash = {fragment!r}")
    page.page.wait_for_timeout(100)
    assert page.state()["time"] == 2 and page.errors == []


# -- privacy, hostile text, the network -----------------------------------------------------------------------


def test_redacted_text_is_not_in_the_dom(tmp_path, open_page):
    from test_replay_html import SECRETS, secret_log

    log = secret_log(tmp_path)
    target = tmp_path / "redacted.html"
    assert invoke("replay", log, "--export", target, "--redact-secrets", "--redact", r"project-x\d+", color=True).exit_code == 0
    page = open_page(target, "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    dom = page.js("document.documentElement.outerHTML") + page.js("document.title")
    for secret in SECRETS:
        assert secret not in dom, secret
        assert page.js("(s) => window.dshctlReplay.search(s)", secret) == 0
    assert page.js("window.dshctlReplay.search('[redacted]')") >= 8


def test_log_text_is_shown_as_text_and_runs_nothing(tmp_path, open_page):
    from test_replay_html import HOSTILE_RESULT, HOSTILE_TITLE, hostile_log

    target = tmp_path / "hostile.html"
    assert invoke("replay", hostile_log(tmp_path), "--export", target, color=True).exit_code == 0
    page = open_page(target, "#t=0")
    assert page.js("window.dshctlReplay.search('alert(')") == 5  # title, text, tool arguments, result, cwd
    page.js("window.dshctlReplay.seek('end')")
    page.page.wait_for_timeout(100)
    assert page.dialogs == []
    assert page.js("document.title") == HOSTILE_TITLE and page.page.locator("#title").text_content() == HOSTILE_TITLE
    made = page.js("[...document.querySelectorAll('#transcript *')].map((node) => node.tagName.toLowerCase())")
    assert not {"img", "script", "svg", "b", "i", "iframe"} & set(made), set(made)
    text = page.text()
    for shown in (HOSTILE_TITLE, HOSTILE_RESULT, "<svg onload=alert(3)>", "</div><b>x</b>", "<i>sh</i>", "<b>bold?</b>", "␛]0;owned␇",
                  "{{title}}", "{{data}} {{script}} ]]> <!--"):
        assert shown in text, shown
    assert "/w/<script>alert(5)</script>" in page.page.locator("#meta").text_content()


def test_no_request_leaves_the_page(pages, open_page, tmp_path):
    path = pages(TOUR, "--embed-images", "--store", str(SAMPLES / "attachments"))
    page = open_page(path, "#t=0")
    page.js("window.dshctlReplay.setSpeed(64); window.dshctlReplay.play()")
    page.page.wait_for_timeout(300)
    page.js("window.dshctlReplay.seek('end'); window.dshctlReplay.search('read'); window.dshctlReplay.seek({turn: 2})")
    page.page.keyboard.press("?")
    page.page.mouse.click(600, 880)
    page.js("window.dshctlReplay.seek('end')")
    page.page.wait_for_timeout(200)
    assert page.js("document.querySelectorAll('#transcript img').length") == 2  # data: pictures are no request
    assert page.requests == [path.as_uri()]  # the page itself; nothing else
    # served over HTTP too: only the document (no favicon, no font, nothing)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(path.parent))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{path.name}"
        served = open_page(path, "#t=0", url=url)
        served.js("window.dshctlReplay.seek('end')")
        served.page.wait_for_timeout(300)
        assert served.requests == [url]
    finally:
        server.shutdown()


def test_pictures_show_when_embedded(pages, open_page):
    page = open_page(pages(TOUR, "--embed-images", "--store", str(SAMPLES / "attachments")), "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    page.wait("[...document.images].every((img) => img.complete)")
    assert page.js("[...document.querySelectorAll('#transcript img')].map((img) => [img.naturalWidth, img.naturalHeight])") == [[2, 2], [16, 8]]
    plain = open_page(pages(TOUR), "#t=0")
    plain.js("window.dshctlReplay.seek('end')")
    assert plain.js("document.querySelectorAll('img').length") == 0
    assert "[image pipeline.jpg · image/jpeg · 161 B · 16×8]" in plain.text()


def test_a_browser_without_decompression_stream_is_told(pages, browser):
    page = Opened(browser, pages(TOUR), "", ready=False)
    page.page.add_init_script("delete window.DecompressionStream")
    page.page.reload()
    page.wait("document.getElementById('notice').textContent.includes('DecompressionStream')")
    assert page.js("window.dshctlReplay") is None
    page.context.close()


# -- reading comfort: collapsing, copying, figures, phones, themes ----------------------------------------------


def test_long_blocks_collapse_with_a_line_count_and_copy_in_one_click(tmp_path, open_page):
    t = T0 + 1000
    stream = [chunk(t + 10, {"type": "tool-call-delta", "index": 0, "id": "c1", "name": "bash", "argumentsDelta": '{"cmd": "seq 40"}'}),
              chunk(t + 20, {"type": "block-end", "index": 0, "block": {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"cmd": "seq 40"}'}}),
              chunk(t + 21, {"type": "finish", "reason": {"kind": "tool-calls"}})]
    lines = "\n".join(str(i) for i in range(1, 41))
    after = [("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": '{"cmd": "seq 40"}', "_time": t + 30}),
             tool_result(1, 1, "c1", lines, t + 40)]
    log = write_log(tmp_path / "long.session.v4.jsonl", one_turn(1, t, "count", stream, [], after=after))
    target = tmp_path / "long.html"
    assert invoke("replay", log, "--export", target, color=True).exit_code == 0
    page = open_page(target, "#t=0", permissions=["clipboard-read", "clipboard-write"])
    page.js("window.dshctlReplay.seek('end')")
    result = page.page.locator(".card.result")
    assert "collapsed" in result.get_attribute("class")
    toggle = result.locator(".toggle")
    assert toggle.text_content() == "show all 40 lines"
    height = result.bounding_box()["height"]
    toggle.click()
    assert "collapsed" not in result.get_attribute("class") and result.bounding_box()["height"] > height * 1.8
    assert toggle.text_content() == "show less"
    result.hover()
    result.locator(".copy").click()
    page.wait("document.querySelector('.card.result .copy').textContent !== 'copy'")
    assert result.locator(".copy").text_content() == "copied"
    assert page.js("navigator.clipboard.readText()") == lines


def test_turns_carry_their_figures(pages, open_page, tmp_path):
    config = tmp_path / "config" / "dshctl"
    config.mkdir(parents=True)
    (config / "prices.toml").write_text('[models."deepseek-official/deepseek-v4-flash"]\ncurrency = "USD"\ninput = 0.28\ncacheRead = 0.028\n'
                                        'cacheWrite = 0.28\noutput = 0.42\n')
    page = open_page(pages(TOUR, env={"XDG_CONFIG_HOME": str(tmp_path / "config")}), "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    figures = page.js("[...document.querySelectorAll('.turn-head .figures')].map((node) => node.textContent)")
    assert figures[0] == "TTFT 300 ms · 2.6 s · 24,000 in · 253 out · 111 tok/s · $0.0043"
    assert figures[3] == "TTFT 500 ms · 1.0 s · $0.00"  # no usage: it cost nothing, in the session's currency


def test_the_session_line_is_shown_once_in_the_header(pages, open_page):
    """The sticky header's meta line says the session; the transcript does not say it again under it."""
    page = open_page(pages(TOUR), "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    line = "dsh session 7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57 · log v4"
    assert page.js("document.getElementById('meta').innerText").startswith(line)
    assert page.js("document.body.innerText").count(line) == 1
    assert line not in page.js("document.getElementById('transcript').innerText")
    first = page.js("[...document.querySelectorAll('#transcript .ev, #transcript .turn-head')].find((n) => n.offsetParent !== null).className")
    assert first == "turn-head", first  # the first thing under the header is turn 1


def screenshot(page: Opened, folder: Path, name: str, record_property) -> Path:
    path = folder / f"{name}.png"
    page.page.screenshot(path=str(path))
    record_property(f"screenshot-{name}", str(path))
    print(f"screenshot: {path}")
    return path


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_screenshot_per_theme(scheme, pages, open_page, shots, record_property):
    page = open_page(pages(TOUR, "--embed-images", "--store", str(SAMPLES / "attachments")), "#turn=2", color_scheme=scheme,
                     viewport={"width": 1400, "height": 900})
    page.js("window.dshctlReplay.seek(9.5)")
    background = page.js("getComputedStyle(document.documentElement).backgroundColor")
    assert background == {"light": "rgb(251, 251, 250)", "dark": "rgb(21, 23, 26)"}[scheme]
    assert screenshot(page, shots, f"tour-{scheme}-1400", record_property).stat().st_size > 10_000


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sized_viewport(scheme, pages, open_page, shots, record_property):
    page = open_page(pages(TOUR), "#t=0", color_scheme=scheme, viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True,
                     device_scale_factor=2)
    page.js("window.dshctlReplay.seek('end')")
    assert page.js("document.documentElement.scrollWidth") <= 360  # nothing wider than the phone
    boxes = page.js("""[...document.querySelectorAll('#controls button, #controls select, #controls .clock, #top button')]
        .filter((node) => node.offsetParent !== null).map((node) => { const box = node.getBoundingClientRect(); return [box.left, box.right, box.bottom]; })""")
    assert boxes and all(left >= 0 and right <= 360 and bottom <= 740 for left, right, bottom in boxes), boxes
    page.page.locator("#play").tap()
    assert page.state()["state"] == "playing"
    page.page.locator("#play").tap()
    screenshot(page, shots, f"tour-{scheme}-360", record_property)


# -- every symbol has a glyph ------------------------------------------------------------------------------

MISSING = "\u0378"  # unassigned: every font's .notdef box
PAGE_SOURCES = [Path(view.__file__), Path(view.__file__).with_name("html.py"), *sorted((Path(view.__file__).parent / "page").iterdir())]


def _page_symbols() -> list[str]:
    """Every non-ASCII character the page may show of its own: its HTML, CSS and script, the view's
    wording it embeds, and the control pictures :mod:`dshctl.textsafe` shows a log's controls as."""
    import re

    found = {c for path in PAGE_SOURCES for c in re.findall(r"[^\x00-\x7f]", path.read_text(encoding="utf-8"))}
    return sorted(found | {chr(0x2400 + code) for code in range(32)} | {"\u2421"})


DRAWN_AS_NOTDEF = """async (chars) => {
  // each character drawn in the page's sans and monospace stacks, beside an unassigned code point:
  // the same pixels are the .notdef box, i.e. no font had a glyph for it
  const root = getComputedStyle(document.documentElement);
  const canvas = document.createElement('canvas');
  canvas.width = 48; canvas.height = 48;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const boxes = {};
  for (const stack of ['--sans', '--mono']) {
    ctx.font = '32px ' + root.getPropertyValue(stack);
    await document.fonts.load(ctx.font, chars.join(''));
    const draw = (c) => { ctx.clearRect(0, 0, 48, 48); ctx.fillText(c, 4, 36); return ctx.getImageData(0, 0, 48, 48).data.join(','); };
    const box = draw('\\u0378');
    boxes[stack] = chars.filter((c) => draw(c) === box);
  }
  return boxes;
}"""

GLYPH_AT = """([wanted, replace]) => {
  // the box of the first occurrence of `wanted` in the transcript's text, scrolled into view; with
  // `replace`, that character replaced in its text node (the same place, another code point)
  const walker = document.createTreeWalker(document.getElementById('transcript'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(wanted);
    if (at < 0) continue;
    if (replace) { node.replaceData(at, wanted.length, replace); return null; }
    node.parentElement.scrollIntoView({block: 'center'});
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + wanted.length);
    const box = range.getBoundingClientRect();
    return {x: box.x, y: box.y, width: box.width, height: box.height, font: getComputedStyle(node.parentElement).fontFamily};
  }
  return undefined;
}"""


def test_every_symbol_of_the_page_has_a_glyph_in_chromium(pages, open_page):
    """Debian's Chromium has DejaVu and Liberation only: ⏹ and the control pictures had no glyph there
    (a box) until the page brought its own font of them; every other symbol is in those fonts."""
    symbols = _page_symbols()
    assert {"\u23f9", "\u241b", "\u2713", "\u25b8"} <= set(symbols)  # the scan finds the view's and textsafe's
    page = open_page(pages(TOUR), "#t=0")
    assert page.js(DRAWN_AS_NOTDEF, symbols + [MISSING]) == {"--sans": [MISSING], "--mono": [MISSING]}


@pytest.mark.parametrize("symbol", ["\u23f9", "\u241b", "\u2407"])
def test_the_stop_sign_and_control_pictures_show_a_glyph_where_the_page_shows_them(symbol, pages, open_page, tmp_path):
    """In the DOM as laid out: the pixels of the character differ from those of the .notdef box drawn in
    its place (the text the page inserted while its font loaded was a box until the player waited for it)."""
    from test_replay_html import hostile_log

    log = TOUR if symbol == "\u23f9" else hostile_log(tmp_path)  # the tour's interrupted message; ESC, BEL in a title
    page = open_page(pages(log), "#t=0")
    page.js("window.dshctlReplay.seek('end')")
    page.page.wait_for_timeout(100)
    box = page.js(GLYPH_AT, [symbol, None])
    assert box is not None and box["width"] > 0, f"{symbol!r} is not in the transcript"
    clip = {key: box[key] for key in ("x", "y", "width", "height")}
    shown = page.page.screenshot(clip=clip)
    page.js(GLYPH_AT, [symbol, MISSING])
    page.page.wait_for_timeout(50)
    assert page.page.screenshot(clip=clip) != shown, f"{symbol!r} is drawn as the .notdef box in {box['font']}"
