"""``agents.testing.check_bot``: every built-in bot conforms, and each way of breaking the contract of
docs/bots.md is caught with a message naming the bot, the game, the position and the rule."""

from __future__ import annotations

import copy
import enum
import pickle
import random
import re
import threading
import time
import types
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import agents.registry as registry
import agents.testing as testing
from agents.bots.random_bot import RandomBot
from agents.player import check_is_game
from agents.registry import plugin_bots
from agents.testing import BotCheckError, check_bot, near_end
from halma_env import Game, Move, Rules
from halma_env.rules import SEAT_COUNTS

# fixed-effort specs of every built-in bot, quick enough for every variant and seat count
QUICK = ["random", "greedy", "search:depth=1,time=none", "mcts:iterations=8,time=none",
         "crossing:width=2,depth=2"]
FULLER = ["greedy:lookahead=1", "search:depth=2,time=none", "mcts:iterations=24,time=none",
          "crossing:width=3,depth=3"]
STAR2 = [("star", 2)]


def test_every_built_in_bot_is_covered() -> None:
    assert {spec.partition(":")[0] for spec in QUICK} == set(registry.BOTS)


@pytest.mark.parametrize("spec", QUICK)
def test_the_built_in_bots_conform(spec: str) -> None:
    check_bot(spec)


@pytest.mark.slow
@pytest.mark.parametrize("spec", FULLER)
def test_the_built_in_bots_conform_with_more_effort(spec: str) -> None:
    check_bot(spec, games=3, moves=12, seed=5)


def test_a_plugin_bot_is_checked_by_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = EntryPoint("confbot", "agents.bots.greedy:GreedyBot", registry.PLUGIN_GROUP)
    monkeypatch.setattr(registry, "_plugin_entry_points", lambda: [entry])
    plugin_bots.cache_clear()
    try:
        check_bot("confbot:memory=4", variants=[("star", 3), ("halma16", 2)], seed=3)
    finally:
        plugin_bots.cache_clear()


def test_a_class_is_checked_under_its_name() -> None:
    check_bot(RandomBot, variants=STAR2)


@pytest.mark.parametrize(("variant", "n"), [(v, n) for v, ns in SEAT_COUNTS.items() for n in ns])
def test_near_end_leaves_every_seat_one_move_from_finishing(variant: str, n: int) -> None:
    game = near_end(variant, n, to_move=n - 1)
    assert game.to_move == n - 1 and game.status == ["active"] * n and not game.is_over
    after = []
    for move in game.legal_moves():
        copy = game.copy()
        copy.play(move)
        after.append(copy.status[n - 1])
    assert "finished" in after
    assert near_end(variant, n).to_move == 0  # seat 0 to move unless told


# --- bots that break one rule each (the rest they take from RandomBot) ---------------------------------------


class IllegalBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        move = super().select_move(game, time_budget)
        return Move(move.dst, move.src)  # backwards: from an empty hole


class PairBot(RandomBot):
    """Answers with the move's (src, dst): the game, the env and the arena take it, the Player rule does not, and
    the check called it "not a legal move" (a researcher's plugin did it)."""

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        move = super().select_move(game, time_budget)
        return (move.src, move.dst)  # type: ignore[return-value]


class PlayUndoBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        move = super().select_move(game, time_budget)
        game.play(move)  # "just for a look": a server reading the game meanwhile sees the move
        game.undo()
        return move


class TurnBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        seat = game.to_move
        game.to_move = (seat + 1) % game.num_players
        game.to_move = seat
        return super().select_move(game, time_budget)


class InnardsBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        move = super().select_move(game, time_budget)
        game._history.append(game._history[-1] if game._history else ([], None, None, None))
        return move


class NoReseedBot(RandomBot):
    def reseed(self, seed: int | None) -> None:
        if not hasattr(self, "_rng"):
            super().reseed(seed)
        self.seed = seed  # the generator goes on where it was


class ClockBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        return random.Random(time.perf_counter_ns()).choice(game.legal_moves())


