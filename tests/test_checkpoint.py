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
import shutil
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


def test_save_refuses_to_replace_a_fifo_or_device(tmp_path: Path) -> None:
    """The rename would put a regular file where the pipe (or, as root, /dev/null) was."""
    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*pipe\.pt' is a FIFO, not a regular file: writing it "
                                              r"would replace it$"):
        save_checkpoint(fifo, _payload())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["pipe.pt"]


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
        (lambda d: {**d, "num_players": 2.0}, "has no game the engine plays: star is played by 1, 2, 3, 4, 5, 6 seats, "
         "not 2.0"),
        (lambda d: {**d, "num_players": True}, "has no game the engine plays: star is played by 1, 2, 3, 4, 5, 6 "
         "seats, not True"),
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


def test_a_damaged_zip_directory_is_named_as_corrupt(tmp_path: Path) -> None:
    """A file name that is not UTF-8, or an unknown zip version, in the archive's directory escaped as
    UnicodeDecodeError or NotImplementedError, naming no file (a fuzzing round found both)."""
    import struct

    raw = SHIPPED_QUICKSTART.read_bytes()
    directory = raw.index(b"PK\x01\x02")  # the first entry of the central directory
    name = bytearray(raw)
    name[directory + 46] = 0xFF  # its file name's first byte
    version = bytearray(raw)
    struct.pack_into("<H", version, directory + 6, 160)  # "needs zip version 16.0"
    for label, data, reason in (("name", name, "'utf-8' codec can't decode byte 0xff in position 0"),
                                ("version", version, "zip file version 16.0")):
        path = tmp_path / f"{label}.pt"
        path.write_bytes(data)
        with pytest.raises(CheckpointError, match=rf"^checkpoint '.*{label}\.pt' is corrupt or not a checkpoint file "
                                                  rf"\(not torch's zip archive: {re.escape(reason)}"):
            load_checkpoint(path)


def test_values_repeated_by_a_stride_of_0_are_refused_before_they_are_checked(tmp_path: Path) -> None:
    """A 37 KB file holding a view of 2e9 values over one stored float took 13 GB and 20 s to check for NaN, then
    loaded; with 2**40 values torch's allocator failed with its own RuntimeError."""
    data = torch.load(SHIPPED_QUICKSTART, weights_only=True)
    for count in (2_000_000_000, 2**40):
        data["model"]["embed.bias"] = torch.zeros(1).expand(count)
        path = tmp_path / "repeated.pt"
        torch.save(data, path)
        with pytest.raises(CheckpointError, match=rf"^checkpoint '.*repeated\.pt' has model.embed.bias, a view of "
                                                  rf"{count} values over 4 bytes of storage \(values repeated by a "
                                                  r"stride of 0\)"):
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
        ({"num_players": 9}, "the payload has no game the engine plays: star is played by 1, 2, 3, 4, "
         "5, 6 seats, not 9"),
        ({"variant": "hex"}, "the payload has no game the engine plays: unknown variant 'hex'; "
         "variants: star, diamond, halma16"),
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
    with pytest.raises(CheckpointError, match=r"unknown variant \[\[\[\[\.\.\.\], \[\.\.\.\]\]") as caught:
        load_checkpoint(path)
    assert len(str(caught.value)) < 400


# --- the network a checkpoint states, checked against its weights before it is built --------------------


def _no_real_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test where a network is built anywhere but on torch's meta device (shapes only): the sizes
    below would allocate terabytes or take minutes."""
    import agents.network

    real = agents.network.build_network

    def build(variant: str, seats: int, cfg: Any) -> Any:
        assert torch.empty(0).device.type == "meta", f"a network of the stated sizes was built: {vars(cfg)}"
        return real(variant, seats, cfg)

    monkeypatch.setattr(agents.network, "build_network", build)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"channels": 10**6}, "has network.channels = 1000000, but no weight has a dimension that large "
                              "(the largest is 121)"),
        ({"value_hidden": 10**19}, "has network.value_hidden = 10000000000000000000, but no weight has a dimension"),
        ({"blocks": 3000}, r"has network.blocks = 3000, but its weights hold 1 (blocks.N.*)"),
        ({"attention_layers": 2}, r"has network.attention_layers = 2, but its weights hold 0 (attention.N.*)"),
        ({"pair_dim": 12}, "weights do not fit its network: 4 of another shape (checkpoint vs network): "
                           "src_head.weight (8, 8) vs (12, 8), src_head.bias (8,) vs (12,), dst_head.weight (8, 8) "
                           "vs (12, 8) and 1 more"),
    ],
    ids=["channels-huge", "value-hidden-past-int64", "blocks-3000", "attention", "pair-dim"],
)
def test_a_stated_network_the_weights_do_not_have_is_refused_before_it_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any], message: str) -> None:
    """A hand-edited network.channels = 10**6 made `halma eval` and `halma export` try to allocate 28 TB (a
    RuntimeError traceback), blocks = 3000 stalled for 20 s: the weights' shapes are checked first."""
    path = tmp_path / "net.pt"
    payload = _network_payload()
    payload["network"].update(changes)
    torch.save({**torch.load(save_checkpoint(path, _network_payload()), weights_only=True),
                "network": payload["network"]}, path)
    _no_real_build(monkeypatch)
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*net\.pt' " + re.escape(message)):
        model_from_checkpoint(load_checkpoint(path), path)


