"""``BatchedGame(auto_reset=False)``: a game that ends keeps its final position until ``reset``.

The ended games are checked against the scalar engine's games replayed with the same actions: the
step where a game ends reports it exactly as with auto-reset (rewards, places, end reason, length,
final board), and from then on its slot is the scalar game at its end (no legal moves, the
observation of ``encoding.observation(game, game.to_move)``, ``to_games``), whatever actions are
passed for it, with zero rewards and no second ``done``.  The default (auto-reset) plays the same
games as before: the same as a batch with ``auto_reset=False`` whose ended slots are reset by hand.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from halma_env import Game, Rules
from halma_env.batched import END_REASONS, BatchedGame
from halma_env.encoding import encoding
from halma_env.game import IllegalMoveError, random_playout
from halma_env.layout import layout
from halma_env.rewards import seat_rewards
from tests.engine_helpers import position
from tests.test_batched import _assert_same_state, _greedy_actions, _state, endgames, scalar_positions


def _full_state(bg: BatchedGame) -> dict[str, torch.Tensor]:
    state = _state(bg)
    state["end_reason"] = bg.end_reason.clone()
    return state


def _slot(state: dict[str, torch.Tensor], b: int) -> dict[str, torch.Tensor]:
    """One slot's rows of a ``_full_state`` (its repetition history up to its length)."""
    out = {k: v[b] for k, v in state.items() if k != "hist"}
    out["hist"] = state["hist"][b, : int(state["hist_len"][b])]
    return out


def _assert_slot_unchanged(bg: BatchedGame, before: dict[str, torch.Tensor], b: int, where: str) -> None:
    now, then = _slot(_full_state(bg), b), _slot(before, b)
    for k, v in then.items():
        assert torch.equal(now[k], v), f"{where} slot {b}: {k} changed"


def _code(game: Game) -> int:
    return END_REASONS.index(game.end_reason) if game.is_over else 0


def _junk(rng: random.Random, num_actions: int) -> int:
    return rng.choice([0, -1, num_actions, 2**40, -(2**40), rng.randrange(num_actions)])


def _assert_quiet(rewards, done, info, b: int, where: str) -> None:
    """Slot ``b`` of a step's outputs is that of a game that did not end (and was paid nothing)."""
    assert not bool(rewards[b].any()), f"{where} slot {b}: rewards {rewards[b].tolist()}"
    assert not bool(done[b]) and int(info["end_reason"][b]) == 0 and int(info["length"][b]) == 0, where
    assert not bool(info["places"][b].any()) and not bool(info["finished"][b].any()), where
    assert not bool(info["truncated"][b]) and not bool(info["terminated"][b]), where


def _play_until_all_ended(bg: BatchedGame, games: list[Game], rng: random.Random, policy: str,
                          max_steps: int = 400) -> list[int]:
    """Step ``bg`` and the scalar ``games`` side by side until every slot has ended; after every step
    each slot is checked against its scalar game (ended ones too) and the ended slots' state must be
    exactly as before.  Returns how many ends each slot reported."""
    enc = encoding(bg.rules.variant, bg.rules.num_players)
    reported = [0] * bg.batch_size
    undo: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(max_steps):
        where = f"step {t}"
        _assert_same_state(bg, games, where)  # an ended slot: no legal move, its final observation
        ended = [g.is_over for g in games]
        assert bg.ended.tolist() == ended, where
        assert bg.end_reason.tolist() == [_code(g) for g in games], where
        if all(ended):
            return reported
        before = _full_state(bg)
        drawn = bg.random_actions().tolist()
        assert all(drawn[b] == 0 for b in range(len(games)) if ended[b]), "random_actions of an ended slot"
        if policy == "greedy":
            live = [g for g in games if not g.is_over]
            picks = iter(_greedy_actions(live, rng))
            actions = [0 if g.is_over else next(picks) for g in games]
        elif policy == "undo":  # take back one's own last move when possible: positions repeat
            actions = drawn
            for b, g in enumerate(games):
                back = undo.get((b, g.to_move))
                if not g.is_over and back in g.legal_moves() and rng.random() < 0.9:
                    actions[b] = enc.encode_move(g.to_move, *back)
                if not g.is_over:
                    undo[(b, g.to_move)] = tuple(reversed(enc.decode_action(g.to_move, actions[b])))
        else:
            actions = drawn
        for b in range(len(games)):
            if ended[b]:
                actions[b] = _junk(rng, bg.num_actions)  # ignored, whatever it is
        movers = [g.to_move for g in games]
        rewards, done, info = bg.step(torch.tensor(actions))
        assert info["mover"].tolist() == movers, where
        finals = []
        for b, g in enumerate(games):
            if ended[b]:
                _assert_quiet(rewards, done, info, b, where)
                _assert_slot_unchanged(bg, before, b, where)
                continue
            g.play(enc.decode_action(g.to_move, actions[b]))
            assert bool(done[b]) == g.is_over, f"{where} slot {b}: done {bool(done[b])} vs {g.end_reason}"
            if not g.is_over:
                _assert_quiet(rewards, done, info, b, where)  # (no progress shaping here)
                continue
            reported[b] += 1
            finals.append(enc.observation(g, movers[b]))
            assert END_REASONS[int(info["end_reason"][b])] == g.end_reason, where
            assert info["places"][b].tolist() == g.places and int(info["length"][b]) == g.ply, where
            assert info["finished"][b].tolist() == [s == "finished" for s in g.status], where
            assert bool(info["truncated"][b]) == (g.end_reason == "move_limit"), where
            assert bool(info["terminated"][b]) == (g.end_reason != "move_limit"), where
            assert np.allclose(rewards[b].cpu().numpy(), seat_rewards(g, bg.reward)), f"{where} slot {b}: rewards"
            board = g.board()
            assert info["final_owner"][b].tolist() == [-1 if c is None else c[0] for c in board], where
            assert info["final_king"][b].tolist() == [bool(c and c[1]) for c in board], where
        final = bg.final_observation(info)
        assert np.array_equal(final.cpu().numpy(), np.array(finals).reshape(final.shape)), where
    pytest.fail(f"not every game ended in {max_steps} steps")


