"""Record-level stream readers against expand-then-scan, on dsh's conversation-fold shape.

The shape (FORMAT.md §4.5, Appendix B): 200 replies, each one stream of 8 records — raw block-start
(reasoning), a reasoning run of 500 deltas, raw block-end, raw block-start (text), a text run of 2,000
deltas, raw block-end, raw usage, raw finish — 500,000 deltas in 1,600 records. Each question is answered
for every reply, once by the record-level reader and once by expanding the stream into timed chunks
(``iter_members``) and folding over them, as a reader without the compact form would. Both run in the
same process, timed with ``time.perf_counter``, best of N.

Then first-token time and last usage are timed at 2,000 and at 8,000 text deltas per run, to show they
cost O(records): the time does not grow with the number of deltas.

Run: ``python benchmarks/stream_readers.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.assembler import BlockAssembler, assemble  # noqa: E402
from dshctl.stream import (  # noqa: E402
    Accumulator,
    first_token_time,
    is_token_delta,
    iter_members,
    joined_text,
    last_raw_chunk,
)

REPLIES = 200
REASONING_DELTAS = 500
TEXT_DELTAS = 2_000
START_TIME = 1_788_199_051_372


def reply_stream(reply: int, text_deltas: int = TEXT_DELTAS) -> list:
    """One reply packed by the accumulator from its timed chunks, as dsh's writer would."""
    accumulator = Accumulator()
    now = START_TIME + reply * 60_000
    push = accumulator.push
    push(now, {"type": "block-start", "index": 0, "blockType": "reasoning"})
    for k in range(REASONING_DELTAS):
        now += k % 3 == 0
        push(now, {"type": "reasoning-delta", "index": 0, "text": f" step{k}"})
    push(now, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "…"}})
    push(now, {"type": "block-start", "index": 1, "blockType": "text"})
    for k in range(text_deltas):
        now += k % 2
        push(now, {"type": "text-delta", "index": 1, "text": f" word{k}"})
    push(now, {"type": "block-end", "index": 1, "block": {"type": "text", "text": "…"}})
    push(now, {"type": "usage", "usage": {"inputTokens": 1200 + reply, "outputTokens": 2500}})
    push(now, {"type": "finish", "reason": {"kind": "stop"}})
    records = accumulator.records
    assert len(records) == 8
    return records


def conversation(text_deltas: int = TEXT_DELTAS) -> list[list]:
    return [reply_stream(reply, text_deltas) for reply in range(REPLIES)]


# ---------------------------------------------------------------------------------------------- expand-then-scan


def expanded_first_token_time(stream: list) -> int | None:
    for member_time, chunk in list(iter_members(stream)):
        if is_token_delta(chunk):
            return member_time
    return None


def expanded_last_usage(stream: list) -> dict | None:
    for _, chunk in reversed(list(iter_members(stream))):
        if chunk["type"] == "usage":
            return chunk
    return None


def expanded_joined_text(stream: list) -> str:
    return "".join(chunk["text"] for _, chunk in list(iter_members(stream)) if chunk["type"] == "text-delta")


def expanded_assembly(stream: list) -> BlockAssembler:
    assembler = BlockAssembler()
    for _, chunk in list(iter_members(stream)):
        assembler.push(chunk)
    return assembler


# ---------------------------------------------------------------------------------------------- timing


def best_of(repeats: int, fold: Callable[[list], object], replies: list[list]) -> tuple[float, list]:
    best = float("inf")
    results: list = []
    for _ in range(repeats):
        started = time.perf_counter()
        results = [fold(stream) for stream in replies]
        best = min(best, time.perf_counter() - started)
    return best, results


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f} ms"


def main() -> None:
    started = time.perf_counter()
    replies = conversation()
    built = time.perf_counter() - started
    deltas = REPLIES * (REASONING_DELTAS + TEXT_DELTAS)
    records = sum(len(stream) for stream in replies)
    print(f"conversation: {REPLIES} replies, {deltas:,} deltas in {records:,} records")
    print(f"packing with Accumulator.push: {built:.2f} s ({deltas / built / 1e6:.2f} M deltas/s)\n")

    pairs = [
        ("first_token_time", first_token_time, expanded_first_token_time),
        ("last usage", lambda stream: last_raw_chunk(stream, "usage"), expanded_last_usage),
        ("joined_text", joined_text, expanded_joined_text),
        ("assembly", lambda stream: assemble(stream).blocks(), lambda stream: expanded_assembly(stream).blocks()),
    ]
    print(f"{'reader (all 200 replies)':<26}{'records':>13}{'expand':>15}{'ratio':>11}")
    for label, reader, expanded in pairs:
        record_time, record_results = best_of(30, reader, replies)
        expand_time, expand_results = best_of(3, expanded, replies)
        assert record_results == expand_results, label
        print(f"{label:<26}{milliseconds(record_time):>13}{milliseconds(expand_time):>15}{expand_time / record_time:>10.0f}x")

    print("\nO(records): same 1,600 records, more deltas per text run")
    small, large = conversation(2_000), conversation(8_000)
    for label, reader in (("first_token_time", first_token_time), ("last usage", lambda s: last_raw_chunk(s, "usage"))):
        small_time, _ = best_of(50, reader, small)
        large_time, _ = best_of(50, reader, large)
        print(
            f"{label:<18} 2,000 deltas/run {milliseconds(small_time)}   8,000 deltas/run {milliseconds(large_time)}"
            f"   growth {large_time / small_time:.2f}x for 4x the deltas"
        )
    print(f"\ntotal {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
