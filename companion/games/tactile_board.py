"""TacTile's board: the 6x6 grid, tile names, home corners, modes and score tiles.

Tiles are named like a chess board so people and commands can say them
short: columns ``a``-``f`` left to right, rows ``1``-``6`` top to bottom, so
``a1`` is the top-left corner. Internally a tile is a ``(row, col)`` pair,
both 0-based.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, Mapping, Sequence

from core.errors import InputError

SIZE = 6
COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
#: One letter per colour for compact layouts ("h" marks a home corner).
COLOUR_LETTERS: dict[str, str] = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
#: The four corners in clockwise order (top-left first), the way seats go "to the left".
CORNERS: tuple[tuple[int, int], ...] = ((0, 0), (0, SIZE - 1), (SIZE - 1, SIZE - 1), (SIZE - 1, 0))
#: Which corner each seat takes, by player count: two players sit diagonally.
SEAT_CORNERS: dict[int, tuple[int, ...]] = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}
MODES: dict[int, str] = {2: "showdown", 3: "brawl", 4: "team"}
DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, 0), (0, 1), (1, 0), (0, -1))

Tile = tuple[int, int]


def tile_name(tile: Tile) -> str:
    """``(0, 0)`` -> ``"a1"``."""
    return f"{'abcdef'[tile[1]]}{tile[0] + 1}"


def parse_tile(value: Any, key: str = "to") -> Tile:
    """A tile from ``"c4"`` or ``[row, col]`` (0-based); InputError naming ``key`` otherwise."""
    if isinstance(value, str) and len(value) == 2 and value[0].lower() in "abcdef" and value[1] in "123456":
        return (int(value[1]) - 1, "abcdef".index(value[0].lower()))
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < SIZE for v in value)
    ):
        return (value[0], value[1])
    raise InputError(f"'{key}' must be a tile like \"c4\" (columns a-f, rows 1-6) or [row, col] from 0 to 5, got {value!r}")


def is_corner(tile: Tile) -> bool:
    """True for the four home-tile corners."""
    return tile in CORNERS


def neighbours(tile: Tile) -> Iterator[Tile]:
    """The orthogonally adjacent tiles that are on the board."""
    for dr, dc in DIRECTIONS:
        r, c = tile[0] + dr, tile[1] + dc
        if 0 <= r < SIZE and 0 <= c < SIZE:
            yield (r, c)


def adjacent(a: Tile, b: Tile) -> bool:
    """True when ``b`` is one step up, down, left or right of ``a``."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def coloured_tiles() -> list[Tile]:
    """The 32 non-corner tiles in reading order."""
    return [(r, c) for r in range(SIZE) for c in range(SIZE) if not is_corner((r, c))]


def check_tile_counts(counts: Any, key: str = "tiles") -> dict[str, int]:
    """Validate a colour -> count mapping that must fill the 32 coloured tiles."""
    if not isinstance(counts, Mapping) or set(counts) != set(COLOURS):
        raise InputError(f"'{key}' must give a count for each of {', '.join(COLOURS)}, got {counts!r}")
    for colour, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"'{key}.{colour}' must be a whole number of 0 or more, got {n!r}")
    if sum(counts.values()) != len(coloured_tiles()):
        raise InputError(f"'{key}' must add up to {len(coloured_tiles())} tiles, got {sum(counts.values())}")
    return {c: counts[c] for c in COLOURS}


def shuffled_layout(counts: Mapping[str, int], seed: int) -> list[list[str | None]]:
    """A random layout (corners None) with ``counts`` tiles of each colour, from ``seed``."""
    bag = [colour for colour in COLOURS for _ in range(counts[colour])]
    random.Random(seed).shuffle(bag)
    rows: list[list[str | None]] = [[None] * SIZE for _ in range(SIZE)]
    for tile, colour in zip(coloured_tiles(), bag):
        rows[tile[0]][tile[1]] = colour
    return rows


def parse_layout(rows: Any, counts: Mapping[str, int]) -> list[list[str | None]]:
    """A full layout from six strings like ``"hrygbh"`` (``h`` at the corners) or 6x6 colour names.

    The colour counts must match ``counts`` (the tiles the table actually dealt).
    """
    if not isinstance(rows, list) or len(rows) != SIZE:
        raise InputError(f"'rows' must be {SIZE} rows of {SIZE} tiles, e.g. \"hrygbh\", got {rows!r}")
    layout: list[list[str | None]] = []
    for r, row in enumerate(rows):
        cells = list(row) if isinstance(row, str) else row
        if not isinstance(cells, list) or len(cells) != SIZE:
            raise InputError(f"row {r + 1} must have {SIZE} tiles, got {row!r}")
        out: list[str | None] = []
        for c, cell in enumerate(cells):
            tile = (r, c)
            name = COLOUR_LETTERS.get(cell, cell) if isinstance(cell, str) else cell
            if is_corner(tile):
                if cell not in ("h", "home", None):
                    raise InputError(f"{tile_name(tile)} is a home corner: write 'h' there, got {cell!r}")
                out.append(None)
            elif name not in COLOURS:
                raise InputError(f"{tile_name(tile)} must be one of r, y, g, b (or {', '.join(COLOURS)}), got {cell!r}")
            else:
                out.append(name)
        layout.append(out)
    have = {colour: sum(row.count(colour) for row in layout) for colour in COLOURS}
    if have != dict(counts):
        raise InputError(f"the layout has {have} tiles but the game is set for {dict(counts)}")
    return layout


def seat_corners(count: int) -> tuple[Tile, ...]:
    """The home corner of each seat, in seat order."""
    return tuple(CORNERS[i] for i in SEAT_CORNERS[count])


def score_corners(count: int, seat: int) -> tuple[Tile, ...]:
    """The corners where seat ``seat`` scores, by mode.

    Showdown and Team Battle: the diagonal corner (the opponent's, or the
    ally's home). Brawl: the two corners sharing a board edge with yours.
    """
    index = SEAT_CORNERS[count][seat]
    if count == 3:
        return (CORNERS[(index + 3) % 4], CORNERS[(index + 1) % 4])
    return (CORNERS[(index + 2) % 4],)


def ally_seat(count: int, seat: int) -> int | None:
    """In Team Battle the player diagonal to you (two seats on) is your ally."""
    return (seat + 2) % 4 if count == 4 else None


def layout_rows(layout: Sequence[Sequence[str | None]]) -> list[str]:
    """A layout as six short strings, e.g. ``"hrygbh"`` (``.`` for a tile not yet placed)."""
    letters = {v: k for k, v in COLOUR_LETTERS.items()}
    return [
        "".join("h" if is_corner((r, c)) else letters.get(layout[r][c] or "", ".") for c in range(SIZE))
        for r in range(SIZE)
    ]
