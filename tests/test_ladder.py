"""The difficulty ladder: the shipped file covers every game with rated, playable levels; level
names resolve per game (registry, halma play, the environments); halma ladder rebuilds an entry
by tournament, exporting checkpoints first; bad ladders and names fail clearly."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.ladder import (
    DEFAULT_LADDER,
    LEVELS,
    LadderError,
    LevelPlayer,
    ladder_player,
    level_player,
    load_ladder,
    save_ladder,
    shipped_models,
)
from agents.ladder_build import SEPARATION, pick_levels, separated, separation
from agents.registry import make_player
from halma_env import Game, Rules
from tests.file_helpers import fifo_refused_at_once
from tests.opponent_helpers import make_checkpoint

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ["star-2", "star-3", "star-4", "star-5", "star-6", "diamond-2", "diamond-3", "halma16-2", "halma16-4"]


def test_shipped_ladder_covers_every_game_with_ordered_rated_levels() -> None:
    data = load_ladder(DEFAULT_LADDER)
    assert sorted(data["games"]) == sorted(SHIPPED)
    for key, entry in data["games"].items():
        names = [lv["level"] for lv in entry["levels"]]
        assert names[:4] == list(LEVELS), key
        ratings = [lv["rating"] for lv in entry["levels"]]
        assert ratings == sorted(ratings), f"{key}: levels must be ordered by rating"
        # each level clearly stronger than the one below (the rule pick_levels enforces)
        for lower, upper in zip(entry["levels"], entry["levels"][1:]):
            assert separated(lower, upper), f"{key}: {upper['level']} is not clearly above {lower['level']}"
        assert not entry.get("missing"), key
        assert entry["command"].startswith("halma ladder") and entry["date"]
        assert entry["tournament"]["games"] >= 20
        players = {c["player"] for c in entry["candidates"]}
        assert all(lv["player"] in players or ".onnx" in lv["player"] for lv in entry["levels"])


@pytest.mark.parametrize("key", SHIPPED)
def test_every_shipped_level_plays_a_legal_move(key: str) -> None:
    variant, seats = key.rsplit("-", 1)
    game = Game(Rules(variant, int(seats)))
    bot = make_player("greedy", seed=0)
    for _ in range(6):  # a few plies in, so the position is not the opening
        game.play(bot.select_move(game))
    for level in LEVELS:
        player = level_player(level, variant, int(seats), seed=1)
        assert player.name == level
        assert player.select_move(game, 1.0) in game.legal_moves()


def test_shipped_models_have_valid_manifests() -> None:
    from agents.opponent import read_manifest

    for path in shipped_models(DEFAULT_LADDER):
        m = read_manifest(path)  # checks the checksum too
        assert m["rating"] is not None and m["level"] in LEVELS


def test_level_names_resolve_per_game_through_the_registry() -> None:
    hard = make_player("hard", seed=3)
    assert isinstance(hard, LevelPlayer) and hard.name == "hard"
    ladder = load_ladder(DEFAULT_LADDER)
    for key in ("star-2", "halma16-4"):
        variant, seats = key.rsplit("-", 1)
        game = Game(Rules(variant, int(seats)))
        assert hard.select_move(game) in game.legal_moves()
        expected = next(lv["player"] for lv in ladder["games"][key]["levels"] if lv["level"] == "hard")
        inner = hard.player_for(game.rules)
        assert inner.name == "hard"
        if ".onnx" not in expected:  # a bot level is the bot behind a LevelBot (which keeps it to its game)
            assert type(inner).__name__ == "LevelBot" and inner.game == (variant, int(seats))
            assert type(inner.bot).__name__ == type(make_player(expected)).__name__
    # the 1-seat solitaire has no ladder entry: the registry's fallback bot plays it
    solo = Game(Rules("star", 1))
    assert make_player("easy", seed=0).select_move(solo) in solo.legal_moves()
    # explicit game
    p = make_player("ladder:star-2:expert", seed=0)
    assert p.name == "expert"
    assert isinstance(make_player("ladder:medium", seed=0), LevelPlayer)


def test_same_seed_same_moves_for_a_level() -> None:
    games = [Game(Rules("star", 2))]
    for _ in range(5):
        g = games[-1].copy()
        g.play(make_player("greedy", seed=0).select_move(g))
        games.append(g)

    def moves(seed: int) -> list[str]:
        p = make_player("easy", seed=seed)
        return [str(p.select_move(g)) for g in games]

    assert moves(4) == moves(4)


def test_bad_names_fail_clearly() -> None:
    with pytest.raises(ValueError, match="unknown level 'grandmaster'"):
        make_player("ladder:grandmaster")
    with pytest.raises(ValueError, match="VARIANT-SEATS"):
        ladder_player("ladder:star:hard")
    with pytest.raises(ValueError, match="star is played by"):
        ladder_player("ladder:star-7:hard")
    with pytest.raises(ValueError, match="level 'legend' is not in the star-2 ladder"):
        level_player("legend", "star", 2)
    with pytest.raises(ValueError, match="expected ladder:LEVEL"):
        ladder_player("ladder:a:b:c")


def _r(*pairs: tuple[float, float]) -> list[dict[str, float]]:
    return [{"mu": mu, "sigma": sigma} for mu, sigma in pairs]


def test_separation_is_in_combined_sigmas() -> None:
    a, b = _r((10.0, 3.0), (20.0, 4.0))
    assert separation(a, b) == pytest.approx(2.0)  # 10 / sqrt(9 + 16)
    assert separated(a, b) and not separated(a, b, 2.01) and not separated(b, a)
    # mu far enough apart but the ordinal (mu - 3 sigma) of the upper one is lower: not clearly stronger
    assert separation(*_r((0.0, 0.5), (9.0, 4.0))) > SEPARATION
    assert not separated(*_r((0.0, 0.5), (9.0, 4.0)))


def test_pick_levels_takes_only_separated_candidates() -> None:
    # weakest first, every pair >= 2 combined sigmas (sigma 2: >= 5.66 apart)
    r = _r((30.0, 2.0), (0.0, 2.0), (10.0, 2.0), (20.0, 2.0))
    assert pick_levels(r, 4) == [1, 2, 3, 0]
    # greedy-like candidates bunched at 20-22: at most one of them; the best-separated choice wins
    r = _r((0.0, 2.0), (20.0, 2.0), (21.0, 2.0), (22.0, 2.0), (40.0, 2.0), (10.0, 2.0))
    picked = pick_levels(r, 4)
    mus = [r[i]["mu"] for i in picked]
    assert mus[:2] == [0.0, 10.0] and mus[2] in (20.0, 21.0, 22.0) and mus[3] == 40.0
    # the closest pair decides: 0, 8, 15, 25 (closest 7 apart) beats 0, 5, 15, 25 (5 apart)
    r = _r((0.0, 1.0), (5.0, 1.0), (8.0, 1.0), (15.0, 1.0), (25.0, 1.0))
    assert pick_levels(r, 4) == [0, 2, 3, 4]
    # fewer separated candidates than levels: fewer levels (the caller reports the missing ones)
    r = _r((0.0, 4.0), (5.0, 4.0), (10.0, 4.0), (30.0, 4.0))
    picked = pick_levels(r, 4)
    assert len(picked) == 2 and picked[-1] == 3
    assert pick_levels(r, 4, min_separation=0.0) == [0, 1, 2, 3]
    assert pick_levels(_r((1.0, 1.0)), 4) == [0]
    with pytest.raises(ValueError, match="at least one level"):
        pick_levels(r, 0)
    with pytest.raises(ValueError, match="min_separation"):
        pick_levels(r, 4, -1.0)


def test_a_missing_level_says_why(tmp_path: Path) -> None:
    ladder = tmp_path / "ladder.json"
    ladder.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1, "games": {
        "star-3": {"variant": "star", "seats": 3, "missing": ["expert"], "levels": [
            {"level": "easy", "player": "greedy:noise=0.5"}, {"level": "medium", "player": "greedy"},
            {"level": "hard", "player": "search:depth=1,time=none"}]}}}))
    assert level_player("hard", "star", 3, path=ladder).name == "hard"
    with pytest.raises(LadderError, match="'expert' is missing from the star-3 ladder.*separated only 3 levels"):
        level_player("expert", "star", 3, path=ladder)
    with pytest.raises(LadderError, match="'expert' is missing"):
        LevelPlayer("expert", path=ladder).select_move(Game(Rules("star", 3)))


def test_halma_ladder_rebuilds_an_entry_exporting_a_checkpoint(tmp_path: Path, capsys) -> None:
    from agents.cli import main
    from agents.opponent import file_sha256, read_manifest

    ladder = tmp_path / "ladder.json"
    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")
    # 10 games separate no four candidates by 2 sigmas: --separation 0 asks only for rising ratings
    args = ["ladder", "--variant", "star", "--seats", "2", "--games", "10", "--ladder", str(ladder), "--quiet",
            "--separation", "0", "greedy:noise=0.9", "greedy:noise=0.5", "greedy:noise=0.2", str(ckpt), "greedy"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "wrote the star-2 entry" in out
    data = json.loads(ladder.read_text())
    entry = data["games"]["star-2"]
    assert [lv["level"] for lv in entry["levels"]] == list(LEVELS)
    assert len(entry["candidates"]) == 5 and entry["tournament"]["games"] == 10
    assert entry["command"].startswith("halma ladder") and "last.pt" in entry["command"]
    model = tmp_path / "star-2-run-last.onnx"
    assert model.exists(), list(tmp_path.iterdir())
    ratings = [lv["rating"] for lv in entry["levels"]]
    assert ratings == sorted(ratings)
    # the checkpoint was exported beside the ladder, with its manifest, and rated among the candidates
    m = read_manifest(model)
    assert (m["variant"], m["num_players"]) == ("star", 2)
    assert m["source"]["checkpoint_sha256"] == file_sha256(ckpt)
    assert [Path(c["player"]) for c in entry["candidates"]].count(model) == 1
    # its manifest is stamped with its level and rating if it was chosen as a level, and otherwise keeps the
    # export's (level run-last, no rating).  (The untrained network rates last here, so it is not a level:
    # test_a_model_chosen_as_a_level_is_copied_beside_a_new_ladder_and_stamped pins the stamping.)
    as_level = [(lv["level"], lv["rating"]) for lv in entry["levels"] if lv["player"] == model.name]
    assert [(m["level"], m["rating"])] == (as_level or [("run-last", None)])
    # the levels play from this ladder file
    for lv in entry["levels"]:
        p = level_player(lv["level"], "star", 2, seed=0, path=ladder)
        assert p.select_move(Game(Rules("star", 2))) in Game(Rules("star", 2)).legal_moves()
    # printing the ladder
    assert main(["ladder", "--ladder", str(ladder)]) == 0
    assert "star-2" in capsys.readouterr().out


def test_halma_ladder_dry_run_writes_nothing(tmp_path: Path, capsys) -> None:
    from agents.cli import main
    from agents.export import export_checkpoint
    from agents.opponent import read_manifest

    home = tmp_path / "ladder_home"
    home.mkdir()
    ladder = home / "ladder.json"
    model = export_checkpoint(make_checkpoint(tmp_path / "m.pt"), "m", tmp_path / "models", check_positions=2)
    manifest = read_manifest(model)
    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt", seed=2)  # (not the exported model's)
    args = ["ladder", "--ladder", str(ladder), "--games", "4", "--quiet", "--separation", "0", "--dry-run",
            "--levels", "easy,medium,hard", "greedy:noise=0.9", str(model), str(ckpt)]
    assert main(args) == 0
    out = capsys.readouterr().out
    entry = json.loads(out[out.index("\n{"):])  # the table, then the entry as JSON
    assert len(entry["candidates"]) == 3
    assert list(home.iterdir()) == []  # no ladder file, no copied or exported model
    assert read_manifest(model) == manifest  # the candidate's manifest is not stamped


def test_halma_ladder_refuses_bad_candidates(tmp_path: Path, capsys) -> None:
    from agents.cli import main
    from agents.export import export_checkpoint

    ladder = tmp_path / "ladder.json"
    base = ["ladder", "--ladder", str(ladder), "--games", "2", "--quiet"]
    assert main([*base, "random", "greedy"]) == 2
    assert "4 levels need at least 4 candidates" in capsys.readouterr().err
    assert main([*base, "random", "greedy", "nonsense", "greedy:noise=0.5"]) == 2
    assert "unknown player 'nonsense'" in capsys.readouterr().err
    model = export_checkpoint(make_checkpoint(tmp_path / "d2.pt", "diamond", 2), "x", tmp_path, check_positions=2)
    assert main([*base, "random", "greedy", "greedy:noise=0.5", str(model)]) == 2
    assert "plays diamond with 2 seats, not star with 2" in capsys.readouterr().err
    assert main([*base, "--seats", "7", "random", "greedy", "greedy:noise=0.5", "greedy:noise=0.2"]) == 2
    capsys.readouterr()
    # a checkpoint of another game is refused before it is exported
    models = tmp_path / "models"
    checkpoint = make_checkpoint(tmp_path / "d2b.pt", "diamond", 2)
    assert main([*base, "--models-dir", str(models), "--levels", "easy,hard", "random", str(checkpoint)]) == 2
    assert "d2b.pt' plays diamond with 2 seats, not star with 2" in capsys.readouterr().err
    assert not models.exists()
    for flags, message in [
        (["--levels", "easy,,hard"], "a level must be a plain name (not empty"),
        (["--levels", "easy,a/b"], "got 'a/b'"),
        (["--levels", "easy,easy"], "--levels must name distinct levels"),
        (["--levels", "easy,hard", "--time-per-move", "nan"], "--time-per-move must be > 0 seconds"),
        (["--levels", "easy,hard", "--time-per-move", "0"], "--time-per-move must be > 0 seconds"),
    ]:
        assert main([*base, *flags, "random", "greedy"]) == 2
        assert message in capsys.readouterr().err, flags
    assert not ladder.exists()


def test_a_ladder_file_that_does_not_exist_is_named(tmp_path: Path, capsys, monkeypatch) -> None:
    from agents.cli import main

    missing = tmp_path / "typo.json"
    assert main(["ladder", "--ladder", str(missing)]) == 2
    assert f"ladder file '{missing}' does not exist" in capsys.readouterr().err
    monkeypatch.setenv("HALMA_LADDER", str(missing))
    with pytest.raises(LadderError, match=r"typo\.json' \(from \$HALMA_LADDER\) does not exist"):
        level_player("easy", "star", 2)
    assert load_ladder(missing, missing_ok=True)["games"] == {}  # a rebuild starts a new file


def test_printing_the_ladder_filters_by_game_and_refuses_tournament_flags(capsys) -> None:
    """Without candidates `halma ladder` prints: --variant/--seats pick the entries, and a flag that only
    a tournament uses is an error naming it, not silently ignored."""
    from agents.cli import main

    def printed_games(*flags: str) -> list[str]:
        assert main(["ladder", "--ladder", str(DEFAULT_LADDER), *flags]) == 0
        return [line.split(" | ")[0].lstrip("| ") for line in capsys.readouterr().out.splitlines()
                if line.startswith("| ") and not line.startswith("| game ")]

    assert printed_games() == SHIPPED
    assert printed_games("--variant", "diamond") == ["diamond-2", "diamond-3"]
    assert printed_games("--seats", "4") == ["star-4", "halma16-4"]
    assert printed_games("--variant", "star", "--seats", "5") == ["star-5"]
    for flags, message in [
        (["--games", "0"], "--games only applies to a tournament: name the CANDIDATEs to rate, or drop it"),
        (["--seed", "0", "--dry-run"], "--seed, --dry-run only apply to a tournament"),
        (["--workers", "2", "--separation", "1", "--levels", "a,b", "--time-per-move", "0.1", "--models-dir", "m"],
         "--levels, --workers, --time-per-move, --models-dir, --separation only apply"),
        (["--variant", "diamond", "--seats", "5"], "diamond is played by 2, 3 seats, not 5"),
        (["--seats", "7"],
         "--seats 7: no game is played by 7 seats (star 1, 2, 3, 4, 5, 6; diamond 2, 3; halma16 2, 4)"),
        (["--seats", "1"], "has no 1-seat entry; it has star-2, star-3"),
    ]:
        assert main(["ladder", "--ladder", str(DEFAULT_LADDER), *flags]) == 2
        out, err = capsys.readouterr()
        assert message in err and out == "", (flags, err)


def test_bad_ladder_files(tmp_path: Path) -> None:
    bad = tmp_path / "ladder.json"
    bad.write_text("{oops")
    with pytest.raises(LadderError, match="cannot be read"):
        load_ladder(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(LadderError, match="is not a ladder file"):
        load_ladder(bad)
    bad.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1,
                               "games": {"star-2": {"variant": "star", "seats": 3, "levels": []}}}))
    with pytest.raises(LadderError, match="entry 'star-2' is for star-3"):
        load_ladder(bad)
    bad.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1, "games": {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "hard"}]}}}))
    with pytest.raises(LadderError, match="not another level"):
        level_player("easy", "star", 2, path=bad)


def test_environments_accept_level_names() -> None:
    import numpy as np

    from halma_env.envs import HalmaEnv, env

    e = HalmaEnv(variant="star", num_players=3, seat=0, opponents={1: "hard", 2: "easy"})
    e.reset(seed=0)
    e.step(int(np.flatnonzero(e.action_masks())[0]))
    assert e.game.ply == 3  # both level seats answered
    aec = env(variant="star", num_players=2)
    aec.reset(seed=0)
    aec.unwrapped.set_cpu(1, "expert")  # hand a seat to a level mid-game (SPEC seat substitution)
    agent = aec.agent_selection
    mask = aec.observe(agent)["action_mask"]
    aec.step(int(np.flatnonzero(mask)[0]))
    assert aec.unwrapped.game.ply == 2


def test_play_with_a_level_works_without_torch() -> None:
    code = (
        "import sys\n"
        "from agents.play import PlaySession\n"
        "from halma_env import Rules\n"
        "s = PlaySession(Rules('star', 2), ['hard', 'easy'], out=lambda line: None)\n"
        "for _ in range(4):\n"
        "    seat = s.game.to_move\n"
        "    s.game.play(s.cpu[seat].select_move(s.game, 1.0))\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok', s.game.ply)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 4"


def test_halma_ladder_refuses_one_seat(tmp_path: Path, capsys) -> None:
    """One seat has no opponent: every candidate rates the same, and the score is NaN (invalid JSON)."""
    from agents.cli import main

    ladder = tmp_path / "ladder.json"
    argv = ["ladder", "--ladder", str(ladder), "--games", "2", "--quiet", "--seats", "1", "--levels", "a,b",
            "random", "greedy"]
    assert main(argv) == 2
    assert "halma ladder: error: a ladder ranks players in matches of 2+ seats, not 1" in capsys.readouterr().err
    assert main([*argv, "--dry-run"]) == 2
    assert not ladder.exists()


@pytest.mark.parametrize("where", ["a_file/ladder.json", "/proc/halma_audit_ladder.json"])
def test_an_unwritable_ladder_file_is_refused_before_the_tournament(tmp_path: Path, capsys, monkeypatch,
                                                                     where: str) -> None:
    import agents.arena
    from agents.cli import main

    (tmp_path / "a_file").write_text("not a directory")
    ladder = where if where.startswith("/") else str(tmp_path / where)

    def no_games(*args, **kwargs):
        raise AssertionError("the tournament ran")

    monkeypatch.setattr(agents.arena, "run_tournament", no_games)
    assert main(["ladder", "--ladder", ladder, "--games", "2", "--quiet", "--levels", "a,b", "random", "greedy"]) == 2
    err = capsys.readouterr().err
    assert f"halma ladder: error: cannot write the ladder file '{ladder}'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        (5, " has 'levels' 5, not a list"),
        ([{"level": "easy", "player": "random", "rating": "x"}], ", level 'easy': rating 'x' is not a finite number"),
    ],
)
def test_malformed_entries_are_named(tmp_path: Path, capsys, levels: object, message: str) -> None:
    from agents.cli import main

    bad = tmp_path / "ladder.json"
    bad.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1, "games": {
        "star-2": {"variant": "star", "seats": 2, "levels": levels}}}))
    assert main(["ladder", "--ladder", str(bad)]) == 2  # printing it
    err = capsys.readouterr().err
    assert f"halma ladder: error: ladder '{bad}': entry 'star-2'{message}" in err and "Traceback" not in err


def test_a_level_from_the_built_in_fallback_says_so(tmp_path: Path, monkeypatch) -> None:
    """A ladder file without the game's entry: the level plays its built-in (unrated) spec, and says why."""
    from agents.registry import FALLBACK_LEVELS

    ladder = tmp_path / "my_ladder.json"
    ladder.write_text(json.dumps({"format": "halma_env.ladder", "format_version": 1, "games": {
        "star-2": {"variant": "star", "seats": 2, "levels": [
            {"level": "easy", "player": "random"}, {"level": "medium", "player": "greedy:noise=0.5"},
            {"level": "hard", "player": "greedy"}, {"level": "expert", "player": "search:depth=1,time=none"}]}}}))
    monkeypatch.setenv("HALMA_LADDER", str(ladder))
    assert LevelPlayer("hard").describe(Rules("star", 2)) == "greedy"  # the file's own entry: as it is
    assert LevelPlayer("hard").describe(Rules("star", 3)) == (
        f"{FALLBACK_LEVELS['hard']} (built-in: {str(ladder)} has no star-3 entry)")
    assert LevelPlayer("hard", path=ladder).describe(Rules("diamond", 2)) == (
        f"{FALLBACK_LEVELS['hard']} (built-in: {str(ladder)} has no diamond-2 entry)")


