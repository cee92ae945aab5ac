"""The agents' plumbing, pinned where mutation testing (scripts/mutants.py) found it unpinned: the player
registry's names, specs and errors (agents/registry.py), the shared argument checks (agents/player.py), the
network player (agents/policy.py), the scalar vector game (agents/vecgame.py), the one-process collectives
(agents/parallel.py) and the imitation stage (agents/imitation.py)."""

from __future__ import annotations

import re
import shutil
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agents.player import check_int, check_number, check_seed, check_time, split_options
from agents.registry import BOTS, FALLBACK_LEVELS, bot_parameters, make_player, parse_spec, valid_names
from halma_env import Game, Rules

if TYPE_CHECKING:
    import torch

    from agents.config import TrainConfig
    from agents.imitation import CrossingLines, Demonstrations
    from agents.network import HalmaNet
    from agents.player import Player

ROOT = Path(__file__).parents[1]
STAR2 = ROOT / "agents" / "checkpoints" / "quickstart_star2.pt"

# a bot with a parameter of every type the registry converts (no shipped bot has a bool or a str one)
FAKE_BOTS = '''
class FakeBot:
    def __init__(self, seed=None, name="fake", flag=False, label="plain", limit=None, count=1, scale=1.0):
        self.seed, self.name, self.flag, self.label = seed, name, flag, label
        self.limit, self.count, self.scale = limit, count, scale

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]
'''


@pytest.fixture
def fake_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Registers ``fake`` (a module on a temporary path) and two bots whose modules cannot be imported."""
    (tmp_path / "fake_bots_for_tests.py").write_text(textwrap.dedent(FAKE_BOTS))
    (tmp_path / "broken_bots_for_tests.py").write_text("import no_such_dependency_for_tests  # noqa\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(BOTS, "fake", "fake_bots_for_tests:FakeBot")
    monkeypatch.setitem(BOTS, "ghost", "no_such_bot_module_for_tests:Ghost")
    monkeypatch.setitem(BOTS, "broken", "broken_bots_for_tests:Broken")
    return "fake"


# --- agents/registry.py ---------------------------------------------------------------------------


def test_bool_parameters_take_yes_and_no_words(fake_bot: str) -> None:
    """A parameter whose default is a bool reads 1/true/yes/on and 0/false/no/off, in any case."""
    for word in ("1", "true", "YES", "On"):
        assert parse_spec(f"fake:flag={word}") == ("fake", {"flag": True}), word
    for word in ("0", "False", "no", "OFF"):
        assert parse_spec(f"fake:flag={word}") == ("fake", {"flag": False}), word
    for word in ("maybe", "2"):  # not read as an integer, although a bool is one
        with pytest.raises(ValueError, match=f"^fake parameter flag='{word}': expected true or false$"):
            parse_spec(f"fake:flag={word}")


def test_parameters_take_the_type_of_their_default(fake_bot: str) -> None:
    """A str default keeps the text, a None default reads ``none`` or a number (as a float), an int
    default an integer, a float default a number; a bad value names the type expected."""
    bot, params = parse_spec("fake:label=loud,limit=0.5,count=3,scale=2")
    assert (bot, params) == ("fake", {"label": "loud", "limit": 0.5, "count": 3, "scale": 2.0})
    assert isinstance(params["limit"], float) and isinstance(params["scale"], float)
    assert parse_spec("fake:limit=None")[1] == {"limit": None}
    player: Any = make_player("fake:label=loud,flag=on", seed=3)
    assert (player.name, player.seed, player.label, player.flag) == ("fake:label=loud,flag=on", 3, "loud", True)
    for spec, expected in [("fake:limit=soon", "a number or none"), ("fake:scale=big", "a number"),
                           ("fake:count=1.5", "an integer")]:
        key, _, value = spec[5:].partition("=")
        with pytest.raises(ValueError, match=f"^fake parameter {key}='{value}': expected {expected}$"):
            parse_spec(spec)


def test_a_bot_whose_module_is_missing_is_named(fake_bot: str) -> None:
    """A bot's missing module is a ValueError naming the bot; a module that exists but fails on a missing
    import of its own is that import's error, not hidden as a missing bot."""
    with pytest.raises(ValueError, match=r"^bot 'ghost' is not available in this installation "
                                         r"\(no_such_bot_module_for_tests is missing\)$"):
        make_player("ghost")
    with pytest.raises(ModuleNotFoundError) as info:
        bot_parameters("broken")
    assert info.value.name == "no_such_dependency_for_tests"


def test_unknown_bots_are_refused_by_the_spec_functions() -> None:
    """``bot_parameters`` and ``parse_spec`` name an unknown bot and list the known ones."""
    listed = "bots: random, greedy, search, mcts, crossing"
    with pytest.raises(ValueError, match=f"^unknown bot 'chess'; {listed}$"):
        bot_parameters("chess")
    with pytest.raises(ValueError, match=f"^unknown bot 'chess'; {listed}$"):
        parse_spec("chess:depth=2")
    with pytest.raises(ValueError, match=f"^unknown bot 'easy'; {listed}$"):  # a level is not a bot spec
        parse_spec("easy")


def test_an_unknown_name_lists_every_valid_form() -> None:
    """The error for an unknown player lists the bots, the levels and the path and spec forms."""
    forms = "random, greedy, search, mcts, crossing, easy, medium, hard, expert, <bot>:key=value,..., " \
            "<checkpoint>.pt, <opponent>.onnx, ladder:<level>"
    assert ", ".join(valid_names()) == forms
    with pytest.raises(ValueError, match=f"^unknown player 'grandmaster'; valid: {re.escape(forms)}$"):
        make_player("grandmaster")


def test_a_misspelt_bot_level_or_parameter_names_the_nearest_one() -> None:
    """A near miss gets "(did you mean ...?)" before the list; a name near nothing gets the list alone."""
    with pytest.raises(ValueError, match=r"^unknown player 'gredy' \(did you mean 'greedy'\?\); valid: random, "):
        make_player("gredy")
    with pytest.raises(ValueError, match=r"^unknown player 'exprt' \(did you mean 'expert'\?\); valid: "):
        make_player("exprt")  # the levels are names too
    with pytest.raises(ValueError, match=r"^unknown player 'serch:depth=2' \(did you mean 'search'\?\); "):
        make_player("serch:depth=2")
    with pytest.raises(ValueError, match=r"^unknown bot 'mtcs' \(did you mean 'mcts'\?\); bots: random, "):
        parse_spec("mtcs:iterations=5")
    with pytest.raises(ValueError, match=r"^search has no parameter 'dept' \(did you mean 'depth'\?\); "
                                         r"parameters: time, depth, "):
        parse_spec("search:dept=3")
    with pytest.raises(ValueError, match=r"^search has no parameter 'zzz'; parameters: time, depth, "):
        parse_spec("search:zzz=3")


