"""The crossing planner (agents/bots/crossing.py) and the training term that learns its lines."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agents.bots.crossing import CrossingBot, plan_crossing
from agents.bots.evaluation import seat_tables
from agents.config import from_dict
from agents.registry import bot_parameters, make_player
from halma_env import Game, Rules
from halma_env.encoding import encoding
from tests.engine_helpers import one_move_from_finishing, position

if TYPE_CHECKING:
    from agents.ppo import Trainer

# the planner and the bot need no torch; the training term's tests (agents.imitation, agents.ppo and the
# training tests' tiny config) import it themselves

SOLITAIRE = Rules("star", 1)


def replay(game: Game, line: list) -> Game:
    """``line`` played on a copy of ``game``; every move must be legal when it is played."""
    game = game.copy()
    for move in line:
        assert move in game.legal_moves(), (move, game.position())
        game.play(move)
    return game


def test_the_planner_crosses_the_solitaire_in_few_moves() -> None:
    line = plan_crossing(Game(SOLITAIRE), width=200)
    end = replay(Game(SOLITAIRE), line)
    assert end.status[0] == "finished" and end.end_reason == "finished"
    # measured: 32 moves at width 200 (greedy needs 69; the optimum is 27)
    assert 27 <= len(line) <= 33


@pytest.mark.slow
def test_the_planner_finds_the_published_optimum() -> None:
    """Bell (2009): 27 moves at best.  Width 3000 finds a 27-move line (about 40 s here)."""
    line = plan_crossing(Game(SOLITAIRE), width=3000)
    assert replay(Game(SOLITAIRE), line).status[0] == "finished"
    assert len(line) == 27


def test_with_more_seats_only_the_mover_moves() -> None:
    game = Game(Rules("star", 2))
    game.play(game.legal_moves()[0])  # seat 1 to move
    others = game.pieces(0)
    line = plan_crossing(game, width=5)
    assert line and replay_own(game, line, 1) and game.pieces(0) == others


def replay_own(game: Game, line: list, seat: int) -> bool:
    """Plays ``line`` as ``seat``'s moves only (the turn handed back each time), checking legality."""
    game = game.copy()
    for move in line:
        game.to_move = seat
        assert move in game.legal_moves()
        game.play(move)
    return True


def test_the_diamond_king_is_planned_with_its_own_table() -> None:
    game = Game(Rules("diamond", 2))
    line = plan_crossing(game, width=20)
    end = game.copy()
    for move in line:
        end.to_move = 0
        end.play(move)
    assert end.status[0] == "finished"


def test_the_bot_follows_its_plan_in_the_solitaire() -> None:
    bot = CrossingBot(seed=5, width=50)
    game = Game(SOLITAIRE)
    expected = plan_crossing(game, width=50, rng=random.Random(5))
    played = []
    start = time.perf_counter()
    while not game.is_over:
        played.append(bot.select_move(game))
        game.play(played[-1])
    assert played == expected and game.status[0] == "finished"
    assert bot.select_move(Game(SOLITAIRE)) == expected[0]  # the plan is cached by position
    assert time.perf_counter() - start < 30


def test_a_deadline_cuts_the_beam_short() -> None:
    start = time.perf_counter()
    line = plan_crossing(Game(SOLITAIRE), width=3000, deadline=time.perf_counter() + 0.2)
    # one beam depth at most past the deadline (0.2-0.25 s in all here), within a bound that a pause of the test
    # process on a loaded CI machine (2.8 s seen) does not reach, and the search without its deadline does (24 s
    # here, 2026-12-07)
    assert time.perf_counter() - start < 10.0
    assert line and line[0] in Game(SOLITAIRE).legal_moves()


def test_a_horizon_bounds_the_line() -> None:
    game = Game(Rules("halma16", 2))
    line = plan_crossing(game, width=3, depth=3, rng=random.Random(1))
    assert len(line) == 3 and replay_own(game, line, 0)
    bot = make_player("crossing:width=3,depth=3", seed=1)  # its seed draws the same tie-breaks
    assert bot.select_move(game) == line[0]


