"""The lifecycle of a room, as one table that governs every command, in the manner of h11.

    waiting --(all ready | creator starts)--> countdown --(its length: 3 s by default)--> racing
    countdown --(a racer unreadies, leaves or drops)--> waiting
    racing --(every racer finished or resigned | time limit)--> finished
    finished --(rematch)--> waiting

:data:`TRANSITIONS` says which trigger moves a room from which state; :data:`COMMANDS` says
which commands each state takes, and what a refused command is answered with. Everything
that decides whether a room may do something in a state lives here: a command or trigger
not in the tables is refused by the tables themselves (:func:`check_command`,
:func:`next_state`).
"""

from __future__ import annotations

import enum
from typing import Final

from protocol.errors import ErrorCode
from server.rooms.errors import CommandRefused


class State(enum.Enum):
    WAITING = "waiting"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"


#: A record's state text to its State: a dict lookup, where State(text) goes through the enum
#: machinery (a room reads its state several times per move).
STATE_OF: Final[dict[str, State]] = {state.value: state for state in State}


class Trigger(enum.Enum):
    ALL_READY = "all ready"
    CREATOR_START = "creator starts"
    CANCEL = "countdown cancelled"
    COUNTDOWN_OVER = "countdown over"
    ALL_DONE = "every racer done"
    TIME_UP = "time limit"
    REMATCH = "rematch"


class Act(enum.Enum):
    """What a command asks of a room (a seated racer coming back is :attr:`CONNECTION`)."""

    JOIN = "join"
    LEAVE = "leave"
    READY = "ready"
    START = "start"
    MOVE = "move"
    UNDO = "undo"
    HINT = "hint"
    LEGAL_MOVES = "legal moves"
    RESIGN = "resign"
    REMATCH = "rematch"
    RACE_LOG = "race log"
    CONNECTION = "connection"
    SPECTATORS = "spectators"
    TICK = "tick"


TRANSITIONS: Final[dict[tuple[State, Trigger], State]] = {
    (State.WAITING, Trigger.ALL_READY): State.COUNTDOWN,
    (State.WAITING, Trigger.CREATOR_START): State.COUNTDOWN,
    (State.COUNTDOWN, Trigger.CANCEL): State.WAITING,
    (State.COUNTDOWN, Trigger.COUNTDOWN_OVER): State.RACING,
    (State.RACING, Trigger.ALL_DONE): State.FINISHED,
    (State.RACING, Trigger.TIME_UP): State.FINISHED,
    (State.FINISHED, Trigger.REMATCH): State.WAITING,
}

_ANYTIME = {Act.LEAVE: None, Act.CONNECTION: None, Act.SPECTATORS: None, Act.TICK: None}
_RACE_ACTS = (Act.MOVE, Act.UNDO, Act.HINT, Act.LEGAL_MOVES, Act.RESIGN)

#: For each state, every command: ``None`` if the state takes it, else the error it is refused with.
COMMANDS: Final[dict[State, dict[Act, ErrorCode | None]]] = {
    State.WAITING: {
        **_ANYTIME,
        Act.JOIN: None,
        Act.READY: None,
        Act.START: None,
        **dict.fromkeys(_RACE_ACTS, ErrorCode.NOT_RACING),
        Act.REMATCH: ErrorCode.NOT_FINISHED,
        Act.RACE_LOG: ErrorCode.NOT_FINISHED,
    },
    State.COUNTDOWN: {
        **_ANYTIME,
        Act.JOIN: ErrorCode.RACE_IN_PROGRESS,
        Act.READY: None,
        Act.START: ErrorCode.NOT_WAITING,
        **dict.fromkeys(_RACE_ACTS, ErrorCode.NOT_RACING),
        Act.REMATCH: ErrorCode.NOT_FINISHED,
        Act.RACE_LOG: ErrorCode.NOT_FINISHED,
    },
    State.RACING: {
        **_ANYTIME,
        Act.JOIN: ErrorCode.RACE_IN_PROGRESS,
        Act.READY: ErrorCode.NOT_WAITING,
        Act.START: ErrorCode.NOT_WAITING,
        **dict.fromkeys(_RACE_ACTS, None),
        Act.REMATCH: ErrorCode.NOT_FINISHED,
        Act.RACE_LOG: ErrorCode.NOT_FINISHED,
    },
    State.FINISHED: {
        **_ANYTIME,
        Act.JOIN: ErrorCode.RACE_OVER,
        Act.READY: ErrorCode.NOT_WAITING,
        Act.START: ErrorCode.NOT_WAITING,
        **dict.fromkeys(_RACE_ACTS, ErrorCode.NOT_RACING),
        Act.REMATCH: None,
        Act.RACE_LOG: None,
    },
}

_REASONS: Final[dict[ErrorCode, str]] = {
    ErrorCode.RACE_IN_PROGRESS: "this room's race has started: you can spectate it",
    ErrorCode.RACE_OVER: "this room's race is over: spectate it, or wait for a rematch",
    ErrorCode.NOT_WAITING: "ready and start count only before the race",
    ErrorCode.NOT_RACING: "moves count only during the race",
    ErrorCode.NOT_FINISHED: "the race is not over yet",
}


class LifecycleError(Exception):
    """A trigger that the table does not allow in the room's state (a bug in the room, not bad input)."""


def check_command(state: State, act: Act) -> None:
    """Return if ``state`` takes ``act``; raise :class:`CommandRefused` with the table's answer otherwise."""
    code = COMMANDS[state][act]
    if code is not None:
        raise CommandRefused(code, f"the room is {state.value}: {_REASONS.get(code, 'not now')}")


def next_state(state: State, trigger: Trigger) -> State:
    """The state ``trigger`` leads to from ``state``; :class:`LifecycleError` if none."""
    try:
        return TRANSITIONS[(state, trigger)]
    except KeyError:
        raise LifecycleError(f"a room that is {state.value} cannot take '{trigger.value}'") from None
