"""Imitation before self-play ("kickstarting"): a fresh network first learns a heuristic bot's moves.

PPO from random weights spends its first hundreds of thousands of steps finding out what the greedy
bot already knows (random play never finishes a game), and on the large boards (6-seat star,
16 x 16 Halma) that is most of a run.  With ``imitation.bot`` set, a fresh run first

1. plays ``imitation.games`` games in which that bot holds every seat (the training rules, the first
   seat rotating, each bot seeded per game so that its tie-breaks make the games differ);
2. records every decision: the mover's observation and legal actions (canonical frame, as in
   training), the bot's choice, and the return the training reward gives that decision (the
   mover's progress shaping, plus its place reward on its last move, discounted by ``ppo.gamma``
   along the seat's own moves: the value PPO's critic will learn);
3. fits the policy (cross-entropy on the bot's choice) and the value head (squared error, weighted
   by ``ppo.vf_coef``) for ``imitation.epochs`` passes of minibatches, with its own Adam optimiser
   and ``ppo.max_grad_norm``; the last tenth of the games is held out to report accuracy honestly.

PPO then starts from a player about as strong as the bot, with a critic that knows what positions
are worth.  Nothing here runs on a resumed run: the weights it produced are in the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.config import TrainConfig
from agents.network import clip_gradients
from halma_env import Game, Rules
from halma_env.encoding import encoding
from halma_env.files import FileTooLarge, NotARegularFile, read_regular_file, write_atomic
from halma_env.game import Move
from halma_env.rewards import seat_potential, seat_rewards


@dataclass
class Demonstrations:
    """Recorded decisions: observations (N, rows, cols, 12) int8, padded legal actions (N, M) with
    validity, the index of the bot's move in each list, the discounted return, and each one's game."""

    obs: torch.Tensor
    legal: torch.Tensor
    valid: torch.Tensor
    choice: torch.Tensor
    ret: torch.Tensor
    game: torch.Tensor

    def __len__(self) -> int:
        return int(self.choice.shape[0])

    def subset(self, index: torch.Tensor) -> Demonstrations:
        return Demonstrations(*(getattr(self, k)[index] for k in FIELDS))

    def to(self, device: torch.device) -> Demonstrations:
        return Demonstrations(*(getattr(self, k).to(device) for k in FIELDS))


FIELDS = ("obs", "legal", "valid", "choice", "ret", "game")


def record(cfg: TrainConfig, make_bot: Callable[[str, int], Any], seed: int) -> Demonstrations:
    """Play ``cfg.imitation.games`` bot-only games under the training rules and record every decision."""
    rules = cfg.game.rules()
    n = rules.num_players
    enc = encoding(rules.variant, n)
    shaping, gamma = cfg.game.progress_shaping, cfg.ppo.gamma
    obs: list[np.ndarray] = []
    legal: list[list[int]] = []
    choice: list[int] = []
    ret: list[float] = []
    game_of: list[int] = []
    bot = cfg.imitation.bot
    if bot is None:  # TrainConfig.validate: recording games needs imitation.bot
        raise ValueError("imitation.bot is null: there is no bot whose games to record")
    if rules.move_limit is None and rules.stall_limit is None:  # (TrainConfig.validate refuses it first)
        raise ValueError("imitation.games: the training rules give a game no end (game.move_limit and "
                         "game.stall_limit are null): set one of them")
    for g in range(cfg.imitation.games):
        game = Game(rules.replace(first_seat=g % n))
        bots = [make_bot(bot, seed * 1_000_003 + g * n + s) for s in range(n)]
        phi_start = [max(seat_potential(game, s), 1) for s in range(n)]
        decisions: list[list[list[float]]] = [[] for _ in range(n)]  # per seat: [index, reward]
        while not game.is_over:
            seat = game.to_move
            moves = game.legal_moves()
            move = bots[seat].select_move(game)
            phi_before = seat_potential(game, seat)
            obs.append(enc.observation(game, seat))
            legal.append(enc.move_actions(seat, moves).tolist())
            choice.append(moves.index(move))
            game_of.append(g)
            ret.append(0.0)  # set below, once the game's end is known
            game.play(move)
            gain = shaping * (phi_before - seat_potential(game, seat)) / phi_start[seat] if shaping else 0.0
            decisions[seat].append([len(obs) - 1, gain])
        final = seat_rewards(game, cfg.game.reward)
        for seat, steps in enumerate(decisions):
            if not steps:
                continue
            steps[-1][1] += final[seat] or 0.0
            future = 0.0
            for index, reward in reversed(steps):
                future = reward + gamma * future
                ret[int(index)] = future
    legal_t, valid_t = padded_actions(legal)
    return Demonstrations(torch.from_numpy(np.stack(obs)), legal_t, valid_t, torch.as_tensor(choice),
                          torch.as_tensor(ret, dtype=torch.float32), torch.as_tensor(game_of))


CROSSING_PLAN_VERSION = 1  # bump when plan_crossing or the detour scheme below changes: cached plans are redone


@dataclass
class CrossingLines:
    """The planner's solitaire lines of ``crossing.*``: the main line from the start, and for each detour the
    stray move (off the main line after ``k % len(main)`` of its moves) and the line planned from there."""

    main: list[Move]
    detours: list[tuple[Move, list[Move]]]


def plan_crossing_lines(cfg: TrainConfig, seed: int) -> CrossingLines:
    """Plan the main line (``crossing.planner_width``) and ``crossing.detours`` detours, each planned
    (``crossing.detour_width``) from the main line's position after ``k`` moves (``k`` cycling along the
    line) plus one seeded random move that is not the planned one: the positions a policy reaches when it
    strays, and the way back.  Deterministic in ``cfg`` and ``seed``."""
    from agents.bots.crossing import plan_crossing

    cx = cfg.crossing
    rng = np.random.default_rng(seed)
    start = Game(Rules(cfg.game.variant, 1))
    main = plan_crossing(start, cx.planner_width)
    detours = []
    for k in range(cx.detours):
        game = start.copy()
        for move in main[: k % len(main)]:
            game.play(move)
        planned = main[k % len(main)]
        strays = [m for m in game.legal_moves() if m != planned]
        stray = strays[int(rng.integers(len(strays)))]
        game.play(stray)
        detours.append((stray, plan_crossing(game, cx.detour_width)))
    return CrossingLines(main, detours)


def crossing_demonstrations(cfg: TrainConfig, lines: CrossingLines) -> tuple[Demonstrations, list[int]]:
    """The lines as demonstrations in the 1-seat encoding (main line first), and the length of each line
    in moves (a detour's counts its stray move).  ``ret`` is 0 (the policy term only); ``game`` numbers
    the lines.  A move that is not legal where it is played raises ``ValueError``."""
    rules = Rules(cfg.game.variant, 1)
    enc = encoding(rules.variant, 1)
    obs: list[np.ndarray] = []
    legal: list[list[int]] = []
    choice: list[int] = []
    line_of: list[int] = []

    def add_line(game: Game, line: list[Move], index: int) -> None:
        for move in line:
            moves = game.legal_moves()
            if move not in moves:
                raise ValueError(f"crossing line {index}: {move} is not legal in its position")
            obs.append(enc.observation(game, 0))
            legal.append(enc.move_actions(0, moves).tolist())
            choice.append(moves.index(move))
            line_of.append(index)
            game.play(move)

    start = Game(rules)
    add_line(start.copy(), lines.main, 0)
    lengths = [len(lines.main)]
    for k, (stray, detour) in enumerate(lines.detours):
        game = start.copy()
        for move in lines.main[: k % max(len(lines.main), 1)]:
            game.play(move)
        if stray not in game.legal_moves():
            raise ValueError(f"crossing line {k + 1}: its stray move {stray} is not legal")
        game.play(stray)
        add_line(game, detour, k + 1)
        lengths.append(len(detour) + 1)
    legal_t, valid_t = padded_actions(legal)
    demos = Demonstrations(torch.from_numpy(np.stack(obs)), legal_t, valid_t, torch.as_tensor(choice),
                           torch.zeros(len(choice)), torch.as_tensor(line_of))
    return demos, lengths


def record_crossings(cfg: TrainConfig, seed: int) -> tuple[Demonstrations, list[int]]:
    """The planner's solitaire crossings (``crossing.*``) as demonstrations: ``plan_crossing_lines``, then
    ``crossing_demonstrations``."""
    return crossing_demonstrations(cfg, plan_crossing_lines(cfg, seed))


def crossing_plan_key(cfg: TrainConfig, seed: int) -> dict[str, Any]:
    """What a plan depends on: the planner's version, the variant, the ``crossing.*`` widths and the seed."""
    cx = cfg.crossing
    return {"version": CROSSING_PLAN_VERSION, "variant": cfg.game.variant, "planner_width": cx.planner_width,
            "detours": cx.detours, "detour_width": cx.detour_width, "seed": seed}


def crossing_cache_path(cache_dir: str | Path, cfg: TrainConfig, seed: int) -> Path:
    """The file in ``cache_dir`` that holds the plan of ``cfg`` and ``seed`` (named by a hash of its key)."""
    digest = hashlib.sha256(json.dumps(crossing_plan_key(cfg, seed), sort_keys=True).encode()).hexdigest()
    return Path(cache_dir) / f"crossing-{digest[:16]}.json"


def save_crossing_lines(path: str | Path, cfg: TrainConfig, seed: int, lines: CrossingLines) -> None:
    """Write the plan as JSON (its key beside the moves, ``"src-dst"``), atomically."""
    path = Path(path)
    data = {"key": crossing_plan_key(cfg, seed), "main": [str(m) for m in lines.main],
            "detours": [{"stray": str(stray), "line": [str(m) for m in line]} for stray, line in lines.detours]}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1) + "\n")


