"""SVG pictures of a position, for notebooks and web pages (python-chess's ``chess.svg.board``).

``board_svg(game)`` returns an SVG document as text: every hole at its place on the board (the
star's hexagram for ``star`` and ``diamond``, the 16 x 16 chequerboard for ``halma16``), home camps
tinted with their seat's colour, pieces as discs in their seat's colour, a king (``diamond``) with
a gold ring and a white centre, the last move's source and destination ringed and its hop path drawn,
optionally every hole's number (SPEC §2) and a bar in the colour of the seat to move.  The picture
and its colours are those of the environments' RGB frames (``halma_env/envs/rendering.py``).

Pure string building, no dependency: the engine's display (``Game._repr_svg_``) must not import
numpy, gymnasium or pettingzoo, so the geometry is read off ``board.Geometry.coords`` here; the
palette is defined here and the RGB renderer reads it (``tests/test_svg.py`` checks the hole centres
agree).  Every element
carries a class (``piece seat0``, ``king``, ``lastmove src``, ``coord`` ...) and presentation
attributes only: no ``<style>`` element, which would leak into the page of a notebook showing
several boards, and no ids, which would clash there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast
from xml.sax.saxutils import escape

from halma_env.rules import WrongTypeError, as_integer, flag_argument
from halma_env.suggest import shown_value

if TYPE_CHECKING:
    from halma_env.game import Game, Move

# the palette of both pictures (halma_env.envs.rendering reads it as SEAT_RGB, BACKGROUND, ...)
SEAT_COLORS = ("#d62828", "#1e64dc", "#28a03c", "#ebbe14", "#be32be", "#14b4be")
BACKGROUND = "#f5eedc"
BOARD = "#dec8a0"
BOARD_DARK = "#c7b490"  # the square board's odd cells: BOARD * 0.9
HOLE = "#785f3c"
RIM = "#281e14"
KING_CENTRE = "#ffffff"
KING_RING = "#ffc800"
HIGHLIGHT = "#000000"
PATH = "#3c3c3c"
IDLE = "#a0a0a0"  # the turn bar once the game is over
CAMP_OPACITY = 0.45  # a home camp: its seat's colour over the board, as the RGB renderer mixes them

SPACING = 28  # between neighbouring holes, in the picture's own units (pixels at its natural size)
PAD = 8  # around the board
BAR = 8  # height of the "seat to move" bar
MAX_SIZE = 100_000


class SvgBoard(str):
    """An SVG document: a ``str`` that Jupyter shows as the picture (``_repr_svg_``), as chess.svg's is."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


