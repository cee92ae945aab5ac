"""agents/staging.py (``halma eval --out``'s staged save, docs/evaluation.md "Output files") and agents/workers.py
(the arena's worker pool) on their own: tiny folders and fake processes, no games played."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agents import staging
from agents.staging import STAGING, save_staged


def _writer(files: dict[str, str], calls: list[str] | None = None):  # noqa: ANN202
    """A ``write(folder)`` for ``save_staged``: the files (``games/...`` in a subfolder), their names returned."""

    def write(folder: str) -> list[str]:
        if calls is not None:
            calls.append(folder)
        for name, text in files.items():
            Path(folder, name).parent.mkdir(parents=True, exist_ok=True)
            Path(folder, name).write_text(text)
        return list(files)

    return write


RESULT = {"results.json": "{}", "results.md": "# r", "games/game_00000.json": "{}"}


def _dead_pid() -> int:
    """The id of a process that has ended (one this test started and waited for)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_save_into_a_missing_folder_returns_the_paths_under_the_name_given(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = save_staged("out", _writer(RESULT), "results.json")
    assert paths == [os.path.join("out", name) for name in RESULT]  # as given: relative stays relative
    assert _tree(tmp_path) == sorted(f"out/{name}" for name in RESULT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder beside it


def test_a_folder_with_dot_dot_after_a_symlinked_folder_is_where_the_system_puts_it(tmp_path: Path) -> None:
    """abspath cut "link/.." out of the text: halma eval --out 'link/../evo' wrote into work/evo, not where the shell
    (and the OS) put link/../evo, while saying it wrote to the path given."""
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "real" / "deep")
    given = str(tmp_path / "work" / "link" / ".." / "evo")
    paths = save_staged(given, _writer(RESULT), "results.json")
    assert paths == [os.path.join(given, name) for name in RESULT] and all(os.path.isfile(p) for p in paths)
    assert _tree(tmp_path / "real" / "evo") == sorted(RESULT) and not (tmp_path / "work" / "evo").exists()


def test_staging_folders_of_ended_processes_are_removed_and_the_others_kept(tmp_path: Path) -> None:
    """A ``kill -9`` mid-save leaves its staging folder (beside DIR, or in DIR); the next save into the same
    place removes it, but never one of a process that still runs (this one, another, another user's) nor a
    folder of another name."""
    out = tmp_path / "out"
    out.mkdir()
    dead, me = _dead_pid(), os.getpid()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = [tmp_path / f".out.{STAGING}-{dead}-0a1b2c", out / f".{STAGING}-{dead}-ff00"]
        kept = [tmp_path / f".out.{STAGING}-{me}-0a1b2c", out / f".{STAGING}-{alive.pid}-abc",
                tmp_path / f".other.{STAGING}-{dead}-0a1b2c", out / f".{STAGING}-{dead}-notes",
                out / f"{STAGING}-{dead}-ff00"]
        for folder in stale + kept:
            folder.mkdir()
            (folder / "results.json").write_text("{}")
        save_staged(str(out), _writer(RESULT), "results.json")
        assert [f.exists() for f in stale] == [False, False]
        assert all(f.is_dir() for f in kept)
        assert alive.poll() is None  # only asked whether it runs (signal 0), not signalled
    finally:
        alive.kill()
        alive.wait()
    assert {"results.json", "results.md", "games/game_00000.json"} <= set(_tree(out))


def test_a_process_of_another_user_counts_as_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its id cannot be signalled (EPERM): its staging folder, maybe of a save under way, stays."""
    theirs = tmp_path / f".out.{STAGING}-4242-0a1b2c"
    theirs.mkdir()

    def kill(pid: int, signum: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(staging.os, "kill", kill)
    save_staged(str(tmp_path / "out"), _writer(RESULT), "results.json")
    assert theirs.is_dir()


def test_a_move_into_an_existing_folder_cut_short_leaves_no_marker(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a folder that exists the files are moved one by one, the marker (``results.json``) last: a save
    interrupted between two moves never leaves a result that looks complete; ``games/`` is merged into the one
    there."""
    out = tmp_path / "out"
    (out / "games").mkdir(parents=True)
    (out / "games" / "mine.txt").write_text("the user's")
    files = {"results.json": "{}", "a.md": "", "games/game_00000.json": "{}", "z.md": ""}
    real = os.replace
    moved: list[str] = []

    def replace(src: str, dst: str) -> None:
        if len(moved) == 3:
            raise KeyboardInterrupt
        moved.append(os.path.basename(dst))
        real(src, dst)

    monkeypatch.setattr(staging.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        save_staged(str(out), _writer(files), "results.json")
    assert not (out / "results.json").exists() and "results.json" not in moved
    monkeypatch.undo()
    save_staged(str(out), _writer(files), "results.json")
    assert _tree(out) == ["a.md", "games/game_00000.json", "games/mine.txt", "results.json", "z.md"]


def test_a_folder_made_in_the_place_meanwhile_gets_the_files_moved_in(tmp_path: Path) -> None:
    """The rename of the staging folder into DIR fails when a folder appeared there meanwhile: the result is then
    written again in DIR and moved in, the other files kept, and no staging folder stays."""
    out = tmp_path / "out"
    calls: list[str] = []
    write = _writer(RESULT, calls)

    def racing(folder: str) -> list[str]:
        if not calls:  # another process makes DIR while this one writes beside it
            out.mkdir()
            (out / "notes.txt").write_text("theirs")
        return write(folder)

    paths = save_staged(str(out), racing, "results.json")
    assert paths == [str(out / name) for name in RESULT] and len(calls) == 2
    assert _tree(tmp_path) == sorted(["out/notes.txt", *(f"out/{name}" for name in RESULT)])
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and not list(out.glob(".*"))


@pytest.mark.parametrize("there", [False, True])
def test_the_writes_own_error_reaches_the_caller_even_when_the_staging_folder_is_gone(tmp_path: Path,
                                                                                      there: bool) -> None:
    """The staging folder's removal after a failed write is a clean-up, not a second error: the write's own
    (the full disk that ``halma eval`` reports in one line) is the one raised, whether the staging folder is
    beside DIR (``there`` False) or in it, and even when that folder cannot be removed (gone already)."""
    import errno
    import shutil

    out = tmp_path / "out"
    if there:
        out.mkdir()

    def write(folder: str) -> list[str]:
        shutil.rmtree(folder)  # (whatever made it unremovable)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OSError) as caught:
        save_staged(str(out), write, "results.json")
    assert caught.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if there else []) and not list(out.glob("*"))


# --- agents/workers.py ---------------------------------------------------------------------------------------

needs_posix_signals = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")


def _sleeper(ignore_sigterm: bool, ready: Any) -> None:  # a worker process's stand-in (fork: top level)
    if ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(60)


@needs_posix_signals
def test_stopping_workers_terminates_them_and_kills_only_those_past_the_grace_period() -> None:
    """``_stop_workers``: SIGTERM first, then SIGKILL to a worker still there after ``grace_s`` (not before:
    a worker that ends on SIGTERM is not killed; not much after: the run's end waits on it)."""
    import multiprocessing

    from agents.workers import _stop_workers

    ctx = multiprocessing.get_context("fork")
    ready = [ctx.Event(), ctx.Event()]
    started = [ctx.Process(target=_sleeper, args=(stubborn, r), daemon=True)
               for stubborn, r in zip((False, True), ready, strict=True)]
    for p in started:
        p.start()
    assert all(r.wait(30) for r in ready)  # the stubborn one ignores SIGTERM by now
    try:
        begun = time.monotonic()
        _stop_workers(started, grace_s=0.5)
        took = time.monotonic() - begun
        for p in started:
            p.join(5)
        assert [p.exitcode for p in started] == [-signal.SIGTERM, -signal.SIGKILL]
        assert 0.45 <= took < 10, took  # (the upper bound only says it is not left to hang: a loaded CI machine)
        obedient_ready = ctx.Event()
        obedient = ctx.Process(target=_sleeper, args=(False, obedient_ready), daemon=True)
        obedient.start()
        assert obedient_ready.wait(30)
        begun = time.monotonic()
        _stop_workers([obedient], grace_s=30)  # its end is waited for, not the whole grace period
        assert time.monotonic() - begun < 10 and obedient.exitcode in (None, -signal.SIGTERM)
        obedient.join(5)
        assert obedient.exitcode == -signal.SIGTERM
    finally:
        for p in started:
            if p.is_alive():
                p.kill()


class _Pool:
    """ProcessPoolExecutor played in this process: counts the games submitted and not yet given back."""

    def __init__(self, workers: int, mp_context: Any = None, initializer: Any = None, initargs: tuple = ()) -> None:
        self.pending = 0
        self.most = 0
        self.shutdowns: list[bool] = []

    def submit(self, f: Any, task: Any) -> Any:
        from concurrent.futures import Future

        future: Future[Any] = Future()
        future.set_result(f(task))
        self.pending += 1
        self.most = max(self.most, self.pending)
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.shutdowns.append(wait)


def test_every_task_runs_once_with_a_few_queued_not_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_in_processes`` yields each task's result once; it keeps the workers busy with a few games queued
    beyond those played (twice the workers), not all of them (a wait on thousands of futures is O(games))."""
    import concurrent.futures

    from agents.workers import run_in_processes

    pools: list[_Pool] = []

    def make(*args: Any, **kwargs: Any) -> _Pool:
        pools.append(_Pool(*args, **kwargs))
        return pools[-1]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", make)
    results = []
    for result in run_in_processes(abs, [-n for n in range(20)], 2):
        pools[0].pending -= 1
        results.append(result)
    assert sorted(results) == list(range(20)) and pools[0].most == 4
    assert pools[0].shutdowns == [True]  # all played: the pool ends as it does, its workers waited for


def test_on_an_error_the_pool_is_shut_down_without_waiting_for_its_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """"On an error or Ctrl-C the games still running are stopped, not waited for" (``run_in_processes``)."""
    import concurrent.futures

    from agents.workers import run_in_processes

    pools: list[_Pool] = []

    def make(*args: Any, **kwargs: Any) -> _Pool:
        pools.append(_Pool(*args, **kwargs))
        return pools[-1]

    def fails(task: int) -> int:
        if task == 5:
            raise RuntimeError("a bot's bug")
        return task

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", make)
    with pytest.raises(RuntimeError, match="a bot's bug"):
        list(run_in_processes(fails, list(range(20)), 2))
    assert pools[0].shutdowns == [False]


@needs_posix_signals
def test_a_sigterm_with_its_default_action_gets_a_handler_while_the_workers_run() -> None:
    """``_sigterm_stops_workers``: in the main thread, with SIGTERM's default action (which would end the process
    without a ``finally``), a handler that stops the workers first, and the default action back after; a
    handler of someone else's is left in place; in another thread (where none can be set) nothing changes."""
    import threading

    from agents.workers import _sigterm_stops_workers

    before = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with _sigterm_stops_workers(list):
            assert callable(signal.getsignal(signal.SIGTERM))
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

        def theirs(signum: int, frame: Any) -> None:
            raise SystemExit(143)

        signal.signal(signal.SIGTERM, theirs)
        with _sigterm_stops_workers(list):
            assert signal.getsignal(signal.SIGTERM) is theirs
        assert signal.getsignal(signal.SIGTERM) is theirs
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        seen: list[Any] = []

        def elsewhere() -> None:
            try:
                with _sigterm_stops_workers(list):
                    seen.append(signal.getsignal(signal.SIGTERM))
            except Exception as exc:  # noqa: BLE001
                seen.append(exc)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(10)
        assert seen == [signal.SIG_DFL]
    finally:
        signal.signal(signal.SIGTERM, before)


