"""The hub: every connection and room of one server process, and the request dispatch.

It turns decoded client messages into room commands and replies. Rooms in progress
are in memory (restored from Redis at start); a finished room is loaded on demand
(for its results, replay log or spectators) while Redis still keeps it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    AskHint,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    ClientMessage,
    CreateRoom,
    Hello,
    Hints,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    ListRooms,
    Lobby,
    PlayMove,
    RaceLog,
    RacerLog,
    Ready,
    Rematch,
    Replay,
    ReplayStep,
    Resign,
    Spectate,
    Start,
    Undo,
    Welcome,
)
from server.client_link import ClientLink
from server.config import Config
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


def new_room_code() -> str:
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))


class Hub:
    """Connections, rooms and request handling of one server process.

    ``deal_picker`` chooses each race's deal (tests pass a fixed one to play a known deal).
    """

    def __init__(self, config: Config, store: Store, secret: bytes, deal_picker: DealPicker = random_deal) -> None:
        self.config = config
        self.store = store
        self.secret = secret
        self.deal_picker = deal_picker
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
        room = Room.restore(
            record, dict(enumerate(logs)), now_ms(), self.deal_picker, grace_ms=int(self.config.grace * 1000)
        )
        channel = RoomChannel(room, self.store, self.config.finished_ttl, self._seated, self._emptied)
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
        code = new_room_code()
        while code in self.rooms or await self.store.room_exists(code):
            code = new_room_code()
        room, outcome = Room.create(
            code,
            message.variant,
            message.options,
            player,
            link.name,
            now_ms(),
            self.deal_picker,
            grace_ms=int(self.config.grace * 1000),
        )
        channel = RoomChannel(room, self.store, self.config.finished_ttl, self._seated, self._emptied)
        async with channel.lock:
            await channel._persist(outcome)
        self.rooms[code] = channel
        channel.follow_as_racer(link, 0)
        logger.info(
            "room %s created by %s (%s, %d racers)", code, link.name, message.variant, message.options.max_racers
        )
        link.send(Joined(id=message.id, room=code, role="racer", seat=0))
        link.send(channel.snapshot_for(link))

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
        summaries = [
            channel.room.summary()
            for channel in self.rooms.values()
            if channel.room.record.options.public and channel.room.state is not State.FINISHED
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
        await self._command(link, message.id, message.room, lambda room, p: room.rematch(p, now_ms()))

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