def _ladder_text(games: object, **header: object) -> str:
    """A ladder file's text: the format header (``header`` overrides its fields) and ``games``."""
    return json.dumps({"format": "halma_env.ladder", "format_version": 1, **header, "games": games})


def test_a_long_value_in_a_ladder_is_shown_short(tmp_path: Path) -> None:
    """A 100,000-character entry key or a long format_version was echoed whole (a fuzzing round)."""
    path = tmp_path / "ladder.json"
    path.write_text(_ladder_text({"k" * 100_000: {}}))
    with pytest.raises(LadderError, match=r": entry 'k{49}\.\.\. \(str\) lacks variant, seats, levels$") as error:
        load_ladder(path)
    path.write_text(_ladder_text({}, format_version=[1] * 50_000))
    with pytest.raises(LadderError, match=r" has format version \[1, 1, 1, .*\.\.\. \(list\); this code reads 1$"):
        load_ladder(path)
    assert len(str(error.value)) < 300


def test_a_level_whose_bot_spec_makes_no_player_is_named(tmp_path: Path) -> None:
    """A ladder level's spec with a bad setting raised the registry's bare ValueError at its first use, naming
    neither the level nor its game (a fuzzing round)."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "greedy:noise=0.25x"}]}})
    with pytest.raises(LadderError, match=r"^level 'easy' for star with 2 seats is the bot spec 'greedy:noise=0\.25x', "
                                          r"which does not make a player: greedy parameter noise='0\.25x': expected"):
        level_player("easy", "star", 2, path=ladder)


def _ladder_file(path: Path, games: dict) -> Path:
    path.write_text(_ladder_text(games))
    return path


SHIPPED_EXPERT = DEFAULT_LADDER.parent / "star-2-star2.onnx"  # a real exported model (copied beside a test's ladder)


def test_a_level_passes_its_options_to_the_model(tmp_path: Path) -> None:
    """docs/export.md: a level may carry temperature, search and time_budget keys, passed to the model."""
    name = _copy_shipped_model(tmp_path)  # a level's model lies in the ladder's folder
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": name, "temperature": 0.5, "search": "top=2",
         "time_budget": 0.3},
        {"level": "hard", "player": f"{name}:temperature=0.25,time_budget=0.2"}]}})
    easy = level_player("easy", "star", 2, seed=1, path=ladder)
    assert (easy.temperature, easy.search, easy.time_budget) == (0.5, {"top": 2, "eval": "heuristic"}, 0.3)
    assert easy.name == "easy" and easy.describe(Rules("star", 2)) == name
    hard = level_player("hard", "star", 2, path=ladder)  # options written in the player's name
    assert (hard.temperature, hard.search, hard.time_budget) == (0.25, None, 0.2)


def test_a_level_cannot_name_another_level(tmp_path: Path) -> None:
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "ladder:star-2:hard"}, {"level": "hard", "player": "Ladder:hard"}]}})
    for level in ("easy", "hard"):
        with pytest.raises(LadderError, match="not another level"):
            level_player(level, "star", 2, path=ladder)


def test_a_ladder_repeating_a_level_is_refused(tmp_path: Path) -> None:
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "random"}, {"level": "easy", "player": "greedy"}]}})
    with pytest.raises(LadderError, match="entry 'star-2' repeats a level name"):
        load_ladder(ladder)


def test_a_missing_explicit_ladder_is_not_blamed_on_the_environment(tmp_path: Path, monkeypatch) -> None:
    """$HALMA_LADDER is named as the source only when it chose the file, not beside an explicit --ladder."""
    monkeypatch.setenv("HALMA_LADDER", str(tmp_path / "from_env.json"))
    with pytest.raises(LadderError) as info:
        load_ladder(tmp_path / "given.json")
    assert str(info.value) == f"ladder file '{tmp_path / 'given.json'}' does not exist"


def test_an_unknown_level_lists_the_games_levels() -> None:
    with pytest.raises(LadderError, match=r"^level 'legend' is not in the star-2 ladder; levels: easy, medium, hard, "
                                          r"expert$"):
        level_player("legend", "star", 2, path=DEFAULT_LADDER)


@pytest.mark.parametrize("name", ["ladder:", "ladder:star-2:"])
def test_a_ladder_name_without_its_level_is_refused(name: str) -> None:
    with pytest.raises(LadderError, match="expected ladder:LEVEL or ladder:VARIANT-SEATS:LEVEL"):
        ladder_player(name)


def test_shipped_models_are_the_ladders_onnx_files_each_once(tmp_path: Path) -> None:
    assert [p.name for p in shipped_models(DEFAULT_LADDER)] == ["star-2-quickstart_star2.onnx", "star-2-star2.onnx"]
    name = _copy_shipped_model(tmp_path / "sub")  # a subfolder of the ladder's folder is inside it
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "a", "player": "m.onnx"}, {"level": "b", "player": "m.onnx:search=top=2"},
        {"level": "c", "player": "greedy"}, {"level": "d", "player": f"sub/{name}"}]}})
    assert shipped_models(ladder) == [tmp_path.resolve() / "m.onnx",  # relative to the ladder file
                                      tmp_path.resolve() / "sub" / name]


def test_separation_without_uncertainty_and_the_ordinal_rule() -> None:
    # no sigma at all: any mu advantage is infinitely clear, none (or a deficit) never is
    assert separation(*_r((1.0, 0.0), (2.0, 0.0))) == math.inf
    assert separation(*_r((1.0, 0.0), (1.0, 0.0))) == -math.inf
    # equal ordinals (0 - 3 = 6 - 9): the upper one is not clearly stronger, however far its mu
    lower, upper = _r((0.0, 1.0), (6.0, 3.0))
    assert separation(lower, upper) > 1.0 and not separated(lower, upper, 1.0)


def test_pick_levels_edge_cases() -> None:
    r = _r((5.0, 1.0), (0.0, 1.0), (9.0, 1.0))
    assert pick_levels(r, 1) == [1]  # one level: the weakest (earliest in mu order) candidate
    with pytest.raises(ValueError, match="no candidates to pick levels from"):
        pick_levels([], 4)
    # equally well separated choices (closest pair 10 apart): the widest span of mu wins, then the earliest
    r = _r((0.0, 1.0), (10.0, 1.0), (20.0, 1.0), (30.0, 1.0))
    assert pick_levels(r, 3) == [0, 1, 3]


def test_save_ladder_sorts_games_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    from agents.ladder import save_ladder

    entries = {k: {"variant": k.rsplit("-", 1)[0], "seats": int(k.rsplit("-", 1)[1]),
                   "levels": [{"level": "easy", "player": "random"}]}
               for k in ("halma16-2", "star-3", "diamond-2", "star-2")}
    path = save_ladder({"format": "halma_env.ladder", "format_version": 1, "games": entries},
                       tmp_path / "new" / "ladder.json")
    assert list(json.loads(path.read_text())["games"]) == ["star-2", "star-3", "diamond-2", "halma16-2"]
    assert [p.name for p in path.parent.iterdir()] == ["ladder.json"]
    assert load_ladder(path)["games"] == entries


def _fake_tournament(monkeypatch, ratings: list[tuple[float, float]]) -> list:
    """run_tournament replaced by fixed openskill ratings (mu, sigma) per candidate, in candidate order."""
    import types

    import agents.arena

    calls: list = []

    def run_tournament(specs: list[str], rules: Rules, games: int, **kwargs) -> object:
        calls.append((specs, rules, games, kwargs))
        return types.SimpleNamespace(
            ratings=lambda: [types.SimpleNamespace(mu=mu, sigma=s, ordinal=mu - 3 * s) for mu, s in ratings],
            player_stats=lambda: [{"score": 0.123456 * i, "mean_place": 1.23456 + i, "ms_per_move": 0.123456 + i}
                                  for i in range(len(ratings))],
            summary=lambda: {"finish_rate": 0.98765, "mean_plies": 123.456, "elapsed_s": 12.345})

    monkeypatch.setattr(agents.arena, "run_tournament", run_tournament)
    return calls


def test_build_entry_records_levels_candidates_and_the_tournament(tmp_path: Path, monkeypatch) -> None:
    """The entry docs/export.md describes, from the tournament's ratings: levels weakest first with their
    figures (3 decimals, ms/move 2) and separation from the level below, candidates by rating, the settings."""
    from agents.ladder_build import build_entry, candidate_player

    specs = ["random", "greedy:noise=0.5", "greedy", "search:depth=1,time=none"]
    calls = _fake_tournament(monkeypatch, [(0.0, 1.0), (10.123456, 1.000456), (10.5, 1.0), (30.0, 2.0)])
    entry = build_entry(specs, "star", 2, 8, seed=5, levels=("easy", "medium", "hard"),
                        path=tmp_path / "ladder.json", workers=1, time_budget=0.5)
    assert calls == [(specs, Rules("star", 2), 8, {
        "seed": 5, "workers": 1, "time_budget": 0.5, "max_plies": 600, "cap_outcome": "progress",
        "progress": False, "factory": candidate_player, "status_every": None, "label": "halma ladder"})]
    assert entry["variant"] == "star" and entry["seats"] == 2 and "missing" not in entry
    # greedy:noise=0.5 and greedy are not separated: greedy (the better-separated choice) is medium
    assert [(lv["level"], lv["player"]) for lv in entry["levels"]] == [
        ("easy", "random"), ("medium", "greedy"), ("hard", "search:depth=1,time=none")]
    medium = entry["levels"][1]
    assert medium == {"level": "medium", "player": "greedy", "rating": 7.5, "mu": 10.5, "sigma": 1.0,
                      "score": 0.247, "mean_place": 3.235, "ms_per_move": 2.12,
                      "separation": round(10.5 / math.sqrt(2), 2)}
    assert entry["levels"][2]["separation"] == round(19.5 / math.sqrt(5), 2) and "separation" not in entry["levels"][0]
    assert [c["player"] for c in entry["candidates"]] == ["random", "greedy:noise=0.5", "greedy",
                                                          "search:depth=1,time=none"]
    assert entry["candidates"][1] == {"player": "greedy:noise=0.5", "rating": 7.122, "mu": 10.123, "sigma": 1.0,
                                      "score": 0.123, "mean_place": 2.235, "ms_per_move": 1.12}
    assert entry["candidates"][2]["level"] == "medium"
    t = entry["tournament"]
    assert (t["games"], t["seed"], t["rules"], t["max_plies"], t["cap_outcome"], t["time_per_move"]) == (
        8, 5, Rules("star", 2).to_dict(), 600, "progress", 0.5)
    assert (t["finish_rate"], t["mean_plies"], t["elapsed_s"]) == (0.988, 123.5, 12.3)
    assert t["separation"].startswith("adjacent levels: mu at least 2 x sqrt")
    assert t["rating"].startswith("openskill Plackett-Luce ordinal (mu - 3 sigma)")
    assert entry["command"] == "" and entry["date"].endswith("+00:00")
    assert not (tmp_path / "ladder.json").exists()  # an entry, not yet saved


def test_build_entry_names_the_levels_it_cannot_fill(tmp_path: Path, monkeypatch) -> None:
    from agents.ladder_build import build_entry

    calls = _fake_tournament(monkeypatch, [(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (20.0, 1.0)])
    entry = build_entry(["random", "greedy:noise=0.9", "greedy:noise=0.5", "greedy"], "star", 2, 5,
                        path=tmp_path / "ladder.json", command="halma ladder x")
    assert [lv["level"] for lv in entry["levels"]] == ["easy", "medium"] and entry["missing"] == ["hard", "expert"]
    assert entry["command"] == "halma ladder x"
    assert (calls[0][3]["seed"], calls[0][3]["workers"]) == (0, 1)  # the defaults, as halma ladder's


def test_a_model_chosen_as_a_level_is_copied_beside_a_new_ladder_and_stamped(tmp_path: Path, monkeypatch) -> None:
    """docs/export.md: a model chosen as a level is copied next to the ladder file (whose directory may not
    exist yet) with its manifest, which gets the level and rating; the original stays as it was."""
    from agents.ladder_build import build_entry
    from agents.opponent import read_manifest

    before = read_manifest(SHIPPED_EXPERT)
    _fake_tournament(monkeypatch, [(0.0, 1.0), (20.0, 1.0)])
    ladder = tmp_path / "new" / "dir" / "ladder.json"
    entry = build_entry(["random", str(SHIPPED_EXPERT)], "star", 2, 4, levels=("easy", "expert"), path=ladder)
    assert [lv["player"] for lv in entry["levels"]] == ["random", "star-2-star2.onnx"]
    m = read_manifest(ladder.parent / "star-2-star2.onnx")
    assert (m["level"], m["rating"]) == ("expert", 17.0) and m["rating_source"].startswith("halma ladder (star-2, ")
    assert read_manifest(SHIPPED_EXPERT) == before
    # and into a ladder directory that exists already
    entry = build_entry(["random", str(SHIPPED_EXPERT)], "star", 2, 4, levels=("easy", "expert"),
                        path=tmp_path / "ladder.json")
    assert entry["levels"][1]["player"] == "star-2-star2.onnx"
    assert read_manifest(tmp_path / "star-2-star2.onnx")["level"] == "expert"


def test_level_names_include_a_ladders_own_levels(tmp_path: Path) -> None:
    """A level the ladder file adds beyond the standard four is a known name (after them, each once)."""
    from agents.ladder import level_names

    ladder = _ladder_file(tmp_path / "ladder.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "random"},
                                                             {"level": "grandmaster", "player": "greedy"}]},
        "star-3": {"variant": "star", "seats": 3, "levels": [{"level": "grandmaster", "player": "greedy"}]}})
    assert level_names(ladder) == [*LEVELS, "grandmaster"]
    assert LevelPlayer("grandmaster", path=ladder).describe(Rules("star", 3)) == "greedy"


def test_a_best_checkpoint_is_exported_under_its_run_name(tmp_path: Path) -> None:
    """runs/NAME/checkpoints/best.pt (like last.pt) becomes VARIANT-SEATS-NAME-best.onnx, not star-2-best."""
    from agents.ladder_build import _prepare_candidates

    ckpt = make_checkpoint(tmp_path / "myrun" / "checkpoints" / "best.pt")
    [model] = _prepare_candidates([str(ckpt)], "star", 2, tmp_path / "models", 100)
    assert Path(model) == tmp_path / "models" / "star-2-myrun-best.onnx"


def test_format_ladder_prints_one_row_per_game() -> None:
    """The table `halma ladder` prints: a column per standard level ('-' where the game has none, the
    rating to one decimal), then how the entry was built."""
    from agents.ladder import format_ladder

    text = format_ladder({"games": {"star-3": {
        "variant": "star", "seats": 3, "levels": [{"level": "easy", "player": "random", "rating": 1.54},
                                                  {"level": "hard", "player": "greedy", "rating": 20.0}],
        "tournament": {"games": 10}, "date": "2026-01-02T03:04:05+00:00"}}})
    assert text.split("\n") == ["| game | easy | medium | hard | expert | built |", "|---|---|---|---|---|---|",
                                "| star-3 | random (1.5) | - | greedy (20.0) | - | 10 games, 2026-01-02 |"]


def test_halma_ladder_tournament_defaults(tmp_path: Path, capsys, monkeypatch) -> None:
    """docs/export.md: star with 2 seats, the four standard levels, seed 0, one worker, separation 2 and two
    full schedule cycles of games (48 for 4 candidates in 2 seats) unless given."""
    from agents.cli import main

    calls = _fake_tournament(monkeypatch, [(0.0, 1.0), (10.0, 1.0), (20.0, 1.0), (30.0, 1.0)])
    specs = ["random", "greedy:noise=0.5", "greedy", "search:depth=1,time=none"]
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--dry-run", *specs]) == 0
    out = capsys.readouterr().out
    entry = json.loads(out[out.index("\n{"):])
    # the table marks each candidate's level and its separation from the level below
    assert "| greedy:noise=0.5 | 7.00 | 10.00 ± 1.00 | 0.12 | 2.23 | 1.1 | medium | 7.07 |" in out.splitlines()
    [(players, rules, games, kwargs)] = calls
    assert (players, rules, games, kwargs["seed"], kwargs["workers"]) == (specs, Rules("star", 2), 48, 0, 1)
    assert [lv["level"] for lv in entry["levels"]] == list(LEVELS) and entry["tournament"]["seed"] == 0
    assert entry["tournament"]["separation"].startswith("adjacent levels: mu at least 2 x")
    # called other than as `halma ladder ...` (here: by pytest), the entry records the equivalent command
    assert entry["command"] == ("halma ladder --variant star --seats 2 --games 48 --seed 0 random greedy:noise=0.5 "
                                "greedy search:depth=1,time=none")


def test_halma_ladder_records_its_own_command_line(tmp_path: Path, capsys, monkeypatch) -> None:
    from agents.cli import main

    _fake_tournament(monkeypatch, [(0.0, 1.0), (10.0, 1.0)])
    argv = ["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--dry-run", "--levels", "a,b",
            "--games", "6", "random", "greedy:noise=0.5, temperature=1"]
    monkeypatch.setattr(sys, "argv", ["halma", *argv])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("\n{"):])["command"] == (
        f"halma ladder --ladder {tmp_path / 'ladder.json'} --quiet --dry-run --levels a,b --games 6 random "
        "'greedy:noise=0.5, temperature=1'")


@pytest.mark.parametrize(("flags", "message"), [
    (["--games", "0"], "halma ladder: error: --games must be 1..10,000,000, got 0"),
    (["--separation", "-0.5"], "halma ladder: error: --separation must be a finite number >= 0, got -0.5"),
    (["--separation", "inf"], "halma ladder: error: --separation must be a finite number >= 0, got inf"),
    (["--time-per-move", "0"], "halma ladder: error: --time-per-move must be > 0"),
])
def test_halma_ladder_refuses_bad_tournament_flags(tmp_path: Path, capsys, flags: list[str], message: str) -> None:
    from agents.cli import main

    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", *flags, "random", "greedy"]) == 2
    assert message in capsys.readouterr().err and not ladder.exists()


def test_a_games_count_that_leaves_a_candidate_without_a_game_is_refused_before_any_game(tmp_path: Path, capsys,
                                                                                          monkeypatch) -> None:
    """--games 4 with four 2-seat candidates never seats the fourth: its score was NaN, and the ladder file could
    not be written after the whole tournament (JSON has no NaN)."""
    import agents.arena
    from agents.cli import main
    from agents.ladder_build import games_seating_everyone

    assert [games_seating_everyone(k, 2) for k in (2, 3, 4)] == [1, 3, 5]
    assert games_seating_everyone(4, 3) == 4 and games_seating_everyone(3, 6) == 1
    from agents.arena import schedule

    needed = games_seating_everyone(24, 6)  # without building the 36 x C(24, 6)-game cycle (21 s before)
    seated = [{p for lineup in schedule(24, 6, g) for p in lineup.seats} for g in (needed - 1, needed)]
    assert len(seated[0]) < 24 == len(seated[1])
    monkeypatch.setattr(agents.arena, "run_tournament", lambda *a, **k: pytest.fail("a game was played"))
    ladder = tmp_path / "ladder.json"
    candidates = ["random", "greedy:noise=0.5", "greedy", "search:depth=1,time=none"]
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--games", "4", *candidates]) == 2
    assert ("halma ladder: error: --games 4 leaves search:depth=1,time=none without a game: the schedule seats every "
            "one of 4 candidates in its first 5 games; play at least that many (a multiple of 24 balances seats and "
            "starts)") in capsys.readouterr().err
    assert not ladder.exists()


def test_a_ladder_file_that_cannot_be_saved_after_the_tournament_is_an_error(tmp_path: Path, capsys,
                                                                            monkeypatch) -> None:
    """A write that fails after the games (disk full) exits 2 naming the file, not 0 or a traceback."""
    import agents.ladder_build
    from agents.cli import main

    def no_room(data: dict, path: object = None) -> Path:
        raise OSError(28, "No space left on device")

    _fake_tournament(monkeypatch, [(0.0, 1.0), (10.0, 1.0)])
    monkeypatch.setattr(agents.ladder_build, "save_ladder", no_room)  # where run looks it up
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "random", "greedy"]) == 2
    err = capsys.readouterr().err
    assert f"halma ladder: error: cannot write the ladder file '{ladder}': No space left on device" in err
    assert "Traceback" not in err


# --- mutation round (session 36): every refusal of a malformed ladder names its reason ---------


GOOD_LEVELS = [{"level": "easy", "player": "random"}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_ladder_text({}, format_version=2), "has format version 2; this code reads 1"),
        (_ladder_text([]), "has no 'games' object"),
        (_ladder_text({"star-2": 5}), "entry 'star-2' lacks variant, seats, levels"),
        (_ladder_text({"star-2": {"variant": "star", "seats": 2}}), "entry 'star-2' lacks variant, seats, levels"),
        (_ladder_text({"chess-2": {"variant": "chess", "seats": 2, "levels": GOOD_LEVELS}}),
         "unknown variant 'chess'; variants: star, diamond, halma16"),
        (_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": []}}),
         "entry 'star-2' has a level without 'level' and 'player'"),
        (_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy"}]}}),
         "entry 'star-2' has a level without 'level' and 'player'"),
        (_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": [{"player": "random"}]}}),
         "entry 'star-2' has a level without 'level' and 'player'"),
        (_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": 3}]}}),
         "entry 'star-2' has a level without 'level' and 'player'"),
    ],
)
def test_each_malformed_ladder_is_refused_naming_why(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "ladder.json"
    bad.write_text(text)
    with pytest.raises(LadderError) as info:
        load_ladder(bad)
    assert message in str(info.value)


def test_a_ladder_without_the_games_entry_says_how_to_build_one(tmp_path: Path) -> None:
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": GOOD_LEVELS}})
    with pytest.raises(LadderError, match="has no entry for star-3; build one with: halma ladder --variant star "
                                          "--seats 3 CANDIDATE"):
        level_player("easy", "star", 3, path=ladder)
    # the solitaire: no command that would be refused (halma ladder takes matches of 2 or more seats)
    with pytest.raises(LadderError, match="has no entry for star-1; the ladder rates players in matches of 2 or "
                                          "more seats, so the solitaire has no levels$"):
        level_player("easy", "star", 1, path=ladder)


def test_save_ladder_makes_the_folders_it_needs(tmp_path: Path) -> None:
    from agents.ladder import save_ladder

    target = tmp_path / "new" / "nested" / "ladder.json"
    data = json.loads(_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": GOOD_LEVELS}}))
    assert save_ladder(data, target) == target
    assert load_ladder(target)["games"] == data["games"]


def _copy_shipped_model(folder: Path) -> str:
    from agents.opponent import manifest_path

    folder.mkdir(parents=True, exist_ok=True)
    for source in (SHIPPED_EXPERT, manifest_path(SHIPPED_EXPERT)):
        (folder / source.name).write_bytes(source.read_bytes())
    return SHIPPED_EXPERT.name


def test_a_relative_model_with_options_is_found_beside_the_ladder(tmp_path: Path, monkeypatch) -> None:
    """A level's model path is relative to the ladder file's folder, also when it carries options
    (``model.onnx:temperature=...``), wherever the process runs."""
    name = _copy_shipped_model(tmp_path / "models")
    ladder = _ladder_file(tmp_path / "models" / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": f"{name}:temperature=0.25"}]}})
    monkeypatch.chdir(tmp_path)  # the model is not in the working directory
    easy = level_player("easy", "star", 2, path=ladder)
    assert easy.temperature == 0.25 and easy.name == "easy"
    # what halma play announces: the ladder's player string, whatever game is asked about
    assert easy.describe(Rules("star", 3)) == f"{name}:temperature=0.25"
    assert repr(easy.describe) == f"ResolvedLevel('{name}:temperature=0.25')"


def test_a_candidate_model_is_taken_from_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    """Tournament candidates have no ladder folder: a relative ``.onnx`` path is the working directory's."""
    from agents.ladder_build import candidate_player

    name = _copy_shipped_model(tmp_path)
    monkeypatch.chdir(tmp_path)
    player = candidate_player(name, seed=3)
    assert player.select_move(Game(Rules("star", 2))) in Game(Rules("star", 2)).legal_moves()


