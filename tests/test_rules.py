"""Every rule of SPEC §1 and §4, scenario by scenario, on hand-built positions (SPEC §3 notation)."""

from __future__ import annotations

import random
import re
from collections import deque

import numpy as np
import pytest
from engine_helpers import line, position, reference_destinations, walk

from halma_env import Game, IllegalMoveError, Move, Progress, Rules
from halma_env.board import star_point, star_tip
from halma_env.game import random_playout
from halma_env.layout import layout
from halma_env.rules import SEAT_COUNTS, parse_rule_options

SQ = 16  # halma16: hole = row * 16 + col


def sq(r: int, c: int) -> int:
    return r * SQ + c


def dests(game: Game, src: int) -> set[int]:
    return set(game.legal_destinations(src))


# --- Rules validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        (("diamond", 4), {}, ["diamond", "2, 3", "4", "star"]),
        (("diamond", 6), {}, ["diamond", "6"]),
        (("halma16", 3), {}, ["halma16", "2, 4", "3"]),
        (("star", 0), {}, ["star", "0"]),
        (("star", 7), {}, ["star", "7"]),
        (("checkers", 2), {}, ["unknown variant", "checkers"]),
        (("star", 2), {"speed": 3}, ["unknown rule option", "speed"]),
        (("star", 2), {"move_limit": -5}, ["move_limit", "-5"]),
        (("star", 2), {"move_limit": 0}, ["move_limit", "at least 1"]),
        (("star", 2), {"stall_limit": -1}, ["stall_limit", "-1"]),
        (("star", 2), {"repetition_limit": -3}, ["repetition_limit", "-3"]),
        (("star", 2), {"repetition_limit": 1}, ["repetition_limit", "at least 2"]),
        (("star", 2), {"move_limit": 2.5}, ["move_limit", "int"]),
        (("star", 2), {"limit_outcome": "win"}, ["limit_outcome", "win"]),
        (("star", 2), {"first_seat": 2}, ["first_seat", "0..1", "2"]),
        (("star", 3), {"first_seat": -1}, ["first_seat", "-1"]),
        (("star", 2), {"anti_blocking": "yes"}, ["anti_blocking", "yes"]),
        (("star", 2), {"play_to_end": 1}, ["play_to_end"]),
        (("star", "2"), {}, ["num_players", "'2'"]),
    ],
)
def test_rules_validation_names_the_problem(args, kwargs, words) -> None:
    with pytest.raises(ValueError) as info:
        Rules(*args, **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize(
    ("items", "words"),
    [
        (["variant=diamond"], ["'variant'", "--variant/--seats", "not from rule options"]),
        (["num-players=3"], ["'num_players'", "--variant/--seats"]),
        (["move_limit="], ["'move_limit'", "empty value", "move_limit=none"]),
        (["move_limit= "], ["'move_limit'", "empty value"]),
        (["move_limit=3", "move_limit=5"], ["'move_limit'", "twice", "'move_limit=5'"]),
        (["move_limit=3", "move-limit=none"], ["'move_limit'", "twice"]),
    ],
)
def test_rule_option_text_is_refused_when_ambiguous(items: list[str], words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        parse_rule_options(items)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_rule_option_text_converts_values() -> None:
    assert parse_rule_options(["move_limit=none", "stall_limit=40", "anti_blocking=off"]) == {
        "move_limit": None, "stall_limit": 40, "anti_blocking": False,
    }


def test_rules_defaults_and_round_trip() -> None:
    star = Rules("star", 3)
    assert (star.anti_blocking, star.play_to_end, star.move_limit, star.limit_outcome) == (True, True, None, "draw")
    assert (star.stall_limit, star.repetition_limit, star.first_seat) == (None, None, 0)
    h16 = Rules("halma16", 2)
    assert h16.anti_blocking is False and h16.repetition_limit == 3
    assert Rules("halma16", 2, repetition_limit=None).repetition_limit is None
    for rules in (star, h16, Rules("diamond", 3, move_limit=50, limit_outcome="progress", stall_limit=9)):
        assert Rules.from_dict(rules.to_dict()) == rules
    assert star.replace(move_limit=10).move_limit == 10
    with pytest.raises(ValueError, match="move_limit"):
        star.replace(move_limit=-1)
    with pytest.raises(ValueError, match="a mapping of option names"):
        Rules.from_dict(["star", 2])
    with pytest.raises(AttributeError):
        star.move_limit = 3  # frozen


def test_rules_from_dict_reads_any_mapping() -> None:
    """``Rules.from_dict`` refused a mapping that is no dict (a ``MappingProxyType``, a ``ChainMap``: "rules must
    be a dict"); it reads any ``Mapping`` as a dict.  What is no mapping stays a ``WrongTypeError`` saying
    "a mapping", and the mapping given is left as it was."""
    from collections import ChainMap
    from types import MappingProxyType

    from halma_env import WrongTypeError

    rules = Rules("diamond", 3, move_limit=50, limit_outcome="progress", stall_limit=9)
    proxy = MappingProxyType(rules.to_dict())
    assert Rules.from_dict(proxy) == rules and dict(proxy) == rules.to_dict()
    chain = ChainMap({"move_limit": 80}, rules.to_dict())  # the first map wins, as a dict of the chain says
    assert Rules.from_dict(chain) == rules.replace(move_limit=80) and len(chain.maps) == 2
    assert Rules.from_dict(MappingProxyType({"variant": "star", "num_players": 2})) == Rules("star", 2)
    with pytest.raises(WrongTypeError, match=r"^rules must be a mapping of option names \(text\), got the key 1$"):
        Rules.from_dict(MappingProxyType({"variant": "star", 1: 2}))
    with pytest.raises(ValueError, match="unknown rule option"):
        Rules.from_dict(MappingProxyType({"variant": "star", "speed": 2}))
    for bad, kind in (([("variant", "star")], "list"), ("star", "str"), (None, "NoneType"),
                      ({("variant", "star")}, "set")):
        with pytest.raises(WrongTypeError, match=f"^rules must be a mapping of option names, got {kind}$"):
            Rules.from_dict(bad)


def test_presets() -> None:
    assert Rules.preset("qdan", 4) == Rules("star", 4)
    for n in (2, 3, 4, 6):
        kawu = Rules.preset("kawu", n)
        assert (kawu.variant, kawu.num_players, kawu.play_to_end) == ("star", n, False)
        assert (kawu.move_limit, kawu.limit_outcome, kawu.anti_blocking) == (300, "progress", True)
    with pytest.raises(ValueError, match="kawu.*5"):
        Rules.preset("kawu", 5)
    with pytest.raises(ValueError, match="unknown preset 'fast'"):
        Rules.preset("fast", 2)


def test_preset_overrides_cannot_change_what_the_preset_fixes() -> None:
    """Presets are star games: a variant override is a ValueError naming it, not a TypeError
    about duplicate arguments."""
    assert Rules.preset("kawu", 3, move_limit=200).move_limit == 200
    for name in ("qdan", "kawu"):
        with pytest.raises(ValueError, match=f"the {name} preset is a star rule set.*variant"):
            Rules.preset(name, 2, variant="diamond")


def test_preset_defaults_to_two_seats_and_an_unknown_name_comes_first() -> None:
    assert Rules.preset("qdan") == Rules("star", 2) == Rules()
    assert Rules.preset("kawu") == Rules("star", 2, play_to_end=False, move_limit=300, limit_outcome="progress")
    with pytest.raises(ValueError, match="unknown preset 'fast'; expected one of qdan, kawu"):
        Rules.preset("fast", 2, variant="diamond")


@pytest.mark.parametrize(
    ("kwargs", "start"),
    [
        ({"anti_blocking": None}, "anti_blocking must be true or false"),
        ({"play_to_end": "on"}, "play_to_end must be true or false"),
        ({"move_limit": "9"}, "move_limit must be an int or None"),
        ({"stall_limit": 0}, "stall_limit must be at least 1"),
        ({"stall_limit": 2.0}, "stall_limit must be an int or None"),
        ({"repetition_limit": 0}, "repetition_limit must be at least 2"),
        ({"repetition_limit": "3"}, "repetition_limit must be an int or None"),
        ({"limit_outcome": "win"}, "limit_outcome must be one of draw, progress"),
        ({"first_seat": 2}, "first_seat must be a seat 0..1"),
    ],
)
def test_option_errors_begin_with_the_option_name(kwargs: dict, start: str) -> None:
    with pytest.raises(ValueError) as info:
        Rules("star", 2, **kwargs)
    assert str(info.value).startswith(start), str(info.value)


def test_limits_accept_their_least_value() -> None:
    """move_limit and stall_limit: 1 or more; repetition_limit: 2 or more (None: no limit)."""
    rules = Rules("star", 2, move_limit=1, stall_limit=1, repetition_limit=2)
    assert (rules.move_limit, rules.stall_limit, rules.repetition_limit) == (1, 1, 2)
    for name, least in (("move_limit", 1), ("stall_limit", 1), ("repetition_limit", 2)):
        words = f"{name} must be at least {least} \\(or None for no limit\\), got {least - 1}"
        with pytest.raises(ValueError, match=words):
            Rules("star", 2, **{name: least - 1})


def test_unknown_options_are_all_named_and_the_known_ones_listed() -> None:
    with pytest.raises(ValueError) as info:
        Rules("star", 2, speed=1, colour="red")
    known = "variant, num_players, anti_blocking, play_to_end, move_limit, limit_outcome, stall_limit, "
    assert str(info.value) == f"unknown rule option(s): colour, speed; known: {known}repetition_limit, first_seat"


def test_seat_count_messages_give_the_allowed_counts_and_the_diamond_hint() -> None:
    with pytest.raises(ValueError) as info:
        Rules("diamond", 4)
    hint = "(with 4-6 seats use the international 'star' rules)"
    assert str(info.value) == f"diamond is played by 2, 3 seats, not 4 {hint}"
    with pytest.raises(ValueError) as info:
        Rules("halma16", 3)
    assert str(info.value) == "halma16 is played by 2, 4 seats, not 3"


def test_default_marker_shows_in_the_signature() -> None:
    """Options left to the variant's default show as DEFAULT in help(Rules)."""
    import inspect

    from halma_env.rules import DEFAULT

    assert repr(DEFAULT) == "DEFAULT"
    signature = inspect.signature(Rules)
    assert signature.parameters["anti_blocking"].default is DEFAULT
    assert re.search(r"anti_blocking[^,]* = DEFAULT, .*repetition_limit[^,]* = DEFAULT,", str(signature))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True), ("on", True), ("yes", True), (" On ", True), ("TRUE", True),
        ("false", False), ("off", False), ("no", False), ("No", False),
        ("none", None), ("null", None), (" NULL ", None),
        ("300", 300), (" 40 ", 40), ("-3", -3),
        ("progress", "progress"), (" Draw ", "Draw"), ("2.5", "2.5"),
    ],
)
def test_option_value_text(text: str, value) -> None:
    """true/on/yes, false/off/no, none/null (any case), an integer, or else the text itself (stripped)."""
    from halma_env.rules import parse_option_value

    parsed = parse_option_value(text)
    assert parsed == value and type(parsed) is type(value), (text, parsed)


