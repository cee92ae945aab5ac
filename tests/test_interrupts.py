"""SIGTERM as an exception and children that end with their parent (agents/interrupts.py), in this process
and in forked children: the slow end-to-end tests (``halma export``, ``halma train`` and ``parallel.spawn``
killed by a signal) are in test_files.py, test_train_interrupts.py and test_parallel.py."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import agents.interrupts
from agents.interrupts import Terminated, exit_with_parent, signal_at_parent_death, stop_signals_raise

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")


def _child_status(child: Any) -> int:
    """Fork; the child runs ``child()`` and ends with ``os._exit`` of its return value (255 if it raised, so it
    never runs on as a second pytest); the parent gets the child's wait status."""
    pid = os.fork()
    if pid == 0:
        code = 255
        try:
            code = child()
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1]


def test_sigterm_in_the_block_raises_terminated_and_the_handler_is_put_back() -> None:
    """Inside the block SIGTERM is ``Terminated`` (a ``KeyboardInterrupt`` naming the signal); after it the
    handler that was there before is back, a Python one and the default action alike."""
    def theirs(signum: int, frame: Any) -> None:
        raise AssertionError("their handler ran")

    before = signal.getsignal(signal.SIGTERM)
    try:
        for previous in (theirs, signal.SIG_DFL):
            signal.signal(signal.SIGTERM, previous)
            with pytest.raises(Terminated) as raised:
                with stop_signals_raise():
                    assert signal.getsignal(signal.SIGTERM) not in (theirs, signal.SIG_DFL)
                    signal.raise_signal(signal.SIGTERM)
                    time.sleep(1)  # not reached: the handler raises at once
            assert isinstance(raised.value, KeyboardInterrupt) and raised.value.signum == signal.SIGTERM
            assert signal.getsignal(signal.SIGTERM) is previous
            with stop_signals_raise():  # left without a signal: the same
                pass
            assert signal.getsignal(signal.SIGTERM) is previous
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_hangup_in_the_block_raises_terminated_unless_it_was_ignored(monkeypatch) -> None:
    """SIGHUP's default action ended every command but a one-process halma train's updates at once: halma eval
    --out left its folder and the pool's semaphores, halma ladder its exported models.  It is Terminated(SIGHUP)
    now, the terminal's output sent to /dev/null first; started ignored (nohup), it stays ignored."""
    import agents.files

    hung_up: list[bool] = []
    monkeypatch.setattr(agents.files, "terminal_output_to_devnull", lambda: hung_up.append(True))
    before = signal.getsignal(signal.SIGHUP)
    try:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        with pytest.raises(Terminated) as raised:
            with stop_signals_raise():
                signal.raise_signal(signal.SIGHUP)
                time.sleep(1)  # not reached: the handler raises at once
        assert raised.value.signum == signal.SIGHUP and hung_up == [True]
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
        reached = []
        with pytest.raises(Terminated):  # a second one (one closed terminal can send two) leaves the clean-up be
            with stop_signals_raise():
                try:
                    signal.raise_signal(signal.SIGHUP)
                finally:
                    signal.raise_signal(signal.SIGHUP)
                    reached.append("the clean-up's end")
        assert reached == ["the clean-up's end"] and hung_up == [True, True]
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        with stop_signals_raise():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            signal.raise_signal(signal.SIGHUP)  # ignored
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN and hung_up == [True, True]
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_the_resource_tracker_starts_with_hangups_blocked() -> None:
    """It ignores SIGINT and SIGTERM itself, not SIGHUP: a hangup of the terminal's whole process group killed it,
    and halma eval's clean-up then warned "resource_tracker: process died unexpectedly", with a traceback per
    semaphore.  (In a fresh interpreter: one the tests ran in may have started its tracker already.)"""
    code = ("from agents.interrupts import start_resource_tracker_without_hangups as start; start(); "
            "from multiprocessing import resource_tracker as r; "
            "print(open(f'/proc/{r._resource_tracker._pid}/status').read())")
    root = Path(__file__).resolve().parents[1]
    status = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60,
                            check=True).stdout
    blocked = int(re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.M).group(1), 16)  # type: ignore[union-attr]
    assert blocked >> (signal.SIGHUP - 1) & 1, status


def test_a_handler_installed_outside_python_is_followed_by_the_default_action(monkeypatch) -> None:
    """``signal.signal`` answers None for a handler installed outside Python: the block puts back SIG_DFL."""
    calls: dict[int, list[Any]] = {signal.SIGTERM: [], signal.SIGHUP: []}
    real = signal.signal

    def recording(signum: int, handler: Any) -> Any:
        calls[signum].append(handler)
        real(signum, handler)
        return None if len(calls[signum]) == 1 else signal.SIG_DFL

    before = {signum: signal.getsignal(signum) for signum in calls}
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # (not ignored, as under nohup: the block would leave it so)
    monkeypatch.setattr(signal, "signal", recording)
    try:
        with stop_signals_raise():
            pass
    finally:
        monkeypatch.undo()
        for signum, handler in before.items():
            signal.signal(signum, handler)
    for made in calls.values():
        assert len(made) == 2 and callable(made[0]) and made[1] is signal.SIG_DFL


