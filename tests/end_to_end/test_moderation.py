"""Fair daily boards and moderation through the real server and Redis, with the admin tool
run beside the running server (``python -m server admin``, in the test's process): one ranked daily
attempt per person, who may watch, bans that disconnect, renames, board entries removed with
exact re-ranking, rooms closed, the lists, the admin log, and anti-cheat flags."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import sys
from collections.abc import Sequence

import pytest

from protocol.errors import CloseCode, ErrorCode
from protocol.fairness import commitment
from protocol.messages import (
    PROTOCOL_VERSION,
    AccountInfo,
    CreateRoom,
    Error,
    Hello,
    Joined,
    Login,
    PlayMove,
    Ready,
    Register,
    Resign,
    RoomOptions,
    Snapshot,
    Spectate,
    StartDaily,
    Welcome,
)
from server.admin import parse_args
from server.admin import run as run_admin
from server.clock import now_ms
from server.competition.daily import DailyDeal, utc_date
from server.live.runner import RoomRunner
from server.storage.deals import DealStore
from server.storage.keys import Keys
from server.storage.moderation import ModerationStore
from server.supply.certified import DailyDeals
from tests.doubles.clock import AheadClock
from tests.end_to_end.conftest import RawClient, RunningServer, ServerFactory, eventually, registered_before_today
from tests.known_deals import ANTARES_DEAL, winning_line

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"
#: How ``admin log`` names the tests' moderator: the name acted under, then who really ran it.
MODERATOR = f"test-moderator (OS user {pwd.getpwuid(os.getuid()).pw_name}@{socket.gethostname()})"


def today() -> str:
    return utc_date(now_ms())


async def offer_daily(srv: RunningServer, solution: Sequence[str] = (), date: str | None = None) -> DailyDeal:
    """Give the server (which runs no solver) the Antares deal of ``date`` (today by default):
    the known deal, with ``solution`` as the solver's par line."""
    storage = srv.server.storage
    assert storage is not None
    deals = DealStore(storage)
    deal, salt = str(ANTARES_DEAL), "5a" * 16
    day = date or today()
    daily = DailyDeal("antares", day, deal, len(solution), tuple(solution), salt, commitment("antares", deal, salt))
    await deals.store_daily(daily)
    srv.hub.daily = DailyDeals(deals, srv.hub.secret)
    return daily


async def account(srv: RunningServer, name: str, before_today: bool = True) -> tuple[RawClient, AccountInfo]:
    """A connection that registered as ``name``, and its account, dated back to before today
    (today's deal is for those) unless ``before_today`` is false."""
    client = await srv.raw(name)
    reply = await client.request(lambda i: Register(id=i, name=name, password=PASSWORD))
    assert isinstance(reply, AccountInfo), reply
    if before_today:
        assert srv.server.storage is not None
        await registered_before_today(srv.server.storage, reply.player)
    return client, reply


async def start_daily(client: RawClient) -> tuple[str, bool]:
    """Start today's Antares daily; the room and whether the attempt is ranked."""
    joined = await client.request(lambda i: StartDaily(id=i, variant="antares"))
    assert isinstance(joined, Joined), joined
    snapshot = await client.wait_for(lambda m: isinstance(m, Snapshot) and m.room == joined.room)
    assert isinstance(snapshot, Snapshot)
    assert snapshot.view.daily is not None
    return joined.room, snapshot.view.daily.ranked


