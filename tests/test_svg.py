"""SVG pictures of a position (``halma_env.svg.board_svg``): well-formed, complete, deterministic."""

from __future__ import annotations

import math
import pickle
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from halma_env import Game, Move, Rules
from halma_env.rules import SEAT_COUNTS
from halma_env.svg import BOARD, BOARD_DARK, HOLE, RIM, SEAT_COLORS, SvgBoard, board_svg
from tests.engine_helpers import position

NS = "{http://www.w3.org/2000/svg}"
ALL_SEATINGS = [(v, n) for v, counts in SEAT_COUNTS.items() for n in counts]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def with_class(root: ET.Element, *classes: str, tag: str | None = None) -> list[ET.Element]:
    """The elements whose class attribute holds every one of ``classes``."""
    found = []
    for el in root.iter(f"{NS}{tag}" if tag else None):
        have = el.get("class", "").split()
        if all(c in have for c in classes):
            found.append(el)
    return found


def centres(game: Game, **options) -> dict[int, tuple[float, float]]:
    """Hole -> centre, read off the hole-number labels of the picture."""
    root = parse(board_svg(game, coordinates=True, **options))
    return {int(t.text or ""): (float(t.get("x", "")), float(t.get("y", ""))) for t in with_class(root, "coord")}


def played(variant: str, seats: int, plies: int, seed: int = 0) -> Game:
    game = Game(Rules(variant, seats))
    rng = random.Random(seed)
    for _ in range(plies):
        if game.is_over:
            break
        game.play(rng.choice(game.legal_moves()))
    return game


def jumped(variant: str = "star", seats: int = 2, seed: int = 1) -> Game:
    """A game whose last move is a jump sequence of at least two hops."""
    game = Game(Rules(variant, seats))
    rng = random.Random(seed)
    for _ in range(60):
        moves = game.legal_moves()
        long = [m for m in moves if m.path is not None and len(m.path) > 2]
        if long and game.ply >= 6:
            game.play(rng.choice(long))
            if len(game.moves[-1].path or ()) > 2:
                return game
        game.play(rng.choice(moves))
    raise AssertionError("no jump sequence found")


# --- every variant and seat count ------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "seats"), ALL_SEATINGS)
@pytest.mark.parametrize("plies", [0, 12])
def test_every_hole_and_every_piece_is_drawn_in_its_seat_colour(variant: str, seats: int, plies: int) -> None:
    game = played(variant, seats, plies)
    svg = board_svg(game)
    assert isinstance(svg, str) and svg.startswith("<svg ")
    root = parse(svg)
    assert len(with_class(root, "hole")) == game.geometry.num_holes
    assert len(with_class(root, "piece")) == sum(len(game.pieces(s)) for s in range(seats))
    for seat in range(seats):
        circles = with_class(root, "piece", f"seat{seat}", tag="circle")
        assert len(circles) == len(game.pieces(seat))
        assert {c.get("fill") for c in circles} == {SEAT_COLORS[seat]}
        camps = with_class(root, "camp", f"seat{seat}")
        assert len(camps) == len(game.layout.homes[seat])
    assert not with_class(root, "coord")
    assert root.findtext(f"{NS}desc") == game.position()
    assert f"seat {game.to_move} to move" in (root.findtext(f"{NS}title") or "")
    assert bool(with_class(root, "lastmove")) == (plies > 0)


def test_holes_sit_where_the_board_numbering_puts_them() -> None:
    star = centres(Game(Rules("star", 2)))
    (x0, y0), (x60, y60), (x120, y120) = star[0], star[60], star[120]
    assert x0 == x60 == x120 and y0 < y60 < y120  # the tips and the centre on one vertical line
    assert star[10][1] == star[22][1] and star[10][0] < star[16][0] == x0 < star[22][0]  # row 4: holes 10..22
    step = star[11][0] - star[10][0]
    assert step > 0 and math.isclose(math.dist(star[10], star[23]), step, abs_tol=0.02)  # 23: below-right of 10
    square = centres(Game(Rules("halma16", 2)))
    (left, top), dx, dy = square[0], square[1][0] - square[0][0], square[16][1] - square[0][1]
    assert dx == dy > 0
    for hole, (x, y) in square.items():
        row, col = divmod(hole, 16)  # hole = row * 16 + col, row 0 at the top
        assert (x, y) == (left + col * dx, top + row * dy)


