"""agents/opponent.py on a shipped model (no torch, no export): the files it reads and writes, the
onnxruntime session, the policy's scores, sampling, the search's budget and choice, and names with
options.  tests/test_export.py checks the exported model against its checkpoint."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import pickle
import re
import shutil
import types
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents.opponent
from agents.opponent import (
    OnnxOpponent,
    OnnxPolicy,
    OpponentError,
    file_sha256,
    load_opponent,
    manifest_path,
    opponent_file,
    parse_opponent_spec,
    parse_search,
    read_manifest,
    write_manifest,
)
from halma_env import Game, Move, Rules
from halma_env.encoding import ENCODING_VERSION
from tests.engine_helpers import one_move_from_finishing, position

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "agents" / "ladder" / "star-2-quickstart_star2.onnx"  # a real export, small (53 kB)


@pytest.fixture(scope="module")
def policy() -> OnnxPolicy:
    return OnnxPolicy(SHIPPED)


def positions(count: int, seed: int, plies: int = 24) -> list[Game]:
    """Star-2 positions after ``plies`` random moves (each a different game)."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        g = Game(Rules("star", 2))
        for _ in range(plies):
            moves = g.legal_moves()
            g.play(moves[int(rng.integers(len(moves)))])
        games.append(g)
    return games


def greedy_reply(policy: OnnxPolicy, game: Game) -> Move:
    moves, logits, _ = policy.scores(game)
    return moves[int(np.argmax(logits))]


def _copy(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    shutil.copy(SHIPPED, d / SHIPPED.name)
    shutil.copy(manifest_path(SHIPPED), manifest_path(d / SHIPPED.name))
    return d / SHIPPED.name


def _rewrite(path: Path, **changes: Any) -> None:
    m = json.loads(manifest_path(path).read_text())
    m.update(changes)
    manifest_path(path).write_text(json.dumps(m))


# --- files ---------------------------------------------------------------------------------


def test_a_shipped_export_loads_with_the_names_it_was_written_with(policy: OnnxPolicy) -> None:
    """A model written by an earlier ``halma export`` (its input and output names, manifest format and
    version as they were then) loads and scores the legal moves."""
    assert [i.name for i in policy.session.get_inputs()] == ["observation", "action_mask"]
    assert [o.name for o in policy.session.get_outputs()] == ["logits", "value"]
    assert (policy.variant, policy.num_players, policy.manifest["format_version"]) == ("star", 2, 1)
    game = positions(1, seed=1)[0]
    moves, logits, value = policy.scores(game)
    assert moves == game.legal_moves() and logits.shape == (len(moves),) and math.isfinite(value)


def test_the_session_is_single_threaded_on_the_cpu(policy: OnnxPolicy) -> None:
    options = policy.session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    assert options.execution_mode.name == "ORT_SEQUENTIAL" and options.log_severity_level == 4  # fatal only
    assert policy.session.get_providers() == ["CPUExecutionProvider"]


def test_manifest_path_of_any_name() -> None:
    assert manifest_path("d/m.onnx") == Path("d/m.manifest.json")
    assert manifest_path("d/M.ONNX") == Path("d/M.manifest.json")
    assert manifest_path("d/m.bin") == Path("d/m.bin.manifest.json")


def test_file_sha256_is_the_files_sha256(tmp_path: Path) -> None:
    data = bytes(range(256)) * (5 * 4096 + 7)  # over 5 MiB: several read chunks
    (tmp_path / "big").write_bytes(data)
    (tmp_path / "empty").write_bytes(b"")
    assert file_sha256(tmp_path / "big") == hashlib.sha256(data).hexdigest()
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


def test_write_manifest_reproduces_a_shipped_manifest_and_sorts_keys(tmp_path: Path) -> None:
    """Rewriting a manifest unchanged gives the same bytes (the ladder rewrites shipped ones: no
    spurious diff); keys are sorted; the write goes through a temporary file that does not stay."""
    text = manifest_path(SHIPPED).read_text()
    data = json.loads(text)
    target = tmp_path / SHIPPED.name
    assert write_manifest(target, data) == manifest_path(target)
    assert manifest_path(target).read_text() == text
    backwards = dict(reversed(list(data.items())))
    assert list(backwards) != sorted(backwards)
    write_manifest(target, backwards)
    assert manifest_path(target).read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == [manifest_path(target).name]


@pytest.mark.parametrize(("changes", "message"), [
    ({"format_version": 2}, r"has format version 2; this code reads version 1$"),
    ({"encoding_version": ENCODING_VERSION - 1},
     rf"uses encoding version {ENCODING_VERSION - 1}; this code produces version {ENCODING_VERSION} "
     r"observations \(re-export it from a current checkpoint\)$"),
    ({"encoding_version": str(ENCODING_VERSION)}, r"encoding_version must be an integer, got '1'$"),
    ({"variant": "chess"}, r"unknown variant 'chess'; variants: star, diamond, halma16$"),
])
def test_manifests_for_other_versions_or_games_are_refused(tmp_path: Path, changes: dict, message: str) -> None:
    path = _copy(tmp_path, "m")
    _rewrite(path, **changes)
    with pytest.raises(OpponentError, match=message):
        read_manifest(path)


@pytest.mark.parametrize(("changes", "message"), [
    ({"rating": {}}, r"rating must be a finite number or null, got \{\}$"),
    ({"rating": True}, r"rating must be a finite number or null, got True$"),
    ({"opset": [1]}, r"opset must be an integer >= 1, got \[1\]$"),
    ({"opset": 0}, r"opset must be an integer >= 1, got 0$"),
    ({"level": 3}, r"level must be a string or null, got 3$"),
    ({"export_check": "fine"}, r"export_check must be an object, got 'fine'$"),
    ({"onnx_sha256": "ab" * 31}, r"onnx_sha256 must be 64 lowercase hex digits, got 'abab"),
    ({"onnx_sha256": 7}, r"onnx_sha256 must be a string, got 7$"),
])
def test_a_manifest_s_descriptive_fields_are_checked(tmp_path: Path, changes: dict, message: str) -> None:
    """They were read unchecked: a rating of {} or an opset of [1] loaded, and failed later where printed."""
    path = _copy(tmp_path, "m")
    _rewrite(path, **changes)
    with pytest.raises(OpponentError, match=rf"^manifest '.*/m/star-2-quickstart_star2\.manifest\.json': {message}"):
        read_manifest(path)
    data = json.loads(manifest_path(SHIPPED).read_text())
    _rewrite(path, **{**{k: data[k] for k in changes}, "rating": None, "level": None})  # unrated, no level: allowed
    assert read_manifest(path)["rating"] is None


@pytest.mark.parametrize("key", ["format_version", "num_players", "num_actions", "encoding_version",
                                 "observation_shape", "onnx_file"])
def test_a_long_manifest_value_is_shown_short(tmp_path: Path, key: str) -> None:
    """A manifest field holding a 100,000-item list was echoed whole in its error (a fuzzing round)."""
    path = _copy(tmp_path, "m")
    _rewrite(path, **{key: [7] * 100_000})
    with pytest.raises(OpponentError, match=r"\[7, 7, 7, .*\.\.\. \(list\)") as error:
        load_opponent(path)
    assert len(str(error.value)) < 400, str(error.value)


def test_write_manifest_refuses_nan(tmp_path: Path) -> None:
    data = json.loads(manifest_path(SHIPPED).read_text())
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_manifest(tmp_path / SHIPPED.name, {**data, "rating": math.nan})
    assert list(tmp_path.iterdir()) == []


def test_a_manifest_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = _copy(tmp_path, "m")
    manifest_path(path).write_text("[1, 2]")
    with pytest.raises(OpponentError, match="is not an opponent manifest"):
        read_manifest(path)


# --- the session ---------------------------------------------------------------------------


class _FakeSession:
    """What ``_session`` reads of an onnxruntime session: input and output names and shapes."""

    def __init__(self, inputs: tuple[str, str], outputs: tuple[str, str], width: Any) -> None:
        self.inputs = [types.SimpleNamespace(name=inputs[0], shape=["batch", 17, 17, 12]),
                       types.SimpleNamespace(name=inputs[1], shape=["batch", width])]
        self.outputs = [types.SimpleNamespace(name=n, shape=["batch"]) for n in outputs]

    def get_inputs(self) -> list:
        return self.inputs

    def get_outputs(self) -> list:
        return self.outputs


def test_the_graphs_names_and_width_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    good_in, good_out = ("observation", "action_mask"), ("logits", "value")

    def load(inputs: tuple[str, str] = good_in, outputs: tuple[str, str] = good_out, width: Any = 14641) -> Any:
        fake = _FakeSession(inputs, outputs, width)
        monkeypatch.setattr(onnxruntime, "InferenceSession", lambda *a, **k: fake)
        return OnnxPolicy(SHIPPED).session is fake

    assert load() and load(width="num_actions")  # a symbolic width is not checked
    for bad in ({"inputs": ("obs", "action_mask")}, {"outputs": ("logits", "v")}):
        with pytest.raises(OpponentError, match=r"has inputs \[.*\] and outputs \[.*\]; expected "
                                                r"\['observation', 'action_mask'\] -> \['logits', 'value'\]$"):
            load(**bad)
    with pytest.raises(OpponentError, match="scores 100 actions but its manifest's game has 14641$"):
        load(width=100)


def test_an_invalid_model_error_gives_onnxruntimes_first_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    for error, shown in ((RuntimeError("  bad graph\nnode 3: details\n"), "bad graph"),
                         (RuntimeError(""), "RuntimeError")):
        def fail(*args: Any, error: Exception = error, **kwargs: Any) -> Any:
            raise error

        monkeypatch.setattr(onnxruntime, "InferenceSession", fail)
        with pytest.raises(OpponentError, match=rf"is not a valid ONNX model \({shown}\)$"):
            OnnxPolicy(SHIPPED)


# --- the policy ----------------------------------------------------------------------------


def test_copies_share_the_policy_and_pickles_reload_it(policy: OnnxPolicy) -> None:
    assert copy.copy(policy) is policy and copy.deepcopy(policy) is policy
    assert copy.deepcopy({"p": policy})["p"] is policy
    again = pickle.loads(pickle.dumps(policy))
    assert again is not policy and again.path == SHIPPED and again.manifest == policy.manifest
    game = positions(1, seed=2)[0]
    assert np.array_equal(again.scores(game)[1], policy.scores(game)[1])


def test_scores_are_the_graphs_logits_of_each_legal_move(policy: OnnxPolicy) -> None:
    """Each legal move's logit is the graph's logit of its action in the mover's frame (both seats)."""
    enc = policy.encoding
    for game in positions(4, seed=3) + positions(3, seed=4, plies=25):
        seat = game.to_move
        dense, values = policy.evaluate(enc.observation(game, seat)[None], enc.action_mask(game)[None])
        moves, logits, value = policy.scores(game)
        assert moves == game.legal_moves()
        expected = [dense[0, enc.encode_move(seat, m.src, m.dst)] for m in moves]
        assert logits.dtype == np.float64 and np.array_equal(logits, np.array(expected, dtype=np.float64))
        assert value == float(values[0])
    assert {g.to_move for g in positions(4, seed=3) + positions(3, seed=4, plies=25)} == {0, 1}


def test_no_scores_once_the_game_is_over(policy: OnnxPolicy) -> None:
    game = Game(Rules("star", 2, move_limit=1))
    game.play(game.legal_moves()[0])
    assert game.is_over
    with pytest.raises(ValueError, match="^no legal move: the game is over$"):
        policy.scores(game)


# --- the player ----------------------------------------------------------------------------


def test_sampling_draws_from_the_softmax_with_its_own_generator(policy: OnnxPolicy) -> None:
    games = positions(8, seed=5)
    for temperature in (0.5, 2.0):
        player = OnnxOpponent(policy, seed=3, temperature=temperature)
        rng = np.random.default_rng(3)
        for game in games:
            moves, logits, _ = policy.scores(game)
            p = np.exp((logits - logits.max()) / temperature)
            assert player.select_move(game) == moves[int(rng.choice(len(moves), p=p / p.sum()))]


def test_a_tiny_temperature_plays_the_greedy_move(policy: OnnxPolicy) -> None:
    """The logits are shifted by their maximum before the division: no overflow to NaN."""
    player = OnnxOpponent(policy, seed=1, temperature=1e-4)
    for game in positions(6, seed=6):
        assert player.select_move(game) == greedy_reply(policy, game)


def test_bad_arguments_name_themselves(policy: OnnxPolicy) -> None:
    with pytest.raises(ValueError, match="^temperature must be >= 0"):
        OnnxOpponent(policy, temperature=-1)
    with pytest.raises(ValueError, match="^time_budget must be > 0"):
        OnnxOpponent(policy).select_move(Game(Rules("star", 2)), time_budget=-1)


def test_the_player_is_named_by_its_level_and_shows_its_settings(policy: OnnxPolicy) -> None:
    player = OnnxOpponent(policy, seed=4, temperature=0.5, search="top=2")
    assert player.name == "easy" and OnnxOpponent(policy, name="mine").name == "mine"
    assert repr(player) == (f"OnnxOpponent({str(SHIPPED)!r}, seed=4, temperature=0.5, "
                            "search={'top': 2, 'eval': 'heuristic'})")


def test_the_heuristic_tables_are_built_with_the_player(policy: OnnxPolicy) -> None:
    """A heuristic search builds the evaluation tables of every seat when the player is made, not in
    its first move's time budget; other players do not build them."""
    from agents.bots.evaluation import seat_tables

    for search, built in ((None, 0), ("top=2,eval=value", 0), ("top=2", 2)):
        seat_tables.cache_clear()
        OnnxOpponent(policy, search=search)
        assert seat_tables.cache_info().currsize == built, search
    assert seat_tables.cache_info().hits == 0
    for seat in (0, 1):
        seat_tables("star", 2, seat)
    assert seat_tables.cache_info().hits == 2


def test_search_settings() -> None:
    assert parse_search(1) == {"top": 1, "eval": "heuristic"}
    assert parse_search({"eval": "value"}) == {"top": 6, "eval": "value"}
    with pytest.raises(ValueError, match="^search top must be an integer, got 'x'$"):
        parse_search("top=x")
    with pytest.raises(ValueError, match="^search top must be >= 1, got -2$"):
        parse_search(-2)


def test_the_deadline_is_a_share_of_the_budget_the_move_or_the_player_gives(
        policy: OnnxPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agents.opponent, "time", types.SimpleNamespace(perf_counter=lambda: 100.0))
    game = positions(1, seed=7)[0]
    deadlines: list[float] = []

    def record(self: OnnxOpponent, game: Game, moves: list[Move], logits: np.ndarray, deadline: float,
               search: dict) -> Move:
        deadlines.append(deadline)
        return moves[0]

    monkeypatch.setattr(OnnxOpponent, "_search", record)
    unlimited, limited = OnnxOpponent(policy, search=2), OnnxOpponent(policy, search=2, time_budget=1.0)
    unlimited.select_move(game)
    unlimited.select_move(game, time_budget=0.5)
    limited.select_move(game)
    limited.select_move(game, time_budget=0.5)
    assert deadlines == [math.inf, 100.0 + 0.8 * 0.5, 100.0 + 0.8 * 1.0, 100.0 + 0.8 * 0.5]


def _scored_search(policy: OnnxPolicy, monkeypatch: pytest.MonkeyPatch, game: Game, top: int,
                   scores: list[float]) -> tuple[OnnxOpponent, list[Move]]:
    """A search player whose evaluations give ``scores`` in turn and record the candidate played."""
    player = OnnxOpponent(policy, search=top)
    seen: list[Move] = []
    it = iter(scores)

    def evaluate(g: Game, seat: int, search: dict) -> float:
        seen.append(g.moves[len(game.moves)])
        return next(it)

    monkeypatch.setattr(player, "_evaluate", evaluate)
    return player, seen


@pytest.mark.parametrize(("budget", "searched"), [(1.0, 1), (1.25, 1), (2.5, 1), (5.0, 2), (7.5, 3), (10.0, 4)])
def test_the_search_starts_a_candidate_only_if_it_fits_before_the_deadline(
        policy: OnnxPolicy, monkeypatch: pytest.MonkeyPatch, budget: float, searched: int) -> None:
    """With a clock that ticks one second per reading: the move starts at 0, candidate k (from 0) is
    started at 2k + 1 and takes 1 s, so candidate k > 0 is tried only if 2k + 2 <= 0.8 * budget; the
    first one is always tried (also when the budget is spent before it starts: 1 > 0.8 * 1.0), and the
    best score of those tried wins."""
    ticks = iter(range(1000))
    monkeypatch.setattr(agents.opponent, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    game = positions(1, seed=8)[0]
    moves, logits, _ = policy.scores(game)
    candidates = [moves[int(i)] for i in np.argsort(-logits, kind="stable")[:6]]
    player, seen = _scored_search(policy, monkeypatch, game, 6, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert player.select_move(game, time_budget=budget) == candidates[searched - 1]
    assert seen == candidates[:searched]


def test_the_search_is_used_with_two_moves(policy: OnnxPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    game = positions(1, seed=9)[0]
    moves, logits, value = policy.scores(game)
    order = np.argsort(-logits, kind="stable")[:2]
    two = ([moves[int(i)] for i in order], logits[order], value)
    real = policy.scores
    monkeypatch.setattr(policy, "scores", lambda g: two if g is game else real(g))
    player, seen = _scored_search(policy, monkeypatch, game, 6, [0.0, 1.0])
    assert player.select_move(game) == two[0][1]  # the less likely move scored better
    assert seen == two[0]


def test_search_top_one_plays_the_greedy_move(policy: OnnxPolicy) -> None:
    for eval_ in ("heuristic", "value"):
        player = OnnxOpponent(policy, search={"top": 1, "eval": eval_})
        for game in positions(3, seed=10):
            assert player.select_move(game) == greedy_reply(policy, game)


def test_the_search_picks_the_best_scored_candidate_after_the_greedy_reply(policy: OnnxPolicy) -> None:
    """Against a reference: each of the top moves played, the other seat's greedy reply, then the
    heuristic ``progress_score`` or the network's value from the mover's side; the first best wins."""
    from agents.bots.evaluation import progress_score

    chosen = set()
    for eval_ in ("heuristic", "value"):
        player = OnnxOpponent(policy, search=f"top=4,eval={eval_}")
        for game in positions(4, seed=11, plies=20):
            me = game.to_move
            moves, logits, _ = policy.scores(game)
            scores = []
            candidates = [moves[int(i)] for i in np.argsort(-logits, kind="stable")[:4]]
            for move in candidates:
                g = game.copy()
                g.play(move)
                g.play(greedy_reply(policy, g))
                scores.append(progress_score(g, me) if eval_ == "heuristic" else policy.value(g, me))
            best = candidates[int(np.argmax(scores))]
            assert player.select_move(game) == best, eval_
            chosen.add(candidates.index(best))
    assert chosen != {0}  # the search does not just play the greedy move


def test_a_candidate_that_ends_the_game_gets_no_reply(policy: OnnxPolicy) -> None:
    """Every candidate ends the game at the move limit (a draw, place 1 for both): no reply is asked
    for, all score the same, and the most likely move is played."""
    game = Game(Rules("star", 2, move_limit=1))
    player = OnnxOpponent(policy, search=3)
    assert player.select_move(game) == greedy_reply(policy, game)


# --- names ---------------------------------------------------------------------------------


def test_the_model_file_of_a_name() -> None:
    assert opponent_file("v1.onnx_models/m.onnx:temperature=1") == "v1.onnx_models/m.onnx"
    assert opponent_file("d/M.ONNX:search=2") == "d/M.ONNX"
    assert opponent_file("d/m.onnx") == "d/m.onnx" and opponent_file("d/m") == "d/m"
    assert opponent_file(".onnx:temperature=1") == ".onnx"  # a hidden file named .onnx


def test_bad_options_name_the_spec() -> None:
    spec = parse_opponent_spec("m.onnx:time_budget=2")
    assert spec.options == {"time_budget": 2.0}
    with pytest.raises(FrozenInstanceError):
        spec.path = "other.onnx"  # type: ignore[misc]
    with pytest.raises(OpponentError, match=r"^opponent option search='depth=3' in 'm.onnx:search=depth=3': "
                                            r"unknown search setting"):
        parse_opponent_spec("m.onnx:search=depth=3")
    with pytest.raises(OpponentError, match=r"^opponent option temperature='hot' in 'm.onnx:temperature=hot' "
                                            r"must be a number \(ASCII digits\)$"):
        parse_opponent_spec("m.onnx:temperature=hot")
    for text in ("\u0660.\u0665", "1_0", "\uff11"):  # float() reads all three (Arabic-Indic, 1_0, full-width)
        with pytest.raises(OpponentError, match=r"must be a number \(ASCII digits\)$"):
            parse_opponent_spec(f"m.onnx:temperature={text}")
    assert parse_opponent_spec("m.onnx:temperature=.5,time_budget=1e-1").options == {"temperature": 0.5,
                                                                                       "time_budget": 0.1}


def test_arguments_override_the_names_search(policy: OnnxPolicy) -> None:
    player = load_opponent(f"{SHIPPED}:search=top=3,eval=value", search="top=2")
    assert player.search == {"top": 2, "eval": "heuristic"}
    assert load_opponent(f"{SHIPPED}:search=top=3,eval=value").search == {"top": 3, "eval": "value"}


def test_ladder_names_are_resolved_by_the_ladder() -> None:
    """``ladder:GAME:LEVEL`` is that game's level (star-2 easy: the shipped quickstart model) and
    ``ladder:LEVEL`` a level resolved per game, whatever the case and surrounding spaces; the seed goes with them."""
    from agents.ladder import LevelPlayer

    easy = load_opponent(" Ladder:star-2:easy ", seed=1)
    assert isinstance(easy, OnnxOpponent) and easy.policy.path == SHIPPED and easy.seed == 1
    level = load_opponent("ladder:medium", seed=2)
    assert isinstance(level, LevelPlayer) and (level.level, level.seed) == ("medium", 2)


@pytest.mark.parametrize("name", ["hard", "easy", "ladder:hard", "ladder:star-2:expert",
                                  "agents/ladder/star-2-star2.onnx"])
def test_load_opponent_takes_the_names_the_docs_list_and_returns_a_seeded_player(name: str) -> None:
    """docs/export.md lists easy..expert among the names load_opponent takes; it refused them (only
    ladder:LEVEL worked). Whatever it returns can be reseeded (agents.player.SeededPlayer)."""
    from agents.opponent import load_opponent
    from agents.player import SeededPlayer

    player = load_opponent(name, seed=4)
    assert isinstance(player, SeededPlayer) and player.seed == 4
    game = Game(Rules("star", 2))
    assert player.select_move(game) in game.legal_moves()
    if name in ("hard", "easy"):
        assert repr(player) == f"LevelPlayer({name!r}, seed=4)"
    with pytest.raises(OpponentError, match=r"is a \.onnx file or a level \(easy, medium, hard, expert, "
                                            r"ladder:LEVEL\), got 'hardest'"):
        load_opponent("hardest")


# --- untrusted model files -----------------------------------------------------------------
# A model is a file someone else may have made: it must be what 'halma export' writes, and running it
# is bounded.  The hostile models are tiny graphs built with onnx.helper (tests/opponent_helpers.py).


def _graph(tmp_path: Path, name: str = "m", **kwargs: Any) -> Path:
    from tests.opponent_helpers import write_graph_model

    d = tmp_path / name
    d.mkdir()
    return write_graph_model(d / f"{name}.onnx", **kwargs)


def _summed(tensor: str, cast: bool = True) -> list:
    """Nodes making ``extra`` (a float scalar) from ``tensor``: the graph uses it, onnxruntime must run it."""
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Cast", [tensor], ["as_float"], to=TensorProto.FLOAT)] if cast else []
    return nodes + [helper.make_node("ReduceSum", ["as_float" if cast else tensor], ["extra"], keepdims=0)]


def test_a_hand_built_graph_of_exporter_operators_loads_and_plays(tmp_path: Path) -> None:
    """The helper's graph itself (Cast, Add, ReduceSum) is accepted: each refusal below is its hostile part."""
    policy = OnnxPolicy(_graph(tmp_path))
    game = Game(Rules("star", 2))
    moves, logits, value = policy.scores(game)
    assert np.all(logits == 1.0) and value == len(moves)


def _bytes_replaced(path: Path, old: bytes, new: bytes) -> None:
    """The model file with its first ``old`` bytes replaced, and its manifest's checksum to match."""
    data = path.read_bytes().replace(old, new, 1)
    path.write_bytes(data)
    manifest = path.with_name(path.name.removesuffix(".onnx") + ".manifest.json")
    fields = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**fields, "onnx_sha256": hashlib.sha256(data).hexdigest()}))


def test_finite_weights_that_overflow_are_refused_at_their_first_position(tmp_path: Path) -> None:
    """Finite weights can overflow float32 (one layer at 3e38): every logit came out inf or NaN and greedy play
    took the first legal move without a word (a fuzzing round found it)."""
    from onnx import helper, numpy_helper

    big = numpy_helper.from_array(np.array(3e38, dtype=np.float32), "big")
    nodes = [helper.make_node("Mul", ["mf", "big"], ["once"]), helper.make_node("Mul", ["once", "big"], ["extra"])]
    path = _graph(tmp_path, nodes=nodes, initializers=[big], extra="extra")
    policy = OnnxPolicy(path)
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} scored a position NaN "
                                            r"or inf: its weights are finite but overflow float32"):
        policy.scores(Game(Rules("star", 2)))


