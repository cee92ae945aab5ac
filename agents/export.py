"""``halma export CHECKPOINT --level NAME``: a training checkpoint as an ONNX CPU opponent, and
``halma bench opponent`` (time per move of the exported policies on one CPU thread).

The ONNX graph wraps ``HalmaNet.dense_logits``: inputs ``observation`` (B, rows, cols, 12) int8
(``halma_env.encoding`` planes, as the environments produce them) and ``action_mask`` (B, H*H)
int8; outputs ``logits`` (B, H*H) float32 with illegal actions at ``MASKED_LOGIT`` (-1e8) and
``value`` (B,).  The batch axis is dynamic.  Opset 17 (onnxruntime >= 1.14 runs it).

Next to ``DIR/VARIANT-SEATS-LEVEL.onnx`` goes ``...manifest.json`` (agents/opponent.py reads it):
format, variant, seats, encoding version, level, rating (``--rating`` or ``halma ladder``, whose level and rating
an export of the same checkpoint over the model keeps and one of another drops: ``_ladder_stamp``), the
source checkpoint (path, sha256, network and training config, step), export time, the ONNX file's
sha256 and how closely the exported model matched the checkpoint on sample positions (an export
whose moves differ from the checkpoint's is refused and its files removed).  For programs in other
languages it also records the graph's interface as data (``interface``), the seats the model plays
(``plays_seats``: all of them), the rules and reward it was trained under (``trained_rules``,
``training_reward``) and ``test_vectors``: positions with the sha256 of the observation and mask bytes
the Python encoder gives and the greedy move the Python opponent plays (``check_test_vectors``
recomputes them).  These fields are additive: format version 1 readers ignore them, and a manifest
without them still loads.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.files import (
    folder_error,
    folders_to_make,
    missing_extra,
    portable_file_name,
    remove_empty_folders,
    shown_path,
)
from agents.opponent import (
    INPUT_NAMES,
    MANIFEST_FORMAT,
    MANIFEST_VERSION,
    OUTPUT_NAMES,
    OnnxOpponent,
    OnnxPolicy,
    file_sha256,
    manifest_path,
    read_manifest,
    write_manifest,
)
from agents.player import check_number
from agents.staging import new_staging_folder, remove_dead_staging
from halma_env import Game, Rules
from halma_env.encoding import ENCODING_VERSION, encoding
from halma_env.game import random_playout
from halma_env.notation import quoted

OPSET = 17  # LayerNormalization is an opset-17 operator; onnxruntime 1.14+ runs it
REACH_MIN_OPSET = 12  # the reach features' integer Max (int32 in the export): ONNX has none before it
CHECK_POSITIONS = 32
LOGIT_ATOL = 1e-3
TEST_VECTOR_SEED = 0  # the seeded random game the test vectors' later positions come from
TEST_VECTOR_VALUE_ATOL = 1e-4  # how closely a recomputed value must match the recorded one
MAX_NAME_LENGTH = 100  # characters of a level or file-name stem (and twice that in UTF-8 bytes): with its
# VARIANT-SEATS- prefix and .manifest.json suffix a file name stays well under the usual 255-byte limit


def _torch():
    import torch

    return torch


def opset_range() -> tuple[int, int]:
    """The opsets torch's TorchScript ONNX exporter (``dynamo=False``, used here) supports with constant
    folding (on here); outside it torch only warns (above) or fails deep in the export (below)."""
    from torch.onnx import _constants  # private, but where torch states the range it checks

    return _constants.ONNX_CONSTANT_FOLDING_MIN_OPSET, _constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET


def check_level_name(value: Any, what: str = "level") -> str:
    """A level or file-name stem: one plain word, as it goes into ``VARIANT-SEATS-LEVEL.onnx``, opponent
    names (``model.onnx:option=...``) and the ladder, so no path parts or spec separators, and at most
    ``MAX_NAME_LENGTH`` characters (a longer one would fail as a file name only after the export)."""
    if not portable_file_name(value) or any(c.isspace() or c in ",=" for c in value):
        raise ValueError(f"{what} must be a plain name (not empty, '.' or '..'; no spaces, '/', '\\', ':', ',', "
                         f"'=' or any of <>\"|?*; not a name Windows reserves such as CON), got {value!r}")
    if len(value) > MAX_NAME_LENGTH or len(value.encode("utf-8", "surrogatepass")) > 2 * MAX_NAME_LENGTH:
        raise ValueError(f"{what} must be a plain name of at most {MAX_NAME_LENGTH} characters "
                         f"({2 * MAX_NAME_LENGTH} bytes in UTF-8: it names a file), got {quoted(value)}")
    return value


def model_file_stem(variant: str, seats: int, level: str) -> str:
    """The file name stem an export gets without ``--name``: ``VARIANT-SEATS-LEVEL`` (``halma ladder`` predicts
    its candidates' files with it)."""
    return f"{variant}-{seats}-{level}"


def default_level(data: dict, checkpoint: str | Path) -> str:
    """The level an export gets without ``--level``: the run name in the checkpoint's config (so
    ``runs/quickstart/checkpoints/last.pt`` exports as ``star-2-quickstart.onnx``)."""
    config = data.get("config")
    run_name = config.get("name") if isinstance(config, dict) else None
    if run_name is None:
        raise ValueError(f"{str(checkpoint)!r} records no run name to use as the level: give --level NAME")
    try:
        return check_level_name(run_name)
    except ValueError as e:
        raise ValueError(f"{str(checkpoint)!r}: its run name cannot be the level ({e}): give --level NAME") from None


def export_wrapper(net: Any) -> Any:
    """A module ``(observation int8, action_mask int8) -> (masked logits, value)`` around a HalmaNet."""
    import torch  # lazily, as _torch() does: a plain import so that the base class below is a known type

    class OpponentGraph(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.net = inner

        def forward(self, observation: Any, action_mask: Any) -> tuple[Any, Any]:
            return self.net.dense_logits(observation, action_mask)

    return OpponentGraph(net).eval()


def sample_positions(variant: str, seats: int, count: int, seed: int = 0, max_plies: int = 200) -> list[Game]:
    """``count`` positions from seeded random games (a random ply of each), none of them over."""
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(Rules(variant, seats))
        random_playout(game, rng, max_plies=rng.randrange(max_plies))
        if not game.is_over:
            out.append(game)
    return out


def onnx_bytes(net: Any, opset: int = OPSET) -> bytes:
    """The network's opponent graph serialised as ONNX (dynamic batch axis)."""
    from agents.checkpoint import warnings_silenced

    torch = _torch()
    enc = encoding(net.variant, net.num_players)
    obs = torch.zeros((1, *enc.observation_shape), dtype=torch.int8)
    mask = torch.ones((1, enc.num_actions), dtype=torch.int8)
    buf = io.BytesIO()
    batch = {0: "batch"}
    with warnings_silenced():  # the TorchScript exporter is deprecated but needs no onnxscript
        try:
            torch.onnx.export(
                export_wrapper(net), (obs, mask), buf, input_names=list(INPUT_NAMES),
                output_names=list(OUTPUT_NAMES), dynamic_axes={name: batch for name in (*INPUT_NAMES, *OUTPUT_NAMES)},
                opset_version=opset, do_constant_folding=True, dynamo=False,
            )
        except torch.onnx.OnnxExporterError as e:  # e.g. an operator the network uses is newer than the opset
            raise ValueError(f"cannot export with opset {opset}: {str(e).splitlines()[0]}") from None
    return buf.getvalue()


def compare(net: Any, policy: OnnxPolicy, games: list[Game]) -> dict[str, Any]:
    """How closely the ONNX model reproduces the torch network: largest logit and value
    differences over the legal moves of ``games`` and how many greedy moves differ."""
    torch = _torch()
    enc = policy.encoding
    obs = np.stack([enc.observation(g, g.to_move) for g in games])
    masks = np.stack([enc.action_mask(g) for g in games])
    with torch.no_grad():
        t_logits, t_value = net.dense_logits(torch.from_numpy(obs), torch.from_numpy(masks))
    o_logits, o_value = policy.evaluate(obs, masks)
    legal = masks.astype(bool)
    t_legal = t_logits.numpy()
    diff = float(np.abs(np.where(legal, t_legal - o_logits, 0.0)).max())
    vdiff = float(np.abs(t_value.numpy() - o_value).max())
    greedy_t = np.where(legal, t_legal, -np.inf).argmax(axis=1)
    greedy_o = np.where(legal, o_logits, -np.inf).argmax(axis=1)
    return {"positions": len(games), "max_logit_diff": diff, "max_value_diff": vdiff,
            "greedy_mismatches": int((greedy_t != greedy_o).sum())}


# --- what the manifest tells programs in other languages (docs/export.md) ----------------------


def interface(variant: str, seats: int) -> dict[str, Any]:
    """The graph's inputs and outputs as data (names, dtypes, shapes with the sizes as numbers; the batch
    axis is ``"batch"``) and the sizes and rules a program needs to build the inputs (docs/export.md)."""
    from agents.network import MASKED_LOGIT

    enc = encoding(variant, seats)
    rows, cols, planes = enc.observation_shape
    lay = enc.layout
    return {
        "inputs": [{"name": "observation", "dtype": "int8", "shape": ["batch", rows, cols, planes]},
                   {"name": "action_mask", "dtype": "int8", "shape": ["batch", enc.num_actions]}],
        "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", enc.num_actions]},
                    {"name": "value", "dtype": "float32", "shape": ["batch"]}],
        "holes": enc.num_holes, "rows": rows, "cols": cols, "planes": planes,
        "observation_index": "((row * cols) + col) * planes + plane (row-major, C order; entries 0 or 1)",
        "action": "canonical(src) * holes + canonical(dst)",
        "masked_logit": MASKED_LOGIT,
        # clockwise turns of the board that bring each seat's home to the bottom (its canonical frame)
        "canonical_turns": {"degrees": 360 // lay.geometry.num_rotations, "per_seat": list(lay.rotation)},
        "reference": "docs/environment.md, 'Actions and the canonical frame' and 'Observation'",
    }