def test_the_picture_s_size_bar_and_first_hole_in_its_own_units() -> None:
    """The picture measured in its own units (28 between neighbouring holes): 8 of padding round the board,
    14 more to the first hole's centre, an 8-high bar and 8 of padding under it.  The tests above compare the
    picture with itself (ratios, the RGB frames' centres up to an offset), so a changed padding, bar or
    margin went unnoticed."""
    cases = [("star", True, "380", "447.98", (190.0, 38.0)), ("star", False, "380", "431.98", (190.0, 22.0)),
             ("halma16", True, "464", "480", (22.0, 38.0)), ("halma16", False, "464", "464", (22.0, 22.0))]
    for variant, bar, width, height, first in cases:
        game = Game(Rules(variant, 2))
        root = parse(board_svg(game, to_move=bar))
        assert (root.get("width"), root.get("height"), root.get("viewBox")) == (width, height,
                                                                                   f"0 0 {width} {height}"), variant
        [background] = with_class(root, "background")
        assert (background.get("width"), background.get("height")) == (width, height)
        assert centres(game, to_move=bar)[0] == first, (variant, bar)
        bars = with_class(root, "to-move")
        assert [(b.get("x"), b.get("y"), b.get("width"), b.get("height")) for b in bars] == (
            [("8", "8", str(int(width) - 16), "8")] if bar else [])


def test_the_star_s_cells_are_discs_and_the_square_s_a_chequerboard() -> None:
    """The star's holes sit on discs of the board's colour (the camps' tinted discs over them); the square
    board is one rect with the dark squares (odd row + column) outside the camps, camps as squares."""
    star = Game(Rules("star", 2))
    root, at = parse(board_svg(star)), centres(star)
    cells = with_class(root, "cell")
    assert [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in cells] == [at[h] for h in range(121)]
    assert {(c.tag, c.get("r"), c.get("fill")) for c in cells} == {(f"{NS}circle", "14", BOARD)}
    camps = with_class(root, "camp")
    assert len(camps) == 20 and {(c.tag, c.get("r")) for c in camps} == {(f"{NS}circle", "14")}
    assert not with_class(root, "cells") and not with_class(root, "dark")

    square = Game(Rules("halma16", 4))
    root, at = parse(board_svg(square)), centres(square)
    [board] = with_class(root, "cells", tag="rect")
    assert (board.get("x"), board.get("y"), board.get("width"), board.get("height")) == ("8", "24", "448", "448")
    homes = {h for holes in square.layout.homes for h in holes}
    dark = {h for h in range(256) if sum(divmod(h, 16)) % 2 and h not in homes}
    assert {(float(r.get("x", "")), float(r.get("y", ""))) for r in with_class(root, "cell", "dark", tag="rect")} == {
        (at[h][0] - 14, at[h][1] - 14) for h in dark}
    assert len(with_class(root, "cell", "dark")) == len(dark) == 128 - 26  # each camp of 13 holes: 6 or 7 dark
    assert {(r.get("width"), r.get("height"), r.get("fill")) for r in with_class(root, "dark")} == {
        ("28", "28", BOARD_DARK)}
    camps = with_class(root, "camp")
    assert len(camps) == len(homes) and {(c.tag, c.get("width")) for c in camps} == {(f"{NS}rect", "28")}
    assert {(float(c.get("x", "")), float(c.get("y", ""))) for c in camps} == {
        (at[h][0] - 14, at[h][1] - 14) for h in homes}
    assert not with_class(root, "cell", tag="circle")


def test_the_sizes_of_discs_and_rings() -> None:
    """A piece's disc reaches 0.40 of the spacing (its rim, 0.08, stroked inside it); the last move's rings
    0.52 (their stroke, 0.09, inside too); a hole's dot 0.13; a king's ring and centre 0.205 and 0.12."""
    game = Game.from_position(position("diamond", 2, {60: "A", 61: "0", 5: "B", 100: "1"}))
    root = parse(board_svg(game, lastmove=(61, 62)))
    assert {(c.get("r"), c.get("stroke-width")) for c in with_class(root, "piece")} == {("10.08", "2.24")}
    assert {(c.get("r"), c.get("stroke-width")) for c in with_class(root, "lastmove", tag="circle")} == {
        ("13.3", "2.52")}
    assert {c.get("r") for c in with_class(root, "hole")} == {"3.64"}
    assert {(c.get("r"), c.get("stroke-width")) for c in with_class(root, "king-ring")} == {("5.74", "1.96")}
    assert {c.get("r") for c in with_class(root, "king-centre")} == {"3.36"}