@pytest.mark.parametrize("name", [3, None, "", "   "])
def test_a_player_name_must_be_a_non_empty_string(name: object) -> None:
    with pytest.raises(ValueError, match=r"^a player name must be a non-empty string, got "):
        make_player(name)  # type: ignore[arg-type]


def test_a_checkpoint_path_makes_a_policy_player(tmp_path: Path) -> None:
    """A ``.pt`` path (any case) loads the network as a greedy policy player named after the file; a
    missing one is named before anything is loaded."""
    from agents.policy import PolicyPlayer

    upper = tmp_path / "Star2.PT"
    shutil.copy(STAR2, upper)
    game = Game(Rules("star", 2))
    for path in (STAR2, upper):
        player = make_player(f" {path} ", seed=1)  # surrounding spaces are dropped
        assert isinstance(player, PolicyPlayer)
        assert player.name == f"policy:{path.stem}" and player.temperature == 0.0
        assert player.select_move(game) in game.legal_moves()
    with pytest.raises(ValueError, match=r"^checkpoint file 'missing\.pt' does not exist$"):
        make_player("missing.pt")
    # options after a checkpoint were "unknown player" (they are an exported opponent's)
    with pytest.raises(ValueError, match=r"^a checkpoint player takes no options, got '.*\.pt:temperature=nan'"):
        make_player(f"{STAR2}:temperature=nan")


@pytest.mark.parametrize("name", ["missing.onnx", "missing.ONNX", "missing.onnx:temperature=0.5"])
def test_a_missing_opponent_file_is_named(name: str) -> None:
    """An ``.onnx`` name (options after a colon allowed) must name an existing file."""
    path = name.partition(":")[0]
    with pytest.raises(ValueError, match=f"^opponent file '{re.escape(path)}' does not exist$"):
        make_player(name)


def test_every_levels_fallback_is_a_valid_bot_spec() -> None:
    """``FALLBACK_LEVELS`` holds the bot spec of each level where the ladder has no entry (the 1-seat solitaire):
    each parses, and a level plays that game with it."""
    from agents.ladder import LevelPlayer

    solitaire = Rules("star", 1)
    assert list(FALLBACK_LEVELS) == ["easy", "medium", "hard", "expert"]
    for level, spec in FALLBACK_LEVELS.items():
        bot, _ = parse_spec(spec)
        player = make_player(level, seed=0)
        assert isinstance(player, LevelPlayer) and player.name == level
        assert player.describe(solitaire).startswith(f"{spec} (built-in: ")
        concrete = player.player_for(solitaire)
        assert type(concrete).__name__ == BOTS[bot].partition(":")[2] and concrete.name == level


# --- agents/player.py -----------------------------------------------------------------------------


def test_check_number_bounds_are_inclusive_unless_strict() -> None:
    """``low`` and ``high`` themselves pass (``strict`` refuses ``low``); the message states the bounds."""
    assert check_number("x", 1, high=1.0) == 1.0 and isinstance(check_number("x", 1, high=1.0), float)
    assert check_number("x", 0.0) == 0.0 and check_number("x", -5, low=None) == -5.0
    with pytest.raises(ValueError, match=r"^x must be > 0 \(a finite number\), got 0$"):
        check_number("x", 0, strict=True)
    with pytest.raises(ValueError, match=r"^x must be >= 0 and <= 1 \(a finite number\), got 1.5$"):
        check_number("x", 1.5, high=1.0)
    with pytest.raises(ValueError, match=r"^x must be a finite number, got nan$"):
        check_number("x", float("nan"), low=None)
    with pytest.raises(ValueError, match=r"^x must be <= 2 \(a finite number\), got True$"):
        check_number("x", True, low=None, high=2.0)


def test_check_int_check_seed_and_check_time_return_plain_values() -> None:
    """The checks return the value as a plain Python int or float."""
    import numpy as np

    for value in (check_int("n", np.int64(3)), check_seed(np.int32(7))):
        assert type(value) is int
    assert check_int("n", -1, low=-1) == -1
    budget = check_time("t", 2)
    assert budget == 2.0 and type(budget) is float
    assert check_time("t", None) is None and check_seed(None) is None


def test_split_options_errors_and_tail() -> None:
    """Options split on commas; ``tail`` takes the rest of the spec, commas included; errors say ``option``
    unless told what the items are."""
    assert split_options("m:a=1, b = 2", "a=1, b = 2") == [("a", "1"), ("b", "2")]
    assert split_options("m: ", " ") == []
    assert split_options("m:t=1,search=top=6,eval=value", "t=1,search=top=6,eval=value", tail="search") == [
        ("t", "1"), ("search", "top=6,eval=value")]
    with pytest.raises(ValueError, match=r"^empty option in 'm:a=1,,b=2'"):
        split_options("m:a=1,,b=2", "a=1,,b=2")
    with pytest.raises(ValueError, match=r"^option 'a' in 'm:a' must be written key=value$"):
        split_options("m:a", "a")
    with pytest.raises(ValueError, match=r"^setting 'a' is given twice in 'm:a=1,a=2'$"):
        split_options("m:a=1,a=2", "a=1,a=2", "setting")


def test_search_time_is_the_bots_own_limit_capped_by_the_budget() -> None:
    """No budget: the bot's own limit (or none); a budget: 70% of it less 10 ms, never under 40% of it, and the
    bot's own limit if that is shorter."""
    from agents.player import search_time

    assert search_time(2.0, None) == 2.0 and search_time(None, None) is None
    assert search_time(None, 1.0) == pytest.approx(0.69) and search_time(5.0, 1.0) == pytest.approx(0.69)
    assert search_time(0.5, 1.0) == 0.5
    assert search_time(None, 0.02) == pytest.approx(0.008)  # 70% less 10 ms would be 4 ms: 40% of it instead
    assert search_time(None, 0.1) == pytest.approx(0.06)  # 70% less 10 ms, above 40% (0.04)