def trained_rules(config: Any, variant: str, seats: int, problems: list[str] | None = None) -> dict[str, Any] | None:
    """Every rule option of the game the checkpoint was trained on (its config's ``game`` read as training
    reads it, ``GameConfig.rules``: the variant's defaults filled in), or None when it records no training
    config or one this code no longer reads (the manifest's ``source`` still has it).  Why a config's ``game``
    gives no rules (an option this code refuses) is added to ``problems``."""
    import dataclasses

    from agents.config import GameConfig

    game = config.get("game") if isinstance(config, dict) else None
    if not isinstance(game, dict) or (game.get("variant"), game.get("num_players")) != (variant, seats):
        return None
    names = {f.name for f in dataclasses.fields(GameConfig)}
    try:
        rules = GameConfig(**{k: v for k, v in game.items() if k in names}).rules().to_dict()
    except (TypeError, ValueError) as e:
        if problems is not None:
            problems.append(str(e))
        return None
    del rules["first_seat"]  # training games start with every seat in turn
    return rules


def training_reward(config: Any) -> dict[str, Any] | None:
    """What the value head was trained to predict: the reward scheme, the progress shaping and the
    discount per own move (``game.reward``, ``game.progress_shaping``, ``ppo.gamma``), or None."""
    game = config.get("game") if isinstance(config, dict) else None
    ppo = config.get("ppo") if isinstance(config, dict) else None
    if not isinstance(game, dict):
        return None
    return {"reward": game.get("reward"), "progress_shaping": game.get("progress_shaping"),
            "gamma": ppo.get("gamma") if isinstance(ppo, dict) else None}


