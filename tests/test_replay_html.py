"""``replay --export FILE.html`` without a browser: the file, its embedded data, redaction, filters,
figures, pictures and the options (tests/test_replay_html_browser.py opens the pages in Chromium)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shutil
from pathlib import Path

import pytest

from dshctl.errors import UsageError
from dshctl.reader import open_log
from dshctl.replay.html import page_data, render_page, turn_figures
from dshctl.replay.redact import MARKER, SECRET_PATTERNS, Redactor
from dshctl.replay.timeline import Timeline
from dshctl.replay.transform import PlaybackClock
from conftest import invoke
from html_logs import SAMPLES, SECRETS, T0, assistant, chunk, embedded_bytes, one_turn, page_data_of, secret_log, tool_result, write_log

TOUR = SAMPLES / "tour.session.v4.jsonl.zstd"


def export(log: Path, target: Path, *extra: str, env: dict | None = None):
    return invoke("replay", log, "--export", target, *extra, env=env)


def exported(log: Path, tmp_path: Path, *extra: str, env: dict | None = None) -> tuple[str, dict]:
    target = tmp_path / "page.html"
    result = export(log, target, "--force", *extra, env=env)
    assert result.exit_code == 0, result.output
    text = target.read_text(encoding="utf-8")
    return text, page_data_of(text)


# -- the file -------------------------------------------------------------------------------------------


def test_the_page_is_one_self_contained_file(tmp_path):
    result = export(TOUR, tmp_path / "tour.html")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"dshctl: wrote .*tour\.html \(replay page, 167 fragments, 00:30\.012 recorded, [\d,]+ bytes\)\n", result.stderr)
    text = (tmp_path / "tour.html").read_text(encoding="utf-8")
    # the CSP comes first and allows only the page's own script and style, by hash, data: images and fonts
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text).group(1)
    assert text.index("Content-Security-Policy") < text.index("<style>") < text.index("<script")
    script = re.search(r"<script>(.*)</script>", text, re.S).group(1)
    style = re.search(r"<style>(.*)</style>", text, re.S).group(1)
    digest = lambda body: "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
    assert html.unescape(csp) == (f"default-src 'none'; script-src {digest(script)}; style-src {digest(style)}; img-src data:; "
                                  "font-src data:; base-uri 'none'; form-action 'none'")
    # nothing outside the page: no URL in any attribute, no other script or style source
    markup = re.sub(r"(<(script|style)[^>]*>).*?(</\2>)", r"\1\3", text, flags=re.S)
    links = re.findall(r"""\b(?:src|href|action|poster|srcset|data)\s*=\s*["']?([^"'\s>]*)""", markup)
    assert links == ["data:,"], links  # the icon: without one a served page asks for /favicon.ico
    # one url(): the page's own font of the symbols common fonts lack, embedded
    assert re.findall(r"url\(([a-z:/]*)", text) == ["data:font/woff"]
    text_without_font = re.sub(r"url\(data:font/woff;base64,[A-Za-z0-9+/=]+\)", "", text)
    assert not re.search(r"https?:|//cdn|@import|url\(|fetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|import\(", re.sub(r'(id="dshctl-data"[^>]*>)[^<]*', r"\1", text_without_font))
    data = page_data_of(text)
    assert data["format"] == "dshctl-replay-html/1"
    assert data["title"] == "Fix the red CI build" and "<title>Fix the red CI build</title>" in text
    assert len(data["dt"]) == 167 and data["idle"] == 2.0 and data["speed"] == 1.0 and data["start"] == 0


def test_the_assets_are_package_data():
    from importlib import resources

    folder = resources.files("dshctl.replay") / "page"
    assert {"page.html", "player.js", "player.css"} <= {entry.name for entry in folder.iterdir()}


def test_the_clock_data_is_the_timelines_and_gives_the_players_clock():
    timeline = Timeline(open_log(str(TOUR)))
    data = page_data(timeline)
    times = list(timeline.times)
    assert [times[0] + sum(data["dt"][: i + 1]) for i in range(len(times))] == times
    # the page applies transform.PlaybackClock's rule to dt; in Python, for the record:
    for idle in (0.0, 2.0, 0.5):
        clock = PlaybackClock(timeline, idle)
        cap = idle * 1000 if idle > 0 else None
        total, at = 0.0, []
        for i, gap in enumerate(data["dt"]):
            if i and gap > 0:
                total += (min(gap, cap) if cap is not None else gap) / 1000
            at.append(total)
        assert at == [clock[i] for i in range(len(times))]


def test_runs_are_one_item_per_block_and_fragment_lengths_are_javascripts(tmp_path):
    log = write_log(tmp_path / "x.session.v4.jsonl", one_turn(1, T0 + 100, "hi", [
        {"type": "text-chunks", "time0": T0 + 110, "index": 0, "dt": [5, 5, 5], "texts": ["a", "😀", "b", "c"]},
        {"type": "text-chunks", "time0": T0 + 140, "index": 0, "dt": [5], "texts": ["d", "e"]},
        chunk(T0 + 150, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "a😀bcde"}}),
        chunk(T0 + 151, {"type": "finish", "reason": {"kind": "stop"}}),
    ], [{"type": "text", "text": "a😀bcde"}]))
    data = page_data(Timeline(open_log(str(log))))
    runs = [item for item in data["items"] if item["k"] == "text"]
    assert len(runs) == 1  # two adjacent runs of one block: one item
    assert runs[0]["x"] == "a😀bcde" and runs[0]["l"] == [1, 2, 1, 1, 1, 1] and runs[0]["n"] == 6


