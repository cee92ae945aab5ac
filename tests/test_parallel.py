"""Data-parallel training (``processes`` > 1, agents/parallel.py): the gradient average, and whole runs in two
processes (deterministic, resumable, checked to hold the same weights)."""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from test_train import tiny_config

from agents import parallel, registry
from agents.checkpoint import load_checkpoint
from agents.config import from_dict
from agents.interrupts import exit_with_parent
from agents.ppo import check_same_weights
from agents.train import train_and_evaluate


def _average(rank: int, world_size: int) -> list[torch.Tensor]:
    """Each process's gradients and sample count; the weighted mean is the same in both."""
    a, b = torch.nn.Parameter(torch.zeros(2, 2)), torch.nn.Parameter(torch.zeros(3))
    if rank == 0:  # 3 samples, mean gradients 1 and 10
        a.grad, b.grad, weight = torch.full((2, 2), 1.0), torch.full((3,), 10.0), 3
    else:  # 1 sample, mean gradient 5 for a; b unused in this process (no gradient: counts as zero)
        a.grad, b.grad, weight = torch.full((2, 2), 5.0), None, 1
    total = parallel.average_gradients([a, b], weight)
    empty_a, empty_b = torch.nn.Parameter(torch.zeros(2, 2)), torch.nn.Parameter(torch.zeros(3))
    empty_total = parallel.average_gradients([empty_a, empty_b], 0)  # no process had a sample
    single = torch.nn.Parameter(torch.zeros(1))  # a model of one parameter
    single.grad = torch.full((1,), 4.0 * rank)
    parallel.average_gradients([single], 1)
    # process 0's parameters and buffers in both
    module = torch.nn.Linear(1, 1)
    module.weight.data.fill_(rank + 1.0)
    module.register_buffer("count", torch.tensor([rank + 5]))
    parallel.broadcast_parameters(module)
    seen = parallel.gather((rank, module.weight.item(), module.count.item()))
    return [torch.tensor(total), a.grad, b.grad, torch.tensor(empty_total), empty_a.grad,
            torch.tensor(parallel.any_true(rank == 1)), torch.tensor(parallel.weighted_mean(float(rank), 1 + 2 * rank)),
            torch.tensor(parallel.weighted_mean(float(rank), rank)), torch.tensor(parallel.weighted_mean(1.0, 0)),
            parallel.any_true(False), single.grad, seen]


def test_gradients_are_averaged_by_sample_count() -> None:
    (total, a, b, empty_total, empty_a, any_flag, mean, one_weighed, none_weighed, none_true, single,
     seen) = parallel.spawn(_average, 2)
    assert total.item() == 4
    assert torch.equal(a, torch.full((2, 2), (3 * 1.0 + 1 * 5.0) / 4))
    assert torch.equal(b, torch.full((3,), 3 * 10.0 / 4))
    assert empty_total.item() == 0 and torch.equal(empty_a, torch.zeros(2, 2))
    assert any_flag.item() and mean.item() == 0.75 and none_true is False  # (0 x 1 + 1 x 3) / 4
    assert one_weighed.item() == 1.0 and none_weighed.item() == 0.0  # a process of weight 0 adds nothing
    assert torch.equal(single, torch.full((1,), 2.0))
    assert seen == [(0, 1.0, 5), (1, 1.0, 5)]  # gathered in rank order, after process 0's were broadcast


