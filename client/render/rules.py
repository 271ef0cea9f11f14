"""The rules of each game for players, as the client's rules screen shows them (Rich
markup). Written from ``seeds/scorpion.md`` and ``seeds/antares.md``, which are the
reference; the server enforces the rules, and this text only explains them."""

from __future__ import annotations

from typing import Final

from protocol.messages import Variant

SCORPION: Final = """\
[b]Scorpion[/b]: get all 52 cards home, to the foundations [b]hc hs hh hd[/b].

[b]The table.[/b] Seven columns, [b]1[/b] to [b]7[/b]. Columns 1-4 start with three cards
face down under four face up; columns 5-7 hold seven face-up cards. Three
more cards wait in the [b]stock[/b].

[b]Moving.[/b] Pick up [i]any[/i] face-up card together with every card lying on
it, in whatever order they lie. Put it on the card of the [b]same suit, one
rank higher[/b] (9♥ goes on 10♥). Only a [b]King[/b], with whatever lies on it,
goes into an empty column. Nothing goes on an Ace.

[b]By itself.[/b] A face-down card left on top turns face up. A column that
ends in a whole suit, King down to Ace, sends those 13 cards home at once:
you never move cards home yourself.

[b]The stock.[/b] [b]deal[/b] (key [b]d[/b], or Enter on the stock) lays its three
cards on columns 1, 2 and 3: once, at any time.

[b]Stuck[/b] means no legal move is left: undo (key [b]u[/b]) or resign ([b]R R[/b]).

[b]A worked example: deal 617[/b] (home menu, "Practice a deal", 617).
Column 5 ends in J♥, column 6 in Q♥.
  1. [b]JH>6[/b]   J♥ onto Q♥.
  2. [b]4D>2[/b]   4♦ lies in column 3 under 6♥ J♣: all three go onto
           the 5♦ of column 2.
  3. [b]TC>2[/b]   10♣ onto J♣. Column 3 has only face-down cards left,
           so its top one, 10♥, turns face up.
  4. [b]deal[/b]   K♠, K♣ and 4♥ land on columns 1, 2 and 3.
Type a move like these after [b]:[/b], or pick cards up with the cursor
(Enter, then Enter again on the target). The server explains every
refused move.
"""

ANTARES: Final = """\
[b]Antares[/b]: get all 52 cards home, each suit from its Ace up to its King,
to the foundations [b]hc hs hh hd[/b]. Every card is face up; there is no stock.

[b]The table.[/b] Two kinds of pile side by side, and four cells:
  [b]s1-s4[/b]  Scorpion piles, built [b]down in suit[/b]. Pick up any card with
         everything on it, in any order; put it on the card of its
         suit one rank higher. Only a King goes into an empty one.
  [b]f1-f4[/b]  FreeCell piles, built [b]down in alternating colours[/b] (a red 8
         on a black 9). Take the top card, or a run from the top of
         at most (free cells + 1) cards. An empty one takes anything.
  [b]c1-c4[/b]  cells: one card each, from a pile (not from another cell).

[b]Home.[/b] Cards go home one at a time, in order (key [b]f[/b] sends the card
under the cursor). With autoplay [b]safe[/b], the default, aces, twos and
cards no pile needs any more go home by themselves.

[b]Stuck[/b] means no legal move is left: undo (key [b]u[/b]) or resign ([b]R R[/b]).
Keep cells free: they are what lets long runs move.

[b]A worked example: deal 24[/b] (home menu, "Practice a deal", 24).
  1. [b]AS>h[/b]    the ace of spades, on top of f4, goes home.
  2. [b]8D>s4[/b]   8♦ (top of s1) onto 9♦: same suit, one lower.
  3. [b]TD>s3[/b]   10♦, now on top of s1, onto J♦.
  4. [b]5S>f4[/b]   5♠ and the six cards on it leave s3 for the red 6♦
            on f4 (a Scorpion pile gives any group; only its
            first card must fit). A♥, left alone, goes home by
            itself, and 2♥ after it.
Type a move like these after [b]:[/b], or pick cards up with the cursor
(Enter, then Enter again on the target). The server explains every
refused move.
"""

RULES: Final[dict[Variant, str]] = {"scorpion": SCORPION, "antares": ANTARES}

#: Said under both: how a race counts moves (the server's rule, see the README's decisions).
RACE_NOTE: Final = """\
[b]In a race[/b] racers who finish rank by time, then by moves; the others by
cards home. Every move you play counts, also the ones you undo."""
