"""Training checkpoints: written atomically, checked on load.

A checkpoint is one ``torch.save`` file holding a dict:

- ``format`` ("halma_env.checkpoint"), ``format_version``, ``encoding_version``
  (``halma_env.encoding.ENCODING_VERSION``),
- ``variant``, ``num_players``, ``network`` (the NetworkConfig as a dict), ``model`` (state dict),
- for training checkpoints also ``optimizer``, ``rng`` (python, numpy, torch states),
  ``global_step``, ``update``, ``config`` (the whole TrainConfig as a dict) and ``extra``
  (the opponent pool, ratings, ...).  Snapshots in the opponent pool hold only the model part.

``save_checkpoint`` writes to a temporary file in the same directory, flushes it to disk and
moves it over the target with ``os.replace``, so a killed run never leaves a half-written file.
``load_checkpoint`` raises ``CheckpointError`` (a ``ValueError``) that names the file and the
problem: not a checkpoint / corrupt, another format or encoding version, a different variant,
seat count or network shape.
"""

from __future__ import annotations

import dataclasses
import io
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from halma_env.encoding import ENCODING_VERSION
from halma_env.rules import SEAT_COUNTS, VARIANTS

if TYPE_CHECKING:
    from agents.network import HalmaNet

FORMAT = "halma_env.checkpoint"
FORMAT_VERSION = 1
NETWORK_KEYS_ADDED_LATER = {"attention_layers": 0, "reach_features": False}
REQUIRED = ("format", "format_version", "encoding_version", "variant", "num_players", "network", "model")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, corrupt or incompatible."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Atomically write ``payload`` (with the format header added) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "format_version": FORMAT_VERSION, "encoding_version": ENCODING_VERSION}
    data.update(payload)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(f"checkpoint payload lacks {', '.join(missing)}")
    buffer = io.BytesIO()
    torch.save(data, buffer)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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


def load_checkpoint(path: str | Path, *, variant: str | None = None, num_players: int | None = None,
                    network: dict[str, Any] | None = None, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and check a checkpoint; the keyword arguments are what the caller expects of it."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # unpickling garbage raises anything: KeyError, struct.error, RuntimeError, ...
        # torch's first sentence says what failed; the rest of its message is advice about saving
        first = str(exc).splitlines()[0].split(". ")[0].rstrip(".") if str(exc) else ""
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint file "
                              f"({type(exc).__name__}: {first})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a halma_env checkpoint (no format header {FORMAT!r})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"checkpoint {str(path)!r} lacks {', '.join(missing)}")
    # repr() and an exact int test: a hand-edited "1" (or True) must not pass for version 1, nor read like it
    if not _is_int(data["format_version"]) or data["format_version"] != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} has format version {data['format_version']!r}, "
                              f"this code reads version {FORMAT_VERSION!r}")
    if not _is_int(data["encoding_version"]) or data["encoding_version"] != ENCODING_VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} was trained with encoding version "
                              f"{data['encoding_version']!r}, the environment now uses {ENCODING_VERSION!r}")
    _check_game(data, path)
    if variant is not None and data["variant"] != variant:
        raise CheckpointError(f"checkpoint {str(path)!r} is for variant {data['variant']!r}, not {variant!r}")
    if num_players is not None and data["num_players"] != num_players:
        raise CheckpointError(f"checkpoint {str(path)!r} is for {data['num_players']} seats, not {num_players}")
    if not isinstance(data["network"], dict):
        raise CheckpointError(f"checkpoint {str(path)!r} has a network entry of type "
                              f"{type(data['network']).__name__}, not a mapping")
    # keys added to the network config after a checkpoint was written, with the value it was trained with
    data["network"] = {**NETWORK_KEYS_ADDED_LATER, **data["network"]}
    _check_network_types(data["network"], path)
    model = data["model"]
    if not isinstance(model, dict) or not all(isinstance(v, torch.Tensor) for v in model.values()):
        raise CheckpointError(f"checkpoint {str(path)!r} has a model entry of type {type(model).__name__}, "
                              "not a state dict (a mapping of names to tensors)")
    if network is not None:
        check_network(data, network, path)
    return data


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_game(data: dict[str, Any], path: Path) -> None:
    """The header's variant and seat count are ones the engine plays (a hand-edited 9 or "2" would fail
    later as a bare KeyError)."""
    variant, seats = data["variant"], data["num_players"]
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise CheckpointError(f"checkpoint {str(path)!r} has variant {variant!r}, not one of {', '.join(VARIANTS)}")
    if not _is_int(seats) or seats not in SEAT_COUNTS[variant]:
        raise CheckpointError(f"checkpoint {str(path)!r} has num_players {seats!r}; {variant} is played by "
                              f"{', '.join(map(str, SEAT_COUNTS[variant]))} seats")


def _check_network_types(network: dict[str, Any], path: Path) -> None:
    """Each known network key holds a value of its NetworkConfig default's type (bool is not an int here)."""
    from agents.config import NetworkConfig  # no torch, no cycle

    for f in dataclasses.fields(NetworkConfig):
        if f.name not in network:
            continue  # a partial entry is checked against the config (check_network) or when the model is built
        value, kind = network[f.name], type(f.default)
        if type(value) is not kind:
            raise CheckpointError(f"checkpoint {str(path)!r} has network.{f.name} = {value!r} "
                                  f"({type(value).__name__}), expected {kind.__name__}")


def check_network(data: dict[str, Any], network: dict[str, Any], path: str | Path = "checkpoint") -> None:
    """Raise ``CheckpointError`` naming every key where a loaded checkpoint's network differs from ``network``."""
    if dict(data["network"]) != dict(network):
        diff = sorted(k for k in set(network) | set(data["network"]) if network.get(k) != data["network"].get(k))
        details = ", ".join(f"{k}: checkpoint {data['network'].get(k)!r} vs config {network.get(k)!r}" for k in diff)
        raise CheckpointError(f"checkpoint {str(path)!r} has a different network shape ({details})")


def model_from_checkpoint(data: dict[str, Any], path: str | Path = "checkpoint") -> HalmaNet:
    """The HalmaNet stored in a loaded checkpoint (in eval mode)."""
    from types import SimpleNamespace

    from agents.config import NetworkConfig
    from agents.network import build_network

    names = [f.name for f in dataclasses.fields(NetworkConfig)]
    missing = [k for k in names if k not in data["network"]]
    if missing:
        raise CheckpointError(f"checkpoint {str(path)!r} has no network {', '.join(missing)}")
    try:
        NetworkConfig(**{k: data["network"][k] for k in names}).validate()
        net = build_network(data["variant"], data["num_players"], SimpleNamespace(**data["network"]))
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r}: {exc}") from None
    try:
        net.load_state_dict(data["model"])
    except RuntimeError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} weights do not fit its network: "
                              f"{str(exc).splitlines()[0]}") from None
    net.eval()
    return net