def test_the_picture_is_the_rgb_frames_picture() -> None:
    """The same palette and the same hole centres (up to the frames' pixel rounding) as rendering.py."""
    from halma_env import svg
    from halma_env.envs import rendering

    hexes = lambda rgb: "#" + "".join(f"{int(v):02x}" for v in rgb)  # noqa: E731
    assert svg.SEAT_COLORS == tuple(hexes(c) for c in rendering.SEAT_RGB)
    for name in ("BACKGROUND", "BOARD", "HOLE", "RIM", "KING_CENTRE", "KING_RING", "HIGHLIGHT", "PATH", "IDLE"):
        assert getattr(svg, name) == hexes(getattr(rendering, name)), name
    assert svg.BOARD_DARK == hexes((rendering.BOARD * 0.9).astype("uint8"))
    assert svg.SPACING == rendering.SPACING and svg.BAR == rendering.BAR
    for variant in ("star", "halma16"):
        ours = centres(Game(Rules(variant, 2)))
        frame = rendering.painter(variant, 2)
        dx, dy = ours[0][0] - frame.cx[0], ours[0][1] - frame.cy[0]
        for hole, (x, y) in ours.items():
            assert abs(x - dx - frame.cx[hole]) <= 0.51 and abs(y - dy - frame.cy[hole]) <= 0.51, (variant, hole)


# --- kings -------------------------------------------------------------------------------------------


def test_kings_are_marked() -> None:
    game = Game(Rules("diamond", 3))
    root = parse(board_svg(game))
    kings = with_class(root, "piece", "king")
    assert len(kings) == 3 and len(with_class(root, "king-ring")) == len(with_class(root, "king-centre")) == 3
    at = centres(game)
    for seat, hole in enumerate(game.layout.king_start):
        assert hole is not None
        [king] = with_class(root, "piece", "king", f"seat{seat}")
        assert (float(king.get("cx", "")), float(king.get("cy", ""))) == at[hole]
    # a king in mid-board, from SPEC §3 notation (letters are kings)
    loaded = Game.from_position(position("diamond", 2, {60: "A", 61: "0", 5: "B", 100: "1"}))
    root = parse(board_svg(loaded))
    [king0] = with_class(root, "piece", "king", "seat0")
    assert (float(king0.get("cx", "")), float(king0.get("cy", ""))) == centres(loaded)[60]
    assert len(with_class(root, "piece", "seat0")) == 2 and len(with_class(root, "piece", "seat1")) == 2
    assert not with_class(parse(board_svg(Game(Rules("star", 3)))), "king")


# --- the last move --------------------------------------------------------------------------------


def ring_holes(root: ET.Element, at: dict[int, tuple[float, float]]) -> dict[str, int]:
    where = {xy: h for h, xy in at.items()}
    return {name: where[(float(el.get("cx", "")), float(el.get("cy", "")))]
            for name in ("src", "dst") for el in with_class(root, "lastmove", name)}


def test_the_last_move_is_ringed_and_its_hop_path_drawn() -> None:
    game = jumped()
    last = game.moves[-1]
    assert last.path is not None and len(last.path) > 2
    at = centres(game)
    root = parse(board_svg(game))
    assert ring_holes(root, at) == {"src": last.src, "dst": last.dst}
    [line] = with_class(root, "lastmove", "path")
    points = [tuple(map(float, p.split(","))) for p in line.get("points", "").split()]
    assert points == [at[h] for h in last.path]
    # a step: a line from source to destination
    step = next(m for m in game.legal_moves() if m.path == (m.src, m.dst))
    game.play(step)
    root = parse(board_svg(game))
    assert ring_holes(root, at) == {"src": step.src, "dst": step.dst}
    assert len(with_class(root, "lastmove", "path")[0].get("points", "").split()) == 2
    game.undo()  # the highlight follows the game back
    assert ring_holes(parse(board_svg(game)), at) == {"src": last.src, "dst": last.dst}


