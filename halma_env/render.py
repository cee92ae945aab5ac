"""Text drawings of a position for terminals (ANSI colours optional)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from halma_env.notation import KING_CHARS, PIECE_CHARS

if TYPE_CHECKING:
    from halma_env.game import Game

SEAT_COLOURS = ("31", "34", "32", "33", "35", "36")  # red, blue, green, yellow, magenta, cyan
SEAT_COLOUR_NAMES = ("red", "blue", "green", "yellow", "magenta", "cyan")


def colors_wanted(stream: TextIO | None = None) -> bool:
    """Whether text written to ``stream`` (standard output by default) gets ANSI colours: only on a
    terminal, never with ``NO_COLOR`` set (https://no-color.org) or ``TERM=dumb`` (a terminal that says it
    takes no escape sequences: Emacs' shell, some CI logs), and on Windows only once its console
    takes ANSI sequences (it shows them as text otherwise). ``FORCE_COLOR`` (https://force-color.org: a CI
    log or a pager that shows colours) turns them on anywhere, unless ``NO_COLOR`` is set too: the order
    of Python 3.13's own colours. Each counts when set to anything but the empty string."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = sys.stdout if stream is None else stream
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        terminal = False
    if os.environ.get("FORCE_COLOR"):
        if terminal and sys.platform == "win32":  # (a console still needs its ANSI mode turned on)
            _windows_console_takes_ansi(stream)
        return True
    if os.environ.get("TERM") == "dumb" or not terminal:
        return False
    return sys.platform != "win32" or _windows_console_takes_ansi(stream)


def _windows_console_takes_ansi(stream: TextIO) -> bool:
    """Turn on the console's virtual terminal mode (Windows 10 and later; the classic console starts without
    it); False where it cannot be."""
    if sys.platform != "win32":  # (and mypy, on another platform, checks no further)
        return False
    import ctypes
    import msvcrt

    try:
        handle = msvcrt.get_osfhandle(stream.fileno())
        kernel32 = ctypes.windll.kernel32
        mode = ctypes.c_uint32()
        if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
            return False
        return bool(kernel32.SetConsoleMode(handle, mode.value | 0x0004))  # ENABLE_VIRTUAL_TERMINAL_PROCESSING
    except (OSError, AttributeError, ValueError):
        return False


def diamond_legend(game: Game, numbers: bool = False) -> str:
    """What a Diamond board's own marks mean, in one line: its kings' letters and, unless the game is over, the
    closed holes ``render_text`` writes as ``x`` (with ``numbers`` it writes every hole's number, so the line
    says the closed holes are not marked); for the commands that draw one."""
    seats = range(game.num_players)
    kings = ", ".join(KING_CHARS[s] for s in seats)
    if game.is_over:
        closed = ""
    elif numbers:
        closed = "; the hole numbers do not mark the closed holes (drawn as x without numbers)"
    else:
        closed = "; x: a hole of another colour's point, closed to the seat to move (none of its pieces may land there)"
    return f"{kings}: the kings of seats {', '.join(map(str, seats))}{closed}"


def render_text(
    game: Game,
    numbers: bool = False,
    color: bool = True,
    marks: Iterable[int] = (),
    last_move: bool = True,
) -> str:
    """The board as lines of text.

    ``numbers`` writes every hole's number, coloured by its occupant; without ``color`` an
    occupied hole is written ``0:17`` (the piece's character, then the hole), so the pieces stay
    visible, and on the 16 x 16 board (where those cells made rows of 95 columns) the rows and
    columns are labelled instead: a hole's number is its row's label plus its column's.  ``marks``
    are holes to highlight (e.g. the legal destinations of a picked piece, shown as ``*``); with
    ``color`` the last move's holes are underlined.  Without ``numbers`` an empty hole the seat to move may
    never land on (diamond's closed camps, SPEC §2) is an ``x``, not a ``.``.
    """
    g = game.geometry
    marked = set(marks)
    if numbers and not color and g.kind == "square":
        return _labelled_square(game, marked)
    recent: set[int] = set()
    # the newest move event, read from the end (game.moves builds the whole list: a 10,000-ply replay drawn
    # position by position took 26 s, not one)
    last = next((e.move for e in game.recent_events() if e.move is not None), None) if last_move else None
    if last is not None:
        recent = {last.src, last.dst}
    cells = game.board()
    # (the open holes are a bit set in the geometry's bit order, not by hole number)
    open_holes = g.all_holes if game.is_over or numbers else game.layout.open_holes[game.to_move]
    tagged = numbers and not color  # occupied holes as "0:17": wider cells
    width = (6 if tagged else 4) if numbers else 2
    lines = []
    hole = 0
    for w in g.row_widths:
        if g.kind == "star":
            x0 = -(w - 1)
            indent = (x0 + 12) * width // 2
        else:
            indent = 0
        parts = [" " * indent]
        for _ in range(w):
            cell = cells[hole]
            if cell is None and hole not in marked and not open_holes >> g.bit[hole] & 1:
                text, code = "x", "2"
            elif cell is None:
                text = "*" if hole in marked else ("." if not numbers else str(hole))
                code = "1" if hole in marked else ("2" if numbers else "")
            else:
                seat, king = cell
                char = (KING_CHARS if king else PIECE_CHARS)[seat]
                text = f"{char}:{hole}" if tagged else (str(hole) if numbers else char)
                code = SEAT_COLOURS[seat] + (";1" if king else "")
            if hole in recent:
                code = (code + ";4") if code else "4"
            text = text.rjust(width - 1) if numbers else text
            if color and code:
                text = f"\x1b[{code}m{text}\x1b[0m"
            parts.append(text + " ")
            hole += 1
        lines.append("".join(parts).rstrip())
    status = game_status_line(game)
    return "\n".join(lines + [status])


def _labelled_square(game: Game, marked: set[int]) -> str:
    """The square board without colours, numbered by labels: a header of column numbers and each row's first
    hole, so hole = row label + column (68 columns, where a ``0:190`` cell per hole made 95)."""
    cols = game.geometry.row_widths[0]
    cells = game.board()
    lines = ["    " + "".join(f"{c:>4}" for c in range(cols))]
    for first in range(0, len(cells), cols):
        row = []
        for hole in range(first, first + cols):
            cell = cells[hole]
            if cell is None:
                row.append("*" if hole in marked else ".")
            else:
                seat, king = cell
                row.append((KING_CHARS if king else PIECE_CHARS)[seat])
        lines.append(f"{first:>3} " + "".join(f"{text:>4}" for text in row))
    return "\n".join(lines + [game_status_line(game)])


def game_status_line(game: Game) -> str:
    """The last line of ``print(game)``: the game, its ply and seat to move, or how it ended and the places."""
    if game.is_over:
        places = ", ".join(f"seat {s}: {p}" for s, p in enumerate(game.places))
        return f"game over ({game.end_reason}); places: {places}"
    seats = f"{game.num_players} seat" + ("s" if game.num_players > 1 else "")
    return f"{game.rules.variant}, {seats}, ply {game.ply}, seat {game.to_move} to move"
