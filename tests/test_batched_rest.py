"""More of the batched engine pinned: its constructor's checks and defaults, the end reason names,
the kept progress assignments (``stall_limit``) against the scalar engine's exact keys and the
Hungarian algorithm's invariants, and the repetition history a new game in a slot starts with.

(Written against the surviving mutants of ``halma_env/batched.py`` lines 1-185 and 334-476.)
"""

from __future__ import annotations

import copy
import math
import random

import numpy as np
import pytest
import torch

from halma_env import Game, Rules, records
from halma_env.assignment import min_cost_assignment
from halma_env.batched import END_REASONS, BatchedGame
from halma_env.envs import raw_env
from halma_env.game import IllegalMoveError
from halma_env.rewards import REWARD_SCHEMES
from tests.test_batched import (
    _play_moves,
    _position,
    assert_kept_keys_match_the_scalar_engine,
    lockstep,
    scalar_positions,
)


class _Reached(Exception):
    """Raised by a stand-in for torch.Generator: the constructor's device checks were passed."""


def test_end_reason_codes_name_the_records_end_reasons():
    # code 0: the game goes on; every other code is a game record's end reason, in the same order
    assert END_REASONS == ("", *records.END_REASONS)


def test_constructor_refusals_name_the_argument():
    with pytest.raises(ValueError, match="rules must be a halma_env.Rules, got str"):
        BatchedGame("star", 2)
    with pytest.raises(ValueError, match="reward must be one of place, win_loss, got 'win'"):
        BatchedGame(Rules(), 2, reward="win")
    # a tensor of any shape too (torch.tensor(True) was 1.0, [[0.5]] 0.5), and a weight whose float32 rewards
    # overflow (1e308 passed "finite" and gave inf rewards); the envs share the check
    for shaping in (True, math.nan, math.inf, -math.inf, "x", None, [1.0], torch.tensor(True),
                    torch.tensor([[0.5]]), np.array([0.5]), 1e308, -2e9):
        with pytest.raises(ValueError, match="progress_shaping must be a finite number of magnitude at most 1e"):
            BatchedGame(Rules(), 2, progress_shaping=shaping)
        with pytest.raises(ValueError, match="progress_shaping must be a finite number of magnitude at most 1e"):
            raw_env(progress_shaping=shaping)
    assert BatchedGame(Rules(), 2, progress_shaping=np.float32(0.5)).progress_shaping == 0.5
    assert raw_env(progress_shaping=-1e9).progress_shaping == -1e9
    for device in ("foo", 3.5):
        with pytest.raises(ValueError, match="device must be a torch device such as cpu, cuda or cuda:1"):
            BatchedGame(Rules(), 2, device=device)


@pytest.mark.parametrize("available,count", [(False, 0), (False, 2), (True, 0)])
def test_cuda_without_a_device_is_named(monkeypatch, available, count):
    # (the checks run before anything touches CUDA, so any machine can pretend)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    for device in ("cuda", "cuda:0"):
        with pytest.raises(ValueError, match=f"device '{device}': torch sees no CUDA device on this machine"):
            BatchedGame(Rules(), 2, device=device)


def test_cuda_devices_that_exist_pass_the_checks(monkeypatch):
    def generator(*args, **kwargs):
        raise _Reached(kwargs.get("device", args[0] if args else None))

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch, "Generator", generator)
    for device in ("cuda", "cuda:0", "cuda:1", torch.device("cuda", 1)):
        with pytest.raises(_Reached):
            BatchedGame(Rules(), 2, device=device)
    with pytest.raises(ValueError, match="torch sees 2 CUDA device"):
        BatchedGame(Rules(), 2, device="cuda:2")


