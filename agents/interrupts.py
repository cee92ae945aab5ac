"""SIGTERM as an exception: ``halma``'s commands and ``parallel.spawn`` stop on ``kill`` (a job scheduler)
as they stop on Ctrl-C, running the same clean-up.  No torch: the CLI imports it before any command."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler), raised as Ctrl-C's ``KeyboardInterrupt`` is, so that the same paths
    clean up: a ``halma`` command's (``halma export``'s scratch folder, ``halma train``'s resume hint), which then
    exits with the shell's status for it, 143 (killed outright, it would leave its files behind and say nothing), and
    ``parallel.spawn``'s, which stops its processes.  ``signum``: the signal."""

    signum = signal.SIGTERM


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` for the block, in the main thread of this process alone (a handler is
    only ever run there): a process forked meanwhile that inherits the handler takes the signal's default action,
    as without the block.  Elsewhere than in the main thread (no handler can be set there) the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def handle(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked child: killed by the signal, as without the handler
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:  # None: a handler installed outside Python; back to the default then
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
