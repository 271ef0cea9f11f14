"""Async challenges at rest: Redis memory per pending challenge, and the cost of the inbox
read a client makes at login, against a one-key read in the same run.

Run::

    python -m bench.challenges                          # 10,000 pending challenges, 2,000 players
    python -m bench.challenges --challenges 1000 --players 200 --reads 200

It starts an embedded Redis (as the server does) and stores the challenges through
:class:`server.storage.challenges.ChallengeStore`, each from one player to another, half of
them with the challenger's run recorded. It prints the memory Redis holds for them (per
challenge, inboxes included), then the inbox read of random players and of one whose inbox is
full (:data:`~server.storage.challenges.INBOX_SIZE`), as latency percentiles and as a ratio to
reading one key (the player's name, which every login reads), each taken the same number of times.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.lib.stats import latency_line, median, ratio
from server.clock import now_ms
from server.competition.challenges import Challenge, Run, Side, line_of
from server.storage.challenges import INBOX_SIZE, ChallengeStore
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from server.storage.players import PlayerStore


async def used_memory(storage: Storage) -> int:
    info = await storage.redis.info("memory")
    return int(info["used_memory"])


async def fill(store: ChallengeStore, challenges: int, players: int, rng: random.Random) -> list[str]:
    """Store ``challenges`` pending challenges among ``players`` players; their ids."""
    now = now_ms()
    ids = [f"C{n:07d}" for n in range(challenges)]
    batch = 200
    for first in range(0, challenges, batch):
        made = []
        for code in ids[first : first + batch]:
            challenger, invited = rng.sample(range(players), 2)
            made.append(
                Challenge(
                    code,
                    "scorpion",
                    str(10**16 + rng.randrange(10**19)),
                    f"{rng.getrandbits(128):032x}",
                    True,
                    now,
                    now + 86_400_000,
                    Side(f"p{challenger:06d}", f"Player {challenger}"),
                    invited=f"p{invited:06d}",
                )
            )
        await asyncio.gather(*(store.create(c, now) for c in made))
        await asyncio.gather(
            *(store.record_run(c.id, 0, Run(f"R{c.id}", 95_000, 120, 52, 0)) for c in made if rng.random() < 0.5)
        )
    return ids


async def timed(read: Callable[[], Awaitable[None]], times: int) -> list[float]:
    """Seconds each of ``times`` awaits of ``read()`` took, sorted."""
    latencies = []
    for _ in range(times):
        started = time.perf_counter()
        await read()
        latencies.append(time.perf_counter() - started)
    return sorted(latencies)


async def run(challenges: int, players: int, reads: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="bench-challenges-") as data_dir:
        async with EmbeddedRedis(Path(data_dir)) as redis:
            storage = await Storage.connect(redis.url, prefix="bench:")
            try:
                store, names = ChallengeStore(storage), PlayerStore(storage)
                for player in range(players):
                    await names.save_name(f"p{player:06d}", f"Player {player}")
                before = await used_memory(storage)
                await fill(store, challenges, players, rng)
                held = await used_memory(storage) - before
                print(f"{challenges:,} pending challenges among {players:,} players (half with a run recorded)")
                each = held / challenges
                print(f"  Redis memory: {held / 2**20:.1f} MiB, {each:,.0f} bytes a challenge (inboxes included)")

                asked = [f"p{rng.randrange(players):06d}" for _ in range(reads)]
                turn = iter(asked * 2)

                async def inbox() -> None:
                    player = next(turn)
                    [line_of(c, player, now_ms()) for c in await store.inbox(player)]

                async def one_key() -> None:
                    await names.name(next(turn))

                base = await timed(one_key, reads)
                read = await timed(inbox, reads)
                sizes = [len(await store.inbox(p)) for p in asked[:50]]
                print(f"  inbox at login, {reads} random players (median {median(sizes):.0f} challenges each):")
                print(f"    {latency_line('one-key read (baseline)', base)}")
                print(f"    {latency_line('inbox read', read)}")
                print(f"    inbox / one key (medians): {ratio(median(read), median(base))}")

                full = "p999999"
                now = now_ms()
                for n in range(INBOX_SIZE):
                    await store.create(
                        Challenge(
                            f"F{n:07d}", "antares", "617", "00", True, now + n, now + 86_400_000, Side(full, "F")
                        ),
                        now,
                    )

                async def full_inbox() -> None:
                    [line_of(c, full, now_ms()) for c in await store.inbox(full)]

                print(f"    {latency_line(f'a full inbox ({INBOX_SIZE})', await timed(full_inbox, reads))}")
            finally:
                await storage.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.challenges", description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=2_000)
    parser.add_argument("--reads", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(run(args.challenges, args.players, args.reads, args.seed))


if __name__ == "__main__":
    main()
