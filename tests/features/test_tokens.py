"""Resume tokens through the real server and Redis: a token stops resuming a lifetime after it
was issued unless a resume renews it; ``logout`` revokes the device's token, a guest's too;
a guest's token resumes nothing once that guest registered; a token signed before tokens
expired is good for one lifetime after the service first checks a token."""

from __future__ import annotations

import asyncio
import time

import pytest

from protocol.errors import CloseCode, ErrorCode
from protocol.messages import PROTOCOL_VERSION, AccountInfo, Ack, Error, Hello, Login, Logout, Register, Welcome
from server.features.sessions import Token, sign_legacy, verify_token
from server.storage.keys import Keys
from tests.end_to_end.conftest import RawClient, RunningServer, ServerFactory

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"


def proved(srv: RunningServer, text: str) -> Token:
    token = verify_token(text, srv.hub.secret)
    assert token is not None
    return token


def expiry(srv: RunningServer, text: str) -> float:
    expires = proved(srv, text).expires
    assert expires is not None
    return float(expires)


async def sleep_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.time()))


async def hello(srv: RunningServer, resume: str | None, name: str = "Ann") -> Welcome | Error:
    client = await srv.raw()
    reply = await client.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name=name, resume=resume))
    assert isinstance(reply, Welcome | Error), reply
    return reply


async def refused(srv: RunningServer, resume: str) -> str:
    """The error code a hello with ``resume`` gets (it must get one)."""
    reply = await hello(srv, resume)
    assert isinstance(reply, Error), reply
    return reply.code


async def register(client: RawClient, name: str = "Ann") -> AccountInfo:
    reply = await client.request(lambda i: Register(id=i, name=name, password=PASSWORD))
    assert isinstance(reply, AccountInfo), reply
    return reply


async def test_a_token_expires_unless_a_resume_renews_it(start_server: ServerFactory) -> None:
    async with start_server(token_lifetime=2) as srv:
        first = (await (await srv.raw()).hello("Ann")).resume
        player = proved(srv, first).player
        # Resumed soon after, it comes back as it was (clients need not store it again).
        same = await hello(srv, first)
        assert isinstance(same, Welcome)
        assert same.resume == first
        # Resumed once a tenth of its life has passed, the welcome carries a renewed token.
        await sleep_until(expiry(srv, first) - 1.7)
        renewed = await hello(srv, first)
        assert isinstance(renewed, Welcome)
        assert renewed.player == player
        assert renewed.resume != first
        assert proved(srv, renewed.resume).device == proved(srv, first).device
        assert expiry(srv, renewed.resume) > expiry(srv, first)
        # The first token expires on time; it makes a new guest, on the same device.
        await sleep_until(expiry(srv, first) + 0.05)
        assert time.time() < expiry(srv, renewed.resume)
        expired = await hello(srv, first)
        assert isinstance(expired, Welcome)
        assert (expired.player != player, expired.account) == (True, False)
        assert proved(srv, expired.resume).device == proved(srv, first).device
        again = await hello(srv, renewed.resume)
        assert isinstance(again, Welcome)
        assert again.player == player


async def test_an_accounts_token_expires_into_a_guest_who_can_log_in(start_server: ServerFactory) -> None:
    async with start_server(token_lifetime=1) as srv:
        info = await register(await srv.raw("Ann"))
        await sleep_until(expiry(srv, info.resume) + 0.05)
        phone = await srv.raw()
        welcome = await phone.hello("Ann", resume=info.resume)
        assert (welcome.account, welcome.player != info.player) == (False, True)
        back = await phone.request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
        assert isinstance(back, AccountInfo)
        assert back.player == info.player


async def test_logout_revokes_a_guests_token(server: RunningServer) -> None:
    client = await server.raw()
    token = (await client.hello("Ann")).resume
    assert isinstance(await hello(server, token), Welcome)  # good before
    assert isinstance(await client.request(lambda i: Logout(id=i)), Ack)
    assert await client.closed() == CloseCode.LOGGED_OUT
    assert await refused(server, token) == ErrorCode.INVALID_TOKEN


async def test_logout_revokes_this_devices_token_and_no_other_device(server: RunningServer) -> None:
    phone = await server.raw("Ann")
    info = await register(phone)
    # A second connection of the phone (the same token); and a laptop, another device.
    tab = await server.raw()
    assert (await tab.hello("Ann", resume=info.resume)).account
    laptop = await server.raw("Ann")
    signed_in = await laptop.request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
    assert isinstance(signed_in, AccountInfo)

    assert isinstance(await phone.request(lambda i: Logout(id=i)), Ack)
    for client in (phone, tab):
        assert await client.closed() == CloseCode.LOGGED_OUT
    assert await refused(server, info.resume) == ErrorCode.INVALID_TOKEN
    assert laptop.is_open
    kept = await hello(server, signed_in.resume)
    assert isinstance(kept, Welcome)
    assert (kept.player, kept.account) == (info.player, True)
    # The phone can log in again (as a new device: it forgot its token when it logged out).
    again = await (await server.raw("Ann")).request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
    assert isinstance(again, AccountInfo)


async def test_a_guests_token_resumes_nothing_once_the_guest_registered(server: RunningServer) -> None:
    client = await server.raw()
    guest = (await client.hello("Ann")).resume
    info = await register(client)
    assert proved(server, info.resume).device == proved(server, guest).device  # the same device
    assert await refused(server, guest) == ErrorCode.INVALID_TOKEN
    resumed = await hello(server, info.resume)
    assert isinstance(resumed, Welcome)
    assert (resumed.player, resumed.account) == (info.player, True)


async def test_a_token_from_before_expiry_is_good_for_a_lifetime_then_expires(start_server: ServerFactory) -> None:
    async with start_server(token_lifetime=2) as srv:
        legacy = sign_legacy("0123456789abcdef", srv.hub.secret)
        welcome = await hello(srv, legacy)
        assert isinstance(welcome, Welcome)
        assert welcome.player == "0123456789abcdef"
        assert proved(srv, welcome.resume).expires is not None  # renewed into an expiring token
        storage = srv.server.storage
        assert storage is not None
        since = await storage.redis.get(Keys(storage.prefix).tokens_since())
        assert since is not None
        await sleep_until(int(since) + 2 + 0.05)
        expired = await hello(srv, legacy)
        assert isinstance(expired, Welcome)
        assert expired.player != "0123456789abcdef"
        renewed = await hello(srv, welcome.resume)  # the token it was renewed into lives on
        assert isinstance(renewed, Welcome)
        assert renewed.player == "0123456789abcdef"
