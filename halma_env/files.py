"""Reading a file that may be hostile (a record, a model, a ladder someone else wrote): a regular file
only, opened without waiting, and never more than a bound of it.  The callers turn the two errors into
their own, in their own words."""

from __future__ import annotations

import os
import stat
from typing import Any

from halma_env.notation import quoted


class NotARegularFile(ValueError):
    """The path names a directory, a device, a FIFO or a socket (``kind`` says which)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(f"{str(path)!r} is {kind}, not a regular file")
        self.kind = kind


class FileTooLarge(ValueError):
    """The file holds more than ``limit`` bytes (``size``: what it was seen to hold)."""

    def __init__(self, path: str | os.PathLike[str], size: int, limit: int) -> None:
        super().__init__(f"{str(path)!r} holds {size} bytes, more than {limit}")
        self.size, self.limit = size, limit


class DuplicateKey(ValueError):
    """A JSON object gives ``key`` twice (``no_duplicate_keys``); the message names the key, cut short."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {quoted(key)} appears twice in one object")
        self.key = key


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` for files read as untrusted input (a record, a results.json,
    a ladder, a manifest): a key given twice is a ``DuplicateKey``, not "the last one wins" (which would
    drop the first value without a word).  The callers turn it into their own error, naming the file."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


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


def special_file_kind(path: str | os.PathLike[str]) -> str:
    """What stands at ``path`` when it is a device, a FIFO or a socket ('' for nothing there, a regular
    file, a directory or a symlink): a writer that renames a new file over ``path`` would replace it (as
    root, ``/dev/null`` itself), so the writers refuse it."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return ""
    return "" if stat.S_ISLNK(mode) or stat.S_ISDIR(mode) else file_kind(mode)


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
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
