"""Request metrics at the connection level: each request's type and outcome, and move→ack latency.

:class:`MeteredLink` is a :class:`ClientLink` that notes the error code of the request
being served (every error the hub and the rooms answer goes through ``link.error``);
:func:`served` records the request once the hub is done with it.
"""

from __future__ import annotations

import time

from protocol.messages import ClientMessage, PlayMove
from server.connections.link import ClientLink
from server.ops.hot_metrics import CountCell
from server.ops.metrics import MOVE_ACK_SECONDS, REQUESTS


def request_type(message: ClientMessage) -> str:
    """The wire ``type`` of a request (``move``, ``hello``, ...)."""
    return str(type(message).__struct_config__.tag)


#: The count of each (request type, outcome) met so far, by the request's class: its wire
#: type is found once.
_counters: dict[tuple[type[ClientMessage], str], CountCell] = {}


def served(link: ClientLink, message: ClientMessage, started: float) -> None:
    """Count ``message`` by type and outcome; a move played also times its ack (``started``
    is the ``time.perf_counter()`` when its frame was read)."""
    counter = _counters.get((type(message), link.outcome))
    if counter is None:
        counter = _counters[type(message), link.outcome] = REQUESTS.child(request_type(message), link.outcome)
    counter.inc()
    if isinstance(message, PlayMove) and link.outcome == "ok":
        MOVE_ACK_SECONDS.observe(time.perf_counter() - started)
    link.serving = None


def refused(kind: str) -> None:
    """Count a frame refused before any request was read: ``bad-frame``, ``rate-limited``, ..."""
    REQUESTS.child("none", kind).inc()
