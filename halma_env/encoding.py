"""The canonical frame, action encoding and observation planes shared by every environment.

Every seat sees the board turned so that its home camp is at the bottom and its goal at the
top (star: turned by multiples of 60 degrees; square: of 90 degrees).  One network can then play
every seat.  See docs/environment.md for the full description.

- Action ``a = canonical(src) * H + canonical(dst)`` with ``H`` holes (star 121, square 256),
  where ``canonical`` maps a hole to the hole it occupies in the acting seat's frame.
- Observation: int8 array ``(rows, cols, PLANES)`` over a square grid that keeps adjacency
  (star: axial coordinates on 17 x 17, hex neighbours at offsets (0,±1), (±1,0), (1,1), (-1,-1);
  square: the 16 x 16 board itself).  Planes, in the acting seat's frame:

  ====  ===========================================================================
  0-5   pieces of the seat ``i`` places after the actor in turn order (0 = the actor);
        planes for seats that do not exist stay zero
  6     kings (diamond)
  7     the actor's goal camp
  8     the actor's home camp
  9     holes of the board
  10    holes the actor may never land on (diamond's closed camps)
  11    pieces of seats that have finished or resigned (they will not move again)
  ====  ===========================================================================
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, SupportsIndex, cast

import numpy as np

from halma_env.game import Game, IllegalMoveError, Move
from halma_env.layout import Layout, layout
from halma_env.rules import WrongTypeError, as_integer, check_game, game_name
from halma_env.suggest import shown_typed, shown_value

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from halma_env.game import MoveLike

ENCODING_VERSION = 1
MAX_SEATS = 6
PLANES = 12
PLANE_NAMES = (
    "actor", "seat+1", "seat+2", "seat+3", "seat+4", "seat+5",
    "kings", "goal", "home", "board", "closed", "retired",
)


class Encoding:
    """Lookup tables of the canonical frame for one (variant, seat count)."""

    def __init__(self, lay: Layout) -> None:
        g = lay.geometry
        self.layout = lay
        self.num_holes = g.num_holes
        self.num_actions = g.num_holes * g.num_holes
        self.grid_shape = g.grid_shape
        n = lay.num_players
        rot = np.array(g.rotations, dtype=np.int64)  # (k, hole) -> hole turned k steps
        # to_canonical[seat, hole] and back
        self.to_canonical = np.stack([rot[lay.rotation[s]] for s in range(n)])
        self.from_canonical = np.argsort(self.to_canonical, axis=1)
        rows, cols = g.grid_shape
        self.grid_index = np.array([r * cols + c for r, c in g.grid], dtype=np.int64)  # hole -> cell
        self.observation_shape = (rows, cols, PLANES)
        # static planes per seat, already in its frame: goal, home, board, closed
        static = np.zeros((n, rows * cols, PLANES), dtype=np.int8)
        for s in range(n):
            canon = self.to_canonical[s]
            for plane, holes in ((7, lay.goals[s]), (8, lay.homes[s]), (9, range(g.num_holes))):
                static[s, self.grid_index[canon[list(holes)]], plane] = 1
            open_holes = set(g.holes(lay.open_holes[s]))
            closed = [h for h in range(g.num_holes) if h not in open_holes]
            if closed:
                static[s, self.grid_index[canon[closed]], 10] = 1
        self.static_planes = static
        # hole -> index of its plane-0 entry in the flat (cells * PLANES) observation, per seat
        self._flat_cell = [(self.grid_index[self.to_canonical[s]] * PLANES).tolist() for s in range(n)]
        self._static_bytes = [static[s].tobytes() for s in range(n)]
        # shared by every env of this game (encoding() caches it): nobody may write into them
        for table in (self.to_canonical, self.from_canonical, self.grid_index, self.static_planes):
            table.flags.writeable = False

    def _seat(self, seat: object) -> int:
        """``seat`` as an int, if it is one of this game's seats (a negative index would wrap to another seat)."""
        value = as_index(seat, "seat")
        if not 0 <= value < self.layout.num_players:
            raise ValueError(f"seat must be 0..{self.layout.num_players - 1}, got {shown_value(seat)}")
        return value

    def _hole(self, hole: object, what: str) -> int:
        value = as_index(hole, what)
        if not 0 <= value < self.num_holes:
            raise ValueError(f"{what} must be a hole 0..{self.num_holes - 1}, got {shown_value(hole)}")
        return value

    def _check_game(self, game: Game) -> None:
        if not isinstance(game, Game):  # (None was an AttributeError on .rules)
            raise WrongTypeError(f"game must be a halma_env.Game, got {type(game).__name__}")
        r = game.rules
        if (r.variant, r.num_players) != (self.layout.variant, self.layout.num_players):
            raise ValueError(f"this encoding is {game_name(self.layout.variant, self.layout.num_players)}, the game "
                             f"{r.variant} with {r.num_players}")

    def encode_move(self, seat: SupportsIndex, src: SupportsIndex, dst: SupportsIndex) -> int:
        """The action of ``seat``'s move ``src`` -> ``dst`` (board holes); a ``ValueError`` naming a seat or
        hole out of range (numpy would wrap a negative one to another hole)."""
        c = self.to_canonical[self._seat(seat)]
        return int(c[self._hole(src, "src")]) * self.num_holes + int(c[self._hole(dst, "dst")])

    def move_actions(self, seat: int, moves: Iterable[MoveLike]) -> np.ndarray:
        """The actions of ``moves`` (``seat``'s, in board holes: Moves as ``Game.legal_moves()`` gives them, or
        ``(src, dst)`` pairs as the env's ``info["legal_moves"]``, or ``"src-dst"`` text) as an int64 array, in
        their order: ``encode_move`` of each, at once."""
        c = self.to_canonical[self._seat(seat)]
        if isinstance(moves, (str, Move)) or (isinstance(moves, tuple) and len(moves) == 2
                                              and not isinstance(moves[0], (tuple, str, Move))):
            # one move, which the loop below would read hole by hole or character by character
            raise ValueError(f"moves must be an iterable of moves, got one move, {shown_value(moves)}: give [move]")
        if not isinstance(moves, (list, tuple)):  # a generator, a set, ...
            moves = list(moves)
        try:
            pairs = [(m.src, m.dst) for m in moves]  # type: ignore[union-attr]
        except AttributeError:  # not all Moves (an AttributeError, not a check per move: this is the rollout's path)
            try:
                pairs = [move_holes(m) for m in moves]
            except IllegalMoveError:  # text that is no move: Move.parse says why
                raise
            except ValueError as e:
                raise ValueError(f"moves: {e}") from None
        holes = np.asarray(pairs).reshape(-1, 2)
        if pairs and not (holes.dtype.kind in "iu" and 0 <= holes.min() and holes.max() < self.num_holes):
            # (an int64 array truncated Move(113.7, 104) to 113, and c[-1] read the last hole's number)
            bad = next((p for p in pairs if not all(as_integer(h) in range(self.num_holes) for h in p)), None)
            if bad is not None:
                raise ValueError(f"moves must hold hole numbers 0..{self.num_holes - 1}, got "
                                 f"{moves[pairs.index(bad)]!r}")
            # every hole is an integer on the board, of mixed types numpy could not hold in one integer array
            holes = np.array([(as_integer(src), as_integer(dst)) for src, dst in pairs], dtype=np.int64)
        canonical = c[holes.astype(np.int64)]
        return canonical[:, 0] * self.num_holes + canonical[:, 1]

    def decode_action(self, seat: SupportsIndex, action: SupportsIndex) -> tuple[int, int]:
        """``(src, dst)`` in board holes of ``seat``'s action (an integer: a float is refused, not truncated)."""
        value = as_index(action, "action")
        if not 0 <= value < self.num_actions:
            raise ValueError(f"action must be 0..{self.num_actions - 1}, got {action}")
        cs, cd = divmod(value, self.num_holes)
        back = self.from_canonical[self._seat(seat)]
        return int(back[cs]), int(back[cd])

    def action_mask(self, game: Game, seat: int | None = None) -> np.ndarray:
        """int8 mask over actions: the legal moves of ``seat`` (default: the seat to move).
        All zero for a seat that is not to move or once the game is over."""
        self._check_game(game)
        mask = np.zeros(self.num_actions, dtype=np.int8)
        seat = game.to_move if seat is None else self._seat(seat)
        if game.is_over or seat != game.to_move:
            return mask
        c = self.to_canonical[seat]
        moves = game.legal_moves()
        if moves:
            src = np.fromiter((m.src for m in moves), dtype=np.int64, count=len(moves))
            dst = np.fromiter((m.dst for m in moves), dtype=np.int64, count=len(moves))
            mask[c[src] * self.num_holes + c[dst]] = 1
        return mask

    def observation(self, game: Game, seat: int) -> np.ndarray:
        """The planes described in the module docstring, from ``seat``'s point of view."""
        self._check_game(game)
        seat = self._seat(seat)
        n = self.layout.num_players
        rows, cols, _ = self.observation_shape
        # a copy of the static planes as a bytearray, set entry by entry and wrapped by numpy
        # without a copy: cheaper than numpy assignments for a few dozen pieces
        obs = bytearray(self._static_bytes[seat])
        flat = self._flat_cell[seat]
        status = game.status
        for i in range(n):
            other = (seat + i) % n
            retired = status[other] != "active"
            for h in game.pieces(other):
                obs[flat[h] + i] = 1
                if retired:
                    obs[flat[h] + 11] = 1
        if self.layout.has_kings:
            # every hole of game.pieces() holds a piece: piece_at never answers None for it
            piece_at = cast("Callable[[int], tuple[int, bool]]", game.piece_at)
            for s in range(n):
                for h in game.pieces(s):
                    if piece_at(h)[1]:
                        obs[flat[h] + 6] = 1
        return np.frombuffer(obs, dtype=np.int8).reshape(rows, cols, PLANES)


