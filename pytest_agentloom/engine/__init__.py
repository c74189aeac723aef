"""The AgentLoom workflow engine: load a workflow file, run it, resume it. Imports neither pytest nor SDKs.

The modules behind these names are internal, in rooms (``_entry``, ``_persist``, ``_run``, ``_steps``,
``_calls``, ``_outcome``, ``_format``, ``_evaluate``); see docs/architecture.md: Architecture."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._entry.resume_workflow": ("aresume_workflow", "resume_workflow"),
    "._entry.run_workflow": ("arun_workflow", "run_workflow"),
    "._format.loader": ("load_workflow", "parse_workflow"),
    "._format.model": ("Workflow", "WorkflowConfig"),
    "._outcome.result": ("RunStatus", "StepResult", "StepStatus", "TerminationReason", "WorkflowResult"),
    "._outcome.trace": ("Trace", "TraceEvent"),
    "._persist.checkpoints": ("CheckpointError",),
    ".._core.clock": ("Clock", "SystemClock", "VirtualClock", "current_clock", "derived_run_id", "random_run_id"),
    ".._redaction.expected": ("redacted",),
    ".._redaction.redactor": ("Redactor",),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from .._core.clock import Clock as Clock
    from .._core.clock import SystemClock as SystemClock
    from .._core.clock import VirtualClock as VirtualClock
    from .._core.clock import current_clock as current_clock
    from .._core.clock import derived_run_id as derived_run_id
    from .._core.clock import random_run_id as random_run_id
    from .._redaction.expected import redacted as redacted
    from .._redaction.redactor import Redactor as Redactor
    from ._entry.resume_workflow import aresume_workflow as aresume_workflow
    from ._entry.resume_workflow import resume_workflow as resume_workflow
    from ._entry.run_workflow import arun_workflow as arun_workflow
    from ._entry.run_workflow import run_workflow as run_workflow
    from ._format.loader import load_workflow as load_workflow
    from ._format.loader import parse_workflow as parse_workflow
    from ._format.model import Workflow as Workflow
    from ._format.model import WorkflowConfig as WorkflowConfig
    from ._outcome.result import RunStatus as RunStatus
    from ._outcome.result import StepResult as StepResult
    from ._outcome.result import StepStatus as StepStatus
    from ._outcome.result import TerminationReason as TerminationReason
    from ._outcome.result import WorkflowResult as WorkflowResult
    from ._outcome.trace import Trace as Trace
    from ._outcome.trace import TraceEvent as TraceEvent
    from ._persist.checkpoints import CheckpointError as CheckpointError
