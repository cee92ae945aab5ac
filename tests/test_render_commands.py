"""The terminal drawing (``render_text``) cell by cell, and the ``halma show``/``halma perft`` details
that tests/test_cli_engine.py leaves open: colour only on a terminal, the --moves-from bounds,
--divide at depths 0 and 1, the totals and the help texts."""

from __future__ import annotations

import argparse
import re
import sys

import pytest
from engine_helpers import position

from agents.cli import main
from halma_env import Game, Rules
from halma_env.commands import add_perft_arguments, add_show_arguments, run_perft, run_show
from halma_env.render import SEAT_COLOUR_NAMES, SEAT_COLOURS, render_text
from halma_env.rules import VARIANTS

ANSI = re.compile(r"\x1b\[[0-9;]*m")
VARIANT_HELP = f"--variant {{{','.join(VARIANTS)}}} variant for the start position (default: star)"
CELL = re.compile(r"\x1b\[([0-9;]*)m(.*?)\x1b\[0m|(\S+)")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cells(text: str) -> list[tuple[str, str]]:
    """(ANSI code or "", text) of every hole in a drawing, in hole order (the status line dropped)."""
    out = []
    for ln in text.splitlines()[:-1]:
        for m in CELL.finditer(ln):
            out.append((m.group(1), m.group(2).strip()) if m.group(3) is None else ("", m.group(3)))
    return out


def test_colour_names_match_their_ansi_codes() -> None:
    """``halma play`` names a seat by the colour its pieces are drawn in."""
    ansi = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36"}
    assert len(SEAT_COLOURS) == len(SEAT_COLOUR_NAMES) == 6
    assert {name: ansi[name] for name in SEAT_COLOUR_NAMES} == dict(zip(SEAT_COLOUR_NAMES, SEAT_COLOURS))
    assert SEAT_COLOUR_NAMES[:2] == ("red", "blue")


@pytest.mark.parametrize(
    ("numbers", "color", "end"),
    # where a hole's text ends (exclusive) on its line, from its star display column x
    [(False, False, lambda x: 12 + x + 1), (True, False, lambda x: 3 * (x + 12) + 5),
     (True, True, lambda x: 2 * (x + 12) + 3)],
)
def test_star_cells_sit_under_their_display_columns(numbers: bool, color: bool, end) -> None:
    """Every hole is drawn right-aligned at a column fixed by its display position, so the rows form
    the star; lines carry no trailing blanks and the status line comes last, with no newline after."""
    game = Game(Rules("star", 2))
    g = game.geometry
    text = render_text(game, numbers=numbers, color=color)
    assert not text.endswith("\n")
    lines = [ANSI.sub("", ln) for ln in text.splitlines()]
    assert len(lines) == 18 and lines[-1] == "star, 2 seats, ply 0, seat 0 to move"
    for ln in lines[:-1]:
        assert ln == ln.rstrip() and ln.strip()
    board = game.board()
    for h in range(121):
        r, x = g.coords[h]
        cell = board[h]
        if not numbers:
            expected = "." if cell is None else str(cell[0])
        else:
            expected = f"{cell[0]}:{h}" if cell is not None and not color else str(h)
        stop = end(x)
        assert lines[r][stop - len(expected) : stop] == expected, (h, lines[r])
        assert stop - len(expected) == 0 or lines[r][stop - len(expected) - 1] == " "


