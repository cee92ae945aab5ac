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
from halma_env.batched import END_REASONS, BatchedGame
from halma_env.encoding import encoding
from halma_env.rewards import seat_rewards
from tests.test_batched import _assert_same_state, _assert_unchanged, _greedy_actions, _position, _state, endgames


def _played(rules: Rules, batch: int, plies: int, seed: int = 0, **kw) -> BatchedGame:
    bg = BatchedGame(rules, batch, seed=seed, **kw)
    for _ in range(plies):
        bg.step(bg.random_actions())
    return bg


# --- take / put ------------------------------------------------------------------------------


# (the move limit ends the taken games on the child's 4th step: done is checked against the scalar end too)
@pytest.mark.parametrize("rules", [Rules("star", 3, stall_limit=30, move_limit=27), Rules("halma16", 2, move_limit=27),
                                   Rules("diamond", 2, move_limit=27)])
def test_take_gathers_every_slot_state_and_plays_on_like_the_scalar_engine(rules):
    parent = _played(rules, 5, 23, rotate_first_seat=True)
    assert int(parent.ply.max()) == 23  # no game has ended (and restarted) yet
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
    ends = 0
    for t in range(6):
        actions = child.random_actions()
        _, done, _ = child.step(actions)
        for b, g in enumerate(games):
            g.play(enc.decode_action(g.to_move, int(actions[b])))
            assert bool(done[b]) == g.is_over
            ends += g.is_over
        if bool(done.any()):
            break
        _assert_same_state(child, games, f"child step {t}")
    assert ends == len(idx) and t == 3  # every taken game ended with its scalar copy, at the move limit
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
    # a generator of one's own draws from it; anything else is named (torch's error was a page of signatures)
    own = torch.Generator().manual_seed(3)
    assert torch.equal(e.random_actions(generator=own), e.random_actions(generator=torch.Generator().manual_seed(3)))
    for bad in (5, "gen", torch.tensor(1)):
        with pytest.raises(TypeError, match=f"^generator must be a torch.Generator or None, got {type(bad).__name__}$"):
            e.random_actions(generator=bad)


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
                     (None, TypeError), ([0, 2**70], ValueError)]:  # (past int64: out of range, as step has it)
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
    # the info of a star-3 batch of the same size and board (it was torch's "size of tensor a (2) must match")
    three = BatchedGame(Rules("star", 3, move_limit=1), 3, seed=0)
    _, _, info3 = three.step(three.random_actions())
    with pytest.raises(ValueError, match=r"final_status \(3, 3\); this batch has B=3, H=121, 2 seats"):
        bg.final_observation(info3)
    # a seat out of range is refused also when no game ended (info2): it was taken without a word
    for seat in (2, -1):
        with pytest.raises(ValueError, match="seat must be 0..1"):
            bg.final_observation(info2, seat)


_TERMINATIONS = {"finished", "first_finish", "resign", "stall_limit", "repetition", "no_moves"}


def _check_end_flags(done, info, seen: dict[str, int]) -> None:
    """Every ended slot: a move_limit end is a truncation and nothing else; every other end is a
    termination and nothing else; a slot that did not end is neither."""
    reasons = [END_REASONS[int(c)] for c in info["end_reason"]]
    for b, reason in enumerate(reasons):
        assert bool(done[b]) == (reason != ""), (b, reason)
        if reason == "move_limit":
            assert bool(info["truncated"][b]) and not bool(info["terminated"][b]), (b, reason)
        elif reason:
            assert reason in _TERMINATIONS, reason
            assert bool(info["terminated"][b]) and not bool(info["truncated"][b]), (b, reason)
        else:
            assert not bool(info["terminated"][b]) and not bool(info["truncated"][b]), b
        if reason:
            seen[reason] = seen.get(reason, 0) + 1


