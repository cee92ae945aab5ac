"""The Gymnasium single-agent environment: registration, check_env, episodes against CPU opponents,
agreement with the AEC env, and MaskablePPO (sb3-contrib) running on it."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import halma_env
from halma_env.encoding import encoding
from halma_env.envs import GYM_ID, HalmaEnv, seat_rewards
from tests.engine_helpers import UncopyablePlayer


def test_registered_id_and_make() -> None:
    e = gymnasium.make(GYM_ID, variant="diamond", num_players=3, seat=2, opponents=["random", "random"], move_limit=50)
    assert isinstance(e.unwrapped, HalmaEnv)
    obs, info = e.reset(seed=0)
    assert obs["observation"].shape == (17, 17, 12) and obs["action_mask"].shape == (121 * 121,)
    assert info["seat"] == 2 and e.unwrapped.game.to_move == 2 and e.unwrapped.game.ply == 2
    assert e.unwrapped.game.rules.move_limit == 50
    assert halma_env.HalmaEnv is HalmaEnv


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(variant="star", num_players=2),
        dict(variant="star", num_players=3, seat=1, move_limit=30),
        dict(variant="halma16", num_players=2, seat=None, progress_shaping=1.0),
    ],
    ids=["star2", "star3-seat1", "halma16-random-seat"],
)
def test_gymnasium_check_env(kwargs: dict) -> None:
    # through gymnasium.make so that the env has a spec and check_env also tries every render mode
    check_env(gymnasium.make(GYM_ID, **kwargs).unwrapped, skip_render_check=False)


def test_observation_and_mask_are_the_learners_canonical_view() -> None:
    e = HalmaEnv(variant="star", num_players=4, seat=3, opponents="random")
    obs, info = e.reset(seed=1)
    enc = encoding("star", 4)
    assert np.array_equal(obs["observation"], enc.observation(e.game, 3))
    assert np.array_equal(obs["action_mask"], enc.action_mask(e.game, 3))
    assert np.array_equal(e.action_masks(), obs["action_mask"].astype(bool)) and e.action_masks().dtype == bool
    assert info["legal_moves"] == e.game.legal_moves()


def test_episodes_to_the_end_pay_the_learners_place() -> None:
    rng = random.Random(0)
    for kwargs in (
        dict(num_players=2, move_limit=40, limit_outcome="progress"),
        dict(num_players=3, seat=1, move_limit=45, limit_outcome="progress"),
        dict(variant="halma16", num_players=4, seat=None, stall_limit=6),
    ):
        e = HalmaEnv(**kwargs)
        for episode in range(2):
            obs, info = e.reset(seed=episode)
            total, done, steps = 0.0, False, 0
            while not done:
                action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
                obs, reward, terminated, truncated, info = e.step(action)
                total += reward
                done = terminated or truncated
                steps += 1
            seat = e.seat
            assert e.game.places[seat] is not None
            assert total == pytest.approx(seat_rewards(e.game, "place")[seat])
            assert truncated == (e.game.end_reason == "move_limit" and e.game.status[seat] == "active")
            assert info["place"] == e.game.places[seat] and not e.action_masks().any()
            with pytest.raises(RuntimeError, match="reset"):
                e.step(0)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_stack_the_infos_when_episodes_end_at_different_times(mode: str) -> None:
    """gymnasium's vector envs build each info array from the first env that reports a key: ``place`` was
    None until decided, and an int array made from an ended game could not take another game's None
    (``TypeError``), so 3 seats with random seats crashed within a few steps."""
    import gymnasium

    envs = gymnasium.make_vec(GYM_ID, num_envs=4, vectorization_mode=mode, num_players=3, seat=None, move_limit=10)
    try:
        envs.reset(seed=0)
        places = []
        for _ in range(40):
            masks = envs.call("action_masks")
            _, _, terminated, truncated, info = envs.step(np.array([np.flatnonzero(m)[0] if m.any() else 0
                                                                     for m in masks]))
            assert info["place"].dtype.kind == "i" and set(info["place"].tolist()) <= {0, 1, 2, 3}
            places += [p for p, end in zip(info["place"].tolist(), terminated | truncated, strict=True) if end]
        assert places and all(p >= 1 for p in places)  # every ended episode reports its decided place
    finally:
        envs.close()


def test_learner_finishing_ends_its_episode_while_others_could_play_on() -> None:
    from test_env_aec import finishing_position

    e = HalmaEnv(variant="star", num_players=3, seat=0)
    obs, _ = e.reset(seed=0, options={"position": finishing_position()})
    _, reward, terminated, truncated, info = e.step(e.aec.encode_move(0, (14, 6)))
    assert reward == 1.0 and terminated and not truncated and info["place"] == 1
    assert not e.game.is_over  # seats 1 and 2 would play on for places 2 and 3


def test_illegal_action_ends_the_episode() -> None:
    e = HalmaEnv(illegal_reward=-5.0)
    e.reset(seed=0)
    _, reward, terminated, truncated, info = e.step(0)
    assert reward == -5.0 and terminated and not truncated and info["illegal_action"]
    assert not e.action_masks().any()


def test_opponent_specs() -> None:
    moves = []

    def cpu(game):
        moves.append(game.ply)
        return game.legal_moves()[0]

    e = HalmaEnv(num_players=3, seat=0, opponents={1: cpu})  # seat 2 defaults to random
    e.reset(seed=0)
    e.step(int(np.flatnonzero(e.action_masks())[0]))
    assert moves == [1] and e.game.ply == 3
    with pytest.raises(ValueError, match="2 players"):
        HalmaEnv(num_players=3, opponents=["random"])
    with pytest.raises(ValueError, match="keys must be seats"):
        HalmaEnv(num_players=2, opponents={5: "random"})
    with pytest.raises(ValueError, match="seat must be"):
        HalmaEnv(num_players=2, seat=2)
    with pytest.raises(ValueError, match="unknown rule option"):
        HalmaEnv(colour="blue")


def test_bad_arguments_are_refused_in_the_constructor() -> None:
    with pytest.raises(ValueError, match="opponents has an entry for seat 0, which is the learner's seat"):
        HalmaEnv(seat=0, opponents={0: "random"})
    HalmaEnv(seat=None, opponents={0: "random", 1: "random"})  # a drawn seat: every seat may be a CPU
    for bad in (5, None, [3]):
        with pytest.raises(ValueError, match="opponents: a player is a name"):
            HalmaEnv(opponents=bad if bad is not None else {1: None})
    for bad in (float("nan"), float("inf"), "x", True):
        with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
            HalmaEnv(illegal_reward=bad)
    with pytest.raises(ValueError, match="progress_shaping must be a finite number"):
        HalmaEnv(progress_shaping=float("nan"))
    e = HalmaEnv(opponents="bogus")  # names are resolved at reset (through the entry point)
    with pytest.raises(ValueError, match="opponents: seat 1: unknown player 'bogus'"):
        e.reset(seed=0)


def test_step_input_is_checked() -> None:
    e = HalmaEnv()
    with pytest.raises(RuntimeError, match="call reset\\(\\) before step\\(\\)"):
        e.step(0)
    with pytest.raises(RuntimeError, match="call reset\\(\\) before action_masks\\(\\)"):
        e.action_masks()
    with pytest.raises(RuntimeError, match="call reset\\(\\) before render\\(\\)"):
        HalmaEnv(render_mode="ansi").render()
    for bad in (1.5, "x"):
        with pytest.raises(TypeError, match="seed must be an integer or None"):
            e.reset(seed=bad)
    e.reset(seed=0)
    legal = int(np.flatnonzero(e.action_masks())[0])
    for bad in (legal + 0.7, str(legal), np.float64(legal), True):
        with pytest.raises(TypeError, match="action must be an integer"):
            e.step(bad)
    assert e.game.ply == 0
    _, _, terminated, _, info = e.step(np.int64(legal))
    assert e.game.ply == 2 and not terminated and "illegal_action" not in info


def test_seeded_resets_are_reproducible() -> None:
    def run(seed: int) -> list:
        e = HalmaEnv(num_players=3, seat=None, move_limit=24)
        obs, _ = e.reset(seed=seed)
        rng = random.Random(seed)
        done = False
        while not done:
            obs, _, term, trunc, _ = e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            done = term or trunc
        return [e.seat, *e.game.moves]

    assert run(4) == run(4)


def test_render_modes() -> None:
    e = HalmaEnv(render_mode="rgb_array")
    e.reset(seed=0)
    assert e.render().dtype == np.uint8
    e = HalmaEnv(render_mode="ansi")
    e.reset(seed=0)
    assert "seat 0 to move" in e.render()


def test_maskable_ppo_runs() -> None:
    import sb3_contrib
    import torch
    from stable_baselines3.common.env_util import make_vec_env

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model: more threads only fight over the shared cores (10x slower)
    try:
        _train_maskable_ppo(sb3_contrib, make_vec_env)
    finally:
        torch.set_num_threads(threads)


def _train_maskable_ppo(sb3_contrib, make_vec_env) -> None:

    vec = make_vec_env(GYM_ID, n_envs=2, env_kwargs=dict(num_players=2, move_limit=30, progress_shaping=1.0), seed=0)
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu",
        policy_kwargs=dict(net_arch=[32]),
    )
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs = vec.reset()
    masks = np.array(vec.env_method("action_masks"))
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert all(masks[i, a] for i, a in enumerate(actions))


# --- copies, bad actions and opponents given with numpy seats (audit) --------------------------


def first_legal(e: HalmaEnv) -> int:
    return int(np.flatnonzero(e.action_masks())[0])


def test_pickle_mid_episode_gives_a_fresh_env_that_works() -> None:
    # as the AEC env (EzPickle): the constructor arguments travel, the episode does not; before the
    # fix, the copy kept its seat assignment but lost its CPU opponents and then crashed in step()
    import pickle

    e = HalmaEnv(variant="star", num_players=3, seat=1, opponents=["random", "random"], move_limit=40)
    e.reset(seed=3)
    e.step(first_legal(e))
    clone = pickle.loads(pickle.dumps(e))
    with pytest.raises(RuntimeError, match="call reset\\(\\) before step\\(\\)"):
        clone.step(0)
    fresh = HalmaEnv(variant="star", num_players=3, seat=1, opponents=["random", "random"], move_limit=40)
    for env in (clone, fresh):
        env.reset(seed=7)
        for _ in range(4):
            env.step(first_legal(env))
    assert clone.game.moves == fresh.game.moves and clone.game.ply == fresh.game.ply


def test_deepcopy_mid_episode_continues_the_same_episode() -> None:
    import copy

    e = gymnasium.make(GYM_ID, num_players=3, seat=None, move_limit=60, progress_shaping=1.0)
    e.reset(seed=2)
    e.step(first_legal(e.unwrapped))
    clone = copy.deepcopy(e)
    assert clone.unwrapped.game.moves == e.unwrapped.game.moves and clone.unwrapped.seat == e.unwrapped.seat
    for _ in range(5):
        action = first_legal(e.unwrapped)
        a, b = e.step(action), clone.step(action)
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
    ply = e.unwrapped.game.ply
    clone.step(first_legal(clone.unwrapped))
    assert e.unwrapped.game.ply == ply < clone.unwrapped.game.ply


def test_deepcopy_keeps_a_shared_opponent_shared_across_episodes() -> None:
    """The gym env's opponent and its AEC env's CPU seat are one object; in the copy too, so the copy
    and the original play the same games after resets that move the learner to another seat."""
    import copy

    from agents.bots.random_bot import RandomBot

    env = HalmaEnv("star", 2, seat=None, opponents=[RandomBot(seed=1)], move_limit=6)
    env.reset(seed=3)
    clone = copy.deepcopy(env)
    assert clone.opponents[0] is next(iter(clone.aec.cpu_seats().values())) is not env.opponents[0]
    for _ in range(40):
        action = first_legal(env)
        a, b = env.step(action), clone.step(action)
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
        if a[2] or a[3]:
            env.reset()
            clone.reset()
            assert env.seat == clone.seat and env.game.moves == clone.game.moves


def test_out_of_range_action_is_a_value_error_and_changes_nothing() -> None:
    e = HalmaEnv()
    e.reset(seed=0)
    for bad in (-1, 121 * 121, 10**9, np.int64(-3)):
        with pytest.raises(ValueError, match="action must be 0..14640"):
            e.step(bad)
    assert e.game.ply == 0 and e.action_masks().any()
    _, _, terminated, _, _ = e.step(first_legal(e))  # the episode goes on
    assert not terminated and e.game.ply == 2


def test_illegal_action_final_observation_has_an_empty_mask() -> None:
    e = HalmaEnv()
    e.reset(seed=0)
    obs, _, terminated, _, info = e.step(0)  # masked: ends the episode
    assert terminated and not obs["action_mask"].any() and e.observation_space.contains(obs)
    assert info["legal_moves"] == []  # as the mask (it listed the start's moves)
    assert e.game.ply == 0  # the game itself was not played on


def test_opponents_keyed_by_numpy_integers() -> None:
    e = HalmaEnv(num_players=3, seat=0, opponents={np.int64(1): "random", np.int32(2): "random"})
    e.reset(seed=0)
    assert sorted(e.aec.cpu_seats()) == ["player_1", "player_2"]


# --- behaviour found unpinned by mutation testing (scripts/mutants.py on halma_env/envs) ---------


def test_cpu_seats_stop_once_the_learners_place_is_decided() -> None:
    """The learner finishes first: its episode is over and the CPU seats do not play on (a move
    limit bounds the game, so an env that let them play on ends it instead of hanging)."""
    from test_env_aec import finishing_position

    e = HalmaEnv(variant="star", num_players=3, seat=0, move_limit=60)
    e.reset(seed=0, options={"position": finishing_position()})
    _, _, terminated, _, _ = e.step(e.aec.encode_move(0, (14, 6)))
    assert terminated and e.game.ply == 1 and not e.game.is_over  # seat 1 is to move, nobody moved it
    assert e.game.to_move == 1 and e.game.places == [1, None, None]


def test_import_halma_env_envs_registers_the_id_once() -> None:
    """With halma_env imported before gymnasium (so its own check cannot register), ``import
    halma_env.envs`` registers the id with the env's entry point; ``register()`` again is a no-op."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import sys, halma_env; assert 'gymnasium' not in sys.modules\n"
        "import gymnasium, halma_env.envs\n"
        "spec = gymnasium.spec('halma_env/Halma-v0')\n"
        "halma_env.envs.register()\n"  # already there: not registered again (gymnasium would warn)
        "assert gymnasium.spec('halma_env/Halma-v0') is spec\n"
        "print(type(gymnasium.make('halma_env/Halma-v0').unwrapped).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "HalmaEnv"


