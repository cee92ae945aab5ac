"""A conformance check for bots, for a plugin's own test suite (as Gymnasium's ``check_env``).

``check_bot("mybot:depth=2")`` (a spec the registry knows) or ``check_bot(MyBot)`` (a class) plays a few
short games of every variant and seat count against the built-in ``random`` bot, and checks what
docs/bots.md ("Adding a bot") asks of a bot; the first broken rule raises ``BotCheckError`` (an
``AssertionError``) naming the bot, the game, the position in SPEC §3 notation and the rule.  Give a
fixed-effort spec (``search:depth=2,time=none``): a bot whose moves depend on the clock fails the
same-seed check, and one that thinks for seconds makes the check as slow.
"""

from __future__ import annotations

import itertools
import pickle
import time
from collections.abc import Callable, Iterable
from typing import Any, SupportsIndex, cast

import agents.registry as registry
from agents.player import SeededPlayer, check_int, check_number
from halma_env import Game, Move, Rules
from halma_env.layout import layout
from halma_env.notation import KING_CHARS, PIECE_CHARS
from halma_env.rules import SEAT_COUNTS, VARIANTS, game_name

__all__ = ["BotCheckError", "check_bot", "near_end"]

# the rules of docs/bots.md that check_bot holds a bot to, as its messages quote them
REGISTRATION = "a bot class is registered as docs/bots.md, 'Adding a bot' says"
SPEC_VALUE = ("every constructor parameter can be given in a spec: its default is a bool, int, float, str or None "
              "(docs/bots.md, 'Specs')")
PROTOCOL = ("a bot has `name` (the spec it was made from), `seed`, `reseed(seed)` and "
            "`select_move(game, time_budget=None)`; a negative seed is a ValueError")
ANSWERS = "select_move returns a move in every position of a game that is not over"
LEGAL = "select_move returns one of game.legal_moves()"
UNTOUCHED = "a bot never modifies the game it is given, not even for a moment (it works on game.copy())"
SEEDED = ("the same seed and the same positions give the same moves: a bot made with a seed and one reseeded "
          "with it play alike")
BUDGET = "select_move answers within time_budget seconds (failed here only past 10 times the budget)"
NOT_A_GAME = "select_move given something other than a Game raises TypeError (agents.player.check_is_game)"
PICKLED = "a bot pickles with its generator's state, and the copy plays the same moves"

OVERRUN = 10  # times the budget a move may take before check_bot fails it (the clock of a busy machine)


class BotCheckError(AssertionError):
    """A bot broke a rule of docs/bots.md; ``bot``, ``game`` (``"star-2"``), ``position`` and ``rule`` say
    where and which (``game`` and ``position`` are ``""`` for a rule about the class or its registration)."""

    def __init__(self, bot: str, problem: str, rule: str, game: Game | None = None) -> None:
        self.bot, self.rule = bot, rule
        self.game = f"{game.rules.variant}-{game.num_players}" if game else ""
        self.position = game.position() if game else ""
        where = f", {game_name(game.rules.variant, game.num_players)}, position {self.position!r}" if game else ""
        super().__init__(f"bot {bot!r}{where}: {problem} (rule: {rule})")


class _Watched(Game):
    """The game handed to the bot: playing, undoing, resigning or setting an attribute on it is refused
    (and remembered, in case the bot swallows the error).  Its copies (``copy()``, ``copy.deepcopy``,
    pickle) are plain games."""

    touched = ""

    def _refuse(self, what: str) -> None:
        if not self.touched:
            object.__setattr__(self, "touched", what)
        raise AssertionError(f"it called {what} on the game it was given ({UNTOUCHED})")

    def __reduce_ex__(self, protocol: Any) -> Any:
        return _plain_game, (Game.__getstate__(self),)

    def copy(self) -> Game:  # the bot's own copies are plain games (Game.copy keeps a subclass's class)
        plain = Game.__new__(Game)
        plain.__dict__.update(self.__dict__)  # a plain view of this game, for Game.copy to copy from
        return plain.copy()

    __copy__ = copy

    def __setattr__(self, name: str, value: Any) -> None:
        self._refuse(f"setattr {name}")

    def play(self, move: Any) -> None:
        self._refuse("play()")

    def undo(self) -> None:
        self._refuse("undo()")

    def resign(self, seat: SupportsIndex) -> None:
        self._refuse("resign()")


def _plain_game(state: dict) -> Game:
    game = Game.__new__(Game)
    game.__setstate__(state)
    return game