def test_a_group_of_one_process_is_not_active(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The collectives return at once unless there are other processes to wait for."""
    import torch.distributed as dist

    if parallel.loopback_interface() is not None:
        monkeypatch.setenv("GLOO_SOCKET_IFNAME", parallel.loopback_interface() or "")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        assert dist.is_initialized() and not parallel.active()
    finally:
        dist.destroy_process_group()


def _update_with_an_empty_share(rank: int, world_size: int, run_dir: str) -> list[Any]:
    from test_train import _learner_batch, quiet

    from agents.ppo import RolloutBuffer, Trainer

    trainer = Trainer(from_dict(tiny_config()), Path(run_dir) / str(rank), log=quiet, rank=rank,
                      world_size=world_size)
    if rank == 0:
        d = _learner_batch(trainer, plies=4, generator=torch.Generator().manual_seed(5))
    else:  # this process's rollout had no learner decision (all tables bots, or a tiny num_steps)
        empty = RolloutBuffer(None, num_players=2, num_envs=1)
        empty.finish()
        d = empty.batch(0.9, 0.9, torch.device("cpu"))
    stats = trainer._ppo_update(d)
    # what each process saw, to process 0 (spawn returns its result)
    return parallel.gather([stats["charts/transitions"], stats["losses/explained_variance"],
                            trainer.net.state_dict()])


def test_a_process_without_decisions_takes_part_in_the_update(tmp_path: Path) -> None:
    """Its batch holds only "adv", and the update read its returns for the explained variance: KeyError."""
    (count0, var0, weights0), (count1, var1, weights1) = parallel.spawn(_update_with_an_empty_share, 2,
                                                                         str(tmp_path))
    assert count0 == count1 == 16 and var0 == var1  # over both processes' decisions: process 0's 16
    for name, param in weights0.items():
        torch.testing.assert_close(weights1[name], param, rtol=0, atol=0, msg=name)  # the same step in both


def _update_with_an_empty_last_share(rank: int, world_size: int, run_dir: str, target_kl: float | None,
                                     epochs: int = 3) -> Any:
    from test_train import _learner_batch, quiet

    from agents.ppo import RolloutBuffer, Trainer

    cfg = from_dict(tiny_config(ppo__target_kl=target_kl, ppo__num_minibatches=1, ppo__update_epochs=epochs))
    trainer = Trainer(cfg, Path(run_dir) / str(rank), log=quiet, rank=rank, world_size=world_size)
    if rank == 0:
        d = _learner_batch(trainer, plies=4, generator=torch.Generator().manual_seed(5))
    else:
        empty = RolloutBuffer(None, num_players=2, num_envs=1)
        empty.finish()
        d = empty.batch(0.9, 0.9, torch.device("cpu"))
    stats = trainer._ppo_update(d)
    return stats["losses/approx_kl"], trainer.net.state_dict()


def test_the_kl_early_stop_is_over_the_rows_of_the_last_minibatch(tmp_path: Path) -> None:
    """target_kl compared the mean of the processes' KLs, and a process with no row in the last minibatch
    added the KL of an earlier one (here none: 0.0), halving process 0's: two processes, one of them
    without decisions, stop after the same epoch as one process with the other's decisions."""
    def alone(name: str, target_kl: float | None, epochs: int = 3) -> tuple[float, dict[str, torch.Tensor]]:
        return _update_with_an_empty_last_share(0, 1, str(tmp_path / name), target_kl, epochs)

    first_kl, _ = alone("kl", None, epochs=1)  # the first epoch's KL: that of its only minibatch
    target = 0.75 * first_kl
    _, one_epoch = alone("stop", target)  # stops after the first epoch
    _, three_epochs = alone("on", 1e6)
    assert any(not torch.allclose(three_epochs[name], param) for name, param in one_epoch.items())
    weights = parallel.spawn(_update_with_an_empty_last_share, 2, str(tmp_path / "two"), target)[1]
    for name, param in one_epoch.items():
        torch.testing.assert_close(weights[name], param, msg=name)


def test_one_process_needs_no_group() -> None:
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.ones(2)
    assert parallel.average_gradients([p], 7) == 7 and torch.equal(p.grad, torch.ones(2))
    assert parallel.gather("x") == ["x"] and parallel.any_true(False) is False
    assert parallel.weighted_mean(2.5, 3) == 2.5 and parallel.any_true(True) is True


def test_differing_weights_are_an_error() -> None:
    check_same_weights(["abc", "abc"], 3)
    with pytest.raises(RuntimeError, match="different weights at update 3"):
        check_same_weights(["abc", "abd"], 3)


def _args(runs_dir: Path, resume: bool = False) -> argparse.Namespace:
    return argparse.Namespace(runs_dir=str(runs_dir), device=None, resume=resume, no_final_eval=True, quiet=True)


def _train(data: dict, runs_dir: Path, resume: bool = False) -> dict:
    cfg = from_dict(data)
    code = (parallel.spawn(train_and_evaluate, cfg.processes, cfg, _args(runs_dir, resume)) if cfg.processes > 1
            else train_and_evaluate(0, 1, cfg, _args(runs_dir, resume)))
    assert code == 0
    return load_checkpoint(runs_dir / data["name"] / "checkpoints" / "last.pt", variant="star", num_players=2)


def test_two_processes_train_deterministically_and_resume(tmp_path: Path) -> None:
    data = dict(tiny_config(), processes=2)
    runs = [_train(data, tmp_path / f"r{i}") for i in range(2)]
    for key, value in runs[0]["model"].items():
        assert torch.equal(value, runs[1]["model"][key]), key
    assert runs[0]["global_step"] == 3 * 4 * 16  # the config's num_envs (4) in all, 2 per process
    assert len(runs[0]["rng_ranks"]) == 2 and runs[0]["rng"]["numpy"] == runs[0]["rng_ranks"][0]["numpy"]
    assert runs[0]["rng_ranks"][0]["numpy"] != runs[0]["rng_ranks"][1]["numpy"]  # each process its own games
    assert len(list((tmp_path / "r0" / "tiny" / "tb").glob("events.out.tfevents.*"))) == 1  # process 0 logs
    # every process's transitions are counted (process 0's alone were about half of the 64 plies of self-play
    # per update: a ply's decision is completed by the seat's next move, at most 2 per game pending at a cut)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "r0" / "tiny" / "tb"))
    events.Reload()
    assert [e.step for e in events.Scalars("charts/transitions")] == [64, 128, 192]
    assert all(56 <= e.value <= 72 for e in events.Scalars("charts/transitions"))

    # a run of 2 updates resumed to 3 continues from its weights, optimiser and each process's random streams
    short = copy.deepcopy(data)
    short["ppo"]["total_steps"] = 4 * 16 * 2
    first = _train(short, tmp_path / "split")
    resumed = _train(data, tmp_path / "split", resume=True)
    assert resumed["global_step"] == 3 * 4 * 16 and resumed["update"] == 3
    assert any(not torch.equal(value, first["model"][key]) for key, value in resumed["model"].items())

    # and a run written by two processes continues in one
    longer = dict(copy.deepcopy(data), processes=1)
    longer["ppo"]["total_steps"] = 4 * 16 * 4
    assert _train(longer, tmp_path / "split", resume=True)["global_step"] == 4 * 4 * 16


def test_processes_are_checked() -> None:
    with pytest.raises(ValueError, match="processes must be >= 1"):
        from_dict(dict(tiny_config(), processes=0))
    with pytest.raises(ValueError, match=r"env\.num_envs \(4\) must be a multiple of processes \(3\)"):
        from_dict(dict(tiny_config(), processes=3))
    with pytest.raises(ValueError, match="run on the CPU"):
        from_dict(dict(tiny_config(), processes=2, device="cuda"))


def test_a_process_that_cannot_start_stops_them_all(tmp_path: Path, capfd) -> None:
    cfg = from_dict(dict(tiny_config(), processes=2))
    assert parallel.spawn(train_and_evaluate, 2, cfg, _args(tmp_path, resume=True)) == 2  # nothing to resume
    err = capfd.readouterr().err
    assert "halma train: error: --resume: no checkpoint" in err and err.count("halma train:") == 1  # said once


def _fail_in_one(rank: int, world_size: int) -> None:
    if rank == 1:
        raise ValueError("process 1 failed")
    parallel.gather("waiting for process 1")  # would wait for the group's timeout if spawn did not stop it


def test_a_process_that_fails_stops_the_others(tmp_path: Path, monkeypatch) -> None:
    # and torch's file of its traceback ($TMPDIR/pytorch-errorfile-*.pickle) goes: one was left per failed run
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(torch.multiprocessing.ProcessRaisedException, match="process 1 failed"):
        parallel.spawn(_fail_in_one, 2)
    assert list(tmp_path.iterdir()) == []


def test_on_windows_a_process_waits_on_its_parent_s_handle(monkeypatch) -> None:
    """os.getppid keeps naming a parent that is gone on Windows (the polling would never end): there the
    process waits for multiprocessing's handle of its parent, then exits."""
    import multiprocessing

    events: list[str] = []

    class Parent:
        def join(self) -> None:
            events.append("joined")

    def exit_(code: int) -> None:
        events.append(f"exit {code}")
        raise SystemExit(code)

    monkeypatch.setattr(multiprocessing, "parent_process", lambda: Parent())
    monkeypatch.setattr(os, "_exit", exit_)
    monkeypatch.setattr(os, "getppid", lambda: pytest.fail("polled getppid"))
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(SystemExit):
        exit_with_parent(12345)
    monkeypatch.undo()
    assert events == ["joined", "exit 1"]


def _listening_addresses(rank: int, world_size: int) -> list[str]:
    """The local addresses of this process's listening TCP sockets (Linux: /proc)."""
    parallel.gather("both processes are connected")
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN, one of this process's sockets
                addresses.append(fields[1].split(":")[0])
    return addresses


@pytest.mark.skipif(not Path("/proc/net/tcp").exists() or parallel.loopback_interface() is None,
                    reason="reads Linux's /proc socket tables")
def test_the_processes_listen_on_the_loopback_interface_only(monkeypatch) -> None:
    # a name gloo cannot find: the processes must not use the environment's interface (a cluster node's
    # network address), only the loopback one, whatever GLOO_SOCKET_IFNAME says
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "halma-no-such-interface")
    addresses = parallel.spawn(_listening_addresses, 2)
    assert addresses and set(addresses) == {"0100007F"}  # 127.0.0.1, as /proc/net/tcp writes it


