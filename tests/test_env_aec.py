"""The PettingZoo AEC environment: PettingZoo's own API/seed/render tests for every variant and seat
count, agreement with the engine and encoding.py, rewards, game ends, seat substitution, pickling."""

from __future__ import annotations

import pickle
import random
import re
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import halma_env
from halma_env import Game, IllegalMoveError, Move, Rules
from halma_env.encoding import encoding
from halma_env.envs import env as make_env
from halma_env.envs import raw_env, seat_rewards
from halma_env.layout import layout
from halma_env.rewards import goal_distance, king_distance, place_rewards, seat_potential, shaping_potential
from halma_env.suggest import shown_value
from tests.engine_helpers import UncopyablePlayer, position

CONFIGS = [("star", n) for n in range(1, 7)] + [("diamond", 2), ("diamond", 3), ("halma16", 2), ("halma16", 4)]
IDS = [f"{v}{n}" for v, n in CONFIGS]


def random_action(env, agent: str, rng: random.Random) -> int | None:
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        return None
    return rng.choice(np.flatnonzero(obs["action_mask"]).tolist())


# --- PettingZoo's own checks -------------------------------------------------------------------

# api_test warns about any Dict observation; the {"observation", "action_mask"} dict is PettingZoo's
# own convention for masked games (its classic envs get the same two warnings)
def dict_observation_warnings(test):
    test = pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")(test)
    return pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")(test)


@pytest.mark.parametrize(("variant", "n"), CONFIGS, ids=IDS)
@dict_observation_warnings
def test_pettingzoo_api_seed_render(variant: str, n: int) -> None:
    # a move limit inside the cycles makes the play test reach the game end and every dead step
    api_test(make_env(variant=variant, num_players=n, move_limit=3 * n + 1), num_cycles=6)
    seed_test(lambda **kw: make_env(variant=variant, num_players=n, **kw), num_cycles=4)
    render_test(lambda **kw: make_env(variant=variant, num_players=n, move_limit=20, **kw))


@dict_observation_warnings
def test_api_test_without_limit_and_with_shaping() -> None:
    api_test(make_env(num_players=3, progress_shaping=1.0), num_cycles=12)
    api_test(make_env(num_players=2, reward="win_loss", move_limit=9, limit_outcome="progress"), num_cycles=8)
    # a CPU seat that moves inside reset() with shaping: its shaping was paid there, and last() later
    # reported more than the rewards seen since the reset (api_test: "reward returned by last is not ...")
    api_test(make_env(num_players=3, opponents={"player_0": "random"}, progress_shaping=1.0, move_limit=40),
             num_cycles=20)
    e = make_env(num_players=3, opponents={"player_0": "random"}, progress_shaping=1.0)
    e.reset(seed=0)
    assert e.unwrapped.game.ply == 1 and set(e.rewards.values()) == {0.0}  # the CPU moved, nothing paid


def test_metadata_agents_spaces() -> None:
    e = raw_env(variant="star", num_players=4)
    assert e.metadata["name"] == "halma_v0"
    assert e.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert e.metadata["is_parallelizable"] is False
    assert e.metadata["render_fps"] == 2
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    space = e.observation_space("player_2")
    assert space["observation"].shape == (17, 17, 12) and space["observation"].dtype == np.int8
    assert space["action_mask"].shape == (121 * 121,) and space["action_mask"].dtype == np.int8
    for key in ("observation", "action_mask"):  # Box(0, 1): every entry is 0 or 1
        assert (space[key].low == 0).all() and (space[key].high == 1).all(), key
    assert e.action_space("player_0").n == 121 * 121
    h = raw_env(variant="halma16", num_players=2)
    assert h.observation_space("player_0")["observation"].shape == (16, 16, 12)
    assert h.action_space("player_1").n == 256 * 256


def test_wrappers_like_pettingzoo_classic() -> None:
    from pettingzoo.utils import wrappers

    e = make_env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(e.unwrapped, raw_env)


