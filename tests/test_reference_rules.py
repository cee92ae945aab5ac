"""The engine against tests/reference_rules.py, an independent reading of docs/SPEC.md.

Only the engine's public API is used (Game, Rules, Rules.preset, Game.from_position, legal_moves, play,
resign, position, progress, is_over, places, end_reason, to_move, perft). At every position compared the
legal move sets, the boards, the seat to move, is_over, places and end_reason must agree.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import replace
from functools import cache
from typing import NamedTuple

import pytest

from halma_env import Game, Rules, perft
from tests.reference_rules import (
    SQUARE,
    STAR,
    STAR_ROW_WIDTHS,
    Layout,
    Options,
    Position,
    ReferenceGame,
    legal_moves,
    make_layout,
    moved,
    parse_position,
    start_pieces,
)

VARIANTS = [("star", n) for n in range(1, 7)] + [("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]


def default_options(variant: str) -> Options:
    """SPEC §4's defaults: anti-blocking except in halma16, threefold repetition in halma16."""
    halma16 = variant == "halma16"
    return Options(anti_blocking=not halma16, repetition_limit=3 if halma16 else None)


KAWU = {"play_to_end": False, "move_limit": 300, "limit_outcome": "progress"}  # SPEC §4's kawu preset


# ---------------------------------------------------------------------------------------------
# Comparing a game with the reference
# ---------------------------------------------------------------------------------------------


def engine_moves(game: Game) -> set[tuple[int, int]]:
    return set() if game.is_over else {(m.src, m.dst) for m in game.legal_moves()}


def assert_agree(game: Game, ref: ReferenceGame, trail: list) -> set[tuple[int, int]]:
    """Compares everything; returns the legal moves."""
    text = game.position()
    where = f"at {text} after {trail[-6:]}"
    engine_position = parse_position(text)
    assert (engine_position.pieces, engine_position.ply) == (ref.pieces, ref.ply), f"boards differ {where}"
    assert (game.is_over, game.end_reason, list(game.places)) == (ref.is_over, ref.end_reason, ref.places), where
    if not ref.is_over:
        assert game.to_move == ref.to_move, where
        engine, reference = engine_moves(game), ref.legal_moves()
        assert engine == reference, (f"engine only {sorted(engine - reference)[:8]}, "
                                     f"reference only {sorted(reference - engine)[:8]} {where}")
        return reference
    return set()


def assert_same_progress(game: Game, ref: ReferenceGame) -> None:
    for seat in range(ref.seats):
        assert tuple(game.progress(seat)) == tuple(ref.progress(seat)), f"seat {seat} at {game.position()}"


@cache
def target_hole(variant: str, seats: int, seat: int) -> int:
    """The goal hole farthest from home (diamond: the goal tip): where a greedy player heads."""
    layout = make_layout(variant, seats)
    if layout.goal_tips[seat] is not None:
        return layout.goal_tips[seat]
    home = layout.homes[seat]
    return max(layout.goals[seat], key=lambda g: (sum(layout.board.distance(g, h) for h in home), g))


def greedy_move(ref: ReferenceGame, moves: list[tuple[int, int]], rng: random.Random) -> tuple[int, int]:
    """Into the goal first, then closest to the far goal hole (kings count ten times)."""
    layout, seat = ref.layout, ref.to_move
    goal, distance = layout.goals[seat], layout.board.distance
    target = target_hole(layout.variant, layout.seats, seat)

    def score(move: tuple[int, int]) -> float:
        src, dst = move
        weight = 10 if ref.pieces[src].king else 1
        into_goal = (dst in goal) - (src in goal)
        return weight * (distance(dst, target) - distance(src, target)) - 3 * into_goal + rng.random()

    return min(moves, key=score)


def play_out(game: Game, ref: ReferenceGame, rng: random.Random, max_plies: int, greedy: float,
             resign_chance: float = 0.0) -> int:
    """Plays both side by side, comparing at every position; returns the number of positions compared."""
    trail: list = []
    compared = 0
    while True:
        moves = sorted(assert_agree(game, ref, trail))
        compared += 1
        if ref.is_over or len(trail) >= max_plies:
            break
        if rng.random() < resign_chance:
            seat = rng.choice(ref.undecided())
            game.resign(seat)
            ref.resign(seat)
            trail.append(f"resign {seat}")
            continue
        move = greedy_move(ref, moves, rng) if rng.random() < greedy else rng.choice(moves)
        game.play(move)
        ref.play(*move)
        trail.append(move)
    assert_same_progress(game, ref)
    return compared