# -- privacy: redaction and filters ------------------------------------------------------------------------


def test_redaction_leaves_nothing_of_a_secret_in_the_file(tmp_path):
    log = secret_log(tmp_path)
    plain, _ = exported(log, tmp_path)
    assert all(secret in embedded_bytes(plain).decode() for secret in SECRETS[:-2])  # the log holds them
    text, data = exported(log, tmp_path, "--redact-secrets", "--redact", r"project-x\d+")
    raw = text.encode()
    inflated = embedded_bytes(text)
    for secret in SECRETS:
        assert secret.encode() not in raw and secret.encode() not in inflated, secret
        assert base64.b64encode(secret.encode()) not in raw
    body = inflated.decode()
    assert body.count(MARKER) >= 8
    run = next(item for item in data["items"] if item["k"] == "text")
    # the marker streams with the delta where the key began; the deltas it covered show nothing more
    pieces, at = [], 0
    for length in run["l"]:
        pieces.append(run["x"][at : at + length])
        at += length
    assert pieces == ["the key is [redacted]", "", "", " and codename [redacted]."]
    assert "Bearer [redacted]" in body and "https://bob:[redacted]@example.com" in body
    assert data["title"] == "[redacted] rollout" and "<title>[redacted] rollout</title>" in text


def test_redaction_cuts_pieces_where_they_were_cut():
    redactor = Redactor([r"SECRET\d+"])
    assert redactor.redact_pieces(["a SEC", "RET1", "23 b", "SECRET9"]) == ["a [redacted]", "", " b", "[redacted]"]
    assert redactor.redact_pieces(["no", " match"]) == ["no", " match"]
    assert Redactor([r"ab", r"bc"]).spans("xabcx") == [(1, 4)]  # overlapping matches merge
    assert Redactor([r"\b"]).redact("a b") == "a b"  # empty matches are ignored
    assert Redactor().redact_pieces(["SECRET1"]) == ["SECRET1"]


def test_bad_redaction_patterns_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="matches the empty string"):
        Redactor(["x*"])
    with pytest.raises(UsageError, match="not a regular expression"):
        Redactor(["("])
    result = export(TOUR, tmp_path / "x.html", "--redact", "(")
    assert result.exit_code == 2 and "--redact '(': not a regular expression" in result.stderr
    assert not (tmp_path / "x.html").exists()


