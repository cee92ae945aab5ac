"""``halma train`` stopped on the way (agents/train.py, agents/parallel.py): Ctrl-C in the final evaluation, a
process of several killed by a signal, SIGTERM of a run in several processes; what it leaves on disk."""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest
import yaml
from test_parallel import kill_left, wait_until_gone
from test_train import tiny_config

import agents.cli
import agents.ppo
import halma_env.files
from agents.checkpoint import load_checkpoint
from agents.cli import main
from agents.interrupts import Terminated
from tests.process_helpers import signal_when

ROOT = Path(__file__).resolve().parents[1]


def _final_eval_config(path: Path, **changes) -> list[str]:
    """A tiny run with a final evaluation (2 games against random, capped at 40 plies), and an evaluation during
    training at its last step; the config file and the command's flags after ``train``."""
    data = tiny_config(**changes)
    data["eval"].update(every=4 * 16 * 3, games=1, opponents=["random"], final_games=2, final_opponents=["random"],
                        move_limit=40)
    path.write_text(yaml.safe_dump(data))
    return [str(path), "--runs-dir", str(path.parent), "--quiet"]


def _interrupt_final_evaluation(monkeypatch) -> None:
    """Ctrl-C (a KeyboardInterrupt) as the final evaluation starts; evaluations during training run."""
    real = agents.ppo.Trainer.run_evaluation

    def run_evaluation(self, opponents, games, final=False):
        if final:
            raise KeyboardInterrupt
        return real(self, opponents, games, final)

    monkeypatch.setattr(agents.ppo.Trainer, "run_evaluation", run_evaluation)


def test_ctrl_c_in_the_final_evaluation_is_finished_by_resume(tmp_path: Path, capsys, monkeypatch) -> None:
    """The hint after Ctrl-C in the final evaluation says that training is complete; its --resume runs the final
    evaluation (it said "nothing to do"), and only then is there nothing to do."""
    flags = _final_eval_config(tmp_path / "c.yaml")
    run = tmp_path / "tiny"
    _interrupt_final_evaluation(monkeypatch)
    assert main(["train", *flags]) == 130
    out, err = capsys.readouterr()
    assert "trained 192 steps" in out and "Traceback" not in err
    assert "interrupted during the final evaluation; training is complete" in err
    assert f"run the final evaluation with: halma train {flags[0]} --resume --runs-dir {tmp_path}" in err
    assert not (run / "final_eval.json").exists()
    monkeypatch.undo()

    last = (run / "checkpoints" / "last.pt").read_bytes()
    assert main(["train", *flags, "--resume", "--no-final-eval"]) == 0  # asked for none: nothing to do
    assert "nothing to do" in capsys.readouterr().err and not (run / "final_eval.json").exists()

    assert main(["train", *flags, "--resume"]) == 0
    out, err = capsys.readouterr()
    assert "has no final evaluation of it: running it now" in err and "nothing to do" not in err
    assert "final evaluation (" in out and "| random | 2 |" in out and "trained" not in out
    assert json.loads((run / "final_eval.json").read_text())["global_step"] == 192
    assert (run / "final_eval.md").is_file()
    assert (run / "checkpoints" / "last.pt").read_bytes() == last  # nothing trained

    assert main(["train", *flags, "--resume"]) == 0
    assert "nothing to do" in capsys.readouterr().err

    # a longer session whose final evaluation is interrupted: the shorter session's final_eval.json is not its own
    _interrupt_final_evaluation(monkeypatch)
    assert main(["train", *flags, "--resume", "--set", "ppo.total_steps=256"]) == 130
    capsys.readouterr()
    monkeypatch.undo()
    assert main(["train", *flags, "--resume", "--set", "ppo.total_steps=256"]) == 0
    assert "running it now" in capsys.readouterr().err
    assert json.loads((run / "final_eval.json").read_text())["global_step"] == 256