def _write_pid_and_wait(rank: int, world_size: int, folder: str) -> None:
    Path(folder, f"{rank}.pid").write_text(str(os.getpid()))
    time.sleep(600)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")  # a zombie has ended


def wait_until_gone(pids: list[int], what: str, seconds: float = 30) -> None:
    """Wait for the processes ``pids`` to end; fail with ``what`` if one outlives ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def kill_left(pids: list[int]) -> None:
    """Kill what a failed test left running."""
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_processes_stop_when_their_parent_is_killed(tmp_path: Path, how: int) -> None:
    """``kill -9``, ``kill -INT`` or ``kill`` of ``halma train`` alone must not leave its processes training on;
    nor, but for ``kill -9``, its temporary folder."""
    code = ("from agents import parallel; import test_parallel as t; "
            f"parallel.spawn(t._write_pid_and_wait, 2, {str(tmp_path)!r})")
    path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    tmp = tmp_path / "tmp"  # spawn's temporary folders go here
    tmp.mkdir()
    # A shell starts background jobs with SIGINT ignored, and Python then installs no KeyboardInterrupt
    # handler: restore the default, as a terminal's Ctrl-C finds it, so the test does not depend on how
    # pytest itself was started.
    parent = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=path, TMPDIR=str(tmp)),
                              preexec_fn=_default_sigint)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(pids) < 2:
            assert parent.poll() is None and time.monotonic() < deadline, "the processes did not start"
            time.sleep(0.2)
            pids = [int(f.read_text()) for f in tmp_path.glob("*.pid") if f.read_text()]
        parent.send_signal(how)
        parent.wait(timeout=30)
        wait_until_gone(pids, "the processes outlived their parent")
    finally:
        parent.kill()
        kill_left(pids)
    left = list(tmp.glob("halma-ddp-*"))
    if how != signal.SIGKILL:
        assert not left
        return
    assert len(left) == 1  # nothing runs to remove it then (it holds the rendezvous file and nothing more)
    # the processes stopped quietly: torch's spawn asks Linux for SIGINT at the parent's death, which
    # interrupted them mid-work with a traceback on the terminal after the parent was gone
    assert not list(left[0].glob("error-*.txt"))


def _kill_one(rank: int, world_size: int, folder: str) -> None:
    Path(folder, f"{rank}.pid.tmp").write_text(str(os.getpid()))
    Path(folder, f"{rank}.pid.tmp").replace(Path(folder, f"{rank}.pid"))  # (whole, for the test to read)
    if rank == 1:
        # once process 0 has written its pid (on a loaded machine it could still be starting when process 1 was
        # killed, and was stopped before it wrote it: the test then found no 0.pid)
        deadline = time.monotonic() + 120
        while not Path(folder, "0.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer does
    parallel.gather("waiting for process 1")


def test_a_process_killed_by_a_signal_is_named_in_one_line_and_the_others_stopped(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """It raised torch's ``process 1 terminated with signal SIGKILL``, which ``halma train`` printed as a traceback
    without the resume hint (it handled only ProcessRaisedException)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(torch.multiprocessing.ProcessExitedException) as info:
        parallel.spawn(_kill_one, 2, str(tmp_path))
    pids = [int((tmp_path / f"{rank}.pid").read_text()) for rank in range(2)]
    assert str(info.value) == (f"process 1 (pid {pids[1]}) was killed by SIGKILL (the kernel's out-of-memory killer "
                               "sends it, as does kill -9); the other processes were stopped")
    assert not _alive(pids[0])
    assert not list(tmp_path.glob("halma-ddp-*"))


