"""A room: its racers, their boards, its lifecycle. Sans-I/O: decide, then apply.

A command never changes a room directly. :meth:`Room.decide` returns a :class:`Step`: the
events to send (each in a full and, where needed, a redacted form), the move-log entries
and the record to store, and the room as it will be. The network layer stores the step
and only then calls :meth:`Room.apply`, acknowledges and sends. A step that could not be
stored is dropped, and the room is exactly as it was: there is nothing to roll back.

Which commands a state takes is the lifecycle table's decision
(:mod:`server.rooms.lifecycle`); who sees what is :mod:`server.rooms.views`'.
"""

from __future__ import annotations

import copy
import secrets
from typing import Final

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import HintItem, RaceOver, Result, RoomOptions, RoomSummary, RoomView, Variant
from server.games import Autoplay, Deal, Game, GameError, Move, Options, variant_class
from server.rooms.commands import Command, Join
from server.rooms.draft import DealPicker as DealPicker
from server.rooms.draft import Draft, racing_seat
from server.rooms.entries import LogEntry, Played, Resigned, Undone
from server.rooms.errors import RoomError as RoomError
from server.rooms.ghost import GHOST_PLAYER, GhostRun, check_run, next_due
from server.rooms.hints import hints_for
from server.rooms.lifecycle import STATE_OF, Act, State, check_command
from server.rooms.record import RoomRecord, SeatRecord, SeatStatus, copy_record
from server.rooms.step import Emission, Outcome, Step
from server.rooms.timing import DEFAULT_TIMING, RoomTiming
from server.rooms.views import Seat, results_of, room_view, summary_of
from server.solver.winning_hint import WinningHints

#: Spectator delay when the options name none: private rooms 0 s, public 15 s.
PUBLIC_SPECTATOR_DELAY: Final = 15.0


def random_deal(variant: str) -> str:
    """A deal number from a secure random source, in the range PySolFC draws from."""
    del variant  # every variant draws from the same range
    return str(10**16 + secrets.randbelow(10**20 - 10**16))