# a plan of 1000 detours (the most crossing.detours takes) of a few hundred moves each is a few MB: a bound for a
# device or a runaway file in the cache folder
MAX_PLAN_BYTES = 64 << 20


def load_crossing_lines(path: str | Path, cfg: TrainConfig, seed: int) -> CrossingLines:
    """Read a plan that ``save_crossing_lines`` wrote for this ``cfg`` and ``seed``; ``ValueError`` naming
    the file and what is wrong when it is unreadable, no regular file (a FIFO would wait for a writer for
    ever, a device be read without end), larger than ``MAX_PLAN_BYTES``, malformed (a number past Python's
    4300 digits too) or holds another key's plan.  (The moves' legality is checked when
    ``crossing_demonstrations`` replays them.)"""
    try:
        data = json.loads(read_regular_file(path, MAX_PLAN_BYTES).decode("utf-8"))
    except NotARegularFile as exc:
        raise ValueError(f"crossing plan {path}: cannot read it (it is {exc.kind}, not a regular file)") from None
    except FileTooLarge as exc:
        raise ValueError(f"crossing plan {path}: cannot read it (it holds {exc.size} bytes, more than the "
                         f"{MAX_PLAN_BYTES} a plan may)") from None
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not UTF-8, not JSON, an int too long
        raise ValueError(f"crossing plan {path}: cannot read it ({exc})") from None
    if not isinstance(data, dict) or data.get("key") != crossing_plan_key(cfg, seed):
        raise ValueError(f"crossing plan {path}: its key is not {crossing_plan_key(cfg, seed)}")
    try:
        main = [Move.parse(m) for m in data["main"]]
        detours = [(Move.parse(d["stray"]), [Move.parse(m) for m in d["line"]]) for d in data["detours"]]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"crossing plan {path}: malformed ({exc!r})") from None
    if len(detours) != cfg.crossing.detours:
        raise ValueError(f"crossing plan {path}: {len(detours)} detours, the config asks for {cfg.crossing.detours}")
    return CrossingLines(main, detours)


