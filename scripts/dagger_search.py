"""Experiment: imitate a fixed-depth search on a trained agent's own positions (DAgger), and the
opening/middle-game split of a policy against `search` (docs/training.md, session 8).

    python scripts/dagger_search.py collect agents/checkpoints/star2.pt dagger.pt --games 120 --workers 2
    python scripts/dagger_search.py fit agents/checkpoints/star2.pt dagger.pt tuned.pt --kl 0.3
    halma eval tuned.pt search --games 20 --workers 2
    python scripts/dagger_search.py hybrid agents/checkpoints/star2.pt --search-moves 12 --games 20

`collect` plays the agent (greedy in half of the games, temperature 0.5 in the others) against the
time-limited `search` on the 2-seat star; every position is recorded with a label: the agent's by
`search:depth=D,time=none`, the search's by its own move, plus the mover's discounted return under
the training reward (progress shaping and the place reward, as `agents.imitation.record`).  `fit`
fine-tunes a checkpoint on the labels (cross-entropy, the value on the returns, optionally a KL term
to the starting policy) and writes a weights-only checkpoint `halma eval` plays; every tenth game is
held out to report how often the network's move is the label.  `hybrid` lets the search play the
agent's first N moves (or, with a negative N, the agent its own first |N| moves and the search the
rest) against `search`.  Not part of the package: it runs on a 2-seat star checkpoint only.
"""

from __future__ import annotations

import argparse
import copy
import io
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from agents.bots.search import SearchBot
from agents.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint
from agents.files import output_problem
from agents.imitation import padded_actions
from agents.player import check_int, check_number
from agents.policy import load_policy_player
from halma_env import Game, Rules
from halma_env.encoding import encoding
from halma_env.files import write_atomic
from halma_env.rewards import seat_potential, seat_rewards

# spawned, not forked: the parent has used torch (the checkpoint check), and a forked child
# can hang in torch's thread pool (it did, in the network's orthogonal init)
SPAWN = multiprocessing.get_context("spawn")

GAMMA = 0.99
TEMPERATURES = (0.0, 0.5)
FIELDS = ("obs", "legal", "choice", "ret", "game", "agent")


