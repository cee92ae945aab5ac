"""``halma play``: play in the terminal, hot seat or against CPU levels.

Every seat is either ``human`` or a CPU player (a level such as ``easy``/``medium``/``hard`` or
any name ``agents.registry.make_player`` accepts).  Commands at a human's turn:

    src-dst        play a move (e.g. 113-104)
    HOLE           show where the piece on HOLE can go (marked *)
    moves          list the legal moves, numbered; then #N plays move N
    undo           take back your last move (and the CPU moves after it), saying what
                   it took back
    resign         the seat to move resigns
    cpu SEAT NAME  hand a seat to a CPU player; human SEAT takes it back
    save FILE      save the game record (JSON; over an earlier record, never another file);
                   load FILE continues a saved game (same seat count; this session's seats play on)
    replay FILE    step through a record: Enter (or n) next, b back, a number goes to that step,
                   start, end, ? lists them; q, quit or end of input: stop; a FILE with
                   spaces in quotes ("my games/g.json"), ~ for your home folder
    new            start the next game (the start seat rotates)
    numbers        toggle hole numbers (moves are written with them)
    board          draw the board again
    help           this list; quit (or exit, q) ends the session

Bad input never changes the game: the session says what was wrong and asks again (a command
with other arguments shows its form, ``cpu is written 'cpu SEAT NAME'``; a misspelt one gets the
nearest command; a move written with a space, a dash lookalike, an arrow such as '->' or "to" gets
the notation).  Numbers
(holes, seats, ``#N``) are ASCII digits: '²' and '１１３' are refused.
Input echoed in an error is cut short when long (its first characters and its length).  Every CPU
seat's player is checked against the game before it can move (at the start, ``cpu SEAT NAME``,
``load FILE``): one that cannot play it (a model of another variant or seat count) is refused at
once, naming the seat, the player and the game.  ``replay FILE`` (and ``--replay FILE``) refuses a
record whose events, stored outcome or final position do not replay, as ``load FILE`` does.  A
replay starts with a line naming the game, the players by seat and the stored result, then shows
each position with its number, ``[N/LAST] MOVE``; at its prompt Enter (``n``, ``next``) goes on,
``b`` (``back``) goes one step back, a number N goes to step N (0 is the start), ``start`` and ``end``
jump, ``help`` or ``?`` lists these, and ``q`` (``quit``, ``exit``, ``stop``), the end of input or
Ctrl-C stops it.  The record's steps are its moves and resignations, so after a resignation step N is
not the board's ply N.  The last position asks too (so ``b`` still works there); Enter there ends the
replay.  A step out of range or an unknown word is an error line and the position stays.

A step that does more than its move says so in a line of its own: with 3+ seats, a seat that takes a
place while the others play on (``seat 0 (red, human) finishes: 1st place; the others play on``, a
resignation ``resigns: 3rd place``; the places the game's end gives are its result line's), and each
seat that cannot move and is skipped (``seat 1 (blue, greedy) cannot move: its turn passes``).  A
replay says them after the step's ``[N/LAST]`` line.

When no human seat is left in the game (every seat a CPU, or the humans resigned or finished),
the CPUs play on a move at a time and the session reads commands between their moves without
waiting for them: ``human SEAT`` takes a seat back, ``save``, ``board`` and ``quit`` work as
ever (a move or ``resign`` typed then is refused: the seat to move is a CPU's), and the end of
input (Ctrl-D, or the end of a piped script) ends the session, as it does at a human's prompt, so
such a game never runs on with nobody able to stop it.  Run it at a terminal to watch a game
between CPUs to its end; under rules with no move, stall or repetition limit CPUs can repeat their
moves forever, which the session says once as they start (``note_endless``).  A stdin that cannot
be polled (a notebook's) is not looked at between CPU moves: the CPUs play on until a human seat is
to move or the game ends.

``--time-limit`` times a human's turn as a whole: the clock starts at the turn's first prompt and
runs on across the commands of that turn (``board``, ``help``, a mistyped move); each prompt
shows the seconds left.  When they run out, a CPU moves for the human.

A saved record's ``players`` are the seats' players when it was saved; a seat that changed hands
during the game is listed in its metadata, ``"seat_changes": [{"ply": 12, "seat": 1, "player":
"hard", "from": "human"}, ...]`` (from that ply on), and a move the CPU made for a human whose time
ran out in ``"time_up_moves": [{"ply": 7, "seat": 0, "player": "medium"}, ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import errno
import math
import os
import queue
import re
import select
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from agents.arena import ARENA_LIMIT, build_rules, default_factory, derive_seed
from agents.files import is_terminal_device, quoted_path, shown_path
from agents.interrupts import Terminated, terminal_hung_up
from agents.registry import UnknownPlayer
from halma_env import Game, IllegalMoveError, Move, Rules
from halma_env.game import ACTIVE, RESIGNED, probe_player
from halma_env.notation import is_ascii_number, quoted
from halma_env.records import GameRecord, RecordError, apply_event, load_record
from halma_env.render import SEAT_COLOUR_NAMES, colors_wanted, diamond_legend, render_text
from halma_env.rules import OPTION_NAMES, VARIANTS, game_name
from halma_env.suggest import did_you_mean, shown_value

if TYPE_CHECKING:
    from agents.player import Player

HUMAN = "human"
MOVES_PER_LINE = 6  # the 'moves' list, in columns that fit an 80-column terminal
# Each command word and the arguments it takes: a word with other arguments is an error showing this form.
COMMAND_ARGUMENTS = {
    "quit": "", "exit": "", "q": "", "help": "", "board": "", "numbers": "", "moves": "", "undo": "",
    "resign": "", "new": "", "cpu": "SEAT NAME", "human": "SEAT", "save": "FILE", "load": "FILE", "replay": "FILE",
}
HELP = __doc__.split("Commands at a human's turn:", 1)[1].split("Bad input", 1)[0]
STAND_IN = "medium"  # the CPU that moves for a human whose time ran out
# seat k's player gets derive_seed(seed, k), the stand-in derive_seed(seed, STAND_IN_STREAM, k): streams that
# neither overlap each other nor those of a neighbouring --seed (seed + k made --seed 0's seat 1 --seed 1's seat 0)
STAND_IN_STREAM = 100
END_REASON_WORDS = {  # Game.end_reason in words
    "finished": "the race is decided",
    "resign": "a resignation decided it",
    "first_finish": "the first seat has finished (places by progress)",
    "move_limit": "the move limit was reached",
    "stall_limit": "no seat made progress for the stall limit (places by progress)",
    "repetition": "a position repeated",
    "no_moves": "no seat can move",
}
REPLAY_PROMPT = "Enter: next, b: back, N: step N, ?: help, q: stop > "
REPLAY_END_PROMPT = "the end; Enter or q: stop, b: back, N: step N, ?: help > "  # at the last position
REPLAY_NEXT = ("", "n", "next")
REPLAY_BACK = ("b", "back")
REPLAY_WORDS = (*REPLAY_NEXT[1:], *REPLAY_BACK, "start", "end", "help", "?", "q", "quit", "exit", "stop")
REPLAY_HELP = (
    "replay keys:",
    "  Enter, n, next     the next step: a move or a resignation (at the last position: stop)",
    "  b, back            one step back",
    "  N                  go to step N, the number in [N/LAST] ({range})",
    "  start, end         the first or the last position",
    "  help, ?            this list",
    "  q, quit, exit, stop  stop the replay (so do the end of input and Ctrl-C)",
)
# two numbers with a space, a dash lookalike (pasted from a web page), ':', '_', ',', '>', an arrow ('->', '-->',
# '=>', '→', '⇒', '⟶') or 'to' between them
MOVE_LOOKALIKE = re.compile(r"[0-9]+\s*(?:-+>|=+>|[\s:_,>\u2010-\u2015\u2212\u2192\u21d2\u27f6]|-\s|\s-|to)\s*[0-9]+",
                            re.IGNORECASE)
MOVE_NOTATION = "a move is written 'src-dst' with two hole numbers and a plain '-', e.g. 113-104"
REPLAY_STOP = ("q", "quit", "exit", "stop")  # the main prompt's quit words stop a replay, not step it
MAX_DIGITS = 9  # a seat, hole or move number of more digits is out of any range (and int() refuses > 4300)
# what --rule sets: variant and num_players come from --variant/--seats (parse_rule_options refuses them)
RULE_OPTIONS = tuple(name for name in OPTION_NAMES if name not in ("variant", "num_players"))


class TimeUp(Exception):
    """The human's time for this move ran out."""


