"""legal_moves() as built since the speed-up (docs/engine.md, Speed): shared read-only step Moves
from a table, jump Moves made per call, (src, dst) order kept without sorting every source."""

from __future__ import annotations

import copy
import pickle
import random
from unittest import mock

import pytest

from halma_env import Game, Move, Rules
from halma_env.game import play_moves, random_playout
from tests.engine_helpers import position

CASES = [("star", 2), ("star", 3), ("star", 6), ("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]


def _positions(variant: str, seats: int, count: int, seed: int) -> list[Game]:
    rng = random.Random(seed)
    games = []
    while len(games) < count:
        game = Game(Rules(variant, seats))
        random_playout(game, rng, max_plies=rng.randint(0, 120))
        if not game.is_over:
            games.append(game)
    return games


def _from_masks(game: Game) -> list[tuple[int, int]]:
    """The move list read straight off the generator's bit sets, independently of legal_moves()."""
    hob = game.geometry.hole_of_bit
    pairs = []
    for b, dests in game._move_masks(game.to_move).items():
        pairs += [(hob[b], hob[x]) for x in range(dests.bit_length()) if dests >> x & 1]
    return sorted(pairs)


@pytest.mark.parametrize(("variant", "seats"), CASES)
def test_legal_moves_are_the_generated_set_in_src_dst_order(variant: str, seats: int) -> None:
    for game in _positions(variant, seats, 25, seed=seats):
        moves = game.legal_moves()
        assert [(m.src, m.dst) for m in moves] == _from_masks(game)
        assert all(isinstance(m, Move) for m in moves)
        g = game.geometry
        for m in moves:
            if m.dst in g.neighbours[m.src]:
                assert m.path == (m.src, m.dst)  # a step, whatever the table entry
            else:
                assert len(m.path) >= 2 and m.path[0] == m.src and m.path[-1] == m.dst


def _hop_path_is_valid(text: str, path: tuple[int, ...]) -> bool:
    """Each hop of ``path`` jumps over a piece onto an empty hole, in the position ``text``."""
    game = Game.from_position(text)
    g = game.geometry
    where = {rc: h for h, rc in enumerate(g.grid)}
    for a, b in zip(path, path[1:]):
        (ra, ca), (rb, cb) = g.grid[a], g.grid[b]
        if (ra + rb) % 2 or (ca + cb) % 2:
            return False
        mid = where.get(((ra + rb) // 2, (ca + cb) // 2))
        if mid is None or mid not in g.neighbours[a] or mid not in g.neighbours[b]:
            return False
        if game.piece_at(mid) is None or game.piece_at(b) is not None:
            return False
    return True


def test_a_kept_jump_move_keeps_the_path_of_its_own_position() -> None:
    rng = random.Random(7)
    for game in _positions("star", 2, 30, seed=11):
        text = game.position()
        jumps = [m for m in game.legal_moves() if len(m.path or ()) > 3]
        if not jumps:
            continue
        kept = rng.choice(jumps)
        expected = Game.from_position(text)
        shortest = {(m.src, m.dst): len(m.path) for m in expected.legal_moves()}
        # change the position under the kept move before its path is first asked for again
        game.play(kept)
        for _ in range(4):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        kept_copy = Move(kept.src, kept.dst)
        assert kept == kept_copy
        fresh = [m for m in Game.from_position(text).legal_moves() if m == kept][0]
        assert len(fresh.path) == shortest[(kept.src, kept.dst)]
        assert kept.path[0] == kept.src and kept.path[-1] == kept.dst
        assert len(kept.path) == shortest[(kept.src, kept.dst)]
        assert _hop_path_is_valid(text, kept.path)
        return
    pytest.fail("no position with a multi-hop jump in the sample")


def test_a_jump_move_asked_for_its_path_later_uses_the_generating_position() -> None:
    """Path asked for only after other moves were played and undone and played again."""
    for game in _positions("star", 3, 40, seed=3):
        text = game.position()
        long_jumps = [m for m in game.legal_moves() if len(m.path) > 3]
        if not long_jumps:
            continue
        fresh = game.legal_moves()  # new objects, paths not computed yet
        target = [m for m in fresh if m == long_jumps[0]][0]
        game.play(fresh[0])
        game.play(game.legal_moves()[-1])
        assert target.path == long_jumps[0].path
        assert _hop_path_is_valid(text, target.path)
        return
    pytest.fail("no position with a multi-hop jump in the sample")


def test_moves_pickle_and_copy_with_their_path() -> None:
    game = _positions("star", 2, 1, seed=5)[0]
    moves = game.legal_moves()
    step = next(m for m in moves if m.dst in game.geometry.neighbours[m.src])
    jump = next(m for m in moves if m.dst not in game.geometry.neighbours[m.src])
    for move in (step, jump, Move(113, 104), Move(113, 104, (113, 104))):
        for clone in (pickle.loads(pickle.dumps(move)), copy.copy(move), copy.deepcopy(move)):
            assert type(clone) is Move
            assert clone == move and hash(clone) == hash(move)
            assert (clone.src, clone.dst, clone.path) == (move.src, move.dst, move.path)
    # a pickled jump carries its path, not the position: it stays small
    assert len(pickle.dumps(jump)) < 200


def test_shared_step_moves_are_read_only_and_compare_like_any_move() -> None:
    game = Game(Rules("star", 2))
    first = game.legal_moves()
    again = Game(Rules("star", 2)).legal_moves()
    assert first == again
    step = first[0]
    with pytest.raises(AttributeError):
        step.src = 0
    with pytest.raises(AttributeError):
        del step.dst
    assert (step.src, step.dst) == tuple(step)
    assert step == (step.src, step.dst) and (step.src, step.dst) == step
    assert step == Move(step.src, step.dst) and hash(step) == hash((step.src, step.dst))
    assert str(step) == f"{step.src}-{step.dst}" and repr(step) == f"Move({step.src}, {step.dst})"
    assert sorted(reversed(first)) == first
    # playing a shared step records it with its path, and the table entry is unchanged
    game.play(step)
    assert game.moves[-1] == step and game.moves[-1].path == (step.src, step.dst)
    assert Game(Rules("star", 2)).legal_moves()[0] is step


def test_move_objects_made_by_legal_moves_are_independent_per_call() -> None:
    game = _positions("star", 2, 1, seed=9)[0]
    a, b = game.legal_moves(), game.legal_moves()
    neighbours = game.geometry.neighbours
    jumps_a = [m for m in a if m.dst not in neighbours[m.src]]
    jumps_b = [m for m in b if m.dst not in neighbours[m.src]]
    assert jumps_a
    assert jumps_a == jumps_b
    assert all(x is not y for x, y in zip(jumps_a, jumps_b))


def test_hole_and_seat_arguments_are_checked_not_wrapped() -> None:
    """Out of range and negative holes/seats are refused (no wrap-around to the last one)."""
    with pytest.raises(TypeError, match=r"Game takes a Rules, e\.g\. Game\(Rules\('star', 2\)\), got 'star'"):
        Game("star")  # type: ignore[arg-type]
    game = Game(Rules("star", 2))
    before = game.position()
    for hole in (121, -1):
        with pytest.raises(ValueError, match=f"hole must be 0..120, got {hole}"):
            game.piece_at(hole)
        with pytest.raises(ValueError, match=f"hole must be 0..120, got {hole}"):
            game.legal_destinations(hole)
    for seat in (2, -1):
        with pytest.raises(ValueError, match=f"seat must be 0..1, got {seat}"):
            game.pieces(seat)
        with pytest.raises(ValueError, match=f"seat must be 0..1, got {seat}"):
            game.progress(seat)
    for bad in ("a", 1.0, True, None):
        with pytest.raises(TypeError, match="hole must be an integer 0..120"):
            game.legal_destinations(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="hole must be an integer 0..120"):
            game.piece_at(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="seat must be an integer 0..1"):
            game.pieces(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="seat must be an integer 0..1"):
            game.progress(bad)  # type: ignore[arg-type]
    assert game.position() == before
    import numpy as np
    assert game.piece_at(np.int64(113)) == (0, False) and game.pieces(np.int8(1)) == list(range(10))
    assert game.legal_destinations(np.int32(113)) == game.legal_destinations(113) != []
    assert game.progress(np.int64(0)) == game.progress(0)


def test_moves_order_only_against_moves() -> None:
    """``<`` between a Move and anything else is a TypeError (as for tuples and ints), not an
    AttributeError from inside the comparison."""
    assert Move(1, 2) < Move(1, 3) and not Move(1, 3) < Move(1, 2)
    assert not Move(1, 2) < Move(1, 2)  # strict, like tuples
    for other in (5, (1, 3), "1-3", None):
        with pytest.raises(TypeError):
            Move(1, 2) < other  # type: ignore[operator]  # noqa: B015
    with pytest.raises(TypeError):
        sorted([Move(1, 2), (0, 1)])


def test_move_parse_refuses_non_text_and_overlong_numbers() -> None:
    from halma_env import IllegalMoveError

    for bad in (5, None, b"1-2", (1, 2)):
        with pytest.raises(IllegalMoveError, match="a move is written 'src-dst'"):
            Move.parse(bad)  # type: ignore[arg-type]
    huge = "9" * 5000
    with pytest.raises(IllegalMoveError, match="hole number"):
        Move.parse(f"{huge}-1")
    game = Game(Rules("star", 2))
    before = game.position()
    with pytest.raises(IllegalMoveError, match="hole number"):
        game.play(f"1-{huge}")
    assert game.position() == before and game.history == []


@pytest.mark.parametrize("depth", [1.5, "2", None, True, -1])
def test_perft_refuses_a_bad_depth_and_leaves_the_game_alone(depth) -> None:
    from halma_env import perft

    game = Game(Rules("star", 3))
    random_playout(game, random.Random(4), 7)
    before = (game.position(), game.history, game.ply)
    with pytest.raises((TypeError, ValueError), match="depth"):
        perft(game, depth)
    assert (game.position(), game.history, game.ply) == before
    assert perft(game, 2) == perft(game.copy(), 2)


def test_perft_leaves_the_game_as_it_was_when_interrupted() -> None:
    """An exception inside the search (here: a KeyboardInterrupt from a patched play) must not
    leave moves played on the caller's game."""
    from halma_env import perft

    game = Game(Rules("star", 2))
    before = game.position()
    calls = 0
    real_play = game.play

    def play(move) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        real_play(move)

    game.play = play  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        perft(game, 3)
    assert game.position() == before and game.history == []

    def play_then_interrupt(move) -> None:  # Ctrl-C after the move is made, before perft counts it
        nonlocal calls
        calls += 1
        real_play(move)
        if calls == 3:
            raise KeyboardInterrupt

    for depth in (3, 4):
        calls = 0
        game.play = play_then_interrupt  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):
            perft(game, depth)
        assert game.position() == before and game.history == []


@pytest.mark.parametrize("inside", ["_after_move", "_move_piece"])
def test_perft_leaves_the_game_as_it_was_when_interrupted_inside_a_play_or_undo(inside: str,
                                                                                 monkeypatch) -> None:
    """Ctrl-C can land inside ``play`` (the piece moved, the move not yet in the history) or inside ``undo``
    (the move taken off the history, the piece not yet back): perft's undos then left a piece moved with no
    move to take it back, or failed with a ValueError instead of the KeyboardInterrupt (21 of 40 timed
    interrupts of ``perft(game, 4)`` left the game changed, before 2026-12-07)."""
    from halma_env import perft

    fresh = Game(Rules("star", 2))
    expected = {depth: perft(fresh, depth) for depth in (2, 3)}
    real = getattr(Game, inside)
    for stop_at in range(1, 400, 13):  # (calls of play, and of undo when inside is _move_piece)
        calls = 0

        def interrupted(self, *args, stop_at=stop_at, **kwargs):
            nonlocal calls
            calls += 1
            if calls == stop_at:
                raise KeyboardInterrupt
            return real(self, *args, **kwargs)

        game = Game(Rules("star", 2))
        game.play("113-104")
        before = (game.position(), list(game.history))
        monkeypatch.setattr(Game, inside, interrupted)
        with pytest.raises(KeyboardInterrupt):
            perft(game, 4)
        monkeypatch.setattr(Game, inside, real)
        assert (game.position(), list(game.history)) == before, stop_at
        game.undo()
        assert game.position() == fresh.position()
        assert {depth: perft(game, depth) for depth in (2, 3)} == expected


def test_a_pickled_game_is_small_and_plays_on() -> None:
    """A Game pickles without its per-variant lookup tables (rebuilt from the cache on load)."""
    for variant, seats in CASES:
        game = _positions(variant, seats, 1, seed=2)[0]
        data = pickle.dumps(game)
        assert b"_Tables" not in data and len(data) < 60_000, (variant, seats, len(data))
        again = pickle.loads(data)
        assert again.position() == game.position() and again.legal_moves() == game.legal_moves()
        assert again.history == game.history and again.rules == game.rules
        move = again.legal_moves()[-1]
        again.play(move)
        again.undo()
        again.undo()
        game.undo()
        assert again.position() == game.position()


def test_move_equality_defers_to_the_other_operand() -> None:
    """A Move compared with something it does not know returns NotImplemented, so Python asks
    the other side (``mock.ANY`` equals anything) and otherwise answers False, never None."""
    assert Move(1, 2) == mock.ANY
    assert (Move(1, 2) == 5) is False and (Move(1, 2) == "1-2") is False
    assert (Move(1, 2) != 5) is True


def test_a_pickle_does_not_depend_on_the_cached_move_sets() -> None:
    """The move-set cache is left out of a pickle: the same game pickles to the same bytes whether
    or not its move sets were worked out (play then undo empties the cache)."""
    fresh = Game(Rules("star", 2))
    fresh.legal_moves()
    taken_back = Game(Rules("star", 2))
    taken_back.play(taken_back.legal_moves()[0])
    taken_back.undo()
    assert pickle.dumps(fresh) == pickle.dumps(taken_back)


def test_legal_destinations_of_an_empty_hole_or_another_seats_piece_are_none() -> None:
    game = Game(Rules("star", 2))
    assert game.legal_destinations(60) == []  # the empty centre
    assert game.legal_destinations(0) == []  # seat 1's piece; seat 0 is to move
    assert game.legal_destinations(113) == [104, 105]


def test_play_records_the_move_object_it_was_given_from_legal_moves() -> None:
    """A Move generated in this very position is kept as played (its path already known, not
    searched again); any other Move is recorded as a fresh one with this position's path."""
    game = _positions("star", 2, 1, seed=5)[0]
    moves = game.legal_moves()
    neighbours = game.geometry.neighbours
    step = next(m for m in moves if m.dst in neighbours[m.src])
    jump = next(m for m in moves if m.dst not in neighbours[m.src])
    for move in (step, jump):
        path = move.path
        game.play(move)
        assert game.moves[-1] is move and game.moves[-1].path == path
        game.undo()
    given = Move(jump.src, jump.dst)
    game.play(given)
    assert game.moves[-1] == given and game.moves[-1] is not given and game.moves[-1].path == jump.path


def test_repr_is_the_from_position_call_that_rebuilds_the_game() -> None:
    game = Game(Rules("star", 3))
    game.play("113-104")
    text = repr(game)
    assert text == f"Game.from_position({game.position()!r})"
    assert eval(text, {"Game": Game}).position() == game.position()
    # rule options other than the variant's defaults are part of it (it read as a rebuild and lost them)
    for rules in (Rules("star", 2, move_limit=50, anti_blocking=False, first_seat=1),
                  Rules("halma16", 2, repetition_limit=None, stall_limit=30), Rules("diamond", 3, play_to_end=False)):
        game = Game(rules)
        text = repr(game)
        assert eval(text, {"Game": Game}).rules == rules and "first_seat" not in text, text
    assert repr(Game(Rules("halma16", 2))).endswith(" 0 0')")  # its own repetition_limit 3 is a default


def _landings_allowed(game: Game) -> None:
    """Every hole a move's path lands on (the end included) is one the mover may land on: open
    for its seat (diamond), and inside the goal for a halma16 piece that began the turn there."""
    lay, seat = game.layout, game.to_move
    goal = set(lay.goals[seat])
    for move in game.legal_moves():
        locked = game.rules.variant == "halma16" and move.src in goal
        for hole in move.path[1:]:
            assert lay.open_holes[seat] >> game.geometry.bit[hole] & 1, (move, move.path, hole)
            assert not locked or hole in goal, (move, move.path, hole)


def test_jump_paths_land_only_where_the_piece_may_land() -> None:
    """Paths obey the landing rules mid-chain, not only at the end.  A goal-locked halma16 piece
    on (3, 2) reaches (3, 0) over (2, 1) and (2, 0), not by the equally short way out of its goal
    over (4, 1) and (4, 0).  A diamond king beside a closed camp (a position found by a random
    search) goes the long way round, not across the camp's hole 5 next to it."""

    def sq(r: int, c: int) -> int:
        return r * 16 + c

    pieces = {sq(3, 2): "0", sq(2, 1): "0", sq(2, 0): "0", sq(4, 1): "0", sq(4, 0): "0", sq(10, 10): "0", sq(8, 8): "1"}
    locked = Game.from_position(position("halma16", 2, pieces))
    move = next(m for m in locked.legal_moves() if (m.src, m.dst) == (sq(3, 2), sq(3, 0)))
    assert move.path == (sq(3, 2), sq(1, 0), sq(3, 0))
    _landings_allowed(locked)
    king = Game.from_position(
        "diamond 3 ./1./.B./..11/.1....01...../....1.1.0.../.010.1.2..2/.2..2..1../.......1./.......1.2/"
        "1..2..0.2.2/......2.1..2/.C...2.2.2.0./..../.2./../. 1"
    )
    move = next(m for m in king.legal_moves() if (m.src, m.dst) == (4, 14))
    assert len(move.path) == 12 and 5 not in move.path  # 11 hops, the shortest way that stays open
    _landings_allowed(king)


def test_random_playout_without_a_bound_is_refused_where_the_rules_never_end_a_game() -> None:
    """Under rules with neither a move limit nor a stall limit, ``random_playout(game, rng)`` played on until
    memory ran out (random play hardly ever finishes; each ply is kept for undo).  It is refused before a move;
    a stall limit alone ends the game (the seats' best progress can only grow so far)."""
    for rules in (Rules("star", 2), Rules("diamond", 3), Rules("halma16", 2)):
        game = Game(rules)
        with pytest.raises(ValueError, match=r"random play may never end .* whose rules have no move_limit or "
                                             r"stall_limit: give max_plies$"):
            random_playout(game, random.Random(1))
        assert game.ply == 0
    over = Game(Rules("star", 2))
    over.resign(0)
    assert random_playout(over, random.Random(1)) == 0  # nothing to play: no bound needed
    stalled = Game(Rules("star", 2, stall_limit=30))
    assert random_playout(stalled, random.Random(1)) == stalled.ply and stalled.is_over


def test_random_playout_returns_its_plies_and_play_moves_stops_at_an_illegal_one() -> None:
    from halma_env import IllegalMoveError

    game = Game(Rules("star", 2))
    assert random_playout(game, random.Random(1), 7) == 7 == game.ply
    short = Game(Rules("star", 2, move_limit=5))
    assert random_playout(short, random.Random(2)) == 5 and short.end_reason == "move_limit"
    game = Game(Rules("star", 2))
    with pytest.raises(IllegalMoveError, match=r"^move 1 \(113-104\): no piece on hole 113$"):
        play_moves(game, ["113-104", "113-104", "7-16"])
    assert game.moves == [Move(113, 104)] and game.ply == 1  # the moves before it stay played
    with pytest.raises(TypeError, match=r"^moves must be a list of moves, got one text '7-16 104-95' \(split it"):
        play_moves(game, "7-16 104-95")  # (read a character at a time: "move 0 (7): ...")
    assert game.ply == 1


@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy, Game.copy])
def test_a_copied_game_plays_on_without_touching_the_original(make_copy) -> None:
    game = Game(Rules("star", 2))
    game.play("113-104")
    before = (game.position(), game.history, game.places)
    clone = make_copy(game)
    clone.play(clone.legal_moves()[0])
    clone.play(clone.legal_moves()[-1])
    assert (game.position(), game.history, game.places) == before
    game.play(game.legal_moves()[0])  # the original's own move lists are intact
    assert game.ply == 2 and clone.ply == 3


def test_games_compare_by_identity_and_their_parts_by_value() -> None:
    # docs/engine.md, "Copies and pickles": == is `is`; position, rules and history say which equality is meant
    game = Game(Rules("star", 2))
    game.play("113-104")
    clone = game.copy()
    assert clone != game and game == game and len({game: 1, clone: 2}) == 2
    assert (clone.position(), clone.rules, clone.history) == (game.position(), game.rules, game.history)


def test_move_parse_cuts_a_long_text_short_in_its_error() -> None:
    """The error names the bad text as notation does (``quoted``): a long one by its first characters
    and its length, not echoed whole."""
    from halma_env import IllegalMoveError

    with pytest.raises(IllegalMoveError) as info:
        Move.parse("a" * 100_000)
    assert str(info.value) == ("a move is written 'src-dst' with two hole numbers, got "
                               f"{'a' * 30!r}... (100000 characters)")
    with pytest.raises(IllegalMoveError, match=r"got '1-2-3'$"):
        Move.parse("1-2-3")  # a short one whole, as before


def test_move_text_may_have_ascii_white_space_around_its_numbers_and_nothing_else() -> None:
    """``str.strip()`` took any Unicode space (a no-break space, U+3000) and the information separators
    \\x1c-\\x1f as white space; \\x1c inside a move then failed in ``int()`` and was reported as "a move's hole
    number is far too long (8 characters)" (before 2026-12-07).  A position text likewise."""
    from halma_env import IllegalMoveError

    for typed in ("113-104", " 0113 - 104\n", "113\t-\t104\r\n", "\x0b113-104\x0c"):
        assert Move.parse(typed) == Move(113, 104)
    for odd in ("113-\x1c104", "\x1f113-104", "113\xa0-104", "113-104\u3000", "113-104\u2028", "\x85113-104"):
        with pytest.raises(IllegalMoveError) as caught:
            Move.parse(odd)
        assert str(caught.value) == f"a move is written 'src-dst' with two hole numbers, got {odd!r}"
    with pytest.raises(IllegalMoveError, match=r"^a move's hole number is far too long \(5000 digits\)$"):
        Move.parse("1-" + "9" * 5000)
    position = Game(Rules("star", 2)).position()
    assert Game.from_position(f" {position}\n").position() == position
    for odd in ("\x1c", "\xa0", "\u3000"):
        with pytest.raises(ValueError, match="variant field"):
            Game.from_position(odd + position)


@pytest.mark.parametrize(("position", "move"), [
    ("diamond 2 ./../.../..../B111.1......./1111......../1.1......../111......./1......../....0...../....0....../...A.0"
     "....../....0.000..../000./.00/00/. 0 10", "102-77"),  # an ordinary piece
    ("diamond 3 ./../.../..../.1.11.1..222./1.1...122222/111.1B...22/.1.....22./1......2./.....2A.../..1......../...C"
     ".0.0..../.....0.0...../0000/000/00/0 1 58", "40-18"),  # a king's row jump over a row holding a king
])
def test_a_move_that_would_jump_a_king_says_so(position: str, move: str) -> None:
    """A Diamond move that only jumping a king could make was "hole 77 cannot be reached from 102 by a step or a
    jump sequence" (before 2026-12-07), which does not tell a newcomer the rule that forbids it."""
    from halma_env import IllegalMoveError

    game = Game.from_position(position)
    src, dst = move.split("-")
    with pytest.raises(IllegalMoveError) as caught:
        game.play(move)
    assert str(caught.value) == (f"hole {dst} can be reached from {src} only by jumping a king, and no piece may jump "
                                 "a king (diamond)")
    assert game.history == [] and game.position() == Game.from_position(position).position()


@pytest.mark.parametrize("hole", [10**5000, 2**200, -(10**40)], ids=["5000-digits", "2-to-the-200", "minus-41-digits"])
def test_a_huge_hole_number_is_named_by_its_size_not_echoed(hole: int) -> None:
    """``game.play((10**5000, 1))`` failed inside its own error message (``repr`` refuses an integer of more than
    4,300 digits: "Exceeds the limit (4300 digits) for integer string conversion"), and a 4,000-digit hole was
    echoed whole in a 4,046-character message (before 2026-12-07)."""
    from halma_env import IllegalMoveError

    game = Game(Rules("star", 2))
    with pytest.raises(IllegalMoveError) as caught:
        game.play((hole, 1))
    assert str(caught.value) == f"source hole must be a hole number 0..120, got an integer of {hole.bit_length()} bits"
    with pytest.raises(IllegalMoveError, match=r"got an integer of \d+ bits$"):
        game.resign(hole)
    assert game.history == []


@pytest.mark.parametrize(("variant", "n"), [("star", 2), ("star", 6), ("diamond", 3), ("halma16", 4)])
def test_is_legal_agrees_with_legal_moves(variant: str, n: int) -> None:
    """Game.is_legal (python-chess's board.is_legal): a bit test that must say yes exactly for legal_moves()."""
    import random

    rng = random.Random(3)
    game = Game(Rules(variant, n))
    holes = range(game.geometry.num_holes)
    for _ in range(30):
        legal = {(m.src, m.dst) for m in game.legal_moves()}
        own = game.pieces(game.to_move)
        assert {(s, d) for s in own for d in holes if game.is_legal((s, d))} == legal
        assert not any(game.is_legal((s, d)) for s in rng.sample(list(holes), 5) if s not in own for d in holes)
        game.play(rng.choice(sorted(legal)))
    for bad in ("x-y", (-1, 5), (5, 10_000), (True, 2), "113"):
        assert game.is_legal(bad) is False


def test_print_shows_the_board_without_colours() -> None:
    from halma_env.render import render_text

    game = Game(Rules("star", 2))
    assert str(game) == render_text(game, color=False) and "\x1b" not in str(game) and str(game).count("1") >= 10


def test_moves_are_ordered_by_every_comparison() -> None:
    """Move defined only ``<``: ``Move(1, 2) >= Move(1, 2)`` raised TypeError.  All four orderings
    follow (src, dst), as for tuples; against anything but a Move each is a TypeError."""
    pairs = [(1, 2), (1, 3), (2, 0), (0, 9)]
    for a in pairs:
        for b in pairs:
            x, y = Move(*a), Move(*b)
            assert (x < y, x <= y, x > y, x >= y, x == y) == (a < b, a <= b, a > b, a >= b, a == b), (a, b)
    assert Move(1, 2) >= Move(1, 2) and Move(1, 2) <= Move(1, 2)
    game = _positions("star", 2, 1, seed=4)[0]
    moves = game.legal_moves()  # shared steps and made jumps order alike
    assert max(moves) == moves[-1] and min(moves) == moves[0]
    assert all(a <= b and b >= a and not a > b for a, b in zip(moves, moves[1:]))
    for other in (5, (1, 3), "1-3", None):
        for compare in (lambda m, o: m <= o, lambda m, o: m > o, lambda m, o: m >= o):
            with pytest.raises(TypeError):
                compare(Move(1, 2), other)


def _every_kind_of_move() -> list[Move]:
    game = _positions("star", 2, 1, seed=5)[0]
    moves = game.legal_moves()
    neighbours = game.geometry.neighbours
    step = next(m for m in moves if m.dst in neighbours[m.src])
    jump = next(m for m in moves if m.dst not in neighbours[m.src])
    walked = next(m for m in game.legal_moves() if m.dst not in neighbours[m.src])
    assert walked.path[0] == walked.src and walked._path is not None  # its path worked out (and cached) first
    game.play((jump.src, jump.dst))
    played = game.moves[-1]  # made by play() from a tuple
    return [step, jump, walked, played, Move(1, 2), Move(1, 2, (1, 2)), Move.parse("113-104"),
            pickle.loads(pickle.dumps(jump)), copy.copy(step)]


def test_moves_take_no_new_attributes_and_shared_steps_refuse_changes() -> None:
    """Every kind of Move is slots only (no attribute can be added); the shared step Moves of
    legal_moves() refuse assignment, the others are values by convention (as python-chess's)."""
    for move in _every_kind_of_move():
        with pytest.raises(AttributeError):
            move.extra = 1  # type: ignore[attr-defined]
        assert not hasattr(move, "__dict__")
    step = _every_kind_of_move()[0]
    with pytest.raises(AttributeError, match="shared"):
        step.src = 0  # type: ignore[misc]
    assert step.src != 0


def test_a_jumps_path_is_still_worked_out_when_first_asked_for() -> None:
    """A generated jump caches the path it works out."""
    game = _positions("star", 3, 1, seed=3)[0]
    neighbours = game.geometry.neighbours
    jump = next(m for m in game.legal_moves() if m.dst not in neighbours[m.src])
    assert getattr(jump, "_path", None) is None  # not worked out yet
    path = jump.path
    assert path[0] == jump.src and path[-1] == jump.dst and jump.path is path


class _MyGame(Game):
    pass


@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy, Game.copy, pickle.dumps])
def test_a_copy_of_a_subclass_is_of_that_subclass(make_copy) -> None:
    """Game.copy() and copy.copy(game) made a Game of a subclass's game (Game.__new__(Game)); as in
    python-chess, a copy is of the game's own class (deepcopy and pickle already were)."""
    game = _MyGame(Rules("star", 2))
    game.play("113-104")
    clone = pickle.loads(make_copy(game)) if make_copy is pickle.dumps else make_copy(game)
    assert type(clone) is _MyGame
    assert clone.position() == game.position() and clone.moves == game.moves
    clone.play(clone.legal_moves()[0])
    assert game.ply == 1 and clone.ply == 2