def _state(game: Game) -> tuple:
    return game.position(), game.history, game.places, game.status, game.end_reason, game.rules


def _ask(label: str, player: Any, game: Game, time_budget: float | None = None) -> tuple[Move, float]:
    """``player``'s move in ``game`` and the seconds it took, after checking the move and the game."""
    watched = cast(_Watched, game.copy())
    watched.__class__ = _Watched
    before = _state(game)
    start = time.perf_counter()
    move, error = None, None
    try:
        move = player.select_move(watched, time_budget)
    except Exception as e:  # _Watched's refusals included
        error = e
    seconds = time.perf_counter() - start
    if watched.touched or _state(watched) != before:
        what = (f"it called {watched.touched} on the game it was given" if watched.touched
                else "the game it was given changed (its position, history or outcome)")
        raise BotCheckError(label, what, UNTOUCHED, game)
    if error is not None:
        raise BotCheckError(label, f"select_move raised {error!r}", ANSWERS, game) from error
    if not isinstance(move, Move):  # ((src, dst) or "src-dst" is a legal move's name, not the Move the rule asks for)
        raise BotCheckError(label, f"it returned a {type(move).__name__}, {move!r}, not a Move", LEGAL, game)
    if move not in game.legal_moves():
        raise BotCheckError(label, f"it returned {move!r}, not a legal move", LEGAL, game)
    return move, seconds


