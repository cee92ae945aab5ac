"""legal_moves() as built since the speed-up (docs/engine.md, Speed): shared read-only step Moves
from a table, jump Moves made per call, (src, dst) order kept without sorting every source."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from halma_env import Game, Move, Rules
from halma_env.game import random_playout

CASES = [("star", 2), ("star", 3), ("star", 6), ("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]


def _positions(variant: str, seats: int, count: int, seed: int) -> list[Game]:
    rng = random.Random(seed)
    games = []
    while len(games) < count:
        game = Game(Rules(variant, seats))
        random_playout(game, rng, max_plies=rng.randint(0, 120))
        if not game.is_over:
            games.append(game)
    return games


def _from_masks(game: Game) -> list[tuple[int, int]]:
    """The move list read straight off the generator's bit sets, independently of legal_moves()."""
    hob = game.geometry.hole_of_bit
    pairs = []
    for b, dests in game._move_masks(game.to_move).items():
        pairs += [(hob[b], hob[x]) for x in range(dests.bit_length()) if dests >> x & 1]
    return sorted(pairs)


@pytest.mark.parametrize(("variant", "seats"), CASES)
def test_legal_moves_are_the_generated_set_in_src_dst_order(variant: str, seats: int) -> None:
    for game in _positions(variant, seats, 25, seed=seats):
        moves = game.legal_moves()
        assert [(m.src, m.dst) for m in moves] == _from_masks(game)
        assert all(isinstance(m, Move) for m in moves)
        g = game.geometry
        for m in moves:
            if m.dst in g.neighbours[m.src]:
                assert m.path == (m.src, m.dst)  # a step, whatever the table entry
            else:
                assert len(m.path) >= 2 and m.path[0] == m.src and m.path[-1] == m.dst


