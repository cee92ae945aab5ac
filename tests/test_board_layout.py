"""Board geometry, camps, seat layouts (SPEC §1-2) and the assignment solver behind the remaining
distance, checked against definitions written independently of ``board.py``/``layout.py``."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import deque

import numpy as np
import pytest
from engine_helpers import position

from halma_env import Game
from halma_env.assignment import min_cost_assignment
from halma_env.board import Geometry, diamond_camp, square, square_camp, star, star_point, star_tip
from halma_env.layout import layout

SQ = 16  # halma16: hole = row * 16 + col
STAR_WIDTHS = (1, 2, 3, 4, 13, 12, 11, 10, 9, 10, 11, 12, 13, 4, 3, 2, 1)
# display (row, column) offsets of the directions, in the order of Geometry.shifts
STAR_DISPLAY_DIRS = ((0, 2), (1, 1), (1, -1), (0, -2), (-1, -1), (-1, 1))  # E SE SW W NW NE
SQUARE_DIRS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))  # E SE S SW W NW N NE


def sq(r: int, c: int) -> int:
    return r * SQ + c


def star_rows() -> list[list[int]]:
    """The holes of each star row, by SPEC §2 numbering."""
    rows, h = [], 0
    for w in STAR_WIDTHS:
        rows.append(list(range(h, h + w)))
        h += w
    return rows


def bfs_distances(g: Geometry, src: int) -> list[int]:
    dist = [-1] * g.num_holes
    dist[src] = 0
    todo = deque([src])
    while todo:
        h = todo.popleft()
        for n in g.neighbours[h]:
            if dist[n] < 0:
                dist[n] = dist[h] + 1
                todo.append(n)
    return dist


# --- geometry -----------------------------------------------------------------------------------


def test_star_numbering_follows_spec() -> None:
    """121 holes in rows of 1,2,3,4,13,...; display columns doubled and centred; 0 top, 60 centre."""
    g = star()
    assert (g.kind, g.num_holes, g.row_widths) == ("star", 121, STAR_WIDTHS)
    for r, holes in enumerate(star_rows()):
        w = len(holes)
        assert [g.coords[h] for h in holes] == [(r, x) for x in range(-(w - 1), w, 2)]
    assert g.coords[0] == (0, 0) and g.coords[60] == (8, 0) and g.coords[120] == (16, 0)


def test_square_numbering_follows_spec() -> None:
    g = square()
    assert (g.kind, g.num_holes, g.row_widths) == ("square", 256, (16,) * 16)
    assert g.coords == tuple((r, c) for r in range(16) for c in range(16))
    assert g.grid == g.coords and g.grid_shape == (16, 16)


def test_star_grid_is_a_17_by_17_axial_grid() -> None:
    """The observation grid: distinct cells inside 17 x 17, row kept, column (x + r) / 2 + 4."""
    g = star()
    assert g.grid_shape == (17, 17)
    assert len(set(g.grid)) == 121
    assert all(0 <= r < 17 and 0 <= c < 17 for r, c in g.grid)
    assert g.grid[0] == (0, 4) and g.grid[10] == (4, 0) and g.grid[60] == (8, 8) and g.grid[120] == (16, 12)
    assert all(g.grid[h][0] == g.coords[h][0] for h in range(121))


def test_direction_counts_and_rotation_counts() -> None:
    assert (star().num_directions, star().num_rotations) == (6, 6)
    assert (square().num_directions, square().num_rotations) == (8, 4)


@pytest.mark.parametrize("kind", ["star", "square"])
def test_steps_and_hops_by_shift_land_where_the_direction_points(kind: str) -> None:
    """A shift of one direction is one step that way, two shifts a hop's landing; off the board
    it hits padding (-1), never wraps into another row; directions in the documented order."""
    g = star() if kind == "star" else square()
    dirs = STAR_DISPLAY_DIRS if kind == "star" else SQUARE_DIRS
    for h in range(g.num_holes):
        r, x = g.coords[h]
        for (dr, dx), s in zip(dirs, g.shifts, strict=True):
            for k in (1, 2):
                assert g.hole_of_bit[g.bit[h] + k * s] == g.hole_at(r + k * dr, x + k * dx), (h, dr, dx, k)


@pytest.mark.parametrize("kind", ["star", "square"])
def test_neighbours_are_the_adjacent_holes(kind: str) -> None:
    """Hex neighbours on the star (display offsets (0, +-2), (+-1, +-1)); the 8 king moves on the square."""
    g = star() if kind == "star" else square()
    dirs = STAR_DISPLAY_DIRS if kind == "star" else SQUARE_DIRS
    for h in range(g.num_holes):
        r, x = g.coords[h]
        expected = {g.hole_at(r + dr, x + dx) for dr, dx in dirs} - {-1}
        assert len(g.neighbours[h]) == len(expected) and set(g.neighbours[h]) == expected, h
    if kind == "star":
        assert set(g.neighbours[0]) == {1, 2} and set(g.neighbours[1]) == {0, 2, 3, 4}
        assert len(g.neighbours[60]) == 6
    else:
        assert set(g.neighbours[0]) == {1, 16, 17} and len(g.neighbours[sq(5, 5)]) == 8


def test_hole_at_and_off_board() -> None:
    g = star()
    assert all(g.hole_at(*g.coords[h]) == h for h in range(121))
    assert (g.hole_at(0, 0), g.hole_at(8, 0), g.hole_at(16, 0)) == (0, 60, 120)
    assert g.hole_at(0, 1) == -1 and g.hole_at(0, 2) == -1 and g.hole_at(-1, 0) == -1 and g.hole_at(17, 0) == -1
    s = square()
    assert s.hole_at(3, 7) == sq(3, 7) and s.hole_at(0, 0) == 0
    assert s.hole_at(16, 0) == -1 and s.hole_at(0, -1) == -1


@pytest.mark.parametrize("kind", ["star", "square"])
def test_mask_and_holes_round_trip(kind: str) -> None:
    """A set of holes is one int with one bit per hole; ``holes`` lists it back ascending."""
    g = star() if kind == "star" else square()
    assert g.mask([]) == 0 and g.holes(0) == []
    for h in (0, 1, 60, g.num_holes - 1):
        assert g.mask([h]) == 1 << g.bit[h] and g.holes(1 << g.bit[h]) == [h]
    assert g.holes(g.mask([9, 0, 5, 9, g.num_holes - 1])) == [0, 5, 9, g.num_holes - 1]
    assert g.all_holes == g.mask(range(g.num_holes))
    assert g.all_holes.bit_count() == g.num_holes and g.holes(g.all_holes) == list(range(g.num_holes))
    assert all(g.hole_of_bit[g.bit[h]] == h for h in range(g.num_holes))
    assert list(g.bit) == sorted(g.bit), "bit order follows hole order"


@pytest.mark.parametrize("kind", ["star", "square"])
def test_distance_is_the_number_of_single_steps(kind: str) -> None:
    """Every pair: ``distance`` equals a breadth-first search over the neighbours (empty board)."""
    g = star() if kind == "star" else square()
    sources = range(g.num_holes) if kind == "star" else range(0, g.num_holes, 7)
    for a in sources:
        dist = bfs_distances(g, a)
        assert [g.distance(a, b) for b in range(g.num_holes)] == dist, a
    assert [star().distance(120, t) for t in (0, 98, 10, 110)] == [16, 8, 12, 8] and star().distance(10, 110) == 16
    assert square().distance(sq(0, 0), sq(15, 15)) == 15 and square().distance(sq(0, 3), sq(2, 0)) == 3


def test_geometry_is_immutable() -> None:
    """``star()``/``square()`` are shared by every game: they cannot be changed in place."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        star().kind = "square"  # type: ignore[misc]
    assert star() is star() and square() is square()


