"""The environments' helper modules: the CPU players (``halma_env.envs.players``) and the RGB
pictures (``halma_env.envs.rendering``)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from halma_env import Game, IllegalMoveError, Rules
from halma_env.envs import players
from halma_env.envs.players import CallablePlayer, RandomPlayer, make_player, reseed
from halma_env.envs.rendering import (
    BACKGROUND,
    BAR,
    BOARD,
    HIGHLIGHT,
    HOLE,
    IDLE,
    KING_CENTRE,
    KING_RING,
    MARGIN,
    PATH,
    RIM,
    SEAT_RGB,
    SPACING,
    Painter,
    _disc,
    _ring,
    painter,
    render_rgb,
)
from halma_env.layout import layout
from tests.engine_helpers import position, walk

# --- players -----------------------------------------------------------------------------------


def first_move(game: Game) -> Any:
    return game.legal_moves()[0]


def test_random_player_name_and_no_move_error() -> None:
    """The built-in player is called "random"; with no legal move (a finished game) it raises
    IllegalMoveError instead of drawing from an empty list."""
    p = RandomPlayer(seed=3)
    assert p.name == "random"
    game = Game(Rules("star", 2))
    game.resign(0)
    assert game.is_over and game.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="no legal move"):
        p.select_move(game)


def test_the_built_in_random_player_refuses_a_seed_agents_players_refuse() -> None:
    """RandomPlayer (the env's fallback for "random" when no registry builds it, and for a registry that refuses
    the seed) took 1.5, "abc", True and -1 as seeds without a word; agents.registry's players refuse them."""
    from halma_env.envs import make_player

    for bad in (1.5, "abc", True, -1, float("nan"), np.array([3])):
        for make in (lambda seed: RandomPlayer(seed), lambda seed: make_player("random", seed),
                     lambda seed: RandomPlayer(0).reseed(seed)):
            with pytest.raises(ValueError, match="^seed must be None or an integer >= 0, got "):
                make(bad)
    game = Game(Rules("star", 2))
    assert RandomPlayer(np.uint8(4)).select_move(game) == RandomPlayer(4).select_move(game)
    assert make_player("random", 4).select_move(game) == RandomPlayer(4).select_move(game)


def test_callable_player_names() -> None:
    """A callable player is named by ``name``, else by the function's ``__name__``, else "callable"."""
    assert CallablePlayer(first_move).name == "first_move"
    assert CallablePlayer(first_move, name="mine").name == "mine"
    nameless = functools.partial(first_move)
    assert not hasattr(nameless, "__name__")
    assert CallablePlayer(nameless).name == "callable"
    game = Game(Rules("star", 2))
    wrapped = make_player(first_move)
    assert isinstance(wrapped, CallablePlayer) and wrapped.select_move(game) == game.legal_moves()[0]


def test_the_registry_entry_point_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanning the installed distributions' entry points took about 4 ms at every env made with a named
    opponent: once per process now."""
    real = players.entry_points
    scans: list[str] = []
    monkeypatch.setattr(players, "entry_points", lambda **kw: scans.append(kw["group"]) or real(**kw))
    players._registry.cache_clear()
    try:
        for _ in range(3):
            make_player("greedy", 0)
        assert scans == [players.ENTRY_POINT_GROUP]
    finally:
        players._registry.cache_clear()  # the next test looks it up without the stand-in


def test_registry_value_error_for_random_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry that refuses "random" leaves the built-in RandomPlayer; any other name it
    refuses propagates the registry's own ValueError."""

    def refusing(spec: str, seed: int | None) -> Any:
        raise ValueError(f"registry refuses {spec}")

    monkeypatch.setattr(players, "_registry", lambda: refusing)
    p = make_player("random", 4)
    assert isinstance(p, RandomPlayer)
    assert p.select_move(Game(Rules("star", 2))) == RandomPlayer(4).select_move(Game(Rules("star", 2)))
    with pytest.raises(ValueError, match="registry refuses greedy"):
        make_player("greedy", 4)


def test_reseed_keeps_or_rebuilds() -> None:
    """``reseed``: no seed keeps the player; a ``seed()`` method is called; a named player without
    one is rebuilt; any other object is kept as is."""

    class Plain:
        def select_move(self, game: Game, time_budget: float | None = None) -> Any:
            return game.legal_moves()[0]

    plain = Plain()
    assert reseed(plain, plain, 5) is plain
    assert reseed(plain, plain, None) is plain
    rnd = RandomPlayer(1)
    assert reseed(rnd, "random", 9) is rnd
    game = Game(Rules("star", 2))
    assert rnd.select_move(game) == RandomPlayer(9).select_move(game)


