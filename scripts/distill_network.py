"""Distil a trained policy into a network of another size (policy and value), for ``init_from``.

    python scripts/distill_network.py agents/checkpoints/star2.pt /work/train/star2_64x4.pt \
        --channels 64 --pair-dim 64 --value-hidden 128 --positions 200000 --epochs 3

The teacher plays itself on the batched engine (``--games`` at once, moves sampled from its policy
at ``--temperature``, a share ``--explore`` of them uniformly random so that the student also sees
positions off the teacher's own line), and every position is kept with the teacher's move
probabilities over its legal moves and its value.  The student (the teacher's network with the
sizes given) is then fitted to both: the KL divergence KL(teacher || student) over the legal moves
plus ``--value-coef`` times the squared error of the value, Adam with a linearly decaying learning
rate.  The last ``--holdout`` share of the positions (the last plies generated) is held out; the
script prints the held-out KL and how often the student's most likely move is the teacher's.

The output is a weights-only checkpoint of the student (agents/checkpoint.py format) with the
teacher's training config, its network section replaced, so ``halma train CONFIG --set
init_from=OUT --set network.channels=...`` starts a run from it, and ``halma eval OUT ...`` plays it.

Why: a network trained by PPO from scratch must relearn everything the teacher's chain of runs
learnt; a larger network that starts from a copy of a trained one's play can go on from there
(docs/training.md, "A larger network from a distilled copy").  Not part of the package.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from agents.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint
from agents.config import MAX_SEED, MAX_TORCH_THREADS, GameConfig, NetworkConfig
from agents.files import output_problem
from agents.network import MASKED_LOGIT, build_network
from agents.player import check_int, check_number
from halma_env.batched import BatchedGame


def generate(teacher: torch.nn.Module, game: GameConfig, positions: int, games: int, temperature: float,
             explore: float, seed: int) -> dict[str, torch.Tensor]:
    """Positions of the teacher's self-play with its probabilities over the legal moves and its values."""
    env = BatchedGame(game.rules(), games, seed=seed, rotate_first_seat=True)
    rng = torch.Generator().manual_seed(seed)
    plies: list[tuple[torch.Tensor, ...]] = []
    count = 0
    with torch.no_grad():
        while count < positions:
            obs = env.observation()
            legal, valid = env.legal_lists()
            logits, value = teacher(obs, legal, valid)
            probs = torch.softmax(logits, dim=1)
            if temperature == 0:
                slot = logits.argmax(1)
            else:
                slot = torch.multinomial(torch.softmax(logits / temperature, dim=1), 1, generator=rng).squeeze(1)
            random_slot = torch.multinomial(valid.float(), 1, generator=rng).squeeze(1)
            slot = torch.where(torch.rand(games, generator=rng) < explore, random_slot, slot)
            plies.append((obs.clone(), legal.clone(), valid.clone(), probs, value))
            count += games
            env.step(legal.gather(1, slot[:, None]).squeeze(1))
    width = max(p[1].shape[1] for p in plies)

    def padded(x: torch.Tensor, fill: float | int | bool) -> torch.Tensor:
        return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=fill)

    return {
        "obs": torch.cat([p[0] for p in plies])[:positions],
        "legal": torch.cat([padded(p[1], 0) for p in plies])[:positions],
        "valid": torch.cat([padded(p[2], False) for p in plies])[:positions],
        "probs": torch.cat([padded(p[3], 0.0) for p in plies])[:positions],
        "value": torch.cat([p[4] for p in plies])[:positions],
    }


