"""The difficulty ladder: level names (``easy`` .. ``expert``) -> opponents, per variant and seat
count, ordered by rating; ``halma ladder`` rebuilds one game's entry by tournament.

The ladder file (``agents/ladder/ladder.json``, shipped as package data; ``HALMA_LADDER`` or
``--ladder`` point elsewhere) is documented in docs/export.md.  In short::

    {"format": "halma_env.ladder", "format_version": 1,
     "games": {"star-2": {"variant": "star", "seats": 2,
                          "levels": [{"level": "easy", "player": "greedy:noise=0.5", "rating": ...}, ...],
                          "candidates": [... every candidate with its rating ...],
                          "tournament": {...}, "command": "halma ladder ...", "date": "..."}, ...}}

A level's ``player`` is a bot spec (``agents.registry``) or an exported model (a ``.onnx`` path
relative to the ladder file and inside its folder, optionally with options ``model.onnx:search=top=6``).
A ladder file chooses which models are loaded, so it is checked as untrusted input: no model outside
its folder, finite numbers only, a regular file of at most 16 MiB; its strings are escaped when printed.

``level_player(level, variant, seats)`` makes a level's player for that game only (what
``ladder:star-2:hard`` gives: a model refuses another game, and so does a bot level, a ``LevelBot``);
``LevelPlayer`` (what ``make_player("hard")`` and ``ladder:hard`` give) looks the level up when it
sees the game, so one name works for every variant and seat count.  Both take ``temperature``,
``search`` and ``time_budget`` for the level's player: a model uses all three, a bot only
``time_budget`` (its budget for a move asked for without one) and refuses the others by name.
Nothing here imports torch, except exporting a ``.pt`` candidate in ``halma ladder``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import json
import math
import os
import shlex
import sys
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from agents.files import is_empty_path, shown_value, write_atomic
from agents.player import SeededPlayer
from halma_env import Game, Move, Rules
from halma_env.files import FileTooLarge, NotARegularFile, file_kind, read_regular_file
from halma_env.rules import SEAT_COUNTS, VARIANTS

LADDER_FORMAT = "halma_env.ladder"
LADDER_VERSION = 1
LADDER_DIR = Path(__file__).resolve().parent / "ladder"
DEFAULT_LADDER = LADDER_DIR / "ladder.json"
LEVELS = ("easy", "medium", "hard", "expert")
ENTRY_FIELDS = ("variant", "seats", "levels")
PLAYER_OPTIONS = ("temperature", "search", "time_budget")
LEVEL_STATS = ("rating", "mu", "sigma", "score", "mean_place", "ms_per_move", "separation")  # build_entry's figures
LEVEL_KEYS = ("level", "player", *LEVEL_STATS, *PLAYER_OPTIONS)  # all a level may hold (docs/export.md)
# "clearly stronger": adjacent levels' openskill mu differ by at least this many combined sigmas,
# sqrt(sigma_lower^2 + sigma_upper^2) (about 98% one-sided if the ratings were normal and independent)
SEPARATION = 2.0
MAX_LADDER_BYTES = 16 * 1024 * 1024  # a ladder file is a few kB; anything this large is not one
# a bot level of a ladder file thinks at most this long on a move asked for without a budget (the
# environments ask so): the file is untrusted, and search:depth=40,time=none would never answer; the
# same bound as a run of an exported model (agents.opponent.RUN_TIME_LIMIT)
LEVEL_MOVE_LIMIT = 10.0


class LadderError(ValueError):
    """A ladder file or level that cannot be used."""


def ladder_path(path: str | Path | None = None) -> Path:
    """The ladder file: ``path``, else ``$HALMA_LADDER``, else the shipped one."""
    if path is not None:
        if is_empty_path(path):
            raise LadderError("a ladder file path is empty")
        return Path(path)
    env = os.environ.get("HALMA_LADDER")
    return Path(env) if env else DEFAULT_LADDER


def game_key(variant: str, seats: int) -> str:
    """``("star", 2)`` -> ``"star-2"`` (checked)."""
    if variant not in VARIANTS:
        raise LadderError(f"unknown variant {variant!r}; variants: {', '.join(VARIANTS)}")
    if seats not in SEAT_COUNTS[variant]:
        raise LadderError(f"{variant} is played by {', '.join(map(str, SEAT_COUNTS[variant]))} seats, not {seats!r}")
    return f"{variant}-{seats}"


def _check(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != LADDER_FORMAT:
        raise LadderError(f"{str(path)!r} is not a ladder file (no format {LADDER_FORMAT!r})")
    if data.get("format_version") != LADDER_VERSION:
        raise LadderError(f"ladder {str(path)!r} has format version {data.get('format_version')!r}; "
                          f"this code reads {LADDER_VERSION}")
    games = data.get("games")
    if not isinstance(games, dict):
        raise LadderError(f"ladder {str(path)!r} has no 'games' object")
    for key, entry in games.items():
        if not isinstance(entry, dict) or any(f not in entry for f in ENTRY_FIELDS):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} lacks {', '.join(ENTRY_FIELDS)}")
        _check_game(entry, f"ladder {str(path)!r}: entry {key!r}", key)
        if not isinstance(entry["levels"], list):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} has 'levels' {shown_value(entry['levels'])}, "
                              "not a list")
        names = [lv.get("level") if isinstance(lv, dict) else None for lv in entry["levels"]]
        if not names or None in names or any(not isinstance(lv.get("player"), str) for lv in entry["levels"]):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} has a level without 'level' and 'player'")
        if any(not isinstance(name, str) for name in names):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} has a level name that is not a string")
        if len(set(names)) != len(names):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} repeats a level name")
        missing = entry.get("missing", [])  # level_entry looks a level up in it
        if not isinstance(missing, list) or any(not isinstance(name, str) for name in missing):
            raise LadderError(f"ladder {str(path)!r}: entry {key!r} has 'missing' {shown_value(missing)}, not a list "
                              "of level names")
        for lv in entry["levels"]:
            _check_level(lv, f"ladder {str(path)!r}: entry {key!r}, level {printable(lv['level'])!r}")
            if lv["player"].strip().lower().endswith(".pt"):  # make_player would load it from anywhere
                raise LadderError(f"ladder {str(path)!r}: entry {key!r}, level {printable(lv['level'])!r}: the "
                                  f"player {printable(lv['player'])!r} is a checkpoint; a level's player is a bot spec "
                                  "or an exported .onnx model inside the ladder's folder (halma ladder exports a "
                                  ".pt candidate)")
            model = _model_file(lv["player"])
            if model is not None and _outside(model):
                raise LadderError(f"ladder {str(path)!r}: entry {key!r}, level {lv['level']!r}: the model "
                                  f"{model!r} is outside the ladder's folder; a level's model is a path relative "
                                  "to the ladder file, inside its folder")
        _check_record(entry, f"ladder {str(path)!r}: entry {key!r}")
    return data


def _check_game(entry: dict[str, Any], what: str, key: str) -> None:
    """An entry's ``variant`` and ``seats``: a game's, and the one its key names; ``what`` names the file and
    entry (game_key's own message names neither, and shows a value of any length)."""
    variant, seats = entry["variant"], entry["seats"]
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise LadderError(f"{what}: unknown variant {shown_value(variant)}; variants: {', '.join(VARIANTS)}")
    if type(seats) is not int or seats not in SEAT_COUNTS[variant]:  # not True, not 2.0
        raise LadderError(f"{what}: {variant} is played by {', '.join(map(str, SEAT_COUNTS[variant]))} seats, not "
                          f"{shown_value(seats)}")
    if game_key(variant, seats) != key:
        raise LadderError(f"{what} is for {variant}-{seats}")


def _check_record(entry: dict[str, Any], what: str) -> None:
    """The tournament's record in an entry, each part optional (a hand-written entry may have levels only):
    ``candidates`` a list of rows, each with its ``player`` (a string) and ``rating`` (a finite number), its
    other figures finite numbers or null and its ``level`` a string; ``tournament`` an object whose ``games``
    (``halma ladder`` prints it) is a positive integer; ``command`` and ``date`` strings.  ``what`` names the
    file and entry."""
    rows = entry.get("candidates", [])
    if not isinstance(rows, list):
        raise LadderError(f"{what} has 'candidates' {shown_value(rows)}, not a list of rows")
    for i, row in enumerate(rows):
        where = f"{what}, candidates[{i}]"
        if not isinstance(row, dict):
            raise LadderError(f"{where} is {shown_value(row)}, not an object with 'player' and 'rating'")
        if not isinstance(row.get("player"), str):
            raise LadderError(f"{where} has 'player' {shown_value(row.get('player'))}, not a string (a bot spec "
                              "or model)")
        where += f" ({shown_value(row['player'])})"
        if row.get("rating") is None:  # (each is rated: that is what the list records)
            raise LadderError(f"{where} has no rating")
        for stat in LEVEL_STATS:
            value = row.get(stat)
            if value is not None and not _finite(value):
                raise LadderError(f"{where}: {stat} {shown_value(value)} is not a finite number")
        if "level" in row and not isinstance(row["level"], str):
            raise LadderError(f"{where}: level {shown_value(row['level'])} is not a level name (a string)")
    t = entry.get("tournament", {})
    if not isinstance(t, dict):
        raise LadderError(f"{what} has 'tournament' {shown_value(t)}, not an object")
    games = t.get("games")
    if games is not None and (type(games) is not int or games < 1):
        raise LadderError(f"{what}, tournament: games {shown_value(games)} is not a positive integer")
    for field in ("command", "date"):
        value = entry.get(field, "")
        if not isinstance(value, str):
            raise LadderError(f"{what} has '{field}' {shown_value(value)}, not a string")


def _finite(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _check_level(lv: dict[str, Any], what: str) -> None:
    """A level's keys: only those it may have, its figures numbers (or null: a level need not be rated), its
    player options in range; ``what`` names the file, entry and level."""
    from agents.opponent import check_play_options

    unknown = [k for k in lv if k not in LEVEL_KEYS]
    if unknown:  # a misspelt option (``temprature``) would be dropped without a word
        raise LadderError(f"{what}: unknown key(s) {', '.join(map(shown_value, unknown))}; a level has "
                          f"{', '.join(LEVEL_KEYS)}")
    for stat in (*LEVEL_STATS, "temperature", "time_budget"):
        value = lv.get(stat)
        # NaN would sort and compare as no rating does; an integer past a float's range fails to print
        if value is not None and not _finite(value):
            raise LadderError(f"{what}: {stat} {shown_value(value)} is not a finite number")
    try:
        check_play_options(*(lv.get(k) for k in PLAYER_OPTIONS))
    except ValueError as e:
        raise LadderError(f"{what}: {e}") from None


def _model_file(player: str) -> str | None:
    """The model file a ladder player string names (``model.onnx:search=top=6`` -> ``model.onnx``), or
    None for a bot spec (as ``entry_player`` tells them apart)."""
    from agents.opponent import opponent_file

    lower = player.lower()
    return opponent_file(player) if lower.endswith(".onnx") or ".onnx:" in lower else None


def _outside(model: str) -> bool:
    """Whether a level's model path, as written, leaves the ladder file's folder: an absolute path, or
    one whose ``..`` climb out of it (``../x.onnx``, ``sub/../../x.onnx``)."""
    path = Path(model)
    return path.is_absolute() or bool(path.drive) or os.path.normpath(path).split(os.sep)[0] == os.pardir


def level_model(base: Path, model: str, what: str) -> Path:
    """The file of a level's ``model`` (as ``_model_file`` gives it) in the ladder whose folder is ``base``:
    relative to that folder, and still inside it once symbolic links are followed (a ladder file, from
    ``--ladder`` or ``$HALMA_LADDER``, chooses which files are loaded: never one elsewhere)."""
    folder = base.resolve()
    path = folder / model
    if _outside(model) or not path.resolve().is_relative_to(folder):
        raise LadderError(f"{what} is the model {model!r}, outside the ladder's folder {str(folder)!r}: a level's "
                          "model is a path relative to the ladder file, inside its folder")
    return path


class _NotFinite(ValueError):
    """A number the ladder's JSON holds that is not finite (NaN, Infinity, 1e999)."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def _no_constant(text: str) -> float:
    raise _NotFinite(text)


def printable(text: Any) -> str:
    """``text`` as it may reach a terminal: unchanged when every character is printable, else Python's
    escaped form (``'greedy\\x1b[2J'``), so that a ladder file's strings cannot send escape sequences."""
    text = str(text)
    return text if text.isprintable() else repr(text)


def _read_ladder(path: str) -> str:
    """The text of the ladder file ``path``: a regular file of at most ``MAX_LADDER_BYTES`` (a device or a
    FIFO named by ``$HALMA_LADDER`` would be read without end, or never answer)."""
    try:
        data = read_regular_file(path, MAX_LADDER_BYTES)
    except NotARegularFile as e:  # (load_ladder checked before; the file may have been swapped since)
        raise LadderError(f"ladder file {path!r} cannot be read (it is {e.kind}, not a regular file)") from None
    except FileTooLarge:
        raise LadderError(f"ladder file {path!r} is larger than {MAX_LADDER_BYTES // 2**20} MiB: not a ladder "
                          "file") from None
    return data.decode("utf-8")


@lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(_read_ladder(path), parse_float=_finite_float, parse_constant=_no_constant)
    except _NotFinite as e:
        raise LadderError(f"ladder file {path!r} holds the number {str(e)}: its numbers must be finite") from None
    except RecursionError:
        raise LadderError(f"ladder file {path!r} cannot be read (its JSON is nested too deeply)") from None
    except (OSError, ValueError) as e:  # JSONDecodeError, UnicodeDecodeError, an integer of too many digits
        if isinstance(e, LadderError):
            raise
        raise LadderError(f"ladder file {path!r} cannot be read ({type(e).__name__}: {e})") from None
    return _check(data, p)


def load_ladder(path: str | Path | None = None, *, missing_ok: bool = False) -> dict[str, Any]:
    """The checked ladder (cached until the file changes).  A missing file is a ``LadderError`` (a
    mistyped ``--ladder`` or ``$HALMA_LADDER`` must not read as an empty ladder), or with
    ``missing_ok`` (a rebuild that writes a new file) an empty ladder."""
    p = ladder_path(path)
    if not p.exists():
        if missing_ok:
            return {"format": LADDER_FORMAT, "format_version": LADDER_VERSION, "games": {}}
        source = " (from $HALMA_LADDER)" if path is None and os.environ.get("HALMA_LADDER") else ""
        raise LadderError(f"ladder file {str(p)!r}{source} does not exist")
    st = p.stat()
    kind = file_kind(st.st_mode)  # a directory, /dev/zero, a FIFO: refused before anything is read
    if kind:
        source = " (from $HALMA_LADDER)" if path is None and os.environ.get("HALMA_LADDER") else ""
        raise LadderError(f"ladder file {str(p)!r}{source} cannot be read (it is {kind}, not a regular file)")
    return _load(str(p.resolve()), st.st_mtime)


def save_ladder(data: dict[str, Any], path: str | Path | None = None) -> Path:
    """Write the ladder atomically (games sorted by variant then seats), through a new temporary file
    beside it (``write_atomic``): a symbolic link planted at the ladder's name is replaced, not followed."""
    p = ladder_path(path)
    _check(data, p)
    order = {v: i for i, v in enumerate(VARIANTS)}
    games = dict(sorted(data["games"].items(), key=lambda kv: (order[kv[1]["variant"]], kv[1]["seats"])))
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, json.dumps({**data, "games": games}, indent=2, allow_nan=False) + "\n")
    return p


def level_names(path: str | Path | None = None) -> list[str]:
    """Every level name the ladder knows (the standard four first)."""
    names = list(LEVELS)
    for entry in load_ladder(path)["games"].values():
        names += [lv["level"] for lv in entry["levels"] if lv["level"] not in names]
    return names


def level_entry(level: str, variant: str, seats: int, path: str | Path | None = None) -> dict[str, Any]:
    """The ladder's entry for ``level`` in ``variant`` with ``seats`` seats (LadderError if none)."""
    key = game_key(variant, seats)
    entry = load_ladder(path)["games"].get(key)
    if entry is None:
        raise LadderError(f"the ladder {str(ladder_path(path))!r} has no entry for {key}; "
                          f"build one with: halma ladder --variant {variant} --seats {seats} CANDIDATE...")
    for lv in entry["levels"]:
        if lv["level"] == level:
            return lv
    have = ", ".join(printable(lv["level"]) for lv in entry["levels"])
    if level in entry.get("missing", ()):
        raise LadderError(f"level {level!r} is missing from the {key} ladder: its tournament separated only "
                          f"{len(entry['levels'])} levels clearly ({have}); rebuild it with a stronger candidate "
                          f"or more games (halma ladder --variant {variant} --seats {seats} ...)")
    raise LadderError(f"level {level!r} is not in the {key} ladder; levels: {have}")


def entry_player(player: str, seed: int | None = None, base: Path | None = None, name: str | None = None,
                 game: tuple[str, int] | None = None, **options: Any) -> Any:
    """The Player for a ladder/candidate ``player`` string: a bot spec or a ``.onnx`` model
    (relative paths are taken from ``base``, the ladder file's directory).

    ``options`` (``temperature``, ``search``, ``time_budget``; ``None``: not given) override a model's
    own; a bot takes only ``time_budget`` (its budget for a move asked for without one) and refuses the
    others by name.  With ``game`` (variant, seats) the player is that game's: a model for another is
    refused now, and a bot is wrapped (``LevelBot``) so that it refuses to play another.  A bot level of a
    ladder file (``base`` given) gets at most ``LEVEL_MOVE_LIMIT`` as its ``time_budget``: it never thinks
    longer than that on a move asked for without a budget, whatever its spec or entry says."""
    from agents.opponent import OnnxOpponent, load_opponent, parse_opponent_spec

    given = {k: v for k, v in options.items() if v is not None}
    what = f"level {name!r}" if name else "the ladder player"
    if game is not None:
        what += f" for {game[0]} with {game[1]} seats"
    lower = player.lower()
    if lower.endswith(".onnx") or ".onnx:" in lower:
        spec = parse_opponent_spec(player)
        # a ladder's level (``base``: the ladder file's folder) loads only a model inside that folder; a
        # candidate of the command line (no base) is any path, relative to the working directory
        path = Path(spec.path) if base is None else level_model(base, spec.path, what)
        merged = {**spec.options, **given}
        opp = cast(OnnxOpponent, load_opponent(str(path), seed=seed, temperature=merged.get("temperature"),
                                               search=merged.get("search"), time_budget=merged.get("time_budget")))
        plays = (opp.policy.variant, opp.policy.num_players)
        if game is not None and plays != tuple(game):
            raise LadderError(f"{what} is the model {player!r}, exported for {plays[0]} with {plays[1]} seats")
        if name:
            opp.name = name
        return opp
    if lower.startswith("ladder:") or player in LEVELS:
        raise LadderError(f"a ladder level must name a bot spec or a model, not another level ({player!r})")
    refused = [k for k in given if k != "time_budget"]
    if refused:  # a bot has no policy to sample or search with: never drop the setting silently
        k = refused[0]
        raise LadderError(f"{what} is the bot {player!r}, which cannot take {k}={given[k]!r}: a bot level takes "
                          "only time_budget (temperature and search are an exported model's)")
    from agents.player import check_time
    from agents.registry import make_player

    budget = check_time("time_budget", given.get("time_budget"))
    if base is not None:  # a ladder file's level: bounded (LEVEL_MOVE_LIMIT), whatever its time_budget says
        budget = LEVEL_MOVE_LIMIT if budget is None else min(budget, LEVEL_MOVE_LIMIT)
    bot = make_player(player, seed=seed)
    if name:
        bot.name = name
    if game is None and budget is None:
        return bot
    return LevelBot(bot, player, game, budget)


def level_player(level: str, variant: str, seats: int, seed: int | None = None,
                 path: str | Path | None = None, *, temperature: float | None = None,
                 search: str | dict[str, Any] | int | None = None,
                 time_budget: float | None = None) -> SeededPlayer:
    """The Player of ``level`` for ``variant`` with ``seats`` seats, from the ladder; it plays that game
    only (a ``LadderError`` naming both games for another).  ``temperature``, ``search`` and
    ``time_budget`` override the level's own (see ``entry_player``)."""
    lv = level_entry(level, variant, seats, path)
    options = {k: lv[k] for k in PLAYER_OPTIONS if k in lv}
    options.update((k, v) for k, v in (("temperature", temperature), ("search", search),
                                       ("time_budget", time_budget)) if v is not None)
    player = entry_player(lv["player"], seed=seed, base=ladder_path(path).resolve().parent, name=level,
                          game=(variant, seats), **options)
    # what the level resolved to, as LevelPlayer.describe says it (halma play announces ladder:star-2:hard so)
    player.describe = ResolvedLevel(lv["player"])
    return player


class LevelBot:
    """A bot that is a ladder level of one game (``ladder:star-3:expert``, ``level_player``): like a
    model level, it refuses to play another game (with a ``LadderError`` naming both; the plain level
    name follows the game instead), and it gives the bot the level's ``time_budget`` for a move asked
    for without one (a budget given with the move wins, as for an exported model).  Every other
    attribute (``seed``, ``last_info``, ...) is the bot's."""

    def __init__(self, bot: Any, spec: str, game: tuple[str, int] | None, time_budget: float | None) -> None:
        from agents.player import check_time

        self.bot = bot
        self.spec = spec
        self.name: str = bot.name
        self.game = None if game is None else (game[0], int(game[1]))
        self.time_budget = check_time("time_budget", time_budget)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr == "bot":  # not there yet while unpickling or copying
            raise AttributeError(attr)
        return getattr(self.bot, attr)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        from agents.player import check_is_game, check_time

        check_time("time_budget", time_budget)
        check_is_game(game)
        r = game.rules
        if self.game is not None and (r.variant, r.num_players) != self.game:
            raise LadderError(f"level {self.name!r} ({self.spec}) was resolved for {self.game[0]} with "
                              f"{self.game[1]} seats; it cannot play {r.variant} with {r.num_players} seats (the "
                              f"plain level name {self.name!r} follows the game played)")
        return self.bot.select_move(game, self.time_budget if time_budget is None else time_budget)

    def __repr__(self) -> str:
        game = "" if self.game is None else f", game={self.game[0]}-{self.game[1]}"
        budget = "" if self.time_budget is None else f", time_budget={self.time_budget}"
        return f"LevelBot({self.bot!r}{game}{budget})"


class ResolvedLevel:
    """``describe`` of a level resolved for one game (``ladder:star-2:hard``): its ladder player,
    whatever game is asked about.  A class, not a lambda, so the player still pickles."""

    def __init__(self, player: str) -> None:
        self.player = player

    def __call__(self, rules: Rules | None = None) -> str:
        return printable(self.player)  # for a terminal: a ladder file's control characters escaped

    def __repr__(self) -> str:
        return f"ResolvedLevel({self.player!r})"


MIN_MOVE_BUDGET = 0.001  # seconds left for a move when making its player took the whole budget
_MAKING_PLAYERS = threading.Lock()  # LevelPlayer.player_for: one thread makes a level's player (module-wide:
# a lock held by the player would stop it being copied and pickled)


class LevelPlayer:
    """A level by name, resolved from the ladder for each game's variant and seat count.

    Games the ladder has no entry for (the 1-seat solitaire, a ladder file without that game) use
    the registry's fallback spec of the level (``agents.registry.FALLBACK_LEVELS``) when there is one.

    ``temperature``, ``search`` and ``time_budget`` are checked now and passed to each game's player
    when it is made (``entry_player``): a game whose level is a bot refuses temperature and search
    then, at the first move of that game."""

    def __init__(self, level: str, seed: int | None = None, path: str | Path | None = None, *,
                 temperature: float | None = None, search: str | dict[str, Any] | int | None = None,
                 time_budget: float | None = None) -> None:
        from agents.opponent import check_play_options
        from agents.player import check_seed

        known = level_names(path)
        if level not in known:
            raise LadderError(f"unknown level {level!r}; levels: {', '.join(map(printable, known))}")
        check_play_options(temperature, search, time_budget)
        self.name = level
        self.level = level
        self.seed = check_seed(seed)  # now, not at the first move, as make_player checks it
        self.path = path
        self.options: dict[str, Any] = {k: v for k, v in (("temperature", temperature), ("search", search),
                                                          ("time_budget", time_budget)) if v is not None}
        self._players: dict[tuple[str, int], Any] = {}

    def reseed(self, seed: int | None) -> None:
        """Start again from ``seed`` (the environments' ``reset(seed=...)`` calls it): the players already
        made for a game are reseeded with it, as ``player_for`` would make them now."""
        from agents.player import check_seed

        self.seed = check_seed(seed)
        with _MAKING_PLAYERS:
            for key, player in list(self._players.items()):
                if hasattr(player, "reseed"):
                    player.reseed(self.seed)
                else:  # a plugin bot without reseed: made again from the seed, as player_for would now
                    self._players[key] = self._make(key)

    def describe(self, rules: Rules) -> str:
        """What the level plays as in ``rules``' game: the ladder entry's player, or the fallback bot
        followed by why (``search:time=0.2 (built-in: my_ladder.json has no star-3 entry)``): a
        built-in spec is unrated, which the player should know."""
        key = f"{rules.variant}-{rules.num_players}"
        entry = load_ladder(self.path)["games"].get(key)
        if entry is None:
            from agents.registry import FALLBACK_LEVELS

            why = self._no_entry(key)
            if self.level not in FALLBACK_LEVELS:
                return f"no player for this game ({why}, and the level has no built-in fallback)"
            return f"{FALLBACK_LEVELS[self.level]} (built-in: {why})"
        return printable(level_entry(self.level, rules.variant, rules.num_players, self.path)["player"])

    def _no_entry(self, key: str) -> str:
        """Why the ladder has no player for game ``key``: the file in use lacks the entry."""
        path = ladder_path(self.path)
        if path.resolve() == DEFAULT_LADDER:
            return f"the shipped ladder has no {key} entry"
        return f"{str(path)} has no {key} entry"

    def player_for(self, rules: Rules) -> Any:
        """The concrete player for ``rules``, made once per variant and seat count: threads of a server
        that share this player and meet a game first at the same time wait for one of them to make it
        (rather than each making its own, loading the same model again and dropping all but one)."""
        key = (rules.variant, rules.num_players)
        player = self._players.get(key)
        if player is None:
            with _MAKING_PLAYERS:
                player = self._players.get(key)
                if player is None:
                    player = self._players[key] = self._make(key)
        return player

    def _make(self, key: tuple[str, int]) -> Any:
        entry = load_ladder(self.path)["games"].get(f"{key[0]}-{key[1]}")
        if entry is None:
            from agents.registry import FALLBACK_LEVELS

            if self.level not in FALLBACK_LEVELS:
                raise LadderError(f"level {self.level!r}: the ladder has no entry for {key[0]} with "
                                  f"{key[1]} seats and the level has no fallback bot")
            # the bot itself (wrapped only for a time_budget): this player already picks it per game
            return entry_player(FALLBACK_LEVELS[self.level], seed=self.seed, name=self.level, **self.options)
        return level_player(self.level, key[0], key[1], self.seed, self.path, **self.options)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        """The move of the level's player for this game.  The first move of a game kind also makes that
        player (a model level's, in a fresh process, imports onnxruntime and loads the model: about 0.6 s):
        what that took comes off ``time_budget``, and a server that cannot spare it calls
        ``player_for(rules)`` before the clock starts (docs/export.md)."""
        import time

        from agents.player import check_is_game, check_time

        check_is_game(game)  # before game.rules picks the player
        check_time("time_budget", time_budget)
        start = time.perf_counter()
        player = self.player_for(game.rules)
        if time_budget is not None:  # the rest of it, and at least a token budget: the move is owed
            time_budget = max(time_budget - (time.perf_counter() - start), MIN_MOVE_BUDGET)
        return player.select_move(game, time_budget)

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"LevelPlayer({self.level!r}, seed={self.seed!r}{options})"


def ladder_player(name: str, seed: int | None = None, path: str | Path | None = None, *,
                  temperature: float | None = None, search: str | dict[str, Any] | int | None = None,
                  time_budget: float | None = None) -> SeededPlayer:
    """``ladder:LEVEL`` (resolved per game) or ``ladder:VARIANT-SEATS:LEVEL`` (that game's player, which
    plays no other); ``temperature``, ``search`` and ``time_budget`` go to the level's player (a bot
    takes only ``time_budget``, see ``entry_player``)."""
    options: dict[str, Any] = {"temperature": temperature, "search": search, "time_budget": time_budget}
    parts = name.split(":")
    if len(parts) == 2 and parts[0].lower() == "ladder" and parts[1]:
        return LevelPlayer(parts[1].strip(), seed=seed, path=path, **options)
    if len(parts) == 3 and parts[0].lower() == "ladder" and parts[2]:
        variant, _, seats = parts[1].strip().rpartition("-")
        if not (seats.isascii() and seats.isdigit()):  # not "٢": int() reads other scripts' digits
            raise LadderError(f"{name!r}: the game is written VARIANT-SEATS, e.g. ladder:star-2:hard")
        from agents.opponent import check_play_options

        check_play_options(temperature, search, time_budget)  # whatever the level turns out to be
        return level_player(parts[2].strip(), variant, int(seats), seed, path, **options)
    raise LadderError(f"{name!r}: expected ladder:LEVEL or ladder:VARIANT-SEATS:LEVEL (e.g. ladder:star-2:hard)")


def shipped_models(path: str | Path | None = None) -> list[Path]:
    """The ``.onnx`` files the ladder's levels use (resolved paths, each once)."""
    from agents.opponent import parse_opponent_spec

    base = ladder_path(path).resolve().parent
    out: list[Path] = []
    for key, entry in load_ladder(path)["games"].items():
        for lv in entry["levels"]:
            if ".onnx" in lv["player"].lower():
                p = level_model(base, parse_opponent_spec(lv["player"]).path, f"{key} level {lv['level']!r}")
                if p not in out:
                    out.append(p)
    return out


# --- building an entry -----------------------------------------------------------------------


def candidate_player(name: str, seed: int | None = None) -> Any:
    """Tournament factory: bot specs through the registry, ``.onnx`` (with options) through
    ``load_opponent``.  Module level, so spawned arena workers can unpickle it."""
    return entry_player(name, seed=seed)


def separation(lower: dict[str, float], upper: dict[str, float]) -> float:
    """How many combined sigmas ``upper``'s mu lies above ``lower``'s: (mu_u - mu_l) / sqrt(s_l^2 + s_u^2).

    Both are openskill ratings of the same tournament (dicts with ``mu`` and ``sigma``)."""
    combined = math.hypot(lower["sigma"], upper["sigma"])
    diff = upper["mu"] - lower["mu"]
    return diff / combined if combined > 0 else (math.inf if diff > 0 else -math.inf)


def separated(lower: dict[str, float], upper: dict[str, float], min_separation: float = SEPARATION) -> bool:
    """Is ``upper`` clearly stronger than ``lower``: its mu at least ``min_separation`` combined sigmas
    higher (``separation``), and its ordinal (mu - 3 sigma, what leaderboards sort by) higher too."""
    ordinal = lower["mu"] - 3 * lower["sigma"] < upper["mu"] - 3 * upper["sigma"]
    return ordinal and separation(lower, upper) >= min_separation


def pick_levels(ratings: list[dict[str, float]], count: int, min_separation: float = SEPARATION) -> list[int]:
    """Indices (into ``ratings``, dicts with ``mu`` and ``sigma``) of the candidates for up to ``count``
    levels, weakest first, every one ``separated`` from the one below.

    The most levels possible (at most ``count``; fewer when the tournament does not separate that
    many candidates); among those, the choice whose closest adjacent pair is separated best, then
    the widest span of mu, then the earliest candidates.  Never empty for a non-empty list."""
    k = len(ratings)
    if count < 1:
        raise ValueError("a ladder needs at least one level")
    if k < 1:
        raise ValueError("no candidates to pick levels from")
    if min_separation < 0:
        raise ValueError(f"min_separation must be >= 0, got {min_separation!r}")
    order = sorted(range(k), key=lambda i: (ratings[i]["mu"], i))
    for size in range(min(count, k), 0, -1):
        best: tuple | None = None
        for combo in itertools.combinations(order, size):
            pairs = list(zip(combo, combo[1:]))
            if not all(separated(ratings[a], ratings[b], min_separation) for a, b in pairs):
                continue
            closest = min((separation(ratings[a], ratings[b]) for a, b in pairs), default=math.inf)
            span = ratings[combo[-1]]["mu"] - ratings[combo[0]]["mu"]
            key = (closest, span)
            if best is None or key > best[0]:
                best = (key, list(combo))
        if best is not None:
            return best[1]
    raise AssertionError("unreachable: one candidate is always a ladder")


RUN_FOLDERS = ("checkpoints", "snapshots")  # a run directory's folders of .pt files (docs/training.md)


def _export_stem(checkpoint: str) -> str:
    """The level a ``.pt`` candidate is exported as (its model: ``VARIANT-SEATS-STEM.onnx``): the file's
    stem, after its run's name when the stem is one that every run writes (``last``, ``best``,
    ``update_NNNNNN``, ``snap_NNNNNN``) or starts with a digit: runs/NAME/checkpoints/last.pt ->
    NAME-last, a run's snapshots/snap_000100.pt -> NAME-snap_000100, kept/5m.pt -> kept-5m.  A file named
    by its author keeps its name wherever it lies (agents/checkpoints/star2.pt -> star2)."""
    src = Path(checkpoint).resolve()
    stem = src.stem
    written_by_a_run = stem in ("last", "best") or stem[:1].isdigit() or (
        stem.partition("_")[0] in ("update", "snap") and stem.partition("_")[2].isdigit())
    if written_by_a_run:
        run_dir = next((q.name for q in src.parents if q.name not in RUN_FOLDERS), "")
        return f"{run_dir}-{stem}"
    return stem


def _prepare_candidates(candidates: list[str], variant: str, seats: int, models_dir: Path, games: int) -> list[str]:
    """Export ``.pt`` candidates into ``models_dir`` and check every candidate can play the game, and plays
    in ``games`` games.

    Every candidate is checked before anything is exported: a bad one leaves no file behind."""
    from agents.export import check_level_name
    from agents.opponent import OnnxPolicy, parse_opponent_spec

    candidates = [c.strip() for c in candidates]
    exported_as: dict[str, str] = {}  # export stem -> its checkpoint
    for c in candidates:
        game = None
        if c.lower().endswith(".pt"):
            from agents.checkpoint import load_checkpoint  # (torch: only a checkpoint candidate needs it)

            data = load_checkpoint(c)
            game = (data["variant"], data["num_players"])
            stem = check_level_name(_export_stem(c), f"candidate {c!r}: the exported model's level")
            # and the model's whole name, now: export_checkpoint would refuse it after the others were exported
            check_level_name(f"{variant}-{seats}-{stem}", f"candidate {c!r}: the exported model's name")
            if stem in exported_as:  # two runs' files of one name must not become one model
                raise LadderError(f"candidates {exported_as[stem]!r} and {c!r} would both be exported as "
                                  f"{variant}-{seats}-{stem}.onnx: export one under another name first "
                                  "(halma export CHECKPOINT --name NAME)")
            exported_as[stem] = c
        elif ".onnx" in c.lower():
            policy = OnnxPolicy(parse_opponent_spec(c).path)
            game = (policy.variant, policy.num_players)
        if game is not None and game != (variant, seats):
            raise LadderError(f"candidate {c!r} plays {game[0]} with {game[1]} seats, not {variant} with {seats}")
        if not c.lower().endswith(".pt"):
            candidate_player(c, 0)  # a bad spec or file fails before any game (a .pt's once exported)
    _check_everyone_plays(candidates, seats, games)
    out = []
    for c in candidates:
        if c.lower().endswith(".pt"):
            from agents.export import export_checkpoint

            stem = _export_stem(c)
            path = export_checkpoint(c, stem, models_dir, name=f"{variant}-{seats}-{stem}")
            print(f"exported {c} -> {path}", file=sys.stderr)
            c = str(path)
            candidate_player(c, 0)
        out.append(c)
    if len(set(out)) != len(out):
        raise LadderError(f"candidates must be distinct, got {out}")
    return out


def _ladder_name(candidate: str, base: Path, copy: bool = True) -> str:
    """How the ladder file refers to a candidate: a model is copied next to the ladder (with its
    manifest) unless it is there already, and named relative to it (``copy=False``: the name it
    would get, nothing copied)."""
    from agents.opponent import manifest_path, parse_opponent_spec

    if ".onnx" not in candidate.lower():
        return candidate
    spec = parse_opponent_spec(candidate)
    src = Path(spec.path).resolve()
    if src.parent != base:
        if copy:  # read, then written through a new temporary file: a link planted at the name is not followed
            base.mkdir(parents=True, exist_ok=True)
            write_atomic(base / src.name, src.read_bytes())
            write_atomic(manifest_path(base / src.name), manifest_path(src).read_bytes())
        src = base / src.name
    rest = candidate[len(spec.path):]
    return os.path.relpath(src, base) + rest


def _check_everyone_plays(candidates: list[str], seats: int, games: int) -> None:
    """A candidate without a game has no score (NaN, which no ladder file can hold): refused before the
    tournament, not after it."""
    from agents.arena import cycle_length, schedule

    needed = games_seating_everyone(len(candidates), seats)
    if games < needed:
        left_out = sorted({*range(len(candidates))} - {p for lineup in schedule(len(candidates), seats, games)
                                                         for p in lineup.seats})
        raise LadderError(f"--games {games} leaves {printable(candidates[left_out[0]])} without a game: the schedule "
                          f"seats every one of {len(candidates)} candidates in its first {needed} games; play at "
                          f"least that many (a multiple of {cycle_length(len(candidates), seats)} balances seats "
                          "and starts)")


def games_seating_everyone(players: int, seats: int) -> int:
    """The fewest games of the arena's schedule in which every one of ``players`` plays."""
    from agents.arena import iter_schedule

    seen: set[int] = set()
    for g, lineup in enumerate(iter_schedule(players, seats)):  # a cycle seats everyone: this ends
        seen.update(lineup.seats)
        if len(seen) == players:
            return g + 1
    raise AssertionError("unreachable: the schedule has no end")


def build_entry(candidates: list[str], variant: str, seats: int, games: int, *, seed: int = 0,
                workers: int | None = 1, levels: tuple[str, ...] = LEVELS, path: str | Path | None = None,
                models_dir: str | Path | None = None, time_budget: float | None = None,
                progress: bool = False, command: str | None = None,
                min_separation: float = SEPARATION, write_models: bool = True) -> dict[str, Any]:
    """Play the tournament among ``candidates`` and return the ladder entry (not saved).

    With ``write_models`` the chosen models are copied next to the ladder file and their manifests
    stamped with level and rating; without it (``--dry-run``) nothing outside a temporary
    directory is written: ``.pt`` candidates are exported there, the entry names models as they
    would be named.

    The levels go to candidates that are ``separated`` (``pick_levels``), weakest first.  When the
    tournament separates fewer candidates than ``levels`` names, the entry has only the lowest
    names (easy, medium, ...) and lists the rest under ``missing``: asking for a missing level
    then fails with a LadderError that says so (rebuild with stronger candidates or more games)."""
    from agents.arena import CAP_PER_SEAT, run_tournament

    key = game_key(variant, seats)
    if seats < 2:  # one seat has no opponent: every candidate would rate the same
        raise LadderError(f"a ladder ranks players in matches of 2+ seats, not {seats}; the 1-seat star is the "
                          "solitaire: measure it with halma eval --solo AGENT")
    base = ladder_path(path).resolve().parent
    if len(candidates) < len(levels):
        raise LadderError(f"{len(levels)} levels need at least {len(levels)} candidates, got {len(candidates)} "
                          f"(or name fewer with --levels, e.g. --levels {','.join(levels[:len(candidates)])})")
    # --dry-run: .pt candidates are exported to a scratch directory that goes away with the entry
    scratch = contextlib.nullcontext(None) if write_models else tempfile.TemporaryDirectory()
    with scratch as scratch_dir:
        models = Path(scratch_dir or (models_dir if models_dir is not None else base))
        specs = _prepare_candidates(candidates, variant, seats, models, games)
        rules = Rules(variant, seats)
        max_plies = CAP_PER_SEAT * seats
        result = run_tournament(specs, rules, games, seed=seed, workers=workers, time_budget=time_budget,
                                max_plies=max_plies, cap_outcome="progress", progress=progress,
                                factory=candidate_player)
    ratings = result.ratings()
    stats = result.player_stats()
    rows = []
    for i, spec in enumerate(specs):
        st = stats[i]
        rows.append({"player": spec, "rating": round(ratings[i].ordinal, 3), "mu": round(ratings[i].mu, 3),
                     "sigma": round(ratings[i].sigma, 3), "score": round(st["score"], 3),
                     "mean_place": round(st["mean_place"], 3), "ms_per_move": round(st["ms_per_move"], 2)})
    # pick on the unrounded ratings; the file keeps 3 decimals
    exact = [{"mu": r.mu, "sigma": r.sigma} for r in ratings]
    chosen = pick_levels(exact, len(levels), min_separation)
    level_rows = []
    for j, (level, i) in enumerate(zip(levels, chosen)):
        name = _ladder_name(rows[i]["player"], base, copy=write_models)
        rows[i]["level"] = level
        row = {"level": level, **{k: v for k, v in rows[i].items() if k != "level"}, "player": name}
        if j:
            row["separation"] = round(separation(exact[chosen[j - 1]], exact[i]), 2)
        level_rows.append(row)
        if write_models and ".onnx" in name.lower():
            _stamp_manifest(base, name, level, rows[i]["rating"], key)
    summary = result.summary()
    entry = {
        "variant": variant,
        "seats": seats,
        "levels": level_rows,
        "missing": list(levels[len(chosen):]),
        "candidates": sorted(rows, key=lambda r: r["rating"]),
        "tournament": {"games": games, "seed": seed, "rules": rules.to_dict(), "max_plies": max_plies,
                       "cap_outcome": "progress", "time_per_move": time_budget,
                       "finish_rate": round(summary["finish_rate"], 3), "mean_plies": round(summary["mean_plies"], 1),
                       "elapsed_s": round(summary["elapsed_s"], 1), "rating": "openskill Plackett-Luce ordinal "
                       "(mu - 3 sigma), as halma eval prints it",
                       "separation": f"adjacent levels: mu at least {min_separation:g} x sqrt(sigma_lower^2 + "
                       "sigma_upper^2) apart, ordinals increasing"},
        "command": command or "",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    if not entry["missing"]:
        del entry["missing"]
    return entry


def _stamp_manifest(base: Path, name: str, level: str, rating: float, key: str) -> None:
    """Record the ladder's level and rating in an exported model's manifest."""
    from agents.opponent import parse_opponent_spec, read_manifest, write_manifest

    p = base / parse_opponent_spec(name).path
    m = read_manifest(p)
    m.update(level=level, rating=rating, rating_source=f"halma ladder ({key}, {dt.date.today().isoformat()})")
    write_manifest(p, m)  # (through write_atomic: never through a link planted in the ladder's folder)


# --- the command -----------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("candidates", nargs="*", metavar="CANDIDATE",
                   help="bot specs (greedy:noise=0.25, search:depth=2,time=none), checkpoints (.pt, exported "
                        "first) and exported models (.onnx, options after ':'); none: print the ladder")
    # None = not given: printing the ladder (no candidates) refuses the tournament's flags instead of ignoring them
    p.add_argument("--variant", default=None, choices=VARIANTS,
                   help="the game of the tournament (default star); without candidates, print only its entries")
    p.add_argument("--seats", type=int, default=None,
                   help="seats of the tournament (default 2); without candidates, print only that seat count")
    p.add_argument("--games", type=int, default=None,
                   help="tournament games (default: two full seat/start cycles of the arena schedule)")
    p.add_argument("--levels", default=None,
                   help=f"level names, weakest first (default {','.join(LEVELS)})")
    p.add_argument("--seed", type=int, default=None, help="tournament seed (default 0)")
    p.add_argument("--workers", type=int, default=None, help="parallel game processes (default 1)")
    p.add_argument("--time-per-move", type=float, default=None, metavar="SECONDS",
                   help="per-move budget given to the players (default: their own settings)")
    p.add_argument("--ladder", default=None, metavar="FILE",
                   help=f"ladder file (default $HALMA_LADDER or the shipped {DEFAULT_LADDER.name})")
    p.add_argument("--models-dir", default=None, metavar="DIR",
                   help="where .pt candidates are exported (default: next to the ladder file)")
    p.add_argument("--separation", type=float, default=None, metavar="Z",
                   help=f"adjacent levels' mu must differ by Z combined sigmas (default {SEPARATION:g}); levels "
                        "that no candidate fills clearly are left out and reported")
    p.add_argument("--dry-run", action="store_true",
                   help="print the new entry; write nothing (neither the ladder nor models next to it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of tables: the new entry (as the ladder file stores it) after a "
                        "tournament, or the ladder file's document (its entries of --variant/--seats) without one")


def check_writable(path: Path) -> None:
    """Raise ``LadderError`` unless the ladder file ``path`` can be written (before the tournament).

    The shipped ladder is rebuilt only in the source tree: in an installed package a rebuild would
    change what every user of that environment plays, a reinstall would undo it, and ``pip uninstall``
    would leave the models it wrote behind."""
    from agents.files import from_source_checkout, output_problem

    if path.resolve() == DEFAULT_LADDER and not from_source_checkout():
        raise LadderError(f"the shipped ladder {str(path)!r} is part of the installed package; write a ladder of "
                          "your own with --ladder FILE (its models go next to it) and play it with "
                          "HALMA_LADDER=FILE (halma play, halma eval and the environments read it)")
    problem = output_problem(path, "the ladder file")
    if problem is not None:
        raise LadderError(problem)


def format_ladder(data: dict[str, Any]) -> str:
    """The ladder as a markdown table (what ``halma ladder`` prints without candidates)."""
    lines = ["| game | " + " | ".join(LEVELS) + " | built |", "|---" * (len(LEVELS) + 2) + "|"]
    for key, entry in data["games"].items():
        by = {lv["level"]: lv for lv in entry["levels"]}
        cells = []
        for level in LEVELS:
            lv = by.get(level)
            rating = float("nan") if lv is None or lv.get("rating") is None else lv["rating"]
            # the file's strings escaped: a player may not send escape sequences to the terminal
            cells.append("-" if lv is None else f"{printable(lv['player'])} ({rating:.1f})")
        t = entry.get("tournament")
        t = t if isinstance(t, dict) else {}
        built = f"{printable(t.get('games', '?'))} games, {printable(str(entry.get('date', '?'))[:10])}"
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {built} |")
    return "\n".join(lines)


TOURNAMENT_FLAGS = ("games", "levels", "seed", "workers", "time_per_move", "models_dir", "separation", "dry_run")
TOURNAMENT_DEFAULTS = {"variant": "star", "seats": 2, "levels": ",".join(LEVELS), "seed": 0, "workers": 1,
                       "separation": SEPARATION}


def print_ladder(args: argparse.Namespace, path: Path, data: dict[str, Any]) -> None:
    """``halma ladder`` without candidates: the ladder, or the entries of ``--variant``/``--seats``."""
    from agents.cli import flags_given

    given = flags_given(args, TOURNAMENT_FLAGS)
    if given:
        several = len(given) > 1
        raise LadderError(f"{', '.join(given)} only appl{'y' if several else 'ies'} to a tournament: name the "
                          f"CANDIDATEs to rate, or drop {'them' if several else 'it'} to print the ladder")
    games = data["games"]
    if args.variant is not None or args.seats is not None:
        if args.variant is not None and args.seats is not None:
            game_key(args.variant, args.seats)
        elif args.seats is not None and not any(args.seats in counts for counts in SEAT_COUNTS.values()):
            counts = "; ".join(f"{v} {', '.join(map(str, c))}" for v, c in SEAT_COUNTS.items())
            raise LadderError(f"--seats {args.seats}: no game is played by {args.seats} seats ({counts})")
        games = {key: entry for key, entry in games.items()
                 if (args.variant is None or key.rsplit("-", 1)[0] == args.variant)
                 and (args.seats is None or key.rsplit("-", 1)[1] == str(args.seats))}
        if not games:
            wanted = (f"{args.seats}-seat" if args.variant is None else
                      args.variant if args.seats is None else f"{args.variant}-{args.seats}")
            have = ", ".join(data["games"]) or "none"
            raise LadderError(f"ladder {str(path)!r} has no {wanted} entry; it has {have}")
    if args.json:
        print(json.dumps({**data, "games": games}, indent=2))
        return
    print(f"ladder {path}: ratings are openskill ordinals within each game\n")
    print(format_ladder({**data, "games": games}))


def run(args: argparse.Namespace) -> int:
    from agents.arena import cycle_length

    try:
        path = ladder_path(args.ladder)
        data = load_ladder(args.ladder, missing_ok=bool(args.candidates))  # a rebuild may start a new file
        if not args.candidates:
            print_ladder(args, path, data)
            return 0
        for name, default in TOURNAMENT_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, default)
        from agents.export import check_level_name
        from agents.player import check_time

        game_key(args.variant, args.seats)
        levels = tuple(x.strip() for x in args.levels.split(","))
        for level in levels:
            check_level_name(level, f"--levels {args.levels!r}: a level")  # it names files and opponents
        if len(set(levels)) != len(levels):
            raise LadderError(f"--levels must name distinct levels, got {args.levels!r}")
        if args.time_per_move is not None:
            check_time("--time-per-move", args.time_per_move)
        games = args.games if args.games is not None else 2 * cycle_length(len(args.candidates), args.seats)
        if games < 1:
            raise LadderError(f"--games must be >= 1, got {games}")
        if args.workers < 1:
            raise LadderError(f"--workers must be >= 1, got {args.workers}")
        if not (math.isfinite(args.separation) and args.separation >= 0):  # inf: no level could ever be placed
            raise LadderError(f"--separation must be a finite number >= 0, got {args.separation}")
        if not args.dry_run:
            check_writable(path)  # before the tournament, not after it
        command = "halma ladder " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["ladder"] \
            else f"halma ladder --variant {args.variant} --seats {args.seats} --games {games} --seed {args.seed} " \
                 + " ".join(shlex.quote(c) for c in args.candidates)
        entry = build_entry(args.candidates, args.variant, args.seats, games, seed=args.seed, workers=args.workers,
                            levels=levels, path=args.ladder, models_dir=args.models_dir,
                            time_budget=args.time_per_move, progress=not args.quiet, command=command,
                            min_separation=args.separation, write_models=not args.dry_run)
    except ValueError as e:  # LadderError, OpponentError, CheckpointError
        print(f"halma ladder: error: {e}", file=sys.stderr)
        return 2
    key = game_key(args.variant, args.seats)
    if args.json:
        print(json.dumps(entry, indent=2))
    else:
        print(format_tournament(key, entry, games, args.seed))
    if entry.get("missing"):
        print(f"\nonly {len(entry['levels'])} of {len(levels)} levels are clearly separated (mu {args.separation:g} "
              f"combined sigmas apart); missing: {', '.join(entry['missing'])}.  Add a stronger or weaker "
              "candidate, or play more games.", file=sys.stderr)
    if args.dry_run:
        if not args.json:  # --json printed it already
            print("\n" + json.dumps(entry, indent=2))
        return 0
    data = load_ladder(args.ladder, missing_ok=True)  # again: another rebuild may have written meanwhile
    data = {**data, "games": {**data["games"], key: entry}}
    try:
        save_ladder(data, args.ladder)
    except OSError as e:
        print(f"halma ladder: error: cannot write the ladder file {str(path)!r}: {e.strerror or e}", file=sys.stderr)
        return 2
    except ValueError as e:  # a LadderError from the check, or a number JSON cannot hold: nothing was written
        print(f"halma ladder: error: cannot write the ladder file {str(path)!r}: {e}", file=sys.stderr)
        return 2
    print(f"\nwrote the {key} entry to {ladder_path(args.ladder)}", file=sys.stderr if args.json else sys.stdout)
    return 0


def format_tournament(key: str, entry: dict[str, Any], games: int, seed: int) -> str:
    """A new ladder entry's tournament as a markdown table, strongest candidate first."""
    lines = [f"### {key}: {games} games, seed {seed}\n",
             "| candidate | rating | mu ± sigma | score | mean place | ms/move | level | separation |",
             "|---|---|---|---|---|---|---|---|"]
    sep = {lv["level"]: lv.get("separation") for lv in entry["levels"]}
    for r in reversed(entry["candidates"]):
        z = sep.get(r.get("level"))
        lines.append(f"| {r['player']} | {r['rating']:.2f} | {r['mu']:.2f} ± {r['sigma']:.2f} | {r['score']:.2f} | "
                     f"{r['mean_place']:.2f} | {r['ms_per_move']:.1f} | {r.get('level') or ''} | "
                     f"{'' if z is None else f'{z:.2f}'} |")
    return "\n".join(lines)