def test_every_shipped_checkpoint_passes_the_checks_and_builds() -> None:
    for path in sorted((SHIPPED_QUICKSTART.parent).glob("*.pt")):
        data = load_checkpoint(path)
        assert model_from_checkpoint(data, path).state_dict().keys() == data["model"].keys()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"variant": "diamond"}, "has variant 'diamond', but its training config has game.variant 'star' "
                                 "(a checkpoint relabelled for another game?)"),
        ({"num_players": 3}, "has num_players 3, but its training config has game.num_players 2 "),
        ({"config": {"game": {"variant": "star", "num_players": 2.0}}},
         "has num_players 2, but its training config has game.num_players 2.0 "),
        ({"config": {"game": ["star", 2]}}, "has a config.game entry of type list, not a mapping"),
        ({"config": [1]}, "has a config entry of type list, not a mapping"),
        ({"network": {**dataclasses.asdict(SMALL), "typo_key": 1}},
         "has unknown network key(s) 'typo_key'; a network has channels, blocks, pair_dim, value_hidden, "
         "position_embedding, attention_layers, reach_features"),
        ({"global_step": -5}, f"has global_step = -5 (int), expected an integer from 0 to {2**63 - 1}"),
        ({"global_step": True}, "has global_step = True (bool), expected an integer from 0"),
        ({"global_step": 2**70}, f"has global_step = {2**70} (int), expected an integer from 0"),
        ({"update": "3"}, "has update = '3' (str), expected an integer from 0"),
        ({"update": 2.9}, "has update = 2.9 (float), expected an integer from 0"),
        ({"update": torch.tensor(1.0)}, "has update = tensor(1.) (Tensor), expected an integer from 0"),
    ],
    ids=["relabelled-diamond", "relabelled-3-seats", "config-seats-float", "config-game-list", "config-list",
         "network-extra-key", "step-negative", "step-bool", "step-huge", "update-str", "update-float",
         "update-tensor"],
)
def test_a_header_its_own_entries_contradict_is_refused(tmp_path: Path, edit: dict[str, Any], message: str) -> None:
    """The fuzzing review's files: star-2 weights relabelled diamond or 3 seats (the same tensor shapes) played
    that game; a misspelt network key was dropped; step counts were converted ("3", 2.9), crashed (a tensor in
    an export's manifest) or trained on (-5).  The loader refuses each (and a save, which checks the same)."""
    path = tmp_path / "edited.pt"
    good = {**_network_payload(), "config": {"game": {"variant": "star", "num_players": 2}}, "global_step": 1,
            "update": 1}
    save_checkpoint(path, good)
    torch.save({**torch.load(path, weights_only=True), **edit}, path)
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*edited\.pt' " + re.escape(message)):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=r"^cannot save checkpoint '.*b\.pt': the payload " + re.escape(message)):
        save_checkpoint(tmp_path / "b.pt", {**good, **edit})
    assert not (tmp_path / "b.pt").exists()


# --- what halma train --resume reads: checked before any of it is applied ----------------------------------


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run of two updates (last.pt, two snapshots in its pool)."""
    from agents.config import from_dict
    from agents.ppo import Trainer
    from tests.test_train import quiet, tiny_config

    run = tmp_path_factory.mktemp("resume") / "run"
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=128, log__tensorboard=False)), run, log=quiet)
    trainer.train()
    trainer.close()
    return run


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


_PCG64 = {"bit_generator": "PCG64", "state": {"state": 1, "inc": 1}, "has_uint32": 0, "uinteger": 0}


def _nan_moment(d: dict[str, Any]) -> None:
    d["optimizer"]["state"][0]["exp_avg"].view(-1)[0] = float("nan")


def _group(**changes: Any) -> Any:
    """An edit of the optimiser state's (only) parameter group."""
    return lambda d: d["optimizer"]["param_groups"][0].update(changes)


