"""The one rule of a room lease, in Lua, for every script that must obey it.

A lease (``<node>:<token>``) stands while the room's owner key holds it, or when it merely
expired and no lease was granted since: every grant raises the room's epoch (``INCR``), so an
epoch still equal to the lease's token means nobody else can have owned the room meanwhile.
The room's commit script (:mod:`server.storage.rooms`) writes only under a lease that stands,
and the renewal (:mod:`server.storage.nodes`) renews or takes back only such a lease; one text,
so the two can never disagree.
"""

from typing import Final

#: Defines ``lease_stands(owner_key, epoch_key, lease)``: whether ``lease`` stands, and what
#: the owner key holds (false for nothing).
LEASE_STANDS: Final = """
local function lease_stands(owner_key, epoch_key, lease)
  local held = redis.call('GET', owner_key)
  if held == lease then return true, held end
  if held then return false, held end
  return redis.call('GET', epoch_key) == string.match(lease, ':(%d+)$'), held
end
"""
