"""Game rules: the variant, the seats and every option of SPEC §4, as one frozen value."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeGuard

from halma_env.suggest import did_you_mean, shown_value

VARIANTS = ("star", "diamond", "halma16")
SEAT_COUNTS = {"star": (1, 2, 3, 4, 5, 6), "diamond": (2, 3), "halma16": (2, 4)}
LIMIT_OUTCOMES = ("draw", "progress")
PRESETS = ("qdan", "kawu")
# the largest move, stall or repetition limit: 12 digits, as the ply field of a position
# (halma_env.notation.MAX_PLY_DIGITS); the batched engine compares the limits with int64 counters,
# which a larger Python int overflows
MAX_LIMIT = 10**12 - 1


class _Default:
    """Marks an option left to the variant's default."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()


def game_name(variant: str, seats: int) -> str:
    """The game as messages name it: ``"star with 2 seats"``, ``"star with 1 seat"``."""
    return f"{variant} with {seats} seat{'' if seats == 1 else 's'}"


def game_problem(variant: Any, seats: Any, shown: Callable[[Any], str] | None = None) -> str | None:
    """Why ``(variant, seats)`` is no game the engine plays, in words, or None when it is one: the one check
    behind ``Rules``, checkpoints, exported opponents and the ladder, each of which adds where the values came
    from.  ``seats`` is an integer of any type (a bool, 2.0 or "2" is not); ``shown`` writes a bad value
    (default: ``repr``, a long one cut short, a huge integer by its size)."""
    show = shown or shown_value
    if not isinstance(variant, str) or variant not in VARIANTS:
        return f"unknown variant {show(variant)}; variants: {', '.join(VARIANTS)}"
    if as_integer(seats) not in SEAT_COUNTS[variant]:
        hint = " (with 4-6 seats use the international 'star' rules)" if variant == "diamond" else ""
        return f"{variant} is played by {', '.join(map(str, SEAT_COUNTS[variant]))} seats, not {show(seats)}{hint}"
    return None


class WrongTypeError(TypeError, ValueError):
    """An argument of the wrong type (a bool, a float or text where an integer is meant, a name where a
    ``Rules`` is): a ``TypeError``, by Python's convention, where a value of the right type but out of range
    is a ``ValueError``.  It is a ``ValueError`` too, so that callers written when every bad argument of
    the engine and the agents raised ``ValueError`` (``except ValueError`` around a call, the command line's
    report of a bad option) still catch it; catch ``TypeError`` to tell the two apart.  (Not named
    ArgumentTypeError: argparse has a class of that name, which the command line raises.)"""


def integer_argument(value: Any, message: Callable[[], str]) -> int:
    """``value`` as a Python int when it is one integer of any type (``as_integer``: numpy's too, as
    ``np_random`` draws them; never a bool, a float or text), else ``WrongTypeError(message())``: the type
    half of every integer argument's check, the caller checking the range (a ``ValueError``).  The message is
    written only for a refusal (``repr`` of an integer past 4300 digits is itself an error)."""
    number = as_integer(value)
    if number is None:
        raise WrongTypeError(message())
    return number


def flag_argument(value: Any, what: str) -> bool:
    """``value`` as a Python bool when it is a flag (``as_flag``: a bool of Python or numpy), else a
    ``WrongTypeError`` naming ``what`` (1, "no" and None are no flags: ``bool("no")`` is True)."""
    flag = as_flag(value)
    if flag is None:
        raise WrongTypeError(f"{what} must be True or False, got {shown_value(value)}")
    return flag


def choice_argument(value: Any, choices: Sequence[str], message: Callable[[], str]) -> str:
    """``value`` when it is one of the names ``choices``: other text is a ``ValueError(message())``, anything else
    (1, None, bytes) a ``WrongTypeError(message())``: the one check of every argument that names a choice."""
    if not isinstance(value, str) or value not in choices:
        raise (ValueError if isinstance(value, str) else WrongTypeError)(message())
    return value


