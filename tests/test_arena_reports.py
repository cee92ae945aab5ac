"""The arena's reports and command (``halma eval``), pinned where tests/test_arena.py left them open.

Each test here came out of mutation testing (``scripts/mutants.py agents/arena.py --lines 490-1012``,
``agents/cli.py``, ``agents/bench.py``): it fails on a single-point change of the module that the
other tests did not notice.  The tables are checked against results built by hand (fixed ratings,
games that were never played), so nothing here depends on openskill's numbers or on a bot's moves.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import arena
from agents.cli import main as cli_main
from agents.ratings import Rating
from agents.workers import one_thread_per_worker
from halma_env import Rules
from tests.arena_helpers import made_game
from tests.file_helpers import TerminalText, fifo_refused_at_once


def _match() -> arena.TournamentResult:
    """Three players on two seats, three games (a-b, b-a drawn at the cap, b-c with b forfeiting); a and c
    never meet; ratings fixed so that the table order (c, b, a) is not the players' order."""
    games = [
        made_game(0, [0, 1], [1, 2], plies=20, move_time=[0.5, 0.25], move_count=[10, 10], max_move_time=[0.1, 0.05],
              over_budget=[2, 0]),
        made_game(1, [1, 0], [1, 1], "max_plies", first_seat=1, plies=30, move_time=[0.3, 0.3], move_count=[15, 15],
              max_move_time=[0.03, 0.02], over_budget=[0, 1]),
        made_game(2, [1, 2], [2, 1], "resign", plies=8, move_time=[0.1, 0.2], move_count=[4, 4],
              max_move_time=[0.04, 0.09], over_budget=[1, 0], forfeit_seats=(0,)),
    ]
    res = arena.TournamentResult(["a", "b", "c"], ["a", "b", "c"], Rules("star", 2, move_limit=50).to_dict(), games,
                                 7, 0.5, 120, "progress", 4.2)
    res.ratings = lambda: [Rating(25.0, 3.0), Rating(20.0, 1.0), Rating(30.0, 2.0)]  # type: ignore[method-assign]
    return res


def _self_play() -> arena.TournamentResult:
    """One player on both seats of two diamond games: no opponent, no time budget, no forfeit, balanced."""
    games = [made_game(0, [0, 0], [1, 2], plies=40), made_game(1, [0, 0], [2, 1], "move_limit", first_seat=1, plies=50)]
    res = arena.TournamentResult(["x"], ["x"], Rules("diamond", 2).to_dict(), games, 3, None, 200)
    res.ratings = lambda: [Rating(25.0, 25 / 3)]  # type: ignore[method-assign]
    return res


MATCH_MD = """\
### star, 2 seats: a vs b vs c

3 games, seed 7, time per move 0.5 s, arena cap 120 plies (progress); rules: anti_blocking=True, \
play_to_end=True, move_limit=50, limit_outcome=draw, stall_limit=None, repetition_limit=None

| player | rating (ordinal) | mu ± sigma | score vs field [95% CI] | mean place [95% CI] | ms/move | max ms |
|---|---|---|---|---|---|---|
| c | 24.00 | 30.00 ± 2.00 | 100.0% [20.7%, 100.0%] | 1.00 [1.00, 1.00] | 50.0 | 90.0 |
| b | 17.00 | 20.00 ± 1.00 | 16.7% [1.8%, 69.0%] | 1.67 [1.01, 2.00] | 22.4 | 50.0 |
| a | 16.00 | 25.00 ± 3.00 | 75.0% [19.8%, 97.3%] | 1.00 [1.00, 1.00] | 32.0 | 100.0 |

Win rate of the row against the column (a draw is half a win), 95% Wilson interval, games:

| | c | b | a |
|---|---|---|---|
| c | - | 100.0% [20.7%, 100.0%] (1) | - |
| b | 0.0% [0.0%, 79.3%] (1) | - | 25.0% [2.7%, 80.2%] (2) |
| a | - | 75.0% [19.8%, 97.3%] (2) | - |

Share of each player's seats in each place:

| player | place 1 | place 2 | games in seat 0/1 | starts |
|---|---|---|---|---|
| c | 100.0% | 0.0% | 0/1 | 0 |
| b | 33.3% | 66.7% | 2/1 | 1 |
| a | 100.0% | 0.0% | 1/1 | 2 |

Shared places: 1 of 3 games gave two or more seats one place (a game stopped by a limit: its undecided seats \
share the next place); each row adds up to 100%, a column need not.

Finish rate (decided by finishing or resigning, not by a limit): 2/3 = 66.7% [20.8%, 93.9%]; end reasons: \
finished 1, max_plies 1, resign 1
Mean game length: 19.3 plies (decided games: 14.0); wall time 4.2 s
Mean place by seat: 1.33, 1.33; of the seat that moved first: 1.33
Forfeits (illegal moves answered, seat resigned): 1 (b 1)
Moves over the time budget: 4 (b 1, a 3)
Note: seats are exactly balanced every 12 games; 3 is not a multiple, so a small seat imbalance remains."""

SELF_PLAY_MD = """\
### diamond, 2 seats: x

2 games, seed 3, time per move none (bots' own settings), arena cap 200 plies (draw); rules: anti_blocking=True, \
play_to_end=True, move_limit=None, limit_outcome=draw, stall_limit=None, repetition_limit=None

| player | rating (ordinal) | mu ± sigma | score vs field [95% CI] | mean place [95% CI] | ms/move | max ms |
|---|---|---|---|---|---|---|
| x | 0.00 | 25.00 ± 8.33 | n/a | 1.50 [1.50, 1.50] | n/a | 0.0 |

Share of each player's seats in each place:

| player | place 1 | place 2 | games in seat 0/1 | starts |
|---|---|---|---|---|
| x | 50.0% | 50.0% | 2/2 | 2 |

Finish rate (decided by finishing or resigning, not by a limit): 1/2 = 50.0% [9.5%, 90.5%]; end reasons: \
finished 1, move_limit 1
Mean game length: 45.0 plies (decided games: 40.0); wall time 0.0 s
Mean place by seat: 1.50, 1.50; of the seat that moved first: 1.00"""


# --- the markdown tables ---------------------------------------------------------------------------------


def test_markdown_of_a_match_by_hand() -> None:
    """Every table and line of the report (docs/evaluation.md, "Metrics"), worked out by hand: rows in
    the order of the ratings' ordinals, '-' for a pair that never met, the rule options without the
    variant, seats and first seat, the forfeit and over-budget lines with each player's share (only a total
    until 2026-12-07: which player ran over was not said), the seat-imbalance note."""
    assert _match().markdown() == MATCH_MD


def test_markdown_of_self_play_by_hand() -> None:
    """One player: no win-rate table, 'n/a' for the score and the time per move it never used, no
    budget line without a budget, no forfeit line without a forfeit, no note when the seats balance."""
    assert _self_play().markdown() == SELF_PLAY_MD


def test_markdown_budget_line_without_moves_over_it() -> None:
    res = _self_play()
    res.time_budget = 0.25
    md = res.markdown()
    assert "time per move 0.25 s," in md and md.endswith("\nMoves over the time budget: 0")



def test_markdown_of_two_players_has_the_win_rate_table() -> None:
    res = arena.TournamentResult(["a", "b"], ["a", "b"], Rules("star", 2).to_dict(),
                                 [made_game(0, [0, 1], [2, 1]), made_game(1, [1, 0], [1, 2], first_seat=1)],
                                 0, None, 600)
    res.ratings = lambda: [Rating(20.0, 1.0), Rating(30.0, 1.0)]  # type: ignore[method-assign]
    md = res.markdown()
    assert ("\n| | b | a |\n|---|---|---|\n| b | - | 100.0% [34.2%, 100.0%] (2) |\n"
            "| a | 0.0% [0.0%, 65.8%] (2) | - |\n") in md


# --- results.json ---------------------------------------------------------------------------------------


def test_to_dict_keys_and_games_without_their_records() -> None:
    res = _match()
    res.games[0].record = {"format": "not written here"}
    d = res.to_dict()
    assert list(d) == ["players", "specs", "rules", "seed", "time_budget", "max_plies", "cap_outcome", "summary",
                       "ratings", "players_stats", "pairwise", "games", "versions"]
    assert d["pairwise"] == res.pairwise() and d["pairwise"][0][2] is None
    assert d["ratings"] == {"a": {"mu": 25.0, "sigma": 3.0, "ordinal": 16.0}, "b": {"mu": 20.0, "sigma": 1.0,
                            "ordinal": 17.0}, "c": {"mu": 30.0, "sigma": 2.0, "ordinal": 24.0}}
    assert all("record" not in g for g in d["games"])
    assert set(d["games"][0]) == {"index", "seed", "seats", "first_seat", "places", "player_places", "end_reason",
                                  "plies", "moves", "move_time", "move_count", "max_move_time", "over_budget",
                                  "forfeits", "progress"}
    assert set(d["versions"]) == {"halma_env", "openskill", "numpy", "onnxruntime"}


