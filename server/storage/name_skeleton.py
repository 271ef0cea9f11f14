"""The normalised form of an account name: names equal under it are one name.

Two names collide when they differ only in case, in Unicode compatibility forms (full-width
letters, ligatures) or in look-alike characters across scripts (Latin ``a`` and Cyrillic
``\u0430``, ``l`` and ``1``). The look-alikes are Unicode's confusables table as shipped by
the ``confusable-homoglyphs`` package: every character is replaced by the smallest code
point of its class of confusables (single characters joined transitively), after NFKC and
case folding (case first, so ``Bob`` and ``BOB`` collide). This over-merges a little (more
names collide), never the other way.
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs.utils import load  # type: ignore[import-untyped]

# The table writes right-to-left characters between LEFT-TO-RIGHT MARKs.
_MARKS = "\u200e\u200f"


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character -> the prototype of its class (built once, ~0.2 s)."""
    parent: dict[str, str] = {}

    def find(char: str) -> str:
        root = char
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(char, char) != root:  # path compression
            parent[char], char = root, parent[char]
        return root

    for char, glyphs in load("confusables.json").items():
        for glyph in glyphs:
            other = str(glyph["c"]).strip(_MARKS)
            if len(char) == 1 and len(other) == 1:
                a, b = find(char), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {char: find(char) for char in parent}


def _fold(text: str) -> str:
    table = _prototypes()
    return "".join(table.get(char, char) for char in text)


def name_skeleton(name: str) -> str:
    """The key ``name`` is unique under: NFKC, case folded, NFKC, confusables folded (UTS #39's
    skeleton of the case-folded name), without white space."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return "".join(_fold(text).split())
