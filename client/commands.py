"""The non-interactive commands of ``solitaire-race`` (``python -m client``): ``rooms``, ``watch CODE --plain``,
``bot``, ``leaderboard GAME`` and ``stats GAME``. Each prints lines to ``out`` and returns
an exit status. Most connect as a throwaway player (no saved name or token); ``stats``
and ``leaderboard`` connect as the player the UI saved for that server, since they are
about that player (their statistics, their line on a board)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Final, TextIO

from client.lib.bot import Bot, BotResult, Level, join_and_stay
from client.lib.connection import RaceClient, ServerError
from client.lib.settings import Settings, config_dir
from client.render.describe import count, event_line, results_lines, summary_line
from client.render.standings import leaderboard_lines, stats_lines
from protocol.messages import (
    AskLeaderboard,
    AskStats,
    CreateRoom,
    Joined,
    JoinRoom,
    Leaderboard,
    LeaderboardName,
    ListRooms,
    Lobby,
    PlayerStats,
    Rematch,
    RoomOptions,
    ServerMessage,
    Snapshot,
    Spectate,
    Update,
    Variant,
)

#: The client's name in its help and in the commands it suggests: the installed command's.
PROG: Final = "solitaire-race"
DEFAULT_SERVER: Final = "ws://127.0.0.1:8765"


async def list_rooms(
    url: str, out: TextIO = sys.stdout, variant: Variant | None = None, after: str | None = None
) -> int:
    """Print a page of the public rooms that are not finished, one a line (``variant``'s only,
    if given; the page after cursor ``after``, else the first), then how to ask for the next."""
    async with await RaceClient.connect(url, "lobby", reconnect=False) as client:
        try:
            lobby = await client.request(lambda i: ListRooms(id=i, after=after, variant=variant))
        except ServerError as error:
            print(f"cannot list the rooms: {error}", file=sys.stderr)
            return 1
    assert isinstance(lobby, Lobby)
    if not lobby.rooms:
        print("no public rooms right now", file=out)
    for room in lobby.rooms:
        names = ", ".join(room.racers) or "-"
        print(
            f"{room.code}  {room.variant:<8}  {room.state:<9}  {len(room.racers)}/{room.max_racers} racers"
            f"  {room.spectators} watching  {names}",
            file=out,
        )
    if lobby.next is not None:
        game = "" if variant is None else f" --game {variant}"
        print(f"more rooms: {PROG} rooms{game} --after {lobby.next}{_server_flag(url)}", file=out)
    return 0


def _server_flag(url: str) -> str:
    """`` --server URL`` for a command this one suggests, unless ``url`` is the default."""
    return "" if url == DEFAULT_SERVER else f" --server {url}"


async def _as_saved_player(url: str, directory: str | Path | None) -> RaceClient | None:
    """Connect as the player the UI saved for ``url`` (name and resume token); None, after
    saying why on stderr, when there is none."""
    settings = Settings.load(config_dir(directory))
    token = settings.tokens.get(url)
    if token is None or settings.name is None:
        print(
            f"no player saved for {url} in {settings.directory}: play once with `{PROG}{_server_flag(url)}` first",
            file=sys.stderr,
        )
        return None
    client = await RaceClient.connect(url, settings.name, resume=token, reconnect=False)
    if client.resume is not None and client.resume != token:
        settings.tokens[url] = client.resume
        settings.save()
    return client


async def show_leaderboard(
    url: str,
    variant: Variant,
    board: LeaderboardName = "daily",
    around: bool = False,
    limit: int = 10,
    directory: str | Path | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Print a leaderboard of ``variant``: its top ``limit``, or (``around``) the entries
    around the saved player; the saved player's line ends with ``(you)``."""
    client = await _as_saved_player(url, directory)
    if client is None:
        return 1
    async with client:
        reply = await client.request(
            lambda i: AskLeaderboard(id=i, variant=variant, board=board, limit=limit, around=around)
        )
    assert isinstance(reply, Leaderboard)
    print(*leaderboard_lines(reply, around), sep="\n", file=out)
    return 0


async def show_stats(url: str, variant: Variant, directory: str | Path | None = None, out: TextIO = sys.stdout) -> int:
    """Print the saved player's statistics in ``variant``."""
    client = await _as_saved_player(url, directory)
    if client is None:
        return 1
    async with client:
        reply = await client.request(lambda i: AskStats(id=i, variant=variant))
    assert isinstance(reply, PlayerStats)
    print(*stats_lines(reply), sep="\n", file=out)
    return 0