def test_checked_moves_checks_the_budget_then_the_game() -> None:
    """A bot's start: ``time_budget`` named in its error, a game that is not a ``Game`` a TypeError (a position
    text told how to load it), a finished game a ValueError, else the legal moves."""
    from agents.player import check_is_game, checked_moves

    game = Game(Rules("star", 2))
    assert checked_moves(game, None) == checked_moves(game, 1.0) == game.legal_moves()
    with pytest.raises(ValueError, match=r"^time_budget must be > 0 seconds \(a finite number\) or none, got 0$"):
        checked_moves(game, 0)
    text = game.position()
    with pytest.raises(TypeError, match=r"^select_move needs a halma_env.Game, got str \(load a position text with "
                                        r"Game.from_position\)$"):
        checked_moves(text, None)
    with pytest.raises(TypeError, match=r"^select_move needs a halma_env.Game, got NoneType$"):
        check_is_game(None)
    game.resign(0)
    with pytest.raises(ValueError, match=r"^no legal move: the game is over$"):
        checked_moves(game, None)


# --- agents/policy.py -----------------------------------------------------------------------------


def _star2_net() -> HalmaNet:
    from agents.checkpoint import load_checkpoint, model_from_checkpoint

    return model_from_checkpoint(load_checkpoint(STAR2), STAR2)


def test_a_policy_player_refuses_other_games_but_plays_the_solitaire() -> None:
    """A network plays its own variant and seat count, and the 1-seat crossing of its board; anything else
    (and a finished game, and a bad time budget or temperature) is a ValueError."""
    from agents.policy import PolicyPlayer

    player = PolicyPlayer(_star2_net())
    assert player.name == "policy" and player.temperature == 0.0
    for rules in (Rules("star", 2), Rules("star", 1)):
        game = Game(rules)
        assert player.select_move(game) in game.legal_moves()
        assert player.action_probabilities(game)[0] == game.legal_moves()
    for variant, seats in (("star", 3), ("diamond", 2)):
        message = f"^policy plays star with 2 seats, not {variant} with {seats}$"
        with pytest.raises(ValueError, match=message):
            player.select_move(Game(Rules(variant, seats)))
        with pytest.raises(ValueError, match=message):
            player.action_probabilities(Game(Rules(variant, seats)))
    over = Game(Rules("star", 2))
    over.resign(0)
    for ask in (player.select_move, player.action_probabilities):
        with pytest.raises(ValueError, match=r"^no legal move: the game is over$"):
            ask(over)
    with pytest.raises(ValueError, match="^time_budget must be > 0 seconds"):
        player.select_move(Game(Rules("star", 2)), 0)
    with pytest.raises(ValueError, match="^temperature must be >= 0"):
        PolicyPlayer(_star2_net(), temperature=-1.0)


def test_policy_probabilities_and_sampling() -> None:
    """``action_probabilities`` is a distribution over the legal moves whose most likely move is the greedy
    choice; with a temperature the player samples from it, seeded (same seed, same moves)."""
    import numpy as np

    from agents.policy import PolicyPlayer

    net = _star2_net()
    game = Game(Rules("star", 2))
    greedy = PolicyPlayer(net)
    for _ in range(6):
        game.play(greedy.select_move(game))
    moves, p = greedy.action_probabilities(game)
    assert moves == game.legal_moves() and p.shape == (len(moves),) and p.sum() == pytest.approx(1.0)
    assert moves[int(np.argmax(p))] == greedy.select_move(game)
    a, b = PolicyPlayer(net, seed=5, temperature=1.0), PolicyPlayer(net, seed=5, temperature=1.0)
    drawn = [a.select_move(game) for _ in range(120)]
    assert drawn[:20] == [b.select_move(game) for _ in range(20)]
    assert set(drawn) <= set(moves) and len(set(drawn)) > 1
    for i, move in enumerate(moves):  # the draws follow the probabilities (temperature 1)
        assert drawn.count(move) / len(drawn) == pytest.approx(p[i], abs=0.15)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seed": -1}, "seed must be None or an integer >= 0, got -1"),
    ({"seed": 1.5}, "seed must be None or an integer >= 0, got 1.5"),
    ({"temperature": float("nan")}, "temperature must be >= 0 (a finite number), got nan"),
    ({"device": "bogus"}, "device 'bogus' is not a torch device (expected cpu, cuda or cuda:N)"),
    ({"device": "cuda:99"}, "device 'cuda:99'"),  # no such GPU here: not "checkpoint ... is corrupt"
], ids=["seed-negative", "seed-float", "temperature-nan", "device-unknown", "device-missing"])
def test_a_policy_players_arguments_are_named_before_the_file_is_read(tmp_path: Path, kwargs: dict[str, Any],
                                                                       message: str) -> None:
    """The seed, temperature and device are checked as the other players check them, before the checkpoint is
    read (a fine file is never called corrupt for a device this machine lacks)."""
    from agents.policy import PolicyPlayer, load_policy_player

    for path in (STAR2, tmp_path / "missing.pt"):
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            load_policy_player(path, **kwargs)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        PolicyPlayer(_star2_net(), **kwargs)