class TerminalUnreadable(Exception):
    """The terminal, still there, refused a read (EIO): this process is a job in the background that cannot read
    it (SIGTTIN ignored, or its process group orphaned: ``(halma play &)``)."""


class LineTooLong(ValueError):
    """An input line past ``MAX_LINE`` bytes: refused whole, not cut to a head that might be a command."""

    def __init__(self, size: int) -> None:
        super().__init__(f"a line of {size} bytes is too long (commands are at most {MAX_LINE} bytes); "
                         "nothing was done")


class PlaySession:
    """The state of a terminal session: the game, who plays each seat, and the commands."""

    def __init__(
        self,
        rules: Rules,
        seats: list[str],
        time_limit: float | None = None,
        seed: int = 0,
        color: bool = True,
        numbers: bool = False,
        cpu_budget: float | None = None,
        out: Callable[[str], None] = print,
        make_player: Callable = default_factory,
    ) -> None:
        if cpu_budget is not None and not (math.isfinite(cpu_budget) and cpu_budget > 0):
            raise ValueError(f"the CPU's time per move (--cpu-time) must be a number of seconds > 0, got {cpu_budget}")
        if len(seats) != rules.num_players:
            raise ValueError(f"{rules.num_players} seats need {rules.num_players} players, got {len(seats)}: {seats}")
        self.rules = rules
        self.time_limit = time_limit
        self.seed = seed
        self.color = color
        self.numbers = numbers
        self.cpu_budget = cpu_budget
        self.out = out
        self._make_player = make_player
        self.game = Game(rules)
        self.seat_changes: list[dict] = []  # this game's seats that changed hands (the record's metadata)
        self.time_up_moves: list[dict] = []  # this game's moves a CPU made for a human out of time
        self.seats: list[str] = []
        self.cpu: dict[int, Player] = {}
        for seat, name in enumerate(seats):
            self.set_seat(seat, name)
        self.listed: list[Move] = []
        self.listed_position = ""
        self.saved: tuple[Game, tuple] | None = None  # the game and its history when last saved (or loaded)
        self.marks: list[int] = []
        self.warned_endless = False  # the note that CPUs alone may never end a game without limits, said once
        # how a replay asks for its next step: run() sets the session's own reader, so one buffer serves both
        self.read: Callable[[str, float | None], str] = terminal_read
        # --time-limit: the clock, and the human turn being timed (its game and event count) since when
        self.clock: Callable[[], float] = time.monotonic
        self._turn: tuple[Game, int] | None = None
        self._turn_start = 0.0

    # --- seats -------------------------------------------------------------------------

    def set_seat(self, seat: int, name: str) -> None:
        """Hand ``seat`` to a CPU player by name, or back to a human (``"human"``).  A player that
        cannot play this game is refused (ValueError) and the seat stays as it was."""
        if not 0 <= seat < self.rules.num_players:
            raise ValueError(f"seat must be 0..{self.rules.num_players - 1}, got {seat}")
        # folded into 0..2**63-1: players take no negative seed; a PlaySession takes any integer (--seed is >= 0)
        try:
            player = None if name == HUMAN else self._make_player(name, seed=derive_seed(self.seed, seat))
        except UnknownPlayer as e:  # the registry's list of valid players is the CPUs': here a seat may be a human's
            raise ValueError(e.names_also([HUMAN])) from None
        if player is not None:
            self.check_player(seat, name, player, self.rules)
        if seat < len(self.seats):
            if self.seats[seat] != name:
                self.seat_changes.append({"ply": self.game.ply, "seat": seat, "player": name,
                                          "from": self.seats[seat]})
            self.seats[seat] = name
        else:
            self.seats.append(name)
        if player is None:
            self.cpu.pop(seat, None)
        else:
            self.cpu[seat] = player

    @staticmethod
    def check_player(seat: int, name: str, player: Player, rules: Rules) -> None:
        """Raise ValueError (naming the seat, the player and the game) unless ``player`` can choose
        a move in ``rules``' starting position (as ``halma eval`` checks its players).  The move is
        asked of a copy where the player can be copied, so its own random generator is untouched
        and a seeded game plays as it would without the check."""
        try:
            trial = copy.deepcopy(player)
        except (TypeError, copy.Error):  # a player holding something that cannot be copied
            trial = player
        try:
            probe_player(trial, name, rules)
        except ValueError as e:  # "player 'NAME' cannot play ...": e.g. a model for 2 seats in a 3-seat game
            raise ValueError(f"seat {seat}'s {e}") from None

    def player_label(self, seat: int) -> str:
        """The seat's player as named, with what a ladder level resolves to in this game."""
        name = self.seats[seat]
        describe = getattr(self.cpu.get(seat), "describe", None)
        if describe is None:
            return name
        try:
            return f"{name} = {describe(self.rules)}"
        except ValueError:  # the level is missing from this game's ladder entry (the check says so)
            return name

    def is_human(self, seat: int) -> bool:
        return seat not in self.cpu

    def cpu_to_move(self) -> bool:
        """The game goes on and a CPU seat is to move."""
        return not self.game.is_over and not self.is_human(self.game.to_move)

    def humans_in_play(self) -> bool:
        """Some human seat is still in the game (has not resigned or finished), so it will be to move again."""
        return any(self.is_human(seat) and status == ACTIVE for seat, status in enumerate(self.game.status))

    # --- drawing -----------------------------------------------------------------------

    def draw(self) -> None:
        self.out(render_text(self.game, numbers=self.numbers, color=self.color, marks=self.marks))
        self.marks = []
        if not self.game.is_over:
            seat = self.game.to_move
            self.out(f"seat {seat} ({SEAT_COLOUR_NAMES[seat]}, {self.seats[seat]}) to move")
        else:
            self.out(self.outcome())

    def outcome(self) -> str:
        """The end of the game in words, under the engine's status line (which names it by identifier)."""
        return f"result: {result_words(self.game, self.seat_name)}; type 'new' for another"

    def seat_name(self, seat: int) -> str:
        return f"seat {seat} ({SEAT_COLOUR_NAMES[seat]}, {self.seats[seat]})"

    # --- playing -----------------------------------------------------------------------

    def play_cpu_turns(self) -> None:
        """Let the CPU seats move until a human is to move or the game ends, then draw the board once.
        With no human seat left in the game nobody would get the prompt back, so then it plays no move:
        ``run`` plays such a game a move at a time (``play_cpu_move``), reading commands between them."""
        while self.cpu_to_move() and self.humans_in_play():
            if not self.play_cpu_move():
                break
        self.draw()

    def note_endless(self) -> None:
        """Say once, as the CPUs play on alone, when the rules set no move, stall or repetition limit: two
        CPUs moving a piece back and forth would then play forever (two ``easy`` seats did, past ply 36,000)."""
        rules = self.rules
        if self.warned_endless or (rules.move_limit, rules.stall_limit, rules.repetition_limit) != (None,) * 3:
            return
        self.warned_endless = True
        self.out("note: these rules set no move, stall or repetition limit, so CPUs that repeat their moves never "
                 "end the game (--rule repetition_limit=3 or --rule move_limit=N ends one); 'quit' stops it")

    def play_cpu_move(self) -> bool:
        """The CPU seat to move plays one move; False when its player cannot play this game, fails (an error of
        its own: a plugin bot's bug) or answers with no legal move: the seat goes back to a human, the game as it
        was (a traceback ended the session there, losing the game, where ``halma eval`` forfeits the seat)."""
        seat = self.game.to_move
        name = self.seats[seat]
        try:
            move = self.cpu[seat].select_move(self.game, self.cpu_budget)
        except ValueError as e:  # e.g. a checkpoint of another variant
            problem = f"cannot play this game ({e})"
        except Exception as e:  # (not Ctrl-C or a stop signal: BaseExceptions)
            problem = f"failed: {type(e).__name__}: {e}"
        else:
            before = self.game.places
            try:
                self.game.play(move)  # (a move that is refused changes nothing)
            except ValueError as e:  # IllegalMoveError, MoveTypeError
                problem = f"chose {shown_value(move)}, which is not a legal move: {e}"
            else:
                self.out(f"seat {seat} ({name}) plays {self.last_move()}")  # (a bot may answer (src, dst))
                self.report(before)
                return True
        self.set_seat(seat, HUMAN)
        self.out(f"error: seat {seat}'s player {name} {problem}; a human plays seat {seat} again")
        return False

    def report(self, before: list[int | None]) -> None:
        """After a move or a resignation (``before``: the places until then) of a game that goes on: a line for
        each seat that took a place with it and one for each seat whose turn passed (``step_news``)."""
        for line in step_news(self.game, before, self.seat_name):
            self.out(line)

    def last_move(self) -> Move | None:
        """The game's newest move, as the engine recorded it (``src-dst``, whatever form a player gave it in)."""
        return next((e.move for e in self.game.recent_events() if e.move is not None), None)

    def move_for_human(self) -> None:
        """The human ran out of time: a CPU (``medium``) moves for them this once."""
        seat = self.game.to_move
        stand_in = self._make_player(STAND_IN, seed=derive_seed(self.seed, STAND_IN_STREAM, seat))
        move = stand_in.select_move(self.game, self.cpu_budget)
        self.time_up_moves.append({"ply": self.game.ply, "seat": seat, "player": STAND_IN})
        before = self.game.places
        self.game.play(move)
        self.out(f"time is up: the CPU plays {self.last_move()} for seat {seat}")
        self.report(before)

    def handle(self, line: str) -> bool:
        """Carry out one command; False when the session should end."""
        line = line.removeprefix("\ufeff")  # a UTF-8 byte order mark, as some editors start a script with
        words = line.strip().split()
        if not words:
            return True
        cmd, args = words[0].lower(), words[1:]
        try:
            if COMMAND_ARGUMENTS.get(cmd) == "FILE" and any(q in line for q in "'\""):
                # a file name with spaces, quoted as in a shell (without quotes a backslash stays a backslash)
                try:
                    args = shlex.split(line)[1:]
                except ValueError:
                    raise ValueError(f"a quote is not closed in {quoted(line.strip())}") from None
            return self._dispatch(cmd, args, line.strip())
        except ValueError as e:  # IllegalMoveError and RecordError are ValueErrors
            self.out(f"error: {e}")
            return True
        except OSError as e:  # a file that cannot be read or written: its reason and name (cut short), no errno
            self.out(f"error: {e.strerror or e}" + (f": {quoted_path(e.filename)}" if e.filename else ""))
            return True

    def _dispatch(self, cmd: str, args: list[str], line: str) -> bool:
        game = self.game
        form = COMMAND_ARGUMENTS.get(cmd)
        if form is not None and len(args) != len(form.split()):
            spaces = " (quote a name with spaces)" if form == "FILE" and args else ""
            raise ValueError(f"{cmd} is written {f'{cmd} {form}'.strip()!r}{spaces}, got {quoted(line)}")
        if form == "FILE":  # no shell reads this line: ~ is the home folder here as it is on a command line
            args = [os.path.expanduser(args[0])]
        if cmd in ("quit", "exit", "q"):
            return False
        if cmd == "help":
            self.out(HELP)
        elif cmd == "board":
            self.draw()
        elif cmd == "numbers":
            self.numbers = not self.numbers
            self.draw()
            if self.game.layout.has_kings and not self.game.is_over:  # (the x the greeting explained is gone, or back)
                self.out(diamond_legend(self.game, numbers=self.numbers))
        elif cmd == "moves":
            self._refuse_when_over()  # ("no legal moves" pointed nowhere)
            self.listed = game.legal_moves()
            self.listed_position = game.position()  # the numbers hold for this position only
            cells = [f"#{i} {m}" for i, m in enumerate(self.listed, 1)]
            width = max(map(len, cells), default=0) + 2
            cells = [c.ljust(width) for c in cells]
            rows = ["".join(cells[k:k + MOVES_PER_LINE]).rstrip() for k in range(0, len(cells), MOVES_PER_LINE)]
            self.out("\n".join(rows) or "no legal moves")
        elif cmd.startswith("#"):
            if args:
                raise ValueError(f"a pick is written '#N' alone, got {quoted(line)}")
            self._refuse_when_over()
            if not self.listed or self.listed_position != game.position():
                raise ValueError(f"there is no numbered list of this position to pick {quoted(cmd)} from: "
                                 "type 'moves' first")
            index = int(cmd[1:]) if is_ascii_number(cmd[1:]) and len(cmd) <= MAX_DIGITS else 0
            if not 1 <= index <= len(self.listed):
                raise ValueError(f"pick a move #1..#{len(self.listed)} from the last 'moves' list, got {quoted(cmd)}")
            self._human_move(self.listed[index - 1])
        elif "-" in cmd and not args:
            if MOVE_LOOKALIKE.fullmatch(line):  # an arrow: 113->104
                raise ValueError(f"{MOVE_NOTATION}; got {quoted(line)}")
            for part in cmd.split("-"):
                if is_ascii_number(part):
                    _number(part, "hole")  # a hole number of many digits is refused here, cut short
            self._human_move(Move.parse(cmd))
        elif cmd.isdigit() and not args:  # isdigit: '²' and '１１３' too, refused by _number
            hole = _number(cmd, "hole")
            owner = game.piece_at(hole)  # the engine names a hole off the board
            self._refuse_when_over()  # ("the piece on 117 cannot move")
            if owner is None or owner[0] != game.to_move:
                raise ValueError(f"hole {hole} holds no piece of seat {game.to_move}")
            destinations = game.legal_destinations(hole)
            if not destinations:
                self.out(f"the piece on {hole} cannot move")
            else:
                self.marks = destinations
                self.draw()
                self.out(f"{hole} can go to: {', '.join(map(str, destinations))}")
        elif cmd == "undo":
            self._undo()
        elif cmd == "resign":
            self._refuse_when_over()
            seat = self._human_to_move("resign")
            before = game.places
            game.resign(seat)
            if game.is_over:  # (the result line below gives the places)
                self.out(f"seat {seat} ({SEAT_COLOUR_NAMES[seat]}) resigns")
            self.report(before)  # with 3+ seats playing on: "resigns: 3rd place; the others play on"
            self.play_cpu_turns()
        elif cmd == "cpu":
            seat = self._seat(args[0])
            self.set_seat(seat, args[1])
            self.out(f"seat {seat} is now played by {self.player_label(seat)}")
            self.play_cpu_turns()
        elif cmd == "human":
            seat = self._seat(args[0])
            if self.is_human(seat):  # (nothing changes: no board, no CPU move)
                self.out(f"seat {seat} is already played by a human")
                return True
            self.set_seat(seat, HUMAN)
            self.out(f"seat {seat} is played by a human again")
            self.play_cpu_turns()  # when the CPUs were playing on, they do up to this seat's turn
        elif cmd == "save":
            if _another_kind_of_file(args[0]):  # (a record saved before is written over: saving again is the point)
                raise ValueError(f"{args[0]!r} holds a file that is not a game record, which save does not write "
                                 "over: give another name, or remove it first")
            GameRecord.from_game(game, players=list(self.seats), metadata=self.record_metadata()).save(args[0])
            self.saved = (game, tuple(game.history))
            self.out(f"saved to {shown_path(args[0])}")
        elif cmd == "load":
            self._load(args[0])
        elif cmd == "replay":
            record = load_record(args[0])
            with _naming(args[0]):
                self.replay(record)
            # the last board on screen is the record's: show this session's game again before its prompt
            self.out(f"back to this game, ply {game.ply}")
            self.draw()
        elif cmd == "new":
            self.note_unsaved()
            # the same variant and seat count: the CPU seats, checked for them, play on
            self.rules = self.rules.replace(first_seat=(self.rules.first_seat + 1) % self.rules.num_players)
            self.game = Game(self.rules)
            self.seat_changes, self.time_up_moves = [], []
            self.out(f"new game; seat {self.rules.first_seat} starts")
            self.play_cpu_turns()
        elif MOVE_LOOKALIKE.fullmatch(line):
            raise ValueError(f"{MOVE_NOTATION}; got {quoted(line)}")
        else:
            raise ValueError(f"unknown command {quoted(line)}{did_you_mean(cmd, COMMAND_ARGUMENTS)}; type 'help'")
        return True

    def note_unsaved(self) -> None:
        """Before the game is left (quit, the end of input, ``new``, ``load``): say so if it holds moves that
        were not saved, since nothing brings it back."""
        game = self.game
        if game.history and self.saved != (game, tuple(game.history)):
            self.out(f"(the game left at ply {game.ply} was not saved: 'save FILE' keeps a game, 'load FILE' "
                     "continues it)")

    def record_metadata(self) -> dict:
        """The saved record's metadata: the seats that changed hands and the time-up moves, if any."""
        metadata: dict = {}
        if self.seat_changes:
            metadata["seat_changes"] = [dict(c) for c in self.seat_changes]
        if self.time_up_moves:
            metadata["time_up_moves"] = [dict(c) for c in self.time_up_moves]
        return metadata

    def _load(self, path: str) -> None:
        """Continue the game saved in ``path`` with this session's seats.  Nothing changes unless the
        record has this session's seat count and every CPU seat can play its game."""
        record = load_record(path)
        with _naming(path):
            loaded = record.replay()
        if loaded.num_players != len(self.seats):
            raise ValueError(f"{path} is a {loaded.num_players}-seat game; this session has {len(self.seats)} "
                             f"seats (continue it with: halma play --seats {loaded.num_players} --players ...)")
        for seat in sorted(self.cpu):
            try:
                self.check_player(seat, self.seats[seat], self.cpu[seat], loaded.rules)
            except ValueError as e:
                raise ValueError(f"{e}; {path} is not loaded: hand seat {seat} to a human (human {seat}) or "
                                 f"another CPU player (cpu {seat} NAME) first") from None
        # the record's own history of seat changes, then the seats this session plays differently
        changes = _ply_entries(record.metadata, "seat_changes", path, loaded)
        time_up_moves = _ply_entries(record.metadata, "time_up_moves", path, loaded)
        if record.players is not None:
            changes += [{"ply": loaded.ply, "seat": seat, "player": name, "from": before}
                        for seat, (before, name) in enumerate(zip(record.players, self.seats)) if before != name]
        self.note_unsaved()
        self.game, self.rules, self.seat_changes, self.time_up_moves = loaded, loaded.rules, changes, time_up_moves
        self.saved = (loaded, tuple(loaded.history))
        self.out(f"loaded {shown_path(path)}: ply {loaded.ply}")
        self.play_cpu_turns()

    def _refuse_when_over(self) -> None:
        """A command about the game's next move (a move, ``moves``, a pick, a hole's hint, ``resign``) when
        there is none: the game's end and what to type instead."""
        if self.game.is_over:
            raise IllegalMoveError(f"the game is over ({self.game.end_reason}); type 'new' for another")

    def _seat(self, text: str) -> int:
        """A seat number typed in a command (``cpu SEAT NAME``, ``human SEAT``); a negative one is refused with
        the range, as one too large is (``set_seat``)."""
        if text.startswith("-") and is_ascii_number(text[1:]):
            shown = text if len(text) <= MAX_DIGITS + 1 else quoted(text)
            raise ValueError(f"seat must be 0..{self.rules.num_players - 1}, got {shown}")
        return _number(text, "seat")

    def _human_move(self, move: Move) -> None:
        self._refuse_when_over()
        seat = self._human_to_move("move")
        before = self.game.places
        self.game.play(move)
        self.out(f"seat {seat} ({self.seats[seat]}) plays {move}")
        self.report(before)
        self.play_cpu_turns()

    def _human_to_move(self, what: str) -> int:
        """The seat to move, when a human plays it: while the CPUs play on (commands are read between their
        moves) a move or a resignation typed then is refused, not made for the CPU seat."""
        seat = self.game.to_move
        if not self.is_human(seat):
            refused = "a move typed for it is not played" if what == "move" else "it is not resigned from here"
            raise ValueError(f"seat {seat} is to move and {self.player_label(seat)} plays it, so {refused}; "
                             f"type 'human {seat}' to take the seat back")
        return seat

    def _undo(self) -> None:
        """Take back the last move (or resignation) of a human seat and every CPU move after it."""
        game = self.game
        # One Game.undo takes back one move or resignation with the automatic passes after it.
        played = [e for e in game.history if e.kind != "pass"]
        humans = [i for i, e in enumerate(played) if self.is_human(e.seat)]
        if not humans:
            raise ValueError("there is nothing to undo: no human seat has moved yet")
        taken = [f"{e.move} (seat {e.seat})" if e.kind == "move" else f"the resignation of seat {e.seat}"
                 for e in played[humans[-1]:]]
        for _ in range(len(played) - humans[-1]):
            game.undo()
        # a seat change stands from now on; a time-up move taken back is gone
        self.seat_changes = [{**c, "ply": min(c["ply"], game.ply)} for c in self.seat_changes]
        self.time_up_moves = [c for c in self.time_up_moves if c["ply"] < game.ply]
        self.out(f"took back {', '.join(taken)}")
        self.draw()

    def replay(self, record: GameRecord, step: Callable[[], str] | None = None) -> None:
        """Show a record position by position; ``step`` returns the user's answer each time.  First a line
        names the game, the players by seat and the stored result (``replay_header``).  Enter (or ``n``,
        ``next``) shows the next position, ``b`` (``back``) the one before, a number N step N, ``start`` and
        ``end`` the first and last; ``help`` or ``?`` lists these.  The last position is asked at too, and
        Enter there ends the replay.  ``q`` (or ``quit``, ``exit``, ``stop``), the end of input or Ctrl-C (as
        at the main prompt) stops it; a step out of range or an unknown word is an error line and the position
        stays.  A record whose events, stored outcome or final position do not replay is refused first
        (RecordError, as ``load`` does)."""
        final = record.replay()  # the full check: names the illegal event or what differs from the stored outcome
        last = len(record.events)
        game, at = record.start_game(), 0
        step = step or (lambda: self.read(REPLAY_END_PROMPT if at == last else REPLAY_PROMPT, None))
        self.out(replay_header(record, final))
        seat_name = record_seat_name(record)
        while True:
            self.out(render_text(game, numbers=self.numbers, color=self.color))
            self.out(f"[{at}/{last}] {record.events[at - 1] if at else 'start'}")
            if at:  # the step's news: a seat that took a place with it, a seat whose turn passed
                game.undo()  # taken back and played again, for the places before it
                before = game.places
                apply_event(game, at - 1, record.events[at - 1])
                for line in step_news(game, before, seat_name):
                    self.out(line)
            while True:  # until the answer moves the replay (or stops it)
                try:
                    answer = self._replay_answer(step)
                except Terminated:  # SIGTERM: the command stops with its status (143), as every halma command does
                    raise
                except (EOFError, KeyboardInterrupt):  # as at the main prompt
                    self.out("")  # end the prompt's line
                    return
                word = answer.strip().lower()
                if word in REPLAY_STOP or (word in REPLAY_NEXT and at == last):
                    return
                try:
                    target = _replay_target(word, at, last)
                except ValueError as e:
                    self.out(f"error: {e}")
                    continue
                if target is None:  # help
                    for line in REPLAY_HELP:
                        self.out(line.format(range=f"0 is the start, {last} the last position"))
                    continue
                break
            game = _replay_to(record, game, at, target)
            at = target

    def _replay_answer(self, step: Callable[[], str]) -> str:
        """The user's answer at a replay position; a line refused as too long is asked again (the replay
        stays where it is)."""
        while True:
            try:
                return step()
            except LineTooLong as e:
                self.out(f"error: {e}")

    # --- the loop ----------------------------------------------------------------------

    def time_left(self) -> float | None:
        """The seconds left of the human turn now being played (None: no time limit).  The clock starts
        at the turn's first prompt and runs on across its commands until the game changes (a move,
        a resignation, undo, load, new)."""
        if self.time_limit is None:
            return None
        now = self.clock()
        turn = (self.game, len(self.game.history))
        if self._turn is None or self._turn[0] is not turn[0] or self._turn[1] != turn[1]:
            self._turn, self._turn_start = turn, now
        return max(0.0, self.time_limit - (now - self._turn_start))

    def run(self, read: Callable[[str, float | None], str]) -> None:
        """Read commands until quit or the end of input.  ``read(prompt, timeout)`` returns a line, or
        raises TimeUp when none comes within ``timeout`` seconds, EOFError at the end of input, or
        LineTooLong for a line past ``MAX_LINE`` bytes (refused; the session goes on).
        While the CPUs play on with no human seat left, it is asked ``read("", 0)`` before each CPU
        move: a silent look for a command typed meanwhile (TimeUp: none, the CPU moves)."""
        self.read = read
        try:
            self._session()
        # Ctrl-C or a kill while a CPU thought (at the prompt Ctrl-C is a quit, below), or a background job's read
        except (KeyboardInterrupt, Terminated, TerminalUnreadable):
            self.out("")
            self.note_unsaved()
            raise

    def _session(self) -> None:
        read = self.read
        self.out("type 'help' for commands, 'numbers' to show the hole numbers moves are written with")
        if self.game.layout.has_kings:  # (what the Diamond board's letters and x mean: nothing else says it)
            self.out(diamond_legend(self.game, numbers=self.numbers))
        for seat in sorted(self.cpu):
            self.out(f"seat {seat} ({SEAT_COLOUR_NAMES[seat]}): {self.player_label(seat)}")
        self.play_cpu_turns()
        while True:
            cpus_play_on = self.cpu_to_move()  # play_cpu_turns left them to this loop: no human seat in play
            if cpus_play_on:
                self.note_endless()
                prompt, timeout = "", 0.0
            elif self.game.is_over:
                prompt, timeout = "> ", None
            else:
                prompt, timeout = "> ", self.time_left()
            try:
                line = read(prompt, timeout)
            except TimeUp:
                if cpus_play_on:
                    if not self.play_cpu_move() or not self.cpu_to_move():
                        self.draw()  # the game is over, or the seat went back to a human
                else:
                    self.move_for_human()
                    self.play_cpu_turns()
                continue
            except Terminated:  # SIGTERM (kill): not a player's quit; the command stops with its status, 143
                raise
            except (EOFError, KeyboardInterrupt):  # Ctrl-C or the end of input at the prompt: the player quits
                self.out("")
                self.note_unsaved()
                return
            except LineTooLong as e:  # (its newline was read: the prompt's line is ended, as after a command)
                self.out(f"error: {e}")
                continue
            if not self.handle(line):
                self.note_unsaved()
                return


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """A record that does not replay as stored (an illegal event, another outcome) is named by its file, as
    ``load_record`` names one it cannot read (``game record 'FILE': ...``)."""
    try:
        yield
    except RecordError as e:
        raise e.in_file(path) from None