def test_constructor_defaults():
    rules = Rules("star", 3, move_limit=6, limit_outcome="progress")
    bg = BatchedGame(rules, 3)
    assert bg.device == torch.device("cpu") and bg.owner.device.type == "cpu"
    assert bg.reward == "place" and bg.progress_shaping == 0.0 and bg.rotate_first_seat is False
    assert bg.to_move.tolist() == [0, 0, 0]  # every game begins with rules.first_seat (no rotation)
    # the default seed is 0 and the default reward the place scheme: the same rewards as said so
    explicit = BatchedGame(rules, 3, seed=0, reward="place")
    other = BatchedGame(rules, 3, seed=0, reward="win_loss")
    ended = 0
    for _ in range(12):
        actions = bg.random_actions()
        assert torch.equal(actions, explicit.random_actions())
        other.random_actions()
        r, done, info = bg.step(actions)
        r2, done2, _ = explicit.step(actions)
        r3, _, _ = other.step(actions)
        assert torch.equal(r, r2) and torch.equal(done, done2)
        ended += int(done.sum())
        # three places: the place scheme gives the second seat 0, win_loss -1
        assert not done.any() or not torch.equal(r[done], r3[done])
    assert ended == 6  # two games each (a move limit of 6)


def test_progress_shaping_is_kept_as_a_float():
    for given in (1, 0.5, np.float32(0.25)):
        bg = BatchedGame(Rules(), 1, progress_shaping=given)
        assert bg.progress_shaping == float(given) and type(bg.progress_shaping) is float
    assert set(REWARD_SCHEMES) == {"place", "win_loss"}
    for scheme in REWARD_SCHEMES:
        assert BatchedGame(Rules(), 1, reward=scheme).reward == scheme


def _thinned(games: list[Game], seed: int) -> list[Game]:
    """The same positions with some pieces of every seat taken off (a diamond king stays): seats
    with fewer pieces than goal holes, and with different piece counts."""
    rng = random.Random(seed)
    out = []
    for g in games:
        owner = [-1 if c is None else c[0] for c in g.board()]
        king = [bool(c and c[1]) for c in g.board()]
        for s in range(g.num_players):
            mine = [h for h, o in enumerate(owner) if o == s and not king[h]]
            for h in rng.sample(mine, rng.randrange(len(mine))):  # keeps at least one piece
                owner[h] = -1
        options = {k: v for k, v in g.rules.to_dict().items() if k not in ("variant", "num_players", "first_seat")}
        out.append(Game.from_position(_position(g.rules, owner, king, g.to_move), **options))
    return out


@pytest.mark.parametrize("variant,n", [("star", 4), ("diamond", 3), ("halma16", 2)])
def test_stall_limit_keys_with_fewer_pieces_than_goal_holes(variant, n):
    """The kept assignments pad the missing pieces with rows of cost 0: every seat's key is still
    the scalar engine's exact progress key, after loading and after every step."""
    rules = Rules(variant, n, stall_limit=1000)
    start = _thinned(scalar_positions(rules, 4, seed=5 + n, max_plies=60), seed=n)
    counts = [[len(g.pieces(s)) for s in range(n)] for g in start]
    assert any(c < len(g.layout.goals[0]) for g, row in zip(start, counts) for c in row)
    assert_kept_keys_match_the_scalar_engine(rules, start, seed=1, steps=2)


@pytest.mark.parametrize("variant,n", [("star", 3), ("diamond", 2)])
def test_progress_places_with_fewer_pieces_than_goal_holes(variant, n):
    # games ended by the move limit rank the seats by progress: seats with different piece counts
    # (fewer than their goal holes) are ranked as the scalar engine ranks them, with and without
    # the kept assignments of a stall limit
    for stall in (None, 1000):
        rules = Rules(variant, n, move_limit=14, limit_outcome="progress", stall_limit=stall)
        start = _thinned(scalar_positions(rules, 4, seed=3 + n, max_plies=10), seed=2 * n)
        reasons = lockstep(rules, batch=4, steps=4, seed=4, start=start)
        assert reasons.get("move_limit", 0) >= 2, reasons


