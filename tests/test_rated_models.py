"""A ladder's model levels and the files they rated: ``halma export`` keeps what ``halma ladder`` wrote into the
manifest of a model it replaces with an export of the same checkpoint and drops it for another checkpoint's, and
the ladder records each model's sha256 (and checkpoint) so that a level whose file was replaced since is refused,
not played under the old rating (docs/export.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.ladder import DEFAULT_LADDER, LadderError, level_player, load_ladder
from agents.opponent import file_sha256, manifest_path, read_manifest
from tests.opponent_helpers import make_checkpoint, write_graph_model
from tests.test_ladder import _copy_shipped_model, _fake_tournament, _ladder_file


def _named_checkpoint(path: Path, seed: int) -> Path:
    """A star-2 checkpoint of the run ``quickstart`` (its default level), whose weights depend on ``seed``."""
    import torch

    from agents.checkpoint import save_checkpoint

    data = torch.load(make_checkpoint(path.with_name(f"raw_{path.name}"), seed=seed), weights_only=False)
    return save_checkpoint(path, {**data, "config": {"name": "quickstart"}})


def _stamp(model: Path, level: str, rating: float) -> None:
    """What ``halma ladder`` writes into the manifest of a model that became a level."""
    from agents.ladder_build import _stamp_manifest

    _stamp_manifest(model.parent, model.name, level, rating, "star-2")


# --- halma export over a rated model -----------------------------------------------------------------------------


def test_a_re_export_of_the_same_checkpoint_keeps_the_ladder_s_level_and_rating(tmp_path: Path, capsys,
                                                                                monkeypatch) -> None:
    """The README tour: export, halma ladder (medium), export the unchanged checkpoint again.  The second export
    wrote "level quickstart" and no rating over what the ladder wrote, while the ladder file still lists the model
    as medium; it keeps them now, and says so."""
    from agents.cli import main

    monkeypatch.chdir(tmp_path)
    last = _named_checkpoint(tmp_path / "last.pt", seed=1)
    argv = ["export", str(last), "--name", "my_agent", "--out", "exports"]
    assert main(argv) == 0
    assert "level quickstart" in capsys.readouterr().out
    model = Path("exports/my_agent.onnx")
    _stamp(model, "medium", 1.474)
    stamped = read_manifest(model)
    assert main(argv) == 0
    out = capsys.readouterr().out
    again = read_manifest(model)
    assert {k: again[k] for k in ("level", "rating", "rating_source")} == {
        k: stamped[k] for k in ("level", "rating", "rating_source")}
    assert again["level"] == "medium" and again["rating"] == 1.474
    assert again["rating_source"].startswith("halma ladder (star-2, ")
    assert "level medium, encoding" in out
    assert out.splitlines()[-1] == (f"kept the level medium and rating 1.474 that {stamped['rating_source']} gave "
                                    "the earlier export of this checkpoint (the same model)")


def test_a_forced_export_of_another_checkpoint_drops_the_ladder_s_level_and_rating(tmp_path: Path, capsys) -> None:
    """``--force`` over a rated model of another checkpoint: the rating described the model replaced, so the
    manifest gets the export's defaults, and the printed line says the rating was dropped and halma ladder rates
    the new one again."""
    from agents.cli import main

    last, other = _named_checkpoint(tmp_path / "last.pt", seed=1), _named_checkpoint(tmp_path / "other.pt", seed=2)
    out = tmp_path / "exports"
    assert main(["export", str(last), "--name", "my_agent", "--out", str(out)]) == 0
    model = out / "my_agent.onnx"
    _stamp(model, "medium", 1.474)
    source = read_manifest(model)["rating_source"]
    capsys.readouterr()
    assert main(["export", str(other), "--name", "my_agent", "--out", str(out), "--force"]) == 0
    printed = capsys.readouterr().out
    m = read_manifest(model)
    assert (m["level"], m["rating"], m["rating_source"]) == ("quickstart", None, None)
    assert m["source"]["checkpoint"] == str(other)
    assert printed.splitlines()[-1] == (
        f"dropped the level medium and rating 1.474 that {source} gave the model it replaced, which was exported "
        "from another checkpoint: the rating does not describe this one (halma ladder rates it again; a ladder "
        "naming this file refuses it until then)")


def test_a_level_or_rating_given_by_hand_replaces_the_ladder_s(tmp_path: Path, capsys) -> None:
    """The stamp is kept or dropped whole: ``--rating``, or a ``--level`` other than the ladder's, labels the
    model by hand (the export's own fields, and a line saying what was dropped); ``--level`` naming the
    ladder's own level keeps it."""
    from agents.export import export_checkpoint

    last = _named_checkpoint(tmp_path / "last.pt", seed=1)
    out = tmp_path / "exports"
    model = export_checkpoint(last, None, out, name="my_agent", check_positions=2)
    _stamp(model, "medium", 1.474)
    source = read_manifest(model)["rating_source"]

    notes: list[str] = []
    export_checkpoint(last, "medium", out, name="my_agent", check_positions=2, notes=notes)
    assert (read_manifest(model)["level"], read_manifest(model)["rating"]) == ("medium", 1.474)
    assert notes == [f"kept the level medium and rating 1.474 that {source} gave the earlier export of this "
                     "checkpoint (the same model)"]

    notes.clear()
    export_checkpoint(last, None, out, name="my_agent", check_positions=2, rating=3.5, notes=notes)
    m = read_manifest(model)
    assert (m["level"], m["rating"], m["rating_source"]) == ("quickstart", 3.5, "halma export --rating")
    assert notes == [f"dropped the level medium and rating 1.474 that {source} gave the earlier export of this "
                     "checkpoint: --rating given"]

    _stamp(model, "medium", 1.474)
    notes.clear()
    export_checkpoint(last, "hard", out, name="my_agent", check_positions=2, notes=notes)
    m = read_manifest(model)
    assert (m["level"], m["rating"], m["rating_source"]) == ("hard", None, None)
    assert notes[0].endswith("gave the earlier export of this checkpoint: --level given")

    notes.clear()  # a manifest no ladder rated: nothing to keep, nothing to say
    export_checkpoint(last, "hard", out, name="my_agent", check_positions=2, notes=notes)
    assert notes == []


# --- the ladder records the model it rated ---------------------------------------------------------------------


def test_build_entry_records_each_model_s_sha256_and_checkpoint(tmp_path: Path, monkeypatch) -> None:
    """A level and a candidate row that are an exported model carry ``model_sha256`` (the file's) and
    ``checkpoint_sha256`` (its manifest's source); a bot's row carries neither; the entry saves and loads."""
    from agents.ladder import save_ladder
    from agents.ladder_build import build_entry

    name = _copy_shipped_model(tmp_path)  # beside the ladder, as in the README tour
    model = tmp_path / name
    _fake_tournament(monkeypatch, [(0.0, 1.0), (20.0, 1.0), (40.0, 1.0)])
    entry = build_entry(["random", str(model), "greedy"], "star", 2, 6, levels=("easy", "medium", "hard"),
                        path=tmp_path / "ladder.json")
    record = {"model_sha256": file_sha256(model),
              "checkpoint_sha256": read_manifest(model)["source"]["checkpoint_sha256"]}
    by_level = {lv["level"]: lv for lv in entry["levels"]}
    assert {k: by_level["medium"].get(k) for k in record} == record and by_level["medium"]["player"] == name
    assert not {"model_sha256", "checkpoint_sha256"} & {*by_level["easy"], *by_level["hard"]}
    rows = {r["player"]: r for r in entry["candidates"]}
    assert {k: rows[str(model)].get(k) for k in record} == record
    assert "model_sha256" not in rows["random"]
    path = save_ladder({"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": entry}},
                       tmp_path / "ladder.json")
    assert load_ladder(path)["games"]["star-2"]["levels"][1]["model_sha256"] == record["model_sha256"]


