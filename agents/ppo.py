"""Self-play PPO for the Halma family, in the style of CleanRL's single-file ``ppo.py``.

One network plays every seat from the canonical frame (the acting seat always sees its home at
the bottom).  The loop is CleanRL's: collect ``num_steps`` plies in each of ``num_envs`` games,
compute GAE advantages, then ``update_epochs`` passes of clipped-objective minibatch updates with
advantage normalisation, (optionally clipped) value loss, entropy bonus, gradient clipping and a
linearly annealed learning rate.  The policy is a masked categorical: illegal actions get the logit
``MASKED_LOGIT`` (zero probability); only the legal (src, dst) pairs are scored.

Multi-seat games and who learns from what
-----------------------------------------
Plies alternate between seats, so one environment's plies are not one trajectory.  Each
(environment, seat) played by the learner has its own trajectory: a transition is one of its
decisions; its reward is everything the seat receives from that decision until its next one (its
own progress shaping now, and its place reward if the game ends before it moves again, whoever
made the last move); its successor is the seat's next decision, where the value is bootstrapped.
A transition whose successor has not happened by the end of a rollout is carried over and trained
with the next rollout (so every transition is trained once, with a complete reward; those still
pending when a session ends, stopped or finished, are dropped, as a resume restarts its games); it keeps
the log-probability and value of the weights that sampled it, one update or more before the weights
it is trained from, so its ratio starts away from 1 (the importance ratio to the policy that acted).
The GAE recursion follows these per-seat links (``next_index``) instead of "t + 1".

Opponent pool (per environment, sampled when a game starts)
-----------------------------------------------------------
- ``self_prob``: every seat is the learner (latest weights): all seats' decisions are trained on;
- ``snapshot_prob``: one seat (uniform) is the learner, the others a past snapshot of the network
  (uniform over the pool of the last ``max_snapshots``, one added every ``snapshot_every`` updates;
  snapshots sample their moves from their policy);
- ``bot_prob``: one learner seat, the others a heuristic bot from ``bots`` (``agents.registry``).
The seat that starts rotates from game to game in each environment.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import json
import math
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents import parallel
from agents.checkpoint import check_network, load_checkpoint, model_from_checkpoint, save_checkpoint
from agents.config import TrainConfig, config_changes, dump_yaml, flat_config, with_keys_added_later
from agents.devices import check_device
from agents.files import bar_size
from agents.network import HalmaNet, build_network, clip_gradients, load_extending
from agents.run_dir import RunLock, drop_evaluations_after, drop_events_after, new_run_dir_problem
from halma_env import Game, Rules
from halma_env.encoding import encoding
from halma_env.files import write_atomic

if TYPE_CHECKING:
    from agents.imitation import Demonstrations

SELF, SNAPSHOT, BOT = 0, 1, 2
FINISH_REASONS = ("finished", "first_finish")  # a game decided by a seat completing its crossing
CROSSING_SAMPLE = 64  # detour positions in the crossing term of each PPO minibatch (besides the main line)


def keep_freed_memory() -> bool:
    """Ask the C library's ``malloc`` to keep freed memory for reuse instead of returning it to the OS.

    A PPO update allocates and frees the same 1-30 MB tensors again and again; by default glibc gives
    many of them back on ``free`` (unmapped, or trimmed off the top of the heap), so the next update
    takes them again as fresh pages, zero-filled by the kernel one page fault at a time.  Kept, they
    are reused, and the loop runs faster (docs/training.md, "Speed", has the measurement).
    The cost is that a training process does not shrink after its peak, and the setting is the process's,
    for its life: so ``halma train`` and ``halma bench train`` ask for it in their own processes, and a
    ``Trainer`` made in a notebook or a sweep leaves malloc as it is (call this first for the speed).
    Returns whether glibc took both settings; on another C library nothing changes.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no such C library or function (macOS, Windows)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # blocks below the mmap threshold (32 MiB: the most glibc's own adaptive threshold reaches) come
    # from the heap, whose top is then never trimmed: every block a step frees is there for the next
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 * 2**20)) and bool(mallopt(m_trim_threshold, 2**31 - 1))


def end_reason_name(code: Any) -> str | None:
    """The end reason as a name (the batched engine reports codes into its END_REASONS)."""
    if code is None or isinstance(code, str):
        return code
    from halma_env.batched import END_REASONS

    return END_REASONS[int(code)] or None


# --- environments ------------------------------------------------------------------------


def make_env(cfg: TrainConfig, device: torch.device, seed: int, num_envs: int | None = None):
    """The training environments: the batched torch engine or N scalar games (``env.engine``);
    ``num_envs`` games (default ``env.num_envs``)."""
    from agents.vecgame import ScalarBatchedGame

    engine = cfg.env.engine
    if engine == "auto":
        # heuristic bots play scalar Game objects, which the scalar engine has at hand; without bots the
        # torch engine is the faster one (measured: docs/training.md)
        engine = "scalar" if cfg.pool.bot_prob > 0 else "batched"
    rules = cfg.game.rules()
    kwargs: dict[str, Any] = dict(device=device, seed=seed, reward=cfg.game.reward,
                                  progress_shaping=cfg.game.progress_shaping)
    if engine == "batched":
        from halma_env.batched import BatchedGame

        return BatchedGame(rules, num_envs or cfg.env.num_envs, rotate_first_seat=True, **kwargs)
    return ScalarBatchedGame(rules, num_envs or cfg.env.num_envs, **kwargs)


def make_solo_env(cfg: TrainConfig, device: torch.device, seed: int, num_envs: int | None = None):
    """``env.solo_envs`` (or ``num_envs``) solitaire crossings (the game's rules with one seat) on the
    batched engine."""
    from halma_env.batched import BatchedGame

    rules = cfg.game.rules().replace(num_players=1)
    return BatchedGame(rules, num_envs or cfg.env.solo_envs, device=device, seed=seed, reward=cfg.game.reward,
                       progress_shaping=cfg.game.progress_shaping)


def env_games(env) -> list[Game]:
    """Scalar games of the current positions (for heuristic bots)."""
    return env.games if hasattr(env, "games") else env.to_games()


# --- opponent pool -----------------------------------------------------------------------


def make_bot(name: str, seed: int) -> Any:
    """A player of the pool, the evaluation or the imitation by its registry name."""
    from agents.registry import make_player  # (imported late: the registry loads every player's module)

    return make_player(name, seed=seed)


@dataclass
class Pool:
    """Past snapshots (paths and loaded networks) and bot names."""

    bots: list[str]
    snapshot_paths: list[str] = field(default_factory=list)
    nets: dict[str, HalmaNet] = field(default_factory=dict)

    def add(self, path: str, net: HalmaNet, max_snapshots: int) -> None:
        self.snapshot_paths.append(path)
        self.nets[path] = net
        while len(self.snapshot_paths) > max_snapshots:
            self.nets.pop(self.snapshot_paths.pop(0), None)


