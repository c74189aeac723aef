"""Path patterns into plain data (``steps.*.output.id``, ``messages[*].name``), for values a comparison skips.

Snapshots (excluded and matched values) and cassette matching (ignored body
fields) use the same paths: dotted keys, ``[n]`` or ``.n`` for list positions,
each segment a shell pattern (``*`` is any one key or position).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

from ..errors import UsageError, render_message

__all__ = ["DROP", "edit_path", "split_path"]

#: Returned by an ``edit_path`` action: remove the value instead of replacing it.
DROP = object()


def split_path(path: str) -> list[str]:
    """``state.items[*].id`` -> ``['state', 'items', '*', 'id']``."""
    text = path.replace("[", ".").replace("]", "")
    parts = [part.strip("'\"") for part in text.split(".") if part]
    if not parts:
        raise UsageError(render_message(f"path {path!r} is empty.", hint="write it like 'steps.*.output.id'."))
    return parts


def edit_path(value: Any, parts: list[str], action: Callable[[Any], Any]) -> tuple[Any, int]:
    """A copy of ``value`` with ``action`` applied at every place ``parts`` reaches, and how many it reached.

    ``action`` returns the new value, or :data:`DROP` to remove it. Nothing is changed in place.
    """
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        items: list[tuple[Any, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return value, 0
    kept: list[tuple[Any, Any]] = []
    hits = 0
    for key, item in items:
        if fnmatch.fnmatchcase(str(key), head):
            if rest:
                item, found = edit_path(item, rest, action)
                hits += found
            else:
                hits += 1
                item = action(item)
                if item is DROP:
                    continue
        kept.append((key, item))
    if isinstance(value, dict):
        return dict(kept), hits
    return [item for _, item in kept], hits
