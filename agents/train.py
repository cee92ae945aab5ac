"""``halma train CONFIG``: self-play PPO from a YAML config (docs/training.md), and ``halma bench train``.

The run directory ``<runs-dir>/<name>/`` receives ``config.yaml`` (the resolved config),
``tb/`` (TensorBoard), ``checkpoints/`` (``last.pt`` with optimizer and RNG state, numbered
model checkpoints), ``snapshots/`` (the opponent pool), ``eval.jsonl`` (evaluations during
training) and ``final_eval.json``/``final_eval.md`` (the closing evaluation table).  The runs
directory itself keeps the planner's crossing lines in ``.crossing_cache/``, read back by the runs
that follow (docs/training.md, "The planner's crossing").
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agents.config import load_config, shipped_config_names
from agents.files import (
    folder_error,
    is_terminal_device,
    is_write_failure,
    say_on_stderr,
    stderr_is_terminal,
    terminal_output_to_devnull,
    to_devnull,
)
from agents.interrupts import SIGHUP, Terminated

CROSSING_CACHE = ".crossing_cache"  # in the runs directory: the planner's crossing lines, shared by its runs
DEFAULT_RUNS_DIR = "runs"
# the flags that only act on a run (--print-config refuses them)
RUN_FLAGS = ("device", "resume", "no_final_eval", "quiet")


def add_arguments(p: argparse.ArgumentParser) -> None:
    shipped = ", ".join(shipped_config_names())
    p.add_argument("config", help=f"a YAML config file, or a shipped config's name: {shipped} (configs/NAME.yaml "
                                  "in the source tree)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, dotted for nested keys (ppo.learning_rate=1e-4); repeatable")
    p.add_argument("--device", default=None, help="torch device (default: the config's, cpu); e.g. cuda")
    p.add_argument("--resume", action="store_true", help="continue the run from <run dir>/checkpoints/last.pt")
    p.add_argument("--runs-dir", default=DEFAULT_RUNS_DIR, help="parent of the run directory (default runs/)")
    p.add_argument("--no-final-eval", action="store_true", help="skip the closing evaluation")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar, status lines only (as when stderr is not a terminal; this run only: the "
                        "stored config keeps log.progress_bar)")
    p.add_argument("--print-config", action="store_true",
                   help="print the resolved config (every key, after --set) as the run's config.yaml would hold "
                        "it, and exit: nothing is trained or written")


def final_table(results: dict[str, Any], opponents: list[str], games: int) -> str:
    """The closing evaluation as a markdown table."""
    lines = ["| opponent | games | win rate | mean place (agent / opponents) | agent finished | games decided "
             "| mean length (plies) |", "|---|---|---|---|---|---|---|"]
    for opp in opponents:
        r = results[opp]
        places = f"{r['mean_place']:.2f} / {r['opponent_mean_place']:.2f}"
        lines.append(f"| {opp} | {games} | {r['win_rate']:.1%} | {places} | {r['finish_rate']:.1%} | "
                     f"{r['decided_rate']:.1%} | {r['mean_length']:.0f} |")
    if "solo" in results:
        solo = results["solo"]
        lines.append(f"\nsolitaire crossing, policy alone: {solo['moves']:.0f} moves"
                     + ("" if solo["finished"] else " (unfinished at eval.move_limit)") + "; the optimum is 27")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config, args.overrides)
    except ValueError as exc:
        print(f"halma train: error: {exc}", file=sys.stderr)
        return 2
    if args.runs_dir == "":  # Path("") is the working directory: a run would train into ./NAME
        print("halma train: error: --runs-dir needs a directory, got ''", file=sys.stderr)
        return 2
    if args.print_config:
        from agents.cli import flags_given
        from agents.config import dump_yaml

        given = flags_given(args, RUN_FLAGS) + (["--runs-dir"] if args.runs_dir != DEFAULT_RUNS_DIR else [])
        if given:
            print(f"halma train: error: --print-config trains nothing, so {', '.join(given)} would do nothing: drop "
                  f"{'them' if len(given) > 1 else 'it'}", file=sys.stderr)
            return 2
        print(dump_yaml(cfg), end="")
        return 0
    cores = os.cpu_count()
    if cores is not None and cfg.processes > cores:
        print(f"halma train: warning: processes: {cfg.processes} is more than this machine's {cores} CPU cores "
              "(the processes will share them, each slower)", file=sys.stderr)
    # at once, not after torch's import (the Trainer checks again, under the run's lock); a run directory another
    # halma train holds first: what it holds is that run's, not one to remove or resume
    from agents.run_dir import new_run_dir_problem, run_in_use_problem

    run_dir = Path(args.runs_dir) / cfg.name
    try:
        problem = run_in_use_problem(run_dir) or (None if args.resume else new_run_dir_problem(run_dir))
    except OSError:  # an unreadable place: the Trainer's own checks say so, in one line
        problem = None
    if problem is not None:
        print(f"halma train: error: {problem}", file=sys.stderr)
        return 2
    # the closing evaluation needs no tensorboard, but the run's first files would be written before the
    # import of its SummaryWriter fails, and a second attempt would be refused as a run without a checkpoint
    import torch  # noqa: F401

    if cfg.log.tensorboard:
        import tensorboard  # noqa: F401
    try:
        if cfg.processes > 1:
            from torch.multiprocessing import ProcessExitedException, ProcessRaisedException

            from agents.parallel import spawn

            try:
                return spawn(train_and_evaluate, cfg.processes, cfg, args)
            except ProcessExitedException as exc:  # killed by a signal (the OOM killer): no traceback to show
                say_on_stderr(f"halma train: error: {exc.msg}; {resume_hint(cfg, args)}")
                return 1  # as for a crash
            except ProcessRaisedException as exc:
                cannot = _run_error_in(exc.msg)
                if cannot is None:
                    raise
                say_on_stderr(f"halma train: error: {cannot}; {resume_hint(cfg, args)}")
                return 2
        return train_and_evaluate(0, 1, cfg, args)
    except KeyboardInterrupt as exc:  # outside the updates (the start), a second Ctrl-C, or processes > 1
        # SIGTERM comes here too (agents.interrupts.Terminated), with the shell's status
        signum = int(getattr(exc, "signum", signal.SIGINT))
        what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
        say_on_stderr(f"\nhalma train: {what}; {resume_hint(cfg, args)}")
        return 128 + signum


def resume_command(args: argparse.Namespace) -> str:
    """The command line that continues the run ``args`` started (its config, overrides and runs directory)."""
    words = ["halma", "train", not_a_flag(args.config), "--resume"]
    for item in args.overrides:
        words += ["--set", item]
    if args.runs_dir != DEFAULT_RUNS_DIR:
        words += ["--runs-dir", not_a_flag(args.runs_dir)]
    if args.device is not None:
        words += ["--device", args.device]
    for flag in ("no_final_eval", "quiet"):  # run flags the run was started with, kept for its continuation
        if getattr(args, flag, False):
            words.append("--" + flag.replace("_", "-"))
    return shell_join(words)


def not_a_flag(path: str) -> str:
    """A relative path as a command line may give it: ``./-cfg.yaml`` for ``-cfg.yaml``, which the printed command
    would otherwise pass as a flag (quoting does not help: the shell removes the quotes)."""
    return f"./{path}" if path.startswith("-") else path


def shell_join(words: list[str], windows: bool | None = None) -> str:
    """A command line to paste into the shell: POSIX quoting, or cmd.exe's on Windows (``windows``: the
    platform's by default), where single quotes are not quotes."""
    import subprocess

    if sys.platform == "win32" if windows is None else windows:
        # list2cmdline quotes only blanks; cmd.exe also splits at & | < > ^ outside quotes
        return " ".join(f'"{w}"' if any(c in w for c in '&|<>^()') and '"' not in w else subprocess.list2cmdline([w])
                        for w in words)
    return shlex.join(words)