def padded_actions(legal: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Legal-action lists as one zero-padded (N, longest) tensor and its validity mask."""
    width = max(len(x) for x in legal)
    legal_t = torch.zeros(len(legal), width, dtype=torch.int64)
    valid_t = torch.zeros(len(legal), width, dtype=torch.bool)
    for i, actions in enumerate(legal):
        legal_t[i, : len(actions)] = torch.as_tensor(actions)
        valid_t[i, : len(actions)] = True
    return legal_t, valid_t


def _batches(demos: Demonstrations, size: int, order: torch.Tensor):
    for start in range(0, len(order), size):
        part = demos.subset(order[start:start + size])
        width = max(int(part.valid.sum(1).max()), 1)  # the longest legal list of this minibatch
        yield part, part.legal[:, :width], part.valid[:, :width]


def fit(net: nn.Module, demos: Demonstrations, cfg: TrainConfig, device: torch.device) -> dict[str, float]:
    """Fit the policy and value heads to ``demos``; figures of the last epoch (held-out: the last tenth
    of the games, or none when fewer than 10 games were played)."""
    games = int(demos.game.max()) + 1
    held_out = games // 10
    train_rows = torch.nonzero(demos.game < games - held_out).squeeze(1)
    test_rows = torch.nonzero(demos.game >= games - held_out).squeeze(1)
    train, test = demos.subset(train_rows), demos.subset(test_rows)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.imitation.learning_rate, eps=1e-5)
    size = cfg.imitation.minibatch_size
    stats: dict[str, float] = {}
    net.train()
    for epoch in range(1, cfg.imitation.epochs + 1):
        totals = np.zeros(4)  # policy loss, value loss, correct, positions
        for part, legal, valid in _batches(train, size, torch.randperm(len(train))):
            logits, value = net(part.obs.to(device), legal.to(device), valid.to(device))
            target = part.choice.to(device)
            policy_loss = F.cross_entropy(logits, target)
            value_loss = F.mse_loss(value, part.ret.to(device))
            loss = policy_loss + cfg.ppo.vf_coef * value_loss
            opt.zero_grad()
            loss.backward()
            clip_gradients(net, cfg.ppo.max_grad_norm, f"imitation epoch {epoch}", "imitation.learning_rate")
            opt.step()
            k = len(target)
            totals += [policy_loss.item() * k, value_loss.item() * k, (logits.argmax(1) == target).sum().item(), k]
        stats = {"imitation/policy_loss": totals[0] / totals[3], "imitation/value_loss": totals[1] / totals[3],
                 "imitation/accuracy": totals[2] / totals[3]}
    if len(test):
        stats.update(evaluate_fit(net, test, size, device))
    stats["imitation/positions"] = float(len(demos))
    return stats


@torch.no_grad()
def evaluate_fit(net: nn.Module, demos: Demonstrations, size: int, device: torch.device) -> dict[str, float]:
    """Held-out figures: how often the network's greedy move is the bot's, and the value error."""
    net.eval()
    correct = squared = 0.0
    for part, legal, valid in _batches(demos, size, torch.arange(len(demos))):
        logits, value = net(part.obs.to(device), legal.to(device), valid.to(device))
        correct += (logits.argmax(1).cpu() == part.choice).sum().item()
        squared += ((value.cpu() - part.ret) ** 2).sum().item()
    net.train()
    return {"imitation/held_out_accuracy": correct / len(demos), "imitation/held_out_value_loss": squared / len(demos)}


def imitate(net: nn.Module, cfg: TrainConfig, make_bot: Callable[[str, int], Any], device: torch.device,
            seed: int) -> dict[str, float]:
    """Record the bot's games and fit ``net`` to them; returns the figures (and the seconds taken)."""
    start = time.perf_counter()
    demos = record(cfg, make_bot, seed)
    recorded = time.perf_counter()
    stats = fit(net, demos, cfg, device)
    stats["imitation/record_s"] = recorded - start
    stats["imitation/fit_s"] = time.perf_counter() - recorded
    return stats