def test_graph_names_that_are_not_utf8_are_refused_naming_the_model(tmp_path: Path) -> None:
    """onnxruntime decodes an input's symbolic axis name only when asked: UnicodeDecodeError escaped."""
    path = _graph(tmp_path)
    _bytes_replaced(path, b"batch", b"\xffatch")
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} is not a valid ONNX model "
                                            r"\(a name in its graph is not UTF-8 text: 'utf-8' codec can't decode"):
        OnnxPolicy(path)


def test_a_failed_run_whose_error_names_a_node_not_in_utf8_is_an_opponent_error(tmp_path: Path) -> None:
    """onnxruntime's message of a failed run names the node; one not UTF-8 raised UnicodeDecodeError at the move."""
    from onnx import helper, numpy_helper

    shape = numpy_helper.from_array(np.array([7, 3], dtype=np.int64), "shape")  # 14,641 values are not 7 x 3
    nodes = [helper.make_node("Reshape", ["mf", "shape"], ["r"], name="/Concat"),
             helper.make_node("ReduceSum", ["r"], ["extra"], keepdims=0)]
    path = _graph(tmp_path, nodes=nodes, initializers=[shape], extra="extra")
    _bytes_replaced(path, b"/Concat", b"/\xffoncat")
    policy = OnnxPolicy(path)
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} failed in onnxruntime "
                                            r"\('utf-8' codec can't decode byte 0xff"):
        policy.scores(Game(Rules("star", 2)))


