"""The AgentLoom workflow engine: models, loader, templates, runner. Imports neither pytest nor SDKs."""

from .checkpoints import CheckpointError, aresume_workflow, resume_workflow
from .clock import Clock, SystemClock, VirtualClock, derived_run_id, random_run_id
from .loader import load_workflow, parse_workflow
from .model import Workflow, WorkflowConfig
from .redaction import Redactor
from .result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
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
