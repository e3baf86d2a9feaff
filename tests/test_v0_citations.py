"""v0 folding: an ``assistant/message`` embeds the pending attempt only when its ``sourceEventSeqs``
cite exactly that attempt's chunks (dsh's v1→v2 rule, FORMAT §2.6); every other citation leaves a
note, an ``assistant/attempt`` and the citation kept in ``chunkSeqs``.

The reader compares citations as seq runs without expanding them; the property below checks that
against the plain rule on expanded lists.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.model import decode_seq_ranges, encode_seq_ranges, seq_runs
from dshctl.reader import open_log

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}


def _log(tmp_path, citation, *, chunks: int = 4, omit: bool = False):
    """turn 1 step 1: ``chunks`` text deltas at seqs 2.. then a message citing ``citation``."""
    events = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 10, "data": {"turn": 1, "step": 1}},
    ]
    for i in range(chunks):
        chunk = {"type": "text-delta", "index": 0, "text": f"t{i}"}
        events.append({"type": "assistant/chunk", "seq": 2 + i, "time": 11 + i, "data": {"turn": 1, "step": 1, "chunk": chunk}})
    message = {
        "type": "assistant/message",
        "seq": 2 + chunks,
        "time": 20,
        "data": {"turn": 1, "step": 1, "message": {"id": "m", "role": "assistant", "content": [], "source": {"kind": "model"}}},
    }
    if not omit:
        message["sourceEventSeqs"] = citation
    events.append(message)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in [HEADER, *events]))
    return list(open_log(str(path)).events())


def _message(events):
    return next(e for e in events if e.type == "assistant/message")


def test_exact_citation_embeds_the_attempt(tmp_path):
    events = _log(tmp_path, [[2, 5]])
    message = _message(events)
    assert [e.type for e in events].count("assistant/attempt") == 0
    assert message.stream and message.chunkSeqs == [[2, 5]] and not message.notes
    assert message.sourceEventSeqs is None


def test_exact_citation_written_as_single_seqs_embeds_too(tmp_path):
    message = _message(_log(tmp_path, [2, 3, [4, 5]]))
    assert message.stream and message.chunkSeqs == [[2, 5]] and not message.notes


def test_citation_of_other_chunks_settles_an_attempt_and_is_kept(tmp_path):
    events = _log(tmp_path, [[2, 4]])
    message = _message(events)
    assert [e.type for e in events][-2:] == ["assistant/attempt", "assistant/message"]
    assert message.stream == [] and message.chunkSeqs == [[2, 4]]
    assert message.notes == ["sourceEventSeqs do not cite exactly the pending attempt's chunks (dsh's migration refuses this)"]


def test_unsorted_or_repeated_citation_is_kept_as_written(tmp_path):
    assert _message(_log(tmp_path, [5, 4, 3, 2])).chunkSeqs == [5, 4, 3, 2]
    assert _message(_log(tmp_path, [2, 2, [3, 5]])).chunkSeqs == [2, 2, 3, 4, 5]


def test_empty_citation_settles_the_attempt_without_a_note(tmp_path):
    events = _log(tmp_path, [])
    message = _message(events)
    assert "assistant/attempt" in [e.type for e in events]
    assert message.stream == [] and message.chunkSeqs == [] and not message.notes


def test_malformed_citation_is_noted_and_treated_as_absent(tmp_path):
    message = _message(_log(tmp_path, [[5, 2]]))
    assert message.notes[0] == "sourceEventSeqs is not a list of seqs and [start, end] pairs"
    assert message.stream  # no provenance: embedded, with the second note
    assert "no chunk provenance" in message.notes[1]


def test_missing_citation_embeds_with_a_note(tmp_path):
    message = _message(_log(tmp_path, None, omit=True))
    assert message.stream and message.notes == [
        "message has no chunk provenance while a same-step attempt is pending; embedded it (dsh's migration refuses this)"
    ]


def test_citation_without_a_pending_attempt(tmp_path):
    message = _message(_log(tmp_path, [0, 1], chunks=0))
    assert message.notes == ["sourceEventSeqs cite chunks but no attempt is pending (dsh's migration refuses this)"]
    assert message.chunkSeqs == [0, 1]


def test_citation_of_more_seqs_than_precede_the_message_is_malformed(tmp_path):
    # dsh's decodeSeqRanges refuses it; expanding it to keep it would allocate without bound
    message = _message(_log(tmp_path, [[2, 4]], chunks=0))
    assert message.notes[0] == "sourceEventSeqs is not a list of seqs and [start, end] pairs"
    assert message.chunkSeqs is None


seq_items = st.one_of(
    st.integers(0, 12),
    st.tuples(st.integers(0, 12), st.integers(0, 12)).map(list),
    st.booleans(),
)


@settings(max_examples=500)
@given(value=st.lists(seq_items, max_size=6), other=st.lists(st.integers(0, 12), max_size=10))
def test_runs_compare_like_expanded_lists(value, other):
    expanded = decode_seq_ranges(value, 1000)  # an own seq no value here reaches
    runs = seq_runs(value)
    assert (runs is None) == (expanded is None)
    if runs is None:
        return
    assert [s for a, b in runs for s in range(a, b + 1)] == expanded
    # runs of a strictly increasing list (the attempt's seqs) are equal exactly when the lists are
    attempt = sorted(set(other))
    attempt_runs = seq_runs(encode_seq_ranges(attempt))
    assert (runs == attempt_runs) == (expanded == attempt)
