"""agents/files.py: ``output_problem``, why a file cannot be written, found before any work is done,
naming the file as the user gave it (missing folders are no problem: they are made on writing); and
where the package's own files are, in the source tree and in an installed wheel."""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import agents.files
from agents.files import output_problem, shown_path
from halma_env.files import file_kind, no_duplicate_keys
from tests.process_helpers import signal_when


def test_a_file_in_folders_yet_to_be_made_can_be_written_and_nothing_is_made(tmp_path: Path) -> None:
    assert output_problem(tmp_path / "new" / "deeper" / "x.pt") is None
    assert output_problem(tmp_path / "x.pt") is None
    assert os.listdir(tmp_path) == []


def test_a_directory_in_the_way_is_named(tmp_path: Path, monkeypatch) -> None:
    assert output_problem(tmp_path) == f"{str(tmp_path)!r} is a directory"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert output_problem("runs", "the ladder file") == "the ladder file 'runs' is a directory"


def test_a_path_written_as_a_folder_s_is_no_file_to_write(tmp_path: Path, monkeypatch) -> None:
    """``Path("out/")`` is ``out``: the slash, which says a folder is meant, was dropped and the file written."""
    from halma_env.files import folder_ending, write_atomic

    monkeypatch.chdir(tmp_path)
    assert output_problem("out/", "the ladder file") == ("the ladder file 'out/' ends in '/', so it names a "
                                                         "directory, not a file")
    with pytest.raises(IsADirectoryError) as error:
        write_atomic("out/", "x")
    assert (error.value.strerror, error.value.filename) == ("it ends in '/', so it names a directory, not a file",
                                                            "out/")
    for path, ending in [("out/.", "."), ("out/..", ".."), (".", "."), ("out", "")]:
        assert folder_ending(path) == ending
    with pytest.raises(IsADirectoryError):
        write_atomic("out/.", "x")
    assert list(tmp_path.iterdir()) == []


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


ROOT = Path(__file__).resolve().parents[1]


def test_the_source_tree_is_told_from_an_installed_package(tmp_path: Path) -> None:
    from agents.files import PACKAGE_DIR, from_source_checkout, shipped_configs_dir

    assert from_source_checkout() and PACKAGE_DIR == ROOT / "agents"  # the tests run from the source tree
    assert shipped_configs_dir() == ROOT / "configs"
    installed = tmp_path / "site-packages" / "agents"
    installed.mkdir(parents=True)
    assert not from_source_checkout(installed) and shipped_configs_dir(installed) == installed / "configs"
    (tmp_path / "site-packages" / "pyproject.toml").write_text("")
    assert from_source_checkout(installed)


def test_pyproject_names_every_package_and_ships_the_configs_inside_agents() -> None:
    """The wheel's packages are listed by name (for the configs' mapping): a new package left out of the list
    would be missing from an installed wheel while every test in the source tree passed."""
    import tomllib

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    packages = sorted(str(p.parent.relative_to(ROOT)).replace("/", ".")
                      for top in ("halma_env", "agents") for p in (ROOT / top).rglob("__init__.py"))
    assert sorted(tool["packages"]) == sorted([*packages, "agents.configs", "agents.checkpoints", "agents.ladder"])
    assert tool["package-dir"] == {"agents.configs": "configs"}
    assert tool["package-data"]["agents.configs"] == ["*.yaml"]
    for folder in ("checkpoints", "ladder"):  # every shipped file of the data folders goes into the wheel
        patterns = tool["package-data"][f"agents.{folder}"]
        for file in (ROOT / "agents" / folder).iterdir():
            assert any(fnmatch.fnmatch(file.name, pattern) for pattern in patterns), file
    # PEP 561: without the marker, a user's mypy skipped the packages' hints ("missing library stubs")
    for package in ("halma_env", "agents"):
        assert "py.typed" in tool["package-data"][package] and (ROOT / package / "py.typed").is_file()


