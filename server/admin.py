"""``python -m server admin ...``: moderation from the command line, straight to Redis.

It works beside a running server: it writes through the storage layer and announces each
action on the moderation channel, which every running server carries out on its own
connections and rooms (:mod:`server.features.moderation`). Every action that changes
anything is logged in Redis with who did it (``--as``, by default the OS user) and when,
and always with the OS user and host that ran the tool, whatever ``--as`` says; ``admin
log`` shows the log (both names where they differ). Flags (``admin flags``) are anti-cheat
evidence for a person to judge: a flagged ranked daily entry is held off the board until
``admin clear-flag`` puts it there; one refused at machine speed stays off.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import getpass
import os
import pwd
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from protocol.messages import Variant
from server.clock import now_ms
from server.competition.arena import Arena
from server.competition.bracket import MAX_PLAYERS, MIN_PLAYERS, Bracket
from server.competition.daily import check_date
from server.features.sessions import InvalidName, clean_name
from server.live.registry import new_room_code
from server.rooms.record import decode_record
from server.storage.accounts import AccountStore
from server.storage.arenas import ArenaStore
from server.storage.board_edits import BoardEdits
from server.storage.boards import ALL_TIME_BOARDS
from server.storage.brackets import BracketStore
from server.storage.connection import Storage, StoreUnavailable
from server.storage.embedded import SOCKET_NAME
from server.storage.held import HeldEntries, Released
from server.storage.moderation import AdminAction, Flag, ModerationStore
from server.storage.players import PlayerStore
from server.storage.rooms import RoomStore

GAMES = ("scorpion", "antares")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m server admin", description="Moderate a Solitaire Race server.")
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL") or None, help="Redis (REDIS_URL)")
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("DATA_DIR", "data")), help="the embedded Redis's data"
    )
    parser.add_argument("--key-prefix", default=os.environ.get("KEY_PREFIX", "sr:"), help="the server's key prefix")
    parser.add_argument(
        "--as",
        dest="who",
        default=None,
        help="the name to act under (default: the OS user; the OS user and host are logged too)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    ban = commands.add_parser("ban", help="ban a player: their connections close, new hellos are refused")
    ban.add_argument("player")
    ban.add_argument("--reason", default="breaking the rules")
    commands.add_parser("unban", help="lift a ban").add_argument("player")
    rename = commands.add_parser("rename", help="give a player another name")
    rename.add_argument("player")
    rename.add_argument("name")
    remove = commands.add_parser("remove-entry", help="take a player off a board (the others re-rank)")
    remove.add_argument("game", choices=GAMES)
    remove.add_argument("board", choices=("daily", *ALL_TIME_BOARDS, "rating"))
    remove.add_argument("player")
    remove.add_argument("--date", help="the day of a daily board, YYYY-MM-DD (default: today, UTC)")
    commands.add_parser("close-room", help="end a room: every member leaves it").add_argument("room")
    commands.add_parser("rooms", help="list the rooms in progress")
    commands.add_parser("players", help="list the accounts, and who is banned")
    races = commands.add_parser("races", help="a player's recent races")
    races.add_argument("player")
    races.add_argument("-n", type=int, default=20)
    flags = commands.add_parser("flags", help="anti-cheat flags on ranked daily entries, with their evidence")
    flags.add_argument("--player", help="only this player's")
    flags.add_argument("-n", type=int, default=100, help="the latest N flags (default 100)")
    clear = commands.add_parser("clear-flag", help="put a flagged ranked daily entry on its board after all")
    clear.add_argument("game", choices=GAMES)
    clear.add_argument("date", type=check_date, help="the day of the attempt, YYYY-MM-DD")
    clear.add_argument("player")
    commands.add_parser("log", help="the admin actions, newest first")
    arena = commands.add_parser("arena", help="schedule an arena tournament (or one an hour, with --repeat)")
    arena.add_argument("game", choices=GAMES)
    arena.add_argument("--start", default="now", help="UTC start, YYYY-MM-DDTHH:MM, or now (the default)")
    arena.add_argument("--minutes", type=int, default=30, help="how long it lasts (default 30)")
    arena.add_argument("--repeat", type=int, default=1, help="how many, an hour apart (default 1)")
    arena.add_argument("--name", default=None, help="its name (default: the game and the start)")
    bracket = commands.add_parser("bracket", help="schedule a bracket tournament (4 to 16 players register for it)")
    bracket.add_argument("game", choices=GAMES)
    bracket.add_argument("--start", default=None, help="UTC start, YYYY-MM-DDTHH:MM (default: in 10 minutes)")
    bracket.add_argument("--size", type=int, default=16, help="players at most, 4 to 16 (default 16)")
    bracket.add_argument("--round-minutes", type=int, default=10, help="each round's window (default 10)")
    bracket.add_argument("--name", default=None, help="its name (default: the game and the start)")
    return parser


def os_user() -> str:
    """The OS user running this process: its real user id's name (not ``$USER`` or
    ``$LOGNAME``, which whoever runs the tool sets as they like), else what
    :func:`getpass.getuser` says, else the id."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a user id with no name (a container's, say)
        pass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def _who(action: AdminAction) -> str:
    """The name an action was taken under, and who really ran the tool where they differ."""
    if not action.os_user or action.os_user == action.who:
        return action.who
    return f"{action.who} (OS user {action.os_user}@{action.host or '?'})"