def vector_positions(variant: str, seats: int, seed: int = TEST_VECTOR_SEED) -> list[str]:
    """The test vectors' positions (SPEC §3 text), each a case an encoder or move generator written from the
    docs can get wrong:

    - the start (seat 0), then the position after one seeded random move (seat 1: a turned frame);
    - from the same random game, the first position from ply 12 x seats on with each seat to move in turn
      (every seat's frame, pieces mixed, jumps likely);
    - from a seeded game of noisy greedy bots, which finishes: its first position from ply 30 x seats on
      (pieces deep in the camps, diamond's kings off their start holes); with 3 or more seats the first
      position in which a seat has finished (the finished planes); on the 16 x 16 board the first position
      in which a piece of the seat to move could step out of its goal but for the goal lock."""
    rng = random.Random(seed)
    game = Game(Rules(variant, seats))
    out = [game.position()]
    game.play(rng.choice(game.legal_moves()))
    out.append(game.position())
    for seat in range(seats):
        while not game.is_over and (game.ply < 12 * seats or game.to_move != seat):
            game.play(rng.choice(game.legal_moves()))
        if game.is_over:
            break
        out.append(game.position())
    out.extend(_late_vector_positions(variant, seats, rng))
    return out


def _late_vector_positions(variant: str, seats: int, rng: random.Random) -> list[str]:
    """``vector_positions``' positions from a game that gets somewhere: noisy greedy bots, seeded by ``rng``."""
    from agents.bots.greedy import GreedyBot

    game = Game(Rules(variant, seats))
    bots = [GreedyBot(seed=rng.randrange(1 << 30), noise=0.2) for _ in range(seats)]
    wanted = {"late": True, "finished": seats >= 3, "goal lock": variant == "halma16"}
    found: dict[str, str] = {}
    while not game.is_over and len(found) < sum(wanted.values()):
        seat = game.to_move
        cases = {"late": game.ply >= 30 * seats,
                 "finished": "finished" in game.status,
                 "goal lock": _locked_in(game, seat)}
        for case, wanted_here in wanted.items():
            if wanted_here and case not in found and cases[case]:
                found[case] = game.position()
        game.play(bots[seat].select_move(game))
    return [found[case] for case in wanted if case in found]


def _locked_in(game: Game, seat: int) -> bool:
    """Whether a piece of ``seat`` in its goal could step out of it but for the goal lock (halma16)."""
    goal = game.layout.goals[seat]
    return any(hole in goal and any(game.piece_at(n) is None and n not in goal for n in game.geometry.neighbours[hole])
               for hole in game.pieces(seat))


def _vector(policy: OnnxPolicy, position: str) -> dict[str, Any]:
    """One test vector: the inputs' checksums and the greedy move of the Python reference."""
    game = Game.from_position(position)
    enc = policy.encoding
    seat = game.to_move
    observation = np.ascontiguousarray(enc.observation(game, seat), dtype=np.int8)
    mask = np.ascontiguousarray(enc.action_mask(game), dtype=np.int8)
    move = OnnxOpponent(policy, seed=0).select_move(game)  # greedy, as a site plays it
    _, _, value = policy.scores(game)
    return {
        "position": position,
        "seat": seat,
        "observation_sha256": hashlib.sha256(observation.tobytes()).hexdigest(),
        "observation_ones": int(observation.sum()),
        "action_mask_sha256": hashlib.sha256(mask.tobytes()).hexdigest(),
        "legal_moves": int(mask.sum()),
        "greedy_move": f"{move.src}-{move.dst}",
        "greedy_action": enc.encode_move(seat, move.src, move.dst),
        "value": value,
    }


