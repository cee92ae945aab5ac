"""halma export and exported opponents: the ONNX model plays the checkpoint's moves, runs without
torch, answers in time, and bad files fail with errors that name the problem."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.opponent import OnnxOpponent, OnnxPolicy, OpponentError, load_opponent, manifest_path, read_manifest
from halma_env import Game, Move, Rules
from halma_env.encoding import ENCODING_VERSION
from tests.engine_helpers import assert_within_budget
from tests.opponent_helpers import make_checkpoint

ROOT = Path(__file__).resolve().parents[1]
# a star-2 model the ladder ships (exported with torch once): the tests that only need *an* exported model use it, so
# they run where torch is not installed; its manifest records the training config, and not the fields added since
SHIPPED_MODEL = ROOT / "agents" / "ladder" / "star-2-star2.onnx"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(checkpoint, exported model) for star with 2 seats."""
    from agents.export import export_checkpoint

    d = tmp_path_factory.mktemp("export")
    ckpt = make_checkpoint(d / "s2.pt")
    return ckpt, export_checkpoint(ckpt, "test", d / "out", rating=12.5)


def random_positions(variant: str, seats: int, count: int, seed: int) -> list[Game]:
    from agents.export import sample_positions

    return sample_positions(variant, seats, count, seed=seed)


def test_manifest_records_the_game_encoding_source_and_checksum(exported: tuple[Path, Path]) -> None:
    ckpt, path = exported
    assert path.name == "star-2-test.onnx" and manifest_path(path).name == "star-2-test.manifest.json"
    m = read_manifest(path)
    assert (m["variant"], m["num_players"], m["level"], m["rating"]) == ("star", 2, "test", 12.5)
    assert m["encoding_version"] == ENCODING_VERSION
    assert m["source"]["checkpoint"] == str(ckpt)
    from agents.config import NetworkConfig

    assert m["source"]["network"] == vars(NetworkConfig()) and m["source"]["config"] == {"note": "test checkpoint"}
    assert m["source"]["global_step"] == 1234
    assert m["exported_at"].endswith("+00:00") and len(m["onnx_sha256"]) == 64
    assert m["export_check"]["greedy_mismatches"] == 0 and m["export_check"]["max_logit_diff"] < 1e-3


