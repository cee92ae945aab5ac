"""The mcts bot's parts against the formulas its docstring gives (agents/bots/mcts.py).

tests/test_bots.py plays it (legal, seeded, finishing, within its time); these check the numbers:
the value of a position, the progressive widening and the UCT choice.
"""

from __future__ import annotations

import math
import random

import pytest

from agents.bots.evaluation import Tracker, potential
from agents.bots.mcts import MCTSBot, _Node
from agents.bots.search import TEMPO
from halma_env import Game, Rules
from halma_env.board import star_point
from halma_env.layout import layout
from tests.engine_helpers import one_move_from_finishing, position
from tests.test_bots import midgame


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def expected_values(game: Game, scale: float, root_potential: float = 0.0) -> list[float]:
    """The docstring's values: a decided seat by its place, 1 - (place - 1) / (n - 1); an undecided
    one by its expected place, the first free place plus the chance that each other undecided seat is
    ahead, sigmoid((own - other potential) / scale), the seat to move a tempo ahead; the solitaire by
    the potential gained since the root, sigmoid(gain / scale)."""
    n = game.num_players
    pots = [potential(game, s) for s in range(n)]
    if n == 1:
        return [sigmoid((root_potential - pots[0]) / scale)]
    if not game.is_over:
        pots[game.to_move] -= TEMPO
    places = game.places
    undecided = [s for s in range(n) if places[s] is None]
    first_free = 1 + game.status.count("finished")  # the next seat to finish gets this place
    out = []
    for s in range(n):
        place = places[s]
        if place is None:
            place = first_free + sum(sigmoid((pots[s] - pots[o]) / scale) for o in undecided if o != s)
        out.append(1.0 - (place - 1) / (n - 1))
    return out


def finished_seat_game() -> Game:
    """star, 4 seats: seat 1 has finished (1st place), seats 0, 2 and 3 race on, seat 2 to move."""
    pieces = {h: "1" for h in star_point(4)}  # seat 1's goal
    pieces.update({h: "0" for h in (60, 61, 70, 50)})
    pieces.update({h: "2" for h in (40, 41, 30)})
    pieces.update({h: "3" for h in (80, 81, 90, 100)})
    game = Game.from_position(position("star", 4, pieces, to_move=2))
    assert game.places == [None, 1, None, None] and game.status[1] == "finished"
    return game


def shared_first_places_game() -> Game:
    """star, 4 seats loaded with seats 0 and 1 finished (a shared 1st place): seats 2 and 3 play on
    for 3rd and 4th; seat 2 can finish at once (102-111)."""
    lay = layout("star", 4)
    goal2 = sorted(lay.goals[2])
    pieces = {**{h: "0" for h in lay.goals[0]}, **{h: "1" for h in lay.goals[1]}, 102: "2", 60: "3"}
    pieces.update({h: "2" for h in goal2[1:]})
    game = Game.from_position(position("star", 4, pieces, to_move=2))
    assert game.places == [1, 1, None, None]
    return game


def test_after_shared_first_places_the_next_place_is_third() -> None:
    game = shared_first_places_game()
    finished = game.copy()
    finished.play("102-111")
    assert finished.places == [1, 1, 3, 4]  # the engine's places, which the values must follow
    bot = MCTSBot(seed=0, iterations=1, time=None)
    values = bot._values(Tracker(game, bot.straggle), 0.0)
    # seats 2 and 3 are expected between 3rd (value 1/3) and 4th (0), never at 2nd (2/3)
    assert values[:2] == [1.0, 1.0] and all(0.0 < v < 1 / 3 for v in values[2:])
    assert bot._values(Tracker(finished, bot.straggle), 0.0) == pytest.approx([1.0, 1.0, 1 / 3, 0.0])


@pytest.mark.parametrize("scale", [6.0, 2.5])
@pytest.mark.parametrize("case", ["star-2", "star-3", "star-6", "finished seat", "resigned seat", "shared places",
                                  "game over"])
