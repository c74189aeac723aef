"""Checks for the arguments of public constructors, so a wrong value fails where it was written.

A provider or clock keeps what it is given and uses it much later (on the first request, in another
step); a value of the wrong form would then fail far from its cause, or not at all. Each check raises
:class:`~pytest_agentloom.errors.UsageError` naming the call, the argument, what was given and what
is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from ..errors import UsageError, render_message

__all__ = ["bad_argument", "check_choice", "check_optional_text", "check_positive_number", "check_provider_settings",
           "check_real_number"]


def bad_argument(call: str, name: str, value: object, accepted: str, hint: str | None = None) -> UsageError:
    """The error for ``call(name=value)``: the argument, what it got and the forms it takes."""
    return UsageError(render_message(
        f"{call}: argument {name} got {value!r} (of type {type(value).__name__}), which it cannot use",
        [("accepted", accepted)], hint=hint,
    ))


def check_optional_text(call: str, name: str, value: object) -> None:
    """``value`` is a string or ``None`` (an empty one is left to the provider, which names what is missing)."""
    if value is not None and not isinstance(value, str):
        raise bad_argument(call, name, value, "a string, or None (the default)")


def check_positive_number(call: str, name: str, value: object) -> None:
    """``value`` is a finite number above zero (a number of seconds, say); ``bool`` is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise bad_argument(call, name, value, "a finite number above 0, e.g. 30.0")


def check_real_number(call: str, name: str, value: object) -> None:
    """``value`` is a finite int or float; ``bool`` is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad_argument(call, name, value, "a finite number, e.g. 0.0")


def check_choice(call: str, name: str, value: object, choices: Collection[str]) -> None:
    """``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise bad_argument(call, name, value, "one of " + ", ".join(repr(choice) for choice in choices))


def check_provider_settings(call: str, *, timeout: object, **texts: object) -> None:
    """A provider's settings: each of ``texts`` (key, base URL, host...) a string or None, a timeout above 0."""
    for name, value in texts.items():
        check_optional_text(call, name, value)
    check_positive_number(call, "timeout", timeout)
