"""Derives the pinned confusables table from the confusable-homoglyphs package:

    pip install confusable-homoglyphs==3.3.1
    python -m server.storage.confusables > server/storage/confusables/prototypes.txt

``python -m server.storage.confusables PATH`` reads another confusables.json (the header
still names :data:`SOURCE` and :data:`UNICODE`: edit them for another release).

The package keeps each line ``source ; prototype`` of Unicode's confusables.txt as two
glyphs linked both ways, and this recovers the direction. A source is one character mapped
once, and no prototype is a source: so a glyph of several characters, or one linked to
several others, is a prototype, and a pair linked to nothing else is in the order of the
package's file, which is confusables.txt's (the source first).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Final

SOURCE: Final = "confusable-homoglyphs 3.3.1"
#: The package's data names no version. Its Scripts data of the same build is Unicode 15.1.0,
#: which was the "latest" it fetches from September 2023 to September 2024.
UNICODE: Final = "15.1.0"
HEADER: Final = f"""\
# Unicode's confusables (UTS #39 confusables.txt, Unicode {UNICODE}): <source> ; <prototype>, code points in hex.
# Derived from confusables.json of {SOURCE} by `python -m server.storage.confusables`.
# Pinned: account names are keyed by skeletons built on this table (server/storage/name_skeleton.py),
# so a change re-keys them (a layout step in server/storage/migration.py).
"""
# The package writes right-to-left glyphs between LEFT-TO-RIGHT MARKs.
_MARKS: Final = "\u200e\u200f"


def installed_json() -> Path:
    """The confusables.json of the installed package (found without importing it)."""
    spec = importlib.util.find_spec("confusable_homoglyphs")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("confusable-homoglyphs is not installed: pip install it, or name a confusables.json")
    return Path(next(iter(spec.submodule_search_locations))) / "confusables.json"


def derive(links: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    """Each source -> its prototype, from the package's table ``links`` (glyph -> the glyphs
    linked to it, ``[{"c": glyph, "n": name}, ...]``). Raises ValueError where the links do
    not have the shape of confusables.txt (see the module docstring)."""
    neighbours = {key.strip(_MARKS): [link["c"].strip(_MARKS) for link in linked] for key, linked in links.items()}
    order = {glyph: index for index, glyph in enumerate(neighbours)}

    def is_prototype(glyph: str) -> bool:
        return len(glyph) > 1 or len(neighbours[glyph]) > 1

    mapping: dict[str, str] = {}
    for glyph, others in neighbours.items():
        for other in others:
            if is_prototype(glyph) == is_prototype(other):
                if is_prototype(glyph):
                    raise ValueError(f"{glyph!r} and {other!r} are linked, and both are prototypes")
                source, prototype = (glyph, other) if order[glyph] < order[other] else (other, glyph)
            else:
                source, prototype = (other, glyph) if is_prototype(glyph) else (glyph, other)
            if mapping.setdefault(source, prototype) != prototype:
                raise ValueError(f"U+{ord(source):04X} has two prototypes")
    if any(char in mapping for prototype in mapping.values() for char in prototype):
        raise ValueError("a prototype holds a source: the table would not map to a fixed point")
    return mapping


def render(mapping: dict[str, str]) -> str:
    """The text of the pinned table: :data:`HEADER`, then one line a source, by code point."""
    lines = [
        f"{ord(source):04X} ; {' '.join(f'{ord(char):04X}' for char in mapping[source])}\n"
        for source in sorted(mapping)
    ]
    return HEADER + "".join(lines)


def main(argv: list[str]) -> None:
    path = Path(argv[1]) if len(argv) > 1 else installed_json()
    links: dict[str, list[dict[str, str]]] = json.loads(path.read_text(encoding="utf-8"))
    sys.stdout.write(render(derive(links)))


if __name__ == "__main__":
    main(sys.argv)
