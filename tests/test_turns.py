"""The one rule that places an event in its turn and step (dshctl.turns.Position)."""

from dshctl.model import Event
from dshctl.turns import Position


def _event(kind: str, **data) -> Event:
    return Event(type=kind, seq=0, time=None, data=data, line=1)


def _places(*events: Event) -> list[tuple[int | None, int | None]]:
    position = Position()
    return [position.place(event) for event in events]


def test_a_sound_turn_places_every_event_in_its_turn_and_step():
    assert _places(
        _event("user/message"),
        _event("turn/start", turn=1),
        _event("step/start", turn=1, step=1),
        _event("assistant/message"),
        _event("step/end", turn=1, step=1),
        _event("tool/result"),
        _event("step/start", turn=1, step=2),
        _event("turn/end", turn=1),
        _event("session/title"),
    ) == [(None, None), (1, None), (1, 1), (1, 1), (1, 1), (1, 1), (1, 2), (1, 2), (None, None)]


def test_an_events_own_turn_and_step_win_over_the_open_ones():
    assert _places(
        _event("turn/start", turn=1),
        _event("step/start", turn=1, step=1),
        _event("tool/call", turn=1, step=7),
        _event("assistant/message"),
    ) == [(1, None), (1, 1), (1, 7), (1, 1)]


def test_a_damaged_step_start_does_not_move_the_open_turn():
    position = Position()
    position.place(_event("turn/start", turn=3))
    assert position.place(_event("step/start", turn=2, step=1)) == (2, 1)
    assert position.place(_event("assistant/message")) == (3, 1)


def test_a_step_start_outside_any_turn_names_the_turn():
    assert _places(_event("step/start", turn=4, step=1), _event("assistant/message")) == [(4, 1), (4, 1)]


def test_turn_end_closes_everything_after_itself():
    position = Position()
    position.place(_event("turn/start", turn=1))
    position.place(_event("step/start", step=1))
    assert position.place(_event("turn/end")) == (1, 1)
    assert (position.turn, position.step) == (None, None)


def test_turn_and_step_fields_that_are_not_integers_are_ignored():
    assert _places(_event("turn/start", turn="1"), _event("step/start", step=True)) == [(None, None), (None, None)]
