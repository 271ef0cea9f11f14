"""Login limits through the real server and Redis: a password try is counted before the
password is checked, so parallel guesses buy no more argon2 runs than the limits allow; the
limits make tries wait longer and longer instead of locking the name, so a stranger cannot
lock the owner out; a device that signed in to the account before gets in past the name's
limit. Addresses other than loopback come from a trusted balancer's PROXY header (tests/balancer.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect

from protocol.errors import ErrorCode
from protocol.messages import AccountInfo, Error, Login, Register, Welcome
from server.features import accounts as account_requests
from server.features.sessions import verify_token
from tests.balancer import BALANCER, connect_as
from tests.end_to_end.conftest import RawClient, RunningServer, ServerFactory

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"


@pytest_asyncio.fixture
async def clients() -> AsyncIterator[list[RawClient]]:
    """Clients the test opened with :func:`guest`, closed after it."""
    opened: list[RawClient] = []
    yield opened
    for client in opened:
        with contextlib.suppress(Exception):
            await client.close()


@pytest.fixture
def argon2_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The passwords the server checked with argon2, in order (the server runs in this process)."""
    runs: list[str] = []
    real = account_requests.password_matches

    async def counted(password_hash: str, password: str) -> bool:
        runs.append(password)
        return await real(password_hash, password)

    monkeypatch.setattr(account_requests, "password_matches", counted)
    return runs


async def guest(srv: RunningServer, opened: list[RawClient], address: str | None = None) -> RawClient:
    """A new connection (a new device), from ``address`` if given, past its hello."""
    if address is None:
        socket = await connect(srv.url, compression=None, max_size=2**22)
    else:
        socket = await connect_as(srv.url, address)
    client = RawClient(socket)
    opened.append(client)
    await client.hello("Guest")
    return client


async def register(client: RawClient, name: str) -> AccountInfo:
    reply = await client.request(lambda i: Register(id=i, name=name, password=PASSWORD))
    assert isinstance(reply, AccountInfo), reply
    return reply


async def login(client: RawClient, name: str, password: str = PASSWORD) -> AccountInfo | Error:
    reply = await client.request(lambda i: Login(id=i, name=name, password=password))
    assert isinstance(reply, AccountInfo | Error), reply
    return reply


def code(reply: AccountInfo | Error) -> str:
    return "account" if isinstance(reply, AccountInfo) else reply.code


async def test_forty_parallel_guesses_check_five_passwords_and_a_known_device_still_gets_in(
    start_server: ServerFactory, clients: list[RawClient], argon2_runs: list[str]
) -> None:
    async with start_server(login_attempts=5, name_attempts=20, address_attempts=30) as srv:
        laptop = await guest(srv, clients)
        await register(laptop, "Ann")
        await register(await guest(srv, clients), "Bob")
        assert code(await login(laptop, "Bob")) == "account"  # the laptop now plays as Bob
        argon2_runs.clear()

        attackers = [await guest(srv, clients) for _ in range(40)]
        replies = await asyncio.gather(*(login(a, "Ann", f"guess {n}") for n, a in enumerate(attackers)))
        codes = [code(reply) for reply in replies]
        assert codes.count(ErrorCode.LOGIN_FAILED) == 5
        assert codes.count(ErrorCode.TOO_MANY_ATTEMPTS) == 35
        assert len(argon2_runs) == 5  # refused tries never reach argon2

        # The right password from a new device at this address waits like the guesses...
        refused = await login(await guest(srv, clients), "Ann")
        assert isinstance(refused, Error)
        assert refused.code == ErrorCode.TOO_MANY_ATTEMPTS
        assert "try again in" in refused.message
        assert len(argon2_runs) == 5
        # ... but the laptop, which signed in to Ann before, gets in at once.
        back = await login(laptop, "Ann")
        assert isinstance(back, AccountInfo)
        assert len(argon2_runs) == 6


