"""scripts/distill_network.py: the teacher's positions, the distillation losses and the student checkpoint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.config import GameConfig
from tests.script_helpers import load_script

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "scripts" / "distill_network.py"
distill = load_script("distill_network")
TEACHER = ROOT / "agents" / "checkpoints" / "quickstart_star2.pt"
SMALL = ["--positions", "64", "--games", "8", "--epochs", "1", "--holdout", "0.5", "--threads", "1"]  # seconds


def teacher_and_game():
    data = load_checkpoint(TEACHER)
    return model_from_checkpoint(data, TEACHER), GameConfig(**data["config"]["game"])


def test_positions_carry_the_teachers_probabilities_over_legal_moves_only() -> None:
    teacher, game = teacher_and_game()
    data = distill.generate(teacher, game, positions=300, games=16, temperature=1.0, explore=0.1, seed=0)
    assert data["obs"].shape[0] == data["legal"].shape[0] == data["value"].shape[0] == 300
    assert torch.allclose(data["probs"].sum(1), torch.ones(300), atol=1e-5)
    assert not data["probs"][~data["valid"]].any()  # padding has no probability
    with torch.no_grad():
        logits, value = teacher(data["obs"][:16], data["legal"][:16], data["valid"][:16])
    assert torch.allclose(torch.softmax(logits, 1), data["probs"][:16], atol=1e-5)
    assert torch.allclose(value, data["value"][:16], atol=1e-5)


def test_a_copy_of_the_teacher_has_zero_kl_and_full_agreement() -> None:
    teacher, game = teacher_and_game()
    data = distill.generate(teacher, game, positions=200, games=20, temperature=1.0, explore=0.0, seed=1)
    figures = distill.evaluate(teacher, data, batch_size=64)
    assert figures["kl"] == pytest.approx(0.0, abs=1e-5)
    assert figures["value_mse"] == pytest.approx(0.0, abs=1e-8)
    assert figures["agreement"] == 1.0


def test_the_script_fits_a_larger_student_and_writes_a_checkpoint_init_from_accepts(tmp_path: Path) -> None:
    out = tmp_path / "student.pt"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(TEACHER), str(out), "--channels", "24", "--pair-dim", "20",
         "--positions", "2048", "--games", "32", "--epochs", "6", "--batch-size", "64", "--learning-rate", "0.003",
         "--threads", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    before = next(line for line in lines if line.startswith("before:"))
    last = [line for line in lines if line.startswith("epoch 6/6")][0]
    kl_before = float(before.split("'kl': ")[1].split(",")[0])
    kl_after = float(last.split("'kl': ")[1].split(",")[0])
    assert kl_after < 0.2 * kl_before  # the student learnt the teacher's moves (1.96 -> 0.05 when written)
    data = load_checkpoint(out)
    assert data["network"]["channels"] == 24 and data["network"]["pair_dim"] == 20
    assert data["network"]["blocks"] == load_checkpoint(TEACHER)["network"]["blocks"]
    assert data["config"]["network"] == data["network"]
    model_from_checkpoint(data, out)  # the weights fit the network it names


@pytest.mark.parametrize("args, named", [(["--holdout", "1.5"], "--holdout"),
                                         (["--channels", "0"], "network.channels"),
                                         (["--threads", "0"], "--threads"),
                                         (["--learning-rate", "-1"], "--learning-rate"),
                                         (["--value-coef", "-0.5"], "--value-coef"),
                                         (["--positions", "2", "--holdout", "0.9"], "leaves no positions to fit"),
                                         (["--positions", "2", "--holdout", "0.1"], "none held out"),
                                         # these were taken and failed (or trained to NaN) only after the work
                                         (["--temperature", "inf", *SMALL], "--temperature"),
                                         (["--temperature", "nan", *SMALL], "--temperature"),
                                         (["--learning-rate", "inf", *SMALL], "--learning-rate"),
                                         (["--value-coef", "inf", *SMALL], "--value-coef"),
                                         (["--seed", "-1", *SMALL], "--seed must be >= 0"),
                                         (["--seed", str(2**70), *SMALL], "--seed must be an integer in [0, "),
                                         ([*SMALL, "--threads", "100000"], "--threads must be in [1, 256]"),  # segfault
                                         (["--positions", "16", "--games", "32", "--holdout", "0.5"],
                                          "--games 32 is more than --positions 16")])
def test_bad_arguments_are_refused_before_any_work(tmp_path: Path, args: list[str], named: str) -> None:
    out = tmp_path / "never.pt"
    result = subprocess.run([sys.executable, str(SCRIPT), str(TEACHER), str(out), *args],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode != 0 and named in result.stderr and "Traceback" not in result.stderr
    assert "positions in" not in result.stdout  # refused before generating any
    assert not out.exists()


@pytest.mark.parametrize("out, named", [("a_file/student.pt", "cannot write"), (".", "is a directory")])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path, out: str, named: str) -> None:
    (tmp_path / "a_file").write_text("")
    result = subprocess.run([sys.executable, str(SCRIPT), str(TEACHER), out], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and named in result.stderr and "Traceback" not in result.stderr
    assert "positions in" not in result.stdout


def test_a_file_that_is_not_a_checkpoint_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    result = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(tmp_path / "out.pt")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode != 0 and "bad.pt" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("teacher, named", [("bad.pt", "corrupt"), ("none.pt", "does not exist"), (".", "directory")])
def test_a_bad_teacher_is_a_usage_error(tmp_path: Path, teacher: str, named: str) -> None:
    """Exit status 2, as for every other bad argument (it was 1)."""
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    result = subprocess.run([sys.executable, str(SCRIPT), teacher, "out.pt"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and named in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.pt").exists()


def test_the_output_is_not_written_over_the_teacher(tmp_path: Path) -> None:
    teacher = tmp_path / "teacher.pt"
    teacher.write_bytes(TEACHER.read_bytes())
    result = subprocess.run([sys.executable, str(SCRIPT), str(teacher), str(tmp_path / "." / "teacher.pt"), *SMALL],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and "is the teacher" in result.stderr and "Traceback" not in result.stderr
    assert teacher.read_bytes() == TEACHER.read_bytes()
