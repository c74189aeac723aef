"""Reading a command's options as GNU ``getopt`` does, to find the ones that run programs.

The checks in :mod:`._commands` must see an option however it is spelled: a long option by any
unique prefix (``--to-com=cmd`` is ``--to-command``), with its value attached (``--eval=x``) or not, a
short one inside a cluster (``-xIprog``) up to the first option that takes a value. They read more
than the program might (a false alarm refuses, never the opposite).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["before_operands", "long_option", "short_option"]


def long_option(arg: str, names: Iterable[str], exact: Iterable[str] = ()) -> str | None:
    """The long option of ``names`` that ``arg`` spells, if any (a unique prefix counts, as in getopt).

    ``exact`` lists options that are prefixes of a dangerous one but are harmless themselves
    (getopt takes an exact match first: ``--checkpoint`` is not ``--checkpoint-action``).
    """
    if not arg.startswith("--") or len(arg) <= 2:
        return None
    given = arg.split("=", 1)[0]
    if given in exact:
        return None
    return next((name for name in names if name.startswith(given)), None)


def short_option(arg: str, letters: str, takes_value: str) -> str | None:
    """The option of ``letters`` inside the short cluster ``arg`` (``-nE``); the rest after a letter of
    ``takes_value`` is that option's value, and is not read."""
    if not arg.startswith("-") or arg.startswith("--") or arg == "-":
        return None
    for letter in arg[1:]:
        if letter in letters:
            return f"-{letter}"
        if letter in takes_value:
            return None
    return None


def before_operands(args: Sequence[str]) -> list[str]:
    """``args`` up to a ``--``: what follows it is operands (file names), never options."""
    return list(args[: args.index("--")]) if "--" in args else list(args)
