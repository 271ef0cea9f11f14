"""Login limits: every try of a password (``login``, ``change_password``) is counted before the
password is checked, and a try past a limit is refused (``too-many-attempts``) without
checking it, so no number of parallel tries buys more argon2 runs than the limits allow.

Three limits, each a counter in Redis shared by every process
(:meth:`~server.storage.accounts.AccountStore.take_attempt`):

- the name from this address (``Config.login_attempts`` free tries), or, for a device the
  account knows, the name from this device (the same number);
- the name from every device it does not know, all addresses together (``Config.name_attempts``);
- this address, whatever the name (``Config.address_attempts``).

Past its free tries a limit makes the next try wait ``Config.login_wait`` seconds after the
last one, twice that after the next, and so on up to ``Config.attempt_window`` seconds; a try
refused while it must wait is not counted, so hammering never lengthens the wait, and tries
are forgotten a window after the wait ends. No limit is a lock on the name: a stranger's
failures from another address only touch the name-wide counter, which a known device skips.

A **known device** is a connection whose token (guest or account, expired or not) names a
device that signed in to the account (registered, logged in, or resumed it) within
:data:`~server.features.tokens.DEVICE_MEMORY` and has not logged out since.

A correct password takes its try back from the name-wide and address counters and clears the
counter of the name from this address (or device): the failures it follows were its own or
its neighbours', and it has proved itself.
"""

from __future__ import annotations

import math

from protocol.errors import ErrorCode
from server.clock import now_ms
from server.connections.link import ClientLink
from server.errors import AccountError
from server.features import tokens
from server.features.context import Context
from server.storage.accounts import Attempt
from server.storage.name_skeleton import name_skeleton


async def known_device(ctx: Context, link: ClientLink, player: str | None) -> bool:
    """Whether ``link``'s device signed in to the account ``player`` before (False for no account)."""
    if player is None or link.device is None:
        return False
    return await ctx.accounts.knows_device(player, link.device, now_ms(), tokens.DEVICE_MEMORY)


async def take(ctx: Context, link: ClientLink, name: str, known: bool) -> list[Attempt]:
    """Count a password try for the account name ``name`` from ``link`` (``known``: from a
    device the account knows) under every limit, before the password is checked; the tries
    counted, to pass to :func:`succeeded`. ``too-many-attempts`` (nothing counted) when a
    limit makes it wait."""
    config = ctx.config
    skeleton, address = name_skeleton(name), link.address
    limits: list[tuple[str, str, int]] = []
    if known and link.device is not None:
        limits.append(("login-device", f"{skeleton}\n{link.device}", config.login_attempts))
    else:
        limits.append(("login-pair", f"{skeleton}\n{address}", config.login_attempts))
        limits.append(("login-name", skeleton, config.name_attempts))
    limits.append(("login-from", address, config.address_attempts))
    first_wait, window = round(config.login_wait * 1000), config.attempt_window * 1000
    counted: list[Attempt] = []
    for kind, who, free in limits:
        attempt = await ctx.accounts.take_attempt(kind, who, free, first_wait, window)
        if not attempt.counted:
            # Refused by a later limit: the earlier ones did not see a try after all.
            for earlier in counted:
                await ctx.accounts.refund_attempt(earlier)
            seconds = max(1, math.ceil(attempt.wait_ms / 1000))
            raise AccountError(ErrorCode.TOO_MANY_ATTEMPTS, f"too many failed logins; try again in {seconds} s")
        counted.append(attempt)
    return counted


async def succeeded(ctx: Context, counted: list[Attempt]) -> None:
    """The tries :func:`take` counted had the right password: clear the name-from-here
    counter, take the try back from the others."""
    own, *shared = counted
    await ctx.accounts.clear_attempts(own.kind, own.who)
    for attempt in shared:
        await ctx.accounts.refund_attempt(attempt)