def test_the_square_board_numbered_without_colours_labels_its_rows_and_columns() -> None:
    """Without colours a numbered hole holding a piece was a ``0:190`` cell: halma16's rows were 95 columns, past
    an 80-column terminal.  Now a header of columns and each row's first hole: hole = row label + column."""
    game = Game(Rules("halma16", 2))
    game.play("190-173")
    lines = render_text(game, numbers=True, color=False, marks=[100]).splitlines()
    assert len(lines) == 18 and max(map(len, lines)) == 68 and lines[-1] == "halma16, 2 seats, ply 1, seat 1 to move"
    assert lines[0].split() == [str(c) for c in range(16)]
    for r in range(16):
        label, *row = lines[1 + r].split()
        assert label == str(16 * r) and len(row) == 16
        for c, text in enumerate(row):
            hole = 16 * r + c
            cell = game.board()[hole]
            assert text == ("*" if hole == 100 else ".") if cell is None else str(cell[0]), hole
            assert lines[1 + r][4 + 4 * c + 3] == text  # under its column's number
    assert lines[1 + 173 // 16].split()[1 + 173 % 16] == "0" and lines[1 + 190 // 16].split()[1 + 190 % 16] == "."


@pytest.mark.parametrize(("numbers", "color", "width"), [(False, False, 2), (True, True, 4)])
def test_square_rows_have_no_indent(numbers: bool, color: bool, width: int) -> None:
    game = Game(Rules("halma16", 2))
    lines = [ANSI.sub("", ln) for ln in render_text(game, numbers=numbers, color=color).splitlines()]
    assert len(lines) == 17 and lines[-1] == "halma16, 2 seats, ply 0, seat 0 to move"
    for r in range(16):
        for c in range(16):
            h = r * 16 + c
            cell = game.board()[h]
            if not numbers:
                expected = "." if cell is None else str(cell[0])
            else:
                expected = f"{cell[0]}:{h}" if cell is not None and not color else str(h)
            stop = c * width + width - 1
            assert lines[r][stop - len(expected) : stop] == expected, (h, lines[r])


def test_colours_kings_marks_and_the_last_move() -> None:
    """Pieces in their seat's colour (kings bold), marked empty holes as a bold ``*``, the last move's
    two holes underlined (``;4``); empty holes plain without --numbers, dim (``2``) with them."""
    game = Game(Rules("star", 2))
    game.play("113-104")
    drawn = cells(render_text(game, marks=[60, 0]))
    assert len(drawn) == 121
    assert drawn[104] == ("31;4", "0") and drawn[113] == ("4", ".")
    assert drawn[111] == ("31", "0") and drawn[0] == ("34", "1") and drawn[9] == ("34", "1")
    assert drawn[60] == ("1", "*") and drawn[61] == ("", ".")
    assert all(drawn[h] == ("", ".") for h in range(10, 111) if h not in (60, 104))

    quiet = cells(render_text(game, last_move=False))
    assert quiet[104] == ("31", "0") and quiet[113] == ("", ".")

    numbered = cells(render_text(game, numbers=True, marks=[60]))
    assert numbered[60] == ("1", "*") and numbered[61] == ("2", "61") and numbered[113] == ("2;4", "113")
    assert numbered[104] == ("31;4", "104") and numbered[0] == ("34", "0")

    plain = render_text(game, color=False, marks=[60])
    assert "\x1b[" not in plain and cells(plain)[60] == ("", "*") and cells(plain)[113] == ("", ".")
    assert cells(render_text(game, numbers=True, color=False, marks=[60]))[60] == ("", "*")

    diamond = cells(render_text(Game(Rules("diamond", 2))))
    assert diamond[120] == ("31;1", "A") and diamond[10] == ("34;1", "B") and diamond[111] == ("31", "0")


def test_diamond_holes_closed_to_the_seat_to_move_are_drawn_as_x() -> None:
    """A diamond piece may never land on a point that is neither its home nor its goal (SPEC §2), and the
    board drew those holes as open ones.  Now the empty ones closed to the seat to move are an ``x`` (dim);
    with --numbers the number stays."""
    game = Game(Rules("diamond", 2))
    layout = game.layout
    for _ in range(2):
        seat = game.to_move
        drawn = cells(render_text(game, last_move=False))
        plain = cells(render_text(game, color=False))
        for hole, cell in enumerate(game.board()):
            closed = not layout.open_holes[seat] >> game.geometry.bit[hole] & 1
            if cell is None:
                assert drawn[hole] == (("2", "x") if closed else ("", ".")), (seat, hole)
                assert plain[hole] == ("", "x" if closed else "."), (seat, hole)
        # four points of 10 holes are closed to each seat, one of them filled by the other seat's pieces
        assert sum(text == "x" for _, text in plain) == 30
        game.play(game.legal_moves()[0])
    assert "x" not in {text for _, text in cells(render_text(game, numbers=True))}
    assert {text for _, text in cells(render_text(Game(Rules("star", 2))))} == {".", "0", "1"}
    marked = cells(render_text(Game(Rules("diamond", 2)), marks=[22]))  # (a picked hole's mark comes first)
    assert marked[22] == ("1", "*") and marked[21] == ("2", "x")


def test_only_the_last_move_is_underlined() -> None:
    game = Game(Rules("star", 2))
    game.play("113-104")
    game.play("3-14")
    drawn = cells(render_text(game))
    assert drawn[3] == ("4", ".") and drawn[14] == ("34;4", "1")
    assert drawn[113] == ("", ".") and drawn[104] == ("31", "0")


def test_the_last_move_is_read_from_the_end_of_the_history(monkeypatch) -> None:
    """The last move is found after a resignation too, without building the whole history (game.moves did:
    a 10,000-ply record replayed in `halma play` drew each position in time growing with the game)."""
    game = Game(Rules("star", 3))
    game.play("113-104")
    game.resign(1)  # the newest event is a resignation; the move before it is still the last move
    monkeypatch.setattr(Game, "history", property(lambda self: pytest.fail("the whole history was built")))
    drawn = cells(render_text(game))
    assert drawn[104][0].endswith(";4") and drawn[113][0] == "4"


def test_the_start_has_no_last_move() -> None:
    assert "4" not in {code for code, _ in cells(render_text(Game(Rules("star", 3))))} - {"34"}


def test_status_line_seat_count() -> None:
    assert render_text(Game(Rules("star", 1)), color=False).splitlines()[-1] == "star, 1 seat, ply 0, seat 0 to move"
    game = Game(Rules("star", 3))
    game.play(game.legal_moves()[0])
    assert render_text(game, color=False).splitlines()[-1] == "star, 3 seats, ply 1, seat 1 to move"


# --- halma show / halma perft ---------------------------------------------------------------------


def test_show_colours_only_on_a_terminal(capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, "show")
    assert code == 0 and "\x1b[" not in out  # captured: not a terminal
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "show")
    assert code == 0 and "\x1b[31m0\x1b[0m" in out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "show", "--no-color")
    assert code == 0 and "\x1b[" not in out


