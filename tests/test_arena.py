"""The arena (``halma eval``): seat schedule, reproducibility, parallel play, ratings, records, CLI."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents import arena
from agents.arena import cycle_length, play_game, run_solo, run_tournament, schedule
from agents.cli import main as cli_main
from agents.ratings import Rating, competition_ranks, mean_interval, rate_games, wilson_interval
from halma_env import Game, Rules
from halma_env.records import GameRecord, load_record
from tests.arena_helpers import made_game

STAR2 = str(Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / "star2.pt")

# --- the seat schedule ---------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(1, 2), (2, 2), (3, 3), (4, 4), (6, 6), (2, 3), (2, 6), (4, 6), (3, 2), (5, 3)])
def test_schedule_balances_seats_starts_and_first_seat(k: int, n: int) -> None:
    games = cycle_length(k, n) * 2
    lineups = schedule(k, n, games)
    assert len(lineups) == games
    seat_count = Counter()
    starts = Counter()
    first = Counter()
    played = Counter()
    for lu in lineups:
        assert len(lu.seats) == n and all(0 <= p < k for p in lu.seats)
        if k >= n:
            assert len(set(lu.seats)) == n  # nobody holds two seats when there are enough players
        else:
            assert set(lu.seats) == set(range(k))  # everyone plays, round robin
        for j, p in enumerate(lu.seats):
            seat_count[p, j] += 1
        starts[lu.starter] += 1
        first[lu.first_seat] += 1
        for p in set(lu.seats):
            played[p] += 1
    # every player on every seat equally often, and starting equally often
    assert len({seat_count[p, j] for p in range(k) for j in range(n)}) == 1
    assert len({starts[p] for p in range(k)}) == 1
    assert len({first[s] for s in range(n)}) == 1
    assert len({played[p] for p in range(k)}) == 1


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_every_block_of_k_games_is_balanced(k: int) -> None:
    # the unit is a block of k games: a 60-game 3-seat match is balanced although 60 % 9 != 0
    lineups = schedule(k, k, 60)
    for b in range(0, 60 - k + 1, k):
        block = lineups[b : b + k]
        assert {lu.starter for lu in block} == set(range(k))
        for j in range(k):
            assert {lu.seats[j] for lu in block} == set(range(k))


def test_schedule_rotates_turn_order_with_three_players() -> None:
    # who moves after whom changes too, not only the seats
    follows = Counter()
    for lu in schedule(3, 3, cycle_length(3, 3) * 2):
        for j in range(3):
            follows[lu.seats[j], lu.seats[(j + 1) % 3]] += 1
    assert len(follows) == 6 and len(set(follows.values())) == 1


def test_two_players_alternate_on_six_seats() -> None:
    lineups = schedule(2, 6, 2)
    assert lineups[0].seats == (0, 1, 0, 1, 0, 1)
    assert lineups[1].seats == (1, 0, 1, 0, 1, 0)


def test_schedule_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="at least one player"):
        schedule(0, 2, 4)
    with pytest.raises(ValueError, match="games must be"):
        schedule(2, 2, -1)
    with pytest.raises(ValueError, match="at least one seat"):
        schedule(2, 0, 4)
    assert schedule(1, 1, 2) == [arena.Lineup((0,), 0)] * 2 and schedule(2, 2, 0) == []
    # checked when asked, not at the first game drawn (a generator's body runs only then)
    for players, seats in ((0, 2), (2, 0)):
        with pytest.raises(ValueError, match="at least one"):
            schedule(players, seats, 0)
        with pytest.raises(ValueError, match="at least one"):
            arena.iter_schedule(players, seats)


# --- statistics -------------------------------------------------------------------------------------


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-3)
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-3), pytest.approx(0.7634, abs=1e-3))
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_shuffled_ratings_do_not_depend_on_game_order() -> None:
    # player 0 wins the first 6 games, player 1 the last 4: online updates favour the recent
    # winner, the shuffle-averaged rating favours the player with more wins whatever the order
    games = [[(0, 1), (1, 2)]] * 6 + [[(0, 2), (1, 1)]] * 4
    online = rate_games(2, games)
    assert online[1].mu > online[0].mu
    a = rate_games(2, games, shuffles=20, seed=1)
    b = rate_games(2, games[::-1], shuffles=20, seed=1)
    assert a == b and a[0].mu > a[1].mu


def test_ratings_respect_places_and_ties() -> None:
    assert competition_ranks([1, 2, 2, 4]) == [1, 2, 2, 4]
    assert competition_ranks([1.5, 1.5]) == [1, 1]
    # player 0 always first, 1 and 2 tie behind it: 0 on top, 1 and 2 equal
    r = rate_games(3, [[(0, 1), (1, 2), (2, 2)]] * 5)
    assert r[0].ordinal > r[1].ordinal
    assert r[1].mu == pytest.approx(r[2].mu) and r[1].sigma == pytest.approx(r[2].sigma)


# --- games and tournaments ----------------------------------------------------------------------------


class _Scripted:
    """Plays the first legal move, or an illegal one on request (to test forfeits)."""

    def __init__(self, name: str = "scripted", illegal: bool = False) -> None:
        self.name = name
        self.illegal = illegal

    def select_move(self, game: Game, time_budget: float | None = None):
        return (0, 0) if self.illegal else game.legal_moves()[0]


def test_play_game_records_a_replayable_game() -> None:
    res = play_game(Rules("star", 2), ["greedy", "random"], seed=5, keep_record=True, max_plies=600)
    assert res.end_reason == "finished" and res.places == [1, 2] and res.player_places == {0: 1, 1: 2}
    assert res.plies == len(res.moves) == sum(res.move_count)
    game = GameRecord.from_dict(res.record).replay()
    assert game.places == [1, 2] and [str(m) for m in game.moves] == res.moves


def test_forfeit_and_cap() -> None:
    res = play_game(Rules("star", 2), [_Scripted(illegal=True), _Scripted()], keep_record=True)
    assert res.end_reason == "resign" and res.places == [2, 1]
    assert res.forfeits and res.forfeits[0]["seat"] == 0 and res.moves == ["resign:0"]
    res = play_game(Rules("star", 3), ["random"] * 3, seed=1, max_plies=30, keep_record=True)
    assert res.end_reason == "max_plies" and res.places == [1, 1, 1] and res.plies == 30
    assert not res.decided
    res = play_game(Rules("star", 3), ["greedy", "random", "random"], seed=1, max_plies=30, cap_outcome="progress")
    # ranked by progress: greedy has gone furthest after 10 moves each
    assert res.end_reason == "max_plies" and res.places[0] == 1 and set(res.places[1:]) <= {2, 3}


def test_same_seed_same_games_and_parallel_equals_serial() -> None:
    rules = Rules("star", 3)
    kw = dict(seed=11, max_plies=40)
    a = run_tournament(["random", "random", "random"], rules, 6, workers=1, **kw)
    b = run_tournament(["random", "random", "random"], rules, 6, workers=2, **kw)
    c = run_tournament(["random", "random", "random"], rules, 6, workers=1, seed=12, max_plies=40)
    assert [g.moves for g in a.games] == [g.moves for g in b.games]
    assert [g.places for g in a.games] == [g.places for g in b.games]
    assert a.to_dict()["ratings"] == b.to_dict()["ratings"]
    assert [g.moves for g in a.games] != [g.moves for g in c.games]
    assert [g.first_seat for g in a.games] == [0, 0, 0, 1, 1, 1]


def test_lopsided_match_orders_ratings() -> None:
    res = run_tournament(["random", "greedy"], Rules("star", 2), 4, seed=0, max_plies=600)
    r = res.ratings()
    assert r[1].ordinal > r[0].ordinal and r[1].mu > r[0].mu
    pw = res.pairwise()
    assert pw[1][0]["rate"] == 1.0 and pw[0][1]["rate"] == 0.0
    stats = res.player_stats()
    assert stats[1]["seat_counts"] == [2, 2] and stats[1]["starts"] == 2
    assert res.summary()["finish_rate"] == 1.0
    md = res.markdown()
    assert md.index("| greedy |") < md.index("| random |")  # sorted by rating


def test_shared_seats_rank_by_mean_place() -> None:
    res = run_tournament(["greedy", "random"], Rules("star", 4), 2, seed=0, max_plies=200)
    for g in res.games:
        assert g.seats in ([0, 1, 0, 1], [1, 0, 1, 0])
        for p in (0, 1):
            mine = [g.places[s] for s in range(4) if g.seats[s] == p]
            assert g.player_places[p] == sum(mine) / 2


# --- the command --------------------------------------------------------------------------------------


def test_cli_writes_results_and_replayable_records(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    rc = cli_main(["eval", "greedy", "random", "--games", "4", "--seed", "2", "--workers", "1", "--quiet",
                   "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "| greedy |" in text and "Finish rate" in text
    data = json.loads((out / "results.json").read_text())
    assert data["summary"]["games"] == 4 and set(data["ratings"]) == {"greedy", "random"}
    from importlib.metadata import version  # the ratings need openskill's version to be reproduced

    assert data["versions"]["openskill"] == version("openskill") and data["versions"]["halma_env"]
    assert (out / "results.md").read_text().startswith("### star, 2 seats")
    assert (out / "results.png").stat().st_size > 1000
    again = arena.load_results(str(out / "results.json"))  # re-reporting a saved run gives the same tables
    assert again.markdown() == (out / "results.md").read_text().rstrip("\n")
    records = sorted((out / "games").glob("game_*.json"))
    assert len(records) == 4
    for path, g in zip(records, data["games"]):
        rec = load_record(path)
        game = rec.replay()  # checks the stored outcome too
        assert [str(m) for m in game.moves] == g["moves"]
        assert rec.metadata["arena"]["seat_players"] == g["seats"]
        assert rec.rules.first_seat == g["first_seat"]
        assert rec.players == tuple(["greedy", "random"][p] for p in g["seats"])


@pytest.mark.parametrize(
    "argv,message",
    [
        (["nosuchbot", "random"], "nosuchbot"),
        (["greedy", "random", "--variant", "diamond", "--seats", "4"], "diamond is played by 2, 3 seats"),
        (["greedy", "random", "--seats", "7"], "star is played by"),
        (["greedy", "random", "--rule", "nosuch=1"], "unknown rule option 'nosuch'"),
        (["greedy", "random", "--rule", "move_limit=-3"], "move_limit must be at least 1"),
        (["greedy", "random", "--rule", "anti_blocking"], "KEY=VALUE"),
        (["greedy", "random", "--rule", "first_seat=1"], "first_seat is rotated"),
        (["greedy", "random", "--variant", "diamond", "--preset", "kawu"], "star rule set"),
        (["greedy", "random", "--games", "0"], "--games must be 1..10,000,000"),
        ([], "name at least one player"),
        (["greedy", "--solo", "greedy"], "--solo takes one agent"),
        (["--solo", "nosuchbot"], "nosuchbot"),
        (["greedy", "random", "--seats", "1"], "--solo"),
        ([STAR2, "random", "greedy"], "plays star with 2 seats, not star with 3"),  # the default: 3 players, 3 seats
        ([STAR2, "random", "--variant", "diamond"], "plays star with 2 seats, not diamond with 2"),
        (["greedy", "random", "--out", "/dev/null/results"], "cannot write --out"),
    ],
)
def test_cli_bad_input_exits_2(argv, message, capsys) -> None:
    assert cli_main(["eval", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "error" in err


def test_cli_a_missing_model_is_not_blamed_on_the_game(tmp_path, monkeypatch, capsys) -> None:
    """A ladder level whose model file is gone: the error names the file and does not send the user to
    --variant/--seats (which would not help)."""
    import json

    ladder = tmp_path / "ladder.json"
    ladder.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": {
        "variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "gone.onnx", "rating": 1.0}]}}}))
    monkeypatch.setenv("HALMA_LADDER", str(ladder))
    assert cli_main(["eval", "ladder:easy", "greedy", "--games", "2", "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "player 'ladder:easy' cannot play star with 2 seats" in err and "gone.onnx' does not exist" in err
    assert "--variant" not in err


def test_cli_rule_options_and_preset_reach_the_games(capsys) -> None:
    rc = cli_main(["eval", "random", "random", "--games", "2", "--workers", "1", "--quiet", "--rule", "move_limit=10",
                   "--rule", "limit_outcome=progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "move_limit=10" in text and "end reasons: move_limit 2" in text
    rc = cli_main(["eval", "random", "random", "--games", "2", "--workers", "1", "--quiet", "--preset", "kawu",
                   "--rule", "move_limit=12"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "play_to_end=False" in text and "move_limit=12" in text


def test_solo(tmp_path, capsys) -> None:
    res = run_solo("greedy", 1, seed=0)
    d = res.to_dict()
    assert d["games"] == 1 and d["optimum"] == 27
    assert d["finished"] == 1 and d["best"] >= 27  # nobody beats the proven optimum
    rc = cli_main(["eval", "--solo", "random", "--max-plies", "20", "--out", str(tmp_path)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "Solitaire crossing" in text and "| random | 1 | 0/1 |" in text and "| 27 |" in text
    rec = load_record(tmp_path / "games" / "game_00000.json")
    assert rec.rules.num_players == 1 and len(rec.replay().moves) == 20
    assert json.loads((tmp_path / "solo.json").read_text())["finished"] == 0
    before = (tmp_path / "solo.json").read_bytes()
    # the same --out again: refused before any game, the old results untouched
    assert cli_main(["eval", "--solo", "greedy", "--max-plies", "20", "--out", str(tmp_path)]) == 2
    assert "already holds results (solo.json, games)" in capsys.readouterr().err
    assert (tmp_path / "solo.json").read_bytes() == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--variant", "diamond"], "--solo is the star solitaire (1 seat, default rules); drop --variant"),
        (["--workers", "2"], "--solo plays its games one after another and has no opponents' places to settle: "
                             "drop --workers"),
        (["--workers", "1", "--cap-outcome", "draw"], "drop --workers/--cap-outcome"),
        (["--cap-outcome", "progress"], "settle: drop --cap-outcome"),
    ],
)
def test_solo_refuses_the_flags_of_a_match(tmp_path, capsys, flags: list[str], message: str) -> None:
    """Not silently ignored: a solitaire has no workers pool and no places to settle at the cap."""
    assert cli_main(["eval", "--solo", "greedy", *flags, "--out", str(tmp_path / "o")]) == 2
    out, err = capsys.readouterr()
    assert message in err and out == "", err
    assert not (tmp_path / "o").exists()


def test_json_is_strict_without_nan(tmp_path) -> None:
    # one player playing itself has no opponents: its score is undefined and written as null
    res = run_tournament(["random"], Rules("star", 2), 2, seed=0, max_plies=10)
    res.save(str(tmp_path))
    data = json.loads((tmp_path / "results.json").read_text(), parse_constant=lambda c: pytest.fail(c))
    assert data["summary"]["finish_rate"] == 0.0
    assert data["players_stats"][0]["score"] is None


class _Broken:
    name = "broken"

    def select_move(self, game: Game, time_budget: float | None = None):
        raise KeyError("bug")


def test_player_errors_are_not_hidden() -> None:
    with pytest.raises(RuntimeError, match=r"game 3 .*'broken' on seat 1 raised KeyError"):
        play_game(Rules("star", 2), [_Scripted(), _Broken()], index=3, names=["scripted", "broken"])


def test_time_per_move_is_measured_against_the_budget(monkeypatch) -> None:
    """On the arena's own clock, advanced by the players (a real one let a pause of the test process, a garbage
    collection of a second or two in a long CI run, push the instant player over its 50 ms)."""
    clock = [100.0]
    monkeypatch.setattr(arena, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    class Slow(_Scripted):
        def select_move(self, game: Game, time_budget: float | None = None):
            assert time_budget == 0.05  # the budget reaches the player
            clock[0] += 0.1
            return game.legal_moves()[0]

    res = play_game(Rules("star", 2), [Slow(), _Scripted()], time_budget=0.05, max_plies=4)
    assert res.move_count == [2, 2] and res.over_budget == [2, 0]
    assert res.move_time == [pytest.approx(0.2), 0.0] and res.max_move_time == [pytest.approx(0.1), 0.0]


# --- the statistics against hand computations (audit) --------------------------------------------



def _result(players: list[str], seats: int, games: list[arena.GameResult]) -> arena.TournamentResult:
    return arena.TournamentResult(players, players, Rules("star", seats).to_dict(), games, 0, None, 300)


def test_score_vs_field_interval_counts_games_not_comparisons() -> None:
    # 12 three-seat games, player 0 first in each: 24 comparisons against the field, but only 12
    # independent games; the interval must be the one of 12 games (the comparisons of one game are not
    # independent trials), the estimate is unchanged
    lineups = schedule(3, 3, 12)
    games = [made_game(g, list(lu.seats), [{0: 1, 1: 2, 2: 3}[p] for p in lu.seats]) for g, lu in enumerate(lineups)]
    st = _result(["a", "b", "c"], 3, games).player_stats()
    assert st[0]["score"] == 1.0 and st[0]["opponent_games"] == 24 and st[0]["score_games"] == 12
    assert (st[0]["score_low"], st[0]["score_high"]) == wilson_interval(12, 12)
    assert st[1]["score"] == 0.5 and (st[1]["score_low"], st[1]["score_high"]) == wilson_interval(6, 12)
    # two players on four seats: one opponent per game, so games and comparisons agree
    games = [made_game(g, [0, 1, 0, 1] if g % 2 == 0 else [1, 0, 1, 0], [1, 2, 3, 4]) for g in range(4)]
    st = _result(["a", "b"], 4, games).player_stats()
    assert st[0]["score"] == 0.5 and st[0]["score_games"] == 4  # mean places 2 vs 3, then 3 vs 2
    assert (st[0]["score_low"], st[0]["score_high"]) == wilson_interval(2, 4)


def test_no_decided_game_prints_na_not_nan() -> None:
    games = [made_game(g, [g % 2, 1 - g % 2], [1, 1], end_reason="max_plies") for g in range(2)]
    md = _result(["a", "b"], 2, games).markdown()
    assert "nan" not in md and "decided games: n/a" in md


def test_a_player_without_games_has_no_mean_place() -> None:
    # three players on two seats, one game: the third never plays, its mean place is n/a, not "nan [nan, nan]"
    md = _result(["a", "b", "c"], 2, [made_game(0, [0, 1], [1, 2])]).markdown()
    row = next(line for line in md.splitlines() if line.startswith("| c |"))
    assert "nan" not in md
    assert row.split(" | ")[4] == "n/a"
    row_a = next(line for line in md.splitlines() if line.startswith("| a |"))
    assert row_a.split(" | ")[4] == "1.00 [1.00, 1.00]"


def test_labels_stay_distinct() -> None:
    assert arena.unique_labels(["greedy", "greedy", "greedy"]) == ["greedy", "greedy#2", "greedy#3"]
    labels = arena.unique_labels(["greedy", "greedy", "greedy#2"])
    assert len(set(labels)) == 3


def test_turn_order_balances_over_the_cyclic_orders() -> None:
    # who moves after whom is balanced only after (m-1)! cycles of seats and starts (docs/evaluation.md)
    def follows(k: int, n: int, games: int) -> Counter:
        c: Counter = Counter()
        for lu in schedule(k, n, games):
            for j in range(n):
                c[lu.seats[j], lu.seats[(j + 1) % n]] += 1
        return c

    assert len(follows(3, 3, cycle_length(3, 3))) == 3  # one cyclic order only
    full = follows(3, 3, 2 * cycle_length(3, 3))
    assert len(full) == 6 and len(set(full.values())) == 1
    full = follows(4, 4, 6 * cycle_length(4, 4))
    assert len(full) == 12 and len(set(full.values())) == 1


def test_worker_processes_give_torch_one_thread() -> None:
    """With --workers N each process plays one game at a time: a checkpoint player's torch must not
    take the cores of the other workers' games (a time-limited bot's among them)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    for first in ("", "import torch; "):  # torch not imported yet, or already (a caller's main module)
        code = (f"{first}import sys; from agents.workers import one_thread_per_worker; "
                "one_thread_per_worker(); import torch; print(torch.get_num_threads())")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        assert out.stdout.strip() == "1", first


