"""What must hold after any storage fault, checked through the protocol only (so the same
checks run against old code, see ``FAULT_SERVER_ROOT`` in :mod:`tests.faults.harness`).

:func:`restart_and_check` SIGKILLs the server, starts it again and checks, for every racer:

(a) the board the restarted server shows is the board the racer was last acknowledged,
    or that board plus moves whose answer was ``storage-unavailable`` (in doubt: the write
    may have landed; the stored log then says which did);
(b) the stored log of every seat (the ``race_log`` of the race, once every racer resigned)
    replays through the engine, and every seat's ``replay`` answers;
(c) no acknowledged command is lost: every acknowledged move and undo is in the log, in
    order, with the board the racer saw after its ack; acknowledged joins hold their seat;
    the room is at least as far along as the last acknowledged state change;
(d) versions strictly increase across the restart: the restored room is at least at the
    highest version any racer saw, and the next acknowledged command is past it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import cast

from protocol.messages import AskRaceLog, AskSnapshot, ClientMessage, RaceLog, Replay, Resign, RoomState
from server.games import Autoplay, Game, IllegalMove, InvalidNotation, Options, variant_class
from server.rooms.entries import Played, Resigned, Undone, parse_entry
from server.rooms.record import decode_record
from server.storage.connection import Storage
from server.storage.rooms import RoomStore
from tests.faults.harness import Attempt, Racer, ServerProcess

Board = list[list[int | None]]

#: How far along each room state is: an acknowledged command that left the room in a state
#: must never be undone by a restart.
_PROGRESS: dict[RoomState, int] = {"waiting": 0, "countdown": 1, "racing": 2, "finished": 3}


@dataclass(frozen=True, slots=True)
class Replayed:
    """A seat's stored log, and the board after each entry (``boards[0]``: the deal)."""

    entries: list[str]
    boards: list[Board]


def replay_log(variant: str, deal: str, autoplay: str, entries: list[str]) -> Replayed:
    """Replay ``entries`` through the engine; AssertionError naming the first that does not replay."""
    game: Game = variant_class(variant).new(deal, Options(autoplay=Autoplay(autoplay)))
    boards = [[list(pile) for pile in game.public_piles()]]
    for index, text in enumerate(entries):
        entry = parse_entry(text)
        try:
            match entry:
                case Played(move):
                    game.apply(game.parse_move(move))
                case Undone():
                    game.undo()
                case Resigned():
                    pass
        except (IllegalMove, InvalidNotation) as error:
            raise AssertionError(f"(b) stored log entry {index} ({text!r}) does not replay: {error}") from None
        boards.append([list(pile) for pile in game.public_piles()])
    return Replayed(entries, boards)


def match_ledger(name: str, ledger: list[Attempt], replayed: Replayed) -> None:
    """(a)+(c): the stored log is the racer's acknowledged moves and undos, in order, each
    with the board they saw after its ack, plus some of the in-doubt ones, and nothing else."""
    attempts = [a for a in ledger if a.kind in ("move", "undo", "resign") and a.outcome != "refused"]
    entries = replayed.entries

    def fits(attempt: Attempt, index: int) -> bool:
        text = entries[index]
        if attempt.kind == "resign":
            if not text.startswith("resign "):
                return False
        elif attempt.kind == "undo":
            if text != "undo":
                return False
        elif text != (attempt.move or attempt.text):
            return False
        # The board after an acknowledged move is the one the stored log leads to.
        return attempt.outcome != "ack" or attempt.board is None or replayed.boards[index + 1] == attempt.board

    # reach[i] = log positions reachable after the first i attempts (acked ones must match,
    # in-doubt ones may or may not have landed).
    reach = {0}
    for attempt in attempts:
        after = set()
        for position in reach:
            if attempt.outcome == "doubt":
                after.add(position)
            if position < len(entries) and fits(attempt, position):
                after.add(position + 1)
        if not after:
            raise AssertionError(
                f"(c) {name}: acknowledged {attempt.kind} {attempt.text!r} (version {attempt.version}) is not "
                f"where the stored log puts it: log {entries}, attempts {[(a.text, a.outcome) for a in attempts]}"
            )
        reach = after
    # Entries a server adds on its own (a resignation for a dropped racer) may end the log.
    if not any(p == len(entries) or all(e.startswith("resign ") for e in entries[p:]) for p in reach):
        raise AssertionError(f"(c) {name}: the stored log {entries} holds entries never acknowledged nor in doubt")


def in_doubt_tail(ledger: list[Attempt]) -> bool:
    """Whether the racer's board commands after its last acknowledged one include one in doubt."""
    tail: list[Attempt] = []
    for attempt in ledger:
        if attempt.kind in ("move", "undo"):
            tail = [] if attempt.outcome == "ack" else [*tail, attempt]
    return any(a.outcome == "doubt" for a in tail)


async def stored_log(redis_url: str, code: str, seat: int) -> list[str]:
    """The stored log of ``seat``, read from Redis directly (for failure messages)."""
    storage = await Storage.connect(redis_url)
    try:
        store = RoomStore(storage)
        stored = await store.load(code)
        assert stored is not None
        return (await store.logs(code, decode_record(stored.record).race)).get(seat, [])
    finally:
        await storage.close()


def summary(ledger: list[Attempt]) -> list[tuple[str, str, str, int]]:
    return [(a.kind, a.move or a.text, a.code or a.outcome, a.version) for a in ledger]


