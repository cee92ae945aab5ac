"""``halma bench env`` (``halma_env/envs/bench.py``) with its clocks replaced: the loop it times, what each
section plays (and how many turns, steps or game steps it reports for them), the sections it skips
and why, the devices and thread counts of the batched engine, and the printed table."""

from __future__ import annotations

import random
import sys
import types
from typing import Any

import numpy as np
import pytest

from halma_env.envs import bench as bench_env

# --- helpers ---------------------------------------------------------------------------------------------


class FakeClock:
    """Wall and CPU clocks that move only when told to (binary fractions: sums stay exact)."""

    def __init__(self, wall: float = 100.0, cpu: float = 50.0) -> None:
        self.wall, self.cpu = wall, cpu

    def install(self, monkeypatch) -> FakeClock:
        monkeypatch.setattr(bench_env, "time", types.SimpleNamespace(perf_counter=lambda: self.wall,
                                                                     process_time=lambda: self.cpu))
        return self

    def tick(self, wall: float = 0.125, cpu: float = 0.0) -> None:
        self.wall += wall
        self.cpu += cpu


class Spy:
    """Passes everything through to ``inner``; ``reset`` and ``step`` are logged (and ``step`` moves
    the clock): ``("reset", seed, agents left)``, ``("step", action, legal actions)``."""

    def __init__(self, inner: Any, clock: FakeClock, legal) -> None:
        self._inner, self._clock, self._legal, self.log = inner, clock, legal, []

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        self.log.append(("reset", kwargs.get("seed"), list(getattr(self._inner, "agents", []))))
        return self._inner.reset(*args, **kwargs)

    def step(self, action: Any) -> Any:
        self.log.append(("step", action, self._legal(self._inner)))
        self._clock.tick()
        return self._inner.step(action)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _aec_legal(env: Any) -> list[int] | None:
    obs, _, term, trunc, _ = env.last()
    return None if term or trunc else np.flatnonzero(obs["action_mask"]).tolist()


# --- _timed ----------------------------------------------------------------------------------------------


def test_timed_counts_units_until_the_seconds_have_passed_and_reports_cpu_time(monkeypatch) -> None:
    clock = FakeClock().install(monkeypatch)

    def step() -> int:
        clock.tick(0.125, 0.0625)
        return 3

    cpu: list[float] = [9.0]
    assert bench_env._timed(step, 1.0, cpu) == (24, 1.0)  # 8 steps of 1/8 s: the 8th reaches 1 s
    assert cpu == [9.0, 0.5]  # appended
    assert bench_env._timed(step, 0.25) == (6, 0.25)  # without a list: nothing to append to


# --- the sections ----------------------------------------------------------------------------------------


def test_bench_aec_plays_uniformly_random_legal_moves_and_reseeds_each_new_game(monkeypatch) -> None:
    import pettingzoo.test

    import halma_env

    clock = FakeClock().install(monkeypatch)
    made: list[dict[str, Any]] = []
    spies: list[Spy] = []
    real_env = halma_env.env

    def env(**kwargs: Any) -> Spy:
        made.append(kwargs)
        spies.append(Spy(real_env(**kwargs, move_limit=3), clock, _aec_legal))  # short games
        return spies[-1]

    monkeypatch.setattr(halma_env, "env", env)
    # PettingZoo's own benchmark, run for real on a clock that moves 2 s a reading: 3 cycles of 2 turns in 8 s
    ticks = iter(range(0, 100, 2))
    monkeypatch.setitem(pettingzoo.test.performance_benchmark.__globals__, "time",
                        types.SimpleNamespace(time=lambda: float(next(ticks))))
    figures = bench_env.bench_aec(2.5, 11)
    assert made == [{"variant": "star", "num_players": 2}] * 2
    assert figures == {"turns_per_s": 20 / 2.5, "pettingzoo_performance_benchmark_turns_per_s": 6 / 8}
    log = spies[0].log
    assert [e[0] for e in log].count("step") == 20  # each turn one step: 20 turns of 1/8 s in 2.5 s
    # games of 3 plies and two steps of None (truncated); a new game only once the last one is over
    resets = [e for e in log if e[0] == "reset"]
    assert len(resets) == 1 + 4 and all(agents == [] for _, _, agents in resets[1:])
    rng = random.Random(11)  # the replay: every choice and every new game's seed from one generator
    assert resets[0][1] == 11
    for kind, value, legal in log[1:]:
        if kind == "reset":
            assert value == rng.randrange(2**31)
        elif legal is None:
            assert value is None
        else:
            assert value == rng.choice(legal)


