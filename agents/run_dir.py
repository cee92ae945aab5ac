"""A training run's directory over its life: whether a run may start in it, the lock that keeps one
``halma train`` in it at a time, and the logs a resumed run takes back to its checkpoint (``eval.jsonl``,
the TensorBoard events).  No torch: ``halma train`` refuses a directory before its imports."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path
from typing import Any

from agents.files import LockHeld, folders_to_make, held_lock, remove_empty_folders
from halma_env.files import FileTooLarge, NotARegularFile, read_regular_file, write_atomic


def new_run_dir_problem(run_dir: str | Path) -> str | None:
    """Why a fresh run cannot start in ``run_dir`` (it holds files already: their logs, snapshots and
    evaluations would mix with the new run's; a run stopped before its first checkpoint leaves them too),
    or ``None``.  Torch-free, so ``halma train`` refuses before its imports."""
    run_dir = Path(run_dir)
    held = sorted(p.name for p in run_dir.iterdir()) if run_dir.is_dir() else []
    if not held:
        return None
    where = f"run directory {str(run_dir)!r}"
    if (run_dir / "checkpoints" / "last.pt").exists():
        return (f"{where} already holds a run; use --resume to continue it, or --set name=NAME to start another "
                "beside it")
    return (f"{where} already holds {', '.join(held)} but no checkpoint (a run stopped before its first one), so "
            "there is nothing to resume: remove the directory to start over, or --set name=NAME to start another "
            "beside it")


def run_in_use(run_dir: str | Path) -> str:
    """The refusal of a ``halma train`` whose run directory another one holds (its lock, ``run_lock_file``)."""
    return f"the run directory {str(run_dir)!r} is in use by another halma train; let it end or stop it first"


def run_in_use_problem(run_dir: str | Path) -> str | None:
    """``run_in_use`` when another ``halma train`` holds ``run_dir``'s lock now, else None; writes nothing (no
    lock file: no run holds it).  Torch-free, so ``halma train`` refuses before its imports."""
    try:
        with held_lock(run_lock_file(run_dir), create=False):
            return None
    except LockHeld:
        return run_in_use(run_dir)
    except OSError:  # no lock file (or none this user may open): the Trainer's own lock says the rest
        return None


def run_lock_file(run_dir: str | Path) -> Path:
    """The file whose lock a ``halma train`` of ``run_dir`` holds while it runs: beside the run directory
    (``.NAME.lock``; a run name cannot start with a dot), as the path resolves through symlinks: a run moved
    to another disk and linked back is one run whichever path names it (two trainers, each through its own
    path, wrote into one directory)."""
    run_dir = Path(os.path.realpath(run_dir))
    return run_dir.parent / f".{run_dir.name}.lock"


class RunLock:
    """The lock of one run directory (``run_lock_file``), held by a ``Trainer`` made with
    ``lock_run_dir`` from before its first check of the directory to the run's end (``with`` it, or
    ``close()``).  Taken before the checks: after them, two fresh runs started at once could both pass
    the checks of a directory that does not exist yet, and train into it together."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self._held = contextlib.ExitStack()
        self._made: list[Path] = []  # what acquire made: the lock file, then the folders, deepest first
        self._run_dir_was_there = False

    def acquire(self) -> None:
        """Take the lock, making the runs directory if needed; ``ValueError`` (``run_in_use``) when another
        ``halma train`` holds it.  A moment's hold (``halma train``'s check before torch) is waited for."""
        lock = run_lock_file(self.run_dir)
        parent = self.run_dir.parent
        made = folders_to_make(parent)
        new = not lock.exists()
        for attempt in range(3):
            parent.mkdir(parents=True, exist_ok=True)
            try:
                self._held.enter_context(held_lock(lock))
                break
            except FileNotFoundError:  # a refused run removed the folder it had made, just now: make it again
                if attempt == 2:
                    raise
            except LockHeld:  # a --resume started while the run it continues still trained: two in one directory
                if attempt == 2:  # (not a moment's hold: halma train's check before torch takes the lock briefly)
                    raise ValueError(run_in_use(self.run_dir)) from None
                time.sleep(0.05)
        self._made = [lock, *made] if new else []  # (a lock file there already: its folder was there too)
        self._run_dir_was_there = self.run_dir.exists()

    def release_refused(self) -> None:
        """Let the lock go after a refused start; before that, unless the run directory was made since
        ``acquire`` (a run that started), remove the lock file and the folders ``acquire`` made (the file while its
        lock is held: see ``held_lock``), so refused input leaves nothing behind (a ``--resume`` of a run
        directory that holds no checkpoint left a new ``.NAME.lock`` beside it)."""
        if self._made and self.run_dir.exists() == self._run_dir_was_there:
            lock, *folders = self._made
            with contextlib.suppress(OSError):
                lock.unlink()
            self._held.close()
            remove_empty_folders(folders)  # (another run's lock file in one now: it stays)
        self._held.close()

    def close(self) -> None:
        """Let the lock go (nothing happens when it was not taken)."""
        self._held.close()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


MAX_EVAL_LOG_BYTES = 1 << 30  # eval.jsonl: about a kilobyte per evaluation, so a million of them


