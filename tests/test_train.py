"""Self-play PPO: config strictness, checkpoints, per-seat rollouts, determinism, resume, a tiny run."""

from __future__ import annotations

import copy
import glob
import json
import math
import os
import pickle
import platform
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import agents.ppo
from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.config import TrainConfig, apply_overrides, default_dict, dump_yaml, from_dict, load_config
from agents.imitation import Demonstrations
from agents.network import Diverged
from agents.ppo import CROSSING_SAMPLE, RolloutBuffer, Trainer, keep_freed_memory
from halma_env import Game, Rules
from halma_env.encoding import ENCODING_VERSION, encoding

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(glob.glob(str(ROOT / "configs" / "*.yaml")))


def tiny_config(**changes) -> dict:
    """A config that trains a few updates in seconds (self-play and snapshots only: no bots needed)."""
    data = default_dict()
    data["name"] = "tiny"
    data["seed"] = 3
    data["torch_threads"] = 1
    data["env"].update(num_envs=4, engine="scalar")
    data["game"].update(move_limit=40)
    data["ppo"].update(total_steps=4 * 16 * 3, num_steps=16, num_minibatches=2, update_epochs=2)
    data["network"].update(channels=8, blocks=1, pair_dim=8, value_hidden=8)
    data["pool"].update(self_prob=0.5, snapshot_prob=0.5, bot_prob=0.0, bots=[], snapshot_every=1, max_snapshots=2)
    data["eval"].update(every=0, games=0, final_games=0)
    data["checkpoint"].update(every=1, keep=2)
    data["log"].update(progress_bar=False, tensorboard=True, status_every=1e9)
    for key, value in changes.items():
        section, name = key.split("__")
        data[section][name] = value
    return data


def quiet(_: str) -> None:
    pass


# --- config ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CONFIGS, ids=[os.path.basename(p) for p in CONFIGS])
def test_shipped_configs_load(path: str) -> None:
    cfg = load_config(path)
    assert cfg.game.rules().num_players == cfg.game.num_players


def test_required_configs_exist() -> None:
    names = {os.path.basename(p) for p in CONFIGS}
    assert {"quickstart.yaml", "star2.yaml", "star3.yaml", "star4.yaml", "star6.yaml", "diamond2.yaml",
            "diamond3.yaml", "halma16_2.yaml"} <= names


def test_unknown_key_is_named(tmp_path: Path) -> None:
    data = default_dict()
    data["ppo"]["learnin_rate"] = 0.1
    with pytest.raises(ValueError, match=r"ppo\.learnin_rate"):
        from_dict(data)
    data = default_dict()
    data["optimiser"] = {}
    with pytest.raises(ValueError, match="optimiser"):
        from_dict(data)
    path = tmp_path / "bad.yaml"
    data = default_dict()
    data["network"]["chanels"] = 4
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match=r"network\.chanels"):
        load_config(path)


def test_missing_key_is_named() -> None:
    data = default_dict()
    del data["ppo"]["gamma"]
    with pytest.raises(ValueError, match=r"missing key\(s\) ppo\.gamma"):
        from_dict(data)
    data = default_dict()
    del data["pool"]
    with pytest.raises(ValueError, match="missing key.*pool"):
        from_dict(data)


def test_a_partial_config_names_its_typo_before_what_it_leaves_out() -> None:
    """A config of only the keys someone meant to change was told "missing key(s) name, seed, game, ..." and
    nothing of the typo in what it gave: the typo comes first now, and the missing list says what to do."""
    with pytest.raises(ValueError, match=r"^ppo: unknown key\(s\) ppo\.total_stepz "
                                         r"\(did you mean 'ppo\.total_steps'\?\)"):
        from_dict({"ppo": {"total_stepz": 100}, "seed": 1})
    with pytest.raises(ValueError, match=r"^config: missing key\(s\) name, game, .*; every key is required: "
                                         r"start from a shipped config \(halma train quickstart "
                                         r"--print-config > my\.yaml\)"):
        from_dict({"ppo": default_dict()["ppo"], "seed": 1})
    data = default_dict()
    del data["init_from"]  # one key left out: its name is the whole message
    with pytest.raises(ValueError, match=r"^config: missing key\(s\) init_from$"):
        from_dict(data)


def test_wrong_types_and_values_are_named() -> None:
    for section, key, value, pattern in [
        ("ppo", "num_steps", 1.5, r"ppo\.num_steps: expected an integer"),
        ("ppo", "anneal_lr", "yes", r"ppo\.anneal_lr: expected true or false"),
        ("game", "variant", "chess", "unknown variant"),
        ("game", "num_players", 5, "seats"),  # diamond below
        ("pool", "self_prob", 0.9, "must be 1"),
        ("env", "engine", "gpu", "env.engine"),
    ]:
        data = default_dict()
        data[section][key] = value
        if section == "game" and key == "num_players":
            data["game"]["variant"] = "diamond"
        with pytest.raises(ValueError, match=pattern):
            from_dict(data)


def test_values_that_mean_nothing_are_refused() -> None:
    for override, pattern in [
        ("pool.self_prob=.nan", r"pool\.self_prob: expected a finite number, got nan"),
        ("ppo.ent_coef=.inf", r"ppo\.ent_coef: expected a finite number"),
        ("game.progress_shaping=.nan", r"game\.progress_shaping: expected a finite"),
        ("ppo.target_kl=0", r"ppo\.target_kl must be > 0"),
        ("ppo.total_steps=1", r"ppo\.total_steps \(1\) is less than one update.*2048 steps"),
        ("ppo.num_minibatches=100000", r"ppo\.num_minibatches \(100000\) must be at most the 2048 steps"),
        ("eval.opponents=[]", r"eval\.opponents is empty"),
        ("eval.final_opponents=[]", r"eval\.final_opponents is empty"),
        ("init_from=/tmp", r"init_from: '/tmp' is a directory"),
        ("game.move_limit=0", r"^game: move_limit must be at least 1"),  # Rules' message, said to be game.'s
    ]:
        with pytest.raises(ValueError, match=pattern):
            from_dict(apply_overrides(default_dict(), [override]))


def test_config_files_that_are_not_configs_are_named(tmp_path: Path) -> None:
    twice = tmp_path / "twice.yaml"
    twice.write_text(yaml.safe_dump(default_dict()) + "seed: 7\n")
    with pytest.raises(ValueError, match=r"twice\.yaml.*key 'seed' is given twice"):
        load_config(twice)
    numbered = tmp_path / "numbered.yaml"
    numbered.write_text(yaml.safe_dump(default_dict()) + "1: x\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) 1;"):
        load_config(numbered)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(128, 256)))
    with pytest.raises(ValueError, match=r"binary\.yaml' is not UTF-8 text"):
        load_config(binary)
    with pytest.raises(ValueError, match="is a directory"):
        load_config(tmp_path)
    with pytest.raises(ValueError, match="given twice"):
        apply_overrides(default_dict(), ["pool.bots={a: 1, a: 2}"])


def test_overrides() -> None:
    data = default_dict()
    out = apply_overrides(data, ["ppo.learning_rate=3e-4", "pool.bots=[random]", "game.move_limit=null", "seed=7"])
    cfg = from_dict(out)
    assert cfg.ppo.learning_rate == 3e-4 and cfg.pool.bots == ["random"] and cfg.game.move_limit is None
    assert cfg.seed == 7
    assert data["ppo"]["learning_rate"] != 3e-4  # the input is not changed
    with pytest.raises(ValueError, match="unknown key 'ppo.learnin_rate'"):
        apply_overrides(data, ["ppo.learnin_rate=1"])
    with pytest.raises(ValueError, match="unknown key 'optim'"):
        apply_overrides(data, ["optim.lr=1"])
    with pytest.raises(ValueError, match="key=value"):
        apply_overrides(data, ["ppo.learning_rate"])
    with pytest.raises(ValueError, match=r"ppo\.update_epochs: expected an integer"):
        from_dict(apply_overrides(data, ["ppo.update_epochs=two"]))


# --- checkpoints -------------------------------------------------------------------------


def _payload(**changes) -> dict:
    network = {"channels": 4, "attention_layers": 0, "reach_features": False}
    data = {"variant": "star", "num_players": 2, "network": network, "model": {"w": torch.ones(2)}}
    data.update(changes)
    return data


def test_checkpoint_round_trip_and_atomic(tmp_path: Path) -> None:
    path = tmp_path / "ck" / "a.pt"
    save_checkpoint(path, _payload(global_step=5))
    save_checkpoint(path, _payload(global_step=6))  # replaces in place
    assert sorted(os.listdir(path.parent)) == ["a.pt"]  # no temporary file left behind
    data = load_checkpoint(path, variant="star", num_players=2, network={"channels": 4, "attention_layers": 0,
                                                                              "reach_features": False})
    assert data["global_step"] == 6 and torch.equal(data["model"]["w"], torch.ones(2))


def test_failed_save_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "a.pt"
    save_checkpoint(path, _payload(global_step=1))
    with pytest.raises((AttributeError, TypeError, pickle.PicklingError)):
        save_checkpoint(path, _payload(global_step=2, bad=lambda: 0))  # cannot be pickled
    assert load_checkpoint(path)["global_step"] == 1
    assert os.listdir(tmp_path) == ["a.pt"]


def test_corrupt_and_incompatible_checkpoints(tmp_path: Path) -> None:
    good = tmp_path / "good.pt"
    save_checkpoint(good, _payload())
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:100])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    for bad in (truncated, garbage):
        with pytest.raises(CheckpointError, match="corrupt"):
            load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.ones(1)}, other)
    with pytest.raises(CheckpointError, match="not a halma_env checkpoint"):
        load_checkpoint(other)
    with pytest.raises(CheckpointError, match="variant 'star', not 'diamond'"):
        load_checkpoint(good, variant="diamond")
    with pytest.raises(CheckpointError, match="2 seats, not 3"):
        load_checkpoint(good, num_players=3)
    with pytest.raises(CheckpointError, match="network shape.*channels: checkpoint 4 vs config 8"):
        load_checkpoint(good, network={"channels": 8, "attention_layers": 0, "reach_features": False})
    old = tmp_path / "old.pt"
    data = torch.load(good, weights_only=True)
    data["encoding_version"] = 0
    torch.save(data, old)
    with pytest.raises(CheckpointError, match="encoding version 0"):
        load_checkpoint(old)
    data["encoding_version"] = ENCODING_VERSION
    data["network"] = [4]
    torch.save(data, old)
    with pytest.raises(CheckpointError, match="network entry of type list, not a mapping"):
        load_checkpoint(old)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format_version="1"), "has format version '1', this code reads version 1"),
        (lambda d: d.update(format_version=True), "has format version True"),
        (lambda d: d.update(encoding_version=str(ENCODING_VERSION)), "encoding version '"),
        (lambda d: d.update(variant="chess"), "unknown variant 'chess'; variants: star, diamond, halma16"),
        (lambda d: d.update(num_players=9), "has no game the engine plays: star is played by 1, 2, 3, 4, 5, 6 seats"),
        (lambda d: d.update(num_players="2"), "star is played by 1, 2, 3, 4, 5, 6 seats, not '2'"),
        (lambda d: d["network"].update(channels="4"), "has network.channels = '4' (str), expected int"),
        (lambda d: d["network"].update(reach_features=1), "network.reach_features = 1 (int), expected bool"),
        (lambda d: d.update(model=[1, 2]), "has a model entry of type list, not a state dict"),
    ],
)
def test_hand_edited_checkpoint_headers_are_named(tmp_path: Path, edit, message: str) -> None:
    path = tmp_path / "edited.pt"
    save_checkpoint(path, _payload())
    data = torch.load(path, weights_only=True)
    edit(data)
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        load_checkpoint(path)


