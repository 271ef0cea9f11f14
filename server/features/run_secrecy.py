"""When a finished run may be studied (its race log, replay or ghost), and a live one watched:
the one rule for every request that shows a run, so no route skips it.

A daily attempt's run is shown once its UTC day is over (:func:`check_daily_over`); a
challenge's once the challenge is over (both runs ended, or its window closed); a bracket
round's once the round closed; the last two read from Redis so every node answers alike.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.clock import now_ms
from server.competition.challenges import is_secret
from server.features.context import Context
from server.features.daily import check_daily_over
from server.rooms.errors import RoomError
from server.rooms.record import RoomRecord


async def check_challenge_over(ctx: Context, challenge: str | None) -> None:
    """``not-allowed`` while challenge ``challenge`` (if any) is not over."""
    if challenge is None:
        return
    found = await ctx.challenges.get(challenge)
    if found is not None and is_secret(found, now_ms()):
        raise RoomError(
            ErrorCode.NOT_ALLOWED, "a challenge's runs are shown once both have played, or when its window closes"
        )


async def check_round_closed(ctx: Context, bracket_round: str | None) -> None:
    """``not-allowed`` while the bracket round ``<bracket>/<round>`` (if any) is open."""
    if bracket_round is None:
        return
    code, _, number = bracket_round.partition("/")
    found = await ctx.brackets.get(code)
    rounds = found.rounds if found is not None else []
    if number.isdigit() and 0 < int(number) <= len(rounds) and rounds[int(number) - 1].places is None:
        raise RoomError(ErrorCode.NOT_ALLOWED, "a bracket round's runs are shown once the round has closed")


async def check_run_public(ctx: Context, record: RoomRecord) -> None:
    """Refuse to show the runs of ``record``'s race while they are secret (see the module)."""
    check_daily_over(record.daily)
    await check_challenge_over(ctx, record.challenge)
    await check_round_closed(ctx, record.bracket)