def test_a_policy_player_reads_the_file_to_the_cpu_and_moves_the_network_to_its_device(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint is read with ``map_location="cpu"`` whatever the device (a file saved from a GPU loads on
    a machine without one); a ``torch.device`` is taken too."""
    import torch

    import agents.policy
    from agents.policy import PolicyPlayer, load_policy_player

    real = agents.policy.load_checkpoint
    seen: list[object] = []

    def spy(path: object, **kwargs: Any) -> dict[str, Any]:
        seen.append(kwargs.get("map_location"))
        return real(path, **kwargs)

    monkeypatch.setattr(agents.policy, "load_checkpoint", spy)
    player = load_policy_player(STAR2, device="cpu")
    assert seen == ["cpu"] and player.device == torch.device("cpu")
    assert PolicyPlayer(player.net, device=torch.device("cpu")).device == torch.device("cpu")
    # as on a machine with a GPU (the device check passes; the network then runs on the CPU here)
    monkeypatch.setattr(agents.policy, "check_device", lambda name, what: torch.device("cpu"))
    load_policy_player(STAR2, device="cuda")
    assert seen == ["cpu", "cpu"]


def test_a_tiny_temperature_samples_the_best_moves_not_nan() -> None:
    """``softmax(logits / 1e-300)`` was NaN (inf - inf); shifted so the best logit is 0 first, any temperature > 0
    samples: a tiny one the best move, evenly among exact ties; extreme logits at temperature 1 too."""
    import torch

    from agents.policy import PolicyPlayer

    net = _star2_net()
    game = Game(Rules("star", 2))
    greedy = PolicyPlayer(net).select_move(game)
    assert PolicyPlayer(net, seed=0, temperature=1e-300).select_move(game) == greedy
    player = PolicyPlayer(net, seed=3, temperature=5e-324)  # the smallest float > 0
    moves = game.legal_moves()
    player._logits = lambda g, m: torch.tensor([1.0, 3.0, -1e30, 3.0] + [0.0] * (len(m) - 4))  # type: ignore[method-assign]
    drawn = [player.select_move(game) for _ in range(60)]
    assert set(drawn) == {moves[1], moves[3]}
    player.temperature = 1.0
    player._logits = lambda g, m: torch.tensor([3e38, -3e38] + [-3e38] * (len(m) - 2))  # type: ignore[method-assign]
    assert player.select_move(game) == moves[0]


def test_a_network_with_non_finite_weights_is_named_not_played() -> None:
    """A network built in memory (no loader to refuse it) whose scores are NaN: greedy play would quietly take
    the first legal move and sampling would fail inside numpy."""
    import torch

    from agents.policy import PolicyPlayer

    net = _star2_net()
    with torch.no_grad():
        net.embed.bias.fill_(float("nan"))
    game = Game(Rules("star", 2))
    for temperature in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"^policy: the network scores the moves NaN or inf \(are its weights "
                                             r"finite\?\)$"):
            PolicyPlayer(net, seed=0, temperature=temperature).select_move(game)


# --- agents/vecgame.py ----------------------------------------------------------------------------


def _random_legal(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    import torch

    return torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)


def test_the_scalar_vector_game_checks_its_arguments() -> None:
    """A batch of at least one game, a known reward scheme, one action per game."""
    import numpy as np

    from agents.vecgame import ScalarBatchedGame
    from halma_env.rewards import REWARD_SCHEMES

    rules = Rules("star", 2)
    for size in (0, -1):
        with pytest.raises(ValueError, match=f"^batch_size must be >= 1, got {size}$"):
            ScalarBatchedGame(rules, size)
    with pytest.raises(ValueError, match="^reward must be one of place, win_loss, got 'score'$"):
        ScalarBatchedGame(rules, 1, reward="score")
    for scheme in REWARD_SCHEMES:
        assert ScalarBatchedGame(rules, 1, reward=scheme).reward == scheme
    one = ScalarBatchedGame(rules, 1)
    assert len(one.games) == 1 and one.to_move.tolist() == [0]
    with pytest.raises(ValueError, match=r"^actions must have shape \(1,\), got \(2,\)$"):
        one.step(np.zeros(2, dtype=np.int64))
    assert one.games[0].ply == 0


def test_the_scalar_vector_game_agrees_with_the_batched_engine() -> None:
    """Seats to move (the first seat rotating per environment and game), observations, masks, legal lists,
    rewards and the ``info`` of ended games are those of ``BatchedGame(rotate_first_seat=True)``."""
    import torch

    from agents.vecgame import ScalarBatchedGame
    from halma_env.batched import END_REASONS, BatchedGame

    rules = Rules("star", 3, move_limit=7, limit_outcome="progress")
    sg = ScalarBatchedGame(rules, 4, reward="place", progress_shaping=0.5)
    bg = BatchedGame(rules, 4, reward="place", progress_shaping=0.5, rotate_first_seat=True)
    assert sg.to_move.tolist() == [0, 1, 2, 0]  # game 0 of environment b starts with seat b % n
    rng = torch.Generator().manual_seed(3)
    ended = 0
    for t in range(24):
        assert torch.equal(sg.to_move, bg.to_move), f"step {t}: to_move"
        assert torch.equal(sg.observation(), bg.observation()), f"step {t}: observation"
        assert torch.equal(sg.action_mask(), bg.action_mask()), f"step {t}: mask"
        (legal, valid), (b_legal, b_valid) = sg.legal_lists(), bg.legal_lists()
        assert torch.equal(legal, b_legal) and torch.equal(valid, b_valid), f"step {t}: legal lists"
        actions = _random_legal(sg.action_mask(), rng)
        (r1, d1, i1), (r2, d2, i2) = sg.step(actions), bg.step(actions)
        assert torch.equal(d1, d2) and torch.allclose(r1, r2, atol=1e-6), f"step {t}: {r1} vs {r2}"
        assert set(i1) == {"places", "length", "finished", "end_reason"}
        assert i1["places"].tolist() == i2["places"].tolist(), f"step {t}: places"
        assert i1["length"].tolist() == i2["length"].tolist(), f"step {t}: length"
        assert i1["finished"].tolist() == i2["finished"].tolist(), f"step {t}: finished"
        assert i1["end_reason"] == [END_REASONS[c] or None for c in i2["end_reason"].tolist()], f"step {t}"
        ended += int(d1.sum())
    assert ended >= 8  # every environment played through its first games, and restarted


def test_a_finished_game_reports_its_places_and_restarts() -> None:
    """A game that ends in ``step`` reports its places, length, finished seats and end reason, earns the
    place rewards, and is replaced by a new game whose first seat is the next one; the others go on."""
    import numpy as np

    from agents.vecgame import ScalarBatchedGame
    from halma_env.rewards import place_rewards
    from tests.engine_helpers import one_move_from_finishing

    game, finishing = one_move_from_finishing()
    sg = ScalarBatchedGame(Rules("star", 2), 2, reward="win_loss")
    sg.games[0] = game
    other = sg.games[1]
    move = other.legal_moves()[0]
    actions = np.array([sg.encoding.encode_move(0, finishing[0].src, finishing[0].dst),
                        sg.encoding.encode_move(1, move.src, move.dst)])
    plies = game.ply
    rewards, done, info = sg.step(actions)
    assert done.tolist() == [True, False]
    assert rewards.tolist() == [place_rewards([1, 2], "win_loss"), [0.0, 0.0]] == [[1.0, -1.0], [0.0, 0.0]]
    assert info["places"].tolist() == [[1, 2], [0, 0]] and info["length"].tolist() == [plies + 1, 0]
    assert info["finished"].tolist() == [[True, False], [False, False]]
    assert info["end_reason"] == ["finished", None]
    assert sg.games[0].ply == 0 and sg.games[0].to_move == 1  # game 1 of environment 0: seat 1
    assert sg.games[1] is other and other.ply == 1


def test_the_legal_lists_are_as_wide_as_the_longest() -> None:
    """One legal move in every game: lists one wide, ascending actions, the padding invalid."""
    from agents.vecgame import ScalarBatchedGame
    from tests.engine_helpers import position

    # star 2: seat 1's piece on the top tip, boxed in by seat 0's pieces but for one jump
    boxed = Game.from_position(position("star", 2, {0: "1", 1: "0", 2: "0", 3: "0", 60: "0"}, to_move=1))
    assert len(boxed.legal_moves()) == 1
    sg = ScalarBatchedGame(Rules("star", 2), 2)
    sg.games = [boxed, boxed.copy()]
    legal, valid = sg.legal_lists()
    move = boxed.legal_moves()[0]
    assert legal.tolist() == [[sg.encoding.encode_move(1, move.src, move.dst)]] * 2 and valid.tolist() == [[True]] * 2
    sg.games[1] = Game(Rules("star", 2))
    legal, valid = sg.legal_lists()
    width = len(sg.games[1].legal_moves())
    assert legal.shape == (2, width) and valid.sum(1).tolist() == [1, width]
    assert legal[1].tolist() == sorted(legal[1].tolist()) and legal[0, 1:].eq(0).all()


def test_a_king_moving_onto_its_tip_is_shaped_by_its_own_table() -> None:
    """Progress shaping credits a king's move by its distance to the goal tip and any other piece's by
    its distance to the goal (onto the tip too): the mover's change of ``seat_potential`` over its start
    value."""
    import numpy as np

    from agents.vecgame import ScalarBatchedGame
    from halma_env.layout import layout
    from halma_env.rewards import seat_potential
    from tests.engine_helpers import position

    # diamond 3: seat 0's king on hole 1 beside its empty goal tip (hole 0), ordinary pieces on the rest
    # of its goal and one on hole 40; seats 1 and 2 only their kings
    lay = layout("diamond", 3)
    pieces = {h: "0" for h in lay.goals[0] if h != 0}
    pieces[1], pieces[40] = "A", "0"
    for s in (1, 2):
        king_start = lay.king_start[s]
        assert king_start is not None
        pieces[king_start] = "ABC"[s]
    rules = Rules("diamond", 3)
    start = seat_potential(Game(rules), 0)
    for src, dst in [(1, 0), (2, 0), (40, 28)]:
        game = Game.from_position(position("diamond", 3, pieces))
        sg = ScalarBatchedGame(rules, 1, progress_shaping=2.0)
        sg.games[0] = game.copy()
        rewards, done, _ = sg.step(np.array([sg.encoding.encode_move(0, src, dst)]))
        after = game.copy()
        after.play((src, dst))
        expected = 2.0 * (seat_potential(game, 0) - seat_potential(after, 0)) / start
        assert not bool(done[0]) and float(rewards[0, 0]) == pytest.approx(expected, abs=1e-6), (src, dst)
        assert rewards[0, 1:].tolist() == [0.0, 0.0]
        if src == 1:  # the king's step onto its tip is progress
            assert expected > 0
        if src == 2:  # an ordinary piece's, from the goal onto the tip, is not
            assert expected == 0



# --- agents/parallel.py ---------------------------------------------------------------------------


def _group_checks(rank: int, world_size: int) -> dict:
    """Run in each process of ``parallel.spawn``: the collectives, and what each process sees of them."""
    import os

    import torch

    from agents import parallel

    p = torch.nn.Parameter(torch.zeros(2))
    grad = p.grad = torch.full((2,), float(rank + 1))
    total = parallel.average_gradients([p], rank + 1)  # one parameter; weights 1 and 2 with two processes
    module = torch.nn.BatchNorm1d(2)  # parameters and buffers
    with torch.no_grad():
        for tensor in list(module.parameters()) + list(module.buffers()):
            tensor.fill_(rank + 5)
    parallel.broadcast_parameters(module)
    state = [t.flatten().tolist() for t in list(module.parameters()) + list(module.buffers())]
    return {"rank": rank, "active": parallel.active(), "ranks": parallel.gather(rank), "total": total,
            "grad": p.grad.tolist(), "kept_grad": p.grad is grad, "states": parallel.gather(state),
            "mean": parallel.weighted_mean(float(rank + 1), rank + 1), "threads": os.environ.get("OMP_NUM_THREADS")}


def test_spawn_returns_process_0s_result_and_the_collectives_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes: process 0's result comes back; ``gather`` lists every rank; the gradient is the
    weighted mean; every process holds process 0's parameters and buffers after ``broadcast_parameters``;
    each process runs with one OpenMP thread unless told otherwise.  One process in a group of one: the
    collectives return at once, leaving the gradient object as it was."""
    from agents import parallel

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    two = parallel.spawn(_group_checks, 2)
    assert (two["rank"], two["active"], two["ranks"], two["threads"]) == (0, True, [0, 1], "1")
    assert two["total"] == 3.0 and two["grad"] == pytest.approx([(1 * 1 + 2 * 2) / 3] * 2) and not two["kept_grad"]
    assert two["mean"] == pytest.approx((1 * 1 + 2 * 2) / 3)
    states = two["states"]
    assert states[0] == states[1] and all(value == 5 for t in states[1] for value in t), states
    one = parallel.spawn(_group_checks, 1)
    assert (one["rank"], one["active"], one["ranks"], one["total"], one["mean"]) == (0, False, [0], 1.0, 1.0)
    assert one["grad"] == [1.0, 1.0] and one["kept_grad"]


def test_the_collectives_without_a_group_return_their_input() -> None:
    """The trainer calls the collectives unconditionally: with no process group they are the identity."""
    import torch

    from agents import parallel

    assert not parallel.active()
    assert parallel.weighted_mean(2.5, 4) == 2.5 and parallel.any_true(True) is True and parallel.gather(3) == [3]
    module = torch.nn.Linear(2, 1)
    before = [t.clone() for t in module.parameters()]
    parallel.broadcast_parameters(module)
    assert all(torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))


