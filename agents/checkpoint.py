"""Training checkpoints: written atomically, checked on load.

A checkpoint is one ``torch.save`` file holding a dict:

- ``format`` ("halma_env.checkpoint"), ``format_version``, ``encoding_version``
  (``halma_env.encoding.ENCODING_VERSION``),
- ``variant``, ``num_players``, ``network`` (the NetworkConfig as a dict), ``model`` (state dict),
- from a training run also ``global_step``, ``update`` and ``config`` (the whole TrainConfig as a
  dict): the pool's snapshots and the numbered ``update_NNNNNN.pt`` files stop there, and ``last.pt``
  adds ``optimizer``, ``rng`` (python, numpy, torch states; ``rng_ranks`` with several processes) and
  ``extra`` (the opponent pool, ratings, ...), what a resume needs.

``save_checkpoint`` writes to a temporary file in the same directory, flushes it to disk and
moves it over the target with ``os.replace``, so a killed run never leaves a half-written file.
A save killed mid-write (SIGKILL) leaves its temporary file behind; the next save of the same file
removes it.
Before anything is written it checks the payload as the loader will check the file (and loads its
bytes back weights-only), so it never replaces a good file with one the loader refuses.
``load_checkpoint`` raises ``CheckpointError`` (a ``ValueError``) that names the file and the
problem: not a regular file (a FIFO, a device), not a checkpoint / corrupt (an entry that fails the zip's
CRC-32 check: bit rot), another format or encoding version, a different variant,
seat count or network shape, a header that disagrees with the stored training config's game, a stored config
too large or too deeply nested to spell out, an unknown network key, a step count that is not an integer >= 0,
a tensor that is not dense (sparse, meta), weights that are not float32, NaN or infinite weights.
``model_from_checkpoint`` checks the stored weights' shapes and dtypes against the stated network before
it builds it, ``check_training_entries`` what ``halma train --resume`` reads besides, and
``load_optimizer_state`` the optimiser state (hyperparameters and Adam's moments) before it is applied.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import random
import re
import reprlib
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.files import is_empty_path, is_plain_int, quoted_path, shipped_file_hint
from halma_env.encoding import ENCODING_VERSION
from halma_env.files import FileTooLarge, NotARegularFile, read_regular_file
from halma_env.rules import game_problem

if TYPE_CHECKING:
    from agents.network import HalmaNet

FORMAT = "halma_env.checkpoint"
FORMAT_VERSION = 1
NETWORK_KEYS_ADDED_LATER = {"attention_layers": 0, "reach_features": False}
REQUIRED = ("format", "format_version", "encoding_version", "variant", "num_players", "network", "model")
STEP_KEYS = ("global_step", "update")  # optional; counters, so integers from 0 to MAX_STEP
MAX_STEP = 2**63 - 1  # what a torch int64 (and a JSON reader's 64-bit integer) holds
RNG_KEYS = ("python", "numpy", "torch")  # rng_state's (agents/ppo.py), and "cuda" where CUDA was used
EXTRA_KEYS = ("snapshots", "ratings")  # what a training checkpoint's extra holds (Trainer._payload)
# a stored training config, bounded as it is spelt out (counted each time a shared part is reached): a resume
# compares it key by key and prints the changes, an export copies it into its manifest
MAX_CONFIG_VALUES = 10_000  # a training config has about 80
MAX_CONFIG_DEPTH = 32  # levels of nesting; a training config has 4
MAX_CONFIG_CHARS = 100_000  # characters of its strings; a training config has about 600
MAX_CHECKPOINT_BYTES = 1 << 30  # a 32 x 4 training checkpoint is 0.5 MB
# a temporary file of a save untouched this long is a killed save's: a live one is written in one go, then replaced
STALE_TMP_S = 60.0


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, corrupt or incompatible."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Atomically write ``payload`` (with the format header added) to ``path``.

    The payload is checked first, as ``load_checkpoint`` checks a file (the required entries, variant, seat
    count, network entry, a state dict of finite tensors), and its bytes are loaded back weights-only: a
    payload the loader would refuse raises ``CheckpointError`` (a ``ValueError``) naming the entry, and
    ``path`` is not touched.  The format header is this function's to write: a payload may repeat it (a
    loaded checkpoint saved again) but not change it."""
    path = Path(path)
    who = f"cannot save checkpoint {str(path)!r}: the payload"
    header = {"format": FORMAT, "format_version": FORMAT_VERSION, "encoding_version": ENCODING_VERSION}
    clash = [f"{k}={payload[k]!r}" for k, v in header.items()
             if k in payload and (type(payload[k]) is not type(v) or payload[k] != v)]
    if clash:
        raise CheckpointError(f"{who} sets {', '.join(clash)}; the format header is written by save_checkpoint "
                              f"({', '.join(f'{k}={v!r}' for k, v in header.items())})")
    data = {**header, **payload}
    _check_contents(data, who)
    buffer = io.BytesIO()
    torch.save(data, buffer)  # what cannot be pickled at all (a lambda) raises pickle's own error here
    try:
        # the loader unpickles weights-only: numpy scalars or arrays, paths, ... save but do not load.  Loading
        # the bytes back costs about twice a save (13 ms in all for a 497 KB training checkpoint), once per checkpoint
        torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu", weights_only=True)
    except Exception:
        where, value = _refused_part(data, "")
        kind = type(value).__qualname__ if type(value).__module__ == "builtins" else \
            f"{type(value).__module__}.{type(value).__qualname__}"
        entry = f"{who}'s {where}" if where else who
        raise CheckpointError(f"{entry} is a {kind}, which does not save and load weights-only (store Python "
                              "numbers, strings, lists, dicts and tensors)") from None
    from agents.files import special_file_kind

    kind = special_file_kind(path)
    if kind:  # the rename below would replace a device (/dev/null) or pipe, not write to it
        raise CheckpointError(f"checkpoint {str(path)!r} is {kind}, not a regular file: writing it would replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    # the folder as the system resolves it: mkstemp makes its name absolute by cutting "x/.." out of the text, which
    # after a symlinked x is another folder (the rename then failed, and a run lost its first checkpoint)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=os.path.realpath(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; checkpoints are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files that saves of ``path`` killed mid-write (SIGKILL, the OOM killer) left beside it:
    nothing else removes them, and a training checkpoint's is full-size.  Only what the ``mkstemp`` call below names
    (``.NAME.XXXXXXXX.tmp``, eight random characters) in ``path``'s own folder, and only once untouched for
    ``STALE_TMP_S``: another save of ``path`` under way keeps its file."""
    own = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    now = time.time()
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        try:
            if (own.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
                    and now - entry.stat(follow_symlinks=False).st_mtime > STALE_TMP_S):
                os.unlink(entry.path)
        except OSError:  # gone already (another save removed it), or not ours to remove: the save goes on
            pass


def _loads_weights_only(value: Any) -> bool:
    buffer = io.BytesIO()
    try:
        torch.save(value, buffer)
        torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu", weights_only=True)
    except Exception:
        return False
    return True


def _refused_part(value: Any, where: str) -> tuple[str, Any]:
    """The innermost entry of ``value`` that does not save and load weights-only on its own, with its
    dotted name (``value`` itself when none of its parts is refused alone: its own type is)."""
    if isinstance(value, dict):
        for k, v in value.items():
            name = (f"{where}.{k}" if where else k) if isinstance(k, str) else f"{where}[{k!r}]"
            if not _loads_weights_only({k: v}):
                return _refused_part(v, name) if not _loads_weights_only(v) else (f"{name} key", k)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if not _loads_weights_only(v):
                return _refused_part(v, f"{where}[{i}]")
    return where, value


def _shown(value: Any) -> str:
    """``repr(value)`` cut short: a hostile file's nested lists that share their parts (pickle's memo) would
    spell out to megabytes in an error message."""
    return _SHORT.repr(value)


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict = 3, 80, 80, 8, 8


def _read_checkpoint(path: Path) -> bytes:
    """The checkpoint file's bytes, read once (``halma_env.files.read_regular_file``): a FIFO, a device
    (``/dev/zero``) or a socket, also behind a symlink, is named as what it is, and neither waited on nor
    read without bound."""
    try:
        return read_regular_file(path, MAX_CHECKPOINT_BYTES)
    except NotARegularFile as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} is {exc.kind}, not a regular file") from None
    except FileTooLarge:
        raise CheckpointError(f"checkpoint {str(path)!r} holds more than {MAX_CHECKPOINT_BYTES} bytes (a training "
                              "checkpoint of the largest shipped network is under 1 MB)") from None
    except (FileNotFoundError, NotADirectoryError):
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist{shipped_file_hint(path)}") from None
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {str(path)!r}: {exc.strerror or exc}") from None


def _check_archive(path: Path, raw: bytes) -> None:
    """A checkpoint (``raw``, the file's bytes) is torch's zip archive, its entries stored, not compressed: a
    compressed entry (a zip bomb: 390 KB that inflate to 400 MB) is refused before anything is read out of it.
    Then every entry is read back against the CRC-32 checksum the archive stores for it, which ``torch.load`` does
    not check: a flipped bit (bit rot, a damaged copy) would load as other weights without a word.  An archive
    whose entries all carry a zero checksum was saved without them (torch's
    ``torch.utils.serialization.config.save.compute_crc32 = False``; ``save_checkpoint`` always writes them):
    there is nothing to check.  Costs about a millisecond per MB (the checksums of bytes already read)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            entries = archive.infolist()
            packed = [i.filename for i in entries if i.compress_type != zipfile.ZIP_STORED]
            if packed:
                raise CheckpointError(f"checkpoint {str(path)!r} is not a checkpoint file: it has compressed "
                                      f"entries ({_shown(packed)}), which torch.save never writes")
            if any(i.CRC for i in entries):
                for info in entries:
                    _check_entry(archive, info, path)
    except CheckpointError:
        raise
    # (a damaged directory: a name that is not UTF-8 is a UnicodeDecodeError, an unknown zip version a
    # NotImplementedError)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint file (not torch's zip "
                              f"archive: {exc})") from None