def test_star_rotations_turn_clockwise_on_screen() -> None:
    """Six rotations: 0 is the identity, k is k times the 60-degree turn; the turn keeps adjacency,
    fixes the centre and takes each tip to the next point clockwise (bottom -> lower-left -> ...)."""
    g = star()
    assert g.rotations[0] == tuple(range(121))
    turn = g.rotations[1]
    assert sorted(turn) == list(range(121)) and turn[60] == 60
    for h in range(121):
        assert {turn[n] for n in g.neighbours[h]} == set(g.neighbours[turn[h]])
    for k in range(1, 6):
        assert g.rotations[k] == tuple(turn[h] for h in g.rotations[k - 1])
    assert tuple(turn[h] for h in g.rotations[5]) == g.rotations[0]
    tips = (120, 98, 10, 0, 22, 110)  # bottom, lower-left, upper-left, top, upper-right, lower-right
    assert [turn[t] for t in tips] == [*tips[1:], tips[0]]
    assert tuple(star_tip(k) for k in range(6)) == tips


def test_square_rotations_turn_clockwise_on_screen() -> None:
    """Four rotations; the turn takes (row, col) to (col, 15 - row): bottom-right -> bottom-left -> ..."""
    g = square()
    assert g.rotations[0] == tuple(range(256))
    for r, c in itertools.product(range(16), repeat=2):
        assert g.rotations[1][sq(r, c)] == sq(c, 15 - r)
    for k in range(1, 4):
        assert g.rotations[k] == tuple(g.rotations[1][h] for h in g.rotations[k - 1])
    corners = (sq(15, 15), sq(15, 0), sq(0, 0), sq(0, 15))
    assert [g.rotations[1][c] for c in corners] == [*corners[1:], corners[0]]


