"""The training entry point (``agents/train.py``) and the trainer's paths around the PPO update
(``agents/ppo.py``: checkpoints, resume, init_from, the loop's bookkeeping, statistics and log lines).

Written from a mutation run (scripts/mutants.py): each test pins a behaviour that no other test did.
The CLI layer is driven with a stand-in Trainer where a real one would only add minutes; the trainer
itself runs on a tiny config (a few updates of 4 games in seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import random
import shlex
import shutil
import signal
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import agents.parallel
import agents.ppo
import agents.run_dir
import agents.train
from agents.checkpoint import load_checkpoint
from agents.config import config_changes, default_dict, flat_config, from_dict
from agents.ppo import (
    Trainer,
    _episode_stats,
    _game_stats,
    _Progress,
    check_same_weights,
    end_reason_name,
    eval_line,
    rng_state,
    set_rng_state,
    status_line,
    weights_digest,
)
from agents.train import (
    _GracefulInterrupt,
    add_arguments,
    final_table,
    resume_command,
    resume_hint,
    train_and_evaluate,
)
from tests.file_helpers import TerminalText
from tests.test_train import quiet
from tests.test_train import tiny_config as train_tiny_config


def tiny_config(**changes) -> dict:
    """tests/test_train.py's tiny config with one update epoch, no TensorBoard and a 30-ply evaluation cap:
    a few updates of 4 games in about a second."""
    return train_tiny_config(**{"ppo__update_epochs": 1, "eval__move_limit": 30, "log__tensorboard": False,
                                **changes})


def namespace(config: str = "c.yaml", **changes) -> argparse.Namespace:
    """``halma train``'s arguments as its parser gives them, with ``changes``."""
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args([config])
    vars(args).update(changes)
    return args


# --- agents/train.py: the command line ------------------------------------------------------


def test_train_arguments_and_their_defaults() -> None:
    args = namespace()
    assert vars(args) == {"config": "c.yaml", "overrides": [], "device": None, "resume": False, "runs_dir": "runs",
                          "no_final_eval": False, "quiet": False, "print_config": False}
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["x.yaml", "--set", "a=1", "--set", "b=2", "--device", "cpu", "--resume", "--runs-dir", "r",
                         "--no-final-eval", "--quiet", "--print-config"])
    assert vars(args) == {"config": "x.yaml", "overrides": ["a=1", "b=2"], "device": "cpu", "resume": True,
                          "runs_dir": "r", "no_final_eval": True, "quiet": True, "print_config": True}


def test_printed_commands_are_quoted_for_the_platform_s_shell() -> None:
    from agents.train import shell_join

    words = ["halma", "train", "my configs\\q.yaml", "--set", "name=a b"]
    assert shell_join(words, windows=False) == "halma train 'my configs\\q.yaml' --set 'name=a b'"
    assert shell_join(words, windows=True) == 'halma train "my configs\\q.yaml" --set "name=a b"'  # cmd.exe
    assert shell_join(["halma", "train", "R&D\\q.yaml"], windows=True) == 'halma train "R&D\\q.yaml"'  # not split at &


def test_resume_command_repeats_config_overrides_runs_dir_and_device() -> None:
    assert resume_command(namespace("configs/q.yaml")) == "halma train configs/q.yaml --resume"
    args = namespace("my configs/q.yaml", overrides=["ppo.total_steps=10", "name=a b"], runs_dir="elsewhere",
                     device="cuda")
    assert resume_command(args) == ("halma train 'my configs/q.yaml' --resume --set ppo.total_steps=10 "
                                    "--set 'name=a b' --runs-dir elsewhere --device cuda")
    # the run flags it was started with (--no-final-eval was dropped: the continuation then evaluated)
    assert resume_command(namespace("q.yaml", no_final_eval=True, quiet=True)) == (
        "halma train q.yaml --resume --no-final-eval --quiet")


def test_printed_commands_paste_back_with_a_dash_or_a_dollar_in_a_path(tmp_path: Path, monkeypatch) -> None:
    """'halma train -cfg.yaml --resume --runs-dir -runs' read both paths as flags, and the hint to remove a run
    folder was Python's repr, where the shell expands $HOME; a path starting with '-' is now written ./-x, and the
    folder to remove shell-quoted."""
    from agents.train import cross_check_command

    monkeypatch.chdir(tmp_path)
    cfg = from_dict(tiny_config())
    args = namespace(runs_dir="-runs")
    args.config = "-cfg.yaml"  # (as parsed from: halma train --runs-dir=-runs -- -cfg.yaml)
    assert shlex.split(resume_command(args))[2:] == ["./-cfg.yaml", "--resume", "--runs-dir", "./-runs"]
    assert shlex.split(cross_check_command(Path("-runs/tiny/checkpoints/last.pt"), cfg))[2] == \
        "./-runs/tiny/checkpoints/last.pt"
    odd = "r $HOME 'o'"
    (tmp_path / odd / "tiny").mkdir(parents=True)
    hint = resume_hint(cfg, namespace("c.yaml", runs_dir=odd))
    quoted = hint.split("remove ", 1)[1].split(" (or choose", 1)[0]
    assert shlex.split(quoted) == [str(Path(odd) / "tiny")]


def test_resume_hint_says_whether_there_is_a_checkpoint(tmp_path: Path) -> None:
    cfg = from_dict(tiny_config(checkpoint__every=7))
    args = namespace("c.yaml", runs_dir=str(tmp_path))
    none_yet = "no checkpoint was written yet (the first comes after checkpoint.every=7 updates), so there is nothing "
    # interrupted before the run directory was made (several processes starting): nothing to remove
    assert resume_hint(cfg, args) == none_yet + "to resume: run the same command again to start over"
    (tmp_path / "tiny").mkdir()
    assert resume_hint(cfg, args) == (none_yet + f"to resume: remove {shlex.quote(str(tmp_path / 'tiny'))} (or choose "
                                      "another --set name=NAME) and run the same command again to start over")
    last = tmp_path / "tiny" / "checkpoints" / "last.pt"
    last.parent.mkdir(parents=True)
    last.write_bytes(b"")
    assert resume_hint(cfg, args) == (f"the last checkpoint is {last} (written every checkpoint.every=7 updates); "
                                      f"continue with: halma train c.yaml --resume --runs-dir {tmp_path}")


def test_final_table_rows_and_the_solitaire_line() -> None:
    r = {"mean_place": 1.25, "opponent_mean_place": 1.75, "win_rate": 0.75, "finish_rate": 0.5, "decided_rate": 1.0,
         "mean_length": 80.4}
    header = ("| opponent | games | win rate | mean place (agent / opponents) | agent finished | games decided "
              "| mean length (plies) |\n|---|---|---|---|---|---|---|\n")
    table = final_table({"random": r, "greedy": dict(r, win_rate=0.0)}, ["random", "greedy"], 4)
    assert table == header + ("| random | 4 | 75.0% | 1.25 / 1.75 | 50.0% | 100.0% | 80 |\n"
                              "| greedy | 4 | 0.0% | 1.25 / 1.75 | 50.0% | 100.0% | 80 |")
    solo = final_table({"random": r, "solo": {"moves": 31.0, "finished": 1.0}}, ["random"], 4)
    assert solo.endswith("| 80 |\n\nsolitaire crossing, policy alone: 31 moves; the optimum is 27")
    unfinished = final_table({"random": r, "solo": {"moves": 30.0, "finished": 0.0}}, ["random"], 4)
    assert unfinished.endswith("\n\nsolitaire crossing, policy alone: 30 moves (unfinished at eval.move_limit); "
                               "the optimum is 27")


def test_graceful_interrupt_asks_once_then_interrupts_and_puts_the_handler_back(capsys) -> None:
    before = signal.getsignal(signal.SIGINT)
    with _GracefulInterrupt() as interrupt:
        assert signal.getsignal(signal.SIGINT) == interrupt._handle
        assert interrupt.requested is False
        interrupt._handle(signal.SIGINT, None)
        assert interrupt.requested is True
        assert capsys.readouterr().err == ("\nhalma train: interrupted: stopping after this update and saving a "
                                           "checkpoint (Ctrl-C again to stop at once, losing the updates since the "
                                           "last checkpoint)\n")
        with pytest.raises(KeyboardInterrupt):
            interrupt._handle(signal.SIGINT, None)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_hangup_asks_for_the_stop_and_never_stops_at_once(capsys, monkeypatch) -> None:
    """SIGHUP (a closed terminal) asks for the stop as SIGTERM does, exit 129.  A second one was Terminated, the
    updates since the last checkpoint lost: but one closed terminal can send two (the shell passes one on, the
    kernel sends another), and a terminal closed after Ctrl-C, while the stop saves its checkpoint, lost it too."""
    from agents.interrupts import Terminated

    hung_up: list[bool] = []
    monkeypatch.setattr(agents.train, "terminal_output_to_devnull", lambda: hung_up.append(True))
    before = signal.getsignal(signal.SIGHUP)
    with _GracefulInterrupt() as interrupt:
        assert signal.getsignal(signal.SIGHUP) == interrupt._handle
        interrupt._handle(signal.SIGHUP, None)
        assert interrupt.signum == signal.SIGHUP and hung_up == [True]
        assert "halma train: stopped by SIGHUP: stopping" in capsys.readouterr().err
        interrupt._handle(signal.SIGHUP, None)  # the second: the stop goes on
        assert interrupt.signum == signal.SIGHUP and hung_up == [True, True] and capsys.readouterr().err == ""
        with pytest.raises(Terminated) as stopped:  # SIGTERM after it stops at once
            interrupt._handle(signal.SIGTERM, None)
        assert stopped.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGHUP) is before
    with _GracefulInterrupt() as interrupt:
        interrupt._handle(signal.SIGINT, None)
        interrupt._handle(signal.SIGHUP, None)  # Ctrl-C, then the window closed: the stop still saves
        assert interrupt.signum == signal.SIGINT and hung_up == [True, True, True]
        with pytest.raises(KeyboardInterrupt):
            interrupt._handle(signal.SIGINT, None)


def test_stdouts_reader_gone_asks_for_the_stop_and_a_full_disk_is_named_as_stdouts(monkeypatch) -> None:
    """A closed pipe (EPIPE: ``| head``, or a ``| tee`` the same Ctrl-C ended) was raised out of the updates: the
    run ended without its checkpoint, exit 1.  Now stdout goes to /dev/null and the run stops after the update,
    saving it.  Another failure is raised, named as stdout's (it was called the run directory's)."""
    output = agents.train._Output()
    interrupt = _GracefulInterrupt(output)
    sent: list[int] = []
    monkeypatch.setattr(agents.train, "to_devnull", sent.append)

    def failing(errno_: int):
        def write(text: str) -> int:
            raise OSError(errno_, os.strerror(errno_))
        return types.SimpleNamespace(write=write, flush=lambda: None)

    monkeypatch.setattr(sys, "stdout", failing(errno.ENOSPC))
    with pytest.raises(OSError) as full:
        output.line("update 1/2")
    message = agents.train._cannot_write(full.value, Path("runs/x"))
    assert message == "cannot write the standard output: No space left on device"
    assert not interrupt.requested and sent == []
    monkeypatch.setattr(sys, "stdout", failing(errno.EPIPE))
    output.line("update 2/2")
    assert interrupt.requested and interrupt.signum is None and sent == [1]


def test_a_message_stderr_cannot_take_is_dropped(monkeypatch) -> None:
    """halma's last line on a stderr that is gone (a closed pipe, a hung-up terminal) raised in its own handler: a
    traceback (to nowhere) and exit 1 in place of 130, 143 or 2."""
    import agents.cli
    import agents.files

    sent: list[int] = []
    monkeypatch.setattr(agents.files, "to_devnull", sent.append)

    def broken(text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def interrupted(name: object, argv: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(write=broken, flush=lambda: None))
    monkeypatch.setattr(agents.cli, "_main", interrupted)
    assert agents.cli.main(["eval"]) == 130 and sent == [2]


def test_graceful_interrupt_without_a_previous_python_handler_restores_the_default(monkeypatch) -> None:
    before = signal.getsignal(signal.SIGINT)
    try:
        monkeypatch.setattr(signal, "signal", _recording_signal(calls := []))
        with _GracefulInterrupt():
            pass
        assert calls[-1] == (signal.SIGINT, signal.default_int_handler)
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGINT, before)


def _recording_signal(calls: list) -> object:
    def fake(signum, handler):
        calls.append((signum, handler))
        return None  # as for a handler installed outside Python

    return fake


def test_graceful_interrupt_outside_the_main_thread_installs_nothing() -> None:
    before = signal.getsignal(signal.SIGINT)
    seen: list = []

    def body() -> None:
        with _GracefulInterrupt() as interrupt:
            seen.append(interrupt._installed)
        seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [False, before]


# --- agents/train.py: train_and_evaluate with a stand-in trainer --------------------------------


class FakeTrainer:
    """What ``train_and_evaluate`` uses of a Trainer, recording how it is used."""

    made: list[FakeTrainer] = []
    fail: Exception | None = None
    start_update = 0
    start_step = 0
    interrupt = 0  # SIGINTs sent to this process during train()

    def __init__(self, cfg, run_dir, **kwargs) -> None:
        if FakeTrainer.fail is not None:
            raise FakeTrainer.fail
        self.cfg, self.run_dir, self.kwargs = cfg, Path(run_dir), kwargs
        self.device = torch.device("cpu")
        self.update, self.global_step = FakeTrainer.start_update, FakeTrainer.start_step
        self.num_iterations = 3
        self.calls: list = []
        self.run_lock = contextlib.nullcontext()  # what halma train holds to the end (lock_run_dir)
        FakeTrainer.made.append(self)

    @property
    def finished(self) -> bool:
        return self.update >= self.num_iterations

    batch_steps = 64

    @property
    def end_step(self) -> int:
        return self.global_step + (self.num_iterations - self.update) * self.batch_steps

    def train(self, stop=None) -> dict:
        self.calls.append("train")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        while self.update < self.num_iterations:
            self.update += 1
            self.global_step += 64
            for _ in range(FakeTrainer.interrupt if self.update == 1 else 0):
                os.kill(os.getpid(), signal.SIGINT)
            self.calls.append(("stop", None if stop is None else stop()))
            if stop is not None and stop():
                break
        return {}

    def close(self) -> None:
        self.calls.append("close")

    def save(self) -> None:
        self.calls.append("save")

    def run_evaluation(self, opponents, games, final=False) -> dict:
        self.calls.append(("run_evaluation", list(opponents), games, final))
        r = {"mean_place": 1.0, "opponent_mean_place": 2.0, "win_rate": 1.0, "finish_rate": 1.0,
             "decided_rate": 1.0, "mean_length": 50.0}
        return {"global_step": self.global_step, **{o: dict(r) for o in opponents}}


@pytest.fixture
def fake_trainer(monkeypatch):
    monkeypatch.setattr(FakeTrainer, "made", [])
    monkeypatch.setattr(agents.ppo, "Trainer", FakeTrainer)
    return FakeTrainer


