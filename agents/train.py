"""``halma train CONFIG``: self-play PPO from a YAML config (docs/training.md), and ``halma bench train``.

The run directory ``<runs-dir>/<name>/`` receives ``config.yaml`` (the resolved config),
``tb/`` (TensorBoard), ``checkpoints/`` (``last.pt`` with optimizer and RNG state, numbered
model checkpoints), ``snapshots/`` (the opponent pool), ``eval.jsonl`` (evaluations during
training) and ``final_eval.json``/``final_eval.md`` (the closing evaluation table).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from agents.config import load_config


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="YAML config (configs/*.yaml)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, dotted for nested keys (ppo.learning_rate=1e-4); repeatable")
    p.add_argument("--device", default=None, help="torch device (default: the config's, cpu); e.g. cuda")
    p.add_argument("--resume", action="store_true", help="continue the run from <run dir>/checkpoints/last.pt")
    p.add_argument("--runs-dir", default="runs", help="parent of the run directory (default runs/)")
    p.add_argument("--no-final-eval", action="store_true", help="skip the closing evaluation")
    p.add_argument("--quiet", action="store_true", help="no progress bar; status lines only")


def final_table(results: dict[str, Any], opponents: list[str], games: int) -> str:
    """The closing evaluation as a markdown table."""
    lines = ["| opponent | games | win rate | mean place (agent / opponents) | agent finished | games decided "
             "| mean length (plies) |", "|---|---|---|---|---|---|---|"]
    for opp in opponents:
        r = results[opp]
        places = f"{r['mean_place']:.2f} / {r['opponent_mean_place']:.2f}"
        lines.append(f"| {opp} | {games} | {r['win_rate']:.1%} | {places} | {r['finish_rate']:.1%} | "
                     f"{r['decided_rate']:.1%} | {r['mean_length']:.0f} |")
    if "solo" in results:
        solo = results["solo"]
        lines.append(f"\nsolitaire crossing, policy alone: {solo['moves']:.0f} moves"
                     + ("" if solo["finished"] else " (unfinished at eval.move_limit)") + "; the optimum is 27")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from agents.ppo import Trainer

    try:
        cfg = load_config(args.config, args.overrides)
    except ValueError as exc:
        print(f"halma train: {exc}", file=sys.stderr)
        return 2
    run_dir = Path(args.runs_dir) / cfg.name
    if args.quiet:
        cfg.log.progress_bar = False
    t0 = time.time()
    try:
        trainer = Trainer(cfg, run_dir, device=args.device, resume=args.resume)
    except ValueError as exc:
        print(f"halma train: {exc}", file=sys.stderr)
        return 2
    print(f"training {cfg.game.variant} {cfg.game.num_players} seats -> {run_dir} on {trainer.device}", flush=True)
    trainer.train()
    trainer.close()
    train_time = time.time() - t0
    ckpt = run_dir / "checkpoints" / "last.pt"
    print(f"trained {trainer.global_step} steps in {train_time:.0f} s; checkpoint {ckpt}")
    if not args.no_final_eval and cfg.eval.final_games and cfg.eval.final_opponents:
        # the greedy policy alone, all games side by side (one batched forward per ply), rules without a
        # move limit and a cap of eval.move_limit plies counted as a draw, like `halma eval`'s default
        t1 = time.time()
        res = trainer.run_evaluation(cfg.eval.final_opponents, cfg.eval.final_games, final=True)
        table = final_table(res, cfg.eval.final_opponents, cfg.eval.final_games)
        (run_dir / "final_eval.json").write_text(json.dumps(res, indent=2))
        (run_dir / "final_eval.md").write_text(table + "\n")
        print(f"final evaluation ({time.time() - t1:.0f} s), policy alone:")
        print(table)
        players = " ".join(cfg.eval.final_opponents[:1])
        print(f"cross-check with the arena: halma eval {ckpt} {players} --variant {cfg.game.variant} "
              f"--seats {cfg.game.num_players} --games 100")
    print(f"total time {time.time() - t0:.0f} s")
    return 0


# --- halma bench train ------------------------------------------------------------------


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Environment steps per second of the whole loop (rollout + update), default config, self-play.

    Measured for the scalar and the batched engine on one torch thread (the default config's), and for
    the batched engine on two threads (only meaningful on a quiet machine: the load average is reported).
    """
    import os
    import tempfile

    import torch

    from agents.config import default_dict, from_dict
    from agents.ppo import Trainer

    devices = [args.device] if getattr(args, "device", None) else ["cpu"] + (["cuda"] if torch.cuda.is_available()
                                                                             else [])
    figures: dict[str, Any] = {"load_average_1min": round(os.getloadavg()[0], 2)}
    seconds = float(getattr(args, "seconds", 2.0))
    runs = [(device, engine, 1) for device in devices for engine in ("scalar", "batched")]
    runs += [("cpu", "batched", 2)] if "cpu" in devices else []
    threads_before = torch.get_num_threads()  # the trainer sets torch's (process-wide) thread count
    for device, engine, threads in runs:
        data = default_dict()
        data.update(name="bench", seed=int(getattr(args, "seed", 0)), device=device, torch_threads=threads)
        data["env"]["engine"] = engine
        data["pool"].update(self_prob=1.0, snapshot_prob=0.0, bot_prob=0.0)
        data["eval"].update(every=0, final_games=0)
        data["log"].update(progress_bar=False, tensorboard=False, status_every=1e9)
        data["checkpoint"]["every"] = 10 ** 9
        cfg = from_dict(data)
        batch = cfg.env.num_envs * cfg.ppo.num_steps
        with tempfile.TemporaryDirectory() as tmp:
            # one warm-up iteration, then as many as fit in the time given (at least one)
            cfg.ppo.total_steps = batch
            trainer = Trainer(cfg, Path(tmp) / "bench", log=lambda s: None)
            trainer.train()
            iterations = 1
            start, cpu0 = time.perf_counter(), time.process_time()
            steps0 = trainer.global_step
            while iterations == 1 or time.perf_counter() - start < seconds:
                iterations += 1
                cfg.ppo.total_steps = batch * iterations
                trainer.train()
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
            steps = trainer.global_step - steps0
            name = f"train_{device}_{engine}" + (f"_{threads}threads" if threads != 1 else "")
            figures[f"{name}_steps_per_s"] = round(steps / elapsed, 1)
            # per second of this process's CPU time (all its threads): on a shared machine, what one
            # free core would give with one thread
            figures[f"{name}_steps_per_cpu_s"] = round(steps / max(cpu, 1e-9), 1)
            trainer.close()
    torch.set_num_threads(threads_before)
    figures["num_envs"] = cfg.env.num_envs
    figures["num_steps"] = cfg.ppo.num_steps
    figures["num_minibatches"] = cfg.ppo.num_minibatches
    figures["update_epochs"] = cfg.ppo.update_epochs
    figures["threads"] = 1
    if not getattr(args, "json", False):
        print("halma bench train (whole PPO loop, self-play, default config; steps = plies of all seats; "
              "1 torch thread unless the name says otherwise)")
        for key, value in figures.items():
            print(f"  {key:40s} {value}")
    return figures