# ---------------------------------------------------------------------------------------------
# 1. Random games from the start, every variant, seat count and option set
# ---------------------------------------------------------------------------------------------


class Config(NamedTuple):
    name: str
    variant: str
    seats: int
    changes: dict  # Rules keyword arguments, also Options fields (first_seat aside)
    resign_chance: float = 0.0


def configs() -> list[Config]:
    out = []
    for variant, n in VARIANTS:
        flipped = not default_options(variant).anti_blocking
        name = f"{variant}{n}"
        out += [
            Config(f"{name}-default", variant, n, {}),
            Config(f"{name}-anti_blocking={flipped}", variant, n, {"anti_blocking": flipped}),
            Config(f"{name}-move_limit-draw", variant, n, {"move_limit": 40}),
            Config(f"{name}-move_limit-progress", variant, n, {"move_limit": 61, "limit_outcome": "progress"}),
            Config(f"{name}-stall_limit", variant, n, {"stall_limit": 6}),
            Config(f"{name}-repetition_limit=2", variant, n, {"repetition_limit": 2}),
            Config(f"{name}-first_seat={n - 1}", variant, n, {"first_seat": n - 1}),
            Config(f"{name}-resign", variant, n, {}, resign_chance=0.01),
        ]
        if n >= 3:
            out += [
                Config(f"{name}-play_to_end=False", variant, n, {"play_to_end": False}),
                Config(f"{name}-play_to_end=False-resign", variant, n,
                       {"play_to_end": False, "anti_blocking": flipped}, resign_chance=0.01),
            ]
    out += [Config(f"kawu{n}", "star", n, {"preset": "kawu"}) for n in (2, 3, 4, 6)]
    out += [Config(f"qdan{n}", "star", n, {"preset": "qdan"}) for n in range(1, 7)]
    return out


CONFIGS = configs()


def new_games(config: Config) -> tuple[Game, ReferenceGame]:
    changes = dict(config.changes)
    preset = changes.pop("preset", None)
    if preset is not None:
        rules = Rules.preset(preset, config.seats)
        changes = dict(KAWU) if preset == "kawu" else {}
    else:
        rules = Rules(config.variant, config.seats, **changes)
    first_seat = changes.pop("first_seat", 0)
    options = replace(default_options(config.variant), **{k: v for k, v in changes.items() if k != "first_seat"})
    return Game(rules), ReferenceGame.new(config.variant, config.seats, options, first_seat)


def seeded(*parts: object) -> random.Random:
    return random.Random(zlib.crc32(repr(parts).encode()))


def run_random_games(config: Config, games: int, seed: int) -> int:
    rng = seeded(config.name, seed)
    compared = 0
    for _ in range(games):
        game, ref = new_games(config)
        greedy = rng.choice([0.0, 0.85, 0.95])  # purely random games wander: keep them short
        compared += play_out(game, ref, rng, max_plies=400 if greedy else 60, greedy=greedy,
                             resign_chance=config.resign_chance)
    return compared


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_random_games_agree(config: Config) -> None:
    assert run_random_games(config, games=1, seed=0) > 1


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_random_games_agree_sweep(config: Config) -> None:
    assert run_random_games(config, games=6, seed=1) > 6


# ---------------------------------------------------------------------------------------------
# Loaded random positions (pieces scattered, kings anywhere, odd piece counts)
# ---------------------------------------------------------------------------------------------

MAX_ORDINARY = {"star": 10, "diamond": 14}


def position_text(variant: str, seats: int, cells: dict[int, str], to_move: int = 0, ply: int = 0) -> str:
    """SPEC §3 notation for `cells` (hole -> '0'-'5' or 'A'-'F')."""
    if variant == "halma16":
        rows = [range(r * 16, r * 16 + 16) for r in range(16)]
    else:
        rows, start = [], 0
        for width in STAR_ROW_WIDTHS:
            rows.append(range(start, start + width))
            start += width
    board = "/".join("".join(cells.get(h, ".") for h in row) for row in rows)
    return f"{variant} {seats} {board} {to_move} {ply}"


