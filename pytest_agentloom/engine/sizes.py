"""How long a value's text would be, found without building the text.

A template field or an expression's ``str()`` turns a state value into text.
The value may be a list that holds the same 100,000-item list 100,000 times
(cheap in memory, 10 GB as text), so the length is estimated by walking the
value, stopping as soon as it passes the limit: the walk costs at most
``limit`` steps, whatever the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["text_length_at_most"]

_SMALL = 24  # a float, a bool, None, anything without a length: never more than this many characters


def text_length_at_most(value: Any, limit: int) -> int:
    """About ``len(str(value))`` (an upper bound), or ``limit + 1`` once it is known to pass ``limit``."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        children: Any = ()
        if isinstance(item, str | bytes):
            total += len(item) + 2
        elif isinstance(item, bool | float) or item is None:
            total += _SMALL
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 2  # decimal digits <= bits / 3.3
        elif isinstance(item, Mapping):
            total += 2 + 4 * len(item)
            children = [*item.keys(), *item.values()] if total <= limit else ()
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 + 2 * len(item)
            children = item
        else:
            total += _SMALL
        if total > limit:
            return limit + 1
        stack.extend(children)
    return total
