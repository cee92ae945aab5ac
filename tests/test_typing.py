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


def test_calls_as_the_docs_show_them_pass_mypy_and_misuse_does_not(tmp_path: Path) -> None:
    """Agent names and numpy integers for seats, holes and actions, bytes paths, numpy actions for the
    batched engine: each worked and was documented, and each was a mypy error in the user's code.  And the
    hints are read (``agents.load_opponent``, made on first use, was ``Any`` to a type checker).  One mypy run
    for both files: two at once (pytest -n 2) would share the project's mypy cache."""
    (tmp_path / "user.py").write_text(USER_CODE)
    (tmp_path / "misuse.py").write_text(MISUSE)
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             "--no-error-summary", str(tmp_path / "user.py"), str(tmp_path / "misuse.py")],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [line.partition(": error: ") for line in result.stdout.splitlines()]
    assert result.returncode == 1 and [(Path(where.split(":")[0]).name, what) for where, _, what in errors] == [
        ("misuse.py", 'Incompatible types in assignment (expression has type "Player", variable has type "int")  '
                      "[assignment]"),
        ("misuse.py", 'Argument 1 to "piece_at" of "Game" has incompatible type "str"; expected "SupportsIndex"  '
                      "[arg-type]")], result.stdout + result.stderr