def _assert_frozen_for_good(bg: BatchedGame, games: list[Game], rng: random.Random, steps: int = 3) -> None:
    """Every slot has ended: more steps (any actions, random_actions included) change nothing."""
    before = _full_state(bg)
    obs = bg.observation().clone()
    for t in range(steps):
        actions = bg.random_actions() if t == 0 else torch.tensor([_junk(rng, bg.num_actions) for _ in games])
        rewards, done, info = bg.step(actions)
        for b in range(bg.batch_size):
            _assert_quiet(rewards, done, info, b, f"after the end, step {t}")
        assert bg.final_observation(info).shape[0] == 0
    after = _full_state(bg)
    assert not [k for k in before if not torch.equal(after[k], before[k])], "changed after the end"
    assert torch.equal(bg.observation(), obs)
    _assert_same_state(bg, games, "after the end")
    for b, (mine, g) in enumerate(zip(bg.to_games(), games)):
        assert mine.is_over and mine.end_reason == g.end_reason, f"slot {b}: to_games end"
        assert mine.position() == g.position() and mine.ply == g.ply and mine.to_move == g.to_move, f"slot {b}"
        assert mine.places == g.places and mine.status == g.status and mine.legal_moves() == [], f"slot {b}"


# --- random playouts and near-finished games, against the scalar engine ----------------------


@pytest.mark.parametrize("rules", [
    Rules("star", 2, move_limit=40),
    Rules("star", 3, move_limit=30, stall_limit=8),  # the kept assignments of ended slots stay
    Rules("diamond", 2, move_limit=30, limit_outcome="progress"),
    Rules("halma16", 2, move_limit=30),  # halma16's repetition rule: the history of ended slots stays
    Rules("star", 2, repetition_limit=3, move_limit=90),  # loaded histories longer than the first 64
], ids=["star2", "star3-stall", "diamond2-progress", "halma16", "star2-repetition"])
def test_random_playouts_end_once_and_stay_as_the_scalar_games_ended(rules, device="cpu"):
    start = scalar_positions(rules, 5, seed=3, max_plies=rules.move_limit - 1)
    assert len({g.ply for g in start}) > 2  # so the games end in different steps
    bg = BatchedGame(rules, 5, device=device, seed=3, auto_reset=False)
    bg.from_games([g.copy() for g in start])
    games = [g.copy() for g in start]
    rng = random.Random(3)
    reported = _play_until_all_ended(bg, games, rng, "random")
    assert reported == [1] * 5
    _assert_frozen_for_good(bg, games, rng)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device on this machine")
def test_ended_games_on_cuda():
    for rules in (Rules("star", 3, move_limit=30, stall_limit=8), Rules("halma16", 2, move_limit=30)):
        test_random_playouts_end_once_and_stay_as_the_scalar_games_ended(rules, device="cuda")


