"""The normalised form of an account name: names equal under it are one name.

Names collide when they look alike or differ only in case. :func:`name_skeleton` is:

1. UTS #39's skeleton: NFD, default-ignorable code points removed, every character replaced
   by its prototype in Unicode's confusables table (pinned in the repository:
   :mod:`server.storage.confusables`), NFD again. Look-alikes within and across scripts
   (Cyrillic ``\u0430`` and Latin ``a``; ``I``, ``l`` and ``1``; ``0`` and ``O``; ``rn`` and
   ``m``) get one skeleton. This comes before case folding, which would turn ``I`` into
   ``i`` and lose its likeness to ``l``.
2. Case and compatibility folding (NFKC, case fold, NFKC), so ``Bob``, ``BOB`` and
   full-width ``\uff22\uff4f\uff42`` collide; then the skeleton again, for the look-alikes
   of the folded letters (``B0b`` -> ``BOb`` -> ``bob``).
3. ``i`` as ``l``: ``Iil`` is a look-alike of ``lil`` and a case variant of ``iil``, so the
   three are one name only if ``i`` and ``l`` are one letter. No other ASCII letter needs
   this. In other scripts a capital may look like one Latin letter and its small letter
   like another (Greek ``\u039d`` like ``N``, ``\u03bd`` like ``v``); such case variants
   keep apart, because joining every such pair chains most of the alphabet into one letter.
4. White space removed.

Apart from those case variants it errs towards merging: more names collide than strictly
look alike. Account names are stored under it, so a change here re-keys them (a layout step
in migration.py).
"""

from __future__ import annotations

import bisect
import unicodedata
from typing import Final

from server.storage.confusables import prototypes

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1): code points that
# render as nothing when not supported. Inclusive ranges, sorted.
_IGNORABLE: Final = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_IGNORABLE_STARTS: Final = tuple(start for start, _ in _IGNORABLE)


def is_default_ignorable(char: str) -> bool:
    """Whether ``char`` (one character) has Unicode's Default_Ignorable_Code_Point property."""
    point = ord(char)
    index = bisect.bisect_right(_IGNORABLE_STARTS, point) - 1
    return index >= 0 and point <= _IGNORABLE[index][1]


def _skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text``."""
    table = prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    mapped = "".join(table.get(char, char) for char in decomposed if not is_default_ignorable(char))
    return unicodedata.normalize("NFD", mapped)


def name_skeleton(name: str) -> str:
    """The key ``name`` is unique under (see the module docstring): defined for any string."""
    text = _skeleton(name)
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = _skeleton(text).replace("i", "l")
    return "".join(text.split())