def test_reseed_rebuilds_a_named_player_without_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A player without ``seed()`` given by name is rebuilt with the new seed (here the built-in
    random player, the registry being absent)."""
    monkeypatch.setattr(players, "_registry", lambda: None)
    rebuilt = reseed(CallablePlayer(first_move), "random", 2)
    assert isinstance(rebuilt, RandomPlayer)
    game = Game(Rules("star", 2))
    assert rebuilt.select_move(game) == RandomPlayer(2).select_move(game)


# --- rendering ---------------------------------------------------------------------------------

PICTURE_CONFIGS = [("star", 2), ("star", 6), ("diamond", 3), ("halma16", 2), ("halma16", 4)]


def rgb(img: np.ndarray, x: int, y: int) -> tuple[int, ...]:
    return tuple(int(v) for v in img[y, x])


def colour(c: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in c)


def base(p: Painter) -> np.ndarray:
    return p.base.reshape(p.height, p.width, 3)


def lattice(r_out: float, r_in: float | None = None) -> set[tuple[int, int]]:
    """Integer offsets (dy, dx) with r_in < distance <= r_out, by brute force."""
    k = 20
    inner = -1.0 if r_in is None else r_in * r_in
    span = range(-k, k + 1)
    return {(dy, dx) for dy in span for dx in span if inner < dx * dx + dy * dy <= r_out * r_out}


def offsets(shape: tuple[np.ndarray, np.ndarray]) -> set[tuple[int, int]]:
    dy, dx = shape
    return set(zip(dy.tolist(), dx.tolist()))


def test_disc_and_ring_are_the_lattice_points_within_their_radii() -> None:
    """``_disc(r)``: every offset at distance <= r (whole radii included); ``_ring(r_out, r_in)``:
    r_in < distance <= r_out."""
    for r in (1.0, 2.0, 2.5, 3.0, SPACING * 0.40, SPACING * 0.5):
        assert offsets(_disc(r)) == lattice(r), r
    for r_out, r_in in ((2.0, 1.0), (3.0, 2.0), (14.0, 12.0), (SPACING * 0.40, SPACING * 0.32)):
        assert offsets(_ring(r_out, r_in)) == lattice(r_out, r_in), (r_out, r_in)


@pytest.mark.parametrize("variant", ["star", "halma16"])
def test_hole_centres_and_frame(variant: str) -> None:
    """Neighbouring hole centres are SPACING pixels apart (the star's rows sqrt(3)/2 SPACING);
    the first row of holes sits MARGIN + BAR below the top, the first column MARGIN from the left
    (the square's cells: half a cell more), and MARGIN + SPACING of background follow the last."""
    p = painter(variant, 2)
    cx, cy = p.cx.tolist(), p.cy.tolist()
    s = SPACING
    if variant == "star":
        steps = {"E": (s, 0), "SE": (s // 2, None), "SW": (-(s // 2), None)}
        first_x, first_y = MARGIN, MARGIN + BAR
    else:
        steps = {"E": (s, 0), "S": (0, s), "SE": (s, s)}
        first_x, first_y = MARGIN + s // 2, MARGIN + BAR + s // 2
    pairs = 0
    for h in range(p.geometry.num_holes):
        for direction, (dx, dy) in steps.items():
            n = walk(variant, h, direction)
            if n < 0:
                continue
            pairs += 1
            assert cx[n] - cx[h] == dx, (h, direction)
            if dy is None:  # a star row is s * sqrt(3) / 2 = 24.25 pixels below the last, rounded
                assert abs(cy[n] - cy[h] - s * np.sqrt(3) / 2) <= 1, (h, direction)
            else:
                assert cy[n] - cy[h] == dy, (h, direction)
    assert pairs > 300
    assert (min(cx), min(cy)) == (first_x, first_y)
    assert (p.width, p.height) == (max(cx) + MARGIN + s, max(cy) + MARGIN + s)
    game = Game(Rules(variant, 2))
    assert render_rgb(game).shape == (p.height, p.width, 3)


@pytest.mark.parametrize(("variant", "n", "size"), [("star", 2, (468, 408)), ("star", 6, (468, 408)),
                                                     ("diamond", 3, (468, 408)), ("halma16", 4, (514, 506))])
def test_frame_sizes_and_the_first_hole_in_pixels(variant: str, n: int, size: tuple[int, int]) -> None:
    """The frames' size in pixels (a video writer fixes it from the first frame): the board with 22 pixels of
    margin on the left and above the bar, whatever the seat count."""
    p = painter(variant, n)
    assert render_rgb(Game(Rules(variant, n))).shape == (*size, 3)
    first = (22, 30) if variant != "halma16" else (36, 44)  # the square's centres: half a 28-pixel cell in
    assert (int(p.cx.min()), int(p.cy.min())) == first


@pytest.mark.parametrize(("variant", "n"), PICTURE_CONFIGS)
def test_static_board_picture(variant: str, n: int) -> None:
    """The empty board: background border and bar rows, a hole dot at every centre, each cell in
    its home seat's tint (a blend of the board colour and the seat's), other star cells in the board
    colour, other square cells a chequerboard of the board colour and a darker shade."""
    p = painter(variant, n)
    img = base(p)
    lay = layout(variant, n)
    g = lay.geometry
    bg = colour(BACKGROUND)
    for edge in (img[0], img[-1], img[:, 0], img[:, -1], *img[6:6 + BAR]):
        assert {colour(c) for c in edge} == {bg}
    home_of = {h: seat for seat, holes in enumerate(lay.homes) for h in holes}
    tints: dict[int, set[tuple[int, ...]]] = {}
    plain: dict[int, set[tuple[int, ...]]] = {0: set(), 1: set()}
    for h in range(g.num_holes):
        x, y = int(p.cx[h]), int(p.cy[h])
        assert rgb(img, x, y) == colour(HOLE)
        cell = rgb(img, x + 8, y)
        assert rgb(img, x, y + 8) == cell
        if h in home_of:
            tints.setdefault(home_of[h], set()).add(cell)
        else:
            plain[sum(g.coords[h]) % 2 if g.kind == "square" else 0].add(cell)
    assert sorted(tints) == list(range(n))
    for seat, found in tints.items():
        assert len(found) == 1, seat
        tint = np.array(found.pop())
        low, high = np.minimum(BOARD, SEAT_RGB[seat]), np.maximum(BOARD, SEAT_RGB[seat])
        assert (low <= tint).all() and (tint <= high).all() and colour(tint) != colour(BOARD), seat
    if g.kind == "star":
        assert plain == {0: {colour(BOARD)}, 1: set()}
    else:
        assert plain[0] == {colour(BOARD)} and len(plain[1]) == 1
        assert (np.array(next(iter(plain[1]))) < BOARD).all()


def test_star_cells_are_touching_discs() -> None:
    """Star cells are discs of diameter SPACING: neighbours' cells meet half way, and the
    corner beyond the top tip's disc is background."""
    p = painter("star", 2)
    img = base(p)
    for h in range(p.geometry.num_holes):
        e = walk("star", h, "E")
        if e >= 0:
            x, y = int(p.cx[h]), int(p.cy[h])
            assert all(rgb(img, x + d, y) != colour(BACKGROUND) for d in range(SPACING + 1))
    top = int(np.argmin(p.cy))
    x, y = int(p.cx[top]), int(p.cy[top])
    assert rgb(img, x, y - SPACING // 2) != colour(BACKGROUND)
    assert rgb(img, x - 12, y - 12) == colour(BACKGROUND)  # 17 pixels out: beyond the disc


def test_square_cells_tile_the_board() -> None:
    """The 16 x 16 chequerboard fills a square of 16 SPACING pixels that starts MARGIN from the
    left and MARGIN + BAR from the top, with background all round."""
    p = painter("halma16", 2)
    img = base(p)
    left, top, side = MARGIN, MARGIN + BAR, 16 * SPACING
    board = img[top:top + side, left:left + side].reshape(-1, 3)
    assert not (board == BACKGROUND).all(axis=1).any()
    bg = colour(BACKGROUND)
    for edge in (img[top - 1, left:left + side], img[top + side, left:left + side],
                 img[top:top + side, left - 1], img[top:top + side, left + side]):
        assert {colour(c) for c in edge} == {bg}


def test_seat_colours_are_the_documented_hues() -> None:
    """Pieces are red, blue, green, yellow, magenta and cyan for seats 0-5 (docs/environment.md)."""
    game = Game(Rules("star", 6))
    img = render_rgb(game)
    p = painter("star", 6)
    hues = []
    for seat in range(6):
        h = game.pieces(seat)[0]
        r, g, b = rgb(img, int(p.cx[h]), int(p.cy[h]))
        assert (r, g, b) == colour(SEAT_RGB[seat])
        hues.append(("r" if r > 150 else "") + ("g" if g > 150 else "") + ("b" if b > 150 else ""))
    assert hues == ["r", "b", "g", "rg", "rb", "gb"]


@pytest.mark.parametrize(("variant", "n"), PICTURE_CONFIGS)
def test_pieces_kings_and_the_bar(variant: str, n: int) -> None:
    """Every piece is a disc in its seat's colour with a dark rim; a king has a white centre and a
    gold ring; the bar (BAR full-width rows under the top margin) shows the seat to move."""
    game = Game(Rules(variant, n))
    p = painter(variant, n)
    for played in range(2):
        img = render_rgb(game)
        bar_rows = [y for y in range(p.height) if {colour(c) for c in img[y]} == {colour(SEAT_RGB[game.to_move])}]
        assert bar_rows == list(range(6, 6 + BAR)), played
        kings = 0
        for seat in range(n):
            for h in game.pieces(seat):
                x, y = int(p.cx[h]), int(p.cy[h])
                king = game.piece_at(h) == (seat, True)
                kings += king
                assert rgb(img, x, y) == colour(KING_CENTRE if king else SEAT_RGB[seat]), (seat, h)
                assert rgb(img, x + 6, y) == colour(KING_RING if king else SEAT_RGB[seat]), (seat, h)
                assert rgb(img, x + 10, y) == colour(RIM), (seat, h)
        assert kings == (n if game.layout.has_kings else 0)
        game.play(game.legal_moves()[0])
    assert KING_CENTRE.min() >= 240 and KING_RING[2] < 100 < min(KING_RING[0], KING_RING[1])  # white, gold


def test_bar_is_grey_once_the_game_is_over() -> None:
    game = Game(Rules("star", 2))
    game.resign(1)
    img = render_rgb(game)
    assert {colour(c) for c in img[6:6 + BAR].reshape(-1, 3)} == {colour(IDLE)}
    assert len(set(colour(IDLE))) == 1  # grey


def test_last_move_is_ringed_and_its_hop_path_drawn() -> None:
    """The last move (not an earlier one) gets black rings round its source and destination, and a
    three-pixel line along its hop path through the hole where the chain turns."""
    a = 60
    b, c = walk("star", a, "E"), walk("star", a, "E", 2)
    d, e = walk("star", c, "SE"), walk("star", c, "SE", 2)
    x0, y0 = 9, walk("star", 9, "SE")  # seat 1's earlier step, far from the chain
    game = Game.from_position(position("star", 2, {a: "0", b: "1", d: "1", x0: "1"}, to_move=1))
    game.play((x0, y0))
    game.play((a, e))
    assert game.moves[-1].path == (a, c, e)
    p = painter("star", 2)
    img = render_rgb(game)
    cx, cy = p.cx.tolist(), p.cy.tolist()
    ring = 13  # 0.43 SPACING < 13 <= 0.52 SPACING
    for h in (a, e):
        assert rgb(img, cx[h] + ring, cy[h]) == colour(HIGHLIGHT) == (0, 0, 0), h
    for h in (x0, y0):
        assert rgb(img, cx[h] + ring, cy[h]) != colour(HIGHLIGHT), h
    assert rgb(img, cx[c], cy[c]) == colour(PATH)  # the turn: an empty hole on the path
    for t in (0.2, 0.3):  # along c -> e, between c's dot and d's disc
        x, y = round(cx[c] + t * (cx[e] - cx[c])), round(cy[c] + t * (cy[e] - cy[c]))
        assert rgb(img, x, y) == colour(PATH), t
    for dx in (15, 16):  # along a -> c, outside a's ring and b's disc: three pixels thick
        column = [rgb(img, cx[a] + dx, cy[a] + dy) for dy in (-2, -1, 0, 1, 2)]
        assert column[1:4] == [colour(PATH)] * 3 and colour(PATH) not in (column[0], column[4]), dx
    ordinary = Game(Rules("star", 2))
    assert rgb(render_rgb(ordinary), cx[a], cy[a]) == colour(HOLE)  # no move yet: nothing drawn


def test_line_is_three_pixels_thick_between_centres() -> None:
    """``_line`` marks the digital straight line between two hole centres (one sample per pixel
    of its longer extent) and the pixels just above and below it."""
    p = painter("star", 2)
    a, c = 60, walk("star", 60, "E", 2)
    e = walk("star", c, "SE", 2)
    for u, v in ((a, c), (c, a), (c, e), (e, c)):
        img = np.zeros((p.height * p.width, 3), dtype=np.uint8)
        p._line(img, u, v)
        drawn = {(int(i) // p.width, int(i) % p.width) for i in np.flatnonzero(img.any(axis=1))}
        x0, y0, x1, y1 = int(p.cx[u]), int(p.cy[u]), int(p.cx[v]), int(p.cy[v])
        n = max(abs(x1 - x0), abs(y1 - y0)) + 1
        centre = {(round(y0 + i * (y1 - y0) / (n - 1)), round(x0 + i * (x1 - x0) / (n - 1))) for i in range(n)}
        assert drawn == {(y + dy, x) for y, x in centre for dy in (-1, 0, 1)}, (u, v)
        assert {colour(img[y * p.width + x]) for y, x in drawn} == {colour(PATH)}
