"""Board geometry: hole numbering, adjacency, rotations and the camps of every seat.

Holes are numbered as SPEC §2 fixes (star: 0..120 row by row from the top tip; square:
row * 16 + col).  Internally every hole also has a *bit index* on a padded grid so that a set
of holes is one Python int and a step in a direction is a shift (the padding keeps a shift
from wrapping into the next row).  Bit order follows hole order, so iterating the bits of a
set yields holes in ascending order.

This module knows nothing of rules beyond where the camps are.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

STAR_ROW_WIDTHS = (1, 2, 3, 4, 13, 12, 11, 10, 9, 10, 11, 12, 13, 4, 3, 2, 1)
SQUARE_SIZE = 16
PAD = 2  # two holes of padding on every side: a hop moves two holes


@dataclass(frozen=True, eq=False)
class Geometry:
    """One board shape ("star" or "square") and everything derived from it."""

    kind: str
    num_holes: int
    row_widths: tuple[int, ...]
    coords: tuple[tuple[int, int], ...]  # hole -> (row, display column); star columns doubled
    grid: tuple[tuple[int, int], ...]  # hole -> (row, col) on a square grid keeping adjacency
    grid_shape: tuple[int, int]
    bit: tuple[int, ...]  # hole -> bit index on the padded grid
    hole_of_bit: tuple[int, ...]  # bit index -> hole, -1 off the board
    shifts: tuple[int, ...]  # bit offset of each direction
    neighbours: tuple[tuple[int, ...], ...]  # hole -> adjacent holes
    rotations: tuple[tuple[int, ...], ...]  # k -> (hole -> hole turned k steps clockwise)
    all_holes: int  # bit set of every hole

    @property
    def num_directions(self) -> int:
        return len(self.shifts)

    @property
    def num_rotations(self) -> int:
        return len(self.rotations)

    def mask(self, holes) -> int:
        """The bit set of an iterable of holes."""
        m = 0
        for h in holes:
            m |= 1 << self.bit[h]
        return m

    def holes(self, mask: int) -> list[int]:
        """The holes of a bit set, ascending."""
        out = []
        hob = self.hole_of_bit
        while mask:
            low = mask & -mask
            out.append(hob[low.bit_length() - 1])
            mask ^= low
        return out

    def distance(self, a: int, b: int) -> int:
        """Single steps from hole a to hole b on an empty board."""
        (ra, ca), (rb, cb) = self.grid[a], self.grid[b]
        dr, dc = rb - ra, cb - ca
        if self.kind == "square":
            return max(abs(dr), abs(dc))
        # axial coordinates with neighbour offsets (0,±1), (±1,±1), (±1,0): hex distance
        if (dr >= 0) == (dc >= 0):
            return max(abs(dr), abs(dc))
        return abs(dr) + abs(dc)

    def hole_at(self, row: int, col: int) -> int:
        """The hole at a display (row, column) or -1."""
        return self._by_coord.get((row, col), -1)

    @property
    def _by_coord(self) -> dict[tuple[int, int], int]:
        return _coord_index(self)


@cache
def _coord_index(geometry: Geometry) -> dict[tuple[int, int], int]:
    return {rc: h for h, rc in enumerate(geometry.coords)}


def _build(kind, row_widths, coords, grid, grid_shape, directions, rotate) -> Geometry:
    rows, cols = grid_shape
    width = cols + 2 * PAD
    bits = tuple((r + PAD) * width + (c + PAD) for r, c in grid)
    size = (rows + 2 * PAD) * width
    hole_of_bit = [-1] * size
    for h, b in enumerate(bits):
        hole_of_bit[b] = h
    assert all(b1 < b2 for b1, b2 in zip(bits, bits[1:])), "bit order must follow hole order"
    shifts = tuple(dr * width + dc for dr, dc in directions)
    neighbours = tuple(
        tuple(hole_of_bit[b + s] for s in shifts if hole_of_bit[b + s] >= 0) for b in bits
    )
    n = len(coords)
    turn = tuple(rotate(h) for h in range(n))
    rotations = [tuple(range(n))]
    while True:
        nxt = tuple(turn[h] for h in rotations[-1])
        if nxt == rotations[0]:
            break
        rotations.append(nxt)
    all_holes = 0
    for b in bits:
        all_holes |= 1 << b
    return Geometry(
        kind=kind,
        num_holes=n,
        row_widths=tuple(row_widths),
        coords=tuple(coords),
        grid=tuple(grid),
        grid_shape=grid_shape,
        bit=bits,
        hole_of_bit=tuple(hole_of_bit),
        shifts=shifts,
        neighbours=neighbours,
        rotations=tuple(rotations),
        all_holes=all_holes,
    )


@cache
def star() -> Geometry:
    """The 121-hole star.  Display columns are doubled (neighbours in a row are 2 apart)."""
    coords: list[tuple[int, int]] = []
    for r, w in enumerate(STAR_ROW_WIDTHS):
        coords.extend((r, 2 * i - (w - 1)) for i in range(w))
    # axial grid: row r, col q = (x + r) / 2 + 4, a 17 x 17 square; hex neighbours are the
    # offsets (0, +-1), (+1, +1), (+1, 0), (-1, -1), (-1, 0)
    grid = [(r, (x + r) // 2 + 4) for r, x in coords]
    directions = ((0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0))  # E SE SW W NW NE
    index = {rc: h for h, rc in enumerate(coords)}

    def rotate(h: int) -> int:  # 60 degrees clockwise on screen about the centre (row 8)
        r, x = coords[h]
        dy = r - 8
        return index[(8 + (dy + x) // 2, (x - 3 * dy) // 2)]

    return _build("star", STAR_ROW_WIDTHS, coords, grid, (17, 17), directions, rotate)


@cache
def square() -> Geometry:
    """The 16 x 16 Halma board; 8 directions."""
    coords = [(r, c) for r in range(SQUARE_SIZE) for c in range(SQUARE_SIZE)]
    directions = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))

    def rotate(h: int) -> int:  # 90 degrees clockwise on screen
        r, c = divmod(h, SQUARE_SIZE)
        return c * SQUARE_SIZE + (SQUARE_SIZE - 1 - r)

    return _build("square", (SQUARE_SIZE,) * SQUARE_SIZE, coords, coords, (16, 16), directions, rotate)


# --- camps ---------------------------------------------------------------------------------


@cache
def star_point(k: int) -> tuple[int, ...]:
    """The 10 holes of star point k (0 bottom, then clockwise: 1 lower-left ... 5 lower-right)."""
    g = star()
    bottom = tuple(range(111, 121))
    return tuple(sorted(g.rotations[k][h] for h in bottom))


@cache
def star_tip(k: int) -> int:
    """The hole of point k farthest from the centre."""
    return star().rotations[k][120]


@cache
def diamond_camp(k: int) -> tuple[int, ...]:
    """Point k plus the 5-hole hexagon edge row next to it (15 holes)."""
    g = star()
    bottom_edge = tuple(range(98, 111))[4:9]  # row 12: the middle 5 of 13 holes
    return tuple(sorted(set(star_point(k)) | {g.rotations[k][h] for h in bottom_edge}))


@cache
def square_camp(corner: int, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Corner staircase (0 bottom-right, then clockwise); sizes counted from the corner row."""
    g = square()
    bottom_right = [
        (SQUARE_SIZE - 1 - i) * SQUARE_SIZE + (SQUARE_SIZE - 1 - j)
        for i, w in enumerate(sizes)
        for j in range(w)
    ]
    return tuple(sorted(g.rotations[corner][h] for h in bottom_right))
