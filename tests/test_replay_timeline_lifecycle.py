"""A timeline's life (review item 22): its marks are published only once their item can be read."""

from __future__ import annotations

from pathlib import Path

from dshctl.reader import open_log
from dshctl.replay.timeline import Timeline

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
    timeline.log.close()