def test_a_missing_relative_path_to_a_shipped_file_names_where_it_is(tmp_path: Path, monkeypatch, capsys) -> None:
    """The docs' `agents/checkpoints/star2.pt` run from another directory (or with an installed wheel) said
    only 'does not exist'; the error now says where the package's own file is. Other paths get no hint."""
    from agents.cli import main
    from agents.files import shipped_file_hint

    star2 = ROOT / "agents" / "checkpoints" / "star2.pt"
    monkeypatch.chdir(tmp_path)
    assert shipped_file_hint("agents/checkpoints/star2.pt") == f" here (the package's own file is {str(star2)!r})"
    for other in ("agents/checkpoints/nosuch.pt", "nosuch.pt", str(star2), "elsewhere/agents/checkpoints/star2.pt",
                  "ladder/star-2-star2.onnx"):
        assert shipped_file_hint(other) == ""
    assert shipped_file_hint("star2.pt") == f" here (the package has a file of that name: {str(star2)!r})"
    model = ROOT / "agents" / "ladder" / "star-2-star2.onnx"
    assert shipped_file_hint("star-2-star2.onnx") == f" here (the package has a file of that name: {str(model)!r})"
    assert main(["play", "--players", "human,star2.pt"]) == 2
    assert f"checkpoint file 'star2.pt' does not exist here (the package has a file of that name: '{star2}')" \
        in capsys.readouterr().err
    for command in (["eval", "agents/checkpoints/star2.pt", "random", "--games", "2"],
                    ["export", "agents/checkpoints/star2.pt", "--out", "exports"],
                    ["eval", "agents/ladder/star-2-star2.onnx", "random", "--games", "2"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"does not exist here (the package's own file is '{ROOT / command[1]}')" in err, err
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_replaces_a_planted_symlink_instead_of_writing_through_it(tmp_path: Path) -> None:
    from halma_env.files import write_atomic

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "results.json"
    target.symlink_to(victim)
    write_atomic(target, "{}\n")
    assert victim.read_text() == "keep me" and not target.is_symlink() and target.read_text() == "{}\n"
    write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01" and sorted(p.name for p in tmp_path.iterdir()) == ["results.json",
                                                                                                  "victim.txt"]
    # the permissions open() gives a new file, under the umask of the moment (read at import, it was not)
    for mask in (0o022, 0o002, 0o077):
        previous = os.umask(mask)
        try:
            target.unlink()
            write_atomic(target, "x")
            (tmp_path / "plain").unlink(missing_ok=True)
            (tmp_path / "plain").write_text("x")
        finally:
            os.umask(previous)
        assert target.stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_file_written_over_keeps_its_mode_and_a_write_protected_one_is_refused(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """As a plain open(path, "w") has it: the file written over keeps its permissions (a private 0o600 record
    came back 0o644, a 0o444 one writable), and a file the user may not write is refused, unchanged (root may:
    os.access says so, as open does)."""
    from halma_env.files import write_atomic

    target = tmp_path / "game.json"
    for mode in (0o600, 0o640, 0o444):
        target.unlink(missing_ok=True)
        target.write_text("old")
        target.chmod(mode)
        if os.access(target, os.W_OK):
            write_atomic(target, "new")
            assert target.read_text() == "new" and target.stat().st_mode & 0o777 == mode
    target.chmod(0o644)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, how: False if Path(p) == target else real_access(p, how))
    with pytest.raises(PermissionError, match="write-protected") as caught:
        write_atomic(target, "newer")
    assert caught.value.filename == str(target) and target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]
    write_atomic(tmp_path / "fresh.json", "x")  # a new file is not asked about (nothing to protect)


