"""Special files for the tests that a reader refuses them unread, and a stream that says it is a terminal."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def fifo_refused_at_once(path: Path, within_s: float = 2.0) -> Iterator[None]:
    """Make a FIFO at ``path`` for the block, which must read it and refuse it within ``within_s`` seconds.
    A reader that opens it waits for a writer: one comes after a while, so that such a reader fails the time
    check instead of hanging the test run."""
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        deadline = time.monotonic() + 5
        while not done.is_set() and time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                return
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise
                time.sleep(0.05)

    helper = threading.Thread(target=unblock, daemon=True)
    helper.start()
    start = time.monotonic()
    try:
        yield
    finally:
        done.set()
        helper.join()
    assert time.monotonic() - start < within_s


class TerminalText(io.StringIO):
    """Text written to what says it is a terminal (pytest's captured streams say they are not). Put in place
    in the test's body: pytest sets its own capture after the fixtures."""

    def isatty(self) -> bool:
        return True