async def resign_when_racing(srv: RunningServer, client: RawClient, room: str) -> None:
    runner = srv.hub.rooms[room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    await client.request(lambda i: Resign(id=i, room=room))
    await eventually(lambda: runner.finished, what="finished")


async def play(client: RawClient, room: str, move: str) -> None:
    await client.request(lambda i: PlayMove(id=i, room=room, move=move))


async def admin(srv: RunningServer, *args: str, who: str = "test-moderator", env: dict[str, str] | None = None) -> str:
    """``python -m server admin --as who`` against the server's Redis: its output (it must
    succeed). Run in this process, or as its own process with ``env`` added to the environment."""
    config = srv.server.config
    assert config.redis_url is not None
    argv = ["--redis-url", config.redis_url, "--key-prefix", config.key_prefix, "--as", who, *args]
    if env is None:
        return "\n".join(await run_admin(parse_args(argv))) + "\n"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "admin",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd(), **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def board(srv: RunningServer) -> list[tuple[int, str]]:
    return [(entry.rank, entry.name) for entry in await srv.hub.boards.top("antares", today(), 10)]


async def until_board(srv: RunningServer, size: int) -> None:
    for _ in range(500):
        if len(await board(srv)) >= size:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the daily board never had {size} entries")


async def test_one_person_posts_one_ranked_daily_entry_and_guests_never_watch(start_server: ServerFactory) -> None:
    async with start_server(accounts_per_address=2) as srv:
        await offer_daily(srv)
        ann, _ = await account(srv, "Ann")
        dan, _ = await account(srv, "Dan")
        # A third account from the same address is refused: a second identity is not free.
        spare = await srv.raw("Eve")
        refused = await spare.request(lambda i: Register(id=i, name="Eve", password=PASSWORD))
        assert isinstance(refused, Error)
        assert refused.code == ErrorCode.ADDRESS_LIMIT
        guest = await srv.raw("Guest")

        ann_room, ranked = await start_daily(ann)
        assert ranked
        # Dan uses his ranked attempt; then he may watch Ann's, a guest never may.
        dan_room, ranked = await start_daily(dan)
        assert ranked
        await resign_when_racing(srv, dan, dan_room)
        assert isinstance(await dan.request(lambda i: Spectate(id=i, room=ann_room)), Joined)
        watching = await guest.request(lambda i: Spectate(id=i, room=ann_room))
        assert isinstance(watching, Error)
        assert watching.code == ErrorCode.NOT_ALLOWED
        # Equal entries rank in the order they are recorded, after each race's own write.
        await until_board(srv, 1)
        await resign_when_racing(srv, ann, ann_room)

        # Ann on a second device, and the guest, cannot play today's deal at all.
        laptop = await srv.raw("Ann's laptop")
        assert isinstance(await laptop.request(lambda i: Login(id=i, name="Ann", password=PASSWORD)), AccountInfo)
        for client in (laptop, guest):
            refused = await client.request(lambda i: StartDaily(id=i, variant="antares"))
            assert isinstance(refused, Error)
            assert refused.code == ErrorCode.DAILY_CLOSED
        await until_board(srv, 2)
        await asyncio.sleep(0.2)  # any wrongly recorded entry would be on the board by now
        assert await board(srv) == [(1, "Dan"), (2, "Ann")]  # recorded first: ranks first


async def test_removing_a_board_entry_re_ranks_the_board(start_server: ServerFactory) -> None:
    async with start_server(accounts_per_address=5) as srv:
        await offer_daily(srv)
        players = {}
        for name in ("Ann", "Bob", "Cleo"):
            client, info = await account(srv, name)
            players[name] = info.player
            room, ranked = await start_daily(client)
            assert ranked
            await resign_when_racing(srv, client, room)
            await until_board(srv, len(players))
        assert await board(srv) == [(1, "Ann"), (2, "Bob"), (3, "Cleo")]
        out = await admin(srv, "remove-entry", "antares", "daily", players["Bob"], "--date", today())
        assert "removed" in out
        assert await board(srv) == [(1, "Ann"), (2, "Cleo")]
        assert await srv.hub.boards.rank("antares", today(), players["Cleo"]) == 2
        assert "not on" in await admin(srv, "remove-entry", "antares", "daily", players["Bob"])
        # A rename reaches the boards already written too.
        assert "on 1 daily boards" in await admin(srv, "rename", players["Cleo"], "Clio")
        assert await board(srv) == [(1, "Ann"), (2, "Clio")]
        log = await admin(srv, "log")
        assert f"{MODERATOR}  remove-entry {players['Bob']}" in log


async def test_a_banned_player_is_disconnected_and_kept_out(server: RunningServer) -> None:
    ann, info = await account(server, "Ann")
    second = await server.raw()
    assert isinstance(await second.hello("Ann", resume=info.resume), Welcome)
    out = await admin(server, "ban", info.player, "--reason", "cheating on the daily")
    assert "1 running server(s) told" in out
    for client in (ann, second):
        assert await client.closed() == CloseCode.BANNED
    assert ann.socket.close_reason == "banned: cheating on the daily"
    again = await server.raw()
    refused = await again.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name="Ann", resume=info.resume))
    assert isinstance(refused, Error)
    assert refused.code == ErrorCode.BANNED
    login = await (await server.raw("x")).request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
    assert isinstance(login, Error)
    assert login.code == ErrorCode.BANNED
    assert "BANNED: cheating on the daily" in await admin(server, "players")
    await admin(server, "unban", info.player)
    assert isinstance(await (await server.raw()).hello("Ann", resume=info.resume), Welcome)
    log = await admin(server, "log")
    assert log.index("unban") < log.index("ban " + info.player)  # newest first
    assert "test-moderator" in log