def _utc_ms(text: str) -> int:
    """Unix ms of a UTC time written ``YYYY-MM-DDTHH:MM``; ValueError if it is none."""
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M").replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def _when(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


class Admin:
    """The admin commands against one Redis; each returns the lines to print."""

    def __init__(self, storage: Storage, who: str) -> None:
        #: The name acted under (``--as``); the OS user and host are this process's own.
        self.who = who
        self.os_user = os_user()
        self.host = socket.gethostname()
        self.accounts = AccountStore(storage)
        self.moderation = ModerationStore(storage)
        self.players = PlayerStore(storage)
        self.boards = BoardEdits(storage)
        self.held = HeldEntries(storage)
        self.rooms = RoomStore(storage)
        self.arenas = ArenaStore(storage)
        self.brackets = BracketStore(storage)

    async def schedule_arenas(self, game: str, start: str, minutes: int, repeat: int, name: str | None) -> list[str]:
        """Schedule ``repeat`` arenas of ``game``, an hour apart from ``start``, each
        ``minutes`` long (players join them from the clients' arena pages)."""
        if not 1 <= minutes <= 24 * 60 or not 1 <= repeat <= 24 * 7:
            return ["admin: an arena lasts 1 to 1440 minutes, and at most 168 are scheduled at once"]
        try:
            first = now_ms() if start == "now" else _utc_ms(start)
        except ValueError:
            return [f"admin: {start!r} is no UTC time: write YYYY-MM-DDTHH:MM"]
        lines = []
        for number in range(repeat):
            starts = first + number * 3_600_000
            shown = name or f"{game.capitalize()} arena, {_when(starts)[:16]} UTC"
            arena = Arena(
                new_room_code(),
                "antares" if game == "antares" else "scorpion",
                shown,
                starts,
                starts + minutes * 60_000,
            )
            await self.arenas.create(arena, now_ms())
            await self._log("arena", arena.id, f"{game}, {_when(starts)}, {minutes} min")
            lines.append(f"arena {arena.id}: {shown}, {minutes} min from {_when(starts)} UTC")
        return lines

    async def schedule_bracket(
        self, game: str, start: str | None, size: int, round_minutes: int, name: str | None
    ) -> list[str]:
        """Schedule a bracket of ``game`` for up to ``size`` players from ``start``."""
        if not MIN_PLAYERS <= size <= MAX_PLAYERS or not 1 <= round_minutes <= 120:
            return [f"admin: a bracket has {MIN_PLAYERS} to {MAX_PLAYERS} players and rounds of 1 to 120 minutes"]
        try:
            starts = now_ms() + 600_000 if start is None else _utc_ms(start)
        except ValueError:
            return [f"admin: {start!r} is no UTC time: write YYYY-MM-DDTHH:MM"]
        variant: Variant = "antares" if game == "antares" else "scorpion"
        shown = name or f"{game.capitalize()} bracket, {_when(starts)[:16]} UTC"
        bracket = Bracket(new_room_code(), variant, shown, starts, size, round_minutes)
        await self.brackets.create(bracket, now_ms())
        await self._log("bracket", bracket.id, f"{game}, {_when(starts)}, {size} players, {round_minutes} min rounds")
        return [f"bracket {bracket.id}: {shown}, up to {size} players, registering until {_when(starts)} UTC"]

    async def _log(self, action: str, target: str, detail: str = "") -> None:
        await self.moderation.log_action(
            AdminAction(self.who, now_ms(), action, target, detail, os_user=self.os_user, host=self.host)
        )

    async def ban(self, player: str, reason: str) -> list[str]:
        await self.accounts.ban(player, reason)
        heard = await self.accounts.announce({"action": "ban", "player": player, "reason": reason})
        await self._log("ban", player, reason)
        return [f"banned {player} ({reason}); {heard} running server(s) told"]

    async def unban(self, player: str) -> list[str]:
        lifted = await self.accounts.unban(player)
        await self._log("unban", player)
        return [f"unbanned {player}" if lifted else f"{player} was not banned"]

    async def rename(self, player: str, name: str) -> list[str]:
        try:
            name = clean_name(name)
        except InvalidName as error:
            return [f"not renamed: {error}"]
        account = await self.accounts.get(player)
        if account is not None and not await self.accounts.rename(player, account.name, name):
            return [f"not renamed: another account holds {name!r} or a name like it"]
        old = await self.players.name(player)
        await self.players.save_name(player, name)
        boards = await self.boards.rename_daily(player, name)
        await self.accounts.announce({"action": "rename", "player": player, "name": name})
        await self._log("rename", player, f"{old!r} -> {name!r}")
        return [f"renamed {player} from {old!r} to {name!r} (and on {boards} daily boards)"]

    async def remove_entry(self, game: str, board: str, player: str, date: str | None) -> list[str]:
        if board == "daily" and date is None:
            date = _when(now_ms())[:10]
        removed = await self.boards.remove_entry(game, board, player, date)
        where = f"the {game} {board} board" + (f" of {date}" if board == "daily" else "")
        await self._log("remove-entry", player, where)
        return [f"removed {player} from {where}" if removed else f"{player} was not on {where}"]

    async def close_room(self, room: str) -> list[str]:
        code = room.strip().upper()
        heard = await self.accounts.announce({"action": "close-room", "room": code})
        await self._log("close-room", code)
        if heard == 0:
            return [f"no running server heard it: room {code} is closed when a server next loads it"]
        return [f"room {code}: closing, {heard} running server(s) told"]

    async def list_rooms(self) -> list[str]:
        lines = []
        for code in await self.rooms.active():
            stored = await self.rooms.load(code)
            if stored is None:
                continue
            record = decode_record(stored.record)
            racers = ", ".join(f"{s.name} ({s.player})" for s in record.seats) or "nobody"
            daily = f" daily {record.daily}{' ranked' if record.ranked else ''}" if record.daily else ""
            lines.append(f"{code}  {record.variant:8}  {record.state:9}  race {record.race}{daily}  {racers}")
        return lines or ["no rooms in progress"]

    async def list_players(self) -> list[str]:
        bans = await self.accounts.banned()
        lines = [
            f"{a.player}  {a.name}  since {_when(a.created)}"
            + ("  BANNED: " + bans[a.player] if a.player in bans else "")
            for a in await self.accounts.accounts()
        ]
        lines += [
            f"{player}  (guest)  BANNED: {reason}"
            for player, reason in bans.items()
            if not any(line.startswith(player) for line in lines)
        ]
        return lines or ["no accounts"]

    async def races(self, player: str, n: int) -> list[str]:
        lines = []
        for code, race in await self.moderation.races(player, n):
            raw = await self.rooms.finished_race(code, race)
            if raw is None:
                lines.append(f"{code} race {race}: expired")
                continue
            record = decode_record(raw)
            seat = next((s for s in record.seats if s.player == player), None)
            how = (
                "?"
                if seat is None
                else (
                    f"finished in {seat.finished_ms} ms"
                    if seat.finished_ms is not None
                    else str(seat.resigned or seat.status)
                )
            )
            daily = f" daily {record.daily}{' ranked' if record.ranked else ''}" if record.daily else ""
            when = _when(record.finished) if record.finished else "?"
            lines.append(f"{when}  {code} race {race}  {record.variant}{daily}  {how}")
        return lines or [f"no recent races of {player}"]

    async def flags(self, player: str | None = None, n: int = 100) -> list[str]:
        lines = []
        for flag in await self.moderation.flags(n):
            if player is not None and flag.player != player:
                continue
            status = await self._status(flag)
            lines.append(f"{_when(flag.flagged)}  {flag.game} {flag.date}  {flag.player}  room {flag.room}  {status}")
            if flag.parts:
                parts = ", ".join(f"{name} {part:.2f}" for name, part in flag.parts.items())
                lines.append(f"    score {flag.score:.2f}: {parts}")
            if flag.first_move_ms is not None:
                lines.append(f"    first move {flag.first_move_ms} ms after the start")
            lines += [f"    {reason}" for reason in flag.reasons]
            lines.append(f"    gaps (ms): {' '.join(map(str, flag.gaps_ms[:60]))}")
        return lines or ["no flags"]

    async def _status(self, flag: Flag) -> str:
        """What became of a flagged entry: still held back, shown, or refused for good."""
        if flag.verdict == "noted":
            return "NOTED (left on the board)"
        held = await self.held.held(flag.game, flag.date, flag.player)
        if held is None:
            rank = await self.boards.rank(flag.game, flag.date, flag.player)
            return "not held, not on the board (removed since?)" if rank is None else f"CLEARED (rank {rank})"
        if held.refused:
            return "REFUSED (machine speed: never on the board)"
        return f"HIDDEN until cleared: admin clear-flag {flag.game} {flag.date} {flag.player}"

    async def clear_flag(self, game: str, date: str, player: str) -> list[str]:
        released = await self.held.release(game, date, player)
        where = f"the {game} daily board of {date}"
        if released is Released.RELEASED:
            await self._log("clear-flag", player, where)
            return [f"cleared {player}'s entry: it is on {where}"]
        if released is Released.REFUSED:
            return [f"{player}'s entry was refused at machine speed: it stays off {where}"]
        return [f"{player} has no entry held back from {where}"]

    async def log(self) -> list[str]:
        return [
            f"{_when(a.when)}  {_who(a)}  {a.action} {a.target}" + (f"  {a.detail}" if a.detail else "")
            for a in await self.moderation.actions()
        ] or ["no admin actions"]


