"""The AgentLoom workflow engine: models, loader, templates, runner. Imports neither pytest nor SDKs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from .._core.clock import Clock, SystemClock, VirtualClock, derived_run_id, random_run_id
    from .._redaction.redactor import Redactor
    from ._entry.resume_workflow import aresume_workflow, resume_workflow
    from ._entry.run_workflow import arun_workflow, run_workflow
    from ._format.loader import load_workflow, parse_workflow
    from ._format.model import Workflow, WorkflowConfig
    from ._outcome.result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
    from ._outcome.trace import Trace, TraceEvent
    from ._persist.checkpoints import CheckpointError

__all__ = [
    "CheckpointError",
    "Clock",
    "Redactor",
    "RunStatus",
    "StepResult",
    "StepStatus",
    "SystemClock",
    "TerminationReason",
    "Trace",
    "TraceEvent",
    "VirtualClock",
    "Workflow",
    "WorkflowConfig",
    "WorkflowResult",
    "aresume_workflow",
    "arun_workflow",
    "derived_run_id",
    "load_workflow",
    "parse_workflow",
    "random_run_id",
    "resume_workflow",
    "run_workflow",
]

_EXPORTS = {
    "CheckpointError": "._persist.checkpoints",
    "aresume_workflow": "._entry.resume_workflow",
    "resume_workflow": "._entry.resume_workflow",
    "Clock": ".._core.clock",
    "SystemClock": ".._core.clock",
    "VirtualClock": ".._core.clock",
    "derived_run_id": ".._core.clock",
    "random_run_id": ".._core.clock",
    "load_workflow": "._format.loader",
    "parse_workflow": "._format.loader",
    "Workflow": "._format.model",
    "WorkflowConfig": "._format.model",
    "Redactor": ".._redaction.redactor",
    "RunStatus": "._outcome.result",
    "StepResult": "._outcome.result",
    "StepStatus": "._outcome.result",
    "TerminationReason": "._outcome.result",
    "WorkflowResult": "._outcome.result",
    "arun_workflow": "._entry.run_workflow",
    "run_workflow": "._entry.run_workflow",
    "Trace": "._outcome.trace",
    "TraceEvent": "._outcome.trace",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