def _rated_ladder(folder: Path, record: dict | None = None) -> tuple[Path, Path]:
    """(ladder, model): a star-2 ladder whose ``easy`` is the shipped expert model copied beside it, recorded as
    ``record`` says (default: the file's own sha256 and checkpoint)."""
    name = _copy_shipped_model(folder)
    model = folder / name
    if record is None:
        record = {"model_sha256": file_sha256(model),
                  "checkpoint_sha256": read_manifest(model)["source"]["checkpoint_sha256"]}
    ladder = _ladder_file(folder / "my_ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": name, "rating": 1.0, **record},
        {"level": "medium", "player": "greedy", "rating": 2.0}]}})
    return ladder, model


def _replace_model(model: Path) -> None:
    """Another model at ``model``'s name, its manifest matching it (what ``halma export --force`` leaves)."""
    model.unlink()
    manifest_path(model).unlink()
    write_graph_model(model)


def test_a_level_whose_model_was_replaced_is_refused_naming_the_level_the_file_and_the_fix(tmp_path: Path) -> None:
    ladder, model = _rated_ladder(tmp_path)
    assert level_player("easy", "star", 2, path=ladder).policy.path == model.resolve()  # the model rated
    rated = file_sha256(model)
    checkpoint = read_manifest(model)["source"]["checkpoint_sha256"]
    _replace_model(model)
    now = file_sha256(model)
    with pytest.raises(LadderError) as caught:
        level_player("easy", "star", 2, path=ladder)
    assert str(caught.value) == (
        f"level 'easy' of the star-2 ladder {str(ladder)!r} is the model {str(model.resolve())!r}, which is not the "
        f"model the ladder rated (sha256 {now[:12]}..., rated {rated[:12]}...: replaced since, by halma export "
        f"--force?): rate it again (halma ladder --ladder {ladder} --variant star --seats 2 CANDIDATE..., as the "
        f"entry's command did), or export the checkpoint it was rated from (sha256 {checkpoint[:12]}...) to that "
        "file again (halma export CHECKPOINT --force)")
    assert "\n" not in str(caught.value)
    # the level resolved per game (make_player("easy"), the environments) refuses it at its first move
    from agents.ladder import LevelPlayer
    from halma_env import Game, Rules

    with pytest.raises(LadderError, match="which is not the model the ladder rated"):
        LevelPlayer("easy", path=ladder).select_move(Game(Rules("star", 2)))
    assert level_player("medium", "star", 2, path=ladder).name == "medium"  # the other levels still play


