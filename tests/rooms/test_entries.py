"""Move-log entries: typed values that round-trip through their stored texts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.rooms.entries import BadEntry, Played, Resigned, Undone, entry_text, parse_entry


@pytest.mark.parametrize(
    ("entry", "text"),
    [(Played("QS>5"), "QS>5"), (Played("deal"), "deal"), (Undone(), "undo"), (Resigned("left"), "resign left")],
)
def test_entries_are_stored_as_the_published_texts(entry: Played | Undone | Resigned, text: str) -> None:
    assert entry_text(entry) == text
    assert parse_entry(text) == entry


@given(st.sampled_from(["resigned", "left", "disconnected"]))
def test_every_resign_reason_round_trips(reason: str) -> None:
    assert parse_entry(entry_text(Resigned(reason))) == Resigned(reason)


@pytest.mark.parametrize("text", ["", "two words", " QS>5"])
def test_texts_that_are_no_entry_are_refused(text: str) -> None:
    with pytest.raises(BadEntry):
        parse_entry(text)
