"""Accounts in Redis, on one Redis and on a 3-primary Redis Cluster (a name and its account
lie in different slots there): names unique under their skeleton, registering once, renaming;
login limits counted atomically, the devices an account knows, revoked devices."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable

import pytest
import pytest_asyncio

from server.storage.accounts import MAX_DEVICES, AccountStore, Attempt, Registered
from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.name_skeleton import name_skeleton
from tests.in_process_server import fresh_prefix

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def storage(redis_or_cluster: str) -> AsyncIterator[Storage]:
    """Storage on the session's Redis, or on the session's Redis Cluster."""
    connected = await Storage.connect(redis_or_cluster, prefix=fresh_prefix())
    try:
        yield connected
    finally:
        await connected.close()


@pytest_asyncio.fixture
async def accounts(storage: Storage) -> AccountStore:
    return AccountStore(storage)


async def test_a_name_is_registered_once_and_an_account_only_once(accounts: AccountStore) -> None:
    assert await accounts.register("p1", "Ann", "hash-1", 1000) is Registered.CREATED
    assert await accounts.register("p2", "ann", "hash-2", 1001) is Registered.NAME_TAKEN  # a look-alike
    assert await accounts.register("p1", "Annabel", "hash-3", 1002) is Registered.ALREADY_ACCOUNT
    # The name claimed for nothing is free again, and Ann keeps hers.
    assert await accounts.holder("Annabel") is None
    assert await accounts.register("p1", "Ann", "hash-4", 1003) is Registered.ALREADY_ACCOUNT
    assert await accounts.holder("ANN") == "p1"
    account = await accounts.by_name("Ann")
    assert account is not None
    assert (account.player, account.name, account.password_hash, account.generation) == ("p1", "Ann", "hash-1", 1)
    assert await accounts.register("p3", "Annabel", "hash-5", 1004) is Registered.CREATED


async def test_a_kept_name_does_not_expire(accounts: AccountStore, storage: Storage) -> None:
    assert await accounts.register("p1", "Bob", "hash", 1000) is Registered.CREATED
    ttl = await storage.redis.pttl(Keys(storage.prefix).account_name(name_skeleton("Bob")))
    assert ttl == -1


async def test_a_rename_moves_the_name_and_frees_the_old_one(accounts: AccountStore) -> None:
    assert await accounts.register("p1", "Cat", "hash", 1000) is Registered.CREATED
    assert await accounts.register("p2", "Dan", "hash", 1000) is Registered.CREATED
    assert not await accounts.rename("p1", "Cat", "dan")  # Dan's
    assert await accounts.rename("p1", "Cat", "Cathy")
    assert await accounts.holder("Cathy") == "p1"
    assert await accounts.holder("Cat") is None
    account = await accounts.get("p1")
    assert account is not None
    assert account.name == "Cathy"
    assert await accounts.rename("p1", "Cathy", "CATHY")  # the same skeleton: only the spelling changes
    assert await accounts.holder("cathy") == "p1"
    renamed = await accounts.get("p1")
    assert renamed is not None
    assert renamed.name == "CATHY"


# -- login limits, devices, revoked tokens ------------------------------------------------


async def test_parallel_tries_are_counted_atomically_and_only_the_free_ones_pass(accounts: AccountStore) -> None:
    tries = await asyncio.gather(
        *(accounts.take_attempt("login-pair", "ann\n1.2.3.4", 5, 60_000, 900_000) for _ in range(40))
    )
    assert sum(attempt.counted for attempt in tries) == 5
    refused = [attempt for attempt in tries if not attempt.counted]
    assert all(0 < attempt.wait_ms <= 60_000 for attempt in refused)
    # Another name, or the same name from elsewhere, counts apart.
    assert (await accounts.take_attempt("login-pair", "ann\n5.6.7.8", 5, 60_000, 900_000)).counted
    assert (await accounts.take_attempt("login-pair", "bob\n1.2.3.4", 5, 60_000, 900_000)).counted


async def test_each_try_past_the_free_ones_doubles_the_wait_and_refusals_do_not_lengthen_it(
    accounts: AccountStore,
) -> None:
    def take() -> Awaitable[Attempt]:
        return accounts.take_attempt("login-from", "1.2.3.4", 1, 2_000, 60_000)

    assert (await take()).counted  # the free one
    first = await take()
    assert not first.counted
    assert 1_000 <= first.wait_ms <= 2_000
    for _ in range(5):  # hammering while it must wait changes nothing
        assert not (await take()).counted
    await asyncio.sleep(first.wait_ms / 1000 + 0.02)
    assert (await take()).counted
    second = await take()
    assert not second.counted
    assert 3_000 <= second.wait_ms <= 4_000  # twice as long


async def test_the_wait_is_capped_by_the_window_and_a_refund_takes_a_try_back(accounts: AccountStore) -> None:
    def take() -> Awaitable[Attempt]:
        return accounts.take_attempt("login-name", "cat", 1, 1_000_000, 30_000)

    taken = [await take(), await take()]
    assert [attempt.counted for attempt in taken] == [True, False]
    assert 20_000 <= taken[1].wait_ms <= 30_000  # not 1000 s: at most the window
    # Taking the counted try back frees its place, as if it had never been made.
    await accounts.refund_attempt(taken[0])
    again = await take()
    assert again.counted
    assert not (await take()).counted
    await accounts.clear_attempts("login-name", "cat")
    assert (await take()).counted


async def test_an_account_knows_the_devices_that_signed_in_until_its_tokens_are_revoked(
    accounts: AccountStore,
) -> None:
    assert await accounts.register("p1", "Ann", "hash", 1000) is Registered.CREATED
    now = 10_000_000
    await accounts.remember_device("p1", "00112233aabbccdd", now, 3600)
    await accounts.remember_device("p1", "ffeeddccbbaa9988", now, 3600)
    assert await accounts.knows_device("p1", "00112233aabbccdd", now + 1000, 3600)
    assert not await accounts.knows_device("p1", "00112233aabbccdd", now + 3_601_000, 3600)  # too long ago
    assert not await accounts.knows_device("p2", "00112233aabbccdd", now, 3600)
    await accounts.forget_device("p1", "ffeeddccbbaa9988")
    assert not await accounts.knows_device("p1", "ffeeddccbbaa9988", now, 3600)
    assert await accounts.revoke("p1") == 2
    assert not await accounts.knows_device("p1", "00112233aabbccdd", now, 3600)
    for number in range(MAX_DEVICES + 3):
        await accounts.remember_device("p1", f"{number:016x}", now + number, 3600)
    assert not await accounts.knows_device("p1", f"{0:016x}", now + 100, 3600)  # the oldest went
    assert await accounts.knows_device("p1", f"{MAX_DEVICES + 2:016x}", now + 100, 3600)


async def test_a_revoked_device_stays_revoked_for_its_time(accounts: AccountStore) -> None:
    assert not await accounts.device_revoked("00112233aabbccdd")
    await accounts.revoke_device("00112233aabbccdd", 1)
    assert await accounts.device_revoked("00112233aabbccdd")
    assert not await accounts.device_revoked("ffeeddccbbaa9988")
    await asyncio.sleep(1.1)
    assert not await accounts.device_revoked("00112233aabbccdd")


async def test_tokens_since_is_set_once_for_the_service(accounts: AccountStore, storage: Storage) -> None:
    assert await accounts.tokens_since(1000) == 1000
    assert await AccountStore(storage).tokens_since(2000) == 1000
