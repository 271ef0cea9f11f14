"""Race results: who placed where."""

from __future__ import annotations

from dataclasses import dataclass

from protocol.messages import Result


@dataclass(frozen=True, slots=True)
class Standing:
    """What ranking needs to know of one racer at the end of a race."""

    seat: int
    name: str
    finished_ms: int | None
    moves: int
    home: int
    ordered: int


def rank(standings: list[Standing]) -> list[Result]:
    """Finishers first, by server-measured time, then fewer moves; then the others by
    progress (cards home, then cards in order, then fewer moves). Seat breaks exact ties,
    so the order is always the same for the same race."""

    def key(s: Standing) -> tuple[int, int, int, int, int]:
        if s.finished_ms is not None:
            return (0, s.finished_ms, s.moves, 0, s.seat)
        return (1, -s.home, -s.ordered, s.moves, s.seat)

    ordered = sorted(standings, key=key)
    return [
        Result(
            place=place,
            seat=s.seat,
            name=s.name,
            finished=s.finished_ms is not None,
            time_ms=s.finished_ms,
            moves=s.moves,
            home=s.home,
        )
        for place, s in enumerate(ordered, start=1)
    ]
