"""Numbers and times as people read them (dshctl.humanize): one duration function, named styles."""

from __future__ import annotations

import pytest

from dshctl.humanize import DURATION_STYLES, format_clock, format_duration, format_ms


@pytest.mark.parametrize(
    "ms, compact, fine, clock",
    [
        (0, "0s", "0ms", "0 ms"),
        (3.5, "0s", "3.5ms", None),
        (850, "0.9s", "850ms", "850 ms"),
        (2250, "2.3s", "2.3s", "2.2 s"),  # dsh rounds halves up; the clock style formats as Python does
        (45_200, "45.2s", "45.2s", "45.2 s"),
        (162_000, "2m42s", "2m42s", "02:42"),
        (5_430_000, "1h31m", "1h31m", "1:30:30"),
        (86_370_000, "1d0h", "1d0h", "23:59:30"),
        (90_000_000 - 60_000, "1d1h", "1d1h", "24:59:00"),
    ],
)
def test_each_style(ms, compact, fine, clock):
    assert format_duration(ms) == format_duration(ms, "compact") == compact
    assert format_duration(ms, "fine") == fine
    if clock is not None:
        assert format_duration(int(ms), "clock") == clock


def test_no_figure_and_unknown_styles():
    assert format_duration(None) == format_duration(None, "fine") == "—"
    with pytest.raises(ValueError, match="one of compact, fine, clock"):
        format_duration(1000, "long")
    assert DURATION_STYLES == ("compact", "fine", "clock")


def test_the_clock():
    assert format_clock(62_500) == "01:02.500" and format_clock(3_723_004) == "1:02:03.004"
    assert format_clock(-1500) == "-00:01.500" and format_clock(62_500, millis=False) == "01:02"


def test_format_ms_is_the_fine_style():
    for ms in (None, 0, 3.5, 850, 45_200, 90_000_000):
        assert format_ms(ms) == format_duration(ms, "fine")
