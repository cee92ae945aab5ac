"""The batched torch engine agrees exactly with the scalar engine.

Games are stepped side by side: the batch and one scalar ``Game`` per slot get the same actions,
and after every step the masks, observations, seats to move, ply counts, rewards, done flags,
places, end reasons and final boards must be identical.  Positions come from the batch's own
random playouts, from scalar random playouts loaded with ``from_games``, and from near-finished
positions played greedily (so that games really finish, with every end rule).
"""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from halma_env import Game, Rules
from halma_env.batched import END_REASONS, BatchedGame, padded_lists
from halma_env.encoding import encoding
from halma_env.game import random_playout
from halma_env.layout import layout
from halma_env.rewards import place_rewards, seat_potential, seat_rewards
from tests.engine_helpers import line
from tests.engine_helpers import position as engine_position

ALL = [("star", 1), ("star", 2), ("star", 3), ("star", 4), ("star", 5), ("star", 6),
       ("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]


# --- helpers ---------------------------------------------------------------------------------


def _phi_start(rules: Rules) -> list[float]:
    start = Game(rules)
    return [max(seat_potential(start, s), 1) for s in range(rules.num_players)]


def _assert_same_state(bg: BatchedGame, games: list[Game], where: str) -> None:
    enc = encoding(bg.rules.variant, bg.rules.num_players)
    mask = bg.action_mask().cpu().numpy()
    obs = bg.observation().cpu().numpy()
    rows, valid = bg.legal_lists()
    for b, g in enumerate(games):
        assert int(bg.to_move[b]) == g.to_move, f"{where} game {b}: to_move"
        assert int(bg.ply[b]) == g.ply, f"{where} game {b}: ply"
        expected = enc.action_mask(g).astype(bool)
        if not np.array_equal(mask[b], expected):
            extra = [enc.decode_action(g.to_move, int(a)) for a in np.flatnonzero(mask[b] & ~expected)[:5]]
            missing = [enc.decode_action(g.to_move, int(a)) for a in np.flatnonzero(expected & ~mask[b])[:5]]
            pytest.fail(f"{where} game {b}: mask differs, extra {extra} missing {missing} in {g.position()}")
        assert rows[b][valid[b]].tolist() == np.flatnonzero(expected).tolist(), f"{where} game {b}: legal_lists"
        assert np.array_equal(obs[b], enc.observation(g, g.to_move)), f"{where} game {b}: observation"


def _step_both(bg, games, actions, new_game, shaping, phi0, where, reasons):
    """Play ``actions`` in the batch and in the scalar games; compare everything the step returns."""
    enc = encoding(bg.rules.variant, bg.rules.num_players)
    n = bg.rules.num_players
    rewards, done, info = bg.step(torch.as_tensor(actions))
    rewards, done = rewards.cpu().numpy(), done.cpu().numpy()
    for b, g in enumerate(games):
        seat = g.to_move
        src, dst = enc.decode_action(seat, int(actions[b]))
        phi_before = seat_potential(g, seat) if shaping else 0
        g.play((src, dst))
        if g.status[seat] == "finished":
            reasons["seat_finished"] = reasons.get("seat_finished", 0) + 1
        expected = np.zeros(n)
        if shaping:  # the shared potential (a diamond king counts its distance to the goal tip)
            expected[seat] += shaping * (phi_before - seat_potential(g, seat)) / phi0[seat]
        assert bool(done[b]) == g.is_over, f"{where} game {b}: done {done[b]} vs {g.end_reason}"
        if g.is_over:
            expected += seat_rewards(g, bg.reward)  # the shared definition (a solitaire: +1 only if finished)
            code = int(info["end_reason"][b])
            assert END_REASONS[code] == g.end_reason, f"{where} game {b}: end reason"
            assert info["places"][b].tolist() == g.places, f"{where} game {b}: places"
            assert int(info["length"][b]) == g.ply
            assert info["finished"][b].tolist() == [s == "finished" for s in g.status]
            final = info["final_owner"][b].cpu().numpy()
            board = g.board()
            assert [(-1 if c is None else c[0]) for c in board] == final.tolist(), f"{where} game {b}: final board"
            assert [bool(c and c[1]) for c in board] == info["final_king"][b].tolist()
            reasons[g.end_reason] = reasons.get(g.end_reason, 0) + 1
            games[b] = new_game(b)
        else:  # a game that goes on reports no end: reason, places and length 0
            assert int(info["end_reason"][b]) == 0
            assert info["places"][b].tolist() == [0] * n and int(info["length"][b]) == 0, f"{where} game {b}: info"
        assert np.allclose(rewards[b], expected, atol=1e-5), f"{where} game {b}: rewards {rewards[b]} vs {expected}"


def _end_reasons_of_one_move(game: Game, src: int, dst: int) -> dict[str, int]:
    """Load ``game`` into a batch of one, play ``src``-``dst`` in both engines (``_step_both`` checks
    that they agree), and return the end reasons the scalar game went through."""
    rules = game.rules
    bg = BatchedGame(rules, 1)
    bg.from_games([game.copy()])
    reasons: dict[str, int] = {}
    action = encoding(rules.variant, rules.num_players).encode_move(game.to_move, src, dst)
    _step_both(bg, [game], [action], lambda b: Game(rules), 0.0, _phi_start(rules), "step", reasons)
    return reasons


def _greedy_actions(games: list[Game], rng: random.Random) -> list[int]:
    """Moves toward the goal's far end (with noise): finishes most near-finished games quickly."""
    out = []
    for g in games:
        enc = encoding(g.rules.variant, g.num_players)
        seat = g.to_move
        lay = g.layout
        geo = g.geometry
        tip = lay.goal_tip[seat]
        if tip is None:  # the goal hole farthest from the home camp
            tip = max(lay.goals[seat], key=lambda x: sum(geo.distance(x, h) for h in lay.homes[seat]))
        goal = set(lay.goals[seat])
        moves = g.legal_moves()
        best = max(moves, key=lambda m: 10 * (m.dst in goal and m.src not in goal)
                   + geo.distance(m.src, tip) - geo.distance(m.dst, tip) + 1.5 * rng.random())
        out.append(enc.encode_move(seat, best.src, best.dst))
    return out


def lockstep(rules: Rules, batch: int, steps: int, *, seed: int = 0, policy: str = "random",
             shaping: float = 0.0, reward: str = "place", start: list[Game] | None = None,
             rotate: bool = False, device: str = "cpu") -> dict[str, int]:
    """Step a batch and scalar games side by side; return how many games ended for each reason."""
    bg = BatchedGame(rules, batch, device=device, seed=seed, reward=reward, progress_shaping=shaping,
                     rotate_first_seat=rotate)
    n = rules.num_players
    counts = [0] * batch

    def new_game(b: int) -> Game:
        # a slot loaded by from_games restarts with its game's first seat (BatchedGame.first_seat)
        counts[b] += 1
        if start is None:
            first = (rules.first_seat + b + counts[b]) % n if rotate else rules.first_seat
        else:
            first = (start[b].rules.first_seat + counts[b]) % n if rotate else start[b].rules.first_seat
        return Game(rules.replace(first_seat=first))

    if start is not None:
        games = [g.copy() for g in start]
        bg.from_games(games)
    else:
        games = [Game(rules.replace(first_seat=(rules.first_seat + b) % n) if rotate else rules)
                 for b in range(batch)]
    rng = random.Random(seed)
    phi0 = _phi_start(rules)
    reasons: dict[str, int] = {}
    last: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(steps):
        _assert_same_state(bg, games, f"step {t}")
        if policy == "random":
            actions = bg.random_actions().tolist()
        elif policy == "greedy":
            actions = _greedy_actions(games, rng)
        else:  # "undo": take back one's own last move when possible (positions repeat)
            enc = encoding(rules.variant, n)
            actions = []
            for b, g in enumerate(games):
                back = last.get((b, g.to_move))
                moves = g.legal_moves()
                src, dst = back if back in moves and rng.random() < 0.95 else tuple(rng.choice(moves))
                last[(b, g.to_move)] = (dst, src)
                actions.append(enc.encode_move(g.to_move, src, dst))
        _step_both(bg, games, actions, new_game, shaping, phi0, f"step {t}", reasons)
    _assert_same_state(bg, games, "end")
    return reasons


def _position(rules: Rules, owner: list[int], king: list[bool], to_move: int) -> str:
    g = layout(rules.variant, rules.num_players).geometry
    chars = ["." if o < 0 else ("ABCDEF"[o] if k else "012345"[o]) for o, k in zip(owner, king)]
    rows, i = [], 0
    for w in g.row_widths:
        rows.append("".join(chars[i : i + w]))
        i += w
    return f"{rules.variant} {rules.num_players} {'/'.join(rows)} {to_move} 10"


def _generator_setup(rules: Rules, seed: int):
    """What a position generator below starts from: its random generator, the layout, the geometry,
    the seat count, and the rule options to load positions with (the position text itself gives the
    variant, the seats and the seat to move, which becomes the loaded game's first_seat)."""
    lay = layout(rules.variant, rules.num_players)
    options = {k: v for k, v in rules.to_dict().items() if k not in ("variant", "num_players", "first_seat")}
    return random.Random(seed), lay, lay.geometry, rules.num_players, options


def endgames(rules: Rules, count: int, seed: int, intruders: bool = False) -> list[Game]:
    """Near-finished positions: most pieces of every seat in its goal, a few within reach, an
    opponent's piece in a goal now and then (anti-blocking) and the king near its tip (diamond)."""
    rng, lay, geo, n, options = _generator_setup(rules, seed)
    out: list[Game] = []
    while len(out) < count:
        owner, king = [-1] * geo.num_holes, [False] * geo.num_holes  # each hole's seat, and its kings
        for s in range(n):
            goal = list(lay.goals[s])
            rng.shuffle(goal)
            outside = rng.randint(1, 3)
            inside = goal[: lay.max_pieces - outside]
            tip = lay.goal_tip[s]
            if tip is not None and tip not in inside and rng.random() < 0.7:
                inside[0] = tip
            placed = []
            for h in inside:
                if owner[h] < 0:
                    owner[h] = s
                    placed.append(h)
            open_holes = set(geo.holes(lay.open_holes[s]))
            near = [h for h in range(geo.num_holes) if owner[h] < 0 and h in open_holes
                    and 0 < min(geo.distance(h, x) for x in lay.goals[s]) <= 3]
            for h in rng.sample(near, min(outside, len(near))):
                owner[h] = s
                placed.append(h)
            if tip is not None:
                king[tip if owner[tip] == s and rng.random() < 0.5 else rng.choice(placed)] = True
        if intruders:
            for s in range(n):
                other = (s + 1) % n
                mine = [h for h in lay.goals[s] if owner[h] == s]
                theirs = [h for h in range(geo.num_holes) if owner[h] == other and not king[h]]
                if n > 1 and mine and theirs and rng.random() < 0.5:
                    h, h2 = rng.choice(mine), rng.choice(theirs)
                    if not king[h]:  # swap: the seats keep their piece counts
                        owner[h], owner[h2] = other, s
        seats = [s for s in range(n) if any(o == s for o in owner)]
        game = Game.from_position(_position(rules, owner, king, rng.choice(seats)), **options)
        if not game.is_over:
            out.append(game)
    return out


def scalar_positions(rules: Rules, count: int, seed: int, max_plies: int = 120) -> list[Game]:
    """Positions from scalar random playouts, each stopped after a random number of plies."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        g = Game(rules.replace(first_seat=rng.randrange(rules.num_players)))
        random_playout(g, rng, rng.randrange(max_plies))
        if not g.is_over:
            out.append(g)
    return out


# --- tests -----------------------------------------------------------------------------------


def test_import_halma_env_does_not_import_torch():
    code = "import sys, halma_env, halma_env.encoding, halma_env.rewards; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("variant,n", ALL)
def test_random_playouts_in_lockstep(variant, n):
    # the batch's own random playouts; a short move limit exercises the auto-reset
    reasons = lockstep(Rules(variant, n, move_limit=12), batch=4, steps=20, seed=n)
    assert reasons.get("move_limit", 0) >= 4


@pytest.mark.parametrize("variant,n,batch", [("star", 2, 5), ("star", 2, 8), ("diamond", 2, 3)])
def test_odd_and_even_batches_deep_positions(variant, n, batch):
    # the component passes stop when the label sum stops falling; that sum reads the labels as
    # int32 words when the byte count allows (star: B % 4 == 0) and sums them directly otherwise,
    # so both paths are checked on mid-game positions (long hop chains, many rounds)
    rules = Rules(variant, n, move_limit=150)
    start = scalar_positions(rules, batch, seed=21 + batch, max_plies=50)
    lockstep(rules, batch=batch, steps=6, seed=2, start=start)


@pytest.mark.parametrize("variant,n", ALL)
def test_scalar_positions_loaded_with_from_games(variant, n):
    rules = Rules(variant, n, move_limit=150)
    start = scalar_positions(rules, 16, seed=7 + n, max_plies=60)
    lockstep(rules, batch=16, steps=2, seed=1, start=start)


@pytest.mark.parametrize("variant,n,options", [
    ("star", 1, {}),
    ("star", 2, {}),
    ("star", 2, {"anti_blocking": False}),
    ("star", 3, {}),
    ("star", 4, {"play_to_end": False}),
    ("star", 6, {}),
    ("diamond", 2, {}),
    ("diamond", 3, {"play_to_end": False}),
    ("halma16", 2, {}),
    ("halma16", 4, {}),
])
def test_near_finished_games_finish_alike(variant, n, options):
    rules = Rules(variant, n, move_limit=60, **options)
    start = endgames(rules, 8, seed=n, intruders=variant == "star")
    reasons = lockstep(rules, batch=8, steps=16, seed=2, policy="greedy", start=start)
    wanted = "first_finish" if not rules.play_to_end and n >= 3 else "finished" if n <= 2 else "seat_finished"
    assert reasons.get(wanted, 0) > 0, reasons


def test_move_limit_by_progress_and_stall_limit():
    reasons = lockstep(Rules("star", 3, move_limit=12, limit_outcome="progress"), batch=4, steps=14, seed=3)
    assert reasons.get("move_limit", 0) == 4
    reasons = lockstep(Rules("star", 2, stall_limit=4), batch=4, steps=20, seed=4)
    assert reasons.get("stall_limit", 0) > 0
    reasons = lockstep(Rules("diamond", 3, stall_limit=4, move_limit=20, limit_outcome="progress"),
                       batch=4, steps=20, seed=5)
    assert reasons.get("stall_limit", 0) > 0


@pytest.mark.parametrize("variant,n", ALL)
def test_stall_limit_progress_keys_match_the_scalar_engine(variant, n):
    """The batch's kept assignments (updated by one Hungarian phase per move) give every seat's
    exact scalar progress key, on loaded positions (fewer pieces than goal holes included) and
    after every step of random play."""
    rules = Rules(variant, n, stall_limit=1000)
    start = scalar_positions(rules, 8, seed=11 + n, max_plies=80) + endgames(rules, 4, seed=n, intruders=True)
    assert_kept_keys_match_the_scalar_engine(rules, start, seed=3, steps=4)


def assert_kept_keys_match_the_scalar_engine(rules: Rules, start: list[Game], seed: int, steps: int) -> None:
    """Load ``start`` into a batch (``rules`` with a ``stall_limit``): every seat's kept progress key is the
    scalar engine's exact key after loading and after each of ``steps - 1`` random steps."""
    bg = BatchedGame(rules, len(start), seed=seed)
    bg.from_games([g.copy() for g in start])
    everyone = torch.arange(bg.batch_size)
    for t in range(steps):
        keys = bg._state_keys(everyone).tolist()
        for b, g in enumerate(bg.to_games()):
            expected = [g.progress(s).key() for s in range(rules.num_players)]
            assert [divmod(k, 1_000_000) for k in keys[b]] == expected, f"step {t} game {b}: {g.position()}"
        bg.step(bg.random_actions())


@pytest.mark.parametrize("variant,n", [
    pytest.param(v, n, marks=[] if (v, n) in (("star", 2), ("star", 6), ("diamond", 3), ("halma16", 4))
                 else pytest.mark.slow) for v, n in ALL])
def test_stall_limit_in_lockstep(variant, n):
    rules = Rules(variant, n, stall_limit=2, move_limit=60, limit_outcome="progress")
    start = scalar_positions(rules, 6, seed=21 + n, max_plies=80)
    reasons = lockstep(rules, batch=6, steps=8, seed=9, start=start)
    assert reasons.get("stall_limit", 0) > 0, reasons


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (torch.cuda.is_available() is false)")
def test_the_same_code_on_cuda_agrees_with_the_scalar_engine():
    """The batch on CUDA, stepped beside scalar games (every rule path: kings, goal lock,
    repetition, stall limit with progress rankings, near-finished games)."""
    lockstep(Rules("star", 2), batch=16, steps=12, seed=1, device="cuda")
    lockstep(Rules("star", 3, play_to_end=False, move_limit=60), batch=8, steps=16, seed=2, policy="greedy",
             start=endgames(Rules("star", 3, play_to_end=False, move_limit=60), 8, seed=3), device="cuda")
    lockstep(Rules("diamond", 3, stall_limit=2, move_limit=30, limit_outcome="progress"), batch=8, steps=10,
             seed=4, start=scalar_positions(Rules("diamond", 3, stall_limit=2, move_limit=30,
                                                  limit_outcome="progress"), 8, seed=5), device="cuda")
    lockstep(Rules("halma16", 2), batch=4, steps=10, seed=6, policy="undo", device="cuda")


def test_repetition_draws():
    reasons = lockstep(Rules("halma16", 2), batch=4, steps=14, seed=6, policy="undo")
    assert reasons.get("repetition", 0) > 0, reasons
    reasons = lockstep(Rules("star", 3, repetition_limit=2), batch=4, steps=10, seed=6, policy="undo")
    assert reasons.get("repetition", 0) > 0, reasons


def test_first_seat_rotation_and_shaping_rewards():
    reasons = lockstep(Rules("star", 3, first_seat=2, move_limit=5), batch=4, steps=12, seed=8, rotate=True,
                       shaping=0.5, reward="win_loss")
    assert reasons.get("move_limit", 0) >= 8
    bg = BatchedGame(Rules("star", 3, first_seat=1), 4, rotate_first_seat=True)
    assert bg.to_move.tolist() == [1, 2, 0, 1]
    assert BatchedGame(Rules("star", 3, first_seat=1), 2).to_move.tolist() == [1, 1]


@pytest.mark.parametrize("n", [2, 3])
def test_diamond_shaping_rewards_in_lockstep(n):
    # random play from the start and greedy play from near-finished positions, where kings walk
    # through their goal camps onto the tips: the king's share of phi is its distance to the tip
    lockstep(Rules("diamond", n, move_limit=14), batch=4, steps=16, seed=n, shaping=1.0, rotate=True)
    rules = Rules("diamond", n, move_limit=60)
    reasons = lockstep(rules, batch=8, steps=16, seed=2, policy="greedy", shaping=0.5,
                       start=endgames(rules, 8, seed=30 + n))
    assert reasons, reasons  # some games ended (their place rewards were checked with the shaping)


def test_king_onto_its_tip_gives_the_same_positive_shaping_in_aec_and_batched():
    from halma_env.envs.aec import raw_env

    # diamond 3: seat 0's king on hole 1 beside its empty goal tip (hole 0), 13 ordinary pieces on
    # the rest of its goal, one outside on hole 40; seats 1 and 2 only their kings
    rules = Rules("diamond", 3)
    lay = layout("diamond", 3)
    owner, king = [-1] * 121, [False] * 121
    for h in lay.goals[0]:
        if h != 0:
            owner[h] = 0
    owner[40], king[1] = 0, True
    for s in (1, 2):
        owner[lay.king_start[s]], king[lay.king_start[s]] = s, True
    text = _position(rules, owner, king, 0)
    game = Game.from_position(text)
    assert game.piece_at(1) == (0, True) and seat_potential(game, 0) > 0
    e = raw_env(variant="diamond", num_players=3, progress_shaping=1.0)
    e.reset(options={"position": text})
    e.step(e.encode_move(0, (1, 0)))
    aec_reward = e._cumulative_rewards["player_0"]
    bg = BatchedGame(rules, 1, progress_shaping=1.0)
    bg.from_games([game.copy()])
    rewards, done, _ = bg.step(torch.tensor([encoding("diamond", 3).encode_move(0, 1, 0)]))
    assert not bool(done[0])
    phi0 = _phi_start(rules)[0]
    assert aec_reward > 0 and aec_reward == pytest.approx(1.0 / phi0)
    assert float(rewards[0, 0]) == pytest.approx(aec_reward, abs=1e-6)
    assert rewards[0, 1:].tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("variant", "n", "first"), [("star", 3, 1), ("diamond", 2, 1), ("star", 6, 4)])
def test_scalar_vector_game_rotates_from_the_rules_first_seat(variant: str, n: int, first: int):
    """agents.vecgame rotates the starting seat from rules.first_seat, game after game, as the
    batched engine does: game k of environment b starts with seat (first_seat + b + k) % n."""
    from agents.vecgame import ScalarBatchedGame

    rules = Rules(variant, n, first_seat=first, move_limit=3)  # every game ends after 3 plies
    sg = ScalarBatchedGame(rules, 4)
    bg = BatchedGame(rules, 4, rotate_first_seat=True)
    for game in range(3):
        expected = [(first + b + game) % n for b in range(4)]
        assert sg.to_move.tolist() == bg.to_move.tolist() == expected, f"game {game}"
        for _ in range(3):
            actions = torch.multinomial(sg.action_mask().float(), 1, generator=torch.Generator().manual_seed(1))
            sg.step(actions.squeeze(1))
            bg.step(actions.squeeze(1))


def test_scalar_vector_game_shapes_diamond_like_the_batched_engine():
    # the trainer's scalar fallback (agents.vecgame) credits the same shaping, kings included
    from agents.vecgame import ScalarBatchedGame

    rules = Rules("diamond", 3, move_limit=24)
    sg = ScalarBatchedGame(rules, 4, progress_shaping=1.0)
    bg = BatchedGame(rules, 4, progress_shaping=1.0, rotate_first_seat=True)
    rng = torch.Generator().manual_seed(5)
    king_moves = 0
    for t in range(40):
        mask = sg.action_mask()
        assert torch.equal(mask, bg.action_mask().cpu()), f"step {t}: masks"
        actions = torch.multinomial(mask.float(), 1, generator=rng).squeeze(1)
        for b, g in enumerate(sg.games):
            src, _ = encoding("diamond", 3).decode_action(g.to_move, int(actions[b]))
            king_moves += bool(g.piece_at(src)[1])
        r1, d1, _ = sg.step(actions)
        r2, d2, _ = bg.step(actions)
        assert torch.equal(d1, d2.cpu()) and torch.allclose(r1, r2.cpu(), atol=1e-6), f"step {t}: {r1} vs {r2}"
    assert king_moves > 0


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_place_rewards_match_the_shared_definition(n):
    """Every complete ranking a game can give: seats that share a place skip the places below them (``[1, 1, 3]``;
    ``place_rewards`` refuses the dense ``[1, 1, 2]``)."""
    bg = BatchedGame(Rules("star", n), 1)
    rows = [r for r in itertools.product(range(1, n + 1), repeat=n)
            if all(sum(q < p for q in r) == p - 1 for p in r)]
    if len(rows) > 3000:
        rows = random.Random(n).sample(rows, 3000)
    places = torch.tensor(rows)
    for scheme in ("place", "win_loss"):
        bg.reward = scheme
        got = bg._place_rewards(places, torch.ones_like(places)).numpy()  # every seat finished
        expected = np.array([place_rewards(list(r), scheme) for r in rows])
        assert np.allclose(got, expected, atol=1e-6)


def test_unfinished_solitaire_earns_nothing_at_the_move_limit():
    """The move limit gives the lone seat place 1, but its +1 is for finishing: 0 in every engine."""
    import halma_env
    from agents.vecgame import ScalarBatchedGame

    rules = Rules("star", 1, move_limit=3, limit_outcome="progress")
    for engine in (BatchedGame(rules, 2, seed=0), ScalarBatchedGame(rules, 2, seed=0)):
        engine.reset()
        total = torch.zeros(2)
        for _ in range(3):
            legal, _ = engine.legal_lists()
            rewards, done, info = engine.step(legal[:, 0])
            total += torch.as_tensor(rewards)[:, 0]
        assert done.all() and torch.equal(total, torch.zeros(2)), type(engine).__name__
        assert [int(p) for p in torch.as_tensor(info["places"])[:, 0]] == [1, 1]
    env = halma_env.raw_env(variant="star", num_players=1, move_limit=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.action_mask("player_0"))[0]))
    assert env.truncations["player_0"] and env._cumulative_rewards["player_0"] == 0