# --- results.png ----------------------------------------------------------------------------------------


def _plotted(res: arena.TournamentResult, path: Path, monkeypatch) -> Any:
    """The figure ``res.plot`` drew (kept from being closed) after it wrote ``path``."""
    import matplotlib.pyplot as plt

    kept: list[Any] = []
    monkeypatch.setattr(plt, "close", kept.append)
    res.plot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(kept) == 1
    return kept[0]


def test_plot_draws_ratings_and_the_win_rate_heatmap(tmp_path, monkeypatch) -> None:
    """The documented figure: per player (best on top) a dot at mu, a bar over mu ± 3 sigma and a mark at
    the ordinal; beside it the row-vs-column win rates on a 0..1 scale, empty where a pair never met."""
    fig = _plotted(_match(), tmp_path / "r.png", monkeypatch)
    ratings, heat, colorbar = fig.axes  # two panels and the heatmap's colour bar, nothing more
    assert fig.get_suptitle() == "star 2 seats, 3 games"
    assert (ratings.get_title(), heat.get_title()) == ("Ratings", "Win rate, row vs column")
    assert ratings.get_xlabel() == "openskill Plackett-Luce rating (mu ± 3 sigma)"
    assert [t.get_text() for t in ratings.get_yticklabels()] == ["c", "b", "a"]
    assert list(ratings.get_yticks()) == [2, 1, 0]
    (bars,) = ratings.containers
    dots, _caps, (segments,) = bars.lines
    assert list(dots.get_xdata()) == [30.0, 20.0, 25.0] and list(dots.get_ydata()) == [2, 1, 0]
    assert [[list(p) for p in s] for s in segments.get_segments()] == [
        [[24.0, 2.0], [36.0, 2.0]], [[17.0, 1.0], [23.0, 1.0]], [[16.0, 0.0], [34.0, 0.0]]]
    (marks,) = [c for c in ratings.collections if c.get_label() == "ordinal (mu - 3 sigma)"]
    assert marks.get_offsets().tolist() == [[24.0, 2.0], [17.0, 1.0], [16.0, 0.0]]
    assert [t.get_text() for t in ratings.get_legend().get_texts()] == ["ordinal (mu - 3 sigma)"]
    (image,) = heat.images
    grid = image.get_array()
    assert [[None if grid.mask[a][b] else float(grid[a][b]) for b in range(3)] for a in range(3)] == [
        [None, 1.0, None], [0.0, None, 0.25], [None, 0.75, None]]
    assert image.get_clim() == (0, 1)
    assert sorted((t.get_position(), t.get_text()) for t in heat.texts) == [
        ((0, 1), "0.00"), ((1, 0), "1.00"), ((1, 2), "0.75"), ((2, 1), "0.25")]
    assert [t.get_text() for t in heat.get_xticklabels()] == ["c", "b", "a"]
    assert [t.get_text() for t in heat.get_yticklabels()] == ["c", "b", "a"]
    assert colorbar is not None


def test_plot_of_self_play_has_an_empty_heatmap(tmp_path, monkeypatch) -> None:
    fig = _plotted(_self_play(), tmp_path / "r.png", monkeypatch)
    ratings, heat, _ = fig.axes
    assert fig.get_suptitle() == "diamond 2 seats, 2 games"
    assert [t.get_text() for t in ratings.get_yticklabels()] == ["x"] and not heat.texts


# --- the files of --out ----------------------------------------------------------------------------------


def test_save_writes_the_documented_files_in_order(tmp_path) -> None:
    """results.json, results.md (the printed tables and a newline), results.png, then one record per game
    that kept one; nothing half-written (``*.tmp``) is left behind."""
    played = arena.play_game(Rules("star", 2), ["random", "random"], seed=1, max_plies=4, keep_record=True)
    res = _match()
    res.games[2].record = played.record  # only game 2 kept its record
    out = tmp_path / "out"
    paths = res.save(str(out))
    assert paths == [str(out / "results.json"), str(out / "results.md"), str(out / "results.png"),
                     str(out / "games" / "game_00002.json")]
    assert (out / "results.md").read_text() == MATCH_MD + "\n"
    assert json.loads((out / "results.json").read_text()) == json.loads(json.dumps(arena._clean(res.to_dict())))
    assert (out / "results.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "games" / "game_00002.json").read_text())["players"] == ["random", "random"]
    assert sorted(p.name for p in out.rglob("*")) == ["game_00002.json", "games", "results.json", "results.md",
                                                     "results.png"]
    assert res.save(str(out)) == paths  # saved again (a re-report of a loaded run): the same files, rewritten
    assert (out / "results.md").read_text() == MATCH_MD + "\n"


def test_save_refuses_a_folder_with_another_tournaments_records(tmp_path) -> None:
    """Saving a 4-game result, then a 2-game one into the same folder left game_00002/3.json of the first
    beside the second's results.json (``halma eval --out`` refuses such a folder; the method did not)."""
    played = arena.play_game(Rules("star", 2), ["random", "random"], seed=1, max_plies=4, keep_record=True)
    first, second = _match(), _match()
    for g in first.games:
        g.record = played.record
    second.games = [g for g in second.games if g.index == 0]
    second.games[0].record = played.record
    first.save(str(tmp_path))
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=r"holds game records of another tournament \(game_00001\.json, game_0000"):
        second.save(str(tmp_path))
    assert {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing written
    assert first.save(str(tmp_path))  # the same result again: rewritten


def test_a_loaded_result_saved_over_its_own_records_says_why_it_is_refused(tmp_path) -> None:
    """A result read back with load_results has no game records, so its own folder's records are not its own:
    the refusal said they were "another tournament's" (a docs audit, before 2026-12-07)."""
    played = arena.play_game(Rules("star", 2), ["random", "random"], seed=1, max_plies=4, keep_record=True)
    result = _match()
    for g in result.games:
        g.record = played.record
    result.save(str(tmp_path))
    loaded = arena.load_results(str(tmp_path / "results.json"))
    with pytest.raises(ValueError) as caught:
        loaded.save(str(tmp_path))
    assert str(caught.value) == (f"{str(tmp_path)!r} holds game records (game_00000.json, game_00001.json, "
                                 "game_00002.json) and this result has none (a result read back with "
                                 "load_results keeps no records): save it into another directory")
    assert loaded.save(str(tmp_path / "again"))  # (another folder: the tables and results.json, no records)


def test_load_results_names_a_file_that_is_not_json(tmp_path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("not json")
    with pytest.raises(ValueError, match=r"bad\.json: not a halma eval results\.json \(not JSON: Expecting value"):
        arena.load_results(str(path))


def test_save_without_records_still_makes_the_games_folder(tmp_path) -> None:
    paths = _self_play().save(str(tmp_path))
    assert [Path(p).name for p in paths] == ["results.json", "results.md", "results.png"]
    assert (tmp_path / "games").is_dir() and not any((tmp_path / "games").iterdir())


def test_formatting_helpers_say_na_for_a_missing_number() -> None:
    for missing in (None, math.nan):
        assert arena._num(missing) == arena._pct(missing) == arena._interval(missing, 0.1, 0.9) == "n/a"
    assert arena._num(2.25) == "2.2" and arena._num(3) == "3.0"
    assert arena._pct(0.1234) == "12.3%" and arena._pct(1) == "100.0%"
    assert arena._interval(0.5, 0.25, math.nan) == "50.0% [25.0%, n/a]"
    assert arena._interval(1, 0.5, 1) == "100.0% [50.0%, 100.0%]"


def test_game_score_is_the_share_of_opponents_beaten_a_tie_half() -> None:
    assert arena._game_score({0: 1.0, 1: 2.0, 2: 2.0, 3: 1.0}, 0) == pytest.approx(2.5 / 3)
    assert arena._game_score({0: 2.0, 1: 1.0}, 0) == 0.0 and arena._game_score({0: 2.0, 1: 1.0}, 1) == 1.0


def test_json_is_cleaned_and_written_strictly(tmp_path) -> None:
    """NaN (an empty statistic) becomes null, tuples lists, keys strings; what cannot be strict JSON (an
    infinity) is refused rather than written as ``Infinity``, and no ``.tmp`` file is left."""
    data = {1: (math.nan, 2.5, [math.nan, {"k": (1, 2)}]), "s": "text", "n": None, "b": True}
    assert arena._clean(data) == {"1": [None, 2.5, [None, {"k": [1, 2]}]], "s": "text", "n": None, "b": True}
    path = tmp_path / "x.json"
    arena._write_json(str(path), data)
    assert json.loads(path.read_text()) == {"1": [None, 2.5, [None, {"k": [1, 2]}]], "s": "text", "n": None,
                                            "b": True}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]
    with pytest.raises(ValueError):
        arena._write_json(str(tmp_path / "inf.json"), {"x": math.inf})


def test_versions_name_the_packages_a_results_file_depends_on(monkeypatch) -> None:
    from importlib import metadata

    real = metadata.version

    def version(package: str) -> str:
        if package == "onnxruntime":
            raise metadata.PackageNotFoundError(package)
        return real(package)

    monkeypatch.setattr(metadata, "version", version)
    v = arena._versions()
    assert list(v) == ["halma_env", "openskill", "numpy", "onnxruntime"]
    assert v["onnxruntime"] is None and v["numpy"] == real("numpy") and v["halma_env"] == real("halma_env")


# --- load_results ---------------------------------------------------------------------------------------


def test_load_results_of_an_older_file(tmp_path) -> None:
    """A results.json without per-game progress nor wall time loads with none (and re-reports the same
    tables but the wall time); a file of another shape is refused by name."""
    res = _match()
    data = json.loads(json.dumps(arena._clean(res.to_dict())))
    for g in data["games"]:
        del g["progress"]
    data["summary"]["elapsed_s"] = None
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    back = arena.load_results(str(path))
    assert back.elapsed == 0.0 and all(g.progress == [] for g in back.games)
    assert back.games[1].player_places == {1: 1.0, 0: 1.0} and back.time_budget == 0.5
    assert back.cap_outcome == "progress"
    data["summary"]["elapsed_s"] = 12.5
    path.write_text(json.dumps(data))
    assert arena.load_results(str(path)).elapsed == 12.5
    data["games"] = 5  # not a list of games
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"results.json: not a halma eval results.json \(games must be a non-empty "
                                         r"list of games, got 5\)$"):
        arena.load_results(str(path))


