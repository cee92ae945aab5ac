"""Reading a file that may be hostile (a record, a model, a ladder someone else wrote): a regular file
only, opened without waiting, and never more than a bound of it.  The callers turn the two errors into
their own, in their own words.  Writing a file all at once (``write_atomic``), for every writer of the
project's files."""

from __future__ import annotations

import errno
import math
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from halma_env.notation import quoted

FilePath = str | bytes | os.PathLike[str] | os.PathLike[bytes]  # what os.open takes


class NotARegularFile(ValueError):
    """The path names a directory, a device, a FIFO or a socket (``kind`` says which)."""

    def __init__(self, path: FilePath, kind: str) -> None:
        super().__init__(f"{os.fsdecode(path)!r} is {kind}, not a regular file")
        self.kind = kind


class FileTooLarge(ValueError):
    """The file holds more than ``limit`` bytes (``size``: what it was seen to hold)."""

    def __init__(self, path: FilePath, size: int, limit: int) -> None:
        super().__init__(f"{os.fsdecode(path)!r} holds {size} bytes, more than {limit}")
        self.size, self.limit = size, limit


class DuplicateKey(ValueError):
    """A JSON object gives ``key`` twice (``no_duplicate_keys``); the message names the key, cut short."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {quoted(key)} appears twice in one object")
        self.key = key


class NotText(ValueError):
    """A JSON string holds a lone surrogate (``"\\ud800"``): JSON lets it be written, but it is no text and
    cannot be written back as UTF-8 (a record that loaded failed at its ``save``)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"the string {quoted(text)} holds a lone surrogate (\\ud800-\\udfff), which is not text")


class NotFinite(ValueError):
    """A JSON number that is not finite (``NaN``, ``Infinity``, ``1e999``): Python's decoder takes them, but they
    are not JSON and no count, rate or rating means anything at them (``FINITE_NUMBERS``)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"the number {quoted(text)} is not finite")
        self.text = text


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise NotFinite(text)
    return value


def _no_constant(text: str) -> float:  # NaN, Infinity, -Infinity
    raise NotFinite(text)


# ``json.loads(text, **FINITE_NUMBERS)``: a ``NotFinite`` for a number that is not finite, which the callers turn
# into their own errors naming the file
FINITE_NUMBERS: dict[str, Any] = {"parse_float": _finite_float, "parse_constant": _no_constant}


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` for files read as untrusted input (a record, a results.json,
    a ladder, a manifest): a key given twice is a ``DuplicateKey``, not "the last one wins" (which would
    drop the first value without a word); a key, a string value or a string in a list value holding a lone
    surrogate is ``NotText``.  The callers turn them into their own errors, naming the file."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        _check_text(key)
        if isinstance(value, str):
            _check_text(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    _check_text(item)
        data[key] = value
    return data


def _check_text(text: str) -> None:
    if not text.isascii() and any("\ud800" <= c <= "\udfff" for c in text):
        raise NotText(text)


def file_kind(mode: int) -> str:
    """What a file of ``os.stat`` mode ``mode`` is when it is not a regular file ('' when it is)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "a special file"


def folder_ending(path: str | os.PathLike[str]) -> str:
    """How ``path`` ends when it is written as a folder's name ('/', '.' or '..'; '' when it is not):
    ``Path`` drops a trailing '/' and '.', so without this check a writer given "out/" wrote the file ``out``."""
    text = os.fspath(path)
    if text.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        return text[-1]
    name = os.path.basename(text)
    return name if name in (".", "..") else ""


def special_file_kind(path: str | os.PathLike[str]) -> str:
    """What stands at ``path`` when it is a device, a FIFO or a socket ('' for nothing there, a regular
    file, a directory or a symlink): a writer that renames a new file over ``path`` would replace it (as
    root, ``/dev/null`` itself), so the writers refuse it."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return ""
    return "" if stat.S_ISLNK(mode) or stat.S_ISDIR(mode) else file_kind(mode)


def read_regular_file(path: FilePath, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.  Opened without waiting (opening
    a FIFO would wait for a writer) and checked on the open file (one swapped in after a caller's own check
    is caught too), then read with a bound (``/dev/zero``, or a file that grows while it is read, cannot
    fill the memory).  ``NotARegularFile`` or ``FileTooLarge``; ``OSError`` as ``open`` raises it."""
    # O_BINARY: Windows opens in text mode otherwise (CRLF -> LF, and a 0x1A byte ends the file)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind:
            raise NotARegularFile(path, kind)
        if info.st_size > limit:
            raise FileTooLarge(path, info.st_size, limit)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(path, len(data), limit)
    return data


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` all at once: into a new temporary file beside it (a fresh random name,
    created exclusively: no one could have planted a symlink at it), flushed to the disk, then ``os.replace``.
    A reader sees the old file or the new one, never half of one, and a symlink at ``path`` is replaced, not
    followed.  Permissions as a plain ``open(path, "w")`` has them: a new file gets 0o666 less the umask, a
    file written over keeps its mode (a private 0o600 file stays private), and one the user may not write
    is a ``PermissionError`` (EACCES), not replaced (root may write it, as with ``open``).  A device,
    FIFO or socket at ``path`` is an ``OSError`` (EINVAL): the rename would replace it (as root, ``/dev/null``
    itself became a regular file).  Every ``OSError`` names ``path``, not the temporary file (a full disk's
    names none).  A path written as a folder's ("out/", ``folder_ending``) is an ``IsADirectoryError``."""
    ending = folder_ending(path)
    if ending:
        raise IsADirectoryError(errno.EISDIR, f"it ends in {ending!r}, so it names a directory, not a file",
                                os.fspath(path))
    path = Path(path)
    kind = special_file_kind(path)
    if kind:
        raise OSError(errno.EINVAL, f"it is {kind}, not a regular file, and writing would replace it", str(path))
    # hidden, ``.tmp`` and the file's name, less "tfevents": TensorBoard reads every file whose name holds
    # that as an event file, and a temporary file a kill leaves in a run's ``tb/`` would give its points twice
    hidden = path.name.replace("tfevents", "tf-events")
    try:
        old = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        old = None
    kept_mode = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) else None
    if kept_mode is not None and not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "it is write-protected (a plain write would be refused too)", str(path))
    while True:
        tmp = path.with_name(f".{hidden}.{secrets.token_hex(8)}.tmp")
        try:
            # O_BINARY: Windows writes in text mode otherwise (LF -> CRLF)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:  # (a 64-bit random name taken: try another)
            continue
        except OSError as e:
            raise _naming(e, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if kept_mode is not None:
                os.fchmod(f.fileno(), kept_mode)
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise _naming(e, path) from None
        raise


def _naming(error: OSError, path: Path) -> OSError:
    """``error`` as an OSError of its kind that names ``path`` (and no second file)."""
    return error if error.errno is None else OSError(error.errno, error.strerror, str(path))