def make_test_vectors(policy: OnnxPolicy) -> list[dict[str, Any]]:
    """The manifest's ``test_vectors`` for an exported model (docs/export.md)."""
    return [_vector(policy, text) for text in vector_positions(policy.variant, policy.num_players)]


def check_test_vectors(policy: OnnxPolicy) -> list[str]:
    """Recompute the manifest's ``test_vectors`` with this code and the model: the disagreements, one line
    each (empty when every vector holds).  A ``ValueError`` when the manifest has none (an export made
    before they were recorded) or they are not a list of objects with a position."""
    vectors = policy.manifest.get("test_vectors")
    name = policy.path.name
    if vectors is None:
        raise ValueError(f"the manifest of {name!r} has no test_vectors (exported before they were recorded: "
                         "export it again to get them)")
    if not isinstance(vectors, list) or not all(isinstance(v, dict) and isinstance(v.get("position"), str)
                                                for v in vectors):
        raise ValueError(f"the manifest of {name!r}: test_vectors must be a list of objects with a position")
    problems = []
    for i, recorded in enumerate(vectors):
        try:
            fresh = _vector(policy, recorded["position"])
        except ValueError as e:  # a position of another game, or not a position at all
            raise ValueError(f"the manifest of {name!r}: test_vectors[{i}]'s position cannot be read for this model "
                             f"({e})") from None
        for key, value in fresh.items():
            if key not in recorded:
                problems.append(f"test_vectors[{i}] lacks {key}")
            elif key == "value":
                number = recorded[key]
                if not (isinstance(number, (int, float)) and abs(number - value) <= TEST_VECTOR_VALUE_ATOL):
                    problems.append(f"test_vectors[{i}] value: recorded {recorded[key]!r}, computed {value!r}")
            elif recorded[key] != value:
                problems.append(f"test_vectors[{i}] {key}: recorded {recorded[key]!r}, computed {value!r}")
    return problems


