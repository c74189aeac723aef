"""What every step implementation receives, and what it hands back to the runner.

A step never writes to the state itself: it returns a :class:`StepOutcome`
and the runner applies the writes of a whole layer in file order. That is what
makes concurrent steps deterministic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...core.clock import Clock
from ...core.types import Provider, Usage
from ...errors import AgentloomError, ProviderError, ScriptError, StepError
from ..model import RetryPolicy, Workflow
from ..templates import missing_key_message

__all__ = ["StepContext", "StepOutcome", "ToolFunction", "classify_call_failure"]

log = logging.getLogger("pytest_agentloom.templates")
ToolFunction = Callable[..., Any]
T = TypeVar("T")


@dataclass
class StepOutcome:
    """A successful step's result: the value for ``output`` and what it cost."""

    value: Any
    attempts: int = 1
    writes: dict[str, Any] = field(default_factory=dict)  # more state paths to write with output (a conversation)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    model: str | None = None
    provider: str | None = None
    chosen: str | None = None  # routers only: the target they picked
    raw: str | None = None  # structured output: the reply as written, for steps.<id>.output
    reasoning_content: str | None = None  # llm_call with thinking.capture_reasoning: the model's reasoning text
    time_to_first_token: float | None = None  # a streamed llm_call: seconds on the step's clock to the first text


@dataclass
class StepContext:
    """The world as one step sees it: a read-only state snapshot and its own clock."""

    workflow: Workflow
    state: Mapping[str, Any]
    clock: Clock
    provider: Provider | None
    tools: Mapping[str, ToolFunction]
    step_id: str
    events: list[tuple[float, str, str | None, int | None, dict[str, Any]]] = field(default_factory=list)
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0

    def event(self, kind: str, attempt: int | None = None, **data: Any) -> None:
        """Buffer a trace event; the runner merges buffers in file order."""
        self.events.append((self.clock.now(), kind, self.step_id, attempt, data))

    def missing_key(self, name: str) -> None:
        """Template callback: a ``{state.x}`` that the state lacks renders empty and is reported."""
        message = missing_key_message(name)
        log.warning(message)
        self.event("template_warning", field=name, message=message)

    def retry_policy(self, own: RetryPolicy | None) -> RetryPolicy:
        return own or self.workflow.config.retry or RetryPolicy()

    async def within(self, timeout: float | None, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call`` under the step's ``timeout`` on this step's clock.

        With a real clock the call is cancelled at the deadline. With a virtual
        clock nothing real can be cancelled, so a call whose virtual duration
        went past the deadline counts as timed out once it returns.
        """
        if timeout is None:
            return await call()
        started = self.clock.now()
        try:
            if self.clock.is_virtual:
                result = await call()
            else:
                result = await asyncio.wait_for(call(), timeout)
        except TimeoutError:
            raise StepError(f"timed out after {timeout:g}s", code="timeout", retryable=True) from None
        if self.clock.now() - started > timeout:
            raise StepError(f"timed out after {timeout:g}s", code="timeout", retryable=True)
        return result


def classify_call_failure(exc: Exception, policy: RetryPolicy, provider: object) -> tuple[Exception, bool]:
    """``(error, retryable)`` for a failed model call, per the retry table of 003.

    Failures that must never be retried are raised instead: an exhausted script,
    our own errors (a cassette mismatch keeps its code), and any other exception,
    which is a bug in the provider or in a scripted callable (``provider_crashed``).
    """
    if isinstance(exc, ScriptError):
        raise StepError(str(exc), code="script_exhausted") from exc
    if isinstance(exc, ProviderError):
        return exc, exc.status is None or exc.status in policy.retryable_status_codes
    if isinstance(exc, StepError):
        return exc, exc.retryable
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return exc, True
    if isinstance(exc, AgentloomError):
        raise exc
    raise StepError(
        f"provider {type(provider).__name__} raised {type(exc).__name__}: {exc} (not retried; this is a bug in the "
        "provider or in a scripted callable, not a provider error)", code="provider_crashed",
    ) from exc