def test_repetitions_end_games_while_others_are_ended():
    # the history of the games in play is kept while other slots are ended (they count their repetitions)
    rules = Rules("star", 2, repetition_limit=3, move_limit=60)
    start = scalar_positions(rules, 6, seed=5, max_plies=59)
    bg = BatchedGame(rules, 6, seed=5, auto_reset=False)
    bg.from_games([g.copy() for g in start])
    games = [g.copy() for g in start]
    rng = random.Random(5)
    assert _play_until_all_ended(bg, games, rng, "undo") == [1] * 6
    reasons = [g.end_reason for g in games]
    assert reasons.count("repetition") >= 2 and "move_limit" in reasons, reasons
    _assert_frozen_for_good(bg, games, rng)


def _repeated(rules: Rules) -> Game:
    """A game that ends by repetition after a few plies: each seat takes back its last move."""
    g = Game(rules)
    back: dict[int, tuple[int, int]] = {}
    while not g.is_over:
        seat, moves = g.to_move, g.legal_moves()
        move = back[seat] if back.get(seat) in moves else tuple(moves[0])
        back[seat] = (move[1], move[0])
        g.play(move)
    return g


def test_the_history_table_grows_and_shrinks_while_a_slot_is_ended():
    rules = Rules("star", 2, repetition_limit=3, move_limit=100)
    over = _repeated(rules)
    assert over.end_reason == "repetition" and over.ply < 20
    start = [over, Game(rules), Game(rules.replace(first_seat=1))]
    bg = BatchedGame(rules, 3, seed=9, auto_reset=False)
    bg.from_games([g.copy() for g in start])
    assert bg.hist.shape[1] == 64
    games = [g.copy() for g in start]
    rng = random.Random(9)
    assert _play_until_all_ended(bg, games, rng, "random") == [0, 1, 1]
    assert bg.hist.shape[1] == 128  # doubled while slot 0 was ended (101 positions in slots 1 and 2)
    bg.reset(torch.tensor([False, True, True]))
    games[1], games[2] = Game(rules), Game(rules)
    enc = encoding(rules.variant, rules.num_players)
    actions = bg.random_actions()
    for b in (1, 2):
        games[b].play(enc.decode_action(games[b].to_move, int(actions[b])))
    bg.step(actions)
    assert bg.hist.shape[1] == 64  # and back once the longest history left is short
    assert _play_until_all_ended(bg, games, rng, "random") == [0, 1, 1]


def test_the_games_in_play_step_as_in_a_batch_without_ended_games():
    # every state tensor of the games in play (stall counters, kept assignments, history...) is what a
    # batch holding only those games has, step after step
    rules = Rules("star", 3, stall_limit=40, repetition_limit=3, move_limit=80)
    live = scalar_positions(rules, 3, seed=6, max_plies=12)
    mixed = BatchedGame(rules, 5, seed=6, auto_reset=False)
    alone = BatchedGame(rules, 3, seed=6, auto_reset=False)
    alone.from_games([g.copy() for g in live])
    loaded = [_over(rules, 6), live[0], _over(rules, 7), live[1], live[2]]
    mixed.from_games([g.copy() for g in loaded])
    rows = torch.tensor([1, 3, 4])
    steps = 0
    while not bool(alone.ended.any()) and steps < 40:
        actions = alone.random_actions()
        full = torch.zeros(5, dtype=torch.long)
        full[rows] = actions
        r1, d1, i1 = mixed.step(full)
        r2, d2, i2 = alone.step(actions)
        assert torch.equal(r1[rows], r2) and torch.equal(d1[rows], d2)
        assert all(torch.equal(i1[k][rows], i2[k]) for k in i2), steps
        mine, theirs = _full_state(mixed), _full_state(alone)
        for j, b in enumerate(rows.tolist()):
            a, c = _slot(mine, b), _slot(theirs, j)
            assert not [k for k in c if not torch.equal(a[k], c[k])], f"step {steps} slot {b}"
        steps += 1
    assert steps >= 20


@pytest.mark.parametrize("rules", [
    Rules("star", 2, move_limit=60),
    Rules("star", 3, play_to_end=False, move_limit=40),  # first finish: the others ranked at once
    Rules("star", 3, move_limit=40),  # play to end: a finished seat waits, retired, for the others
    Rules("diamond", 2, move_limit=40),
], ids=["star2", "star3-first-finish", "star3", "diamond2"])
def test_near_finished_games_finish_once_and_stay_finished(rules):
    start = endgames(rules, 6, seed=4)
    bg = BatchedGame(rules, 6, seed=4, auto_reset=False)
    bg.from_games([g.copy() for g in start])
    games = [g.copy() for g in start]
    rng = random.Random(4)
    assert _play_until_all_ended(bg, games, rng, "greedy") == [1] * 6
    assert {"finished", "first_finish"} & {g.end_reason for g in games}
    _assert_frozen_for_good(bg, games, rng)


