"""The ``halma`` command line.

Each sub-command lives in the module that owns its work and provides ``add_arguments(parser)``
and ``run(args) -> int`` (a module serving several commands: ``add_NAME_arguments`` and
``run_NAME``); modules are imported only when their command runs, so ``halma show`` never loads torch.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import io
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import cast

from agents.files import CommandWarning, is_write_failure, missing_extra, say_on_stderr, to_devnull
from agents.interrupts import stop_signals_raise
from halma_env.notation import quoted
from halma_env.rules import ASCII_DECIMAL, ASCII_INTEGER, MAX_OPTION_DIGITS
from halma_env.suggest import did_you_mean

# name -> (module, help); the module provides add_arguments(parser) and run(args)
COMMANDS = {
    "show": ("halma_env.commands", "draw a position in the terminal"),
    "perft": ("halma_env.commands", "count move sequences from a position (SPEC §6)"),
    "bench": ("agents.bench", "speed benchmarks: engine, env, train, opponent"),
    "eval": ("agents.arena", "matches and tournaments between bots, checkpoints and opponents"),
    "train": ("agents.train", "self-play PPO training from a YAML config"),
    "export": ("agents.export", "export a checkpoint as an ONNX CPU opponent"),
    "ladder": ("agents.ladder_build", "rebuild the difficulty ladder by tournament"),
    "play": ("agents.play", "play in the terminal against CPU levels or hot seat"),
}

# name -> command lines shown at the end of its --help (tests/test_arena_reports.py parses each)
EXAMPLES = {
    "show": ["halma show", "halma show --variant star --seats 6 --numbers"],
    "perft": ["halma perft 3", "halma perft 2 --divide --variant diamond --seats 3"],
    "bench": ["halma bench engine", "halma bench train --seconds 10 --repeat 3", "halma bench opponent --json"],
    "eval": ["halma eval greedy random --games 200", "halma eval search greedy mcts --seats 3 --games 60 --out "
             "runs/eval-3p", "halma eval runs/quickstart/checkpoints/last.pt search --games 20",
             "halma eval --solo greedy"],
    # shipped configs by name: a path into the source tree (configs/...) fails for an installed package
    "train": ["halma train quickstart", "halma train star2 --set ppo.total_steps=5e6", "halma train star2 --resume",
              "halma train my_config.yaml"],
    "export": ["halma export runs/quickstart/checkpoints/last.pt --level easy --name my_agent --out exports"],
    "ladder": ["halma ladder --variant diamond", "halma ladder --ladder exports/my_ladder.json --games 192 random "
               "greedy search:depth=2,time=none exports/my_agent.onnx"],
    "play": ["halma play --level hard", "halma play --seats 3 --players human,human,expert --numbers",
             "halma play --replay runs/eval-3p/games/game_00000.json"],
}


def flags_given(args: argparse.Namespace, dests: tuple[str, ...]) -> list[str]:
    """The ``--flags`` among ``dests`` given on the command line (options whose default is None, switches
    False), for a command to refuse the ones that do not apply instead of ignoring them."""
    return [f"--{dest.replace('_', '-')}" for dest in dests
            if getattr(args, dest) is not None and getattr(args, dest) is not False]  # not `in`: 0 == False




def ascii_int(text: str) -> int:
    """An integer flag's value in ASCII digits: int() also reads other scripts' digits (٢) and 1_0; and
    one of more than ``MAX_OPTION_DIGITS`` digits is refused by its length, not by int()'s own limit
    of 4,300 digits, whose error argparse reported as "invalid ascii_int value" quoting every digit."""
    if not ASCII_INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected an integer in ASCII digits, got {quoted(text)}")
    stripped = text.strip()
    sign = "-" if stripped.startswith("-") else ""
    digits = stripped.lstrip("+-").lstrip("0")  # (int() counts leading zeros against its 4,300)
    if len(digits) > MAX_OPTION_DIGITS:
        raise argparse.ArgumentTypeError(f"an integer of {len(digits)} digits is far too large "
                                         f"(at most {MAX_OPTION_DIGITS} digits)")
    return int(sign + (digits or "0"))


def ascii_float(text: str) -> float:
    """A number flag's value as ASCII text (the commands refuse nan and inf themselves, naming the flag)."""
    if not (ASCII_DECIMAL.fullmatch(text.strip()) or text.strip().lower().lstrip("+-") in ("inf", "nan")):
        raise argparse.ArgumentTypeError(f"expected a number in ASCII digits, got {quoted(text)}")
    return float(text)


def _ascii_numbers(parser: argparse.ArgumentParser) -> None:
    """Every int and float flag of ``parser`` read as ASCII text (one place, not 29 declarations)."""
    for action in parser._actions:  # argparse keeps its actions there; no public way to list them
        if action.type is int:
            action.type = ascii_int
        elif action.type is float:
            action.type = ascii_float