def test_the_trainer_is_made_as_the_arguments_say(tmp_path: Path, fake_trainer, capsys, monkeypatch) -> None:
    cfg = from_dict(tiny_config())
    args = namespace(runs_dir=str(tmp_path), device="cpu", resume=True, no_final_eval=True)
    kept: list[bool] = []
    monkeypatch.setattr(agents.ppo, "keep_freed_memory", lambda: kept.append(True) or True)
    monkeypatch.setattr(sys, "stderr", TerminalText())  # (elsewhere the run has no bar: "quiet")
    assert train_and_evaluate(0, 1, cfg, args) == 0
    assert kept == [True]  # the command's process keeps freed memory for the updates (agents.ppo)
    [trainer] = fake_trainer.made
    assert trainer.run_dir == tmp_path / "tiny"
    log = trainer.kwargs.pop("log")  # lines that a vanished reader does not stop the run with (agents.train._Output)
    assert isinstance(log.__self__, agents.train._Output) and log.__name__ == "line"
    assert trainer.kwargs == {"device": "cpu", "resume": True, "rank": 0, "world_size": 1,
                              "crossing_cache": tmp_path / ".crossing_cache", "lock_run_dir": True, "quiet": False}
    assert trainer.calls == ["train", ("stop", False), ("stop", False), ("stop", False), "close"]
    out = capsys.readouterr().out
    assert out.startswith(f"training star 2 seats -> {tmp_path / 'tiny'} on cpu\n")
    assert f"trained 192 steps in 0 s; checkpoint {tmp_path / 'tiny' / 'checkpoints' / 'last.pt'}\n" in out
    assert "final evaluation" not in out and "total time" in out


def test_a_resumed_session_reports_the_steps_it_added(tmp_path: Path, fake_trainer, monkeypatch, capsys) -> None:
    monkeypatch.setattr(FakeTrainer, "start_update", 1)
    monkeypatch.setattr(FakeTrainer, "start_step", 64)
    assert train_and_evaluate(0, 1, from_dict(tiny_config()), namespace(runs_dir=str(tmp_path),
                                                                         no_final_eval=True)) == 0
    assert "trained 192 steps (128 of them now) in" in capsys.readouterr().out


def test_a_trainer_that_cannot_start_is_named(tmp_path: Path, fake_trainer, monkeypatch, capsys) -> None:
    cfg, args = from_dict(tiny_config()), namespace(runs_dir=str(tmp_path))
    monkeypatch.setattr(FakeTrainer, "fail", ValueError("no good"))
    assert train_and_evaluate(0, 1, cfg, args) == 2
    assert capsys.readouterr().err == "halma train: error: no good\n"
    assert train_and_evaluate(1, 2, cfg, args) == 2  # every process stops; only process 0 says why
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(FakeTrainer, "fail", PermissionError(13, "Permission denied"))
    assert train_and_evaluate(0, 1, cfg, args) == 2
    assert capsys.readouterr().err == ("halma train: error: cannot write the run directory "
                                       f"{str(tmp_path / 'tiny')!r}: Permission denied\n")
    monkeypatch.setattr(FakeTrainer, "fail", OSError("no strerror"))
    assert train_and_evaluate(0, 1, cfg, args) == 2
    assert capsys.readouterr().err.endswith(": no strerror\n")


def test_a_finished_run_has_nothing_to_do(tmp_path: Path, fake_trainer, monkeypatch, capsys) -> None:
    monkeypatch.setattr(FakeTrainer, "start_update", 3)
    monkeypatch.setattr(FakeTrainer, "start_step", 192)
    cfg = from_dict(tiny_config())
    assert train_and_evaluate(0, 1, cfg, namespace(runs_dir=str(tmp_path))) == 0
    assert fake_trainer.made[-1].calls == ["close"]
    out, err = capsys.readouterr()
    assert out == "" and err == (f"halma train: nothing to do: {tmp_path / 'tiny' / 'checkpoints' / 'last.pt'} is at "
                                 "update 3 (192 steps), the end of ppo.total_steps=192; raise it with --set "
                                 "ppo.total_steps=N to train on\n")
    assert train_and_evaluate(1, 2, cfg, namespace(runs_dir=str(tmp_path))) == 0  # said by process 0 only
    assert capsys.readouterr() == ("", "")
    # short of ppo.total_steps, but no whole rollout of 64 steps fits: not called "the end" of it
    short = from_dict(tiny_config(ppo__total_steps=200))
    assert train_and_evaluate(0, 1, short, namespace(runs_dir=str(tmp_path))) == 0
    assert ("update 3 (192 steps), the last whole rollout (64 steps) before ppo.total_steps=200; raise it with "
            "--set ppo.total_steps=N to train on\n") in capsys.readouterr().err
    monkeypatch.setattr(FakeTrainer, "start_update", 2)  # one update left: trained
    assert train_and_evaluate(0, 1, cfg, namespace(runs_dir=str(tmp_path), no_final_eval=True)) == 0
    assert fake_trainer.made[-1].calls[0] == "train"


def test_with_several_processes_only_process_0_reports(tmp_path: Path, fake_trainer, capsys) -> None:
    cfg = from_dict(tiny_config(eval__final_games=2, eval__final_opponents=["random"]))
    assert train_and_evaluate(1, 2, cfg, namespace(runs_dir=str(tmp_path))) == 0
    trainer = fake_trainer.made[-1]
    assert trainer.calls == ["train", ("stop", None), ("stop", None), ("stop", None), "close"]
    assert trainer.kwargs["rank"] == 1 and trainer.kwargs["world_size"] == 2
    assert capsys.readouterr() == ("", "")
    assert train_and_evaluate(0, 2, cfg, namespace(runs_dir=str(tmp_path), no_final_eval=True)) == 0
    assert capsys.readouterr().out.startswith(f"training star 2 seats -> {tmp_path / 'tiny'} on cpu, 2 processes\n")


def test_ctrl_c_during_training_saves_and_says_how_to_continue(tmp_path: Path, fake_trainer, monkeypatch,
                                                               capsys) -> None:
    monkeypatch.setattr(FakeTrainer, "interrupt", 1)
    args = namespace(runs_dir=str(tmp_path))
    assert train_and_evaluate(0, 1, from_dict(tiny_config()), args) == 130
    trainer = fake_trainer.made[-1]
    assert trainer.calls == ["train", ("stop", True), "close", "save"]
    err = capsys.readouterr().err
    assert err.endswith(f"halma train: stopped at update 1 (64 steps); checkpoint "
                        f"{tmp_path / 'tiny' / 'checkpoints' / 'last.pt'}; continue with: halma train c.yaml "
                        f"--resume --runs-dir {tmp_path}\n")


def test_a_hangup_during_the_stop_s_save_does_not_cut_it_short(tmp_path: Path, fake_trainer, monkeypatch,
                                                                capsys) -> None:
    """Ctrl-C, then the window closed while the stop saved its checkpoint: the handlers were gone by then, and the
    SIGHUP's default action ended the process in the middle of the save.  They now stay until it is done."""
    monkeypatch.setattr(FakeTrainer, "interrupt", 1)
    monkeypatch.setattr(agents.train, "terminal_output_to_devnull", lambda: None)  # (pytest's stdout stays)

    def save_with_a_hangup(self) -> None:
        signal.raise_signal(signal.SIGHUP)  # (its handler runs before this returns)
        self.calls.append("save")

    monkeypatch.setattr(FakeTrainer, "save", save_with_a_hangup)
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)  # (not ignored, as under nohup)
    try:
        assert train_and_evaluate(0, 1, from_dict(tiny_config()), namespace(runs_dir=str(tmp_path))) == 130
    finally:
        signal.signal(signal.SIGHUP, before)
    assert fake_trainer.made[-1].calls == ["train", ("stop", True), "close", "save"]
    assert "halma train: stopped at update 1 (64 steps)" in capsys.readouterr().err


def test_a_reader_gone_during_the_closing_evaluation_is_exit_1(tmp_path: Path, fake_trainer, monkeypatch,
                                                                capsys) -> None:
    """stdout's reader gone after the updates (``| head -2``): the closing evaluation ran on with its lines in
    /dev/null and the command ended 0, as if they had been read; it is 1 now, a closed pipe's, with a word of it."""
    real_line = agents.train._Output.line

    def line_then_gone(self, text: str) -> None:
        if text.startswith("final evaluation"):
            self.reader_gone = True
        real_line(self, text)

    monkeypatch.setattr(agents.train._Output, "line", line_then_gone)
    cfg = from_dict(tiny_config(eval__final_games=2, eval__final_opponents=["random"]))
    assert train_and_evaluate(0, 1, cfg, namespace(runs_dir=str(tmp_path))) == 1
    assert (tmp_path / "tiny" / "final_eval.json").exists()
    assert capsys.readouterr().err.endswith(
        "halma train: the standard output's reader went away, its lines to /dev/null since; the run is complete: "
        f"checkpoint {tmp_path / 'tiny' / 'checkpoints' / 'last.pt'}\n")


@pytest.mark.parametrize(("changes", "flags", "evaluated"), [
    ({"eval__final_games": 2, "eval__final_opponents": ["random", "greedy"]}, {}, True),
    ({"eval__final_games": 2, "eval__final_opponents": ["random"]}, {"no_final_eval": True}, False),
    ({"eval__final_games": 0, "eval__final_opponents": ["random"]}, {}, False),
])
def test_the_closing_evaluation_is_written_and_printed(tmp_path: Path, fake_trainer, capsys, changes, flags,
                                                       evaluated) -> None:
    cfg = from_dict(tiny_config(**changes))
    assert train_and_evaluate(0, 1, cfg, namespace(runs_dir=str(tmp_path), **flags)) == 0
    run = tmp_path / "tiny"
    out = capsys.readouterr().out
    assert (run / "final_eval.json").exists() is evaluated and (run / "final_eval.md").exists() is evaluated
    if not evaluated:
        assert fake_trainer.made[-1].calls[-1] == "close" and "final evaluation" not in out
        return
    assert fake_trainer.made[-1].calls[-1] == ("run_evaluation", ["random", "greedy"], 2, True)
    res = json.loads((run / "final_eval.json").read_text())
    assert res["global_step"] == 192 and res["random"]["win_rate"] == 1.0
    table = final_table(res, ["random", "greedy"], 2)
    assert (run / "final_eval.md").read_text() == table + "\n"
    assert f"policy alone; written to {run / 'final_eval.md'} and final_eval.json:\n{table}\n" in out
    assert (f"cross-check with the arena: halma eval {run / 'checkpoints' / 'last.pt'} random --variant star "
            "--seats 2 --max-plies 30 --games 100\n") in out  # the tiny config's eval.move_limit, 30


@pytest.mark.parametrize("game", [
    {"variant": "star", "num_players": 2},
    {"variant": "star", "num_players": 3, "anti_blocking": False, "play_to_end": False, "stall_limit": 40},
    {"variant": "halma16", "num_players": 2, "anti_blocking": True},
    {"variant": "diamond", "num_players": 3, "play_to_end": True, "anti_blocking": None},
    {"variant": "halma16", "num_players": 2, "repetition_limit": False},  # --rule repetition_limit=none
    {"variant": "star", "num_players": 2, "repetition_limit": 4},
    {"variant": "halma16", "num_players": 2, "repetition_limit": 3},  # the variant's own: no --rule
])
def test_the_printed_cross_check_plays_the_evaluations_game(game: dict) -> None:
    """`halma eval` run with the printed words plays what the closing evaluation played: the config's
    rule options but no training move limit, and eval.move_limit plies as its cap; a path with a space
    is quoted for the shell."""
    import shlex

    from agents.arena import CAP_PER_SEAT, build_rules
    from agents.cli import build_parser
    from agents.train import cross_check_command

    cfg = from_dict(tiny_config(**{f"game__{key}": value for key, value in game.items()}))
    checkpoint = Path("runs") / "my run" / "checkpoints" / "last.pt"
    words = shlex.split(cross_check_command(checkpoint, cfg))
    assert words[:3] == ["halma", "eval", str(checkpoint)]
    args = build_parser(load="eval").parse_args(words[1:])
    assert args.players == [str(checkpoint), cfg.eval.final_opponents[0]] and args.games == 100
    rules = build_rules(args.variant, args.seats, args.rule, args.preset)
    assert rules == cfg.game.rules().replace(move_limit=None, limit_outcome="draw")
    assert (args.max_plies or CAP_PER_SEAT * rules.num_players) == cfg.eval.move_limit


# --- agents/train.py: run() ---------------------------------------------------------------------


def _write_config(tmp_path: Path, **changes) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config(**changes)))
    return str(path)


def test_run_passes_the_config_on_and_quiet_on_to_the_trainer(tmp_path: Path, monkeypatch) -> None:
    """--quiet reaches the trainer as an argument; the config (which the run stores) keeps its progress_bar."""
    seen: list = []
    monkeypatch.setattr(agents.train, "train_and_evaluate", lambda rank, world, cfg, args: seen.append(
        (rank, world, cfg.log.progress_bar, args.quiet)) or 7)
    path = _write_config(tmp_path, log__progress_bar=True)
    assert agents.train.run(namespace(path, overrides=["seed=5"])) == 7
    assert agents.train.run(namespace(path, quiet=True)) == 7
    assert seen == [(0, 1, True, False), (0, 1, True, True)]


def test_run_spawns_the_configured_processes(tmp_path: Path, monkeypatch) -> None:
    seen: list = []
    monkeypatch.setattr(agents.parallel, "spawn", lambda fn, n, cfg, args: seen.append((fn, n, cfg.processes)) or 5)
    assert agents.train.run(namespace(_write_config(tmp_path), overrides=["processes=2"], quiet=True)) == 5
    assert seen == [(agents.train.train_and_evaluate, 2, 2)]


def test_run_interrupted_outside_the_updates_says_where_the_run_stands(tmp_path: Path, monkeypatch, capsys) -> None:
    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.train, "train_and_evaluate", interrupted)
    args = namespace(_write_config(tmp_path), runs_dir=str(tmp_path))
    assert agents.train.run(args) == 130
    err = capsys.readouterr().err
    assert err.startswith("\nhalma train: interrupted; no checkpoint was written yet")


def test_run_names_a_config_that_does_not_load(tmp_path: Path, capsys) -> None:
    assert agents.train.run(namespace(_write_config(tmp_path), overrides=["ppo.gama=1"])) == 2
    assert capsys.readouterr().err.startswith("halma train: ")


def test_a_real_run_with_its_closing_evaluation(tmp_path: Path, capsys) -> None:
    """The CLI end to end, closing evaluation included (the real Trainer's run_evaluation(final=True))."""
    path = _write_config(tmp_path, ppo__total_steps=64, eval__final_games=2, eval__final_opponents=["random"])
    assert agents.train.run(namespace(path, runs_dir=str(tmp_path), quiet=True)) == 0
    res = json.loads((tmp_path / "tiny" / "final_eval.json").read_text())
    assert res["final"] is True and res["update"] == 1 and 0 <= res["random"]["win_rate"] <= 1
    assert "| random | 2 |" in (tmp_path / "tiny" / "final_eval.md").read_text()
    assert "cross-check with the arena" in capsys.readouterr().out