class SlowBot(RandomBot):
    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        if time_budget is not None:
            time.sleep(12 * time_budget)
        return super().select_move(game, time_budget)


class GoalShyBot(RandomBot):
    """Breaks once one of its pieces stands in its goal."""

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        if set(game.pieces(game.to_move)) & set(game.layout.goals[game.to_move]):
            raise RuntimeError("no plan for the endgame")
        return super().select_move(game, time_budget)


class TextBot(RandomBot):
    def select_move(self, game: Any, time_budget: float | None = None) -> Move:
        if isinstance(game, str):
            game = Game.from_position(game)
        return super().select_move(game, time_budget)


class LockBot(RandomBot):
    def __init__(self, seed: int | None = None, name: str = "lockbot") -> None:
        super().__init__(seed, name)
        self.lock = threading.Lock()


class RenamedBot(RandomBot):
    def __init__(self, seed: int | None = None, name: str = "renamed") -> None:
        super().__init__(seed, "renamed")


class NegativeSeedBot(RandomBot):
    def reseed(self, seed: int | None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)


class TupleDefaultBot(RandomBot):
    def __init__(self, seed: int | None = None, name: str = "tuples", weights: tuple = (1, 2)) -> None:
        super().__init__(seed, name)


class NoNameBot(RandomBot):
    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)


class SentinelSeedBot(RandomBot):
    """Takes seed -1 for "no seed" (a common convention): a negative seed must be a ValueError."""

    def reseed(self, seed: int | None) -> None:
        super().reseed(None if seed == -1 else seed)
        self.seed = seed


class AttributeBot(RandomBot):
    """Reads the game without checking it is one: a position text gives an AttributeError, not a TypeError."""

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        return self._rng.choice(game.legal_moves())


class ForgetfulPickleBot(RandomBot):
    """Pickles its seed but not its generator's state: the copy starts its stream again."""

    def __reduce__(self) -> tuple:
        return type(self), (self.seed, self.name)


class NoSeedNoReseedBot:
    """A bot class of its own (not a SeededBot): it has a name and select_move, but neither seed nor reseed."""

    def __init__(self, seed: int | None = None, name: str = "bare") -> None:
        self.name = name
        self._bot = RandomBot(seed)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        return self._bot.select_move(game, time_budget)


class ModelFileBot(RandomBot):
    def __init__(self, seed: int | None = None, name: str = "model") -> None:
        raise FileNotFoundError("no model file")


class Style(enum.StrEnum):
    FAST = "fast"


class EnumDefaultBot(RandomBot):
    """A spec gives the plain text "fast", equal to the default but not a Style."""

    def __init__(self, seed: int | None = None, name: str = "enum", style: Style = Style.FAST) -> None:
        super().__init__(seed, name)


