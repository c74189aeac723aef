"""Differences between two values, one line per path that differs.

Snapshots, cassette mismatches and ``assert a == b`` explanations all show a
change the same way: ``state.answer: 'x' -> 'y'``, ``steps.new: added 1``,
``state.old: removed True``, sorted by path and capped with a last line
``... and N more differences``. deepdiff does the comparing; it is imported
only when there is something to explain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_DIFF_LINES", "path_diff", "render_path"]

MAX_DIFF_LINES = 20
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


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


def _short(value: Any, width: int) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def path_diff(expected: Any, actual: Any, *, root: str = "", limit: int = MAX_DIFF_LINES, width: int = 60) -> list[str]:
    """The paths where ``actual`` differs from ``expected``, sorted, at most ``limit`` lines in all.

    Values longer than ``width`` characters are cut. When more paths differ than fit, the last line
    says how many were left out.
    """
    if expected == actual:
        return []
    from deepdiff import DeepDiff  # imported here: loading the plugin must stay light

    tree = DeepDiff(expected, actual, view="tree", verbose_level=2)
    lines: list[str] = []
    for report, levels in tree.items():
        for level in levels:
            where = render_path(level.path(output_format="list"), root)
            if report in ("values_changed", "type_changes"):
                lines.append(f"{where}: {_short(level.t1, width)} -> {_short(level.t2, width)}")
            elif report.endswith("_added"):
                lines.append(f"{where}: added {_short(level.t2, width)}")
            elif report.endswith("_removed"):
                lines.append(f"{where}: removed {_short(level.t1, width)}")
            else:
                lines.append(f"{where}: {report.replace('_', ' ')}")
    lines.sort()
    if len(lines) > limit:
        rest = len(lines) - limit + 1
        lines = [*lines[: limit - 1], f"... and {rest} more difference{'s' if rest > 1 else ''}"]
    return lines