def test_lastmove_can_be_switched_off_or_given() -> None:
    game = played("halma16", 2, 5)
    at = centres(game)
    for off in (None, False):
        assert not with_class(parse(board_svg(game, lastmove=off)), "lastmove")
    assert not with_class(parse(board_svg(Game(Rules("star", 2)))), "lastmove")  # nothing played yet
    for given in ("17-34", (17, 34), Move(17, 34)):
        root = parse(board_svg(game, lastmove=given))
        assert ring_holes(root, at) == {"src": 17, "dst": 34}
    before = jumped()
    before.undo()  # a jump sequence about to be played, as a hint: its path is drawn
    hint = next(m for m in before.legal_moves() if m.path is not None and len(m.path) > 2)
    line = with_class(parse(board_svg(before, lastmove=hint)), "lastmove", "path")[0]
    assert len(line.get("points", "").split()) == len(hint.path or ())
    resigned = played("star", 3, 4)
    last = resigned.moves[-1]
    resigned.resign(0)  # the last event is no move: the last move is still the one shown
    assert ring_holes(parse(board_svg(resigned)), centres(resigned)) == {"src": last.src, "dst": last.dst}


# --- numbers, the seat to move, size, colours --------------------------------------------------------


@pytest.mark.parametrize(("variant", "seats"), [("star", 6), ("diamond", 2), ("halma16", 4)])
def test_coordinates_add_one_label_per_hole(variant: str, seats: int) -> None:
    game = played(variant, seats, 6)
    root = parse(board_svg(game, coordinates=True))
    labels = with_class(root, "coord", tag="text")
    assert [t.text for t in labels] == [str(h) for h in range(game.geometry.num_holes)]
    assert not with_class(root, "hole") and len(with_class(parse(board_svg(game)), "hole")) == len(labels)
    assert len(with_class(root, "piece")) == sum(len(game.pieces(s)) for s in range(seats))  # the pieces stay


def test_a_label_on_a_piece_is_white_and_one_on_an_empty_hole_is_the_hole_s_colour() -> None:
    game = Game(Rules("star", 2))
    root = parse(board_svg(game, coordinates=True))
    occupied = {h for seat in range(2) for h in game.pieces(seat)}
    for label in with_class(root, "coord"):
        look = (label.get("fill"), label.get("stroke"))
        assert look == (("#ffffff", RIM) if int(label.text or "") in occupied else (HOLE, None)), label.text


def test_the_seat_to_move_bar() -> None:
    game = played("star", 3, 4)
    [bar] = with_class(parse(board_svg(game)), "to-move")
    assert bar.get("class") == f"to-move seat{game.to_move}" and bar.get("fill") == SEAT_COLORS[game.to_move]
    assert not with_class(parse(board_svg(game, to_move=False)), "to-move")
    over = Game(Rules("star", 2))
    over.resign(1)
    [bar] = with_class(parse(board_svg(over)), "to-move")
    assert "over" in (bar.get("class") or "") and "game over" in (parse(board_svg(over)).findtext(f"{NS}title") or "")


def test_size_sets_the_longer_side() -> None:
    for variant in ("star", "halma16"):
        game = Game(Rules(variant, 2))
        natural = parse(board_svg(game))
        _, _, w, h = map(float, natural.get("viewBox", "").split())
        assert (float(natural.get("width", "")), float(natural.get("height", ""))) == (w, h)
        root = parse(board_svg(game, size=390))
        assert root.get("viewBox") == natural.get("viewBox")
        shown = float(root.get("width", "")), float(root.get("height", ""))
        assert max(shown) == 390 and math.isclose(shown[0] / shown[1], w / h, rel_tol=1e-3)


def test_seat_colors_are_used_and_escaped() -> None:
    game = Game(Rules("star", 2))
    root = parse(board_svg(game, seat_colors=["rebeccapurple", "#0a0b0c", "ignored"]))
    assert {c.get("fill") for c in with_class(root, "piece", "seat0")} == {"rebeccapurple"}
    assert {c.get("fill") for c in with_class(root, "camp", "seat1")} == {"#0a0b0c"}
    odd = 'red" onload="alert(1)&<x>'
    root = parse(board_svg(game, seat_colors=(odd, "blue")))  # still well-formed: the text is an attribute value
    assert {c.get("fill") for c in with_class(root, "piece", "seat0")} == {odd}
    assert not any("onload" in el.attrib for el in root.iter())


