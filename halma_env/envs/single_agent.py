"""Gymnasium single-agent environment: the learner plays one seat, CPU opponents play the others.

``gymnasium.make("halma_env/Halma-v0", variant="star", num_players=2, seat=0, opponents="random")``.
It runs the PettingZoo ``raw_env`` underneath with every other seat handed to a CPU player, so the
observations, actions, rewards and game ends are exactly the AEC environment's.
See docs/environment.md.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle

from halma_env import GYM_ENTRY_POINT, GYM_ID, Game
from halma_env.envs.aec import action_int, check_seed, copy_state, names_no_seat_by_type, raw_env, seat_named
from halma_env.rules import WrongTypeError, integer_argument, is_sequence
from halma_env.suggest import shown_value


def register() -> None:
    """Register ``halma_env/Halma-v0`` with gymnasium (idempotent)."""
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point=GYM_ENTRY_POINT)


class HalmaEnv(gymnasium.Env, EzPickle):
    """One seat of a Halma-family game against CPU opponents.

    - ``seat``: the learner's seat, or ``None`` for a uniformly drawn seat at every reset.
    - ``opponents``: one spec for every other seat, a sequence with one spec per other seat (in
      seat order, the learner's seat left out), or a mapping seat -> spec; a spec is a player name
      (resolved through the ``halma_env.players`` entry point; ``"random"`` is built in), a callable
      ``(game) -> move`` or an object with ``select_move(game, time_budget=None)``.  Default: random.
    - ``illegal_reward``: an action outside the mask ends the episode with this reward (as PettingZoo's
      TerminateIllegalWrapper does); ``info["illegal_action"]`` is then True.
    - The observation is the AEC dict ``{"observation", "action_mask"}``; ``action_masks()`` gives the
      mask as sb3-contrib's MaskablePPO expects.
    - ``pickle`` stores the constructor arguments (``EzPickle``, as the AEC env: call ``reset()`` on
      the copy); ``copy.deepcopy`` and ``copy.copy`` copy the episode in progress.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}
    action_space: gymnasium.spaces.Discrete  # one action per (source, destination) pair

    def __init__(
        self,
        variant: str = "star",
        num_players: int = 2,
        seat: int | None = 0,
        opponents: Any = None,
        reward: str = "place",
        progress_shaping: float = 0.0,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        info_legal_moves: bool = True,
        move_limit_truncates: bool = True,
        **rule_options: Any,
    ) -> None:
        if isinstance(opponents, Mapping) and not isinstance(opponents, dict):  # read as a dict (and pickled as
            opponents = dict(opponents)  # one: a MappingProxyType cannot be), as raw_env's opponents
        EzPickle.__init__(
            self, variant, num_players, seat, opponents, reward, progress_shaping, illegal_reward, render_mode,
            info_legal_moves, move_limit_truncates, **rule_options,
        )
        self.aec = raw_env(
            variant=variant, num_players=num_players, render_mode=render_mode, reward=reward,
            progress_shaping=progress_shaping, info_legal_moves=info_legal_moves,
            move_limit_truncates=move_limit_truncates, **rule_options,
        )
        n = self.aec.rules.num_players  # a Python int, whatever integer type num_players was
        def message() -> str:
            return f"seat must be a seat 0..{n - 1} or None (drawn at every reset), got {shown_value(seat)}"

        self.fixed_seat = None if seat is None else integer_argument(seat, message)  # (True, 1.0: a TypeError)
        if self.fixed_seat is not None and not 0 <= self.fixed_seat < n:
            raise ValueError(message())
        self.opponents = self._opponent_specs(opponents, n, self.fixed_seat)
        number = isinstance(illegal_reward, (int, float, np.integer, np.floating)) and not isinstance(illegal_reward,
                                                                                                   bool)
        if not number or not math.isfinite(illegal_reward):
            raise (ValueError if number else WrongTypeError)(
                f"illegal_reward must be a finite number, got {shown_value(illegal_reward)}")
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_space("player_0")
        self.action_space = self.aec.action_space("player_0")
        self.seat = self.fixed_seat if self.fixed_seat is not None else 0
        self._assigned: int | None = None
        self._illegal = False

    @staticmethod
    def _opponent_specs(opponents: Any, n: int, seat: int | None) -> dict[int, Any] | list[Any]:
        """Normalise ``opponents``: a mapping is kept by seat, a sequence or one spec as a list.
        Each spec's type is checked here; names are resolved at reset (through the entry point:
        the env does not import ``agents``)."""
        if opponents is None:
            return ["random"] * (n - 1)
        if isinstance(opponents, Mapping):
            keys = {k: seat_named(k, n) for k in opponents}  # seats or agent names, as raw_env's opponents
            bad = [k for k, s in keys.items() if s is None]
            if bad:  # (a key that is neither text nor an integer, 1.0 or None: the wrong type)
                wrong_type = [k for k in bad if names_no_seat_by_type(k)]
                raise (WrongTypeError if wrong_type else ValueError)(
                    f"opponents keys must be seats 0..{n - 1} or their agent names player_0..player_{n - 1}, "
                    f"got {bad}")
            by_seat: dict[int, Any] = {}
            for key, s in keys.items():
                s = cast(int, s)  # (checked above)
                if s in by_seat:
                    raise ValueError(f"opponents: seat {s} is named twice, as {by_seat[s][0]!r} and {key!r}")
                by_seat[s] = (key, opponents[key])
            if seat is not None and seat in by_seat:
                raise ValueError(f"opponents has an entry for seat {seat}, which is the learner's seat")
            specs: dict[int, Any] | list[Any] = {s: spec for s, (_, spec) in by_seat.items()}
        elif is_sequence(opponents):
            if len(opponents) != n - 1:
                raise ValueError(f"opponents must list {n - 1} players (one per other seat), got {len(opponents)}")
            specs = list(opponents)
        else:
            specs = [opponents] * (n - 1)
        for spec in specs.values() if isinstance(specs, dict) else specs:
            if not (isinstance(spec, str) or callable(spec) or hasattr(spec, "select_move")):
                raise WrongTypeError(  # as raw_env's make_player says it (a TypeError, also a ValueError)
                    "opponents: a player is a name, a callable (game) -> move or an object with "
                    f"select_move(game), got {shown_value(spec)}"
                )
        return specs

    def __deepcopy__(self, memo: dict[int, Any]) -> HalmaEnv:
        """A copy of the episode in progress (``EzPickle`` alone would give a fresh env); see
        ``raw_env.__deepcopy__``."""
        return copy_state(self, memo, {"_ezpickle_args", "_ezpickle_kwargs"}, players={"opponents"})

    def __copy__(self) -> HalmaEnv:
        """``copy.copy(env)`` is ``copy.deepcopy(env)``, as for the AEC env (``raw_env.__copy__``)."""
        return copy.deepcopy(self)

    @property
    def agent(self) -> str:
        """The learner's agent name in the underlying AEC env."""
        return self.aec.possible_agents[self.seat]

    @property
    def game(self) -> Game | None:
        """The engine ``Game`` being played (``None`` before the first reset)."""
        return self.aec.game

    def _assign(self, seat: int) -> None:
        """Hand every seat but ``seat`` to its CPU opponent."""
        n = len(self.aec.possible_agents)
        if isinstance(self.opponents, dict):
            specs = {s: self.opponents.get(s, "random") for s in range(n) if s != seat}
        else:
            others = [s for s in range(n) if s != seat]
            specs = dict(zip(others, self.opponents))
        players = {}
        for s, spec in specs.items():  # every player made and checked before anything changes
            try:
                players[s] = self.aec._make_cpu(s, spec)
            except ValueError as e:  # an unknown player name, or a player of another game
                raise ValueError(f"opponents: seat {s}: {e}") from None
        self.aec.game = None  # no game running: the CPU seats must not play now
        self.aec._watch = seat  # CPU seats stop once the learner's place is decided
        self.aec._put_cpu(seat, None, None)
        for s, spec in specs.items():
            self.aec._put_cpu(s, spec, players[s])
        self._assigned = seat

    def _advance(self) -> None:
        """Run the AEC env's dead steps of other seats until the learner is selected."""
        aec = self.aec
        while aec.agents and aec.agent_selection != self.agent:
            aec.step(None)  # only dead agents can be selected here: every other live seat is a CPU

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        seed = check_seed(seed)
        # refused options leave the env as they found it: its generator, seat and episode
        game = self.aec._new_game(options)
        # so does an opponent refused by _assign
        saved = (copy.deepcopy(self._np_random), self._np_random_seed, self.seat)
        super().reset(seed=seed)
        n = len(self.aec.possible_agents)
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(self.np_random.integers(n))
        if self._assigned != self.seat:
            try:
                self._assign(self.seat)
            except ValueError:
                self._np_random, self._np_random_seed, self.seat = saved
                raise
        # CPU players are reseeded at every reset from the env's generator, so that reset() after
        # reset(seed=s) is reproducible too (gymnasium's check_env requires it)
        cpu_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        self.aec._start(cpu_seed, game)
        self._advance()
        self._illegal = False
        if not self.aec._live(self.agent):  # an episode must give the learner a move (and its reward)
            place, reason = self.aec.infos[self.agent]["place"], self.aec.game.end_reason  # type: ignore[union-attr]
            self.aec.game = None  # step() asks for a reset, not the end of a game the learner never played
            given = (options or {}).get("position") is not None
            fix = ("options['position'] must leave it a move to play" if given else
                   "the rules end the game before it (a move_limit or stall_limit too small for the seat)")
            raise ValueError(f"the learner's seat {self.seat} has its place ({place}) decided before its first "
                             f"move (end reason {reason}): {fix}")
        return self.aec.observe(self.agent), self._info()

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        if aec.game is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent
        if self._illegal or agent not in aec.agents or not aec._live(agent):
            raise RuntimeError("the episode is over: call reset()")
        mask = aec.action_mask(agent)
        a = action if type(action) is int else action_int(action)
        if not 0 <= a < mask.shape[0]:  # not an action of the space: a bug in the caller, not a move
            raise ValueError(f"action must be 0..{mask.shape[0] - 1}, got {a}")
        if not mask[a]:
            self._illegal = True
            obs = aec.observe(agent)
            obs["action_mask"][:] = 0  # the episode is over: nothing is legal any more
            info = self._info()
            if "legal_moves" in info:
                info["legal_moves"] = []  # as the mask: nothing is legal any more
            info["illegal_action"] = True
            return obs, self.illegal_reward, True, False, info
        aec.step(a)
        self._advance()
        reward = float(aec._cumulative_rewards[agent])
        terminated = bool(aec.terminations[agent])
        truncated = bool(aec.truncations[agent])
        return aec.observe(agent), reward, terminated, truncated, self._info()

    def _info(self) -> dict[str, Any]:
        info = dict(self.aec.infos[self.agent])
        info["seat"] = self.seat
        return info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions (all False once the episode is over)."""
        if self.aec.game is None:
            raise RuntimeError("call reset() before action_masks()")
        if self._illegal or self.agent not in self.aec.agents:
            return np.zeros(self.action_space.n, dtype=bool)
        return self.aec.action_mask(self.agent).astype(bool)

    def render(self) -> str | np.ndarray | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