class Room:
    """A room and its race. Build with :meth:`create` or :meth:`restore`."""

    def __init__(self, record: RoomRecord, deal_picker: DealPicker = random_deal, timing: RoomTiming = DEFAULT_TIMING):
        self.record = record
        self.variant: type[Game] = variant_class(record.variant)
        self._seats: dict[int, Seat] = {s.seat: Seat(s) for s in record.seats}
        self._spectators = 0
        self._pick_deal = deal_picker
        self._timing = timing
        self._winning: dict[int, WinningHints] = {}  # each racer's winning line, for hints

    # -- building --------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        code: str,
        variant: Variant,
        options: RoomOptions,
        creator: str,
        name: str,
        now: int,
        deal_picker: DealPicker = random_deal,
        timing: RoomTiming = DEFAULT_TIMING,
        *,
        bot: bool = False,
        next_deal: str | None = None,
        next_salt: str | None = None,
        daily: str | None = None,
        ranked: bool = False,
        ghost: GhostRun | None = None,
        challenge: str | None = None,
        arena: str | None = None,
        bracket: str | None = None,
    ) -> tuple[Room, Step]:
        """An empty room and the step that seats its creator in seat 0 (store it, then
        apply it). ``next_deal``/``next_salt`` prepare the first race's deal (a certified
        one, the daily deal and its published salt, or a challenge's, ``challenge`` its id);
        ``arena``: a race of that arena tournament; ``bracket``: a run of that bracket round.
        ``ghost``: a practice room on a chosen deal races that run in seat 1
        (:mod:`server.rooms.ghost`). :class:`RoomError` on bad options, or a ghost whose run
        does not replay on the room's deal."""
        variant_class(variant)
        if options.deal is not None:
            if options.max_racers != 1:
                raise RoomError(ErrorCode.NOT_ALLOWED, "only practice rooms (one racer) may choose their deal")
            try:
                Deal.parse(options.deal)
            except GameError as error:
                raise RoomError(ErrorCode.INVALID_OPTIONS, str(error)) from None
        if options.spectator_delay is None:
            delay = PUBLIC_SPECTATOR_DELAY if options.public else 0.0
            options = msgspec.structs.replace(options, spectator_delay=delay)
        record = RoomRecord(
            code=code,
            variant=variant,
            options=options,
            creator=creator,
            created=now,
            state="waiting",
            next_deal=next_deal,
            next_salt=next_salt,
            daily=daily,
            ranked=ranked,
            challenge=challenge,
            arena=arena,
            bracket=bracket,
        )
        if ghost is not None:
            if options.deal is None:
                raise RoomError(ErrorCode.NOT_ALLOWED, "a ghost races on the deal of its run: choose it")
            check_run(variant, options.deal, options.autoplay, ghost)
            record.ghost = ghost
            record.seats.append(
                SeatRecord(seat=1, player=GHOST_PLAYER, name=ghost.name, status=SeatStatus.READY, ghost=True)
            )
        room = cls(record, deal_picker, timing)
        step = room.decide(Join(creator, name, bot), now)
        step.outcome.save = True
        return room, step

    @classmethod
    def restore(
        cls,
        record: RoomRecord,
        logs: dict[int, list[LogEntry]],
        now: int,
        deal_picker: DealPicker = random_deal,
        timing: RoomTiming = DEFAULT_TIMING,
        present: frozenset[int] = frozenset(),
        spectators: int = 0,
    ) -> Room:
        """A room rebuilt from its record and its current race's move logs: each board is
        replayed through the engine. Racers in ``present`` seats are connected (a resync of a
        live room); every other racer counts as disconnected, with a fresh grace period,
        until they come back. ``spectators`` is the live spectator count, if any."""
        room = cls(record, deal_picker, timing)
        room._spectators = spectators
        if record.deal is not None and room.state in (State.RACING, State.FINISHED):
            for number, seat in room._seats.items():
                seat.game = room._new_game()
                for entry in logs.get(number, []):
                    match entry:
                        case Played(move):
                            seat.game.push(seat.game.parse_move(move))
                            seat.plays += 1
                        case Undone():
                            seat.game.pop()
                        case Resigned():
                            pass  # the seat record says so
                seat.entries = len(logs.get(number, []))
        for number, seat in room._seats.items():
            if number not in present and not seat.record.ghost:
                seat.connected = False
                seat.dropped_until = now + timing.grace_ms
        return room

    def as_of_now(self) -> Room:
        """This room as it is now, kept as it is: for reading a finished race after the room
        has moved on (its recording, while the racers start a rematch). No copying is needed
        beyond the room itself: a step replaces the record and the seats, never changes them,
        and a new race deals new games."""
        kept = copy.copy(self)
        kept._winning = dict(self._winning)
        return kept

    def _new_game(self) -> Game:
        assert self.record.deal is not None
        return self.variant.new(self.record.deal, Options(autoplay=Autoplay(self.record.options.autoplay)))

    # -- reading -----------------------------------------------------------------------

    @property
    def code(self) -> str:
        return self.record.code

    @property
    def state(self) -> State:
        return STATE_OF[self.record.state]

    @property
    def version(self) -> int:
        return self.record.version

    @property
    def spectators(self) -> int:
        return self._spectators

    @property
    def spectator_delay(self) -> float:
        return self.record.options.spectator_delay or 0.0

    def seat_of(self, player: str) -> int | None:
        for number, seat in self._seats.items():
            if seat.record.player == player:
                return number
        return None

    def racers(self) -> dict[int, str]:
        """Seat number -> player id (a ghost's seat is nobody's)."""
        return {number: seat.record.player for number, seat in self._seats.items() if not seat.record.ghost}

    def members(self) -> dict[int, str]:
        """Seat number -> player id of the racers who have not left the room (a racer who
        left keeps the seat for the race's results, until the rematch)."""
        seats = self._seats.items()
        return {number: seat.record.player for number, seat in seats if not seat.record.left and not seat.record.ghost}

    def racing_seats(self) -> frozenset[int]:
        """The racers' seats (never a ghost's) where :meth:`is_racing` holds: in a race and not done."""
        if self.state is not State.RACING:
            return frozenset()
        return frozenset(number for number, seat in self._seats.items() if not seat.done and not seat.record.ghost)

    def is_racing(self, seat: int) -> bool:
        """Whether the racer in ``seat`` is in a race and not done: they see only their board."""
        racer = self._seats.get(seat)
        return self.state is State.RACING and racer is not None and not racer.done

    def is_connected(self, seat: int) -> bool:
        racer = self._seats.get(seat)
        return racer is not None and racer.connected

    def game_of(self, seat: int) -> Game | None:
        racer = self._seats.get(seat)
        return racer.game if racer else None

    def view(self, seat: int | None, now: int) -> RoomView:
        """The room as the racer in ``seat`` may see it, or (``None``) as a spectator."""
        racing = seat is not None and self.is_racing(seat)
        return room_view(self.record, self.variant, self._seats, self._spectators, seat, now, racing)

    def summary(self) -> RoomSummary:
        return summary_of(self.record, self._seats, self._spectators)

    def results(self) -> list[Result]:
        """The race's results (places, and ratings once the race was rated)."""
        return results_of(self.record, self._seats)

    def next_deadline(self) -> int | None:
        """The earliest time at which a :class:`Tick` has something to do, or None."""
        times = [seat.dropped_until for seat in self._seats.values() if seat.dropped_until is not None]
        if self.state is State.COUNTDOWN and self.record.countdown_ends is not None:
            times.append(self.record.countdown_ends)
        if self.state is State.RACING and self.record.ends is not None:
            times.append(self.record.ends)
        run, started = self.record.ghost, self.record.started
        if self.state is State.RACING and run is not None and started is not None:
            times += [started + next_due(run, s.entries) for s in self._seats.values() if s.record.ghost and not s.done]
        return min(times, default=None)

    def is_empty(self) -> bool:
        return not self._seats

    def hints(self, player: str) -> list[HintItem]:
        """The racer's hints: the next move of their winning line in memory first, if it
        reaches their position (see :meth:`hint_search`), then the engine's."""
        game, winning = self._hinted(player)
        return hints_for(game, winning)

    def hint_search(self, player: str) -> Game | None:
        """A copy of the racer's game for a winning-line search (run it elsewhere, then
        :meth:`learn_line`), or None when a search would add nothing: cards are hidden, or
        the line in memory reaches the position. Refused as :meth:`hints` is."""
        game, winning = self._hinted(player)
        return game.copy(history=False) if winning.needs_search(game) else None

    def learn_line(self, player: str, searched: Game, line: tuple[Move, ...]) -> None:
        """Remember ``line``, a winning line from ``searched`` (a copy :meth:`hint_search`
        gave): it answers the racer's hints for every position on it."""
        number = self.seat_of(player)
        if number is not None:
            self._winning.setdefault(number, WinningHints()).learn(searched, line)

    def _hinted(self, player: str) -> tuple[Game, WinningHints]:
        _, _, game = racing_seat(self._seats, self.state, self.code, player, Act.HINT)
        if not self.record.options.hints:
            raise RoomError(ErrorCode.HINTS_DISABLED, "hints are turned off in this room")
        number = self.seat_of(player)
        assert number is not None
        return game, self._winning.setdefault(number, WinningHints())

    def legal_moves(self, player: str) -> list[str]:
        _, _, game = racing_seat(self._seats, self.state, self.code, player, Act.LEGAL_MOVES)
        return [game.move_text(move) for move in game.legal_moves()]

    def finished_record(self) -> RoomRecord:
        """The record of a finished race, deal and salt included (for its race log)."""
        check_command(self.state, Act.RACE_LOG)
        return self.record

    # -- deciding and applying -------------------------------------------------------

    def decide(self, command: Command, now: int) -> Step:
        """What ``command`` at ``now`` would do, without changing this room.

        Raises :class:`RoomError` if the command is refused. A move is tried on the engine
        while the step is built and taken back (exactly: the engine's undo) before this
        returns; :meth:`apply` plays it for good.
        """
        fork = self._fork()
        outcome = Outcome()
        try:
            fork.run(command, now, outcome)
        finally:
            fork.take_back_engine()
        return Step(self.record.version, fork, outcome, fork.engine)

    def apply(self, step: Step) -> None:
        """Make this room what ``step`` decided (call it once the step is stored)."""
        if step.base != self.record.version:
            raise ValueError(f"room {self.code}: a step decided at version {step.base} applied at {self.version}")
        fork = step.next
        for number, move in step.engine:
            game = fork.seats[number].game
            assert game is not None
            if move is None:
                game.pop()
            else:
                game.push(move)
        self.record, self._seats, self._spectators = fork.record, fork.seats, fork.spectators

    def rate(self, step: Step, ratings: dict[int, tuple[float, float]]) -> None:
        """Complete a step that finished a rated race with each seat's new rating and change,
        before it is stored: the record keeps them and the race's results show them."""
        step.next.record.ratings = dict(ratings)
        results = [
            msgspec.structs.replace(r, rating=ratings[r.seat][0], rating_change=ratings[r.seat][1])
            if r.seat in ratings
            else r
            for r in step.outcome.results
        ]
        step.outcome.results = results
        emissions = step.outcome.emissions
        for index, emission in enumerate(emissions):
            if isinstance(emission.full, RaceOver):
                emissions[index] = Emission(emission.version, msgspec.structs.replace(emission.full, results=results))

    def _fork(self) -> Draft:
        return Draft(
            copy_record(self.record),
            self.variant,
            self._seats,
            self._spectators,
            self._pick_deal,
            self._timing,
        )
