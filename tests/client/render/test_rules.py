"""The rules screen's worked examples are real: each line of play replays through the engine."""

from __future__ import annotations

import re

import pytest

from client.render.keys import KEYS, help_text
from client.render.rules import RULES
from server.games import Antares, Autoplay, Game, Options, Scorpion

ENGINES: dict[str, type[Game]] = {"scorpion": Scorpion, "antares": Antares}


@pytest.mark.parametrize("variant", ["scorpion", "antares"])
def test_the_worked_example_replays_through_the_engine(variant: str) -> None:
    text = RULES[variant]  # type: ignore[index]
    deal = re.search(r"deal (\d+)", text)
    assert deal is not None
    moves = re.findall(r"^\s+\d\. \[b\](\S+)\[/b\]", text, flags=re.MULTILINE)
    assert len(moves) == 4
    game = ENGINES[variant].replay(int(deal[1]), Options(autoplay=Autoplay.SAFE), moves)
    assert game.progress().moves == 4


def test_the_rules_fit_an_80_column_terminal() -> None:
    for text in RULES.values():
        assert max(len(re.sub(r"\[/?[bi]\]", "", line)) for line in text.splitlines()) <= 78


def test_the_help_lists_each_section_once() -> None:
    sections = [section for section, _ in KEYS]
    assert len(sections) == len(set(sections))
    assert all(section in help_text().plain for section in sections)