def test_metadata_seats_and_opponent_keys_are_checked() -> None:
    assert HalmaEnv.metadata["render_fps"] == 2 and HalmaEnv.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    e = HalmaEnv(num_players=3, seat=2)
    assert e.seat == 2 and e.agent == "player_2"  # the fixed seat, before any reset
    for bad in (-1, 3):
        with pytest.raises(ValueError, match="seat must be a seat 0..2"):
            HalmaEnv(num_players=3, seat=bad)
        with pytest.raises(ValueError, match="opponents keys must be seats 0..2"):
            HalmaEnv(num_players=3, opponents={bad: "random"})


@pytest.mark.parametrize(("opponents", "message"), [
    ({1.0: "random"}, "opponents keys must be seats 0..2 or their agent names player_0..player_2, got [1.0]"),
    ({True: "random"}, "opponents keys must be seats 0..2 or their agent names player_0..player_2, got [True]"),
    ({None: "random", 7: "random"}, "opponents keys must be seats 0..2 or their agent names player_0..player_2, "
                                    "got [None, 7]"),  # (every bad key named: 7 was left for the next try)
    (5, "opponents: a player is a name, a callable (game) -> move or an object with select_move(game), got 5"),
    (b"random", "opponents: a player is a name, a callable (game) -> move or an object with select_move(game), "
                "got b'random'"),  # was: "opponents must list 2 players (one per other seat), got 6"
    ({"random"}, "opponents: a player is a name, a callable (game) -> move or an object with select_move(game), "
                 "got {'random'}"),
    ([3, "random"], "opponents: a player is a name, a callable (game) -> move or an object with select_move(game), "
                    "got 3"),
    ({1: None}, "opponents: a player is a name, a callable (game) -> move or an object with select_move(game), "
                "got None"),
])
def test_opponents_of_the_wrong_type_are_a_type_error(opponents, message: str) -> None:
    """A key that is neither a seat nor an agent name by its type (1.0, True, None), ``opponents`` that is no
    spec, list or mapping (5, a set, bytes) and a spec that is no player were the ``ValueError`` of a value out of
    range: a ``WrongTypeError`` (a ``TypeError``, still a ``ValueError``).  A seat out of range, an unknown
    agent name or a list of the wrong length stays a ValueError."""
    import re

    from halma_env.rules import WrongTypeError

    with pytest.raises(TypeError, match=f"^{re.escape(message)}$") as caught:
        HalmaEnv(num_players=3, seat=0, opponents=opponents)
    assert isinstance(caught.value, WrongTypeError) and isinstance(caught.value, ValueError)
    for out_of_range in ({7: "random"}, {"player_7": "random"}, ["random"]):
        with pytest.raises(ValueError) as caught:
            HalmaEnv(num_players=3, seat=0, opponents=out_of_range)
        assert not isinstance(caught.value, TypeError)