# --- agents/ppo.py: statistics and log lines ---------------------------------------------------


def test_end_reasons_are_named() -> None:
    assert end_reason_name(None) is None and end_reason_name("resign") == "resign"
    assert end_reason_name(0) is None  # the game has not ended
    assert end_reason_name(torch.tensor(1)) == "finished" and end_reason_name(np.int64(4)) == "move_limit"


def test_episode_stats_are_one_entry_per_trained_seat() -> None:
    info = {"places": [[None, None], [2, 1]], "end_reason": ["move_limit", "finished"], "length": [40, 33]}
    returns = np.array([0.5, -0.25])
    assert _episode_stats(info, 1, [0, 1], returns, 2) == [
        {"return": 0.5, "length": 33.0, "place": 2.0, "game_finished": 1.0},
        {"return": -0.25, "length": 33.0, "place": 1.0, "game_finished": 1.0}]
    assert _episode_stats(info, 0, [1], returns, 2) == [  # an undecided seat counts as the last place
        {"return": -0.25, "length": 40.0, "place": 2.0, "game_finished": 0.0}]
    # the batched engine's tensors: places 0 for undecided, end reasons as codes (2: first_finish)
    batched = {"places": torch.tensor([[0, 0, 0], [3, 1, 0]]), "end_reason": torch.tensor([4, 2]),
               "length": torch.tensor([7, 9])}
    assert _episode_stats(batched, 1, range(3), np.zeros(3), 3) == [
        {"return": 0.0, "length": 9.0, "place": p, "game_finished": 1.0} for p in (3.0, 1.0, 3.0)]
    assert _episode_stats(batched, 0, [0], np.zeros(3), 3)[0]["game_finished"] == 0.0


def test_game_stats_are_the_means_of_the_games_that_ended() -> None:
    assert _game_stats([], []) == {}
    episodes = [{"return": 1.0, "length": 10.0, "place": 1.0, "game_finished": 1.0},
                {"return": -1.0, "length": 30.0, "place": 2.0, "game_finished": 0.0}]
    solos = [{"moves": 30.0, "finished": 1.0, "return": 0.5}, {"moves": 40.0, "finished": 0.0, "return": 0.0}]
    assert _game_stats(episodes, []) == {"charts/episodic_return": 0.0, "charts/episodic_length": 20.0,
                                         "charts/mean_place": 1.5, "charts/finish_rate": 0.5, "charts/games": 2}
    assert _game_stats([], solos) == {"charts/solo_moves": 35.0, "charts/solo_finish_rate": 0.5,
                                      "charts/solo_return": 0.25}


def test_status_line_adds_the_solitaire_moves_when_there_are_solitaire_games() -> None:
    stats = {"charts/SPS": 99.6, "charts/episodic_return": -0.5, "charts/episodic_length": 79.5,
             "charts/finish_rate": 0.25, "losses/entropy": 2.0}
    line = "update 1/2 step 64 SPS 100 return -0.500 length 80 finish 0.25 entropy 2.000"
    assert status_line(1, 2, 64, stats) == line
    assert status_line(1, 2, 64, {**stats, "charts/solo_moves": 31.0}) == line + " solo_moves 31.0"
    assert status_line(1, 2, 64, {**stats, "charts/solo_moves": float("nan")}) == line + " solo_moves -"


def test_eval_line_names_each_opponent_evaluated_and_the_solitaire() -> None:
    res = {"global_step": 640, "random": {"win_rate": 0.5, "finish_rate": 0.25, "mean_length": 80.4},
           "solo": {"moves": 31.0, "finished": 0.0}}
    assert eval_line(res, ["random", "greedy"]) == ("eval @ step 640: random: win 50% finish 25% len 80 plies; "
                                                    "solitaire: 31 moves (unfinished)")
    res["solo"]["finished"] = 1.0
    assert eval_line(res, ["random"]).endswith("; solitaire: 31 moves")
    del res["solo"]
    assert eval_line(res, ["random"]) == "eval @ step 640: random: win 50% finish 25% len 80 plies"


def test_config_changes_of_nested_keys_and_flat_names() -> None:
    assert flat_config({"a": {"b": {"c": 1}, "d": 2}, "e": 3}) == {"a.b.c": 1, "a.d": 2, "e": 3}
    assert config_changes({"a": {"b": 1}}, {"a": {"b": 2, "c": None}}) == ["a.b 1 -> 2", "a.c (none) -> None"]


def _fake_trainer(cfg, global_step: int = 0, main: bool = True, writer=None, quiet: bool = False
                  ) -> types.SimpleNamespace:
    lines: list[str] = []
    net = torch.nn.Linear(1, 1)
    return types.SimpleNamespace(cfg=cfg, global_step=global_step, main=main, writer=writer, update=1, quiet=quiet,
                                 num_iterations=5, log=lines.append, lines=lines,
                                 optimizer=torch.optim.Adam(net.parameters(), lr=0.25))


def test_evaluations_fall_due_once_per_eval_every_steps() -> None:
    progress = _Progress(_fake_trainer(from_dict(tiny_config(eval__every=100, eval__games=2)), 250), 1000)
    assert progress.next_eval == 300
    assert [progress.evaluation_due(s) for s in (299, 300, 300, 399, 450, 499, 500)] == [
        False, True, False, False, True, False, True]
    assert progress.next_eval == 600
    assert _Progress(_fake_trainer(from_dict(tiny_config(eval__every=0, eval__games=2))), 10).next_eval is None
    never = _Progress(_fake_trainer(from_dict(tiny_config(eval__every=100, eval__games=0))), 10)
    assert never.next_eval is None and not never.evaluation_due(10 ** 6)


class Recorder:
    """A stand-in TensorBoard writer."""

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs, self.scalars, self.texts, self.flushed, self.closed = args, kwargs, [], [], 0, 0

    def add_scalar(self, key, value, step) -> None:
        self.scalars.append((key, value, step))

    def add_text(self, key, text, step=None) -> None:
        self.texts.append((key, text, step))

    def flush(self) -> None:
        self.flushed += 1

    def close(self) -> None:
        self.closed += 1


def test_progress_logs_sps_the_learning_rate_and_the_status_line() -> None:
    writer = Recorder()
    trainer = _fake_trainer(from_dict(tiny_config(log__status_every=1e-9)), 64, writer=writer)
    progress = _Progress(trainer, 320)
    trainer.global_step = 128
    stats = {"losses/entropy": 1.0}
    progress.log(stats, 64)
    assert stats["charts/learning_rate"] == 0.25 and stats["charts/SPS"] > 0  # 64 steps since the start
    assert [(k, s) for k, _, s in writer.scalars] == [("losses/entropy", 128), ("charts/SPS", 128),
                                                      ("charts/learning_rate", 128)]
    assert trainer.lines == [status_line(1, 5, 128, stats)]
    progress.close()
    assert writer.flushed == 1
    silent = _fake_trainer(from_dict(tiny_config(log__status_every=1e9)))
    progress = _Progress(silent, 320)
    progress.log({}, 64)
    assert silent.lines == []


def test_the_progress_bar_counts_the_steps(capsys) -> None:
    trainer = _fake_trainer(from_dict(tiny_config(log__progress_bar=True, log__status_every=1e-9)), 64)
    progress = _Progress(trainer, 320)
    assert progress.bar is not None and progress.bar.n == 64 and progress.bar.total == 320
    progress.log({"charts/episodic_return": 0.5}, 64)
    assert progress.bar.n == 128 and trainer.lines == []  # the bar, not the status line
    progress.close()
    assert progress.bar.disable  # closed
    assert _Progress(_fake_trainer(trainer.cfg, main=False), 320).bar is None  # process 0 alone shows one
    assert _Progress(_fake_trainer(trainer.cfg, quiet=True), 320).bar is None  # halma train --quiet
    capsys.readouterr()


# --- agents/ppo.py: weights and random states ---------------------------------------------------


def test_weights_digest_follows_the_weights() -> None:
    torch.manual_seed(0)
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert weights_digest(a) == weights_digest(b) and len(weights_digest(a)) == 64
    with torch.no_grad():
        b.bias[1] += 1e-6
    assert weights_digest(a) != weights_digest(b)
    check_same_weights([weights_digest(a)], 1)
    with pytest.raises(RuntimeError, match="at update 4"):
        check_same_weights([weights_digest(a), weights_digest(b)], 4)


def test_random_states_round_trip_even_as_lists() -> None:
    gen = np.random.default_rng(5)
    state = rng_state(gen)
    assert set(state) == {"python", "numpy", "torch"} | ({"cuda"} if torch.cuda.is_available() else set())
    first = (random.random(), gen.random(), torch.rand(2))
    set_rng_state(state, gen)
    assert (random.random(), gen.random()) == first[:2] and torch.equal(torch.rand(2), first[2])
    # a checkpoint may hold the python state's tuples as lists
    listed = dict(state, python=[list(x) if isinstance(x, tuple) else x for x in state["python"]])
    set_rng_state(listed, gen)
    assert (random.random(), gen.random()) == first[:2] and torch.equal(torch.rand(2), first[2])


# --- agents/ppo.py: the trainer's files, resume and init_from ---------------------------------


def _train(cfg_data: dict, run_dir: Path, **kwargs) -> Trainer:
    trainer = Trainer(from_dict(cfg_data), run_dir, **{"log": quiet, **kwargs})
    trainer.train()
    trainer.close()
    return trainer


def test_num_iterations_are_whole_rollouts_and_at_least_one(tmp_path: Path) -> None:
    assert Trainer(from_dict(tiny_config(ppo__total_steps=127)), tmp_path / "a", log=quiet).num_iterations == 1
    cfg = from_dict(tiny_config(ppo__total_steps=(4 + 2) * 16 * 3 - 1, env__solo_envs=2))
    assert Trainer(cfg, tmp_path / "b", log=quiet).num_iterations == 2


def test_checkpoints_snapshots_and_the_annealed_learning_rate(tmp_path: Path) -> None:
    data = tiny_config(checkpoint__every=2, checkpoint__keep=5, pool__snapshot_every=2, ppo__learning_rate=0.003)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    stats = trainer.train()
    trainer.close()
    ckpts, snaps = tmp_path / "run" / "checkpoints", tmp_path / "run" / "snapshots"
    # every checkpoint.every updates, and at the last one; a snapshot every pool.snapshot_every
    assert sorted(p.name for p in ckpts.iterdir()) == ["last.pt", "update_000002.pt", "update_000003.pt"]
    assert sorted(p.name for p in snaps.iterdir()) == ["snap_000002.pt"]
    assert trainer.pool.snapshot_paths == [str(snaps / "snap_000002.pt")]
    # the learning rate falls linearly: (1 - (update - 1) / updates) of ppo.learning_rate
    assert stats["charts/learning_rate"] == pytest.approx(0.003 / 3)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.003 / 3)
    assert {"perf/rollout_s", "perf/update_s", "charts/SPS"} <= set(stats)
    last = load_checkpoint(ckpts / "last.pt")
    assert last["update"] == 3 and last["global_step"] == 3 * 64 and last["config"] == trainer.cfg.to_dict()
    assert last["network"] == vars(trainer.cfg.network) and last["variant"] == "star" and last["num_players"] == 2
    # the pool relative to the run directory: found again from another working directory
    assert last["extra"] == {"snapshots": [os.path.join("snapshots", "snap_000002.pt")], "ratings": {}}
    assert "rng_ranks" not in last and set(last["rng"]) >= {"python", "numpy", "torch"}
    assert last["rng"]["numpy"] == trainer.np_rng.bit_generator.state
    numbered = load_checkpoint(ckpts / "update_000002.pt")
    assert numbered["update"] == 2 and not {"optimizer", "rng", "extra"} & set(numbered)
    snap = load_checkpoint(snaps / "snap_000002.pt")
    assert snap["update"] == 2 and "optimizer" not in snap
    steady = Trainer(from_dict(dict(data, name="steady", ppo=dict(data["ppo"], anneal_lr=False))),
                     tmp_path / "steady", log=quiet)
    assert steady.train()["charts/learning_rate"] == 0.003


def test_a_process_other_than_0_writes_and_says_nothing(tmp_path: Path) -> None:
    lines: list[str] = []
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=128)), tmp_path / "run", log=lines.append, rank=1,
                      world_size=2)
    # its own games and samples; python and torch seeded apart from process 0's after the shared network
    assert trainer.np_rng.bit_generator.state == np.random.default_rng([3, 1]).bit_generator.state
    after = (random.random(), torch.rand(3))
    random.seed(3 * 1_000_003 + 1)
    torch.manual_seed(3 * 1_000_003 + 1)
    assert after[0] == random.random() and torch.equal(after[1], torch.rand(3))
    trainer.train()
    trainer.close()
    assert trainer.writer is None and lines == []
    assert trainer.global_step == 2 * 4 * 16  # the steps of every process's games
    assert trainer.save() == tmp_path / "run" / "checkpoints" / "last.pt"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["run"]
    assert len(trainer.pool.snapshot_paths) == 2  # in memory, as process 0 holds them


def test_process_0_is_seeded_with_the_seed(tmp_path: Path) -> None:
    trainer = Trainer(from_dict(dict(tiny_config(), seed=11)), tmp_path / "r", log=quiet,
                      crossing_cache=tmp_path / "cache")
    assert trainer.np_rng.bit_generator.state == np.random.default_rng(11).bit_generator.state
    assert trainer.crossing_cache == tmp_path / "cache" and trainer.main and trainer.rank == 0
    assert Trainer(from_dict(tiny_config()), tmp_path / "s", log=quiet).crossing_cache is None


