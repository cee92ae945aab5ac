"""Words for error messages: the name a user probably meant, and a bad value shown short.

``unknown rule option(s): anti_blockng (did you mean 'anti_blocking'?); known: ...``: the engine,
the bots and the training config all name a misspelt key this way, and show a value read from a
file or given by a caller with ``shown_value``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def shown_value(value: object) -> str:
    """A value for an error message: escaped (``repr``: no escape sequence reaches the terminal) and cut short
    (a file's list may be long); an integer of more than 100 bits by its size (``repr`` refuses one of more
    than 4,300 digits, and nobody reads 30)."""
    if type(value) is int and value.bit_length() > 100:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except ValueError:  # a container holding an integer too long for repr
        return f"a {type(value).__name__} holding an integer too long to show"
    return text if len(text) <= 60 else f"{text[:50]}... ({type(value).__name__})"


def shown_typed(value: object) -> str:
    """``shown_value`` with the value's type named after it, once (``shown_value`` names it when it cuts a long
    value short: ``'xxx...'... (str)``)."""
    shown, name = shown_value(value), type(value).__name__
    return shown if shown.endswith(f"({name})") else f"{shown} ({name})"


def did_you_mean(wrong: str, known: Iterable[str], prefix: str = "", cutoff: float = 0.6) -> str:
    """``" (did you mean 'PREFIX.NAME'?)"`` for the known name nearest to ``wrong``, or ``""`` if none is near
    (difflib's similarity ratio of at least ``cutoff``)."""
    close = difflib.get_close_matches(wrong, list(known), n=1, cutoff=cutoff)
    if not close:
        return ""
    return f" (did you mean {(f'{prefix}.' if prefix else '') + close[0]!r}?)"