def test_opponent_keys_may_be_agent_names_as_in_the_aec_env() -> None:
    """raw_env's opponents takes seats or agent names; HalmaEnv took seats only ({"player_1": ...} was refused)."""
    e = HalmaEnv(num_players=3, seat=0, opponents={"player_1": "greedy", 2: "random"})
    e.reset(seed=0)
    assert [type(p).__name__ for p in e.aec.cpu_seats().values()] == ["GreedyBot", "RandomBot"]
    with pytest.raises(ValueError, match=r"^opponents: seat 1 is named twice, as 'player_1' and 1$"):
        HalmaEnv(num_players=3, opponents={"player_1": "greedy", 1: "random"})
    with pytest.raises(ValueError, match=r"^opponents has an entry for seat 0, which is the learner's seat$"):
        HalmaEnv(num_players=3, seat=0, opponents={"player_0": "greedy"})
    with pytest.raises(ValueError, match=r"^opponents keys must be seats 0..2 or their agent names player_0..player_2, "
                                         r"got \['player_3', 'p1'\]$"):
        HalmaEnv(num_players=3, opponents={"player_3": "greedy", "p1": "random"})


def test_deepcopy_before_reset_shares_an_opponent_that_cannot_be_copied() -> None:
    import copy

    player = UncopyablePlayer()
    e = HalmaEnv(num_players=2, seat=0, opponents=[player])
    clone = copy.deepcopy(e)  # no reset yet: the player is only in the opponents list and the arguments
    assert clone.opponents == [player] and clone.opponents[0] is player
    clone.reset(seed=0)
    assert clone.aec.cpu_seats() == {"player_1": player} and e.game is None
    clone.step(first_legal(clone))
    assert clone.game.ply == 2


