"""Accounts: register (a guest becomes an account and keeps its id), log in, log out (here
or everywhere), change the password.

Passwords are hashed with argon2id (``argon2-cffi``'s defaults) in a worker thread, at most
two at a time, so the event loop never waits for a hash. A password is never logged nor
stored; it lives only in the request being served. Failed logins are counted per account
name and per address in Redis (every process shares the counts): past the limits, logins
are refused with ``too-many-attempts`` until the window ends, and each failure also costs
its connection a second.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from protocol.errors import CloseCode, ErrorCode
from protocol.messages import AccountInfo, Ack, ChangePassword, Login, Logout, Register
from server.clock import now_ms
from server.connections.link import ClientLink
from server.features import quick_match
from server.features.admission import client_address, count_new, refuse_banned, require_secure_transport
from server.features.context import Context, player_of
from server.features.identity import forget_player, rejoin
from server.features.moderation import close_links
from server.features.sessions import InvalidName, clean_name, sign
from server.games import VARIANTS
from server.rooms.errors import RoomError
from server.storage.accounts import Account, Registered
from server.storage.name_skeleton import name_skeleton

logger = logging.getLogger("server.accounts")

MIN_PASSWORD: Final = 8
#: Seconds a failed login (or password check) holds its connection: slows guessing further.
FAILURE_DELAY: Final = 1.0

_hasher = PasswordHasher()
_hashing = asyncio.Semaphore(2)
# Verified against when the name is unknown, so a miss costs what a wrong password costs.
_dummy_hash: list[str] = []


async def hash_password(password: str) -> str:
    async with _hashing:
        return await asyncio.to_thread(_hasher.hash, password)


async def password_matches(password_hash: str, password: str) -> bool:
    async with _hashing:
        try:
            return await asyncio.to_thread(_hasher.verify, password_hash, password)
        except (VerificationError, InvalidHashError):
            return False


def _check_new_password(password: str, name: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise RoomError(ErrorCode.WEAK_PASSWORD, f"a password has at least {MIN_PASSWORD} characters")
    if name_skeleton(password) == name_skeleton(name):
        raise RoomError(ErrorCode.WEAK_PASSWORD, "a password must not be the name")


def _account_reply(ctx: Context, link: ClientLink, request_id: int, account: Account, generation: int) -> None:
    link.send(
        AccountInfo(
            id=request_id,
            player=account.player,
            name=account.name,
            resume=sign(account.player, ctx.secret, generation),
        )
    )


async def register(ctx: Context, link: ClientLink, message: Register) -> None:
    require_secure_transport(ctx, link)
    player = player_of(link)
    if link.generation > 0:
        raise RoomError(ErrorCode.ALREADY_ACCOUNT, "this connection is an account already")
    try:
        name = clean_name(message.name)
    except InvalidName as error:
        raise RoomError(ErrorCode.INVALID_NAME, str(error)) from None
    _check_new_password(message.password, name)
    await refuse_banned(ctx, player)
    if await ctx.accounts.holder(name) is not None:
        raise RoomError(ErrorCode.NAME_TAKEN, "that name (or one that looks like it) is taken")
    await count_new(ctx, link, "register", ctx.config.accounts_per_address)
    password_hash = await hash_password(message.password)
    match await ctx.accounts.register(player, name, password_hash, now_ms()):
        case Registered.NAME_TAKEN:
            raise RoomError(ErrorCode.NAME_TAKEN, "that name (or one that looks like it) is taken")
        case Registered.ALREADY_ACCOUNT:
            raise RoomError(ErrorCode.ALREADY_ACCOUNT, "this player is an account already: log in")
    await ctx.players.save_name(player, name)
    # A guest's rating was kept off the rating board: an account's is shown.
    for variant in VARIANTS:
        await ctx.boards.show_rating(variant, player)
    account = await ctx.accounts.get(player)
    assert account is not None
    # Every connection of this player holds the guest's token (good until the account's first
    # revocation): they are the same person, so they become the account too.
    for other in ctx.by_player.get(player, {link}):
        other.name, other.generation = name, account.generation
    logger.info("player %s registered as %s", player, name)
    _account_reply(ctx, link, message.id, account, account.generation)


async def _limits(ctx: Context, link: ClientLink, name: str) -> None:
    """``too-many-attempts`` while the account name or the address has used its failures."""
    config, accounts = ctx.config, ctx.accounts
    for kind, who, limit in (
        ("login-account", name_skeleton(name), config.login_attempts),
        ("login-address", client_address(ctx, link), config.address_attempts),
    ):
        count, left = await accounts.attempts(kind, who)
        if count >= limit:
            text = f"too many failed logins; try again in {max(left, 1)} s"
            raise RoomError(ErrorCode.TOO_MANY_ATTEMPTS, text)


async def _failed(ctx: Context, link: ClientLink, name: str) -> None:
    window = ctx.config.attempt_window
    await ctx.accounts.count_attempt("login-account", name_skeleton(name), window)
    await ctx.accounts.count_attempt("login-address", client_address(ctx, link), window)
    await asyncio.sleep(FAILURE_DELAY)


async def _checked(ctx: Context, link: ClientLink, name: str, password: str) -> Account:
    """The account ``name`` if ``password`` is its password; ``login-failed`` otherwise."""
    await _limits(ctx, link, name)
    account = await ctx.accounts.by_name(name)
    if account is None and not _dummy_hash:
        _dummy_hash.append(await hash_password("not anyone's password"))
    stored = account.password_hash if account is not None else _dummy_hash[0]
    if not await password_matches(stored, password) or account is None:
        await _failed(ctx, link, name)
        raise RoomError(ErrorCode.LOGIN_FAILED, "wrong name or password")
    await ctx.accounts.clear_attempts("login-account", name_skeleton(name))
    return account


async def login(ctx: Context, link: ClientLink, message: Login) -> None:
    require_secure_transport(ctx, link)
    if link.rooms:
        raise RoomError(ErrorCode.NOT_ALLOWED, "leave your rooms (and stop watching) before logging in")
    account = await _checked(ctx, link, message.name, message.password)
    await refuse_banned(ctx, account.player)
    if len(ctx.by_player.get(account.player, ())) >= ctx.config.max_connections_per_player:
        raise RoomError(ErrorCode.TOO_MANY_CONNECTIONS, "this account has too many connections open")
    if link.player != account.player:
        quick_match.dropped(ctx, link)
        forget_player(ctx, link)
    link.player, link.name, link.generation = account.player, account.name, account.generation
    ctx.by_player.setdefault(account.player, set()).add(link)
    logger.info("account %s logged in", account.player)
    _account_reply(ctx, link, message.id, account, account.generation)
    await rejoin(ctx, link, message.id)


async def logout(ctx: Context, link: ClientLink, message: Logout) -> None:
    player = player_of(link)
    if message.everywhere:
        if link.generation == 0:
            raise RoomError(ErrorCode.ACCOUNT_REQUIRED, "only an account can log out everywhere")
        generation = await ctx.accounts.revoke(player)
        link.send(Ack(id=message.id))
        await ctx.accounts.announce({"action": "revoke", "player": player, "generation": str(generation)})
        close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out everywhere", below=generation)
        return
    link.send(Ack(id=message.id))
    close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out", only=link)


async def change_password(ctx: Context, link: ClientLink, message: ChangePassword) -> None:
    require_secure_transport(ctx, link)
    player = player_of(link)
    if link.generation == 0:
        raise RoomError(ErrorCode.ACCOUNT_REQUIRED, "register first: guests have no password")
    account = await ctx.accounts.get(player)
    assert account is not None
    await _checked(ctx, link, account.name, message.password)
    _check_new_password(message.new_password, account.name)
    generation = await ctx.accounts.set_password(player, await hash_password(message.new_password))
    link.generation = generation
    _account_reply(ctx, link, message.id, account, generation)
    # Every other session of the account held a token that is void now: they end.
    await ctx.accounts.announce({"action": "revoke", "player": player, "generation": str(generation)})
    close_links(ctx, player, CloseCode.LOGGED_OUT, "the password was changed", below=generation)