def board_svg(
    game: Game,
    *,
    size: int | None = None,
    lastmove: Move | tuple[int, int] | str | bool | None = True,
    coordinates: bool = False,
    to_move: bool = True,
    seat_colors: Sequence[str] | None = None,
) -> SvgBoard:
    """The position of ``game`` as an SVG document (a ``str``; deterministic: the same game gives
    the same text).

    - ``size``: the longer side of the picture in pixels (the other follows the board's shape), or
      None for its natural size (28 pixels between neighbouring holes);
    - ``lastmove``: True (the default) highlights the last move played, if any; None or False
      nothing; a ``Move``, a ``(src, dst)`` pair or ``"src-dst"`` that move instead (its ``path``
      is drawn when the Move has one, else a straight line);
    - ``coordinates``: write every hole's number (SPEC §2) on it;
    - ``to_move``: a bar along the top in the colour of the seat to move (grey once the game is over);
    - ``seat_colors``: a CSS colour per seat (at least one per seat; ``SEAT_COLORS`` by default).

    Raises TypeError or ValueError naming the argument at fault.
    """
    from halma_env.game import Game
    from halma_env.render import game_status_line

    if not isinstance(game, Game):
        raise WrongTypeError(f"game must be a halma_env Game, got {type(game).__name__}")
    pixels = _check_size(size)
    show_numbers = flag_argument(coordinates, "coordinates")
    show_turn = flag_argument(to_move, "to_move")
    colours = _check_colours(seat_colors, game.num_players)
    g = game.geometry
    n = g.num_holes
    move = _check_lastmove(lastmove, game)

    # hole centres: the star's display columns are doubled (neighbours in a row are 2 apart)
    if g.kind == "star":
        x0 = min(x for _, x in g.coords)
        raw = [((x - x0) * SPACING / 2, r * SPACING * math.sqrt(3) / 2) for r, x in g.coords]
    else:
        raw = [(c * SPACING, r * SPACING) for r, c in g.coords]
    left = PAD + SPACING / 2
    top = left + (BAR + PAD if show_turn else 0)
    centre = [(left + x, top + y) for x, y in raw]
    width = max(x for x, _ in raw) + SPACING + 2 * PAD
    height = top + max(y for _, y in raw) + SPACING / 2 + PAD
    if pixels is None:
        shown_w, shown_h = width, height
    else:
        scale = pixels / max(width, height)
        shown_w, shown_h = width * scale, height * scale

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_n(shown_w)}" height="{_n(shown_h)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}">',
        f"<title>{escape(game_status_line(game))}</title>",
        f"<desc>{escape(game.position())}</desc>",
        f'<rect class="background" width="{_n(width)}" height="{_n(height)}" fill="{BACKGROUND}"/>',
    ]
    if show_turn:
        over = game.is_over
        out.append(
            f'<rect class="to-move {"over" if over else f"seat{game.to_move}"}" x="{PAD}" y="{PAD}" '
            f'width="{_n(width - 2 * PAD)}" height="{BAR}" fill="{IDLE if over else colours[game.to_move]}"/>'
        )

    # the board: cells, home camps tinted with their seat's colour, a dot for every hole
    out.append('<g class="board">')
    home_of = {h: seat for seat, holes in enumerate(game.layout.homes) for h in holes}
    half = SPACING / 2
    if g.kind == "star":
        out += [_circle("cell", centre[h], half, f'fill="{BOARD}"') for h in range(n)]
        camp = [_circle(f"camp seat{home_of[h]}", centre[h], half,
                        f'fill="{colours[home_of[h]]}" fill-opacity="{CAMP_OPACITY}"') for h in sorted(home_of)]
    else:
        x, y = centre[0]
        side = _n(SPACING * 16)
        out.append(f'<rect class="cells" x="{_n(x - half)}" y="{_n(y - half)}" width="{side}" height="{side}" '
                   f'fill="{BOARD}"/>')
        out += [_square("cell dark", centre[h], f'fill="{BOARD_DARK}"')
                for h in range(n) if sum(g.coords[h]) % 2 and h not in home_of]
        camp = [_square(f"camp seat{home_of[h]}", centre[h],
                        f'fill="{colours[home_of[h]]}" fill-opacity="{CAMP_OPACITY}"') for h in sorted(home_of)]
    out += camp
    if not show_numbers:  # with numbers on, the number marks the hole
        out += [_circle("hole", centre[h], SPACING * 0.13, f'fill="{HOLE}"') for h in range(n)]
    out.append("</g>")

    if move is not None:
        src, dst, path = move
        points = " ".join(f"{_n(centre[h][0])},{_n(centre[h][1])}" for h in path)
        out.append(f'<polyline class="lastmove path" points="{points}" fill="none" stroke="{PATH}" '
                   f'stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>')

    # pieces: a disc with a dark rim (stroked inside the disc's radius); a king with a ring and a centre
    out.append('<g class="pieces">')
    rim = SPACING * 0.08
    for h, cell in enumerate(game.board()):
        if cell is None:
            continue
        seat, king = cell
        out.append(_circle(f"piece{' king' if king else ''} seat{seat}", centre[h], SPACING * 0.40 - rim / 2,
                           f'fill="{colours[seat]}" stroke="{RIM}" stroke-width="{_n(rim)}"'))
        if king:
            out.append(_circle("king-ring", centre[h], SPACING * 0.205,
                               f'fill="none" stroke="{KING_RING}" stroke-width="{_n(SPACING * 0.07)}"'))
            out.append(_circle("king-centre", centre[h], SPACING * 0.12, f'fill="{KING_CENTRE}"'))
    out.append("</g>")

    if move is not None:
        ring = SPACING * 0.09
        for name, h in (("src", move[0]), ("dst", move[1])):
            out.append(_circle(f"lastmove {name}", centre[h], SPACING * 0.52 - ring / 2,
                               f'fill="none" stroke="{HIGHLIGHT}" stroke-width="{_n(ring)}"'))

    if show_numbers:
        out.append(f'<g class="coordinates" font-family="sans-serif" font-size="{_n(SPACING * 0.34)}" '
                   'font-weight="bold" text-anchor="middle">')
        cells = game.board()
        for h in range(n):
            x, y = centre[h]
            look = f'fill="{HOLE}"' if cells[h] is None else f'fill="#ffffff" stroke="{RIM}" stroke-width="0.6"'
            out.append(f'<text class="coord" x="{_n(x)}" y="{_n(y)}" dy="0.35em" {look}>{h}</text>')
        out.append("</g>")
    out.append("</svg>")
    return SvgBoard("\n".join(out) + "\n")


