"""What a challenge's finished run leaves behind (:mod:`server.competition.challenges`).

The run is recorded in its challenge, once per side. The challenger's run of an async match
is then offered to the next player near their rating. When the second run ends, a rated
challenge rates both players as a two-racer race, once (:func:`rate_race_once`, keyed by the
challenge), and keeps the changes in the challenge for the players' inboxes; then both
players are told the result on the connections they have open (:func:`announce_result`).
Every step can be retried: the recorder retries the whole while storage is away (a retry may
tell the players twice, never a wrong result).
"""

from __future__ import annotations

import logging

from protocol.messages import ChallengeResult
from server.clock import now_ms
from server.competition.challenges import Challenge, ChallengeState, Run, is_secret, line_of, results, side_of, state
from server.live.pushes import push
from server.rooms.record import SeatStatus
from server.rooms.room import Room
from server.storage.accounts import AccountStore
from server.storage.challenges import ChallengeStore
from server.storage.connection import Storage
from server.storage.ratings import RatingStore, rate_race_once

logger = logging.getLogger("server.challenges")


def players_of(challenge: Challenge) -> list[str]:
    """Whose inboxes hold ``challenge``: its challenger, and its opponent or invited player."""
    players = [challenge.challenger.player]
    for other in (challenge.opponent.player if challenge.opponent is not None else None, challenge.invited):
        if other is not None and other not in players:
            players.append(other)
    return players


async def announce_result(accounts: AccountStore, challenge: Challenge, now: int) -> int:
    """Push a :class:`ChallengeResult` to each player of ``challenge`` (over or expired at
    ``now``: nothing while it is secret), on every node; how many pushes were announced."""
    if is_secret(challenge, now):
        return 0
    told = 0
    for player in players_of(challenge):
        told += await push(accounts, player, ChallengeResult(challenge=line_of(challenge, player, now)))
    return told


class ChallengeRuns:
    """Records finished challenge runs in the challenges of ``storage``."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._challenges = ChallengeStore(storage)
        self._accounts = AccountStore(storage)
        self._ratings = RatingStore(storage)

    async def record(self, room: Room) -> None:
        """Record ``room``'s finished run in its challenge (nothing for another room)."""
        record = room.record
        if record.challenge is None or not record.seats:
            return
        seat = record.seats[0]
        challenge = await self._challenges.get(record.challenge)
        side = None if challenge is None else side_of(challenge, seat.player)
        if challenge is None or side is None:
            logger.warning("room %s: challenge %s or its racer is gone", record.code, record.challenge)
            return
        game = room.game_of(seat.seat)
        progress = game.progress() if game is not None else None
        finished_ms = seat.finished_ms if seat.status is SeatStatus.FINISHED else None
        run = Run(
            room=record.code,
            finished_ms=finished_ms,
            moves=room.results()[0].moves,
            home=progress.home if progress is not None else 0,
            ordered=progress.ordered if progress is not None else 0,
        )
        after = await self._challenges.record_run(challenge.id, side, run)
        if after is None:
            return
        now = now_ms()
        if side == 0 and after.matched and state(after, now) is ChallengeState.OPEN:
            rating = await self._ratings.rating(after.variant, seat.player)
            await self._challenges.offer(after, rating.rating)
        now_state = state(after, now)
        if now_state is ChallengeState.EXPIRED:
            # The window closed while this run went on: its close told nobody; this end does.
            await announce_result(self._accounts, after, now)
            return
        if now_state is not ChallengeState.OVER:
            return
        if after.rated and not after.ratings:
            assert after.opponent is not None
            placed = results(after)
            players = {0: after.challenger.player, 1: after.opponent.player}
            order = [players[r.seat] for r in placed]
            generations = await self._accounts.generations(order)
            shown = {player for player, generation in zip(order, generations, strict=True) if generation}
            rated = await rate_race_once(
                self._storage, after.variant, f"challenge:{after.id}", order, [r.place for r in placed], shown=shown
            )
            await self._challenges.rate(
                after.id,
                {r.seat: (a.rating, a.rating - b.rating) for r, (b, a) in zip(placed, rated, strict=True)},
            )
            after = await self._challenges.get(after.id) or after  # with the ratings, for the players
        await self._challenges.announced(after.id)
        await announce_result(self._accounts, after, now)
