"""One connected client, as the hub sees it: identity, limits, and a way to send frames."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection, broadcast

from protocol.codec import encode
from protocol.messages import Error, ServerMessage
from server.limits import Offences, TokenBucket


@dataclass(eq=False, slots=True)
class ClientLink:
    """A websocket connection and what the server knows of it. Compared by identity."""

    socket: ServerConnection
    bucket: TokenBucket
    offences: Offences
    player: str | None = None
    name: str = ""
    #: Rooms this connection follows, as racer (seat number) or spectator (None).
    rooms: dict[str, int | None] = field(default_factory=dict)
    opened: float = field(default_factory=time.monotonic)

    def send_frame(self, frame: bytes) -> None:
        """Queue an encoded frame without waiting (frames keep their order)."""
        broadcast([self.socket], frame)

    def send(self, message: ServerMessage) -> None:
        self.send_frame(encode(message))

    def error(self, code: str, message: str, request_id: int | None, rule: str | None = None) -> None:
        self.send(Error(code=code, message=message, id=request_id, rule=rule))


def send_to_all(links: list[ClientLink], frame: bytes) -> None:
    """The same bytes to every link, encoded once by the caller."""
    if links:
        broadcast([link.socket for link in links], frame)
