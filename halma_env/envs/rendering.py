"""RGB pictures of a position drawn with numpy alone (no matplotlib or pygame in the hot path).

The star board is drawn as a hexagram of circles (each camp point tinted with the colour of the
seat whose home it is), the square board as a 16 x 16 chequerboard with tinted home camps.
Pieces are discs in their seat's colour with a dark rim; a king (diamond) carries a white centre
and a gold ring; the last move's source and destination get a black ring and its hop path a line.
A bar along the top shows the colour of the seat to move (grey once the game is over).

Every shape is a precomputed set of flat pixel indices per hole, so a frame is one copy of the
static board plus a few fancy-indexed assignments (about 0.1 ms).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from halma_env.game import Game

from halma_env import svg


def _rgb(color: str) -> np.ndarray:
    """``"#d62828"`` -> (214, 40, 40): the palette is svg.py's, one set of colours for both pictures."""
    return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


SEAT_RGB = np.stack([_rgb(c) for c in svg.SEAT_COLORS])
BACKGROUND = _rgb(svg.BACKGROUND)
BOARD = _rgb(svg.BOARD)
HOLE = _rgb(svg.HOLE)
RIM = _rgb(svg.RIM)
KING_CENTRE = _rgb(svg.KING_CENTRE)
KING_RING = _rgb(svg.KING_RING)
HIGHLIGHT = _rgb(svg.HIGHLIGHT)
PATH = _rgb(svg.PATH)
IDLE = _rgb(svg.IDLE)

SPACING = svg.SPACING  # pixels between neighbouring holes
MARGIN = 22
BAR = svg.BAR  # height of the "seat to move" bar


def _disc(r: float) -> tuple[np.ndarray, np.ndarray]:
    k = int(np.ceil(r))
    dy, dx = np.mgrid[-k:k + 1, -k:k + 1]
    keep = dx * dx + dy * dy <= r * r
    return dy[keep], dx[keep]


def _ring(r_out: float, r_in: float) -> tuple[np.ndarray, np.ndarray]:
    k = int(np.ceil(r_out))
    dy, dx = np.mgrid[-k:k + 1, -k:k + 1]
    d2 = dx * dx + dy * dy
    keep = (d2 <= r_out * r_out) & (d2 > r_in * r_in)
    return dy[keep], dx[keep]


class Painter:
    """Static board picture and per-hole pixel index sets for one (variant, seat count)."""

    def __init__(self, variant: str, num_players: int) -> None:
        from halma_env.layout import layout

        lay = layout(variant, num_players)
        g = lay.geometry
        self.geometry = g
        s = SPACING
        if g.kind == "star":
            xs = np.array([x for _, x in g.coords], dtype=float)
            rows = np.array([r for r, _ in g.coords], dtype=float)
            cx = MARGIN + (xs - xs.min()) * s / 2
            cy = MARGIN + BAR + rows * s * np.sqrt(3) / 2
        else:
            rows = np.array([r for r, _ in g.coords], dtype=float)
            cols = np.array([c for _, c in g.coords], dtype=float)
            cx = MARGIN + cols * s + s / 2
            cy = MARGIN + BAR + rows * s + s / 2
        self.cx = np.rint(cx).astype(np.int64)
        self.cy = np.rint(cy).astype(np.int64)
        self.width = int(self.cx.max() + MARGIN + s)
        self.height = int(self.cy.max() + MARGIN + s)
        w = self.width

        def shape(offsets: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
            dy, dx = offsets
            return [(self.cy[h] + dy) * w + (self.cx[h] + dx) for h in range(g.num_holes)]

        self.piece = shape(_disc(s * 0.40))
        self.rim = shape(_ring(s * 0.40, s * 0.32))
        self.king_centre = shape(_disc(s * 0.12))
        self.king_ring = shape(_ring(s * 0.24, s * 0.17))
        self.highlight = shape(_ring(s * 0.52, s * 0.43))

        img = np.empty((self.height * w, 3), dtype=np.uint8)
        img[:] = BACKGROUND
        home_of = {}
        for seat, holes in enumerate(lay.homes):
            for h in holes:
                home_of[h] = seat
        tint = (0.55 * BOARD + 0.45 * SEAT_RGB.astype(float)).astype(np.uint8)  # seat -> light colour
        if g.kind == "star":
            cells = shape(_disc(s * 0.5))
        else:
            dy, dx = np.mgrid[-s // 2:s - s // 2, -s // 2:s - s // 2]
            cells = shape((dy.ravel(), dx.ravel()))
        for h in range(g.num_holes):
            if h in home_of:
                colour = tint[home_of[h]]
            elif g.kind == "square" and sum(g.coords[h]) % 2:
                colour = (BOARD * 0.9).astype(np.uint8)
            else:
                colour = BOARD
            img[cells[h]] = colour
        hole_dot = shape(_disc(s * 0.13))
        for h in range(g.num_holes):
            img[hole_dot[h]] = HOLE
        self.base = img
        self.bar = np.arange(6 * w, (6 + BAR) * w)

    def draw(self, game: Game) -> np.ndarray:
        """The picture of ``game``: uint8 array (height, width, 3)."""
        img = self.base.copy()
        img[self.bar] = IDLE if game.is_over else SEAT_RGB[game.to_move]
        moves = game.moves
        last = moves[-1] if moves else None
        if last is not None:
            path = last.path or (last.src, last.dst)
            for a, b in zip(path, path[1:]):
                self._line(img, a, b)
        for seat in range(game.num_players):
            colour = SEAT_RGB[seat]
            for h in game.pieces(seat):
                img[self.piece[h]] = colour
                img[self.rim[h]] = RIM
        if game.layout.has_kings:
            # every hole of game.pieces() holds a piece: piece_at never answers None for it
            piece_at = cast("Callable[[int], tuple[int, bool]]", game.piece_at)
            for seat in range(game.num_players):
                for h in game.pieces(seat):
                    if piece_at(h)[1]:
                        img[self.king_ring[h]] = KING_RING
                        img[self.king_centre[h]] = KING_CENTRE
        if last is not None:
            img[self.highlight[last.src]] = HIGHLIGHT
            img[self.highlight[last.dst]] = HIGHLIGHT
        return img.reshape(self.height, self.width, 3)

    def _line(self, img: np.ndarray, a: int, b: int) -> None:
        n = int(max(abs(self.cx[b] - self.cx[a]), abs(self.cy[b] - self.cy[a]))) + 1
        t = np.linspace(0.0, 1.0, n)
        x = np.rint(self.cx[a] + t * (self.cx[b] - self.cx[a])).astype(np.int64)
        y = np.rint(self.cy[a] + t * (self.cy[b] - self.cy[a])).astype(np.int64)
        for d in (-1, 0, 1):  # three pixels thick
            img[(y + d) * self.width + x] = PATH


@cache
def painter(variant: str, num_players: int) -> Painter:
    return Painter(variant, num_players)


def render_rgb(game: Game) -> np.ndarray:
    """An RGB picture (uint8, height x width x 3) of the position, last move highlighted."""
    return painter(game.rules.variant, game.num_players).draw(game)