def _scalar_steps(tb: Path, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    steps = []
    for events in sorted(tb.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(events)).Load():
            steps += [event.step for value in event.summary.value if value.tag == tag]
    return steps


def test_the_final_evaluation_is_not_written_to_a_closed_tensorboard_log(tmp_path: Path, capsys) -> None:
    """It went to TensorBoard after the writer was closed: a second event file, and a second eval/* point at the
    last step.  It is in final_eval.json/md and eval.jsonl."""
    flags = _final_eval_config(tmp_path / "c.yaml")
    assert main(["train", *flags]) == 0
    assert "final evaluation (" in capsys.readouterr().out
    tb = tmp_path / "tiny" / "tb"
    assert len(list(tb.glob("events.out.tfevents.*"))) == 1
    assert _scalar_steps(tb, "eval/random/win_rate") == [192]  # the evaluation during training alone
    lines = [json.loads(line) for line in (tmp_path / "tiny" / "eval.jsonl").read_text().splitlines()]
    assert [line["final"] for line in lines] == [False, True]


# --- several processes: signals -------------------------------------------------------------------------------


def _training_processes(parent: int) -> list[int]:
    """The processes ``spawn`` started (not multiprocessing's resource tracker)."""
    try:
        children = [int(pid) for pid in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
    except OSError:
        return []
    found = []
    for pid in children:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.parametrize("how", ["kill -9 of a process", "kill of halma train"])
def test_a_run_in_two_processes_stopped_by_a_signal_says_how_to_continue(tmp_path: Path, how: str) -> None:
    """SIGKILL of one process (the OOM killer) gave torch's ProcessExitedException traceback; SIGTERM of
    ``halma train`` left its temporary folder.  Now: one line naming what happened, the resume hint, the other
    processes stopped, the temporary folder removed."""
    data = tiny_config(ppo__total_steps=4 * 16 * 10_000)  # stopped long before its end
    data["processes"] = 2
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    tmp = tmp_path / "tmp"  # spawn's temporary folder goes here
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                                                       os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "agents.cli", "train", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path),
           "--quiet"]
    parent = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "tiny" / "checkpoints" / "last.pt").exists():  # a checkpoint at every update
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "no checkpoint was written"
            time.sleep(0.2)
        pids = _training_processes(parent.pid)
        assert len(pids) == 2
        if how == "kill -9 of a process":
            os.kill(pids[1], signal.SIGKILL)
        else:
            parent.send_signal(signal.SIGTERM)
        _, err = parent.communicate(timeout=120)
        wait_until_gone(pids, "a process outlived the run")
    finally:
        parent.kill()
        kill_left(pids)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("halma train:")]  # gloo may add its own
    assert len(lines) == 1, err
    if how == "kill -9 of a process":
        assert parent.returncode == 1
        assert lines[0].startswith("halma train: error: process ")
        assert f"(pid {pids[1]}) was killed by SIGKILL" in lines[0]
        assert "the other processes were stopped" in lines[0]
    else:
        assert parent.returncode == 128 + signal.SIGTERM
        assert lines[0].startswith("halma train: stopped by SIGTERM; ")
    assert f"continue with: halma train {tmp_path / 'c.yaml'} --resume --runs-dir {tmp_path}" in lines[0]
    assert not list(tmp.glob("halma-ddp-*"))


# --- a full disk, signals in one process (the interruption review) ---------------------------------------------


