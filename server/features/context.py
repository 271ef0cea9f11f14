"""What every request family works with: the live rooms, the stores, the connections."""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.errors import ErrorCode
from server.cluster.cluster import Cluster
from server.config import Config
from server.connections.link import ClientLink
from server.live.hint_search import HintSearch
from server.live.registry import Registry
from server.live.runner import RoomRunner
from server.rooms.errors import RoomError
from server.storage.accounts import AccountStore
from server.storage.arenas import ArenaStore
from server.storage.best_runs import BestRuns
from server.storage.boards import Leaderboards
from server.storage.brackets import BracketStore
from server.storage.challenges import ChallengeStore
from server.storage.match_line import MatchLineStore
from server.storage.moderation import ModerationStore
from server.storage.players import PlayerStore
from server.supply.certified import DailyDeals, WinnablePool


@dataclass(eq=False)
class Context:
    """The services of one server process, shared by the request handlers, each built before
    it and passed in. Other nodes are reached only through :attr:`cluster`: a request for a
    room another node runs is forwarded there by the edge before any feature sees it."""

    config: Config
    rooms: Registry
    players: PlayerStore
    boards: Leaderboards
    secret: bytes
    accounts: AccountStore
    moderation: ModerationStore
    #: The quick-match lines (in Redis, shared by every node).
    line: MatchLineStore
    #: Each player's best run on each deal, for ghost races.
    runs: BestRuns
    #: The async challenges (in Redis, shared by every node).
    challenges: ChallengeStore
    #: The arena tournaments and their standings (in Redis, shared by every node).
    arenas: ArenaStore
    #: The bracket tournaments (in Redis, shared by every node).
    brackets: BracketStore
    #: This process as a node of the service: service-wide questions are asked of it.
    cluster: Cluster
    daily: DailyDeals | None = None
    pool: WinnablePool | None = None
    #: Winning-line searches for hints, in worker processes (None: engine hints only).
    hints: HintSearch | None = None
    links: set[ClientLink] = field(default_factory=set)
    by_player: dict[str, set[ClientLink]] = field(default_factory=dict)
    #: This node's connections waiting in a quick-match line, with their request.
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
