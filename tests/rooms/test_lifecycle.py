"""The room state machine: exactly the transitions of the table, nothing else."""

from __future__ import annotations

import itertools

import pytest

from server.rooms.errors import CommandRefused
from server.rooms.lifecycle import COMMANDS, Act, LifecycleError, State, Trigger, check_command, next_state

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


# -- the command table ------------------------------------------------------------------


def test_the_command_table_says_something_for_every_state_and_act() -> None:
    for state in State:
        assert set(COMMANDS[state]) == set(Act), state


@pytest.mark.parametrize(("state", "act"), list(itertools.product(State, Act)), ids=str)
def test_a_command_the_table_refuses_is_refused_with_the_table_s_code(state: State, act: Act) -> None:
    code = COMMANDS[state][act]
    if code is None:
        check_command(state, act)
        return
    with pytest.raises(CommandRefused) as refused:
        check_command(state, act)
    assert refused.value.code is code
    assert state.value in str(refused.value)


def test_moves_are_taken_only_while_racing_and_rematches_only_when_finished() -> None:
    taking_moves = {state for state in State if COMMANDS[state][Act.MOVE] is None}
    taking_rematches = {state for state in State if COMMANDS[state][Act.REMATCH] is None}
    assert (taking_moves, taking_rematches) == ({State.RACING}, {State.FINISHED})
