"""Values that change on every recording (ids, timestamps, counts), kept out of a snapshot's comparison.

``exclude`` paths drop a value from the snapshot; ``matchers`` replace a value
that passes a check with a visible placeholder, written in the file as such
(``<any str>``, ``<str matching /^chatcmpl-/>``, ``<is_uuid>``), so a reviewer
sees that the value is not compared, and a value that fails the check stays
in place and shows in the diff.

Paths are dotted, from the top of the snapshot: ``state.reply.id``,
``steps.*.output.id``, ``state.items[*].id``. A segment is a shell pattern
(``*`` is any one key or position, ``call_*`` any key starting so). A path
that starts with ``steps.`` also covers the run's ``state.steps.`` copy, and
one on ``steps.<id>.output`` covers the state key that step's output was
written to (``outputs``: step id -> its state path), so a value seen in two
places is matched in both (and the snapshot then holds it once: see :mod:`.shape`).

A matcher is a type (``int``, ``str``), a compiled regular expression (it must
``fullmatch`` the text of the value), a callable returning true for a good
value, or text (for markers and ini lines): a type name (``int``, ``float``,
``str``, ``bool``, ``list``, ``dict``, ``any``) or ``/regex/``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._core.patterns import DROP, edit_path, split_path
from ..._core.state_paths import parse_path
from ...errors import UsageError, render_message

__all__ = ["Matcher", "apply_volatile", "matchers_from_lines", "parse_matcher"]

_TYPES: dict[str, type | tuple[type, ...]] = {
    "int": int, "float": (int, float), "str": str, "bool": bool, "list": list, "dict": dict, "any": object,
}


@dataclass(frozen=True)
class Matcher:
    """A check of a volatile value and the placeholder written in its place."""

    label: str
    check: Callable[[Any], bool]

    @property
    def placeholder(self) -> str:
        return f"<{self.label}>"

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.check(value))
        except Exception:  # a user's check that cannot handle the value: the value does not match
            return False


def parse_matcher(spec: Any, where: str) -> Matcher:
    """A :class:`Matcher` from one of the forms of the module docs; raises UsageError naming ``where``."""
    if isinstance(spec, Matcher):
        return spec
    if isinstance(spec, re.Pattern):
        pattern = spec
        return Matcher(f"str matching /{pattern.pattern}/", lambda value: bool(pattern.fullmatch(str(value))))
    if isinstance(spec, type):
        kind = spec
        return Matcher(f"any {kind.__name__}", lambda value: isinstance(value, kind)
                       and not (kind is int and isinstance(value, bool)))
    if isinstance(spec, str):
        text = spec.strip()
        if len(text) >= 2 and text.startswith("/") and text.endswith("/"):
            try:
                return parse_matcher(re.compile(text[1:-1]), where)
            except re.error as exc:
                raise UsageError(f"{where}: matcher {spec!r} is no valid regular expression ({exc}).") from None
        if text in _TYPES:
            types = _TYPES[text]
            return Matcher(f"any {text}", lambda value: isinstance(value, types)
                           and not (text in ("int", "float") and isinstance(value, bool)))
        raise UsageError(
            render_message(f"{where}: unknown matcher {spec!r}.",
                           hint=f"use a type name ({', '.join(_TYPES)}) "
                                "or a regular expression between slashes, e.g. '/^chatcmpl-[A-Za-z0-9]+$/'.")
        )
    if callable(spec):
        name = getattr(spec, "__name__", type(spec).__name__)
        return Matcher(name if name != "<lambda>" else "matched", spec)
    raise UsageError(f"{where}: a matcher must be a type, a regex, a callable or text, got {spec!r}.")


def matchers_from_lines(lines: Iterable[str], where: str) -> dict[str, Any]:
    """``path: matcher`` lines (the ini form) as a dict of path -> matcher text."""
    out: dict[str, Any] = {}
    for line in lines:
        if not line.strip():
            continue
        path, sep, spec = line.partition(":")
        if not sep or not path.strip() or not spec.strip():
            raise UsageError(f"{where}: line {line!r} must read 'path: matcher', e.g. 'steps.*.output.id: str'.")
        out[path.strip()] = spec.strip()
    return out


def _action(matcher: Matcher | None) -> Callable[[Any], Any]:
    if matcher is None:
        return lambda _value: DROP
    return lambda value: matcher.placeholder if matcher.accepts(value) else value


def _patterns(path: str, outputs: Mapping[str, str]) -> list[list[str]]:
    parts = split_path(path)
    if parts[0] != "steps":
        return [parts]
    patterns = [parts, ["state", *parts]]
    if len(parts) >= 3 and parts[2] == "output":  # steps.<id>.output...: also the state key it was written to
        for step_id, written in outputs.items():
            if fnmatch.fnmatchcase(step_id, parts[1]):
                target = _state_pattern(written)
                if target is not None:
                    patterns.append(["state", *target, *parts[3:]])
    return patterns


def _state_pattern(path: str) -> list[str] | None:
    """A state path (``issue``, ``results[b01]``) as pattern segments matching only itself."""
    try:
        segments = parse_path(path)
    except ValueError:
        return None
    if any(isinstance(seg, int) and seg < 0 for seg in segments):
        return None  # counted from the end: the pattern language has no such position
    return [re.sub(r"([*?\[])", r"[\1]", str(seg)) for seg in segments]


def apply_volatile(data: Any, exclude: Iterable[str] = (), matchers: Mapping[str, Any] | None = None,
                   *, strict: Collection[str] = (), outputs: Mapping[str, str] | None = None) -> Any:
    """A copy of ``data`` without the ``exclude`` paths and with matched values replaced by placeholders.

    A path of ``strict`` that reaches nothing in ``data`` raises UsageError (a typo must not pass quietly).
    """
    outputs = outputs or {}
    rules: list[tuple[str, list[list[str]], Matcher | None]] = [
        (path, _patterns(path, outputs), None) for path in exclude]
    rules += [(path, _patterns(path, outputs), parse_matcher(spec, f"snapshot matcher for '{path}'"))
              for path, spec in (matchers or {}).items()]
    for path, patterns, matcher in rules:
        found = 0
        action = _action(matcher)
        for pattern in patterns:
            data, hits = edit_path(data, pattern, action)
            found += hits
        if path in strict and not found:
            kind = "matcher path" if matcher is not None else "exclude path"
            raise UsageError(render_message(
                    f"snapshot {kind} '{path}' reaches nothing in the snapshot.",
                    hint="write it from the top of the snapshot file, e.g. 'steps.*.output.id' "
                         "or 'state.reply.id'."))
    return data
