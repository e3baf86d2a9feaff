"""``dshctl replay``: play a dsh session in the terminal as it streamed.

Pure timelines, thin drivers:

* :mod:`.timeline` — the data model: every visible fragment (streamed delta, tool-call name, user
  message, tool result, turn boundary …) at its recorded time, built lazily from the normalized events;
  items say what they mean, not how they look;
* :mod:`.view` — how an item looks: glyphs, frames, wording and style names, for every output;
* :mod:`.transform` — idle limit and speed as transformations of the fragment times; option parsers;
* :mod:`.render` — the screen at a position, a pure function of (timeline, position, width, height);
* :mod:`.player` — position, pause, speed, stepping, seeking, search: state without I/O;
* :mod:`.transcript` — the transcript (non-TTY output, ``--instant``);
* :mod:`.export` — asciicast v2/v3, markdown, NDJSON;
* :mod:`.terminal` — the interactive driver (rich draws, prompt_toolkit reads keys) and the timed
  no-keys stream.

Which mode runs:

* ``--export FILE`` — write the file (``.cast``, ``.md``, ``.ndjson``, ``.html``: :mod:`.html`) and exit;
* standard output is not a terminal, or ``--instant`` — print the transcript without waiting;
* standard input and output are terminals — interactive player;
* only standard output is a terminal (the log came from a pipe, stdin redirected) — print the
  transcript with the recorded timing, no keys; Ctrl-C stops it.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from ..errors import EXIT_FINDINGS, UsageError
from ..options import ReplayOptions, chosen_log
from ..stdio import is_terminal


def _refuse_the_log_itself(export: Path, log) -> None:
    """An export may end in .jsonl, so it can name the log itself: dshctl never writes to a log it
    reads, not even with --force."""
    try:
        same = log.ref.path is not None and os.path.samefile(export, log.ref.path)
    except OSError:  # the export does not exist yet
        same = False
    if same:
        raise UsageError(f"--export {export} is the log being replayed; dshctl never writes to a log it reads")


def run_replay(path: str | None, options: ReplayOptions) -> int:
    """Replay the log at ``path`` (or ``--latest``) in the mode the options and the terminal choose;
    returns the exit status (1 when ``--salvage`` read past damage)."""
    from ..stdio import warn
    from ..reader import open_log
    from .timeline import Timeline

    path = chosen_log(path, options)
    color, export = options.colored, options.export
    interactive = export is None and not options.instant and is_terminal()
    if options.follow:
        from .follow import run_replay_follow

        live = interactive and _stdin_is_terminal()
        if live and (options.turn is not None or options.from_ms is not None):
            raise UsageError("--turn and --from apply to replay --follow into a pipe; the live view starts at the live edge")
        status = run_replay_follow(
            path, options.filters, partial(start_position, options=options), live=live, speed=options.speed,
            idle_limit=options.idle_limit, color=color, timestamps=options.timestamps,
        )
        if live:
            _exit_now(status)
        return status
    held: list[str] = []  # a warning written under the player would be drawn over: it waits until the end
    played = False
    timeline = None
    with ExitStack() as reading:
        if not interactive:  # the player shows where it is itself; an export or a transcript may take a while
            from ..many import reading_path

            streams = export is None or options.to_stdout
            reading.enter_context(reading_path("replay", path, allowed=options.progress, streams=streams, color=options.color_when))
        log = open_log(path, on_warning=held.append if interactive else warn, salvage=options.salvage)
        try:
            timeline = Timeline(_read_for(log, options), options.filters)
            start = start_position(timeline, options)
            _refuse_nothing_to_show(timeline, options.turns)
            if export is not None:
                status = _export(timeline, Path(export), start=start, options=options)
            elif not interactive:
                from .transcript import write_transcript

                from .wrap import transcript_width

                write_transcript(timeline, sys.stdout, start, color=color, timestamps=options.timestamps, width=transcript_width())
                status = 0
            else:
                played = _stdin_is_terminal()
                status = _play(timeline, start, speed=options.speed, idle_limit=options.idle_limit, color=color, timestamps=options.timestamps)
            status = status or (EXIT_FINDINGS if log.gaps else 0)
        finally:
            for text in held:
                warn(text)
            if timeline is None or played:  # after the player the process ends at once (_exit_now)
                log.close()
            else:
                timeline.close()
    if played:
        _exit_now(status)
    return status


def _exit_now(status: int) -> None:
    """End the process once the interactive player is done: its output is flushed and the terminal
    restored, and freeing a large timeline object by object (hundreds of milliseconds for a big log)
    would only delay the shell's prompt after ``q``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def _stdin_is_terminal() -> bool:
    from .terminal import stdin_is_terminal

    return stdin_is_terminal()


