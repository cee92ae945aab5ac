"""An independent reference implementation of the Halma family rules, written from docs/SPEC.md alone.

It exists so that tests can compare the engine (``halma_env.Game``) with a second, deliberately
plain reading of the rules: slow, small functions, one rule each. It must never import anything
from ``halma_env`` (not even its board tables): it builds the boards from SPEC §2, reads the public
position notation of SPEC §3 itself, and generates moves by walking the board hole by hole.

Where SPEC.md is silent it follows the decisions written down in docs/rules.md:

- a seat also finishes when all of its own pieces are on goal holes (puzzle positions with fewer
  pieces than goal holes); a seat without pieces never finishes (rules.md, "Finishing");
- a diamond seat without a king needs only the goal condition (rules.md, "Finishing");
- seats that already meet their finishing condition in a loaded position share place 1
  (rules.md, "Finishing");
- a stall-limit ply is one in which the mover does not beat its own best progress so far
  (rules.md, "Stall limit");
- in the diamond game the remaining distance sends the king to the goal tip and the ordinary
  pieces to the other goal holes (rules.md, "Progress");
- the order of the checks after a move, the move limit counting the loaded ply, passes, resigning
  and repetition as rules.md's "Places and the end of a game" describes them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

# ---------------------------------------------------------------------------------------------
# Boards (SPEC §2)
# ---------------------------------------------------------------------------------------------

STAR_ROW_WIDTHS = (1, 2, 3, 4, 13, 12, 11, 10, 9, 10, 11, 12, 13, 4, 3, 2, 1)
STAR_CENTRE = 60
HEXAGON_RADIUS = 4  # the central hexagon: the 61 holes within 4 steps of the centre


@dataclass(frozen=True)
class Board:
    """Holes numbered 0..n-1, each with a lattice coordinate, and the directions a piece moves in."""

    coords: tuple[tuple[int, int], ...]
    directions: tuple[tuple[int, int], ...]
    hex_metric: bool  # star: hex distance; square: king-move (Chebyshev) distance
    hole_at: dict[tuple[int, int], int] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hole_at", {c: h for h, c in enumerate(self.coords)})

    @property
    def holes(self) -> range:
        return range(len(self.coords))

    def neighbour(self, hole: int, direction: tuple[int, int], times: int = 1) -> int | None:
        """The hole `times` steps from `hole` in `direction`, or None off the board."""
        (row, col), (drow, dcol) = self.coords[hole], direction
        return self.hole_at.get((row + times * drow, col + times * dcol))

    def neighbours(self, hole: int) -> list[int]:
        return [n for d in self.directions if (n := self.neighbour(hole, d)) is not None]

    def distance(self, a: int, b: int) -> int:
        """The least number of single steps from `a` to `b` on an empty board."""
        (ra, ca), (rb, cb) = self.coords[a], self.coords[b]
        drow, dcol = abs(ra - rb), abs(ca - cb)
        if self.hex_metric:  # columns are doubled: a diagonal step moves one row and one column
            return drow + max(0, (dcol - drow) // 2)
        return max(drow, dcol)


def star_board() -> Board:
    """Rows top to bottom, holes left to right; doubled columns centred on 0, so that the six
    neighbours of (row, col) are (row, col +- 2) and (row +- 1, col +- 1)."""
    coords = [(row, 2 * i - (width - 1)) for row, width in enumerate(STAR_ROW_WIDTHS) for i in range(width)]
    return Board(tuple(coords), ((0, 2), (0, -2), (1, 1), (1, -1), (-1, 1), (-1, -1)), hex_metric=True)


def square_board() -> Board:
    coords = [(hole // 16, hole % 16) for hole in range(256)]
    directions = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))
    return Board(tuple(coords), directions, hex_metric=False)


STAR = star_board()
SQUARE = square_board()


def star_point_of(hole: int) -> int | None:
    """The point (0 bottom, 1 lower-left, 2 upper-left, 3 top, 4 upper-right, 5 lower-right) a hole
    belongs to, or None for the central hexagon."""
    if STAR.distance(hole, STAR_CENTRE) <= HEXAGON_RADIUS:
        return None
    row, col = STAR.coords[hole]
    if row <= 3:
        return 3
    if row >= 13:
        return 0
    if row < 8:
        return 2 if col < 0 else 4
    return 1 if col < 0 else 5


@cache
def star_point(point: int) -> frozenset[int]:
    return frozenset(h for h in STAR.holes if star_point_of(h) == point)


def star_tip(point: int) -> int:
    """The hole of a point farthest from the centre."""
    return max(star_point(point), key=lambda h: STAR.distance(h, STAR_CENTRE))


def diamond_camp(point: int) -> frozenset[int]:
    """The 10-hole point plus the 5 hexagon holes next to it (its edge row)."""
    points = star_point(point)
    edge_row = {n for h in points for n in STAR.neighbours(h) if star_point_of(n) is None}
    return points | edge_row


def square_camp(corner: tuple[int, int], row_lengths: tuple[int, ...]) -> frozenset[int]:
    """The staircase in `corner` ((row, col) of the corner square): row_lengths counted from the corner."""
    corner_row, corner_col = corner
    row_step = 1 if corner_row == 0 else -1
    col_step = 1 if corner_col == 0 else -1
    return frozenset((corner_row + row_step * d) * 16 + corner_col + col_step * i
                     for d, length in enumerate(row_lengths) for i in range(length))


# ---------------------------------------------------------------------------------------------
# Seats and camps (SPEC §1, §2)
# ---------------------------------------------------------------------------------------------

STAR_HOME_POINTS = {1: (0,), 2: (0, 3), 3: (0, 2, 4), 4: (0, 1, 3, 4), 5: (0, 1, 2, 3, 4), 6: (0, 1, 2, 3, 4, 5)}
DIAMOND_HOME_POINTS = {2: (0, 2), 3: (0, 2, 4)}
BOTTOM_RIGHT, BOTTOM_LEFT, TOP_LEFT, TOP_RIGHT = (15, 15), (15, 0), (0, 0), (0, 15)
SQUARE_HOME_CORNERS = {2: (BOTTOM_RIGHT, TOP_LEFT), 4: (BOTTOM_RIGHT, BOTTOM_LEFT, TOP_LEFT, TOP_RIGHT)}
SQUARE_CAMP_ROWS = {2: (5, 5, 4, 3, 2), 4: (4, 4, 3, 2)}


def opposite_point(point: int) -> int:
    return (point + 3) % 6


def opposite_corner(corner: tuple[int, int]) -> tuple[int, int]:
    return 15 - corner[0], 15 - corner[1]


@dataclass(frozen=True)
class Layout:
    """What a variant and seat count fix: the board, each seat's home and goal, the holes closed to
    it, and (diamond) its home and goal tips."""

    variant: str
    seats: int
    board: Board
    homes: tuple[frozenset[int], ...]
    goals: tuple[frozenset[int], ...]
    closed: tuple[frozenset[int], ...]
    home_tips: tuple[int | None, ...]
    goal_tips: tuple[int | None, ...]

    @property
    def has_kings(self) -> bool:
        return self.variant == "diamond"

    @property
    def goal_lock(self) -> bool:
        return self.variant == "halma16"


@cache
def make_layout(variant: str, seats: int) -> Layout:
    if variant == "halma16":
        corners = SQUARE_HOME_CORNERS[seats]
        rows = SQUARE_CAMP_ROWS[seats]
        no_tips = (None,) * seats
        return Layout(variant, seats, SQUARE, tuple(square_camp(c, rows) for c in corners),
                      tuple(square_camp(opposite_corner(c), rows) for c in corners),
                      (frozenset(),) * seats, no_tips, no_tips)
    if variant == "star":
        points = STAR_HOME_POINTS[seats]
        no_tips = (None,) * seats
        return Layout(variant, seats, STAR, tuple(star_point(p) for p in points),
                      tuple(star_point(opposite_point(p)) for p in points), (frozenset(),) * seats, no_tips, no_tips)
    if variant == "diamond":
        points = DIAMOND_HOME_POINTS[seats]
        closed = tuple(frozenset().union(*(star_point(q) for q in range(6) if q not in (p, opposite_point(p))))
                       for p in points)
        return Layout(variant, seats, STAR, tuple(diamond_camp(p) for p in points),
                      tuple(diamond_camp(opposite_point(p)) for p in points), closed,
                      tuple(star_tip(p) for p in points), tuple(star_tip(opposite_point(p)) for p in points))
    raise ValueError(f"unknown variant {variant!r}")


# ---------------------------------------------------------------------------------------------
# Positions (SPEC §3)
# ---------------------------------------------------------------------------------------------


class Piece(NamedTuple):
    seat: int
    king: bool


Pieces = dict[int, Piece]  # hole -> the piece on it; empty holes are absent


@dataclass
class Position:
    layout: Layout
    pieces: Pieces
    to_move: int
    ply: int


def parse_position(text: str) -> Position:
    """SPEC §3: `<variant> <seats> <board> <to_move> [<ply>]`; '.' empty, '0'-'5' a piece, 'A'-'F' a king."""
    fields = text.split(" ")
    variant, seats, board, to_move = fields[0], int(fields[1]), fields[2], int(fields[3])
    ply = int(fields[4]) if len(fields) > 4 else 0
    pieces = {}
    for hole, char in enumerate(board.replace("/", "")):
        if char.isdigit():
            pieces[hole] = Piece(int(char), king=False)
        elif char != ".":
            pieces[hole] = Piece(ord(char) - ord("A"), king=True)
    return Position(make_layout(variant, seats), pieces, to_move, ply)


def start_pieces(layout: Layout) -> Pieces:
    """Every seat fills its home camp; a diamond seat's king stands on its home tip."""
    return {hole: Piece(seat, king=hole == layout.home_tips[seat])
            for seat, home in enumerate(layout.homes) for hole in home}


