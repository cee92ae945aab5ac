"""``halma eval`` stopped from outside or failing to write (agents/arena.py): its worker processes never outlive
it, Ctrl-C stops it without a worker's traceback, and ``--out`` holds either no result or a complete one."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import arena
from agents.cli import main as cli_main
from halma_env import Rules

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc process table")

ROOT = Path(__file__).resolve().parent.parent
GAMES = 5000  # far more than the seconds a test waits can play: the run is always stopped mid-way
TOURNAMENT = ("from agents.arena import run_tournament; from halma_env import Rules; "
              f"run_tournament(['greedy', 'random'], Rules('star', 2), {GAMES}, workers=2, progress=True)")
EVAL = ["-m", "agents.cli", "eval", "greedy", "random", "--games", str(GAMES), "--workers", "2"]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"  # a zombie has ended


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and int(stat[1]) == pid:
            found.append(int(entry.name))
    return found


def _wait_until_gone(pids: list[int], what: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while left := [pid for pid in pids if _alive(pid)]:
        assert time.monotonic() < deadline, f"{what}: {left}"
        time.sleep(0.1)


def _default_sigint() -> None:
    # a shell starts background jobs with SIGINT ignored: restore the default, as a terminal's Ctrl-C finds it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Run:
    """A command (``python ARGS``) in a process group of its own, its stderr collected (from a terminal, a
    pseudo-terminal's, for ``halma eval``: it draws its progress bar only there); ``stop()`` kills what is
    left of it and its processes, whatever a failed test left running."""

    def __init__(self, args: list[str]) -> None:
        if args is EVAL:
            import fcntl  # (POSIX only, as the whole file: imported here so that it is skipped elsewhere)
            import pty
            import struct
            import termios

            self.fd, terminal = pty.openpty()
            # 24 x 100 (a new one has no size: tqdm draws no bar on zero columns)
            fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        else:
            self.fd, terminal = os.pipe()
        self.process = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=terminal, start_new_session=True, preexec_fn=_default_sigint)
        os.close(terminal)
        self.err = b""
        self.pids: set[int] = set()  # the processes it started (workers, resource tracker), as seen
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: a pseudo-terminal's end once the command and its workers are gone
                return
            if not chunk:
                return
            self.err += chunk.replace(b"\r\n", b"\n")  # (a terminal ends its lines so)

    def wait_for(self, ready: Callable[[], bool], what: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not ready():
            self.pids.update(_children(self.process.pid))
            assert self.process.poll() is None, f"the command ended before {what}: {self.err.decode()[-2000:]}"
            assert time.monotonic() < deadline, f"no {what} after {seconds} s: {self.err.decode()[-2000:]}"
            time.sleep(0.05)
        self.pids.update(_children(self.process.pid))

    def workers(self) -> list[int]:
        self.pids.update(_children(self.process.pid))
        return [pid for pid in self.pids if b"spawn_main" in _cmdline(pid)]

    def games_played(self) -> int:
        counts = re.findall(rb"(\d+)/" + str(GAMES).encode(), self.err)  # the progress bar's "12/5000"
        return int(counts[-1]) if counts else 0

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        for pid in self.pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.reader.join(10)
        os.close(self.fd)


def _ignores_sigint(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.M).group(1), 16)  # type: ignore[union-attr]
    return bool(ignored >> (signal.SIGINT - 1) & 1)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize(("command", "how", "status"), [
    ("run_tournament", signal.SIGTERM, -signal.SIGTERM),  # SIGTERM's default action: the arena stops its workers
    ("run_tournament", signal.SIGKILL, -signal.SIGKILL),  # nothing runs in it: the workers see it gone
    ("halma eval", signal.SIGTERM, None),  # the command's own handling (an exception, or the default action)
    # a hangup is stopped as SIGTERM is, exit 129 (its default action ended the command at once: -1, the pool's
    # semaphores left in /dev/shm)
    ("halma eval", signal.SIGHUP, 128 + signal.SIGHUP),
])
def test_the_workers_end_with_the_process_that_started_them(command: str, how: int, status: int | None) -> None:
    """``kill`` (or ``kill -9``) of ``halma eval --workers 2`` left both workers and multiprocessing's resource
    tracker running under PID 1 for ever, blocked on a pipe."""
    run = _Run(["-c", TOURNAMENT] if command == "run_tournament" else EVAL)
    try:
        run.wait_for(lambda: len(run.workers()) == 2 and run.games_played() >= 1, "games played by 2 workers")
        started = sorted(run.pids)  # the workers and the resource tracker
        run.process.send_signal(how)
        code = run.process.wait(timeout=30)
        assert code in ((status,) if status is not None else (-signal.SIGTERM, 128 + signal.SIGTERM)), run.err
        _wait_until_gone(started, "processes outlived the arena")
    finally:
        run.stop()
    assert b"Traceback" not in run.err and b"leaked semaphore" not in run.err or how == signal.SIGKILL, run.err


class _Sleeper:
    name = "sleeper"

    def select_move(self, game: Any, time_budget: float | None = None) -> Any:
        time.sleep(120)


def one_slow_game(spec: str, seed: int | None = None) -> Any:
    """The factory of ``IDLE``: its players of game 1 wait before each move, so that the worker that played
    game 0 waits for a task meanwhile."""
    from agents.registry import make_player

    if seed in {arena.derive_seed(arena.derive_seed(0, 1), seat) for seat in (0, 1)}:
        return _Sleeper()
    return make_player(spec, seed)


IDLE = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from agents.arena import run_tournament; from halma_env import Rules; import tests.test_arena_signals as t; "
        "run_tournament(['random', 'random'], Rules('star', 2), 2, workers=2, progress=True, max_plies=20, "
        "factory=t.one_slow_game)")


@pytest.mark.parametrize("when", ["starting", "playing", "idle"])
def test_ctrl_c_stops_the_workers_without_their_tracebacks(when: str) -> None:
    """A terminal's Ctrl-C reaches every process of the group: a worker printed ``Process SpawnProcess-2:
    Traceback ... KeyboardInterrupt`` under ``halma eval: interrupted`` (one waiting for a task, ``idle``; or a
    traceback of its imports, ``starting``: Ctrl-C is held off until they ignore it).  The workers ignore it
    now, and the arena's process stops them."""
    run = _Run(["-c", IDLE] if when == "idle" else EVAL)
    try:
        if when == "starting":
            run.wait_for(lambda: len(run.workers()) == 2, "2 workers")
        else:  # (whether a worker's traceback makes it to the terminal before it is stopped is a race: the
            # workers are seen to ignore SIGINT first)
            played = (lambda: run.games_played() >= 1) if when == "playing" else (lambda: b"1/2 [" in run.err)
            run.wait_for(lambda: played() and len(workers := run.workers()) == 2 and all(map(_ignores_sigint, workers)),
                         "2 workers ignoring SIGINT", seconds=30)
        started = sorted(run.pids)
        os.killpg(run.process.pid, signal.SIGINT)
        assert run.process.wait(timeout=30) == (-signal.SIGINT if when == "idle" else 130), run.err
        _wait_until_gone(started, "processes outlived the arena")
        run.reader.join(10)
    finally:
        run.stop()
    err = run.err.decode()
    if when == "idle":  # the script's own KeyboardInterrupt, and nothing from a worker
        assert err.count("Traceback") == 1 and "SpawnProcess" not in err and err.endswith("KeyboardInterrupt\n"), err
    else:
        assert "halma eval: interrupted" in err and "Traceback" not in err and "KeyboardInterrupt" not in err, err


# --- the files of --out ---------------------------------------------------------------------------------------

SMALL = ["greedy", "random", "--games", "3", "--workers", "1", "--max-plies", "6", "--quiet"]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _full_disk(after: int) -> Callable[..., Any]:
    """A writer that writes ``after`` times, then fails as on a full disk."""
    calls = [0]

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def write(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(args[0]))
            return real(*args, **kwargs)

        return write

    return wrap


@pytest.mark.parametrize(("writer", "after"), [("_save_record", 1), ("write_atomic", 0), ("_write_json", 0)])
@pytest.mark.parametrize("solo", [False, True])
def test_a_full_disk_is_one_line_and_leaves_nothing_that_refuses_a_rerun(tmp_path, monkeypatch, capsys,
                                                                        writer: str, after: int, solo: bool) -> None:
    """It was an OSError traceback (exit 1) that left ``games/`` (and results.json when the records failed)
    behind, so that the rerun was refused as "already holds results"; the folders above --out that it made
    stayed, empty."""
    out = tmp_path / "made" / "here" / "out"
    argv = ["eval", *(["--solo", "greedy", "--games", "2", "--max-plies", "6"] if solo else SMALL), "--out", str(out)]
    monkeypatch.setattr(arena, writer, _full_disk(after)(getattr(arena, writer)))
    both = io.StringIO()  # stdout and stderr in the order written: the tables, then the error under them
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    assert cli_main(argv) == 2
    text = both.getvalue()
    assert text.endswith(f"\nhalma eval: error: cannot write {str(out)!r}: {os.strerror(errno.ENOSPC)}\n")
    assert "| greedy" in text and text.count("halma eval: error:") == 1
    assert _files(tmp_path) == []  # neither the folders --out made nor a staging folder beside or in it
    monkeypatch.undo()
    assert cli_main(argv) == 0
    marker = "solo.json" if solo else "results.json"
    assert json.loads((out / marker).read_text()) and len(list((out / "games").iterdir())) in (2, 3)


def test_a_save_into_a_folder_that_was_there_keeps_that_folder(tmp_path, monkeypatch) -> None:
    """An empty folder of the user's was replaced by the staging folder renamed over it: its permissions went
    (0700 became 0755), and ``halma eval --out .`` deleted the shell's working directory from under it."""
    res = arena.run_tournament(["greedy", "random"], Rules("star", 2), 2, max_plies=6, keep_records=True)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    before = private.stat()
    res.save(str(private), plot=False)
    after = private.stat()
    assert (after.st_ino, after.st_mode & 0o777) == (before.st_ino, 0o700)
    assert {"results.json", "results.md", "games/game_00000.json"} <= set(_files(private))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert cli_main(["eval", *SMALL, "--out", "."]) == 0
    assert Path(os.getcwd()).samefile(here) and "results.json" in _files(here)


def test_an_interrupted_save_leaves_no_result_and_the_folder_its_permissions(tmp_path, monkeypatch) -> None:
    """``save`` wrote results.json first, then games/: Ctrl-C or SIGTERM (raised) in between left a folder that
    looked complete."""
    res = arena.run_tournament(["greedy", "random"], Rules("star", 2), 3, max_plies=6, keep_records=True)

    def interrupted(path: str, record: Any) -> None:
        raise KeyboardInterrupt

    for out in (tmp_path / "new", tmp_path / "empty", tmp_path / "other"):  # renamed into place, or moved in
        if out.name != "new":
            out.mkdir()
        if out.name == "other":
            (out / "notes.txt").write_text("the user's")
        monkeypatch.setattr(arena, "_save_record", interrupted)
        with pytest.raises(KeyboardInterrupt):
            res.save(str(out))
        monkeypatch.undo()
        assert _files(tmp_path).count(out.name) == (out.name != "new")
        assert not out.exists() or _files(out) == ([] if out.name != "other" else ["notes.txt"])
        assert [Path(p).name for p in res.save(str(out), plot=False)][:2] == ["results.json", "results.md"]
        assert sorted(_files(out))[-2:] == ["results.json", "results.md"] and len(list(out.glob("games/*"))) == 3
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o777 & ~umask  # as mkdir makes it, not mkdtemp's 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "new", "other"]


def test_a_save_killed_outright_leaves_no_result_and_a_rerun_clears_its_staging_folder(tmp_path) -> None:
    """``kill -9`` mid-save: results.json (written first) and a part of games/ stayed, and the rerun was refused
    as "already holds results".  Now only a hidden staging folder stays, which the rerun removes."""
    out = tmp_path / "out"
    code = ("import os, signal, sys; from agents import arena, cli; real = arena._save_record\n"
            "def killed(path, record):\n"
            "    real(path, record)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "arena._save_record = killed\n"
            "sys.exit(cli.main(sys.argv[1:]))\n")
    argv = ["eval", *SMALL, "--out", str(out)]
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert _files(out) == []
    staging = [p.name for p in tmp_path.iterdir() if p.name != "out"]
    assert len(staging) == 1 and staging[0].startswith(".out.halma-partial-")
    assert cli_main(argv) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert json.loads((out / "results.json").read_text()) and len(list((out / "games").iterdir())) == 3
