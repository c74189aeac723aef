"""State paths: the small addressing language shared by templates and step outputs.

A path names a place inside the run state, such as ``report.summary``,
``items[0].name``, ``items[-1]`` or ``limits[max.words]``. Dots separate
keys; brackets hold either an integer (a list index, negative counting from
the end) or any other text (a key, which may then contain dots).

Reading (:func:`get_path`) is forgiving because templates treat an absent key
as a blank, so it answers :data:`MISSING` instead of raising. Writing
(:func:`set_path`) is strict because a step output must never silently
replace a value of the wrong shape or grow a list.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ..errors import OutputPathError
from .readonly import ReadOnlyDict

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "MISSING",
    "OutputPathError",
    "Segment",
    "format_path",
    "get_path",
    "parse_path",
    "set_path",
]

Segment = str | int

_NAME: Final = re.compile(r"[^.\[\]]+")
_INDEX: Final = re.compile(r"-?[0-9]+")


class _Missing:
    """Type of :data:`MISSING`; a distinct object so ``None`` stays a real value."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""Returned by :func:`get_path` when the path leads nowhere."""


# --------------------------------------------------------------------------- parsing


@functools.lru_cache(maxsize=16384)
def parse_path(text: str) -> tuple[Segment, ...]:
    """Split path text into keys and list indexes, rejecting anything ambiguous.

    Raises ``ValueError`` naming the text and the position of the problem, so a
    typo in a workflow file points at itself. The same few paths are parsed for
    every step of every run (outputs, template fields), so results are cached.
    """
    if not text:
        raise ValueError("invalid state path '': the path is empty")
    segments: list[Segment] = []
    pos = 0 if text.startswith("[") else _read_name(text, 0, segments)
    while pos < len(text):
        char = text[pos]
        if char == "[":
            pos = _read_bracket(text, pos, segments)
        elif char == ".":
            pos = _read_name(text, pos + 1, segments)
        else:
            raise ValueError(_bad(text, f"unexpected {char!r} at position {pos}; expected '.' or '['"))
    return tuple(segments)


def _bad(text: str, reason: str) -> str:
    """Build one consistent parse error message."""
    return f"invalid state path {text!r}: {reason}"


def _read_name(text: str, pos: int, out: list[Segment]) -> int:
    """Read a dotted key starting at ``pos``; an empty one means a doubled or stray dot."""
    match = _NAME.match(text, pos)
    if match is None:
        raise ValueError(_bad(text, f"empty key at position {pos}"))
    out.append(match.group())
    return match.end()


def _read_bracket(text: str, pos: int, out: list[Segment]) -> int:
    """Read ``[...]`` starting at ``pos``: an integer becomes an index, other text a key."""
    close = text.find("]", pos + 1)
    if close == -1:
        raise ValueError(_bad(text, f"'[' at position {pos} is never closed"))
    inner = text[pos + 1 : close]
    if "[" in inner:
        raise ValueError(_bad(text, f"'[' inside brackets at position {pos + 1 + inner.index('[')}"))
    if not inner:
        raise ValueError(_bad(text, f"empty brackets at position {pos}"))
    out.append(int(inner) if _INDEX.fullmatch(inner) else inner)
    return close + 1


def format_path(segments: Iterable[Segment]) -> str:
    """Write segments back as path text, so messages show paths the way users type them.

    Keys that contain a dot go in brackets so that the text parses back to the
    same segments. Empty keys and keys holding ``[`` or ``]`` have no text form;
    they come out bracketed for display only.
    """
    parts: list[str] = []
    for seg in segments:
        if isinstance(seg, int) or "." in seg or not seg:
            parts.append(f"[{seg}]")
        else:
            parts.append(f".{seg}" if parts else seg)
    return "".join(parts)


# --------------------------------------------------------------------------- reading


_PLAIN_MAPPINGS = frozenset({dict, MappingProxyType, ReadOnlyDict})  # ReadOnlyDict: a loaded workflow's


def get_path(root: Any, segments: Iterable[Segment]) -> Any:
    """Follow ``segments`` from ``root``; answer :data:`MISSING` instead of raising.

    Templates decide what a missing value means, so this never guesses.
    """
    current = root
    for seg in segments:
        current = _step(current, seg)
        if current is MISSING:
            return MISSING
    return current


