"""A room: its racers, their boards, its lifecycle. Sans-I/O.

A :class:`Room` changes only through its commands (``join``, ``move``, ``tick``...),
each of which takes the current time and returns an :class:`Outcome`: the events
to send (each in a full and, where needed, a redacted form), the move-log entries
to persist before acknowledging, and whether the record must be saved. The
network layer carries those out; the room itself does no I/O and never waits, so
every rule of the race is testable without a socket or a database.

Who sees what (see PROTOCOL.md, "Threat model"): boards are hidden from everyone
until the race starts; during a race a racer sees their own board and only the
progress of rivals still racing; a racer who is done (finished or resigned), and
every spectator, sees every board. The deal stays secret until the race ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from protocol.fairness import commitment, new_salt
from protocol.messages import (
    BoardChanged,
    Clock,
    DailyTag,
    HintItem,
    Patch,
    PileInfo,
    Progress,
    ProgressChanged,
    RaceOver,
    Racer,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RacerResigned,
    Rematched,
    Result,
    Reveal,
    RoomEvent,
    RoomOptions,
    RoomSummary,
    RoomView,
    SpectatorsChanged,
    StateChanged,
)
from server.games import Autoplay, Deal, Game, GameError, IllegalMove, NothingToUndo, Options, hint, variant_class
from server.rooms.lifecycle import COUNTDOWN_MS, State, Trigger, next_state
from server.rooms.record import RoomRecord, SeatRecord, decode_record, encode_record
from server.rooms.results import Standing, rank

#: How long a disconnected racer keeps the seat, in milliseconds.
DEFAULT_GRACE_MS = 60_000
#: Spectator delay when the options name none: private rooms 0 s, public 15 s.
PUBLIC_SPECTATOR_DELAY = 15.0

DealPicker = Callable[[str], str]


def random_deal(variant: str) -> str:
    """A deal number from a secure random source, in the range PySolFC draws from."""
    del variant  # every variant draws from the same range
    return str(10**16 + secrets.randbelow(10**20 - 10**16))


class RoomError(Exception):
    """A request the room refuses. ``code`` is the protocol error code."""

    def __init__(self, code: str, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule


@dataclass(frozen=True, slots=True)
class Emission:
    """One room event at ``version``. Racers still racing, other than ``owner``, get
    ``redacted`` instead of ``full`` when it is set; everyone else gets ``full``."""

    version: int
    full: RoomEvent
    redacted: RoomEvent | None = None
    owner: int | None = None


@dataclass(slots=True)
class Outcome:
    """What a command asks of the network layer, in this order: append ``log`` entries
    (seat, entry) and save the record if ``save``, then acknowledge, then send
    ``emissions``, then fresh snapshots to the racers in ``refresh``."""

    emissions: list[Emission] = field(default_factory=list)
    log: list[tuple[int, str]] = field(default_factory=list)
    save: bool = False
    finished: bool = False
    reset_logs: int = 0  # > 0: delete this many seats' logs first (a rematch)
    refresh: set[int] = field(default_factory=set)
    move: str | None = None
    #: Takes the command back if its log entries could not be stored (moves, undos, resigns).
    revert: Callable[[], None] | None = None


@dataclass(slots=True)
class _Seat:
    record: SeatRecord
    game: Game | None = None
    plays: int = 0  # moves played this race, undone ones included
    connected: bool = True
    dropped_until: int | None = None

    @property
    def done(self) -> bool:
        return self.record.finished_ms is not None or self.record.resigned is not None


class Room:
    """A room and its race. Build with :meth:`create` or :meth:`restore`."""

    def __init__(self, record: RoomRecord, deal_picker: DealPicker = random_deal, grace_ms: int = DEFAULT_GRACE_MS):
        self.record = record
        self.variant: type[Game] = variant_class(record.variant)
        self._seats: dict[int, _Seat] = {s.seat: _Seat(s) for s in record.seats}
        self._spectators = 0
        self._pick_deal = deal_picker
        self._grace_ms = grace_ms

    # -- building --------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        code: str,
        variant: str,
        options: RoomOptions,
        creator: str,
        name: str,
        now: int,
        deal_picker: DealPicker = random_deal,
        grace_ms: int = DEFAULT_GRACE_MS,
    ) -> tuple[Room, Outcome]:
        """A new room with its creator in seat 0. Raises :class:`RoomError` on bad options."""
        variant_class(variant)
        if options.deal is not None:
            if options.max_racers != 1:
                raise RoomError("not-allowed", "only practice rooms (one racer) may choose their deal")
            try:
                Deal.parse(options.deal)
            except GameError as error:
                raise RoomError("invalid-options", str(error)) from None
        if options.spectator_delay is None:
            delay = PUBLIC_SPECTATOR_DELAY if options.public else 0.0
            options = msgspec.structs.replace(options, spectator_delay=delay)
        record = RoomRecord(code=code, variant=variant, options=options, creator=creator, created=now, state="waiting")
        room = cls(record, deal_picker, grace_ms)
        outcome = room.join(creator, name, now)
        outcome.save = True
        return room, outcome

    @classmethod
    def restore(
        cls,
        record: RoomRecord,
        logs: dict[int, list[str]],
        now: int,
        deal_picker: DealPicker = random_deal,
        grace_ms: int = DEFAULT_GRACE_MS,
    ) -> Room:
        """A room rebuilt from its record and move logs (after a restart): each board is
        replayed through the engine. Every racer counts as disconnected, with a fresh grace
        period, until they come back."""
        room = cls(record, deal_picker, grace_ms)
        if record.deal is not None and room.state in (State.RACING, State.FINISHED):
            for number, seat in room._seats.items():
                seat.game = room._new_game()
                for entry in logs.get(number, []):
                    room._replay(seat, entry)
        for seat in room._seats.values():
            seat.connected = False
            seat.dropped_until = now + grace_ms
        return room

    def _new_game(self) -> Game:
        assert self.record.deal is not None
        return self.variant.new(self.record.deal, Options(autoplay=Autoplay(self.record.options.autoplay)))

    def _replay(self, seat: _Seat, entry: str) -> None:
        game = seat.game
        assert game is not None
        if entry == "undo":
            game.pop()
        elif entry.startswith("resign"):
            pass  # the seat record says so
        else:
            game.push(game.parse_move(entry))
            seat.plays += 1

    # -- reading -----------------------------------------------------------------------

    @property
    def code(self) -> str:
        return self.record.code

    @property
    def state(self) -> State:
        return State(self.record.state)

    @property
    def version(self) -> int:
        return self.record.version

    @property
    def spectator_delay(self) -> float:
        return self.record.options.spectator_delay or 0.0

    def seat_of(self, player: str) -> int | None:
        for number, seat in self._seats.items():
            if seat.record.player == player:
                return number
        return None

    def racers(self) -> dict[int, str]:
        """Seat number -> player id."""
        return {number: seat.record.player for number, seat in self._seats.items()}

    def members(self) -> dict[int, str]:
        """Seat number -> player id of the racers who have not left the room (a racer who
        left keeps the seat for the race's results, until the rematch)."""
        return {number: seat.record.player for number, seat in self._seats.items() if not seat.record.left}

    def is_racing(self, seat: int) -> bool:
        """Whether the racer in ``seat`` is in a race and not done: they see only their board."""
        racer = self._seats.get(seat)
        return self.state is State.RACING and racer is not None and not racer.done

    def game_of(self, seat: int) -> Game | None:
        racer = self._seats.get(seat)
        return racer.game if racer else None

    def view(self, seat: int | None, now: int) -> RoomView:
        """The room as the racer in ``seat`` may see it, or (``None``) as a spectator."""
        boards_shown = self.state in (State.RACING, State.FINISHED)
        see_all = seat is None or not self.is_racing(seat)
        racers = []
        for number in sorted(self._seats):
            racer = self._seats[number]
            board = None
            if boards_shown and racer.game is not None and (see_all or number == seat):
                board = [list(pile) for pile in racer.game.public_piles()]
            racers.append(self._racer_view(number, racer, board))
        finished = self.state is State.FINISHED
        return RoomView(
            code=self.code,
            variant=self.variant.VARIANT,  # type: ignore[arg-type]
            options=self._public_options(),
            state=self.record.state,  # type: ignore[arg-type]
            creator=self.record.creator,
            piles=[PileInfo(spec.name, spec.kind.value) for spec in self.variant.PILES],
            racers=racers,
            spectators=self._spectators,
            clock=self._clock(now),
            race=self.record.race,
            commitment=self.record.commitment,
            reveal=self._reveal() if finished else None,
            results=self._results() if finished else None,
            daily=None if self.record.daily is None else DailyTag(self.record.daily, self.record.ranked),
        )

    def _public_options(self) -> RoomOptions:
        # A practice room's chosen deal is the player's own choice: no secret to keep.
        return self.record.options

    def _racer_view(self, number: int, racer: _Seat, board: list[list[int | None]] | None) -> Racer:
        return Racer(
            seat=number,
            player=racer.record.player,
            name=racer.record.name,
            progress=self._progress(racer),
            ready=racer.record.ready,
            connected=racer.connected,
            finished_ms=racer.record.finished_ms,
            resigned=racer.record.resigned,
            board=board,
        )

    def _progress(self, racer: _Seat) -> Progress:
        if racer.game is None:
            return Progress(home=0, ordered=0, moves=0)
        progress = racer.game.progress()
        return Progress(home=progress.home, ordered=progress.ordered, moves=racer.plays, won=progress.won)

    def _clock(self, now: int) -> Clock:
        r = self.record
        return Clock(now=now, countdown_ends=r.countdown_ends, started=r.started, ends=r.ends, finished=r.finished)

    def _reveal(self) -> Reveal | None:
        """The deal and salt, once the race is over; a daily challenge keeps its deal secret
        until the day ends (the day's reveal then comes with the daily information)."""
        if self.record.deal is None or self.record.salt is None or self.record.daily is not None:
            return None
        return Reveal(deal=self.record.deal, salt=self.record.salt)

    def _results(self) -> list[Result]:
        standings = []
        for number, racer in self._seats.items():
            progress = self._progress(racer)
            standings.append(
                Standing(
                    number, racer.record.name, racer.record.finished_ms, racer.plays, progress.home, progress.ordered
                )
            )
        results = rank(standings)
        ratings = self.record.ratings
        return [
            msgspec.structs.replace(result, rating=ratings[result.seat][0], rating_change=ratings[result.seat][1])
            if result.seat in ratings
            else result
            for result in results
        ]

    def results(self) -> list[Result]:
        """The race's results (places, and ratings once :meth:`rate` gave them)."""
        return self._results()

    def rate(self, ratings: dict[int, tuple[float, float]]) -> None:
        """Record each seat's new rating and its change, shown in the results from now on."""
        self.record.ratings = dict(ratings)

    def prepare_deal(self, deal: str, salt: str | None = None) -> None:
        """Use ``deal`` at the next countdown (a certified winnable deal, or the daily deal),
        with ``salt`` if its commitment is already published (the daily deal's)."""
        self.record.next_deal = deal
        self.record.next_salt = salt

    def summary(self) -> RoomSummary:
        return RoomSummary(
            code=self.code,
            variant=self.variant.VARIANT,  # type: ignore[arg-type]
            state=self.record.state,  # type: ignore[arg-type]
            racers=[self._seats[n].record.name for n in sorted(self._seats)],
            max_racers=self.record.options.max_racers,
            spectators=self._spectators,
        )

    def next_deadline(self) -> int | None:
        """The earliest time at which :meth:`tick` has something to do, or None."""
        times = [seat.dropped_until for seat in self._seats.values() if seat.dropped_until is not None]
        if self.state is State.COUNTDOWN and self.record.countdown_ends is not None:
            times.append(self.record.countdown_ends)
        if self.state is State.RACING and self.record.ends is not None:
            times.append(self.record.ends)
        return min(times, default=None)

    def is_empty(self) -> bool:
        return not self._seats

    # -- commands --------------------------------------------------------------------------

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

    def _racer(self, player: str) -> tuple[int, _Seat]:
        number = self.seat_of(player)
        if number is None:
            raise RoomError("not-in-room", f"you are not racing in room {self.code}")
        return number, self._seats[number]

    def join(self, player: str, name: str, now: int) -> Outcome:
        """Seat ``player`` as a racer (again, if they already are: that is a reconnect)."""
        outcome = Outcome()
        number = self.seat_of(player)
        if number is not None:
            # Back in their seat; one who had left is staying after all.
            outcome = self.connection(player, True, now)
            if self._seats[number].record.left:
                self._seats[number].record.left = False
                outcome.save = True
            return outcome
        if self.state is State.FINISHED:
            raise RoomError("race-over", "this room's race is over: spectate it, or wait for a rematch")
        if self.state is not State.WAITING:
            raise RoomError("race-in-progress", "this room's race has started: you can spectate it")
        if len(self._seats) >= self.record.options.max_racers:
            raise RoomError("room-full", f"room {self.code} is full ({self.record.options.max_racers} racers)")
        number = min(set(range(8)) - set(self._seats))
        record = SeatRecord(seat=number, player=player, name=name)
        self.record.seats.append(record)
        racer = self._seats[number] = _Seat(record)
        self._emit(outcome, RacerJoined(self._racer_view(number, racer, None)))
        return outcome

    def leave(self, player: str, now: int) -> Outcome:
        """``player`` leaves: in a race it counts as resigning; before it, the seat is freed."""
        number, racer = self._racer(player)
        outcome = Outcome()
        if self.state is State.RACING and not racer.done:
            racer.record.left = True
            self._resign(number, racer, "left", now, outcome)
        elif self.state in (State.RACING, State.FINISHED):
            # Done racing: the seat stays for the results, but not for a rematch.
            racer.record.left = True
            outcome.save = True
        else:
            self._remove(number, now, outcome)
        return outcome

    def _remove(self, number: int, now: int, outcome: Outcome) -> None:
        racer = self._seats.pop(number)
        self.record.seats.remove(racer.record)
        creator = None
        if racer.record.player == self.record.creator and self._seats:
            creator = self.record.creator = self._seats[min(self._seats)].record.player
        self._emit(outcome, RacerLeft(seat=number, creator=creator))
        if self.state is State.COUNTDOWN:
            self._cancel_countdown(now, outcome)
        if self.state is State.WAITING:
            self._start_if_all_ready(now, outcome)

    def ready(self, player: str, ready: bool, now: int) -> Outcome:
        number, racer = self._racer(player)
        if self.state not in (State.WAITING, State.COUNTDOWN):
            raise RoomError("not-waiting", "ready only counts before the race")
        outcome = Outcome()
        if racer.record.ready == ready:
            return outcome
        racer.record.ready = ready
        self._emit(outcome, RacerReady(seat=number, ready=ready))
        if self.state is State.COUNTDOWN and not ready:
            self._cancel_countdown(now, outcome)
        elif self.state is State.WAITING:
            self._start_if_all_ready(now, outcome)
        return outcome

    def start(self, player: str, now: int) -> Outcome:
        """The creator starts the countdown, ready or not."""
        self._racer(player)
        if player != self.record.creator:
            raise RoomError("not-allowed", "only the room's creator can start the race")
        if self.state is not State.WAITING:
            raise RoomError("not-waiting", f"the room is {self.state.value}, not waiting")
        outcome = Outcome()
        self._begin_countdown(Trigger.CREATOR_START, now, outcome)
        return outcome

    def _start_if_all_ready(self, now: int, outcome: Outcome) -> None:
        # A room starts by itself once it is full and everyone is ready; the creator can
        # start a room that is not full.
        full = len(self._seats) == self.record.options.max_racers
        if full and all(seat.record.ready for seat in self._seats.values()):
            self._begin_countdown(Trigger.ALL_READY, now, outcome)

    def _set_state(self, trigger: Trigger) -> State:
        state = next_state(self.state, trigger)
        self.record.state = state.value
        return state

    def _begin_countdown(self, trigger: Trigger, now: int, outcome: Outcome) -> None:
        self._set_state(trigger)
        r = self.record
        r.deal = str(Deal.parse(r.options.deal or r.next_deal or self._pick_deal(r.variant)))
        r.salt = r.next_salt or new_salt()
        # next_deal stays until the race starts: a cancelled countdown keeps the prepared deal.
        r.commitment = commitment(r.variant, r.deal, r.salt)
        r.countdown_ends = now + COUNTDOWN_MS
        self._emit(outcome, self._state_event(now))

    def _state_event(self, now: int) -> StateChanged:
        r = self.record
        return StateChanged(state=self.state.value, clock=self._clock(now), race=r.race, commitment=r.commitment)

    def _cancel_countdown(self, now: int, outcome: Outcome) -> None:
        self._set_state(Trigger.CANCEL)
        r = self.record
        r.deal = r.salt = r.commitment = None
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
        for number in sorted(self._seats):
            racer = self._seats[number]
            racer.game = self._new_game()
            racer.plays = 0
            patches = [Patch(i, 0, list(pile)) for i, pile in enumerate(racer.game.public_piles())]
            progress = self._progress(racer)
            self._emit(outcome, BoardChanged(number, patches, progress), ProgressChanged(number, progress), number)

    def _finish_race(self, trigger: Trigger, now: int, outcome: Outcome) -> None:
        self._set_state(trigger)
        self.record.finished = now
        self._emit(outcome, self._state_event(now))
        self._emit(outcome, RaceOver(results=self._results(), reveal=self._reveal()))
        outcome.finished = True
        outcome.refresh.update(self._seats)

    def _racing_seat(self, player: str) -> tuple[int, _Seat, Game]:
        number, racer = self._racer(player)
        if self.state is not State.RACING:
            raise RoomError("not-racing", f"the room is {self.state.value}: moves count only during the race")
        if racer.done:
            raise RoomError("not-racing", "you have already finished or resigned this race")
        assert racer.game is not None
        return number, racer, racer.game

    def move(self, player: str, text: str, now: int) -> Outcome:
        """Play a move given in the notation. Raises :class:`RoomError` (``invalid-move`` or
        ``illegal-move`` with the rule) and changes nothing if it cannot be played."""
        number, racer, game = self._racing_seat(player)
        saved = encode_record(self.record)
        try:
            move = game.parse_move(text)
            canonical = game.move_text(move)
            patches = game.apply(move)
        except IllegalMove as error:
            raise RoomError("illegal-move", str(error), error.rule) from None
        except GameError as error:
            raise RoomError("invalid-move", str(error)) from None
        racer.plays += 1

        def revert() -> None:
            game.pop()
            racer.plays -= 1
            self._restore(saved)

        outcome = Outcome(move=canonical, log=[(number, canonical)], revert=revert)
        self._emit_board(number, racer, [Patch(p.pile, p.keep, list(p.add)) for p in patches], outcome)
        if game.is_won():
            racer.record.finished_ms = now - (self.record.started or now)
            self._emit(outcome, RacerFinished(seat=number, time_ms=racer.record.finished_ms, moves=racer.plays))
            outcome.refresh.add(number)
            self._finish_if_all_done(now, outcome)
        return outcome

    def _restore(self, saved: bytes) -> None:
        """Go back to a record saved before a command (its seats with it)."""
        self.record = decode_record(saved)
        for seat in self.record.seats:
            self._seats[seat.seat].record = seat

    def _emit_board(self, number: int, racer: _Seat, patches: list[Patch], outcome: Outcome) -> None:
        progress = self._progress(racer)
        # The move log holds the move; the record needs no save for it.
        self._emit(
            outcome, BoardChanged(number, patches, progress), ProgressChanged(number, progress), number, save=False
        )

    def undo(self, player: str, now: int) -> Outcome:
        number, racer, game = self._racing_seat(player)
        if not self.record.options.undo:
            raise RoomError("undo-disabled", "undo is turned off in this room")
        saved = encode_record(self.record)
        taken_back = game.moves[-1:]
        try:
            patches = game.undo()
        except NothingToUndo as error:
            raise RoomError("nothing-to-undo", str(error)) from None

        def revert() -> None:
            game.push(taken_back[0])
            self._restore(saved)

        outcome = Outcome(log=[(number, "undo")], revert=revert)
        self._emit_board(number, racer, [Patch(p.pile, p.keep, list(p.add)) for p in patches], outcome)
        return outcome

    def hints(self, player: str) -> list[HintItem]:
        _, _, game = self._racing_seat(player)
        if not self.record.options.hints:
            raise RoomError("hints-disabled", "hints are turned off in this room")
        return [HintItem(game.move_text(h.move), h.reason) for h in hint(game)]

    def legal_moves(self, player: str) -> list[str]:
        _, _, game = self._racing_seat(player)
        return [game.move_text(move) for move in game.legal_moves()]

    def resign(self, player: str, now: int) -> Outcome:
        number, racer, _ = self._racing_seat(player)
        saved = encode_record(self.record)
        outcome = Outcome(revert=lambda: self._restore(saved))
        self._resign(number, racer, "resigned", now, outcome)
        return outcome

    def _resign(self, number: int, racer: _Seat, reason: str, now: int, outcome: Outcome) -> None:
        racer.record.resigned = reason
        outcome.log.append((number, f"resign {reason}"))
        self._emit(outcome, RacerResigned(seat=number, reason=reason))
        outcome.refresh.add(number)
        self._finish_if_all_done(now, outcome)

    def _finish_if_all_done(self, now: int, outcome: Outcome) -> None:
        if all(seat.done for seat in self._seats.values()):
            self._finish_race(Trigger.ALL_DONE, now, outcome)

    def rematch(self, player: str, now: int) -> Outcome:
        """A new race in the same room with a new deal; racers ready up again."""
        self._racer(player)
        if self.state is not State.FINISHED:
            raise RoomError("not-finished", "a rematch can start only after the race")
        if self.record.daily is not None:
            raise RoomError("not-allowed", "a daily challenge is one attempt: start another from the daily menu")
        self._set_state(Trigger.REMATCH)
        r = self.record
        outcome = Outcome(reset_logs=8)
        r.race += 1
        r.deal = r.salt = r.commitment = None
        r.ratings = {}
        r.countdown_ends = r.started = r.ends = r.finished = None
        gone = [n for n, seat in self._seats.items() if seat.record.left]
        for seat in self._seats.values():
            seat.record.ready = False
            seat.record.finished_ms = None
            seat.record.resigned = None
            seat.game = None
            seat.plays = 0
            if not seat.connected:
                # Away since the last race: the grace period starts again, then they leave.
                seat.dropped_until = now + self._grace_ms
        self._emit(outcome, Rematched(race=r.race))
        self._emit(outcome, self._state_event(now))
        for number in gone:  # racers who left during the race do not stay for the next
            self._remove(number, now, outcome)
        return outcome

    def connection(self, player: str, connected: bool, now: int) -> Outcome:
        """A racer's last connection dropped, or they came back. A dropped racer keeps the
        seat for the grace period; then they leave (before the race) or resign (during it)."""
        number, racer = self._racer(player)
        outcome = Outcome()
        racer.dropped_until = None if connected else now + self._grace_ms
        if racer.connected != connected:
            racer.connected = connected
            self._emit(outcome, RacerConnection(seat=number, connected=connected))
        return outcome

    def set_spectators(self, count: int) -> Outcome:
        outcome = Outcome()
        if count != self._spectators:
            self._spectators = count
            # Saved like every event, so versions never go back after a restart.
            self._emit(outcome, SpectatorsChanged(count=count))
        return outcome

    def tick(self, now: int) -> Outcome:
        """Do what is due at ``now``: end the countdown, end the race at its time limit,
        let go of racers whose grace period ran out."""
        outcome = Outcome()
        r = self.record
        for number, racer in sorted(self._seats.items()):
            if racer.dropped_until is not None and racer.dropped_until <= now:
                racer.dropped_until = None
                if self.state is State.RACING:
                    if not racer.done:
                        self._resign(number, racer, "disconnected", now, outcome)
                elif self.state is not State.FINISHED:
                    self._remove(number, now, outcome)
        if self.state is State.COUNTDOWN and r.countdown_ends is not None and r.countdown_ends <= now:
            self._begin_race(now, outcome)
        if self.state is State.RACING and r.ends is not None and r.ends <= now:
            self._finish_race(Trigger.TIME_UP, now, outcome)
        return outcome

    def replay(self, seat: int, log: list[str]) -> tuple[list[list[int | None]], list[tuple[str, list[Patch]]]]:
        """The starting board of the racer in ``seat`` and, for each entry of their stored
        ``log``, the patches it made: their game step by step, after the race."""
        self.finished_record()
        if seat not in self._seats:
            raise RoomError("no-such-seat", f"nobody raced in seat {seat}")
        game = self._new_game()
        board = [list(pile) for pile in game.public_piles()]
        steps: list[tuple[str, list[Patch]]] = []
        for entry in log:
            if entry.startswith("resign"):
                steps.append((entry, []))
                continue
            patches = game.undo() if entry == "undo" else game.apply(game.parse_move(entry))
            steps.append((entry, [Patch(p.pile, p.keep, list(p.add)) for p in patches]))
        return board, steps

    def finished_record(self) -> RoomRecord:
        """The record of a finished race, deal and salt included (for its race log)."""
        if self.state is not State.FINISHED:
            raise RoomError("not-finished", "the move logs are published when the race ends")
        return self.record
