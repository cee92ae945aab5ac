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
  on the tip counts as if it were just outside the camp (the tip is reserved for the king);
- ``camp penalty`` for a piece inside *another* seat's goal camp: ``CAMP x (steps to leave the
  camp) x (CAMP_BASE + CAMP_FILL x fill)``, where ``fill`` (0..1) says how far the camp's owner
  is in filling it (its pieces in the camp, half its pieces within 3 steps of it; 1 once the owner
  has finished).  Two endgame failures came from parked pieces: a last piece left behind in the
  home camp (= the opponent's goal) that the opponent then walls in (halma16: the opponent's
  pieces are goal-locked, no one can finish), and a piece parked in a third seat's goal that
  the owner finishes around (star, 6 seats: the owner never moves again).  The penalty gets
  such pieces out early, the more urgently the fuller the camp.

Everything is a table lookup per (seat, hole), so a move's gain is ``table[src] - table[dst]``
and searches update potentials incrementally.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

from halma_env import Game
from halma_env.layout import layout

STRAGGLE = 0.6  # weight of the square term (per 16 depth units)
ENDGAME = 0.25  # pull toward the nearest empty usable goal hole
KING = 2.0  # a king's step toward the tip counts this many ordinary steps
CAMP = 1.0  # penalty per exit step for a piece parked in another seat's goal camp, times (CAMP_BASE + CAMP_FILL x fill)
CAMP_BASE = 0.25  # the camp penalty's share that applies even while the goal's owner is far away
CAMP_FILL = 12.0  # how much the camp penalty grows as the goal's owner fills (or nears) its goal
WIN = 1_000_000.0  # terminal scores dwarf any potential
# the per-position tables (camp penalties by goal fills, endgame pulls by empty goal holes) and the seats' tables
# (one per straggle value: 53 kB a value on star-6, so a sweep over search:straggle=X grew without end) kept for reuse:
# their keys are unbounded with 3+ seats or on halma16, so a server playing game after game grew without
# end; 2,048 of each bound them at no cost in speed (star-6 greedy self-play, 400 games in one process:
# 239 MB unbounded, 34 MB bounded; docs/measurements.md, "The bots' table caches")
TABLES_KEPT = 2048


@dataclass(frozen=True, eq=False)
class SeatTables:
    """Per-seat lookup tables (index = hole)."""

    seat: int
    goal: frozenset[int]
    tip: int
    depth: tuple[float, ...]
    piece: tuple[float, ...]  # potential of an ordinary piece on each hole (ENDGAME term excluded)
    king: tuple[float, ...] | None  # potential of the king (diamond) or None


def _tip(variant: str, num_players: int, seat: int) -> int:
    lay = layout(variant, num_players)
    tip = lay.goal_tip[seat]
    if tip is not None:
        return tip
    g = lay.geometry
    # the goal's corner: the goal hole with the fewest neighbours (2 on the star, 3 on the square)
    return min(lay.goals[seat], key=lambda h: (len(g.neighbours[h]), h))


@lru_cache(maxsize=TABLES_KEPT)  # (keyed by a bot's straggle too, which specs may set to any number)
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
    return SeatTables(seat, frozenset(lay.goals[seat]), tip, tuple(depth), tuple(piece), king)


@cache
def _goal_distances(variant: str, num_players: int, seat: int) -> dict[int, tuple[int, ...]]:
    """goal hole -> (hole -> single steps between them on an empty board)."""
    lay = layout(variant, num_players)
    g = lay.geometry
    return {x: tuple(g.distance(h, x) for h in range(g.num_holes)) for x in lay.goals[seat]}


@lru_cache(maxsize=TABLES_KEPT)
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


@cache
def _exit_steps(variant: str, num_players: int, seat: int) -> tuple[float, ...]:
    """hole -> how deep inside ``seat``'s goal camp it lies (0 outside it), in single steps to
    leave the camp: ``steps x (1 + D - depth) / (1 + D)`` where ``depth`` is the seat's depth
    table (distance from its goal tip), ``D`` its largest value in the camp and ``steps`` the
    single steps from the tip to the nearest hole outside.  Graded by the depth rather than by
    the step count, so that on the square board a move away from the corner always counts as
    getting out (the corner's neighbours are as many king steps from the exit as the corner)."""
    lay = layout(variant, num_players)
    g = lay.geometry
    camp = set(lay.goals[seat])
    t = seat_tables(variant, num_players, seat)
    deepest = max(t.depth[h] for h in camp)
    steps = min(g.distance(t.tip, h) for h in range(g.num_holes) if h not in camp)
    out = [0.0] * g.num_holes
    for h in camp:
        out[h] = steps * (1 + deepest - t.depth[h]) / (1 + deepest)
    return tuple(out)