def build_parser(load: str | None = None) -> argparse.ArgumentParser:
    # allow_abbrev=False: `--gam 1` is not --games (an abbreviation breaks once a longer flag shares its start)
    parser = argparse.ArgumentParser(prog="halma", description="Halma family games: engine, environments, agents.",
                                     allow_abbrev=False, epilog="'halma COMMAND --help' shows a command's flags "
                                     "and examples; README.md and docs/ tell the rest")
    parser.add_argument("--version", action="store_true", help="print the version of halma_env and its encoding")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == load:
            parser.set_defaults(command_parser=p)
            module = importlib.import_module(module_name)
            # every module in COMMANDS provides one of the two (see above)
            add_arguments = cast("Callable[[argparse.ArgumentParser], object]",
                                 getattr(module, f"add_{name}_arguments", getattr(module, "add_arguments", None)))
            add_arguments(p)
            _ascii_numbers(p)
            examples = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
            p.epilog = f"{p.epilog}\n\n{examples}" if p.epilog else examples  # after a command's own (play's)
    return parser


def version() -> str:
    """``halma --version``: the package and the public formats a checkpoint or a record depends on."""
    from halma_env import __version__
    from halma_env.encoding import ENCODING_VERSION

    return f"halma_env {__version__} (observation and action encoding version {ENCODING_VERSION})"


def _stderr_to_devnull_if_closed() -> None:
    """Started with stderr closed (``2>&-``): progress bars and messages failed with EBADF and the command
    ended with status 1 and no word (descriptor 2 closed, or a file the launcher opened for reading took it:
    pyenv's shim script), and the next file opened could take descriptor 2 and receive them.  Descriptor 2
    then points at /dev/null, as a daemon's does."""
    try:
        os.write(2, b"")  # EBADF: closed, or not open for writing
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 2:
            os.dup2(fd, 2)
            os.close(fd)
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # (the process's stderr, for its life)


# the commands that need the working directory to exist: their worker processes (spawn) and torch's import read
# it, and failed with a multiprocessing traceback or a oneMKL fatal error where it was removed
NEEDS_WORKING_DIRECTORY = ("bench", "eval", "export", "ladder", "train")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name = next((a for a in argv if not a.startswith("-")), None)
    command = f" {name}" if name in COMMANDS else ""
    _stderr_to_devnull_if_closed()
    if sys.stdout is None:  # started with stdout closed (``halma show >&-``): what it prints would go nowhere
        print(f"halma{command}: error: the standard output is closed (redirect it to /dev/null to discard it)",
              file=sys.stderr)
        return 2
    if name in NEEDS_WORKING_DIRECTORY:
        try:
            os.getcwd()
        except FileNotFoundError:
            print(f"halma{command}: error: the current directory no longer exists (it was removed): cd to another "
                  "one", file=sys.stderr)
            return 2
    # a terminal or pipe that cannot encode a character (PYTHONIOENCODING=ascii, a C locale) shows it escaped
    # ('\\xb1' for '±') instead of failing after a tournament's games: help, tables, typed names; put back after,
    # for a program that calls main() itself
    escaped = [(stream, stream.errors) for stream in (sys.stdout, sys.stderr)
               if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "surrogateescape")]
    for stream, _ in escaped:
        stream.reconfigure(errors="backslashreplace")
    try:
        with _command_warnings_as_lines(command):
            return _main_reporting(name, argv, command)
    finally:
        for stream, errors in escaped:
            with contextlib.suppress(ValueError):  # (a stream closed meanwhile)
                stream.reconfigure(errors=errors)


@contextlib.contextmanager
def _command_warnings_as_lines(command: str) -> Iterator[None]:
    """A ``CommandWarning`` (a plugin bot left out) shown as ``halma CMD: warning: ...``, the way errors are, not
    in Python's form with the file and line that warned; every other warning as before.  (Only the formatting
    changes: where warnings go, and pytest's capture of them, stay as they were.)"""
    python_format = warnings.formatwarning

    def format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                       line: str | None = None) -> str:
        if issubclass(category, CommandWarning):
            return f"halma{command}: warning: {message}\n"
        return python_format(message, category, filename, lineno, line)

    warnings.formatwarning = format_warning
    try:
        yield
    finally:
        warnings.formatwarning = python_format


def _main_reporting(name: str | None, argv: list[str], command: str) -> int:
    """``_main`` with what its output and signals end in made one line and an exit status (README, "exit
    statuses")."""
    with stop_signals_raise():
        try:
            return _main_reporting_output(name, argv, command)
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (Terminated), also in the imports before the command
            # runs, or while a failed write is reported: one line instead of a traceback, and the shell's status
            # for the signal (130, 143; 129 SIGHUP)
            signum = _first_stop_signal(exc)
            what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
            say_on_stderr(f"\nhalma{command}: {what}")  # (stderr may be gone with the terminal or the pipe)
            return 128 + signum


