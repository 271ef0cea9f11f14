"""Accounts in Redis: names unique under their skeleton, password hashes, token generations,
bans, and the attempt counters that slow brute force and mass sign-ups.

An account's id is the player id it was registered from (a guest who registers keeps its id,
statistics and rating). ``generation`` starts at 1 and grows whenever the account's resume
tokens are revoked (password change, log out everywhere): a token carries the generation
it was signed with and is refused once it is not the current one.

Attempt counters for new accounts and identities are fixed windows: the first attempt of a
window sets the key's expiry. Login limits are counted before the password is checked, each
by one script that refuses or counts atomically (:meth:`AccountStore.take_attempt`), so no
number of parallel tries gets past one. Every process sharing the Redis counts in the same keys.

Token revocation: a device's tokens are refused while its ``revoked`` key lives (``logout``),
and an account remembers the devices that signed in to it (:meth:`AccountStore.remember_device`).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Final

from server.storage.connection import Storage, as_int, as_list, as_text
from server.storage.keys import Keys
from server.storage.name_skeleton import name_skeleton

#: The generation of a new account (guests' tokens carry 0, and resume nothing once their
#: player has registered: see server/features/identity.py).
FIRST_GENERATION: Final = 1

# A name key and its account's hash lie in different Cluster slots, so no one script may touch
# both: a name is claimed for a short while first, the account written, and then the claim
# kept (or given back). A registration that dies halfway leaves a claim that expires by itself.

#: Milliseconds a name stays claimed before its account confirms it.
_CLAIM_MS: Final = 60_000

# KEYS: 1 name key. ARGV: player, ttl ms. 1 claimed now, 2 the player's already, 0 another's.
_CLAIM_NAME: Final = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 2 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: 1 account hash. ARGV: name, hash, created, generation. 1 created, 2 an account already.
_CREATE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'hash', ARGV[2], 'created', ARGV[3], 'generation', ARGV[4])
return 1
"""

# KEYS: 1 name key. ARGV: player, "keep" or "drop". Keeps the player's claim for good, or
# gives it back; nothing if the name is not (or no longer) the player's.
_SETTLE_NAME: Final = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'keep' then redis.call('PERSIST', KEYS[1]) else redis.call('DEL', KEYS[1]) end
return 1
"""


#: Devices an account remembers (the most recent ones).
MAX_DEVICES: Final = 32

# KEYS: 1 login limit (hash n, last). ARGV: free tries, first wait ms, window ms.
# Past ``free`` counted tries, a try waits min(window, first * 2^(tries - free)) after the
# last one; a try that must wait is refused and not counted (so refusals never lengthen the
# wait). The key lives a window past the end of the wait its tries built.
# Returns {counted 1/0, ms left to wait, tries before, last before, now}.
_TAKE_ATTEMPT: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local free, first, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'n', 'last')
local n, last = tonumber(state[1]) or 0, tonumber(state[2]) or 0
local function wait(tries)
  if tries < free then return 0 end
  return math.floor(math.min(window, first * 2 ^ math.min(tries - free, 60)))
end
local ready = last + wait(n)
if now < ready then return {0, ready - now, n, last, now} end
redis.call('HSET', KEYS[1], 'n', n + 1, 'last', string.format('%d', now))
redis.call('PEXPIRE', KEYS[1], wait(n + 1) + window)
return {1, 0, n, last, now}
"""

# KEYS: 1 login limit. ARGV: last before, now (of the try to take back). One try fewer; the
# wait runs from the try before again, unless another was counted since.
_REFUND_ATTEMPT: Final = """
local state = redis.call('HMGET', KEYS[1], 'n', 'last')
local n = tonumber(state[1])
if not n then return 0 end
if n <= 1 then redis.call('DEL', KEYS[1]) return 1 end
redis.call('HSET', KEYS[1], 'n', n - 1)
if state[2] == ARGV[2] then redis.call('HSET', KEYS[1], 'last', ARGV[1]) end
return 1
"""


@dataclass(frozen=True, slots=True)
class Attempt:
    """The outcome of :meth:`AccountStore.take_attempt`: counted, or refused for ``wait_ms``
    more milliseconds; ``last_before`` and ``stamp`` let :meth:`AccountStore.refund_attempt`
    take a counted try back."""

    kind: str
    who: str
    counted: bool
    wait_ms: int
    tries_before: int
    last_before: int
    stamp: int


@dataclass(frozen=True, slots=True)
class Account:
    """A registered player. ``password_hash`` is an argon2 encoded hash, never the password."""

    player: str
    name: str
    password_hash: str
    generation: int
    created: int


class Registered(enum.Enum):
    """What :meth:`AccountStore.register` did."""

    CREATED = 1
    NAME_TAKEN = 0
    ALREADY_ACCOUNT = 2  # this player id is an account already


