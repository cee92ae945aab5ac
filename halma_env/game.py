"""The game: positions, legal moves, playing and undoing them, and how a game ends.

Move generation follows a fact about the hop graph (see docs/engine.md): for ordinary pieces
the holes a jump sequence can reach are the connected components, in the graph whose edges
join two empty holes with a piece between them, of the piece's first-hop landings.  So one
search per component serves every piece of the seat.  Kings (diamond) jump rows and are
searched on their own.
"""

from __future__ import annotations

import operator
import random
from bisect import insort
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, NamedTuple, SupportsIndex

from halma_env.assignment import min_cost_assignment
from halma_env.layout import Layout, layout
from halma_env.rules import Rules, WrongTypeError, as_integer, game_name, integer_argument
from halma_env.suggest import shown_value

ACTIVE, FINISHED, RESIGNED = "active", "finished", "resigned"


class IllegalMoveError(ValueError):
    """A move that is malformed or not legal in the position; the game is left unchanged."""


class NoMoveToUndo(IllegalMoveError, IndexError):
    """``Game.undo()`` with nothing to take back.  An IllegalMoveError, as a Game's other refusals, and an
    IndexError, as python-chess's ``Board.pop()`` on an empty move stack raises (and ``list.pop()``)."""


class SeatTypeError(IllegalMoveError, WrongTypeError):
    """``Game.resign(seat)`` with a seat that is no integer (True, 1.0, "1"): an IllegalMoveError, as every other
    refusal of a move or resignation (the envs, the arena and the record reader catch that), and a
    ``WrongTypeError``, a ``TypeError`` by Python's convention for an argument of the wrong type (so also
    the ValueError it was), as ``NoMoveToUndo`` is an IllegalMoveError and the IndexError of python-chess."""


class MoveTypeError(IllegalMoveError, WrongTypeError):
    """A move of the wrong type (``Game.play(1.5)``, ``Move.parse(5)``, a pair of holes that are no integers such as
    ``(1.5, 2)`` or ``(True, 2)``): an IllegalMoveError, as every other malformed move (what the envs, the arena and
    the record reader catch), and a ``WrongTypeError``, a ``TypeError`` by Python's convention, as ``SeatTypeError``
    is for ``Game.resign``."""


class Move:
    """A move from hole ``src`` to hole ``dst``.

    Two moves are equal when source and destination are; ``path`` is one shortest sequence of
    holes the piece visits (``(src, dst)`` for a step), worked out when first asked for.  Moves
    are hashable and ordered by ``(src, dst)`` against other moves (``<``, ``<=``, ``>``, ``>=``;
    against anything else a TypeError).  Treat them as values: the steps ``legal_moves()`` hands
    out are shared and refuse assignment; the rest are plain slots, as python-chess's moves are
    plain dataclasses (a read-only property would cost every reader of ``src`` ~30 ns).
    """

    __slots__ = ("src", "dst", "_path", "_ctx")

    def __init__(self, src: int, dst: int, path: tuple[int, ...] | None = None, _ctx=None) -> None:
        self.src = src
        self.dst = dst
        self._path = path
        self._ctx = _ctx

    @property
    def path(self) -> tuple[int, ...] | None:
        path = getattr(self, "_path", None)  # legal_moves() leaves it unset
        if path is None and self._ctx is not None:
            path = self._path = _find_path(self._ctx, self.src, self.dst)
        return path

    @classmethod
    def parse(cls, text: str) -> Move:
        """``"src-dst"`` -> Move."""
        if not isinstance(text, str):
            raise MoveTypeError(f"a move is written 'src-dst' with two hole numbers, got {type(text).__name__}")
        from halma_env.notation import SURROUNDING_SPACE, is_ascii_number, quoted

        numbers = [part.strip(SURROUNDING_SPACE) for part in text.split("-")]
        if len(numbers) != 2 or not all(is_ascii_number(number) for number in numbers):
            # (quoted: cut short, the text may be a whole line of input)
            raise IllegalMoveError(f"a move is written 'src-dst' with two hole numbers, got {quoted(text)}")
        try:
            return cls(int(numbers[0]), int(numbers[1]))
        except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
            digits = max(len(number) for number in numbers)
            raise IllegalMoveError(f"a move's hole number is far too long ({digits} digits)") from None

    def __iter__(self) -> Iterator[int]:
        yield self.src
        yield self.dst

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Move):
            return self.src == other.src and self.dst == other.dst
        if isinstance(other, tuple):
            return (self.src, self.dst) == other
        return NotImplemented

    # ordered against moves only (a tuple compares equal but does not order: a TypeError)
    def __lt__(self, other: Move) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.src, self.dst) < (other.src, other.dst)

    def __le__(self, other: Move) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.src, self.dst) <= (other.src, other.dst)

    def __gt__(self, other: Move) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.src, self.dst) > (other.src, other.dst)

    def __ge__(self, other: Move) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.src, self.dst) >= (other.src, other.dst)

    def __hash__(self) -> int:
        return hash((self.src, self.dst))

    def __repr__(self) -> str:
        return f"Move({self.src}, {self.dst})"

    def __str__(self) -> str:
        return f"{self.src}-{self.dst}"

    def __reduce__(self):
        # pickle/copy the path, not the position it came from (and always as a plain Move)
        return (Move, (self.src, self.dst, self.path))


class _StepMove(Move):
    """A step to an adjacent hole: its path is ``(src, dst)`` in every position, so one shared
    object per (src, dst) serves every ``legal_moves()`` list (see ``_step_moves``).  Shared, so
    read-only."""

    __slots__ = ()

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("this Move is shared by every legal_moves() list and cannot be changed")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("this Move is shared by every legal_moves() list and cannot be changed")


class _MadeMove(Move):
    """A move made by ``legal_moves()``, which fills in its slots: with the C-level ``__init__``
    ``_MadeMove()`` costs a quarter less than ``object.__new__(Move)``."""

    __slots__ = ()
    __init__ = object.__init__


def _step_move(src: int, dst: int) -> _StepMove:
    move = object.__new__(_StepMove)
    for name, value in (("src", src), ("dst", dst), ("_path", (src, dst)), ("_ctx", None)):
        object.__setattr__(move, name, value)
    return move


MoveLike = Move | tuple | str
_DST = operator.attrgetter("dst")