def test_files_that_are_not_checkpoints_are_named(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="is a directory, not a checkpoint file"):
        load_checkpoint(tmp_path)
    text = tmp_path / "notes.pt"
    text.write_text("e" * 300)  # torch.load raised a bare KeyError on some text files
    with pytest.raises(CheckpointError, match="corrupt or not a checkpoint file"):
        load_checkpoint(text)


def test_checkpoints_from_before_attention_load_without_it() -> None:
    """Files written before ``network.attention_layers`` and ``network.reach_features`` existed (the
    shipped ones) read as 0 layers and no reach planes."""
    raw = torch.load(ROOT / "agents" / "checkpoints" / "star2.pt", weights_only=True)
    assert "attention_layers" not in raw["network"] and "reach_features" not in raw["network"]
    data = load_checkpoint(ROOT / "agents" / "checkpoints" / "star2.pt",
                           network={**raw["network"], "attention_layers": 0, "reach_features": False})
    assert data["network"]["attention_layers"] == 0 and data["network"]["reach_features"] is False
    with pytest.raises(CheckpointError, match="attention_layers: checkpoint 0 vs config 1"):
        load_checkpoint(ROOT / "agents" / "checkpoints" / "star2.pt",
                        network={**raw["network"], "attention_layers": 1, "reach_features": False})


# --- the opponent pool ----------------------------------------------------------------------


def test_tables_are_drawn_by_the_documented_scheme() -> None:
    """docs/training.md, "Self-play and the opponent pool": a table per game with probability
    self_prob / snapshot_prob / bot_prob (the snapshots' share going to the others until one exists),
    the learner's seat uniform, the snapshot and the bot uniform over the pool, each bot its own seed."""
    from agents.ppo import BOT, SELF, SNAPSHOT, Pool, Seating

    cfg = from_dict(tiny_config(game__num_players=3, pool__self_prob=0.5, pool__snapshot_prob=0.2,
                                pool__bot_prob=0.3, pool__bots=["random", "greedy"]))
    pool = Pool(bots=["random", "greedy"])
    seating = Seating(cfg, pool, np.random.default_rng(4), num_envs=1, rank=0)
    draws = 6000
    made_before = seating.bots_made  # the constructor drew the first table

    def tables() -> tuple[np.ndarray, list]:
        kinds, seats, opponents = np.zeros(draws, dtype=np.int64), np.zeros(draws, dtype=np.int64), []
        for i in range(draws):
            seating.draw(0)
            kinds[i], seats[i] = seating.kind[0], seating.learner_seat[0]
            opponents.append(seating.opponent[0])
        assert np.bincount(seats, minlength=3) / draws == pytest.approx([1 / 3] * 3, abs=0.03)
        return kinds, opponents

    kinds, opponents = tables()  # no snapshot yet: its 0.2 goes to the other two, 5 : 3
    assert np.bincount(kinds, minlength=3) / draws == pytest.approx([0.625, 0.0, 0.375], abs=0.03)
    bots = [o for k, o in zip(kinds, opponents) if k == BOT]
    assert all(o is None for k, o in zip(kinds, opponents) if k == SELF)
    assert sum(type(b).__name__ == "RandomBot" for b in bots) / len(bots) == pytest.approx(0.5, abs=0.05)
    assert seating.bots_made - made_before == len(bots) and len({b.seed for b in bots}) == len(bots)  # a seed each

    nets = {f"snap_{i}.pt": object() for i in range(4)}
    for path, net in nets.items():
        pool.add(path, net, max_snapshots=3)  # the oldest leaves beyond three
    assert pool.snapshot_paths == ["snap_1.pt", "snap_2.pt", "snap_3.pt"] and "snap_0.pt" not in pool.nets
    kinds, opponents = tables()
    assert np.bincount(kinds, minlength=3) / draws == pytest.approx([0.5, 0.2, 0.3], abs=0.03)
    snaps = [o for k, o in zip(kinds, opponents) if k == SNAPSHOT]
    assert all(net is nets[path] for path, net in snaps)  # the network itself: the pool may drop it mid-game
    counts = [sum(path == p for path, _ in snaps) / len(snaps) for p in pool.snapshot_paths]
    assert counts == pytest.approx([1 / 3] * 3, abs=0.05)

    only_snapshots = from_dict(tiny_config(pool__self_prob=0.0, pool__snapshot_prob=1.0, pool__bot_prob=0.0))
    first = Seating(only_snapshots, Pool(bots=[]), np.random.default_rng(0), num_envs=5, rank=0)
    assert first.kind.tolist() == [SELF] * 5  # self-play until the first snapshot exists


def test_each_bot_of_each_process_gets_its_own_documented_seed() -> None:
    """Bot k (counted from 1) made in process ``rank`` of a run seeded ``seed`` is seeded
    seed * 100003 + k + 1000 * u + 1000000007 * rank: reproducible, and distinct across processes, runs and
    the sessions of a resumed run (u, the update a session starts from: a resume made the first session's
    bots again, random streams and all)."""
    from agents.ppo import Pool, Seating

    cfg = from_dict(tiny_config(pool__self_prob=0.0, pool__snapshot_prob=0.0, pool__bot_prob=1.0,
                                pool__bots=["random"]))
    for rank, first_update in ((0, 0), (1, 0), (0, 7)):
        seating = Seating(cfg, Pool(bots=["random"]), np.random.default_rng(0), num_envs=3, rank=rank,
                          first_update=first_update)
        seating.draw(1)
        assert seating.bots_made == 4
        seeds = [bot.seed for bot in seating.opponent]
        # env 1 drew again: bot 4
        assert seeds == [3 * 100003 + k + 1000 * first_update + 1000000007 * rank for k in (1, 4, 3)]


def test_a_resumed_session_seeds_its_bots_from_the_update_it_starts_at(tmp_path: Path, monkeypatch) -> None:
    import agents.ppo

    made: list[int] = []
    make_bot = agents.ppo.make_bot
    monkeypatch.setattr(agents.ppo, "make_bot", lambda name, seed: made.append(seed) or make_bot(name, seed=seed))
    data = tiny_config(pool__self_prob=0.0, pool__snapshot_prob=0.0, pool__bot_prob=1.0, pool__bots=["random"],
                       ppo__total_steps=4 * 16 * 2)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    trainer.train()
    trainer.close()
    first = list(made)
    data["ppo"]["total_steps"] = 4 * 16 * 4
    made.clear()
    resumed = Trainer(from_dict(data), tmp_path / "run", resume=True, log=quiet)
    resumed.train()
    resumed.close()
    assert first[:4] == [3 * 100003 + k for k in (1, 2, 3, 4)]
    assert made[:4] == [3 * 100003 + 1000 * 2 + k for k in (1, 2, 3, 4)] and not set(made) & set(first)


def test_the_distillation_teacher_of_a_resumed_session_gets_its_own_seed(tmp_path: Path, monkeypatch) -> None:
    """It was seeded seed * 7 + 1 in every session and process: a resume replayed the first session's
    tie-breaks, which the pool's bots no longer did."""
    import agents.ppo

    made: list[tuple[str, int]] = []
    make_bot = agents.ppo.make_bot
    monkeypatch.setattr(agents.ppo, "make_bot",
                        lambda name, seed: made.append((name, seed)) or make_bot(name, seed=seed))
    data = tiny_config(ppo__total_steps=4 * 16 * 2)
    data["imitation"].update(bot="greedy", games=0, epochs=0, distill_coef=0.5)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    trainer.train()
    trainer.close()
    data["ppo"]["total_steps"] = 4 * 16 * 4
    resumed = Trainer(from_dict(data), tmp_path / "run", resume=True, log=quiet)
    resumed.train()
    resumed.close()
    teachers = [seed for name, seed in made if name == "greedy"]
    assert teachers == [3 * 7 + 1, 3 * 7 + 1 + 1000 * 2]  # a fresh run's as before; the resume's from its update


def test_who_moves_and_who_is_trained_follow_the_table() -> None:
    from agents.ppo import BOT, SELF, SNAPSHOT, Pool, Seating

    cfg = from_dict(tiny_config(game__num_players=3))
    seating = Seating(cfg, Pool(bots=[]), np.random.default_rng(0), num_envs=5, rank=0)
    a, b = object(), object()
    seating.kind[:] = [SELF, SNAPSHOT, BOT, SNAPSHOT, SNAPSHOT]
    seating.learner_seat[:] = [2, 1, 0, 2, 0]
    seating.opponent[1], seating.opponent[3], seating.opponent[4] = ("b.pt", b), ("a.pt", a), ("b.pt", b)
    mover = np.array([0, 1, 1, 0, 1])
    assert seating.learner_moves(mover).tolist() == [True, True, False, False, False]
    others = np.flatnonzero(~seating.learner_moves(mover))
    assert seating.snapshot_groups(others) == [(a, [3]), (b, [4])]  # one batch per snapshot, sorted by path
    assert seating.bot_rows(others) == [2]
    assert list(seating.trained_seats(0)) == [0, 1, 2] and seating.trained_seats(1) == [1]


# --- per-seat trajectories ---------------------------------------------------------------


