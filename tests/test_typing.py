"""The public API's type hints say what it takes: a user's code that calls it as the docs show passes mypy
(the packages ship ``py.typed``, so a user's type checker reads these hints)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

USER_CODE = '''
import numpy as np

import agents
from agents.player import Player
from agents.registry import make_player
from halma_env import Game, Rules
from halma_env.batched import BatchedGame
from halma_env.envs.aec import raw_env
from halma_env.records import GameRecord, load_record

env = raw_env(num_players=2)
action: int = env.encode_move("player_0", "113-104")  # an agent name, as docs/environment.md shows
move = env.decode_action("player_1", np.int64(action))  # an action from a numpy array
game = Game()
print(game.piece_at(np.int64(3)), game.pieces(np.int32(0)), game.progress(np.int64(1)), move)
game.legal_destinations(np.int64(111))
record: GameRecord = load_record(b"game.json")  # a bytes path
record.replay(upto=np.int64(0))
batch = BatchedGame(Rules("star", 2), batch_size=2)
batch.step(batch.random_actions().numpy())  # numpy actions
batch.step([0, 0])
player: Player = make_player("greedy")
level: Player = agents.load_opponent("easy")
'''

MISUSE = '''
import agents
from halma_env import Game

count: int = agents.load_opponent("easy")  # a Player, not an int
Game().piece_at("113")  # a hole number, not text
'''


def test_calls_as_the_docs_show_them_pass_mypy(tmp_path: Path) -> None:
    """Agent names and numpy integers for seats, holes and actions, bytes paths, numpy actions for the
    batched engine: each worked and was documented, and each was a mypy error in the user's code."""
    code, out = _mypy(tmp_path, USER_CODE)
    assert (code, out) == (0, ""), out


def test_misuse_is_caught_by_mypy(tmp_path: Path) -> None:
    """The hints are read (``agents.load_opponent``, made on first use, was ``Any`` to a type checker)."""
    code, out = _mypy(tmp_path, MISUSE)
    assert code == 1 and [line.split(": error: ")[1] for line in out.splitlines()] == [
        'Incompatible types in assignment (expression has type "Player", variable has type "int")  [assignment]',
        'Argument 1 to "piece_at" of "Game" has incompatible type "str"; expected "SupportsIndex"  [arg-type]'], out


def _mypy(folder: Path, code: str) -> tuple[int, str]:
    """mypy's exit status and report on ``code`` (as a user's module), with the project's settings."""
    user = folder / "user.py"
    user.write_text(code)
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             "--no-error-summary", str(user)], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    return result.returncode, result.stdout + result.stderr
