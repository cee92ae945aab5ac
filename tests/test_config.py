"""The training config's every check, each at its boundary: the first value refused (with an error
naming the key) and the last one accepted; the loader's type checks, ``--set`` parsing, the schema's
defaults and the YAML round trip (agents/config.py, docs/training.md "Configuration reference")."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
from pathlib import Path

import pytest
import yaml

from agents.config import (
    MAX_SEED,
    MAX_TORCH_THREADS,
    GameConfig,
    TrainConfig,
    apply_overrides,
    config_path,
    default_dict,
    dump_yaml,
    from_dict,
    load_config,
    shipped_config_names,
)

ROOT = Path(__file__).resolve().parents[1]
DIAMOND2 = str(ROOT / "agents" / "checkpoints" / "diamond2.pt")  # a policy of diamond with 2 seats
STAR3 = str(ROOT / "agents" / "checkpoints" / "star3.pt")  # a policy of star with 3 seats


def _load(*overrides: str) -> TrainConfig:
    """The default config (the quickstart's values) with ``--set`` overrides."""
    return from_dict(apply_overrides(default_dict(), list(overrides)))


# Each case: overrides of the default config, and the start of the error they must raise.
REFUSED = [
    # game
    (["game.num_players=1"], r"^game\.num_players must be at least 2 for self-play, got 1$"),
    (["game.reward=points"], r"game\.reward must be one of place, win_loss, got 'points'"),
    (["game.limit_outcome=rank"], r"^game\.limit_outcome must be one of draw, progress, got 'rank'$"),
    (["game.progress_shaping=-0.5"],
     r"^game\.progress_shaping must be >= 0 and at most 1e\+09 \(the engines' bound\), got -0\.5$"),
    # accepted here, it failed in the batched engine with a traceback once the run directory was written
    (["game.progress_shaping=1e10"], r"^game\.progress_shaping must be >= 0 and at most 1e\+09 .*, got 1e\+10$"),
    # env
    (["env.num_envs=0"], r"^env\.num_envs must be >= 1, got 0$"),
    (["env.solo_move_cost=1"], r"env\.solo_move_cost must be in \[0, 1\), got 1\.0"),
    # ppo
    *[([f"ppo.{key}=0"], rf"^ppo\.{key} must be >= 1, got 0$")
      for key in ("total_steps", "num_steps", "num_minibatches", "update_epochs")],
    (["ppo.learning_rate=0"], r"^ppo\.learning_rate must be in \(0, 1\), got 0\.0$"),
    (["ppo.learning_rate=1"], r"^ppo\.learning_rate must be in \(0, 1\), got 1\.0$"),
    (["ppo.learning_rate=-1e-3"], r"^ppo\.learning_rate must be in \(0, 1\), got -0\.001$"),
    *[([f"ppo.{key}={value}"], rf"^ppo\.{key} must be in \[0, 1\], got {re.escape(str(value))}$")
      for key in ("gamma", "gae_lambda") for value in (-0.1, 1.5)],
    *[([f"ppo.{key}=-0.1"], rf"^ppo\.{key} must be >= 0, got -0\.1$") for key in ("clip_coef", "ent_coef", "vf_coef")],
    # 0 clipped every gradient to nothing: a whole run (and its imitation fit) trained without changing a weight
    *[([f"ppo.max_grad_norm={value}"], rf"^ppo\.max_grad_norm must be > 0 \(the gradient norm PPO and the imitation "
       rf"fit clip to; 0 would stop all learning\), got {shown}$")
      for value, shown in (("0", r"0\.0"), ("-0.1", r"-0\.1"))],
    # network
    *[([f"network.{key}=0"], rf"^network\.{key} must be >= 1, got 0$")
      for key in ("channels", "pair_dim", "value_hidden")],
    (["network.blocks=-1"], r"^network\.blocks must be >= 0, got -1$"),
    (["network.attention_layers=-1"], r"^network\.attention_layers must be >= 0, got -1$"),
    (["network.attention_layers=1", "network.channels=6"],
     r"network\.channels must be divisible by 4 \(the attention heads\) when network\.attention_layers > 0; got 6"),
    (["network.reach_features=true", "game.num_players=3"], r"network\.reach_features is for 2-seat games"),
    # pool
    (["pool.self_prob=-0.5", "pool.snapshot_prob=1.2", "pool.bot_prob=0.3"],
     r"pool\.self_prob \+ snapshot_prob \+ bot_prob must be 1 \(each >= 0\)"),
    (["pool.bots=[]"], r"^pool\.bots is empty but pool\.bot_prob is 0\.3: name bots or set pool\.bot_prob to 0$"),
    (["pool.snapshot_every=0"], r"^pool\.snapshot_every must be >= 1, got 0$"),
    (["pool.max_snapshots=0"], r"^pool\.max_snapshots must be >= 1, got 0$"),
    (["pool.snapshot_every=-2", "pool.max_snapshots=0"], r"^pool\.snapshot_every must be >= 1, got -2$"),
    (["pool.bots=[random, nobody]"], r"^pool\.bots\[1\]: unknown player 'nobody'"),
    # imitation
    (["imitation.distill_coef=-1"], r"imitation\.distill_coef must be >= 0, got -1\.0"),
    (["imitation.epochs=2"], r"^imitation\.games, imitation\.epochs and imitation\.distill_coef need imitation\.bot "
                             r"\(null: no imitation\), got 0, 2 and 0\.0$"),
    (["imitation.distill_coef=0.5"], r"need imitation\.bot"),
    *[(["imitation.bot=greedy", f"imitation.games={games}", f"imitation.epochs={epochs}",
        f"imitation.distill_coef={coef}"],
       rf"imitation\.bot 'greedy' needs imitation\.games >= 1 and imitation\.epochs >= 1 .*got {games} and {epochs}")
      for games, epochs, coef in [(0, 1, 0), (1, 0, 0), (0, 3, 0.5), (2, 0, 0.5)]],
    (["imitation.bot=greedy", "imitation.games=1", "imitation.epochs=1", "imitation.learning_rate=1"],
     r"^imitation\.learning_rate must be in \(0, 1\), got 1\.0$"),
    (["imitation.bot=greedy", "imitation.games=1", "imitation.epochs=1", "imitation.minibatch_size=0"],
     r"^imitation\.minibatch_size must be >= 1, got 0$"),
    (["imitation.bot=nobody", "imitation.games=1", "imitation.epochs=1"], r"^imitation\.bot: unknown player"),
    # the same ranges with no bot (they were accepted, stored, and refused by a later --set imitation.bot=...)
    *[([f"imitation.learning_rate={value}"], rf"^imitation\.learning_rate must be in \(0, 1\), got {shown}$")
      for value, shown in (("-5", r"-5\.0"), ("7", r"7\.0"), ("0", r"0\.0"))],
    *[([f"imitation.minibatch_size={value}"], rf"^imitation\.minibatch_size must be >= 1, got {value}$")
      for value in (0, -3)],
    # recording under rules that give a game no end: a bot that never finishes recorded one game until memory ran out
    *[(["game.move_limit=null", f"imitation.bot={bot}", "imitation.games=1", "imitation.epochs=1", *more],
       r"^imitation\.games \(1\) records bot-only games under the training rules, which give a game no end with "
       r"game\.move_limit and game\.stall_limit both null .*: set game\.move_limit \(e\.g\. 300\) or "
       r"game\.stall_limit, or imitation\.games and imitation\.epochs to 0$")
      for bot, more in (("random", []), ("greedy", ["game.repetition_limit=3"]))],
    # crossing
    *[([f"crossing.{key}={value}"], rf"^crossing\.{key} must be >= {least}, got {value}$")
      for key, value, least in (("planner_width", -1, 0), ("detours", -1, 0), ("detour_width", 0, 1))],
    (["crossing.detours=3"], r"^crossing\.detours need crossing\.planner_width > 0, got 3 and 0$"),
    # eval
    *[([f"eval.{key}=-1"], rf"^eval\.{key} must be >= 0, got -1$") for key in ("every", "games", "final_games")],
    (["eval.move_limit=0"], r"^eval\.move_limit must be >= 1, got 0$"),
    (["eval.opponents=[nobody]"], r"^eval\.opponents\[0\]: unknown player 'nobody'"),
    (["eval.final_opponents=[random, nobody]"], r"^eval\.final_opponents\[1\]: unknown player 'nobody'"),
    # checkpoint, log
    (["checkpoint.every=0"], r"^checkpoint\.every must be >= 1, got 0$"),
    (["checkpoint.keep=0"], r"^checkpoint\.keep must be >= 1, got 0$"),
    (["checkpoint.every=-5", "checkpoint.keep=0"], r"^checkpoint\.every must be >= 1, got -5$"),
    *[([f"game.repetition_limit={value}"], r"^game\.repetition_limit must be an integer >= 2, false \(no repetition "
       rf"rule\) or null \(the variant's default\), got {shown}$") for value, shown in (("1", "1"), ("0", "0"),
                                                                                  ("-3", "-3"), ("true", "True"))],
    (["log.status_every=0"], r"^log\.status_every must be > 0, got 0\.0$"),
    (["log.status_every=-30"], r"^log\.status_every must be > 0, got -30\.0$"),
    # top level
    *[([f"name={name!r}"], r"name must be a plain directory name") for name in ("", "a/b", ".hidden")],
    # names that leave runs/ or cannot be made on Windows
    *[([f"name={name!r}"], r"name must be a plain directory name \(no path separator") for name in (
        "C:\\x", "a\\..\\..\\x", "a:b", "CON", "nul.txt", "Lpt1", "run.", "run ", "a\tb", "a?b", "a|b", "<x>")],
    # a name the folder takes but its lock file .NAME.lock (6 bytes more) does not: refused by its length in bytes
    (["name=" + "n" * 201], r"^name must be at most 200 bytes in UTF-8 \(it names the run's folder and its lock "
                            r"file \.NAME\.lock, within the 255 a file name may have\), got 201 bytes"),
    (["name=" + "é" * 101], r"^name must be at most 200 bytes in UTF-8 .*got 202 bytes"),
    (["torch_threads=-1"], r"torch_threads must be in \[0, 256\] \(0: torch's default\), got -1"),
    (["torch_threads=257"], r"torch_threads must be in \[0, 256\]"),
    (["torch_threads=5000"], r"torch_threads must be in \[0, 256\]"),  # segfaulted torch once a run had started
    *[([f"seed={seed}"], rf"^seed must be an integer in \[0, 4294967295\], got {seed}$")
      for seed in (-1, 2**32, 2**63 - 1, 99999999999999999999)],  # the last: torch's `Overflow when unpacking`
    # one update is (env.num_envs + env.solo_envs) x ppo.num_steps steps
    (["env.num_envs=4", "env.solo_envs=4", "ppo.num_steps=16", "ppo.total_steps=127"],
     r"ppo\.total_steps \(127\) is less than one update: .* = 128 steps"),
    (["env.num_envs=4", "env.solo_envs=4", "ppo.num_steps=16", "ppo.num_minibatches=129"],
     r"^ppo\.num_minibatches \(129\) must be at most the 128 steps of an update, \(env\.num_envs \+ env\.solo_envs\) x "
     r"ppo\.num_steps: its minibatches split the learner's transitions of an update, at most that many, and hold at "
     r"least one transition each$"),
    (["processes=2", "env.solo_envs=3"], r"env\.solo_envs \(3\) must be a multiple of processes \(2\)"),
    # the device's form is checked at load, without torch (whether the machine has it: when a run starts)
    *[([f"device={name}"], rf"^device {re.escape(repr(shown))} is not a torch device \(expected cpu, cuda or "
       r"cuda:N, or another torch device type: ipu, xpu, .*, privateuseone\)$")
      for name, shown in [(n, n) for n in ("foo", "gpu", "CPU", "Cuda", "cuda:01", "cuda:-1", "cpu:0:1")]
      + [("''", "")]],
    (["device=meta"], r"^device 'meta' holds shapes without values: nothing can be trained there \(expected cpu, "
     r"cuda or cuda:N\)$"),
    (["processes=2", "device=cuda:0"], r"^processes: 2 data-parallel processes run on the CPU; with device 'cuda:0'"),
    (["init_from=/nonexistent/x.pt"], r"init_from: checkpoint '/nonexistent/x\.pt' does not exist"),
]


@pytest.mark.parametrize(("overrides", "message"), REFUSED, ids=[" ".join(o) for o, _ in REFUSED])
def test_each_bad_value_is_refused_naming_its_key(overrides: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _load(*overrides)


# Each case: the last values a check lets through (its boundary, or a value its constant must allow).
ACCEPTED = [
    ["game.progress_shaping=0"], ["game.progress_shaping=0.5"], ["game.reward=win_loss"],
    ["game.limit_outcome=draw"], ["game.repetition_limit=2"], ["game.repetition_limit=false"],
    ["env.num_envs=1"], ["env.solo_move_cost=0.99"], ["env.engine=batched"], ["env.engine=scalar"],
    ["env.solo_envs=4"],  # on the star: the solitaire crossing
    [f"ppo.{key}=1" for key in ("num_steps", "num_minibatches", "update_epochs")],
    ["ppo.learning_rate=0.999"], ["ppo.gamma=0", "ppo.gae_lambda=0"], ["ppo.gamma=1", "ppo.gae_lambda=1"],
    [f"ppo.{key}=0" for key in ("clip_coef", "ent_coef", "vf_coef")], ["ppo.max_grad_norm=0.000001"],
    ["ppo.target_kl=0.5"], ["ppo.target_kl=0.01"],
    [f"network.{key}=1" for key in ("channels", "pair_dim", "value_hidden")], ["network.blocks=0"],
    ["network.attention_layers=1", "network.channels=16"], ["network.reach_features=true"],
    ["pool.self_prob=0.7", "pool.snapshot_prob=0.2", "pool.bot_prob=0.1"],  # sums to 1 within rounding
    ["pool.bots=[]", "pool.bot_prob=0", "pool.self_prob=0.8"],
    ["pool.snapshot_every=1", "pool.max_snapshots=1"],
    ["imitation.bot=greedy", "imitation.games=1", "imitation.epochs=1", "imitation.learning_rate=0.5",
     "imitation.minibatch_size=1"],
    ["imitation.bot=greedy", "imitation.games=2", "imitation.epochs=1"],
    ["imitation.bot=greedy", "imitation.games=0", "imitation.epochs=0", "imitation.distill_coef=0.5"],
    ["crossing.detour_width=1"], ["crossing.planner_width=1", "crossing.coef=0.5"],
    ["eval.move_limit=1"], ["eval.every=0", "eval.opponents=[]"], ["eval.games=0", "eval.opponents=[]"],
    ["eval.final_games=0", "eval.final_opponents=[]"],
    ["checkpoint.every=1", "checkpoint.keep=1"], ["log.status_every=0.5"],
    ["name=a.b"], ["torch_threads=0"], ["torch_threads=256"], ["seed=0"], ["seed=4294967295"],
    ["env.num_envs=4", "env.solo_envs=4", "ppo.num_steps=16", "ppo.total_steps=128", "ppo.num_minibatches=128"],
    ["processes=1", "device=cuda"],  # the device itself is checked when a run starts (agents/devices.py)
    ["processes=2", "device=cpu"], ["processes=2", "device=cpu:0"],  # cpu:0 is the CPU too
    ["device=cuda:1"], ["device=mps"],
    ["imitation.learning_rate=0.5", "imitation.minibatch_size=1"],  # in range with no bot
    # a game with an end: a move limit, or a stall limit (with no move limit)
    ["imitation.bot=random", "imitation.games=1", "imitation.epochs=1", "game.move_limit=1"],
    ["imitation.bot=random", "imitation.games=1", "imitation.epochs=1", "game.move_limit=null", "game.stall_limit=1"],
    ["game.move_limit=null"],  # PPO's own games are bounded per rollout
    ["game.move_limit=null", "imitation.bot=greedy", "imitation.games=0", "imitation.epochs=0",
     "imitation.distill_coef=0.5"],  # distillation records no games
]


@pytest.mark.parametrize("overrides", ACCEPTED, ids=[" ".join(o) for o in ACCEPTED])
def test_each_check_lets_its_last_good_value_through(overrides: list[str]) -> None:
    cfg = _load(*overrides)
    for item in overrides:  # each value is kept as given
        key, raw = item.split("=", 1)
        node = cfg
        for part in key.split("."):
            node = getattr(node, part)
        assert node == yaml.safe_load(raw), item


def test_the_bounds_are_the_documented_ones() -> None:
    assert (MAX_SEED, MAX_TORCH_THREADS) == (2**32 - 1, 256)
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert "0 to 4294967295" in doc and "at most 256" in doc


# Each case: a player the config names that cannot play the config's game (star with 2 seats unless set), and
# the error that names its key, the player and both games.
OTHER_GAME = [
    ([f"pool.bots=[random, {DIAMOND2}]"],
     r"^pool\.bots\[1\]: player '.*diamond2\.pt' cannot play star with 2 seats: policy:diamond2 plays diamond "
     r"with 2 seats, not star with 2$"),
    ([f"eval.opponents=[{STAR3}]"],
     r"^eval\.opponents\[0\]: player '.*star3\.pt' cannot play star with 2 seats: policy:star3 plays star with 3"),
    ([f"eval.final_opponents=[random, greedy, {STAR3}]"],
     r"^eval\.final_opponents\[2\]: player '.*star3\.pt' cannot play star with 2 seats"),
    ([f"imitation.bot={DIAMOND2}", "imitation.games=1", "imitation.epochs=1"],
     r"^imitation\.bot: player '.*diamond2\.pt' cannot play star with 2 seats: policy:diamond2 plays diamond"),
    (["game.variant=diamond", f"pool.bots=[{STAR3}]"], r"^pool\.bots\[0\]: .* cannot play diamond with 2 seats"),
    (["game.variant=diamond", "game.num_players=3", f"eval.opponents=[{DIAMOND2}]"],
     r"^eval\.opponents\[0\]: .* cannot play diamond with 3 seats: policy:diamond2 plays diamond with 2 seats"),
    # an exported opponent says so in its own words
    (["game.variant=diamond", f"eval.opponents=[{ROOT / 'agents' / 'ladder' / 'star-2-star2.onnx'}]"],
     r"^eval\.opponents\[0\]: .* cannot play diamond with 2 seats: .*exported for star with 2 seats"),
]


@pytest.mark.parametrize(("overrides", "message"), OTHER_GAME, ids=[" ".join(o) for o, _ in OTHER_GAME])
def test_a_player_of_another_game_is_refused_at_load_naming_its_key(overrides: list[str], message: str) -> None:
    """docs/training.md: every player the config names is built while the config loads; one that plays another
    variant or seat count used to pass and fail mid-run (pool.bots, eval.opponents) or after it (the final
    evaluation)."""
    with pytest.raises(ValueError, match=message):
        _load(*overrides)


def test_a_checkpoint_player_of_the_config_s_own_game_is_accepted() -> None:
    cfg = _load("game.variant=diamond", f"pool.bots=[greedy, {DIAMOND2}]", f"eval.opponents=[{DIAMOND2}]",
                f"eval.final_opponents=[{DIAMOND2}]", f"imitation.bot={DIAMOND2}", "imitation.games=1",
                "imitation.epochs=1")
    assert cfg.pool.bots == ["greedy", DIAMOND2] and cfg.imitation.bot == DIAMOND2
    assert _load("game.num_players=3", f"eval.opponents=[{STAR3}]").eval.opponents == [STAR3]


@pytest.mark.parametrize(("raw", "value"), [("5e6", 5_000_000), ("5.0e+6", 5_000_000), ("1e3", 1000), ("1E4", 10_000),
                                            ("2.5e3", 2500), ("3.0", 3), ("12345678901234567891e0",
                                                                             12345678901234567891)])
def test_an_integer_key_takes_a_whole_number_in_exponent_notation(raw: str, value: int, tmp_path: Path) -> None:
    """``--set ppo.total_steps=5e6`` (docs/training.md's own example) was refused as a string; YAML 1.1 reads
    5e6 as a string and 5.0e+6 as a float: both are taken, exactly (no float rounding), in a file too."""
    big = ["env.num_envs=1", "ppo.num_steps=1", "ppo.num_minibatches=1"]  # one update is 1 step
    cfg = _load(*big, f"ppo.total_steps={raw}", f"eval.every={raw}")
    assert cfg.ppo.total_steps == cfg.eval.every == value and type(cfg.ppo.total_steps) is int
    data = apply_overrides(default_dict(), big)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data).replace("total_steps: 150000", f"total_steps: {raw}"))
    assert load_config(path).ppo.total_steps == value
    if value < 10**12:  # (halma_env.rules caps a move limit below 10**12)
        assert _load(f"game.move_limit={raw}").game.move_limit == value  # int | None too