def test_in_another_thread_the_block_runs_as_is() -> None:
    """No handler can be set outside the main thread: there the block runs with SIGTERM's handler unchanged."""
    before = signal.getsignal(signal.SIGTERM)
    seen: list[Any] = []

    def elsewhere() -> None:
        try:
            with stop_signals_raise():
                seen.append(signal.getsignal(signal.SIGTERM))
            seen.append("left")
        except Exception as exc:  # (recorded: the assertion below names it)
            seen.append(exc)

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(10)
    assert seen == [before, "left"]


@needs_fork
def test_a_process_forked_in_the_block_is_killed_by_sigterm_not_raised_in() -> None:
    """A child forked inside the block inherits the handler: there SIGTERM takes its default action (the child
    ends, killed by the signal) instead of raising ``Terminated`` into a copy of the parent's program."""
    def child() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except Terminated:
            return 3
        return 4

    with stop_signals_raise():
        status = _child_status(child)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status


@needs_fork
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_signal_at_parent_death_asks_linux_for_the_signal() -> None:
    """``PR_SET_PDEATHSIG`` is set to the signal (read back with ``PR_GET_PDEATHSIG``), in a forked child so that
    pytest's own process is left as it was."""
    def child() -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        found = ctypes.c_int(-1)
        assert libc.prctl(2, ctypes.byref(found)) == 0 and found.value == 0  # PR_GET_PDEATHSIG: none yet
        signal_at_parent_death(signal.SIGUSR1)
        assert libc.prctl(2, ctypes.byref(found)) == 0
        return found.value

    status = _child_status(child)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == signal.SIGUSR1, status


def test_exit_with_parent_polls_until_the_parent_is_gone(monkeypatch) -> None:
    """Elsewhere than on Windows ``os.getppid`` is checked every ``poll_s`` seconds while it names the parent;
    once it names another process (the parent is gone) the process ends with status 1."""
    events: list[Any] = []
    parents = iter([4242, 4242, 1])

    def exit_(code: int) -> None:
        events.append(f"exit {code}")
        raise SystemExit(code)

    monkeypatch.setattr(os, "getppid", lambda: next(parents))
    monkeypatch.setattr(os, "_exit", exit_)
    monkeypatch.setattr(agents.interrupts.time, "sleep", events.append)
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(SystemExit):
        exit_with_parent(4242, poll_s=0.25)
    monkeypatch.undo()
    assert events == [0.25, 0.25, "exit 1"]


@pytest.mark.parametrize("first, second, status", [
    (Terminated(signal.SIGTERM), KeyboardInterrupt(), 143),
    (KeyboardInterrupt(), Terminated(signal.SIGTERM), 130),
    (Terminated(signal.SIGHUP), Terminated(signal.SIGTERM), 129),
])
def test_a_second_signal_in_the_clean_up_keeps_the_first_one_s_status(first, second, status, monkeypatch,
                                                                     capsys) -> None:
    """SIGTERM, then Ctrl-C 10 ms later during the clean-up, ended halma play with 130, not 143 (a review sent
    them): the status is the first signal's."""
    import agents.cli

    def stopped(name: object, argv: object) -> int:
        try:
            raise first
        finally:
            raise second

    monkeypatch.setattr(agents.cli, "_main", stopped)
    assert agents.cli.main(["eval"]) == status
    assert capsys.readouterr().err.endswith("interrupted\n" if status == 130 else
                                            f"stopped by {signal.Signals(status - 128).name}\n")


@pytest.mark.parametrize("failure", [OSError(5, "Input/output error"), BrokenPipeError(32, "Broken pipe")])
def test_a_signal_while_a_failed_output_is_reported_is_its_status_line_not_a_traceback(failure, monkeypatch,
                                                                                      capfd) -> None:
    """A terminal that hung up fails the command's read or write with EIO, and its SIGHUP comes a moment later:
    it came while that failure was being reported, outside the Ctrl-C handler, and ``halma play`` ended in a
    traceback (exit 1).  A stop signal there is the command's status line, as anywhere else."""
    import agents.cli

    def failing(name: object, argv: object) -> int:
        raise failure

    def signal_arrives(*args: object) -> None:
        raise Terminated(signal.SIGHUP)

    monkeypatch.setattr(agents.cli, "_main", failing)
    monkeypatch.setattr(agents.cli, "is_write_failure", signal_arrives)
    monkeypatch.setattr(agents.cli, "to_devnull", signal_arrives)
    assert agents.cli.main(["play"]) == 129
    assert capfd.readouterr().err == "\nhalma play: stopped by SIGHUP\n"


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP")
def test_terminal_hung_up_raises_its_sighup_unless_ignored(monkeypatch) -> None:
    """A read of a terminal that failed with EIO is its hangup: inside the block, Terminated(SIGHUP) at once (its
    own SIGHUP may come later, or never); with SIGHUP ignored (nohup) the terminal's output goes to /dev/null and
    nothing is raised."""
    from agents.interrupts import terminal_hung_up

    sent: list[str] = []
    monkeypatch.setattr("agents.files.terminal_output_to_devnull", lambda: sent.append("to /dev/null"))
    before = signal.getsignal(signal.SIGHUP)
    try:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        with stop_signals_raise(), pytest.raises(Terminated) as raised:
            terminal_hung_up()
        assert raised.value.signum == signal.SIGHUP and sent == ["to /dev/null"]  # (the handler's)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        with stop_signals_raise():
            terminal_hung_up()
        assert sent == ["to /dev/null", "to /dev/null"]
    finally:
        signal.signal(signal.SIGHUP, before)
