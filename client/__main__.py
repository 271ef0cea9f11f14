"""``solitaire-race`` (or ``python -m client``): the terminal UI, or one of the script commands.

solitaire-race [--server URL]             the terminal UI
solitaire-race play --bot [--level L]     the terminal UI, straight into a race against a bot
solitaire-race rooms [--game G] [--after CURSOR]   public rooms, one a line, 50 a page
solitaire-race watch CODE [--plain]       spectate (UI, or a line per event)
solitaire-race bot [--rooms N] [--join CODE] [--level L]   bots racing by the server's hints
solitaire-race leaderboard GAME [--board B] [--around]   a leaderboard (as your saved player)
solitaire-race stats GAME                 your statistics in a game

``--server`` and ``--config-dir`` go before the command or after it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable

from websockets.exceptions import InvalidHandshake, InvalidURI

from client import commands
from client.commands import DEFAULT_SERVER, PROG
from client.lib.bot import LEVELS
from client.lib.connection import ServerError
from client.render.standings import BOARDS, GAMES
from client.tui.app import RaceApp


def bounded(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, else a one-line error."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{number} is out of range: {low} to {high}")
        return number

    return parse


def _add_common(parser: argparse.ArgumentParser, after_command: bool) -> None:
    """``--server`` and ``--config-dir``, taken before the command (by the main parser) and after
    it (by each command's). After it they have no default, or it would replace a value given
    before the command."""
    parser.add_argument(
        "--server",
        default=argparse.SUPPRESS if after_command else DEFAULT_SERVER,
        help=f"server address (default {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--config-dir",
        default=argparse.SUPPRESS if after_command else None,
        help="where to keep the name and resume token (default: your user configuration folder)",
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Solitaire Race: the terminal client.")
    _add_common(parser, after_command=False)
    common = argparse.ArgumentParser(add_help=False)
    _add_common(common, after_command=True)
    commands = parser.add_subparsers(dest="command")
    play = commands.add_parser("play", help="the terminal UI (the same as no command)", parents=[common])
    play.add_argument("--bot", action="store_true", help="start a race against a bot at once")
    play.add_argument("--variant", choices=GAMES, default="scorpion", help="(--bot) the game (default scorpion)")
    play.add_argument("--level", choices=LEVELS, default="medium", help="(--bot) the bot's level (default medium)")
    play.add_argument("--delay", type=float, default=None, help="(--bot) seconds between the bot's moves")
    rooms = commands.add_parser("rooms", help="list the public rooms, newest first, 50 a page", parents=[common])
    rooms.add_argument("--game", choices=GAMES, default=None, help="only this game's rooms (default: both)")
    rooms.add_argument("--after", metavar="CURSOR", default=None, help="the next page, as the last one said")
    watch = commands.add_parser("watch", help="spectate a room", parents=[common])
    watch.add_argument("code", help="the room code")
    watch.add_argument("--plain", action="store_true", help="print a line per event instead of the UI")
    watch.add_argument("--follow", action="store_true", help="(--plain) keep watching across rematches")
    bot = commands.add_parser("bot", help="bots that race using the server's hints", parents=[common])
    bot.add_argument("--rooms", type=bounded(1, 1000), default=1, help="rooms of bots to open (default 1)")
    bot.add_argument("--racers", type=bounded(1, 8), default=2, help="bots in each room, 1 to 8 (default 2)")
    bot.add_argument("--variant", choices=GAMES, default="scorpion")
    bot.add_argument("--level", choices=LEVELS, default="hard", help="easy, medium or hard (default hard)")
    bot.add_argument("--private", action="store_true", help="rooms not listed in the lobby")
    bot.add_argument(
        "--delay", type=float, default=None, help="seconds between a bot's moves (default: the level's, 0.3 to 3)"
    )
    bot.add_argument(
        "--races",
        type=bounded(1, 10**6),
        default=None,
        help="races per room, rematching in between (default 1; with --join: every rematch until you leave)",
    )
    bot.add_argument(
        "--max-moves", type=bounded(1, 10**6), default=600, help="a bot resigns after this many moves (default 600)"
    )
    bot.add_argument("--join", metavar="CODE", help="instead: one bot joins room CODE (race it yourself)")
    board = commands.add_parser("leaderboard", help="a leaderboard, with your line marked (you)", parents=[common])
    board.add_argument("game", choices=GAMES)
    board.add_argument("--board", choices=tuple(BOARDS), default="daily", help="which board (default: today's daily)")
    board.add_argument("--around", action="store_true", help="the entries around you instead of the top")
    board.add_argument("--limit", type=bounded(1, 100), default=10, metavar="N", help="entries, 1 to 100 (default 10)")
    stats = commands.add_parser("stats", help="your statistics in a game", parents=[common])
    stats.add_argument("game", choices=GAMES)
    return parser.parse_args(argv)


async def _script(args: argparse.Namespace) -> int:
    if args.command == "rooms":
        return await commands.list_rooms(args.server, variant=args.game, after=args.after)
    if args.command == "watch":
        return await commands.watch_plain(args.server, args.code, follow=args.follow)
    if args.command == "leaderboard":
        return await commands.show_leaderboard(
            args.server, args.game, args.board, around=args.around, limit=args.limit, directory=args.config_dir
        )
    if args.command == "stats":
        return await commands.show_stats(args.server, args.game, directory=args.config_dir)
    return await commands.run_bots(
        args.server,
        rooms=args.rooms,
        racers=args.racers,
        variant=args.variant,
        public=not args.private,
        level=args.level,
        delay=args.delay,
        races=args.races,
        join=args.join,
        max_moves=args.max_moves,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command in (None, "play") or (args.command == "watch" and not args.plain):
        bot_race = (args.variant, args.level) if args.command == "play" and args.bot else None
        app = RaceApp(
            args.server,
            config_dir=args.config_dir,
            watch=getattr(args, "code", None),
            bot_race=bot_race,
            bot_delay=getattr(args, "delay", None),
        )
        app.run()
        return app.return_code or 0
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = asyncio.run(_script(args))
        sys.stdout.flush()  # here, where a closed pipe can be told from an error
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into a command that stopped reading: not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as error:
        print(f"cannot reach the server at {args.server}: {error}", file=sys.stderr)
        return 2
    except ServerError as error:
        print(f"the server refused: {error} ({error.code})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
