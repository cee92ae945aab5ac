"""Players by name: ``make_player("hard", seed=1)``, ``make_player("search:depth=2")``, a checkpoint
path or an exported opponent.

Accepted names (``make_player`` raises ``ValueError`` listing them for anything else):

- a bot: ``random``, ``greedy``, ``search``, ``mcts``, ``crossing``, optionally with parameters after a colon,
  comma separated: ``search:depth=3``, ``search:time=0.5,width=10``, ``mcts:time=0.5``,
  ``greedy:noise=0.2``.  ``bot_parameters(bot)`` lists each bot's parameters and defaults;
- a level: ``easy``, ``medium``, ``hard``, ``expert``, resolved through the rated ladder
  (``agents.ladder.LevelPlayer``) for the game being played; ``LEVELS`` is each level's bot spec
  where the ladder has no entry;
- a path ending in ``.pt`` (a training checkpoint): ``agents.policy.load_policy_player(path, seed)``;
- a path ending in ``.onnx`` (optionally with options, ``model.onnx:temperature=0.5``) or a
  ladder name ``ladder:LEVEL`` (exported opponents, the rated ladder):
  ``agents.opponent.load_opponent(name, seed)``.

This module is the ``halma_env.players`` entry point (``agents``), through which the environments
resolve opponents by name without importing ``agents``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from typing import Any

from agents.files import missing_extra, shipped_file_hint
from agents.player import SeededPlayer, check_seed, split_options
from halma_env.suggest import did_you_mean

_INTEGER = re.compile(r"-?[0-9]+")  # an int parameter's text

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
LEVELS: dict[str, str] = {
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


def _bot_class(bot: str) -> type[Any]:
    module_name, class_name = BOTS[bot].split(":")
    return getattr(_import(module_name, f"bot {bot!r}"), class_name)


def bot_parameters(bot: str) -> dict[str, Any]:
    """The parameters a bot accepts in a spec (``name:key=value,...``) and their defaults."""
    if bot not in BOTS:
        raise ValueError(f"unknown bot {bot!r}{did_you_mean(bot, BOTS)}; bots: {', '.join(BOTS)}")
    sig = inspect.signature(_bot_class(bot).__init__)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {k: p.default for k, p in sig.parameters.items() if k not in ("self", "seed", "name") and p.kind in kinds}


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
            if not _INTEGER.fullmatch(text):
                raise ValueError
            return int(text)
        if isinstance(default, float) or default is None:
            if text.lower() == "none":
                return None
            if not text.isascii() or "_" in text:
                raise ValueError
            return float(text)
        return text
    except ValueError:
        kind = {"int": "an integer", "float": "a number", "NoneType": "a number or none", "bool": "true or false"}
        expected = kind.get(type(default).__name__, f"a {type(default).__name__}")
        ascii_only = " in ASCII digits" if not text.isascii() or "_" in text else ""
        raise ValueError(f"{bot} parameter {key}={text!r}: expected {expected}{ascii_only}") from None


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:depth=2,time=0.5"`` -> ``("search", {"depth": 2, "time": 0.5})`` (validated)."""
    bot, _, rest = spec.partition(":")
    bot = bot.strip()
    if bot not in BOTS:
        raise ValueError(f"unknown bot {bot!r}{did_you_mean(bot, BOTS)}; bots: {', '.join(BOTS)}")
    known = bot_parameters(bot)
    params: dict[str, Any] = {}
    for key, value in split_options(spec, rest, "bot parameter"):
        if key not in known:
            raise ValueError(f"{bot} has no parameter {key!r}{did_you_mean(key, known)}; "
                             f"parameters: {', '.join(known) or 'none'}")
        params[key] = _convert(bot, key, value, known[key])
    return bot, params


def valid_names() -> list[str]:
    """Every plain name ``make_player`` accepts (bots and levels), plus the path forms."""
    return [*BOTS, *LEVELS, "<bot>:key=value,...", "<checkpoint>.pt", "<opponent>.onnx", "ladder:<level>"]


def _load_external(module_name: str, function: str, path: str, *args: Any) -> SeededPlayer:
    return getattr(_import(module_name, f"loading {path!r}"), function)(path, *args)


def make_player(name: str, seed: int | None = None) -> SeededPlayer:
    """A player by name (bot, bot spec, level, checkpoint or exported opponent); see the module doc."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a player name must be a non-empty string, got {name!r}; valid: {', '.join(valid_names())}")
    seed = check_seed(seed)  # here, not at the first move of a level that turns out to be an exported model
    name = name.strip()
    lower = name.lower()
    if lower.endswith(".pt"):
        if not os.path.exists(name):
            raise ValueError(f"checkpoint file {name!r} does not exist{shipped_file_hint(name)}")
        return _load_external("agents.policy", "load_policy_player", name, seed)
    if lower.startswith("ladder:") or lower.endswith(".onnx") or ".onnx:" in lower:
        if not lower.startswith("ladder:"):
            from agents.opponent import opponent_file  # no torch

            path = opponent_file(name)  # "model.onnx" or "model.onnx:option=value,..."
            if not os.path.exists(path):
                raise ValueError(f"opponent file {path!r} does not exist{shipped_file_hint(path)}")
        return _load_external("agents.opponent", "load_opponent", name, seed)
    if name in LEVELS:  # levels come from the rated ladder (agents/ladder.py) for the game being played
        return _load_external("agents.ladder", "LevelPlayer", name, seed)
    bot = name.partition(":")[0].strip()
    if bot not in BOTS:
        raise ValueError(f"unknown player {name!r}{did_you_mean(bot, [*BOTS, *LEVELS])}; "
                         f"valid: {', '.join(valid_names())}")
    bot, params = parse_spec(name)
    return _bot_class(bot)(seed=seed, name=name, **params)