def test_a_resume_brings_back_ratings_snapshots_and_random_streams(tmp_path: Path) -> None:
    run = tmp_path / "run"
    trainer = _train(tiny_config(ppo__total_steps=128), run)
    trainer.ratings = {"agent": {"mu": 30.0, "sigma": 5.0}}
    trainer.save()  # last.pt again, with the ratings
    saved = load_checkpoint(run / "checkpoints" / "last.pt")
    (run / "snapshots" / "snap_000001.pt").unlink()  # a snapshot no longer there is left out of the pool
    lines: list[str] = []
    resumed = Trainer(from_dict(tiny_config(log__status_every=5.0)), run, resume=True, log=lines.append)
    assert resumed.ratings == {"agent": {"mu": 30.0, "sigma": 5.0}}
    assert resumed.pool.snapshot_paths == [str(run / "snapshots" / "snap_000002.pt")]
    # every stream as saved, torch's too: loading the snapshot built a network, whose init draws from it
    assert resumed.np_rng.bit_generator.state == saved["rng"]["numpy"]
    assert torch.equal(torch.get_rng_state(), saved["rng"]["torch"])
    assert random.getstate() == saved["rng"]["python"]
    assert lines == [f"resumed {run} at update 2, step 128",
                     "opponent pool: 1 of the checkpoint's snapshots missing, left out: snapshots/snap_000001.pt "
                     f"(looked in {run / 'snapshots'})",
                     "config changed since the checkpoint (checkpoint -> now): log.status_every 1000000000.0 -> 5.0, "
                     "ppo.total_steps 128 -> 192"]
    assert resumed.resume_changes == ["log.status_every 1000000000.0 -> 5.0", "ppo.total_steps 128 -> 192"]
    # a process the run did not have: new streams, drawn from the seed, its rank and the update
    (run / "snapshots" / "snap_000002.pt").unlink()
    other = Trainer(from_dict(tiny_config()), run, resume=True, log=quiet, rank=1, world_size=2)
    assert other.np_rng.bit_generator.state == np.random.default_rng([3, 1, 2]).bit_generator.state
    drawn = torch.rand(3)
    torch.manual_seed(3 * 1_000_003 + 1 + 7919 * 2)
    assert torch.equal(drawn, torch.rand(3))
    assert other.update == 2 and other.global_step == 128


def test_a_resume_needs_a_training_checkpoint(tmp_path: Path) -> None:
    from agents.checkpoint import save_checkpoint

    run = tmp_path / "run"
    trainer = _train(tiny_config(ppo__total_steps=64), run)
    full = load_checkpoint(run / "checkpoints" / "last.pt")
    for key in ("optimizer", "rng", "global_step", "update", "extra"):
        save_checkpoint(run / "checkpoints" / "last.pt", {k: v for k, v in full.items() if k != key})
        with pytest.raises(ValueError, match=rf"--resume: '.*last.pt' is not a training checkpoint \(no {key}\)"):
            Trainer(from_dict(tiny_config()), run, resume=True, log=quiet)
    assert trainer.update == 1


def test_init_from_says_where_it_started(tmp_path: Path) -> None:
    _train(tiny_config(ppo__total_steps=128), tmp_path / "first")
    path = str(tmp_path / "first" / "checkpoints" / "update_000002.pt")
    lines: list[str] = []
    data = dict(tiny_config(), init_from=path)
    trainer = Trainer(from_dict(data), tmp_path / "second", log=lines.append)
    assert lines == [f"initialised from {path} (its update 2, step 128)"]
    assert trainer.update == 0 and trainer.global_step == 0
    wider = dict(tiny_config(), init_from=path)
    wider["network"] = dict(wider["network"], channels=16)
    with pytest.raises(ValueError, match="^init_from: .*network"):
        Trainer(from_dict(wider), tmp_path / "third", log=quiet)


def test_tensorboard_gets_the_hyperparameters_or_the_changes_a_resume_made(tmp_path: Path, monkeypatch) -> None:
    import torch.utils.tensorboard

    monkeypatch.setattr(torch.utils.tensorboard, "SummaryWriter", Recorder)
    run = tmp_path / "run"
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=64, log__tensorboard=True)), run, log=quiet)
    assert trainer.writer.args == (str(run / "tb"),)
    [(key, text, _)] = trainer.writer.texts
    assert key == "hyperparameters" and text.startswith("|param|value|\n|-|-|\n|name|tiny|\n|seed|3|\n")
    trainer.train()
    writer = trainer.writer
    trainer.close()
    assert writer.closed == 1 and writer.flushed == 1
    assert trainer.writer is None  # nothing after close (the final evaluation) writes to the closed log
    assert ("losses/entropy", 64) in [(k, s) for k, _, s in writer.scalars]
    same = Trainer(from_dict(tiny_config(ppo__total_steps=128, log__tensorboard=True, log__status_every=5.0)), run,
                   resume=True, log=quiet)
    assert same.writer.texts == [("resume_config_changes",
                                  "- log.status_every 1000000000.0 -> 5.0\n- ppo.total_steps 64 -> 128", 64)]
    same.close()
    plain = Trainer(from_dict(tiny_config(ppo__total_steps=128)), run, resume=True, log=quiet)
    assert plain.writer is None  # log.tensorboard off


def test_a_resume_with_the_same_config_writes_no_changes(tmp_path: Path, monkeypatch) -> None:
    import torch.utils.tensorboard

    monkeypatch.setattr(torch.utils.tensorboard, "SummaryWriter", Recorder)
    data = tiny_config(ppo__total_steps=128, log__tensorboard=True)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    trainer.train(stop=lambda: True)  # one update of two
    trainer.close()
    lines: list[str] = []
    resumed = Trainer(from_dict(data), tmp_path / "run", resume=True, log=lines.append)
    assert resumed.writer.texts == [] and resumed.resume_changes == [] and len(lines) == 1


def test_only_the_runs_own_numbered_checkpoints_are_pruned_oldest_number_first(tmp_path: Path) -> None:
    """``checkpoint.keep`` prunes ``update_NNNNNN.pt`` alone: the pattern ``update_*.pt`` took a user's copy
    beside them, and the names' order put update 1,000,000 before 999,999."""
    run = tmp_path / "run"
    trainer = Trainer(from_dict(tiny_config(ppo__total_steps=128)), run, log=quiet)
    trainer.train()  # updates 1 and 2, keep 2
    checkpoints = run / "checkpoints"
    for name in ("update_000001_keep.pt", "update_7.pt", "update_best.pt"):
        (checkpoints / name).write_bytes(b"the user's")
    for update in (999_999, 1_000_000):
        trainer.update = update
        trainer.save()
    trainer.close()
    assert sorted(p.name for p in checkpoints.iterdir()) == [
        "last.pt", "update_000001_keep.pt", "update_1000000.pt", "update_7.pt", "update_999999.pt", "update_best.pt"]


def test_a_resume_that_cannot_write_its_config_leaves_the_old_one_whole(tmp_path: Path) -> None:
    """Every resume rewrites config.yaml. A write that fails part way (a file-size limit below its size, as a
    full disk would) used to leave its first kilobyte, which the next ``halma train run/config.yaml --resume``
    refused as YAML; now the old file stays, with no temporary file beside it."""
    import subprocess
    import sys

    run = tmp_path / "run"
    data = tiny_config(ppo__total_steps=128)
    trainer = Trainer(from_dict(data), run, log=quiet)
    trainer.train(stop=lambda: True)  # one update of two, then a checkpoint
    trainer.close()
    before = (run / "config.yaml").read_bytes()
    assert len(before) > 1024
    resume = ("import json, resource, sys\n"
              "from agents.config import from_dict\n"
              "from agents.ppo import Trainer\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
              "Trainer(from_dict(json.loads(sys.argv[1])), sys.argv[2], resume=True, log=print)\n")
    done = subprocess.run([sys.executable, "-c", resume, json.dumps(data), str(run)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "OSError: [Errno 27] File too large" in done.stderr
    assert (run / "config.yaml").read_bytes() == before
    assert sorted(p.name for p in run.iterdir()) == ["checkpoints", "config.yaml", "snapshots"]


# --- agents/ppo.py: evaluation during training ------------------------------------------------


def _fake_evaluate(calls: list, win_rate: float, draw_rate: float = 0.0):
    def evaluate(net, cfg, opponent, games, seed, device):
        calls.append((opponent, games, seed, net.training))
        return {"win_rate": win_rate, "draw_rate": draw_rate, "mean_place": 1.5, "opponent_mean_place": 1.5,
                "finish_rate": 0.5, "decided_rate": 1.0, "mean_length": 60.0}

    return evaluate


def test_run_evaluation_rates_the_agent_and_appends_to_eval_jsonl(tmp_path: Path, monkeypatch) -> None:
    from openskill.models import PlackettLuce

    calls: list = []
    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate(calls, 0.5))
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    trainer.writer = Recorder()
    trainer.update, trainer.global_step = 2, 128
    trainer.net.eval()
    res = trainer.run_evaluation(["random", "greedy"], 4)
    assert [c[:3] for c in calls] == [("random", 4, 3 + 7919 * 3), ("greedy", 4, 3 + 7919 * 3)]
    assert trainer.net.training  # back to training
    # the agent's rating from each opponent's games in turn (2 of 4 won: the first two)
    model = PlackettLuce()
    me = model.rating()
    expected = {}
    for opp in ("random", "greedy"):
        them = model.rating()
        for ranks in ([1, 2], [1, 2], [2, 1], [2, 1]):
            [me], [them] = model.rate([[me], [them]], ranks=ranks)
        expected[opp] = {"mu": them.mu, "sigma": them.sigma}
        assert res[opp]["rating_agent"] == pytest.approx(me.ordinal())
    expected["agent"] = {"mu": me.mu, "sigma": me.sigma}
    assert trainer.ratings.keys() == expected.keys()
    assert all(trainer.ratings[k] == pytest.approx(v) for k, v in expected.items())
    assert res["global_step"] == 128 and res["update"] == 2 and res["final"] is False and "solo" not in res
    assert json.loads((tmp_path / "run" / "eval.jsonl").read_text()) == res and trainer.eval_history == [res]
    scalars = {k: v for k, v, s in trainer.writer.scalars if s == 128}
    assert scalars["eval/random/win_rate"] == 0.5 and scalars["eval/greedy/mean_length"] == 60.0
    assert scalars["eval/rating_ordinal"] == pytest.approx(me.mu - 3 * me.sigma)
    # the next evaluation goes on from the ratings so far; the file grows
    res2 = trainer.run_evaluation(["random"], 1, final=True)
    # the final evaluation at the same update plays other games (the same seed replayed the last ones)
    assert calls[-1][:3] == ("random", 1, 3 + 7919 * 3 + 1)
    them = model.rating(**expected["random"])
    [me], [them] = model.rate([[me], [them]], ranks=[2, 1])  # 0.5 of 1 game rounds to 0 wins
    assert res2["random"]["rating_agent"] == pytest.approx(me.ordinal()) and res2["final"] is True
    assert len((tmp_path / "run" / "eval.jsonl").read_text().splitlines()) == 2


def test_a_draw_in_the_evaluation_rates_as_a_tie(tmp_path: Path, monkeypatch) -> None:
    """SPEC §5: in rated games a draw counts as half a win. The evaluation's draws (first place shared,
    at the cap) are ties in the agent's rating, not losses."""
    from openskill.models import PlackettLuce

    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate([], 0.25, draw_rate=0.5))
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    res = trainer.run_evaluation(["random"], 4)
    model = PlackettLuce()
    me, them = model.rating(), model.rating()
    for ranks in ([1, 2], [1, 1], [1, 1], [2, 1]):  # one win, two draws, one loss
        [me], [them] = model.rate([[me], [them]], ranks=ranks)
    assert res["random"]["rating_agent"] == pytest.approx(me.ordinal())
    assert res["random"]["draw_rate"] == 0.5


def test_run_evaluation_adds_the_solitaire_when_training_has_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate([], 1.0))
    monkeypatch.setattr(agents.ppo, "evaluate_solo", lambda net, cfg, device: {"moves": 33.0, "finished": 1.0})
    trainer = Trainer(from_dict(tiny_config(env__solo_envs=2)), tmp_path / "run", log=quiet)
    trainer.writer = Recorder()
    res = trainer.run_evaluation(["random"], 1)
    assert res["solo"] == {"moves": 33.0, "finished": 1.0}
    assert ("eval/solo_moves", 33.0, 0) in trainer.writer.scalars
    bare = Trainer(from_dict(tiny_config()), tmp_path / "bare", log=quiet)
    assert "solo" not in bare.run_evaluation([], 1) and "agent" not in bare.ratings


def test_evaluations_during_training_are_logged(tmp_path: Path, monkeypatch) -> None:
    calls: list = []
    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate(calls, 1.0))
    lines: list[str] = []
    trainer = Trainer(from_dict(tiny_config(eval__every=100, eval__games=2, eval__opponents=["random"])),
                      tmp_path / "run", log=lines.append)
    trainer.train()
    trainer.close()
    # steps 64, 128, 192: due at 128 (the first past 100); the next at 200 is not reached
    assert [c[:2] for c in calls] == [("random", 2)]
    assert lines[0] == "eval @ step 128: random: win 100% finish 50% len 60 plies"
    # status_every is far off (1e9 s): the last updates' line comes when the run ends (their games were never
    # reported before)
    assert len(lines) == 2 and lines[1].startswith("update 3/3 step 192 SPS ")
    assert [json.loads(x)["update"] for x in (tmp_path / "run" / "eval.jsonl").read_text().splitlines()] == [2]


# --- agents/ppo.py: environments and the C library's malloc --------------------------------------


class FakeMallopt:
    def __init__(self, answers: list[int]) -> None:
        self.answers, self.calls = answers, []

    def __call__(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return self.answers[len(self.calls) - 1]


@pytest.mark.parametrize(("answers", "taken"), [([1, 1], True), ([1, 0], False), ([0, 1], False)])
def test_keep_freed_memory_sets_glibcs_mmap_and_trim_thresholds(monkeypatch, answers: list[int],
                                                                 taken: bool) -> None:
    import ctypes

    mallopt = FakeMallopt(answers)
    monkeypatch.setattr(agents.ppo.ctypes, "CDLL", lambda name: types.SimpleNamespace(mallopt=mallopt))
    assert agents.ppo.keep_freed_memory() is taken
    # M_MMAP_THRESHOLD (-3) to 32 MiB, then M_TRIM_THRESHOLD (-1) to the most an int holds: never trim
    assert mallopt.calls == [(-3, 32 * 2 ** 20), (-1, 2 ** 31 - 1)][: 1 if answers[0] == 0 else 2]
    assert mallopt.argtypes == [ctypes.c_int, ctypes.c_int] and mallopt.restype is ctypes.c_int


def test_keep_freed_memory_without_such_a_library_changes_nothing(monkeypatch) -> None:
    def missing(name):
        raise OSError("no C library")

    monkeypatch.setattr(agents.ppo.ctypes, "CDLL", missing)
    assert agents.ppo.keep_freed_memory() is False
    monkeypatch.setattr(agents.ppo.ctypes, "CDLL", lambda name: types.SimpleNamespace())
    assert agents.ppo.keep_freed_memory() is False


def test_the_engine_auto_is_scalar_with_bots_and_batched_without() -> None:
    from agents.ppo import make_env, make_solo_env
    from agents.vecgame import ScalarBatchedGame
    from halma_env.batched import BatchedGame

    cpu = torch.device("cpu")
    selfplay = from_dict(tiny_config(env__engine="auto"))
    env = make_env(selfplay, cpu, seed=0)
    assert type(env) is BatchedGame and env.batch_size == 4
    assert make_env(selfplay, cpu, seed=0, num_envs=2).batch_size == 2
    bots = tiny_config(env__engine="auto", pool__bot_prob=0.5, pool__self_prob=0.5, pool__snapshot_prob=0.0)
    bots["pool"]["bots"] = ["random"]
    env = make_env(from_dict(bots), cpu, seed=0)
    assert type(env) is ScalarBatchedGame and env.batch_size == 4
    assert type(make_env(from_dict(tiny_config(env__engine="batched")), cpu, seed=0)) is BatchedGame
    solo = make_solo_env(from_dict(tiny_config(env__solo_envs=3)), cpu, seed=0)
    assert solo.batch_size == 3 and make_solo_env(selfplay, cpu, seed=0, num_envs=2).batch_size == 2


# --- agents/ppo.py: the greedy evaluation -------------------------------------------------------


class Forward(torch.nn.Module):
    """A stand-in network whose greedy move is the one that goes furthest toward the goal (rows of the
    canonical frame), the first such in the legal list: a player that wins some games and loses others."""

    def __init__(self, variant: str, seats: int) -> None:
        super().__init__()
        from halma_env.layout import layout

        lay = layout(variant, seats)
        rows = torch.tensor([float(r) for r, _ in lay.geometry.grid])
        goal = rows[list(lay.goals[0])]
        tip = goal.min() if goal.mean() < rows.mean() else goal.max()  # the goal's far row
        distance = (rows - tip).abs()
        self.progress = (distance[:, None] - distance[None, :]).flatten()  # action src * holes + dst
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, obs, legal, valid):
        logits = torch.where(valid, self.progress[legal], torch.tensor(-1e9))
        return logits, torch.zeros(len(legal))