def test_rollout_buffer_links_each_seat_and_delivers_final_rewards() -> None:
    """Two seats alternate in one environment; the game ends on seat 1's move."""
    buf = RolloutBuffer(None, num_players=2, num_envs=1)
    obs = torch.zeros(1, 121, 12, dtype=torch.int8)
    legal, valid = torch.zeros(1, 3, dtype=torch.int64), torch.ones(1, 3, dtype=torch.bool)

    def act(seat: int, value: float, rewards: list[float]) -> None:
        buf.add(np.array([0]), np.array([seat]), obs, legal, valid, torch.zeros(1, dtype=torch.int64),
                torch.zeros(1), torch.tensor([value]))
        buf.reward_all(np.array([rewards]))

    act(0, 0.1, [0.5, 0.0])  # t0 seat 0: shaping 0.5
    act(1, 0.2, [0.0, 0.25])  # t1 seat 1
    act(0, 0.3, [0.1, 0.0])  # t2 seat 0
    act(1, 0.4, [-1.0, 1.0])  # t3 seat 1 finishes: place rewards reach both seats' last transitions
    buf.end_game(0)
    act(0, 0.5, [0.0, 0.0])  # t4: a new game, still pending at the end of the rollout
    assert buf.next_index[:4] == [2, 3, -1, -1]
    assert buf.done[:4] == [False, False, True, True]
    assert buf.reward[:4] == pytest.approx([0.5, 0.25, 0.1 - 1.0, 1.0])
    carry = buf.finish()
    assert carry is not None and carry["where"] == [(0, 0)] and carry["reward"] == [0.0]
    gamma, lam = 0.9, 0.8
    out = buf.batch(gamma, lam, torch.device("cpu"))
    adv = out["adv"].numpy()
    assert len(adv) == 4  # the pending transition waits for the next rollout
    a2 = (0.1 - 1.0) - 0.3
    a3 = 1.0 - 0.4
    a0 = 0.5 + gamma * 0.3 - 0.1 + gamma * lam * a2
    a1 = 0.25 + gamma * 0.4 - 0.2 + gamma * lam * a3
    assert adv == pytest.approx([a0, a1, a2, a3], abs=1e-6)
    assert out["ret"].numpy() == pytest.approx(adv + np.array([0.1, 0.2, 0.3, 0.4]), abs=1e-6)
    # the carried transition is completed by the next rollout
    nxt = RolloutBuffer(carry, num_players=2, num_envs=1)
    nxt.add(np.array([0]), np.array([0]), obs, legal, valid, torch.zeros(1, dtype=torch.int64), torch.zeros(1),
            torch.tensor([0.7]))
    assert nxt.next_index[0] == 1


def test_rollout_buffer_gae_matches_per_seat_trajectories_across_two_rollouts() -> None:
    """Random play of 3 environments x 3 seats over two rollouts (games ending at random): the buffer's
    advantages and returns equal GAE computed along each (environment, seat) trajectory written out here;
    a decision still waiting for its seat's next one is carried, with its reward so far, into the next
    rollout (environment 0 sits idle in the second, so its carried decisions stay pending there); the
    other fields follow their decisions, and legal lists of several widths are padded."""
    rng = np.random.default_rng(11)
    gamma, lam, envs, seats = 0.9, 0.8, 3, 3
    carry = None
    pending: dict[tuple[int, int], dict] = {}  # the reference: each seat's latest decision
    value_of = iter(np.round(rng.normal(size=1000), 3).tolist())
    for rollout in range(2):
        buf = RolloutBuffer(carry, num_players=seats, num_envs=envs)
        assert len(buf) == len(pending)
        decisions = list(pending.values())  # in the carried order: where = sorted (env, seat)
        active = [0, 1, 2] if rollout == 0 else [1, 2]
        for _ply in range(16):
            movers = rng.permutation(active)[:2]  # two environments move this ply
            seat_of = rng.integers(0, seats, size=2)
            width = int(rng.integers(2, 6))
            values = [next(value_of) for _ in movers]
            slots = rng.integers(0, width, size=2)
            buf.add(movers, seat_of, torch.zeros(2, 1, 12, dtype=torch.int8), torch.arange(2 * width).view(2, width),
                    torch.ones(2, width, dtype=torch.bool), torch.as_tensor(slots), torch.zeros(2),
                    torch.tensor(values, dtype=torch.float32))
            for b, st, v, slot in zip(movers.tolist(), seat_of.tolist(), values, slots.tolist()):
                new = {"value": v, "reward": 0.0, "done": False, "next": None, "slot": slot, "width": width}
                if (b, st) in pending:
                    pending[(b, st)]["next"] = new
                pending[(b, st)] = new
                decisions.append(new)
            rewards = np.round(rng.normal(size=(envs, seats)), 2)
            buf.reward_all(rewards)
            for (b, st), dec in pending.items():
                dec["reward"] += float(rewards[b, st])
            for b in active:
                if rng.random() < 0.08:
                    buf.end_game(b)
                    for st in range(seats):
                        if (b, st) in pending:
                            pending.pop((b, st))["done"] = True
        carry = buf.finish()
        out = buf.batch(gamma, lam, torch.device("cpu"))

        def complete(dec: dict) -> bool:
            return dec["done"] or dec["next"] is not None

        def advantage(dec: dict) -> float:
            if dec["done"]:
                return dec["reward"] - dec["value"]
            nxt = dec["next"]
            delta = dec["reward"] + gamma * nxt["value"] - dec["value"]
            return delta + gamma * lam * (advantage(nxt) if complete(nxt) else 0.0)

        done_here = [dec for dec in decisions if complete(dec)]
        assert len(out["adv"]) == len(done_here) > 10, rollout
        # both kinds of completed decision, and both kinds of follower, occur in both rollouts
        assert any(dec["done"] for dec in done_here) and any(not dec["done"] for dec in done_here)
        assert any(dec["next"] is not None and not complete(dec["next"]) for dec in done_here)
        expected = [advantage(dec) for dec in done_here]
        assert out["adv"].numpy() == pytest.approx(expected, abs=1e-5)
        assert out["value"].numpy() == pytest.approx([dec["value"] for dec in done_here], abs=1e-6)
        assert out["ret"].numpy() == pytest.approx(np.add(expected, [dec["value"] for dec in done_here]), abs=1e-5)
        assert out["slot"].tolist() == [dec["slot"] for dec in done_here]
        assert out["teacher"].tolist() == [-1] * len(done_here)  # no imitation bot: no teacher's move
        assert out["legal"].shape[1] == max(dec["width"] for dec in decisions)
        assert out["valid"].sum(1).tolist() == [dec["width"] for dec in done_here]
        assert carry is not None and carry["where"] == sorted(pending)
        assert carry["reward"] == pytest.approx([pending[k]["reward"] for k in sorted(pending)])
        assert carry["where"][0][0] == 0  # environment 0's decision is carried first (index 0 next time)
        pending = {k: pending[k] for k in sorted(pending)}
    # every game ends before anyone moves again: the carried decisions are all terminal, nothing is carried on
    last = RolloutBuffer(carry, num_players=seats, num_envs=envs)
    for b in range(envs):
        last.end_game(b)
    assert last.finish() is None
    out = last.batch(gamma, lam, torch.device("cpu"))
    assert out["adv"].numpy() == pytest.approx([dec["reward"] - dec["value"] for dec in pending.values()], abs=1e-5)


def _learner_batch(trainer: Trainer, plies: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """Decisions from ``plies`` plies of random play, with made-up old log-probabilities, values,
    advantages and returns far enough from the network's own that the ratio and value clips bite."""
    from agents.ppo import make_env

    env = make_env(trainer.cfg, torch.device("cpu"), seed=0)
    parts: dict[str, list[torch.Tensor]] = {"obs": [], "legal": [], "valid": []}
    for _ in range(plies):
        legal, valid = env.legal_lists()
        parts["obs"].append(env.observation())
        parts["legal"].append(legal)
        parts["valid"].append(valid)
        slot = torch.multinomial(valid.float(), 1, generator=generator).squeeze(1)
        env.step(legal.gather(1, slot[:, None]).squeeze(1))
    width = max(x.shape[1] for x in parts["legal"])
    d = {"obs": torch.cat(parts["obs"]),
         "legal": torch.cat([torch.nn.functional.pad(x, (0, width - x.shape[1])) for x in parts["legal"]]),
         "valid": torch.cat([torch.nn.functional.pad(x, (0, width - x.shape[1])) for x in parts["valid"]])}
    size = len(d["obs"])
    with torch.no_grad():
        logits, value = trainer.net(d["obs"], d["legal"], d["valid"])
    d["slot"] = torch.multinomial(d["valid"].float(), 1, generator=generator).squeeze(1)
    logp = torch.log_softmax(logits, -1).gather(1, d["slot"][:, None]).squeeze(1)
    d["logp"] = logp + 0.4 * torch.randn(size, generator=generator)
    d["value"] = value + 0.4 * torch.randn(size, generator=generator)
    d["adv"] = torch.randn(size, generator=generator)
    d["ret"] = d["value"] + torch.randn(size, generator=generator)
    d["teacher"] = torch.where(torch.rand(size, generator=generator) < 0.5, d["slot"], torch.full_like(d["slot"], -1))
    return d


def _cleanrl_update(net: torch.nn.Module, d: dict[str, torch.Tensor], ppo, distill: float, rng: np.random.Generator,
                    crossing: tuple[float, Demonstrations, int] | None = None) -> dict[str, float]:
    """CleanRL's PPO update written out term by term: epochs of shuffled minibatches, the clipped
    surrogate on (normalised) advantages, the (clipped) value loss, the entropy bonus, the distillation
    term, the crossing term (``crossing``: its weight, the planner's positions and how many of them are
    the main line), gradient-norm clipping and Adam, stopping early past ``target_kl``.  The last
    minibatch's figures."""
    optimizer = torch.optim.Adam(net.parameters(), lr=ppo.learning_rate, eps=1e-5)
    size = len(d["adv"])
    mb_size = -(-size // ppo.num_minibatches)
    c = ppo.clip_coef
    clipfracs = []
    for _ in range(ppo.update_epochs):
        order = torch.as_tensor(rng.permutation(size))
        for start in range(0, size, mb_size):
            mb = order[start:start + mb_size]
            logits, newvalue = net(d["obs"][mb], d["legal"][mb], d["valid"][mb])
            dist = torch.distributions.Categorical(logits=logits)
            logratio = dist.log_prob(d["slot"][mb]) - d["logp"][mb]
            ratio = logratio.exp()
            adv = d["adv"][mb]
            if ppo.norm_adv and len(mb) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - c, 1 + c)).mean()
            ret, old_v = d["ret"][mb], d["value"][mb]
            if ppo.clip_vloss:
                v_clipped = old_v + torch.clamp(newvalue - old_v, -c, c)
                v_loss = 0.5 * torch.max((newvalue - ret) ** 2, (v_clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - ret) ** 2).mean()
            entropy = dist.entropy().mean()
            loss = pg_loss - ppo.ent_coef * entropy + ppo.vf_coef * v_loss
            taught = d["teacher"][mb] >= 0
            distill_loss = torch.tensor(0.0)
            if distill and taught.any():  # no annealing inside one update: the learning rate is the config's
                distill_loss = torch.nn.functional.cross_entropy(logits[taught], d["teacher"][mb][taught])
                loss = loss + distill * distill_loss
            crossing_loss = torch.tensor(0.0)
            if crossing is not None:  # every main-line position and a sample of the detours', drawn after the order
                coef, demos, main = crossing
                rows = np.concatenate([np.arange(main), main + rng.permutation(len(demos) - main)[:CROSSING_SAMPLE]])
                demo_logits, _ = net(demos.obs[rows], demos.legal[rows], demos.valid[rows])
                crossing_loss = torch.nn.functional.cross_entropy(demo_logits, demos.choice[rows])
                loss = loss + coef * crossing_loss
            approx_kl = ((ratio - 1) - logratio).mean()
            clipfracs.append(((ratio - 1).abs() > c).float().mean().item())
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), ppo.max_grad_norm)
            optimizer.step()
        if ppo.target_kl is not None and approx_kl > ppo.target_kl:
            break
    return {"losses/policy_loss": pg_loss.item(), "losses/value_loss": v_loss.item(),
            "losses/entropy": entropy.item(), "losses/approx_kl": approx_kl.item(),
            "losses/old_approx_kl": (-logratio).mean().item(), "losses/clipfrac": float(np.mean(clipfracs)),
            "losses/distill": distill_loss.item(), "losses/crossing": crossing_loss.item(),
            "optimizer_steps": len(clipfracs)}


