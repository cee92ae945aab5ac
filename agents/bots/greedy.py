"""``greedy``: the move that lowers the mover's potential most (see ``evaluation``).

One ply, no search: every legal move is scored by a table lookup (``gain = value[src] -
value[dst]``), so a move costs well under a millisecond.  What makes it finish every game:

- the potential is lowest exactly when the goal is filled and rewards deep goal holes first;
- a move that finishes the seat (checked by playing it and undoing) is always taken (unless a ``noise``
  move was drawn first: the noise comes before every rule here, so a noisy greedy can miss a finish);
- a move that brings the seat's pieces back to an arrangement they had in the last
  ``memory`` own moves is penalised, so plateaus (no improving move) are walked through instead
  of oscillated on, and halma16's threefold repetition is not run into;
- ties are broken by the seeded generator;
- a move after which one of its pieces can never move again (walled in by pieces that never move:
  a finished seat's, or halma16's goal-locked ones) is never played while another move exists (noise
  moves apart);
- pieces parked in another seat's goal camp pay a penalty that grows as the owner fills it (see
  ``evaluation``), and once the owner has filled (or nears) 30% of it such a piece moves out
  before anything else (``escape_moves``), so no piece is left behind in the home camp or sits
  where it gets walled in.

``noise`` (probability of a uniformly random move) and ``temperature`` (softmax over gains)
weaken it for the easy level; ``lookahead`` (weight, 0 = off) strengthens it: the 8 best moves
also count the best gain left for the seat's next move (jump chains being set up).
"""

from __future__ import annotations

import math
from typing import cast

from agents.bots.evaluation import STRAGGLE, SeatView, Tracker, escape_moves, safe_moves
from agents.player import SeededBot, check_int, check_number, checked_moves
from halma_env import Game, Move

REVISIT_PENALTY = 4.0
LOOKAHEAD_TOP = 8  # moves whose follow-up is looked at when ``lookahead`` is on


def recent_configurations(game: Game, seat: int, memory: int) -> dict[int, int]:
    """Bit sets (bit = hole) of ``seat``'s pieces before each of its last ``memory`` moves,
    mapped to how often they occurred (the current arrangement included)."""
    cfg = 0
    for h in game.pieces(seat):
        cfg |= 1 << h
    seen = {cfg: 1}
    count = 0
    for event in game.recent_events():
        if count >= memory:
            break
        if event.kind != "move" or event.seat != seat:
            continue
        move = cast(Move, event.move)  # a "move" event carries its move
        cfg ^= (1 << move.src) | (1 << move.dst)
        seen[cfg] = seen.get(cfg, 0) + 1
        count += 1
    return seen


def stalled_moves(game: Game, seat: int, view: SeatView, memory: int) -> int:
    """The largest k <= ``memory`` such that ``seat``'s potential k own moves ago was already as
    low as now (k moves without net progress); 0 when the last move made progress."""
    now = pot = view.potential()
    king = view.king_hole
    count = stall = 0
    for event in game.recent_events():
        if count >= memory:
            break
        if event.kind != "move" or event.seat != seat:
            continue
        move = cast(Move, event.move)  # a "move" event carries its move
        is_king = move.dst == king
        pot += view.value(move.src, is_king) - view.value(move.dst, is_king)  # take the move back
        if is_king:
            king = move.src
        count += 1
        if pot <= now + 1e-9:
            stall = count
    return stall


def finishing_moves(game: Game, seat: int, view: SeatView, moves: list[Move]) -> list[Move]:
    """The moves that finish ``seat`` now (verified by playing and undoing them on a copy of
    ``game``, made only when a move needs checking: the caller's game is never played on)."""
    t = view.tables
    goal = t.goal
    outside = sum(1 for h in view.pieces if h not in goal)
    empty = sum(1 for h in goal if game.piece_at(h) is None)
    out = []
    work: Game | None = None
    for m in moves:
        # only a move into the goal when at most one hole is left to fill (or one piece to bring)
        if m.dst not in goal or (empty > 1 and (outside > 1 or (m.src in goal and m.src != view.king_hole))):
            continue
        if work is None:
            work = game.copy()
        work.play(m)
        try:
            done = work.status[seat] == "finished"
        finally:
            work.undo()
        if done:
            out.append(m)
    return out


class GreedyBot(SeededBot):
    """One-ply progress maximiser; seeded tie-breaks, optional noise for weaker levels."""

    def __init__(
        self,
        seed: int | None = None,
        noise: float = 0.0,
        temperature: float = 0.0,
        memory: int = 12,
        straggle: float = STRAGGLE,
        lookahead: float = 0.0,
        name: str = "greedy",
    ) -> None:
        self.name = name
        self.reseed(seed)
        self.noise = check_number("greedy noise", noise, high=1.0)
        self.temperature = check_number("greedy temperature", temperature)
        self.memory = check_int("greedy memory", memory)
        self.straggle = check_number("greedy straggle", straggle)
        self.lookahead = check_number("greedy lookahead", lookahead)

    def scores(
        self, game: Game, view: SeatView | None = None, moves: list[Move] | None = None
    ) -> list[tuple[float, Move]]:
        """Every legal move (or those of ``moves``) with its score (potential gain, less a penalty
        for revisiting)."""
        seat = game.to_move
        if moves is None:
            moves = game.legal_moves()
        if view is None:
            view = SeatView(game, seat, self.straggle)
        seen = recent_configurations(game, seat, self.memory) if self.memory else {}
        cfg = 0
        for h in view.pieces:
            cfg |= 1 << h
        out = []
        for m in moves:
            score = view.gain(m.src, m.dst)
            if seen:
                again = seen.get(cfg ^ (1 << m.src) ^ (1 << m.dst), 0)
                score -= REVISIT_PENALTY * again
            out.append((score, m))
        if self.lookahead and out:
            # the LOOKAHEAD_TOP best moves also count the best gain they leave for the seat's next
            # move (setting up jump chains), weighted by ``lookahead``; played on a private copy
            out.sort(key=lambda x: -x[0])
            tr = Tracker(game, self.straggle)
            for i in range(min(LOOKAHEAD_TOP, len(out))):
                score, m = out[i]
                tr.play(seat, m, 0.0)
                follow = None if tr.game.is_over else tr.best_gain(seat)
                tr.undo(seat, m, 0.0)
                out[i] = (score + self.lookahead * max(0.0, follow or 0.0), m)
        return out

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        moves = checked_moves(game, time_budget)
        rng = self._rng
        if self.noise and rng.random() < self.noise:
            return rng.choice(moves)
        seat = game.to_move
        view = SeatView(game, seat, self.straggle)
        done = finishing_moves(game, seat, view, moves)
        if done:
            return done[0]
        # never wall one of its own pieces in for good (e.g. by completing a third seat's goal)
        # and a piece in a camp its owner is filling gets out before anything else
        moves = safe_moves(game, moves)
        scored = self.scores(game, view, escape_moves(game, moves) or moves)
        if self.temperature > 0:
            top = max(s for s, _ in scored)
            weights = [math.exp((s - top) / self.temperature) for s, _ in scored]
            return rng.choices([m for _, m in scored], weights=weights)[0]
        best = max(s for s, _ in scored)
        ties = [m for s, m in scored if s >= best - 1e-9]
        return ties[0] if len(ties) == 1 else rng.choice(ties)

    def __repr__(self) -> str:
        return f"GreedyBot(seed={self.seed!r}, noise={self.noise}, temperature={self.temperature})"
