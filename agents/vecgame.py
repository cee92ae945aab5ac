"""A batch of scalar ``halma_env.Game``s behind the batched engine's interface.

``ScalarBatchedGame`` has the part of ``halma_env.batched.BatchedGame``'s interface the trainer uses
(reset, to_move, observation, action_mask, legal_lists, step with auto-reset, per-seat rewards; its
``info`` holds numpy arrays and a list of end reasons rather than tensors, and no final boards) and is built from the
reference pieces only: ``Game`` for the rules, ``halma_env.encoding`` for observations and actions,
``halma_env.rewards`` for place rewards and progress shaping.  The trainer uses it when heuristic
bots (which play a ``Game``) sit at the table (``env.engine``), and it serves as the reference the
batched engine is checked against.

Starting-seat rotation: game k of environment b starts with seat ``(rules.first_seat + b + k) % n``,
as in ``BatchedGame(..., rotate_first_seat=True)``.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import torch

from halma_env import Game, Rules
from halma_env.encoding import encoding
from halma_env.rewards import piece_distance, place_rewards, seat_potential, seat_rewards


class ScalarBatchedGame:
    """``batch_size`` independent games; ``step`` plays one move in each and restarts finished ones.
    ``seed`` is taken for ``BatchedGame``'s interface: nothing in these games is random."""

    def __init__(self, rules: Rules, batch_size: int, device: str | torch.device = "cpu", seed: int | None = None,
                 reward: str = "place", progress_shaping: float = 0.0) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        place_rewards([1, 2], reward)  # validates the scheme name
        self.rules = rules
        self.batch_size = batch_size
        self.device = torch.device(device)
        self.reward = reward
        self.progress_shaping = float(progress_shaping)
        n = rules.num_players
        self.num_players = n
        self.encoding = encoding(rules.variant, n)
        self.num_holes = self.encoding.num_holes
        self.num_actions = self.encoding.num_actions
        self._rules_by_first = [rules.replace(first_seat=s) for s in range(n)]
        # the shaping tables (a king's share of phi is its distance to the goal tip, where it must end)
        start = Game(rules)
        self._has_kings = start.layout.has_kings
        self._distance = [np.array(piece_distance(rules.variant, n, s), dtype=np.int64) for s in range(n)]
        self._king_distance = [np.array(piece_distance(rules.variant, n, s, True), dtype=np.int64)
                               if self._has_kings else None for s in range(n)]
        self._phi_start = [max(seat_potential(start, s), 1) for s in range(n)]
        self.games: list[Game] = []
        self._count = np.zeros(batch_size, dtype=np.int64)
        self.reset()

    def _new_game(self, b: int) -> Game:
        first = int((self.rules.first_seat + b + self._count[b]) % self.num_players)
        self._count[b] += 1
        return Game(self._rules_by_first[first])

    def reset(self) -> None:
        """Start a fresh game in every environment."""
        self._count[:] = 0
        self.games = [self._new_game(b) for b in range(self.batch_size)]

    @property
    def to_move(self) -> torch.Tensor:
        return torch.tensor([g.to_move for g in self.games], dtype=torch.int64, device=self.device)

    def observation(self) -> torch.Tensor:
        """(B, rows, cols, 12) int8, each from its seat to move's point of view."""
        enc = self.encoding
        obs = np.stack([enc.observation(g, g.to_move) for g in self.games])
        return torch.from_numpy(obs).to(self.device)

    def action_mask(self) -> torch.Tensor:
        """(B, H*H) bool: the legal actions of each seat to move."""
        mask = np.stack([self.encoding.action_mask(g) for g in self.games]).astype(bool)
        return torch.from_numpy(mask).to(self.device)

    def legal_lists(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The legal actions as padded lists (B, M) int64 plus (B, M) validity (ascending actions)."""
        enc = self.encoding
        rows = []
        for g in self.games:
            rows.append(np.sort(enc.move_actions(g.to_move, g.legal_moves())))
        m = max(1, max(len(r) for r in rows))
        legal = np.zeros((len(rows), m), dtype=np.int64)
        valid = np.zeros((len(rows), m), dtype=bool)
        for i, r in enumerate(rows):
            legal[i, : len(r)] = r
            valid[i, : len(r)] = True
        return torch.from_numpy(legal).to(self.device), torch.from_numpy(valid).to(self.device)

    def step(self, actions: torch.Tensor | np.ndarray) -> tuple[torch.Tensor, torch.Tensor, dict]:
        """Play one action per environment.

        Returns per-seat rewards (B, n) (the mover's progress shaping; every seat's place reward
        when its game ends), ``done`` (B,) and ``info`` with, for games that ended, ``places``
        (B, n; 0 = undecided), ``length`` (plies), ``finished`` (B, n: seats that finished) and
        ``end_reason`` (list, None where the game goes on).  Ended games are replaced by new ones.
        """
        acts = np.asarray(actions.detach().cpu() if isinstance(actions, torch.Tensor) else actions, dtype=np.int64)
        if acts.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {acts.shape}")
        n, b_size = self.num_players, self.batch_size
        rewards = np.zeros((b_size, n), dtype=np.float32)
        done = np.zeros(b_size, dtype=bool)
        places = np.zeros((b_size, n), dtype=np.int64)
        length = np.zeros(b_size, dtype=np.int64)
        finished = np.zeros((b_size, n), dtype=bool)
        reasons: list[str | None] = [None] * b_size
        for b, game in enumerate(self.games):
            seat = game.to_move
            src, dst = self.encoding.decode_action(seat, int(acts[b]))
            game.play((src, dst))  # IllegalMoveError (a ValueError) names an illegal action
            if self.progress_shaping:
                # with kings every seat has a king table, and the piece just moved stands on dst
                table = (cast(np.ndarray, self._king_distance[seat])
                         if self._has_kings and cast("tuple[int, bool]", game.piece_at(dst))[1]
                         else self._distance[seat])
                gain = table[src] - table[dst]
                rewards[b, seat] += self.progress_shaping * gain / self._phi_start[seat]
            if game.is_over:
                done[b] = True
                rewards[b] += np.asarray(seat_rewards(game, self.reward), dtype=np.float32)
                places[b] = [p or 0 for p in game.places]
                length[b] = game.ply
                finished[b] = [s == "finished" for s in game.status]
                reasons[b] = game.end_reason
                self.games[b] = self._new_game(b)
        info = {"places": places, "length": length, "finished": finished, "end_reason": reasons}
        dev = self.device
        return torch.from_numpy(rewards).to(dev), torch.from_numpy(done).to(dev), info