class AccountStore:
    """The accounts, bans and attempt counters of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)
        self._claim_name = storage.script(_CLAIM_NAME)
        self._create = storage.script(_CREATE)
        self._settle_name = storage.script(_SETTLE_NAME)
        self._take_attempt = storage.script(_TAKE_ATTEMPT)
        self._refund_attempt = storage.script(_REFUND_ATTEMPT)
        self._tokens_since: int | None = None

    # -- accounts ----------------------------------------------------------------------

    async def register(self, player: str, name: str, password_hash: str, now: int) -> Registered:
        """Make ``player`` an account named ``name`` (unique under :func:`name_skeleton`).

        Three single-slot steps (claim the name, write the account, keep the claim), so it
        works on a Redis Cluster; each is safe to repeat, and a claim left by a registration
        that died halfway expires within a minute."""
        name_key = self._keys.account_name(name_skeleton(name))
        action = f"register {player}"
        claimed = as_int(await self._claim_name.run(action, [name_key], [player, _CLAIM_MS]))
        if claimed == 0:
            return Registered.NAME_TAKEN
        account: list[str | int] = [name, password_hash, now, FIRST_GENERATION]
        created = as_int(await self._create.run(action, [self._keys.account(player)], account))
        if created == 1:
            await self._settle_name.run(action, [name_key], [player, "keep"])
            return Registered.CREATED
        if claimed == 1:  # claimed for nothing: the player is an account under another name
            await self._settle_name.run(action, [name_key], [player, "drop"])
        return Registered.ALREADY_ACCOUNT

    async def get(self, player: str) -> Account | None:
        """The account of ``player``, or None for a guest."""
        with self._storage.guard(f"read account {player}"):
            fields = await self._storage.redis.hgetall(self._keys.account(player))
        if not fields:
            return None
        values = {as_text(k): as_text(v) for k, v in fields.items()}
        return Account(player, values["name"], values["hash"], int(values["generation"]), int(values["created"]))

    async def holder(self, name: str) -> str | None:
        """The account id holding ``name`` (or a name that looks like it), or None."""
        with self._storage.guard("look up an account name"):
            player = await self._storage.redis.get(self._keys.account_name(name_skeleton(name)))
        return None if player is None else as_text(player)

    async def by_name(self, name: str) -> Account | None:
        player = await self.holder(name)
        return None if player is None else await self.get(player)

    async def generations(self, players: list[str]) -> list[int | None]:
        """Each player's token generation, or None for a guest, read together."""
        if not players:
            return []
        commands = [("HGET", self._keys.account(player), "generation") for player in players]
        replies = await self._storage.send_all("read account generations", commands)
        return [None if reply is None else as_int(reply) for reply in replies]

    async def generation(self, player: str) -> int | None:
        return (await self.generations([player]))[0]

    async def set_password(self, player: str, password_hash: str) -> int:
        """Store a new password hash and revoke every token (the account forgets its
        devices too); the new generation."""
        key = self._keys.account(player)
        with self._storage.guard(f"change {player}'s password"):
            async with self._storage.transaction(key) as pipe:
                pipe.hset(key, "hash", password_hash)
                pipe.hincrby(key, "generation", 1)
                _, generation = await pipe.execute()
            await self._storage.redis.delete(self._keys.devices(player))
        return int(generation)

    async def revoke(self, player: str) -> int:
        """Revoke every resume token of the account (it forgets its devices too); the new
        generation."""
        with self._storage.guard(f"revoke {player}'s tokens"):
            generation = int(await self._storage.redis.hincrby(self._keys.account(player), "generation", 1))
            await self._storage.redis.delete(self._keys.devices(player))
        return generation

    async def rename(self, player: str, old: str, new: str) -> bool:
        """Rename an account from ``old`` to ``new``; False if another account holds ``new``.
        In single-slot steps, like :meth:`register`: claim ``new``, write it in the account,
        keep the claim, give ``old`` back."""
        new_key = self._keys.account_name(name_skeleton(new))
        old_key = self._keys.account_name(name_skeleton(old))
        action = f"rename {player}"
        if not as_int(await self._claim_name.run(action, [new_key], [player, _CLAIM_MS])):
            return False
        with self._storage.guard(action):
            await self._storage.redis.hset(self._keys.account(player), "name", new)
        await self._settle_name.run(action, [new_key], [player, "keep"])
        if old_key != new_key:
            await self._settle_name.run(action, [old_key], [player, "drop"])
        return True

    async def accounts(self, limit: int = 1000) -> list[Account]:
        """Up to ``limit`` accounts, by name (a SCAN: for the admin tool, not for requests)."""
        pattern = self._keys.account("*")
        found: list[Account] = []
        with self._storage.guard("list the accounts"):
            async for key in self._storage.redis.scan_iter(match=pattern, count=500):
                player = as_text(key).rsplit(":", 1)[1]
                if len(found) >= limit:
                    break
                account = await self.get(player)
                if account is not None:
                    found.append(account)
        return sorted(found, key=lambda a: a.name.casefold())

    # -- bans --------------------------------------------------------------------------

    async def ban(self, player: str, reason: str) -> None:
        with self._storage.guard(f"ban {player}"):
            await self._storage.redis.hset(self._keys.banned(), player, reason)

    async def unban(self, player: str) -> bool:
        with self._storage.guard(f"unban {player}"):
            return bool(await self._storage.redis.hdel(self._keys.banned(), player))

    async def ban_reason(self, player: str) -> str | None:
        """Why ``player`` is banned, or None if they are not."""
        with self._storage.guard(f"read {player}'s ban"):
            reason = await self._storage.redis.hget(self._keys.banned(), player)
        return None if reason is None else as_text(reason)

    async def banned(self) -> dict[str, str]:
        with self._storage.guard("list the bans"):
            bans = await self._storage.redis.hgetall(self._keys.banned())
        return {as_text(k): as_text(v) for k, v in bans.items()}

    # -- devices and revoked tokens -----------------------------------------------------

    async def remember_device(self, player: str, device: str, now: int, memory: int) -> None:
        """Remember that ``device`` signed in to the account ``player`` at ``now`` (Unix ms),
        for ``memory`` seconds; only the :data:`MAX_DEVICES` most recent devices are kept."""
        key = self._keys.devices(player)
        with self._storage.guard(f"remember a device of {player}"):
            async with self._storage.transaction(key) as pipe:
                pipe.zadd(key, {device: now})
                pipe.zremrangebyscore(key, "-inf", now - memory * 1000)
                pipe.zremrangebyrank(key, 0, -MAX_DEVICES - 1)
                pipe.expire(key, memory)
                await pipe.execute()

    async def knows_device(self, player: str, device: str, now: int, memory: int) -> bool:
        """Whether ``device`` signed in to the account ``player`` within ``memory`` seconds of ``now`` (ms)."""
        with self._storage.guard(f"read the devices of {player}"):
            seen = await self._storage.redis.zscore(self._keys.devices(player), device)
        return seen is not None and seen >= now - memory * 1000

    async def forget_device(self, player: str, device: str) -> None:
        with self._storage.guard(f"forget a device of {player}"):
            await self._storage.redis.zrem(self._keys.devices(player), device)

    async def revoke_device(self, device: str, seconds: int) -> None:
        """Refuse every token of ``device`` for ``seconds`` (at least as long as the newest lives)."""
        with self._storage.guard("revoke a device's tokens"):
            await self._storage.redis.set(self._keys.revoked(device), 1, ex=max(1, seconds))

    async def device_revoked(self, device: str) -> bool:
        with self._storage.guard("read a device's revocation"):
            return bool(await self._storage.redis.exists(self._keys.revoked(device)))

    async def tokens_since(self, now: int) -> int:
        """When (Unix s) a server first checked a token here since tokens expire: ``now``
        if none did before. Set once for the whole service, read once per process."""
        if self._tokens_since is None:
            key = self._keys.tokens_since()
            with self._storage.guard("read when tokens began to expire"):
                await self._storage.redis.set(key, now, nx=True)
                since = await self._storage.redis.get(key)
            self._tokens_since = now if since is None else as_int(since)
        return self._tokens_since

    # -- attempt counters --------------------------------------------------------------

    async def count_attempt(self, kind: str, who: str, window: int) -> int:
        """Count one attempt of ``kind`` (``register``, ``identity``) by ``who`` in the current
        ``window`` seconds; how many there were."""
        return await self._storage.count(f"count {kind} attempts", self._keys.attempts(kind, who), window)

    async def take_attempt(self, kind: str, who: str, free: int, first_wait_ms: int, window_ms: int) -> Attempt:
        """Count one try of the login limit ``kind`` for ``who``, or refuse it without counting.
        Atomic: of any number of tries at once, each sees the ones counted before it.

        The first ``free`` tries are counted at once; past them a try must wait
        ``first_wait_ms``, doubling with each counted try, at most ``window_ms``, after the
        last counted one. Tries are forgotten ``window_ms`` after the end of the last wait."""
        key = self._keys.attempts(kind, who)
        reply = await self._take_attempt.run(f"count a {kind} try", [key], [free, first_wait_ms, window_ms])
        counted, wait, before, last, stamp = (as_int(value) for value in as_list(reply))
        return Attempt(kind, who, counted == 1, wait, before, last, stamp)

    async def refund_attempt(self, attempt: Attempt) -> None:
        """Take back a try :meth:`take_attempt` counted (it turned out not to be a failure)."""
        key = self._keys.attempts(attempt.kind, attempt.who)
        await self._refund_attempt.run(f"take back a {attempt.kind} try", [key], [attempt.last_before, attempt.stamp])

    async def clear_attempts(self, kind: str, who: str) -> None:
        with self._storage.guard(f"clear {kind} attempts"):
            await self._storage.redis.delete(self._keys.attempts(kind, who))

    # -- what the running servers are told -----------------------------------------------

    async def announce(self, event: dict[str, str]) -> int:
        """Tell every running server of an admin action (``{"action": ..., ...}``); how many heard it."""
        with self._storage.guard("announce an admin action"):
            return int(await self._storage.redis.publish(self._keys.moderation(), json.dumps(event)))
