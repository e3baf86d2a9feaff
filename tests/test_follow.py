"""``--follow``: cat, stats and replay run as subprocesses while a writer thread grows a log the way dsh
does (tests/grow.py). Every wait has a deadline; a follower that hangs is killed and fails the test."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zstandard

from conftest import REPO, SAMPLES, sigint_on_import
from dshctl.follow import follow_target
from grow import Grower, batches, zstd_frames

pytestmark = pytest.mark.serial  # a writer and a follower racing: nothing else on the cores meanwhile

DSHCTL = [sys.executable, "-m", "dshctl.cli"]

# each command's follow form and the non-follow form its final output must equal
COMMANDS = {
    "cat": (["cat", "--follow"], ["cat"]),
    "stats": (["stats", "--follow"], ["stats", "--by", "turn", "--ndjson"]),
    "replay": (["replay", "--follow"], ["replay"]),
}


class Follower:
    """A ``dshctl ... --follow`` subprocess whose standard output is collected by a thread."""

    def __init__(self, args: list[str], path: Path):
        env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
        self.process = subprocess.Popen(
            [*DSHCTL, *args, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
        )
        self.out = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        stream = self.process.stdout
        while True:
            data = os.read(stream.fileno(), 65536)
            if not data:
                return
            with self._lock:
                self.out += data

    def output(self) -> bytes:
        with self._lock:
            return bytes(self.out)

    def wait_for(self, predicate, what: str, timeout: float = 5.0) -> bytes:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.output()
            if predicate(out):
                return out
            time.sleep(0.02)
        self.kill()
        pytest.fail(f"timed out waiting for {what}; output so far ends {self.output()[-300:]!r}")

    def interrupt(self, timeout: float = 10.0) -> tuple[int, bytes, str]:
        """Ctrl-C; the exit status, the whole output and standard error."""
        self.process.send_signal(signal.SIGINT)
        return self.finish(timeout)

    def finish(self, timeout: float = 10.0) -> tuple[int, bytes, str]:
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("the follower did not end")
        self._thread.join(5)
        return status, self.output(), self.process.stderr.read().decode("utf-8", "replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def dshctl(*args: str) -> bytes:
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    return subprocess.run([*DSHCTL, *args], capture_output=True, env=env, cwd=REPO, timeout=30, check=True).stdout


def _started(follower: Follower) -> None:
    """Following has begun once the first output is there (the header line for cat, …)."""
    follower.wait_for(lambda out: len(out) > 0, "the first output")


@pytest.mark.parametrize(
    "sample", ["tour.session.jsonl", "tour.session.jsonl.zstd", "tour.session.v4.jsonl", "tour.session.v4.jsonl.zstd"]
)
def test_follow_while_dsh_writes_equals_the_finished_file(tmp_path, sample):
    """Half-way, what is durable is printed; at the end, each command prints what it prints for the
    finished file; Ctrl-C ends with status 0 and nothing on stderr (a half-written batch is no damage)."""
    parts = batches(SAMPLES / sample, random.Random(sample))
    log = tmp_path / sample
    grower = Grower(log, parts, seed=len(sample), pause_after=len(parts) // 2)
    followers = {name: Follower(follow, log) for name, (follow, _) in COMMANDS.items()}
    try:
        grower.start()
        assert grower.paused.wait(30), "the writer never reached its pause"
        partial = tmp_path / f"partial-{sample}.jsonl"
        partial.write_bytes(_settled_prefix(dshctl("cat", "--raw", str(log))))
        final_src = SAMPLES / sample
        for name, (_, plain) in COMMANDS.items():
            at_pause = dshctl(*plain, str(partial)).replace(str(partial).encode(), str(log).encode())
            finished = dshctl(*plain, str(final_src)).replace(str(final_src).encode(), str(log).encode())
            durable = _common_prefix(at_pause, finished)
            assert durable
            followers[name].wait_for(lambda out: out.startswith(durable), f"{name}: the durable half printed")
        grower.resume()
        assert grower.done.wait(60) and grower.error is None
        for name, (_, plain) in COMMANDS.items():
            expected = dshctl(*plain, str(log))
            followers[name].wait_for(lambda out: out == expected, f"{name}: the whole log printed")
            status, out, err = followers[name].interrupt()
            assert (status, out, err) == (0, expected, ""), name
    finally:
        grower.resume()
        for follower in followers.values():
            follower.kill()


_SETTLING = (b'"assistant/message"', b'"turn/end"', b'"step/end"', b'"llm/retry"', b'"llm/retry-started"')
_CHUNKS = (b'"assistant/chunk"', b'"text-chunks"', b'"reasoning-chunks"', b'"tool-call-chunks"')


def _settled_prefix(raw: bytes) -> bytes:
    """A v0 log's lines without its pending attempt (chunks after the last settling event, and what
    follows them): what can no longer change (FORMAT §2.6). Other generations are returned whole."""
    lines = raw.splitlines(keepends=True)
    kind = [line[: line.find(b",")] for line in lines]
    settled = max((i for i, k in enumerate(kind) if k.endswith(_SETTLING)), default=0)
    pending = next((i for i in range(settled + 1, len(lines)) if kind[i].endswith(_CHUNKS)), len(lines))
    return b"".join(lines[:pending])


def _common_prefix(a: bytes, b: bytes) -> bytes:
    """The longest common prefix of two outputs that ends at a line boundary."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return a[: a.rfind(b"\n", 0, n) + 1]