def _assert_optimal_assignments(bg: BatchedGame, where: str) -> None:
    """Every game's and seat's kept Hungarian state is what progress needs (see "progress" in
    batched.py): the matching is perfect, the duals are feasible and tight on it, and so their sum
    is the least total distance: the scalar engine's progress key."""
    B, n, S = bg.batch_size, bg.n, bg.S
    seat = bg.t_seats.repeat(B)
    king_x = torch.cat([bg.king, torch.zeros((B, 1), dtype=torch.bool)], 1).repeat_interleave(n, 0)
    rows = bg._assign_rows(seat, bg.pieces.reshape(B * n, -1), king_x)[:, 1 : S + 1]  # (K, S)
    cost = bg.t_asg_cost[rows]  # (K, S rows, S columns)
    u, v, match = (x.reshape(B * n, S + 1)[:, 1:] for x in (bg.asg_u, bg.asg_v, bg.asg_match))
    every_column = torch.arange(1, S + 1).expand(B * n, S)
    assert torch.equal(match.sort(1).values, every_column), f"{where}: not a perfect matching"
    reduced = cost - u[:, :, None] - v[:, None, :]
    assert bool((reduced >= 0).all()), f"{where}: infeasible duals"
    # (match[j]: the row, 1-based, matched to column j)
    assert bool((reduced.gather(1, match[:, None, :] - 1) == 0).all()), f"{where}: duals not tight on the matching"
    keys = bg._state_keys(torch.arange(B)).tolist()
    for b, g in enumerate(bg.to_games()):
        assert [divmod(k, 1_000_000) for k in keys[b]] == [g.progress(s).key() for s in range(n)], f"{where} game {b}"


@pytest.mark.parametrize("variant,n,batch", [("star", 2, 1), ("star", 3, 3), ("diamond", 2, 1), ("halma16", 2, 2)])
def test_kept_assignments_stay_optimal_move_after_move(variant, n, batch):
    # a batch of one runs every Hungarian phase alone (no other game's longer path to wait for);
    # long games reach every goal column and long augmenting paths
    bg = BatchedGame(Rules(variant, n, stall_limit=1000), batch, seed=7)
    _assert_optimal_assignments(bg, "start")
    for t in range(40):
        bg.step(bg.random_actions())
        _assert_optimal_assignments(bg, f"step {t}")


def test_a_new_game_counts_its_start_position_for_repetition():
    # slot 0 plays a loaded game one ply before its move limit; the new game that follows in the slot
    # walks 113-104, 7-16 and back: its start position stands a second time (repetition limit 2).
    # Found only if the new game's history begins with its start position (not the loaded game's)
    rules = Rules("star", 2, repetition_limit=2, move_limit=20)
    g = Game(rules)
    for m in ("113-104", "7-16"):
        g.play(m)
    loaded = Game.from_position(f"{g.position().rsplit(' ', 1)[0]} 19", repetition_limit=2, move_limit=20)
    bg = BatchedGame(rules, 1)
    bg.from_games([loaded.copy()])
    reasons: dict[str, int] = {}
    _play_moves(bg, [loaded], [[None], [(113, 104)], [(7, 16)], [(104, 113)], [(16, 7)]],
                lambda b: Game(rules), reasons)
    assert reasons == {"move_limit": 1, "repetition": 1}


def test_a_slots_previous_game_is_not_in_the_new_games_history():
    # game 1 is loaded after 113-104 (its history: the start and that position) and ends at its move
    # limit after 7-16; game 2 in the same slot opens 113-104 too: the position after it stood in
    # game 1, not in game 2, so it is no repetition (limit 2)
    rules = Rules("star", 2, repetition_limit=2, move_limit=2)
    game = Game(rules)
    game.play((113, 104))
    bg = BatchedGame(rules, 1)
    bg.from_games([game.copy()])
    reasons: dict[str, int] = {}
    _play_moves(bg, [game], [[(7, 16)], [(113, 104)], [(7, 16)]], lambda b: Game(rules), reasons)
    assert reasons == {"move_limit": 2}


def _chain_costs(S: int) -> list[list[int]]:
    """Row i (< S-1) costs 0 on column i and 1 on column i+1; the last row costs 0 only on column 0:
    solved row by row, the last row's augmenting path runs through every column."""
    cost = [[100] * S for _ in range(S)]
    for i in range(S - 1):
        cost[i][i], cost[i][i + 1] = 0, 1
    cost[S - 1][0] = 0
    return cost


