"""Checkpoint files (agents/checkpoint.py): what saving promises (folders made, a shared file flushed to
disk before it replaces the old one, nothing left by a failed write) and the errors that name each kind
of bad file or network entry."""

from __future__ import annotations

import collections
import dataclasses
import enum
import fractions
import os
import pathlib
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import agents.checkpoint
from agents.checkpoint import FORMAT, CheckpointError, load_checkpoint, model_from_checkpoint, save_checkpoint
from agents.config import NetworkConfig
from agents.network import build_network
from halma_env.encoding import ENCODING_VERSION

SMALL = NetworkConfig(channels=8, blocks=1, pair_dim=8, value_hidden=8)


class Seats(enum.IntEnum):  # an int subclass: pickled by reference to this module, which a weights-only load refuses
    TWO = 2


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
    path = tmp_path / "new" / "a.pt"
    with pytest.raises(CheckpointError, match=r"^cannot save checkpoint '.*a\.pt': the payload lacks network, model$"):
        save_checkpoint(path, {"variant": "star", "num_players": 2})
    assert not path.parent.exists()  # refused before any folder is made


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


def test_a_save_removes_what_a_killed_save_of_the_same_file_left(tmp_path: Path) -> None:
    """SIGKILL during a save leaves its hidden full-size temporary file, which nothing removed: the next save of
    that file removes it once it is stale; another file's, a live save's (recent) and other names stay."""
    path = tmp_path / "checkpoints" / "last.pt"
    killed = ("import os, signal, sys, torch; import agents.checkpoint as c; "
              "c.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL); "
              "c.save_checkpoint(sys.argv[1], {'variant': 'star', 'num_players': 2, 'network': {'channels': 4}, "
              "'model': {'w': torch.ones(2)}})")
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", killed, str(path)], cwd=root, timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get(
                              "PYTHONPATH")]))))
    assert done.returncode == -signal.SIGKILL
    [left] = [p.name for p in path.parent.iterdir()]
    assert re.fullmatch(r"\.last\.pt\.[a-z0-9_]{8}\.tmp", left) and not path.exists()
    others = [".update_000001.pt.abcd1234.tmp", ".last.pt.abcd1234.tmp.keep", "last.pt.abcd1234.tmp",
              ".last.pt.abc.tmp"]
    for name in others:
        (path.parent / name).write_text("not ours")
    (tmp_path / left).write_text("another folder's")
    old = time.time() - 2 * agents.checkpoint.STALE_TMP_S
    for p in [*path.parent.iterdir(), tmp_path / left]:
        os.utime(p, (old, old))
    (path.parent / ".last.pt.live0000.tmp").write_text("a save under way")  # just written: kept
    save_checkpoint(path, _payload())
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([*others, ".last.pt.live0000.tmp", "last.pt"])
    assert (tmp_path / left).exists()


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
    with pytest.raises(CheckpointError, match=r"net\.pt': network\.blocks must be >= 0, got -1$"):
        model_from_checkpoint(load_checkpoint(path), path)