def test_a_v0_attempt_is_held_back_until_its_settlement(tmp_path):
    """cat --follow never prints what can still change: the chunks of a v0 step come out folded into
    the settlement, once its assistant/message is durable."""
    lines = (SAMPLES / "tour.session.jsonl").read_bytes().splitlines(keepends=True)
    message_at = next(i for i, line in enumerate(lines) if b'"type":"assistant/message"' in line)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:message_at]))
    follower = Follower(["cat", "-f"], log)
    try:
        durable = _common_prefix(dshctl("cat", str(log)), dshctl("cat", str(SAMPLES / "tour.session.jsonl")))
        assert dshctl("cat", str(log)).endswith(b"\n") and not dshctl("cat", str(log)) == durable  # cat settles it
        follower.wait_for(lambda out: out == durable, "the durable events")
        time.sleep(0.4)
        assert follower.output() == durable  # the pending attempt is not printed
        with open(log, "ab") as out:
            out.write(lines[message_at])
        follower.wait_for(lambda out: b'"type":"assistant/message"' in out, "the settled message")
        status, out, err = follower.interrupt()
        assert status == 0 and err == ""
    finally:
        follower.kill()


def test_latency_of_a_new_frame(tmp_path):
    """An event is printed well within 250 ms of its frame landing (the median of several)."""
    frames = zstd_frames((SAMPLES / "tour.session.v4.jsonl.zstd").read_bytes())
    log = tmp_path / "session.v4.jsonl.zstd"
    log.write_bytes(frames[0] + frames[1])
    follower = Follower(["cat", "-f"], log)
    latencies = []
    try:
        _started(follower)
        count = len(follower.wait_for(lambda out: out.count(b"\n") >= 2, "the first batch").splitlines())
        compressor = zstandard.ZstdCompressor(write_checksum=True)
        for n in range(5):
            time.sleep(0.13 * (n + 1) % 0.3)  # land at different points of the poll period
            frame = compressor.compress(b'{"type":"session/title","seq":%d,"time":1790000009999,"data":{"title":"t%d","messageSeqs":[],"source":{"kind":"fallback"}}}\n' % (count - 1 + n, n))
            with open(log, "ab") as out:
                out.write(frame)
            landed = time.monotonic()
            follower.wait_for(lambda out: out.count(b"\n") >= count + n + 1, f"event {n}", timeout=3)
            latencies.append(time.monotonic() - landed)
    finally:
        follower.kill()
    latencies.sort()
    assert latencies[len(latencies) // 2] < 0.25, latencies
    assert latencies[-1] < 1.0, latencies


@pytest.mark.parametrize("change", ["shrink", "replace", "remove"])
def test_a_log_that_shrinks_or_is_replaced_is_an_error(tmp_path, change):
    source = SAMPLES / "tour.session.v4.jsonl"
    log = tmp_path / "session.v4.jsonl"
    shutil.copyfile(source, log)
    follower = Follower(["cat", "--follow"], log)
    try:
        follower.wait_for(lambda out: out.count(b"\n") >= 58, "the whole log")
        if change == "shrink":
            os.truncate(log, 100)
        elif change == "replace":
            other = tmp_path / "new"
            shutil.copyfile(source, other)
            os.replace(other, log)
        else:
            log.unlink()
        status, _, err = follower.finish()
    finally:
        follower.kill()
    word = {"shrink": "shrank", "replace": "replaced", "remove": "removed"}[change]
    assert status == 1 and f"dshctl: error: {log}: the log " in err and word in err and "Traceback" not in err


def test_damage_before_the_end_is_reported_as_cat_reports_it(tmp_path):
    """A corrupt complete frame followed by more frames: the error cat gives, status 2."""
    frames = zstd_frames((SAMPLES / "tour.session.v4.jsonl.zstd").read_bytes())
    log = tmp_path / "session.v4.jsonl.zstd"
    log.write_bytes(frames[0] + frames[1])
    follower = Follower(["cat", "-f"], log)
    try:
        _started(follower)
        broken = bytearray(frames[2])
        broken[len(broken) // 2] ^= 0xFF
        with open(log, "ab") as out:
            out.write(bytes(broken) + frames[3])
        status, _, err = follower.finish()
    finally:
        follower.kill()
    expected = subprocess.run([*DSHCTL, "cat", str(log)], capture_output=True, cwd=REPO, timeout=30)
    assert status == expected.returncode == 2
    assert err == expected.stderr.decode()


def test_a_session_migrated_while_followed_is_switched_to(tmp_path):
    session = tmp_path / "sessions" / "--home-alice-proj--" / "s-1"
    session.mkdir(parents=True)
    shutil.copyfile(SAMPLES / "tour.session.v2.jsonl.zstd", session / "session.v2.jsonl.zstd")
    follower = Follower(["cat", "-f"], session)
    try:
        old = dshctl("cat", str(session / "session.v2.jsonl.zstd"))
        follower.wait_for(lambda out: out == old, "the v2 log")
        staged = session / "session.v4.jsonl.zstd.0123456789ab.tmp"
        shutil.copyfile(SAMPLES / "tour.session.v4.jsonl.zstd", staged)
        os.link(staged, session / "session.v4.jsonl.zstd")  # dsh's exclusive publish
        staged.unlink()
        new = dshctl("cat", str(session / "session.v4.jsonl.zstd"))
        follower.wait_for(lambda out: out == old + new, "the v4 log after the v2 one")
        status, _, err = follower.interrupt()
    finally:
        follower.kill()
    assert status == 0
    assert err == f"dshctl: {session}/session.v2.jsonl.zstd: dsh migrated the session to generation 4; following {session}/session.v4.jsonl.zstd from its start\n"


def test_a_sessions_root_follows_the_latest_session(tmp_path):
    root = tmp_path / "sessions"
    logs = []
    for name in ("a", "b", "c"):
        session = root / "--home-alice-proj--" / name
        session.mkdir(parents=True)
        logs.append(session / "session.v4.jsonl.zstd")
        shutil.copyfile(SAMPLES / "tour.session.v4.jsonl.zstd", logs[-1])
    os.utime(logs[1], (2_000_000_000, 2_000_000_000))
    assert follow_target(str(root)).path == logs[1]
    assert follow_target(str(logs[0])).path == logs[0]
    follower = Follower(["cat", "--follow"], root)
    try:
        expected = dshctl("cat", str(logs[1]))
        follower.wait_for(lambda out: out == expected, "the latest log")
        status, out, _ = follower.interrupt()
    finally:
        follower.kill()
    assert status == 0 and out == expected
    env_root = dict(os.environ, DSH_HOME=str(tmp_path), PYTHONPATH=str(REPO), NO_COLOR="1")
    latest = subprocess.run([*DSHCTL, "cat", "--latest"], capture_output=True, env=env_root, cwd=REPO, timeout=30)
    assert latest.stdout == expected  # --latest picks the same session without following


def test_a_closed_pipe_ends_quietly(tmp_path):
    parts = batches(SAMPLES / "tour.session.v4.jsonl", random.Random(3))
    log = tmp_path / "session.v4.jsonl"
    grower = Grower(log, parts, seed=3)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen([*DSHCTL, "cat", "-f", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    try:
        process.stdout.readline()
        process.stdout.close()
        grower.start()
        status = process.wait(20)
        err = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert (status, err) == (0, b"")


def test_stats_follow_prices_its_turns_as_stats_does(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."deepseek-official/deepseek-v4-flash"]\ncurrency = "USD"\ninput = 0.28\ncacheRead = 0.028\ncacheWrite = 0.28\noutput = 0.42\n')
    log = SAMPLES / "tour.session.v4.jsonl.zstd"
    expected = dshctl("stats", "--by", "turn", "--ndjson", "--prices", str(prices), str(log))
    assert b'"costs"' in expected
    follower = Follower(["stats", "--follow", "--prices", str(prices)], log)
    try:
        follower.wait_for(lambda out: out == expected, "the priced turn records")
        status, out, _ = follower.interrupt()
    finally:
        follower.kill()
    assert (status, out) == (0, expected)


@pytest.mark.parametrize(
    "args, message",
    [
        (["cat", "-f", "-"], "--follow reads a log file or directory, not standard input"),
        (["stats", "-f", "samples/tour.session.jsonl", "samples/tour.session.v2.jsonl"], "--follow watches one log"),
        (["stats", "-f", "--json", "samples/tour.session.jsonl"], "use --ndjson"),
        (["replay", "-f", "--export", "x.cast", "samples/tour.session.jsonl"], "--export writes a finished one"),
        (["stats", "-f", "--by", "day", "samples/tour.session.jsonl"], "--follow watches one (--by turn or step)"),
        (["cat", "-f", "--salvage", "samples/tour.session.jsonl"], "does not apply to --follow"),
        (["replay", "-f", "--salvage", "samples/tour.session.jsonl"], "does not apply to --follow"),
    ],
)
def test_follow_usage_errors(args, message):
    result = subprocess.run([*DSHCTL, *args], capture_output=True, cwd=REPO, timeout=30, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and message in result.stderr.decode()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_live_replay_view_in_a_terminal(tmp_path):
    """tmux runs replay --follow while the log grows: the live mark, output as it lands, pause, scroll
    back, L back to the live edge, q ends with status 0."""
    import shlex

    from test_replay_tmux import Pane, status_of

    parts = batches(SAMPLES / "tour.session.v4.jsonl", random.Random(5))
    log = tmp_path / "session.v4.jsonl"
    grower = Grower(log, parts, seed=5, pause_after=len(parts) // 2, gap=0.05)
    pane = Pane(" ".join(shlex.quote(part) for part in [*DSHCTL, "replay", "--follow", str(log)]))
    try:
        pane.wait(lambda s: "● live" in status_of(s), "the live mark")
        grower.start()
        assert grower.paused.wait(30)
        half = pane.wait(lambda s: "● live" in status_of(s) and "turn 2" in s, "the durable half")
        pane.keys("Space")
        pane.wait(lambda s: "⏸" in status_of(s) and "○ live" in status_of(s), "paused, off the live edge")
        pane.keys("PageUp")
        pane.wait(lambda s: s != half and "○ live" in status_of(s), "scrolled back")
        scrolled = _settled(pane)
        grower.resume()
        assert grower.done.wait(60) and grower.error is None
        assert _settled(pane) == scrolled  # paused and scrolled back: nothing moves while the log grows
        pane.keys("L")
        pane.wait(lambda s: "● live" in status_of(s) and "turn 4" in status_of(s), "back at the live edge, the last turn shown")
        pane.keys("q")
        pane.wait(lambda s: "EXITED 0" in s, "exit status 0")
    finally:
        grower.resume()
        pane.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_live_view_opens_at_the_live_edge(tmp_path):
    """A log already written is drawn at once, the view at its live edge, not played from the start."""
    import shlex

    from test_replay_tmux import Pane, status_of

    pane = Pane(" ".join(shlex.quote(part) for part in [*DSHCTL, "replay", "--follow", str(SAMPLES / "tour.session.v4.jsonl.zstd")]))
    try:
        screen = pane.wait(lambda s: "turn 4" in status_of(s), "the last turn", timeout=4)
        assert "● live" in status_of(screen) and "turn 4 aborted" in screen
    finally:
        pane.close()


def _settled(pane, timeout: float = 5.0) -> str:
    """The screen once it stays the same for 0.3 s (a frame being drawn is not what the player shows)."""
    deadline = time.monotonic() + timeout
    screen = pane.text()
    while time.monotonic() < deadline:
        time.sleep(0.3)
        again = pane.text()
        if again == screen:
            return screen
        screen = again
    pytest.fail(f"the screen kept changing:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_live_view_streams_a_v0_attempt_before_it_settles(tmp_path):
    """v0 chunk rows show at the live edge as a dim preview, token by token, before their settlement;
    the settled items then take its place."""
    import shlex

    from test_replay_tmux import Pane, status_of

    parts = batches(SAMPLES / "tour.session.jsonl", random.Random(7))
    pause = next(k for k in range(2, len(parts)) if _pending_text(b"".join(parts[:k])))
    log = tmp_path / "session.jsonl"
    grower = Grower(log, parts, seed=7, pause_after=pause, gap=0.02)
    pane = Pane(" ".join(shlex.quote(part) for part in [*DSHCTL, "replay", "--follow", str(log)]))
    try:
        grower.start()
        assert grower.paused.wait(30)
        words = _pending_text(b"".join(parts[:pause]))[-12:]
        screen = pane.wait(lambda s: "· streaming (not settled yet)" in s and words in s.replace("\n", ""), "the preview")
        assert "● live · streaming" in status_of(screen)
        grower.resume()
        assert grower.done.wait(60) and grower.error is None
        pane.wait(lambda s: "turn 4 aborted" in s and "streaming" not in s, "the whole log, settled")
        pane.keys("q")
        pane.wait(lambda s: "EXITED 0" in s, "exit status 0")
    finally:
        grower.resume()
        pane.close()


def _pending_text(raw: bytes) -> str:
    """The text of the text-chunks rows of a raw v0 log's pending attempt ("" when none is pending)."""
    import json

    pending = raw[len(_settled_prefix(raw)) :]
    texts = [json.loads(line)["data"]["texts"] for line in pending.splitlines() if b'"text-chunks"' in line[:30]]
    return "".join("".join(t) for t in texts).strip()


def test_the_live_stats_step_stays_current_while_its_tools_run(tmp_path):
    """A step is in progress from its step/start to its step/end: its assistant/message settles the model
    call, but its tools still run (the log ends at the tool/call of turn 2 step 1)."""
    from dshctl.reader import open_log
    from dshctl.stats.follow import _fold_for, current_step_text

    log = tmp_path / "p.jsonl"
    log.write_bytes(b"".join((SAMPLES / "tour.session.v4.jsonl").read_bytes().splitlines(keepends=True)[:26]))
    with open_log(str(log)) as opened:
        fold = _fold_for(opened, None)
        for event in opened.events():
            fold.feed(event)
    assert current_step_text(fold, now_ms=1790000010000 + 90_500) == "turn 2 step 1 · running 1m31s"


@pytest.mark.parametrize(
    "when, typer_parses",
    [(["commands"], False), (["cat"], False), (["commands", "options"], False), (["typer"], True), (["typer", "msgspec"], True)],
)
@pytest.mark.parametrize("follow", [True, False])
def test_ctrl_c_while_the_command_starts_is_no_traceback(when, typer_parses, follow):
    """Ctrl-C while the command line is still being imported (the first ~100 ms): a follow command reads
    the log as it stands and exits 0 (a second Ctrl-C: at once, 0); any other is interrupted, 130. The
    command line the console script parses itself (dshctl.commands), and one only typer reads (``--``)."""
    log = SAMPLES / "tour.session.v4.jsonl"
    args = ["cat", *(["-f"] if follow else []), *(["--"] if typer_parses else []), str(log)]
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    result = subprocess.run([*sigint_on_import(*when), *args], capture_output=True, env=env, cwd=REPO, timeout=30)
    assert b"Traceback" not in result.stderr
    if follow:
        assert result.returncode == 0 and result.stderr == b""
        if len(when) == 1:
            assert result.stdout == dshctl("cat", str(log))
    else:
        assert (result.returncode, result.stderr) == (130, b"dshctl: interrupted\n")


def test_what_asks_to_follow():
    from dshctl.interrupt import asks_to_follow

    assert asks_to_follow(["cat", "-f", "x"]) and asks_to_follow(["--no-color", "stats", "-vf", "x"])
    assert asks_to_follow(["replay", "x", "--follow"])
    assert not asks_to_follow(["grep", "-f", "x"]) and not asks_to_follow(["cat", "--", "-f"]) and not asks_to_follow([])


def test_a_closed_pipe_ends_quietly_while_nothing_is_printed(tmp_path):
    """``cat -f --type 'nothing/*' LOG | true``: nothing is ever written, yet the reader of the pipe is
    gone; the follower notices while idle, as ``tail -f`` does, and ends with 0."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    log = SAMPLES / "tour.session.v4.jsonl"
    process = subprocess.Popen([*DSHCTL, "cat", "-f", "--type", "nothing/*", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    try:
        process.stdout.close()
        status = process.wait(20)
        err = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert (status, err) == (0, b"")


@pytest.mark.parametrize("rewrite", ["bigger", "same size, header", "same size, last line"])
def test_a_log_rewritten_in_place_is_an_error(tmp_path, rewrite):
    """``cp other.jsonl LOG`` keeps the inode: the bytes already read changed, so this is no growth."""
    lines = (SAMPLES / "tour.session.v4.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.v4.jsonl"
    log.write_bytes(b"".join(lines[:40]))
    follower = Follower(["cat", "--follow"], log)
    try:
        follower.wait_for(lambda out: out.count(b"\n") >= 40, "the first 40 lines")
        if rewrite == "bigger":
            shutil.copyfile(SAMPLES / "tour.session.v3.jsonl", log)
        elif rewrite == "same size, header":
            with open(log, "r+b") as out:
                out.write(lines[0].replace(b"dsh tour", b"dsh tuor"))
        else:
            with open(log, "r+b") as out:
                out.seek(len(b"".join(lines[:39])))
                out.write(lines[39][:-2] + b"]\n")
        status, _, err = follower.finish()
    finally:
        follower.kill()
    assert status == 1 and f"dshctl: error: {log}: the log was rewritten in place" in err and "Traceback" not in err


def _in_a_terminal(args: list[str], until: bytes, env: dict) -> bytes:
    """Run dshctl on a pseudo-terminal until ``until`` is drawn, then Ctrl-C; everything it drew."""
    import pty
    import re
    import select as select_module

    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.execvpe(sys.executable, [sys.executable, "-m", "dshctl", *args], env)
    drawn, deadline, interrupted = b"", time.monotonic() + 20, False
    try:
        while time.monotonic() < deadline:
            if not interrupted and until in drawn:
                os.kill(pid, signal.SIGINT)
                interrupted = True
            if select_module.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the child ended
                    break
                if not data:
                    break
                drawn += data
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", drawn).replace(b"\r\n", b"\n").replace(b"\r", b"")


def test_stats_follow_ends_with_the_tables_of_stats(tmp_path):
    """After Ctrl-C the live table (its 'following' caption, its current step) gives way to the tables
    ``dshctl stats`` prints for the file as it stands."""
    log = tmp_path / "session.v4.jsonl"
    shutil.copyfile(SAMPLES / "tour.session.v4.jsonl", log)
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1", COLUMNS="100", TERM="xterm")
    drawn = _in_a_terminal(["stats", "-f", str(log)], b"current step", env)
    plain = _in_a_terminal(["stats", str(log)], b"\0 never drawn", env)  # the same terminal: boxed tables
    assert drawn.rstrip().endswith(plain.rstrip())
    assert b"Ctrl-C ends" not in drawn[drawn.rindex(plain.rstrip()[:40]):]


def test_an_empty_session_directory_is_followed_once_dsh_writes_its_log(tmp_path):
    """dsh has just created the session directory: following waits for its first log."""
    session = tmp_path / "sessions" / "--home-alice-proj--" / "s-1"
    session.mkdir(parents=True)
    follower = Follower(["cat", "-f"], session)
    try:
        # the log is published only once the follower says it waits (a fixed sleep was short on a loaded
        # machine: the log was there before the follower first looked, and no note was due)
        note: list[bytes] = []
        reader = threading.Thread(target=lambda: note.append(follower.process.stderr.readline()), daemon=True)
        reader.start()
        reader.join(15)
        assert note and follower.process.poll() is None, note
        staged = session / "session.v4.jsonl.0123456789ab.tmp"
        shutil.copyfile(SAMPLES / "tour.session.v4.jsonl", staged)
        os.link(staged, session / "session.v4.jsonl")  # dsh's exclusive publish
        staged.unlink()
        expected = dshctl("cat", str(session / "session.v4.jsonl"))
        follower.wait_for(lambda out: out == expected, "the first log")
        status, out, err = follower.interrupt()
    finally:
        follower.kill()
    assert (status, out) == (0, expected)
    assert note[0].decode() + err == f"dshctl: {session}: no log yet; waiting for dsh to write one\n"