class Progress(NamedTuple):
    """How far a seat has come: pieces in its goal (more is better), then the least total
    number of single steps that would bring its pieces onto its goal holes on an empty board."""

    in_goal: int
    distance: int

    def key(self) -> tuple[int, int]:
        """Smaller is better."""
        return (-self.in_goal, self.distance)

    # ordered by how far along, not as plain tuples (which would call the longer distance the greater):
    # a < b when b is further along, so max() of several is the best and sorted() goes worst first
    def __lt__(self, other: tuple[Any, ...]) -> bool:
        return self.key() > _progress_key(other)

    def __le__(self, other: tuple[Any, ...]) -> bool:
        return self.key() >= _progress_key(other)

    def __gt__(self, other: tuple[Any, ...]) -> bool:
        return self.key() < _progress_key(other)

    def __ge__(self, other: tuple[Any, ...]) -> bool:
        return self.key() <= _progress_key(other)


def _progress_key(other: Any) -> tuple[int, int]:
    if not isinstance(other, Progress):  # a plain tuple would be compared in the other order
        raise TypeError(f"a Progress is ordered against another Progress, not {type(other).__name__}")
    return other.key()


class Event(NamedTuple):
    """One entry of ``Game.history``: ``kind`` is "move", "pass" or "resign"."""

    kind: str
    seat: int
    move: Move | None = None


@dataclass(frozen=True, eq=False)
class _Tables:
    """Per-layout lookup tables indexed by bit index."""

    layout: Layout
    neighbours: tuple[int, ...]  # bit -> bit set of adjacent holes
    hops: tuple[tuple[tuple[int, int], ...], ...]  # bit -> ((middle bit, landing bit), ...)
    up_shifts: tuple[int, ...]
    down_shifts: tuple[int, ...]
    goal_masks: tuple[int, ...]
    tip_masks: tuple[int, ...]
    lock_masks: tuple[int, ...]  # halma16: a piece starting its turn here may not leave
    hop_window: int  # see _hop_table
    hop_pattern: int
    hop_table: dict[int, int]
    step_moves: tuple  # see _step_moves
    step_span: tuple[int, int]  # the lowest and highest shift: a hole's neighbours lie within them


def _hop_table(shifts: tuple[int, ...]) -> tuple[int, int, dict[int, int]]:
    """Hops out of one hole by table lookup.

    For a hole at bit c and the set J of pieces that may be jumped, ``J >> (c - window)`` puts
    the hole's neighbour in direction s at bit ``s + window``; masked by ``pattern`` it says which
    neighbours hold a jumpable piece.  ``table`` maps that to the landings behind them (bit
    ``2s + 2 window``), to be shifted by ``c - 2 window`` back onto the board.  The two-hole
    padding keeps ``c - 2 window`` >= 0 for every hole; landings off the board are dropped by
    the caller's masks."""
    window = -min(shifts)
    pattern = sum(1 << (s + window) for s in shifts)
    table = {}
    for subset in range(1 << len(shifts)):
        chosen = [s for i, s in enumerate(shifts) if subset >> i & 1]
        table[sum(1 << (s + window) for s in chosen)] = sum(1 << (2 * s + 2 * window) for s in chosen)
    return window, pattern, table


@cache
def _step_moves(g) -> tuple[dict[int, tuple[_StepMove, ...]] | None, ...]:
    """Bit -> {key: the step Moves to the neighbours in key}, with one shared ``_StepMove`` per
    (src, dst), ascending by dst.  As in ``_hop_table``, ``(dests >> (bit - window)) & pattern``
    is the key of the neighbours in a destination set ``dests``; jump landings never sit on a
    neighbour's bit (2s is no direction), so the key picks out exactly the steps."""
    window = -min(g.shifts)
    hob = g.hole_of_bit
    keys: dict[int, int] = {}  # one int object per key for every table: fewer cache lines to read
    tables: list = [None] * len(hob)
    # every Move first, so that they lie together in memory (each list touches ~34 of them)
    near = {b: sorted((b + s, 1 << (s + window)) for s in g.shifts if hob[b + s] >= 0) for b in g.bit}
    steps = {b: [(key_bit, _step_move(hob[b], hob[x])) for x, key_bit in near[b]] for b in g.bit}
    for b in g.bit:
        moves = steps[b]
        table = {}
        for subset in range(1 << len(moves)):
            chosen = [m for i, m in enumerate(moves) if subset >> i & 1]
            key = sum(key_bit for key_bit, _ in chosen)
            table[keys.setdefault(key, key)] = tuple(move for _, move in chosen)
        tables[b] = table
    return tuple(tables)


@cache
def _tables(variant: str, num_players: int) -> _Tables:
    lay = layout(variant, num_players)
    g = lay.geometry
    size = len(g.hole_of_bit)
    neighbours = [0] * size
    hops: list[tuple] = [()] * size
    for h, b in enumerate(g.bit):
        neighbours[b] = g.mask(g.neighbours[h])
        pairs = []
        for s in g.shifts:
            if g.hole_of_bit[b + s] >= 0 and g.hole_of_bit[b + 2 * s] >= 0:
                pairs.append((1 << (b + s), 1 << (b + 2 * s)))
        hops[b] = tuple(pairs)
    goal_masks = tuple(g.mask(goal) for goal in lay.goals)
    assert min(g.bit) >= -2 * min(g.shifts), "the padding must keep hop-table shifts non-negative"
    window, pattern, table = _hop_table(g.shifts)
    return _Tables(
        layout=lay,
        neighbours=tuple(neighbours),
        hops=tuple(hops),
        up_shifts=tuple(s for s in g.shifts if s > 0),
        down_shifts=tuple(-s for s in g.shifts if s < 0),
        goal_masks=goal_masks,
        tip_masks=tuple(g.mask([t]) if t is not None else 0 for t in lay.goal_tip),
        lock_masks=goal_masks if variant == "halma16" else (0,) * num_players,
        hop_window=window,
        hop_pattern=pattern,
        hop_table=table,
        step_moves=_step_moves(g),
        step_span=(min(g.shifts), max(g.shifts)),
    )


