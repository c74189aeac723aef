"""pytest-agentloom: test AgentLoom workflows with a deterministic engine and scripted providers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import attach

__version__ = "0.1.0"

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    ".engine": (
        "RunStatus", "StepResult", "StepStatus", "SystemClock", "TerminationReason", "Trace", "TraceEvent",
        "VirtualClock", "Workflow", "WorkflowResult", "aresume_workflow", "arun_workflow", "current_clock",
        "load_workflow", "redacted", "resume_workflow", "run_workflow",
    ),
    ".errors": (
        "AgentloomError", "DataFileError", "DefinitionError", "JudgeError", "MissingTemplateKeyWarning",
        "OutcomeError", "ProviderError", "ReplayError", "RunError", "ScriptError", "StepError", "TemplateError",
        "ToolError", "UnreadDecisionWarning", "UsageError", "VerdictStaleError", "WorkflowError",
    ),
    ".providers": ("LLMRequest", "LLMResponse", "Scripted", "embedding", "error", "reply", "tool_call"),
    ".testing": ("Verdict", "assert_contains", "assert_json_schema", "assert_matches", "assert_similar", "similarity"),
    ".tools": ("BaseTool", "Tool", "ToolRegistry", "tool"),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, own=("__version__",))

if TYPE_CHECKING:
    from .engine import RunStatus as RunStatus
    from .engine import StepResult as StepResult
    from .engine import StepStatus as StepStatus
    from .engine import SystemClock as SystemClock
    from .engine import TerminationReason as TerminationReason
    from .engine import Trace as Trace
    from .engine import TraceEvent as TraceEvent
    from .engine import VirtualClock as VirtualClock
    from .engine import Workflow as Workflow
    from .engine import WorkflowResult as WorkflowResult
    from .engine import aresume_workflow as aresume_workflow
    from .engine import arun_workflow as arun_workflow
    from .engine import current_clock as current_clock
    from .engine import load_workflow as load_workflow
    from .engine import redacted as redacted
    from .engine import resume_workflow as resume_workflow
    from .engine import run_workflow as run_workflow
    from .errors import AgentloomError as AgentloomError
    from .errors import DataFileError as DataFileError
    from .errors import DefinitionError as DefinitionError
    from .errors import JudgeError as JudgeError
    from .errors import MissingTemplateKeyWarning as MissingTemplateKeyWarning
    from .errors import OutcomeError as OutcomeError
    from .errors import ProviderError as ProviderError
    from .errors import ReplayError as ReplayError
    from .errors import RunError as RunError
    from .errors import ScriptError as ScriptError
    from .errors import StepError as StepError
    from .errors import TemplateError as TemplateError
    from .errors import ToolError as ToolError
    from .errors import UnreadDecisionWarning as UnreadDecisionWarning
    from .errors import UsageError as UsageError
    from .errors import VerdictStaleError as VerdictStaleError
    from .errors import WorkflowError as WorkflowError
    from .providers import LLMRequest as LLMRequest
    from .providers import LLMResponse as LLMResponse
    from .providers import Scripted as Scripted
    from .providers import embedding as embedding
    from .providers import error as error
    from .providers import reply as reply
    from .providers import tool_call as tool_call
    from .testing import Verdict as Verdict
    from .testing import assert_contains as assert_contains
    from .testing import assert_json_schema as assert_json_schema
    from .testing import assert_matches as assert_matches
    from .testing import assert_similar as assert_similar
    from .testing import similarity as similarity
    from .tools import BaseTool as BaseTool
    from .tools import Tool as Tool
    from .tools import ToolRegistry as ToolRegistry
    from .tools import tool as tool
