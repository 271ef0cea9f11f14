"""Who may come in: bans, revoked tokens, new identities per address, and where passwords may
travel. Used by ``hello`` (identity) and by the account requests.

A connection's address and whether it is secure come from where it opened
(:mod:`server.connections.origin`: the trusted balancer's PROXY header, or the peer itself).
Frames carrying passwords are accepted over secure connections only (TLS to a trusted
balancer or to a TLS listener; a loopback client where no balancer is configured), or
anywhere when ``Config.plain_passwords`` is on.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.errors import ErrorCode
from server.connections.link import ClientLink
from server.errors import AccountError
from server.features.context import Context
from server.storage.accounts import Account

#: Seconds of the window in which new accounts and new identities per address are counted.
HOUR = 3600


def require_secure_transport(ctx: Context, link: ClientLink) -> None:
    """Refuse (``insecure-transport``) a password that travelled a network in the clear."""
    if ctx.config.plain_passwords or link.secure:
        return
    if link.socket is None:
        raise AccountError(ErrorCode.INSECURE_TRANSPORT, "passwords are accepted only from the client's own connection")
    raise AccountError(
        ErrorCode.INSECURE_TRANSPORT,
        "passwords are accepted only over wss:// (TLS); this connection is plain ws:// from another host",
    )


async def refuse_banned(ctx: Context, player: str) -> None:
    """``banned`` if an operator banned ``player``."""
    reason = await ctx.accounts.ban_reason(player)
    if reason is not None:
        raise AccountError(ErrorCode.BANNED, f"this player is banned: {reason}")


async def count_new(ctx: Context, link: ClientLink, kind: str, limit: int) -> None:
    """Count a new ``kind`` (``identity``, ``register``) from the link's address this hour;
    ``address-limit`` past ``limit``."""
    if await ctx.accounts.count_attempt(kind, link.address, HOUR) > limit:
        what = "accounts" if kind == "register" else "new players"
        raise AccountError(ErrorCode.ADDRESS_LIMIT, f"too many {what} from this address this hour; try again later")


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
        raise AccountError(ErrorCode.INVALID_TOKEN, "that guest's token was replaced when it registered; log in")
    if generation != current:
        raise AccountError(
            ErrorCode.INVALID_TOKEN, "that resume token was revoked (logged out or password changed); log in again"
        )
    return Admitted(player, account)
