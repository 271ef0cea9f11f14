"""Unicode's confusables table (UTS #39), pinned in the repository.

``prototypes.txt`` maps each confusable character to its prototype, the string it stands
for when texts are compared for looks (UTS #39's skeleton). Account names are stored under a
skeleton built on it (:mod:`server.storage.name_skeleton`), so it must not change under a
deployment: any change re-keys account names (a layout step of
:mod:`server.storage.migration`), and tests/storage/test_name_skeleton.py records its hash.
``python -m server.storage.confusables`` derives it again (see its ``__main__``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Final

#: The pinned table, beside this module (package data).
TABLE: Final = "prototypes.txt"


def parse(text: str) -> dict[str, str]:
    """The mappings of a table in the format of ``prototypes.txt``: ``#`` comments, and lines
    ``<source> ; <prototype>`` of hexadecimal code points (one source, one or more in the
    prototype), as in Unicode's confusables.txt. Raises ValueError on any other line."""
    table: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, separator, prototype = data.partition(";")
        if not separator or len(source.split()) != 1 or not prototype.split():
            raise ValueError(f"line {number} of the confusables table is not '<source> ; <prototype>': {line!r}")
        table[chr(int(source, 16))] = "".join(chr(int(point, 16)) for point in prototype.split())
    return table


@functools.cache
def prototypes() -> Mapping[str, str]:
    """Each confusable character -> its prototype, from the pinned table (read once)."""
    return parse(resources.files(__name__).joinpath(TABLE).read_text(encoding="utf-8"))