def holes_of(pieces: Pieces, seat: int) -> list[int]:
    return [hole for hole, piece in pieces.items() if piece.seat == seat]


def king_of(pieces: Pieces, seat: int) -> int | None:
    return next((hole for hole, piece in pieces.items() if piece == Piece(seat, king=True)), None)


# ---------------------------------------------------------------------------------------------
# Moves (SPEC §1)
# ---------------------------------------------------------------------------------------------


def may_land(layout: Layout, occupied: set[int], seat: int, locked_in_goal: bool, hole: int) -> bool:
    """A landing (a step, or any hop of a jump sequence) must be empty and open to the seat, and a
    halma16 piece that began its turn in its goal must stay inside it."""
    if hole in occupied or hole in layout.closed[seat]:
        return False
    return not locked_in_goal or hole in layout.goals[seat]


def single_hop(layout: Layout, pieces: Pieces, occupied: set[int], at: int, direction: tuple[int, int]) -> int | None:
    """An ordinary piece hops over exactly one adjacent piece, never a king."""
    over = layout.board.neighbour(at, direction)
    if over is None or over not in occupied or pieces[over].king:
        return None
    return layout.board.neighbour(at, direction, 2)


def king_hop(layout: Layout, pieces: Pieces, occupied: set[int], at: int, direction: tuple[int, int]) -> int | None:
    """The diamond king hops over a straight contiguous row of one or more pieces, none of them a
    king, onto the first hole behind the row."""
    distance = 1
    while (hole := layout.board.neighbour(at, direction, distance)) in occupied:
        if pieces[hole].king:
            return None
        distance += 1
    return hole if distance > 1 else None


