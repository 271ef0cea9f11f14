"""The hub: every connection and room of one server process, and the request dispatch.

It turns decoded client messages into room commands and replies. Rooms in progress
are in memory (restored from Redis at start); a finished room is loaded on demand
(for its results, replay log or spectators) while Redis still keeps it.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    AskDaily,
    AskHint,
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    AskStats,
    ClientMessage,
    CreateRoom,
    DailyInfo,
    DailyReveal,
    Hello,
    Hints,
    Joined,
    JoinRoom,
    Leaderboard,
    LeaderboardEntry,
    Leave,
    LeaveQueue,
    LegalMoves,
    ListRooms,
    Lobby,
    PlayerStats,
    PlayMove,
    QuickMatch,
    RaceLog,
    RaceOver,
    RacerLog,
    Ready,
    Rematch,
    Replay,
    ReplayStep,
    Resign,
    Result,
    RoomOptions,
    Spectate,
    Start,
    StartDaily,
    StateChanged,
    Undo,
    Welcome,
)
from server.client_link import ClientLink
from server.config import Config
from server.daily import DailyDeal, next_date, utc_date
from server.deal_supply import DailyDeals, WinnablePool
from server.games import VARIANTS
from server.leaderboards import Leaderboards
from server.matchmaking import MatchQueue, Waiting
from server.ratings import rate_race
from server.room_channel import RoomChannel, now_ms
from server.rooms.lifecycle import State
from server.rooms.record import decode_record, encode_record
from server.rooms.room import DealPicker, Outcome, Room, RoomError, random_deal
from server.sessions import InvalidName, clean_name, new_player_id, sign, verify
from server.store import Store, StoreUnavailable

logger = logging.getLogger("server.hub")

#: Room codes: 8 characters from an alphabet without look-alikes (40 bits of chance).
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
_CODE_LENGTH = 8


#: How long a player dropped from a daily attempt keeps it (at least), in seconds.
DAILY_GRACE_SECONDS = 900.0


def new_room_code() -> str:
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))


class Hub:
    """Connections, rooms and request handling of one server process.

    ``deal_picker`` chooses each race's deal (tests pass a fixed one to play a known deal).
    """

    def __init__(
        self,
        config: Config,
        store: Store,
        secret: bytes,
        deal_picker: DealPicker = random_deal,
        daily: DailyDeals | None = None,
        pool: WinnablePool | None = None,
    ) -> None:
        """``daily`` and ``pool`` supply daily-challenge deals and certified winnable race deals;
        without them daily challenges are unavailable and races use random deals."""
        self.config = config
        self.store = store
        self.secret = secret
        self.deal_picker = deal_picker
        self.daily = daily
        self.pool = pool
        self.leaderboards = Leaderboards(store)
        self.queues = {variant: MatchQueue() for variant in VARIANTS}
        self._queued: dict[tuple[str, str], tuple[ClientLink, int]] = {}  # (game, player) -> request
        self.rooms: dict[str, RoomChannel] = {}
        self.links: set[ClientLink] = set()
        self._by_player: dict[str, set[ClientLink]] = {}
        self._seated: dict[str, set[str]] = {}  # player -> codes of rooms they race in
        self._handlers: dict[type[Any], Callable[[ClientLink, Any], Awaitable[None]]] = {
            Hello: self._hello,
            CreateRoom: self._create_room,
            JoinRoom: self._join,
            Spectate: self._spectate,
            Leave: self._leave,
            ListRooms: self._list_rooms,
            Ready: self._ready,
            Start: self._start,
            PlayMove: self._move,
            Undo: self._undo,
            AskHint: self._hint,
            AskLegalMoves: self._legal_moves,
            Resign: self._resign,
            Rematch: self._rematch,
            AskSnapshot: self._snapshot,
            AskRaceLog: self._race_log,
            AskReplay: self._replay,
            QuickMatch: self._quick_match,
            LeaveQueue: self._leave_queue,
            AskDaily: self._daily_info,
            StartDaily: self._start_daily,
            AskLeaderboard: self._leaderboard,
            AskStats: self._stats,
        }

    # -- startup -----------------------------------------------------------------------

    async def restore(self) -> int:
        """Rebuild every room in progress from Redis (after a restart); return how many."""
        restored = 0
        for code in await self.store.active_rooms():
            channel = await self._load(code)
            if channel is not None:
                restored += 1
        return restored

    async def _load(self, code: str) -> RoomChannel | None:
        data = await self.store.load_room(code)
        if data is None:
            return None
        record = decode_record(data)
        if not record.seats:
            return None  # everyone left: the room is closed
        logs = await self.store.move_logs(code, 8)
        stored_version = await self.store.log_version(code)
        if stored_version is not None and stored_version > record.version:
            # Moves append the version with their log entry; the record is saved less often.
            record.version = stored_version
        grace = self.config.grace if record.daily is None else max(self.config.grace, DAILY_GRACE_SECONDS)
        room = Room.restore(record, dict(enumerate(logs)), now_ms(), self.deal_picker, grace_ms=int(grace * 1000))
        channel = self._channel_for(room)
        self.rooms[code] = channel
        channel.schedule()
        logger.info("room %s restored (%s, version %d)", code, room.state.value, room.version)
        return channel

    async def channel(self, code: str) -> RoomChannel | None:
        """The room ``code``, from memory or, if Redis still keeps it, from storage."""
        code = code.strip().upper()
        channel = self.rooms.get(code)
        if channel is None and code.isalnum():
            channel = await self._load(code)
        return channel

    # -- connections ----------------------------------------------------------------------

    async def handle(self, link: ClientLink, message: ClientMessage) -> None:
        """Answer one decoded request."""
        if link.player is None and not isinstance(message, Hello):
            link.error("hello-first", "say hello first: no request is served before it", message.id)
            return
        try:
            await self._handlers[type(message)](link, message)
        except StoreUnavailable as error:
            logger.error("storage unavailable: %s", error)
            link.error("storage-unavailable", "storage is unavailable; try again shortly", message.id)
        except RoomError as error:
            link.error(error.code, str(error), message.id, error.rule)

    async def disconnected(self, link: ClientLink) -> None:
        """``link`` closed: stop sending to it; racers whose last connection it was are
        marked disconnected (they keep their seat for the grace period)."""
        self.links.discard(link)
        for key, (queued, _) in list(self._queued.items()):
            if queued is link:  # a dropped player leaves the quick-match line
                self.queues[key[0]].leave(key[1])
                del self._queued[key]
        if link.player is not None:
            links = self._by_player.get(link.player, set())
            links.discard(link)
            if not links:
                self._by_player.pop(link.player, None)
        for code in list(link.rooms):
            channel = self.rooms.get(code)
            if channel is None:
                continue
            seat = channel.unfollow(link)
            player = link.player
            if seat is None:
                await self._spectators_changed(channel)
            elif player is not None and not channel.racers.get(seat):
                await channel.run(None, None, _connection_command(channel.room, player, False))

    # -- identity ------------------------------------------------------------------------------

    async def _hello(self, link: ClientLink, message: Hello) -> None:
        if message.protocol != PROTOCOL_VERSION:
            link.error(
                "unsupported-protocol",
                f"this server speaks protocol {PROTOCOL_VERSION}, not {message.protocol}; update your client",
                message.id,
            )
            return
        if link.player is not None:
            link.error("already-hello", "this connection has already said hello", message.id)
            return
        try:
            name = clean_name(message.name)
        except InvalidName as error:
            link.error("invalid-name", str(error), message.id)
            return
        player = new_player_id()
        if message.resume is not None:
            resumed = verify(message.resume, self.secret)
            if resumed is None:
                link.error("invalid-token", "that resume token is not valid here; say hello without it", message.id)
                return
            player = resumed
        if len(self._by_player.get(player, ())) >= self.config.max_connections_per_player:
            link.error("too-many-connections", "this player has too many connections open", message.id)
            return
        await self.store.save_player(player, name)
        link.player, link.name = player, name
        self._by_player.setdefault(player, set()).add(link)
        resume = sign(player, self.secret)
        link.send(Welcome(id=message.id, player=player, name=name, resume=resume, protocol=PROTOCOL_VERSION))
        # Back in every room this player races in: their seat, and what they missed.
        for code in sorted(self._seated.get(player, ())):
            channel = self.rooms.get(code)
            seat = None if channel is None else channel.room.seat_of(player)
            if channel is None or seat is None:
                continue
            channel.follow_as_racer(link, seat)
            link.send(Joined(id=message.id, room=code, role="racer", seat=seat))
            await channel.run(None, None, _connection_command(channel.room, player, True))
            link.send(channel.snapshot_for(link))

    # -- rooms -----------------------------------------------------------------------------------

    def _player(self, link: ClientLink) -> str:
        assert link.player is not None  # handle() serves nothing else before hello
        return link.player

    async def _create_room(self, link: ClientLink, message: CreateRoom) -> None:
        player = self._player(link)
        if not self._may_take_a_room(link, message.id):
            return
        channel = await self._open_room(message.variant, message.options, player, link.name)
        channel.follow_as_racer(link, 0)
        logger.info(
            "room %s created by %s (%s, %d racers)",
            channel.code,
            link.name,
            message.variant,
            message.options.max_racers,
        )
        link.send(Joined(id=message.id, room=channel.code, role="racer", seat=0))
        link.send(channel.snapshot_for(link))

    def _channel_for(self, room: Room) -> RoomChannel:
        return RoomChannel(room, self.store, self.config.finished_ttl, self._seated, self._emptied, self._recorded)

    async def _open_room(
        self,
        variant: str,
        options: RoomOptions,
        player: str,
        name: str,
        daily: DailyDeal | None = None,
        ranked: bool = False,
    ) -> RoomChannel:
        """A new room with ``player`` in seat 0, stored, its next deal ready when one is due."""
        code = new_room_code()
        while code in self.rooms or await self.store.room_exists(code):
            code = new_room_code()
        grace = self.config.grace
        if daily is not None:
            # A daily attempt is one a day: a dropped player has a quarter of an hour to come back.
            grace = max(grace, DAILY_GRACE_SECONDS)
        room, outcome = Room.create(
            code, variant, options, player, name, now_ms(), self.deal_picker, grace_ms=int(grace * 1000)
        )
        if daily is not None:
            room.record.daily, room.record.ranked = daily.date, ranked
            room.prepare_deal(daily.deal, daily.salt)  # the day's commitment, the same for every attempt
        else:
            await self._prepare_certified_deal(room)
        channel = self._channel_for(room)
        async with channel.lock:
            await channel._persist(outcome)
        self.rooms[code] = channel
        return channel

    async def _prepare_certified_deal(self, room: Room) -> None:
        """Give a "winnable deals only" room a solver-certified deal from the pool. An empty pool
        (or none) leaves the random deal drawn at the countdown: the race never waits."""
        options = room.record.options
        winnable = options.winnable if options.winnable is not None else room.variant.VARIANT == "scorpion"
        if not winnable or options.deal is not None or self.pool is None:
            return
        deal = await self.pool.take(room.variant.VARIANT)
        if deal is not None:
            room.prepare_deal(deal)
        else:
            logger.warning(
                "no certified %s deal in the pool: room %s gets a random one", room.variant.VARIANT, room.code
            )

    async def _require(self, code: str) -> RoomChannel:
        channel = await self.channel(code)
        if channel is None:
            raise RoomError("no-such-room", f"there is no room {code!r}")
        return channel

    async def _join(self, link: ClientLink, message: JoinRoom) -> None:
        player = self._player(link)
        channel = await self._require(message.room)
        if channel.room.seat_of(player) is None and not self._may_take_a_room(link, message.id):
            return
        ok = await channel.run(link, message.id, lambda: channel.room.join(player, link.name, now_ms()), ack=False)
        if not ok:
            return
        seat = channel.room.seat_of(player)
        assert seat is not None
        # A racer never also spectates their room, from any of their connections.
        spectating = [other for other in channel.spectators if other.player == player]
        for other in spectating:
            channel.unfollow(other)
        channel.follow_as_racer(link, seat)
        link.send(Joined(id=message.id, room=channel.code, role="racer", seat=seat))
        link.send(channel.snapshot_for(link))
        if spectating:
            await self._spectators_changed(channel)

    def _may_take_a_room(self, link: ClientLink, request_id: int) -> bool:
        """False (and an error sent) if the player already races in as many unfinished rooms
        as a player may."""
        player = self._player(link)
        seated = [self.rooms[code] for code in self._seated.get(player, ()) if code in self.rooms]
        active = [channel for channel in seated if channel.room.state is not State.FINISHED]
        if len(active) >= self.config.max_rooms_per_player:
            link.error("too-many-rooms", f"you are in {len(active)} rooms already; leave one first", request_id)
            return False
        return True

    async def _spectate(self, link: ClientLink, message: Spectate) -> None:
        player = self._player(link)
        channel = await self._require(message.room)
        if channel.room.seat_of(player) is not None:
            link.error("not-allowed", "you race in this room, so you cannot spectate it", message.id)
            return
        if not await self._may_watch_daily(channel.room, player):
            link.error("not-allowed", "watch today's daily attempts after your own ranked attempt", message.id)
            return
        channel.follow_as_spectator(link)
        link.send(Joined(id=message.id, room=channel.code, role="spectator"))
        link.send(channel.snapshot_for(link))
        await self._spectators_changed(channel)

    async def _spectators_changed(self, channel: RoomChannel) -> None:
        count = len({link.player for link in channel.spectators})
        await channel.run(None, None, lambda: channel.room.set_spectators(count))

    async def _leave(self, link: ClientLink, message: Leave) -> None:
        player = self._player(link)
        channel = await self._require(message.room)
        if channel.room.seat_of(player) is None:
            if channel.code not in link.rooms:
                link.error("not-in-room", f"you are not in room {channel.code}", message.id)
                return
            channel.unfollow(link)
            await self._spectators_changed(channel)
            link.send(Ack(id=message.id, room=channel.code, version=channel.room.version))
            return
        ok = await channel.run(link, message.id, lambda: channel.room.leave(player, now_ms()))
        if ok:
            for other in list(self._by_player.get(player, ())):
                channel.unfollow(other)

    async def _emptied(self, channel: RoomChannel) -> None:
        """The last racer is gone (left, or dropped for good): close the room for good."""
        channel.close()
        self.rooms.pop(channel.code, None)
        # Out of the active set and expiring: nobody can join a room nobody can start.
        await self.store.finish_room(channel.code, encode_record(channel.room.record), self.config.finished_ttl)
        logger.info("room %s closed: every racer is gone", channel.code)

    async def _list_rooms(self, link: ClientLink, message: ListRooms) -> None:
        player = self._player(link)
        summaries = [
            channel.room.summary()
            for channel in self.rooms.values()
            if channel.room.record.options.public and channel.room.state is not State.FINISHED
        ]
        # Live daily attempts, for those who may watch them (they used their ranked attempt).
        today = self._today()
        for variant in VARIANTS:
            if not await self._used_ranked_attempt(variant, today, player):
                continue
            summaries += [
                channel.room.summary()
                for channel in self.rooms.values()
                if channel.room.record.daily == today
                and variant == channel.room.variant.VARIANT
                and channel.room.state is State.RACING
                and channel.room.seat_of(player) is None
            ]
        link.send(Lobby(id=message.id, rooms=summaries))

    async def _command(self, link: ClientLink, request_id: int, code: str, command: Callable[[Room, str], Any]) -> None:
        player = self._player(link)
        channel = await self._require(code)
        await channel.run(link, request_id, lambda: command(channel.room, player))

    async def _ready(self, link: ClientLink, message: Ready) -> None:
        await self._command(link, message.id, message.room, lambda room, p: room.ready(p, message.ready, now_ms()))

    async def _start(self, link: ClientLink, message: Start) -> None:
        await self._command(link, message.id, message.room, lambda room, p: room.start(p, now_ms()))

    async def _move(self, link: ClientLink, message: PlayMove) -> None:
        await self._command(link, message.id, message.room, lambda room, p: room.move(p, message.move, now_ms()))

    async def _undo(self, link: ClientLink, message: Undo) -> None:
        await self._command(link, message.id, message.room, lambda room, p: room.undo(p, now_ms()))

    async def _resign(self, link: ClientLink, message: Resign) -> None:
        await self._command(link, message.id, message.room, lambda room, p: room.resign(p, now_ms()))

    async def _rematch(self, link: ClientLink, message: Rematch) -> None:
        channel = await self._require(message.room)
        if not await channel.run(link, message.id, lambda: channel.room.rematch(self._player(link), now_ms())):
            return
        async with channel.lock:
            if channel.room.record.next_deal is None:
                await self._prepare_certified_deal(channel.room)
                await self.store.save_room(channel.code, encode_record(channel.room.record), active=True)

    async def _hint(self, link: ClientLink, message: AskHint) -> None:
        channel = await self._require(message.room)
        hints = channel.room.hints(self._player(link))
        link.send(Hints(id=message.id, room=channel.code, hints=hints))

    async def _legal_moves(self, link: ClientLink, message: AskLegalMoves) -> None:
        channel = await self._require(message.room)
        moves = channel.room.legal_moves(self._player(link))
        link.send(LegalMoves(id=message.id, room=channel.code, moves=moves))

    async def _snapshot(self, link: ClientLink, message: AskSnapshot) -> None:
        channel = await self._require(message.room)
        if channel.code not in link.rooms:
            raise RoomError("not-in-room", f"join or spectate room {channel.code} first")
        link.send(channel.snapshot_for(link, message.id))

    async def _race_log(self, link: ClientLink, message: AskRaceLog) -> None:
        channel = await self._require(message.room)
        record = channel.room.finished_record()
        self._check_daily_over(record.daily)
        # The stored logs, undos and resignations included: exactly what was played.
        stored = await self.store.move_logs(channel.code)
        logs = {seat.seat: stored[seat.seat] for seat in record.seats}
        assert record.deal is not None
        assert record.salt is not None
        assert record.commitment is not None
        link.send(
            RaceLog(
                id=message.id,
                room=channel.code,
                race=record.race,
                variant=record.variant,  # type: ignore[arg-type]
                options=record.options,
                deal=record.deal,
                salt=record.salt,
                commitment=record.commitment,
                racers=[RacerLog(seat=s.seat, name=s.name, moves=logs.get(s.seat, [])) for s in record.seats],
            )
        )

    async def _replay(self, link: ClientLink, message: AskReplay) -> None:
        channel = await self._require(message.room)
        record = channel.room.finished_record()
        self._check_daily_over(record.daily)
        log = await self.store.move_log(channel.code, message.seat)
        board, steps = channel.room.replay(message.seat, log)
        name = next((seat.name for seat in record.seats if seat.seat == message.seat), "")
        link.send(
            Replay(
                id=message.id,
                room=channel.code,
                race=record.race,
                seat=message.seat,
                name=name,
                board=board,
                steps=[ReplayStep(entry=entry, patches=patches) for entry, patches in steps],
            )
        )

    # -- quick match ---------------------------------------------------------------------

    async def _quick_match(self, link: ClientLink, message: QuickMatch) -> None:
        player = self._player(link)
        if not self._may_take_a_room(link, message.id):
            return
        rating = await self.leaderboards.rating(message.variant, player)
        queue = self.queues[message.variant]
        queue.join(player, link.name, rating.rating, time.monotonic())
        self._queued[(message.variant, player)] = (link, message.id)
        link.send(Ack(id=message.id))

    async def _leave_queue(self, link: ClientLink, message: LeaveQueue) -> None:
        player = self._player(link)
        if not self.queues[message.variant].leave(player):
            link.error("not-in-queue", f"you are not waiting for a {message.variant} quick match", message.id)
            return
        self._queued.pop((message.variant, player), None)
        link.send(Ack(id=message.id))

    async def match(self, now: float) -> int:
        """Start every quick-match race that can form at ``now`` (monotonic seconds); return how many."""
        started = 0
        for variant, queue in self.queues.items():
            for race in queue.form(now):
                await self._start_quick_race(variant, race)
                started += 1
        return started

    async def _start_quick_race(self, variant: str, race: list[Waiting]) -> None:
        # A player may have dropped while an earlier race of this round was being set up.
        present = [waiting for waiting in race if (variant, waiting.player) in self._queued]
        if len(present) < 2:
            for waiting in present:  # back in line, in their old place
                self.queues[variant].join(waiting.player, waiting.name, waiting.rating, waiting.since)
            return
        race = present
        entries = [(waiting, *self._queued.pop((variant, waiting.player))) for waiting in race]
        first = race[0]
        channel = await self._open_room(variant, RoomOptions(max_racers=len(race)), first.player, first.name)
        for waiting, _, _ in entries[1:]:
            await channel.run(None, None, _join_command(channel.room, waiting.player, waiting.name))
        # Everyone is ready: a full room of ready racers counts down by itself.
        for waiting, _, _ in entries:
            await channel.run(None, None, _ready_command(channel.room, waiting.player))
        for waiting, link, request_id in entries:
            seat = channel.room.seat_of(waiting.player)
            if seat is None:
                continue
            channel.follow_as_racer(link, seat)
            link.send(Joined(id=request_id, room=channel.code, role="racer", seat=seat))
            link.send(channel.snapshot_for(link))
            if link not in self.links:  # gone while the room was set up: the grace period starts
                await channel.run(None, None, _connection_command(channel.room, waiting.player, False))
        logger.info("quick match: %s race in room %s for %s", variant, channel.code, ", ".join(w.name for w in race))

    # -- statistics, ratings and daily results ---------------------------------------------

    async def _recorded(self, channel: RoomChannel, outcome: Outcome) -> None:
        """Keep statistics, ratings and daily boards up to date with a stored outcome."""
        room, boards = channel.room, self.leaderboards
        variant = room.variant.VARIANT
        players = room.racers()
        daily = room.record.daily
        if daily is None and any(
            isinstance(e.full, StateChanged) and e.full.state == "racing" for e in outcome.emissions
        ):
            for player in players.values():
                await boards.race_started(variant, player)
        if not outcome.finished:
            return
        results = room.results()
        if daily is not None:
            if room.record.ranked and results:
                await self._record_daily(room, results[0], players[results[0].seat])
            return
        for result in results:
            won = result.place == 1 and result.finished
            await boards.race_result(variant, players[result.seat], result.finished, won, result.time_ms)
        if len(results) >= 2:
            ordered = [players[result.seat] for result in results]
            before = await boards.ratings(variant, ordered)
            after = rate_race(before, [result.place for result in results])
            await boards.set_ratings(variant, dict(zip(ordered, after, strict=True)))
            room.rate(
                {
                    result.seat: (new.rating, new.rating - old.rating)
                    for result, old, new in zip(results, before, after, strict=True)
                }
            )
            # The results went out with the race's end: send them again with the ratings.
            for index, emission in enumerate(outcome.emissions):
                if isinstance(emission.full, RaceOver):
                    race_over = msgspec.structs.replace(emission.full, results=room.results())
                    outcome.emissions[index] = dataclasses.replace(emission, full=race_over)
            await self.store.save_room(room.code, encode_record(room.record), active=False)

    async def _record_daily(self, room: Room, result: Result, player: str) -> None:
        variant, date = room.variant.VARIANT, room.record.daily
        assert date is not None
        game = room.game_of(result.seat)
        progress = game.progress() if game is not None else None
        await self.leaderboards.record_daily(
            variant,
            date,
            player,
            result.name,
            result.finished,
            result.time_ms,
            result.moves,
            result.home,
            progress.ordered if progress is not None else 0,
        )
        await self.leaderboards.daily_result(variant, player, date, result.finished, result.time_ms)
        logger.info("daily %s %s: %s %s", variant, date, result.name, "finished" if result.finished else "stopped")

    # -- daily challenges --------------------------------------------------------------------

    def _today(self) -> str:
        return utc_date(now_ms())

    async def _daily_deal(self, variant: str, date: str) -> DailyDeal:
        if self.daily is None:
            raise RoomError("daily-unavailable", "this server offers no daily challenge")
        return await self.daily.get(variant, date)

    async def _attempted(self, variant: str, date: str, player: str) -> bool:
        return await self.store.redis.exists(self._attempt_key(variant, date, player)) > 0

    def _attempt_key(self, variant: str, date: str, player: str) -> str:
        return f"{self.store.prefix}daily-attempt:{variant}:{date}:{player}"

    async def _daily_info(self, link: ClientLink, message: AskDaily) -> None:
        player, date = self._player(link), self._today()
        deal = await self._daily_deal(message.variant, date)
        yesterday = None
        if self.daily is not None:
            before = await self.daily.stored(message.variant, previous_date(date))
            if before is not None:
                yesterday = DailyReveal(
                    date=before.date,
                    deal=before.deal,
                    salt=before.salt,
                    commitment=before.commitment,
                    solution=list(before.solution),
                )
        link.send(
            DailyInfo(
                id=message.id,
                variant=message.variant,
                date=date,
                commitment=deal.commitment,
                par=deal.par,
                attempted=await self._attempted(message.variant, date, player),
                ends=day_end_ms(date),
                yesterday=yesterday,
            )
        )

    async def _start_daily(self, link: ClientLink, message: StartDaily) -> None:
        player, date = self._player(link), self._today()
        if not self._may_take_a_room(link, message.id):
            return
        deal = await self._daily_deal(message.variant, date)
        # The first attempt of the day is the ranked one, whatever happens to it afterwards.
        key = self._attempt_key(message.variant, date, player)
        ranked = bool(await self.store.redis.set(key, "1", nx=True, ex=3 * 24 * 3600))
        # Ranked attempts have no hints: everyone races the same deal with the same tools. An
        # attempt ends with its day, when the day's deal and solution are published.
        left = (day_end_ms(date) - now_ms()) // 1000
        options = RoomOptions(max_racers=1, hints=not ranked, time_limit=int(min(max(left, 30), 86_400)))
        channel = await self._open_room(message.variant, options, player, link.name, daily=deal, ranked=ranked)
        channel.follow_as_racer(link, 0)
        await channel.run(None, None, _ready_command(channel.room, player))
        link.send(Joined(id=message.id, room=channel.code, role="racer", seat=0))
        link.send(channel.snapshot_for(link))
        logger.info(
            "daily %s %s: %s started a %s attempt", message.variant, date, link.name, "ranked" if ranked else "practice"
        )

    def _check_daily_over(self, date: str | None) -> None:
        """Daily attempts replay only once their day is over: the deal is everyone's until then."""
        if date is not None and date >= self._today():
            raise RoomError("daily-secret", "daily attempts can be replayed once the day is over")

    async def _may_watch_daily(self, room: Room, player: str) -> bool:
        """A live daily attempt may be watched by one who has used their own ranked attempt
        that day; once the day is over, by anyone."""
        date = room.record.daily
        if date is None or date < self._today():
            return True
        return await self._used_ranked_attempt(room.variant.VARIANT, date, player)

    async def _used_ranked_attempt(self, variant: str, date: str, player: str) -> bool:
        """Whether ``player``'s ranked attempt at ``variant`` on ``date`` is started and over:
        one still playing it would copy the moves they watch."""
        for code in self._seated.get(player, ()):
            channel = self.rooms.get(code)
            if channel is None:
                continue
            room = channel.room
            if (
                room.record.ranked
                and room.record.daily == date
                and variant == room.variant.VARIANT
                and room.state is not State.FINISHED
            ):
                return False
        return await self._attempted(variant, date, player)

    # -- leaderboards and statistics ------------------------------------------------------------

    async def _leaderboard(self, link: ClientLink, message: AskLeaderboard) -> None:
        player, variant, boards = self._player(link), message.variant, self.leaderboards
        span = message.limit // 2
        date = None
        entries: list[LeaderboardEntry]
        if message.board == "daily":
            date = message.date or self._today()
            try:
                datetime.date.fromisoformat(date)
            except ValueError:
                raise RoomError("invalid-message", f"{date} is not a day") from None
            daily = (
                await boards.around(variant, date, player, span)
                if message.around
                else await boards.top(variant, date, message.limit)
            )
            entries = [
                LeaderboardEntry(
                    rank=e.rank,
                    player=e.player,
                    name=e.name,
                    value=e.time_ms if e.time_ms is not None else e.home,
                    finished=e.finished,
                    moves=e.moves,
                    home=e.home,
                )
                for e in daily
            ]
        elif message.board == "rating":
            rated = (
                await boards.around_ratings(variant, player, span)
                if message.around
                else await boards.top_ratings(variant, message.limit)
            )
            entries = [
                LeaderboardEntry(rank=e.rank, player=e.player, name=await self._name(e.player), value=e.rating.rating)
                for e in rated
            ]
        else:
            ranked = (
                await boards.around_all_time(variant, message.board, player, span)
                if message.around
                else await boards.top_all_time(variant, message.board, message.limit)
            )
            entries = [
                LeaderboardEntry(rank=e.rank, player=e.player, name=await self._name(e.player), value=e.value)
                for e in ranked
            ]
        me = next((entry for entry in entries if entry.player == player), None)
        link.send(Leaderboard(id=message.id, variant=variant, board=message.board, entries=entries, date=date, me=me))

    async def _name(self, player: str) -> str:
        return await self.store.player_name(player) or "?"

    async def _stats(self, link: ClientLink, message: AskStats) -> None:
        player = message.player or self._player(link)
        if not player.isalnum():
            raise RoomError("invalid-message", "a player id has only letters and digits")
        stats = await self.leaderboards.stats(message.variant, player, self._today())
        rating = await self.leaderboards.rating(message.variant, player)
        link.send(
            PlayerStats(
                id=message.id,
                variant=message.variant,
                player=player,
                name=await self._name(player),
                races_started=stats.races_started,
                races_won=stats.races_won,
                races_finished=stats.races_finished,
                daily_attempts=stats.daily_attempts,
                daily_wins=stats.daily_wins,
                best_time_ms=stats.best_time_ms,
                current_streak=stats.current_streak,
                longest_streak=stats.longest_streak,
                rating=rating.rating,
                rating_deviation=rating.rd,
            )
        )

    # -- housekeeping ------------------------------------------------------------------------

    def sweep(self, now: int, keep_finished_ms: int = 600_000) -> int:
        """Let go of rooms nobody follows that finished more than ``keep_finished_ms`` ago
        (Redis keeps them; they load again on demand). Returns how many were let go."""
        stale = [
            channel
            for channel in self.rooms.values()
            if channel.room.state is State.FINISHED
            and not channel.spectators
            and not any(channel.racers.values())
            and now - (channel.room.record.finished or now) >= keep_finished_ms
        ]
        for channel in stale:
            channel.close()
            del self.rooms[channel.code]
            for player in channel.room.racers().values():
                codes = self._seated.get(player, set())
                codes.discard(channel.code)
                if not codes:
                    self._seated.pop(player, None)
        return len(stale)

    # -- shutdown ----------------------------------------------------------------------------

    async def drain(self) -> None:
        """Wait until no room is in the middle of a command (its writes are flushed)."""
        for channel in list(self.rooms.values()):
            async with channel.lock:
                channel.close()


def _connection_command(room: Room, player: str, connected: bool) -> Callable[[], Outcome]:
    return lambda: room.connection(player, connected, now_ms())


def _join_command(room: Room, player: str, name: str) -> Callable[[], Outcome]:
    return lambda: room.join(player, name, now_ms())


def _ready_command(room: Room, player: str) -> Callable[[], Outcome]:
    return lambda: room.ready(player, True, now_ms())


def previous_date(date: str) -> str:
    """The UTC day before ``date`` (YYYY-MM-DD)."""
    return (datetime.date.fromisoformat(date) - datetime.timedelta(days=1)).isoformat()


def day_end_ms(date: str) -> int:
    """When the UTC day ``date`` ends, in Unix milliseconds."""
    end = datetime.datetime.fromisoformat(next_date(date)).replace(tzinfo=datetime.UTC)
    return int(end.timestamp() * 1000)