def test_package_level_names_are_lazy() -> None:
    assert halma_env.env is make_env and halma_env.raw_env is raw_env
    with pytest.raises(AttributeError):
        halma_env.no_such_name  # noqa: B018
    # dir() (tab completion) lists them, without importing anything for it
    import subprocess
    import sys

    code = ("import sys, halma_env, agents; assert {'env', 'raw_env', 'HalmaEnv', 'Game'} <= set(dir(halma_env)); "
            "assert 'load_opponent' in dir(agents); "
            "assert not {'gymnasium', 'torch', 'onnxruntime'} & set(sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0


# --- agreement with the engine and encoding.py -----------------------------------------------


@pytest.mark.parametrize(("variant", "n"), CONFIGS, ids=IDS)
def test_observations_masks_and_infos_match_the_engine(variant: str, n: int) -> None:
    e = raw_env(variant=variant, num_players=n)
    enc = encoding(variant, n)
    rng = random.Random(n)
    e.reset(seed=1)
    for _ in range(25):
        agent = e.agent_selection
        seat = e.agent_name_mapping[agent]
        game = e.game
        assert seat == game.to_move
        moves = game.legal_moves()
        for other in e.agents:
            obs = e.observe(other)
            s = e.agent_name_mapping[other]
            assert np.array_equal(obs["observation"], enc.observation(game, s))
            assert obs["observation"].dtype == np.int8 and obs["action_mask"].dtype == np.int8
            assert np.array_equal(obs["action_mask"], enc.action_mask(game, s))  # zero for the others
            assert e.infos[other]["legal_moves"] == (moves if other == agent else [])
        mask = e.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        assert len(legal) == len(moves)
        assert sorted(e.encode_move(seat, m) for m in moves) == legal.tolist()
        for m in moves:
            assert e.decode_action(agent, e.encode_move(agent, m)) == m
        e.step(rng.choice(legal.tolist()))


def test_canonical_frame_every_seat_sees_the_same_start() -> None:
    for variant, n in CONFIGS:
        first = None
        for seat in range(n):
            e = raw_env(variant=variant, num_players=n, first_seat=seat)
            e.reset()
            obs = e.observe(e.agent_selection)
            planes = obs["observation"]
            assert np.array_equal(planes[..., 0], planes[..., 8]), (variant, n, seat)  # own pieces fill home
            view = (planes[..., [0, 7, 8, 9, 10]].tobytes(), obs["action_mask"].tobytes())
            first = first or view
            assert view == first, (variant, n, seat)  # every seat: home at the bottom, same moves


@pytest.mark.parametrize(("variant", "n"), [("star", 3), ("diamond", 2), ("halma16", 4)])
def test_move_actions_encode_a_list_of_moves_as_encode_move_does(variant: str, n: int) -> None:
    enc = encoding(variant, n)
    game = Game(Rules(variant, n))
    rng = random.Random(5)
    for _ in range(12):
        moves = game.legal_moves()
        actions = enc.move_actions(game.to_move, moves)
        assert actions.dtype == np.int64
        assert actions.tolist() == [enc.encode_move(game.to_move, m.src, m.dst) for m in moves]
        game.play(rng.choice(moves))
    assert enc.move_actions(0, []).shape == (0,) and enc.move_actions(0, []).dtype == np.int64
    for not_a_game in (None, game.position()):  # (None was an AttributeError on .rules)
        for call in (lambda g: enc.observation(g, 0), enc.action_mask):
            with pytest.raises(TypeError, match="^game must be a halma_env.Game, got "):
                call(not_a_game)
    # a hole off the board or not an integer: refused by name (-1 read the last hole, 113.7 was taken as 113)
    last = enc.num_holes - 1
    assert enc.move_actions(0, [Move(np.uint8(0), np.uint16(1))]).tolist() == [enc.encode_move(0, 0, 1)]
    mixed = [Move(np.uint64(0), 1), Move(2, np.int64(3))]  # (numpy makes float64 of uint64 with int64)
    assert enc.move_actions(0, mixed).tolist() == [enc.encode_move(0, 0, 1), enc.encode_move(0, 2, 3)]
    for bad in (Move(-1, 2), Move(2, last + 1), Move(2.7, 3), Move(2, "3")):
        with pytest.raises(ValueError, match=re.escape(f"moves must hold hole numbers 0..{last}, got {bad!r}")):
            enc.move_actions(0, [Move(np.int64(0), 1), bad])


def test_move_actions_take_moves_as_the_env_and_game_play_take_them() -> None:
    """The env's info["legal_moves"] holds (src, dst) pairs, and move_actions took only Moves: a pair was
    AttributeError "'tuple' object has no attribute 'src'", a generator TypeError "has no len()".  It takes what
    Game.play and the env's encode_move take now, from any iterable, and names what it cannot read."""
    env = raw_env(num_players=2)
    env.reset(seed=3)
    enc = env.encoding
    moves = Game(Rules("star", 2)).legal_moves()
    expected = enc.move_actions(0, moves).tolist()
    info = env.last()[4]
    assert enc.move_actions(0, info["legal_moves"]).tolist() == expected
    assert enc.move_actions(0, [str(m) for m in moves]).tolist() == expected
    assert enc.move_actions(0, (m for m in moves)).tolist() == expected
    assert enc.move_actions(0, [moves[0], (moves[1].src, moves[1].dst), str(moves[2])]).tolist() == expected[:3]
    for bad in (7, None, (1, 2, 3), [1, 2]):
        with pytest.raises(ValueError, match=re.escape(f"moves: a move is a Move, a (src, dst) pair or 'src-dst' "
                                                       f"text, got {bad!r}")):
            enc.move_actions(0, [moves[0], bad])
    with pytest.raises(ValueError, match=re.escape("moves must hold hole numbers 0..120, got (1, 500)")):
        enc.move_actions(0, [moves[0], (1, 500)])
    with pytest.raises(ValueError, match="a move is written 'src-dst'"):
        enc.move_actions(0, ["111 102"])
    for one in ("111-102", moves[0], (111, 102)):  # read hole by hole or character by character, it said "got 111"
        with pytest.raises(ValueError, match=re.escape(f"moves must be an iterable of moves, got one move, {one!r}: "
                                                       "give [move]")):
            enc.move_actions(0, one)
    assert enc.move_actions(0, (moves[0], moves[1])).tolist() == expected[:2]  # a tuple of moves is no one move


def test_the_documented_frame_examples() -> None:
    """docs/environment.md's worked examples of the canonical frame and of the grid, which a program
    in another language implements from: 180, 60 and 90-degree turns, and the centre cell."""
    star2, star3 = raw_env(variant="star", num_players=2), raw_env(variant="star", num_players=3)
    assert star2.encode_move(0, "111-102") == star2.encode_move(1, "9-18") == 111 * 121 + 102 == 13_533
    assert layout("star", 3).rotation[1] == 4
    assert star3.encode_move(1, "13-14") == 13_533
    assert encoding("star", 3).to_canonical[1][10] == 120
    square = encoding("halma16", 2).to_canonical[1]
    assert (square[0], square[17]) == (255, 238)
    centre = Game.from_position(position("star", 2, {60: "0", 0: "1"}))  # seat 0's frame is the board's
    planes = encoding("star", 2).observation(centre, 0)
    assert planes.shape[:2] == (17, 17) and planes[..., 0].sum() == 1 and planes[8, 8, 0] == 1
    assert planes[..., 9].sum() == 121  # plane 9: the holes of the board


@pytest.mark.parametrize(("variant", "n"), [("diamond", 3), ("star", 4), ("halma16", 2)])
def test_each_named_plane_holds_what_its_name_says(variant: str, n: int) -> None:
    """``PLANE_NAMES`` is the public plane order of encoding.py's docstring: every plane, hole by
    hole in the observer's frame, against the position itself (closed holes: diamond only)."""
    from halma_env.encoding import MAX_SEATS, PLANE_NAMES, PLANES

    assert PLANE_NAMES == ("actor", "seat+1", "seat+2", "seat+3", "seat+4", "seat+5",
                           "kings", "goal", "home", "board", "closed", "retired")
    assert len(PLANE_NAMES) == PLANES and PLANE_NAMES.index("kings") == MAX_SEATS  # one plane per seat first
    lay, enc = layout(variant, n), encoding(variant, n)
    holes = lay.geometry.num_holes
    game = Game(Rules(variant, n))
    rng = random.Random(7)
    for _ in range(12):
        game.play(rng.choice(game.legal_moves()))
    if n >= 3:
        game.resign((game.to_move + 1) % n)  # a retired seat whose pieces stay on the board
        assert not game.is_over
    board = game.board()
    retired = [h for s in range(n) if game.status[s] != "active" for h in game.pieces(s)]
    assert bool(retired) == (n >= 3)
    for seat in range(n):
        obs = enc.observation(game, seat).reshape(-1, PLANES)
        cell = enc.grid_index[enc.to_canonical[seat]]  # hole -> its cell in this seat's frame

        def check(name: str, where, obs=obs, cell=cell, seat=seat) -> None:
            want = np.zeros(len(obs), dtype=np.int8)
            want[cell[list(where)]] = 1
            assert np.array_equal(obs[:, PLANE_NAMES.index(name)], want), (variant, n, seat, name)

        for i in range(MAX_SEATS):
            check(PLANE_NAMES[i], game.pieces((seat + i) % n) if i < n else [])
        check("kings", [h for h, c in enumerate(board) if c is not None and c[1]])
        check("goal", lay.goals[seat])
        check("home", lay.homes[seat])
        check("board", range(holes))
        open_holes = set(lay.geometry.holes(lay.open_holes[seat]))
        closed = [h for h in range(holes) if h not in open_holes]
        assert bool(closed) == (variant == "diamond")
        check("closed", closed)
        check("retired", retired)


def test_the_first_and_last_actions_decode() -> None:
    """Actions are ``0..num_actions - 1``: both ends decode (to a pair of holes that encodes back)."""
    for variant, n in (("star", 2), ("star", 3), ("halma16", 2)):
        enc = encoding(variant, n)
        for seat in range(n):
            for action in (0, enc.num_actions - 1):
                src, dst = enc.decode_action(seat, action)
                assert enc.encode_move(seat, src, dst) == action
            with pytest.raises(ValueError, match="action must be 0.."):
                enc.decode_action(seat, enc.num_actions)
    e = raw_env()
    e.reset()
    back = [int(h) for h in encoding("star", 2).from_canonical[0]]
    assert e.decode_action(0, 0) == (back[0], back[0]) and e.decode_action(0, 14640) == (back[120], back[120])


# --- rewards, terminations and truncations -----------------------------------------------------


def test_place_rewards_of_both_schemes() -> None:
    """rewards.py's two schemes, spelled out ("place" is the default)."""
    assert place_rewards([1, 2, 3]) == [1.0, 0.0, -1.0]
    assert place_rewards([3, 1, 2, 4]) == pytest.approx([-1 / 3, 1.0, 1 / 3, -1.0])
    assert place_rewards([1, 1, 3]) == [0.5, 0.5, -1.0]  # a shared place: the mean of the places it spans
    assert place_rewards([1, 2, 2, 4]) == [1.0, 0.0, 0.0, -1.0]  # exactly 0 (it was 5.55e-17), the sum 0
    assert place_rewards([1, 1]) == [0.0, 0.0] == place_rewards([1, 1, 1])[1:]  # every seat shares place 1: a draw
    assert place_rewards([1, 2, 2]) == [1.0, -0.5, -0.5]  # a draw of the seats after the first to finish
    assert place_rewards([None, 1, None]) == [0.0, 1.0, 0.0]  # undecided counts 0
    assert place_rewards([1]) == [1.0] and place_rewards([None]) == [0.0]
    assert place_rewards([2, 1, 3], "win_loss") == [-1.0, 1.0, -1.0]
    assert place_rewards([3, 2, 1], "win_loss") == [-1.0, -1.0, 1.0]
    assert place_rewards([1, 1, 3], "win_loss") == [1.0, 1.0, -1.0]
    assert place_rewards([1, 1], "win_loss") == [0.0, 0.0]
    with pytest.raises(ValueError, match="reward must be one of place, win_loss, got 'wins'"):
        place_rewards([1, 2], "wins")


@pytest.mark.parametrize(("places", "error", "message"), [
    ([1, 5], ValueError, r"seat 1's place must be an integer 1\.\.2 \(places of 2 seats\) or None \(undecided\), "
                         r"got 5 in places \[1, 5\]"),
    ([0, 1], ValueError, r"seat 0's place must be an integer 1\.\.2 .*, got 0 in places \[0, 1\]"),
    ([-1, 1, 2], ValueError, r"seat 0's place must be an integer 1\.\.3 .*, got -1"),
    ([1, 1.5, 3], TypeError, r"seat 1's place must be an integer 1\.\.3 .*, got 1\.5"),
    ([2], ValueError, r"seat 0's place must be an integer 1\.\.1 \(places of 1 seat\) .*, got 2"),
    ([None, "1"], TypeError, r"seat 1's place must be an integer 1\.\.2 .*, got '1'"),
    ([[1], 2], TypeError, r"seat 0's place must be an integer 1\.\.2 .*, got \[1\]"),
    ([], ValueError, "places must give a place \\(or None\\) for at least one seat, got none"),
])
def test_place_rewards_refuse_a_place_that_is_not_one_of_the_seats(places: list, error: type, message: str) -> None:
    """A place outside 1..n gave a reward outside [-1, 1] (``[1, 5]`` gave ``[1.0, -7.0]``, ``[0, 1]`` gave
    ``[3.0, 1.0]``) and a fractional one a reward between places: each is an error naming the seat and its
    place, whatever the scheme: a ``ValueError`` for an integer out of range, a ``TypeError`` for a place that is
    no integer.  numpy's integers are places as Python's are."""
    for scheme in ("place", "win_loss"):
        with pytest.raises(error, match=message) as caught:
            place_rewards(places, scheme)
        assert isinstance(caught.value, ValueError)  # (a TypeError here is a WrongTypeError, a ValueError too)
    assert place_rewards([np.int64(2), np.int64(1)]) == [-1.0, 1.0]


@pytest.mark.parametrize(("places", "seat"), [
    ([True, 2], 0), ([2, True], 1), ([1.0, 2], 0), ([2, 1.0], 1), ([None, np.bool_(True), 2], 1),
    ([1, 2, 3.0], 2), ([np.float64(1), 2], 0),
])
def test_place_rewards_refuse_a_bool_or_a_float_equal_to_a_place(places: list, seat: int) -> None:
    """``True`` and ``1.0`` equal place 1 (and hash as it), so the set lookup took them as places: a bool or a
    float is no place (a ``TypeError`` naming the seat), whatever its value."""
    for scheme in ("place", "win_loss"):
        with pytest.raises(TypeError, match=rf"seat {seat}'s place must be an integer 1\.\.{len(places)} .*, got "):
            place_rewards(places, scheme)


@pytest.mark.parametrize(("places", "message"), [
    ([1, 1, 2], r"seat 2's place 2 is taken: seats 0, 1 share place 1, which spans places 1\.\.2 \(shared places "
                r"skip the places below them, as in \[1, 1, 3\]\), got places \[1, 1, 2\]"),
    ([2, 1, 1], r"seat 0's place 2 is taken: seats 1, 2 share place 1, which spans places 1\.\.2"),
    ([1, 2, 2, 3], r"seat 3's place 3 is taken: seats 1, 2 share place 2, which spans places 2\.\.3"),
    ([1, 1, 1, 2], r"seat 3's place 2 is taken: seats 0, 1, 2 share place 1, which spans places 1\.\.3"),
    ([2, 2], r"seats 0, 1 share place 2, which spans places 2\.\.3, but there are 2 seats"),
    ([1, 3, 3], r"seats 1, 2 share place 3, which spans places 3\.\.4, but there are 3 seats"),
    ([None, 3, 3], r"seats 1, 2 share place 3, which spans places 3\.\.4, but there are 3 seats"),
    ([1, 1, None, 2], r"seat 3's place 2 is taken: seats 0, 1 share place 1"),
])
def test_place_rewards_refuse_dense_ranks(places: list, message: str) -> None:
    """Seats that share a place skip the places below them, as ``Game.places`` gives them (standard competition
    ranking, ``[1, 1, 3]``): the dense ``[1, 1, 2]`` paid ``[0.5, 0.5, 0.0]`` (a sum of 1, where every finished
    game sums to 0), and ``[2, 2]`` (no first place) was paid as a draw.  Each is a ``ValueError`` naming the seat
    whose place cannot be."""
    for scheme in ("place", "win_loss"):
        with pytest.raises(ValueError, match=message) as caught:
            place_rewards(places, scheme)
        assert not isinstance(caught.value, TypeError)


def test_place_rewards_take_every_ranking_a_game_gives() -> None:
    """Competition ranks, complete or partial (undecided seats None; a resigned seat takes the last free place),
    as the engine leaves them, are taken, and every complete one sums to 0."""
    for places in ([1, 1, 3], [1, 2, 2, 4], [1, 2, 2, 2], [3, 1, 1], [None, None, 3], [1, None, 3], [None, 1, 1],
                   [1, 1, None], [None, None, 3, 4], [1, None, None, 4], [None, 2, 2], [1, 1, 1, 1, 5, 5], [None] * 6):
        rewards = place_rewards(places)
        if None not in places:
            assert sum(rewards) == pytest.approx(0.0), places
    for n in (2, 3, 4, 6):  # the places of finished games, each decided by progress at a move limit
        for seed in range(3):
            game = Game(Rules("star", n, move_limit=8 * n, limit_outcome="progress"))
            random_playout = random.Random(seed)
            while not game.is_over:
                game.play(random_playout.choice(game.legal_moves()))
            assert sum(place_rewards(game.places)) == pytest.approx(0.0)


def test_the_reward_and_seat_arguments_are_type_checked() -> None:
    """``progress_shaping``, a seat of the distance tables and a CPU player's seed: the wrong type is a
    ``TypeError`` (they were ``ValueError``), a value of the right type out of range a ``ValueError``."""
    from halma_env.envs.players import RandomPlayer
    from halma_env.rewards import check_progress_shaping

    for bad in ("0.1", True, None, [0.1]):
        with pytest.raises(TypeError, match="progress_shaping must be a finite number"):
            check_progress_shaping(bad)
    for bad in (float("nan"), 1e10):
        with pytest.raises(ValueError, match="progress_shaping must be a finite number") as caught:
            check_progress_shaping(bad)
        assert not isinstance(caught.value, TypeError)
    for bad in (True, 1.0, "1", None):
        with pytest.raises(TypeError, match="seat must be a seat 0..1 of star with 2 seats"):
            goal_distance("star", 2, bad)
    with pytest.raises(ValueError, match="seat must be a seat 0..1 of star with 2 seats, got 2"):
        goal_distance("star", 2, 2)
    assert goal_distance("star", 2, np.int64(1)) == goal_distance("star", 2, 1)
    for bad in (True, 1.0, "1"):
        with pytest.raises(TypeError, match="seed must be None or an integer >= 0"):
            RandomPlayer(seed=bad)
    with pytest.raises(ValueError, match="seed must be None or an integer >= 0, got -1"):
        RandomPlayer(seed=-1)
    assert repr(RandomPlayer(seed=np.int64(3))) == "RandomPlayer(seed=3)"
    for flag in ("info_legal_moves", "move_limit_truncates"):
        for bad in (1, "yes", None):
            with pytest.raises(TypeError, match=f"{flag} must be True or False"):
                raw_env(**{flag: bad})


def test_goal_distance_and_shaping_refuse_a_seat_or_hole_the_game_has_not() -> None:
    """``goal_distance("star", 2, 5)`` raised a bare IndexError and seat -1 silently gave seat 1's table (the
    index wrapped); ``shaping_potential`` raised an IndexError for hole 500 and counted hole -1 as hole 120.
    Each is a ValueError naming the seat or the hole, and the game (checked by ``layout``) comes first."""
    for seat in (5, 2, -1, "0", 1.0, True, None):
        shown = re.escape(repr(seat))
        for table in (goal_distance, king_distance):
            with pytest.raises(ValueError, match=f"seat must be a seat 0..1 of diamond with 2 seats, got {shown}"):
                table("diamond", 2, seat)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=f"seat must be a seat 0..1 of star with 2 seats, got {shown}"):
            shaping_potential("star", 2, seat, [0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="star is played by 1, 2, 3, 4, 5, 6 seats, not 7"):
        goal_distance("star", 7, 0)
    for hole in (500, 121, -1, 1.0, "3", None):
        shown = re.escape(repr(hole))
        with pytest.raises(ValueError, match=rf"holes must be holes 0..120 of the star board, got {shown} in \[0, "):
            shaping_potential("star", 2, 0, [0, hole])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="holes must be holes 0..255 of the halma16 board, got 256"):
        shaping_potential("halma16", 2, 0, [256])
    assert goal_distance("star", 2, np.int64(1)) == goal_distance("star", 2, 1)  # numpy's integers are seats
    assert shaping_potential("star", 2, 0, [np.int64(120)]) == goal_distance("star", 2, 0)[120]


