"""``halma bench engine``: move generation and random-playout speed, with OpenSpiel alongside.

Figures, for each variant on random mid-game positions (20-80 random plies from the start):
- ``move_sets_per_s``: full legal-move sets (every piece's destinations, as bit sets), the
  work a search or an action mask needs;
- ``legal_moves_per_s``: ``Game.legal_moves()`` lists of ``Move`` objects;
- ``playout_plies_per_s``: random playouts through ``legal_moves()`` + ``play()`` (with every
  end-of-game check);
and, when ``open_spiel`` is installed, its ``chinese_checkers`` random-playout turns/s (one
turn = one hop or step action) and how many full move sets/s can be derived from it (by
exploring its hop-by-hop actions on cloned states).  Everything runs on one core; rates are per
second of process CPU time.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from halma_env.game import Game, random_playout
from halma_env.rules import Rules

CASES = (("star", 2), ("star", 3), ("star", 6), ("diamond", 2), ("halma16", 2))


def sample_positions(rules: Rules, count: int, rng: random.Random) -> list[Game]:
    """Positions 20-80 random plies into games that are still running."""
    games: list[Game] = []
    while len(games) < count:
        game = Game(rules)
        random_playout(game, rng, max_plies=rng.randint(20, 80))
        if not game.is_over:
            games.append(game)
    return games


def _rate(work: Callable[[], int], seconds: float, round_seconds: float = 0.005) -> tuple[float, float]:
    """Items per CPU second of ``work`` (which returns how many it did): ``(best, median)`` over
    rounds of about ``round_seconds`` of this process's CPU time each, run for ``seconds`` in all.

    The best round is the headline figure, as ``timeit`` reports it: slower rounds measure
    interference (a busy sibling core, the host stealing time), not the code.  Short rounds let a
    noisy virtual machine show its quiet moments; the median says how typical they are.  CPU time,
    not wall time: what one free core does, also on a shared, loaded machine.
    """
    rates: list[float] = []
    total = 0.0
    while total < seconds or len(rates) < 5:
        done = 0
        start = time.process_time()
        while True:
            done += work()
            elapsed = time.process_time() - start
            if elapsed >= round_seconds:
                break
        rates.append(done / elapsed)
        total += elapsed
    rates.sort()
    return rates[-1], rates[len(rates) // 2]


def engine_figures(variant: str, seats: int, seconds: float, rng: random.Random) -> dict[str, float]:
    games = sample_positions(Rules(variant, seats), 200, rng)

    def move_sets() -> int:
        for game in games:
            game._gen.clear()  # measure generation, not the per-position cache
            game._move_masks(game.to_move)
        return len(games)

    def lists() -> int:
        for game in games:
            game._gen.clear()
            game.legal_moves()
        return len(games)

    def playouts() -> int:
        game = Game(Rules(variant, seats))
        return random_playout(game, rng, max_plies=2000)

    mean_moves = sum(g.count_moves() for g in games) / len(games)
    sets_best, sets_median = _rate(move_sets, seconds)
    lists_best, lists_median = _rate(lists, seconds)
    plies_best, plies_median = _rate(playouts, seconds)
    return {
        "move_sets_per_s": sets_best,
        "legal_moves_per_s": lists_best,
        "playout_plies_per_s": plies_best,
        "move_sets_per_s_median": sets_median,
        "legal_moves_per_s_median": lists_median,
        "playout_plies_per_s_median": plies_median,
        "mean_legal_moves": mean_moves,
    }


def openspiel_checkers(**params: int) -> Any:
    """OpenSpiel's ``chinese_checkers`` game (pyspiel); ImportError when open_spiel is missing or older
    than 1.6.13, the first release with the game."""
    import pyspiel

    if "chinese_checkers" not in pyspiel.registered_names():
        raise ImportError("open_spiel without chinese_checkers (it came with open-spiel 1.6.13)",
                          name="open_spiel>=1.6.13")
    return pyspiel.load_game("chinese_checkers", params)


def openspiel_figures(seats: int, seconds: float, rng: random.Random) -> dict[str, float] | None:
    """OpenSpiel's chinese_checkers on the same machine, or None when it is not installed."""
    try:
        osg = openspiel_checkers(players=seats)
    except ImportError:
        return None

    def playout() -> int:
        state = osg.new_initial_state()
        turns = 0
        while not state.is_terminal() and turns < 2000:
            state.apply_action(rng.choice(state.legal_actions()))
            turns += 1
        return turns

    states: list[Any] = []  # pyspiel states
    while len(states) < 100:
        state = osg.new_initial_state()
        for _ in range(rng.randint(20, 80)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            states.append(state)

    def derive() -> int:
        for state in states:
            openspiel_move_set(state)
        return len(states)

    turns, turns_median = _rate(playout, seconds)
    derived, derived_median = _rate(derive, seconds)
    return {"random_turns_per_s": turns, "derived_move_sets_per_s": derived,
            "random_turns_per_s_median": turns_median, "derived_move_sets_per_s_median": derived_median}


def openspiel_move_set(state) -> set[tuple[int, int]]:
    """Every (src, dst) of the player to move, in OpenSpiel's numbering, by exploring hop chains."""
    player = state.current_player()
    moves: set[tuple[int, int]] = set()

    def explore(s, src: int, seen: set[tuple[int, int]]) -> None:
        # the position after a hop chain depends only on where the piece stands, so each
        # landing is explored once per source piece
        for action in s.legal_actions():
            text = s.action_to_string(action)
            if "=>" not in text:
                continue  # the action that ends a hop chain
            a, b = map(int, text.split("=>"))
            start = a if src < 0 else src
            if (start, b) in seen:
                continue
            seen.add((start, b))
            if b != start:
                moves.add((start, b))
            child = s.clone()
            child.apply_action(action)
            if not child.is_terminal() and child.current_player() == player:
                explore(child, start, seen)

    for action in state.legal_actions():
        text = state.action_to_string(action)
        if "->" in text:
            a, b = map(int, text.split("->"))
            moves.add((a, b))
    explore(state, -1, set())
    return moves


def run_benchmark(args: argparse.Namespace) -> dict:
    seconds = args.seconds
    figures: dict = {"engine": {}, "openspiel": {}}
    # a generator per game: the timed playouts draw from it as many times as the machine's speed allows, so
    # with one shared generator the next game's sample positions (and its mean legal moves) changed with it
    for variant, seats in CASES:
        rng = random.Random(f"{args.seed}:{variant}-{seats}")
        figures["engine"][f"{variant}-{seats}"] = engine_figures(variant, seats, seconds, rng)
    for seats in (2, 3, 6):
        os_fig = openspiel_figures(seats, seconds, random.Random(f"{args.seed}:openspiel-{seats}"))
        if os_fig is None:
            figures["openspiel"] = "not installed (pip install open-spiel)"
            break
        ours = figures["engine"][f"star-{seats}"]
        os_fig["ratio_move_sets"] = ours["move_sets_per_s"] / os_fig["derived_move_sets_per_s"]
        figures["openspiel"][f"star-{seats}"] = os_fig
    if not args.json:
        print(format_table(figures))
    return figures


def format_table(figures: dict) -> str:
    lines = [
        "Per second of one core's CPU time: the best round of ~5 ms (the median round in brackets).",
        "",
        "| game | full move sets/s | legal_moves() lists/s | random playout plies/s | mean legal moves |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, f in figures["engine"].items():  # best round (median round)
        lines.append(
            f"| {name} | {f['move_sets_per_s']:,.0f} ({f['move_sets_per_s_median']:,.0f}) | "
            f"{f['legal_moves_per_s']:,.0f} ({f['legal_moves_per_s_median']:,.0f}) | "
            f"{f['playout_plies_per_s']:,.0f} ({f['playout_plies_per_s_median']:,.0f}) | {f['mean_legal_moves']:.1f} |"
        )
    if isinstance(figures["openspiel"], str):
        lines.append(f"\nOpenSpiel: {figures['openspiel']}")
    else:
        lines += [
            "",
            "| OpenSpiel chinese_checkers | random turns/s | move sets/s derived from it | ours / derived |",
            "|---|---:|---:|---:|",
        ]
        for name, f in figures["openspiel"].items():
            lines.append(
                f"| {name} | {f['random_turns_per_s']:,.0f} ({f['random_turns_per_s_median']:,.0f}) | "
                f"{f['derived_move_sets_per_s']:,.0f} ({f['derived_move_sets_per_s_median']:,.0f}) | "
                f"{f['ratio_move_sets']:.1f}x |"
            )
    return "\n".join(lines)