@pytest.mark.parametrize("spec", ["random", "greedy:noise=0.5"])
def test_check_env_passes_with_a_bot_object_as_the_opponent(spec: str) -> None:
    """reset(seed=...) reseeds opponent objects (the project's bots have ``reseed``): check_env's determinism
    check failed with ``opponents=make_player("random", 0)``, which the env could not reseed."""
    from agents.registry import make_player

    check_env(gymnasium.make(GYM_ID, num_players=2, seat=1, opponents=make_player(spec, 0)).unwrapped,
              skip_render_check=False)
    env = HalmaEnv(num_players=2, opponents=make_player(spec, 0), move_limit=40)

    def episode() -> list:
        env.reset(seed=5)
        rng = random.Random(0)
        done = False
        while not done:
            mask = env.action_masks()
            _, _, terminated, truncated, _ = env.step(rng.choice(np.flatnonzero(mask).tolist()))
            done = terminated or truncated
        return list(env.unwrapped.game.moves)

    assert episode() == episode()


def test_a_position_whose_cpu_move_decides_the_learner_s_place_is_refused_by_reset() -> None:
    """reset() returned an episode already over (an all-zero mask, place 2) and the first step() then said
    "the episode is over", the learner's -1 never returned to it."""
    from tests.engine_helpers import position

    pieces = {h: "0" for h in (0, 1, 2, 3, 4, 5, 7, 8, 9, 14)}  # seat 0: 14-6 finishes it
    pieces.update({h: "1" for h in range(56, 66)})  # seat 1, the learner: mid-board
    text = position("star", 2, pieces, to_move=0)

    def finisher(game):
        moves = game.legal_moves()
        return next((m for m in moves if (m.src, m.dst) == (14, 6)), moves[0])

    e = HalmaEnv(num_players=2, seat=1, opponents=finisher)
    with pytest.raises(ValueError, match=r"^the learner's seat 1 has its place \(2\) decided before its first move "
                                         r"\(end reason finished\): options\['position'\] must leave it a move"):
        e.reset(seed=0, options={"position": text})
    with pytest.raises(RuntimeError, match="call reset"):
        e.step(0)
    obs, info = e.reset(seed=0)  # the start position: a game again
    assert obs["action_mask"].any() and info["place"] == 0


