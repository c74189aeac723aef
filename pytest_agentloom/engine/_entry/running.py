"""The run whose steps are under way in this task, for what wraps its provider.

A cassette scrubs the run's redacted values from what it records, so it must know them before the
first request. The ``agentloom`` fixture tells it (``CassetteSession.add_run``); a session built by
hand around a provider (``cassette.wrap(provider)``, then ``run_workflow(...)``) would not, and would
write them. So each run sets :data:`running_workflow` while it executes, and the cassette's provider
notes the run it finds there before its first call of that run: no caller can forget it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .._format.model import Workflow

__all__ = ["RunningWorkflow", "running_workflow"]


@dataclass(frozen=True)
class RunningWorkflow:
    """A run under way: its id, its workflow and the state it started from (before any step wrote)."""

    run_id: str
    workflow: Workflow
    state: Mapping[str, Any]


#: the run executing in this task (a subworkflow's child runs inside its parent's): ``None`` outside runs
running_workflow: ContextVar[RunningWorkflow | None] = ContextVar("agentloom_running_workflow", default=None)
