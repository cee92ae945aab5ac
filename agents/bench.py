"""``halma bench TARGET``: speed benchmarks that print their figures (``--json`` for one object)."""

from __future__ import annotations

import argparse
import importlib
import json

# target -> (module, function); each function takes the parsed args and returns a dict of figures
TARGETS = {
    "engine": ("halma_env.bench_engine", "run_benchmark"),
    "env": ("halma_env.bench_env", "run_benchmark"),
    "train": ("agents.train", "run_benchmark"),
    "opponent": ("agents.export", "run_benchmark"),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", choices=sorted(TARGETS), help="what to measure")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--seconds", type=float, default=2.0, help="time spent on each measurement (default 2)")
    p.add_argument("--repeat", type=int, default=1,
                   help="train only: measure every configuration this many times, interleaved, and report "
                        "the median (default 1; the machine's speed drifts)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--device", default=None, help="torch device for env/train benchmarks (default: cpu, plus cuda if present)"
    )


def run(args: argparse.Namespace) -> int:
    if args.repeat < 1:
        raise SystemExit(f"halma bench: --repeat must be >= 1, got {args.repeat}")
    if args.repeat != 1 and args.target != "train":
        raise SystemExit(f"halma bench: --repeat is for the train benchmark (the {args.target} benchmark "
                         "reports the best and median of its own rounds)")
    module_name, function = TARGETS[args.target]
    figures = getattr(importlib.import_module(module_name), function)(args)
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
    return 0