PLY_ENTRY_KEYS = {"seat_changes": ("ply", "seat", "player", "from"), "time_up_moves": ("ply", "seat", "player")}


def _ply_entries(metadata: dict, key: str, path: str, game: Game) -> list[dict]:
    """The saved record ``path``'s ``seat_changes`` or ``time_up_moves`` (``key``; none: empty), as
    ``record_metadata`` writes them for ``game``, the record's.  A malformed entry is refused by name
    (RecordError), as the rest of a bad saved file is: dropped, it would be lost from the next save."""
    if key not in metadata:
        return []
    value = metadata[key]
    if not isinstance(value, list):
        raise RecordError(f"{path}: metadata {key} must be a list of entries, got {shown_value(value)}")
    keys = PLY_ENTRY_KEYS[key]
    # a seat change may be at the last ply (it stands from then on); a time-up move is one of the game's moves
    last = game.ply if key == "seat_changes" else game.ply - 1
    for i, entry in enumerate(value):
        if not (isinstance(entry, dict) and sorted(entry) == sorted(keys)
                and type(entry["ply"]) is int and 0 <= entry["ply"] <= last
                and type(entry["seat"]) is int and 0 <= entry["seat"] < game.num_players
                and all(isinstance(entry[k], str) for k in keys[2:])):
            fields = ", ".join(f"{k}: a name" for k in keys[2:])
            raise RecordError(f"{path}: metadata {key}[{i}] must be {{ply: 0..{last}, seat: "
                              f"0..{game.num_players - 1}, {fields}}}, got {shown_value(entry)}")
    return [dict(entry) for entry in value]