def test_separation_with_small_sigmas_is_the_plain_ratio() -> None:
    assert separation(*_r((0.0, 0.3), (1.0, 0.4))) == pytest.approx(2.0)  # 1 / hypot(0.3, 0.4)


def test_pick_levels_falls_back_one_level_at_a_time() -> None:
    """Four candidates of which no four but three are separated give three levels, not two."""
    r = _r((0.0, 1.0), (10.0, 1.0), (20.0, 1.0), (21.0, 1.0))
    assert pick_levels(r, 4) == [0, 1, 3]


def test_a_level_without_an_entry_or_fallback_says_so(tmp_path: Path) -> None:
    """A ladder's own level (not one of the standard four) has no built-in bot for games the ladder
    lacks: ``describe`` says so and playing it is refused by name."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "coach", "player": "greedy"}]}})
    coach = LevelPlayer("coach", seed=4, path=ladder)
    assert repr(coach) == "LevelPlayer('coach', seed=4)"
    assert coach.describe(Rules("star", 2)) == "greedy"
    assert coach.describe(Rules("star", 3)) == (
        f"no player for this game ({ladder} has no star-3 entry, and the level has no built-in fallback)")
    with pytest.raises(LadderError, match="level 'coach': the ladder has no entry for star with 3 seats and the "
                                          "level has no fallback bot"):
        coach.select_move(Game(Rules("star", 3)))


def test_the_shipped_ladders_missing_game_is_named_as_the_shipped_ladder() -> None:
    from agents.registry import FALLBACK_LEVELS

    hard = LevelPlayer("hard")
    assert hard.describe(Rules("star", 1)) == (f"{FALLBACK_LEVELS['hard']} "
                                               "(built-in: the shipped ladder has no star-1 entry)")


def test_checkpoints_in_a_runs_folders_are_exported_under_the_runs_name(tmp_path: Path) -> None:
    """Two runs' ``update_000010.pt`` become two models, not one model exported twice; a snapshot and a
    file named by a number elsewhere get their folder's name too."""
    from agents.ladder_build import _prepare_candidates

    files = [make_checkpoint(tmp_path / "runs" / run / "checkpoints" / "update_000010.pt") for run in ("a", "b")]
    files.append(make_checkpoint(tmp_path / "runs" / "a" / "snapshots" / "snap_000010.pt"))
    files += [make_checkpoint(tmp_path / "kept" / name) for name in ("5m.pt", "last.pt", "best.pt", "mine.pt")]
    # a name given by its author is kept, also in a folder called checkpoints (as agents/checkpoints/star2.pt)
    files += [make_checkpoint(tmp_path / "runs" / "a" / "checkpoints" / "picked.pt"),
              make_checkpoint(tmp_path / "agents" / "checkpoints" / "star2.pt")]
    models = _prepare_candidates([str(f) for f in files], "star", 2, tmp_path / "models", 100)
    assert [Path(m).name for m in models] == [
        "star-2-a-update_000010.onnx", "star-2-b-update_000010.onnx", "star-2-a-snap_000010.onnx",
        "star-2-kept-5m.onnx", "star-2-kept-last.onnx", "star-2-kept-best.onnx", "star-2-mine.onnx",
        "star-2-picked.onnx", "star-2-star2.onnx"]


