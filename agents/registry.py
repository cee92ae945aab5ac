"""Players by name: ``make_player("hard", seed=1)``, ``make_player("search:depth=2")``, a checkpoint
path or an exported opponent.

Accepted names (``make_player`` raises ``ValueError`` listing them for anything else):

- a bot: ``random``, ``greedy``, ``search``, ``mcts``, ``crossing``, optionally with parameters after a colon,
  comma separated: ``search:depth=3``, ``search:time=0.5,width=10``, ``mcts:time=0.5``,
  ``greedy:noise=0.2``.  ``bot_parameters(bot)`` lists each bot's parameters and defaults;
- a level: ``easy``, ``medium``, ``hard``, ``expert``, resolved through the rated ladder
  (``agents.ladder.LevelPlayer``) for the game being played; ``FALLBACK_LEVELS`` is each level's bot spec
  where the ladder has no entry;
- a path ending in ``.pt`` (a training checkpoint): ``agents.policy.load_policy_player(path, seed)``;
- a path ending in ``.onnx`` (optionally with options, ``model.onnx:temperature=0.5``) or a
  ladder name ``ladder:LEVEL`` (exported opponents, the rated ladder):
  ``agents.opponent.load_opponent(name, seed)``.

Bots of other installed packages (plugins) join the built-in ``BOTS`` (``all_bots()``) through the entry point group
``halma_env.bots`` (``PLUGIN_GROUP``): each entry maps a bot name to a class, ``mybot =
"mybot_pkg.bot:MyBot"``.  The group is read once per process, on the first lookup of a bot by name
(so worker processes, which look their players up themselves, see the plugins too).  A plugin whose
name is a built-in bot's or a level's, is ``ladder``, is not a plain name (letters, digits, ``_`` and
``-``) or is given by two packages is ignored with a warning naming both, once per command: the worker
processes of ``halma eval`` and ``halma train`` are handed the warnings their parent showed
(``plugin_warnings``) and do not repeat them.  Every bot class is
checked when looked up: a constructor without ``name=`` and ``seed=`` keyword arguments, or with a
parameter without default, is a ``ValueError`` naming the class (docs/bots.md, "Adding a bot").

This module is the ``halma_env.players`` entry point (``agents``), through which the environments
resolve opponents by name without importing ``agents``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import entry_points
from typing import Any

from agents.files import CommandWarning, missing_extra, shipped_file_hint
from agents.player import Player, SeededPlayer, check_seed, split_options
from halma_env import Rules
from halma_env.game import probe_player
from halma_env.rules import ASCII_INTEGER
from halma_env.suggest import did_you_mean, shown_value

Factory = Callable[[str, "int | None"], Player]  # (spec, seed) -> a player, as make_player

_PLUGIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # a plugin bot's name

# the entry point group through which other installed packages add bots: name = "module:Class"
PLUGIN_GROUP = "halma_env.bots"

# bot name -> "module:class"; imported only when asked for
BOTS: dict[str, str] = {
    "random": "agents.bots.random_bot:RandomBot",
    "greedy": "agents.bots.greedy:GreedyBot",
    "search": "agents.bots.search:SearchBot",
    "mcts": "agents.bots.mcts:MCTSBot",
    "crossing": "agents.bots.crossing:CrossingBot",
}

# level -> bot spec: the fallback for games the ladder (agents/ladder/ladder.json) has no entry
# for; make_player resolves levels through the ladder; levels answer well under a second per move
FALLBACK_LEVELS: dict[str, str] = {
    "easy": "greedy:noise=0.25,temperature=1.0",
    "medium": "greedy",
    "hard": "search:time=0.2",
    "expert": "search:time=0.6,width=6",
}


def _import(module_name: str, what: str):
    """Import a module on demand; a missing module is a ValueError naming what needed it."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name == module_name:
            raise ValueError(f"{what} is not available in this installation ({module_name} is missing)") from None
        hint = missing_extra(e)
        if hint:
            raise ValueError(f"{what}: {hint}") from None
        raise


def _plugin_entry_points() -> list[Any]:
    """The installed entry points of ``PLUGIN_GROUP`` (the tests replace this)."""
    return list(entry_points(group=PLUGIN_GROUP))


class PluginWarning(CommandWarning):
    """A plugin bot left out (``plugin_bots``)."""


# the warnings of this process's plugin scan, and those its parent process showed already (plugin_warnings)
_warned: list[str] = []
_shown_by_parent: set[str] = set()


