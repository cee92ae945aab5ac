"""Bots of other installed packages: the ``halma_env.bots`` entry point group of ``agents.registry``, and
the checks every bot class passes when looked up by name."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import agents.registry as registry
from agents.cli import main
from agents.registry import BOTS, all_bots, bot_parameters, make_player, parse_spec, plugin_bots, valid_names

PLUGIN_MODULE = '''
import random


class MyBot:
    def __init__(self, seed=None, depth=1, noise=0.0, limit=None, name="mybot"):
        self.name, self.depth, self.noise, self.limit = name, depth, noise, limit
        self.reseed(seed)

    def reseed(self, seed):
        self.seed = seed
        self._rng = random.Random(seed)

    def select_move(self, game, time_budget=None):
        moves = game.legal_moves()
        return moves[self._rng.randrange(len(moves))]


class NoName:
    def __init__(self, seed=None, depth=1):
        self.seed = seed

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]


class NoSeed:
    def __init__(self, depth=1, name="noseed"):
        self.name = name

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]


class Required:
    def __init__(self, width, seed=None, name="required"):
        self.name = name

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]


class Kw:
    def __init__(self, **options):
        self.name = options["name"]

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]


class NoMove:
    def __init__(self, seed=None, name="nomove"):
        pass
'''

ENTRY_POINTS = """\
[halma_env.bots]
mybot = mybot_pkg_for_tests.bot:MyBot
noname = mybot_pkg_for_tests.bot:NoName
noseed = mybot_pkg_for_tests.bot:NoSeed
required = mybot_pkg_for_tests.bot:Required
kw = mybot_pkg_for_tests.bot:Kw
nomove = mybot_pkg_for_tests.bot:NoMove
missingmod = mybot_pkg_for_tests_missing.bot:MyBot
brokenimport = mybot_pkg_for_tests.broken:MyBot
greedy = mybot_pkg_for_tests.bot:MyBot
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package installed the way pip leaves one (a module and a dist-info directory with entry_points.txt)
    on a temporary sys.path entry; the registry's once-per-process plugin scan is cleared around it."""
    package = tmp_path / "mybot_pkg_for_tests"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bot.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    (package / "broken.py").write_text("import numpy_that_is_not_installed_for_tests\n")
    info = tmp_path / "mybot_pkg_for_tests-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mybot-pkg-for-tests\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin_bots.cache_clear()
    yield tmp_path
    plugin_bots.cache_clear()
    for name in [m for m in sys.modules if m.startswith("mybot_pkg_for_tests")]:
        del sys.modules[name]


def _plugins_quietly() -> dict[str, str]:
    with pytest.warns(UserWarning):  # the clash with the built-in greedy
        return plugin_bots()


def test_an_installed_plugin_bot_is_a_player_by_name(plugin: Path) -> None:
    _plugins_quietly()
    assert all_bots()["mybot"] == "mybot_pkg_for_tests.bot:MyBot"
    assert list(all_bots())[:len(BOTS)] == list(BOTS)  # built-ins first
    assert "mybot" in valid_names() and "mybot" not in BOTS
    assert bot_parameters("mybot") == {"depth": 1, "noise": 0.0, "limit": None}
    player: Any = make_player("mybot:depth=2", seed=1)
    assert (type(player).__name__, player.name, player.depth, player.seed) == ("MyBot", "mybot:depth=2", 2, 1)
    assert parse_spec("mybot:limit=none,noise=0.5") == ("mybot", {"limit": None, "noise": 0.5})


def test_a_plugin_clashing_with_a_built_in_is_ignored_with_a_warning(plugin: Path) -> None:
    with pytest.warns(UserWarning, match=r"halma_env\.bots plugin 'greedy' = 'mybot_pkg_for_tests\.bot:MyBot' of "
                                         r"mybot-pkg-for-tests is ignored: its name is the built-in bot 'greedy' "
                                         r"\(agents\.bots\.greedy:GreedyBot\)"):
        plugins = plugin_bots()
    assert "greedy" not in plugins
    assert type(make_player("greedy", seed=0)).__name__ == "GreedyBot"