# a bot spec's "name=value" after its first one (not a file: no path separator, ':' or model suffix)
BOT_PARAMETER = re.compile(r"[A-Za-z_]\w*\s*=(?![^:/\\]*\.(?:pt|onnx)$)[^:/\\]*", re.IGNORECASE)


def split_players(text: str) -> list[str]:
    """``--players`` split at its commas, one player per seat, except that a bot spec's own parameters stay
    with it: "human,search:depth=6,time=none" is ["human", "search:depth=6,time=none"] (split at every comma,
    it named a player "time=none").  A piece is such a parameter when it reads ``name=value`` and the piece
    before it is a spec with parameters (``bot:...``); a player's name has no '=' of its own."""
    players: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if players and ":" in players[-1] and "=" in players[-1] and BOT_PARAMETER.fullmatch(piece):
            players[-1] += "," + piece
        else:
            players.append(piece)
    return players


def file_split_at_a_comma(players: list[str]) -> str | None:
    """The file that ``split_players`` cut in two or more at its commas (``runs/a,b.pt`` became ``runs/a`` and
    ``b.pt``), if the pieces rejoined name an existing file and the first piece alone names none."""
    for first in range(len(players)):
        if os.path.exists(players[first]):
            continue
        for last in range(first + 1, len(players)):
            joined = ",".join(players[first:last + 1])
            if os.path.isfile(joined):
                return joined
    return None