def _game_setup(index: int) -> tuple[Rules, int]:
    """Game ``index``: who starts and which seat the agent holds (all four combinations in turn)."""
    return Rules("star", 2, first_seat=index % 2, move_limit=300, limit_outcome="progress"), (index // 2) % 2


def collect_games(checkpoint: str, games: list[int], label_depth: int) -> dict[str, list]:
    torch.set_num_threads(1)  # a spawned worker starts with all cores; the other worker's search needs one
    enc = encoding("star", 2)
    rec: dict[str, list] = {k: [] for k in FIELDS}
    for index in games:
        rules, agent_seat = _game_setup(index)
        game = Game(rules)
        agent = load_policy_player(checkpoint, seed=index, temperature=TEMPERATURES[(index // 4) % 2])
        opponent = SearchBot(seed=index)
        labeller = SearchBot(seed=10_000 + index, depth=label_depth, time=None)
        start = [max(seat_potential(game, s), 1) for s in range(2)]
        steps: list[list[list[float]]] = [[], []]  # per seat: [record index, reward]
        while not game.is_over:
            seat = game.to_move
            moves = game.legal_moves()
            if seat == agent_seat:
                label, move = labeller.select_move(game), agent.select_move(game)
            else:
                move = label = opponent.select_move(game)
            before = seat_potential(game, seat)
            rec["obs"].append(torch.from_numpy(enc.observation(game, seat)))  # tensors: loadable weights_only
            rec["legal"].append(enc.move_actions(seat, moves).tolist())
            rec["choice"].append(moves.index(label))
            rec["game"].append(index)
            rec["agent"].append(seat == agent_seat)
            rec["ret"].append(0.0)
            game.play(move)
            steps[seat].append([len(rec["obs"]) - 1, (before - seat_potential(game, seat)) / start[seat]])
        final = seat_rewards(game, "place")
        for seat in range(2):
            steps[seat][-1][1] += final[seat] or 0.0
            future = 0.0
            for i, reward in reversed(steps[seat]):
                future = reward + GAMMA * future
                rec["ret"][int(i)] = future
        print(f"game {index}: {'agent' if game.places[agent_seat] == 1 else 'search'} won, "
              f"{len(rec['obs'])} positions", flush=True)
    return rec


def collect(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    shares = [list(range(w, args.games, args.workers)) for w in range(args.workers)]
    with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as pool:
        parts = list(pool.map(collect_games, [args.checkpoint] * args.workers, shares,
                              [args.label_depth] * args.workers))
    rec = {k: [x for part in parts for x in part[k]] for k in FIELDS}
    # written whole or not at all: an interrupted run leaves no truncated file behind
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(rec, buffer)
    write_atomic(out, buffer.getvalue())
    seconds = time.perf_counter() - start
    print(f"{len(rec['choice'])} positions from {args.games} games in {seconds:.0f} s -> {args.out}")


def load_data(path: str) -> dict[str, list]:
    """The positions ``collect`` wrote (ValueError naming the file when it is not such a file)."""
    if Path(path).is_dir():
        raise ValueError(f"data file {path!r} is a directory")
    if not Path(path).is_file():
        raise ValueError(f"data file {path!r} does not exist")
    try:  # weights_only: a pickle that would run code is refused (collect writes tensors, lists and numbers)
        rec = torch.load(path, weights_only=True)
    except Exception as exc:  # unpickling garbage raises anything
        raise ValueError(f"data file {path!r} is corrupt or not written by collect ({type(exc).__name__})") from None
    if not isinstance(rec, dict) or any(k not in rec for k in FIELDS):
        raise ValueError(f"data file {path!r} is not written by collect (it lacks {', '.join(FIELDS)})")
    if not all(isinstance(x, torch.Tensor) for x in rec["obs"]):
        raise ValueError(f"data file {path!r} is not written by collect (its obs are not tensors: written by an "
                         "older collect? collect again)")
    if not rec["choice"]:
        raise ValueError(f"data file {path!r} holds no positions")
    if all(game % 10 == 0 for game in rec["game"]):
        raise ValueError(f"data file {path!r} holds held-out games only (every tenth game, 0 included, is "
                         "held out): collect 2 or more games")
    return rec


def fit(args: argparse.Namespace, rec: dict[str, list]) -> None:
    data = load_checkpoint(args.checkpoint)
    net = model_from_checkpoint(data, args.checkpoint)
    anchor = copy.deepcopy(net).eval()
    obs = torch.stack(rec["obs"])
    legal, valid = padded_actions(rec["legal"])
    choice, ret = torch.as_tensor(rec["choice"]), torch.as_tensor(rec["ret"], dtype=torch.float32)
    held = torch.as_tensor(rec["game"]) % 10 == 0
    train_rows, test_rows = torch.nonzero(~held).squeeze(1), torch.nonzero(held).squeeze(1)
    with torch.no_grad():
        anchor_logp = torch.cat([F.log_softmax(anchor(obs[i], legal[i], valid[i])[0], 1)
                                 for i in torch.arange(len(choice)).split(512)])

    def match(rows: torch.Tensor) -> float:
        if not len(rows):
            return 0.0
        net.eval()
        with torch.no_grad():
            hits = sum((net(obs[i], legal[i], valid[i])[0].argmax(1) == choice[i]).sum().item()
                       for i in rows.split(512))
        net.train()
        return hits / max(len(rows), 1)

    print(f"{len(choice)} positions ({len(test_rows)} held out); before: match {match(train_rows):.3f}, "
          f"held out {match(test_rows):.3f}")
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    net.train()
    for epoch in range(args.epochs):
        for i in train_rows[torch.randperm(len(train_rows))].split(256):
            logits, value = net(obs[i], legal[i], valid[i])
            logp = F.log_softmax(logits, 1)
            kl = (anchor_logp[i].exp() * (anchor_logp[i] - logp)).masked_fill(~valid[i], 0.0).sum(1).mean()
            loss = F.nll_loss(logp, choice[i]) + args.kl * kl + 0.5 * F.mse_loss(value, ret[i])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
        print(f"epoch {epoch + 1}: match {match(train_rows):.3f}, held out {match(test_rows):.3f}", flush=True)
    data = {**data, "model": {k: v.detach().clone() for k, v in net.state_dict().items()}}
    data.pop("optimizer", None)
    data.pop("rng", None)
    save_checkpoint(args.out, data)
    print(f"wrote {args.out}")


def hybrid_games(checkpoint: str, search_moves: int, games: list[int]) -> int:
    torch.set_num_threads(1)  # as in collect_games
    wins = 0
    for index in games:
        game = Game(Rules("star", 2, first_seat=index % 2))
        agent, helper, opponent = load_policy_player(checkpoint, seed=index), SearchBot(seed=1000 + index), \
            SearchBot(seed=index)
        own = 0
        while not game.is_over and game.ply < 600:
            if game.to_move == 0:
                searching = own < search_moves if search_moves >= 0 else own >= -search_moves
                game.play((helper if searching else agent).select_move(game))
                own += 1
            else:
                game.play(opponent.select_move(game))
        wins += game.places[0] == 1
        print(f"game {index}: {'won' if game.places[0] == 1 else 'lost'}", flush=True)
    return wins


def hybrid(args: argparse.Namespace) -> None:
    shares = [list(range(w, args.games, args.workers)) for w in range(args.workers)]
    with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as pool:
        wins = sum(pool.map(hybrid_games, [args.checkpoint] * args.workers, [args.search_moves] * args.workers, shares))
    print(f"won {wins}/{args.games} against search (search moves for the agent: {args.search_moves})")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("checkpoint")
    c.add_argument("out")
    c.add_argument("--games", type=int, default=120)
    c.add_argument("--workers", type=int, default=2)
    c.add_argument("--label-depth", type=int, default=5)
    f = sub.add_parser("fit")
    f.add_argument("checkpoint")
    f.add_argument("data")
    f.add_argument("out")
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=3e-4)
    f.add_argument("--kl", type=float, default=0.0, help="weight of KL(start policy || tuned policy)")
    h = sub.add_parser("hybrid")
    h.add_argument("checkpoint")
    h.add_argument("--search-moves", type=int, default=12)
    h.add_argument("--games", type=int, default=20)
    h.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    try:  # a bad setting (named with its value), checkpoint or data file fails here, before any game
        for flag in ("games", "workers", "label_depth", "epochs"):
            if hasattr(args, flag):
                check_int(f"--{flag.replace('_', '-')}", getattr(args, flag), 1)
        if args.command == "fit":  # finite: an infinite rate or weight turns every weight into NaN
            check_number("--lr", args.lr, strict=True)
            check_number("--kl", args.kl)
        model_from_checkpoint(load_checkpoint(args.checkpoint, variant="star", num_players=2), args.checkpoint)
        rec = load_data(args.data) if args.command == "fit" else {}
    except ValueError as exc:  # CheckpointError is a ValueError naming the file
        p.error(str(exc))
    if args.command in ("collect", "fit"):
        problem = output_problem(args.out)
        # the output replaces its file only at the end: over an input, it would destroy the file the run read
        inputs = [args.checkpoint] + ([args.data] if args.command == "fit" else [])
        same = [name for name in inputs if Path(name).resolve() == Path(args.out).resolve()]
        if same:
            problem = f"the output {args.out!r} is the input {same[0]!r}: give a new file"
        if problem:
            p.error(problem)
    torch.set_num_threads(1)
    if args.command == "fit":
        fit(args, rec)
    else:
        {"collect": collect, "hybrid": hybrid}[args.command](args)

if __name__ == "__main__":
    main()