def _check_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> None:
    """Read one stored entry of ``archive`` through zipfile, which compares its CRC-32 at the end (and its local
    header with the directory's)."""
    try:
        with archive.open(info) as f:
            while f.read(1 << 20):
                pass
    except Exception as exc:  # BadZipFile (a bad CRC-32 or header), EOFError (cut short), RuntimeError (encrypted)
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt (damaged on disk or in a copy?): its entry "
                              f"{_shown(info.filename)} does not read back as stored ({type(exc).__name__}: "
                              f"{_first_line(exc)[:200]})") from None


_WARNINGS_LOCK = threading.RLock()  # (re-entrant: a block may be nested in one thread)


@contextlib.contextmanager
def warnings_silenced() -> Iterator[None]:
    """Every warning ignored for the block, one thread at a time.  ``warnings.catch_warnings`` saves the
    process's filter list and puts it back, so two blocks overlapping in threads (a game site loading
    checkpoint players) could put back each other's "ignore everything" and leave it on for good.  The
    filters are the process's: while a block runs, other threads' warnings are ignored too."""
    with _WARNINGS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def load_checkpoint(path: str | Path, *, variant: str | None = None, num_players: int | None = None,
                    network: dict[str, Any] | None = None, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and check a checkpoint; the keyword arguments are what the caller expects of it."""
    if is_empty_path(path):
        raise CheckpointError("a checkpoint path is empty")
    path = Path(path)
    try:
        is_dir = path.is_dir()
    except OSError as exc:  # a name too long for the file system (Path.is_dir raises it on Python 3.11)
        raise CheckpointError(f"checkpoint {quoted_path(path)} cannot be looked up: {exc.strerror or exc}") \
            from None
    if is_dir:
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory, not a checkpoint file")
    raw = _read_checkpoint(path)
    _check_archive(path, raw)
    if torch.device(map_location).type == "cpu":  # torch.load cannot map storages to "cpu:0" (a resume with
        map_location = "cpu"  # --device cpu:0 called the checkpoint corrupt); every CPU index is the CPU
    try:
        with warnings_silenced():  # torch's own (a sparse CSR tensor's "beta state"): the checks below speak
            data = torch.load(io.BytesIO(raw), map_location=map_location, weights_only=True)
    except Exception as exc:  # unpickling garbage raises anything: KeyError, struct.error, RuntimeError, ...
        # torch's first sentence says what failed; the rest of its message is advice about saving
        first = str(exc).splitlines()[0].split(". ")[0].rstrip(".") if str(exc) else ""
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint file "
                              f"({type(exc).__name__}: {first})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a halma_env checkpoint (no format header {FORMAT!r})")
    _check_contents(data, f"checkpoint {str(path)!r}")
    if variant is not None and data["variant"] != variant:
        raise CheckpointError(f"checkpoint {str(path)!r} is for variant {_shown(data['variant'])}, not {variant!r}")
    if num_players is not None and data["num_players"] != num_players:
        raise CheckpointError(f"checkpoint {str(path)!r} is for {data['num_players']} seats, not {num_players}")
    # keys added to the network config after a checkpoint was written, with the value it was trained with
    data["network"] = {**NETWORK_KEYS_ADDED_LATER, **data["network"]}
    if network is not None:
        check_network(data, network, path)
    return data


def _check_contents(data: dict[str, Any], who: str) -> None:
    """What the loader needs of a checkpoint's dict, checked on load and before a save; the errors begin
    with ``who`` (``checkpoint 'PATH'``, or the payload of a save)."""
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"{who} lacks {', '.join(missing)}")
    # repr() and an exact int test: a hand-edited "1" (or True) must not pass for version 1, nor read like it
    if not is_plain_int(data["format_version"]) or data["format_version"] != FORMAT_VERSION:
        raise CheckpointError(f"{who} has format version {_shown(data['format_version'])}, "
                              f"this code reads version {FORMAT_VERSION!r}")
    if not is_plain_int(data["encoding_version"]) or data["encoding_version"] != ENCODING_VERSION:
        raise CheckpointError(f"{who} was trained with encoding version "
                              f"{_shown(data['encoding_version'])}, the environment now uses {ENCODING_VERSION!r}")
    _check_game(data, who)
    _check_config_game(data, who)
    _check_steps(data, who)
    if not isinstance(data["network"], dict):
        raise CheckpointError(f"{who} has a network entry of type "
                              f"{type(data['network']).__name__}, not a mapping")
    _check_network_types({**NETWORK_KEYS_ADDED_LATER, **data["network"]}, who)
    model = data["model"]
    if not isinstance(model, dict) or not all(isinstance(v, torch.Tensor) for v in model.values()):
        raise CheckpointError(f"{who} has a model entry of type {type(model).__name__}, "
                              "not a state dict (a mapping of names to tensors)")
    _check_dense(data, who)  # the weights, Adam's state, the random states: every tensor anywhere in the file
    _check_float32(model, who)
    _check_finite(model, who)


def _not_dense(tensor: torch.Tensor) -> str:
    """What ``tensor`` is when it is not a dense tensor holding its values ('' when it is one)."""
    if tensor.layout != torch.strided:
        return f"a {str(tensor.layout).removeprefix('torch.')} tensor"
    if tensor.is_meta:
        return "a meta tensor (a shape without values)"
    if tensor.is_quantized or tensor.is_nested:
        return f"a {'quantized' if tensor.is_quantized else 'nested'} tensor"
    # a stride of 0 repeats a few stored values: a 37 KB file's view of 2e9 values took 13 GB to check
    size, stored = tensor.numel() * tensor.element_size(), tensor.untyped_storage().nbytes()
    if size > stored:
        return f"a view of {tensor.numel()} values over {stored} bytes of storage (values repeated by a stride of 0)"
    return ""


def _check_dense(data: dict[Any, Any], who: str) -> None:
    """Every tensor in ``data`` (its weights, the optimiser's moments, the random states, anywhere) dense, with
    its values: a sparse (COO, CSR) or meta tensor loads, then fails the checks and ``load_state_dict`` with
    torch's own error (NotImplementedError, RuntimeError).  Walked without recursion, each mapping or list
    once; ``CheckpointError`` naming the first such tensor by its dotted name."""
    seen: set[int] = set()
    todo: list[tuple[Any, Any]] = [(data, None)]  # (value, (key, parent's link)): the name is spelt out on error
    while todo:
        value, link = todo.pop()
        if isinstance(value, torch.Tensor):
            kind = _not_dense(value)
            if kind:
                raise CheckpointError(f"{who} has {_dotted(link)}, {kind}: a checkpoint holds dense tensors "
                                      "(torch.strided) only")
        elif isinstance(value, (dict, list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            todo.extend(reversed([(v, (k, link, isinstance(value, dict))) for k, v in items]))


def _dotted(link: Any) -> str:
    """``model.position``, ``optimizer.state[0].exp_avg``: the name ``_check_dense`` found a tensor under."""
    parts: list[str] = []
    while link is not None:
        key, link, mapped = link
        parts.append(f".{key}" if mapped and isinstance(key, str) else f"[{_shown(key)}]")
    name = "".join(reversed(parts)).removeprefix(".")
    return name if len(name) <= 200 else name[:197] + "..."


def _check_float32(model: dict[str, Any], who: str) -> None:
    """Floating-point weights are float32, as every writer stores them (the trainer, scripts/distill_network.py,
    scripts/dagger_search.py and the benchmark's default nets save a HalmaNet's own state dict): float64 or
    float16 weights would be converted by ``load_state_dict`` without a word."""
    bad = [k for k, t in model.items() if (t.is_floating_point() or t.is_complex()) and t.dtype != torch.float32]
    if bad:
        dtype = str(model[bad[0]].dtype).removeprefix("torch.")
        more = f" ({len(bad) - 1} more tensors are not float32)" if len(bad) > 1 else ""
        raise CheckpointError(f"{who} has weights of dtype {dtype}, not float32 (a checkpoint's weights are float32): "
                              f"{bad[0]} is {dtype}{more}")


def _check_finite(model: dict[str, Any], who: str) -> None:
    """NaN or inf weights (a diverged run, a bad edit) would load and play without a word: greedy play
    always picks the first legal move, sampling fails inside numpy, an export writes NaN into its manifest."""
    bad = [k for k, t in model.items()
           if (t.is_floating_point() or t.is_complex()) and not bool(torch.isfinite(t).all())]
    if bad:
        first = model[bad[0]]
        what = " and ".join(w for w, f in (("NaN", torch.isnan), ("inf", torch.isinf)) if bool(f(first).any()))
        more = f" ({len(bad) - 1} more tensors hold NaN or inf)" if len(bad) > 1 else ""
        raise CheckpointError(f"{who} has non-finite weights (a diverged run?): {bad[0]} holds {what}{more}")


def _check_game(data: dict[str, Any], who: str) -> None:
    """The header's variant and seat count are ones the engine plays (a hand-edited 9 or "2" would fail
    later as a bare KeyError)."""
    problem = game_problem(data["variant"], data["num_players"], _shown)
    if problem:
        raise CheckpointError(f"{who} has no game the engine plays: {problem}")


def _check_config_game(data: dict[str, Any], who: str) -> None:
    """The training config stored with the weights names the game they learned: a header edited to another
    game of the same board size (star-2 weights relabelled diamond-2 or star-3: the same tensor shapes) would
    load and play that game without a word."""
    if "config" not in data:
        return
    config = data["config"]
    if not isinstance(config, dict):
        raise CheckpointError(f"{who} has a config entry of type {type(config).__name__}, not a mapping")
    _check_config_size(config, who)
    if "game" not in config:  # a config without a game section (hand-made checkpoints) says nothing of it
        return
    game = config["game"]
    if not isinstance(game, dict):
        raise CheckpointError(f"{who} has a config.game entry of type {type(game).__name__}, not a mapping")
    for key in ("variant", "num_players"):
        if key in game and (type(game[key]) is not type(data[key]) or game[key] != data[key]):
            raise CheckpointError(f"{who} has {key} {data[key]!r}, but its training config has game.{key} "
                                  f"{_shown(game[key])} (a checkpoint relabelled for another game?)")


def _check_config_size(config: Any, who: str) -> None:
    """A checkpoint's stored training config of bounded size, as what reads it spells it out (a resume's
    ``config_changes`` compares and prints it, an export copies it into its manifest, an error shows it): at
    most ``MAX_CONFIG_VALUES`` values and ``MAX_CONFIG_CHARS`` characters of text, counted without spelling it
    out (lists that share their parts, a pickle's memo, count each time they are reached: 40 levels of them in a
    small file never finished a resume), and nested at most ``MAX_CONFIG_DEPTH`` levels (50,000 levels was a
    RecursionError).  Walked without recursion; ``CheckpointError`` beginning with ``who``."""
    count, chars, todo = 0, 0, [(config, 1)]
    while todo:
        item, depth = todo.pop()
        count += 1
        if count > MAX_CONFIG_VALUES:
            raise CheckpointError(f"{who}: its config holds more than {MAX_CONFIG_VALUES} values; a training config "
                                  "has about 80 (not a checkpoint halma train wrote?)")
        if depth > MAX_CONFIG_DEPTH:
            raise CheckpointError(f"{who}: its config nests more than {MAX_CONFIG_DEPTH} levels deep; a training "
                                  "config has 4 (not a checkpoint halma train wrote?)")
        if isinstance(item, dict):
            # keys too (a tuple key nests like a value); a plain string key is counted with its value
            todo.extend((k, depth + 1) for k in item if not isinstance(k, str))
            chars += sum(len(k) for k in item if isinstance(k, str))
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend((v, depth + 1) for v in item)
        elif isinstance(item, (str, bytes, bytearray)):
            chars += len(item)
        if chars > MAX_CONFIG_CHARS:
            raise CheckpointError(f"{who}: its config holds more than {MAX_CONFIG_CHARS} characters of text; a "
                                  "training config has about 600 (not a checkpoint halma train wrote?)")


def _check_steps(data: dict[str, Any], who: str) -> None:
    """global_step and update, where present, are counts: a resume continues from them and an export copies
    them into its JSON manifest ("3", 2.9, a tensor or -5 would be converted, crash or be trained on)."""
    for key in STEP_KEYS:
        if key in data and not (is_plain_int(data[key]) and 0 <= data[key] <= MAX_STEP):
            raise CheckpointError(f"{who} has {key} = {_shown(data[key])} ({type(data[key]).__name__}), "
                                  f"expected an integer from 0 to {MAX_STEP}")


def _check_network_types(network: dict[str, Any], who: str) -> None:
    """Each network key is a NetworkConfig field (a misspelt or foreign one would be dropped without a word)
    holding a value of its default's type (bool is not an int here)."""
    from agents.config import NetworkConfig  # no torch, no cycle

    names = [f.name for f in dataclasses.fields(NetworkConfig)]
    unknown = [k for k in network if k not in names]
    if unknown:
        raise CheckpointError(f"{who} has unknown network key(s) {_some([_shown(k) for k in unknown])}; "
                              f"a network has {', '.join(names)}")
    for f in dataclasses.fields(NetworkConfig):
        if f.name not in network:
            continue  # a partial entry is checked against the config (check_network) or when the model is built
        value, kind = network[f.name], type(f.default)
        if type(value) is not kind:
            raise CheckpointError(f"{who} has network.{f.name} = {_shown(value)} "
                                  f"({type(value).__name__}), expected {kind.__name__}")


