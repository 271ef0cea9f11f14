"""Deal numbers and shuffling, compatible with PySolFC (see shared DEALS.md).

Deal number N shuffles the deck exactly as PySolFC's game number N does, so a
player can replay any of our deals there and anyone can check our dealing
against an implementation we did not write. This module only shuffles; where
each card goes is the business of the variant modules.

Never use the standard library's ``shuffle``, ``randint`` or ``randrange``
here: they are not guaranteed stable across Python versions. ``random()`` of
``random.Random`` is, and is all the Mersenne-Twister path uses.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final, Protocol

from server.games.cards import Card
from server.games.errors import InvalidDeal, quoted

#: Largest number accepted with the ``ms`` prefix (LCRandom31's seed range).
MAX_MS_DEAL: Final = 2**33 - 1
#: Plain numbers below this use LCRandom31; from here on, Mersenne Twister.
FIRST_MT_DEAL: Final = 32000
#: Plain numbers are limited to 20 digits; PySolFC draws random ones below 10**20.
MAX_PLAIN_DEAL: Final = 10**20 - 1


@dataclass(frozen=True, slots=True)
class Deal:
    """A deal number: ``Deal(617)`` or, in the ``msN`` form, ``Deal(617, ms=True)``.

    ``msN`` and plain ``N`` are the same deal when ``N < 32000``; the
    canonical form (``str``) is then the plain number. Construct through
    :meth:`parse` or directly; both validate.
    """

    number: int
    ms: bool = False

    def __post_init__(self) -> None:
        if self.number < 1:
            raise InvalidDeal(f"deal numbers start at 1, not {self.number}")
        if self.ms and self.number > MAX_MS_DEAL:
            raise InvalidDeal(f"ms deal numbers go up to ms{MAX_MS_DEAL}, not ms{self.number}")
        if not self.ms and self.number > MAX_PLAIN_DEAL:
            raise InvalidDeal(f"deal numbers have at most 20 digits, not {self.number}")
        if self.ms and self.number < FIRST_MT_DEAL:
            # One spelling per deal, so equal deals compare and hash equal.
            object.__setattr__(self, "ms", False)

    @classmethod
    def parse(cls, text: str) -> Deal:
        """Parse ``"617"`` or ``"ms617"`` (ASCII only, case-insensitive, surrounding spaces
        ignored). Leading zeros are accepted and do not count towards the 20 digits:
        ``"00617"`` is deal 617."""
        if not text.isascii():  # no-break spaces, full-width digits: not a deal number
            raise InvalidDeal(f"{quoted(text)} is not a deal number: write digits, optionally after 'ms'")
        cleaned = text.strip().lower()
        ms = cleaned.startswith("ms")
        digits = cleaned[2:] if ms else cleaned
        if not digits.isascii() or not digits.isdigit():
            raise InvalidDeal(f"{quoted(text)} is not a deal number: write digits, optionally after 'ms'")
        significant = digits.lstrip("0") or "0"
        if len(significant) > 20:
            raise InvalidDeal(f"deal numbers have at most 20 digits, not {len(significant)}")
        return cls(int(significant), ms=ms)

    @property
    def uses_lcrandom(self) -> bool:
        """True for the Microsoft-compatible generator, False for Mersenne Twister."""
        return self.ms or self.number < FIRST_MT_DEAL

    def __str__(self) -> str:
        return f"ms{self.number}" if self.ms else str(self.number)


class _Generator(Protocol):
    def randint(self, low: int, high: int) -> int: ...


class LCRandom31:
    """The Microsoft FreeCell generator as PySolFC extends it to 33-bit seeds."""

    def __init__(self, seed: int) -> None:
        if not 1 <= seed <= MAX_MS_DEAL:
            raise InvalidDeal(f"LCRandom31 seeds go from 1 to {MAX_MS_DEAL}, not {seed}")
        self._seed = seed
        self._state = seed if seed < 2**32 else seed - 2**32

    def _next(self) -> int:
        self._state = (self._state * 214013 + 2531011) & MAX_MS_DEAL
        if self._seed < 2**31:
            return (self._state >> 16) & 0x7FFF
        if self._seed < 2**32:
            return ((self._state >> 16) & 0x7FFF) | 0x8000
        return ((self._state >> 16) & 0xFFFF) + 1

    def randint(self, low: int, high: int) -> int:
        return low + self._next() % (high + 1 - low)


class MTRandom:
    """PySolFC's Mersenne-Twister generator: ``random.Random`` used through ``random()`` only."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def randint(self, low: int, high: int) -> int:
        return low + int(self._random.random() * (high + 1 - low))


def _rank_major(deck: list[Card]) -> list[Card]:
    """Re-order a suit-major deck to Microsoft's order: by rank, then C, D, H, S."""
    offsets = (0, 39, 26, 13)
    return [deck[rank + offsets[k]] for rank in range(13) for k in range(4)]


def talon(deal: Deal) -> list[Card]:
    """The shuffled deck of ``deal``; cards are dealt from its END (``talon.pop()``)."""
    deck = list(range(52))
    generator: _Generator
    if deal.uses_lcrandom:
        generator = LCRandom31(deal.number)
        deck = _rank_major(deck)
    else:
        generator = MTRandom(deal.number)
    for n in range(51, 0, -1):
        j = generator.randint(0, n)
        deck[n], deck[j] = deck[j], deck[n]
    return deck
