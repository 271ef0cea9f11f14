"""Where a room runs: the node holding its lease (:mod:`server.cluster.leases`), remembered
until it is seen to change. A room nobody holds is claimed and loaded here; one held by a
dead node is waited for until its lease runs out, then taken over, fenced."""

from __future__ import annotations

import asyncio
import time

from server.cluster.cluster import Cluster
from server.features.context import Context
from server.storage.connection import StoreUnavailable


class Locator:
    """The owners of the rooms this node's clients use, found and remembered."""

    def __init__(self, ctx: Context, cluster: Cluster) -> None:
        self.ctx = ctx
        self.node = cluster.node
        self.leases = cluster.leases
        self._owners: dict[str, str] = {}  # room code -> the node last seen owning it
        #: The server is stopping: no room is looked for any more.
        self.stopping = False

    def check_running(self) -> None:
        if self.stopping:
            raise StoreUnavailable("storage unavailable: this server is shutting down")

    def known(self, code: str) -> str | None:
        """The node last seen running room ``code`` (None: none known)."""
        return self._owners.get(code)

    def owners(self) -> set[str]:
        """Every node last seen running a room."""
        return set(self._owners.values())

    def forget(self, code: str) -> None:
        self._owners.pop(code, None)

    def forget_nodes(self, nodes: set[str]) -> None:
        """Those nodes run nothing any more, as far as is known (they died, or went silent)."""
        self._owners = {code: node for code, node in self._owners.items() if node not in nodes}

    def clear(self) -> None:
        self._owners.clear()

    async def locate(self, code: str) -> str | None:
        """The node running room ``code``, or None when it is (now) this one or there is no
        such room. A room nobody holds is claimed and loaded here; a room held by a dead
        node is waited for until its lease expires, then claimed."""
        deadline = time.monotonic() + self.leases.ttl + 1.0
        while True:
            self.check_running()
            if self.ctx.rooms.live(code):
                return None
            claim = await self.leases.claim(code)
            if claim.lease is not None or (claim.holder == self.node.id and self.leases.holds(code)):
                await self.ctx.rooms.get(code)
                return None
            holder = claim.holder
            if holder is None:
                return None
            if holder == self.node.id and self.leases.in_hand(code):
                await asyncio.sleep(0.01)  # another request here is claiming it: its load is ours
                continue
            if holder != self.node.id and holder in await self.node.alive({holder}):
                self._owners[code] = holder
                return holder
            # Its holder is dead (or this node before a restart): take it over, fenced.
            if await self.leases.take_over(claim, code):
                await self.ctx.rooms.get(code)
                return None
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"storage unavailable: room {code}'s server {holder} does not answer")
            await asyncio.sleep(0.1)