def test_an_unfinished_line_stops_at_the_first_best_state() -> None:
    """star, 2 seats: seat 1's pieces fill 8 of seat 0's 10 goal holes, so seat 0's two pieces can
    never finish there.  Its best state (pieces on 7 and 14) is reached in 4 moves; a fifth move (7-8)
    only reaches another state of the same potential, so the line stays the 4-move one: of equal
    states the planner keeps the one found first, the nearer."""
    pieces = {h: "1" for h in (0, 1, 2, 3, 4, 5, 6, 9, 120)}
    game = Game.from_position(position("star", 2, {**pieces, 12: "0", 25: "0"}))
    four = plan_crossing(game, width=50, depth=4)
    assert [str(m) for m in four] == ["25-13", "12-14", "13-15", "15-7"]
    assert plan_crossing(game, width=50, depth=5) == four
    assert replay_own(game, four, 0)


def test_a_line_goes_on_even_when_every_move_is_worse() -> None:
    """The same position, the pieces on 7 and 14: every move keeps or raises the potential, yet the
    planner returns the best one-move line rather than none (the bot needs a move to play)."""
    pieces = {h: "1" for h in (0, 1, 2, 3, 4, 5, 6, 9, 120)}
    game = Game.from_position(position("star", 2, {**pieces, 7: "0", 14: "0"}))
    assert [str(m) for m in plan_crossing(game, width=50, depth=1)] == ["7-8"]


def test_a_state_where_the_game_ends_unfinished_is_a_dead_end() -> None:
    """Two plies left before the move limit: the planner's second move would end the game without
    seat 0 finishing, so no state of depth 2 is kept and the line stops at one move."""
    pieces = {h: "1" for h in (0, 1, 2, 3, 4, 5, 6, 9, 120)}
    text = position("star", 2, {**pieces, 12: "0", 25: "0"}, ply=10)
    assert len(plan_crossing(Game.from_position(text), width=50, depth=6)) == 6  # no limit: six moves
    limited = Game.from_position(text, move_limit=12)
    assert [str(m) for m in plan_crossing(limited, width=50)] == ["12-13"]


def test_the_seed_breaks_ties_between_equal_lines() -> None:
    game = Game(Rules("halma16", 2))

    def first_moves(seed: int) -> list:
        bot = make_player("crossing:width=2,depth=2", seed=seed)
        g = game.copy()
        out = []
        for _ in range(6):
            out.append(bot.select_move(g))
            g.play(out[-1])
        return out

    assert first_moves(3) == first_moves(3)
    assert any(first_moves(3) != first_moves(s) for s in range(4, 10))
    unseeded = [plan_crossing(game, width=2, depth=2) for _ in range(2)]
    assert unseeded[0] == unseeded[1]  # without rng: generation order, deterministic


def test_bad_planner_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="crossing width must be >= 1"):
        make_player("crossing:width=0")
    with pytest.raises(ValueError, match="crossing depth must be >= 0"):
        make_player("crossing:depth=-1")
    with pytest.raises(ValueError, match="crossing time must be > 0"):
        make_player("crossing:time=0")
    with pytest.raises(ValueError, match="crossing width"):
        plan_crossing(Game(SOLITAIRE), width=-1)


# --- learning the planner's lines during PPO (``crossing.*``) --------------------------------


def test_planner_and_bot_parameters_name_themselves() -> None:
    assert bot_parameters("crossing") == {"width": 500, "straggle": 1.0, "depth": 0, "time": None}
    game = Game(SOLITAIRE)
    for kwargs, message in [({"width": 0}, "crossing width must be >= 1 (an integer), got 0"),
                            ({"straggle": -1.0}, "crossing straggle must be >= 0 (a finite number), got -1.0"),
                            ({"depth": -1}, "crossing depth must be >= 0 (an integer), got -1")]:
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            plan_crossing(game, **kwargs)
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            CrossingBot(**kwargs)
    with pytest.raises(ValueError, match="^" + re.escape("crossing time must be > 0 seconds")):
        CrossingBot(time=0)


def after_own(game: Game, line: list) -> Game:
    """A copy of ``game`` after ``line`` played as the mover's own moves (the others held still)."""
    seat = game.to_move
    end = game.copy()
    for move in line:
        end.to_move = seat
        end.play(move)
    end.to_move = seat
    return end


