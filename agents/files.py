"""Files the tools read and write: where the package's own files are, and whether a file can be
written, checked before any work is done (no torch)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from halma_env.files import folder_ending, special_file_kind

PACKAGE_DIR = Path(__file__).resolve().parent  # agents/


def from_source_checkout(package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether ``agents`` runs from the project's source tree (an editable install: ``pyproject.toml``
    beside the package), not from a package installed into site-packages."""
    return (package_dir.parent / "pyproject.toml").is_file()


def shipped_configs_dir(package_dir: Path = PACKAGE_DIR) -> Path:
    """The training configs: ``configs/`` of the source tree, or ``agents/configs`` in an installed
    package (pyproject.toml maps the one to the other in the wheel)."""
    return package_dir.parent / "configs" if from_source_checkout(package_dir) else package_dir / "configs"


# names Windows keeps for devices, with or without an extension ("nul.txt" is NUL too)
_RESERVED_NAMES = re.compile(r"(con|prn|aux|nul|com\d|lpt\d)(\..*)?", re.IGNORECASE)


def portable_file_name(name: object) -> bool:
    """Whether ``name`` is one file or directory name on every platform: not empty, ``.`` or ``..``; no
    ``/``, ``\\``, ``:`` (a Windows drive or stream), control character or any of ``<>"|?*`` (Windows
    refuses them); no trailing space or dot (Windows drops them); not a device name such as ``CON`` or
    ``nul.txt``."""
    return (isinstance(name, str) and name not in ("", ".", "..") and not any(c in name for c in '/\\:<>"|?*')
            and all(c >= " " and c != "\x7f" for c in name) and not name.endswith((" ", "."))
            and not _RESERVED_NAMES.fullmatch(name))


# the optional dependencies (pyproject's extras): module -> the extra that installs it
EXTRAS = {"torch": "train", "tensorboard": "train", "matplotlib": "plots"}


# what a write fails with for want of room or rights (not a read of a missing file, a closed pipe or another
# bug, which keep their traceback)
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM})


def is_write_failure(exc: OSError) -> bool:
    """Whether ``exc`` is a write that failed for want of room or rights (``WRITE_ERRNOS``)."""
    return exc.errno in WRITE_ERRNOS and not isinstance(exc, ConnectionError)


def missing_extra(error: ImportError) -> str | None:
    """How to install the optional dependency whose import failed (``error``), or None when it is not one
    (a part missing inside an installed one, ``torch._C`` say, is a broken install: its own error stands)."""
    module = error.name or ""
    extra = EXTRAS.get(module) if isinstance(error, ModuleNotFoundError) else None
    if extra is None:
        return None
    # halma_env is not on PyPI: the extra is installed from the checkout (or a wheel, README "Set up")
    hint = (f"{module} is not installed: it comes with the {extra} extra (pip install -e '.[{extra}]' in the "
            f"repository, or a wheel with [{extra}])")
    if module == "torch":  # a plain torch requirement pulls a CUDA build of several GB
        hint += "; on a machine without a GPU install torch's CPU build first (README, Set up)"
    return hint


def shipped_file_hint(path: str | Path) -> str:
    """For a relative path that names none of the files here but one of the package's own (the docs'
    ``agents/checkpoints/star2.pt``, from another directory or an installed wheel, or ``star2.pt`` alone):
    where that file is, as a clause to add to a "does not exist" error; else ''."""
    given = Path(path)
    try:
        if given.is_absolute() or given.exists() or not given.parts:
            return ""
    except OSError:  # a name too long for the file system (Path.exists raises on Python 3.11): none of ours
        return ""
    if len(given.parts) == 1:  # a shipped checkpoint's or model's name alone
        for folder in ("checkpoints", "ladder"):
            if (shipped := PACKAGE_DIR / folder / given).is_file():
                return f" here (the package has a file of that name: {str(shipped)!r})"
        return ""
    shipped = PACKAGE_DIR.parent / given
    if given.parts[0] != PACKAGE_DIR.name:
        return ""
    return f" here (the package's own file is {str(shipped)!r})" if shipped.is_file() else ""


def is_plain_int(value: object) -> bool:
    """Whether a value read from a file (JSON, a checkpoint's pickle) is an integer: JSON's true and 1.0 compare
    equal to 1, so a field that counts something must be checked to be a Python int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_empty_path(path: str | Path) -> bool:
    """Whether ``path`` is empty, which its reader refuses with its own message before using it:
    ``Path("")`` is ``"."``, so an empty path would otherwise be reported as "a directory"."""
    return str(path) == ""


def output_problem(path: str | Path, what: str = "") -> str | None:
    """Why a file cannot be written at ``path`` (None: it can), found before any work is done: the
    nearest existing folder above it takes a temporary file (missing folders are made on writing).
    ``what`` names the file in the message ("the ladder file")."""
    named = f"{what} {str(path)!r}" if what else repr(str(path))
    out = Path(path).absolute()
    if out.is_dir():
        return f"{named} is a directory"
    ending = folder_ending(path)
    if ending:  # (no directory there yet: Path dropped the '/', and out/ would be written as out)
        return f"{named} ends in {ending!r}, so it names a directory, not a file"
    kind = special_file_kind(out)
    if kind:
        return f"{named} is {kind}, not a regular file (writing the file would replace it)"
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        return f"cannot write {named}: {exc.strerror or exc}"
    return None


def folder_error(error: OSError, folder: str | Path) -> str:
    """Why ``folder`` could not be made, in words: a file standing where it or a folder above it should be
    is named ("'out' is a file, not a directory", where mkdir says only "File exists"), else the reason."""
    if error.errno in (errno.EEXIST, errno.ENOTDIR):
        for path in (Path(folder), *Path(folder).parents):
            if os.path.islink(path) and not path.exists():
                return f"{str(path)!r} is a broken link (to {os.readlink(path)!r}), not a directory"
            if os.path.lexists(path) and not path.is_dir():
                return f"{str(path)!r} is a file, not a directory"
    return error.strerror or str(error)


def folders_to_make(path: str | Path) -> list[Path]:
    """``path`` and its parents that do not exist yet, deepest first: what ``mkdir(parents=True)`` makes, for
    ``remove_empty_folders`` to take back when the command that made them fails."""
    path = Path(path)
    return [d for d in (path, *path.parents) if not os.path.lexists(d)]


def remove_empty_folders(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first, as ``folders_to_make`` lists them) while each is empty or gone."""
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:  # not empty (someone else's files now), or not ours to remove: its parents stay too
            break