def losses(student: torch.nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(KL(teacher || student) per position, squared value error per position, argmax agreement)."""
    # the batch's lists trimmed to its own longest (the student scores only what it must)
    width = int(batch["valid"].sum(1).max())
    legal, valid, probs = batch["legal"][:, :width], batch["valid"][:, :width], batch["probs"][:, :width]
    logits, value = student(batch["obs"], legal, valid)
    logp = torch.log_softmax(logits, dim=1)
    teacher_logp = torch.log(probs.clamp_min(1e-12))
    kl = torch.where(valid & (probs > 0), probs * (teacher_logp - logp), torch.zeros_like(logp)).sum(1)
    agree = (logits.masked_fill(~valid, MASKED_LOGIT).argmax(1) == probs.argmax(1)).float()
    return kl, (value - batch["value"]) ** 2, agree


def evaluate(student: torch.nn.Module, data: dict[str, torch.Tensor], batch_size: int) -> dict[str, float]:
    totals = np.zeros(3)
    n = data["obs"].shape[0]
    with torch.no_grad():
        for start in range(0, n, batch_size):
            batch = {k: v[start:start + batch_size] for k, v in data.items()}
            totals += [float(x.sum()) for x in losses(student, batch)]
    return dict(zip(("kl", "value_mse", "agreement"), (totals / max(n, 1)).tolist()))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("teacher", help="a halma_env checkpoint (.pt)")
    p.add_argument("out", help="where to write the student's weights-only checkpoint")
    for name in ("channels", "blocks", "pair-dim", "value-hidden", "attention-layers"):
        p.add_argument(f"--{name}", type=int, default=None, help=f"the student's network.{name.replace('-', '_')} "
                       "(default: the teacher's)")
    p.add_argument("--positions", type=int, default=200_000, help="positions to generate (default 200000)")
    p.add_argument("--games", type=int, default=128, help="self-play games played at once (default 128)")
    p.add_argument("--temperature", type=float, default=1.0, help="the teacher's sampling temperature (default 1)")
    p.add_argument("--explore", type=float, default=0.03, help="share of uniformly random moves (default 0.03)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--value-coef", type=float, default=0.5)
    p.add_argument("--holdout", type=float, default=0.05, help="share of the positions held out (default 0.05)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = p.parse_args(argv)
    try:  # every setting named with its value; finite, as NaN or inf would only fail (or give NaN) after the work
        check_int("--positions", args.positions, 2)
        for flag in ("games", "epochs", "batch_size", "threads"):
            check_int(f"--{flag.replace('_', '-')}", getattr(args, flag), 1)
        check_number("--temperature", args.temperature)
        check_number("--explore", args.explore, high=1.0)
        check_number("--holdout", args.holdout, strict=True, high=1.0)
        check_number("--learning-rate", args.learning_rate, strict=True)
        check_number("--value-coef", args.value_coef)
        check_int("--seed", args.seed)
    except ValueError as exc:
        p.error(str(exc))
    if args.seed > MAX_SEED:  # the bound `halma train` sets; torch.manual_seed overflows past 2**64
        p.error(f"--seed must be an integer in [0, {MAX_SEED}], got {args.seed}")
    if args.threads > MAX_TORCH_THREADS:  # torch segfaults with thousands
        p.error(f"--threads must be in [1, {MAX_TORCH_THREADS}], got {args.threads}")
    if not 1 <= round(args.positions * (1 - args.holdout)) < args.positions:
        p.error(f"--holdout {args.holdout} of --positions {args.positions} leaves no positions to fit or none held out")
    if args.games > args.positions:  # the extra games would be played and dropped: all positions from the first ply
        p.error(f"--games {args.games} is more than --positions {args.positions}: every position would be a "
                "first move")
    problem = output_problem(args.out)
    if problem:
        p.error(problem)
    if Path(args.out).resolve() == Path(args.teacher).resolve():  # the student would replace its own teacher
        p.error(f"the output {args.out!r} is the teacher {args.teacher!r}: give a new file")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # before the teacher is built (its init draws too), as it always was

    try:
        data = load_checkpoint(args.teacher)  # fills network keys added after the file was written
        teacher = model_from_checkpoint(data, args.teacher)
    except ValueError as exc:  # CheckpointError names the file and what is wrong with it
        p.error(str(exc))
    config = data.get("config")
    if not isinstance(config, dict) or not isinstance(config.get("game"), dict):
        p.error(f"{args.teacher}: the checkpoint has no training config to take the game from")
    game = GameConfig(**config["game"])
    network = dict(data["network"])
    for name in ("channels", "blocks", "pair_dim", "value_hidden", "attention_layers"):
        if getattr(args, name) is not None:
            network[name] = getattr(args, name)
    try:
        NetworkConfig(**network).validate()
    except ValueError as exc:
        p.error(f"the student's {exc}")
    student = build_network(data["variant"], data["num_players"], SimpleNamespace(**network))
    print(f"teacher {network_size(teacher)} parameters, student {network_size(student)} ({network})")

    start = time.perf_counter()
    positions = generate(teacher, game, args.positions, args.games, args.temperature, args.explore, args.seed)
    split = int(round(args.positions * (1 - args.holdout)))
    train = {k: v[:split] for k, v in positions.items()}
    held = {k: v[split:] for k, v in positions.items()}
    print(f"{args.positions} positions in {time.perf_counter() - start:.0f} s; held out {args.positions - split}")
    print(f"before: held-out {evaluate(student, held, args.batch_size)}")

    optimizer = torch.optim.Adam(student.parameters(), lr=args.learning_rate)
    steps = args.epochs * -(-split // args.batch_size)
    step = 0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        student.train()
        order = torch.randperm(split)
        for first in range(0, split, args.batch_size):
            rows = order[first:first + args.batch_size]
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1 - step / steps)
            kl, value_se, _ = losses(student, {k: v[rows] for k, v in train.items()})
            loss = kl.mean() + args.value_coef * value_se.mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 0.5)
            optimizer.step()
            step += 1
        student.eval()
        print(f"epoch {epoch + 1}/{args.epochs} ({time.perf_counter() - t0:.0f} s): held-out "
              f"{evaluate(student, held, args.batch_size)}")

    out_config = {**config, "network": network}
    save_checkpoint(Path(args.out), {
        "variant": data["variant"], "num_players": data["num_players"], "network": network,
        "model": {k: v.detach().cpu() for k, v in student.state_dict().items()}, "config": out_config,
        "distilled_from": str(args.teacher),
    })
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s in all)")


def network_size(net: torch.nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


if __name__ == "__main__":
    main()