def test_seat_rewards_default_to_the_place_scheme() -> None:
    game = Game(Rules("star", 3))
    game.resign(2)
    assert seat_rewards(game) == [None, None, -1.0]  # decided seats only
    game.resign(0)
    assert game.is_over and game.places == [2, 1, 3]
    assert seat_rewards(game) == seat_rewards(game, "place") == [0.0, 1.0, -1.0]
    assert seat_rewards(game, "win_loss") == [-1.0, 1.0, -1.0]


def play_to_end(e, rng: random.Random, max_turns: int = 5000):
    """Random legal play to the end; returns per-agent total reward, dead steps seen, final game."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    dead_steps: list[str] = []
    e.reset(seed=rng.randrange(1000))
    for turn, agent in enumerate(e.agent_iter()):
        assert turn < max_turns, "the game did not end"
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            dead_steps.append(agent)
            e.step(None)
            continue
        assert info["legal_moves"], "a policy was shown a turn without moves (a pass)"
        e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return totals, dead_steps, e.unwrapped.game


OPTION_SETS = [
    ("star", 2, dict(move_limit=40)),
    ("star", 2, dict(move_limit=30, limit_outcome="progress")),
    ("star", 3, dict(move_limit=45, limit_outcome="progress", play_to_end=False)),
    ("star", 4, dict(stall_limit=6)),
    ("star", 6, dict(move_limit=36, first_seat=3, anti_blocking=False)),
    ("star", 1, dict(move_limit=20)),
    ("diamond", 3, dict(move_limit=30, limit_outcome="progress")),
    ("halma16", 2, dict(move_limit=40, repetition_limit=2)),
    ("halma16", 4, dict(stall_limit=8)),
]


@pytest.mark.parametrize(("variant", "n", "options"), OPTION_SETS, ids=[f"{v}{n}-{o}" for v, n, o in OPTION_SETS])
@pytest.mark.parametrize("shaping", [0.0, 0.5])
def test_random_games_rewards_match_places(variant: str, n: int, options: dict, shaping: float) -> None:
    e = make_env(variant=variant, num_players=n, progress_shaping=shaping, **options)
    rng = random.Random(f"{variant}-{n}-{shaping}")  # (a str seed: hash() of a str differs between processes)
    for _ in range(2):
        totals, dead, game = play_to_end(e, rng)
        assert game.is_over and e.agents == []
        assert sorted(dead) == e.possible_agents  # every agent leaves through exactly one dead step
        expected = seat_rewards(game, "place")
        if n > 1:
            assert expected == place_rewards(game.places, "place")
        for seat, agent in enumerate(e.possible_agents):
            phi0 = seat_potential(Game(game.rules), seat)  # the king (diamond) counts its distance to the tip
            phi1 = seat_potential(game, seat)
            want = expected[seat] + shaping * (phi0 - phi1) / phi0
            assert totals[agent] == pytest.approx(want, abs=1e-9), (agent, game.places, game.end_reason)
        if n > 1 and shaping == 0.0:
            assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)  # the place scheme is zero-sum


def test_move_limit_truncates_and_other_ends_terminate() -> None:
    e = raw_env(num_players=2, move_limit=6)
    e.reset()
    for _ in range(6):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    assert e.game.end_reason == "move_limit"
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert all(info["end_reason"] == "move_limit" and info["place"] == 1 for info in e.infos.values())
    e = raw_env(num_players=4, stall_limit=1)
    e.reset()
    while e.agents and not any(e.terminations.values()):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    assert e.game.end_reason == "stall_limit"
    assert all(e.terminations.values()) and not any(e.truncations.values())


def test_move_limit_truncates_false_makes_the_limit_a_termination() -> None:
    """For learners that bootstrap at a truncation (SB3's TimeLimit.truncated): the places are final."""
    from halma_env.envs import HalmaEnv

    envs = [raw_env(num_players=2, move_limit=6, limit_outcome="progress", move_limit_truncates=flag)
            for flag in (False, True)]
    for env in envs:
        env.reset()
        for _ in range(6):
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    e, truncating = envs
    assert e.game.end_reason == "move_limit"
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert all(truncating.truncations.values()) and not any(truncating.terminations.values())
    assert e.rewards == truncating.rewards and e.infos == truncating.infos  # the same places paid
    copy = pickle.loads(pickle.dumps(e))  # EzPickle keeps the setting
    assert copy.move_limit_truncates is False
    gym = HalmaEnv(num_players=2, move_limit=4, move_limit_truncates=False)
    gym.reset(seed=0)
    ends = [gym.step(int(np.flatnonzero(gym.action_masks())[0]))[2:4] for _ in range(2)]
    assert ends == [(False, False), (True, False)]  # terminated, not truncated
    with pytest.raises(ValueError, match="move_limit_truncates must be True or False, got 1"):
        raw_env(move_limit_truncates=1)


def test_solitaire_move_limit_is_no_win() -> None:
    e = raw_env(variant="star", num_players=1, move_limit=3)
    e.reset()
    total = 0.0
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        total += reward
        e.step(None if term or trunc else int(np.flatnonzero(e.observe(agent)["action_mask"])[0]))
    assert total == 0.0


def finishing_position() -> str:
    """star, 3 seats: seat 0 has 9 pieces in its goal (the top point) and steps 14 -> 6 to finish."""
    start = Game(Rules("star", 3))
    pieces = {h: "0" for h in (0, 1, 2, 3, 4, 5, 7, 8, 9, 14)}
    for seat in (1, 2):
        pieces.update({h: str(seat) for h in start.pieces(seat)})
    return position("star", 3, pieces)


def test_a_finished_seat_gets_its_place_a_dead_step_and_the_others_play_on() -> None:
    e = make_env(variant="star", num_players=3)
    e.reset(options={"position": finishing_position()})
    assert e.agent_selection == "player_0"
    e.step(e.unwrapped.encode_move(0, (14, 6)))
    assert e.terminations["player_0"] and e.rewards["player_0"] == 1.0
    assert e.infos["player_0"]["place"] == 1
    assert e.agent_selection == "player_0"  # dead agents step first
    obs, reward, term, _, _ = e.last()
    assert term and reward == 1.0 and not obs["action_mask"].any()
    with pytest.raises(ValueError, match="only valid action is None"):
        e.unwrapped.step(0)
    e.step(None)
    assert e.agents == ["player_1", "player_2"] and e.agent_selection == "player_1"
    assert not any(e.terminations.values())
    e.unwrapped.resign("player_2")  # two left: the other takes second place, the game ends
    assert e.unwrapped.game.is_over and e.unwrapped.game.places == [1, 2, 3]
    assert e.rewards == {"player_1": 0.0, "player_2": -1.0}
    for _ in e.agent_iter():
        e.step(None)
    assert e.agents == []


def test_resign_with_three_seats_keeps_the_game_going() -> None:
    e = raw_env(num_players=3)
    e.reset()
    e.resign("player_0")
    assert e.terminations == {"player_0": True, "player_1": False, "player_2": False}
    assert e._cumulative_rewards["player_0"] == -1.0 and e.infos["player_0"]["place"] == 3
    assert e.agent_selection == "player_0"
    e.step(None)
    assert e.agent_selection == "player_1" and e.observe("player_1")["action_mask"].any()
    with pytest.raises(ValueError, match="no longer playing"):
        e.resign("player_0")


def test_reset_from_a_position_checks_the_variant() -> None:
    e = raw_env(variant="star", num_players=2)
    with pytest.raises(ValueError, match="3 seats"):
        e.reset(options={"position": finishing_position()})
    e.reset(options={"unknown": 1})  # other option keys are ignored (PettingZoo's api_test passes some)


# --- illegal actions and bad input ------------------------------------------------------------


def test_illegal_action_wrapped_and_raw() -> None:
    e = make_env()
    e.reset()
    e.step(0)  # hole 0 -> hole 0 is never legal
    assert e.rewards["player_0"] == -1 and all(e.terminations.values())
    # the wrapper's end, as docs/environment.md says: truncated too, infos and game untouched
    assert all(e.truncations.values()) and e.unwrapped.game.ply == 0
    assert e.infos["player_0"]["place"] == 0 and e.infos["player_0"]["end_reason"] is None
    raw = raw_env()
    raw.reset()
    with pytest.raises(IllegalMoveError, match="no piece on hole"):
        raw.step(raw.encode_move(0, (60, 61)))
    with pytest.raises(ValueError, match="action must be"):
        raw.step(121 * 121)
    with pytest.raises(ValueError, match="must act"):
        raw.step(None)
    assert raw.game.ply == 0


@pytest.mark.parametrize("optimize", [False, True])
def test_wrapped_env_refuses_out_of_range_actions_with_the_raw_envs_error(optimize: bool) -> None:
    """``env()`` answered -1 or 121*121 with PettingZoo's bounds assertion, which ``python -O`` strips:
    -1 then read the action mask from its end and ended the game as an illegal move, and 121*121 was
    an IndexError; None for the live agent was the assertion "action is not in action space" (and under -O
    numpy's "truth value of an array" error).  Now the raw env's ValueError each time, and nothing is played."""
    code = (
        "import halma_env\n"
        "for bad in (-1, 121 * 121, -1108, None):\n"
        "    e = halma_env.env(variant='star', num_players=2)\n"
        "    e.reset()\n"
        "    try:\n"
        "        e.step(bad)\n"
        "    except ValueError as error:\n"
        "        expected = f'action must be 0..14640, got {bad}' if bad is not None else \\\n"
        "            'player_0 is alive and must act: None is only for terminated or truncated agents'\n"
        "        assert str(error) == expected, error\n"
        "    else:\n"
        "        raise AssertionError(f'{bad} was taken: {e.rewards}')\n"
        "    assert e.unwrapped.game.ply == 0 and not any(e.terminations.values())\n"
        "    e.step(e.unwrapped.encode_move(0, (113, 104)))  # the env still plays\n"
        "    assert e.unwrapped.game.ply == 1\n"
        "print('ok')\n"
    )
    flags = ["-O"] if optimize else []
    done = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_non_integer_actions_are_refused_not_truncated() -> None:
    raw = raw_env()
    raw.reset()
    legal = raw.encode_move(0, (113, 104))
    for bad in (legal + 0.7, float(legal), str(legal), np.float64(legal), True, np.array([legal]), [legal]):
        with pytest.raises(TypeError, match="action must be an integer"):
            raw.step(bad)
    with pytest.raises(TypeError, match="action must be an integer, got 'x'"):
        raw.step("x")
    assert raw.game.ply == 0
    raw.step(np.int64(legal))  # numpy integers and 0-d integer arrays are integers
    raw.step(np.array(raw.encode_move(1, (7, 16))))
    assert raw.game.ply == 2
    with pytest.raises(TypeError, match="action must be an integer"):
        raw.step(np.True_)  # numpy's bool is no integer either
    assert raw.game.ply == 2


def test_a_0d_integer_tensor_is_an_integer_action() -> None:
    """A 0-d integer tensor, as a torch policy's argmax gives it, is an integer too (it was refused); not a
    bool, float or several-value one.  (The only part of the action checks that needs torch.)"""
    import torch

    raw = raw_env()
    raw.reset()
    for bad in (torch.tensor(True), torch.tensor(3.0), torch.tensor([1, 2]), torch.tensor([3]), torch.tensor([[3]])):
        with pytest.raises(TypeError, match="action must be an integer"):
            raw.step(bad)
    assert raw.game.ply == 0
    raw.step(torch.tensor(raw.encode_move(0, raw.game.legal_moves()[0])))
    assert raw.game.ply == 1


def test_calls_before_reset_and_unknown_agents_name_the_problem() -> None:
    with pytest.raises(RuntimeError, match="call reset\\(\\) before step\\(\\)"):
        raw_env().step(0)
    with pytest.raises(RuntimeError, match="call reset\\(\\) before observe\\(\\)"):
        raw_env().observe("player_0")
    for mode in ("ansi", "rgb_array", "human"):
        with pytest.raises(RuntimeError, match="call reset\\(\\) before render\\(\\)"):
            raw_env(render_mode=mode).render()
    raw = raw_env()
    raw.reset()
    for call in (raw.observe, raw.action_mask):
        with pytest.raises(ValueError, match="unknown agent 'player_9'; the agents are player_0, player_1"):
            call("player_9")


def test_reset_options_must_be_a_dict_and_a_position_text() -> None:
    raw = raw_env()
    with pytest.raises(TypeError, match="options must be a dict or None, got str"):
        raw.reset(options="position")
    with pytest.raises(ValueError, match="a position is empty"):
        raw.reset(options={"position": " "})
    with pytest.raises(ValueError, match="a position is a line of text, got int"):
        raw.reset(options={"position": 5})


def test_reset_seed_must_be_an_integer() -> None:
    raw = raw_env(opponents={1: "random"})
    for bad in (1.5, "x", True):
        with pytest.raises(TypeError, match="seed must be an integer or None"):
            raw.reset(seed=bad)
    raw.reset(seed=np.int64(3))
    raw.reset(seed=None)


def test_reset_position_sets_the_seat_to_move_whatever_first_seat_is() -> None:
    seat1 = Game(Rules("star", 2)).position().replace(" 0 0", " 1 0")
    raw = raw_env(first_seat=0)
    raw.reset(options={"position": seat1})
    assert raw.agent_selection == "player_1" and raw.game.rules.first_seat == 1


def test_a_seat_finished_in_a_loaded_position_is_paid_in_reset_and_leaves_first() -> None:
    """docs/environment.md, ``reset``: a loaded position in which a seat has already finished pays that
    seat's place in ``reset()``, and its dead step comes before anyone moves."""
    from agents.registry import make_player

    game = Game(Rules("star", 3))
    greedy = make_player("greedy", seed=0)
    while all(status == "active" for status in game.status):
        game.play(greedy.select_move(game))
    finished = game.status.index("finished")
    e = make_env(variant="star", num_players=3, move_limit=900)
    e.reset(options={"position": game.position()})
    name = f"player_{finished}"
    assert e.agent_selection == name
    assert e.rewards == {a: (1.0 if a == name else 0.0) for a in e.possible_agents}
    _, reward, terminated, truncated, info = e.last()
    assert (reward, terminated, truncated, info["place"]) == (1.0, True, False, 1)
    e.step(None)
    assert name not in e.agents and e.agent_selection == f"player_{game.to_move}"
    assert e.rewards == dict.fromkeys(e.agents, 0.0)


def test_any_integer_type_is_a_seat_count_and_the_encoding_names_a_game_it_lacks() -> None:
    """num_players of any integer type that Rules takes (a 0-d tensor or array, numpy's ints) makes the env of
    that many seats (it was a KeyError inside the encoding's cache); encoding() itself refuses a game the engine
    does not play by name, and 2.0 is not 2 (a cached star-2 encoding was returned for it)."""
    import torch

    from halma_env.envs import HalmaEnv

    for seats in (torch.tensor(3), np.array(3), np.int16(3)):
        e = raw_env(num_players=seats)
        e.reset(seed=0)
        assert e.possible_agents == ["player_0", "player_1", "player_2"] and e.encoding is encoding("star", 3)
        gym_env = HalmaEnv(num_players=seats)
        assert gym_env.reset(seed=0)[0]["observation"].shape == e.observe("player_0")["observation"].shape
    encoding("star", 2)
    for args, message in [(("star", 7), "star is played by 1, 2, 3, 4, 5, 6 seats, not 7"),
                          (("star", 2.0), "star is played by 1, 2, 3, 4, 5, 6 seats, not 2.0"),
                          (("halma16", 3), "halma16 is played by 2, 4 seats, not 3"),
                          (("chess", 2), "unknown variant 'chess'")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            encoding(*args)


def test_bad_constructor_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown rule option.*colour"):
        raw_env(colour="red")
    with pytest.raises(ValueError, match="diamond is played by 2, 3 seats"):
        raw_env(variant="diamond", num_players=4)
    with pytest.raises(ValueError, match="reward must be one of"):
        raw_env(reward="score")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="video")
    with pytest.raises(ValueError, match="move_limit"):
        raw_env(move_limit=0)
    with pytest.raises(ValueError, match="unknown player"):
        raw_env(opponents={"player_1": "no-such-bot"})
    with pytest.raises(ValueError, match="agent name"):
        raw_env().set_cpu("player_7", "random")
    with pytest.raises(ValueError, match="opponents must be a mapping"):
        raw_env(opponents=["random"])
    with pytest.raises(ValueError, match="a player is a name, a callable"):
        raw_env(opponents={1: 42})
    for bad in (float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="progress_shaping must be a finite number"):
            raw_env(progress_shaping=bad)


def test_opponents_may_be_any_mapping() -> None:
    """``opponents`` is ``{agent name or seat: player}``: a ``MappingProxyType`` or a ``ChainMap`` was refused with
    "opponents must be a dict" (``HalmaEnv``'s opponents took any mapping).  Any mapping is read as a dict (and
    pickled as one: a ``MappingProxyType`` cannot be); what is no mapping stays a ``WrongTypeError``."""
    from collections import ChainMap
    from types import MappingProxyType

    from halma_env.rules import WrongTypeError

    for opponents in (MappingProxyType({"player_1": "random"}), ChainMap({1: "random"}, {1: "no-such-bot"})):
        e = raw_env(num_players=2, opponents=opponents)
        assert list(e.cpu_seats()) == ["player_1"]
        assert list(pickle.loads(pickle.dumps(e)).cpu_seats()) == ["player_1"]
    with pytest.raises(ValueError, match="opponents: seat 1 is named twice"):
        raw_env(num_players=2, opponents=MappingProxyType({1: "random", "player_1": "random"}))
    for bad in ([("player_1", "random")], "random", {"player_1"}):
        with pytest.raises(WrongTypeError, match="^opponents must be a mapping {agent name or seat: player}, got"):
            raw_env(num_players=2, opponents=bad)


def test_every_rule_option_reaches_the_game() -> None:
    options = dict(anti_blocking=False, play_to_end=False, move_limit=50, limit_outcome="progress",
                   stall_limit=9, repetition_limit=4, first_seat=2)
    e = raw_env(variant="star", num_players=4, **options)
    e.reset()
    assert e.game.rules == Rules("star", 4, **options)
    assert e.agent_selection == "player_2"


# --- rendering --------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "n"), [("star", 6), ("diamond", 3), ("halma16", 4)])
def test_rgb_array_is_a_picture_of_the_position(variant: str, n: int) -> None:
    e = raw_env(variant=variant, num_players=n, render_mode="rgb_array")
    e.reset()
    before = e.render()
    assert before.dtype == np.uint8 and before.ndim == 3 and before.shape[2] == 3
    colours = {tuple(c) for c in before.reshape(-1, 3)[::7]}
    assert len(colours) > 8  # board, holes, n seat colours, camps
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    after = e.render()
    assert after.shape == before.shape and (after != before).any(axis=2).sum() > 100  # piece moved + highlight


def test_ansi_and_human_render(capsys) -> None:
    e = raw_env(render_mode="ansi")
    e.reset()
    text = e.render()
    assert isinstance(text, str) and "\x1b[" not in text and text.count("0") >= 10
    h = raw_env(render_mode="human")
    h.reset()  # human mode prints the board after reset and every step
    assert "seat 0 to move" in capsys.readouterr().out


# --- seat substitution (SPEC §4) --------------------------------------------------------------


def test_cpu_seat_is_played_inside_step_and_can_be_taken_back() -> None:
    e = make_env(variant="star", num_players=3)
    e.reset(seed=3)
    raw = e.unwrapped
    raw.set_cpu("player_1", "random")
    rng = random.Random(0)
    seen = []
    for _ in range(12):
        agent = e.agent_selection
        seen.append(agent)
        e.step(random_action(e, agent, rng))
    assert "player_1" not in seen and raw.game.ply > 12  # player_1's turns were played by the CPU
    plies_by_seat = [ev.seat for ev in raw.game.history if ev.kind == "move"]
    assert plies_by_seat.count(1) >= 5
    raw.set_cpu("player_1", None)  # take the seat back: the game goes on unchanged
    ply = raw.game.ply
    for _ in range(3):
        e.step(random_action(e, e.agent_selection, rng))
    assert raw.game.ply == ply + 3 and raw.cpu_seats() == {}


def test_cpu_takes_over_the_seat_to_move_at_once_and_callables_and_objects_work() -> None:
    calls = []

    def first_move(game):
        calls.append(game.ply)
        return game.legal_moves()[0]

    class Last:
        name = "last"

        def select_move(self, game, time_budget=None):
            return game.legal_moves()[-1]

    e = raw_env(num_players=2, opponents={1: Last()}, move_limit=12)
    e.reset()
    e.step(e.encode_move(0, (111, 102)))
    assert e.agent_selection == "player_0" and e.game.ply == 2
    e.set_cpu("player_0", first_move)  # the seat to move: the CPU plays at once, then seat 1's CPU, ...
    assert calls[0] == 2  # ... with every seat a CPU the game runs to its end (here the move limit)
    assert e.game.is_over and e.game.ply == 12 and all(e.truncations.values())
    assert e.agent_selection in e.agents  # the dead steps remain for the loop
    for _ in e.agent_iter():
        e.step(None)
    assert e.agents == []


def test_cpu_seats_show_a_callable_and_the_built_in_random_player_by_name() -> None:
    """A callable CPU player showed in ``cpu_seats()`` as ``<halma_env.envs.players.CallablePlayer object at
    0x...>`` (and the built-in random player likewise): each now shows what it plays, as the bots' reprs do."""
    from halma_env.envs.players import CallablePlayer, RandomPlayer

    def first_move(game):
        return game.legal_moves()[0]

    e = raw_env(opponents={1: first_move})
    e.reset()
    assert repr(e.cpu_seats()) == "{'player_1': CallablePlayer(test_cpu_seats_show_a_callable_and_the_built_in_" \
                                  "random_player_by_name.<locals>.first_move)}"
    assert repr(CallablePlayer(first_move, name="bob")).endswith(".first_move, name='bob')")
    assert repr(CallablePlayer(len)) == "CallablePlayer(len)"
    assert repr(RandomPlayer(7)) == "RandomPlayer(seed=7)" and repr(RandomPlayer()) == "RandomPlayer(seed=None)"


def test_named_bot_through_the_entry_point() -> None:
    e = raw_env(num_players=2, opponents={"player_1": "greedy"}, move_limit=20)
    e.reset(seed=0)
    assert type(e.cpu_seats()["player_1"]).__name__ != "RandomPlayer"
    e.step(e.encode_move(0, (111, 102)))
    assert e.game.ply == 2 and e.agent_selection == "player_0"


def test_random_fallback_without_the_agents_package(monkeypatch) -> None:
    from halma_env.envs import players

    monkeypatch.setattr(players, "_registry", lambda: None)
    p = players.make_player("random", 5)
    assert isinstance(p, players.RandomPlayer)
    g = Game(Rules("star", 2))
    assert p.select_move(g) in g.legal_moves()
    with pytest.raises(ValueError, match="only 'random' is built in"):
        players.make_player("greedy")


def test_illegal_cpu_move_is_reported() -> None:
    e = raw_env(opponents={1: lambda game: (0, 1)})
    e.reset()
    with pytest.raises(IllegalMoveError, match="CPU player .* player_1"):
        e.step(e.encode_move(0, (111, 102)))


def test_cpu_players_are_reseeded_by_reset_seed() -> None:
    def run() -> list:
        e = raw_env(num_players=2, opponents={1: "random"}, move_limit=30)
        e.reset(seed=11)
        rng = random.Random(0)
        while e.agents:
            e.step(random_action(e, e.agent_selection, rng))
        return e.game.moves

    assert run() == run()


# --- pickling ----------------------------------------------------------------------------------


def test_pickle_round_trip() -> None:
    e = make_env(variant="diamond", num_players=3, reward="win_loss", progress_shaping=0.25, move_limit=77)
    e.reset(seed=0)
    e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    clone = pickle.loads(pickle.dumps(e))
    raw = clone.unwrapped
    assert raw.rules == Rules("diamond", 3, move_limit=77)
    assert raw.reward_scheme == "win_loss" and raw.progress_shaping == 0.25
    clone.reset(seed=0)
    e.reset(seed=0)
    assert np.array_equal(clone.last()[0]["observation"], e.last()[0]["observation"])
    pickle.loads(pickle.dumps(raw_env(opponents={1: "random"})))


def test_shaping_matches_goal_distance_per_move() -> None:
    e = raw_env(progress_shaping=2.0)
    e.reset()
    table = goal_distance("star", 2, 0)
    phi0 = shaping_potential("star", 2, 0, list(layout("star", 2).start[0]))
    e.step(e.encode_move(0, (111, 102)))
    assert e._cumulative_rewards["player_0"] == pytest.approx(2.0 * (table[111] - table[102]) / phi0)


# a diamond 3-seat endgame from training: seat 0 has 14 pieces in its goal but its king A on hole 8,
# off the goal tip (hole 0), so it has not finished
KING_OFF_TIP = ("diamond 3 0/00/000/00A0/....2000022../....2.B02.../.....2.1.../1.11211.../.....1.21/"
                ".1..12212./..2....1.../......2.2.../.C.......1..1/..../.../../. 0 900")


def test_shaping_potential_counts_the_kings_distance_to_its_tip() -> None:
    game = Game.from_position(KING_OFF_TIP)
    holes, lay = game.pieces(0), game.layout
    assert game.piece_at(8) == (0, True) and lay.goal_tip[0] == 0
    # the old potential (goal distance only) sees just the straggler on hole 30; the king adds its 3 steps to the tip
    assert shaping_potential("diamond", 3, 0, holes) == goal_distance("diamond", 3, 0)[30] == 1
    assert shaping_potential("diamond", 3, 0, holes, king=8) == 1 + king_distance("diamond", 3, 0)[8] == 4
    assert seat_potential(game, 0) == 4
    start = Game(game.rules)
    assert seat_potential(start, 0) == shaping_potential("diamond", 3, 0, list(lay.start[0]), lay.king_start[0])
    assert seat_potential(start, 0) == sum(goal_distance("diamond", 3, 0)[h] for h in lay.start[0]) - 12 + 16
    with pytest.raises(ValueError, match="king hole 50"):
        shaping_potential("diamond", 3, 0, holes, king=50)
    with pytest.raises(ValueError, match="no kings"):
        king_distance("star", 2, 0)


def test_phi_is_zero_only_with_the_goal_filled_and_the_king_on_its_tip() -> None:
    lay = layout("diamond", 2)
    goal, tip = sorted(lay.goals[0]), lay.goal_tip[0]
    assert len(goal) == 15 and tip in goal
    # every ordinary piece in the goal, the king on the tip: 0
    assert shaping_potential("diamond", 2, 0, goal, king=tip) == 0
    # the camp filled but the king on any other goal hole: positive (its distance to the tip)
    for k in goal:
        if k != tip:
            assert shaping_potential("diamond", 2, 0, goal, king=k) == lay.geometry.distance(k, tip) > 0
    # the king on the tip but an ordinary piece outside the goal: positive
    outside = next(h for h in range(lay.geometry.num_holes) if h not in goal)
    assert shaping_potential("diamond", 2, 0, [outside] + [h for h in goal if h != goal[-1]], king=tip) > 0


def king_off_tip_position() -> str:
    """diamond 3: seat 0 has its king on hole 1 beside its empty goal tip (hole 0), 13 ordinary
    pieces on the rest of its goal and one on hole 40 outside; seats 1 and 2 only their kings, on
    their start holes (their camps share corner holes with seat 0's goal)."""
    lay = layout("diamond", 3)
    pieces = {h: "0" for h in lay.goals[0] if h not in (0, 1)} | {40: "0", 1: "A"}
    pieces |= {lay.king_start[1]: "B", lay.king_start[2]: "C"}
    return position("diamond", 3, pieces)


def test_moving_the_king_onto_its_tip_earns_shaping() -> None:
    e = raw_env(variant="diamond", num_players=3, progress_shaping=1.0)
    e.reset(options={"position": king_off_tip_position()})
    game = e.game
    assert game.piece_at(1) == (0, True) and game.to_move == 0
    phi0 = seat_potential(Game(game.rules), 0)
    assert seat_potential(game, 0) == goal_distance("diamond", 3, 0)[40] + 1
    e.step(e.encode_move(0, (1, 0)))  # the king steps onto its tip: phi falls by 1
    assert e.game.piece_at(0) == (0, True)
    assert e._cumulative_rewards["player_0"] == pytest.approx(1.0 / phi0) and 1.0 / phi0 > 0
    assert seat_potential(e.game, 0) == goal_distance("diamond", 3, 0)[40] > 0  # the straggler is still out


# --- copies, the end of the game and the encoding helpers (audit) ------------------------------


def env_state(e) -> tuple:
    """Everything an agent loop sees, for comparing an env with its copy."""
    raw = e.unwrapped
    return (raw.game.position(), raw.game.ply, list(raw.agents), raw.agent_selection, dict(raw.rewards),
            dict(raw._cumulative_rewards), dict(raw.terminations), dict(raw.truncations),
            {a: raw.observe(a)["observation"].tobytes() for a in raw.agents})


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
def test_deepcopy_mid_game_is_an_independent_copy(wrapped: bool) -> None:
    # copy.deepcopy must copy the game in progress (for tree search or branching), not rebuild a
    # fresh env from the constructor arguments as EzPickle's pickling does (PettingZoo issue #1307)
    import copy

    make = make_env if wrapped else raw_env
    e = make(variant="star", num_players=3, opponents={2: "random"}, progress_shaping=0.5, move_limit=60)
    e.reset(seed=5)
    rng = random.Random(1)
    for _ in range(4):
        e.step(random_action(e, e.agent_selection, rng))
    clone = copy.deepcopy(e)
    assert env_state(clone) == env_state(e)
    assert clone.unwrapped.game is not e.unwrapped.game
    # the same actions give the same game in both (the CPU seat's random generator was copied too)
    for _ in range(6):
        action = random_action(e, e.agent_selection, rng)
        e.step(action)
        clone.step(action)
        assert env_state(clone) == env_state(e)
    # and playing on in the copy leaves the original alone
    before = env_state(e)
    clone.step(random_action(clone, clone.agent_selection, rng))
    assert env_state(e) == before and clone.unwrapped.game.ply > e.unwrapped.game.ply


def test_a_copy_hands_out_the_read_only_mask_too() -> None:
    """numpy's deepcopy of the cached mask made it writable: in a copy a write (a search pruning moves in
    place) took a legal move out of observe() and step() refused it."""
    import copy

    e = raw_env(num_players=2)
    e.reset(seed=0)
    e.action_mask("player_0")
    for clone in (copy.deepcopy(e), copy.copy(e), copy.deepcopy(make_env(num_players=2))):
        if clone.unwrapped.game is None:
            clone.reset(seed=0)
        mask = clone.unwrapped.action_mask("player_0")
        action = int(np.flatnonzero(mask)[0])
        with pytest.raises(ValueError, match="read-only"):
            mask[action] = 0
        assert clone.observe("player_0")["action_mask"][action] == 1
        clone.step(action)


def test_a_copy_made_inside_an_agent_iter_loop_runs_its_own_loop() -> None:
    """The copy inherited the order check's "not updated yet" state: its own ``agent_iter`` loop stopped at
    once on PettingZoo's "need to call step() or reset()" assertion."""
    import copy

    e = make_env(num_players=2, move_limit=20)
    e.reset(seed=0)
    for _agent in e.agent_iter():
        e.last()
        clone = copy.deepcopy(e)
        plies = 0
        for branch_agent in clone.agent_iter():
            _, _, termination, truncation, _ = clone.last()
            clone.step(None if termination or truncation else
                       int(np.flatnonzero(clone.unwrapped.action_mask(branch_agent))[0]))
            plies += 1
        assert clone.unwrapped.game.is_over and plies >= 20 and e.unwrapped.game.ply == 0
        break
    with pytest.raises(AssertionError, match="need to call step"):  # the original's check still holds
        next(iter(e.agent_iter()))


def test_step_after_every_agent_has_left_says_the_game_is_over() -> None:
    e = raw_env(num_players=2, move_limit=2)
    e.reset()
    for agent in e.agent_iter():
        e.step(None if e.terminations[agent] or e.truncations[agent] else
               int(np.flatnonzero(e.observe(agent)["action_mask"])[0]))
    assert e.agents == []
    for action in (None, 0):
        with pytest.raises(RuntimeError, match="the game is over.*call reset\\(\\)"):
            e.step(action)
    for env in (e, make_env(num_players=2, move_limit=2)):  # last() too (it was a bare KeyError: 'player_1')
        if env is not e:
            env.reset()
            for agent in env.agent_iter():
                env.step(None if env.terminations[agent] or env.truncations[agent] else
                         int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        with pytest.raises(RuntimeError, match="^the game is over and every agent has left: call reset"):
            env.last()
    e.reset()
    assert e.agents == e.possible_agents and e.game.ply == 0


def test_a_cpu_player_that_returns_no_move_is_named_in_the_envs_words() -> None:
    """A CPU player returning None (or an int) was reported with Python's "cannot unpack non-iterable
    NoneType object"; an illegal move keeps the engine's reason."""
    for chosen, why in [(None, " (a move is a Move, (src, dst) or 'SRC-DST')"), (5, " (a move is a Move"),
                        ((0, 1), ": hole 1 is occupied")]:
        e = raw_env(opponents={1: lambda game, chosen=chosen: chosen})
        e.reset(seed=0)
        with pytest.raises(IllegalMoveError, match=re.escape(f"chose {chosen!r}, which is not a legal move{why}")):
            e.step(e.encode_move(0, (113, 104)))
        assert e.game.ply == 0


def test_resign_before_reset_names_the_problem() -> None:
    with pytest.raises(RuntimeError, match="call reset\\(\\) before resign\\(\\)"):
        raw_env().resign("player_0")


def test_encode_move_and_decode_action_refuse_bad_input() -> None:
    e = raw_env()
    assert e.decode_action(0, np.int64(13533)) == (111, 102)
    for bad in (13533.0, 3.7, "13533", True):
        with pytest.raises(TypeError, match="action must be an integer"):
            e.decode_action(0, bad)
    with pytest.raises(ValueError, match="action must be 0..14640, got -1"):
        e.decode_action(0, -1)
    assert e.encode_move(0, (np.int64(111), 102)) == 13533
    for bad in ((-1, 5), (5, 121), (500, 5)):
        with pytest.raises(ValueError, match="holes are 0..120"):
            e.encode_move(0, bad)
    for bad in ((1.5, 2), (True, 2)):
        with pytest.raises(TypeError, match="hole must be an integer"):
            e.encode_move(0, bad)


def test_deepcopy_shares_a_cpu_player_that_cannot_be_copied() -> None:
    import copy

    player = UncopyablePlayer()
    e = raw_env(num_players=2, opponents={1: player})
    e.reset(seed=0)
    clone = copy.deepcopy(e)
    assert clone.cpu_seats()["player_1"] is player and clone.game is not e.game
    clone.step(clone.encode_move(0, (111, 102)))
    assert clone.game.ply == 2 and e.game.ply == 0


def test_any_integer_seed_reseeds_the_cpu_players() -> None:
    """reset(seed=) takes any integer; the seeds derived for the CPU seats stay ones players accept."""
    for seed in (-1, -100_000, 2**63 - 1):
        e = raw_env(num_players=3, opponents={1: "greedy:noise=0.5", 2: "random"})
        e.reset(seed=seed)
        again = raw_env(num_players=3, opponents={1: "greedy:noise=0.5", 2: "random"})
        again.reset(seed=seed)
        for _ in range(3):
            action = int(np.flatnonzero(e.action_mask(e.agent_selection))[0])
            e.step(action)
            again.step(action)
        assert e.game.moves == again.game.moves


# --- behaviour found unpinned by mutation testing (scripts/mutants.py on halma_env/envs/aec.py) ---


def test_deepcopy_before_reset_and_shared_lookup_tables() -> None:
    import copy

    e = raw_env(num_players=3)
    clone = copy.deepcopy(e)  # no game yet: nothing to copy, and the copy is a working env
    assert clone.game is None and clone is not e
    clone.reset()
    assert clone.game.ply == 0 and e.game is None
    e.reset()
    e.step(e.encode_move(0, (111, 102)))
    clone = copy.deepcopy(e)
    # the lookup tables are shared, not copied (a copy for tree search must be cheap)
    for name in ("encoding", "rules", "_canon", "_from_canon", "_hole_of_bit", "_dist", "_king_dist", "_phi_start"):
        assert getattr(clone, name) is getattr(e, name), name


def test_deepcopy_shares_a_named_cpu_player_that_cannot_be_copied(monkeypatch) -> None:
    """A player built from a name (an exported ONNX opponent holding its session, say) that cannot
    be copied is shared by the copy, like a player object of yours."""
    import copy

    from halma_env.envs import aec

    player = UncopyablePlayer("session")
    monkeypatch.setattr(aec, "make_player", lambda spec, seed=None: player if spec == "session" else None)
    e = raw_env(num_players=2, opponents={1: "session"})
    e.reset()
    clone = copy.deepcopy(e)
    assert clone.cpu_seats() == {"player_1": player} and clone._cpu_specs == {1: "session"}
    clone.step(clone.encode_move(0, (111, 102)))  # the shared player plays seat 1 in the copy
    assert clone.game.ply == 2 and e.game.ply == 0


def test_seat_numbers_outside_the_seats_are_refused() -> None:
    e = raw_env(num_players=2)
    e.reset()
    for bad in (2, -1, 5):
        with pytest.raises(ValueError, match="expected an agent name"):
            e.set_cpu(bad, "random")
        with pytest.raises(ValueError, match="expected an agent name"):
            e.encode_move(bad, (111, 102))
    assert e.cpu_seats() == {}
    e.set_cpu(1, "random")  # the last seat is a seat
    assert list(e.cpu_seats()) == ["player_1"]
    # the constructor's opponents: a bad key with the "opponents: " the other refusals have; a seat named twice
    with pytest.raises(ValueError, match=r"^opponents: expected an agent name \(player_0, player_1\) or a seat "
                                         r"number, got 'player_7'$"):
        raw_env(num_players=2, opponents={"player_7": "random"})
    with pytest.raises(ValueError, match=r"^opponents: seat 1 is named twice, as 1 and 'player_1'$"):
        raw_env(num_players=2, opponents={1: "random", "player_1": "greedy"})


@pytest.mark.parametrize(("opponents", "message"), [
    (["random"], "opponents must be a mapping {agent name or seat: player}, got ['random']"),
    ("random", "opponents must be a mapping {agent name or seat: player}, got 'random'"),
    (5, "opponents must be a mapping {agent name or seat: player}, got 5"),
    ({1.0: "random"}, "opponents: expected an agent name (player_0, player_1) or a seat number, got 1.0"),
    ({True: "random"}, "opponents: expected an agent name (player_0, player_1) or a seat number, got True"),
    ({None: "random"}, "opponents: expected an agent name (player_0, player_1) or a seat number, got None"),
    ({(1,): "random"}, "opponents: expected an agent name (player_0, player_1) or a seat number, got (1,)"),
    ({1: 42}, "opponents: seat 1: a player is a name, a callable (game) -> move or an object with select_move(game), "
              "got 42"),
])
def test_opponents_of_the_wrong_type_are_a_type_error(opponents, message: str) -> None:
    """``opponents`` that is no mapping, a key that is neither an agent name nor an integer (1.0, True, None) and a
    player that is none were the ``ValueError`` of a seat out of range: a ``WrongTypeError`` (a
    ``TypeError``, still a ``ValueError``); an unknown agent name or a seat out of range stays a ValueError."""
    from halma_env.rules import WrongTypeError

    with pytest.raises(TypeError, match=f"^{re.escape(message)}$") as caught:
        raw_env(num_players=2, opponents=opponents)
    assert isinstance(caught.value, WrongTypeError) and isinstance(caught.value, ValueError)
    for out_of_range in ({"player_7": "random"}, {2: "random"}, {-1: "random"}, {"p1": "random"}):
        with pytest.raises(ValueError, match="^opponents: expected an agent name") as caught:
            raw_env(num_players=2, opponents=out_of_range)
        assert not isinstance(caught.value, TypeError)
    assert list(raw_env(num_players=2, opponents={np.int64(1): "random"}).cpu_seats()) == ["player_1"]


def test_a_seat_of_the_wrong_type_is_a_type_error_in_the_seat_methods() -> None:
    """``set_cpu``, ``encode_move``, ``decode_action`` and ``resign`` take an agent name or a seat: one of neither
    type (1.0, True, None) was the ValueError of an unknown agent; it is a ``WrongTypeError``."""
    from halma_env.rules import WrongTypeError

    e = raw_env(num_players=2)
    e.reset(seed=0)
    for bad in (1.0, True, None, b"player_1"):
        for method, args in ((e.set_cpu, ("random",)), (e.encode_move, ((111, 102),)), (e.decode_action, (0,)),
                             (e.resign, ())):
            with pytest.raises(WrongTypeError, match=re.escape(f"or a seat number, got {bad!r}")):
                method(bad, *args)
    assert e.cpu_seats() == {} and e.agents == ["player_0", "player_1"]


def test_action_mask_is_cached_for_the_turn_and_observe_copies_it() -> None:
    e = raw_env(num_players=2)
    e.reset()
    mask = e.action_mask("player_0")
    assert e.action_mask("player_0") is mask  # the cached array of the turn, not a copy
    obs = e.observe("player_0")
    assert obs["action_mask"] is not mask and np.array_equal(obs["action_mask"], mask)
    obs["action_mask"][:] = 0  # a user's observation is its own
    assert e.action_mask("player_0").any() and e.observe("player_0")["action_mask"].any()
    e.step(int(np.flatnonzero(mask)[0]))
    assert e.action_mask("player_1") is not mask  # a new turn, a new mask


def test_action_mask_before_reset_names_the_call() -> None:
    with pytest.raises(RuntimeError, match="call reset\\(\\) before action_mask\\(\\)"):
        raw_env().action_mask("player_0")


def test_reset_seed_gives_each_cpu_seat_its_documented_seed() -> None:
    """``reset(seed=s)`` reseeds seat k's player with ``player_seed(s, k)``: numpy's ``SeedSequence`` of (s, k).
    It was ``s + 7919 * (k + 1)``, so seat 1 at seed s + 7919 drew seat 2's numbers at seed s."""
    from halma_env.envs.aec import player_seed

    class Seeded:
        def __init__(self) -> None:
            self.seeds: list[int] = []

        def seed(self, value: int) -> None:
            self.seeds.append(value)

        def select_move(self, game, time_budget=None):
            return game.legal_moves()[0]

    one, two = Seeded(), Seeded()
    e = raw_env(num_players=3, opponents={1: one, 2: two})
    for seed in (10, 2**62, -100_000):
        e.reset(seed=seed)
    assert one.seeds == [player_seed(s, 1) for s in (10, 2**62, -100_000)]
    assert two.seeds == [player_seed(s, 2) for s in (10, 2**62, -100_000)]
    # every (seed, seat) its own seed, negative seeds and seeds past 2**64 included, all in 0..2**63-1
    pairs = [(s, k) for s in [*range(-50, 8000, 7), 7919, 2 * 7919, 2**64, 2**64 + 1, -(2**64)] for k in range(6)]
    seeds = [player_seed(s, k) for s, k in pairs]
    assert len(set(seeds)) == len(pairs) and all(0 <= x < 2**63 for x in seeds)
    assert player_seed(7919, 1) != player_seed(0, 2) and player_seed(-1, 0) != player_seed(0, 0)
    e.reset()  # no seed: the players are not reseeded
    assert len(one.seeds) == len(two.seeds) == 3


def test_negative_action_is_an_out_of_range_error() -> None:
    raw = raw_env()
    raw.reset()
    with pytest.raises(ValueError, match="action must be 0..14640, got -1"):
        raw.step(-1)
    assert raw.game.ply == 0


def test_raw_illegal_action_names_the_agent_and_changes_nothing() -> None:
    raw = raw_env(num_players=2, progress_shaping=1.0)
    raw.reset()
    raw.step(raw.encode_move(0, (111, 102)))
    before = (dict(raw.rewards), dict(raw._cumulative_rewards), raw.game.position())
    assert raw.rewards["player_0"] > 0  # the shaping of player_0's move, still to be read by last()
    action = raw.encode_move(1, (60, 61))
    with pytest.raises(IllegalMoveError, match=f"action {action} \\(60-61\\) is illegal for player_1: no piece"):
        raw.step(action)
    assert (dict(raw.rewards), dict(raw._cumulative_rewards), raw.game.position()) == before


def test_human_render_prints_after_every_step(capsys) -> None:
    h = raw_env(render_mode="human")
    h.reset()
    capsys.readouterr()
    h.step(h.encode_move(0, (111, 102)))
    assert "seat 1 to move" in capsys.readouterr().out
    quiet = raw_env(render_mode="ansi")  # other modes print nothing
    quiet.reset()
    quiet.step(quiet.encode_move(0, (111, 102)))
    assert capsys.readouterr().out == ""


def test_render_without_a_mode_warns_and_returns_none() -> None:
    e = raw_env()
    e.reset()
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert e.render() is None


def test_resigning_the_seat_to_move_refreshes_the_legal_moves() -> None:
    e = raw_env(num_players=3)
    e.reset()
    e.resign("player_0")  # seat 0 was to move: the moves shown now are seat 1's
    game = e.game
    assert game.to_move == 1
    assert e.infos["player_1"]["legal_moves"] == game.legal_moves()
    e.step(None)
    assert e.agent_selection == "player_1"
    assert np.array_equal(e.observe("player_1")["action_mask"], encoding("star", 3).action_mask(game, 1))
    assert e.infos["player_1"]["legal_moves"] == game.legal_moves()


def test_an_ordinary_piece_is_shaped_by_goal_distance_next_to_a_king() -> None:
    """diamond: only the king counts its distance to the goal tip; an ordinary piece stepping onto
    the tip inside its goal (both holes in the goal) earns no shaping."""
    e = raw_env(variant="diamond", num_players=3, progress_shaping=1.0)
    e.reset(options={"position": king_off_tip_position()})
    assert e.game.piece_at(2) == (0, False)
    assert king_distance("diamond", 3, 0)[2] > king_distance("diamond", 3, 0)[0]  # the king's table would pay
    e.step(e.encode_move(0, (2, 0)))
    assert e._cumulative_rewards["player_0"] == 0.0


# --- a failing CPU player changes nothing; truncation; seeds of late CPU players (session 40) -----

def _env_state(env) -> tuple:
    return (env.game.position(), env.game.history, env.agent_selection, list(env.agents), dict(env.rewards),
            dict(env._cumulative_rewards), dict(env.terminations), dict(env.truncations),
            {a: dict(i) for a, i in env.infos.items()}, env.action_mask(env.agent_selection).tolist())


class _FailsOnce:
    """A CPU player whose first answer is not a move; after that it plays the first legal move."""

    name = "fails_once"

    def __init__(self, error: BaseException | None = None) -> None:
        self.calls = 0
        self.error = error

    def select_move(self, game, time_budget=None):
        self.calls += 1
        if self.calls == 1:
            if self.error is not None:
                raise self.error
            return (0, 0)
        return game.legal_moves()[0]


@pytest.mark.parametrize("error", [None, RuntimeError("the player's own bug")])
def test_a_failing_cpu_player_leaves_the_env_as_it_was_before_the_step(error) -> None:
    env = raw_env(num_players=3, opponents={1: _FailsOnce(error)})
    env.reset(seed=0)
    before = _env_state(env)
    action = env.encode_move(0, "113-104")
    if error is None:  # not a move: the env names the player and its seat
        with pytest.raises(IllegalMoveError, match=r"CPU player 'fails_once' of player_1 chose \(0, 0\), which is not "
                           "a legal move"):
            env.step(action)
    else:  # the player's own exception goes on as it is, not turned into an IllegalMoveError
        with pytest.raises(RuntimeError, match=r"^the player's own bug\n\(raised by the CPU player") as caught:
            env.step(action)
        assert caught.value is error and type(caught.value) is RuntimeError
        # whose it is, which the bare exception did not say (its traceback shows the note)
        assert caught.value.__notes__ == ["(raised by the CPU player 'fails_once' of player_1, at ply 1)"]
    assert _env_state(env) == before  # the learner's move was taken back with the CPU's failure
    env.step(action)  # the same move again: the CPU now answers
    assert env.game.ply == 2 and env.agent_selection == "player_2"


def test_a_failing_cpu_player_taken_on_by_set_cpu_or_resign_changes_nothing() -> None:
    env = raw_env(num_players=3)
    env.reset(seed=0)
    env.step(env.encode_move(0, "113-104"))  # player_1 to move
    before = _env_state(env)
    with pytest.raises(IllegalMoveError):
        env.set_cpu("player_1", _FailsOnce())
    assert _env_state(env) == before and env.cpu_seats() == {}
    env.set_cpu("player_2", _FailsOnce())  # not its turn: it is not asked yet
    with pytest.raises(IllegalMoveError):
        env.resign("player_1")  # player_2 would move next and fails
    assert _env_state(env) == before and env.game.status == ["active"] * 3
    env.resign("player_1")
    assert env.game.status[1] == "resigned" and env.game.ply == 2


def test_a_cpu_player_that_fails_on_the_first_turn_leaves_no_game_to_step() -> None:
    env = raw_env(num_players=2, opponents={0: _FailsOnce()})
    with pytest.raises(IllegalMoveError):
        env.reset(seed=0)
    assert env.agents == []  # no game, so no agents: a `while env.agents` loop stops
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)  # the player answers from its second call on
    assert env.game.ply == 1 and env.agent_selection == "player_1"


def test_a_seat_that_finishes_on_the_move_limit_ply_is_terminated_not_truncated() -> None:
    lay = layout("star", 3)
    goal = sorted(lay.goals[0])
    hole = goal[-1]  # the goal hole left empty; the piece that fills it stands on a neighbour outside
    game = Game(Rules("star", 3))
    outside = next(x for x in game.geometry.neighbours[hole] if x not in lay.goals[0] and x not in lay.start[1]
                   and x not in lay.start[2])
    pieces = {h: "0" for h in goal[:-1]}
    pieces[outside] = "0"
    pieces.update({h: "1" for h in lay.start[1]})
    pieces.update({h: "2" for h in lay.start[2]})
    env = raw_env(num_players=3, move_limit=10)
    env.reset(options={"position": position("star", 3, pieces, 0, 9)})
    env.step(env.encode_move(0, (outside, hole)))
    assert env.game.end_reason == "move_limit" and env.game.status == ["finished", "active", "active"]
    assert env.terminations["player_0"] and not env.truncations["player_0"]
    assert env.truncations["player_1"] and not env.terminations["player_1"]
    assert env.truncations["player_2"] and not env.terminations["player_2"]


def _cpu_moves(seed: int | None, late: bool) -> list:
    env = raw_env(num_players=2, move_limit=12) if late else raw_env(num_players=2, move_limit=12,
                                                                      opponents={1: "random"})
    env.reset(seed=seed)
    if late:
        env.set_cpu("player_1", "random")
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    return [m for m in env.game.moves]


def test_a_cpu_player_set_after_a_seeded_reset_is_seeded_by_it() -> None:
    assert _cpu_moves(0, late=True) == _cpu_moves(0, late=True)
    assert _cpu_moves(0, late=True) == _cpu_moves(0, late=False)  # the seed reset gives that seat
    assert _cpu_moves(0, late=True) != _cpu_moves(1, late=True)


NOT_A_MOVE = r"^a move is a Move, a \(src, dst\) pair or 'src-dst' text, got "


@pytest.mark.parametrize(("move", "message"), [
    ((9, 18, 3), NOT_A_MOVE + r"\(9, 18, 3\)$"), (None, NOT_A_MOVE + "None$"), (5, NOT_A_MOVE + "5$"),
    ([113, 104], NOT_A_MOVE + r"\[113, 104\]$"),
    ("113", "^a move is written 'src-dst' with two hole numbers, got '113'$"),  # (Move.parse's IllegalMoveError)
], ids=["triple", "None", "int", "list", "one-hole"])
def test_encode_move_refuses_what_is_not_a_move(move, message) -> None:
    env = raw_env(num_players=2)
    with pytest.raises(ValueError, match=message):
        env.encode_move(0, move)


@pytest.mark.parametrize("agent", ["player_9", "player_", ""])
def test_the_spaces_of_an_unknown_agent_are_refused_by_name(agent) -> None:
    env = raw_env(num_players=2)
    for space in (env.action_space, env.observation_space):
        with pytest.raises(ValueError, match="unknown agent .*player_0, player_1") as caught:
            space(agent)
        assert not isinstance(caught.value, TypeError)  # text that names no agent: a ValueError, not the type


def test_a_seat_given_where_an_agent_name_goes_gets_the_name() -> None:
    """encode_move, decode_action, resign and set_cpu take a seat or an agent; PettingZoo's own methods take the
    name only, and observe(0) said just "unknown agent 0" (an API review tripped on it)."""
    env = raw_env(num_players=2)
    env.reset(seed=0)
    for call in (env.observe, env.action_mask, env.observation_space, env.action_space):
        for seat in (1, np.int64(1)):
            with pytest.raises(ValueError, match=re.escape("; the agents are player_0, player_1 "
                                                           "(seat 1's agent is 'player_1')")):
                call(seat)
    with pytest.raises(ValueError, match=r"got 2 \(int\); the agents are player_0, player_1$"):
        env.observe(2)


@pytest.mark.parametrize("agent", [1.0, 1, np.int64(0), None, True, ["player_0"], ("player_0",), b"player_0"],
                         ids=["float", "int", "np.int64", "None", "bool", "list", "tuple", "bytes"])
def test_an_agent_that_is_not_text_is_a_type_error_naming_its_type(agent) -> None:
    """observe, action_mask, observation_space and action_space take an agent name: one that is not text (1.0, an
    int, None, a list) was the ValueError "unknown agent", where the seat methods (set_cpu, encode_move, ...)
    raise a ``WrongTypeError`` for the wrong type.  It is a ``WrongTypeError`` naming the type (a ``TypeError``,
    still a ``ValueError``, so ``except ValueError`` keeps catching it), through ``env()`` too, and changes
    nothing; text that names no agent stays the ValueError "unknown agent"."""
    from halma_env.rules import WrongTypeError

    message = f"an agent is named by text (str), got {shown_value(agent)} ({type(agent).__name__}); " \
              "the agents are player_0, player_1"
    with pytest.raises(WrongTypeError, match=re.escape(message)):  # (the type first, before "call reset()")
        raw_env(num_players=2).observe(agent)
    for e in (raw_env(num_players=2), make_env(num_players=2)):
        e.reset(seed=0)
        e.step(int(np.flatnonzero(e.unwrapped.action_mask("player_0"))[0]))
        before = (e.agent_selection, e.unwrapped.game.ply, dict(e.rewards), list(e.agents), e.unwrapped._turn_key)
        calls = [e.observe, e.observation_space, e.action_space, e.unwrapped.action_mask]
        for call in calls:
            with pytest.raises(WrongTypeError, match=re.escape(message)) as caught:
                call(agent)
            assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
            with pytest.raises(ValueError, match="^unknown agent 'player_9'; the agents are player_0, player_1$") \
                    as caught:
                call("player_9")
            assert not isinstance(caught.value, TypeError)
        after = (e.agent_selection, e.unwrapped.game.ply, dict(e.rewards), list(e.agents), e.unwrapped._turn_key)
        assert after == before
        assert e.observe("player_1")["action_mask"].any()  # the env plays on


def test_progress_shaping_takes_any_real_number_type() -> None:
    a = raw_env(num_players=2, progress_shaping=np.float32(0.5))
    b = raw_env(num_players=2, progress_shaping=0.5)
    assert a.progress_shaping == b.progress_shaping == 0.5 and type(a.progress_shaping) is float
    for bad in ("0.5", np.True_, True, float("nan"), None):
        with pytest.raises(ValueError, match="progress_shaping"):
            raw_env(num_players=2, progress_shaping=bad)


def test_the_next_mover_has_its_moves_while_a_finished_agent_takes_its_dead_step() -> None:
    """PettingZoo's turn_based_aec_to_parallel reads every agent's observation right after the step, while
    the finished agent is selected for its dead step: the seat to move needs its mask then (it got zeros, and
    a policy sampling from that mask forfeited with an illegal move)."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    e = make_env(variant="star", num_players=3)
    parallel = turn_based_aec_to_parallel(e)
    parallel.reset(options={"position": finishing_position()})
    finish = e.unwrapped.encode_move(0, (14, 6))
    obs, rewards, terminations, _, infos = parallel.step({agent: finish if agent == "player_0" else 0
                                                          for agent in parallel.agents})
    assert terminations["player_0"] and rewards["player_0"] == 1.0
    assert infos["player_1"]["active_agent"] == "player_1"
    game = e.unwrapped.game
    assert np.array_equal(obs["player_1"]["action_mask"], e.unwrapped.encoding.action_mask(game, 1))
    assert obs["player_1"]["action_mask"].sum() == len(game.legal_moves()) == 14
    assert not obs["player_0"]["action_mask"].any() and not obs["player_2"]["action_mask"].any()


def test_game_attributes_before_a_game_say_to_call_reset() -> None:
    """A new raw env, or a wrapped env after pickle.loads (EzPickle builds a fresh env under a wrapper whose
    copied state says it was reset), has no game: its AEC attributes say so instead of a bare AttributeError."""
    with pytest.raises(RuntimeError, match=r"call reset\(\) before last\(\)"):
        raw_env().last()
    wrapped = make_env(num_players=3)
    wrapped.reset()
    fresh = pickle.loads(pickle.dumps(wrapped))
    for attempt in (lambda: fresh.agents, lambda: fresh.last(), lambda: fresh.step(0)):
        with pytest.raises(AttributeError, match="no game yet; call reset"):
            attempt()
    assert not hasattr(raw_env(), "agents") and not hasattr(raw_env(), "no_such_thing")
    with pytest.raises(AttributeError, match="'raw_env' object has no attribute 'no_such_thing'"):
        raw_env().no_such_thing  # noqa: B018
    fresh.reset()
    assert fresh.agents == ["player_0", "player_1", "player_2"]


def test_the_reference_encoding_refuses_what_would_wrap_or_truncate() -> None:
    """halma_env.encoding.Encoding, the reference the docs point to: a negative hole or seat wrapped to another
    one (numpy indexing), a float action was truncated, and its shared tables could be written into."""
    from halma_env.encoding import encoding

    enc = encoding("star", 2)
    game = Game(Rules("star", 2))
    assert enc.encode_move(np.int64(0), 111, 102) == 13533 and enc.decode_action(0, np.int64(13533)) == (111, 102)
    for args, error, message in (((0, -1, 5), ValueError, "src must be a hole 0..120, got -1"),
                                 ((0, 5, 121), ValueError, "dst must be a hole 0..120, got 121"),
                                 ((2, 5, 6), ValueError, "seat must be 0..1, got 2"),
                                 ((-1, 5, 6), ValueError, "seat must be 0..1, got -1"),
                                 ((0, 5.0, 6), TypeError, "src must be an integer, got 5.0")):
        with pytest.raises(error, match=message):
            enc.encode_move(*args)
    with pytest.raises(TypeError, match=r"action must be an integer, got 13533\.7"):
        enc.decode_action(0, 13533.7)
    for bad in (np.array([1]), np.True_):  # bools and arrays are no seat (torch's: the next test)
        with pytest.raises(TypeError, match="seat must be an integer"):
            enc.decode_action(bad, 5)
    with pytest.raises(ValueError, match="seat must be 0..1, got -1"):
        enc.observation(game, -1)
    with pytest.raises(ValueError, match="seat must be 0..1, got 5"):
        enc.action_mask(game, 5)
    with pytest.raises(ValueError, match="this encoding is star with 2 seats, the game star with 3"):
        enc.observation(Game(Rules("star", 3)), 0)
    with pytest.raises(ValueError, match="read-only"):
        enc.to_canonical[0, 0] = 5
    assert enc.to_canonical[0, 0] == 0 and enc.static_planes.flags.writeable is False


def test_the_reference_encoding_refuses_a_bool_or_an_array_tensor_as_a_seat() -> None:
    """As numpy's, a 0-d bool tensor and a one-value tensor are no seat for halma_env.encoding.Encoding."""
    import torch

    enc = encoding("star", 2)
    for bad in (torch.tensor(True), torch.tensor([1])):
        with pytest.raises(TypeError, match="seat must be an integer"):
            enc.decode_action(bad, 5)


def test_the_fallback_random_player_keeps_its_seed_method() -> None:
    """halma_env.envs.RandomPlayer (exported) had seed(int); reseed is its new name and seed stays."""
    from halma_env.envs import RandomPlayer

    game = Game(Rules("star", 2))
    one, two = RandomPlayer(1), RandomPlayer(2)
    one.seed(7)
    two.reseed(7)
    assert [one.select_move(game) for _ in range(5)] == [two.select_move(game) for _ in range(5)]


def test_infos_without_the_legal_moves_list_for_libraries_that_stack_infos() -> None:
    """Tianshou's collector stacks infos into arrays, and a list whose length changes every turn broke it
    ("could not broadcast (2,21,2) into (2,23,2)"): ``info_legal_moves=False`` leaves it out."""
    from halma_env.envs import HalmaEnv

    e = raw_env(num_players=3, info_legal_moves=False)
    e.reset(seed=0)
    for _ in range(4):
        assert all(set(info) == {"place", "end_reason"} for info in e.infos.values())
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    copy = pickle.loads(pickle.dumps(e))  # EzPickle keeps the setting
    copy.reset(seed=0)
    assert "legal_moves" not in copy.infos["player_0"] and copy.info_legal_moves is False
    with_moves = raw_env(num_players=3)
    with_moves.reset(seed=0)
    assert with_moves.infos["player_0"]["legal_moves"] == with_moves.game.legal_moves()  # the default keeps it
    gym = HalmaEnv(num_players=2, info_legal_moves=False)
    _, info = gym.reset(seed=0)
    assert set(info) == {"place", "end_reason", "seat"}
    with pytest.raises(ValueError, match="info_legal_moves must be True or False, got 'no'"):
        raw_env(info_legal_moves="no")


# --- the wrapped env's own calls, copies and the cached mask -------------------------------------


@pytest.mark.parametrize("call", ["resign", "set_cpu"])
def test_resign_and_set_cpu_on_the_wrapped_env_count_as_the_turn_inside_agent_iter(call: str) -> None:
    """Made on ``env()`` in place of a step, they tripped PettingZoo's OrderEnforcingWrapper ("need to call
    step() or reset() in a loop over agent_iter") at the next agent."""
    env = make_env(num_players=3, move_limit=60)
    env.reset(seed=0)
    acted = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
        elif not acted:
            acted.append(agent)
            env.resign(agent) if call == "resign" else env.set_cpu(agent, "greedy")
        else:
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    game = env.unwrapped.game
    assert game.is_over and env.agents == []
    if call == "resign":
        assert game.status[0] == "resigned" and game.places[0] == 3
    else:
        assert "player_0" in env.unwrapped.cpu_seats()


def test_the_wrapped_env_refuses_a_bool_or_float_action_as_the_raw_env_does() -> None:
    env = make_env()
    env.reset()
    for bad in (True, 13533.0):
        with pytest.raises(TypeError, match="action must be an integer"):
            env.step(bad)
    assert env.unwrapped.game.ply == 0
    env.step(np.array(env.unwrapped.encode_move(0, "113-104")))  # a 0-d integer array is an action
    assert env.unwrapped.game.ply == 1


def test_the_cached_action_mask_cannot_be_written() -> None:
    """``action_mask()`` hands out the turn's cached mask, which ``step`` checks actions against: writing
    into it made an illegal action look legal (and the engine's refusal then lost the pending reward)."""
    env = raw_env(progress_shaping=1.0)
    env.reset()
    mask = env.action_mask("player_0")
    with pytest.raises(ValueError, match="read-only"):
        mask[0] = 1
    assert env.observe("player_0")["action_mask"][0] == 0
    assert env.observe("player_0")["action_mask"].flags.writeable  # observations stay the caller's own
    other = env.action_mask("player_1")  # a seat not to move: zeros, read-only too (they were writable)
    assert not other.any() and not other.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        other[0] = 1


def test_seats_and_holes_take_every_integer_type_actions_take() -> None:
    """encode_move and decode_action took a 0-d tensor or array as an action but not as a hole or a seat."""
    import torch

    env = raw_env()
    env.reset()
    action = env.encode_move(0, (111, 102))
    assert env.encode_move(np.array(0), (torch.tensor(111), np.array(102))) == action
    assert env.decode_action(torch.tensor(0), torch.tensor(action)) == Move(111, 102)
    for bad in (torch.tensor([111]), 111.0, True):
        with pytest.raises(TypeError, match="a hole must be an integer"):
            env.encode_move(0, (bad, 102))


@pytest.mark.parametrize("make", ["raw", "wrapped", "gym"])
def test_copy_copy_of_an_env_copies_the_game_in_progress(make: str) -> None:
    """``copy.copy`` built a fresh env that had not been reset (``EzPickle``); now it is ``deepcopy``."""
    import copy

    if make == "gym":
        from halma_env.envs.single_agent import HalmaEnv

        gym = HalmaEnv(opponents="greedy")
        gym.reset(seed=0)
        gym.step(int(np.flatnonzero(gym.action_masks())[0]))
        clone = copy.copy(gym)
        original, copied = gym.aec.game, clone.aec.game
    else:
        env = raw_env() if make == "raw" else make_env()
        env.reset()
        env.step(env.unwrapped.encode_move(0, "113-104"))
        clone = copy.copy(env)
        original, copied = env.unwrapped.game, clone.unwrapped.game
    assert copied is not original and copied.ply == original.ply == (2 if make == "gym" else 1)
    copied.play(copied.legal_moves()[0])
    assert original.ply == copied.ply - 1


def test_env_takes_raw_envs_arguments_by_position_too() -> None:
    assert make_env("star", 3).unwrapped.rules == Rules("star", 3)


# --- CPU players of another game -------------------------------------------------------------

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
STAR2_CHECKPOINT = str(_ROOT / "agents" / "checkpoints" / "star2.pt")  # a star-2 policy (torch)
STAR2_EXPORT = str(_ROOT / "agents" / "ladder" / "star-2-star2.onnx")  # its exported model (no torch needed)


def _aec_state(e: raw_env) -> tuple:
    """What a refused ``set_cpu`` must leave as it was."""
    return (e.game.position() if e.game is not None else None, e.game.ply if e.game is not None else None,
            list(e.agents), e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards), dict(e.terminations),
            dict(e.truncations), {a: dict(i) for a, i in e.infos.items()}, e.cpu_seats())


