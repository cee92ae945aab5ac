"""The bots' shared evaluation (agents/bots/evaluation.py), pinned where the bot tests left it open.

Each test here came out of mutation testing (``scripts/mutants.py agents/bots/evaluation.py``): it
fails on a single-point change of the module that tests/test_bots.py did not notice.
"""

from __future__ import annotations

import pytest

from agents.bots.evaluation import SeatView, escape_moves, goal_fills, seat_tables
from halma_env import Game
from halma_env.board import star_point
from tests.engine_helpers import position


def test_goal_fills_has_one_entry_per_seat_after_a_finished_seat() -> None:
    """A seat that is no longer active counts 20 and nothing more: the seats after it keep their own
    entries (star, 4 seats: seat 1 finished, seat 2 has 4 of its 10 goal holes, seat 3 finished)."""
    pieces = {h: "0" for h in range(60, 70) if h != 65}
    pieces.update({h: "1" for h in star_point(4)})
    pieces.update({h: "2" for h in (111, 112, 113, 114, 40, 41, 42, 43, 44, 45)})
    pieces.update({h: "3" for h in star_point(1)})
    game = Game.from_position(position("star", 4, pieces))
    assert game.status == ["active", "finished", "active", "finished"]
    assert goal_fills(game) == (0, 20, 8, 20)


@pytest.mark.parametrize(("variant", "tip", "outside"), [("star", 0, 14), ("halma16", 0, 68)])
def test_without_kings_the_last_empty_goal_hole_pulls_even_on_the_tip(variant: str, tip: int, outside: int) -> None:
    """The tip is kept free only for a diamond king: on the star and the square board a goal whose
    only empty hole is the tip still pulls the last piece toward it (0.25 per step)."""
    t = seat_tables(variant, 2, 0)
    assert t.tip == tip and t.king is None
    pieces = {h: "0" for h in t.goal if h != tip}
    pieces[outside] = "0"
    far = 120 if variant == "star" else 255
    game = Game.from_position(position(variant, 2, {**pieces, far: "1"}))
    view = SeatView(game, 0)
    steps = game.geometry.distance(outside, tip)
    assert steps > 0 and view.endgame[outside] == pytest.approx(0.25 * steps)
    assert view.value(outside, False) == pytest.approx(t.piece[outside] + view.endgame[outside])


@pytest.mark.parametrize(("on57", "on58", "dead"), [
    ("1", "1", [56]),  # every open neighbour and every landing behind it held by the resigned seat
    ("B", ".", [56]),  # the resigned king on 57: no piece hops over a king, so the empty 58 is no way out
    ("1", ".", []),  # an ordinary piece on 57: the hop onto 58 is open
])
def test_closed_holes_and_kings_wall_a_piece_in_on_the_diamond(on57: str, on58: str, dead: list[int]) -> None:
    """diamond, 3 seats: seat 0's piece on 56 (a corner of the hexagon's edge row) has two neighbours
    on points closed to it, 65 (empty) and 46 (seat 1's, with the closed 35 behind it), and seat 1
    (resigned: it never moves again) on the other three (57, 66, 47) and behind them (58, 77, 37).
    A closed hole is no step and no landing, and a king is never hopped over."""
    from agents.bots.evaluation import dead_pieces

    pieces = {57: on57, 66: "1", 47: "1", 77: "1", 37: "1", 46: "1", 111: "1"}
    if on58 != ".":
        pieces[58] = on58
    if on57 != "B":
        pieces[10] = "B"
    pieces.update({56: "0", 120: "A", 112: "0", 113: "0", 13: "C", 19: "2", 20: "2"})
    game = Game.from_position(position("diamond", 3, pieces))
    game.resign(1)
    assert game.status == ["active", "resigned", "active"]
    g = game.geometry
    closed = [h for h in g.neighbours[56] if not game.layout.open_holes[0] >> g.bit[h] & 1]
    assert sorted(closed) == [46, 65] and game.piece_at(65) is None
    assert not game.layout.open_holes[0] >> g.bit[35] & 1 and g.hole_of_bit[2 * g.bit[46] - g.bit[56]] == 35
    assert dead_pieces(game, 0) == dead


def test_a_full_camp_without_the_king_on_its_tip_is_a_full_fill() -> None:
    """diamond: 15 pieces fill seat 0's 15-hole camp, but an ordinary piece holds the tip and the king
    stands on 5, so the seat has not finished (SPEC: the king must be on the tip); its fill is the
    whole camp, 20 twentieths, like a seat that has finished."""
    camp = seat_tables("diamond", 2, 0).goal
    pieces = {h: "0" for h in camp}
    pieces[5] = "A"
    game = Game.from_position(position("diamond", 2, {**pieces, 60: "1", 61: "B"}))
    assert game.status == ["active", "active"] and len(camp) == 15
    assert goal_fills(game)[0] == 20


def test_a_piece_walled_in_inside_its_own_goal_is_not_dead() -> None:
    """star, 3 seats: seat 0's piece on its own goal's tip 0 is walled in by resigned seat 1 (on 1 and
    2, and 3 and 5 behind them); it can never move, but it already is where it belongs, so it is not
    one of the dead pieces that keep the seat from finishing."""
    from agents.bots.evaluation import _dead_at, _permanent, dead_pieces

    pieces = {h: "1" for h in (1, 2, 3, 5, 60)}
    pieces.update({h: "0" for h in (0, 111, 112, 113)})
    pieces.update({h: "2" for h in (56, 57, 58)})
    game = Game.from_position(position("star", 3, pieces))
    game.resign(1)
    assert game.status == ["active", "resigned", "active"]
    assert _dead_at(game, 0, game.layout.open_holes[0], _permanent(game))  # it never moves again
    assert dead_pieces(game, 0) == []


def test_leaving_its_own_goal_is_no_escape() -> None:
    """star, 2 seats: seat 1 has filled its camp to 6/20 and seat 0 has a piece parked in it on 116;
    only that piece's moves toward the way out are escapes, not those of seat 0's piece on its own
    goal's front hole 9 stepping out of the goal."""
    pieces = {116: "0", 60: "0", 9: "0"}
    pieces.update({h: "1" for h in (118, 119, 120, 30, 31, 32, 33, 34, 35, 36)})
    game = Game.from_position(position("star", 2, pieces))
    assert goal_fills(game) == (2, 6)
    assert any(m.src == 9 and m.dst not in seat_tables("star", 2, 0).goal for m in game.legal_moves())
    assert [str(m) for m in escape_moves(game, game.legal_moves())] == ["116-112", "116-113"]