def test_a_signal_is_named_though_torch_noticed_another_process_first(tmp_path: Path) -> None:
    """A killed process writes no error; the other one then fails ("Connection closed by peer") and torch may
    report that one."""
    Path(tmp_path, "error-0.txt").write_text(f"{time.time()!r}\nRuntimeError: Connection closed by peer\n")
    processes = [types.SimpleNamespace(pid=10, exitcode=1), types.SimpleNamespace(pid=11, exitcode=-signal.SIGKILL)]
    noticed = torch.multiprocessing.ProcessRaisedException("Connection closed by peer", 0, 10)
    cause = parallel._cause(noticed, processes, tmp_path)
    assert isinstance(cause, torch.multiprocessing.ProcessExitedException)
    assert str(cause).startswith("process 1 (pid 11) was killed by SIGKILL")
    # nor when torch noticed the other one die of a consequence first (gloo aborts a process whose peer is gone)
    processes[0].exitcode = -signal.SIGABRT
    noticed_abort = torch.multiprocessing.ProcessExitedException("process 0 terminated with signal SIGABRT", 0, 10,
                                                                  -signal.SIGABRT, "SIGABRT")
    assert str(parallel._cause(noticed_abort, processes, tmp_path)).startswith("process 1 (pid 11) was killed by "
                                                                               "SIGKILL")
    # torch's SIGTERM of the others after a process raised is no cause: the first error is
    processes[0].exitcode, processes[1].exitcode = 1, -signal.SIGTERM
    assert "Connection closed by peer" in str(parallel._cause(noticed, processes, tmp_path))


