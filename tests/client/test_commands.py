"""The script commands: the lobby listing, a plain event log of a room, bots, and a
player's leaderboards and statistics."""

from __future__ import annotations

import asyncio
import io
import re
import sys
import time
from pathlib import Path

import pytest

from client.__main__ import main, parse_args
from client.commands import DEFAULT_SERVER, list_rooms, run_bots, show_leaderboard, show_stats, watch_plain
from client.lib.connection import RaceClient
from client.lib.settings import Settings
from client.render.describe import precise_duration
from protocol.messages import (
    AccountInfo,
    CreateRoom,
    Joined,
    JoinRoom,
    Ready,
    Register,
    Resign,
    RoomOptions,
    StartDaily,
)
from server.competition.daily import utc_date
from server.storage.connection import Storage
from tests.client.conftest import PATIENCE, Serve, ServeDaily, playing
from tests.doubles.clock import AheadClock
from tests.end_to_end.conftest import PERSON_PACE, cleared_by_a_moderator, registered_before_today
from tests.known_deals import ANTARES_DEAL, winning_line

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[2]


async def test_rooms_lists_the_public_rooms(serve: Serve) -> None:
    async with serve() as srv:
        out = io.StringIO()
        assert await list_rooms(srv.url, out) == 0
        assert out.getvalue() == "no public rooms right now\n"
        ann = await srv.connect("Ann")
        created = await ann.request(
            lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(public=True, max_racers=3))
        )
        assert isinstance(created, Joined)
        out = io.StringIO()
        await list_rooms(srv.url, out)
        assert out.getvalue().split() == [created.room, "scorpion", "waiting", "1/3", "racers", "0", "watching", "Ann"]


async def test_rooms_prints_a_page_and_how_to_ask_for_the_next_and_one_game(serve: Serve) -> None:
    async with serve(max_rooms_per_player=10, public_rooms_per_address=100) as srv:
        await srv.fifty_one_public_rooms()
        out = io.StringIO()
        assert await list_rooms(srv.url, out) == 0
        *rooms, more = out.getvalue().splitlines()
        assert len(rooms) == 50
        assert more.startswith("more rooms: solitaire-race rooms --after ")
        suggested = parse_args(more.removeprefix("more rooms: solitaire-race ").split())  # as a user types it
        assert (suggested.command, suggested.server) == ("rooms", srv.url)  # not the default server
        cursor = suggested.after
        out = io.StringIO()
        assert await list_rooms(srv.url, out, after=cursor) == 0
        assert len(out.getvalue().splitlines()) == 1  # the last room, and no "more"
        out = io.StringIO()
        assert await list_rooms(srv.url, out, variant="scorpion") == 0
        assert [line.split()[1] for line in out.getvalue().splitlines()] == ["scorpion"] * 25
        assert await list_rooms(srv.url, io.StringIO(), after="page 2") == 1  # the server refused it


async def test_watch_plain_prints_a_line_per_event_until_the_race_is_over(serve: Serve) -> None:
    moves = winning_line()
    async with serve(deal=str(ANTARES_DEAL)) as srv:
        ann, bob = await srv.connect("Ann"), await srv.connect("Bob")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="antares"))
        assert isinstance(created, Joined)
        code = created.room
        await bob.request(lambda i: JoinRoom(id=i, room=code))
        out = io.StringIO()
        watching = asyncio.create_task(watch_plain(srv.url, code, out=out))
        await ann.wait_room(code, lambda m: m.view().spectators == 1)
        for racer in (ann, bob):
            await racer.request(lambda i: Ready(id=i, room=code))
        await ann.wait_room(code, lambda m: m.board(0) is not None)
        await bob.request(lambda i: Resign(id=i, room=code))
        for text in moves:
            await ann.request(playing(code, text))
        assert await asyncio.wait_for(watching, 10) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"room {code} antares race 1 waiting: Ann (0/52 home, 0 moves), Bob")
    assert any(line.endswith("Ann is ready") for line in lines)
    assert any(line.endswith("state racing (race 1)") for line in lines)
    assert any(line.endswith("Bob resigned (resigned)") for line in lines)
    assert any(line.endswith(f"Ann: 52/52 home, {len(moves)} moves") for line in lines)
    # Two racers: a rated race. Each new rating shows with its change.
    finished = lines[-3].split("finished in ")[1].split(",")[0]
    assert lines[-4:] == [
        lines[-4][: lines[-4].index("]") + 1] + " race over:",
        f"  1. Ann: finished in {finished}, {len(moves)} moves, rating {lines[-3].split('rating ')[1]}",
        f"  2. Bob: 0/52 home, 0 moves, rating {lines[-2].split('rating ')[1]}",
        f"  deal {ANTARES_DEAL}",
    ]
    ann_rating = re.fullmatch(r"(\d+) \(\+(\d+)\)", lines[-3].split("rating ")[1])
    bob_rating = re.fullmatch(r"(\d+) \(-(\d+)\)", lines[-2].split("rating ")[1])
    # The winner gains, the other loses.
    assert ann_rating is not None
    assert bob_rating is not None
    assert int(ann_rating[1]) == 1500 + int(ann_rating[2])


