"""Resume tokens as connections hold them: issued, renewed, checked when presented, revoked.

A token (see :mod:`server.features.sessions`) resumes its player for ``Config.token_lifetime``
seconds after it was issued. Resuming renews it: once a tenth of its lifetime has passed, the
``welcome`` carries a fresh token of the same device that runs a full lifetime again (a
younger one is handed back as it came, so that reconnecting clients need not store a new
token every time). An older token of the device stays good until its own expiry.

A presented token that expired resumes nothing: the ``hello`` makes a new guest, on the same
device (the new guest's token keeps the device, so that a device that signed in to an account
before is still known when it logs in again). A token of a revoked device (``logout``) is
refused with ``invalid-token``, and so is a guest's token once that guest registered: the
account is resumed only with the token ``register`` (or ``login``) answered.

Tokens signed before tokens expired carry no expiry: they are good until a lifetime after the
service first checked a token (:meth:`~server.storage.accounts.AccountStore.tokens_since`),
and renewed into expiring ones when they resume; after that they are expired like the others.

Each connection keeps its token's device and expiry (``ClientLink.device``,
``ClientLink.token_expires``), from its ``welcome`` (or ``account`` reply): ``logout`` revokes
its device, a log-in asks whether its device is known.
"""

from __future__ import annotations

import math
import time
from typing import Final

from protocol.errors import ErrorCode
from server.clock import now_ms
from server.connections.link import ClientLink
from server.errors import AccountError
from server.features.context import Context
from server.features.sessions import Token, new_device_id, sign

#: The share of its lifetime a token lives before a resume renews it.
RENEW_AFTER: Final = 0.1
#: Seconds an account remembers a device that signed in to it (registered, logged in or resumed).
DEVICE_MEMORY: Final = 180 * 24 * 3600
#: Seconds a revocation outlives the token lifetime (clocks of processes differ a little).
_REVOCATION_SLACK: Final = 3600


async def issue(ctx: Context, link: ClientLink, player: str, generation: int, device: str | None = None) -> str:
    """A fresh token of ``player`` (``generation`` 0: a guest's) for ``link``, kept as the
    link's own. Its device is ``device``, else the link's token's, else a new one. An
    account's token makes its device known to the account."""
    device = device or link.device or new_device_id()
    # Rounded up: a token lives its full lifetime, and less than a second more.
    token = Token(player, generation, device, math.ceil(time.time() + ctx.config.token_lifetime))
    link.device, link.token_expires = device, token.expires
    if generation > 0:
        await ctx.accounts.remember_device(player, device, now_ms(), DEVICE_MEMORY)
    return sign(token, ctx.secret)


async def still_resumes(ctx: Context, token: Token) -> bool:
    """Whether ``token`` (verified) still resumes its player: False once it expired (the
    ``hello`` is a new guest on its device). ``invalid-token`` if its device logged out."""
    if await ctx.accounts.device_revoked(token.device):
        raise AccountError(ErrorCode.INVALID_TOKEN, "that resume token was logged out; log in again")
    now = time.time()
    # Read (and first set) for every token, not only legacy ones, so that the legacy tokens'
    # time runs from the upgrade, not from the first legacy token to come back.
    since = await ctx.accounts.tokens_since(int(now))
    if token.expires is None:
        return now < since + ctx.config.token_lifetime
    return now < token.expires


async def renewed(ctx: Context, link: ClientLink, token: Token, text: str) -> str:
    """The token ``link`` resumed with (``text``, proving ``token``), renewed if a tenth of its
    lifetime has passed (or it has no expiry), and kept as the link's."""
    lifetime = ctx.config.token_lifetime
    if token.expires is not None and token.expires - time.time() > lifetime * (1 - RENEW_AFTER):
        link.device, link.token_expires = token.device, token.expires
        return text
    return await issue(ctx, link, token.player, token.generation, token.device)


async def revoke(ctx: Context, link: ClientLink) -> None:
    """Refuse every token of ``link``'s device from now on (until the newest has expired)."""
    if link.device is None:
        return
    left = ctx.config.token_lifetime
    if link.token_expires is not None:
        left = max(left, math.ceil(link.token_expires - time.time()))
    await ctx.accounts.revoke_device(link.device, left + _REVOCATION_SLACK)