class Seating:
    """Who plays in each environment: drawn from the pool (``pool.*_prob``) when its game starts.

    ``kind[b]`` is SELF (the latest network in every seat), SNAPSHOT or BOT (one learner seat,
    ``learner_seat[b]``, against that opponent in all the other seats); ``opponent[b]`` holds the
    snapshot's (path, network) or the bot."""

    def __init__(self, cfg: TrainConfig, pool: Pool, rng: np.random.Generator, num_envs: int, rank: int,
                 first_update: int = 0) -> None:
        self.cfg, self.pool, self.rng, self.rank = cfg, pool, rng, rank
        # a resumed session's bots start from their own seeds, not the first session's again
        self.seed_base = cfg.seed * 100_003 + 1000 * first_update + 1_000_000_007 * rank
        self.kind = np.zeros(num_envs, dtype=np.int64)
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.opponent: list[Any] = [None] * num_envs
        self.bots_made = 0  # in this process: each bot gets its own seed
        for b in range(num_envs):
            self.draw(b)

    def draw(self, b: int | np.integer) -> None:
        """Draw environment ``b``'s table for the game starting there."""
        pool, n = self.cfg.pool, self.cfg.game.num_players
        p = np.array([pool.self_prob, pool.snapshot_prob if self.pool.snapshot_paths else 0.0, pool.bot_prob])
        if p.sum() == 0:  # only snapshots asked for and none taken yet: self-play until the first
            p = np.array([1.0, 0.0, 0.0])
        self.kind[b] = int(self.rng.choice(3, p=p / p.sum()))
        # drawn for every table, unused in self-play: the random stream is the same whichever kind is drawn
        self.learner_seat[b] = int(self.rng.integers(n))
        if self.kind[b] == SNAPSHOT:
            # hold the network itself: the pool may drop the snapshot while this game goes on
            path = self.pool.snapshot_paths[int(self.rng.integers(len(self.pool.snapshot_paths)))]
            self.opponent[b] = (path, self.pool.nets[path])
        elif self.kind[b] == BOT:
            name = self.pool.bots[int(self.rng.integers(len(self.pool.bots)))]
            self.bots_made += 1
            self.opponent[b] = make_bot(name, seed=self.seed_base + self.bots_made)
        else:
            self.opponent[b] = None

    def learner_moves(self, mover: np.ndarray) -> np.ndarray:
        """Which environments' seat to move is played (and trained) by the latest network."""
        return (self.kind == SELF) | (mover == self.learner_seat)

    def snapshot_groups(self, others: np.ndarray) -> list[tuple[HalmaNet, list[int]]]:
        """The environments among ``others`` whose mover is a snapshot, grouped by snapshot (one batch
        each), sorted by path: a fixed order of draws from the torch RNG (set order varies between processes)."""
        rows = [int(b) for b in others if self.kind[b] == SNAPSHOT]
        return [(self.opponent[group[0]][1], group)
                for path in sorted({self.opponent[b][0] for b in rows})
                for group in [[b for b in rows if self.opponent[b][0] == path]]]

    def bot_rows(self, others: np.ndarray) -> list[int]:
        """The environments among ``others`` whose mover is a bot."""
        return [int(b) for b in others if self.kind[b] == BOT]

    def trained_seats(self, b: int | np.integer) -> range | list[int]:
        """The seats of environment ``b`` whose decisions are trained."""
        return range(self.cfg.game.num_players) if self.kind[b] == SELF else [int(self.learner_seat[b])]


# --- evaluation --------------------------------------------------------------------------