def test_a_plain_loop_runs_until_every_game_ended():
    # the loop of a user who evaluates a fixed number of games: random_actions never picks an action
    # that step refuses, ended slots included
    bg = BatchedGame(Rules("diamond", 2, move_limit=24, stall_limit=6), 7, seed=2, rotate_first_seat=True,
                     auto_reset=False)
    ends = torch.zeros(7, dtype=torch.long)
    for _ in range(30):
        bg.action_mask()
        bg.observation()
        bg.legal_lists()
        _, done, _ = bg.step(bg.random_actions())
        ends += done.long()
    assert bool(bg.ended.all()) and ends.tolist() == [1] * 7
    assert not bool(bg.action_mask().any()) and not bool(bg.legal_moves()[1].any())
    assert (bg.legal_moves()[0] == bg.H).all()  # no piece rows: nothing to move
    actions, valid = bg.legal_lists()
    assert actions.shape == (7, 1) and not bool(valid.any()) and not bool(actions.any())
    state = bg.generator.get_state()
    assert bg.random_actions().tolist() == [0] * 7
    twin = torch.Generator()
    twin.set_state(state)
    torch.rand(7, generator=twin)  # still one draw per slot: the stream does not depend on which games ended
    assert torch.equal(bg.generator.get_state(), twin.get_state())


# --- reset, and the default ----------------------------------------------------------------


@pytest.mark.parametrize("rotate", [False, True])
def test_reset_mask_restarts_only_those_slots(rotate):
    rules = Rules("star", 2, move_limit=30)
    n = rules.num_players
    start = scalar_positions(rules, 5, seed=8, max_plies=29)
    bg = BatchedGame(rules, 5, seed=8, rotate_first_seat=rotate, auto_reset=False)
    bg.from_games([g.copy() for g in start])
    games = [g.copy() for g in start]
    rng = random.Random(8)
    assert _play_until_all_ended(bg, games, rng, "random") == [1] * 5
    before = _full_state(bg)
    mask = torch.tensor([True, False, True, False, True])
    bg.reset(mask)
    assert bg.ended.tolist() == [False, True, False, True, False]
    fresh = BatchedGame(rules, 5, seed=8, rotate_first_seat=rotate, auto_reset=False)
    now, start_state = _full_state(bg), _full_state(fresh)
    for k in now:
        if k != "hist":
            assert torch.equal(now[k][mask], start_state[k][mask]), k
    for b in (1, 3):
        _assert_slot_unchanged(bg, before, b, "reset(mask)")
    # a reset slot starts with the scheme's seat (rotation: slot b begins with seat b, every time)
    for b in (0, 2, 4):
        games[b] = Game(rules.replace(first_seat=(rules.first_seat + b) % n if rotate else rules.first_seat))
    assert _play_until_all_ended(bg, games, rng, "random") == [1, 0, 1, 0, 1]
    bg.reset()
    assert not bool(bg.ended.any()) and not bool(bg.end_reason.any())
    assert bg.to_move.tolist() == fresh.to_move.tolist() and torch.equal(bg.owner, fresh.owner)


@pytest.mark.parametrize("rules,rotate", [
    (Rules("star", 3, move_limit=12, limit_outcome="progress"), False),
    (Rules("diamond", 2, move_limit=10, stall_limit=4), False),
    (Rules("halma16", 2, move_limit=9), True),
])
def test_the_default_auto_reset_is_resetting_ended_slots_by_hand(rules, rotate):
    # the default plays exactly what auto_reset=True plays, and (without rotation, where an auto-reset
    # and reset(mask) start the same game) what auto_reset=False plays when the loop resets the ended
    # slots itself: the same random draws, rewards, ends and states
    default = BatchedGame(rules, 4, seed=3, rotate_first_seat=rotate)
    explicit = BatchedGame(rules, 4, seed=3, rotate_first_seat=rotate, auto_reset=True)
    by_hand = BatchedGame(rules, 4, seed=3, rotate_first_seat=rotate, auto_reset=False)
    assert default.auto_reset is True and by_hand.auto_reset is False
    others = [explicit] if rotate else [explicit, by_hand]
    ends = 0
    for t in range(30):
        actions = default.random_actions()
        assert all(torch.equal(actions, g.random_actions()) for g in others), f"step {t}"
        rewards, done, info = default.step(actions)
        for g in others:
            rewards2, done2, info2 = g.step(actions)
            assert torch.equal(rewards2, rewards) and torch.equal(done2, done), f"step {t}"
            assert info2.keys() == info.keys() and all(torch.equal(info2[k], info[k]) for k in info), f"step {t}"
        ends += int(done.sum())
        if not rotate:
            assert torch.equal(by_hand.ended, done)
            by_hand.reset(done)
        for g in others:
            for name, value in _full_state(default).items():
                assert torch.equal(getattr(g, name), value), f"step {t}: {name}"
        assert not bool(default.end_reason.any())  # with auto-reset nothing is ever ended
    assert ends >= 8