def test_onnxruntime_errors_are_cut_short_in_messages() -> None:
    """onnxruntime's first line ran over 700 characters into an OpponentError; the memory check reads it whole."""
    from agents.opponent import _first_line

    long = RuntimeError("[ONNXRuntimeError] : 1 : FAIL : " + "x" * 700 + "\nmore")
    assert _first_line(long) == f"[ONNXRuntimeError] : 1 : FAIL : {'x' * 218}... (732 characters)"
    assert _first_line(long, cut=False) == long.args[0].splitlines()[0]
    assert _first_line(RuntimeError()) == "RuntimeError"


def test_a_tensor_kept_in_another_file_is_refused(tmp_path: Path) -> None:
    """External data: onnxruntime refuses an absolute, '..' or symlinked location but reads a file beside
    the model, which the manifest's checksum does not cover.  Refused by name before onnxruntime sees it,
    as an initializer and as a node attribute."""
    from onnx import helper

    from tests.opponent_helpers import external_tensor

    path = _graph(tmp_path, "init", nodes=_summed("W"), initializers=[external_tensor("W", "upload.txt", 8)],
                  extra="extra")
    (path.parent / "upload.txt").write_bytes(b"secret!\n")
    name = re.escape(repr(str(path)))
    with pytest.raises(OpponentError, match=rf"^opponent model {name}: tensor 'W' \(initializer\) keeps its data "
                                            r"in another file \('upload.txt'\); an exported model"):
        OnnxPolicy(path)
    const = helper.make_node("Constant", [], ["W"], name="c0", value=external_tensor("C", "upload.txt", 8))
    path = _graph(tmp_path, "attr", nodes=[const, *_summed("W")], extra="extra")
    (path.parent / "upload.txt").write_bytes(b"secret!\n")
    with pytest.raises(OpponentError, match=r"tensor 'C' \(attribute 'value' of the Constant node 'c0'\) keeps its "
                                            r"data in another file \('upload.txt'\)"):
        OnnxPolicy(path)


