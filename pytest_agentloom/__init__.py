"""pytest-agentloom: test AgentLoom workflows with a deterministic engine and scripted providers."""

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
    arun_workflow,
    load_workflow,
    run_workflow,
)
from .errors import (
    AgentloomError,
    ProviderError,
    ScriptError,
    StepError,
    TemplateError,
    ToolError,
    UsageError,
    WorkflowError,
)
from .providers import LLMRequest, LLMResponse, Scripted, error, reply, tool_call

__version__ = "0.1.0"

__all__ = [
    "AgentloomError",
    "LLMRequest",
    "LLMResponse",
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
    "ToolError",
    "Trace",
    "TraceEvent",
    "UsageError",
    "VirtualClock",
    "Workflow",
    "WorkflowError",
    "WorkflowResult",
    "__version__",
    "arun_workflow",
    "error",
    "load_workflow",
    "reply",
    "run_workflow",
    "tool_call",
]