def scattered_position(variant: str, seats: int, rng: random.Random) -> str:
    layout = make_layout(variant, seats)
    board = SQUARE if variant == "halma16" else STAR
    radius = rng.choice([3, 5]) if variant == "diamond" else -1  # dense diamond positions: kings among many pieces
    near_centre = [h for h in board.holes if board.distance(h, 60) <= radius]
    cells: dict[int, str] = {}

    def place(pool: list[int] | frozenset[int], char: str) -> None:
        free = [h for h in pool if h not in cells] or [h for h in board.holes if h not in cells]
        cells[rng.choice(free)] = char

    for seat in range(seats):
        most = MAX_ORDINARY.get(variant, 19 if seats == 2 else 13)
        for _ in range(most if rng.random() < 0.7 else rng.randint(0, most)):
            pick = rng.random()
            pool = (layout.goals[seat] if pick < 0.35 else layout.homes[seat] if pick < 0.5
                    else near_centre if pick < 0.8 and near_centre else board.holes)
            place(sorted(pool), str(seat))
        if layout.has_kings and rng.random() < 0.85:
            pool = [layout.goal_tips[seat]] if rng.random() < 0.3 else near_centre or list(board.holes)
            place(pool, "ABCDEF"[seat])
    return position_text(variant, seats, cells, rng.randrange(seats), rng.choice([0, 0, 5, 199]))


def random_option_changes(variant: str, seats: int, rng: random.Random) -> dict:
    pick = rng.random()
    if pick < 0.2:
        return {"anti_blocking": not default_options(variant).anti_blocking}
    if pick < 0.3 and seats >= 3:
        return {"play_to_end": False}
    if pick < 0.4:
        return {"move_limit": rng.choice([5, 200]), "limit_outcome": rng.choice(["draw", "progress"])}
    if pick < 0.5:
        return {"stall_limit": rng.choice([2, 6])}
    if pick < 0.55:
        return {"repetition_limit": 2}
    return {}


def run_loaded_positions(variant: str, seats: int, loads: int, seed: int) -> int:
    rng = seeded(variant, seats, seed)
    compared = 0
    for _ in range(loads):
        text = scattered_position(variant, seats, rng)
        changes = random_option_changes(variant, seats, rng)
        game = Game.from_position(text, **changes)
        ref = ReferenceGame(parse_position(text), replace(default_options(variant), **changes))
        compared += play_out(game, ref, rng, max_plies=rng.choice([3, 30]), greedy=rng.choice([0.0, 0.7]),
                             resign_chance=rng.choice([0.0, 0.05]))
    return compared


@pytest.mark.parametrize(("variant", "seats"), VARIANTS, ids=[f"{v}{n}" for v, n in VARIANTS])
def test_loaded_positions_agree(variant: str, seats: int) -> None:
    assert run_loaded_positions(variant, seats, loads=30, seed=0) >= 30


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "seats"), VARIANTS, ids=[f"{v}{n}" for v, n in VARIANTS])
def test_loaded_positions_agree_sweep(variant: str, seats: int) -> None:
    assert run_loaded_positions(variant, seats, loads=150, seed=1) >= 150


# ---------------------------------------------------------------------------------------------
# 2. Hand-built positions for the tricky clauses
# ---------------------------------------------------------------------------------------------


class Case(NamedTuple):
    text: str
    options: dict = {}
    actions: tuple = ()  # (src, dst) moves, or ("resign", seat)
    expected_from: tuple[int, set[int]] | None = None  # (src, the holes it must reach) before the actions


def star(cells: dict[int, str], seats: int = 2, **kw) -> str:
    return position_text("star", seats, cells, **kw)


def diamond(cells: dict[int, str], seats: int = 2, **kw) -> str:
    return position_text("diamond", seats, cells, **kw)


def halma16(cells: dict[int, str], seats: int = 2, **kw) -> str:
    return position_text("halma16", seats, cells, **kw)


def at_ply(text: str, ply: int) -> str:
    return f"{text.rsplit(' ', 1)[0]} {ply}"


def fill(holes, char: str) -> dict[int, str]:
    return {h: char for h in holes}


BOTTOM_POINT_ALMOST = {**fill(range(112, 121), "1"), 102: "0", 0: "0", 30: "1"}  # seat 0 completes with 102-111
FOUR_SEATS_ALMOST = {**fill(range(112, 121), "2"), 102: "0", 5: "2", 30: "1"}
BOTH_HOME = {**fill(range(111, 121), "1"), **fill(range(0, 10), "0")}
DIAMOND_GOAL_WITH_EDGE = {0: "A", **fill(range(1, 10), "0"), **fill(range(14, 19), "1"), **fill(range(60, 65), "0"),
                          35: "B"}