def test_to_games_round_trip():
    rules = Rules("diamond", 3, stall_limit=50)
    bg = BatchedGame(rules, 6, seed=3)
    for _ in range(15):
        bg.step(bg.random_actions())
    games = bg.to_games()
    again = BatchedGame(rules, 6)
    again.from_games(games)
    assert torch.equal(again.owner, bg.owner) and torch.equal(again.king, bg.king)
    assert torch.equal(again.action_mask(), bg.action_mask())
    assert torch.equal(again.observation(), bg.observation())
    assert torch.equal(again.best, bg.best) and torch.equal(again.stall, bg.stall)
    assert [g.position() for g in again.to_games()] == [g.position() for g in games]


def test_bad_input_is_refused_and_changes_nothing():
    with pytest.raises(ValueError, match="batch_size"):
        BatchedGame(Rules(), 0)
    with pytest.raises(ValueError, match="reward"):
        BatchedGame(Rules(), 2, reward="money")
    with pytest.raises(ValueError, match="rules"):
        BatchedGame("star", 2)
    bg = BatchedGame(Rules(), 3)
    before = bg.owner.clone()
    legal = bg.random_actions()
    bad = legal.clone()
    bad[1] = 0  # hole 0 is no piece of the mover's in its frame
    with pytest.raises(ValueError, match=r"illegal action in game\(s\) \[1\]"):
        bg.step(bad)
    with pytest.raises(ValueError, match="shape"):
        bg.step(legal[:2])
    with pytest.raises(ValueError, match="actions must be"):
        bg.step(torch.full((3,), bg.num_actions))
    for wrong in (legal.float() + 0.7, legal.double(), legal.bool(), (legal.float() + 0.7).tolist()):
        with pytest.raises(TypeError, match="actions must be an integer tensor, got dtype torch"):
            bg.step(wrong)  # .long() would truncate them to other, possibly legal, actions
    assert torch.equal(bg.owner, before) and bg.ply.tolist() == [0, 0, 0]
    bg.step(legal.int())  # any integer dtype is fine
    assert bg.ply.tolist() == [1, 1, 1]
    for device, message in (("bogus", "device must be a torch device"), (3.5, "device must be a torch device")):
        with pytest.raises(ValueError, match=message):
            BatchedGame(Rules(), 2, device=device)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            BatchedGame(Rules(), 2, device="cuda")
    for shaping in (float("nan"), float("inf"), "x", True):
        with pytest.raises(ValueError, match="progress_shaping must be a finite number"):
            BatchedGame(Rules(), 2, progress_shaping=shaping)
    with pytest.raises(ValueError, match="needs 3 games"):
        bg.from_games([Game()])
    with pytest.raises(ValueError, match="rules"):
        bg.from_games([Game(Rules("star", 3))] * 3)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.uint16, torch.int32, torch.uint32,
                                   torch.uint64])