async def run(args: argparse.Namespace) -> list[str]:
    url = args.redis_url or "unix://" + quote(str((args.data_dir / SOCKET_NAME).resolve()))
    storage = await Storage.connect(url, prefix=args.key_prefix)
    admin = Admin(storage, args.who or os_user())
    try:
        match args.command:
            case "ban":
                return await admin.ban(args.player, args.reason)
            case "unban":
                return await admin.unban(args.player)
            case "rename":
                return await admin.rename(args.player, args.name)
            case "remove-entry":
                return await admin.remove_entry(args.game, args.board, args.player, args.date)
            case "close-room":
                return await admin.close_room(args.room)
            case "rooms":
                return await admin.list_rooms()
            case "players":
                return await admin.list_players()
            case "races":
                return await admin.races(args.player, args.n)
            case "flags":
                return await admin.flags(args.player, args.n)
            case "clear-flag":
                return await admin.clear_flag(args.game, args.date, args.player)
            case "arena":
                return await admin.schedule_arenas(args.game, args.start, args.minutes, args.repeat, args.name)
            case "bracket":
                return await admin.schedule_bracket(args.game, args.start, args.size, args.round_minutes, args.name)
            case _:
                return await admin.log()
    finally:
        await storage.close()


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command's arguments, for :func:`run` (a mistake exits with the usage, as argparse does)."""
    return _parser().parse_args(list(argv))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        lines = asyncio.run(run(args))
    except StoreUnavailable as error:
        print(f"admin: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0