def _param_state(**changes: Any) -> Any:
    """An edit of the optimiser state of parameter 0 (position, 121 x 8 in the tiny run)."""
    return lambda d: d["optimizer"]["state"][0].update(changes)


def _negative_second_moment(d: dict[str, Any]) -> None:
    d["optimizer"]["state"][2]["exp_avg_sq"].view(-1)[0] = -1.0


def _double_weight(d: dict[str, Any]) -> None:
    d["model"]["embed.bias"] = d["model"]["embed.bias"].double()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(rng={"python": 1}), "has rng without numpy, torch; it holds the python, numpy, torch "
                                                "random states (and cuda where CUDA was used)"),
        (lambda d: d["rng"].update(seed=1), "has rng with unknown key(s) 'seed'"),
        (lambda d: d["rng"].update(python=1), "has rng.python = 1, not a python random state (TypeError: "),
        (lambda d: d["rng"].update(python=(3, (1, 2), None)), "has rng.python = (3, (1, 2), None), not a python "
                                                              "random state (ValueError: state vector is the wrong"),
        (lambda d: d["rng"].update(numpy=dict(_PCG64, state={"state": -1, "inc": 1})),
         "has rng.numpy = {'bit_generator': 'PCG64', 'has_uint32': 0, 'state': {'inc': 1, 'state': -1}, "
         "'uinteger': 0}, not a numpy random state (OverflowError: "),
        (lambda d: d["rng"].update(numpy=dict(_PCG64, bit_generator="MT19937")),
         "has rng.numpy = {'bit_generator': 'MT19937', 'has_uint32': 0, 'state': {'inc': 1, 'state': 1}, "
         "'uinteger': 0}, not a numpy random state (ValueError: state must be for a PCG64 RNG)"),
        (lambda d: d["rng"].update(torch=torch.zeros(3, dtype=torch.uint8)), "has rng.torch = tensor([0, 0, 0], "
                                                                              "dtype=torch.uint8), not a torch random"),
        (lambda d: d["rng"].update(cuda=[1]), "has rng.cuda = [1], not a cuda random state (TypeError: expected a "
                                              "list of torch.ByteTensor, one per GPU)"),
        (lambda d: d.update(rng_ranks=[]), "has rng_ranks = [], not a list of random states"),
        (lambda d: d.update(rng_ranks=[d["rng"], 5]), "has rng_ranks[1] = 5, not a mapping of random states"),
        (lambda d: d.update(extra=[1, 2]), "has an extra entry of type list, not a mapping"),
        (lambda d: d["extra"].update(snapshots=[5]), "has extra.snapshots = [5], not a list of snapshot paths"),
        (lambda d: d["extra"].update(pool=[]), "has unknown extra key(s) 'pool'; a training checkpoint's extra "
                                               "has snapshots, ratings"),
        (lambda d: d["extra"].update(ratings=[]), "has extra.ratings = [], not a mapping of names to ratings"),
        (lambda d: d["extra"].update(ratings={"agent": {"mu": 1}}), "has extra.ratings['agent'] = {'mu': 1}, "
                                                                    "not a rating {'mu': number, 'sigma': number}"),
        (lambda d: d["extra"].update(ratings={"agent": {"mu": float("nan"), "sigma": 1.0}}),
         "has extra.ratings['agent'] = {'mu': nan, 'sigma': 1.0}, not a rating"),
        (lambda d: d.update(optimizer=[1]), "has an optimizer entry of type list, not an optimiser state dict"),
        (_group(params=[0]), "has optimizer.param_groups[0] of 1 parameters; this run's optimiser's has "),
        (lambda d: d["optimizer"]["state"][0].update(exp_avg=torch.zeros(3)),
         "has an optimizer state whose exp_avg of parameter 0 is (3,), not a tensor of the parameter's shape"),
        (lambda d: d["optimizer"]["state"][0].update(exp_avg=1.0),
         "has an optimizer state whose exp_avg of parameter 0 is a float, not a tensor"),
        (_nan_moment, "has an optimizer state whose exp_avg of parameter 0 holds NaN or inf"),
        # the fuzzing review's optimiser edits: taken by torch's load_state_dict, then trained on or failed at the
        # first step, after the run had started
        (_group(lr="0.001"), "has optimizer.param_groups[0].lr = '0.001' (str), expected a finite number >= 0"),
        (_group(lr=float("nan")), "has optimizer.param_groups[0].lr = nan (float), expected a finite number >= 0"),
        (_group(lr=-1e-3), "has optimizer.param_groups[0].lr = -0.001 (float), expected a finite number >= 0"),
        (_group(eps=torch.tensor(1e-5)), "has optimizer.param_groups[0].eps = tensor(1.0000e-05) (Tensor), expected"),
        (_group(weight_decay=True), "has optimizer.param_groups[0].weight_decay = True (bool), expected a finite"),
        (lambda d: d["optimizer"]["param_groups"][0].pop("lr"), "has optimizer.param_groups[0] without lr (Adam's "
                                                                "step reads lr, betas, eps, weight_decay)"),
        (_group(betas=[0.9, 0.999, 0.5]), "has optimizer.param_groups[0].betas = [0.9, 0.999, 0.5] (list), expected "
                                          "two numbers from 0 to below 1"),
        (_group(betas=(0.9,)), "has optimizer.param_groups[0].betas = (0.9,) (tuple), expected two numbers"),
        (_group(betas=(0.9, 1.0)), "has optimizer.param_groups[0].betas = (0.9, 1.0) (tuple), expected two numbers"),
        (_group(betas=(0.9, "0.999")), "has optimizer.param_groups[0].betas = (0.9, '0.999') (tuple), expected"),
        (_group(maximize=True), "has optimizer.param_groups[0].maximize = True, but this run's optimiser has "
                                "maximize = False (a flag that changes what a step does)"),
        (_group(amsgrad=True), "has optimizer.param_groups[0].amsgrad = True, but this run's optimiser has"),
        (_group(amsgrad="no"), "has optimizer.param_groups[0].amsgrad = 'no' (str), expected True or False"),
        (_group(foreach=1), "has optimizer.param_groups[0].foreach = 1 (int), expected True, False or None"),
        (lambda d: d["optimizer"].update(param_groups={"lr": 1}), "has optimizer.param_groups = {'lr': 1}, not a "
                                                                  "list of parameter groups"),
        (lambda d: d["optimizer"].pop("param_groups"), "has an optimizer entry without param_groups (an optimiser "
                                                       "state dict has state and param_groups)"),
        (lambda d: d["optimizer"]["param_groups"].append(dict(d["optimizer"]["param_groups"][0])),
         "has 2 optimizer parameter group(s); this run's optimiser has 1"),
        (lambda d: d["optimizer"]["param_groups"][0]["params"].__setitem__(1, 0),
         "has optimizer.param_groups that list a parameter id twice (0)"),
        (lambda d: d["optimizer"]["param_groups"][0]["params"].__setitem__(0, "embed"),
         "has optimizer.param_groups[0].params = ['embed', 1, 2, 3, 4, 5, 6, 7, ...], not a list of parameter ids"),
        (lambda d: d["optimizer"].update(state=[1]), "has optimizer.state = [1], not a mapping of parameter ids"),
        (lambda d: d["optimizer"]["state"].update({99: {}}), "has optimizer.state for parameter id(s) 99, which no "
                                                             "parameter group lists"),
        (lambda d: d["optimizer"]["state"].update({0: [1]}), "has an optimizer state whose entry for parameter 0 is "
                                                             "[1], not a mapping"),
        (lambda d: d["optimizer"]["state"][0].pop("exp_avg_sq"), "has an optimizer state without exp_avg_sq for "
                                                                 "parameter 0 (Adam keeps step, exp_avg, exp_avg_sq)"),
        (_param_state(step=torch.tensor(-1.0)), "has an optimizer state whose step of parameter 0 is tensor(-1.), "
                                                "not a step count (a scalar float tensor holding a whole number >= 0)"),
        (_param_state(step=torch.tensor(2.5)), "has an optimizer state whose step of parameter 0 is tensor(2.5000), "
                                               "not a step count"),
        (_param_state(step=torch.tensor([4.0, 4.0])), "has an optimizer state whose step of parameter 0 is "
                                                      "tensor([4., 4.]), not a step"),
        (_param_state(step=4.0), "has an optimizer state whose step of parameter 0 is 4.0, not a step count"),
        (_param_state(exp_avg=torch.tensor(0.0)), "has an optimizer state whose exp_avg of parameter 0 is (), not "
                                                  "a tensor of the parameter's shape (121, 8)"),
        (_param_state(exp_avg=torch.zeros(121, 8, dtype=torch.float64)), "has an optimizer state whose exp_avg of "
                                                                        "parameter 0 is float64, not the parameter's "
                                                                        "float32"),
        (_param_state(exp_avg_sq=torch.zeros(121, 8, dtype=torch.int64)), "has an optimizer state whose exp_avg_sq of "
                                                                         "parameter 0 is int64, not the parameter's "
                                                                         "float32"),
        (_negative_second_moment, "has an optimizer state whose exp_avg_sq of parameter 2 holds negative values (a "
                                  "mean of squares is >= 0: its square root would make the weights NaN)"),
        (_double_weight, "has weights of dtype float64, not float32 (a checkpoint's weights are float32): embed.bias "
                         "is float64"),
        (lambda d: d.update(global_step=-5), "has global_step = -5 (int), expected an integer from 0"),
        (lambda d: d.update(update="3"), "has update = '3' (str), expected an integer from 0"),
        (lambda d: d.update(update=2.9), "has update = 2.9 (float), expected an integer from 0"),
    ],
    ids=["rng-python-only", "rng-unknown-key", "rng-python-int", "rng-python-short", "rng-numpy-negative",
         "rng-numpy-other-generator", "rng-torch-short", "rng-cuda", "rng-ranks-empty", "rng-ranks-int",
         "extra-list", "snapshots-ints", "extra-unknown-key", "ratings-list", "rating-no-sigma", "rating-nan",
         "optimizer-list", "optimizer-groups", "optimizer-moment-shape", "optimizer-moment-float",
         "optimizer-moment-nan", "lr-str", "lr-nan", "lr-negative", "eps-tensor", "weight-decay-bool", "lr-missing",
         "betas-three", "betas-one", "betas-one-or-more", "betas-str", "maximize", "amsgrad", "amsgrad-str",
         "foreach-int", "groups-dict", "groups-missing", "groups-two", "params-twice", "params-str", "state-list",
         "state-unknown-id", "param-state-list", "moment-missing", "adam-step-negative", "adam-step-fraction",
         "adam-step-vector", "adam-step-float", "moment-scalar", "moment-float64", "moment-int64",
         "second-moment-negative", "weights-float64", "step-negative", "update-str", "update-float"],
)
def test_a_resume_refuses_a_bad_training_entry_before_it_changes_anything(
        trained_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: Any, message: str) -> None:
    """The fuzzing review's last.pt edits failed with a TypeError or AttributeError traceback (part way through
    setting the random streams), were converted ("3", 2.9) or trained on (-5), or gave torch's message without
    the file: each is a CheckpointError naming the file and the entry, and no file or random stream changes."""
    import agents.ppo
    from agents.config import from_dict
    from agents.ppo import Trainer
    from tests.test_train import quiet, tiny_config

    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    last = run / "checkpoints" / "last.pt"
    data = torch.load(last, weights_only=True)
    mutate(data)
    torch.save(data, last)
    before = _files(run)
    rng_set: list[Any] = []
    monkeypatch.setattr(agents.ppo, "set_rng_state", lambda state, np_rng: rng_set.append(state))
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*last\.pt' " + re.escape(message)):
        Trainer(from_dict(tiny_config(log__tensorboard=False)), run, resume=True, log=quiet)
    assert _files(run) == before and rng_set == []