def plugin_warnings() -> tuple[str, ...]:
    """The warnings of this process's plugin scan (none before its first lookup of a bot by name), for the
    processes it starts: each scans again, and ``skip_plugin_warnings`` keeps it from repeating them."""
    return tuple(_warned)


def skip_plugin_warnings(messages: Iterable[str]) -> None:
    """Show none of these plugin warnings in this process: the process that started it showed them
    (``plugin_warnings``).  Each worker of ``halma eval --workers 2`` repeated them: three times in all."""
    _shown_by_parent.update(messages)


@functools.cache  # once per process: scanning the installed distributions takes milliseconds
def plugin_bots() -> dict[str, str]:
    """The plugin bots (name -> ``"module:Class"``) of the ``halma_env.bots`` entry point group; a plugin
    that cannot be used under its name is left out with a warning (see the module doc), unless the process
    that started this one showed it (``skip_plugin_warnings``)."""
    found: dict[str, str] = {}
    origins: dict[str, str] = {}
    _warned.clear()  # (a test clears the cache to scan again)
    for ep in _plugin_entry_points():
        name, value = ep.name.strip(), ep.value.strip()
        dist = getattr(ep, "dist", None)
        origin = f"{value!r} of {dist.name}" if dist is not None else repr(value)
        module, _, attr = value.partition(":")
        attr = attr.partition("[")[0].strip()  # extras ("module:Class [extra]") are not ours to install
        problem = ""
        if not _PLUGIN_NAME.fullmatch(name):
            problem = "its name is not a plain bot name (letters, digits, '_' and '-', not first a digit)"
        elif name in BOTS:
            problem = f"its name is the built-in bot {name!r} ({BOTS[name]})"
        elif name in FALLBACK_LEVELS:
            problem = f"its name is the level {name!r} ({FALLBACK_LEVELS[name]})"
        elif name.lower() == "ladder":
            problem = "'ladder' names the rated ladder (ladder:<level>)"
        elif not module.strip() or not attr:
            problem = "its value must be written 'module:Class'"
        elif name in found:
            problem = f"bot {name!r} is already the plugin {origins[name]}"
        if problem:
            message = f"{PLUGIN_GROUP} plugin {name!r} = {origin} is ignored: {problem}"
            _warned.append(message)
            if message not in _shown_by_parent:
                warnings.warn(message, PluginWarning, stacklevel=2)
            continue
        found[name] = f"{module.strip()}:{attr}"
        origins[name] = origin
    return found


def all_bots() -> dict[str, str]:
    """Every bot by name: the built-in ``BOTS`` and then the plugins (``plugin_bots()``)."""
    bots = dict(BOTS)
    for name, target in plugin_bots().items():
        bots.setdefault(name, target)  # BOTS may have gained the name since (a test's setitem): it wins
    return bots


def _unknown_bot(bot: str, bots: dict[str, str]) -> ValueError:
    return ValueError(f"unknown bot {bot!r}{did_you_mean(bot, bots)}; bots: {', '.join(bots)}")


def _bot_class(bot: str) -> type[Any]:
    target = all_bots()[bot]
    module_name, _, attr = target.partition(":")
    found: Any
    if bot in BOTS:
        found = _import(module_name, f"bot {bot!r}")
    else:  # a plugin whose module, or one it imports, is missing or fails: named as such (a bare
        try:  # "No module named 'x'" named neither the bot nor its plugin, and was no ValueError)
            found = importlib.import_module(module_name)
        except Exception as e:
            raise ValueError(f"bot {bot!r}: the {PLUGIN_GROUP} plugin {target!r} cannot be imported: "
                             f"{type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ValueError(f"bot {bot!r}: module {module_name} has no {attr!r} ({target})")
        found = getattr(found, part)
    if not isinstance(found, type):
        raise ValueError(f"bot {bot!r}: {target} is not a class (a bot is a class with select_move)")
    return found


_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _constructor_parameters(bot: str, cls: type[Any]) -> dict[str, Any]:
    """The spec parameters of a bot class with their defaults, after checking the class: it has
    ``select_move``, its constructor takes ``name=`` and ``seed=`` and has a default for every other
    parameter (the default gives a spec value its type); else a ValueError naming the class."""
    where = f"bot {bot!r} ({cls.__module__}.{cls.__qualname__})"
    if not callable(getattr(cls, "select_move", None)):
        raise ValueError(f"{where} has no select_move(game, time_budget=None) method")
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the signature of its constructor cannot be read") from None
    any_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    lacking = [k for k in ("name", "seed") if not any_keyword and (k not in params or params[k].kind not in _KEYWORD)]
    if lacking:
        raise ValueError(f"{where}: its constructor takes no {' and no '.join(f'{k}=' for k in lacking)} keyword "
                         "argument (a bot's __init__ must accept name= and seed=; see docs/bots.md, Adding a bot)")
    required = [k for k, p in params.items()
                if p.default is inspect.Parameter.empty and p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                                           inspect.Parameter.VAR_KEYWORD)]
    if required:
        raise ValueError(f"{where}: constructor parameter{'s' if len(required) > 1 else ''} {', '.join(required)} "
                         "without default (every parameter other than self needs one: it gives the spec value's "
                         "type)")
    return {k: p.default for k, p in params.items() if k not in ("seed", "name") and p.kind in _KEYWORD}


