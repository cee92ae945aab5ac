"""PettingZoo AEC environment for the Halma family, built like PettingZoo's classic board games.

``env(...)`` returns the wrapped environment (TerminateIllegalWrapper(-1), AssertOutOfBounds,
OrderEnforcing), ``raw_env(...)`` the bare one.  See docs/environment.md for the full description
of actions, observation planes, rewards, terminations, info, rendering and seat substitution.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any, SupportsIndex, cast

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from halma_env.encoding import as_index, encoding, move_holes
from halma_env.game import Game, IllegalMoveError, Move, MoveLike
from halma_env.layout import layout
from halma_env.render import colors_wanted, render_text
from halma_env.rewards import (
    check_progress_shaping,
    check_reward_scheme,
    piece_distance,
    seat_rewards,
    shaping_potential,
)
from halma_env.rules import (
    Rules,
    WrongTypeError,
    as_integer,
    choice_argument,
    flag_argument,
    game_name,
    integer_argument,
)
from halma_env.suggest import shown_typed, shown_value

from .players import check_player, make_player, reseed

ENV_NAME = "halma_v0"


def env(*args: Any, **kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo's classic games are (an illegal action ends the
    game with -1 for the agent that made it); it takes ``raw_env``'s arguments."""
    e = raw_env(*args, **kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = OrderEnforcingWrapper(e)
    return e


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order check, the outermost wrapper of ``env()``, for this env's two calls besides
    ``step``: ``resign`` and ``set_cpu`` on the wrapped env count as the update of a turn, as ``step``
    does (made instead of a ``step`` inside an ``agent_iter`` loop, they tripped PettingZoo's "need to
    call step() or reset()" assertion at the next agent).  An action is checked as the raw env checks
    it before the inner wrappers see it: a bool or a float is a ``TypeError`` there too, and an integer
    outside ``0 .. H*H-1`` the raw env's ``ValueError``, not PettingZoo's bounds assertion (which
    ``python -O`` strips: -1 would then read the mask from its end and count as an illegal move); ``None``
    for an agent that is alive is the raw env's ``ValueError`` too."""

    def step(self, action: Any) -> None:
        if self._has_reset and self.agents:
            raw = self.unwrapped
            agent = raw.agent_selection
            alive = not (raw.terminations[agent] or raw.truncations[agent])  # a dead agent: PettingZoo's error
            if alive and action is None:  # the inner wrappers' assertion would say only "not in action space"
                raw.step(None)  # raises the raw env's ValueError ("... is alive and must act"), changing nothing
            if action is not None and type(action) is not int:  # (raw env's fast path)
                action = action_int(action)
            if alive and not 0 <= action < raw.encoding.num_actions:
                raw.encoding.decode_action(0, action)  # raises its ValueError naming the range
        super().step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._has_reset and not self.unwrapped.agents:
            self.unwrapped.last(observe)  # raises the raw env's RuntimeError (the wrappers': a bare KeyError)
        return super().last(observe)

    def resign(self, agent: Any) -> None:
        """``raw_env.resign`` (docs/environment.md, *Game ends*)."""
        self.env.resign(agent)
        self._has_updated = True

    def set_cpu(self, agent: Any, player: Any = None) -> None:
        """``raw_env.set_cpu`` (docs/environment.md, *Seat substitution*)."""
        self.env.set_cpu(agent, player)
        self._has_updated = True

    def __copy__(self) -> OrderEnforcingWrapper:
        """``copy.copy(env)`` is ``copy.deepcopy(env)``, as for ``raw_env``: a shallow copy of the wrappers
        would share the env inside."""
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> OrderEnforcingWrapper:
        """The wrappers and the env inside copied, and a copy made inside an ``agent_iter`` loop (branching at
        a decision) runs its own ``agent_iter`` loop: the turn it starts at counts as updated, or PettingZoo's
        "need to call step() or reset()" assertion stopped that loop before its first step."""
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for name, value in self.__dict__.items():
            clone.__dict__[name] = copy.deepcopy(value, memo)
        if clone._has_reset:
            clone._has_updated = True
        return clone


def player_seed(seed: int, seat: int) -> int:
    """The seed in 0..2**63-1 (players take no negative seed) of ``seat``'s CPU player after ``reset(seed=seed)``,
    for any integer ``seed``: numpy's ``SeedSequence`` of (seed, seat), so every pair has its own stream.  (It was
    ``seed + 7919 * (seat + 1)``: seat 1 at seed s + 7919 then drew seat 2's numbers at seed s.)"""
    entropy = 2 * seed if seed >= 0 else -2 * seed - 1  # one-to-one onto the non-negative integers
    return int(np.random.SeedSequence([entropy, seat]).generate_state(1, np.uint64)[0]) >> 1


def action_int(action: Any) -> int:
    """An action as a Python int (``encoding.as_index``: ints, numpy integers, 0-d integer arrays and
    tensors); floats, text, bools and arrays of several values are refused rather than truncated."""
    return as_index(action, "action")


@functools.cache
def _no_moves(num_actions: int) -> np.ndarray:
    """The all-zero action mask of a seat not to move: one read-only array per game size, shared."""
    mask = np.zeros(num_actions, dtype=np.int8)
    mask.flags.writeable = False
    return mask


def hole_int(hole: Any, num_holes: int) -> int:
    """A hole number as a Python int in ``0 .. num_holes - 1``; anything else is refused (a
    negative number would otherwise index from the end of the tables)."""
    number = as_integer(hole)  # any integer type, as actions take (a 0-d tensor too)
    if number is None:
        raise WrongTypeError(f"a hole must be an integer, got {shown_typed(hole)}")
    if not 0 <= number < num_holes:
        raise ValueError(f"holes are 0..{num_holes - 1}, got {number}")
    return number


def _copy_player(player: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of a CPU player (or its spec) through the shared ``memo``, so that a player the
    original holds in several places (the gym env's opponents and its AEC env's seats, one bot on
    two seats) stays one object in the copy; a player that cannot be copied is shared with the
    original (a failed try leaves ``memo`` as it was)."""
    if id(player) in memo:
        return memo[id(player)]
    trial = dict(memo)
    try:
        clone = copy.deepcopy(player, trial)
    except (TypeError, copy.Error):  # e.g. a user's callable that holds a lock or a session
        memo[id(player)] = player
        return player
    # deepcopy keeps the originals it copied alive in memo[id(memo)]: move trial's list there (left
    # under id(trial), a key a later object could reuse once trial is gone, it would be taken for a copy)
    kept = trial.pop(id(trial), [])
    memo.update(trial)
    memo.setdefault(id(memo), []).extend(kept)
    return clone


def copy_state(env: object, memo: dict[int, Any], shared: set[str], players: set[str]) -> Any:
    """``copy.deepcopy`` of an env object attribute by attribute, bypassing ``EzPickle`` (whose
    pickling rebuilds a fresh env): ``shared`` attributes are not copied, ``players`` hold CPU
    players or their specs (a dict or list; see ``_copy_player``), the rest is deep-copied."""
    clone = type(env).__new__(type(env))
    memo[id(env)] = clone
    for key, value in env.__dict__.items():
        if key in shared:
            clone.__dict__[key] = value
        elif key in players and isinstance(value, dict):
            clone.__dict__[key] = {k: _copy_player(v, memo) for k, v in value.items()}
        elif key in players and isinstance(value, list):
            clone.__dict__[key] = [_copy_player(v, memo) for v in value]
        else:
            clone.__dict__[key] = copy.deepcopy(value, memo)
    return clone


def seat_named(who: Any, num_players: int) -> int | None:
    """The seat ``who`` names in a game of ``num_players`` seats: an agent name (``"player_1"``) or a seat number of
    any integer type, as actions take them (a 0-d tensor too; not a bool); None when it names none."""
    if isinstance(who, str):
        return next((s for s in range(num_players) if who == f"player_{s}"), None)
    seat = as_integer(who)
    return seat if seat is not None and 0 <= seat < num_players else None


def names_no_seat_by_type(who: Any) -> bool:
    """True when ``who`` is neither text nor an integer (1.0, True, None, a tuple), so names no seat of any game:
    the wrong type for an agent name or seat (``WrongTypeError``) rather than one out of range."""
    return not isinstance(who, str) and as_integer(who) is None


def check_seed(seed: Any) -> int | None:
    """``reset``'s seed as a Python int or None; anything else (floats, text, bools) is refused."""
    if seed is None:
        return None
    return integer_argument(seed, lambda: f"seed must be an integer or None, got {shown_value(seed)}")


# what reset() sets for the game it starts (PettingZoo's AEC attributes)
_GAME_ATTRIBUTES = frozenset({"agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
                              "truncations", "infos"})


class raw_env(AECEnv, EzPickle):
    """One game of Halma, Sternhalma or the Diamond game for ``num_players`` agents."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": ENV_NAME,
        "is_parallelizable": False,
        "render_fps": 2,
    }
    # set by reset(): the turn counter and the cache of _turn() it keys
    _turn_key: int
    _turn_cache: tuple[int, tuple[list[tuple[int, int]], np.ndarray]] | None

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not set: those of a game before reset() (a new env, or one from
        # pickle.loads, which builds a fresh env even under a wrapper that was reset) get a message saying so
        if name in _GAME_ATTRIBUTES:
            raise AttributeError(f"{name!r}: the env has no game yet; call reset() first (an env made by "
                                 "pickle.loads is a fresh one, whatever its wrapper says)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game is None:
            raise RuntimeError("call reset() before last()")
        if not self.agents:  # (PettingZoo's last() reads the departed agent_selection: a bare KeyError)
            raise RuntimeError("the game is over and every agent has left: call reset() to play again")
        return super().last(observe)

    def __init__(
        self,
        variant: str = "star",
        num_players: int = 2,
        render_mode: str | None = None,
        reward: str = "place",
        progress_shaping: float = 0.0,
        opponents: Mapping[Any, Any] | None = None,
        info_legal_moves: bool = True,
        move_limit_truncates: bool = True,
        **rule_options: Any,
    ) -> None:
        if isinstance(opponents, Mapping) and not isinstance(opponents, dict):  # read as a dict (and pickled as
            opponents = dict(opponents)  # one: a MappingProxyType cannot be), as Rules.from_dict reads one
        EzPickle.__init__(
            self, variant, num_players, render_mode, reward, progress_shaping, opponents, info_legal_moves,
            move_limit_truncates, **rule_options
        )
        super().__init__()
        self.rules = Rules(variant, num_players, **rule_options)  # ValueError names bad options
        # False for libraries that stack infos into arrays (Tianshou): the list's length changes every turn
        self.info_legal_moves = flag_argument(info_legal_moves, "info_legal_moves")
        # False: a move-limit end is a termination, for learners that bootstrap at a truncation (SB3): the
        # places it pays are final, so bootstrapping would count the outcome twice
        self.move_limit_truncates = flag_argument(move_limit_truncates, "move_limit_truncates")
        check_reward_scheme(reward)
        self.progress_shaping = check_progress_shaping(progress_shaping)
        if render_mode is not None:
            modes = self.metadata["render_modes"]
            choice_argument(render_mode, modes, lambda: f"render_mode must be one of {', '.join(modes)} or None, "
                                                        f"got {shown_value(render_mode)}")
        self.render_mode = render_mode
        self.reward_scheme = reward
        n = self.rules.num_players  # a Python int, whatever integer type num_players was (a 0-d tensor, say)
        self.encoding = encoding(variant, n)
        self.num_holes = self.encoding.num_holes
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(self.encoding.num_actions) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0, 1, self.encoding.observation_shape, dtype=np.int8),
                    "action_mask": spaces.Box(0, 1, (self.encoding.num_actions,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        lay = layout(variant, n)
        self._canon = [c.tolist() for c in self.encoding.to_canonical]
        self._from_canon = [c.tolist() for c in self.encoding.from_canonical]  # lists: faster than numpy scalars
        self._hole_of_bit = lay.geometry.hole_of_bit
        # shaping: phi at the start normalises a whole crossing to about ``progress_shaping``; a
        # king's share of phi is its distance to the goal tip (it must finish there)
        self._dist = [np.array(piece_distance(variant, n, s), dtype=np.int64) for s in range(n)]
        self._king_dist = [np.array(piece_distance(variant, n, s, True), dtype=np.int64) if lay.has_kings else None
                           for s in range(n)]
        self._phi_start = [max(1, shaping_potential(variant, n, s, list(lay.start[s]), lay.king_start[s]))
                           for s in range(n)]
        self._cpu_specs: dict[int, Any] = {}
        self._cpu: dict[int, Any] = {}
        self.game: Game | None = None
        self._watch: int | None = None  # see _halted
        self._seed: int | None = None  # the last reset's seed: set_cpu seeds a new CPU player from it
        if opponents is not None and not isinstance(opponents, dict):  # (any other Mapping was made a dict above)
            raise WrongTypeError("opponents must be a mapping {agent name or seat: player}, "
                                 f"got {shown_value(opponents)}")
        given: dict[int, Any] = {}  # seat -> the key that named it
        for key in opponents or {}:
            try:
                seat = self._seat(key)
            except ValueError as e:  # (a key of the wrong type: still a WrongTypeError)
                raise (WrongTypeError if isinstance(e, TypeError) else ValueError)(f"opponents: {e}") from None
            if seat in given:  # {1: "random", "player_1": "greedy"} kept the last without a word
                raise ValueError(f"opponents: seat {seat} is named twice, as {given[seat]!r} and {key!r}")
            given[seat] = key
        for seat, key in given.items():
            try:
                self.set_cpu(seat, cast(dict, opponents)[key])
            except ValueError as e:  # an unknown name, or a player of another game (or no player: WrongTypeError)
                raise (WrongTypeError if isinstance(e, TypeError) else ValueError)(
                    f"opponents: seat {seat}: {e}") from None

    # --- spaces ---------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self._agent_name(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[self._agent_name(agent)]

    # --- encoding helpers -------------------------------------------------------------------

    def encode_move(self, seat: SupportsIndex | str, move: MoveLike) -> int:
        """The action of ``move`` (a Move, (src, dst) or "src-dst") in ``seat``'s canonical frame."""
        src, dst = (hole_int(h, self.num_holes) for h in move_holes(move))
        return self.encoding.encode_move(self._seat(seat), src, dst)

    def decode_action(self, seat: SupportsIndex | str, action: SupportsIndex) -> Move:
        """The move (in board holes) that ``action`` means for ``seat``."""
        src, dst = self.encoding.decode_action(self._seat(seat), action_int(action))
        return Move(src, dst)

    def __deepcopy__(self, memo: dict[int, Any]) -> raw_env:
        """A copy of the env as it is, game in progress included (for tree search or branching).

        ``EzPickle`` alone would make ``copy.deepcopy`` build a fresh env from the constructor
        arguments, as ``pickle`` does.  The lookup tables are shared, the game is copied with
        ``Game.copy`` and everything else (agents, rewards, CPU players and their generators, the
        turn cache) is deep-copied; a CPU player that cannot be copied is shared by the two envs."""
        if self.game is not None:
            memo[id(self.game)] = self.game.copy()
        cached = getattr(self, "_turn_cache", None)  # (none before the first reset)
        if cached is not None:  # the read-only mask is shared: numpy's deepcopy made it writable
            mask = cached[1][1]
            memo[id(mask)] = mask
        shared = {"encoding", "_canon", "_from_canon", "_hole_of_bit", "_dist", "_king_dist", "_phi_start", "rules",
                  "_ezpickle_args", "_ezpickle_kwargs"}
        return copy_state(self, memo, shared, players={"_cpu", "_cpu_specs"})

    def __copy__(self) -> raw_env:
        """``copy.copy(env)`` is ``copy.deepcopy(env)``: through ``EzPickle`` it gave a fresh env, not reset,
        and a shallow copy would share the game in progress (``Game`` and python-chess's ``Board`` copy too)."""
        return copy.deepcopy(self)

    def _seat(self, who: Any) -> int:
        """A seat from a seat number or an agent name: ``ValueError`` for another name or a seat out of range,
        ``WrongTypeError`` for neither text nor an integer (1.0, True, None)."""
        seat = seat_named(who, len(self.possible_agents))
        if seat is not None:
            return seat
        raise (WrongTypeError if names_no_seat_by_type(who) else ValueError)(
            f"expected an agent name ({', '.join(self.possible_agents)}) or a seat number, got {shown_value(who)}")

    # --- the turn cache: legal moves and the action mask, computed once per turn ------------

    def _turn(self) -> tuple[list[tuple[int, int]], np.ndarray]:
        """(legal moves as (src, dst) sorted like ``game.legal_moves()``, the int8 action mask) of
        the seat to move, computed once per turn.  Reads the engine's per-turn move sets
        (``Game._move_masks``, which ``play`` then reuses) instead of building ``Move`` objects:
        this is the hot path of every turn.  Actions follow ``Encoding.encode_move`` exactly
        (``canonical(src) * H + canonical(dst)``); tests compare with ``Encoding.action_mask``."""
        cached = self._turn_cache
        if cached is not None and cached[0] == self._turn_key:
            return cached[1]
        game = cast(Game, self.game)  # only called after reset()
        pairs: list[tuple[int, int]] = []
        # the mask is written byte by byte in the loop and wrapped without a copy: cheaper than
        # np.zeros plus a fancy assignment from a list of actions
        buf = bytearray(self.encoding.num_actions)
        if not game.is_over:
            seat = game.to_move
            masks = game._move_masks(seat)
            canon = self._canon[seat]
            hob = self._hole_of_bit
            h = self.num_holes
            for b in sorted(masks):
                src = hob[b]
                base = canon[src] * h
                d = masks[b]
                while d:
                    low = d & -d
                    d ^= low
                    dst = hob[low.bit_length() - 1]
                    buf[base + canon[dst]] = 1
                    pairs.append((src, dst))
        mask = np.frombuffer(buf, dtype=np.int8)
        mask.flags.writeable = False  # action_mask() hands it out: a write would change what step() accepts
        value = (pairs, mask)
        self._turn_cache = (self._turn_key, value)
        return value

    # --- PettingZoo API ----------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._agent(agent, "observe")
        # a fresh mask array each call (users keep observations); action_mask() gives the cached one
        mask = self.action_mask(agent)
        game = cast(Game, self.game)  # _agent() refused a call before reset()
        return {"observation": self.encoding.observation(game, seat), "action_mask": mask.copy()}

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 mask over actions: the legal moves when ``agent``'s seat is to move, else zeros.
        The array is cached for the turn: do not modify it.

        The seat to move, not the selected agent: while a finished agent takes its dead step the
        next mover already has its moves (PettingZoo's ``turn_based_aec_to_parallel`` reads them then)."""
        seat = self._agent(agent, "action_mask")
        game = cast(Game, self.game)  # _agent() refused a call before reset()
        if seat == game.to_move and self._live(agent) and not game.is_over:
            return self._turn()[1]
        return _no_moves(self.encoding.num_actions)  # read-only, as the turn's mask is

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game.  ``options={"position": text}`` starts from a SPEC §3 position of the
        same variant and seat count (the env's rule options apply, and its seat to move moves
        first); other keys are ignored.  ``seed``: an integer or None."""
        self._start(check_seed(seed), self._new_game(options))

    def _start(self, seed: int | None, game: Game) -> None:
        """``reset`` with its seed checked and its game made (``HalmaEnv.reset`` makes the game first, so that
        refused options change nothing)."""
        if seed is not None:
            self._seed = seed
            for s, spec in self._cpu_specs.items():
                self._cpu[s] = reseed(self._cpu[s], spec, self._cpu_seed(s))
        self.game = game
        self._turn_key = 0
        self._turn_cache = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._paid = [False] * len(self.agents)
        self.agent_selection = self.possible_agents[game.to_move]
        try:
            self._settle()
        except BaseException:
            self.game = None  # a CPU player failed before the first policy turn: no game to go on with
            self.agents = []
            raise
        # An episode starts with every reward at 0 (PettingZoo's api_test checks it): the shaping of CPU
        # moves played inside reset() is not paid, as no agent has acted yet.  A place already decided
        # (a game that CPU seats played to its end) keeps its reward for the agent's dead step.
        for seat, name in enumerate(self.possible_agents):
            if not self._paid[seat]:
                self.rewards[name] = self._cumulative_rewards[name] = 0.0
        if self.render_mode == "human":
            self.render()

    def _new_game(self, options: dict[str, Any] | None) -> Game:
        """The game ``reset(options=options)`` starts; bad options raise here, before anything changes."""
        if options is not None and not isinstance(options, dict):
            raise WrongTypeError(f"options must be a dict or None, got {type(options).__name__}")
        position = (options or {}).get("position")
        if position is None:
            return Game(self.rules)
        game = Game.from_position(position, **self._options())
        if (game.rules.variant, game.num_players) != (self.rules.variant, self.rules.num_players):
            raise ValueError(f"position is {game_name(game.rules.variant, game.num_players)}, but this env plays "
                             f"{self.rules.variant} with {self.rules.num_players}")
        return game

    def step(self, action: Any) -> None:
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            saved = self._save() if self._cpu else None
            self._was_dead_step(action)
            self._settle_or_restore(saved)
            return
        seat = self.agent_name_mapping[agent]
        if action is None:
            raise ValueError(f"{agent} is alive and must act: None is only for terminated or truncated agents")
        mask = self._turn()[1]
        if type(action) is not int:  # numpy integers are converted; floats, text, bools refused
            action = action_int(action)
        if not 0 <= action < self.encoding.num_actions:
            self.encoding.decode_action(seat, action)  # raises its ValueError
        # Encoding.decode_action on Python lists
        cs, cd = divmod(action, self.num_holes)
        back = self._from_canon[seat]
        src, dst = back[cs], back[cd]
        if not mask[action]:
            try:
                self.game.copy().play((src, dst))
                reason = "not in the action mask"
            except IllegalMoveError as e:
                reason = str(e)
            raise IllegalMoveError(f"action {action} ({src}-{dst}) is illegal for {agent}: {reason}")
        saved = self._save() if self._cpu else None  # without CPU seats _settle plays no move
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._play(src, dst)
        self._settle_or_restore(saved)
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "ansi":
            return render_text(self.game, color=False)
        if self.render_mode == "rgb_array":
            from .rendering import render_rgb

            return render_rgb(self.game)
        print(render_text(self.game, color=colors_wanted()))
        return None

    def close(self) -> None:
        pass

    # --- seat substitution and resignation -----------------------------------------------------

    def set_cpu(self, agent: Any, player: Any = None) -> None:
        """Hand ``agent`` (name or seat) to a CPU ``player`` (a name, a callable (game) -> move or
        an object with ``select_move``), or take it back with ``None``.  The game is unchanged;
        when it is that seat's turn now, the CPU plays at once.  A player built from a name after a
        seeded ``reset`` gets the seed that reset gives that seat, so the episode stays reproducible."""
        seat = self._seat(agent)
        self._put_cpu(seat, player, None if player is None else self._make_cpu(seat, player))

    def _make_cpu(self, seat: int, spec: Any) -> Any:
        """The CPU player of ``spec`` for ``seat``, seeded from the last reset's seed, refused (a
        ``ValueError``) when it cannot play this env's game (``check_player``); nothing is changed."""
        player = make_player(spec, None if self._seed is None else self._cpu_seed(seat))
        check_player(player, spec, self.rules, make_player)
        return player

    def _put_cpu(self, seat: int, spec: Any, player: Any) -> None:
        """Hand ``seat`` to ``player`` made from ``spec`` by ``_make_cpu`` (``None``: take it back)."""
        saved = self._save() if self.game is not None else None
        if spec is None:
            self._cpu_specs.pop(seat, None)
            self._cpu.pop(seat, None)
        else:
            self._cpu[seat] = player
            self._cpu_specs[seat] = spec
        if self.game is not None and self.agents and not self.game.is_over and self.game.to_move in self._cpu:
            self._clear_rewards()  # the CPU moves played now are this transition's rewards
            self._settle_or_restore(saved)

    def cpu_seats(self) -> dict[str, Any]:
        """Agents currently played by a CPU, with their players."""
        return {self.possible_agents[s]: p for s, p in sorted(self._cpu.items())}

    def resign(self, agent: Any) -> None:
        """``agent`` resigns (SPEC §4): with 2 seats the other wins; with more it takes the last free
        place and the others play on.  Its termination and reward follow as for a finished seat."""
        seat = self._seat(agent)
        if self.game is None:
            raise RuntimeError("call reset() before resign()")
        name = self.possible_agents[seat]
        if name not in self.agents or self.terminations[name] or self.truncations[name]:
            raise ValueError(f"{name} is no longer playing and cannot resign")
        saved = self._save() if self._cpu else None
        self._clear_rewards()
        self.game.resign(seat)
        self._turn_key += 1
        self._settle_or_restore(saved)

    # --- internals ------------------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        """The rule options for a loaded position: it gives the variant, seats and first seat."""
        d = self.rules.to_dict()
        del d["variant"], d["num_players"], d["first_seat"]
        return d

    def _agent_name(self, agent: Any) -> str:
        """``agent`` if it is one of this env's agent names; otherwise ``_unknown_agent``'s error."""
        if not (isinstance(agent, str) and agent in self.agent_name_mapping):
            raise self._unknown_agent(agent)
        return agent

    def _agent(self, agent: Any, caller: str) -> int:
        """The seat of a known agent name; an error naming the agent otherwise (or before reset)."""
        seat = self.agent_name_mapping[self._agent_name(agent)]
        if self.game is None:
            raise RuntimeError(f"call reset() before {caller}()")
        return seat

    def _cpu_seed(self, seat: int) -> int:
        """The seed of ``seat``'s CPU player after ``reset(seed=self._seed)`` (``player_seed``)."""
        return player_seed(cast(int, self._seed), seat)

    def _save(self) -> tuple:
        """What ``_settle_or_restore`` puts back if a CPU player fails."""
        return (len(cast(Game, self.game)._history), self._turn_key, dict(self.rewards), dict(self._cumulative_rewards),
                dict(self.terminations), dict(self.truncations), dict(self.infos), list(self._paid), list(self.agents),
                self.agent_selection, self._skip_agent_selection, dict(self._cpu), dict(self._cpu_specs))

    def _settle_or_restore(self, saved: tuple | None) -> None:
        """``_settle``; if a CPU player fails in it (an illegal move, an exception of its own), the
        env and its game are put back as ``_save`` found them before the error goes on: the move,
        resignation or seat change that led to it is not made.  ``saved`` is None only where no CPU
        seat could play."""
        try:
            self._settle()
        except BaseException:
            if saved is None:
                raise
            game = cast(Game, self.game)
            (moves, self._turn_key, self.rewards, self._cumulative_rewards, self.terminations, self.truncations,
             self.infos, self._paid, self.agents, self.agent_selection, self._skip_agent_selection, self._cpu,
             self._cpu_specs) = saved
            while len(game._history) > moves:
                game.undo()
            self._turn_cache = None  # the turn key was put back: its cached turn may be of a later position
            raise

    def _unknown_agent(self, agent: Any) -> ValueError:
        """The error for what is no agent name of this env: a ``WrongTypeError`` (a ``TypeError``, still a
        ``ValueError``) naming the type for anything but text (1.0, 1, None, a list), as the seat methods say it;
        a ``ValueError`` for text that names no agent."""
        # (PettingZoo's methods take agent names; encode_move, decode_action, resign and set_cpu take seats too)
        seat = None if isinstance(agent, str) else seat_named(agent, len(self.possible_agents))  # (np.int64 too)
        hint = "" if seat is None else f" (seat {seat}'s agent is {self.possible_agents[seat]!r})"
        agents = ", ".join(self.possible_agents)
        if not isinstance(agent, str):
            return WrongTypeError(f"an agent is named by text (str), got {shown_value(agent)} "
                                  f"({type(agent).__name__}); the agents are {agents}{hint}")
        return ValueError(f"unknown agent {shown_value(agent)}; the agents are {agents}{hint}")

    def _live(self, agent: str) -> bool:
        return agent in self.terminations and not (self.terminations[agent] or self.truncations[agent])

    def _give(self, name: str, value: float) -> None:
        """Credit a reward in this transition's ``rewards`` and in the running total at once."""
        self.rewards[name] += value
        self._cumulative_rewards[name] += value

    def _play(self, src: int, dst: int) -> None:
        """Play a legal move of the seat to move and credit its shaping reward."""
        game = cast(Game, self.game)  # only called after reset()
        seat = game.to_move
        game.play((src, dst))
        self._turn_key += 1
        if self.progress_shaping:
            # a king's distance counts to the goal tip (_king_dist is None without kings); the
            # piece just played stands on dst, so piece_at(dst) is never None
            dist = self._king_dist[seat]
            if dist is None or not cast("tuple[int, bool]", game.piece_at(dst))[1]:
                dist = self._dist[seat]
            gain = self.progress_shaping * float(dist[src] - dist[dst]) / self._phi_start[seat]
            self._give(self.possible_agents[seat], gain)

    def _settle(self) -> None:
        """After any change: let CPU seats play until a policy seat is to move, credit decided
        places, set terminations/truncations and infos, and select the next agent (dead agents
        first, as PettingZoo's ``_deads_step_first`` does)."""
        game = cast(Game, self.game)  # only called after reset()
        while not game.is_over and game.to_move in self._cpu and not self._halted():
            seat = game.to_move
            player = self._cpu[seat]
            try:
                chosen = player.select_move(game)
            except Exception as e:  # its own error goes on as it is, with a note of whose it is (traceback's last line)
                e.add_note(f"(raised by the CPU player {getattr(player, 'name', player)!r} of "
                           f"{self.possible_agents[seat]}, at ply {game.ply})")
                raise
            try:
                src, dst = Move.parse(chosen) if isinstance(chosen, str) else chosen
                self._play(src, dst)
            except (IllegalMoveError, TypeError, ValueError) as e:
                # (unpacking None said "cannot unpack non-iterable NoneType object": Python's words, not ours)
                why = f": {e}" if isinstance(e, IllegalMoveError) else " (a move is a Move, (src, dst) or 'SRC-DST')"
                raise IllegalMoveError(
                    f"CPU player {getattr(player, 'name', player)!r} of {self.possible_agents[seat]} "
                    f"chose {chosen!r}, which is not a legal move{why}"
                ) from None
            self._credit()
        self._credit()
        to_move = None if game.is_over else game.to_move
        places = game.places
        for name in self.agents:
            seat = self.agent_name_mapping[name]
            info: dict[str, Any] = {
                # 0 while undecided, as BatchedGame's info: one type, so gymnasium's vector envs can stack it
                "place": places[seat] or 0,
                "end_reason": game.end_reason,
            }
            if self.info_legal_moves:
                info["legal_moves"] = list(self._turn()[0]) if seat == to_move else []
            self.infos[name] = info
        if to_move is not None:
            self.agent_selection = self.possible_agents[to_move]
        self._deads_step_first()

    def _halted(self) -> bool:
        """CPU seats stop playing once the watched seat's place is decided (the single-agent env
        watches its learner: its episode is over, the rest of the game does not matter)."""
        return self._watch is not None and cast(Game, self.game).places[self._watch] is not None

    def _credit(self) -> None:
        """Pay each decided place once and mark its agent terminated (truncated
        instead at the move limit when ``move_limit_truncates``)."""
        game = cast(Game, self.game)  # only called after reset()
        values = None
        places = game.places
        for seat, name in enumerate(self.possible_agents):
            if self._paid[seat] or name not in self.terminations:
                continue
            if places[seat] is None and not game.is_over:
                continue
            if values is None:
                values = seat_rewards(game, self.reward_scheme)
            self._paid[seat] = True
            # the seat's place is decided (or the game is over): its reward is not None
            self._give(name, cast(float, values[seat]))
            if self.move_limit_truncates and game.end_reason == "move_limit" and game.status[seat] == "active":
                self.truncations[name] = True  # cut off; a seat that finished on the last ply is terminated
            else:
                self.terminations[name] = True