def _no_space(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_training_says_how_to_continue(tmp_path: Path, capsys, monkeypatch) -> None:
    """A checkpoint that could not be written (ENOSPC) was a traceback, exit status 1 and "please report it", with
    no word on the last.pt left intact.  Now one line naming the problem, the resume hint, exit status 2."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    run = tmp_path / "tiny"
    save = agents.ppo.save_checkpoint

    def full_at_update_2(file, payload):
        if payload["update"] == 2 and Path(file).name == "last.pt":
            _no_space()
        return save(file, payload)

    monkeypatch.setattr(agents.ppo, "save_checkpoint", full_at_update_2)
    flags = [str(path), "--runs-dir", str(tmp_path), "--quiet"]
    assert main(["train", *flags]) == 2
    last = run / "checkpoints" / "last.pt"
    assert capsys.readouterr().err == (
        f"halma train: error: cannot write the run directory {str(run)!r}: No space left on device; the last "
        f"checkpoint is {last} (written every checkpoint.every=1 updates); continue with: halma train {path} "
        f"--resume --runs-dir {tmp_path} --quiet\n")  # (--quiet kept: it is not in the stored config)
    assert load_checkpoint(last)["update"] == 1
    monkeypatch.undo()
    assert main(["train", *flags, "--resume"]) == 0
    assert load_checkpoint(last)["update"] == 3


def test_a_file_missing_while_training_is_not_called_a_write_failure(tmp_path: Path, monkeypatch) -> None:
    """Every OSError became "cannot write ...: No such file or directory" with exit 2: a file to read that went
    missing (a snapshot, an opponent's model) is not a full disk, and keeps its traceback as the bug it is."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    save = agents.ppo.save_checkpoint

    def gone_at_update_2(file, payload):
        if payload["update"] == 2:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(tmp_path / "snapshot.pt"))
        return save(file, payload)

    monkeypatch.setattr(agents.ppo, "save_checkpoint", gone_at_update_2)
    with pytest.raises(FileNotFoundError):
        main(["train", str(path), "--runs-dir", str(tmp_path), "--quiet"])


@pytest.mark.parametrize("failing", ["eval.jsonl", "final_eval.json"])
def test_a_full_disk_in_the_final_evaluation_says_how_to_finish_it(tmp_path: Path, capsys, monkeypatch,
                                                                   failing: str) -> None:
    """The same in the closing evaluation, which also left an empty eval.jsonl (opened to append before its write
    failed): eval.jsonl is as it was before the evaluation, and --resume runs it."""
    flags = _final_eval_config(tmp_path / "c.yaml")
    run = tmp_path / "tiny"
    if failing == "eval.jsonl":  # no evaluation during training: the final one's line would be the file's first
        data = yaml.safe_load((tmp_path / "c.yaml").read_text())
        data["eval"]["every"] = 0
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))

        def full_on_append(file, mode="r", *args, **kwargs):
            f = open(file, mode, *args, **kwargs)  # made (empty) before the write fails, as with a full disk
            if Path(file).name == "eval.jsonl" and "a" in mode:
                f.write = _no_space
            return f

        monkeypatch.setattr(agents.ppo, "open", full_on_append, raising=False)
    else:
        write_atomic = halma_env.files.write_atomic
        monkeypatch.setattr(halma_env.files, "write_atomic",
                            lambda file, data: (_no_space() if Path(file).name == failing else
                                                write_atomic(file, data)))
    assert main(["train", *flags]) == 2
    out, err = capsys.readouterr()
    assert "trained 192 steps" in out
    assert err == (f"halma train: error: cannot write the run directory {str(run)!r}: No space left on device; "
                   f"training is complete ({run / 'checkpoints' / 'last.pt'} is at update 3, 192 steps); run the final "
                   f"evaluation with: halma train {flags[0]} --resume --runs-dir {tmp_path} --quiet\n")
    before = [] if failing == "eval.jsonl" else [False]  # the evaluation during training
    if before:
        assert [json.loads(line)["final"] for line in (run / "eval.jsonl").read_text().splitlines()] == before
    else:
        assert not (run / "eval.jsonl").exists()
    assert not (run / "final_eval.json").exists()
    monkeypatch.undo()
    assert main(["train", *flags, "--resume"]) == 0
    assert "running it now" in capsys.readouterr().err
    lines = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    assert [line["final"] for line in lines] == [*before, True]
    assert json.loads((run / "final_eval.json").read_text())["global_step"] == 192


