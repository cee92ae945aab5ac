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
from halma_env.svg import SEAT_COLORS, SvgBoard, board_svg
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
