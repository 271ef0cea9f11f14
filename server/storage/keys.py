"""Every Redis key the server uses, in one table (the README points operators here).

Every key starts with a prefix (``sr:`` by default), so several servers or test runs can
share one Redis. A room's keys share the hash tag ``{<code>}``, so a Redis Cluster keeps
them in one slot and a room's script never spans two. Room codes and player ids contain no
``:``, ``{`` or ``}``; seats are numbered 0 to 7; races from 1.

=============================================  ======  ===============================================
key                                            type    holds
=============================================  ======  ===============================================
``sr:secret``                                  string  32 random bytes that sign resume tokens
``sr:layout``                                  string  the version of this key layout (storage/migration.py)
``sr:player:<id>``                             hash    ``name``: the player's display name
``sr:created:<id>:<hour>``                     string  rooms the player created in that UTC hour
``sr:room:{<code>}``                           string  the room record (msgspec, see rooms/record.py)
``sr:room:{<code>}:version``                   string  ``token * 10**9 + version``: the room's version
                                                       stamped with its last lease's token (lease_rule.py)
``sr:room:{<code>}:race:<n>:log:<seat>``       list    seat's log entries in race n, oldest first, each
                                                       ``<entry>\t<server time, Unix ms>``
``sr:room:{<code>}:race:<n>``                  string  the record of race n as it finished
``sr:room:{<code>}:owner``                     string  ``<node>:<token>``: the owner's lease (PX, renewed)
``sr:room:{<code>}:epoch``                     string  the last fencing token handed out for the room
``sr:rooms:active``                            set     codes of the rooms in progress
``sr:unrecorded``                              zset    ``<code> <race> <noted ms>`` of finished races whose
                                                       results are not all recorded -> when due for another
                                                       node (storage/unrecorded.py)
``sr:public-rooms:<hex>``                      zset    public rooms created from a client address -> Unix ms
                                                       counted (unfinished ones, kept a day; rooms.py)
``sr:node:{<node>}``                           string  a live node's heartbeat (JSON: address, load; PX)
``sr:node:{<node>}:inbox``                     channel requests, frames and answers for that node
``sr:node:{<node>}:lobby``                     string  the node's public rooms (msgpack; PX)
``sr:node:{<node>}:daily``                     string  the node's live ranked daily attempts (msgpack; PX)
``sr:nodes``                                   set     ids of the nodes that said they started
``sr:seats:{<id>}``                            set     codes of the unfinished rooms the player races in
``sr:conns:{<id>}``                            set     the player's connections: ``<node>/<connection id>``
``sr:lease:<name>``                            string  ``<node>``: who runs a once-per-service job, or schedules
                                                       a tournament (``arena-<id>``, ``bracket-<id>``) (PX)
``sr:qm:{<game>}``                             hash    the quick-match line: player -> entry (msgpack)
``sr:daily-attempt:<game>:<date>:<id>``        string  the code of the player's ranked attempt's room (started)
``sr:daily:<game>:<date>``                     string  the day's deal, par, solution, salt (JSON)
``sr:pool:<game>``                             list    deal numbers certified winnable
``sr:pool-draws:<game>:<id>:<hour>``           string  deals the player took from the pool that UTC hour
``sr:lb:...``, ``sr:stats:...``, ``sr:rating:...``     boards, statistics, ratings (storage/boards.py)
``sr:runs:{<game>:<deal>}``, ``...:run``        zset, hash each player's best winning run on the deal (30 days;
                                                       storage/best_runs.py): what ghost races replay
``sr:challenge:{<id>}``                        string  an async challenge (msgpack; storage/challenges.py)
``sr:my-challenges:{<id>}``                    zset    the player's challenges -> created: their inbox
``sr:async-pool:{<game>}``                     zset    async matches waiting for a rival -> rating
``sr:account:<id>``                            hash    ``name``, ``hash`` (argon2), ``generation``, ``created``
``sr:account-name:<hex>``                       string  the account holding the name whose skeleton this is
``sr:banned``                                  hash    banned account id -> the reason
``sr:attempts:<kind>:<hex>``                   string  new accounts, identities (expiring)
``sr:attempts:login-<kind>:<hex>``             hash    ``n``, ``last``: a login limit's counted tries and
                                                       the Redis time of the last (expiring)
``sr:devices:<id>``                            zset    devices that signed in to the account -> Unix ms
``sr:revoked:<device>``                        string  a logged-out device's tokens are refused (expiring)
``sr:tokens-since``                            string  Unix s a server first checked a token since tokens
                                                       expire (legacy tokens are good a lifetime after it)
``sr:races-of:<id>``                           list    ``<code> <race>`` of the player's recent races
``sr:admin-log``                               list    JSON of every admin action, newest first
``sr:flags``                                   list    JSON anti-cheat flags on ranked daily entries
``sr:moderation``                              pubsub  admin actions the running servers carry out
=============================================  ======  ===============================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MAX_SEATS: Final = 8


def key_part(text: str) -> str:
    """``text`` as one component of a key: a ``:`` or a brace could make keys collide or
    move them to another Cluster slot."""
    # Three ``in`` tests, not a generator over the characters: this runs for every key of
    # every room write.
    if not text or ":" in text or "{" in text or "}" in text:
        raise ValueError(f"a key part must be non-empty, without ':', '{{' or '}}', not {text[:40]!r}")
    return text


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys under one ``prefix``."""

    prefix: str = "sr:"

    def secret(self) -> str:
        return f"{self.prefix}secret"

    def layout(self) -> str:
        return f"{self.prefix}layout"

    def player(self, player: str) -> str:
        return f"{self.prefix}player:{key_part(player)}"

    def created(self, player: str, hour: int) -> str:
        return f"{self.prefix}created:{key_part(player)}:{hour}"

    def room(self, code: str) -> str:
        return f"{self.prefix}room:{{{key_part(code)}}}"

    def room_version(self, code: str) -> str:
        return f"{self.room(code)}:version"

    def race(self, code: str, race: int) -> str:
        if race < 1:
            raise ValueError(f"races are numbered from 1, not {race}")
        return f"{self.room(code)}:race:{race}"

    def log(self, code: str, race: int, seat: int) -> str:
        if not 0 <= seat < MAX_SEATS:
            raise ValueError(f"seats are numbered 0 to {MAX_SEATS - 1}, not {seat}")
        return f"{self.race(code, race)}:log:{seat}"

    def active_rooms(self) -> str:
        return f"{self.prefix}rooms:active"

    def unrecorded(self) -> str:
        return f"{self.prefix}unrecorded"

    def public_rooms(self, address: str) -> str:
        # Hex, as for attempts: an address (IPv6, "unknown") may hold ':' and anything else.
        return f"{self.prefix}public-rooms:{address.encode().hex()}"

    def daily_attempt(self, game: str, date: str, player: str) -> str:
        return f"{self.prefix}daily-attempt:{key_part(game)}:{key_part(date)}:{key_part(player)}"

    def daily_deal(self, game: str, date: str) -> str:
        return f"{self.prefix}daily:{key_part(game)}:{key_part(date)}"

    def pool(self, game: str) -> str:
        return f"{self.prefix}pool:{key_part(game)}"

    def pool_draws(self, game: str, player: str, hour: int) -> str:
        return f"{self.prefix}pool-draws:{key_part(game)}:{key_part(player)}:{hour}"

    def account(self, player: str) -> str:
        return f"{self.prefix}account:{key_part(player)}"

    def account_name(self, skeleton: str) -> str:
        # The skeleton may hold any character; hex keeps the key plain and collision-free.
        return f"{self.prefix}account-name:{skeleton.encode().hex()}"

    def banned(self) -> str:
        return f"{self.prefix}banned"

    def attempts(self, kind: str, who: str) -> str:
        return f"{self.prefix}attempts:{key_part(kind)}:{who.encode().hex()}"

    def devices(self, player: str) -> str:
        return f"{self.prefix}devices:{key_part(player)}"

    def revoked(self, device: str) -> str:
        return f"{self.prefix}revoked:{key_part(device)}"

    def tokens_since(self) -> str:
        return f"{self.prefix}tokens-since"

    def races_of(self, player: str) -> str:
        return f"{self.prefix}races-of:{key_part(player)}"

    def admin_log(self) -> str:
        return f"{self.prefix}admin-log"

    def flags(self) -> str:
        return f"{self.prefix}flags"

    def moderation(self) -> str:
        return f"{self.prefix}moderation"

    def room_owner(self, code: str) -> str:
        return f"{self.room(code)}:owner"

    def room_epoch(self, code: str) -> str:
        return f"{self.room(code)}:epoch"

    def node(self, node: str) -> str:
        return f"{self.prefix}node:{{{key_part(node)}}}"

    def node_inbox(self, node: str) -> str:
        return f"{self.node(node)}:inbox"

    def node_lobby(self, node: str) -> str:
        return f"{self.node(node)}:lobby"

    def node_daily(self, node: str) -> str:
        return f"{self.node(node)}:daily"

    def nodes(self) -> str:
        return f"{self.prefix}nodes"

    def seats(self, player: str) -> str:
        return f"{self.prefix}seats:{{{key_part(player)}}}"

    def connections(self, player: str) -> str:
        return f"{self.prefix}conns:{{{key_part(player)}}}"

    def lease(self, name: str) -> str:
        return f"{self.prefix}lease:{key_part(name)}"

    def match_line(self, game: str) -> str:
        return f"{self.prefix}qm:{{{key_part(game)}}}"