# --- CPU players of another game -------------------------------------------------------------

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
STAR2_CHECKPOINT = str(_ROOT / "agents" / "checkpoints" / "star2.pt")  # a star-2 policy (torch)
STAR2_EXPORT = str(_ROOT / "agents" / "ladder" / "star-2-star2.onnx")  # its exported model (no torch needed)


def test_an_opponent_of_another_game_is_refused_at_the_first_reset() -> None:
    """Where unknown names are (the first reset), with the seat, not at the opponent's first move."""
    pytest.importorskip("torch")
    e = gymnasium.make(GYM_ID, num_players=3, opponents=STAR2_CHECKPOINT, move_limit=60)
    with pytest.raises(ValueError, match=r"^opponents: seat 1: player '.*star2\.pt' cannot play star with 3 seats: "
                                         r"policy:star2 plays star with 2 seats, not star with 3$"):
        e.reset(seed=0)
    assert e.unwrapped.game is None and e.unwrapped.aec.cpu_seats() == {}
    e = gymnasium.make(GYM_ID, variant="diamond", opponents=[STAR2_EXPORT], move_limit=60)
    with pytest.raises(ValueError, match=r"^opponents: seat 1: player '.*star-2-star2\.onnx' cannot play diamond "
                                         r"with 2 seats: .*exported for star with 2 seats"):
        e.reset(seed=0)
    e = HalmaEnv(opponents=STAR2_CHECKPOINT, move_limit=60)  # its own game: taken, and it plays
    e.reset(seed=0)
    e.step(int(e.action_masks().argmax()))
    assert e.game.ply == 2