# --- bad arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "error", "name"), [
    ({"size": 0}, ValueError, "size"),
    ({"size": -5}, ValueError, "size"),
    ({"size": 10**30}, ValueError, "size"),
    ({"size": 390.0}, TypeError, "size"),
    ({"size": "390"}, TypeError, "size"),
    ({"size": True}, TypeError, "size"),
    ({"coordinates": "yes"}, TypeError, "coordinates"),
    ({"coordinates": 1}, TypeError, "coordinates"),
    ({"to_move": None}, TypeError, "to_move"),
    ({"lastmove": 5}, TypeError, "lastmove"),
    ({"lastmove": (1, 2, 3)}, TypeError, "lastmove"),
    ({"lastmove": (0, 121)}, ValueError, "lastmove"),
    ({"lastmove": (-1, 3)}, ValueError, "lastmove"),
    ({"lastmove": ("a", 3)}, TypeError, "lastmove"),
    ({"lastmove": "1 to 2"}, ValueError, "lastmove"),
    ({"lastmove": Move(3, 4, (3, 9, 5))}, ValueError, "lastmove"),
    ({"seat_colors": "red"}, TypeError, "seat_colors"),
    ({"seat_colors": ["red"]}, ValueError, "seat_colors"),
    ({"seat_colors": ["red", 7]}, TypeError, r"seat_colors\[1\]"),
    ({"seat_colors": ["red", ""]}, ValueError, r"seat_colors\[1\]"),
    ({"seat_colors": ["red", "bl\x00ue"]}, ValueError, r"seat_colors\[1\]"),
])
def test_bad_arguments_are_named(options: dict, error: type[Exception], name: str) -> None:
    game = Game(Rules("star", 2))
    with pytest.raises(error, match=name):
        board_svg(game, **options)


@pytest.mark.parametrize(("options", "message"), [
    ({"size": 100_001}, "size must be a positive integer of at most 100000 pixels, got 100001"),
    ({"size": 2**63 - 1}, "size must be a positive integer of at most 100000 pixels, got 9223372036854775807"),
    ({"size": 2**63}, "size must be a positive integer of at most 100000 pixels, got an integer of 64 bits"),
    ({"coordinates": "yes"}, "coordinates must be True or False, got 'yes'"),
    ({"to_move": None}, "to_move must be True or False, got None"),
    ({"lastmove": ("a", 3)}, "lastmove's source must be a hole number 0..120, got 'a'"),
    ({"lastmove": (3, 121)}, "lastmove's destination must be a hole number 0..120, got 121"),
    ({"lastmove": Move(5, 5, (5,))}, r"lastmove's path \(5,\) does not lead from 5 to 5 over holes 0..120"),
    ({"lastmove": Move(3, 5, (3, "x", 5))}, (r"lastmove's path \(3, 'x', 5\) does not "
                                             "lead from 3 to 5 over holes 0..120")),
    ({"lastmove": Move(3, 5, (3, -1, 5))}, r"lastmove's path \(3, -1, 5\) does not lead from 3 to 5 over holes 0..120"),
    ({"lastmove": Move(3, 5, (3, 121, 5))}, (r"lastmove's path \(3, 121, 5\) does not "
                                             "lead from 3 to 5 over holes 0..120")),
    ({"seat_colors": ["red", "#" + "a" * 100]}, r"seat_colors\[1\] must be a CSS colour text such as '#d62828', got "
                                               "'#aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'"),
])
def test_the_messages_of_bad_arguments(options: dict, message: str) -> None:
    """The whole message: the argument by its name, the limits and the value (a huge size by its bit count)."""
    with pytest.raises((TypeError, ValueError), match=f"^{message}$"):
        board_svg(Game(Rules("star", 2)), **options)


