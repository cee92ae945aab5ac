"""RL environments: PettingZoo AEC (``env``, ``raw_env``) and Gymnasium single-agent (``HalmaEnv``,
registered as ``halma_env/Halma-v0``).  Importing this package imports pettingzoo and gymnasium."""

from __future__ import annotations

from halma_env.envs.aec import ENV_NAME, env, raw_env, seat_rewards
from halma_env.envs.players import RandomPlayer, make_player
from halma_env.envs.single_agent import GYM_ID, HalmaEnv, register

register()

__all__ = [
    "ENV_NAME", "GYM_ID", "HalmaEnv", "RandomPlayer", "env", "make_player", "raw_env", "register", "seat_rewards",
]