@pytest.mark.parametrize(("values", "holds"), [([1.0, math.nan], "NaN"), ([math.inf, 0.0], "inf"),
                                               ([math.nan, -math.inf], "NaN and inf")], ids=["nan", "inf", "both"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_a_model_with_non_finite_weights_is_refused_naming_the_initializer(tmp_path: Path, values: list,
                                                                          holds: str, dtype: str) -> None:
    """An exported model with a NaN or inf initializer loaded and played (every logit NaN: the first legal
    move), where the checkpoint loader refuses the same weights."""
    from onnx import numpy_helper

    weights = numpy_helper.from_array(np.array(values, dtype=dtype), "W")
    path = _graph(tmp_path, "nan", nodes=_summed("W"), initializers=[weights], extra="extra")
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} has non-finite weights "
                                            rf"\(exported from a diverged run, or edited\): initializer 'W' holds "
                                            rf"{holds}$"):
        load_opponent(path)
    finite = numpy_helper.from_array(np.array([1.0, -2.5], dtype=dtype), "W")  # the same graph, finite: loads
    assert OnnxPolicy(_graph(tmp_path, "ok", nodes=_summed("W"), initializers=[finite], extra="extra"))


def test_the_cli_refuses_a_model_with_nan_weights_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    """halma eval nan.onnx random --games 1 exited 0."""
    from onnx import numpy_helper

    from agents.cli import main

    weights = [numpy_helper.from_array(np.array([math.nan], dtype=np.float32), n) for n in ("W", "V")]
    path = _graph(tmp_path, "nan", nodes=_summed("W"), initializers=weights, extra="extra")
    assert main(["eval", str(path), "random", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert err.endswith("has non-finite weights (exported from a diverged run, or edited): initializer 'W' holds NaN "
                        "(1 more initializers hold NaN or inf)"), err


def test_the_session_is_made_from_the_bytes_whose_checksum_was_checked(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """The file is read once: a model swapped on disk after its checksum was checked is not what runs (the
    session is made from the checked bytes, not opened again by path); onnxruntime folds no constants."""
    import onnxruntime

    path = _copy(tmp_path, "swap")
    original = path.read_bytes()
    real_check, real_session = agents.opponent._check_graph, onnxruntime.InferenceSession
    seen: list[tuple[Any, dict]] = []

    def check_then_swap(onnx_path: Path, model: bytes) -> None:
        real_check(onnx_path, model)
        path.write_bytes(b"swapped after the checks")

    def spy(model: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((model, kwargs))
        return real_session(model, *args, **kwargs)

    monkeypatch.setattr(agents.opponent, "_check_graph", check_then_swap)
    monkeypatch.setattr(onnxruntime, "InferenceSession", spy)
    policy = OnnxPolicy(path)
    [(model, kwargs)] = seen
    assert isinstance(model, bytes) and model == original
    assert kwargs["disabled_optimizers"] == ["ConstantFolding"]
    assert policy.session.get_session_options().get_session_config_entry("session.use_env_allocators") == "1"


def test_a_model_file_over_the_size_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert agents.opponent.MAX_MODEL_BYTES == 64 << 20  # docs/export.md
    path = _copy(tmp_path, "big")
    monkeypatch.setattr(agents.opponent, "MAX_MODEL_BYTES", 50_000)
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} is 53209 bytes, more than "
                                            r"the 50000 bytes it may have \(docs/export.md\)$"):
        OnnxPolicy(path)


@pytest.mark.parametrize("kind", ["loop", "domain", "sparse", "items"])
def test_a_graph_that_is_not_what_the_exporter_writes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 kind: str) -> None:
    """A Loop of 10^15 iterations (it would never answer), an operator of another domain, a sparse
    initializer (onnxruntime makes it dense when loading: any size), more graph items than the cap."""
    from onnx import TensorProto, helper, numpy_helper

    if kind == "loop":
        body = helper.make_graph(
            [helper.make_node("Add", ["c_in", "one"], ["c_out"]), helper.make_node("Not", ["go"], ["stop"]),
             helper.make_node("Not", ["stop"], ["go_on"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("go", TensorProto.BOOL, []),
             helper.make_tensor_value_info("c_in", TensorProto.FLOAT, [])],
            [helper.make_tensor_value_info("go_on", TensorProto.BOOL, []),
             helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [])],
            initializer=[numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")])
        nodes = [helper.make_node("Loop", ["trips", "yes", "zero"], ["extra"], body=body)]
        inits = [numpy_helper.from_array(np.array(10**15, dtype=np.int64), "trips"),
                 numpy_helper.from_array(np.array(True), "yes"),
                 numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")]
        path = _graph(tmp_path, nodes=nodes, initializers=inits, extra="extra")
        message = r"uses operator 'Loop', which 'halma export' never writes \(agents.opponent.EXPORT_OPS"
    elif kind == "domain":
        path = _graph(tmp_path, nodes=[helper.make_node("Evil", ["mf"], ["extra"], domain="com.evil")], extra="extra",
                      opsets={"com.evil": 1})
        message = r"uses operator 'Evil' of domain 'com.evil'; an exported model uses only the default ONNX domain$"
    elif kind == "sparse":
        values = numpy_helper.from_array(np.zeros(0, dtype=np.float32), "S")
        indices = numpy_helper.from_array(np.zeros(0, dtype=np.int64), "S_indices")
        path = _graph(tmp_path, nodes=_summed("S", cast=False), extra="extra",
                      sparse_initializers=[helper.make_sparse_tensor(values, indices, [1 << 20])])
        message = r"has sparse initializers \('S'\); an exported model has none$"
    else:
        path = SHIPPED
        monkeypatch.setattr(agents.opponent, "MAX_GRAPH_ITEMS", 600)
        message = (r"has 150 nodes and 628 graph items \(nodes, tensors, inputs, outputs, attributes\), more than "
                   r"the 600 an opponent may have$")
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} {message}"):
        OnnxPolicy(path)
    assert agents.opponent.MAX_GRAPH_ITEMS >= 50_000 or kind == "items"


def test_an_onnxruntime_error_in_a_run_is_an_opponent_error_naming_the_model(tmp_path: Path) -> None:
    """A graph that loads but fails when run (a reshape of 14641 mask values into rows of 3): onnxruntime's
    own exception type becomes an ``OpponentError`` (a ValueError) naming the model."""
    from onnx import helper, numpy_helper

    path = _graph(tmp_path, nodes=[helper.make_node("Reshape", ["mf", "rows"], ["r"]), *_summed("r", cast=False)],
                  initializers=[numpy_helper.from_array(np.array([3, -1], dtype=np.int64), "rows")], extra="extra")
    policy = OnnxPolicy(path)
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} failed in onnxruntime "
                                            r"\(.*Reshape"):
        policy.scores(Game(Rules("star", 2)))
    with pytest.raises(OpponentError, match="failed in onnxruntime"):
        load_opponent(str(path)).select_move(Game(Rules("star", 2)))


def test_a_failed_run_prints_only_the_clean_error_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """onnxruntime logged a failed run itself (a colour-coded ``[E:onnxruntime:...]`` line on stderr) before
    ``halma eval: error:`` said it: the sessions now log fatal errors only (capfd: the C++ log writes to fd 2)."""
    from onnx import helper, numpy_helper

    from agents.cli import main

    path = _graph(tmp_path, nodes=[helper.make_node("Reshape", ["mf", "rows"], ["r"]), *_summed("r", cast=False)],
                  initializers=[numpy_helper.from_array(np.array([3, -1], dtype=np.int64), "rows")], extra="extra")
    capfd.readouterr()
    assert main(["eval", str(path), "greedy", "--games", "2", "--quiet"]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"halma eval: error: player {str(path)!r} cannot play star with 2 seats: opponent model "
                          f"{str(path)!r} failed in onnxruntime (") and "\x1b" not in err


def test_a_run_is_stopped_after_the_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """400 chained 256 x 256 matrix products on the input (no loop: every operator is one the exporter
    writes) take far longer than the limit set here; the run is stopped between nodes, not waited for."""
    from onnx import helper, numpy_helper

    nodes = [helper.make_node("ReduceSum", ["mf"], ["s"], keepdims=0),
             helper.make_node("ConstantOfShape", ["square"], ["ones"],
                              value=numpy_helper.from_array(np.array([1e-3], dtype=np.float32))),
             helper.make_node("Add", ["ones", "s"], ["m0"])]  # depends on the input: nothing to fold
    for i in range(400):
        nodes.append(helper.make_node("MatMul", [f"m{i}", "m0"], [f"m{i + 1}"]))
    nodes.append(helper.make_node("ReduceSum", ["m400"], ["extra"], keepdims=0))
    path = _graph(tmp_path, nodes=nodes, initializers=[numpy_helper.from_array(np.array([256, 256], np.int64),
                                                                                "square")], extra="extra")
    policy = OnnxPolicy(path)
    monkeypatch.setattr(agents.opponent, "RUN_TIME_LIMIT", 0.05)
    with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(path)))} was stopped after running "
                                            r"for 0.05 s \(RUN_TIME_LIMIT\)"):
        policy.scores(Game(Rules("star", 2)))
    assert agents.opponent.RUN_TIME_LIMIT == 0.05 and not agents.opponent._WATCHDOG._runs
    monkeypatch.undo()
    assert agents.opponent.RUN_TIME_LIMIT == 10.0  # docs/export.md
    OnnxPolicy(SHIPPED).scores(Game(Rules("star", 2)))  # a normal run after it
    assert not agents.opponent._WATCHDOG._runs


def test_a_run_that_needs_too_much_memory_fails_by_name(tmp_path: Path) -> None:
    """The sessions share one onnxruntime arena of RUN_MEMORY_LIMIT bytes (1 GiB; registered once per
    process, so a fresh interpreter with a 16 MiB limit here): a graph asking for 32 MiB fails its run by
    name instead of allocating it (the reviewer's model asked for 8 GiB with a 3-node graph)."""
    import subprocess
    import sys

    from onnx import helper, numpy_helper

    assert agents.opponent.RUN_MEMORY_LIMIT == 1 << 30  # docs/export.md
    path = _graph(tmp_path, nodes=[helper.make_node("ConstantOfShape", ["size"], ["big"],
                                                    value=numpy_helper.from_array(np.array([1.0], np.float32))),
                                   *_summed("big", cast=False)],
                  initializers=[numpy_helper.from_array(np.array([1 << 23], dtype=np.int64), "size")], extra="extra")
    code = (
        "import agents.opponent as o\n"
        "from halma_env import Game, Rules\n"
        "o.RUN_MEMORY_LIMIT = 16 << 20\n"
        f"o.OnnxPolicy({str(SHIPPED)!r}).scores(Game(Rules('star', 2)))\n"  # a real model runs within it
        f"p = o.OnnxPolicy({str(path)!r})\n"
        "try:\n"
        "    p.scores(Game(Rules('star', 2)))\n"
        "    print('ran')\n"
        "except o.OpponentError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"opponent model {str(path)!r} needs more memory than the 16 MiB its runs may use "
                                 "(RUN_MEMORY_LIMIT)"), out.stdout


@pytest.mark.parametrize(("text", "error"), [("[" * 100_000 + "]" * 100_000, "RecursionError"),
                                             ('{"format": 1' + "0" * 5000 + "}", "ValueError")],
                         ids=["nested", "long-integer"])
def test_a_manifest_that_json_cannot_read_is_an_opponent_error(tmp_path: Path, text: str, error: str) -> None:
    """Nested too deeply for the parser, or an integer too long for Python to convert: named, not a crash."""
    path = _copy(tmp_path, "m")
    manifest_path(path).write_text(text)
    with pytest.raises(OpponentError, match=rf"^manifest {re.escape(repr(str(manifest_path(path))))} is corrupt or "
                                            rf"not JSON \({error}: "):
        read_manifest(path)


def test_a_manifest_giving_a_key_twice_is_refused(tmp_path: Path) -> None:
    """``"variant": "star", "variant": "diamond"`` loaded as diamond (json's "the last one wins")."""
    path = _copy(tmp_path, "m")
    text = manifest_path(path).read_text().rstrip()
    assert text.endswith('"variant": "star"\n}')  # the top level's, written last (sorted keys)
    manifest_path(path).write_text(text[:-1] + ', "variant": "diamond"}')
    with pytest.raises(OpponentError, match=rf"^manifest {re.escape(repr(str(manifest_path(path))))}: key 'variant' "
                                            "appears twice in one object; a manifest gives each field once$"):
        read_manifest(path)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_manifest_number_that_is_not_finite_is_refused(tmp_path: Path, number: str) -> None:
    """Python's decoder takes NaN and Infinity, which are not JSON: a manifest holding one loaded (a ladder file
    holding one was refused), before 2026-12-07."""
    path = _copy(tmp_path, "m")
    text = manifest_path(path).read_text().rstrip()
    manifest_path(path).write_text(text[:-1] + f', "a_number": {number}}}')
    with pytest.raises(OpponentError, match=rf"^manifest {re.escape(repr(str(manifest_path(path))))} holds the "
                                            rf"number {re.escape(number)}: its numbers must be finite$"):
        read_manifest(path)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo") or not Path("/dev/zero").exists(),
                    reason="needs FIFOs and /dev/zero")
def test_a_model_or_manifest_that_is_no_regular_file_says_what_it_is(tmp_path: Path) -> None:
    """A FIFO or a link to /dev/zero given as the model was reported as "does not exist", and as the
    manifest the model "has no manifest": each is named for what it is (and nothing waits on the FIFO)."""
    import os

    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.onnx"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "dir.onnx"
    folder.mkdir()
    for model, kind in ((fifo, "a FIFO"), (zero, "a device"), (folder, "a directory")):
        shutil.copy(manifest_path(SHIPPED), manifest_path(model))
        with pytest.raises(OpponentError, match=rf"^opponent model {re.escape(repr(str(model)))} is {kind}, not a "
                                                "regular file$"):
            load_opponent(model)
    for name, make, kind in (("fifo", os.mkfifo, "a FIFO"), ("zero", lambda p: p.symlink_to("/dev/zero"), "a device"),
                             ("dir", os.mkdir, "a directory")):
        model = _copy(tmp_path, name)
        manifest_path(model).unlink()
        make(manifest_path(model))
        with pytest.raises(OpponentError, match=rf"^manifest {re.escape(repr(str(manifest_path(model))))} is {kind}, "
                                                "not a regular file$"):
            load_opponent(model)
    missing = _copy(tmp_path, "gone")
    manifest_path(missing).unlink()
    manifest_path(missing).symlink_to(tmp_path / "nowhere.json")  # a dangling link: no manifest, as before
    with pytest.raises(OpponentError, match="has no manifest"):
        load_opponent(missing)


def test_a_manifest_over_its_size_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert agents.opponent.MAX_MANIFEST_BYTES == 1 << 20  # docs/export.md
    path = _copy(tmp_path, "m")
    size = manifest_path(path).stat().st_size
    monkeypatch.setattr(agents.opponent, "MAX_MANIFEST_BYTES", 1000)
    with pytest.raises(OpponentError, match=rf"^manifest {re.escape(repr(str(manifest_path(path))))} is {size} bytes, "
                                            r"more than the 1000 bytes it may have"):
        read_manifest(path)


def test_write_manifest_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    """The old fixed temporary name NAME.manifest.json.tmp was followed if someone planted a symlink
    there; the manifest's own name is replaced, not followed, too."""
    victim, other = tmp_path / "victim.txt", tmp_path / "other.txt"
    victim.write_text("keep me\n")
    other.write_text("keep me too\n")
    target = tmp_path / "m.onnx"
    (tmp_path / "m.manifest.json.tmp").symlink_to(victim)
    write_manifest(target, {"a": 1})
    assert victim.read_text() == "keep me\n"
    manifest_path(target).unlink()
    manifest_path(target).symlink_to(other)
    write_manifest(target, {"b": 2})
    assert other.read_text() == "keep me too\n"
    assert not manifest_path(target).is_symlink() and json.loads(manifest_path(target).read_text()) == {"b": 2}


@pytest.mark.parametrize("model", sorted((ROOT / "agents" / "ladder").glob("*.onnx")), ids=lambda p: p.name)
def test_every_shipped_model_passes_the_checks_and_plays(model: Path) -> None:
    import onnx

    ops = {node.op_type for node in onnx.load(str(model), load_external_data=False).graph.node}
    assert ops <= agents.opponent.EXPORT_OPS
    player = load_opponent(str(model), seed=0)
    assert isinstance(player, OnnxOpponent)
    game = Game(Rules(player.policy.variant, player.policy.num_players))
    assert player.select_move(game) in game.legal_moves()


def test_a_fresh_export_with_attention_and_reach_features_loads_and_plays(tmp_path: Path) -> None:
    """The network with the most operator types (halma16 with attention and reach features), exported now."""
    from agents.export import export_checkpoint
    from tests.opponent_helpers import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "both.pt", "halma16", 2, attention_layers=1, reach_features=True)
    player = load_opponent(str(export_checkpoint(ckpt, "t", tmp_path / "out", check_positions=2)), seed=0)
    game = Game(Rules("halma16", 2))
    assert player.select_move(game) in game.legal_moves()


@pytest.mark.slow
def test_a_fresh_export_of_every_checkpoint_kind_at_every_opset_passes_the_checks(tmp_path: Path) -> None:
    """Every shipped checkpoint, networks with attention and reach features and an untrained one (equal
    zero-initialised parameters: torch writes Identity nodes), exported with the default opset, load and
    play; at every opset 'halma export' takes their graphs pass the checks."""
    from agents.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint
    from agents.cli import main
    from agents.config import NetworkConfig
    from agents.export import REACH_MIN_OPSET, onnx_bytes, opset_range
    from agents.network import build_network
    from tests.opponent_helpers import make_checkpoint

    checkpoints = sorted((ROOT / "agents" / "checkpoints").glob("*.pt"))
    assert len(checkpoints) >= 8
    untrained = build_network("diamond", 3, NetworkConfig())
    checkpoints += [make_checkpoint(tmp_path / "att.pt", attention_layers=1),
                    make_checkpoint(tmp_path / "reach.pt", reach_features=True),
                    make_checkpoint(tmp_path / "both.pt", "halma16", 2, attention_layers=2, reach_features=True),
                    save_checkpoint(tmp_path / "untrained.pt", {"variant": "diamond", "num_players": 3,
                                                                "network": vars(NetworkConfig()).copy(),
                                                                "model": untrained.state_dict()})]
    low, high = opset_range()
    for ckpt in checkpoints:
        out = tmp_path / "out" / ckpt.stem
        assert main(["export", str(ckpt), "--level", "t", "--name", ckpt.stem, "--out", str(out)]) == 0
        player = load_opponent(str(out / f"{ckpt.stem}.onnx"), seed=0)
        assert isinstance(player, OnnxOpponent)
        game = Game(Rules(player.policy.variant, player.policy.num_players))
        assert player.select_move(game) in game.legal_moves()
        net = model_from_checkpoint(load_checkpoint(ckpt), ckpt)
        for opset in range(REACH_MIN_OPSET if net.reach is not None else low, high + 1):
            agents.opponent._check_graph(Path(f"{ckpt.stem}@{opset}.onnx"), onnx_bytes(net, opset))