def destinations(layout: Layout, pieces: Pieces, src: int) -> set[int]:
    """Where the piece on `src` can end its turn: steps, or every stop of a jump sequence."""
    piece = pieces[src]
    locked = layout.goal_lock and src in layout.goals[piece.seat]
    occupied = set(pieces)
    steps = {n for n in layout.board.neighbours(src) if may_land(layout, occupied, piece.seat, locked, n)}

    occupied.discard(src)  # during a jump sequence the moving piece has left its start hole
    hop = king_hop if piece.king else single_hop
    reached, frontier = {src}, [src]
    while frontier:
        at = frontier.pop()
        for direction in layout.board.directions:
            landing = hop(layout, pieces, occupied, at, direction)
            if landing is None or landing in reached:
                continue
            if may_land(layout, occupied, piece.seat, locked, landing):
                reached.add(landing)
                frontier.append(landing)
    return steps | (reached - {src})  # a sequence that ends where it started is not a move


def legal_moves(layout: Layout, pieces: Pieces, seat: int) -> set[tuple[int, int]]:
    return {(src, dst) for src in holes_of(pieces, seat) for dst in destinations(layout, pieces, src)}


def can_move(layout: Layout, pieces: Pieces, seat: int) -> bool:
    return any(destinations(layout, pieces, src) for src in holes_of(pieces, seat))


def moved(pieces: Pieces, src: int, dst: int) -> Pieces:
    after = dict(pieces)
    after[dst] = after.pop(src)
    return after


# ---------------------------------------------------------------------------------------------
# Finishing and progress (SPEC §1, §4)
# ---------------------------------------------------------------------------------------------


def goal_condition(layout: Layout, pieces: Pieces, seat: int, anti_blocking: bool) -> bool:
    goal = layout.goals[seat]
    own = holes_of(pieces, seat)
    if own and all(hole in goal for hole in own):
        return True  # rules.md: all own pieces on goal holes (puzzles with fewer pieces)
    if anti_blocking:
        return all(hole in pieces for hole in goal) and any(hole in goal for hole in own)
    return all(hole in pieces and pieces[hole].seat == seat for hole in goal)


