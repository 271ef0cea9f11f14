"""Accounts: register (a guest becomes an account and keeps its id), log in, log out (here
or everywhere), change the password.

Passwords are hashed with argon2id (``argon2-cffi``'s defaults) in a worker thread, at most
two at a time, so the event loop never waits for a hash. A password is never logged nor
stored; it lives only in the request being served. Every password try is counted before the
password is checked and refused past the limits without checking it
(:mod:`server.features.login_limits`); each failure also holds its connection a while
(``Config.login_failure_delay``, a second by default).

Every reply that makes a connection an account carries a fresh token of the connection's
device (:mod:`server.features.tokens`); ``logout`` revokes that device's tokens.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from protocol.errors import CloseCode, ErrorCode
from protocol.messages import AccountInfo, Ack, ChangePassword, Login, Logout, Register
from server.clock import now_ms
from server.connections.link import ClientLink
from server.errors import AccountError
from server.features import login_limits, quick_match, tokens
from server.features.admission import count_new, refuse_banned, require_secure_transport
from server.features.context import Context, player_of
from server.features.identity import forget_player, rejoin
from server.features.moderation import close_links
from server.features.sessions import InvalidName, clean_name
from server.games import VARIANTS
from server.ops.log_limits import LogLimiter
from server.storage.accounts import Account, Registered
from server.storage.name_skeleton import name_skeleton

logger = logging.getLogger("server.accounts")
#: Registrations and logins are a client's to repeat (a login many times a second): their
#: lines are rate-limited, each kind on its own.
_log = LogLimiter(logger)

MIN_PASSWORD: Final = 8

#: argon2-cffi's defaults (RFC 9106's low-memory profile); see :func:`use_password_hasher`.
_hasher = PasswordHasher()
#: Hashes at once, per event loop (a semaphore is bound to the loop it first waited in).
_hashing: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()
# Verified against when the name is unknown, so a miss costs what a wrong password costs.
_dummy_hash: list[str] = []


def _hashes() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    semaphore = _hashing.get(loop)
    if semaphore is None:
        semaphore = _hashing[loop] = asyncio.Semaphore(2)
    return semaphore


def use_password_hasher(hasher: PasswordHasher) -> PasswordHasher:
    """Hash passwords with ``hasher`` in this process from now on; returns the one it replaces.
    A stored hash carries its own parameters, so every argon2 hash still verifies. For tests
    whose subject is not the hash's cost (the suite takes argon2's ``profiles.CHEAPEST``): a
    server never calls it."""
    global _hasher
    replaced, _hasher = _hasher, hasher
    return replaced


async def hash_password(password: str) -> str:
    async with _hashes():
        return await asyncio.to_thread(_hasher.hash, password)


async def password_matches(password_hash: str, password: str) -> bool:
    async with _hashes():
        try:
            return await asyncio.to_thread(_hasher.verify, password_hash, password)
        except (VerificationError, InvalidHashError):
            return False


def _check_new_password(password: str, name: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AccountError(ErrorCode.WEAK_PASSWORD, f"a password has at least {MIN_PASSWORD} characters")
    if name_skeleton(password) == name_skeleton(name):
        raise AccountError(ErrorCode.WEAK_PASSWORD, "a password must not be the name")


async def _account_reply(ctx: Context, link: ClientLink, request_id: int, account: Account, generation: int) -> None:
    """Answer with a fresh account token for ``link``'s device (which the account now knows)."""
    resume = await tokens.issue(ctx, link, account.player, generation)
    link.send(AccountInfo(id=request_id, player=account.player, name=account.name, resume=resume))


async def register(ctx: Context, link: ClientLink, message: Register) -> None:
    require_secure_transport(ctx, link)
    player = player_of(link)
    if link.generation > 0:
        raise AccountError(ErrorCode.ALREADY_ACCOUNT, "this connection is an account already")
    try:
        name = clean_name(message.name)
    except InvalidName as error:
        raise AccountError(ErrorCode.INVALID_NAME, str(error)) from None
    _check_new_password(message.password, name)
    await refuse_banned(ctx, player)
    if await ctx.accounts.holder(name) is not None:
        raise AccountError(ErrorCode.NAME_TAKEN, "that name (or one that looks like it) is taken")
    await count_new(ctx, link, "register", ctx.config.accounts_per_address)
    password_hash = await hash_password(message.password)
    match await ctx.accounts.register(player, name, password_hash, now_ms()):
        case Registered.NAME_TAKEN:
            raise AccountError(ErrorCode.NAME_TAKEN, "that name (or one that looks like it) is taken")
        case Registered.ALREADY_ACCOUNT:
            raise AccountError(ErrorCode.ALREADY_ACCOUNT, "this player is an account already: log in")
    await ctx.players.save_name(player, name)
    # A guest's rating was kept off the rating board: an account's is shown.
    for variant in VARIANTS:
        await ctx.boards.show_rating(variant, player)
    account = await ctx.accounts.get(player)
    assert account is not None
    # The player's other connections are the same person: they become the account too, for
    # as long as they stay open (the guest's token they hold resumes nothing any more).
    for other in ctx.by_player.get(player, {link}):
        other.name, other.generation = name, account.generation
    _log.log(logging.INFO, "registered", "player %s registered as %s", player, name)
    await _account_reply(ctx, link, message.id, account, account.generation)