# --- camps --------------------------------------------------------------------------------------


def expected_star_point(k: int) -> tuple[int, ...]:
    """SPEC §2: 0 bottom, 1 lower-left, 2 upper-left, 3 top, 4 upper-right, 5 lower-right."""
    rows = star_rows()
    if k == 0:
        return tuple(h for r in range(13, 17) for h in rows[r])
    if k == 3:
        return tuple(h for r in range(4) for h in rows[r])
    upper = k in (2, 4)
    rr = range(4, 8) if upper else range(9, 13)
    out = []
    for r in rr:
        n = 8 - r if upper else r - 8  # 4, 3, 2, 1 holes on the upper points' rows; 1..4 below
        out.extend(rows[r][:n] if k in (1, 2) else rows[r][-n:])
    return tuple(sorted(out))


@pytest.mark.parametrize("k", range(6))
def test_star_points(k: int) -> None:
    assert star_point(k) == expected_star_point(k)
    assert star_tip(k) in star_point(k)
    assert max(star().distance(60, h) for h in star_point(k)) == star().distance(60, star_tip(k)) == 8


def test_star_points_and_hexagon_partition_the_board() -> None:
    points = [set(star_point(k)) for k in range(6)]
    assert all(len(p) == 10 for p in points)
    assert len(set().union(*points)) == 60, "the six points are disjoint"
    assert star_point(0) == tuple(range(111, 121)) and star_point(3) == tuple(range(10))


@pytest.mark.parametrize("k", range(6))
def test_diamond_camp_is_the_point_and_its_hexagon_edge(k: int) -> None:
    """15 holes: point k plus the 5 hexagon holes next to it (SPEC §1 diamond)."""
    g = star()
    in_points = set().union(*(star_point(q) for q in range(6)))
    edge = {n for h in star_point(k) for n in g.neighbours[h] if n not in in_points}
    assert len(edge) == 5
    assert diamond_camp(k) == tuple(sorted(set(star_point(k)) | edge))
    if k == 0:
        assert diamond_camp(0) == (102, 103, 104, 105, 106, *range(111, 121))
    # the corner holes of the edge row are shared with the neighbouring camps
    assert len(set(diamond_camp(k)) & set(diamond_camp((k + 1) % 6))) == 1
    assert not set(diamond_camp(k)) & set(diamond_camp((k + 3) % 6))


@pytest.mark.parametrize(("sizes", "corner"), list(itertools.product([(5, 5, 4, 3, 2), (4, 4, 3, 2)], range(4))))
def test_square_camp_is_the_corner_staircase(sizes: tuple[int, ...], corner: int) -> None:
    """Rows of ``sizes`` holes counted from the corner row; corners 0 bottom-right, 1 bottom-left,
    2 top-left, 3 top-right (clockwise)."""
    expected = set()
    for i, w in enumerate(sizes):
        for j in range(w):
            r, c = 15 - i, 15 - j  # bottom-right
            r, c = {0: (r, c), 1: (r, 15 - c), 2: (15 - r, 15 - c), 3: (15 - r, c)}[corner]
            expected.add(sq(r, c))
    assert square_camp(corner, sizes) == tuple(sorted(expected))
    assert len(expected) == sum(sizes)


def test_square_camp_pinned_holes() -> None:
    assert square_camp(0, (5, 5, 4, 3, 2)) == (
        190, 191, 205, 206, 207, 220, 221, 222, 223, 235, 236, 237, 238, 239, 251, 252, 253, 254, 255,
    )
    assert square_camp(2, (4, 4, 3, 2)) == (0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 48, 49)


# --- layouts ------------------------------------------------------------------------------------

STAR_TABLE = {1: (0,), 2: (0, 3), 3: (0, 2, 4), 4: (0, 1, 3, 4), 5: (0, 1, 2, 3, 4), 6: (0, 1, 2, 3, 4, 5)}