def has_finished(layout: Layout, pieces: Pieces, seat: int, anti_blocking: bool) -> bool:
    if not holes_of(pieces, seat):
        return False
    king = king_of(pieces, seat)
    king_home = king is None or king == layout.goal_tips[seat]  # rules.md: no king, goal condition only
    return king_home and goal_condition(layout, pieces, seat, anti_blocking)


def least_total_cost(cost: list[list[int]]) -> int:
    """The least sum of cost[i][j] over an assignment of every row to a distinct column (rows <=
    columns): the Hungarian algorithm with row and column potentials."""
    rows, cols = len(cost), len(cost[0]) if cost else 0
    row_potential, col_potential = [0] * (rows + 1), [0] * (cols + 1)
    row_of_col = [0] * (cols + 1)  # 1-based; column 0 is a virtual start, row 0 means unassigned
    for row in range(1, rows + 1):
        row_of_col[0] = row
        slack = [float("inf")] * (cols + 1)
        came_from = [0] * (cols + 1)
        used = [False] * (cols + 1)
        col = 0
        while row_of_col[col]:  # grow a tree of tight edges until it reaches a free column
            used[col] = True
            at_row, delta, next_col = row_of_col[col], float("inf"), 0
            for j in range(1, cols + 1):
                if not used[j]:
                    reduced = cost[at_row - 1][j - 1] - row_potential[at_row] - col_potential[j]
                    if reduced < slack[j]:
                        slack[j], came_from[j] = reduced, col
                    if slack[j] < delta:
                        delta, next_col = slack[j], j
            for j in range(cols + 1):
                if used[j]:
                    row_potential[row_of_col[j]] += delta
                    col_potential[j] -= delta
                else:
                    slack[j] -= delta
            col = next_col
        while col:  # flip the augmenting path
            previous = came_from[col]
            row_of_col[col] = row_of_col[previous]
            col = previous
    return sum(cost[row_of_col[j] - 1][j - 1] for j in range(1, cols + 1) if row_of_col[j])


def remaining_distance(layout: Layout, pieces: Pieces, seat: int) -> int:
    """SPEC §4: the least total of single steps putting the seat's pieces on distinct goal holes of an
    empty board. Diamond (rules.md): the king goes to the goal tip, the other pieces to the rest."""
    distance = layout.board.distance
    goal = sorted(layout.goals[seat])
    king = king_of(pieces, seat)
    ordinary = [hole for hole in holes_of(pieces, seat) if hole != king]
    total = 0
    if king is not None:
        tip = layout.goal_tips[seat]
        total += distance(king, tip)
        goal.remove(tip)
    if ordinary:
        total += least_total_cost([[distance(p, g) for g in goal] for p in ordinary])
    return total


class Progress(NamedTuple):
    in_goal: int
    distance: int

    def rank_key(self) -> tuple[int, int]:
        """Smaller is further along: more pieces in the goal, then less distance."""
        return -self.in_goal, self.distance


def progress(layout: Layout, pieces: Pieces, seat: int) -> Progress:
    in_goal = sum(hole in layout.goals[seat] for hole in holes_of(pieces, seat))
    return Progress(in_goal, remaining_distance(layout, pieces, seat))


# ---------------------------------------------------------------------------------------------
# A game (SPEC §4 with the rules.md decisions)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """SPEC §4's options, already resolved to the variant's defaults."""

    anti_blocking: bool
    play_to_end: bool = True
    move_limit: int | None = None
    limit_outcome: str = "draw"
    stall_limit: int | None = None
    repetition_limit: int | None = None


