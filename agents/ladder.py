"""The difficulty ladder: level names (``easy`` .. ``expert``) -> opponents, per variant and seat
count, ordered by rating: reading and checking the ladder file, and the players of its levels.
``halma ladder`` rebuilds one game's entry by tournament (agents/ladder_build.py, which imports
this module; this one never imports the builder).

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
A model's row records the file the tournament rated (``MODEL_RECORD``: its sha256 and its checkpoint's), and
a model level whose file has changed since is refused when it is made (``check_rated_model``).

``level_player(level, variant, seats)`` makes a level's player for that game only (what
``ladder:star-2:hard`` gives: a model refuses another game, and so does a bot level, a ``LevelBot``);
``LevelPlayer`` (what ``make_player("hard")`` and ``ladder:hard`` give) looks the level up when it
sees the game, so one name works for every variant and seat count.  Both take ``temperature``,
``search`` and ``time_budget`` for the level's player: a model uses all three, a bot only
``time_budget`` (its budget for a move asked for without one) and refuses the others by name.
Nothing here imports torch.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from agents.files import is_empty_path, quoted_path
from agents.player import Player, check_is_rules
from halma_env import Game, Move, Rules
from halma_env.files import (
    FINITE_NUMBERS,
    DuplicateKey,
    FileTooLarge,
    NotARegularFile,
    NotFinite,
    file_kind,
    folder_ending,
    no_duplicate_keys,
    read_regular_file,
    write_atomic,
)
from halma_env.rules import VARIANTS, game_name, game_problem
from halma_env.suggest import shown_value

LADDER_FORMAT = "halma_env.ladder"
LADDER_VERSION = 1
LADDER_DIR = Path(__file__).resolve().parent / "ladder"
DEFAULT_LADDER = LADDER_DIR / "ladder.json"
LEVELS = ("easy", "medium", "hard", "expert")
ENTRY_FIELDS = ("variant", "seats", "levels")
PLAYER_OPTIONS = ("temperature", "search", "time_budget")
LEVEL_STATS = ("rating", "mu", "sigma", "score", "mean_place", "ms_per_move", "separation")  # build_entry's figures
# what a model's row (a level or candidate that is an exported model) records of the file the tournament rated:
# its sha256, and the source.checkpoint_sha256 of its manifest when it has one (optional: ladders written before
# 2026-12-07 have neither; docs/export.md)
MODEL_RECORD = ("model_sha256", "checkpoint_sha256")
LEVEL_KEYS = ("level", "player", *LEVEL_STATS, *PLAYER_OPTIONS, *MODEL_RECORD)  # all a level may hold (docs/export.md)
MAX_LADDER_BYTES = 16 * 1024 * 1024  # a ladder file is a few kB; anything this large is not one
# a bot level of a ladder file thinks at most this long on a move asked for without a budget (the
# environments ask so): the file is untrusted, and search:depth=40,time=none would never answer; the
# same bound as a run of an exported model (agents.opponent.RUN_TIME_LIMIT)
LEVEL_MOVE_LIMIT = 10.0


class LadderError(ValueError):
    """A ladder file or level that cannot be used."""


def ladder_path(path: str | Path | None = None) -> Path:
    """The ladder file: ``path``, else ``$HALMA_LADDER``, else the shipped one."""
    if path is None:
        path = os.environ.get("HALMA_LADDER") or DEFAULT_LADDER
    elif is_empty_path(path):
        raise LadderError("a ladder file path is empty")
    ending = folder_ending(path)
    if ending:  # (Path drops the '/': a rebuild given "out/" wrote the file out)
        raise LadderError(f"the ladder file {str(path)!r} ends in {ending!r}, so it names a directory, not a file")
    return Path(path)


def game_key(variant: str, seats: int) -> str:
    """``("star", 2)`` -> ``"star-2"`` (checked)."""
    problem = game_problem(variant, seats)
    if problem:
        raise LadderError(problem)
    return f"{variant}-{seats}"


def _check(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != LADDER_FORMAT:
        raise LadderError(f"{str(path)!r} is not a ladder file (no format {LADDER_FORMAT!r})")
    if data.get("format_version") != LADDER_VERSION:
        raise LadderError(f"ladder {str(path)!r} has format version {shown_value(data.get('format_version'))}; "
                          f"this code reads {LADDER_VERSION}")
    games = data.get("games")
    if not isinstance(games, dict):
        raise LadderError(f"ladder {str(path)!r} has no 'games' object")
    for key, entry in games.items():
        where = f"ladder {str(path)!r}: entry {shown_value(key)}"  # (a key of any length: cut short)
        if not isinstance(entry, dict) or any(f not in entry for f in ENTRY_FIELDS):
            raise LadderError(f"{where} lacks {', '.join(ENTRY_FIELDS)}")
        _check_game(entry, where, key)
        if not isinstance(entry["levels"], list):
            raise LadderError(f"{where} has 'levels' {shown_value(entry['levels'])}, not a list")
        names = [lv.get("level") if isinstance(lv, dict) else None for lv in entry["levels"]]
        if not names or None in names or any(not isinstance(lv.get("player"), str) for lv in entry["levels"]):
            raise LadderError(f"{where} has a level without 'level' and 'player'")
        if any(not isinstance(name, str) for name in names):
            raise LadderError(f"{where} has a level name that is not a string")
        if len(set(names)) != len(names):
            raise LadderError(f"{where} repeats a level name")
        missing = entry.get("missing", [])  # level_entry looks a level up in it
        if not isinstance(missing, list) or any(not isinstance(name, str) for name in missing):
            raise LadderError(f"{where} has 'missing' {shown_value(missing)}, not a list "
                              "of level names")
        for lv in entry["levels"]:
            _check_level(lv, f"{where}, level {printable(lv['level'])!r}")
            if lv["player"].strip().lower().endswith(".pt"):  # make_player would load it from anywhere
                raise LadderError(f"{where}, level {printable(lv['level'])!r}: the "
                                  f"player {printable(lv['player'])!r} is a checkpoint; a level's player is a bot spec "
                                  "or an exported .onnx model inside the ladder's folder (halma ladder exports a "
                                  ".pt candidate)")
            model = _model_file(lv["player"])
            if model is not None and _outside(model):
                raise LadderError(f"{where}, level {lv['level']!r}: the model "
                                  f"{model!r} is outside the ladder's folder; a level's model is a path relative "
                                  "to the ladder file, inside its folder")
        _check_order(entry["levels"], where)
        _check_record(entry, where)
    return data


def _check_order(levels: list[dict[str, Any]], what: str) -> None:
    """``levels`` is ordered weakest first (docs/export.md): a level's rating, when it and a level below have
    one, is not lower than the one below's (``halma ladder`` writes strictly increasing ordinals, rounded to
    3 decimals, so two may be equal).  A reversed list or a swapped pair is refused, naming both levels; the
    level names are the author's (``--levels`` may give any), so they are not compared."""
    below: dict[str, Any] | None = None
    for lv in levels:
        if lv.get("rating") is None:  # an unrated hand-written level: nothing to compare
            continue
        if below is not None and lv["rating"] < below["rating"]:
            raise LadderError(f"{what}: level {printable(lv['level'])!r} (rating {lv['rating']}) comes after "
                              f"{printable(below['level'])!r} (rating {below['rating']}) but is rated lower; "
                              "levels are listed weakest first, each rated at least as high as the one before")
        below = lv


