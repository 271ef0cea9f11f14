"""Async challenges in Redis (:mod:`server.competition.challenges`), shared by every node.

==========================================  ======  =============================================
key                                         type    holds
==========================================  ======  =============================================
``sr:challenge:{<id>}``                     string  the challenge (msgpack), kept
                                                    :data:`KEPT_DAYS` days after its window closes
``sr:my-challenges:{<player>}``             zset    the player's challenges -> created (Unix ms),
                                                    the newest :data:`INBOX_SIZE` (their inbox)
``sr:async-pool:{<game>}``                  zset    open async-match challenges whose first run
                                                    ended -> the challenger's rating
``sr:challenge-windows``                    zset    challenges whose result was not announced
                                                    yet -> when their window closes (Unix ms)
==========================================  ======  =============================================

Every change of a challenge is an optimistic transaction on its one key (WATCH): taking the
open side happens once however many ask at once, and a run is recorded once per side, so a
retried recording changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, cast

import msgspec

from server.competition.challenges import (
    MAX_WINDOW_HOURS,
    Challenge,
    ChallengeState,
    Run,
    Side,
    may_take,
    read_run_tag,
    state,
)
from server.storage.connection import Storage, StoreUnavailable, as_bytes, as_text
from server.storage.keys import key_part
from server.storage.optimistic import change_stored

#: Days a challenge is kept after its window closes (for its players' inboxes).
KEPT_DAYS: Final = 30
#: Challenges an inbox keeps (the newest).
INBOX_SIZE: Final = 50
#: Ratings apart an async match looks first, widening to anyone.
POOL_SPAN: Final = 200.0

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Challenge)


class Taken(Exception):
    """:meth:`ChallengeStore.take` refused: the sentence says why (taken, over, not yours)."""


class ChallengeStore:
    """The challenges of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def _key(self, challenge: str) -> str:
        return f"{self._storage.prefix}challenge:{{{key_part(challenge)}}}"

    def _mine(self, player: str) -> str:
        return f"{self._storage.prefix}my-challenges:{{{key_part(player)}}}"

    def _pool(self, game: str) -> str:
        return f"{self._storage.prefix}async-pool:{{{key_part(game)}}}"

    def _windows(self) -> str:
        return f"{self._storage.prefix}challenge-windows"

    def _ttl_ms(self, challenge: Challenge, now: int) -> int:
        return max(1, challenge.expires - now) + KEPT_DAYS * 86_400_000

    async def create(self, challenge: Challenge, now: int) -> None:
        """Store a new challenge and put it in the challenger's (and the invited player's) inbox."""
        with self._storage.guard(f"store challenge {challenge.id}"):
            stored = await self._storage.redis.set(
                self._key(challenge.id), _encoder.encode(challenge), px=self._ttl_ms(challenge, now), nx=True
            )
            if not stored:
                raise StoreUnavailable(f"challenge {challenge.id} exists already")
            await self._storage.redis.zadd(self._windows(), {challenge.id: challenge.expires})
            await self._remember(challenge.challenger.player, challenge)
            if challenge.invited is not None:
                await self._remember(challenge.invited, challenge)

    async def _remember(self, player: str, challenge: Challenge) -> None:
        key = self._mine(player)
        async with self._storage.transaction(key) as pipe:
            pipe.zadd(key, {challenge.id: challenge.created})
            pipe.zremrangebyrank(key, 0, -INBOX_SIZE - 1)
            # Longer than any challenge in it is kept: an idle player's inbox goes with them.
            pipe.pexpire(key, 2 * KEPT_DAYS * 86_400_000 + MAX_WINDOW_HOURS * 3_600_000)
            await pipe.execute()

    async def get(self, challenge: str) -> Challenge | None:
        """The challenge ``challenge`` names: its id, or the tag a run's room keeps
        (:func:`~server.competition.challenges.run_tag`, read by every node's secrecy check)."""
        code = read_run_tag(challenge).challenge
        with self._storage.guard(f"read challenge {code[:16]}"):
            raw = await self._storage.redis.get(self._key(code))
        return None if raw is None else _decoder.decode(as_bytes(raw))

    async def _change(self, challenge: str, change: Callable[[Challenge], Challenge | None]) -> Challenge | None:
        """Apply ``change`` to the stored challenge atomically (None: nothing to store); the
        challenge as stored after, or None if there is none."""
        return await change_stored(
            self._storage, self._key(challenge), _decoder, change, f"change challenge {challenge[:16]}"
        )

    async def take(self, challenge: str, opponent: Side, now: int) -> Challenge:
        """Take the open side of ``challenge`` for ``opponent``; :class:`Taken` if they may not
        (:func:`~server.competition.challenges.may_take`), KeyError if there is no such challenge."""
        refusal: list[str] = []

        def taking(current: Challenge) -> Challenge | None:
            refusal[:] = [why] if (why := may_take(current, opponent.player, now)) else []
            return None if refusal else msgspec.structs.replace(current, opponent=opponent)

        taken = await self._change(challenge, taking)
        if taken is None:
            raise KeyError(challenge)
        if refusal:
            raise Taken(refusal[0])
        await self._remember(opponent.player, taken)
        return taken

    async def record_run(self, challenge: str, side: int, run: Run) -> Challenge | None:
        """Record how ``side``'s run ended, once (a second record of that side changes
        nothing); the challenge as it stands after, None if it is gone."""

        def recording(current: Challenge) -> Challenge | None:
            if side in current.runs:
                return None
            return msgspec.structs.replace(current, runs={**current.runs, side: run})

        return await self._change(challenge, recording)

    async def rate(self, challenge: str, ratings: dict[int, tuple[float, float]]) -> None:
        """Keep a rated challenge's new ratings and changes, by side (once: the first stays)."""
        await self._change(challenge, lambda c: None if c.ratings else msgspec.structs.replace(c, ratings=ratings))

    async def inbox(self, player: str) -> list[Challenge]:
        """The player's challenges still kept, newest first."""
        with self._storage.guard(f"read {player}'s challenges"):
            ids = await self._storage.redis.zrevrange(self._mine(player), 0, INBOX_SIZE - 1)
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                for id_ in ids:
                    pipe.get(self._key(as_text(id_)))
                raws = await pipe.execute()
        return [_decoder.decode(as_bytes(raw)) for raw in raws if raw is not None]

    async def closed_windows(self, now: int, count: int = 100) -> list[str]:
        """Up to ``count`` challenges whose window closed by ``now`` and whose result was not
        announced yet, taken off the list: each is returned once, to one caller."""
        with self._storage.guard("read the challenges whose window closed"):
            due = await self._storage.redis.zrangebyscore(self._windows(), "-inf", now, start=0, num=count)
            taken = []
            for code in (as_text(member) for member in due):
                if await self._storage.redis.zrem(self._windows(), code):
                    taken.append(code)
        return taken

    async def announced(self, challenge: str) -> None:
        """The result of ``challenge`` was announced before its window closed (both runs ended)."""
        with self._storage.guard(f"note challenge {challenge[:16]} announced"):
            await self._storage.redis.zrem(self._windows(), challenge)

    async def offer(self, challenge: Challenge, rating: float) -> None:
        """Offer an open challenge whose first run ended to async matches, at ``rating``."""
        with self._storage.guard(f"offer challenge {challenge.id} to async matches"):
            await self._storage.redis.zadd(self._pool(challenge.variant), {challenge.id: rating})

    async def match(self, game: str, opponent: Side, rating: float, now: int) -> Challenge | None:
        """Take the offered challenge of ``game`` nearest ``rating`` (within :data:`POOL_SPAN`
        first, then any) that ``opponent`` may take; None if there is none. Challenges that
        are over or were taken leave the pool as they are met."""
        pool = self._pool(game)
        for low, high in ((rating - POOL_SPAN, rating + POOL_SPAN), (float("-inf"), float("inf"))):
            with self._storage.guard(f"look for an async {game} match"):
                scored = cast(
                    "list[tuple[bytes, float]]",
                    await self._storage.redis.zrangebyscore(pool, low, high, start=0, num=20, withscores=True),
                )
            for member, _ in sorted(scored, key=lambda pair: abs(pair[1] - rating)):
                code = as_text(member)
                found = await self.get(code)
                if found is None or state(found, now) is not ChallengeState.OPEN:
                    await self._unoffer(game, code)
                    continue
                if found.challenger.player == opponent.player:
                    continue
                try:
                    taken = await self.take(code, opponent, now)
                except (Taken, KeyError):
                    await self._unoffer(game, code)
                    continue
                await self._unoffer(game, code)
                return taken
        return None

    async def _unoffer(self, game: str, challenge: str) -> None:
        with self._storage.guard(f"withdraw challenge {challenge[:16]} from async matches"):
            await self._storage.redis.zrem(self._pool(game), challenge)