@pytest.mark.parametrize("raw", ["2.5", "1e-3", "1.5e0", "2.5e-1", "-1e-3"])
def test_an_integer_key_refuses_a_number_that_is_not_whole(raw: str) -> None:
    with pytest.raises(ValueError, match=r"^ppo\.num_steps: expected an integer, got \S+ \(not a whole number\)$"):
        _load(f"ppo.num_steps={raw}")
    with pytest.raises(ValueError, match=r"^game\.move_limit: expected int or NoneType, got"):
        _load(f"game.move_limit={raw}")
    for other in ("true", "1e999", ".inf", "abc"):  # a bool, a number too big to be finite, not a number
        with pytest.raises(ValueError, match=r"^ppo\.num_steps: expected an integer, got [^(]*$"):
            _load(f"ppo.num_steps={other}")


def _training_commands() -> list[list[str]]:
    """The arguments after ``halma train`` of docs/training.md's command lines that train from a config of
    ``configs/`` (shell blocks and inline code, lines continued with a backslash joined)."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "docs" / "training.md").read_text(encoding="utf-8"))
    fence = re.compile(r"^```\w*\n(.*?)^```", re.M | re.S)
    lines = [line for block in fence.findall(text) for line in block.splitlines()]
    lines += [re.sub(r"\s*\n\s*", " ", code) for code in re.findall(r"`([^`]+)`", fence.sub("", text))]
    found = (re.search(r"halma train (configs/\S+\.yaml\b.*)", line) for line in lines)
    return [shlex.split(m.group(1), comments=True) for m in found if m]


def test_the_docs_training_commands_load_their_configs() -> None:
    """Every ``halma train configs/... --set ...`` of docs/training.md is a config the loader takes (its
    tests/test_docs.py counterpart only parses the command line): ``--set ppo.total_steps=5e6`` was refused.
    An ``init_from`` naming a run's own checkpoint (not shipped) is left out."""
    commands = _training_commands()
    assert ["configs/star2.yaml", "--set", "ppo.total_steps=5e6"] in commands
    failures = []
    for argv in commands:
        overrides = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--set"]
        overrides = [o for o in overrides if not o.startswith("init_from=") or (ROOT / o.split("=", 1)[1]).is_file()]
        try:
            load_config(ROOT / argv[0], overrides)
        except ValueError as exc:
            failures.append(f"halma train {shlex.join(argv)}: {exc}")
    assert not failures, "\n".join(failures)
    assert len(commands) >= 30