def test_a_device_fifo_or_socket_is_never_replaced_by_a_written_file(tmp_path: Path, capsys) -> None:
    """The rename of write_atomic replaced whatever stood at the path: run as root, a file written to
    /dev/null made it a regular file for every process on the machine."""
    import socket
    import stat

    from agents.cli import main
    from agents.files import output_problem
    from halma_env.files import write_atomic

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=r"it is a FIFO, not a regular file, and writing would replace it") as info:
        write_atomic(fifo, "{}")
    assert info.value.errno == errno.EINVAL and info.value.filename == str(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
    assert output_problem(fifo, "the ladder file") == (f"the ladder file {str(fifo)!r} is a FIFO, not a regular "
                                                       "file (writing the file would replace it)")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(OSError, match="it is a socket"):
            write_atomic(tmp_path / "sock", b"x")
    assert output_problem("/dev/null") == "'/dev/null' is a device, not a regular file (writing the file would " \
                                          "replace it)"
    # refused before the tournament, the FIFO left as it was
    assert main(["ladder", "--ladder", str(fifo), "--quiet", "--games", "2", "random", "greedy"]) == 2
    assert "is a FIFO, not a regular file" in capsys.readouterr().err and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_read_regular_file_refuses_what_would_hang_or_fill_the_memory_and_leaks_no_descriptor(tmp_path: Path) -> None:
    """halma_env.files.read_regular_file, under load_record, load_opponent's files and ladder files."""
    import pytest

    from halma_env.files import FileTooLarge, NotARegularFile, read_regular_file

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    before = len(os.listdir("/proc/self/fd"))
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device"), (tmp_path, "a directory")):
        with pytest.raises(NotARegularFile, match=f"is {kind}, not a regular file") as caught:
            read_regular_file(path, 100)
        assert caught.value.kind == kind
    data = tmp_path / "data"
    data.write_bytes(b"x" * 10)
    assert read_regular_file(data, 10) == b"x" * 10
    with pytest.raises(FileTooLarge, match="holds 10 bytes, more than 9") as too_large:
        read_regular_file(data, 9)
    assert (too_large.value.size, too_large.value.limit) == (10, 9)
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing", 10)
    assert len(os.listdir("/proc/self/fd")) == before


def test_files_are_opened_in_binary_mode_where_the_platform_has_one(tmp_path: Path, monkeypatch) -> None:
    """Windows' os.open reads and writes text unless told O_BINARY (CRLF turned to LF, a 0x1A byte ending the
    file): an exported model's checksum failed there. Here a stand-in flag checks that both openers pass it."""
    import halma_env.files

    fake_binary = 1 << 30  # no flag of this platform's
    flags: list[int] = []
    real_open = os.open

    def recording_open(path, flag, *args):
        flags.append(flag)
        return real_open(path, flag & ~fake_binary, *args)

    monkeypatch.setattr(os, "O_BINARY", fake_binary, raising=False)
    monkeypatch.setattr(os, "open", recording_open)
    data = b"\x1a\r\n\n" * 3
    halma_env.files.write_atomic(tmp_path / "model.onnx", data)
    assert halma_env.files.read_regular_file(tmp_path / "model.onnx", 1024) == data
    assert len(flags) == 2 and all(flag & fake_binary for flag in flags)


def test_without_the_optional_dependencies_commands_say_which_extra_to_install(tmp_path: Path) -> None:
    """pyproject's core dependencies play, evaluate bots and run exported opponents; training and checkpoints
    need the `train` extra (torch, tensorboard), results.png the `plots` extra (matplotlib). Without them
    (imports blocked here) each command says what to install, writes nothing, or just works."""

    script = (
        "import sys\n"
        "for m in ('torch', 'tensorboard', 'matplotlib'):\n"
        "    sys.modules[m] = None  # import torch now fails as if it were not installed\n"
        "from agents.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "assert 'torch' not in sys.modules or sys.modules['torch'] is None\n"
        "sys.exit(status)\n"
    )
    train = ("the train extra (pip install -e '.[train]' in the repository, or a wheel with [train]); on a machine "
             "without a GPU install torch's CPU build first (README, Set up)")
    cases = [
        (["train", "quickstart", "--runs-dir", str(tmp_path / "runs")], 2,
         f"halma train: error: torch is not installed: it comes with {train}"),
        (["export", "agents/checkpoints/star2.pt", "--out", str(tmp_path / "exports")], 2,
         f"halma export: error: torch is not installed: it comes with {train}"),
        (["eval", "agents/checkpoints/star2.pt", "random", "--games", "1", "--workers", "1", "--quiet"], 2,
         f"loading 'agents/checkpoints/star2.pt': torch is not installed: it comes with {train}"),
        (["eval", "easy", "greedy", "--games", "2", "--workers", "1", "--quiet", "--max-plies", "20"], 0, ""),
    ]
    root = Path(__file__).resolve().parent.parent
    for argv, status, message in cases:
        done = subprocess.run([sys.executable, "-c", script, *argv], cwd=root, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == status, (argv, done.stderr)
        assert message in done.stderr, (argv, done.stderr)
    # a ladder of bots, and the latency of the shipped models, need no torch either
    for argv, shown in [
        (["ladder", "--ladder", str(tmp_path / "l.json"), "--dry-run", "--quiet", "--games", "8", "greedy", "random",
          "search:depth=1,time=none", "greedy:noise=0.5"], "### star-2: 8 games, seed 0"),
        (["bench", "opponent", "--seconds", "0.02"], "skipped the default network's rows (games without a shipped "
                                                     f"model): torch is not installed: it comes with {train}"),
    ]:
        done = subprocess.run([sys.executable, "-c", script, *argv], cwd=root, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0 and shown in done.stdout, (argv, done.stderr)
    assert list(tmp_path.iterdir()) == []  # no run or export folder was made
    # without matplotlib --out writes everything but the plot, and says so before the games
    done = subprocess.run([sys.executable, "-c", script, "eval", "greedy", "random", "--games", "2", "--quiet",
                           "--out", str(tmp_path / "out")], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == (
        "halma eval: --out writes no results.png: matplotlib is not installed: it comes with the plots extra "
        "(pip install -e '.[plots]' in the repository, or a wheel with [plots])\n"), done.stderr
    assert f"wrote 4 files to {tmp_path / 'out'} (results.json, results.md, games/)" in done.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["games", "results.json", "results.md"]


def test_with_torch_but_without_tensorboard_training_names_tensorboard(tmp_path: Path) -> None:
    """torch there, tensorboard not (blocked here): found before the run's first files (a second try was
    refused as a run without a checkpoint), and the message says nothing of torch's builds.  The case needs
    torch installed (the train extra without tensorboard), so this test imports it: without torch it is the
    torch message of the test above that training gives."""
    import torch  # noqa: F401  (the case's premise: torch is installed)

    script = (
        "import sys\n"
        "sys.modules['tensorboard'] = None  # import tensorboard now fails as if it were not installed\n"
        "from agents.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", script, "train", "quickstart", "--runs-dir", str(tmp_path / "runs")],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr == (
        "halma train: error: tensorboard is not installed: it comes with the train extra (pip install -e '.[train]' "
        "in the repository, or a wheel with [train])\n"), done.stderr  # torch is there: no word on its builds
    assert list(tmp_path.iterdir()) == []  # no run folder was made


def test_the_batched_engine_names_the_extra_it_needs() -> None:
    """The README's RL snippet imports it; on the core install that was a bare "No module named 'torch'"."""
    script = ("import sys\nsys.modules['torch'] = None\nimport halma_env, halma_env.envs\n"
              "try:\n    import halma_env.batched\nexcept ModuleNotFoundError as e:\n    print(e.name, '|', e)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout == ("torch | halma_env.batched needs torch, which comes with the train extra (pip install -e "
                           "'.[train]' in the repository, or a wheel with [train]); on a machine without a GPU "
                           "install torch's CPU build first (README, Set up)\n"), done.stderr


def test_only_a_missing_optional_package_is_blamed_on_its_extra() -> None:
    from agents.files import missing_extra

    assert missing_extra(ModuleNotFoundError("no", name="torch")) == (
        "torch is not installed: it comes with the train extra (pip install -e '.[train]' in the repository, or a "
        "wheel with [train]); on a machine without a GPU install torch's CPU build first (README, Set up)")
    assert missing_extra(ModuleNotFoundError("no", name="matplotlib")) == (
        "matplotlib is not installed: it comes with the plots extra (pip install -e '.[plots]' in the repository, or "
        "a wheel with [plots])")
    # a broken install: its own error stands
    assert missing_extra(ModuleNotFoundError("no", name="torch._C")) is None
    assert missing_extra(ImportError("cannot import name 'x' from 'torch'", name="torch")) is None
    assert missing_extra(ModuleNotFoundError("no", name="yaml")) is None  # a core dependency


# --- temporary files, locks and signals (the interruption review) ---------------------------------------------


def test_write_atomics_temporary_file_in_a_tensorboard_folder_is_no_event_file(tmp_path: Path, monkeypatch) -> None:
    """Its name was ``.events.out.tfevents.*.<hex>.tmp``, which TensorBoard's loader takes for an event file: a kill
    during ``drop_events_after`` (which rewrites a run's event files with it) left the run's points twice.  Still
    hidden, ``.tmp`` and named after the file; nothing stays after a failed write."""
    from tensorboard.backend.event_processing.io_wrapper import IsTensorFlowEventsFile

    from halma_env.files import write_atomic

    target = tmp_path / "events.out.tfevents.1765000000.host.123.0"
    seen: list[str] = []
    real = os.replace

    def replace(src, dst) -> None:
        seen.append(os.path.basename(src))
        real(src, dst)

    monkeypatch.setattr(agents.files.os, "replace", replace)
    write_atomic(target, b"events")
    [name] = seen
    assert not IsTensorFlowEventsFile(str(tmp_path / name)) and "tfevents" not in name
    assert name.startswith(".events.out.tf-events.1765000000.host.123.0.") and name.endswith(".tmp")
    assert target.read_bytes() == b"events" and os.listdir(tmp_path) == [target.name]

    def full(src, dst) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(agents.files.os, "replace", full)
    with pytest.raises(OSError, match="No space left") as info:
        write_atomic(target, b"more")
    assert os.listdir(tmp_path) == [target.name]
    # the error names the file asked for (a full disk's names none, and a caller took that for its stdout)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target) and info.value.filename2 is None


def test_a_crossing_plan_that_cannot_be_written_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    """save_crossing_lines left its ``.NAME.PID.tmp`` in the runs directory's cache when the write failed (a full
    disk): nothing else removes it."""
    import types

    from agents.config import default_dict, from_dict
    from agents.imitation import save_crossing_lines

    def full(src, dst) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    cache = tmp_path / ".crossing_cache"
    with pytest.raises(OSError, match="No space left"):
        save_crossing_lines(cache / "crossing-0.json", from_dict(default_dict()), 0,
                            types.SimpleNamespace(main=[], detours=[]))
    assert os.listdir(cache) == []


def test_a_lock_whose_file_its_holder_removed_is_taken_on_the_file_there_now(tmp_path: Path, monkeypatch) -> None:
    """A refused ``halma train`` removes the lock file it made, holding its lock: a process that had opened that
    file meanwhile, and locks it once it is let go, must not count as holding the run's lock (another run has
    locked the file now at the path)."""
    import contextlib

    from agents.files import LockHeld, held_lock

    path = tmp_path / ".run.lock"
    holder, other = contextlib.ExitStack(), contextlib.ExitStack()
    holder.enter_context(held_lock(path))
    real_open = os.open
    raced: list[bool] = []

    def racing_open(file, flags, mode=0o777):
        fd = real_open(file, flags, mode)
        if not raced:  # opened the holder's file; before it locks it, the holder removes it and lets go, and
            raced.append(True)  # another run makes a new one and locks that
            path.unlink()
            holder.close()
            other.enter_context(held_lock(path))
        return fd

    monkeypatch.setattr(agents.files.os, "open", racing_open)
    try:
        with pytest.raises(LockHeld), held_lock(path):
            pass
    finally:
        monkeypatch.undo()
        other.close()
    assert raced
    with held_lock(path):  # let go: taken again
        pass


def test_sigterm_of_halma_export_removes_its_scratch_folder(tmp_path: Path) -> None:
    """``halma export`` killed by SIGTERM left ``OUT/.export-XXXX/`` with the model in it, which no later export
    removes (Ctrl-C's path cleaned up).  Now SIGTERM is raised as Ctrl-C is (``Terminated``): the scratch folder
    and the folders the export made go, one line, exit status 143."""
    import signal

    from tests.opponent_helpers import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "s2.pt")
    ready, out = tmp_path / "ready", tmp_path / "new" / "out"
    script = ("import pathlib, sys, time\n"
              "import agents.export\n"
              "def stalled(*args, **kwargs):  # the check of the staged model, in the scratch folder\n"
              "    pathlib.Path(sys.argv[1]).write_text('staged')\n"
              "    time.sleep(120)\n"
              "agents.export.OnnxPolicy = stalled\n"
              "from agents.cli import main\n"
              "sys.exit(main(sys.argv[2:]))\n")
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-c", script, str(ready), "export", str(ckpt), "--out", str(out),
                             "--name", "a", "--level", "test"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    def scratch_holds_the_export() -> None:
        assert sorted(p.name for p in out.glob(".export-*/*")) == ["a.manifest.json", "a.onnx"]

    err = signal_when(proc, ready.exists, "the export did not reach its check", check=scratch_holds_the_export)
    assert proc.returncode == 128 + signal.SIGTERM and err == "\nhalma export: stopped by SIGTERM\n", err
    assert not (tmp_path / "new").exists()  # the scratch folder, and the folders the export made


@pytest.mark.parametrize("under", [False, True])
def test_a_file_where_an_output_folder_goes_is_named_as_such(tmp_path: Path, capsys, under: bool) -> None:
    """mkdir's own words were the whole reason ("File exists" for a file at the folder's name, "Not a directory"
    for one above it): the message names the file that stands in the way, for each command's output folder."""
    from agents.cli import main
    from tests.opponent_helpers import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "s2.pt")
    blocker = tmp_path / "afile"
    blocker.write_text("a user's file")
    folder = blocker / "sub" if under else blocker
    commands = {
        "export": (["export", str(ckpt), "--level", "hard", "--out", str(folder)],
                   f"cannot write to the output directory {str(folder)!r}"),
        "eval": (["eval", "greedy", "random", "--games", "2", "--out", str(folder)],
                 f"cannot write --out {str(folder)!r}"),
        "train": (["train", "configs/quickstart.yaml", "--runs-dir", str(folder)],
                  f"cannot write the run directory {str(folder / 'quickstart')!r}"),
    }
    for name, (argv, what) in commands.items():
        assert main(argv) == 2, name
        assert capsys.readouterr().err == f"halma {name}: error: {what}: {str(blocker)!r} is a file, not a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "s2.pt"] and blocker.read_text() == "a user's file"
    # a link to nothing is no file: named as what it is
    dangling = tmp_path / "gone"
    dangling.symlink_to(tmp_path / "nowhere")
    assert main(["eval", "greedy", "random", "--games", "2", "--out", str(dangling)]) == 2
    assert capsys.readouterr().err == (f"halma eval: error: cannot write --out {str(dangling)!r}: {str(dangling)!r} is "
                                       f"a broken link (to {str(tmp_path / 'nowhere')!r}), not a directory\n")


@pytest.mark.parametrize("argv", [["train", "{long}.yaml"], ["eval", "{long}.pt", "random"],
                                  ["ladder", "--ladder", "{long}.json"]])
def test_a_file_name_past_the_system_s_limit_is_one_line_not_a_traceback(argv: list[str], tmp_path: Path,
                                                                         monkeypatch, capsys) -> None:
    """A name over 255 bytes raised OSError ENAMETOOLONG from wherever the command first touched it.  (A player's
    checkpoint that cannot be there is said so: os.path.exists finds no such file.)"""
    from agents.cli import main

    monkeypatch.chdir(tmp_path)
    long = "n" * 300
    assert main([a.format(long=long) for a in argv]) == 2
    err = capsys.readouterr().err
    if argv[0] == "eval":
        assert err == f"halma eval: error: cannot make player '{'n' * 49}... (str): checkpoint file '{'n' * 49}... " \
                      "(str) does not exist\n"
    else:
        kind = {"train": "config file", "ladder": "ladder file"}[argv[0]]
        assert err == f"halma {argv[0]}: error: {kind} '{'n' * 149}... (305 characters) cannot be looked up: " \
                      f"{os.strerror(errno.ENAMETOOLONG)}\n"
    assert len(err.splitlines()) == 1 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("load, error, kind", [
    ("agents.checkpoint:load_checkpoint", "agents.checkpoint:CheckpointError", "checkpoint"),
    ("agents.policy:load_policy_player", "agents.checkpoint:CheckpointError", "checkpoint"),
    ("agents.config:load_config", "builtins:ValueError", "config file"),
    ("agents.ladder:load_ladder", "agents.ladder:LadderError", "ladder file"),
])
def test_the_python_api_s_loaders_name_a_file_name_past_the_system_s_limit(load: str, error: str, kind: str,
                                                                           tmp_path: Path, monkeypatch) -> None:
    """load_checkpoint, load_config and load_ladder raised a bare OSError ENAMETOOLONG (Path.is_dir and
    Path.exists raise it on Python 3.11) that echoed the whole name: the CLI said it in one line, a notebook got
    a traceback outside the loader's own error.  Each now raises its own error, the name cut short."""
    import importlib

    def named(spec: str):
        module, name = spec.split(":")
        return getattr(importlib.import_module(module), name)

    monkeypatch.chdir(tmp_path)
    long = "n" * 300 + ".pt"
    with pytest.raises(named(error)) as raised:
        named(load)(long)
    assert str(raised.value) == f"{kind} '{'n' * 149}... (303 characters) cannot be looked up: " \
                                f"{os.strerror(errno.ENAMETOOLONG)}"
    assert list(tmp_path.iterdir()) == []


# --- what no_duplicate_keys, file_kind and read_regular_file return (pinned by mutation testing) ----------

def test_is_plain_int_takes_integers_not_bools_or_floats() -> None:
    """The one check of the counts read from manifests and checkpoints (it was written out in both modules)."""
    from agents.files import is_plain_int

    assert all(map(is_plain_int, (0, -3, 10**30)))
    assert not any(map(is_plain_int, (True, False, 1.0, "1", None, [1])))


def test_no_duplicate_keys_gives_back_the_object_it_read() -> None:
    """As ``json.loads``' object_pairs_hook, every object of a file without a repeated key loads as it
    would without the hook (nested objects too, order kept)."""
    text = '{"b": 1, "a": {"c": [1, {"d": null}], "e": "x"}, "f": {}}'
    loaded = json.loads(text, object_pairs_hook=no_duplicate_keys)
    assert loaded == json.loads(text) and list(loaded) == ["b", "a", "f"]


@pytest.mark.parametrize("text", ['{"a": "x\\ud800"}', '{"a": ["ok", "\\udc00y"]}', '{"\\ud800": 1}',
                                  '{"a": {"b": "\\udfff"}}'])
def test_a_lone_surrogate_is_not_text(text: str) -> None:
    """JSON lets ``"\\ud800"`` be written, but no UTF-8 file can hold it: a record or results.json that loaded
    one failed at its save or its table with UnicodeEncodeError (a fuzzing round)."""
    from halma_env.files import NotText

    with pytest.raises(NotText, match=r"^the string '.*\\ud[89a-f][0-9a-f]{2}.*' holds a lone surrogate"):
        json.loads(text, object_pairs_hook=no_duplicate_keys)
    assert json.loads('{"a": "\\ud83d\\ude00"}', object_pairs_hook=no_duplicate_keys) == {"a": "\U0001f600"}


def test_a_record_or_results_file_with_a_lone_surrogate_names_it(tmp_path: Path) -> None:
    from agents.arena import load_results
    from halma_env import Game
    from halma_env.records import GameRecord, RecordError, load_record

    game = Game()
    game.play(game.legal_moves()[0])
    record = tmp_path / "r.json"
    record.write_text(json.dumps({**GameRecord.from_game(game).to_dict(), "players": ["a\ud800", "b"]}))
    with pytest.raises(RecordError, match=r"^game record '.*r\.json': the string 'a\\ud800' holds a lone surrogate"):
        load_record(record)
    results = tmp_path / "results.json"
    results.write_bytes(b'{"players": ["random\xed\xa0\x80"]}')  # the surrogate UTF-8-encoded (json takes bytes so)
    with pytest.raises(ValueError, match=r"results\.json: not a halma eval results\.json \(the string "
                                         r"'random\\ud800' holds a lone surrogate"):
        load_results(str(results))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_file_kind_says_what_stands_there_and_nothing_for_a_regular_file(tmp_path: Path) -> None:
    """'' for a regular file (the callers test it for truth, and agents.opponent tells '' from None,
    "nothing there"), else the words that finish "... is <kind>, not a regular file"."""
    regular = tmp_path / "f"
    regular.write_text("x")
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s"))
        kinds = {name: file_kind(os.stat(tmp_path / name).st_mode) for name in ("f", "p", "s")}
    finally:
        sock.close()
    assert kinds == {"f": "", "p": "a FIFO", "s": "a socket"}
    assert file_kind(os.stat(tmp_path).st_mode) == "a directory"
    assert file_kind(os.stat(os.devnull).st_mode) == "a device"


def test_a_file_too_large_is_refused_with_its_size_before_it_is_read(tmp_path: Path) -> None:
    """A regular file larger than the bound is refused on its size as the open file states it (the
    message gives the whole size, not what a bounded read would have seen)."""
    from halma_env.files import FileTooLarge, read_regular_file

    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    with pytest.raises(FileTooLarge, match="holds 1000 bytes, more than 10") as caught:
        read_regular_file(big, 10)
    assert (caught.value.size, caught.value.limit) == (1000, 10)
    assert read_regular_file(big, 1000) == b"x" * 1000


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs a file that holds more than its size")
def test_a_file_that_holds_more_than_its_size_says_is_still_bounded() -> None:
    """The bound holds on what is read, not only on the size the file states: /proc/self/status is a
    regular file of size 0 that holds about a kilobyte (as a file that grows while it is read would)."""
    from halma_env.files import FileTooLarge, read_regular_file

    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(FileTooLarge, match="holds 11 bytes, more than 10") as caught:
        read_regular_file("/proc/self/status", 10)
    assert (caught.value.size, caught.value.limit) == (11, 10)  # one byte past the bound read, no more
    assert len(read_regular_file("/proc/self/status", 100_000)) > 10


def test_write_atomic_into_a_folder_that_is_not_there_is_an_error_naming_the_file(tmp_path: Path) -> None:
    """A temporary file that cannot be created (no such folder, a file where the folder should be) is the
    OSError of its kind naming the path asked for, at once (not a retry loop), and nothing is left."""
    from halma_env.files import write_atomic

    with pytest.raises(FileNotFoundError) as caught:
        write_atomic(tmp_path / "missing" / "x.json", "{}")
    assert caught.value.filename == str(tmp_path / "missing" / "x.json")
    (tmp_path / "a_file").write_text("")
    with pytest.raises(NotADirectoryError) as caught:
        write_atomic(tmp_path / "a_file" / "x.json", "{}")
    assert caught.value.filename == str(tmp_path / "a_file" / "x.json")
    assert sorted(os.listdir(tmp_path)) == ["a_file"]


def test_write_atomic_passes_on_what_is_no_oserror_and_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    """An interrupt while the file is written (Ctrl-C during the fsync), or data that is neither text nor
    bytes, reaches the caller as it was raised; the old file stays whole and no temporary file is left."""
    from halma_env import files
    from halma_env.files import write_atomic

    target = tmp_path / "state.json"
    write_atomic(target, "old")
    with pytest.raises(TypeError):
        write_atomic(target, 12345)  # type: ignore[arg-type]

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["state.json"]


def test_a_file_name_is_shown_as_typed_unless_it_holds_a_control_character_or_runs_long() -> None:
    assert shown_path("runs/my game.json") == "runs/my game.json"
    assert shown_path(Path("a") / "b.json") == "a/b.json"
    assert shown_path("a\x1b[31mb.json") == "'a\\x1b[31mb.json'"  # no escape sequence reaches the terminal
    assert shown_path("x" * 200) == "x" * 200
    long = shown_path("x" * 6000)
    assert long == f"'{'x' * 149}... (6000 characters)"
