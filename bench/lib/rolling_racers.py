"""The racers of :mod:`bench.rolling`: each a :class:`RaceClient` with automatic reconnection,
as a real client has it, connected through the balancer from a loopback address of its own (a
real player's address: the balancer and the nodes limit connections per address), playing
legal moves worked out from its own board (looking a few moves ahead, so that it does not play
itself into a dead end) at a steady rate, and recording the time, room version and move of
every ack, its dropped connections and the error replies to its moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from bench.lib.bots import local_legal_moves
from bench.lib.node_fleet import caught_up, open_room, play
from bench.lib.sources import address_of, connect_from
from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack
from protocol.mirror import RoomMirror
from server.games import Game, variant_class
from server.games.options import Options

VARIANT = "antares"
#: Moves a racer looks ahead: a move is played only if some line of this many more follows it.
#: Random play with none ran most Antares deals into a dead end within 30 moves; with 5, one
#: deal in 200 within 120 moves (the engine alone, 0.1 ms a move).
LOOKAHEAD = 5
#: Seconds before a racer tries again after its move was refused (storage-unavailable, ...).
RETRY = 0.05
#: Racers opening their connections and rooms at once.
OPENING = 16


def _alive(game: Game, depth: int) -> bool:
    """Some line of ``depth`` more moves follows the position."""
    moves = game.legal_moves()
    if not moves or depth == 0:
        return bool(moves)
    for move in moves:
        game.push(move)
        found = _alive(game, depth - 1)
        game.pop()
        if found:
            return True
    return False


def choose_move(variant: type[Game], board: list[list[int | None]], rng: random.Random) -> str | None:
    """A random legal move (``deal`` only when no other), among those after which some line of
    :data:`LOOKAHEAD` more moves exists if there are any; None when there is no legal move."""
    texts = local_legal_moves(variant, board)
    if not texts:
        return None
    rng.shuffle(texts)
    texts.sort(key=lambda text: text == "deal")  # stable: the others first, in random order
    piles = [[card for card in pile if card is not None] for pile in board]
    if sum(map(len, piles)) != sum(map(len, board)):
        return texts[0]  # face-down cards (not in Antares): no lookahead
    game = variant(None, Options(), piles, [0] * len(piles))
    for text in texts:
        game.push(game.parse_move(text))
        found = _alive(game, LOOKAHEAD)
        game.pop()
        if found:
            return text
    return texts[0]


@dataclass(frozen=True, slots=True)
class Acked:
    at: float  # monotonic
    sent: float  # when the move was sent
    version: int
    move: str


@dataclass
class Racer:
    client: RaceClient
    code: str
    seat: int
    restored: asyncio.Event = field(default_factory=asyncio.Event)
    acks: list[Acked] = field(default_factory=list)
    drops: list[float] = field(default_factory=list)  # when its connection dropped
    errors: Counter[str] = field(default_factory=Counter)  # error replies to its moves, by code
    in_doubt: int = 0  # moves sent whose reply never came (dropped connection, timeout)
    stopped: str | None = None  # why it stopped moving before the end, if it did

    def __post_init__(self) -> None:
        self.restored.set()
        self.client.listen_connection(self._connection)

    def _connection(self, up: bool) -> None:
        if up:
            self.restored.set()
        else:
            self.drops.append(time.monotonic())
            self.restored.clear()

    @property
    def out_of_play(self) -> bool:
        """Out of legal moves or finished: no stall to measure."""
        return self.stopped in ("stuck", "finished")


@dataclass
class Play:
    over: bool = False


def version_at_least(mirror: RoomMirror, version: int) -> bool:
    return mirror.version >= version


async def race(racer: Racer, rate: float, game: Play) -> None:
    """Play ``rate`` moves a second until ``game.over``, from the racer's own copy of the board
    once it has the update of its last acked move. After a drop it moves as soon as its rooms
    are restored, and after a refusal :data:`RETRY` s later, so that its stalls measure the
    service rather than its pace."""
    variant, rng = variant_class(VARIANT), random.Random(f"{racer.code}/{racer.seat}")
    client, version = racer.client, 0
    next_at = time.monotonic() + rng.random() / rate  # each racer at its own phase
    while not game.over:
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if game.over:
            break
        if not (racer.restored.is_set() and client.connected.is_set()):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await racer.restored.wait()
                    await client.connected.wait()
            next_at = time.monotonic()
            continue
        next_at = max(next_at + 1 / rate, time.monotonic())  # late: go on from now, no burst
        try:
            mirror = await client.wait_room(racer.code, functools.partial(version_at_least, version=version), 5.0)
        except TimeoutError:
            if racer.code not in client.rooms and racer.restored.is_set():
                racer.stopped = "seat lost"  # its copy was dropped after a reconnection
                return
            racer.errors["no update of its ack within 5 s"] += 1
            continue
        state = mirror.view().state
        if state != "racing":
            racer.stopped = "finished" if state == "finished" else f"room {state}"
            return
        board = mirror.board(racer.seat)
        if board is None:
            continue
        move = choose_move(variant, board, rng)
        if move is None:
            racer.stopped = "stuck"
            return
        sent = time.monotonic()
        try:
            reply = await client.request(functools.partial(play, room=racer.code, move=move))
        except ServerError as error:
            racer.errors[str(error.code)] += 1
            next_at = time.monotonic() + RETRY
            continue
        except (ConnectionError, TimeoutError):
            racer.in_doubt += 1
            next_at = time.monotonic()
            continue
        if isinstance(reply, Ack) and reply.version is not None:
            racer.acks.append(Acked(time.monotonic(), sent, reply.version, reply.move or move))
            version = reply.version


async def open_races(url: str, count: int, clients: list[RaceClient], refused: list[str]) -> list[tuple[Racer, Racer]]:
    """``count`` rooms of two racers through the balancer, every racer on its own address,
    every race started and every racer's board shown. A room whose opening is refused is
    left as it is and another opened (twice at most), each refusal noted in ``refused``."""
    gate = asyncio.Semaphore(OPENING)

    async def one(k: int) -> tuple[Racer, Racer]:
        async with gate:
            owner = await connect_from(url, f"own{k}", address_of(2 * k))
            clients.append(owner)
            guest = await connect_from(url, f"guest{k}", address_of(2 * k + 1))
            clients.append(guest)
            for attempt in range(3):
                try:
                    code = await open_room(owner, guest)
                    break
                except ServerError as error:
                    refused.append(f"race {k}: {error.code} ({error})")
                    if attempt == 2:
                        raise
        return Racer(owner, code, 0), Racer(guest, code, 1)

    races = await asyncio.gather(*(one(k) for k in range(count)))
    for pair in races:
        for racer in pair:
            await racer.client.wait_room(racer.code, functools.partial(caught_up, version=0, seat=racer.seat), 30)
    return list(races)
