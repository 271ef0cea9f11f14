"""HTTP on the websocket port: health, readiness, metrics, static files, the origin check, and
the operational flags (JSON logs, draining on SIGTERM)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Request
from websockets.sync.client import connect
from websockets.typing import Origin

from client.lib.connection import RaceClient, ServerError
from protocol.messages import CreateRoom, Joined, PlayMove, Ready, RoomOptions
from server.config import parse_args
from server.net.http import HttpRoutes, static_file
from server.ops.logging_setup import setup_logging
from tests.known_deals import winning_line
from tests.web.conftest import ThreadedServer

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent.parent


def get(base: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A raw GET of ``path`` exactly as written (no normalisation of ``..`` or escapes)."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a thread of its own: Playwright's sync API, once started by the browser
    tests, keeps an event loop running in the main thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal="24") as running:
        yield running


def test_health_and_readiness(srv: ThreadedServer) -> None:
    assert get(srv.base, "/healthz")[::2] == (200, b"ok\n")
    assert get(srv.base, "/readyz")[::2] == (200, b"ready\n")
    srv.server.readiness.start_draining()
    status, _, body = get(srv.base, "/readyz")
    assert status == 503
    assert b"draining" in body
    assert get(srv.base, "/healthz")[0] == 200


def test_readiness_reports_storage_failure() -> None:
    async def broken() -> None:
        raise ConnectionError("no route to Redis")

    from server.ops.readiness import Readiness

    readiness = Readiness(ping=broken)
    assert run(readiness()) == "starting: rooms are being restored"
    readiness.mark_restored()
    assert "storage unavailable: no route to Redis" in (run(readiness()) or "")


def test_metrics_parse_and_count(srv: ThreadedServer) -> None:
    async def play() -> None:
        client = await RaceClient.connect(srv.ws, "Metric", reconnect=False)
        try:
            options = RoomOptions(max_racers=1, deal="24")
            joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
            assert isinstance(joined, Joined)
            await client.request(lambda i: Ready(id=i, room=joined.room))
            await client.wait_room(joined.room, lambda m: m.board(0) is not None)
            await client.request(lambda i: PlayMove(id=i, room=joined.room, move=winning_line()[0]))
            with pytest.raises(ServerError):
                await client.request(lambda i: PlayMove(id=i, room=joined.room, move="KD>hc"))
        finally:
            await client.close()

    srv.call(play())
    status, headers, body = get(srv.base, "/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=")
    families = {family.name: family for family in text_string_to_metric_families(body.decode())}
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families.values()
        for sample in family.samples
    }
    for name in (
        "solitaire_connections",
        "solitaire_rooms",
        "solitaire_requests",
        "solitaire_move_ack_seconds",
        "solitaire_redis_command_seconds",
        "solitaire_event_loop_lag_seconds",
        "solitaire_gc_pause_seconds",
        "solitaire_spectator_deliveries",
        "solitaire_solver_queue",
        "solitaire_winnable_pool_depth",
        "solitaire_closes",
        "solitaire_rate_limited",
        "process_resident_memory_bytes",
    ):
        assert name in families, name
    assert samples[("solitaire_requests_total", (("outcome", "ok"), ("type", "hello")))] >= 1
    assert samples[("solitaire_requests_total", (("outcome", "ok"), ("type", "move")))] >= 1
    assert samples[("solitaire_requests_total", (("outcome", "illegal-move"), ("type", "move")))] >= 1
    assert samples[("solitaire_move_ack_seconds_count", ())] >= 1
    assert samples[("solitaire_rooms", (("state", "racing"),))] >= 1
    assert samples[("solitaire_connections_opened_total", ())] >= 1


def test_static_files_and_headers(srv: ThreadedServer) -> None:
    status, headers, body = get(srv.base, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert b'<script type="module" src="/js/main.js">' in body
    assert get(srv.base, "/r/K7Q2M9XD")[::2] == (200, body)
    assert get(srv.base, "/js/main.js")[1]["content-type"] == "text/javascript; charset=utf-8"
    assert get(srv.base, "/style.css")[1]["content-type"] == "text/css; charset=utf-8"
    assert get(srv.base, "/favicon.svg")[1]["content-type"] == "image/svg+xml"
    assert get(srv.base, "/rules.html")[0] == 200


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/js/../../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/%2E%2E/%2E%2E/pyproject.toml",
        "/js/%2e%2e/%2e%2e/server/app.py",
        "/..%2fpyproject.toml",
        "/js%2f..%2f..%2fpyproject.toml",
        "/..%5cpyproject.toml",
        "/..\\pyproject.toml",
        "/%252e%252e/pyproject.toml",
        "//etc/passwd",
        "/vendor/../../README.md",
        "/.hidden",
        "/%00",
        "/%ff%fe",
        "/nothing-here.js",
        "/js",
    ],
)
def test_paths_outside_the_web_folder_are_not_found(srv: ThreadedServer, path: str) -> None:
    status, _, body = get(srv.base, path)
    assert status == 404, (path, body[:80])


def test_symlinks_out_of_the_folder_are_not_found(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "inside.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "dir").symlink_to(tmp_path)
    assert static_file(root, "/inside.txt") == (root / "inside.txt").resolve()
    assert static_file(root, "/escape.txt") is None
    assert static_file(root, "/dir/secret.txt") is None

    async def ready() -> str | None:
        return None

    routes = HttpRoutes(ready, web_root=root)
    assert run(routes.route("/escape.txt")).status_code == 404
    assert run(routes.route("/inside.txt?x=1")).body == b"inside"


def test_browser_origins_are_checked(srv: ThreadedServer) -> None:
    with connect(srv.ws) as ws:  # no Origin: the terminal client, bots
        ws.send(b"\x80")
    with connect(srv.ws, origin=Origin(srv.base)) as ws:  # the page's own origin
        ws.send(b"\x80")
    with pytest.raises(InvalidStatus) as refused:
        connect(srv.ws, origin=Origin("http://evil.example"))
    assert refused.value.response.status_code == 403


def test_a_flood_of_refused_origins_writes_a_few_lines(caplog: pytest.LogCaptureFixture) -> None:
    async def ready() -> str | None:
        return None

    async def flood() -> list[int]:
        routes = HttpRoutes(ready)
        statuses = []
        for n in range(1000):
            headers = Headers(
                [("Host", "race.example"), ("Upgrade", "websocket"), ("Origin", f"http://evil{n}.example")]
            )
            answer = await routes(cast(ServerConnection, None), Request("/", headers))
            statuses.append(0 if answer is None else answer.status_code)
        return statuses

    with caplog.at_level(logging.INFO, logger="server.http"):
        assert run(flood()) == [403] * 1000
    lines = [r for r in caplog.records if r.name == "server.http" and "refused a websocket" in r.getMessage()]
    assert 1 <= len(lines) <= 3
    assert lines[0].levelno == logging.INFO
    assert lines[0].getMessage() == "refused a websocket from origin 'http://evil0.example'"


def test_allowed_origins_are_configurable(web_server: Any) -> None:
    with web_server(allowed_origins=("https://race.example",)) as running:
        with connect(running.ws, origin=Origin("https://race.example")) as ws:
            ws.send(b"\x80")
        with pytest.raises(InvalidStatus):
            connect(running.ws, origin=Origin("https://other.example"))


def raw_answer(base: str, request: bytes) -> bytes:
    """The server's answer to ``request``, sent as it is: all of it, or the head of a 101."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
            if answer.startswith(b"HTTP/1.1 101 ") and b"\r\n\r\n" in answer:
                break
    return answer


UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


@pytest.mark.parametrize(
    "repeated",
    [b"Host: evil.example\r\n", b"Origin: http://a.example\r\nOrigin: http://b.example\r\n", b"Upgrade: websocket\r\n"],
    ids=["host", "origin", "upgrade"],
)
def test_a_repeated_single_header_gets_400_and_no_traceback(
    srv: ThreadedServer, repeated: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    answer = raw_answer(srv.base, UPGRADE + repeated + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"more than one" in answer
    assert not [record for record in caplog.records if record.exc_info]


def test_pipelined_requests_get_400_and_no_traceback(srv: ThreadedServer, caplog: pytest.LogCaptureFixture) -> None:
    health = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    assert raw_answer(srv.base, health + health).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert not [record for record in caplog.records if record.exc_info]


def test_with_allowed_hosts_another_host_name_reaches_nothing_but_health(web_server: Any) -> None:
    """DNS rebinding: a hostile page on a name that resolves here is the page's own origin,
    but not one of the hosts the operator named."""
    with web_server(allowed_hosts=("race.example",)) as running:
        assert get(running.base, "/", {"Host": "evil.example"})[0] == 421
        rebound = UPGRADE.replace(b"Host: localhost", b"Host: evil.example") + b"Origin: http://evil.example\r\n\r\n"
        assert raw_answer(running.base, rebound).startswith(b"HTTP/1.1 421 ")
        assert get(running.base, "/", {"Host": "race.example:443"})[0] == 200
        named = UPGRADE.replace(b"Host: localhost", b"Host: race.example") + b"Origin: https://race.example\r\n\r\n"
        assert raw_answer(running.base, named).startswith(b"HTTP/1.1 101 ")
        assert get(running.base, "/healthz", {"Host": "10.0.0.7:8765"})[0] == 200


def test_flags() -> None:
    config = parse_args(["--log-format", "json", "--drain", "2.5", "--allowed-origins", "https://a.example, *"], {})
    assert (config.log_format, config.drain, config.allowed_origins) == ("json", 2.5, ("https://a.example", "*"))
    config = parse_args([], {"LOG_FORMAT": "json", "DRAIN": "1", "ALLOWED_ORIGINS": "https://b.example"})
    assert (config.log_format, config.drain, config.allowed_origins) == ("json", 1.0, ("https://b.example",))
    assert parse_args([], {}).log_format == "text"


def test_json_logs_are_one_object_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        setup_logging("INFO", "json")
        logging.getLogger("server").info("room %s is %s", "K7Q2M9XD", "racing")
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("server").exception("failed")
    finally:
        root.handlers, root.level = saved[0], saved[1]
    lines = capsys.readouterr().err.strip().splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["message"] == "room K7Q2M9XD is racing"
    assert (records[0]["level"], records[0]["logger"]) == ("INFO", "server")
    assert "ValueError: boom" in records[1]["exc_info"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sigterm_drains_then_stops(tmp_path: Path, redis_url: str) -> None:
    port = _free_port()
    env = {**os.environ, "REDIS_URL": redis_url}
    flags = ["--port", str(port), "--solver-workers", "0", "--drain", "1.5", "--log-format", "json"]
    process = subprocess.Popen(
        [sys.executable, "-m", "server", *flags],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if get(base, "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.4)
        status, _, body = get(base, "/readyz")
        assert (status, b"draining" in body) == (503, True)
        assert process.poll() is None, "the server stopped before the drain time was up"
        assert process.wait(20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    records = [json.loads(line) for line in process.stderr.read().splitlines() if line.strip()]
    messages = [record["message"] for record in records]
    assert any("draining" in message for message in messages), messages
    assert "server stopped" in messages
