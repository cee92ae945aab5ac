"""Timing of the training loop's parts, as quoted in docs/training.md ("Speed", session 15).

    python scripts/train_loop_timing.py loop --seconds 10        # the bench's batched one-thread loop alone
    python scripts/train_loop_timing.py split --updates 20 --envs 128
    python scripts/train_loop_timing.py update                   # fwd+bwd+Adam of 512 positions
    python scripts/train_loop_timing.py collectives --seconds 10 # two processes: waits at the collectives

``loop`` is the ``train_cpu_batched`` row of ``halma bench train`` on its own (one run, timed after
its warm-up update), for comparing two checkouts by running it in each, alternating.  ``split`` runs
the bench's config (``agents.train.bench_config``) and times, per environment step, the PPO update,
the rollout's sampling (its forward pass), the engine's calls and the rest, after one warm-up
update, with the mean and longest legal list of each update.  ``update`` times one PPO-style
optimiser step of the default network on random positions (``--moves`` entries per list, 70% real).
``collectives`` runs the bench's loop in two processes and reports each one's time waiting in
``all_reduce``, and the latency of one all-reduce of the default network's gradient size.
Not part of the package.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from agents import parallel
from agents.player import check_number
from agents.train import bench_config, bench_loop


def loop(args: argparse.Namespace) -> None:
    steps, elapsed, _ = bench_loop(0, 1, bench_config(), args.seconds)
    print(f"{steps / elapsed:.0f} steps/s ({steps} steps in {elapsed:.1f} s, batched engine, one thread)")


def split(args: argparse.Namespace) -> None:
    import agents.ppo as ppo
    from halma_env.batched import BatchedGame

    cfg = bench_config()
    cfg.env.num_envs = args.envs
    batch = cfg.env.num_envs * cfg.ppo.num_steps
    cfg.ppo.total_steps = batch * (args.updates + 1)
    seconds = {"update": 0.0, "sampling": 0.0, "engine": 0.0}
    lists: list[tuple[float, int]] = []

    def timed(function: Callable[..., Any], part: str) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            out = function(*a, **k)
            seconds[part] += time.perf_counter() - start
            return out
        return wrapper

    for name in ("observation", "legal_lists", "step"):
        setattr(BatchedGame, name, timed(getattr(BatchedGame, name), "engine"))
    clock: dict[str, float] = {}

    def stop() -> bool:
        if not clock:  # after the warm-up update
            clock["start"] = time.perf_counter()
            seconds.update(dict.fromkeys(seconds, 0.0))
            lists.clear()
        return False

    ppo.keep_freed_memory()  # as halma train does
    with tempfile.TemporaryDirectory() as tmp:
        trainer = ppo.Trainer(cfg, Path(tmp) / "split", log=lambda s: None)
        update = trainer._ppo_update

        def measured_update(data: dict[str, torch.Tensor]) -> dict[str, float]:
            counts = data["valid"].sum(1).float()
            lists.append((float(counts.mean()), int(counts.max())))
            return update(data)

        trainer._ppo_update = timed(measured_update, "update")  # type: ignore[method-assign]
        trainer._sample = timed(trainer._sample, "sampling")  # type: ignore[method-assign]
        trainer.train(stop=stop)
        total = time.perf_counter() - clock["start"]
        trainer.close()
    steps = batch * args.updates
    parts = {name: value / steps * 1e6 for name, value in seconds.items()}
    rest = total / steps * 1e6 - sum(parts.values())
    print(f"{args.envs} games: {steps / total:.0f} steps/s, {total / steps * 1e6:.0f} us per step: "
          + ", ".join(f"{name} {value:.0f}" for name, value in parts.items()) + f", the rest {rest:.0f}")
    print(f"legal lists per update: mean {statistics.mean(m for m, _ in lists):.1f}, "
          f"longest {max(k for _, k in lists)}")


def update(args: argparse.Namespace) -> None:
    from agents.network import build_network

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = bench_config()
    net = build_network(cfg.game.variant, cfg.game.num_players, cfg.network)
    optimizer = torch.optim.Adam(net.parameters())
    obs = torch.rand(args.positions, 17, 17, 12).round()
    legal = torch.randint(0, net.num_actions, (args.positions, args.moves))
    valid = torch.rand(args.positions, args.moves) < 0.7
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        logits, value = net(obs, legal, valid)
        loss = torch.log_softmax(logits, -1)[:, 0].mean() + value.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    print(f"fwd+bwd+Adam of {args.positions} positions: min {min(times) * 1e3:.1f} ms, "
          f"median {statistics.median(times) * 1e3:.1f} ms ({args.repeat} steps)")


def _collectives(rank: int, world_size: int, seconds: float) -> tuple[float, float, float]:
    import torch.distributed as dist

    waited = [0.0]
    all_reduce = dist.all_reduce

    def timed(*a, **k):
        start = time.perf_counter()
        out = all_reduce(*a, **k)
        waited[0] += time.perf_counter() - start
        return out

    dist.all_reduce = timed
    steps, elapsed, _ = bench_loop(rank, world_size, bench_config(processes=world_size), seconds)
    dist.all_reduce = all_reduce
    flat = torch.zeros(12_000)  # about the default network's parameter count, with room
    for _ in range(20):
        dist.all_reduce(flat)
    start = time.perf_counter()
    for _ in range(200):
        dist.all_reduce(flat)
    return steps / elapsed, max(parallel.gather(waited[0])), (time.perf_counter() - start) / 200


def collectives(args: argparse.Namespace) -> None:
    rate, waited, latency = parallel.spawn(_collectives, 2, args.seconds)
    print(f"two processes: {rate:.0f} steps/s; the longer wait in all_reduce {waited:.2f} s of the run; "
          f"one all-reduce of 12,000 floats {latency * 1e6:.0f} us")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for name in ("loop", "collectives"):
        sub.add_parser(name).add_argument("--seconds", type=float, default=10.0,
                                          help="timed after the warm-up update (default 10)")
    p = sub.add_parser("split")
    p.add_argument("--updates", type=int, default=20, help="updates timed after the warm-up one (default 20)")
    p.add_argument("--envs", type=int, default=128, help="games played at once (default 128)")
    p = sub.add_parser("update")
    p.add_argument("--positions", type=int, default=512)
    p.add_argument("--moves", type=int, default=80, help="entries of each legal list (default 80)")
    p.add_argument("--repeat", type=int, default=40, help="optimiser steps timed (default 40)")
    args = parser.parse_args(argv)
    if args.what in ("loop", "collectives"):
        try:  # finite, as in `halma bench`: inf would time the loop for ever
            check_number("--seconds", args.seconds, strict=True)
        except ValueError as exc:
            parser.error(str(exc))
    for name in ("updates", "envs", "positions", "moves", "repeat"):
        if getattr(args, name, 1) < 1:
            parser.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    {"loop": loop, "split": split, "update": update, "collectives": collectives}[args.what](args)

if __name__ == "__main__":
    main()
