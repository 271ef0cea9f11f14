"""One scheduler per tournament: each tournament's lease is held by one node at a time, the
tournaments are spread over the live nodes, a dead node's tournaments pass to the others,
and a node that joins gets its share back. Real Redis; the nodes' clocks are the test's."""

from __future__ import annotations

from typing import Any

import pytest

from server.cluster.schedulers import TournamentLeases, lease_name, preferred
from server.storage.connection import Storage
from server.storage.nodes import NodeStore

pytestmark = pytest.mark.asyncio

TTL = 2.0
TOURNAMENTS = [f"t{n}" for n in range(12)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def beat(store: NodeStore, *nodes: str, schedules: bool = True) -> None:
    for node in nodes:
        await store.beat(node, {"schedules": 1} if schedules else {}, b"", b"", 60_000)


async def rounds(clock: Clock, leases: list[TournamentLeases], n: int) -> list[set[str]]:
    """``n`` rounds of every node (a quarter of a TTL apart); what each schedules after them."""
    held: list[set[str]] = [set() for _ in leases]
    for _ in range(n):
        clock.now += TTL / 4
        held = [await node.scheduled(TOURNAMENTS) for node in leases]
    return held


async def test_each_tournament_has_one_scheduler_and_the_live_nodes_share_them(store: Storage) -> None:
    nodes, clock = NodeStore(store), Clock()
    await beat(nodes, "a", "b", "c")
    leases = [TournamentLeases(nodes, "arena", node, TTL, clock) for node in ("a", "b", "c")]
    held = await rounds(clock, leases, 4)
    assert set().union(*held) == set(TOURNAMENTS)
    assert sum(len(h) for h in held) == len(TOURNAMENTS)  # never two schedulers
    for node, mine in zip(("a", "b", "c"), held, strict=True):
        assert mine == {t for t in TOURNAMENTS if preferred(t, {"a", "b", "c"}) == node}
        assert mine, "a live node schedules its share"


async def test_a_dead_nodes_tournaments_pass_to_the_others_and_come_back_when_it_returns(store: Storage) -> None:
    nodes, clock = NodeStore(store), Clock()
    await beat(nodes, "a", "b")
    a, b = TournamentLeases(nodes, "arena", "a", TTL, clock), TournamentLeases(nodes, "arena", "b", TTL, clock)
    held_a, held_b = await rounds(clock, [a, b], 2)
    assert held_a
    assert held_b
    # b dies: its heartbeat and leases lapse (a real TTL, in Redis).
    await nodes.left("b")
    for tournament in held_b:
        await store.redis.delete(nodes.keys.lease(lease_name("arena", tournament)))
    (everything,) = await rounds(clock, [a], 4)
    assert everything == set(TOURNAMENTS)
    # b is back: a hands b's share over, and b takes it.
    await beat(nodes, "b")
    b = TournamentLeases(nodes, "arena", "b", TTL, clock)
    held_a, held_b = await rounds(clock, [a, b], 3)
    assert held_a | held_b == set(TOURNAMENTS)
    assert not held_a & held_b
    assert held_b == {t for t in TOURNAMENTS if preferred(t, {"a", "b"}) == "b"}


async def test_a_tournament_no_longer_listed_is_let_go(store: Storage) -> None:
    nodes, clock = NodeStore(store), Clock()
    await beat(nodes, "a")
    a = TournamentLeases(nodes, "arena", "a", TTL, clock)
    clock.now += TTL
    assert await a.scheduled(["t1", "t2"]) == {"t1", "t2"}
    clock.now += TTL
    assert await a.scheduled(["t2"]) == {"t2"}
    assert await store.redis.get(nodes.keys.lease(lease_name("arena", "t1"))) is None


async def test_with_no_tournament_listed_nothing_is_asked_of_redis(store: Storage) -> None:
    """Every node asks twice a second; with no tournament that costs Redis nothing, and
    the first tournament listed is scheduled at once."""
    asked: list[str] = []

    class Counted(NodeStore):
        async def listed(self) -> dict[str, dict[str, Any]]:
            asked.append("listed")
            return await super().listed()

    nodes, clock = Counted(store), Clock()
    await beat(nodes, "a")
    a = TournamentLeases(nodes, "arena", "a", TTL, clock)
    for _ in range(8):
        clock.now += TTL / 4
        assert await a.scheduled([]) == set()
    assert asked == []
    clock.now += TTL / 4
    assert await a.scheduled(["t1"]) == {"t1"}
    assert asked == ["listed"]


async def test_a_node_that_does_not_schedule_leaves_its_share_to_those_that_do(store: Storage) -> None:
    """An older node, listed but taking no tournament leases, is nobody's preferred node: the
    others schedule every tournament, every round."""
    nodes, clock = NodeStore(store), Clock()
    await beat(nodes, "a")
    await beat(nodes, "old", schedules=False)
    a = TournamentLeases(nodes, "arena", "a", TTL, clock)
    for held in await rounds(clock, [a], 1) + await rounds(clock, [a], 1) + await rounds(clock, [a], 1):
        assert held == set(TOURNAMENTS)


async def test_a_stopping_node_lets_go_of_every_lease_it_took(store: Storage) -> None:
    nodes, clock = NodeStore(store), Clock()
    await beat(nodes, "a")
    a = TournamentLeases(nodes, "arena", "a", TTL, clock)
    (held,) = await rounds(clock, [a], 1)
    assert held == set(TOURNAMENTS)
    await a.stop()
    for tournament in TOURNAMENTS:
        assert await store.redis.get(nodes.keys.lease(lease_name("arena", tournament))) is None
