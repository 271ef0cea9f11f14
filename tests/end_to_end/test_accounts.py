"""Accounts through the real server and Redis: registering keeps a guest's id, statistics and
rating; names are unique across case and look-alikes; logging in from another device; the
brute-force limits (more in test_login_limits.py); revoking tokens; passwords refused over
plain ws:// from afar; guests, bots and practice kept off the boards and out of the statistics."""

from __future__ import annotations

import asyncio
import socket

import pytest

from protocol.errors import CloseCode, ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AccountInfo,
    Ack,
    AskLeaderboard,
    AskStats,
    ChangePassword,
    CreateRoom,
    Error,
    Hello,
    Joined,
    JoinRoom,
    Leaderboard,
    Login,
    Logout,
    PlayerStats,
    RaceOver,
    Ready,
    Register,
    Resign,
    RoomOptions,
    ServerMessage,
    Update,
    Welcome,
)
from tests.end_to_end.conftest import RawClient, RunningServer, ServerFactory, eventually

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"


async def register(client: RawClient, name: str, password: str = PASSWORD) -> AccountInfo:
    reply = await client.request(lambda i: Register(id=i, name=name, password=password))
    assert isinstance(reply, AccountInfo), reply
    return reply


async def try_register(client: RawClient, name: str) -> ServerMessage:
    return await client.request(lambda i: Register(id=i, name=name, password=PASSWORD))


async def login(client: RawClient, name: str, password: str = PASSWORD) -> AccountInfo | Error:
    reply = await client.request(lambda i: Login(id=i, name=name, password=password))
    assert isinstance(reply, AccountInfo | Error), reply
    return reply


async def hello(client: RawClient, name: str, resume: str | None = None, bot: bool = False) -> Welcome | Error:
    reply = await client.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name=name, resume=resume, bot=bot))
    assert isinstance(reply, Welcome | Error), reply
    return reply


def race_over(client: RawClient, room: str) -> RaceOver | None:
    for message in client.messages:
        if isinstance(message, Update) and message.room == room:
            for event in message.events:
                if isinstance(event, RaceOver):
                    return event
    return None