def cross_check_command(checkpoint: Path, cfg: Any) -> str:
    """The ``halma eval`` command that plays the closing evaluation's game in the arena: the first final
    opponent, the config's game with its rule options (those that differ from the variant's defaults;
    not the training move limit, which evaluation games do not have) and eval.move_limit as the cap."""
    from agents.arena import CAP_PER_SEAT
    from halma_env import Rules

    game = cfg.game
    words = ["halma", "eval", not_a_flag(str(checkpoint)), *cfg.eval.final_opponents[:1],
             "--variant", game.variant, "--seats", str(game.num_players)]
    ours, default = game.rules().to_dict(), Rules(game.variant, game.num_players).to_dict()
    for name in ("anti_blocking", "play_to_end", "stall_limit", "repetition_limit"):
        if ours[name] != default[name]:
            value = ours[name]
            written = "none" if value is None else str(value).lower() if isinstance(value, bool) else value
            words += ["--rule", f"{name}={written}"]
    if cfg.eval.move_limit != CAP_PER_SEAT * game.num_players:
        words += ["--max-plies", str(cfg.eval.move_limit)]
    return shell_join([*words, "--games", "100"])


def resume_hint(cfg: Any, args: argparse.Namespace) -> str:
    """Where an interrupted run stands on disk and how to continue it."""
    ckpt = Path(args.runs_dir) / cfg.name / "checkpoints" / "last.pt"
    run_dir = ckpt.parent.parent
    if not ckpt.exists():
        start_over = (f"remove {shlex.quote(not_a_flag(str(run_dir)))} (or choose another --set name=NAME) and run the "
                      "same command again"
                      if run_dir.exists() else "run the same command again")  # interrupted before the run made it
        return (f"no checkpoint was written yet (the first comes after checkpoint.every={cfg.checkpoint.every} "
                f"updates), so there is nothing to resume: {start_over} to start over")
    # several processes: the interrupted one may have been in the final evaluation, which process 0 runs alone
    then = " (which trains on from there or, if training had finished, runs the final evaluation)" \
        if cfg.processes > 1 and _final_eval_wanted(cfg, args) else ""
    return (f"the last checkpoint is {ckpt} (written every checkpoint.every={cfg.checkpoint.every} updates); "
            f"continue with: {resume_command(args)}{then}")