def test_the_first_failure_is_the_earliest_error_file(tmp_path: Path) -> None:
    """Of the error files the failed processes wrote, the earliest names the process and its traceback."""
    import torch.multiprocessing as mp

    from agents import parallel

    assert parallel._first_failure(tmp_path, [11, 12]) is None
    (tmp_path / "error-1.txt").write_text("2.5\nTraceback: process 1 failed\n")
    (tmp_path / "error-0.txt").write_text("3.0\nTraceback: connection closed by peer\n")
    found = parallel._first_failure(tmp_path, [11, 12])
    assert isinstance(found, mp.ProcessRaisedException)
    assert (found.error_index, found.error_pid) == (1, 12)
    assert str(found) == "\n\n-- Process 1 terminated with the following error:\nTraceback: process 1 failed\n"


def _interrupt_the_parent(rank: int, world_size: int) -> None:
    import os
    import signal
    import time

    if rank == 0:
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C of the process that called spawn
    time.sleep(60)


def test_an_interrupt_stops_the_processes_and_is_raised() -> None:
    """A KeyboardInterrupt while waiting ends the processes and reaches spawn's caller as it is."""
    import signal

    from agents import parallel

    # Ctrl-C raises KeyboardInterrupt here even where this process inherited an ignored SIGINT (a
    # background job of a non-interactive shell)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        try:
            parallel.spawn(_interrupt_the_parent, 2)
        finally:
            signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 50  # the processes were stopped, not waited for


