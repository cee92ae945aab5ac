"""``halma bench TARGET``: speed benchmarks that print their figures (``--json`` for one object)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from agents.devices import check_device
from agents.player import check_number

# target -> (module, function); each function takes the parsed args and returns a dict of figures
TARGETS = {
    "engine": ("halma_env.bench_engine", "run_benchmark"),
    "env": ("halma_env.envs.bench", "run_benchmark"),
    "train": ("agents.train", "run_benchmark"),
    "opponent": ("agents.export", "run_benchmark"),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", choices=sorted(TARGETS), help="what to measure")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--seconds", type=float, default=2.0,
                   help="time spent on each measurement (default 2); a benchmark makes many measurements, "
                        "and loading and warm-up come on top, so a run takes much longer")
    p.add_argument("--repeat", type=int, default=1,
                   help="train only: measure every configuration this many times, interleaved, and report "
                        "the median (default 1; the machine's speed drifts)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games played (default 0)")
    p.add_argument(
        "--device", default=None,
        help="torch device for the env and train benchmarks (default: cpu, plus cuda if present)",
    )


DEVICE_TARGETS = ("env", "train")  # the benchmarks that run torch code; engine and opponent are CPU-only


def run(args: argparse.Namespace) -> int:
    try:
        check_number("--seconds", args.seconds, strict=True)
        if not 0 <= args.seed < 2**63:  # one check for all four benchmarks, whose libraries word it differently
            raise ValueError(f"--seed must be an integer 0..2**63-1, got {args.seed}")
        if args.repeat < 1:
            raise ValueError(f"--repeat must be >= 1, got {args.repeat}")
        if args.repeat != 1 and args.target != "train":
            raise ValueError(f"--repeat is for the train benchmark (the {args.target} benchmark "
                             "reports the best and median of its own rounds)")
        if args.device is not None:
            if args.target not in DEVICE_TARGETS:
                raise ValueError(f"--device is for the {' and '.join(DEVICE_TARGETS)} benchmarks; the "
                                 f"{args.target} benchmark runs on the CPU only")
            check_device(args.device)
        module_name, function = TARGETS[args.target]
        figures = getattr(importlib.import_module(module_name), function)(args)
    except ValueError as e:  # a bad option, found here or by the benchmark itself
        print(f"halma bench: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
    return 0