def own_potential(game: Game, line: list) -> float:
    """The planner's potential (straggle 1) of the mover after ``line``."""
    tables = seat_tables(game.rules.variant, game.rules.num_players, game.to_move, 1.0)
    return sum(tables.piece[h] for h in after_own(game, line).pieces(game.to_move))


def test_short_horizons_find_the_best_lines_by_the_potential() -> None:
    game = Game(Rules("star", 2))
    game.play("115-102")
    game.play("5-16")  # seat 0 to move again
    moves = game.legal_moves()
    one = [own_potential(game, [m]) for m in moves]
    # one move: the lowest potential, the first in generation order among equals
    assert plan_crossing(game, width=5, depth=1) == [moves[one.index(min(one))]]
    # two moves, every state kept: the best of all two-move lines
    best = min(own_potential(game, [m, m2]) for m in moves
               for m2 in after_own(game, [m]).legal_moves())
    line = plan_crossing(game, width=10_000, depth=2)
    assert len(line) == 2 and own_potential(game, line) == pytest.approx(best) and best < min(one)
    # out of time before the first depth is done: the best one-move line
    assert plan_crossing(game, width=50, deadline=time.perf_counter() - 1.0) == [moves[one.index(min(one))]]
    assert plan_crossing(game.copy(), width=50, depth=1, rng=random.Random(0))[0] in [
        m for m, p in zip(moves, one) if p == min(one)]
    # diamond: the king counts twice (its own table) wherever it goes
    diamond = Game(Rules("diamond", 2))
    tables = seat_tables("diamond", 2, 0, 1.0)
    assert tables.king is not None

    def king_potential(line: list) -> float:
        king = next(h for h in diamond.pieces(0) if diamond.piece_at(h) == (0, True))
        for move in line:
            king = move.dst if move.src == king else king
        return sum(tables.king[h] if h == king else tables.piece[h] for h in after_own(diamond, line).pieces(0))

    best = min(king_potential([m, m2]) for m in diamond.legal_moves() for m2 in after_own(diamond, [m]).legal_moves())
    assert king_potential(plan_crossing(diamond, width=10_000, depth=2)) == pytest.approx(best)
    over, finishing = one_move_from_finishing()
    over.play(finishing[0])
    assert over.is_over and plan_crossing(over, width=3) == []


def test_states_are_told_apart_by_where_the_king_stands() -> None:
    """diamond, a random mid-game position: seen states are keyed by the pieces and the king's hole,
    which follows the king when it moves and stays put when another piece moves.  With a beam of
    1000 the planner finds the best 3-move line (the same as with 20,000), ending in the king's long
    jump 111-7; keyed by the wrong hole it skipped states and settled for a worse line."""
    game = Game.from_position("diamond 2 ./../.../..../.1.1.11....../.111.1....../1.1.1B...../.11......./"
                              "1......../.....0..../....0....../.....00.0.../......0.0..../A00./000/0./0 0 30")
    assert game.piece_at(111) == (0, True)
    line = plan_crossing(game, width=1000, depth=3)
    assert [str(m) for m in line] == ["104-60", "70-80", "111-7"]
    tables = seat_tables("diamond", 2, 0, 1.0)
    after = after_own(game, line)
    assert after.piece_at(7) == (0, True)
    potential = sum(tables.king[h] if h == 7 else tables.piece[h] for h in after.pieces(0))
    assert potential == pytest.approx(315.25)  # the other line found, 104-60 111-59 116-61, leaves 315.6875


def test_only_a_solitaire_plan_without_a_horizon_is_kept() -> None:
    # goal holes 0-8 filled, the last piece two steps from hole 9 (and seat 1 far away)
    pieces = {h: "0" for h in range(9)}
    pieces[29] = "0"
    for seats, depth, kept in [(1, 0, True), (1, 3, False), (2, 0, False)]:
        game = Game.from_position(position("star", seats, {**pieces, **({60: "1"} if seats == 2 else {})}))
        bot = CrossingBot(seed=0, width=20, depth=depth)
        move = bot.select_move(game)
        line = plan_crossing(game, width=20)
        assert len(line) == 2 and move == line[0]
        # the solitaire's plan is followed move by move (nobody else can change the position)
        assert bot._plan == ({game.position(): line[0], after_own(game, line[:1]).position(): line[1]} if kept else {})


