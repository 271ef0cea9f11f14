"""Request metrics at the connection level: each request's type and outcome, and move→ack latency.

:class:`MeteredLink` is a :class:`ClientLink` that notes the error code of the request
being served (every error the hub and the rooms answer goes through ``link.error``);
:func:`served` records the request once the hub is done with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from protocol.messages import ClientMessage
from server.client_link import ClientLink
from server.metrics import MOVE_ACK_SECONDS, REQUESTS


@dataclass(eq=False, slots=True)
class MeteredLink(ClientLink):
    """A link that remembers the outcome of the request it is serving: ``ok`` or its error code."""

    serving: int | None = None
    outcome: str = "ok"

    def begin(self, request_id: int) -> None:
        self.serving, self.outcome = request_id, "ok"

    def error(self, code: str, message: str, request_id: int | None, rule: str | None = None) -> None:
        if request_id is not None and request_id == self.serving:
            self.outcome = code
        ClientLink.error(self, code, message, request_id, rule)


def request_type(message: ClientMessage) -> str:
    """The wire ``type`` of a request (``move``, ``hello``, ...)."""
    return str(type(message).__struct_config__.tag)


def served(link: MeteredLink, message: ClientMessage, started: float) -> None:
    """Count ``message`` by type and outcome; a move played also times its ack (``started``
    is the ``time.perf_counter()`` when its frame was read)."""
    kind = request_type(message)
    REQUESTS.labels(kind, link.outcome).inc()
    if kind == "move" and link.outcome == "ok":
        MOVE_ACK_SECONDS.observe(time.perf_counter() - started)
    link.serving = None


def refused(kind: str) -> None:
    """Count a frame refused before any request was read: ``bad-frame``, ``rate-limited``, ..."""
    REQUESTS.labels("none", kind).inc()