# --- agents/imitation.py --------------------------------------------------------------------------


def _imitation_cfg(**changes: Any) -> TrainConfig:
    from agents.config import from_dict
    from tests.test_train import tiny_config

    data = tiny_config(**changes)
    data["imitation"].update(bot="greedy", games=3, epochs=1)
    return from_dict(data)


@pytest.mark.parametrize("move_limit", [2, 10])
def test_recorded_decisions_replay_the_bots_games_with_their_returns(move_limit: int) -> None:
    """Replayed from the recorded choices, each game gives the recorded observations and legal lists; a
    decision's return is the mover's progress shaping plus, on its last move, its place reward, discounted
    by ``ppo.gamma`` along its own moves (a seat that never moved has none); every seat's bot is seeded per
    game (the seeds are part of a run's reproducibility: changing them changes every run's games)."""
    import torch

    from agents.imitation import record
    from halma_env.encoding import encoding
    from halma_env.rewards import seat_potential, seat_rewards

    n, seed, gamma, shaping = 3, 7, 0.8, 2.0
    cfg = _imitation_cfg(game__num_players=n, game__move_limit=move_limit, game__progress_shaping=shaping,
                         ppo__gamma=gamma)
    asked: list[tuple[str, int]] = []

    def make_bot(name: str, bot_seed: int) -> Player:
        asked.append((name, bot_seed))
        return make_player(name, seed=bot_seed)

    demos = record(cfg, make_bot, seed=seed)
    assert asked == [("greedy", seed * 1_000_003 + g * n + s) for g in range(3) for s in range(n)]
    enc = encoding("star", n)
    expected = torch.full((len(demos),), float("nan"))
    row = 0
    for g in range(3):
        game = Game(cfg.game.rules(first_seat=g % n))
        phi_start = [seat_potential(game, s) for s in range(n)]
        steps: dict[int, list[tuple[int, float]]] = {s: [] for s in range(n)}
        while not game.is_over:
            seat, moves = game.to_move, game.legal_moves()
            assert int(demos.game[row]) == g
            assert torch.equal(demos.obs[row], torch.from_numpy(enc.observation(game, seat)))
            assert demos.legal[row][demos.valid[row]].tolist() == [enc.encode_move(seat, m.src, m.dst) for m in moves]
            before = seat_potential(game, seat)
            game.play(moves[int(demos.choice[row])])
            steps[seat].append((row, shaping * (before - seat_potential(game, seat)) / phi_start[seat]))
            row += 1
        final = seat_rewards(game, cfg.game.reward)
        assert (move_limit == 2) == any(not mine for mine in steps.values())
        for seat, mine in steps.items():
            future = float(final[seat] or 0.0)
            for index, gain in reversed(mine):
                future = gain + future
                expected[index] = future
                future *= gamma
    assert row == len(demos) == 3 * move_limit
    assert torch.allclose(demos.ret, expected, atol=1e-5)
    assert (demos.ret != 0).any()


def test_recording_needs_a_bot() -> None:
    from agents.imitation import record

    cfg = _imitation_cfg()
    cfg.imitation.bot = None
    with pytest.raises(ValueError, match="^imitation.bot is null"):
        record(cfg, lambda name, seed: make_player(name, seed=seed), seed=0)


