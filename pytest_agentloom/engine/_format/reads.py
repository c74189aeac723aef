"""Which state paths a step reads, and which of them a resumed run would only see redacted.

A step reads the state through its templates (``{state.x.y}``), the ``state.``
values of its fields and, for a router, its condition expressions. A run
resumed from a checkpoint starts from the checkpoint's redacted state, so a
remaining step that reads a redacted key would get a marker instead of the
value: :func:`redacted_reads` finds those, so resume can warn about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._core.state_paths import parse_path
from ..._redaction.policy import POLICY
from ...errors import AgentloomError
from .._evaluate.templates import template_fields
from .model import AnyStep, RouterStep, Workflow

__all__ = ["redacted_reads", "step_reads"]


def step_reads(step: AnyStep, workflow: Workflow) -> set[str]:
    """Dotted state paths a step reads, from its templates, ``state.`` values and router expressions."""
    found: set[str] = set()

    def add(path_text: str) -> None:
        try:
            segments = parse_path(path_text)
        except ValueError:
            return
        names = [segment for segment in segments if isinstance(segment, str)]
        if names:
            found.add(".".join(names))

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            if value.startswith("state."):
                add(value[len("state."):])
            if "{" not in value:
                return
            try:
                fields = template_fields(value)
            except (AgentloomError, ValueError):
                return
            for name in fields:
                add(name[len("state."):] if name.startswith("state.") else name)

    dumped = step.model_dump(mode="json", exclude={"id", "type", "output", "depends_on", "description"})
    walk(dumped)
    if isinstance(step, RouterStep):
        for compiled in workflow.compiled.conditions.get(step.id, ()):
            found.update(compiled.names())
    return found


def _marker_paths(value: Any, path: str = "") -> set[str]:
    """Dotted paths (list positions dropped) whose value holds a redaction marker."""
    found: set[str] = set()
    if isinstance(value, Mapping):
        for key, item in value.items():
            found |= _marker_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for item in value:
            found |= _marker_paths(item, path)
    elif isinstance(value, str) and POLICY.marker_pattern.search(value) and path:
        found.add(path)
    return found


def redacted_reads(workflow: Workflow, state: Mapping[str, Any], remaining: list[str]) -> list[tuple[str, str]]:
    """``(step id, key)`` for each remaining step that reads a key the state holds redacted."""
    redacted = _marker_paths(state)
    hits = []
    for step_id in remaining:
        for read in sorted(step_reads(workflow.step(step_id), workflow)):
            for path in sorted(redacted):
                if path == read or path.startswith(read + ".") or read.startswith(path + "."):
                    hits.append((step_id, read))
                    break
    return hits