def is_sequence(value: Any) -> TypeGuard[Sequence[Any]]:
    """``value`` is a list, a tuple or another ``Sequence``, not text or bytes (each a sequence of characters):
    what a list of players is checked to be before it is indexed and counted."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def check_game(variant: Any, seats: Any) -> int:
    """``seats`` as a Python int when ``(variant, seats)`` is a game the engine plays, else the error in
    ``game_problem``'s words: ``WrongTypeError`` for a variant that is no text or a known variant's seat
    count that is no integer (a bool, 2.0, "2"), ``ValueError`` for an unknown variant or a seat count it has
    not.  The check of ``Rules``, ``layout`` and ``encoding``."""
    problem = game_problem(variant, seats)
    if problem is None:
        return operator.index(seats)
    if not isinstance(variant, str):
        raise WrongTypeError(problem)
    wrong_type = variant in VARIANTS and as_integer(seats) is None  # (for "stra", 2.0 the problem named is the typo)
    raise (WrongTypeError if wrong_type else ValueError)(problem)


def is_bool(value: object) -> bool:
    """A bool of Python, numpy or torch: never an integer here, though numpy before 2.3 gives its bools an
    index (``operator.index(np.bool_(True))`` is 1) and a bool tensor has one too."""
    return isinstance(value, bool) or str(getattr(value, "dtype", "")) in ("bool", "torch.bool")


def as_integer(value: Any) -> int | None:
    """``value`` as a Python int when it is one integer of any type (numpy's, a 0-d integer array or tensor),
    else None: bools, floats (never truncated), text, and arrays or tensors of any other shape (torch's
    ``__index__`` takes a one-element tensor of any shape: a ``[[2]]`` is no seat count).  The one reading
    of an integer argument in the engine; each caller words its own refusal."""
    if type(value) is int:
        return value
    if is_bool(value) or getattr(value, "ndim", 0) != 0:
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _shown(value: int) -> str:
    """An int for an error message: ``str`` refuses more than 4300 digits, and nobody reads 30."""
    return str(value) if value.bit_length() <= 100 else f"an integer of {value.bit_length()} bits"


def as_flag(value: Any) -> bool | None:
    """``value`` as a Python bool when it is one or a 0-d boolean array scalar (numpy's ``bool_``,
    as a config read with numpy gives), else None (ints, text: 1 and "yes" are not flags)."""
    if isinstance(value, bool):
        return value
    dtype = getattr(value, "dtype", None)
    if getattr(dtype, "kind", None) == "b" and getattr(value, "shape", None) == ():
        return bool(value)
    return None


@dataclass(frozen=True, init=False)
class Rules:
    """The rules of one game.

    ``Rules("star", 2)`` is the international game for two; options take the names of SPEC §4.
    Options left out get the variant's defaults (``anti_blocking`` is on for ``star`` and
    ``diamond`` and off for ``halma16``; ``repetition_limit`` is 3 for ``halma16``, none
    otherwise).  Impossible combinations raise ``ValueError`` naming the problem; an option of the
    wrong type (a bool, 2.0 or "2" for a count or seat, 1 for a flag or a ``limit_outcome``) raises
    ``WrongTypeError``, a ``TypeError`` that is also a ``ValueError``.  Integers may be numpy's.
    """

    variant: str
    num_players: int
    anti_blocking: bool
    play_to_end: bool
    move_limit: int | None
    limit_outcome: str
    stall_limit: int | None
    repetition_limit: int | None
    first_seat: int

    def __init__(
        self,
        variant: str = "star",
        num_players: int = 2,
        *,
        anti_blocking: bool = DEFAULT,
        play_to_end: bool = True,
        move_limit: int | None = None,
        limit_outcome: str = "draw",
        stall_limit: int | None = None,
        repetition_limit: int | None = DEFAULT,
        first_seat: int = 0,
        **unknown: Any,
    ) -> None:
        if unknown:
            names = ", ".join(name + did_you_mean(name, OPTION_NAMES) for name in sorted(unknown))
            raise ValueError(f"unknown rule option(s): {names}; known: {', '.join(OPTION_NAMES)}")
        if variant in VARIANTS:  # (the argument named, for a caller's typo)
            integer_argument(num_players, lambda: f"num_players must be an int, got {shown_value(num_players)}")
        num_players = check_game(variant, num_players)  # numpy's integers too, stored as Python ints
        if anti_blocking is DEFAULT:
            anti_blocking = variant != "halma16"
        if repetition_limit is DEFAULT:
            repetition_limit = 3 if variant == "halma16" else None
        flags = {}  # stored as Python bools
        for name, value in (("anti_blocking", anti_blocking), ("play_to_end", play_to_end)):
            flag = as_flag(value)
            if flag is None:
                raise WrongTypeError(f"{name} must be true or false, got {shown_value(value)}")
            flags[name] = flag
        anti_blocking, play_to_end = flags["anti_blocking"], flags["play_to_end"]
        for name, limit, least in (
            ("move_limit", move_limit, 1),
            ("stall_limit", stall_limit, 1),
            ("repetition_limit", repetition_limit, 2),
        ):
            if limit is None:
                continue
            number = as_integer(limit)
            if number is None:
                raise WrongTypeError(f"{name} must be an int or None, got {shown_value(limit)}")
            if number < least:
                raise ValueError(f"{name} must be at least {least} (or None for no limit), got {_shown(number)}")
            if number > MAX_LIMIT:
                raise ValueError(f"{name} must be at most {MAX_LIMIT} (or None for no limit), got {_shown(number)}")
        move_limit, stall_limit, repetition_limit = (
            None if v is None else as_integer(v) for v in (move_limit, stall_limit, repetition_limit)
        )
        choice_argument(limit_outcome, LIMIT_OUTCOMES, lambda: f"limit_outcome must be one of "
                        f"{', '.join(LIMIT_OUTCOMES)}, got {shown_value(limit_outcome)}")
        seat = integer_argument(first_seat, lambda: f"first_seat must be a seat 0..{num_players - 1}, "
                                                    f"got {shown_value(first_seat)}")
        if not 0 <= seat < num_players:
            raise ValueError(f"first_seat must be a seat 0..{num_players - 1}, got {_shown(seat)}")
        first_seat = seat
        for name, setting in (
            ("variant", variant),
            ("num_players", num_players),
            ("anti_blocking", anti_blocking),
            ("play_to_end", play_to_end),
            ("move_limit", move_limit),
            ("limit_outcome", limit_outcome),
            ("stall_limit", stall_limit),
            ("repetition_limit", repetition_limit),
            ("first_seat", first_seat),
        ):
            object.__setattr__(self, name, setting)

    @classmethod
    def preset(cls, name: str, num_players: int = 2, **overrides: Any) -> Rules:
        """A public rule set by name: ``qdan`` (international default) or ``kawu``.

        ``kawu``: 2, 3, 4 or 6 seats, the first to finish wins, and a game still running after
        300 plies is won by progress (most pieces in the goal).
        """
        choice_argument(name, PRESETS,
                        lambda: f"unknown preset {shown_value(name)}; expected one of {', '.join(PRESETS)}")
        if "variant" in overrides:
            raise ValueError(f"the {name} preset is a star rule set: it takes no variant option")
        num_players = integer_argument(num_players,
                                       lambda: f"num_players must be an int, got {shown_value(num_players)}")
        if name == "qdan":
            return cls("star", num_players, **overrides)
        if name == "kawu":
            if num_players not in (2, 3, 4, 6):
                raise ValueError(f"the kawu preset is for 2, 3, 4 or 6 seats, not {_shown(num_players)}")
            options: dict[str, Any] = dict(play_to_end=False, move_limit=300, limit_outcome="progress")
            options.update(overrides)
            return cls("star", num_players, **options)
        raise ValueError(f"unknown preset {shown_value(name)}; expected one of {', '.join(PRESETS)}")

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated like a new ``Rules``).

        The variant cannot be changed: this rule set's options, the variant's defaults among them
        (``anti_blocking``, ``repetition_limit``), would be carried over to a variant whose
        defaults differ (a halma16 game with no repetition limit may never end).  Build
        ``Rules(variant, num_players, ...)`` instead.  ``num_players`` can be changed: no default
        depends on the seat count (``first_seat`` must still be one of the new seats)."""
        new = changes.get("variant", self.variant)
        if isinstance(new, str) and new in VARIANTS and new != self.variant:  # an unknown one: Rules names it
            raise ValueError(
                f"replace cannot change the variant ({self.variant!r} -> {new!r}): the options "
                f"would keep {self.variant}'s defaults (anti_blocking={self.anti_blocking}, "
                f"repetition_limit={self.repetition_limit}); build Rules({new!r}, num_players, ...) "
                "instead, which takes that variant's defaults"
            )
        values = self.to_dict()
        values.update(changes)
        return Rules(**values)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """The rules of ``to_dict``'s form: any mapping of option names (a dict, a ``MappingProxyType``, a
        ``ChainMap``), read as a dict; anything else is a ``WrongTypeError``."""
        if not isinstance(data, Mapping):
            raise WrongTypeError(f"rules must be a mapping of option names, got {type(data).__name__}")
        data = dict(data)
        for key in data:  # (cls(**data) said only "keywords must be strings")
            if not isinstance(key, str):
                raise WrongTypeError(f"rules must be a mapping of option names (text), got the key "
                                     f"{shown_value(key)}")
        return cls(**data)


