"""``halma bench train``: the figures it reports (run here on a tiny config so that it takes seconds)."""

from __future__ import annotations

import types

import pytest
import torch

import agents.config
from agents.train import run_benchmark


def test_bench_train_reports_every_engine_thread_and_process_count(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real = agents.config.default_dict

    def tiny() -> dict:
        data = real()
        data["env"]["num_envs"] = 4
        data["ppo"]["num_steps"] = 8
        data["network"].update(channels=4, blocks=1, pair_dim=4, value_hidden=4)
        return data

    monkeypatch.setattr(agents.config, "default_dict", tiny)
    threads = torch.get_num_threads()
    figures = run_benchmark(types.SimpleNamespace(json=False, seconds=0.0, seed=0, device="cpu"))
    for name in ("train_cpu_scalar", "train_cpu_batched", "train_cpu_batched_2threads",
                 "train_cpu_batched_2processes"):
        assert figures[f"{name}_steps_per_s"] > 0 and figures[f"{name}_steps_per_cpu_s"] > 0
    assert figures["num_envs"] == 4 and figures["num_steps"] == 8 and figures["threads"] == 1
    assert figures["load_average_1min"] >= 0
    assert torch.get_num_threads() == threads  # the bench leaves torch's thread count as it found it
    out = capsys.readouterr().out
    assert "train_cpu_batched_2threads_steps_per_s" in out and "1 torch thread" in out


def test_the_load_average_is_none_where_the_platform_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from agents.train import load_average

    assert load_average() == round(os.getloadavg()[0], 2)
    monkeypatch.delattr(os, "getloadavg")  # Windows: halma bench train raised AttributeError before measuring
    assert load_average() is None


def test_bench_train_repeat_reports_the_median_of_interleaved_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.parallel
    import agents.train

    # the four CPU configurations (scalar, batched, 2 threads, 2 processes), three rounds, interleaved
    readings = iter([1.0, 30.0, 300.0, 3000.0, 2.0, 10.0, 100.0, 1000.0, 3.0, 20.0, 200.0, 2000.0])

    def fake_loop(rank: int, world_size: int, cfg, seconds: float) -> tuple[int, float, float]:
        return int(next(readings)), 1.0, 2.0

    monkeypatch.setattr(agents.train, "bench_loop", fake_loop)
    monkeypatch.setattr(agents.parallel, "spawn", lambda fn, world_size, *args: fn(0, world_size, *args))
    figures = run_benchmark(types.SimpleNamespace(json=True, seconds=0.0, seed=0, device="cpu", repeat=3))
    assert figures["repeat"] == 3
    assert figures["train_cpu_scalar_steps_per_s"] == 2.0 and figures["train_cpu_batched_steps_per_s"] == 20.0
    assert figures["train_cpu_batched_2processes_steps_per_s"] == 2000.0
    assert figures["train_cpu_batched_steps_per_cpu_s"] == 10.0
    assert figures["train_cpu_scalar_steps_per_s_readings"] == [1.0, 2.0, 3.0]
    assert figures["train_cpu_batched_2threads_steps_per_s_readings"] == [300.0, 100.0, 200.0]
    assert not [key for key in figures if key.endswith("cpu_s_readings")]  # wall readings only


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--repeat", "0"], "--repeat must be >= 1, got 0"),
        (["engine", "--repeat", "2"], "--repeat is for the train benchmark"),
        (["engine", "--seconds", "0"], "--seconds must be > 0 (a finite number), got 0.0"),
        (["engine", "--seconds", "nan"], "--seconds must be > 0 (a finite number), got nan"),
        (["engine", "--device", "cpu"], "--device is for the env and train benchmarks"),
        (["train", "--device", "bogus"], "--device 'bogus' is not a torch device"),
        (["train", "--device", "meta"], "--device 'meta' is not a device to compute on"),
        *[([target, "--seed", seed], f"--seed must be an integer 0..2**63-1, got {seed}")
          for target in ("engine", "env", "train", "opponent") for seed in ("-1", str(2**63))],
    ],
)
def test_bench_options_are_checked_before_anything_runs(capsys, argv, message) -> None:
    from agents.cli import main

    assert main(["bench", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"halma bench: error: {message}" in captured.err
