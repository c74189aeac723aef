"""What a router condition may cost, counted in operations instead of seconds.

Sizes alone do not bound the work: ``[[0]*99999]*99999`` is two 100,000-item lists in memory, yet
comparing two of them compares 10,000,000,000 integers (18 s), and one level deeper never ends. So each
operation that walks its operands (``==``, ``<``, ``in``, hashing a key, ``min``/``max``, ``str()``, a
string method, building a list with ``+``/``*``) is charged, *before* Python does it, an upper bound of
the items it may visit; an evaluation that would pass :data:`OPERATION_BUDGET` stops with
:class:`~pytest_agentloom.errors.ExpressionBudgetError`. Counted, not timed, the answer is the same on a
loaded machine.

The bound of a value is its size as a tree: a list held 1,000 times counts 1,000 times (that is what
``==`` walks), found by visiting each distinct container once. Text counts one operation per
:data:`TEXT_UNIT` characters (comparing and scanning text is a memory scan, far cheaper per character
than a visit of a Python item). Work that cannot grow with the values (comparing with a number or a short
text, ``len()``) is not charged: the expression's own length bounds it. The measuring walk is charged
too (:data:`_CONTAINER_VISIT` a distinct container), so no expression can make the measuring expensive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._core.readonly import ReadOnlyDict, ReadOnlyList
from ...errors import ExpressionBudgetError

__all__ = ["OPERATION_BUDGET", "SCALARS", "TEXT_UNIT", "Budget"]

OPERATION_BUDGET = 1_000_000
"""Operations one condition may spend: about a second at worst (measuring nested dicts), mostly far less."""

TEXT_UNIT = 64
"""Characters compared or scanned per counted operation."""

_CONTAINERS = frozenset({dict, list, tuple, set, frozenset, ReadOnlyDict, ReadOnlyList})
_TEXTS = frozenset({str, bytes})
_FAMILY: dict[type, str] = {
    int: "scalar", float: "scalar", bool: "scalar", type(None): "scalar", str: "str", bytes: "bytes",
    dict: "map", ReadOnlyDict: "map", list: "list", ReadOnlyList: "list", tuple: "tuple", set: "set",
    frozenset: "set",
}
"""Values Python compares with each other item by item; across two families a comparison ends at once."""
SCALARS = frozenset({int, float, bool, type(None)})
"""Values any comparison with settles at once (Python compares them without visiting anything)."""
_SIZED_FAMILIES = frozenset({"map", "list", "tuple", "set"})
_FLAT_FAMILIES = frozenset({"scalar", "str", "bytes"})
_CONTAINER_VISIT = 8
"""Operations charged for visiting one distinct container while measuring (more Python work than an item)."""
_PLAIN = frozenset({str, bytes, int, float, bool, type(None)})


class Budget:
    """The operations left to one evaluation; :meth:`spend` raises once they run out."""

    __slots__ = ("expression", "left")

    def __init__(self, expression: str, operations: int = OPERATION_BUDGET) -> None:
        self.expression = expression
        self.left = operations

    def spend(self, operations: int) -> None:
        """Take ``operations`` from what is left; over budget is an error naming the limit."""
        self.left -= operations
        if self.left < 0:
            raise ExpressionBudgetError(self.expression, OPERATION_BUDGET)

    def size(self, value: Any) -> int:
        """The value's tree size (see the module docs), charging the walk; at most what is left, plus one."""
        kind = type(value)
        if kind in _TEXTS:
            return 1 + len(value) // TEXT_UNIT
        if kind not in _CONTAINERS and not _is_container(value):
            return 1
        size, visits = _tree_size(value, self.left + 1)
        self.spend(visits)
        return size

    def charge_compare(self, left: Any, right: Any, *, equality: bool) -> None:
        """Charge ``left <op> right``: it stops at the smaller side, and ends at once where Python's does.

        A scalar side, two kinds of value (a list and a dict), or for ``==``/``!=`` two containers of
        different lengths, are settled without visiting an item: nothing to charge.
        """
        kind_left, kind_right = type(left), type(right)
        if kind_left in SCALARS or kind_right in SCALARS:
            return
        if kind_left is str and kind_right is str:
            if len(left) >= TEXT_UNIT and len(right) >= TEXT_UNIT:
                self.spend(min(len(left), len(right)) // TEXT_UNIT)
            return
        family_left, family_right = _FAMILY.get(kind_left, "other"), _FAMILY.get(kind_right, "other")
        if family_left != family_right and "other" not in (family_left, family_right):
            return
        if equality and family_left in _SIZED_FAMILIES and family_left == family_right and len(left) != len(right):
            return
        self.spend(min(self.size(left), self.size(right)))

    def charge_contains(self, item: Any, container: Any) -> None:
        """Charge ``item in container``: a scan of the text or sequence, else a hash for a mapping or set.

        A scalar or a text looked for in a list compares in at most its own size with each element.
        """
        kind = type(container)
        if kind is list or kind is tuple or kind is ReadOnlyList:
            if _FAMILY.get(type(item)) in _FLAT_FAMILIES:
                if len(container) >= TEXT_UNIT:  # a short list of scalars or texts: nothing worth counting
                    self.spend(len(container) * self.size(item))
                return
            self.spend(self.size(container))
        elif kind in _TEXTS:
            if len(container) >= TEXT_UNIT:
                self.spend((len(container) + _length(item)) // TEXT_UNIT)
        elif isinstance(container, Mapping | set | frozenset):
            if type(item) not in SCALARS:
                self.spend(self.size(item))  # hashing: a tuple's hash visits its items
        else:
            self.spend(self.size(container))


def _is_container(value: Any) -> bool:
    """A container of another type (a state mapping of the engine's own, a user's list subclass)."""
    return isinstance(value, Mapping | list | tuple | set | frozenset)


def _items(value: Any) -> Sequence[Any]:
    kind = type(value)
    if kind is list or kind is tuple:
        return value  # type: ignore[no-any-return]
    if kind is dict or kind is ReadOnlyDict:
        return [*value.keys(), *value.values()]
    return [*value.keys(), *value.values()] if isinstance(value, Mapping) else list(value)


def _text_units(items: Sequence[Any], kinds: set[type]) -> int:
    """Operations for the text among ``items``: one per :data:`TEXT_UNIT` characters of all of it."""
    if str not in kinds and bytes not in kinds:
        return 0
    if len(kinds) == 1:
        return sum(map(len, items)) // TEXT_UNIT
    return sum(len(item) for item in items if type(item) in _TEXTS) // TEXT_UNIT


def _tree_size(root: Any, cap: int) -> tuple[int, int]:
    """``(tree size, visits)`` of ``root``, each distinct container visited once; stops once past ``cap``.

    The items of a container are sorted by type in C first (``set(map(type, ...))``), so a long list of
    plain values (the usual large state value) is measured without a Python step per item. A container
    met again while it is still open (a list that holds itself) counts one: Python's own comparison of it
    fails with a ``RecursionError``, which the evaluator reports.
    """
    sizes: dict[int, int] = {}
    pending: dict[int, tuple[int, list[Any]]] = {}  # an open container: its own cost, its nested items
    visits = 0
    stack: list[Any] = [root]
    while stack:
        value = stack.pop()
        key = id(value)
        if key in sizes:
            continue
        opened = pending.pop(key, None)
        if opened is not None:  # its nested items are measured: close it
            size = opened[0]
            for item in opened[1]:
                size += sizes.get(id(item), 1)
            if size > cap:
                return cap + 1, visits
            sizes[key] = size
            continue
        items = _items(value)
        visits += _CONTAINER_VISIT + len(items)
        if visits > cap:
            return cap + 1, visits
        kinds = set(map(type, items))
        if kinds <= _PLAIN:
            sizes[key] = 1 + len(items) + (_text_units(items, kinds) if kinds & _TEXTS else 0)
            continue
        nested = [item for item in items if type(item) not in _PLAIN]
        own = 1 + len(items) - len(nested)
        if kinds & _TEXTS:
            own += _text_units([item for item in items if type(item) in _TEXTS], kinds & _TEXTS)
        pending[key] = (own, nested)
        stack.append(value)
        for item in nested:
            if type(item) in _CONTAINERS or _is_container(item):
                stack.append(item)
    return sizes[id(root)], visits


def _length(value: Any) -> int:
    return len(value) if type(value) in _TEXTS else 0