def _refuse_nothing_to_show(timeline, turns: str | None) -> None:
    """``--turns`` that keeps no turn of the log is an error, as ``--turn`` past the last one is."""
    if turns is None:
        return
    while not timeline.turn_marks and timeline.extend():
        pass
    if not timeline.turn_marks:
        raise UsageError(f"--turns {turns}: the log has no turn in that range")


def start_position(timeline, options: ReplayOptions) -> int:
    """Where output starts: at the header of ``--turn``, at the first fragment at or after ``--from``, or at 0.
    A start past the end of the log is an error."""
    turn, from_ms = options.turn, options.from_ms
    if turn is not None:
        found = timeline.ensure_turn(turn)
        if found is None:
            last = timeline.max_turn
            raise UsageError(f"--turn {turn}: the log has no turn {turn}" + (f" (last turn: {last})" if last else " (no turns)"))
        return found
    if from_ms is not None:
        found = timeline.first_at_or_after(from_ms)
        if found >= len(timeline) and from_ms > 0:
            length = timeline.clock_ms(len(timeline)) / 1000
            raise UsageError(f"--from {options.from_}: past the end of the log (it lasts {length:.1f} s)")
        return found
    return 0


def _export(timeline, export: Path, *, start: int, options: ReplayOptions) -> int:
    """``--export FILE``: write the file (never the log being read) and say what was written."""
    from ..stdio import note

    written = export_file(timeline, export, start=start, options=options)
    if not options.to_stdout and not options.quiet:
        note(written)
    return 0


def export_file(timeline, export: Path, *, start: int, options: ReplayOptions) -> str:
    """Write ``timeline`` from ``start`` to ``export`` as ``options`` say (never the log being read);
    returns what was written, in a line."""
    from ..stdio import warn
    from .export import DEFAULT_COLS, DEFAULT_ROWS
    from .export import export as write_export

    to_stdout = str(export) == "-"
    if not to_stdout:
        _refuse_the_log_itself(export, timeline.log)
    return write_export(
        timeline,
        None if to_stdout else export,
        start=start,
        cast_version=options.cast_version,
        cols=options.cols or DEFAULT_COLS,
        rows=options.rows or DEFAULT_ROWS,
        idle_limit=options.idle_limit,
        color=options.colored_file,
        force=options.force,
        speed=options.speed,
        html_options=_html_options(options),
        on_note=lambda text: warn(f"{timeline.log.display}: {text}"),
        form=options.export_format,
    )


def _html_options(options: ReplayOptions):
    """What only the HTML export takes (:class:`.html.HtmlOptions`), or None when nothing was asked."""
    if not (options.embed_images or options.store is not None or options.prices is not None or options.no_cost):
        return None
    from .html import HtmlOptions

    return HtmlOptions(embed_images=options.embed_images, store=options.store, prices=options.prices, no_cost=options.no_cost)


def _read_for(log, options: ReplayOptions):
    """The log to build the timeline from: for an HTML page, one whose events also feed dsh's stats
    fold, so the page's per-turn figures come from the same read (:class:`.html.FiguresLog`)."""
    if options.export_format != "html":
        return log
    from ..stdio import warn
    from .html import FiguresLog

    return FiguresLog(log, _html_options(options), on_note=lambda text: warn(f"{log.display}: {text}"))


def _play(timeline, start: int, *, speed: float, idle_limit: float, color: bool, timestamps: bool) -> int:
    """Standard output is a terminal: the interactive player when standard input is one too, else the
    transcript at the recorded pace (Ctrl-C stops it, exit status 130)."""
    from .terminal import play_interactive, play_stream, stdin_is_terminal

    if not stdin_is_terminal():
        try:
            return play_stream(timeline, start, speed=speed, idle_limit=idle_limit, color=color, timestamps=timestamps)
        except KeyboardInterrupt:
            sys.stdout.write("\x1b[0m\n")
            sys.stdout.flush()
            from ..interrupt import interrupted_status

            return interrupted_status()

    import time

    from .player import Player

    player = Player(timeline, idle_limit=idle_limit, speed=speed, position=start, now=time.monotonic())
    return play_interactive(timeline, player, color=color)
