"""Experiment: does one ply of lookahead on a network's own value head beat its policy (docs/training.md, session 20)?

    python scripts/value_lookahead.py agents/checkpoints/star2.pt --beta 3 --top-k 4 --games 20 --seed 0
    python scripts/value_lookahead.py agents/checkpoints/star2.pt --beta 100 --top-k 0 --games 20 --seed 0

The player scores each of the policy's ``top_k`` most likely moves (0: every legal move) by

    beta * (-value of the position after the move, from the opponent's seat) + log policy(move)

and plays the best; a move that finishes the game as the winner is played at once.  ``beta = 0`` is
the policy itself, a large ``beta`` with ``top_k = 0`` is the value head alone.  If the lookahead
were clearly stronger than the policy, it would be the teacher of an expert-iteration loop (train
the policy towards the lookahead's moves); the measured answer is in docs/training.md.  2-seat games
only: there the value of the position after a move is the opponent's, and the mover's is its negative.

Not part of the package (it is a search on top of the policy, and the project's agents play the policy alone).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch

from agents.arena import ARENA_LIMIT, build_rules, run_tournament
from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.imitation import padded_actions
from agents.network import HalmaNet
from agents.player import check_int, check_number
from agents.registry import check_players, make_player
from halma_env import Game, Move
from halma_env.encoding import encoding

LOOKAHEAD = "lookahead"  # the player's spec prefix in this script's tournaments


class ValueLookaheadPlayer:
    """The policy's top moves re-ranked by the value head one ply ahead (see the module docstring)."""

    def __init__(self, net: HalmaNet, beta: float, top_k: int = 0, name: str = LOOKAHEAD) -> None:
        if net.num_players != 2:
            raise ValueError(f"the lookahead needs a 2-seat network, got one for {net.num_players} seats")
        # finite: an infinite beta times a drawn child's score of 0 is NaN, and max() over NaN picks any move
        self.beta = check_number("beta", beta)
        self.top_k = check_int("top_k", top_k)  # 0: every legal move
        self.net = net.eval()
        self.name = name
        self._enc = encoding(net.variant, net.num_players)

    def _evaluate(self, games: list[Game]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits over each game's legal moves (padded) and each game's value, from the mover's seat."""
        actions, valid = padded_actions([self._enc.move_actions(g.to_move, g.legal_moves()).tolist() for g in games])
        obs = torch.from_numpy(np.stack([self._enc.observation(g, g.to_move) for g in games]))
        with torch.no_grad():
            logits, value = self.net(obs, actions, valid)
        return logits, value.view(-1)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        if (game.rules.variant, game.rules.num_players) != (self.net.variant, 2):
            raise ValueError(f"{self.name} plays {self.net.variant} with 2 seats, not {game.rules.variant} "
                             f"with {game.rules.num_players}")
        me = game.to_move
        moves = game.legal_moves()
        if not moves:
            raise ValueError("the game has no legal move (it is over)")
        logits, _ = self._evaluate([game])
        log_prior = torch.log_softmax(logits[0, : len(moves)], dim=0)
        order = torch.argsort(log_prior, descending=True).tolist()
        candidates = order[: self.top_k] if self.top_k else order
        scores = {}
        children, child_moves = [], []
        for i in candidates:
            child = game.copy()
            child.play(moves[i])
            if child.places[me] == 1:
                return moves[i]  # the move wins the game
            if child.is_over:
                scores[i] = 0.0  # over without a win for the mover (a draw): worth nothing either way
            else:
                children.append(child)
                child_moves.append(i)
        if children:
            _, child_values = self._evaluate(children)
            for i, v in zip(child_moves, child_values.tolist()):
                scores[i] = -v  # the child's value is the opponent's
        best = max(candidates, key=lambda i: self.beta * scores[i] + float(log_prior[i]))
        return moves[best]


def lookahead_spec(checkpoint: str, beta: float, top_k: int) -> str:
    return f"{LOOKAHEAD}:{beta}:{top_k}:{checkpoint}"


def factory(spec: str, seed: int | None = None):
    """Tournament players: this script's lookahead specs, every other name through the registry."""
    if spec.startswith(LOOKAHEAD + ":"):
        parts = spec.split(":", 3)
        try:
            beta, top_k, path = float(parts[1]), int(parts[2]), parts[3]
        except (IndexError, ValueError):  # not the bare unpacking or float() message, which names nothing
            raise ValueError(f"a lookahead player is {LOOKAHEAD}:BETA:TOP_K:CHECKPOINT, got {spec!r}") from None
        data = load_checkpoint(path)
        net = model_from_checkpoint(data, path)
        return ValueLookaheadPlayer(net, beta, top_k, name=f"{LOOKAHEAD}(beta={parts[1]},top_k={parts[2]})")
    return make_player(spec, seed=seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a 2-seat star training checkpoint")
    parser.add_argument("--beta", type=float, default=3.0, help="weight of the value against the log prior (default 3)")
    parser.add_argument("--top-k", type=int, default=4, help="the policy's top moves looked at (0: all; default 4)")
    parser.add_argument("--opponent", default="search", help="the other player (default search)")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    spec = lookahead_spec(args.checkpoint, args.beta, args.top_k)
    try:
        check_number("--beta", args.beta)  # named as the flag here; the player checks its own arguments again
        check_int("--top-k", args.top_k)
        check_int("--games", args.games, 1)
        check_int("--workers", args.workers, 1)
        check_int("--seed", args.seed)  # as halma eval: a negative one would fail in the tournament, with a traceback
        # a 2-seat star checkpoint, as the help says: one of another game would be played at its own game unasked
        load_checkpoint(args.checkpoint, variant="star", num_players=2)
        player = factory(spec)  # loaded here once so that a bad file or setting stops before any game
        rules = build_rules(player.net.variant, 2)
        check_players([args.opponent], factory, rules)  # an unknown name, or a player of another game
    except (ValueError, FileNotFoundError) as e:  # CheckpointError is a ValueError naming the file
        print(f"error: {e}", file=sys.stderr)
        return 2
    result = run_tournament([spec, args.opponent], rules, args.games, seed=args.seed, workers=args.workers,
                            max_plies=600, factory=factory)
    wins = sum(1 for g in result.games if g.player_places.get(0) == 1)
    finished = sum(1 for g in result.games if g.end_reason != ARENA_LIMIT)
    plies = sum(g.plies for g in result.games) / args.games
    print(f"{player.name} against {args.opponent}: {wins}/{args.games} wins, {finished} finished, "
          f"mean {plies:.1f} plies, seed {args.seed}, {result.elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