@pytest.mark.parametrize(
    ("ppo_changes", "distill", "crossing", "optimizer_steps"),
    [({}, 0.0, 0.0, 1),
     ({"norm_adv": False, "clip_vloss": False}, 0.0, 0.0, 1),
     ({"clip_vloss": False}, 0.7, 0.0, 1),
     ({"norm_adv": False}, 0.0, 0.4, 1),
     ({"num_minibatches": 3, "update_epochs": 2}, 0.3, 0.5, 6),  # 16 decisions: minibatches of 6, 6 and 4
     ({"num_minibatches": 2, "update_epochs": 4, "target_kl": 0.02}, 0.0, 0.0, 2),  # stops after the first epoch
     ({"num_minibatches": 8, "update_epochs": 1}, 0.4, 0.0, 8),  # two decisions each: normalised
     ({"num_minibatches": 16, "update_epochs": 1}, 0.6, 0.0, 16)],  # one decision each: no normalisation
)
def test_a_ppo_update_matches_the_cleanrl_loss_written_out(tmp_path: Path, ppo_changes: dict, distill: float,
                                                           crossing: float, optimizer_steps: int) -> None:
    """The reported losses and the weights after the update are those of ``_cleanrl_update``."""
    changes = {"ppo__update_epochs": 1, "ppo__num_minibatches": 1, "ppo__clip_coef": 0.2, "ppo__ent_coef": 0.05,
               "ppo__vf_coef": 0.7, "ppo__max_grad_norm": 0.3, **{f"ppo__{k}": v for k, v in ppo_changes.items()}}
    if distill:
        changes.update(imitation__bot="greedy", imitation__distill_coef=distill)
    trainer = Trainer(from_dict(tiny_config(**changes)), tmp_path / "run", log=quiet)
    generator = torch.Generator().manual_seed(5)
    d = _learner_batch(trainer, plies=4, generator=generator)
    assert len(d["adv"]) == 16
    d["teacher"][:2] = torch.tensor([0, -1])  # the bot's move may be the first of the list; or there is none
    if ppo_changes.get("num_minibatches") == 8:
        d["ret"][:] = 0.25  # every return alike: the explained variance is undefined (nan)
        d["teacher"][:] = -1  # no bot's move anywhere: no distillation term (0, not the nan of an empty mean)
    planned = None
    if crossing:  # the planner's positions: 5 on the main line, 75 detour positions (more than a sample)
        demos = _learner_batch(trainer, plies=20, generator=generator)
        trainer.cfg.crossing.coef = crossing
        trainer.crossing_demos = Demonstrations(demos["obs"], demos["legal"], demos["valid"], demos["slot"],
                                                demos["ret"], torch.zeros(80, dtype=torch.int64))
        trainer.crossing_main_rows = 5
        planned = (crossing, trainer.crossing_demos, 5)
    reference = copy.deepcopy(trainer.net)
    expected = _cleanrl_update(reference, d, trainer.cfg.ppo, distill, copy.deepcopy(trainer.np_rng), planned)
    assert expected["optimizer_steps"] == optimizer_steps
    assert 0.02 < expected["losses/clipfrac"] < 0.98, "the batch must exercise the ratio clip"

    before = copy.deepcopy(trainer.net.state_dict())
    stats = trainer._ppo_update(d)
    for key, value in expected.items():
        if key != "optimizer_steps":
            assert stats[key] == pytest.approx(value, abs=1e-5), key
    assert stats["charts/distill_coef"] == pytest.approx(distill)
    assert stats["charts/transitions"] == len(d["adv"])
    y, y_pred = d["ret"].numpy(), d["value"].numpy()
    explained = np.nan if np.var(y) == 0 else 1 - np.var(y - y_pred) / np.var(y)
    assert stats["losses/explained_variance"] == pytest.approx(explained, rel=1e-5, nan_ok=True)
    # Adam moves a weight by up to the learning rate (1e-3) per step; one whose true gradient is 0
    # (dst_bias.bias shifts every logit alike, which the softmax ignores) moves by rounding noise alone
    moved = max((param - before[name]).abs().max().item() for name, param in trainer.net.state_dict().items())
    assert moved > 5e-4 and trainer.cfg.ppo.learning_rate == 1e-3
    for name, param in trainer.net.state_dict().items():
        torch.testing.assert_close(param, reference.state_dict()[name], atol=1e-5 * optimizer_steps, rtol=0,
                                   msg=name)


def test_an_update_without_decisions_changes_nothing(tmp_path: Path) -> None:
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    before = copy.deepcopy(trainer.net.state_dict())
    empty = RolloutBuffer(None, num_players=2, num_envs=1)
    empty.finish()
    assert trainer._ppo_update(empty.batch(0.9, 0.9, torch.device("cpu"))) == {}
    for name, param in trainer.net.state_dict().items():
        assert torch.equal(param, before[name]), name


# --- training runs -----------------------------------------------------------------------


def _weights(trainer: Trainer) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in trainer.net.state_dict().items()}


def test_tiny_run_writes_the_run_directory(tmp_path: Path) -> None:
    cfg = from_dict(tiny_config())
    trainer = Trainer(cfg, tmp_path / "tiny", log=quiet)
    stats = trainer.train()
    trainer.close()
    run = tmp_path / "tiny"
    assert (run / "config.yaml").is_file()
    assert load_config(run / "config.yaml").to_dict() == cfg.to_dict()
    assert glob.glob(str(run / "tb" / "events.out.tfevents.*"))
    assert (run / "checkpoints" / "last.pt").is_file()
    assert len(glob.glob(str(run / "checkpoints" / "update_*.pt"))) == 2  # keep=2
    assert len(glob.glob(str(run / "snapshots" / "snap_*.pt"))) == 3
    assert trainer.global_step == 3 * 4 * 16 and trainer.update == 3
    for key in ("losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
                "losses/explained_variance", "charts/learning_rate", "charts/SPS"):
        assert key in stats
    data = load_checkpoint(run / "checkpoints" / "last.pt", variant="star", num_players=2)
    assert {"optimizer", "rng", "config", "global_step"} <= set(data)


def test_stop_ends_the_run_after_the_update_it_answers_true(tmp_path: Path) -> None:
    """``train(stop=...)`` is asked after every update (``halma bench train`` times one run this way)."""
    asked: list[int] = []
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=4 * 16 * 10)), tmp_path / "tiny", log=quiet)

    def stop() -> bool:
        asked.append(trainer.update)
        return trainer.update == 2

    trainer.train(stop=stop)
    trainer.close()
    assert asked == [1, 2] and trainer.update == 2 and trainer.global_step == 2 * 4 * 16


def test_keep_freed_memory_is_taken_by_glibc_and_left_to_the_commands(tmp_path: Path, monkeypatch) -> None:
    # glibc's mallopt answers 1 for each setting it takes; another C library is left alone
    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")
    # a Trainer in someone's notebook leaves their malloc as it is (its process would never shrink after its
    # peak again, also from work that is not training); halma train and halma bench train ask for it
    calls: list[bool] = []
    monkeypatch.setattr(agents.ppo, "keep_freed_memory", lambda: calls.append(True) or True)
    Trainer(from_dict(tiny_config()), tmp_path / "tiny", log=quiet).close()
    assert calls == []
    from agents.train import bench_config, bench_loop

    bench_loop(0, 1, bench_config(seed=1), seconds=0.0)
    assert calls == [True]


def test_same_seed_same_weights(tmp_path: Path) -> None:
    weights = []
    for i in range(2):
        trainer = Trainer(from_dict(tiny_config()), tmp_path / f"r{i}", log=quiet)
        trainer.train()
        trainer.close()
        weights.append(_weights(trainer))
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    trainer = Trainer(from_dict(dict(tiny_config(), seed=4)), tmp_path / "r2", log=quiet)
    trainer.train()
    trainer.close()
    assert not all(torch.equal(weights[0][k], _weights(trainer)[k]) for k in weights[0])


def test_resume_continues_the_run(tmp_path: Path) -> None:
    data = tiny_config()
    short = copy.deepcopy(data)
    short["ppo"]["total_steps"] = 4 * 16 * 2
    trainer = Trainer(from_dict(short), tmp_path / "tiny", log=quiet)
    trainer.train()
    trainer.close()
    before = _weights(trainer)
    with pytest.raises(ValueError, match="--resume"):
        Trainer(from_dict(data), tmp_path / "tiny", log=quiet)  # refuses to overwrite a run
    resumed = Trainer(from_dict(data), tmp_path / "tiny", resume=True, log=quiet)
    assert resumed.update == 2 and resumed.global_step == 2 * 4 * 16
    assert all(torch.equal(before[k], v) for k, v in _weights(resumed).items())
    assert resumed.optimizer.state_dict()["state"]  # Adam moments restored
    assert len(resumed.pool.snapshot_paths) == 2
    resumed.train()
    resumed.close()
    assert resumed.update == 3 and resumed.global_step == 3 * 4 * 16
    with pytest.raises(ValueError, match="no checkpoint"):
        Trainer(from_dict(data), tmp_path / "other", resume=True, log=quiet)
    wider = copy.deepcopy(data)
    wider["network"]["channels"] = 16
    with pytest.raises(CheckpointError, match="network shape"):
        Trainer(from_dict(wider), tmp_path / "tiny", resume=True, log=quiet)
    (tmp_path / "tiny" / "checkpoints" / "last.pt").write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="corrupt"):
        Trainer(from_dict(data), tmp_path / "tiny", resume=True, log=quiet)


