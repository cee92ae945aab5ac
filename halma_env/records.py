"""Game records: a game as a JSON document that can be saved, loaded and replayed.

A record holds the rules (every option), the start position when it is not the standard start,
the events of the game as text (moves ``"src-dst"`` and resignations ``"resign:<seat>"``; the
automatic passes are left out because replay recreates them), the outcome (places and end
reason), the final position, and optional player names and free metadata::

    {"format": "halma_env.record", "version": 1,
     "rules": {"variant": "star", "num_players": 2, ...}, "num_players": 2, "start": null,
     "events": ["113-99", "7-16", "resign:1"], "places": [1, 2], "end_reason": "resign",
     "final_position": "star 2 ... 0 2", "players": ["greedy", "random"], "metadata": {}}

Loading checks the document's shape and names what is wrong; ``replay`` plays the events
through the engine, names the first illegal one with its index, and checks that the stored
outcome is what the replay gives.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsIndex

from halma_env.files import (
    DuplicateKey,
    FilePath,
    FileTooLarge,
    NotARegularFile,
    NotText,
    folder_ending,
    no_duplicate_keys,
    read_regular_file,
    special_file_kind,
    write_atomic,
)
from halma_env.game import Game, IllegalMoveError
from halma_env.notation import MAX_PLY_DIGITS, MAX_WRITTEN_PLY_DIGITS, parse_position, quoted
from halma_env.rules import OPTION_NAMES, Rules, WrongTypeError, game_name, integer_argument
from halma_env.suggest import shown_value

FORMAT = "halma_env.record"
VERSION = 1
END_REASONS = ("finished", "first_finish", "resign", "move_limit", "stall_limit", "repetition", "no_moves")
REQUIRED_KEYS = ("format", "version", "rules", "num_players", "events", "places", "end_reason")
OPTIONAL_KEYS = ("start", "final_position", "players", "metadata")
# events as the recorder writes them: ASCII digits without leading zeros (``\d`` would also take
# other scripts' digits), matched whole (``$`` alone lets a trailing newline through)
_NUMBER = r"(0|[1-9][0-9]*)"
_MOVE_RE = re.compile(rf"{_NUMBER}-{_NUMBER}")
_RESIGN_RE = re.compile(rf"resign:{_NUMBER}")


class RecordError(ValueError):
    """A record that is malformed, or whose events or outcome do not replay."""

    def in_file(self, path: FilePath) -> RecordError:
        """The same error naming the file the record came from, as checkpoints and configs name theirs:
        ``game record 'FILE': PROBLEM``."""
        return RecordError(f"{_record_file(path)}: {str(self).removeprefix('game record: ')}")


def _record_file(path: FilePath) -> str:
    """``game record 'FILE'`` (quoted as Python writes a string: a control character cannot reach a terminal)."""
    return f"game record {os.fsdecode(path)!r}"


@dataclass(frozen=True)
class GameRecord:
    """One game: rules, optional non-standard start, events, outcome, player names, metadata."""

    rules: Rules
    events: tuple[str, ...]
    places: tuple[int | None, ...]
    end_reason: str | None
    start: str | None = None
    final_position: str | None = None
    players: tuple[str, ...] | None = None
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)  # compared, not hashed: a dict is not hashable

    def __post_init__(self) -> None:
        """Built directly, a record is the one ``from_dict`` gives: lists stored as tuples (so that it
        hashes, and equals the same record loaded), ``metadata=None`` as ``{}``, and every field
        checked, a bad one raising the RecordError ``from_dict`` raises."""
        if not isinstance(self.rules, Rules):
            raise RecordError(f"game record: rules must be a halma_env.Rules (Rules.from_dict reads the JSON "
                              f"form), got {type(self.rules).__name__}")
        for name, what in (("events", "a list of strings"), ("places", "a list"),
                           ("players", "a list of names or null")):
            value = getattr(self, name)
            if value is None and name == "players":
                continue
            # a str would be taken apart character by character
            if not isinstance(value, (list, tuple)):
                raise RecordError(f"game record: {name} must be {what}, got {type(value).__name__}")
            if type(value) is not tuple:
                object.__setattr__(self, name, tuple(value))
        if self.metadata is None:
            object.__setattr__(self, "metadata", {})
        self._check_shape()

    # --- building ---------------------------------------------------------------------

    @classmethod
    def from_game(
        cls, game: Game, players: list[str] | None = None, metadata: dict[str, Any] | None = None
    ) -> GameRecord:
        """The record of ``game`` as played so far (finished or not).  ``players``: one name per seat;
        ``metadata``: a dict of JSON values."""
        if not isinstance(game, Game):
            raise WrongTypeError(f"from_game needs a halma_env.Game, got {type(game).__name__}")
        if players is not None and (isinstance(players, (str, bytes)) or not isinstance(players, (list, tuple))):
            raise WrongTypeError(f"players must be a list of names, one per seat, got {_value(players)}")
        if metadata is not None and not isinstance(metadata, dict):
            raise WrongTypeError(f"metadata must be a dict, got {type(metadata).__name__}")
        events = game_events(game)
        # the start position: take back every move and resignation on a copy
        first = game.copy()
        for _ in range(len(events)):
            first.undo()
        # a game starts with rules.first_seat to move (Game.from_position sets it from the text);
        # when that seat could not move (finished, or no moves: automatic passes), the position
        # now shows a later seat: store the first seat, so that replay takes the same steps
        fields = first.position().split(" ")
        fields[3] = str(game.rules.first_seat)
        start_text = " ".join(fields)
        standard = Game(game.rules).position()
        record = cls(
            rules=game.rules,
            events=tuple(events),
            places=tuple(game.places),
            end_reason=game.end_reason,
            start=None if start_text == standard else start_text,
            final_position=game.position(),
            players=None if players is None else tuple(players),
            metadata=dict(metadata or {}),
        )  # checked by __post_init__
        start = record.start_game()
        if (start.places, start.status) != (first.places, first.status):
            # e.g. BatchedGame.to_games of a game in which seats finished one after the other
            raise ValueError(
                f"this game cannot be recorded: at its start seats already had places {first.places} "
                f"(status {first.status}), which the start position's text cannot hold (loaded from it, "
                f"they are {start.places}, status {start.status}), so the record would not replay"
            )
        if (start._stall, start._best) != (first._stall, first._best):
            # e.g. BatchedGame.to_games of a game whose stall count was running: the text holds no past
            raise ValueError(
                f"this game cannot be recorded: at its start {first._stall} plies had passed without progress "
                f"(stall_limit {game.rules.stall_limit}; the seats' best progress keys so far {first._best}), "
                f"which the start position's text cannot hold (loaded from it: {start._stall}, {start._best}), so "
                "the record would not replay the same"
            )
        return record

    # --- JSON -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as a dict."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "num_players": self.rules.num_players,
            "start": self.start,
            "events": list(self.events),
            "places": list(self.places),
            "end_reason": self.end_reason,
            "final_position": self.final_position,
            "players": None if self.players is None else list(self.players),
            "metadata": dict(self.metadata),
        }

    def to_json(self, indent: int | None = 1) -> str:
        """The record as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """A record from its JSON document; raises RecordError naming what is wrong."""
        if not isinstance(data, dict):
            raise RecordError(f"a game record is a JSON object, got {type(data).__name__}")
        missing = [k for k in REQUIRED_KEYS if k not in data]
        if missing:
            raise RecordError(f"game record: missing key(s) {', '.join(missing)}")
        unknown = sorted(k for k in data if k not in REQUIRED_KEYS + OPTIONAL_KEYS)
        if unknown:
            raise RecordError(f"game record: unknown key(s) {', '.join(map(str, unknown))}")
        if data["format"] != FORMAT:
            raise RecordError(f"game record: format must be {FORMAT!r}, got {_value(data['format'])}")
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise RecordError(f"game record: version must be a positive integer, got {_value(version)}")
        if version > VERSION:
            raise RecordError(f"game record: version {version} is newer than this halma_env reads ({VERSION})")
        rules_data = data["rules"]
        # a record holds every option (docs/rules.md): a missing one must not fall back to a default
        missing = [k for k in OPTION_NAMES if isinstance(rules_data, Mapping) and k not in rules_data]
        if missing:
            raise RecordError(f"game record: rules: missing option(s) {', '.join(missing)}")
        try:
            rules = Rules.from_dict(rules_data)
        except (TypeError, ValueError) as e:
            raise RecordError(f"game record: rules: {e}") from None
        n = data["num_players"]
        if type(n) is not int or n != rules.num_players:
            raise RecordError(f"game record: num_players is {_value(n)} but the rules say {rules.num_players}")
        events = data["events"]
        if not isinstance(events, list):
            raise RecordError(f"game record: events must be a list of strings, got {type(events).__name__}")
        places = data["places"]
        if not isinstance(places, list):
            raise RecordError(f"game record: places must be a list, got {type(places).__name__}")
        players = data.get("players")
        if players is not None and not isinstance(players, list):
            raise RecordError(f"game record: players must be a list of names or null, got {type(players).__name__}")
        metadata = data.get("metadata")
        record = cls(
            rules=rules,
            events=tuple(events),
            places=tuple(places),
            end_reason=data["end_reason"],
            start=data.get("start"),
            final_position=data.get("final_position"),
            players=None if players is None else tuple(players),
            metadata={} if metadata is None else metadata,
        )  # checked by __post_init__
        return record

    @classmethod
    def from_json(cls, text: str | bytes) -> GameRecord:
        """A record from JSON text; raises RecordError naming what is wrong."""
        try:
            data = json.loads(text, object_pairs_hook=no_duplicate_keys)
        except (DuplicateKey, NotText) as e:  # a key given twice, a lone surrogate: named by the hook
            raise RecordError(f"game record: {e}") from None
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as e:
            raise RecordError(f"game record: not valid JSON: {e}") from None
        except RecursionError:  # the decoder recurses into nested arrays and objects
            raise RecordError("game record: not valid JSON: nested too deeply") from None
        except ValueError:  # int() refuses a number of more than 4300 digits
            raise RecordError("game record: a number in it is far too long (over 4300 digits)") from None
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the record to ``path`` atomically (``files.write_atomic``: a temporary file renamed over it,
        with the permissions a plain write gives); an empty path is a ``RecordError``, as ``load_record`` has it."""
        given = os.fspath(path)
        if given == "":  # Path("") is ".", a directory: "cannot save over a directory" named no path
            raise RecordError("a game record path is empty")
        path = Path(path)
        text = self.to_json()
        # errors name the path asked for, not the temporary file beside it
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "game record: cannot save over a directory", given)
        ending = folder_ending(given)
        if ending:  # (no directory there: Path dropped the '/', and "x/" would be written as x)
            raise IsADirectoryError(errno.EISDIR, f"game record: the name ends in {ending!r}, so it names a "
                                    "directory, not a file", given)
        kind = special_file_kind(path)
        if kind:  # the rename below would replace it: as root, `save /dev/null` made /dev/null a regular file
            raise OSError(errno.EINVAL, f"game record: it is {kind}, not a regular file, and saving would replace it",
                          str(path))
        if not path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "game record: no directory to save in", str(path.parent))
        try:
            write_atomic(path, text + "\n")
        except OSError as e:
            raise OSError(e.errno, f"game record: {e.strerror}", str(path)) from None

    # --- replay -----------------------------------------------------------------------

    def start_game(self) -> Game:
        """The game before the first event."""
        if self.start is None:
            return Game(self.rules)
        # the start's seat to move is its first seat (Game.from_position): compared below
        skip = ("variant", "num_players", "first_seat")
        options = {k: v for k, v in self.rules.to_dict().items() if k not in skip}
        try:
            game = Game.from_position(self.start, **options)
        except ValueError as e:
            raise RecordError(f"game record: start position: {e}") from None
        if (game.rules.variant, game.num_players) != (self.rules.variant, self.rules.num_players):
            raise RecordError(
                f"game record: start position is {game_name(game.rules.variant, game.num_players)}, "
                f"but the rules say {self.rules.variant} with {self.rules.num_players}"
            )
        if game.rules.first_seat != self.rules.first_seat:
            raise RecordError(
                f"game record: start position has seat {game.rules.first_seat} to move, "
                f"but rules.first_seat is {self.rules.first_seat}"
            )
        return game

    def games(self, upto: SupportsIndex | None = None) -> Iterator[Game]:
        """Yield the game after 0, 1, ... events (the start first); each yielded game is a copy
        the caller may keep or change, history included (so each costs time in the plies so far:
        ``positions`` for the texts alone).  Raises RecordError at the first illegal event."""
        game = self.start_game()
        stop = self._stop(upto)
        yield game.copy()
        for i, event in enumerate(self.events[:stop]):
            apply_event(game, i, event)
            yield game.copy()

    def positions(self, upto: SupportsIndex | None = None) -> Iterator[str]:
        """Yield the position text after 0, 1, ... events (the start first), from one game played
        on (no copies: a record of n plies costs n moves, not n^2 / 2 history entries copied)."""
        game = self.start_game()
        stop = self._stop(upto)
        yield game.position()
        for i, event in enumerate(self.events[:stop]):
            apply_event(game, i, event)
            yield game.position()

    def replay(self, upto: SupportsIndex | None = None) -> Game:
        """Play the first ``upto`` events (all by default) and return the game.

        A full replay also checks that the stored outcome (places, end reason) and final
        position are what the replay gives; a RecordError says what differs.
        """
        game = self.start_game()
        stop = self._stop(upto)
        with _gc_paused() if stop >= LONG_REPLAY_EVENTS else nullcontext():
            for i, event in enumerate(self.events[:stop]):
                apply_event(game, i, event)
        if stop == len(self.events):
            if list(self.places) != game.places or self.end_reason != game.end_reason:
                raise RecordError(
                    f"game record: stored outcome places={list(self.places)} end_reason={self.end_reason!r}, "
                    f"but the replay gives places={game.places} end_reason={game.end_reason!r}"
                )
            if self.final_position is not None and self.final_position != game.position():
                raise RecordError(
                    f"game record: stored final position {self.final_position!r}, "
                    f"but the replay gives {game.position()!r}"
                )
        return game

    # --- checks -----------------------------------------------------------------------

    def _stop(self, upto: SupportsIndex | None) -> int:
        if upto is None:
            return len(self.events)
        def message() -> str:
            return f"upto must be an event count 0..{len(self.events)}, got {shown_value(upto)}"

        stop = integer_argument(upto, message)  # numpy integers too; 2.5 or True a WrongTypeError
        if not 0 <= stop <= len(self.events):
            raise ValueError(message())
        return stop

    def _check_shape(self) -> None:
        n = self.rules.num_players
        for i, event in enumerate(self.events):
            if not isinstance(event, str) or not (_MOVE_RE.fullmatch(event) or _RESIGN_RE.fullmatch(event)):
                raise RecordError(
                    f"game record: event {i} is {_value(event)}; expected a move 'src-dst' or 'resign:<seat>' "
                    "(plain numbers: no spaces or leading zeros)"
                )
        if len(self.places) != n:
            raise RecordError(f"game record: places must have {n} entries (one per seat), got {len(self.places)}")
        for p in self.places:
            if p is not None and (isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= n):
                raise RecordError(f"game record: a place is an integer 1..{n} or null, got {_value(p)}")
        if self.end_reason is not None and self.end_reason not in END_REASONS:
            raise RecordError(
                f"game record: end_reason must be null or one of {', '.join(END_REASONS)}, "
                f"got {_value(self.end_reason)}"
            )
        for name in ("start", "final_position"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise RecordError(f"game record: {name} must be a position text or null, got {type(value).__name__}")
            if isinstance(value, str):
                _check_position_text(name, value)
        if self.players is not None:
            if len(self.players) != n or not all(isinstance(p, str) for p in self.players):
                raise RecordError(f"game record: players must be {n} names (strings), got {_value(list(self.players))}")
        if not isinstance(self.metadata, dict) or not all(isinstance(k, str) for k in self.metadata):
            raise RecordError("game record: metadata must be an object with string keys")
        try:
            json.dumps(self.metadata, allow_nan=False)  # NaN and infinities are not JSON
        except (TypeError, ValueError, RecursionError) as e:
            raise RecordError(f"game record: metadata is not JSON-serialisable: {e}") from None


def apply_event(game: Game, index: int, event: str) -> None:
    """Play event ``index`` of a record (``"src-dst"`` or ``"resign:SEAT"``) on ``game``; an illegal one raises
    RecordError naming it and its index."""
    resign = _RESIGN_RE.fullmatch(event)
    try:
        if resign:
            digits = resign.group(1)
            if len(digits) > 9:  # int() refuses numbers of more than a few thousand digits
                raise IllegalMoveError(f"seat must be 0..{game.num_players - 1}, got a {len(digits)}-digit number")
            game.resign(int(digits))
        else:
            src, dst = event.split("-")  # "src-dst" in ASCII digits: _check_shape let nothing else in
            longest = max(len(src), len(dst))
            if longest > 9:  # the engine's error would echo the whole number
                raise IllegalMoveError(f"a move's hole number is far too long ({longest} digits)")
            game.play((int(src), int(dst)))  # as a pair: play need not parse the text again
    except IllegalMoveError as e:
        kind = "resignation" if resign else "move"
        raise RecordError(f"game record: event {index} ({quoted(event)}) is an illegal {kind}: {e}") from None


# a replay of this many events or more holds the collector off (_gc_paused): 100,000 plies 1.5 s against 2.6 s,
# 20,000 0.28 against 0.34 s, 5,000 and fewer alike (docs/engine.md has the command); shorter ones (a game
# site's records) leave it alone, so that replays back to back in threads do not keep it off for the process
LONG_REPLAY_EVENTS = 10_000

# replays in progress (threads), and whether the collector was on when the first of them began
_paused = {"replays": 0, "collector_was_on": False}
_paused_lock = threading.Lock()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while a replay builds a game's history.  Every ply adds a
    few objects that live on in the history, and the collector's full passes went through all of them
    again and again (half of a long replay's time); playing makes no reference cycles, and what it
    drops is still freed at once by reference counting.  The collector is turned back on (if it was
    on) however the replay ends, when the last of the replays that overlap in threads ends: each
    replay saving and restoring the switch on its own left it off for good when two interleaved."""
    with _paused_lock:
        if _paused["replays"] == 0:
            _paused["collector_was_on"] = gc.isenabled()
            gc.disable()
        _paused["replays"] += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused["replays"] -= 1
            if _paused["replays"] == 0 and _paused["collector_was_on"]:
                gc.enable()


