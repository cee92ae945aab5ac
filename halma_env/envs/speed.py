"""Throughput of the AEC and Gymnasium environments with random legal actions.

``aec_turns_per_second`` is PettingZoo's ``performance_benchmark`` loop (``last()``, a uniformly
random legal action from ``np.flatnonzero(mask)``, ``step()``, reset at the end of a game) for a
chosen time instead of its fixed 5 s, so ``halma bench env`` can report it next to other figures.
Both wall-clock and process CPU time are returned: on a shared machine the CPU-time figure is the
better estimate of what one free core does.

    python -m halma_env.envs.speed [--seconds 3]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import numpy as np


def aec_turns_per_second(
    variant: str = "star", num_players: int = 2, seconds: float = 2.0, wrapped: bool = True, seed: int = 0,
    **rule_options: Any,
) -> dict[str, float]:
    """Turns per second of ``env()`` (``wrapped``) or ``raw_env()``: {"wall": ..., "cpu": ...}."""
    from halma_env.envs.aec import env, raw_env

    e = (env if wrapped else raw_env)(variant=variant, num_players=num_players, **rule_options)
    rng = random.Random(seed)
    e.reset(seed=seed)
    turns = 0
    start, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        for _agent in e.agent_iter(e.num_agents):
            obs, _, termination, truncation, _ = e.last()
            if termination or truncation:
                action = None
            else:
                action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
            e.step(action)
            turns += 1
            if all(e.terminations.values()) or all(e.truncations.values()):
                e.reset()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return {"wall": turns / wall, "cpu": turns / max(cpu, 1e-9), "turns": turns}


def gym_steps_per_second(
    variant: str = "star", num_players: int = 2, seconds: float = 2.0, seed: int = 0, **kwargs: Any,
) -> dict[str, float]:
    """Learner steps per second of ``HalmaEnv`` against random opponents (each step also plays
    the opponents' turns), with random legal learner actions: {"wall": ..., "cpu": ...}."""
    from halma_env.envs.single_agent import HalmaEnv

    e = HalmaEnv(variant=variant, num_players=num_players, **kwargs)
    rng = random.Random(seed)
    obs, _ = e.reset(seed=seed)
    steps = 0
    start, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        obs, _, terminated, truncated, _ = e.step(action)
        steps += 1
        if terminated or truncated:
            obs, _ = e.reset()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return {"wall": steps / wall, "cpu": steps / max(cpu, 1e-9), "steps": steps}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--move-limit", type=int, default=200, help="bounds random games (default 200 plies)")
    args = p.parse_args(argv)
    s, limit = args.seconds, args.move_limit
    rows = [
        ("AEC env(), star 2", aec_turns_per_second(seconds=s, move_limit=limit)),
        ("AEC raw_env(), star 2", aec_turns_per_second(seconds=s, wrapped=False, move_limit=limit)),
        ("AEC env(), star 6", aec_turns_per_second(num_players=6, seconds=s, move_limit=limit)),
        ("Gymnasium HalmaEnv, star 2 vs random", gym_steps_per_second(seconds=s, move_limit=limit)),
    ]
    print(f"{'environment':40s} {'per s (wall)':>14s} {'per CPU s':>12s}")
    for name, r in rows:
        print(f"{name:40s} {r['wall']:14,.0f} {r['cpu']:12,.0f}")


if __name__ == "__main__":
    main()
