"""Race logs and replays of finished races, by race number, so a rematch never hides them.

A finished race never changes, so its answers are cached (the engine replay of a long game
is the costly part); asking for one is charged to the rate limit by its length, so a client
that floods replays cannot take the event loop away from live rooms.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import AskRaceLog, AskReplay, RaceLog, RacerLog, Replay
from server.connections.link import ClientLink
from server.features.context import Context
from server.features.run_secrecy import check_run_public
from server.live.runner import RoomRunner
from server.rooms.entries import parse_entry
from server.rooms.errors import RoomError
from server.rooms.record import RoomRecord, decode_record
from server.rooms.replay import race_replay

#: Finished-race answers kept (race logs and replays), least recently used dropped first.
CACHE_SIZE: Final = 256
#: Log entries an answer may carry per token of the rate limit, beyond the request's own.
ENTRIES_PER_TOKEN: Final = 100

_Key = tuple[str, int, int]  # room, race, seat (-1: the whole race log)


class _Answers:
    def __init__(self) -> None:
        self._kept: OrderedDict[_Key, RaceLog | Replay] = OrderedDict()

    def get(self, key: _Key) -> RaceLog | Replay | None:
        answer = self._kept.get(key)
        if answer is not None:
            self._kept.move_to_end(key)
        return answer

    def keep(self, key: _Key, answer: RaceLog | Replay) -> None:
        self._kept[key] = answer
        if len(self._kept) > CACHE_SIZE:
            self._kept.popitem(last=False)


_answers = _Answers()


async def finished_race(ctx: Context, runner: RoomRunner, race: int | None) -> RoomRecord:
    """The record of race ``race`` of the room (its latest finished race by default)."""
    current = runner.room.record
    if race is None:
        race = current.race if runner.finished else current.race - 1
        if race < 1:
            raise RoomError(ErrorCode.NOT_FINISHED, "the move logs are published when the race ends")
    if race == current.race:
        return runner.room.finished_record()
    stored = await ctx.rooms.store.finished_race(runner.code, race) if 0 < race < current.race else None
    if stored is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, f"room {runner.code} has no finished race {race} (any more)")
    return decode_record(stored)


async def race_log(ctx: Context, link: ClientLink, message: AskRaceLog) -> None:
    runner = await ctx.room(message.room)
    record = await finished_race(ctx, runner, message.race)
    await check_run_public(ctx, record)
    key = (runner.code, record.race, -1)
    answer = _answers.get(key)
    if not isinstance(answer, RaceLog):
        logs = await ctx.rooms.store.logs(runner.code, record.race)
        assert record.deal is not None
        assert record.salt is not None
        assert record.commitment is not None
        answer = RaceLog(
            id=0,
            room=runner.code,
            race=record.race,
            variant=record.variant,
            options=record.options,
            deal=record.deal,
            salt=record.salt,
            commitment=record.commitment,
            racers=[RacerLog(seat=s.seat, name=s.name, moves=logs.get(s.seat, [])) for s in record.seats],
        )
        _answers.keep(key, answer)
    link.bucket.charge(sum(len(r.moves) for r in answer.racers) / ENTRIES_PER_TOKEN)
    link.send(msgspec.structs.replace(answer, id=message.id))


async def replay(ctx: Context, link: ClientLink, message: AskReplay) -> None:
    runner = await ctx.room(message.room)
    record = await finished_race(ctx, runner, message.race)
    await check_run_public(ctx, record)
    key = (runner.code, record.race, message.seat)
    answer = _answers.get(key)
    if not isinstance(answer, Replay):
        logs = await ctx.rooms.store.logs(runner.code, record.race)
        log = [parse_entry(text) for text in logs.get(message.seat, [])]
        board, steps = race_replay(record, message.seat, log)
        name = next((seat.name for seat in record.seats if seat.seat == message.seat), "")
        answer = Replay(
            id=0, room=runner.code, race=record.race, seat=message.seat, name=name, board=board, steps=steps
        )
        _answers.keep(key, answer)
    link.bucket.charge(len(answer.steps) / ENTRIES_PER_TOKEN)
    link.send(msgspec.structs.replace(answer, id=message.id))
