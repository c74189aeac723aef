"""Turning what a run holds into JSON-ready data, one way for every file and every hash."""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import math
from typing import Any

from .readonly import ReadOnlyDict, ReadOnlyList

__all__ = ["copy_plain", "to_plain"]


def to_plain(value: Any) -> Any:
    """``value`` as JSON-ready data: models and dataclasses as dicts, sets sorted, tuples as lists."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return to_plain(value.value)
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_plain(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    if hasattr(value, "model_dump"):
        return to_plain(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_plain(dataclasses.asdict(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


_IMMUTABLE_ATOMS = frozenset({str, int, float, bool, type(None)})


def copy_plain(value: Any) -> Any:
    """A deep copy, fast for the JSON-like data states hold: a string costs nothing.

    Dicts and lists (a loaded workflow's read-only ones too) are rebuilt as plain ones, immutable scalars
    shared, anything else goes through ``copy.deepcopy``.
    """
    kind = type(value)
    if kind in _IMMUTABLE_ATOMS:
        return value
    if kind is dict or kind is ReadOnlyDict:
        return {key: copy_plain(item) for key, item in value.items()}
    if kind is list or kind is ReadOnlyList:
        return [copy_plain(item) for item in value]
    return copy.deepcopy(value)