def _check_position_text(name: str, text: str) -> None:
    """A record's position text must be one ``Game.position()`` writes: one text per position, as
    records compare texts.  A variant is refused, not rewritten, so that a record loads as the very
    document it was read from (and a rewrite through a Game could move the seat to move on: passes)."""
    label = "start position" if name == "start" else name  # as start_game names it
    try:
        # a final position is the game's own text after its moves: a game started at the largest ply count a
        # position may start at (12 digits) wrote 13 after one move, and its record was refused
        parse_position(text, max_ply_digits=MAX_PLY_DIGITS if name == "start" else MAX_WRITTEN_PLY_DIGITS)
    except ValueError as e:
        raise RecordError(f"game record: {label}: {e}") from None
    # the parser reads the fields themselves only as position() writes them (single spaces, no
    # leading zeros): what is left is the text around them and the optional ply field
    faults = []
    if text != text.strip():
        faults.append("spaces or line breaks around it")
    if len(text.strip().split(" ")) == 4:
        faults.append("no ply field")
    if faults:
        raise RecordError(f"game record: {label} {quoted(text)} is not written as Game.position() writes it: "
                          f"{' and '.join(faults)}")


def _value(value: object) -> str:
    """A value read from a record, for an error message: a text cut short when long (``quoted``),
    anything else as ``shown_value`` writes it (a list of 100,000 zeros made a 300,000-character error)."""
    return quoted(value) if isinstance(value, str) else shown_value(value)