def _table_net(actions: int) -> torch.nn.Module:
    """A stand-in network: a learnable score per action, and a value linear in the observation's sum."""
    import torch
    from torch import nn

    class TableNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.score = nn.Parameter(torch.randn(actions, generator=torch.Generator().manual_seed(0)))
            self.scale = nn.Parameter(torch.tensor(0.1))

        def forward(self, obs: torch.Tensor, legal: torch.Tensor,
                    valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.score[legal].masked_fill(~valid, -1e9), self.scale * obs.float().flatten(1).sum(1)

    return TableNet()


def _demonstrations(games: int, per_game: int = 6, actions: int = 12, width: int = 5) -> Demonstrations:
    """Random decisions: 1 to ``width`` distinct legal actions each, a choice among them, a return."""
    import torch

    from agents.imitation import Demonstrations

    g = torch.Generator().manual_seed(games)
    rows = games * per_game
    lengths = torch.randint(1, width + 1, (rows,), generator=g)
    legal = torch.stack([torch.randperm(actions, generator=g)[:width] for _ in range(rows)])
    valid = torch.arange(width)[None, :] < lengths[:, None]
    legal = legal * valid
    choice = (torch.rand(rows, generator=g) * lengths).long()
    return Demonstrations(torch.randint(-1, 2, (rows, 2, 3, 12), generator=g, dtype=torch.int8), legal, valid,
                          choice, torch.randn(rows, generator=g), torch.arange(games).repeat_interleave(per_game))


def _figures(net: torch.nn.Module, demos: Demonstrations) -> tuple[float, float, float]:
    """Mean cross-entropy, mean squared value error and accuracy of ``net`` on ``demos``, row by row."""
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        logits, value = net(demos.obs, demos.legal, demos.valid)
    ce = F.cross_entropy(logits, demos.choice, reduction="none")
    return (float(ce.mean()), float(((value - demos.ret) ** 2).mean()),
            float((logits.argmax(1) == demos.choice).float().mean()))


@pytest.mark.parametrize("games", [9, 10, 21])
def test_fit_reports_the_last_epochs_figures_and_the_held_out_tenth(games: int) -> None:
    """With a zero learning rate the network stays as it was, so fit's figures are its mean losses and
    accuracy over the training positions, and the held-out figures those over the last tenth of the games
    (none held out under 10 games); small minibatches give the same means."""
    import torch

    from agents.imitation import fit

    demos = _demonstrations(games)
    cfg = _imitation_cfg()
    cfg.imitation.learning_rate, cfg.imitation.epochs, cfg.imitation.minibatch_size = 0.0, 2, 4
    net = _table_net(12)
    stats = fit(net, demos, cfg, torch.device("cpu"))
    held_out = games // 10
    train = demos.subset(torch.nonzero(demos.game < games - held_out).squeeze(1))
    test = demos.subset(torch.nonzero(demos.game >= games - held_out).squeeze(1))
    assert len(train) + len(test) == len(demos) and len(test) == 6 * held_out
    policy, value, accuracy = _figures(net, train)
    assert stats.pop("imitation/positions") == len(demos)
    assert stats.pop("imitation/policy_loss") == pytest.approx(policy, rel=1e-5)
    assert stats.pop("imitation/value_loss") == pytest.approx(value, rel=1e-5)
    assert stats.pop("imitation/accuracy") == pytest.approx(accuracy)
    if held_out:
        _, test_value, test_accuracy = _figures(net, test)
        assert stats.pop("imitation/held_out_accuracy") == pytest.approx(test_accuracy)
        assert stats.pop("imitation/held_out_value_loss") == pytest.approx(test_value, rel=1e-5)
    assert stats == {}


def test_fit_lowers_both_losses() -> None:
    """Fitting moves the policy toward the choices and the value toward the returns."""
    import torch

    from agents.imitation import evaluate_fit, fit

    demos = _demonstrations(10)
    cfg = _imitation_cfg()
    cfg.imitation.learning_rate, cfg.imitation.epochs, cfg.imitation.minibatch_size = 0.05, 20, 16
    net = _table_net(12)
    policy, value, _ = _figures(net, demos)
    fit(net, demos, cfg, torch.device("cpu"))
    after_policy, after_value, _ = _figures(net, demos)
    assert after_policy < policy and after_value < value
    assert net.training  # fit leaves the network in training mode, evaluate_fit too
    figures = evaluate_fit(net, demos, 7, torch.device("cpu"))
    assert net.training and figures["imitation/held_out_value_loss"] == pytest.approx(after_value, rel=1e-5)


def test_imitate_records_fits_and_times_both() -> None:
    """``imitate`` returns fit's figures for the recorded games and the seconds each stage took."""
    import torch

    from agents.imitation import imitate
    from agents.network import build_network

    cfg = _imitation_cfg(game__move_limit=6)
    net = build_network("star", 2, cfg.network)
    started = time.perf_counter()
    stats = imitate(net, cfg, lambda name, seed: make_player(name, seed=seed), torch.device("cpu"), seed=0)
    took = time.perf_counter() - started
    assert stats["imitation/positions"] == 3 * 6 and set(stats) == {
        "imitation/policy_loss", "imitation/value_loss", "imitation/accuracy", "imitation/positions",
        "imitation/record_s", "imitation/fit_s"}
    assert 0 < stats["imitation/record_s"] < took and 0 < stats["imitation/fit_s"] < took


def test_demonstrations_subset_and_move_together() -> None:
    """``subset`` and ``to`` keep every field row-aligned; ``len`` counts the decisions."""
    import torch

    from agents.imitation import FIELDS

    demos = _demonstrations(3)
    assert len(demos) == 18
    part = demos.subset(torch.tensor([4, 0]))
    moved = part.to(torch.device("cpu"))
    assert len(part) == 2
    for name in FIELDS:
        assert torch.equal(getattr(part, name), getattr(demos, name)[[4, 0]]), name
        assert torch.equal(getattr(moved, name), getattr(part, name)), name


def _crossing_cfg() -> TrainConfig:
    from agents.config import from_dict
    from tests.test_train import tiny_config

    return from_dict(tiny_config(crossing__planner_width=4, crossing__detours=3, crossing__detour_width=3,
                                 crossing__coef=1.0))


def _short_lines() -> tuple[Game, CrossingLines]:
    """The solitaire's start and hand-made lines: a one-move main line, and three detours that each stray
    from the start (``k % 1 == 0`` moves along the main line) and go on one move."""
    from agents.imitation import CrossingLines

    start = Game(Rules("star", 1))
    moves = start.legal_moves()
    detours = []
    for stray in moves[1:4]:
        after = start.copy()
        after.play(stray)
        detours.append((stray, [after.legal_moves()[0]]))
    return start, CrossingLines([moves[0]], detours)


def test_each_detour_strays_from_the_main_line() -> None:
    """A detour starts ``k % len(main)`` moves along the main line with a legal move other than the planned
    one, and goes on with a line planned from there."""
    from agents.imitation import plan_crossing_lines

    lines = plan_crossing_lines(_crossing_cfg(), seed=0)
    assert len(lines.detours) == 3 and len(lines.main) > 3
    for k, (stray, line) in enumerate(lines.detours):
        game = Game(Rules("star", 1))
        for move in lines.main[: k % len(lines.main)]:
            game.play(move)
        assert stray in game.legal_moves() and stray != lines.main[k % len(lines.main)]
        game.play(stray)
        for move in line:
            assert move in game.legal_moves()
            game.play(move)


def test_crossing_demonstrations_replay_every_line() -> None:
    """Each line's positions in order, numbered by line; a detour's length counts its stray move; a plan
    without a main line still replays its detours from the start."""
    import torch

    from agents.imitation import CrossingLines, crossing_demonstrations
    from halma_env.encoding import encoding

    start, lines = _short_lines()
    enc = encoding("star", 1)
    for plan, first_line in ((lines, 0), (CrossingLines([], lines.detours), 1)):
        demos, lengths = crossing_demonstrations(_crossing_cfg(), plan)
        assert lengths == [len(plan.main), 2, 2, 2]
        assert demos.game.tolist() == list(range(first_line, 4)) and demos.ret.tolist() == [0.0] * len(demos)
        for row, (stray, line) in enumerate(plan.detours, start=len(plan.main)):
            game = start.copy()
            game.play(stray)
            assert torch.equal(demos.obs[row], torch.from_numpy(enc.observation(game, 0)))
            assert int(demos.legal[row, demos.choice[row]]) == enc.encode_move(0, line[0].src, line[0].dst)


def test_crossing_lines_with_an_illegal_move_are_refused() -> None:
    """An illegal move in a line, or an illegal stray move, is named with its line."""
    from agents.imitation import CrossingLines, crossing_demonstrations

    start, lines = _short_lines()
    cfg = _crossing_cfg()
    after = start.copy()
    after.play(lines.main[0])
    elsewhere = next(m for m in after.legal_moves() if m not in start.legal_moves())
    with pytest.raises(ValueError, match=f"^crossing line 0: {elsewhere} is not legal in its position$"):
        crossing_demonstrations(cfg, CrossingLines([elsewhere], lines.detours))
    bad_stray = [lines.detours[0], (elsewhere, [])]
    with pytest.raises(ValueError, match=f"^crossing line 2: its stray move {elsewhere} is not legal$"):
        crossing_demonstrations(cfg, CrossingLines(lines.main, bad_stray))
    stray, line = lines.detours[0]
    with pytest.raises(ValueError, match=f"^crossing line 1: {line[0]} is not legal in its position$"):
        crossing_demonstrations(cfg, CrossingLines(lines.main, [(stray, line * 2)]))


def test_crossing_plans_are_saved_anywhere_and_checked_when_read(tmp_path: Path) -> None:
    """The file holds the plan's key (version, variant, the ``crossing.*`` widths, the seed) beside its moves;
    it is written into a new folder if need be; a malformed file or one with too few detours is refused."""
    import json

    from agents.imitation import CROSSING_PLAN_VERSION, crossing_plan_key, load_crossing_lines, save_crossing_lines

    cfg = _crossing_cfg()
    key = crossing_plan_key(cfg, 4)
    assert key == {"version": CROSSING_PLAN_VERSION, "variant": "star", "planner_width": 4, "detours": 3,
                   "detour_width": 3, "seed": 4}
    _, lines = _short_lines()
    path = tmp_path / "new" / "folder" / "plan.json"
    save_crossing_lines(path, cfg, 4, lines)
    data = json.loads(path.read_text())
    assert data == {"key": key, "main": [str(lines.main[0])],
                    "detours": [{"stray": str(s), "line": [str(m) for m in line]} for s, line in lines.detours]}
    assert list(path.parent.iterdir()) == [path]  # no temporary file left
    assert load_crossing_lines(path, cfg, 4) == lines
    for damaged, why in [({**data, "detours": [{"stray": "1-2"}] * 3}, "malformed"),
                         ({**data, "main": "12-13"}, "malformed"),
                         ({**data, "detours": data["detours"][:1]}, "1 detours, the config asks for 3"),
                         ([key], "its key is not")]:
        path.write_text(json.dumps(damaged))
        with pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(path))}: {why}"):
            load_crossing_lines(path, cfg, 4)
    path.write_text("[" * 100_000 + "]" * 100_000)  # nested past the parser's depth: a RecursionError was let out
    with pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(path))}: cannot read it"):
        load_crossing_lines(path, cfg, 4)