def test_values_of_a_position_follow_the_documented_formula(case: str, scale: float) -> None:
    if case == "finished seat":
        game = finished_seat_game()
    elif case == "shared places":
        game = shared_first_places_game()
    elif case == "resigned seat":
        game = midgame("star", 3, plies=9)
        game.resign(2)
        assert game.places == [None, None, 3]
    elif case == "game over":
        game = Game(Rules("star", 3))
        game.resign(1)
        game.resign(2)
        assert game.is_over and game.places == [1, 3, 2]  # the first to resign takes the last place
    else:
        variant, n = case.split("-")
        game = midgame(variant, int(n), plies=15)
    bot = MCTSBot(seed=0, iterations=1, time=None, scale=scale)
    tracker = Tracker(game, bot.straggle)
    values = bot._values(tracker, tracker.pot[0])
    assert values == pytest.approx(expected_values(game, scale))
    assert all(0.0 <= v <= 1.0 for v in values)


def test_the_solitaire_value_is_the_squashed_gain_since_the_root() -> None:
    start = Game(Rules("star", 1))
    later = midgame("star", 1, plies=6)
    bot = MCTSBot(seed=0, iterations=1, time=None, scale=4.0)
    value = bot._values(Tracker(later, bot.straggle), potential(start, 0))
    assert value == pytest.approx(expected_values(later, 4.0, root_potential=potential(start, 0)))
    assert value[0] > 0.5  # six greedy moves gained potential
    assert bot._values(Tracker(start, bot.straggle), potential(start, 0)) == pytest.approx([0.5])


def test_a_bot_shared_by_threads_values_each_solitaire_search_against_its_own_root() -> None:
    """The root's potential was kept on the bot: another thread's search with the same bot, between two
    simulations, made the rest of this one value its positions against the other game's start."""
    game, other = midgame("star", 1, plies=4), Game(Rules("star", 1))  # two different root potentials
    reference = MCTSBot(seed=3, iterations=60, time=None)
    move, info = reference.select_move(game.copy()), reference.last_info
    bot = MCTSBot(seed=3, iterations=60, time=None)
    simulate, calls = bot._simulate, []

    def interleaved(*args) -> None:
        calls.append(args)
        if len(calls) == 10:  # the other search, on the same bot, with the bot's random stream put back after
            state = bot._rng.getstate()
            bot.select_move(other.copy())
            bot._rng.setstate(state)
        simulate(*args)

    bot._simulate = interleaved  # type: ignore[method-assign]
    assert (bot.select_move(game.copy()), bot.last_info) == (move, info)
    assert len(calls) == 120