def test_kawu_game_is_decided_by_progress_after_300_plies() -> None:
    game = Game(Rules.preset("kawu", 3))
    random_playout(game, random.Random(3))
    assert game.is_over and game.ply == 300 and game.end_reason == "move_limit"
    keys = [game.progress(s).key() for s in range(3)]  # (smaller is further along)
    # this playout leaves no two seats level (ties share a place:
    # test_progress_ties_share_a_place_and_the_next_place_is_skipped), so the places are the strict
    # order of progress: 1 for the furthest along, 3 for the least
    assert len(set(keys)) == 3, keys
    assert game.places == [1 + sorted(keys).index(k) for k in keys], (keys, game.places)


# --- finishing and anti-blocking -----------------------------------------------------------------


def _almost_full_goal(blocker_in_goal: bool) -> str:
    """star 2, seat 0 to move: hole 9 of its goal empty and a piece on 18 that steps into it; hole 4
    holds a seat-1 piece (the blocker, seat 0's tenth piece waits on 60) or an own piece."""
    pieces = {h: "0" for h in range(9)}
    pieces[4] = "1" if blocker_in_goal else "0"
    pieces[18] = "0"
    pieces[60] = "0" if blocker_in_goal else "1"  # seat 0 has 10 pieces either way
    pieces[100] = "1"
    return position("star", 2, pieces)


def test_anti_blocking_on_finishes_with_an_opponent_in_the_goal() -> None:
    game = Game.from_position(_almost_full_goal(blocker_in_goal=True))
    assert Rules("star", 2).anti_blocking
    game.play("18-9")
    assert game.is_over and game.end_reason == "finished"
    assert game.places == [1, 2] and game.status == ["finished", "active"]


def test_anti_blocking_off_needs_every_goal_hole_own() -> None:
    game = Game.from_position(_almost_full_goal(blocker_in_goal=True), anti_blocking=False)
    game.play("18-9")
    assert not game.is_over and game.places == [None, None] and game.to_move == 1
    full = Game.from_position(_almost_full_goal(blocker_in_goal=False), anti_blocking=False)
    full.play("18-9")
    assert full.is_over and full.places == [1, 2] and full.end_reason == "finished"


def test_goal_full_of_opponents_only_does_not_finish() -> None:
    """Anti-blocking needs at least one own piece in the goal: the start (seat 1 fills seat 0's goal)."""
    pieces = {h: "1" for h in range(10)}
    pieces[111] = "0"
    game = Game.from_position(position("star", 2, pieces, to_move=1))
    assert not game.is_over
    assert game.status == ["active", "active"]


def test_opponent_filling_the_last_goal_hole_finishes_the_seat() -> None:
    """Anti-blocking: seat 0's goal holds 9 own pieces; seat 1 steps into the last hole."""
    pieces = {h: "0" for h in range(9)}
    pieces.update({60: "0", 18: "1", 100: "1"})
    text = position("star", 2, pieces, to_move=1)
    game = Game.from_position(text)
    game.play("18-9")
    assert game.is_over and game.places == [1, 2] and game.end_reason == "finished"
    game.undo()
    assert game.position() == text + " 0" and game.places == [None, None]
    off = Game.from_position(text, anti_blocking=False)
    off.play("18-9")
    assert not off.is_over


def test_seat_with_fewer_pieces_finishes_when_all_are_in_its_goal() -> None:
    """A puzzle with 3 pieces: they cannot fill the goal, so all own pieces in it is enough."""
    text = position("star", 2, {0: "0", 1: "0", 18: "0", 100: "1"})
    for anti in (True, False):
        game = Game.from_position(text, anti_blocking=anti)
        game.play("18-9")
        assert game.is_over and game.places == [1, 2]


def test_halma16_needs_every_own_piece_in_the_goal_and_can_use_anti_blocking() -> None:
    lay = layout("halma16", 2)
    goal = sorted(lay.goals[0])
    last = goal[-1]  # (4, 1)
    outside = sq(5, 1)
    pieces = {h: "0" for h in goal[:-2]}
    pieces[goal[-2]] = "1"  # an opponent sits in the goal
    pieces[outside] = "0"
    pieces[sq(15, 15)] = "1"
    pieces[sq(10, 10)] = "0"
    text = position("halma16", 2, pieces)
    game = Game.from_position(text)
    assert not Rules("halma16", 2).anti_blocking
    game.play(f"{outside}-{last}")
    assert not game.is_over
    anti = Game.from_position(text, anti_blocking=True)
    anti.play(f"{outside}-{last}")
    assert anti.is_over and anti.places == [1, 2]


def test_loaded_position_with_finished_seats_gives_them_shared_top_places() -> None:
    """Seats already meeting their goal in a loaded position finish together (shared top place)."""
    pieces = {h: "0" for h in range(10)}
    pieces.update({h: "1" for h in star_point(5)})  # seat 1 (home point 2) has its goal, point 5, full
    pieces.update({60: "2"})
    game = Game.from_position(position("star", 3, pieces, to_move=0))
    assert game.status == ["finished", "finished", "active"]
    assert game.is_over and game.places == [1, 1, 3] and game.end_reason == "finished"
    four = Game.from_position(position("star", 4, {**{h: "0" for h in range(10)}, 60: "2", 61: "3", 62: "1"}))
    assert four.places == [1, None, None, None] and four.to_move == 1 and not four.is_over


# --- play to end, places, skipped seats -------------------------------------------------------


def _three_seat_race(tie: bool) -> str:
    """star 3, seat 0 to move and one step (18-9) from finishing; seats 1 and 2 mirror each other
    (equal progress) or seat 1 has one piece in its goal (point 5) and seat 2 none."""
    pieces = {h: "0" for h in range(9)}
    pieces[18] = "0"
    # seat 1 (home point 2, goal point 5) and seat 2 (home point 4, goal point 1): mirror images
    g = layout("star", 3).geometry
    mirror = {h: g.hole_at(r, -x) for h, (r, x) in enumerate(g.coords)}
    seat1 = [23, 35, 46]
    pieces.update({h: "1" for h in seat1})
    pieces.update({mirror[h]: "2" for h in seat1})
    if not tie:
        pieces[46] = "."
        pieces[110] = "1"
    return position("star", 3, {h: c for h, c in pieces.items() if c != "."})


def test_play_to_end_on_keeps_playing_and_skips_the_finished_seat() -> None:
    game = Game.from_position(_three_seat_race(tie=True))
    game.play("18-9")
    assert not game.is_over and game.places == [1, None, None] and game.status[0] == "finished"
    rng = random.Random(5)
    for _ in range(30):
        assert game.to_move in (1, 2)
        game.play(rng.choice(game.legal_moves()))
    assert all(e.seat != 0 for e in game.history[1:] if e.kind == "move")
    assert game.to_move == 1  # 30 plies alternate between seats 1 and 2


def _goal_gap(seat_goal: tuple[int, ...]) -> tuple[int, int]:
    """A goal hole next to a hole outside the goal: (the hole, its outside neighbour)."""
    g = layout("star", 3).geometry
    for h in sorted(seat_goal):
        for n in g.neighbours[h]:
            if n not in seat_goal:
                return h, n
    raise AssertionError("no gap")


def test_play_to_end_on_places_in_finishing_order() -> None:
    """Three seats each one step from finishing: they finish in turn order, the last one placed gets 3."""
    lay = layout("star", 3)
    pieces: dict[int, str] = {}
    moves = []
    for seat in range(3):
        hole, outside = _goal_gap(lay.goals[seat])
        pieces.update({h: str(seat) for h in lay.goals[seat] if h != hole})
        pieces[outside] = str(seat)
        moves.append((outside, hole))
    game = Game.from_position(position("star", 3, pieces))
    assert not game.is_over
    game.play(moves[0])
    assert game.places == [1, None, None] and game.to_move == 1
    game.play(moves[1])
    assert game.places == [1, 2, 3] and game.is_over and game.end_reason == "finished"


def test_play_to_end_off_ends_at_first_finish_and_ranks_the_rest_by_progress() -> None:
    game = Game.from_position(_three_seat_race(tie=False), play_to_end=False)
    assert game.progress(1).in_goal == 1 and game.progress(2).in_goal == 0
    game.play("18-9")
    assert game.is_over and game.end_reason == "first_finish" and game.places == [1, 2, 3]


def test_play_to_end_off_equal_progress_shares_a_place() -> None:
    game = Game.from_position(_three_seat_race(tie=True), play_to_end=False)
    assert game.progress(1) == game.progress(2)
    game.play("18-9")
    assert game.is_over and game.end_reason == "first_finish" and game.places == [1, 2, 2]


def test_play_to_end_off_loaded_position_with_a_finished_seat_is_over() -> None:
    """SPEC §4: without play_to_end the game ends at the first finish.  A loaded position in which
    a seat already meets its goal has had that finish: it is over at once, the others ranked by
    progress, as after a finishing move."""
    text = position("star", 3, {**{h: "0" for h in range(10)}, 60: "1", 110: "1", 61: "2"}, to_move=1)
    game = Game.from_position(text, play_to_end=False)
    assert game.is_over and game.end_reason == "first_finish"
    assert game.progress(1).in_goal == 1 and game.progress(2).in_goal == 0
    assert game.places == [1, 2, 3] and game.status == ["finished", "active", "active"]
    assert game.legal_moves() == [] and game.history == []
    on = Game.from_position(text)  # play_to_end on (the default): the others play on
    assert not on.is_over and on.places == [1, None, None] and on.to_move == 1


def test_play_to_end_off_with_two_seats_is_an_ordinary_win() -> None:
    game = Game.from_position(_almost_full_goal(blocker_in_goal=False), play_to_end=False)
    game.play("18-9")
    assert game.end_reason == "finished" and game.places == [1, 2]


def test_play_to_end_off_loaded_two_seat_position_with_a_finished_seat_is_an_ordinary_win() -> None:
    """play_to_end matters from 3 seats on: with 2, a seat that already meets its goal in a loaded
    position has simply won ("finished"), as after a finishing move."""
    game = Game.from_position(position("star", 2, {**{h: "0" for h in range(10)}, 60: "1"}), play_to_end=False)
    assert game.is_over and game.end_reason == "finished" and game.places == [1, 2]


# --- resigning -------------------------------------------------------------------------------


def test_resign_two_seats_the_other_wins() -> None:
    game = Game(Rules("star", 2))
    game.play("113-104")
    game.resign(1)  # on its own turn
    assert game.is_over and game.end_reason == "resign" and game.places == [1, 2]
    assert game.history[-1].kind == "resign" and game.history[-1].seat == 1
    with pytest.raises(IllegalMoveError, match="over"):
        game.resign(0)
    game.undo()
    assert not game.is_over and game.places == [None, None] and game.to_move == 1
    game.resign(0)  # not its turn: allowed
    assert game.places == [2, 1] and game.end_reason == "resign"


