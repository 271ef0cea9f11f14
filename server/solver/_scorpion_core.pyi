"""Types of the Scorpion search's C core (``scorpion_core.c``); see that file's contract."""

from collections.abc import Callable

#: (source, count, target) of an engine move; the deal is (7, 3, 7).
EngineMove = tuple[int, int, int]

def search(
    columns: tuple[bytes, ...], stock: bytes, poll: Callable[[int, int], str], sleep_sets: bool = True, /
) -> tuple[str, int, list[EngineMove] | None]: ...
def is_lost(columns: tuple[bytes, ...], stock: bytes, start: int = -1, /) -> bool: ...