def bot_parameters(bot: str) -> dict[str, Any]:
    """The parameters a bot accepts in a spec (``name:key=value,...``) and their defaults."""
    bots = all_bots()
    if bot not in bots:
        raise _unknown_bot(bot, bots)
    return _constructor_parameters(bot, _bot_class(bot))


def _convert(bot: str, key: str, text: str, default: Any) -> Any:
    """Parse one parameter value to the type of its default."""
    try:
        if isinstance(default, bool):
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        # ASCII only: int() and float() also read other scripts' digits ('١') and underscores ('1_0')
        if isinstance(default, int):
            if not ASCII_INTEGER.fullmatch(text):
                raise ValueError
            return int(text)
        if isinstance(default, float) or default is None:
            if text.lower() == "none":
                return None
            if not text.isascii() or "_" in text:
                raise ValueError
            return float(text)  # nan and inf: refused by parse_spec and make_player
        else:
            return text
    except ValueError:
        kind = {"int": "an integer", "float": "a number", "NoneType": "a number or none", "bool": "true or false"}
        expected = kind.get(type(default).__name__, f"a {type(default).__name__}")
        ascii_only = " in ASCII digits" if not text.isascii() or "_" in text else ""
        raise ValueError(f"{bot} parameter {key}={text!r}: expected {expected}{ascii_only}") from None


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:depth=2,time=0.5"`` -> ``("search", {"depth": 2, "time": 0.5})`` (validated)."""
    bot, params, non_finite = _parse(spec)
    if non_finite:
        raise ValueError(non_finite)
    return bot, params


def _parse(spec: str) -> tuple[str, dict[str, Any], str]:
    """``parse_spec`` less its refusal of non-finite numbers (nan, inf: no bot parameter wants them, and NaN
    passes every ``<`` test), which it returns as the error message ("" when there is none)."""
    bot, _, rest = spec.partition(":")
    bot = bot.strip()
    bots = all_bots()
    if bot not in bots:
        raise _unknown_bot(bot, bots)
    known = bot_parameters(bot)
    params: dict[str, Any] = {}
    non_finite = ""
    for key, value in split_options(spec, rest, "bot parameter"):
        if key not in known:
            raise ValueError(f"{bot} has no parameter {key!r}{did_you_mean(key, known)}; "
                             f"parameters: {', '.join(known) or 'none'}")
        params[key] = _convert(bot, key, value, known[key])
        if isinstance(params[key], float) and not math.isfinite(params[key]) and not non_finite:
            none = " or none" if known[key] is None else ""
            non_finite = f"{bot} parameter {key}={value!r}: expected a finite number{none}"
    return bot, params, non_finite


def valid_names() -> list[str]:
    """Every plain name ``make_player`` accepts (bots and levels), plus the path forms."""
    return [*all_bots(), *FALLBACK_LEVELS, "<bot>:key=value,...", "<checkpoint>.pt", "<opponent>.onnx",
            "ladder:<level>"]


def _load_external(module_name: str, function: str, path: str, *args: Any) -> SeededPlayer:
    return getattr(_import(module_name, f"loading {path!r}"), function)(path, *args)