@pytest.mark.parametrize("seats", sorted(STAR_TABLE))
def test_star_layout_follows_spec(seats: int) -> None:
    lay = layout("star", seats)
    points = STAR_TABLE[seats]
    g = star()
    assert (lay.variant, lay.num_players, lay.geometry, lay.max_pieces, lay.has_kings) == ("star", seats, g, 10, False)
    assert lay.homes == tuple(star_point(p) for p in points) == lay.start
    assert lay.goals == tuple(star_point((p + 3) % 6) for p in points)
    assert lay.king_start == (None,) * seats and lay.goal_tip == (None,) * seats
    assert lay.open_holes == (g.all_holes,) * seats
    for s in range(seats):
        turn = g.rotations[lay.rotation[s]]
        assert 0 <= lay.rotation[s] < 6
        assert sorted(turn[h] for h in lay.homes[s]) == list(star_point(0)), "rotation brings home to the bottom"
        assert sorted(turn[h] for h in lay.goals[s]) == list(star_point(3))


@pytest.mark.parametrize(("seats", "points"), [(2, (0, 2)), (3, (0, 2, 4))])
def test_diamond_layout_follows_spec(seats: int, points: tuple[int, ...]) -> None:
    lay = layout("diamond", seats)
    g = star()
    assert (lay.variant, lay.num_players, lay.max_pieces, lay.has_kings) == ("diamond", seats, 15, True)
    assert lay.homes == tuple(diamond_camp(p) for p in points) == lay.start
    assert lay.goals == tuple(diamond_camp((p + 3) % 6) for p in points)
    assert lay.king_start == tuple(star_tip(p) for p in points)
    assert lay.goal_tip == tuple(star_tip((p + 3) % 6) for p in points)
    for s, p in enumerate(points):
        closed = {h for q in range(6) if q not in (p, (p + 3) % 6) for h in star_point(q)}
        assert len(closed) == 40
        assert g.holes(lay.open_holes[s]) == [h for h in range(121) if h not in closed]
        turn = g.rotations[lay.rotation[s]]
        assert 0 <= lay.rotation[s] < 6
        assert sorted(turn[h] for h in lay.homes[s]) == list(diamond_camp(0))


@pytest.mark.parametrize(("seats", "corners", "sizes"), [(2, (0, 2), (5, 5, 4, 3, 2)), (4, (0, 1, 2, 3), (4, 4, 3, 2))])
def test_halma16_layout_follows_spec(seats: int, corners: tuple[int, ...], sizes: tuple[int, ...]) -> None:
    lay = layout("halma16", seats)
    g = square()
    assert (lay.variant, lay.num_players, lay.geometry, lay.has_kings) == ("halma16", seats, g, False)
    assert lay.max_pieces == (19 if seats == 2 else 13) == sum(sizes)
    assert lay.homes == tuple(square_camp(c, sizes) for c in corners) == lay.start
    assert lay.goals == tuple(square_camp((c + 2) % 4, sizes) for c in corners)
    assert lay.king_start == (None,) * seats and lay.goal_tip == (None,) * seats
    assert lay.open_holes == (g.all_holes,) * seats
    for s in range(seats):
        turn = g.rotations[lay.rotation[s]]
        assert 0 <= lay.rotation[s] < 4
        assert sorted(turn[h] for h in lay.homes[s]) == list(square_camp(0, sizes))


def test_halma16_seat_corners() -> None:
    """2 seats: bottom-right then top-left; 4 seats: bottom-right, bottom-left, top-left, top-right."""
    assert [sq(15, 15) in camp for camp in layout("halma16", 2).homes] == [True, False]
    assert [sq(0, 0) in camp for camp in layout("halma16", 2).homes] == [False, True]
    corners = [sq(15, 15), sq(15, 0), sq(0, 0), sq(0, 15)]
    assert [[c in camp for c in corners] for camp in layout("halma16", 4).homes] == [
        [s == i for s in range(4)] for i in range(4)
    ]


def test_layouts_are_shared_and_immutable() -> None:
    """``layout`` hands every game the same object per (variant, seats): it cannot be changed in place."""
    lay = layout("star", 2)
    assert layout("star", 2) is lay
    with pytest.raises(dataclasses.FrozenInstanceError):
        lay.max_pieces = 9  # type: ignore[misc]


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant 'checkers'"):
        layout("checkers", 2)


