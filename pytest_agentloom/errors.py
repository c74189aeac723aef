"""Every error pytest-agentloom raises, in one place.

::

    AgentloomError
    ├── WorkflowError (ValueError)       a workflow file is invalid (file, step id, field)
    ├── ScenarioTableError (ValueError)  a scenario table is invalid (file, row, field)
    ├── MarkerError (ValueError)         an agentloom marker has an argument it does not take
    ├── StepError                        a step failed while running (step id, code)
    │   ├── TemplateError                a template could not be rendered
    │   ├── ToolError                    a tool step's tool failed or is missing
    │   │   └── SandboxRefusal           a built-in tool's call broke a config.sandbox rule
    │   └── CassetteMismatchError        a request is not in the cassette (also a ReplayError; never retried)
    ├── ProviderError                    a provider answered with an error (HTTP status)
    │   ├── MidStreamError               a stream broke after its first chunk: no fallback
    │   └── AttachmentRefused            a provider cannot take an attachment; nothing was sent
    ├── ScriptError                      a scripted provider has no reply for a request
    ├── ReplayError                      a cassette could not be used (path)
    │   ├── CassetteNotFoundError        replay asked for a cassette that does not exist
    │   ├── CassetteFormatError          a cassette file is unreadable or from an unknown format
    │   ├── RecordingRefusedError        recording asked for under CI=true, but not explicitly
    │   └── UnusedInteractionsError      the replay left recorded interactions unused
    ├── ToolReplayMissError              a tool call the tool tape has no recording for
    └── UsageError (TypeError)           the Python API was called the wrong way

Messages follow one shape, written by :func:`render_message`: a headline saying
what failed, then context lines (file, step, field), then a line starting
``How to fix:`` when there is one. Each error carries a ``code`` that programs
and tests can match on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AgentloomError",
    "AttachmentRefused",
    "CassetteFormatError",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "MarkerError",
    "MidStreamError",
    "ProviderError",
    "RecordingRefusedError",
    "ReplayError",
    "SandboxRefusal",
    "ScenarioTableError",
    "ScriptError",
    "StepError",
    "TemplateError",
    "ToolError",
    "ToolReplayMissError",
    "UnusedInteractionsError",
    "UsageError",
    "WorkflowError",
    "render_message",
]


def render_message(headline: str, context: Sequence[tuple[str, object]] = (), hint: str | None = None,
                   details: Sequence[str] = ()) -> str:
    """Headline, ``  name: value`` context lines, indented details, then ``How to fix:``."""
    lines = [headline]
    lines.extend(f"  {name}: {value}" for name, value in context if value is not None and value != "")
    lines.extend(details)
    if hint:
        lines.append(f"How to fix: {hint}")
    return "\n".join(lines)


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


class ScenarioTableError(AgentloomError, ValueError):
    """A scenario table cannot be used; names the file (and line), the row and the field, at collection."""

    code = "invalid_scenario_table"

    def __init__(self, message: str, *, file: Path, row: str | None = None, field: str | None = None,
                 line: int | None = None, hint: str | None = None) -> None:
        self.file, self.row, self.field, self.line = file, row, field, line
        where = f"{file}:{line}" if line else str(file)
        super().__init__(render_message(f"Invalid scenario table: {message}",
                                        [("file", where), ("row", row), ("field", field)], hint=hint))


class MarkerError(AgentloomError, ValueError):
    """An ``agentloom`` marker has an argument it does not take; fails the test that carries it."""

    code = "invalid_marker"


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


class SandboxRefusal(ToolError):
    """A built-in tool's call broke a sandbox rule; ``rule`` is the ``config.sandbox`` setting."""

    code = "sandbox_refused"

    def __init__(self, tool: str, rule: str, why: str, fix: str) -> None:
        self.tool = tool
        self.rule = rule
        super().__init__(f"sandbox refused {tool}: rule '{rule}': {why}. How to fix: {fix}", code=self.code)


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


class MidStreamError(ProviderError):
    """A stream broke after its first chunk: the gateway must not fall back to another provider."""

    code = "provider_stream_error"


class AttachmentRefused(ProviderError):
    """A provider can't take one of a request's attachments; raised before any request is sent.

    The gateway moves on to the model's next provider; the step fails without a retry when none can take it.
    """

    code = "attachment_unsupported"


class ScriptError(AgentloomError):
    """A scripted provider received a request it has no reply for. Never retried."""

    code = "script_exhausted"


class UsageError(AgentloomError, TypeError):
    """The Python API was called with arguments it cannot use."""

    code = "usage_error"


class ReplayError(AgentloomError):
    """A cassette could not be used as asked; ``path`` is the cassette's file."""

    code = "replay_error"

    def __init__(self, message: str, *, path: str | None = None, headline: str | None = None) -> None:
        self.path = path
        self.headline = headline or message.splitlines()[0]
        super().__init__(message)


class CassetteNotFoundError(ReplayError):
    """Replay (the default) needs a cassette, and the test has none yet."""

    code = "cassette_not_found"


class CassetteFormatError(ReplayError):
    """The cassette file cannot be read: broken YAML, missing keys, or a ``format_version`` we don't know."""

    code = "cassette_format"


class RecordingRefusedError(ReplayError):
    """Recording was asked for under ``CI=true`` without the flag on the command line itself."""

    code = "recording_refused"


class UnusedInteractionsError(ReplayError, AssertionError):
    """The test finished without replaying every interaction of its cassette."""

    code = "unused_interactions"


class CassetteMismatchError(StepError, ReplayError):
    """A request that the cassette has no unused recording for. Fails the step; never retried."""

    code = "cassette_mismatch"

    def __init__(self, message: str, *, reason: str, path: str | None = None, step_id: str | None = None,
                 turn: int | None = None) -> None:
        self.reason = reason
        self.step_id = step_id
        self.turn = turn
        self.path = path
        self.headline = message.splitlines()[0]
        StepError.__init__(self, message, code=self.code, retryable=False)


class ToolReplayMissError(AgentloomError):
    """A tool with side effects was called during replay with arguments the recording doesn't have.

    It fails the step like an unmatched model request; it is not handed to the model as a tool error.
    """

    code = "tool_replay_miss"
