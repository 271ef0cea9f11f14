"""Pushed messages (server/live/pushes.py) through a real server: a message pushed to a player
reaches every connection they have open, and nobody else's. (Across nodes:
tests/cluster/test_any_hour_across_nodes.py.)"""

from __future__ import annotations

import logging

import pytest

from protocol.messages import AskInbox, ChallengeLine, ChallengeResult, Inbox, ServerMessage
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink
from server.live.pushes import PUSH, deliver, push
from tests.end_to_end.conftest import RunningServer

NEWS = ChallengeResult(challenge=ChallengeLine("QX7M2KDA", "antares", False, "expired", 1, 2, "Ann", side=0))


def is_news(message: ServerMessage) -> bool:
    return isinstance(message, ChallengeResult)


@pytest.mark.asyncio
async def test_a_push_reaches_every_connection_of_its_player_and_nobody_elses(server: RunningServer) -> None:
    ann = await server.raw()
    welcome = await ann.hello("Ann")
    ann_again = await server.raw()
    await ann_again.hello("Ann", resume=welcome.resume)  # a second device of Ann's
    bob = await server.raw("Bob")

    assert await push(server.hub.accounts, welcome.player, NEWS)
    for connection in (ann, ann_again):
        assert await connection.wait_for(is_news) == NEWS
    # Both of Ann's connections were sent it by the one delivery; Bob, asking after, had nothing.
    assert isinstance(await bob.request(lambda i: AskInbox(id=i)), Inbox)
    assert not [m for m in bob.messages if m is not None and is_news(m)]


def test_an_unreadable_push_sends_nothing() -> None:
    link = ClientLink(None, TokenBucket(1.0, 1.0), Offences(1, 1.0))
    assert deliver([link], {"action": PUSH, "player": "p1", "frame": "not base64!"}) == 0


def test_a_flood_of_unreadable_pushes_logs_a_few_lines() -> None:
    link = ClientLink(None, TokenBucket(1.0, 1.0), Offences(1, 1.0))
    written: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record)

    logger, handler = logging.getLogger("server.pushes"), Kept()
    # On the logger itself, at its level: a server started before may have set up the logs.
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        for _ in range(1_000):
            deliver([link], {"action": PUSH, "player": "p1", "frame": "not base64!"})
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(written) <= 1  # one line a kind an interval (another test's may be it)
