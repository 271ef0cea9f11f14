"""Who may come in: bans, revoked tokens, new identities per address, and where passwords may
travel. Used by ``hello`` (identity) and by the account requests.

A connection's address is the websocket peer's, or with ``Config.trust_proxy`` the first
address of the proxy's ``X-Forwarded-For``. Frames carrying passwords are accepted from
loopback peers (a TLS proxy on this host), through a trusted proxy that says the client
used ``https``, or anywhere when ``Config.plain_passwords`` is on.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from protocol.errors import ErrorCode
from server.connections.link import ClientLink
from server.features.context import Context
from server.rooms.errors import RoomError
from server.storage.accounts import Account

#: Seconds of the window in which new accounts and new identities per address are counted.
HOUR = 3600


def client_address(ctx: Context, link: ClientLink) -> str:
    """The client's address, as text ("unknown" when the transport does not say)."""
    socket = link.socket
    if socket is None:  # a request relayed from another node, which checked its client
        return "unknown"
    if ctx.config.trust_proxy and link.forwarded_for:
        return link.forwarded_for.split(",")[0].strip()[:64]
    peer = socket.remote_address
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return "unknown" if not peer else str(peer)[:64]


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def require_secure_transport(ctx: Context, link: ClientLink) -> None:
    """Refuse (``insecure-transport``) a password that came over plain ws:// from afar."""
    config = ctx.config
    if config.plain_passwords:
        return
    socket = link.socket
    if socket is None:
        raise RoomError(ErrorCode.INSECURE_TRANSPORT, "passwords are accepted only from the client's own connection")
    if config.trust_proxy and link.forwarded_proto.lower() == "https":
        return
    peer = socket.remote_address
    if isinstance(peer, tuple) and peer and _loopback(str(peer[0])):
        return
    raise RoomError(
        ErrorCode.INSECURE_TRANSPORT,
        "passwords are accepted only over wss:// (TLS); this connection is plain ws:// from another host",
    )


async def refuse_banned(ctx: Context, player: str) -> None:
    """``banned`` if an operator banned ``player``."""
    reason = await ctx.accounts.ban_reason(player)
    if reason is not None:
        raise RoomError(ErrorCode.BANNED, f"this player is banned: {reason}")


async def count_new(ctx: Context, link: ClientLink, kind: str, limit: int) -> None:
    """Count a new ``kind`` (``identity``, ``register``) from the link's address this hour;
    ``address-limit`` past ``limit``."""
    address = client_address(ctx, link)
    if await ctx.accounts.count_attempt(kind, address, HOUR) > limit:
        what = "accounts" if kind == "register" else "new players"
        raise RoomError(ErrorCode.ADDRESS_LIMIT, f"too many {what} from this address this hour; try again later")


@dataclass(frozen=True, slots=True)
class Admitted:
    """Who a ``hello`` makes the connection: the player, and their account if they have one."""

    player: str
    account: Account | None


async def admit(ctx: Context, link: ClientLink, new_player: str, token: tuple[str, int] | None) -> Admitted:
    """The player a ``hello`` with ``token`` (verified: player id, generation) admits, or
    ``new_player`` without one. Refuses a banned player, a revoked token (``invalid-token``:
    an account's token of an earlier generation, or the guest token of a player who has
    registered since, which register replaced) and too many new identities from one address."""
    if token is None:
        await count_new(ctx, link, "identity", ctx.config.identities_per_address)
        return Admitted(new_player, None)
    player, generation = token
    await refuse_banned(ctx, player)
    account = await ctx.accounts.get(player)
    current = 0 if account is None else account.generation
    if generation == 0 and account is not None:
        raise RoomError(ErrorCode.INVALID_TOKEN, "that guest's token was replaced when it registered; log in")
    if generation != current:
        raise RoomError(
            ErrorCode.INVALID_TOKEN, "that resume token was revoked (logged out or password changed); log in again"
        )
    return Admitted(player, account)
