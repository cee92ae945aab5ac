"""Exported opponents: an ONNX policy played with onnxruntime and numpy only (no torch).

``halma export`` (agents/export.py) writes ``NAME.onnx`` and ``NAME.manifest.json`` side by side.
``load_opponent(path)`` checks both and returns a ``Player`` (agents/player.py):

- greedy by default (the legal move with the largest logit, the first one on ties: the same
  move as the torch ``PolicyPlayer`` of the source checkpoint), or sampled from
  ``softmax(logits / temperature)`` with its own seeded generator;
- optionally a small search on top of the policy (``search="top=6,eval=heuristic"``): the ``top``
  most likely moves (and any move that finishes the seat at once, which is always taken) are each
  played, the other seats answer with their own greedy policy
  move, and the position reached is scored from the mover's point of view by the heuristic
  potential of ``agents.bots.evaluation`` (``eval=heuristic``) or the network's value
  (``eval=value``); a move that finishes the seat is taken at once, and a line the other seats decide (a
  loss) ranks below every undecided one.  The candidates are tried in
  policy order and the search stops when the per-move budget is nearly spent, so it always
  answers in time (the greedy move is the fallback);
- one single-threaded onnxruntime session per model (``intra_op_num_threads=1``): a game
  server runs many opponents side by side, one core each.

Names: a path ``model.onnx``, optionally with options ``model.onnx:temperature=0.5,search=top=6``
(comma-separated ``key=value``; ``search`` takes the rest of the string), or a ladder level
``ladder:LEVEL`` (resolved per game from the game's variant and seat count, see agents/ladder.py)
or ``ladder:GAME:LEVEL`` (``GAME`` like ``star-2``).

Bad files fail with ``OpponentError`` (a ``ValueError``) naming the file and the problem: no
manifest, a model or manifest that is no regular file (a FIFO, a device, a directory), a manifest that
is not JSON (or nested too deeply, or with a number too long to read, or a key given twice) or
lacks fields, a model file that is not ONNX, holds NaN or inf weights or does not match the manifest's
checksum, an encoding version newer than this code, a manifest whose game disagrees with its own
interface fields, the checkpoint config it records, the graph or the file's name, a model for another
variant or seat count than the game it is asked to play.

A model is untrusted input (a downloaded or uploaded file), so it may only be what ``halma export``
writes (``_check_graph``): one file of at most ``MAX_MODEL_BYTES``, read once (its checksum, the
checks and onnxruntime all use those bytes), every tensor stored inside it (no external data: it
would read other files of its folder, which the checksum does not cover), only the operators the
exporter emits (``EXPORT_OPS``, default domain: no loops, no custom operators), at most
``MAX_GRAPH_ITEMS`` nodes, tensors and edges.  Those operators can still be given sizes that exhaust
memory or time, so each run may allocate at most ``RUN_MEMORY_LIMIT`` bytes (one onnxruntime arena
that every opponent of the process shares) and is stopped after ``RUN_TIME_LIMIT`` seconds, and
onnxruntime folds no constants when it loads a model (that would run the graph's constant part
unbounded).  A run that fails is an ``OpponentError`` naming the model.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from time import monotonic as _monotonic  # the watchdog's clock (tests replace the module ``time``)
from typing import Any

import numpy as np

from agents.files import is_plain_int
from agents.ladder import PLAYER_OPTIONS  # (no torch, nor does it import this module at its top)
from agents.player import (
    Player,
    check_is_game,
    check_is_rules,
    check_number,
    check_seed,
    check_time,
    sample_index,
    split_options,
)
from halma_env import Game, Move, Rules
from halma_env.encoding import ENCODING_VERSION, encoding
from halma_env.files import (
    FINITE_NUMBERS,
    DuplicateKey,
    FileTooLarge,
    NotARegularFile,
    NotFinite,
    file_kind,
    no_duplicate_keys,
    read_regular_file,
)
from halma_env.rules import ASCII_DECIMAL, game_name, game_problem
from halma_env.suggest import shown_value

MANIFEST_FORMAT = "halma_env.opponent"
MANIFEST_VERSION = 1
MANIFEST_SUFFIX = ".manifest.json"
INPUT_NAMES = ("observation", "action_mask")
OUTPUT_NAMES = ("logits", "value")
REQUIRED_FIELDS = ("format", "format_version", "variant", "num_players", "encoding_version", "onnx_sha256")
SEARCH_DEFAULTS: dict[str, Any] = {"top": 6, "eval": "heuristic"}
SEARCH_EVALS = ("heuristic", "value")
BUDGET_SHARE = 0.8  # of the per-move budget the search may use (the rest covers overhead)

# --- what a model file may be (docs/export.md) ---
MAX_MODEL_BYTES = 64 << 20  # the shipped models are 50-200 KiB; a large exported network a few MiB
MAX_MANIFEST_BYTES = 1 << 20  # the shipped manifests are ~3 KiB
MAX_GRAPH_ITEMS = 50_000  # nodes, tensors, node inputs/outputs/attributes: ~1,000 in the shipped models
# The operator types ``halma export`` writes (agents/export.py): the union over every opset it takes
# (9-20) of the shipped checkpoints' networks, of networks with attention_layers and reach_features,
# and of untrained ones (torch writes Identity for parameters with equal values, e.g. zero-initialised).
# No control flow (Loop, Scan, If) and no other domain: a model can only compute a fixed graph.
EXPORT_OPS = frozenset({
    "Add", "And", "Cast", "Concat", "Constant", "ConstantOfShape", "Div", "Equal", "Expand", "Gather",
    "Gemm", "Greater", "Identity", "LayerNormalization", "MatMul", "Max", "Mul", "Neg", "NonZero", "Not",
    "Pow", "Range", "ReduceMax", "ReduceMean", "ReduceSum", "Relu", "Reshape", "Shape", "Slice", "Softmax",
    "Split", "Sqrt", "Squeeze", "Sub", "Transpose", "Unsqueeze", "Where",
})
DEFAULT_DOMAINS = ("", "ai.onnx")
# --- what running one may take ---
RUN_MEMORY_LIMIT = 1 << 30  # bytes onnxruntime may allocate for the runs of all opponents of a process
RUN_TIME_LIMIT = 10.0  # seconds one run may take (a move's evaluation takes well under 10 ms)


class OpponentError(ValueError):
    """An exported opponent that cannot be used: missing, corrupt or made for something else."""


# --- files ---------------------------------------------------------------------------------


def manifest_path(onnx_path: str | Path) -> Path:
    """``dir/NAME.onnx`` -> ``dir/NAME.manifest.json``."""
    p = Path(onnx_path)
    stem = p.name[: -len(".onnx")] if p.name.lower().endswith(".onnx") else p.name
    return p.with_name(stem + MANIFEST_SUFFIX)


def is_sha256(value: Any) -> bool:
    """Whether ``value`` is a sha256 as the manifests and ladders write one: 64 lowercase hex digits."""
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_file(path: Path, limit: int, what: str) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (``OpponentError`` naming ``what`` otherwise:
    ``halma_env.files.read_regular_file``, which neither waits on a FIFO nor reads without bound)."""
    try:
        return read_regular_file(path, limit)
    except NotARegularFile as e:
        raise OpponentError(f"{what} {str(path)!r} is {e.kind}, not a regular file") from None
    except FileTooLarge as e:
        most = f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"
        raise OpponentError(f"{what} {str(path)!r} is {e.size} bytes, more than the {most} it may "
                            "have (docs/export.md)") from None
    except OSError as e:
        raise OpponentError(f"cannot read {what} {str(path)!r}: {e.strerror or e}") from None


