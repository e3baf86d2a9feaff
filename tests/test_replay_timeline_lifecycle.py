"""A timeline's life (review items 21, 22): its marks are published only once their item can be read,
and ``close()`` lets it go — the log closed, the items' temporary file (in ``TMPDIR``) freed, a
background build ended."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from dshctl.reader import open_log
from dshctl.replay import store
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "tour.session.v4.jsonl"


class _Marks(list):
    """A mark list that checks, as each mark is published, that the item it points at is readable."""

    def __init__(self, timeline: Timeline, fragment=lambda mark: mark) -> None:
        super().__init__()
        self.timeline = timeline
        self.fragment = fragment

    def append(self, mark) -> None:
        fragment = self.fragment(mark)
        assert fragment < self.timeline.store.fragments, "a mark published before its item is stored"
        item, _ = self.timeline.locate(fragment)
        assert item.start == fragment
        super().append(mark)


def test_every_mark_points_at_an_item_already_stored():
    timeline = Timeline(open_log(str(SAMPLE)))
    timeline.turn_marks = _Marks(timeline, lambda mark: mark[0])
    timeline.tool_marks = _Marks(timeline)
    timeline.titles = _Marks(timeline, lambda mark: mark[0])
    timeline.ensure_all()
    assert len(timeline.turn_marks) == 4 and timeline.tool_marks and timeline.titles
    timeline.close()


def test_close_frees_the_temporary_file_in_tmpdir_and_closes_the_log(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RESIDENT_BYTES", 4096)
    monkeypatch.setattr(store, "CHUNK_BYTES", 2048)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as TMPDIR=tmp_path would
    timeline = Timeline(open_log(str(SAMPLE)))
    text = transcript(timeline)
    spill = timeline.store._spill
    assert timeline.store.spilled_bytes > 0 and spill is not None
    where = os.readlink(f"/proc/self/fd/{spill.fileno()}")
    assert where.startswith(str(tmp_path)) and where.endswith("(deleted)")  # unlinked: it goes with the process
    timeline.close()
    assert spill.closed and timeline.store._spill is None
    assert timeline.log.reader._file is None
    with Timeline(open_log(str(SAMPLE))) as again:
        assert transcript(again) == text
        kept = again.store
    assert kept._spill is None and again.log.reader._file is None


@pytest.mark.serial
def test_close_ends_a_background_build():
    timeline = Timeline(open_log(str(SAMPLE)))
    source = timeline._source
    started = threading.Event()

    def slowly():
        for entry in source:
            started.set()
            time.sleep(0.02)
            yield entry

    timeline._source = slowly()
    timeline.build_in_background()
    assert started.wait(5)
    began = time.monotonic()
    timeline.close()
    assert time.monotonic() - began < 1
    assert not timeline._thread.is_alive() and not timeline.complete
    assert timeline.store._spill is None


def test_a_closed_timeline_is_not_read_again():
    timeline = Timeline(open_log(str(SAMPLE)))
    timeline.ensure(3)
    timeline.close()
    timeline.ensure_all()  # nothing more is built: the log is closed
    assert len(timeline) == len(timeline.times) and not timeline.complete
    with pytest.raises(IndexError):
        timeline.times[len(timeline)]
