"""``halma show`` and ``halma perft``: engine tools for the terminal."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time

from halma_env.game import Game, perft
from halma_env.notation import SURROUNDING_SPACE
from halma_env.render import colors_wanted, diamond_legend, render_text
from halma_env.rules import VARIANTS, Rules


def add_show_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("position", nargs="?", help="SPEC §3 position text (default: the start of --variant/--seats)")
    p.add_argument("--variant", choices=VARIANTS, help="variant for the start position (default: star)")
    p.add_argument("--seats", type=int, help="seats for the start position (default: 2)")
    p.add_argument("--numbers", action="store_true",
                   help="write every hole's number (without colours the 16x16 board labels its rows and columns "
                        "instead: hole = row label + column)")
    p.add_argument("--no-color", action="store_true",
                   help="plain text, no ANSI colours (off anyway when output is not a terminal, NO_COLOR is set "
                        "or TERM=dumb, unless FORCE_COLOR is set)")
    p.add_argument("--moves-from", type=int, metavar="HOLE", help="mark where the piece on HOLE can go")


def _game(args: argparse.Namespace) -> Game:
    """The position given, or the start of --variant/--seats; a ValueError for both at once (the text
    names its variant and seats) or for an empty position."""
    if args.position is None:
        return Game(Rules(args.variant or "star", 2 if args.seats is None else args.seats))
    if args.variant is not None or args.seats is not None:
        raise ValueError("a position names its own variant and seats: drop --variant/--seats")
    if not args.position.strip(SURROUNDING_SPACE):  # (what the position reader strips)
        raise ValueError("the position is empty (give SPEC §3 text, or leave it out for the start position)")
    try:
        return Game.from_position(args.position)
    except ValueError as e:
        if os.path.isfile(args.position):  # a file's name (spaces and all), not its text
            raise ValueError(f"{e}; {args.position!r} is a file: give the position's text (\"$(cat "
                             f"{shlex.quote(args.position)})\"); a game record is stepped through with halma play "
                             "--replay") from None
        raise


def _error(command: str, message: str) -> int:
    print(f"halma {command}: error: {message}", file=sys.stderr)
    return 2


def run_show(args: argparse.Namespace) -> int:
    try:
        game = _game(args)
    except ValueError as e:
        return _error("show", str(e))
    marks: list[int] = []
    if args.moves_from is not None:
        problem = _moves_from_problem(game, args.moves_from)
        if problem:
            return _error("show", f"--moves-from {args.moves_from}: {problem}")
        marks = game.legal_destinations(args.moves_from)
    color = not args.no_color and colors_wanted()
    print(render_text(game, numbers=args.numbers, color=color, marks=marks))
    if game.layout.has_kings:
        print(diamond_legend(game, numbers=args.numbers))
    if args.moves_from is not None and not marks:
        print(f"the piece on hole {args.moves_from} has no legal move")
    return 0


def _moves_from_problem(game: Game, hole: int) -> str | None:
    """Why no move can start on ``hole`` in ``game`` (as ``halma play`` words it), or None."""
    if not 0 <= hole < game.geometry.num_holes:
        return f"not a hole (0..{game.geometry.num_holes - 1})"
    if game.is_over:
        return f"the game is over ({game.end_reason})"
    piece = game.piece_at(hole)
    if piece is None:
        return "the hole is empty"
    if piece[0] != game.to_move:
        return f"the piece is seat {piece[0]}'s, and seat {game.to_move} is to move"
    return None


def add_perft_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("depth", type=int, help="number of plies")
    p.add_argument("--position", help="SPEC §3 position text (default: the start of --variant/--seats)")
    p.add_argument("--variant", choices=VARIANTS, help="variant for the start position (default: star)")
    p.add_argument("--seats", type=int, help="seats for the start position (default: 2)")
    p.add_argument("--divide", action="store_true", help="also print the count below each first move")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object instead of lines: {"position", "depth", "depths": {"1": count, ...} '
                        '(or with --divide "moves": {"113-104": count, ...}), "total", "seconds"}')


def run_perft(args: argparse.Namespace) -> int:
    try:
        game = _game(args)
    except ValueError as e:
        return _error("perft", str(e))
    if args.depth < 0:
        return _error("perft", f"depth must be >= 0, got {args.depth}")
    start = time.perf_counter()
    counts: dict[str, int] = {}  # a first move's count (--divide) or a depth's, in the order printed
    if args.divide and args.depth >= 1:
        for move in game.legal_moves():
            game.play(move)
            counts[str(move)] = perft(game, args.depth - 1)
            game.undo()
            _line(args, f"{move}: {counts[str(move)]}")
        total = sum(counts.values())
    else:
        for depth in range(1, args.depth + 1):
            counts[str(depth)] = perft(game, depth)
            _line(args, f"depth {depth}: {counts[str(depth)]}")
            if not counts[str(depth)] and depth < args.depth:
                # no sequence reaches this depth, so none reaches a deeper one: stop (a finished position
                # at depth 10**9 printed zeros, and with --json collected them, until killed)
                rest = f"depth {args.depth}" if depth + 1 == args.depth else f"depths {depth + 1}-{args.depth}"
                _line(args, f"{rest}: 0 (no move sequence reaches depth {depth})")
                break
        total = counts.get(str(args.depth), 0) if args.depth else 1
        if args.depth == 0:
            counts["0"] = 1
            _line(args, "depth 0: 1")
    seconds = time.perf_counter() - start
    if args.json:
        key = "moves" if args.divide and args.depth >= 1 else "depths"
        print(json.dumps({"position": game.position(), "depth": args.depth, key: counts, "total": total,
                          "seconds": round(seconds, 3)}))
    else:
        print(f"total {total} in {seconds:.2f} s")
    return 0


def _line(args: argparse.Namespace, text: str) -> None:
    """One line of perft's output as it comes (a long count shows its progress), unless --json."""
    if not args.json:
        print(text, flush=True)
