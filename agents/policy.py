"""A trained network as a ``Player`` of scalar games (policy alone, no search)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.devices import check_device
from agents.network import HalmaNet
from agents.player import check_is_game, check_number, check_seed, check_time, sample_index
from halma_env import Game, Move
from halma_env.encoding import encoding
from halma_env.rules import game_name


class PolicyPlayer:
    """Plays the network's most likely legal move (``temperature`` > 0: samples from softmax(logits / T)).

    Any finite temperature > 0 samples: the logits are shifted so the largest is 0 before they are divided
    (in float64), so a tiny T cannot overflow into NaN probabilities: it plays the best move, drawing evenly
    among exact ties, as greedy play with random tie-breaks would."""

    def __init__(self, net: HalmaNet, name: str = "policy", seed: int | None = None, temperature: float = 0.0,
                 device: str | torch.device = "cpu") -> None:
        self.temperature = check_number("temperature", temperature)
        self.reseed(seed)
        self.device = check_device(str(device) if isinstance(device, torch.device) else device, "device")
        self.net = net.to(self.device).eval()
        self.name = name

    def reseed(self, seed: int | None) -> None:
        """Start the sampling stream again from ``seed`` (the environments' ``reset(seed=...)`` calls it)."""
        self.seed = check_seed(seed)
        self._rng = np.random.default_rng(self.seed)

    def _check(self, game: Game) -> None:
        r = game.rules
        # the solitaire crossing (1 seat) is the same board and frame with nobody else on it, so a
        # policy of that board may play it (the solo benchmark); other seat counts need their own network
        if r.variant != self.net.variant or r.num_players not in (self.net.num_players, 1):
            raise ValueError(f"{self.name} plays {game_name(self.net.variant, self.net.num_players)}, "
                             f"not {r.variant} with {r.num_players}")

    def action_probabilities(self, game: Game) -> tuple[list[Move], np.ndarray]:
        """The legal moves and the network's probabilities for them (temperature 1)."""
        self._check(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")  # (as every player of the project says it)
        logits = self._logits(game, moves)
        p = torch.softmax(logits, dim=0).numpy()
        return moves, p

    def _logits(self, game: Game, moves: list[Move]) -> torch.Tensor:
        seat = game.to_move
        enc = encoding(game.rules.variant, game.rules.num_players)  # (the solitaire's own, for a 1-seat game)
        obs = torch.from_numpy(enc.observation(game, seat)).unsqueeze(0).to(self.device)
        legal = torch.from_numpy(enc.move_actions(seat, moves)).unsqueeze(0).to(self.device)
        valid = torch.ones_like(legal, dtype=torch.bool)
        with torch.no_grad():
            logits, _ = self.net(obs, legal, valid)
        out = logits[0].float().cpu()
        if not bool(torch.isfinite(out).all()):  # else greedy play quietly takes the first move, sampling fails
            raise ValueError(f"{self.name}: the network scores the moves NaN or inf (are its weights finite?)")
        return out

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        check_time("time_budget", time_budget)
        check_is_game(game)
        self._check(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")  # (as every player of the project says it)
        return moves[sample_index(self._logits(game, moves).double().numpy(), self.temperature, self._rng)]


def load_policy_player(path: str | Path, seed: int | None = None, temperature: float = 0.0,
                       device: str = "cpu") -> PolicyPlayer:
    """A player from a training checkpoint or snapshot (greedy by default).

    The arguments are checked before the file is read, and the file is read to the CPU and the network moved
    to ``device`` after: a CUDA device this machine lacks is named as such, not as a corrupt checkpoint."""
    check_seed(seed)
    check_number("temperature", temperature)
    check_device(device, "device")
    data = load_checkpoint(path, map_location="cpu")
    net = model_from_checkpoint(data, path)
    return PolicyPlayer(net, name=f"policy:{Path(path).stem}", seed=seed, temperature=temperature, device=device)
