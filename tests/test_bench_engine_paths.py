"""``halma bench engine`` (``halma_env/bench_engine.py``) with its clock and its measurements replaced:
what it measures (which games, how many positions, how long the playouts), how its rounds are read,
what it reports and prints, and OpenSpiel's move sets checked against this engine's own."""

from __future__ import annotations

import random
import sys
import types
from typing import Any

import pytest

from halma_env import bench_engine
from halma_env.game import Game
from halma_env.rules import Rules
from tests.engine_helpers import position

# --- helpers ---------------------------------------------------------------------------------------------


class RecordingRandom(random.Random):
    """A seeded ``random.Random`` that records the bounds and the result of every ``randint``."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.randints: list[tuple[int, int]] = []
        self.drawn: list[int] = []

    def randint(self, a: int, b: int) -> int:
        self.randints.append((a, b))
        self.drawn.append(super().randint(a, b))
        return self.drawn[-1]


class FakeClock:
    """A process clock that only moves when told to (binary fractions: sums stay exact)."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def process_time(self) -> float:
        return self.now


def one_round_rate(calls: list[tuple[float, int]]):
    """A stand-in for ``_rate``: does the work once, records (seconds, items done) and reports
    the items as the best round and half of them as the median."""

    def rate(work, seconds: float, round_seconds: float = 0.005) -> tuple[float, float]:
        done = work()
        calls.append((seconds, done))
        return float(done), done / 2

    return rate


ENGINE_KEYS = {"move_sets_per_s", "legal_moves_per_s", "playout_plies_per_s", "move_sets_per_s_median",
               "legal_moves_per_s_median", "playout_plies_per_s_median", "mean_legal_moves"}
OPENSPIEL_KEYS = {"random_turns_per_s", "derived_move_sets_per_s", "random_turns_per_s_median",
                  "derived_move_sets_per_s_median"}


# --- _rate: rounds of process CPU time ----------------------------------------------------------------


def _clocked_work(monkeypatch, counts: list[int], tick: float = 0.125):
    clock = FakeClock()
    monkeypatch.setattr(bench_engine, "time", types.SimpleNamespace(process_time=clock.process_time))
    done: list[int] = []

    def work() -> int:
        clock.now += tick
        done.append(counts[len(done) % len(counts)])
        return done[-1]

    return work, done


def test_rate_runs_five_rounds_at_least_and_reports_the_best_and_the_median(monkeypatch) -> None:
    # two calls of 1/8 s make a round of 1/4 s: rounds do 1+2, 3+4, ... items, 12, 28, 44, 60, 76 a second
    work, done = _clocked_work(monkeypatch, list(range(1, 11)))
    best, median = bench_engine._rate(work, seconds=0.0, round_seconds=0.25)
    assert done == list(range(1, 11))  # five rounds exactly, two calls each
    assert (best, median) == (76.0, 44.0)


def test_rate_runs_rounds_until_the_seconds_are_spent(monkeypatch) -> None:
    # rounds in decreasing order: the best is the first, the median the sorted middle
    work, done = _clocked_work(monkeypatch, list(range(16, 0, -1)))
    best, median = bench_engine._rate(work, seconds=2.0, round_seconds=0.25)
    assert len(done) == 16  # 2 s of 1/4 s rounds: eight rounds, not a ninth
    rates = sorted((done[i] + done[i + 1]) / 0.25 for i in range(0, 16, 2))
    assert (best, median) == (rates[-1], rates[4]) == (124.0, 76.0)


def test_rate_round_ends_as_soon_as_its_time_is_reached(monkeypatch) -> None:
    work, done = _clocked_work(monkeypatch, [3], tick=0.25)
    assert bench_engine._rate(work, seconds=0.0, round_seconds=0.25) == (12.0, 12.0)
    assert len(done) == 5  # one call per round: its 1/4 s already makes the round


# --- sample_positions and engine_figures -------------------------------------------------------------------


def test_sample_positions_are_running_games_20_to_80_random_plies_in() -> None:
    rng = RecordingRandom(3)
    games = bench_engine.sample_positions(Rules("diamond", 2), 12, rng)
    assert len(games) == 12 and len(rng.randints) == 12
    assert set(rng.randints) == {(20, 80)}
    assert all(not g.is_over and g.rules.variant == "diamond" for g in games)
    assert [g.ply for g in games] == rng.drawn  # each as many plies in as drawn