def test_an_abort_after_another_process_raised_is_no_cause(tmp_path: Path) -> None:
    """Process 1 raised; gloo then aborted process 0 (SIGABRT: its peer was gone), and under load torch may
    notice that first. The error raised is process 1's, not "process 0 was killed by SIGABRT" (seen once in
    a full run of test_a_process_that_fails_stops_the_others)."""
    Path(tmp_path, "error-1.txt").write_text(f"{time.time()!r}\nValueError: process 1 failed\n")
    processes = [types.SimpleNamespace(pid=10, exitcode=-signal.SIGABRT), types.SimpleNamespace(pid=11, exitcode=1)]
    raised = torch.multiprocessing.ProcessRaisedException("ValueError: process 1 failed", 1, 11)
    aborted = torch.multiprocessing.ProcessExitedException("process 0 terminated with signal SIGABRT", 0, 10,
                                                           -signal.SIGABRT, "SIGABRT")
    for noticed in (raised, aborted):
        cause = parallel._cause(noticed, processes, tmp_path)
        assert isinstance(cause, torch.multiprocessing.ProcessRaisedException), noticed
        assert "process 1 failed" in str(cause) and cause.error_index == 1
    # with no process's error written, the abort is what there is to report
    Path(tmp_path, "error-1.txt").unlink()
    assert "process 0 (pid 10) was killed by SIGABRT" in str(parallel._cause(aborted, processes, tmp_path))
    # nor when the error written is about the lost peer: then the abort came first (a native abort in
    # process 0, say) and the other process only lost its connection to it
    Path(tmp_path, "error-1.txt").write_text(f"{time.time()!r}\nRuntimeError: [gloo] Connection closed by peer\n")
    lost = torch.multiprocessing.ProcessRaisedException("RuntimeError: [gloo] Connection closed by peer", 1, 11)
    for noticed in (lost, aborted):
        assert "process 0 (pid 10) was killed by SIGABRT" in str(parallel._cause(noticed, processes, tmp_path))



class FakeProcess:
    """What _stop uses of a process: ``stubborn`` ones outlive SIGTERM; each call is noted."""

    def __init__(self, alive: bool = True, stubborn: bool = False) -> None:
        self.alive, self.stubborn, self.calls = alive, stubborn, []

    def is_alive(self) -> bool:
        return self.alive

    def terminate(self) -> None:
        self.calls.append("terminate")
        self.alive = self.stubborn

    def kill(self) -> None:
        self.calls.append("kill")
        self.alive = False

    def join(self, timeout: float | None = None) -> None:
        self.calls.append(("join", timeout))


def test_stop_terminates_waits_out_the_grace_and_kills_what_outlives_it() -> None:
    polite, stubborn, ended = FakeProcess(), FakeProcess(stubborn=True), FakeProcess(alive=False)
    parallel._stop([polite, stubborn, ended], grace_s=30.0)
    [(_, waited)] = polite.calls[1:]
    assert polite.calls[0] == "terminate" and 29 < waited <= 30  # the whole grace for the first
    assert stubborn.calls[0] == "terminate" and stubborn.calls[2:] == ["kill", ("join", None)]
    assert 29 < stubborn.calls[1][1] <= 30  # a fake join takes no time: the grace is still there
    assert ended.calls[0][0] == "join" and "terminate" not in ended.calls
    late = FakeProcess(stubborn=True)
    parallel._stop([late], grace_s=0.0)
    assert late.calls == ["terminate", ("join", 0.0), "kill", ("join", None)]