def _reference_games(cfg, net: Forward, opponent: str, games: int, seed: int) -> list:
    """The games ``evaluate`` documents: the learner in seat i % n of game i, the first seat rotating
    every n games, the opponent (seeded seed + i) in the others, eval.move_limit plies as a draw."""
    from halma_env import Game
    from halma_env.encoding import encoding

    n = cfg.game.num_players
    enc = encoding(cfg.game.variant, n)
    rules = cfg.game.rules().replace(move_limit=cfg.eval.move_limit, limit_outcome="draw")
    out = []
    for i in range(games):
        game, seat, bot = Game(rules.replace(first_seat=(i // n) % n)), i % n, agents.ppo.make_bot(opponent, seed + i)
        while not game.is_over:
            if game.to_move == seat:
                moves = game.legal_moves()
                score = [float(net.progress[enc.encode_move(seat, m.src, m.dst)]) for m in moves]
                game.play(moves[score.index(max(score))])
            else:
                game.play(bot.select_move(game))
        out.append((game, seat))
    return out


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_evaluate_plays_and_scores_the_documented_games(opponent: str) -> None:
    from agents.ppo import evaluate

    cfg = from_dict(tiny_config(eval__move_limit=200))
    net = Forward("star", 2)
    res = evaluate(net, cfg, opponent, 4, seed=9, device=torch.device("cpu"))
    played = _reference_games(cfg, net, opponent, 4, seed=9)
    n = 2
    wins = [g.places[s] == 1 and g.places.count(1) == 1 for g, s in played]
    if opponent == "random":  # one win, three draws at eval.move_limit (both seats placed 1)
        assert sum(wins) == 1 and sum(g.ply == 200 for g, _ in played) == 3
    else:  # four losses
        assert not any(wins) and all(g.ply < 200 for g, _ in played)
    draws = [g.places[s] == 1 and g.places.count(1) > 1 for g, s in played]
    assert sum(draws) == (3 if opponent == "random" else 0)
    assert res == pytest.approx({
        "win_rate": sum(wins) / 4,
        "draw_rate": sum(draws) / 4,
        "mean_place": sum(g.places[s] or n for g, s in played) / 4,
        "opponent_mean_place": sum(np.mean([q or n for k, q in enumerate(g.places) if k != s])
                                   for g, s in played) / 4,
        "finish_rate": sum(g.status[s] == "finished" for g, s in played) / 4,
        "decided_rate": sum(None not in g.places and len(set(g.places)) == n for g, s in played) / 4,
        "mean_length": sum(g.ply for g, _ in played) / 4})


# --- agents/train.py: halma bench train -----------------------------------------------------------


def test_the_bench_config_is_pure_self_play_with_nothing_on_the_way() -> None:
    cfg = agents.train.bench_config("cpu", "scalar", threads=2, processes=4, seed=7)
    default = from_dict(default_dict())
    assert (cfg.name, cfg.seed, cfg.device, cfg.torch_threads, cfg.processes) == ("bench", 7, "cpu", 2, 4)
    assert cfg.env.engine == "scalar" and cfg.env.num_envs == default.env.num_envs
    assert (cfg.pool.self_prob, cfg.pool.snapshot_prob, cfg.pool.bot_prob) == (1.0, 0.0, 0.0)
    assert cfg.eval.every == 0 and cfg.eval.final_games == 0
    assert (cfg.log.progress_bar, cfg.log.tensorboard, cfg.log.status_every) == (False, False, 1e9)
    assert cfg.checkpoint.every == 10 ** 9 and cfg.ppo == default.ppo
    plain = agents.train.bench_config()
    assert (plain.device, plain.env.engine, plain.torch_threads, plain.processes, plain.seed) == (
        "cpu", "batched", 1, 1, 0)


def test_the_bench_loop_times_the_updates_after_the_first(monkeypatch) -> None:
    cfg = agents.train.bench_config("cpu", "batched")
    cfg.env.num_envs, cfg.ppo.num_steps = 4, 8
    cfg.network.channels, cfg.network.blocks, cfg.network.pair_dim, cfg.network.value_hidden = 4, 1, 4, 4
    steps, elapsed, cpu = agents.train.bench_loop(0, 1, cfg, 0.0)
    assert steps == 4 * 8  # the warm-up update, then one more before the clock is read
    assert 0 < elapsed < 30 and 0 < cpu < 2 * elapsed + 0.5
    assert cfg.ppo.total_steps == 4 * 8 * 10 ** 6
    steps, elapsed, cpu = agents.train.bench_loop(0, 1, cfg, 0.5)  # updates until 0.5 s have passed
    assert steps % (4 * 8) == 0 and 0.5 <= elapsed < 30 and 0 < cpu < 2 * elapsed + 0.5


def test_each_process_and_each_session_plays_its_own_games(tmp_path: Path, monkeypatch) -> None:
    """The games' seeds: apart between processes, between a run and its resume, and between the
    solitaire and the other games (the same games replayed would train on the same openings again)."""
    seeds: list[tuple[str, int, int]] = []
    real_env, real_solo = agents.ppo.make_env, agents.ppo.make_solo_env

    def make_env(cfg, device, seed, num_envs=None):
        seeds.append(("env", seed, num_envs))
        return real_env(cfg, device, seed, num_envs)

    def make_solo_env(cfg, device, seed, num_envs=None):
        seeds.append(("solo", seed, num_envs))
        return real_solo(cfg, device, seed, num_envs)

    monkeypatch.setattr(agents.ppo, "make_env", make_env)
    monkeypatch.setattr(agents.ppo, "make_solo_env", make_solo_env)
    data = tiny_config(env__solo_envs=2, ppo__total_steps=(4 + 2) * 16 * 2)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    trainer.train(stop=lambda: True)
    trainer.close()
    Trainer(from_dict(data), tmp_path / "run", resume=True, log=quiet).train()
    Trainer(from_dict(data), tmp_path / "other", log=quiet, rank=1, world_size=2).train(stop=lambda: True)
    kinds = [(kind, n) for kind, _, n in seeds]
    assert kinds == [("env", 4), ("solo", 2), ("env", 4), ("solo", 2), ("env", 2), ("solo", 1)]
    assert len({seed for _, seed, _ in seeds}) == 6


def test_several_processes_are_for_the_cpu_alone(tmp_path: Path, monkeypatch) -> None:
    # a device other than the CPU without needing one: the check comes before anything runs on it
    monkeypatch.setattr(agents.ppo, "check_device", lambda name, what: torch.device("meta"))
    with pytest.raises(ValueError, match="^processes: 2 data-parallel processes run on the CPU; on meta use "
                                         "processes: 1$"):
        Trainer(from_dict(tiny_config()), tmp_path / "two", log=quiet, world_size=2)
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "one", log=quiet)  # one process: any device
    assert trainer.device.type == "meta"


def test_device_blanks_are_dropped_and_an_empty_device_is_refused(tmp_path: Path) -> None:
    # the config's device and --device are read as check_device reads them, blanks aside, and recorded so
    assert from_dict({**tiny_config(), "device": " cpu "}).device == "cpu"
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "spaced", device=" cpu", log=quiet)
    assert trainer.cfg.device == "cpu"
    assert yaml.safe_load((tmp_path / "spaced" / "config.yaml").read_text())["device"] == "cpu"
    for empty in ("", "  "):  # was taken as "no --device given": the config's device ran without a word
        with pytest.raises(ValueError, match=f"^--device must be a torch device such as cpu, cuda or cuda:1, "
                                             f"got {empty!r}$"):
            Trainer(from_dict(tiny_config()), tmp_path / "empty", device=empty, log=quiet)
        assert not (tmp_path / "empty").exists()


def test_the_run_directory_is_made_with_its_parents_or_taken_as_it_is(tmp_path: Path) -> None:
    Trainer(from_dict(tiny_config()), tmp_path / "runs" / "deep" / "tiny", log=quiet)
    assert (tmp_path / "runs" / "deep" / "tiny" / "config.yaml").is_file()
    (tmp_path / "empty").mkdir()  # a directory without a run in it is used
    Trainer(from_dict(tiny_config()), tmp_path / "empty", log=quiet)
    assert (tmp_path / "empty" / "config.yaml").is_file()


def test_a_resume_of_a_finished_run_leaves_its_directory_alone(tmp_path: Path, monkeypatch) -> None:
    import torch.utils.tensorboard

    monkeypatch.setattr(torch.utils.tensorboard, "SummaryWriter", Recorder)
    run = tmp_path / "run"
    _train(tiny_config(ppo__total_steps=64), run)
    config = (run / "config.yaml").read_text()
    done = Trainer(from_dict(tiny_config(ppo__total_steps=64, log__tensorboard=True, log__status_every=5.0)), run,
                   resume=True, log=quiet)
    assert done.update == done.num_iterations == 1
    assert done.writer is None and (run / "config.yaml").read_text() == config and not (run / "tb").exists()


def test_a_checkpoint_of_several_processes_keeps_each_ones_random_state(tmp_path: Path) -> None:
    from agents.checkpoint import save_checkpoint

    run = tmp_path / "run"
    trainer = _train(tiny_config(ppo__total_steps=64, pool__snapshot_every=100), run)
    assert trainer.save() == run / "checkpoints" / "last.pt"
    states = [rng_state(np.random.default_rng(k)) for k in (1, 2)]
    payload = trainer._payload(states)
    assert payload["rng"] is states[0] and payload["rng_ranks"] == states
    assert "rng_ranks" not in trainer._payload(states[:1]) and "optimizer" not in trainer._payload()
    save_checkpoint(run / "checkpoints" / "last.pt", payload)
    second = Trainer(from_dict(tiny_config(ppo__total_steps=128)), run, resume=True, log=quiet, rank=1,
                     world_size=2)
    assert second.np_rng.bit_generator.state == states[1]["numpy"]  # its own stream, not process 0's
    first = Trainer(from_dict(tiny_config(ppo__total_steps=128)), run, resume=True, log=quiet)
    assert first.np_rng.bit_generator.state == states[0]["numpy"]


def test_the_default_log_prints_each_line_flushed(tmp_path: Path, monkeypatch) -> None:
    printed: list = []
    monkeypatch.setattr(agents.ppo, "print", lambda *a, **k: printed.append((a, k)), raising=False)
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run")
    trainer.log("a line")
    assert printed == [(("a line",), {"flush": True})]  # runs are often redirected to a file
    Trainer(from_dict(tiny_config()), tmp_path / "other", rank=1, world_size=2).log("not from process 1")
    assert len(printed) == 1


# --- agents/ppo.py: imitation before PPO ------------------------------------------------------


@pytest.mark.parametrize("held_out", [True, False])
def test_imitation_writes_its_figures_and_says_how_it_went(tmp_path: Path, monkeypatch, held_out: bool) -> None:
    import agents.imitation

    stats = {"imitation/positions": 160.0, "imitation/record_s": 1.2, "imitation/fit_s": 0.4,
             "imitation/accuracy": 0.5, "imitation/value_loss": 0.25}
    if held_out:
        stats["imitation/held_out_accuracy"] = 0.375
    seen: list = []
    monkeypatch.setattr(agents.imitation, "imitate",
                        lambda net, cfg, make_bot, device, seed: seen.append((seed, make_bot)) or dict(stats))
    data = tiny_config()
    data["imitation"].update(bot="greedy", games=4, epochs=1)
    lines: list[str] = []
    trainer = Trainer(from_dict(data), tmp_path / "run", log=lines.append)
    trainer.writer = Recorder()
    trainer._imitate()
    assert trainer.imitated and seen == [(3, agents.ppo.make_bot)]
    assert (tmp_path / "run" / "imitation.json").read_text() == json.dumps(stats, indent=1) + "\n"
    assert trainer.writer.scalars == [(k, v, 0) for k, v in stats.items()]
    held = ", held-out accuracy 37.5%" if held_out else ""
    assert lines == ["imitation: 4 games of greedy in every seat, then 1 epochs",
                     f"imitation: 160 positions in 1 s; fit in 0 s: accuracy 50.0%{held}, value loss 0.250"]


class RecordingEnv:
    """An environment that keeps every step's rewards and ends (the rest is the real one's)."""

    def __init__(self, env, steps: list) -> None:
        self._env, self._steps = env, steps

    def __getattr__(self, name: str):
        return getattr(self._env, name)

    def step(self, actions):
        rewards, done, info = self._env.step(actions)
        self._steps.append((rewards.cpu().numpy().copy(), done.cpu().numpy().copy()))
        return rewards, done, info


def test_each_game_returns_the_rewards_of_its_own_plies(tmp_path: Path, monkeypatch) -> None:
    """Episode returns restart at every game, in the games and the solitaire alike; each game that ends
    is closed in the rollout buffer in its own row (the solitaire's after the games')."""
    steps: list = []
    solo_steps: list = []
    ended: list[int] = []
    added: list[list[int]] = []
    returns: list = []
    real_env, real_solo, real_stats = agents.ppo.make_env, agents.ppo.make_solo_env, agents.ppo._episode_stats

    class Buffer(agents.ppo.RolloutBuffer):
        def add(self, envs, *rest) -> None:
            added.append([int(b) for b in envs])
            super().add(envs, *rest)

        def end_game(self, b) -> None:
            ended.append(int(b))
            super().end_game(b)

    def episode_stats(info, b, seats, game_returns, n):
        returns.append((int(b), list(game_returns)))
        return real_stats(info, b, seats, game_returns, n)

    monkeypatch.setattr(agents.ppo, "make_env", lambda *a, **k: RecordingEnv(real_env(*a, **k), steps))
    monkeypatch.setattr(agents.ppo, "make_solo_env", lambda *a, **k: RecordingEnv(real_solo(*a, **k), solo_steps))
    monkeypatch.setattr(agents.ppo, "RolloutBuffer", Buffer)
    monkeypatch.setattr(agents.ppo, "_episode_stats", episode_stats)
    data = tiny_config(env__solo_envs=2, env__solo_move_cost=0.01, game__move_limit=6, game__progress_shaping=0.0,
                       pool__snapshot_prob=0.0, pool__self_prob=1.0)
    data["ppo"]["total_steps"] = (4 + 2) * 16 * 2
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    started = time.perf_counter()
    stats = trainer.train()
    wall = time.perf_counter() - started
    trainer.close()
    expected_ends: list[int] = []
    expected_returns: list = []
    total = np.zeros((4, 2))
    for (rewards, done), (_, solo_done) in zip(steps, solo_steps):
        total += rewards
        expected_ends += [4 + int(b) for b in np.flatnonzero(solo_done)] + [int(b) for b in np.flatnonzero(done)]
        for b in np.flatnonzero(done):
            expected_returns.append((int(b), list(total[b])))
            total[b] = 0
    assert ended == expected_ends and len(expected_ends) > 12  # several games in each row
    assert returns == expected_returns
    assert added == [[0, 1, 2, 3], [4, 5]] * 32  # each ply: every game's learner decision, then the solitaire's
    # every solitaire game is 6 moves unfinished: no reward, less 6 move costs
    assert stats["charts/solo_moves"] == 6 and stats["charts/solo_return"] == pytest.approx(-0.06)
    assert 0 < stats["perf/rollout_s"] < wall and 0 < stats["perf/update_s"] < wall


def _fake_clock(monkeypatch) -> list[float]:
    """agents.ppo's wall clock made settable (``now[0]``, starting at 100 s); perf_counter stays real."""
    now = [100.0]
    monkeypatch.setattr(agents.ppo, "time", types.SimpleNamespace(time=lambda: now[0], perf_counter=time.perf_counter))
    return now


def test_sps_and_the_status_line_follow_the_clock(monkeypatch) -> None:
    now = _fake_clock(monkeypatch)
    trainer = _fake_trainer(from_dict(tiny_config(log__status_every=1.5)), 64)
    progress = _Progress(trainer, 640)
    trainer.global_step, now[0] = 128, 101.0
    stats: dict = {}
    progress.log(stats, 64)
    assert stats["charts/SPS"] == 64 and trainer.lines == []  # 64 steps in 1 s; the status line not yet due
    trainer.global_step, now[0] = 192, 101.5
    progress.log(stats, 64)
    assert stats["charts/SPS"] == 85 and trainer.lines == [status_line(1, 5, 192, stats)]  # 128 / 1.5; due
    now[0] = 102.5
    progress.log({}, 64)
    assert len(trainer.lines) == 1  # 1 s since the last line


@pytest.mark.parametrize("move_limit", [200, 12])
def test_evaluate_solo_plays_the_greedy_policys_crossing(move_limit: int) -> None:
    from agents.ppo import evaluate_solo, make_solo_env
    from halma_env import Game, Rules
    from halma_env.encoding import encoding

    cfg = from_dict(tiny_config(eval__move_limit=move_limit, env__solo_envs=1))
    net = Forward("star", 1)
    enc = encoding("star", 1)
    game = Game(Rules("star", 1, move_limit=move_limit, limit_outcome="draw"))
    while not game.is_over:
        moves = game.legal_moves()
        score = [float(net.progress[enc.encode_move(0, m.src, m.dst)]) for m in moves]
        game.play(moves[score.index(max(score))])
    finished = game.status[0] == "finished"
    assert not finished  # this greedy policy stalls short of the goal
    assert evaluate_solo(net, cfg, torch.device("cpu")) == {"moves": float(game.ply), "finished": float(finished)}
    assert make_solo_env(cfg, torch.device("cpu"), seed=0).rules.num_players == 1


def test_bench_train_runs_each_configuration_and_reports_its_figures(monkeypatch, capsys) -> None:
    import agents.parallel

    runs: list = []

    def fake_loop(rank: int, world_size: int, cfg, seconds: float) -> tuple[int, float, float]:
        runs.append((cfg.device, cfg.env.engine, cfg.torch_threads, world_size, cfg.processes, cfg.seed, seconds, rank))
        torch.set_num_threads(cfg.torch_threads)  # as the trainer does
        steps = 301 + (len(runs) > 4)  # the second round of a repeat: one step more
        return steps, 2.0, 4.0 if cfg.env.engine == "scalar" else 3.0

    spawned: list = []
    monkeypatch.setattr(agents.train, "bench_loop", fake_loop)
    monkeypatch.setattr(agents.parallel, "spawn", lambda fn, n, *args: spawned.append(n) or fn(0, n, *args))
    monkeypatch.setattr(os, "getloadavg", lambda: (1.234, 5.0, 15.0))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    threads = torch.get_num_threads()
    figures = agents.train.run_benchmark(types.SimpleNamespace())  # defaults: 2 s, seed 0, once, printed
    assert runs == [("cpu", "scalar", 1, 1, 1, 0, 2.0, 0), ("cpu", "batched", 1, 1, 1, 0, 2.0, 0),
                    ("cpu", "batched", 2, 1, 1, 0, 2.0, 0), ("cpu", "batched", 1, 2, 2, 0, 2.0, 0)]
    assert spawned == [2] and torch.get_num_threads() == threads
    default = from_dict(default_dict())
    assert figures == {
        "load_average_1min": 1.23,
        "train_cpu_scalar_steps_per_s": 150.5, "train_cpu_scalar_steps_per_cpu_s": 75.2,  # to 0.1
        "train_cpu_batched_steps_per_s": 150.5, "train_cpu_batched_steps_per_cpu_s": 100.3,
        "train_cpu_batched_2threads_steps_per_s": 150.5, "train_cpu_batched_2threads_steps_per_cpu_s": 100.3,
        "train_cpu_batched_2processes_steps_per_s": 150.5, "train_cpu_batched_2processes_steps_per_cpu_s": 100.3,
        "num_envs": default.env.num_envs, "num_steps": default.ppo.num_steps,
        "num_minibatches": default.ppo.num_minibatches, "update_epochs": default.ppo.update_epochs,
        "threads": 1, "repeat": 1}
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("halma bench train (whole PPO loop, self-play, default config; steps = plies of all seats; "
                      "1 torch thread unless the name says otherwise)")
    assert out[1:] == [f"  {key:40s} {value}" for key, value in figures.items()]
    runs.clear()
    twice = agents.train.run_benchmark(types.SimpleNamespace(json=True, device="cpu", seconds=0.5, seed=4, repeat=2))
    assert [r[5:7] for r in runs] == [(4, 0.5)] * 8 and capsys.readouterr().out == ""
    # medians of the two rounds, to 0.1, with the wall-clock readings listed
    assert twice["train_cpu_batched_steps_per_s"] == 150.8 and twice["train_cpu_batched_steps_per_cpu_s"] == 100.5
    assert twice["train_cpu_batched_steps_per_s_readings"] == [150.5, 151.0] and twice["repeat"] == 2
    runs.clear()  # --device: that device alone, one thread of one process
    figures = agents.train.run_benchmark(types.SimpleNamespace(json=True, device="cuda", seconds=0.5))
    assert [r[:4] for r in runs] == [("cuda", "scalar", 1, 1), ("cuda", "batched", 1, 1)]
    assert "train_cuda_batched_steps_per_s" in figures and not [k for k in figures if k.startswith("train_cpu")]


def test_the_crossing_term_is_the_main_line_and_a_sample_of_the_detours(tmp_path: Path) -> None:
    """``_crossing_loss``: cross-entropy toward the recorded move over every main-line position and
    CROSSING_SAMPLE detour positions drawn with the trainer's generator."""
    from agents.imitation import Demonstrations
    from halma_env import Game
    from halma_env.encoding import encoding

    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    enc, gen = encoding("star", 2), np.random.default_rng(0)
    game = Game(from_dict(tiny_config()).game.rules().replace(move_limit=None))
    legal, valid = torch.zeros(100, 300, dtype=torch.int64), torch.zeros(100, 300, dtype=torch.bool)
    obs, choice = [], []
    for k in range(100):
        moves = game.legal_moves()
        obs.append(torch.from_numpy(enc.observation(game, game.to_move)))
        legal[k, : len(moves)] = torch.tensor([enc.encode_move(game.to_move, m.src, m.dst) for m in moves])
        valid[k, : len(moves)] = True
        choice.append(int(gen.integers(len(moves))))
        game.play(moves[choice[-1]])
    demos = Demonstrations(torch.stack(obs), legal, valid, torch.tensor(choice), torch.zeros(100), torch.zeros(100))
    trainer.crossing_main_rows = 20
    twin = np.random.default_rng()
    twin.bit_generator.state = trainer.np_rng.bit_generator.state
    loss = trainer._crossing_loss(demos)
    pick = np.concatenate([np.arange(20), 20 + twin.permutation(80)[: agents.ppo.CROSSING_SAMPLE]])
    assert agents.ppo.CROSSING_SAMPLE == 64 and len(pick) == 84
    width = int(valid[pick].sum(1).max())
    assert width < 300
    logits, _ = trainer.net(demos.obs[pick], legal[pick, :width], valid[pick, :width])
    assert torch.allclose(loss, torch.nn.functional.cross_entropy(logits, demos.choice[pick]))
    assert trainer.np_rng.bit_generator.state == twin.bit_generator.state
    # few positions with many moves each: every move of each position is scored
    few = demos.subset(torch.arange(4))
    trainer.crossing_main_rows = 2
    width = int(few.valid.sum(1).max())
    assert width > 4
    logits, _ = trainer.net(few.obs, few.legal[:, :width], few.valid[:, :width])
    assert torch.allclose(trainer._crossing_loss(few), torch.nn.functional.cross_entropy(logits, few.choice))


def test_the_first_line_of_a_run_is_flushed(tmp_path: Path, fake_trainer, monkeypatch) -> None:
    printed: list = []
    monkeypatch.setattr(agents.train, "print", lambda *a, **k: printed.append((a, k)), raising=False)
    assert train_and_evaluate(0, 1, from_dict(tiny_config()), namespace(runs_dir=str(tmp_path),
                                                                        no_final_eval=True)) == 0
    first = printed[0]
    assert first[0][0].startswith("training star 2 seats") and first[1] == {"flush": True}  # seen at once in a log


def test_bench_train_repeated_readings_are_to_0_1_under_a_medians_header(monkeypatch, capsys) -> None:
    """``repeat`` > 1, printed: each wall-clock reading is rounded to 0.1 before it is listed (and its
    median taken), and the header says the figures are medians of that many interleaved readings."""
    rounds: list = []

    def fake_loop(rank: int, world_size: int, cfg, seconds: float) -> tuple[int, float, float]:
        rounds.append(cfg.env.engine)
        return 301 + (len(rounds) > 4), 3.0, 4.0  # 100.333... then 100.666... steps per s: not on one decimal

    monkeypatch.setattr(agents.train, "bench_loop", fake_loop)
    monkeypatch.setattr(agents.parallel, "spawn", lambda fn, n, *args: fn(0, n, *args))
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    figures = agents.train.run_benchmark(types.SimpleNamespace(seconds=0.5, repeat=2))
    assert len(rounds) == 8
    for name in ("scalar", "batched", "batched_2threads", "batched_2processes"):
        assert figures[f"train_cpu_{name}_steps_per_s_readings"] == [100.3, 100.7]
        assert figures[f"train_cpu_{name}_steps_per_s"] == 100.5
    assert not [k for k in figures if k.endswith("_cpu_s_readings")]  # only the wall-clock readings are listed
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("halma bench train (whole PPO loop, self-play, default config; steps = plies of all seats; "
                      "1 torch thread unless the name says otherwise; medians of 2 interleaved readings)")
    assert out[1:] == [f"  {key:40s} {value}" for key, value in figures.items()]


def test_env_games_use_the_engines_own_games_or_make_them() -> None:
    """``env_games``: the engine's ``games`` where it keeps them (the scalar engine), else ``to_games()``."""
    from agents.ppo import env_games

    kept, made = ["kept"], ["made"]
    assert env_games(types.SimpleNamespace(games=kept, to_games=lambda: made)) is kept
    assert env_games(types.SimpleNamespace(to_games=lambda: made)) is made


def test_evaluate_of_no_games_is_all_zeros() -> None:
    """No games: nothing is played and every figure is 0 (the means divide by at least 1)."""
    from agents.ppo import evaluate

    res = evaluate(Forward("star", 2), from_dict(tiny_config()), "random", 0, seed=0, device=torch.device("cpu"))
    assert res == {"win_rate": 0.0, "draw_rate": 0.0, "mean_place": 0.0, "opponent_mean_place": 0.0,
                   "finish_rate": 0.0, "decided_rate": 0.0, "mean_length": 0.0}


class Scripted(torch.nn.Module):
    """A stand-in network for one seat that plays ``line`` (moves) in order: its greedy choice is the
    line's next move."""

    def __init__(self, variant: str, line: list) -> None:
        super().__init__()
        from halma_env.encoding import encoding

        self.actions = [encoding(variant, 1).encode_move(0, m.src, m.dst) for m in line]
        self.calls = 0

    def forward(self, obs, legal, valid):
        target = self.actions[self.calls]
        self.calls += 1
        return torch.where(valid & (legal == target), 1.0, 0.0), torch.zeros(len(legal))


def test_evaluate_solo_says_a_completed_crossing_finished() -> None:
    from agents.bots.crossing import plan_crossing
    from agents.ppo import evaluate_solo
    from halma_env import Game, Rules

    line = plan_crossing(Game(Rules("star", 1)), 1)  # a complete crossing, planned in milliseconds
    cfg = from_dict(tiny_config(eval__move_limit=200, env__solo_envs=1))
    assert len(line) < 200
    assert evaluate_solo(Scripted("star", line), cfg, torch.device("cpu")) == {"moves": float(len(line)),
                                                                               "finished": 1.0}


def test_sample_draws_a_legal_slot_with_its_log_probability_and_value(tmp_path: Path) -> None:
    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    env = agents.ppo.make_env(trainer.cfg, torch.device("cpu"), seed=0)
    legal, valid = env.legal_lists()
    obs = env.observation()
    torch.manual_seed(0)
    slot, logp, value = trainer._sample(obs, legal, valid)
    logits, expected_value = trainer.net(obs, legal, valid)
    assert slot.shape == (len(legal),) and valid[torch.arange(len(legal)), slot].all()
    assert torch.allclose(logp, torch.log_softmax(logits, dim=1)[torch.arange(len(legal)), slot])
    assert torch.allclose(value, expected_value)


def test_teacher_slots_find_the_bots_move_in_each_legal_list_or_say_minus_1(tmp_path: Path) -> None:
    from halma_env import Game
    from halma_env.encoding import encoding

    trainer = Trainer(from_dict(tiny_config()), tmp_path / "run", log=quiet)
    enc = encoding("star", 2)
    games = [Game(trainer.cfg.game.rules()) for _ in range(3)]
    games[2].play(games[2].legal_moves()[0])  # seat 1 to move there
    rows = np.array([2, 0])
    lists = [games[b].legal_moves() for b in rows]
    picks = {id(games[2]): lists[0][3], id(games[0]): lists[1][5]}
    teacher = types.SimpleNamespace(select_move=lambda game: picks[id(game)])
    width = max(len(x) for x in lists)
    legal = torch.zeros(2, width, dtype=torch.int64)
    valid = torch.zeros(2, width, dtype=torch.bool)
    for k, b in enumerate(rows):
        legal[k, : len(lists[k])] = torch.tensor([enc.encode_move(games[b].to_move, m.src, m.dst) for m in lists[k]])
        valid[k, : len(lists[k])] = True
    env = types.SimpleNamespace(games=games)
    assert trainer._teacher_slots(teacher, env, rows, legal, valid).tolist() == [3, 5]
    valid[1, 5] = False  # the bot's move is not among the learner's choices: no teacher's slot
    assert trainer._teacher_slots(teacher, env, rows, legal, valid).tolist() == [3, -1]


def test_plan_crossings_writes_what_it_planned_and_keeps_the_plan(tmp_path: Path) -> None:
    """``_plan_crossings``: the demonstrations of the planned lines, and crossing.json with the main line's
    and each detour's length, the positions, the seconds it took and where the plan came from."""
    from agents.imitation import crossing_cache_path, crossing_demonstrations, plan_crossing_lines

    data = tiny_config(crossing__planner_width=1, crossing__detours=2, crossing__detour_width=1, crossing__coef=1.0)
    expected, lengths = crossing_demonstrations(from_dict(data), plan_crossing_lines(from_dict(data), 3))
    assert len(lengths) == 3 and lengths[0] not in lengths[1:]

    def planned(run: str, cache: Path | None) -> tuple[Trainer, dict, str]:
        lines: list[str] = []
        trainer = Trainer(from_dict(data), tmp_path / run, log=lines.append, crossing_cache=cache)
        started = time.perf_counter()
        trainer._plan_crossings()
        text = (tmp_path / run / "crossing.json").read_text()
        info = json.loads(text)
        assert text == json.dumps(info, indent=1) + "\n"
        assert 0 <= info["seconds"] <= time.perf_counter() - started
        assert torch.equal(trainer.crossing_demos.choice, expected.choice) and trainer.crossing_main_rows == lengths[0]
        assert (info["main_line_moves"], info["detour_moves"], info["positions"]) == (
            lengths[0], lengths[1:], len(expected))
        return trainer, info, lines[0]

    _, info, line = planned("plain", None)
    assert info["source"] == "planned" and line.endswith("(planned)")
    cached = crossing_cache_path(tmp_path / "cache", from_dict(data), 3)
    _, info, _ = planned("first", tmp_path / "cache")
    assert info["source"] == f"planned, kept in {cached}" and cached.is_file()
    _, info, _ = planned("second", tmp_path / "cache")
    assert info["source"] == f"read from {cached}"


def test_the_batched_training_engine_rotates_the_first_seat() -> None:
    """``make_env``'s batched engine starts game b with seat b (``rotate_first_seat``), as the scalar one does."""
    env = agents.ppo.make_env(from_dict(tiny_config(env__engine="batched")), torch.device("cpu"), seed=0)
    assert env.rotate_first_seat is True


class _Decided:
    """A stand-in for ``Game`` in ``evaluate``: already over, with the given places and statuses."""

    outcomes: list = []

    def __init__(self, rules) -> None:
        self.places, self.status, self.ply = self.outcomes.pop(0)
        self.is_over = True


def test_evaluate_scores_a_sole_first_place_of_three_seats_and_one_game(monkeypatch) -> None:
    """A win is a sole first place whoever shares the other places; the means of one game divide by 1."""
    from agents.ppo import evaluate

    monkeypatch.setattr(_Decided, "outcomes", [([1, 2, 2], ["finished", "active", "active"], 7)])
    monkeypatch.setattr(agents.ppo, "Game", _Decided)
    cfg = from_dict(tiny_config(game__num_players=3))
    res = evaluate(Forward("star", 2), cfg, "random", 1, seed=0, device=torch.device("cpu"))
    assert res == pytest.approx({"win_rate": 1.0, "draw_rate": 0.0, "mean_place": 1.0, "opponent_mean_place": 2.0,
                                 "finish_rate": 1.0, "decided_rate": 0.0, "mean_length": 7.0})


def test_evaluate_lets_the_opponent_move_only_on_its_turn(monkeypatch) -> None:
    """A seat passed over leaves the learner to move again: the opponent is not asked for the learner's move."""
    from agents.ppo import evaluate

    class Passed:  # seat 0 (the learner of game 0) moves twice, then the game is over
        def __init__(self, rules) -> None:
            self.ply, self.to_move, self.places, self.status = 0, 0, [1, 2], ["finished", "active"]

        @property
        def is_over(self) -> bool:
            return self.ply == 2

        def legal_moves(self) -> list:
            return [types.SimpleNamespace(src=0, dst=1)]

        def play(self, move) -> None:
            self.ply += 1

    asked: list = []
    monkeypatch.setattr(agents.ppo, "Game", Passed)
    monkeypatch.setattr(agents.ppo, "encoding", lambda variant, n: types.SimpleNamespace(
        observation=lambda game, seat: np.zeros(3, dtype=np.float32),
        move_actions=lambda seat, moves: np.zeros(len(moves), dtype=np.int64)))
    monkeypatch.setattr(agents.ppo, "make_bot", lambda name, seed: types.SimpleNamespace(
        select_move=lambda game: asked.append(game) or game.legal_moves()[0]))

    class Even(torch.nn.Module):  # every legal move alike: the first is the greedy one
        def forward(self, obs, legal, valid):
            return torch.zeros(legal.shape), torch.zeros(len(legal))

    res = evaluate(Even(), from_dict(tiny_config()), "random", 1, seed=0, device=torch.device("cpu"))
    assert asked == [] and res["mean_length"] == 2.0 and res["win_rate"] == 1.0


# --- agents/ppo.py: what a resume keeps, the run directory, the end of a run, the reports ---------------------


def test_a_resume_drops_what_the_run_logged_after_its_checkpoint(tmp_path: Path, monkeypatch) -> None:
    """A run killed after its checkpoint's update: the resumed run removes the TensorBoard events past the
    checkpoint's step from the files and keeps only the ``eval.jsonl`` lines up to it, so nothing is logged
    twice (read back here record by record, as TensorBoard's default loader reads them: purge_step alone left
    the killed run's points in place there)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate([], 0.5))
    data = tiny_config(ppo__total_steps=4 * 64, checkpoint__every=2, log__tensorboard=True, eval__every=64,
                       eval__games=1, eval__opponents=["random"])
    run = tmp_path / "run"
    killed = Trainer(from_dict(data), run, log=quiet)
    killed.train(stop=lambda: killed.update == 3)  # killed after update 3; the checkpoint is update 2's
    killed.close()
    evals = run / "eval.jsonl"
    evals.write_text(evals.read_text() + '{"global_step": 2')  # and in the middle of a line
    assert load_checkpoint(run / "checkpoints" / "last.pt")["global_step"] == 128
    resumed = Trainer(from_dict(data), run, resume=True, log=quiet)
    assert [json.loads(x)["global_step"] for x in evals.read_text().splitlines()] == [64, 128]
    assert not list(run.glob("*.tmp"))
    resumed.train()
    resumed.close()
    assert [json.loads(x)["global_step"] for x in evals.read_text().splitlines()] == [64, 128, 192, 256]
    events = EventAccumulator(str(run / "tb"))
    events.Reload()
    for key in ("losses/entropy", "eval/random/win_rate"):
        assert [e.step for e in events.Scalars(key)] == [64, 128, 192, 256]
        assert sorted(_raw_steps(run / "tb", key)) == [64, 128, 192, 256]


def test_a_resume_refuses_a_damaged_evaluation_log_before_it_writes(tmp_path: Path, monkeypatch) -> None:
    """A line in the middle of ``eval.jsonl`` that is not an evaluation record stops the resume with an error
    naming it, before ``config.yaml`` is rewritten (it was rewritten first, then the line dropped unread)."""
    monkeypatch.setattr(agents.ppo, "evaluate", _fake_evaluate([], 0.5))
    data = tiny_config(ppo__total_steps=4 * 64, checkpoint__every=2, eval__every=64, eval__games=1,
                       eval__opponents=["random"])
    run = tmp_path / "run"
    killed = Trainer(from_dict(data), run, log=quiet)
    killed.train(stop=lambda: killed.update == 3)
    killed.close()
    evals = run / "eval.jsonl"
    first, *rest = evals.read_text().splitlines()
    evals.write_text("\n".join([first, "garbled", *rest]) + "\n")
    before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    said: list[str] = []
    with pytest.raises(ValueError, match="eval.jsonl line 2 is not an evaluation record"):
        Trainer(from_dict(tiny_config(ppo__total_steps=8 * 64, checkpoint__every=2, eval__every=64, eval__games=1,
                                      eval__opponents=["random"])), run, resume=True, log=said.append)
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before
    assert said == []  # not "resumed ... at update 3" before the refusal


@pytest.mark.parametrize("folder", ["snapshots", "tb"])
def test_a_resume_refuses_a_file_where_the_run_keeps_a_folder_before_it_writes(tmp_path: Path, folder: str) -> None:
    """``snapshots`` replaced by a file: the resume trained, then died with a FileExistsError traceback when it
    first wrote a snapshot; ``tb`` a file: "cannot write the run directory" without its name, after
    ``config.yaml`` was rewritten.  Both are refused at once now, by name, with nothing written."""
    data = tiny_config(ppo__total_steps=4 * 64, checkpoint__every=2, pool__snapshot_every=1)
    run = tmp_path / "run"
    killed = Trainer(from_dict(data), run, log=quiet)
    killed.train(stop=lambda: killed.update == 2)
    killed.close()
    if (run / folder).exists():  # (the tiny config logs no TensorBoard: no tb/ to replace)
        shutil.rmtree(run / folder)
    (run / folder).write_text("x")
    before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    with pytest.raises(ValueError, match=f"^'.*run/{folder}' is a file, where the run keeps a folder: move it"):
        Trainer(from_dict(tiny_config(ppo__total_steps=8 * 64, checkpoint__every=2, pool__snapshot_every=1)), run,
                resume=True, log=quiet)
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before


def _raw_steps(tb_dir: Path, tag: str) -> list[int]:
    """Every step ``tag`` was written at, in every event file, with nothing purged."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    return [event.step for path in tb_dir.glob("events.out.tfevents.*") for event in EventFileLoader(str(path)).Load()
            if any(value.tag == tag for value in event.summary.value)]