def test_resign_three_seats_takes_the_last_place_and_the_others_play_on() -> None:
    game = Game(Rules("star", 3))
    game.play("113-104")
    game.resign(1)  # seat 1 is to move: the turn passes to seat 2
    assert not game.is_over and game.places == [None, 3, None] and game.to_move == 2
    assert game.status == ["active", "resigned", "active"]
    rng = random.Random(1)
    for _ in range(10):
        assert game.to_move != 1
        game.play(rng.choice(game.legal_moves()))
    assert game.pieces(1) == sorted(Game(Rules("star", 3)).pieces(1)), "a resigned seat's pieces stay"
    game.resign(0)
    assert game.is_over and game.end_reason == "resign" and game.places == [2, 3, 1]
    with pytest.raises(IllegalMoveError):
        game.play(game.moves[-1])


def test_resign_errors_and_finished_seat() -> None:
    game = Game.from_position(_three_seat_race(tie=True))
    game.play("18-9")  # seat 0 finished (play to end)
    for seat, words in ((0, "already finished"), (3, "seat must be 0..2"), (-1, r"seat must be 0\.\.2, got -1"),
                        (True, "seat must be"), ("1", "seat")):  # -1 must not wrap around to seat 2
        before = game.position()
        with pytest.raises(IllegalMoveError, match=words):
            game.resign(seat)
        assert game.position() == before
    game.resign(2)
    assert game.is_over and game.places == [1, 2, 3] and game.end_reason == "resign"


def test_resign_with_a_seat_of_the_wrong_type_is_an_illegal_move_and_a_type_error() -> None:
    """``resign(True)``, ``resign(1.0)`` and ``resign("1")`` were a plain IllegalMoveError (a ValueError), as
    ``resign(5)`` is: a ``SeatTypeError``, still the IllegalMoveError that the envs, the arena and the record
    reader catch around a resignation, and a ``WrongTypeError`` (a ``TypeError``), Python's convention
    for an argument of the wrong type.  It is checked first, even once the game is over; a seat out of range
    stays an IllegalMoveError only."""
    from halma_env.game import SeatTypeError
    from halma_env.rules import WrongTypeError

    game = Game(Rules("star", 2))
    for seat in (True, 1.0, "1", None, np.float64(1.0)):
        before = game.position()
        with pytest.raises(TypeError, match=re.escape(f"seat must be 0..1, got {seat!r}")) as caught:
            game.resign(seat)  # type: ignore[arg-type]
        assert isinstance(caught.value, IllegalMoveError) and isinstance(caught.value, WrongTypeError)
        assert type(caught.value) is SeatTypeError and game.position() == before and not game.is_over
    for seat in (2, -1, np.int64(7)):
        with pytest.raises(IllegalMoveError, match=f"seat must be 0..1, got {seat}") as caught:
            game.resign(seat)
        assert not isinstance(caught.value, TypeError)
    game.resign(np.int64(1))  # numpy's integers are seats
    assert game.is_over and game.places == [1, 2]
    with pytest.raises(SeatTypeError, match="seat must be 0..1, got True"):
        game.resign(True)
    with pytest.raises(IllegalMoveError, match="the game is over") as caught:
        game.resign(0)
    assert not isinstance(caught.value, TypeError)


def test_a_resignation_records_the_automatic_passes_after_it() -> None:
    """Seat 0 resigns on its turn; seat 1 (one piece on the top tip, walled in by seat 2) has no
    move and passes automatically, recorded as a "pass" event; seat 2 is to move."""
    from halma_env import Event

    game = Game.from_position(position("star", 3, {0: "1", 1: "2", 2: "2", 3: "2", 5: "2", 60: "0"}))
    game.resign(0)
    assert game.history == [Event("resign", 0), Event("pass", 1)]
    assert game.to_move == 2 and not game.is_over


def test_resign_four_seats_fills_places_from_the_bottom() -> None:
    game = Game(Rules("star", 4))
    game.resign(3)
    game.resign(1)
    assert game.places == [None, 3, None, 4] and not game.is_over
    assert game.to_move == 0
    game.play(game.legal_moves()[0])
    assert game.to_move == 2
    game.resign(2)
    assert game.is_over and game.places == [1, 3, 2, 4]


# --- diamond: kings, rows, closed camps ------------------------------------------------------------


def _diamond(pieces: dict[int, str], to_move: int = 0, seats: int = 2) -> Game:
    return Game.from_position(position("diamond", seats, pieces, to_move=to_move))


@pytest.mark.parametrize("length", [1, 2, 3])
def test_king_jumps_a_row_of_pieces(length: int) -> None:
    row = line("star", 61, "E", length)  # 61.. to the east of the centre
    behind = walk("star", row[-1], "E")
    pieces = {60: "A", 100: "1"}
    pieces.update({h: "1" if i % 2 else "0" for i, h in enumerate(row)})
    game = _diamond(pieces)
    assert behind in dests(game, 60)
    # the landing is the first hole behind the row, not beyond it
    assert walk("star", behind, "E") not in dests(game, 60)
    game.play((60, behind))
    assert game.piece_at(behind) == (0, True) and game.piece_at(60) is None


@pytest.mark.parametrize("length", [2, 3])
def test_ordinary_pieces_jump_exactly_one_piece(length: int) -> None:
    row = line("star", 61, "E", length)
    game = _diamond({60: "0", 100: "B", **{h: "1" for h in row}})
    assert walk("star", row[-1], "E") not in dests(game, 60)
    star = Game.from_position(position("star", 2, {60: "0", **{h: "1" for h in row}}))
    assert walk("star", row[-1], "E") not in dests(star, 60)


def test_king_chains_row_jumps_and_changes_direction() -> None:
    # 60 jumps east over a row of two, then south-west over another row of two
    first_row = line("star", 61, "E", 2)
    land1 = walk("star", first_row[-1], "E")
    second_row = line("star", walk("star", land1, "SW"), "SW", 2)
    land2 = walk("star", second_row[-1], "SW")
    pieces = {60: "A", 100: "B", **{h: "1" for h in first_row + second_row}}
    game = _diamond(pieces)
    assert {land1, land2} <= dests(game, 60)
    move = next(m for m in game.legal_moves() if (m.src, m.dst) == (60, land2))
    assert move.path == (60, land1, land2)
    # without the first row the second landing is out of reach
    del pieces[first_row[0]], pieces[first_row[1]]
    assert land2 not in dests(_diamond(pieces), 60)


def test_king_row_jump_lands_on_hole_0() -> None:
    """Seat 0's goal tip is hole 0, the top tip: its king on 6 jumps the row 3, 1 (north-east)
    onto it in one jump (hole 0 is a hole like any other, not a marker for "off the board")."""
    assert line("star", 6, "NE", 4) == [6, 3, 1, 0]
    game = _diamond({6: "A", 3: "0", 1: "0", 100: "B"})
    assert 0 in dests(game, 6)
    move = next(m for m in game.legal_moves() if (m.src, m.dst) == (6, 0))
    assert move.path == (6, 0)
    game.play(move)
    assert game.piece_at(0) == (0, True)


def test_king_start_hole_counts_as_empty_mid_jump() -> None:
    """60 -E-> over 61 -> 62, then back -W- over 61: the row ends at the empty start hole 60, so the
    king lands there mid-chain (never as a move's end) and may jump on, over 59 to 58.  Whether the
    start hole counts as empty can change a jump path but never a move set (any hole reached
    through the start hole is reachable from it directly), so the rule is checked as far as it is
    observable: the destinations equal those of the reference search, which empties the start
    hole explicitly, and no move ends on its start."""
    pieces = {60: "A", 61: "1", 59: "1", 100: "B"}
    game = _diamond(pieces)
    d = dests(game, 60)
    assert 60 not in d
    assert {62, 58} <= d
    assert d == reference_destinations(game, 60)
    for move in game.legal_moves():
        assert move.dst != move.src


def test_nobody_jumps_a_king() -> None:
    # an ordinary piece may not hop over a king, the enemy's or its own
    assert 61 not in dests(_diamond({59: "0", 60: "B"}), 59)
    assert 61 not in dests(_diamond({59: "0", 60: "A", 100: "B"}), 59)
    # same with an ordinary piece in the middle: the hop is fine
    assert 61 in dests(_diamond({59: "0", 60: "1", 100: "B"}), 59)
    # a king may not jump a king, nor a row containing one
    assert 62 not in dests(_diamond({60: "A", 61: "B"}), 60)
    game = _diamond({60: "A", 61: "1", 62: "B"})
    assert 63 not in dests(game, 60) and 62 not in dests(game, 60)


def test_diamond_closed_camp_refuses_final_landing_and_mid_chain() -> None:
    """Seat 0 (home point 0, goal point 3) may not land on point 1.  From 78 a hop over 77 lands on
    76 (point 1) and a second hop over 66 would reach 57: both are refused in diamond, but legal
    on the plain star where no camp is closed."""
    assert 76 in star_point(1) and 57 not in star_point(1)
    pieces = {78: "0", 77: "1", 66: "1"}
    star = Game.from_position(position("star", 2, pieces))
    assert {76, 57} <= dests(star, 78)
    game = _diamond(pieces)
    assert 76 not in dests(game, 78) and 57 not in dests(game, 78)
    before = game.position()
    with pytest.raises(IllegalMoveError, match="closed camp"):
        game.play((78, 76))
    with pytest.raises(IllegalMoveError, match="cannot be reached"):
        game.play((78, 57))
    assert game.position() == before
    # the king too; and the hexagon edge rows stay open to everyone
    king = _diamond({78: "A", 77: "1", 100: "B"})
    assert 76 not in dests(king, 78)
    edge = _diamond({56: "0", 100: "B"})  # 56: a corner of seat 1's home camp (point 2 edge row)
    assert dests(edge, 56) == {47, 57, 66}  # 65 is on point 1 (closed); 46 on point 2 (closed)


def test_diamond_closed_camp_applies_to_every_seat_and_unused_colours() -> None:
    for seats in (2, 3):
        lay = layout("diamond", seats)
        for seat in range(seats):
            points = [p for p in range(6) if star_tip(p) in (lay.king_start[seat], lay.goal_tip[seat])]
            closed = set().union(*(star_point(q) for q in range(6) if q not in points))
            open_mask = lay.open_holes[seat]
            g = lay.geometry
            for h in range(g.num_holes):
                assert bool(open_mask >> g.bit[h] & 1) == (h not in closed), (seats, seat, h)


def test_diamond_finish_needs_full_goal_and_king_on_the_tip() -> None:
    lay = layout("diamond", 2)
    goal = sorted(lay.goals[0])
    tip = lay.goal_tip[0]
    assert tip == 0 and 16 in goal
    below = walk("star", 16, "SW")
    assert below not in goal
    # an ordinary piece fills the last goal hole (16) while the king waits on the tip: finished
    pieces = {h: "0" for h in goal if h != 16}
    pieces.update({tip: "A", below: "0", 100: "B"})
    game = Game.from_position(position("diamond", 2, pieces))
    assert not game.is_over
    game.play((below, 16))
    assert game.is_over and game.places == [1, 2] and game.end_reason == "finished"
    # the king fills the last hole instead, an ordinary piece on the tip: not finished
    pieces = {h: "0" for h in goal if h != 16}
    pieces.update({below: "A", 100: "B"})
    game = Game.from_position(position("diamond", 2, pieces))
    game.play((below, 16))
    assert not game.is_over and game.progress(0).in_goal == 15
    # loaded: full goal, king off the tip -> active; king on the tip -> finished
    off = {h: "0" for h in goal}
    off.update({5: "A", 100: "B"})
    assert not Game.from_position(position("diamond", 2, off)).is_over
    on = {h: "0" for h in goal}
    on.update({tip: "A", 100: "B"})
    assert Game.from_position(position("diamond", 2, on)).places == [1, 2]