def test_mean_place_interval_stays_among_the_possible_places() -> None:
    """A normal interval around 1.11 over nine games reached 0.89; places lie in 1..seats."""
    places = [1, 1, 1, 1, 1, 1, 1, 1, 2]
    mean, low, high = mean_interval(places)
    assert low < 1 < high  # the plain normal interval
    assert mean_interval(places, bounds=(1, 3)) == (mean, 1, high)
    assert mean_interval([3, 3, 2], bounds=(1, 3))[2] == 3


# --- ratings and intervals against hand computations (mutation audit) -------------------------------


def _wilson_by_hand(x: float, n: int) -> tuple[float, float]:
    """docs/evaluation.md's formula, written out: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = 1.959963984540054
    p = x / n
    centre = p + z**2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return ((centre - spread) / (1 + z**2 / n), (centre + spread) / (1 + z**2 / n))


@pytest.mark.parametrize("x,n", [(1, 1), (1, 10), (3, 7), (2.5, 4), (9, 10), (0.5, 1), (17.5, 30)])
def test_wilson_interval_matches_the_formula(x: float, n: int) -> None:
    lo, hi = wilson_interval(x, n)
    by_hand = _wilson_by_hand(x, n)
    if x == n:
        assert (lo, hi) == (pytest.approx(by_hand[0], abs=1e-12), 1.0)  # the exact end
    else:
        assert (lo, hi) == (pytest.approx(by_hand[0], abs=1e-12), pytest.approx(by_hand[1], abs=1e-12))
    assert 0.0 < lo  # one success or a draw is not zero


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 27, 100])
def test_wilson_interval_ends_are_exact(n: int) -> None:
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    assert wilson_interval(0, n)[1] == pytest.approx(_wilson_by_hand(0, n)[1], abs=1e-12)


def test_wilson_interval_rejects_successes_out_of_range() -> None:
    for x in (-0.5, -1, 10.5):
        with pytest.raises(ValueError, match="successes must be within 0..10"):
            wilson_interval(x, 10)


def test_mean_interval_matches_the_normal_formula() -> None:
    values = [1, 2, 2, 3, 1.5]
    n = len(values)
    mean = sum(values) / n  # 1.9
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))  # sample sd, divisor n - 1
    half = 1.959963984540054 * s / math.sqrt(n)
    m, lo, hi = mean_interval(values)
    assert m == pytest.approx(1.9) and lo == pytest.approx(mean - half) and hi == pytest.approx(mean + half)
    # two values already have a width; one has none; none gives NaNs
    assert mean_interval([1, 3]) == (2.0, pytest.approx(2 - 1.959963984540054), pytest.approx(2 + 1.959963984540054))
    assert mean_interval([2.5]) == (2.5, 2.5, 2.5)
    assert all(math.isnan(v) for v in mean_interval([]))


def test_rating_ordinal_and_dict() -> None:
    r = Rating(25.0, 2.0)
    assert r.ordinal == 19.0 and r.to_dict() == {"mu": 25.0, "sigma": 2.0, "ordinal": 19.0}
    assert hash(r) == hash(Rating(25.0, 2.0))  # frozen: a value
    with pytest.raises(AttributeError):
        r.mu = 30.0  # type: ignore[misc]


def test_rated_game_with_a_player_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="a player appears twice"):
        rate_games(2, [[(0, 1), (0, 2), (1, 3)]])


def test_one_shuffle_rates_a_seeded_order_and_the_default_seed_is_zero() -> None:
    games = [[(0, 1), (1, 2)]] * 6 + [[(0, 2), (1, 1)]] * 4
    # one shuffle: the sorted games in one seeded random order, whatever order they were given in
    order = sorted(tuple(g) for g in games)
    random.Random(3).shuffle(order)
    assert rate_games(2, games, shuffles=1, seed=3) == rate_games(2, order)
    assert rate_games(2, games[::-1], shuffles=1, seed=3) == rate_games(2, order)
    assert rate_games(2, games, shuffles=5) == rate_games(2, games, shuffles=5, seed=0)
    assert rate_games(2, games, shuffles=5, seed=0) != rate_games(2, games, shuffles=5, seed=1)


def _four_games() -> arena.TournamentResult:
    """Four 3-seat games with wins, ties, a draw by the cap, a forfeit on each of two seats, times and plies."""
    kw: dict[str, Any] = dict(move_time=[1.0, 2.0, 3.0], move_count=[10, 20, 30], max_move_time=[0.1, 0.2, 0.3],
                              over_budget=[1, 0, 2])
    games = [
        # player places: p0 1, p1 2, p2 3
        made_game(0, [0, 1, 2], [1, 2, 3], "finished", first_seat=0, plies=100, forfeit_seats=(2,), **kw),
        # p0 1, p1 2, p2 2 (a tie)
        made_game(1, [1, 2, 0], [2, 2, 1], "first_finish", first_seat=1, plies=80, **kw),
        # everyone 1: the cap's draw
        made_game(2, [2, 0, 1], [1, 1, 1], "max_plies", first_seat=2, plies=300, **kw),
        # p0 3, p1 2, p2 1
        made_game(3, [0, 2, 1], [3, 1, 2], "resign", first_seat=0, plies=50, forfeit_seats=(0,), **kw),
    ]
    return _result(["a", "b", "c"], 3, games)


def _cell(wins: int, draws: int, games: int) -> dict:
    x = wins + draws / 2
    lo, hi = _wilson_by_hand(x, games)
    return {"wins": wins, "draws": draws, "games": games, "rate": pytest.approx(x / games),
            "low": pytest.approx(lo, abs=1e-12), "high": pytest.approx(hi, abs=1e-12)}


def test_pairwise_counts_wins_draws_and_wilson_by_hand() -> None:
    pw = _four_games().pairwise()
    assert pw[0][0] is None and pw[1][1] is None and pw[2][2] is None
    assert pw[0][1] == _cell(2, 1, 4) and pw[1][0] == _cell(1, 1, 4)
    assert pw[0][2] == _cell(2, 1, 4) and pw[2][0] == _cell(1, 1, 4)
    assert pw[1][2] == _cell(1, 2, 4) and pw[2][1] == _cell(1, 2, 4)


def _mean_place_by_hand(places: list[int], seats: int) -> tuple[float, float, float]:
    n = len(places)
    mean = sum(places) / n
    s = math.sqrt(sum((x - mean) ** 2 for x in places) / (n - 1))
    half = 1.959963984540054 * s / math.sqrt(n)
    return (mean, max(1, mean - half), min(seats, mean + half))


def test_player_stats_by_hand() -> None:
    st = _four_games().player_stats()
    assert [s["player"] for s in st] == ["a", "b", "c"] and [s["spec"] for s in st] == ["a", "b", "c"]
    # score vs field: pooled comparisons; interval: Wilson of the per-game scores over the games
    expected = {0: (5 / 8, 1 + 1 + 0.5 + 0), 1: (3.5 / 8, 0.5 + 0.25 + 0.5 + 0.5), 2: (3.5 / 8, 0 + 0.25 + 0.5 + 1)}
    for i, (score, per_game_sum) in expected.items():
        lo, hi = _wilson_by_hand(per_game_sum, 4)
        assert st[i]["games"] == 4 and st[i]["opponent_games"] == 8 and st[i]["score_games"] == 4
        assert st[i]["score"] == pytest.approx(score)
        assert (st[i]["score_low"], st[i]["score_high"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    # mean place with its normal interval cut to [1, 3]: p0 1, 1, 1, 3 -> 1.5 with s = 1, low end cut at 1
    for i, places in enumerate([[1, 1, 1, 3], [2, 2, 1, 2], [3, 2, 1, 1]]):
        mean, lo, hi = _mean_place_by_hand(places, 3)
        assert (st[i]["mean_place"], st[i]["mean_place_low"], st[i]["mean_place_high"]) == (
            pytest.approx(mean), pytest.approx(lo), pytest.approx(hi))
    assert st[0]["mean_place_low"] == 1
    assert st[0]["place_share"] == {"1": 0.75, "3": 0.25}
    assert st[1]["place_share"] == {"1": 0.25, "2": 0.75}
    assert st[2]["place_share"] == {"1": 0.5, "2": 0.25, "3": 0.25}
    assert [s["seat_counts"] for s in st] == [[2, 1, 1], [1, 1, 2], [1, 2, 1]]
    assert [s["starts"] for s in st] == [2, 1, 1]  # games 0 and 3 seat 0 (p0), game 1 seat 1 (p2), game 2 seat 2 (p1)
    # per seat: 10/20/30 moves taking 1/2/3 s in all, slowest 0.1/0.2/0.3 s, 1/0/2 over the budget
    assert [s["moves"] for s in st] == [10 + 30 + 20 + 10, 20 + 10 + 30 + 30, 30 + 20 + 10 + 20]
    assert st[0]["ms_per_move"] == pytest.approx(1000 * (1 + 3 + 2 + 1) / 70)
    assert st[1]["ms_per_move"] == pytest.approx(1000 * (2 + 1 + 3 + 3) / 90)
    assert [s["max_ms_per_move"] for s in st] == [pytest.approx(300), pytest.approx(300), pytest.approx(300)]
    assert [s["over_budget"] for s in st] == [1 + 2 + 0 + 1, 0 + 1 + 2 + 2, 2 + 0 + 1 + 0]
    assert [s["forfeits"] for s in st] == [1, 0, 1]  # game 0 seat 2 (p2), game 3 seat 0 (p0)


def test_summary_by_hand() -> None:
    s = _four_games().summary()
    lo, hi = _wilson_by_hand(3, 4)
    assert s["games"] == 4 and s["decided"] == 3 and s["finish_rate"] == 0.75  # max_plies is not a finish
    assert (s["finish_rate_low"], s["finish_rate_high"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert s["end_reasons"] == {"finished": 1, "first_finish": 1, "max_plies": 1, "resign": 1}
    assert list(s["end_reasons"]) == sorted(s["end_reasons"])
    assert s["mean_plies"] == pytest.approx(530 / 4) and s["mean_plies_decided"] == pytest.approx(230 / 3)
    assert s["seat_mean_place"] == [pytest.approx(7 / 4), pytest.approx(6 / 4), pytest.approx(7 / 4)]
    assert s["starter_mean_place"] == pytest.approx((1 + 2 + 1 + 3) / 4)
    assert s["balanced"] is False and s["cycle_length"] == 9 and s["elapsed_s"] == 0.0
    # nine games are a whole cycle of 3 players on 3 seats
    games = [made_game(g, list(lu.seats), [1, 2, 3], first_seat=lu.first_seat)
             for g, lu in enumerate(schedule(3, 3, 9))]
    assert _result(["a", "b", "c"], 3, games).summary()["balanced"] is True


def test_a_player_who_never_played_has_no_statistics() -> None:
    # three players, two seats, one game: c never played, a and c never met
    res = _result(["a", "b", "c"], 2, [made_game(0, [0, 1], [1, 2])])
    pw = res.pairwise()
    assert pw[0][2] is None and pw[2][0] is None and pw[1][2] is None and pw[0][1] is not None
    st = res.player_stats()[2]
    assert st["games"] == 0 and st["score_games"] == 0 and st["opponent_games"] == 0 and st["moves"] == 0
    assert all(math.isnan(st[key]) for key in ("score", "score_low", "score_high"))  # null in the JSON, all three
    assert math.isnan(st["mean_place"]) and math.isnan(st["ms_per_move"]) and st["seat_counts"] == [0, 0]
    assert st["starts"] == 0 and st["place_share"] == {}


def test_ratings_are_the_shuffled_plackett_luce_of_the_games_by_index() -> None:
    res = _four_games()
    res.seed = 7
    games = [sorted(g.player_places.items()) for g in res.games]
    expected = rate_games(3, games, shuffles=20, seed=7)
    res.games = res.games[::-1]  # the order the games are listed in does not matter
    assert res.ratings() == expected and arena.RATING_SHUFFLES == 20
    assert res.to_dict()["ratings"] == {p: r.to_dict() for p, r in zip(["a", "b", "c"], expected)}


def test_derive_seed_is_the_documented_sha256() -> None:
    def by_hand(text: str) -> int:
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1

    assert arena.derive_seed(5, 3) == by_hand("5:3") and arena.derive_seed(5, 3, 1) == by_hand("5:3:1")
    assert all(0 <= arena.derive_seed(s, g) < 2**63 for s in range(5) for g in range(20))
    assert max(arena.derive_seed(0, g) for g in range(64)) >= 2**62  # all 63 bits are used


def test_tournament_seeds_each_game_and_seat_as_documented() -> None:
    made: list[tuple[str, int | None]] = []

    def factory(name: str, seed: int | None = None) -> _Scripted:
        made.append((name, seed))
        return _Scripted(name)

    res = run_tournament(["x", "y"], Rules("star", 2), 3, seed=9, max_plies=2, factory=factory)
    assert [g.seed for g in res.games] == [arena.derive_seed(9, g) for g in range(3)]
    lineups = schedule(2, 2, 3)
    assert made == [(["x", "y"][lu.seats[j]], arena.derive_seed(arena.derive_seed(9, g), j))
                    for g, lu in enumerate(lineups) for j in range(2)]
    lu = lineups[0]
    assert hash(lu) == hash(arena.Lineup(lu.seats, lu.first_seat))  # a frozen value


def test_schedule_seats_follow_the_documented_rotation() -> None:
    # game s of a block puts group[(j + s) % m] on seat j: 3 players on 4 seats ABCA, BCAB, CABC (docs/evaluation.md)
    assert [lu.seats for lu in schedule(3, 4, 3)] == [(0, 1, 2, 0), (1, 2, 0, 1), (2, 0, 1, 2)]
    assert [lu.seats for lu in schedule(3, 3, 3)] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


def test_the_cap_keeps_decided_places_and_shares_or_ranks_the_rest() -> None:
    # seat 0 (greedy) finishes under play_to_end, the random seats never do: the cap places them after it
    rules = Rules("star", 3, play_to_end=True)
    res = play_game(rules, ["greedy", "random", "random"], seed=1, max_plies=240)
    assert res.end_reason == "max_plies" and res.places == [1, 2, 2] and res.player_places == {0: 1, 1: 2, 2: 2}
    res = play_game(rules, ["greedy", "random", "random"], seed=1, max_plies=240, cap_outcome="progress")
    assert res.places == [1, 3, 2] and res.progress[1][1] > res.progress[2][1]  # seat 1 is further from its goal
    # a forfeited (resigned) seat stays at the bottom, the others share the top
    res = play_game(rules, [_Scripted(illegal=True), _Scripted(), _Scripted()], max_plies=10)
    assert res.end_reason == "max_plies" and res.places == [3, 1, 1] and [f["seat"] for f in res.forfeits] == [0]


def test_play_game_defaults_and_argument_checks() -> None:
    rules = Rules("star", 2)
    res = play_game(rules, ["random", "random"], max_plies=6)
    assert res.index == 0 and res.record is None and res.seed == 0
    assert res.moves == play_game(rules, ["random", "random"], seed=0, max_plies=6).moves
    assert res.moves != play_game(rules, ["random", "random"], seed=1, max_plies=6).moves
    assert play_game(rules, ["random", "random"], max_plies=1).plies == 1
    with pytest.raises(ValueError, match="max_plies must be >= 1"):
        play_game(rules, ["random", "random"], max_plies=0)
    with pytest.raises(ValueError, match=r"star with 2 seats needs a list of 2 players, got \['random', 'random', "):
        play_game(rules, ["random"] * 3, max_plies=4)  # a mutant without the check stops soon
    with pytest.raises(ValueError, match="cap_outcome must be"):
        play_game(rules, ["random", "random"], cap_outcome="nosuch", max_plies=4)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"players": "rr"}, "players must be a list or tuple of 2 players, got str 'rr'"),
    ({"seat_players": [0]}, r"seat_players must give a player index for each of the 2 seats, got \[0\]"),
    ({"seat_players": [0, 1, 2]}, "seat_players must give a player index for each of the 2 seats"),
    ({"seat_players": [0, -1]}, "a seat_players entry must be >= 0"),
    ({"names": ["a"], "keep_record": True}, r"names must give a name for each of the 2 seats, got \['a'\]"),
    ({"max_plies": 2.5}, "max_plies must be >= 1 \\(an integer\\), got 2.5"),
    ({"max_plies": True}, "max_plies must be >= 1"),
    *[({"seed": seed}, "seed must be >= 0 \\(an integer\\)") for seed in (None, -5, 1.5, "abc")],
    ({"time_budget": float("inf")}, "time_budget must be > 0 seconds \\(a finite number\\)"),
    ({"time_budget": "1"}, "time_budget must be > 0 seconds"),
    ({"players": [None, "random"]}, r"players\[0\] must be a name for the factory or a Player \(an object with "
                                    r"select_move\(game, time_budget\)\), got None"),
    ({"players": ["random", 3]}, r"players\[1\] must be a name for the factory or a Player .*, got 3"),
    ({"players": ["greedy", "random"], "seat_players": [1, 1]},
     "seat_players gives seats 0 and 1 the same player index 1, but different players: 'greedy' and 'random'"),
])
def test_play_game_refuses_bad_arguments_before_any_move(kwargs, message) -> None:
    """Once these dropped a player from the result (seat_players too short), failed with an IndexError
    or were taken as given (a float cap, a seed of None)."""
    args = {"players": ["random", "random"], **kwargs}
    with pytest.raises(ValueError, match=message):
        play_game(Rules("star", 2), max_plies=args.pop("max_plies", 4), **args)


def test_play_game_and_run_tournament_refuse_rules_that_are_not_rules() -> None:
    """``play_game(None, ...)`` and ``run_tournament(..., None, ...)`` raised ``AttributeError: 'NoneType' object
    has no attribute 'num_players'``, and a player that is None failed only at ply 0 with a RuntimeError: each is
    refused before any move in ``BatchedGame``'s words (the rules) or naming the player's position: a
    ``TypeError``, as ``player_for``'s (it was a ``ValueError``; it is one still, for callers that catch that)."""
    for rules in (None, Rules("star", 2).to_dict(), "star"):
        message = f"rules must be a halma_env.Rules, got {type(rules).__name__}"
        with pytest.raises(TypeError, match=message) as caught:
            play_game(rules, ["greedy", "random"])  # type: ignore[arg-type]
        assert isinstance(caught.value, ValueError)
        with pytest.raises(TypeError, match=message):
            run_tournament(["greedy", "random"], rules, games=2)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "message"), [
    *[({"seed": bad}, "seed must be >= 0 \\(an integer\\)") for bad in (True, 1.0, "1", None)],
    *[({"max_plies": bad}, "max_plies must be >= 1 \\(an integer\\)") for bad in (True, 2.0, "2")],
    ({"time_budget": "1"}, "time_budget must be > 0 seconds"),
    ({"time_budget": True}, "time_budget must be > 0 seconds"),
])
def test_play_game_refuses_an_argument_of_the_wrong_type_with_a_type_error(kwargs, message) -> None:
    """A bool, a float or text where an integer is meant (a seed, a ply count) was a ``ValueError``, as a negative
    one is: it is a ``TypeError``; numpy's integers are integers."""
    args = {"max_plies": 4, **kwargs}
    with pytest.raises(TypeError, match=message):
        play_game(Rules("star", 2), ["random", "random"], **args)


