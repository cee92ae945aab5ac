"""Helpers for the engine tests: build SPEC §3 positions by hand and walk the board."""

from __future__ import annotations

import time

from halma_env.layout import layout

# star directions on the axial grid (row, col): E SE SW W NW NE
STAR_DIRS = {"E": (0, 1), "SE": (1, 1), "SW": (1, 0), "W": (0, -1), "NW": (-1, -1), "NE": (-1, 0)}
SQUARE_DIRS = {
    "E": (0, 1), "SE": (1, 1), "S": (1, 0), "SW": (1, -1), "W": (0, -1), "NW": (-1, -1), "N": (-1, 0), "NE": (-1, 1),
}


def position(variant: str, seats: int, pieces: dict[int, str], to_move: int = 0, ply: int | None = None) -> str:
    """SPEC §3 text with ``pieces`` (hole -> '0'-'5' or 'A'-'F') and every other hole empty."""
    g = layout(variant, seats).geometry
    chars = ["."] * g.num_holes
    for hole, ch in pieces.items():
        assert chars[hole] == ".", f"hole {hole} given twice"
        chars[hole] = ch
    rows, i = [], 0
    for w in g.row_widths:
        rows.append("".join(chars[i : i + w]))
        i += w
    text = f"{variant} {seats} {'/'.join(rows)} {to_move}"
    return text if ply is None else f"{text} {ply}"


def walk(variant: str, hole: int, direction: str, steps: int = 1) -> int:
    """The hole ``steps`` steps from ``hole`` in ``direction`` (-1 if off the board)."""
    g = layout(variant, 2).geometry
    dr, dc = (STAR_DIRS if g.kind == "star" else SQUARE_DIRS)[direction]
    r, c = g.grid[hole]
    target = (r + dr * steps, c + dc * steps)
    return {rc: h for h, rc in enumerate(g.grid)}.get(target, -1)


def line(variant: str, hole: int, direction: str, count: int) -> list[int]:
    """``count`` holes starting at ``hole`` and going in ``direction`` (hole itself first)."""
    out = [walk(variant, hole, direction, k) for k in range(count)]
    assert -1 not in out, f"line from {hole} {direction} x{count} leaves the board"
    return out


def reference_destinations(game, src: int) -> set[int]:
    """Where the piece on ``src`` may go, computed straight from the SPEC rules by a slow
    search over hop chains on a hole -> occupant map (independent of the engine's bitboards)."""
    return set(reference_hops(game, src))


def reference_hops(game, src: int) -> dict[int, int]:
    """Destination -> least number of hops (1 for a step) for the piece on ``src``, by a
    breadth-first search over single hops written straight from the SPEC rules."""
    from collections import deque

    from halma_env.board import star_point

    lay = game.layout
    g = lay.geometry
    variant = game.rules.variant
    seat = game.to_move
    cells = dict(enumerate(game.board()))
    if cells[src] is None or cells[src][0] != seat:
        return {}
    is_king = cells[src][1]
    cells[src] = None  # the moving piece has left its start hole
    dirs = list((STAR_DIRS if g.kind == "star" else SQUARE_DIRS).values())
    by_grid = {rc: h for h, rc in enumerate(g.grid)}
    closed: set[int] = set()
    if variant == "diamond":
        home_pt = _diamond_point(lay, seat)
        for q in range(6):
            if q not in (home_pt, (home_pt + 3) % 6):
                closed.update(star_point(q))
    locked = variant == "halma16" and src in lay.goals[seat]
    goal = set(lay.goals[seat])

    def lands_ok(h: int) -> bool:
        return cells[h] is None and h not in closed and (not locked or h in goal)

    def nxt(h: int, d: tuple[int, int]) -> int:
        r, c = g.grid[h]
        return by_grid.get((r + d[0], c + d[1]), -1)

    hops: dict[int, int] = {}
    for d in dirs:
        n = nxt(src, d)
        if n >= 0 and lands_ok(n):
            hops[n] = 1
    depth = {src: 0}
    queue = deque([src])
    while queue:
        h = queue.popleft()
        for d in dirs:
            x = nxt(h, d)
            count = 0
            while x >= 0 and cells[x] is not None and not cells[x][1]:
                count += 1
                x = nxt(x, d)
                if not is_king:
                    break
            if count == 0 or x < 0:
                continue
            if cells[x] is not None:  # a king in the row, or (ordinary piece) two pieces in a row
                continue
            if (x == src or lands_ok(x)) and x not in depth:
                depth[x] = depth[h] + 1
                queue.append(x)
    for x, k in depth.items():
        if x != src and x not in hops:
            hops[x] = k
    return hops


def _diamond_point(lay, seat: int) -> int:
    from halma_env.board import star_tip

    return next(p for p in range(6) if star_tip(p) == lay.king_start[seat])