def check_network(data: dict[str, Any], network: dict[str, Any], path: str | Path = "checkpoint") -> None:
    """Raise ``CheckpointError`` naming every key where a loaded checkpoint's network differs from ``network``."""
    if dict(data["network"]) != dict(network):
        diff = sorted(k for k in set(network) | set(data["network"]) if network.get(k) != data["network"].get(k))
        details = ", ".join(f"{k}: checkpoint {_shown(data['network'].get(k))} vs config {_shown(network.get(k))}"
                            for k in diff)
        raise CheckpointError(f"checkpoint {str(path)!r} has a different network shape ({details})")


def model_from_checkpoint(data: dict[str, Any], path: str | Path = "checkpoint") -> HalmaNet:
    """The HalmaNet stored in a loaded checkpoint (in eval mode)."""
    from types import SimpleNamespace

    from agents.config import NetworkConfig
    from agents.network import build_network

    who = f"checkpoint {str(path)!r}"
    names = [f.name for f in dataclasses.fields(NetworkConfig)]
    missing = [k for k in names if k not in data["network"]]
    if missing:
        raise CheckpointError(f"{who} has no network {', '.join(missing)}")
    _check_network_types(data["network"], who)  # also for a dict that never went through the loader
    try:
        NetworkConfig(**{k: data["network"][k] for k in names}).validate()
    except ValueError as exc:
        raise CheckpointError(f"{who}: {exc}") from None
    _check_dense({"model": data["model"]}, who)  # also for a dict that never went through the loader
    _check_float32(data["model"], who)
    _check_finite(data["model"], who)
    check_weights(data, path)  # before the build: the stated sizes are the file's word only
    net = build_network(data["variant"], data["num_players"], SimpleNamespace(**data["network"]))
    try:
        net.load_state_dict(data["model"])
    except RuntimeError as exc:  # shapes and names fit (check_weights): some other reason, in torch's words
        lines = [line.strip().rstrip(".").strip() for line in str(exc).splitlines()]
        raise CheckpointError(f"{who} weights do not fit its network: "
                              f"{_some([line for line in lines[1:] if line] or lines[:1] or [type(exc).__name__])}"
                              ) from None
    net.eval()
    return net