def test_run_tournament_and_players_refuse_an_argument_of_the_wrong_type_with_a_type_error() -> None:
    import numpy as np

    from agents.registry import make_player

    rules = Rules("star", 2, move_limit=2)
    for kwargs in ({"games": True}, {"games": 2.0}, {"seed": 1.0}, {"seed": True}, {"workers": True},
                   {"max_plies": "2"}):
        args = {"games": 2, "workers": 1, **kwargs}
        with pytest.raises(TypeError, match=f"{next(iter(kwargs))} must be >= "):
            run_tournament(["random", "random"], rules, **args)
    for kwargs in ({"games": 0}, {"seed": -1}, {"workers": 0}):
        with pytest.raises(ValueError, match=f"{next(iter(kwargs))} must be >= ") as caught:
            run_tournament(["random", "random"], rules, **{"games": 2, "workers": 1, **kwargs})
        assert not isinstance(caught.value, TypeError)
    one = run_tournament(["random", "random"], rules, games=np.int64(2), seed=np.uint8(3), workers=np.int32(1))
    two = run_tournament(["random", "random"], rules, games=2, seed=3, workers=1)
    assert [g.moves for g in one.games] == [g.moves for g in two.games]
    for seed in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="seed must be None or an integer >= 0"):
            make_player("random", seed=seed)
    with pytest.raises(ValueError, match="seed must be None or an integer >= 0, got -1") as caught:
        make_player("random", seed=-1)
    assert not isinstance(caught.value, TypeError)
    make_player("random", seed=10**5000)  # taken: no repr of it is written (repr refuses 5000 digits)