OPTION_NAMES = tuple(f.name for f in fields(Rules))


# numbers as text, ASCII digits only (int() and float() also read '١٠' and '1_0', which would be silently
# misread): the one definition that option, parameter and flag parsers share
ASCII_INTEGER = re.compile(r"-?[0-9]+")
ASCII_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
MAX_OPTION_DIGITS = 30  # far more than any option takes (MAX_LIMIT has 12); int() refuses over 4300


def parse_option_value(text: str) -> Any:
    """A rule option's value from text: true/false (on/off, yes/no), none, an integer in ASCII
    digits, or the text.  Text that int() would read as some other number (other scripts' digits,
    underscores, a '+') raises ValueError."""
    from halma_env.notation import quoted  # notation imports this module

    value = text.strip()
    low = value.lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    if low in ("none", "null"):
        return None
    digits = low.lstrip("+-").replace("_", "")
    if not digits.isdecimal():  # not a number int() would read (any script's digits): text
        return value
    if not ASCII_INTEGER.fullmatch(low):
        raise ValueError(f"numbers are written in ASCII digits 0-9 (no underscores, no '+'), got {quoted(value)}")
    if len(digits) > MAX_OPTION_DIGITS:
        raise ValueError(f"a number of {len(digits)} digits is far too long")
    return int(low)


def parse_rule_options(items: list[str]) -> dict[str, Any]:
    """``["move_limit=300", "anti_blocking=off"]`` -> ``{"move_limit": 300, "anti_blocking": False}``.

    Unknown names are left for ``Rules`` to reject (it names them); a malformed item, an empty
    value (``none`` means no limit), a repeated option, or ``variant``/``num_players`` (which
    come from the position or --variant/--seats) raises here.
    """
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"a rule option is written KEY=VALUE, got {shown_value(item)}")
        if key in ("variant", "num_players"):
            raise ValueError(
                f"rule option {key!r}: variant and num_players come from the position / --variant/--seats, "
                "not from rule options"
            )
        if not value.strip():
            raise ValueError(f"rule option {key!r} has an empty value in {shown_value(item)} "
                             f"(write {key}=none for no limit)")
        if key in options:
            raise ValueError(f"rule option {key!r} is given twice (last: {shown_value(item)})")
        try:
            options[key] = parse_option_value(value)
        except ValueError as e:
            raise ValueError(f"rule option {key!r}: {e}") from None
    return options