def test_candidates_that_would_share_a_model_name_are_refused_before_any_export(tmp_path: Path) -> None:
    from agents.ladder_build import _prepare_candidates

    first = make_checkpoint(tmp_path / "x" / "model.pt")
    second = make_checkpoint(tmp_path / "y" / "model.pt")
    with pytest.raises(LadderError, match=f"candidates '{first}' and '{second}' would both be exported as "
                                          "star-2-model.onnx: export one under another name first"):
        _prepare_candidates([str(first), str(second)], "star", 2, tmp_path / "models", 100)
    with pytest.raises(LadderError, match="candidates must be distinct"):
        _prepare_candidates(["random", "greedy", " random"], "star", 2, tmp_path / "models", 100)
    with pytest.raises(ValueError, match="nosuchbot"):  # a bad candidate after a checkpoint
        _prepare_candidates([str(first), "nosuchbot"], "star", 2, tmp_path / "models", 100)
    odd = make_checkpoint(tmp_path / "z" / "my model.pt")  # a stem that is no level name
    with pytest.raises(ValueError, match=r"the exported model's level must be a plain name .*got 'my model'; export "
                                         r"it under a plain name first \(halma export CHECKPOINT --level NAME\)"):
        _prepare_candidates([str(first), str(odd)], "star", 2, tmp_path / "models", 100)
    assert not (tmp_path / "models").exists()  # nothing was exported


