"""``halma bench env``: how fast the environments run (star, 2 seats, uniformly random legal moves).

One table (or, with ``--json``, one dict) with:
- the PettingZoo AEC env (``halma_env.env``): turns/s of a plain ``agent_iter`` loop, and the figure
  of PettingZoo's own ``pettingzoo.test.performance_benchmark`` (it always runs 5 s);
- the Gymnasium single-agent env (``halma_env/Halma-v0`` against a random opponent): steps/s;
- the batched torch engine (``halma_env.batched.BatchedGame``): game steps/s of
  ``action_mask() + observation() + step(random legal actions)`` for B = 64, 256, 1024, 4096 on
  CPU, and on CUDA when present;
- OpenSpiel's ``chinese_checkers`` (C++ via pyspiel) random-playout turns/s, for comparison (it
  offers single hops as actions, so one of its turns is one hop or step, not a full move).

A section whose dependency is missing is skipped with the reason printed (and stored in
``skipped``).  Import-time cost: torch, pettingzoo and gymnasium are imported here only.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import time
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from halma_env.envs.single_agent import HalmaEnv

BATCH_SIZES = (64, 256, 1024, 4096)


def _timed(step, seconds: float, cpu: list | None = None) -> tuple[int, float]:
    """Call ``step`` (returns units done) until ``seconds`` have passed: (units, elapsed).
    The process CPU time spent is appended to ``cpu`` when given."""
    done = 0
    start = time.perf_counter()
    start_cpu = time.process_time()
    while True:
        done += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            if cpu is not None:
                cpu.append(time.process_time() - start_cpu)
            return done, elapsed


def bench_aec(seconds: float, seed: int) -> dict[str, float]:
    import numpy as np
    from pettingzoo.test import performance_benchmark

    import halma_env

    env = halma_env.env(variant="star", num_players=2)
    env.reset(seed=seed)
    rng = random.Random(seed)

    def turn() -> int:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
        else:
            # a uniformly random agent; the int8 mask read as bool: numpy's nonzero is ~8x faster
            # on bool (4 us against 30 us here), which would otherwise be a sixth of each turn
            env.step(rng.choice(np.flatnonzero(obs["action_mask"].view(np.bool_)).tolist()))
        if not env.agents:
            env.reset(seed=rng.randrange(2**31))
        return 1

    turns, elapsed = _timed(turn, seconds)
    out = {"turns_per_s": turns / elapsed}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        performance_benchmark(halma_env.env(variant="star", num_players=2))
    m = re.search(r"([0-9.eE+-]+) turns per second", buf.getvalue())
    if m:
        out["pettingzoo_performance_benchmark_turns_per_s"] = float(m.group(1))
    return out


def bench_gymnasium(seconds: float, seed: int) -> dict[str, float]:
    import gymnasium
    import numpy as np

    import halma_env.envs  # noqa: F401  (registers halma_env/Halma-v0)

    env = gymnasium.make("halma_env/Halma-v0", variant="star", num_players=2, seat=0, opponents="random")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def step() -> int:
        mask = cast("HalmaEnv", env.unwrapped).action_masks()
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            env.reset()
        return 1

    steps, elapsed = _timed(step, seconds)
    return {"steps_per_s": steps / elapsed}


def bench_batched(seconds: float, seed: int, device: str, sizes=BATCH_SIZES) -> dict[str, float]:
    """Game steps/s (mask + observation + step of random legal actions) for each batch size; on
    CPU also ``"<B>_per_cpu_s"``: steps per second of process CPU time, which a machine shared
    with other jobs affects far less than the wall-clock figure."""
    import torch

    from halma_env.batched import BatchedGame
    from halma_env.rules import Rules

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    out = {}
    for size in sizes:
        game = BatchedGame(Rules("star", 2), size, device=device, seed=seed)

        def step(game=game, size=size) -> int:
            game.action_mask()
            game.observation()
            game.step(game.random_actions())
            return size

        for _ in range(3):  # warm up (allocator, first passes)
            step()
        sync()
        cpu: list = []
        steps, elapsed = _timed(lambda step=step: (step(), sync())[0], seconds, cpu)
        out[str(size)] = steps / elapsed
        if not device.startswith("cuda") and cpu[0] > 0:
            out[f"{size}_per_cpu_s"] = steps / cpu[0]
    return out


def bench_openspiel(seconds: float, seed: int) -> dict[str, float]:
    from halma_env.bench_engine import openspiel_checkers

    game = openspiel_checkers()
    rng = random.Random(seed)
    state = game.new_initial_state()

    def turn() -> int:
        nonlocal state
        if state.is_terminal():
            state = game.new_initial_state()
        state.apply_action(rng.choice(state.legal_actions()))
        return 1

    turns, elapsed = _timed(turn, seconds)
    return {"turns_per_s": turns / elapsed}


def run_benchmark(args: Any) -> dict[str, Any]:
    """Run every section; print one table unless ``args.json``; return the figures."""
    seconds = float(getattr(args, "seconds", 2.0))
    if seconds <= 0:
        raise ValueError(f"--seconds must be positive, got {seconds}")
    seed = int(getattr(args, "seed", 0))
    quiet = bool(getattr(args, "json", False))
    figures: dict[str, Any] = {"game": "star, 2 seats, random legal moves", "seconds": seconds, "skipped": {}}

    def section(name: str, fn, *a) -> None:
        try:
            figures[name] = fn(*a)
        except ImportError as e:  # a missing dependency skips the section (any other error is a bug: raised)
            figures["skipped"][name] = f"missing dependency: {e.name or e}"
        if name in figures["skipped"] and not quiet:
            print(f"skipping {name}: {figures['skipped'][name]}")

    section("aec", bench_aec, seconds, seed)
    section("gymnasium", bench_gymnasium, seconds, seed)
    try:
        import torch

        figures["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads()}
        requested = getattr(args, "device", None)
        devices = [requested] if requested else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        if not requested and not torch.cuda.is_available():
            figures["skipped"]["batched_cuda"] = "torch.cuda.is_available() is false"
            if not quiet:
                print("skipping batched on cuda: torch.cuda.is_available() is false")
        figures["batched"] = {}
        default_threads = torch.get_num_threads()
        for dev in devices:
            figures["batched"][dev] = bench_batched(seconds, seed, dev)
            if dev == "cpu" and default_threads > 1:
                # on a busy machine one thread can beat several (OpenMP threads wait on each other)
                torch.set_num_threads(1)
                try:
                    figures["batched"]["cpu_1_thread"] = bench_batched(seconds, seed, dev)
                finally:
                    torch.set_num_threads(default_threads)
    except ImportError as e:
        figures["skipped"]["batched"] = f"missing dependency: {e.name or e}"
        if not quiet:
            print(f"skipping batched: {figures['skipped']['batched']}")
    section("openspiel", bench_openspiel, seconds, seed)
    if not quiet:
        print(format_table(figures))
    return figures


def format_table(figures: dict[str, Any]) -> str:
    rows = []
    aec = figures.get("aec", {})
    if "turns_per_s" in aec:
        rows.append(("PettingZoo AEC env", "agent_iter loop", f"{aec['turns_per_s']:,.0f} turns/s"))
    if "pettingzoo_performance_benchmark_turns_per_s" in aec:
        rows.append(("PettingZoo AEC env", "pettingzoo.test.performance_benchmark",
                     f"{aec['pettingzoo_performance_benchmark_turns_per_s']:,.0f} turns/s"))
    if "gymnasium" in figures:
        rows.append(("Gymnasium single-agent", "vs random", f"{figures['gymnasium']['steps_per_s']:,.0f} steps/s"))
    threads = figures.get("torch", {}).get("threads")
    for dev, by_size in figures.get("batched", {}).items():
        for size, rate in by_size.items():
            if size.endswith("_per_cpu_s"):
                continue
            per_cpu = by_size.get(f"{size}_per_cpu_s")
            if dev == "cpu_1_thread":
                where = f"cpu, B={size}, 1 thread"
            else:
                where = f"{dev}, B={size}" + (f", {threads} threads" if dev == "cpu" and threads else "")
            rows.append(("batched torch engine", where, f"{rate:,.0f} game steps/s"
                         + (f" ({per_cpu:,.0f} per CPU-second)" if per_cpu else "")))
    if "openspiel" in figures:
        rows.append(("OpenSpiel chinese_checkers", "random playout (single hops)",
                     f"{figures['openspiel']['turns_per_s']:,.0f} turns/s"))
    widths = [max(len(r[i]) for r in rows + [("what", "setting", "speed")]) for i in range(3)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731  (no trailing blanks)
    out = [f"halma bench env: {figures['game']}, {figures['seconds']:g} s per figure",
           line(("what", "setting", "speed")), line(tuple("-" * w for w in widths))]
    out += [line(r) for r in rows]
    return "\n".join(out)
