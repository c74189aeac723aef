"""How long a value's text would be, found without building the text.

A template field or an expression's ``str()`` turns a state value into text.
The value may be a list that holds the same 100,000-item list 100,000 times
(cheap in memory, 10 GB as text), so the length is estimated by walking the
value, stopping as soon as it passes the limit: the walk costs at most
``limit`` steps, whatever the value.
"""

from __future__ import annotations

from typing import Any

from ..._core.readonly import ReadOnlyDict, ReadOnlyList
from ..._core.walk import post_order

__all__ = ["text_length_at_most"]

_SMALL = 24  # a float, a bool, None, any other object: never more than this many characters
#: what state values are made of (plain data; a loaded workflow's are read-only dicts and lists)
_CONTAINERS = frozenset({dict, list, tuple, set, frozenset, ReadOnlyDict, ReadOnlyList})


def text_length_at_most(value: Any, limit: int) -> int:
    """About ``len(str(value))`` (an upper bound), or ``limit + 1`` once it is known to pass ``limit``.

    A container met again (the same list held 1,000 times) is measured once, so the walk costs about the
    number of distinct containers and items, and stops after ``limit`` steps.
    """
    if type(value) not in _CONTAINERS:
        return _length(value, {})
    sizes: dict[int, int] = {}  # by id() within this call: ``value`` holds every container meanwhile
    steps = 0
    for item in post_order([value], _containers_in):
        children = _children(item)
        steps += len(children) + 1
        size = 2 + 2 * len(children) + sum(_length(child, sizes) for child in children)
        if size > limit or steps > limit:
            return limit + 1
        sizes[id(item)] = size
    return sizes[id(value)]


def _children(item: Any) -> list[Any]:
    return [*item.keys(), *item.values()] if isinstance(item, dict) else list(item)


def _containers_in(item: Any) -> list[Any]:
    return [child for child in _children(item) if type(child) in _CONTAINERS]


def _length(item: Any, sizes: dict[int, int]) -> int:
    kind = type(item)
    if kind is str or kind is bytes:
        return len(item) + 2
    if kind is int:
        return int(item.bit_length() // 3 + 2)  # decimal digits <= bits / 3.3
    if kind in _CONTAINERS:
        return sizes.get(id(item), _SMALL)  # a container still open is a loop: str() shows it as [...]
    return _SMALL