def record_seat_name(record: GameRecord) -> Callable[[int], str]:
    """How a replay names a seat: ``seat 1 (blue, greedy)`` with the record's players, ``seat 1 (blue)`` without."""
    # the record's names as they may reach a terminal (shown_path): a name holding an escape sequence or a line
    # break (a hand-edited record) cleared the screen, set the window title or printed a line of its own
    players = None if record.players is None else [shown_path(name) for name in record.players]

    def seat_name(seat: int) -> str:
        return f"seat {seat} ({SEAT_COLOUR_NAMES[seat]}{f', {players[seat]}' if players else ''})"

    return seat_name


def step_news(game: Game, before: list[int | None], seat_name: Callable[[int], str]) -> list[str]:
    """What a move or a resignation (``game``'s newest history entry) did besides itself, in a game that goes
    on: (with 3+ seats) ``seat 0 (red, human) finishes: 1st place; the others play on`` for each seat that took a place
    with it (``before``: the places until then; a resignation ``resigns: 3rd place``), then ``seat 1 (blue,
    greedy) cannot move: its turn passes`` for each automatic pass after it.  A step that ended the game has
    none: the result line names every place (and "no seat can move")."""
    if game.is_over:
        return []
    places, status = game.places, game.status
    placed = sorted((s for s, p in enumerate(places) if p is not None and before[s] is None),
                    key=lambda s: (places[s] or 0, s))
    lines = [f"{seat_name(s)} {'resigns' if status[s] == RESIGNED else 'finishes'}: {_ordinal(places[s] or 0)} place; "
             "the others play on" for s in placed]
    passes: list[int] = []
    for event in game.recent_events():  # newest first: the passes after the entry's move or resignation
        if event.kind != "pass":
            break
        passes.append(event.seat)
    lines += [f"{seat_name(s)} cannot move: its turn passes" for s in reversed(passes)]
    return lines