def test_a_checkpoint_for_another_seat_count_is_refused_at_construction() -> None:
    """A 2-seat checkpoint named as an opponent of a 3-seat game is refused where the env learns of it
    (the constructor, where unknown names are), not at its first move, with the seat it was given."""
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"^opponents: seat 1: player '.*star2\.pt' cannot play star with 3 seats: "
                                         r"policy:star2 plays star with 2 seats, not star with 3$"):
        raw_env(num_players=3, opponents={"player_1": STAR2_CHECKPOINT})
    with pytest.raises(ValueError, match="^opponents: seat 2: player .* cannot play star with 3 seats"):
        make_env(num_players=3, opponents={2: STAR2_CHECKPOINT})
    with pytest.raises(ValueError, match="^opponents: seat 1: unknown player"):  # unknown names: the same prefix
        raw_env(opponents={1: "no-such-bot"})
    e = raw_env(opponents={1: STAR2_CHECKPOINT}, move_limit=40)  # its own game: taken, and it plays
    e.reset(seed=0)
    e.step(e.encode_move(0, e.game.legal_moves()[0]))
    assert e.game.ply == 2 and e.agent_selection == "player_0"


def test_an_export_for_another_variant_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match=r"^opponents: seat 1: player '.*star-2-star2\.onnx' cannot play diamond "
                                         r"with 2 seats: .*exported for star with 2 seats"):
        raw_env(variant="diamond", opponents={"player_1": STAR2_EXPORT})