def _temporary_folder(rank: int, world_size: int) -> str:
    return tempfile.gettempdir()


def test_the_processes_make_their_temporary_files_in_the_folder_spawn_removes(tmp_path: Path, monkeypatch) -> None:
    """halma bench train's processes made their run folders in $TMPDIR: a Ctrl-C or SIGTERM, which ends them by
    SIGTERM's default action (_stop), left two folders behind on every interrupted bench."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (read again from TMPDIR)
    folder = Path(parallel.spawn(_temporary_folder, 2))
    assert folder.parent == tmp_path and folder.name.startswith(parallel.FOLDER_PREFIX)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("names", "found"), [(["eth0", "lo"], "lo"), (["en0", "lo0"], "lo0"), (["eth0"], None),
                                              (OSError("no interfaces"), None)])
def test_the_loopback_interface_by_its_name(monkeypatch: pytest.MonkeyPatch, names: Any, found: str | None) -> None:
    import socket

    def if_nameindex() -> list[tuple[int, str]]:
        if isinstance(names, Exception):
            raise names
        return list(enumerate(names, 1))

    monkeypatch.setattr(socket, "if_nameindex", if_nameindex)
    assert parallel.loopback_interface() == found
    monkeypatch.delattr(socket, "if_nameindex")  # not on every platform
    assert parallel.loopback_interface() is None


def test_torch_s_spawn_warnings_are_quiet_only_while_spawning() -> None:
    import logging

    logger = logging.getLogger("torch.multiprocessing.spawn")
    before = logger.level
    with parallel._quiet_torch_spawn():
        assert logger.level == logging.ERROR
    assert logger.level == before


def test_the_first_failure_is_the_earliest_error_written(tmp_path: Path) -> None:
    assert parallel._first_failure(tmp_path, [10, 11, 12]) is None
    Path(tmp_path, "error-2.txt").write_text("1700000002.5\nValueError: later\n", encoding="utf-8")
    Path(tmp_path, "error-1.txt").write_text("1700000001.25\nTraceback ...\nValueError: first\n", encoding="utf-8")
    first = parallel._first_failure(tmp_path, [10, 11, 12])
    assert isinstance(first, torch.multiprocessing.ProcessRaisedException)
    assert (first.error_index, first.error_pid) == (1, 11)
    assert str(first) == "\n\n-- Process 1 terminated with the following error:\nTraceback ...\nValueError: first\n"


@pytest.mark.parametrize("lost", ["Connection closed by peer", "Connection reset by peer", "Broken pipe"])
def test_an_error_about_a_lost_peer_follows_an_abort(tmp_path: Path, lost: str) -> None:
    """Each of gloo's words for a peer gone (written out: LOST_PEER's own texts would change with it): the abort
    of the other process is the cause."""
    Path(tmp_path, "error-1.txt").write_text(f"{time.time()!r}\nRuntimeError: [gloo] {lost}\n")
    processes = [types.SimpleNamespace(pid=10, exitcode=-signal.SIGABRT), types.SimpleNamespace(pid=11, exitcode=1)]
    noticed = torch.multiprocessing.ProcessRaisedException(f"RuntimeError: [gloo] {lost}", 1, 11)
    assert str(parallel._cause(noticed, processes, tmp_path)) == (
        "process 0 (pid 10) was killed by SIGABRT; the other processes were stopped")


def test_an_exit_status_or_an_unnamed_signal_is_named_in_one_line(tmp_path: Path) -> None:
    """sys.exit(3) in a process that wrote no error; a signal number Python has no name for."""
    processes = [types.SimpleNamespace(pid=10, exitcode=-signal.SIGTERM), types.SimpleNamespace(pid=11, exitcode=3)]
    exited = torch.multiprocessing.ProcessExitedException("process 1 terminated with exit code 3", 1, 11, 3)
    cause = parallel._cause(exited, processes, tmp_path)
    assert isinstance(cause, torch.multiprocessing.ProcessExitedException) and str(cause) == (
        "process 1 (pid 11) ended with exit status 3 without an error; the other processes were stopped")
    assert (cause.error_index, cause.error_pid, cause.exit_code) == (1, 11, 3)
    processes[1].exitcode = 0  # an exit status of 0 is no signal either
    assert "ended with exit status 0 without an error" in str(parallel._cause(
        torch.multiprocessing.ProcessExitedException("", 1, 11, 0), processes, tmp_path))
    processes[1].exitcode = -70
    odd = torch.multiprocessing.ProcessExitedException("process 1 terminated with signal 70", 1, 11, -70)
    assert str(parallel._cause(odd, processes, tmp_path)) == (
        "process 1 (pid 11) was killed by signal 70; the other processes were stopped")
    processes[1].exitcode = -signal.SIGSEGV
    segv = torch.multiprocessing.ProcessExitedException("", 1, 11, -signal.SIGSEGV, "SIGSEGV")
    assert str(parallel._cause(segv, processes, tmp_path)) == (
        "process 1 (pid 11) was killed by SIGSEGV; the other processes were stopped")  # no OOM hint
    processes[1].exitcode = -signal.SIGHUP  # -1: a signal, not an exit status
    hup = torch.multiprocessing.ProcessExitedException("", 1, 11, -signal.SIGHUP, "SIGHUP")
    assert str(parallel._cause(hup, processes, tmp_path)).startswith("process 1 (pid 11) was killed by SIGHUP;")
    processes[1].exitcode = -signal.SIGKILL
    kill = torch.multiprocessing.ProcessExitedException("", 1, 11, -signal.SIGKILL, "SIGKILL")
    assert str(parallel._cause(kill, processes, tmp_path)) == (
        "process 1 (pid 11) was killed by SIGKILL (the kernel's out-of-memory killer sends it, as does kill -9); "
        "the other processes were stopped")
    # the error a process wrote before sys.exit(3) is the cause
    processes[1].exitcode = 3
    Path(tmp_path, "error-1.txt").write_text(f"{time.time()!r}\nSystemExit: 3\n")
    cause = parallel._cause(exited, processes, tmp_path)
    assert isinstance(cause, torch.multiprocessing.ProcessRaisedException) and "SystemExit: 3" in str(cause)


def test_only_a_negative_exit_code_is_a_signal(tmp_path: Path) -> None:
    """Exit status 0 is no kill: torch's own error is the cause; -1 is SIGHUP, named though torch noticed the
    other process's lost connection first."""
    processes = [types.SimpleNamespace(pid=10, exitcode=0), types.SimpleNamespace(pid=11, exitcode=1)]
    noticed = torch.multiprocessing.ProcessRaisedException("boom", 1, 11)
    assert parallel._cause(noticed, processes, tmp_path) is noticed
    processes[0].exitcode = -signal.SIGHUP
    Path(tmp_path, "error-1.txt").write_text(f"{time.time()!r}\nRuntimeError: Connection closed by peer\n")
    assert str(parallel._cause(noticed, processes, tmp_path)) == (
        "process 0 (pid 10) was killed by SIGHUP; the other processes were stopped")