def replay_header(record: GameRecord, final: Game) -> str:
    """The line a replay starts with: the game, its length, the players by seat (the record's ``players``,
    if any) and the stored result (``final`` is the record's game replayed to its end); for a game the
    arena stopped at its ply cap (no result of the engine's), the arena's places from its metadata."""
    n = record.rules.num_players
    players = None if record.players is None else [shown_path(name) for name in record.players]
    seat_name = record_seat_name(record)

    resigns = sum(1 for event in record.events if event.startswith("resign:"))
    moves = len(record.events) - resigns
    steps = f"{moves} {'move' if moves == 1 else 'moves'}" + (
        f" and {resigns} {'resignation' if resigns == 1 else 'resignations'}" if resigns else "")
    seats = (", ".join(f"seat {s} ({SEAT_COLOUR_NAMES[s]}) {players[s]}" for s in range(n)) if players
             else "players not recorded")
    if final.is_over:
        result = result_words(final, seat_name)
    else:
        result = "none stored: the game was not finished"
        arena = record.metadata.get("arena")
        arena = arena if isinstance(arena, dict) else {}
        places = arena.get("places")
        if (isinstance(places, list) and len(places) == n
                and all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= n for p in places)):
            ranked = sorted(range(n), key=lambda seat: places[seat])
            why = "the arena stopped it at its ply cap" if arena.get("end_reason") == ARENA_LIMIT else \
                "the arena's places"  # (a game the engine ended has its own result, above)
            result = f"not finished; {why}: " + ("a draw" if set(places) == {1} else
                                                  ", ".join(f"{_ordinal(places[s])} {seat_name(s)}" for s in ranked))
    return (f"replay: {game_name(record.rules.variant, n)}, {steps}; "
            f"{seats}; result: {result}")


def _replay_target(word: str, at: int, last: int) -> int | None:
    """The step (a record event: a move or a resignation) a replay answer (stripped, lower case) goes to from
    step ``at`` of ``0..last``; None for ``help``.  A step out of range, ``back`` at the start, or a word the
    replay does not know is a ValueError saying so (the replay stays where it is).  (``next`` at the last
    step, and the stop words, end the replay before this is asked.)"""
    if word in REPLAY_NEXT:
        return at + 1
    if word in REPLAY_BACK:
        if at == 0:
            raise ValueError("this is the start (step 0): there is no step before it")
        return at - 1
    if word == "start":
        return 0
    if word == "end":
        return last
    if word in ("help", "?"):
        return None
    steps = f"0 (the start) to {last}"
    if is_ascii_number(word):
        if len(word) <= MAX_DIGITS and int(word) <= last:
            return int(word)
        shown = word if len(word) <= MAX_DIGITS else f"of {len(word)} digits"
        raise ValueError(f"there is no step {shown}: the steps are {steps}")
    if any(c.isdigit() for c in word):  # -1, 1.5, full-width digits
        raise ValueError(f"a step is a whole number {steps}, got {quoted(word)}")
    raise ValueError(f"unknown replay command {quoted(word)}{did_you_mean(word, REPLAY_WORDS)}; the replay "
                     f"understands Enter or n (next), b (back), a step number {steps}, start, end, help or ?, "
                     "q (stop)")


