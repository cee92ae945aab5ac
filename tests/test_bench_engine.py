"""``halma bench engine``: its figures are well-formed and its rate estimator reads rounds right."""

import random
import types

from halma_env import bench_engine


def test_rate_reports_best_and_median_round() -> None:
    calls = []

    def work() -> int:
        calls.append(1)
        return 10

    best, median = bench_engine._rate(work, seconds=0.02, round_seconds=0.001)
    assert len(calls) >= 5
    assert best >= median > 0


def test_engine_figures_and_table() -> None:
    figures = bench_engine.engine_figures("star", 2, 0.01, random.Random(0))
    for key in ("move_sets_per_s", "legal_moves_per_s", "playout_plies_per_s"):
        assert figures[key] >= figures[key + "_median"] > 0
    assert 10 < figures["mean_legal_moves"] < 150
    table = bench_engine.format_table({"engine": {"star-2": figures}, "openspiel": "not installed"})
    assert "| star-2 |" in table and "median" in table


def test_openspiel_figures_when_installed() -> None:
    args = types.SimpleNamespace(seed=0, seconds=0.01, json=True)
    figures = bench_engine.run_benchmark(args)
    assert set(figures["engine"]) == {f"{v}-{n}" for v, n in bench_engine.CASES}
    if isinstance(figures["openspiel"], str):
        assert "not installed" in figures["openspiel"]
    else:
        for f in figures["openspiel"].values():
            assert f["ratio_move_sets"] > 0 and f["random_turns_per_s"] >= f["random_turns_per_s_median"]