def test_bench_gymnasium_steps_the_single_agent_env_against_a_random_opponent(monkeypatch) -> None:
    import gymnasium
    clock = FakeClock().install(monkeypatch)
    made: list[tuple[tuple, dict[str, Any]]] = []
    spies: list[Spy] = []
    real_make = gymnasium.make

    def make(*args: Any, **kwargs: Any) -> Spy:
        made.append((args, kwargs))
        spies.append(Spy(real_make(*args, **kwargs, move_limit=3), clock,
                         lambda e: np.flatnonzero(e.unwrapped.action_masks()).tolist()))
        return spies[-1]

    monkeypatch.setattr(gymnasium, "make", make)
    assert bench_env.bench_gymnasium(2.5, 4) == {"steps_per_s": 20 / 2.5}
    assert made == [(("halma_env/Halma-v0",), {"variant": "star", "num_players": 2, "seat": 0,
                                              "opponents": "random"})]
    log = spies[0].log
    steps = [e for e in log if e[0] == "step"]
    resets = [e for e in log if e[0] == "reset"]
    # 3-ply games: two steps (the opponent's reply between them), then a new game
    assert len(steps) == 20 and len(resets) == 1 + 10 and resets[0][1] == 4
    assert [e[0] for e in log[1:]] == ["step", "step", "reset"] * 10
    rng = np.random.default_rng(4)
    assert all(action == int(rng.choice(legal)) for _, action, legal in steps)


def test_bench_openspiel_counts_one_turn_a_hop_or_step(monkeypatch) -> None:
    import pyspiel
    loaded: list[tuple] = []
    real_load = pyspiel.load_game
    monkeypatch.setattr(pyspiel, "load_game", lambda *a: loaded.append(a) or real_load(*a))
    readings = iter(np.arange(0, 10, 0.125))
    monkeypatch.setattr(bench_env, "time", types.SimpleNamespace(perf_counter=lambda: float(next(readings)),
                                                                 process_time=lambda: 0.0))
    assert bench_env.bench_openspiel(1.0, 0) == {"turns_per_s": 8.0}  # a clock reading after each turn
    assert loaded == [("chinese_checkers", {})]  # the default parameters


class FakeBatchedGame:
    """Stands in for ``BatchedGame``: logs its calls; each ``step`` moves the clock."""

    made: list[FakeBatchedGame] = []
    clock = FakeClock()
    cpu_tick = 0.0625

    def __init__(self, rules: Any, size: int, device: str, seed: int) -> None:
        self.args = (rules.variant, rules.num_players, size, device, seed)
        self.calls: list[str] = []
        FakeBatchedGame.made.append(self)

    def action_mask(self) -> None:
        self.calls.append("mask")

    def observation(self) -> None:
        self.calls.append("obs")

    def random_actions(self) -> str:
        self.calls.append("random")
        return "actions"

    def step(self, actions: str) -> None:
        assert actions == "actions"
        self.calls.append("step")
        FakeBatchedGame.clock.tick(0.125, FakeBatchedGame.cpu_tick)


