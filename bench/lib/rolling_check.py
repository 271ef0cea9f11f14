"""The check of :mod:`bench.rolling` once play has stopped: every room as Redis holds it
against what its racers were told. A race must still be racing or finished with no seat
resigned (or else it was aborted), and its move logs must hold every acknowledged move of each
seat in order; an ack's version also must not be acknowledged twice, nor be past the stored
version.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bench.lib.rolling_racers import Racer
from server.rooms.record import SeatStatus, decode_record
from server.storage.connection import Storage
from server.storage.rooms import RoomStore


def lcs(acked: list[str], stored: list[str]) -> int:
    """The length of the longest common subsequence: how many acked moves the log holds in order."""
    row = [0] * (len(stored) + 1)
    for move in acked:
        previous = 0
        for j, entry in enumerate(stored, 1):
            current = row[j]
            row[j] = previous + 1 if move == entry else max(row[j], row[j - 1])
            previous = current
    return row[-1]


@dataclass
class Checked:
    acked: int = 0
    lost: list[str] = field(default_factory=list)  # one line per lost move
    aborted: list[str] = field(default_factory=list)  # one line per aborted race
    twice: list[str] = field(default_factory=list)  # a version acknowledged twice in a room
    unacked_stored: int = 0  # moves stored whose ack never came (in doubt)
    states: Counter[str] = field(default_factory=Counter)


async def check_rooms(redis_url: str, races: list[tuple[Racer, Racer]]) -> Checked:
    """Every room as Redis holds it against what its racers were told."""
    checked = Checked()
    storage = await Storage.connect(redis_url)
    try:
        store = RoomStore(storage)
        for pair in races:
            code = pair[0].code
            stored = await store.load(code)
            if stored is None:
                checked.aborted.append(f"{code}: no record in Redis")
                checked.lost += [f"{code} seat {r.seat} v{a.version} {a.move}: room gone" for r in pair for a in r.acks]
                continue
            record = decode_record(stored.record)
            checked.states[record.state] += 1
            resigned = [seat for seat in record.seats if seat.status is SeatStatus.RESIGNED]
            if record.state not in ("racing", "finished") or resigned or record.race != 1:
                seats = ", ".join(f"seat {s.seat} {s.status.value} {s.resigned or ''}".strip() for s in record.seats)
                checked.aborted.append(f"{code}: {record.state}, race {record.race}, version {stored.version}; {seats}")
            logs = await store.logs(code, record.race)
            versions = Counter(a.version for r in pair for a in r.acks)
            checked.twice += [f"{code} v{v}: acknowledged {n} times" for v, n in versions.items() if n > 1]
            for racer in pair:
                moves, log = [a.move for a in racer.acks], logs.get(racer.seat, [])
                checked.acked += len(moves)
                found = lcs(moves, log)
                checked.unacked_stored += max(0, len(log) - found)
                if found < len(moves):
                    # Name them: the acked moves the log does not hold in order, matched greedily
                    # (the count is the exact one above).
                    position, kept = 0, set()
                    for k, move in enumerate(moves):
                        at = position
                        while at < len(log) and log[at] != move:
                            at += 1
                        if at < len(log):
                            kept.add(k)
                            position = at + 1
                    checked.lost += [
                        f"{code} seat {racer.seat} v{a.version} {a.move!r} (stored version {stored.version},"
                        f" log {len(log)} entries)"
                        for k, a in enumerate(racer.acks)
                        if k not in kept
                    ][: len(moves) - found]
                top = max((a.version for a in racer.acks), default=0)
                if top > stored.version:
                    checked.lost.append(f"{code} seat {racer.seat}: acked version {top} > stored {stored.version}")
    finally:
        await storage.close()
    return checked
