"""The arena (``halma eval``): seat schedule, reproducibility, parallel play, ratings, records, CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents import arena
from agents.arena import cycle_length, play_game, run_solo, run_tournament, schedule
from agents.cli import main as cli_main
from agents.ratings import competition_ranks, mean_interval, rate_games, wilson_interval
from halma_env import Game, Rules
from halma_env.records import GameRecord, load_record

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


# --- statistics -------------------------------------------------------------------------------------


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-3)
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-3), pytest.approx(0.7634, abs=1e-3))
    assert wilson_interval(0, 0) == (0.0, 1.0)
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
        (["greedy", "random", "--games", "0"], "--games must be >= 1"),
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


class _Slow(_Scripted):
    def select_move(self, game: Game, time_budget: float | None = None):
        assert time_budget == 0.05  # the budget reaches the player
        import time

        time.sleep(0.1)
        return game.legal_moves()[0]


def test_time_per_move_is_measured_against_the_budget() -> None:
    # budget 50 ms: the instant scripted player stays under it even when a loaded CI box stalls it briefly
    res = play_game(Rules("star", 2), [_Slow(), _Scripted()], time_budget=0.05, max_plies=4)
    assert res.move_count == [2, 2] and res.over_budget == [2, 0]
    assert res.move_time[0] >= 0.2 and res.max_move_time[0] >= 0.1


# --- the statistics against hand computations (audit) --------------------------------------------


def _game(index: int, seats: list[int], places: list[float], end_reason: str = "finished") -> arena.GameResult:
    """A played game as the arena stores it, without playing it."""
    by_player: dict[int, list[float]] = {}
    for s, p in enumerate(seats):
        by_player.setdefault(p, []).append(places[s])
    n = len(seats)
    return arena.GameResult(index=index, seed=index, seats=seats, first_seat=0, places=places,
                            player_places={p: sum(v) / len(v) for p, v in by_player.items()},
                            end_reason=end_reason, plies=10, moves=[], move_time=[0.0] * n, move_count=[0] * n,
                            max_move_time=[0.0] * n, over_budget=[0] * n)


def _result(players: list[str], seats: int, games: list[arena.GameResult]) -> arena.TournamentResult:
    return arena.TournamentResult(players, players, Rules("star", seats).to_dict(), games, 0, None, 300)


def test_score_vs_field_interval_counts_games_not_comparisons() -> None:
    # 12 three-seat games, player 0 first in each: 24 comparisons against the field, but only 12
    # independent games; the interval must be the one of 12 games (the comparisons of one game are not
    # independent trials), the estimate is unchanged
    lineups = schedule(3, 3, 12)
    games = [_game(g, list(lu.seats), [{0: 1, 1: 2, 2: 3}[p] for p in lu.seats]) for g, lu in enumerate(lineups)]
    st = _result(["a", "b", "c"], 3, games).player_stats()
    assert st[0]["score"] == 1.0 and st[0]["opponent_games"] == 24 and st[0]["score_games"] == 12
    assert (st[0]["score_low"], st[0]["score_high"]) == wilson_interval(12, 12)
    assert st[1]["score"] == 0.5 and (st[1]["score_low"], st[1]["score_high"]) == wilson_interval(6, 12)
    # two players on four seats: one opponent per game, so games and comparisons agree
    games = [_game(g, [0, 1, 0, 1] if g % 2 == 0 else [1, 0, 1, 0], [1, 2, 3, 4]) for g in range(4)]
    st = _result(["a", "b"], 4, games).player_stats()
    assert st[0]["score"] == 0.5 and st[0]["score_games"] == 4  # mean places 2 vs 3, then 3 vs 2
    assert (st[0]["score_low"], st[0]["score_high"]) == wilson_interval(2, 4)


def test_no_decided_game_prints_na_not_nan() -> None:
    games = [_game(g, [g % 2, 1 - g % 2], [1, 1], end_reason="max_plies") for g in range(2)]
    md = _result(["a", "b"], 2, games).markdown()
    assert "nan" not in md and "decided games: n/a" in md


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
        code = (f"{first}import sys; from agents.arena import _one_thread_per_worker; "
                "_one_thread_per_worker(); import torch; print(torch.get_num_threads())")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        assert out.stdout.strip() == "1", first


def test_mean_place_interval_stays_among_the_possible_places() -> None:
    """A normal interval around 1.11 over nine games reached 0.89; places lie in 1..seats."""
    places = [1, 1, 1, 1, 1, 1, 1, 1, 2]
    mean, low, high = mean_interval(places)
    assert low < 1 < high  # the plain normal interval
    assert mean_interval(places, bounds=(1, 3)) == (mean, 1, high)
    assert mean_interval([3, 3, 2], bounds=(1, 3))[2] == 3
