"""Where a timeline keeps its items: a compact index in memory, the items themselves in bounded memory.

The index holds, per item, the position of its first fragment and the axis times of its first and last
fragments (three ``array('q')`` columns, 24 bytes an item), so locating a fragment, seeking to a time and
counting fragments never touch an item. The items — their text, info and per-fragment times — are kept
in **chunks** of a few hundred kilobytes: the newest chunks in memory; once the chunks in memory pass
:data:`RESIDENT_BYTES`, the oldest are compressed (zstd) into an unlinked temporary file (it vanishes
with the process, whatever ends it) and read back by offset when a position needs them, a few at a time
(:data:`CACHED_CHUNKS`). A 1 GB log so stays within a few hundred megabytes at any position. The file is
where :mod:`tempfile` puts it (``TMPDIR``; on a tmpfs that is memory too, as the man page says) and grows
with the log, unbounded but compressed; :meth:`ItemStore.close` (through ``Timeline.close``) frees it.

One thread adds items (:meth:`ItemStore.add`: the builder, in the background or not), any thread reads
them; an item is readable once :attr:`ItemStore.count` covers it.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict

RESIDENT_BYTES = 48 * 1024 * 1024
"""Items kept in memory (estimated), newest first, before older chunks go to the spill file."""
CHUNK_BYTES = 256 * 1024
"""A chunk closes once its items hold this much (estimated)."""
CHUNK_ITEMS = 2048
CACHED_CHUNKS = 8
"""Chunks read back from the spill file kept decoded."""


class _Chunk:
    __slots__ = ("first", "fragment", "items", "times", "spilled", "size")

    def __init__(self, first: int, fragment: int) -> None:
        self.first = first  # index of its first item
        self.fragment = fragment  # position of its first fragment
        self.items: list | None = []
        self.times = array("q")  # every fragment of its items
        self.spilled: tuple[int, int] | None = None  # (offset, length) in the spill file
        self.size = 0


def _estimate(item) -> int:
    """Bytes an item holds, roughly: its text and a fixed overhead (enough to bound memory, not to count it)."""
    size = 200
    if item.fragments is not None:
        size += 60 * len(item.fragments) + sum(map(len, item.fragments))
    elif item.text is not None:
        size += len(item.text)
    info = item.info
    if info:
        lines = info.get("lines")
        if isinstance(lines, list):
            size += 60 * len(lines) + sum(len(line) for line in lines if isinstance(line, str))
        for value in info.values():
            if isinstance(value, str):
                size += len(value)
    if item.region is not None:
        size += sum(_estimate(part) for part in item.region.parts)
    return size


class ItemStore:
    """The items of one timeline and their index (see the module doc)."""

    def __init__(self, resident_bytes: int | None = None) -> None:
        self.starts = array("q")
        """Position of each item's first fragment."""
        self.first_times = array("q")
        self.last_times = array("q")
        self.count = 0
        """Items readable (every column and chunk holds them)."""
        self.fragments = 0
        self._chunks: list[_Chunk] = []
        self._chunk_firsts = array("q")
        self._chunk_fragments = array("q")
        self._resident: list[_Chunk] = []  # closed chunks still in memory, oldest first
        self._resident_size = 0
        self._budget: int | None = RESIDENT_BYTES if resident_bytes is None else resident_bytes
        self._spill = None
        self._spill_end = 0
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # the decoded-chunk cache, shared by readers

    def __len__(self) -> int:
        return self.count

    # -- adding (one thread) --------------------------------------------------

    def add(self, item, times) -> None:
        chunks = self._chunks
        chunk = chunks[-1] if chunks else None
        if chunk is None or chunk.size >= CHUNK_BYTES or len(chunk.items) >= CHUNK_ITEMS:
            if chunk is not None:
                self._close(chunk)
            chunk = _Chunk(self.count, self.fragments)
            chunks.append(chunk)
            self._chunk_firsts.append(chunk.first)
            self._chunk_fragments.append(chunk.fragment)
        chunk.items.append(item)
        chunk.times.extend(times)
        chunk.size += _estimate(item)
        self.starts.append(self.fragments)
        self.first_times.append(times[0])
        self.last_times.append(times[-1])
        self.count += 1
        self.fragments += len(times)  # last: a reader sees a fragment only once its item is in place

    def _close(self, chunk: _Chunk) -> None:
        self._resident.append(chunk)
        self._resident_size += chunk.size
        while self._budget is not None and self._resident_size > self._budget and len(self._resident) > 1:
            oldest = self._resident[0]
            try:
                self._spill_chunk(oldest)
            except OSError:  # no room for a temporary file: keep the items in memory rather than fail
                self._budget = None
                return
            self._resident.pop(0)
            self._resident_size -= oldest.size

    def _spill_chunk(self, chunk: _Chunk) -> None:
        import zstandard

        data = zstandard.ZstdCompressor(level=1).compress(pickle.dumps((chunk.items, chunk.times), pickle.HIGHEST_PROTOCOL))
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="dshctl-replay-")
        written = os.pwrite(self._spill.fileno(), data, self._spill_end)
        if written != len(data):
            raise OSError("short write to the replay's temporary file")
        chunk.spilled = (self._spill_end, len(data))
        self._spill_end += len(data)
        chunk.items = None  # after ``spilled``: a reader that finds no items finds where they went
        chunk.times = None

    # -- reading (any thread) -------------------------------------------------

    def _contents(self, chunk: _Chunk) -> tuple[list, array]:
        items, times = chunk.items, chunk.times
        if items is not None and times is not None:
            return items, times
        with self._lock:
            cached = self._cache.get(chunk.first)
            if cached is not None:
                self._cache.move_to_end(chunk.first)
                return cached
            import zstandard

            offset, length = chunk.spilled
            data = os.pread(self._spill.fileno(), length, offset)
            cached = pickle.loads(zstandard.ZstdDecompressor().decompress(data))
            self._cache[chunk.first] = cached
            while len(self._cache) > CACHED_CHUNKS:
                self._cache.popitem(last=False)
            return cached

    def item(self, index: int):
        """Item ``index`` (``0 <= index < count``)."""
        chunk = self._chunks[bisect_right(self._chunk_firsts, index) - 1]
        items, _ = self._contents(chunk)
        return items[index - chunk.first]

    def time(self, fragment: int) -> int:
        """The axis time of fragment ``fragment``."""
        chunk = self._chunks[bisect_right(self._chunk_fragments, fragment) - 1]
        _, times = self._contents(chunk)
        return times[fragment - chunk.fragment]

    def times_from(self, fragment: int, stop: int):
        """The times of fragments ``fragment`` … ``stop - 1``, chunk by chunk (arrays)."""
        while fragment < stop:
            number = bisect_right(self._chunk_fragments, fragment) - 1
            chunk = self._chunks[number]
            _, times = self._contents(chunk)
            end = min(stop, chunk.fragment + len(times))
            if end <= fragment:
                return
            yield times[fragment - chunk.fragment : end - chunk.fragment]
            fragment = end

    def locate(self, fragment: int) -> int:
        """Index of the item holding fragment ``fragment``."""
        return bisect_right(self.starts, fragment, 0, self.count) - 1

    @property
    def spilled_bytes(self) -> int:
        return self._spill_end

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None