def crossing_config(**changes) -> dict:
    from tests.test_train import tiny_config

    data = tiny_config(crossing__planner_width=30, crossing__detours=3, crossing__detour_width=10,
                       crossing__coef=1.0)
    for key, value in changes.items():
        section, name = key.split("__")
        data[section][name] = value
    return data


def test_recorded_crossings_are_the_planners_lines() -> None:
    import torch

    from agents.imitation import record_crossings

    cfg = from_dict(crossing_config())
    demos, lengths = record_crossings(cfg, seed=0)
    main = plan_crossing(Game(SOLITAIRE), width=30)
    assert lengths[0] == len(main) and len(lengths) == 4
    enc = encoding("star", 1)
    game = Game(SOLITAIRE)
    for i, move in enumerate(main):  # the main line comes first, position by position
        assert torch.equal(demos.obs[i], torch.from_numpy(enc.observation(game, 0)))
        assert int(demos.legal[i, demos.choice[i]]) == enc.encode_move(0, move.src, move.dst)
        game.play(move)
    assert int((demos.game == 0).sum()) == len(main)
    # each detour starts one move off the main line and is a legal crossing from there
    for k in (1, 2, 3):
        rows = torch.nonzero(demos.game == k).squeeze(1)
        assert len(rows) == lengths[k] - 1 and demos.valid[rows].any(1).all()
    again, _ = record_crossings(cfg, seed=0)
    assert torch.equal(again.choice, demos.choice) and torch.equal(again.obs, demos.obs)


def test_training_learns_the_planners_crossing(tmp_path: Path) -> None:
    from agents.ppo import Trainer
    from tests.test_train import quiet, tiny_config

    data = crossing_config()
    data["ppo"]["total_steps"] = 4 * 16 * 2
    trainer = Trainer(from_dict(data), tmp_path / "cross", log=quiet)
    stats = trainer.train()
    trainer.close()
    info = json.loads((tmp_path / "cross" / "crossing.json").read_text())
    assert info["main_line_moves"] == len(plan_crossing(Game(SOLITAIRE), width=30))
    assert len(info["detour_moves"]) == 3 and info["positions"] > info["main_line_moves"]
    assert stats["losses/crossing"] > 0
    plain = Trainer(from_dict(tiny_config()), tmp_path / "plain", log=quiet)
    stats = plain.train()
    plain.close()
    assert stats["losses/crossing"] == 0 and not (tmp_path / "plain" / "crossing.json").exists()


def crossing_run(tmp_path: Path, name: str, lines: list[str]) -> Trainer:
    from agents.ppo import Trainer

    data = crossing_config()
    data["ppo"]["total_steps"] = 4 * 16 * 2
    trainer = Trainer(from_dict(data), tmp_path / name, log=lines.append, crossing_cache=tmp_path / "cache")
    trainer.train()
    trainer.close()
    return trainer


def test_a_crossing_plan_is_kept_and_read_back_by_the_next_run(tmp_path: Path, monkeypatch) -> None:
    import torch

    from agents.imitation import crossing_cache_path

    lines: list[str] = []
    first = crossing_run(tmp_path, "first", lines)
    cached = crossing_cache_path(tmp_path / "cache", first.cfg, first.cfg.seed)
    assert cached.is_file() and json.loads((tmp_path / "first" / "crossing.json").read_text())["source"] == (
        f"planned, kept in {cached}")

    def no_planning(*args, **kwargs):
        raise AssertionError("the cached plan should have been read")

    monkeypatch.setattr("agents.bots.crossing.plan_crossing", no_planning)
    second = crossing_run(tmp_path, "second", lines)
    assert json.loads((tmp_path / "second" / "crossing.json").read_text())["source"] == f"read from {cached}"
    for field in ("obs", "legal", "valid", "choice", "game"):
        assert torch.equal(getattr(second.crossing_demos, field), getattr(first.crossing_demos, field)), field