def test_a_reset_that_meets_a_refused_opponent_changes_nothing() -> None:
    """With a drawn seat, a bad opponent of one seat is met at the reset that first hands it that seat:
    the episode in progress, the seat and the env's generator stay as they were."""
    from gymnasium.utils import seeding

    def seed_drawing(seat: int) -> int:
        return next(s for s in range(100) if int(seeding.np_random(s)[0].integers(3)) == seat)

    e = HalmaEnv(num_players=3, seat=None, opponents={1: STAR2_EXPORT, 2: "greedy"}, move_limit=60)
    e.reset(seed=seed_drawing(1))  # the learner plays seat 1: the bad opponent is not used
    assert e.seat == 1
    e.step(int(e.action_masks().argmax()))
    aec = e.aec
    before = (aec.game.position(), aec.game.ply, list(aec.agents), aec.agent_selection, aec.cpu_seats(),
              e.np_random.bit_generator.state, e.seat)
    with pytest.raises(ValueError, match="^opponents: seat 1: player .* cannot play star with 3 seats"):
        e.reset(seed=seed_drawing(0))
    assert (aec.game.position(), aec.game.ply, list(aec.agents), aec.agent_selection, aec.cpu_seats(),
            e.np_random.bit_generator.state, e.seat) == before
    e.step(int(e.action_masks().argmax()))  # the episode goes on