def test_every_integer_dtype_is_checked_by_value(dtype: torch.dtype) -> None:
    """The range check compared in the tensor's own dtype, where the bound wraps: an int8 100 (in range, not legal)
    was refused as out of range on the star board (14641 wraps to 49), every int16 action on the 16 x 16 board
    (65536 wraps to 0), and uint16 / uint32 failed with torch's NotImplementedError. take()'s slots likewise."""
    from halma_env.game import IllegalMoveError

    info = torch.iinfo(dtype)
    for rules in (Rules("star", 2), Rules("halma16", 2)):
        bg = BatchedGame(rules, 1, seed=0)
        with pytest.raises(IllegalMoveError, match=r"illegal action in game\(s\) \[0\]"):
            bg.step(torch.tensor([100], dtype=dtype))  # in range: judged by the moves, not refused as out of range
        legal = bg.legal_lists()[0][0]
        fits = legal[legal <= info.max]
        if len(fits):  # a legal action this dtype can hold is played
            bg.step(fits[:1].to(dtype))
        assert bg.ply.tolist() == [1 if len(fits) else 0]
        if info.min < 0 or info.max >= bg.num_actions:  # and one out of range is refused by value
            with pytest.raises(ValueError, match=r"^actions must be 0\.\.\d+: got \[-?\d+\]"):
                bg.step(torch.tensor([-1 if info.min < 0 else bg.num_actions], dtype=dtype))
    wide = BatchedGame(Rules("star", 2), 300, seed=0)
    assert wide.take(torch.tensor([50, 60], dtype=dtype)).batch_size == 2


