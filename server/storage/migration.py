"""Keys stored by earlier versions, moved to today's layout at start-up.

Rooms last hours; boards, statistics and ratings are kept for good, so their keys are carried
over when their layout changes, and so are account names. Four changes since the first version:

1. **Cluster hash tags.** ``<prefix>lb:<game>:...`` and ``<prefix>stats:<game>:...`` became
   ``<prefix>lb:{<game>}:...`` and ``<prefix>stats:{<game>}:...``, and the rating board
   ``<prefix>rating:<game>:board`` became ``<prefix>rating:{<game>}:board``, so that one
   result's writes stay in one Cluster slot.
2. **A key per rating.** The game's ratings hash (player -> ``"<rating> <rd> <volatility>"``),
   ``<prefix>rating:<game>`` in the first version and ``<prefix>rating:{<game>}`` after it,
   became one string per player, ``<prefix>rating:{<game>}:player:<id>``.

3. **Move times beside the moves.** Each log entry holds its server time (``<text>\t<ms>``);
   the separate lists ``<prefix>room:{<code>}:race:<n>:log:<seat>:times`` of the second
   layout are deleted (nothing reads them: a race in progress across the upgrade has no move
   times for its anti-cheat check).
4. **Account names under a new skeleton.** ``<prefix>account-name:<hex>`` holds the account
   whose name has that skeleton (storage/name_skeleton.py), which now maps look-alikes before
   folding case and reads a confusables table pinned in the repository. Each name key is
   re-keyed from its account's name: the new key is set for the same account, then the old
   one deleted (claims of a registration in progress, which expire, are left alone). Where
   the new key is another account's (two names that now look alike), the old key is kept
   and named in a warning: a login by that name finds the other account, and this one is
   reached by its resume tokens until an operator renames one of them (``admin rename``).

Rooms stored by a version before the redesign (``<prefix>room:<code>``, another record
format) are not carried over: a race in progress across that upgrade is lost.

Contract of :func:`migrate`: safe to run on every start, by several nodes at once, and to be
cut short anywhere. A key is copied (DUMP and RESTORE, which work across Cluster slots) to a
name that does not exist yet, and the old key is deleted once its copy is in place. Where the
new name already holds other data (a version without this migration ran meanwhile), both keys
are kept and a warning names them: nothing is overwritten, and nothing is merged by guess.
Once no old key is left, ``<prefix>layout`` holds :data:`LAYOUT_VERSION` and later starts skip
the scan.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Final

from redis import exceptions as redis_errors

from server.storage.connection import Storage, as_int, as_text
from server.storage.keys import Keys
from server.storage.name_skeleton import name_skeleton
from server.storage.ratings import player_keys, rating_key

logger = logging.getLogger("server.storage.migration")

#: The version of the key layout this server writes (see the module docstring).
LAYOUT_VERSION: Final = 4
#: Keys asked for per SCAN step.
SCAN_COUNT: Final = 1000

# KEYS: 1 name key. ARGV: player. Deletes the key if it still names the player.
_DROP_NAME: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class Renamed:
    """Copy the key to ``new`` (same type, same content)."""

    new: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """Delete the key: this layout keeps what it held elsewhere."""


@dataclass(frozen=True, slots=True)
class SplitRatings:
    """An old ratings hash: each field becomes the player's own key in ``game``."""

    game: str


def planned(prefix: str, key: str) -> Renamed | SplitRatings | Dropped | None:
    """What becomes of ``key`` (a key under ``prefix``); None if it is already in today's layout."""
    if key.startswith(prefix + "room:") and key.endswith(":times") and ":log:" in key:
        return Dropped()
    for kind in ("lb:", "stats:"):
        if key.startswith(prefix + kind):
            rest = key[len(prefix) + len(kind) :]
            if rest.startswith("{"):
                return None
            game, _, tail = rest.partition(":")
            return Renamed(f"{prefix}{kind}{{{game}}}:{tail}") if tail and game else None
    if key.startswith(prefix + "rating:"):
        rest = key[len(prefix) + len("rating:") :]
        if rest.startswith("{") and rest.endswith("}") and rest.count("}") == 1:
            return SplitRatings(rest[1:-1])  # the hash of the second layout
        if rest.startswith("{"):
            return None
        game, _, tail = rest.partition(":")
        if not tail:
            return SplitRatings(game)  # the hash of the first layout
        if tail == "board":
            return Renamed(f"{rating_key(prefix, game)}:board")
    return None


