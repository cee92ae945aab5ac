"""The name a user probably meant, for error messages about an unknown one.

``unknown rule option(s): anti_blockng (did you mean 'anti_blocking'?); known: ...``: the engine,
the bots and the training config all name a misspelt key this way.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(wrong: str, known: Iterable[str], prefix: str = "", cutoff: float = 0.6) -> str:
    """``" (did you mean 'PREFIX.NAME'?)"`` for the known name nearest to ``wrong``, or ``""`` if none is near
    (difflib's similarity ratio of at least ``cutoff``)."""
    close = difflib.get_close_matches(wrong, list(known), n=1, cutoff=cutoff)
    if not close:
        return ""
    return f" (did you mean {(f'{prefix}.' if prefix else '') + close[0]!r}?)"
