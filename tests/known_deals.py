"""A known winnable deal the end-to-end tests race on, with its winning line, and a client
that wins it."""

from __future__ import annotations

import functools

from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, PlayMove, Ready, RoomOptions
from server.competition.daily import solution_texts
from server.games import Antares, Autoplay, Deal, Game, Options
from server.solver import Solved, solve

#: Antares deal 24 with safe autoplay (the rooms' default): the solver wins it in a fraction
#: of a second.
ANTARES_DEAL = 24


def new_antares() -> Game:
    """A local replica of a racer's board in an Antares room on :data:`ANTARES_DEAL`."""
    return Antares.new(ANTARES_DEAL, Options(autoplay=Autoplay.SAFE))


@functools.cache
def winning_line() -> tuple[str, ...]:
    """A winning line of :data:`ANTARES_DEAL`, as move texts (each written in its position)."""
    solved = solve(Antares, ANTARES_DEAL, new_antares().options)
    assert isinstance(solved, Solved)
    texts = solution_texts(Antares, Deal(ANTARES_DEAL), solved)
    assert Antares.replay(ANTARES_DEAL, new_antares().options, texts).is_won()
    return texts


async def win_known_deal(client: RaceClient) -> str:
    """``client`` opens a one-racer Antares room on :data:`ANTARES_DEAL` and wins it with
    :func:`winning_line`; the room's code, once its results are in."""
    options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL))
    joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(joined, Joined), joined
    code = joined.room
    await client.request(lambda i: Ready(id=i, room=code))
    await client.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
    for text in winning_line():
        await client.request(functools.partial(PlayMove, room=code, move=text))
    await client.wait_room(code, lambda m: m.view().results is not None, timeout=15)
    return code


async def won_by(url: str, name: str, resume: str | None = None) -> str:
    """``name`` (the player of token ``resume``, if given) connects to ``url`` and wins the known
    deal in a room of its own (:func:`win_known_deal`); the room's code."""
    player = await RaceClient.connect(url, name, resume=resume, reconnect=False)
    try:
        return await win_known_deal(player)
    finally:
        await player.close()
