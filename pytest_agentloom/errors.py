"""Every error pytest-agentloom raises, in one place.

::

    AgentloomError
    ├── WorkflowError          a workflow file is invalid (file, step id, field)
    ├── StepError              a step failed while running (step id, code)
    │   ├── TemplateError      a template could not be rendered
    │   └── ToolError          a tool step's tool failed or is missing
    ├── ProviderError          a provider answered with an error (HTTP status)
    ├── ScriptError            a scripted provider has no reply for a request
    └── ReplayError            a cassette could not be used (pytest_agentloom.replay.errors:
                               missing, unreadable, recording refused, unused interactions;
                               CassetteMismatchError is also a StepError, never retried)
    UsageError                 the Python API was called the wrong way

Messages follow one shape: a headline saying what failed, then context lines
(file, step, field), then a line starting ``How to fix:`` when there is one.
Each error carries a ``code`` that programs and tests can match on.
"""

from __future__ import annotations

__all__ = [
    "AgentloomError",
    "ProviderError",
    "ScriptError",
    "StepError",
    "TemplateError",
    "ToolError",
    "UsageError",
    "WorkflowError",
]


class AgentloomError(Exception):
    """Base class of every error raised while loading or running a workflow."""

    code: str = "error"


class WorkflowError(AgentloomError, ValueError):
    """A workflow file is invalid; raised by the loader before anything runs."""

    code = "invalid_workflow"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        step_id: str | None = None,
        field: str | None = None,
        hint: str | None = None,
        problems: list[WorkflowError] | None = None,
    ) -> None:
        self.headline = message
        self.file = file
        self.step_id = step_id
        self.field = field
        self.hint = hint
        self.problems = problems or []
        super().__init__(self._render())

    def _render(self) -> str:
        lines = [self.headline]
        if self.file:
            lines.append(f"  file: {self.file}")
        if self.step_id:
            lines.append(f"  step: {self.step_id}")
        if self.field:
            lines.append(f"  field: {self.field}")
        if self.hint:
            lines.append(f"How to fix: {self.hint}")
        return "\n".join(lines)


class StepError(AgentloomError):
    """A step failed at run time. ``retryable`` tells the retry loop what to do."""

    code = "step_error"

    def __init__(self, message: str, *, code: str | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.retryable = retryable


class TemplateError(StepError):
    """A template has broken braces or a format spec that does not fit its value."""

    code = "template_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


class ToolError(StepError):
    """A tool step could not run its tool, or the tool raised."""

    code = "tool_error"


class ProviderError(AgentloomError):
    """A provider answered with an error. ``status`` is the HTTP status, if any.

    Errors without a status (a dropped connection, a timeout) are retryable;
    errors with one are retried only when the step's ``retryable_status_codes``
    lists it.
    """

    code = "provider_error"

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None) -> None:
        self.status = status
        self.provider = provider
        self.message = message
        label = f"HTTP {status}" if status is not None else "no status"
        super().__init__(f"provider error ({label}): {message}" if message else f"provider error ({label})")


class ScriptError(AgentloomError):
    """A scripted provider received a request it has no reply for. Never retried."""

    code = "script_exhausted"


class UsageError(AgentloomError, TypeError):
    """The Python API was called with arguments it cannot use."""

    code = "usage_error"
