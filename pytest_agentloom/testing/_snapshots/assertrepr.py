"""Focused explanations for ``assert result_a == result_b`` and ``assert state == expected``.

Called from ``pytest_assertrepr_compare``: instead of two long reprs, the
explanation lists the places that differ, rendered by :mod:`..._core.diffs` (the
renderer of snapshot and cassette messages too); ``-vv`` shows them all.
"""

from __future__ import annotations

from typing import Any

from ..._core.diffs import diff_report
from ...engine._outcome.result import WorkflowResult
from .compare import snapshot_data
from .shape import output_notes

__all__ = ["explain_comparison"]


def explain_comparison(op: str, left: Any, right: Any, *, verbose: int = 0) -> list[str] | None:
    """Lines for pytest to show, or ``None`` to leave the comparison to pytest."""
    if op != "==":
        return None
    if isinstance(left, WorkflowResult) and isinstance(right, WorkflowResult):
        left_data, right_data = snapshot_data(left), snapshot_data(right)
        notes = {**output_notes(left_data), **output_notes(right_data)}
        report = diff_report(left_data, right_data, verbose=verbose, notes=notes)
        head = f"{left!r} == {right!r}"
        return [head, f"The runs differ in {_count(report.count)} (left -> right):",
                *[f"  {line}" for line in report.lines]]
    if isinstance(left, dict) and isinstance(right, dict) and _looks_like_state(left, right):
        report = diff_report(left, right, verbose=verbose)
        head = f"{_brief(left)} == {_brief(right)}"
        return [head, f"The states differ in {_count(report.count)} (left -> right):",
                *[f"  {line}" for line in report.lines]]
    return None


def _looks_like_state(left: dict[str, Any], right: dict[str, Any]) -> bool:
    """A run's final state holds ``steps`` (what the engine writes per step); any other dict keeps pytest's diff.

    The plugin is loaded in every test of a project, so plain dicts, nested or not, are left alone.
    """
    return any(isinstance(side.get("steps"), dict) for side in (left, right))


def _brief(value: dict[str, Any]) -> str:
    keys = ", ".join(repr(key) for key in list(value)[:3])
    more = ", ..." if len(value) > 3 else ""
    return f"{{{keys}{more}: ...}}"


def _count(total: int) -> str:
    return f"{total} place{'s' if total != 1 else ''}"
