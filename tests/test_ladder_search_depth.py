"""Why best-reply search at depth 2 can rate below depth 1 with 3+ seats (issue 4's ladder): not a
bug.  Checked here: the search's value of its chosen move at depth 2 and 3 equals plain best-reply
minimax over the same evaluation, enumerated move by move without the horizon shortcut, alpha-beta,
the transposition table or forward pruning.  An even depth ends on the opponents' (pooled) best
reply, i.e. depth 2 is depth 1 minus the largest gain any opponent then has (divided by the number
of rivals): with 3+ seats that is mostly the same whatever the root plays, so depth 2 plays like
depth 1 and the two rate within noise of each other (see docs/export.md, the shipped ladder)."""

from __future__ import annotations

import pytest

from agents.bots.evaluation import escape_moves, safe_moves
from agents.bots.search import SearchBot, _Run
from agents.registry import make_player
from halma_env import Game, Rules


def _position(variant: str, seats: int, plies: int) -> Game:
    game = Game(Rules(variant, seats))
    bot = make_player("greedy:noise=0.3", seed=5)
    for _ in range(plies):
        game.play(bot.select_move(game))
    return game


def _brute(run: _Run, is_max: bool, depth: int, ply: int) -> float:
    """Best-reply minimax by enumeration: every move played, static evaluation at depth 0."""
    term = run.terminal(ply)
    if term is not None:
        return term
    if depth == 0:
        return run.static(is_max)
    seats = [run.root] if is_max else run.active()
    moves = [(gain, s, (src, dst)) for s in seats for gain, src, dst in run.tr.scored_moves(s)]
    if not moves:
        return _brute(run, not is_max, depth - 1, ply)
    vals = []
    for gain, s, m in moves:
        run.play(s, m, gain)
        vals.append(_brute(run, not is_max, depth - 1, ply + 1))
        run.undo(s, m, gain)
    return max(vals) if is_max else min(vals)


@pytest.mark.parametrize(("variant", "seats", "depth"), [
    ("star", 2, 2), ("star", 3, 2), ("star", 4, 2), ("diamond", 3, 2),
    pytest.param("star", 3, 3, marks=pytest.mark.slow),  # enumerating 3 plies: ~90 s on the loaded machine
])
def test_search_value_matches_enumerated_best_reply_minimax(variant: str, seats: int, depth: int) -> None:
    game = _position(variant, seats, 6 * seats)
    moves = game.legal_moves()
    assert not escape_moves(game, moves) and safe_moves(game, moves) == moves  # no root filters here
    # no pruning, no root penalties: the search must find the exact best-reply value
    bot = SearchBot(seed=0, time=None, depth=depth, width=10_000, root_width=10_000, memory=0)
    chosen = bot.select_move(game)
    assert bot.last_info["depth"] == depth
    run = _Run(bot, game, 0.0, None)
    values = {}
    for m in moves:
        gain = run.gain(run.root, m.src, m.dst)
        run.play(run.root, (m.src, m.dst), gain)
        values[m] = _brute(run, False, depth - 1, 1)
        run.undo(run.root, (m.src, m.dst), gain)
    assert values[chosen] == pytest.approx(max(values.values()), abs=1e-9)
    if depth == 2:
        # depth 2 = the static value after the move, less the best opponent gain over the rivals
        k = len(run.rivals)
        g = chosen
        gain = run.gain(run.root, g.src, g.dst)
        run.play(run.root, (g.src, g.dst), gain)
        best_reply = max(x for x in (run.tr.best_gain(s) for s in run.active()) if x is not None)
        expected = run.static(True) - best_reply / k
        run.undo(run.root, (g.src, g.dst), gain)
        assert values[chosen] == pytest.approx(expected, abs=1e-9)