def test_build_entry_keeps_three_decimals_of_sigma(tmp_path: Path, monkeypatch) -> None:
    from agents.ladder_build import build_entry

    _fake_tournament(monkeypatch, [(0.0, 1.23456), (20.0, 1.0)])
    entry = build_entry(["random", "greedy"], "star", 2, 4, levels=("easy", "hard"), path=tmp_path / "ladder.json")
    assert entry["levels"][0]["sigma"] == 1.235 and entry["candidates"][0]["sigma"] == 1.235


# --- load_opponent's arguments for ladder names; a level resolved for one game ------------------


@pytest.mark.parametrize("name", ["ladder:star-3:expert", "ladder:star-2:expert", "ladder:hard", "ladder:expert"])
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"temperature": -5}, "temperature must be >= 0"),
    ({"search": "garbage"}, "search setting 'garbage'"),
    ({"search": {"top": 2.5}}, "search top must be an integer, got 2.5"),
    ({"time_budget": 0}, "time_budget must be > 0"),
    ({"time_budget": 0.05, "temperature": -5, "search": "garbage"}, "temperature must be >= 0"),
])
def test_ladder_names_check_load_opponents_arguments(name: str, kwargs: dict, message: str) -> None:
    """Invalid values are errors whatever the name resolves to (a bot, a model, a level per game)."""
    from agents.opponent import load_opponent

    with pytest.raises(ValueError, match=message):
        load_opponent(name, **kwargs)


def test_a_model_level_takes_load_opponents_arguments(tmp_path: Path) -> None:
    """docs/export.md: the arguments override the name's options (here the level's own keys)."""
    from agents.opponent import OnnxOpponent, load_opponent

    p = load_opponent("ladder:star-2:expert", seed=2, temperature=0.5, search="top=2", time_budget=0.3)
    assert isinstance(p, OnnxOpponent) and p.name == "expert"
    assert (p.temperature, p.search, p.time_budget, p.seed) == (0.5, {"top": 2, "eval": "heuristic"}, 0.3, 2)
    name = _copy_shipped_model(tmp_path)
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": f"{name}:temperature=0.5,time_budget=0.4", "search": "top=3"}]}})
    easy = level_player("easy", "star", 2, path=ladder, temperature=0.1, search=False)
    assert (easy.temperature, easy.search, easy.time_budget) == (0.1, None, 0.4)
    per_game = load_opponent("ladder:expert", temperature=0.25)  # the star-2 expert is a model
    assert per_game.player_for(Rules("star", 2)).temperature == 0.25


@pytest.mark.parametrize(("kwargs", "refused"), [({"temperature": 0.5}, "temperature=0.5"),
                                                 ({"search": "top=2"}, "search='top=2'"),
                                                 ({"search": False}, "search=False")])
def test_a_bot_level_refuses_what_it_cannot_use_by_name(kwargs: dict, refused: str) -> None:
    from agents.opponent import load_opponent

    with pytest.raises(LadderError, match=rf"^level 'expert' for star with 3 seats is the bot "
                                          rf"'search:depth=3,time=none', which cannot take {refused}: a bot level "
                                          r"takes only time_budget"):
        load_opponent("ladder:star-3:expert", **kwargs)
    per_game = load_opponent("ladder:hard", **kwargs)  # resolved per game: refused when it meets a bot's game
    with pytest.raises(LadderError, match=f"level 'hard' for star with 3 seats is the bot 'greedy', which cannot "
                                          f"take {re.escape(refused)}"):
        per_game.select_move(Game(Rules("star", 3)))
    with pytest.raises(LadderError, match=f"level 'hard' is the bot .*, which cannot take {re.escape(refused)}"):
        per_game.select_move(Game(Rules("star", 1)))  # the built-in fallback bot of a game without an entry


def test_a_ladder_files_bot_level_with_model_options_is_refused(tmp_path: Path) -> None:
    """A bot level carrying temperature or search (a model's options) was played without them."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "greedy", "temperature": 0.5}]}})
    with pytest.raises(LadderError, match="level 'easy' for star with 2 seats is the bot 'greedy', which cannot "
                                          "take temperature=0.5"):
        level_player("easy", "star", 2, path=ladder)


class _Recorder:
    """A bot that records the budgets it is given."""

    def __init__(self) -> None:
        self.budgets: list[float | None] = []

    def select_move(self, game: Game, time_budget: float | None = None):
        self.budgets.append(time_budget)
        return game.legal_moves()[0]


def test_a_bot_level_takes_time_budget_as_its_per_move_budget() -> None:
    """A bot's time_budget is the budget of a move asked for without one; a budget given with the move
    wins (as for an exported model)."""
    from agents.opponent import load_opponent

    p = load_opponent("ladder:star-3:expert", seed=1, time_budget=0.05)
    assert (p.name, p.time_budget, p.seed, type(p.bot).__name__) == ("expert", 0.05, 1, "SearchBot")
    p.bot = _Recorder()
    game = Game(Rules("star", 3))
    p.select_move(game)
    p.select_move(game, 0.5)
    assert p.bot.budgets == [0.05, 0.5]
    per_game = load_opponent("ladder:hard", time_budget=0.1)
    for rules in (Rules("star", 3), Rules("star", 1)):  # a ladder entry's bot and a built-in fallback
        inner = per_game.player_for(rules)
        assert inner.time_budget == 0.1
        inner.bot = _Recorder()
        per_game.select_move(Game(rules))
        assert inner.bot.budgets == [0.1]
    assert repr(per_game) == "LevelPlayer('hard', seed=None, time_budget=0.1)"


def test_a_level_resolved_for_one_game_refuses_another() -> None:
    """``ladder:GAME:LEVEL`` is that game's level: a bot level refuses another game as a model level does;
    the plain level names keep following the game."""
    import copy
    import pickle

    from agents.opponent import OpponentError

    bot = make_player("ladder:star-3:expert", seed=0)
    star3 = Game(Rules("star", 3))
    for p in (bot, copy.deepcopy(bot), pickle.loads(pickle.dumps(bot))):
        with pytest.raises(LadderError, match=r"^level 'expert' \(search:depth=3,time=none\) was resolved for star "
                                              r"with 3 seats; it cannot play halma16 with 4 seats"):
            p.select_move(Game(Rules("halma16", 4)))
    assert make_player("ladder:star-3:easy", seed=0).select_move(star3) in star3.legal_moves()
    assert level_player("easy", "star", 3, seed=0).select_move(star3, 1.0) in star3.legal_moves()
    with pytest.raises(LadderError, match="was resolved for star with 3 seats; it cannot play star with 2 seats"):
        level_player("easy", "star", 3).select_move(Game(Rules("star", 2)))
    model = make_player("ladder:star-2:expert", seed=0)  # the model level's refusal, for comparison
    with pytest.raises(OpponentError, match="cannot play star with 3 seats"):
        model.select_move(star3)
    for name in ("easy", "ladder:easy"):  # one name, every game
        plain = make_player(name, seed=0)
        for rules in (Rules("star", 3), Rules("halma16", 4), Rules("star", 2), Rules("star", 1)):
            g = Game(rules)
            assert plain.select_move(g) in g.legal_moves()


def test_a_ladder_entry_naming_a_model_of_another_game_is_refused(tmp_path: Path) -> None:
    name = _copy_shipped_model(tmp_path)
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-3": {"variant": "star", "seats": 3, "levels": [
        {"level": "easy", "player": name}]}})
    with pytest.raises(LadderError, match=f"level 'easy' for star with 3 seats is the model '{name}', "
                                          "exported for star with 2 seats"):
        level_player("easy", "star", 3, path=ladder)


@pytest.mark.parametrize("spec", ["random", "greedy", "search:depth=1,time=none", "mcts:iterations=5", "crossing",
                                  "agents/checkpoints/star2.pt", "agents/ladder/star-2-star2.onnx", "hard",
                                  "ladder:star-2:hard", "ladder:star-2:expert"])
def test_every_player_refuses_what_is_not_a_game(spec: str) -> None:
    """A server that stored a position text (or lost the game) gets a TypeError naming what it passed,
    not an AttributeError from inside the player, and never a move."""
    player = make_player(str(ROOT / spec) if spec.startswith("agents/") else spec, seed=0)
    with pytest.raises(TypeError, match=r"select_move needs a halma_env\.Game, got NoneType$"):
        player.select_move(None)
    with pytest.raises(TypeError, match=r"got str \(load a position text with Game\.from_position\)"):
        player.select_move(Game(Rules("star", 2)).position(), 0.5)


def test_a_level_player_checks_its_seed_when_made() -> None:
    for seed in (-1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="seed must be None or an integer >= 0"):
            LevelPlayer("medium", seed=seed)


def test_threads_sharing_a_level_player_make_its_game_player_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight threads meeting a game at once: one makes the player (a model load), the others wait for it."""
    import threading
    import time

    import agents.ladder

    made: list[str] = []

    def slow_level_player(level: str, variant: str, seats: int, *args, **kwargs) -> str:
        made.append(level)
        time.sleep(0.05)  # a model load: long enough for the other threads to arrive meanwhile
        return f"player of {variant}-{seats}"

    monkeypatch.setattr(agents.ladder, "level_player", slow_level_player)
    shared = LevelPlayer("hard", seed=1)
    start = threading.Barrier(8)
    got: list[str] = []

    def ask() -> None:
        start.wait()
        got.append(shared.player_for(Rules("star", 2)))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == ["hard"] and got == ["player of star-2"] * 8