class LockHeld(Exception):
    """Another process holds the lock ``held_lock`` was asked for."""


@contextlib.contextmanager
def held_lock(path: str | Path, create: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing; ``create=False``: ``FileNotFoundError``
    then) for the block, or raise ``LockHeld`` at once when another process holds it.  The operating system's
    lock (flock, or msvcrt's on Windows), so a process killed outright leaves none behind.  A holder may
    remove the file before it lets go (``Trainer``: a refused run leaves nothing): a process that locked the
    removed file meanwhile sees that it is no longer the one at ``path`` and locks that one instead."""
    while True:
        fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o666)
        try:
            if sys.platform == "win32":  # (where an open file cannot be removed)
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                break
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                if os.path.samestat(os.fstat(fd), os.stat(path)):
                    break
            except FileNotFoundError:
                if not create:
                    raise
        except OSError as exc:  # BlockingIOError here, PermissionError on Windows
            os.close(fd)
            if isinstance(exc, FileNotFoundError):
                raise
            raise LockHeld(str(path)) from None
        os.close(fd)  # removed by its holder: lock the file at the path now
    try:
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


def stderr_is_terminal() -> bool:
    """Whether standard error is a terminal, where progress bars are drawn: in a redirected log
    (``halma train ... 2> log``) a bar's carriage-return frames pile up as one endless line (tqdm's own rule for
    ``disable=None``)."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or file-less stream
        return False


def bar_size() -> dict[str, int]:
    """tqdm's ``ncols`` and ``nrows`` for a progress bar on stderr where its terminal reports no size: shutil's
    fallback (``$COLUMNS`` and ``$LINES``, else 80 x 24).  A pseudo-terminal opened without a size (``script``,
    ``docker run -t``, a CI runner's) reports 0 x 0, and tqdm draws nothing there, so a run showed neither its bar
    nor the status lines it writes where there is no terminal.  Empty (tqdm's own, following the terminal) where
    the terminal has a size, or where stderr is no terminal."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, ValueError, OSError):  # not a terminal, or no file
        return {}
    if size.columns > 0 and size.lines > 0:
        return {}
    fallback = shutil.get_terminal_size()
    return {"ncols": fallback.columns, "nrows": fallback.lines}


class CommandWarning(UserWarning):
    """A warning for the user of a ``halma`` command, which shows it as one line (``halma CMD: warning: ...``)
    instead of Python's form (the file and line that warned, and its source line)."""


def say_on_stderr(text: str) -> None:
    """A message on stderr, flushed; one that cannot be written (a hung-up terminal, a closed pipe, a full disk)
    is dropped and stderr sent to /dev/null: there is nowhere left to say it, and what the command was ending
    with (a checkpoint saved, its exit status) matters more than a traceback of the failed message."""
    try:
        print(text, file=sys.stderr, flush=True)
    except OSError as exc:
        if exc.errno == errno.EIO and is_terminal_device(2):
            terminal_output_to_devnull()
        else:
            to_devnull(2)


def to_devnull(fd: int) -> None:
    """Descriptor ``fd`` made /dev/null's (what is written to it from here on goes nowhere, without an error)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def is_terminal_device(fd: int) -> bool:
    """Whether ``fd`` is a character device: a terminal, even one that hung up (``isatty`` then says no)."""
    try:
        return stat.S_ISCHR(os.fstat(fd).st_mode)
    except OSError:
        return False


def terminal_output_to_devnull() -> None:
    """After a hangup the terminal is gone and every write to it fails (EIO): stdout and stderr, where they went
    to a terminal (a character device), go to /dev/null from here on; redirected to a file or a pipe, they stay."""
    for fd in (1, 2):
        if is_terminal_device(fd):
            to_devnull(fd)


def quoted_path(path: str | os.PathLike[str]) -> str:
    """A file name for an error message: ``repr`` (quoted and escaped), cut short past 200 characters (a
    6,000-character name typed by mistake made a 6,000-character line)."""
    text = repr(os.fspath(path))
    return text if len(text) <= 200 else f"{text[:150]}... ({len(os.fspath(path))} characters)"


def shown_path(path: str | os.PathLike[str]) -> str:
    """A file name for a message: as typed, or quoted and escaped where it holds a control character (an escape
    sequence would reach the terminal: 'save a<ESC>[31mb.json' turned the rest of the line red), and cut short past
    200 characters (a 6,000-character name typed by mistake made a 6,000-character line)."""
    text = os.fspath(path)
    if text.isprintable() and len(text) <= 200:
        return text
    shown = repr(text)
    return shown if len(shown) <= 200 else f"{shown[:150]}... ({len(text)} characters)"
