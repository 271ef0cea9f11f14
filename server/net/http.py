"""Plain HTTP on the websocket port: health, readiness, metrics and the web client's files.

:class:`HttpRoutes` is the websockets ``process_request`` hook. A websocket upgrade
passes through (``None``) once its ``Origin`` is allowed; every other request gets an
HTTP response here and the connection closes:

- ``/healthz``: 200 ``ok`` while the process serves at all;
- ``/readyz``: 200 ``ready``, or 503 with the reason the readiness callable gives;
- ``/metrics``: :data:`server.ops.metrics.REGISTRY` in Prometheus text format;
- ``/`` and ``/r/<CODE>``: the web client's ``index.html`` (it routes by path itself);
- any other path: a file under the web folder, or 404. Paths with ``..`` segments, encoded
  slashes or backslashes, hidden names, or that resolve (symlinks included) outside the
  folder get 404.

A request that repeats a header that must be single (``Host``, ``Origin``, ``Upgrade``, the
websocket key and version) gets 400. With allowed hosts configured, a websocket or a page
asked for under another ``Host`` gets 421: a page on a hostile name that resolves to this
server (DNS rebinding) reaches nothing. Health, readiness and metrics answer under any host.

Every response carries a Content-Security-Policy that allows scripts, styles and
websocket connections from this origin only (no inline script).
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.connections.limits import Pacer
from server.ops.log_limits import LogLimiter
from server.ops.metrics import CLOSES, REGISTRY

#: Seconds between two websocket handshakes at most (about 330 new connections a second: opening
#: one costs the server about 2 ms of CPU, so a burst takes at most two thirds of a core).
HANDSHAKE_INTERVAL = 0.003
#: A handshake that would wait longer than this is refused with 503 (clients retry).
HANDSHAKE_QUEUE_SECONDS = 10.0
#: Openings that may wait in line (the same wait, counted in openings).
HANDSHAKE_LINE = round(HANDSHAKE_QUEUE_SECONDS / HANDSHAKE_INTERVAL)

logger = logging.getLogger("server.http")

#: Says why the server is not ready, or None when it is.
ReadinessProbe = Callable[[], Awaitable[str | None]]

#: The web client's folder in the source tree.
WEB_ROOT = Path(__file__).resolve().parents[2] / "client" / "web"

#: Seconds a readiness probe may take before it counts as a failure.
READINESS_TIMEOUT = 2.0

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".map": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}

#: ``/r/CODE``: a room link (codes are 8 characters of the room alphabet; any case).
_ROOM_LINK = re.compile(r"/r/[A-Za-z0-9]{1,16}/?")


def _response(status: http.HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-cache"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _text(status: http.HTTPStatus, text: str) -> Response:
    return _response(status, text.encode(), "text/plain; charset=utf-8")


#: Headers a request may carry once.
SINGLE_HEADERS = ("Host", "Origin", "Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version")

#: Paths answered under any Host (a balancer's health checks, the metrics scraper).
_ANY_HOST = frozenset({"/healthz", "/readyz", "/metrics"})


def repeated_header(request: Request) -> str | None:
    """The first header of :data:`SINGLE_HEADERS` that ``request`` repeats, if any."""
    return next((name for name in SINGLE_HEADERS if len(request.headers.get_all(name)) > 1), None)


def host_allowed(request: Request, allowed: frozenset[str]) -> bool:
    """Whether ``request``'s ``Host`` (without its port) is one of ``allowed`` (empty: any)."""
    if not allowed:
        return True
    host = urlsplit("//" + request.headers.get("Host", "")).hostname
    return host is not None and host in allowed


def is_websocket_upgrade(request: Request) -> bool:
    return "websocket" in request.headers.get("Upgrade", "").lower()


