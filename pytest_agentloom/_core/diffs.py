"""Differences between two values, shown so that a reviewer sees the change itself.

Snapshots, cassette mismatches and ``assert a == b`` explanations all use this
one renderer. Each place that differs gets one entry, sorted by path:

- short values on one line: ``state.answer: 'x' -> 'y'``, ``steps.new: added 1``;
- multi-line text as a unified diff (``-`` old, ``+`` new) with two lines of context;
- one long line as a window around the first difference, cut with ``...`` on
  either side and the difference marked with ``^`` under both versions;
- the same change at several paths once, with the other paths named
  (``(same change at steps.draft.output)``), and a run's ``state.steps.<id>``
  copy of a step's entry left out when ``steps.<id>`` already shows it;
- ``notes`` (path parts -> text) name what a place holds: a snapshot says which step's output a state key
  is (``state.reply (output of step draft)``), since the step's entry no longer repeats it.

The whole is capped at ``limit`` lines with a last line ``... N more lines``;
``verbose >= 2`` (``pytest -vv``) shows everything and never cuts a value.
deepdiff does the comparing; it is imported only when there is something to explain.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_DIFF_LINES", "DiffReport", "diff_report", "path_diff", "render_path"]

MAX_DIFF_LINES = 30
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_BEFORE = 30  # characters shown before the first difference of a long line
_AFTER = 30  # characters shown after the end of the differing part
_UNLIMITED = 1_000_000


def render_path(parts: Sequence[Any], root: str = "") -> str:
    """``root`` followed by the parts: ``.name`` for plain keys, ``['odd key']`` for others, ``[2]`` for positions."""
    text = root
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        key = str(part)
        if _NAME.fullmatch(key):
            text += f".{key}" if text else key
        else:
            text += f"[{key!r}]"
    return text or "(root)"


@dataclass(frozen=True)
class _Change:
    parts: tuple[Any, ...]
    kind: str  # "changed", "added", "removed" or another deepdiff report, spaced
    old: Any = None
    new: Any = None

    def same_change(self, other: _Change) -> bool:
        return self.kind == other.kind and _same(self.old, other.old) and _same(self.new, other.new)


def _same(left: Any, right: Any) -> bool:
    return type(left) is type(right) and left == right


@dataclass(frozen=True)
class DiffReport:
    """The places that differ (``count``) and the lines that show them (capped)."""

    count: int
    lines: list[str]

    @property
    def places(self) -> str:
        return f"{self.count} difference{'s' if self.count != 1 else ''}"


def diff_report(expected: Any, actual: Any, *, root: str = "", limit: int = MAX_DIFF_LINES, width: int = 60,
                verbose: int = 0, notes: Mapping[tuple[Any, ...], str] | None = None) -> DiffReport:
    """Every place where ``actual`` differs from ``expected``, rendered (see the module docs)."""
    if expected == actual:
        return DiffReport(0, [])
    changes = _merged(_changes(expected, actual))
    if verbose >= 2:
        limit, width = _UNLIMITED, _UNLIMITED
    lines: list[str] = []
    for change, also in changes:
        lines.extend(_render(change, also, root, width, _note(change.parts, notes or {})))
    if len(lines) > limit:
        rest = len(lines) - limit + 1
        lines = [*lines[: limit - 1], f"... {rest} more line{'s' if rest > 1 else ''} (pytest -vv shows all)"]
    return DiffReport(len(changes), lines)


def path_diff(expected: Any, actual: Any, *, root: str = "", limit: int = MAX_DIFF_LINES, width: int = 60,
              verbose: int = 0) -> list[str]:
    """The lines of :func:`diff_report`: one entry per place that differs, sorted, at most ``limit`` lines."""
    return diff_report(expected, actual, root=root, limit=limit, width=width, verbose=verbose).lines


def _changes(expected: Any, actual: Any) -> list[_Change]:
    changes: list[_Change] = []
    _walk(expected, actual, (), changes)
    return sorted(changes, key=lambda change: render_path(change.parts))


def _walk(expected: Any, actual: Any, parts: tuple[Any, ...], changes: list[_Change]) -> None:
    """Go down the dicts and same-length lists both sides share, skipping equal parts (``==`` runs in C), and
    hand only the places that differ to deepdiff: a changed value in a state of megabytes is found at once."""
    if type(expected) is dict and type(actual) is dict:
        for key, old in expected.items():
            if key not in actual:
                changes.append(_Change((*parts, key), "removed", old=old))
            elif not _same(old, actual[key]):
                _walk(old, actual[key], (*parts, key), changes)
        changes.extend(_Change((*parts, key), "added", new=new) for key, new in actual.items() if key not in expected)
        return
    if type(expected) is list and type(actual) is list and len(expected) == len(actual):
        for index, (old, new) in enumerate(zip(expected, actual, strict=True)):
            if not _same(old, new):
                _walk(old, new, (*parts, index), changes)
        return
    changes.extend(_deepdiff(expected, actual, parts))


def _deepdiff(expected: Any, actual: Any, prefix: tuple[Any, ...]) -> list[_Change]:
    from deepdiff import DeepDiff  # imported here: loading the plugin must stay light

    tree = DeepDiff(expected, actual, view="tree", verbose_level=2, **_deeper(DeepDiff))
    changes = []
    for report, levels in tree.items():
        for level in levels:
            parts = (*prefix, *level.path(output_format="list"))
            if report in ("values_changed", "type_changes"):
                changes.append(_Change(parts, "changed", level.t1, level.t2))
            elif report.endswith("_added"):
                changes.append(_Change(parts, "added", new=level.t2))
            elif report.endswith("_removed"):
                changes.append(_Change(parts, "removed", old=level.t1))
            else:
                changes.append(_Change(parts, report.replace("_", " ")))
    return changes


def _deeper(deepdiff: Any) -> dict[str, Any]:
    """Always name the keys that differ: deepdiff 8 reports a whole dict as changed when few keys are shared
    (a step's entry gaining ``output_in`` where it had ``output``); deepdiff 7 has no such threshold."""
    import inspect

    known = inspect.signature(deepdiff).parameters
    return {"threshold_to_diff_deeper": 0} if "threshold_to_diff_deeper" in known else {}


def _merged(changes: list[_Change]) -> list[tuple[_Change, list[_Change]]]:
    """One entry per distinct change: a run's ``state.steps.<id>`` mirror of ``steps.<id>`` is dropped, and the
    same change at other paths is named on the first one's line.
    """
    by_parts = {change.parts: change for change in changes}
    kept = []
    for change in changes:
        if change.parts[:2] == ("state", "steps"):
            mirror = by_parts.get(change.parts[1:])
            if mirror is not None and mirror.same_change(change):
                continue
        kept.append(change)
    out: list[tuple[_Change, list[_Change]]] = []
    for change in kept:
        first = next((entry for entry in out if entry[0].same_change(change)), None)
        if first is not None:
            first[1].append(change)
        else:
            out.append((change, []))
    return out


def _note(parts: tuple[Any, ...], notes: Mapping[tuple[Any, ...], str]) -> str | None:
    """The note of the longest noted path that ``parts`` is inside of."""
    for end in range(len(parts), 0, -1):
        if parts[:end] in notes:
            return notes[parts[:end]]
    return None


def _render(change: _Change, also: list[_Change], root: str, width: int, note: str | None = None) -> list[str]:
    where = render_path(change.parts, root)
    if note:
        where += f" ({note})"
    if also:
        named = ", ".join(render_path(other.parts, root) for other in also[:3])
        more = f" and {len(also) - 3} more place{'s' if len(also) > 4 else ''}" if len(also) > 3 else ""
        where += f" (same change at {named}{more})"
    if change.kind == "added":
        return [f"{where}: added {_short(change.new, width)}"]
    if change.kind == "removed":
        return [f"{where}: removed {_short(change.old, width)}"]
    if change.kind != "changed":
        return [f"{where}: {change.kind}"]
    old, new = change.old, change.new
    if isinstance(old, str) and isinstance(new, str):
        if "\n" in old or "\n" in new:
            return [f"{where}: text changed (- old, + new):", *_text_diff(old, new)]
        if len(repr(old)) > width or len(repr(new)) > width:
            return _line_window(where, old, new)
    return [f"{where}: {_short(old, width)} -> {_short(new, width)}"]


def _short(value: Any, width: int) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _text_diff(old: str, new: str) -> list[str]:
    """A unified diff of two texts, two lines of context, indented under its path."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2)
    return [f"    {line}" for line in list(lines)[2:]]  # the '---'/'+++' file header says nothing here


def _line_window(where: str, old: str, new: str) -> list[str]:
    """Both versions of a long line cut to the same window around the first difference, marked with ``^``."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < min(len(old), len(new)) - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    begin = max(0, start - _BEFORE)
    shown_old = _window(old, begin, len(old) - tail + _AFTER)
    shown_new = _window(new, begin, len(new) - tail + _AFTER)
    column = len(shown_old[0]) + len(_escape(old[begin:start]))
    return [
        f"{where}: strings differ at character {start + 1} (length {len(old)} -> {len(new)}):",
        f"    - {shown_old[1]}",
        f"    + {shown_new[1]}",
        "      " + " " * column + "^",
    ]


def _window(text: str, begin: int, end: int) -> tuple[str, str]:
    """``text[begin:end]`` escaped, opened by a quote at the string's start or ``...`` where it is cut.

    Returns (the part before the content, for the marker's column; the whole shown piece).
    """
    end = min(len(text), max(end, begin))
    if end - begin > 3 * (_BEFORE + _AFTER):  # a long differing part: enough to see it start
        end = begin + 3 * (_BEFORE + _AFTER)
    opening = "'" if begin == 0 else "..."
    closing = "'" if end >= len(text) else "..."
    body = _escape(text[begin:end])
    return opening, opening + body + closing


def _escape(text: str) -> str:
    """Control characters (tabs, carriage returns) shown as escapes, so the marker column stays right."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
