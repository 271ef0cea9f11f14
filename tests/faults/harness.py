"""Real processes to break: a private Redis, a race server process, racers over websockets.

:class:`RedisProcess`
    One ``redis-server`` (or valkey, whichever :func:`find_executable` finds) with the
    append-only file on, on a Unix socket in a short temporary directory, NOT supervised: a
    test pauses it (SIGSTOP/SIGCONT), kills it (SIGKILL) and starts it again when it chooses,
    on the same socket and data, so the URL stays valid.
:class:`ServerProcess`
    ``python -m server --redis-url <that Redis> --port 0``: its port is read from its log
    line "listening on ws://...". SIGKILL it and start it again; each start gets a new port.
    Its countdown is :data:`tests.polling.COUNTDOWN` unless ``countdown=`` says otherwise
    (in ``COUNTDOWN``, which a server older than the setting ignores).
    ``FAULT_SERVER_ROOT`` runs the server from another checkout (to show that a test fails
    on old code: ``git worktree add ../old 7d9b562``).
:class:`Racer`
    A :class:`RaceClient` (real websocket, mirrors of its rooms) that keeps a ledger of
    every command it sent and what came of it: acknowledged (with the version and its own
    board after it), refused for storage (``storage-unavailable``: in doubt, the write may
    have landed), or refused otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from redis.asyncio import Redis

from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack, ClientMessage, Joined, ServerMessage
from protocol.mirror import RoomMirror
from server.storage.embedded import find_executable
from tests.polling import COUNTDOWN

ROOT: Final = Path(__file__).resolve().parents[2]
#: Starting a process on a loaded 2-core machine: generous.
STARTUP: Final = 30.0
#: What the server answers when it could not store a command.
STORAGE_UNAVAILABLE: Final = "storage-unavailable"
_LISTENING = re.compile(rb"listening on ws://[^:]+:(\d+)")


class RedisProcess:
    """A private Redis with the append-only file on; see the module docstring."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        # A Unix socket path has at most 107 bytes: tmp_path can be longer.
        self._socket_dir = Path(tempfile.mkdtemp(prefix="srf-", dir="/tmp"))
        self.socket = self._socket_dir / "redis.sock"
        self.process: asyncio.subprocess.Process | None = None
        self.paused = False

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def command(self) -> list[str]:
        return [
            find_executable(),
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
        ]  # fmt: skip

    async def start(self) -> None:
        """Start Redis (on the same data, if it ran before) and return once it answers."""
        assert self.process is None or self.process.returncode is not None, "already running"
        self.process = await asyncio.create_subprocess_exec(
            *self.command(), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        self.paused = False
        deadline = time.monotonic() + STARTUP
        while True:
            client = Redis.from_url(self.url, socket_timeout=1.0, socket_connect_timeout=1.0)
            try:
                if await client.ping():
                    return
            except Exception:  # loading, or not listening yet: try again
                if self.process.returncode is not None or time.monotonic() > deadline:
                    raise AssertionError(f"Redis did not start: {(self.data_dir / 'redis.log').read_text()}") from None
            finally:
                await client.aclose()
            await asyncio.sleep(0.02)

    @property
    def pid(self) -> int:
        assert self.process is not None, "Redis was never started"
        assert self.process.returncode is None, "Redis is not running"
        return self.process.pid

    def pause(self) -> None:
        """SIGSTOP: connections stay open, nothing is answered until :meth:`resume`."""
        os.kill(self.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)
        self.paused = False

    async def kill(self) -> None:
        """SIGKILL (what the append-only file has survives; writes acknowledged were in it)."""
        assert self.process is not None
        self.process.kill()
        await self.process.wait()
        self.paused = False

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            if self.paused:
                self.resume()
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        shutil.rmtree(self._socket_dir, ignore_errors=True)


class ServerProcess:
    """``python -m server`` against a given Redis; see the module docstring."""

    def __init__(self, redis_url: str, log: Path, grace: float = 60.0, countdown: float = COUNTDOWN) -> None:
        self.redis_url = redis_url
        self.log = log
        self.grace = grace
        self.countdown = countdown
        self.process: asyncio.subprocess.Process | None = None
        self.port = 0
        self.root = Path(os.environ.get("FAULT_SERVER_ROOT", ROOT))

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Start the server and return once it listens (it has restored its rooms by then)."""
        assert self.process is None or self.process.returncode is not None, "already running"
        offset = self.log.stat().st_size if self.log.exists() else 0
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        env["PYTHONPATH"] = str(self.root)
        env["COUNTDOWN"] = str(self.countdown)
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server",
                "--port",
                "0",
                "--redis-url",
                self.redis_url,
                "--solver-workers",
                "0",
                "--grace",
                str(self.grace),
                # One server, restarted: the same node id takes its rooms back at once.
                "--node-id",
                "faults",
                cwd=self.root,
                env=env,
                stdout=out,
                stderr=out,
            )
        deadline = time.monotonic() + STARTUP
        while True:
            with self.log.open("rb") as text:
                text.seek(offset)
                found = _LISTENING.search(text.read())
            if found:
                self.port = int(found.group(1))
                return
            if self.process.returncode is not None or time.monotonic() > deadline:
                self.kill_now()
                raise AssertionError(f"the server did not start:\n{self.log.read_text(errors='replace')}")
            await asyncio.sleep(0.02)

    def kill_now(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()

    async def kill(self) -> None:
        """SIGKILL: nothing the server held only in memory survives."""
        self.kill_now()
        if self.process is not None:
            await self.process.wait()

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


#: ``doubt``: refused for storage, or no answer at all: the write may have landed.
Outcome = Literal["ack", "doubt", "refused"]


@dataclass
class Attempt:
    """One command a racer sent, and what came of it."""

    kind: str  # move, undo, join, ready, start, resign, rematch, leave
    text: str  # the move sent (moves), else the kind
    outcome: Outcome = "doubt"  # until an answer says otherwise
    code: str = ""  # the error code when refused
    version: int = 0  # the room version the ack named
    board: list[list[int | None]] | None = None  # the racer's own board once the ack's events arrived
    move: str | None = None  # the canonical move the ack named


@dataclass
class Racer:
    """A racer and its ledger (see the module docstring)."""

    name: str
    client: RaceClient
    seat: int | None = None
    ledger: list[Attempt] = field(default_factory=list)
    #: The highest room version this racer has seen, by room.
    seen: dict[str, int] = field(default_factory=dict)

    @classmethod
    async def connect(cls, url: str, name: str, resume: str | None = None) -> Racer:
        client = await RaceClient.connect(url, name, resume=resume, reconnect=False)
        racer = cls(name, client)
        client.listen(racer._note_version)
        return racer

    def _note_version(self, room: str, message: ServerMessage) -> None:
        version = getattr(message, "version", None)
        if room and isinstance(version, int):
            self.seen[room] = max(self.seen.get(room, 0), version)

    async def reconnect(self, url: str) -> None:
        """A new connection to (a restarted server at) ``url``, resuming this player."""
        with contextlib.suppress(Exception):
            await self.client.close()
        self.client = await RaceClient.connect(url, self.name, resume=self.client.resume, reconnect=False)
        self.client.listen(self._note_version)

    def mirror(self, code: str) -> RoomMirror:
        return self.client.rooms[code]

    def board(self, code: str) -> list[list[int | None]] | None:
        assert self.seat is not None
        mirror = self.client.rooms.get(code)
        return None if mirror is None else mirror.board(self.seat)

    async def command(
        self,
        kind: str,
        code: str,
        build: Callable[[int], ClientMessage],
        text: str | None = None,
        timeout: float = 20.0,
    ) -> Attempt:
        """Send a command and note what came of it. Error answers are noted, not raised; a
        dropped connection raises ConnectionError (the attempt stays in doubt)."""
        attempt = Attempt(kind, text or kind)
        self.ledger.append(attempt)
        try:
            reply = await self.client.request(build, timeout=timeout)
        except ServerError as error:
            attempt.outcome = "doubt" if error.code == STORAGE_UNAVAILABLE else "refused"
            attempt.code = error.code
            return attempt
        attempt.outcome = "ack"
        if isinstance(reply, Joined):
            self.seat, code = reply.seat, reply.room
            mirror = await self.wait_mirror(code)
            attempt.version = mirror.version
        elif isinstance(reply, Ack):
            attempt.version = reply.version or 0
            attempt.move = reply.move
            await self.wait_version(code, attempt.version)
        if self.seat is not None and code in self.client.rooms:
            attempt.board = self.board(code)
        return attempt

    async def wait_mirror(self, code: str, timeout: float = 10.0) -> RoomMirror:
        deadline = time.monotonic() + timeout
        while code not in self.client.rooms:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: no snapshot of {code}")
            await asyncio.sleep(0.005)
        return self.client.rooms[code]

    async def wait_version(self, code: str, version: int, timeout: float = 10.0) -> None:
        """Wait until the mirror of ``code`` is at ``version`` or later (the ack's events arrived)."""
        deadline = time.monotonic() + timeout
        while True:
            mirror = self.client.rooms.get(code)
            if mirror is not None and mirror.version >= version:
                return
            if time.monotonic() > deadline:
                have = None if mirror is None else mirror.version
                raise AssertionError(f"{self.name}: room {code} stayed at version {have}, not {version}")
            await asyncio.sleep(0.005)

    def acked(self, kind: str | None = None) -> list[Attempt]:
        return [a for a in self.ledger if a.outcome == "ack" and (kind is None or a.kind == kind)]

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()