def test_a_model_of_another_game_is_named_by_its_file_before_its_stamped_level() -> None:
    """halma ladder stamps the level it gave a model into its manifest, and the opponent took that as its name:
    a model of one's own read "opponent 'expert' (mine.onnx) was exported for ...", as if the ladder's expert
    level were meant.  The file comes first; a model named by its file alone says it once."""
    from agents.opponent import OnnxOpponent, OnnxPolicy

    shipped = Path(__file__).resolve().parents[1] / "agents" / "ladder" / "star-2-star2.onnx"  # stamped: expert
    with pytest.raises(OpponentError, match=r"^opponent model 'star-2-star2\.onnx' \(expert\) was exported for star "
                                            r"with 2 seats; it cannot play star with 3 seats$"):
        load_opponent(str(shipped)).select_move(Game(Rules("star", 3)))
    with pytest.raises(OpponentError, match=r"^opponent model 'star-2-star2\.onnx' was exported for star with 2"):
        OnnxOpponent(OnnxPolicy(shipped), name="star-2-star2").select_move(Game(Rules("star", 3)))


# --- the search: decided lines ranked by who decided them (found by mutation testing, session 51) ----------


@pytest.fixture(scope="module")
def shipped_policy() -> OnnxPolicy:
    return OnnxPolicy(SHIPPED)


def _greedy_reply(policy: OnnxPolicy, game: Game) -> Move:
    moves, logits, _ = policy.scores(game)
    return moves[int(np.argmax(logits))]


def _seat1_jumps_home(**options: Any) -> Game:
    """Star, 2 seats, seat 0 to move: seat 1 has 9 of its 10 goal holes (112-120) and its last piece on
    89, which jumps over seat 0's last straggler on 102 into 111 and finishes; seat 0's other pieces sit
    in its own goal (0-8). Moving 102 away (to 77, 90, 101 or 103) stops the jump; 102-111 fills
    seat 1's goal (anti-blocking: seat 1 finishes at once); any other move lets the jump happen."""
    pieces = {h: "1" for h in range(112, 121)}
    pieces[89] = "1"
    pieces.update({h: "0" for h in range(9)})
    pieces[102] = "0"
    return Game.from_position(position("star", 2, pieces, to_move=0, ply=0), **options)


BLOCKING = {"102-77", "102-90", "102-101", "102-103"}


def test_the_search_plays_out_the_other_seats_reply_and_prefers_a_draw_to_a_loss(shipped_policy: OnnxPolicy) -> None:
    # the game ends at ply 2, after seat 1's reply: a move that stops the jump draws (place 1 for both),
    # any other loses (place 2), so the search, which plays each candidate and the greedy reply
    # (module docstring) and ranks decided places best first, plays a blocking move
    game = _seat1_jumps_home(move_limit=2)
    for move in game.legal_moves():  # the reference: the shipped model's greedy reply takes the jump
        g = game.copy()
        g.play(move)
        if not g.is_over:
            g.play(_greedy_reply(shipped_policy, g))
        assert g.places == ([1, 1] if str(move) in BLOCKING else [2, 1]), move
    for eval_ in ("heuristic", "value"):
        opponent = OnnxOpponent(shipped_policy, search={"top": 100, "eval": eval_})
        assert str(opponent.select_move(game)) in BLOCKING, eval_


@pytest.mark.parametrize("search", ["top=1", "top=1,eval=value", "top=6"])
def test_the_search_always_takes_a_move_that_finishes_the_seat(shipped_policy: OnnxPolicy, search: str) -> None:
    # module docstring: "any move that finishes the seat at once, which is always taken" (before any
    # candidate is played out), whichever evaluation and width the search has
    game, finishing = one_move_from_finishing()
    assert len(finishing) == 1
    assert OnnxOpponent(shipped_policy, search=search).select_move(game) == finishing[0]


@pytest.mark.parametrize("model", ["agents/ladder/star-2-quickstart_star2.onnx", "agents/ladder/star-2-star2.onnx"])
@pytest.mark.parametrize("options", ["", ":search=top=6", ":search=top=6,eval=value", ":search=top=20"])
def test_the_search_does_not_choose_a_move_that_lets_the_other_seat_win(model: str, options: str) -> None:
    game = _seat1_jumps_home()
    move = load_opponent(model + options, seed=0).select_move(game)
    """The search ranked a lost game (place 2 of 2: 1e9 - 2e6) above every undecided line, so with search on both
    shipped models let seat 1 jump home (7-9) or filled its goal for it (102-111); the plain policy blocks."""
    assert str(move) in BLOCKING, str(move)


def test_a_model_is_prepared_for_a_game_as_a_level_is() -> None:
    """A server warms its players up with player_for(rules) before a game's clock starts; a model from
    load_opponent had no player_for (an AttributeError), so a model of another game was refused only at its
    first move.  Now it checks the game and returns itself."""
    opponent = load_opponent(SHIPPED, seed=0)
    assert opponent.player_for(Rules("star", 2)) is opponent
    with pytest.raises(OpponentError, match="was exported for star with 2 seats; it cannot play star with 3 seats"):
        opponent.player_for(Rules("star", 3))
    level = load_opponent("easy", seed=0)
    for player in (opponent, level):
        player.player_for(Rules("star", 2))
        assert player.select_move(Game(Rules("star", 2)), 0.2) in Game(Rules("star", 2)).legal_moves()


def test_player_for_takes_rules_only() -> None:
    """``load_opponent("easy").player_for("star")`` raised ``AttributeError: 'str' object has no attribute
    'variant'`` and a model's ``player_for(None)`` returned the model (``Game(None)`` is star with 2 seats): both
    players' ``player_for`` (and a level's ``describe``) are a TypeError naming what they were given."""
    players = (load_opponent(SHIPPED, seed=0), load_opponent("easy", seed=0))
    for player in players:
        for rules, shown in (("star", "str"), (None, "NoneType"), (Rules("star", 2).to_dict(), "dict")):
            message = rf"player_for takes a halma_env\.Rules, e\.g\. Rules\('star', 2\), got {shown}"
            with pytest.raises(TypeError, match=message):
                player.player_for(rules)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="describe takes a halma_env.Rules, .*got str"):
        players[1].describe("star")  # type: ignore[arg-type]
    assert players[0].player_for(Rules("star", 2)) is players[0]
