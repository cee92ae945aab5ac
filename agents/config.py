"""Training configuration: a strict schema of dataclasses loaded from YAML.

Every key of a config file must be known and every required key present; a typo or a missing
key raises ``ValueError`` naming it (with its dotted path).  ``--set section.key=value``
overrides are parsed as YAML scalars and validated the same way.  Numbers and booleans are read as YAML 1.2
reads them (decimal, ASCII digits: ``010`` is 10, ``1:00`` and ``0b11`` are text; only ``true`` and ``false``
are booleans, ``on``, ``off``, ``yes`` and ``no`` are text), and a number key refuses NaN and infinity.  A
config file holds at most ``MAX_CONFIG_BYTES``; the sizes that allocate memory (network widths and depths,
games side by side, a rollout's steps, ...) are bounded by ``MAX_SIZES``, the counts of epochs and of updates
by ``MAX_COUNTS``, the loss weights by ``MAX_COEF``, and the lists of players by ``MAX_PLAYERS_LISTED``.  An
empty ``--set`` value is refused (no value is written ``null``), and so is text for a number key (``'5e6'``).
docs/training.md lists every key.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol, cast

import yaml

from agents.files import is_empty_path, portable_file_name, quoted_path
from halma_env.files import FileTooLarge, NotARegularFile, read_regular_file, special_file_kind
from halma_env.rewards import MAX_SHAPING, REWARD_SCHEMES
from halma_env.rules import ASCII_DECIMAL, LIMIT_OUTCOMES, MAX_LIMIT, Rules
from halma_env.suggest import did_you_mean, shown_value

# A config file holds at most this (the shipped ones are about 2 KB): PyYAML read a 100 MB one for 53 s, and
# takes about a second over 256 KiB of a list on the shared 2-core machine (5 s over 1 MiB)
MAX_CONFIG_BYTES = 256 << 10
# The most each size that allocates memory (or a layer, a process, a copy of the network per unit) may be: far
# above any config's (the largest shipped or documented value in brackets), far below what fails.  network.channels
# 10**8 tried to allocate gigabytes (a RuntimeError), network.blocks 10**6 built layers for minutes.
MAX_SIZES: dict[str, int] = {
    "env.num_envs": 16384,  # (256)
    "env.solo_envs": 16384,  # (64)
    "ppo.num_steps": 4096,  # (64)
    "network.channels": 1024,  # (64)
    "network.blocks": 64,  # (6)
    "network.pair_dim": 1024,  # (64)
    "network.value_hidden": 4096,  # (128)
    "network.attention_layers": 16,  # (1)
    "pool.max_snapshots": 500,  # (5) a network each
    "imitation.games": 10000,  # (300) every decision of every game is held in memory
    "imitation.minibatch_size": 65536,  # (256)
    # an evaluation plays all its games side by side, a Game and a bot each, and the learner's positions of a ply
    # in one forward pass: 10,000 games of the quickstart network took 390 MB more at their peak, of the 32 x 4
    # network 550 MB (100,000: gigabytes, after the whole training for eval.final_games)
    "eval.games": 10000,  # (50)
    "eval.final_games": 10000,  # (100)
    "crossing.planner_width": 100_000,  # (3000)
    "crossing.detour_width": 100_000,  # (300)
    "crossing.detours": 1000,  # (30)
    "processes": 64,  # (2)
}
# The most each count of passes or of updates may be, which allocates nothing but must be reached: an epoch count past
# these never ends its update (or its imitation fit), and a cadence in updates past 10**9 is never reached, as a run
# makes far fewer updates (the shipped runs: under 600; at 1,000 updates a second 10**9 take 11 days), so it means
# what 10**9 means (`halma bench train` gives checkpoint.every 10**9: no checkpoint but the last).  Until 2026-12-07
# they took 10**30 and 1e300 (an integer of 997 bits).
MAX_COUNTS: dict[str, int] = {
    "ppo.update_epochs": 10_000,  # (2) each a pass over the update's steps
    "imitation.epochs": 10_000,  # (6) each a pass over every recorded decision
    "pool.snapshot_every": 10**9,  # (20) updates
    "checkpoint.every": 10**9,  # (25) updates
    "checkpoint.keep": 10**9,  # (2) numbered checkpoints, at most one an update
}
# the most a loss weight or the PPO clip may be: far above any useful value (the configs use 0-0.5), and low enough
# that float32, which the losses are computed in, holds it: torch refused a ppo.clip_coef of 1e39 at the first update
# ("value cannot be converted to type float without overflow"), and a weight of 1e39 made every loss infinite, which
# stopped the run at its first update as diverged (as game.progress_shaping's halma_env.rewards.MAX_SHAPING)
MAX_COEF = 1e9
COEF_KEYS = ("ppo.clip_coef", "ppo.ent_coef", "ppo.vf_coef", "imitation.distill_coef", "crossing.coef")
# one update's steps, (env.num_envs + env.solo_envs) x ppo.num_steps, are held in memory at once (4096)
MAX_UPDATE_STEPS = 1 << 18
# pool.bots, eval.opponents and eval.final_opponents: each player is built while the config loads (300,000
# bots took 35 s); a list is a handful of players
MAX_PLAYERS_LISTED = 256


def _check_sizes(section: str, values: Any) -> None:
    """``ValueError`` naming the first size or count of ``section`` ('' for the top level) past its bound
    (``MAX_SIZES``, ``MAX_COUNTS``), or the first loss weight past ``MAX_COEF`` (``COEF_KEYS``)."""
    prefix = f"{section}." if section else ""
    for dotted, most in (*MAX_SIZES.items(), *MAX_COUNTS.items()):
        name = dotted[len(prefix):]
        if dotted.startswith(prefix) and "." not in name and (value := getattr(values, name)) > most:
            raise ValueError(f"{dotted} must be at most {most}, got {shown_value(value)}")
    for dotted in COEF_KEYS:
        name = dotted[len(prefix):]
        if dotted.startswith(prefix) and "." not in name and (value := getattr(values, name)) > MAX_COEF:
            shown = f"{value:g}" if isinstance(value, float) else shown_value(value)  # (an int of a section built
            # directly may be past a float's range)
            raise ValueError(f"{dotted} must be at most {MAX_COEF:g} (the losses are float32), got {shown}")


def _check_players_listed(key: str, players: list[str]) -> None:
    if len(players) > MAX_PLAYERS_LISTED:
        raise ValueError(f"{key} lists {len(players)} players, more than the {MAX_PLAYERS_LISTED} a list may hold")


@dataclass
class GameConfig:
    """The game the agent learns: variant, seats, rule options and the reward."""

    variant: str = "star"
    num_players: int = 2
    anti_blocking: bool | None = None  # None: the variant's default
    play_to_end: bool = True
    move_limit: int | None = 300  # training games need an end: random play never finishes
    limit_outcome: str = "progress"  # at the move limit rank unfinished seats by progress
    stall_limit: int | None = None
    # null: the variant's default (3 for halma16, none otherwise, as anti_blocking); false: no repetition rule
    repetition_limit: int | bool | None = None
    reward: str = "place"  # halma_env.rewards scheme
    progress_shaping: float = 1.0  # total shaping of a whole crossing (0 = off)

    def rules(self, first_seat: int = 0) -> Rules:
        options: dict[str, Any] = dict(
            play_to_end=self.play_to_end, move_limit=self.move_limit, limit_outcome=self.limit_outcome,
            stall_limit=self.stall_limit, first_seat=first_seat,
        )
        if self.anti_blocking is not None:
            options["anti_blocking"] = self.anti_blocking
        if self.repetition_limit is not None:
            options["repetition_limit"] = None if self.repetition_limit is False else self.repetition_limit
        return Rules(self.variant, self.num_players, **options)

    def validate(self) -> None:
        if self.num_players < 2:
            raise ValueError(f"game.num_players must be at least 2 for self-play, got {self.num_players}")
        if self.reward not in REWARD_SCHEMES:
            raise ValueError(f"game.reward must be one of {', '.join(REWARD_SCHEMES)}, got {self.reward!r}")
        if self.limit_outcome not in LIMIT_OUTCOMES:
            raise ValueError(f"game.limit_outcome must be one of {', '.join(LIMIT_OUTCOMES)}, "
                             f"got {self.limit_outcome!r}")
        if not 0 <= self.progress_shaping <= MAX_SHAPING:  # written so, not `< 0`: NaN fails every comparison
            raise ValueError(f"game.progress_shaping must be >= 0 and at most {MAX_SHAPING:g} (the engines' bound), "
                             f"got {self.progress_shaping:g}")
        limit = self.repetition_limit
        if limit is True or (limit is not None and limit is not False and limit < 2):
            raise ValueError(f"game.repetition_limit must be an integer >= 2, false (no repetition rule) or null "
                             f"(the variant's default), got {limit!r}")
        try:
            self.rules()  # Rules validates the variant, seat count and options
        except ValueError as exc:  # its messages name the option ("move_limit ..."): say it is game.'s
            raise ValueError(f"game: {exc}") from None


@dataclass
class EnvConfig:
    num_envs: int = 128  # games played side by side (128 x 16 plies: the batched engine and the rollout's
    # forward pass amortise their per-call cost; docs/training.md "Speed")
    engine: str = "auto"  # "batched" (torch, halma_env.batched), "scalar" (N Game objects) or "auto"
    solo_envs: int = 0  # star only: this many more games are the 1-seat solitaire crossing, played by the same
    # network (it sees the board without opponents there; docs/training.md "Solitaire games")
    solo_move_cost: float = 0.0  # reward taken from each solitaire move: a shorter crossing earns more

    def validate(self) -> None:
        if self.num_envs < 1:
            raise ValueError(f"env.num_envs must be >= 1, got {self.num_envs}")
        if self.solo_envs < 0:
            raise ValueError(f"env.solo_envs must be >= 0, got {self.solo_envs}")
        if not 0 <= self.solo_move_cost < 1:
            raise ValueError(f"env.solo_move_cost must be in [0, 1), got {self.solo_move_cost}")
        if self.engine not in ("auto", "batched", "scalar"):
            raise ValueError(f"env.engine must be auto, batched or scalar, got {self.engine!r}")
        _check_sizes("env", self)


@dataclass
class PPOConfig:
    """CleanRL's ppo.py hyper-parameters, same names but ``total_steps`` for its ``total_timesteps``
    (defaults: the quickstart's values)."""

    total_steps: int = 150_000  # environment steps (plies of all seats)
    num_steps: int = 16  # plies per environment per rollout
    learning_rate: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 0.99  # per own move of a seat
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.005
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None

    def validate(self) -> None:
        for name in ("total_steps", "num_steps", "num_minibatches", "update_epochs"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"ppo.{name} must be >= 1, got {value}")
        if not 0 < self.learning_rate < 1:
            raise ValueError(f"ppo.learning_rate must be in (0, 1), got {self.learning_rate}")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= (value := getattr(self, name)) <= 1:
                raise ValueError(f"ppo.{name} must be in [0, 1], got {value}")
        for name in ("clip_coef", "ent_coef", "vf_coef"):
            if not (value := getattr(self, name)) >= 0:  # (NaN fails `>= 0`, as every range check here is written)
                raise ValueError(f"ppo.{name} must be >= 0, got {value}")
        if not self.max_grad_norm > 0:  # 0 clips every gradient to nothing: PPO and imitation would learn nothing
            raise ValueError(f"ppo.max_grad_norm must be > 0 (the gradient norm PPO and the imitation fit clip to; "
                             f"0 would stop all learning), got {self.max_grad_norm}")
        if self.target_kl is not None and not self.target_kl > 0:
            raise ValueError(f"ppo.target_kl must be > 0 (null: no early stop), got {self.target_kl}")
        _check_sizes("ppo", self)


@dataclass
class NetworkConfig:
    """The hole network (agents/network.py)."""

    channels: int = 16  # features per hole
    blocks: int = 2  # residual hex/square convolutions over the holes
    pair_dim: int = 16  # size of the source/destination embeddings of the bilinear move head
    value_hidden: int = 32
    position_embedding: bool = True  # a learned vector per canonical hole
    attention_layers: int = 0  # global self-attention layers over the holes after the convolutions
    reach_features: bool = False  # jump-chain planes of both sides added to the input (2 seats; agents/network.py)

    def validate(self) -> None:
        for name in ("channels", "pair_dim", "value_hidden"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"network.{name} must be >= 1, got {value}")
        if self.blocks < 0:
            raise ValueError(f"network.blocks must be >= 0, got {self.blocks}")
        if self.attention_layers < 0:
            raise ValueError(f"network.attention_layers must be >= 0, got {self.attention_layers}")
        # (the upper bounds, MAX_SIZES, are TrainConfig's: a checkpoint's stated network is validated here too,
        # and then checked against its weights, which name a size no weight has; agents/checkpoint.py)
        if self.attention_layers:
            from agents.network import ATTENTION_HEADS  # here: torch only when a config asks for attention

            if self.channels % ATTENTION_HEADS:
                raise ValueError(f"network.channels must be divisible by {ATTENTION_HEADS} (the attention heads) "
                                 f"when network.attention_layers > 0; got {self.channels}")


@dataclass
class PoolConfig:
    """Who the learner plays in each new game (sampled per game, per environment)."""

    self_prob: float = 0.5  # every seat is the learner (latest weights)
    snapshot_prob: float = 0.2  # one learner seat, the others a past snapshot (uniform over the pool)
    bot_prob: float = 0.3  # one learner seat, the others a heuristic bot (uniform over `bots`)
    bots: list[str] = field(default_factory=lambda: ["random", "greedy"])
    snapshot_every: int = 10  # updates between snapshots added to the pool
    max_snapshots: int = 5  # the oldest snapshot leaves the pool beyond this

    def validate(self) -> None:
        probs = (self.self_prob, self.snapshot_prob, self.bot_prob)
        if not (all(p >= 0 for p in probs) and abs(sum(probs) - 1) <= 1e-6):  # (so NaN fails it)
            raise ValueError(f"pool.self_prob + snapshot_prob + bot_prob must be 1 (each >= 0), got {probs}")
        if self.bot_prob > 0 and not self.bots:
            raise ValueError(f"pool.bots is empty but pool.bot_prob is {self.bot_prob}: name bots or set "
                             "pool.bot_prob to 0")
        for name in ("snapshot_every", "max_snapshots"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"pool.{name} must be >= 1, got {value}")
        _check_sizes("pool", self)
        _check_players_listed("pool.bots", self.bots)


@dataclass
class ImitationConfig:
    """Before PPO, a fresh network learns a bot's moves (``agents/imitation.py``); ``bot: null`` skips it."""

    bot: str | None = None  # a bot spec of agents.registry (e.g. greedy) holding every seat of the recorded games
    games: int = 0  # bot-only games recorded (the last tenth held out to report accuracy)
    epochs: int = 0  # passes over the recorded decisions
    learning_rate: float = 1e-3
    minibatch_size: int = 256
    distill_coef: float = 0.0  # during PPO: weight of a cross-entropy toward the bot's move on the learner's
    # own positions, annealed with the learning rate (0: off)

    def validate(self) -> None:
        if not self.distill_coef >= 0:  # (NaN fails it)
            raise ValueError(f"imitation.distill_coef must be >= 0, got {self.distill_coef}")
        _check_sizes("imitation", self)
        # checked with or without a bot: a stored config that a later `--set imitation.bot=...` refuses is
        # inconsistent
        if not 0 < self.learning_rate < 1:
            raise ValueError(f"imitation.learning_rate must be in (0, 1), got {self.learning_rate}")
        if self.minibatch_size < 1:
            raise ValueError(f"imitation.minibatch_size must be >= 1, got {self.minibatch_size}")
        if self.bot is None:
            if self.games or self.epochs or self.distill_coef:
                raise ValueError("imitation.games, imitation.epochs and imitation.distill_coef need imitation.bot "
                                 f"(null: no imitation), got {self.games}, {self.epochs} and {self.distill_coef}")
            return
        if (self.games < 1 or self.epochs < 1) and not (self.games == self.epochs == 0 and self.distill_coef > 0):
            raise ValueError(f"imitation.bot {self.bot!r} needs imitation.games >= 1 and imitation.epochs >= 1 (or "
                             f"both 0 with imitation.distill_coef > 0), got {self.games} and {self.epochs}")


@dataclass
class CrossingConfig:
    """Star only: the solitaire crossing learnt from the planner's lines (``agents/bots/crossing.py``)."""

    planner_width: int = 0  # beam width of the main line, planned from the start (0: off)
    detours: int = 0  # more lines, each planned from a position one wrong move off the main line
    detour_width: int = 200  # beam width of the detours' plans
    coef: float = 0.0  # weight of the cross-entropy toward the planned moves in every PPO minibatch

    def validate(self) -> None:
        for name, least in (("planner_width", 0), ("detours", 0), ("detour_width", 1)):
            if (value := getattr(self, name)) < least:
                raise ValueError(f"crossing.{name} must be >= {least}, got {value}")
        _check_sizes("crossing", self)
        if not self.coef >= 0:  # (NaN fails it)
            raise ValueError(f"crossing.coef must be >= 0, got {self.coef}")
        if (self.planner_width > 0) != (self.coef > 0):
            raise ValueError("crossing.planner_width and crossing.coef go together: both > 0 to learn the planner's "
                             f"crossing, both 0 for none (got {self.planner_width} and {self.coef})")
        if self.detours and not self.planner_width:
            raise ValueError(f"crossing.detours need crossing.planner_width > 0, got {self.detours} and "
                             f"{self.planner_width}")


@dataclass
class EvalConfig:
    every: int = 50_000  # environment steps between evaluations (0 = only the final one)
    games: int = 10  # games per opponent during training
    opponents: list[str] = field(default_factory=lambda: ["random"])
    final_games: int = 50  # games per opponent at the end of the run
    final_opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    move_limit: int = 600  # evaluation games end (undecided: a draw) after this many plies (arena: 300/seat)

    def validate(self) -> None:
        for name in ("every", "games", "final_games"):
            if (value := getattr(self, name)) < 0:
                raise ValueError(f"eval.{name} must be >= 0, got {value}")
        if self.move_limit < 1:
            raise ValueError(f"eval.move_limit must be >= 1, got {self.move_limit}")
        if self.move_limit > MAX_LIMIT:  # the evaluation's Rules refuse it (halma_env.rules.MAX_LIMIT)
            raise ValueError(f"eval.move_limit must be at most {MAX_LIMIT} (the engine's largest move limit), "
                             f"got {shown_value(self.move_limit)}")
        _check_sizes("eval", self)
        _check_players_listed("eval.opponents", self.opponents)
        _check_players_listed("eval.final_opponents", self.final_opponents)
        if self.every and self.games and not self.opponents:
            raise ValueError("eval.opponents is empty but eval.every and eval.games ask for evaluations during "
                             "training; name opponents or set eval.every to 0")
        if self.final_games and not self.final_opponents:
            raise ValueError("eval.final_opponents is empty but eval.final_games > 0; name opponents or set "
                             "eval.final_games to 0")


@dataclass
class CheckpointConfig:
    every: int = 20  # updates between checkpoints (the last one is always written)
    keep: int = 2  # numbered checkpoints kept besides last.pt

    def validate(self) -> None:
        for name in ("every", "keep"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"checkpoint.{name} must be >= 1, got {value}")
        _check_sizes("checkpoint", self)


@dataclass
class LogConfig:
    progress_bar: bool = True  # tqdm bar (halma train: on a terminal only), else a status line every status_every s
    status_every: float = 30.0
    tensorboard: bool = True

    def validate(self) -> None:
        if not self.status_every > 0:  # (NaN fails it)
            raise ValueError(f"log.status_every must be > 0, got {self.status_every}")


class _Section(Protocol):
    """A section of ``TrainConfig`` (``GameConfig``, ``PPOConfig``, ...)."""

    def validate(self) -> None: ...


# the device types torch.device parses (torch 2.13's list: its error for another names them), so that a config's
# device is checked for its form without importing torch (`--print-config`, `--help` stay fast); whether this
# machine has it is checked when a run starts (agents/devices.py)
TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                      "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE = re.compile(rf"({'|'.join(TORCH_DEVICE_TYPES)})(?::(?:0|[1-9][0-9]*))?")


def device_type(name: str) -> str | None:
    """The type of a torch device string (``cpu`` for ``cpu``, `` cpu `` and ``cpu:0``; ``cuda`` for ``cuda:1``)
    as torch.device reads it (surrounding blanks aside, as agents/devices.py strips them), None for a string it
    refuses (``CPU``, ``gpu``, ``cuda:01``)."""
    match = _DEVICE.fullmatch(name.strip())
    return match.group(1) if match else None


def is_cpu_device(name: str) -> bool:
    """Whether ``name`` is the CPU as torch reads it (``cpu``, ``cpu:0``)."""
    return device_type(name) == "cpu"


# every seed the trainer derives from `seed` (seed * 1_000_003 + process + 7919 * update for a data-parallel
# process or a resume, agents/ppo.py) must stay below 2**64, the most torch.manual_seed takes: 2**63 - 1 overflowed it
MAX_SEED = 2**32 - 1
MAX_NAME_BYTES = 200  # a run's name: its folder, and .NAME.lock beside it, within a file name's 255 bytes
# torch 2.13 on the 2-core CPU machine: 1024 threads trained (slowly), 2048 segfaulted at the first update
MAX_TORCH_THREADS = 256


@dataclass
class TrainConfig:
    name: str
    seed: int
    game: GameConfig
    env: EnvConfig
    ppo: PPOConfig
    network: NetworkConfig
    pool: PoolConfig
    imitation: ImitationConfig
    crossing: CrossingConfig
    eval: EvalConfig
    checkpoint: CheckpointConfig
    log: LogConfig
    device: str = "cpu"
    torch_threads: int = 1  # 0: torch's default; 1 is fastest on the shared 2-core machine
    processes: int = 1  # data-parallel training processes (agents/parallel.py), each with torch_threads threads
    init_from: str | None = None  # a checkpoint whose network weights start a fresh run (null: random init)

    def validate(self) -> None:
        if not portable_file_name(self.name) or self.name.startswith("."):  # (.NAME.lock is the run's lock)
            raise ValueError("name must be a plain directory name (no path separator, colon, control character or "
                             "any of <>\"|?*, not starting with a dot, not a name Windows reserves), "
                             f"got {self.name!r}")
        if len(self.name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise ValueError(f"name must be at most {MAX_NAME_BYTES} bytes in UTF-8 (it names the run's folder and "
                             f"its lock file .NAME.lock, within the 255 a file name may have), got "
                             f"{len(self.name.encode('utf-8', 'surrogatepass'))} bytes: {self.name[:40]!r}...")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if dataclasses.is_dataclass(value):  # a section: every one has a validate()
                cast(_Section, value).validate()
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer in [0, {MAX_SEED}], got {self.seed}")
        if not 0 <= self.torch_threads <= MAX_TORCH_THREADS:
            raise ValueError(f"torch_threads must be in [0, {MAX_TORCH_THREADS}] (0: torch's default), "
                             f"got {self.torch_threads}")
        if self.processes < 1:
            raise ValueError(f"processes must be >= 1, got {self.processes}")
        kind = device_type(self.device)  # (the form; the machine's devices: when a run starts)
        if kind is None:
            others = ", ".join(t for t in TORCH_DEVICE_TYPES if t not in ("cpu", "cuda", "meta"))
            raise ValueError(f"device {self.device!r} is not a torch device (expected cpu, cuda or cuda:N, or another "
                             f"torch device type: {others})")
        if kind == "meta":
            raise ValueError(f"device {self.device!r} holds shapes without values: nothing can be trained there "
                             "(expected cpu, cuda or cuda:N)")
        _check_sizes("network", self.network)
        _check_sizes("", self)
        update_steps = self.rollout_steps
        if update_steps > MAX_UPDATE_STEPS:
            raise ValueError(f"one update, (env.num_envs + env.solo_envs) x ppo.num_steps = {update_steps} steps, must "
                             f"be at most {MAX_UPDATE_STEPS} (its steps are held in memory at once)")
        if self.ppo.total_steps < update_steps:
            raise ValueError(f"ppo.total_steps ({self.ppo.total_steps}) is less than one update: (env.num_envs + "
                             f"env.solo_envs) x ppo.num_steps = {update_steps} steps")
        if self.ppo.num_minibatches > update_steps:  # (what is split is the learner's transitions, fewer still)
            raise ValueError(f"ppo.num_minibatches ({self.ppo.num_minibatches}) must be at most the {update_steps} "
                             "steps of an update, (env.num_envs + env.solo_envs) x ppo.num_steps: its minibatches "
                             "split the learner's transitions of an update, at most that many, and hold at least one "
                             "transition each")
        for key in ("num_envs", "solo_envs"):
            if getattr(self.env, key) % self.processes:
                raise ValueError(f"env.{key} ({getattr(self.env, key)}) must be a multiple of processes "
                                 f"({self.processes}): each process plays an equal share of the games")
        if self.processes > 1 and not is_cpu_device(self.device):
            raise ValueError(f"processes: {self.processes} data-parallel processes run on the CPU; with device "
                             f"{self.device!r} use processes: 1")
        if self.init_from is not None:
            try:
                is_dir, kind, is_file = (Path(self.init_from).is_dir(), special_file_kind(self.init_from),
                                         Path(self.init_from).is_file())
            except OSError as exc:  # a name too long for the file system (Path.is_dir raises it on Python 3.11)
                raise ValueError(f"init_from: {shown_value(self.init_from)} cannot be looked up: "
                                 f"{exc.strerror or exc}") from None
            if is_dir:
                raise ValueError(f"init_from: {self.init_from!r} is a directory, not a checkpoint file")
            if kind:  # a FIFO, a device (also behind a link)
                raise ValueError(f"init_from: {self.init_from!r} is {kind}, not a checkpoint file")
            if not is_file:
                from agents.files import shipped_file_hint

                raise ValueError(f"init_from: checkpoint {self.init_from!r} does not exist"
                                 f"{shipped_file_hint(self.init_from)}")
            if self.imitation.games:
                raise ValueError(f"init_from and imitation.games both set the starting weights (got {self.init_from!r} "
                                 f"and {self.imitation.games}); choose one (set imitation.games and imitation.epochs "
                                 "to 0: imitation.distill_coef may stay)")
        if self.imitation.games and self.game.move_limit is None and self.game.stall_limit is None:
            raise ValueError(f"imitation.games ({self.imitation.games}) records bot-only games under the training "
                             "rules, which give a game no end with game.move_limit and game.stall_limit both null (a "
                             "bot that never finishes would record one game until memory runs out): set "
                             "game.move_limit (e.g. 300) or game.stall_limit, or imitation.games and imitation.epochs "
                             "to 0")
        if self.env.solo_envs and self.game.variant != "star":
            raise ValueError(f"env.solo_envs: the solitaire crossing is a star game, not {self.game.variant}; "
                             "set it to 0")
        if self.network.reach_features:
            from agents.network import reach_tables  # here: torch only when a config asks for the planes

            reach_tables(self.game.variant, self.game.num_players)  # a ValueError naming network.reach_features
        self._check_players()
        if self.crossing.planner_width and self.game.variant != "star":
            raise ValueError(f"crossing.planner_width: the solitaire crossing is a star game, not {self.game.variant}; "
                             "set crossing.planner_width and crossing.coef to 0")

    def _check_players(self) -> None:
        """Every bot or opponent named in the config exists, takes the parameters given and can play the
        config's game (so a typo, or a checkpoint of another variant or seat count, fails here, before a
        run directory is made, not minutes into a run or after it)."""
        # the check `halma eval` makes of its players; bots are imported on demand, only those named
        from agents.registry import check_players, make_player

        named = [("pool.bots", self.pool.bots), ("eval.opponents", self.eval.opponents),
                 ("eval.final_opponents", self.eval.final_opponents),
                 ("imitation.bot", [self.imitation.bot] if self.imitation.bot else [])]
        rules = self.game.rules()  # every one of them plays (or, imitation.bot, records) this game
        for where, specs in named:
            for i, spec in enumerate(specs):
                at = where if where == "imitation.bot" else f"{where}[{i}]"
                try:
                    player = make_player(spec, seed=0)  # its own error (unknown name, bad parameter) as it is
                    # a move in the starting position: a player of another game refuses it, naming the game it plays
                    check_players([spec], lambda _spec, _seed: player, rules)  # noqa: B023 (called at once)
                except ValueError as exc:
                    raise ValueError(f"{at}: {exc}") from None

    @property
    def rollout_steps(self) -> int:
        """The environment steps of one rollout (one update): (env.num_envs + env.solo_envs) x ppo.num_steps."""
        return (self.env.num_envs + self.env.solo_envs) * self.ppo.num_steps

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --- loading ------------------------------------------------------------------------------


# Numbers as YAML 1.2's core schema writes them, ASCII digits only: [0-9], not \d, which takes any script's
# digits (as float() and int() do, and their 1_0).  YAML 1.1 (pyyaml's) reads 010 as 8, 1:00 as 60 and 0b11 as 3.
_DECIMAL_INT = re.compile(r"[-+]?[0-9]+")
_DECIMAL = ASCII_DECIMAL
_INF_NAN = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_INT_TAG, _FLOAT_TAG, _BOOL_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool"
# YAML 1.2's core schema booleans; YAML 1.1 (pyyaml's) also reads yes, no, on and off (any case shown) as booleans
_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_BOOL_1_1 = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")


def _is_yaml_1_1_bool(value: Any) -> bool:
    return isinstance(value, str) and bool(_BOOL_1_1.fullmatch(value.strip()))


def _written_number(value: Any) -> Decimal | None:
    """A finite float as an exact number (else None), for an integer key given a whole number with a point
    (3.0; the loader reads 5e6 and 5.0e+6 as ints already).  Decimal, not float: exact where a float would
    round."""
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(value)
    return None


def _text_number_hint(value: Any) -> str:
    """What to add to a number key's error for text that reads as a finite number (``seed: '5e6'``, a quoted
    ``'0.5'``): a number key takes a number, not text that looks like one.  (Until 2026-12-07 it took text in
    exponent notation for an integer key and any decimal text for a float key, for the mappings of a YAML 1.1
    loader, yaml.safe_load, which reads 5e6 and 1e-3 as text; the config files and --set values are read as YAML
    1.2, where only a quoted number is text, and `seed: '5'` was refused.)"""
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()) and math.isfinite(float(value)):
        if re.fullmatch(r"[-+]?[0-9]+[eE][-+]?[0-9]+", value.strip()):  # unquoted, yaml.safe_load reads it as text
            return (" (text, not a number: in a file, write the number without quotes; a mapping read with "
                    "yaml.safe_load holds 1e-3 and 5e6 as text, agents.config.load_dict reads them as numbers)")
        return " (text, not a number: write the number without quotes)"
    return ""


def _real(value: Any) -> float | None:
    """A number as a float (inf past a float's range), else None (text too: a number key refuses it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an int past 1e308
        return math.inf


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _coerce(value: Any, tp: Any, path: str) -> Any:
    """Check ``value`` against the annotation ``tp``; ints are accepted for floats."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        # a float | None key given nan or inf: say so, not "expected float or NoneType, got nan"
        if float in args and (real := _real(value)) is not None and not math.isfinite(real):
            raise ValueError(f"{path}: expected a finite number, got {value!r}")
        named_non_finite = isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity")
        if float in args and named_non_finite:  # the text nan (YAML 1.2 reads it as text, not as .nan)
            raise ValueError(f"{path}: expected a finite number, got {value!r}")
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, path)
            except ValueError:
                pass  # the error below names every type the key takes
        raise ValueError(f"{path}: expected {' or '.join(_type_name(a) for a in args)}, got {value!r}"
                         + (_text_number_hint(value) if int in args or float in args else ""))
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ValueError(f"{path}: expected a list, got {value!r}")
        return [_coerce(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # (an annotation is a class, not an instance)
        return _build(tp, value, path)
    if tp is bool:
        if not isinstance(value, bool):
            hint = " (YAML 1.2 booleans: on, off, yes and no are text)" if _is_yaml_1_1_bool(value) else ""
            raise ValueError(f"{path}: expected true or false, got {value!r}{hint}")
        return value
    if tp is int:
        number = _written_number(value)  # 3.0 is an integer too; 2.5 and 1e-3 are not
        if number is not None:
            if number != number.to_integral_value():
                raise ValueError(f"{path}: expected an integer, got {value!r} (not a whole number)")
            return int(number)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{path}: expected an integer, got {value!r}{_text_number_hint(value)}")
        return value
    if tp is float:
        real = _real(value)
        if real is None:
            raise ValueError(f"{path}: expected a number, got {value!r}{_text_number_hint(value)}")
        if not math.isfinite(real):  # no setting means anything at nan or inf
            raise ValueError(f"{path}: expected a finite number, got {value!r}")
        return real
    if tp is str:
        if not isinstance(value, str):
            # YAML read 2024 as a number (a list's item: the hint's --set would not name it)
            # (an int is shown as typed; a float may not be: 2024.10 reads as 2024.1)
            is_number = isinstance(value, (int, float)) and not isinstance(value, bool) and "[" not in path
            example = f"{path}='{value}'" if isinstance(value, int) else f"{path}='...'"
            hint = f" (YAML reads it as a number: quote it, --set \"{example}\")" if is_number else ""
            raise ValueError(f"{path}: expected a string, got {value!r}{hint}")
        return value
    raise TypeError(f"unsupported config type {tp!r} at {path}")


def _check_known_keys(cls: type, data: Any, path: str) -> None:
    """``ValueError`` naming the keys of the mapping ``data`` (at ``path``) that ``cls`` has no field for."""
    if not isinstance(data, dict):
        return  # (_build says what it should be)
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted((k for k in data if k not in known), key=str)  # YAML keys may be numbers
    if unknown:
        named = ", ".join(_join(path, str(k)) + did_you_mean(str(k), known, path) for k in unknown)
        raise ValueError(f"{path or 'config'}: unknown key(s) {named}; known: {', '.join(known)}")


def _build(cls: type, data: Any, path: str) -> Any:
    where = path or "config"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    _check_known_keys(cls, data, path)
    missing = [k for k in known if k not in data]
    if missing:
        # a partial config (only the keys someone meant to change) is missing most sections: a typo in the
        # sections it does give is named first, not hidden behind the list of what is missing
        for k in known:
            if k in data and isinstance(hints[k], type) and dataclasses.is_dataclass(hints[k]):
                _check_known_keys(hints[k], data[k], _join(path, k))
        added = [KEYS_ADDED_LATER[_join(path, k)][1] for k in missing if _join(path, k) in KEYS_ADDED_LATER]
        if not path and len(missing) > 1:  # most of a config: someone wrote only what they meant to change
            added.append("every key is required: start from a shipped config (halma train quickstart "
                         "--print-config > my.yaml) and edit it, or change a key with --set KEY=VALUE")
        raise ValueError(f"{where}: missing key(s) {', '.join(_join(path, k) for k in missing)}"
                         + "".join(f"; {hint}" for hint in added))
    return cls(**{k: _coerce(data[k], hints[k], _join(path, k)) for k in known})


# keys added after configs (and the checkpoints that store them) were written: the value that gives what a
# config without the key trained with, and what to write.  Still required in a config file (every key is), but
# the error says what to add, and a resume from an older checkpoint does not call the key a change.
KEYS_ADDED_LATER: dict[str, tuple[Any, str]] = {
    "game.repetition_limit": (None, "game.repetition_limit is new (2026-12-06): add 'repetition_limit: null' "
                                    "under game: for the variant's default, which configs without it trained with"),
}


# features added after checkpoints were written, off in the defaults, which is how a run before them trained: a
# stored config without them gets the default (a whole section where the section is missing)
FEATURES_ADDED_LATER = ("env.solo_envs", "env.solo_move_cost", "imitation", "crossing", "processes", "init_from",
                        "network.attention_layers", "network.reach_features")


def with_keys_added_later(stored: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stored config (a checkpoint's) with the keys added since, at the values it trained with, so
    that a resume of an older run does not list them as changes (``KEYS_ADDED_LATER``, ``FEATURES_ADDED_LATER``)."""
    import copy

    def set_default(dotted: str, value: Any) -> None:
        *sections, key = dotted.split(".")
        node: Any = out
        for section in sections:
            node = node.get(section) if isinstance(node, dict) else None
        if isinstance(node, dict):  # (a stored config of another shape is left as it is)
            node.setdefault(key, copy.deepcopy(value))

    out = copy.deepcopy(stored)
    if isinstance(out.get("ppo"), dict):  # a training config's
        defaults = default_dict()
        for dotted in FEATURES_ADDED_LATER:
            value: Any = defaults
            for part in dotted.split("."):
                value = value[part]
            set_default(dotted, value)
    for dotted, (value, _) in KEYS_ADDED_LATER.items():
        set_default(dotted, value)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def from_dict(data: dict[str, Any]) -> TrainConfig:
    """A validated config from a mapping; every key of every section is required."""
    cfg = _build(TrainConfig, data, "")
    cfg.device = cfg.device.strip() or cfg.device  # ' cpu' is the CPU (device_type), recorded as 'cpu'
    cfg.validate()
    return cfg


def default_dict() -> dict[str, Any]:
    """Every key with its default value (name and seed included), as plain data."""
    sections = {f.name: f.type for f in dataclasses.fields(TrainConfig)}
    hints = typing.get_type_hints(TrainConfig)
    out: dict[str, Any] = {"name": "run", "seed": 1}
    for name in sections:
        tp = hints[name]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # (an annotation is a class, not an instance)
            out[name] = dataclasses.asdict(tp())
    out["device"] = "cpu"
    out["torch_threads"] = 1
    out["processes"] = 1
    out["init_from"] = None
    return out


def _key_type(parts: list[str]) -> Any:
    """The annotation of the dotted key ``parts`` in ``TrainConfig`` (None for a key it lacks)."""
    tp: Any = TrainConfig
    for part in parts:
        if not (isinstance(tp, type) and dataclasses.is_dataclass(tp)):
            return None
        tp = typing.get_type_hints(tp).get(part)
    return tp


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key=value`` strings (dotted keys, YAML values) to a copy of ``data``.

    An override must name an existing key: ``ppo.learnin_rate=1`` is an error naming it.  A key given
    twice is an error too, as a key twice in one YAML mapping is (the last one silently winning would
    hide a typo'd command line), and so is an empty value (``game.move_limit=``, from an unset shell
    variable): no value is written ``null``.
    """
    import copy

    out = copy.deepcopy(data)
    seen: dict[str, str] = {}
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"--set expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        if key in seen:
            raise ValueError(f"--set {key} is given twice ({seen[key]!r} and {item!r}); give it once")
        seen[key] = item
        if len(raw) > MAX_CONFIG_BYTES:
            raise ValueError(f"--set {key}: a value of {len(raw)} characters is longer than a whole config file may be "
                             f"({MAX_CONFIG_BYTES} bytes, 256 KiB)")
        parts = key.split(".")
        node = out
        for i, part in enumerate(parts):
            if not isinstance(node, dict) or part not in node:
                raise ValueError(f"--set {key}: unknown key {'.'.join(parts[:i + 1])!r}"
                                 + _known_keys_hint(node, parts[:i], part))
            if i < len(parts) - 1:
                node = node[part]
        shown = raw if len(raw) <= 40 else f"{raw[:40]}..."
        if not raw.strip():  # (until 2026-12-07 it was null: an unset shell variable turned game.move_limit off)
            key_type = _key_type(parts)
            hint = (f"write {key}=null for no value" if type(None) in typing.get_args(key_type)
                    else f"write {key}=[] for an empty list" if typing.get_origin(key_type) is list
                    else "give it a value")
            raise ValueError(f"--set {key} has an empty value in {shown_value(item)} ({hint})")
        try:
            node[parts[-1]] = yaml.load(raw, Loader=_StrictLoader)
        except yaml.YAMLError as exc:
            raise ValueError(f"--set {key}: value {shown!r} is not valid YAML "
                             f"{_yaml_problem(exc, raw, value=True)}") from None
        except RecursionError:  # [[[[... thousands deep: the parser recurses per level
            raise ValueError(f"--set {key}: value {shown!r} is nested too deeply") from None
    return out


def _yaml_problem(exc: yaml.YAMLError, text: str, value: bool = False) -> str:
    """Where and what a YAML error is, on one line: ``at line 3, column 5: found character '\\t' that cannot
    start any token`` (pyyaml's own message spans 4-8 lines, with the text and a caret); ``at column 5: ...``
    in an override's ``value`` of one line."""
    one_line = value and "\n" not in text and "\r" not in text

    def at(line: int, column: int) -> str:
        return f"column {column + 1}" if one_line else f"line {line + 1}, column {column + 1}"

    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or type(exc).__name__
        where = f"at {at(mark.line, mark.column)}: " if mark is not None else ": "
        context = ""
        started = exc.context_mark  # "while scanning a quoted scalar" and where it started
        if exc.problem and exc.context and started is not None and mark is not None and (
                (started.line, started.column) != (mark.line, mark.column)):
            context = f" ({exc.context} at {at(started.line, started.column)})"
        message = f"{where}{problem}{context}"
    elif isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.character, int):  # a control character
        line = text.count("\n", 0, exc.position)
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1)
        message = f"at {at(line, column)}: unacceptable character #x{exc.character:04x}: {exc.reason}"
    else:
        message = f": {exc}"
    return " ".join(message.split("\n"))


def _known_keys_hint(node: Any, parents: list[str], wrong: str) -> str:
    """What to add to the error for a key ``wrong`` that ``node`` (the section at ``parents``) lacks."""
    if not isinstance(node, dict):
        return f" ({'.'.join(parents)} is a value, not a section)"
    keys = [str(k) for k in node]
    return f"{did_you_mean(wrong, keys, '.'.join(parents))}; known: {', '.join(keys)}"


_PLAIN_TAGS = {  # the explicit tags a config may use (`!!int 10`, `!!bool true`): the plain kinds of value
    yaml.events.ScalarEvent: {f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null")},
    yaml.events.SequenceStartEvent: {"tag:yaml.org,2002:seq"}, yaml.events.MappingStartEvent: {"tag:yaml.org,2002:map"}}


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (plain YAML keeps the last silently),
    a list or mapping as a key, tags other than the plain kinds' (``!!set``, ``!!timestamp``), and aliases
    (``*name``): a config has no use for them, and nested aliases
    spell a small file out to gigabytes (a 2.4 KB one ran out of memory after 51 s in a security review).
    Numbers are YAML 1.2's decimals, not YAML 1.1's octal (010), base 60 (1:00), binary (0b11) or 1_000, and
    booleans YAML 1.2's true and false: YAML 1.1's on, off, yes and no are text (``name: off`` is the name
    off, and ``anneal_lr: on`` is refused as not a boolean, showing the ``'on'`` written)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"an alias (*{event.anchor}) is not allowed in a config: "
                                              "write the value out", event.start_mark)
        event = self.peek_event()
        # explicit tags other than the plain kinds' (`!!set`, `!!timestamp x`: TypeError, AttributeError in PyYAML)
        if getattr(event, "tag", None) is not None and event.tag not in _PLAIN_TAGS[type(event)]:
            tag = event.tag.replace("tag:yaml.org,2002:", "!!")  # (as written)
            raise yaml.composer.ComposerError(None, None, f"a tag ({tag}) is not allowed in a config: write the "
                                              "plain value", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):  # `? [a, b]`: no config key is one (and a list is
                # unhashable: `key in seen` would raise TypeError)
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be a plain value, not a list or a mapping", key_node.start_mark)
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    # YAML 1.2's core schema for numbers (decimal only: see _DECIMAL) and booleans (true, false): the resolvers
    # below replace YAML 1.1's
    yaml_implicit_resolvers = {first: [(tag, regexp) for tag, regexp in resolvers
                                       if tag not in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG)]
                               for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def construct_bool(self, node: yaml.ScalarNode) -> bool:
        text = self.construct_scalar(node)
        if not _BOOL.fullmatch(text):  # (an explicit `!!bool yes`: the resolver sends only true and false)
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not true or false", node.start_mark)
        return text.lower() == "true"

    def construct_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if not _DECIMAL_INT.fullmatch(text):  # (an explicit `!!int 0x10`: the resolver sends only decimals)
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a decimal integer", node.start_mark)
        try:
            return int(text)
        except ValueError:  # more digits than Python converts (4300): no config value has so many
            raise yaml.constructor.ConstructorError(None, None, f"an integer of {len(text)} digits is too long",
                                                    node.start_mark) from None

    def construct_float(self, node: yaml.ScalarNode) -> float | int:
        text = self.construct_scalar(node)
        if _INF_NAN.fullmatch(text):  # read, so that the key's check names it (no key takes it)
            return float(text.replace(".", "", 1))
        if not _DECIMAL.fullmatch(text):
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a decimal number", node.start_mark)
        number = float(text)
        # a whole number in exponent notation (5e6) as an exact int: a float rounds past 2**53; float keys take ints
        if math.isfinite(number) and "e" in text.lower() and (exact := Decimal(text)) == exact.to_integral_value():
            return int(exact)
        return number


_StrictLoader.add_implicit_resolver(_INT_TAG, re.compile(rf"(?:{_DECIMAL_INT.pattern})\Z"), list("-+0123456789"))
_StrictLoader.add_implicit_resolver(
    _FLOAT_TAG, re.compile(rf"(?:{_DECIMAL.pattern}|{_INF_NAN.pattern})\Z"), list("-+.0123456789"))
_StrictLoader.add_implicit_resolver(_BOOL_TAG, re.compile(rf"(?:{_BOOL.pattern})\Z"), list("tTfF"))
_StrictLoader.add_constructor(_BOOL_TAG, _StrictLoader.construct_bool)
_StrictLoader.add_constructor(_INT_TAG, _StrictLoader.construct_int)
_StrictLoader.add_constructor(_FLOAT_TAG, _StrictLoader.construct_float)


def shipped_config_names() -> list[str]:
    from agents.files import shipped_configs_dir

    return sorted(p.stem for p in shipped_configs_dir().glob("*.yaml"))


def config_path(name: str | Path) -> Path:
    """The file of a config given as a path, or by the name of a shipped one (``quickstart``: a name with no
    folder and no suffix that is not a file here), so an installed package trains without the repository.  A
    folder of that name does not hide it: ``halma train quickstart --runs-dir .`` makes one, and the resume command
    it prints names the config the same way."""
    from agents.files import shipped_configs_dir

    path = Path(name)
    if path.is_file() or path.suffix or len(path.parts) != 1:
        return path
    shipped = shipped_configs_dir() / f"{path.name}.yaml"
    if not shipped.is_file():
        return path
    mine = path.with_suffix(".yaml")
    if mine.exists() and mine.resolve() != shipped.resolve():  # (the source tree's configs/ is not "here")
        raise ValueError(f"config {str(name)!r} names both {str(mine)!r} here and the shipped config {path.name}: "
                         f"give {str(mine)!r} for yours, or {str(shipped)!r}")
    return shipped


def load_dict(path: str | Path) -> dict[str, Any]:
    if is_empty_path(path):
        raise ValueError("a config file path is empty: give a YAML file or a shipped config's name")
    try:
        path = config_path(path)
        is_dir, exists, is_file = path.is_dir(), path.exists(), path.is_file()
    except OSError as exc:  # a name too long for the file system (Path.is_dir raises it on Python 3.11)
        raise ValueError(f"config file {quoted_path(path)} cannot be looked up: {exc.strerror or exc}") from None
    if is_dir:
        raise ValueError(f"config file {str(path)!r} is a directory")
    if exists and not is_file:
        raise ValueError(f"config file {str(path)!r} is not a regular file")
    if not is_file:
        names = shipped_config_names()
        near = did_you_mean(path.name, names) if len(path.parts) == 1 and not path.suffix else ""
        raise ValueError(f"config file {str(path)!r} does not exist{near}; the shipped configs, by name: "
                         f"{', '.join(names)}")
    try:  # bounded: PyYAML took 53 s over a 100 MB file of one comment line
        text = read_regular_file(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileTooLarge as exc:
        raise ValueError(f"config file {str(path)!r} holds {exc.size} bytes, more than a config file may hold "
                         f"({MAX_CONFIG_BYTES} bytes, 256 KiB)") from None
    except NotARegularFile:  # (swapped in after the checks above)
        raise ValueError(f"config file {str(path)!r} is not a regular file") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"config file {str(path)!r} is not UTF-8 text: {exc}") from None
    except OSError as exc:  # no permission to read it, ...
        raise ValueError(f"config file {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        raise ValueError(f"config file {str(path)!r} is not valid YAML {_yaml_problem(exc, text)}") from None
    except RecursionError:  # [[[[... thousands deep: the parser recurses per level
        raise ValueError(f"config file {str(path)!r} is nested too deeply (a config is sections of plain values)") \
            from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {str(path)!r} must hold a mapping of sections")
    return data


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML config, apply ``--set`` overrides and validate (errors name the key)."""
    return from_dict(apply_overrides(load_dict(path), overrides or []))


class _Dumper(yaml.SafeDumper):
    """YAML's safe dumper resolving plain scalars as the loader does (YAML 1.2 numbers), so that it quotes
    a string the loader would read as a number (a run named 1e3 would come back as the number 1000), and
    as YAML 1.1 booleans too: a run named off is written 'off', which a YAML 1.1 reader also takes as text."""


_Dumper.yaml_implicit_resolvers = {first: list(resolvers)
                                   for first, resolvers in _StrictLoader.yaml_implicit_resolvers.items()}
_Dumper.add_implicit_resolver(_BOOL_TAG, re.compile(rf"(?:{_BOOL_1_1.pattern})\Z"), list("yYnNtTfFoO"))
# a list of players on one line, as the shipped configs write it (bots: [random, greedy]), not one line each
_Dumper.add_representer(list, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data,
                                                                             flow_style=True))


def dump_yaml(cfg: TrainConfig) -> str:
    """The config as YAML laid out as the shipped configs and docs/training.md's reference lay it out: the run's
    own keys (name, seed, device, torch_threads, processes, init_from), then the sections, each in schema order,
    and lists on one line.  (The dataclass puts device and the keys after it last, as they have defaults: a
    config printed so, with --print-config or as a run's config.yaml, read unlike the file it came from.)"""
    data = cfg.to_dict()
    ordered = {k: v for k, v in data.items() if not isinstance(v, dict)}
    ordered.update((k, v) for k, v in data.items() if isinstance(v, dict))
    return yaml.dump(ordered, Dumper=_Dumper, sort_keys=False)


def config_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """``key old -> new`` for every (dotted) config key whose value differs between two config dicts; the keys a
    resume does not use (``KEYS_UNUSED_BY_RESUME``) say so."""
    old, new = flat_config(before), flat_config(after)

    def shown(values: dict[str, Any], key: str) -> str:
        return repr(values[key]) if key in values else "(none)"  # a key that one config version lacks

    return [f"{key} {shown(old, key)} -> {shown(new, key)}{UNUSED_BY_RESUME if key in KEYS_UNUSED_BY_RESUME else ''}"
            for key in sorted(old.keys() | new.keys()) if key not in old or key not in new or old[key] != new[key]]


# keys that only start a fresh run: a resume continues from its checkpoint's weights and never imitates again, so a
# change of them is listed with this note (docs/training.md, "Checkpoints and resume")
KEYS_UNUSED_BY_RESUME = ("init_from", "imitation.games", "imitation.epochs", "imitation.learning_rate",
                         "imitation.minibatch_size")
UNUSED_BY_RESUME = " (unused by a resume)"


def flat_config(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A config dict's values by dotted key (``ppo.learning_rate``)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat_config(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


__all__ = [
    "CheckpointConfig", "CrossingConfig", "EnvConfig", "EvalConfig", "GameConfig", "ImitationConfig", "LogConfig",
    "NetworkConfig", "PPOConfig", "PoolConfig", "TrainConfig", "apply_overrides", "config_changes", "default_dict",
    "dump_yaml", "flat_config", "from_dict", "load_config",
]

