"""SIGTERM as an exception: ``halma``'s commands and ``parallel.spawn`` stop on ``kill`` (a job scheduler)
as they stop on Ctrl-C, running the same clean-up; and child processes (the arena's workers, the training
processes) that end with their parent.  No torch: the CLI imports it before any command."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler) or SIGHUP, raised as Ctrl-C's ``KeyboardInterrupt`` is, so that the same
    paths clean up: a ``halma`` command's (``halma export``'s scratch folder, ``halma train``'s resume hint), which
    then exits with the shell's status for it, 143 or 129 (killed outright, it would leave its files behind and say
    nothing), and ``parallel.spawn``'s, which stops its processes.  ``signum``: the signal."""

    signum: int = signal.SIGTERM

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__()
        self.signum = signum


SIGHUP = getattr(signal, "SIGHUP", None)  # (POSIX only)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """SIGTERM, and SIGHUP (the terminal hung up), raise ``Terminated(signum)`` for the block, so that a command
    cleans up as on Ctrl-C (SIGHUP's default action ended ``halma eval --out``, ``halma ladder`` and the training
    processes at once, leaving their files); a SIGHUP first sends the terminal's output to /dev/null (every write to
    a hung-up terminal fails), and one the process was started with ignored (``nohup``) stays ignored.  In the main
    thread of this process alone (a handler is only ever run there): a process forked meanwhile that inherits the
    handler takes the signal's default action, as without the block.  A second SIGHUP is ignored: one closed
    terminal can send two (the shell passes one on, the kernel sends another), and the second one raised inside the
    first one's clean-up, leaving a temporary folder.  Elsewhere than in the main thread (no handler can be set
    there) the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()
    hung_up = False

    def handle(signum: int, frame: Any) -> None:
        nonlocal hung_up
        if os.getpid() != owner:  # a forked child: killed by the signal, as without the handler
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if signum == SIGHUP:
            if hung_up:
                return
            hung_up = True
            from agents.files import terminal_output_to_devnull

            terminal_output_to_devnull()
        raise Terminated(signum)

    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, handle)}
    if SIGHUP is not None and signal.getsignal(SIGHUP) is not signal.SIG_IGN:
        previous[SIGHUP] = signal.signal(SIGHUP, handle)
    try:
        yield
    finally:  # None: a handler installed outside Python; back to the default then
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def terminal_hung_up() -> None:
    """A read of the terminal failed with EIO: it hung up, and its SIGHUP may not have come yet (the kernel's
    signal and the failed read race).  That SIGHUP is raised here and now, so the command stops as on it (inside
    ``stop_signals_raise``: ``Terminated``, exit status 129; a later SIGHUP from the same hangup is then the
    ignored second one) instead of failing at its next write to the gone terminal (it read "cannot write the
    standard output", exit 2, or a traceback).  Where SIGHUP is ignored (``nohup``) or absent, the terminal's
    output goes to /dev/null and the caller takes the read as the end of input."""
    if SIGHUP is not None and signal.getsignal(SIGHUP) not in (signal.SIG_IGN, None):
        signal.raise_signal(SIGHUP)
        return
    from agents.files import terminal_output_to_devnull

    terminal_output_to_devnull()


def start_resource_tracker_without_hangups() -> None:
    """multiprocessing's resource tracker (it removes the pools' semaphores at the end) started with SIGHUP blocked:
    it ignores SIGINT and SIGTERM itself, not SIGHUP, so a hangup sent to the terminal's whole process group killed
    it, and the command's clean-up then warned "resource_tracker: process died unexpectedly" with a KeyError
    traceback per semaphore.  Nothing where there is no SIGHUP, or where the tracker runs already."""
    if SIGHUP is None or not hasattr(signal, "pthread_sigmask"):
        return
    from multiprocessing import resource_tracker

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {SIGHUP})  # (a child starts with its parent's mask)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def signal_at_parent_death(signum: int) -> None:
    """Linux: have the kernel send ``signum`` to this process when its parent dies (``PR_SET_PDEATHSIG``).
    Elsewhere, or with a libc without ``prctl``, nothing: ``exit_with_parent`` still watches."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1  # <linux/prctl.h>
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signum))


def exit_with_parent(parent: int, poll_s: float = 0.5) -> None:
    """Block until the process ``parent`` (the one that started this one) is gone, then end this process
    (``os._exit(1)``): run in a daemon thread, it keeps a child killed with its parent from running on
    unseen.  ``os.getppid`` is checked every ``poll_s`` seconds; on Windows, where it keeps naming a parent
    that is gone, the thread waits on the parent's process handle instead."""
    if sys.platform == "win32":
        import multiprocessing

        watched = multiprocessing.parent_process()
        if watched is not None:
            watched.join()
            os._exit(1)
        return
    while os.getppid() == parent:
        time.sleep(poll_s)
    os._exit(1)