@pytest.mark.parametrize(("players", "message"), [
    (5, "players must be a list or tuple of 2 players, got int 5"),  # was: TypeError: object of type 'int' has no len()
    ("rr", "players must be a list or tuple of 2 players, got str 'rr'"),
    (b"rr", "players must be a list or tuple of 2 players, got bytes b'rr'"),
    ({"random", "greedy"}, "players must be a list or tuple of 2 players, got set "),  # was: 'set' ... subscriptable
    ({0: "random", 1: "random"}, "players must be a list or tuple of 2 players, got dict {0: "),  # was: ... got 0
    ((p for p in ["random", "random"]), "players must be a list or tuple of 2 players, got generator <generator"),
    ([None, "random"], "players[0] must be a name for the factory or a Player"),
    (["random", 3], "players[1] must be a name for the factory or a Player"),
])
def test_play_game_refuses_players_of_the_wrong_type_with_a_type_error(players, message) -> None:
    """``players`` that is no list of players (a number, text, a set, a dict, a generator) or holds something that
    is no player was a ``ValueError`` or a raw ``TypeError`` from ``len`` or indexing: a ``WrongTypeError``
    (a ``TypeError``, still a ``ValueError``) naming the argument; a list of the wrong length stays a ValueError."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(TypeError, match=re.escape(message)) as caught:
        play_game(Rules("star", 2), players, max_plies=4)
    assert isinstance(caught.value, WrongTypeError)
    for wrong_length in (["random"], ("random",) * 3):
        with pytest.raises(ValueError, match="star with 2 seats needs a list of 2 players") as caught:
            play_game(Rules("star", 2), wrong_length, max_plies=4)
        assert not isinstance(caught.value, TypeError)
    assert play_game(Rules("star", 2), ("random", "random"), max_plies=2).plies == 2  # a tuple is a list of players


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seat_players": 5}, "seat_players must be a list of player indices, one per seat, got 5"),
    ({"seat_players": "01"}, "seat_players must be a list of player indices, one per seat, got '01'"),
    ({"names": 5}, "names must be a list of names (text), one per seat, got 5"),
    ({"names": "ab"}, "names must be a list of names (text), one per seat, got 'ab'"),
    ({"names": [1, 2], "keep_record": True}, "names must be a list of names (text), one per seat, got [1, 2]"),
    ({"metadata": 5, "keep_record": True}, "metadata must be a dict or None, got 5"),
    ({"metadata": [("a", 1)], "keep_record": True}, "metadata must be a dict or None, got [('a', 1)]"),
])
def test_play_game_refuses_seat_players_names_and_metadata_of_the_wrong_type_before_any_move(kwargs, message) -> None:
    """A number for ``seat_players``, ``names`` or ``metadata`` was ``TypeError: 'int' object is not iterable`` from
    inside (``metadata``'s only once the whole game was played, for its record), names that are no text a
    ``RecordError`` then too: a ``WrongTypeError`` naming the argument, before any move."""
    from halma_env.rules import WrongTypeError

    class Counting(_Scripted):
        moves = 0

        def select_move(self, game: Game, time_budget: float | None = None):
            Counting.moves += 1
            return super().select_move(game, time_budget)

    with pytest.raises(TypeError, match=re.escape(message)) as caught:
        play_game(Rules("star", 2), [Counting(), Counting()], max_plies=20, **kwargs)
    assert isinstance(caught.value, WrongTypeError) and Counting.moves == 0
    res = play_game(Rules("star", 2), [Counting(), Counting()], max_plies=2, keep_record=True, names=("a", "b"),
                    seat_players=(0, 1), metadata=types.MappingProxyType({"note": 1}))
    assert res.record is not None and res.record["players"] == ["a", "b"] and res.record["metadata"]["note"] == 1


def test_cap_outcome_of_the_wrong_type_is_a_type_error_before_any_game() -> None:
    """``cap_outcome=1`` (or None, or b"draw") was the ValueError of one out of range, and ``run_tournament`` did
    not check it at all: each game's ``play_game`` met it, in whichever worker played it.  Both refuse it at
    once, as ``Rules`` refuses its ``limit_outcome``: a ``WrongTypeError`` for no text, a ValueError for
    other text."""
    from halma_env.rules import WrongTypeError

    def unused_factory(name: str, seed: int | None = None) -> Any:
        raise AssertionError("no player is made before the arguments are checked")

    rules = Rules("star", 2)
    for bad in (1, None, b"draw", ["draw"]):
        with pytest.raises(TypeError, match=re.escape(f"cap_outcome must be 'draw' or 'progress', got {bad!r}")) \
                as caught:
            play_game(rules, ["x", "y"], cap_outcome=bad, max_plies=4, factory=unused_factory)
        assert isinstance(caught.value, WrongTypeError)
        with pytest.raises(WrongTypeError, match="cap_outcome must be 'draw' or 'progress'"):
            run_tournament(["x", "y"], rules, 2, cap_outcome=bad, max_plies=4, factory=unused_factory)
    for call in (lambda: play_game(rules, ["x", "y"], cap_outcome="win", max_plies=4, factory=unused_factory),
                 lambda: run_tournament(["x", "y"], rules, 2, cap_outcome="win", max_plies=4, factory=unused_factory)):
        with pytest.raises(ValueError, match="cap_outcome must be 'draw' or 'progress', got 'win'") as caught:
            call()
        assert not isinstance(caught.value, TypeError)


@pytest.mark.parametrize("players", [
    "greedy", b"greedy", 5, None, {"greedy", "random"}, {"greedy": 1}, (p for p in ["greedy", "random"]),
    ["greedy", 3], ["greedy", None],
])
def test_run_tournament_refuses_players_that_are_no_list_of_names_with_a_type_error(players) -> None:
    """``run_tournament(5, ...)`` was ``TypeError: 'int' object is not iterable`` from deep inside, a set
    ``TypeError: 'set' object is not subscriptable`` after the check, text and a list holding a number a
    ``ValueError``: each is a ``WrongTypeError`` naming the argument; an empty list a ValueError still."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(TypeError, match="players must be a list of names or paths for the factory") as caught:
        run_tournament(players, Rules("star", 2), 1, max_plies=1, factory=_scripted_factory)
    assert isinstance(caught.value, WrongTypeError) and isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="a tournament needs at least one player") as caught:
        run_tournament([], Rules("star", 2), 1)
    assert not isinstance(caught.value, TypeError)
    assert len(run_tournament(("x", "y"), Rules("star", 2), 1, max_plies=1, factory=_scripted_factory).games) == 1