async def _checked(ctx: Context, link: ClientLink, name: str, password: str) -> Account:
    """The account ``name`` if ``password`` is its password; ``login-failed`` otherwise, and
    ``too-many-attempts`` (the password unchecked) past the login limits."""
    player = await ctx.accounts.holder(name)
    known = await login_limits.known_device(ctx, link, player)
    counted = await login_limits.take(ctx, link, name, known)
    account = None if player is None else await ctx.accounts.get(player)
    if account is None and not _dummy_hash:
        _dummy_hash.append(await hash_password("not anyone's password"))
    stored = account.password_hash if account is not None else _dummy_hash[0]
    if not await password_matches(stored, password) or account is None:
        # Held a while (``Config.login_failure_delay``): slows guessing further.
        await asyncio.sleep(ctx.config.login_failure_delay)
        raise AccountError(ErrorCode.LOGIN_FAILED, "wrong name or password")
    await login_limits.succeeded(ctx, counted)
    return account


async def login(ctx: Context, link: ClientLink, message: Login) -> None:
    require_secure_transport(ctx, link)
    if link.rooms:
        raise AccountError(ErrorCode.NOT_ALLOWED, "leave your rooms (and stop watching) before logging in")
    account = await _checked(ctx, link, message.name, message.password)
    await refuse_banned(ctx, account.player)
    if len(ctx.by_player.get(account.player, ())) >= ctx.config.max_connections_per_player:
        raise AccountError(ErrorCode.TOO_MANY_CONNECTIONS, "this account has too many connections open")
    if link.player != account.player:
        quick_match.dropped(ctx, link)
        forget_player(ctx, link)
    link.player, link.name, link.generation = account.player, account.name, account.generation
    ctx.by_player.setdefault(account.player, set()).add(link)
    _log.log(logging.INFO, "logged-in", "account %s logged in", account.player)
    await _account_reply(ctx, link, message.id, account, account.generation)
    await rejoin(ctx, link, message.id)


async def logout(ctx: Context, link: ClientLink, message: Logout) -> None:
    """``everywhere``: revoke every token of the account, close all its connections.
    Otherwise revoke this connection's device's tokens (a guest's too) and close every
    connection that holds them, on every process of the service; the account forgets the
    device."""
    player = player_of(link)
    if message.everywhere:
        if link.generation == 0:
            raise AccountError(ErrorCode.ACCOUNT_REQUIRED, "only an account can log out everywhere")
        generation = await ctx.accounts.revoke(player)
        link.send(Ack(id=message.id))
        await ctx.accounts.announce({"action": "revoke", "player": player, "generation": str(generation)})
        close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out everywhere", below=generation)
        return
    device = link.device
    await tokens.revoke(ctx, link)
    if device is not None and link.generation > 0:
        await ctx.accounts.forget_device(player, device)
    link.send(Ack(id=message.id))
    close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out", only=link)
    if device is not None:
        # Every process, this one included, closes the device's other connections.
        await ctx.accounts.announce({"action": "logout-device", "player": player, "device": device})


async def change_password(ctx: Context, link: ClientLink, message: ChangePassword) -> None:
    require_secure_transport(ctx, link)
    player = player_of(link)
    if link.generation == 0:
        raise AccountError(ErrorCode.ACCOUNT_REQUIRED, "register first: guests have no password")
    account = await ctx.accounts.get(player)
    assert account is not None
    await _checked(ctx, link, account.name, message.password)
    _check_new_password(message.new_password, account.name)
    generation = await ctx.accounts.set_password(player, await hash_password(message.new_password))
    link.generation = generation
    await _account_reply(ctx, link, message.id, account, generation)
    # Every other session of the account held a token that is void now: they end.
    await ctx.accounts.announce({"action": "revoke", "player": player, "generation": str(generation)})
    close_links(ctx, player, CloseCode.LOGGED_OUT, "the password was changed", below=generation)
