"""Experiment: where a 2-seat star agent loses its games against `search` (docs/training.md, session 12).

    python scripts/race_margins.py agents/checkpoints/star2.pt --games 40 --workers 2

The agent (the policy alone, greedy moves) plays the time-limited `search` on the 2-seat star, the
four combinations of the agent's seat and the first mover in turn.  A 2-seat crossing is a race, so
each side is measured by its *race count*: the moves it has made plus the moves the crossing planner
(`plan_crossing`, the other side's pieces held still) still needs from the position, taken every 5
of its own moves.  A move that keeps the count level was as good as the planner's line; one that
raises it lost tempo.  While the other side's pieces still sit in a seat's goal the planner cannot
finish and the count is a lower bound, so read it from the middle game on.  The script prints

- the margin of every game: the moves the loser still needed when the winner made its last move;
- the mean race count of each side every 5 moves;
- the endgame: from the first position in which all of a side's pieces are 2 or more steps nearer its
  goal than every opposing piece (no piece can touch another again, the rest is a solitaire), the moves
  the side took beyond the planner's count from there.

Not part of the package: it runs on a 2-seat star checkpoint only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from agents.bots.crossing import plan_crossing
from agents.bots.evaluation import seat_tables
from agents.bots.search import SearchBot
from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.player import Player, check_int
from agents.policy import load_policy_player
from halma_env import Game, Rules

# spawned, not forked: the parent has used torch (the checkpoint check), and a forked child
# can hang in torch's thread pool (it did, in the network's orthogonal init)
SPAWN = multiprocessing.get_context("spawn")

EVERY = 5  # own moves between two race counts
SIDES = ("agent", "search")


def moves_left(game: Game, seat: int, width: int) -> int:
    """The planner's moves to finish ``seat``'s crossing from ``game``'s position, ``seat`` to move."""
    fields = game.position().split(" ")
    fields[3] = str(seat)  # the seat to move (SPEC notation: variant, seats, rows, to move, ply)
    position = Game.from_position(" ".join(fields))
    return len(plan_crossing(position, width=width))


def disengaged(game: Game, seat: int) -> bool:
    """All of ``seat``'s pieces are 2 or more steps nearer its goal tip than every opposing piece."""
    depth = seat_tables("star", 2, seat).depth
    return max(depth[h] for h in game.pieces(seat)) + 1 < min(depth[h] for h in game.pieces(1 - seat))


def play_game(checkpoint: str, index: int, width: int) -> dict:
    rules = Rules("star", 2, first_seat=index % 2, move_limit=600)
    agent_seat = (index // 2) % 2
    side = {agent_seat: "agent", 1 - agent_seat: "search"}
    players: dict[int, Player] = {agent_seat: load_policy_player(checkpoint, seed=index),
                                  1 - agent_seat: SearchBot(seed=index)}
    game = Game(rules)
    made = {"agent": 0, "search": 0}
    race: dict[str, dict[int, int]] = {"agent": {}, "search": {}}
    endgame: dict[str, tuple[int, int]] = {}  # side -> (own moves made, planner's count) when it disengaged
    before_last = game
    while not game.is_over:
        seat = game.to_move
        name = side[seat]
        if made[name] % EVERY == 0:
            race[name][made[name]] = made[name] + moves_left(game, seat, width)
        if name not in endgame and disengaged(game, seat):
            endgame[name] = (made[name], moves_left(game, seat, width))
        before_last = game.copy()
        game.play(players[seat].select_move(game))
        made[name] += 1
    places = game.places
    result = {"game": index, "agent_seat": agent_seat, "first_seat": index % 2, "plies": game.ply,
              "end": game.end_reason, "race": race, "winner": None}
    if 1 in places:
        winner = places.index(1)
        loser_left = moves_left(before_last, 1 - winner, width)
        result.update(winner=side[winner], margin=loser_left)
        for name, (at, planned) in endgame.items():
            taken = made[name] - at + (0 if name == side[winner] else loser_left)
            result[f"endgame_{name}"] = taken - planned
    return result


def _play(args: tuple[str, int, int]) -> dict:
    return play_game(*args)


def summary(results: list[dict]) -> list[str]:
    lines = []
    won = [r for r in results if r["winner"] == "agent"]
    lost = [r for r in results if r["winner"] == "search"]
    lines.append(f"agent won {len(won)} of {len(results)} ({len(results) - len(won) - len(lost)} undecided)")
    for name, games in (("agent lost", lost), ("agent won", won)):
        margins = sorted(r["margin"] for r in games)
        mean = sum(margins) / max(len(margins), 1)
        lines.append(f"{name}: the loser still needed {margins} moves (mean {mean:.2f})")
    for name in SIDES:
        counts = []
        for at in range(0, 60, EVERY):
            values = [r["race"][name][at] for r in results if at in r["race"][name]]
            if values:
                counts.append(f"{at}: {sum(values) / len(values):.2f} ({len(values)})")
        lines.append(f"race count of {name} (own moves: mean, games): " + ", ".join(counts))
    for name in SIDES:
        extra = sorted(r[f"endgame_{name}"] for r in results if f"endgame_{name}" in r)
        mean = sum(extra) / max(len(extra), 1)
        lines.append(f"endgame of {name}: moves beyond the planner's {extra} (mean {mean:.2f})")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--width", type=int, default=100, help="the planner's beam width (default 100)")
    parser.add_argument("--json", action="store_true", help="also print each game as a JSON line")
    args = parser.parse_args(argv)
    try:  # a bad setting (named with its value), a bad checkpoint or one of another game fails here, before any game
        for flag in ("games", "workers", "width"):
            check_int(f"--{flag}", getattr(args, flag), 1)
        model_from_checkpoint(load_checkpoint(args.checkpoint, variant="star", num_players=2), args.checkpoint)
    except ValueError as exc:
        parser.error(str(exc))
    jobs = [(args.checkpoint, index, args.width) for index in range(args.games)]
    with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as pool:
        results = list(pool.map(_play, jobs))
    if args.json:
        for r in results:
            print(json.dumps(r))
    print("\n".join(summary(results)))


if __name__ == "__main__":
    main()