def _played_results(tmp_path: Path) -> dict[str, Any]:
    """A real results.json (random against greedy, 4 short games on 2 seats, one capped), as a document."""
    res = arena.run_tournament(["random", "greedy"], Rules("star", 2), 4, seed=3, max_plies=40, time_budget=1.0)
    res.games[0].forfeits = [{"seat": 1, "ply": 3, "move": "1-2", "error": "illegal"}]  # one of each kind of entry
    res.save(str(tmp_path / "played"), plot=False)
    return json.loads((tmp_path / "played" / "results.json").read_text())


def _paths(o: Any, at: tuple = ()) -> Iterator[tuple]:
    """Every place in a JSON document (the keys and indices leading to it)."""
    yield at
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
    for k, v in items:
        yield from _paths(v, (*at, k))


def test_load_results_refuses_a_mutated_file_or_reports_it(tmp_path) -> None:
    """Each of 400 seeded mutations of a real results.json (a value replaced by another type or range, a key
    dropped or added, an entry added to a list) is refused with a ValueError naming the file, or loads and
    every report works (1306 of 1500 such files were accepted, and 147 of them then crashed the reports)."""
    import copy
    import random

    base = _played_results(tmp_path)
    weird = [None, True, 0, -1, 1, 2, 3, 1.5, -0.5, math.nan, math.inf, "", "x", [], {}, [1], [1, 2], {"a": 1},
             {"0": 1.0}, 10**30]
    rng = random.Random(0)
    path = tmp_path / "results.json"
    refused = 0
    for _ in range(400):
        data = copy.deepcopy(base)
        at = rng.choice([p for p in _paths(data) if p])
        node = data
        for k in at[:-1]:
            node = node[k]
        how = rng.random()
        if how < 0.15 and isinstance(node, dict):
            del node[at[-1]]
        elif how < 0.25 and isinstance(node, dict):
            node["extra"] = 1
        elif how < 0.35 and isinstance(node[at[-1]], list):
            node[at[-1]].append(rng.choice(weird))
        else:
            node[at[-1]] = rng.choice(weird)
        path.write_text(json.dumps(data))
        try:
            res = arena.load_results(str(path))
        except ValueError as e:
            assert str(e).startswith(f"{path}: not a halma eval results.json ("), (at, e)
            refused += 1
            continue
        res.markdown(), res.summary(), res.player_stats(), res.pairwise()  # each must work
        assert len(res.ratings()) == len(res.players)
    assert 100 < refused < 400  # both kinds were met (the statistics' own keys are recomputed, not read)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["games"][1].update(max_move_time=[]),
     r"games\[1\]: max_move_time must be a list of 2 times in seconds >= 0 \(one per seat\), got \[\]"),
    (lambda d: d["games"][0].update(seats=[0, 2]), r"games\[0\]: seats must be a list of 2 player indices 0\.\.1"),
    (lambda d: d["games"][2].update(places=[1, 3]), r"games\[2\]: places must be a list of 2 places 1\.\.2"),
    (lambda d: d["games"][0]["player_places"].update({"0": 1.5}),
     r"games\[0\]: player_places must be each seated player's mean place"),
    (lambda d: d["games"][3].update(end_reason=0), r"games\[3\]: end_reason must be one of finished, .*max_plies"),
    (lambda d: d["games"][0].update(first_seat="x"), r"games\[0\]: first_seat must be a seat 0\.\.1, got 'x'"),
    (lambda d: d["games"][0].update(plies=True), r"games\[0\]: plies must be an integer >= 0, got True"),
    (lambda d: d["games"][0]["forfeits"][0].update(seat=5), r"games\[0\]: forfeits\[0\] must be \{seat: 0\.\.1"),
    (lambda d: d["games"][1].update(progress=[[1, 2]]), r"games\[1\]: progress must be a list of 2 \[in goal"),
    (lambda d: d["games"][1].update(record={}), r"games\[1\]: unknown key\(s\) 'record'"),
    (lambda d: d["games"][1].update(index=0), r"the games' indices repeat: \[0, 0, 2, 3\]"),
    (lambda d: d.update(time_budget=[1]), r"time_budget must be null or a number of seconds > 0, got \[1\]"),
    (lambda d: d.update(players=["a", "a"]), r"players must be distinct"),
    (lambda d: d.update(summary=[]), r"summary must be an object"),
    (lambda d: d["rules"].pop("variant"), r"rules: missing option\(s\) variant"),
    (lambda d: d.update(extra=1), r"unknown key\(s\) 'extra'"),
], ids=["max_move_time", "seats", "places", "player_places", "end_reason", "first_seat", "plies", "forfeits",
        "progress", "record", "indices", "time_budget", "players", "summary", "rules", "extra"])