def test_a_model_level_matches_by_its_sha256_or_by_the_checkpoint_it_was_rated_from(tmp_path: Path) -> None:
    """An export of the rated checkpoint again is the same model (another torch may write other bytes): the level
    plays.  Without ``checkpoint_sha256`` only the file's sha256 matches; without ``model_sha256`` (a ladder
    written before it was recorded, or by hand) nothing is checked."""
    checkpoint = read_manifest(DEFAULT_LADDER.parent / "star-2-star2.onnx")["source"]["checkpoint_sha256"]
    other = "0" * 64
    ladder, _ = _rated_ladder(tmp_path / "a", {"model_sha256": other, "checkpoint_sha256": checkpoint})
    assert level_player("easy", "star", 2, path=ladder).name == "easy"
    ladder, _ = _rated_ladder(tmp_path / "b", {"model_sha256": other})
    with pytest.raises(LadderError, match=r"rated 000000000000\.\.\.: replaced since, by halma export --force\?\): "
                                          r"rate it again \(halma ladder --ladder .* CANDIDATE\.\.\., as the entry's "
                                          r"command did\)$"):
        level_player("easy", "star", 2, path=ladder)
    ladder, model = _rated_ladder(tmp_path / "c", {})
    _replace_model(model)
    assert level_player("easy", "star", 2, path=ladder).name == "easy"


@pytest.mark.parametrize(("record", "message"), [
    ({"model_sha256": "abc"}, r"level 'easy': model_sha256 'abc' is not a sha256 \(64 lowercase hex digits\)"),
    ({"model_sha256": "A" * 64}, "model_sha256 'AAAA.* is not a sha256"),
    ({"model_sha256": None}, "model_sha256 None is not a sha256"),
    ({"model_sha256": "0" * 64, "checkpoint_sha256": 5}, "checkpoint_sha256 5 is not a sha256"),
    ({"checkpoint_sha256": "0" * 64}, "checkpoint_sha256 is recorded without model_sha256"),
])
def test_the_model_record_is_checked_when_the_ladder_loads(tmp_path: Path, record: dict, message: str) -> None:
    ladder, _ = _rated_ladder(tmp_path, record)
    with pytest.raises(LadderError, match=message):
        load_ladder(ladder)


def test_a_bot_row_with_a_model_record_is_refused(tmp_path: Path) -> None:
    level = _ladder_file(tmp_path / "l.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "greedy", "model_sha256": "0" * 64}]}})
    with pytest.raises(LadderError, match="level 'easy': model_sha256 records an exported model, but the player "
                                          "'greedy' is a bot spec"):
        load_ladder(level)
    row = _ladder_file(tmp_path / "c.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": "greedy"}], "candidates": [{"player": "x.onnx", "rating": 1.0,
                                                                  "model_sha256": "xyz"}]}})
    with pytest.raises(LadderError, match=r"candidates\[0\] \('x.onnx'\): model_sha256 'xyz' is not a sha256"):
        load_ladder(row)