class _GracefulInterrupt:
    """The first SIGINT (Ctrl-C), SIGTERM (``kill``, a job scheduler) or SIGHUP (the terminal or the ssh session of a
    run started with ``&`` closed) asks the run to stop after the update in progress (``signum``: which), as does
    stdout's reader going away (``output.reader_gone``); a second SIGINT or SIGTERM interrupts at once
    (``KeyboardInterrupt``, or ``Terminated``).  A SIGHUP never does: one closed terminal can send two (the shell
    passes one on, the kernel sends another), and a terminal closed while the stop it was asked for saves the
    checkpoint is no request to lose it; it sends the terminal's output to /dev/null.  Installed only in the main
    thread of a single process."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, *((SIGHUP,) if SIGHUP is not None else ()))

    def __init__(self, output: _Output | None = None) -> None:
        self.signum: int | None = None
        self.output = output
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None or (self.output is not None and self.output.reader_gone)

    @property
    def _installed(self) -> bool:
        return bool(self._previous)

    def __enter__(self) -> _GracefulInterrupt:
        if threading.current_thread() is threading.main_thread():
            # a signal the run was started with ignored stays ignored: nohup's SIGHUP, and SIGINT of a job a
            # script started with & (replaced, nohup halma train ... & stopped at the first hangup)
            self._previous = {signum: signal.signal(signum, self._handle) for signum in self.SIGNALS
                              if signal.getsignal(signum) is not signal.SIG_IGN}
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in reversed(self._previous.items()):  # None: set outside Python; back to the default
            default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, default if previous is None else previous)

    def _handle(self, signum: int, frame: Any) -> None:
        hangup = signum == SIGHUP
        if hangup:
            terminal_output_to_devnull()
        if self.signum is not None:
            if hangup:
                return
            raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)
        self.signum = signum
        what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
        say_on_stderr(f"\nhalma train: {what}: stopping after this update and saving a checkpoint (Ctrl-C again to "
                      "stop at once, losing the updates since the last checkpoint)")


class _Output:
    """halma train's lines on stdout, which a reader that went away must not cost the run its checkpoint:

    - a terminal that hung up fails every write (EIO), before the SIGHUP that follows reaches the run (the shell
      passes it on; a run that ignores it gets none): its output goes to /dev/null and training goes on (the
      line stopped the run as a full disk, without its checkpoint);
    - a closed pipe (``| head``, or a ``| tee`` that the same Ctrl-C ended) fails with EPIPE: stdout goes to
      /dev/null and ``reader_gone`` asks the run to stop after the update with its checkpoint, as Ctrl-C does.

    Other failures (a full disk) are raised, for the run to stop on."""

    def __init__(self) -> None:
        self.reader_gone = False

    def line(self, text: str) -> None:
        try:
            print(text, flush=True)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                to_devnull(1)
                self.reader_gone = True
            elif exc.errno == errno.EIO and is_terminal_device(1):
                terminal_output_to_devnull()
            else:
                raise _StdoutFailed(exc.errno, exc.strerror) from exc


class _StdoutFailed(OSError):
    """A line that stdout could not take (``> log`` on a full disk): the error line names stdout, not the run
    directory."""


class RunError(Exception):
    """A run stopped for a reason of its own in a process of several (a write of process 0 failed: a full disk;
    the training diverged): what ``run`` says, with the resume hint (``_run_error_in`` finds it in the
    process's traceback)."""


def _run_error_in(message: str) -> str | None:
    """What ``RunError`` said, from the traceback a failed process left (``ProcessRaisedException.msg``),
    or None when it ended by another error."""
    lines = message.rstrip().splitlines()
    prefix = f"{RunError.__module__}.{RunError.__qualname__}: "
    return lines[-1][len(prefix):] if lines and lines[-1].startswith(prefix) else None


def _cannot_write(exc: OSError, run_dir: Path) -> str:
    """A write that failed (a full disk: ENOSPC), for the error line."""
    where = ("the standard output" if isinstance(exc, _StdoutFailed) else repr(str(exc.filename)) if exc.filename
             else f"the run directory {str(run_dir)!r}")
    return f"cannot write {where}: {exc.strerror or exc}"


def _trim_eval_log(path: Path, size: int | None = None) -> None:
    """After a failed write: ``eval.jsonl`` back to ``size`` bytes (its size before the closing evaluation, 0 if
    it was not there), or (None) without a line cut short at its end; removed when nothing is left of it
    (``open(..., "a")`` had made it before the write failed)."""
    try:
        data = path.read_bytes()
        kept = data.rfind(b"\n") + 1 if size is None else min(size, len(data))
        if kept == 0:
            path.unlink()
        elif kept < len(data):
            os.truncate(path, kept)
    except OSError:  # not there, or this cannot be done either: a --resume drops what is past its checkpoint
        pass


def train_and_evaluate(rank: int, world_size: int, cfg: Any, args: argparse.Namespace) -> int:
    """Train (in process ``rank`` of ``world_size``), then, in process 0, the closing evaluation."""
    from agents import parallel
    from agents.ppo import Trainer, keep_freed_memory

    keep_freed_memory()  # (this command's process: the update's tensors reused, not faulted in again)
    run_dir = Path(args.runs_dir) / cfg.name
    t0 = time.time()
    error = None
    trainer = None
    output = _Output()
    try:
        trainer = Trainer(cfg, run_dir, device=args.device, resume=args.resume, rank=rank, world_size=world_size,
                          crossing_cache=Path(args.runs_dir) / CROSSING_CACHE, lock_run_dir=True,
                          quiet=args.quiet or not stderr_is_terminal(),  # a bar only on a terminal
                          log=output.line)
    except ValueError as exc:
        error = str(exc)
    except OSError as exc:  # an unwritable --runs-dir, or a file in its place
        error = f"cannot write the run directory {str(run_dir)!r}: {folder_error(exc, run_dir)}"
    errors = [e for e in parallel.gather(error) if e is not None]  # all processes stop if one cannot start
    if errors or trainer is None:
        if trainer is not None:  # this one started, another did not: its log and lock go now
            trainer.close()
            trainer.run_lock.close()
        if rank == 0:
            say_on_stderr(f"halma train: error: {errors[0]}")
        return 2
    with trainer.run_lock:  # held to the end of the closing evaluation
        return _train_and_evaluate(trainer, rank, world_size, cfg, args, t0, output)


def _train_and_evaluate(trainer: Any, rank: int, world_size: int, cfg: Any, args: argparse.Namespace,
                        t0: float, output: _Output) -> int:
    from agents.network import Diverged

    run_dir = Path(args.runs_dir) / cfg.name
    main = rank == 0
    ckpt = run_dir / "checkpoints" / "last.pt"
    if trainer.finished:  # only a resumed run can be there already
        trainer.close()
        if not main:
            return 0
        if trainer.global_step >= cfg.ppo.total_steps:
            end = f"the end of ppo.total_steps={cfg.ppo.total_steps}"
        else:  # no whole rollout fits before it
            end = f"the last whole rollout ({cfg.rollout_steps} steps) before ppo.total_steps={cfg.ppo.total_steps}"
        at = f"{ckpt} is at update {trainer.update} ({trainer.global_step} steps), {end}"
        if not _final_eval_wanted(cfg, args) or _final_eval_written(run_dir, trainer.global_step):
            say_on_stderr(f"halma train: nothing to do: {at}; raise it with --set ppo.total_steps=N to train on")
            return 0
        # training finished, its final evaluation did not (interrupted, or a crash): that is what is left
        say_on_stderr(f"halma train: {at}, but the run has no final evaluation of it: running it now")
        return _final_evaluation(trainer, world_size, cfg, args, t0, output)
    start_step = trainer.global_step
    try:
        if main:  # (its failure, > /dev/full, is said with the resume hint: the run directory is made already)
            on = f"{trainer.device}" + (f", {world_size} processes" if world_size > 1 else "")
            # (steps are trained in whole updates: a total they do not divide is not met exactly, and says so)
            end = trainer.end_step
            ends = "" if end == cfg.ppo.total_steps else (
                f"; it ends at step {end}, in whole updates of {trainer.batch_steps} steps "
                f"(ppo.total_steps={cfg.ppo.total_steps})")
            output.line(f"training {cfg.game.variant} {cfg.game.num_players} seats -> {run_dir} on {on}{ends}")
        if world_size == 1:
            with _GracefulInterrupt(output) as interrupt:
                try:
                    trainer.train(stop=lambda: interrupt.requested)
                finally:
                    trainer.close()
                if interrupt.requested:  # (the handlers still in place: a hangup during the save costs nothing)
                    trainer.save()  # the update that finished last (a second time if its checkpoint was just written)
                    why = "" if interrupt.signum is not None else "the standard output's reader went away: "
                    say_on_stderr(f"halma train: {why}stopped at update {trainer.update} ({trainer.global_step} "
                                  f"steps); checkpoint {ckpt}; continue with: {resume_command(args)}")
                    return 1 if interrupt.signum is None else 128 + interrupt.signum  # (1: cli's for a closed pipe)
        else:
            try:
                trainer.train()
            finally:
                trainer.close()
    except Diverged as exc:  # nothing of the step was written: last.pt is the last finite checkpoint
        if world_size > 1:  # run says it, with the resume hint
            raise RunError(str(exc)) from None
        say_on_stderr(f"halma train: error: {exc}; {resume_hint(cfg, args)}, with a change such as --set "
                      f"{exc.setting}=... (the same settings diverge the same way)")
        return 2
    except OSError as exc:  # a full disk: a checkpoint is written whole or not at all, so last.pt is the last one
        if not is_write_failure(exc):  # (a closed stdout is cli's; a missing file to read, a bug: a traceback)
            raise
        if main:  # (the only one that writes)
            _trim_eval_log(run_dir / "eval.jsonl")
        cannot = _cannot_write(exc, run_dir)
        if world_size > 1:  # run says it, with the resume hint
            raise RunError(cannot) from None
        say_on_stderr(f"halma train: error: {cannot}; {resume_hint(cfg, args)}")
        return 2
    if not main:
        return 0
    train_time = time.time() - t0
    session = f" ({trainer.global_step - start_step} of them now)" if start_step else ""
    output.line(f"trained {trainer.global_step} steps{session} in {train_time:.0f} s; checkpoint {ckpt}")
    return _final_evaluation(trainer, world_size, cfg, args, t0, output)


def _final_eval_wanted(cfg: Any, args: argparse.Namespace) -> bool:
    return bool(not args.no_final_eval and cfg.eval.final_games and cfg.eval.final_opponents)


def _final_eval_written(run_dir: Path, global_step: int) -> bool:
    """Whether the run directory holds the final evaluation of the checkpoint at ``global_step`` (one of an
    earlier session that a resume trained on from does not count)."""
    try:
        res = json.loads((run_dir / "final_eval.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(res, dict) and res.get("global_step") == global_step and (run_dir / "final_eval.md").is_file()


def _final_evaluation(trainer: Any, world_size: int, cfg: Any, args: argparse.Namespace, t0: float,
                      output: _Output) -> int:
    """The closing evaluation (process 0, after ``trainer.close()``): final_eval.json/md, eval.jsonl and the
    table printed; not TensorBoard, whose writer is closed (it would open a second event file, and give eval/*
    a second point at the last step)."""
    run_dir = Path(args.runs_dir) / cfg.name
    ckpt = run_dir / "checkpoints" / "last.pt"
    if _final_eval_wanted(cfg, args):
        # the greedy policy alone, all games side by side (one batched forward per ply), rules without a
        # move limit and a cap of eval.move_limit plies counted as a draw, like `halma eval`'s default
        from agents.run_dir import drop_final_evaluation
        from halma_env.files import write_atomic

        t1 = time.time()
        eval_log = run_dir / "eval.jsonl"
        drop_final_evaluation(run_dir, trainer.global_step)  # one a SIGKILL left while it wrote the table
        size = eval_log.stat().st_size if eval_log.is_file() else 0
        complete = (f"training is complete ({ckpt} is at update {trainer.update}, {trainer.global_step} steps); "
                    f"run the final evaluation with: {resume_command(args)}")
        try:
            res = trainer.run_evaluation(cfg.eval.final_opponents, cfg.eval.final_games, final=True)
            table = final_table(res, cfg.eval.final_opponents, cfg.eval.final_games)
            # whole files or none; the table first: --resume takes a final_eval.json of this step beside a
            # final_eval.md for the run's final evaluation, done
            write_atomic(run_dir / "final_eval.md", table + "\n")
            write_atomic(run_dir / "final_eval.json", json.dumps(res, indent=2))
        except (KeyboardInterrupt, OSError) as exc:
            if isinstance(exc, OSError) and not is_write_failure(exc):
                raise
            _trim_eval_log(eval_log, size)  # the --resume that runs it again writes its line
            if isinstance(exc, OSError):
                cannot = _cannot_write(exc, run_dir)
                if world_size > 1:
                    raise RunError(cannot) from None
                say_on_stderr(f"halma train: error: {cannot}; {complete}")
                return 2
            if world_size > 1:  # the parent stops every process and says how to continue (run)
                raise
            signum = int(getattr(exc, "signum", signal.SIGINT))
            what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
            say_on_stderr(f"\nhalma train: {what} during the final evaluation; {complete}")
            return 128 + signum
        output.line(f"final evaluation ({time.time() - t1:.0f} s), policy alone; written to "
                    f"{run_dir / 'final_eval.md'} and final_eval.json:")
        output.line(table)
        output.line(f"cross-check with the arena: {cross_check_command(ckpt, cfg)}")
    output.line(f"total time {time.time() - t0:.0f} s")
    if output.reader_gone:  # (from the final evaluation's lines, or with processes > 1 from any of the run's)
        say_on_stderr(f"halma train: the standard output's reader went away, its lines to /dev/null since; the run is "
                      f"complete: checkpoint {ckpt}")
        return 1  # (cli's for a closed pipe)
    return 0


# --- halma bench train ------------------------------------------------------------------


def bench_config(device: str = "cpu", engine: str = "batched", threads: int = 1, processes: int = 1,
                 seed: int = 0) -> Any:
    """The config ``halma bench train`` times: the default config in pure self-play, nothing evaluated,
    logged or checkpointed on the way."""
    from agents.config import default_dict, from_dict

    data = default_dict()
    data.update(name="bench", seed=seed, device=device, torch_threads=threads, processes=processes)
    data["env"]["engine"] = engine
    data["pool"].update(self_prob=1.0, snapshot_prob=0.0, bot_prob=0.0)
    data["eval"].update(every=0, final_games=0)
    data["log"].update(progress_bar=False, tensorboard=False, status_every=1e9)
    data["checkpoint"]["every"] = 10 ** 9
    return from_dict(data)


def bench_loop(rank: int, world_size: int, cfg: Any, seconds: float) -> tuple[int, float, float]:
    """One training run that goes on for ``seconds`` after its first update (the warm-up), and at
    least one update more: (steps, wall seconds, CPU seconds of all processes) after the warm-up.

    One run, not one per update: its games go on from update to update as in ``halma train`` (a
    fresh run per update would restart every game and time openings only, which read about 20%
    faster than the middle game that follows)."""
    import tempfile

    from agents import parallel
    from agents.ppo import Trainer, keep_freed_memory

    batch = cfg.env.num_envs * cfg.ppo.num_steps
    cfg.ppo.total_steps = batch * 10 ** 6  # the clock stops it; the learning rate stays near its start
    clock: dict[str, Any] = {}

    def stop() -> bool:
        if not clock:  # the warm-up update is done: start the clock
            clock.update(start=time.perf_counter(), cpu=time.process_time(), steps=trainer.global_step)
            return False
        # process 0's clock decides when all of them stop
        return parallel.any_true(rank == 0 and time.perf_counter() - clock["start"] >= seconds)

    keep_freed_memory()  # as halma train does
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(cfg, Path(tmp) / "bench", log=lambda s: None, rank=rank, world_size=world_size)
        trainer.train(stop=stop)
        elapsed = time.perf_counter() - clock["start"]
        cpu = sum(parallel.gather(time.process_time() - clock["cpu"]))
        trainer.close()
    return trainer.global_step - clock["steps"], elapsed, cpu


def load_average() -> float | None:
    """The machine's one-minute load average (two decimals), None where there is none (Windows)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Environment steps per second of the whole loop (rollout + update), default config, self-play.

    Measured for the scalar and the batched engine on one torch thread (the default config's), and for
    the batched engine on two threads of one process and in two data-parallel processes of one thread
    (``processes: 2``); both only meaningful on a quiet machine: the load average is reported.
    With ``repeat`` > 1 every configuration is measured that many times, interleaved, and the figures
    are the medians, with every wall-clock reading listed (``..._readings``).
    """

    import torch

    from agents.parallel import spawn

    devices = [args.device] if getattr(args, "device", None) else ["cpu"] + (["cuda"] if torch.cuda.is_available()
                                                                             else [])
    figures: dict[str, Any] = {"load_average_1min": load_average()}
    seconds = float(getattr(args, "seconds", 2.0))
    repeat = int(getattr(args, "repeat", 1))
    # (device, engine, torch threads, processes)
    runs = [(device, engine, 1, 1) for device in devices for engine in ("scalar", "batched")]
    runs += [("cpu", "batched", 2, 1), ("cpu", "batched", 1, 2)] if "cpu" in devices else []
    readings: dict[str, list[float]] = {}
    threads_before = torch.get_num_threads()  # the trainer sets torch's (process-wide) thread count
    for device, engine, threads, processes in [run for _ in range(repeat) for run in runs]:  # interleaved
        cfg = bench_config(device, engine, threads, processes, seed=int(getattr(args, "seed", 0)))
        if processes > 1:
            steps, elapsed, cpu = spawn(bench_loop, processes, cfg, seconds)
        else:
            steps, elapsed, cpu = bench_loop(0, 1, cfg, seconds)
        name = f"train_{device}_{engine}" + (f"_{threads}threads" if threads != 1 else "")
        name += f"_{processes}processes" if processes != 1 else ""
        readings.setdefault(f"{name}_steps_per_s", []).append(round(steps / elapsed, 1))
        # per second of CPU time (all threads and processes): on a shared machine, what one free core
        # would give with one thread
        readings.setdefault(f"{name}_steps_per_cpu_s", []).append(round(steps / max(cpu, 1e-9), 1))
    torch.set_num_threads(threads_before)
    for key, values in readings.items():
        figures[key] = round(statistics.median(values), 1)
    if repeat > 1:  # every reading, in the order taken
        figures.update({f"{key}_readings": values for key, values in readings.items() if key.endswith("_steps_per_s")})
    figures["num_envs"] = cfg.env.num_envs
    figures["num_steps"] = cfg.ppo.num_steps
    figures["num_minibatches"] = cfg.ppo.num_minibatches
    figures["update_epochs"] = cfg.ppo.update_epochs
    figures["threads"] = 1
    figures["repeat"] = repeat
    if not getattr(args, "json", False):
        print("halma bench train (whole PPO loop, self-play, default config; steps = plies of all seats; "
              "1 torch thread unless the name says otherwise" + (f"; medians of {repeat} interleaved readings"
                                                                 if repeat > 1 else "") + ")")
        for key, value in figures.items():
            print(f"  {key:40s} {value}")
    return figures