def test_no_color_in_the_environment_turns_the_colours_off(capsys, monkeypatch) -> None:
    """https://no-color.org: a non-empty NO_COLOR means no ANSI colours, on a terminal too (an empty one
    does not count)."""
    import io

    from halma_env.render import colors_wanted

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(capsys, "show")
    assert code == 0 and "\x1b[" not in out and not colors_wanted()
    monkeypatch.setenv("NO_COLOR", "")
    assert colors_wanted()
    monkeypatch.setenv("TERM", "dumb")  # a terminal that takes no escape sequences (Emacs' shell)
    code, out, _ = run(capsys, "show")
    assert code == 0 and "\x1b[" not in out and not colors_wanted()
    monkeypatch.setenv("TERM", "xterm-256color")
    assert colors_wanted()
    closed = io.StringIO()
    closed.close()
    assert not colors_wanted(closed) and not colors_wanted(io.StringIO())


def test_force_color_turns_the_colours_on_off_a_terminal_too(capsys, monkeypatch) -> None:
    """https://force-color.org: a non-empty FORCE_COLOR means colours in a pipe or a CI log too; NO_COLOR
    and --no-color still win (the order of Python 3.13's own colours)."""
    import io

    from halma_env.render import colors_wanted

    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = run(capsys, "show")  # captured: not a terminal
    assert code == 0 and "\x1b[31m0\x1b[0m" in out and colors_wanted(io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert colors_wanted()
    code, out, _ = run(capsys, "show", "--no-color")
    assert code == 0 and "\x1b[" not in out
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(capsys, "show")
    assert code == 0 and "\x1b[" not in out and not colors_wanted()
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "")  # empty: not set
    assert not colors_wanted()


def test_show_moves_from_the_first_and_last_hole(capsys) -> None:
    """--moves-from takes every hole 0..120 (and only those)."""
    text = position("star", 2, {0: "1", 60: "0"}, to_move=1)
    code, out, err = run(capsys, "show", "--no-color", "--moves-from", "0", text)
    assert (code, err) == (0, "") and out.count("*") == 2  # 0 steps to 1 and 2
    code, out, err = run(capsys, "show", "--moves-from", "-1", text)
    assert code == 2 and out == "" and err == "halma show: error: --moves-from -1: not a hole (0..120)\n"


