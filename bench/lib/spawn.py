"""Starting the process under test and reading its cost from /proc (shared by every bench).

:func:`spawn_server` starts ``python -m server`` (its embedded Redis included) or, with
``module="bench.relay"``, the bare relay, on a free loopback port, optionally pinned to
some CPUs (``os.sched_setaffinity`` in the child before it starts, so its Redis child
inherits the pinning). :class:`ProcSample` reads a process's CPU time and RSS.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def raise_nofile_limit() -> int:
    """Raise the soft limit of open files to the hard limit; return the new soft limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def exit_on_sigterm() -> None:
    """Make SIGTERM raise SystemExit, so a bench stopped with ``kill`` still stops what it started."""
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))


def pin(cpus: Sequence[int] | None) -> None:
    """Run this process (and the children it starts from now on) only on ``cpus``; None: anywhere."""
    if cpus:
        os.sched_setaffinity(0, set(cpus))


def parse_cpus(text: str | None) -> tuple[int, ...] | None:
    """``"0"`` or ``"0,1"`` as a tuple of CPU numbers; None or ``""`` for no pinning."""
    if not text:
        return None
    return tuple(int(part) for part in text.split(","))


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` (a loopback address) that nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def distinct_free_ports(hosts: Sequence[str]) -> list[int]:
    """A free port on each of ``hosts`` (loopback addresses, repeats allowed), no two the same
    number: each probe is held until all are chosen (:func:`free_port` twice in a row may give
    the same port), and a number already chosen on another address is passed over (a
    process's log is named after its port)."""
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        for host in hosts:
            while True:
                probe = stack.enter_context(socket.socket())
                probe.bind((host, 0))
                port = int(probe.getsockname()[1])
                if port not in ports:
                    ports.append(port)
                    break
        return ports


def check_loopback(url: str) -> None:
    """Refuse to load anything but this machine: the tools are for local measurements."""
    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"refusing to load {host!r}: only loopback addresses (127.0.0.1, localhost, ::1)")


@dataclass(frozen=True, slots=True)
class ProcSample:
    """CPU time and memory of one process at one moment, read from /proc."""

    pid: int
    cpu: float  # seconds of user + system time
    rss_kb: int
    hwm_kb: int  # peak RSS so far
    system: float = 0.0  # seconds of system time (part of ``cpu``)
    wakeups: int = 0  # voluntary context switches of the main thread: each sleep it woke from

    @classmethod
    def read(cls, pid: int) -> ProcSample:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces; the fields after it are fixed.
            fields = stat.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
        status = {}
        with open(f"/proc/{pid}/status") as text:
            for line in text:
                key, _, value = line.partition(":")
                status[key] = value.split()
        # A process that exited and is not yet reaped (a load worker done with its share)
        # keeps its CPU times but no memory lines.
        rss, hwm = (int(status[key][0]) if key in status else 0 for key in ("VmRSS", "VmHWM"))
        return cls(pid, cpu, rss, hwm, int(fields[12]) / CLOCK_TICKS, int(status["voluntary_ctxt_switches"][0]))


def precise_cpu(pid: int) -> float:
    """CPU seconds the process has run so far, to the nanosecond (the scheduler's own count, summed
    over its threads from /proc/<pid>/task/*/schedstat); /proc/<pid>/stat counts 10 ms ticks."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except OSError:
            continue  # the thread has just ended
    return total / 1e9


def send_queue_bytes(port: int) -> int:
    """Bytes waiting in the kernel's send queues of the TCP connections whose local port is ``port``
    (the server's side of its connections), from /proc/net/tcp: memory a slow reader costs the
    machine before any of it shows in the server's RSS."""
    total = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as text:
                next(text)
                for line in text:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port:
                        total += int(fields[4].split(":")[0], 16)
        except OSError:
            continue
    return total


def child_pids(parent: int) -> Iterator[tuple[int, str]]:
    """(pid, command name) of every process whose parent is ``parent``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if int(text.rsplit(")", 1)[1].split()[1]) == parent:
            yield int(entry), name


def redis_child(server_pid: int) -> int | None:
    """The embedded Redis (valkey-server or redis-server) started by the server, if any."""
    for pid, name in child_pids(server_pid):
        if "valkey" in name or "redis" in name:
            return pid
    return None


@dataclass
class SpawnedServer:
    """A server started by a bench: the race server or the relay, with its embedded Redis."""

    process: subprocess.Popen[bytes]
    url: str
    data_dir: tempfile.TemporaryDirectory[str]
    log_path: Path
    name: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def redis_pid(self) -> int | None:
        return redis_child(self.pid)

    def sample(self) -> ProcSample:
        return ProcSample.read(self.pid)

    def stop(self) -> None:
        """SIGTERM (the server shuts down cleanly, stopping its Redis), SIGKILL after 20 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.data_dir.cleanup()

    def __enter__(self) -> SpawnedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _child_setup(cpus: Sequence[int] | None) -> None:
    raise_nofile_limit()
    pin(cpus)


def spawn_server(
    profile: Path | None = None,
    log_level: str = "WARNING",
    *,
    module: str = "server",
    cpus: Sequence[int] | None = None,
    extra: Sequence[str] = (),
    python: str = sys.executable,
    cwd: Path | None = None,
) -> SpawnedServer:
    """Start ``python -m <module>`` on a free loopback port and wait until it accepts connections.

    ``module`` is ``server`` (the race server, solver workers off so that background solving
    does not skew the figures) or ``bench.relay``; both take ``--port``, ``--data-dir`` (for
    their embedded Redis) and ``--log-level``. The child gets the raised open-files limit
    (for many connections) and runs on ``cpus`` if given. With ``profile``, it runs under
    cProfile, which writes its statistics there when the process exits. ``python`` and ``cwd``
    run another checkout's server (its venv's interpreter, started in its directory so that
    ``-m server`` imports that tree), as :mod:`bench.ab` does to compare two commits.
    """
    port = free_port()
    data_dir = tempfile.TemporaryDirectory(prefix="race-bench-")
    log_path = Path(data_dir.name) / "server.log"
    command = [python]
    if profile is not None:
        command += ["-m", "cProfile", "-o", str(profile)]
    command += ["-m", module, "--port", str(port), "--data-dir", str(Path(data_dir.name) / "redis")]
    if module == "server":
        command += ["--solver-workers", "0"]
    command += ["--log-level", log_level, *extra]
    env = dict(os.environ)
    if module == "server":
        # Every bot is a new guest from 127.0.0.1: the per-address limit on new guests (300 an
        # hour) would refuse most of a load. An environment variable, not a flag, so that a
        # checkout from before the setting existed (bench.ab's baseline) starts too.
        env.setdefault("IDENTITIES_PER_ADDRESS", "1000000000")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env, preexec_fn=lambda: _child_setup(cpus)
        )
    server = SpawnedServer(process, f"ws://127.0.0.1:{port}", data_dir, log_path, module)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            log_text = log_path.read_text(errors="replace")
            data_dir.cleanup()
            raise SystemExit(f"{module} exited with {process.returncode} while starting:\n{log_text}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit(f"{module} did not listen within 30 s")
        time.sleep(0.05)


def machine_cpu() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(n) for n in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy / CLOCK_TICKS, idle / CLOCK_TICKS


def describe_memory(sample: ProcSample) -> str:
    return f"{sample.rss_kb / 1024:.1f} MB (peak {sample.hwm_kb / 1024:.1f} MB)"


@dataclass(frozen=True, slots=True)
class Target:
    """A server a bench measures: where it listens, and its pid when known."""

    url: str
    pid: int | None

    def cpu(self) -> float:
        return precise_cpu(self.pid) if self.pid is not None else float("nan")

    def rss_mb(self) -> float:
        return ProcSample.read(self.pid).rss_kb / 1024 if self.pid is not None else float("nan")

    def send_queue_mb(self) -> float:
        """What the kernel holds in the send queues of the server's connections (see :func:`send_queue_bytes`)."""
        return send_queue_bytes(urlsplit(self.url).port or 80) / 1e6


def add_target_arguments(parser: argparse.ArgumentParser, server_cpus: str, client_cpus: str) -> None:
    """The options :func:`target` reads: ``--url``, ``--spawn``, ``--server-pid``, ``--server-cpus``
    (helped by ``server_cpus``) and ``--client-cpus`` (helped by ``client_cpus``)."""
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server (loopback only)")
    parser.add_argument("--spawn", action="store_true", help="start the server (embedded Redis) for the run")
    parser.add_argument("--server-pid", type=int, help="without --spawn: the server process to measure")
    parser.add_argument("--server-cpus", help=server_cpus)
    parser.add_argument("--client-cpus", help=client_cpus)


@contextlib.contextmanager
def target(args: argparse.Namespace) -> Iterator[Target]:
    """The race server to measure: started for the run (``args.spawn``, pinned to ``args.server_cpus``),
    or the one at ``args.url`` (pid ``args.server_pid``, if given)."""
    raise_nofile_limit()
    if args.spawn:
        with spawn_server(cpus=parse_cpus(args.server_cpus)) as spawned:
            yield Target(spawned.url, spawned.pid)
    else:
        check_loopback(args.url)
        yield Target(args.url, args.server_pid)


class WorkerProcesses:
    """Worker processes, one per plan, started at once (spawned: no state of this process
    goes with them), each given its plan and its end of a pipe; a context manager that never
    leaves one behind: on exit each has :attr:`grace` seconds to end, then is terminated."""

    #: Seconds a worker has to end by itself when the block is left.
    grace: float = 10.0

    def __init__(
        self, target: Callable[[Any, multiprocessing.connection.Connection], None], plans: Sequence[Any], name: str
    ) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[multiprocessing.connection.Connection] = []
        self.processes: list[multiprocessing.process.BaseProcess] = []
        for k, plan in enumerate(plans):
            ours, theirs = context.Pipe()
            process = context.Process(target=target, args=(plan, theirs), name=f"{name}-{k}")
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes if process.pid is not None]

    def tell(self, kind: str, value: object) -> None:
        """Send every worker ``(kind, value)``."""
        for pipe in self.pipes:
            pipe.send((kind, value))

    def join(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for each worker to end, then terminate it."""
        for process in self.processes:
            process.join(grace)
            if process.is_alive():
                process.terminate()
                process.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.join(self.grace)