def test_hungarian_phases_solve_any_square_cost_table(monkeypatch):
    # the batch's Hungarian phases (one row at a time, problems side by side) reach the least cost
    # of halma_env.assignment with a perfect matching, also when the last row's augmenting path
    # runs through all S columns (as the board's distances have not been seen to need)
    bg = BatchedGame(Rules("star", 2, stall_limit=1000), 1)
    S = bg.S
    rng = random.Random(3)
    tables = [_chain_costs(S)] + [[[rng.randrange(6) for _ in range(S)] for _ in range(S)] for _ in range(30)]
    K = len(tables)
    monkeypatch.setattr(bg, "t_asg_cost", torch.tensor([row for t in tables for row in t]))
    rows = torch.cat([torch.zeros((K, 1), dtype=torch.long), torch.arange(K * S).view(K, S)], 1)
    u, v, match = (torch.zeros((K, S + 1), dtype=torch.long) for _ in range(3))
    for r in range(1, S + 1):
        bg._assign_phase(rows, u, v, match, torch.full((K,), r), torch.ones(K, dtype=torch.bool))
    for k, table in enumerate(tables):
        assert sorted(match[k, 1:].tolist()) == list(range(1, S + 1)), f"table {k}: {match[k].tolist()}"
        matched = sum(table[match[k, j] - 1][j - 1] for j in range(1, S + 1))
        best = min_cost_assignment(table)
        assert matched == best == int(u[k, 1:].sum() + v[k, 1:].sum()), f"table {k}"


def test_unsigned_actions_past_int64_are_named_as_given_and_play_nothing() -> None:
    games = BatchedGame(Rules("star", 2), 4, seed=0)
    before = games.owner.clone()
    huge = np.array([1, 2, 3, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"got \[18446744073709551615\] in game\(s\) \[3\]"):
        games.step(huge)
    assert torch.equal(games.owner, before)


@pytest.mark.parametrize("options", [{"progress_shaping": "0.5"}, {"progress_shaping": np.True_},
                                     {"rotate_first_seat": "no"}, {"rotate_first_seat": 1}])
def test_settings_of_the_wrong_type_are_refused_not_converted(options) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        BatchedGame(Rules("star", 2), 2, **options)


def test_numpy_settings_are_taken() -> None:
    games = BatchedGame(Rules("star", 2), 2, progress_shaping=np.float32(0.5), rotate_first_seat=np.True_)
    assert games.progress_shaping == 0.5 and games.rotate_first_seat is True


def test_device_none_is_torchs_default_device() -> None:
    assert BatchedGame(Rules("star", 2), 2, device=None).device == torch.get_default_device()


def test_a_batch_moves_in_and_out_of_inference_mode() -> None:
    """A rollout function wrapped in @torch.inference_mode() made the batch's tensors inference tensors,
    which torch refuses to update in place outside it: the next step failed half-way (board moved, seat
    to move not).  Built, stepped and read in either mode, the batch plays as one that never was."""
    rules = Rules("star", 3, move_limit=12)
    plain = BatchedGame(rules, 6, seed=4, rotate_first_seat=True)
    with torch.inference_mode():
        mixed = BatchedGame(rules, 6, seed=4, rotate_first_seat=True)
    for ply in range(30):
        actions = plain.random_actions()
        with torch.inference_mode(ply % 2 == 0):
            mixed_actions = mixed.random_actions()
            assert torch.equal(mixed.action_mask(), plain.action_mask())
            assert torch.equal(mixed.observation(), plain.observation())
            r2, d2, _ = mixed.step(mixed_actions)
        r1, d1, _ = plain.step(actions)
        assert torch.equal(actions, mixed_actions) and torch.equal(r1, r2) and torch.equal(d1, d2), ply
    with torch.inference_mode():
        mixed.reset()
    plain.reset()
    assert torch.equal(mixed.to_move, plain.to_move) and not mixed.action_mask().is_inference()


def test_legal_moves_rows_are_a_copy() -> None:
    """Writing into the rows legal_moves returns does not make an illegal move legal (they were the
    engine's own table, which step checks moves against)."""
    game = BatchedGame(Rules("star", 2), 1, seed=0)
    rows, dest = game.legal_moves()
    k = int(dest[0].any(1).nonzero()[0])
    dst = int(dest[0, k].nonzero()[0])
    rows[0, k] = 60  # the empty centre
    with pytest.raises(ValueError, match="illegal"):
        game.step(torch.tensor([60 * 121 + dst]))
    assert game.legal_moves()[0][0, k] != 60


def _tensors(game: BatchedGame) -> dict[str, torch.Tensor]:
    """Every tensor the batch holds (state, tables and buffers), cloned."""
    return {name: value.clone() for name, value in vars(game).items() if isinstance(value, torch.Tensor)}


def _assert_unchanged(game: BatchedGame, before: dict[str, torch.Tensor]) -> None:
    after = _tensors(game)
    assert after.keys() == before.keys()
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert not changed, f"changed: {changed}"


@pytest.mark.parametrize("rules", [Rules("star", 3, stall_limit=20), Rules("halma16", 2, move_limit=30),
                                   Rules("diamond", 2, move_limit=25, limit_outcome="progress")])
@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy])
def test_a_copied_batch_is_independent_and_plays_on_alike(rules: Rules, make_copy) -> None:
    """copy.copy shared the state tensors: stepping the copy moved the original's pieces while its seat
    to move stayed, and the original played on from an inconsistent state.  After a copy (of either
    kind), stepping one batch leaves every tensor of the other exactly as it was, and the two, given
    the same actions (their generators are copies: the same random actions), play the same games."""
    original = BatchedGame(rules, 5, seed=7, rotate_first_seat=True)
    for _ in range(6):
        original.step(original.random_actions())
    original.action_mask()  # buffers and caches filled: a copy must not share them either
    original.observation()
    clone = make_copy(original)
    assert type(clone) is BatchedGame
    before = _tensors(original)
    for _ in range(40):  # past some games' ends: auto-resets write state in place
        clone.step(clone.random_actions())
        clone.action_mask()
        clone.observation()
    _assert_unchanged(original, before)
    clone = make_copy(original)
    before = _tensors(clone)
    for _ in range(40):
        original.step(original.random_actions())
        original.action_mask()
    _assert_unchanged(clone, before)
    clone = make_copy(original)
    for ply in range(50):
        actions = original.random_actions()
        assert torch.equal(clone.random_actions(), actions), ply
        r1, d1, info1 = original.step(actions)
        r2, d2, info2 = clone.step(actions)
        assert torch.equal(r1, r2) and torch.equal(d1, d2), ply
        assert all(torch.equal(info1[k], info2[k]) for k in info1), ply
        assert torch.equal(original.action_mask(), clone.action_mask()), ply
        assert torch.equal(original.observation(), clone.observation()), ply
        rows1, dest1 = original.legal_moves()
        rows2, dest2 = clone.legal_moves()
        assert torch.equal(rows1, rows2) and torch.equal(dest1, dest2), ply
    ours, theirs = _tensors(original), _tensors(clone)
    assert [k for k in ours if not torch.equal(ours[k], theirs[k])] == []