def test_load_results_names_the_file_the_game_and_the_field(tmp_path, change, message) -> None:
    data = _played_results(tmp_path)
    change(data)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not a halma eval results\.json \({message}"):
        arena.load_results(str(path))


def test_load_results_refuses_a_key_given_twice(tmp_path) -> None:
    """json's "the last one wins" loaded a file whose seed (or a game's places) was given twice, dropping
    the first value without a word."""
    data = _played_results(tmp_path)
    path = tmp_path / "results.json"
    path.write_text('{"seed": 999, ' + json.dumps(data)[1:])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not a halma eval results\.json \(key 'seed' "
                                         r"appears twice in one object\)$"):
        arena.load_results(str(path))
    text = json.dumps(data)
    path.write_text(text.replace('"plies": ', '"plies": 7, "plies": ', 1))
    with pytest.raises(ValueError, match=r"\(key 'plies' appears twice in one object\)$"):
        arena.load_results(str(path))


def test_load_results_of_deep_json_a_folder_a_missing_file_or_a_large_one_is_a_value_error(tmp_path,
                                                                                          monkeypatch) -> None:
    """100,000 nested [ raised RecursionError, a folder IsADirectoryError and a missing file
    FileNotFoundError (not the ValueError the other loaders give); nothing bounded what was read."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(deep))}: not a halma eval results\.json \(not JSON: "
                                         r"nested too deeply\)$"):
        arena.load_results(str(deep))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path))}: not a halma eval results\.json \(it is a "
                                         r"directory, not a regular file\)$"):
        arena.load_results(str(tmp_path))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path / 'gone.json'))}: cannot read it \("):
        arena.load_results(str(tmp_path / "gone.json"))
    assert arena.MAX_RESULTS_BYTES == 1 << 30  # docs/evaluation.md
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_played_results(tmp_path)))
    size = path.stat().st_size
    monkeypatch.setattr(arena, "MAX_RESULTS_BYTES", size - 1)
    with pytest.raises(ValueError, match=rf"\(it holds {size} bytes, more than the {size - 1} a results file may\)$"):
        arena.load_results(str(path))
    monkeypatch.setattr(arena, "MAX_RESULTS_BYTES", size)
    assert arena.load_results(str(path)).games


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_load_results_refuses_a_fifo_or_device_without_waiting(tmp_path) -> None:
    """A FIFO named as the results file waited for ever for a writer (a device such as /dev/zero was read
    without end): refused unread, naming what it is."""
    fifo = tmp_path / "results.json"
    refused = r"results\.json \(it is a FIFO, not a regular file\)$"
    with fifo_refused_at_once(fifo), pytest.raises(ValueError, match=refused):
        arena.load_results(str(fifo))
    if Path("/dev/null").exists():  # (empty, so the old code did not hang on it: it stands for /dev/zero)
        with pytest.raises(ValueError, match=r"^/dev/null: not a halma eval results\.json \(it is a device, not a "
                                             r"regular file\)$"):
            arena.load_results("/dev/null")


# --- worker processes ------------------------------------------------------------------------------------


class _FakeTorch:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def set_num_threads(self, n: int) -> None:
        self.threads.append(n)


def test_a_worker_gives_torch_one_thread(monkeypatch) -> None:
    """OMP_NUM_THREADS=1 and MKL_NUM_THREADS=1 for a torch imported later (docs/evaluation.md, --workers),
    and set_num_threads(1) for one imported already; the machine's core count does not matter here."""
    import os
    import sys

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "4")
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    one_thread_per_worker()
    assert (os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == ("1", "1")
    fake = _FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    one_thread_per_worker()
    assert fake.threads == [1]


# --- run_tournament --------------------------------------------------------------------------------------


class _Pool:
    """concurrent.futures' ProcessPoolExecutor, played in this process: records how it was made."""

    made: list[tuple[int, str, Any]] = []

    def __init__(self, workers: int, mp_context: Any = None, initializer: Any = None, initargs: tuple = ()) -> None:
        _Pool.made.append((workers, mp_context.get_start_method(), initializer))
        self.futures: list[Any] = []

    def submit(self, f: Any, task: Any) -> Any:
        from concurrent.futures import Future

        future: Future[Any] = Future()
        future.set_result(f(task))
        self.futures.insert(0, future)  # in an order of its own: the result sorts them back
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        return None


def test_workers_default_to_one_per_core_and_never_exceed_the_games(monkeypatch) -> None:
    import concurrent.futures
    import os

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _Pool)
    _Pool.made.clear()
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    res = arena.run_tournament(["random", "greedy"], Rules("star", 2), 4, workers=None, max_plies=2)
    assert [g.index for g in res.games] == [0, 1, 2, 3]
    pooled = arena.run_tournament(["random", "greedy"], Rules("star", 2), 2, workers=5, max_plies=2)
    serial = arena.run_tournament(["random", "greedy"], Rules("star", 2), 2, max_plies=2)
    assert [g.moves for g in pooled.games] == [g.moves for g in serial.games]
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one process, no pool
    arena.run_tournament(["random", "greedy"], Rules("star", 2), 2, workers=None, max_plies=2)
    assert _Pool.made == [(3, "spawn", one_thread_per_worker), (2, "spawn", one_thread_per_worker)]


def test_run_tournament_refuses_no_player_by_its_own_message() -> None:
    with pytest.raises(ValueError, match="^a tournament needs at least one player$"):
        arena.run_tournament([], Rules("star", 2), 1)


def test_progress_bar_names_the_command_and_counts_games(capsys) -> None:
    arena.run_tournament(["random", "greedy"], Rules("star", 2), 2, max_plies=2, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and _bar(err, 2)


def test_eval_draws_its_bar_on_a_terminal_only(capsys, monkeypatch) -> None:
    """``halma eval ... 2> log`` wrote the bar's carriage-return frames into the log: one endless line."""
    import sys

    argv = ["eval", "greedy", "random", "--games", "2", "--max-plies", "20", "--workers", "1"]
    assert not sys.stderr.isatty()  # pytest's capture
    assert cli_main(argv) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "game/s" not in err
    monkeypatch.setattr(sys, "stderr", terminal := TerminalText())
    assert cli_main(argv) == 0
    assert _bar(terminal.getvalue(), 2)
    terminal.seek(0)
    terminal.truncate()
    assert cli_main([*argv, "--quiet"]) == 0 and terminal.getvalue() == ""  # and none with --quiet


def test_eval_writes_status_lines_into_a_log(capsys, monkeypatch) -> None:
    """Where stderr is no terminal (halma eval ... 2> log) there was no bar and nothing else: a long tournament
    said nothing until its table.  A line comes every STATUS_EVERY seconds (60) instead, none after the last game
    (the table follows) and none with --quiet."""
    monkeypatch.setattr(arena, "STATUS_EVERY", 1e-9)
    argv = ["eval", "greedy", "random", "--games", "3", "--max-plies", "20", "--workers", "1"]
    assert cli_main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(r"\d+ s", "N s", line) for line in lines] == [
        "halma eval: 1/3 games in N s, about N s left", "halma eval: 2/3 games in N s, about N s left"], lines
    assert cli_main([*argv, "--quiet"]) == 0 and capsys.readouterr().err == ""
    with pytest.raises(ValueError, match=r"^status_every must be > 0 seconds"):
        arena.run_tournament(["random"], Rules("star", 2), 2, status_every=0)


def test_eval_draws_its_bar_on_a_terminal_of_no_size() -> None:
    """A pseudo-terminal opened without a size (script, docker run -t) reports 0 x 0, and tqdm drew nothing there:
    no bar, and (stderr being a terminal) no lines in its place.  The bar takes $COLUMNS x $LINES or 80 x 24 now."""
    import sys

    from tests.process_helpers import run_on_a_sizeless_terminal

    status, out = run_on_a_sizeless_terminal(
        [sys.executable, "-m", "agents.cli", "eval", "greedy", "random", "--games", "2", "--max-plies", "20",
         "--workers", "1"], cwd=Path(__file__).resolve().parents[1])
    assert status == 0 and _bar(out, 2), out


def test_a_trained_player_of_another_game_is_refused_with_the_flags_that_play_it(capsys, tmp_path) -> None:
    """halma eval and halma play play star unless told: a diamond checkpoint (or a star model under --variant
    diamond) was refused without a word on the flags that play its game."""
    root = Path(__file__).resolve().parents[1]
    diamond = str(root / "agents" / "checkpoints" / "diamond2.pt")
    star_model = str(root / "agents" / "ladder" / "star-2-star2.onnx")
    assert cli_main(["eval", diamond, "greedy", "--games", "2"]) == 2
    assert capsys.readouterr().err.endswith(" (to play its game: --variant diamond --seats 2)\n")
    assert cli_main(["eval", f"{star_model}:temperature=1", "greedy", "--variant", "diamond", "--games", "2"]) == 2
    assert capsys.readouterr().err.endswith(" (to play its game: --variant star --seats 2)\n")
    assert cli_main(["play", "--players", f"human,{diamond}"]) == 2
    assert capsys.readouterr().err.endswith(" (to play its game: --variant diamond --seats 2)\n")
    import shutil

    folder = tmp_path / "a:b"  # a colon in the path, before the model's own options
    folder.mkdir()
    for name in ("star-2-star2.onnx", "star-2-star2.manifest.json"):
        shutil.copy(root / "agents" / "ladder" / name, folder / name)
    assert cli_main(["eval", f" {folder / 'star-2-star2.onnx'}:temperature=0.5", "greedy", "--seats", "3",
                     "--games", "3"]) == 2
    assert capsys.readouterr().err.endswith(" (to play its game: --variant star --seats 2)\n")
    assert cli_main(["eval", "greedy", "nosuch.pt", "--games", "2"]) == 2  # unreadable: its own error, no hint
    assert "to play its game" not in capsys.readouterr().err


def _bar(err: str, games: int) -> bool:
    """A finished tqdm bar named "halma eval" that counts games (``... 2/2 [00:00<00:00, 15.3game/s]``)."""
    import re

    return bool(re.search(rf"(^|\r)halma eval: 100%\|.*\| {games}/{games} \[.*[\d?]game/s\]", err))


# --- the solitaire crossing ------------------------------------------------------------------------------