@pytest.mark.parametrize("damage, why", [
    (lambda data: "not json {", "cannot read it"),
    (lambda data: json.dumps({**data, "main": ["0-0"] + data["main"][1:]}), "0-0 is not legal"),
    (lambda data: json.dumps({**data, "detours": data["detours"][:1]}), "1 detours, the config asks for 3"),
    (lambda data: json.dumps({**data, "main": [7]}), "malformed"),
    (lambda data: json.dumps({**data, "key": {**data["key"], "seed": 99}}), "its key is not"),
])
def test_a_damaged_crossing_plan_is_planned_again(tmp_path: Path, damage, why: str) -> None:
    import torch

    from agents.imitation import crossing_cache_path

    lines: list[str] = []
    first = crossing_run(tmp_path, "first", lines)
    cached = crossing_cache_path(tmp_path / "cache", first.cfg, first.cfg.seed)
    good = cached.read_text()
    cached.write_text(damage(json.loads(good)))
    again = crossing_run(tmp_path, "again", lines)
    assert any("crossing: planning again" in line and why in line for line in lines), lines
    assert cached.read_text() == good  # planned again and kept
    assert torch.equal(again.crossing_demos.choice, first.crossing_demos.choice)


def test_crossing_plans_round_trip_and_name_their_config(tmp_path: Path) -> None:
    from agents.imitation import crossing_cache_path, load_crossing_lines, plan_crossing_lines, save_crossing_lines

    cfg = from_dict(crossing_config())
    lines = plan_crossing_lines(cfg, seed=0)
    path = crossing_cache_path(tmp_path, cfg, 0)
    save_crossing_lines(path, cfg, 0, lines)
    back = load_crossing_lines(path, cfg, 0)
    assert back.main == lines.main and back.detours == lines.detours
    assert crossing_cache_path(tmp_path, cfg, 1) != path  # another seed, another plan
    wider = from_dict(crossing_config(crossing__detour_width=11))
    assert crossing_cache_path(tmp_path, wider, 0) != path
    with pytest.raises(ValueError, match="its key is not"):
        load_crossing_lines(path, wider, 0)
    with pytest.raises(ValueError, match="cannot read it"):
        load_crossing_lines(tmp_path / "missing.json", cfg, 0)


def test_the_crossing_term_fits_the_main_line() -> None:
    """The loss the trainer adds, minimised alone, makes the greedy policy play the planner's line."""
    import torch

    from agents.imitation import record_crossings
    from agents.network import build_network
    from agents.ppo import evaluate_solo

    cfg = from_dict(crossing_config(crossing__detours=0))
    demos, lengths = record_crossings(cfg, seed=0)
    torch.manual_seed(0)
    net = build_network("star", 2, cfg.network)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(300):
        logits, _ = net(demos.obs, demos.legal, demos.valid)
        loss = torch.nn.functional.cross_entropy(logits, demos.choice)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert evaluate_solo(net, cfg, torch.device("cpu")) == {"moves": float(lengths[0]), "finished": 1.0}


def test_crossing_config_is_checked() -> None:
    from tests.test_train import tiny_config

    with pytest.raises(ValueError, match="planner_width and crossing.coef go together"):
        from_dict(tiny_config(crossing__planner_width=30))
    with pytest.raises(ValueError, match="crossing.coef must be >= 0"):
        from_dict(tiny_config(crossing__coef=-1.0))
    with pytest.raises(ValueError, match="detours need crossing.planner_width"):
        from_dict(tiny_config(crossing__detours=2))
    data = crossing_config()
    data["game"].update(variant="diamond")
    with pytest.raises(ValueError, match="the solitaire crossing is a star game"):
        from_dict(data)


def test_the_shipped_star2_agent_crosses_the_solitaire_within_30_moves() -> None:
    """Issue 5's target for the main config's checkpoint, policy alone (greedy, so one game tells)."""
    from agents.arena import run_solo

    result = run_solo("agents/checkpoints/star2.pt")
    (game,) = result.games
    assert game.end_reason == "finished" and game.plies <= 30, (game.end_reason, game.plies)