def test_seat_players_number_the_callers_players_not_the_list_given() -> None:
    """``seat_players`` entries are the caller's player numbers (``run_tournament`` passes a lineup's indices into
    its own list, larger than the seat count when there are more players than seats), so an index past
    ``len(players)`` is no error; one index for two different names is."""
    res = play_game(Rules("star", 2), ["random", "random"], seat_players=[0, 5], max_plies=2)
    assert set(res.player_places) == {0, 5} and res.seats == [0, 5]
    assert play_game(Rules("star", 2), ["random", "random"], seat_players=[3, 3], max_plies=2).player_places == {3: 1.0}


class _Nameless:
    def select_move(self, game: Game, time_budget: float | None = None):
        return game.legal_moves()[0]


def test_player_objects_are_named_by_their_name_or_class() -> None:
    res = play_game(Rules("star", 2), [_Scripted("bob"), _Nameless()], max_plies=2, keep_record=True)
    assert res.record is not None and res.record["players"] == ["bob", "_Nameless"]


def test_record_metadata_and_forfeit_entries() -> None:
    rules = Rules("star", 3, first_seat=1)
    res = play_game(rules, [_Scripted(), _Scripted(illegal=True), _Scripted()], seed=4, index=7, keep_record=True,
                    max_plies=5, time_budget=2.5, seat_players=[0, 1, 0], metadata={"extra": 1})
    assert res.forfeits == [{"seat": 1, "ply": 0, "move": "(0, 0)", "error": res.forfeits[0]["error"]}]
    assert res.forfeits[0]["error"]  # the engine's message
    assert res.record is not None and res.record["metadata"] == {
        "arena": {"index": 7, "seed": 4, "seat_players": [0, 1, 0], "first_seat": 1, "end_reason": "max_plies",
                  "places": res.places, "time_budget": 2.5, "max_plies": 5, "forfeits": res.forfeits},
        "extra": 1,
    }
    assert res.places == [1, 3, 1] and res.player_places == {0: 1, 1: 3} and res.first_seat == 1