def _solo_games() -> list[arena.GameResult]:
    return [made_game(0, [0], [1], plies=31, move_time=[0.062], move_count=[31]),
            made_game(1, [0], [1], "max_plies", plies=40, move_time=[0.018], move_count=[40]),
            made_game(2, [0], [1], plies=28, move_time=[0.02], move_count=[28])]


SOLO_HEAD = """\
### Solitaire crossing (star, 1 seat): moves to bring all 10 pieces across

| agent | games | finished | mean moves | best | optimum | mean - optimum | ms/move |
|---|---|---|---|---|---|---|---|
"""


def test_solo_result_by_hand() -> None:
    """solo.json and the table: mean and best over the finished games only, the gap to the optimum 27,
    the time per move over every move of every game."""
    res = arena.SoloResult("bot", _solo_games(), 40, 5)
    assert res.to_dict() == {"agent": "bot", "optimum": 27, "games": 3, "finished": 2, "moves": [31, 40, 28],
                             "finished_moves": [31, 28], "best": 28, "mean": 29.5, "max_plies": 40, "seed": 5,
                             "ms_per_move": pytest.approx(100 / 99, rel=1e-12)}
    assert res.markdown() == SOLO_HEAD + (
        "| bot | 3 | 2/3 | 29.5 | 28 | 27 | +2.5 | 1.0 |\n\nUnfinished games stop at 40 moves (seed 5).")


def test_solo_result_without_a_finish_or_a_move() -> None:
    unfinished = arena.SoloResult("bot", [_solo_games()[1]], 40, 5)
    assert unfinished.markdown() == SOLO_HEAD + (
        "| bot | 1 | 0/1 | n/a | n/a | 27 | n/a | 0.5 |\n\nUnfinished games stop at 40 moves (seed 5).")
    d = unfinished.to_dict()
    assert (d["best"], d["mean"], d["finished_moves"]) == (None, None, [])
    # no move at all: 0 ms per move, not a division by zero; one move: its own time
    assert arena.SoloResult("bot", [made_game(0, [0], [1], "max_plies", plies=0)], 1, 0).to_dict()["ms_per_move"] == 0.0
    one = arena.SoloResult("bot", [made_game(0, [0], [1], "max_plies", plies=1, move_time=[0.004], move_count=[1])],
                           1, 0)
    assert one.to_dict()["ms_per_move"] == pytest.approx(4.0)


def test_run_solo_defaults_to_one_game_seeded_by_zero() -> None:
    res = arena.run_solo("random", max_plies=3)
    assert (len(res.games), res.seed, res.max_plies, res.agent) == (1, 0, 3, "random")
    assert res.games[0].seed == arena.derive_seed(0, 0) and res.games[0].record is None
    assert res.games[0].plies == 3 and res.games[0].seats == [0]
    assert [g.moves for g in arena.run_solo("random", 2, seed=4, max_plies=3).games] == [
        arena.play_game(Rules("star", 1), ["random"], arena.derive_seed(4, g), max_plies=3).moves for g in range(2)]


def test_run_solo_refuses_no_games() -> None:
    for games in (0, -1):
        with pytest.raises(ValueError, match=f"^games must be >= 1 \\(an integer\\), got {games}$"):
            arena.run_solo("random", games, max_plies=3)


# --- the command: halma eval ------------------------------------------------------------------------------


