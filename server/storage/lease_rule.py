"""The one rule of a room lease, in Lua, for every script that grants, renews or obeys one.

A lease (``<node>:<token>``) stands while no lease was granted since it: every grant raises the
room's epoch (``INCR``), so the token is the epoch it was granted at. Two keys record it:

- ``sr:room:{CODE}:owner`` holds the lease while it is renewed (PX): the renewal
  (:mod:`server.storage.nodes`) keeps a lease that stands, and takes back one that merely
  expired while its token is still the epoch (``stands_with``);
- ``sr:room:{CODE}:version`` holds the room's version *stamped* with the token of the last
  grant, ``token * VERSION_SPAN + version`` (:data:`VERSION_SPAN`). Every grant restamps it
  (:data:`GRANT`). The commit script (:mod:`server.storage.rooms`) adds its step's version
  count with one ``INCRBY`` and checks that the sum is its own token and new version: one
  command checks the lease and the version and stores the new version.

The two agree: a lease stands by ``stands_with`` exactly when the epoch is still its
token, which is exactly when the stamp is still its token, since the same script raises the
one and rewrites the other.
"""

from typing import Final

#: Versions a room can reach (the low digits of its stamped version key). Lua's numbers are
#: doubles: tokens below a million (grants of one room) keep the stamp and its split exact.
VERSION_SPAN: Final = 10**9

#: Defines ``stands_with(held, epoch_key, lease)``: whether ``lease`` stands, given what the
#: room's owner key holds (``held``, false for nothing).
LEASE_STANDS: Final = """
local function stands_with(held, epoch_key, lease)
  if held == lease then return true end
  if held then return false end
  return redis.call('GET', epoch_key) == string.match(lease, ':(%d+)$')
end
"""

#: Defines ``grant(owner_key, epoch_key, version_key, node, ttl_ms)``: a new lease for
#: ``node`` (returned), its token from the epoch, the version key restamped with it.
GRANT: Final = f"""
local function grant(owner_key, epoch_key, version_key, node, ttl_ms)
  local token = redis.call('INCR', epoch_key)
  local lease = node .. ':' .. token
  redis.call('SET', owner_key, lease, 'PX', ttl_ms)
  local version = tonumber(redis.call('GET', version_key) or '0') % {VERSION_SPAN}
  redis.call('SET', version_key, string.format('%d', token * {VERSION_SPAN} + version), 'KEEPTTL')
  return lease
end
"""


def stored_version(stamped: int) -> int:
    """The room version in a stamped version key's value."""
    return stamped % VERSION_SPAN