PATTERN_SAMPLES = [
    ("private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", ""),
    ("private key", "-----BEGIN PRIVATE KEY-----\nMIIEow (cut)", ""),
    ("api key", "sk-proj-Ab3dEf6hIj9kLm2nOp5q", ""),
    ("api key", "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5q", ""),
    ("github token", "ghp_" + "a1" * 18, ""),
    ("github token", "github_pat_11ABCDEFG0123456789abcdef", ""),
    ("aws access key", "AKIAIOSFODNN7EXAMPLE", ""),
    ("google api key", "AIza" + "x" * 35, ""),
    ("slack token", "xoxb-1234567890-abcdef", ""),
    ("stripe key", "sk_live_" + "a" * 24, ""),
    ("hugging face token", "hf_" + "a" * 34, ""),
    ("json web token", "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", ""),
    ("json web token", "id-eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK.", "id-."),
    ("json web token", "x-eyJh-eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", "x-"),
    ("bearer token", "Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer "),
    ("assigned secret", 'API_KEY="0123456789abcdef"', 'API_KEY=""'),
    ("assigned secret", "password: correct-horse", "password: "),
    ("password in url", "postgres://admin:s3cr3t@db.local/app", "postgres://admin:@db.local/app"),
    ("password in url", "-https://u:pw@h", "-https://u:@h"),
    ("password in url", "s3://AKID:s3cr3t+key@bucket", "s3://AKID:@bucket"),
    ("password in url", "a.b+c-d://u:p:q@h", "a.b+c-d://u:@h"),
    ("password in url", "9https://u:pw@h", "9https://u:@h"),
]
"""``(what, a sample it redacts, what is left)``: every built-in pattern has one."""


@pytest.mark.parametrize("what, sample, kept", PATTERN_SAMPLES)
def test_each_built_in_pattern(what, sample, kept):
    assert what in dict(SECRET_PATTERNS)
    redacted = Redactor(secrets=True).redact(sample)
    assert MARKER in redacted and redacted.replace(MARKER, "") == kept, redacted


@pytest.mark.parametrize("ordinary", [
    "outputTokens: 1234567", "max_tokens = 200", "the sk-1 variant", "Bearer", "https://example.com/a:b@c",
    "AKIA is a prefix", "task-abcdefghijklmnopqrstuvwxyz",
])
def test_built_in_patterns_leave_ordinary_text(ordinary):
    assert Redactor(secrets=True).redact(ordinary) == ordinary


def test_filters_leave_the_omitted_content_out_of_the_file(tmp_path):
    _, everything = exported(TOUR, tmp_path)
    full = embedded_bytes(exported(TOUR, tmp_path)[0]).decode()
    assert "A red test job in CI." in full and "build.log" in full
    text, data = exported(TOUR, tmp_path, "--no-reasoning", "--no-tools")
    body = embedded_bytes(text).decode()
    kinds = {item["k"] for item in data["items"]}
    assert not kinds & {"thinking", "reasoning", "tool-start", "tool-name", "tool-args", "tool-end", "tool-call", "tool-result"}
    for gone in ("A red test job in CI.", "Node 14 lacks ??=", "build.log\\n4:", "settings.retries", "file_path", "Todo list saved"):
        assert gone not in body and gone not in text, gone
    text, data = exported(TOUR, tmp_path, "--turns", "3")
    body = embedded_bytes(text).decode()
    assert [item["u"] for item in data["items"] if item["k"] == "turn"] == [3] and list(data["fig"]) == ["3"]
    for gone in ("CI on main is red", "Read build.log", "Explain every stage", "Stage 1", "Fix the red CI build"):
        assert gone not in body and gone not in text, gone
    assert "Now patch ci.yml yourself" in body
    assert data["title"] != "Fix the red CI build"  # the title event of turn 2 is left out with its turn


def test_html_options_apply_to_html_exports_only(tmp_path):
    for extra in (["--embed-images"],):  # --redact applies to every form (tests/test_replay_redact.py)
        result = invoke("replay", TOUR, "--instant", *extra)
        assert result.exit_code == 2 and "only applies with --export FILE.html" in result.stderr, result.stderr
        result = export(TOUR, tmp_path / "x.md", *extra)
        assert result.exit_code == 2 and "only applies with --export FILE.html" in result.stderr
    result = export(TOUR, tmp_path / "x.html", "--store", str(SAMPLES / "attachments"))
    assert result.exit_code == 2 and "--store only applies with --embed-images" in result.stderr
    result = export(TOUR, tmp_path / "x.txt")
    assert result.exit_code == 2 and "must end in .cast, .md, .ndjson or .html" in result.stderr