@lru_cache(maxsize=TABLES_KEPT)
def camp_table(variant: str, num_players: int, seat: int, fills: tuple[int, ...]) -> tuple[float, ...]:
    """The camp penalty of ``seat``'s ordinary pieces per hole; ``fills[t]`` is seat t's goal fill
    in twentieths (quantised so the tables can be cached)."""
    lay = layout(variant, num_players)
    own = set(lay.goals[seat])
    out = [0.0] * lay.geometry.num_holes
    for t in range(num_players):
        if t == seat or not lay.goals[t]:
            continue
        weight = CAMP * (CAMP_BASE + CAMP_FILL * fills[t] / 20)
        steps = _exit_steps(variant, num_players, t)
        for h in lay.goals[t]:
            if h not in own:  # shared diamond corners count as the seat's own goal
                out[h] += weight * steps[h]
    return tuple(out)


def goal_fills(game: Game) -> tuple[int, ...]:
    """Per seat, how far it is in filling its goal, in twentieths: its pieces in the goal plus
    half of those within 3 steps of it, over the goal's size; 20 once it is no longer active."""
    rules = game.rules
    lay = layout(rules.variant, rules.num_players)
    status = game.status
    out = []
    for t in range(rules.num_players):
        goal = lay.goals[t]
        if not goal:
            out.append(0)
            continue
        if status[t] != "active":
            out.append(20)
            continue
        steps = _exit_steps(rules.variant, rules.num_players, t)
        dist = _goal_distances(rules.variant, rules.num_players, t)
        score = 0.0
        for h in game.pieces(t):
            if steps[h] > 0:
                score += 1.0
            elif any(dist[x][h] <= 3 for x in goal):
                score += 0.5
        out.append(min(20, round(20 * score / len(goal))))
    return tuple(out)


class SeatView:
    """One seat's tables resolved for a given position (which goal holes are still empty)."""

    __slots__ = ("tables", "piece", "king", "king_hole", "pieces", "endgame")

    def __init__(
        self, game: Game, seat: int, straggle: float = STRAGGLE, fills: tuple[int, ...] | None = None
    ) -> None:
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
        endgame = endgame_table(rules.variant, rules.num_players, seat, empty)
        fills = goal_fills(game) if fills is None else fills
        camp = camp_table(rules.variant, rules.num_players, seat, fills)
        self.endgame = tuple(e + c for e, c in zip(endgame, camp))
        self.piece = t.piece
        # the king's table, read only at king_hole; empty for a variant without kings (king_hole None)
        self.king: tuple[float, ...] = t.king if t.king is not None else ()

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
        fills = goal_fills(game)
        self.views = [SeatView(game, s, straggle, fills) for s in range(n)]
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
        out: list[tuple[float, int, int]] = []
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


def _permanent(game: Game) -> set[int]:
    """Holes whose pieces will never move again: every piece of a seat that is no longer active,
    and (halma16's goal lock) the pieces of a seat inside its own goal once that goal is full."""
    rules = game.rules
    lay = layout(rules.variant, rules.num_players)
    status = game.status
    out: set[int] = set()
    for t in range(rules.num_players):
        if status[t] != "active":
            out.update(game.pieces(t))
        elif rules.variant == "halma16":
            goal = lay.goals[t]
            if all(game.piece_at(h) is not None for h in goal):
                out.update(h for h in game.pieces(t) if h in goal)
    return out


def _dead_at(game: Game, h: int, open_bits: int, perm: set[int]) -> bool:
    """Whether an ordinary piece on ``h`` can never move again."""
    g = game.geometry
    bit, hob = g.bit, g.hole_of_bit
    b = bit[h]
    for s in g.shifts:
        nb = hob[b + s]
        if nb < 0:
            continue
        near = game.piece_at(nb)
        if near is None:
            if open_bits >> bit[nb] & 1:
                return False  # a step
            continue
        if nb not in perm:
            return False  # that piece may move away
        if near[1]:
            continue  # no piece hops over a king
        land = hob[b + 2 * s]
        if land < 0 or not open_bits >> bit[land] & 1:
            continue
        if land not in perm or game.piece_at(land) is None:
            return False  # a hop now, or later once that piece has moved
    return True


