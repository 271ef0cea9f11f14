"""Who plays which daily deal, against a real server: today's deal is played once per account
registered before the day, ranked and without hints, and in no other way (not as a guest, a
second connection, a bot, or an account made on the day); earlier days' deals are practice,
with hints, for anyone. The server runs no solver: the tests give it the days' deals."""

from __future__ import annotations

import datetime as dt
from functools import partial

import pytest

from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AccountInfo,
    AskDaily,
    DailyInfo,
    DailyTag,
    Error,
    Hello,
    Joined,
    Login,
    Snapshot,
    StartDaily,
    Welcome,
)
from server.competition.daily import previous_date
from tests.end_to_end.conftest import RawClient, RunningServer
from tests.end_to_end.test_moderation import PASSWORD, account, offer_daily, today

pytestmark = pytest.mark.asyncio


async def offer_days(srv: RunningServer) -> None:
    """Today's and yesterday's Antares deals (the known deal)."""
    await offer_daily(srv)
    await offer_daily(srv, date=previous_date(today()))


async def access(client: RawClient) -> str:
    info = await client.request(partial(AskDaily, variant="antares"))
    assert isinstance(info, DailyInfo), info
    return info.access


async def refused(client: RawClient, date: str | None = None) -> Error:
    reply = await client.request(partial(StartDaily, variant="antares", date=date))
    assert isinstance(reply, Error), reply
    return reply


async def started(client: RawClient, date: str | None = None) -> Snapshot:
    joined = await client.request(partial(StartDaily, variant="antares", date=date))
    assert isinstance(joined, Joined), joined
    snapshot = await client.wait_for(lambda m: isinstance(m, Snapshot) and m.room == joined.room)
    assert isinstance(snapshot, Snapshot)
    return snapshot


async def test_an_account_plays_todays_deal_once_ranked_without_hints_and_never_again(server: RunningServer) -> None:
    await offer_days(server)
    ann, _ = await account(server, "Ann")
    assert await access(ann) == "ranked"
    attempt = await started(ann)
    assert attempt.view.daily == DailyTag(date=today(), ranked=True)
    assert not attempt.view.options.hints
    # While it runs, and after: no second look at the deal, on this connection or another.
    assert await access(ann) == "used"
    assert (await refused(ann)).code == ErrorCode.DAILY_CLOSED
    laptop = await server.raw("Ann's laptop")
    assert isinstance(await laptop.request(partial(Login, name="Ann", password=PASSWORD)), AccountInfo)
    assert await access(laptop) == "used"
    assert (await refused(laptop)).code == ErrorCode.DAILY_CLOSED


async def test_guests_bots_and_accounts_made_today_cannot_play_todays_deal(server: RunningServer) -> None:
    await offer_days(server)
    guest = await server.raw("Guest")
    assert await access(guest) == "guest"
    closed = await refused(guest)
    assert closed.code == ErrorCode.DAILY_CLOSED
    assert "register" in closed.message
    newcomer, _ = await account(server, "Newcomer", before_today=False)
    assert await access(newcomer) == "new-account"
    assert (await refused(newcomer)).code == ErrorCode.DAILY_CLOSED
    # An account that says it is a bot gets no practice of today's deal either.
    bot, info = await account(server, "Botty")
    token = info.resume
    as_bot = await server.raw()
    welcome = await as_bot.request(partial(Hello, protocol=PROTOCOL_VERSION, name="Botty", resume=token, bot=True))
    assert isinstance(welcome, Welcome)
    assert welcome.account
    assert await access(as_bot) == "bot"
    assert (await refused(as_bot)).code == ErrorCode.DAILY_CLOSED
    # None of them used the account's ranked attempt.
    assert await access(bot) == "ranked"


async def test_an_earlier_days_deal_is_practice_with_hints_for_anyone(server: RunningServer) -> None:
    await offer_days(server)
    yesterday = previous_date(today())
    guest = await server.raw("Guest")
    for _ in range(2):  # as often as one likes
        practice = await started(guest, yesterday)
        assert practice.view.daily == DailyTag(date=yesterday, ranked=False)
        assert practice.view.options.hints
    # Practising yesterday's deal leaves today's ranked attempt untouched.
    ann, _ = await account(server, "Ann")
    await started(ann, yesterday)
    assert await access(ann) == "ranked"


async def test_a_day_not_out_yet_or_never_offered_or_not_a_day_is_refused(server: RunningServer) -> None:
    await offer_days(server)
    ann, _ = await account(server, "Ann")
    tomorrow = (dt.date.fromisoformat(today()) + dt.timedelta(days=1)).isoformat()
    assert (await refused(ann, tomorrow)).code == ErrorCode.DAILY_UNAVAILABLE
    assert (await refused(ann, "2020-01-01")).code == ErrorCode.DAILY_UNAVAILABLE
    assert (await refused(ann, "2026-02-30")).code == ErrorCode.INVALID_MESSAGE
    assert await access(ann) == "ranked"