def test_an_existing_page_needs_force(tmp_path):
    target = tmp_path / "x.html"
    target.write_text("keep")
    result = export(TOUR, target)
    assert result.exit_code == 2 and "already exists (--force overwrites)" in result.stderr and target.read_text() == "keep"
    assert export(TOUR, target, "--force").exit_code == 0 and target.read_text().startswith("<!DOCTYPE html>")


def test_speed_idle_limit_and_start_go_into_the_page(tmp_path):
    _, data = exported(TOUR, tmp_path, "--speed", "4", "--idle-limit", "0.5", "--turn", "2")
    timeline = Timeline(open_log(str(TOUR)))
    assert data["speed"] == 4 and data["idle"] == 0.5 and data["start"] == timeline.ensure_turn(2)


# -- what the page says: wording, figures, pictures, hostile text ------------------------------------------


def test_events_carry_the_views_wording_and_blocks_their_text():
    data = page_data(Timeline(open_log(str(TOUR))))
    lines = ["".join(text for text, _ in item["g"]) for item in data["items"] if "g" in item]
    assert "✗ attempt failed — SERVER: provider returned HTTP 503: upstream overloaded" in lines
    assert "↻ retry 1 of 3 in 1.0 s after SERVER" in lines and "── turn 3 ended: max tokens · 602 ms" in lines
    assert "· todos\n  ▸ Pin Node 20 in ci.yml\n  ◻ Re-run the test job" in lines
    results = [item for item in data["items"] if item["k"] == "tool-result"]
    assert [[text for text, _ in item["g"]] for item in results][0] == ["result: read ", "✓"]
    assert results[0]["lines"][:2] == ["build.log", "4:   settings.retries ??= 3;"]
    ends = [item for item in data["items"] if item["k"] == "tool-end"]
    assert [(item["end"], item.get("foot")) for item in ends] == [("closed", ""), ("closed", ""),
                                                                  ("max-tokens", "cut off by max tokens; the call was dropped")]
    assert [block[0] for block in data["blocks"]].count("tool") == 4