@pytest.fixture
def fake_batched(monkeypatch) -> type[FakeBatchedGame]:
    import halma_env.batched

    monkeypatch.setattr(halma_env.batched, "BatchedGame", FakeBatchedGame)
    monkeypatch.setattr(FakeBatchedGame, "made", [])
    monkeypatch.setattr(FakeBatchedGame, "clock", FakeClock().install(monkeypatch))
    return FakeBatchedGame


def test_bench_batched_on_cpu_reports_game_steps_per_second_and_per_cpu_second(fake_batched) -> None:
    out = bench_env.bench_batched(0.5, 7, "cpu", sizes=(3, 5))
    # three warm-up steps, then four timed ones of 1/8 s (and 1/16 s of CPU time) each
    assert out == {"3": 4 * 3 / 0.5, "3_per_cpu_s": 4 * 3 / 0.25, "5": 4 * 5 / 0.5, "5_per_cpu_s": 4 * 5 / 0.25}
    assert [g.args for g in fake_batched.made] == [("star", 2, 3, "cpu", 7), ("star", 2, 5, "cpu", 7)]
    assert all(g.calls == ["mask", "obs", "random", "step"] * 7 for g in fake_batched.made)


def test_bench_batched_reports_no_per_cpu_figure_without_cpu_time(fake_batched, monkeypatch) -> None:
    monkeypatch.setattr(fake_batched, "cpu_tick", 0.0)
    assert bench_env.bench_batched(0.25, 0, "cpu", sizes=(2,)) == {"2": 2 * 2 / 0.25}


def test_bench_batched_on_cuda_synchronizes_every_timed_step(fake_batched, monkeypatch) -> None:
    import torch

    syncs: list[int] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: syncs.append(len(fake_batched.made[-1].calls)))
    out = bench_env.bench_batched(0.5, 1, "cuda:1", sizes=(4,))
    assert out == {"4": 4 * 4 / 0.5}  # no per-CPU-second figure for a GPU
    assert fake_batched.made[0].args == ("star", 2, 4, "cuda:1", 1)
    assert syncs == [12, 16, 20, 24, 28]  # after the warm-up, then after each timed step


def test_bench_batched_measures_the_documented_batch_sizes(fake_batched) -> None:
    assert list(bench_env.bench_batched(0.125, 0, "cpu")) == ["64", "64_per_cpu_s", "256", "256_per_cpu_s",
                                                              "1024", "1024_per_cpu_s", "4096", "4096_per_cpu_s"]


# --- run_benchmark ---------------------------------------------------------------------------------------


class Threads:
    """torch's thread count, faked: ``get`` and ``set``, with what each batched run saw."""

    def __init__(self, monkeypatch, count: int, cuda: bool) -> None:
        import torch

        self.count, self.seen = count, []
        monkeypatch.setattr(torch, "get_num_threads", lambda: self.count)
        monkeypatch.setattr(torch, "set_num_threads", self.set)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(bench_env, "bench_batched", self.bench_batched)

    def set(self, n: int) -> None:
        self.count = n

    def bench_batched(self, seconds: float, seed: int, device: str) -> dict[str, float]:
        self.seen.append((device, self.count, seconds, seed))
        return {"64": 1.0 + len(self.seen)}


def _fake_sections(monkeypatch, calls: list[tuple]) -> None:
    for name, figures in (("aec", {"turns_per_s": 10.0}), ("gymnasium", {"steps_per_s": 5.0}),
                          ("openspiel", {"turns_per_s": 20.0})):
        monkeypatch.setattr(bench_env, f"bench_{name}",
                            lambda s, seed, name=name, figures=figures: calls.append((name, s, seed)) or figures)