def last_acked_board(ledger: list[Attempt]) -> Board | None:
    """The board after the last acknowledged move or undo; None if the racer stopped (was
    cancelled) before that ack's events arrived, or acknowledged none."""
    acked = [a for a in ledger if a.outcome == "ack" and a.kind in ("move", "undo")]
    return acked[-1].board if acked else None


async def restart_and_check(
    server: ServerProcess, racers: list[Racer], code: str, *, kill: bool = True, finish: bool = True
) -> RaceLog | None:
    """Restart the server (SIGKILL first unless ``kill`` is false: it already died), reconnect
    every racer and check (a), (c) and (d); with ``finish``, every racer resigns and the race
    log is checked for (b) and (c). Returns the race log."""
    seen = {racer.name: racer.seen.get(code, 0) for racer in racers}
    if kill:
        await server.kill()
    await server.start()
    for racer in racers:
        await racer.reconnect(server.url)
    views = {}
    for racer in racers:
        mirror = await racer.wait_mirror(code)
        await racer.client.request(lambda i: AskSnapshot(id=i, room=code))
        mirror = racer.mirror(code)
        views[racer.name] = mirror.view()
        # (d) versions never go back.
        assert mirror.version >= seen[racer.name], (
            f"(d) {racer.name} saw version {seen[racer.name]}, the restored room is at {mirror.version}"
        )
        # (c) an acknowledged join holds its seat.
        if racer.acked("join") or racer.acked("create"):
            assert racer.client.roles.get(code) == "racer", f"(c) {racer.name}'s acknowledged seat is gone"
            assert racer.seat is not None
            assert any(r.seat == racer.seat and r.player == racer.client.player for r in mirror.view().racers)
        # (a) the restored board is the one last acknowledged (unless a command was in doubt).
        board = last_acked_board(racer.ledger)
        seat = racer.seat
        if board is not None and seat is not None and not in_doubt_tail(racer.ledger) and mirror.board(seat) != board:
            raise AssertionError(
                f"(a) {racer.name}'s restored board (version {mirror.version}) is not the last acknowledged: "
                f"{mirror.board(seat)} != {board}; ledger {summary(racer.ledger)}; "
                f"stored log {await stored_log(server.redis_url, code, seat)}"
            )
    state = next(iter(views.values())).state
    for racer in racers:
        # (c) an acknowledged move was made in a race; an acknowledged ready stays while waiting.
        if racer.acked("move"):
            assert _PROGRESS[state] >= _PROGRESS["racing"], f"(c) {racer.name} moved, yet the room is {state}"
        readies = [a for a in racer.ledger if a.kind in ("ready", "unready") and a.outcome == "ack"]
        if state == "waiting" and readies and readies[-1].kind == "ready":
            shown = next(r for r in views[racer.name].racers if r.seat == racer.seat)
            assert shown.ready, f"(c) {racer.name}'s acknowledged ready is lost"
    if not finish:
        return None
    assert state == "racing", f"the room is {state}, not racing"
    top = max(seen.values())
    for racer in racers:
        attempt = await resign_until_acked(racer, code)
        if attempt is not None:
            assert attempt.version > top, f"(d) an ack after the restart at version {attempt.version} <= {top}"
    log = await race_log_of(racers[0], code)
    check_race_log(log, racers)
    for number in [racer.seat for racer in racers]:
        assert number is not None
        reply = await racers[0].client.request(functools.partial(_ask_replay, code, number))
        assert isinstance(reply, Replay), reply
    return log


def _ask_replay(code: str, seat: int, request_id: int) -> ClientMessage:
    # Without the optional ``race``, as the first protocol had it: the checks also run
    # against old servers (FAULT_SERVER_ROOT), whose requests refuse unknown fields.
    return cast(ClientMessage, {"type": "replay", "id": request_id, "room": code, "seat": seat})


async def resign_until_acked(racer: Racer, code: str) -> Attempt | None:
    """Resign (the storage is up: it is acknowledged, or the racer was already done)."""
    mirror = racer.mirror(code)
    if mirror.view().state != "racing" or any(
        r.seat == racer.seat and (r.resigned or r.finished_ms is not None) for r in mirror.view().racers
    ):
        return None
    attempt = await racer.command("resign", code, lambda i: Resign(id=i, room=code))
    assert attempt.outcome == "ack" or attempt.code == "not-racing", attempt
    return attempt if attempt.outcome == "ack" else None


async def race_log_of(racer: Racer, code: str, race: int | None = None) -> RaceLog:
    def ask(request_id: int) -> ClientMessage:
        if race is not None:
            return AskRaceLog(id=request_id, room=code, race=race)
        # Without the optional field (see _ask_replay).
        return cast(ClientMessage, {"type": "race_log", "id": request_id, "room": code})

    reply = await racer.client.request(ask)
    assert isinstance(reply, RaceLog), reply
    return reply


def check_race_log(log: RaceLog, racers: list[Racer]) -> None:
    """(b) every seat's log replays; (a)+(c) each racer's ledger fits it."""
    by_seat = {r.seat: r.moves for r in log.racers}
    for racer in racers:
        assert racer.seat in by_seat, f"(c) {racer.name}'s seat {racer.seat} is not in the race log"
        replayed = replay_log(log.variant, log.deal, log.options.autoplay, by_seat[racer.seat])
        match_ledger(racer.name, racer.ledger, replayed)