def _scripted_factory(name: str, seed: int | None = None) -> _Scripted:
    return _Scripted(name)


def test_run_tournament_defaults_and_argument_checks(capsys) -> None:
    res = run_tournament(["x", "y"], Rules("star", 2), 2, max_plies=2, factory=_scripted_factory)
    assert res.seed == 0 and [g.seed for g in res.games] == [arena.derive_seed(0, g) for g in range(2)]
    assert all(g.record is None for g in res.games) and res.cap_outcome == "draw"
    assert 0 <= res.elapsed < 60  # wall seconds
    assert capsys.readouterr().err == ""  # no progress bar unless asked for
    assert run_tournament(["x", "y"], Rules("star", 2), 1, max_plies=1, factory=_scripted_factory,
                          workers=5).games[0].plies == 1  # no more workers than games
    for kwargs, message in [({"games": 0}, "games must be >= 1"), ({"time_budget": 0.0}, "time per move must be > 0"),
                            ({"time_budget": -1.0}, "time per move must be > 0"),
                            ({"time_budget": float("inf")}, "time per move must be > 0 seconds \\(a finite number\\)"),
                            ({"time_budget": "1"}, "time per move must be > 0"),
                            ({"games": 2.5}, "games must be >= 1 \\(an integer\\), got 2.5"),
                            ({"workers": 0}, "workers must be >= 1"), ({"max_plies": 0}, "max_plies must be >= 1"),
                            ({"seed": -1}, "seed must be >= 0"), ({"seed": None}, "seed must be >= 0")]:
        with pytest.raises(ValueError, match=message):
            run_tournament(["x", "y"], Rules("star", 2), **{"games": 1, **kwargs})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one player"):
        run_tournament([], Rules("star", 2), 1)
    for players in ("greedy", [_Scripted("bob"), "random"]):  # a string was taken letter by letter
        with pytest.raises(ValueError, match="players must be a list of names or paths for the factory"):
            run_tournament(players, Rules("star", 2), 1)  # type: ignore[arg-type]
    assert len(run_tournament(["x", "y"], Rules("star", 2), 1, max_plies=1, factory=_scripted_factory,
                              time_budget=1.0).games) == 1


