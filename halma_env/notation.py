"""SPEC §3 position notation: ``<variant> <seats> <board> <to_move> [<ply>]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halma_env.layout import layout
from halma_env.rules import SEAT_COUNTS, VARIANTS, WrongTypeError

if TYPE_CHECKING:
    from halma_env.game import Game

PIECE_CHARS = "012345"
KING_CHARS = "ABCDEF"


# what a text may have around it (a line read with its newline, a typed space): ASCII white space only, not
# ``str.strip()``'s Unicode set (a no-break space, U+3000, the information separators \x1c-\x1f)
SURROUNDING_SPACE = " \t\n\r\x0b\x0c"


def is_ascii_number(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also accepts characters such as '²' that int() refuses)."""
    return text.isascii() and text.isdigit()


def quoted(text: str) -> str:
    """``repr(text)``, cut short for messages when the text is long."""
    return repr(text) if len(text) <= 40 else f"{text[:30]!r}... ({len(text)} characters)"


MAX_PLY_DIGITS = 12  # a ply count of a position: up to 999,999,999,999 (far more than any game plays)
# a ply count as a game writes it (a record's final position): a game started at ply 999,999,999,999 plays on past
# 12 digits, and its record must still read back; 18 digits stay below the batched engine's int64 (9.2e18)
MAX_WRITTEN_PLY_DIGITS = 18


def parse_position(text: str, *, max_ply_digits: int = MAX_PLY_DIGITS) -> tuple[str, int, list[int], int, int, int]:
    """-> (variant, seats, piece bit sets per seat, king bit set, seat to move, ply).

    Raises ValueError naming the field at fault and what was expected (``WrongTypeError``, a ``TypeError`` that is
    also a ``ValueError``, for a ``text`` that is no text).  ``max_ply_digits``: the longest ply count
    read (``MAX_WRITTEN_PLY_DIGITS`` for a position a game wrote after its start).
    """
    if not isinstance(text, str):  # (a WrongTypeError is a ValueError too, what callers catch)
        raise WrongTypeError(f"a position is a line of text, got {type(text).__name__}")
    if not text.strip(SURROUNDING_SPACE):
        raise ValueError("a position is empty: expected <variant> <seats> <board> <to_move> [<ply>]")
    fields = text.strip(SURROUNDING_SPACE).split(" ")
    if "" in fields:
        raise ValueError("a position's fields are separated by single spaces; found an empty field (two spaces)")
    if len(fields) not in (4, 5):
        raise ValueError(
            "a position has 4 or 5 fields separated by single spaces "
            f"(<variant> <seats> <board> <to_move> [<ply>]), got {len(fields)}"
        )
    variant, seats_text, board_text, to_move_text = fields[:4]
    # one text per position (records compare position texts): numbers have no leading zeros,
    # as write_position writes them
    ply_text = fields[4] if len(fields) == 5 else ""
    for name, number in (("seats", seats_text), ("to_move", to_move_text), ("ply", ply_text)):
        if is_ascii_number(number) and len(number) > 1 and number[0] == "0":
            raise ValueError(f"{name} field: numbers are written without leading zeros, got {quoted(number)}")
    if variant not in VARIANTS:
        raise ValueError(f"variant field: expected one of {', '.join(VARIANTS)}, got {quoted(variant)}")
    # compared as text: int() refuses numbers of more than a few thousand digits
    if seats_text not in [str(k) for k in SEAT_COUNTS[variant]]:
        allowed = ", ".join(map(str, SEAT_COUNTS[variant]))
        hint = " (with 4-6 seats use the international 'star' rules)" if variant == "diamond" else ""  # as Rules says
        raise ValueError(f"seats field: {variant} takes {allowed} seats, got {quoted(seats_text)}{hint}")
    n = int(seats_text)
    lay = layout(variant, n)
    g = lay.geometry
    rows = board_text.split("/")
    if len(rows) != len(g.row_widths):
        raise ValueError(f"board field: expected {len(g.row_widths)} rows separated by '/', got {len(rows)}")
    pieces = [0] * n
    kings = 0
    counts = [0] * n
    king_seen = [False] * n
    hole = 0
    for r, (row, width) in enumerate(zip(rows, g.row_widths)):
        if len(row) != width:
            raise ValueError(f"board field: row {r} must have {width} holes, got {len(row)} ({quoted(row)})")
        for ch in row:
            if ch != ".":
                if ch in PIECE_CHARS:
                    seat, king = PIECE_CHARS.index(ch), False
                elif ch in KING_CHARS:
                    seat, king = KING_CHARS.index(ch), True
                else:
                    raise ValueError(
                        f"board field: row {r} has {ch!r}; expected '.', a seat digit 0-{n - 1}"
                        + (f" or a king letter A-{KING_CHARS[n - 1]}" if lay.has_kings else "")
                    )
                if seat >= n:
                    raise ValueError(f"board field: {ch!r} on hole {hole} names seat {seat}, but there are {n} seats")
                if king:
                    if not lay.has_kings:
                        raise ValueError(f"board field: king {ch!r} on hole {hole}, but {variant} has no kings")
                    if king_seen[seat]:
                        raise ValueError(f"board field: seat {seat} has two kings")
                    king_seen[seat] = True
                    kings |= 1 << g.bit[hole]
                counts[seat] += 1
                pieces[seat] |= 1 << g.bit[hole]
            hole += 1
    for seat, count in enumerate(counts):
        if count > lay.max_pieces:
            raise ValueError(f"board field: seat {seat} has {count} pieces; {variant} gives at most {lay.max_pieces}")
        # with kings, one of the pieces a seat is given is its king: the rest are ordinary (SPEC §1)
        ordinary = count - king_seen[seat]
        if lay.has_kings and ordinary > lay.max_pieces - 1:
            raise ValueError(
                f"board field: seat {seat} has {ordinary} ordinary pieces; {variant} gives at most "
                f"{lay.max_pieces - 1} and a king"
            )
    if to_move_text not in [str(s) for s in range(n)]:
        raise ValueError(f"to_move field: expected a seat 0..{n - 1}, got {quoted(to_move_text)}")
    ply = 0
    if len(fields) == 5:
        if not is_ascii_number(ply_text):
            raise ValueError(f"ply field: expected a non-negative integer, got {quoted(ply_text)}")
        if len(ply_text) > max_ply_digits:  # (int() would take up to 4300 digits; the batched engine's int64 not)
            raise ValueError(f"ply field: a ply count of {len(ply_text)} digits is far too long (at most "
                             f"{max_ply_digits})")
        ply = int(ply_text)
    return variant, n, pieces, kings, int(to_move_text), ply


def write_position(game: Game) -> str:
    g = game.geometry
    chars = ["."] * g.num_holes
    for h, cell in enumerate(game.board()):
        if cell is not None:
            seat, king = cell
            chars[h] = KING_CHARS[seat] if king else PIECE_CHARS[seat]
    rows = []
    i = 0
    for w in g.row_widths:
        rows.append("".join(chars[i : i + w]))
        i += w
    return f"{game.rules.variant} {game.num_players} {'/'.join(rows)} {game.to_move} {game.ply}"
