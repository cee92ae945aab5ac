"""Independent cross-check of move generation against OpenSpiel's ``chinese_checkers``.

OpenSpiel's board is ours turned 180 degrees (its hole i is our hole 120 - i), with the same player
indices.  It exposes single hops: a turn is a step (``"a->b"``), or a hop (``"a=>b"``) after which
the same player may hop on from the landing hole or ``Pass``.  The full (src, dst) move set is
derived from it by exploring hop chains on cloned states.  It has no anti-blocking rule, which
does not change move sets.  Positions come from random games played in our engine and replayed
move by move in OpenSpiel, and both boards are compared at every step too.
"""

from __future__ import annotations

import random

import pyspiel
import pytest

from halma_env import Game, Rules

LAST = 120  # our hole h is OpenSpiel's hole 120 - h


def _parse(action_text: str) -> tuple[str, int, int] | None:
    for sep, kind in (("=>", "hop"), ("->", "step")):
        if sep in action_text:
            a, b = action_text.split(sep)
            return kind, LAST - int(a), LAST - int(b)
    return None  # "Pass"


def _actions(state) -> dict[str, int]:
    return {state.action_to_string(a): a for a in state.legal_actions()}


def openspiel_moves(state) -> set[tuple[int, int]]:
    """Every (src, dst) of the player to move, in our numbering, by exploring hop chains."""
    return set(openspiel_move_actions(state))


def openspiel_move_actions(state) -> dict[tuple[int, int], list[int]]:
    """(src, dst) in our numbering -> one sequence of OpenSpiel actions that plays it (a step, or
    hops followed by ``Pass`` when the turn has not ended by itself)."""
    player = state.current_player()
    moves: dict[tuple[int, int], list[int]] = {}
    for text, action in _actions(state).items():
        parsed = _parse(text)
        if parsed is None:
            continue
        kind, src, dst = parsed
        moves.setdefault((src, dst), [action])
        if kind != "hop":
            continue
        reached = {dst: [action]}
        stack = [(state.child(action), [action])]
        while stack:
            s, actions = stack.pop()
            if s.is_terminal() or s.current_player() != player:
                continue
            for text2, action2 in _actions(s).items():
                p2 = _parse(text2)
                if p2 is None or p2[0] != "hop" or p2[2] in reached:
                    continue
                reached[p2[2]] = actions + [action2]
                stack.append((s.child(action2), actions + [action2]))
        for d, actions in reached.items():
            if d != src:
                moves.setdefault((src, d), actions)
    return moves


def _apply(state, actions: list[int]) -> None:
    player = state.current_player()
    for a in actions:
        state.apply_action(a)
    if not state.is_terminal() and state.current_player() == player:
        state.apply_action(_actions(state)["Pass"])


def openspiel_perft(state, depth: int) -> int:
    """SPEC §6 perft computed with OpenSpiel alone (distinct (src, dst) sequences)."""
    moves = openspiel_move_actions(state)
    if depth == 1:
        return len(moves)
    total = 0
    for actions in moves.values():
        child = state.clone()
        _apply(child, actions)
        total += openspiel_perft(child, depth - 1)
    return total


def openspiel_board(state, seats: int) -> list[int | None]:
    """Our-numbered hole -> seat (or None), read from OpenSpiel's text drawing."""
    tokens = []
    for row in str(state).splitlines():
        if row.startswith("Player"):
            break
        tokens.extend(row.split())
    assert len(tokens) == 121, tokens
    board: list[int | None] = [None] * 121
    for i, tok in enumerate(tokens):
        if tok != ".":
            board[LAST - i] = int(tok) - 1
    return board


def _play_in_openspiel(state, game: Game, move) -> None:
    """Apply our move in OpenSpiel as its sequence of single actions (then Pass if it is offered)."""
    player = state.current_player()
    path = move.path
    if len(path) == 2 and path[1] in game.geometry.neighbours[path[0]]:
        state.apply_action(_actions(state)[f"{LAST - path[0]}->{LAST - path[1]}"])
        return
    for a, b in zip(path, path[1:]):
        state.apply_action(_actions(state)[f"{LAST - a}=>{LAST - b}"])
    if not state.is_terminal() and state.current_player() == player:
        state.apply_action(_actions(state)["Pass"])


@pytest.mark.parametrize("seats", [2, 3, 4, 6])
def test_move_sets_match_openspiel(seats: int) -> None:
    os_game = pyspiel.load_game("chinese_checkers", {"players": seats})
    compared = 0
    total_moves = 0
    for seed in range(2):
        rng = random.Random(1000 * seats + seed)
        game = Game(Rules("star", seats))
        state = os_game.new_initial_state()
        for _ in range(120):
            if game.is_over or state.is_terminal():
                break
            assert state.current_player() == game.to_move
            assert openspiel_board(state, seats) == [c[0] if c else None for c in game.board()]
            expected = openspiel_moves(state)
            got = {(m.src, m.dst) for m in game.legal_moves()}
            assert got == expected, (game.position(), sorted(got - expected), sorted(expected - got))
            compared += 1
            total_moves += len(got)
            move = rng.choice(game.legal_moves())
            _play_in_openspiel(state, game, move)
            game.play(move)
    assert compared >= 200 and total_moves > compared * 20


def test_openspiel_numbering_is_ours_turned_half_way() -> None:
    """The mapping the cross-check relies on: at the start OpenSpiel's player 0 is on our point 0."""
    state = pyspiel.load_game("chinese_checkers", {"players": 2}).new_initial_state()
    board = openspiel_board(state, 2)
    assert [h for h in range(121) if board[h] == 0] == list(range(111, 121))
    assert [h for h in range(121) if board[h] == 1] == list(range(10))
    assert openspiel_moves(state) == {(m.src, m.dst) for m in Game(Rules("star", 2)).legal_moves()}


@pytest.mark.parametrize(("seats", "counts"), [(2, (14, 196, 4760)), (3, (14, 196, 2744)), (4, (14, 199, 2786)),
                                               (6, (14, 199, 2828))])
def test_spec_perft_table_from_openspiel(seats: int, counts: tuple[int, int, int]) -> None:
    """The star rows of the SPEC §6 table, counted by OpenSpiel's rules instead of ours."""
    state = pyspiel.load_game("chinese_checkers", {"players": seats}).new_initial_state()
    assert tuple(openspiel_perft(state, d) for d in (1, 2, 3)) == counts