KINGLESS_IN_GOAL = fill([*range(0, 10), 14, 15, 16, 17], "0")
NEAR_FINISH = {**fill([0, 1, 2, 3, 4, 5, 7, 8, 9, 14], "0"), **fill([*range(56, 65), 70], "1")}

CASES = {
    "S1-diamond-king-jumps-a-row": Case(diamond({56: "A", 57: "1", 58: "1", 35: "B"}),
                                        expected_from=(56, {47, 66, 59})),
    "S1-diamond-king-row-stops-at-a-king": Case(diamond({56: "A", 57: "1", 58: "B"}), expected_from=(56, {47, 66})),
    "S1-diamond-nobody-jumps-a-king": Case(diamond({56: "0", 57: "B", 120: "A"}), expected_from=(56, {47, 66})),
    "S1-diamond-ordinary-jumps-one": Case(diamond({56: "0", 57: "1", 120: "A", 35: "B"}),
                                          expected_from=(56, {47, 66, 58})),
    "S1-diamond-ordinary-never-jumps-a-row": Case(diamond({56: "0", 57: "1", 58: "1", 120: "A", 35: "B"}),
                                                  expected_from=(56, {47, 66})),
    "S1-diamond-king-chains-row-jumps": Case(diamond({56: "A", 57: "0", 58: "0", 59: "0", 35: "B", 70: "1"})),
    "S1-diamond-king-never-lands-on-a-closed-point": Case(diamond({41: "A", 42: "1", 43: "1", 35: "B"})),
    "S1-diamond-start-hole-empty-during-a-jump": Case(diamond({58: "A", 57: "1", 59: "1", 60: "1", 35: "B"})),
    "S1-diamond-closed-point-even-mid-chain": Case(diamond({53: "0", 54: "1", 43: "1", 64: "1", 120: "A", 35: "B"}),
                                                   expected_from=(53, {42, 52, 62, 63})),
    "S1-pass-when-stuck": Case(star({120: "0", 118: "1", 119: "1", 115: "1", 117: "1", 0: "1"})),
    "S1-diamond-nobody-can-move": Case(diamond({98: "0", 120: "1"})),
    "S1-diamond-one-seat-stuck": Case(diamond({98: "0", 120: "1", 60: "1"})),
    "S1-diamond-lone-piece-boxed-by-closed-points": Case(diamond({98: "0"})),
    "S1-anti-blocking-opponent-completes-goal": Case(star(BOTTOM_POINT_ALMOST), actions=((102, 111),)),
    "S1-anti-blocking-off-opponent-cannot-complete": Case(star(BOTTOM_POINT_ALMOST), {"anti_blocking": False},
                                                          ((102, 111),)),
    "S1-anti-blocking-four-seats-opponent-completes": Case(star(FOUR_SEATS_ALMOST, 4), actions=((102, 111),)),
    "S4-play_to_end-off-first-finish-by-opponent": Case(star(FOUR_SEATS_ALMOST, 4), {"play_to_end": False},
                                                        ((102, 111),)),
    "S4-resigned-seat-goal-completed": Case(star(FOUR_SEATS_ALMOST, 4), actions=(("resign", 2), (102, 111))),
    "S1-both-seats-finished-when-loaded": Case(star(BOTH_HOME)),
    "S1-anti-blocking-own-piece-in-blocked-goal": Case(star({**BOTH_HOME, 111: "0", 9: "1"})),
    "S1-diamond-goal-filled-through-edge-row": Case(diamond(DIAMOND_GOAL_WITH_EDGE)),
    "S1-diamond-anti-blocking-off-edge-row-blocks": Case(diamond(DIAMOND_GOAL_WITH_EDGE), {"anti_blocking": False}),
    "S1-diamond-king-off-the-tip": Case(diamond({**DIAMOND_GOAL_WITH_EDGE, 0: "0", 1: "A"})),
    "S1-fewer-pieces-all-in-goal": Case(star({0: "0", 1: "0", 2: "0", 60: "1", 61: "1"})),
    "S1-fewer-pieces-all-in-goal-anti-blocking-off": Case(star({0: "0", 1: "0", 2: "0", 60: "1", 61: "1"}),
                                                          {"anti_blocking": False}),
    "S1-solitaire-fewer-pieces-in-goal": Case(star({0: "0", 1: "0", 2: "0"}, 1)),
    "S4-seat-without-pieces-never-finishes": Case(star({60: "1"})),
    "S1-diamond-seat-without-king-needs-only-goal": Case(diamond({**KINGLESS_IN_GOAL, 35: "B", 60: "1"})),
    "S4-diamond-kingless-remaining-distance": Case(diamond({**KINGLESS_IN_GOAL, 0: ".", 60: "0", 35: "B", 70: "1"})),
    "S4-progress-ties-share-a-place": Case(at_ply(Game(Rules("star", 3)).position(), 12),
                                           {"move_limit": 5, "limit_outcome": "progress"}),
    "S1-halma16-goal-lock": Case(halma16({50: "0", 51: "1", 255: "1", 200: "0"}),
                                 expected_from=(50, {33, 34, 35, 49, 65})),
    "S1-halma16-outside-piece-crosses-goal": Case(halma16({52: "0", 51: "1", 35: "1", 255: "1"})),
    "S1-halma16-goal-lock-each-hop": Case(halma16({35: "0", 36: "1", 20: "1", 255: "1", 200: "0"}),
                                          expected_from=(35, {18, 19, 34, 50})),
    "S4-finish-on-the-move-limit-ply": Case(star(NEAR_FINISH, ply=9), {"move_limit": 10}, ((14, 6),)),
    "S4-finish-on-the-stall-limit-ply": Case(star(NEAR_FINISH, ply=9), {"stall_limit": 1}, ((14, 6),)),
    "S4-move-limit-ranks-by-progress": Case(star(NEAR_FINISH, ply=9), {"move_limit": 10, "limit_outcome": "progress"},
                                            ((14, 27),)),
    "S4-loaded-at-the-move-limit": Case(star(NEAR_FINISH, ply=12), {"move_limit": 10, "limit_outcome": "progress"}),
    "S4-resign-seat-to-move-three-seats": Case(Game(Rules("star", 3)).position(), actions=(("resign", 0),
                                                                                           ("resign", 1))),
    "S4-resign-two-seats-not-on-turn": Case(Game(Rules("star", 2)).position(), actions=(("resign", 1),)),
    "S4-resign-solitaire": Case(Game(Rules("star", 1)).position(), actions=(("resign", 0),)),
    "S4-repetition-threefold": Case(Game(Rules("star", 2)).position(), {"repetition_limit": 3},
                                    ((113, 104), (6, 15), (104, 113), (15, 6)) * 2),
    "S4-halma16-default-threefold-repetition": Case(
        halma16({255: "0", 0: "1"}), actions=((255, 238), (0, 17), (238, 255), (17, 0)) * 2),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_tricky_position(case: Case) -> None:
    position = parse_position(case.text)
    game = Game.from_position(case.text, **case.options)
    ref = ReferenceGame(position, replace(default_options(position.layout.variant), **case.options))
    if case.expected_from is not None:
        src, holes = case.expected_from
        assert {d for s, d in legal_moves(position.layout, position.pieces, position.to_move) if s == src} == holes
        assert {d for s, d in engine_moves(game) if s == src} == holes
    trail: list = []
    assert_agree(game, ref, trail)
    assert_same_progress(game, ref)
    for action in case.actions:
        if action[0] == "resign":
            game.resign(action[1])
            ref.resign(action[1])
        else:
            game.play(action)
            ref.play(*action)
        trail.append(action)
        assert_agree(game, ref, trail)
        assert_same_progress(game, ref)


# ---------------------------------------------------------------------------------------------
# 3. Perft
# ---------------------------------------------------------------------------------------------


def reference_perft(layout: Layout, position: Position, depth: int) -> int:
    """SPEC §6: distinct (src, dst) sequences, seats in turn order (no passes or finishes at these depths)."""
    if depth == 0:
        return 1
    after = (position.to_move + 1) % layout.seats
    return sum(reference_perft(layout, Position(layout, moved(position.pieces, *m), after, 0), depth - 1)
               for m in legal_moves(layout, position.pieces, position.to_move))


PERFT_DEPTH = {("star", 2): 3, ("diamond", 2): 2, ("diamond", 3): 2, ("halma16", 2): 2}


@pytest.mark.parametrize(("variant", "seats"), VARIANTS, ids=[f"{v}{n}" for v, n in VARIANTS])
def test_perft_agrees(variant: str, seats: int) -> None:
    layout = make_layout(variant, seats)
    start = Position(layout, start_pieces(layout), 0, 0)
    depth = PERFT_DEPTH.get((variant, seats), 2)
    game = Game(Rules(variant, seats))
    assert [perft(game, d) for d in range(1, depth + 1)] == [reference_perft(layout, start, d)
                                                             for d in range(1, depth + 1)]
