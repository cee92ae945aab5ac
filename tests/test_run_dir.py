"""agents/run_dir.py on its own (no torch): the lock of a run directory and what a refused start leaves."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from agents.files import held_lock
from agents.run_dir import RunLock, drop_evaluations_after, run_in_use_problem, run_lock_file


def test_a_second_lock_of_a_held_run_directory_is_refused_and_the_first_still_holds(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "tiny"
    with RunLock(run_dir) as first:
        first.acquire()
        assert run_lock_file(run_dir) == tmp_path / "runs" / ".tiny.lock"
        second = RunLock(run_dir)
        with pytest.raises(ValueError, match="is in use by another halma train"):
            second.acquire()
        second.release_refused()  # it held nothing: the first's lock file stays, and its hold
        assert run_lock_file(run_dir).is_file()
        assert run_in_use_problem(run_dir) is not None
    assert run_in_use_problem(run_dir) is None  # let go at the block's end


def test_a_refused_start_removes_the_lock_file_and_the_folders_the_lock_made(tmp_path: Path) -> None:
    run_dir = tmp_path / "a" / "b" / "tiny"
    lock = RunLock(run_dir)
    lock.acquire()
    assert (tmp_path / "a" / "b").is_dir()
    lock.release_refused()  # the run directory was never made
    assert not (tmp_path / "a").exists()
    made = RunLock(run_dir)
    made.acquire()
    run_dir.mkdir()  # a run that started: its lock file and folders stay
    made.release_refused()
    assert run_lock_file(run_dir).is_file() and run_dir.is_dir()
    assert run_in_use_problem(run_dir) is None


def test_close_of_a_lock_never_taken_does_nothing(tmp_path: Path) -> None:
    RunLock(tmp_path / "tiny").close()
    assert list(tmp_path.iterdir()) == []


def test_evaluations_after_the_checkpoint_and_half_written_lines_are_dropped(tmp_path: Path) -> None:
    lines = [json.dumps({"global_step": step}) for step in (100, 200, 300)]
    (tmp_path / "eval.jsonl").write_text("\n".join(lines) + '\n{"global_st')
    drop_evaluations_after(tmp_path, 200)
    assert (tmp_path / "eval.jsonl").read_text() == "\n".join(lines[:2]) + "\n"
    drop_evaluations_after(tmp_path / "none", 200)  # a run without evaluations: nothing to do



def test_a_whole_last_record_without_its_newline_gets_one_before_the_resumed_run_appends(tmp_path: Path) -> None:
    """A kill between a record and its newline: the record stays, and the resumed run's next record (appended,
    as the trainer does) lands on a line of its own, so a later resume reads both."""
    lines = [json.dumps({"global_step": step}) for step in (100, 200)]
    (tmp_path / "eval.jsonl").write_text("\n".join(lines))
    drop_evaluations_after(tmp_path, 200)
    assert (tmp_path / "eval.jsonl").read_text() == "\n".join(lines) + "\n"
    with open(tmp_path / "eval.jsonl", "a") as f:
        f.write(json.dumps({"global_step": 300}) + "\n")
    drop_evaluations_after(tmp_path, 300)
    steps = [json.loads(line)["global_step"] for line in (tmp_path / "eval.jsonl").read_text().splitlines()]
    assert steps == [100, 200, 300]

@pytest.mark.parametrize("bad", ["garbled", '{"global_step": "0"}', "[" * 100_000 + "]" * 100_000, "true"])
def test_a_damaged_evaluation_line_is_refused_not_dropped(tmp_path: Path, bad: str) -> None:
    """Only a half-written last line (no newline) goes without a word; any other line that is not an evaluation
    record was dropped unread (a RecursionError for one nested past the parser's depth)."""
    lines = [json.dumps({"global_step": 100}), bad, json.dumps({"global_step": 300})]
    text = "\n".join(lines) + "\n"
    (tmp_path / "eval.jsonl").write_text(text)
    with pytest.raises(ValueError, match=r"eval\.jsonl line 2 is not an evaluation record"):
        drop_evaluations_after(tmp_path, 200)
    assert (tmp_path / "eval.jsonl").read_text() == text
    (tmp_path / "eval.jsonl").write_text("\n".join(lines[:1] + [bad]) + "\n")  # last, but whole: refused too
    with pytest.raises(ValueError, match="line 2"):
        drop_evaluations_after(tmp_path, 200)


def test_a_directory_with_a_checkpoint_is_a_run_to_resume_and_one_without_files_is_free(tmp_path: Path) -> None:
    """``new_run_dir_problem``: a missing or empty directory takes a fresh run; one whose ``checkpoints/last.pt``
    is there holds a run that ``--resume`` continues (not the "no checkpoint" refusal of a run stopped early)."""
    from agents.run_dir import new_run_dir_problem

    run_dir = tmp_path / "tiny"
    assert new_run_dir_problem(run_dir) is None
    run_dir.mkdir()
    assert new_run_dir_problem(run_dir) is None
    (run_dir / "checkpoints").mkdir()
    (run_dir / "checkpoints" / "last.pt").write_bytes(b"")
    (run_dir / "config.yaml").write_text("")
    assert new_run_dir_problem(run_dir) == (f"run directory {str(run_dir)!r} already holds a run; use --resume to "
                                            "continue it, or --set name=NAME to start another beside it")


def test_no_lock_file_means_no_run_in_use_and_the_check_writes_nothing(tmp_path: Path) -> None:
    """``run_in_use_problem`` before any run: None, and no lock file made (nor the runs folder)."""
    assert run_in_use_problem(tmp_path / "runs" / "tiny") is None
    assert run_in_use_problem(tmp_path / "tiny") is None
    assert list(tmp_path.iterdir()) == []


class _Clock:
    """``time`` for agents.run_dir: its ``sleep`` only adds up the seconds, and lets ``holder`` go once
    ``release_after`` of them have passed (another process's hold of a moment)."""

    def __init__(self, holder: contextlib.ExitStack, release_after: float) -> None:
        self.holder, self.release_after, self.slept = holder, release_after, 0.0

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        if self.slept >= self.release_after - 1e-9:
            self.holder.close()


@pytest.mark.parametrize("hold", [0.0, 0.05, 0.1])
def test_a_lock_held_for_a_moment_is_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold: float) -> None:
    """``RunLock.acquire``: "A moment's hold (``halma train``'s check before torch) is waited for", up to 0.1 s;
    a hold that lasts is refused (``run_in_use``) after that, not waited for without end."""
    import agents.run_dir

    run_dir = tmp_path / "runs" / "tiny"
    run_dir.parent.mkdir()
    with contextlib.ExitStack() as holder:
        holder.enter_context(held_lock(run_lock_file(run_dir)))
        clock = _Clock(holder, hold)
        monkeypatch.setattr(agents.run_dir, "time", clock)
        if hold == 0.0:
            holder.close()
        with RunLock(run_dir) as lock:
            lock.acquire()
            assert run_in_use_problem(run_dir) is not None  # held by this lock now
        assert clock.slept == pytest.approx(hold)
    with contextlib.ExitStack() as holder:
        holder.enter_context(held_lock(run_lock_file(run_dir)))
        clock = _Clock(holder, float("inf"))
        monkeypatch.setattr(agents.run_dir, "time", clock)
        with pytest.raises(ValueError, match="is in use by another halma train"):
            RunLock(run_dir).acquire()
        assert 0.05 <= clock.slept <= 0.1 + 1e-9


