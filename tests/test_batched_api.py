"""The batched engine's API for custom training loops: ``take`` / ``put`` (sub-batches, K children
of a slot), ``final_observation`` and ``info["mover"]`` (the terminal observation), ``reset(mask,
seed=)`` and ``info["truncated"]`` / ``info["terminated"]``, checked against the scalar engine."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from halma_env import Game, Rules
from halma_env.batched import BatchedGame
from halma_env.encoding import encoding
from halma_env.rewards import seat_rewards
from tests.test_batched import _assert_same_state, _assert_unchanged, _greedy_actions, _state, endgames


def _played(rules: Rules, batch: int, plies: int, seed: int = 0, **kw) -> BatchedGame:
    bg = BatchedGame(rules, batch, seed=seed, **kw)
    for _ in range(plies):
        bg.step(bg.random_actions())
    return bg


# --- take / put ------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [Rules("star", 3, stall_limit=30), Rules("halma16", 2), Rules("diamond", 2)])
def test_take_gathers_every_slot_state_and_plays_on_like_the_scalar_engine(rules):
    parent = _played(rules, 5, 23, rotate_first_seat=True)
    idx = [4, 0, 0, 2, 4, 4]
    child = parent.take(torch.tensor(idx))
    assert child.batch_size == 6
    for name, value in _state(parent).items():
        assert torch.equal(getattr(child, name), value[idx]), name
    # the parent's positions, slot by slot, and the child plays on from them as the scalar engine does
    before = _state(parent)
    games = [parent.to_games()[i] for i in idx]
    _assert_same_state(child, games, "taken")
    enc = encoding(rules.variant, rules.num_players)
    for t in range(6):
        actions = child.random_actions()
        _, done, _ = child.step(actions)
        for b, g in enumerate(games):
            g.play(enc.decode_action(g.to_move, int(actions[b])))
            assert bool(done[b]) == g.is_over
        if bool(done.any()):
            break
        _assert_same_state(child, games, f"child step {t}")
    _assert_unchanged(parent, before)  # stepping the child leaves the parent as it was


def test_take_generators():
    parent = _played(Rules("star", 2), 4, 5, seed=1)
    stream = copy.copy(parent).random_actions()
    a, b = parent.take([0, 0, 1, 1]), parent.take([0, 0, 1, 1])
    assert not torch.equal(torch.stack([a.random_actions() for _ in range(4)]),
                           torch.stack([b.random_actions() for _ in range(4)]))  # two takes draw differently
    assert torch.equal(parent.random_actions(), stream)  # taking does not advance the parent's stream
    c, d = parent.take([0, 1, 2, 3], seed=7), parent.take([0, 1, 2, 3], seed=7)
    assert torch.equal(c.random_actions(), d.random_actions())
    e = BatchedGame(Rules("star", 2), 4, seed=7)
    e.put([0, 1, 2, 3], parent)
    assert torch.equal(parent.take([0, 1, 2, 3], seed=7).random_actions(), e.random_actions())


def test_put_scatters_slots_and_pads_the_history():
    rules = Rules("halma16", 2)
    wide = _played(rules, 3, 70, seed=2)  # no game ends in 70 random plies: the history doubles
    assert wide.hist.shape[1] == 128 and int(wide.hist_len.min()) > 64
    narrow = BatchedGame(rules, 4, seed=3)
    narrow.put([3, 1], wide, [2, 0])
    assert narrow.hist.shape[1] == 128
    for name, value in _state(wide).items():
        assert torch.equal(getattr(narrow, name)[[3, 1]], value[[2, 0]]), name
    fresh = BatchedGame(rules, 4, seed=3)
    for name, value in _state(fresh).items():
        if name != "hist":
            assert torch.equal(getattr(narrow, name)[[0, 2]], value[[0, 2]]), name
    assert torch.equal(narrow.hist[[0, 2], :64], fresh.hist[[0, 2]]) and not narrow.hist[:, 64:][[0, 2]].any()
    games = narrow.to_games()
    wide_games = wide.to_games()
    assert games[3].position() == wide_games[2].position() and games[0].position() == fresh.to_games()[0].position()
    # the narrower source is padded into the wider table; repeats in src_idx; src may be the batch itself
    wide.put([0, 1], narrow, [0, 0])
    assert wide.hist.shape[1] == 128 and torch.equal(wide.hist[0], narrow.hist[0])
    wide.put([2], wide, [0])
    assert torch.equal(wide.owner[2], wide.owner[0])
    # the mask and observation follow the new slots
    fresh.put([0, 1, 2, 3], narrow)
    assert torch.equal(fresh.action_mask(), narrow.action_mask()) and torch.equal(fresh.observation(),
                                                                                narrow.observation())


def test_take_and_put_refuse_bad_arguments_and_change_nothing():
    bg = _played(Rules("star", 3, stall_limit=9), 4, 7, seed=4)
    other = BatchedGame(Rules("star", 3), 4)
    before = _state(bg)
    for bad, err in [([], ValueError), ([4], ValueError), ([-1], ValueError), ([[0]], ValueError),
                     ([0.0], TypeError), (torch.ones(4, dtype=torch.bool), TypeError), ("x", TypeError),
                     (None, TypeError)]:
        with pytest.raises(err):
            bg.take(bad)
        with pytest.raises(err):
            bg.put(bad, bg)
    with pytest.raises(ValueError, match="seed"):
        bg.take([0], seed=1.5)
    with pytest.raises(TypeError, match="BatchedGame"):
        bg.put([0], "games")
    with pytest.raises(ValueError, match="rules"):
        bg.put([0], other, [0])
    with pytest.raises(ValueError, match="twice"):
        bg.put([1, 1], bg, [0, 2])
    with pytest.raises(ValueError, match="src_idx"):
        bg.put([1, 2], bg, [0, 4])
    with pytest.raises(ValueError, match="2 slots"):
        bg.put([1, 2], bg, [0])
    with pytest.raises(ValueError):
        bg.put([0, 1], bg.take([0, 1, 2]))  # src_idx defaults to all 3 of src's slots
    _assert_unchanged(bg, before)


# --- terminal observation, truncation -------------------------------------------------------


@pytest.mark.parametrize("rules", [
    Rules("star", 2, move_limit=21),
    Rules("star", 3, move_limit=27),  # finished seats are retired in a truncated game's last position
    Rules("star", 3, play_to_end=False, limit_outcome="progress", move_limit=24),
    Rules("diamond", 2, move_limit=23),
    Rules("star", 2, stall_limit=3, move_limit=30),
])
def test_final_observation_mover_and_truncation_match_the_scalar_engine(rules):
    n = rules.num_players
    enc = encoding(rules.variant, n)
    rng = random.Random(5)
    start = endgames(rules, 8, seed=5)
    bg = BatchedGame(rules, 8, seed=5)
    bg.from_games([g.copy() for g in start])
    games = [g.copy() for g in start]
    seen: dict[str, int] = {}
    for t in range(20):
        actions = _greedy_actions(games, rng) if t % 5 else bg.random_actions().tolist()
        movers = [g.to_move for g in games]
        rewards, done, info = bg.step(torch.tensor(actions))
        assert info["mover"].tolist() == movers
        ended = []
        for b, g in enumerate(games):
            g.play(enc.decode_action(g.to_move, actions[b]))
            assert bool(done[b]) == g.is_over
            if g.is_over:
                ended.append(g)
                seen[g.end_reason] = seen.get(g.end_reason, 0) + 1
                if g.end_reason == "move_limit" and "finished" in g.status:
                    seen["truncated_with_a_finished_seat"] = 1
                assert bool(info["truncated"][b]) == (g.end_reason == "move_limit")
                assert np.allclose(rewards[b].numpy(), seat_rewards(g, bg.reward))  # places paid at truncation too
                games[b] = Game(start[b].rules)
        assert torch.equal(info["terminated"], done & ~info["truncated"]) and not bool(info["truncated"][~done].any())
        final = bg.final_observation(info)
        assert final.shape == (len(ended), *bg.observation_shape) and final.dtype == torch.int8
        by_mover = [enc.observation(g, m) for g, m in zip(ended, [movers[b] for b in done.nonzero()[:, 0].tolist()])]
        assert np.array_equal(final.numpy(), np.array(by_mover).reshape(final.shape))
        if ended:
            seats = torch.tensor([(i * 7 + t) % n for i in range(len(ended))])
            want = [enc.observation(g, int(s)) for g, s in zip(ended, seats)]
            assert np.array_equal(bg.final_observation(info, seats).numpy(), np.array(want))
            seat0 = np.array([enc.observation(g, 0) for g in ended])
            assert np.array_equal(bg.final_observation(info, 0).numpy(), seat0)
    assert seen, "no game ended"
    if n == 3 and rules.play_to_end:
        assert "truncated_with_a_finished_seat" in seen  # its final observation marks the seat retired


def test_final_observation_keeps_and_refuses():
    bg = BatchedGame(Rules("star", 2, move_limit=3), 3, seed=0)
    for _ in range(3):
        _, done, info = bg.step(bg.random_actions())
    assert bool(done.all()) and bool(info["truncated"].all()) and not bool(info["terminated"].any())
    final = bg.final_observation(info)
    obs = bg.observation().clone()
    bg.step(bg.random_actions())  # a later step changes neither the info's final observation nor the buffers'
    assert torch.equal(bg.final_observation(info), final) and final.data_ptr() != bg.observation().data_ptr()
    _, _, info2 = bg.step(bg.random_actions())
    assert bg.final_observation(info2).shape == (0, *bg.observation_shape)
    assert not torch.equal(obs, final)
    for seat, err in [(2, ValueError), (torch.tensor([0, 1]), ValueError), (0.5, TypeError), ("a", TypeError)]:
        with pytest.raises(err):
            bg.final_observation(info, seat)
    with pytest.raises(TypeError, match="step"):
        bg.final_observation({})
    with pytest.raises(ValueError, match="size"):
        BatchedGame(Rules("star", 2), 2).final_observation(info)


def test_stall_and_repetition_ends_are_terminations():
    bg = BatchedGame(Rules("star", 2, stall_limit=2, move_limit=50), 4, seed=0)
    kinds = set()
    for _ in range(12):
        _, done, info = bg.step(bg.random_actions())
        assert not bool(info["truncated"].any())
        assert torch.equal(info["terminated"], done)
        kinds |= set(info["end_reason"][done].tolist())
    assert kinds  # stall_limit ends happened, none of them truncations


# --- reset(mask, seed) ----------------------------------------------------------------------


@pytest.mark.parametrize("rotate", [False, True])
def test_reset_of_some_slots(rotate):
    rules = Rules("star", 3, stall_limit=20, first_seat=1)
    bg = _played(rules, 5, 40, seed=6, rotate_first_seat=rotate)  # several games over: first seats rotated
    fresh = BatchedGame(rules, 5, seed=6, rotate_first_seat=rotate)
    full = copy.copy(bg)
    full.reset()
    for name, value in _state(fresh).items():
        if name != "hist":
            assert torch.equal(getattr(full, name), value), name
    everything = copy.copy(bg)
    everything.reset(torch.ones(5, dtype=torch.bool))
    for name, value in _state(full).items():
        assert torch.equal(getattr(everything, name), value), name
    mask = torch.tensor([True, False, True, False, False])
    before = _state(bg)
    bg.reset(mask)
    for name, value in _state(bg).items():
        if name == "hist":
            continue
        assert torch.equal(value[mask], getattr(fresh, name)[mask]), name
        assert torch.equal(value[~mask], before[name][~mask]), name
    games, fresh_games = bg.to_games(), fresh.to_games()
    assert [games[b].position() for b in (0, 2)] == [fresh_games[b].position() for b in (0, 2)]
    nothing = copy.copy(bg)
    nothing.reset(torch.zeros(5, dtype=torch.bool))
    _assert_unchanged(nothing, _state(bg))


def test_reset_seed_and_bad_masks():
    rules = Rules("star", 2)
    bg = _played(rules, 4, 3, seed=0)
    bg.reset(seed=11)
    assert torch.equal(bg.random_actions(), BatchedGame(rules, 4, seed=11).random_actions())
    bg.step(bg.random_actions())
    state, gen = _state(bg), bg.generator.get_state()
    for bad, err in [(torch.ones(4, dtype=torch.long), TypeError), (torch.ones(3, dtype=torch.bool), ValueError),
                     (torch.ones((4, 1), dtype=torch.bool), ValueError), ("x", TypeError)]:
        with pytest.raises(err):
            bg.reset(bad)
    with pytest.raises(ValueError, match="seed"):
        bg.reset(torch.ones(4, dtype=torch.bool), seed="1")
    _assert_unchanged(bg, state)
    assert torch.equal(bg.generator.get_state(), gen)