def test_init_from_starts_a_fresh_run_from_a_checkpoints_weights(tmp_path: Path) -> None:
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "first", log=quiet)
    trainer.train()
    trainer.close()
    trained = _weights(trainer)
    source = str(tmp_path / "first" / "checkpoints" / "last.pt")
    tuned = Trainer(from_dict(dict(tiny_config(), init_from=source)), tmp_path / "tuned", log=quiet)
    assert all(torch.equal(trained[k], v) for k, v in _weights(tuned).items())
    assert tuned.update == 0 and tuned.global_step == 0 and not tuned.optimizer.state_dict()["state"]
    fresh = Trainer(from_dict(tiny_config()), tmp_path / "fresh", log=quiet)
    assert not all(torch.equal(trained[k], v) for k, v in _weights(fresh).items())
    tuned.train()
    tuned.close()
    assert load_config(tmp_path / "tuned" / "config.yaml").init_from == source  # the run dir says where it began

    with pytest.raises(ValueError, match="init_from: checkpoint .*nowhere.pt.* does not exist"):
        from_dict(dict(tiny_config(), init_from=str(tmp_path / "nowhere.pt")))
    wider = tiny_config(network__channels=16)
    with pytest.raises(ValueError, match="init_from: .*different network shape"):
        Trainer(from_dict(dict(wider, init_from=source)), tmp_path / "wider", log=quiet)
    assert not (tmp_path / "wider").exists()  # nothing written for a run that cannot start
    diamond = tiny_config(game__variant="diamond")
    with pytest.raises(ValueError, match="init_from: .*variant 'star', not 'diamond'"):
        Trainer(from_dict(dict(diamond, init_from=source)), tmp_path / "diamond", log=quiet)
    imitating = tiny_config(imitation__bot="greedy", imitation__games=2, imitation__epochs=1)
    with pytest.raises(ValueError, match="init_from and imitation.games"):
        from_dict(dict(imitating, init_from=source))


def test_init_from_adds_attention_layers_as_the_identity(tmp_path: Path) -> None:
    """A config with more attention layers than the checkpoint starts from its exact play."""
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "first", log=quiet)
    trainer.train()
    trainer.close()
    source = str(tmp_path / "first" / "checkpoints" / "last.pt")
    widened = Trainer(from_dict(dict(tiny_config(network__attention_layers=1), init_from=source)),
                      tmp_path / "widened", log=quiet)
    assert len(widened.net.attention) == 1
    games = [Game(Rules("star", 2)) for _ in range(3)]
    enc = encoding("star", 2)
    obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in games]))
    mask = torch.from_numpy(np.stack([enc.action_mask(g) for g in games]).astype(bool))
    with torch.no_grad():
        assert torch.equal(trainer.net.dense_logits(obs, mask)[0], widened.net.dense_logits(obs, mask)[0])
    widened.train()  # and it trains: the new layer moves
    widened.close()
    assert widened.net.attention[0].out.weight.abs().sum() > 0
    both = tiny_config(network__attention_layers=1, network__channels=16)
    with pytest.raises(ValueError, match="init_from: .*different network shape.*channels: checkpoint 8 vs config 16"):
        Trainer(from_dict(dict(both, init_from=source)), tmp_path / "both", log=quiet)
    with pytest.raises(ValueError, match="network.attention_layers must be >= 0"):
        from_dict(tiny_config(network__attention_layers=-1))
    with pytest.raises(ValueError, match="network.channels must be divisible by 4 .* got 6"):
        from_dict(tiny_config(network__attention_layers=1, network__channels=6))


def test_init_from_adds_reach_features_at_zero_weight(tmp_path: Path) -> None:
    """A config asking for ``network.reach_features`` starts from a checkpoint without them, playing as it
    does (zero input weights on the new planes), and trains them; the other way round is refused."""
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "first", log=quiet)
    trainer.train()
    trainer.close()
    source = str(tmp_path / "first" / "checkpoints" / "last.pt")
    lines: list[str] = []
    widened = Trainer(from_dict(dict(tiny_config(network__reach_features=True), init_from=source)),
                      tmp_path / "widened", log=lines.append)
    assert "init_from: added reach features, starting as the checkpoint plays" in lines
    assert widened.net.reach is not None and torch.equal(widened.net.embed.weight[:, 12:], torch.zeros(8, 6))
    games = [Game(Rules("star", 2)) for _ in range(3)]
    for game in games[1:]:
        game.play(game.legal_moves()[5])
    enc = encoding("star", 2)
    obs = torch.from_numpy(np.stack([enc.observation(g, g.to_move) for g in games]))
    mask = torch.from_numpy(np.stack([enc.action_mask(g) for g in games]).astype(bool))
    with torch.no_grad():
        before, after = trainer.net.dense_logits(obs, mask)[0], widened.net.dense_logits(obs, mask)[0]
    assert torch.allclose(before, after, atol=1e-5) and torch.equal(before.argmax(-1), after.argmax(-1))
    widened.train()
    widened.close()
    assert widened.net.embed.weight[:, 12:].abs().sum() > 0  # the planes' weights moved
    reached = str(tmp_path / "widened" / "checkpoints" / "last.pt")
    with pytest.raises(ValueError, match="init_from: .*reach_features: checkpoint True vs config False"):
        Trainer(from_dict(dict(tiny_config(), init_from=reached)), tmp_path / "narrowed", log=quiet)
    with pytest.raises(ValueError, match="network.reach_features is for 2-seat games .* not 3 seats"):
        from_dict(tiny_config(network__reach_features=True, game__num_players=3))
    with pytest.raises(ValueError, match="network.reach_features needs a 2-seat game whose seats mirror"):
        from_dict(tiny_config(network__reach_features=True, game__variant="diamond"))


def test_snapshot_leaving_the_pool_mid_game(tmp_path: Path) -> None:
    """Games outlive rollouts; a snapshot dropped from the pool keeps playing the games it sits in."""
    data = tiny_config()
    data["pool"].update(self_prob=0.0, snapshot_prob=1.0, max_snapshots=1, snapshot_every=1)
    data["game"]["move_limit"] = 60
    data["ppo"]["total_steps"] = 4 * 16 * 5
    trainer = Trainer(from_dict(data), tmp_path / "pool", log=quiet)
    trainer.train()
    trainer.close()
    assert trainer.update == 5 and len(trainer.pool.snapshot_paths) == 1


def test_policy_player_plays_legal_moves(tmp_path: Path) -> None:
    from agents.policy import load_policy_player

    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=64)), tmp_path / "tiny", log=quiet)
    trainer.train()
    trainer.close()
    path = tmp_path / "tiny" / "checkpoints" / "last.pt"
    player = load_policy_player(path, seed=0)
    game = Game(Rules("star", 2))
    for _ in range(6):
        move = player.select_move(game)
        assert move in game.legal_moves()
        game.play(move)
    sampler = load_policy_player(path, seed=0, temperature=1.0)
    assert sampler.select_move(game) in game.legal_moves()
    with pytest.raises(ValueError, match="plays star with 2 seats"):
        player.select_move(Game(Rules("star", 3)))


def test_multi_seat_training_with_bots(tmp_path: Path) -> None:
    data = tiny_config(game__num_players=3)
    data["pool"].update(self_prob=0.4, snapshot_prob=0.3, bot_prob=0.3, bots=["random"])
    data["ppo"]["total_steps"] = 4 * 16 * 2
    data["eval"].update(every=64, games=2, opponents=["random"], move_limit=30)
    trainer = Trainer(from_dict(data), tmp_path / "three", log=quiet)
    trainer.train()
    trainer.close()
    lines = (tmp_path / "three" / "eval.jsonl").read_text().splitlines()
    res = json.loads(lines[-1])
    assert 0 <= res["random"]["win_rate"] <= 1 and res["random"]["mean_length"] <= 30


def test_cli_names_the_bad_key(tmp_path: Path, capsys) -> None:
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    assert main(["train", str(path), "--set", "ppo.gama=0.5", "--runs-dir", str(tmp_path)]) == 2
    assert "ppo.gama" in capsys.readouterr().err


def test_cli_print_config_prints_the_resolved_config_and_writes_nothing(tmp_path: Path, capsys,
                                                                         monkeypatch) -> None:
    """``--print-config``: every key after the overrides, as config.yaml would hold it; it reads
    back as the same config. Nothing is trained or written; the flags that only act on a run are refused."""
    from agents.cli import main

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    assert main(["train", str(path), "--print-config", "--set", "seed=9", "--set", "ppo.learning_rate=0.001"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    printed = tmp_path / "printed.yaml"
    printed.write_text(out)
    expected = load_config(path, ["seed=9", "ppo.learning_rate=0.001"])
    assert load_config(printed) == expected and out == dump_yaml(expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "printed.yaml"]  # no runs/ directory
    for flags, named in [(["--resume"], "--resume would do nothing: drop it"),
                         (["--device", "cpu", "--no-final-eval"],
                          "--device, --no-final-eval would do nothing: drop them"),
                         (["--runs-dir", "elsewhere"], "--runs-dir would do nothing: drop it"),
                         (["--quiet"], "--quiet would do nothing: drop it")]:  # (not stored: a run's flag)
        assert main(["train", str(path), "--print-config", *flags]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"halma train: error: --print-config trains nothing, so {named}\n", flags
    assert main(["train", str(path), "--print-config", "--set", "ppo.gama=1"]) == 2  # the config is checked first
    assert "unknown key 'ppo.gama' (did you mean 'ppo.gamma'?)" in capsys.readouterr().err
    assert main(["train", str(path), "--set", "seed=1", "--set", "seed=2", "--runs-dir", str(tmp_path / "r")]) == 2
    assert "--set seed is given twice ('seed=1' and 'seed=2'); give it once" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "printed.yaml"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--device", "bogus"], "halma train: error: --device 'bogus' is not a torch device"),
        (["--device", "meta"], "halma train: error: --device 'meta' is not a device to compute on"),
        (["--set", "device=gpu"], "halma train: error: device 'gpu' is not a torch device"),
    ],
)
def test_cli_refuses_a_bad_device_before_writing(tmp_path: Path, capsys, flags: list[str], message: str) -> None:
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    runs = tmp_path / "runs"
    assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", *flags]) == 2
    assert message in capsys.readouterr().err
    assert not runs.exists()


def test_cli_resume_reports_the_session_and_refuses_a_finished_run(tmp_path: Path, capsys) -> None:
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 2 + 10)))  # rounded down: 2 updates
    runs = ["--runs-dir", str(tmp_path), "--quiet"]
    assert main(["train", str(path), *runs]) == 0
    assert "trained 128 steps in" in capsys.readouterr().out
    assert main(["train", str(path), "--resume", "--set", "ppo.total_steps=192", *runs]) == 0
    out = capsys.readouterr().out
    assert "trained 192 steps (64 of them now) in" in out
    # the run continues under the config given now, and says what differs from its checkpoint's
    assert "config changed since the checkpoint (checkpoint -> now): ppo.total_steps 138 -> 192\n" in out
    last = tmp_path / "tiny" / "checkpoints" / "last.pt"
    before = last.read_bytes()
    assert main(["train", str(path), "--resume", "--set", "ppo.total_steps=192", *runs]) == 0
    out, err = capsys.readouterr()
    assert "nothing to do" in err and "update 3 (192 steps)" in err and "trained" not in out
    assert "resumed" not in out + err  # it did not resume: "nothing to do" alone says where the run is
    assert last.read_bytes() == before
    # a lower total is nothing to do either, and leaves the run directory as it was (config, logs)
    config, logs = (tmp_path / "tiny" / "config.yaml").read_text(), sorted((tmp_path / "tiny" / "tb").iterdir())
    assert main(["train", str(path), "--resume", "--set", "ppo.total_steps=128", *runs]) == 0
    assert "nothing to do" in capsys.readouterr().err
    assert (tmp_path / "tiny" / "config.yaml").read_text() == config
    assert sorted((tmp_path / "tiny" / "tb").iterdir()) == logs