@torch.no_grad()
def evaluate(net: HalmaNet, cfg: TrainConfig, opponent: str, games: int, seed: int,
             device: torch.device) -> dict[str, float]:
    """The greedy policy against ``opponent`` (a bot name) in ``games`` games, played side by side.

    The learner takes seat ``i % n`` of game ``i`` and the start rotates; the other seats are the
    opponent.  Games stop after ``eval.move_limit`` plies as a draw (limit_outcome "draw"), so a win
    means the agent really finished first (unless the config's stall_limit ends a game by progress).
    Returns win rate, draw rate (first place shared with another seat), mean place (and the opponents'
    mean place), finish rate (the agent completed its crossing), decided rate (every seat got a place
    of its own: no draw at the cap, no shared place) and
    mean length in plies.
    """
    n = cfg.game.num_players
    enc = encoding(cfg.game.variant, n)
    rules = cfg.game.rules().replace(move_limit=cfg.eval.move_limit, limit_outcome="draw")
    # the game itself has no move limit; eval.move_limit plays the arena's cap (a draw for the undecided)
    table = [Game(rules.replace(first_seat=(i // n) % n)) for i in range(games)]
    seats = [i % n for i in range(games)]
    bots = [make_bot(opponent, seed + i) for i in range(games)]
    net.eval()
    while True:
        live = [i for i, g in enumerate(table) if not g.is_over]
        if not live:
            break
        mine = [i for i in live if table[i].to_move == seats[i]]
        if mine:
            obs = torch.from_numpy(np.stack([enc.observation(table[i], table[i].to_move) for i in mine])).to(device)
            moves = [table[i].legal_moves() for i in mine]
            m = max(len(x) for x in moves)
            legal = torch.zeros(len(mine), m, dtype=torch.int64)
            valid = torch.zeros(len(mine), m, dtype=torch.bool)
            for k, (i, ms) in enumerate(zip(mine, moves)):
                s = table[i].to_move
                legal[k, : len(ms)] = torch.from_numpy(enc.move_actions(s, ms))
                valid[k, : len(ms)] = True
            logits, _ = net(obs, legal.to(device), valid.to(device))
            best = logits.argmax(dim=1).tolist()
            for k, i in enumerate(mine):
                table[i].play(moves[k][best[k]])
        moved = set(mine)
        for i in live:
            g = table[i]
            if i not in moved and not g.is_over:
                g.play(bots[i].select_move(g))
    wins = draws = places = others = finished = decided = length = 0.0
    for g, s in zip(table, seats):
        p = g.places
        wins += p[s] == 1 and p.count(1) == 1
        draws += p[s] == 1 and p.count(1) > 1  # first place shared: a draw at the cap, say
        place = p[s]
        places += place if place is not None else n
        others += float(np.mean([q if q is not None else n for k, q in enumerate(p) if k != s]))
        finished += g.status[s] == "finished"
        decided += all(x is not None for x in p) and len(set(p)) == n
        length += g.ply
    k = max(games, 1)
    return {"win_rate": wins / k, "draw_rate": draws / k, "mean_place": places / k,
            "opponent_mean_place": others / k, "finish_rate": finished / k,
            "decided_rate": decided / k, "mean_length": length / k}


@torch.no_grad()
def evaluate_solo(net: HalmaNet, cfg: TrainConfig, device: torch.device) -> dict[str, float]:
    """The greedy policy's solitaire crossing (one game: the policy and the start are deterministic):
    its number of moves (the optimum is 27) and whether it finished within ``eval.move_limit``."""
    enc = encoding(cfg.game.variant, 1)  # seat 0's planes and actions read as in the network's own encoding
    game = Game(Rules(cfg.game.variant, 1, move_limit=cfg.eval.move_limit, limit_outcome="draw"))
    net.eval()
    while not game.is_over:
        moves = game.legal_moves()
        obs = torch.from_numpy(enc.observation(game, 0)[None]).to(device)
        legal = torch.from_numpy(enc.move_actions(0, moves)).unsqueeze(0).to(device)
        logits, _ = net(obs, legal, torch.ones_like(legal, dtype=torch.bool))
        game.play(moves[int(logits.argmax())])
    return {"moves": float(game.ply), "finished": float(game.status[0] == "finished")}


# --- the trainer -------------------------------------------------------------------------


def weights_digest(net: nn.Module) -> str:
    """A hash of the network's weights (to check that data-parallel processes hold the same ones)."""
    digest = hashlib.sha256()
    for tensor in net.state_dict().values():
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def check_same_weights(digests: list[str], update: int) -> None:
    """Raise if the processes' weight digests differ (their optimiser steps went apart: a bug)."""
    if len(set(digests)) > 1:
        raise RuntimeError(f"data-parallel processes hold different weights at update {update} "
                           f"(digests {', '.join(d[:12] for d in digests)})")


_NUMBERED = re.compile(r"update_(\d{6,})\.pt")  # Trainer.save's numbered checkpoints


def rng_state(np_rng: np.random.Generator) -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np_rng.bit_generator.state, "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any], np_rng: np.random.Generator) -> None:
    random.setstate(tuple(x if not isinstance(x, list) else tuple(x) for x in state["python"]))
    np_rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])


class Trainer:
    """Holds the network, optimiser, environments, pool and logs of one run directory.

    With ``processes`` > 1 (``agents.parallel``) one Trainer runs in each process (``rank``): each plays
    its share of the games; process 0 alone logs, evaluates and writes files.

    As CleanRL's script does, it seeds Python's and torch's global random generators and sets torch's thread
    count (``torch_threads``) for the whole process; they stay so after ``close()``, so in a notebook or an
    in-process sweep reseed or set them again for other work.
    """

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, device: str | None = None, resume: bool = False,
                 log: Callable[[str], None] | None = None, rank: int = 0, world_size: int = 1,
                 crossing_cache: str | Path | None = None, lock_run_dir: bool = False, quiet: bool = False) -> None:
        if device is not None:  # --device: config.yaml and the checkpoints record the device used
            device = device.strip() or device  # blanks aside, as check_device reads it ('' and ' ' are refused there)
            if device != cfg.device:
                cfg = dataclasses.replace(cfg, device=device)
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        # where the planner's crossing lines are kept between runs (None: planned at every start)
        self.crossing_cache = None if crossing_cache is None else Path(crossing_cache)
        self.rank, self.world_size = rank, world_size
        # no progress bar in this run, whatever log.progress_bar says (halma train --quiet): a flag of one command,
        # so not written into the config (a resume without it would list log.progress_bar as changed)
        self.quiet = quiet
        self._progress: _Progress | None = None  # the bar or status lines of the training in progress
        self.main = rank == 0  # the process that logs, evaluates and writes the run directory
        # flushed: runs are often redirected to a file
        self.log = (log or (lambda line: print(line, flush=True))) if self.main else (lambda line: None)
        # an unknown device, or cuda on a machine without one: a ValueError before anything is written
        self.device = check_device(cfg.device, "device" if device is None else "--device")
        if world_size > 1 and self.device.type != "cpu":
            raise ValueError(f"processes: {world_size} data-parallel processes run on the CPU; on {self.device.type} "
                             "use processes: 1")
        if cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)
        # seeding (CleanRL): python, numpy, torch; deterministic kernels on CPU.  Every process builds the
        # same initial network, then draws its own games and samples (process 0 as a single process would)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.np_rng = np.random.default_rng(cfg.seed if rank == 0 else [cfg.seed, rank])
        self.n = cfg.game.num_players
        self.net = build_network(cfg.game.variant, self.n, cfg.network).to(self.device)
        if rank:
            random.seed(cfg.seed * 1_000_003 + rank)
            torch.manual_seed(cfg.seed * 1_000_003 + rank)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5)
        self.pool = Pool(bots=list(cfg.pool.bots))
        self.global_step = 0
        self.update = 0
        self.imitated = False  # imitation (cfg.imitation) runs once, before the first update of a fresh run
        # the planner's solitaire positions (cfg.crossing), planned when training starts
        self.crossing_demos: Demonstrations | None = None
        self.crossing_main_rows = 0
        self.ratings: dict[str, Any] = {}
        self.eval_history: list[dict[str, Any]] = []
        self.resume_changes: list[str] = []  # config keys changed since the checkpoint a resume starts from
        self.resume_notes: list[str] = []  # what a resume says, once nothing can refuse it any more
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.snap_dir = self.run_dir / "snapshots"
        # (``lock_run_dir``: halma train) one run at a time in a run directory: locked first, before any check
        # and before the first write; the caller releases it (``with trainer.run_lock``), and an error on the
        # way releases it here, removing what the lock made when the run directory was not: refused input
        # writes nothing
        self.run_lock = RunLock(self.run_dir)
        self.writer: Any = None  # a SummaryWriter once the logs start
        try:
            if lock_run_dir and self.main:
                self.run_lock.acquire()
            if resume:
                if self.main:
                    self._check_run_dir_folders()
                self._resume()  # the run's own weights: init_from only starts a fresh run
            else:
                if self.main:  # the others would see the files process 0 has just begun to write
                    self._check_new_run_dir()
                if cfg.init_from is not None:
                    self._init_from(cfg.init_from)
            if not resume:
                self.run_dir.mkdir(parents=True, exist_ok=True)
            if self.main and not self.finished:  # a resume with nothing to do changes nothing
                self._start_logs(resume)
            for note in self.resume_notes:  # (a resume refused above says only why: not "resumed ..." first)
                self.log(note)
        except BaseException:
            self.close()
            self.run_lock.release_refused()
            raise

    def _check_run_dir_folders(self) -> None:
        """The folders a resumed run writes into (``checkpoints/``, ``snapshots/``, ``tb/``) are folders or not
        there: a file standing at one failed only when the run first wrote there (``snapshots`` after its
        training, as a traceback), with ``config.yaml`` already rewritten."""
        for folder in (self.ckpt_dir, self.snap_dir, self.run_dir / "tb"):
            if folder.exists() and not folder.is_dir():
                raise ValueError(f"{str(folder)!r} is a file, where the run keeps a folder: move it away to resume")

    def _start_logs(self, resume: bool) -> None:
        """The run's config.yaml, and its logs from where a resume starts."""
        cfg = self.cfg
        if resume:  # what the run logged after its checkpoint is replaced by what the resumed run logs
            drop_evaluations_after(self.run_dir, self.global_step)  # (first: it refuses a damaged file)
            if cfg.log.tensorboard:  # (a session that logs none needs no tensorboard; the next that does drops them)
                drop_events_after(self.run_dir / "tb", self.global_step)
        write_atomic(self.run_dir / "config.yaml", dump_yaml(cfg))  # a resume rewrites it: never half of it
        if cfg.log.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tb"))
            if not resume:
                hp = "\n".join(f"|{k}|{v}|" for k, v in flat_config(cfg.to_dict()).items())
                self.writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + hp)
            elif self.resume_changes:
                self.writer.add_text("resume_config_changes", "\n".join(f"- {c}" for c in self.resume_changes),
                                     self.global_step)

    def _check_new_run_dir(self) -> None:
        problem = new_run_dir_problem(self.run_dir)
        if problem is not None:
            raise ValueError(problem)

    # --- checkpoints --------------------------------------------------------------------

    def _network_dict(self) -> dict[str, Any]:
        return dict(vars(self.cfg.network))

    def _payload(self, rng_states: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The checkpoint's contents; a full one (given the processes' ``rng_states``) adds the optimiser,
        those states and the pool."""
        data: dict[str, Any] = {
            "variant": self.cfg.game.variant, "num_players": self.n, "network": self._network_dict(),
            "model": {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
            "global_step": self.global_step, "update": self.update, "config": self.cfg.to_dict(),
        }
        if rng_states is not None:
            data["optimizer"] = self.optimizer.state_dict()
            data["rng"] = rng_states[0]
            if len(rng_states) > 1:
                data["rng_ranks"] = rng_states
            # relative to the run directory: a resume from another working directory (or of a moved run) finds them
            snapshots = [os.path.relpath(path, self.run_dir) for path in self.pool.snapshot_paths]
            data["extra"] = {"snapshots": snapshots, "ratings": self.ratings}
        return data

    def save(self) -> Path:
        """Write ``last.pt`` (with every process's RNG state) and a numbered weights-only checkpoint.

        Every process calls it at the same update; it checks that they all hold the same weights."""
        rng_states = parallel.gather(rng_state(self.np_rng))
        check_same_weights(parallel.gather(weights_digest(self.net)), self.update)
        path = self.ckpt_dir / "last.pt"
        if not self.main:
            return path
        save_checkpoint(path, self._payload(rng_states))
        save_checkpoint(self.ckpt_dir / f"update_{self.update:06d}.pt", self._payload())
        # the run's own numbered files only (a user's update_000016_keep.pt stays), oldest by number first
        numbered = sorted((int(m[1]), p) for p in self.ckpt_dir.iterdir() if (m := _NUMBERED.fullmatch(p.name)))
        for _, old in numbered[: -self.cfg.checkpoint.keep]:
            old.unlink()
        return path

    def _resume(self) -> None:
        from agents.checkpoint import check_training_entries, check_weights, load_optimizer_state

        path = self.ckpt_dir / "last.pt"
        if not path.exists():
            raise ValueError(f"--resume: no checkpoint {str(path)!r} to continue from, so there is nothing to resume"
                             + (": remove the run directory and start again without --resume"
                                if self.run_dir.is_dir() and any(self.run_dir.iterdir()) else ""))
        data = load_checkpoint(path, variant=self.cfg.game.variant, num_players=self.n,
                               network=self._network_dict(), map_location=self.device)
        for key in ("optimizer", "rng", "global_step", "update", "extra"):
            if key not in data:
                raise ValueError(f"--resume: {str(path)!r} is not a training checkpoint (no {key})")
        # every entry is checked before any is applied (the loader checked the step counts): a bad one is a
        # CheckpointError naming the file and the entry, with the random streams untouched
        check_training_entries(data, path)
        check_weights(data, path)
        self.net.load_state_dict(data["model"])
        load_optimizer_state(self.optimizer, data["optimizer"], path)
        self.global_step, self.update = data["global_step"], data["update"]
        self.ratings = data["extra"].get("ratings", {})
        missing = []
        for listed in data["extra"].get("snapshots", []):
            snap = self._find_snapshot(listed)
            if snap is None:
                missing.append(listed)
            else:
                self.pool.add(snap, self._load_snapshot(snap), self.cfg.pool.max_snapshots)
        # the random streams last: building the snapshots' networks draws from torch's (their init)
        # each process continues its own random streams; a process the run did not have before (more
        # processes than it was written with) starts new ones
        states = data.get("rng_ranks", [data["rng"]])
        if self.rank < len(states):
            set_rng_state(states[self.rank], self.np_rng)
        else:
            self.np_rng = np.random.default_rng([self.cfg.seed, self.rank, data["update"]])
            torch.manual_seed(self.cfg.seed * 1_000_003 + self.rank + 7919 * data["update"])
        if not self.finished:  # (a finished run's "nothing to do" says where it is)
            self.resume_notes.append(f"resumed {self.run_dir} at update {self.update}, step {self.global_step}")
        if missing:  # said, not silent: the opponent pool is smaller than the run's
            self.resume_notes.append(f"opponent pool: {len(missing)} of the checkpoint's snapshots missing, left "
                                     f"out: {', '.join(missing)} (looked in {self.snap_dir})")
        self.resume_changes = config_changes(with_keys_added_later(data.get("config") or {}), self.cfg.to_dict())
        if self.resume_changes:  # said, not silent: the run continues under the config given now
            self.resume_notes.append("config changed since the checkpoint (checkpoint -> now): "
                                     + ", ".join(self.resume_changes))

    def _init_from(self, path: str) -> None:
        """Start from a checkpoint's weights (fine-tuning): a fresh optimiser, step 0, this config's schedule.

        A checkpoint with fewer ``attention_layers`` than the config, or without the ``reach_features``
        the config asks for, but otherwise the same network, gets the missing layers as the identity and
        the reach planes' input weights at zero (``load_extending``), so the run starts from the
        checkpoint's play.
        """
        from agents.checkpoint import check_weights

        wanted = self._network_dict()
        try:
            data = load_checkpoint(path, variant=self.cfg.game.variant, num_players=self.n, map_location=self.device)
            have = data["network"]
            lesser = {**wanted, "attention_layers": have["attention_layers"], "reach_features": have["reach_features"]}
            adds_only = (have["attention_layers"] <= wanted["attention_layers"]
                         and have["reach_features"] <= wanted["reach_features"])  # False <= True: planes added
            if lesser != wanted and adds_only:
                check_network(data, lesser, path)  # the same network but for what the config adds
                check_weights(data, path)  # each tensor's name and shape: one line naming the file and the tensor
                added = load_extending(self.net, data["model"])
                self.log(f"init_from: added {' and '.join(added)}, starting as the checkpoint plays")
            else:
                check_network(data, wanted, path)
                check_weights(data, path)  # not torch's size mismatch, one line per tensor, without the file
                self.net.load_state_dict(data["model"])
        except (ValueError, RuntimeError) as exc:  # CheckpointError is a ValueError; a bad state dict a RuntimeError
            raise ValueError(f"init_from: {exc}") from None
        self.log(f"initialised from {path} (its update {data.get('update', '?')}, step {data.get('global_step', '?')})")

    def _find_snapshot(self, listed: str) -> str | None:
        """Where a snapshot that the checkpoint lists is now: in this run's ``snapshots/`` (checkpoints list
        them relative to the run directory; older ones as written, e.g. ``runs/NAME/snapshots/...`` relative to
        the working directory of the time), else at the path as listed; None if in neither."""
        for path in (self.snap_dir / Path(listed).name, Path(listed)):
            if path.is_file():
                return str(path)
        return None

    def _load_snapshot(self, path: str) -> HalmaNet:
        data = load_checkpoint(path, variant=self.cfg.game.variant, num_players=self.n,
                               network=self._network_dict(), map_location=self.device)
        return model_from_checkpoint(data, path).to(self.device)

    def _snapshot(self) -> None:
        path = str(self.snap_dir / f"snap_{self.update:06d}.pt")
        if self.main:  # every process keeps the same snapshot in memory; one writes it
            save_checkpoint(path, self._payload())
        frozen = build_network(self.cfg.game.variant, self.n, self.cfg.network).to(self.device)
        frozen.load_state_dict(self.net.state_dict())
        frozen.eval()
        self.pool.add(path, frozen, self.cfg.pool.max_snapshots)

    # --- evaluation ---------------------------------------------------------------------

    def run_evaluation(self, opponents: list[str], games: int, final: bool = False) -> dict[str, Any]:
        from openskill.models import PlackettLuce

        results: dict[str, Any] = {"global_step": self.global_step, "update": self.update, "final": final}
        model = PlackettLuce()
        # the final evaluation's games are its own: at the update of the last evaluation during training its
        # seed would give the same games again (and the rating would count them twice)
        seed = self.cfg.seed + 7919 * (self.update + 1) + (1 if final else 0)
        for opp in opponents:
            r = evaluate(self.net, self.cfg, opp, games, seed=seed, device=self.device)
            results[opp] = r
            # a rating of the agent against each bot from the evaluation games: a win, a draw (a tie, which
            # counts as half a win: SPEC §5) or a loss each
            me = model.rating(**self.ratings.get("agent", {})) if "agent" in self.ratings else model.rating()
            them = model.rating(**self.ratings[opp]) if opp in self.ratings else model.rating()
            wins = int(round(r["win_rate"] * games))
            draws = int(round(r["draw_rate"] * games))
            for k in range(games):
                ranks: list[float] = [1, 2] if k < wins else [1, 1] if k < wins + draws else [2, 1]
                [me], [them] = model.rate([[me], [them]], ranks=ranks)
            self.ratings["agent"] = {"mu": me.mu, "sigma": me.sigma}
            self.ratings[opp] = {"mu": them.mu, "sigma": them.sigma}
            if self.writer:
                for key, value in r.items():
                    self.writer.add_scalar(f"eval/{opp}/{key}", value, self.global_step)
            results[opp]["rating_agent"] = me.ordinal()
        if self.cfg.env.solo_envs or self.cfg.crossing.coef:
            results["solo"] = evaluate_solo(self.net, self.cfg, self.device)
            if self.writer:
                self.writer.add_scalar("eval/solo_moves", results["solo"]["moves"], self.global_step)
        if self.writer and "agent" in self.ratings:
            a = self.ratings["agent"]
            self.writer.add_scalar("eval/rating_ordinal", a["mu"] - 3 * a["sigma"], self.global_step)
        with open(self.run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(results) + "\n")
        self.eval_history.append(results)
        self.net.train()
        return results

    # --- imitation before PPO (agents/imitation.py) -----------------------------------

    def _imitate(self) -> None:
        from agents.imitation import imitate

        im = self.cfg.imitation
        self.log(f"imitation: {im.games} games of {im.bot} in every seat, then {im.epochs} epochs")
        stats = imitate(self.net, self.cfg, make_bot, self.device, seed=self.cfg.seed)
        self.imitated = True
        write_atomic(self.run_dir / "imitation.json", json.dumps(stats, indent=1) + "\n")
        if self.writer:
            for key, value in stats.items():
                self.writer.add_scalar(key, value, 0)
        held = (f", held-out accuracy {stats['imitation/held_out_accuracy']:.1%}"
                if "imitation/held_out_accuracy" in stats else "")
        self.log(f"imitation: {stats['imitation/positions']:.0f} positions in {stats['imitation/record_s']:.0f} s; "
                 f"fit in {stats['imitation/fit_s']:.0f} s: accuracy {stats['imitation/accuracy']:.1%}{held}, "
                 f"value loss {stats['imitation/value_loss']:.3f}")

    @torch.no_grad()
    def _sample(self, obs: torch.Tensor, legal: torch.Tensor, valid: torch.Tensor):
        """The learner's move of each position: (slot in its legal list, log-probability, value)."""
        logits, value = self.net(obs, legal, valid)
        slot = torch.distributions.Categorical(logits=logits).sample()
        return slot, torch.log_softmax(logits, dim=-1).gather(1, slot[:, None]).squeeze(1), value

    def _teacher_slots(self, teacher: Any, env, rows: np.ndarray, legal: torch.Tensor,
                       valid: torch.Tensor) -> torch.Tensor:
        """Where the imitation bot's (``teacher``'s) move of each learner position sits in its legal list."""
        games = env_games(env)
        enc = encoding(self.cfg.game.variant, self.n)
        wanted = []
        for b in rows:
            game = games[b]
            move = teacher.select_move(game)
            wanted.append(enc.encode_move(game.to_move, move.src, move.dst))
        hit = (legal == torch.as_tensor(wanted, device=legal.device)[:, None]) & valid
        return torch.where(hit.any(1), hit.float().argmax(1), -1)

    def _plan_crossings(self) -> None:
        """The planner's solitaire lines the policy learns during PPO (``crossing.*``).  The planner is
        deterministic and the detours are seeded, so a plan is kept in ``crossing_cache`` (the CLI's
        ``<runs-dir>/.crossing_cache/``) and read back by the runs that follow (a resume, a stage started
        with ``init_from``); a cached plan that is unreadable, another config's or illegal is planned again."""
        from agents.imitation import (
            crossing_cache_path,
            crossing_demonstrations,
            load_crossing_lines,
            plan_crossing_lines,
            save_crossing_lines,
        )

        cx, seed = self.cfg.crossing, self.cfg.seed
        start = time.perf_counter()
        cached = None if self.crossing_cache is None else crossing_cache_path(self.crossing_cache, self.cfg, seed)
        demos = None
        if cached is not None and cached.exists():
            try:
                demos, lengths = crossing_demonstrations(self.cfg, load_crossing_lines(cached, self.cfg, seed))
                source = f"read from {cached}"
            except ValueError as exc:
                self.log(f"crossing: planning again: {exc}")
        if demos is None:
            lines = plan_crossing_lines(self.cfg, seed)
            demos, lengths = crossing_demonstrations(self.cfg, lines)
            source = "planned"
            if cached is not None and self.main:
                save_crossing_lines(cached, self.cfg, seed, lines)
                source = f"planned, kept in {cached}"
        self.crossing_demos = demos.to(self.device)
        self.crossing_main_rows = lengths[0]  # the main line's positions come first
        info = {"main_line_moves": lengths[0], "detour_moves": lengths[1:], "positions": len(demos),
                "seconds": time.perf_counter() - start, "source": source}
        if self.main:
            write_atomic(self.run_dir / "crossing.json", json.dumps(info, indent=1) + "\n")
        self.log(f"crossing: the planner's main line (width {cx.planner_width}) takes {lengths[0]} moves; "
                 f"{cx.detours} detours; {len(demos)} positions in {info['seconds']:.0f} s ({source})")

    # --- the loop -----------------------------------------------------------------------

    @property
    def batch_steps(self) -> int:
        """The environment steps of one rollout: (num_envs + solo_envs) x num_steps, of all processes."""
        return self.cfg.rollout_steps

    @property
    def end_step(self) -> int:
        """The global step the run ends at: whole rollouts from the step it is at, as long as another one fits
        under ``ppo.total_steps`` (rounded down as in CleanRL), and at least one for a fresh run.  Counted in
        steps, not updates, so that a resume with another ``num_steps`` or ``num_envs`` still ends there."""
        whole = max(0, self.cfg.ppo.total_steps - self.global_step) // self.batch_steps
        return self.global_step + max(whole, 1 if self.update == 0 else 0) * self.batch_steps

    @property
    def finished(self) -> bool:
        """Whether the run is at its end (``end_step``): a resume of it has nothing to train."""
        return self.global_step >= self.end_step

    @property
    def num_iterations(self) -> int:
        """The update the run ends at (``end_step``): for a run whose rollouts never changed, ``ppo.total_steps``
        in whole rollouts, and at least one."""
        return self.update + (self.end_step - self.global_step) // self.batch_steps

    def train(self, stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """Train up to ``ppo.total_steps``; ``stop`` (if given) is asked after every update and ends the
        run early when it returns True (with several processes it must answer the same in all of them,
        e.g. through ``parallel.any_true``)."""
        cfg, ppo, dev = self.cfg, self.cfg.ppo, self.device
        if self.update == 0 and cfg.imitation.games and not self.imitated:
            if self.main:  # the others receive its weights just below
                self._imitate()
            self.imitated = True
        parallel.broadcast_parameters(self.net)
        if cfg.crossing.coef and self.crossing_demos is None:
            self._plan_crossings()
        # this process's games (all of them with one process); a ply is a step of every process's games
        n, num_envs, num_solo = self.n, cfg.env.num_envs // self.world_size, cfg.env.solo_envs // self.world_size
        steps_per_ply = cfg.env.num_envs + cfg.env.solo_envs
        batch_steps, end_step = self.batch_steps, self.end_step
        seed = cfg.seed + 1000 * self.update + 1_000_000_007 * self.rank
        env = make_env(cfg, dev, seed=seed, num_envs=num_envs)
        env.reset()
        # solitaire games: environments num_envs.. of the rollout buffer, always the learner's, seat 0
        solo = make_solo_env(cfg, dev, seed=seed + 500, num_envs=num_solo) if num_solo else None
        # distillation toward the imitation bot's moves on the learner's own positions (kickstarting)
        # (validate(): distill_coef > 0 needs imitation.bot); seeded as the pool's bots are, so a resumed
        # session and each process break the bot's ties with their own random stream
        teacher_seed = cfg.seed * 7 + 1 + 1000 * self.update + 1_000_000_007 * self.rank
        self._teacher = (make_bot(cast(str, cfg.imitation.bot), seed=teacher_seed)
                         if cfg.imitation.distill_coef > 0 else None)
        if solo is not None:
            solo.reset()
        seating = Seating(cfg, self.pool, self.np_rng, num_envs, self.rank, first_update=self.update)
        # the running episode return of each (environment, seat); the pending transitions are the buffer's
        ep_return = np.zeros((num_envs + num_solo, n), dtype=np.float64)
        carry: dict[str, Any] | None = None
        # kept on the trainer: close() ends the bar's line when an error leaves the loop, so the error is said
        # below it (halma train closes the trainer before it prints one)
        progress = self._progress = _Progress(self, end_step)
        episode_stats: list[dict[str, float]] = []
        solo_stats: list[dict[str, float]] = []
        stats: dict[str, float] = {}
        self.net.train()
        while self.global_step < end_step:
            self.update += 1
            # annealed by steps (1 - (update - 1) / updates while the rollouts stay the same size); set every
            # update either way, so a resumed run steps at this config's rate, not the one its optimiser state kept
            frac = 1.0 - self.global_step / end_step if ppo.anneal_lr else 1.0
            self.optimizer.param_groups[0]["lr"] = frac * ppo.learning_rate
            # ---- rollout: num_steps plies of every game; the learner's decisions go to the buffer ----
            t_rollout = time.perf_counter()
            buf = RolloutBuffer(carry, n, num_envs + num_solo)
            for _ in range(ppo.num_steps):
                self.global_step += steps_per_ply
                actions = self._act(env, seating, buf)
                if solo is not None:
                    s_rewards, s_done, s_info = self._act_solo(solo, buf, first_row=num_envs)
                rewards, done, info = env.step(actions)
                rewards_np = np.zeros((num_envs + num_solo, n), dtype=np.float64)
                rewards_np[:num_envs] = rewards.cpu().numpy()
                if solo is not None:
                    rewards_np[num_envs:, 0] = s_rewards[:, 0].cpu().numpy() - cfg.env.solo_move_cost
                buf.reward_all(rewards_np)
                ep_return += rewards_np
                if solo is not None:
                    for b in np.flatnonzero(s_done.cpu().numpy()):
                        buf.end_game(num_envs + b)
                        solo_stats.append({"moves": float(s_info["length"][b]), "return": ep_return[num_envs + b, 0],
                                           "finished": float(end_reason_name(s_info["end_reason"][b])
                                                             in FINISH_REASONS)})
                        ep_return[num_envs + b] = 0
                for b in np.flatnonzero(done.cpu().numpy()):
                    buf.end_game(b)
                    episode_stats += _episode_stats(info, b, seating.trained_seats(b), ep_return[b], n)
                    ep_return[b] = 0
                    seating.draw(b)  # the next game in this environment gets a new table
            carry = buf.finish()
            # ---- advantages (GAE along each seat's own trajectory) ----
            data = buf.batch(ppo.gamma, ppo.gae_lambda, dev)
            # ---- update ----
            t_update = time.perf_counter()
            stats = self._ppo_update(data)
            stats["perf/rollout_s"] = t_update - t_rollout
            stats["perf/update_s"] = time.perf_counter() - t_update
            # ---- logging, then the periodic snapshot, evaluation and checkpoint ----
            episodes, solos = _gather_games(episode_stats, solo_stats)
            stats.update(_game_stats(episodes, solos))
            episode_stats, solo_stats = [], []
            progress.log(stats, batch_steps, episodes, solos)
            if self.update % cfg.pool.snapshot_every == 0:
                self._snapshot()
            if progress.evaluation_due(self.global_step):
                if self.main:
                    res = self.run_evaluation(cfg.eval.opponents, cfg.eval.games)
                    self.log(eval_line(res, cfg.eval.opponents))
            if self.update % cfg.checkpoint.every == 0 or self.global_step == end_step:
                self.save()
            if stop is not None and stop():
                break
        progress.close()
        self._progress = None
        return stats

    def _act(self, env, seating: Seating, buf: RolloutBuffer) -> torch.Tensor:
        """Every game's move for this ply: the learner samples (and its decisions go to ``buf``),
        snapshots sample from their own policy, bots choose with their own generators."""
        obs = env.observation()
        legal, valid = env.legal_lists()
        mover = env.to_move.cpu().numpy()
        learner = seating.learner_moves(mover)
        actions = torch.zeros(len(mover), dtype=torch.int64, device=self.device)
        rows = np.flatnonzero(learner)
        if rows.size:
            idx = torch.as_tensor(rows, device=self.device)
            slot, logp, value = self._sample(obs[idx], legal[idx], valid[idx])
            actions[idx] = legal[idx, slot]  # pairs row k with slot k
            teacher = (self._teacher_slots(self._teacher, env, rows, legal[idx], valid[idx])
                       if self._teacher is not None else None)
            buf.add(rows, mover[rows], obs[idx], legal[idx], valid[idx], slot, logp, value, teacher)
        others = np.flatnonzero(~learner)
        for snapshot, group in seating.snapshot_groups(others):
            idx = torch.as_tensor(group, device=self.device)
            with torch.no_grad():
                logits, _ = snapshot(obs[idx], legal[idx], valid[idx])
            actions[idx] = legal[idx, torch.distributions.Categorical(logits=logits).sample()]
        bot_rows = seating.bot_rows(others)
        if bot_rows:
            games = env_games(env)
            enc = encoding(self.cfg.game.variant, self.n)
            for b in bot_rows:
                move = seating.opponent[b].select_move(games[b])
                actions[b] = enc.encode_move(games[b].to_move, move.src, move.dst)
        return actions

    def _act_solo(self, solo, buf: RolloutBuffer, first_row: int):
        """One move of every solitaire game, sampled by the learner (buffer rows ``first_row``..);
        returns the solitaire engine's (rewards, done, info)."""
        s_obs = solo.observation().clone()  # the engine's buffer, rewritten next ply: the rollout keeps a copy
        s_legal, s_valid = solo.legal_lists()
        slot, logp, value = self._sample(s_obs, s_legal, s_valid)
        rows = np.arange(first_row, first_row + len(s_obs))
        buf.add(rows, np.zeros(len(rows), dtype=np.int64), s_obs, s_legal, s_valid, slot, logp, value)
        return solo.step(s_legal.gather(1, slot[:, None]).squeeze(1))

    def _ppo_update(self, d: dict[str, torch.Tensor]) -> dict[str, float]:
        ppo = self.cfg.ppo
        size = d["adv"].shape[0]
        if size == 0 and self.world_size == 1:
            return {}
        mb_size = max(1, math.ceil(size / ppo.num_minibatches))
        params = list(self.net.parameters())
        clipfracs, approx_kl = [], torch.tensor(0.0)
        # the distillation weight anneals with the learning rate: the bot guides early, PPO decides late
        distill_coef = self.cfg.imitation.distill_coef * self.optimizer.param_groups[0]["lr"] / ppo.learning_rate
        # so that the statistics below exist when this process had no sample (processes > 1)
        pg_loss = v_loss = entropy_loss = logratio = distill_loss = crossing_loss = torch.tensor(0.0)
        for _epoch in range(ppo.update_epochs):
            order = torch.as_tensor(self.np_rng.permutation(size), device=self.device)
            # target_kl reads the epoch's last minibatch (CleanRL's): with processes > 1 its KL over every
            # process's rows of it, so that a process with no row of it adds nothing (it added its earlier KL)
            last_kl, last_rows = 0.0, 0
            # num_minibatches optimiser steps per epoch in every process (with processes > 1 one process's
            # share of a minibatch may be empty: it then adds no gradient to the others')
            for k in range(ppo.num_minibatches):
                mb = order[k * mb_size:(k + 1) * mb_size]
                if len(mb) == 0 and self.world_size == 1:
                    break
                self.optimizer.zero_grad()
                if len(mb):
                    valid = d["valid"][mb]
                    # trim the padding to this minibatch's longest list (lists are left-packed, so every
                    # sampled slot stays inside; the masked entries had probability 0 either way)
                    width = int(valid.sum(1).max())
                    valid = valid[:, :width]
                    logits, newvalue = self.net(d["obs"][mb], d["legal"][mb, :width], valid)
                    logprobs = torch.log_softmax(logits, dim=-1)
                    newlogp = logprobs.gather(1, d["slot"][mb, None]).squeeze(1)
                    entropy = -(logprobs.exp() * logprobs).sum(-1)  # masked entries: 0 * finite = 0
                    logratio = newlogp - d["logp"][mb]
                    ratio = logratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                        clipfracs.append(((ratio - 1.0).abs() > ppo.clip_coef).float().mean().item())
                    mb_adv = d["adv"][mb]
                    if ppo.norm_adv and mb_adv.numel() > 1:
                        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                    pg_loss = torch.max(-mb_adv * ratio,
                                        -mb_adv * ratio.clamp(1 - ppo.clip_coef, 1 + ppo.clip_coef)).mean()
                    ret, old_v = d["ret"][mb], d["value"][mb]
                    if ppo.clip_vloss:
                        v_clipped = old_v + (newvalue - old_v).clamp(-ppo.clip_coef, ppo.clip_coef)
                        v_loss = 0.5 * torch.max((newvalue - ret) ** 2, (v_clipped - ret) ** 2).mean()
                    else:
                        v_loss = 0.5 * ((newvalue - ret) ** 2).mean()
                    entropy_loss = entropy.mean()
                    loss = pg_loss - ppo.ent_coef * entropy_loss + v_loss * ppo.vf_coef
                    teacher = d["teacher"][mb]
                    if distill_coef > 0 and bool((teacher >= 0).any()):
                        taught = teacher >= 0
                        distill_loss = F.cross_entropy(logits[taught], teacher[taught])
                        loss = loss + distill_coef * distill_loss
                    if self.crossing_demos is not None:
                        crossing_loss = self._crossing_loss(self.crossing_demos)
                        loss = loss + self.cfg.crossing.coef * crossing_loss
                    loss.backward()
                # processes > 1: the mean gradient over all processes' samples of this minibatch
                if parallel.average_gradients(params, len(mb)) == 0:
                    continue  # no process had a sample
                if ppo.target_kl is not None:
                    last_kl, last_rows = (float(approx_kl) if len(mb) else 0.0), len(mb)
                # (every process has the same averaged gradients: a divergence stops them all)
                clip_gradients(self.net, ppo.max_grad_norm, f"update {self.update}", "ppo.learning_rate")
                self.optimizer.step()
            if ppo.target_kl is not None and parallel.weighted_mean(last_kl, last_rows) > ppo.target_kl:
                break
        # over the whole rollout, every process's share: from each one's count and sums
        mine = (0, 0.0, 0.0, 0.0, 0.0)  # a process with no decision (processes > 1) has no "ret" in its batch
        if size:
            y_true, residual = d["ret"].double().cpu(), (d["ret"] - d["value"]).double().cpu()
            mine = (len(y_true), float(y_true.sum()), float((y_true ** 2).sum()), float(residual.sum()),
                    float((residual ** 2).sum()))
        count, *sums = np.sum(parallel.gather(mine), axis=0)
        explained_var = explained_variance(int(count), *sums)
        return {
            "losses/value_loss": v_loss.item(), "losses/policy_loss": pg_loss.item(),
            "losses/entropy": entropy_loss.item(), "losses/old_approx_kl": float((-logratio).mean().item()),
            "losses/approx_kl": approx_kl.item(), "losses/clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
            "losses/explained_variance": explained_var, "charts/transitions": float(count),
            "losses/distill": distill_loss.item(), "charts/distill_coef": distill_coef,
            "losses/crossing": crossing_loss.item(),
        }

    def _crossing_loss(self, demos: Demonstrations) -> torch.Tensor:
        """Cross-entropy toward the planner's move (``demos``: the crossing positions) on its main line (every
        position: the greedy policy must follow all of it) and on a sample of the detours' positions."""
        main = self.crossing_main_rows
        detours = main + self.np_rng.permutation(len(demos) - main)[:CROSSING_SAMPLE]
        pick = torch.as_tensor(np.concatenate([np.arange(main), detours]), device=self.device)
        valid = demos.valid[pick]
        width = int(valid.sum(1).max())
        logits, _ = self.net(demos.obs[pick], demos.legal[pick, :width], valid[:, :width])
        return F.cross_entropy(logits, demos.choice[pick])

    def close(self) -> None:
        if self._progress is not None:  # training stopped by an error: the bar's line ends where it stands
            self._progress.abandon()
            self._progress = None
        if self.writer:
            self.writer.close()
            self.writer = None  # what runs after (the final evaluation) must not write to a closed log


class RolloutBuffer:
    """Learner transitions of one rollout plus those carried over from the previous one.

    Transition ``i`` links to the same (environment, seat)'s next decision ``next_index[i]``;
    rewards the seat receives in between are added to it; ``done[i]`` when the game ended first.
    """

    def __init__(self, carry: dict[str, Any] | None, num_players: int, num_envs: int) -> None:
        self.parts: dict[str, list[torch.Tensor]] = {
            k: [] for k in ("obs", "legal", "valid", "slot", "logp", "value", "teacher")}
        self.reward: list[float] = []
        self.done: list[bool] = []
        self.next_index: list[int] = []
        self.pending = np.full((num_envs, num_players), -1, dtype=np.int64)
        if carry is not None:
            for k in self.parts:
                self.parts[k].append(carry[k])
            self.reward = list(carry["reward"])
            self.done = [False] * len(self.reward)
            self.next_index = [-1] * len(self.reward)
            for i, (b, s) in enumerate(carry["where"]):
                self.pending[b, s] = i

    def __len__(self) -> int:
        return len(self.reward)

    def add(self, envs: np.ndarray, seats: np.ndarray, obs, legal, valid, slot, logp, value,
            teacher: torch.Tensor | None = None) -> None:
        """``teacher``: the slot of the imitation bot's move in each legal list (-1: none), for the
        distillation term (``imitation.distill_coef``)."""
        base = len(self.reward)
        if teacher is None:
            teacher = torch.full_like(slot, -1)
        for k, v in (("obs", obs), ("legal", legal), ("valid", valid), ("slot", slot), ("logp", logp),
                     ("value", value), ("teacher", teacher)):
            self.parts[k].append(v)
        for j, (b, s) in enumerate(zip(envs.tolist(), seats.tolist())):
            i = base + j
            prev = self.pending[b, s]
            if prev >= 0:
                self.next_index[prev] = i
            self.pending[b, s] = i
            self.reward.append(0.0)
            self.done.append(False)
            self.next_index.append(-1)

    def reward_all(self, rewards: np.ndarray) -> None:
        """Add each seat's reward of this ply to its pending transition."""
        for b, s in zip(*np.nonzero(self.pending >= 0)):
            self.reward[self.pending[b, s]] += float(rewards[b, s])

    def end_game(self, b: int | np.integer) -> None:
        """Environment ``b``'s game ended: its seats' pending transitions are terminal."""
        for s in range(self.pending.shape[1]):
            i = self.pending[b, s]
            if i >= 0:
                self.done[i] = True
                self.pending[b, s] = -1

    def _cat(self, key: str) -> torch.Tensor:
        parts = self.parts[key]
        if key in ("legal", "valid"):
            width = max(p.shape[1] for p in parts)
            parts = [F.pad(p, (0, width - p.shape[1])) for p in parts]
        return torch.cat(parts)

    def finish(self) -> dict[str, Any] | None:
        """Concatenate; return the still pending transitions to carry into the next rollout."""
        self.data = {k: self._cat(k) for k in self.parts} if self.parts["obs"] else None
        where = [(int(b), int(s)) for b, s in zip(*np.nonzero(self.pending >= 0))]
        if self.data is None or not where:
            return None
        idx = torch.as_tensor([self.pending[b, s] for b, s in where], device=self.data["obs"].device)
        carry: dict[str, Any] = {k: v[idx] for k, v in self.data.items()}  # tensors, and the lists below
        carry["reward"] = [self.reward[int(i)] for i in idx.tolist()]
        carry["where"] = where
        return carry

    def batch(self, gamma: float, lam: float, device: torch.device) -> dict[str, torch.Tensor]:
        """The completed transitions with GAE advantages and returns (from the values stored when
        each decision was sampled, as in CleanRL)."""
        if self.data is None:
            return {"adv": torch.zeros(0)}
        size = len(self.reward)
        value = self.data["value"].cpu().numpy().astype(np.float64)
        complete = np.array([d or j >= 0 for d, j in zip(self.done, self.next_index)], dtype=bool)
        adv = np.zeros(size, dtype=np.float64)
        for i in range(size - 1, -1, -1):  # successors come later, so they are done first
            if not complete[i]:
                continue
            j = self.next_index[i]
            if self.done[i]:
                adv[i] = self.reward[i] - value[i]
            else:
                delta = self.reward[i] + gamma * value[j] - value[i]
                adv[i] = delta + gamma * lam * (adv[j] if complete[j] else 0.0)
        keep = torch.as_tensor(np.flatnonzero(complete), device=device)
        out = {k: v[keep] for k, v in self.data.items()}
        adv_t = torch.as_tensor(adv, dtype=torch.float32, device=device)[keep]
        out["adv"] = adv_t
        out["ret"] = adv_t + out["value"]
        return out


def _episode_stats(info: dict[str, Any], b: int | np.integer, seats: Any, returns: np.ndarray,
                   n: int) -> list[dict[str, float]]:
    """The statistics of the game that ended in environment ``b``, one entry per trained seat."""
    places = np.asarray(info["places"][b].tolist() if hasattr(info["places"], "cpu") else info["places"][b])
    finished = float(end_reason_name(info["end_reason"][b]) in FINISH_REASONS)
    return [{"return": returns[s], "length": float(info["length"][b]), "place": float(places[s] or n),
             "game_finished": finished} for s in seats]


def _gather_games(episode_stats: list[dict[str, float]],
                  solo_stats: list[dict[str, float]]) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """The statistics of the games that ended during an update in every process (a collective: every
    process calls it once per update)."""
    gathered = parallel.gather((episode_stats, solo_stats))
    return [e for part, _ in gathered for e in part], [e for _, part in gathered for e in part]


def _game_stats(episodes: list[dict[str, float]], solos: list[dict[str, float]]) -> dict[str, float]:
    """The ``charts/`` means of the games ``episodes`` (learner seats) and ``solos`` (solitaire)."""
    stats: dict[str, float] = {}
    if episodes:
        for key, name in (("return", "charts/episodic_return"), ("length", "charts/episodic_length"),
                          ("place", "charts/mean_place"), ("game_finished", "charts/finish_rate")):
            stats[name] = float(np.mean([e[key] for e in episodes]))
        stats["charts/games"] = len(episodes)
    if solos:
        stats["charts/solo_moves"] = float(np.mean([e["moves"] for e in solos]))
        stats["charts/solo_finish_rate"] = float(np.mean([e["finished"] for e in solos]))
        stats["charts/solo_return"] = float(np.mean([e["return"] for e in solos]))
    return stats


class _Progress:
    """A run's reporting: steps per second, TensorBoard, the progress bar or the periodic status line,
    and when the next evaluation is due.

    TensorBoard gets each update's games; the status line (or the bar's figures) those that ended since
    the previous line (or the bar's previous figures), so that a game ended between two lines shows."""

    BAR_EVERY = 1.0  # seconds between the bar's figures (its mininterval)

    def __init__(self, trainer: Trainer, total_steps: int) -> None:
        cfg = trainer.cfg
        self.trainer = trainer
        self.start_time, self.start_step = time.time(), trainer.global_step
        self.last_status = time.time()
        # the games that ended since the last status line or bar figures (every process's)
        self.episodes: list[dict[str, float]] = []
        self.solos: list[dict[str, float]] = []
        self.unreported: dict[str, float] | None = None  # the last update's stats, when no line showed them
        self.next_eval = ((trainer.global_step // cfg.eval.every + 1) * cfg.eval.every
                          if cfg.eval.every and cfg.eval.games else None)
        self.bar = None
        if cfg.log.progress_bar and not trainer.quiet and trainer.main:
            from tqdm import tqdm

            size = bar_size()  # (a terminal of no size: a fixed one, else the bar follows the terminal's)
            self.bar = tqdm(total=total_steps, initial=min(trainer.global_step, total_steps), unit="step",
                            dynamic_ncols=not size, mininterval=self.BAR_EVERY, **size)
            self.last_status = 0.0  # the bar's first figures come with the first update

    def log(self, stats: dict[str, float], steps: int, episodes: list[dict[str, float]] | None = None,
            solos: list[dict[str, float]] | None = None) -> None:
        """Report one update's ``stats`` (``steps`` environment steps; ``episodes`` and ``solos``: the games
        that ended during it, as ``_gather_games`` gives them), adding SPS and the learning rate."""
        t = self.trainer
        sps = int((t.global_step - self.start_step) / max(time.time() - self.start_time, 1e-9))
        stats["charts/SPS"] = sps
        stats["charts/learning_rate"] = t.optimizer.param_groups[0]["lr"]
        if t.writer:
            for key, value in stats.items():
                t.writer.add_scalar(key, value, t.global_step)
        self.episodes += episodes or []
        self.solos += solos or []
        if self.bar is not None:
            self.bar.update(steps)
        every = self.BAR_EVERY if self.bar is not None else t.cfg.log.status_every
        if time.time() - self.last_status < every:
            self.unreported = stats
            return
        self.report(stats)

    def report(self, stats: dict[str, float]) -> None:
        """The status line or the bar's figures: this update's ``stats``, their game means replaced by those of
        every game since the last report."""
        t = self.trainer
        self.last_status = time.time()
        self.unreported = None
        shown = {**stats, **_game_stats(self.episodes, self.solos)}
        self.episodes, self.solos = [], []
        sps = int(stats["charts/SPS"])
        if self.bar is not None:
            self.bar.set_postfix(ret=_fmt(shown, "charts/episodic_return", ".2f"),
                                 len=_fmt(shown, "charts/episodic_length", ".0f"),
                                 fin=_fmt(shown, "charts/finish_rate", ".2f"), sps=sps)
        else:
            t.log(status_line(t.update, t.num_iterations, t.global_step, shown))

    def evaluation_due(self, global_step: int) -> bool:
        """True once per ``eval.every`` steps (in every process, so that they agree)."""
        if self.next_eval is None or global_step < self.next_eval:
            return False
        self.next_eval += self.trainer.cfg.eval.every
        return True

    def abandon(self) -> None:
        """The bar closed where it stands (its line ended), so what is printed next starts a line of its own."""
        if self.bar is not None:
            self.bar.close()

    def close(self) -> None:
        if self.unreported is not None and self.bar is None:  # the last updates' games get their line too
            self.report(self.unreported)
        if self.bar is not None:
            self.bar.close()
        if self.trainer.writer:
            self.trainer.writer.flush()


def _fmt(stats: dict[str, float], key: str, spec: str) -> str:
    """``stats[key]`` formatted, or "-" when it is missing or NaN."""
    value = stats.get(key)
    return "-" if value is None or math.isnan(value) else format(value, spec)


def status_line(update: int, total: int, step: int, stats: dict[str, float]) -> str:
    """One progress line; game statistics (the means of the games that ended since the last line:
    ``_Progress.log``) read "-" when no game ended since then."""

    def fmt(key: str, spec: str) -> str:
        return _fmt(stats, key, spec)

    return (f"update {update}/{total} step {step} SPS {fmt('charts/SPS', '.0f')} "
            f"return {fmt('charts/episodic_return', '.3f')} length {fmt('charts/episodic_length', '.0f')} "
            f"finish {fmt('charts/finish_rate', '.2f')} entropy {fmt('losses/entropy', '.3f')}"
            + (f" solo_moves {fmt('charts/solo_moves', '.1f')}" if "charts/solo_moves" in stats else ""))


def eval_line(res: dict[str, Any], opponents: list[str]) -> str:
    parts = [f"{o}: win {res[o]['win_rate']:.0%} finish {res[o]['finish_rate']:.0%} "
             f"len {res[o]['mean_length']:.0f} plies" for o in opponents if o in res]
    if "solo" in res:
        parts.append(f"solitaire: {res['solo']['moves']:.0f} moves" + ("" if res["solo"]["finished"] else
                                                                       " (unfinished)"))
    return f"eval @ step {res['global_step']}: " + "; ".join(parts)


def explained_variance(count: int, sum_y: float, sum_y2: float, sum_r: float, sum_r2: float) -> float:
    """CleanRL's ``1 - var(returns - values) / var(returns)`` from counts and sums (so the processes of a
    data-parallel run can add theirs): ``sum_r``, ``sum_r2`` are those of the residuals. NaN when the
    returns do not vary (or there are none)."""
    if count == 0:
        return float("nan")
    var_y = sum_y2 / count - (sum_y / count) ** 2
    var_r = sum_r2 / count - (sum_r / count) ** 2
    return float("nan") if var_y <= 1e-12 * max(1.0, sum_y2 / count) else 1 - var_r / var_y