def test_a_subclass_copy_override_is_what_copy_copy_calls() -> None:
    class Counting(Game):
        copies = 0

        def copy(self) -> Game:
            type(self).copies += 1
            return super().copy()

    game = Counting(Rules("star", 2))
    assert type(copy.copy(game)) is Counting and Counting.copies == 1


def test_undo_with_nothing_to_undo_is_an_index_error_and_still_an_illegal_move_error() -> None:
    """python-chess's Board.pop() on an empty move stack raises IndexError (as list.pop() does); Game.undo()
    raised IllegalMoveError.  It raises NoMoveToUndo, both, so that callers catching either keep working."""
    from halma_env import IllegalMoveError
    from halma_env.game import NoMoveToUndo

    assert issubclass(NoMoveToUndo, IllegalMoveError) and issubclass(NoMoveToUndo, IndexError)
    game = Game(Rules("star", 2))
    for caught in (NoMoveToUndo, IndexError, IllegalMoveError, ValueError):
        with pytest.raises(caught, match="^there is nothing to undo$"):
            game.undo()
    game.play("113-104")
    game.resign(1)
    game.undo()
    game.undo()
    with pytest.raises(IndexError, match="nothing to undo"):
        game.undo()
    assert game.position() == Game(Rules("star", 2)).position()


@pytest.mark.parametrize("max_plies", [2.5, True, "3", 3.0])
def test_random_playout_refuses_max_plies_that_is_no_integer(max_plies) -> None:
    """``max_plies=2.5`` played 3 plies and ``True`` one (``plies < max_plies``): a ``WrongTypeError`` naming it,
    the game untouched; a negative count, which played none, a ValueError; numpy's integers are integers."""
    import numpy as np

    from halma_env.rules import WrongTypeError

    game = Game(Rules("star", 2))
    with pytest.raises(WrongTypeError, match="max_plies must be an integer >= 0 or None, got "):
        random_playout(game, random.Random(1), max_plies)
    assert game.ply == 0
    with pytest.raises(ValueError, match="max_plies must be an integer >= 0 or None, got -1") as caught:
        random_playout(game, random.Random(1), -1)
    assert not isinstance(caught.value, TypeError) and game.ply == 0
    assert random_playout(game, random.Random(1), np.int64(2)) == 2 == game.ply
    assert random_playout(game, random.Random(1), 0) == 0