def dead_pieces(game: Game, seat: int) -> list[int]:
    """``seat``'s ordinary pieces outside its goal that can never move again: every step is
    blocked (by a piece that never moves, or a closed hole) and so is every hop (over a piece that
    never moves, onto a piece that never moves, a closed hole or off the board).  Such a piece
    keeps the seat from ever finishing."""
    rules = game.rules
    lay = layout(rules.variant, rules.num_players)
    goal = lay.goals[seat]
    perm = _permanent(game)
    out = []
    for h in game.pieces(seat):
        if h in goal:
            continue
        info = game.piece_at(h)
        if info is not None and info[1]:  # a king's row jumps are not modelled: never called dead
            continue
        if _dead_at(game, h, lay.open_holes[seat], perm):
            out.append(h)
    return out


def safe_moves(game: Game, moves: list) -> list:
    """``moves`` (of the seat to move) less those after which one of its pieces can never move
    again, unless every move does that.  One kind of move can wall a piece in: filling the last
    hole of another seat's goal, which finishes that seat (anti-blocking) or goal-locks it
    (halma16), so its pieces never move again (checked by playing the move on a copy of ``game``
    and undoing it: ``game`` is not touched).  A piece cannot wall itself in among pieces that
    never move: every move can be played back (a step to the hole it left, the last hop back over
    the same piece to the hole it came from, a king's row jump back over the same row)."""
    seat = game.to_move
    rules = game.rules
    lay = layout(rules.variant, rules.num_players)
    own_goal = lay.goals[seat]
    # goal hole -> the seats (other than the mover) whose last empty goal hole it is
    last_hole: dict[int, list[int]] = {}
    for t in range(rules.num_players):
        if t == seat or game.status[t] != "active":
            continue
        empty = [h for h in lay.goals[t] if game.piece_at(h) is None]
        if len(empty) == 1 and empty[0] not in own_goal:
            last_hole.setdefault(empty[0], []).append(t)
    before = 0
    work: Game | None = None  # a copy to try moves on, made when first needed
    out = []
    for m in moves:
        src, dst = m
        bad = False
        if dst in last_hole and any(src not in lay.goals[t] for t in last_hole[dst]):
            if work is None:
                work = game.copy()
                before = len(dead_pieces(game, seat))
            work.play(m)
            try:
                bad = work.status[seat] == "active" and len(dead_pieces(work, seat)) > before
            finally:
                work.undo()
        if not bad:
            out.append(m)
    return out or moves


ESCAPE_FILL = 6  # twentieths: from this goal fill on, a piece in that goal camp must get out first


def escape_moves(game: Game, moves: list, fills: tuple[int, ...] | None = None) -> list:
    """The moves among ``moves`` (of the seat to move) that bring one of its ordinary pieces
    closer to the way out of another seat's goal camp that the owner has begun to fill (fill at
    least ``ESCAPE_FILL`` twentieths, see ``goal_fills``); empty when no piece is in such a camp.

    The evaluation's camp penalty says *that* a parked piece should leave, not *when*: a search
    sees the same penalty paid a few plies later and defers the escape, while the owner's next
    arrivals wall the piece in.  So searches play one of these moves while there are any."""
    seat = game.to_move
    rules = game.rules
    lay = layout(rules.variant, rules.num_players)
    fills = goal_fills(game) if fills is None else fills
    own = lay.goals[seat]
    urgent = [t for t in range(rules.num_players) if t != seat and lay.goals[t] and fills[t] >= ESCAPE_FILL]
    if not urgent:
        return []
    steps = [_exit_steps(rules.variant, rules.num_players, t) for t in urgent]

    def trapped(h: int) -> float:
        return 0 if h in own else sum(st[h] for st in steps)

    out = []
    for m in moves:
        src, dst = m
        before = trapped(src)
        if before and trapped(dst) < before:
            info = game.piece_at(src)
            if info is None or not info[1]:
                out.append(m)
    return out