def _check_json_values(config: Any, checkpoint: str | Path) -> None:
    """The checkpoint's config as the manifest copies it: JSON values only (mappings with string keys,
    lists, strings, booleans, null, finite numbers, integers a 64-bit reader takes).  Otherwise a tensor would fail
    the export with a TypeError and a NaN would write a manifest no JSON reader takes.  Walked without
    recursion; the loader bounds the walk (``agents.checkpoint``: the config's size and depth)."""
    todo: list[tuple[Any, str]] = [(config, "config")]
    while todo:
        value, where = todo.pop()
        if isinstance(value, dict):
            bad_keys = [k for k in value if not isinstance(k, str)]
            if bad_keys:
                raise ValueError(f"checkpoint {str(checkpoint)!r}: its {where} has the key {bad_keys[0]!r} "
                                 f"({type(bad_keys[0]).__name__}); the manifest copies the config, and JSON "
                                 "keys are strings")
            todo.extend(reversed([(v, f"{where}.{k}") for k, v in value.items()]))
        elif isinstance(value, (list, tuple)):
            todo.extend(reversed([(v, f"{where}[{i}]") for i, v in enumerate(value)]))
        elif not (value is None or isinstance(value, (str, bool))
                  or (isinstance(value, int) and -(2**63) <= value < 2**63)
                  or (isinstance(value, float) and math.isfinite(value))):
            raise ValueError(f"checkpoint {str(checkpoint)!r}: its {where} = {_brief(value)} "
                             f"({type(value).__name__}) cannot go into the manifest, which copies the config "
                             "(JSON has strings, booleans, null, lists, mappings and finite numbers)")


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def export_checkpoint(checkpoint: str | Path, level: str | None = None, out_dir: str | Path = "exports", *,
                      rating: float | None = None, name: str | None = None, opset: int = OPSET,
                      check_positions: int = CHECK_POSITIONS, force: bool = False,
                      notes: list[str] | None = None) -> Path:
    """Export ``checkpoint`` to ``out_dir/<name>.onnx`` plus its manifest; returns the ONNX path.

    ``level`` defaults to the run name the checkpoint records (its config's ``name``, e.g. ``quickstart``);
    ``name`` defaults to ``VARIANT-SEATS-LEVEL``.  The export is checked against the checkpoint on
    ``check_positions`` random positions; a mismatch raises ``ValueError`` and leaves no files.  An earlier
    export of the same checkpoint at that name is replaced; another model there is a ``ValueError`` unless
    ``force`` (``replace_problem``).  What ``halma ladder`` wrote into the replaced model's manifest
    (``LADDER_STAMP``) is kept when it is an export of this same checkpoint and no other ``level`` or a
    ``rating`` is given, and dropped otherwise (``_ladder_stamp``); a line saying which is appended to
    ``notes`` (what ``halma export`` prints) once the export is in place, and so is a line saying why
    ``trained_rules`` is null when the checkpoint's training config names its game but gives no rules."""
    from agents.checkpoint import load_checkpoint, model_from_checkpoint

    # every argument is checked before anything is written (no empty --out left behind)
    if level is not None:
        check_level_name(level)
    if name is not None:
        check_level_name(name, "name")  # a stem inside out_dir: no '../evil', no silent default for ''
        if name.lower().endswith(".onnx"):
            raise ValueError(f"name is the file name's stem, without .onnx: got {name!r} (it would write "
                             f"{name}.onnx); give {name[:-5]!r}")
    if rating is not None:
        check_number("rating", rating, None)  # NaN / inf would make the manifest invalid JSON
    low, high = opset_range()
    if isinstance(opset, bool) or not isinstance(opset, int) or not low <= opset <= high:
        raise ValueError(f"opset must be an integer from {low} to {high} (what torch's ONNX exporter supports), "
                         f"got {opset!r}")
    data = load_checkpoint(checkpoint)  # CheckpointError (a ValueError) for anything unreadable
    # the manifest copies the config (the loader checked its size and depth, global_step, update and network)
    _check_json_values(data.get("config"), checkpoint)
    level_given = level
    if level is None:
        level = default_level(data, checkpoint)
    variant, seats = data["variant"], int(data["num_players"])
    out = Path(out_dir)
    path = out / f"{name or model_file_stem(variant, seats, level)}.onnx"
    from agents.files import special_file_kind

    for target in (path, manifest_path(path)):
        if target.is_dir():
            raise ValueError(f"cannot write {str(target)!r}: a directory of that name is in the way")
        if kind := special_file_kind(target):  # the final rename would replace it (/dev/null, as root)
            raise ValueError(f"cannot write {str(target)!r}: it is {kind}, not a regular file")
    checkpoint_sha256 = file_sha256(checkpoint)
    # checked before the export, which takes seconds
    if not force and (problem := replace_problem(path, checkpoint, checkpoint_sha256)):
        raise ValueError(f"{str(checkpoint)!r} would be exported as {str(path)!r}, but {problem}: give --force to "
                         "replace it, or export under another --name or --out")
    stamp, note = _ladder_stamp(path, checkpoint_sha256, level_given, rating)
    net = model_from_checkpoint(data, checkpoint)
    if net.reach is not None and opset < REACH_MIN_OPSET:
        raise ValueError(f"a network with reach features (network.reach_features) needs opset {REACH_MIN_OPSET} "
                         f"or later (ONNX has no integer Max before it), got {opset}")
    blob = onnx_bytes(net, opset)
    # the model and its manifest are written and checked in a scratch directory inside out_dir, then
    # moved into place: a failed or interrupted export leaves no partial files, and an earlier export
    # of the same name stays as it was until the new one has passed its check
    made = folders_to_make(out)  # removed again if the export fails
    try:
        out.mkdir(parents=True, exist_ok=True)
        remove_dead_staging(str(out), ".export-")  # the scratch folders of exports killed outright (SIGKILL)
        scratch = Path(new_staging_folder(str(out), f".export-{os.getpid()}-"))
    except OSError as e:
        remove_empty_folders(made)
        raise ValueError(f"cannot write to the output directory {str(out)!r}: {folder_error(e, out)}") from None
    try:
        staged = scratch / path.name
        staged.write_bytes(blob)
        rules_problems: list[str] = []
        manifest = {
            "format": MANIFEST_FORMAT,
            "format_version": MANIFEST_VERSION,
            "level": level,
            "variant": variant,
            "num_players": seats,
            "encoding_version": ENCODING_VERSION,
            "observation_shape": list(encoding(variant, seats).observation_shape),
            "num_actions": encoding(variant, seats).num_actions,
            "inputs": {"observation": "int8 (batch, rows, cols, 12)", "action_mask": "int8 (batch, H*H)"},
            "outputs": {"logits": "float32 (batch, H*H), illegal = -1e8", "value": "float32 (batch,)"},
            "interface": interface(variant, seats),
            "plays_seats": list(range(seats)),  # one network plays every seat, each in its canonical frame
            "trained_rules": trained_rules(data.get("config"), variant, seats, rules_problems),
            "training_reward": training_reward(data.get("config")),
            "opset": opset,
            "rating": rating,
            "rating_source": "halma export --rating" if rating is not None else None,
            **stamp,  # halma ladder's level and rating of this same model, kept (``_ladder_stamp``)
            "source": {
                "checkpoint": str(checkpoint),
                "checkpoint_sha256": checkpoint_sha256,
                "network": dict(data["network"]),
                "config": data.get("config"),
                "global_step": data.get("global_step"),
                "update": data.get("update"),
            },
            "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "torch_version": _torch().__version__,
            "onnx_file": path.name,
            "onnx_sha256": file_sha256(staged),
        }
        _write_manifest(staged, manifest)
        try:
            read_manifest(staged, check_hash=False)
        except ValueError as e:  # the manifest's fields disagree: nothing an opset changes
            raise ValueError(f"the export of {str(checkpoint)!r} writes a manifest that does not load: {e}") from None
        try:
            exported = OnnxPolicy(staged)
        except ValueError as e:  # e.g. an operator onnxruntime does not run at this opset
            raise ValueError(f"the model exported with opset {opset} does not load in onnxruntime "
                             f"(a later --opset may): {e}") from None
        check = compare(net, exported, sample_positions(variant, seats, check_positions))
        # written as "not <=": a NaN difference (outputs that overflowed) fails the check, not passes it
        if check["greedy_mismatches"] or not check["max_logit_diff"] <= LOGIT_ATOL:
            raise ValueError(f"the exported model does not reproduce {str(checkpoint)!r}: {check}")
        manifest["export_check"] = check
        manifest["test_vectors"] = make_test_vectors(exported)  # what the Python reference computes
        _write_manifest(staged, manifest)
        os.replace(staged, path)
        os.replace(manifest_path(staged), manifest_path(path))
        if notes is not None:
            notes.extend([note] if note else [])
            # (an edited or damaged config: the model plays all the same, from its network)
            notes.extend(f"trained_rules left null: the checkpoint's training config gives no rules this code "
                         f"reads ({problem})" for problem in rules_problems)
    except OSError as e:
        raise ValueError(f"cannot write the export to {str(out)!r}: {e.strerror or e}"
                         + (f" ({e.filename})" if e.filename else "")) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if not path.exists():
            remove_empty_folders(made)
    return path