async def test_watch_plain_takes_a_lowercase_code_and_prints_the_header(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        out = io.StringIO()
        watching = asyncio.create_task(watch_plain(srv.url, created.room.lower(), out=out))
        await ann.wait_room(created.room, lambda m: m.view().spectators == 1)
        await ann.request(lambda i: Ready(id=i, room=created.room))
        await ann.wait_room(created.room, lambda m: m.view().racers[0].ready)
        await asyncio.sleep(0.2)
        watching.cancel()
        lines = out.getvalue().splitlines()
        assert lines[0].startswith(f"room {created.room} scorpion race 1 waiting: Ann")
        assert lines[-1].endswith("Ann is ready")


async def test_bot_options_out_of_range_say_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["bot", "--racers", "9"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("argument --racers: 9 is out of range: 1 to 8")


async def test_server_and_config_dir_go_before_or_after_the_command() -> None:
    assert parse_args(["rooms"]).server == DEFAULT_SERVER
    assert parse_args(["--server", "ws://a:1", "rooms"]).server == "ws://a:1"
    assert parse_args(["rooms", "--server", "ws://a:1"]).server == "ws://a:1"
    assert parse_args(["--server", "ws://a:1", "rooms", "--server", "ws://b:2"]).server == "ws://b:2"  # the last
    after = parse_args(["leaderboard", "antares", "--config-dir", "/c", "--server", "ws://a:1"])
    assert (after.config_dir, after.server, after.game) == ("/c", "ws://a:1", "antares")
    assert parse_args(["--config-dir", "/c", "stats", "scorpion"]).config_dir == "/c"
    assert parse_args(["stats", "scorpion"]).config_dir is None


async def test_a_server_given_after_the_command_is_the_one_used() -> None:
    """What the user sees of ``solitaire-race rooms --server URL``: that server, not an error."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "rooms", "--server", "ws://127.0.0.1:1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    printed, said = await asyncio.wait_for(process.communicate(), PATIENCE)
    assert process.returncode == 2
    assert printed == b""
    assert said.decode().splitlines() == [said.decode().strip()]  # one line
    assert said.decode().startswith("cannot reach the server at ws://127.0.0.1:1: ")


async def test_a_leaderboard_limit_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for limit, why in [("0", "0 is out of range: 1 to 100"), ("101", "101 is out of range: 1 to 100"),
                       ("ten", "'ten' is not a whole number")]:  # fmt: skip
        with pytest.raises(SystemExit) as stop:
            main(["leaderboard", "antares", "--limit", limit])
        assert stop.value.code == 2
        said = capsys.readouterr().err
        assert said.splitlines()[-1] == f"solitaire-race leaderboard: error: argument --limit: {why}"
        assert "choose from" not in said
        assert len(said.splitlines()) <= 6, said  # the usage, then that line: no list of the allowed values
    assert parse_args(["leaderboard", "antares", "--limit", "100"]).limit == 100
    assert parse_args(["leaderboard", "antares"]).limit == 10


@pytest.mark.parametrize("command", [[], ["play"], ["rooms"], ["watch"], ["bot"], ["leaderboard"], ["stats"]])
async def test_help_names_the_installed_command_and_shows_only_real_defaults(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*command, "--help"])
    assert stop.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(" ".join(["usage: solitaire-race", *command]) + " ")
    assert "__main__" not in shown
    assert "python -m" not in shown
    for empty in ("(default: )", "(default: ())", "(default: None)", "(default None)"):
        assert empty not in shown
    assert "--server SERVER" in shown  # every command takes it


async def test_the_installed_command_names_itself_in_its_help() -> None:
    script = Path(sys.executable).parent / "solitaire-race"
    if not script.exists():
        pytest.skip("the package is not installed in this interpreter's environment")
    process = await asyncio.create_subprocess_exec(str(script), "--help", stdout=asyncio.subprocess.PIPE, cwd=ROOT)
    printed, _ = await asyncio.wait_for(process.communicate(), PATIENCE)
    assert process.returncode == 0
    assert printed.decode().startswith("usage: solitaire-race [-h] [--server SERVER]")


async def test_without_a_saved_player_the_commands_say_how_to_save_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await show_stats("ws://127.0.0.1:1", "antares", directory=tmp_path) == 1
    said = capsys.readouterr().err.strip()
    assert said.endswith("play once with `solitaire-race --server ws://127.0.0.1:1` first")  # that server's player


async def test_bots_race_each_other_by_the_servers_hints(serve: Serve) -> None:
    async with serve() as srv:
        out = io.StringIO()
        assert await run_bots(srv.url, rooms=2, racers=2, variant="scorpion", delay=0, max_moves=25, out=out) == 0
    lines = out.getvalue().splitlines()
    assert sorted(line.split(":")[1] for line in lines if "racing" in line) == [" 2 bots racing scorpion"] * 2
    results = [line for line in lines if line.startswith("  ")]
    assert len(results) == 4  # every bot of both rooms ranked
    assert all(line.split(":")[0].strip()[3:].startswith("Bot-") for line in results)


async def test_bots_say_which_rooms_the_server_did_not_open(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    async with serve(public_rooms_per_address=1) as srv:
        out = io.StringIO()
        assert await run_bots(srv.url, rooms=2, racers=1, variant="antares", delay=0, max_moves=5, out=out) == 0
    assert len([line for line in out.getvalue().splitlines() if "racing" in line]) == 1
    (refused,) = capsys.readouterr().err.splitlines()
    assert refused.startswith("room ")
    assert "not opened: at most 1 unfinished public rooms from one address" in refused


async def test_a_bot_can_join_a_persons_room_and_race_them(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        out = io.StringIO()
        bot = asyncio.create_task(run_bots(srv.url, join=created.room, delay=0, max_moves=10, races=1, out=out))
        await ann.wait_room(created.room, lambda m: len(m.view().racers) == 2 and m.view().racers[1].ready)
        await ann.request(lambda i: Ready(id=i, room=created.room))
        assert await asyncio.wait_for(bot, 30) == 0
        mirror = await ann.wait_room(created.room, lambda m: m.view().racers[1].resigned)
        assert mirror.view().racers[1].progress.moves <= 10
        assert out.getvalue().splitlines()[-1].startswith("bot resigned after ")


async def play_daily(client: RaceClient, storage: Storage | None, solution: tuple[str, ...], clock: AheadClock) -> str:
    """Register (only accounts registered before the day play today's deal: dated back with
    ``storage``), start today's Antares daily challenge and play ``solution`` to the end at a
    person's pace on the room's ``clock``, then clear the entry the anti-cheat check holds (a
    replayed solution); the room code."""
    account = await client.request(lambda i: Register(id=i, name=client.name, password="a daily password"))
    assert isinstance(account, AccountInfo)
    assert storage is not None
    await registered_before_today(storage, account.player)
    joined = await client.request(lambda i: StartDaily(id=i, variant="antares"))
    assert isinstance(joined, Joined)
    code = joined.room
    await client.wait_room(code, lambda m: m.view().state == "racing", timeout=PATIENCE)
    for text in solution:
        clock.skip(PERSON_PACE)
        await client.request(playing(code, text))
    await client.wait_room(code, lambda m: m.view().state == "finished")
    await cleared_by_a_moderator(storage, "antares", account.player)
    return code


async def test_leaderboard_and_stats_print_the_saved_players_lines(serve_daily: ServeDaily, tmp_path: Path) -> None:
    clock = AheadClock()
    async with serve_daily(clock=clock) as (srv, deal):
        ann = await srv.connect("Ann")
        await play_daily(ann, srv.server.storage, deal.solution, clock)
        assert ann.resume is not None
        Settings(tmp_path, name="Ann", tokens={srv.url: ann.resume}).save()
        mirror_time = next(iter(ann.rooms.values())).view().racers[0].finished_ms
        assert mirror_time is not None
        time_text = precise_duration(mirror_time)
        assert re.fullmatch(r"\d+:\d\d\.\d\d", time_text)

        out = io.StringIO()
        assert await show_leaderboard(srv.url, "antares", directory=tmp_path, out=out) == 0
        today = utc_date(int(time.time() * 1000))
        assert out.getvalue().splitlines() == [
            f"Antares · Today's daily ({today}) · top 1:",
            f"  1. Ann  {time_text}  {deal.par} moves  (you)",
        ]

        out = io.StringIO()
        assert await show_leaderboard(srv.url, "antares", "wins", around=True, directory=tmp_path, out=out) == 0
        assert out.getvalue().splitlines() == ["Antares · Daily wins · around you:", "  1. Ann  1  (you)"]

        out = io.StringIO()
        assert await show_leaderboard(srv.url, "scorpion", "best-time", directory=tmp_path, out=out) == 0
        assert out.getvalue().splitlines() == ["Scorpion · Best daily time · top:", "  nobody is on this board yet"]

        out = io.StringIO()
        assert await show_stats(srv.url, "antares", directory=tmp_path, out=out) == 0
        lines = out.getvalue().splitlines()
        assert lines[0] == "Ann · Antares:"
        assert "  Daily attempts: 1" in lines
        assert "  Daily wins:     1" in lines
        assert f"  Best time:      {time_text}" in lines
        assert "  Daily streak:   1 day" in lines
        assert lines[-1].startswith("  Rating:         1500 ± ")

        # The command line itself, as a user types it.
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client", "--server", srv.url, "--config-dir", str(tmp_path),
            "leaderboard", "antares", "--board", "streak", "--around",
            stdout=asyncio.subprocess.PIPE, cwd=ROOT,
        )  # fmt: skip
        printed, _ = await asyncio.wait_for(process.communicate(), PATIENCE)
        assert process.returncode == 0
        assert printed.decode().splitlines() == ["Antares · Longest streak · around you:", "  1. Ann  1 day  (you)"]

        # Without a saved player there is nobody to show: a message, and a failure status.
        assert await show_stats(srv.url, "antares", directory=tmp_path / "nobody", out=io.StringIO()) == 1