def test_diamond_anti_blocking_with_an_opponent_in_the_edge_row() -> None:
    lay = layout("diamond", 2)
    goal = sorted(lay.goals[0])
    below = walk("star", 16, "SW")
    pieces = {h: "0" for h in goal if h not in (16, 17)}
    pieces.update({0: "A", 17: "1", below: "0", 60: "0", 100: "B"})
    text = position("diamond", 2, pieces)
    game = Game.from_position(text)
    game.play((below, 16))
    assert game.is_over and game.places == [1, 2]
    off = Game.from_position(text, anti_blocking=False)
    off.play((below, 16))
    assert not off.is_over


def test_diamond_puzzle_seat_without_a_king_finishes_on_its_goal_alone() -> None:
    lay = layout("diamond", 2)
    tip = lay.goal_tip[0]  # left empty: without a king nothing has to stand there
    pieces = {h: "0" for h in lay.goals[0] if h not in (16, tip)}  # 13 of the 14 ordinary pieces
    below = walk("star", 16, "SW")
    pieces.update({below: "0", 60: "B", 61: "1"})
    game = Game.from_position(position("diamond", 2, pieces))
    game.play((below, 16))
    assert game.is_over and game.places == [1, 2]


# --- halma16 goal lock --------------------------------------------------------------------------


def test_halma16_goal_lock_steps_and_mid_jump() -> None:
    """Seat 0's goal is the top-left staircase.  Its piece on (3,2) may step inside the goal but not
    out of it, and may not reach (1,2) by hopping out to (3,4) and back in over (2,3)."""
    goal = set(layout("halma16", 2).goals[0])
    s, out, back = sq(3, 2), sq(3, 4), sq(1, 2)
    assert s in goal and back in goal and out not in goal
    pieces = {s: "0", sq(3, 3): "1", sq(2, 3): "1", sq(15, 15): "1", sq(12, 12): "0"}
    game = Game.from_position(position("halma16", 2, pieces))
    d = dests(game, s)
    assert d == {sq(2, 1), sq(2, 2), sq(3, 1), sq(4, 1), sq(1, 4)}
    before = game.position()
    with pytest.raises(IllegalMoveError, match="goal and may not leave"):
        game.play((s, sq(4, 2)))
    with pytest.raises(IllegalMoveError, match="cannot be reached"):
        game.play((s, back))
    assert game.position() == before
    # the same square seen by seat 1, for whom it is not the goal: both are reachable
    other = Game.from_position(position("halma16", 2, {**pieces, s: "1", sq(3, 3): "0"}, to_move=1))
    assert {sq(4, 2), out, back} <= dests(other, s)


def test_halma16_piece_outside_may_enter_and_leave_the_goal_in_one_chain() -> None:
    """(5,0) hops into the goal at (3,0), on to (3,2) and out again to (3,4): no lock for a piece
    that began its turn outside the goal."""
    goal = set(layout("halma16", 2).goals[0])
    s = sq(5, 0)
    assert s not in goal and {sq(3, 0), sq(3, 2)} <= goal and sq(3, 4) not in goal
    pieces = {s: "0", sq(4, 0): "1", sq(3, 1): "1", sq(3, 3): "1", sq(12, 12): "0"}
    game = Game.from_position(position("halma16", 2, pieces))
    assert {sq(3, 0), sq(3, 2), sq(3, 4)} <= dests(game, s)
    move = next(m for m in game.legal_moves() if (m.src, m.dst) == (s, sq(3, 4)))
    assert move.path == (s, sq(3, 0), sq(3, 2), sq(3, 4))


# --- repetition, passes, no moves ---------------------------------------------------------------


def test_repetition_draw_halma16_default_three() -> None:
    game = Game(Rules("halma16", 2))
    shuffle = ["190-173", "2-36", "173-190", "36-2"]
    for _ in range(2):
        for m in shuffle:
            assert not game.is_over
            game.play(m)
    assert game.is_over and game.end_reason == "repetition" and game.places == [1, 1] and game.ply == 8
    game.undo()
    assert not game.is_over and game.places == [None, None]
    star = Game(Rules("star", 2))
    for _ in range(3):
        for m in ("113-104", "7-16", "104-113", "16-7"):
            star.play(m)
    assert not star.is_over, "no repetition rule on the star by default"
    two = Game(Rules("star", 2, repetition_limit=2))
    for m in ("113-104", "7-16", "104-113", "16-7"):
        two.play(m)
    assert two.end_reason == "repetition"


def test_repetition_count_survives_undo_and_replay_with_stall_limit() -> None:
    """Undo must take back exactly the repetition count it added (also with a stall limit)."""
    shuffle = ["190-173", "2-36", "173-190", "36-2"]
    for stall in (None, 100):
        game = Game(Rules("halma16", 2, stall_limit=stall))
        for m in shuffle:
            game.play(m)
        for _ in shuffle:
            game.undo()
        for m in shuffle:
            game.play(m)
        assert not game.is_over, f"spurious repetition after undo (stall_limit={stall})"
        for m in shuffle:
            game.play(m)
        assert game.end_reason == "repetition"


def test_the_position_a_resignation_hands_on_counts_for_repetition() -> None:
    """When the seat to move resigns (3+ seats) the turn passes on: the board with the next seat to move is a
    position the repetition rule counts, like the one after a move (it was not counted, so such a position
    repeated one occurrence late); undo takes the count back with the resignation."""
    game = Game(Rules("star", 3, repetition_limit=2))
    game.resign(0)  # (the start board, seat 1 to move): its first occurrence
    shuffle = ["12-14", "19-18", "14-12", "18-19"]  # seats 1 and 2 out and back
    for m in shuffle:
        game.play(m)
    assert game.end_reason == "repetition" and game.ply == 4 and game.places == [3, 1, 1]
    for _ in shuffle:
        game.undo()
    game.undo()  # the resignation, and its count
    assert game.to_move == 0 and game.places == [None, None, None]
    game.resign(0)  # the count is 1 again, not 2: the position repeats at the fourth move, not before
    for m in shuffle[:-1]:
        game.play(m)
        assert not game.is_over
    # the resignation itself can repeat a position: (X, seat 1 to move) after seat 0's move, then X again at
    # seat 0's turn, where seat 0 resigns and hands the turn to seat 1
    repeated = Game(Rules("star", 3, repetition_limit=2))
    for m in ["111-102", "12-14", "19-18", "102-89", "14-37", "18-31", "89-102", "37-12", "31-19"]:
        repeated.play(m)
    assert repeated.to_move == 0 and not repeated.is_over
    repeated.resign(0)
    assert repeated.end_reason == "repetition" and repeated.places == [3, 1, 1]
    repeated.undo()
    assert not repeated.is_over and repeated.to_move == 0 and repeated.places == [None, None, None]


def test_undo_takes_back_the_count_of_a_position_that_ended_the_game() -> None:
    """The position that ends a game by repetition or by the move limit was counted for the
    repetition rule; undo must take that count back like any other, or the position repeats
    early when it comes back (halma16: repetition limit 3)."""
    shuffle = ["190-173", "2-36", "173-190", "36-2"]
    game = Game(Rules("halma16", 2))
    for m in shuffle * 2:
        game.play(m)
    assert game.end_reason == "repetition" and game.ply == 8
    for _ in range(5):
        game.undo()
    game.play(shuffle[-1])  # the start position's second occurrence, not its third
    assert not game.is_over
    limited = Game(Rules("halma16", 2, move_limit=4))
    for m in shuffle:
        limited.play(m)
    assert limited.end_reason == "move_limit"
    limited.undo()
    limited.play(shuffle[-1])
    assert limited.end_reason == "move_limit"  # the second occurrence again, not a third


def test_automatic_pass_when_a_seat_has_no_move() -> None:
    """Seat 1's only piece sits on the top tip boxed in by seat 0's pieces: it passes every turn."""
    pieces = {0: "1", 1: "0", 2: "0", 3: "0", 5: "0", 60: "0"}
    game = Game.from_position(position("star", 2, pieces))
    assert game.legal_moves() and game.to_move == 0
    game.play("60-61")
    assert game.to_move == 0 and game.ply == 1
    assert [(e.kind, e.seat) for e in game.history] == [("move", 0), ("pass", 1)]
    game.play("61-60")
    assert [e.kind for e in game.history] == ["move", "pass", "move", "pass"]
    game.undo()
    assert game.to_move == 0 and game.ply == 1 and len(game.history) == 2
    # a loaded position with a stuck seat to move starts with its pass
    start = Game.from_position(position("star", 2, pieces, to_move=1))
    assert start.to_move == 0 and [(e.kind, e.seat) for e in start.history] == [("pass", 1)]


def test_everyone_stuck_is_a_no_moves_draw() -> None:
    """Diamond pieces on the tip of a closed point cannot move at all."""
    text = position("diamond", 2, {star_tip(1): "0", 0: "1"})  # point 1 closed for both; 3 for seat 1
    game = Game.from_position(text)
    assert game.is_over and game.end_reason == "no_moves" and game.places == [1, 1]
    assert game.legal_moves() == []
    # mid-game: seats 1 and 2 stuck, seat 0 plays alone; when it resigns the others are stuck
    pieces = {120: "1", 0: "2", 60: "0"}
    three = Game.from_position(position("diamond", 3, pieces))
    three.play("60-61")
    assert three.to_move == 0 and [e.kind for e in three.history][-2:] == ["pass", "pass"]
    three.resign(0)
    assert three.is_over and three.end_reason == "no_moves" and three.places == [3, 1, 1]


# --- move limit, stall limit, progress ------------------------------------------------------------

FORWARD_BACK = ["113-104", "7-16", "104-113", "16-7"]


def test_move_limit_draw() -> None:
    game = Game(Rules("star", 2, move_limit=3))
    for m in FORWARD_BACK[:3]:
        game.play(m)
    assert game.is_over and game.end_reason == "move_limit" and game.places == [1, 1] and game.ply == 3


def test_move_limit_progress() -> None:
    game = Game(Rules("star", 2, move_limit=4, limit_outcome="progress"))
    for m in ("113-104", "7-16", "104-91", "16-7"):  # seat 0 gains two rows, seat 1 goes back
        game.play(m)
    assert game.progress(0).distance < game.progress(1).distance
    assert game.is_over and game.end_reason == "move_limit" and game.places == [1, 2]
    game.undo()
    game.play("16-29")  # seat 1 makes the mirror image of seat 0's moves instead: a tie
    assert game.progress(0) == game.progress(1)
    assert game.places == [1, 1]


def test_move_limit_counts_the_loaded_ply() -> None:
    text = Game(Rules("star", 2)).position().rsplit(" ", 1)[0] + " 10"
    game = Game.from_position(text, move_limit=11)
    game.play("113-104")
    assert game.is_over and game.end_reason == "move_limit"