def read_model_bytes(onnx_path: str | Path) -> bytes:
    """The model file's bytes, at most ``MAX_MODEL_BYTES`` (``OnnxPolicy`` reads them once: the
    checksum, the graph checks and onnxruntime all see the same bytes)."""
    return _read_file(Path(onnx_path), MAX_MODEL_BYTES, "opponent model")


def read_manifest(onnx_path: str | Path, check_hash: bool = True) -> dict[str, Any]:
    """The checked manifest of an exported model (``OpponentError`` naming what is wrong)."""
    onnx_path = Path(onnx_path)
    kind = _kind(onnx_path)
    if kind is None:
        from agents.files import shipped_file_hint

        raise OpponentError(f"opponent model {str(onnx_path)!r} does not exist{shipped_file_hint(onnx_path)}")
    if kind:  # a FIFO, a device (a link to /dev/zero), a directory: there, but no model
        raise OpponentError(f"opponent model {str(onnx_path)!r} is {kind}, not a regular file")
    mpath = manifest_path(onnx_path)
    kind = _kind(mpath)
    if kind is None:
        raise OpponentError(f"opponent model {str(onnx_path)!r} has no manifest: expected {str(mpath)!r} "
                            "(written by 'halma export' next to the model)")
    if kind:
        raise OpponentError(f"manifest {str(mpath)!r} is {kind}, not a regular file")
    text = _read_file(mpath, MAX_MANIFEST_BYTES, "manifest")
    try:
        data = json.loads(text.decode("utf-8"), object_pairs_hook=no_duplicate_keys, **FINITE_NUMBERS)
    except DuplicateKey as e:  # "variant": "star", "variant": "diamond" would load as diamond
        raise OpponentError(f"manifest {str(mpath)!r}: {e}; a manifest gives each field once") from None
    except NotFinite as e:  # (Python's decoder takes NaN and Infinity, which are no JSON: as a ladder file)
        raise OpponentError(f"manifest {str(mpath)!r} holds the number {e.text}: its numbers must be finite") from None
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError, a too long integer
        raise OpponentError(f"manifest {str(mpath)!r} is corrupt or not JSON ({type(e).__name__}: {e})") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise OpponentError(f"{str(mpath)!r} is not an opponent manifest (no format {MANIFEST_FORMAT!r})")
    missing = [k for k in REQUIRED_FIELDS if k not in data]
    if missing:
        raise OpponentError(f"manifest {str(mpath)!r} lacks {', '.join(missing)}")
    # JSON true and 1.0 compare equal to 1: a field that counts something must be a JSON integer
    for key in ("format_version", "num_players", "num_actions"):
        if key in data and not is_plain_int(data[key]):
            raise OpponentError(f"manifest {str(mpath)!r}: {key} must be an integer, got {shown_value(data[key])}")
    if data["format_version"] != MANIFEST_VERSION:
        raise OpponentError(f"manifest {str(mpath)!r} has format version {shown_value(data['format_version'])}; "
                            f"this code reads version {MANIFEST_VERSION}")
    version = data["encoding_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise OpponentError(f"manifest {str(mpath)!r}: encoding_version must be an integer, "
                            f"got {shown_value(version)}")
    if version > ENCODING_VERSION:
        raise OpponentError(f"opponent {str(onnx_path)!r} uses observation/action encoding version {version}, "
                            f"newer than this code supports ({ENCODING_VERSION}); upgrade halma_env")
    if version != ENCODING_VERSION:
        raise OpponentError(f"opponent {str(onnx_path)!r} uses encoding version {version}; this code produces "
                            f"version {ENCODING_VERSION} observations (re-export it from a current checkpoint)")
    _check_descriptive(data, mpath)
    variant, seats = data["variant"], data["num_players"]
    problem = game_problem(variant, seats)
    if problem:
        raise OpponentError(f"manifest {str(mpath)!r}: {problem}")
    _check_consistent(data, onnx_path, mpath)
    if check_hash:
        check_checksum(onnx_path, data, file_sha256(onnx_path))
    return data


