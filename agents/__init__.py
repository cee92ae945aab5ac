"""Players of halma_env games: heuristic bots, trained policies, exported opponents; the arena,
training and the ``halma`` command line.  Depends on ``halma_env``, never the other way round."""