def _replay_to(record: GameRecord, game: Game, at: int, target: int) -> Game:
    """``game``, the record's game after ``at`` events, moved to ``target`` events: events played forward,
    taken back with ``undo`` (one an event, passes included), or played again from the start when that is
    shorter.  The record was checked whole before (``GameRecord.replay``), so every event is legal."""
    if target < at and target < at - target:
        game, at = record.start_game(), 0
    while at > target:
        game.undo()
        at -= 1
    for index in range(at, target):
        apply_event(game, index, record.events[index])
    return game


def result_words(game: Game, seat_name: Callable[[int], str]) -> str:
    """How a game that is over ended, in words: why, who won, and the places of more than two seats
    (``seat_name(seat)`` names a seat)."""
    why = END_REASON_WORDS.get(game.end_reason or "", str(game.end_reason))
    if game.end_reason == "move_limit" and game.rules.limit_outcome == "progress":
        why += " (places by progress)"
    places = [p or 0 for p in game.places]  # (every place is set once the game is over)
    firsts = [s for s, p in enumerate(places) if p == 1]
    if game.num_players == 1:
        result = "the crossing is complete" if places[0] == 1 and game.end_reason == "finished" else "not finished"
    elif len(firsts) == 1:
        result = f"{seat_name(firsts[0])} wins"
    else:
        result = "a draw" if len(firsts) == game.num_players else \
            f"{' and '.join(seat_name(s) for s in firsts)} share first place"
    ranked = sorted(range(game.num_players), key=lambda seat: places[seat])
    order = f" ({', '.join(f'{_ordinal(places[s])} {seat_name(s)}' for s in ranked)})" \
        if game.num_players > 2 and len(firsts) < game.num_players else ""  # (a full draw: all first)
    return f"{why}; {result}{order}"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _number(text: str, what: str) -> int:
    """A number typed in a command: ASCII digits only (``int`` also reads '１１３' and refuses '²' with its
    own message); a ValueError naming the token, cut short when long, otherwise."""
    if not is_ascii_number(text):
        raise ValueError(f"{what} must be a number, got {quoted(text)}")
    digits = text.lstrip("0") or "0"  # int() counts leading zeros against its limit of digits
    if len(digits) > MAX_DIGITS:
        raise ValueError(f"{what} {quoted(text)} is far too large")
    return int(digits)


MAX_LINE = 65536  # bytes of one input line kept (LineReader)
THREADED_STDIN = sys.platform == "win32"  # LineReader's default: Windows' select() takes sockets only