def test_per_turn_figures_come_from_the_stats_library(tmp_path):
    prices = tmp_path / "config" / "dshctl"
    prices.mkdir(parents=True)
    (prices / "prices.toml").write_text('[models."deepseek-official/deepseek-v4-flash"]\ncurrency = "USD"\ninput = 0.28\ncacheRead = 0.028\ncacheWrite = 0.28\noutput = 0.42\n')
    _, data = exported(TOUR, tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert data["fig"]["1"] == {"ttft": 300, "dur": 2552, "in": 24000, "out": 253, "tps": 111.11111111111111, "cost": 0.00430626,
                                "cur": "USD", "steps": 1}
    assert data["fig"]["4"] == {"ttft": 500, "dur": 1002, "steps": 1, "cost": 0, "cur": "USD"}  # no usage: no tokens, 0 USD
    _, builtin = exported(TOUR, tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    # no user file: the built-in table (list prices, each call at its own time) still prices the route
    assert builtin["fig"]["1"]["cur"] == "USD" and 0 < builtin["fig"]["1"]["cost"] != 0.00430626 and builtin["fig"]["1"]["ttft"] == 300


FLASH = '[models."deepseek-official/deepseek-v4-flash"]\ncurrency = "USD"\ninput = {}\ncacheRead = 0.028\ncacheWrite = 0.28\noutput = 0.42\n'


def test_the_page_costs_at_prices_and_leaves_them_out_with_no_cost(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    (tmp_path / "p.toml").write_text(FLASH.format(0.28))
    _, priced = exported(TOUR, tmp_path, "--prices", str(tmp_path / "p.toml"), env=env)
    assert priced["fig"]["1"]["cost"] == 0.00430626 and priced["fig"]["1"]["cur"] == "USD"
    (tmp_path / "p.toml").write_text(FLASH.format(2.8))  # ten times the input price
    _, dearer = exported(TOUR, tmp_path, "--prices", str(tmp_path / "p.toml"), env=env)
    assert dearer["fig"]["1"]["cost"] > priced["fig"]["1"]["cost"]
    _, free = exported(TOUR, tmp_path, "--no-cost", env=env)
    assert free["fig"] and not any("cost" in figures or "cur" in figures for figures in free["fig"].values())
    assert free["fig"]["1"] == {key: value for key, value in priced["fig"]["1"].items() if key not in ("cost", "cur")}


def test_prices_and_no_cost_are_page_options(tmp_path):
    (tmp_path / "bad.toml").write_text("[models\n")
    for extra, message in [
        (["--prices", str(tmp_path / "bad.toml")], "not TOML"),
        (["--prices", str(tmp_path / "missing.toml")], "cannot read price file"),
        (["--prices", str(tmp_path / "bad.toml"), "--no-cost"], "use one"),
    ]:
        result = export(TOUR, tmp_path / "x.html", *extra)
        assert result.exit_code == 2 and message in result.stderr, result.stderr
        assert not (tmp_path / "x.html").exists()
    for extra in (["--no-cost"], ["--prices", str(tmp_path / "bad.toml")]):
        result = export(TOUR, tmp_path / "x.md", *extra)
        assert result.exit_code == 2 and "only applies with --export FILE.html" in result.stderr, result.stderr


def test_the_figures_come_from_the_same_read_as_the_timeline(tmp_path, monkeypatch):
    """One read of the log: the figures folded from the timeline's events are the stats library's own
    (``stats --by turn``, read separately), on every sample and corpus log; from standard input too."""
    import sys

    from dshctl.options import StatsOptions
    from dshctl.replay.html import FiguresLog, HtmlOptions, _by_turn, _figures_of, page_prices
    from dshctl.stats import log_stats
    from html_logs import logs_to_compare

    prices = page_prices(HtmlOptions())
    compared = 0
    for log in logs_to_compare():
        try:
            opened = open_log(str(log), salvage=True)
        except Exception:  # not a readable log: the browser tests skip it too
            continue
        timeline = Timeline(FiguresLog(opened, HtmlOptions()))
        timeline.ensure_all()
        expected = _by_turn(log_stats(str(log), StatsOptions(by="turn", salvage=True), prices=prices).turns)
        assert _figures_of(timeline, HtmlOptions(), None) == expected, log
        opened.close()
        compared += bool(expected)
    assert compared >= 5
    second_reads = []
    monkeypatch.setattr(sys.modules["dshctl.stats"], "log_stats", lambda *args, **kwargs: second_reads.append(args))
    target = tmp_path / "stdin.html"
    result = invoke("replay", "-", "--export", target, "--no-cost", input=TOUR.read_bytes())
    assert result.exit_code == 0, result.output
    assert "standard input is read once" not in result.stderr and second_reads == []
    assert page_data_of(target.read_text(encoding="utf-8"))["fig"]["1"]["ttft"] == 300


def test_turn_figures_read_a_record_or_a_struct():
    import msgspec

    class Turn(msgspec.Struct, rename="camel"):
        turn: int
        ttft_ms: int | None
        duration_ms: int
        output_tokens: int | None = None

    assert turn_figures(Turn(turn=2, ttft_ms=None, duration_ms=5, output_tokens=7)) == {"dur": 5, "out": 7}
    assert turn_figures({"turn": 2, "ttftMs": 1, "costs": {"total": 0, "currency": None}}) == {"ttft": 1}


def test_pictures_are_embedded_only_when_verified(tmp_path):
    _, data = exported(TOUR, tmp_path)
    assert "im" not in data
    _, data = exported(TOUR, tmp_path, "--embed-images", "--store", str(SAMPLES / "attachments"))
    pictures = data["im"]
    assert sorted(pictures) == sorted({"sha256:a97eceb267d066482c42829cb5e07f971332113c46a19f731d2c82b9baaaa423",
                                       "sha256:2ae6300793ac5d4be7fa4b2b27e3991eb916b8ed6e666ef658fdae253596beaf"})
    for identifier, url in pictures.items():
        kind, payload = url.split(";base64,")
        assert kind in ("data:image/png", "data:image/jpeg")
        assert "sha256:" + hashlib.sha256(base64.b64decode(payload)).hexdigest() == identifier
    holders = [(item["k"], item["im"]) for item in data["items"] if "im" in item]
    assert [kind for kind, _ in holders] == ["user", "block"]
    # bytes that do not match their id are not embedded, and the note says so
    store = tmp_path / "store"
    shutil.copytree(SAMPLES / "attachments", store)
    damaged = next((store / "v1" / "objects").rglob("a97e*"))
    damaged.write_bytes(damaged.read_bytes()[:-1] + b"\x00")
    target = tmp_path / "damaged.html"
    result = export(TOUR, target, "--embed-images", "--store", str(store))
    assert result.exit_code == 0 and "1 picture(s) not embedded" in result.stderr
    assert list(page_data_of(target.read_text())["im"]) == ["sha256:2ae6300793ac5d4be7fa4b2b27e3991eb916b8ed6e666ef658fdae253596beaf"]


HOSTILE_TITLE = "<img src=x onerror=alert(1)>"
HOSTILE_RESULT = "</script><script>alert(2)</script>"


def hostile_log(tmp_path: Path) -> Path:
    t = T0 + 1000
    stream = [
        {"type": "text-chunks", "time0": t + 10, "index": 0, "dt": [5], "texts": ["<svg onload=alert(3)>", "</div><b>x</b>"]},
        chunk(t + 20, {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "<i>sh</i>", "argumentsDelta": '{"a": "</pre><script>alert(4)</script>"}'}),
        chunk(t + 30, {"type": "block-end", "index": 1, "block": {"type": "tool-call", "id": "c1", "name": "<i>sh</i>", "arguments": "{}"}}),
        chunk(t + 31, {"type": "finish", "reason": {"kind": "tool-calls"}}),
    ]
    after = [("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "<i>sh</i>", "arguments": "{}", "_time": t + 40}),
             tool_result(1, 1, "c1", HOSTILE_RESULT + "\n{{data}} {{script}} ]]> <!--", t + 50)]
    events = one_turn(1, t, "<b>bold?</b> \x1b]0;owned\x07 {{title}}", stream, [], after=after, title=HOSTILE_TITLE)
    return write_log(tmp_path / "hostile.session.v4.jsonl", events, header={"cwd": "/w/<script>alert(5)</script>"})


def test_hostile_text_stays_inside_the_data(tmp_path):
    text, data = exported(hostile_log(tmp_path), tmp_path)
    outside = re.sub(r'(id="dshctl-data"[^>]*>)[^<]*', r"\1", text).replace(html.escape(HOSTILE_TITLE, quote=False), "TITLE")
    assert outside.count("<script") == 2 and "alert(" not in outside and "<img" not in outside and "onerror=alert" not in outside
    assert f"<title>{html.escape(HOSTILE_TITLE, quote=False)}</title>" in text
    assert data["title"] == HOSTILE_TITLE
    body = embedded_bytes(text).decode()
    assert HOSTILE_RESULT in body and "\x1b" not in body and "␛]0;owned␇" in body
    assert "{{data}}" in body and "{{title}}" in body  # the template is filled once: log text is never a placeholder


# -- interleaved blocks (parallel tool calls, text beside a call) -----------------------------------------------

from html_logs import (CROSSED_KEY, CROSSED_TOKEN, DROPPED, MESSAGES, assembled_blocks, crossed, dropped_call_log,  # noqa: E402
                       interleaved_log, message)
from test_replay_parallel import GENERATIONS  # noqa: E402


def block_texts(data: dict) -> list[tuple[str, int, str | None, str]]:
    """Per block of the page data, by its rank in its message (then by number): ``(type, block index,
    name, streamed text)``, its streamed text joined from its records in fragment order."""
    texts: dict[int, list] = {}
    ranks: dict[int, tuple] = {}
    for record in data["items"]:
        if "b" not in record:
            continue
        entry = texts.setdefault(record["b"], [data["blocks"][record["b"]][0], data["blocks"][record["b"]][2], None, ""])
        ranks.setdefault(record["b"], (record.get("rg", -1), record.get("o", -1), record["b"]))
        if "l" in record:
            entry[3] += record["x"]
        if record.get("name"):
            entry[2] = record["name"]
    return [tuple(texts[b]) for b in sorted(texts, key=lambda b: ranks[b])]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("name", [name for name in MESSAGES if name != "dropped"])
def test_interleaved_blocks_are_records_of_their_own_blocks(tmp_path, name, generation):
    timed, content, _ = message(name)
    log = interleaved_log(tmp_path, generation, timed, content)
    timeline = Timeline(open_log(str(log)))
    data = page_data(timeline)
    assert any(item.kind == "blocks" for item in timeline.items)
    # every fragment is in exactly one record, in order: the page's clock and seek stay exact
    assert [record["s"] for record in data["items"]] == list(accumulate_starts(data["items"]))
    assert sum(record.get("n", 1) for record in data["items"]) == len(data["dt"]) == len(timeline)
    # each block once, in the message's block order, with its whole text: the assembled block's
    expected = [("text" if block["type"] == "text" else "tool", None if block["type"] == "text" else block["name"],
                 block["text"] if block["type"] == "text" else block["arguments"]) for block in assembled_blocks(timed)]
    assert [(kind, name, text) for kind, _, name, text in block_texts(data)] == expected
    assert [index for _, index, _, _ in block_texts(data)] == list(range(len(expected)))
    # a record never mixes two blocks of a region, and a region's records say where their node goes
    region = [record for record in data["items"] if "rg" in record]
    assert region and {record["rg"] for record in region} == {0}
    assert all(record["o"] == data["blocks"][record["b"]][2] for record in region if "b" in record)


def accumulate_starts(records):
    at = 0
    for record in records:
        yield at
        at += record.get("n", 1)


def test_the_block_order_is_the_messages_not_the_order_blocks_first_streamed(tmp_path):
    timed, content = crossed()
    data = page_data(Timeline(open_log(str(interleaved_log(tmp_path, "v4", timed, content)))))
    region = [record for record in data["items"] if "rg" in record]
    first_streamed = []
    for record in region:
        if data["blocks"][record["b"]][2] not in first_streamed:
            first_streamed.append(data["blocks"][record["b"]][2])
    assert first_streamed == [2, 1, 0]  # the read call streams first, the text last …
    assert region[0]["k"] == "tool-start" and data["blocks"][region[0]["b"]][2] == region[0]["o"] == 2  # its node goes last
    assert [name for _, _, name, _ in block_texts(data)] == [None, "bash", "read"]  # … the message has text, bash, read


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_secret_split_across_deltas_or_parts_of_interleaved_blocks_is_redacted(tmp_path, generation):
    timed, content = crossed()
    log = interleaved_log(tmp_path, generation, timed, content)
    plain, _ = exported(log, tmp_path)
    shown = embedded_bytes(plain).decode()
    assert CROSSED_KEY in shown and CROSSED_TOKEN[:9] in shown and CROSSED_TOKEN[9:] in shown  # the token's halves: two records
    text, data = exported(log, tmp_path, "--redact-secrets")
    inflated = embedded_bytes(text)
    for secret in (CROSSED_KEY, CROSSED_TOKEN, "DEF123456789", "XYZ0000", CROSSED_TOKEN[:9], CROSSED_TOKEN[9:]):
        assert secret.encode() not in text.encode() and secret.encode() not in inflated, secret
    texts = {index: streamed for _, index, _, streamed in block_texts(data)}
    assert texts[0] == "Checking the key [redacted] before anything, then reporting."
    assert texts[1] == "{\"command\": \"curl -H 'Authorization: Bearer [redacted]' https://example.com\"}"
    assert sum(record.get("n", 1) for record in data["items"]) == len(data["dt"])  # as many fragments: the times still apply


@pytest.mark.parametrize("generation", GENERATIONS)
def test_interleaved_calls_a_max_tokens_finish_dropped_say_so(tmp_path, generation):
    timed, content, finish = message("dropped")
    data = page_data(Timeline(open_log(str(interleaved_log(tmp_path, generation, timed, content, finish)))))
    ends = [(record["b"], record["end"], record.get("foot")) for record in data["items"] if record["k"] == "tool-end"]
    assert sorted(ends) == [(0, "max-tokens", DROPPED), (1, "max-tokens", DROPPED)]
    assert [(name, streamed) for _, _, name, streamed in block_texts(data)] == [
        ("grep", '{"pattern": "needle", "path": "src"}'), ("bash", '{"command": "ls -la"}')]


@pytest.mark.parametrize("how, where", [("closed", "tool-end"), ("open", "text"), ("whole", "tool-start")])
def test_a_call_dropped_after_its_frame_closed_is_marked_on_its_block(tmp_path, how, where):
    """Not interleaved: a call, a text block, a max-tokens finish. However the call's frame ended — its own
    block-end, the text's output closing it (the terminal's words are in the text's layout marks, which the
    page leaves out), a whole block — the page data marks the call's block dropped, in the view's words."""
    data = page_data(Timeline(open_log(str(dropped_call_log(tmp_path, how)))))
    call = next(record["b"] for record in data["items"] if record["k"] == "tool-start")
    marked = [record for record in data["items"] if record.get("foot", "").startswith("dropped") or "drop" in record]
    assert [record["k"] for record in marked] == [where]
    if how == "open":
        assert marked[0]["drop"] == [call, DROPPED] and marked[0]["b"] != call
    else:
        assert marked[0]["b"] == call and marked[0]["foot"] == "dropped: the reply was cut off by max tokens"


@pytest.mark.parametrize("created", [True, 0, -5, 2**60, 1.5])
def test_the_page_has_no_creation_time_where_the_header_gives_none(tmp_path, created):
    """One rule for a header's createdAt (options.window.created_ms): a bool, 0, a negative or an unsafe
    integer says nothing about when the session was created, so the page says nothing either."""
    turn = one_turn(1, T0 + 100, "hi", [], [{"type": "text", "text": "ok"}])
    good = write_log(tmp_path / "good.session.v4.jsonl", turn)
    bad = write_log(tmp_path / "bad.session.v4.jsonl", turn, header={"createdAt": created})
    assert page_data(Timeline(open_log(str(good))))["session"]["createdAt"] == T0
    assert page_data(Timeline(open_log(str(bad))))["session"]["createdAt"] is None


def test_the_pages_glyph_font_is_what_its_generator_makes():
    """The committed font (dshctl/replay/glyphs_font.py) is the generator's output from DejaVu Sans Mono:
    the symbols it draws are those its unicode-range names, and nothing else changed it by hand."""
    pytest.importorskip("fontTools", reason="fontTools regenerates the page's glyph font (pip install fonttools)")
    from dshctl.replay import glyphs_generate

    if not glyphs_generate.SOURCE.exists():
        pytest.skip(f"no {glyphs_generate.SOURCE} to draw the glyph font from (Debian's fonts-dejavu-core)")
    assert glyphs_generate.main(["--check"]) == 0
    import io

    from fontTools.ttLib import TTFont

    from dshctl.replay.glyphs_font import UNICODE_RANGE, WOFF_BASE64

    font = TTFont(io.BytesIO(base64.b64decode(WOFF_BASE64)))
    assert sorted(font.getBestCmap()) == glyphs_generate.codepoints()
    assert UNICODE_RANGE == "U+23F8-23F9, U+2400-241F, U+2421"
    assert font["name"].getDebugName(1) == "dshctl glyphs" and "Bitstream" in font["name"].getDebugName(13)
