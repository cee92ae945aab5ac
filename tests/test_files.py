"""``output_problem`` (agents/files.py): why a file cannot be written, found before any work is done,
naming the file as the user gave it; missing folders are no problem (they are made on writing)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import agents.files
from agents.files import output_problem


def test_a_file_in_folders_yet_to_be_made_can_be_written_and_nothing_is_made(tmp_path: Path) -> None:
    assert output_problem(tmp_path / "new" / "deeper" / "x.pt") is None
    assert output_problem(tmp_path / "x.pt") is None
    assert os.listdir(tmp_path) == []


def test_a_directory_in_the_way_is_named(tmp_path: Path, monkeypatch) -> None:
    assert output_problem(tmp_path) == f"{str(tmp_path)!r} is a directory"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert output_problem("runs", "the ladder file") == "the ladder file 'runs' is a directory"


def test_a_folder_that_cannot_take_the_file_is_named_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a_file").write_text("")
    assert output_problem("a_file/x.pt") == f"cannot write 'a_file/x.pt': {os.strerror(errno.ENOTDIR)}"
    assert output_problem("a_file/x.pt", "--out") == f"cannot write --out 'a_file/x.pt': {os.strerror(errno.ENOTDIR)}"


def test_an_error_without_an_errno_text_is_named_by_its_message(tmp_path: Path, monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise OSError("quota exceeded")

    monkeypatch.setattr(agents.files.tempfile, "TemporaryFile", refuse)
    assert output_problem(tmp_path / "x.pt") == f"cannot write {str(tmp_path / 'x.pt')!r}: quota exceeded"