def test_weights_of_another_network_are_named(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    payload = _network_payload()
    payload["model"] = _network_payload(dataclasses.replace(SMALL, channels=16))["model"]
    save_checkpoint(path, payload)
    # the reason, not torch's heading ("Error(s) in loading state_dict for HalmaNet:"); long lists say how
    # many more there are
    with pytest.raises(CheckpointError, match=re.escape(
            "net.pt' weights do not fit its network: 11 of another shape (checkpoint vs network): "
            "position (121, 16) vs (121, 8), embed.weight (16, 12) vs (8, 12), embed.bias (16,) vs (8,) "
            "and 8 more") + "$"):
        model_from_checkpoint(load_checkpoint(path), path)
    payload = _network_payload()
    payload["model"].pop("position")
    payload["model"]["extra.weight"] = torch.zeros(1)
    save_checkpoint(path, payload)
    with pytest.raises(CheckpointError, match=r"net\.pt' weights do not fit its network: 1 missing: position; "
                                              r"1 unexpected: extra\.weight$"):
        model_from_checkpoint(load_checkpoint(path), path)


def test_the_format_header_is_written(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path / "a.pt", _payload())
    raw = torch.load(path, weights_only=True)
    assert (raw["format"], raw["format_version"], raw["encoding_version"]) == (FORMAT, 1, ENCODING_VERSION)


def test_a_checkpoint_holding_arbitrary_objects_is_refused_without_running_them(tmp_path: Path) -> None:
    """Loading unpickles only tensors and plain data (``weights_only``): any other object is refused, and
    the error gives torch's first sentence, not its advice about how to load such a file anyway."""
    path = tmp_path / "pickled.pt"
    torch.save({**_payload(extra=fractions.Fraction(1, 3)), "format": FORMAT, "format_version": 1,
                "encoding_version": ENCODING_VERSION}, path)  # save_checkpoint refuses to write it
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
    with pytest.raises(CheckpointError, match=r"empty\.pt' is corrupt or not a checkpoint file \(not torch's zip "
                                              r"archive: File is not a zip file\)$"):
        load_checkpoint(path)


def _nan_state(state: dict[str, torch.Tensor], key: str, value: float) -> dict[str, torch.Tensor]:
    state = {k: v.clone() for k, v in state.items()}
    state[key].view(-1)[0] = value
    return state


@pytest.mark.parametrize(("value", "word"), [(float("nan"), "NaN"), (float("inf"), "inf"), (-float("inf"), "inf")])
def test_non_finite_weights_are_refused_naming_the_first_tensor(tmp_path: Path, value: float, word: str) -> None:
    """NaN or inf weights would load and play without a word (greedy play always takes the first legal move,
    sampling fails inside numpy, an export writes NaN into its manifest): the loader refuses them."""
    path = tmp_path / "nan.pt"
    payload = _network_payload()
    save_checkpoint(path, payload)
    good = torch.load(path, weights_only=True)
    torch.save({**good, "model": _nan_state(good["model"], "embed.bias", value)}, path)  # the file, edited
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*nan\.pt' has non-finite weights \(a diverged run\?\): "
                                              rf"embed\.bias holds {word}$"):
        load_checkpoint(path)
    # a dict that never went through the loader is checked too, every tensor counted
    state = _nan_state(_nan_state(payload["model"], "embed.bias", value), "value_head.0.weight", value)
    with pytest.raises(CheckpointError, match=rf"^checkpoint 'mem' has non-finite weights \(a diverged run\?\): "
                                              rf"embed\.bias holds {word} \(1 more tensors hold NaN or inf\)$"):
        model_from_checkpoint({**payload, "model": state}, "mem")