def test_bad_auto_reset_values_are_refused():
    for value in ("no", "False", 0, 1, None, 1.0, [True], np.int64(1)):
        with pytest.raises(ValueError, match="auto_reset must be True or False"):
            BatchedGame(Rules(), 2, auto_reset=value)
    assert BatchedGame(Rules(), 2, auto_reset=np.bool_(False)).auto_reset is False
    assert BatchedGame(Rules(), 2).auto_reset is True


# --- copies, take, put, to_games / from_games ------------------------------------------------


def _over(rules: Rules, seed: int) -> Game:
    g = Game(rules)
    random_playout(g, random.Random(seed), 10_000)
    assert g.is_over
    return g


def _mixed(rules: Rules, seed: int = 0) -> tuple[BatchedGame, list[Game]]:
    """A batch of 5 (auto_reset=False) with slots 0 and 3 ended, loaded by from_games."""
    live = scalar_positions(rules, 3, seed=seed, max_plies=10)
    games = [_over(rules, seed), live[0], live[1], _over(rules, seed + 1), live[2]]
    bg = BatchedGame(rules, 5, seed=seed, auto_reset=False)
    bg.from_games([g.copy() for g in games])
    return bg, games


def test_from_games_loads_ended_games_only_without_auto_reset():
    rules = Rules("star", 3, move_limit=25, stall_limit=5)
    bg, games = _mixed(rules, seed=1)
    auto = BatchedGame(rules, 5)
    before = _full_state(auto)
    with pytest.raises(ValueError, match=r"games\[0\] is over .*auto_reset=False"):
        auto.from_games(games)
    assert all(torch.equal(v, before[k]) for k, v in _full_state(auto).items())
    assert bg.ended.tolist() == [True, False, False, True, False]
    assert bg.end_reason.tolist() == [_code(g) for g in games]
    _assert_same_state(bg, games, "loaded")
    rows, dest = bg.legal_moves()
    assert (rows[bg.ended] == bg.H).all() and not bool(dest[bg.ended].any())  # no piece to move
    for mine, g in zip(bg.to_games(), games):
        assert (mine.is_over, mine.end_reason, mine.places, mine.status, mine.position()) == \
            (g.is_over, g.end_reason, g.places, g.status, g.position())
    back = BatchedGame(rules, 5, auto_reset=False)
    back.from_games(bg.to_games())  # a round trip keeps the ended slots ended
    assert torch.equal(back.end_reason, bg.end_reason) and torch.equal(back.owner, bg.owner)
    rng = random.Random(1)
    assert _play_until_all_ended(bg, games, rng, "random") == [0, 1, 1, 0, 1]


@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy])
def test_copies_carry_the_ended_slots(make_copy):
    bg, games = _mixed(Rules("halma16", 2, move_limit=30))
    other = make_copy(bg)
    assert other.auto_reset is False and torch.equal(other.end_reason, bg.end_reason)
    assert other.end_reason.data_ptr() != bg.end_reason.data_ptr()
    before = _full_state(bg)
    rng = random.Random(0)
    scalar = [g.copy() for g in games]
    assert _play_until_all_ended(other, scalar, rng, "random") == [0, 1, 1, 0, 1]
    assert all(torch.equal(v, before[k]) for k, v in _full_state(bg).items())  # the original as it was
    other.reset(torch.tensor([True, False, False, False, False]))
    assert bg.ended.tolist() == [True, False, False, True, False]