def test_bad_plugin_entries_are_ignored_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [EntryPoint("easy", "m:C", registry.PLUGIN_GROUP), EntryPoint("ladder", "m:C", registry.PLUGIN_GROUP),
               EntryPoint("a:b", "m:C", registry.PLUGIN_GROUP), EntryPoint("nocls", "m", registry.PLUGIN_GROUP),
               EntryPoint("twice", "m:C", registry.PLUGIN_GROUP), EntryPoint("twice", "n:D", registry.PLUGIN_GROUP)]
    monkeypatch.setattr(registry, "_plugin_entry_points", lambda: entries)
    plugin_bots.cache_clear()
    try:
        with pytest.warns(UserWarning) as caught:
            assert plugin_bots() == {"twice": "m:C"}
    finally:
        plugin_bots.cache_clear()
    messages = [str(w.message) for w in caught]
    assert len(messages) == 5
    assert "the level 'easy'" in messages[0] and "rated ladder" in messages[1] and "plain bot name" in messages[2]
    assert "'module:Class'" in messages[3] and "'twice' = 'n:D' is ignored: bot 'twice' is already" in messages[4]


def test_the_plugin_scan_happens_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    entry = EntryPoint("once", "m:C", registry.PLUGIN_GROUP)
    monkeypatch.setattr(registry, "_plugin_entry_points", lambda: calls.append(1) or [entry])
    plugin_bots.cache_clear()
    try:
        for _ in range(3):
            assert all_bots()["once"] == "m:C"
            with pytest.raises(ValueError, match="unknown player 'nobot'"):
                make_player("nobot")
    finally:
        plugin_bots.cache_clear()
    assert calls == [1]


def test_a_process_started_with_its_parents_warnings_does_not_repeat_them(plugin: Path,
                                                                           recwarn: pytest.WarningsRecorder) -> None:
    first = plugin_bots()
    shown = registry.plugin_warnings()
    assert [str(w.message) for w in recwarn] == list(shown) and len(shown) == 1 and "'greedy'" in shown[0]
    recwarn.clear()
    plugin_bots.cache_clear()  # a worker's own scan, after the parent's warnings were handed to it
    try:
        registry.skip_plugin_warnings(shown)
        assert plugin_bots() == first and "mybot" in first  # it sees the plugins all the same
        assert not recwarn and registry.plugin_warnings() == shown  # (which it hands on in turn)
    finally:
        registry._shown_by_parent.clear()