def test_an_export_of_non_finite_weights_fails_before_writing_anything(tmp_path: Path) -> None:
    """``halma export`` reads through the loader: no ONNX file, no manifest with "max_logit_diff": NaN."""
    pytest.importorskip("onnxruntime")
    from agents.export import export_checkpoint

    path = tmp_path / "nan.pt"
    save_checkpoint(path, _network_payload())
    good = torch.load(path, weights_only=True)
    torch.save({**good, "model": _nan_state(good["model"], "embed.weight", float("nan"))}, path)
    with pytest.raises(CheckpointError, match="has non-finite weights"):
        export_checkpoint(path, "nan", tmp_path / "exports")
    assert sorted(os.listdir(tmp_path)) == ["nan.pt"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"extra": {"v": np.float64(1.5)}}, "the payload's extra.v is a numpy.float64, which does not save and load "
                                            "weights-only (store Python numbers, strings, lists, dicts and tensors)"),
        ({"extra": {"pool": [1, np.zeros(2)]}}, "the payload's extra.pool[1] is a numpy.ndarray, which does not"),
        ({"config": {"run_dir": pathlib.PurePosixPath("runs")}}, "the payload's config.run_dir is a "
                                                                 "pathlib.PurePosixPath, which does not"),
        ({"extra": {np.str_("k"): 1}}, "the payload's extra.k key is a numpy.str_, which does not"),
        ({"num_players": 9}, "the payload has num_players 9; star is played by"),
        ({"variant": "hex"}, "the payload has variant 'hex', not one of"),
        ({"network": {"channels": 4.0}}, "the payload has network.channels = 4.0 (float), expected int"),
        ({"network": [4]}, "the payload has a network entry of type list, not a mapping"),
        ({"model": {"w": [1.0]}}, "the payload has a model entry of type dict, not a state dict"),
        ({"model": {"w": torch.tensor([1.0, float("nan")])}}, "the payload has non-finite weights (a diverged "
                                                              "run?): w holds NaN"),
        ({"format": "other"}, "the payload sets format='other'; the format header is written by save_checkpoint "
                              f"(format={FORMAT!r}, format_version=1, encoding_version={ENCODING_VERSION!r})"),
        ({"format_version": 2, "encoding_version": True}, "the payload sets format_version=2, encoding_version=True;"),
    ],
    ids=["numpy-scalar", "numpy-array", "path", "numpy-key", "seats-9", "variant", "network-type",
         "network-list", "model-not-tensors", "nan-weights", "format", "versions"],
)
def test_save_refuses_what_the_loader_would_refuse_and_keeps_the_old_file(tmp_path: Path, changes: dict[str, Any],
                                                                          message: str) -> None:
    """Each of these saved before (atomically replacing the good file) and then failed to load."""
    path = tmp_path / "last.pt"
    save_checkpoint(path, _payload(global_step=1))
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match=r"^cannot save checkpoint '.*last\.pt': " + re.escape(message)):
        save_checkpoint(path, _payload(global_step=2, **changes))
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["last.pt"]


def test_save_takes_a_loaded_checkpoint_and_anything_torch_loads_weights_only(tmp_path: Path) -> None:
    """A payload may repeat the header (a loaded checkpoint saved again); any type torch loads weights-only
    (a torch.Size, a set, an OrderedDict) is saved."""
    path = save_checkpoint(tmp_path / "a.pt", _payload())
    assert load_checkpoint(save_checkpoint(path, load_checkpoint(path)))["variant"] == "star"
    extra = {"size": torch.Size([2, 3]), "seen": {1, 2}, "flag": collections.OrderedDict(a=True)}
    save_checkpoint(path, _payload(extra=extra))
    assert load_checkpoint(path)["extra"] == extra


SHIPPED_QUICKSTART = Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / "quickstart_star2.pt"


def test_a_compressed_archive_is_refused_before_anything_is_inflated(tmp_path: Path) -> None:
    """torch.save stores its entries; a checkpoint with deflated ones (a zip bomb: a security review's 390 KB
    file made the loader allocate 400 MB before any check) is refused from the archive's directory alone."""
    import zipfile

    good = tmp_path / "good.pt"
    good.write_bytes(SHIPPED_QUICKSTART.read_bytes())
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as packed:
        for info in source.infolist():
            packed.writestr(info.filename, source.read(info))
    with pytest.raises(CheckpointError, match=r"bomb\.pt' is not a checkpoint file: it has compressed entries "
                                              r"\(\[.*\]\), which torch\.save never writes"):
        load_checkpoint(bomb)
    assert load_checkpoint(good)["variant"] == "star"


def test_an_error_shows_a_hostile_value_cut_short(tmp_path: Path) -> None:
    """Lists that share their parts (pickle's memo) spell out to 2**24 entries: the message stays short."""
    shared: list = [0]
    for _ in range(24):
        shared = [shared, shared]
    data = load_checkpoint(SHIPPED_QUICKSTART)
    data["variant"] = shared
    path = tmp_path / "dag.pt"
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=r"has variant \[\[\[\[\.\.\.\], \[\.\.\.\]\]") as caught:
        load_checkpoint(path)
    assert len(str(caught.value)) < 400
