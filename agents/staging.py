"""Saving a folder of results whole: ``save_staged`` has the files written into a staging folder, then moves them
into the output folder, so that a save that fails (a full disk) or is interrupted (Ctrl-C, SIGTERM, even SIGKILL)
leaves either a complete result or none, never a ``results.json`` without its game records.  ``halma eval --out``
(``TournamentResult.save`` and the solitaire's ``solo.json``) saves this way; docs/evaluation.md describes what a
user sees.  Staging folders left by a process killed outright are removed by the next save into the same place."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable

STAGING = "halma-partial"  # in the names of the staging folders a save writes into (``save_staged``)


def save_staged(out_dir: str, write: Callable[[str], list[str]], marker: str) -> list[str]:
    """Have ``write(folder)`` write a result's files into a new staging folder and return their names (relative
    to the folder), then move them into ``out_dir``; return their paths there.

    When ``out_dir`` is missing (``halma eval --out`` removes the empty folder it made to check the place just
    before it saves) the staging folder is made beside it (``.NAME.halma-partial-PID-XXXX``) and renamed into
    its place in one step: a save that fails (a full disk) or is interrupted (Ctrl-C, SIGTERM, SIGKILL) leaves
    either no result or a complete one, never a ``results.json`` without its game records.  Into a folder that
    exists, even an empty one (renaming over it would drop its permissions and owner, and delete it from under a
    shell standing in it: ``--out .``), or where that rename fails, the staging folder is made in ``out_dir``
    itself and its files are moved out one by one, ``marker`` (``results.json``, ``solo.json``) last.  On an
    error the staging folder is removed; one left by a process killed outright is removed by the next save into
    the same folder."""
    import shutil

    out = os.path.realpath(out_dir)  # (abspath cuts "x/.." out of the text: after a symlinked x, another folder)
    parent, name = os.path.split(out)
    os.makedirs(parent, exist_ok=True)
    remove_dead_staging(parent, f".{name}.{STAGING}-")
    remove_dead_staging(out, f".{STAGING}-")
    paths = None
    staging = None if os.path.lexists(out) else _beside_staging(out)
    if staging is not None:
        try:
            names = write(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        try:
            os.rename(staging, out)  # (out is not there: the result appears whole)
            paths = names
        except OSError:  # (a folder made there meanwhile): moved in one by one, written again where it goes
            shutil.rmtree(staging, ignore_errors=True)
    if paths is None:
        os.makedirs(out, exist_ok=True)
        staging = new_staging_folder(out, f".{STAGING}-{os.getpid()}-")
        try:
            paths = write(staging)
            _move_into(staging, out, marker)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        os.rmdir(staging)  # emptied by _move_into
    return [os.path.join(out_dir, n) for n in paths]


def _beside_staging(out: str) -> str | None:
    parent, name = os.path.split(out)
    try:
        return new_staging_folder(parent, f".{name}.{STAGING}-{os.getpid()}-")
    except OSError:  # no new folder can be made there (a read-only parent): the staging folder goes in out
        return None


def new_staging_folder(parent: str, prefix: str) -> str:
    """A new folder ``prefix + random`` in ``parent``, with the permissions ``os.mkdir`` gives (tempfile.mkdtemp
    gives 0o700, which a folder renamed into place as the result would keep)."""
    import secrets

    while True:
        path = os.path.join(parent, prefix + secrets.token_hex(6))
        try:
            os.mkdir(path)
            return path
        except FileExistsError:  # (a 48-bit random name taken: try another)
            continue


def _move_into(source: str, target: str, marker: str | None = None) -> None:
    """Move what ``source`` holds into the existing folder ``target``, merging folders (``games/``) and replacing
    files, the file named ``marker`` last."""
    entries = sorted(os.listdir(source), key=lambda n: n == marker)
    for entry in entries:
        src, dst = os.path.join(source, entry), os.path.join(target, entry)
        if os.path.isdir(src) and os.path.isdir(dst):
            _move_into(src, dst)
            os.rmdir(src)
        else:
            os.replace(src, dst)


def remove_dead_staging(folder: str, prefix: str) -> None:
    """Remove the staging folders in ``folder`` (``prefix + PID-XXXX``) of processes that no longer run: left
    behind by a save killed outright (SIGKILL).  Not on Windows, where no such check of a process id is at hand."""
    if sys.platform == "win32" or not os.path.isdir(folder):
        return
    import shutil

    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            m = re.fullmatch(re.escape(prefix) + r"(\d+)-[0-9a-f]+", entry)
            if m and not _running(int(m.group(1))):
                shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): running
        return True
    return True