class Game:
    """A game in progress: the position, whose turn it is, the history and the outcome.

    Its state, read-only to callers (``play``, ``undo``, ``resign`` change it): ``rules``;
    ``to_move``, the seat to move; ``ply``, plies played (from the position's own count for a
    loaded one); ``end_reason`` (None while the game goes on); ``is_over``; ``places`` and
    ``status`` per seat; ``history`` (events) and ``moves``; ``layout`` and ``geometry``, the board.

    >>> game = Game(Rules("star", 2))
    >>> len(game.legal_moves())
    14
    >>> game.play("113-104")
    """

    def __init__(self, rules: Rules | None = None) -> None:
        if rules is None:
            rules = Rules()
        elif not isinstance(rules, Rules):
            raise WrongTypeError(f"Game takes a Rules, e.g. Game(Rules('star', 2)), got {shown_value(rules)}")
        lay = layout(rules.variant, rules.num_players)
        pieces = [lay.geometry.mask(holes) for holes in lay.start]
        kings = lay.geometry.mask(k for k in lay.king_start if k is not None)
        self._setup(rules, pieces, kings, rules.first_seat, 0)

    # --- construction -----------------------------------------------------------------

    def _setup(self, rules: Rules, pieces: list[int], kings: int, to_move: int, ply: int) -> None:
        self._rules = rules
        self._t = _tables(rules.variant, rules.num_players)
        self.layout = self._t.layout
        self.geometry = self.layout.geometry
        n = rules.num_players
        self._pieces = pieces
        # the bit indices of each seat's pieces, ascending, kept in step with ``_pieces`` by
        # _move_piece: reading them off the bit set costs move generation ~15%
        g = self.geometry
        self._bits = [[g.bit[h] for h in g.holes(p)] for p in pieces]
        self._kings = kings
        self._occ = 0
        for p in pieces:
            self._occ |= p
        self.to_move = to_move
        self.ply = ply
        self._places: list[int | None] = [None] * n
        self._status = [ACTIVE] * n
        self.end_reason: str | None = None
        self._top, self._bottom = 1, n
        self._history: list[tuple] = []  # (events, undo snapshot, board change, repetition key)
        self._repetitions: Counter = Counter()
        self._stall = 0
        self._best = [self.progress(s).key() for s in range(n)] if rules.stall_limit else []
        self._gen: dict[int, dict[int, int]] = {}
        self._initial_passes: list[int] = []
        # seats that already meet their goal (a loaded position) share the top places
        done = [s for s in range(n) if self._pieces[s] and self._has_finished(s)]
        for s in done:
            self._status[s] = FINISHED
            self._places[s] = self._top
        self._top += len(done)
        if done and not rules.play_to_end and n >= 3:
            self._end_by_progress("first_finish")  # the first finish has happened: as in _after_move
            return
        if self._check_decided("finished"):
            return
        passes: list[int] = []
        if self._status[to_move] != ACTIVE or not self._has_moves(to_move):
            if self._status[to_move] == ACTIVE:
                passes.append(to_move)
            passes += self._advance()
        self._initial_passes = passes
        if self.end_reason is None and not self._limit_reached():  # SPEC §4: after move_limit plies it stops
            self._record_position()

    @classmethod
    def from_position(cls, text: str, **options: Any) -> Game:
        """A game from SPEC §3 notation; ``options`` override the rule defaults.

        The text gives the variant, the seat count and the seat to move, which is this game's
        first seat: ``rules.first_seat`` is set from it, and an explicit ``first_seat`` that
        disagrees is an error (as are ``variant`` and ``num_players`` options).
        """
        from halma_env.notation import parse_position

        fixed = [k for k in ("variant", "num_players") if k in options]
        if fixed:
            given = ", ".join(f"{k}={options[k]!r}" for k in fixed)
            raise ValueError(f"variant and num_players come from the position text, not from options (got {given})")
        variant, n, pieces, kings, to_move, ply = parse_position(text)
        explicit = "first_seat" in options
        options.setdefault("first_seat", to_move)
        rules = Rules(variant, n, **options)  # validates first_seat's range
        if explicit and rules.first_seat != to_move:
            raise ValueError(
                f"first_seat is {rules.first_seat}, but the position has seat {to_move} to move "
                "(the position says who moves; leave first_seat out)"
            )
        game = cls.__new__(cls)
        game._setup(rules, pieces, kings, to_move, ply)
        return game

    def position(self) -> str:
        """The position in SPEC §3 notation (with the ply count)."""
        from halma_env.notation import write_position

        return write_position(self)

    def copy(self) -> Game:
        """An independent copy (history included), of the same class as this game (a subclass's
        own attributes are copied shallowly: override ``copy`` to copy them deeper)."""
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._pieces = list(self._pieces)
        other._bits = [list(b) for b in self._bits]
        other._places = list(self._places)
        other._status = list(self._status)
        other._history = list(self._history)
        other._repetitions = Counter(self._repetitions)
        other._best = list(self._best)
        other._gen = dict(self._gen)
        return other

    def __copy__(self) -> Game:
        """``copy.copy(game)`` is ``game.copy()`` (a subclass's override included): it must not share the
        board with the original (python-chess does the same)."""
        return self.copy()

    def __getstate__(self) -> dict:
        """Pickle the position, outcome and history, not the lookup tables: they are shared by
        every game of a variant and seat count (``_tables`` caches them) and weigh ~200 kB."""
        state = dict(self.__dict__)
        for name in ("_t", "layout", "geometry"):
            del state[name]
        state["_gen"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        if "rules" in state:  # pickled when rules was a plain attribute
            state = dict(state)
            state["_rules"] = state.pop("rules")
        self.__dict__.update(state)
        self._t = _tables(self._rules.variant, self._rules.num_players)
        self.layout = self._t.layout
        self.geometry = self.layout.geometry

    # --- reading the position ---------------------------------------------------------

    @property
    def rules(self) -> Rules:
        """The rules this game is played by: read-only (an assignment is an AttributeError), since the board,
        its tables and the places were set up for them; ``Game(rules)`` or ``Game.from_position(text, ...)``
        starts a game under other rules."""
        return self._rules

    @property
    def num_players(self) -> int:
        """The seat count of the rules."""
        return self._rules.num_players

    @property
    def is_over(self) -> bool:
        """Whether the game has ended (``end_reason`` says how)."""
        return self.end_reason is not None

    @property
    def places(self) -> list[int | None]:
        """One entry per seat: its place (1 = best, ties share) or None while undecided."""
        return list(self._places)

    @property
    def status(self) -> list[str]:
        """One entry per seat: "active", "finished" or "resigned"."""
        return list(self._status)

    @property
    def history(self) -> list[Event]:
        """Every move, automatic pass and resignation, in order."""
        out = [Event("pass", s) for s in self._initial_passes]
        for events, _, _, _ in self._history:
            out.extend(events)
        return out

    def recent_events(self) -> Iterator[Event]:
        """``history`` newest first, read as it is needed: a look back a few moves (the bots' memory of recent
        arrangements) costs those moves, not the whole game's list, built anew."""
        for events, _, _, _ in reversed(self._history):
            yield from reversed(events)
        for seat in reversed(self._initial_passes):
            yield Event("pass", seat)

    @property
    def moves(self) -> list[Move]:
        """The moves played, in order (``history`` without passes and resignations); a new list each time."""
        return [e.move for e in self.history if e.move is not None]  # only "move" events carry one

    def pieces(self, seat: SupportsIndex) -> list[int]:
        """The holes of a seat's pieces, ascending."""
        if type(seat) is not int or not 0 <= seat < self._rules.num_players:
            seat = self._check_seat(seat)
        hob = self.geometry.hole_of_bit
        return sorted([hob[b] for b in self._bits[seat]])

    def piece_at(self, hole: SupportsIndex) -> tuple[int, bool] | None:
        """``(seat, is_king)`` of the piece on ``hole``, or None if it is empty."""
        if type(hole) is not int or not 0 <= hole < self.geometry.num_holes:
            hole = self._check_hole(hole)
        m = 1 << self.geometry.bit[hole]
        for seat, p in enumerate(self._pieces):
            if p & m:
                return seat, bool(self._kings & m)
        return None

    def board(self) -> list[tuple[int, bool] | None]:
        """``piece_at`` for every hole."""
        cells: list[tuple[int, bool] | None] = [None] * self.geometry.num_holes
        for seat in range(self.num_players):
            for h in self.pieces(seat):
                cells[h] = (seat, bool(self._kings >> self.geometry.bit[h] & 1))
        return cells

    def progress(self, seat: SupportsIndex) -> Progress:
        """Pieces of ``seat`` in its goal and its remaining distance (SPEC §4)."""
        if type(seat) is not int or not 0 <= seat < self._rules.num_players:
            seat = self._check_seat(seat)
        t = self._t
        own = self._pieces[seat]
        king = own & self._kings
        in_goal = bin(own & t.goal_masks[seat]).count("1")
        return _progress(self._rules.variant, self.num_players, seat, own, king, in_goal)

    # --- legal moves ------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """The legal moves of the seat to move, sorted by (src, dst); empty once the game is over."""
        if self.end_reason is not None:
            return []
        seat = self.to_move
        t = self._t
        masks = self._move_masks(seat)  # ascending by source
        hob = self.geometry.hole_of_bit
        ctx = (t, self._pieces[seat], self._occ, self._kings, seat)
        step_moves, neighbours, window, pattern = t.step_moves, t.neighbours, t.hop_window, t.hop_pattern
        low, high = t.step_span
        made_move = _MadeMove
        out: list[Move] = []
        for b, d in masks.items():
            # steps are shared objects looked up in a table (most moves are steps); the other
            # destinations are made here, each remembering this position for its path
            steps = step_moves[b][(d >> (b - window)) & pattern]
            rest = d & ~neighbours[b]
            if not rest:
                out += steps
                continue
            src = hob[b]
            made = []
            highest = rest.bit_length() - 1
            while rest:  # highest bit first: one int operation fewer per bit than rest & -rest
                top = rest.bit_length() - 1
                rest ^= 1 << top
                # filling the slots directly costs half of calling Move(...) (no __init__ frame)
                move = made_move()
                move.src = src
                move.dst = hob[top]
                move._ctx = ctx
                made.append(move)
            # keep (src, dst) order; a sort only when jumps land among the steps (``top`` is now
            # the lowest landing)
            if highest < b + low:
                made.reverse()
                out += made
                out += steps
            elif top > b + high:
                made.reverse()
                out += steps
                out += made
            else:
                made += steps
                made.sort(key=_DST)
                out += made
        return out

    def legal_destinations(self, src: SupportsIndex) -> list[int]:
        """Where the piece on ``src`` can go this turn (empty if it is not the mover's)."""
        if type(src) is not int or not 0 <= src < self.geometry.num_holes:
            src = self._check_hole(src)
        if self.end_reason is not None:
            return []
        return self.geometry.holes(self._move_masks(self.to_move).get(self.geometry.bit[src], 0))

    def count_moves(self) -> int:
        """``len(legal_moves())`` without building the list."""
        if self.end_reason is not None:
            return 0
        return sum(bin(d).count("1") for d in self._move_masks(self.to_move).values())

    def _has_moves(self, seat: int) -> bool:
        return bool(self._move_masks(seat))

    def _move_masks(self, seat: int) -> dict[int, int]:
        """Source bit -> bit set of destinations, for every piece of ``seat`` that can move,
        ascending by source bit (``_bits`` is kept sorted), as ``legal_moves`` needs them."""
        cached = self._gen.get(seat)
        if cached is not None:
            return cached
        t = self._t
        occ = self._occ
        kings = self._kings
        allowed = ~occ & t.layout.open_holes[seat]
        own = self._pieces[seat]
        lock = t.lock_masks[seat]
        bits = self._bits[seat]
        if kings:  # diamond: kings are not jumped, and the king is searched on its own
            jumpable = occ & ~kings
            ordinary = own & ~kings
            if ordinary != own:
                bits = [b for b in bits if ordinary >> b & 1]
        else:
            jumpable, ordinary = occ, own
        if lock and ordinary & lock:
            result = self._gen_ordinary(ordinary & ~lock, [b for b in bits if not lock >> b & 1], allowed, jumpable)
            result |= self._gen_ordinary(ordinary & lock, [b for b in bits if lock >> b & 1], allowed & lock, jumpable)
            result = dict(sorted(result.items()))
        else:
            result = self._gen_ordinary(ordinary, bits, allowed, jumpable)
        if 0 in result.values():  # pieces that cannot move are left out (rare: test before copying)
            result = {b: d for b, d in result.items() if d}
        king = own & kings
        if king:
            b = king.bit_length() - 1
            dest = _king_destinations(t, b, occ & ~king, kings, allowed | king) & ~king
            if dest:
                result[b] = dest
                result = dict(sorted(result.items()))
        self._gen[seat] = result
        return result

    def _gen_ordinary(self, pieces: int, bits, allowed: int, jumpable: int) -> dict[int, int]:
        """Bit index -> destinations of each of the ordinary ``pieces`` (whose bit indices are
        ``bits``) landing only on ``allowed`` holes; 0 for a piece that cannot move.

        Hops are symmetric (a piece hops from a to b over m exactly when it could hop back), so
        the pieces that can enter a component are the ones a single hop away from it: the
        search that finds a component also finds them.
        """
        t = self._t
        neighbours = t.neighbours
        dests = {b: neighbours[b] & allowed for b in bits}
        # first hops of all the pieces at once: a hop by shift k from a set f lands on
        # (f << 2k) & (jumpable << k)
        landings = 0
        for k in t.up_shifts:
            landings |= (pieces << 2 * k) & (jumpable << k)
        for k in t.down_shifts:
            landings |= (pieces >> 2 * k) & (jumpable >> k)
        landings &= allowed
        # Each component is searched hole by hole.  The hops out of hole c come from a table
        # indexed by the pieces around c (`_hop_table`): ~5 operations on ints instead of one
        # shift-and-mask per direction.
        window, pattern, table = t.hop_window, t.hop_pattern, t.hop_table
        window2 = 2 * window
        free = allowed  # allowed holes in no component yet (components are disjoint)
        # bits are taken highest first (x.bit_length() - 1): one int operation fewer than x & -x
        while landings:
            c = landings.bit_length() - 1
            comp = 1 << c
            # every hole one hop from the component, pieces included
            touched = table[(jumpable >> (c - window)) & pattern] << (c - window2)
            new = touched & free
            if not new:
                # a component of one hole (the most common case): no other search can reach it
                # (hops are symmetric), so it need not leave ``free``
                landings ^= comp
            else:  # more holes: search them
                free ^= comp
                stack = []
                while new:
                    free ^= new
                    comp |= new
                    while new:
                        x = new.bit_length() - 1
                        new ^= 1 << x
                        stack.append(x)
                    while stack and not new:
                        c = stack.pop()
                        grown = table[(jumpable >> (c - window)) & pattern] << (c - window2)
                        touched |= grown
                        new = grown & free
                landings &= free
            entering = touched & pieces
            while entering:
                p = entering.bit_length() - 1
                entering ^= 1 << p
                dests[p] |= comp
        return dests

    # --- playing ----------------------------------------------------------------------

    def is_legal(self, move: MoveLike) -> bool:
        """Whether ``play(move)`` would play it: one bit test, without building ``legal_moves()``.  A
        malformed move (out-of-range holes, bad text) or a finished game gives False, not an error."""
        try:
            src, dst = self._parse(move)
        except ValueError:  # IllegalMoveError, and Move.parse's
            return False
        return bool(self._move_masks(self.to_move).get(self.geometry.bit[src], 0) >> self.geometry.bit[dst] & 1)

    def play(self, move: MoveLike) -> None:
        """Play a legal move of the seat to move (a Move, a (src, dst) pair or "src-dst").

        Raises IllegalMoveError, leaving the game unchanged, if it is malformed or illegal.
        """
        src, dst = self._parse(move)
        seat = self.to_move
        sb, db = self.geometry.bit[src], self.geometry.bit[dst]
        dests = self._move_masks(seat).get(sb, 0)
        if not dests >> db & 1:
            raise IllegalMoveError(self._why_illegal(src, dst))
        ctx = (self._t, self._pieces[seat], self._occ, self._kings, seat)
        # keep a given Move's path only if it was generated in this very position, for these holes (a Move's
        # slots can be assigned: one whose src or dst changed after its path was found must not keep that path)
        played: Move
        path = getattr(move, "_path", None)  # (legal_moves() leaves it unset)
        if type(move) is _StepMove or (isinstance(move, Move) and move._ctx == ctx
                                       and (path is None or (path[0], path[-1]) == (src, dst))):
            played = move
        else:
            played = Move(src, dst, None, ctx)
        snapshot = self._snapshot()
        change = (seat, sb, db)
        self._move_piece(seat, sb, db)
        self.ply += 1
        events = [Event("move", seat, played)]
        key = self._after_move(seat, events, db)
        self._history.append((events, snapshot, change, key))

    def resign(self, seat: SupportsIndex) -> None:
        """``seat`` gives up: with 2 seats the other wins; with more it takes the last free
        place and the others play on.  A seat out of range, or one that cannot resign, is an
        ``IllegalMoveError``; one that is no integer (True, 1.0, "1") a ``SeatTypeError``, both an
        ``IllegalMoveError`` and a ``TypeError``."""
        seat = _as_int(seat)
        if isinstance(seat, bool) or not isinstance(seat, int):  # (an IllegalMoveError and a TypeError)
            raise SeatTypeError(f"seat must be 0..{self.num_players - 1}, got {shown_value(seat)}")
        if self.end_reason is not None:
            raise IllegalMoveError(f"the game is over ({self.end_reason}); nobody can resign")
        if not 0 <= seat < self.num_players:
            raise IllegalMoveError(f"seat must be 0..{self.num_players - 1}, got {shown_value(seat)}")
        if self._status[seat] != ACTIVE:
            raise IllegalMoveError(f"seat {seat} has already {self._status[seat]} and cannot resign")
        snapshot = self._snapshot()
        self._status[seat] = RESIGNED
        self._places[seat] = self._bottom
        self._bottom -= 1
        events = [Event("resign", seat)]
        self._gen.clear()
        key = None
        if not self._check_decided("resign") and seat == self.to_move:
            events += [Event("pass", s) for s in self._advance()]
            if self.end_reason is None:  # the turn moved on: a position the repetition rule counts, as after a move
                key = self._record_position()
                limit = self._rules.repetition_limit
                if key is not None and limit is not None and self._repetitions[key] >= limit:
                    self._end_draw("repetition")
        self._history.append((events, snapshot, None, key))

    def undo(self) -> None:
        """Take back the last move or resignation (and the automatic passes after it).

        With nothing to take back it raises ``NoMoveToUndo``: both an IllegalMoveError and an IndexError."""
        if not self._history:
            raise NoMoveToUndo("there is nothing to undo")
        events, snapshot, change, key = self._history.pop()
        if key is not None:
            self._repetitions[key] -= 1
            if not self._repetitions[key]:
                del self._repetitions[key]
        if change is not None:
            seat, sb, db = change
            self._move_piece(seat, db, sb)
        (self.to_move, self.ply, places, status, self.end_reason, self._top, self._bottom,
         self._stall, best) = snapshot
        self._places, self._status, self._best = list(places), list(status), list(best)
        self._gen.clear()

    def _snapshot(self) -> tuple:
        return (self.to_move, self.ply, tuple(self._places), tuple(self._status), self.end_reason,
                self._top, self._bottom, self._stall, tuple(self._best))

    def _move_piece(self, seat: int, sb: int, db: int) -> None:
        flip = (1 << sb) | (1 << db)
        self._pieces[seat] ^= flip
        bits = self._bits[seat]
        bits.remove(sb)
        insort(bits, db)  # sorted, so move generation yields sources in order
        self._occ ^= flip
        if self._kings >> sb & 1:
            self._kings ^= flip
        self._gen.clear()

    def _after_move(self, seat: int, events: list[Event], db: int | None = None):
        """Decide what the move ended; return the repetition key it counted (or None)."""
        rules = self._rules
        finishers = [seat] if self._has_finished(seat) else []
        if rules.anti_blocking and db is not None:
            # with anti-blocking another seat's goal may be completed by this piece (goals are
            # disjoint, so at most one seat besides the mover can finish on one move)
            for s, goal in enumerate(self._t.goal_masks):
                if s != seat and goal >> db & 1 and self._status[s] == ACTIVE and self._has_finished(s):
                    finishers.append(s)
        if finishers:
            for s in finishers:
                self._status[s] = FINISHED
                self._places[s] = self._top
                self._top += 1
            if not rules.play_to_end and self.num_players >= 3:
                self._end_by_progress("first_finish")
                return None
            if self._check_decided("finished"):
                return None
        passes = self._advance()
        events += [Event("pass", s) for s in passes]
        if self.end_reason is not None:
            return None
        key = self._record_position()  # None unless there is a repetition limit
        limit = rules.repetition_limit
        if key is not None and limit is not None and self._repetitions[key] >= limit:
            self._end_draw("repetition")
            return key
        if self._limit_reached():
            return key
        if rules.stall_limit is not None:
            # a separate name: ``key`` is the repetition key that undo must take back
            best = self.progress(seat).key()
            if best < self._best[seat]:
                self._best[seat] = best
                self._stall = 0
            else:
                self._stall += 1
                if self._stall >= rules.stall_limit:
                    self._end_by_progress("stall_limit")
        return key

    def _limit_reached(self) -> bool:
        """End the game if it has reached its move limit (after a move, or loaded at or past it)."""
        rules = self._rules
        if rules.move_limit is None or self.ply < rules.move_limit:
            return False
        if rules.limit_outcome == "draw":
            self._end_draw("move_limit")
        else:
            self._end_by_progress("move_limit")
        return True

    def _record_position(self):
        """Count the position for the repetition rule; return its key (or None if unused)."""
        if self._rules.repetition_limit is None:
            return None
        key = (tuple(self._pieces), self._kings, self.to_move)
        self._repetitions[key] += 1
        return key

    def _has_finished(self, seat: int) -> bool:
        t = self._t
        own = self._pieces[seat]
        goal = t.goal_masks[seat]
        in_goal = own & goal
        if not in_goal:
            return False
        # diamond: the king must be on the goal tip (a puzzle seat without a king is spared)
        if t.tip_masks[seat] and own & self._kings and not own & self._kings & t.tip_masks[seat]:
            return False
        if in_goal == own or in_goal == goal:
            return True
        return self._rules.anti_blocking and self._occ & goal == goal

    def _undecided(self) -> list[int]:
        return [s for s, place in enumerate(self._places) if place is None]

    def _check_decided(self, reason: str) -> bool:
        """End the game if at most one seat is undecided (it takes the place left)."""
        undecided = self._undecided()
        # the solitaire (1 seat) goes on until its only seat is decided
        if len(undecided) > 1 or (undecided and self.num_players == 1):
            return False
        for s in undecided:
            self._places[s] = self._top
            self._top += 1
        self.end_reason = reason
        self._gen.clear()
        return True

    def _end_draw(self, reason: str) -> None:
        for s in self._undecided():
            self._places[s] = self._top
        self.end_reason = reason
        self._gen.clear()

    def _end_by_progress(self, reason: str) -> None:
        undecided = self._undecided()
        keys = {s: self.progress(s).key() for s in undecided}
        ordered = sorted(undecided, key=keys.__getitem__)
        place = self._top
        for rank, s in enumerate(ordered):
            if rank and keys[s] != keys[ordered[rank - 1]]:
                place = self._top + rank
            self._places[s] = place
        self.end_reason = reason
        self._gen.clear()

    def _advance(self) -> list[int]:
        """Hand the turn to the next seat that can move; return the seats that passed."""
        n = self.num_players
        s = self.to_move
        passes: list[int] = []
        for _ in range(n):
            s = (s + 1) % n
            if self._status[s] != ACTIVE:
                continue
            if self._has_moves(s):
                self.to_move = s
                return passes
            passes.append(s)
        self._end_draw("no_moves")
        return passes

    # --- errors -----------------------------------------------------------------------

    def _check_hole(self, hole) -> int:
        """``hole`` as a Python int (numpy integers too); TypeError or ValueError naming the range
        otherwise (a negative hole must not wrap around to the last one)."""
        last = self.geometry.num_holes - 1
        value = _as_int(hole)
        if isinstance(value, bool) or not isinstance(value, int):
            raise WrongTypeError(f"hole must be an integer 0..{last}, got {shown_value(hole)}")
        if not 0 <= value <= last:
            raise ValueError(f"hole must be 0..{last}, got {value}")
        return value

    def _check_seat(self, seat) -> int:
        """``seat`` as a Python int, like ``_check_hole``."""
        last = self._rules.num_players - 1
        value = _as_int(seat)
        if isinstance(value, bool) or not isinstance(value, int):
            raise WrongTypeError(f"seat must be an integer 0..{last}, got {shown_value(seat)}")
        if not 0 <= value <= last:
            raise ValueError(f"seat must be 0..{last}, got {value}")
        return value

    def _parse(self, move: MoveLike) -> tuple[int, int]:
        if self.end_reason is not None:
            raise IllegalMoveError(f"the game is over ({self.end_reason})")
        if isinstance(move, str):
            move = Move.parse(move)
        if isinstance(move, Move):
            src, dst = move.src, move.dst
        elif isinstance(move, tuple) and len(move) == 2:
            src, dst = move
        else:
            raise (IllegalMoveError if isinstance(move, tuple) else MoveTypeError)(  # (a pair of 3: malformed)
                f"a move is a Move, a (src, dst) pair or 'src-dst' text, got {shown_value(move)}")
        if type(src) is not int or type(dst) is not int:  # numpy and other integer types
            src, dst = _as_int(src), _as_int(dst)
        n = self.geometry.num_holes
        if type(src) is int and type(dst) is int and 0 <= src < n and 0 <= dst < n:
            return src, dst  # the usual case, checked without the loop below
        for name, hole in (("source", src), ("destination", dst)):
            if isinstance(hole, bool) or not isinstance(hole, int) or not 0 <= hole < n:
                wrong_type = isinstance(hole, bool) or not isinstance(hole, int)
                raise (MoveTypeError if wrong_type else IllegalMoveError)(
                    f"{name} hole must be a hole number 0..{n - 1}, got {shown_value(hole)}")
        return src, dst

    def _why_illegal(self, src: int, dst: int) -> str:
        seat = self.to_move
        owner = self.piece_at(src)
        if owner is None:
            return f"no piece on hole {src}"
        if owner[0] != seat:
            return f"hole {src} holds a piece of seat {owner[0]}, but seat {seat} is to move"
        if src == dst:
            return "a move must end on another hole than it starts from"
        if self.piece_at(dst) is not None:
            return f"hole {dst} is occupied"
        db = self.geometry.bit[dst]
        if not self.layout.open_holes[seat] >> db & 1:
            return f"hole {dst} is in a closed camp for seat {seat} (diamond: only its home and goal points are open)"
        lock = self._t.lock_masks[seat]
        sb = self.geometry.bit[src]
        if lock >> sb & 1 and not lock >> db & 1:
            return f"the piece on {src} began its turn in its goal and may not leave it (halma16)"
        if self._kings and self._reachable_over_kings(seat, sb) >> db & 1:
            return (f"hole {dst} can be reached from {src} only by jumping a king, and no piece may jump a king "
                    "(diamond)")
        return f"hole {dst} cannot be reached from {src} by a step or a jump sequence"

    def _reachable_over_kings(self, seat: int, sb: int) -> int:
        """The destinations of the piece on bit ``sb`` if kings could be jumped as other pieces are (for
        ``_why_illegal``: the one rule that makes such a move illegal)."""
        t, occ = self._t, self._occ
        allowed = ~occ & t.layout.open_holes[seat]
        if self._kings >> sb & 1:  # the king's row jumps, over kings too
            return _king_destinations(t, sb, occ & ~(1 << sb), 0, allowed | 1 << sb) & ~(1 << sb)
        return self._gen_ordinary(1 << sb, [sb], allowed, occ)[sb]

    def __str__(self) -> str:
        """The board as text, without colours (``print(game)``, as python-chess prints a board)."""
        from halma_env.render import render_text

        return render_text(self, color=False)

    def __repr__(self) -> str:
        """``Game.from_position(...)`` with the rule options that are not the variant's defaults: it
        rebuilds the position and the rules (not the history, nor ``first_seat``, which the position's
        seat to move sets)."""
        ours, default = self._rules.to_dict(), Rules(self._rules.variant, self.num_players).to_dict()
        options = "".join(f", {k}={v!r}" for k, v in ours.items()
                          if k not in ("variant", "num_players", "first_seat") and v != default[k])
        return f"Game.from_position({self.position()!r}{options})"

    def _repr_svg_(self) -> str:
        """The position as a picture where one can be shown (Jupyter, as python-chess's boards):
        ``halma_env.svg.board_svg`` with its defaults."""
        from halma_env.svg import board_svg

        return str(board_svg(self))


def _as_int(value):
    """An integer of any integer type (numpy's too) as a Python int (``as_integer``); anything else (bools
    included) unchanged, for the caller to reject with its own message."""
    number = as_integer(value)
    return value if number is None else number


# --- kings, paths, progress ----------------------------------------------------------------


def _king_rows(t: _Tables, b: int, occ: int, kings: int, allowed: int):
    """Yield the landings of the king's single jumps from bit ``b``: over a straight contiguous
    row of non-king pieces onto the first hole behind it, which must be allowed."""
    hob = t.layout.geometry.hole_of_bit
    for s in t.layout.geometry.shifts:
        x = b + s
        length = 0
        while hob[x] >= 0 and occ >> x & 1:
            if kings >> x & 1:
                length = 0
                break
            length += 1
            x += s
        else:
            if length and hob[x] >= 0 and allowed >> x & 1:
                yield x


def _king_destinations(t: _Tables, b: int, occ: int, kings: int, allowed: int) -> int:
    """Bit set of where the king on ``b`` can go; ``occ`` excludes the king itself (its start
    hole counts as empty while it jumps) and ``allowed`` includes the start hole."""
    dest = t.neighbours[b] & allowed
    seen = 1 << b
    frontier = [b]
    while frontier:
        c = frontier.pop()
        for x in _king_rows(t, c, occ, kings, allowed):
            if not seen >> x & 1:
                seen |= 1 << x
                frontier.append(x)
    return dest | (seen & ~(1 << b))


def _find_path(ctx, src: int, dst: int) -> tuple[int, ...]:
    """One shortest path of holes from src to dst in the position captured in ``ctx``."""
    t, own, occ, kings, seat = ctx
    g = t.layout.geometry
    sb, db = g.bit[src], g.bit[dst]
    if t.neighbours[sb] >> db & 1:
        return (src, dst)
    allowed = ~occ & t.layout.open_holes[seat]
    if t.lock_masks[seat] >> sb & 1:
        allowed &= t.lock_masks[seat]
    is_king = kings >> sb & 1
    parent = {sb: -1}
    queue = [sb]
    for c in queue:
        if is_king:
            landings = list(_king_rows(t, c, occ & ~(1 << sb), kings, allowed | (1 << sb)))
        else:
            jumpable = occ & ~kings
            landings = [lnd.bit_length() - 1 for mid, lnd in t.hops[c] if jumpable & mid and allowed & lnd]
        for x in landings:
            if x not in parent:
                parent[x] = c
                if x == db:
                    path = [x]
                    while parent[path[-1]] != -1:
                        path.append(parent[path[-1]])
                    return tuple(g.hole_of_bit[p] for p in reversed(path))
                queue.append(x)
    raise IllegalMoveError(f"hole {dst} cannot be reached from {src}")


# about 300 bytes an entry: ~10 MB full (a dict of 200,000 that was then cleared held 52-67 MB)
@lru_cache(maxsize=32_768)
def _progress(variant: str, n: int, seat: int, own: int, king: int, in_goal: int) -> Progress:
    t = _tables(variant, n)
    g = t.layout.geometry
    goal = t.layout.goals[seat]
    tip = t.layout.goal_tip[seat]
    holes = g.holes(own)
    king_hole = g.holes(king)[0] if king else None
    big = 10_000
    cost = []
    for h in holes:
        if h == king_hole:  # the king belongs on the tip
            cost.append([g.distance(h, x) if x == tip else big for x in goal])
        else:
            cost.append([g.distance(h, x) for x in goal])
    # a seat has at most as many pieces as goal holes (from_position refuses more), so each piece gets a hole
    return Progress(in_goal, int(min_cost_assignment(cost)))


# --- perft and random play -----------------------------------------------------------------


def perft(game: Game, depth: int) -> int:
    """Number of distinct (src, dst) move sequences of length ``depth`` (SPEC §6).

    The game is searched in place and left as it was, also when the search is interrupted."""
    if not isinstance(game, Game):  # (perft(None, 0) counted 1)
        raise WrongTypeError(f"game must be a halma_env.Game, got {type(game).__name__}")
    value = _as_int(depth)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongTypeError(f"depth must be an integer >= 0, got {shown_value(depth)}")
    if value < 0:
        raise ValueError(f"depth must be >= 0, got {value}")
    return _perft(game, value)


def _perft(game: Game, depth: int) -> int:
    """Depth first with a stack of its own, not by recursion: a deep search (``perft(game, 2000)``) ran into
    Python's recursion limit inside ``play``, half-way through a move, and the undos on the way out then
    failed on the half-made one (a ValueError, and a game whose later moves raised KeyError)."""
    if depth == 0:
        return 1
    if depth == 1:
        return game.count_moves()
    total = 0
    played = 0  # moves of the current line on the board, each taken back before perft returns
    line = [iter(game.legal_moves())]  # the moves still to try at each ply of the line
    # Stopped part-way (Ctrl-C), the game is put back whole from this copy: undoing the line's moves could not
    # do it, since the stop can land inside a play or undo, between moving a piece and recording it (a
    # ValueError from the next undo, and a game with a piece moved and no move in its history)
    as_it_was = game.copy()
    try:
        while line:
            move = next(line[-1], None)
            if move is None:  # every move at this ply tried: back to the ply before
                line.pop()
                if played:
                    game.undo()
                    played -= 1
                continue
            game.play(move)
            played += 1
            if played == depth - 1:  # the last ply: counted, not played
                total += game.count_moves()
                game.undo()
                played -= 1
            else:
                line.append(iter(game.legal_moves()))
    except BaseException:
        game.__dict__.update(as_it_was.__dict__)  # (one call in C: a second Ctrl-C cannot land inside it)
        raise
    return total


def random_playout(game: Game, rng: random.Random, max_plies: int | None = None) -> int:
    """Play uniformly random legal moves until the game ends (or ``max_plies``); return plies.

    Without ``max_plies`` the rules must end the game: a ``move_limit`` or a ``stall_limit`` (the best progress
    of each seat can only grow so far), else ``ValueError``.  Random play essentially never finishes a game on
    its own, so such a call ran until memory ran out (each ply is kept for ``undo``).  ``max_plies``: an integer
    >= 0 (a bool, a float or text is a ``WrongTypeError``: 2.5 played 3 plies, True one; a negative one a
    ``ValueError``: it played none)."""
    if max_plies is not None:
        def message() -> str:
            return f"max_plies must be an integer >= 0 or None, got {shown_value(max_plies)}"

        max_plies = integer_argument(max_plies, message)
        if max_plies < 0:
            raise ValueError(message())
    if max_plies is None and not game.is_over and game.rules.move_limit is None and game.rules.stall_limit is None:
        raise ValueError(f"random play may never end {game_name(game.rules.variant, game.num_players)} whose "
                         "rules have no move_limit or stall_limit: give max_plies")
    plies = 0
    while not game.is_over and (max_plies is None or plies < max_plies):
        moves = game.legal_moves()
        game.play(rng.choice(moves))
        plies += 1
    return plies


def play_moves(game: Game, moves: Iterable[MoveLike]) -> None:
    """Play several moves; an illegal one raises with its index (earlier ones stay played).  One text of moves
    (``"116-105 7-16"``) is a ``MoveTypeError`` before any move: it was read a character at a time."""
    if isinstance(moves, (str, bytes, bytearray)) or not isinstance(moves, Iterable):
        one_text = " one text" if isinstance(moves, (str, bytes, bytearray)) else ""
        raise MoveTypeError(f"moves must be a list of moves, got{one_text} {moves!r}"
                            + (" (split it: text.split())" if one_text else ""))
    for i, move in enumerate(moves):
        try:
            game.play(move)
        except IllegalMoveError as e:
            raise IllegalMoveError(f"move {i} ({move}): {e}") from None


# --- players ------------------------------------------------------------------------------

PROBE_TIME_BUDGET = 0.05  # seconds: the move probe_player asks for
# what a player that cannot play a game raises when asked for a move: a model of another variant or seat count
# (ValueError), a file it needs that is gone or unreadable (OSError), a runtime's refusal (RuntimeError)
PROBE_ERRORS = (ValueError, OSError, RuntimeError)


def probe_player(player: Any, name: str, rules: Rules) -> None:
    """The one check that a player can play ``rules``' game, made by the environments, ``halma eval``,
    ``halma play`` and the training config: ``player`` chooses a move in the starting position (within
    ``PROBE_TIME_BUDGET``), and one of ``PROBE_ERRORS`` it raises is raised again as ``ValueError("player
    'NAME' cannot play VARIANT with N seats: REASON")``.  Other exceptions are bugs and pass as they are."""
    try:
        player.select_move(Game(rules), time_budget=PROBE_TIME_BUDGET)
    except PROBE_ERRORS as e:
        game = game_name(rules.variant, rules.num_players)
        raise ValueError(f"player {name!r} cannot play {game}: {e}") from None