def test_a_position_loaded_at_or_past_the_move_limit_is_over_at_once() -> None:
    """SPEC §4: after move_limit plies the game stops; a game that stopped there and is loaded
    again (or any position whose ply count has reached the limit) has no further move."""
    game = Game(Rules("star", 2, move_limit=3))
    for m in FORWARD_BACK[:3]:
        game.play(m)
    text = game.position()
    for limit in (3, 2):
        loaded = Game.from_position(text, move_limit=limit)
        assert loaded.is_over and loaded.end_reason == "move_limit" and loaded.places == [1, 1]
        assert loaded.legal_moves() == [] and loaded.ply == 3
        with pytest.raises(IllegalMoveError, match="over"):
            loaded.play("104-113")
    by_progress = Game.from_position(text, move_limit=3, limit_outcome="progress")
    assert by_progress.end_reason == "move_limit" and by_progress.places == [2, 1]  # seat 1 a row ahead
    assert not Game.from_position(text, move_limit=4).is_over


def test_progress_ranks_pieces_in_goal_before_distance() -> None:
    """Seat 0: 1 piece in its goal but far behind; seat 1: none in goal, much closer: seat 0 ranks first."""
    pieces = {0: "0", 111: "0", 112: "0", 113: "0", 98: "1", 100: "1", 101: "1", 102: "1", 103: "1"}
    game = Game.from_position(position("star", 2, pieces), move_limit=1, limit_outcome="progress")
    p0, p1 = game.progress(0), game.progress(1)
    assert p0.in_goal == 1 and p1.in_goal == 0 and p0.distance > p1.distance
    assert p0.key() < p1.key()
    game.play("113-104")
    assert game.places == [1, 2]


def test_progress_ties_share_a_place_and_the_next_place_is_skipped() -> None:
    """star 4 with a move limit of one ply: seats 1 and 2 tie, so places are 1, 2, 2, 4."""
    rot2 = layout("star", 4).geometry.rotations[2]  # point 1 -> point 3, goal 4 -> goal 0
    seat1 = [19, 64, 58]  # 19 is in seat 1's goal (point 4)
    pieces = {0: "0", 1: "0", 60: "0", 22: "3"}
    pieces.update({h: "1" for h in seat1})
    pieces.update({rot2[h]: "2" for h in seat1})
    game = Game.from_position(position("star", 4, pieces), move_limit=1, limit_outcome="progress")
    keys = [game.progress(s).key() for s in range(4)]
    game.play("60-61")
    keys[0] = game.progress(0).key()
    assert keys[1] == keys[2] and keys[0] < keys[1] < keys[3]
    assert game.places == [1, 2, 2, 4]


def test_stall_limit_ends_by_progress() -> None:
    game = Game(Rules("star", 2, stall_limit=4))
    # forward moves improve (counter reset), then four plies without improvement end the game
    for m in ("113-104", "7-16"):
        game.play(m)
    for m in ("104-113", "16-7", "113-104"):
        game.play(m)
        assert not game.is_over
    game.play("7-16")
    assert game.is_over and game.end_reason == "stall_limit" and game.places == [1, 1]


def test_stall_limit_counts_from_the_first_ply_of_a_loaded_position() -> None:
    """The stall count starts at 0: with stall_limit=1 the very first ply without improvement ends it."""
    text = position("star", 2, {104: "0", 16: "1"})
    game = Game.from_position(text, stall_limit=1)
    game.play("104-113")  # backwards: no improvement on the position loaded
    assert game.is_over and game.end_reason == "stall_limit"
    game = Game.from_position(text, stall_limit=2)
    game.play("104-113")
    assert not game.is_over
    game.play("16-7")
    assert game.is_over and game.end_reason == "stall_limit"


def test_stall_limit_ranks_by_current_progress() -> None:
    d = walk("star", 91, "NW")
    game = Game(Rules("star", 2, stall_limit=2))
    game.play("113-104")  # seat 0 improves
    game.play("7-16")  # seat 1 improves
    game.play("104-91")  # seat 0 improves again
    game.play("16-7")  # no improvement (1)
    assert not game.is_over
    game.play(f"91-{d}")  # seat 0 improves: the count starts again
    game.play("7-16")  # only equals seat 1's best so far (1)
    assert not game.is_over
    game.play(f"{d}-91")  # worse (2): the game ends with seat 0 ahead
    assert game.is_over and game.end_reason == "stall_limit" and game.places == [1, 2]


def _bfs_distances(variant: str) -> dict[int, dict[int, int]]:
    g = layout(variant, 2).geometry
    out = {}
    for a in range(g.num_holes):
        dist = {a: 0}
        queue = deque([a])
        while queue:
            h = queue.popleft()
            for n in g.neighbours[h]:
                if n not in dist:
                    dist[n] = dist[h] + 1
                    queue.append(n)
        out[a] = dist
    return out


def _assignment(cost: list[list[int]]) -> int:
    """Least cost of giving each row its own column: DP over subsets of columns (independent of
    the engine's Hungarian algorithm)."""
    m = len(cost[0])
    best = {0: 0}
    for row in cost:
        nxt: dict[int, int] = {}
        for used, c in best.items():
            for j in range(m):
                if not used >> j & 1:
                    key = used | 1 << j
                    v = c + row[j]
                    if v < nxt.get(key, 1 << 30):
                        nxt[key] = v
        best = nxt
    return min(best.values())


def test_remaining_distance_is_the_optimal_assignment_on_an_empty_board() -> None:
    dist = _bfs_distances("star")
    rng = random.Random(11)
    for variant, seats in (("star", 2), ("star", 3), ("star", 6), ("diamond", 3)):
        game = Game(Rules(variant, seats))
        random_playout(game, rng, 60)
        for seat in range(seats):
            holes = game.pieces(seat)
            goal = list(game.layout.goals[seat])
            tip = game.layout.goal_tip[seat]
            if variant == "diamond":
                king = next(h for h in holes if game.piece_at(h)[1])
                rest = [h for h in holes if h != king]
                # the king goes to the tip; the other pieces to the other goal holes (DP too big for 15)
                ordinary_goal = [x for x in goal if x != tip]
                cost_ord = [[dist[h][x] for x in ordinary_goal] for h in rest]
                expect = dist[king][tip] + _greedy_upper(cost_ord)
                assert game.progress(seat).distance <= expect
                continue
            expect = _assignment([[dist[h][x] for x in goal] for h in holes])
            in_goal = len(set(holes) & set(goal))
            assert game.progress(seat) == Progress(in_goal, expect)
    start = Game(Rules("star", 2))
    assert start.progress(0) == start.progress(1) == Progress(0, 120)  # 10 pieces x 12 rows


def _greedy_upper(cost: list[list[int]]) -> int:
    """An upper bound (identity assignment of sorted rows) for the big diamond case."""
    used: set[int] = set()
    total = 0
    for row in cost:
        j = min((j for j in range(len(row)) if j not in used), key=row.__getitem__)
        used.add(j)
        total += row[j]
    return total


def test_diamond_distance_sends_the_king_to_the_tip() -> None:
    dist = _bfs_distances("star")
    # seat 0's king alone on the board next to its goal: distance = king to tip
    for king_hole in (60, 14, 5):
        game = Game.from_position(position("diamond", 2, {king_hole: "A", 100: "B"}))
        assert game.progress(0).distance == dist[king_hole][0]
    # a king and one ordinary piece: the ordinary piece may not use the tip
    game = Game.from_position(position("diamond", 2, {1: "A", 0: "0", 100: "B"}))
    assert game.progress(0) == Progress(2, dist[1][0] + min(dist[0][x] for x in game.layout.goals[0] if x != 0))


# --- first seat and solitaire ---------------------------------------------------------------------


def test_first_seat_rotates_the_start() -> None:
    for seats in (3, 6):
        game = Game(Rules("star", seats, first_seat=2))
        order = []
        for _ in range(seats + 1):
            order.append(game.to_move)
            game.play(game.legal_moves()[0])
        assert order == [(2 + i) % seats for i in range(seats + 1)]
    assert Game(Rules("halma16", 4, first_seat=3)).to_move == 3
    assert Game(Rules("diamond", 2, first_seat=1)).position().split(" ")[3] == "1"


def test_solitaire_star_one_seat() -> None:
    game = Game(Rules("star", 1))
    assert not game.is_over and game.to_move == 0 and len(game.legal_moves()) == 14
    random_playout(game, random.Random(0), 50)
    assert game.ply == 50 and game.to_move == 0 and not game.is_over
    assert all(e.kind == "move" for e in game.history)
    # nine pieces in the goal and the last one a step away: the crossing ends with place 1
    pieces = {h: "0" for h in range(9)}
    pieces[18] = "0"
    puzzle = Game.from_position(position("star", 1, pieces))
    puzzle.play("18-9")
    assert puzzle.is_over and puzzle.end_reason == "finished" and puzzle.places == [1]
    limited = Game(Rules("star", 1, move_limit=5))
    random_playout(limited, random.Random(1))
    assert limited.ply == 5 and limited.end_reason == "move_limit" and limited.places == [1]


# --- illegal moves: the reason, and nothing changes ---------------------------------------------


def _refused(game: Game, move, words: str) -> None:
    before = (game.position(), len(game.history), game.places, game.status, game.end_reason, game.legal_moves())
    with pytest.raises(IllegalMoveError, match=words):
        game.play(move)
    after = (game.position(), len(game.history), game.places, game.status, game.end_reason, game.legal_moves())
    assert after == before


def test_illegal_move_messages_and_the_game_is_unchanged() -> None:
    game = Game(Rules("star", 2))
    _refused(game, "60-61", "no piece on hole 60")
    _refused(game, (7, 16), "hole 7 holds a piece of seat 1, but seat 0 is to move")
    _refused(game, (113, 113), "another hole")
    _refused(game, (120, 119), "hole 119 is occupied")
    _refused(game, (113, 60), "hole 60 cannot be reached from 113")
    _refused(game, "113_104", "'src-dst'")
    _refused(game, "113-", "'src-dst'")
    _refused(game, "a-b", "'src-dst'")
    _refused(game, "113-10\u00b2", "'src-dst'")  # a digit that int() refuses
    _refused(game, (113,), "a Move, a \\(src, dst\\) pair")
    _refused(game, [113, 104], "a Move, a \\(src, dst\\) pair")
    _refused(game, 113, "a Move, a \\(src, dst\\) pair")
    _refused(game, (113, 121), "destination hole must be a hole number 0..120, got 121")
    _refused(game, (-1, 104), "source hole must be a hole number 0..120, got -1")
    _refused(game, "200-104", "source hole must be")
    _refused(game, (113.0, 104), "source hole")
    _refused(game, (True, 104), "source hole")
    game.play("113-104")  # the legal move still works afterwards
    assert game.ply == 1


def test_illegal_closed_camp_goal_lock_and_game_over() -> None:
    diamond = Game.from_position(position("diamond", 2, {78: "0", 77: "1", 100: "B"}))
    _refused(diamond, (78, 76), "closed camp for seat 0")
    h16 = Game.from_position(position("halma16", 2, {sq(3, 2): "0", sq(12, 12): "0", sq(8, 8): "1"}))
    _refused(h16, (sq(3, 2), sq(4, 2)), "began its turn in its goal and may not leave")
    h16.play((sq(3, 2), sq(2, 2)))  # moving inside the goal is fine
    # seat 1's goal is the bottom-right staircase: (13, 11) lies just outside, west of (13, 12)
    beside = Game.from_position(position("halma16", 2, {sq(13, 12): "1", sq(8, 8): "1", sq(8, 3): "0"}, to_move=1))
    _refused(beside, (sq(13, 12), sq(13, 11)), "began its turn in its goal and may not leave")
    over = Game(Rules("star", 2))
    over.resign(0)
    _refused(over, "113-104", "the game is over \\(resign\\)")
    assert over.legal_moves() == [] and over.count_moves() == 0 and over.legal_destinations(113) == []


