"""Which node schedules each tournament: one service-wide lease per tournament
(``sr:lease:<kind>-<id>``: ``arena-...``, ``bracket-...``), so one node at a time pairs an arena's players or opens and
closes a bracket's rounds, and a node's death stalls only the tournaments it scheduled, for
about one lease TTL, until another node takes their leases.

The tournaments are spread over the live nodes that schedule (their heartbeat says so; an
older node's does not) by rendezvous hashing: a tournament's preferred node (the one whose
hash with the tournament's id is highest) claims or renews its lease every quarter of a TTL;
any other node asks for it once a TTL, so it gets it only once the lease has lapsed (its
holder is gone) or nobody has it yet, and hands it back as soon as another node is preferred
(one that joined), which claims it within a quarter of a TTL. A tournament no longer listed
is let go, and so is every lease of a stopping node.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection
from typing import Final

from server.storage.nodes import NodeStore

#: The rounds between a node's asks for a tournament it is not preferred for.
OTHERS_EVERY: Final = 4


def lease_name(kind: str, tournament: str) -> str:
    """The name of the scheduler lease of ``tournament``, of ``kind`` (``arena``, ``bracket``)."""
    return f"{kind}-{tournament}"


def preferred(tournament: str, nodes: Collection[str]) -> str | None:
    """The node of ``nodes`` that ``tournament`` prefers (None if there is none)."""

    def weight(node: str) -> bytes:
        return hashlib.blake2b(f"{node}/{tournament}".encode(), digest_size=8).digest()

    return max(nodes, key=weight, default=None)


class TournamentLeases:
    """The leases of the tournaments of one ``kind`` (``arena``, ``bracket``) for node ``node``
    (lease TTL ``ttl`` seconds) in ``store``."""

    def __init__(
        self, store: NodeStore, kind: str, node: str, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._store = store
        self._kind = kind
        self._node = node
        self._ttl = ttl
        self._clock = clock
        self._held: set[str] = set()
        #: Every lease this node may hold (taken and not let go): what a stop lets go.
        self._claimed: set[str] = set()
        self._asked: float = float("-inf")
        self._round = 0

    async def scheduled(self, tournaments: Collection[str]) -> set[str]:
        """Which of ``tournaments`` (those listed now) this node schedules. Asks Redis at
        most every quarter of a TTL (:class:`StoreUnavailable` if it is away: then this
        node schedules none, for its leases may have lapsed meanwhile)."""
        listed = set(tournaments)
        if not listed and not self._held:
            return set()  # nothing to schedule nor to let go: an idle service asks Redis nothing
        now = self._clock()
        if now - self._asked < self._ttl / 4:
            return self._held & listed
        before, self._held = self._held, set()  # none until renewed: if Redis fails now, none
        self._asked = now
        self._round += 1
        nodes = {node for node, beat in (await self._store.listed()).items() if beat.get("schedules")}
        nodes.add(self._node)
        ttl_ms = int(self._ttl * 1000)
        held = set()
        for tournament in sorted(listed):
            mine = preferred(tournament, nodes) == self._node
            if not mine and tournament in before:
                # Handed to its preferred node (a node that joined): it claims it next round.
                await self._let_go(tournament)
                continue
            if (mine or self._round % OTHERS_EVERY == 1) and await self._store.hold(
                lease_name(self._kind, tournament), self._node, ttl_ms
            ):
                held.add(tournament)
                self._claimed.add(tournament)
        for tournament in before - listed:
            await self._let_go(tournament)
        self._held = held
        return set(held)

    async def _let_go(self, tournament: str) -> None:
        await self._store.let_go(lease_name(self._kind, tournament), self._node)
        self._claimed.discard(tournament)

    async def stop(self) -> None:
        """Give up every lease this node may hold (it is stopping), for the other nodes to
        take, even one a round cut short by a failure or a cancellation left uncounted."""
        self._held = set()
        for tournament in sorted(self._claimed):
            await self._let_go(tournament)
