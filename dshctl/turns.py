"""Where an event sits in the conversation: its turn and step.

Readers that label events (images, the replay timeline, grep) ask the same question — which turn and
step is this? — and answer it with one rule:

* ``turn/start`` opens its turn with no step yet; ``step/start`` opens its step (and names the turn only
  when none is open: a damaged step/start does not move the turn the user saw start);
* an event's own ``turn`` / ``step`` fields win over the open ones (``tool/call`` and settlements carry
  them);
* after ``turn/end`` nothing is open.

The stats fold and validation's relationship checks keep their own bookkeeping on purpose: the fold
keys records by (turn, step) and counts the way dsh's ``sessionStats`` counts, and validation checks
the order of these events rather than assuming it. This tracker only places events.
"""

from __future__ import annotations

from dshctl.model import Event


class Position:
    """The open turn and step while a log is read in order; ``place`` each event once, in order."""

    __slots__ = ("turn", "step")

    def __init__(self) -> None:
        self.turn: int | None = None
        self.step: int | None = None

    def place(self, event: Event) -> tuple[int | None, int | None]:
        """The (turn, step) of ``event``, updating the open turn/step for the events after it."""
        kind = event.type
        own_turn = event.turn
        if kind == "turn/start":
            self.turn, self.step = own_turn, None
        elif kind == "step/start":
            if self.turn is None:
                self.turn = own_turn
            self.step = event.step
        own_step = event.step
        placed = (
            own_turn if own_turn is not None else self.turn,
            own_step if own_step is not None else self.step,
        )
        if kind == "turn/end":
            self.turn = self.step = None
        return placed
