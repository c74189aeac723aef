"""vcrpy's patches switched on and off for each provider call, at the cost of a few attribute assignments.

A session keeps vcrpy's interception in place only while a provider call is in
flight (so the test's own HTTP, a tool's request to a local server, is never
taken for a recording). vcrpy hands out its patches as ~40 context managers,
most of them ``unittest.mock.patch.object``; entering and leaving those for
every call cost about 0.3 ms, a twentieth of a replayed call. :class:`PatchSwitch`
does what those patches do (set the replacement; on the way out, put the
original back, or delete the attribute when it was inherited) with plain
``setattr``, and enters any other kind of patcher (vcrpy's
``ConnectionRemover``) as a context manager, in the same order, undone in
reverse.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any
from unittest import mock

__all__ = ["PatchSwitch"]

_MISSING: Any = object()
#: The class of what ``mock.patch.object`` returns (made, never started, to learn it without naming it).
_MOCK_PATCH = type(mock.patch.object(mock, "DEFAULT", None))


def _plain(patcher: Any) -> bool:
    """A ``mock.patch.object(target, name, new)`` with none of mock's options (what vcrpy builds)."""
    return (isinstance(patcher, _MOCK_PATCH) and patcher.new is not mock.DEFAULT
            and not patcher.create and patcher.spec is None and patcher.spec_set is None
            and patcher.autospec is None and patcher.new_callable is None and not patcher.kwargs
            and patcher.attribute_name is None and not patcher.additional_patchers)


class PatchSwitch:
    """A reusable context manager applying ``patchers`` (see the module docs); not re-entrant."""

    def __init__(self, patchers: Iterable[Any]) -> None:
        self._steps: list[tuple[Any, str, Any] | Any] = [
            (patcher.getter(), patcher.attribute, patcher.new) if _plain(patcher) else patcher
            for patcher in patchers
        ]
        self._undo: contextlib.ExitStack | None = None

    def __enter__(self) -> PatchSwitch:
        undo = contextlib.ExitStack()
        try:
            for step in self._steps:
                if isinstance(step, tuple):
                    target, name, new = step
                    undo.callback(_restore, target, name, _own_value(target, name), getattr(target, name))
                    setattr(target, name, new)
                else:
                    undo.enter_context(step)
        except BaseException:
            undo.close()
            raise
        self._undo = undo
        return self

    def __exit__(self, *exc_info: object) -> None:
        undo, self._undo = self._undo, None
        if undo is not None:
            undo.close()


def _own_value(target: Any, name: str) -> Any:
    """The value ``target`` holds itself (not inherited), as mock saves it; :data:`_MISSING` if none."""
    try:
        return vars(target)[name]
    except (TypeError, KeyError):
        return _MISSING


def _restore(target: Any, name: str, own: Any, seen: Any) -> None:
    """Undo one patch as mock does: put back the target's own value, else delete the patch so the inherited
    value shows through again (and set the value seen before if nothing does)."""
    if own is not _MISSING:
        setattr(target, name, own)
        return
    delattr(target, name)
    if not hasattr(target, name):
        setattr(target, name, seen)