@pytest.mark.parametrize("removed", [1, 2, 3])
def test_a_runs_folder_removed_under_the_lock_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            removed: int) -> None:
    """A refused run removes the folders its lock made (``release_refused``); a run locking at that moment finds
    its runs folder gone (``FileNotFoundError``) and makes it again, twice at most: a third time the error is
    raised, never a run that goes on without its lock."""
    import agents.run_dir

    run_dir = tmp_path / "runs" / "tiny"
    calls = []

    def racing(path: Path, create: bool = True):  # noqa: ANN202
        if not create:  # run_in_use_problem's look
            return held_lock(path, create)
        calls.append(path)
        if len(calls) <= removed:
            run_dir.parent.rmdir()  # the other run's release_refused, just before the lock file is opened
        return held_lock(path, create)

    monkeypatch.setattr(agents.run_dir, "held_lock", racing)
    lock = RunLock(run_dir)
    if removed == 3:
        with pytest.raises(FileNotFoundError):
            lock.acquire()
        assert run_in_use_problem(run_dir) is None
        return
    with lock:
        lock.acquire()
        assert run_lock_file(run_dir).is_file() and run_in_use_problem(run_dir) is not None
    assert len(calls) == removed + 1


def _event_file(path: Path, steps: range) -> None:
    """A TensorBoard event file of scalars at ``steps`` (as SummaryWriter writes it, without torch)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    with path.open("wb") as f:
        writer = RecordWriter(f)
        writer.write(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
        for step in steps:
            value = summary_pb2.Summary.Value(tag="x", simple_value=float(step))
            writer.write(event_pb2.Event(wall_time=1.0 + step, step=step,
                                         summary=summary_pb2.Summary(value=[value])).SerializeToString())


def _steps(path: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    return [e.step for e in EventFileLoader(str(path)).Load() if e.summary.value]


def test_events_past_the_checkpoint_go_and_a_cut_record_goes_even_with_nothing_past_it(tmp_path: Path) -> None:
    """``drop_events_after``: each event file loses the events past ``global_step`` (a whole file, no record cut
    short); a record the kill cut short goes too, when no event is past the step; a file with nothing to drop
    is left as it is (not written again)."""
    from agents.run_dir import drop_events_after

    later, cut, clean = (tmp_path / f"events.out.tfevents.{n}" for n in ("1.a", "2.b", "3.c"))
    _event_file(later, range(1, 7))
    _event_file(cut, range(1, 4))
    with cut.open("ab") as f:
        f.write(b"\x10\x00\x00")  # a record the kill cut short
    _event_file(clean, range(1, 4))
    before = clean.stat()
    drop_events_after(tmp_path, 4)
    assert _steps(later) == [1, 2, 3, 4] and _steps(cut) == [1, 2, 3]
    assert not cut.read_bytes().endswith(b"\x10\x00\x00")
    after = clean.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns) and _steps(clean) == [1, 2, 3]


def test_an_event_file_damaged_before_its_end_is_refused_and_nothing_is_rewritten(tmp_path: Path) -> None:
    """One flipped byte in the middle of an event file made TensorBoard's loader stop there, so the resume
    rewrote the file with the records before it: most of the run's points went without a word.  Now such a
    file is a ValueError naming it, and no event file is rewritten; a record a kill cut short at the very end
    (a whole length announcing more than is left, or a length cut short) still goes quietly."""
    from agents.run_dir import drop_events_after

    later, damaged = tmp_path / "events.out.tfevents.1.a", tmp_path / "events.out.tfevents.2.b"
    _event_file(later, range(1, 7))
    _event_file(damaged, range(1, 40))
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    before = {p: p.read_bytes() for p in (later, damaged)}
    with pytest.raises(ValueError, match=r"^the TensorBoard event file '.*events\.out\.tfevents\.2\.b' is damaged "
                                         r"at byte \d+ \(record \d+: a checksum fails"):
        drop_events_after(tmp_path, 4)
    assert {p: p.read_bytes() for p in (later, damaged)} == before  # the other file was not rewritten either
    import io

    from tensorboard.summary.writer.record_writer import RecordWriter

    record = io.BytesIO()
    RecordWriter(record).write(b"x" * 30)
    for cut_tail in (b"\x10\x00\x00", record.getvalue()[:20]):  # a length cut short; a record cut after it
        damaged.unlink()
        _event_file(damaged, range(1, 4))
        whole = damaged.read_bytes()
        damaged.write_bytes(whole + cut_tail)
        drop_events_after(tmp_path, 4)
        assert _steps(damaged) == [1, 2, 3] and damaged.read_bytes() == whole


def test_a_run_directory_reached_through_a_symlink_is_one_run(tmp_path: Path) -> None:
    """The lock was .NAME.lock beside the path as spelled: a run moved to another disk and linked back
    (runs2/conc -> runs/conc) took two locks, so two halma train wrote into one directory.  The lock now sits
    beside the resolved directory, whichever path names it."""
    real = tmp_path / "runs" / "conc"
    real.mkdir(parents=True)
    (tmp_path / "runs2").mkdir()
    linked = tmp_path / "runs2" / "conc"
    linked.symlink_to(real)
    assert run_lock_file(linked) == run_lock_file(real) == tmp_path / "runs" / ".conc.lock"
    with RunLock(real) as first:
        first.acquire()
        with pytest.raises(ValueError, match="is in use by another halma train"):
            RunLock(linked).acquire()
        assert run_in_use_problem(linked) is not None
    with RunLock(linked) as second:  # released: the other path takes it
        second.acquire()
    assert not (tmp_path / "runs2" / ".conc.lock").exists()


@pytest.mark.parametrize("kind", ["not utf-8", "fifo", "directory"])
def test_an_evaluation_log_that_is_no_text_file_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    """A non-UTF-8 eval.jsonl gave the codec's message naming no file, a FIFO hung the resume for ever and a
    directory was "cannot write the run directory"; each is now a ValueError naming the log, nothing changed."""
    import os

    path = tmp_path / "eval.jsonl"
    if kind == "not utf-8":
        path.write_bytes(b'{"global_step": 1}\n\xff\xfe\n')
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    message = {"not utf-8": "is not UTF-8 text (byte 19): repair or remove it to resume",
               "fifo": "is a FIFO, not a regular file: the evaluation log cannot be read to resume",
               "directory": "is a directory, not a regular file: the evaluation log cannot be read to resume"}[kind]
    with pytest.raises(ValueError, match=f"^'{re.escape(str(path))}' {re.escape(message)}$"):
        drop_evaluations_after(tmp_path, 5)
    assert kind != "not utf-8" or path.read_bytes() == b'{"global_step": 1}\n\xff\xfe\n'


def test_the_closing_evaluations_record_a_kill_left_is_removed_before_it_runs_again(tmp_path: Path) -> None:
    """SIGKILL while the closing evaluation wrote final_eval.md left its eval.jsonl record; the --resume that
    ran the evaluation again appended a second one.  The record of that step goes first; other records,
    a final one of an earlier step included, and their bytes stay."""
    from agents.run_dir import drop_final_evaluation

    lines = [json.dumps({"global_step": 320, "final": True}), json.dumps({"global_step": 640, "final": False}),
             "{\"global_step\": 640, \"note\": \"\\u00e9\"}", json.dumps({"global_step": 640, "final": True})]
    path = tmp_path / "eval.jsonl"
    path.write_text("\n".join(lines) + "\n")
    drop_final_evaluation(tmp_path, 640)
    assert path.read_text() == "\n".join(lines[:3]) + "\n"
    before = path.read_bytes()
    drop_final_evaluation(tmp_path, 640)  # nothing left to drop: not written again
    drop_final_evaluation(tmp_path / "none", 640)
    assert path.read_bytes() == before