def _n(value: float) -> str:
    """A coordinate as short, fixed text (two decimals at most): the same picture gives the same bytes."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _circle(cls: str, at: tuple[float, float], r: float, paint: str) -> str:
    return f'<circle class="{cls}" cx="{_n(at[0])}" cy="{_n(at[1])}" r="{_n(r)}" {paint}/>'


def _square(cls: str, at: tuple[float, float], paint: str) -> str:
    half = SPACING / 2
    return (f'<rect class="{cls}" x="{_n(at[0] - half)}" y="{_n(at[1] - half)}" width="{SPACING}" '
            f'height="{SPACING}" {paint}/>')


def _check_size(size: object) -> int | None:
    if size is None:
        return None
    value = as_integer(size)  # True is not a size, nor numpy's bool
    if value is None:
        raise WrongTypeError(f"size must be a positive integer (pixels) or None, got {type(size).__name__}")
    if not 0 < value <= MAX_SIZE:
        shown = value if value.bit_length() < 64 else f"an integer of {value.bit_length()} bits"
        raise ValueError(f"size must be a positive integer of at most {MAX_SIZE} pixels, got {shown}")
    return value


def _check_colours(seat_colors: object, seats: int) -> tuple[str, ...]:
    if seat_colors is None:
        return SEAT_COLORS[:seats]
    if isinstance(seat_colors, str | bytes) or not isinstance(seat_colors, Sequence):
        raise WrongTypeError(
            f"seat_colors must be a list of CSS colours, one per seat, or None, got {type(seat_colors).__name__}"
        )
    if len(seat_colors) < seats:
        raise ValueError(f"seat_colors must give a colour for each of the {seats} seats, got {len(seat_colors)}")
    colours = []
    for seat, colour in enumerate(seat_colors[:seats]):
        if not isinstance(colour, str):
            raise WrongTypeError(f"seat_colors[{seat}] must be a CSS colour text such as '#d62828', "
                                 f"got {type(colour).__name__}")
        if not colour.strip() or not colour.isprintable() or len(colour) > 100:
            raise ValueError(f"seat_colors[{seat}] must be a CSS colour text such as '#d62828', got {colour[:40]!r}")
        colours.append(escape(colour.strip(), {'"': "&quot;"}))
    return tuple(colours)


def _check_lastmove(lastmove: object, game: Game) -> tuple[int, int, tuple[int, ...]] | None:
    """(src, dst, path) of the move to highlight, or None."""
    from halma_env.game import IllegalMoveError, Move

    if lastmove is None or lastmove is False:
        return None
    if lastmove is True:
        move = next((e.move for e in game.recent_events() if e.move is not None), None)
        if move is None:
            return None
    elif isinstance(lastmove, Move):
        move = lastmove
    elif isinstance(lastmove, str):
        try:
            move = Move.parse(lastmove)
        except IllegalMoveError as e:
            raise ValueError(f"lastmove: {e}") from None
    elif isinstance(lastmove, tuple) and len(lastmove) == 2:
        move = Move(*lastmove)
    else:
        raise WrongTypeError(
            f"lastmove must be True, None, a Move, a (src, dst) pair or 'src-dst', got {type(lastmove).__name__}"
        )
    last = game.geometry.num_holes - 1
    ends = []
    for name, hole in (("source", move.src), ("destination", move.dst)):
        value = as_integer(hole)
        if value is None:
            raise WrongTypeError(f"lastmove's {name} must be a hole number 0..{last}, got {shown_value(hole)}")
        if not 0 <= value <= last:
            raise ValueError(f"lastmove's {name} must be a hole number 0..{last}, got {value}")
        ends.append(value)
    src, dst = ends
    path = move.path if lastmove is True or isinstance(lastmove, Move) else None
    if path is None:
        return src, dst, (src, dst)
    holes = tuple(as_integer(h) for h in path)
    if len(holes) < 2 or holes[0] != src or holes[-1] != dst or not all(
            h is not None and 0 <= h <= last for h in holes):
        raise ValueError(f"lastmove's path {tuple(path)!r} does not lead from {src} to {dst} over holes 0..{last}")
    return src, dst, cast("tuple[int, ...]", holes)