def _kind(path: Path) -> str | None:
    """What stands at ``path``, symbolic links followed: None for nothing (or a dangling link), '' for a
    regular file, else ``file_kind``'s words (``a FIFO``, ``a device``, ``a directory``)."""
    try:
        return file_kind(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):  # no permission, a name too long, a NUL: _read_file says what
        return ""


# the manifest's descriptive fields and the JSON types they hold (None: null allowed) when present
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "level": (str, type(None)), "rating_source": (str, type(None)), "exported_at": (str,), "torch_version": (str,),
    "onnx_file": (str,), "onnx_sha256": (str,), "inputs": (dict,), "outputs": (dict,), "export_check": (dict,),
    "source": (dict,), "variant": (str,),
}


def _check_descriptive(data: dict[str, Any], mpath: Path) -> None:
    """The types of the fields other code reads or prints (a ``rating`` of ``{}`` would fail only when a
    table is formatted), named with the manifest."""
    for key, types in _FIELD_TYPES.items():
        if key in data and (isinstance(data[key], bool) or not isinstance(data[key], types)):
            wanted = " or ".join("null" if t is type(None) else {"str": "a string", "dict": "an object"}[t.__name__]
                                 for t in types)
            raise OpponentError(f"manifest {str(mpath)!r}: {key} must be {wanted}, got {shown_value(data[key])}")
    rating = data.get("rating")
    if rating is not None and not (_is_number(rating) and math.isfinite(rating)):
        raise OpponentError(f"manifest {str(mpath)!r}: rating must be a finite number or null, got "
                            f"{shown_value(rating)}")
    if "opset" in data and not (is_plain_int(data["opset"]) and data["opset"] >= 1):
        raise OpponentError(f"manifest {str(mpath)!r}: opset must be an integer >= 1, got {shown_value(data['opset'])}")
    if not is_sha256(data["onnx_sha256"]):
        raise OpponentError(f"manifest {str(mpath)!r}: onnx_sha256 must be 64 lowercase hex digits, got "
                            f"{shown_value(data['onnx_sha256'])}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_checksum(onnx_path: str | Path, manifest: dict[str, Any], digest: str) -> None:
    """The model's sha256 ``digest`` against its manifest's ``onnx_sha256``."""
    if digest != manifest["onnx_sha256"]:
        raise OpponentError(f"opponent model {str(onnx_path)!r} does not match its manifest's sha256 "
                            f"(file {digest[:12]}..., manifest {str(manifest['onnx_sha256'])[:12]}...): "
                            "the model was changed or corrupted after export, or an export of this name was "
                            "interrupted between moving the model and its manifest into place (export it again)")


def _check_consistent(data: dict[str, Any], onnx_path: Path, mpath: Path) -> None:
    """The manifest's game against its other fields: the interface it records, the checkpoint config
    it was exported from and the model file's name (the graph itself is checked in ``_session``).  A
    manifest edited to claim another game must not make the model play it."""
    variant, seats = data["variant"], data["num_players"]
    game = game_name(variant, seats)
    enc = encoding(variant, seats)
    shape = data.get("observation_shape", list(enc.observation_shape))
    if not (isinstance(shape, list) and all(map(is_plain_int, shape)) and shape == list(enc.observation_shape)):
        raise OpponentError(f"manifest {str(mpath)!r}: observation_shape {shown_value(data['observation_shape'])} is "
                            f"not that of its game ({game}: {list(enc.observation_shape)})")
    if "num_actions" in data and data["num_actions"] != enc.num_actions:
        raise OpponentError(f"manifest {str(mpath)!r}: num_actions {shown_value(data['num_actions'])} is not that of "
                            f"its game ({game}: {enc.num_actions})")
    source = data.get("source")
    config = source.get("config") if isinstance(source, dict) else None
    trained = config.get("game") if isinstance(config, dict) else None
    if isinstance(trained, dict):  # the training config of the checkpoint (export.py copies it)
        for key, value in (("variant", variant), ("num_players", seats)):
            if key in trained and (trained[key] != value or isinstance(trained[key], bool)):
                raise OpponentError(f"manifest {str(mpath)!r}: {key} {value!r} disagrees with the game the network "
                                    f"was trained for (source.config.game.{key} {shown_value(trained[key])})")
    if "onnx_file" in data and data["onnx_file"] != onnx_path.name:
        raise OpponentError(f"manifest {str(mpath)!r}: onnx_file {shown_value(data['onnx_file'])} is not the model it "
                            f"describes ({onnx_path.name!r}); a renamed export keeps its name in the manifest: "
                            "give the files their names back, or export it again with --name")


def write_manifest(onnx_path: str | Path, data: dict[str, Any]) -> Path:
    """Write (or rewrite) the manifest next to ``onnx_path`` atomically."""
    from halma_env.files import write_atomic  # a fresh temporary name: never through a planted symlink

    mpath = manifest_path(onnx_path)
    write_atomic(mpath, json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n")  # NaN is no JSON
    return mpath


def _first_line(e: BaseException, cut: bool = True) -> str:
    """An error's first line, cut short unless ``cut`` is False (onnxruntime's can run over 700 characters)."""
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return line if len(line) <= 300 or not cut else f"{line[:250]}... ({len(line)} characters)"


def _check_graph(onnx_path: Path, model: bytes) -> None:
    """Refuse a model that is not what ``halma export`` writes (module docstring): parsed by ``onnx``
    from the bytes already read, without loading external data, before onnxruntime sees it."""
    import onnx

    name = f"opponent model {str(onnx_path)!r}"
    try:
        proto = onnx.load_model_from_string(model)  # never reads external data (it has no folder to read)
    except Exception as e:  # protobuf's DecodeError and the like
        raise OpponentError(f"{name} is not a valid ONNX model ({_first_line(e)})") from None
    graph = proto.graph
    if len(proto.functions) or len(proto.training_info):
        raise OpponentError(f"{name} defines functions or training graphs; an exported model has neither")
    if len(graph.sparse_initializer):
        raise OpponentError(f"{name} has sparse initializers ({graph.sparse_initializer[0].values.name!r}); "
                            "an exported model has none")
    items = (len(graph.node) + len(graph.initializer) + len(graph.value_info) + len(graph.input)
             + len(graph.output) + sum(len(n.input) + len(n.output) + len(n.attribute) for n in graph.node))
    if items > MAX_GRAPH_ITEMS:
        raise OpponentError(f"{name} has {len(graph.node)} nodes and {items} graph items (nodes, tensors, "
                            f"inputs, outputs, attributes), more than the {MAX_GRAPH_ITEMS} an opponent may have")
    tensors = [(t, "initializer") for t in graph.initializer]
    for node in graph.node:
        label = f"{node.op_type} node {node.name!r}" if node.name else f"{node.op_type} node"
        if node.domain not in DEFAULT_DOMAINS:
            raise OpponentError(f"{name} uses operator {node.op_type!r} of domain {node.domain!r}; an exported model "
                                "uses only the default ONNX domain")
        if node.op_type not in EXPORT_OPS:
            raise OpponentError(f"{name} uses operator {node.op_type!r}, which 'halma export' never writes "
                                "(agents.opponent.EXPORT_OPS lists the operators an opponent may use)")
        for attr in node.attribute:
            if attr.HasField("g") or len(attr.graphs) or attr.HasField("sparse_tensor") or len(attr.sparse_tensors):
                raise OpponentError(f"{name}: {label} has a subgraph or sparse tensor attribute {attr.name!r}; "
                                    "an exported model has none")
            tensors += [(t, f"attribute {attr.name!r} of the {label}") for t in (attr.t, *attr.tensors)]
    for tensor, where in tensors:
        if tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data):
            location = next((e.value for e in tensor.external_data if e.key == "location"), "?")
            raise OpponentError(f"{name}: tensor {tensor.name!r} ({where}) keeps its data in another file "
                                f"({location!r}); an exported model keeps every tensor inside the .onnx file")
    _check_finite(graph, name)


_FLOAT_TYPES = ("FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16")


def _check_finite(graph: Any, name: str) -> None:
    """The float initializers (the network's weights) hold no NaN or inf: such a model would load and play
    without a word (greedy play picks the first legal move when every logit is NaN), where the checkpoint
    loader refuses the same weights.  Called once no tensor keeps its data elsewhere (``to_array`` would read
    that file)."""
    import onnx
    from onnx import numpy_helper

    floats = {getattr(onnx.TensorProto, t) for t in _FLOAT_TYPES if hasattr(onnx.TensorProto, t)}
    bad: list[tuple[str, str]] = []
    for tensor in graph.initializer:
        if tensor.data_type not in floats:
            continue
        try:
            values = numpy_helper.to_array(tensor)
            if values.dtype.kind != "f":  # bfloat16 (ml_dtypes)
                values = values.astype(np.float32)
        except Exception as e:  # data of another size than its dims
            raise OpponentError(f"{name}: initializer {tensor.name!r} cannot be read ({_first_line(e)})") from None
        if not bool(np.isfinite(values).all()):
            what = " and ".join(w for w, f in (("NaN", np.isnan), ("inf", np.isinf)) if bool(f(values).any()))
            bad.append((tensor.name, what))
    if bad:
        more = f" ({len(bad) - 1} more initializers hold NaN or inf)" if len(bad) > 1 else ""
        raise OpponentError(f"{name} has non-finite weights (exported from a diverged run, or edited): initializer "
                            f"{bad[0][0]!r} holds {bad[0][1]}{more}")


_ALLOCATOR_LOCK = threading.Lock()
_allocator_registered = False


def _share_capped_allocator(ort: Any) -> None:
    """Register, once per process, the onnxruntime CPU arena the opponents' sessions share: it allocates
    at most ``RUN_MEMORY_LIMIT`` bytes, so a graph asking for more fails its run instead of taking the
    machine's memory.  (If something else registered one first, the sessions share that one.)"""
    global _allocator_registered
    with _ALLOCATOR_LOCK:
        if _allocator_registered:
            return
        info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
        try:
            ort.create_and_register_allocator(info, ort.OrtArenaCfg(RUN_MEMORY_LIMIT, -1, -1, -1))
        except Exception:  # already registered in this process: the sessions use that one
            pass
        _allocator_registered = True


def _session(onnx_path: Path, variant: str, seats: int, model: bytes) -> Any:
    """An onnxruntime session of ``model`` (the file's bytes, checked by ``_check_graph``), checked
    against the manifest's game."""
    import onnxruntime as ort

    _share_capped_allocator(ort)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # fatal only: a failed run's error (severity 3) would print raw (colour codes) on stderr before the
    # OpponentError that names the model and says it; the session's runs log with this level too
    options.log_severity_level = 4
    options.add_session_config_entry("session.use_env_allocators", "1")  # the capped arena
    try:  # no constant folding: it would compute the graph's constant part while loading, without any bound
        sess = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=["ConstantFolding"])
    except Exception as e:  # onnxruntime raises its own exception types (InvalidProtobuf, Fail, ...)
        raise OpponentError(f"opponent model {str(onnx_path)!r} is not a valid ONNX model ({_first_line(e)})") from None
    enc = encoding(variant, seats)
    try:  # (onnxruntime decodes the graph's names and symbolic axes only when asked for them)
        inputs = [(i.name, i.shape) for i in sess.get_inputs()]
        outputs = [o.name for o in sess.get_outputs()]
    except UnicodeDecodeError as e:
        raise OpponentError(f"opponent model {str(onnx_path)!r} is not a valid ONNX model (a name in its graph is not "
                            f"UTF-8 text: {e})") from None
    if tuple(name for name, _ in inputs) != INPUT_NAMES or tuple(outputs) != OUTPUT_NAMES:
        raise OpponentError(f"opponent model {str(onnx_path)!r} has inputs {shown_value([n for n, _ in inputs])} and "
                            f"outputs {shown_value(outputs)}; expected {list(INPUT_NAMES)} -> {list(OUTPUT_NAMES)}")
    width = inputs[1][1][-1]
    if isinstance(width, int) and width != enc.num_actions:
        raise OpponentError(f"opponent model {str(onnx_path)!r} scores {width} actions but its manifest's game "
                            f"has {enc.num_actions}")
    # the board the graph reads (17 x 17 for star and diamond, 16 x 16 for halma16); a symbolic axis is not checked
    shape = list(inputs[0][1][1:])
    expected = list(enc.observation_shape)
    if len(shape) != len(expected) or any(isinstance(a, int) and a != b for a, b in zip(shape, expected)):
        raise OpponentError(f"opponent model {str(onnx_path)!r} reads observations of shape {shape}, but its "
                            f"manifest {str(manifest_path(onnx_path))!r} (variant {variant!r}, num_players {seats}) "
                            f"needs {expected}")
    return sess


