"""Grow a dsh log the way dsh writes one, for the ``--follow`` tests.

dsh publishes the header and the first batch together (FORMAT §1.5), then appends one durable batch at a
time: a block of LF-terminated lines (raw), or one zstd frame per batch (zstd). :func:`batches` cuts a
finished log into such batches (a zstd log keeps its own frames); :class:`Grower` writes them to a new
file in a thread, a random number at a time, sometimes leaving a batch half-written for a moment, and
pausing once half-way so a test can look at what was printed by then.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import zstandard


def zstd_frames(data: bytes) -> list[bytes]:
    """The frames of a concatenation of complete zstd frames, each as its bytes."""
    frames = []
    while data:
        decoder = zstandard.ZstdDecompressor().decompressobj()
        decoder.decompress(data)
        rest = decoder.unused_data
        frames.append(data[: len(data) - len(rest)])
        data = rest
    return frames


def batches(log: Path, rng: random.Random) -> list[bytes]:
    """A finished log cut into the durable batches dsh would have appended: its frames for zstd, runs of
    one to five lines for raw. The first batch is the header with the first events (dsh's first write)."""
    data = log.read_bytes()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        frames = zstd_frames(data)
        return [frames[0] + frames[1]] + frames[2:] if len(frames) > 1 else frames
    lines = data.splitlines(keepends=True)
    out = [b"".join(lines[:2])]
    at = 2
    while at < len(lines):
        size = rng.randint(1, 5)
        out.append(b"".join(lines[at : at + size]))
        at += size
    return out


class Grower(threading.Thread):
    """Writes ``parts`` to ``path``: the first at once (before :meth:`start` returns, as dsh publishes the
    file whole), then the rest with short random gaps; a batch is sometimes written in two halves with a
    pause between (a reader must not take the first half as damage). After ``pause_after`` batches it
    sets :attr:`paused` and waits for :meth:`resume`."""

    def __init__(self, path: Path, parts: list[bytes], *, seed: int = 0, pause_after: int | None = None, gap: float = 0.02):
        super().__init__(daemon=True)
        self.path = path
        self.parts = parts
        self.rng = random.Random(seed)
        self.pause_after = pause_after
        self.gap = gap
        self.paused = threading.Event()
        self._resume = threading.Event()
        self.done = threading.Event()
        self.written = 0  # batches fully written
        self.error: BaseException | None = None
        path.write_bytes(parts[0])
        self.written = 1

    def resume(self) -> None:
        self._resume.set()

    def run(self) -> None:
        try:
            with open(self.path, "ab") as out:
                for index, part in enumerate(self.parts[1:], start=1):
                    if self.pause_after is not None and index == self.pause_after:
                        self.paused.set()
                        self._resume.wait(30)
                    self._write(out, part)
                    self.written = index + 1
                    time.sleep(self.rng.uniform(0, self.gap))
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.done.set()

    def _write(self, out, part: bytes) -> None:
        if len(part) > 1 and self.rng.random() < 0.3:
            cut = self.rng.randint(1, len(part) - 1)
            out.write(part[:cut])
            out.flush()
            os.fsync(out.fileno())
            time.sleep(self.rng.uniform(0.05, 0.25))  # caught half-written
            part = part[cut:]
        out.write(part)
        out.flush()
        os.fsync(out.fileno())
