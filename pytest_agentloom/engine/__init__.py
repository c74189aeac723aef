"""The AgentLoom workflow engine: models, loader, templates, runner. Imports neither pytest nor SDKs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ..core.clock import Clock, SystemClock, VirtualClock, derived_run_id, random_run_id
    from .checkpoints import CheckpointError
    from .loader import load_workflow, parse_workflow
    from .model import Workflow, WorkflowConfig
    from .redaction import Redactor
    from .result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
    from .resume import aresume_workflow, resume_workflow
    from .runner import arun_workflow, run_workflow
    from .trace import Trace, TraceEvent

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
    "CheckpointError": ".checkpoints",
    "aresume_workflow": ".resume",
    "resume_workflow": ".resume",
    "Clock": "..core.clock",
    "SystemClock": "..core.clock",
    "VirtualClock": "..core.clock",
    "derived_run_id": "..core.clock",
    "random_run_id": "..core.clock",
    "load_workflow": ".loader",
    "parse_workflow": ".loader",
    "Workflow": ".model",
    "WorkflowConfig": ".model",
    "Redactor": ".redaction",
    "RunStatus": ".result",
    "StepResult": ".result",
    "StepStatus": ".result",
    "TerminationReason": ".result",
    "WorkflowResult": ".result",
    "arun_workflow": ".runner",
    "run_workflow": ".runner",
    "Trace": ".trace",
    "TraceEvent": ".trace",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