async def test_a_strangers_guesses_from_another_address_do_not_lock_the_owner_out(
    start_server: ServerFactory, clients: list[RawClient], argon2_runs: list[str]
) -> None:
    async with start_server(trusted_proxies=BALANCER) as srv:
        owner = await register(await guest(srv, clients, "198.51.100.7"), "Ann")
        strangers = [await guest(srv, clients, "203.0.113.9") for _ in range(12)]
        replies = await asyncio.gather(*(login(s, "Ann", f"guess {n}") for n, s in enumerate(strangers)))
        assert [code(reply) for reply in replies].count(ErrorCode.LOGIN_FAILED) == 5
        # The stranger waits, even with the right password...
        assert code(await login(strangers[0], "Ann")) == ErrorCode.TOO_MANY_ATTEMPTS
        # ... and the owner, on a device never used before, at home, gets in at once.
        phone = await guest(srv, clients, "198.51.100.7")
        reply = await login(phone, "Ann")
        assert isinstance(reply, AccountInfo)
        assert reply.player == owner.player
        assert len(argon2_runs) == 6


async def test_guesses_from_many_addresses_make_new_devices_wait_but_not_a_device_the_account_knows(
    start_server: ServerFactory, clients: list[RawClient]
) -> None:
    async with start_server(trusted_proxies=BALANCER, name_attempts=4, token_lifetime=1, login_failure_delay=0) as srv:
        info = await register(await guest(srv, clients, "198.51.100.7"), "Ann")
        token = verify_token(info.resume, srv.hub.secret)
        assert token is not None
        assert token.expires is not None

        strangers = [await guest(srv, clients, f"203.0.113.{n // 2 + 1}") for n in range(8)]
        replies = await asyncio.gather(*(login(s, "Ann", f"guess {n}") for n, s in enumerate(strangers)))
        codes = [code(reply) for reply in replies]
        assert codes.count(ErrorCode.LOGIN_FAILED) == 4
        assert codes.count(ErrorCode.TOO_MANY_ATTEMPTS) == 4
        # The owner on a new device waits too: the name's limit is for devices it does not know.
        tablet = await guest(srv, clients, "198.51.100.7")
        assert code(await login(tablet, "Ann")) == ErrorCode.TOO_MANY_ATTEMPTS

        # The device Ann registered on comes back after its token expired: it is a new guest,
        # but a device Ann knows, and it gets in.
        await asyncio.sleep(max(0.0, token.expires - time.time()) + 0.05)
        socket = await connect_as(srv.url, "192.0.2.55")
        phone = RawClient(socket)
        clients.append(phone)
        welcome = await phone.hello("Ann", resume=info.resume)
        assert isinstance(welcome, Welcome)
        assert (welcome.account, welcome.player != info.player) == (False, True)
        reply = await login(phone, "Ann")
        assert isinstance(reply, AccountInfo)
        assert reply.player == info.player


async def test_each_failure_past_the_free_ones_doubles_the_wait_and_hammering_does_not_lengthen_it(
    start_server: ServerFactory, clients: list[RawClient]
) -> None:
    # Waits of 3 s, then 6 s: long enough that a slow argon2 on a busy machine cannot eat them
    # (1.5 s could: a login came through inside its wait on a loaded CI machine).
    async with start_server(login_attempts=1, login_wait=3.0, login_failure_delay=0) as srv:
        await register(await guest(srv, clients), "Ann")
        me = await guest(srv, clients)
        assert code(await login(me, "Ann", "wrong one")) == ErrorCode.LOGIN_FAILED  # the free try
        refused = await login(me, "Ann")
        assert isinstance(refused, Error)
        assert refused.code == ErrorCode.TOO_MANY_ATTEMPTS
        assert refused.message in {f"too many failed logins; try again in {s} s" for s in (1, 2, 3)}
        await asyncio.sleep(3.2)
        assert code(await login(me, "Ann", "wrong two")) == ErrorCode.LOGIN_FAILED
        await asyncio.sleep(3.2)  # the wait is 6 s now
        for _ in range(3):
            assert code(await login(me, "Ann")) == ErrorCode.TOO_MANY_ATTEMPTS
        await asyncio.sleep(3.2)
        assert code(await login(me, "Ann")) == "account"


async def test_an_address_that_fails_on_many_names_waits_even_on_a_known_device(
    start_server: ServerFactory, clients: list[RawClient]
) -> None:
    async with start_server(address_attempts=3, login_failure_delay=0) as srv:
        laptop = await guest(srv, clients)
        await register(laptop, "Ann")
        for name in ("Bob", "Cat", "Dan"):
            assert code(await login(await guest(srv, clients), name, "guess")) == ErrorCode.LOGIN_FAILED
        assert code(await login(laptop, "Ann")) == ErrorCode.TOO_MANY_ATTEMPTS
