"""A room being decided: the commands' rules, carried out on a copy of the room's record.

:meth:`server.rooms.room.Room.decide` makes a :class:`Draft` of the room, runs the command
on it, and hands it out inside the :class:`~server.rooms.step.Step`; the room adopts the
draft's state when the step is applied. The draft shares the racers' engine games with the
room: a move is tried on the engine while its events are built and taken back
(:meth:`Draft.take_back_engine`) before the decision is returned, so the room never sees it
until it is applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, assert_never

from protocol.errors import ErrorCode
from protocol.fairness import commitment, new_salt
from protocol.messages import (
    BoardChanged,
    Patch,
    ProgressChanged,
    RaceOver,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RacerResigned,
    Rematched,
    RoomEvent,
    SpectatorsChanged,
    StateChanged,
)
from server.games import Autoplay, Deal, Game, GameError, IllegalMove, Move, NothingToUndo, Options
from server.rooms.commands import (
    Command,
    Join,
    Leave,
    Presence,
    Rematch,
    Resign,
    SetReady,
    SetSpectators,
    Start,
    TakeBack,
    Tick,
)
from server.rooms.commands import Move as PlayMove
from server.rooms.entries import Played, Resigned, Undone
from server.rooms.errors import RoomError
from server.rooms.ghost import due, time_of
from server.rooms.lifecycle import STATE_OF, Act, State, Trigger, check_command, next_state
from server.rooms.record import RoomRecord, SeatRecord, SeatStatus, certified_of
from server.rooms.step import Emission, EngineOp, Outcome
from server.rooms.timing import RoomTiming
from server.rooms.views import Seat, clock_of, progress_of, racer_view, results_of, reveal_of

#: Moves one racer may play in one race, undone ones included; the next move or undo gets
#: ``move-limit``. An undo takes back one of them, so a log holds at most twice this.
MAX_LOG_ENTRIES: Final = 2000

DealPicker = Callable[[str], str]

#: Later than any entry of a run: "the rest of it".
_ALL: Final = 2**62


class Draft:
    """The room as a command leaves it; built by :meth:`Room.decide <server.rooms.room.Room.decide>`."""

    def __init__(
        self,
        record: RoomRecord,
        variant: type[Game],
        seats: dict[int, Seat],
        spectators: int,
        pick_deal: DealPicker,
        timing: RoomTiming,
    ) -> None:
        """``record`` is the draft's own copy; ``seats`` are the room's, copied here with
        their records taken from ``record`` (their engine games are shared)."""
        self.record = record
        self.variant = variant
        records = {s.seat: s for s in record.seats}
        self.seats = {
            n: Seat(records[n], s.game, s.plays, s.connected, s.dropped_until, s.entries) for n, s in seats.items()
        }
        self.spectators = spectators
        self.engine: list[EngineOp] = []
        self._pick_deal = pick_deal
        self._timing = timing
        self._undone: dict[int, list[Move]] = {}  # moves taken back while deciding, by seat

    @property
    def state(self) -> State:
        return STATE_OF[self.record.state]

    def seat_of(self, player: str) -> int | None:
        for number, seat in self.seats.items():
            if seat.record.player == player:
                return number
        return None

    def _new_game(self) -> Game:
        assert self.record.deal is not None
        return self.variant.new(self.record.deal, Options(autoplay=Autoplay(self.record.options.autoplay)))

    def take_back_engine(self) -> None:
        """Undo the engine operations tried while deciding (newest first)."""
        for number, move in reversed(self.engine):
            game = self.seats[number].game
            assert game is not None
            if move is None:  # an undo: play its move again
                game.push(self._undone[number].pop())
            else:
                game.pop()

    def run(self, command: Command, now: int, outcome: Outcome) -> None:
        match command:
            case Join(player, name, bot):
                self._join(player, name, bot, now, outcome)
            case Leave(player):
                self._leave(player, now, outcome)
            case SetReady(player, ready):
                self._ready(player, ready, now, outcome)
            case Start(player):
                self._start(player, now, outcome)
            case PlayMove(player, text):
                self._move(player, text, now, outcome)
            case TakeBack(player):
                self._undo(player, outcome)
            case Resign(player):
                number, racer, _ = self._racing_seat(player, Act.RESIGN)
                self._resign(number, racer, "resigned", now, outcome)
            case Rematch(player, next_deal):
                self._rematch(player, next_deal, now, outcome)
            case Presence(player, connected):
                self._connection(player, connected, now, outcome)
            case SetSpectators(count):
                if count != self.spectators:
                    self.spectators = count
                    # Stored like every event, so versions never go back after a restart.
                    self._emit(outcome, SpectatorsChanged(count=count), save=False)
            case Tick():
                self._tick(now, outcome)
            case _:
                assert_never(command)

    def _check(self, act: Act) -> None:
        check_command(self.state, act)

    def _emit(
        self,
        outcome: Outcome,
        full: RoomEvent,
        redacted: RoomEvent | None = None,
        owner: int | None = None,
        save: bool = True,
    ) -> None:
        self.record.version += 1
        outcome.emissions.append(Emission(self.record.version, full, redacted, owner))
        outcome.save = outcome.save or save

    def _racer(self, player: str) -> tuple[int, Seat]:
        return seat_of_racer(self.seats, self.record.code, player)

    def _join(self, player: str, name: str, bot: bool, now: int, outcome: Outcome) -> None:
        number = self.seat_of(player)
        if number is not None:
            # Back in their seat; one who had left is staying after all.
            self._connection(player, True, now, outcome)
            if self.seats[number].record.left:
                self.seats[number].record.left = False
                outcome.save = True
            return
        self._check(Act.JOIN)
        if len(racers_of(self.seats)) >= self.record.options.max_racers:
            raise RoomError(
                ErrorCode.ROOM_FULL, f"room {self.record.code} is full ({self.record.options.max_racers} racers)"
            )
        number = min(set(range(8)) - set(self.seats))
        record = SeatRecord(seat=number, player=player, name=name, bot=bot)
        self.record.seats.append(record)
        racer = self.seats[number] = Seat(record)
        self._emit(outcome, RacerJoined(racer_view(racer, None)))

    def _leave(self, player: str, now: int, outcome: Outcome) -> None:
        """In a race, leaving counts as resigning; before it, the seat is freed."""
        number, racer = self._racer(player)
        if self.state is State.RACING and not racer.done:
            racer.record.left = True
            self._resign(number, racer, "left", now, outcome)
        elif self.state in (State.RACING, State.FINISHED):
            # Done racing: the seat stays for the results, but not for a rematch.
            racer.record.left = True
            outcome.save = True
        else:
            self._remove(number, now, outcome)

    def _remove(self, number: int, now: int, outcome: Outcome) -> None:
        racer = self.seats.pop(number)
        self.record.seats.remove(racer.record)
        creator = None
        racers = racers_of(self.seats)
        if racer.record.player == self.record.creator and racers:
            creator = self.record.creator = self.seats[min(racers)].record.player
        self._emit(outcome, RacerLeft(seat=number, creator=creator))
        if not racers:  # a ghost stays only with someone to race it
            for ghost in sorted(self.seats):
                self.record.seats.remove(self.seats.pop(ghost).record)
                self._emit(outcome, RacerLeft(seat=ghost, creator=None))
        if self.state is State.COUNTDOWN:
            self._cancel_countdown(now, outcome)
        if self.state is State.WAITING:
            self._start_if_all_ready(now, outcome)

    def _ready(self, player: str, ready: bool, now: int, outcome: Outcome) -> None:
        number, racer = self._racer(player)
        self._check(Act.READY)
        if (racer.record.status is SeatStatus.READY) == ready:
            return
        racer.record.status = SeatStatus.READY if ready else SeatStatus.NOT_READY
        self._emit(outcome, RacerReady(seat=number, ready=ready))
        if self.state is State.COUNTDOWN and not ready:
            self._cancel_countdown(now, outcome)
        elif self.state is State.WAITING:
            self._start_if_all_ready(now, outcome)

    def _start(self, player: str, now: int, outcome: Outcome) -> None:
        """The creator starts the countdown, ready or not."""
        self._racer(player)
        self._check(Act.START)
        if player != self.record.creator:
            raise RoomError(ErrorCode.NOT_ALLOWED, "only the room's creator can start the race")
        self._begin_countdown(Trigger.CREATOR_START, now, outcome)

    def _start_if_all_ready(self, now: int, outcome: Outcome) -> None:
        # A room starts by itself once it is full and everyone is ready; the creator can
        # start a room that is not full.
        racers = racers_of(self.seats)
        full = len(racers) == self.record.options.max_racers
        if full and all(seat.record.status is SeatStatus.READY for seat in racers.values()):
            self._begin_countdown(Trigger.ALL_READY, now, outcome)

    def _set_state(self, trigger: Trigger) -> State:
        state = next_state(self.state, trigger)
        self.record.state = state.value
        return state

    def _begin_countdown(self, trigger: Trigger, now: int, outcome: Outcome) -> None:
        self._set_state(trigger)
        r = self.record
        r.deal = str(Deal.parse(r.options.deal or r.next_deal or self._pick_deal(r.variant)))
        r.certified = r.options.deal is None and r.next_deal is not None
        r.salt = r.next_salt or new_salt()
        # next_deal stays until the race starts: a cancelled countdown keeps the prepared deal.
        r.commitment = commitment(r.variant, r.deal, r.salt)
        r.countdown_ends = now + self._timing.countdown_ms
        self._emit(outcome, self._state_event(now))

    def _state_event(self, now: int) -> StateChanged:
        r = self.record
        return StateChanged(
            state=r.state, clock=clock_of(r, now), race=r.race, commitment=r.commitment, certified=certified_of(r)
        )

    def _cancel_countdown(self, now: int, outcome: Outcome) -> None:
        self._set_state(Trigger.CANCEL)
        r = self.record
        r.deal = r.salt = r.commitment = None
        r.certified = False
        r.countdown_ends = None
        self._emit(outcome, self._state_event(now))

    def _begin_race(self, now: int, outcome: Outcome) -> None:
        self._set_state(Trigger.COUNTDOWN_OVER)
        r = self.record
        r.next_deal = r.next_salt = None
        r.started = now
        if r.options.time_limit is not None:
            r.ends = now + r.options.time_limit * 1000
        self._emit(outcome, self._state_event(now))
        for number in sorted(self.seats):
            racer = self.seats[number]
            racer.game = self._new_game()
            racer.plays = racer.entries = 0
            patches = [Patch(i, 0, list(pile)) for i, pile in enumerate(racer.game.public_piles())]
            progress = progress_of(racer)
            self._emit(outcome, BoardChanged(number, patches, progress), ProgressChanged(number, progress), number)

    def _finish_race(self, trigger: Trigger, now: int, outcome: Outcome) -> None:
        self._set_state(trigger)
        self.record.finished = now
        self._emit(outcome, self._state_event(now))
        outcome.results = results_of(self.record, self.seats)
        self._emit(outcome, RaceOver(results=outcome.results, reveal=reveal_of(self.record)))
        outcome.finished = True
        outcome.refresh.update(self.seats)

    def _racing_seat(self, player: str, act: Act) -> tuple[int, Seat, Game]:
        return racing_seat(self.seats, self.state, self.record.code, player, act)

    def _check_log_room(self, number: int) -> None:
        if self.seats[number].plays >= MAX_LOG_ENTRIES:
            raise RoomError(
                ErrorCode.MOVE_LIMIT, f"a race allows at most {MAX_LOG_ENTRIES} moves a racer: undo less, or resign"
            )

    def _move(self, player: str, text: str, now: int, outcome: Outcome) -> None:
        number, racer, game = self._racing_seat(player, Act.MOVE)
        self._check_log_room(number)
        self._play(number, racer, game, text, now - (self.record.started or now), now, outcome)

    def _play(self, number: int, racer: Seat, game: Game, text: str, at: int, now: int, outcome: Outcome) -> None:
        """Play ``text`` for the racer in ``number``, ``at`` ms into the race (their time if it wins)."""
        try:
            move = game.parse_move(text)
            canonical = game.move_text(move)
            patches = game.apply(move)
        except IllegalMove as error:
            raise RoomError(ErrorCode.ILLEGAL_MOVE, str(error), error.rule) from None
        except GameError as error:
            raise RoomError(ErrorCode.INVALID_MOVE, str(error)) from None
        self.engine.append((number, move))
        racer.plays += 1
        outcome.move = canonical
        outcome.log.append((number, Played(canonical)))
        self._emit_board(number, racer, [Patch(p.pile, p.keep, list(p.add)) for p in patches], outcome)
        if game.is_won():
            racer.record.status = SeatStatus.FINISHED
            racer.record.finished_ms = at
            self._emit(outcome, RacerFinished(seat=number, time_ms=at, moves=racer.plays))
            outcome.refresh.add(number)
            self._finish_if_all_done(now, outcome)

    def _emit_board(self, number: int, racer: Seat, patches: list[Patch], outcome: Outcome) -> None:
        progress = progress_of(racer)
        # The move log holds the move; the record needs no save for it.
        self._emit(
            outcome, BoardChanged(number, patches, progress), ProgressChanged(number, progress), number, save=False
        )

    def _undo(self, player: str, outcome: Outcome) -> None:
        number, racer, game = self._racing_seat(player, Act.UNDO)
        if not self.record.options.undo:
            raise RoomError(ErrorCode.UNDO_DISABLED, "undo is turned off in this room")
        self._check_log_room(number)
        self._take_back(number, racer, game, outcome)

    def _take_back(self, number: int, racer: Seat, game: Game, outcome: Outcome) -> None:
        taken_back = game.moves[-1:]
        try:
            patches = game.undo()
        except NothingToUndo as error:
            raise RoomError(ErrorCode.NOTHING_TO_UNDO, str(error)) from None
        self.engine.append((number, None))
        self._undone.setdefault(number, []).append(taken_back[0])
        outcome.log.append((number, Undone()))
        self._emit_board(number, racer, [Patch(p.pile, p.keep, list(p.add)) for p in patches], outcome)

    def _resign(self, number: int, racer: Seat, reason: str, now: int, outcome: Outcome) -> None:
        racer.record.status = SeatStatus.RESIGNED
        racer.record.resigned = reason
        outcome.log.append((number, Resigned(reason)))
        self._emit(outcome, RacerResigned(seat=number, reason=reason))
        outcome.refresh.add(number)
        self._finish_if_all_done(now, outcome)

    def _finish_if_all_done(self, now: int, outcome: Outcome) -> None:
        """Finish the race once every racer is done; a ghost then plays the rest of its run
        at once (its recorded times stand), so nobody waits for it."""
        if self.state is not State.RACING or not all(seat.done for seat in racers_of(self.seats).values()):
            return
        self._play_ghost(now, outcome, rest=True)
        # The ghost's last entry may have finished the race already.
        if self.state is State.RACING and all(seat.done for seat in self.seats.values()):
            self._finish_race(Trigger.ALL_DONE, now, outcome)

    def _play_ghost(self, now: int, outcome: Outcome, rest: bool = False) -> None:
        """Play the ghost's entries whose time has come (every one left, with ``rest``); a
        run that ends unfinished stops the ghost at its end."""
        run = self.record.ghost
        if run is None or self.state is not State.RACING:
            return
        elapsed = now - (self.record.started or now)
        for number, racer in sorted(self.seats.items()):
            if not racer.record.ghost or racer.done:
                continue
            game = racer.game
            assert game is not None
            for entry in due(run, racer.entries, _ALL if rest else elapsed):
                at = time_of(run, racer.entries)
                racer.entries += 1
                match entry:
                    case Played(move):
                        self._play(number, racer, game, move, at, now, outcome)
                    case Undone():
                        self._take_back(number, racer, game, outcome)
                    case Resigned(reason):
                        self._resign(number, racer, reason, now, outcome)
                if racer.done:
                    break
            if not racer.done and racer.entries == len(run.entries) and (rest or elapsed >= run.ends):
                self._resign(number, racer, "stopped", now, outcome)

    def _rematch(self, player: str, next_deal: str | None, now: int, outcome: Outcome) -> None:
        """A new race in the same room with a new deal; racers ready up again."""
        self._racer(player)
        self._check(Act.REMATCH)
        r = self.record
        if r.daily is not None or r.challenge is not None or r.bracket is not None or r.arena is not None:
            # One attempt each; an arena's races are paired by the arena, never arranged.
            raise RoomError(ErrorCode.NOT_ALLOWED, "this race is one of a series: start the next from its menu")
        self._set_state(Trigger.REMATCH)
        r = self.record
        r.race += 1
        r.deal = r.salt = r.commitment = None
        r.certified = False
        r.next_deal, r.next_salt = next_deal, None
        r.ratings = {}
        r.countdown_ends = r.started = r.ends = r.finished = None
        gone = [n for n, seat in self.seats.items() if seat.record.left]
        for seat in self.seats.values():
            # A ghost is ready for every race: it races its run again.
            seat.record.status = SeatStatus.READY if seat.record.ghost else SeatStatus.NOT_READY
            seat.record.finished_ms = None
            seat.record.resigned = None
            seat.game = None
            seat.plays = seat.entries = 0
            if not seat.connected:
                # Away since the last race: the grace period starts again, then they leave.
                seat.dropped_until = now + self._timing.grace_ms
        self._emit(outcome, Rematched(race=r.race))
        self._emit(outcome, self._state_event(now))
        for number, seat in sorted(self.seats.items()):
            if seat.record.ghost:  # every copy marks all not ready at a rematch: the ghost is
                self._emit(outcome, RacerReady(seat=number, ready=True))
        for number in gone:  # racers who left during the race do not stay for the next
            self._remove(number, now, outcome)

    def _connection(self, player: str, connected: bool, now: int, outcome: Outcome) -> None:
        """A racer's last connection dropped, or they came back. A dropped racer keeps the
        seat for the grace period; then they leave (before the race) or resign (during it)."""
        number, racer = self._racer(player)
        racer.dropped_until = None if connected else now + self._timing.grace_ms
        if racer.connected != connected:
            racer.connected = connected
            self._emit(outcome, RacerConnection(seat=number, connected=connected), save=False)

    def _tick(self, now: int, outcome: Outcome) -> None:
        """Do what is due at ``now``: end the countdown, end the race at its time limit,
        let go of racers whose grace period ran out."""
        r = self.record
        for number, racer in sorted(self.seats.items()):
            if racer.dropped_until is not None and racer.dropped_until <= now:
                racer.dropped_until = None
                if self.state is State.RACING:
                    if not racer.done:
                        self._resign(number, racer, "disconnected", now, outcome)
                elif self.state is not State.FINISHED:
                    self._remove(number, now, outcome)
        if self.state is State.COUNTDOWN and r.countdown_ends is not None and r.countdown_ends <= now:
            self._begin_race(now, outcome)
        if r.ghost is not None:
            self._play_ghost(now, outcome)
            self._finish_if_all_done(now, outcome)
        if self.state is State.RACING and r.ends is not None and r.ends <= now:
            self._finish_race(Trigger.TIME_UP, now, outcome)


def racers_of(seats: dict[int, Seat]) -> dict[int, Seat]:
    """The seats of people and bots: every seat but a ghost's."""
    return {number: seat for number, seat in seats.items() if not seat.record.ghost}


def seat_of_racer(seats: dict[int, Seat], code: str, player: str) -> tuple[int, Seat]:
    """The seat ``player`` races in; ``not-in-room`` if none."""
    for number, seat in seats.items():
        if seat.record.player == player:
            return number, seat
    raise RoomError(ErrorCode.NOT_IN_ROOM, f"you are not racing in room {code}")


def racing_seat(seats: dict[int, Seat], state: State, code: str, player: str, act: Act) -> tuple[int, Seat, Game]:
    """The seat and game of ``player``, who must be in the race and not done, for ``act``."""
    number, seat = seat_of_racer(seats, code, player)
    check_command(state, act)
    if seat.done:
        raise RoomError(ErrorCode.NOT_RACING, "you have already finished or resigned this race")
    assert seat.game is not None
    return number, seat, seat.game