def replace_problem(model: Path, checkpoint: str | Path, checkpoint_sha256: str) -> str | None:
    """What exporting ``checkpoint`` (whose bytes hash to ``checkpoint_sha256``) to ``model`` would wrongly
    replace, or None.  Two checkpoints of one run share the default name (``last.pt`` and ``best.pt`` both
    export as ``star-2-RUN.onnx``), and the second export replaced the first without a word.  An export of the
    same checkpoint may be replaced (a rerun: torch may write other bytes), and so may a pair whose model does
    not match its manifest (an export interrupted between its two moves: "export it again", the loader says);
    not another checkpoint's export, nor one of this file before it changed (trained further since), nor files
    that are no export (a model without its manifest, a manifest alone) or that cannot be read.  A link at
    either name is judged by the file it points to.  ``halma ladder`` asks the same before it exports."""
    from agents.opponent import OpponentError

    manifest = manifest_path(model)
    if not model.is_file():
        return None if not manifest.is_file() else f"its manifest {str(manifest)!r} is there without it"
    try:
        found = read_manifest(model, check_hash=False)
        model_sha256 = file_sha256(model)
    except OpponentError as e:
        return f"that file is not an export this command may replace ({e})"
    except OSError as e:
        return f"that file cannot be read ({e.strerror or e})"
    source = found.get("source")
    source = source if isinstance(source, dict) else {}
    if source.get("checkpoint_sha256") == checkpoint_sha256 or model_sha256 != found["onnx_sha256"]:
        return None
    origin = source.get("checkpoint")
    if isinstance(origin, str) and (origin == str(checkpoint) or _same_file(origin, checkpoint)):
        return "that file holds an export of this checkpoint as it was before it changed (trained further since?)"
    of = f" ({origin!r}, or that file before it changed)" if isinstance(origin, str) and len(origin) <= 300 else ""
    return f"that file holds a model exported from another checkpoint{of}"


LADDER_STAMP = ("level", "rating", "rating_source")  # what halma ladder writes into a level's manifest
# (agents.ladder_build._stamp_manifest), its rating_source "halma ladder (GAME, DATE)", starting with:
LADDER_RATING_SOURCE = "halma ladder"


