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
    "VirtualClock",
    "Workflow",
    "WorkflowError",
    "WorkflowResult",
    "__version__",
    "aresume_workflow",
    "arun_workflow",
    "embedding",
    "error",
    "load_workflow",
    "reply",
    "resume_workflow",
    "run_workflow",
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
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