class UnknownPlayer(ValueError):
    """A player name that names no bot or level (``make_player``); ``names_also`` words the error for a caller
    that takes other names too (``halma play``'s ``human``)."""

    def __init__(self, name: str, bot: str, candidates: list[str], valid: list[str]) -> None:
        self.name, self.bot, self.candidates, self.valid = name, bot, candidates, valid
        super().__init__(self.names_also([]))

    def names_also(self, others: list[str]) -> str:
        """The error's message with ``others`` among the names suggested and listed as valid."""
        return (f"unknown player {self.name!r}{did_you_mean(self.bot, [*others, *self.candidates])}; "
                f"valid: {', '.join([*others, *self.valid])}")


def make_player(name: str, seed: int | None = None) -> Player:
    """A player by name (bot, bot spec, level, checkpoint or exported opponent); see the module doc.  The
    project's own players are ``SeededPlayer`` objects; a plugin bot may lack ``reseed``."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a player name must be a non-empty string, got {name!r}; valid: {', '.join(valid_names())}")
    seed = check_seed(seed)  # here, not at the first move of a level that turns out to be an exported model
    name = name.strip()
    lower = name.lower()
    if lower.endswith(".pt"):
        if not os.path.exists(name):
            raise ValueError(f"checkpoint file {shown_value(name)} does not exist{shipped_file_hint(name)}")
        return _load_external("agents.policy", "load_policy_player", name, seed)
    if lower.startswith("ladder:") or lower.endswith(".onnx") or ".onnx:" in lower:
        if not lower.startswith("ladder:"):
            from agents.opponent import opponent_file  # no torch

            path = opponent_file(name)  # "model.onnx" or "model.onnx:option=value,..."
            if not os.path.exists(path):
                raise ValueError(f"opponent file {path!r} does not exist{shipped_file_hint(path)}")
        return _load_external("agents.opponent", "load_opponent", name, seed)
    if ".pt:" in lower:  # a checkpoint with options, as an exported opponent takes them
        raise ValueError(f"a checkpoint player takes no options, got {name!r}: give the .pt alone, or export it "
                         "(halma export) for an opponent with options (temperature=..., time_budget=...)")
    if name in FALLBACK_LEVELS:  # levels come from the rated ladder (agents/ladder.py) for the game being played
        return _load_external("agents.ladder", "LevelPlayer", name, seed)
    bot = name.partition(":")[0].strip()
    bots = all_bots()
    if bot not in bots:
        raise UnknownPlayer(name, bot, [*bots, *FALLBACK_LEVELS], valid_names())
    bot, params, non_finite = _parse(name)
    # a non-finite number goes to the bot first, whose own check names its bounds ("greedy noise must
    # be >= 0 and <= 1 (a finite number), got nan"); one it would take is refused here
    player = _bot_class(bot)(seed=seed, name=name, **params)
    if non_finite:
        raise ValueError(non_finite)
    return player


def check_players(specs: Sequence[str], factory: Factory, rules: Rules) -> None:
    """Make each player and let it choose a move in the starting position (a short time budget),
    so that an unknown name, a bad file or a player of another game (a 2-seat checkpoint asked to
    play 3 seats) fails with its reason before any game starts."""
    for spec in specs:
        try:
            player = factory(spec, 0)
        except (ValueError, FileNotFoundError, KeyError, ImportError) as e:
            raise ValueError(f"cannot make player {shown_value(spec)}: {e}") from None
        # the reason names the game a player of another one plays (a checkpoint for 3 seats), or a
        # file it needs that is gone (a ladder level's model): no generic hint, it would mislead for the latter
        probe_player(player, spec, rules)


def trained_game_hint(players: Sequence[str], rules: Rules) -> str:
    """For the first checkpoint or exported model among ``players`` that was trained for another game than
    ``rules``', the flags that play its game (``--variant diamond --seats 2``: halma eval and halma play play
    star unless told, and a diamond checkpoint was refused without a word on how to play it); '' otherwise."""
    from agents.opponent import opponent_file

    for spec in players:
        path = opponent_file(spec.strip())  # (a model's options cut off at its last ".onnx:", as make_player does)
        try:
            if path.lower().endswith(".pt"):
                from agents.checkpoint import load_checkpoint

                data = load_checkpoint(path)
            elif path.lower().endswith(".onnx"):
                from agents.opponent import read_manifest

                data = read_manifest(path)
            else:
                continue
        except (ValueError, OSError, ImportError):  # unreadable: the error above says what is wrong with it
            continue
        game = (data["variant"], data["num_players"])
        if game != (rules.variant, rules.num_players):
            return f" (to play its game: --variant {game[0]} --seats {game[1]})"
    return ""