class _Watchdog:
    """One daemon thread that stops onnxruntime runs past their deadline (``RunOptions.terminate``:
    onnxruntime checks it between nodes).  A run costs a lock and a dict entry; the thread wakes only
    at the earliest deadline of the runs in flight."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._runs: dict[int, tuple[float, Any]] = {}
        self._count = 0
        self._wake_at = math.inf
        self._thread: threading.Thread | None = None

    def watch(self, run_options: Any, seconds: float) -> int:
        deadline = _monotonic() + seconds
        with self._cond:
            self._count += 1
            self._runs[self._count] = (deadline, run_options)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="opponent-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._wake_at:
                self._cond.notify()
            return self._count

    def forget(self, key: int) -> None:
        with self._cond:
            self._runs.pop(key, None)

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = _monotonic()
                for key, (deadline, run_options) in list(self._runs.items()):
                    if deadline <= now:
                        run_options.terminate = True
                        del self._runs[key]
                self._wake_at = min((deadline for deadline, _ in self._runs.values()), default=math.inf)
                self._cond.wait(None if self._wake_at == math.inf else self._wake_at - now)


_WATCHDOG = _Watchdog()


# --- the model -----------------------------------------------------------------------------


def _binary_input(name: str, array: Any) -> np.ndarray:
    """``array`` as a contiguous int8 array, when it holds only 0s and 1s of an integer or bool dtype."""
    array = np.asarray(array)
    if array.dtype != np.bool_ and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be 0s and 1s of an integer or bool dtype (int8 is the model's), got "
                         f"{array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 1):
        raise ValueError(f"{name} must be 0s and 1s, got values from {array.min()} to {array.max()}")
    return np.ascontiguousarray(array, dtype=np.int8)


class OnnxPolicy:
    """An exported network: ``(observations, masks) -> (masked logits, values)`` with onnxruntime."""

    def __init__(self, onnx_path: str | Path) -> None:
        self.path = Path(onnx_path)
        self.manifest = read_manifest(self.path, check_hash=False)
        model = read_model_bytes(self.path)  # read once: checksum, checks and session use these bytes
        check_checksum(self.path, self.manifest, hashlib.sha256(model).hexdigest())
        self.variant: str = self.manifest["variant"]
        self.num_players: int = int(self.manifest["num_players"])
        self.encoding = encoding(self.variant, self.num_players)
        _check_graph(self.path, model)
        self.session = _session(self.path, self.variant, self.num_players, model)

    # an onnxruntime session cannot be pickled or deep-copied: copies share it (the policy never changes
    # and a session may be run from several threads), and a pickled policy is its file, loaded and
    # checked against its manifest again when unpickled (a spawned worker, a saved environment)
    def __copy__(self) -> OnnxPolicy:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> OnnxPolicy:
        return self

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (OnnxPolicy, (os.path.abspath(self.path),))

    def evaluate(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B, rows, cols, 12) observations and (B, H*H) masks of 0s and 1s (int8, or any integer or bool
        dtype) -> (B, H*H) logits, (B,) values.  Anything else is a ``ValueError`` naming it: the model
        would broadcast one mask over several positions, and a cast to int8 made 0.6 a 0 and 300 a 44."""
        feeds = {"observation": _binary_input("observations", observations),
                 "action_mask": _binary_input("masks", masks)}
        sizes = [len(a) if a.ndim else 0 for a in feeds.values()]
        if sizes[0] != sizes[1] or sizes[0] == 0:
            raise ValueError(f"observations and masks must hold one or more positions each, the same number: "
                             f"got {sizes[0]} and {sizes[1]}")
        import onnxruntime as ort

        run_options = ort.RunOptions()
        watch = _WATCHDOG.watch(run_options, RUN_TIME_LIMIT)
        try:
            logits, values = self.session.run(None, feeds, run_options)
        except Exception as e:
            # (a node name that is not UTF-8 fails as onnxruntime writes its error message)
            if not (type(e).__module__.startswith("onnxruntime") or isinstance(e, UnicodeDecodeError)):
                raise
            raise self._run_error(e, stopped=run_options.terminate) from None
        finally:
            _WATCHDOG.forget(watch)
        if not (np.isfinite(logits).all() and np.isfinite(values).all()):
            # finite weights can still overflow (3e38 in one layer): greedy play took the first legal move
            raise OpponentError(f"opponent model {str(self.path)!r} scored a position NaN or inf: its weights are "
                                "finite but overflow float32 (not a network halma export writes)")
        return logits, values

    def _run_error(self, e: Exception, stopped: bool) -> OpponentError:
        """onnxruntime's error of a run (its own exception types) as an ``OpponentError`` naming the model."""
        name = f"opponent model {str(self.path)!r}"
        if stopped:
            return OpponentError(f"{name} was stopped after running for {RUN_TIME_LIMIT:g} s (RUN_TIME_LIMIT); an "
                                 "exported network evaluates a position in milliseconds")
        first, whole = _first_line(e), _first_line(e, cut=False)
        if "Available memory of" in whole or "Failed to allocate memory" in whole:
            return OpponentError(f"{name} needs more memory than the {RUN_MEMORY_LIMIT >> 20} MiB its runs may use "
                                 f"(RUN_MEMORY_LIMIT) ({first})")
        return OpponentError(f"{name} failed in onnxruntime ({first})")

    def check_game(self, game: Game, who: str) -> None:
        r = game.rules
        if (r.variant, r.num_players) != (self.variant, self.num_players):
            raise OpponentError(f"{who} was exported for {game_name(self.variant, self.num_players)}; it cannot "
                                f"play {game_name(r.variant, r.num_players)}")

    def scores(self, game: Game) -> tuple[list[Move], np.ndarray, float]:
        """The legal moves of the seat to move, their logits (same order) and the value, in that seat's frame.
        (It took a ``seat``, which scored the mover's moves in another seat's frame: meaningless numbers.)"""
        seat = game.to_move
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        enc = self.encoding
        actions = enc.move_actions(seat, moves)
        mask = np.zeros((1, enc.num_actions), dtype=np.int8)
        mask[0, actions] = 1
        obs = enc.observation(game, seat)[None]
        logits, values = self.evaluate(obs, mask)
        return moves, logits[0, actions].astype(np.float64), float(values[0])

    def value(self, game: Game, seat: int) -> float:
        """The network's value of ``game`` from ``seat``'s point of view."""
        enc = self.encoding
        mask = np.zeros((1, enc.num_actions), dtype=np.int8)
        return float(self.evaluate(enc.observation(game, seat)[None], mask)[1][0])


