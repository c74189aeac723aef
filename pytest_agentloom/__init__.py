"""pytest-agentloom: test AgentLoom workflows with a deterministic engine and scripted providers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import attach

if TYPE_CHECKING:
    from .engine import (
        RunStatus,
        StepResult,
        StepStatus,
        SystemClock,
        TerminationReason,
        Trace,
        TraceEvent,
        VirtualClock,
        Workflow,
        WorkflowResult,
        aresume_workflow,
        arun_workflow,
        load_workflow,
        resume_workflow,
        run_workflow,
    )
    from .errors import (
        AgentloomError,
        MissingTemplateKeyWarning,
        ProviderError,
        ScriptError,
        StepError,
        TemplateError,
        ToolError,
        UsageError,
        WorkflowError,
    )
    from .providers import LLMRequest, LLMResponse, Scripted, embedding, error, reply, tool_call
    from .testing.checks import assert_contains, assert_json_schema, assert_matches, assert_similar, similarity
    from .testing.judge import Verdict
    from .tools import BaseTool, Tool, ToolRegistry, tool

__version__ = "0.1.0"

__all__ = [
    "AgentloomError",
    "BaseTool",
    "LLMRequest",
    "LLMResponse",
    "MissingTemplateKeyWarning",
    "ProviderError",
    "RunStatus",
    "ScriptError",
    "Scripted",
    "StepError",
    "StepResult",
    "StepStatus",
    "SystemClock",
    "TemplateError",
    "TerminationReason",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "Trace",
    "TraceEvent",
    "UsageError",
    "Verdict",
    "VirtualClock",
    "Workflow",
    "WorkflowError",
    "WorkflowResult",
    "__version__",
    "aresume_workflow",
    "arun_workflow",
    "assert_contains",
    "assert_json_schema",
    "assert_matches",
    "assert_similar",
    "embedding",
    "error",
    "load_workflow",
    "reply",
    "resume_workflow",
    "run_workflow",
    "similarity",
    "tool",
    "tool_call",
]

_EXPORTS = {
    "RunStatus": ".engine",
    "StepResult": ".engine",
    "StepStatus": ".engine",
    "SystemClock": ".engine",
    "TerminationReason": ".engine",
    "Trace": ".engine",
    "TraceEvent": ".engine",
    "VirtualClock": ".engine",
    "Workflow": ".engine",
    "WorkflowResult": ".engine",
    "aresume_workflow": ".engine",
    "arun_workflow": ".engine",
    "load_workflow": ".engine",
    "resume_workflow": ".engine",
    "run_workflow": ".engine",
    "AgentloomError": ".errors",
    "MissingTemplateKeyWarning": ".errors",
    "ProviderError": ".errors",
    "ScriptError": ".errors",
    "StepError": ".errors",
    "TemplateError": ".errors",
    "ToolError": ".errors",
    "UsageError": ".errors",
    "WorkflowError": ".errors",
    "LLMRequest": ".providers",
    "LLMResponse": ".providers",
    "Scripted": ".providers",
    "error": ".providers",
    "reply": ".providers",
    "embedding": ".providers",
    "tool_call": ".providers",
    "BaseTool": ".tools",
    "Tool": ".tools",
    "ToolRegistry": ".tools",
    "tool": ".tools",
    "Verdict": ".testing.judge",
    "assert_contains": ".testing.checks",
    "assert_json_schema": ".testing.checks",
    "assert_matches": ".testing.checks",
    "assert_similar": ".testing.checks",
    "similarity": ".testing.checks",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