@pytest.mark.parametrize(("text", "hole", "problem"), [
    (position("star", 2, {0: "1", 60: "0"}, to_move=1), 120, "the hole is empty"),
    (position("star", 2, {0: "1", 60: "0"}, to_move=1), 60, "the piece is seat 0's, and seat 1 is to move"),
])
def test_show_moves_from_a_hole_no_move_can_start_on_is_an_error(capsys, text, hole, problem) -> None:
    code, out, err = run(capsys, "show", "--no-color", "--moves-from", str(hole), text)
    assert (code, out) == (2, "") and err == f"halma show: error: --moves-from {hole}: {problem}\n"


def test_show_moves_from_a_piece_that_cannot_move_says_so(capsys) -> None:
    walled = Game(Rules("star", 2))  # at the start the tip's piece (hole 120) is walled in by its own
    assert walled.legal_destinations(120) == [] and walled.to_move == 0
    code, out, err = run(capsys, "show", "--no-color", "--moves-from", "120")
    assert (code, err) == (0, "") and out.count("*") == 0
    assert out.endswith("the piece on hole 120 has no legal move\n")
    code, out, err = run(capsys, "perft", "-1")
    assert code == 2 and out == "" and err == "halma perft: error: depth must be >= 0, got -1\n"


def test_run_functions_return_their_exit_status(capsys) -> None:
    """``run_show``/``run_perft`` return 0 themselves (not None that the CLI happens to turn into 0)."""
    show = argparse.ArgumentParser()
    add_show_arguments(show)
    assert run_show(show.parse_args(["--no-color"])) == 0
    assert run_show(show.parse_args(["--moves-from", "500"])) == 2
    perft = argparse.ArgumentParser()
    add_perft_arguments(perft)
    assert run_perft(perft.parse_args(["1"])) == 0
    assert run_perft(perft.parse_args(["1", "--divide"])) == 0
    assert run_perft(perft.parse_args(["-2"])) == 2
    out = capsys.readouterr().out
    assert "depth 1: 14" in out and "113-104: 1" in out


def test_perft_divide_at_depth_one_and_zero(capsys) -> None:
    """--divide at depth 1 lists every first move with a count of 1; at depth 0 there is nothing to
    divide: the single position."""
    code, out, _ = run(capsys, "perft", "1", "--divide")
    game = Game(Rules("star", 2))
    assert code == 0
    assert dict(re.findall(r"^(\d+-\d+): (\d+)$", out, re.M)) == {str(m): "1" for m in game.legal_moves()}
    assert "depth" not in out and re.search(r"^total 14 in \d+\.\d\d s$", out, re.M)
    code, out, _ = run(capsys, "perft", "0", "--divide")
    assert code == 0 and out.splitlines()[0] == "depth 0: 1" and re.search(r"^total 1 in ", out, re.M)
    code, out, _ = run(capsys, "perft", "0")
    assert code == 0 and len(out.splitlines()) == 2 and re.search(r"^total 1 in ", out, re.M)


@pytest.mark.parametrize(
    ("argv", "phrases"),
    [
        (["show", "--help"], [
            "position SPEC §3 position text (default: the start of --variant/--seats)",
            VARIANT_HELP,
            "--seats SEATS seats for the start position (default: 2)",
            "--numbers write every hole's number", "--no-color plain text, no ANSI colours",
            "--moves-from HOLE mark where the piece on HOLE can go",
        ]),
        (["perft", "--help"], [
            "depth number of plies",
            "--position POSITION SPEC §3 position text (default: the start of --variant/--seats)",
            VARIANT_HELP,
            "--seats SEATS seats for the start position (default: 2)",
            "--divide also print the count below each first move",
            '--json print one JSON object instead of lines: {"position", "depth", "depths"',
        ]),
    ],
)
def test_help_describes_every_option(capsys, argv: list[str], phrases: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for phrase in phrases:
        assert phrase in out, (phrase, out)