def test_take_and_put_carry_the_ended_slots():
    rules = Rules("diamond", 2, move_limit=40)
    bg, games = _mixed(rules, seed=2)
    child = bg.take([3, 1, 0, 0])
    assert child.auto_reset is False and child.ended.tolist() == [True, False, True, True]
    _assert_same_state(child, [games[i].copy() for i in (3, 1, 0, 0)], "taken")
    # put: an ended game into a live slot, a live one into an ended slot
    dst = BatchedGame(rules, 3, seed=5, auto_reset=False)
    dst.put([0, 2], bg, [0, 4])
    assert dst.ended.tolist() == [True, False, False]
    _assert_same_state(dst, [games[0], Game(rules), games[4]], "put")
    dst.put([0], bg, [1])
    assert dst.ended.tolist() == [False, False, False]
    # an auto-reset batch holds no ended game: refused, nothing changed; live slots are fine
    auto = BatchedGame(rules, 3, seed=5)
    before = _full_state(auto)
    with pytest.raises(ValueError, match=r"src slot\(s\) \[3\] hold ended games"):
        auto.put([0, 1], bg, [1, 3])
    assert all(torch.equal(v, before[k]) for k, v in _full_state(auto).items())
    auto.put([0, 1], bg, [1, 2])
    _assert_same_state(auto, [games[1], games[2], Game(rules)], "put into auto")


# --- bad actions are still refused on the games in play --------------------------------------


def test_bad_actions_on_games_in_play_raise_and_change_nothing():
    rules = Rules("star", 2, move_limit=30)
    bg, games = _mixed(rules, seed=3)
    before = _full_state(bg)
    legal = bg.random_actions()
    junk = legal.clone()
    junk[0], junk[3] = -7, bg.num_actions + 3  # ended slots: ignored
    illegal = junk.clone()
    illegal[2] = 0  # no piece of the mover on canonical hole 0 at this stage: illegal
    assert not bool(bg.action_mask()[2, 0])
    with pytest.raises(IllegalMoveError, match=r"game\(s\) \[2\]"):
        bg.step(illegal)
    out_of_range = junk.clone()
    out_of_range[4] = -1
    with pytest.raises(ValueError, match=r"game\(s\) \[4\]; nothing was played"):
        bg.step(out_of_range)
    with pytest.raises(TypeError, match="integer tensor"):
        bg.step(junk.float())
    with pytest.raises(ValueError, match="shape"):
        bg.step(junk[:4])
    assert all(torch.equal(v, before[k]) for k, v in _full_state(bg).items())
    rewards, done, info = bg.step(junk)
    for b in (0, 3):
        _assert_quiet(rewards, done, info, b, "junk")
        _assert_slot_unchanged(bg, before, b, "junk")
    assert bg.ply.tolist()[1:3] == [games[1].ply + 1, games[2].ply + 1]


def test_to_games_keeps_the_seat_to_move_of_a_game_ended_beside_a_resigned_seat():
    """star 3, seat 1 resigned, seat 2 one step from its goal: its finishing move ends the game (seat 0 is
    last) with seat 2 to move.  The position text reads seat 1 as finished, so Game.from_position alone
    would hand the turn on to seat 0; to_games and a round trip through from_games keep seat 2."""
    lay = layout("star", 3)
    geo = lay.geometry
    pieces = {h: "0" for h in lay.start[0]} | {h: "1" for h in lay.start[1]}
    goal = sorted(lay.goals[2])
    last = next(h for h in goal if any(nb not in lay.goals[2] and nb not in pieces for nb in geo.neighbours[h]))
    src = next(nb for nb in geo.neighbours[last] if nb not in lay.goals[2] and nb not in pieces)
    pieces |= {h: "2" for h in goal if h != last} | {src: "2"}
    game = Game.from_position(position("star", 3, pieces, to_move=2, ply=30))
    game.resign(1)
    bg = BatchedGame(Rules("star", 3), 1, auto_reset=False)
    bg.from_games([game.copy()])
    game.play((src, last))
    _, done, _ = bg.step(torch.tensor([encoding("star", 3).encode_move(2, src, last)]))
    assert done.tolist() == [True] and bg.ended.tolist() == [True]
    assert (game.end_reason, game.places, game.to_move) == ("finished", [2, 3, 1], 2)
    back = bg.to_games()[0]
    assert (back.end_reason, back.places, back.to_move) == ("finished", [2, 3, 1], 2)
    again = BatchedGame(Rules("star", 3), 1, auto_reset=False)
    again.from_games(bg.to_games())
    assert again.to_move.tolist() == [2]
    assert torch.equal(again.observation(), bg.observation())
