"""Literal positions and the checks the engine tests share.

Positions are written in the notation of :mod:`server.games.position_text`, so a
test reads like the board it is about. Antares positions have autoplay off unless
a test asks for it, so that a rule test sees the effect of its own move only.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Game, IllegalMove, Move, Options, Scorpion
from server.games.position_text import parse_position, position_text


def scorpion(text: str) -> Game:
    return parse_position(Scorpion, text)


def antares(text: str, autoplay: Autoplay = Autoplay.OFF) -> Game:
    return parse_position(Antares, text, Options(autoplay=autoplay))


def board(game: Game, text: str) -> str:
    """``text`` read as a position of ``game``'s variant and written back: compare it with
    ``position_text(game)`` to check a whole position, face-down cards included."""
    return position_text(parse_position(type(game), text, game.options))


def play(game: Game, *moves: str | Move) -> None:
    """Apply each move (text or :class:`Move`) with all the checks a player's move gets."""
    for move in moves:
        game.apply(game.parse_move(move) if isinstance(move, str) else move)


def rejection(game: Game, move: str | Move) -> IllegalMove:
    """The error ``move`` is refused with; also checks that the refusal changed nothing."""
    before = game.full_view(), game.moves
    with pytest.raises(IllegalMove) as refused:
        play(game, move)
    assert (game.full_view(), game.moves) == before
    return refused.value


def reshuffle_unseen(game: Game, seed: int) -> Game:
    """The same position with its unseen cards (face down or in the stock) dealt among
    their places in another random order: what a player sees is unchanged."""
    slots = [(i, k) for i, pile in enumerate(game.piles) for k in range(game.hidden[i])]
    cards = [game.piles[i][k] for i, k in slots]
    random.Random(seed).shuffle(cards)
    piles = [list(pile) for pile in game.piles]
    for (i, k), card in zip(slots, cards, strict=True):
        piles[i][k] = card
    return type(game)(game.deal, game.options, piles, list(game.hidden))


def random_play(game: Game, data: st.DataObject, most: int) -> Iterator[Game]:
    """Play up to ``most`` random legal moves on ``game`` (drawn from ``data``), yielding it
    after each: random play mostly ruins a deal, which makes positions searches can exhaust."""
    for _ in range(data.draw(st.integers(0, most), label="steps")):
        moves = game.legal_moves()
        if not moves:
            return
        game.push(moves[data.draw(st.integers(0, len(moves) - 1), label="move")])
        yield game