@pytest.mark.parametrize(("width", "finishes"), [(1, False), (3, True)])
def test_the_planner_brings_a_diamond_king_to_its_tip(width: int, finishes: bool) -> None:
    """diamond, 2 seats: seat 0's king on 1 beside its goal tip 0, its other pieces in the goal but one
    on 30.  The king's own table makes 1-0 the best first move even in a beam of one; a beam of three
    finds the line that finishes the seat in three moves (king on the tip, the last piece in)."""
    goal = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15, 16, 17, 18)
    pieces = {h: "0" for h in goal[2:]}
    pieces.update({1: "A", 30: "0", 64: "B"})
    pieces.update({h: "1" for h in (106, 107, 108, 109, 110, 97, 96, 95, 94, 85, 84, 83, 74, 73)})
    game = Game.from_position(position("diamond", 2, pieces))
    line = plan_crossing(game, width=width, depth=3)
    assert str(line[0]) == "1-0" and len(line) == 3
    for move in line:
        game.to_move = 0  # the other seat is held still, as in the plan
        game.play(move)
    assert (game.status[0] == "finished") == finishes


def test_the_planner_and_the_bot_share_their_defaults() -> None:
    """``plan_crossing`` called without a width or straggle plans like the default ``crossing`` bot."""
    import inspect

    planner = inspect.signature(plan_crossing).parameters
    bot = bot_parameters("crossing")
    shared = ("width", "straggle", "depth")
    assert {k: planner[k].default for k in shared} == {k: bot[k] for k in shared}


def test_with_no_line_that_keeps_the_game_going_the_bot_plays_the_first_legal_move() -> None:
    """One ply before the move limit every move ends the game unfinished: the planner finds no
    line, and the bot still answers, with the engine's first legal move."""
    pieces = {h: "1" for h in (0, 1, 2, 3, 4, 5, 6, 9, 120)}
    limited = Game.from_position(position("star", 2, {**pieces, 12: "0", 25: "0"}, ply=11), move_limit=12)
    assert plan_crossing(limited, width=50) == []
    assert make_player("crossing", seed=0).select_move(limited) == limited.legal_moves()[0]


@pytest.mark.parametrize(("time_limit", "budget", "limit"), [
    (None, None, None), (0.5, None, 0.5), (None, 2.0, 2.0), (0.5, 2.0, 0.5), (3.0, 2.0, 2.0)])
def test_the_bot_plans_until_70_percent_of_its_time_less_10_ms(monkeypatch: pytest.MonkeyPatch,
                                                               time_limit: float | None, budget: float | None,
                                                               limit: float | None) -> None:
    """The deadline handed to the planner: the shorter of the bot's time and the move's budget, 70% of
    it less 10 ms (docs/bots.md), or none."""
    import agents.bots.crossing as crossing

    deadlines = []

    def recording_plan(game: Game, *args, deadline: float | None = None, **kwargs) -> list:
        deadlines.append(deadline)
        return plan_crossing(game, 3, depth=1)

    monkeypatch.setattr(crossing, "plan_crossing", recording_plan)
    monkeypatch.setattr(crossing._time, "perf_counter", lambda: 100.0)
    bot = CrossingBot(time=time_limit)
    bot.select_move(Game(Rules("star", 2)), budget)
    assert deadlines == [None if limit is None else pytest.approx(100.0 + 0.7 * limit - 0.01)]


def test_the_planner_stops_when_a_filled_goal_leaves_nothing_to_improve(monkeypatch) -> None:
    """At the start of a 2-seat game the other seat's pieces fill the goal, so no line finishes: the beam ran all
    MAX_MOVES depths (75 s a move for plain ``crossing``); it now stops STALL_DEPTHS depths after its best state
    last improved, with the same line."""
    import agents.bots.crossing as crossing

    game = Game(Rules("star", 2))
    states: list[int] = []
    real = Game.legal_moves
    monkeypatch.setattr(Game, "legal_moves", lambda self: states.append(1) or real(self))
    line = plan_crossing(game, 5, rng=random.Random(0))
    stopped = len(states)
    states.clear()
    monkeypatch.setattr(crossing, "STALL_DEPTHS", 10**9)
    assert plan_crossing(game, 5, rng=random.Random(0)) == line
    assert line and stopped * 4 < len(states)
    solitaire = Game(Rules("star", 1))  # a finish always exists there: its plans are as they were
    planned = plan_crossing(solitaire, 20, rng=random.Random(0))
    monkeypatch.setattr(crossing, "STALL_DEPTHS", 1)
    assert plan_crossing(solitaire, 20, rng=random.Random(0)) == planned
    for move in planned:
        solitaire.play(move)
    assert solitaire.status == ["finished"]