def test_the_shipped_model_levels_record_the_files_they_rated() -> None:
    """The shipped ladder carries the record for its model levels and candidates (added from the files its
    2026-12-02 build rated, docs/export.md), and those levels play."""
    data = load_ladder(DEFAULT_LADDER)
    seen = 0
    for key, entry in data["games"].items():
        for lv in entry["levels"]:
            if ".onnx" in lv["player"]:
                model = DEFAULT_LADDER.parent / lv["player"]
                assert lv["model_sha256"] == file_sha256(model)
                assert lv["checkpoint_sha256"] == read_manifest(model)["source"]["checkpoint_sha256"]
                variant, _, seats = key.rpartition("-")
                assert level_player(lv["level"], variant, int(seats)).name == lv["level"]
                seen += 1
        for row in entry["candidates"]:
            if ".onnx" in row["player"]:
                by_name = {Path(lv["player"]).name: lv for lv in entry["levels"]}
                assert row["model_sha256"] == by_name[Path(row["player"]).name]["model_sha256"]
    assert seen == 2


# --- the whole walk-through, through the commands -----------------------------------------------------------------


def test_the_tour_re_export_keeps_the_level_and_a_forced_one_is_refused_by_the_ladder(tmp_path: Path, capsys,
                                                                                      monkeypatch) -> None:
    """``halma export`` -> ``halma ladder`` (medium) -> the same export again: the manifest and the ladder still say
    medium and the level plays.  ``halma export --force`` of another checkpoint: ``halma play`` and ``halma eval``
    of the level fail with exit status 2 and one line naming the level, the file and the fix, and so does the
    environment; exporting the rated checkpoint again makes the level play again."""
    from agents.cli import main
    from halma_env import HalmaEnv

    monkeypatch.chdir(tmp_path)
    last, other = _named_checkpoint(tmp_path / "last.pt", seed=1), _named_checkpoint(tmp_path / "other.pt", seed=2)
    export = ["export", str(last), "--name", "my_agent", "--out", "exports"]
    assert main(export) == 0
    _fake_tournament(monkeypatch, [(0.0, 1.0), (20.0, 1.0)])
    assert main(["ladder", "--ladder", "exports/my_ladder.json", "--quiet", "--games", "4", "--levels", "easy,medium",
                 "random", "exports/my_agent.onnx"]) == 0
    assert read_manifest(Path("exports/my_agent.onnx"))["level"] == "medium"
    assert main(export) == 0
    assert read_manifest(Path("exports/my_agent.onnx"))["level"] == "medium"
    assert "kept the level medium" in capsys.readouterr().out
    monkeypatch.setenv("HALMA_LADDER", "exports/my_ladder.json")
    assert level_player("medium", "star", 2).name == "medium"

    assert main(["export", str(other), "--name", "my_agent", "--out", "exports", "--force"]) == 0
    assert "dropped the level medium" in capsys.readouterr().out
    ladder_before = Path("exports/my_ladder.json").read_bytes()
    for argv in (["play", "--players", "human,ladder:medium"], ["eval", "ladder:medium", "random", "--games", "2"]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        err = captured.err
        assert err.count("\n") == 1 and "Traceback" not in err and err.startswith(f"halma {argv[0]}: error: ")
        assert ("level 'medium' of the star-2 ladder 'exports/my_ladder.json' is the model "
                f"{str(tmp_path.resolve() / 'exports' / 'my_agent.onnx')!r}, which is not the model the ladder rated"
                in err)
        assert "halma ladder --ladder exports/my_ladder.json --variant star --seats 2 CANDIDATE..." in err
    assert Path("exports/my_ladder.json").read_bytes() == ladder_before  # nothing written
    env = HalmaEnv(variant="star", num_players=2, seat=0, opponents="medium")
    with pytest.raises(ValueError, match="level 'medium' of the star-2 ladder .* which is not the model"):
        env.reset(seed=0)

    assert main(["export", str(last), "--name", "my_agent", "--out", "exports", "--force"]) == 0
    assert level_player("medium", "star", 2).name == "medium"
    assert json.loads(Path("exports/my_ladder.json").read_text())["games"]["star-2"]["levels"][1]["level"] == "medium"
