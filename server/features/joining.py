"""The ``joined`` reply: which room, in what role, and, for a client another server of the
service holds, the room's home (PROTOCOL.md, "Going home")."""

from __future__ import annotations

from protocol.replies import Joined
from protocol.values import Role
from server.connections.link import ClientLink
from server.features.context import Context


def joined(ctx: Context, link: ClientLink, request_id: int, room: str, role: Role, seat: int | None = None) -> Joined:
    """The ``joined`` reply to ``link``. A link relayed from another node (its client is
    connected there) is told this node's route at the balancer, when it has one: the room
    runs here, and the client may reconnect here to be served without the hop."""
    home = ctx.config.route if link.relay is not None else None
    return Joined(id=request_id, room=room, role=role, seat=seat, home=home)