def check_weights(data: dict[str, Any], path: str | Path = "checkpoint") -> None:
    """The stored weights (``model``) against the network the checkpoint states (``network``, a checked and
    complete entry), without allocating that network: a hand-edited ``channels: 1000000`` would make a load try
    to allocate 28 TB, and ``blocks: 3000`` would take minutes.  Each size and layer count must be one the weights have,
    then the network is built on torch's ``meta`` device (shapes only) and its tensors compared with the
    stored ones.  ``CheckpointError`` naming the network key or the tensors that differ."""
    from types import SimpleNamespace

    from agents.network import build_network

    who = f"checkpoint {str(path)!r}"
    network, model = data["network"], data["model"]
    # every size is a dimension of some weight (embed, the heads): a larger one cannot fit, however large
    largest = max((max(t.shape, default=1) for t in model.values()), default=0)
    for key in ("channels", "pair_dim", "value_hidden"):
        if network[key] > largest:
            raise CheckpointError(f"{who} has network.{key} = {network[key]}, but no weight has a dimension that "
                                  f"large (the largest is {largest})")
    # one set of tensors per layer (blocks.N.*, attention.N.*): the meta build's time grows with the count
    for key, prefix in (("blocks", "blocks."), ("attention_layers", "attention.")):
        held = len({k.split(".")[1] for k in model if isinstance(k, str) and k.startswith(prefix)})
        if network[key] != held:
            raise CheckpointError(f"{who} has network.{key} = {network[key]}, but its weights hold {held} "
                                  f"({prefix}N.*)")
    try:
        with torch.device("meta"):  # shapes only: nothing allocated
            shell = build_network(data["variant"], data["num_players"], SimpleNamespace(**network))
    except ValueError as exc:  # a setting the game does not allow (reach_features with 3 seats): named with the file
        raise CheckpointError(f"{who}: {exc}") from None
    misfit = _misfit(shell.state_dict(), model)
    if misfit:
        raise CheckpointError(f"{who} weights do not fit its network: {misfit}")