class LineReader:
    """Lines read from a file descriptor through this reader's own buffer.  select() sees only the
    descriptor: lines read ahead into ``sys.stdin``'s buffer (a pipe, or typing ahead) would be
    invisible to it, so every read of stdin goes through here and select() runs only when no whole
    line is buffered.  Windows' select() takes sockets only: there (``threaded``) a thread reads the
    descriptor and a read with a time limit waits for that thread's next chunk instead."""

    def __init__(self, fd: int, threaded: bool | None = None) -> None:
        self.fd = fd
        self.pending = bytearray()
        self.scanned = 0  # the bytes of ``pending`` already searched for a newline (each chunk once)
        self.dropped = 0  # bytes of the line being read dropped past MAX_LINE (it is refused when it ends)
        self.threaded = THREADED_STDIN if threaded is None else threaded
        self._chunks: queue.Queue[bytes] | None = None  # the thread's chunks (threaded), b"" for an end
        self._ended = False  # the thread has read a pipe's end and stopped
        self.thread: threading.Thread | None = None  # the reading thread, once started

    def _chunk(self, deadline: float | None) -> bytes:
        """The next bytes of the descriptor, b"" at the end of input; TimeUp when none come by ``deadline``."""
        if not self.threaded:
            if deadline is not None:
                ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise TimeUp()
            try:
                return os.read(self.fd, 4096)
            except OSError as exc:
                if exc.errno != errno.EIO or not is_terminal_device(self.fd):
                    raise
                if os.isatty(self.fd):  # (a terminal that hung up is no tty any more)
                    raise TerminalUnreadable("cannot read the terminal (Input/output error): a job in the "
                                             "background cannot read it; run halma play in the foreground") from None
                terminal_hung_up()  # raises its SIGHUP (Terminated) unless that is ignored: then the end of input
                return b""
        if self._chunks is None:
            self._chunks = queue.Queue()
            self.thread = threading.Thread(target=self._read_ahead, args=(self._chunks,), name="stdin-reader",
                                           daemon=True)
            self.thread.start()
        while True:
            if self._ended and self._chunks.empty():
                return b""
            # in short waits, so that Ctrl-C is not held up by a wait on a lock (Windows)
            wait = 0.1 if deadline is None else min(0.1, max(0.0, deadline - time.monotonic()))
            try:
                return self._chunks.get(timeout=wait)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeUp() from None

    def _read_ahead(self, chunks: queue.Queue[bytes]) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 4096)
                last = not chunk and not os.isatty(self.fd)  # a pipe's end is for good; a terminal goes on after Ctrl-D
            except OSError:  # closed under the thread, or the terminal hung up: the end, for good
                chunk, last = b"", True
            if last:
                self._ended = True
                chunks.put(b"")
                return
            chunks.put(chunk)

    def readline(self, timeout: float | None = None) -> str:
        """The next line with its newline; the last one without it, then "" at the end of input.
        TimeUp when no whole line comes within ``timeout`` seconds (what was typed of one is kept).
        A line longer than ``MAX_LINE`` bytes (no command is that long) is read to its end, keeping only
        its length, and refused whole with ``LineTooLong``: a huge line costs its length once, not squared,
        and no head of it is taken for a command."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (end := self.pending.find(b"\n", self.scanned)) < 0:
            if len(self.pending) > MAX_LINE:
                self.dropped += len(self.pending) - MAX_LINE
                del self.pending[MAX_LINE:]
            self.scanned = len(self.pending)
            chunk = self._chunk(deadline)
            if not chunk:  # not sticky: a terminal can go on after Ctrl-D
                line = bytes(self.pending)
                size = len(line) + self.dropped
                self.pending.clear()
                self.scanned = self.dropped = 0
                if size > MAX_LINE:
                    raise LineTooLong(size)
                return line.decode(errors="replace")
            self.pending += chunk
        size = end + self.dropped  # without its newline
        line = bytes(self.pending[:end + 1])
        del self.pending[:end + 1]
        self.scanned = self.dropped = 0
        if size > MAX_LINE:
            raise LineTooLong(size)
        return line.decode(errors="replace")  # whole lines: no UTF-8 character is split


_stdin_reader: tuple[object, LineReader] | None = None  # sys.stdin and its reader (a new stdin, a new buffer)


def _reader() -> LineReader | None:
    """The reader of the current ``sys.stdin``, or None when it has no descriptor (a StringIO)."""
    global _stdin_reader
    if _stdin_reader is None or _stdin_reader[0] is not sys.stdin:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            return None
        _stdin_reader = (sys.stdin, LineReader(fd))
    return _stdin_reader[1]


def terminal_read(prompt: str, timeout: float | None) -> str:
    """A line of stdin (EOFError at its end) with an optional time limit (select() on a pipe or a
    terminal; a reading thread on Windows); a stdin without a descriptor is read by input(), without the
    limit."""
    if sys.stdin is None:  # started with stdin closed (``halma play <&-``): input() raised RuntimeError
        raise EOFError
    reader = _reader()
    if reader is None:
        if timeout == 0:  # run()'s look between CPU moves: such a stdin (a notebook's) cannot be polled
            raise TimeUp
        return input(prompt)
    if prompt:  # an empty one: a silent look for a line (run() between CPU moves), timeout 0
        sys.stdout.write(prompt if timeout is None else f"{prompt}({timeout:.0f} s) ")
        sys.stdout.flush()
    try:
        line = reader.readline(timeout)
    except TimeUp:
        if prompt:
            sys.stdout.write("\n")
        raise
    if not line:
        raise EOFError
    return line


def _another_kind_of_file(path: str) -> bool:
    """Whether a regular file at ``path`` is something other than a game record (a checkpoint, a config, a
    results.json): ``save`` over it would destroy it."""
    import json

    from halma_env.files import read_regular_file
    from halma_env.records import FORMAT, MAX_RECORD_BYTES

    if not os.path.isfile(path) or os.path.getsize(path) == 0:  # (an empty file holds nothing to lose)
        return False
    try:  # (an OSError, a file that cannot be read, is save's error: its reason, not "not a game record")
        data = json.loads(read_regular_file(path, MAX_RECORD_BYTES))
    except (ValueError, RecursionError):  # too large, not a regular file, not JSON, nested past the parser
        return True
    return not (isinstance(data, dict) and data.get("format") == FORMAT)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = (
        "players: human; a level easy, medium, hard or expert (or ladder:LEVEL, ladder:GAME:LEVEL) from the\n"
        "rated ladder ($HALMA_LADDER names another ladder file); a bot such as greedy or search:depth=3;\n"
        "a checkpoint .pt or an exported .onnx.\n\ncommands at a human's turn:" + HELP.rstrip()
    )
    # None = not given (the defaults are applied in run): --replay refuses the flags that set up a new game
    p.add_argument("--variant", default=None, choices=VARIANTS, help="the game (default star)")
    p.add_argument("--seats", type=int, help="number of seats (default: one per --players entry, else 2)")
    p.add_argument(
        "--players",
        help="comma-separated, one per seat: 'human' or a CPU level/bot (a bot's own parameters keep their commas: "
             "human,search:depth=4,time=none is two seats); seats beyond the list get --level "
             "(default: human, then --level for the rest)",
    )
    p.add_argument("--level", default=None, help="CPU level for the seats not given by --players (default medium); "
                                                 "refused when there are none")
    p.add_argument("--preset", choices=["qdan", "kawu"], help="a public rule set")
    p.add_argument("--rule", action="append", default=None, metavar="KEY=VALUE",
                   help=f"a rule option (repeatable): {', '.join(RULE_OPTIONS)}")
    p.add_argument(
        "--time-limit", type=int, choices=[30, 60],
        help="seconds per human move, 30 or 60 as the public sites offer (default: none); then a CPU moves for them",
    )
    p.add_argument("--cpu-time", type=float, default=None,
                   help="CPU thinking budget per move in seconds (also for a seat handed to a CPU later with "
                        "'cpu SEAT NAME' and the stand-in for a human out of time)")
    p.add_argument("--numbers", action="store_true",
                   help="show hole numbers (without colours the 16x16 board labels its rows and columns instead: "
                        "hole = row label + column)")
    p.add_argument("--no-color", action="store_true",
                   help="no colours (off anyway when output is not a terminal, NO_COLOR is set or TERM=dumb, unless "
                        "FORCE_COLOR is set)")
    p.add_argument("--seed", type=int, default=None, help="seed of the CPU players (default 0)")
    p.add_argument("--replay", metavar="FILE",
                   help="step through a saved game record (Enter: next, b: back, a number: that ply, ?: the keys) "
                        "and exit")


SETUP_FLAGS = ("variant", "seats", "players", "level", "preset", "rule", "time_limit", "cpu_time", "seed")


def run(args: argparse.Namespace) -> int:
    if args.replay is not None:  # (an empty one started a new game instead)
        return run_replay(args)
    args.variant = args.variant or "star"
    level = "medium" if args.level is None else args.level
    args.seed = 0 if args.seed is None else args.seed
    try:
        # (the range of the seeds players take; each CPU's own is derived from it: derive_seed)
        if args.seed < 0:
            raise ValueError(f"--seed must be >= 0 (an integer), got {args.seed}")
        if args.seed >= 2**63:
            raise ValueError(f"--seed must be at most {2**63 - 1} (2**63 - 1), got {args.seed}")  # (<= 30 digits)
        players = split_players(args.players) if args.players is not None else None
        comma_file = file_split_at_a_comma(players or [])
        if comma_file is not None:
            raise ValueError(f"--players splits at its commas, so it cannot name the file {comma_file!r}: link or "
                             "copy it to a name without a comma")
        if players is not None and not all(players):
            raise ValueError(f"--players {args.players!r} leaves a seat's player empty: name one per seat, comma "
                             "separated (human, a level, a bot spec, a checkpoint or a model)")
        seat_count = args.seats if args.seats is not None else len(players) if players else 2
        rules = build_rules(args.variant, seat_count, args.rule or [], args.preset, first_seat=True)
        given = players if players is not None else [HUMAN]
        # --level gives only the seats left over: refused when there are none (`cpu SEAT NAME` names its own
        # player, so it could not matter later); --cpu-time and --seed can (`cpu SEAT NAME`, a time-up stand-in)
        if args.level is not None and len(given) == rules.num_players:
            game = game_name(rules.variant, rules.num_players)
            if players is not None:
                raise ValueError(f"--level is for the seats --players leaves out, and it names every seat of {game} "
                                 "(drop --level)")
            raise ValueError(f"--level is for the CPU seats, and {game} has only the human's (drop --level)")
        # fewer players than seats: the rest get --level; more is an error (PlaySession says so)
        seats = given + [level] * (rules.num_players - len(given))
        try:
            session = PlaySession(
                rules, seats, time_limit=args.time_limit, seed=args.seed,
                color=not args.no_color and colors_wanted(), numbers=args.numbers, cpu_budget=args.cpu_time,
            )
        except ValueError as e:  # a checkpoint or model of another game: the flags that play it
            from agents.registry import trained_game_hint

            raise ValueError(f"{e}{trained_game_hint(seats, rules)}") from None
    except ValueError as e:
        print(f"halma play: error: {e}", file=sys.stderr)
        return 2
    try:
        session.run(terminal_read)  # Ctrl-C at a prompt ends it quietly; while a CPU thinks, agents.cli says so
    except TerminalUnreadable as e:
        print(f"halma play: error: {e}", file=sys.stderr)
        return 2
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """``halma play --replay FILE``: the record brings its own game, so the flags that set one up are refused."""
    from agents.cli import flags_given

    given = flags_given(args, SETUP_FLAGS)
    try:
        if given:
            several = len(given) > 1
            raise ValueError(f"{', '.join(given)} set{'' if several else 's'} up a new game; --replay shows the "
                             f"record's own game (drop {'them' if several else 'it'})")
        record = load_record(args.replay)
        session = PlaySession(record.rules, [HUMAN] * record.rules.num_players,
                              color=not args.no_color and colors_wanted(), numbers=args.numbers)
        with _naming(args.replay):
            session.replay(record)
    except (ValueError, TerminalUnreadable) as e:  # a missing or unreadable file too: load_record names it
        print(f"halma play: error: {e}", file=sys.stderr)
        return 2
    return 0