def drop_evaluations_after(run_dir: Path, global_step: int) -> None:
    """Keep only the ``eval.jsonl`` lines up to ``global_step`` (a resumed run's checkpoint): a killed run's
    later evaluations are replaced by the resumed run's.  Rewritten atomically, like a checkpoint.  A last
    line without its newline is one the killed run left half-written: it goes if it is not a whole record,
    and gets its newline if it is (the resumed run appends its records after it); any other line that is
    not an evaluation record is a ``ValueError`` naming it, and the file is left as it is (dropped unread,
    it would be lost without a word)."""
    path = run_dir / "eval.jsonl"
    if not path.exists():
        return
    try:  # a regular file only (a FIFO hung the resume), read with a bound, and named when it is not text
        text = read_regular_file(path, MAX_EVAL_LOG_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{str(path)!r} is not UTF-8 text (byte {e.start}): repair or remove it to resume") from None
    except (NotARegularFile, FileTooLarge) as e:
        raise ValueError(f"{e}: the evaluation log cannot be read to resume") from None
    lines = text.splitlines()
    kept = []
    for number, line in enumerate(lines, 1):
        step = _evaluation_step(line)
        if step is None:
            if number == len(lines) and not text.endswith("\n"):
                continue
            raise ValueError(f"{path} line {number} is not an evaluation record (a JSON object with an integer "
                             "global_step): repair or remove that line to resume")
        if step <= global_step:
            kept.append(line + "\n")
    if len(kept) < len(lines) or not text.endswith("\n"):
        write_atomic(path, "".join(kept))


def drop_final_evaluation(run_dir: Path, global_step: int) -> None:
    """Remove from ``eval.jsonl`` the closing evaluation's record of ``global_step`` (``"final": true``) that a
    run killed outright (SIGKILL) left while it wrote the evaluation's other files: the ``--resume`` that runs
    the evaluation again writes its own (it wrote a second).  Other lines stay as they are."""
    path = run_dir / "eval.jsonl"
    if not path.is_file():
        return
    lines = path.read_bytes().splitlines(keepends=True)  # (bytes: the other lines are written back as they were)
    kept = [line for line in lines if not _final_record_of(line, global_step)]
    if len(kept) < len(lines):
        write_atomic(path, b"".join(kept))


def _final_record_of(line: bytes, global_step: int) -> bool:
    record = _json_object(line)
    return record is not None and record.get("final") is True and record.get("global_step") == global_step


def _evaluation_step(line: str) -> int | None:
    """The ``global_step`` of one ``eval.jsonl`` line, or None when the line is not an evaluation record."""
    record = _json_object(line)
    step = None if record is None else record.get("global_step")
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def _json_object(line: str | bytes) -> dict[str, Any] | None:
    """One ``eval.jsonl`` line as a JSON object, or None (not JSON: cut short, nested past the parser's depth;
    or another JSON value)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def drop_events_after(tb_dir: Path, global_step: int) -> None:
    """Rewrite the TensorBoard event files in ``tb_dir`` without the events past ``global_step`` (a resumed
    run's checkpoint), so a killed run's later points do not stand beside the resumed run's.  TensorBoard's
    own ``purge_step`` is not enough: its default (Rust) loader ignores it, and its Python loader applies it
    only after a first session marker that a fresh run's writer never writes.  A record the kill cut short
    goes too; a file with nothing to drop is left as it is.  A file damaged before its end (a record whose
    checksum fails, with more after it) is a ``ValueError`` naming it, and no file is rewritten: TensorBoard's
    loader stops at such a record, so the rewrite would have dropped every event after it without a word."""
    if not tb_dir.is_dir():
        return
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    rewrites = []
    for path in sorted(tb_dir.glob("events.out.tfevents.*")):
        records = list(RawEventFileLoader(str(path)).Load())
        _check_event_file_tail(path, sum(len(r) + 16 for r in records), len(records))
        kept = [r for r in records if event_pb2.Event.FromString(r).step <= global_step]
        if len(kept) < len(records) or path.stat().st_size != sum(len(r) + 16 for r in records):
            rewrites.append((path, kept))
    for path, kept in rewrites:
        out = io.BytesIO()
        writer = RecordWriter(out)
        for record in kept:
            writer.write(record)
        write_atomic(path, out.getvalue())


def _check_event_file_tail(path: Path, offset: int, count: int) -> None:
    """What follows the ``count`` records TensorBoard's loader read from ``path`` (ending at byte ``offset``)
    must be nothing or one record a kill cut short (its length's checksum holds and it runs past the end);
    anything else is damage, a ``ValueError``.  A record is an 8-byte length, its 4-byte checksum, the data and
    the data's 4-byte checksum (TFRecord)."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    with open(path, "rb") as f:
        f.seek(offset)
        tail = f.read(12)
        remaining = os.fstat(f.fileno()).st_size - offset
    if remaining == 0 or len(tail) < 12:
        return  # complete, or a length the kill cut short
    length = int.from_bytes(tail[:8], "little")
    if masked_crc32c(tail[:8]) == int.from_bytes(tail[8:12], "little") and 16 + length > remaining:
        return  # a whole length, with less data after it than it announces: the record the kill cut short
    raise ValueError(f"the TensorBoard event file {str(path)!r} is damaged at byte {offset} (record {count + 1}: "
                     f"a checksum fails, with {remaining} bytes from there to the end); a resume would drop "
                     "every event from there: restore the file, or move it out of the run's tb/ folder to resume "
                     "without its points")
