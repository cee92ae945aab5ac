"""The public API's type hints say what it takes: a user's code that calls it as the docs show passes mypy
(the packages ship ``py.typed``, so a user's type checker reads these hints)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

USER_CODE = '''
import numpy as np

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
'''


def test_calls_as_the_docs_show_them_pass_mypy(tmp_path: Path) -> None:
    """Agent names and numpy integers for seats, holes and actions, bytes paths, numpy actions for the
    batched engine: each worked and was documented, and each was a mypy error in the user's code."""
    user = tmp_path / "user.py"
    user.write_text(USER_CODE)
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             "--no-error-summary", str(user)], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr
