"""Subprocesses stopped by a signal at a chosen moment, for the tests of what a command does when killed."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable


def signal_when(proc: subprocess.Popen, ready: Callable[[], bool], what: str, *, signum: int = signal.SIGTERM,
                timeout: float = 120, check: Callable[[], object] | None = None) -> str:
    """Send ``signum`` to ``proc`` once ``ready()`` holds (failing with ``what`` if that takes ``timeout``
    seconds, or if ``proc`` ends first), after ``check()`` (assertions on that moment), then wait for it to
    end; -> its stderr.  ``proc`` is killed if it is still running when this returns or fails."""
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, what
            time.sleep(0.05)
        if check is not None:
            check()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=timeout)
        return err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def run_on_a_sizeless_terminal(args: list[str], cwd: str | os.PathLike[str], timeout: float = 120) -> tuple[int, str]:
    """``args`` run with stdout and stderr on a new pseudo-terminal that reports no size (0 x 0, as one that
    ``script`` or ``docker run -t`` opens), and no ``$COLUMNS`` or ``$LINES``; -> its exit status and what it
    wrote there, read to the end."""
    import pty
    import select

    master, terminal = pty.openpty()  # (a new one has no size)
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(args, stdout=terminal, stderr=terminal, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(terminal)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            assert time.monotonic() < deadline, f"{args} ran past {timeout} s: {out.decode()[-2000:]}"
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the terminal's end once the command has gone
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None and not select.select([master], [], [], 0.1)[0]:
                break
        return proc.wait(timeout=timeout), out.decode(errors="replace").replace("\r\n", "\n")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
