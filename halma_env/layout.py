"""Where every seat starts and where it must go, for a given variant and seat count (SPEC §1-2)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from halma_env import board
from halma_env.board import Geometry
from halma_env.rules import check_game

STAR_HOME_POINTS = {1: (0,), 2: (0, 3), 3: (0, 2, 4), 4: (0, 1, 3, 4), 5: (0, 1, 2, 3, 4), 6: (0, 1, 2, 3, 4, 5)}
DIAMOND_HOME_POINTS = {2: (0, 2), 3: (0, 2, 4)}
SQUARE_HOME_CORNERS = {2: (0, 2), 4: (0, 1, 2, 3)}
SQUARE_CAMP_ROWS = {2: (5, 5, 4, 3, 2), 4: (4, 4, 3, 2)}


@dataclass(frozen=True, eq=False)
class Layout:
    variant: str
    num_players: int
    geometry: Geometry
    homes: tuple[tuple[int, ...], ...]  # seat -> home camp holes
    goals: tuple[tuple[int, ...], ...]  # seat -> goal camp holes
    start: tuple[tuple[int, ...], ...]  # seat -> holes of its pieces at the start (king included)
    king_start: tuple[int | None, ...]  # seat -> king's start hole (diamond) or None
    goal_tip: tuple[int | None, ...]  # seat -> where its king must end (diamond) or None
    open_holes: tuple[int, ...]  # seat -> bit set of holes its pieces may land on
    rotation: tuple[int, ...]  # seat -> clockwise turns that bring its home to the bottom
    max_pieces: int

    @property
    def has_kings(self) -> bool:
        return self.variant == "diamond"


_LAYOUTS: dict[tuple[str, int], Layout] = {}  # (variant, seats) -> the layout every game of it shares
# (variant, a seat count's type other than int, the count) -> its layout, once checked: numpy's integers (2.0 and
# True, which hash as 2 and 1, are never checked in, so never found)
_CHECKED: dict[tuple[str, type, object], Layout] = {}


def layout(variant: str, num_players: int) -> Layout:
    """The layout of ``variant`` with ``num_players`` seats, one shared object per game.  A game the engine
    does not play (an unknown variant, a seat count the variant has not, a seat count that is no integer:
    2.0, True, "2") is an error in ``Rules``' words (``rules.check_game``: a ``WrongTypeError`` for a seat
    count or variant of the wrong type, else a ``ValueError``), naming the variant and its seat counts; numpy's
    integers are seat counts."""
    try:  # (the common call: one type test and one dict lookup; the checks run once per game kind)
        if type(num_players) is int:
            return _LAYOUTS[variant, num_players]
        return _CHECKED[variant, type(num_players), num_players]
    except (KeyError, TypeError):  # not made yet, or unhashable (a list)
        pass
    seats = check_game(variant, num_players)
    lay = _LAYOUTS.get((variant, seats))
    if lay is None:  # two threads may both make it: setdefault keeps one, which both return
        lay = _LAYOUTS.setdefault((variant, seats), _make(variant, seats))
    if type(num_players) is not int:
        with contextlib.suppress(TypeError):  # (a 0-d numpy array is a seat count, but unhashable)
            _CHECKED[variant, type(num_players), num_players] = lay
    return lay


def _make(variant: str, num_players: int) -> Layout:
    if variant == "star":
        g = board.star()
        points = STAR_HOME_POINTS[num_players]
        homes = tuple(board.star_point(p) for p in points)
        goals = tuple(board.star_point((p + 3) % 6) for p in points)
        return Layout(
            variant, num_players, g, homes, goals, homes, (None,) * num_players, (None,) * num_players,
            (g.all_holes,) * num_players, tuple((6 - p) % 6 for p in points), 10,
        )
    if variant == "diamond":
        g = board.star()
        points = DIAMOND_HOME_POINTS[num_players]
        homes = tuple(board.diamond_camp(p) for p in points)
        goals = tuple(board.diamond_camp((p + 3) % 6) for p in points)
        open_holes = []
        for p in points:
            closed: set[int] = set()
            for q in range(6):
                if q not in (p, (p + 3) % 6):
                    closed.update(board.star_point(q))
            open_holes.append(g.all_holes & ~g.mask(closed))
        return Layout(
            variant, num_players, g, homes, goals, homes,
            tuple(board.star_tip(p) for p in points),
            tuple(board.star_tip((p + 3) % 6) for p in points),
            tuple(open_holes), tuple((6 - p) % 6 for p in points), 15,
        )
    if variant == "halma16":
        g = board.square()
        corners = SQUARE_HOME_CORNERS[num_players]
        rows = SQUARE_CAMP_ROWS[num_players]
        homes = tuple(board.square_camp(c, rows) for c in corners)
        goals = tuple(board.square_camp((c + 2) % 4, rows) for c in corners)
        return Layout(
            variant, num_players, g, homes, goals, homes, (None,) * num_players, (None,) * num_players,
            (g.all_holes,) * num_players, tuple((4 - c) % 4 for c in corners), sum(rows),
        )
    raise AssertionError(f"game_problem passed the unknown variant {variant!r}")  # pragma: no cover
