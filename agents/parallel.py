"""Data-parallel training processes (the config's ``processes``), as in CleanRL's ``ppo_atari_multigpu.py``.

Each process runs its share of the games and of every minibatch with one torch thread; after each
backward pass the processes average their gradients (weighted by their minibatch sizes), so every
process takes the same optimiser step and holds the same weights.  On CPU this uses the cores better
than torch's own threads, which split every (small) op of one process between them
(docs/training.md, "Speed").

With one process (``world_size == 1``, no process group) the collectives below return at once:
the trainer calls them unconditionally.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import pickle
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from agents.interrupts import (
    exit_with_parent,
    signal_at_parent_death,
    start_resource_tracker_without_hangups,
    stop_signals_raise,
)
from agents.registry import plugin_warnings, skip_plugin_warnings
from halma_env.files import write_atomic

# a process waits this long for the others at a collective: long enough for an evaluation or the
# imitation stage that only the first process runs; a crashed process ends the others sooner (spawn)
TIMEOUT = datetime.timedelta(hours=12)
# what a process raises when its peer is gone (gloo's words): such an error is a consequence, not a cause
LOST_PEER = ("Connection closed by peer", "Connection reset by peer", "Broken pipe")
PARENT_POLL_S = 1.0  # how often a process checks that the one that spawned it is still there
FOLDER_PREFIX = "halma-ddp-"  # spawn's temporary folders, in tempfile.gettempdir()
SIGKILL = getattr(signal, "SIGKILL", None)  # not on Windows


def spawn(fn: Callable[..., Any], world_size: int, *args: Any) -> Any:
    """Run ``fn(rank, world_size, *args)`` in ``world_size`` processes joined in a gloo process group.

    Returns what process 0's ``fn`` returned.  If a process fails, the others are stopped and the
    error is raised here: ``torch.multiprocessing.ProcessRaisedException`` for an exception (the first
    process's own), ``ProcessExitedException`` for a process killed by a signal (the OOM killer's SIGKILL)
    or ended by an exit status, its message one line naming the process.  SIGTERM of this process is
    raised as ``agents.interrupts.Terminated``, a ``KeyboardInterrupt``, like Ctrl-C: either stops the processes and
    removes the temporary folder on the way out."""
    tmp = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
    context = None
    try:
        with stop_signals_raise(), _quiet_torch_spawn():
            start_resource_tracker_without_hangups()  # (torch's spawn context would start it)
            context = mp.start_processes(_entry, args=(fn, world_size, tmp, args, os.getpid(), plugin_warnings()),
                                         nprocs=world_size, join=False, start_method="spawn")
            try:
                while not context.join():
                    pass
            except KeyboardInterrupt:  # `kill -INT` of this process alone: without this it waited for them forever
                _stop(context.processes)
                raise
            except (mp.ProcessRaisedException, mp.ProcessExitedException) as exc:  # torch stopped the others
                raise _cause(exc, context.processes, Path(tmp)) from None
            with open(Path(tmp) / "result.pkl", "rb") as f:
                return pickle.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # also after Ctrl-C and SIGTERM; only SIGKILL leaves it behind
        # the file a failed process wrote its traceback to ($TMPDIR/pytorch-errorfile-*.pickle): torch reads it
        # and leaves it, one more in the temporary folder after every failed run
        for error_file in context.error_files if context is not None else ():
            with contextlib.suppress(OSError):
                os.unlink(error_file)


@contextlib.contextmanager
def _quiet_torch_spawn() -> Iterator[None]:
    """Without torch's "Terminating process N via signal SIGTERM" warning when a process fails: the error
    raised says that the others were stopped, in one line."""
    logger = logging.getLogger("torch.multiprocessing.spawn")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _stop(processes: list[Any], grace_s: float = 30.0) -> None:
    """Terminate the processes and wait for them (killing what outlives ``grace_s``): the folder they
    write to is removed next."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


def loopback_interface() -> str | None:
    """The loopback interface's name (``lo`` on Linux, ``lo0`` on macOS), or None where there is none by
    those names."""
    with contextlib.suppress(OSError, AttributeError):  # if_nameindex: not on every platform
        names = {name for _, name in socket.if_nameindex()}
        return next((name for name in ("lo", "lo0") if name in names), None)
    return None


