"""Heuristic bots: ``random``, ``greedy``, ``search`` (alpha-beta / best-reply search), ``mcts`` and
``crossing`` (the beam-search planner of the crossing).

All follow the ``agents.player.Player`` protocol and share ``evaluation``; build them by name
with ``agents.registry.make_player``.
"""