@pytest.mark.slow
@pytest.mark.parametrize("variant,n", ALL)
def test_big_sweep(variant, n):
    # thousands of positions per variant: random lockstep, loaded scalar positions, endgames
    lockstep(Rules(variant, n, move_limit=200), batch=64, steps=60, seed=11)
    rules = Rules(variant, n)
    lockstep(rules, batch=256, steps=4, seed=12, start=scalar_positions(rules, 256, seed=13, max_plies=300))
    lockstep(Rules(variant, n, move_limit=80), batch=64, steps=40, seed=14, policy="greedy",
             start=endgames(Rules(variant, n, move_limit=80), 64, seed=15, intruders=variant == "star"))


def test_bench_env_table_and_skips(monkeypatch, capsys):
    import types

    from halma_env.envs import bench as bench_env

    monkeypatch.setattr(bench_env, "BATCH_SIZES", (4,))
    monkeypatch.setattr(bench_env.bench_batched, "__defaults__", ((4,),))
    monkeypatch.setattr(bench_env, "bench_aec", lambda s, seed: {"turns_per_s": 10.0})
    monkeypatch.setattr(bench_env, "bench_gymnasium", lambda s, seed: {"steps_per_s": 5.0})
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # importing it now fails: the section is skipped
    args = types.SimpleNamespace(json=False, seconds=0.05, seed=0, device="cpu")
    figures = bench_env.run_benchmark(args)
    out = capsys.readouterr().out
    assert "skipping openspiel: missing dependency" in out
    assert "openspiel" in figures["skipped"] and "openspiel" not in figures
    assert figures["batched"]["cpu"]["4"] > 0 and figures["aec"]["turns_per_s"] == 10.0
    assert "batched torch engine" in out and "B=4" in out
    with pytest.raises(ValueError, match="seconds"):
        bench_env.run_benchmark(types.SimpleNamespace(json=True, seconds=0, seed=0, device=None))