def test_drop_events_after_rewrites_only_the_files_with_later_events(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    from agents.run_dir import drop_events_after

    first, second = tmp_path / "tb" / "a", tmp_path / "tb"
    for folder, steps in ((first, range(1, 4)), (second, range(1, 7))):
        writer = SummaryWriter(str(folder))
        for step in steps:
            writer.add_scalar("x", float(step), step)
        writer.close()
    (old,) = first.glob("events.out.tfevents.*")  # (a subfolder: not this run's files, left alone)
    (mine,) = second.glob("events.out.tfevents.*")
    with mine.open("ab") as f:
        f.write(b"\x10\x00\x00")  # a record the kill cut short
    before = old.read_bytes()
    drop_events_after(second, 4)
    assert sorted(_raw_steps(second, "x")) == [1, 2, 3, 4] and old.read_bytes() == before
    untouched = mine.read_bytes()
    drop_events_after(second, 4)  # nothing past 4 now: the file is not written again
    assert mine.read_bytes() == untouched and not list(second.glob("*.tmp"))
    drop_events_after(tmp_path / "none", 4)  # a run without TensorBoard


def test_a_fresh_run_refuses_a_directory_that_holds_files_even_without_a_checkpoint(tmp_path: Path) -> None:
    run = tmp_path / "run"
    data = tiny_config(checkpoint__every=100, ppo__total_steps=4 * 64)
    stopped = Trainer(from_dict(data), run, log=quiet)  # stopped before its first checkpoint
    stopped.train(stop=lambda: True)
    stopped.close()
    assert not (run / "checkpoints").exists()
    with pytest.raises(ValueError, match=rf"^run directory '{run}' already holds config.yaml, snapshots but no "
                                         r"checkpoint \(a run stopped before its first one\), so there is nothing "
                                         "to resume: remove the directory to start over, or --set name=NAME to "
                                         "start another beside it$"):
        Trainer(from_dict(data), run, log=quiet)
    with pytest.raises(ValueError, match=rf"^--resume: no checkpoint '{run / 'checkpoints' / 'last.pt'}' to "
                                         "continue from, so there is nothing to resume: remove the run directory "
                                         "and start again without --resume$"):
        Trainer(from_dict(data), run, resume=True, log=quiet)
    with pytest.raises(ValueError, match=r"--resume: no checkpoint .* nothing to resume$"):
        Trainer(from_dict(data), tmp_path / "none", resume=True, log=quiet)
    (tmp_path / "empty").mkdir()
    Trainer(from_dict(data), tmp_path / "empty", log=quiet).close()  # an empty directory is no run
    # another process than 0 does not look: process 0 may have begun to write there
    Trainer(from_dict(data), run, log=quiet, rank=1, world_size=2).close()


def test_halma_train_refuses_a_held_run_directory_before_it_imports_torch(tmp_path: Path) -> None:
    """The refusal comes at once: a child process in which ``import torch`` fails still gives it."""
    import subprocess
    import sys

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(train_tiny_config()))
    (tmp_path / "runs" / "tiny").mkdir(parents=True)
    (tmp_path / "runs" / "tiny" / "config.yaml").write_text("left by a stopped run\n")
    code = ("import sys; sys.modules['torch'] = None; from agents.cli import main; "
            f"sys.exit(main(['train', {str(config)!r}, '--runs-dir', {str(tmp_path / 'runs')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"halma train: error: run directory {str(tmp_path / 'runs' / 'tiny')!r} already holds "
                           "config.yaml but no checkpoint (a run stopped before its first one), so there is "
                           "nothing to resume: remove the directory to start over, or --set name=NAME to start "
                           "another beside it\n")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["tiny"]  # no lock file, nothing else