def _ladder_stamp(model: Path, checkpoint_sha256: str, level: str | None,
                  rating: float | None) -> tuple[dict[str, Any], str | None]:
    """What an export of the checkpoint hashing to ``checkpoint_sha256`` keeps of the ``LADDER_STAMP`` that
    ``halma ladder`` wrote into the manifest of the ``model`` it replaces, and the line ``halma export`` prints
    about it (None when that manifest has no stamp: not rated by a ladder, unreadable, or no model there).

    Kept, when that model was exported from the same checkpoint (its manifest's ``source.checkpoint_sha256``,
    what ``replace_problem`` replaces without ``--force``): the same model, still the level it was rated, as the
    ladder file says (a re-export wrote the export's defaults over it until 2026-12-07).  Dropped, so that the
    manifest has the export's defaults, when it came from another checkpoint (``--force``: the rating described
    the model replaced) or when ``rating``, or a ``level`` other than the stamp's, is given (a label by hand)."""
    from agents.ladder import printable
    from agents.opponent import OpponentError

    try:
        found = read_manifest(model, check_hash=False) if model.is_file() else {}
    except (OpponentError, OSError):  # (replace_problem named it, or --force replaces it: nothing to keep)
        return {}, None
    source = found.get("source")
    source = source if isinstance(source, dict) else {}
    rating_source = found.get("rating_source")
    if not (isinstance(rating_source, str) and rating_source.startswith(LADDER_RATING_SOURCE)):
        return {}, None
    stamp = {key: found.get(key) for key in LADDER_STAMP}
    what = (f"the level {printable(stamp['level'])} and rating {printable(stamp['rating'])} that "
            f"{printable(rating_source)} gave")
    if source.get("checkpoint_sha256") != checkpoint_sha256:
        return {}, (f"dropped {what} the model it replaced, which was exported from another checkpoint: the rating "
                    "does not describe this one (halma ladder rates it again; a ladder naming this file refuses "
                    "it until then)")
    given = [flag for flag, value in (("--level", level if level != stamp["level"] else None),
                                      ("--rating", rating)) if value is not None]
    if given:
        return {}, f"dropped {what} the earlier export of this checkpoint: {' and '.join(given)} given"
    return stamp, f"kept {what} the earlier export of this checkpoint (the same model)"


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (False where either is missing or unreadable)."""
    try:
        return Path(a).samefile(b)
    except (OSError, ValueError):  # (ValueError: a NUL in a manifest's path)
        return False


def _write_manifest(onnx_path: Path, manifest: dict[str, Any]) -> None:
    """``write_manifest`` of a manifest that is valid JSON: its json.dumps writes NaN and Infinity, which JSON
    readers refuse (a NaN in the export check's differences, from outputs that overflowed)."""
    bad = []
    for key, value in manifest.items():
        try:
            json.dumps(value, allow_nan=False)
        except ValueError:
            bad.append(key)
    if bad:
        raise ValueError(f"the manifest of {onnx_path.name!r} would not be valid JSON: {', '.join(bad)} "
                         f"({_brief(manifest[bad[0]])}) holds NaN or infinity")
    write_manifest(onnx_path, manifest)


# --- the command -----------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", metavar="CHECKPOINT", help="a training checkpoint (.pt) written by halma train")
    p.add_argument("--level", default=None,
                   help="level name stored in the manifest and the file name (e.g. hard; default the checkpoint's "
                        "run name, e.g. quickstart)")
    p.add_argument("--out", default="exports", metavar="DIR",
                   help="output directory (default exports/); an earlier export of the same checkpoint under the "
                        "same name there is replaced, another model is refused unless --force")
    p.add_argument("--force", action="store_true",
                   help="replace the files of that name in --out: another checkpoint's export, this one's from before "
                        "it was trained further, or files that are no export")
    p.add_argument("--name", default=None, help="file name stem (default VARIANT-SEATS-LEVEL)")
    p.add_argument("--rating", type=float, default=None, help="rating to record (halma ladder fills it otherwise)")
    p.add_argument("--opset", type=int, default=OPSET, help=f"ONNX opset (default {OPSET})")


def run(args: argparse.Namespace) -> int:
    try:
        if args.out == "":  # Path("") is the working directory: an export would write the model there
            raise ValueError("--out needs a directory, got ''")
        notes: list[str] = []
        path = export_checkpoint(args.checkpoint, args.level, args.out, rating=args.rating, name=args.name,
                                 opset=args.opset, force=args.force, notes=notes)
    except ValueError as e:  # CheckpointError is a ValueError
        print(f"halma export: error: {e}", file=sys.stderr)
        return 2
    m = OnnxPolicy(path).manifest
    c = m["export_check"]
    print(f"wrote {shown_path(path)} ({path.stat().st_size / 1024:.0f} KiB) and {shown_path(manifest_path(path))}")
    print(f"{m['variant']} {m['num_players']} seats, level {m['level']}, encoding v{m['encoding_version']}, "
          f"opset {m['opset']}; matches the checkpoint on {c['positions']} positions "
          f"(max logit diff {c['max_logit_diff']:.1e}, greedy mismatches {c['greedy_mismatches']})")
    for note in notes:  # what became of the level and rating halma ladder gave the model replaced; trained_rules
        print(note)
    return 0


# --- halma bench opponent --------------------------------------------------------------------

BENCH_GAMES = (("star", 2), ("star", 6), ("diamond", 3), ("halma16", 2), ("halma16", 4))


def _bench_positions(variant: str, seats: int, count: int, seed: int) -> list[Game]:
    """Realistic positions: plies of noisy greedy games (random games wander and are atypical)."""
    from agents.bots.greedy import GreedyBot

    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(Rules(variant, seats))
        bots = [GreedyBot(seed=rng.randrange(1 << 30), noise=0.2) for _ in range(seats)]
        stop = rng.randrange(20 * seats, 60 * seats)
        while game.ply < stop and not game.is_over:
            game.play(bots[game.to_move].select_move(game))
        if not game.is_over:
            out.append(game)
    return out


def time_per_move(opponent: OnnxOpponent, games: list[Game], seconds: float) -> dict[str, Any]:
    """Median and p99 milliseconds of ``select_move`` (observation, mask, inference and choice):
    wall time and the thread's CPU time (which excludes waiting for a busy core), and of the
    onnxruntime call alone, cycling through ``games`` for about ``seconds``."""
    policy = opponent.policy
    enc = policy.encoding
    inputs = [(enc.observation(g, g.to_move)[None], enc.action_mask(g)[None]) for g in games]
    for g in games[:5]:  # warm-up
        opponent.select_move(g)
    move_t: list[float] = []
    cpu_t: list[float] = []
    infer_t: list[float] = []
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end or len(move_t) < 50:
        g = games[i % len(games)]
        c0 = time.thread_time()  # CPU time of this thread: the move's cost without waits for the core
        t0 = time.perf_counter()
        opponent.select_move(g)
        t1 = time.perf_counter()
        c1 = time.thread_time()
        policy.evaluate(*inputs[i % len(inputs)])
        t2 = time.perf_counter()
        move_t.append(1000 * (t1 - t0))
        cpu_t.append(1000 * (c1 - c0))
        infer_t.append(1000 * (t2 - t1))
        i += 1

    def p99(xs: list[float]) -> float:
        return float(np.percentile(xs, 99))

    return {"moves": len(move_t), "median_ms": statistics.median(move_t), "p99_ms": p99(move_t),
            "cpu_median_ms": statistics.median(cpu_t), "cpu_p99_ms": p99(cpu_t),
            "inference_median_ms": statistics.median(infer_t), "inference_p99_ms": p99(infer_t)}


def _default_models(tmp: Path, shipped: set[tuple[str, int]]) -> list[tuple[str, Path]]:
    """The default-config network (untrained weights: the latency does not depend on them) for
    the benchmark games that ship no trained model."""
    from agents.checkpoint import save_checkpoint
    from agents.config import NetworkConfig
    from agents.network import build_network

    torch = _torch()
    out = []
    torch.manual_seed(0)
    cfg = NetworkConfig()
    for variant, seats in BENCH_GAMES:
        if (variant, seats) in shipped:
            continue
        net = build_network(variant, seats, cfg)
        ckpt = save_checkpoint(tmp / f"{variant}-{seats}.pt", {"variant": variant, "num_players": seats,
                                                                "network": vars(cfg).copy(), "model": net.state_dict()})
        out.append((f"default net (untrained) {variant}-{seats}", export_checkpoint(ckpt, "bench", tmp,
                                                                                    check_positions=4)))
    return out


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """``halma bench opponent``: per-move latency of the shipped ladder models (no search) and of
    the default network on games without one, one onnxruntime thread."""
    from agents.ladder import shipped_models

    seconds = float(getattr(args, "seconds", 2.0))
    seed = int(getattr(args, "seed", 0))
    models = [(f"ladder {p.name}", p) for p in shipped_models()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shipped = set()
        for _, p in models:
            m = OnnxPolicy(p).manifest
            shipped.add((m["variant"], m["num_players"]))
        skipped = None
        try:
            models += _default_models(Path(tmp), shipped)
        except ModuleNotFoundError as e:  # the default network is made and exported with torch (the train extra)
            hint = missing_extra(e)
            if hint is None:
                raise
            skipped = f"the default network's rows (games without a shipped model): {hint}"
        for label, path in models:
            policy = OnnxPolicy(path)
            games = _bench_positions(policy.variant, policy.num_players, 100, seed)
            figures = time_per_move(OnnxOpponent(policy, seed=seed), games, seconds)
            rows.append({"model": label, "variant": policy.variant, "seats": policy.num_players,
                         "actions": policy.encoding.num_actions, **figures})
    result = {"threads": 1, "seconds_per_model": seconds, "target_ms": 10.0, "models": rows,
              "all_within_target": all(r["p99_ms"] <= 10.0 for r in rows),
              "cpu_within_target": all(r["cpu_p99_ms"] <= 10.0 for r in rows),
              **({"skipped": skipped} if skipped else {})}
    if not getattr(args, "json", False):
        print("| model | game | actions | moves timed | median ms/move | p99 ms/move | CPU median ms | CPU p99 ms "
              "| inference median ms | inference p99 ms |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['model']} | {r['variant']}-{r['seats']} | {r['actions']} | {r['moves']} | "
                  f"{r['median_ms']:.2f} | {r['p99_ms']:.2f} | {r['cpu_median_ms']:.2f} | {r['cpu_p99_ms']:.2f} | "
                  f"{r['inference_median_ms']:.2f} | {r['inference_p99_ms']:.2f} |")
        print(f"\none onnxruntime thread; target <= 10 ms per move (wall p99): "
              f"{'met' if result['all_within_target'] else 'NOT met'}; "
              f"CPU p99 within target: {'yes' if result['cpu_within_target'] else 'no'}")
        if skipped:
            print(f"skipped {skipped}")
    return result