def test_move_errors_name_the_wrong_hole_first() -> None:
    """Which hole is wrong comes first in the message, also when the other one is a valid 0."""
    game = Game(Rules("star", 2))
    _refused(game, (0, 121), r"^destination hole must be a hole number 0\.\.120, got 121$")
    _refused(game, (113, -1), r"^destination hole must be a hole number 0\.\.120, got -1$")
    _refused(game, (-1, 104), r"^source hole must be a hole number 0\.\.120, got -1$")
    _refused(game, (113, 113), r"^a move must end on another hole than it starts from$")


def test_undo_with_nothing_to_undo() -> None:
    game = Game(Rules("star", 3))
    with pytest.raises(IllegalMoveError, match="nothing to undo"):
        game.undo()


def test_a_given_path_is_not_trusted() -> None:
    """A Move carrying a path from elsewhere is recorded with the path of this position."""
    from halma_env import Move

    game = Game(Rules("star", 2))
    game.play(Move(113, 104, path=(113, 50, 104)))
    assert game.moves[-1].path == (113, 104)
    stale = game.legal_moves()[0]
    assert stale.path is not None
    game.play(stale)
    assert game.moves[-1].path == stale.path


def test_a_move_changed_after_its_path_was_found_is_played_with_the_path_of_its_holes() -> None:
    """A generated jump's slots can be assigned; one whose src changed after its path was worked out is
    recorded with a path from its new src, not the stale one (104-91 had kept 111's jump path)."""
    game = Game(Rules("star", 2))
    game.play("113-104")
    game.play("9-18")
    move = next(m for m in game.legal_moves() if (m.src, m.dst) == (111, 91))
    assert move.path == (111, 113, 91)
    move.src = 104
    game.play(move)
    played = game.moves[-1]
    assert (played.src, played.dst) == (104, 91) and played.path is not None
    assert (played.path[0], played.path[-1]) == (104, 91)


def test_from_position_names_every_option_the_text_fixes() -> None:
    text = Game(Rules("star", 2)).position()
    with pytest.raises(ValueError, match=r"not from options \(got variant='star', num_players=2\)"):
        Game.from_position(text, variant="star", num_players=2)


# --- layouts: homes, goals, starts --------------------------------------------------------------


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5, 6])
def test_star_homes_and_goals(seats: int) -> None:
    points = {1: (0,), 2: (0, 3), 3: (0, 2, 4), 4: (0, 1, 3, 4), 5: (0, 1, 2, 3, 4), 6: (0, 1, 2, 3, 4, 5)}[seats]
    game = Game(Rules("star", seats))
    for seat, p in enumerate(points):
        assert game.pieces(seat) == sorted(star_point(p))
        assert sorted(game.layout.goals[seat]) == sorted(star_point((p + 3) % 6))
    if seats == 5:  # the seat on point 2 heads for point 5, which nobody starts on
        assert all(game.piece_at(h) is None for h in star_point(5))


