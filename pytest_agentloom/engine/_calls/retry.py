"""Retrying a failed model call: one loop for ``llm_call``, ``embed`` and each agent turn.

The retry table (the ``retry`` policy of a step, else ``config.retry``):

- a provider error whose HTTP status is in ``retryable_status_codes`` (429,
  500, 502, 503, 504 by default), or one with no status at all (a dropped
  connection, a timeout), is retried after a backoff on the step's clock;
- any other status, and a provider error that says it is final (a missing API
  key), fails at once;
- failures that are no provider's answer are never retried: a scripted
  provider with no reply left (``script_exhausted``), our own errors (a
  cassette mismatch keeps its code), an attachment no provider of the model
  can take (``attachment_unsupported``), a model's refusal (``refused``), and
  any other exception, which is a bug in the provider or a scripted callable
  (``provider_crashed``).

Each retry leaves one ``retry`` trace event (attempt, error, status, delay).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from ..._core.types import AttachmentRefused
from ...errors import STEP_FAILURES, AgentloomError, ModelRefused, ProviderError, ScriptError, StepError
from .._format.model import RetryPolicy
from .._outcome.step_context import StepContext

__all__ = ["GiveUp", "call_with_retries", "classify_call_failure", "gave_up"]

T = TypeVar("T")


class GiveUp(Protocol):
    """Builds the step's error once a call can't or won't be retried any more."""

    def __call__(self, error: Exception, attempt: int, policy: RetryPolicy, retryable: bool) -> StepError: ...


def gave_up(error: Exception, attempt: int, policy: RetryPolicy, retryable: bool) -> StepError:
    """The usual final error: the provider's, and whether it was final or the retries ran out.

    A provider error that says it is final (``retryable is False``: a missing key, an answer the SDK
    refused) keeps its own code, which names the fix; other provider errors are ``provider_error``.
    """
    if isinstance(error, ProviderError):
        code = error.code if error.retryable is False else "provider_error"
    else:
        code = getattr(error, "code", "provider_error")
    if not retryable:
        return StepError(_noted(str(error), f"(not retryable, attempt {attempt})"), code=code)
    retries = "retry" if policy.max_retries == 1 else "retries"
    return StepError(_noted(str(error), f"(gave up after {attempt} attempts: {policy.max_retries} {retries})"),
                     code=code)


def _noted(message: str, note: str) -> str:
    """``note`` after the headline of ``message``: its last line may be a command to copy, kept whole."""
    headline, newline, rest = message.partition("\n")
    return f"{headline} {note}{newline}{rest}"


def classify_call_failure(exc: Exception, policy: RetryPolicy, ctx: StepContext) -> tuple[Exception, bool]:
    """``(error, retryable)`` for a failed model call, per the table above.

    Failures that must never be retried and need no more words are raised instead.
    """
    if isinstance(exc, ScriptError):
        raise StepError(str(exc), code="script_exhausted") from exc
    if isinstance(exc, ModelRefused):  # an answer, not a failed call: the same request is refused again
        raise exc
    if isinstance(exc, AttachmentRefused):  # no provider for the model can take it: nothing was sent
        kind = ctx.workflow.step(ctx.step_id).type
        raise StepError(f"{kind} '{ctx.step_id}': {exc}", code="attachment_unsupported") from exc
    if isinstance(exc, ProviderError):
        final = getattr(exc, "retryable", None) is False
        return exc, not final and (exc.status is None or exc.status in policy.retryable_status_codes)
    if isinstance(exc, STEP_FAILURES):  # a step's own error, or a cassette mismatch: never retried
        return exc, exc.retryable
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return exc, True
    if isinstance(exc, AgentloomError):
        raise exc
    raise StepError(
        f"provider {type(ctx.provider).__name__} raised {type(exc).__name__}: {exc} (not retried; this is a bug in "
        "the provider or in a scripted callable, not a provider error)", code="provider_crashed",
    ) from exc


async def call_with_retries(
    ctx: StepContext,
    policy: RetryPolicy,
    timeout: float | None,
    call: Callable[[int], Awaitable[T]],
    *,
    give_up: GiveUp = gave_up,
) -> tuple[T, int]:
    """``call(attempt)`` under ``timeout``, retried per ``policy``; the answer and the attempt that gave it."""
    for attempt in range(1, policy.max_retries + 2):
        if attempt > ctx.attempts:
            ctx.attempts = attempt
        try:
            if timeout is None:  # the usual case, without the timeout's wrapper
                return await call(attempt), attempt
            return await ctx.within(timeout, functools.partial(call, attempt)), attempt
        except Exception as exc:
            error, retryable = classify_call_failure(exc, policy, ctx)
        if not retryable or attempt > policy.max_retries:
            raise give_up(error, attempt, policy, retryable) from error
        delay = policy.delay(attempt)
        ctx.event("retry", attempt, error=str(error), status=getattr(error, "status", None), delay=delay)
        await ctx.clock.sleep(delay)
    raise AssertionError("unreachable")