def _misfit(own: dict[str, torch.Tensor], state: dict[Any, Any]) -> str:
    """Why ``state`` does not load into a network of state dict ``own`` ("" when it does): the missing and
    unexpected tensors and those of another shape or dtype (``load_state_dict`` converts the dtype without a
    word), each list cut after a few names with a count of the rest (torch's message lists them all, one per
    line)."""
    shapes = [f"{k} {tuple(state[k].shape)} vs {tuple(own[k].shape)}"
              for k in own if k in state and state[k].shape != own[k].shape]
    dtypes = [f"{k} {str(state[k].dtype).removeprefix('torch.')} vs {str(own[k].dtype).removeprefix('torch.')}"
              for k in own if k in state and state[k].dtype != own[k].dtype]
    missing = [k for k in own if k not in state]
    unexpected = [str(k) for k in state if k not in own]
    parts = [f"{len(shapes)} of another shape (checkpoint vs network): {_some(shapes)}" if shapes else "",
             f"{len(dtypes)} of another dtype (checkpoint vs network): {_some(dtypes)}" if dtypes else "",
             f"{len(missing)} missing: {_some(missing)}" if missing else "",
             f"{len(unexpected)} unexpected: {_some(unexpected)}" if unexpected else ""]
    return "; ".join(p for p in parts if p)