def test_a_level_s_first_move_gives_its_player_what_is_left_of_the_budget(monkeypatch) -> None:
    """Making the level's player (loading its model) happens inside the first select_move: that time comes off
    the budget the player gets (a 20 ms budget took 66 ms), and what is owed is at least a token budget.  (On a
    clock the test advances: a real one let a pause of the test process break the margins.)"""
    import time

    import agents.ladder
    from agents.ladder import MIN_MOVE_BUDGET, LevelPlayer

    given: list = []
    clock = [100.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])

    class Recorder:
        def select_move(self, game, time_budget=None):
            given.append(time_budget)
            return game.legal_moves()[0]

    def slow_make(self, key):
        clock[0] += 0.05  # loading the model
        return Recorder()

    monkeypatch.setattr(agents.ladder.LevelPlayer, "_make", slow_make)
    level = LevelPlayer("easy", seed=0)
    game = Game(Rules("star", 2))
    level.select_move(game, time_budget=0.2)
    level.select_move(game, time_budget=0.2)  # made already: the whole budget
    level.select_move(game)
    assert given[0] == pytest.approx(0.15) and given[1] == 0.2 and given[2] is None
    slow = LevelPlayer("easy", seed=0)
    slow.select_move(game, time_budget=0.01)
    assert given[-1] == MIN_MOVE_BUDGET
    with pytest.raises(ValueError, match="time_budget must be > 0"):
        slow.select_move(game, time_budget=0)


# --- security review: a ladder file is untrusted input; writes never follow a planted link -------------


def _plant(link: Path, victim: Path) -> None:
    """A symbolic link at ``link`` (where a write is about to happen) pointing at ``victim``."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)


def test_save_ladder_replaces_a_planted_link_and_ignores_the_old_temporary_name(tmp_path: Path) -> None:
    """save_ladder wrote through ``<ladder>.tmp`` (a fixed name another user of a shared folder could plant a
    link at) and so overwrote the link's target; now a new temporary file is renamed over the name."""
    from agents.ladder import save_ladder

    victim, victim2 = tmp_path / "victim.txt", tmp_path / "victim2.txt"
    victim.write_text("keep me")
    victim2.write_text("keep me too")
    ladder = tmp_path / "shared" / "ladder.json"
    _plant(ladder, victim)
    _plant(ladder.with_name("ladder.json.tmp"), victim2)
    data = json.loads(_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": GOOD_LEVELS}}))
    assert save_ladder(data, ladder) == ladder
    assert victim.read_text() == "keep me" and victim2.read_text() == "keep me too"
    assert not ladder.is_symlink() and load_ladder(ladder)["games"] == data["games"]
    assert sorted(p.name for p in ladder.parent.iterdir()) == ["ladder.json", "ladder.json.tmp"]  # the link left


def test_a_model_copied_beside_the_ladder_replaces_planted_links(tmp_path: Path, monkeypatch) -> None:
    """A level's model and manifest were copied with shutil.copy2 (which writes through a link at the
    destination) and the manifest stamped through ``<manifest>.tmp``: links planted at those names in the
    ladder's folder overwrote their targets.  Now the files are replaced; the targets stay as they were."""
    from agents.ladder_build import build_entry
    from agents.opponent import manifest_path, read_manifest

    _fake_tournament(monkeypatch, [(0.0, 1.0), (20.0, 1.0)])
    folder = tmp_path / "shared"
    victims = {}
    for name in ("star-2-star2.onnx", "star-2-star2.manifest.json", "star-2-star2.manifest.json.tmp",
                 "star-2-star2.onnx.tmp"):
        victim = tmp_path / f"victim-{name}"
        victim.write_text(f"victim of {name}")
        victims[victim] = victim.read_bytes()
        _plant(folder / name, victim)
    entry = build_entry(["random", str(SHIPPED_EXPERT)], "star", 2, 4, levels=("easy", "expert"),
                        path=folder / "ladder.json")
    assert entry["levels"][1]["player"] == "star-2-star2.onnx"
    assert {v: v.read_bytes() for v in victims} == victims
    model = folder / "star-2-star2.onnx"
    assert not model.is_symlink() and not manifest_path(model).is_symlink()
    assert model.read_bytes() == SHIPPED_EXPERT.read_bytes()
    assert read_manifest(model)["level"] == "expert"  # stamped, and its checksum still the model's


@pytest.mark.parametrize("model", ["../outside.onnx", "sub/../../outside.onnx", "../outside.onnx:temperature=0.5",
                                   "ABSOLUTE", "ABSOLUTE:search=top=2"])
def test_a_level_s_model_outside_the_ladder_s_folder_is_refused(tmp_path: Path, model: str) -> None:
    """A ladder file (--ladder, $HALMA_LADDER) named models anywhere (``../../x.onnx``, an absolute path) and
    they were loaded; a level's model must be a relative path inside the ladder file's folder."""
    _copy_shipped_model(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / SHIPPED_EXPERT.name).rename(tmp_path / "outside.onnx")
    model = model.replace("ABSOLUTE", str(tmp_path / "outside.onnx"))
    (tmp_path / "ladders").mkdir()
    ladder = _ladder_file(tmp_path / "ladders" / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "random"}, {"level": "hard", "player": model}]}})
    for attempt in (lambda: load_ladder(ladder), lambda: level_player("hard", "star", 2, path=ladder),
                    lambda: shipped_models(ladder)):
        with pytest.raises(LadderError) as info:
            attempt()
        message = str(info.value)
        assert "entry 'star-2', level 'hard'" in message and "outside the ladder's folder" in message, message


def test_a_link_in_the_ladder_s_folder_to_a_model_elsewhere_is_refused(tmp_path: Path) -> None:
    """The path is checked as resolved too: a symbolic link beside the ladder does not lead out of it."""
    from agents.opponent import manifest_path

    name = _copy_shipped_model(tmp_path / "elsewhere")
    folder = tmp_path / "ladders"
    folder.mkdir()
    for file in (Path(name), manifest_path(name)):  # the model and its manifest, both links
        (folder / file).symlink_to(tmp_path / "elsewhere" / file)
    ladder = _ladder_file(folder / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "hard", "player": name}]}})
    with pytest.raises(LadderError, match=r"level 'hard' for star with 2 seats is the model 'star-2-star2\.onnx', "
                                          r"outside the ladder's folder"):
        level_player("hard", "star", 2, path=ladder)
    with pytest.raises(LadderError, match="outside the ladder's folder"):
        shipped_models(ladder)
    for file in (Path(name), manifest_path(name)):  # the model itself beside the ladder is what a ladder names
        (folder / file).unlink()
    _copy_shipped_model(folder)
    assert level_player("hard", "star", 2, path=ladder).name == "hard"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_ladder_with_a_number_that_is_not_finite_is_refused(tmp_path: Path, number: str) -> None:
    """``"rating": NaN`` (which Python's json reads) was accepted and printed as a rating of nan."""
    bad = tmp_path / "ladder.json"
    bad.write_text('{"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": {"variant": "star", '
                   f'"seats": 2, "levels": [{{"level": "easy", "player": "random", "rating": {number}}}]}}}}}}')
    with pytest.raises(LadderError, match=f"ladder file '{re.escape(str(bad))}' holds the number {number}: its "
                                          "numbers must be finite"):
        load_ladder(bad)