# (bot class, whether the message names a position, the problem it states, the rule)
BROKEN = [
    (IllegalBot, True, r"it returned Move\(\d+, \d+\), not a legal move", testing.LEGAL),
    (PairBot, True, r"it returned a tuple, \(\d+, \d+\), not a Move", testing.LEGAL),
    (PlayUndoBot, True, r"it called play\(\) on the game it was given", testing.UNTOUCHED),
    (TurnBot, True, r"it called setattr to_move on the game it was given", testing.UNTOUCHED),
    (InnardsBot, True, r"the game it was given changed \(its position, history or outcome\)", testing.UNTOUCHED),
    (NoReseedBot, True, r"reseeded with 0 it played \d+-\d+, made with that seed \d+-\d+", testing.SEEDED),
    (ClockBot, True, r"reseeded with \d+ it played \d+-\d+, made with that seed \d+-\d+", testing.SEEDED),
    (SlowBot, True, r"it took 0\.\d+ s \(twice\) for a budget of 0\.01 s", testing.BUDGET),
    (GoalShyBot, True, r"select_move raised RuntimeError\('no plan for the endgame'\)", testing.ANSWERS),
    (TextBot, True, "given the position's text it returned a move", testing.NOT_A_GAME),
    (LockBot, False, r"pickling it raised TypeError\(\"cannot pickle '_thread.lock' object\"\)", testing.PICKLED),
    (RenamedBot, False, "its name is 'renamed'", testing.PROTOCOL),
    (NegativeSeedBot, False, "it was made with seed -1", testing.PROTOCOL),
    (TupleDefaultBot, False, r"parameter weights's default \(1, 2\) cannot be written in a spec", testing.SPEC_VALUE),
    (NoNameBot, False, r"bot 'NoNameBot' \((tests\.)?test_bot_conformance\.NoNameBot\): its constructor takes no "
                       r"name= keyword argument .*", testing.REGISTRATION),
    (AttributeBot, True, r"given the position's text it raised AttributeError\(\"'str' object has no attribute "
                         r"'legal_moves'\"\)", testing.NOT_A_GAME),
    (ForgetfulPickleBot, True, r"it played \d+-\d+, its pickled copy \d+-\d+", testing.PICKLED),
    (SentinelSeedBot, False, "it was made with seed -1", testing.PROTOCOL),
    (NoSeedNoReseedBot, False, "it lacks seed, reseed", testing.PROTOCOL),
    (ModelFileBot, False, r"making it with seed 0 raised FileNotFoundError\('no model file'\)", testing.PROTOCOL),
    (EnumDefaultBot, False, r"parameter style's default <Style\.FAST: 'fast'> cannot be written in a spec",
     testing.SPEC_VALUE),
]


@pytest.mark.parametrize(("cls", "in_game", "problem", "rule"), BROKEN, ids=[b[0].__name__ for b in BROKEN])
def test_a_broken_bot_fails_naming_the_rule(cls: type, in_game: bool, problem: str, rule: str) -> None:
    where = r", star with 2 seats, position 'star 2 [0-9./A-F]+ [01] \d+'" if in_game else ""
    pattern = f"^bot '{cls.__name__}'{where}: {problem} \\(rule: {re.escape(rule)}\\)$"
    # SlowBot breaks the budget rule; the others other rules, under a budget no pause of a loaded machine exceeds
    # (at 10 ms, two pauses of the test process could fail them on the budget first)
    budget = 0.01 if cls is SlowBot else 1.0
    with pytest.raises(BotCheckError, match=pattern) as caught:
        check_bot(cls, variants=STAR2, games=1, moves=3, time_budget=budget)
    error = caught.value
    assert isinstance(error, AssertionError) and (error.bot, error.rule) == (cls.__name__, rule)
    assert (error.game, bool(error.position)) == (("star-2", True) if in_game else ("", False))
    if in_game:
        Game.from_position(error.position)


def test_something_other_than_a_spec_or_a_class_is_named() -> None:
    pattern = (r"^bot '42': check_bot takes a bot spec or a bot class, got int "
               rf"\(rule: {re.escape(testing.REGISTRATION)}\)$")
    with pytest.raises(BotCheckError, match=pattern):
        check_bot(42)  # type: ignore[arg-type]


def test_the_game_handed_over_refuses_every_change_and_remembers_the_first() -> None:
    """A refusal raises (a bot learns at once that it may not play on the game), and is remembered in case
    the bot swallows the error; the game stays as it was."""
    game = Game(Rules("star", 2))
    game.play(game.legal_moves()[0])
    watched = game.copy()
    watched.__class__ = testing._Watched
    before = watched.position()
    tail = re.escape(f" on the game it was given ({testing.UNTOUCHED})") + "$"
    for call, what in [(lambda: watched.play(watched.legal_moves()[0]), "play()"), (watched.undo, "undo()"),
                       (lambda: watched.resign(1), "resign()"), (lambda: setattr(watched, "ply", 0), "setattr ply")]:
        with pytest.raises(AssertionError, match="^it called " + re.escape(what) + tail):
            call()
    assert watched.touched == "play()" and watched.position() == before
    assert type(watched.copy()) is Game and type(pickle.loads(pickle.dumps(watched))) is Game