def test_config_changes_name_every_changed_added_and_dropped_key() -> None:
    from agents.config import config_changes

    before = {"seed": 1, "ppo": {"learning_rate": 0.001, "clip": 0.2}, "old": {"key": True}}
    after = {"seed": 1, "ppo": {"learning_rate": 0.1, "clip": 0.2}, "new": 5}
    assert config_changes(before, after) == ["new (none) -> 5", "old.key True -> (none)",
                                             "ppo.learning_rate 0.001 -> 0.1"]
    assert config_changes(after, after) == []


def _interrupt_during_update(monkeypatch, times: int) -> None:
    """Send this process SIGINT ``times`` times during the first PPO update (as Ctrl-C would)."""
    import signal

    real = agents.ppo.Trainer._ppo_update
    sent = [0]

    def update(self, data):
        while sent[0] < times:
            sent[0] += 1
            os.kill(os.getpid(), signal.SIGINT)
        return real(self, data)

    monkeypatch.setattr(agents.ppo.Trainer, "_ppo_update", update)


def test_cli_ctrl_c_saves_a_resumable_checkpoint(tmp_path: Path, capsys, monkeypatch) -> None:
    """The first Ctrl-C stops the run after the update in progress and saves it, with the command to go on."""
    import signal

    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 5, checkpoint__every=100)))
    runs = ["--runs-dir", str(tmp_path), "--quiet"]
    _interrupt_during_update(monkeypatch, 1)
    handler = signal.getsignal(signal.SIGINT)
    assert main(["train", str(path), *runs]) == 130
    assert signal.getsignal(signal.SIGINT) is handler  # put back
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "trained" not in out
    assert "stopped at update 1 (64 steps)" in err
    assert f"continue with: halma train {path} --resume --runs-dir {tmp_path} --quiet\n" in err  # as given
    last = tmp_path / "tiny" / "checkpoints" / "last.pt"
    assert load_checkpoint(last)["update"] == 1
    monkeypatch.undo()
    assert main(["train", str(path), "--resume", *runs]) == 0
    assert "trained 320 steps (256 of them now)" in capsys.readouterr().out