def test_engine_figures_measure_200_positions_and_2000_ply_playouts(monkeypatch) -> None:
    calls: list[tuple[float, int]] = []
    monkeypatch.setattr(bench_engine, "_rate", one_round_rate(calls))
    sampled: list[list[Game]] = []
    playouts: list[tuple[str, int, int | None, int]] = []
    real_sample, real_playout = bench_engine.sample_positions, bench_engine.random_playout

    def sample(rules: Rules, count: int, rng: random.Random) -> list[Game]:
        sampled.append(real_sample(rules, count, rng))
        return sampled[-1]

    def playout(game: Game, rng: random.Random, max_plies: int | None = None) -> int:
        plies = real_playout(game, rng, max_plies=max_plies)
        playouts.append((game.rules.variant, game.rules.num_players, max_plies, plies))
        return plies

    monkeypatch.setattr(bench_engine, "sample_positions", sample)
    monkeypatch.setattr(bench_engine, "random_playout", playout)
    figures = bench_engine.engine_figures("star", 3, 0.75, random.Random(1))
    (games,) = sampled
    assert len(games) == 200 and all(g.rules.num_players == 3 for g in games)
    # move sets, legal_moves() lists (both one per position), then one playout's plies
    assert calls == [(0.75, 200), (0.75, 200), (0.75, playouts[-1][3])]
    assert playouts[-1] == ("star", 3, 2000, 2000)  # random games run on: the cap is what stops them
    assert set(figures) == ENGINE_KEYS
    assert (figures["move_sets_per_s"], figures["move_sets_per_s_median"]) == (200.0, 100.0)
    assert (figures["legal_moves_per_s"], figures["legal_moves_per_s_median"]) == (200.0, 100.0)
    assert (figures["playout_plies_per_s"], figures["playout_plies_per_s_median"]) == (2000.0, 1000.0)
    assert figures["mean_legal_moves"] == sum(g.count_moves() for g in games) / 200


def test_each_games_sample_positions_do_not_depend_on_how_many_playouts_the_last_one_timed(monkeypatch) -> None:
    """The timed playouts draw from the generator as often as the machine's speed allows, and one generator
    was shared by the games: a later game's sample positions, and so its mean legal moves, changed with the
    speed (star-3 47.3 on one machine, 46.8 on another). Each game now has its own, from the seed."""
    monkeypatch.setitem(sys.modules, "pyspiel", None)

    def run(playouts_per_rate: int) -> dict:
        def rate(work, seconds: float, round_seconds: float = 0.005) -> tuple[float, float]:
            done = sum(work() for _ in range(playouts_per_rate))
            return float(done), float(done)

        monkeypatch.setattr(bench_engine, "_rate", rate)
        args = types.SimpleNamespace(seed=0, seconds=0.01, json=True)
        return {game: f["mean_legal_moves"] for game, f in bench_engine.run_benchmark(args)["engine"].items()}

    assert run(1) == run(3)


# --- OpenSpiel -------------------------------------------------------------------------------------------


def test_openspiel_figures_are_none_without_pyspiel(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    assert bench_engine.openspiel_figures(2, 0.01, random.Random(0)) is None


def test_an_open_spiel_without_chinese_checkers_counts_as_missing(monkeypatch) -> None:
    """open-spiel before 1.6.13 has no chinese_checkers: both benches leave the peer out, naming why, where
    load_game raised pyspiel's 'Unknown game'."""
    import pyspiel

    from halma_env.envs import bench as bench_env

    monkeypatch.setattr(pyspiel, "registered_names", lambda: ["chess", "go"])
    assert bench_engine.openspiel_figures(2, 0.01, random.Random(0)) is None
    with pytest.raises(ImportError, match="came with open-spiel 1.6.13") as missing:
        bench_engine.openspiel_checkers()
    assert missing.value.name == "open_spiel>=1.6.13"
    for name in ("bench_aec", "bench_gymnasium", "bench_batched"):
        monkeypatch.setattr(bench_env, name, lambda *a: {})
    figures = bench_env.run_benchmark(types.SimpleNamespace(seconds=0.01, seed=0, json=True, device="cpu"))
    assert figures["skipped"]["openspiel"] == "missing dependency: open_spiel>=1.6.13"


class CountingState:
    """An OpenSpiel state that counts the actions applied to it (its clones are plain states)."""

    applied = 0

    def __init__(self, state: Any) -> None:
        self._state = state

    def apply_action(self, action: int) -> None:
        CountingState.applied += 1
        self._state.apply_action(action)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)