@dataclass(slots=True)
class Migration:
    """What a run of :func:`migrate` did."""

    moved: int = 0
    ratings: int = 0
    dropped: int = 0
    #: Account name keys moved to today's skeleton.
    names: int = 0
    #: Old keys kept because their new name holds other data.
    kept: list[str] = field(default_factory=list)
    skipped: bool = False


async def migrate(storage: Storage) -> Migration:
    """Bring every old key under ``storage.prefix`` to today's layout (see the module
    docstring for the guarantees). Raises StoreUnavailable if Redis fails meanwhile; a later
    run picks up where this one stopped."""
    redis, prefix = storage.redis, storage.prefix
    done = Migration()
    marker = Keys(prefix).layout()
    with storage.guard("migrate keys"):
        stored = await redis.get(marker)
        if stored is not None and int(stored) >= LAYOUT_VERSION:
            done.skipped = True
            return done
        for pattern in ("lb:*", "stats:*", "rating:*", "room:*:times"):
            async for raw in redis.scan_iter(match=prefix + pattern, count=SCAN_COUNT):
                key = as_text(raw)
                plan = planned(prefix, key)
                if isinstance(plan, Renamed):
                    await _rename(storage, key, plan.new, done)
                elif isinstance(plan, SplitRatings):
                    await _split(storage, key, plan.game, done)
                elif isinstance(plan, Dropped):
                    done.dropped += await redis.delete(key)
        await _rekey_names(storage, done)
        if not done.kept:
            await redis.set(marker, LAYOUT_VERSION)
    if done.moved or done.ratings or done.dropped or done.names:
        logger.info(
            "key layout: %d keys moved, %d ratings split out, %d dropped, %d account names re-keyed",
            done.moved,
            done.ratings,
            done.dropped,
            done.names,
        )
    for key in done.kept:
        logger.warning("key layout: %s kept: its new name already holds other data", key)
    return done


async def _rekey_names(storage: Storage, done: Migration) -> None:
    """Layout 4: every settled account name key under today's skeleton of its account's name."""
    redis, keys = storage.redis, Keys(storage.prefix)
    drop = storage.script(_DROP_NAME)
    async for raw in redis.scan_iter(match=keys.account_name("") + "*", count=SCAN_COUNT):
        key = as_text(raw)
        holder = await redis.get(key)
        if holder is None or await redis.pttl(key) != -1:
            continue  # gone, or a registration's claim (it expires by itself)
        player = as_text(holder)
        name = await redis.hget(keys.account(player), "name")
        if name is None:
            continue  # no account to re-key it from
        new = keys.account_name(name_skeleton(as_text(name)))
        if new == key:
            continue
        if await redis.set(new, player, nx=True) or await redis.get(new) == holder:
            done.names += as_int(await drop.run("migrate keys", [key], [player]))
        else:
            done.kept.append(key)


async def _rename(storage: Storage, old: str, new: str, done: Migration) -> None:
    redis = storage.redis
    dump = await redis.dump(old)
    if dump is None:
        return  # another node moved it meanwhile
    try:
        await redis.restore(new, 0, dump)
    except redis_errors.ResponseError as error:
        if "BUSYKEY" not in str(error):
            raise
        # A copy from a run cut short (or another node's) is the same data: then it is done.
        if await redis.dump(new) != dump:
            done.kept.append(old)
            return
    await redis.delete(old)
    done.moved += 1


async def _split(storage: Storage, old: str, game: str, done: Migration) -> None:
    redis = storage.redis
    if as_text(await redis.type(old)) != "hash":
        return
    fields = await redis.hgetall(old)
    conflicting = False
    for raw_player, value in fields.items():
        player = as_text(raw_player)
        try:
            [key] = player_keys(storage.prefix, game, [player])
        except ValueError:
            conflicting = True  # an id no key can hold: left in the old hash
            continue
        if not await redis.set(key, value, nx=True) and await redis.get(key) != value:
            conflicting = True
        else:
            done.ratings += 1
    if conflicting:
        done.kept.append(old)
    else:
        await redis.delete(old)