def test_cli_second_ctrl_c_stops_at_once_without_a_traceback(tmp_path: Path, capsys, monkeypatch) -> None:
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 5, checkpoint__every=100)))
    _interrupt_during_update(monkeypatch, 2)
    assert main(["train", str(path), "--runs-dir", str(tmp_path), "--quiet"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "nothing to resume" in err
    assert not (tmp_path / "tiny" / "checkpoints" / "last.pt").exists()


@pytest.mark.parametrize("runs_dir", ["a_file/runs", "/proc/halma_audit"])
def test_cli_unwritable_runs_dir_is_named(tmp_path: Path, capsys, runs_dir: str) -> None:
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    (tmp_path / "a_file").write_text("not a directory")
    runs = runs_dir if runs_dir.startswith("/") else str(tmp_path / runs_dir)
    assert main(["train", str(path), "--runs-dir", runs, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "halma train: error: cannot write the run directory" in err and "Traceback" not in err


def _train_and_count_wins_against_random(cfg: TrainConfig, run_dir: Path, games: int,
                                         max_plies: int | None = None) -> int:
    """Train ``cfg`` to its end, then the arena: the checkpoint's wins in ``games`` games against random (a
    draw at the arena's cap is not a win). The slow quickstart test and its fast twin share it, so the slow
    one cannot fall behind the arena's API unnoticed."""
    from agents.arena import run_tournament

    cfg.log.progress_bar = False
    trainer = Trainer(cfg, run_dir, log=quiet)
    trainer.train()
    trainer.close()
    rules = cfg.game.rules().replace(move_limit=None, limit_outcome="draw")
    res = run_tournament([str(run_dir / "checkpoints" / "last.pt"), "random"], rules, games, seed=1,
                         max_plies=max_plies)
    against_random = res.pairwise()[0][1]
    assert against_random is not None and against_random["games"] == games
    return int(against_random["wins"])


def test_the_quickstart_tests_evaluation_path_runs_on_a_tiny_run(tmp_path: Path) -> None:
    wins = _train_and_count_wins_against_random(from_dict(tiny_config()), tmp_path / "tiny", games=2, max_plies=20)
    assert 0 <= wins <= 2


@pytest.mark.slow
def test_quickstart_beats_random(tmp_path: Path) -> None:
    """The real quickstart run (about a minute on 2 quiet cores) and its evaluation against random."""
    cfg = load_config(ROOT / "configs" / "quickstart.yaml")
    wins = _train_and_count_wins_against_random(cfg, tmp_path / cfg.name, games=100)
    assert wins >= 95, wins


def test_status_line_shows_a_dash_when_no_game_ended() -> None:
    from agents.ppo import status_line

    quiet = status_line(3, 10, 6144, {"charts/SPS": 512.4, "losses/entropy": 1.5,
                                      "charts/episodic_return": float("nan")})
    assert quiet == "update 3/10 step 6144 SPS 512 return - length - finish - entropy 1.500"
    busy = status_line(4, 10, 8192, {"charts/SPS": 500.0, "charts/episodic_return": 0.25,
                                     "charts/episodic_length": 80.0, "charts/finish_rate": 1.0,
                                     "losses/entropy": 1.25})
    assert busy == "update 4/10 step 8192 SPS 500 return 0.250 length 80 finish 1.00 entropy 1.250"


def test_solitaire_games_train_the_same_network(tmp_path: Path) -> None:
    """``env.solo_envs`` adds 1-seat crossings to the rollout: counted in the steps, logged, evaluated."""
    from agents.ppo import evaluate_solo

    data = tiny_config(env__solo_envs=2, ppo__total_steps=3 * (4 + 2) * 16)
    trainer = Trainer(from_dict(data), tmp_path / "solo", log=quiet)
    stats = trainer.train()
    trainer.close()
    assert trainer.global_step == 3 * (4 + 2) * 16
    # the solitaire games hit move_limit 40 during the third rollout (plies 33-48)
    assert stats["charts/solo_moves"] == 40 and stats["charts/solo_finish_rate"] == 0
    res = evaluate_solo(trainer.net, trainer.cfg, torch.device("cpu"))
    assert res["finished"] in (0.0, 1.0) and 1 <= res["moves"] <= data["eval"]["move_limit"]


def test_solo_move_cost_is_taken_from_each_solitaire_move(tmp_path: Path) -> None:
    returns = []
    for cost in (0.0, 0.01):
        data = tiny_config(env__solo_envs=2, env__solo_move_cost=cost, game__progress_shaping=0.0,
                           ppo__total_steps=3 * (4 + 2) * 16)
        trainer = Trainer(from_dict(data), tmp_path / f"cost{cost}", log=quiet)
        stats = trainer.train()
        trainer.close()
        assert stats["charts/solo_moves"] == 40  # every solitaire game reaches move_limit 40
        returns.append(stats["charts/solo_return"])
    # without shaping an unfinished solitaire game returns nothing (its +1 is for finishing), less the
    # cost of its 40 moves
    assert returns[0] == 0 and returns[1] == pytest.approx(-40 * 0.01)


def test_solo_envs_is_checked() -> None:
    with pytest.raises(ValueError, match=r"env.solo_move_cost must be in \[0, 1\)"):
        from_dict(tiny_config(env__solo_move_cost=-0.1))
    with pytest.raises(ValueError, match="env.solo_envs must be >= 0"):
        from_dict(tiny_config(env__solo_envs=-1))
    with pytest.raises(ValueError, match="solitaire crossing is a star game, not diamond"):
        from_dict(tiny_config(env__solo_envs=2, game__variant="diamond"))


# --- imitation before PPO ----------------------------------------------------------------


def _imitation_config(**changes) -> dict:
    data = tiny_config(**changes)
    data["imitation"].update(bot="greedy", games=4, epochs=1)
    return data


def test_recorded_returns_follow_the_training_reward() -> None:
    """Without shaping a decision's return is its seat's final place reward, discounted along the
    seat's own later moves; the recorded choice indexes the legal list."""
    from agents.imitation import record
    from agents.registry import make_player

    cfg = from_dict(_imitation_config(game__progress_shaping=0.0, ppo__gamma=0.9))
    demos = record(cfg, lambda name, seed: make_player(name, seed=seed), seed=0)
    assert len(demos) == 4 * 40  # every game runs to move_limit 40
    assert bool((demos.valid.gather(1, demos.choice[:, None])).all())
    for g in range(4):
        rows = torch.nonzero(demos.game == g).squeeze(1)
        for seat in range(2):  # seats alternate, the first seat rotating per game
            mine = rows[(torch.arange(len(rows)) + g) % 2 == seat]
            final = float(demos.ret[mine[-1]])
            assert final in (-1.0, 1.0, 0.0)
            expected = torch.tensor([final * 0.9 ** k for k in range(len(mine) - 1, -1, -1)])
            assert torch.allclose(demos.ret[mine], expected)


def test_imitation_learns_the_bots_moves() -> None:
    from agents.imitation import fit, record
    from agents.network import build_network
    from agents.registry import make_player

    data = _imitation_config()
    data["imitation"].update(games=10, epochs=25, learning_rate=3e-3, minibatch_size=64)
    cfg = from_dict(data)
    demos = record(cfg, lambda name, seed: make_player(name, seed=seed), seed=0)
    torch.manual_seed(0)
    net = build_network("star", 2, cfg.network)
    stats = fit(net, demos, cfg, torch.device("cpu"))
    chance = float((1.0 / demos.valid.sum(1).float()).mean())
    assert stats["imitation/accuracy"] > 0.3 > 5 * chance
    assert 0 <= stats["imitation/held_out_accuracy"] <= 1 and stats["imitation/positions"] == len(demos)


def test_a_fresh_run_imitates_once(tmp_path: Path) -> None:
    lines: list[str] = []
    data = _imitation_config()
    short = copy.deepcopy(data)
    short["ppo"]["total_steps"] = 4 * 16 * 2
    trainer = Trainer(from_dict(short), tmp_path / "im", log=lines.append)
    trainer.train()
    trainer.close()
    stats = json.loads((tmp_path / "im" / "imitation.json").read_text())
    assert stats["imitation/positions"] == 4 * 40 and 0 <= stats["imitation/accuracy"] <= 1
    assert sum("imitation:" in line for line in lines) == 2  # the announcement and the result
    resumed = Trainer(from_dict(data), tmp_path / "im", resume=True, log=lines.append)
    resumed.train()
    resumed.close()
    assert sum("imitation:" in line for line in lines) == 2  # the weights already hold it


def test_bot_names_in_the_config_are_checked_when_it_loads() -> None:
    with pytest.raises(ValueError, match=r"pool.bots\[1\]: unknown player 'grredy'"):
        from_dict(tiny_config(pool__bots=["random", "grredy"], pool__bot_prob=0.5, pool__self_prob=0.5,
                              pool__snapshot_prob=0.0))
    with pytest.raises(ValueError, match="imitation.bot: crossing width must be >= 1"):
        from_dict(tiny_config(imitation__bot="crossing:width=0", imitation__games=1, imitation__epochs=1))
    with pytest.raises(ValueError, match=r"eval.final_opponents\[0\]: unknown player"):
        from_dict(tiny_config(eval__final_opponents=["nobody"]))


def test_imitation_config_is_checked() -> None:
    with pytest.raises(ValueError, match="need imitation.bot"):
        from_dict(tiny_config(imitation__games=3))
    with pytest.raises(ValueError, match="needs imitation.games >= 1 and imitation.epochs >= 1"):
        from_dict(tiny_config(imitation__bot="greedy"))
    with pytest.raises(ValueError, match="imitation.learning_rate"):
        from_dict(_imitation_config(imitation__learning_rate=0.0))


def test_distillation_toward_the_bot_during_ppo(tmp_path: Path) -> None:
    """``imitation.distill_coef`` adds a cross-entropy toward the bot's move on the learner's positions,
    annealed with the learning rate; without it the term is absent."""
    data = tiny_config()
    data["imitation"].update(bot="greedy", games=0, epochs=0, distill_coef=0.5)
    data["ppo"]["anneal_lr"] = False
    trainer = Trainer(from_dict(data), tmp_path / "distill", log=quiet)
    stats = trainer.train()
    trainer.close()
    assert stats["charts/distill_coef"] == 0.5 and stats["losses/distill"] > 0
    assert not (tmp_path / "distill" / "imitation.json").exists()  # no pretraining asked for
    plain = Trainer(from_dict(tiny_config()), tmp_path / "plain", log=quiet)
    stats = plain.train()
    plain.close()
    assert stats["charts/distill_coef"] == 0 and stats["losses/distill"] == 0
    with pytest.raises(ValueError, match="distill_coef need imitation.bot"):
        from_dict(tiny_config(imitation__distill_coef=0.5))
    with pytest.raises(ValueError, match="distill_coef must be >= 0"):
        from_dict(tiny_config(imitation__distill_coef=-1.0))


# What each shipped checkpoint's stored config must say, from its README row and docs/training.md: a guard
# against shipping another run's file (session 7 shipped a self-play checkpoint in place of its search stage).
SHIPPED_RUNS = {
    "quickstart_star2": ("star", 2, 149_504, (16, 2), ["random", "greedy"]),
    "star2": ("star", 2, 204_800, (32, 4), ["search:depth=4,time=none", "search:depth=5,time=none"]),
    "star3": ("star", 3, 1_499_136, (16, 2), ["random", "greedy"]),
    "star4": ("star", 4, 2_398_208, (16, 2), ["random", "greedy"]),
    "star6": ("star", 6, 598_016, (16, 2), ["greedy"]),
    "diamond2": ("diamond", 2, 1_198_080, (16, 2), ["random", "greedy"]),
    "diamond3": ("diamond", 3, 1_998_848, (32, 4), ["random", "greedy"]),
    "halma16_2": ("halma16", 2, 299_008, (16, 2), ["greedy"]),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_RUNS))
def test_shipped_checkpoints_come_from_their_documented_runs(name: str) -> None:
    from agents.checkpoint import load_checkpoint

    path = Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / f"{name}.pt"
    data = load_checkpoint(path)
    variant, seats, steps, (channels, blocks), bots = SHIPPED_RUNS[name]
    assert (data["variant"], data["num_players"], data["global_step"]) == (variant, seats, steps)
    assert (data["network"]["channels"], data["network"]["blocks"]) == (channels, blocks)
    assert data["config"]["pool"]["bots"] == bots


@pytest.mark.parametrize("changes", [{"env__solo_envs": 2}, {"env__engine": "batched"},
                                     {"env__engine": "scalar", "game__num_players": 3}])
def test_the_update_starts_from_the_rollout_s_own_log_probabilities(tmp_path: Path, monkeypatch, changes) -> None:
    """Before the first optimiser step of an update the network is the one that sampled the rollout, so every
    stored decision's log-probability must come back exactly (CleanRL's ratio of 1). The solitaire games
    stored a view of the engine's observation buffer, which the next ply rewrote: every solitaire row held
    its game's last position (log ratios up to 10, clip fraction 0.99)."""
    trainer = Trainer(from_dict(tiny_config(**changes)), tmp_path / "run", log=quiet)
    seen: list = []
    original = trainer._ppo_update

    def first_checked(d):
        with torch.no_grad():
            logits, _ = trainer.net(d["obs"], d["legal"], d["valid"])
        seen.append(torch.log_softmax(logits, -1).gather(1, d["slot"][:, None]).squeeze(1) - d["logp"])
        return original(d)

    monkeypatch.setattr(trainer, "_ppo_update", first_checked)
    trainer.train()
    trainer.close()
    # (the first update only: a later one also trains the decisions pending at the previous rollout's cut,
    # sampled by the network before that update)
    assert len(seen) >= 2 and len(seen[0]) > 0
    assert float(seen[0].abs().max()) < 1e-5


@pytest.mark.parametrize("anneal_before", [True, False])
def test_a_resumed_run_steps_at_the_learning_rate_its_config_gives_now(tmp_path: Path, monkeypatch,
                                                                        anneal_before: bool) -> None:
    """docs/training.md: "The resumed run follows the config given now". Without annealing the optimiser
    kept the rate its checkpoint stored (a resume at another ppo.learning_rate, or from an annealed run,
    trained at the old one)."""
    data = tiny_config(ppo__anneal_lr=anneal_before, ppo__learning_rate=1e-3, ppo__total_steps=4 * 16 * 3)
    data["ppo"]["total_steps"] = 4 * 16 * 2
    first = Trainer(from_dict(data), tmp_path / "tiny", log=quiet)
    first.train()
    first.close()
    assert first.optimizer.param_groups[0]["lr"] == (0.5e-3 if anneal_before else 1e-3)
    data["ppo"].update(anneal_lr=False, learning_rate=4e-4, total_steps=4 * 16 * 4)
    resumed = Trainer(from_dict(data), tmp_path / "tiny", resume=True, log=quiet)
    rates: list[float] = []
    step = resumed.optimizer.step

    def recorded_step(*args, **kwargs):
        rates.append(resumed.optimizer.param_groups[0]["lr"])
        return step(*args, **kwargs)

    monkeypatch.setattr(resumed.optimizer, "step", recorded_step)
    resumed.train()
    resumed.close()
    assert len(rates) == 2 * 2 * 2 and set(rates) == {4e-4}  # 2 updates of 2 epochs x 2 minibatches


def test_a_run_directory_in_use_by_another_halma_train_is_refused(tmp_path: Path, capsys) -> None:
    """`halma train ... --resume` while the run it continues was still training ran two trainers into one
    directory (checkpoints and logs of both): a run holds a lock beside its directory, and a second one, fresh
    or resumed, is refused as such before it reads or writes anything; refused input (a bad device) for a
    directory that does not exist yet takes no lock and writes nothing."""
    from agents.cli import main
    from agents.files import LockHeld, held_lock
    from agents.run_dir import run_lock_file

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    runs = tmp_path / "runs"
    run_dir = runs / tiny_config()["name"]
    assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", "--device", "nosuch"]) == 2
    assert not runs.exists()
    capsys.readouterr()
    assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", "--no-final-eval"]) == 0

    def state() -> list:
        return sorted((str(p.relative_to(runs)), p.read_bytes(), p.stat().st_mtime_ns)
                      for p in runs.rglob("*") if p.is_file())

    before = state()
    assert run_lock_file(run_dir) == runs / f".{run_dir.name}.lock"
    in_use = (f"halma train: error: the run directory {str(run_dir)!r} is in use by another halma train; let it end or "
              "stop it first\n")
    more = ["--set", "ppo.total_steps=1024"]
    with held_lock(run_lock_file(run_dir)):  # what the other halma train holds while it runs
        with pytest.raises(LockHeld), held_lock(run_lock_file(run_dir)):
            pass
        for flags in (["--resume", *more], []):  # a fresh run was told to remove the directory of the live one
            capsys.readouterr()
            assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", *flags]) == 2
            assert capsys.readouterr().err == in_use
        assert state() == before  # nothing read into, nothing written
    assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", "--resume", "--no-final-eval", *more]) == 0
    with held_lock(run_lock_file(run_dir)):  # each run lets it go at its end
        pass


def test_quiet_is_for_the_run_only_not_its_stored_config(tmp_path: Path, capsys) -> None:
    """``--quiet`` wrote ``log.progress_bar: false`` into config.yaml and the checkpoints, so a resume without it
    reported ``log.progress_bar False -> True``, a change nobody made."""
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 2, log__progress_bar=True)))
    runs = ["--runs-dir", str(tmp_path)]
    assert main(["train", str(path), *runs, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "it/s" not in err and "step/s" not in err  # no bar in the run
    run = tmp_path / "tiny"
    assert yaml.safe_load((run / "config.yaml").read_text())["log"]["progress_bar"] is True
    assert load_checkpoint(run / "checkpoints" / "last.pt")["config"]["log"]["progress_bar"] is True
    assert main(["train", str(path), *runs, "--resume", "--set", "ppo.total_steps=192"]) == 0
    out, err = capsys.readouterr()
    assert "config changed since the checkpoint (checkpoint -> now): ppo.total_steps 128 -> 192\n" in out
    assert "progress_bar" not in out + err


def test_the_bar_is_drawn_on_a_terminal_and_status_lines_go_to_a_log(tmp_path: Path, capsys, monkeypatch) -> None:
    """``halma train ... > log 2>&1`` filled the log with the bar's carriage-return frames, one endless line, and
    no status line; --quiet was the only way out."""
    import sys

    from agents.cli import main
    from tests.file_helpers import TerminalText

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 2, log__progress_bar=True,
                                               log__status_every=1e-9)))
    assert main(["train", str(path), "--runs-dir", str(tmp_path / "log")]) == 0  # stderr captured: a log
    out, err = capsys.readouterr()
    assert "\r" not in err and "step/s" not in err
    assert "update 1/2 step 64 SPS " in out and "update 2/2 step 128 SPS " in out
    assert "--quiet" not in out  # (nor does the continuation command gain it)
    monkeypatch.setattr(sys, "stderr", terminal := TerminalText())
    assert main(["train", str(path), "--runs-dir", str(tmp_path / "terminal")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\r *\d+%\|.*\| 128/128 \[", terminal.getvalue()) and "update 1/2" not in out


def test_the_first_line_says_where_a_total_that_whole_updates_do_not_divide_ends(tmp_path: Path, capsys) -> None:
    """ppo.total_steps=150 with updates of 64 steps trained 128 without a word (the quickstart's 150,000 trains
    149,504): the first line says it, and says nothing of it when the total is met exactly."""
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=150)))
    assert main(["train", str(path), "--runs-dir", str(tmp_path / "a"), "--quiet", "--no-final-eval"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"training star 2 seats -> {tmp_path / 'a' / 'tiny'} on cpu; it ends at step 128, in "
                          "whole updates of 64 steps (ppo.total_steps=150)\n"), out
    assert "trained 128 steps" in out
    assert main(["train", str(path), "--runs-dir", str(tmp_path / "b"), "--quiet", "--no-final-eval",
                 "--set", "ppo.total_steps=128"]) == 0
    assert capsys.readouterr().out.startswith(f"training star 2 seats -> {tmp_path / 'b' / 'tiny'} on cpu\n")


def test_the_bar_is_drawn_on_a_terminal_of_no_size(tmp_path: Path) -> None:
    """A pseudo-terminal opened without a size (script, docker run -t) reports 0 x 0: tqdm drew nothing there, and
    stderr being a terminal, no status line took its place, so a run said nothing between its first line and its
    last.  The bar takes $COLUMNS x $LINES or 80 x 24 there now."""
    import sys

    from tests.process_helpers import run_on_a_sizeless_terminal

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=4 * 16 * 2, log__progress_bar=True)))
    status, out = run_on_a_sizeless_terminal(
        [sys.executable, "-m", "agents.cli", "train", str(path), "--runs-dir", str(tmp_path)], cwd=ROOT)
    assert status == 0 and re.search(r"\r *\d+%\|.*\| 128/128 \[", out), out
    assert max(len(frame) for frame in re.split(r"[\r\n]", out) if "step/s" in frame) <= 80  # the fallback width