def test_openspiel_figures_count_the_turns_played_and_100_running_positions(monkeypatch) -> None:
    import pyspiel
    loaded: list[tuple[str, dict]] = []
    created: list[CountingState] = []
    real_load = pyspiel.load_game

    def load_game(name: str, params: dict) -> Any:
        loaded.append((name, params))
        game = real_load(name, params)

        def new_initial_state() -> CountingState:
            created.append(CountingState(game.new_initial_state()))
            return created[-1]

        return types.SimpleNamespace(new_initial_state=new_initial_state)

    monkeypatch.setattr(pyspiel, "load_game", load_game)
    monkeypatch.setattr(CountingState, "applied", 0)
    calls: list[tuple[float, int]] = []
    applied: list[int] = []
    rate = one_round_rate(calls)

    def counting_rate(work, seconds: float) -> tuple[float, float]:
        before = CountingState.applied
        out = rate(work, seconds)
        applied.append(CountingState.applied - before)
        return out

    monkeypatch.setattr(bench_engine, "_rate", counting_rate)
    rng = RecordingRandom(2)
    figures = bench_engine.openspiel_figures(3, 0.5, rng)
    assert loaded == [("chinese_checkers", {"players": 3})]
    assert figures is not None and set(figures) == OPENSPIEL_KEYS
    # the sampled positions: 100 running ones, each 20-80 random turns in
    samples = created[:-1]
    assert len(rng.randints) == len(samples) == 100 and set(rng.randints) == {(20, 80)}
    assert all(not s.is_terminal() for s in samples)
    # the playout: a new game played to its end, every turn counted
    (turns_seconds, turns), (derived_seconds, derived) = calls
    assert turns == applied[0] > 0 and created[-1].is_terminal()
    assert applied[1] == 0 and derived == 100  # move sets derived from the 100 positions, on clones
    assert (turns_seconds, derived_seconds) == (0.5, 0.5)
    assert (figures["random_turns_per_s"], figures["random_turns_per_s_median"]) == (turns, turns / 2)
    assert (figures["derived_move_sets_per_s"], figures["derived_move_sets_per_s_median"]) == (100.0, 50.0)


def _our_moves(owner: list[int], to_move: int) -> set[tuple[int, int]]:
    text = position("star", 2, {h: str(o) for h, o in enumerate(owner) if o >= 0}, to_move)
    return {(m.src, m.dst) for m in Game.from_position(text).legal_moves()}


# holes are numbered alike (row by row, 121 of them); OpenSpiel's player 0 starts on top, as seat 1 does here
def test_openspiel_move_sets_are_this_engines_legal_moves() -> None:
    import pyspiel
    game = pyspiel.load_game("chinese_checkers", {"players": 2})
    owner = [1 if h < 10 else 0 if h > 110 else -1 for h in range(121)]
    state = game.new_initial_state()
    assert bench_engine.openspiel_move_set(state) == _our_moves(owner, 1) and len(_our_moves(owner, 1)) == 14
    rng = random.Random(0)
    compared = 0
    for _ in range(160):  # whole moves and hop chains: a turn of OpenSpiel's is one step or one hop
        player = state.current_player()
        action = rng.choice(state.legal_actions())
        text = state.action_to_string(action)
        state.apply_action(action)
        for sep in ("->", "=>"):
            if sep in text:
                a, b = map(int, text.split(sep))
                owner[a], owner[b] = -1, owner[a]
        if state.current_player() != player:  # a new move begins
            moves = bench_engine.openspiel_move_set(state)
            assert moves == _our_moves(owner, 1 - state.current_player())
            compared += 1
    assert compared > 100


# --- run_benchmark and its table ------------------------------------------------------------------------


def _fake_engine_figures(calls: list[tuple[str, int, float, float]]):
    def engine_figures(variant: str, seats: int, seconds: float, rng: random.Random) -> dict[str, float]:
        calls.append((variant, seats, seconds, rng.random()))
        return {key: 10.0 * seats for key in ENGINE_KEYS}

    return engine_figures