def test_an_unreadable_run_directory_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch, capsys) -> None:
    """The check before torch's import listed the run directory unguarded: a PermissionError (a folder of
    another user's) escaped as a traceback, where the Trainer's check says it in one line."""
    from agents.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(train_tiny_config()))
    run = tmp_path / "runs" / "tiny"
    run.mkdir(parents=True)
    real_iterdir = Path.iterdir

    def iterdir(self: Path):
        if self == run:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err == (f"halma train: error: cannot write the run directory {str(run)!r}: "
                                       "Permission denied\n")


def test_a_lock_held_for_a_moment_is_waited_for(tmp_path: Path, monkeypatch) -> None:
    """halma train's check before torch's import takes the run's lock for a moment: a second run reaching its
    own lock then was refused as "in use by another halma train"; a hold that ends is now waited for."""
    from agents.files import LockHeld, held_lock

    tries = []

    def held_once(path, *args, **kwargs):
        tries.append(path)
        if len(tries) == 1:
            raise LockHeld(str(path))
        return held_lock(path, *args, **kwargs)

    monkeypatch.setattr(agents.run_dir, "held_lock", held_once)
    trainer = Trainer(from_dict(train_tiny_config()), tmp_path / "run", log=quiet, lock_run_dir=True)
    trainer.close()
    trainer.run_lock.close()
    assert len(tries) == 2