def _eval(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli_main(["eval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_prints_the_results_document_that_out_writes(tmp_path, capsys) -> None:
    """--json: stdout is one JSON object, the document --out writes (results.json, solo.json), and the
    notice of the files written goes to stderr, so `halma eval ... --json > r.json` holds the results only."""
    import json

    code, out, err = _eval(capsys, "greedy", "random", "--games", "2", "--max-plies", "40", "--quiet", "--json",
                           "--out", str(tmp_path / "match"))
    assert code == 0 and "wrote " in err
    assert json.loads(out) == json.loads((tmp_path / "match" / "results.json").read_text())
    code, out, err = _eval(capsys, "--solo", "greedy", "--json", "--out", str(tmp_path / "solo"))
    assert code == 0 and "wrote " in err
    assert json.loads(out) == json.loads((tmp_path / "solo" / "solo.json").read_text())
    code, out, _ = _eval(capsys, "greedy", "random", "--games", "2", "--max-plies", "40", "--quiet")
    assert code == 0 and out.startswith("### ")  # the tables without it


class _First:
    """Plays the first legal move (a player made by a test's factory)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def select_move(self, game: Any, time_budget: float | None = None) -> Any:
        return game.legal_moves()[0]


def _first_factory(name: str, seed: int | None = None) -> _First:
    return _First(name)


def _run(*argv: str, factory: Any = _first_factory) -> int:
    """``halma eval ARGV`` through ``arena.run`` with another player factory."""
    import argparse

    p = argparse.ArgumentParser()
    arena.add_arguments(p)
    return arena.run(p.parse_args(list(argv)), factory)


TIME_ERROR = "--time-per-move must be > 0 seconds (a finite number) or none"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["greedy", "random", "--games", "-1"], "--games must be 1..10,000,000, got -1"),
        (["greedy", "random", "--workers", "0"], "--workers must be >= 1, got 0"),
        (["greedy", "random", "--max-plies", "0"], "--max-plies must be >= 1, got 0"),
        (["greedy", "random", "--time-per-move", "0"], f"{TIME_ERROR}, got 0.0"),
        (["greedy", "random", "--time-per-move", "-0.5"], f"{TIME_ERROR}, got -0.5"),
        (["greedy", "random", "--time-per-move", "nan"], f"{TIME_ERROR}, got nan"),
        (["greedy", "random", "--time-per-move", "inf"], f"{TIME_ERROR}, got inf"),
        (["--solo", "greedy", "--time-per-move", "inf"], "--time-per-move must be > 0 seconds (a finite number)"),
        (["greedy", "random", "--seed", "-1"], "--seed must be >= 0 (an integer), got -1"),
        (["--solo", "greedy", "--games", "0"], "--games must be 1..10,000,000, got 0"),
        (["--solo", "greedy", "--max-plies", "0"], "--max-plies must be >= 1, got 0"),
        (["--solo", "greedy", "--seats", "2"], "--solo is the star solitaire (1 seat, default rules); drop "),
        (["--solo", "greedy", "--rule", "move_limit=5"], "--solo is the star solitaire"),
        (["--solo", "greedy", "--preset", "kawu"], "--solo is the star solitaire"),
        (["random"] * 7, "7 players do not fit one star game (1, 2, 3, 4, 5, 6 seats); pass --seats (players then "
                         "share games by subsets)"),
        (["random"] * 4 + ["--variant", "diamond"], "4 players do not fit one diamond game (2, 3 seats)"),
        (["greedy", "random", "--rule", "nosuch=1"],
         "unknown rule option 'nosuch'; known: anti_blocking, play_to_end, move_limit, limit_outcome, stall_limit, "
         "repetition_limit\n"),
        (["greedy", "random", "--rule", "anti_blockng=off"],
         "unknown rule option 'anti_blockng' (did you mean 'anti_blocking'?); known: anti_blocking, play_to_end, "),
        (["greedy", "random", "--preset", "qdan", "--variant", "halma16"],
         "the qdan preset is a star rule set; it cannot be used with --variant halma16"),
    ],
)
def test_cli_refuses_bad_input_before_any_game(tmp_path, capsys, argv: list[str], message: str) -> None:
    """Exit code 2, ``halma eval: error: ...`` naming the problem, nothing printed on stdout, and the
    --out directory not even created."""
    out_dir = tmp_path / "o"
    code, out, err = _eval(capsys, *argv, "--quiet", "--out", str(out_dir))
    assert code == 2 and out == "" and err.startswith("halma eval: error: ") and message in err, err
    assert not out_dir.exists()


def test_cli_7_players_on_the_star_fit_with_seats(capsys) -> None:
    """``pass --seats``: seven players share 3-seat games by subsets; five get five seats by default."""
    code, out, _ = _eval(capsys, *["random"] * 7, "--seats", "3", "--games", "1", "--max-plies", "1", "--quiet")
    assert code == 0 and out.startswith("### star, 3 seats: random vs random#2 vs random#3 vs random#4 vs random#5 "
                                        "vs random#6 vs random#7\n")
    code, out, _ = _eval(capsys, *["random"] * 5, "--games", "1", "--max-plies", "1", "--quiet")
    assert code == 0 and out.startswith("### star, 5 seats: ")


@pytest.mark.parametrize("previous", ["results.json", "solo.json", "games"])
def test_cli_refuses_an_out_dir_that_holds_results(tmp_path, capsys, previous: str) -> None:
    if previous == "games":
        (tmp_path / previous).mkdir()
    else:
        (tmp_path / previous).write_text("{}")
    (tmp_path / "notes.txt").write_text("mine")  # anything else does not count as results
    code, out, err = _eval(capsys, "greedy", "random", "--games", "1", "--quiet", "--out", str(tmp_path))
    assert code == 2 and out == ""
    assert err == (f"halma eval: error: --out {str(tmp_path)!r} already holds results ({previous}); choose another "
                   "directory or remove them\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([previous, "notes.txt"])


def test_cli_refuses_an_empty_out(capsys) -> None:
    code, out, err = _eval(capsys, "greedy", "random", "--games", "1", "--quiet", "--out", "")
    assert (code, out, err) == (2, "", "halma eval: error: --out needs a directory, got ''\n")  # it wrote nothing


def test_without_matplotlib_a_refused_out_says_only_why_and_save_names_the_extra(tmp_path, capsys,
                                                                                  monkeypatch) -> None:
    """Without matplotlib the note that --out writes no results.png came before the refusal of the --out
    itself; and TournamentResult.save (plot=True by default) raised a bare ModuleNotFoundError."""
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    code, out, err = _eval(capsys, "greedy", "random", "--games", "1", "--quiet", "--out", "")
    assert (code, out, err) == (2, "", "halma eval: error: --out needs a directory, got ''\n")
    res = arena.run_tournament(["random", "greedy"], Rules("star", 2), 2, workers=None, max_plies=2,
                               keep_records=True)
    with pytest.raises(ModuleNotFoundError, match=r"^the results plot needs matplotlib: matplotlib is not "
                                                  r"installed: it comes with the plots extra .*; or "
                                                  r"save\(out_dir, plot=False\)$"):
        res.save(str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()  # staged: nothing of a failed save is left
    assert sorted(p.name for p in Path(res.save(str(tmp_path / "out"), plot=False)[0]).parent.iterdir()) == [
        "games", "results.json", "results.md"]


def test_cli_names_an_out_folder_with_a_control_character_escaped(tmp_path, capsys) -> None:
    """The closing line named the --out folder as it was given: one holding an escape sequence (a pasted name)
    reached the terminal and turned the rest of the output red.  It is shown escaped, as file names are elsewhere
    (shown_path)."""
    out_dir = tmp_path / "a\x1b[31mb"
    code, out, _ = _eval(capsys, "random", "random", "--games", "2", "--max-plies", "2", "--quiet",
                         "--out", str(out_dir))
    assert code == 0 and "\x1b" not in out
    assert out.endswith(f"\n\nwrote 5 files to {str(out_dir)!r} (results.json, results.md, results.png, games/)\n")
    assert (out_dir / "results.json").is_file()


def test_cli_writes_into_an_existing_empty_or_unrelated_dir(tmp_path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, out, _ = _eval(capsys, "random", "random", "--games", "2", "--max-plies", "2", "--quiet",
                         "--out", str(tmp_path))
    assert code == 0 and out.endswith(f"\n\nwrote 5 files to {tmp_path} (results.json, results.md, results.png, "
                                      "games/)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games", "notes.txt", "results.json", "results.md",
                                                          "results.png"]
    assert len(list((tmp_path / "games").iterdir())) == 2
    assert (tmp_path / "results.md").read_text() == out[: out.index("\n\nwrote")] + "\n"


@pytest.mark.parametrize("error", [ValueError("bad spec"), FileNotFoundError("no file"), KeyError("no key"),
                                   ImportError("no module")])
def test_cli_names_a_player_that_cannot_be_made(tmp_path, capsys, error: Exception) -> None:
    def factory(name: str, seed: int | None = None) -> _First:
        if name == "bad":
            raise error
        return _First(name)

    assert _run("good", "bad", "--quiet", "--out", str(tmp_path / "o"), factory=factory) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"halma eval: error: cannot make player 'bad': {error}\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("error", [ValueError("plays diamond"), OSError("model file gone"),
                                   RuntimeError("the runtime refuses")])
def test_every_start_check_refuses_a_player_alike(error: Exception) -> None:
    """halma eval, the environments and halma play ask a player for a move in the starting position through
    one probe: a ValueError, OSError or RuntimeError it raises refuses it in all three with the same message
    (eval and the environments let the last two through as tracebacks); a TypeError, a bug, passes as it is."""
    from agents.play import PlaySession
    from agents.registry import check_players
    from halma_env.envs.players import check_player

    class Failing(_First):
        def __init__(self, exc: Exception) -> None:
            super().__init__("failing")
            self.exc = exc

        def select_move(self, game: Any, time_budget: float | None = None) -> Any:
            raise self.exc

    rules = Rules("star", 3)
    expected = f"player 'p' cannot play star with 3 seats: {error}"
    with pytest.raises(ValueError) as eval_error:
        check_players(["p"], lambda _name, _seed: Failing(error), rules)
    with pytest.raises(ValueError) as env_error:
        check_player(Failing(error), "p", rules)
    with pytest.raises(ValueError) as play_error:
        PlaySession.check_player(2, "p", Failing(error), rules)
    assert (str(eval_error.value), str(env_error.value), str(play_error.value)) == (
        expected, expected, f"seat 2's {expected}")
    bug = TypeError("a bug")
    for check in (lambda: check_players(["p"], lambda _name, _seed: Failing(bug), rules),
                  lambda: check_player(Failing(bug), "p", rules),
                  lambda: PlaySession.check_player(2, "p", Failing(bug), rules)):
        with pytest.raises(TypeError, match="^a bug$"):
            check()


def test_cli_names_a_player_that_cannot_play_the_game(capsys) -> None:
    class Refuses(_First):
        def select_move(self, game: Any, time_budget: float | None = None) -> Any:
            assert time_budget == 0.05  # a short look at the start position, not a full move
            raise ValueError("wrong board")

    def factory(name: str, seed: int | None = None) -> _First:
        assert seed == 0
        return Refuses(name) if name == "no" else _First(name)

    assert _run("yes", "no", "--variant", "diamond", "--seats", "3", factory=factory) == 2
    assert capsys.readouterr().err == "halma eval: error: player 'no' cannot play diamond with 3 seats: wrong board\n"
    assert _run("--solo", "no", factory=factory) == 2
    assert capsys.readouterr().err == "halma eval: error: player 'no' cannot play star with 1 seat: wrong board\n"


def test_cli_match_defaults(capsys, monkeypatch) -> None:
    """100 games, seed 0, the cap 300 plies per seat drawing, the progress bar on (on a terminal), no files."""
    import sys

    monkeypatch.setattr(sys, "stderr", terminal := TerminalText())
    assert _run("x", "y", "--rule", "move_limit=1") == 0
    out = capsys.readouterr().out
    assert out.startswith("### star, 2 seats: x vs y\n\n100 games, seed 0, time per move none (bots' own settings), "
                          "arena cap 600 plies (draw); rules: ")
    assert _bar(terminal.getvalue(), 100) and "wrote" not in out
    monkeypatch.undo()
    assert _run("x", "y", "--seats", "3", "--games", "3", "--quiet", "--max-plies", "4", "--cap-outcome", "progress",
                "--seed", "9") == 0
    out, err = capsys.readouterr()
    assert out.startswith("### star, 3 seats: x vs y\n\n3 games, seed 9, time per move none (bots' own settings), "
                          "arena cap 4 plies (progress);") and err == ""
    assert _run("x", "--quiet", "--games", "2", "--rule", "move_limit=1") == 0  # one player plays itself, 2 seats
    assert capsys.readouterr().out.startswith("### star, 2 seats: x\n\n2 games, seed 0,")
    assert _run("x", "y", "--quiet", "--games", "1", "--max-plies", "2", "--time-per-move", "0.5") == 0
    assert "\n1 games, seed 0, time per move 0.5 s, arena cap 2 plies (draw); " in capsys.readouterr().out
    assert _run("x", "y", "--quiet", "--games", "1", "--max-plies", "2", "--workers", "1") == 0


def test_cli_presets_are_star_rule_sets(capsys) -> None:
    code, out, _ = _eval(capsys, "random", "random", "--preset", "qdan", "--games", "1", "--max-plies", "2",
                         "--quiet")
    assert code == 0 and "### star, 2 seats" in out


def test_cli_solo_defaults_and_files(tmp_path, capsys) -> None:
    """One game, seed 0, the cap 300 moves; --out writes solo.json, solo.md and the game records."""
    assert _run("--solo", "first", "--seats", "1") == 0
    out = capsys.readouterr().out
    assert "| first | 1 | 0/1 | n/a | n/a | 27 | n/a |" in out
    assert out.endswith("\n\nUnfinished games stop at 300 moves (seed 0).\n")
    out_dir = tmp_path / "solo"
    assert _run("--solo", "first", "--games", "2", "--max-plies", "3", "--seed", "4", "--out", str(out_dir)) == 0
    out = capsys.readouterr().out
    assert out.endswith(f"\n\nwrote {out_dir}/solo.json, solo.md and 2 game records\n")
    table = out[: out.index("\n\nwrote")]
    assert (out_dir / "solo.md").read_text() == table + "\n" and "(seed 4)" in table
    data = json.loads((out_dir / "solo.json").read_text())
    assert (data["agent"], data["games"], data["moves"], data["max_plies"], data["seed"]) == ("first", 2, [3, 3], 3, 4)
    assert sorted(p.name for p in (out_dir / "games").iterdir()) == ["game_00000.json", "game_00001.json"]
    assert sorted(p.name for p in out_dir.iterdir()) == ["games", "solo.json", "solo.md"]


# --- the halma dispatcher (agents/cli.py) ------------------------------------------------------------------


def test_halma_without_a_command_prints_help_and_exits_2(capsys, monkeypatch) -> None:
    """``halma`` alone (or with only an option) is a usage error; ``halma -h``/``--help`` is not. The
    arguments come from sys.argv when none are passed."""
    import sys

    from agents.cli import COMMANDS

    for argv, code in [([], 2), (["-h"], 0), (["--help"], 0)]:
        monkeypatch.setattr(sys, "argv", ["halma", *argv])
        assert cli_main() == code, argv
        out, err = capsys.readouterr()
        assert out.startswith("usage: halma [-h] [--version] COMMAND ...") and err == ""
        assert all(f"    {name} " in out for name in COMMANDS)


@pytest.mark.parametrize(("argv", "message"), [
    (["--verbose"], "halma: error: unrecognized arguments: --verbose\n"),
    (["--quiet", "eval", "greedy", "random"], "halma: error: --quiet goes after the command: halma eval --quiet ...\n"),
    (["eval", "greedy", "random", "--gam", "1"],
     "halma eval: error: unrecognized arguments: --gam (did you mean '--games'?) 1\n"),
    (["play", "--levle=hard", "--seat", "3"],
     "halma play: error: unrecognized arguments: --levle=hard (did you mean '--level'?) --seat (did you mean "
     "'--seats'?) 3\n"),
    (["perft", "2", "--quiet"], "halma perft: error: unrecognized arguments: --quiet\n"),  # nothing near
    # the dashes every flag shares made --level near --seed; a flag after -- is no misspelling of itself
    (["eval", "greedy", "random", "--level", "hard"], "halma eval: error: unrecognized arguments: --level hard\n"),
    (["perft", "2", "--", "--divide"], "halma perft: error: unrecognized arguments: --divide\n"),
    # after -- a word is no flag to mend; a flag's opposite is no suggestion; another command's flag is not
    # "near" a short one of this command (difflib's 0.6 made --ladder near --players)
    (["export", "x.pt", "--", "--levle"], "halma export: error: unrecognized arguments: --levle\n"),
    (["ladder", "--no-dry-run"], "halma ladder: error: unrecognized arguments: --no-dry-run\n"),
    (["play", "--ladder", "x.json"], "halma play: error: unrecognized arguments: --ladder x.json\n"),
])
def test_halma_names_a_flag_it_cannot_place(capsys, argv: list[str], message: str) -> None:
    """An unknown top-level flag is named (it printed the help and nothing else), a command's flag before the
    command is told where it goes, and no flag is taken from an abbreviation; a misspelt flag is given the
    command's nearest one, as misspelt player names, rule options and config keys are."""
    with pytest.raises(SystemExit) as exit_:
        cli_main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == "" and err.endswith(message)


@pytest.mark.parametrize(("argv", "message"), [
    (["train", ""], "halma train: error: a config file path is empty"),
    (["export", ""], "halma export: error: a checkpoint path is empty"),
    (["ladder", "--ladder", "", "random", "greedy"], "halma ladder: error: a ladder file path is empty"),
    (["play", "--replay", ""], "halma play: error: a game record path is empty"),
    (["export", "agents/checkpoints/star2.pt", "--out", ""], "halma export: error: --out needs a directory, got ''"),
    (["train", "quickstart", "--runs-dir", ""], "halma train: error: --runs-dir needs a directory, got ''"),
])
def test_an_empty_path_is_named_as_empty(capsys, argv: list[str], message: str) -> None:
    """Path('') is '.': an empty path was 'a directory' (and halma play --replay '' started a new game)."""
    assert cli_main(argv) == 2
    assert capsys.readouterr().err.startswith(message)


def test_every_command_s_help_ends_with_examples_that_parse(capsys) -> None:
    import shlex

    from agents.cli import COMMANDS, EXAMPLES, build_parser

    assert set(EXAMPLES) == set(COMMANDS)
    for name, lines in EXAMPLES.items():
        parser = build_parser(load=name)
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        assert capsys.readouterr().out.endswith("examples:\n" + "".join(f"  {line}\n" for line in lines))
        for line in lines:
            words = shlex.split(line)
            assert words[:2] == ["halma", name]
            assert parser.parse_args(words[1:]).command == name  # every flag known, every value of its type


def test_halma_version_names_the_package_and_the_encoding(capsys) -> None:
    """``halma --version`` alone prints the version; beside a command it is an error, not ignored."""
    import importlib.metadata

    from halma_env import __version__
    from halma_env.encoding import ENCODING_VERSION

    assert importlib.metadata.version("halma_env") == __version__  # pyproject reads it from the package
    assert cli_main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert out == f"halma_env {__version__} (observation and action encoding version {ENCODING_VERSION})\n"
    assert err == ""
    for argv, message in [
        (["--version", "show"], "halma: error: --version goes alone ('halma --version'), not with the show command\n"),
        (["show", "--version"], "halma show: error: --version goes alone ('halma --version'), not with the show "
                                "command\n"),
    ]:
        with pytest.raises(SystemExit) as info:
            cli_main(argv)
        out, err = capsys.readouterr()
        assert info.value.code == 2 and out == "" and err.endswith(message), (argv, err)


def test_halma_names_an_unknown_command(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main(["--quiet", "nosuch", "x"])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.endswith("halma: error: unknown command 'nosuch'; choose from show, perft, bench, eval, "
                                      "train, export, ladder, play\n")


def test_halma_returns_the_commands_status(monkeypatch, capsys) -> None:
    """0 for a command that returns nothing, else its own status (2 for bad input); its own parser
    (with its arguments, the module's add_arguments) parses the arguments."""
    import argparse

    statuses: list[int | None] = [None, 0, 2, 3]
    seen: list[argparse.Namespace] = []

    def run(args: argparse.Namespace) -> int | None:
        seen.append(args)
        return statuses[len(seen) - 1]

    monkeypatch.setattr(arena, "run", run)
    assert [cli_main(["eval", "greedy", "--games", "3"]) for _ in statuses] == [0, 0, 2, 3]
    assert seen[0].command == "eval" and seen[0].players == ["greedy"] and seen[0].games == 3
    assert not hasattr(seen[0], "command_parser")


def test_flags_given_counts_zero_but_not_false_or_none() -> None:
    import argparse

    from agents.cli import flags_given

    args = argparse.Namespace(a=None, b=0, c=False, d=True, max_plies=5, e="")
    assert flags_given(args, ("a", "b", "c", "d", "max_plies", "e")) == ["--b", "--d", "--max-plies", "--e"]
    assert flags_given(args, ()) == []


def test_build_parser_loads_only_the_command_asked_for() -> None:
    from agents.cli import build_parser

    bare = build_parser()
    assert bare.parse_args(["bench"]).command == "bench" and not hasattr(bare.parse_args(["bench"]), "target")
    loaded = build_parser(load="bench").parse_args(["bench", "engine"])
    assert (loaded.command, loaded.target, loaded.seconds) == ("bench", "engine", 2.0)
    assert loaded.command_parser.prog == "halma bench"


# --- halma bench (agents/bench.py) -------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "module"), [("engine", "halma_env.bench_engine"), ("env", "halma_env.envs.bench"),
                                                ("train", "agents.train"), ("opponent", "agents.export")])
def test_bench_runs_its_targets_benchmark_with_the_defaults(monkeypatch, capsys, target: str, module: str) -> None:
    """Each target runs its module's run_benchmark with the parsed options (defaults: 2 s per
    measurement, 1 repeat, seed 0, no device); --json prints its figures as one sorted JSON object."""
    import importlib

    seen: list[Any] = []

    def run_benchmark(args: Any) -> dict[str, Any]:
        seen.append(args)
        return {"zeta": 1.5, "alpha": [1, 2], "mid": {"b": 1, "a": None}}

    monkeypatch.setattr(importlib.import_module(module), "run_benchmark", run_benchmark)
    assert cli_main(["bench", target]) == 0
    assert capsys.readouterr() == ("", "")  # the figures are the benchmark's to print
    (args,) = seen
    assert (args.target, args.seconds, args.repeat, args.seed, args.device, args.json) == (target, 2.0, 1, 0, None,
                                                                                             False)
    assert cli_main(["bench", target, "--json", "--seed", "3"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"zeta": 1.5, "alpha": [1, 2], "mid": {"b": 1, "a": None}} and err == ""
    ordered = json.loads(out, object_pairs_hook=list)  # the keys in the order printed: sorted
    assert [k for k, _ in ordered] == ["alpha", "mid", "zeta"] and ordered[1][1] == [("a", None), ("b", 1)]
    assert seen[1].seed == 3 and seen[1].json is True


def test_bench_options_that_apply(monkeypatch, capsys) -> None:
    """--repeat 1 is allowed for every target, --repeat 3 and --device for the train (and env) benchmark;
    an error found by the benchmark itself is reported like an option's."""
    import importlib

    calls: list[tuple[str, int, str | None]] = []

    def fake(args: Any) -> dict[str, Any]:
        calls.append((args.target, args.repeat, args.device))
        if args.seconds == 7:
            raise ValueError("seven seconds is too long")
        return {}

    for module in ("halma_env.bench_engine", "halma_env.envs.bench", "agents.train"):
        monkeypatch.setattr(importlib.import_module(module), "run_benchmark", fake)
    assert cli_main(["bench", "engine", "--repeat", "1"]) == 0
    assert cli_main(["bench", "train", "--repeat", "3", "--device", "cpu"]) == 0
    assert cli_main(["bench", "env", "--device", "cpu"]) == 0
    from agents import bench
    from agents.cli import build_parser

    args = build_parser(load="bench").parse_args(["bench", "engine"])
    assert bench.run(args) == 0  # its status itself, not left to the dispatcher's `or 0`
    assert calls == [("engine", 1, None), ("train", 3, "cpu"), ("env", 1, "cpu"), ("engine", 1, None)]
    assert capsys.readouterr() == ("", "")
    assert cli_main(["bench", "engine", "--seconds", "7"]) == 2
    assert capsys.readouterr() == ("", "halma bench: error: seven seconds is too long\n")
    assert cli_main(["bench", "engine", "--seconds", "0.5", "--repeat", "0"]) == 2
    assert capsys.readouterr().err == "halma bench: error: --repeat must be >= 1, got 0\n"
    assert cli_main(["bench", "opponent", "--device", "cpu"]) == 2
    assert capsys.readouterr().err == ("halma bench: error: --device is for the env and train benchmarks; the "
                                       "opponent benchmark runs on the CPU only\n")


# --- security review: the files of --out never follow a link planted at their names ------------------------


def _planted(out: Path, names: list[str], victims_dir: Path) -> dict[Path, bytes]:
    """A symbolic link at each of ``names`` in ``out`` to its own victim file; the victims and their text."""
    out.mkdir(parents=True, exist_ok=True)
    victims_dir.mkdir(parents=True, exist_ok=True)
    victims = {}
    for name in names:
        victim = victims_dir / f"victim-{name}"
        victim.write_text(f"victim of {name}")
        victims[victim] = victim.read_bytes()
        (out / name).symlink_to(victim)
    return victims


def test_save_replaces_links_planted_at_its_files_instead_of_writing_through_them(tmp_path) -> None:
    """results.json went through ``results.json.tmp``, results.md was opened for writing and results.png
    saved by matplotlib at their names: a link planted there (a shared --out folder) overwrote its target."""
    names = ["results.json", "results.json.tmp", "results.md", "results.png"]
    victims = _planted(tmp_path / "out", names, tmp_path / "v")
    res = _match()
    paths = res.save(str(tmp_path / "out"))
    assert {v: v.read_bytes() for v in victims} == victims
    for name in ("results.json", "results.md", "results.png"):
        assert not (tmp_path / "out" / name).is_symlink()
    assert (tmp_path / "out" / "results.md").read_text() == MATCH_MD + "\n"
    assert (tmp_path / "out" / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == json.loads(
        json.dumps(arena._clean(res.to_dict())))
    assert [Path(p).name for p in paths] == ["results.json", "results.md", "results.png"]


def test_plot_png_is_what_plot_writes(tmp_path) -> None:
    res = _self_play()
    png = res.plot_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    res.plot(str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").read_bytes()[:8] == png[:8] and sorted(p.name for p in tmp_path.iterdir()) == ["r.png"]


def test_the_solo_files_replace_links_planted_at_their_names(tmp_path, capsys) -> None:
    """solo.md was opened for writing at its name, solo.json written through ``solo.json.tmp``."""
    out = tmp_path / "solo"
    victims = _planted(out, ["solo.md", "solo.json.tmp"], tmp_path / "v")
    assert _run("--solo", "first", "--games", "1", "--max-plies", "3", "--out", str(out)) == 0
    table = capsys.readouterr().out.split("\n\nwrote")[0]
    assert {v: v.read_bytes() for v in victims} == victims
    assert not (out / "solo.md").is_symlink() and (out / "solo.md").read_text() == table + "\n"
    assert json.loads((out / "solo.json").read_text())["agent"] == "first"


def test_a_tournament_without_an_arena_cap_says_so() -> None:
    """run_tournament's default max_plies is None: the header read 'arena cap None plies (draw)'."""
    from agents.arena import run_tournament
    from halma_env import Rules

    res = run_tournament(["greedy", "random"], Rules("star", 2, move_limit=20), games=2)
    assert "time per move none (bots' own settings), no arena cap; rules: " in res.markdown()


def test_a_games_count_past_the_limit_is_refused_by_name(tmp_path, capsys) -> None:
    """10**29 games reached ``itertools.islice`` and died there with a traceback (halma ladder: its message)."""
    out = tmp_path / "out"
    assert cli_main(["eval", "greedy", "random", "--games", str(10**29), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"halma eval: error: --games must be 1..10,000,000, got {10**29}\n"
    assert not out.exists()
    with pytest.raises(ValueError, match="games must be 1..10,000,000"):
        arena.run_tournament(["greedy", "random"], Rules("star", 2), arena.MAX_GAMES + 1)
    assert cli_main(["ladder", "--ladder", str(tmp_path / "l.json"), "--games", str(10**29), "random", "greedy"]) == 2
    assert capsys.readouterr().err == f"halma ladder: error: --games must be 1..10,000,000, got {10**29}\n"


@pytest.mark.parametrize("existed", [False, True])
def test_an_interrupted_eval_removes_the_out_folder_it_made(tmp_path, monkeypatch, existed: bool) -> None:
    """Ctrl-C (or SIGTERM, or an error) during the games left the empty --out folder made at the start, and
    the folders above it that it made."""
    out = tmp_path / "made" / "here" / "out"
    if existed:
        out.mkdir(parents=True)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(arena, "run_tournament", interrupted)
    with pytest.raises(KeyboardInterrupt):
        arena.run(_eval_args(out))
    assert out.exists() == existed and (not existed or list(out.iterdir()) == [])
    assert (tmp_path / "made").exists() == existed


def _eval_args(out: Path) -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    arena.add_arguments(parser)
    return parser.parse_args(["greedy", "random", "--games", "2", "--out", str(out), "--quiet"])


def test_deterministic_players_are_told_their_repeated_games_narrow_the_intervals(capsys) -> None:
    """Two players that always choose alike replay the same game whenever the seats and the first seat repeat:
    10 games of star2.pt against an exported model were 4 distinct ones, reported as 100% [72.2%, 100%] as if
    10 independent trials.  The summary counts the distinct games and the table says so; players with
    randomness (random's own draws) print no such line."""
    assert _run("a", "b", "--games", "8", "--workers", "1", "--max-plies", "40") == 0
    out = capsys.readouterr().out
    assert ("Distinct games: only 4 of 8 (players that choose alike replayed games in the same seats), so the "
            "intervals above, which count every game as an independent trial, are too narrow") in out
    from agents.registry import make_player

    assert _run("a", "b", "--games", "8", "--workers", "1", "--max-plies", "40",
                factory=lambda name, seed=None: make_player("random", seed)) == 0
    assert "Distinct games" not in capsys.readouterr().out