def test_a_move_that_completes_an_opponents_goal_finishes_that_seat():
    # star, 2 seats: seat 1 has 9 pieces in its goal (the bottom point, 111-120) and seat 0 steps
    # into the last hole; with anti-blocking seat 1 finishes first, so seat 0 is second
    rules = Rules("star", 2)
    owner = [-1] * 121
    for h in range(112, 121):
        owner[h] = 1
    owner[60] = 1
    for h in list(range(50, 59)) + [102]:
        owner[h] = 0
    game = Game.from_position(_position(rules, owner, [False] * 121, 0))
    assert _end_reasons_of_one_move(game, 102, 111) == {"finished": 1}


def test_diamond_seats_without_a_king_finish_on_their_goal_alone():
    rules = Rules("diamond", 2, move_limit=60)
    start = []
    for g in endgames(rules, 8, seed=21):
        text = g.position().replace("A", ".")  # seat 0 loses its king (a puzzle position)
        loaded = Game.from_position(text, move_limit=60)
        if not loaded.is_over:
            start.append(loaded)
    reasons = lockstep(rules, batch=len(start), steps=16, seed=3, policy="greedy", start=start)
    assert reasons.get("finished", 0) > 0, reasons


# --- odd loaded positions, resignations, bad input, seeds -------------------------------------


def odd_positions(rules: Rules, count: int, seed: int) -> list[Game]:
    """Well-formed positions that play never reaches: pieces anywhere (diamond's closed points
    included), seats with few or no pieces, diamond seats without a king or with it on its tip,
    seats near or in their goal (some finished at load), the ply near or past the move limit, and
    with 3+ seats now and then a resigned seat."""
    rng, lay, geo, n, options = _generator_setup(rules, seed)
    out: list[Game] = []
    while len(out) < count:
        owner, king = [-1] * geo.num_holes, [False] * geo.num_holes  # each hole's seat, and its kings
        for s in range(n):
            free = [h for h in range(geo.num_holes) if owner[h] < 0]
            rng.shuffle(free)
            if rng.random() < 0.3:  # (nearly) all in its goal
                goal = [h for h in lay.goals[s] if owner[h] < 0]
                rng.shuffle(goal)
                holes = (goal[: rng.randint(lay.max_pieces - 3, lay.max_pieces)] + free[: rng.randint(0, 2)])
            else:
                holes = free[: rng.randint(0 if rng.random() < 0.2 else 1, lay.max_pieces)]
            holes = holes[: lay.max_pieces]
            for h in holes:
                owner[h] = s
            with_king = lay.has_kings and holes and rng.random() < 0.8
            if lay.has_kings and not with_king and len(holes) == lay.max_pieces:
                owner[holes.pop()] = -1  # without its king a seat has at most max_pieces - 1 (SPEC §1)
            if with_king:
                tip = lay.goal_tip[s]
                king[tip if owner[tip] == s and rng.random() < 0.5 else rng.choice(holes)] = True
        seats = [s for s in range(n) if s in owner] or [0]
        text = _position(rules, owner, king, rng.choice(seats)).rsplit(" ", 1)[0]
        ply = rng.randint(0, (rules.move_limit or 40) + 2)
        game = Game.from_position(f"{text} {ply}", **options)
        if n >= 3 and not game.is_over and rng.random() < 0.3:
            game.resign(rng.choice([s for s in range(n) if game.status[s] == "active"]))
        if not game.is_over:
            out.append(game)
    return out


ODD_OPTIONS = [
    {"move_limit": 20},
    {"anti_blocking": False, "move_limit": 25, "limit_outcome": "progress"},
    {"play_to_end": False, "stall_limit": 3},
    {"repetition_limit": 2, "stall_limit": 2, "move_limit": 30, "limit_outcome": "progress"},
]


@pytest.mark.parametrize("variant,n,options", [
    pytest.param(v, n, o, marks=[] if i == k % len(ODD_OPTIONS) else pytest.mark.slow)
    for k, (v, n) in enumerate(ALL) for i, o in enumerate(ODD_OPTIONS)])
def test_odd_loaded_positions_in_lockstep(variant, n, options):
    rules = Rules(variant, n, **options)
    start = odd_positions(rules, 8, seed=n)
    lockstep(rules, batch=8, steps=6, seed=n, start=start, shaping=0.5, reward=("place", "win_loss")[n % 2],
             rotate=n % 2 == 1)


@pytest.mark.parametrize("variant,n", [("star", 3), ("star", 6), ("diamond", 3), ("halma16", 4)])
def test_resigned_seats_loaded_with_from_games(variant, n):
    """A resigned seat is retired like a finished one but is not reported as finished, and
    ``to_games`` gives it back as resigned (a later resignation takes the next place up)."""
    rules = Rules(variant, n, move_limit=40)
    start = []
    for i, g in enumerate(scalar_positions(rules, 4, seed=3, max_plies=40) + endgames(rules, 4, seed=4)):
        g.resign(i % n if g.status[i % n] == "active" else g.to_move)
        if not g.is_over:
            start.append(g)
    bg = BatchedGame(rules, len(start))
    bg.from_games([g.copy() for g in start])
    for g, back in zip(start, bg.to_games()):
        assert back.status == g.status and back.places == g.places
        seat = next(s for s in range(n) if back.status[s] == "active" and s != back.to_move)
        g = g.copy()
        g.resign(seat)
        back.resign(seat)
        assert back.places == g.places and back.end_reason == g.end_reason
    lockstep(rules, batch=len(start), steps=12, seed=1, start=start, policy="greedy")