def test_run_benchmark_figures_cpu_then_one_thread_and_no_cuda(monkeypatch, capsys) -> None:
    import torch

    calls: list[tuple] = []
    _fake_sections(monkeypatch, calls)
    threads = Threads(monkeypatch, 3, cuda=False)
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=0.5, seed=9, json=True, device=None))
    assert capsys.readouterr().out == ""  # --json: nothing printed, skips included
    assert calls == [("aec", 0.5, 9), ("gymnasium", 0.5, 9), ("openspiel", 0.5, 9)]
    assert threads.seen == [("cpu", 3, 0.5, 9), ("cpu", 1, 0.5, 9)] and threads.count == 3  # restored
    assert list(figures) == ["game", "seconds", "skipped", "aec", "gymnasium", "torch", "batched", "openspiel"]
    assert figures == {
        "game": "star, 2 seats, random legal moves", "seconds": 0.5,
        "skipped": {"batched_cuda": "torch.cuda.is_available() is false"},
        "aec": {"turns_per_s": 10.0}, "gymnasium": {"steps_per_s": 5.0},
        "torch": {"version": torch.__version__, "threads": 3},
        "batched": {"cpu": {"64": 2.0}, "cpu_1_thread": {"64": 3.0}}, "openspiel": {"turns_per_s": 20.0},
    }


@pytest.mark.parametrize(("count", "one_thread_run"), [(1, False), (2, True)])
def test_run_benchmark_runs_cpu_and_cuda_when_cuda_is_there(monkeypatch, count: int, one_thread_run: bool) -> None:
    _fake_sections(monkeypatch, [])
    threads = Threads(monkeypatch, count, cuda=True)
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=0.5, seed=0, json=True, device=None))
    expected = [("cpu", count, 0.5, 0)] + [("cpu", 1, 0.5, 0)] * one_thread_run + [("cuda", count, 0.5, 0)]
    assert threads.seen == expected
    assert list(figures["batched"]) == ["cpu"] + ["cpu_1_thread"] * one_thread_run + ["cuda"]
    assert figures["skipped"] == {}


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_run_benchmark_runs_only_the_device_asked_for(monkeypatch, device: str) -> None:
    _fake_sections(monkeypatch, [])
    threads = Threads(monkeypatch, 1, cuda=False)
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=0.5, seed=0, json=True, device=device))
    assert threads.seen == [(device, 1, 0.5, 0)]
    assert list(figures["batched"]) == [device] and figures["skipped"] == {}  # no cuda asked for, none skipped


def test_run_benchmark_prints_its_skips_and_then_the_table(monkeypatch, capsys) -> None:
    calls: list[tuple] = []
    _fake_sections(monkeypatch, calls)
    Threads(monkeypatch, 1, cuda=False)
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=0.5))  # seed 0 and a printed table
    assert calls == [("aec", 0.5, 0), ("gymnasium", 0.5, 0), ("openspiel", 0.5, 0)]
    out = capsys.readouterr().out
    assert out == ("skipping batched on cuda: torch.cuda.is_available() is false\n"
                   + bench_env.format_table(figures) + "\n")


def test_run_benchmark_skips_sections_whose_dependency_is_missing(monkeypatch, capsys) -> None:
    def missing(module: str | None):
        def fn(seconds: float, seed: int) -> dict[str, float]:
            raise ImportError(f"No module named {module or 'nameless'!r}", name=module)

        return fn

    monkeypatch.setattr(bench_env, "bench_aec", missing("pettingzoo"))
    monkeypatch.setattr(bench_env, "bench_gymnasium", missing("gymnasium"))
    monkeypatch.setattr(bench_env, "bench_openspiel", missing(None))
    monkeypatch.setitem(sys.modules, "torch", None)
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=1.5, seed=0, json=False))
    assert figures == {"game": "star, 2 seats, random legal moves", "seconds": 1.5, "skipped": {
        "aec": "missing dependency: pettingzoo",
        "gymnasium": "missing dependency: gymnasium",
        "batched": "missing dependency: torch",
        "openspiel": "missing dependency: No module named 'nameless'",
    }}
    assert capsys.readouterr().out == (
        "skipping aec: missing dependency: pettingzoo\n"
        "skipping gymnasium: missing dependency: gymnasium\n"
        "skipping batched: missing dependency: torch\n"
        "skipping openspiel: missing dependency: No module named 'nameless'\n"
        "halma bench env: star, 2 seats, random legal moves, 1.5 s per figure\n"
        "what  setting  speed\n"
        "----  -------  -----"
        "\n"
    )
    monkeypatch.setattr(bench_env, "bench_aec", missing("numpy"))
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=1.5, seed=0, json=True))
    assert capsys.readouterr().out == "" and figures["skipped"]["aec"] == "missing dependency: numpy"

    def broken(seconds: float, seed: int) -> dict[str, float]:  # a bug in a benchmark is not a skipped section
        raise AttributeError("'NoneType' object has no attribute 'agents'")

    monkeypatch.setattr(bench_env, "bench_gymnasium", broken)
    with pytest.raises(AttributeError, match="no attribute 'agents'"):
        bench_env.run_benchmark(types.SimpleNamespace(seconds=1.5, seed=0, json=True))


