"""Account names stored under the previous skeleton (layout 3) are found after an upgrade:
the layout-4 step re-keys them from the accounts' names, on a real Redis."""

from __future__ import annotations

import asyncio

import pytest

from server.storage.accounts import AccountStore
from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.migration import LAYOUT_VERSION, migrate

pytestmark = pytest.mark.asyncio

#: Each name -> the hex of its skeleton in the previous version (folded case first, every
#: confusable as the smallest code point of its class), which its name key was.
OLD_SKELETONS = {
    "Iris": "69726973",  # iris
    "B0b": "623062",  # b0b
    "Ann": "616e6e",  # ann: the same key today
    "lil": "316931",  # 1i1
    "Iil": "696931",  # ii1: apart from lil then, one name today
}


async def store_old_account(store: Storage, player: str, name: str) -> str:
    """An account as the previous version stored it; its name key."""
    keys = Keys(store.prefix)
    await store.redis.hset(
        keys.account(player), mapping={"name": name, "hash": "$argon2id$x", "created": 1, "generation": 1}
    )
    key = f"{store.prefix}account-name:{OLD_SKELETONS[name]}"
    await store.redis.set(key, player)
    return key


async def test_accounts_of_the_old_layout_are_found_by_name_and_look_alikes(store: Storage) -> None:
    old = {name: await store_old_account(store, f"p{index}", name) for index, name in enumerate(["Iris", "B0b", "Ann"])}
    done = await migrate(store)
    assert (done.names, done.kept) == (2, [])
    accounts = AccountStore(store)
    for asked, player in (("Iris", "p0"), ("lris", "p0"), ("IRIS", "p0"), ("Bob", "p1"), ("B0B", "p1"), ("ANN", "p2")):
        assert await accounts.holder(asked) == player, asked
    assert await store.redis.exists(old["Iris"], old["B0b"]) == 0
    assert await store.redis.get(old["Ann"]) == b"p2"  # its key did not change
    assert await store.redis.get(Keys(store.prefix).layout()) == str(LAYOUT_VERSION).encode()
    assert (await migrate(store)).skipped


async def test_nodes_migrating_at_once_and_runs_cut_short_lose_no_name(store: Storage) -> None:
    for index, name in enumerate(["Iris", "B0b"]):
        await store_old_account(store, f"p{index}", name)
    # A run that stopped after setting Iris's new key, before deleting the old one.
    keys = Keys(store.prefix)
    await store.redis.set(keys.account_name("lrls"), "p0")
    runs = await asyncio.gather(*(migrate(store) for _ in range(3)))
    assert all(run.kept == [] for run in runs)
    assert sum(run.names for run in runs) == 2
    accounts = AccountStore(store)
    assert (await accounts.holder("iris"), await accounts.holder("bob")) == ("p0", "p1")
    assert sorted([key async for key in store.redis.scan_iter(match=f"{store.prefix}account-name:*")]) == sorted(
        [keys.account_name("lrls").encode(), keys.account_name("bob").encode()]
    )


async def test_two_names_that_now_look_alike_keep_both_accounts_until_one_is_renamed(store: Storage) -> None:
    lil = await store_old_account(store, "p-lil", "lil")
    iil = await store_old_account(store, "p-iil", "Iil")
    done = await migrate(store)
    # One account took the name key; the other's old key stays, named, and the marker waits.
    assert done.names == 1
    assert done.kept in ([lil], [iil])
    winner = await AccountStore(store).holder("lil")
    assert winner in ("p-lil", "p-iil")
    assert await store.redis.get(Keys(store.prefix).layout()) is None
    loser, loser_name = ("p-iil", "Iil") if winner == "p-lil" else ("p-lil", "lil")
    assert await store.redis.get(done.kept[0]) == loser.encode()
    # The operator renames the other account: the next start finishes the layout.
    assert await AccountStore(store).rename(loser, loser_name, "Tom")
    again = await migrate(store)
    assert (again.names, again.kept) == (1, [])
    assert not await store.redis.exists(done.kept[0])
    assert await AccountStore(store).holder("Tom") == loser
    assert await store.redis.get(Keys(store.prefix).layout()) == str(LAYOUT_VERSION).encode()


async def test_a_registration_in_progress_is_left_alone(store: Storage) -> None:
    keys = Keys(store.prefix)
    claim = f"{store.prefix}account-name:{OLD_SKELETONS['Iris']}"
    await store.redis.set(claim, "p9", px=60_000)  # claimed, its account not written yet
    done = await migrate(store)
    assert (done.names, done.kept) == (0, [])
    assert await store.redis.get(claim) == b"p9"
    assert not await store.redis.exists(keys.account_name("lrls"))