@pytest.mark.parametrize("auto_reset", [True, False])  # (False: the steps with ended games frozen too)
def test_stall_and_repetition_ends_are_terminations(auto_reset):
    # per slot: "undo" takes back its seat's last move (positions repeat: repetition ends),
    # "random" plays random moves (no progress: stall_limit ends), "greedy" heads for the goal
    # (progress every ply: move_limit ends)
    rules = Rules("star", 2, stall_limit=4, repetition_limit=2, move_limit=16)
    policies = ["undo", "undo", "random", "random", "greedy", "greedy"]
    enc = encoding(rules.variant, rules.num_players)
    bg = BatchedGame(rules, len(policies), seed=0, auto_reset=auto_reset)
    rng = random.Random(0)
    last: dict[tuple[int, int], tuple[int, int]] = {}
    seen: dict[str, int] = {}
    seen_beside_ended: dict[str, int] = {}  # auto_reset=False: ends in steps with ended games in the batch
    for t in range(60):
        games = bg.to_games()
        greedy = _greedy_actions([g if not g.is_over else Game(rules) for g in games], rng)
        actions = []
        for b, (g, policy) in enumerate(zip(games, policies)):
            if g.is_over:  # auto_reset=False: an ended game waiting for its reset (its action is ignored)
                actions.append(0)
                continue
            moves = [(m.src, m.dst) for m in g.legal_moves()]
            if policy == "undo":
                back = last.get((b, g.to_move))
                src, dst = back if back in moves else rng.choice(moves)
                last[(b, g.to_move)] = (dst, src)
                actions.append(enc.encode_move(g.to_move, src, dst))
            elif policy == "random":
                actions.append(enc.encode_move(g.to_move, *rng.choice(moves)))
            else:
                actions.append(greedy[b])
        _, done, info = bg.step(torch.tensor(actions))
        _check_end_flags(done, info, seen)
        if any(g.is_over for g in games):
            _check_end_flags(done, info, seen_beside_ended)
        if not auto_reset:  # an ended game waits a step or two for its reset (slots out of phase)
            bg.reset((bg.end_reason > 0) & ((t + torch.arange(len(policies))) % 3 == 0))
    for reason in ("stall_limit", "repetition", "move_limit"):
        assert seen.get(reason, 0) > 0, seen
        assert auto_reset or seen_beside_ended.get(reason, 0) > 0, seen_beside_ended
    # no_moves (diamond 3, the position of test_batched's no_moves test): seat 0 finishes and the two
    # seats left can never move
    rules = Rules("diamond", 3)
    owner = [-1] * 121
    owner[13], owner[120], owner[0] = 0, 1, 2
    game = Game.from_position(_position(rules, owner, [False] * 121, 0))
    bg = BatchedGame(rules, 2, auto_reset=auto_reset)
    bg.from_games([game, Game(rules)])
    seen = {}
    _, done, info = bg.step(torch.tensor([encoding("diamond", 3).encode_move(0, 13, 14), int(bg.random_actions()[1])]))
    _check_end_flags(done, info, seen)
    assert seen == {"no_moves": 1}


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


@pytest.mark.parametrize("size", [2**30 + 1, 2**62, 2**63, 10**12])
def test_a_batch_past_max_batch_size_is_a_value_error(size: int) -> None:
    """Past torch's size arithmetic a batch failed inside torch: 2**62 a RuntimeError ("Storage size calculation
    overflowed"), 2**63 a TypeError with torch's C++ stack in its message, 10**12 the allocator's RuntimeError
    (before 2026-12-07)."""
    from halma_env.batched import MAX_BATCH_SIZE

    with pytest.raises(ValueError) as caught:
        BatchedGame(Rules("star", 2), batch_size=size, seed=0)
    assert str(caught.value) == (f"batch_size must be at most 2**30 ({MAX_BATCH_SIZE:,} games, far past any machine's "
                                 f"memory), got {size}")


