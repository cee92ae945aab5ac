"""The arena's worker processes: ``run_in_processes`` plays ``halma eval --workers N``'s games (``run_tournament``
with ``workers`` > 1) in a pool of spawned processes, one game at a time each with torch on one thread
(``one_thread_per_worker``; ``one_torch_thread`` does the same for games played in the calling process), and
yields their results as they finish.

The workers never outlive the arena's process, whatever ends it:

- Ctrl-C, and the SIGHUP of a terminal that hung up, reach every process of the terminal's group.  The workers
  ignore them (``_tie_to_parent``), so that none prints a ``KeyboardInterrupt`` traceback or dies before the arena's
  process, which handles them and stops the workers.  While they start, both are blocked (``_group_signals_blocked``: a
  process starts with its parent's blocked signals), so that one that comes while a worker is still importing
  interrupts none of them before it can ignore it.
- In the arena's process SIGINT, SIGTERM and SIGHUP are held while it calls into the pool and handled just after
  (``_HeldSignals``): their exception, raised inside such a call, could leave a lock of the pool taken and hang
  the interpreter's exit.
- A SIGTERM whose default action would end the arena's process at once (no ``finally`` runs) first stops the
  workers (``_sigterm_stops_workers``); on an error, Ctrl-C or a SIGTERM raised as an exception they are stopped
  on the way out of ``run_in_processes`` (``_stop_workers``: SIGTERM, then SIGKILL after a grace period).
- A worker whose parent is killed outright (SIGKILL) exits by itself: the kernel's parent-death signal on Linux
  and a thread watching the parent everywhere (``agents.interrupts``)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from agents.interrupts import SIGHUP, exit_with_parent, signal_at_parent_death, start_resource_tracker_without_hangups
from agents.registry import plugin_warnings, skip_plugin_warnings

Task = TypeVar("Task")
Result = TypeVar("Result")


def one_thread_per_worker(shown: Sequence[str] = ()) -> None:
    """The start of a worker process (the pool's initializer): it plays one game at a time, so torch (imported
    later, for a checkpoint player) gets one thread, and does not take the cores of the games in the other
    workers, a time-limited bot's among them.  In a process that multiprocessing started (not when called
    elsewhere) it is also tied to its parent: Ctrl-C ignored, an exit when the parent is gone
    (``_tie_to_parent``).  ``shown``: the plugin warnings the parent showed (``agents.registry.plugin_warnings``),
    which the worker's own scan of the plugins does not repeat (``halma eval --workers 2`` printed each three
    times)."""
    import multiprocessing

    skip_plugin_warnings(shown)
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        _tie_to_parent(parent.pid)
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    if "torch" in sys.modules:  # imported already (by the caller's main module, re-run by spawn)
        sys.modules["torch"].set_num_threads(1)


def run_in_processes(run: Callable[[Task], Result], tasks: list[Task], workers: int) -> Iterator[Result]:
    """``run(task)`` of each of the tasks as they finish, in ``workers`` spawned processes (``run`` and the tasks
    are pickled: a function defined at a module's top level).  concurrent.futures, not
    multiprocessing.Pool: a worker that dies, or cannot even start its task (a script without the
    ``if __name__ == "__main__":`` guard, a factory defined in ``python -c``), breaks the pool with an
    error here, where Pool would start new workers for ever and the run would never end.

    The workers never outlive this process: on an error, Ctrl-C or a SIGTERM raised as an exception they are
    stopped here; on a plain SIGTERM (its default action) ``_sigterm_stops_workers`` stops them before this
    process dies of it; killed outright (SIGKILL), each worker sees it and exits (``_tie_to_parent``).  They
    ignore Ctrl-C (the terminal sends it to them too): this process handles it and stops them.  Its exception
    (or SIGTERM's) is raised between the calls into the pool, never inside one (``_HeldSignals``)."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    start_resource_tracker_without_hangups()  # (the pool's semaphores would start it)
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=one_thread_per_worker,
                               initargs=(plugin_warnings(),))

    def processes() -> list[Any]:
        return list((getattr(pool, "_processes", None) or {}).values())

    done = False
    queued = iter(tasks)
    held = _HeldSignals()
    try:
        with _sigterm_stops_workers(processes):
            with held, _group_signals_blocked():  # the workers start (the first submits) with Ctrl-C held off in them
                running = {pool.submit(run, t) for t in itertools.islice(queued, workers)}
            with held:  # a few games queued beyond those played, so that no worker waits for its next one (not
                # all: a wait on thousands of futures, repeated to poll for signals, costs O(games) each time)
                running |= {pool.submit(run, t) for t in itertools.islice(queued, workers)}
            while running:
                with held:  # Ctrl-C, SIGTERM: raised on leaving the block
                    finished, running = wait(running, timeout=SIGNAL_POLL_S, return_when=FIRST_COMPLETED)
                for future in finished:
                    with held:
                        result = future.result()
                    yield result
                    with held:
                        running |= {pool.submit(run, t) for t in itertools.islice(queued, 1)}
            done = True
    except BrokenProcessPool:
        raise RuntimeError("a game process of the arena stopped before its game ended (killed, crashed, or it "
                           "could not start: a script that calls run_tournament with workers > 1 needs the "
                           "`if __name__ == \"__main__\":` guard, and a factory must be importable by the workers, "
                           "defined in a module or a script file, not in python -c or a notebook); workers=1 plays "
                           "in this process") from None
    finally:
        # on an error or Ctrl-C the games still running are stopped, not waited for (as Pool's exit does);
        # the executor has no public way to do it before Python 3.14's terminate_workers().  Stopped before the
        # pool's queues are closed under them (which a worker could report with a traceback), and a second
        # Ctrl-C held until all is done
        with _HeldSignals():
            manager = getattr(pool, "_executor_manager_thread", None)
            _stop_workers([] if done else processes())
            pool.shutdown(wait=done, cancel_futures=True)
            if not done and manager is not None:
                # its cleanup after the workers' ends, done before this returns: racing the interpreter's exit it
                # would print "Exception ignored in: <module 'threading'> ... OSError: [Errno 9] Bad file descriptor"
                manager.join(WORKER_GRACE_S)