def test_set_cpu_refuses_a_player_of_another_game_and_changes_nothing() -> None:
    pytest.importorskip("torch")
    for variant, seats, bad, reason in (("star", 3, STAR2_CHECKPOINT, "plays star with 2 seats, not star with 3"),
                                        ("diamond", 2, STAR2_EXPORT, "exported for star with 2 seats")):
        for wrapped in (False, True):
            w = (make_env if wrapped else raw_env)(variant=variant, num_players=seats, move_limit=60)
            w.reset(seed=5)
            e = w.unwrapped
            e.set_cpu("player_1", "greedy")
            w.step(e.encode_move(0, e.game.legal_moves()[0]))  # player_1 (the CPU) answers: player_0 or 2 to move
            before = _aec_state(e)
            refused = f"^player '.*' cannot play {variant} with {seats} seats: .*{reason}"
            for seat in range(seats):  # the seat to move (played at once if taken) and the CPU seat alike
                with pytest.raises(ValueError, match=refused):
                    w.set_cpu(seat, bad)
                assert _aec_state(e) == before
            w.step(e.encode_move(e.game.to_move, e.game.legal_moves()[0]))  # the env goes on as before
    e = raw_env(move_limit=40)
    e.reset(seed=0)
    e.set_cpu("player_1", STAR2_CHECKPOINT)  # its own game: taken
    e.step(e.encode_move(0, e.game.legal_moves()[0]))
    assert e.game.ply == 2