def _some(items: list[str], shown: int = 3) -> str:
    """The first ``shown`` of ``items`` and how many more there are (never cut silently)."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def check_training_entries(data: dict[str, Any], path: str | Path) -> None:
    """What ``halma train --resume`` reads of a training checkpoint besides the weights, checked before any
    of it is applied (a hand-edited ``rng`` or ``extra`` would fail halfway with a TypeError, after the random
    streams are partly set): the optimiser state a mapping, each random state one its generator takes
    (tried on a scratch generator), ``extra`` the opponent pool's snapshot paths and ratings.  The step
    counts are checked by the loader.  ``CheckpointError`` naming the file and the entry."""
    who = f"checkpoint {str(path)!r}"
    if not isinstance(data["optimizer"], dict):
        raise CheckpointError(f"{who} has an optimizer entry of type {type(data['optimizer']).__name__}, "
                              "not an optimiser state dict")
    _check_rng(data["rng"], "rng", who)
    if "rng_ranks" in data:  # one state per process of a parallel run (agents/ppo.py, Trainer.save)
        ranks = data["rng_ranks"]
        if not isinstance(ranks, list) or not ranks:
            raise CheckpointError(f"{who} has rng_ranks = {_shown(ranks)}, not a list of random states")
        for i, state in enumerate(ranks):
            _check_rng(state, f"rng_ranks[{i}]", who)
    extra = data["extra"]
    if not isinstance(extra, dict):
        raise CheckpointError(f"{who} has an extra entry of type {type(extra).__name__}, not a mapping")
    unknown = [_shown(k) for k in extra if k not in EXTRA_KEYS]
    if unknown:
        raise CheckpointError(f"{who} has unknown extra key(s) {_some(unknown)}; a training checkpoint's extra "
                              f"has {', '.join(EXTRA_KEYS)}")
    snapshots = extra.get("snapshots", [])
    if not isinstance(snapshots, list) or not all(isinstance(s, str) for s in snapshots):
        raise CheckpointError(f"{who} has extra.snapshots = {_shown(snapshots)}, not a list of snapshot paths")
    ratings = extra.get("ratings", {})
    if not isinstance(ratings, dict):
        raise CheckpointError(f"{who} has extra.ratings = {_shown(ratings)}, not a mapping of names to ratings")
    for name, rating in ratings.items():
        # Trainer.run_evaluation passes each as keyword arguments to the rating model
        if not (isinstance(name, str) and isinstance(rating, dict) and set(rating) == {"mu", "sigma"}
                and all(_is_finite_number(v) for v in rating.values())):
            raise CheckpointError(f"{who} has extra.ratings[{_shown(name)}] = {_shown(rating)}, not a rating "
                                  "{'mu': number, 'sigma': number}")


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_rng(state: Any, name: str, who: str) -> None:
    """One process's random states (``rng_state`` in agents/ppo.py), each set on a scratch generator of its
    kind: what that takes, ``set_rng_state`` takes (it converts the Python state's lists back to tuples)."""
    if not isinstance(state, dict):
        raise CheckpointError(f"{who} has {name} = {_shown(state)}, not a mapping of random states")
    missing = [k for k in RNG_KEYS if k not in state]
    unknown = [_shown(k) for k in state if k not in (*RNG_KEYS, "cuda")]
    if missing or unknown:
        what = f"without {', '.join(missing)}" if missing else f"with unknown key(s) {_some(unknown)}"
        raise CheckpointError(f"{who} has {name} {what}; it holds the {', '.join(RNG_KEYS)} random states "
                              "(and cuda where CUDA was used)")

    def python(s: Any) -> None:
        random.Random().setstate(tuple(x if not isinstance(x, list) else tuple(x) for x in s))

    def numpy(s: Any) -> None:
        np.random.default_rng().bit_generator.state = s  # the trainer's generator is a default_rng

    def cuda(s: Any) -> None:
        if not isinstance(s, (list, tuple)) or not all(isinstance(t, torch.Tensor) and t.dtype == torch.uint8
                                                       for t in s):
            raise TypeError("expected a list of torch.ByteTensor, one per GPU")

    setters = {"python": python, "numpy": numpy, "torch": lambda s: torch.Generator().set_state(s), "cuda": cuda}
    for key in state:
        try:
            setters[key](state[key])
        except (TypeError, ValueError, OverflowError, KeyError, IndexError, RuntimeError) as exc:
            raise CheckpointError(f"{who} has {name}.{key} = {_shown(state[key])}, not a {key} random state "
                                  f"({type(exc).__name__}: {_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Adam's hyperparameters (each parameter group's): the numbers its step reads, which its constructor checks but
# load_state_dict takes as they are, and its flags; those that change what a step does (maximize ascends the loss,
# amsgrad needs a moment the state may lack, capturable moves the step counts to the parameters' device) must be
# this run's optimiser's, the others (which implementation runs) a bool or None
ADAM_NUMBERS = ("lr", "betas", "eps", "weight_decay")
ADAM_FLAGS = {"amsgrad": False, "maximize": False, "capturable": False, "decoupled_weight_decay": False,
              "differentiable": False, "foreach": True, "fused": True}  # name: None allowed
ADAM_KEPT_FLAGS = ("amsgrad", "maximize", "capturable", "decoupled_weight_decay")
ADAM_MOMENTS = ("exp_avg", "exp_avg_sq")  # and max_exp_avg_sq with amsgrad


def check_optimizer_state(optimizer: torch.optim.Adam, state: Any, path: str | Path) -> None:
    """What ``optimizer.load_state_dict(state)`` would take without a word and fail on (or quietly change the
    training by) later: torch checks the parameter groups' sizes only.  Each group's params are distinct ids;
    Adam's hyperparameters are numbers in the ranges its constructor takes (``lr`` "1e-3", NaN, a tensor or
    three ``betas`` would be trained on or fail at the first step) and its flags this run's; each parameter's
    state (Adam's step and moments) tensors of the parameter's shape and dtype (a float64 or int moment would
    be converted, a scalar one broadcast until the first step fails), finite, the second moments >= 0 (a
    negative one makes every weight NaN at the first step).  Nothing is applied: ``CheckpointError`` naming the file and
    the field."""
    who = f"checkpoint {str(path)!r}"
    if not isinstance(state, dict):
        raise CheckpointError(f"{who} has an optimizer entry of type {type(state).__name__}, "
                              "not an optimiser state dict")
    missing = [k for k in ("state", "param_groups") if k not in state]
    if missing:
        raise CheckpointError(f"{who} has an optimizer entry without {', '.join(missing)} "
                              "(an optimiser state dict has state and param_groups)")
    groups, saved = optimizer.param_groups, state["param_groups"]
    if not isinstance(saved, list) or not all(isinstance(g, dict) for g in saved):
        raise CheckpointError(f"{who} has optimizer.param_groups = {_shown(saved)}, not a list of parameter groups")
    if len(saved) != len(groups):
        raise CheckpointError(f"{who} has {len(saved)} optimizer parameter group(s); this run's optimiser has "
                              f"{len(groups)}")
    ids: list[Any] = []
    for g, (group, saved_group) in enumerate(zip(groups, saved)):
        where = f"optimizer.param_groups[{g}]"
        params = saved_group.get("params")
        if not isinstance(params, list) or not all(is_plain_int(i) for i in params):
            raise CheckpointError(f"{who} has {where}.params = {_shown(params)}, not a list of parameter ids")
        if len(params) != len(group["params"]):
            raise CheckpointError(f"{who} has {where} of {len(params)} parameters; this run's optimiser's has "
                                  f"{len(group['params'])}")
        ids.extend(params)
        _check_adam_group(group, saved_group, f"{who} has {where}")
    if len(set(ids)) != len(ids):
        raise CheckpointError(f"{who} has optimizer.param_groups that list a parameter id twice "
                              f"({_some(sorted({str(i) for i in ids if ids.count(i) > 1}))})")
    per_param = state["state"]
    if not isinstance(per_param, dict):
        raise CheckpointError(f"{who} has optimizer.state = {_shown(per_param)}, not a mapping of parameter ids "
                              "to their state")
    unknown = [_shown(k) for k in per_param if not (is_plain_int(k) and k in ids)]
    if unknown:
        raise CheckpointError(f"{who} has optimizer.state for parameter id(s) {_some(unknown)}, which no "
                              "parameter group lists")
    params = [p for group in groups for p in group["params"]]
    amsgrad = [saved_group.get("amsgrad") is True for saved_group in saved for _ in saved_group["params"]]
    for i, (param, saved_id) in enumerate(zip(params, ids)):
        entry = per_param.get(saved_id, {})
        if not isinstance(entry, dict):
            raise CheckpointError(f"{who} has an optimizer state whose entry for parameter {i} is "
                                  f"{_shown(entry)}, not a mapping")
        _check_adam_state(entry, param, i, amsgrad[i], who)


def _check_adam_group(group: dict[str, Any], saved: dict[str, Any], who: str) -> None:
    """One saved Adam parameter group: its numbers, betas and flags (``who`` ends in the group's name)."""
    missing = [k for k in ADAM_NUMBERS if k not in saved]
    if missing:
        raise CheckpointError(f"{who} without {', '.join(missing)} (Adam's step reads "
                              f"{', '.join(ADAM_NUMBERS)})")
    for key in ("lr", "eps", "weight_decay"):
        value = saved[key]
        if not (_is_finite_number(value) and value >= 0):
            raise CheckpointError(f"{who}.{key} = {_shown(value)} ({type(value).__name__}), "
                                  "expected a finite number >= 0")
    betas = saved["betas"]
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2
            and all(_is_finite_number(b) and 0 <= b < 1 for b in betas)):
        raise CheckpointError(f"{who}.betas = {_shown(betas)} ({type(betas).__name__}), expected two numbers "
                              "from 0 to below 1")
    for key, none_allowed in ADAM_FLAGS.items():
        if key not in saved:  # written by an older torch: load_state_dict sets torch's default
            continue
        value = saved[key]
        if not (type(value) is bool or (none_allowed and value is None)):
            raise CheckpointError(f"{who}.{key} = {_shown(value)} ({type(value).__name__}), expected "
                                  f"{'True, False or None' if none_allowed else 'True or False'}")
        if key in ADAM_KEPT_FLAGS and key in group and value != group[key]:
            raise CheckpointError(f"{who}.{key} = {value!r}, but this run's optimiser has {key} = {group[key]!r} "
                                  "(a flag that changes what a step does)")


def _check_adam_state(entry: dict[Any, Any], param: torch.Tensor, i: int, amsgrad: bool, who: str) -> None:
    """One parameter's Adam state: empty (no step taken yet), or its step count and moments."""
    if not entry:
        return
    moments = (*ADAM_MOMENTS, "max_exp_avg_sq") if amsgrad else ADAM_MOMENTS
    missing = [k for k in ("step", *moments) if k not in entry]
    if missing:
        raise CheckpointError(f"{who} has an optimizer state without {', '.join(missing)} for parameter {i} "
                              f"(Adam keeps step, {', '.join(moments)})")
    step = entry["step"]
    if not (isinstance(step, torch.Tensor) and not _not_dense(step) and step.dim() == 0 and step.is_floating_point()
            and math.isfinite(float(step)) and float(step) >= 0
            and float(step) == int(float(step))):
        raise CheckpointError(f"{who} has an optimizer state whose step of parameter {i} is {_shown(step)}, "
                              "not a step count (a scalar float tensor holding a whole number >= 0)")
    for key in moments:
        value = entry[key]
        if not isinstance(value, torch.Tensor) or value.shape != param.shape or _not_dense(value):
            what = f"{tuple(value.shape)}" if isinstance(value, torch.Tensor) else f"a {type(value).__name__}"
            if isinstance(value, torch.Tensor) and _not_dense(value):
                what = _not_dense(value)
            raise CheckpointError(f"{who} has an optimizer state whose {key} of parameter {i} is {what}, "
                                  f"not a tensor of the parameter's shape {tuple(param.shape)}")
        if value.dtype != param.dtype:
            raise CheckpointError(f"{who} has an optimizer state whose {key} of parameter {i} is "
                                  f"{str(value.dtype).removeprefix('torch.')}, not the parameter's "
                                  f"{str(param.dtype).removeprefix('torch.')}")
        if not bool(torch.isfinite(value).all()):
            raise CheckpointError(f"{who} has an optimizer state whose {key} of parameter {i} holds NaN or inf")
        if key != "exp_avg" and bool((value < 0).any()):
            raise CheckpointError(f"{who} has an optimizer state whose {key} of parameter {i} holds negative "
                                  "values (a mean of squares is >= 0: its square root would make the weights NaN)")


def load_optimizer_state(optimizer: torch.optim.Adam, state: dict[str, Any], path: str | Path) -> None:
    """Load a checkpoint's optimiser state into ``optimizer`` once ``check_optimizer_state`` has passed it, so a
    refused state leaves ``optimizer`` as it was; ``CheckpointError`` naming the file and the field."""
    check_optimizer_state(optimizer, state, path)
    try:
        optimizer.load_state_dict(state)
    except (TypeError, ValueError, KeyError, IndexError, RuntimeError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has an optimizer state this run's optimiser does not take "
                              f"({type(exc).__name__}: {_first_line(exc)})") from None
