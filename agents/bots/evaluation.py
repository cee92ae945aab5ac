"""The evaluation every bot shares: how far each seat still has to go, as cheap per-hole tables.

For every seat the *depth* of a hole is its distance from the seat's goal tip (the goal hole
farthest from the centre: the star point's tip, the square board's corner).  On the star the
holes within depth 3 of the tip are exactly the 10 goal holes (within 4: the 15-hole diamond
camp), so a seat's pieces minimise the sum of their depths precisely when they fill the goal;
and because deeper goal holes are worth more, pieces fill the goal back-to-front, which avoids
the classic endgame failure of a last hole that cannot be entered because the back of the goal
was left empty.  On the square board the corner staircase is not a distance ball, so the depth
there is ``(dr + dc) + max(dr, dc) / 2`` from the corner, whose 19 (13 with 4 seats) smallest
values are exactly the staircase.

A seat's *potential* (smaller is better) is the sum over its pieces of

- ``depth + straggle * depth**2 / 16``: the square term makes a step of a piece far behind
  worth more than a step of a piece in front, so no piece is left behind;
- ``ENDGAME * (distance to the nearest empty usable goal hole)`` for pieces outside the goal:
  a small pull that lines pieces up with the holes still to fill (a goal an opponent partly
  blocks, anti-blocking rule on);
- diamond: the king counts ``KING`` times its distance to the goal tip, and an ordinary piece
  on the tip counts as if it were just outside the camp (the tip is reserved for the king).

Everything is a table lookup per (seat, hole), so a move's gain is ``table[src] - table[dst]``
and searches update potentials incrementally.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from halma_env import Game
from halma_env.layout import layout

STRAGGLE = 0.6  # weight of the square term (per 16 depth units)
ENDGAME = 0.25  # pull toward the nearest empty usable goal hole
KING = 2.0  # a king's step toward the tip counts this many ordinary steps
WIN = 1_000_000.0  # terminal scores dwarf any potential


@dataclass(frozen=True, eq=False)
class SeatTables:
    """Per-seat lookup tables (index = hole)."""

    seat: int
    goal: frozenset[int]
    goal_order: tuple[int, ...]  # goal holes, deepest (back) first
    tip: int
    depth: tuple[float, ...]
    piece: tuple[float, ...]  # potential of an ordinary piece on each hole (ENDGAME term excluded)
    king: tuple[float, ...] | None  # potential of the king (diamond) or None


def _tip(variant: str, num_players: int, seat: int) -> int:
    lay = layout(variant, num_players)
    if lay.goal_tip[seat] is not None:
        return lay.goal_tip[seat]
    g = lay.geometry
    # the goal's corner: the goal hole with the fewest neighbours (2 on the star, 3 on the square)
    return min(lay.goals[seat], key=lambda h: (len(g.neighbours[h]), h))


@cache
def seat_tables(variant: str, num_players: int, seat: int, straggle: float = STRAGGLE) -> SeatTables:
    """The evaluation tables of one seat (cached)."""
    lay = layout(variant, num_players)
    g = lay.geometry
    tip = _tip(variant, num_players, seat)
    if g.kind == "square":
        tr, tc = g.grid[tip]
        depth = []
        for h in range(g.num_holes):
            dr, dc = abs(g.grid[h][0] - tr), abs(g.grid[h][1] - tc)
            depth.append(dr + dc + max(dr, dc) / 2)
    else:
        depth = [float(g.distance(h, tip)) for h in range(g.num_holes)]
    piece = [d + straggle * d * d / 16 for d in depth]
    king = None
    if lay.has_kings:
        outside = 1 + max(depth[h] for h in lay.goals[seat])
        piece[tip] = outside + straggle * outside * outside / 16
        king = tuple(KING * (d + straggle * d * d / 16) for d in depth)
    goal = lay.goals[seat]
    order = tuple(sorted(goal, key=lambda h: (depth[h], h)))
    return SeatTables(seat, frozenset(goal), order, tip, tuple(depth), tuple(piece), king)


@cache
def _goal_distances(variant: str, num_players: int, seat: int) -> dict[int, tuple[int, ...]]:
    """goal hole -> (hole -> single steps between them on an empty board)."""
    lay = layout(variant, num_players)
    g = lay.geometry
    return {x: tuple(g.distance(h, x) for h in range(g.num_holes)) for x in lay.goals[seat]}


@cache
def endgame_table(variant: str, num_players: int, seat: int, empty_goal: frozenset[int]) -> tuple[float, ...]:
    """``ENDGAME`` x distance from each hole to the nearest of ``empty_goal`` (0 inside the goal)."""
    lay = layout(variant, num_players)
    num_holes = lay.geometry.num_holes
    if not empty_goal:
        return (0.0,) * num_holes
    rows = [_goal_distances(variant, num_players, seat)[x] for x in sorted(empty_goal)]
    nearest = [min(col) for col in zip(*rows)]
    goal = set(lay.goals[seat])
    return tuple(0.0 if h in goal else ENDGAME * nearest[h] for h in range(num_holes))


class SeatView:
    """One seat's tables resolved for a given position (which goal holes are still empty)."""

    __slots__ = ("tables", "piece", "king", "king_hole", "pieces", "endgame")

    def __init__(self, game: Game, seat: int, straggle: float = STRAGGLE) -> None:
        rules = game.rules
        t = seat_tables(rules.variant, rules.num_players, seat, straggle)
        self.tables = t
        self.pieces = game.pieces(seat)
        self.king_hole = None
        if t.king is not None:
            for h in self.pieces:
                info = game.piece_at(h)
                if info is not None and info[1]:
                    self.king_hole = h
        empty = frozenset(h for h in t.goal if game.piece_at(h) is None)
        if t.king is not None and self.king_hole != t.tip:
            empty = empty - {t.tip}  # ordinary pieces do not belong on the tip
        self.endgame = endgame_table(rules.variant, rules.num_players, seat, empty)
        self.piece = t.piece
        self.king = t.king

    def value(self, hole: int, is_king: bool) -> float:
        """Potential of one piece on ``hole``."""
        if is_king:
            return self.king[hole]
        return self.piece[hole] + self.endgame[hole]

    def potential(self) -> float:
        """The seat's potential (smaller is better)."""
        total = 0.0
        for h in self.pieces:
            total += self.value(h, h == self.king_hole)
        return total

    def gain(self, src: int, dst: int) -> float:
        """How much a move of this seat lowers its potential."""
        if src == self.king_hole:
            return self.king[src] - self.king[dst]
        return self.piece[src] + self.endgame[src] - self.piece[dst] - self.endgame[dst]


