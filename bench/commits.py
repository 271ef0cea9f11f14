"""This process's CPU per room commit: redis-py's pipeline against the pipelined connection.

Run::

    python -m bench.commits                       # 20,000 commits each way, 1, 4 and 16 at once
    python -m bench.commits --commits 50000 --concurrency 1,64

It starts an embedded Redis (as the server does) and stores the same one-entry commits
through :class:`server.storage.rooms.RoomStore` twice: once with the storage's pipelined
connection (:mod:`server.storage.pipelined`, the server's road on a plain Redis), once
without it (redis-py's pipeline as a group commit, the road over TLS and the road before).
"Concurrency" is how many rooms commit at once, each waiting for its reply before the
next: 1 is a quiet server, where every commit is a lone round trip. It prints CPU
microseconds per commit (this process only, not Redis's) and the ratio of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from server.storage.rooms import Expiry, RoomStore, RoomWrite


async def cpu_per_commit(store: RoomStore, prefix: str, commits: int, concurrency: int) -> float:
    """Microseconds of this process's CPU per commit, ``concurrency`` rooms at once."""

    async def room(number: int, count: int) -> None:
        for version in range(count):
            entry = [(0, "QS>5")]
            await store.commit(RoomWrite(f"{prefix}{number}", 1, version, version + 1, entry, None, Expiry.NONE))

    started = time.process_time()
    await asyncio.gather(*(room(n, commits // concurrency) for n in range(concurrency)))
    return (time.process_time() - started) / (commits // concurrency * concurrency) * 1e6


async def run(commits: int, concurrencies: list[int]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-commits-") as data_dir:
        async with EmbeddedRedis(Path(data_dir)) as redis:
            pipelined = await Storage.connect(redis.url, prefix="bench:a:")
            through_redis_py = await Storage.connect(redis.url, prefix="bench:b:")
            assert through_redis_py.line is not None
            through_redis_py.line.close()
            through_redis_py.line = None
            try:
                print(f"room commits, {commits} a way; CPU of this process per commit (Redis's not counted)")
                print(f"  {'at once':>8} {'redis-py':>12} {'pipelined':>12} {'ratio':>8}")
                for concurrency in concurrencies:
                    old = await cpu_per_commit(RoomStore(through_redis_py), f"R{concurrency}-", commits, concurrency)
                    new = await cpu_per_commit(RoomStore(pipelined), f"P{concurrency}-", commits, concurrency)
                    print(f"  {concurrency:>8} {old:>9.1f} µs {new:>9.1f} µs {new / old:>7.2f}x")
            finally:
                await pipelined.close()
                await through_redis_py.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.commits", description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--concurrency", default="1,4,16", help="rooms committing at once, comma-separated")
    args = parser.parse_args()
    asyncio.run(run(args.commits, [int(n) for n in args.concurrency.split(",")]))


if __name__ == "__main__":
    main()