def _entry(rank: int, fn: Callable[..., Any], world_size: int, tmp: str, args: tuple, parent: int,
           shown: Sequence[str] = ()) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    skip_plugin_warnings(shown)  # the plugin warnings this process's parent showed: not once more per process
    # gloo listens on the address the host name resolves to (a cluster node's network address: any machine
    # that reaches it could connect, gloo has no authentication); the processes of one run share a host
    loopback = loopback_interface()
    if loopback is not None:
        os.environ["GLOO_SOCKET_IFNAME"] = loopback
    # this process's temporary files (halma bench train's run folder) go in the folder spawn removes: a process
    # _stop ends (SIGTERM's default action, after Ctrl-C or SIGTERM of the parent) removes none itself
    tempfile.tempdir = tmp
    # killed at once when the parent dies (torch's spawn asks for SIGINT, which would interrupt an update, a
    # checkpoint's save say, and print a traceback after halma train is gone; an interrupted save leaves only its
    # temporary file, which the next save removes); elsewhere than on Linux the thread polls
    signal_at_parent_death(signal.SIGKILL)
    threading.Thread(target=exit_with_parent, args=(parent, PARENT_POLL_S), daemon=True).start()
    dist.init_process_group("gloo", init_method=f"file://{Path(tmp) / 'rendezvous'}", rank=rank,
                            world_size=world_size, timeout=TIMEOUT)
    try:
        result = fn(rank, world_size, *args)  # an exception ends this process; spawn then stops the others
    except BaseException:
        # which process failed first: the others then fail too ("Connection closed by peer"), and
        # torch reports whichever it notices first
        # (whole or not at all: spawn may read it while this process is stopped, and found it empty)
        write_atomic(Path(tmp, f"error-{rank}.txt"), f"{time.time()!r}\n{traceback.format_exc()}")
        raise
    if rank == 0:
        with open(Path(tmp) / "result.pkl", "wb") as f:
            pickle.dump(result, f)
    # every process reaches the end, then leaves without tearing the group down: gloo aborts a process
    # whose peer has closed the connections under it ("terminate called without an active exception"),
    # which destroy_process_group and the interpreter's own teardown both cause now and then
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _first_failure(tmp: Path, pids: list[int]) -> mp.ProcessRaisedException | None:
    """The error of the process that failed first (as torch words it), from the files ``_entry`` writes."""
    failures = []
    for path in tmp.glob("error-*.txt"):
        when, _, trace = path.read_text(encoding="utf-8").partition("\n")
        failures.append((float(when), int(path.stem.split("-")[1]), trace))
    if not failures:
        return None
    _, rank, trace = min(failures)
    return mp.ProcessRaisedException(f"\n\n-- Process {rank} terminated with the following error:\n{trace}", rank,
                                     pids[rank])


def _cause(exc: Exception, processes: list[Any], tmp: Path) -> Exception:
    """What to raise for a failed run: a process killed by a signal (the OOM killer's SIGKILL, a segfault) as
    a one-line ``ProcessExitedException`` naming it and the signal, otherwise the error of the process that
    failed first (``_first_failure``).  A killed process writes no error, and the others then fail too
    ("Connection closed by peer"): torch may notice one of those first, so the signal is looked for in every
    process's exit status.  SIGTERM is left out there: torch stops the others with it.  SIGKILL comes first:
    no process sends it to itself when another one fails (gloo may abort one, SIGABRT)."""
    raised = _first_failure(tmp, [p.pid for p in processes])
    # gloo aborts (SIGABRT) a process whose peer went away: after a process raised an error of its own, that
    # is its consequence; but an error that is itself about the lost peer follows a real abort
    raised_on_its_own = raised is not None and not any(lost in str(raised) for lost in LOST_PEER)
    consequences = (signal.SIGTERM, signal.SIGABRT) if raised_on_its_own else (signal.SIGTERM,)
    killed = sorted(((SIGKILL is None or p.exitcode != -SIGKILL, rank, p) for rank, p in enumerate(processes)
                     if p.exitcode is not None and p.exitcode < 0 and -p.exitcode not in consequences),
                    key=lambda k: k[:2])
    noticed_an_abort = (raised_on_its_own and isinstance(exc, mp.ProcessExitedException)
                        and exc.exit_code == -signal.SIGABRT)
    if killed and (not killed[0][0] or not isinstance(exc, mp.ProcessExitedException)):
        _, rank, process = killed[0]
        pid, code = process.pid, process.exitcode
    elif isinstance(exc, mp.ProcessExitedException) and not noticed_an_abort:
        rank, pid, code = exc.error_index, exc.error_pid, exc.exit_code
    else:
        return raised or exc
    if code >= 0:  # sys.exit(N) in fn: _entry wrote its traceback
        return raised or mp.ProcessExitedException(
            f"process {rank} (pid {pid}) ended with exit status {code} without an error; the other processes "
            "were stopped", rank, pid, code)
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    oom = SIGKILL is not None and -code == SIGKILL
    why = " (the kernel's out-of-memory killer sends it, as does kill -9)" if oom else ""
    return mp.ProcessExitedException(f"process {rank} (pid {pid}) was killed by {name}{why}; the other processes "
                                     "were stopped", rank, pid, code, name)


def active() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def gather(obj: Any) -> list[Any]:
    """Every process's ``obj``, in rank order (``[obj]`` with one process)."""
    if not active():
        return [obj]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def broadcast_parameters(module: torch.nn.Module) -> None:
    """Process 0's parameters and buffers in every process."""
    if active():
        for tensor in list(module.parameters()) + list(module.buffers()):
            dist.broadcast(tensor.data, src=0)


def average_gradients(params: list[torch.nn.Parameter], weight: int) -> float:
    """Replace each gradient by the ``weight``-weighted mean over the processes (``weight``: this
    process's minibatch size; a missing gradient counts as zero).  Returns the total weight (0: no
    process had a sample, and the gradients are all zero)."""
    if not active():
        return float(weight)
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads] + [grads[0].new_ones(1)]) * weight
    dist.all_reduce(flat)
    total = float(flat[-1])
    flat = flat[:-1] / max(total, 1.0)
    offset = 0
    for p, g in zip(params, grads, strict=True):
        p.grad = flat[offset:offset + g.numel()].view_as(p).clone()
        offset += g.numel()
    return total


def weighted_mean(value: float, weight: float) -> float:
    """The ``weight``-weighted mean of ``value`` over the processes (a process of weight 0 adds nothing; 0.0 when
    every weight is 0); ``value`` itself in one process."""
    if not active():
        return value
    t = torch.tensor([value * weight, weight], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t[0] / t[1]) if t[1] > 0 else 0.0


def any_true(flag: bool) -> bool:
    """True in every process if ``flag`` is true in any (for decisions all processes must share)."""
    if not active():
        return flag
    t = torch.tensor([int(flag)])
    dist.all_reduce(t)
    return bool(t.item())
