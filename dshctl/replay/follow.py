"""``dshctl replay --follow``: the session as dsh writes it.

The timeline is the one ``replay`` builds (:class:`~dshctl.replay.timeline.Timeline`), over a log read by
:mod:`dshctl.follow`: it grows as events become final. A v2+ step appears when it settles (its message
or attempt holds the stream); a v0 log's chunks are folded the same way, so in the transcript its text
appears when the step's settlement lands (the live view previews it as it streams).

* To a pipe (or with ``--instant``, or without a terminal to read keys from): the transcript, each
  piece written as soon as it is built and flushed whenever the reader has caught up with the log.
* On a terminal: the live player (:mod:`dshctl.replay.live`).
"""

from __future__ import annotations

import sys


def run_replay_follow(path: str, filters, start_of, *, live: bool, speed: float, idle_limit: float, color: bool, timestamps: bool) -> int:
    """``start_of(timeline)``: the fragment output starts at (``--turn``, ``--from``)."""
    from ..follow import Follower

    if live:
        from .live import play_live

        return play_live(path, filters, speed=speed, idle_limit=idle_limit, color=color)
    from .wrap import transcript_width

    follower = Follower(path)
    out = sys.stdout
    width = transcript_width()
    follower.on_idle = out.flush
    ansi = color

    def consume(log) -> None:
        from .timeline import Timeline
        from .transcript import iter_chunks

        with Timeline(log, filters) as timeline:
            start = start_of(timeline)
            for text in iter_chunks(timeline, start, color=ansi, timestamps=timestamps, width=width):
                out.write(text)

    return follower.run(consume)