# --- the player ----------------------------------------------------------------------------


def _search_top(value: Any) -> int:
    """``top``: an integer >= 1 (Python or numpy; a digit string in the text form), not truncated."""
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"search top must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"search top must be >= 1, got {value!r}")
    return int(value)


def parse_search(search: str | dict[str, Any] | int | None) -> dict[str, Any] | None:
    """The search settings (checked) or ``None`` for no search, from one of (docs/export.md):

    - ``None``, ``False``, ``0`` or ``"none"``/``"off"``/``"false"``/``"0"``/``""``: no search;
    - ``True`` or ``"on"``/``"true"``/``"default"``: the defaults;
    - an integer K >= 1 (numpy's too) or ``"K"``: ``top=K``;
    - a dict or ``"top=K,eval=heuristic|value"``: those settings over the defaults.

    Anything else (a float, ``top=2.5``, ``top=True``, an unknown key) is a ``ValueError`` naming it:
    a value is never truncated or read as another type."""
    if search is None or search is False:
        return None
    if search is True:
        return dict(SEARCH_DEFAULTS)
    if isinstance(search, str):
        text = search.strip()
        if text.lower() in ("", "none", "off", "false"):
            return None
        if text.lower() in ("on", "true", "default"):
            return dict(SEARCH_DEFAULTS)
        if re.fullmatch(r"-?[0-9]+", text):  # "3": top=3, as the integer 3 (and "0" as 0)
            search = int(text)
    if isinstance(search, numbers.Integral) and not isinstance(search, bool):
        if search == 0:  # as "0": no search
            return None
        items: dict[str, Any] = {"top": search}
    elif isinstance(search, dict):
        items = dict(search)
    elif isinstance(search, str):
        items = dict(split_options(search, search.strip(), "search setting"))
    else:
        raise ValueError(f"search must be None, an int, a dict or 'top=K,eval=heuristic|value', got {search!r}")
    unknown = set(items) - set(SEARCH_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown search setting(s) {', '.join(sorted(map(str, unknown)))}; known: top, eval")
    out = dict(SEARCH_DEFAULTS, **items)
    out["top"] = _search_top(out["top"])
    if not isinstance(out["eval"], str) or out["eval"] not in SEARCH_EVALS:
        raise ValueError(f"search eval must be one of {', '.join(SEARCH_EVALS)}, got {out['eval']!r}")
    return out


class OnnxOpponent:
    """A ``Player`` backed by an exported policy (see the module docstring)."""

    def __init__(self, policy: OnnxPolicy, name: str | None = None, seed: int | None = None,
                 temperature: float = 0.0, search: str | dict[str, Any] | int | None = None,
                 time_budget: float | None = None) -> None:
        self.temperature = check_number("temperature", temperature)
        self.time_budget = check_time("time_budget", time_budget)
        self.reseed(seed)
        self.policy = policy
        self.name = name or policy.manifest.get("level") or policy.path.stem
        self.search = parse_search(search)
        if self.search is not None and self.search["eval"] == "heuristic":
            from agents.bots.evaluation import seat_tables  # pure python, no torch

            for seat in range(policy.num_players):  # build the cached tables now, not in the first move's budget
                seat_tables(policy.variant, policy.num_players, seat)

    def reseed(self, seed: int | None) -> None:
        """Start the sampling stream again from ``seed`` (the environments' ``reset(seed=...)`` calls it)."""
        self.seed = check_seed(seed)
        self._rng = np.random.default_rng(self.seed)

    @property
    def manifest(self) -> dict[str, Any]:
        return self.policy.manifest

    def player_for(self, rules: Rules) -> OnnxOpponent:
        """This opponent, once it is checked to play ``rules``' game (``OpponentError`` if not): a server
        prepares a model as it prepares a level (``player_for`` of ``agents.ladder``), before a game's clock
        starts; the model and its session are loaded already.  ``rules`` other than a ``halma_env.Rules`` (a
        variant's name, None) is a TypeError, as for a level."""
        check_is_rules(rules)
        self._check_game(Game(rules))
        return self

    def _check_game(self, game: Game) -> None:
        # the file first: a model of one's own that halma ladder placed is named by the level it stamped on it
        path = self.policy.path
        level = f" ({self.name})" if self.name != path.stem else ""
        self.policy.check_game(game, f"opponent model {path.name!r}{level}")

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        start = time.perf_counter()
        check_time("time_budget", time_budget)
        check_is_game(game)
        self._check_game(game)
        moves, logits, _ = self.policy.scores(game)
        search = self.search
        if search is not None and len(moves) > 1:
            budget = time_budget if time_budget is not None else self.time_budget
            deadline = math.inf if budget is None else start + BUDGET_SHARE * budget
            return self._search(game, moves, logits, deadline, search)
        return moves[sample_index(logits, self.temperature, self._rng)]

    def _search(self, game: Game, moves: list[Move], logits: np.ndarray, deadline: float,
                search: dict[str, Any]) -> Move:
        """Policy-guided lookahead: the top moves, each answered by the other seats' greedy policy."""
        from agents.bots.evaluation import SeatView  # pure python, no torch
        from agents.bots.greedy import finishing_moves

        me = game.to_move
        n = game.num_players
        done = finishing_moves(game, me, SeatView(game, me), moves)
        if done:  # a move that finishes the seat now beats anything the lookahead could find
            return done[0]
        order = np.argsort(-logits, kind="stable")[: search["top"]]
        best, best_score = moves[int(order[0])], -math.inf
        cost = 0.0  # time the last candidate took: the next one is started only if it fits
        for rank, i in enumerate(order):
            t0 = time.perf_counter()
            if rank > 0 and t0 + cost > deadline:
                break  # out of time: keep the best so far (the greedy move at worst)
            g = game.copy()
            g.play(moves[int(i)])
            if g.status[me] == "finished":
                return moves[int(i)]
            for _ in range(n - 1):  # each other seat answers once with its greedy policy move
                if g.is_over or g.to_move == me:
                    break
                replies, reply_logits, _ = self.policy.scores(g)
                g.play(replies[int(np.argmax(reply_logits))])
            score = self._evaluate(g, me, search)
            if score > best_score:
                best, best_score = moves[int(i)], score
            cost = time.perf_counter() - t0
        return best

    def _evaluate(self, game: Game, seat: int, search: dict[str, Any]) -> float:
        place = game.places[seat]
        if place is not None:
            # decided: by the seat's own finish (the best place still open) above anything undecided, by the
            # others' (a loss: in 2 seats place 2 scored 1e9 - 2e6 and beat every undecided line, so the search
            # let the other seat jump home) below it; the better the place, the higher
            return (1e9 if game.status[seat] == "finished" else -1e9) - 1e6 * float(place)
        if search["eval"] == "value":
            return self.policy.value(game, seat)
        from agents.bots.evaluation import progress_score  # pure python, no torch

        return progress_score(game, seat)

    def __repr__(self) -> str:
        return (f"OnnxOpponent({str(self.policy.path)!r}, seed={self.seed!r}, temperature={self.temperature}, "
                f"search={self.search!r})")


# --- by name -------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpponentSpec:
    """A parsed opponent name: the model path and its play options."""

    path: str
    options: dict[str, Any]


def opponent_file(name: str) -> str:
    """The model file of an opponent name: the part up to the last ``.onnx:`` (a folder may be
    called ``v1.onnx_models``), or the whole name when it has no options."""
    cut = name.lower().rfind(".onnx:")
    return name if cut < 0 else name[: cut + len(".onnx")]


def parse_opponent_spec(name: str) -> OpponentSpec:
    """``"dir/model.onnx:temperature=0.5,search=top=6,eval=value"`` -> path and options."""
    path = opponent_file(name)
    if path == name:
        return OpponentSpec(name, {})
    rest = name[len(path) + 1:]
    options: dict[str, Any] = {}
    try:  # the search settings run to the end: search=top=6,eval=value
        items = split_options(name, rest, "opponent option", tail="search")
    except ValueError as e:
        raise OpponentError(str(e)) from None
    for key, value in items:
        if key not in PLAYER_OPTIONS:
            raise OpponentError(f"opponent option {key!r} in {name!r}: expected key=value with key one of "
                                f"{', '.join(PLAYER_OPTIONS)}")
        if key == "search":
            try:  # checked here, so that a bad setting names the spec
                parse_search(value)
            except ValueError as e:
                raise OpponentError(f"opponent option search={value!r} in {name!r}: {e} (search= takes the "
                                    "rest of the name, so give it last)") from None
            options[key] = value
            continue
        text = value.strip()
        # ASCII decimals only: float() also reads other scripts' digits (٠.٥) and 1_0
        if text.lower() != "none" and not ASCII_DECIMAL.fullmatch(text):
            raise OpponentError(f"opponent option {key}={value!r} in {name!r} must be a number (ASCII digits)")
        number = None if text.lower() == "none" else float(text)
        try:  # the range checks of OnnxOpponent, here so that the error names the spec
            if key == "temperature":
                check_number("temperature", 0.0 if number is None else number)
            else:
                check_time("time_budget", number)
        except ValueError as e:
            raise OpponentError(f"opponent option {key}={value!r} in {name!r}: {e}") from None
        options[key] = number
    return OpponentSpec(path, options)


def check_play_options(temperature: Any = None, search: Any = None, time_budget: Any = None) -> None:
    """The range checks of ``OnnxOpponent``'s options (``None``: not given), made before anything is
    loaded or resolved, whatever the name turns out to be."""
    if temperature is not None:
        check_number("temperature", temperature)
    parse_search(search)
    check_time("time_budget", time_budget)


def load_opponent(name_or_path: str | Path, seed: int | None = None, temperature: float | None = None,
                  search: str | dict[str, Any] | int | None = None,
                  time_budget: float | None = None) -> Player:
    """A ``Player`` from an exported model path (options after ``.onnx:``) or a ladder level
    (``easy``..``expert``, ``ladder:LEVEL``, ``ladder:GAME:LEVEL``).  Arguments given here override the
    name's options.

    Every argument is checked here, whatever the name is.  A level passes them to its player: a model
    takes all three; a bot takes ``time_budget`` only (its per-move budget when a move is asked for
    without one) and refuses the others by name (agents/ladder.py), as it cannot use them."""
    name = str(name_or_path).strip()
    seed = check_seed(seed)  # now, not when a level resolves to a model at its first move
    check_play_options(temperature, search, time_budget)
    from agents.ladder import LEVELS  # no torch either

    if name.lower().startswith("ladder:") or name in LEVELS:
        from agents.ladder import ladder_player

        level = name if name.lower().startswith("ladder:") else f"ladder:{name}"
        return ladder_player(level, seed=seed, temperature=temperature, search=search, time_budget=time_budget)
    spec = parse_opponent_spec(name)
    options = dict(spec.options)
    for key, value in (("temperature", temperature), ("search", search), ("time_budget", time_budget)):
        if value is not None:
            options[key] = value
    if not spec.path.lower().endswith(".onnx"):
        raise OpponentError(f"an exported opponent is a .onnx file or a level (easy, medium, hard, expert, "
                            f"ladder:LEVEL), got {name!r}")
    policy = OnnxPolicy(spec.path)
    return OnnxOpponent(policy, seed=seed, temperature=options.get("temperature") or 0.0,
                        search=options.get("search"), time_budget=options.get("time_budget"))
