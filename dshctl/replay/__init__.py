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

* ``--export FILE`` — write the file (``.cast``, ``.md``, ``.ndjson``) and exit;
* standard output is not a terminal, or ``--instant`` — print the transcript without waiting;
* standard input and output are terminals — interactive player;
* only standard output is a terminal (the log came from a pipe, stdin redirected) — print the
  transcript with the recorded timing, no keys; Ctrl-C stops it.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

from ..errors import EXIT_FINDINGS, UsageError
from ..output import is_terminal

EXPORT_SUFFIXES = (".cast", ".md", ".markdown", ".ndjson", ".jsonl")


def _refuse_the_log_itself(export: Path, log) -> None:
    """An export may end in .jsonl, so it can name the log itself: dshctl never writes to a log it
    reads, not even with --force."""
    try:
        same = log.ref.path is not None and os.path.samefile(export, log.ref.path)
    except OSError:  # the export does not exist yet
        same = False
    if same:
        raise UsageError(f"--export {export} is the log being replayed; dshctl never writes to a log it reads")


def run_replay(
    path: str,
    *,
    speed: float = 1.0,
    idle_limit: float = 2.0,
    turn: int | None = None,
    from_time: str | None = None,
    turns: str | None = None,
    no_reasoning: bool = False,
    no_tools: bool = False,
    instant: bool = False,
    timestamps: bool = False,
    export: Path | None = None,
    force: bool = False,
    cast_version: int = 2,
    cols: int | None = None,
    rows: int | None = None,
    salvage: bool = False,
    color: bool = True,
    follow: bool = False,
) -> int:
    """Replay the log at ``path`` in the mode the options and the terminal choose; returns the exit status
    (1 when ``salvage`` read past damage)."""
    from ..output import warn
    from ..reader import open_log
    from .timeline import Timeline

    from_ms, filters = _check_options(
        speed=speed,
        idle_limit=idle_limit,
        turn=turn,
        from_time=from_time,
        turns=turns,
        no_reasoning=no_reasoning,
        no_tools=no_tools,
        export=export,
        force=force,
        cast_version=cast_version,
        cols=cols,
        rows=rows,
    )
    interactive = export is None and not instant and is_terminal()
    if follow:
        from .follow import run_replay_follow

        if export is not None:
            raise UsageError("--follow shows the session as it is written; --export writes a finished one")
        if salvage:
            raise UsageError("--salvage reads past damage in a finished log; it does not apply to --follow")
        live = interactive and _stdin_is_terminal()
        if live and (turn is not None or from_ms is not None):
            raise UsageError("--turn and --from apply to replay --follow into a pipe; the live view starts at the live edge")
        start_of = partial(_start_position, turn=turn, from_ms=from_ms, from_time=from_time)
        status = run_replay_follow(
            path, filters, start_of, live=live, speed=speed, idle_limit=idle_limit, color=color, timestamps=timestamps
        )
        if live:
            _exit_now(status)
        return status
    held: list[str] = []  # a warning written under the player would be drawn over: it waits until the end
    log = open_log(path, on_warning=held.append if interactive else warn, salvage=salvage)
    played = False
    try:
        timeline = Timeline(log, filters)
        start = _start_position(timeline, turn, from_ms, from_time)
        _refuse_nothing_to_show(timeline, turns)
        if export is not None:
            status = _export(timeline, Path(export), start=start, force=force, cast_version=cast_version, cols=cols, rows=rows, idle_limit=idle_limit, color=color)
        elif not interactive:
            from .transcript import write_transcript

            write_transcript(timeline, sys.stdout, start, color=color and is_terminal(), timestamps=timestamps)
            status = 0
        else:
            played = _stdin_is_terminal()
            status = _play(timeline, start, speed=speed, idle_limit=idle_limit, color=color, timestamps=timestamps)
        status = status or (EXIT_FINDINGS if log.gaps else 0)
    finally:
        for text in held:
            warn(text)
        log.close()
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


def _check_options(
    *,
    speed: float,
    idle_limit: float,
    turn: int | None,
    from_time: str | None,
    turns: str | None,
    no_reasoning: bool,
    no_tools: bool,
    export: Path | None,
    force: bool,
    cast_version: int,
    cols: int | None,
    rows: int | None,
):
    """Refuse option values and combinations that make no sense (UsageError); returns the ``--from``
    offset in ms (or None) and the filters."""
    from .player import MAX_SPEED, MIN_SPEED
    from .transform import make_filters, parse_from_time

    if not MIN_SPEED <= speed <= MAX_SPEED:  # NaN fails too
        raise UsageError(f"--speed must be between 1/64 ({MIN_SPEED}) and {MAX_SPEED:g}, the player's range; got {speed:g}")
    if not idle_limit >= 0 or idle_limit == float("inf"):
        raise UsageError(f"--idle-limit must be 0 (no cap) or a positive number of seconds, got {idle_limit}")
    if turn is not None and from_time is not None:
        raise UsageError("--turn and --from both choose where to start; use one")
    if turn is not None and turn < 1:
        raise UsageError(f"--turn {turn}: turns are numbered from 1")
    if cast_version not in (2, 3):
        raise UsageError(f"--cast-version must be 2 or 3, got {cast_version}")
    for name, value in (("--cols", cols), ("--rows", rows)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be a positive number")
    if export is not None and Path(export).suffix.lower() not in EXPORT_SUFFIXES:
        raise UsageError(f"--export {export}: the file name must end in .cast, .md or .ndjson")
    if force and export is None:
        raise UsageError("--force only applies with --export FILE")
    from_ms = parse_from_time(from_time) if from_time is not None else None
    filters = make_filters(no_reasoning=no_reasoning, no_tools=no_tools, turns=turns)
    if turn is not None and not filters.keeps_turn(turn):
        raise UsageError(f"--turn {turn} is outside --turns {turns}")
    return from_ms, filters


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


def _start_position(timeline, turn: int | None, from_ms: int | None, from_time: str | None = None) -> int:
    """Where output starts: at the header of ``--turn``, at the first fragment at or after ``--from``, or at 0.
    A start past the end of the log is an error."""
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
            raise UsageError(f"--from {from_time}: past the end of the log (it lasts {length:.1f} s)")
        return found
    return 0


def _export(timeline, export: Path, *, start: int, force: bool, cast_version: int, cols: int | None, rows: int | None, idle_limit: float, color: bool) -> int:
    """``--export FILE``: write the file (never the log being read) and say what was written."""
    from ..output import note
    from .export import DEFAULT_COLS, DEFAULT_ROWS
    from .export import export as write_export

    _refuse_the_log_itself(export, timeline.log)
    summary = write_export(
        timeline,
        export,
        start=start,
        cast_version=cast_version,
        cols=cols or DEFAULT_COLS,
        rows=rows or DEFAULT_ROWS,
        idle_limit=idle_limit,
        color=color,
        force=force,
    )
    note(summary)
    return 0


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