@pytest.mark.parametrize(("override", "message"), [
    ("init_from=LONG", r"^init_from: 'x{49}\.\.\. \(str\) cannot be looked up: File name too long$"),
    ("pool.bots=[LONG]", r"^pool\.bots\[0\]: checkpoint file 'x{49}\.\.\. \(str\) does not exist$"),
    ("eval.opponents=[LONG]", r"^eval\.opponents\[0\]: checkpoint file 'x{49}\.\.\. \(str\) does not exist$")])
def test_a_file_name_too_long_for_the_file_system_is_named_by_its_key(override: str, message: str) -> None:
    """Python 3.11's Path.exists and is_dir raise ENAMETOOLONG: a raw OSError echoing a 300-character name, not
    the key's ValueError (a fuzzing round)."""
    with pytest.raises(ValueError, match=message):
        from_dict(apply_overrides(default_dict(), [override.replace("LONG", "x" * 300 + ".pt")]))


def test_init_from_names_an_existing_file_and_excludes_imitation_games(tmp_path: Path) -> None:
    weights = tmp_path / "w.pt"
    weights.write_bytes(b"")  # the config checks the path; the checkpoint is read when the run starts
    bot = ["imitation.bot=greedy", "imitation.epochs=0", "imitation.distill_coef=0.5"]
    assert _load(f"init_from={weights}", *bot, "imitation.games=0").init_from == str(weights)
    with pytest.raises(ValueError, match=r"^init_from and imitation\.games both set the starting weights \(got "
                                         r"'.*w\.pt' and 2\); choose one"):
        _load(f"init_from={weights}", "imitation.bot=greedy", "imitation.games=2", "imitation.epochs=1")
    fifo = tmp_path / "fifo.pt"
    os.mkfifo(fifo)  # was "does not exist"
    with pytest.raises(ValueError, match=r"^init_from: '.*fifo\.pt' is a FIFO, not a checkpoint file$"):
        _load(f"init_from={fifo}")