@pytest.mark.parametrize("seconds", [0, -1, 0.0])
def test_run_benchmark_refuses_seconds_that_are_not_positive(seconds: float) -> None:
    with pytest.raises(ValueError, match=rf"^--seconds must be positive, got {float(seconds)}$"):
        bench_env.run_benchmark(types.SimpleNamespace(seconds=seconds, seed=0, json=True))


# --- format_table ----------------------------------------------------------------------------------------


def test_format_table_of_every_section() -> None:
    figures = {
        "game": "star, 2 seats, random legal moves", "seconds": 0.5, "skipped": {},
        "aec": {"turns_per_s": 12345.6, "pettingzoo_performance_benchmark_turns_per_s": 9876.5},
        "gymnasium": {"steps_per_s": 4321.0},
        "torch": {"version": "2.0", "threads": 4},
        "batched": {"cpu": {"64": 150000.0, "64_per_cpu_s": 75000.4, "256": 300000.0},
                    "cpu_1_thread": {"64": 160000.0, "64_per_cpu_s": 160000.0},
                    "cuda": {"4096": 2500000.0}},
        "openspiel": {"turns_per_s": 1234567.0},
    }
    lines = bench_env.format_table(figures).split("\n")
    assert all(line == line.rstrip() for line in lines)  # columns padded to their widest cell, no trailing blanks
    assert lines == [
        "halma bench env: star, 2 seats, random legal moves, 0.5 s per figure",
        "what                        setting                                speed",
        "--------------------------  -------------------------------------  "
        "---------------------------------------------",
        "PettingZoo AEC env          agent_iter loop                        12,346 turns/s",
        "PettingZoo AEC env          pettingzoo.test.performance_benchmark  9,876 turns/s",
        "Gymnasium single-agent      vs random                              4,321 steps/s",
        "batched torch engine        cpu, B=64, 4 threads                   "
        "150,000 game steps/s (75,000 per CPU-second)",
        "batched torch engine        cpu, B=256, 4 threads                  300,000 game steps/s",
        "batched torch engine        cpu, B=64, 1 thread                    "
        "160,000 game steps/s (160,000 per CPU-second)",
        "batched torch engine        cuda, B=4096                           2,500,000 game steps/s",
        "OpenSpiel chinese_checkers  random playout (single hops)           1,234,567 turns/s",
    ]


def test_format_table_without_torch_figures_or_a_pettingzoo_figure() -> None:
    figures = {"game": "g", "seconds": 2.0, "skipped": {}, "aec": {"turns_per_s": 5.0},
               "batched": {"cpu": {"8": 1.0}}}
    assert bench_env.format_table(figures).split("\n") == [
        "halma bench env: g, 2 s per figure",
        "what                  setting          speed",
        "--------------------  ---------------  --------------",
        "PettingZoo AEC env    agent_iter loop  5 turns/s",
        "batched torch engine  cpu, B=8         1 game steps/s",
    ]
