"""Dicts and lists that refuse to change: what a loaded workflow holds, so that one object can be shared.

A test process loads a workflow file once and gives the same
:class:`~pytest_agentloom.engine._format.model.Workflow` to every test and scenario row
that names it. That is safe only if nobody can change it: its models are frozen,
and the data they hold (``state:``, ``tool_args:``, the list of steps, ...) is
made of these two types. They are a ``dict`` and a ``list`` to every reader
(``isinstance``, ``==``, ``json.dumps``, iteration, templates), but a write
raises :class:`~pytest_agentloom.errors.UsageError` saying how to change a copy.

A checkpoint read back from its file is made of them too, so that the value a resume starts from
is the one that writes the file again.

A copy is an ordinary ``dict`` or ``list`` of your own: ``copy.copy`` gives a
shallow one, ``copy.deepcopy`` a deep one (the engine's copy on write relies on
this), and ``dict(value)`` or ``list(value)`` work as always.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

from ..errors import UsageError, render_message

__all__ = ["ReadOnlyDict", "ReadOnlyList", "read_only"]

_HINT = ("change a copy: copy.deepcopy(value) of a value, workflow.model_copy(update={...}) or "
         "workflow.with_config(...) of the workflow.")


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise UsageError(render_message(
            f"this {type(self).__name__} cannot be changed: it is part of a loaded workflow (shared by every "
            "test that loads its file) or of a checkpoint as it was read.",
            hint=f"{_HINT}"))


class ReadOnlyDict(dict[Any, Any]):
    """A ``dict`` that cannot be changed (see the module docs)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(key, memo): copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyDict, (dict(self),))


class ReadOnlyList(list[Any]):
    """A ``list`` that cannot be changed (see the module docs)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyList, (list(self),))


def read_only(value: Any) -> Any:
    """``value`` with every plain ``dict`` and ``list`` in it (however deep) made read-only; anything else kept.

    Iterative, so a deeply nested value cannot exhaust the stack. The same dict or list met twice (a YAML
    alias) becomes the same read-only object twice, and every empty one the same shared empty one.
    """
    if type(value) is not dict and type(value) is not list:
        return value
    if not value:  # the empty ones, shared: they cannot change, and a model has several (``tools: []``, ...)
        return _EMPTY_DICT if type(value) is dict else _EMPTY_LIST
    made: dict[int, Any] = {}  # id() of containers of ``value``, which holds them while this runs
    top = _shell(value, made)
    stack = [value]
    while stack:
        original = stack.pop()
        items = original.items() if type(original) is dict else enumerate(original)
        frozen = made[id(original)]
        for key, item in items:
            if (type(item) is dict or type(item) is list) and not item:
                item = _EMPTY_DICT if type(item) is dict else _EMPTY_LIST
            elif type(item) is dict or type(item) is list:
                if id(item) not in made:
                    _shell(item, made)
                    stack.append(item)
                item = made[id(item)]
            if type(original) is dict:
                dict.__setitem__(frozen, key, item)
            else:
                list.append(frozen, item)
    return top


_EMPTY_DICT = ReadOnlyDict()
_EMPTY_LIST = ReadOnlyList()


def _shell(value: Any, made: dict[int, Any]) -> Any:
    """An empty read-only container for ``value``, filled by :func:`read_only` (a loop of aliases is kept)."""
    shell = ReadOnlyDict() if type(value) is dict else ReadOnlyList()
    made[id(value)] = shell
    return shell
