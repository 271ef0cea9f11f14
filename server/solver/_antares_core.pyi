"""Types of the Antares position's C port (``antares_core.c``); see that file's contract."""

#: (piles, cells, home), as in server.solver.antares_core.
Position = tuple[tuple[bytes, ...], bytes, bytes]
#: (source, lead, target), as in server.solver.antares_core.
FastMove = tuple[int, int, int]

def moves(piles: tuple[bytes, ...], cells: bytes, home: bytes, /) -> list[FastMove]: ...
def play(position: Position, move: FastMove, mode: int, settled: bool = True) -> Position: ...
def estimate(position: Position, weights: tuple[int, int, int, int], /) -> int: ...