def reference_moves(game) -> set[tuple[int, int]]:
    """Every legal (src, dst) of the seat to move, by ``reference_destinations``."""
    if game.is_over:
        return set()
    seat = game.to_move
    return {(s, d) for s in game.pieces(seat) for d in reference_destinations(game, s)}


def scattered_position(variant: str, seats: int, rng, density: float | None = None) -> str:
    """A random well-formed position: pieces (and kings) of every seat on random holes, odd
    places and closed camps included; dense enough for rows and long jump chains."""
    lay = layout(variant, seats)
    holes = list(range(lay.geometry.num_holes))
    rng.shuffle(holes)
    density = rng.uniform(0.15, 0.6) if density is None else density
    per_seat = max(1, min(lay.max_pieces, int(density * len(holes) / seats)))
    pieces: dict[int, str] = {}
    for seat in range(seats):
        count = rng.randint(1, per_seat)
        mine = [holes.pop() for _ in range(count)]
        with_king = lay.has_kings and rng.random() < 0.8
        if lay.has_kings and not with_king and count == lay.max_pieces:
            holes.append(mine.pop())  # without its king a seat has at most max_pieces - 1 (SPEC §1)
        for i, h in enumerate(mine):
            pieces[h] = "ABCDEF"[seat] if with_king and i == 0 else str(seat)
    return position(variant, seats, pieces, to_move=rng.randrange(seats))


def endgame_position(variant: str, seats: int, rng) -> str:
    """A random near-finished position: each seat has most of its pieces on its goal holes and a
    few outside (diamond: the king on the tip, elsewhere in the goal or outside), so that random
    play finishes seats, completes goals with opponents' pieces, and meets every way to end."""
    lay = layout(variant, seats)
    n_holes = lay.geometry.num_holes
    pieces: dict[int, str] = {}
    taken: set[int] = set()
    for seat in range(seats):
        goal = list(lay.goals[seat])
        rng.shuffle(goal)
        total = lay.max_pieces - rng.choice([0, 0, 0, 1, 3])
        outside = min(total, rng.choice([0, 1, 1, 2, 3]))
        inside = [h for h in goal if h not in taken][: total - outside]
        free = [h for h in range(n_holes) if h not in taken and h not in inside]
        rng.shuffle(free)
        mine = inside + free[:outside]
        if lay.has_kings:
            tip = lay.goal_tip[seat]
            spot = tip if tip in mine and rng.random() < 0.5 else rng.choice(mine)
            king_at = spot
        else:
            king_at = None
        for h in mine:
            pieces[h] = "ABCDEF"[seat] if h == king_at else str(seat)
            taken.add(h)
    return position(variant, seats, pieces, to_move=rng.randrange(seats))


def one_move_from_finishing():
    """Star, 2 seats: seat 0 has goal holes 0-8 filled and its last piece next to hole 9 (seat 1
    in the middle of the board).  Returns the game and the moves that finish seat 0."""
    from halma_env import Game, Rules

    geometry = Game(Rules("star", 2)).geometry
    pieces = {h: "0" for h in range(9)}
    pieces[[h for h in geometry.neighbours[9] if h >= 10][0]] = "0"
    pieces.update({h: "1" for h in range(56, 66)})
    game = Game.from_position(position("star", 2, pieces, to_move=0))
    finishing = []
    for m in game.legal_moves():
        g = game.copy()
        g.play(m)
        if g.places[0] == 1:
            finishing.append(m)
    return game, finishing


def assert_within_budget(select_move, budget: float, label: str, tries: int = 3):
    """Call ``select_move()`` and check it kept to ``budget`` seconds: the CPU time of this thread
    (which neither other processes on a loaded machine nor other threads of this one, e.g. torch's
    spinning OpenMP workers, can inflate) within 50 ms of the budget, and its wall time within a
    second of it (the bot's deadline is wall-clock; scheduling on a busy CI box may add to it).

    A pause of the whole test process (a garbage-collector pass, say) can land inside one call and
    add 0.1-0.2 s that the bot cannot cut short (seen on CI), so the best of ``tries`` calls counts;
    a bot that ignores its budget overshoots every time (by seconds).  Returns the passing move."""
    last = ""
    for _ in range(tries):
        wall, cpu = time.perf_counter(), time.thread_time()
        move = select_move()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if cpu < budget + 0.05 and wall < budget + 1.0:
            return move
        last = f"{label} used {cpu:.3f}s of CPU ({wall:.3f}s of wall time) for a {budget}s budget"
    raise AssertionError(f"{last} (the last of {tries} calls, none within the budget)")


class UncopyablePlayer:
    """A player holding something deepcopy and pickle refuse (a lock, an onnxruntime session)."""

    def __init__(self, name: str = "uncopyable") -> None:
        self.name = name

    def __deepcopy__(self, memo: dict) -> UncopyablePlayer:
        raise TypeError("cannot pickle 'InferenceSession' object")

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]
