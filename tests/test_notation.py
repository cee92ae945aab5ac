"""SPEC §3 position notation: exact round trips and one clear error per kind of malformed text."""

from __future__ import annotations

import random

import pytest
from engine_helpers import position, scattered_position

from halma_env import Game, Rules
from halma_env.game import random_playout
from halma_env.notation import parse_position

SPEC_EXAMPLE = (
    "star 2 1/11/111/1111/............./............/.........../........../........./........../"
    ".........../............/............./0000/000/00/0 0 0"
)
VARIANTS = [("star", n) for n in range(1, 7)] + [("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]
IDS = [f"{v}-{n}" for v, n in VARIANTS]


def test_spec_example_is_the_start() -> None:
    assert Game(Rules("star", 2)).position() == SPEC_EXAMPLE
    game = Game.from_position(SPEC_EXAMPLE)
    assert game.position() == SPEC_EXAMPLE and game.to_move == 0 and game.ply == 0
    assert game.pieces(0) == list(range(111, 121)) and game.pieces(1) == list(range(10))


def test_a_ply_count_of_twelve_digits_is_read() -> None:
    from halma_env.notation import parse_position

    assert parse_position(" ".join(_start()[:4] + ["9" * 12]))[5] == 999_999_999_999


def test_ply_is_optional_and_defaults_to_zero() -> None:
    text = SPEC_EXAMPLE.rsplit(" ", 1)[0]
    game = Game.from_position(text)
    assert game.ply == 0 and game.position() == SPEC_EXAMPLE
    assert Game.from_position(text + " 42").ply == 42


@pytest.mark.parametrize(("variant", "seats"), VARIANTS, ids=IDS)
def test_round_trip_start_and_random_games(variant: str, seats: int) -> None:
    rng = random.Random(f"{variant}-{seats}")  # a str seed is reproducible (hash() is salted)
    start = Game(Rules(variant, seats))
    assert Game.from_position(start.position()).position() == start.position()
    for first in range(seats):
        text = Game(Rules(variant, seats, first_seat=first)).position()
        assert text.split(" ")[3] == str(first)
    for _ in range(4):
        game = Game(Rules(variant, seats))
        random_playout(game, rng, rng.randrange(1, 120))
        text = game.position()
        again = Game.from_position(text)
        assert again.position() == text
        assert again.board() == game.board() and again.to_move == game.to_move and again.ply == game.ply
        if not game.is_over:
            assert again.legal_moves() == game.legal_moves()
    for _ in range(6):
        text = scattered_position(variant, seats, rng)
        loaded = Game.from_position(text)
        assert loaded.position().split(" ")[2] == text.split(" ")[2]
        was_to_move = int(text.split(" ")[3])
        if loaded.history or loaded.status[was_to_move] != "active":
            # the seat to move could not move (it passed at once) or had already finished
            assert {e.kind for e in loaded.history} <= {"pass"}
        else:
            assert loaded.position() == text + " 0"


def test_diamond_start_has_kings_on_the_tips() -> None:
    text = Game(Rules("diamond", 3)).position()
    board = text.split(" ")[2]
    assert board.count("A") == board.count("B") == board.count("C") == 1
    game = Game.from_position(text)
    assert game.piece_at(120) == (0, True) and game.piece_at(10) == (1, True) and game.piece_at(22) == (2, True)


def _start(variant: str = "star", seats: int = 2) -> list[str]:
    return Game(Rules(variant, seats)).position().split(" ")


def _with_board(rows: list[str], variant: str = "star", seats: int = 2) -> str:
    fields = _start(variant, seats)
    fields[2] = "/".join(rows)
    return " ".join(fields)


def _rows(variant: str = "star", seats: int = 2) -> list[str]:
    return _start(variant, seats)[2].split("/")


def _edit_row(rows: list[str], r: int, i: int, ch: str) -> list[str]:
    rows = list(rows)
    rows[r] = rows[r][:i] + ch + rows[r][i + 1 :]
    return rows


MALFORMED = {
    "empty": ("", ["a position is empty"]),
    "too few fields": ("star 2 " + _start()[2], ["4 or 5 fields", "got 3"]),
    "too many fields": (" ".join(_start()) + " 7", ["4 or 5 fields", "got 6"]),
    "double space": (" ".join(_start()).replace(" 0 0", "  0 0"), ["single spaces", "empty field"]),
    "variant": ("chess " + " ".join(_start()[1:]), ["variant field", "'chess'"]),
    "seats out of range": ("star 7 " + " ".join(_start()[2:]), ["seats field", "'7'"]),
    "seats for the variant": (
        "diamond 4 " + " ".join(_start()[2:]), ["seats field", "diamond", "2, 3", "use the international 'star'"]
    ),
    "seats not a number": ("star two " + " ".join(_start()[2:]), ["seats field", "'two'"]),
    "row count": (_with_board(_rows()[:-1]), ["board field", "17 rows", "got 16"]),
    "row width": (_with_board(_edit_row(_rows(), 8, 0, "..")), ["board field", "row 8", "9 holes", "got 10"]),
    "unknown char": (_with_board(_edit_row(_rows(), 8, 4, "x")), ["board field", "row 8", "'x'"]),
    "seat digit out of range": (_with_board(_edit_row(_rows(), 8, 4, "3")), ["board field", "seat 3", "2 seats"]),
    "too many pieces": (_with_board(_edit_row(_rows(), 8, 4, "0")), ["board field", "seat 0", "11 pieces", "10"]),
    "king in star": (_with_board(_edit_row(_rows(), 8, 4, "A")), ["board field", "king", "star has no kings"]),
    "king in halma16": (
        _with_board(_edit_row(_rows("halma16", 2), 8, 8, "B"), "halma16", 2),
        ["board field", "king", "halma16 has no kings"],
    ),
    "two kings": (
        _with_board(_edit_row(_rows("diamond", 2), 8, 4, "A"), "diamond", 2),
        ["board field", "seat 0 has two kings"],
    ),
    "a diamond seat's king made an ordinary piece": (
        _with_board([row.replace("A", "0") for row in _rows("diamond", 2)], "diamond", 2),
        ["board field", "seat 0 has 15 ordinary pieces", "at most 14 and a king"],
    ),
    "king letter of a missing seat": (
        _with_board(_edit_row(_rows("diamond", 2), 8, 4, "C"), "diamond", 2),
        ["board field", "seat 2", "2 seats"],
    ),
    "to_move out of range": (" ".join(_start()[:3] + ["2", "0"]), ["to_move field", "0..1", "'2'"]),
    "to_move not a number": (" ".join(_start()[:3] + ["x", "0"]), ["to_move field", "'x'"]),
    "to_move negative": (" ".join(_start()[:3] + ["-1", "0"]), ["to_move field", "'-1'"]),
    "ply not a number": (" ".join(_start()[:4] + ["ten"]), ["ply field", "'ten'"]),
    "ply negative": (" ".join(_start()[:4] + ["-3"]), ["ply field", "'-3'"]),
    "ply not ascii": (" ".join(_start()[:4] + ["\u00b2"]), ["ply field", "'\u00b2'"]),
    "to_move not ascii": (" ".join(_start()[:3] + ["\u00b9", "0"]), ["to_move field", "'\u00b9'"]),
    "seats not ascii": ("star \u00b2 " + " ".join(_start()[2:]), ["seats field", "'\u00b2'"]),
    "seats leading zero": ("star 02 " + " ".join(_start()[2:]), ["seats field", "leading zeros", "'02'"]),
    "to_move leading zero": (" ".join(_start()[:3] + ["00", "0"]), ["to_move field", "leading zeros", "'00'"]),
    "ply leading zero": (" ".join(_start()[:4] + ["007"]), ["ply field", "leading zeros", "'007'"]),
    # more digits than int() converts (sys.get_int_max_str_digits): still the field's own error
    "ply far too long": (" ".join(_start()[:4] + ["9" * 5000]), ["ply field", "5000 digits"]),
    # int64 in the batched engine, and a position text of no real game: at most 12 digits
    "ply of 13 digits": (" ".join(_start()[:4] + ["1" + "0" * 12]), ["ply field", "13 digits", "at most 12"]),
    "to_move far too long": (" ".join(_start()[:3] + ["9" * 5000, "0"]), ["to_move field", "0..1"]),
    "seats far too long": ("star " + "9" * 5000 + " " + " ".join(_start()[2:]), ["seats field", "1, 2, 3"]),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_text_names_the_field(kind: str) -> None:
    text, words = MALFORMED[kind]
    with pytest.raises(ValueError) as info:
        Game.from_position(text)
    message = str(info.value)
    for word in words:
        assert word in message, (kind, word, message)


def test_each_malformation_gives_its_own_message() -> None:
    messages = {}
    for kind, (text, _) in MALFORMED.items():
        with pytest.raises(ValueError) as info:
            parse_position(text)
        messages[kind] = str(info.value)
    assert len(set(messages.values())) == len(messages)


def test_not_a_string_and_options_validation() -> None:
    with pytest.raises(ValueError, match="line of text"):
        Game.from_position(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown rule option"):
        Game.from_position(SPEC_EXAMPLE, nonsense=True)
    with pytest.raises(ValueError, match=r"^unknown rule option\(s\): move_limt \(did you mean 'move_limit'\?\), "
                                         r"nonsense; known: variant, num_players, anti_blocking, "):
        Game.from_position(SPEC_EXAMPLE, nonsense=True, move_limt=3)
    with pytest.raises(ValueError, match="first_seat"):
        Game.from_position(SPEC_EXAMPLE, first_seat=5)
    game = Game.from_position(SPEC_EXAMPLE, anti_blocking=False, move_limit=9)
    assert game.rules == Rules("star", 2, anti_blocking=False, move_limit=9)


def test_position_gives_variant_seats_and_first_seat() -> None:
    """The text says the variant, the seat count and who moves; options cannot contradict it."""
    for bad in ({"variant": "diamond"}, {"num_players": 3}):
        with pytest.raises(ValueError, match="come from the position text"):
            Game.from_position(SPEC_EXAMPLE, **bad)
    with pytest.raises(ValueError, match="first_seat is 1, but the position has seat 0 to move"):
        Game.from_position(SPEC_EXAMPLE, first_seat=1)
    assert Game.from_position(SPEC_EXAMPLE, first_seat=0).to_move == 0
    seat1 = " ".join(_start()[:3] + ["1", "0"])
    game = Game.from_position(seat1)
    assert game.to_move == 1 and game.rules.first_seat == 1, "the seat to move is the game's first seat"
    assert Game.from_position("star 2 " + " ".join(_start()[2:4]) + " 10").ply == 10


def test_unreachable_but_well_formed_positions_are_accepted() -> None:
    """Puzzles: fewer pieces, pieces in odd places, a diamond seat without its king."""
    text = position("diamond", 2, {60: "0", 61: "1", 0: "1"}, to_move=1, ply=17)
    game = Game.from_position(text)
    assert game.position() == text and game.ply == 17 and game.to_move == 1
    lone = position("star", 6, {60: "5"}, to_move=5)
    assert Game.from_position(lone).position() == lone + " 0"
    # a seat to move that cannot move passes at once (seat 0 has no pieces)
    passed = Game.from_position(position("star", 6, {60: "5"}, to_move=0))
    assert passed.to_move == 5 and [(e.kind, e.seat) for e in passed.history] == [("pass", s) for s in range(5)]


@pytest.mark.parametrize("kind", sorted(k for k in MALFORMED if MALFORMED[k][1][0].endswith(" field")))
def test_message_begins_with_the_field_at_fault(kind: str) -> None:
    """SPEC §3: the message names the field: '<field> field: ...', the field's own name first."""
    text, words = MALFORMED[kind]
    with pytest.raises(ValueError) as info:
        parse_position(text)
    assert str(info.value).startswith(words[0] + ": "), (kind, str(info.value))


def test_long_field_text_is_cut_short_in_messages() -> None:
    """A field of up to 40 characters is quoted whole; a longer one is cut and its length given."""
    rest = " ".join(_start()[1:])
    with pytest.raises(ValueError) as info:
        parse_position("v" * 40 + " " + rest)
    assert str(info.value).endswith(f"got {'v' * 40!r}")
    with pytest.raises(ValueError) as info:
        parse_position("v" * 41 + " " + rest)
    assert str(info.value).endswith(f"got {'v' * 30!r}... (41 characters)")


@pytest.mark.parametrize(("variant", "seats"), VARIANTS, ids=IDS)
def test_parse_position_gives_the_bit_sets_of_the_text(variant: str, seats: int) -> None:
    """parse_position -> (variant, seats, pieces per seat, king bit set, to move, ply): the bit sets
    hold exactly the holes the board field shows (no king bits where there are no kings)."""
    game = Game(Rules(variant, seats))
    g = game.geometry
    parsed = parse_position(game.position())
    assert parsed[:2] == (variant, seats) and parsed[4:] == (0, 0)
    assert parsed[2] == [g.mask(game.pieces(s)) for s in range(seats)]
    kings = [h for h, cell in enumerate(game.board()) if cell is not None and cell[1]]
    assert parsed[3] == g.mask(kings)
    assert (parsed[3] != 0) == (variant == "diamond")
    assert parse_position(" ".join(game.position().split(" ")[:3] + [str(seats - 1), "12"]))[4:] == (seats - 1, 12)


def test_a_finish_whose_goal_was_emptied_again_is_not_in_the_text_but_the_record_keeps_it() -> None:
    """docs/engine.md, "Keeping a game between requests": on star a seat stays finished after an opponent's
    piece leaves its filled goal, but the text then shows an unfilled goal, and reads back with the seat
    active (a game-site review found it in a 4-seat game).  The notation is a fixed contract: the record is
    what keeps the game."""
    from halma_env.records import GameRecord

    pieces = {hole: "0" for hole in (0, 1, 2, 3, 4, 5, 7, 8, 17, 100)}
    pieces.update({6: "1", 61: "1", 60: "2"})  # seat 1's piece in seat 0's goal: anti-blocking lets 0 finish
    game = Game.from_position(position("star", 3, pieces, to_move=0))
    game.play("17-9")
    assert game.status == ["finished", "active", "active"]
    game.play("6-14")  # seat 1's piece leaves the goal: seat 0 stays finished
    assert game.status == ["finished", "active", "active"]
    assert Game.from_position(game.position()).status == ["active", "active", "active"]
    assert GameRecord.from_game(game).replay().status == ["finished", "active", "active"]