def _step(current: Any, seg: Segment) -> Any:
    """Take one step into a mapping, a model or a list."""
    if type(current) in _PLAIN_MAPPINGS:  # the state and what it holds, without the abstract-class checks
        return current.get(seg, MISSING)
    if _is_model(current):
        return _model_field(current, seg)
    if isinstance(current, Mapping):
        return current.get(seg, MISSING)
    if isinstance(current, list | tuple) and isinstance(seg, int):
        return current[seg] if -len(current) <= seg < len(current) else MISSING
    return MISSING


def _is_model(value: Any) -> bool:
    """Whether ``value`` is a pydantic model, without importing pydantic: when nothing has imported it, nothing
    can be one (the plugin reads marker settings with these paths before any engine model is loaded)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def _model_field(model: BaseModel, seg: Segment) -> Any:
    """Read a pydantic field (or an allowed extra) as if the model were a dict."""
    if not isinstance(seg, str):
        return MISSING
    if seg in type(model).model_fields:
        return getattr(model, seg)
    extra = model.model_extra or {}
    return extra.get(seg, MISSING)


# --------------------------------------------------------------------------- writing


def set_path(root: MutableMapping[str, Any], segments: Sequence[Segment], value: Any) -> None:
    """Write ``value`` at ``segments``, creating missing dicts but never growing lists.

    The whole path is checked before anything changes, so a failed write leaves
    the state exactly as it was.
    """
    segments = tuple(segments)
    if not segments:
        raise OutputPathError("", "the path is empty")
    target, key, to_create = _locate(root, segments)
    target[key] = _nest(to_create, value)


def _locate(
    root: MutableMapping[str, Any], segments: tuple[Segment, ...]
) -> tuple[Any, Segment, tuple[str, ...]]:
    """Find the container and key to assign, plus the dict keys that must be created under it."""
    current: Any = root
    for pos, seg in enumerate(segments):
        if type(current) is not dict or not isinstance(seg, str):  # a key into a plain dict needs no check
            _check_step(current, seg, segments, pos)
        rest = segments[pos + 1 :]
        if not rest:
            return current, seg, ()
        if (type(current) is dict or isinstance(current, MutableMapping)) and seg not in current:
            return current, seg, _creatable(rest, segments, pos + 1)
        current = current[seg]
    raise AssertionError("unreachable: the loop returns on the last segment")


def _creatable(rest: tuple[Segment, ...], segments: tuple[Segment, ...], start: int) -> tuple[str, ...]:
    """Check that the not-yet-existing tail is made of keys only, since new lists are never invented."""
    for offset, seg in enumerate(rest):
        if isinstance(seg, int):
            where = format_path(segments[: start + offset])
            raise OutputPathError(
                format_path(segments), f"'{where}' does not exist, so there is no list to index with [{seg}]"
            )
    return tuple(str(seg) for seg in rest)


def _check_step(current: Any, seg: Segment, segments: tuple[Segment, ...], pos: int) -> None:
    """Raise when ``seg`` cannot be written into or through ``current``.

    Every write of a run passes here, so the path is spelled out only for an error.
    """
    if isinstance(current, MutableMapping):
        if isinstance(seg, int):
            reason = f"{_where(segments, pos)} is a mapping, so it takes a key, not the list index [{seg}]"
            raise OutputPathError(format_path(segments), reason)
        return
    if isinstance(current, list):
        if not isinstance(seg, int):
            raise OutputPathError(format_path(segments), f"{_where(segments, pos)} holds a list, not a mapping")
        if not -len(current) <= seg < len(current):
            raise OutputPathError(
                format_path(segments),
                f"index {seg} is out of range for {_where(segments, pos)} (a list of {len(current)}); lists never grow",
            )
        return
    raise OutputPathError(format_path(segments), f"{_where(segments, pos)} holds {_a(type(current).__name__)}, "
                          "not a mapping")


def _where(segments: tuple[Segment, ...], pos: int) -> str:
    """The container a failed write met, as an error names it."""
    return f"'{format_path(segments[:pos])}'" if pos else "the state"


def _a(noun: str) -> str:
    """Prefix the right indefinite article, so messages read "an int" and "a str"."""
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _nest(keys: tuple[str, ...], value: Any) -> Any:
    """Wrap ``value`` in fresh dicts, innermost key last."""
    for key in reversed(keys):
        value = {key: value}
    return value