def as_index(value: object, what: str) -> int:
    """An integer of any integer type (numpy's, a 0-d integer array or tensor: what ``operator.index``
    takes) as a Python int; a ``TypeError`` naming ``what`` for bools, floats (refused, not truncated),
    arrays of several values and the rest."""
    number = as_integer(value)
    if number is not None:
        return number
    raise WrongTypeError(f"{what} must be an integer, got {shown_typed(value)}")


def encoding(variant: str, num_players: int) -> Encoding:
    """The encoding of ``variant`` with ``num_players`` seats (one object per game); ``ValueError`` for a game
    the engine does not play (``rules.check_game``: "star is played by 1, 2, 3, 4, 5, 6 seats, not 7"), a
    ``WrongTypeError`` for a seat count of the wrong type."""
    return _encoding(variant, check_game(variant, num_players))  # one cache entry per game: 2, not also 2.0


@cache
def _encoding(variant: str, num_players: int) -> Encoding:
    return Encoding(layout(variant, num_players))


def move_holes(move: object) -> tuple[object, object]:
    """``(src, dst)`` of a move given as ``Game.play`` takes one (a Move, a pair, ``"src-dst"`` text: Move.parse's
    IllegalMoveError for bad text), else a ValueError; the holes are checked by the caller."""
    if isinstance(move, str):
        move = Move.parse(move)
    if isinstance(move, Move):
        return move.src, move.dst
    if isinstance(move, tuple) and len(move) == 2:
        return move
    raise ValueError(f"a move is a Move, a (src, dst) pair or 'src-dst' text, got {shown_value(move)}")