async def watch_plain(url: str, code: str, follow: bool = False, out: TextIO = sys.stdout) -> int:
    """Spectate ``code`` and print a line per event until the race is over (with ``follow``,
    across rematches until interrupted)."""
    code = code.strip().upper()  # room codes are upper case; the frames name it so
    done = asyncio.Event()
    names: dict[int, str] = {}

    def on_message(room: str, message: ServerMessage) -> None:
        try:
            show(room, message)
        except BrokenPipeError:
            done.set()  # the reader went away (``| head``): stop watching

    def show(room: str, message: ServerMessage) -> None:
        mirror = client.rooms.get(room)
        if mirror is None or room != code:
            return
        view = mirror.view()
        names.update({racer.seat: racer.name for racer in view.racers})
        if isinstance(message, Snapshot):
            print(summary_line(view), file=out)
            if view.state == "finished" and view.results is not None:
                print("race over:", *results_lines(view.results), sep="\n", file=out)
                if not follow:
                    done.set()
        elif isinstance(message, Update):
            for event in message.events:
                line = event_line(view, names, event)
                if line is not None:
                    print(f"[v{message.version}] {line}", file=out)
            if view.state == "finished" and not follow:
                done.set()
        out.flush()

    async with await RaceClient.connect(url, "watcher") as client:
        client.listen(on_message)
        try:
            joined = await client.request(lambda i: Spectate(id=i, room=code))
        except ServerError as error:
            print(f"cannot watch {code}: {error}", file=sys.stderr)
            return 1
        assert isinstance(joined, Joined)
        code = joined.room
        await done.wait()
    return 0


async def _bot_room(
    url: str,
    index: int,
    racers: int,
    variant: Variant,
    public: bool,
    level: Level,
    delay: float | None,
    races: int,
    max_moves: int,
    out: TextIO,
) -> None:
    """One room of bots: the first creates it, the others join; they race ``races`` times."""
    clients = [await RaceClient.connect(url, f"Bot-{index}-{seat + 1}", bot=True) for seat in range(racers)]
    try:
        options = RoomOptions(max_racers=racers, public=public)
        try:
            created = await clients[0].request(lambda i: CreateRoom(id=i, variant=variant, options=options))
        except ServerError as error:  # the server's limits (public rooms from one address, ...)
            print(f"room {index} not opened: {error}", file=sys.stderr, flush=True)
            return
        assert isinstance(created, Joined)
        code = created.room
        for client in clients[1:]:
            await client.request(lambda i: JoinRoom(id=i, room=code))
        print(f"room {code}: {racers} bots racing {variant}", file=out, flush=True)
        for race in range(races):
            bots = [
                Bot(client, code, level, delay=delay, max_moves=max_moves, seed=index * 100 + seat)
                for seat, client in enumerate(clients)
            ]
            for bot in bots:
                await bot.ready()
            outcomes: list[BotResult] = await asyncio.gather(*(bot.play() for bot in bots))
            mirror = await clients[0].wait_room(code, lambda m: m.view().results is not None, timeout=30)
            results = mirror.view().results or []
            won = sum(outcome.won for outcome in outcomes)
            print(f"room {code} race {race + 1}: {won} of {racers} won", *results_lines(results), sep="\n", file=out)
            out.flush()
            if race + 1 < races:
                await clients[0].request(lambda i: Rematch(id=i, room=code))
                await clients[0].wait_room(code, lambda m: m.view().state == "waiting")
    finally:
        for client in clients:
            await client.close()


async def run_bots(
    url: str,
    rooms: int = 1,
    racers: int = 2,
    variant: Variant = "scorpion",
    public: bool = True,
    level: Level = "hard",
    delay: float | None = None,
    races: int | None = None,
    join: str | None = None,
    max_moves: int = 600,
    out: TextIO = sys.stdout,
) -> int:
    """``rooms`` rooms of ``racers`` bots each, racing ``races`` times (None: once); or
    (``join``) one bot in an existing room, which stays for rematches (``races`` of them
    at most) until it is alone there."""
    if join is not None:

        def told(outcome: BotResult) -> None:
            verdict = "won" if outcome.won else "resigned" if outcome.resigned else "did not win"
            print(f"bot {verdict} after {count(outcome.moves, 'move')}", file=out, flush=True)

        def seated(room: str) -> None:
            print(f"{level} bot ready in room {room}", file=out, flush=True)

        try:
            await join_and_stay(url, join, level, delay, races, max_moves, on_ready=seated, on_race=told)
        except ServerError as error:
            print(f"cannot join {join}: {error}", file=sys.stderr)
            return 1
        return 0
    tasks = [
        _bot_room(url, n + 1, racers, variant, public, level, delay, races or 1, max_moves, out) for n in range(rooms)
    ]
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*tasks)
    return 0
