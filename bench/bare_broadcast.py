"""The fan-out floor: websockets ``broadcast()`` of recorded frames, and nothing else.

Run (``bench.fanout`` starts it)::

    python -m bench.bare_broadcast --port 8767 --frames streams.msgpack

``--frames`` holds a MessagePack-encoded :class:`~bench.lib.recording.Recording`: for each
room the frames one spectator of that room received from the race server in a window of
``seconds``, each with when it came (seconds into the window). A connection to path ``/<n>`` watches room ``n``;
each room plays its frames to its watchers with ``broadcast()`` at the recorded times, the
window over and over (so the rate is the recorded one, quiet stretches included). Connections send nothing
and are told nothing else. ``--data-dir`` and ``--log-level`` are accepted (and ignored) so
that ``bench.lib.spawn.spawn_server`` starts it like the others.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import signal
import time
from pathlib import Path

import msgspec
from websockets.asyncio.server import ServerConnection, broadcast, serve

from bench.lib.recording import Recording


class BareBroadcast:
    def __init__(self, recording: Recording) -> None:
        self.seconds = recording.seconds
        self.streams = [stream for stream in recording.rooms if stream]
        self.watchers: list[set[ServerConnection]] = [set() for _ in self.streams]

    async def connection(self, ws: ServerConnection) -> None:
        path = ws.request.path.strip("/") if ws.request is not None else ""
        room = int(path) % len(self.watchers) if path.isdigit() else 0
        self.watchers[room].add(ws)
        try:
            await ws.wait_closed()
        finally:
            self.watchers[room].discard(ws)

    async def play(self, room: int) -> None:
        stream, watchers = self.streams[room], self.watchers[room]
        start = time.monotonic()
        while True:
            for offset, frame in stream:
                delay = start + offset - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                broadcast(watchers, frame)
            start += self.seconds


async def serve_bare(args: argparse.Namespace) -> None:
    bare = BareBroadcast(msgspec.msgpack.decode(Path(args.frames).read_bytes(), type=Recording))
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()

    def on_signal() -> None:
        if not stop.done():
            stop.set_result(None)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal)
    async with serve(bare.connection, args.host, args.port, compression=None):
        gc.freeze()
        gc.set_threshold(50_000, 50, 100)  # as the server and the relay do
        players = [asyncio.create_task(bare.play(room)) for room in range(len(bare.streams))]
        await stop
        for player in players:
            player.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*players)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bare_broadcast", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--frames", required=True, help="the recorded streams (see the module docstring)")
    parser.add_argument("--data-dir", help="ignored")
    parser.add_argument("--log-level", help="ignored")
    asyncio.run(serve_bare(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