def test_game_options_reach_the_rules() -> None:
    assert _load("game.anti_blocking=false").game.rules().anti_blocking is False
    assert _load("game.anti_blocking=true", "game.variant=halma16").game.rules().anti_blocking is True
    assert _load("game.anti_blocking=null", "game.variant=halma16").game.rules().anti_blocking is False  # its own
    # repetition_limit as anti_blocking: null is the variant's own (3 on halma16, none elsewhere); false is none
    assert _load("game.repetition_limit=null", "game.variant=halma16").game.rules().repetition_limit == 3
    assert _load("game.repetition_limit=null").game.rules().repetition_limit is None
    assert _load("game.repetition_limit=false", "game.variant=halma16").game.rules().repetition_limit is None
    assert _load("game.repetition_limit=5").game.rules().repetition_limit == 5
    with pytest.raises(ValueError, match=r"^game\.repetition_limit: expected int or bool or NoneType, got 'off'$"):
        _load("game.repetition_limit=off")  # YAML 1.1's off was false; YAML 1.2's is text
    rules = GameConfig().rules()
    assert rules.first_seat == 0 and rules.move_limit == 300 and rules.limit_outcome == "progress"
    assert GameConfig().rules(first_seat=1).first_seat == 1


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.num_steps=true", r"^ppo\.num_steps: expected an integer, got True$"),
        ("ppo.ent_coef=true", r"^ppo\.ent_coef: expected a number, got True$"),
        ("ppo.ent_coef=abc", r"^ppo\.ent_coef: expected a number, got 'abc'$"),
        ("ppo.ent_coef=[1]", r"^ppo\.ent_coef: expected a number, got \[1\]$"),
        ("name=5", r"^name: expected a string, got 5 \(YAML reads it as a number: quote it, --set \"name='5'\"\)$"),
        # a float is not shown as typed (2024.10 reads as 2024.1): the hint does not quote it
        ("name=2024.10", r"^name: expected a string, got 2024\.1 \(YAML reads it as a number: quote it, "
                         r"--set \"name='\.\.\.'\"\)$"),
        ("pool.bots=random", r"^pool\.bots: expected a list, got 'random'$"),
        ("pool.bots=[random, 3]", r"^pool\.bots\[1\]: expected a string, got 3$"),
        ("game.move_limit=many", r"^game\.move_limit: expected int or NoneType, got 'many'$"),
        ("game.repetition_limit=2.5", r"^game\.repetition_limit: expected int or bool or NoneType, got 2\.5$"),
        ("ppo.target_kl=x", r"^ppo\.target_kl: expected float or NoneType, got 'x'$"),
        ("game=3", r"^game: expected a mapping, got 3$"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_and_the_type(override: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _load(override)


def test_a_config_that_is_not_a_mapping_is_named() -> None:
    with pytest.raises(ValueError, match=r"^config: expected a mapping, got \[1, 2\]$"):
        from_dict([1, 2])  # type: ignore[arg-type]


def test_overrides_split_at_the_first_equals_sign_and_name_the_unknown_part() -> None:
    out = apply_overrides(default_dict(), ["imitation.bot=crossing:width=5", " seed = 7"])
    assert out["imitation"]["bot"] == "crossing:width=5" and out["seed"] == 7
    ppo_keys = ", ".join(default_dict()["ppo"])
    with pytest.raises(ValueError, match=rf"^--set ppo\.nope\.deeper: unknown key 'ppo\.nope'; known: {ppo_keys}$"):
        apply_overrides(default_dict(), ["ppo.nope.deeper=1"])
    with pytest.raises(ValueError, match=r"^--set seed\.x: unknown key 'seed\.x' \(seed is a value, not a section\)$"):
        apply_overrides(default_dict(), ["seed.x=1"])
    with pytest.raises(ValueError, match=r"^--set seed\.x\.y: unknown key 'seed\.x' \(seed is a value, not a "
                                         r"section\)$"):
        apply_overrides(default_dict(), ["seed.x.y=1"])
    assert apply_overrides(default_dict(), ["game.move_limit=null"])["game"]["move_limit"] is None


def test_an_unknown_override_key_suggests_the_nearest_known_one() -> None:
    with pytest.raises(ValueError, match=r"^--set ppo\.learnin_rate: unknown key 'ppo\.learnin_rate' "
                                         r"\(did you mean 'ppo\.learning_rate'\?\); known: total_steps, "):
        apply_overrides(default_dict(), ["ppo.learnin_rate=1"])
    with pytest.raises(ValueError, match=r"^--set nam: unknown key 'nam' \(did you mean 'name'\?\); "
                                         r"known: name, seed, "):
        apply_overrides(default_dict(), ["nam=x"])
    with pytest.raises(ValueError, match=r"^--set pool\.xyzzy: unknown key 'pool\.xyzzy'; known: "):
        apply_overrides(default_dict(), ["pool.xyzzy=1"])  # nothing near it: no guess
    data = default_dict()
    with pytest.raises(ValueError):
        apply_overrides(data, ["seed=3", "ppo.learnin_rate=1"])
    assert data == default_dict()  # a failed override changes nothing


def test_an_override_key_given_twice_is_refused() -> None:
    # as YAML refuses a key twice in one mapping: the last one silently winning would hide a typo
    with pytest.raises(ValueError, match=r"^--set ppo\.gamma is given twice \('ppo\.gamma=0\.9' and ' ppo\.gamma "
                                         r"=0\.95'\); give it once$"):
        apply_overrides(default_dict(), ["ppo.gamma=0.9", "seed=1", " ppo.gamma =0.95"])
    with pytest.raises(ValueError, match="seed is given twice"):
        apply_overrides(default_dict(), ["seed=1", "seed=1"])  # even with the same value
    assert apply_overrides(default_dict(), ["ppo.gamma=0.9", "pool.bots=[greedy]"])["ppo"]["gamma"] == 0.9


def test_config_files_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"config file '.*nope\.yaml' does not exist"):
        load_config(tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("game: [\n")
    with pytest.raises(ValueError, match=r"config file '.*broken\.yaml' is not valid YAML"):
        load_config(broken)
    listed = tmp_path / "listed.yaml"
    listed.write_text("- game\n- env\n")
    with pytest.raises(ValueError, match=r"config file '.*listed\.yaml' must hold a mapping of sections"):
        load_config(listed)


def test_the_schema_defaults_are_the_quickstart_values() -> None:
    """docs/training.md: "The schema's defaults are the quickstart values" (every key but the name)."""
    quickstart = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text())
    defaults = default_dict()
    assert {k: v for k, v in defaults.items() if k != "name"} == {k: v for k, v in quickstart.items() if k != "name"}
    # the dataclasses' own defaults are the same values
    for f in dataclasses.fields(TrainConfig):
        if f.default is not dataclasses.MISSING:
            assert f.default == quickstart[f.name], f.name
    assert from_dict(defaults).to_dict() == {**quickstart, "name": defaults["name"]}


def test_a_dumped_config_loads_back_the_same_in_schema_order(tmp_path: Path) -> None:
    """The run's own keys first, then the sections, as the shipped configs and docs/training.md's reference
    order them (the dataclass puts the run's keys with defaults last)."""
    cfg = _load("network.attention_layers=1", "game.move_limit=null", "init_from=null", "ppo.target_kl=0.02")
    text = dump_yaml(cfg)
    fields = [f.name for f in dataclasses.fields(TrainConfig)]
    sections = [name for name in fields if dataclasses.is_dataclass(getattr(cfg, name))]
    assert list(yaml.safe_load(text)) == [*(name for name in fields if name not in sections), *sections]
    assert list(yaml.safe_load(text))[:6] == ["name", "seed", "device", "torch_threads", "processes", "init_from"]
    assert list(yaml.safe_load(text)["ppo"])[:2] == ["total_steps", "num_steps"]
    path = tmp_path / "config.yaml"
    path.write_text(text)
    assert load_config(path) == cfg


@pytest.mark.parametrize("name", shipped_config_names())
def test_print_config_lays_a_shipped_config_out_as_its_file(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``halma train NAME --print-config`` (a config of your own starts from it, docs/training.md) reads as the file:
    its keys line for line and its lists on one line.  It put device, torch_threads, processes and init_from after
    the sections and each list's items one a line.  (Values are written as the config holds them: 30.0 for a
    float key given as 30, single quotes; the comments are the file's.)"""
    from agents.cli import main

    assert main(["train", name, "--print-config"]) == 0
    printed = capsys.readouterr().out.splitlines()
    written = [line.partition("#")[0].rstrip() for line in config_path(name).read_text().splitlines()]
    written = [line for line in written if line]
    assert [line.partition(":")[0] for line in printed] == [line.partition(":")[0] for line in written]
    lists = [line.replace('"', "'") for line in written if line.endswith("]")]
    assert lists and all(line in printed for line in lists), lists


def test_an_unknown_key_in_a_config_file_suggests_the_nearest_known_one() -> None:
    data = default_dict()
    data["ppo"]["learnin_rate"] = data["ppo"].pop("learning_rate")
    data["pool"]["xyzzy"] = 1
    with pytest.raises(ValueError, match=r"^ppo: unknown key\(s\) ppo\.learnin_rate \(did you mean "
                                         r"'ppo\.learning_rate'\?\); known: total_steps, num_steps, "):
        from_dict(data)
    del data["ppo"]
    with pytest.raises(ValueError, match=r"^pool: unknown key\(s\) pool\.xyzzy; known: "):
        from_dict({**default_dict(), "pool": data["pool"]})


def test_every_key_is_in_the_docs_configuration_reference() -> None:
    """docs/training.md lists every key ("every hyper-parameter"): a key added to the schema without its row fails."""
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")

    def dotted(data: dict, prefix: str = ""):
        for key, value in data.items():
            yield from dotted(value, f"{prefix}{key}.") if isinstance(value, dict) else [f"{prefix}{key}"]

    keys = list(dotted(default_dict()))
    assert "game.repetition_limit" in keys and len(keys) > 60
    assert [key for key in keys if f"`{key}`" not in doc] == []


def test_a_shipped_config_loads_by_name_from_any_directory(tmp_path: Path, monkeypatch) -> None:
    """``halma train quickstart``: a bare name that is not a file here is a shipped config (an installed
    wheel has them in agents/configs, not the repository's configs/ folder); a file of that name wins."""
    from agents.config import config_path, shipped_config_names

    assert shipped_config_names() == sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    monkeypatch.chdir(tmp_path)
    assert load_config("star2").to_dict() == load_config(ROOT / "configs" / "star2.yaml").to_dict()
    assert config_path("quickstart") == ROOT / "configs" / "quickstart.yaml"
    Path("quickstart").mkdir()  # the run folder of `halma train quickstart --runs-dir .` does not hide it
    assert config_path("quickstart") == ROOT / "configs" / "quickstart.yaml"
    Path("quickstart").rmdir()
    Path("quickstart").write_text(yaml.safe_dump({**default_dict(), "name": "mine"}))
    assert config_path("quickstart") == Path("quickstart") and load_config("quickstart").name == "mine"
    Path("star2.yaml").write_text(yaml.safe_dump({**default_dict(), "name": "edited"}))  # --print-config > star2.yaml
    with pytest.raises(ValueError, match=r"config 'star2' names both 'star2\.yaml' here and the shipped config star2: "
                                         r"give 'star2\.yaml' for yours"):
        load_config("star2")
    assert load_config("star2.yaml").name == "edited"
    for given in ("quickstart.yaml", "configs/quickstart", "nosuch"):  # a suffix or a folder: a path, as given
        with pytest.raises(ValueError, match=rf"^config file '{given}' does not exist; the shipped configs, by "
                                             r"name: diamond2, diamond3, .*quickstart, star2, .*star6$"):
            load_config(given)
    with pytest.raises(ValueError, match=r"^config file 'quickstar' does not exist \(did you mean 'quickstart'\?\); "
                                         r"the shipped configs, by name: .*star6$"):
        load_config("quickstar")
    with pytest.raises(ValueError, match=r"^config file 'quickstar.yaml' does not exist; "):  # a path: no name meant
        load_config("quickstar.yaml")


def test_a_config_path_that_is_not_a_regular_file_is_named() -> None:
    with pytest.raises(ValueError, match=r"^config file '/dev/null' is not a regular file$"):
        load_config("/dev/null")


@pytest.mark.parametrize(("text", "tag", "column"), [
    ("variant: !!timestamp star\n", "!!timestamp", 10),  # AttributeError inside PyYAML
    ("!!set seed: 1\n", "!!set", 1),  # TypeError: unhashable type, at the check for a key given twice
    ("seed: !!set [1]\n", "!!set", 7),  # TypeError: cannot unpack non-iterable ScalarNode
    ("!!omap seed: 1\n", "!!omap", 1), ("seed: !!binary aGk=\n", "!!binary", 7), ("seed: ! 1\n", "!", 7)])
def test_yaml_tags_are_refused_in_a_file_and_in_an_override(tmp_path: Path, text: str, tag: str, column: int) -> None:
    """A fuzzing round found explicit tags escaping as TypeError or AttributeError; a config has no use for them."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^config file '.*c\.yaml' is not valid YAML at line 1, column {column}: "
                                         rf"a tag \({re.escape(tag)}\) is not allowed in a config: write the plain "):
        load_config(path)
    with pytest.raises(ValueError, match=rf"a tag \({re.escape(tag)}\) is not allowed in a config"):
        apply_overrides(default_dict(), [f"seed={tag} 1"])


def test_yaml_aliases_are_refused_in_a_file_and_in_an_override(tmp_path: Path) -> None:
    """Nested aliases make a small file spell out to gigabytes (a 2.4 KB config ran out of memory)."""
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20))
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    with pytest.raises(ValueError, match=r"is not valid YAML at line 2, column 8: an alias \(\*a\) is not allowed in "
                                         r"a config: write the value out$"):
        load_config(path)
    with pytest.raises(ValueError, match=r"--set pool\.bots: value .* is not valid YAML at column 13: an alias"):
        apply_overrides(default_dict(), ["pool.bots=[&r random, *r]"])
    anchored = tmp_path / "anchor.yaml"  # an anchor alone is harmless
    anchored.write_text(yaml.safe_dump(default_dict()).replace("name: run", "name: &n run"))
    assert load_config(anchored).name == "run"


def test_a_config_without_a_key_added_later_says_what_to_add() -> None:
    """A config written before game.repetition_limit existed (every config before 2026-12-06) is still refused
    (every key is required) but the error says what to write; a resume from such a checkpoint does not call
    the key a change."""
    from agents.config import config_changes, with_keys_added_later

    old = default_dict()
    del old["game"]["repetition_limit"]
    with pytest.raises(ValueError, match=r"^game: missing key\(s\) game\.repetition_limit; game\.repetition_limit is "
                                         r"new \(2026-12-06\): add 'repetition_limit: null' under game:"):
        from_dict(old)
    assert config_changes(with_keys_added_later(old), default_dict()) == []
    assert config_changes(old, default_dict()) == ["game.repetition_limit (none) -> None"]
    assert "repetition_limit" not in old["game"]  # the stored config is not changed
    for odd in ({}, {"game": 3}):  # a stored config of another shape is left as it is
        assert with_keys_added_later(odd) == odd


def test_a_resume_of_a_run_from_before_the_later_features_lists_no_false_changes() -> None:
    """The shipped star4.pt's config has no solitaire, imitation, crossing, processes or init_from keys and no
    attention or reach network keys (added later, off by default): a resume listed sixteen changes that were not,
    such as 'crossing.coef (none) -> 0.0', beside the one real one (log.progress_bar)."""
    import torch

    from agents.config import config_changes, load_config, with_keys_added_later

    stored = torch.load(ROOT / "agents" / "checkpoints" / "star4.pt", weights_only=False, map_location="cpu")["config"]
    assert "crossing" not in stored and "processes" not in stored and "attention_layers" not in stored["network"]
    now = load_config(str(ROOT / "configs" / "star4.yaml"), ["ppo.total_steps=2400000"]).to_dict()
    assert config_changes(with_keys_added_later(stored), now) == ["log.progress_bar False -> True"]
    assert len(config_changes(stored, now)) > 10


def _float_keys() -> list[str]:
    """Every dotted key whose value is a float (or float | None): ppo.ent_coef, pool.self_prob, ..."""
    import typing

    keys = []
    for section, cls in typing.get_type_hints(TrainConfig).items():
        if dataclasses.is_dataclass(cls):
            for name, tp in typing.get_type_hints(cls).items():
                if float in (typing.get_args(tp) or (tp,)):
                    keys.append(f"{section}.{name}")
    return keys


# NaN and infinity as YAML writes them (.nan, .inf: floats) and as text float() would have read (nan, inf, 1e999),
# and an integer past a float's range
NOT_FINITE = ["nan", "NaN", ".nan", ".NaN", "inf", "-inf", "Infinity", ".inf", "-.Inf", "+.INF", "1e999", "-1e999",
              "1" + "0" * 400]


@pytest.mark.parametrize("raw", NOT_FINITE)
def test_every_float_key_refuses_nan_and_infinity_naming_it(raw: str, tmp_path: Path) -> None:
    """`--set ppo.ent_coef=nan` passed (the text went straight through float(); `nan < 0` is false) and training
    crashed after writing its run folder."""
    keys = _float_keys()
    assert {"ppo.ent_coef", "ppo.target_kl", "pool.bot_prob", "crossing.coef", "log.status_every"} <= set(keys)
    for key in keys:  # (ppo.target_kl said "expected float or NoneType, got 'nan'" for the text nan)
        with pytest.raises(ValueError, match=rf"^{re.escape(key)}: expected a (finite )?number, got \S+$"):
            _load(f"{key}={raw}")
    path = tmp_path / "config.yaml"  # in a file too (the fuzzer's: `ent_coef: nan` in the quickstart)
    path.write_text((ROOT / "configs" / "quickstart.yaml").read_text().replace("ent_coef: 0.005", f"ent_coef: {raw}"))
    with pytest.raises(ValueError, match=r"^ppo\.ent_coef: expected a (finite )?number, got "):
        load_config(path)


def test_a_float_key_refuses_nan_and_infinity_as_data_too() -> None:
    """A config from a mapping (a checkpoint's stored config) holds floats and, from a YAML 1.1 loader, text."""
    for value in (float("nan"), float("inf"), "nan", "-inf", "1e999"):
        data = default_dict()
        data["ppo"]["vf_coef"] = value
        shown = re.escape(repr(value))
        with pytest.raises(ValueError, match=rf"^ppo\.vf_coef: expected a (finite )?number, got {shown}$"):
            from_dict(data)
    with pytest.raises(ValueError, match=r"^ppo\.target_kl: expected a finite number, got nan$"):  # float | None
        _load("ppo.target_kl=.nan")
    assert _load("ppo.vf_coef=1e-3").ppo.vf_coef == 0.001 and _load("ppo.vf_coef=2").ppo.vf_coef == 2.0
    data = default_dict()
    data["ppo"]["vf_coef"] = yaml.safe_load("x: 1e-3")["x"]  # YAML 1.1 reads 1e-3 as text: a number key refuses it
    with pytest.raises(ValueError) as caught:
        from_dict(data)
    assert str(caught.value) == ("ppo.vf_coef: expected a number, got '1e-3' (text, not a number: in a file, write the "
                                 "number without quotes; a mapping read with yaml.safe_load holds 1e-3 and 5e6 as "
                                 "text, agents.config.load_dict reads them as numbers)")


def test_the_cli_refuses_a_nan_override_and_writes_nothing(tmp_path: Path, capsys) -> None:
    from agents.cli import main

    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    assert main(["train", quickstart, "--set", "ppo.ent_coef=nan", "--print-config"]) == 2
    assert capsys.readouterr().err == "halma train: error: ppo.ent_coef: expected a number, got 'nan'\n"
    runs = tmp_path / "runs"
    assert main(["train", quickstart, "--set", "ppo.max_grad_norm=.inf", "--runs-dir", str(runs), "--quiet"]) == 2
    assert capsys.readouterr().err == "halma train: error: ppo.max_grad_norm: expected a finite number, got inf\n"
    assert not runs.exists()


# Each float key of each section, and what else the section needs to reach its check
NAN_CHECKED = [("game", "progress_shaping", {}), ("env", "solo_move_cost", {}),
               *[("ppo", key, {}) for key in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef",
                                               "vf_coef", "max_grad_norm", "target_kl")],
               *[("pool", key, {}) for key in ("self_prob", "snapshot_prob", "bot_prob")],
               ("imitation", "learning_rate", {"bot": "greedy", "games": 1, "epochs": 1}),
               ("imitation", "distill_coef", {}), ("crossing", "coef", {}), ("log", "status_every", {})]


@pytest.mark.parametrize(("section", "key", "others"), NAN_CHECKED, ids=[f"{s}.{k}" for s, k, _ in NAN_CHECKED])
def test_a_range_check_refuses_nan_in_a_section_built_directly(section: str, key: str, others: dict) -> None:
    """The checks were written `x < 0`, which NaN passes: each is written so that NaN fails it."""
    import typing

    cls = typing.get_type_hints(TrainConfig)[section]
    config = cls(**others, **{key: float("nan")})
    with pytest.raises(ValueError, match=rf"^{section}\.\S*.*\b{key}\b.*nan"):
        config.validate()
    assert sorted(f"{s}.{k}" for s, k, _ in NAN_CHECKED) == sorted(_float_keys())  # a new float key needs its case


@pytest.mark.parametrize(("text", "where"), [("name: run\n? [a, b]\n: 1\n", "line 2"), ("{[1]: 2}", "line 1"),
                                             ("{{a: 1}: 2}", "line 1")])
def test_a_yaml_key_that_is_a_list_or_a_mapping_is_refused(text: str, where: str, tmp_path: Path) -> None:
    """`? [a, b]` raised TypeError (unhashable type: 'list') in the duplicate-key check."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^config file '.*c\.yaml' is not valid YAML at {where}, column \d+: a key "
                                         r"must be a plain value, not a list or a mapping$"):
        load_config(path)
    with pytest.raises(ValueError, match=r"^--set name: value .* is not valid YAML at (line \d+, )?column \d+: a key "
                                         r"must be a plain value"):
        apply_overrides(default_dict(), [f"name={text}"])


def test_yaml_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    """3000 nested `[` raised RecursionError from the parser."""
    deep = "[" * 3000 + "]" * 3000
    path = tmp_path / "deep.yaml"
    path.write_text(f"name: {deep}\n")
    with pytest.raises(ValueError, match=r"^config file '.*deep\.yaml' is nested too deeply"):
        load_config(path)
    with pytest.raises(ValueError, match=r"^--set pool\.bots: value '\[{40}\.\.\.' is nested too deeply$"):
        apply_overrides(default_dict(), [f"pool.bots={deep}"])


@pytest.mark.parametrize(("raw", "value"), [("010", 10), ("007", 7), ("+5", 5), ("5e6", 5_000_000), ("1E3", 1000)])
def test_numbers_are_decimal_as_in_yaml_1_2(raw: str, value: int, tmp_path: Path) -> None:
    """YAML 1.1 (pyyaml's) read `seed=010` as 8 (octal), 1:00 as 60 (base 60) and 0b11 as 3."""
    assert _load(f"seed={raw}").seed == value
    path = tmp_path / "c.yaml"
    path.write_text((ROOT / "configs" / "quickstart.yaml").read_text().replace("seed: 1\n", f"seed: {raw}\n"))
    assert load_config(path).seed == value


@pytest.mark.parametrize("override", ["ppo.num_steps=1:00", "checkpoint.keep=0b11", "checkpoint.keep=0x10",
                                      "checkpoint.keep=0o7", "checkpoint.every=1_000", "seed=1__0"])
def test_yaml_1_1_integers_are_text_and_refused(override: str) -> None:
    key, raw = override.split("=")
    with pytest.raises(ValueError, match=rf"^{re.escape(key)}: expected an integer, got '{raw}'$"):
        _load(override)
    assert apply_overrides(default_dict(), [f"name={raw}"])["name"] == raw  # text, as YAML 1.2 reads it


def test_explicit_yaml_number_tags_take_decimals_only() -> None:
    for raw in ("!!int 0b11", "!!int 010.5", "!!float 1_0", "!!float abc"):
        with pytest.raises(ValueError, match=rf"^--set seed: value '{raw}' is not valid YAML at column 1: '\S+' is not "
                                             r"a decimal"):
            apply_overrides(default_dict(), [f"seed={raw}"])
    assert apply_overrides(default_dict(), ["seed=!!int 010"])["seed"] == 10
    with pytest.raises(ValueError, match=r"^--set seed: value '10{39}\.\.\.' is not valid YAML at column 1: an "
                                         r"integer of 5001 digits is too long$"):  # int() refuses over 4300 digits
        apply_overrides(default_dict(), ["seed=1" + "0" * 5000])


@pytest.mark.parametrize(("override", "expected"), [
    ("ppo.ent_coef=١", "a number"),  # an Arabic-Indic digit one
    ("ppo.ent_coef=٠.٥", "a number"),
    ("ppo.vf_coef=1_0", "a number"),
    ("ppo.total_steps=١e6", "an integer"),
    ("ppo.total_steps=1_0e6", "an integer"),
    ("seed=٥", "an integer"),
])
def test_non_ascii_digits_and_underscores_are_refused(override: str, expected: str) -> None:
    """float(), int(), Decimal and re's \\d take any script's digits, and float() and int() take 1_0."""
    key, raw = override.split("=")
    with pytest.raises(ValueError, match=rf"^{re.escape(key)}: expected {expected}, got '{raw}'$"):
        _load(override)
    data = default_dict()  # as text in a mapping too (a YAML 1.1 loader's reading)
    section, name = key.split(".") if "." in key else (None, key)
    (data[section] if section else data)[name] = raw
    with pytest.raises(ValueError, match=rf"^{re.escape(key)}: expected {expected}, got '{raw}'$"):
        from_dict(data)


def test_the_shipped_configs_read_as_yaml_1_1_read_them() -> None:
    """The loader reads numbers as YAML 1.2 does: every shipped config reads as it did."""
    from agents.config import load_dict

    paths = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(paths) >= 8
    for path in paths:
        assert load_dict(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path.name


def test_a_config_file_past_the_size_limit_is_refused_unread(tmp_path: Path, capsys) -> None:
    """A 100 MB config of one comment line took 53 s to parse; a file is read with a bound (256 KiB), and the
    error names the file and the bound."""
    from agents.cli import main
    from agents.config import MAX_CONFIG_BYTES

    assert MAX_CONFIG_BYTES == 256 * 1024
    quickstart = (ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8")
    fits = tmp_path / "fits.yaml"  # a comment line pads the quickstart to the limit exactly: read
    fits.write_text("#" + "x" * (MAX_CONFIG_BYTES - len(quickstart) - 2) + "\n" + quickstart, encoding="utf-8")
    assert fits.stat().st_size == MAX_CONFIG_BYTES and load_config(fits).name == "quickstart"
    big = tmp_path / "big.yaml"  # one byte more: refused
    big.write_text("#" + "x" * (MAX_CONFIG_BYTES - len(quickstart) - 1) + "\n" + quickstart, encoding="utf-8")
    message = (f"config file '{big}' holds {MAX_CONFIG_BYTES + 1} bytes, more than a config file may hold "
               f"({MAX_CONFIG_BYTES} bytes, 256 KiB)")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_config(big)
    huge = tmp_path / "huge.yaml"  # sparse: 100 MB that were never parsed
    with huge.open("wb") as f:
        f.write(b"#")
        f.truncate(100 * 2**20)
    assert main(["train", str(huge), "--print-config"]) == 2
    assert capsys.readouterr().err == (f"halma train: error: config file '{huge}' holds {100 * 2**20} bytes, more than "
                                       f"a config file may hold ({MAX_CONFIG_BYTES} bytes, 256 KiB)\n")
    with pytest.raises(ValueError, match=rf"^--set name: a value of {MAX_CONFIG_BYTES + 1} characters is longer than a "
                                         r"whole config file may be \(262144 bytes, 256 KiB\)$"):
        apply_overrides(default_dict(), ["name=" + "x" * (MAX_CONFIG_BYTES + 1)])


@pytest.mark.parametrize("key", ["pool.bots", "eval.opponents", "eval.final_opponents"])
def test_a_list_of_players_past_the_limit_is_refused_before_any_is_built(key: str, tmp_path: Path) -> None:
    """`pool.bots: [random x 300000]` (2.4 MB) took 35 s, each player built and checked, and was accepted."""
    from agents.config import MAX_PLAYERS_LISTED

    assert MAX_PLAYERS_LISTED == 256
    assert _load(f"{key}=[{', '.join(['random'] * MAX_PLAYERS_LISTED)}]")
    too_many = f"[{', '.join(['random'] * (MAX_PLAYERS_LISTED + 1))}]"
    message = rf"^{re.escape(key)} lists 257 players, more than the 256 a list may hold$"
    with pytest.raises(ValueError, match=message):
        _load(f"{key}={too_many}")
    section, name = key.split(".")
    path = tmp_path / "c.yaml"  # in a file: refused before a player is built, however many there are
    data = default_dict()
    data[section][name] = ["nobody"] * 30_000
    path.write_text(yaml.safe_dump(data, default_flow_style=None, width=2**20), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(key)} lists 30000 players, more than the 256"):
        load_config(path)


# Each size bound (docs/training.md "Configuration reference"), and what else a config at the bound needs
AT_THE_BOUND = {
    "env.num_envs": ["ppo.total_steps=1e6"],  # 16384 x 16 plies: the most steps of an update, 2**18
    "env.solo_envs": ["ppo.num_steps=8", "ppo.total_steps=1e6"],
    "ppo.num_steps": ["env.num_envs=32", "ppo.total_steps=1e6"],
    "network.channels": [], "network.blocks": [], "network.pair_dim": [], "network.value_hidden": [],
    "network.attention_layers": [],
    "pool.max_snapshots": [],
    "imitation.games": ["imitation.bot=greedy", "imitation.epochs=1"],
    "imitation.minibatch_size": [],
    "eval.games": [], "eval.final_games": [],
    "crossing.planner_width": ["crossing.coef=0.5"], "crossing.detour_width": [],
    "crossing.detours": ["crossing.planner_width=1", "crossing.coef=0.5"],
    "processes": [],
}


@pytest.mark.parametrize("key", list(AT_THE_BOUND))
def test_a_size_that_allocates_is_bounded_naming_the_bound(key: str) -> None:
    """`--set network.channels=100000000` tried to allocate gigabytes (a RuntimeError traceback) and
    `network.blocks=1000000` built layers for over a minute; `--print-config` took both."""
    from agents.config import MAX_SIZES

    assert list(MAX_SIZES) == list(AT_THE_BOUND)  # a new bound needs its case
    most = MAX_SIZES[key]
    cfg = _load(*AT_THE_BOUND[key], f"{key}={most}")
    node = cfg
    for part in key.split("."):
        node = getattr(node, part)
    assert node == most
    for value in (most + 1, 10**8):
        with pytest.raises(ValueError, match=rf"^{re.escape(key)} must be at most {most}, got {value}$"):
            _load(*AT_THE_BOUND[key], f"{key}={value}")


def test_the_steps_of_one_update_are_bounded_and_the_bounds_documented(capsys) -> None:
    from agents.cli import main
    from agents.config import MAX_SIZES, MAX_UPDATE_STEPS

    assert _load("env.num_envs=16384", "ppo.total_steps=1e6").env.num_envs == 16384  # 16384 x 16 = 2**18
    with pytest.raises(ValueError, match=r"^one update, \(env\.num_envs \+ env\.solo_envs\) x ppo\.num_steps = 278528 "
                                         r"steps, must be at most 262144 \(its steps are held in memory at once\)$"):
        _load("env.num_envs=16384", "ppo.num_steps=17", "ppo.total_steps=1e6")
    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    for override, shown in (("network.channels=100000000", "network.channels must be at most 1024, got 100000000"),
                            ("network.blocks=1000000", "network.blocks must be at most 64, got 1000000")):
        assert main(["train", quickstart, "--set", override, "--print-config"]) == 2
        assert capsys.readouterr().err == f"halma train: error: {shown}\n"
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    reference = doc[doc.index("## Configuration reference"):doc.index("## Metrics")]
    assert f"{MAX_UPDATE_STEPS:,}" in reference and "256 KiB" in reference and "256 players" in reference
    for key, most in MAX_SIZES.items():
        assert re.search(rf"`{re.escape(key)}`[^|\n]*\| [^\n]*at most {most:,}\b", reference), key


def test_eval_move_limit_is_bounded_by_the_engine_s_largest_limit(capsys) -> None:
    """`--set eval.move_limit=10000000000000` was taken (before 2026-12-07), and the run failed at its first
    evaluation, whose Rules refuse a move limit past halma_env.rules.MAX_LIMIT."""
    from agents.cli import main
    from halma_env.rules import MAX_LIMIT

    cfg = _load(f"eval.move_limit={MAX_LIMIT}")
    assert cfg.game.rules().replace(move_limit=cfg.eval.move_limit).move_limit == MAX_LIMIT  # as agents/ppo.py
    for value, shown in ((MAX_LIMIT + 1, str(MAX_LIMIT + 1)), (10**13, str(10**13)),
                         ("1e300", "an integer of 997 bits")):
        with pytest.raises(ValueError, match=rf"^eval\.move_limit must be at most {MAX_LIMIT} \(the engine's largest "
                                             rf"move limit\), got {shown}$"):
            _load(f"eval.move_limit={value}")
    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    assert main(["train", quickstart, "--set", "eval.move_limit=10000000000000", "--print-config"]) == 2
    assert capsys.readouterr().err == ("halma train: error: eval.move_limit must be at most 999999999999 (the engine's "
                                       "largest move limit), got 10000000000000\n")
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    reference = doc[doc.index("## Configuration reference"):doc.index("## Metrics")]
    assert re.search(rf"\| `eval\.move_limit` \|[^\n]*at most {MAX_LIMIT:,}\b", reference)


# Each count bound (docs/training.md "Configuration reference"), and what else a config at the bound needs
COUNTS_AT_THE_BOUND = {
    "ppo.update_epochs": [], "imitation.epochs": ["imitation.bot=greedy", "imitation.games=1"],
    "pool.snapshot_every": [], "checkpoint.every": [], "checkpoint.keep": [],
}


@pytest.mark.parametrize("key", list(COUNTS_AT_THE_BOUND))
def test_a_count_of_epochs_or_updates_is_bounded_naming_the_bound(key: str) -> None:
    """`ppo.update_epochs`, `imitation.epochs`, `pool.snapshot_every`, `checkpoint.every` and `checkpoint.keep` took
    10**30 and 1e300 (before 2026-12-07): an update that never ends, a cadence no run reaches."""
    from agents.config import MAX_COUNTS

    assert list(MAX_COUNTS) == list(COUNTS_AT_THE_BOUND)  # a new bound needs its case
    most = MAX_COUNTS[key]
    cfg = _load(*COUNTS_AT_THE_BOUND[key], f"{key}={most}")
    section, name = key.split(".")
    assert getattr(getattr(cfg, section), name) == most
    for value, shown in ((most + 1, str(most + 1)), (10**30, str(10**30)), ("1e300", "an integer of 997 bits")):
        with pytest.raises(ValueError, match=rf"^{re.escape(key)} must be at most {most}, got {shown}$"):
            _load(*COUNTS_AT_THE_BOUND[key], f"{key}={value}")
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    reference = doc[doc.index("## Configuration reference"):doc.index("## Metrics")]
    assert re.search(rf"`{re.escape(key)}`[^|\n]*\| [^\n]*at most {most:,}\b", reference), key


def test_halma_bench_train_s_config_is_within_the_count_bounds() -> None:
    from agents.train import bench_config

    assert bench_config().checkpoint.every == 10**9  # no checkpoint but the last: the bound itself


# Each loss weight (and the PPO clip), and what else a config with it > 0 needs
COEFS = {"ppo.clip_coef": [], "ppo.ent_coef": [], "ppo.vf_coef": [],
         "imitation.distill_coef": ["imitation.bot=greedy"], "crossing.coef": ["crossing.planner_width=1"]}


@pytest.mark.parametrize("key", list(COEFS))
def test_a_loss_weight_is_bounded_naming_the_bound(key: str) -> None:
    """A `ppo.clip_coef` of 1e39 was taken (before 2026-12-07) and torch refused it at the first update ("value
    cannot be converted to type float without overflow"); a loss weight of 1e39 made every loss infinite, and the
    run stopped as diverged at its first update."""
    from agents.config import COEF_KEYS, MAX_COEF

    assert list(COEF_KEYS) == list(COEFS) and MAX_COEF == 1e9
    section, name = key.split(".")
    assert getattr(getattr(_load(*COEFS[key], f"{key}=1e9"), section), name) == 1e9
    for value, shown in (("1.0000001e9", r"1e\+09"), ("1e10", r"1e\+10"), ("1e39", r"1e\+39"), ("1e300", r"1e\+300")):
        with pytest.raises(ValueError, match=rf"^{re.escape(key)} must be at most 1e\+09 \(the losses are float32\), "
                                             rf"got {shown}$"):
            _load(*COEFS[key], f"{key}={value}")
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    reference = doc[doc.index("## Configuration reference"):doc.index("## Metrics")]
    assert re.search(rf"`{re.escape(key)}`[^|\n]*\| [^\n]*at most 1e9\b", reference), key


def test_an_empty_override_value_is_refused_not_taken_as_null(capsys) -> None:
    """`--set game.move_limit=` (an unset shell variable) was null (before 2026-12-07): `--print-config` showed
    `move_limit: null`, a run without a move limit.  Refused as `--rule move_limit=` is; null is written out."""
    from agents.cli import main

    for raw in ("", " ", "\t"):
        with pytest.raises(ValueError, match=r"^--set game\.move_limit has an empty value in "
                                             r"'game\.move_limit=(?: |\\t)?' \(write game\.move_limit=null for no "
                                             r"value\)$"):
            apply_overrides(default_dict(), [f"game.move_limit={raw}"])
    for key in ("seed", "ppo.learning_rate", "name"):  # keys that take no null
        with pytest.raises(ValueError, match=rf"^--set {re.escape(key)} has an empty value in '{re.escape(key)}=' "
                                             r"\(give it a value\)$"):
            apply_overrides(default_dict(), [f"{key}="])
    for key in ("pool.bots", "eval.opponents"):  # a list: the empty one is written []
        with pytest.raises(ValueError, match=rf"^--set {re.escape(key)} has an empty value in '{re.escape(key)}=' "
                                             rf"\(write {re.escape(key)}=\[\] for an empty list\)$"):
            apply_overrides(default_dict(), [f"{key}="])
    for spelled in ("null", "Null", "NULL", "~"):
        assert _load(f"game.move_limit={spelled}").game.move_limit is None
    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    assert main(["train", quickstart, "--set", "game.move_limit=", "--print-config"]) == 2
    out, err = capsys.readouterr()
    assert not out and err == ("halma train: error: --set game.move_limit has an empty value in 'game.move_limit=' "
                               "(write game.move_limit=null for no value)\n")
    assert main(["train", quickstart, "--set", "game.move_limit=null", "--print-config"]) == 0
    assert "  move_limit: null\n" in capsys.readouterr().out


# Each case: a number key given quoted text, and the type its error expects
QUOTED_NUMBERS = [("seed", "'5e6'", "an integer"), ("seed", "'5'", "an integer"), ("seed", "'5.0'", "an integer"),
                  ("ppo.total_steps", "'1.5e5'", "an integer"), ("pool.self_prob", "'0.5'", "a number"),
                  ("ppo.learning_rate", "'1e-3'", "a number"), ("game.move_limit", "'300'", "int or NoneType"),
                  ("ppo.target_kl", "'0.01'", "float or NoneType")]


@pytest.mark.parametrize(("key", "quoted", "expected"), QUOTED_NUMBERS, ids=[f"{k}={q}" for k, q, _ in QUOTED_NUMBERS])
def test_a_number_key_refuses_a_quoted_number_naming_the_key(key: str, quoted: str, expected: str,
                                                             tmp_path: Path) -> None:
    """In a config file `seed: '5e6'` was taken as 5000000 and `self_prob: '0.5'` as 0.5 (before 2026-12-07), while
    `seed: '5'` was refused: quoted, each is text, which a number key refuses alike."""
    message = (rf"^{re.escape(key)}: expected {expected}, got {re.escape(quoted)} \(text, not a number: (in a file, )?"
               r"write the number without quotes(\)$|; a mapping read with yaml\.safe_load)")
    with pytest.raises(ValueError, match=message):
        _load(f"{key}={quoted}")
    section, _, name = key.rpartition(".")
    data = default_dict()
    (data[section] if section else data)[name] = quoted.strip("'")
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(data))  # (YAML's flow style, every string quoted: "5e6")
    assert f'"{name}": "{quoted.strip(chr(39))}"' in path.read_text()
    with pytest.raises(ValueError, match=message):
        load_config(path)
    assert _load(f"{key}={quoted.strip(chr(39))}") is not None  # unquoted: the number


# Each case: a broken config file, and the one line its error must end with (line and column counted from 1)
BROKEN_YAML = [
    ("name: x\nseed: 1\ngame:\n    \tvariant: star\n", r"at line 4, column 5: found character '\\t' that cannot start "
                                                         r"any token"),
    ("game: [\n", r"at line 2, column 1: expected the node content, but found '<stream end>'"),
    ("name: 'abc\n", r"at line 2, column 1: found unexpected end of stream \(while scanning a quoted scalar at "
                     r"line 1, column 7\)"),
    ("name: a\nseed: 1\nname: b\n", r"at line 3, column 1: key 'name' is given twice"),
    ("name: a: b\n", r"at line 1, column 8: mapping values are not allowed here"),
    ("name: a\nseed: \x01\n", r"at line 2, column 7: unacceptable character #x0001: special characters are not "
                              r"allowed"),
    ("pool:\n  bots: [random, greedy\nseed: 1\n", r"at line 3, column 5: expected ',' or '\]', but got ':' \(while "
                                                  r"parsing a flow sequence at line 2, column 9\)"),
]


@pytest.mark.parametrize(("text", "message"), BROKEN_YAML, ids=[t.split("\n")[0] for t, _ in BROKEN_YAML])
def test_a_yaml_syntax_error_is_one_line_naming_the_file_line_and_column(text: str, message: str, tmp_path: Path,
                                                                         capsys) -> None:
    """PyYAML's message spans 4-8 lines (its mark, the text and a caret): `halma train` printed them all."""
    from agents.cli import main

    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^config file '{re.escape(str(path))}' is not valid YAML {message}$"):
        load_config(path)
    assert main(["train", str(path), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"halma train: error: config file '{path}' is not valid YAML at line ")
    assert err.count("\n") == 1 and err.endswith("\n")


def test_a_yaml_syntax_error_in_an_override_is_one_line(capsys) -> None:
    from agents.cli import main

    with pytest.raises(ValueError, match=r"^--set pool\.bots: value '\[random' is not valid YAML at column 8: expected "
                                         r"',' or '\]', but got '<stream end>' \(while parsing a flow sequence at "
                                         r"column 1\)$"):
        apply_overrides(default_dict(), ["pool.bots=[random"])
    with pytest.raises(ValueError, match=r"^--set name: value 'a\\n\\tb' is not valid YAML at line 2, column 1: found "
                                         r"character '\\t' that cannot start any token$"):
        apply_overrides(default_dict(), ["name=a\n\tb"])
    assert main(["train", str(ROOT / "configs" / "quickstart.yaml"), "--set", "name='x", "--print-config"]) == 2
    assert capsys.readouterr().err == ("halma train: error: --set name: value \"'x\" is not valid YAML at column 3: "
                                       "found unexpected end of stream (while scanning a quoted scalar at column 1)\n")


@pytest.mark.parametrize("word", ["on", "off", "yes", "no", "On", "OFF", "Yes", "NO", "y", "n"])
def test_yaml_1_1_booleans_are_text_as_in_yaml_1_2(word: str, tmp_path: Path) -> None:
    """`anneal_lr: on` was read as true, and `name: off` was refused with "got False": YAML 1.2 reads on, off,
    yes and no as text, so a bool key refuses them showing the word written, and a string key takes them."""
    hint = " (YAML 1.2 booleans: on, off, yes and no are text)" if word not in "yn" else ""
    with pytest.raises(ValueError, match=rf"^ppo\.anneal_lr: expected true or false, got '{word}'{re.escape(hint)}$"):
        _load(f"ppo.anneal_lr={word}")
    cfg = _load(f"name={word}")
    assert cfg.name == word
    path = tmp_path / "c.yaml"
    path.write_text(dump_yaml(cfg), encoding="utf-8")  # quoted: YAML 1.1 readers take it as text too
    assert load_config(path) == cfg and yaml.safe_load(path.read_text(encoding="utf-8"))["name"] == word
    quickstart = (ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8")
    assert "name: quickstart\n" in quickstart and "anneal_lr: true\n" in quickstart
    path.write_text(quickstart.replace("name: quickstart\n", f"name: {word}\n"), encoding="utf-8")
    assert load_config(path).name == word
    path.write_text(quickstart.replace("anneal_lr: true\n", f"anneal_lr: {word}\n"), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^ppo\.anneal_lr: expected true or false, got '{word}'"):
        load_config(path)


def test_yaml_1_2_booleans_are_still_booleans() -> None:
    for word, value in (("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False),
                        ("FALSE", False), ("!!bool true", True)):
        assert _load(f"ppo.anneal_lr={word}").ppo.anneal_lr is value
    with pytest.raises(ValueError, match=r"^--set ppo\.anneal_lr: value '!!bool yes' is not valid YAML at column 1: "
                                         r"'yes' is not true or false$"):
        apply_overrides(default_dict(), ["ppo.anneal_lr=!!bool yes"])


def test_a_cpu_device_in_any_spelling_torch_takes_is_the_cpu() -> None:
    """The processes check compared strings: ``device: cpu:0`` (a CPU) with ``processes: 2`` was refused as not the
    CPU; ``--print-config --set device=foo`` printed ``device: foo``."""
    from agents.config import device_type, is_cpu_device

    assert [is_cpu_device(name) for name in ("cpu", "cpu:0", "cpu:1", " cpu ")] == [True] * 4
    assert [is_cpu_device(name) for name in ("cuda", "cuda:0", "CPU", "cpu0", "foo", "")] == [False] * 6
    assert [device_type(name) for name in ("cuda:1", "mps", "gpu", "cuda:01")] == ["cuda", "mps", None, None]


def test_the_config_module_checks_the_device_without_torch() -> None:
    """`halma train --help` and `--print-config` stay fast: loading and validating a config imports no torch."""
    import subprocess
    import sys

    code = ("import sys; from agents.config import apply_overrides, default_dict, from_dict; "
            "from_dict(apply_overrides(default_dict(), ['device=cpu:0', 'processes=2'])); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out == "False\n"


def test_a_resume_lists_init_from_and_imitation_as_unused() -> None:
    """``init_from`` (and imitation's games and epochs) only start a fresh run: a resume listed a new
    ``init_from`` as a change as if it took effect."""
    from agents.config import config_changes

    before = default_dict()
    after = apply_overrides(before, [f"init_from={DIAMOND2}", "imitation.games=3", "imitation.epochs=2",
                                     "imitation.learning_rate=0.01", "ppo.total_steps=9"])
    assert config_changes(before, after) == [
        "imitation.epochs 0 -> 2 (unused by a resume)", "imitation.games 0 -> 3 (unused by a resume)",
        "imitation.learning_rate 0.001 -> 0.01 (unused by a resume)",
        f"init_from None -> {DIAMOND2!r} (unused by a resume)", "ppo.total_steps 150000 -> 9"]
