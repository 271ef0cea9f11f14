"""Accounts in Redis, on one Redis and on a 3-primary Redis Cluster (a name and its account
lie in different slots there): names unique under their skeleton, registering once, renaming."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from server.storage.accounts import AccountStore, Registered
from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.name_skeleton import name_skeleton
from tests.nodes.conftest import redis_cluster

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def storage(request: pytest.FixtureRequest, redis_url: str, tmp_path: Path) -> AsyncIterator[Storage]:
    """Storage on the session's Redis, or on a Redis Cluster of its own."""
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(redis_cluster(tmp_path)) if request.param == "cluster" else redis_url
        connected = await Storage.connect(url, prefix=f"test:{uuid.uuid4().hex[:12]}:")
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
