"""Account names: the rule a name must pass (``clean_name``), the skeleton names are unique
under (``name_skeleton``), and the confusables table pinned in the repository it is built on."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import unicodedata
from importlib import resources

import pytest

from server.features.sessions import MAX_MARKS, InvalidName, clean_name
from server.storage.confusables import TABLE, parse, prototypes
from server.storage.confusables.__main__ import SOURCE, UNICODE, derive, installed_json, render
from server.storage.name_skeleton import is_default_ignorable, name_skeleton

#: The pinned table's sha256. Account names are stored under skeletons built on it: a new
#: table needs a layout step that re-keys them (server/storage/migration.py), then this hash.
TABLE_SHA256 = "7490629969f90657cb365f971d642327aff59232a9f024b2a5244b56409f3e87"


def table_text() -> str:
    return resources.files("server.storage.confusables").joinpath(TABLE).read_text(encoding="utf-8")


# -- the rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "culprit"),
    [
        ("\u3164Ann", "U+3164"),  # Hangul filler before
        ("Ann\u3164", "U+3164"),  # and after
        ("\u2800Ann", "U+2800"),  # Braille blank before
        ("Ann\u2800", "U+2800"),  # and after
        ("A\u115fnn", "U+115F"),  # Hangul choseong filler
        ("A\u1160nn", "U+1160"),  # Hangul jungseong filler
        ("A\u034fnn", "U+034F"),  # combining grapheme joiner
        ("\u3164\u3164\u3164", "U+3164"),  # nothing but fillers
        ("\u115f\u1160", "U+115F"),
        ("\uffa0Ann", "U+FFA0"),  # half-width Hangul filler
        ("Ann\u200b", "U+200B"),  # zero-width space
        ("An\u200dn", "U+200D"),  # zero-width joiner
        ("Ann\u00ad", "U+00AD"),  # soft hyphen
        ("Ann\ufe0f", "U+FE0F"),  # variation selector
        ("Ann\U000e0041", "U+E0041"),  # tag
        ("Ann\u202e", "U+202E"),  # right-to-left override
        ("A\u00a0nn", "U+00A0"),  # no-break space
        ("A\u3000nn", "U+3000"),  # ideographic space
        ("A\u2028nn", "U+2028"),  # line separator
        ("Ann\ue000", "U+E000"),  # private use
        ("Ann\U0001fff0", "U+1FFF0"),  # unassigned
        ("Ann\x07", "U+0007"),
        ("Tab\tBed", "U+0009"),
    ],
)
def test_invisible_and_blank_characters_are_refused_by_code_point(name: str, culprit: str) -> None:
    with pytest.raises(InvalidName, match=re.escape(culprit)):
        clean_name(name)


def test_combining_marks_are_capped_and_need_a_letter() -> None:
    with pytest.raises(InvalidName, match="U\\+0301"):
        clean_name("x" + "\u0301" * 20)
    marks = "\u0301\u0302\u0303\u0304\u0305\u0306"
    assert clean_name("x" + marks[:MAX_MARKS]) == "x" + marks[:MAX_MARKS]
    with pytest.raises(InvalidName, match="U\\+0305"):
        clean_name("x" + marks[: MAX_MARKS + 1])
    for name in ("\u0301Ann", "Ann \u0301x"):
        with pytest.raises(InvalidName, match="U\\+0301"):
            clean_name(name)


def test_spaces_are_single_and_inside() -> None:
    assert clean_name("  Anne Marie  ") == "Anne Marie"
    with pytest.raises(InvalidName, match="two spaces"):
        clean_name("Anne  Marie")
    for empty in ("", "   "):
        with pytest.raises(InvalidName, match="visible"):
            clean_name(empty)
    assert clean_name("A" * 24) == "A" * 24
    with pytest.raises(InvalidName, match="at most 24"):
        clean_name("A" * 25)


@pytest.mark.parametrize(
    "name",
    ["Zoë", "Nguyễn Văn", "Łukasz", "José", "O'Brien", "李小龍", "Ñandú", "ကျော်", "हिन्दी", "Анна"],
)
def test_names_of_real_people_pass(name: str) -> None:
    assert clean_name(name) == name
    # Decomposed input (as some keyboards send it) comes out composed.
    assert clean_name(unicodedata.normalize("NFD", name)) == name


def test_default_ignorable_code_points() -> None:
    for point in (0xAD, 0x34F, 0x115F, 0x1160, 0x17B5, 0x180E, 0x200B, 0x202C, 0x2064, 0x3164, 0xFE0F, 0xFEFF):
        assert is_default_ignorable(chr(point)), hex(point)
    for point in (0xFFA0, 0x1BCA3, 0x1D17A, 0xE0000, 0xE0FFF):
        assert is_default_ignorable(chr(point)), hex(point)
    for char in ("a", " ", "\u00ac", "\u2800", "\u0301", "\U000e1000"):
        assert not is_default_ignorable(char), char


# -- the skeleton --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ("Bob", "BOB", "bob", "B0b", "BoB", "\uff22\uff4f\uff42"),  # case, digit zero, full width
        ("lil", "Iil", "iil", "LIL", "1il", "|il", "l1I"),  # l and capital I look alike
        ("Ann", "ANN", "\u0410nn", "\uff21nn", "A nn"),  # Cyrillic capital A, full width
        ("paypal", "p\u0430yp\u0430l"),  # Cyrillic small a
        ("Sam", "Sarn", "SAM"),  # rn looks like m
        ("Iris", "iris", "lris"),
        ("\u00ccsa", "\u00ecsa", "I\u0300sa"),  # Ì: a capital I with a grave, composed or not
    ],
)
def test_look_alikes_and_case_variants_collide(names: tuple[str, ...]) -> None:
    assert len({name_skeleton(name) for name in names}) == 1, [name_skeleton(name) for name in names]


def test_invisible_characters_make_no_other_name() -> None:
    # The rule refuses them; a login typed with them still finds the account.
    for name in ("Ann\u200b", "A\u034fnn", "\u3164Ann", "An\u00adn"):
        assert name_skeleton(name) == name_skeleton("Ann"), name


def test_different_names_stay_different() -> None:
    names = ["Bob", "Rob", "Ann", "Anna", "Tony", "Rony", "Zoe", "Zoë", "Sam", "Sara", "Dan", "Don", "Eve", "Ava"]
    assert len({name_skeleton(name) for name in names}) == len(names)


# -- the pinned table ----------------------------------------------------------------------


def test_the_confusables_table_is_pinned() -> None:
    """A changed table changes skeletons, and accounts stored under the old ones go missing."""
    digest = hashlib.sha256(table_text().encode("utf-8")).hexdigest()
    assert digest == TABLE_SHA256, "the pinned confusables table changed: re-key account names (migration.py)"


def test_the_table_names_its_unicode_version_and_source() -> None:
    header = [line for line in table_text().splitlines() if line.startswith("#")]
    assert f"Unicode {UNICODE}" in header[0]
    assert SOURCE in header[1]


def test_the_table_has_the_shape_of_confusables_txt() -> None:
    table = prototypes()
    assert len(table) == 6307
    assert all(len(source) == 1 for source in table)
    assert not [char for prototype in table.values() for char in prototype if char in table]  # maps to fixed points
    assert (table["I"], table["0"], table["m"], table["\u0430"]) == ("l", "O", "rn", "a")
    with pytest.raises(ValueError, match="line 2"):
        parse("0049 ; 006C\n0049\n")


@pytest.mark.skipif(importlib.util.find_spec("confusable_homoglyphs") is None, reason="confusable-homoglyphs is absent")
def test_the_table_is_derived_from_the_installed_package() -> None:
    links = json.loads(installed_json().read_text(encoding="utf-8"))
    assert render(derive(links)) == table_text()


def test_the_skeleton_loads_no_third_party_table() -> None:
    code = (
        "import sys\n"
        "from server.storage.name_skeleton import name_skeleton\n"
        "assert name_skeleton('Iil') == name_skeleton('lil')\n"
        "print(sorted(name for name in sys.modules if 'confusable' in name))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['server.storage.confusables']"