def test_a_deeply_nested_or_huge_number_ladder_is_a_ladder_error_naming_the_file(tmp_path: Path) -> None:
    """A deeply nested document raised a bare RecursionError, an integer of more digits than Python converts
    a bare ValueError (not a LadderError, so halma play and halma ladder showed a traceback)."""
    nested = tmp_path / "nested.json"
    nested.write_text('{"format": "halma_env.ladder", "format_version": 1, "games": {}, "x": '
                      + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(LadderError, match=f"ladder file '{re.escape(str(nested))}' cannot be read \\(its JSON is "
                                          "nested too deeply\\)"):
        load_ladder(nested)
    digits = tmp_path / "digits.json"
    digits.write_text('{"format": "halma_env.ladder", "format_version": 1, "games": {}, "n": ' + "9" * 5000 + "}")
    with pytest.raises(LadderError, match=f"ladder file '{re.escape(str(digits))}' cannot be read \\(ValueError: "):
        load_ladder(digits)


@pytest.mark.parametrize(("text", "key"), [
    ('{"star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "../x.onnx", '
     '"player": "random"}]}}', "player"),
    ('{"star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "random"}]}, '
     '"star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "greedy"}]}}', "star-2"),
], ids=["level-player", "game-entry"])
def test_a_ladder_giving_a_key_twice_is_refused_naming_the_key_and_file(tmp_path: Path, text: str, key: str) -> None:
    """json's "the last one wins" loaded ``"player": "../x.onnx", "player": "random"`` as random (the refused
    path dropped unseen) and a second ``"star-2"`` entry silently replaced the first."""
    bad = tmp_path / "ladder.json"
    bad.write_text('{"format": "halma_env.ladder", "format_version": 1, "games": ' + text + "}")
    with pytest.raises(LadderError, match=f"^ladder file '{re.escape(str(bad))}': key '{key}' appears twice in one "
                                          "object; a ladder file gives each key once$"):
        load_ladder(bad)


def test_levels_rated_out_of_order_are_refused(tmp_path: Path) -> None:
    """docs/export.md: levels are ordered weakest first.  A reversed list or a swapped pair (a rating lower
    than the level before's) loaded, and halma ladder printed it as the ladder; levels without a rating
    (a hand-written entry) and equal ratings (the file rounds to 3 decimals) still load."""
    def levels(*rated: tuple[str, float | None]) -> dict:
        return {"star-2": {"variant": "star", "seats": 2, "levels": [
            {"level": name, "player": "random", **({} if r is None else {"rating": r})} for name, r in rated]}}

    reversed_ = _ladder_file(tmp_path / "reversed.json", levels(("expert", 9.0), ("hard", 5.0), ("medium", 1.0)))
    with pytest.raises(LadderError, match=f"^ladder '{re.escape(str(reversed_))}': entry 'star-2': level 'hard' "
                                          r"\(rating 5.0\) comes after 'expert' \(rating 9.0\) but is rated lower; "
                                          "levels are listed weakest first"):
        load_ladder(reversed_)
    swapped = _ladder_file(tmp_path / "swapped.json", levels(("easy", 1.0), ("medium", 9.0), ("hard", None),
                                                           ("expert", 5.0)))
    with pytest.raises(LadderError, match="level 'expert' \\(rating 5.0\\) comes after 'medium' \\(rating 9.0\\)"):
        load_ladder(swapped)
    with pytest.raises(LadderError, match="comes after 'expert'"):  # the writer checks it too
        save_ladder(json.loads(reversed_.read_text()), tmp_path / "written.json")
    assert not (tmp_path / "written.json").exists()
    fine = _ladder_file(tmp_path / "fine.json", levels(("easy", 1.0), ("medium", None), ("hard", 1.0),
                                                        ("expert", 2.5)))
    assert [lv["level"] for lv in load_ladder(fine)["games"]["star-2"]["levels"]] == list(LEVELS)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_ladder_that_is_not_a_regular_file_is_refused_unread(tmp_path: Path, monkeypatch) -> None:
    """HALMA_LADDER=/dev/zero read without end (memory grew until the process died), a FIFO waited forever
    for a writer; /dev/null stands for the devices here (empty, so the old code did not hang on it)."""
    monkeypatch.setenv("HALMA_LADDER", "/dev/null")
    with pytest.raises(LadderError, match=re.escape("ladder file '/dev/null' (from $HALMA_LADDER) cannot be read "
                                                    "(it is a device, not a regular file)")):
        load_ladder()
    with pytest.raises(LadderError, match="it is a device, not a regular file"):
        load_ladder("/dev/null", missing_ok=True)  # a rebuild's read too


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_as_the_ladder_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "ladder.json"
    refused = r"cannot be read \(it is a FIFO, not a regular file\)"
    with fifo_refused_at_once(fifo), pytest.raises(LadderError, match=refused):
        load_ladder(fifo)


def test_a_ladder_file_over_16_mib_is_refused_unread(tmp_path: Path) -> None:
    from agents.ladder import MAX_LADDER_BYTES

    assert MAX_LADDER_BYTES == 16 * 2**20
    big = tmp_path / "ladder.json"
    text = _ladder_text({}).encode()
    with open(big, "wb") as f:  # a valid ladder followed by spaces (sparse where the file system allows)
        f.write(text)
        f.truncate(MAX_LADDER_BYTES + 1)
    with pytest.raises(LadderError, match=f"ladder file '{re.escape(str(big))}' is larger than 16 MiB"):
        load_ladder(big)
    with open(big, "r+b") as f:
        f.truncate(MAX_LADDER_BYTES)
        f.seek(len(text))
        f.write(b" " * (MAX_LADDER_BYTES - len(text)))
    assert load_ladder(big)["games"] == {}  # 16 MiB exactly is still read


def test_a_ladder_s_strings_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A player (or date) holding escape sequences was printed raw by halma ladder and halma play (which shows
    what a level resolves to); printable strings are shown as they are."""
    from agents.ladder import format_ladder, printable

    evil = "greedy\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mFAKE"
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "date": "\x1b[2J2024",
                                                                "levels": [{"level": "easy", "player": evil,
                                                                            "rating": 1.0},
                                                                           {"level": "hard\x07", "player": "greedy"}]}})
    table = format_ladder(load_ladder(ladder))
    assert "\x1b" not in table and "\x07" not in table
    assert f"| star-2 | {evil!r} (1.0) | - | - | - | ? games, '\\x1b[2J2024' |" in table
    assert printable("greedy:noise=0.25") == "greedy:noise=0.25" and printable("élan") == "élan"
    assert printable("a\u202eb") == "'a\\u202eb'"  # a right-to-left override is not printable either
    assert LevelPlayer("easy", path=ladder).describe(Rules("star", 2)) == repr(evil)
    with pytest.raises(LadderError) as info:
        level_player("expert", "star", 2, path=ladder)
    assert "\x07" not in str(info.value) and "levels: easy, 'hard\\x07'" in str(info.value)


@pytest.mark.parametrize(("level", "message"), [
    ({"temprature": 0.5}, r"unknown key\(s\) 'temprature'; a level has level, player, rating, mu, sigma"),
    ({"extra": [1]}, r"unknown key\(s\) 'extra'"),
    ({"mu": "12.5"}, r"mu '12\.5' is not a finite number"),
    ({"sigma": [4.2]}, r"sigma \[4\.2\] is not a finite number"),
    ({"score": True}, r"score True is not a finite number"),
    ({"mean_place": {}}, r"mean_place \{\} is not a finite number"),
    ({"ms_per_move": 10**400}, r"ms_per_move an integer of 1329 bits is not a finite number"),
    ({"separation": "2.8"}, r"separation '2\.8' is not a finite number"),
    ({"temperature": "hot"}, r"temperature 'hot' is not a finite number"),
    ({"temperature": -1}, r"temperature must be >= 0 \(a finite number\), got -1"),
    ({"time_budget": 0}, r"time_budget must be > 0 seconds"),
    ({"search": [2]}, r"search must be None, an int, a dict or 'top=K"),
], ids=["misspelt-option", "extra", "mu", "sigma", "score", "mean_place", "ms_per_move", "separation",
        "temperature-type", "temperature-range", "time_budget", "search"])
def test_a_levels_unknown_keys_and_wrong_types_are_refused_naming_the_file_entry_and_level(
        tmp_path: Path, level: dict, message: str) -> None:
    """Level entries took any key (a misspelt option was dropped) and their figures any type."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "random", "rating": 1.0}, {"level": "hard", "player": "greedy", **level}]}})
    with pytest.raises(LadderError, match=rf"^ladder {re.escape(repr(str(ladder.resolve())))}: entry 'star-2', "
                                          rf"level 'hard': {message}"):
        load_ladder(ladder)


def test_a_ladder_entrys_missing_levels_must_be_level_names(tmp_path: Path) -> None:
    """``"missing": 5`` passed the check and made asking for an absent level raise TypeError."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "missing": 5,
                                                                "levels": GOOD_LEVELS}})
    with pytest.raises(LadderError, match=r"entry 'star-2' has 'missing' 5, not a list of level names"):
        level_player("hard", "star", 2, path=ladder)


def test_every_key_a_built_level_has_passes_the_check() -> None:
    """The shipped ladder loads: its levels hold every figure build_entry writes, and its model levels what it
    records of the model rated."""
    data = load_ladder(DEFAULT_LADDER)
    assert {k for entry in data["games"].values() for lv in entry["levels"] for k in lv} == {
        "level", "player", "rating", "mu", "sigma", "score", "mean_place", "ms_per_move", "separation",
        "model_sha256", "checkpoint_sha256"}


def test_a_rating_of_null_is_printed_as_none_given(tmp_path: Path) -> None:
    """``"rating": null`` passes the check (a level need not be rated) but made format_ladder raise TypeError.
    (A ``"tournament"`` that is not an object is refused by the check now; format_ladder still shows one as
    unknown.)"""
    from agents.ladder import format_ladder

    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "random", "rating": None}]}})
    data = load_ladder(ladder)
    assert "| star-2 | random (nan) | - | - | - | ? games, ? |" in format_ladder(data)
    odd = {**data, "games": {"star-2": {**data["games"]["star-2"], "tournament": "odd"}}}
    assert "| star-2 | random (nan) | - | - | - | ? games, ? |" in format_ladder(odd)


def test_a_candidate_whose_model_name_would_be_too_long_is_refused_before_any_export(tmp_path: Path) -> None:
    from agents.ladder_build import _prepare_candidates

    run = tmp_path / ("r" * 95) / "checkpoints"
    checkpoint = make_checkpoint(run / "last.pt")
    with pytest.raises(ValueError, match="the exported model's (level|name) must be a plain name of at most 100 "):
        _prepare_candidates([str(make_checkpoint(tmp_path / "ok.pt")), str(checkpoint)], "star", 2, tmp_path / "m", 100)
    assert not (tmp_path / "m").exists()


def test_a_ladder_entry_with_a_number_json_cannot_hold_is_not_written(tmp_path: Path, capsys, monkeypatch) -> None:
    """save_ladder writes strict JSON: an entry with a NaN (which the loader now refuses) is an error naming the
    file, exit 2, and the file is not written (it was written, then could not be read back)."""
    from agents.cli import main
    from agents.ladder import save_ladder

    _fake_tournament(monkeypatch, [(0.0, 1.0), (math.nan, 1.0)])
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a", "random", "greedy"]) == 2
    err = capsys.readouterr().err
    assert f"halma ladder: error: cannot write the ladder file '{ladder}': " in err and "Traceback" not in err
    assert not ladder.exists()
    data = json.loads(_ladder_text({"star-2": {"variant": "star", "seats": 2, "levels": GOOD_LEVELS, "x": math.inf}}))
    with pytest.raises(ValueError):
        save_ladder(data, ladder)
    assert not ladder.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("player", ["/work/elsewhere/star2.pt", "../../star2.pt", "agents/checkpoints/star2.PT "])
def test_a_ladder_level_cannot_be_a_checkpoint_loaded_from_anywhere(tmp_path: Path, player: str) -> None:
    """make_player loads a .pt from any path (a relative one from the working directory): a ladder file's level
    escaped the 'models inside the ladder's folder' rule that way. A level is a bot spec or an .onnx model."""
    ladder = _ladder_file(tmp_path / "l.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": player}]}})
    with pytest.raises(LadderError, match=r"entry 'star-2', level 'easy': the player .* is a checkpoint; a level's "
                                          r"player is a bot spec or an exported \.onnx model"):
        load_ladder(ladder)


def test_a_ladder_level_name_must_be_a_string(tmp_path: Path) -> None:
    ladder = _ladder_file(tmp_path / "l.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": ["x"], "player": "random"}]}})
    with pytest.raises(LadderError, match="entry 'star-2' has a level name that is not a string"):
        load_ladder(ladder)


def test_a_ladder_files_bot_level_never_thinks_past_the_level_move_limit(tmp_path: Path, monkeypatch) -> None:
    """A ladder file is untrusted: a level such as search:depth=40,time=none, asked for a move without a
    budget (as the environments ask), would never answer; it gets LEVEL_MOVE_LIMIT instead. A budget given
    with the move, or the level's own time_budget, still wins."""
    import threading
    import time

    import agents.ladder as ladder

    path = _ladder_file(tmp_path / "l.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "expert", "player": "search:depth=40,time=none"},
        {"level": "hard", "player": "search:depth=40,time=none", "time_budget": 0.5},
        {"level": "medium", "player": "search:depth=40,time=none", "time_budget": 1e9}]}})
    expert = ladder.level_player("expert", "star", 2, path=path)
    assert expert.time_budget == ladder.LEVEL_MOVE_LIMIT == 10.0
    assert ladder.level_player("hard", "star", 2, path=path).time_budget == 0.5
    assert ladder.level_player("medium", "star", 2, path=path).time_budget == ladder.LEVEL_MOVE_LIMIT  # not 1e9
    from agents.opponent import RUN_TIME_LIMIT

    assert ladder.LEVEL_MOVE_LIMIT == RUN_TIME_LIMIT  # one bound for a level, bot or model
    by_name = ladder.LevelPlayer("expert", path=path)
    assert by_name.player_for(Rules("star", 2)).time_budget == ladder.LEVEL_MOVE_LIMIT
    recorded = ladder.level_player("expert", "star", 2, path=path)
    recorded.bot = _Recorder()
    recorded.select_move(Game(Rules("star", 2)))
    recorded.select_move(Game(Rules("star", 2)), 0.25)
    assert recorded.bot.budgets == [ladder.LEVEL_MOVE_LIMIT, 0.25]

    # and the real search answers within the (here shortened) limit
    monkeypatch.setattr(ladder, "LEVEL_MOVE_LIMIT", 0.3)
    player = ladder.level_player("expert", "star", 2, path=path)
    moves: list = []
    started = time.perf_counter()
    thread = threading.Thread(target=lambda: moves.append(player.select_move(Game(Rules("star", 2)))), daemon=True)
    thread.start()
    thread.join(30)
    assert moves and time.perf_counter() - started < 5  # 0.3 s, and room for a loaded machine
    assert moves[0] in Game(Rules("star", 2)).legal_moves()


class _NoReseed:
    """A bot as a plugin author may write it: seeded at construction, no ``reseed`` method."""

    def __init__(self, name: str = "noreseed", seed: int | None = None) -> None:
        import random

        self.name, self.seed, self._rng = name, seed, random.Random(seed)

    def select_move(self, game: Game, time_budget: float | None = None) -> Any:
        return self._rng.choice(game.legal_moves())


