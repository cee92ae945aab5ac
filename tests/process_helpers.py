"""Subprocesses stopped by a signal at a chosen moment, for the tests of what a command does when killed."""

from __future__ import annotations

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