def potential(game: Game, seat: int, straggle: float = STRAGGLE) -> float:
    """A seat's potential in ``game`` (smaller is better; lowest when its goal is filled)."""
    return SeatView(game, seat, straggle).potential()


def progress_score(game: Game, seat: int) -> float:
    """From ``seat``'s point of view: the mean over the other undecided seats of
    (their potential - its potential); positive means ahead."""
    n = game.num_players
    places = game.places
    mine = potential(game, seat)
    others = [potential(game, s) for s in range(n) if s != seat and places[s] is None]
    if not others:
        return 0.0
    return sum(others) / len(others) - mine


class Tracker:
    """A private copy of a game plus every seat's potential, kept up to date move by move.

    Searches play and undo on ``game`` (a copy: the caller's game is never touched) through
    ``play``/``undo``, which also update the potentials (by the table gain), the king holes, and
    per seat the pieces outside its goal and the empty holes of its goal.  ``play`` hands the
    turn to the given seat first, so a best-reply search can let any opponent move.
    """

    def __init__(self, game: Game, straggle: float = STRAGGLE) -> None:
        self.game = game.copy()
        n = game.num_players
        self.n = n
        self.views = [SeatView(game, s, straggle) for s in range(n)]
        self.goals = [v.tables.goal for v in self.views]
        self.pot = [v.potential() for v in self.views]
        self.king = [v.king_hole for v in self.views]
        self.outside = [sum(1 for h in v.pieces if h not in v.tables.goal) for v in self.views]
        self.empty = [sum(1 for h in goal if game.piece_at(h) is None) for goal in self.goals]
        # ordinary piece value per hole, endgame pull included (fixed for the whole search)
        self.values = [tuple(p + e for p, e in zip(v.piece, v.endgame)) for v in self.views]

    def gain(self, s: int, src: int, dst: int) -> float:
        """How much moving ``src`` -> ``dst`` lowers seat ``s``'s potential."""
        if src == self.king[s]:
            king = self.views[s].king
            return king[src] - king[dst]
        values = self.values[s]
        return values[src] - values[dst]

    def moves_of(self, s: int) -> list:
        """Seat ``s``'s legal moves in the current position (whoever is really to move)."""
        self.game.to_move = s
        return self.game.legal_moves()

    def scored_moves(self, s: int) -> list[tuple[float, int, int]]:
        """(gain, src, dst) for every legal move of seat ``s`` (no Move objects: cheaper)."""
        g = self.game
        g.to_move = s
        values = self.values[s]
        king = self.king[s]
        out = []
        for src in g.pieces(s):
            dests = g.legal_destinations(src)
            if not dests:
                continue
            if src == king:
                kt = self.views[s].king
                out.extend((kt[src] - kt[d], src, d) for d in dests)
            else:
                base = values[src]
                out.extend((base - values[d], src, d) for d in dests)
        return out

    def best_gain(self, s: int) -> float | None:
        """The largest gain among seat ``s``'s legal moves (None if it has none)."""
        g = self.game
        g.to_move = s
        values = self.values[s]
        king = self.king[s]
        best = None
        for src in g.pieces(s):
            dests = g.legal_destinations(src)
            if not dests:
                continue
            if src == king:
                kt = self.views[s].king
                gain = kt[src] - min(kt[d] for d in dests)
            else:
                gain = values[src] - min(values[d] for d in dests)
            if best is None or gain > best:
                best = gain
        return best

    def play(self, s: int, move, gain: float) -> None:
        """Seat ``s`` plays ``move`` (a Move or a (src, dst) pair)."""
        self.game.to_move = s
        self.game.play(move)
        src, dst = move
        self._update(s, src, dst, gain)

    def undo(self, s: int, move, gain: float) -> None:
        self.game.undo()
        src, dst = move
        self._update(s, dst, src, -gain)

    def _update(self, s: int, src: int, dst: int, gain: float) -> None:
        self.pot[s] -= gain
        if src == self.king[s]:
            self.king[s] = dst
        goal = self.goals[s]
        self.outside[s] += (src in goal) - (dst in goal)
        for t in range(self.n):
            gt = self.goals[t]
            self.empty[t] += (src in gt) - (dst in gt)

    def near_finish(self, s: int) -> bool:
        """Whether one move might finish seat ``s`` (cheap necessary condition)."""
        return self.empty[s] <= 1 or self.outside[s] <= 1

    def may_finish(self, s: int, move) -> bool:
        """Whether ``move`` might finish seat ``s`` (needs playing to be sure)."""
        src, dst = move
        goal = self.goals[s]
        return dst in goal and (self.empty[s] <= 1 or src not in goal or src == self.king[s])