@pytest.mark.parametrize(("variant", "seats", "message"), [
    ("star", 7, "star is played by 1, 2, 3, 4, 5, 6 seats, not 7"),
    ("star", 0, "star is played by 1, 2, 3, 4, 5, 6 seats, not 0"),
    ("star", -1, "star is played by 1, 2, 3, 4, 5, 6 seats, not -1"),
    ("diamond", 4, "diamond is played by 2, 3 seats, not 4"),
    ("halma16", 3, "halma16 is played by 2, 4 seats, not 3"),
    ("star", "2", "star is played by .* seats, not '2'"),
    ("star", 2.5, "star is played by .* seats, not 2.5"),
    ("star", 2.0, "star is played by .* seats, not 2.0"),  # (star-2 is cached: an equal key is no hit)
    ("star", True, "star is played by .* seats, not True"),
    ("star", [2], r"star is played by .* seats, not \[2\]"),
    (None, 2, "unknown variant None; variants: star, diamond, halma16"),
    (["star"], 2, r"unknown variant \['star'\]"),
])
def test_a_game_the_engine_does_not_play_has_no_layout(variant: object, seats: object, message: str) -> None:
    """``layout("star", 7)`` raised a bare ``KeyError: 7`` (a seat count missing from the variant's table), and an
    unhashable argument the cache's ``TypeError: unhashable type``: each is a ValueError in ``Rules``' words,
    naming the variant and the seat counts it is played by."""
    layout("star", 2)
    with pytest.raises(ValueError, match=message):
        layout(variant, seats)  # type: ignore[arg-type]


def test_a_numpy_seat_count_gets_the_shared_layout() -> None:
    """A numpy integer (a 0-d array too) is a seat count, as ``Rules`` reads one: the same layout object, whose
    ``num_players`` is a Python int."""
    lay = layout("star", np.int64(4))
    assert lay is layout("star", 4) is layout("star", np.array(4)) and type(lay.num_players) is int


# --- assignment ---------------------------------------------------------------------------------


def brute_force(cost: list[list[float]]) -> float:
    n, m = len(cost), len(cost[0])
    return min(sum(cost[i][j] for i, j in enumerate(cols)) for cols in itertools.permutations(range(m), n))


def test_assignment_small_cases() -> None:
    assert min_cost_assignment([]) == 0
    assert min_cost_assignment([[7]]) == 7
    assert min_cost_assignment([[4, 1, 3], [2, 0, 5], [3, 2, 2]]) == 5
    assert min_cost_assignment([[1, 2], [1, 9]]) == 3  # the greedy first choice is wrong here
    assert min_cost_assignment([[5, 1, 9]]) == 1  # one row: its cheapest column
    assert min_cost_assignment([[3, 8, 1, 4], [2, 2, 7, 1]]) == 2  # fewer rows than columns
    assert min_cost_assignment([[0, 0], [0, 0]]) == 0


def test_assignment_refuses_more_rows_than_columns() -> None:
    with pytest.raises(ValueError, match="3 rows cannot be assigned to 2 columns"):
        min_cost_assignment([[1, 2], [3, 4], [5, 6]])


def test_assignment_matches_brute_force() -> None:
    """Random square and wide matrices (integer and fractional costs) against every assignment."""
    rng = random.Random(7)
    for trial in range(400):
        n = rng.randint(1, 5)
        m = rng.randint(n, 6)
        if trial % 2:
            cost = [[float(rng.randint(0, 9)) for _ in range(m)] for _ in range(n)]
        else:
            cost = [[rng.uniform(0, 20) for _ in range(m)] for _ in range(n)]
        assert min_cost_assignment(cost) == pytest.approx(brute_force(cost)), cost


# --- the padding of the bit grid (pinned where mutation testing found it unpinned) ------------------

@pytest.mark.parametrize("kind", ["star", "square"])
def test_every_step_and_hop_index_lies_inside_the_padded_grid(kind: str) -> None:
    """PAD: two holes of padding on every side, so a step or a hop from any hole in any direction is a
    real index of ``hole_of_bit`` (never a negative one that Python would quietly wrap to the far end, nor
    one past it), and a bit set shifted by a hop never needs a negative shift count."""
    g = star() if kind == "star" else square()
    size = len(g.hole_of_bit)
    for h in range(g.num_holes):
        for s in g.shifts:
            for k in (1, 2):
                assert 0 <= g.bit[h] + k * s < size, (h, s, k)


def test_a_halma16_piece_in_the_corner_hole_0_hops_and_steps() -> None:
    """The top-left corner (hole 0) of the 16x16 board, seat 1's home corner: its steps and its hop over
    hole 1 to hole 2 (on the bit grid the hop reaches two padding columns to the left and two rows above)."""
    game = Game.from_position(position("halma16", 2, {0: "1", 1: "0", 120: "0", 255: "1"}, to_move=1))
    assert sorted(game.legal_destinations(0)) == [2, 16, 17]