def test_a_diverged_update_stops_before_the_weights_take_it(tmp_path: Path) -> None:
    """A NaN loss (here: a NaN entropy coefficient, which the config itself refuses) made NaN weights that the
    next checkpoint would have kept; the update now stops at its first non-finite gradients."""
    run = tmp_path / "run"
    Trainer(from_dict(tiny_config(ppo__total_steps=64)), run, log=quiet).train()
    last = run / "checkpoints" / "last.pt"
    before = last.read_bytes()
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=192)), run, resume=True, log=quiet)
    trainer.cfg.ppo.ent_coef = math.nan
    with pytest.raises(Diverged, match=r"^the training diverged: update 2's gradients are not finite \(NaN or "
                                       r"infinite\), so it stopped before they reached the weights; a smaller "):
        trainer.train()
    trainer.close()
    weights = load_checkpoint(last)["model"]
    assert all(torch.equal(value, weights[name]) for name, value in trainer.net.state_dict().items())
    assert last.read_bytes() == before and not (run / "checkpoints" / "update_000002.pt").exists()


def test_other_errors_of_the_update_are_not_called_a_divergence(tmp_path: Path, monkeypatch) -> None:
    """Only non-finite gradients are: a device's own error (CUDA reports them late, at the next sync) was told as
    'the training diverged', its message dropped."""
    def failing(*args: object, **kwargs: object) -> torch.Tensor:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", failing)
    with pytest.raises(RuntimeError, match="^CUDA error: an illegal memory access") as error:
        Trainer(from_dict(tiny_config(ppo__total_steps=64)), tmp_path / "run", log=quiet).train()
    assert not isinstance(error.value, Diverged)


def test_a_diverged_run_on_a_terminal_says_so_below_the_bar(tmp_path: Path, monkeypatch, capsys) -> None:
    """The bar was left open when an error left the loop: the error line was glued to it, and the bar drawn again
    after it when it was freed."""
    import sys

    from agents.cli import main
    from tests.file_helpers import TerminalText

    path = _diverging_config(tmp_path, monkeypatch, log__progress_bar=True)
    monkeypatch.setattr(sys, "stderr", terminal := TerminalText())
    assert main(["train", str(path), "--runs-dir", str(tmp_path)]) == 2
    bar, error, rest = terminal.getvalue().rpartition("halma train: error: the training diverged: ")
    assert re.search(r"\| 0/192 \[[^\r\n]*\n$", bar) and "\r" not in rest and rest.endswith(" the same way)\n"), \
        terminal.getvalue()


def test_quiet_draws_no_bar_on_a_terminal(tmp_path: Path, monkeypatch, capsys) -> None:
    import sys

    from agents.cli import main
    from tests.file_helpers import TerminalText

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(ppo__total_steps=64, log__progress_bar=True, log__status_every=1e-9)))
    monkeypatch.setattr(sys, "stderr", terminal := TerminalText())
    assert main(["train", str(path), "--runs-dir", str(tmp_path), "--quiet"]) == 0
    assert terminal.getvalue() == "" and "update 1/1 step 64 SPS " in capsys.readouterr().out


def _diverging_config(folder: Path, monkeypatch: pytest.MonkeyPatch, coefficient: str = "ent_coef",
                      data: dict | None = None, **changes: object) -> Path:
    """A tiny config file (or ``data``) that halma train reads with a NaN ``ppo.<coefficient>`` (which the config
    itself refuses): every update's loss is NaN (with vf_coef, every imitation minibatch's too)."""
    import agents.train

    def nan_coefficient(path: str, overrides: list[str]) -> TrainConfig:
        cfg = load_config(path, overrides)
        setattr(cfg.ppo, coefficient, math.nan)
        return cfg

    monkeypatch.setattr(agents.train, "load_config", nan_coefficient)
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(data or tiny_config(**changes)))
    return path


def test_halma_train_says_a_diverged_run_in_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from agents.cli import main

    path = _diverging_config(tmp_path, monkeypatch)
    assert main(["train", str(path), "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("halma train: error: the training diverged: update 1's gradients are not finite") and \
        err.endswith("; no checkpoint was written yet (the first comes after checkpoint.every=1 updates), so there "
                     f"is nothing to resume: remove {tmp_path / 'tiny'} (or choose another --set name=NAME) and run "
                     "the same command again to start over, with a change such as --set ppo.learning_rate=... (the "
                     "same settings diverge the same way)\n") and "Traceback" not in err, err


def test_a_diverged_imitation_stops_before_the_weights_take_it(tmp_path: Path) -> None:
    """The imitation fit had no check: NaN gradients went into every weight, and the rollout that followed failed
    with a traceback of torch's (Categorical's logits 'found invalid values')."""
    cfg = from_dict(_imitation_config())
    cfg.ppo.vf_coef = math.nan  # (the config itself refuses it) every minibatch's loss is NaN
    trainer = Trainer(cfg, tmp_path / "im", log=quiet)
    before = {name: value.clone() for name, value in trainer.net.state_dict().items()}
    with pytest.raises(Diverged, match=r"^the training diverged: imitation epoch 1's gradients are not finite "
                                       r"\(NaN or infinite\), so it stopped before they reached the weights; a "
                                       r"smaller imitation.learning_rate or ppo.max_grad_norm may keep"):
        trainer.train()
    trainer.close()
    assert all(torch.equal(value, before[name]) for name, value in trainer.net.state_dict().items())
    assert not (tmp_path / "im" / "imitation.json").exists()


def test_halma_train_says_a_diverged_imitation_in_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from agents.cli import main

    path = _diverging_config(tmp_path, monkeypatch, "vf_coef", _imitation_config())
    assert main(["train", str(path), "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("halma train: error: the training diverged: imitation epoch 1's gradients are not "
                          "finite") and "Traceback" not in err and err.endswith(
        "and run the same command again to start over, with a change such as --set imitation.learning_rate=... "
        "(the same settings diverge the same way)\n"), err


def test_a_resume_says_init_from_is_unused(tmp_path: Path) -> None:
    """A resume continues from its own weights: a new ``init_from`` is listed, but as unused."""
    short = tiny_config(ppo__total_steps=4 * 16)
    Trainer(from_dict(short), tmp_path / "first", log=quiet).train()
    source = str(tmp_path / "first" / "checkpoints" / "last.pt")
    Trainer(from_dict(short), tmp_path / "tiny", log=quiet).train()
    lines: list[str] = []
    resumed = Trainer(from_dict(dict(short, init_from=source)), tmp_path / "tiny", resume=True, log=lines.append)
    resumed.close()
    assert resumed.resume_changes == [f"init_from None -> {source!r} (unused by a resume)"]


def test_max_grad_norm_zero_is_refused_before_a_run_is_made(tmp_path: Path, capsys) -> None:
    """``ppo.max_grad_norm: 0`` trained a whole run whose checkpoints held exactly the initial weights."""
    from agents.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    runs = tmp_path / "runs"
    assert main(["train", str(path), "--runs-dir", str(runs), "--quiet", "--set", "ppo.max_grad_norm=0"]) == 2
    assert "ppo.max_grad_norm must be > 0" in capsys.readouterr().err
    assert not runs.exists()
