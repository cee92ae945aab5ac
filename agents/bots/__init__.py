"""Heuristic bots: ``random``, ``greedy``, ``search`` (alpha-beta / best-reply search) and ``mcts``.

All follow the ``agents.player.Player`` protocol and share ``evaluation``; build them by name
with ``agents.registry.make_player``.
"""
