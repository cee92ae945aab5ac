"""SPEC §6: the perft table, and the opening move counts of every variant and seat count."""

from __future__ import annotations

import pytest

from halma_env import Game, Rules, perft
from halma_env.game import random_playout

PERFT_TABLE = [
    ("star", 2, (14, 196, 4760)),
    ("star", 3, (14, 196, 2744)),
    ("star", 4, (14, 199, 2786)),
    ("star", 5, (14, 199, 2828)),
    ("star", 6, (14, 199, 2828)),
    ("diamond", 2, (20, 400, 12567)),
    ("diamond", 3, (20, 400, 8000)),
    ("halma16", 2, (40, 1600, 85440)),
    ("halma16", 4, (32, 1024, 32768)),
]


@pytest.mark.parametrize(("variant", "seats", "counts"), PERFT_TABLE, ids=[f"{v}-{n}" for v, n, _ in PERFT_TABLE])
def test_perft_table(variant: str, seats: int, counts: tuple[int, ...]) -> None:
    game = Game(Rules(variant, seats))
    start = game.position()
    assert [perft(game, d) for d in (1, 2, 3)] == list(counts)
    assert game.position() == start, "perft must leave the game as it found it"
    assert perft(game, 0) == 1


def test_perft_star2_depth4() -> None:
    assert perft(Game(Rules("star", 2)), 4) == 115600


def test_perft_rejects_negative_depth() -> None:
    with pytest.raises(ValueError, match="depth"):
        perft(Game(), -1)
    for not_a_game in (None, "star 2", Game().position()):  # perft(None, 0) counted 1
        with pytest.raises(TypeError, match="^game must be a halma_env.Game, got "):
            perft(not_a_game, 0)


def test_perft_does_not_recurse_per_ply() -> None:
    """perft keeps its own stack: recursing once per ply, a deep search (``perft(game, 2000)``, ``halma perft 2000
    --divide``) hit Python's recursion limit inside ``play``, half-way through a move, and the undos on the way out
    raised ValueError (list.remove) and left a game whose later moves raised KeyError.  The Python stack at each
    move played is as deep at ply 3 as at ply 1."""
    import sys

    depths: set[int] = set()
    game = Game(Rules("star", 2))
    real_play = game.play

    def play(move) -> None:
        frame, depth = sys._getframe(), 0
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        depths.add(depth)
        real_play(move)

    game.play = play  # type: ignore[method-assign]
    start = game.position()
    assert perft(game, 4) == 115600
    assert len(depths) == 1, f"perft's stack grows with the plies searched: {sorted(depths)}"
    assert game.position() == start and game.history == []


# opening: seat 0's moves from the start, and the same count for every other seat (symmetry)
OPENING = {
    ("star", 1): 14, ("star", 2): 14, ("star", 3): 14, ("star", 4): 14, ("star", 5): 14, ("star", 6): 14,
    ("diamond", 2): 20, ("diamond", 3): 20, ("halma16", 2): 40, ("halma16", 4): 32,
}


@pytest.mark.parametrize(("variant", "seats"), sorted(OPENING), ids=[f"{v}-{n}" for v, n in sorted(OPENING)])
def test_opening_move_counts(variant: str, seats: int) -> None:
    for first in range(seats):
        game = Game(Rules(variant, seats, first_seat=first))
        assert game.to_move == first
        moves = game.legal_moves()
        assert len(moves) == game.count_moves() == OPENING[(variant, seats)]
        assert moves == sorted(moves)
        assert len({(m.src, m.dst) for m in moves}) == len(moves), "one move per (src, dst)"
        assert all(game.piece_at(m.src) is not None and game.piece_at(m.src)[0] == first for m in moves)


def test_star_opening_moves_exactly() -> None:
    """Seat 0 on the bottom point: 4 front pieces step (2 each) and 3 second-row pieces jump (2 each)."""
    moves = {(m.src, m.dst) for m in Game(Rules("star", 2)).legal_moves()}
    steps = {(111, 98 + 4), (111, 98 + 5), (112, 103), (112, 104), (113, 104), (113, 105), (114, 105), (114, 106)}
    jumps = {(115, 102), (115, 104), (116, 103), (116, 105), (117, 104), (117, 106)}
    assert moves == steps | jumps


def test_perft_counts_distinct_destinations_not_paths() -> None:
    """A hole reached by two jump paths is one move: perft 1 equals the number of (src, dst) pairs."""
    rng = __import__("random").Random(7)
    game = Game(Rules("star", 2))
    random_playout(game, rng, 40)
    moves = game.legal_moves()
    assert perft(game, 1) == len(moves) == len({(m.src, m.dst) for m in moves})