def test_load_results_gives_the_games_back(tmp_path) -> None:
    res = run_tournament(["x", "y"], Rules("star", 3), 3, max_plies=4, factory=_scripted_factory,
                         cap_outcome="progress")
    arena._write_json(str(tmp_path / "results.json"), res.to_dict())
    back = arena.load_results(str(tmp_path / "results.json"))
    assert back.games == res.games and back.games[0].progress and back.cap_outcome == "progress"
    assert (back.players, back.specs, back.rules, back.seed, back.max_plies) == (
        res.players, res.specs, res.rules, res.seed, res.max_plies)
    data = json.loads((tmp_path / "results.json").read_text())
    del data["cap_outcome"]  # a file from before the option: the cap drew
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert arena.load_results(str(tmp_path / "old.json")).cap_outcome == "draw"
    (tmp_path / "other.json").write_text(json.dumps({"players": []}))
    with pytest.raises(ValueError, match="not a halma eval results.json"):
        arena.load_results(str(tmp_path / "other.json"))


def test_games_in_this_process_run_a_checkpoint_on_one_torch_thread_and_give_the_count_back(monkeypatch) -> None:
    """workers=1 plays in the caller's process: a checkpoint player's forward passes ran on torch's default
    threads there (28 ms a move on a loaded 2-core machine against 1 ms in a one-thread worker)."""
    import torch

    import agents.arena
    from agents.arena import run_tournament
    from halma_env import Rules

    seen: list[int] = []
    run_task = agents.arena._run_task

    def recording(task):
        seen.append(torch.get_num_threads())
        return run_task(task)

    monkeypatch.setattr(agents.arena, "_run_task", recording)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        run_tournament(["agents/checkpoints/quickstart_star2.pt", "random"], Rules("star", 2, move_limit=20), 2)
        run_tournament(["greedy", "random"], Rules("star", 2, move_limit=20), 2)  # no torch player: left alone
        assert seen == [1, 1, 2, 2] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_tournament_whose_workers_cannot_start_fails_instead_of_hanging(tmp_path: Path) -> None:
    """multiprocessing.Pool started new workers for ever when each one failed at start (a script without the
    __main__ guard re-runs the tournament in every spawned worker): the run never ended."""
    import subprocess
    import sys

    script = tmp_path / "no_guard.py"
    script.write_text("from agents.arena import run_tournament\nfrom halma_env import Rules\n"
                      "run_tournament(['random', 'greedy'], Rules('star', 2), 4, workers=2, max_plies=20)\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 1
    # (in the traceback's last line; a loaded machine's multiprocessing may warn after it, e.g. the resource tracker)
    assert (
        "\nRuntimeError: a game process of the arena stopped before its game ended (killed, crashed, or it could not "
        "start: a script that calls run_tournament with workers > 1 needs the `if __name__ == \"__main__\":` guard, "
        "and a factory must be importable by the workers, defined in a module or a script file, not in python -c or "
        "a notebook); workers=1 plays in this process\n") in done.stderr + "\n", done.stderr[-800:]
    guarded = tmp_path / "guarded.py"
    guarded.write_text("from agents.arena import run_tournament\nfrom halma_env import Rules\n"
                       "if __name__ == '__main__':\n"
                       "    print(len(run_tournament(['random', 'greedy'], Rules('star', 2), 4, workers=2, "
                       "max_plies=20).games))\n")
    done = subprocess.run([sys.executable, str(guarded)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0 and done.stdout == "4\n", done.stderr[-800:]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"index": 1.5}, "index must be >= 0 (an integer), got 1.5"),  # was: accepted, 1.5 written into the record
    ({"index": True}, "index must be >= 0 (an integer), got True"),
    ({"index": "3"}, "index must be >= 0 (an integer), got '3'"),
    ({"keep_record": 5}, "keep_record must be True or False, got 5"),  # was: taken as true, a record kept
    ({"keep_record": "no"}, "keep_record must be True or False, got 'no'"),
    ({"keep_record": None}, "keep_record must be True or False, got None"),
    ({"factory": 5}, "factory must be a callable factory(name, seed) -> Player or None, got 5"),  # was: raw TypeError
    ({"factory": 0}, "factory must be a callable factory(name, seed) -> Player or None, got 0"),  # was: the default
    ({"factory": "random"}, "factory must be a callable factory(name, seed) -> Player or None, got 'random'"),
])
def test_play_game_refuses_index_keep_record_and_factory_of_the_wrong_type(kwargs, message) -> None:
    """``index=1.5`` and ``keep_record=5`` were taken silently (the index into the result and the record, 5 as
    true), ``factory=5`` was a raw ``'int' object is not callable`` at the first name and ``factory=0`` the registry's
    factory: each a ``WrongTypeError`` naming the argument before any move; a negative index a ValueError."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(WrongTypeError, match=re.escape(message)):
        play_game(Rules("star", 2), ["random", "random"], max_plies=2, **kwargs)
    with pytest.raises(ValueError, match=re.escape("index must be >= 0 (an integer), got -1")) as caught:
        play_game(Rules("star", 2), ["random", "random"], max_plies=2, index=-1)
    assert not isinstance(caught.value, TypeError)
    import numpy as np

    result = play_game(Rules("star", 2), ["random", "random"], max_plies=2, index=np.int64(3),
                       keep_record=np.bool_(True))
    assert result.index == 3 and type(result.index) is int and result.record is not None
    assert result.record["metadata"]["arena"]["index"] == 3


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"keep_records": 5}, "keep_records must be True or False, got 5"),  # was: taken as true
    ({"progress": "no"}, "progress must be True or False, got 'no'"),  # was: a bar drawn
    ({"factory": 5}, "factory must be a callable factory(name, seed) -> Player or None, got 5"),  # was: raw TypeError
])
def test_run_tournament_refuses_flags_and_factory_of_the_wrong_type(kwargs, message) -> None:
    from halma_env.rules import WrongTypeError

    with pytest.raises(WrongTypeError, match=re.escape(message)):
        run_tournament(["random", "random"], Rules("star", 2), 1, max_plies=2, **kwargs)


@pytest.mark.parametrize("games", [True, 1.5, "2"])
def test_run_solo_refuses_a_game_count_of_the_wrong_type(games) -> None:
    """``run_solo("random", True)`` played one game, 1.5 was a raw TypeError from ``range()``, "2" one from ``<``."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(WrongTypeError, match=re.escape(f"games must be >= 1 (an integer), got {games!r}")):
        run_solo("random", games, max_plies=2)
    with pytest.raises(ValueError, match=re.escape("games must be >= 1 (an integer), got 0")):
        run_solo("random", 0, max_plies=2)