@needs_posix_signals
def test_ctrl_c_and_hangups_are_blocked_while_the_workers_start_and_not_after() -> None:
    from agents.workers import _group_signals_blocked

    group = {signal.SIGINT, signal.SIGHUP}  # (a hangup, too, reaches the workers as they start)
    assert not group & signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with _group_signals_blocked():
        assert group <= signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert not group & signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_held_signals_are_handled_on_leaving_the_block_not_inside_it() -> None:
    """``_HeldSignals``: Ctrl-C inside the block raises its ``KeyboardInterrupt`` only when the block is left
    (twice: once); the handlers are back after."""
    from agents.workers import _HeldSignals

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # (as in a terminal's python)
    try:
        held = _HeldSignals()
        reached = []
        with pytest.raises(KeyboardInterrupt):
            with held:
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGINT)
                reached.append("end of the block")
        assert reached == ["end of the block"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with held:  # entered again: nothing left over from the first time
            pass
    finally:
        signal.signal(signal.SIGINT, before)


_TIE = ("import os, signal, sys, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as the pool starts a worker\n"
        "from agents.workers import _tie_to_parent\n"
        "_tie_to_parent(int(sys.argv[1]))\n"
        "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, signal.getsignal(signal.SIGHUP) is signal.SIG_IGN, "
        "signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), flush=True)\n")


@needs_posix_signals
def test_a_worker_ignores_ctrl_c_and_ends_at_once_when_its_parent_is_gone() -> None:
    """``_tie_to_parent``: Ctrl-C ignored, no longer blocked; the parent watched by a daemon thread, which does
    not keep the worker from ending; a parent gone already ends the worker at once, with a failure status."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    tied = subprocess.run([sys.executable, "-c", _TIE, str(os.getpid())], capture_output=True, text=True, env=env,
                          cwd=root, timeout=30)
    assert (tied.returncode, tied.stdout) == (0, "True True False\n"), tied.stderr[-2000:]
    orphan = subprocess.run([sys.executable, "-c", _TIE, str(_dead_pid())], capture_output=True, text=True, env=env,
                            cwd=root, timeout=30)
    assert orphan.returncode != 0 and orphan.stdout == "", orphan.stderr[-2000:]