def test_eval_workers_leave_the_plugin_warnings_to_halma_eval(plugin: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A plugin warning is shown once per run, not once more in each worker (three times with --workers 2)."""
    with pytest.warns(UserWarning, match="plugin 'greedy'") as caught:
        assert main(["eval", "mybot", "greedy", "--games", "2", "--workers", "2"]) == 0
    out, err = capfd.readouterr()
    assert "mybot" in out and len(caught) == 1
    assert "is ignored" not in err  # the workers' (spawned: they scan the plugins again, and see mybot)


@pytest.mark.parametrize(("spec", "message"), [
    ("noname", r"^bot 'noname' \(mybot_pkg_for_tests\.bot\.NoName\): its constructor takes no name= keyword "
               r"argument \(a bot's __init__ must accept name= and seed=; see docs/bots\.md, Adding a bot\)$"),
    ("noseed:depth=2", r"^bot 'noseed' \(mybot_pkg_for_tests\.bot\.NoSeed\): its constructor takes no seed= "),
    ("required", r"^bot 'required' \(mybot_pkg_for_tests\.bot\.Required\): constructor parameter width without "
                 r"default \(every parameter other than self needs one"),
    ("nomove", r"^bot 'nomove' \(mybot_pkg_for_tests\.bot\.NoMove\) has no select_move\(game, "),
])
def test_a_bot_class_that_breaks_the_contract_is_a_value_error(plugin: Path, spec: str, message: str) -> None:
    _plugins_quietly()
    with pytest.raises(ValueError, match=message):
        make_player(spec, seed=1)
    with pytest.raises(ValueError, match=message):
        bot_parameters(spec.partition(":")[0])


@pytest.mark.parametrize(("spec", "error"), [
    ("missingmod", "ModuleNotFoundError: No module named 'mybot_pkg_for_tests_missing'"),
    ("brokenimport", "ModuleNotFoundError: No module named 'numpy_that_is_not_installed_for_tests'"),
])
def test_a_plugin_that_cannot_be_imported_is_a_value_error_naming_it(plugin: Path, spec: str, error: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An entry point whose module is missing, or imports one that is, raised a bare ModuleNotFoundError ("No
    module named ..."): no bot or plugin named, and no ValueError, which the environments' opponents and
    check_bot expect of a name that cannot be made."""
    import halma_env
    from agents.testing import BotCheckError, check_bot

    _plugins_quietly()
    target = plugin_bots()[spec]
    message = f"bot '{spec}': the halma_env.bots plugin '{target}' cannot be imported: {error}"
    with pytest.raises(ValueError) as made:
        make_player(spec, seed=1)
    assert str(made.value) == message
    with pytest.raises(ValueError, match=f"^opponents: seat 1: {message}"):
        halma_env.env(num_players=2, opponents={1: spec})
    with pytest.raises(BotCheckError, match=error):
        check_bot(spec)
    assert main(["eval", spec, "greedy", "--games", "2", "--workers", "1"]) == 2
    assert message in capsys.readouterr().err


def test_a_constructor_taking_any_keyword_is_accepted(plugin: Path) -> None:
    _plugins_quietly()
    assert bot_parameters("kw") == {}
    assert make_player("kw", seed=2).name == "kw"


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_non_finite_numbers_are_refused(plugin: Path, value: str) -> None:
    _plugins_quietly()
    with pytest.raises(ValueError, match=f"^mybot parameter noise='{value}': expected a finite number$"):
        make_player(f"mybot:noise={value}")
    with pytest.raises(ValueError, match=f"^mybot parameter limit='{value}': expected a finite number or none$"):
        parse_spec(f"mybot:limit={value}")
    with pytest.raises(ValueError, match=f"^search parameter time='{value}': expected a finite number$"):
        parse_spec(f"search:time={value}")


def test_the_cli_plays_a_plugin_bot(plugin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plugins_quietly()
    assert main(["eval", "mybot", "greedy", "--games", "2", "--workers", "1"]) == 0
    assert "mybot" in capsys.readouterr().out


def test_a_halma_command_shows_a_plugin_warning_as_one_line(plugin: Path) -> None:
    """The real command (Python's own warning display, not pytest's capture): the left-out plugin is one
    ``halma eval: warning:`` line, as errors are; it was Python's form, the registry's file and line and then
    its source line ``warnings.warn(message, stacklevel=2)`` (before 2026-12-07)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-c", "import sys; from agents.cli import main; sys.exit(main())",
                           "eval", "mybot", "random", "--games", "2", "--workers", "1"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("halma eval: warning: halma_env.bots plugin 'greedy' = 'mybot_pkg_for_tests.bot:MyBot' of "
                           "mybot-pkg-for-tests is ignored: its name is the built-in bot 'greedy' "
                           "(agents.bots.greedy:GreedyBot)\n")


def test_other_warnings_keep_pythons_form_and_main_puts_the_format_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.cli
    from agents.files import CommandWarning

    seen: list[str] = []

    def command(name: str | None, argv: list[str]) -> int:
        seen.append(warnings.formatwarning(UserWarning("torch says"), UserWarning, "x.py", 7, "warn()"))
        seen.append(warnings.formatwarning(CommandWarning("left out"), CommandWarning, "x.py", 7, "warn()"))
        return 0

    before = warnings.formatwarning
    monkeypatch.setattr(agents.cli, "_main", command)
    assert main(["eval"]) == 0
    assert seen == ["x.py:7: UserWarning: torch says\n  warn()\n", "halma eval: warning: left out\n"]
    assert warnings.formatwarning is before


def test_the_cli_names_a_broken_bot_class_without_a_traceback(plugin: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _plugins_quietly()
    assert main(["eval", "noname", "greedy", "--games", "2", "--workers", "1"]) == 2
    assert "NoName): its constructor takes no name= keyword" in capsys.readouterr().err


def test_an_environment_takes_a_plugin_bot_as_opponent(plugin: Path) -> None:
    import halma_env

    _plugins_quietly()
    env = halma_env.env(num_players=2, move_limit=20, opponents={"player_1": "mybot:depth=2"})
    env.reset(seed=3)
    seat: Any = env.unwrapped.cpu_seats()["player_1"]  # type: ignore[attr-defined]
    first = seat.seed
    assert (type(seat).__name__, seat.depth, isinstance(first, int)) == ("MyBot", 2, True)
    env.reset(seed=4)  # reseeded through its reseed(), to the new seat seed
    assert env.unwrapped.cpu_seats()["player_1"] is seat and seat.seed != first  # type: ignore[attr-defined]
    env.reset(seed=3)
    assert env.unwrapped.cpu_seats()["player_1"] is seat and seat.seed == first  # type: ignore[attr-defined]