def _learning_rates(trainer: Trainer) -> list[float]:
    """Train ``trainer`` to its end; the learning rate of each update."""
    rates: list[float] = []
    trainer.train(stop=lambda: rates.append(trainer.optimizer.param_groups[0]["lr"]) or False)
    trainer.close()
    return rates


def test_a_resume_with_other_rollouts_ends_at_total_steps(tmp_path: Path) -> None:
    """The run ends at ``ppo.total_steps`` in global steps, whatever ``num_steps`` or ``num_envs`` the resume
    has: longer rollouts train on (not "nothing to do"), shorter ones stop there (no overshoot)."""
    run = tmp_path / "run"
    first = Trainer(from_dict(tiny_config(ppo__total_steps=128, ppo__learning_rate=0.004)), run, log=quiet)
    assert (first.num_iterations, first.end_step) == (2, 128)
    assert _learning_rates(first) == [0.004, 0.002]
    longer = Trainer(from_dict(tiny_config(ppo__total_steps=256, ppo__num_steps=32, ppo__learning_rate=0.004)), run,
                     resume=True, log=quiet)
    assert (longer.num_iterations, longer.end_step) == (3, 256)  # one rollout of 128 steps fits
    assert _learning_rates(longer) == [0.004 * (1 - 128 / 256)]
    assert (longer.update, longer.global_step) == (3, 256)
    shorter = Trainer(from_dict(tiny_config(ppo__total_steps=350, ppo__num_steps=8, env__num_envs=2)), run,
                      resume=True, log=quiet)
    assert (shorter.num_iterations, shorter.end_step) == (8, 256 + 5 * 16)  # five rollouts of 16 steps: 336
    _learning_rates(shorter)
    assert (shorter.update, shorter.global_step) == (8, 336)
    assert load_checkpoint(run / "checkpoints" / "last.pt")["global_step"] == 336
    done = Trainer(from_dict(tiny_config(ppo__total_steps=351, ppo__num_steps=8, env__num_envs=2)), run,
                   resume=True, log=quiet)
    assert done.num_iterations == done.update == 8  # 15 steps left: no whole rollout, nothing to do


def test_the_learning_rate_of_a_run_whose_rollouts_never_change_is_by_update(tmp_path: Path) -> None:
    """Annealed by steps, the learning rate is bit for bit the one by updates: 1 - (update - 1) / updates."""
    data = tiny_config(ppo__total_steps=4 * 16 * 7 + 5, ppo__learning_rate=0.0037, checkpoint__every=100)
    trainer = Trainer(from_dict(data), tmp_path / "run", log=quiet)
    assert trainer.num_iterations == 7
    assert _learning_rates(trainer) == [(1.0 - (u - 1.0) / 7) * 0.0037 for u in range(1, 8)]
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == ["last.pt", "update_000007.pt"]


def test_a_resume_from_another_working_directory_keeps_the_opponent_pool(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    _train(tiny_config(ppo__total_steps=128), Path("runs") / "tiny")  # a relative runs directory, as by default
    run = tmp_path / "runs" / "tiny"
    snaps = [str(run / "snapshots" / f"snap_00000{k}.pt") for k in (1, 2)]
    monkeypatch.chdir(tmp_path / "elsewhere")
    lines: list[str] = []
    resumed = Trainer(from_dict(tiny_config()), run, resume=True, log=lines.append)
    assert resumed.pool.snapshot_paths == snaps and sorted(resumed.pool.nets) == snaps
    assert not [x for x in lines if "missing" in x]
    # an older checkpoint lists them as they were written (relative to the working directory of the time)
    from agents.checkpoint import save_checkpoint

    last = load_checkpoint(run / "checkpoints" / "last.pt")
    last["extra"]["snapshots"] = [os.path.join("runs", "tiny", "snapshots", f"snap_00000{k}.pt") for k in (1, 2)]
    save_checkpoint(run / "checkpoints" / "last.pt", last)
    assert Trainer(from_dict(tiny_config()), run, resume=True, log=quiet).pool.snapshot_paths == snaps
    # a snapshot that is nowhere is said, not dropped silently
    (run / "snapshots" / "snap_000001.pt").unlink()
    lines.clear()
    resumed = Trainer(from_dict(tiny_config()), run, resume=True, log=lines.append)
    assert resumed.pool.snapshot_paths == snaps[1:]
    listed = os.path.join("runs", "tiny", "snapshots", "snap_000001.pt")
    assert lines[1] == ("opponent pool: 1 of the checkpoint's snapshots missing, left out: "
                        f"{listed} (looked in {run / 'snapshots'})")


def _episode(ret: float, length: float, finished: float) -> dict[str, float]:
    return {"return": ret, "length": length, "place": 1.0, "game_finished": finished}


def test_the_status_line_shows_the_games_ended_since_the_last_line(monkeypatch) -> None:
    now = _fake_clock(monkeypatch)
    trainer = _fake_trainer(from_dict(tiny_config(log__status_every=1.5)), 64)
    progress = _Progress(trainer, 640)
    now[0] = 101.0
    progress.log({"charts/episodic_return": 1.0}, 64, [_episode(1.0, 30.0, 1.0)], [{"moves": 40.0, "finished": 0.0,
                                                                                    "return": 0.0}])
    assert trainer.lines == []  # not yet due
    now[0] = 101.5
    progress.log({}, 64, [_episode(0.0, 50.0, 0.0)], [])
    assert trainer.lines[-1].endswith("return 0.500 length 40 finish 0.50 entropy - solo_moves 40.0")
    now[0] = 103.0
    progress.log({"losses/entropy": 2.0}, 64, [], [])
    assert trainer.lines[-1].endswith("return - length - finish - entropy 2.000")  # none since the last line


def test_the_progress_bar_shows_the_games_ended_since_its_last_figures(monkeypatch, capsys) -> None:
    now = _fake_clock(monkeypatch)
    trainer = _fake_trainer(from_dict(tiny_config(log__progress_bar=True)), 64)
    progress = _Progress(trainer, 640)
    progress.log({}, 64, [_episode(1.0, 30.0, 1.0)], [])
    assert progress.bar.postfix.startswith("fin=1.00, len=30, ret=1.00")  # the first update's games
    now[0] = 100.5
    progress.log({}, 64, [_episode(0.0, 50.0, 0.0)], [])
    now[0] = 101.2
    progress.log({}, 64, [], [])
    assert progress.bar.postfix.startswith("fin=0.00, len=50, ret=0.00")  # not nan: a game ended since
    now[0] = 102.5
    progress.log({}, 64, [], [])
    assert progress.bar.postfix.startswith("fin=-, len=-, ret=-")
    progress.close()
    capsys.readouterr()


def test_the_run_directory_records_the_device_given_with_device(tmp_path: Path) -> None:
    from agents.config import load_config

    run = tmp_path / "run"
    data = dict(tiny_config(ppo__total_steps=64), device="cuda")  # the config's device, overridden by --device
    trainer = _train(data, run, device="cpu")
    assert trainer.device == torch.device("cpu") and trainer.cfg.device == "cpu"
    recorded = load_config(run / "config.yaml")
    assert recorded.device == "cpu" and load_checkpoint(run / "checkpoints" / "last.pt")["config"]["device"] == "cpu"
    recorded.ppo.total_steps = 128  # a plain --resume of the recorded config runs where the run ran
    resumed = Trainer(recorded, run, resume=True, log=quiet)
    assert resumed.device == torch.device("cpu") and resumed.resume_changes == ["ppo.total_steps 64 -> 128"]


@pytest.mark.parametrize("engine", ["batched", "scalar"])
@pytest.mark.parametrize(("variant", "given", "played"), [("halma16", None, 3), ("halma16", False, None),
                                                         ("star", None, None), ("star", 4, 4)])
def test_the_training_games_play_the_config_s_repetition_rule(engine: str, variant: str, given, played) -> None:
    from agents.ppo import make_env

    cfg = from_dict(tiny_config(game__variant=variant, game__repetition_limit=given, env__engine=engine))
    env = make_env(cfg, torch.device("cpu"), seed=0)
    assert env.rules.repetition_limit == played


def test_explained_variance_from_sums_adds_up_over_processes() -> None:
    """CleanRL's 1 - var(y - v) / var(y), from counts and sums that two processes' shares add up to (the
    logged figure was process 0's half of the rollout)."""
    from agents.ppo import explained_variance

    rng = np.random.default_rng(0)
    y, v = rng.normal(0.2, 0.5, 300), rng.normal(0.1, 0.5, 300)

    def sums(a, b):
        return (len(a), a.sum(), (a ** 2).sum(), (a - b).sum(), ((a - b) ** 2).sum())

    whole = 1 - np.var(y - v) / np.var(y)
    assert explained_variance(*sums(y, v)) == pytest.approx(whole, rel=1e-9)
    halves = np.sum([sums(y[:120], v[:120]), sums(y[120:], v[120:])], axis=0)
    assert explained_variance(int(halves[0]), *halves[1:]) == pytest.approx(whole, rel=1e-9)
    assert np.isnan(explained_variance(0, 0, 0, 0, 0)) and np.isnan(explained_variance(*sums(np.full(5, 0.3), v[:5])))


# --- agents/ppo.py, agents/train.py: the run directory's lock (the interruption review) ----------------------------


def _in_use(run_dir: Path) -> str:
    return f"the run directory {str(run_dir)!r} is in use by another halma train; let it end or stop it first"


def test_a_run_started_while_a_fresh_one_checks_its_input_is_refused(tmp_path: Path, monkeypatch) -> None:
    """A run directory that did not exist yet was locked only after the checks of the run's input (the
    checkpoint init_from names read meanwhile): two runs of one name started together both passed them and
    trained into one directory (two event files, both writing last.pt).  The lock is taken first now: a second
    run that starts while the first checks is refused as in use, and leaves the first one's lock file alone."""
    from agents.run_dir import run_lock_file

    run_dir = tmp_path / "runs" / "tiny"
    cfg = from_dict(tiny_config())
    seen: list = []
    check = Trainer._check_new_run_dir

    def checked_with_a_second_run_starting(self) -> None:
        if not seen:
            seen.append(run_lock_file(run_dir).is_file())
            with pytest.raises(ValueError) as refused:
                Trainer(cfg, run_dir, log=quiet, lock_run_dir=True)
            seen.append(str(refused.value))
        check(self)

    monkeypatch.setattr(Trainer, "_check_new_run_dir", checked_with_a_second_run_starting)
    first = Trainer(cfg, run_dir, log=quiet, lock_run_dir=True)
    with first.run_lock:
        first.close()
    assert seen == [True, _in_use(run_dir)]
    assert sorted(p.name for p in run_dir.parent.iterdir()) == [".tiny.lock", "tiny"]


def test_refused_input_of_a_new_run_leaves_no_lock_file_or_folder(tmp_path: Path) -> None:
    """Locked first, a run whose input is refused (a missing init_from, a --resume with nothing to resume) removes
    the lock file and the runs directory it made: refused input writes nothing (README's exit status 2).  A lock
    file that was there stays, as does a run directory that was (its own refusal); the lock file a refused
    --resume of such a directory made goes (it stayed)."""
    from agents.files import held_lock
    from agents.run_dir import run_lock_file

    runs = tmp_path / "a" / "runs"
    data = tiny_config()
    data["init_from"] = str(tmp_path / "none.pt")
    with pytest.raises(ValueError, match="init_from"):
        Trainer(from_dict(data), runs / "tiny", log=quiet, lock_run_dir=True)
    with pytest.raises(ValueError, match="nothing to resume"):
        Trainer(from_dict(tiny_config()), runs / "tiny", resume=True, log=quiet, lock_run_dir=True)
    assert list(tmp_path.iterdir()) == []
    (runs / "tiny").mkdir(parents=True)
    with pytest.raises(ValueError, match="nothing to resume"):
        Trainer(from_dict(tiny_config()), runs / "tiny", resume=True, log=quiet, lock_run_dir=True)
    assert [p.name for p in runs.iterdir()] == ["tiny"]
    (runs / "tiny").rmdir()
    run_lock_file(runs / "tiny").write_text("")
    with pytest.raises(ValueError, match="init_from"):
        Trainer(from_dict(data), runs / "tiny", log=quiet, lock_run_dir=True)
    assert [p.name for p in runs.iterdir()] == [".tiny.lock"]
    with held_lock(run_lock_file(runs / "tiny")):  # and let go
        pass


def test_a_fresh_run_of_a_directory_in_use_is_told_so_before_torch_loads(tmp_path: Path, capsys) -> None:
    """``halma train``'s check of a new run's directory, before torch loads, came before the lock: started again
    while the first run was training (before its first checkpoint), it said "no checkpoint (a run stopped before
    its first one) ... remove the directory to start over" of the live run.  It looks at the lock first now,
    without torch and without writing."""
    import subprocess
    import sys

    from agents.cli import main
    from agents.files import held_lock
    from agents.run_dir import run_lock_file

    config = _write_config(tmp_path)
    runs = tmp_path / "runs"
    run_dir = runs / "tiny"
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text("written by the run in progress\n")
    flags = ["train", config, "--runs-dir", str(runs), "--quiet"]
    without_torch = "import sys\nsys.modules['torch'] = None\nfrom agents.cli import main\nsys.exit(main(sys.argv[1:]))"
    root = Path(__file__).resolve().parents[1]
    with held_lock(run_lock_file(run_dir)):
        assert main(flags) == 2
        assert capsys.readouterr().err == f"halma train: error: {_in_use(run_dir)}\n"
        done = subprocess.run([sys.executable, "-c", without_torch, *flags, "--resume"], cwd=root,
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (2, f"halma train: error: {_in_use(run_dir)}\n")
    assert sorted(str(p.relative_to(runs)) for p in runs.rglob("*")) == [".tiny.lock", "tiny", "tiny/config.yaml"]
    assert main(flags) == 2  # let go: the directory's own refusal
    assert "already holds config.yaml but no checkpoint" in capsys.readouterr().err