def test_the_checks_take_what_a_training_run_writes(trained_run: Path) -> None:
    """The resume checks pass a real last.pt (two snapshots listed, ratings empty or filled)."""
    from agents.checkpoint import check_training_entries

    path = trained_run / "checkpoints" / "last.pt"
    data = load_checkpoint(path)
    assert len(data["extra"]["snapshots"]) == 2
    check_training_entries(data, path)
    data["extra"]["ratings"] = {"agent": {"mu": 25, "sigma": 8.3}, "snapshots/snap_000001.pt": {"mu": 24.0,
                                                                                                  "sigma": 8.0}}
    data["rng_ranks"] = [data["rng"], data["rng"]]
    check_training_entries(data, path)


def _run_optimizer(data: dict[str, Any]) -> torch.optim.Optimizer:
    """The optimiser a run of the checkpoint's network builds (agents/ppo.py, Trainer)."""
    net = model_from_checkpoint(data)
    return torch.optim.Adam(net.parameters(), lr=3e-4, eps=1e-5)


def test_the_optimizer_state_a_training_run_writes_loads(trained_run: Path) -> None:
    """A real last.pt's optimiser state passes and loads; so does one from a torch without the newer flags
    (load_state_dict gives them torch's default)."""
    from agents.checkpoint import load_optimizer_state

    path = trained_run / "checkpoints" / "last.pt"
    data = load_checkpoint(path)
    optimizer = _run_optimizer(data)
    load_optimizer_state(optimizer, data["optimizer"], path)
    assert optimizer.param_groups[0]["lr"] == data["optimizer"]["param_groups"][0]["lr"]
    assert len(optimizer.state) == len(data["optimizer"]["state"])
    del data["optimizer"]["param_groups"][0]["decoupled_weight_decay"]
    load_optimizer_state(_run_optimizer(data), data["optimizer"], path)


