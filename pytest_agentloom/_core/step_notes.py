"""Trace events from below the engine: a provider (fault injection) notes what it did to the running step.

The run sets :data:`step_notes` to the running step's ``event`` around each step (a context variable, so
steps that run side by side each note to their own); outside a run a note goes nowhere.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

__all__ = ["note", "running_step", "step_notes", "tool_call_place"]

step_notes: contextvars.ContextVar[Callable[..., None] | None] = contextvars.ContextVar(
    "agentloom_step_notes", default=None)


def note(kind: str, **data: Any) -> None:
    """A trace event of ``kind`` on the running step (none outside a run)."""
    sink = step_notes.get()
    if sink is not None:
        sink(kind, **data)


#: The step being run (its id), and the model turn and call id of the tool call being run, if any: what a
#: tool tape names when a tool that ran for real returned something else than it recorded.
running_step: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentloom_running_step", default=None)
tool_call_place: contextvars.ContextVar[tuple[int, str] | None] = contextvars.ContextVar(
    "agentloom_tool_call_place", default=None)