SIGNAL_POLL_S = 0.1  # the longest Ctrl-C is held while the arena's process waits for a game (``_HeldSignals``)


class _HeldSignals:
    """SIGINT, SIGTERM and SIGHUP, where Python handles them (Ctrl-C's ``KeyboardInterrupt``, a SIGTERM or SIGHUP
    raised as an exception, ``_sigterm_stops_workers``), held in the block and handled on leaving it, as they would
    have been then (their handler may raise).  Raised inside a call into the pool, such an exception could leave a
    lock of the pool taken (between its ``acquire`` and its ``with`` block), and the pool's thread, blocked on it,
    would then hang the interpreter's exit after ``halma eval: interrupted``.  In the main thread only (no handler
    can be set elsewhere); the same object may be entered again after it was left."""

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _HeldSignals:
        self.caught = []
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM, *((SIGHUP,) if SIGHUP is not None else ())):
                handler = signal.getsignal(signum)
                if callable(handler):  # not the default action (SIGTERM's ends the process at once), nor ignored
                    self.previous[signum] = signal.signal(signum, self._catch)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous.clear()
        caught, self.caught = dict.fromkeys(self.caught), []
        for signum in caught:
            signal.raise_signal(signum)  # runs its Python handler before it returns

    def _catch(self, signum: int, frame: Any) -> None:
        self.caught.append(signum)


WORKER_GRACE_S = 5.0  # a stopped worker (SIGTERM) that has not ended after this long is killed
PARENT_POLL_S = 0.5  # how often a worker checks that the process that started it is still there


def _stop_workers(processes: Sequence[Any], grace_s: float = WORKER_GRACE_S) -> None:
    """Terminate the worker processes and wait (``grace_s`` at most, then SIGKILL) until they have ended.  Waits
    on their sentinels, not with ``join``: the executor's own thread may be reaping them at the same time."""
    from multiprocessing.connection import wait

    pending = {}
    for process in processes:
        with contextlib.suppress(Exception):  # ended and closed already
            process.terminate()
            pending[process.sentinel] = process
    deadline = time.monotonic() + grace_s
    while pending and (left := deadline - time.monotonic()) > 0:
        for sentinel in wait(list(pending), left):
            pending.pop(sentinel)
    for process in pending.values():
        with contextlib.suppress(Exception):
            process.kill()


@contextlib.contextmanager
def _sigterm_stops_workers(processes: Callable[[], list[Any]]) -> Iterator[None]:
    """While the workers run: a SIGTERM that would end this process at once (its default action: no
    ``finally`` runs) first stops the workers, then ends this process by the same signal (exit status 143, as
    its default action gives).  A handler installed by someone else (one that raises an exception, say) is
    left in place: its exception reaches ``run_in_processes``, which stops them."""
    if (sys.platform == "win32" or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def handle(signum: int, frame: Any) -> None:
        try:
            _stop_workers(processes())
            # the pool's semaphores, which a normal exit removes first (multiprocessing's exit function): left
            # to the resource tracker, which warns of "leaked semaphore objects" after the command has ended
            from multiprocessing import util

            util._run_finalizers(0)  # type: ignore[attr-defined]
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # (a generator closed in another thread: the handler stays)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


# what the terminal sends the whole process group, which the workers leave to the arena's process
GROUP_SIGNALS = {signal.SIGINT, *((SIGHUP,) if SIGHUP is not None else ())}


@contextlib.contextmanager
def _group_signals_blocked() -> Iterator[None]:
    """SIGINT and SIGHUP held off (blocked, not ignored: one that comes meanwhile is delivered after) in this thread
    while it starts the workers: a process starts with its parent's blocked signals, so a Ctrl-C or a hangup while a
    worker is still importing (before ``_tie_to_parent`` ignores them) interrupts none with a traceback or kills it."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, GROUP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _tie_to_parent(parent: int) -> None:
    """A worker process, before its first game: Ctrl-C ignored (the terminal sends it to the whole process group;
    the arena's process handles it and stops the workers, which would print a ``KeyboardInterrupt`` traceback each),
    and an exit when the arena's process ``parent`` is gone (killed by a signal it cannot handle: SIGKILL, or
    SIGTERM before it could stop the workers): it would otherwise wait for tasks for ever, orphaned.  On Linux the
    kernel sends SIGTERM at the parent's death; everywhere a daemon thread also watches the parent
    (``agents.interrupts``, as for the training processes)."""
    for signum in GROUP_SIGNALS:  # (a hangup too: the arena's process stops the workers, as for Ctrl-C)
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, GROUP_SIGNALS)  # held off since its start: ignored now
    signal_at_parent_death(signal.SIGTERM)
    if sys.platform != "win32" and os.getppid() != parent:  # gone already, before the request above
        os._exit(1)
    threading.Thread(target=exit_with_parent, args=(parent, PARENT_POLL_S), name="halma-arena-parent",
                     daemon=True).start()


@contextlib.contextmanager
def one_torch_thread(players: Sequence[str]) -> Iterator[None]:
    """Games played in this process (``workers=1``) with a checkpoint player: torch on one thread, as in
    a worker, and back to the caller's count after (a checkpoint's small network on torch's default
    threads is 28x slower per move on a loaded 2-core machine, and timed bots lose their cores)."""
    if not any(p.lower().endswith(".pt") for p in players):
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