async def race_and_resign(srv: RunningServer, first: RawClient, second: RawClient) -> RaceOver:
    """A two-seat race between the two clients, both resigning once it runs; its end."""
    created = await first.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions()))
    assert isinstance(created, Joined)
    room = created.room
    assert isinstance(await second.request(lambda i: JoinRoom(id=i, room=room)), Joined)
    for client in (first, second):
        assert isinstance(await client.request(lambda i: Ready(id=i, room=room)), Ack)
    runner = srv.hub.rooms[room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    for client in (first, second):
        await client.request(lambda i: Resign(id=i, room=room))
    return await eventually(lambda: race_over(first, room), what="race over")


async def stats(client: RawClient, player: str) -> PlayerStats:
    reply = await client.request(lambda i: AskStats(id=i, variant="antares", player=player))
    assert isinstance(reply, PlayerStats)
    return reply


async def rating_board(client: RawClient) -> list[str]:
    reply = await client.request(lambda i: AskLeaderboard(id=i, variant="antares", board="rating"))
    assert isinstance(reply, Leaderboard)
    return [entry.player for entry in reply.entries]


async def test_a_guest_who_registers_keeps_its_id_statistics_and_rating(server: RunningServer) -> None:
    ann, bob = await server.raw(), await server.raw()
    ann_welcome = await hello(ann, "Ann")
    assert isinstance(ann_welcome, Welcome)
    assert not ann_welcome.account
    assert isinstance(await hello(bob, "Bob"), Welcome)
    await race_and_resign(server, ann, bob)
    player = ann_welcome.player
    before = await stats(ann, player)
    assert before.races_started == 1
    assert before.rating != 1500.0  # rated
    assert await rating_board(ann) == []  # guests are rated, but not on the board

    account = await register(ann, "Ann")
    assert account.player == player
    after = await stats(ann, player)
    assert (after.races_started, after.rating, after.rating_deviation) == (
        before.races_started,
        before.rating,
        before.rating_deviation,
    )
    assert await rating_board(ann) == [player]  # an account's rating is shown

    # The account's token resumes it on a new connection; the guest's token resumes nothing
    # any more (whoever kept a copy of it does not hold the account).
    again = await server.raw()
    welcome = await hello(again, "whatever", resume=account.resume)
    assert isinstance(welcome, Welcome)
    assert (welcome.player, welcome.name, welcome.account) == (player, "Ann", True)
    stale = await hello(await server.raw(), "Ann", resume=ann_welcome.resume)
    assert isinstance(stale, Error)
    assert stale.code == ErrorCode.INVALID_TOKEN
    assert isinstance(await again.request(lambda i: Logout(id=i, everywhere=True)), Ack)
    refused = await hello(await server.raw(), "Ann", resume=account.resume)
    assert isinstance(refused, Error)
    assert refused.code == ErrorCode.INVALID_TOKEN


async def test_names_are_unique_across_case_and_look_alike_letters(server: RunningServer) -> None:
    await register(await server.raw("Ann"), "Ann")
    for name in ("ann", "ANN", "\u0410nn", "\uff21nn"):
        reply = await try_register(await server.raw("x"), name)
        assert isinstance(reply, Error)
        assert reply.code == ErrorCode.NAME_TAKEN, name
    weak = await (await server.raw("y")).request(lambda i: Register(id=i, name="Cleo", password="short"))
    assert isinstance(weak, Error)
    assert weak.code == ErrorCode.WEAK_PASSWORD


async def test_one_account_is_one_player_on_every_device(server: RunningServer) -> None:
    account = await register(await server.raw("Ann"), "Ann")
    laptop = await server.raw("guest on the laptop")
    logged = await login(laptop, "ANN")  # names match as they are unique: case and look-alikes
    assert isinstance(logged, AccountInfo)
    assert logged.player == account.player
    wrong = await login(await server.raw("z"), "Ann", "not the password")
    assert isinstance(wrong, Error)
    assert wrong.code == ErrorCode.LOGIN_FAILED
    unknown = await login(await server.raw("z"), "Nobody", PASSWORD)
    assert isinstance(unknown, Error)
    assert unknown.code == ErrorCode.LOGIN_FAILED  # the same answer: names are not revealed


async def test_brute_force_is_slowed_per_account_and_per_address(start_server: ServerFactory) -> None:
    async with start_server(login_attempts=3, address_attempts=5) as srv:
        await register(await srv.raw("Ann"), "Ann")
        attacker = await srv.raw("Mallory")
        for guess in range(3):
            reply = await login(attacker, "Ann", f"guess {guess}")
            assert isinstance(reply, Error)
            assert reply.code == ErrorCode.LOGIN_FAILED
        # Now even the right password waits, from any new connection at this address.
        for client in (attacker, await srv.raw("Ann again")):
            blocked = await login(client, "Ann")
            assert isinstance(blocked, Error)
            assert blocked.code == ErrorCode.TOO_MANY_ATTEMPTS
            assert "try again in" in blocked.message
        # And the address has two failures left for other names, then none.
        await register(await srv.raw("Bob"), "Bob")
        for _ in range(2):
            reply = await login(attacker, "Bob", "guess")
            assert isinstance(reply, Error)
            assert reply.code == ErrorCode.LOGIN_FAILED
        blocked = await login(attacker, "Bob")
        assert isinstance(blocked, Error)
        assert blocked.code == ErrorCode.TOO_MANY_ATTEMPTS


async def test_log_out_everywhere_and_password_change_revoke_tokens(server: RunningServer) -> None:
    phone = await server.raw("Ann")
    account = await register(phone, "Ann")
    laptop = await server.raw("Ann")
    assert isinstance(await login(laptop, "Ann"), AccountInfo)

    # A password change keeps this connection (with a new token) and ends the others.
    changed = await phone.request(lambda i: ChangePassword(id=i, password=PASSWORD, new_password="new password 42"))
    assert isinstance(changed, AccountInfo)
    assert await laptop.closed() == CloseCode.LOGGED_OUT
    for token, works in ((account.resume, False), (changed.resume, True)):
        reply = await hello(await server.raw(), "Ann", resume=token)
        assert isinstance(reply, Welcome) is works

    assert isinstance(await phone.request(lambda i: Logout(id=i, everywhere=True)), Ack)
    assert await phone.closed() == CloseCode.LOGGED_OUT
    reply = await hello(await server.raw(), "Ann", resume=changed.resume)
    assert isinstance(reply, Error)
    assert reply.code == ErrorCode.INVALID_TOKEN
    assert isinstance(await login(await server.raw("Ann"), "Ann", "new password 42"), AccountInfo)


def outside_address() -> str | None:
    """This machine's address on its network (not loopback), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


async def test_passwords_are_refused_over_plain_ws_from_another_host(start_server: ServerFactory) -> None:
    address = outside_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    async with start_server(host="0.0.0.0") as srv:
        far = await RawClient.open(f"ws://{address}:{srv.server.port}")
        try:
            await far.hello("Ann")
            reply = await far.request(lambda i: Register(id=i, name="Ann", password=PASSWORD))
            assert isinstance(reply, Error)
            assert reply.code == ErrorCode.INSECURE_TRANSPORT
            assert PASSWORD not in reply.message
        finally:
            await far.close()
    async with start_server(host="0.0.0.0", plain_passwords=True) as srv:
        far = await RawClient.open(f"ws://{address}:{srv.server.port}")
        try:
            await far.hello("Ann")
            assert isinstance(await far.request(lambda i: Register(id=i, name="Ann", password=PASSWORD)), AccountInfo)
        finally:
            await far.close()


async def test_passwords_never_reach_the_log(server: RunningServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    client = await server.raw("Ann")
    await register(client, "Ann")
    await login(await server.raw("x"), "Ann", "a wrong secret phrase")
    await login(await server.raw("y"), "Ann")
    assert PASSWORD not in caplog.text
    assert "a wrong secret phrase" not in caplog.text


async def test_bots_are_never_rated_and_never_on_boards(server: RunningServer) -> None:
    ann, bots = await server.raw(), [await server.raw(), await server.raw()]
    assert isinstance(await hello(ann, "Ann"), Welcome)
    await register(ann, "Ann")
    ids = []
    for number, bot in enumerate(bots):
        welcome = await hello(bot, f"Bot {number}", bot=True)
        assert isinstance(welcome, Welcome)
        ids.append(welcome.player)
    # A person against a bot, and a bot against a bot: nobody is rated.
    for first, second in ((ann, bots[0]), (bots[0], bots[1])):
        over = await race_and_resign(server, first, second)
        assert all(result.rating is None for result in over.results)
    assert await rating_board(ann) == []
    for player in ids:
        assert (await stats(ann, player)).rating == 1500.0


async def test_a_practice_room_on_a_chosen_deal_never_touches_the_statistics(server: RunningServer) -> None:
    ann = await server.raw()
    welcome = await hello(ann, "Ann")
    assert isinstance(welcome, Welcome)
    await register(ann, "Ann")
    practice = RoomOptions(max_racers=1, deal="617")
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=practice))
    assert isinstance(created, Joined)
    await ann.request(lambda i: Ready(id=i, room=created.room))
    runner = server.hub.rooms[created.room]
    await eventually(lambda: runner.room.state.value == "racing", what="racing")
    await ann.request(lambda i: Resign(id=i, room=created.room))
    await eventually(lambda: race_over(ann, created.room), what="race over")
    # The race is remembered for moderators, but counts nowhere.
    for _ in range(200):
        if await server.hub.moderation.races(welcome.player):
            break
        await asyncio.sleep(0.02)
    assert [code for code, _ in await server.hub.moderation.races(welcome.player)] == [created.room]
    figures = await stats(ann, welcome.player)
    assert (figures.races_started, figures.races_finished, figures.races_won, figures.best_time_ms) == (0, 0, 0, None)
    assert figures.rating == 1500.0


async def test_names_padded_with_invisible_or_blank_characters_are_refused(server: RunningServer) -> None:
    for name, culprit in (
        ("\u3164Ann", "U+3164"),  # Hangul filler
        ("Ann\u2800", "U+2800"),  # Braille blank
        ("A\u034fnn", "U+034F"),  # combining grapheme joiner
        ("\u115f\u1160", "U+115F"),  # nothing but fillers
        ("x" + "\u0301" * 20, "U+0301"),  # a pile of marks
    ):
        refused = await hello(await server.raw(), name)
        assert isinstance(refused, Error), name
        assert (refused.code, culprit in refused.message) == (ErrorCode.INVALID_NAME, True), refused
        reply = await try_register(await server.raw("guest"), name)
        assert isinstance(reply, Error), name
        assert (reply.code, culprit in reply.message) == (ErrorCode.INVALID_NAME, True), reply


async def test_capital_i_and_small_l_are_one_name_and_case_still_counts(server: RunningServer) -> None:
    lil = await register(await server.raw("lil"), "lil")
    await register(await server.raw("Bob"), "Bob")
    for name in ("Iil", "1il", "LIL", "iil", "BOB", "B0b", "bob"):
        reply = await try_register(await server.raw("x"), name)
        assert isinstance(reply, Error), name
        assert reply.code == ErrorCode.NAME_TAKEN, name
    logged = await login(await server.raw("y"), "Iil")
    assert isinstance(logged, AccountInfo)
    assert (logged.player, logged.name) == (lil.player, "lil")