def test_only_named_players_are_probed() -> None:
    """A callable or an object is the caller's code: the env calls it only for its seat's moves."""
    calls = []

    def player(game: Game):
        calls.append(game.ply)
        return game.legal_moves()[0]

    e = raw_env(opponents={1: player}, move_limit=40)
    e.set_cpu(0, player)
    e.set_cpu(0, None)
    assert calls == []
    e.reset(seed=0)
    e.step(e.encode_move(0, e.game.legal_moves()[0]))
    assert calls == [1]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"reward": 1}, "reward must be one of place, win_loss, got 1"),  # was: a ValueError only
    ({"reward": None}, "reward must be one of place, win_loss, got None"),
    ({"reward": b"place"}, "reward must be one of place, win_loss, got b'place'"),
    ({"render_mode": 1}, "render_mode must be one of human, ansi, rgb_array or None, got 1"),
    ({"render_mode": b"ansi"}, "render_mode must be one of human, ansi, rgb_array or None, got b'ansi'"),
])
def test_raw_env_and_halma_env_refuse_reward_and_render_mode_that_are_no_text(kwargs, message) -> None:
    """``reward=1`` or ``render_mode=1`` was a plain ValueError, as an unknown name is: the wrong type is a
    ``WrongTypeError`` (a TypeError, still a ValueError) naming the argument, as the envs' flags and seats are; an
    unknown name stays a ValueError."""
    from halma_env.envs import HalmaEnv
    from halma_env.rules import WrongTypeError

    for make in (raw_env, HalmaEnv):
        with pytest.raises(WrongTypeError, match=re.escape(message)):
            make(**kwargs)
        for unknown in ({"reward": "points"}, {"render_mode": "x"}):
            with pytest.raises(ValueError) as caught:
                make(**unknown)
            assert not isinstance(caught.value, TypeError)