def test_a_refused_optimizer_state_leaves_the_optimizer_as_it_was(trained_run: Path) -> None:
    """The state was loaded, then checked: a refused one had already replaced the learning rate and moments."""
    from agents.checkpoint import load_optimizer_state

    path = trained_run / "checkpoints" / "last.pt"
    data = load_checkpoint(path)
    optimizer = _run_optimizer(data)
    data["optimizer"]["param_groups"][0]["lr"] = 0.5
    data["optimizer"]["state"][3]["exp_avg"] = torch.zeros(3)
    with pytest.raises(CheckpointError, match=r"last\.pt' has an optimizer state whose exp_avg of parameter 3 is "
                                              r"\(3,\), not a tensor of the parameter's shape"):
        load_optimizer_state(optimizer, data["optimizer"], path)
    assert optimizer.param_groups[0]["lr"] == 3e-4 and not optimizer.state


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_weights_of_another_dtype_are_refused_naming_the_tensor(tmp_path: Path, dtype: torch.dtype) -> None:
    """Every writer stores a HalmaNet's float32 state dict: float64 (or half) weights were converted by
    load_state_dict without a word.  The loader, the save and a dict that never went through either refuse them."""
    name = str(dtype).removeprefix("torch.")
    path = tmp_path / "wide.pt"
    payload = _network_payload()
    save_checkpoint(path, payload)
    good = torch.load(path, weights_only=True)
    model = {**good["model"], "embed.bias": good["model"]["embed.bias"].to(dtype),
             "value_head.0.weight": good["model"]["value_head.0.weight"].to(dtype)}
    torch.save({**good, "model": model}, path)
    message = (rf"has weights of dtype {name}, not float32 \(a checkpoint's weights are float32\): embed\.bias is "
               rf"{name} \(1 more tensors are not float32\)$")
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*wide\.pt' " + message):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=r"^cannot save checkpoint '.*b\.pt': the payload " + message):
        save_checkpoint(tmp_path / "b.pt", {**payload, "model": model})
    assert not (tmp_path / "b.pt").exists()
    with pytest.raises(CheckpointError, match=r"^checkpoint 'mem' " + message):
        model_from_checkpoint({**payload, "model": model}, "mem")