def test_a_full_disk_in_process_0_of_several_is_one_line_too(tmp_path: Path, capsys, monkeypatch) -> None:
    """With several processes process 0's error came back as a traceback (ProcessRaisedException): it raises
    RunError, which halma train finds in it and says as one line with the resume hint."""
    from torch.multiprocessing import ProcessRaisedException

    import agents.parallel

    def spawn(fn, world_size, *args):  # process 0 of 2, as parallel._entry reports its error
        try:
            return fn(0, world_size, *args)
        except BaseException:
            raise ProcessRaisedException(f"\n\n-- Process 0 terminated with the following error:\n"
                                         f"{traceback.format_exc()}", 0, os.getpid()) from None

    monkeypatch.setattr(agents.parallel, "spawn", spawn)
    monkeypatch.setattr(agents.ppo, "save_checkpoint", _no_space)
    data = tiny_config(ppo__total_steps=64)
    data["processes"] = 2
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    assert main(["train", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"halma train: error: cannot write the run directory {str(tmp_path / 'tiny')!r}: No space left on device; "
        "no checkpoint was written yet (the first comes after checkpoint.every=1 updates), so there is nothing to "
        f"resume: remove {shlex.quote(str(tmp_path / 'tiny'))} (or choose another --set name=NAME) and run the same "
        "command again to start over\n")


@pytest.mark.parametrize(("raised", "status", "said"), [(KeyboardInterrupt, 130, "interrupted"),
                                                        (Terminated, 143, "stopped by SIGTERM")])
def test_a_signal_during_the_imports_is_one_line(monkeypatch, capsys, raised, status: int, said: str) -> None:
    """Ctrl-C half a second into ``halma train`` (the command's imports, in cli.build_parser) was a traceback."""
    build_parser = agents.cli.build_parser

    def importing(load=None):
        if load is not None:
            raise raised
        return build_parser(load)

    monkeypatch.setattr(agents.cli, "build_parser", importing)
    before = signal.getsignal(signal.SIGTERM)
    assert main(["train", "configs/quickstart.yaml"]) == status
    assert capsys.readouterr().err == f"\nhalma train: {said}\n"
    assert signal.getsignal(signal.SIGTERM) is before  # cli's handler was the command's alone


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_of_a_run_in_one_process_stops_it_as_ctrl_c_does(tmp_path: Path, signum: int) -> None:
    """SIGTERM (``kill``, a job scheduler) of a one-process ``halma train`` ended it at once with status 143 and
    not a word: no checkpoint of the updates since the last one, no resume command.  Now it stops after the
    update in progress, saves last.pt and says how to continue, as Ctrl-C does (exit status 143).  SIGHUP (the
    ssh session of a run started with ``&`` closed) too, exit status 129: it killed the run without a checkpoint."""
    data = tiny_config(ppo__total_steps=4 * 16 * 10_000, checkpoint__every=10_000)  # stopped long before its end
    data["log"]["tensorboard"] = False
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    cmd = [sys.executable, "-m", "agents.cli", "train", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path),
           "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    snapshots = tmp_path / "tiny" / "snapshots"  # a snapshot at every update
    err = signal_when(proc, lambda: bool(list(snapshots.glob("snap_*.pt"))), "training did not start",
                      signum=signum)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum and "Traceback" not in err, err
    assert f"halma train: stopped by {name}: stopping after this update and saving a checkpoint" in err
    last = tmp_path / "tiny" / "checkpoints" / "last.pt"
    update = load_checkpoint(last)["update"]  # no checkpoint.every came: the one the stop wrote
    assert err.endswith(f"halma train: stopped at update {update} ({update * 64} steps); checkpoint {last}; continue "
                        f"with: halma train {tmp_path / 'c.yaml'} --resume --runs-dir {tmp_path} --quiet\n"), err


def _train_on_a_terminal(tmp_path: Path, data: dict) -> tuple[subprocess.Popen, int]:
    """halma train of config ``data`` with stdout and stderr on a pseudo-terminal: the process and the terminal's
    master side, which the test reads (as a terminal does) and closes to hang it up."""
    import pty

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    master, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agents.cli", "train", str(tmp_path / "c.yaml"), "--runs-dir",
                             str(tmp_path)], stdout=terminal, stderr=terminal, stdin=subprocess.DEVNULL, cwd=ROOT)
    os.close(terminal)
    return proc, master


def _last_snapshot(tmp_path: Path) -> int:
    """The update of the run's newest snapshot, 0 before the first (tiny_config's pool.snapshot_every=1: one after
    every update, the older ones dropped)."""
    return max((int(p.stem.removeprefix("snap_")) for p in (tmp_path / "tiny" / "snapshots").glob("snap_*.pt")),
               default=0)


def _read_until_the_first_update(proc: subprocess.Popen, master: int, tmp_path: Path, deadline: float) -> None:
    """Read what the run writes to its terminal until its first update's snapshot is there (the lines before the
    updates shown)."""
    import select

    while not _last_snapshot(tmp_path):
        assert proc.poll() is None and time.monotonic() < deadline, "training did not start"
        if select.select([master], [], [], 0.05)[0]:
            os.read(master, 65536)


def _status_line_every_update() -> dict:
    """A long run (the test stops it) with a status line after every update."""
    data = tiny_config(ppo__total_steps=4 * 16 * 10_000, checkpoint__every=10_000)
    data["log"].update(tensorboard=False, status_every=1e-6)
    return data


