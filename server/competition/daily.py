"""The daily challenge's deal: one per game per UTC day, the same for everyone (pure code, no I/O).

The deal is a secret until the day ends, yet every server process sharing a secret must
agree on it. So it is derived, not drawn: candidate ``i`` of a day is
``HMAC-SHA256(secret, f"{date}|{game}|{i}")`` mapped into the range PySolFC draws its
random games from (``10**16 <= N < 10**20``, like race deals), and the day's deal is the
first candidate the solver certifies winnable (:class:`~server.solver.Solved`) within the
budget; candidates it proves unwinnable or cannot decide in time are skipped. The
fairness salt is derived the same way (``HMAC(secret, f"{date}|{game}|salt")``), so the
commitment published at the start of the day is stable too.

These HMAC messages all contain ``|``; resume tokens sign bare (alphanumeric) player ids
under the same server secret, so no daily message ever equals a token's message.

Determinism: candidates and salt depend only on the secret, the date and the game. The pick
also depends on the solver finishing within ``budget_seconds``: a candidate decided close
to the limit might be decided differently on a slower machine. That is why the pick is
computed once and stored (see :mod:`server.deal_supply`): the stored deal is the day's deal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from protocol.fairness import commitment
from server.games import Deal, Game, Options, variant_class
from server.solver import Budget, Result, Solved, solve

#: Daily (and pool) deals are drawn from ``FIRST_DEAL <= N < END_DEAL``: PySolFC's random games.
FIRST_DEAL: Final = 10**16
END_DEAL: Final = 10**20

#: How many candidates :func:`pick_daily` tries before giving up. With the measured share of
#: winnable deals (well over a tenth in Scorpion, most in Antares) this is never reached;
#: it bounds the work if the solver is broken or the budget far too small.
MAX_CANDIDATES: Final = 1000

#: The options the daily deal is certified and played with: the room default (Antares
#: autoplay "safe"; Scorpion has no options and ignores them).
DAILY_OPTIONS: Final = Options()

Solve = Callable[[type[Game], Deal, Options, Budget], Result]
"""The solver's signature (:func:`server.solver.solve`); tests inject others."""


class NoWinnableDeal(RuntimeError):
    """No candidate was certified winnable within :data:`MAX_CANDIDATES` solves."""


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """A day's deal for one game, with what is revealed when the day ends.

    ``commitment`` (:func:`protocol.fairness.commitment` of ``game``, ``deal`` and ``salt``)
    may be published at once; ``deal``, ``salt`` and ``solution`` (the solver's par line as
    move texts, playable with :meth:`Game.replay <server.games.Game.replay>` and
    :data:`DAILY_OPTIONS`) only after the day. ``par`` is the solution's length.
    """

    game: str
    date: str
    deal: str
    par: int
    solution: tuple[str, ...]
    salt: str
    commitment: str


def game_name(game: str) -> str:
    """The canonical name of ``game`` (``"Scorpion "`` is ``"scorpion"``); InvalidNotation if none."""
    return variant_class(game).VARIANT


def check_date(date: str) -> str:
    """``date`` if it is a date written ``YYYY-MM-DD``; ValueError otherwise.

    One spelling per day: the date is part of the HMAC messages and of storage keys.
    """
    try:
        day = dt.date.fromisoformat(date)
    except (TypeError, ValueError):
        day = None
    if day is None or day.isoformat() != date:
        raise ValueError(f"{date!r} is not a date written YYYY-MM-DD")
    return date


def utc_date(epoch_ms: int) -> str:
    """The UTC date (``YYYY-MM-DD``) of the instant ``epoch_ms`` milliseconds after the Unix epoch."""
    return dt.datetime.fromtimestamp(epoch_ms // 1000, tz=dt.UTC).date().isoformat()


def next_date(date: str) -> str:
    """The day after ``date`` (``YYYY-MM-DD``)."""
    return (dt.date.fromisoformat(check_date(date)) + dt.timedelta(days=1)).isoformat()


def candidates(secret: bytes, date: str, game: str) -> Iterator[Deal]:
    """The day's candidate deals, in order: endless, and the same for the same secret, date and game."""
    prefix = f"{check_date(date)}|{game_name(game)}|"
    for i in itertools.count():
        # 256 bits reduced modulo a 67-bit span: the bias is below 2**-189.
        value = int.from_bytes(_mac(secret, f"{prefix}{i}"), "big")
        yield Deal(FIRST_DEAL + value % (END_DEAL - FIRST_DEAL))


def daily_salt(secret: bytes, date: str, game: str) -> str:
    """The fairness salt of the day's deal: 128 bits, like :func:`protocol.fairness.new_salt`."""
    return _mac(secret, f"{check_date(date)}|{game_name(game)}|salt")[:16].hex()


def pick_daily(
    secret: bytes,
    date: str,
    game: str,
    budget_seconds: float,
    solve: Solve = solve,
    max_candidates: int = MAX_CANDIDATES,
) -> DailyDeal:
    """The day's deal: the first of :func:`candidates` certified winnable within ``budget_seconds`` each.

    CPU-bound (up to ``budget_seconds`` per candidate): call it in a worker process.
    Raises :class:`NoWinnableDeal` after ``max_candidates`` candidates without a win.
    """
    name = game_name(game)
    variant = variant_class(name)
    budget = Budget(seconds=budget_seconds)
    for deal in itertools.islice(candidates(secret, date, name), max_candidates):
        result = solve(variant, deal, DAILY_OPTIONS, budget)
        if isinstance(result, Solved):
            salt = daily_salt(secret, date, name)
            return DailyDeal(
                game=name,
                date=date,
                deal=str(deal),
                par=result.par,
                solution=solution_texts(variant, deal, result),
                salt=salt,
                commitment=commitment(name, str(deal), salt),
            )
    raise NoWinnableDeal(f"none of the first {max_candidates} {name} candidates of {date} was certified winnable")


def certified_winnable(game: str, deal: str, budget_seconds: float, solve: Solve = solve) -> bool:
    """Whether the solver certifies ``deal`` winnable (with :data:`DAILY_OPTIONS`) within ``budget_seconds``.

    CPU-bound: call it in a worker process.
    """
    variant = variant_class(game)
    return isinstance(solve(variant, Deal.parse(deal), DAILY_OPTIONS, Budget(seconds=budget_seconds)), Solved)


def solution_texts(variant: type[Game], deal: Deal, solved: Solved) -> tuple[str, ...]:
    """The solved line as move texts, each written in the position it is played in."""
    game = variant.new(deal, DAILY_OPTIONS)
    texts = []
    for move in solved.moves:
        texts.append(game.move_text(move))
        game.apply(move)
    return tuple(texts)


def _mac(secret: bytes, message: str) -> bytes:
    return hmac.new(secret, message.encode(), hashlib.sha256).digest()


def previous_date(date: str) -> str:
    """The UTC day before ``date`` (YYYY-MM-DD)."""
    return (dt.date.fromisoformat(check_date(date)) - dt.timedelta(days=1)).isoformat()


def day_start_ms(date: str) -> int:
    """When the UTC day ``date`` begins, in Unix milliseconds."""
    return day_end_ms(previous_date(date))


def day_end_ms(date: str) -> int:
    """When the UTC day ``date`` ends, in Unix milliseconds."""
    end = dt.datetime.fromisoformat(next_date(date)).replace(tzinfo=dt.UTC)
    return int(end.timestamp() * 1000)