def test_a_crossing_plan_that_is_no_regular_file_or_holds_a_huge_number_is_refused_naming_it(tmp_path: Path) -> None:
    """A cached plan holding a number of more than 4300 digits let out Python's own "Exceeds the limit (4300
    digits) for integer string conversion" ValueError, which names no file, and a FIFO at the cache path was
    opened and waited on for ever: both are the ValueError of an unreadable plan, naming the file, and a FIFO
    (or a folder) is refused unread."""
    import json

    from agents.imitation import MAX_PLAN_BYTES, load_crossing_lines, save_crossing_lines
    from tests.file_helpers import fifo_refused_at_once

    cfg = _crossing_cfg()
    _, lines = _short_lines()
    path = tmp_path / "plan.json"
    save_crossing_lines(path, cfg, 4, lines)
    data = json.loads(path.read_text())
    for huge in ('{"key": ' + "9" * 5000 + "}", json.dumps({**data, "main": []})[:-1] + ', "x": ' + "1" * 4301 + "}"):
        path.write_text(huge)
        with pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(path))}: cannot read it "
                                             r"\(Exceeds the limit \(4300 digits\)"):
            load_crossing_lines(path, cfg, 4)
    path.write_bytes(b'{"key": "\xff"}')  # no UTF-8
    with pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(path))}: cannot read it"):
        load_crossing_lines(path, cfg, 4)
    fifo = tmp_path / "fifo.json"
    with fifo_refused_at_once(fifo), pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(fifo))}: "
                                                                     r"cannot read it \(it is a FIFO"):
        load_crossing_lines(fifo, cfg, 4)
    with pytest.raises(ValueError, match=f"^crossing plan {re.escape(str(tmp_path))}: cannot read it \\(it is a "
                                         "directory"):
        load_crossing_lines(tmp_path, cfg, 4)
    assert MAX_PLAN_BYTES >= 16 << 20  # room for the 1000 detours crossing.detours allows


def test_sample_index_is_the_one_move_draw_of_the_network_players() -> None:
    """Checkpoints and exported models choose through agents.player.sample_index: the first best at
    temperature 0, only the best (evenly) at a tiny temperature, the softmax's frequencies at 1."""
    import numpy as np

    from agents.player import sample_index

    rng = np.random.default_rng(0)
    logits = np.array([1.0, 3.0, -1e30, 3.0])
    assert sample_index(logits, 0.0, rng) == 1
    assert {sample_index(logits, 5e-324, rng) for _ in range(60)} == {1, 3}
    draws = [sample_index(np.log(np.array([0.2, 0.8])), 1.0, rng) for _ in range(4000)]
    assert abs(draws.count(1) / 4000 - 0.8) < 0.03
    assert sample_index(np.array([3e38, -3e38], dtype=np.float32), 1.0, rng) == 0  # no overflow, no NaN