def _state(bg: BatchedGame) -> dict[str, torch.Tensor]:
    names = ["owner", "king", "pieces", "to_move", "ply", "status", "places", "top", "first_seat", "stall", "best",
             "hash", "hist", "hist_len", "_bits", "_rows"]
    names += ["asg_u", "asg_v", "asg_match"] if bg.rules.stall_limit is not None else []
    return {k: getattr(bg, k).clone() for k in names}


def _assert_unchanged(bg: BatchedGame, before: dict[str, torch.Tensor]) -> None:
    for k, v in _state(bg).items():
        assert torch.equal(v, before[k]), f"{k} changed"


def test_bad_actions_name_the_games_and_change_nothing():
    bg = BatchedGame(Rules("diamond", 3, stall_limit=5), 4, seed=2)
    for _ in range(3):
        bg.step(bg.random_actions())
    before = _state(bg)
    legal = bg.random_actions()
    bad = legal.clone()
    bad[2] = -1
    bad[3] = bg.num_actions
    with pytest.raises(ValueError, match=r"actions must be 0\.\.14640.* game\(s\) \[2, 3\]"):
        bg.step(bad)
    for wrong in (["a", "b", "c", "d"], None, [object()] * 4):
        with pytest.raises(TypeError, match=r"actions must be an integer tensor of shape \(4,\)"):
            bg.step(wrong)
    with pytest.raises(ValueError, match=r"actions must be 0\.\.14640"):
        bg.step([2**70, 0, 0, 0])
    _assert_unchanged(bg, before)
    bg.step(np.asarray(legal.tolist(), dtype=np.int16))  # numpy integers are fine


def test_bad_constructor_arguments_are_named():
    for seed in (None, "7", 1.5, 2**64, True):
        with pytest.raises(ValueError, match="seed must be an int"):
            BatchedGame(Rules(), 2, seed=seed)
    for device in ("meta", "mps"):
        with pytest.raises(ValueError, match="runs on cpu or cuda"):
            BatchedGame(Rules(), 2, device=device)
    if torch.cuda.device_count() < 9:
        with pytest.raises(ValueError, match="cuda:9"):
            BatchedGame(Rules(), 2, device="cuda:9")
    for size in (0, -1, 2.0, True, "4"):
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            BatchedGame(Rules(), size)
    assert BatchedGame(Rules(), np.int64(3), seed=np.int64(-1)).batch_size == 3


def test_bad_from_games_changes_nothing():
    rules = Rules("halma16", 2, stall_limit=4)
    bg = BatchedGame(rules, 3, seed=1)
    for _ in range(4):
        bg.step(bg.random_actions())
    before = _state(bg)
    good = scalar_positions(rules, 3, seed=2, max_plies=20)
    over = good[2].copy()
    over.resign(0)
    for games, message in (
        (good[:2], "needs 3 games, got 2"),
        (good[:2] + [Game(Rules("halma16", 2))],
         "games\\[2\\] has other rules: stall_limit=None, the batch plays stall_limit=4"),
        (good[:2] + ["x"], "games\\[2\\] is not a halma_env.Game"),
        ([good[0], over, good[1]], "games\\[1\\] is over"),
    ):
        with pytest.raises(ValueError, match=message):
            bg.from_games(games)
        _assert_unchanged(bg, before)
    bg.from_games(g for g in good)  # any iterable of games
    assert bg.ply.tolist() == [g.ply for g in good]
    # a batch whose first seat the games' seat count lacks: the seat count named (it was "first_seat must be
    # a seat 0..1, got 2", from comparing the rules with the batch's first seat put into the game's)
    three = BatchedGame(Rules("star", 3, first_seat=2), 2)
    with pytest.raises(ValueError, match=r"^games\[0\] has other rules: num_players=2, the batch plays num_players=3"):
        three.from_games([Game(Rules("star", 2))] * 2)


def test_the_same_seed_gives_the_same_games():
    def play(seed: int) -> list[torch.Tensor]:
        bg = BatchedGame(Rules("star", 3, move_limit=8), 4, seed=seed, rotate_first_seat=True)
        out = []
        for _ in range(20):
            a = bg.random_actions()
            _, done, info = bg.step(a)
            out += [a, done, info["places"], bg.owner.clone()]
        return out

    first, again, other = play(5), play(5), play(6)
    assert all(torch.equal(x, y) for x, y in zip(first, again))
    assert not all(torch.equal(x, y) for x, y in zip(first, other))


def test_to_games_keeps_a_resigned_seat_whose_goal_filled_up_in_play():
    # star 3, play to end off: seat 1 resigned with 9 pieces in its goal; seat 0 fills the last
    # hole. A resigned seat never finishes, so the game goes on; the position text alone would
    # make seat 1 finished (the first finish, ending the game), so to_games must not read it so
    rules = Rules("star", 3, play_to_end=False, repetition_limit=3)
    lay = layout("star", 3)
    owner = [-1] * 121
    for h in lay.goals[1]:
        if h != 74:
            owner[h] = 1
    owner[60] = 1
    for h in [73, *sorted(lay.homes[0])[:5]]:
        owner[h] = 0
    for h in sorted(lay.homes[2])[:5]:
        owner[h] = 2
    game = Game.from_position(_position(rules, owner, [False] * 121, 0), play_to_end=False, repetition_limit=3)
    game.resign(1)
    bg = BatchedGame(rules, 1)
    bg.from_games([game.copy()])
    _, done, _ = bg.step(torch.tensor([encoding("star", 3).encode_move(0, 73, 74)]))
    game.play((73, 74))
    back = bg.to_games()[0]
    assert not bool(done[0]) and not game.is_over
    assert (back.is_over, back.status, back.places) == (False, game.status, game.places)
    assert back.legal_moves() == game.legal_moves() and back._repetitions[back._record_position()] == 2


# --- behaviours found unpinned by mutation testing (scripts/mutants.py) ---------------------------


def test_a_move_that_leaves_nobody_able_to_move_is_a_no_moves_draw():
    # diamond 3: seat 1's piece on hole 120 and seat 2's on hole 0 can never move (closed points);
    # seat 0 steps its only piece into its goal (finished, place 1), then nobody can move: the two
    # stuck seats share place 2 and the game ends as "no_moves", as in the scalar engine
    rules = Rules("diamond", 3)
    owner = [-1] * 121
    owner[13], owner[120], owner[0] = 0, 1, 2
    game = Game.from_position(_position(rules, owner, [False] * 121, 0))
    assert _end_reasons_of_one_move(game, 13, 14) == {"seat_finished": 1, "no_moves": 1}


def test_seed_range_and_default():
    # the whole range torch.Generator.manual_seed takes is accepted, one beyond either end is not;
    # the default seed is 0
    for seed in (-(2**63), 2**64 - 1):
        assert BatchedGame(Rules(), 1, seed=seed).batch_size == 1
    for seed in (-(2**63) - 1, 2**64):
        with pytest.raises(ValueError, match="seed must be an int"):
            BatchedGame(Rules(), 1, seed=seed)
    rules = Rules("star", 3)
    assert torch.equal(BatchedGame(rules, 4).random_actions(), BatchedGame(rules, 4, seed=0).random_actions())


