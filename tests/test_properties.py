"""Property tests (hypothesis) over random games of every variant and seat count."""

from __future__ import annotations

import random

import pytest
from engine_helpers import reference_hops, reference_moves, scattered_position
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halma_env import Game, GameRecord, IllegalMoveError, Rules

VARIANTS = [("star", n) for n in range(1, 7)] + [("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

variants = st.sampled_from(VARIANTS)
seeds = st.integers(0, 2**32 - 1)
options = st.fixed_dictionaries(
    {},
    optional={
        "anti_blocking": st.booleans(),
        "play_to_end": st.booleans(),
        "move_limit": st.integers(5, 120),
        "limit_outcome": st.sampled_from(["draw", "progress"]),
        "stall_limit": st.integers(2, 30),
        "repetition_limit": st.integers(2, 4) | st.none(),
    },
)


def _random_game(variant: str, seats: int, seed: int, opts: dict, plies: int) -> tuple[Game, random.Random]:
    """A game after up to ``plies`` random moves, with an occasional resignation (3+ seats)."""
    rng = random.Random(seed)
    first = rng.randrange(seats)
    game = Game(Rules(variant, seats, first_seat=first, **opts))
    for _ in range(plies):
        if game.is_over:
            break
        if seats >= 3 and rng.random() < 0.01:
            active = [s for s, st_ in enumerate(game.status) if st_ == "active"]
            game.resign(rng.choice(active))
            continue
        game.play(rng.choice(game.legal_moves()))
    return game, rng


def _state(game: Game) -> tuple:
    return (
        game.position(), game.to_move, game.ply, game.places, game.status, game.end_reason,
        game.history, game.moves, [game.progress(s) for s in range(game.num_players)], game.legal_moves(),
    )


@FAST
@given(variants, seeds, options, st.integers(0, 150))
def test_play_then_undo_restores_everything(vs, seed, opts, plies) -> None:
    game, rng = _random_game(*vs, seed, opts, plies)
    if game.is_over:
        return
    twin = game.copy()
    before = _state(game)
    for move in rng.sample(game.legal_moves(), min(5, game.count_moves())):
        game.play(move)
        game.undo()
        assert _state(game) == before
    # hidden state (repetition counts, stall counter, best progress) must match too: the game
    # and its untouched copy go on identically
    for _ in range(40):
        if game.is_over:
            break
        move = rng.choice(game.legal_moves())
        game.play(move)
        twin.play(move)
        assert _state(game) == _state(twin)
    assert twin.is_over == game.is_over


@FAST
@given(variants, seeds, options, st.integers(0, 150))
def test_every_legal_move_applies_and_others_are_refused(vs, seed, opts, plies) -> None:
    game, rng = _random_game(*vs, seed, opts, plies)
    if game.is_over:
        return
    seat = game.to_move
    legal = game.legal_moves()
    assert legal == sorted(legal) and len(set(legal)) == len(legal) == game.count_moves()
    for move in legal:
        assert game.piece_at(move.src)[0] == seat and game.piece_at(move.dst) is None
        assert move.dst in game.legal_destinations(move.src)
        child = game.copy()
        child.play(move)
        assert child.piece_at(move.dst) == game.piece_at(move.src) and child.piece_at(move.src) is None
        assert child.ply == game.ply + 1
    legal_set = {(m.src, m.dst) for m in legal}
    n = game.geometry.num_holes
    own = game.pieces(seat)
    before = game.position()
    tries = [(rng.choice(own), rng.randrange(n)) for _ in range(30)] + [(rng.randrange(n), rng.randrange(n))]
    for src, dst in tries:
        if (src, dst) in legal_set:
            continue
        try:
            game.play((src, dst))
        except IllegalMoveError:
            pass
        else:
            raise AssertionError(f"{src}-{dst} is not in the legal list but was accepted")
        assert game.position() == before


@FAST
@given(variants, seeds, options, st.integers(0, 150))
def test_position_text_round_trips(vs, seed, opts, plies) -> None:
    game, _ = _random_game(*vs, seed, opts, plies)
    text = game.position()
    again = Game.from_position(text, **opts)
    assert again.position() == text
    assert again.board() == game.board()
    if not game.is_over and not again.is_over:
        assert again.legal_moves() == game.legal_moves()


@FAST
@given(variants, seeds, options, st.integers(0, 150), st.sampled_from(["start", "scattered", "endgame"]))
def test_records_replay_to_the_same_game(vs, seed, opts, plies, start) -> None:
    from engine_helpers import endgame_position

    if start == "start":
        game, _ = _random_game(*vs, seed, opts, plies)
    else:
        rng = random.Random(seed)
        make = scattered_position if start == "scattered" else endgame_position
        game = Game.from_position(make(*vs, rng), **opts)
        for _ in range(plies // 3):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
    record = GameRecord.from_json(GameRecord.from_game(game).to_json())
    replayed = record.replay()
    assert _state(replayed) == _state(game)


def _check_path(game: Game, move) -> None:
    path = move.path
    assert path[0] == move.src and path[-1] == move.dst and len(path) >= 2
    g = game.geometry
    cells = game.board()
    cells[move.src] = None  # the moving piece has left its start hole
    is_king = game.piece_at(move.src)[1]
    if len(path) == 2 and path[1] in g.neighbours[path[0]]:
        return  # a single step
    for a, b in zip(path, path[1:]):
        assert cells[b] is None, f"hop {a}->{b} lands on a piece"
        (ra, ca), (rb, cb) = g.grid[a], g.grid[b]
        dr, dc = rb - ra, cb - ca
        span = max(abs(dr), abs(dc))
        assert span >= 2 and dr % span == 0 and dc % span == 0, f"{a}->{b} is not a straight hop"
        ur, uc = dr // span, dc // span
        assert (ur, uc) in _unit_dirs(g.kind), f"{a}->{b} is not along a board direction"
        by_grid = {rc: h for h, rc in enumerate(g.grid)}
        over = [by_grid[(ra + ur * k, ca + uc * k)] for k in range(1, span)]
        assert all(cells[h] is not None and not cells[h][1] for h in over), f"{a}->{b} must hop over non-king pieces"
        if not is_king:
            assert span == 2, "an ordinary piece hops over exactly one piece"


def _unit_dirs(kind: str) -> set[tuple[int, int]]:
    if kind == "star":
        return {(0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0)}
    return {(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)}


@FAST
@given(variants, seeds, st.integers(0, 150))
def test_move_paths_are_valid_chains(vs, seed, plies) -> None:
    game, _ = _random_game(*vs, seed, {}, plies)
    for move in game.legal_moves():
        _check_path(game, move)


@settings(max_examples=60, deadline=None)
@given(variants, seeds, st.booleans())
def test_moves_match_an_independent_reference(vs, seed, scattered) -> None:
    """The engine's move sets equal a slow search written straight from the SPEC rules, on random
    game positions and on random scattered ones (kings in rows, closed camps, goal locks)."""
    rng = random.Random(seed)
    if scattered:
        game = Game.from_position(scattered_position(*vs, rng))
    else:
        game, _ = _random_game(*vs, seed, {}, rng.randrange(0, 200))
    expected = reference_moves(game)
    assert {(m.src, m.dst) for m in game.legal_moves()} == expected
    shortest: dict[int, dict[int, int]] = {}
    for move in game.legal_moves()[:40]:
        _check_path(game, move)
        if move.src not in shortest:
            shortest[move.src] = reference_hops(game, move.src)
        assert len(move.path) - 1 == shortest[move.src][move.dst], "Move.path must be a shortest path"


def test_scattered_positions_exercise_the_special_rules() -> None:
    """Guard against a vacuous reference check: the scattered positions do produce king row jumps
    over 2+ pieces, steps that a closed camp forbids, and goal-locked pieces next to the way out."""
    rng = random.Random(1)
    hits = {"king_row": 0, "closed": 0, "lock": 0}
    for _ in range(150):
        vs = rng.choice([("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)])
        game = Game.from_position(scattered_position(*vs, rng, density=0.5))
        if game.is_over:
            continue
        g, lay, seat = game.geometry, game.layout, game.to_move
        for m in game.legal_moves():
            for a, b in zip(m.path, m.path[1:]):
                (ra, ca), (rb, cb) = g.grid[a], g.grid[b]
                hits["king_row"] += max(abs(rb - ra), abs(cb - ca)) > 2
        for h in game.pieces(seat):
            empty = [n for n in g.neighbours[h] if game.piece_at(n) is None]
            if vs[0] == "diamond":
                hits["closed"] += any(not lay.open_holes[seat] >> g.bit[n] & 1 for n in empty)
            elif h in lay.goals[seat]:
                hits["lock"] += any(n not in lay.goals[seat] for n in empty)
    assert all(v > 0 for v in hits.values()), hits


def _ranking_is_consistent(game: Game) -> bool:
    """Over: competition ranking (a seat on place p has exactly p - 1 seats placed better).
    Running: finished seats rank 1, 2, ... (seats finished in a loaded position share a place),
    resigned seats hold distinct places n, n-1, ..., everyone else is undecided."""
    places, status, n = game.places, game.status, game.num_players
    if game.is_over:
        return None not in places and all(sum(q < p for q in places) == p - 1 for p in places)
    top = [p for p, st_ in zip(places, status) if st_ == "finished"]
    bottom = sorted(p for p, st_ in zip(places, status) if st_ == "resigned")
    undecided = [p for p, st_ in zip(places, status) if st_ == "active"]
    return (
        all(sum(q < p for q in top) == p - 1 for p in top)
        and bottom == list(range(n - len(bottom) + 1, n + 1))
        and undecided == [None] * len(undecided)
    )


@settings(max_examples=30, deadline=None)
@given(variants, seeds, options)
def test_endgame_invariants(vs, seed, opts) -> None:
    """Near-finished random positions played out at random: places always form a consistent
    ranking, finished and resigned seats never move again, the seat to move can move, a game
    that is over has every place, and undo puts back every outcome."""
    from engine_helpers import endgame_position

    rng = random.Random(seed)
    game = Game.from_position(endgame_position(*vs, rng), **opts)
    done_before: set[int] = set()
    for _ in range(60):
        assert _ranking_is_consistent(game), (game.places, game.status)
        if game.is_over:
            assert None not in game.places and game.legal_moves() == []
            assert game.end_reason in ("finished", "first_finish", "resign", "move_limit", "stall_limit",
                                       "repetition", "no_moves")
            break
        seat = game.to_move
        assert game.status[seat] == "active" and game.places[seat] is None and game.count_moves() > 0
        assert seat not in done_before
        before = _state(game)
        if game.num_players >= 3 and rng.random() < 0.03:
            game.resign(rng.choice([s for s, x in enumerate(game.status) if x == "active"]))
        else:
            game.play(rng.choice(game.legal_moves()))
        after = _state(game)
        game.undo()
        assert _state(game) == before
        # redo the same event
        last = after[6][len(before[6]):]
        event = next(e for e in last if e.kind != "pass")
        if event.kind == "resign":
            game.resign(event.seat)
        else:
            game.play(event.move)
        assert _state(game) == after
        done_before = {s for s, x in enumerate(game.status) if x != "active"}


@FAST
@given(variants, seeds, st.integers(-(2**70), 2**70))
def test_hole_and_seat_arguments_out_of_range_are_refused(vs, seed, k) -> None:
    """Every integer is either a hole/seat of the game or refused with the range named (no
    wrap-around of negative values, no raw IndexError); nothing changes either way."""
    game, _ = _random_game(*vs, seed, {}, 20)
    before = _state(game)
    holes, seats = game.geometry.num_holes, game.num_players
    for call, size, name in ((game.piece_at, holes, "hole"), (game.legal_destinations, holes, "hole"),
                             (game.pieces, seats, "seat"), (game.progress, seats, "seat")):
        if 0 <= k < size:
            call(k)
        else:
            with pytest.raises(ValueError, match=f"{name} must be 0..{size - 1}, got {k}"):
                call(k)
    assert _state(game) == before


@FAST
@given(variants, seeds, st.integers(0, 60))
def test_loaded_positions_move_first_with_their_seat_to_move(vs, seed, plies) -> None:
    game, _ = _random_game(*vs, seed, {}, plies)
    text = game.position()
    loaded = Game.from_position(text)
    assert loaded.rules.first_seat == int(text.split(" ")[3])
    assert Game.from_position(text, first_seat=loaded.rules.first_seat).position() == text
    other = (loaded.rules.first_seat + 1) % game.num_players
    if other != loaded.rules.first_seat:
        with pytest.raises(ValueError, match="the position has seat"):
            Game.from_position(text, first_seat=other)