def test_a_process_joins_the_group_runs_fn_and_leaves_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_entry`` run here, torch's group and the exit faked: one torch thread unless set, gloo on the loopback
    interface, killed at the parent's death and a daemon thread watching it, the result written by process 0
    alone, then exit 0 after the barrier; a failure writes when and what, and is raised."""
    seen: list[Any] = []

    class Thread:
        def __init__(self, target: Any, args: tuple, daemon: bool) -> None:
            seen.append(("thread", target, args, daemon))

        def start(self) -> None:
            seen.append("start")

    def exit_(code: int) -> None:
        seen.append(("exit", code))
        raise SystemExit(code)

    monkeypatch.setattr(parallel, "threading", types.SimpleNamespace(Thread=Thread))
    monkeypatch.setattr(parallel, "dist", types.SimpleNamespace(
        init_process_group=lambda backend, **options: seen.append(("group", backend, options)),
        barrier=lambda: seen.append("barrier")))
    monkeypatch.setattr(parallel, "signal_at_parent_death", lambda how: seen.append(("death", how)))
    monkeypatch.setattr(parallel, "loopback_interface", lambda: "lo9")
    monkeypatch.setattr(os, "_exit", exit_)
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)  # (_entry sets it: put back after the test)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "eth0")
    shown: set[str] = set()
    monkeypatch.setattr(registry, "_shown_by_parent", shown)
    for rank in (1, 0):
        seen.clear()
        with pytest.raises(SystemExit):
            parallel._entry(rank, lambda r, w, x: {"rank": r, "of": w, "x": x}, 2, str(tmp_path), ("y",), 4242,
                            ("a plugin warning the parent showed",))
        assert shown == {"a plugin warning the parent showed"}  # not shown again by this process's own scan
        assert seen == [("death", signal.SIGKILL), ("thread", exit_with_parent, (4242, parallel.PARENT_POLL_S), True),
                        "start", ("group", "gloo", {"init_method": f"file://{tmp_path / 'rendezvous'}", "rank": rank,
                                                    "world_size": 2, "timeout": parallel.TIMEOUT}),
                        "barrier", ("exit", 0)]
        assert (tmp_path / "result.pkl").exists() == (rank == 0)
    assert pickle.loads((tmp_path / "result.pkl").read_bytes()) == {"rank": 0, "of": 2, "x": "y"}
    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["GLOO_SOCKET_IFNAME"] == "lo9"

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "eth0")
    monkeypatch.setattr(parallel, "loopback_interface", lambda: None)  # none by those names: gloo's own choice

    def fails(rank: int, world_size: int) -> None:
        raise ValueError("process 1 failed")

    seen.clear()
    with pytest.raises(ValueError, match="^process 1 failed$"):
        parallel._entry(1, fails, 2, str(tmp_path), (), 4242)
    assert os.environ["OMP_NUM_THREADS"] == "3" and os.environ["GLOO_SOCKET_IFNAME"] == "eth0"
    assert "barrier" not in seen and not any(isinstance(e, tuple) and e[0] == "exit" for e in seen)
    when, _, trace = (tmp_path / "error-1.txt").read_text(encoding="utf-8").partition("\n")
    assert abs(float(when) - time.time()) < 60
    assert trace.startswith("Traceback") and trace.endswith("ValueError: process 1 failed\n")


class FakeContext:
    """torch's context of started processes: ``join`` raises ``outcome`` or, the second time, writes the
    result as process 0 would and says all are done."""

    def __init__(self, processes: list[Any], tmp: str, outcome: BaseException | None) -> None:
        self.processes, self.tmp, self.outcome, self.joins = processes, tmp, outcome, 0
        # torch's files for the processes' tracebacks, beside the run's folder: one written, one not
        self.error_files = [str(Path(tmp).parent / "pytorch-errorfile-0.pickle"),
                            str(Path(tmp).parent / "pytorch-errorfile-1.pickle")]
        Path(self.error_files[0]).write_bytes(b"traceback")

    def join(self) -> bool:
        self.joins += 1
        if self.outcome is not None:
            import shutil

            shutil.rmtree(self.tmp)  # a temporary-files cleaner got there first: the error is still the one raised
            raise self.outcome
        if self.joins == 1:
            return False
        Path(self.tmp, "result.pkl").write_bytes(pickle.dumps("process 0's result"))
        return True


def test_spawn_waits_for_all_stops_them_at_ctrl_c_and_raises_the_cause(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    contexts: list[FakeContext] = []
    processes: list[Any] = []
    outcome: list[BaseException | None] = [None]

    def start_processes(fn: Any, args: tuple, nprocs: int, join: bool, start_method: str) -> FakeContext:
        assert (fn, args[0], args[1], args[3:], nprocs, join, start_method) == (
            parallel._entry, _average, 2, ((), os.getpid(), registry.plugin_warnings()), 2, False, "spawn")
        assert Path(args[2]).parent == tmp_path and Path(args[2]).name.startswith("halma-ddp-")
        contexts.append(FakeContext(processes, args[2], outcome[0]))
        return contexts[-1]

    monkeypatch.setattr(parallel.mp, "start_processes", start_processes)
    assert parallel.spawn(_average, 2) == "process 0's result" and contexts[0].joins == 2
    processes[:] = [FakeProcess(), FakeProcess()]
    outcome[0] = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        parallel.spawn(_average, 2)
    assert [p.calls[0] for p in processes] == ["terminate", "terminate"]
    processes[:] = [types.SimpleNamespace(pid=10, exitcode=-signal.SIGTERM),
                    types.SimpleNamespace(pid=11, exitcode=-signal.SIGKILL)]
    outcome[0] = torch.multiprocessing.ProcessExitedException("process 1 terminated with signal SIGKILL", 1, 11,
                                                              -signal.SIGKILL, "SIGKILL")
    with pytest.raises(torch.multiprocessing.ProcessExitedException, match=r"^process 1 \(pid 11\) was killed by"):
        parallel.spawn(_average, 2)
    assert not list(tmp_path.iterdir())
