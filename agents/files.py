"""Files the tools write: whether one can be written, checked before any work is done (no torch)."""

from __future__ import annotations

import tempfile
from pathlib import Path


def output_problem(path: str | Path, what: str = "") -> str | None:
    """Why a file cannot be written at ``path`` (None: it can), found before any work is done: the
    nearest existing folder above it takes a temporary file (missing folders are made on writing).
    ``what`` names the file in the message ("the ladder file")."""
    named = f"{what} {str(path)!r}" if what else repr(str(path))
    out = Path(path).absolute()
    if out.is_dir():
        return f"{named} is a directory"
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        return f"cannot write {named}: {exc.strerror or exc}"
    return None