def test_exported_and_original_give_the_same_moves_on_200_positions(exported: tuple[Path, Path],
                                                                    request: pytest.FixtureRequest) -> None:
    import torch

    from agents.policy import load_policy_player

    # a tiny network: extra threads only contend on a shared machine (put back after: the worker's later tests ran
    # on one thread)
    threads = torch.get_num_threads()
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    torch.set_num_threads(1)
    ckpt, path = exported
    torch_player = load_policy_player(ckpt)
    onnx_player = load_opponent(path)
    policy = onnx_player.policy
    games = random_positions("star", 2, 200, seed=7)
    enc = policy.encoding
    obs = np.stack([enc.observation(g, g.to_move) for g in games])
    masks = np.stack([enc.action_mask(g) for g in games])
    with torch.no_grad():
        t_logits, t_value = torch_player.net.dense_logits(torch.from_numpy(obs), torch.from_numpy(masks))
    o_logits, o_value = policy.evaluate(obs, masks)  # one batch of 200: the batch axis is dynamic
    legal = masks.astype(bool)
    np.testing.assert_allclose(o_logits[legal], t_logits.numpy()[legal], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(o_value, t_value.numpy(), rtol=1e-4, atol=1e-4)
    assert (o_logits[~legal] <= -1e7).all(), "illegal actions must stay masked in the exported graph"
    same = sum(torch_player.select_move(g) == onnx_player.select_move(g) for g in games)
    assert same == len(games)
    # the positions really test something: many distinct moves, spread-out logits
    assert len({str(onnx_player.select_move(g)) for g in games}) > 50


def test_evaluate_refuses_what_the_model_would_misread() -> None:
    """A mask of another batch size was broadcast over the positions, and a cast to int8 made a 0.6 a 0 and
    a 300 a 44: the logits of inputs no encoder writes came back without a word."""
    policy = OnnxPolicy(SHIPPED_MODEL)
    enc = policy.encoding
    games = [Game(Rules("star", 2)), Game(Rules("star", 2))]
    games[1].play("113-104")
    obs = np.stack([enc.observation(g, g.to_move) for g in games])
    masks = np.stack([enc.action_mask(g) for g in games])
    logits, values = policy.evaluate(obs.astype(bool), masks.astype(np.int64))  # other 0/1 dtypes are fine
    assert logits.shape == (2, 14641) and values.shape == (2,)
    for bad_obs, bad_masks, message in [
        (obs[:1], masks, "the same number: got 1 and 2"),
        (obs, masks[:1], "the same number: got 2 and 1"),
        (obs[:0], masks[:0], "one or more positions each, the same number: got 0 and 0"),
        (obs * 0.6, masks, "observations must be 0s and 1s of an integer or bool dtype (int8 is the model's), "
                           "got float64"),
        (obs, masks.astype(np.int64) * 300, "masks must be 0s and 1s, got values from 0 to 300"),
        (obs - 1, masks, "observations must be 0s and 1s, got values from -1 to 0"),
    ]:
        with pytest.raises(ValueError) as error:
            policy.evaluate(bad_obs, bad_masks)
        assert message in str(error.value)


def test_multiseat_diamond_export_matches(tmp_path: Path) -> None:
    from agents.export import compare, export_checkpoint
    from agents.policy import load_policy_player

    ckpt = make_checkpoint(tmp_path / "d3.pt", "diamond", 3, seed=4)
    path = export_checkpoint(ckpt, "hard", tmp_path, check_positions=8)
    check = compare(load_policy_player(ckpt).net, OnnxPolicy(path), random_positions("diamond", 3, 40, seed=2))
    assert check["greedy_mismatches"] == 0 and check["max_logit_diff"] < 1e-3, check
    # its test vectors: a seat in each frame (kings and closed camps in the planes), verified on a fresh load
    from agents.export import check_test_vectors

    m = read_manifest(path)
    assert [v["seat"] for v in m["test_vectors"]] == [0, 1, 0, 1, 2, 0, 2] and m["plays_seats"] == [0, 1, 2]
    assert m["interface"]["canonical_turns"] == {"degrees": 60, "per_seat": [0, 4, 2]}
    assert check_test_vectors(OnnxPolicy(path)) == []


def test_an_export_removes_the_scratch_folders_of_exports_killed_outright(tmp_path: Path) -> None:
    """An export killed by SIGKILL (the OOM killer) left OUT/.export-XXXX/ with a whole model in it, and no later
    export removed it: the scratch folders carry their process id now, and an export into the folder removes
    those of processes that no longer run (a live export's stays)."""
    import os

    from agents.export import export_checkpoint

    ckpt = make_checkpoint(tmp_path / "s2.pt")
    out = tmp_path / "out"
    dead, live = out / ".export-999999999-0a1b2c", out / f".export-{os.getpid()}-3d4e5f"  # (pid_max is 2**22)
    for folder in (dead, live):
        folder.mkdir(parents=True)
        (folder / "m.onnx").write_bytes(b"a model")
    path = export_checkpoint(ckpt, "hard", out, check_positions=4)
    assert sorted(p.name for p in out.iterdir()) == sorted([live.name, path.name, manifest_path(path).name])


def test_export_of_a_network_with_attention_matches(tmp_path: Path) -> None:
    from agents.export import compare, export_checkpoint
    from agents.policy import load_policy_player

    ckpt = make_checkpoint(tmp_path / "att.pt", attention_layers=1, seed=5)
    path = export_checkpoint(ckpt, "hard", tmp_path, check_positions=8)
    check = compare(load_policy_player(ckpt).net, OnnxPolicy(path), random_positions("star", 2, 40, seed=3))
    assert check["greedy_mismatches"] == 0 and check["max_logit_diff"] < 1e-3, check


def test_export_of_a_network_with_reach_features_matches(tmp_path: Path) -> None:
    """The reach planes' int8 propagation exports through plain ops (no bitcast) with the same values."""
    from agents.export import compare, export_checkpoint
    from agents.policy import load_policy_player

    for variant in ("star", "halma16"):
        ckpt = make_checkpoint(tmp_path / f"reach-{variant}.pt", variant, reach_features=True, seed=6)
        path = export_checkpoint(ckpt, "hard", tmp_path, check_positions=8)
        check = compare(load_policy_player(ckpt).net, OnnxPolicy(path), random_positions(variant, 2, 40, seed=4))
        assert check["greedy_mismatches"] == 0 and check["max_logit_diff"] < 1e-3, (variant, check)


def test_importing_and_playing_does_not_load_torch() -> None:
    path = SHIPPED_MODEL
    code = (
        "import sys, agents.opponent\n"
        "assert 'torch' not in sys.modules, 'import'\n"
        "from agents.opponent import load_opponent\n"
        "from halma_env import Game, Rules\n"
        f"p = load_opponent({str(path)!r}, seed=1)\n"
        f"q = load_opponent({str(path) + ':search=top=4'!r}, seed=1)\n"
        "g = Game(Rules('star', 2))\n"
        "for i in range(12):\n"
        "    g.play((p if i % 2 else q).select_move(g, 1.0))\n"
        "assert 'torch' not in sys.modules, 'play'\n"
        "print('ok', g.ply)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 12"


def test_temperature_is_seeded_and_greedy_is_deterministic() -> None:
    path = SHIPPED_MODEL
    games = random_positions("star", 2, 20, seed=3)

    def moves(**kw) -> list[str]:
        p = load_opponent(path, **kw)
        return [str(p.select_move(g)) for g in games]

    assert moves(seed=1) == moves(seed=2)  # greedy ignores the seed
    hot = moves(seed=5, temperature=2.0)
    assert hot == moves(seed=5, temperature=2.0)
    assert any(hot != moves(seed=s, temperature=2.0) for s in range(6, 10))
    assert hot != moves(seed=5)


def test_search_plays_legal_moves_within_the_budget() -> None:
    path = SHIPPED_MODEL
    player = load_opponent(f"{path}:search=top=8,eval=heuristic", seed=0)
    assert player.search == {"top": 8, "eval": "heuristic"}
    valued = load_opponent(path, search="top=3,eval=value")
    for g in random_positions("star", 2, 6, seed=11):
        move = assert_within_budget(lambda g=g: player.select_move(g, time_budget=0.1), 0.1, "onnx search")
        assert move in g.legal_moves()
        assert valued.select_move(g) in g.legal_moves()


def test_search_takes_a_finishing_move() -> None:
    from tests.engine_helpers import one_move_from_finishing

    path = SHIPPED_MODEL
    # as in test_bots: seat 0 has goal holes 0-8 filled and its last piece next to hole 9
    game, finishing = one_move_from_finishing()
    assert finishing
    assert load_opponent(path, search=6).select_move(game) in finishing


def test_wrong_game_is_refused() -> None:
    path = SHIPPED_MODEL
    player = load_opponent(path)
    with pytest.raises(OpponentError, match="exported for star with 2 seats; it cannot play star with 3 seats"):
        player.select_move(Game(Rules("star", 3)))
    with pytest.raises(OpponentError, match="cannot play diamond with 2"):
        player.select_move(Game(Rules("diamond", 2)))


def _copy(path: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, dst / path.name)
    shutil.copy(manifest_path(path), manifest_path(dst / path.name))
    return dst / path.name


def _rewrite(path: Path, **changes) -> None:
    m = json.loads(manifest_path(path).read_text())
    m.update(changes)
    manifest_path(path).write_text(json.dumps(m))


@pytest.mark.parametrize(("key", "wanted"), [
    ("level", "a string or null"), ("rating_source", "a string or null"), ("exported_at", "a string"),
    ("torch_version", "a string"), ("onnx_file", "a string"), ("onnx_sha256", "a string"),
    ("inputs", "an object"), ("outputs", "an object"), ("export_check", "an object"), ("source", "an object"),
    ("variant", "a string"),
])
def test_every_descriptive_manifest_field_is_type_checked_by_name(tmp_path: Path, key: str, wanted: str) -> None:
    """Each field other code reads or prints has its type checked when the manifest is read, by name (a
    wrong type would fail later, where a table is formatted or a field compared; found unpinned field by
    field by mutation testing)."""
    for bad in (True, 5, [] if wanted != "an object" else "x"):
        model = _copy(SHIPPED_MODEL, tmp_path / f"{key}_{type(bad).__name__}")
        _rewrite(model, **{key: bad})
        with pytest.raises(OpponentError, match=re.escape(f"': {key} must be {wanted}, got {bad!r}")):
            load_opponent(model)


def test_bad_files_fail_with_clear_errors(tmp_path: Path) -> None:
    from agents.opponent import file_sha256

    good = SHIPPED_MODEL
    with pytest.raises(OpponentError, match="does not exist"):
        load_opponent(tmp_path / "none.onnx")
    # not ONNX at all (with a manifest whose checksum matches the garbage)
    junk = _copy(good, tmp_path / "junk")
    junk.write_bytes(b"\x00garbage, not a protobuf" * 50)
    _rewrite(junk, onnx_sha256=file_sha256(junk))
    with pytest.raises(OpponentError, match="is not a valid ONNX model"):
        load_opponent(junk)
    # the model changed after export
    changed = _copy(good, tmp_path / "changed")
    changed.write_bytes(changed.read_bytes() + b"\x00")
    with pytest.raises(OpponentError, match="does not match its manifest's sha256"):
        load_opponent(changed)
    # no manifest / corrupt manifest / missing field / not a manifest
    lone = _copy(good, tmp_path / "lone")
    manifest_path(lone).unlink()
    with pytest.raises(OpponentError, match="has no manifest"):
        load_opponent(lone)
    corrupt = _copy(good, tmp_path / "corrupt")
    manifest_path(corrupt).write_text("{not json")
    with pytest.raises(OpponentError, match="corrupt or not JSON"):
        load_opponent(corrupt)
    lacking = _copy(good, tmp_path / "lacking")
    m = json.loads(manifest_path(lacking).read_text())
    del m["variant"]
    manifest_path(lacking).write_text(json.dumps(m))
    with pytest.raises(OpponentError, match="lacks variant"):
        load_opponent(lacking)
    other = _copy(good, tmp_path / "other")
    _rewrite(other, format="something else")
    with pytest.raises(OpponentError, match="is not an opponent manifest"):
        load_opponent(other)
    # a newer encoding than this code supports
    newer = _copy(good, tmp_path / "newer")
    _rewrite(newer, encoding_version=ENCODING_VERSION + 1)
    with pytest.raises(OpponentError, match=f"encoding version {ENCODING_VERSION + 1}, newer than this code"):
        load_opponent(newer)
    # a manifest claiming another game than the graph was built for
    lying = _copy(good, tmp_path / "lying")  # its interface fields edited to match, so the graph tells
    source = {**read_manifest(good)["source"], "config": {"note": "no training config"}}  # nor the config
    _rewrite(lying, variant="halma16", observation_shape=[16, 16, 12], num_actions=65536, source=source)
    with pytest.raises(OpponentError, match="scores 14641 actions but its manifest's game has 65536"):
        load_opponent(lying)
    bad_seats = _copy(good, tmp_path / "seats")
    _rewrite(bad_seats, num_players=7)
    with pytest.raises(OpponentError, match=r"manifest\.json': star is played by 1, 2, 3, 4, 5, 6 seats, not 7$"):
        load_opponent(bad_seats)
    # true is not an encoding version (JSON booleans are Python ints)
    boolean = _copy(good, tmp_path / "boolean")
    _rewrite(boolean, encoding_version=True)
    with pytest.raises(OpponentError, match="encoding_version must be an integer, got True"):
        load_opponent(boolean)
    # the registry passes the same errors on
    from agents.registry import make_player

    with pytest.raises(ValueError, match="newer than this code"):
        make_player(str(newer))


def test_load_options_reach_the_opponent() -> None:
    """Options in the name and load_opponent's arguments (which override them) are the opponent's."""
    path = SHIPPED_MODEL
    from_name = load_opponent(f"{path}:temperature=0.5,time_budget=0.4,search=top=3,eval=value", seed=2)
    assert (from_name.temperature, from_name.time_budget, from_name.search, from_name.seed) == (
        0.5, 0.4, {"top": 3, "eval": "value"}, 2)
    overridden = load_opponent(f"{path}:temperature=0.5,time_budget=0.4", temperature=0.1, time_budget=0.25)
    assert (overridden.temperature, overridden.time_budget, overridden.search) == (0.1, 0.25, None)
    assert overridden.manifest == read_manifest(path) and overridden.name == "expert"  # the model's level
    with pytest.raises(ValueError, match="^time_budget must be > 0"):
        OnnxOpponent(overridden.policy, time_budget=-1)


def test_the_value_of_a_position_is_the_networks_for_each_seat(exported: tuple[Path, Path]) -> None:
    """OnnxPolicy.value (the search's eval=value) is the checkpoint network's value of that seat's view."""
    import torch

    from agents.policy import load_policy_player

    ckpt, path = exported
    policy, net = OnnxPolicy(path), load_policy_player(ckpt).net
    for game in random_positions("star", 2, 6, seed=3):
        for seat in (0, 1):
            obs = torch.from_numpy(policy.encoding.observation(game, seat)[None])
            mask = torch.from_numpy(policy.encoding.action_mask(game)[None])
            with torch.no_grad():
                expected = float(net.dense_logits(obs, mask)[1][0])
            assert policy.value(game, seat) == pytest.approx(expected, abs=1e-4)
    values = {round(policy.value(g, 0), 4) for g in random_positions("star", 2, 6, seed=3)}
    assert len(values) > 1  # positions really differ in value


def test_search_scores_each_top_candidate_after_the_greedy_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no time limit, each of the ``top`` most likely moves is played, answered by the other seat's
    greedy policy move and scored; the best score wins, whatever its rank."""
    path = SHIPPED_MODEL
    opponent = load_opponent(path, search="top=4")
    game = random_positions("star", 2, 1, seed=11)[0]
    moves, logits, _ = opponent.policy.scores(game)
    candidates = [moves[int(i)] for i in np.argsort(-logits, kind="stable")[:4]]
    seen: list[tuple[int, Move]] = []
    scores = iter([0.1, 0.9, 0.3, 0.5])

    def record(g: Game, seat: int, search: dict) -> float:
        played = g.moves[len(game.moves):]  # the candidate, then the reply
        seen.append((len(played), played[0]))
        return next(scores)

    monkeypatch.setattr(opponent, "_evaluate", record)
    assert opponent.select_move(game) == candidates[1]  # the second most likely move scored best
    assert seen == [(2, m) for m in candidates]  # every candidate, each after one reply
    scores = iter([0.5, 0.2, 0.5, 0.5])
    assert opponent.select_move(game) == candidates[0]  # on equal scores the more likely move
    # a decided position scores by place: the seat's own finish above any undecided line, a place the other
    # seat's finish gave it (a loss) below any (it scored 1e9 - 2e6, above them all)
    monkeypatch.undo()
    from tests.engine_helpers import one_move_from_finishing

    won, finishing = one_move_from_finishing()
    won.play(finishing[0])
    assert won.places == [1, 2]
    assert [opponent._evaluate(won, seat, opponent.search) for seat in (0, 1)] == [1e9 - 1e6, -1e9 - 2e6]


def test_bad_options_and_names() -> None:
    from agents.opponent import parse_opponent_spec, parse_search

    assert parse_search(None) is None and parse_search("off") is None
    assert all(parse_search(text) is None for text in ("", " none ", "FALSE", "0")) and parse_search(False) is None
    defaults = {"top": 6, "eval": "heuristic"}  # the defaults docs/export.md gives
    assert all(parse_search(on) == defaults for on in ("on", "True", "default", True))
    assert parse_search("eval=value") == {"top": 6, "eval": "value"} and parse_search("3") == {"top": 3,
                                                                                                "eval": "heuristic"}
    with pytest.raises(ValueError, match=r"^search must be None, an int, a dict or 'top=K,eval=heuristic\|value', "
                                         r"got 2\.5$"):
        parse_search(2.5)
    assert parse_search(4) == {"top": 4, "eval": "heuristic"}
    assert parse_search("top=2,eval=value") == {"top": 2, "eval": "value"}
    with pytest.raises(ValueError, match="search eval must be one of"):
        parse_search("eval=minimax")
    with pytest.raises(ValueError, match="unknown search setting"):
        parse_search("depth=3")
    with pytest.raises(ValueError, match="search top must be >= 1"):
        parse_search("top=0")
    spec = parse_opponent_spec("a/b.onnx:temperature=0.5,search=top=3,eval=value")
    assert spec.path == "a/b.onnx" and spec.options == {"temperature": 0.5, "search": "top=3,eval=value"}
    with pytest.raises(OpponentError, match="key one of temperature, search, time_budget"):
        parse_opponent_spec("b.onnx:depth=3")
    # each option's own range check, named with the spec
    with pytest.raises(OpponentError, match=r"^opponent option temperature='-1' in 'b.onnx:temperature=-1': "
                                            r"temperature must be >= 0"):
        parse_opponent_spec("b.onnx:temperature=-1")
    with pytest.raises(OpponentError, match=r"^opponent option time_budget='0' in 'b.onnx:time_budget=0': "
                                            r"time_budget must be > 0"):
        parse_opponent_spec("b.onnx:time_budget=0")
    assert parse_opponent_spec("b.onnx:temperature=0,time_budget=none").options == {"temperature": 0.0,
                                                                                     "time_budget": None}
    with pytest.raises(OpponentError, match=r"a \.onnx file or a level \(easy, medium, hard, expert, ladder:LEVEL\)"):
        load_opponent("model.pt")
    with pytest.raises(OpponentError, match="empty opponent option in 'b.onnx:temperature=0.5,,time_budget=1'"):
        parse_opponent_spec("b.onnx:temperature=0.5,,time_budget=1")
    with pytest.raises(OpponentError, match="opponent option 'temperature' is given twice"):
        parse_opponent_spec("b.onnx:temperature=0.5,temperature=1")
    with pytest.raises(ValueError, match="empty search setting"):
        parse_search("top=2,,eval=value")
    with pytest.raises(ValueError, match="search setting 'top' is given twice"):
        parse_search("top=2,top=3")


def test_export_command_errors(exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from agents.cli import main
    from agents.export import export_checkpoint

    checkpoint, _ = exported
    (tmp_path / "a_file").write_text("")
    assert main(["export", str(checkpoint), "--level", "x", "--out", str(tmp_path / "a_file" / "exports")]) == 2
    assert "cannot write to the output directory" in capsys.readouterr().err

    assert main(["export", str(tmp_path / "missing.pt"), "--level", "x", "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "junk.pt").write_bytes(b"junk")
    assert main(["export", str(tmp_path / "junk.pt"), "--level", "x", "--out", str(tmp_path)]) == 2
    assert "corrupt or not a checkpoint" in capsys.readouterr().err
    with pytest.raises(ValueError, match="level must be a plain name"):
        export_checkpoint(tmp_path / "junk.pt", "a b", tmp_path)
    assert not list(tmp_path.glob("*.onnx"))


def test_the_level_defaults_to_the_run_name_the_checkpoint_records(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """``halma export runs/quickstart/checkpoints/last.pt`` gives ``star-2-quickstart.onnx``, as the
    shipped ladder's files are named; a checkpoint without a usable run name asks for --level."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.cli import main

    data = torch.load(make_checkpoint(tmp_path / "m.pt"), weights_only=False)
    save_checkpoint(tmp_path / "named.pt", {**data, "config": {"name": "quickstart"}})
    assert main(["export", str(tmp_path / "named.pt"), "--out", str(tmp_path / "out")]) == 0
    assert "level quickstart" in capsys.readouterr().out
    assert read_manifest(tmp_path / "out" / "star-2-quickstart.onnx")["level"] == "quickstart"
    # --level still wins over the run name
    assert main(["export", str(tmp_path / "named.pt"), "--level", "hard", "--out", str(tmp_path / "out")]) == 0
    assert read_manifest(tmp_path / "out" / "star-2-hard.onnx")["level"] == "hard"

    save_checkpoint(tmp_path / "odd.pt", {**data, "config": {"name": "my run"}})
    for checkpoint, message in ((tmp_path / "m.pt", "records no run name to use as the level: give --level NAME"),
                                (tmp_path / "odd.pt", "its run name cannot be the level (level must be a plain "
                                                      "name")):
        out = tmp_path / f"out_{checkpoint.stem}"
        assert main(["export", str(checkpoint), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and str(checkpoint) in err and "Traceback" not in err
        assert not out.exists()


def test_an_export_of_another_checkpoint_is_not_replaced_without_force(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """Two checkpoints of one run share the default name (last.pt and best.pt both export as star-2-RUN.onnx):
    the second export replaced the first without a word.  It is refused, naming the file, the checkpoint it
    came from and --force; an export of the same checkpoint is replaced (a rerun), and --force replaces any."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.cli import main

    data = torch.load(make_checkpoint(tmp_path / "m.pt"), weights_only=False)
    last, best = tmp_path / "last.pt", tmp_path / "best.pt"
    save_checkpoint(last, {**data, "config": {"name": "quickstart"}})
    save_checkpoint(best, {**data, "config": {"name": "quickstart"}, "global_step": 99})
    out = tmp_path / "out"
    model = out / "star-2-quickstart.onnx"
    assert main(["export", str(last), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["export", str(last), "--out", str(out)]) == 0  # the same checkpoint again: replaced
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["export", str(best), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"halma export: error: {str(best)!r} would be exported as {str(model)!r}, but that file holds a "
                   f"model exported from another checkpoint ({str(last)!r}, or that file before it changed): give "
                   "--force to replace it, or export under another --name or --out\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched, no scratch folder left
    assert main(["export", str(best), "--out", str(out), "--force"]) == 0
    assert read_manifest(model)["source"]["checkpoint"] == str(best)


def test_an_export_of_the_checkpoint_before_it_changed_is_named_so_and_an_unreadable_model_is_refused(
        tmp_path: Path, monkeypatch) -> None:
    """A checkpoint trained further and exported again was "exported from another checkpoint" (its own path named
    as the other one); the message says it is this checkpoint as it was.  A model there that cannot be read was a
    PermissionError traceback: it is refused by name, and --force replaces it."""
    import torch

    import agents.export
    from agents.checkpoint import save_checkpoint
    from agents.export import export_checkpoint

    data = torch.load(make_checkpoint(tmp_path / "m.pt"), weights_only=False)
    last = tmp_path / "last.pt"
    save_checkpoint(last, {**data, "config": {"name": "quickstart"}})
    model = export_checkpoint(last, None, tmp_path / "out", check_positions=2)
    save_checkpoint(last, {**data, "config": {"name": "quickstart"}, "global_step": 99})  # trained further
    with pytest.raises(ValueError, match=r"but that file holds an export of this checkpoint as it was before it "
                                         r"changed \(trained further since\?\): give --force to replace it"):
        export_checkpoint(last, None, tmp_path / "out", check_positions=2)
    before = model.read_bytes()

    real = agents.export.file_sha256

    def unreadable(path: Any) -> str:
        if Path(path) == model:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(agents.export, "file_sha256", unreadable)
    with pytest.raises(ValueError, match=r"but that file cannot be read \(Permission denied\): give --force"):
        export_checkpoint(tmp_path / "m.pt", "quickstart", tmp_path / "out", check_positions=2)
    assert model.read_bytes() == before
    monkeypatch.undo()
    assert export_checkpoint(last, None, tmp_path / "out", check_positions=2, force=True) == model
    assert read_manifest(model)["source"]["global_step"] == 99


def test_files_that_are_no_export_are_not_replaced_without_force(exported: tuple[Path, Path],
                                                                 tmp_path: Path) -> None:
    from agents.export import export_checkpoint

    checkpoint, _ = exported
    model = tmp_path / "star-2-x.onnx"
    model.write_bytes(b"a model of my own")
    with pytest.raises(ValueError, match=r"star-2-x\.onnx', but that file is not an export this command may "
                                         r"replace \(opponent model .* has no manifest.*\): give --force to "
                                         r"replace it"):
        export_checkpoint(checkpoint, "x", tmp_path, check_positions=2)
    assert model.read_bytes() == b"a model of my own"
    model.unlink()
    manifest_path(model).write_text("{}")
    with pytest.raises(ValueError, match=r"star-2-x\.onnx', but its manifest '.*star-2-x\.manifest\.json' is there "
                                         r"without it: give --force to replace it, or export under another --name or "
                                         r"--out$"):
        export_checkpoint(checkpoint, "x", tmp_path, check_positions=2)
    assert export_checkpoint(checkpoint, "x", tmp_path, check_positions=2, force=True) == model
    read_manifest(model)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--opset", "3"], "opset must be an integer from 9 to 20"),
        (["--opset", "99"], "opset must be an integer from 9 to 20"),
        (["--rating", "nan"], "rating must be a finite number, got nan"),
        (["--rating", "inf"], "rating must be a finite number, got inf"),
        (["--name", "../evil"], "name must be a plain name"),
        (["--name", ""], "name must be a plain name"),
        (["--level", ""], "level must be a plain name"),
        (["--level", ".."], "level must be a plain name"),
        (["--name", "CON"], "name must be a plain name"),  # the console device on Windows
        (["--name", "a?b"], "name must be a plain name"),
    ],
)
def test_export_flags_are_checked_before_anything_is_written(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture, flags: list[str], message: str
) -> None:
    from agents.cli import main

    checkpoint, _ = exported
    out = tmp_path / "exports"
    argv = ["export", str(checkpoint), "--level", "x", "--out", str(out), *flags]
    if "--level" in flags:
        argv[2:4] = []  # the flag's own --level replaces the default one
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # no empty output directory left behind


def test_time_per_move_is_small() -> None:
    from agents.export import _bench_positions, time_per_move

    path = SHIPPED_MODEL
    figures = time_per_move(OnnxOpponent(OnnxPolicy(path)), _bench_positions("star", 2, 10, seed=0), 0.3)
    assert figures["moves"] >= 50
    # target 10 ms on an idle core; generous here because the test machine is shared
    assert figures["median_ms"] < 50, figures


def test_a_failed_write_leaves_nothing_and_names_the_problem(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails midway (disk full, no permission) is an error naming it, not a traceback, and
    leaves neither a model without a manifest nor the output directory it made."""
    import agents.export
    from agents.cli import main

    checkpoint, _ = exported

    def no_room(path: Path, data: dict) -> Path:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(agents.export, "write_manifest", no_room)
    out = tmp_path / "new" / "exports"
    assert main(["export", str(checkpoint), "--level", "x", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "halma export: error: cannot write the export" in err and "No space left on device" in err
    assert "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_a_failed_export_keeps_the_earlier_one_of_that_name(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents.export
    from agents.export import export_checkpoint

    checkpoint, _ = exported
    path = export_checkpoint(checkpoint, "x", tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = agents.export.compare
    monkeypatch.setattr(agents.export, "compare", lambda *a: {**real(*a), "greedy_mismatches": 1})
    with pytest.raises(ValueError, match="does not reproduce"):
        export_checkpoint(checkpoint, "x", tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no scratch files either
    read_manifest(path)  # still a matching pair


def test_an_export_interrupted_between_its_two_moves_is_named_on_loading(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model and its manifest are two files, moved into place one after the other: a crash between
    the two leaves the new model beside the earlier manifest, and loading says what happened."""
    import os
    import types

    import agents.export
    from agents.export import export_checkpoint

    class Crash(BaseException):
        """Not an OSError: the process dies there, nothing tidies the pair."""

    checkpoint, _ = exported
    path = export_checkpoint(checkpoint, "x", tmp_path)
    moves: list[str] = []

    def crash_after_the_model(src: Path, dst: Path) -> None:
        moves.append(Path(dst).name)
        if len(moves) == 2:
            raise Crash
        os.replace(src, dst)

    monkeypatch.setattr(agents.export, "os", types.SimpleNamespace(replace=crash_after_the_model, getpid=os.getpid))
    other = make_checkpoint(tmp_path / "other.pt", seed=2)
    with pytest.raises(Crash):
        export_checkpoint(other, "x", tmp_path, force=True)  # (another checkpoint's export is there)
    monkeypatch.undo()
    assert moves == [path.name, manifest_path(path).name]
    with pytest.raises(OpponentError, match=r"an export of this name was interrupted .*\(export it again\)"):
        load_opponent(path)
    export_checkpoint(other, "x", tmp_path)  # exporting again repairs the pair (without --force: it is no model)
    assert read_manifest(path)["source"]["checkpoint"] == str(other)


def test_a_directory_in_the_way_is_named(exported: tuple[Path, Path], tmp_path: Path) -> None:
    from agents.export import export_checkpoint

    checkpoint, _ = exported
    (tmp_path / "star-2-x.manifest.json").mkdir()
    with pytest.raises(ValueError, match="a directory of that name is in the way"):
        export_checkpoint(checkpoint, "x", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["star-2-x.manifest.json"]


def test_manifest_records_the_documented_interface_and_check(exported: tuple[Path, Path], tmp_path: Path) -> None:
    """docs/export.md's manifest fields: the graph's interface, opset 17 and the 32-position check by
    default, the rating's source; without --rating the model is unrated (null) until halma ladder."""
    from agents.export import export_checkpoint
    from agents.opponent import file_sha256

    ckpt, path = exported
    m = read_manifest(path)
    assert (m["format"], m["format_version"]) == ("halma_env.opponent", 1)
    assert (m["observation_shape"], m["num_actions"]) == ([17, 17, 12], 121 * 121)
    assert m["inputs"] == {"observation": "int8 (batch, rows, cols, 12)", "action_mask": "int8 (batch, H*H)"}
    assert m["outputs"] == {"logits": "float32 (batch, H*H), illegal = -1e8", "value": "float32 (batch,)"}
    assert m["opset"] == 17 and m["export_check"]["positions"] == 32
    assert m["rating_source"] == "halma export --rating"
    assert m["source"]["checkpoint_sha256"] == file_sha256(ckpt) and m["source"]["update"] is None
    import torch

    assert m["torch_version"] == torch.__version__ and m["onnx_file"] == path.name
    assert set(m["export_check"]) == {"positions", "max_logit_diff", "max_value_diff", "greedy_mismatches"}
    # without --rating: unrated until halma ladder rates it; the checkpoint's PPO update is recorded
    from agents.checkpoint import save_checkpoint

    updated = save_checkpoint(tmp_path / "u.pt", {**torch.load(ckpt, weights_only=False), "update": 7})
    unrated = read_manifest(export_checkpoint(updated, "x", tmp_path, check_positions=5))
    assert (unrated["rating"], unrated["rating_source"], unrated["export_check"]["positions"]) == (None, None, 5)
    assert unrated["source"]["update"] == 7


@pytest.mark.parametrize("name", ["x", "Expert", "X", "run_1.5", "star2-v3", "-", "a.b"])
def test_plain_level_names_are_accepted(name: str) -> None:
    from agents.export import check_level_name

    assert check_level_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "a b", "tab\t", "a/b", "a\\b", "a:b", "a,b", "a=b", None, 5])
def test_levels_that_are_not_a_plain_name_are_refused(name: object) -> None:
    from agents.export import check_level_name

    with pytest.raises(ValueError, match="^stem must be a plain name"):
        check_level_name(name, "stem")


def test_the_opset_range_is_inclusive_and_booleans_are_refused(exported: tuple[Path, Path], tmp_path: Path) -> None:
    """docs/export.md: --opset takes 9 to 20 (both ends exported and checked); True is not an opset."""
    from agents.export import export_checkpoint, opset_range

    ckpt, _ = exported
    assert opset_range() == (9, 20)
    for opset in opset_range():
        path = export_checkpoint(ckpt, f"o{opset}", tmp_path, opset=opset, check_positions=2)
        assert read_manifest(path)["opset"] == opset
    with pytest.raises(ValueError, match="opset must be an integer from 9 to 20"):
        export_checkpoint(ckpt, "b", tmp_path / "b", opset=True)
    assert not (tmp_path / "b").exists()


def test_an_exporter_failure_is_a_value_error_naming_the_opset(exported: tuple[Path, Path], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's own export error (an operator newer than the opset) becomes one line, not a traceback."""
    import torch

    from agents.export import export_checkpoint

    def unsupported(*args, **kwargs) -> None:
        raise torch.onnx.OnnxExporterError("Unsupported: ONNX export of operator foo\n(details)")

    monkeypatch.setattr(torch.onnx, "export", unsupported)
    ckpt, _ = exported
    with pytest.raises(ValueError, match=r"^cannot export with opset 17: Unsupported: ONNX export of operator foo$"):
        export_checkpoint(ckpt, "x", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_reach_features_need_opset_12_and_a_graph_onnxruntime_refuses_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX has no integer Max before opset 12: a reach-features network is refused below it
    by name (before, the export check failed naming a scratch file already deleted); 12 exports.  Any
    graph onnxruntime will not load is refused naming the opset, and leaves no files."""
    import agents.export as export

    ckpt = make_checkpoint(tmp_path / "reach.pt", reach_features=True)
    with pytest.raises(ValueError, match=r"^a network with reach features \(network.reach_features\) needs opset 12 "
                                         r"or later .*, got 11$"):
        export.export_checkpoint(ckpt, "r", tmp_path / "out", opset=11)
    assert not (tmp_path / "out").exists()
    path = export.export_checkpoint(ckpt, "r", tmp_path / "ok", opset=12, check_positions=2)
    assert read_manifest(path)["opset"] == 12

    def unloadable(path: Path) -> None:
        raise OpponentError(f"opponent model {str(path)!r} is not a valid ONNX model (INVALID_GRAPH)")

    monkeypatch.setattr(export, "OnnxPolicy", unloadable)
    with pytest.raises(ValueError, match=r"^the model exported with opset 17 does not load in onnxruntime "
                                         r"\(a later --opset may\): .*INVALID_GRAPH"):
        export.export_checkpoint(ckpt, "r", tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_compare_measures_legal_logits_values_and_greedy_moves(exported: tuple[Path, Path]) -> None:
    """The export check's figures: differences over legal actions only, the largest value difference,
    and how many positions' greedy move differs."""
    import types

    from agents.export import compare
    from agents.policy import load_policy_player

    ckpt, path = exported
    real = OnnxPolicy(path)
    games = random_positions("star", 2, 4, seed=5)
    net = load_policy_player(ckpt).net

    def evaluate(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = real.evaluate(obs, masks)
        logits = logits.copy()
        logits[~masks.astype(bool)] = 5e3  # illegal actions: not compared, never the greedy move
        top = int(np.argmax(np.where(masks[1].astype(bool), logits[1], -np.inf)))
        other = next(a for a in np.flatnonzero(masks[1]) if a != top)
        logits[1, other] = logits[1, top] + 0.5  # position 1 now prefers another move
        return logits, values + np.array([0.0, 0.0, 0.25, 0.0], dtype=np.float32)

    check = compare(net, types.SimpleNamespace(encoding=real.encoding, evaluate=evaluate), games)
    assert check["positions"] == 4 and check["greedy_mismatches"] == 1
    assert 0.5 <= check["max_logit_diff"] < 100, check
    assert check["max_value_diff"] == pytest.approx(0.25, abs=1e-3)
    assert compare(net, real, games)["greedy_mismatches"] == 0


@pytest.mark.parametrize(("diff", "refused"), [(1e-3, False), (1.5e-3, True)])
def test_legal_logits_must_agree_within_the_tolerance(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, diff: float, refused: bool
) -> None:
    """docs/export.md: the legal logits must agree within 1e-3 (an export exactly at it passes)."""
    import agents.export
    from agents.export import export_checkpoint

    real = agents.export.compare
    monkeypatch.setattr(agents.export, "compare", lambda *a: {**real(*a), "max_logit_diff": diff})
    ckpt, _ = exported
    if refused:
        with pytest.raises(ValueError, match="does not reproduce"):
            export_checkpoint(ckpt, "x", tmp_path / "out", check_positions=2)
        assert not (tmp_path / "out").exists()
    else:
        path = export_checkpoint(ckpt, "x", tmp_path / "out", check_positions=2)
        assert read_manifest(path)["export_check"]["max_logit_diff"] == diff


def test_export_command_defaults() -> None:
    """docs/export.md: --out defaults to exports/, --opset to 17, the level to the run name."""
    import argparse

    from agents.export import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["m.pt"])
    assert (args.checkpoint, args.out, args.opset, args.level, args.name, args.rating, args.force) == (
        "m.pt", "exports", 17, None, None, None, False)


class _FakeClock:
    """Wall and CPU clocks that only the fake moves advance: move of game k costs k ms of wall time
    (half of it CPU), its inference alone 0.1 k ms."""

    def __init__(self) -> None:
        self.wall = self.cpu = 100.0
        self.played: list[int] = []

    def perf_counter(self) -> float:
        return self.wall

    def thread_time(self) -> float:
        return self.cpu

    def select_move(self, game: Any) -> None:
        self.played.append(game.cost)
        self.wall += game.cost / 1000
        self.cpu += game.cost / 2000

    def evaluate(self, obs: np.ndarray, mask: np.ndarray) -> None:
        self.wall += float(obs[0, 0]) / 10000


def _timed(clock: _FakeClock, games: list[Any], seconds: float, monkeypatch: pytest.MonkeyPatch) -> dict:
    import types

    import agents.export

    enc = types.SimpleNamespace(observation=lambda g, seat: np.array([g.cost]), action_mask=lambda g: np.ones(1))
    policy = types.SimpleNamespace(encoding=enc, evaluate=clock.evaluate)
    opponent = types.SimpleNamespace(policy=policy, select_move=clock.select_move)
    monkeypatch.setattr(agents.export, "time", types.SimpleNamespace(perf_counter=clock.perf_counter,
                                                                     thread_time=clock.thread_time))
    return agents.export.time_per_move(opponent, games, seconds)


def test_time_per_move_reports_median_and_p99_of_each_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cycling through the games once each (50 costs, 1..50 ms): the move's wall time, its CPU time and the
    inference alone, each as median and 99th percentile; with no time left still 50 moves."""
    import types

    games = [types.SimpleNamespace(to_move=0, cost=k) for k in range(1, 51)]
    figures = _timed(_FakeClock(), games, 0.0, monkeypatch)
    costs = np.arange(1, 51, dtype=float)
    expected = {"moves": 50, "median_ms": 25.5, "p99_ms": np.percentile(costs, 99),
                "cpu_median_ms": 12.75, "cpu_p99_ms": np.percentile(costs, 99) / 2,
                "inference_median_ms": 2.55, "inference_p99_ms": np.percentile(costs, 99) / 10}
    assert figures == pytest.approx(expected, rel=1e-6)


def test_time_per_move_times_moves_for_the_given_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """With time to spend, moves are timed until ``seconds`` of moves and inference have passed."""
    import types

    games = [types.SimpleNamespace(to_move=0, cost=k) for k in (4, 6)]
    clock = _FakeClock()
    figures = _timed(clock, games, 1.0, monkeypatch)
    # each pair of moves takes (4 + 6) * 1.1 = 11 ms: 1 s is 91 pairs (1001 ms), 182 moves
    assert figures["moves"] == 182 and clock.played[2:] == [4, 6] * 91  # after the warm-up of both
    assert figures["median_ms"] == pytest.approx(5.0)


def test_default_models_export_the_untrained_net_for_each_game_without_a_shipped_model(tmp_path: Path) -> None:
    """halma bench opponent times every docs/export.md game: star-2, star-6, diamond-3, halma16-2 and -4;
    those the ladder ships a model for are not exported again."""
    from agents.export import _default_models

    everything_else = {("star", 2), ("star", 6), ("halma16", 2), ("halma16", 4)}
    models = _default_models(tmp_path, everything_else)
    assert [label for label, _ in models] == ["default net (untrained) diamond-3"]
    policy = OnnxPolicy(models[0][1])
    assert (policy.variant, policy.num_players) == ("diamond", 3)


def test_the_opponent_benchmark_table_and_targets(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    """run_benchmark times each shipped model and the default net of the other games (here faked), and
    the target (<= 10 ms per move at the p99, wall and CPU) is met only when every model meets it."""
    import types

    import agents.export
    import agents.ladder

    path = SHIPPED_MODEL
    calls: list[tuple] = []
    figures = iter([])

    def default_models(tmp: Path, shipped: set) -> list:
        calls.append(("defaults", shipped))
        return [("default net (untrained) star-2", path)]

    def positions(variant: str, seats: int, count: int, seed: int) -> list[Game]:
        calls.append(("positions", variant, seats, seed))
        return random_positions(variant, seats, 2, seed=0)

    def timed(opponent: OnnxOpponent, games: list[Game], seconds: float) -> dict:
        calls.append(("time", opponent.seed, seconds))
        return next(figures)

    monkeypatch.setattr(agents.ladder, "shipped_models", lambda: [path])
    monkeypatch.setattr(agents.export, "_default_models", default_models)
    monkeypatch.setattr(agents.export, "_bench_positions", positions)
    monkeypatch.setattr(agents.export, "time_per_move", timed)

    def row(p99: float, cpu_p99: float) -> dict:
        return {"moves": 60, "median_ms": 1.0, "p99_ms": p99, "cpu_median_ms": 0.5, "cpu_p99_ms": cpu_p99,
                "inference_median_ms": 0.25, "inference_p99_ms": 0.75}

    figures = iter([row(10.0, 10.0), row(4.0, 2.0)])  # exactly at the target counts as within it
    result = agents.export.run_benchmark(types.SimpleNamespace(json=False, seconds=0.5, seed=3))
    assert calls == [("defaults", {("star", 2)}), ("positions", "star", 2, 3), ("time", 3, 0.5),
                     ("positions", "star", 2, 3), ("time", 3, 0.5)]
    assert (result["threads"], result["seconds_per_model"], result["target_ms"]) == (1, 0.5, 10.0)
    assert result["all_within_target"] and result["cpu_within_target"]
    assert result["models"] == [{"model": f"ladder {path.name}", "variant": "star", "seats": 2, "actions": 14641,
                                 **row(10.0, 10.0)},
                                {"model": "default net (untrained) star-2", "variant": "star", "seats": 2,
                                 "actions": 14641, **row(4.0, 2.0)}]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| model | game | actions |") and lines[1] == "|---" * 10 + "|"
    assert lines[2].startswith(f"| ladder {path.name} | star-2 | 14641 | 60 | 1.00 | 10.00 |")
    assert "target <= 10 ms per move (wall p99): met; CPU p99 within target: yes" in lines[-1]
    # one model over the target (wall or CPU) fails it; --json prints nothing; defaults: 2 s, seed 0
    calls.clear()
    figures = iter([row(10.5, 1.0), row(1.0, 10.5)])
    result = agents.export.run_benchmark(types.SimpleNamespace(json=True, seconds=0.5, seed=3))
    assert not result["all_within_target"] and not result["cpu_within_target"]
    assert capsys.readouterr().out == ""
    calls.clear()
    figures = iter([row(1.0, 1.0), row(1.0, 1.0)])
    agents.export.run_benchmark(types.SimpleNamespace())
    assert calls[1:3] == [("positions", "star", 2, 0), ("time", 0, 2.0)]
    assert capsys.readouterr().out.startswith("| model |")


def test_export_writes_to_exports_by_default(exported: tuple[Path, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """export_checkpoint's out_dir defaults to exports/ (relative to the working directory), as --out does."""
    from agents.export import export_checkpoint

    ckpt, _ = exported
    monkeypatch.chdir(tmp_path)
    assert export_checkpoint(ckpt, "x", check_positions=2) == Path("exports") / "star-2-x.onnx"
    assert read_manifest(tmp_path / "exports" / "star-2-x.onnx")["level"] == "x"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "a/b"}, "^name must be a plain name"),
    ({"name": "x.onnx"}, "^name is the file name's stem, without .onnx: got 'x.onnx' \\(it would write x.onnx.onnx\\); "
                         "give 'x'$"),
    ({"rating": float("nan")}, "^rating must be a finite number, got nan$"),
    ({"level": "a b"}, "^level must be a plain name"),
])
def test_a_refused_argument_is_named_first(exported: tuple[Path, Path], tmp_path: Path, kwargs: dict,
                                           message: str) -> None:
    """The message starts with the argument at fault (the command prints it after 'halma export: error:')."""
    from agents.export import export_checkpoint

    ckpt, _ = exported
    with pytest.raises(ValueError, match=message):
        export_checkpoint(ckpt, **{"level": "x", **kwargs}, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bench_positions_are_seeded_unfinished_midgame_positions() -> None:
    """halma bench opponent times moves on plies of noisy greedy games (20 to 60 plies per seat), the same
    ones for the same seed."""
    from agents.export import _bench_positions

    games = _bench_positions("star", 2, 3, seed=1)
    assert len(games) == 3 and all(40 <= g.ply < 120 and not g.is_over for g in games)
    assert [g.moves for g in _bench_positions("star", 2, 3, seed=1)] == [g.moves for g in games]
    assert [g.moves for g in _bench_positions("star", 2, 3, seed=2)] != [g.moves for g in games]


@pytest.mark.parametrize(("changes", "message"), [
    # JSON true and 1.0 equal 1 in Python: a count must be an integer
    ({"format_version": True}, "format_version must be an integer, got True"),
    ({"format_version": 1.0}, "format_version must be an integer, got 1.0"),
    ({"num_players": True}, "num_players must be an integer, got True"),
    ({"num_players": 2.0}, "num_players must be an integer, got 2.0"),
    ({"num_actions": 14641.0}, "num_actions must be an integer, got 14641.0"),
    # another game than the network was trained for (the graph of star-2 and star-3 or diamond-2 is the same)
    ({"num_players": 3}, r"num_players 3 disagrees with the game the network was trained for "
                         r"\(source.config.game.num_players 2\)"),
    ({"variant": "diamond"}, "variant 'diamond' disagrees with the game the network was trained for "
                             r"\(source.config.game.variant 'star'\)"),
    # the interface fields and the file name
    ({"observation_shape": [16, 16, 12]}, r"observation_shape \[16, 16, 12\] is not that of its game "
                                          r"\(star with 2 seats: \[17, 17, 12\]\)"),
    ({"observation_shape": [17.0, 17, 12]}, r"observation_shape \[17.0, 17, 12\] is not that of its game"),
    ({"num_actions": 65536}, r"num_actions 65536 is not that of its game \(star with 2 seats: 14641\)"),
    ({"onnx_file": "other.onnx"}, r"onnx_file 'other.onnx' is not the model it describes \('star-2-star2.onnx'\)"),
])
def test_a_manifest_edited_to_claim_another_game_or_file_is_refused(tmp_path: Path, changes: dict,
                                                                    message: str) -> None:
    """The manifest's game is checked against what the model implies (its training config, its interface,
    its graph) and its file name against the file loaded; the error names the manifest and the field."""
    path = _copy(SHIPPED_MODEL, tmp_path / "m")
    _rewrite(path, **changes)
    with pytest.raises(OpponentError, match=rf"^manifest '{manifest_path(path)}': {message}"):
        load_opponent(path)


def test_a_manifest_without_a_training_config_is_checked_against_the_graph(
        exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``source.config.game`` the graph is what tells the game: its action count, and the board
    its observations have (checked even where the action count agrees)."""
    import types

    import onnxruntime

    _, good = exported
    lying = _copy(good, tmp_path / "lying")
    _rewrite(lying, variant="halma16", observation_shape=[16, 16, 12], num_actions=65536)
    with pytest.raises(OpponentError, match="scores 14641 actions but its manifest's game has 65536"):
        load_opponent(lying)
    real = onnxruntime.InferenceSession

    class Board16:  # a graph scoring star's 14641 actions on a 16 x 16 board
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.session = real(*args, **kwargs)

        def get_inputs(self) -> list:
            obs, mask = self.session.get_inputs()
            return [types.SimpleNamespace(name=obs.name, shape=["batch", 16, 16, 12]), mask]

        def get_outputs(self) -> list:
            return self.session.get_outputs()

    monkeypatch.setattr(onnxruntime, "InferenceSession", Board16)
    with pytest.raises(OpponentError, match=rf"reads observations of shape \[16, 16, 12\], but its manifest "
                                            rf"'{manifest_path(good)}' \(variant 'star', num_players 2\) needs "
                                            r"\[17, 17, 12\]$"):
        load_opponent(good)


def test_every_shipped_manifest_passes_the_cross_checks() -> None:
    """The shipped models' manifests carry what an export writes today for programs in other languages
    (``interface``, ``plays_seats``, ``trained_rules``, ``training_reward``, ``test_vectors``: they had none, so a
    game site could not check its own encoder against the files it serves), and the vectors hold."""
    from agents.export import check_test_vectors, interface, trained_rules, training_reward

    manifests = sorted((ROOT / "agents" / "ladder").glob("*.manifest.json"))
    assert len(manifests) == 2
    for manifest in manifests:
        model = manifest.with_name(manifest.name.replace(".manifest.json", ".onnx"))
        m = read_manifest(model)
        assert m["onnx_file"] == model.name and m["source"]["config"]["game"]["variant"] == m["variant"]
        variant, seats, config = m["variant"], m["num_players"], m["source"]["config"]
        assert m["interface"] == interface(variant, seats) and m["plays_seats"] == list(range(seats))
        assert m["trained_rules"] == trained_rules(config, variant, seats) is not None
        assert m["training_reward"] == training_reward(config) is not None
        assert len(m["test_vectors"]) == 3 + seats and check_test_vectors(OnnxPolicy(model)) == []


def test_search_settings_are_strict_and_consistent() -> None:
    """No truncation or type coercion: ``top`` is an integer (numpy's too), 0 means no search whether an
    int or a string, a float or a bool is an error naming it."""
    from agents.opponent import parse_search

    defaults = {"top": 6, "eval": "heuristic"}
    assert parse_search(0) is None and parse_search("0") is None and parse_search(np.int64(0)) is None
    assert parse_search(np.int64(3)) == parse_search(3) == parse_search(" 3 ") == {**defaults, "top": 3}
    assert parse_search({"top": np.int64(2)}) == parse_search({"top": 2}) == {**defaults, "top": 2}
    assert parse_search({}) == defaults and parse_search(True) == defaults
    for bad, message in (({"top": 2.5}, "search top must be an integer, got 2.5"),
                         ({"top": True}, "search top must be an integer, got True"),
                         ("top=2.5", "search top must be an integer, got '2.5'"),
                         ("top=True", "search top must be an integer, got 'True'"),
                         ({"top": 0}, "search top must be >= 1, got 0"),
                         ("-1", "search top must be >= 1, got -1"),
                         (-1, "search top must be >= 1, got -1"),
                         ({"eval": 1}, "search eval must be one of heuristic, value, got 1"),
                         ({1: 2}, "unknown search setting"),
                         (np.float64(3.0), "search must be None, an int, a dict"),
                         ([3], "search must be None, an int, a dict")):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            parse_search(bad)  # type: ignore[arg-type]
    path = SHIPPED_MODEL
    assert load_opponent(path, search=np.int64(3)).search == {**defaults, "top": 3}
    assert load_opponent(path, search=0).search is None
    with pytest.raises(ValueError, match="search top must be an integer, got 2.5"):
        load_opponent(path, search={"top": 2.5})


# --- security review: an over-long name is refused as the other bad names are ------------------------------


@pytest.mark.parametrize("flag", ["--level", "--name"])
def test_an_over_long_level_or_name_is_refused_before_anything_is_written(
        exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture, flag: str) -> None:
    """A 300-character --level or --name crashed with a bare 'OSError: File name too long' traceback."""
    from agents.cli import main

    checkpoint, _ = exported
    out = tmp_path / "exports"
    assert main(["export", str(checkpoint), flag, "x" * 300, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    what = flag.lstrip("-")
    assert err == (f"halma export: error: {what} must be a plain name of at most 100 characters (200 bytes in UTF-8: "
                   f"it names a file), got {'x' * 30!r}... (300 characters)\n")
    assert not out.exists()


def test_names_of_up_to_100_characters_and_200_bytes_are_plain() -> None:
    from agents.export import MAX_NAME_LENGTH, check_level_name

    assert MAX_NAME_LENGTH == 100
    for name in ("x" * 100, "é" * 100):  # 200 bytes in UTF-8
        assert check_level_name(name) == name
    for name in ("x" * 101, "€" * 67):  # 201 bytes
        with pytest.raises(ValueError, match="^level must be a plain name of at most 100 characters"):
            check_level_name(name)


def test_a_checkpoint_whose_config_spells_out_to_millions_of_values_is_refused(tmp_path: Path) -> None:
    """The manifest copies the checkpoint's config: lists sharing their parts (22 levels, 4 million leaves)
    from a small checkpoint wrote a manifest of tens of megabytes."""
    import torch

    from agents.checkpoint import load_checkpoint
    from agents.export import export_checkpoint

    data = load_checkpoint(ROOT / "agents" / "checkpoints" / "quickstart_star2.pt")
    shared: list = [0]
    for _ in range(22):
        shared = [shared, shared]
    data["config"] = {"name": "dag", "notes": shared}  # (not game: the loader wants a mapping there)
    path = tmp_path / "dag.pt"
    torch.save(data, path)
    with pytest.raises(ValueError, match=r"its config holds more than 10000 values; a training config has about 80"):
        export_checkpoint(path, "x", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _checkpoint_with(tmp_path: Path, **entries: Any) -> Path:
    """``make_checkpoint``'s star-2 network with a training config naming its game, and ``entries`` written
    over the saved file as they are (what a hand edit makes: the saver would refuse most)."""
    import torch

    from agents.checkpoint import save_checkpoint

    data = torch.load(make_checkpoint(tmp_path / "m.pt"), weights_only=True)
    path = save_checkpoint(tmp_path / "edited.pt", {**data, "config": {"name": "run", "seed": 1, "game": {
        "variant": "star", "num_players": 2}}, "update": 7})
    torch.save({**torch.load(path, weights_only=True), **entries}, path)
    return path


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"variant": "diamond"}, "has variant 'diamond', but its training config has game.variant 'star' (a "
                                 "checkpoint relabelled for another game?)"),
        ({"num_players": 3}, "has num_players 3, but its training config has game.num_players 2"),
        ({"network": {"channels": 16, "blocks": 2, "pair_dim": 16, "value_hidden": 32, "position_embedding": True,
                      "attention_layers": 0, "reach_features": False, "typo_key": 1}},
         "has unknown network key(s) 'typo_key'"),
        ({"update": 1.0}, "has update = 1.0 (float), expected an integer from 0"),
        ({"config": {"name": "run", "seed": float("nan")}}, "its config.seed = nan (float) cannot go into the "
                                                            "manifest, which copies the config (JSON has strings, "
                                                            "booleans, null, lists, mappings and finite numbers)"),
        ({"config": {"name": "run", "ppo": {"lr": [1, float("inf")]}}}, "its config.ppo.lr[1] = inf (float) cannot "
                                                                        "go into the manifest"),
        ({"config": {"name": "run", "seed": 2**70}}, f"its config.seed = {2**70} (int) cannot go into the manifest"),
        ({"config": {"name": "run", 3: "x"}}, "its config has the key 3 (int); the manifest copies the config, and "
                                              "JSON keys are strings"),
    ],
    ids=["relabelled-diamond", "relabelled-3-seats", "network-extra-key", "update-float", "config-nan",
         "config-inf", "config-huge-int", "config-int-key"],
)
def test_an_export_refuses_entries_a_manifest_cannot_hold_before_writing_anything(
        tmp_path: Path, entries: dict[str, Any], message: str) -> None:
    """The fuzzing review's checkpoints: star-2 weights relabelled diamond were refused with a note that a later
    --opset might load them, a tensor update was a TypeError traceback, a NaN in the config wrote "seed": NaN
    (not JSON), a misspelt network key and an int config key were dropped or converted without a word."""
    from agents.export import export_checkpoint

    path = _checkpoint_with(tmp_path, **entries)
    with pytest.raises(ValueError, match=rf"^checkpoint '{re.escape(str(path))}'(: | ){re.escape(message)}") as caught:
        export_checkpoint(path, "x", tmp_path / "out")
    assert "opset" not in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_a_manifest_the_loader_refuses_is_not_blamed_on_the_opset(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what onnxruntime does not load gets the "a later --opset may" hint: a manifest refused for its
    fields is said as such (the relabelled checkpoint's error was worded as an opset problem)."""
    import agents.opponent
    from agents.export import export_checkpoint

    def refuse(data: dict, onnx_path: Path, mpath: Path) -> None:
        raise OpponentError(f"manifest {str(mpath)!r}: variant 'star' disagrees with the game")

    monkeypatch.setattr(agents.opponent, "_check_consistent", refuse)
    path = _checkpoint_with(tmp_path)
    with pytest.raises(ValueError, match=rf"^the export of '{re.escape(str(path))}' writes a manifest that does not "
                                         r"load: manifest '.*\.manifest\.json': variant 'star' disagrees") as caught:
        export_checkpoint(path, "x", tmp_path / "out", check_positions=2)
    assert "opset" not in str(caught.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"max_logit_diff": float("nan"), "max_value_diff": 0.0}, "the exported model does not reproduce"),
        ({"max_logit_diff": 0.0, "max_value_diff": float("nan")},
         "the manifest of 'star-2-x.onnx' would not be valid JSON: export_check ({'positions': 2, 'max_logit_diff': "
         "0.0, 'max_value_diff': nan, 'greedy_mismat...) holds NaN or infinity"),
    ],
    ids=["logit-nan", "value-nan"],
)
def test_a_nan_in_the_export_check_is_refused_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          check: dict, message: str) -> None:
    """A NaN logit difference passed the ``> tolerance`` test, and the manifest writer writes NaN (not JSON)."""
    import agents.export

    monkeypatch.setattr(agents.export, "compare", lambda *args: {"positions": 2, **check, "greedy_mismatches": 0})
    with pytest.raises(ValueError, match=re.escape(message)):
        agents.export.export_checkpoint(_checkpoint_with(tmp_path), "x", tmp_path / "out", check_positions=2)
    assert not (tmp_path / "out").exists()


# --- what the manifest tells programs in other languages (docs/export.md) ----------------------

NEW_FIELDS = ("interface", "plays_seats", "trained_rules", "training_reward", "test_vectors")


def test_manifest_records_the_interface_as_data_and_the_seats_it_plays(exported: tuple[Path, Path]) -> None:
    _, path = exported
    m = read_manifest(path)
    i = m["interface"]
    assert i["inputs"] == [{"name": "observation", "dtype": "int8", "shape": ["batch", 17, 17, 12]},
                           {"name": "action_mask", "dtype": "int8", "shape": ["batch", 14641]}]
    assert i["outputs"] == [{"name": "logits", "dtype": "float32", "shape": ["batch", 14641]},
                            {"name": "value", "dtype": "float32", "shape": ["batch"]}]
    assert (i["holes"], i["rows"], i["cols"], i["planes"], i["masked_logit"]) == (121, 17, 17, 12, -1e8)
    assert i["canonical_turns"] == {"degrees": 60, "per_seat": [0, 3]}
    assert m["plays_seats"] == [0, 1]
    # the interface as data agrees with the graph itself
    session = OnnxPolicy(path).session
    for entry, arg in zip(i["inputs"] + i["outputs"], session.get_inputs() + session.get_outputs()):
        assert entry["name"] == arg.name and entry["shape"][1:] == arg.shape[1:]
        assert arg.type == f"tensor({entry['dtype'].replace('float32', 'float')})"
    # a checkpoint without a training config records neither rules nor reward
    assert m["trained_rules"] is None and m["training_reward"] is None


def test_manifest_records_the_training_rules_and_reward(exported: tuple[Path, Path], tmp_path: Path) -> None:
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.export import export_checkpoint

    ckpt, _ = exported
    config = {"game": {"variant": "star", "num_players": 2, "anti_blocking": None, "play_to_end": True,
                       "move_limit": 300, "limit_outcome": "progress", "stall_limit": None, "repetition_limit": False,
                       "reward": "win_loss", "progress_shaping": 0.5},
              "ppo": {"gamma": 0.97}}
    trained = save_checkpoint(tmp_path / "t.pt", {**torch.load(ckpt, weights_only=False), "config": config})
    m = read_manifest(export_checkpoint(trained, "t", tmp_path, check_positions=2))
    assert m["trained_rules"] == {"variant": "star", "num_players": 2, "anti_blocking": True, "play_to_end": True,
                                  "move_limit": 300, "limit_outcome": "progress", "stall_limit": None,
                                  "repetition_limit": None}
    assert Rules(**m["trained_rules"]).move_limit == 300  # the options as Rules takes them
    assert m["training_reward"] == {"reward": "win_loss", "progress_shaping": 0.5, "gamma": 0.97}


def test_a_training_config_that_gives_no_rules_is_said_not_dropped(exported: tuple[Path, Path], tmp_path: Path) -> None:
    """A checkpoint whose stored config was edited (``move_limit: -5``) exported with ``trained_rules`` null and
    no word of why (before 2026-12-07): the export still goes ahead (the model plays from its network), and its
    notes say what the config's game gives that this code refuses."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.export import export_checkpoint

    ckpt, _ = exported
    config = {"game": {"variant": "star", "num_players": 2, "move_limit": -5}}
    edited = save_checkpoint(tmp_path / "e.pt", {**torch.load(ckpt, weights_only=False), "config": config})
    notes: list[str] = []
    m = read_manifest(export_checkpoint(edited, "e", tmp_path, check_positions=2, notes=notes))
    assert m["trained_rules"] is None and m["source"]["config"] == config
    assert notes == ["trained_rules left null: the checkpoint's training config gives no rules this code reads "
                     "(move_limit must be at least 1 (or None for no limit), got -5)"]


def _independent_vector(policy: OnnxPolicy, position: str) -> dict[str, Any]:
    """A test vector recomputed without agents.export: the encoder's bytes and the loaded opponent's move."""
    import hashlib

    game = Game.from_position(position)
    enc = policy.encoding
    obs = enc.observation(game, game.to_move)
    mask = enc.action_mask(game)
    move = OnnxOpponent(policy).select_move(game)
    return {"seat": game.to_move, "observation_sha256": hashlib.sha256(obs.tobytes()).hexdigest(),
            "action_mask_sha256": hashlib.sha256(mask.tobytes()).hexdigest(), "greedy_move": f"{move.src}-{move.dst}",
            "greedy_action": enc.encode_move(game.to_move, move.src, move.dst), "legal_moves": len(game.legal_moves()),
            "observation_ones": int(obs.sum())}


def test_the_test_vectors_verify_against_a_fresh_load(exported: tuple[Path, Path], tmp_path: Path) -> None:
    """The recorded vectors hold for the model loaded again from its files (recomputed independently and by
    ``check_test_vectors``), cover the start, a turned frame and a later position, and a vector that
    disagrees is reported by field."""
    from agents.export import check_test_vectors, vector_positions

    _, path = exported
    copy = _copy(path, tmp_path / "fresh")
    vectors = json.loads(manifest_path(copy).read_text())["test_vectors"]
    assert [v["position"] for v in vectors] == vector_positions("star", 2)
    assert [v["seat"] for v in vectors] == [0, 1, 0, 1, 0]
    assert vectors[0]["position"] == Game(Rules("star", 2)).position()
    assert int(vectors[2]["position"].split()[-1]) >= 24 and int(vectors[-1]["position"].split()[-1]) >= 60
    policy = OnnxPolicy(copy)
    for v in vectors:
        fresh = _independent_vector(policy, v["position"])
        assert fresh == {k: v[k] for k in fresh}
        _, _, value = policy.scores(Game.from_position(v["position"]))
        assert abs(value - v["value"]) <= 1e-4
        assert v["greedy_move"] in [str(m) for m in Game.from_position(v["position"]).legal_moves()]
    assert check_test_vectors(policy) == []
    # the turned frame: the same opening move of seat 1 is the same action as seat 0's, its board holes turned
    assert vectors[0]["action_mask_sha256"] == vectors[1]["action_mask_sha256"]
    assert vectors[0]["observation_sha256"] != vectors[1]["observation_sha256"]
    # a recorded vector that disagrees is named
    bad = [dict(v) for v in vectors]
    bad[1]["observation_sha256"] = "0" * 64
    bad[2]["greedy_move"] = "1-2"
    bad[2]["value"] = vectors[2]["value"] + 0.01
    _rewrite(copy, test_vectors=bad)
    problems = check_test_vectors(OnnxPolicy(copy))
    assert [p.split(":")[0] for p in problems] == ["test_vectors[1] observation_sha256", "test_vectors[2] greedy_move",
                                                   "test_vectors[2] value"]
    _rewrite(copy, test_vectors="x")
    with pytest.raises(ValueError, match="test_vectors must be a list of objects with a position"):
        check_test_vectors(OnnxPolicy(copy))


@pytest.mark.parametrize(("variant", "seats"), [("star", 2), ("star", 3), ("star", 4), ("star", 6), ("diamond", 2),
                                               ("diamond", 3), ("halma16", 2)])
def test_the_test_vectors_hold_the_cases_an_encoder_gets_wrong(variant: str, seats: int) -> None:
    """Three vectors (the start, seat 1's first turn, one later position) let encoders through that turned
    seat 2 of 4 the wrong way, left the finished planes empty, generated halma16 moves out of a goal, or
    could jump a diamond king's empty start hole: every seat's frame, a late position with the kings
    away, a finished seat (3+ seats) and the goal lock (16 x 16) are now among them."""
    from agents.export import vector_positions

    positions = vector_positions(variant, seats)
    assert vector_positions(variant, seats) == positions  # seeded
    games = [Game.from_position(p) for p in positions]
    assert not any(g.is_over for g in games) and games[0].ply == 0 and games[1].ply == 1
    assert sorted({g.to_move for g in games}) == list(range(seats))
    assert [g.to_move for g in games[2:2 + seats]] == list(range(seats))
    late = games[2 + seats]
    assert late.ply >= 30 * seats
    if variant == "diamond":
        assert all(late.layout.king_start[s] not in late.pieces(s) or not late.piece_at(late.layout.king_start[s])[1]
                   for s in range(seats))
    finished = [g for g in games if "finished" in g.status]
    assert len(finished) == (1 if seats >= 3 else 0) and len(games) == 3 + seats + len(finished) + (
        variant == "halma16")
    if variant == "halma16":
        locked = games[-1]
        seat = locked.to_move
        in_goal = [h for h in locked.pieces(seat) if h in locked.layout.goals[seat]]
        assert in_goal and all(m.dst in locked.layout.goals[seat] for m in locked.legal_moves() if m.src in in_goal)
        # and one of them could step out but for the lock: a generator without it gives another mask
        assert any(locked.piece_at(n) is None and n not in locked.layout.goals[seat]
                   for h in in_goal for n in locked.geometry.neighbours[h])


def test_a_manifest_without_the_new_fields_still_loads_and_plays(exported: tuple[Path, Path], tmp_path: Path) -> None:
    """The fields added to format version 1 are optional: an older export (the shipped ladder's) loads."""
    from agents.export import check_test_vectors

    _, path = exported
    old = _copy(path, tmp_path / "old")
    m = json.loads(manifest_path(old).read_text())
    assert set(NEW_FIELDS) <= set(m)
    for key in NEW_FIELDS:
        del m[key]
    manifest_path(old).write_text(json.dumps(m))
    assert read_manifest(old)["format_version"] == 1
    game = Game(Rules("star", 2))
    assert load_opponent(old).select_move(game) == load_opponent(path).select_move(game)
    with pytest.raises(ValueError, match="has no test_vectors"):
        check_test_vectors(OnnxPolicy(old))
    for shipped in sorted((ROOT / "agents" / "ladder").glob("*.onnx")):  # exported before the fields existed
        assert load_opponent(shipped).select_move(game) in game.legal_moves()


def test_greedy_ties_go_to_the_smallest_board_move_not_the_smallest_action(tmp_path: Path) -> None:
    """docs/export.md: among equal logits the greedy opponent plays the first of ``game.legal_moves()``,
    ascending (src, dst) in board holes; for seat 1 of star 2 (hole h is canonical 120 - h) that is the
    tied move with the largest action number."""
    from halma_env.encoding import encoding
    from tests.opponent_helpers import write_graph_model

    model = write_graph_model(tmp_path / "flat.onnx")  # logits = the mask: every legal move ties at 1.0
    game = Game(Rules("star", 2))
    game.play("113-104")
    moves = game.legal_moves()
    assert game.to_move == 1 and [(m.src, m.dst) for m in moves] == sorted((m.src, m.dst) for m in moves)
    actions = encoding("star", 2).move_actions(1, moves)
    chosen = load_opponent(model).select_move(game)
    assert chosen == moves[0]
    assert actions[0] == actions.max() != actions.min()


def test_the_canonical_frame_section_of_the_environment_docs_matches_the_code() -> None:
    """docs/environment.md "Actions and the canonical frame" and the planes 1-5, 7 and 8 of "Observation",
    as a program in another language would implement them from the text."""
    from halma_env import board
    from halma_env.encoding import encoding
    from halma_env.layout import SQUARE_CAMP_ROWS, layout

    star, square = board.star(), board.square()
    at = {cell: h for h, cell in enumerate(star.grid)}
    for h, (r, c) in enumerate(star.grid):  # one clockwise turn: (a, b) -> (b, b - a) about the centre cell
        a, b = r - 8, c - 8
        assert star.rotations[1][h] == at[(8 + b, 8 + b - a)] == at[(c, c - r + 8)]
    assert star.grid[0] == (0, 4) and star.rotations[1][0] == 22 and star.grid[22] == (4, 12)
    for h in range(256):
        r, c = divmod(h, 16)
        assert square.rotations[1][h] == 16 * c + 15 - r
    # the turns: (6 - p) mod 6 for home point p, (4 - c) mod 4 for home corner c, and the table
    table = {("star", 1): (0,), ("star", 2): (0, 3), ("star", 3): (0, 4, 2), ("diamond", 3): (0, 4, 2),
             ("star", 4): (0, 5, 3, 2), ("star", 5): (0, 5, 4, 3, 2), ("star", 6): (0, 5, 4, 3, 2, 1),
             ("diamond", 2): (0, 4), ("halma16", 2): (0, 2), ("halma16", 4): (0, 3, 2, 1)}
    for (variant, n), turns in table.items():
        lay = layout(variant, n)
        assert lay.rotation == turns
        enc = encoding(variant, n)
        g = lay.geometry
        for seat in range(n):
            if variant == "halma16":
                corner = next(k for k in range(4) if lay.homes[seat] == board.square_camp(k, SQUARE_CAMP_ROWS[n]))
                assert turns[seat] == (4 - corner) % 4
            else:
                point = next(k for k in range(6) if set(board.star_point(k)) <= set(lay.homes[seat]))
                assert turns[seat] == (6 - point) % 6
            turned = list(range(g.num_holes))
            for _ in range(turns[seat]):
                turned = [g.rotations[1][h] for h in turned]
            assert enc.to_canonical[seat].tolist() == turned
    # the examples
    assert encoding("star", 2).to_canonical[1].tolist() == [120 - h for h in range(121)]
    assert encoding("halma16", 2).to_canonical[1].tolist() == [255 - h for h in range(256)]
    assert encoding("halma16", 4).to_canonical[1][240] == 255
    star3 = encoding("star", 3)
    assert layout("star", 3).homes[1] == board.star_point(2) == (10, 11, 12, 13, 23, 24, 25, 35, 36, 46)
    assert star3.encode_move(1, 13, 14) == 111 * 121 + 102 == 13533 and star3.to_canonical[1][10] == 120
    # planes 7 and 8: the same canonical holes for every seat; planes 1-5: seat (s + i) mod n
    goals = {"star": list(range(10)), "diamond": [*range(10), *range(14, 19)],
             ("halma16", 2): [*range(5), *range(16, 21), *range(32, 36), 48, 49, 50, 64, 65],
             ("halma16", 4): [*range(4), *range(16, 20), 32, 33, 34, 48, 49]}
    homes = {"star": list(range(111, 121)), "diamond": [*range(102, 107), *range(111, 121)]}
    for (variant, n) in table:
        enc = encoding(variant, n)
        goal = goals.get(variant) or goals[(variant, n)]
        home = homes.get(variant) or sorted(255 - h for h in goal)
        for seat in range(n):
            planes = enc.static_planes[seat]
            assert _holes_of(enc, planes[:, 7]) == goal and _holes_of(enc, planes[:, 8]) == home
    game = Game(Rules("star", 3))
    for _ in range(4):
        game.play(game.legal_moves()[0])
    enc = encoding("star", 3)
    for seat in range(3):
        obs = enc.observation(game, seat)
        for i in range(6):
            cells = {tuple(x) for x in np.argwhere(obs[:, :, i])}
            expected = ({star.grid[enc.to_canonical[seat][h]] for h in game.pieces((seat + i) % 3)} if i < 3 else set())
            assert cells == expected


def _holes_of(enc: Any, plane: np.ndarray) -> list[int]:
    """The canonical holes whose cells are set in a flat (cells,) plane, ascending."""
    cells = set(np.flatnonzero(plane).tolist())
    return [h for h in range(enc.num_holes) if int(enc.grid_index[h]) in cells]