def game_events(game: Game) -> list[str]:
    """A game's moves (``"src-dst"``) and resignations (``"resign:<seat>"``) as record events;
    automatic passes are left out (replay recreates them)."""
    events = []
    for e in game.history:
        if e.kind == "move":
            events.append(str(e.move))
        elif e.kind == "resign":
            events.append(f"resign:{e.seat}")
    return events


MAX_RECORD_BYTES = 64 * 1024 * 1024  # about 5 million plies of moves


def load_record(path: FilePath) -> GameRecord:
    """Read a record saved with ``GameRecord.save``; raises RecordError if it is corrupt, or if the path
    is not a regular file (a FIFO would hang, /dev/zero fill the memory) or holds more than
    ``MAX_RECORD_BYTES``."""
    if os.fsdecode(path) == "":  # Path("") is "."
        raise RecordError("a game record path is empty")
    # every error names the file: 'game record 'FILE': PROBLEM'
    name = _record_file(path)
    try:
        text = read_regular_file(path, MAX_RECORD_BYTES).decode("utf-8")
    except NotARegularFile:
        raise RecordError(f"{name} is not a regular file") from None
    except FileTooLarge:
        raise RecordError(f"{name} holds more than the {MAX_RECORD_BYTES} bytes a record may") from None
    except UnicodeDecodeError as e:
        raise RecordError(f"{name} is not UTF-8 text: {e}") from None
    except OSError as e:  # missing, no permission: a RecordError like the others
        raise RecordError(f"{name} cannot be read: {e.strerror or e}") from None
    try:
        return GameRecord.from_json(text)
    except RecordError as e:
        raise e.in_file(path) from None