def test_the_limits_themselves_are_accepted() -> None:
    """Sizes 1 and 100000 pixels, a colour of 100 characters, holes 0 and 120 as ends or on a path."""
    game = Game(Rules("star", 2))
    assert parse(board_svg(game, size=1)).get("height") == "1"
    assert parse(board_svg(game, size=100_000)).get("height") == "100000"
    long = "#" + "a" * 99
    root = parse(board_svg(game, seat_colors=[long, "blue"]))
    assert {c.get("fill") for c in with_class(root, "piece", "seat0")} == {long}
    at = centres(game)
    assert ring_holes(parse(board_svg(game, lastmove=(0, 120))), at) == {"src": 0, "dst": 120}
    [line] = with_class(parse(board_svg(game, lastmove=Move(4, 116, (4, 0, 120, 116)))), "lastmove", "path")
    assert line.get("points") == " ".join(f"{at[h][0]:g},{at[h][1]:g}" for h in (4, 0, 120, 116))


def test_a_game_is_required_and_options_are_keywords() -> None:
    with pytest.raises(TypeError, match="game must be a halma_env Game"):
        board_svg("star 2")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        board_svg(Game(), 390)  # type: ignore[misc]


def test_numpy_integers_are_accepted() -> None:
    np = pytest.importorskip("numpy")
    game = played("star", 2, 3)
    assert board_svg(game, size=np.int64(300)) == board_svg(game, size=300)
    assert board_svg(game, lastmove=(np.int64(113), np.int64(104))) == board_svg(game, lastmove="113-104")
    assert board_svg(game, coordinates=np.bool_(True)) == board_svg(game, coordinates=True)


# --- deterministic, notebook display, light to import --------------------------------------------


def test_the_same_game_gives_the_same_text() -> None:
    game = jumped("diamond", 2, seed=2)
    first = board_svg(game, coordinates=True, size=500)
    assert board_svg(game, coordinates=True, size=500) == first
    assert board_svg(game.copy(), coordinates=True, size=500) == first
    assert board_svg(pickle.loads(pickle.dumps(game)), coordinates=True, size=500) == first
    replayed = Game(Rules("diamond", 2))
    for move in game.moves:
        replayed.play((move.src, move.dst))
    assert board_svg(replayed, coordinates=True, size=500) == first


def test_the_document_is_one_element_a_line_with_text_only_in_its_texts() -> None:
    """Every line one tag, the groups in their order, and no stray text between the elements: the title,
    the description and the hole numbers are the only text."""
    game = jumped("diamond", 2)
    svg = board_svg(game, coordinates=True)
    lines = svg.split("\n")
    assert lines[-2:] == ["</svg>", ""] and all(line.startswith("<") and line.endswith(">") for line in lines[:-1])
    root = parse(svg)
    assert [(el.tag[len(NS):], el.get("class")) for el in root if el.tag != f"{NS}circle"] == [
        ("title", None), ("desc", None), ("rect", "background"), ("rect", f"to-move seat{game.to_move}"),
        ("g", "board"), ("polyline", "lastmove path"), ("g", "pieces"), ("g", "coordinates")]
    texts = {f"{NS}title", f"{NS}desc", f"{NS}text"}
    for el in root.iter():
        assert el.tag in texts or not (el.text or "").strip(), el.tag
        assert not (el.tail or "").strip(), el.tag


def test_numbers_are_written_short_and_never_as_minus_zero() -> None:
    from halma_env.svg import _n

    assert [_n(v) for v in (14.0, 14.5, 447.98, 1 / 3, 2.005, 0.0, -0.001, -0.0, -1.5)] == [
        "14", "14.5", "447.98", "0.33", "2", "0", "0", "0", "-1.5"]


def test_the_document_shows_itself_in_a_notebook() -> None:
    svg = board_svg(Game())
    assert isinstance(svg, SvgBoard) and svg._repr_svg_() == svg and type(svg._repr_svg_()) is str


def test_drawing_imports_no_numpy_or_environment_library() -> None:
    code = ("import sys\nfrom halma_env import Game\nfrom halma_env.svg import board_svg\n"
            "board_svg(Game(), coordinates=True)\n"
            "print(sorted({'numpy', 'gymnasium', 'pettingzoo'} & set(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_game_shows_itself_as_its_picture_in_a_notebook() -> None:
    """Jupyter calls ``_repr_svg_`` on the value of a cell: a game shows its board, as python-chess's does."""
    game = Game(Rules("star", 3))
    game.play(game.legal_moves()[0])
    assert game._repr_svg_() == board_svg(game)
    assert type(game._repr_svg_()) is str
