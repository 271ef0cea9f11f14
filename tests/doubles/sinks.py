"""A frame sink that keeps what a link is sent (:class:`server.connections.link.FrameSink`)."""

from __future__ import annotations

from typing import TypeVar

from protocol.codec import decode_server
from protocol.errors import CloseCode
from protocol.messages import ServerMessage
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink

M = TypeVar("M", bound=ServerMessage)


class ListSink:
    """Keeps each frame sent, in order, until closed; then keeps the close instead."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.closed_with: tuple[CloseCode, str] | None = None

    @property
    def closed(self) -> bool:
        return self.closed_with is not None

    def send_frame(self, frame: bytes) -> None:
        if self.closed_with is None:
            self.frames.append(frame)

    def close(self, code: CloseCode, reason: str) -> None:
        if self.closed_with is None:
            self.closed_with = (code, reason)

    @property
    def received(self) -> list[ServerMessage]:
        return [decode_server(frame) for frame in self.frames]

    def of(self, kind: type[M]) -> list[M]:
        """The messages received of type ``kind``, in order."""
        return [message for message in self.received if isinstance(message, kind)]


def listening_link(player: str | None = None, name: str = "") -> tuple[ClientLink, ListSink]:
    """A link of ``player`` whose frames go to a :class:`ListSink`, and that sink."""
    sink = ListSink()
    return ClientLink(None, TokenBucket(50, 100), Offences(200, 10), player, name, sink=sink), sink