def test_a_batch_too_big_to_allocate_is_a_memory_error_naming_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's allocator error escaped as a RuntimeError naming no argument (before 2026-12-07); torch's other
    errors are left as they are.  (The allocator's refusal is simulated: a real one needs a batch past this
    machine's memory, which another machine may grant.)"""
    real_full = torch.full

    def refusing(error: RuntimeError):
        def full(size, *args, **kwargs):
            if size and size[0] == 3000:
                raise error
            return real_full(size, *args, **kwargs)
        return full

    message = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
               "to allocate 363000 bytes. Error code 12 (Cannot allocate memory)")
    monkeypatch.setattr(torch, "full", refusing(RuntimeError(message)))
    with pytest.raises(MemoryError) as caught:
        BatchedGame(Rules("star", 2), batch_size=3000, seed=0)
    assert str(caught.value) == ("batch_size 3000: the state of 3,000 games does not fit in the memory of cpu (torch "
                                 "could not allocate 363000 bytes); use a smaller batch")
    other = RuntimeError("cannot reallocate a tensor that is a view")
    monkeypatch.setattr(torch, "full", refusing(other))
    with pytest.raises(RuntimeError) as caught_other:
        BatchedGame(Rules("star", 2), batch_size=3000, seed=0)
    assert caught_other.value is other


def test_constructor_and_reset_arguments_of_the_wrong_type_are_a_type_error():
    """The rules, ``batch_size`` and ``seed`` (constructor and ``reset``) and the two flags: a value of the wrong
    type (a variant's name for the rules, True or 1.0 for a count or a seed, 1 for a flag) was a ``ValueError``,
    as a value out of range is; it is a ``TypeError`` (``player_for`` and ``Game`` said so already), still caught
    by ``except ValueError``.  numpy's integers are counts and seeds."""
    rules = Rules("star", 2)
    cases = [
        ({"rules": "star"}, "rules must be a halma_env.Rules, got str"),
        ({"rules": None}, "rules must be a halma_env.Rules, got NoneType"),
        *[({"batch_size": bad}, "batch_size must be a positive int") for bad in (True, 1.0, "1", None)],
        *[({"seed": bad}, r"seed must be an int \(-2\*\*63 \.\. 2\*\*64-1\)") for bad in (True, 1.0, "1", None)],
        ({"rotate_first_seat": 1}, "rotate_first_seat must be True or False, got 1"),
        ({"reward": 1}, "reward must be one of place, win_loss, got 1"),  # (a ValueError before, as "points" is)
        ({"auto_reset": "no"}, "auto_reset must be True or False, got 'no'"),
    ]
    for kwargs, message in cases:
        args = {"rules": rules, "batch_size": 2, **kwargs}
        with pytest.raises(TypeError, match=message) as caught:
            BatchedGame(**args)
        assert isinstance(caught.value, ValueError)
    for kwargs, message in [({"batch_size": 0}, "batch_size must be a positive int, got 0"),
                            ({"seed": 2**64}, "seed must be an int")]:
        with pytest.raises(ValueError, match=message) as caught:
            BatchedGame(rules, **{"batch_size": 2, **kwargs})
        assert not isinstance(caught.value, TypeError)
    bg = BatchedGame(rules, np.int64(2), seed=np.uint32(7))
    assert bg.batch_size == 2 and type(bg.batch_size) is int
    state = _state(bg)
    for bad in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="seed must be an int"):
            bg.reset(seed=bad)
    with pytest.raises(ValueError, match="seed must be an int") as caught:
        bg.reset(seed=-(2**63) - 1)
    assert not isinstance(caught.value, TypeError)
    _assert_unchanged(bg, state)


def test_to_games_past_the_largest_ply_count_a_position_starts_at() -> None:
    """A game loaded at ply 999,999,999,999 (the most a position's text starts at) and played on in the batch: its
    ``to_games`` read the batch's own position text back, ply count included, and raised ValueError ("a ply count
    of 13 digits is far too long").  The ply count is carried over as a number."""
    start = Game(Rules("star", 2)).position().rsplit(" ", 1)[0] + " 999999999999"
    batch = BatchedGame(Rules("star", 2), 1)
    batch.from_games([Game.from_position(start)])
    batch.step(batch.random_actions())
    (game,) = batch.to_games()
    assert game.ply == 1_000_000_000_000 and game.position().endswith(" 1000000000000")
    assert game.to_move == 1 and not game.is_over