def test_a_batch_copied_inside_inference_mode_steps_outside_it() -> None:
    """copy.deepcopy inside torch.inference_mode() made inference tensors, and the copy's first step
    outside one failed (an in-place update of an inference tensor)."""
    game = BatchedGame(Rules("star", 2), 3, seed=1)
    game.step(game.random_actions())
    with torch.inference_mode():
        copies = [copy.copy(game), copy.deepcopy(game)]
    for clone in copies:
        assert not clone.owner.is_inference()
        actions = game.random_actions()
        clone.step(actions)
        assert clone.ply.tolist() == [2, 2, 2]


def test_an_illegal_action_is_an_illegal_move_error_and_out_of_range_a_value_error() -> None:
    """step raised a plain ValueError for an illegal action, where Game.play and the envs raise
    IllegalMoveError (a ValueError).  An action outside 0..H*H-1 stays a plain ValueError, as the envs
    and Encoding.decode_action raise it; neither plays anything."""
    game = BatchedGame(Rules("star", 2), 2, seed=0)
    before = _tensors(game)
    legal = game.random_actions()
    with pytest.raises(IllegalMoveError, match=r"^illegal action in game\(s\) \[1\] \(see action_mask\(\)\); "
                                               r"nothing was played$"):
        game.step(torch.tensor([int(legal[0]), 60 * 121 + 61]))
    for bad in ([0, 121 * 121], [-1, 0]):
        with pytest.raises(ValueError, match=r"actions must be 0\.\.14640") as info:
            game.step(torch.tensor(bad))
        assert not isinstance(info.value, IllegalMoveError)
    _assert_unchanged(game, before)