def _spec_text(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _registered(bot: str | type) -> tuple[str, Callable[[int | None], Any]]:
    """The bot's label and a maker ``seed -> player``, after the registry's checks of its class and spec
    (a ``ValueError`` of the registry becomes a ``BotCheckError`` quoting it)."""
    label = bot.strip() if isinstance(bot, str) else getattr(bot, "__name__", repr(bot))
    try:
        if isinstance(bot, str):
            name = registry.parse_spec(label)[0]  # unknown bot, broken class, bad parameters
            cls = registry._bot_class(name)
            make: Callable[[int | None], Any] = lambda seed: registry.make_player(label, seed)
        elif isinstance(bot, type):
            name, cls = label, bot
            make = lambda seed: cls(seed=seed, name=label)
        else:
            raise ValueError(f"check_bot takes a bot spec or a bot class, got {type(bot).__name__}")
        defaults = registry._constructor_parameters(name, cls)
    except ValueError as e:
        raise BotCheckError(label, str(e), REGISTRATION) from None
    for key, default in defaults.items():  # each default read back the way a spec value is
        try:
            again = registry._convert(name, key, _spec_text(default), default)
        except ValueError:
            again = None
        if type(again) is not type(default) or again != default:
            raise BotCheckError(label, f"parameter {key}'s default {default!r} cannot be written in a spec",
                                SPEC_VALUE)
    return label, make


def _check_protocol(label: str, make: Callable[[int | None], Any], seed: int) -> None:
    try:
        player = make(seed)
    except Exception as e:
        raise BotCheckError(label, f"making it with seed {seed} raised {e!r}", PROTOCOL) from e
    problem = ""
    if not isinstance(player, SeededPlayer):
        problem = "it lacks " + ", ".join(a for a in ("name", "seed", "reseed", "select_move")
                                          if not hasattr(player, a))
    elif player.name != label:
        problem = f"its name is {player.name!r}"
    elif player.seed != seed:
        problem = f"made with seed {seed}, its seed is {player.seed!r}"
    else:
        player.reseed(seed + 1)
        if player.seed != seed + 1:
            problem = f"after reseed({seed + 1}) its seed is {player.seed!r}"
        else:
            try:
                make(-1)
                problem = "it was made with seed -1"
            except ValueError:
                pass
    if problem:
        raise BotCheckError(label, problem, PROTOCOL)


def near_end(variant: str, num_players: int, to_move: int = 0, **options: Any) -> Game:
    """A game in which every seat is one move from finishing: its goal filled but for one hole, its last
    piece on a hole next to it (the diamond king on its tip); ``options`` are ``Rules`` options."""
    lay = layout(variant, num_players)
    g = lay.geometry
    goals = set(itertools.chain(*lay.goals))
    cells: dict[int, str] = {}
    for seat, goal in enumerate(lay.goals):
        last, empty = next((h, e) for e in goal if e != lay.goal_tip[seat] for h in g.neighbours[e]
                           if h not in goals and h not in cells and g.mask([h]) & lay.open_holes[seat])
        for hole in (*goal, last):
            cells[hole] = (KING_CHARS if hole == lay.goal_tip[seat] else PIECE_CHARS)[seat]
        del cells[empty]
    holes = "".join(cells.get(h, ".") for h in range(g.num_holes))
    ends = list(itertools.accumulate(g.row_widths))
    board = "/".join(holes[a:b] for a, b in zip([0, *ends], ends))
    return Game.from_position(f"{variant} {num_players} {board} {to_move}", **options)


def _play(label: str, player: Any, start: Game, seat: int, seed: int, moves: int) -> list[tuple[Game, Move]]:
    """Play ``start`` on with ``player`` in ``seat`` and ``random`` bots elsewhere, for at most ``moves`` of
    ``player``'s moves; -> each position ``player`` was asked in and its move."""
    game = start.copy()
    others = [registry.make_player("random", seed=seed * 8 + s) for s in range(game.num_players)]
    asked: list[tuple[Game, Move]] = []
    while not game.is_over and len(asked) < moves:
        if game.to_move == seat:
            move = _ask(label, player, game)[0]
            asked.append((game.copy(), move))
        else:
            move = others[game.to_move].select_move(game)
        game.play(move)
    return asked


def check_bot(bot: str | type, *, variants: Iterable[tuple[str, int]] | None = None, games: int = 2,
              moves: int = 6, seed: int = 0, time_budget: float = 0.05) -> None:
    """Check a bot (a spec such as ``"mybot:depth=2"``, or a bot class) against docs/bots.md.

    ``variants``: the (variant, seat count) pairs to play, every one of the rules by default.  In each,
    ``games`` games from the start (the bot's seat changing from game to game) and one from
    ``near_end()``, at most ``moves`` of the bot's moves each, against ``random`` bots.  Checked: the
    class and its parameters (the registry's own checks, and each default written as a spec value); the
    player's ``name``, ``seed`` and ``reseed``; every move legal and the game left untouched; the games
    played again by a bot reseeded with each game's seed give the same moves; within 10x ``time_budget``
    when given one; a ``TypeError`` for a position text instead of a game; a pickled copy plays alike.
    Raises ``BotCheckError`` (an ``AssertionError``) at the first rule broken.
    """
    check_int("games", games)
    check_int("moves", moves, 1)
    check_int("seed", seed)
    check_number("time_budget", time_budget, strict=True)
    label, make = _registered(bot)
    _check_protocol(label, make, seed)
    kinds = list(variants) if variants is not None else [(v, n) for v in VARIANTS for n in SEAT_COUNTS[v]]
    starts = []
    for variant, n in kinds:
        starts += [(Game(Rules(variant, n)), k % n) for k in range(games)]
        starts.append((near_end(variant, n, to_move=games % n, move_limit=4 * n), games % n))
    played = [_play(label, make(seed + i), game, seat, seed + i, moves) for i, (game, seat) in enumerate(starts)]
    player = make(seed + len(starts))  # a seed none of the games has: reseed must take the bot off it
    for i, (game, seat) in enumerate(starts):  # the same games, one player reseeded for each
        player.reseed(seed + i)
        for (position, move), (_, again) in zip(played[i], _play(label, player, game, seat, seed + i, moves)):
            if again != move:
                raise BotCheckError(label, f"reseeded with {seed + i} it played {again}, made with that seed "
                                    f"{move}", SEEDED, position)
    asked = [moves_of_game[-1][0] for moves_of_game in played if moves_of_game]
    for position in asked:  # the last position of each game, the player warm
        seconds = _ask(label, player, position, time_budget)[1]
        if seconds > OVERRUN * time_budget:  # once more: a pause of the machine is no fault of the bot
            seconds = min(seconds, _ask(label, player, position, time_budget)[1])
        if seconds > OVERRUN * time_budget:
            raise BotCheckError(label, f"it took {seconds:.3f} s (twice) for a budget of {time_budget} s", BUDGET,
                                position)
    position = asked[0]
    try:
        player.select_move(position.position())
    except TypeError:
        pass
    except Exception as e:
        raise BotCheckError(label, f"given the position's text it raised {e!r}", NOT_A_GAME, position) from None
    else:
        raise BotCheckError(label, "given the position's text it returned a move", NOT_A_GAME, position)
    try:
        copy = pickle.loads(pickle.dumps(player))
    except Exception as e:
        raise BotCheckError(label, f"pickling it raised {e!r}", PICKLED) from None
    for position in asked[:3]:
        mine, its = _ask(label, player, position)[0], _ask(label, copy, position)[0]
        if mine != its:
            raise BotCheckError(label, f"it played {mine}, its pickled copy {its}", PICKLED, position)
