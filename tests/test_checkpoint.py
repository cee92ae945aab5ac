"""Checkpoint files (agents/checkpoint.py): what saving promises (folders made, a shared file flushed to
disk before it replaces the old one, nothing left by a failed write) and the errors that name each kind
of bad file or network entry."""

from __future__ import annotations

import dataclasses
import fractions
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import torch

import agents.checkpoint
from agents.checkpoint import FORMAT, CheckpointError, load_checkpoint, model_from_checkpoint, save_checkpoint
from agents.config import NetworkConfig
from agents.network import build_network
from halma_env.encoding import ENCODING_VERSION

SMALL = NetworkConfig(channels=8, blocks=1, pair_dim=8, value_hidden=8)


def _payload(**changes: Any) -> dict[str, Any]:
    network = {"channels": 4, "attention_layers": 0, "reach_features": False}
    data = {"variant": "star", "num_players": 2, "network": network, "model": {"w": torch.ones(2)}}
    data.update(changes)
    return data


def _network_payload(cfg: NetworkConfig = SMALL) -> dict[str, Any]:
    torch.manual_seed(0)
    net = build_network("star", 2, cfg)
    return {"variant": "star", "num_players": 2, "network": dataclasses.asdict(cfg), "model": net.state_dict()}


def test_save_makes_the_folders_returns_the_path_and_writes_a_shared_file(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "a" / "checkpoints" / "last.pt"
    assert save_checkpoint(str(path), _payload()) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by others, as the docstring says
    assert load_checkpoint(path)["variant"] == "star"


def test_save_refuses_a_payload_without_the_required_entries(tmp_path: Path) -> None:
    path = tmp_path / "a.pt"
    with pytest.raises(ValueError, match="^checkpoint payload lacks network, model$"):
        save_checkpoint(path, {"variant": "star", "num_players": 2})
    assert not path.exists()


def test_save_flushes_the_whole_file_to_disk_before_it_replaces_the_old_one(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "a.pt"
    save_checkpoint(path, _payload(global_step=1))
    synced: list[tuple[int, int]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append((os.fstat(fd).st_size, load_checkpoint(path)["global_step"]))
        real_fsync(fd)

    monkeypatch.setattr(agents.checkpoint.os, "fsync", fsync)
    save_checkpoint(path, _payload(global_step=2))
    # one fsync, of every byte of the new file, while the old one was still in place
    assert synced == [(path.stat().st_size, 1)]
    assert load_checkpoint(path)["global_step"] == 2


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "a.pt"
    save_checkpoint(path, _payload(global_step=1))

    def replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(agents.checkpoint.os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(path, _payload(global_step=2))
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["a.pt"]
    assert load_checkpoint(path)["global_step"] == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: [1, 2], "is not a halma_env checkpoint (no format header 'halma_env.checkpoint')"),
        (lambda d: {k: v for k, v in d.items() if k != "model"}, "lacks model"),
        (lambda d: {**d, "format_version": 2}, "has format version 2, this code reads version 1"),
        (lambda d: {**d, "format_version": 1.0}, "has format version 1.0, this code reads version 1"),
        (lambda d: {**d, "encoding_version": float(ENCODING_VERSION)},
         f"was trained with encoding version {float(ENCODING_VERSION)!r}"),
        (lambda d: {**d, "num_players": 2.0}, "has num_players 2.0; star is played by"),
        (lambda d: {**d, "num_players": True}, "has num_players True; star is played by"),
        (lambda d: {**d, "model": {"w": [1.0, 1.0]}}, "has a model entry of type dict, not a state dict"),
    ],
    ids=["not-a-dict", "no-model", "format-2", "format-float", "encoding-float", "seats-float", "seats-bool",
         "model-not-tensors"],
)
def test_edited_checkpoints_are_named(tmp_path: Path, edit, message: str) -> None:
    path = tmp_path / "edited.pt"
    save_checkpoint(path, _payload())
    torch.save(edit(torch.load(path, weights_only=True)), path)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        load_checkpoint(path)


def test_the_model_of_a_checkpoint_is_its_network_in_eval_mode(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    payload = _network_payload()
    save_checkpoint(path, payload)
    net = model_from_checkpoint(load_checkpoint(path), path)
    assert not net.training
    state = net.state_dict()
    assert state.keys() == payload["model"].keys()
    assert all(torch.equal(state[k], payload["model"][k]) for k in state)


def test_a_network_entry_that_cannot_be_built_is_named(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    save_checkpoint(path, _payload())  # channels only (and the keys added later)
    with pytest.raises(CheckpointError, match=r"net\.pt' has no network blocks, pair_dim, value_hidden, "
                                              r"position_embedding$"):
        model_from_checkpoint(load_checkpoint(path), path)
    payload = _network_payload()
    payload["network"]["blocks"] = -1
    save_checkpoint(path, payload)
    with pytest.raises(CheckpointError, match=r"net\.pt': network\.blocks must be >= 0$"):
        model_from_checkpoint(load_checkpoint(path), path)


def test_weights_of_another_network_are_named(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    payload = _network_payload()
    payload["model"] = _network_payload(dataclasses.replace(SMALL, channels=16))["model"]
    save_checkpoint(path, payload)
    with pytest.raises(CheckpointError, match=r"net\.pt' weights do not fit its network: Error"):
        model_from_checkpoint(load_checkpoint(path), path)


def test_the_format_header_is_written(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path / "a.pt", _payload())
    raw = torch.load(path, weights_only=True)
    assert (raw["format"], raw["format_version"], raw["encoding_version"]) == (FORMAT, 1, ENCODING_VERSION)


def test_a_checkpoint_holding_arbitrary_objects_is_refused_without_running_them(tmp_path: Path) -> None:
    """Loading unpickles only tensors and plain data (``weights_only``): any other object is refused, and
    the error gives torch's first sentence, not its advice about how to load such a file anyway."""
    path = tmp_path / "pickled.pt"
    save_checkpoint(path, _payload(extra=fractions.Fraction(1, 3)))
    with pytest.raises(CheckpointError, match=r"pickled\.pt' is corrupt or not a checkpoint file "
                                              r"\(UnpicklingError: Weights only load failed\)$"):
        load_checkpoint(path)


def test_every_network_key_that_differs_is_named(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path / "a.pt", _payload())
    expected = {"channels": 8, "attention_layers": 0, "reach_features": True}
    with pytest.raises(CheckpointError, match=re.escape(
            "has a different network shape (channels: checkpoint 4 vs config 8, "
            "reach_features: checkpoint False vs config True)")):
        load_checkpoint(path, network=expected)


def test_an_empty_file_is_named_as_corrupt(tmp_path: Path) -> None:
    """A file cut to nothing (a full disk, another tool's killed write): torch's EOFError has no message."""
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"empty\.pt' is corrupt or not a checkpoint file \(EOFError: ?\)$"):
        load_checkpoint(path)