def test_integer_weights_where_the_network_has_floats_are_named(tmp_path: Path) -> None:
    """Not floating point, so not the float32 rule's: the network's own dtype, compared before it is built."""
    payload = _network_payload()
    model = {**payload["model"], "embed.bias": torch.zeros(8, dtype=torch.int64)}
    with pytest.raises(CheckpointError, match=re.escape("checkpoint 'mem' weights do not fit its network: 1 of "
                                                        "another dtype (checkpoint vs network): embed.bias int64 vs "
                                                        "float32") + "$"):
        model_from_checkpoint({**payload, "model": model}, "mem")


# --- the fuzzing review's file checks: the stored config's size and depth, tensors that are not dense, bit rot,
# special files, init_from's weights ------------------------------------------------------------------------


def _shared_lists(levels: int) -> list[Any]:
    """Lists that share their parts (pickle's memo): a small file that spells out to 2**levels leaves."""
    shared: list[Any] = ["x" * 10]
    for _ in range(levels):
        shared = [shared, shared]
    return shared


def _nested(levels: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    for _ in range(levels):
        deep = {"a": deep}
    return deep


def _save_deep(data: dict[str, Any], path: Path) -> None:
    """torch.save of a deeply nested value (pickle's writer recurses; its reader does not)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        torch.save(data, path)
    finally:
        sys.setrecursionlimit(limit)


def _resume_refuses(run: Path, message: str) -> None:
    """A resume of ``run`` raises a CheckpointError naming last.pt and ``message``, and changes no file."""
    from agents.config import from_dict
    from agents.ppo import Trainer
    from tests.test_train import quiet, tiny_config

    before = _files(run)
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*last\.pt'" + re.escape(message)):
        Trainer(from_dict(tiny_config(log__tensorboard=False)), run, resume=True, log=quiet)
    assert _files(run) == before


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (_shared_lists(14), ": its config holds more than 10000 values; a training config has about 80"),
        (_nested(40), ": its config nests more than 32 levels deep; a training config has 4"),
        (_nested(2000), ": its config nests more than 32 levels deep; a training config has 4"),
        ([["y" * 60_000] * 2], ": its config holds more than 100000 characters of text; a training config has"),
    ],
    ids=["shared-lists", "nested-40", "nested-2000", "long-text"],
)
def test_a_resume_refuses_a_stored_config_too_large_or_deep_to_spell_out(
        trained_run: Path, tmp_path: Path, value: Any, message: str) -> None:
    """The fuzzing review's last.pt configs: 40 levels of shared lists never finished a resume (``config_changes``
    spells the config out to compare and print it), 50,000 nested levels were a RecursionError traceback.  The
    loader bounds the config's size and depth as an export's manifest did, before anything reads it."""
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    last = run / "checkpoints" / "last.pt"
    data = torch.load(last, weights_only=True)
    data["config"]["log"]["bomb"] = value
    _save_deep(data, last)
    _resume_refuses(run, message)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        load_checkpoint(last)  # every reader of a checkpoint: halma eval, export, init_from, the opponent pool


def _sparse_coo(t: torch.Tensor) -> torch.Tensor:
    return t.to_sparse()


def _sparse_csr(t: torch.Tensor) -> torch.Tensor:
    return t.to_sparse_csr()


def _meta(t: torch.Tensor) -> torch.Tensor:
    return torch.zeros(t.shape, device="meta")


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
@pytest.mark.parametrize(("make", "kind"), [(_sparse_coo, "a sparse_coo tensor"), (_sparse_csr, "a sparse_csr tensor"),
                                            (_meta, "a meta tensor (a shape without values)")],
                         ids=["coo", "csr", "meta"])
def test_weights_that_are_not_dense_tensors_are_refused_naming_the_tensor(
        tmp_path: Path, make: Any, kind: str) -> None:
    """Sparse (COO, CSR) or meta weights loaded, then failed the finiteness check with torch's NotImplementedError
    or RuntimeError traceback (halma eval, export, --resume, init_from)."""
    from agents.export import export_checkpoint

    data = torch.load(SHIPPED_QUICKSTART, weights_only=True)
    data["model"]["position"] = make(data["model"]["position"])
    path = tmp_path / "odd.pt"
    torch.save(data, path)
    message = f"^checkpoint '.*odd\\.pt' has model.position, {re.escape(kind)}: a checkpoint holds dense tensors"
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=message):
        export_checkpoint(path, "x", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(CheckpointError, match=r"^checkpoint 'given' has model.position, " + re.escape(kind)):
        model_from_checkpoint({**load_checkpoint(SHIPPED_QUICKSTART), "model": data["model"]}, "given")


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
@pytest.mark.parametrize(("entry", "make", "kind"), [
    ("step", _meta, "a meta tensor (a shape without values)"),
    ("exp_avg", _meta, "a meta tensor (a shape without values)"),
    ("exp_avg_sq", _sparse_csr, "a sparse_csr tensor"),
], ids=["step-meta", "moment-meta", "moment-csr"])
def test_a_resume_refuses_an_optimizer_state_that_is_not_dense(
        trained_run: Path, tmp_path: Path, entry: str, make: Any, kind: str) -> None:
    """A meta tensor in Adam's state failed the optimiser check with torch's RuntimeError (``Tensor.item() cannot be
    called on meta tensors``)."""
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    last = run / "checkpoints" / "last.pt"
    data = torch.load(last, weights_only=True)
    state = data["optimizer"]["state"][0]
    state[entry] = make(state[entry])
    torch.save(data, last)
    _resume_refuses(run, f" has optimizer.state[0].{entry}, {kind}: a checkpoint holds dense tensors")


def _flip_bit(source: Path, target: Path, entry: str, offset: int) -> None:
    """A copy of ``source`` with one bit flipped ``offset`` bytes into the stored zip entry ``entry``."""
    import struct
    import zipfile

    raw = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(entry)
    name_length, extra_length = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    raw[info.header_offset + 30 + name_length + extra_length + offset] ^= 1
    target.write_bytes(bytes(raw))


@pytest.mark.parametrize("entry", ["archive/data/0", "archive/data.pkl"])
def test_a_flipped_bit_is_refused_naming_the_entry(tmp_path: Path, entry: str) -> None:
    """torch.load does not check the zip's CRC-32s: a bit flipped in a stored weight loaded as another weight and
    exported with a fresh hash.  The loader reads each entry back against its checksum first."""
    from agents.export import export_checkpoint

    path = tmp_path / "rotten.pt"
    _flip_bit(SHIPPED_QUICKSTART, path, entry, 103)
    message = (rf"^checkpoint '.*rotten\.pt' is corrupt \(damaged on disk or in a copy\?\): its entry "
               rf"'{re.escape(entry)}' does not read back as stored \(BadZipFile: Bad CRC-32")
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=message):
        export_checkpoint(path, "x", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_archive_saved_without_checksums_loads(tmp_path: Path) -> None:
    """torch can save without CRC-32s (all zero): nothing to check, so such a file is not called corrupt."""
    from torch.utils.serialization import config

    data = torch.load(SHIPPED_QUICKSTART, weights_only=True)
    path = tmp_path / "plain.pt"
    saved = config.save.compute_crc32
    config.save.compute_crc32 = False
    try:
        torch.save(data, path)
    finally:
        config.save.compute_crc32 = saved
    assert load_checkpoint(path)["variant"] == "star"


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="FIFOs and /dev/zero")
def test_a_fifo_or_a_device_is_named_as_what_it_is(tmp_path: Path) -> None:
    """A FIFO, or a symlink to /dev/zero, given as a checkpoint was said not to exist."""
    from agents.registry import make_player

    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.pt"
    zero.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO"), (zero, "a device")):
        with pytest.raises(CheckpointError, match=rf"^checkpoint '.*{path.name}' is {kind}, not a regular file$"):
            load_checkpoint(path)
        with pytest.raises(ValueError, match=rf"'.*{path.name}' is {kind}, not a regular file$"):
            make_player(str(path))  # halma eval X.pt


def test_init_from_names_the_file_and_the_tensor_of_another_shape(trained_run: Path, tmp_path: Path) -> None:
    """init_from with a tensor of another shape gave torch's two-line ``size mismatch`` message without the
    file: the weights are checked against the network first, in one line naming both."""
    from agents.config import from_dict
    from agents.ppo import Trainer
    from tests.test_train import quiet, tiny_config

    data = torch.load(trained_run / "checkpoints" / "last.pt", weights_only=True)
    data["model"]["position"] = torch.zeros(5, 8)
    path = tmp_path / "misshapen.pt"
    torch.save(data, path)
    with pytest.raises(ValueError) as caught:
        Trainer(from_dict(dict(tiny_config(log__tensorboard=False), init_from=str(path))), tmp_path / "run",
                log=quiet)
    assert re.fullmatch(r"init_from: checkpoint '.*misshapen\.pt' weights do not fit its network: 1 of another "
                        r"shape \(checkpoint vs network\): position \(5, 8\) vs \(121, 8\)", str(caught.value))


def test_a_checkpoint_path_with_dot_dot_after_a_symlinked_folder_is_written_where_the_system_puts_it(
        tmp_path: Path) -> None:
    """mkstemp made its folder absolute by cutting "link/.." out of the text, another folder after a symlink: the
    rename failed and a run whose --runs-dir was 'link/../runs' lost its first checkpoint."""
    from tests.opponent_helpers import make_checkpoint

    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "real" / "deep")
    make_checkpoint(tmp_path / "work" / "link" / ".." / "runs" / "last.pt")
    assert (tmp_path / "real" / "runs" / "last.pt").is_file() and not (tmp_path / "work" / "runs").exists()


def test_a_checkpoint_loads_onto_the_cpu_by_any_index() -> None:
    """`--device cpu:0` (the CPU, as the config takes it) made torch.load fail to map the storages, and the
    resume called an intact checkpoint "corrupt or not a checkpoint file"."""
    import torch

    plain = load_checkpoint(SHIPPED_QUICKSTART)["model"]
    for device in ("cpu:0", "cpu:1", torch.device("cpu:0")):
        model = load_checkpoint(SHIPPED_QUICKSTART, map_location=device)["model"]
        assert all(torch.equal(model[k], plain[k]) and model[k].device.type == "cpu" for k in plain)


def test_warnings_are_silenced_one_thread_at_a_time_and_the_filters_come_back() -> None:
    """Loading checkpoint players in threads (a game site) overlapped two ``catch_warnings`` blocks, which
    put back each other's filter lists and could leave "ignore every warning" on for the process."""
    import threading
    import warnings

    from agents.checkpoint import warnings_silenced

    before = list(warnings.filters)
    inside, leave, order = threading.Event(), threading.Event(), []

    def first() -> None:
        with warnings_silenced():
            order.append("first in")
            inside.set()
            leave.wait(10)
            order.append("first out")

    def second() -> None:
        inside.wait(10)
        with warnings_silenced():
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    inside.wait(10)
    time.sleep(0.2)  # the second thread waits at the block meanwhile
    assert order == ["first in"]
    leave.set()
    for thread in threads:
        thread.join(10)
    assert order == ["first in", "first out", "second in"] and warnings.filters == before
    with warnings_silenced(), warnings_silenced():  # nested in one thread: no deadlock
        warnings.warn("not shown", UserWarning, stacklevel=1)
    assert warnings.filters == before