def test_a_cuda_index_beyond_the_devices_is_named(monkeypatch):
    # (the check runs before anything touches CUDA, so a CPU-only machine can pretend to have one)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match=r"'cuda:1': torch sees 1 CUDA device\(s\), cuda:0 \.\. cuda:0"):
        BatchedGame(Rules(), 2, device="cuda:1")


@pytest.mark.parametrize("variant,n", [("star", 2), ("diamond", 3), ("halma16", 2)])
def test_kept_buffers_have_their_shapes_no_torch_warning(variant, n):
    # every out= buffer must have the shape its op writes: torch resizes a wrong one with a
    # deprecation warning now (an error in a future release), once per step in a training loop
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bg = BatchedGame(Rules(variant, n, move_limit=6), 3, seed=1)
        for _ in range(8):
            bg.action_mask()
            bg.observation()
            bg.legal_lists()
            bg.step(bg.random_actions())


@pytest.mark.parametrize("king", [False, True])
def test_random_actions_draw_every_legal_move(king: bool):
    # the diamond 3 position above: seat 0's one piece has two moves (13-14, 13-26); 64 games of it
    # draw both, and nothing else (the last move of the list too, not only the first).  As a king its
    # moves sit in the last row of the compact lists (the king's), the only row with any.
    rules = Rules("diamond", 3)
    owner, kings = [-1] * 121, [False] * 121
    owner[13], owner[120], owner[0] = 0, 1, 2
    kings[13] = king
    game = Game.from_position(_position(rules, owner, kings, 0))
    bg = BatchedGame(rules, 64, seed=4)
    bg.from_games([game.copy() for _ in range(64)])
    enc = encoding("diamond", 3)
    legal = {enc.encode_move(0, m.src, m.dst) for m in game.legal_moves()}
    assert len(legal) == 2
    assert set(bg.random_actions().tolist()) == legal


@pytest.mark.parametrize("play_to_end", [True, False])
def test_a_move_that_completes_seat_0s_goal_finishes_seat_0(play_to_end):
    # the mirror image of the test above: seat 1 steps into the last hole of seat 0's goal (0-9),
    # so seat 0 finishes first and seat 1 is second; with two seats the game ends as "finished"
    # whether or not play_to_end is set (first_finish is for three seats or more)
    rules = Rules("star", 2, play_to_end=play_to_end)
    owner = [-1] * 121
    for h in [*range(9), 60]:
        owner[h] = 0
    for h in [*range(62, 71), 18]:
        owner[h] = 1
    game = Game.from_position(_position(rules, owner, [False] * 121, 1), play_to_end=play_to_end)
    assert _end_reasons_of_one_move(game, 18, 9) == {"finished": 1}


def _play_moves(bg: BatchedGame, games: list[Game], moves: list[list[tuple[int, int] | None]], new_game,
                reasons: dict[str, int]) -> None:
    """Step the batch and the scalar games through ``moves`` (per step, one (src, dst) per game;
    None: the scalar game's first legal move)."""
    enc = encoding(bg.rules.variant, bg.rules.num_players)
    phi0 = _phi_start(bg.rules)
    for t, step in enumerate(moves):
        _assert_same_state(bg, games, f"step {t}")
        actions = []
        for g, move in zip(games, step):
            src, dst = move or tuple(g.legal_moves()[0])
            actions.append(enc.encode_move(g.to_move, src, dst))
        _step_both(bg, games, actions, new_game, 0.0, phi0, f"step {t}", reasons)


def test_a_slots_earlier_history_is_not_counted_for_repetition():
    # slot 0 plays game A (loaded at ply 10, seat 0 first): seat 0 walks a piece round the triangle
    # 111-102-103 while seat 1 steps 9-18 and back, so after 5 plies (the move limit, 15) the start
    # position stands with seat 1 to move.  The rotated game B (seat 1 first) is in that position
    # again after 4 plies: the second time (start and now), not a third, though A's history still
    # lies in the buffer right behind B's (slot 1 plays on, so its history is the longer one)
    rules = Rules("star", 2, repetition_limit=3, move_limit=15)
    start = Game(rules).position().rsplit(" ", 1)[0]
    games = [Game.from_position(f"{start} 10", repetition_limit=3, move_limit=15), Game(rules)]
    bg = BatchedGame(rules, 2, rotate_first_seat=True)
    bg.from_games([g.copy() for g in games])
    reasons: dict[str, int] = {}
    game_a = [(111, 102), (9, 18), (102, 103), (18, 9), (103, 111)]
    game_b = [(9, 18), (111, 102), (18, 9), (102, 111), (9, 18)]
    _play_moves(bg, games, [[m, None] for m in game_a + game_b], lambda b: Game(rules.replace(first_seat=1)),
                reasons)
    assert reasons == {"move_limit": 1}


def test_repetition_and_move_limit_end_games_in_the_same_step():
    # game 0 repeats the start position a second time (repetition_limit 2) in the step that brings
    # game 1 to its move limit; game 2 goes on (its places and length read 0)
    rules = Rules("star", 2, repetition_limit=2, move_limit=20)
    g0 = Game(rules)
    for m in ("113-104", "7-16", "104-113"):
        g0.play(m)
    g1 = Game(rules)
    for m in ("113-104", "7-16"):
        g1.play(m)
    g1 = Game.from_position(f"{g1.position().rsplit(' ', 1)[0]} 19", repetition_limit=2, move_limit=20)
    g2 = Game(rules)
    g2.play("113-104")
    bg = BatchedGame(rules, 3)
    bg.from_games([g.copy() for g in (g0, g1, g2)])
    reasons: dict[str, int] = {}
    last = g1.legal_moves()[0]
    _play_moves(bg, [g0, g1, g2], [[(16, 7), (last.src, last.dst), (7, 16)]], lambda b: Game(rules), reasons)
    assert reasons == {"repetition": 1, "move_limit": 1}


def test_repetition_history_grows_past_its_first_64_positions():
    # positions repeat every 4 plies (each seat takes its last move back); the history buffer of
    # 64 positions is full before the 20th repetition ends the game, as in the scalar engine
    reasons = lockstep(Rules("star", 2, repetition_limit=20), batch=1, steps=90, seed=1, policy="undo")
    assert reasons.get("repetition", 0) > 0, reasons


def test_the_repetition_history_gives_its_room_back_once_the_long_games_are_over():
    """The buffer doubles for a long game and halves again once every game's history fits in a quarter of it,
    so a batch's memory follows its longest game now, not the longest one ever (B x 16,384 x 8 bytes at
    B = 4,096 would be 512 MiB)."""
    rules = Rules("star", 2, repetition_limit=3)
    bg = BatchedGame(rules, 4, seed=0)
    bg.hist = torch.cat([bg.hist, torch.zeros((4, 1024 - bg.hist.shape[1]), dtype=torch.long)], 1)  # after a long game
    widths = []
    for _ in range(6):
        bg.step(bg.random_actions())
        widths.append(bg.hist.shape[1])
    assert widths[:5] == [512, 256, 128, 64, 64] and bg.hist_len.max() <= 8
    # (test_repetition_history_grows_past_its_first_64_positions plays a buffer that grows and halves
    # again against the scalar engine)