def test_the_names_it_exports() -> None:
    namespace: dict[str, Any] = {}
    exec("from agents.testing import *", namespace)
    assert {"BotCheckError", "check_bot", "near_end"} <= set(namespace)


def test_the_rules_are_quoted_word_for_word() -> None:
    """A plugin author reads the rule in the failure's message (docs/bots.md quotes UNTOUCHED's in its example)."""
    assert [testing.REGISTRATION, testing.SPEC_VALUE, testing.PROTOCOL, testing.ANSWERS, testing.LEGAL,
            testing.UNTOUCHED, testing.SEEDED, testing.BUDGET, testing.NOT_A_GAME, testing.PICKLED] == [
        "a bot class is registered as docs/bots.md, 'Adding a bot' says",
        "every constructor parameter can be given in a spec: its default is a bool, int, float, str or None "
        "(docs/bots.md, 'Specs')",
        "a bot has `name` (the spec it was made from), `seed`, `reseed(seed)` and "
        "`select_move(game, time_budget=None)`; a negative seed is a ValueError",
        "select_move returns a move in every position of a game that is not over",
        "select_move returns one of game.legal_moves()",
        "a bot never modifies the game it is given, not even for a moment (it works on game.copy())",
        "the same seed and the same positions give the same moves: a bot made with a seed and one reseeded "
        "with it play alike",
        "select_move answers within time_budget seconds (failed here only past 10 times the budget)",
        "select_move given something other than a Game raises TypeError (agents.player.check_is_game)",
        "a bot pickles with its generator's state, and the copy plays the same moves",
    ]


class PacedBot(RandomBot):
    """Takes ``pace`` times the budget it is given, on the test's clock; notes the ply of each position it is
    asked in with a budget."""

    pace = 0.0
    clock = [0.0]
    budgeted: list[tuple[float, int]] = []

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        if time_budget is not None:
            PacedBot.budgeted.append((time_budget, game.ply))
            PacedBot.clock[0] += self.pace * time_budget
        return super().select_move(game, time_budget)


@pytest.mark.parametrize(("pace", "plies"), [(9.5, [2, 3, 2]), (10.0, [2, 3, 2]), (10.5, [2, 2])])
def test_a_move_fails_the_budget_only_past_10_times_it(monkeypatch: pytest.MonkeyPatch, pace: float,
                                                       plies: list[int]) -> None:
    """On a clock the bot moves (exact in binary: budget 0.5): 10 times the budget is in time and asked once
    per game, 10.5 times is not, asked twice before failing.  Asked in the last position of each game, the
    bot's second move (ply 2 in seat 0, 3 in seat 1)."""
    monkeypatch.setattr(testing, "time", types.SimpleNamespace(perf_counter=lambda: PacedBot.clock[0]))
    monkeypatch.setattr(PacedBot, "pace", pace)
    monkeypatch.setattr(PacedBot, "budgeted", [])
    if pace > 10:
        pattern = (r"^bot 'PacedBot', .*: it took 5\.250 s \(twice\) for a budget of 0\.5 s "
                   rf"\(rule: {re.escape(testing.BUDGET)}\)$")
        with pytest.raises(BotCheckError, match=pattern):
            check_bot(PacedBot, variants=STAR2, moves=2, time_budget=0.5)
    else:
        check_bot(PacedBot, variants=STAR2, moves=2, time_budget=0.5)
    assert PacedBot.budgeted == [(0.5, ply) for ply in plies]  # 2 games from the start and 1 from near_end