def _hop_path_is_valid(text: str, path: tuple[int, ...]) -> bool:
    """Each hop of ``path`` jumps over a piece onto an empty hole, in the position ``text``."""
    game = Game.from_position(text)
    g = game.geometry
    where = {rc: h for h, rc in enumerate(g.grid)}
    for a, b in zip(path, path[1:]):
        (ra, ca), (rb, cb) = g.grid[a], g.grid[b]
        if (ra + rb) % 2 or (ca + cb) % 2:
            return False
        mid = where.get(((ra + rb) // 2, (ca + cb) // 2))
        if mid is None or mid not in g.neighbours[a] or mid not in g.neighbours[b]:
            return False
        if game.piece_at(mid) is None or game.piece_at(b) is not None:
            return False
    return True


def test_a_kept_jump_move_keeps_the_path_of_its_own_position() -> None:
    rng = random.Random(7)
    for game in _positions("star", 2, 30, seed=11):
        text = game.position()
        jumps = [m for m in game.legal_moves() if len(m.path or ()) > 3]
        if not jumps:
            continue
        kept = rng.choice(jumps)
        expected = Game.from_position(text)
        shortest = {(m.src, m.dst): len(m.path) for m in expected.legal_moves()}
        # change the position under the kept move before its path is first asked for again
        game.play(kept)
        for _ in range(4):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        kept_copy = Move(kept.src, kept.dst)
        assert kept == kept_copy
        fresh = [m for m in Game.from_position(text).legal_moves() if m == kept][0]
        assert len(fresh.path) == shortest[(kept.src, kept.dst)]
        assert kept.path[0] == kept.src and kept.path[-1] == kept.dst
        assert len(kept.path) == shortest[(kept.src, kept.dst)]
        assert _hop_path_is_valid(text, kept.path)
        return
    pytest.fail("no position with a multi-hop jump in the sample")


def test_a_jump_move_asked_for_its_path_later_uses_the_generating_position() -> None:
    """Path asked for only after other moves were played and undone and played again."""
    for game in _positions("star", 3, 40, seed=3):
        text = game.position()
        long_jumps = [m for m in game.legal_moves() if len(m.path) > 3]
        if not long_jumps:
            continue
        fresh = game.legal_moves()  # new objects, paths not computed yet
        target = [m for m in fresh if m == long_jumps[0]][0]
        game.play(fresh[0])
        game.play(game.legal_moves()[-1])
        assert target.path == long_jumps[0].path
        assert _hop_path_is_valid(text, target.path)
        return
    pytest.fail("no position with a multi-hop jump in the sample")


def test_moves_pickle_and_copy_with_their_path() -> None:
    game = _positions("star", 2, 1, seed=5)[0]
    moves = game.legal_moves()
    step = next(m for m in moves if m.dst in game.geometry.neighbours[m.src])
    jump = next(m for m in moves if m.dst not in game.geometry.neighbours[m.src])
    for move in (step, jump, Move(113, 104), Move(113, 104, (113, 104))):
        for clone in (pickle.loads(pickle.dumps(move)), copy.copy(move), copy.deepcopy(move)):
            assert type(clone) is Move
            assert clone == move and hash(clone) == hash(move)
            assert (clone.src, clone.dst, clone.path) == (move.src, move.dst, move.path)
    # a pickled jump carries its path, not the position: it stays small
    assert len(pickle.dumps(jump)) < 200


def test_shared_step_moves_are_read_only_and_compare_like_any_move() -> None:
    game = Game(Rules("star", 2))
    first = game.legal_moves()
    again = Game(Rules("star", 2)).legal_moves()
    assert first == again
    step = first[0]
    with pytest.raises(AttributeError):
        step.src = 0
    with pytest.raises(AttributeError):
        del step.dst
    assert (step.src, step.dst) == tuple(step)
    assert step == (step.src, step.dst) and (step.src, step.dst) == step
    assert step == Move(step.src, step.dst) and hash(step) == hash((step.src, step.dst))
    assert str(step) == f"{step.src}-{step.dst}" and repr(step) == f"Move({step.src}, {step.dst})"
    assert sorted(reversed(first)) == first
    # playing a shared step records it with its path, and the table entry is unchanged
    game.play(step)
    assert game.moves[-1] == step and game.moves[-1].path == (step.src, step.dst)
    assert Game(Rules("star", 2)).legal_moves()[0] is step


def test_move_objects_made_by_legal_moves_are_independent_per_call() -> None:
    game = _positions("star", 2, 1, seed=9)[0]
    a, b = game.legal_moves(), game.legal_moves()
    neighbours = game.geometry.neighbours
    jumps_a = [m for m in a if m.dst not in neighbours[m.src]]
    jumps_b = [m for m in b if m.dst not in neighbours[m.src]]
    assert jumps_a
    assert jumps_a == jumps_b
    assert all(x is not y for x, y in zip(jumps_a, jumps_b))


def test_hole_and_seat_arguments_are_checked_not_wrapped() -> None:
    """Out of range and negative holes/seats are refused (no wrap-around to the last one)."""
    with pytest.raises(TypeError, match=r"Game takes a Rules, e\.g\. Game\(Rules\('star', 2\)\), got 'star'"):
        Game("star")  # type: ignore[arg-type]
    game = Game(Rules("star", 2))
    before = game.position()
    for hole in (121, -1):
        with pytest.raises(ValueError, match=f"hole must be 0..120, got {hole}"):
            game.piece_at(hole)
        with pytest.raises(ValueError, match=f"hole must be 0..120, got {hole}"):
            game.legal_destinations(hole)
    for seat in (2, -1):
        with pytest.raises(ValueError, match=f"seat must be 0..1, got {seat}"):
            game.pieces(seat)
        with pytest.raises(ValueError, match=f"seat must be 0..1, got {seat}"):
            game.progress(seat)
    for bad in ("a", 1.0, True, None):
        with pytest.raises(TypeError, match="hole must be an integer 0..120"):
            game.legal_destinations(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="hole must be an integer 0..120"):
            game.piece_at(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="seat must be an integer 0..1"):
            game.pieces(bad)  # type: ignore[arg-type]
    assert game.position() == before
    np = pytest.importorskip("numpy")
    assert game.piece_at(np.int64(113)) == (0, False) and game.pieces(np.int8(1)) == list(range(10))
    assert game.legal_destinations(np.int32(113)) == game.legal_destinations(113) != []
    assert game.progress(np.int64(0)) == game.progress(0)


def test_moves_order_only_against_moves() -> None:
    """``<`` between a Move and anything else is a TypeError (as for tuples and ints), not an
    AttributeError from inside the comparison."""
    assert Move(1, 2) < Move(1, 3) and not Move(1, 3) < Move(1, 2)
    for other in (5, (1, 3), "1-3", None):
        with pytest.raises(TypeError):
            Move(1, 2) < other  # type: ignore[operator]  # noqa: B015
    with pytest.raises(TypeError):
        sorted([Move(1, 2), (0, 1)])


def test_move_parse_refuses_non_text_and_overlong_numbers() -> None:
    from halma_env import IllegalMoveError

    for bad in (5, None, b"1-2", (1, 2)):
        with pytest.raises(IllegalMoveError, match="a move is written 'src-dst'"):
            Move.parse(bad)  # type: ignore[arg-type]
    huge = "9" * 5000
    with pytest.raises(IllegalMoveError, match="hole number"):
        Move.parse(f"{huge}-1")
    game = Game(Rules("star", 2))
    before = game.position()
    with pytest.raises(IllegalMoveError, match="hole number"):
        game.play(f"1-{huge}")
    assert game.position() == before and game.history == []


@pytest.mark.parametrize("depth", [1.5, "2", None, True, -1])
def test_perft_refuses_a_bad_depth_and_leaves_the_game_alone(depth) -> None:
    from halma_env import perft

    game = Game(Rules("star", 3))
    random_playout(game, random.Random(4), 7)
    before = (game.position(), game.history, game.ply)
    with pytest.raises((TypeError, ValueError), match="depth"):
        perft(game, depth)
    assert (game.position(), game.history, game.ply) == before
    assert perft(game, 2) == perft(game.copy(), 2)


def test_perft_leaves_the_game_as_it_was_when_interrupted() -> None:
    """An exception inside the search (here: a KeyboardInterrupt from a patched play) must not
    leave moves played on the caller's game."""
    from halma_env import perft

    game = Game(Rules("star", 2))
    before = game.position()
    calls = 0
    real_play = game.play

    def play(move) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        real_play(move)

    game.play = play  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        perft(game, 3)
    assert game.position() == before and game.history == []


def test_a_pickled_game_is_small_and_plays_on() -> None:
    """A Game pickles without its per-variant lookup tables (rebuilt from the cache on load)."""
    for variant, seats in CASES:
        game = _positions(variant, seats, 1, seed=2)[0]
        data = pickle.dumps(game)
        assert b"_Tables" not in data and len(data) < 60_000, (variant, seats, len(data))
        again = pickle.loads(data)
        assert again.position() == game.position() and again.legal_moves() == game.legal_moves()
        assert again.history == game.history and again.rules == game.rules
        move = again.legal_moves()[-1]
        again.play(move)
        again.undo()
        again.undo()
        game.undo()
        assert again.position() == game.position()