@pytest.mark.parametrize("seats", [2, 4])
def test_halma16_camps(seats: int) -> None:
    rows = (5, 5, 4, 3, 2) if seats == 2 else (4, 4, 3, 2)
    game = Game(Rules("halma16", seats))
    corners = [(15, 15), (0, 0)] if seats == 2 else [(15, 15), (15, 0), (0, 0), (0, 15)]
    for seat in range(seats):
        r0, c0 = corners[seat]
        dr, dc = (-1 if r0 else 1), (-1 if c0 else 1)
        camp = sorted(sq(r0 + dr * i, c0 + dc * j) for i, w in enumerate(rows) for j in range(w))
        assert game.pieces(seat) == camp and len(camp) == (19 if seats == 2 else 13)
        opposite = corners[(seat + seats // 2) % seats]
        assert sq(*opposite) in game.layout.goals[seat]


@pytest.mark.parametrize("seats", [2, 3])
def test_diamond_start(seats: int) -> None:
    game = Game(Rules("diamond", seats))
    points = (0, 2) if seats == 2 else (0, 2, 4)
    for seat, p in enumerate(points):
        mine = game.pieces(seat)
        assert len(mine) == 15 and set(star_point(p)) <= set(mine)
        assert game.piece_at(star_tip(p)) == (seat, True)
        assert sum(game.piece_at(h)[1] for h in mine) == 1
        assert game.layout.goal_tip[seat] == star_tip((p + 3) % 6)


def test_numpy_integers_are_holes_and_seats() -> None:
    """RL code decodes actions into numpy integers: they are accepted like Python ints (and stored
    as Python ints); numpy floats and bools are refused."""
    import numpy as np

    from halma_env import Move

    game = Game(Rules("star", 3))
    game.play((np.int64(113), np.int64(104)))
    legal = game.legal_moves()[0]
    game.play(Move(np.int32(legal.src), np.int32(legal.dst)))
    assert [(type(m.src), type(m.dst)) for m in game.moves] == [(int, int)] * 2
    src, dst = game.legal_moves()[0]
    _refused(game, (np.float64(src), dst), "source hole")
    _refused(game, (src, np.bool_(True)), "destination hole")
    game.resign(np.int16(2))
    assert game.places == [None, None, 3]
    with pytest.raises(IllegalMoveError, match="seat must be"):
        game.resign(np.float32(1))


def test_numpy_bools_are_flags_and_numpy_ints_are_not() -> None:
    """A rule set read with numpy (np.bool_ from an array or a structured config) is accepted and
    stored as Python bools, equal to the same rules written with True and False; 1 and np.int64(1)
    are not flags."""
    import numpy as np

    rules = Rules("star", 2, anti_blocking=np.bool_(False), play_to_end=np.array(False)[()])
    assert rules == Rules("star", 2, anti_blocking=False, play_to_end=False)
    assert type(rules.anti_blocking) is bool and type(rules.play_to_end) is bool
    for value in (1, np.int64(1), np.array([True]), "true"):
        with pytest.raises(ValueError, match="anti_blocking must be true or false"):
            Rules("star", 2, anti_blocking=value)


def test_numpy_integers_reach_the_first_and_last_hole_and_seat() -> None:
    """The full range check (taken for integer types other than int) accepts both ends."""
    import numpy as np
    game = Game(Rules("star", 2))
    for hole, seat in ((0, 1), (120, 0)):
        assert game.piece_at(np.int64(hole)) == game.piece_at(hole) == (seat, False)
        assert game.legal_destinations(np.int16(hole)) == game.legal_destinations(hole)
    for seat in (0, 1):
        assert game.pieces(np.int64(seat)) == game.pieces(seat)
        assert game.progress(np.int8(seat)) == game.progress(seat)


def test_play_converts_each_hole_of_a_mixed_integer_pair() -> None:
    """A numpy integer source with a Python int destination (and the other way round), and int
    subclasses (an IntEnum, say), are holes like any int."""
    import numpy as np

    from halma_env import Move

    class Hole(int):
        pass

    for move in ((np.int64(113), 104), (113, np.int32(104)), (Hole(113), Hole(104))):
        game = Game(Rules("star", 2))
        game.play(move)
        assert game.moves == [Move(113, 104)] and game.piece_at(104) == (0, False) and game.piece_at(113) is None


def test_an_array_is_not_a_hole_and_the_error_shows_it() -> None:
    """numpy arrays have ``__index__`` but refuse it (TypeError): refused, and named as given."""
    import numpy as np
    game = Game(Rules("star", 2))
    pair = (np.array([113, 104]), 104)
    _refused(game, pair, r"^source hole must be a hole number 0\.\.120, got array\(\[113, 104\]\)$")
    with pytest.raises(IllegalMoveError, match=r"seat must be 0\.\.1, got array\(\[0, 1\]\)"):
        game.resign(np.array([0, 1]))
    assert game.ply == 0 and not game.is_over


def test_rules_take_numpy_integers_and_store_python_ints() -> None:
    """As hole and seat arguments elsewhere do: numpy integers are integers, bools are not."""
    import json

    import numpy as np

    rules = Rules("star", np.int64(3), move_limit=np.int32(300), stall_limit=np.int16(40), first_seat=np.int64(1))
    assert rules == Rules("star", 3, move_limit=300, stall_limit=40, first_seat=1)
    assert all(type(v) is int for v in (rules.num_players, rules.move_limit, rules.stall_limit, rules.first_seat))
    json.dumps(rules.to_dict())  # records write them
    for bad in (np.True_, True, 3.0, "3"):
        with pytest.raises(ValueError, match="num_players must be an int"):
            Rules("star", bad)


def test_did_you_mean_names_the_nearest_known_name_or_nothing() -> None:
    from halma_env.suggest import did_you_mean

    assert did_you_mean("stall_limt", ["move_limit", "stall_limit"]) == " (did you mean 'stall_limit'?)"
    in_section = did_you_mean("learnin_rate", iter(["gamma", "learning_rate"]), "ppo")
    assert in_section == " (did you mean 'ppo.learning_rate'?)"
    assert did_you_mean("xyzzy", ["move_limit", "stall_limit"]) == ""
    assert did_you_mean("x", []) == ""


@pytest.mark.parametrize("option", ["anti_blocking", "move_limit", "limit_outcome", "first_seat"])
def test_a_long_rule_value_is_shown_short(option: str) -> None:
    """Rules echoed a bad value whole: a record or results file with 100,000 characters there made an error as
    long (a fuzzing round)."""
    with pytest.raises(ValueError, match=rf"^{option} must .*, got 'xxxx.*\.\.\. \(str\)$"):
        Rules("star", 2, **{option: "x" * 100_000})
    with pytest.raises(ValueError, match=r"^num_players must be an int, got \[2, 2, .*\.\.\. \(list\)$"):
        Rules("star", [2] * 100_000)


def test_shown_value_escapes_and_cuts_short() -> None:
    """One way to show a bad value in a message, for the engine and the agents alike."""
    from halma_env.suggest import shown_value

    assert shown_value("a\x1b[31m") == "'a\\x1b[31m'"  # no escape sequence reaches a terminal
    assert shown_value([1, 2]) == "[1, 2]" and shown_value(True) == "True" and shown_value(2**99) == str(2**99)
    assert shown_value(list(range(100))) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,... (list)"
    assert shown_value(10**5000) == "an integer of 16610 bits"  # repr itself refuses it
    assert shown_value(-(2**101)) == "an integer of 102 bits"
    assert shown_value([10**5000]) == "a list holding an integer too long to show"  # (repr raised ValueError)


def test_shown_typed_names_the_type_once() -> None:
    """``as_index("x" * 100, "seat")`` said ``got 'xxx...'... (str) (str)`` (before 2026-12-07)."""
    from halma_env.encoding import as_index
    from halma_env.suggest import shown_typed

    assert shown_typed(1.5) == "1.5 (float)" and shown_typed("x" * 100) == "'" + "x" * 49 + "... (str)"
    with pytest.raises(TypeError) as caught:
        as_index("x" * 100, "seat")
    assert str(caught.value) == "seat must be an integer, got '" + "x" * 49 + "... (str)"


@pytest.mark.parametrize("seats", ["2", 2.0, None])
def test_a_preset_names_a_seat_count_that_is_not_an_int(seats) -> None:
    with pytest.raises(ValueError, match=f"num_players must be an int, got {re.escape(repr(seats))}"):
        Rules.preset("kawu", seats)


def test_a_seat_without_pieces_is_ranked_by_progress_as_the_spec_defines_it() -> None:
    """SPEC §4's progress of a seat without any piece (puzzles only) is 0 pieces in its goal and a
    remaining distance of 0, ahead of a seat whose pieces are all still outside its goal
    (docs/rules.md records the decision); it can never finish."""
    game = Game.from_position(position("star", 2, {60: "0"}), move_limit=1, limit_outcome="progress")
    assert game.progress(1) == Progress(0, 0) and game.progress(0).distance > 0
    game.play(game.legal_moves()[0])
    assert game.end_reason == "move_limit" and game.places == [2, 1]


def test_progress_orders_by_how_far_along_not_as_a_plain_tuple() -> None:
    """max() of progresses is the best one: more pieces in the goal, then the shorter distance (as a plain
    tuple the longer distance compared greater, so max() picked the worse of two with equal pieces)."""
    ahead, behind, fewer = Progress(5, 2), Progress(5, 10), Progress(3, 0)
    assert max(behind, ahead) == ahead and min(ahead, behind, fewer) == fewer
    assert sorted([behind, fewer, ahead]) == [fewer, behind, ahead]  # worst first, as key() sorts in reverse
    assert behind < ahead and ahead > behind and ahead >= Progress(5, 2) and behind <= ahead
    assert not ahead < Progress(5, 2) and ahead == (5, 2)  # equality stays the tuple's
    with pytest.raises(TypeError):
        ahead < (5, 3)  # noqa: B015 (a plain tuple has no progress order)


class _OldNumpyBool:
    """What numpy before 2.3 gives: a bool with an index (``operator.index(np.True_)`` was 1 there)."""

    dtype = "bool"

    def __index__(self) -> int:
        return 1


def test_bools_with_an_index_are_not_integers_anywhere() -> None:
    """numpy 1.24-2.2 (the declared floor, and the newest on Python 3.10) index their bools: a bool seat,
    hole, count or event number was taken as 1 there, as the checks relied on operator.index refusing it."""
    from halma_env.records import GameRecord
    from halma_env.rules import is_bool

    assert is_bool(_OldNumpyBool()) and is_bool(True) and not is_bool(1)
    with pytest.raises(ValueError, match="num_players must be an int"):
        Rules("star", _OldNumpyBool())
    game = Game(Rules("star", 2))
    src, dst = game.legal_moves()[0]
    _refused(game, (src, _OldNumpyBool()), "destination hole")
    game.play((src, dst))
    with pytest.raises(ValueError, match="upto must be an event count"):
        GameRecord.from_game(game).replay(upto=_OldNumpyBool())


def test_the_engines_integer_reading_takes_one_integer_of_any_type() -> None:
    """as_integer, behind every integer argument of the engine (Rules, Game, perft, records, the SVG, the
    batched engine), takes Python, numpy and 0-d tensor integers and refuses an indexable bool, a 0-d bool
    tensor, floats and arrays or tensors of one element but more dimensions (torch's __index__ takes those)."""
    import torch

    from halma_env.game import perft
    from halma_env.rules import as_integer, is_bool

    assert is_bool(torch.tensor(True)) and not is_bool(torch.tensor(1))
    assert [as_integer(v) for v in (3, np.int8(-3), np.uint64(7), np.array(5), torch.tensor(6))] == [3, -3, 7, 5, 6]
    for refused in (_OldNumpyBool(), torch.tensor(True), np.True_, True, 2.0, np.float32(2), "2",
                    torch.tensor([2]), torch.tensor([[2]]), np.array([2]), [2]):
        assert as_integer(refused) is None, refused
    with pytest.raises(ValueError, match="num_players must be an int, got tensor"):
        Rules("star", torch.tensor([[2]]))
    with pytest.raises(ValueError, match="move_limit"):
        Rules("star", 2, move_limit=torch.tensor([[300]]))
    assert Rules("star", torch.tensor(2)).num_players == 2 and type(Rules("star", np.int64(2)).num_players) is int
    game = Game(Rules("star", 2))
    with pytest.raises(TypeError, match="depth must be an integer"):
        perft(game, torch.tensor([[1]]))
    with pytest.raises(IllegalMoveError):
        game.play((torch.tensor([[113]]), torch.tensor([104])))
    assert game.ply == 0


def test_recent_events_are_the_history_newest_first() -> None:
    """Game.recent_events() (what the bots' memory of recent moves reads, lazily) is reversed(history),
    passes at the load and after a resignation included."""
    from halma_env import Event

    walled = Game.from_position(position("star", 3, {0: "1", 1: "2", 2: "2", 3: "2", 5: "2", 60: "0"}, to_move=1))
    assert walled.history[0] == Event("pass", 1)  # seat 1 passed as the position was loaded
    rng = random.Random(3)
    for game in (walled, Game(Rules("star", 3)), Game(Rules("diamond", 2))):
        for ply in range(60):
            if game.is_over:
                break
            if ply == 30 and game.rules.num_players == 3:
                game.resign(game.to_move)
            else:
                game.play(rng.choice(game.legal_moves()))
            assert list(game.recent_events()) == game.history[::-1]
        assert next(game.recent_events()) == game.history[-1]


def test_the_progress_cache_is_a_bounded_lru() -> None:
    """A long-lived process (a game server, a training run) keeps at most 32,768 progress entries, dropping
    the least recently used (a dict of 200,000 cleared when full held 52-67 MB, then started over)."""
    from halma_env.game import _progress

    game = Game(Rules("star", 2, stall_limit=40))
    game.play("113-104")
    assert _progress.cache_info().maxsize == 32_768
    before = _progress.cache_info().hits
    game.progress(0)
    game.progress(0)
    assert _progress.cache_info().hits > before


# --- input limits: integer options and option text --------------------------------------------


@pytest.mark.parametrize("name", ["move_limit", "stall_limit", "repetition_limit"])
def test_limits_above_the_maximum_are_refused(name: str) -> None:
    """A limit above MAX_LIMIT (12 digits, as a position's ply field) was accepted and then overflowed
    the batched engine's int64 counters (``OverflowError: int too big to convert``)."""
    import numpy as np

    from halma_env.rules import MAX_LIMIT

    assert MAX_LIMIT == 999_999_999_999
    assert getattr(Rules("star", 2, **{name: MAX_LIMIT}), name) == MAX_LIMIT
    for value in (MAX_LIMIT + 1, 10**20, 2**63, np.uint64(2**64 - 1)):
        with pytest.raises(ValueError, match=f"^{name} must be at most 999999999999 \\(or None for no limit\\), "
                                             f"got {int(value)}$"):
            Rules("star", 2, **{name: value})
    with pytest.raises(ValueError, match=f"^{name} must be at most 999999999999"):
        Rules("star", 2).replace(**{name: 10**20})


def test_huge_integers_are_named_in_a_readable_error() -> None:
    """str() refuses ints of more than 4300 digits: the error said that instead of naming the option."""
    huge = 10**5000
    with pytest.raises(ValueError, match="^move_limit must be at least 1 .*got an integer of 16610 bits$"):
        Rules("star", 2, move_limit=-huge)
    with pytest.raises(ValueError, match="^stall_limit must be at most .*got an integer of 16610 bits$"):
        Rules("star", 2, stall_limit=huge)
    with pytest.raises(ValueError, match="^first_seat must be a seat 0..1, got an integer of 16610 bits$"):
        Rules("star", 2, first_seat=huge)
    with pytest.raises(ValueError, match="not an integer of 16610 bits"):
        Rules("star", huge)


@pytest.mark.parametrize("text", ["\u0661\u0660", "\uff11\uff10", "1_0", "+10", "\u0661" * 5000],
                         ids=["arabic-indic", "full-width", "underscore", "plus", "5000-arabic-indic"])
def test_rule_option_numbers_are_ascii_digits(text: str) -> None:
    """int() reads Arabic-Indic or full-width digits and underscores: ``--rule move_limit=١٠`` was
    taken as 10.  Only ASCII digits (and a '-') are a number; the error names the option and the text."""
    with pytest.raises(ValueError, match="^rule option 'move_limit': numbers are written in ASCII digits") as info:
        parse_rule_options([f"move_limit={text}"])
    assert repr(text[:30]) in str(info.value)


def test_rule_option_number_too_long_is_refused() -> None:
    assert parse_rule_options(["move_limit=" + "9" * 30]) == {"move_limit": int("9" * 30)}  # Rules refuses it
    with pytest.raises(ValueError, match="^rule option 'stall_limit': a number of 5000 digits is far too long$"):
        parse_rule_options(["stall_limit=" + "9" * 5000])


def test_replace_refuses_another_variant_and_takes_another_seat_count() -> None:
    """Rules.replace(variant=...) kept the old variant's defaults: a halma16 rule set with the star's
    anti-blocking and no repetition limit, unlike Rules('halma16', 2) (and its games might never end).
    Another variant is refused, pointing to Rules(variant, ...); no default depends on the seat count,
    so num_players can still change."""
    star = Rules("star", 2, move_limit=200)
    with pytest.raises(ValueError, match=re.escape("replace cannot change the variant ('star' -> 'halma16')")) as info:
        star.replace(variant="halma16")
    assert "Rules('halma16', num_players, ...)" in str(info.value)
    with pytest.raises(ValueError, match=re.escape("('halma16' -> 'star')")):
        Rules("halma16", 2).replace(variant="star")  # would have kept repetition_limit=3, anti_blocking off
    with pytest.raises(ValueError, match=re.escape("('star' -> 'diamond')")):
        Rules("star", 3).replace(variant="diamond", num_players=3)
    assert star.replace(variant="star", move_limit=9) == Rules("star", 2, move_limit=9)  # the same variant: fine
    with pytest.raises(ValueError, match="unknown variant 'checkers'"):  # named as Rules names it
        star.replace(variant="checkers")
    # the seat count: every default is the variant's, whatever the seats
    for variant in ("star", "diamond", "halma16"):
        counts = SEAT_COUNTS[variant]
        for a in counts:
            for b in counts:
                assert Rules(variant, a).replace(num_players=b) == Rules(variant, b)
    assert Rules("star", 6, stall_limit=5).replace(num_players=1) == Rules("star", 1, stall_limit=5)
    with pytest.raises(ValueError, match="first_seat must be a seat 0..1, got 4"):
        Rules("star", 6, first_seat=4).replace(num_players=2)


def test_game_problem_is_the_one_check_of_a_variant_and_seat_count() -> None:
    """Rules, checkpoints, exported opponents and the ladder all ask game_problem whether (variant, seats) is a
    game: an integer of any type is a seat count, a bool, 2.0 or "2" is not; a bad value is shown short."""
    from halma_env.rules import SEAT_COUNTS, VARIANTS, game_problem

    assert all(game_problem(v, n) is None for v in VARIANTS for n in SEAT_COUNTS[v])
    assert game_problem("star", np.int64(6)) is None and game_problem("halma16", np.uint8(4)) is None
    assert game_problem("chess", 2) == "unknown variant 'chess'; variants: star, diamond, halma16"
    assert game_problem(["star"], 2) == "unknown variant ['star']; variants: star, diamond, halma16"
    for seats, shown in [(True, "True"), (2.0, "2.0"), ("2", "'2'"), (None, "None"), (0, "0"), (7, "7"),
                         (10**400, "an integer of 1329 bits")]:
        assert game_problem("star", seats) == f"star is played by 1, 2, 3, 4, 5, 6 seats, not {shown}"
    assert game_problem("diamond", 4) == ("diamond is played by 2, 3 seats, not 4 (with 4-6 seats use the "
                                          "international 'star' rules)")
    assert game_problem("x" * 100, 2) == f"unknown variant '{'x' * 49}... (str); variants: star, diamond, halma16"
    assert game_problem("halma16", 3, shown=lambda v: f"<{v}>") == "halma16 is played by 2, 4 seats, not <3>"


def _place_rewards(*args):
    from halma_env.rewards import place_rewards

    return place_rewards(*args)


def _play_moves(*args):
    from halma_env.game import play_moves

    return play_moves(*args)


# --- argument types: a TypeError for the wrong type, a ValueError for a value out of range ---------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: Rules("star", True), "num_players must be an int, got True"),
    (lambda: Rules("star", 2.0), "num_players must be an int, got 2.0"),
    (lambda: Rules("star", "2"), "num_players must be an int, got '2'"),
    (lambda: Rules("star", None), "num_players must be an int, got None"),
    (lambda: Rules(None, 2), "unknown variant None"),
    (lambda: Rules("star", 2, first_seat=True), "first_seat must be a seat 0..1, got True"),
    (lambda: Rules("star", 2, first_seat=1.0), "first_seat must be a seat 0..1, got 1.0"),
    (lambda: Rules("star", 2, move_limit=True), "move_limit must be an int or None, got True"),
    (lambda: Rules("star", 2, stall_limit="10"), "stall_limit must be an int or None, got '10'"),
    (lambda: Rules("star", 2, anti_blocking=1), "anti_blocking must be true or false, got 1"),
    (lambda: Rules("star", 2, limit_outcome=1), "limit_outcome must be one of draw, progress, got 1"),
    (lambda: Rules("star", 2, limit_outcome=None), "limit_outcome must be one of draw, progress, got None"),
    (lambda: Rules("star", 2, limit_outcome=b"draw"), "limit_outcome must be one of draw, progress, got b'draw'"),
    (lambda: Rules("star", 2, limit_outcome=["draw"]), "limit_outcome must be one of draw, progress, got ['draw']"),
    (lambda: Rules("star", 2).replace(limit_outcome=0), "limit_outcome must be one of draw, progress, got 0"),
    (lambda: Rules.preset("kawu", True), "num_players must be an int, got True"),
    (lambda: Rules.from_dict([("variant", "star")]), "rules must be a mapping of option names, got list"),
    (lambda: Rules.from_dict({1: 2}), "rules must be a mapping of option names (text), got the key 1"),  # was: raw
    (lambda: Rules.from_dict({"variant": "star", None: 2}),  # TypeError: keywords must be strings
     "rules must be a mapping of option names (text), got the key None"),
    (lambda: layout("star", True), "star is played by 1, 2, 3, 4, 5, 6 seats, not True"),
    (lambda: layout("star", 2.0), "not 2.0"),
    # a plain TypeError before, which `except ValueError` around the other checks missed
    (lambda: Game(Rules("star", 2)).pieces(1.0), "seat must be an integer 0..1, got 1.0"),
    (lambda: Game(Rules("star", 2)).piece_at(1.5), "hole must be an integer 0..120, got 1.5"),
    (lambda: Game({"variant": "star", "num_players": 2}), "Game takes a Rules"),
    (lambda: _place_rewards([1, 2], 1), "reward must be one of place, win_loss, got 1"),  # a ValueError before
    (lambda: _play_moves(Game(Rules("star", 2)), bytearray(b"7-16")), "moves must be a list of moves, got one text"),
    (lambda: _play_moves(Game(Rules("star", 2)), 5), "moves must be a list of moves, got 5"),
])
def test_an_argument_of_the_wrong_type_is_a_type_error_naming_it(call, message: str) -> None:
    """Python's convention: a bool, a float or text where an integer (a seat count, a seat, a limit) is meant, or
    an int where a flag is, is a ``TypeError`` (these were ``ValueError``, where ``player_for``'s and
    ``Game(...)``'s were ``TypeError``).  It is a ``WrongTypeError``, a ``ValueError`` too, so callers that
    catch ``ValueError`` still catch it (``halma_env.WrongTypeError``, beside ``IllegalMoveError``)."""
    from halma_env import WrongTypeError

    with pytest.raises(TypeError, match=re.escape(message)) as caught:
        call()
    assert isinstance(caught.value, WrongTypeError) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: Rules("star", 7), "star is played by 1, 2, 3, 4, 5, 6 seats, not 7"),
    (lambda: Rules("chess", 2), "unknown variant 'chess'"),
    (lambda: Rules("star", 2, first_seat=2), "first_seat must be a seat 0..1, got 2"),
    (lambda: Rules("star", 2, move_limit=0), "move_limit must be at least 1"),
    (lambda: Rules("star", 2, limit_outcome="win"), "limit_outcome must be one of draw, progress, got 'win'"),
    (lambda: Rules.preset("kawu", 5), "the kawu preset is for 2, 3, 4 or 6 seats, not 5"),
    (lambda: layout("diamond", 4), "diamond is played by 2, 3 seats, not 4"),
    (lambda: layout("stra", 2.0), "unknown variant 'stra'"),  # (the problem named is the typo, not the 2.0)
    (lambda: Rules("stra", True), "unknown variant 'stra'"),
])
def test_an_argument_of_the_right_type_out_of_range_is_a_value_error_only(call, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        call()
    assert not isinstance(caught.value, TypeError)


def test_numpy_integers_are_integers_for_the_rules_and_stored_as_python_ints() -> None:
    """What ``np_random`` draws is an integer: a seat count, a seat and a limit of numpy's are taken."""
    rules = Rules("star", np.int64(3), first_seat=np.uint8(2), move_limit=np.int32(50))
    assert (rules.num_players, rules.first_seat, rules.move_limit) == (3, 2, 50)
    assert all(type(v) is int for v in (rules.num_players, rules.first_seat, rules.move_limit))
    assert layout("star", np.int16(2)) is layout("star", 2)


def test_game_rules_is_read_only() -> None:
    """``game.rules = other`` after construction left the board, its tables and places set up for the old rules
    while every later check read the new ones (a 2-seat board under 3-seat rules): it is refused, the game
    unchanged; pickles and copies keep the rules (and a pickle made when ``rules`` was a plain attribute
    loads)."""
    import copy
    import pickle

    game = Game(Rules("star", 2))
    game.play(game.legal_moves()[0])
    before = game.position()
    with pytest.raises(AttributeError):
        game.rules = Rules("star", 3)  # type: ignore[misc]
    assert game.rules == Rules("star", 2) and game.position() == before and game.num_players == 2
    for other in (pickle.loads(pickle.dumps(game)), game.copy(), copy.deepcopy(game)):
        assert other.rules == game.rules and other.position() == before
        with pytest.raises(AttributeError):
            other.rules = Rules("star", 3)  # type: ignore[misc]
    state = game.__getstate__()
    state["rules"] = state.pop("_rules")  # the form of an older pickle
    old = Game.__new__(Game)
    old.__setstate__(state)
    assert old.rules == game.rules and old.position() == before and old.legal_moves() == game.legal_moves()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: Rules.preset(5), "unknown preset 5; expected one of qdan, kawu"),  # was: a ValueError only
    (lambda: Rules.preset(None), "unknown preset None; expected one of qdan, kawu"),
    (lambda: Rules.preset(b"kawu"), "unknown preset b'kawu'; expected one of qdan, kawu"),
    (lambda: Game.from_position(5), "a position is a line of text, got int"),  # was: a ValueError only
    (lambda: Game.from_position(b"star 2"), "a position is a line of text, got bytes"),
])
def test_a_preset_name_or_a_position_that_is_no_text_is_a_wrong_type_error(call, message) -> None:
    """A preset name or a position text that is no text was a plain ValueError, as an unknown name or a malformed
    text is: a ``WrongTypeError`` (a TypeError, still a ValueError) with the same message naming the problem."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(WrongTypeError, match=f"^{re.escape(message)}$"):
        call()
    with pytest.raises(ValueError, match="unknown preset 'fast'") as caught:
        Rules.preset("fast")
    assert not isinstance(caught.value, TypeError)


@pytest.mark.parametrize(("move", "message"), [
    (1.5, "a move is a Move, a (src, dst) pair or 'src-dst' text, got 1.5"),
    (116, "a move is a Move, a (src, dst) pair or 'src-dst' text, got 116"),
    ([116, 105], "a move is a Move, a (src, dst) pair or 'src-dst' text, got [116, 105]"),
    (None, "a move is a Move, a (src, dst) pair or 'src-dst' text, got None"),
    ((116.0, 105), "source hole must be a hole number 0..120, got 116.0"),
    ((116, True), "destination hole must be a hole number 0..120, got True"),
    (("116", 105), "source hole must be a hole number 0..120, got '116'"),
    (Move(116, 105.0), "destination hole must be a hole number 0..120, got 105.0"),
])
def test_a_move_of_the_wrong_type_is_a_move_type_error_and_still_an_illegal_move(move, message) -> None:
    """``Game.play(1.5)`` (and a pair of holes that are no integers) is a malformed move, an ``IllegalMoveError`` as
    the docs say, and now also a ``WrongTypeError`` (a TypeError): ``game.MoveTypeError``, as ``SeatTypeError`` is
    for ``resign``; a well-typed move that is wrong (a hole off the board, a pair of three) is no TypeError."""
    from halma_env.game import MoveTypeError
    from halma_env.rules import WrongTypeError

    game = Game(Rules("star", 2))
    before = game.position()
    with pytest.raises(MoveTypeError, match=f"^{re.escape(message)}$") as caught:
        game.play(move)
    assert isinstance(caught.value, IllegalMoveError) and isinstance(caught.value, WrongTypeError)
    assert game.position() == before and not game.is_legal(move)
    for wrong in ((500, 105), (116, 105, 94), "116", (116, 116)):
        with pytest.raises(IllegalMoveError) as caught:
            game.play(wrong)
        assert not isinstance(caught.value, TypeError)


def test_move_parse_of_no_text_is_a_move_type_error() -> None:
    from halma_env.game import MoveTypeError

    for value in (5, 1.5, None, b"116-105", (116, 105)):
        with pytest.raises(MoveTypeError, match=re.escape(f"a move is written 'src-dst' with two hole numbers, "
                                                          f"got {type(value).__name__}")):
            Move.parse(value)