async def test_the_log_names_the_os_user_and_host_whatever_as_says(server: RunningServer) -> None:
    storage = server.server.storage
    assert storage is not None
    # A line written before the OS user and host were logged.
    old = {"who": "bob", "when": now_ms() - 60_000, "action": "unban", "target": "p-old", "detail": ""}
    await storage.redis.lpush(Keys(storage.prefix).admin_log(), json.dumps(old))
    # Acting as alice, with the environment's user names (which getpass would believe) faked.
    out = await admin(server, "unban", "p-new", who="alice", env={"USER": "mallory", "LOGNAME": "mallory"})
    assert "p-new was not banned" in out
    user, host = pwd.getpwuid(os.getuid()).pw_name, socket.gethostname()
    new, old_read = await ModerationStore(storage).actions()
    assert (new.who, new.os_user, new.host, new.action, new.target) == ("alice", user, host, "unban", "p-new")
    assert (old_read.who, old_read.os_user, old_read.host, old_read.target) == ("bob", "", "", "p-old")
    log = (await admin(server, "log")).splitlines()
    assert log[0].endswith(f"  alice (OS user {user}@{host})  unban p-new")
    assert log[1].endswith("  bob  unban p-old")
    assert "mallory" not in "\n".join(log)
    # Under one's own name, the name is given once.
    await admin(server, "unban", "p-own", who=user)
    assert (await admin(server, "log")).splitlines()[0].endswith(f"  {user}  unban p-own")


