"""What every request family works with: the live rooms, the stores, the connections."""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.errors import ErrorCode
from server.competition.matchmaking import MatchQueue
from server.config import Config
from server.connections.link import ClientLink
from server.games import VARIANTS
from server.live.registry import Registry
from server.live.runner import RoomRunner
from server.rooms.errors import RoomError
from server.storage.accounts import AccountStore
from server.storage.boards import Leaderboards
from server.storage.moderation import ModerationStore
from server.storage.players import PlayerStore
from server.supply.certified import DailyDeals, WinnablePool


@dataclass(eq=False)
class Context:
    """The services of one server process, shared by the request handlers."""

    config: Config
    rooms: Registry
    players: PlayerStore
    boards: Leaderboards
    secret: bytes
    accounts: AccountStore
    moderation: ModerationStore
    daily: DailyDeals | None = None
    pool: WinnablePool | None = None
    links: set[ClientLink] = field(default_factory=set)
    by_player: dict[str, set[ClientLink]] = field(default_factory=dict)
    #: The quick-match lines, by game, and who waits in them with which request.
    queues: dict[str, MatchQueue] = field(default_factory=lambda: {variant: MatchQueue() for variant in VARIANTS})
    queued: dict[tuple[str, str], tuple[ClientLink, int]] = field(default_factory=dict)

    async def room(self, code: str) -> RoomRunner:
        """The room ``code``; ``no-such-room`` if there is none."""
        runner = await self.rooms.get(code)
        if runner is None:
            raise RoomError(ErrorCode.NO_SUCH_ROOM, f"there is no room {code[:16]!r}")
        return runner


def player_of(link: ClientLink) -> str:
    """The player of a connection that said hello (the dispatcher serves nothing else)."""
    assert link.player is not None
    return link.player