def test_the_games_played_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per kind of game: 2 games from the start (the bot in seat 0, then 1) and 1 from near_end (seat 2 % 2,
    a move limit of 4 moves a seat), the bot made with seeds 0, 1, 2 and asked for 6 moves in each, not 7;
    then the same games again with one player reseeded with each seed."""
    calls = []
    play = testing._play

    def recording(label: str, player: Any, start: Game, seat: int, seed: int, moves: int) -> list:
        asked = play(label, player, start, seat, seed, moves)
        fresh = start.position() == Game(Rules("star", 2)).position()
        calls.append((fresh, start.rules.move_limit if not fresh else None, seat, seed, moves, len(asked)))
        return asked

    monkeypatch.setattr(testing, "_play", recording)
    check_bot("random", variants=STAR2)
    near = [c for c in calls if not c[0]]
    assert len(near) == 2 and near[0] == near[1] and 1 <= near[0][5] <= 6
    assert calls == [(True, None, 0, 0, 6, 6), (True, None, 1, 1, 6, 6), near[0]] * 2
    assert near[0][1:5] == (8, 0, 2, 6)  # near_end's game ends after 4 moves a seat


def test_the_position_text_is_the_first_game_s_last_position(monkeypatch: pytest.MonkeyPatch) -> None:
    played: list[list] = []
    play = testing._play
    monkeypatch.setattr(testing, "_play", lambda *args: played.append(play(*args)) or played[-1])
    with pytest.raises(BotCheckError, match="given the position's text it returned a move") as caught:
        check_bot(TextBot, variants=STAR2, games=1, moves=3)
    assert caught.value.position == played[0][-1][0].position()


def test_the_pickled_copy_plays_three_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last position of each of the first 3 games (of 4 here), by the player and by its pickled copy."""
    players: list[Any] = []
    ask = testing._ask

    def recording(label: str, player: Any, game: Game, time_budget: float | None = None) -> tuple[Move, float]:
        players.append(player)
        return ask(label, player, game, time_budget)

    monkeypatch.setattr(testing, "_ask", recording)
    check_bot("random", variants=[("star", 2), ("star", 3)], games=1, moves=1)
    copy = players[-1]
    assert [p is copy for p in players[-8:]] == [False, False] + [False, True] * 3


def test_an_unknown_spec_or_a_bad_parameter_fails_with_the_registry_message() -> None:
    with pytest.raises(BotCheckError, match=r"^bot 'gredy': unknown bot 'gredy' \(did you mean 'greedy'\?\)"):
        check_bot("gredy")
    with pytest.raises(BotCheckError, match=re.escape("bot 'search:depth=x': search parameter depth='x': expected "
                                                      f"an integer (rule: {testing.REGISTRATION})")):
        check_bot("search:depth=x")


class DeepCopyBot(RandomBot):
    """Searches on deep and pickled copies of the game: allowed."""

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        check_is_game(game)
        for work in (copy.deepcopy(game), pickle.loads(pickle.dumps(game)), copy.copy(game)):
            work.play(work.legal_moves()[0])
            work.undo()
        return super().select_move(game, time_budget)


def test_a_bot_may_copy_the_game_any_way() -> None:
    check_bot(DeepCopyBot, variants=[("diamond", 3)])


def test_bad_arguments_are_value_errors() -> None:
    for options in ({"moves": 0}, {"games": -1}, {"seed": -1}, {"time_budget": 0.0}):
        with pytest.raises(ValueError, match=f"^{next(iter(options))} must be"):
            check_bot("random", **options)
    with pytest.raises(ValueError, match="diamond is played by 2, 3 seats, not 4"):
        check_bot("random", variants=[("diamond", 4)])
    check_bot("random", variants=STAR2, games=0, moves=1)  # the least of each: one game, from near_end


def test_every_kind_of_player_words_a_finished_game_alike() -> None:
    """Bots, levels, checkpoints and exported models all refuse a move in a game that is over with one
    ValueError text (a checkpoint said "the game has no legal move (it is over)")."""
    from agents.registry import make_player

    game = Game(Rules("star", 2))
    game.resign(0)
    for name in ("random", "greedy", "search", "mcts", "crossing", "easy", "agents/checkpoints/star2.pt",
                 "agents/ladder/star-2-quickstart_star2.onnx"):
        with pytest.raises(ValueError, match="^no legal move: the game is over$"):
            make_player(str(Path(__file__).resolve().parents[1] / name) if "/" in name else name, 0).select_move(game)