def _main_reporting_output(name: str | None, argv: list[str], command: str) -> int:
    """``_main`` with a standard output that went away or failed made one line and an exit status."""
    try:
        try:
            status = _main(name, argv)
        except SystemExit:  # argparse's --help and usage errors exit from inside: flushed first, as below
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # a closed pipe or a full disk raises here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        # The reader went away (``halma perft 3 --divide | head``): stop quietly, as Unix tools do.
        # stdout goes to /dev/null so the interpreter's final flush does not raise again.
        to_devnull(sys.stdout.fileno())
        return 1
    except OSError as exc:
        # a write to stdout that failed (``> /dev/full``, a full disk): a command's own files name themselves
        if exc.filename is not None or not is_write_failure(exc):
            raise
        to_devnull(sys.stdout.fileno())  # (as above: the final flush)
        say_on_stderr(f"halma{command}: error: cannot write the standard output: {exc.strerror or exc}")
        return 2


def _first_stop_signal(exc: KeyboardInterrupt) -> int:
    """The signal that stopped the command: the first of a chain, so that a second, other one that came during the
    first one's clean-up (SIGTERM, then Ctrl-C) does not change the exit status (143 read 130)."""
    signum, seen = int(getattr(exc, "signum", signal.SIGINT)), {id(exc)}
    context = exc.__context__
    while context is not None and id(context) not in seen:  # (seen: a cycle of contexts)
        seen.add(id(context))
        if isinstance(context, KeyboardInterrupt):
            signum = int(getattr(context, "signum", signal.SIGINT))
        context = context.__context__
    return signum


def _main(name: str | None, argv: list[str]) -> int:
    if name not in COMMANDS:
        parser = build_parser()
        if name is not None:
            parser.error(f"unknown command {name!r}; choose from {', '.join(COMMANDS)}")
        if "--version" in argv:
            print(version())
            return 0
        unknown = [a for a in argv if a not in ("-h", "--help")]
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        parser.print_help()
        return 0 if argv else 2
    misplaced = [a for a in argv[:argv.index(name)] if a not in ("-h", "--help", "--version")]
    if misplaced:  # `halma --quiet eval ...`: a command's flag given before the command
        build_parser().error(f"{misplaced[0]} goes after the command: halma {name} {misplaced[0]} ...")
    try:
        return _run(name, argv)
    except ModuleNotFoundError as e:  # an optional dependency (pyproject's extras) the command needs
        hint = missing_extra(e)
        if hint is None:
            raise
        print(f"halma {name}: error: {hint}", file=sys.stderr)
        return 2
    except OSError as e:
        # a name past the system's limits (255 bytes a name, 4,096 a path), wherever a command first touches
        # it: one line naming it, not a traceback
        if e.errno != errno.ENAMETOOLONG:
            raise
        text = "" if e.filename is None else str(e.filename)
        shown = repr(text) if len(text) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"
        print(f"halma {name}: error: {e.strerror}" + (f": {shown}" if text else ""), file=sys.stderr)
        return 2


def _run(name: str, argv: list[str]) -> int:
    parser = build_parser(load=name)
    args, unknown = parser.parse_known_args(argv)
    if "--version" in unknown:  # the top level's flag, after a command
        args.command_parser.error(f"--version goes alone ('halma --version'), not with the {name} command")
    if unknown:  # named by the command's own parser (its usage, "halma bench: error: ..."), not the top one
        flags = [flag for action in args.command_parser._actions for flag in action.option_strings]
        typed = argv[:argv.index("--")] if "--" in argv else argv  # (after --, words are no flags to mend)
        shown = " ".join(word + (_nearest_flag(word, flags) if word in typed else "") for word in unknown)
        args.command_parser.error(f"unrecognized arguments: {shown}")
    if args.version:
        parser.error(f"--version goes alone ('halma --version'), not with the {name} command")
    del args.command_parser, args.version
    module = importlib.import_module(COMMANDS[name][0])
    run = cast("Callable[[argparse.Namespace], int | None]",  # every module in COMMANDS provides one
               getattr(module, f"run_{name}", getattr(module, "run", None)))
    return int(run(args) or 0)


def _nearest_flag(word: str, flags: list[str]) -> str:
    """`` (did you mean '--level'?)`` for a misspelt long flag (``--levle`` or ``--levle=hard``), else ``""``.
    Compared without the dashes, which every flag shares (with them ``--level`` was near ``--seed``)."""
    if not word.startswith("--"):
        return ""
    name = word[2:].split("=", 1)[0]
    # never the word itself, nor its opposite (--no-dry-run is no misspelt --dry-run); and nearer than names'
    # 0.6 (the flags' short names made --ladder "near" --players)
    others = [flag[2:] for flag in flags if flag.startswith("--") and flag[2:] not in (name, f"no-{name}")
              and f"no-{flag[2:]}" != name]
    return did_you_mean(name, others, cutoff=0.75).replace("mean '", "mean '--")


if __name__ == "__main__":
    sys.exit(main())