async def test_rename_close_a_room_list_rooms_and_show_races(server: RunningServer) -> None:
    ann, info = await account(server, "Ann")
    out = await admin(server, "rename", info.player, "Annabel")
    assert "to 'Annabel'" in out
    assert await server.hub.players.name(info.player) == "Annabel"
    relogged = await (await server.raw("x")).request(lambda i: Login(id=i, name="annabel", password=PASSWORD))
    assert isinstance(relogged, AccountInfo)
    assert relogged.name == "Annabel"
    _, bob = await account(server, "Bob")
    taken = await admin(server, "rename", bob.player, "ANNABEL")
    assert "not renamed" in taken

    practice = RoomOptions(max_racers=1, deal="617")
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=practice))
    assert isinstance(created, Joined)
    await ann.request(lambda i: Ready(id=i, room=created.room))
    runner = server.hub.rooms[created.room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    listed = await admin(server, "rooms")
    assert created.room in listed
    assert "Annabel" in listed
    # Closing a room in the middle of its race: the racer resigns and leaves.
    assert "1 running server(s) told" in await admin(server, "close-room", created.room)
    await eventually(lambda: runner.finished and not runner.room.members(), what="room emptied")
    assert "no rooms in progress" in await admin(server, "rooms")
    races = await admin(server, "races", info.player)
    assert f"{created.room} race 1  antares  left" in races


async def racing_ranked_daily(
    server: RunningServer, line: Sequence[str]
) -> tuple[RawClient, AccountInfo, str, RoomRunner]:
    """Ann's ranked attempt at today's deal (whose solution is ``line``), racing: her
    connection, account, room and the room's runner."""
    await offer_daily(server, solution=line)
    ann, info = await account(server, "Ann")
    room, ranked = await start_daily(ann)
    assert ranked
    runner = server.hub.rooms[room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    return ann, info, room, runner


async def test_a_machine_like_ranked_entry_is_flagged_for_moderators_only(server: RunningServer) -> None:
    line = winning_line()
    ann, info, room, runner = await racing_ranked_daily(server, line)
    for text in line:  # the par line, as fast as the server answers
        await play(ann, room, text)
    await eventually(lambda: runner.finished, what="finished")
    for _ in range(500):
        if await server.hub.moderation.flags():
            break
        await asyncio.sleep(0.01)
    flags = await server.hub.moderation.flags()
    assert [flag.player for flag in flags] == [info.player]
    reasons = " ".join(flags[0].reasons)
    assert "fast" in reasons
    assert "par line" in reasons
    assert len(flags[0].gaps_ms) == len(line) - 1
    out = await admin(server, "flags")
    assert info.player in out
    assert "par line" in out
    # Played at machine speed, the entry is refused: it never shows on the board.
    assert await board(server) == []


#: Seconds between the moves of a studied replay: a person's quickest pace, above machine speed
#: (the check's timing is relative, so this scores like 0.3 to 1.0 s would).
STUDIED_PACE = (0.17, 0.23, 0.19, 0.26, 0.21, 0.18)


async def flags_of(srv: RunningServer, player: str) -> list[str]:
    """The verdicts of ``player``'s flags, newest first, once there is one."""
    for _ in range(500):
        flags = [flag.verdict for flag in await srv.hub.moderation.flags() if flag.player == player]
        if flags:
            return flags
        await asyncio.sleep(0.01)
    raise AssertionError(f"{player}'s entry was never flagged")


async def test_a_studied_ranked_entry_is_hidden_until_a_moderator_clears_it(start_server: ServerFactory) -> None:
    clock = AheadClock()
    async with start_server(clock=clock) as server:
        line = winning_line()
        ann, info, room, runner = await racing_ranked_daily(server, line)
        # The solver's line from the first move on, at once, at an even human pace (on the room's
        # clock); then she stops.
        for number, text in enumerate(line[:20]):
            await play(ann, room, text)
            clock.skip(STUDIED_PACE[number % len(STUDIED_PACE)])
        await resign_when_racing(server, ann, room)
        assert await flags_of(server, info.player) == ["flagged"]
        [flag] = await server.hub.moderation.flags()
        assert flag.score >= 0.6
        assert flag.parts["line"] == flag.parts["clean"] == 1.0
        assert flag.first_move_ms is not None
        assert len(flag.gaps_ms) == 19  # between the moves: the resignation says nothing of pace
        assert "line: 20 of 20 choices on the solver's par line (1.00)" in flag.reasons

        # Hidden: not on the board, not in the statistics, and a retried recording adds nothing.
        boards = server.hub.boards
        await runner._recorder.record(runner.room)
        assert await flags_of(server, info.player) == ["flagged"]  # flagged once
        assert await board(server) == []
        assert await boards.rank("antares", today(), info.player) is None
        assert (await boards.stats("antares", info.player, today())).daily_attempts == 0
        assert not await boards.record_daily("antares", today(), info.player, "Ann", False, None, 20, 0, 0)
        out = await admin(server, "flags", "--player", info.player)
        assert "HIDDEN until cleared" in out
        assert "score 1.00: line 1.00, clean 1.00, pace 1.00, start 1.00" in out

        # A moderator clears it: on the board and in the statistics, once.
        assert "it is on the antares daily board" in await admin(server, "clear-flag", "antares", today(), info.player)
        assert await board(server) == [(1, "Ann")]
        assert (await boards.stats("antares", info.player, today())).daily_attempts == 1
        assert "no entry held back" in await admin(server, "clear-flag", "antares", today(), info.player)
        await runner._recorder.record(runner.room)
        assert await board(server) == [(1, "Ann")]
        assert "CLEARED (rank 1)" in await admin(server, "flags")
        assert f"{MODERATOR}  clear-flag {info.player}" in await admin(server, "log")


async def test_a_machine_speed_ranked_entry_never_reaches_the_board(server: RunningServer) -> None:
    line = winning_line()
    await offer_daily(server, solution=line)
    ann, info = await account(server, "Ann")
    room, _ = await start_daily(ann)
    runner = server.hub.rooms[room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    for text in line:  # the winning line, as fast as the server answers
        await play(ann, room, text)
    await eventually(lambda: runner.finished, what="finished")
    assert await flags_of(server, info.player) == ["refused"]
    [flag] = await server.hub.moderation.flags()
    assert flag.reasons[0].startswith("machine speed")
    out = await admin(server, "clear-flag", "antares", today(), info.player)
    assert "refused at machine speed: it stays off" in out
    await runner._recorder.record(runner.room)
    assert await board(server) == []
    assert (await server.hub.boards.stats("antares", info.player, today())).daily_wins == 0
    assert "REFUSED (machine speed: never on the board)" in await admin(server, "flags")
