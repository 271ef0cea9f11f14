"""The room state machine: exactly the transitions of the table, nothing else."""

from __future__ import annotations

import itertools

import pytest

from server.rooms.lifecycle import LifecycleError, State, Trigger, next_state

ALLOWED = {
    (State.WAITING, Trigger.ALL_READY): State.COUNTDOWN,
    (State.WAITING, Trigger.CREATOR_START): State.COUNTDOWN,
    (State.COUNTDOWN, Trigger.CANCEL): State.WAITING,
    (State.COUNTDOWN, Trigger.COUNTDOWN_OVER): State.RACING,
    (State.RACING, Trigger.ALL_DONE): State.FINISHED,
    (State.RACING, Trigger.TIME_UP): State.FINISHED,
    (State.FINISHED, Trigger.REMATCH): State.WAITING,
}
FORBIDDEN = [pair for pair in itertools.product(State, Trigger) if pair not in ALLOWED]


@pytest.mark.parametrize(("state", "trigger"), list(ALLOWED), ids=lambda x: x.value)
def test_every_allowed_transition(state: State, trigger: Trigger) -> None:
    assert next_state(state, trigger) is ALLOWED[(state, trigger)]


@pytest.mark.parametrize(("state", "trigger"), FORBIDDEN, ids=lambda x: x.value)
def test_every_other_pair_is_refused(state: State, trigger: Trigger) -> None:
    with pytest.raises(LifecycleError, match=state.value):
        next_state(state, trigger)


def test_table_covers_every_pair() -> None:
    assert len(ALLOWED) + len(FORBIDDEN) == len(State) * len(Trigger)
    assert len(FORBIDDEN) == 21