class ReferenceGame:
    """A game from a position: places (1 best, competition ranking), the end reason and the seat to move."""

    def __init__(self, position: Position, options: Options) -> None:
        self.layout, self.pieces = position.layout, dict(position.pieces)
        self.to_move, self.ply, self.options = position.to_move, position.ply, options
        self.seats = self.layout.seats
        self.places: list[int | None] = [None] * self.seats
        self.end_reason: str | None = None
        self.next_top_place = 1
        self.next_bottom_place = self.seats
        self.best_progress = [self.progress(seat).rank_key() for seat in range(self.seats)]
        self.plies_without_progress = 0
        self.seen = Counter[tuple]()

        already_finished = [s for s in range(self.seats) if self.meets_finishing_condition(s)]
        for seat in already_finished:  # rules.md: seats finished on loading share place 1
            self.places[seat] = 1
        self.next_top_place += len(already_finished)
        if already_finished and self.first_finish_ends_game():
            self.rank_undecided_by_progress("first_finish")
        elif not self.end_if_decided("finished") and self.hand_turn_to(self.to_move):
            self.count_repetition()
            if not self.is_over and self.move_limit_reached():
                self.end_at_move_limit()

    @classmethod
    def new(cls, variant: str, seats: int, options: Options, first_seat: int = 0) -> ReferenceGame:
        layout = make_layout(variant, seats)
        return cls(Position(layout, start_pieces(layout), first_seat, 0), options)

    # --- state ---------------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.end_reason is not None

    def undecided(self) -> list[int]:
        return [seat for seat in range(self.seats) if self.places[seat] is None]

    def progress(self, seat: int) -> Progress:
        return progress(self.layout, self.pieces, seat)

    def legal_moves(self) -> set[tuple[int, int]]:
        return set() if self.is_over else legal_moves(self.layout, self.pieces, self.to_move)

    def meets_finishing_condition(self, seat: int) -> bool:
        return has_finished(self.layout, self.pieces, seat, self.options.anti_blocking)

    def first_finish_ends_game(self) -> bool:
        return self.seats >= 3 and not self.options.play_to_end

    def move_limit_reached(self) -> bool:
        return self.options.move_limit is not None and self.ply >= self.options.move_limit

    # --- ending the game -------------------------------------------------------------------------

    def share_next_place(self, reason: str) -> None:
        for seat in self.undecided():
            self.places[seat] = self.next_top_place
        self.end_reason = reason

    def rank_undecided_by_progress(self, reason: str) -> None:
        undecided = self.undecided()
        keys = {seat: self.progress(seat).rank_key() for seat in undecided}
        for seat in undecided:
            self.places[seat] = self.next_top_place + sum(keys[other] < keys[seat] for other in undecided)
        self.end_reason = reason

    def end_if_decided(self, reason: str) -> bool:
        """With 2+ seats the game ends when at most one seat is undecided (it takes the next place);
        solitaire ends when its one seat is decided."""
        if len(self.undecided()) > (1 if self.seats >= 2 else 0):
            return False
        self.share_next_place(reason)
        return True

    def end_at_move_limit(self) -> None:
        if self.options.limit_outcome == "progress":
            self.rank_undecided_by_progress("move_limit")
        else:
            self.share_next_place("move_limit")

    # --- turns ----------------------------------------------------------------------------------

    def hand_turn_to(self, first_candidate: int) -> bool:
        """The first undecided seat from `first_candidate` on (clockwise) that can move gets the turn;
        the others pass. Nobody able to move is a draw. False when the game ended."""
        for offset in range(self.seats):
            seat = (first_candidate + offset) % self.seats
            if self.places[seat] is None and can_move(self.layout, self.pieces, seat):
                self.to_move = seat
                return True
        self.share_next_place("no_moves")
        return False

    def count_repetition(self) -> None:
        """A position is the pieces of every seat and the seat to move; the start counts."""
        key = (frozenset(self.pieces.items()), self.to_move)
        self.seen[key] += 1
        limit = self.options.repetition_limit
        if limit is not None and self.seen[key] >= limit:
            self.share_next_place("repetition")

    def note_progress_of(self, mover: int) -> None:
        """rules.md's stall counter: a ply counts as progress only if the mover beats its best so far."""
        now = self.progress(mover).rank_key()
        if now < self.best_progress[mover]:
            self.best_progress[mover] = now
            self.plies_without_progress = 0
        else:
            self.plies_without_progress += 1

    def play(self, src: int, dst: int) -> None:
        """A legal move, then the checks in rules.md's order: finishing, one seat left, the next seat
        that can move, repetition, move limit, stall limit."""
        mover = self.to_move
        self.pieces = moved(self.pieces, src, dst)
        self.ply += 1
        self.note_progress_of(mover)
        for seat in self.undecided():
            if self.meets_finishing_condition(seat):
                self.places[seat] = self.next_top_place
                self.next_top_place += 1
                if self.first_finish_ends_game():
                    self.rank_undecided_by_progress("first_finish")
                    return
        if self.end_if_decided("finished") or not self.hand_turn_to(mover + 1):
            return
        self.count_repetition()
        if self.is_over:
            return
        if self.move_limit_reached():
            self.end_at_move_limit()
        elif self.options.stall_limit is not None and self.plies_without_progress >= self.options.stall_limit:
            self.rank_undecided_by_progress("stall_limit")

    def resign(self, seat: int) -> None:
        """The resigner takes the last free place; with one seat left the game ends, otherwise play
        goes on (and passes on, if the resigner was to move)."""
        self.places[seat] = self.next_bottom_place
        self.next_bottom_place -= 1
        if self.end_if_decided("resign"):
            return
        if seat == self.to_move and self.hand_turn_to(seat + 1):
            self.count_repetition()
