"""Arena results built by hand, for the tests of the arena's statistics and reports."""

from __future__ import annotations

from typing import Any

from agents import arena


def made_game(index: int, seats: list[int], places: list[int] | list[float], end_reason: str = "finished", *,
              first_seat: int = 0, plies: int = 10, move_time: list[float] | None = None,
              move_count: list[int] | None = None, max_move_time: list[float] | None = None,
              over_budget: list[int] | None = None, forfeit_seats: tuple[int, ...] = (),
              progress: list[tuple[int, int]] | None = None, record: dict[str, Any] | None = None) -> arena.GameResult:
    """A game as the arena stores it, without playing it: ``seats[s]`` is the player in seat ``s``,
    ``places[s]`` that seat's place."""
    by_player: dict[int, list[float]] = {}
    for s, p in enumerate(seats):
        by_player.setdefault(p, []).append(places[s])
    n = len(seats)
    return arena.GameResult(index=index, seed=index, seats=seats, first_seat=first_seat, places=list(places),
                            player_places={p: sum(v) / len(v) for p, v in by_player.items()},
                            end_reason=end_reason, plies=plies, moves=[], move_time=move_time or [0.0] * n,
                            move_count=move_count or [0] * n, max_move_time=max_move_time or [0.0] * n,
                            over_budget=over_budget or [0] * n,
                            forfeits=[{"seat": s, "ply": 0, "move": "(0, 0)", "error": "x"} for s in forfeit_seats],
                            progress=progress or [], record=record)