def origin_allowed(request: Request, allowed: frozenset[str]) -> bool:
    """Whether a websocket upgrade may proceed: no ``Origin`` (not a browser: the terminal
    client, bots), ``*`` in ``allowed``, an origin listed in ``allowed``, or the page's own
    origin (its host and port are the ``Host`` the request was sent to)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    if "*" in allowed or origin in allowed:
        return True
    host = request.headers.get("Host")
    return host is not None and urlsplit(origin).netloc.lower() == host.lower()


def static_file(root: Path, raw_path: str) -> Path | None:
    """The file ``raw_path`` (the request target without its query) names under ``root``,
    or None when it names none or tries to leave ``root``."""
    if "\\" in raw_path or "%2f" in raw_path.lower() or "%5c" in raw_path.lower():
        return None
    path = unquote(raw_path, errors="strict")
    if not path.startswith("/") or "\x00" in path or "\\" in path:
        return None
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") or part.startswith(".") for part in parts):
        return None
    if not parts:
        parts = ["index.html"]
    base = root.resolve()
    try:
        target = base.joinpath(*parts).resolve()
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target


class HttpRoutes:
    """The ``process_request`` hook: ``serve(handler, ..., process_request=HttpRoutes(...))``.

    ``readiness`` reports why the server is not ready (None when it is); ``allowed_origins``
    lists the browser origins, besides the page's own, that may open websockets (``*``: any).
    """

    def __init__(
        self,
        readiness: ReadinessProbe,
        allowed_origins: Iterable[str] = (),
        web_root: Path = WEB_ROOT,
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        self.readiness = readiness
        self.allowed_origins = frozenset(allowed_origins)
        self.allowed_hosts = frozenset(host.lower() for host in allowed_hosts)
        self.web_root = web_root
        self._handshakes = Pacer(HANDSHAKE_INTERVAL)
        #: Refused origins are a client's to repeat at will: their lines are rate-limited.
        self._log = LogLimiter(logger)
        #: Off when :class:`~server.net.listener.OpeningLine` paces the openings before this.
        self.pace_handshakes = True

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        repeated = repeated_header(request)
        if repeated is not None:
            CLOSES.labels("bad-request").inc()
            return _text(http.HTTPStatus.BAD_REQUEST, f"more than one {repeated} header\n")
        path = request.path.split("?", 1)[0]
        if path not in _ANY_HOST and not host_allowed(request, self.allowed_hosts):
            CLOSES.labels("host").inc()
            return _text(http.HTTPStatus.MISDIRECTED_REQUEST, "this server does not answer for that host name\n")
        if is_websocket_upgrade(request):
            if origin_allowed(request, self.allowed_origins):
                if not self.pace_handshakes:
                    return None
                # A burst of new connections is let in one at a time, so live rooms' moves
                # interleave with the handshakes instead of queueing behind all of them.
                wait = self._handshakes.delay(time.monotonic())
                if wait > HANDSHAKE_QUEUE_SECONDS:
                    CLOSES.labels("busy").inc()
                    return _text(http.HTTPStatus.SERVICE_UNAVAILABLE, "too many connections opening; retry shortly\n")
                if wait > 0:
                    await asyncio.sleep(wait)
                return None
            CLOSES.labels("origin").inc()
            self._log.log(
                logging.INFO, "refused-origin", "refused a websocket from origin %r", request.headers.get("Origin")
            )
            return _text(http.HTTPStatus.FORBIDDEN, "this origin may not open a websocket here\n")
        return await self.route(request.path)

    async def route(self, target: str) -> Response:
        """The response for a GET of ``target`` (path and query)."""
        path = target.split("?", 1)[0].split("#", 1)[0]
        if path == "/healthz":
            return _text(http.HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            reason = await self._not_ready()
            if reason is None:
                return _text(http.HTTPStatus.OK, "ready\n")
            return _text(http.HTTPStatus.SERVICE_UNAVAILABLE, f"not ready: {reason}\n")
        if path == "/metrics":
            return _response(http.HTTPStatus.OK, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
        if _ROOM_LINK.fullmatch(path):
            path = "/index.html"
        try:
            file = static_file(self.web_root, path)
        except UnicodeDecodeError:
            file = None
        if file is None:
            return _text(http.HTTPStatus.NOT_FOUND, "not found\n")
        content_type = CONTENT_TYPES.get(file.suffix.lower(), "application/octet-stream")
        return _response(http.HTTPStatus.OK, file.read_bytes(), content_type)

    async def _not_ready(self) -> str | None:
        try:
            return await asyncio.wait_for(self.readiness(), READINESS_TIMEOUT)
        except TimeoutError:
            return "the readiness check timed out"
        except Exception as error:
            return f"the readiness check failed: {error}"