@pytest.mark.parametrize("options, error", [
    ({"position": "star 2 garbage 0"}, "board field"),
    ({"position": halma_env.Game(halma_env.Rules("star", 2)).position()},
     "position is star with 2 seats, but this env plays star with 3"),
    ("position", "options must be a dict or None"),
])
def test_a_reset_with_refused_options_changes_nothing(options: object, error: str) -> None:
    """With a drawn seat, a reset whose options were refused had already handed the seats round: the episode
    in progress was gone (step: "call reset() before step()"), the learner's seat moved and the env's generator
    had drawn it.  The options are read first now."""
    e = HalmaEnv(num_players=3, seat=None, move_limit=60)
    e.reset(seed=1)
    e.step(int(e.action_masks().argmax()))
    aec = e.aec
    before = (aec.game.position(), list(aec.agents), aec.agent_selection, aec.cpu_seats(),
              e.np_random.bit_generator.state, e.seat)
    for _ in range(3):
        with pytest.raises((ValueError, TypeError), match=error):
            e.reset(options=options)
    assert (aec.game.position(), list(aec.agents), aec.agent_selection, aec.cpu_seats(),
            e.np_random.bit_generator.state, e.seat) == before
    e.step(int(e.action_masks().argmax()))  # the episode goes on


def test_a_seat_or_illegal_reward_of_the_wrong_type_is_a_type_error() -> None:
    """``seat=True`` (seat 1 by bool's int value) and ``seat=1.0`` were a ``ValueError`` like ``seat=5``, and a
    text ``illegal_reward`` like NaN: the wrong type is a ``TypeError``, a value out of range a ``ValueError``;
    numpy's integers are seats (as ``np_random`` draws them)."""
    for bad in (True, 1.0, "1", [1]):
        with pytest.raises(TypeError, match="seat must be a seat 0..1 or None"):
            HalmaEnv(seat=bad)
    for bad in (2, -1):
        with pytest.raises(ValueError, match=f"seat must be a seat 0..1 or None .*, got {bad}") as caught:
            HalmaEnv(seat=bad)
        assert not isinstance(caught.value, TypeError)
    assert HalmaEnv(seat=np.int64(1)).fixed_seat == 1 and type(HalmaEnv(seat=np.int64(1)).fixed_seat) is int
    for bad in ("x", True, None):
        with pytest.raises(TypeError, match="illegal_reward must be a finite number"):
            HalmaEnv(illegal_reward=bad)
    for seed in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="seed must be an integer or None"):
            HalmaEnv().reset(seed=seed)
    HalmaEnv().reset(seed=np.int64(3))


def test_opponents_as_any_mapping_pickle() -> None:
    """A ``MappingProxyType`` of opponents played, but the env could not be pickled (``cannot pickle
    'mappingproxy'``): it is read as a dict, as raw_env's opponents are."""
    import pickle
    from types import MappingProxyType

    env = HalmaEnv(num_players=3, seat=0, opponents=MappingProxyType({1: "greedy", "player_2": "random"}))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.opponents == env.opponents == {1: "greedy", 2: "random"}
    obs, _ = clone.reset(seed=1)
    assert obs["action_mask"].any()