def test_automatic_passes_in_several_games_at_once():
    # star 2: seat 1's only piece sits on the top tip boxed in by seat 0's pieces, so it passes
    # every turn and seat 0 moves again; three such games pass in the same step
    rules = Rules("star", 2)
    owner = [-1] * 121
    owner[0] = 1
    for h in (1, 2, 3, 5, 60):
        owner[h] = 0
    game = Game.from_position(_position(rules, owner, [False] * 121, 0))
    bg = BatchedGame(rules, 3)
    games = [game.copy() for _ in range(3)]
    bg.from_games([g.copy() for g in games])
    reasons: dict[str, int] = {}
    _play_moves(bg, games, [[(60, 61)] * 3, [(61, 60)] * 3], lambda b: Game(rules), reasons)
    _assert_same_state(bg, games, "end")
    assert bg.to_move.tolist() == [0, 0, 0] and bg.ply.tolist() == [12, 12, 12] and not reasons


def test_the_batched_place_rewards_are_rewards_place_rewards_row_by_row():
    """The engine's vectorised place rewards of decided rows (ties, a draw) against rewards.place_rewards."""
    from halma_env.rewards import place_rewards

    places = torch.tensor([[1, 2, 3], [2, 1, 2], [1, 1, 1], [3, 1, 1], [1, 3, 2]])
    status = torch.ones_like(places)
    for scheme in ("place", "win_loss"):
        bg = BatchedGame(Rules("star", 3), 1, reward=scheme)
        expected = [place_rewards(row, scheme) for row in places.tolist()]
        assert torch.allclose(bg._place_rewards(places, status), torch.tensor(expected)), scheme


# --- more behaviours found unpinned by mutation testing: step, end rules, conversions ----------


def test_bad_action_messages_name_the_first_eight_games():
    # nine bad games of ten: the message names the first eight (and their actions), in order
    bg = BatchedGame(Rules("star", 2), 10)
    before = _state(bg)
    legal = bg.random_actions()
    bad = legal.clone()
    bad[1:] = -torch.arange(1, 10)
    message = "got [-1, -2, -3, -4, -5, -6, -7, -8] in game(s) [1, 2, 3, 4, 5, 6, 7, 8]; nothing was played"
    with pytest.raises(ValueError, match=re.escape(message)):
        bg.step(bad)
    bad[1:] = 0  # hole 0 to hole 0: in range, never legal
    message = "illegal action in game(s) [1, 2, 3, 4, 5, 6, 7, 8] (see action_mask()); nothing was played"
    with pytest.raises(ValueError, match=re.escape(message)):
        bg.step(bad)
    _assert_unchanged(bg, before)


def test_a_goal_filled_by_others_does_not_finish_a_seat_with_no_piece_in_it():
    # star 2: seat 1's goal is seat 0's home; seat 0 steps its tenth piece back home (102-111), so
    # the goal is full, but of seat 0's pieces: seat 1 has none in it, so it has not finished
    # (a seat needs at least one piece of its own in its goal, with anti-blocking too, and a seat
    # with no pieces at all never finishes) and the game goes on, as in the scalar engine
    rules = Rules("star", 2)
    for seat_1 in (range(10), []):  # at its start, or no pieces at all
        owner = [-1] * 121
        for h in [*range(112, 121), 102]:
            owner[h] = 0
        for h in seat_1:
            owner[h] = 1
        game = Game.from_position(_position(rules, owner, [False] * 121, 0))
        assert _end_reasons_of_one_move(game, 102, 111) == {}
        assert game.status == ["active", "active"] and not game.is_over


def test_anti_blocking_finishes_a_seat_with_one_piece_in_its_filled_goal():
    # star 2: seat 1 has one piece (120) in its goal (111-120), seat 0 eight more there; seat 0
    # steps 102-111 and the goal is full: with anti-blocking seat 1 finishes (one piece of its own
    # there is enough), so it is first and the two-seat game ends with seat 0 second
    rules = Rules("star", 2)
    owner = [-1] * 121
    for h in [*range(112, 120), 102, 60]:
        owner[h] = 0
    for h in [120, *range(9)]:
        owner[h] = 1
    game = Game.from_position(_position(rules, owner, [False] * 121, 0))
    assert _end_reasons_of_one_move(game, 102, 111) == {"finished": 1}
    assert game.places == [2, 1]


def test_from_games_names_only_the_rules_that_differ():
    # first_seat may differ (it is not named); the other differences are listed, in the rules' order
    bg = BatchedGame(Rules("star", 2, move_limit=50, repetition_limit=2), 1)
    game = Game(Rules("star", 2, first_seat=1, move_limit=40, repetition_limit=3))
    message = ("games[0] has other rules: move_limit=40, repetition_limit=3, the batch plays move_limit=50, "
               "repetition_limit=2 (only first_seat may differ)")
    with pytest.raises(ValueError, match=re.escape(message)):
        bg.from_games([game])


def test_integer_arguments_as_tensors():
    # a 0-d integer tensor is an int; a bool or float tensor is not
    assert BatchedGame(Rules(), torch.tensor(3), seed=torch.tensor(5)).batch_size == 3
    for wrong in (torch.tensor(True), torch.tensor(2.0)):
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            BatchedGame(Rules(), wrong)
        with pytest.raises(ValueError, match="seed must be an int"):
            BatchedGame(Rules(), 2, seed=wrong)


def test_padded_lists_are_as_wide_as_the_longest_row():
    flags = torch.tensor([[False, True, False, True], [False, False, False, False], [True, False, False, False]])
    cols, valid = padded_lists(flags)
    assert cols.tolist() == [[1, 3], [0, 0], [0, 0]]
    assert valid.tolist() == [[True, True], [False, False], [True, False]]
    cols, valid = padded_lists(torch.zeros((2, 5), dtype=torch.bool))  # none at all: one invalid entry
    assert cols.tolist() == [[0], [0]] and valid.tolist() == [[False], [False]]
    cols, valid = padded_lists(torch.zeros((0, 5), dtype=torch.bool))  # no rows: still one column
    assert cols.shape == valid.shape == (0, 1)


def test_a_loaded_repetition_history_counts_the_kings():
    # diamond 2, repetition limit 2: both kings step out (120-89, 10-15) and the game is loaded;
    # both step back, and the start position stands a second time: a repetition, found only if the
    # loaded history's positions carry their kings
    rules = Rules("diamond", 2, repetition_limit=2)
    game = Game(rules)
    game.play((120, 89))
    game.play((10, 15))
    bg = BatchedGame(rules, 1)
    bg.from_games([game.copy()])
    reasons: dict[str, int] = {}
    _play_moves(bg, [game], [[(89, 120)], [(15, 10)]], lambda b: Game(rules), reasons)
    assert reasons == {"repetition": 1}


def test_a_king_jumps_a_row_of_eleven_pieces():
    # a diamond king jumps a row of contiguous pieces of any length at once: here from the far end of
    # a side point (a closed hole, as a loaded position may have it) over eleven pieces onto the goal
    # tip 0; the pointer doubling that finds a row's end must reach past eight cells
    rules = Rules("diamond", 2)
    row = line("diamond", 0, "SW", 13)[::-1]  # 98, 86, ..., 1, 0
    pieces = {row[0]: "A", 110: "B"} | {h: "01"[i % 2] for i, h in enumerate(row[1:12])}
    game = Game.from_position(engine_position("diamond", 2, pieces))
    assert [m.dst for m in game.legal_moves() if m.src == row[0]] == [0]
    bg = BatchedGame(rules, 1)
    bg.from_games([game.copy()])
    _assert_same_state(bg, [game], "loaded")
    assert _end_reasons_of_one_move(game, row[0], 0) == {}