@pytest.mark.parametrize("updates_between", [0, 2], ids=["sighup-at-once", "sighup-two-updates-later"])
def test_a_hangup_of_the_terminal_itself_still_saves_the_checkpoint(tmp_path: Path, updates_between: int) -> None:
    """The terminal gone (its master side closed), then SIGHUP: every write to it fails with EIO, and the next
    status line stopped the run as a full disk, exit 1, without its checkpoint.  The output now goes to /dev/null
    and the stop saves last.pt, exit 129.  The SIGHUP may come late (the shell passes it on; a run that ignores it
    never gets it): the status lines that failed meanwhile stopped the run, and the SIGHUP that came then killed it
    (CI saw it: exit -1).  The run now trains on, its output in /dev/null, until the SIGHUP stops it."""
    proc, master = _train_on_a_terminal(tmp_path, _status_line_every_update())
    try:
        deadline = time.monotonic() + 120
        _read_until_the_first_update(proc, master, tmp_path, deadline)
        os.close(master)  # the terminal hangs up
        at_hangup = _last_snapshot(tmp_path)
        while _last_snapshot(tmp_path) < at_hangup + updates_between:  # each update with a status line that failed
            assert proc.poll() is None, f"the run stopped at the hangup, exit {proc.returncode}"
            assert time.monotonic() < deadline, "the run made no update after the hangup"
            time.sleep(0.05)
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(120) == 128 + signal.SIGHUP
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert load_checkpoint(tmp_path / "tiny" / "checkpoints" / "last.pt")["update"] >= 1 + updates_between


def test_a_closed_pipe_stops_the_run_with_its_checkpoint(tmp_path: Path) -> None:
    """stdout's reader gone (``| head``, or a ``| tee`` that the same Ctrl-C ended): the next status line's EPIPE
    was raised out of the updates, exit 1 without a checkpoint.  The run now stops after the update as on Ctrl-C,
    saves last.pt and says how to continue (on stderr), exit 1 (a closed pipe's, as every halma command's)."""
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(_status_line_every_update()))
    with open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "agents.cli", "train", str(tmp_path / "c.yaml"), "--runs-dir",
                                 str(tmp_path), "--quiet"], stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL, cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(b"training star 2 seats")
        assert proc.stdout.readline().startswith(b"update 1/")
        proc.stdout.close()  # the reader goes away
        assert proc.wait(120) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = (tmp_path / "err").read_text()
    last = tmp_path / "tiny" / "checkpoints" / "last.pt"
    update = load_checkpoint(last)["update"]
    assert update >= 1 and said.endswith(
        f"halma train: the standard output's reader went away: stopped at update {update} ({update * 64} steps); "
        f"checkpoint {last}; continue with: halma train {tmp_path / 'c.yaml'} --resume --runs-dir {tmp_path} "
        "--quiet\n") and "Traceback" not in said, said


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_standard_output_at_the_first_line_says_how_to_start_over(tmp_path: Path) -> None:
    """> /dev/full: the first line failed after the run directory was made, and the error said nothing of it,
    so the same command again was refused (a run directory without a checkpoint) without a word of why."""
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(tiny_config()))
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agents.cli", "train", str(tmp_path / "c.yaml"), "--runs-dir",
                               str(tmp_path)], stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr == (
        "halma train: error: cannot write the standard output: No space left on device; no checkpoint was written "
        "yet (the first comes after checkpoint.every=1 updates), so there is nothing to resume: remove "
        f"{tmp_path / 'tiny'} (or choose another --set name=NAME) and run the same command again to start over\n")


def test_a_terminal_that_hangs_up_without_a_sighup_leaves_the_bar_run_to_finish(tmp_path: Path) -> None:
    """The bar (stderr a terminal) swallows its own EIO, so nothing had sent the output to /dev/null: the line
    after the training, 'trained N steps', failed, exit 1 with a traceback and no final evaluation.  Every line
    of halma train now takes a hung-up terminal as /dev/null; the run finishes with its evaluation, exit 0."""
    data = tiny_config(ppo__total_steps=4 * 16 * 40, checkpoint__every=10_000, eval__every=0, eval__final_games=2)
    data["log"].update(tensorboard=False, progress_bar=True)
    proc, master = _train_on_a_terminal(tmp_path, data)
    try:
        # the bar is drawn by then (with no columns to draw in on this terminal, as an empty line)
        _read_until_the_first_update(proc, master, tmp_path, time.monotonic() + 120)
        os.close(master)  # the terminal hangs up, and no SIGHUP comes (a disowned job, or SIGHUP ignored)
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert json.loads((tmp_path / "tiny" / "final_eval.json").read_text())["global_step"] == 4 * 16 * 40


def test_a_run_started_with_hangups_ignored_keeps_ignoring_them(monkeypatch) -> None:
    """nohup halma train ... &: the graceful stop put its handler over nohup's SIG_IGN, so the first hangup
    stopped the run that nohup was asked to keep going."""
    from agents.train import _GracefulInterrupt

    before = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with _GracefulInterrupt() as interrupt:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == interrupt._handle  # the others are taken as ever
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