def test_run_benchmark_measures_five_games_and_openspiel_at_2_3_and_6_seats(monkeypatch, capsys) -> None:
    engine_calls: list[tuple[str, int, float, float]] = []
    openspiel_calls: list[tuple[int, float]] = []

    def openspiel_figures(seats: int, seconds: float, rng: random.Random) -> dict[str, float]:
        openspiel_calls.append((seats, seconds))
        return {"random_turns_per_s": 7.0, "derived_move_sets_per_s": 4.0 * seats,
                "random_turns_per_s_median": 6.0, "derived_move_sets_per_s_median": 3.0}

    monkeypatch.setattr(bench_engine, "engine_figures", _fake_engine_figures(engine_calls))
    monkeypatch.setattr(bench_engine, "openspiel_figures", openspiel_figures)
    figures = bench_engine.run_benchmark(types.SimpleNamespace(seed=5, seconds=0.25, json=True))
    assert capsys.readouterr().out == ""  # --json: the caller prints the figures
    assert [c[:3] for c in engine_calls] == [("star", 2, 0.25), ("star", 3, 0.25), ("star", 6, 0.25),
                                            ("diamond", 2, 0.25), ("halma16", 2, 0.25)]
    # a generator per game, seeded with --seed and the game (so no game's draws move another's)
    assert [c[3] for c in engine_calls] == [random.Random(f"5:{v}-{n}").random() for v, n, _ in
                                            [c[:3] for c in engine_calls]]
    assert openspiel_calls == [(2, 0.25), (3, 0.25), (6, 0.25)]
    assert list(figures) == ["engine", "openspiel"]
    assert list(figures["engine"]) == ["star-2", "star-3", "star-6", "diamond-2", "halma16-2"]
    assert figures["engine"]["star-6"] == {key: 60.0 for key in ENGINE_KEYS}
    assert list(figures["openspiel"]) == ["star-2", "star-3", "star-6"]
    # ours / derived: the move sets per second of the same seat count, of the engine and derived from OpenSpiel
    assert figures["openspiel"]["star-3"] == {"random_turns_per_s": 7.0, "derived_move_sets_per_s": 12.0,
                                              "random_turns_per_s_median": 6.0,
                                              "derived_move_sets_per_s_median": 3.0, "ratio_move_sets": 2.5}
    assert [figures["openspiel"][f"star-{n}"]["ratio_move_sets"] for n in (2, 6)] == [2.5, 2.5]


def test_run_benchmark_without_openspiel_says_how_to_install_it_and_prints_the_table(monkeypatch, capsys) -> None:
    engine_calls: list[tuple[str, int, float, float]] = []
    asked: list[int] = []

    def openspiel_figures(seats: int, seconds: float, rng: random.Random) -> None:
        asked.append(seats)

    monkeypatch.setattr(bench_engine, "engine_figures", _fake_engine_figures(engine_calls))
    monkeypatch.setattr(bench_engine, "openspiel_figures", openspiel_figures)
    figures = bench_engine.run_benchmark(types.SimpleNamespace(seed=0, seconds=0.5, json=False))
    assert asked == [2]  # asked once, not again for 3 and 6 seats
    assert figures["openspiel"] == "not installed (pip install open-spiel)"
    assert len(figures["engine"]) == 5
    out = capsys.readouterr().out
    assert out == bench_engine.format_table(figures) + "\n"
    assert out.endswith("| halma16-2 | 20 (20) | 20 (20) | 20 (20) | 20.0 |\n\n"
                        "OpenSpiel: not installed (pip install open-spiel)\n")


def test_format_table_of_both_sections() -> None:
    engine = {"move_sets_per_s": 123456.7, "move_sets_per_s_median": 98765.4, "legal_moves_per_s": 5432.1,
              "legal_moves_per_s_median": 4321.0, "playout_plies_per_s": 65432.0,
              "playout_plies_per_s_median": 54321.9, "mean_legal_moves": 37.25}
    openspiel = {"random_turns_per_s": 234567.0, "random_turns_per_s_median": 200000.4,
                 "derived_move_sets_per_s": 3456.0, "derived_move_sets_per_s_median": 3000.0,
                 "ratio_move_sets": 35.72}
    table = bench_engine.format_table({"engine": {"star-2": engine, "diamond-2": engine},
                                       "openspiel": {"star-2": openspiel}})
    assert table == "\n".join([
        "Per second of one core's CPU time: the best round of ~5 ms (the median round in brackets).",
        "",
        "| game | full move sets/s | legal_moves() lists/s | random playout plies/s | mean legal moves |",
        "|---|---:|---:|---:|---:|",
        "| star-2 | 123,457 (98,765) | 5,432 (4,321) | 65,432 (54,322) | 37.2 |",
        "| diamond-2 | 123,457 (98,765) | 5,432 (4,321) | 65,432 (54,322) | 37.2 |",
        "",
        "| OpenSpiel chinese_checkers | random turns/s | move sets/s derived from it | ours / derived |",
        "|---|---:|---:|---:|",
        "| star-2 | 234,567 (200,000) | 3,456 (3,000) | 35.7x |",
    ])
