"""Command line of the rules engine: ``python -m server.games deal scorpion 617``."""

from __future__ import annotations

import argparse
import sys

from server.games.deal_text import deal_text
from server.games.deals import Deal
from server.games.errors import GameError
from server.games.variants import VARIANTS, variant_class


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.games", description="Solitaire Race rules engine tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    deal = commands.add_parser("deal", help="print a deal's starting layout in the DEALS.md format")
    deal.add_argument("variant", choices=sorted(VARIANTS))
    deal.add_argument("number", help="deal number: N or msN")
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(deal_text(variant_class(args.variant), Deal.parse(args.number)))
    except GameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
