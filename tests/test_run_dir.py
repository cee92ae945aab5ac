"""agents/run_dir.py on its own (no torch): the lock of a run directory and what a refused start leaves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