def _check_game(entry: dict[str, Any], what: str, key: str) -> None:
    """An entry's ``variant`` and ``seats``: a game's, and the one its key names; ``what`` names the file and
    entry (game_key's own message names neither, and shows a value of any length)."""
    variant, seats = entry["variant"], entry["seats"]
    problem = game_problem(variant, seats, shown_value)
    if problem:
        raise LadderError(f"{what}: {problem}")
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
        _check_model_record(row, where)
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
    _check_model_record(lv, what)


def _check_model_record(row: dict[str, Any], what: str) -> None:
    """A level's or candidate's ``model_sha256`` and ``checkpoint_sha256`` (``MODEL_RECORD``), when present: 64
    lowercase hex digits each, on a row whose player is an exported model, the checkpoint's only beside the
    model's (it widens what the model check accepts, ``check_rated_model``)."""
    from agents.opponent import is_sha256

    for key in MODEL_RECORD:
        value = row.get(key)
        if key in row and not is_sha256(value):
            raise LadderError(f"{what}: {key} {shown_value(value)} is not a sha256 (64 lowercase hex digits)")
    if any(key in row for key in MODEL_RECORD):
        if _model_file(row["player"]) is None:
            raise LadderError(f"{what}: {', '.join(k for k in MODEL_RECORD if k in row)} records an exported "
                              f"model, but the player {printable(row['player'])!r} is a bot spec")
        if "model_sha256" not in row:
            raise LadderError(f"{what}: checkpoint_sha256 is recorded without model_sha256 (the model file's "
                              "sha256, which the ladder checks first)")


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
        data = json.loads(_read_ladder(path), **FINITE_NUMBERS,
                          object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as e:  # the last one would win without a word: a level's player, a game's entry
        raise LadderError(f"ladder file {path!r}: {e}; a ladder file gives each key once") from None
    except NotFinite as e:
        raise LadderError(f"ladder file {path!r} holds the number {e.text}: its numbers must be finite") from None
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
    from_env = path is None and bool(os.environ.get("HALMA_LADDER"))
    source = " (from $HALMA_LADDER)" if from_env else ""
    try:
        exists = p.exists()
    except OSError as exc:  # a name too long for the file system (Path.exists raises it on Python 3.11)
        raise LadderError(f"ladder file {quoted_path(p)}{source} cannot be looked up: "
                          f"{exc.strerror or exc}") from None
    if not exists:
        if missing_ok:
            return {"format": LADDER_FORMAT, "format_version": LADDER_VERSION, "games": {}}
        raise LadderError(f"ladder file {str(p)!r}{source} does not exist")
    st = p.stat()
    kind = file_kind(st.st_mode)  # a directory, /dev/zero, a FIFO: refused before anything is read
    if kind:
        raise LadderError(f"ladder file {str(p)!r}{source} cannot be read (it is {kind}, not a regular file)")
    try:
        return _load(str(p.resolve()), st.st_mtime)
    except LadderError as e:  # (it names the file by its absolute path: say where that came from)
        if from_env:
            raise LadderError(f"{e} (the ladder file from $HALMA_LADDER={os.environ['HALMA_LADDER']!r})") from None
        raise


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
        build = (f"build one with: halma ladder --variant {variant} --seats {seats} CANDIDATE..." if seats >= 2 else
                 "the ladder rates players in matches of 2 or more seats, so the solitaire has no levels")
        raise LadderError(f"the ladder {str(ladder_path(path))!r} has no entry for {key}; {build}")
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
        what += f" for {game_name(*game)}"
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
            raise LadderError(f"{what} is the model {player!r}, exported for {game_name(*plays)}")
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
    try:
        bot = make_player(player, seed=seed)
    except ValueError as e:
        if base is None:  # a candidate of the command line: the registry's message names it
            raise
        # a ladder file's level whose spec names no bot, or a bad setting: say whose it is
        raise LadderError(f"{what} is the bot spec {shown_value(player)}, which does not make a player: {e}") from None
    if name:
        bot.name = name
    if game is None and budget is None:
        return bot
    return LevelBot(bot, player, game, budget)


def level_player(level: str, variant: str, seats: int, seed: int | None = None,
                 path: str | Path | None = None, *, temperature: float | None = None,
                 search: str | dict[str, Any] | int | None = None,
                 time_budget: float | None = None) -> Player:
    """The Player of ``level`` for ``variant`` with ``seats`` seats, from the ladder; it plays that game
    only (a ``LadderError`` naming both games for another).  ``temperature``, ``search`` and
    ``time_budget`` override the level's own (see ``entry_player``)."""
    lv = level_entry(level, variant, seats, path)
    options = {k: lv[k] for k in PLAYER_OPTIONS if k in lv}
    options.update((k, v) for k, v in (("temperature", temperature), ("search", search),
                                       ("time_budget", time_budget)) if v is not None)
    player = entry_player(lv["player"], seed=seed, base=ladder_path(path).resolve().parent, name=level,
                          game=(variant, seats), **options)
    policy = getattr(player, "policy", None)  # a model level's OnnxPolicy (a bot has none)
    if policy is not None:
        check_rated_model(lv, policy.manifest, policy.path, f"{variant}-{seats}", path)
    # what the level resolved to, as LevelPlayer.describe says it (halma play announces ladder:star-2:hard so)
    player.describe = ResolvedLevel(lv["player"])
    return player


def check_rated_model(lv: dict[str, Any], manifest: dict[str, Any], model: Path, key: str,
                      path: str | Path | None = None) -> None:
    """Refuse a model level whose file is no longer the model the ladder rated: ``lv`` is the level's row of the
    ``key`` entry of the ladder ``path``, ``manifest`` the checked manifest of the model file ``model`` as loaded
    (its ``onnx_sha256`` is that of the bytes loaded: ``OnnxPolicy`` checked them, so nothing is hashed again).
    It matches when its sha256 is the row's ``model_sha256``, or when both record the checkpoint it was exported
    from (``checkpoint_sha256``: an export of the rated checkpoint again, whose bytes another torch may write
    differently, plays the same model).  A row without ``model_sha256`` (a ladder written before it was
    recorded, or by hand) is not checked.  Otherwise a ``halma export --force`` of another checkpoint over the
    level's file would play under the rating of the model it replaced, without a word (until 2026-12-07)."""
    rated = lv.get("model_sha256")
    if rated is None or manifest.get("onnx_sha256") == rated:
        return
    source = manifest.get("source")
    checkpoint = lv.get("checkpoint_sha256")
    if checkpoint is not None and isinstance(source, dict) and source.get("checkpoint_sha256") == checkpoint:
        return
    file = ladder_path(path)
    variant, _, seats = key.rpartition("-")
    rebuild = "halma ladder"
    if file.resolve() != DEFAULT_LADDER:
        rebuild += f" --ladder {printable(shlex.quote(str(file)))}"
    again = ("" if checkpoint is None else
             f", or export the checkpoint it was rated from (sha256 {checkpoint[:12]}...) to that file again "
             "(halma export CHECKPOINT --force)")
    raise LadderError(f"level {printable(lv['level'])!r} of the {key} ladder {str(file)!r} is the model "
                      f"{str(model)!r}, which is not the model the ladder rated (sha256 "
                      f"{str(manifest.get('onnx_sha256'))[:12]}..., rated {rated[:12]}...: replaced since, by halma "
                      f"export --force?): rate it again ({rebuild} --variant {variant} --seats {seats} CANDIDATE..., "
                      f"as the entry's command did){again}")


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
            raise LadderError(f"level {self.name!r} ({self.spec}) was resolved for {game_name(*self.game)}; it cannot "
                              f"play {game_name(r.variant, r.num_players)} (the "
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
        check_is_rules(rules, "describe")
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
        """The concrete player for ``rules`` (a ``halma_env.Rules``: anything else is a TypeError), made once
        per variant and seat count: threads of a server that share this player and meet a game first at the
        same time wait for one of them to make it (rather than each making its own, loading the same model
        again and dropping all but one)."""
        check_is_rules(rules)
        return self._player_for(rules)

    def _player_for(self, rules: Rules) -> Any:
        """``player_for`` of rules known to be a ``Rules`` (``select_move``'s game's)."""
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
        player = self._player_for(game.rules)
        if time_budget is not None:  # the rest of it, and at least a token budget: the move is owed
            time_budget = max(time_budget - (time.perf_counter() - start), MIN_MOVE_BUDGET)
        return player.select_move(game, time_budget)

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"LevelPlayer({self.level!r}, seed={self.seed!r}{options})"


def ladder_player(name: str, seed: int | None = None, path: str | Path | None = None, *,
                  temperature: float | None = None, search: str | dict[str, Any] | int | None = None,
                  time_budget: float | None = None) -> Player:
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
