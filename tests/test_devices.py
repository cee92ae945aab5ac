"""``check_device`` (agents/devices.py): a device string this machine can compute on comes back as a
``torch.device``; anything else is a ``ValueError`` naming the flag or key and the value."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from agents.devices import check_device

HAS_CUDA = torch.cuda.is_available()


def test_the_cpu_is_always_there() -> None:
    assert check_device("cpu") == torch.device("cpu")
    assert check_device(" cpu ", "device") == torch.device("cpu")


@pytest.mark.parametrize("name", [5, None, "", "  "])
def test_a_value_that_is_not_a_device_string_is_named(name: object) -> None:
    with pytest.raises(ValueError, match=rf"^--device must be a torch device such as cpu, cuda or cuda:1, "
                                         rf"got {name!r}$"):
        check_device(name)
    with pytest.raises(ValueError, match=r"^device must be a torch device"):
        check_device(name, "device")


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a GPU")
@pytest.mark.parametrize("name", ["cuda", "cuda:1"])
def test_cuda_without_a_gpu_is_named(name: str) -> None:
    with pytest.raises(ValueError, match=rf"^device '{name}': cuda requested but not available on this machine$"):
        check_device(name, "device")


@pytest.mark.skipif(not HAS_CUDA, reason="needs a GPU")
def test_a_gpu_index_past_the_last_is_named() -> None:
    assert check_device("cuda") == torch.device("cuda")
    past = f"cuda:{torch.cuda.device_count()}"
    with pytest.raises(ValueError, match=rf"^--device '{past}' is not available on this machine \("):
        check_device(past)


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has an MPS device")
def test_a_backend_this_build_lacks_is_named_by_the_first_sentence_of_torchs_error() -> None:
    with pytest.raises(ValueError, match=r"^--device 'mps' is not available on this machine \(([^.]|\.[^ ])+\)$"):
        check_device("mps")


@pytest.mark.parametrize("name", ["hpu", "privateuseone"])
def test_a_backend_torch_imports_on_demand_is_named_too(name: str) -> None:
    """torch parses these names, then raises ModuleNotFoundError at the first tensor when the backend's
    module is missing: still the same clear error, not a traceback."""
    with pytest.raises(ValueError, match=rf"^--device '{name}' is not available on this machine \(No module named"):
        check_device(name)


def test_the_commands_name_such_a_device_before_any_work(tmp_path: Path, capsys) -> None:
    from agents.cli import main
    from tests.test_train import tiny_config

    assert main(["bench", "train", "--device", "hpu", "--seconds", "1"]) == 2
    assert "halma bench: error: --device 'hpu' is not available on this machine" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(tiny_config()))
    runs = tmp_path / "runs"
    assert main(["train", str(config), "--runs-dir", str(runs), "--quiet", "--set", "device=hpu"]) == 2
    assert "halma train: error: device 'hpu' is not available on this machine" in capsys.readouterr().err
    assert not runs.exists()