def test_a_level_whose_bot_has_no_reseed_is_made_again_on_reseed(tmp_path: Path, monkeypatch) -> None:
    """LevelPlayer.reseed called player.reseed: the environments' second seeded reset raised AttributeError."""
    import agents.registry

    monkeypatch.setitem(agents.registry.BOTS, "noreseed", "tests.test_ladder:_NoReseed")
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "noreseed"}]}})
    level = LevelPlayer("easy", seed=1, path=ladder)
    first = level.player_for(Rules("star", 2))
    level.reseed(5)
    again = level.player_for(Rules("star", 2))
    assert again is not first and again.seed == 5
    moves = [level.select_move(Game(Rules("star", 2))) for _ in range(3)]
    level.reseed(5)
    assert [level.select_move(Game(Rules("star", 2))) for _ in range(3)] == moves  # reproducible from the seed


# --- an entry's tournament record (candidates, tournament, command, date) is checked as its levels are ----


_ROW = {"player": "greedy", "rating": 1.5, "mu": 12.0, "sigma": 3.5, "score": 0.5, "mean_place": 1.5,
        "ms_per_move": 0.2}


@pytest.mark.parametrize(("record", "message"), [
    ({"candidates": 5}, r" has 'candidates' 5, not a list of rows"),
    ({"candidates": {"player": "greedy"}}, r" has 'candidates' \{'player': 'greedy'\}, not a list of rows"),
    ({"candidates": [_ROW, 5]}, r", candidates\[1\] is 5, not an object with 'player' and 'rating'"),
    ({"candidates": [["greedy", 1.5]]}, r", candidates\[0\] is \['greedy', 1\.5\], not an object"),
    ({"candidates": [{**_ROW, "player": 3}]}, r", candidates\[0\] has 'player' 3, not a string"),
    ({"candidates": [{"rating": 1.5}]}, r", candidates\[0\] has 'player' None, not a string"),
    ({"candidates": [{"player": "greedy"}]}, r", candidates\[0\] \('greedy'\) has no rating"),
    ({"candidates": [{**_ROW, "rating": None}]}, r", candidates\[0\] \('greedy'\) has no rating"),
    ({"candidates": [{**_ROW, "rating": "1.5"}]}, r", candidates\[0\] \('greedy'\): rating '1\.5' is not a finite"),
    ({"candidates": [{**_ROW, "rating": True}]}, r", candidates\[0\] \('greedy'\): rating True is not a finite"),
    ({"candidates": [{**_ROW, "rating": 10**400}]},
     r", candidates\[0\] \('greedy'\): rating an integer of 1329 bits is not a finite"),
    ({"candidates": [_ROW, {**_ROW, "player": "random", "mu": [1]}]},
     r", candidates\[1\] \('random'\): mu \[1\] is not a finite number"),
    ({"candidates": [{**_ROW, "ms_per_move": {}}]},
     r", candidates\[0\] \('greedy'\): ms_per_move \{\} is not a finite"),
    ({"candidates": [{**_ROW, "level": ["easy"]}]},
     r", candidates\[0\] \('greedy'\): level \['easy'\] is not a level name"),
    ({"tournament": "odd"}, r" has 'tournament' 'odd', not an object"),
    ({"tournament": [288]}, r" has 'tournament' \[288\], not an object"),
    ({"tournament": {"games": "288"}}, r", tournament: games '288' is not a positive integer"),
    ({"tournament": {"games": 0}}, r", tournament: games 0 is not a positive integer"),
    ({"tournament": {"games": 2.5}}, r", tournament: games 2\.5 is not a positive integer"),
    ({"tournament": {"games": True}}, r", tournament: games True is not a positive integer"),
    ({"tournament": {"games": list(range(100))}}, r", tournament: games \[0, 1, 2.*\.\.\. \(list\) is not a posi"),
    ({"date": 20260102}, r" has 'date' 20260102, not a string"),
    ({"date": None}, r" has 'date' None, not a string"),
    ({"command": ["halma", "ladder"]}, r" has 'command' \['halma', 'ladder'\], not a string"),
], ids=["candidates-int", "candidates-object", "row-int", "row-list", "player-int", "player-missing",
        "rating-missing", "rating-null", "rating-string", "rating-bool", "rating-huge", "mu-list",
        "ms_per_move-object", "level-list", "tournament-string", "tournament-list", "games-string", "games-zero",
        "games-float", "games-bool", "games-list", "date-int", "date-null", "command-list"])
def test_an_entrys_candidates_and_tournament_record_are_checked_naming_the_file_entry_and_row(
        tmp_path: Path, capsys, record: dict, message: str) -> None:
    """The candidates rows, the tournament, command and date were only printed, never checked: a row that is no
    object, a player that is no string, a rating that is a string or a 400-digit integer (which halma ladder
    --json printed whole), a tournament 'games' list (halma ladder printed it in its table) all loaded."""
    from agents.cli import main

    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2,
                                                                "levels": GOOD_LEVELS, **record}})
    with pytest.raises(LadderError, match=rf"^ladder {re.escape(repr(str(ladder.resolve())))}: entry 'star-2'"
                                          rf"{message}"):
        load_ladder(ladder)
    assert main(["ladder", "--ladder", str(ladder)]) == 2  # printing it: an error, not a table or a traceback
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"halma ladder: error: ladder '{ladder.resolve()}': entry 'star-2'")
    assert "Traceback" not in err


def test_a_bad_candidate_row_is_named_with_its_player_escaped(tmp_path: Path) -> None:
    evil = "greedy\x1b[2J\x1b[31mFAKE"
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": GOOD_LEVELS,
                                                                "candidates": [{"player": evil, "rating": "x"}]}})
    with pytest.raises(LadderError) as info:
        load_ladder(ladder)
    assert "\x1b" not in str(info.value)
    assert str(info.value).endswith(f"entry 'star-2', candidates[0] ({evil!r}): rating 'x' is not a finite number")


@pytest.mark.parametrize(("variant", "seats", "message"), [
    (["star"], 2, r"unknown variant \['star'\]; variants: star, diamond, halma16"),
    ("star" * 100, 2, r"unknown variant 'starstar.*\.\.\. \(str\); variants"),
    ("star", True, r"star is played by 1, 2, 3, 4, 5, 6 seats, not True"),
    ("star", 2.0, r"star is played by 1, 2, 3, 4, 5, 6 seats, not 2\.0"),
    ("star", "2", r"star is played by 1, 2, 3, 4, 5, 6 seats, not '2'"),
], ids=["variant-list", "variant-long", "seats-bool", "seats-float", "seats-string"])
def test_an_entrys_game_is_refused_naming_the_file_and_entry(tmp_path: Path, variant: object, seats: object,
                                                             message: str) -> None:
    """game_key's refusal named neither the file nor the entry (and "seats": true read as "is for star-True")."""
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": variant, "seats": seats,
                                                                "levels": GOOD_LEVELS}})
    with pytest.raises(LadderError, match=rf"^ladder {re.escape(repr(str(ladder.resolve())))}: entry 'star-2': "
                                          rf"{message}"):
        load_ladder(ladder)


def test_a_fresh_entry_with_a_nan_rating_is_refused_by_the_check_before_writing(tmp_path: Path) -> None:
    """A NaN rating in a candidates row (what a candidate without a game scored) reached json.dumps, whose
    'Out of range float values' named no row; the check names it, and nothing is written."""
    from agents.ladder import save_ladder

    entry = {"variant": "star", "seats": 2, "levels": GOOD_LEVELS, "candidates": [{**_ROW, "rating": math.nan}]}
    path = tmp_path / "ladder.json"
    with pytest.raises(LadderError, match=r"entry 'star-2', candidates\[0\] \('greedy'\): rating nan is not a finite"):
        save_ladder({"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": entry}}, path)
    assert not path.exists()


def test_the_shipped_ladder_and_every_built_entry_pass_the_record_check(tmp_path: Path, capsys,
                                                                        monkeypatch) -> None:
    """What the writers write still loads: the shipped file (every entry with candidates, tournament, command,
    date), an entry halma ladder builds (with 'level' on its chosen rows and 'missing'), and an entry without
    any record (the fields are optional: a hand-written ladder may have levels only)."""
    from agents.cli import main
    from agents.ladder import format_ladder, save_ladder
    from agents.ladder_build import build_entry

    shipped = load_ladder(DEFAULT_LADDER)
    for entry in shipped["games"].values():
        assert entry["candidates"] and all(isinstance(r["player"], str) and math.isfinite(r["rating"])
                                           for r in entry["candidates"])
        assert type(entry["tournament"]["games"]) is int and isinstance(entry["command"], str)
    assert {k for entry in shipped["games"].values() for r in entry["candidates"] for k in r} == {
        "player", "rating", "mu", "sigma", "score", "mean_place", "ms_per_move", "level", "model_sha256",
        "checkpoint_sha256"}

    _fake_tournament(monkeypatch, [(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (20.0, 1.0)])
    ladder = tmp_path / "ladder.json"
    entry = build_entry(["random", "greedy:noise=0.9", "greedy:noise=0.5", "greedy"], "star", 2, 5, path=ladder,
                        command="halma ladder x")
    assert entry["missing"] and any("level" in r for r in entry["candidates"])
    plain = {"variant": "star", "seats": 3, "levels": GOOD_LEVELS}
    save_ladder({"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": entry, "star-3": plain}},
                ladder)
    loaded = load_ladder(ladder)["games"]
    assert loaded["star-2"]["candidates"] == entry["candidates"] and loaded["star-3"] == plain
    assert "| star-3 | random (nan) | - | - | - | ? games, ? |" in format_ladder(load_ladder(ladder))
    # and what the command itself writes
    written = tmp_path / "written.json"
    assert main(["ladder", "--ladder", str(written), "--quiet", "--games", "5", "random", "greedy:noise=0.9",
                 "greedy:noise=0.5", "greedy"]) == 0
    capsys.readouterr()
    assert load_ladder(written)["games"]["star-2"]["tournament"]["games"] == 5


@pytest.mark.parametrize("existed", [False, True])
def test_an_interrupted_build_removes_the_models_its_exports_added(tmp_path: Path, monkeypatch, existed: bool) -> None:
    """Ctrl-C (or SIGTERM, or an error) during the tournament left the exported candidates beside the ladder,
    though no entry was written.  Another file at an export's name was replaced by it (and stayed replaced):
    that build is refused now, before any export or game, and the file stays as it was."""
    import agents.arena
    from agents.ladder_build import build_entry

    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")
    model = tmp_path / "star-2-run-last.onnx"
    if existed:
        model.write_text("an earlier export")

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.arena, "run_tournament", interrupted)
    refused = "is not an export this command may replace"
    with pytest.raises(LadderError if existed else KeyboardInterrupt, match=refused if existed else None):
        build_entry(["greedy", str(ckpt)], "star", 2, 4, levels=("easy", "hard"), path=tmp_path / "ladder.json")
    left = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert left == (["star-2-run-last.onnx"] if existed else [])
    assert not existed or model.read_text() == "an earlier export"


def test_a_garbled_ladder_named_by_halma_ladder_says_so(tmp_path: Path, monkeypatch) -> None:
    """Its content errors name the file by its absolute path; from $HALMA_LADDER they did not say where that
    came from, where the missing and unreadable files did."""
    monkeypatch.chdir(tmp_path)
    Path("notes.txt").write_text("my notes\n")
    monkeypatch.setenv("HALMA_LADDER", "notes.txt")
    read = re.escape(f"ladder file {str(tmp_path / 'notes.txt')!r} cannot be read (")
    with pytest.raises(LadderError, match=read) as e:
        load_ladder()
    assert str(e.value).endswith("(the ladder file from $HALMA_LADDER='notes.txt')")
    with pytest.raises(LadderError) as given:  # named by --ladder: no such note
        load_ladder("notes.txt")
    assert "HALMA_LADDER" not in str(given.value)
