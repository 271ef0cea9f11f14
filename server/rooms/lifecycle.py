"""The lifecycle of a room, as one table: which trigger moves a room from which state.

    waiting --(all ready | creator starts)--> countdown --(3 s)--> racing
    countdown --(a racer unreadies, leaves or drops)--> waiting
    racing --(every racer finished or resigned | time limit)--> finished
    finished --(rematch)--> waiting

Nothing else changes a room's state; anything not in the table is an error.
"""

from __future__ import annotations

import enum
from typing import Final


class State(enum.Enum):
    WAITING = "waiting"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"


class Trigger(enum.Enum):
    ALL_READY = "all ready"
    CREATOR_START = "creator starts"
    CANCEL = "countdown cancelled"
    COUNTDOWN_OVER = "countdown over"
    ALL_DONE = "every racer done"
    TIME_UP = "time limit"
    REMATCH = "rematch"


TRANSITIONS: Final[dict[tuple[State, Trigger], State]] = {
    (State.WAITING, Trigger.ALL_READY): State.COUNTDOWN,
    (State.WAITING, Trigger.CREATOR_START): State.COUNTDOWN,
    (State.COUNTDOWN, Trigger.CANCEL): State.WAITING,
    (State.COUNTDOWN, Trigger.COUNTDOWN_OVER): State.RACING,
    (State.RACING, Trigger.ALL_DONE): State.FINISHED,
    (State.RACING, Trigger.TIME_UP): State.FINISHED,
    (State.FINISHED, Trigger.REMATCH): State.WAITING,
}

#: How long the countdown lasts, in milliseconds.
COUNTDOWN_MS: Final = 3000


class LifecycleError(Exception):
    """A trigger that the table does not allow in the room's state."""


def next_state(state: State, trigger: Trigger) -> State:
    """The state ``trigger`` leads to from ``state``; :class:`LifecycleError` if none."""
    try:
        return TRANSITIONS[(state, trigger)]
    except KeyError:
        raise LifecycleError(f"a room that is {state.value} cannot take '{trigger.value}'") from None
