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
