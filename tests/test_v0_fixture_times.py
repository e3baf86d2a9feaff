"""A v0 log in dsh's test-fixture form carries no event times: nothing folded from it may invent one."""

import json

from dshctl.reader import open_log

HEADER = {"type": "session", "version": 0, "id": "fx", "createdAt": 1783352165190, "cwd": "/x", "delegationDepth": 0}
ROWS = [
    {"type": "turn/start", "data": {"turn": 1}},
    {"type": "step/start", "data": {"turn": 1, "step": 1}},
    {"type": "text-chunks", "data": {"turn": 1, "step": 1, "index": 0, "dt": [5, 7], "texts": ["a", "b", "c"]}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}},
]


def test_an_unsettled_attempt_of_a_fixture_log_has_no_time(tmp_path):
    path = tmp_path / "fx.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [HEADER, *ROWS]))
    with open_log(path) as log:
        events = list(log.events())
    attempt = next(e for e in events if e.type == "assistant/attempt")
    # the packed row's member times sum to 12, a duration, not a moment; dsh's fixture has no time
    assert attempt.time is None
    assert all(e.time is None for e in events)