@pytest.mark.parametrize("widen", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("iterations", [1, 2, 4, 5, 9, 10, 16, 17, 30])
def test_a_root_visited_n_times_has_one_plus_widen_sqrt_n_children(widen: float, iterations: int) -> None:
    """Progressive widening: the simulation that finds the root visited N times adds a child while the
    root has fewer than 1 + int(widen * sqrt(N)) (and untried moves left), one child per simulation."""
    game = midgame("star", 2, plies=10)
    assert len(game.legal_moves()) > 12
    bot = MCTSBot(seed=0, iterations=iterations, time=None, memory=0, rollout=2, widen=widen)
    bot.select_move(game)
    assert bot.last_info["simulations"] == iterations
    children = 0
    for visits in range(iterations):
        children += children < 1 + int(widen * math.sqrt(visits))
    assert bot.last_info["children"] == children


class SteppingClock:
    """A ``time`` module stand-in whose ``perf_counter`` moves on by ``step`` seconds at every call."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 100.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize(("time_limit", "budget", "limit"), [
    (0.5, None, 0.5),  # its own time
    (0.5, 1.0, 0.5),  # its own time, shorter than the budget's share
    (0.5, 0.4, 0.7 * 0.4 - 0.01),  # the budget less 30% and 10 ms
    (None, 1.0, 0.7 * 1.0 - 0.01),  # no time of its own (iterations set)
    (0.5, 0.02, 0.4 * 0.02),  # at least 40% of the budget
    (None, 0.002, 0.4 * 0.002),  # and so inside a budget of a few ms
])
def test_simulations_run_until_the_deadline(monkeypatch: pytest.MonkeyPatch, time_limit: float | None,
                                            budget: float | None, limit: float) -> None:
    """The clock is read once at the start and once after every simulation; the search stops at the
    first reading past start + limit."""
    import agents.bots.mcts as mcts

    clock = SteppingClock(0.007)
    monkeypatch.setattr(mcts, "time", clock)
    game = midgame("star", 2, plies=10)
    bot = MCTSBot(seed=0, time=time_limit, iterations=0 if time_limit else 10**6, rollout=0)
    bot.select_move(game, budget)
    start = 100.0 + 0.007
    deadline, now, expected = start + limit, start, 0
    while True:
        expected += 1
        now += 0.007
        if now > deadline:
            break
    assert bot.last_info["simulations"] == expected


@pytest.mark.parametrize(("c", "visits", "own"), [
    (0.4, [10, 2, 5], [6.0, 1.0, 2.0]),  # own means 0.6, 0.5, 0.4
    (0.1, [10, 2, 5], [6.0, 1.0, 2.0]),
    (1.0, [10, 2, 5], [6.0, 1.0, 2.0]),
    (0.4, [6, 6, 5], [3.0, 3.0, 1.0]),  # a tie goes to the first child, the move of larger gain
])
def test_a_full_node_descends_into_the_child_of_the_best_upper_confidence_bound(
        c: float, visits: list[int], own: list[float]) -> None:
    """At a node with all its allowed children the mover picks the child with the largest
    mean of its own value + c * sqrt(ln N / n) (max^n: the other seat's values do not count)."""
    game = midgame("star", 2, plies=10)
    seat, other = game.to_move, 1 - game.to_move
    bot = MCTSBot(seed=0, iterations=1, time=None, rollout=0, c=c, widen=10.0)
    rng = random.Random(0)
    tracker = Tracker(game, bot.straggle)
    root = _Node(seat, 2, bot._candidates(tracker, seat, game.legal_moves(), rng))
    for _ in range(3):  # three children, one per simulation
        bot._simulate(tracker, root, rng, tracker.pot[0])
    bot.widen = 0.5  # 1 + int(0.5 * sqrt(17)) = 3 children allowed at the 17 visits set below: none added
    assert len(root.children) == 3
    for child, n, v in zip(root.children, visits, own):
        child.visits, child.value[seat], child.value[other] = n, v, n - v
    root.visits = sum(visits)
    bounds = [v / n + c * math.sqrt(math.log(root.visits) / n) for n, v in zip(visits, own)]
    chosen = bounds.index(max(bounds))
    assert tracker.game.position() == game.position()  # each simulation undid its moves
    bot._simulate(tracker, root, rng, tracker.pot[0])
    assert [child.visits for child in root.children] == [n + (i == chosen) for i, n in enumerate(visits)]
    assert len(root.children) == 3 and root.visits == 18


def test_mcts_does_not_walk_back_to_a_recent_arrangement() -> None:
    """Seat 0 has just hopped back 50-70; hopping forward again (70-50) is its best move by gain and
    what the bot plays without memory, but it returns to an arrangement of the last few moves, so with
    memory the root leaves it out (as greedy's revisit penalty does)."""
    game = Game.from_position(position("star", 2, {50: "0", 60: "1", 61: "1", 52: "1", 100: "1"}))
    game.play("50-70")
    game.play("100-101")
    for seed in range(3):
        forgetful = MCTSBot(seed=seed, iterations=40, time=None, memory=0)
        assert str(forgetful.select_move(game)) == "70-50"
        assert str(MCTSBot(seed=seed, iterations=40, time=None).select_move(game)) != "70-50"


def test_no_search_where_there_is_nothing_to_choose() -> None:
    """One legal move is played at once; so is a finishing move; and ``last_info`` says no search ran."""
    # seat 1's one piece, on the tip 0, has one move: the hop over 1 onto 3 (seat 0's pieces fill 2 and 5)
    pieces = {1: "0", 2: "0", 5: "0", 40: "0", 0: "1"}
    game = Game.from_position(position("star", 2, pieces, to_move=1))
    moves = game.legal_moves()
    bot = MCTSBot(seed=0, iterations=50, time=None)
    assert len(moves) == 1 and bot.select_move(game) == moves[0]
    assert bot.last_info == {"simulations": 0, "children": 0, "visits": 0}
    game, finishing = one_move_from_finishing()
    assert bot.select_move(game) in finishing
    assert bot.last_info == {"simulations": 0, "children": 0, "visits": 0}
    bot.select_move(midgame("star", 2, plies=10))
    info = bot.last_info
    assert info["simulations"] == 50 and 1 <= info["children"] and 1 <= info["visits"] <= 50
    # two moves are a choice: searched (the same piece on 0, with 5 open as well: 0-3 or 0-5)
    two = Game.from_position(position("star", 2, {1: "0", 2: "0", 40: "0", 0: "1"}, to_move=1))
    assert sorted(str(m) for m in two.legal_moves()) == ["0-3", "0-5"]
    bot.select_move(two)
    assert bot.last_info["simulations"] == 50 and bot.last_info["children"] == 2


class RecordingTracker(Tracker):
    """A Tracker that records every move played on it, with whether it was a best-gain move."""

    def __init__(self, game: Game, straggle: float) -> None:
        super().__init__(game, straggle)
        self.plays: list[tuple[int, str, bool]] = []

    def play(self, s: int, m, gain: float) -> None:  # type: ignore[override]
        g = self.game
        best = max(self.gain(s, mv.src, mv.dst) for mv in g.legal_moves()) if g.to_move == s else None
        self.plays.append((s, str(m), best is not None and gain == best))
        super().play(s, m, gain)


@pytest.mark.parametrize("rollout", [0, 1, 4])
def test_a_simulation_expands_one_child_then_rolls_out_greedily(rollout: int) -> None:
    """The first simulation from a fresh root adds one child (the best-gain move), then plays
    ``rollout`` plies in turn order, each the mover's best-gain move when ``epsilon`` is 0."""
    game = midgame("star", 3, plies=9)
    bot = MCTSBot(seed=0, iterations=1, time=None, rollout=rollout, epsilon=0.0)
    tracker = RecordingTracker(game, bot.straggle)
    rng = random.Random(0)
    root = _Node(game.to_move, 3, bot._candidates(tracker, game.to_move, game.legal_moves(), rng))
    bot._simulate(tracker, root, rng, tracker.pot[0])
    assert len(tracker.plays) == 1 + rollout
    assert [s for s, _, _ in tracker.plays] == [(game.to_move + k) % 3 for k in range(1 + rollout)]
    assert all(best for _, _, best in tracker.plays)
    assert tracker.plays[0][1] == str(root.cands[0][1]) and len(root.children) == 1
    assert tracker.game.position() == game.position()  # every move undone


def test_random_rollout_moves_come_with_probability_epsilon() -> None:
    game = midgame("star", 2, plies=10)
    for epsilon, low, high in [(0.0, 0, 0), (1.0, 60, 100), (0.3, 5, 40)]:
        bot = MCTSBot(seed=0, iterations=1, time=None, rollout=10, epsilon=epsilon)
        rng = random.Random(1)
        not_best = 0
        for _ in range(10):  # a fresh root each time: one expansion, then the 10 rollout plies
            tracker = RecordingTracker(game, bot.straggle)
            root = _Node(game.to_move, 2, bot._candidates(tracker, game.to_move, game.legal_moves(), rng))
            bot._simulate(tracker, root, rng, tracker.pot[0])
            assert len(tracker.plays) == 11
            not_best += sum(1 for _, _, best in tracker.plays[1:] if not best)
        # a random move is seldom a best-gain one: about epsilon x 100 of the 100 rollout plies are not
        assert low <= not_best <= high, (epsilon, not_best)


def test_a_finished_game_ends_the_simulation_at_its_node() -> None:
    """A child in which the game is over has no mover and no moves; no rollout follows it."""
    game, finishing = one_move_from_finishing()
    bot = MCTSBot(seed=0, iterations=1, time=None, rollout=5, epsilon=0.0)
    tracker = RecordingTracker(game, bot.straggle)
    rng = random.Random(0)
    root = _Node(game.to_move, 2, bot._candidates(tracker, game.to_move, finishing, rng))
    bot._simulate(tracker, root, rng, tracker.pot[0])
    child = root.children[0]
    assert len(tracker.plays) == 1 and child.seat is None and child.cands == [] and child.visits == 1
    assert child.value == [1.0, 0.0] if game.to_move == 0 else [0.0, 1.0]


def test_candidates_are_ordered_by_gain_with_seeded_ties() -> None:
    game = Game(Rules("star", 2))
    bot = MCTSBot(seed=0, iterations=1, time=None)
    tracker = Tracker(game, bot.straggle)
    orders = []
    for seed in range(4):
        cands = bot._candidates(tracker, 0, game.legal_moves(), random.Random(seed))
        gains = [gain for gain, _ in cands]
        assert gains == sorted(gains, reverse=True)
        assert all(gain == tracker.gain(0, m.src, m.dst) for gain, m in cands)
        assert sorted(str(m) for _, m in cands) == sorted(str(m) for m in game.legal_moves())
        orders.append([str(m) for _, m in cands])
    assert len({tuple(o) for o in orders}) > 1  # the opening's equal gains come in seeded orders
    again = bot._candidates(tracker, 0, game.legal_moves(), random.Random(2))
    assert [str(m) for _, m in again] == orders[2]


def test_the_finished_solitaire_is_worth_1() -> None:
    pieces = {h: "0" for h in range(9)}
    pieces[17] = "0"
    game = Game.from_position(position("star", 1, pieces))
    game.play("17-9")
    assert game.is_over and game.places == [1]
    bot = MCTSBot(seed=0, iterations=1, time=None)
    assert bot._values(Tracker(game, bot.straggle), 0.0) == [1.0]


# seat 1 is far ahead: 112-114 forces its finish on its next move, whatever seat 0 replies
FORCED_FINISH = ("star 2 0/00/.00/0.../.....0.0.0.../...0......../.........../........../........./........../"
                 ".........../............/.....1......./111./111/11/1 1 113")


def _finishes_next(game: Game, seat: int) -> bool:
    """Whether ``seat``, to move after every reply of the other seat, always has a finishing move."""
    for reply in game.legal_moves():
        game.play(reply)
        try:
            finishing = []
            for move in game.legal_moves():
                game.play(move)
                finishing.append(game.status[seat] == "finished")
                game.undo()
            if not any(finishing):
                return False
        finally:
            game.undo()
    return True


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcts_plays_the_move_that_forces_its_finish(seed: int) -> None:
    """A finish inside the tree was one child among many, and a seat this far ahead already reads ~0.97 from the
    cut-off evaluation: the forcing move got fewer visits than a quiet one (seeds 0 and 1 played 103-104 at 2,000
    iterations).  A node whose seat can finish now has only its finishing moves as children."""
    game = Game.from_position(FORCED_FINISH)
    forcing = game.copy()
    forcing.play("112-114")
    assert _finishes_next(forcing, 1)
    assert str(MCTSBot(seed=seed, iterations=2000, time=None).select_move(game)) == "112-114"
