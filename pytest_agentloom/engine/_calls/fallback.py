"""Falling back to another provider when a model call fails: the ``fallback`` of a step, or ``config.fallbacks``.

A step's call goes to its provider first. When that fails in one of the ways
a fallback names in ``on`` (:func:`failure_kind`), the same request goes to the
fallback's provider with the fallback's model name (never the primary's), and
so on down the list. Each hand-over leaves one ``fallback`` trace event naming
the provider and model that failed, why, and where the call went next.

The chain is one attempt of the step's retry loop: the primary is not retried
before falling back (that is what the fallback is for), and when every
provider tried failed, the step's retry table decides whether to run the
chain again, on an error (``fallbacks_exhausted``) that names each provider
tried, its model and its failure.

Each hand-over is a request of its own through the run's provider (the
gateway, or the cassette around it in a test), so a recording holds the
failed answer and the fallback's, in the order they were sent, and a replay
plays them back in that order.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.types import LLMRequest, LLMResponse
from ...errors import ErrorCode, MidStreamError, ProviderError, StepError
from .._format.fallbacks import primary_provider
from .._format.model import FallbackTarget
from .._outcome.step_context import StepContext
from .refusal import CallModel

__all__ = ["failure_kind", "with_fallbacks"]


def failure_kind(error: BaseException) -> str | None:
    """Which ``on`` kind a failed call is, or ``None`` when no fallback may take it.

    A provider that answered with 429 is ``rate_limit``; 529, or an error body of type
    ``overloaded_error`` (Anthropic's), ``overloaded``; another 5xx ``server_error``; no status
    at all ``timeout`` (the SDK's timeout) or ``connection`` (refused, dropped). Anything else
    (a 4xx, a missing key, a stream that broke after its first chunk, a refusal, a cassette
    miss) would fail the same way elsewhere, or is no provider's failure: no fallback.
    """
    if not isinstance(error, ProviderError) or isinstance(error, MidStreamError) or error.retryable is False:
        return None
    status = error.status
    if status == 529 or (status is not None and status >= 500 and "overloaded" in error.message.lower()):
        return "overloaded"
    if status == 429:
        return "rate_limit"
    if status is not None:
        return "server_error" if status >= 500 else None
    return "timeout" if "timed out" in error.message.lower() or "timeout" in error.message.lower() else "connection"


def with_fallbacks(ctx: StepContext, chain: Sequence[FallbackTarget], call_model: CallModel) -> CallModel:
    """``call_model`` that hands a failed request down ``chain`` (see the module docs); itself when it is empty."""
    if not chain:
        return call_model

    async def call(request: LLMRequest) -> LLMResponse:
        tried: list[tuple[str, str, ProviderError]] = []
        current, position = request, -1
        while True:
            try:
                return await call_model(current)
            except ProviderError as exc:
                kind = failure_kind(exc)
                provider = exc.provider if exc.provider and exc.provider != "gateway" else _provider_of(ctx, current)
                tried.append((provider, current.model, exc))
                following = _next(chain, position, kind)
                if following is None:
                    if len(tried) == 1:
                        raise
                    raise _exhausted(ctx, tried) from exc
                position = following
                target = chain[position]
                ctx.event("fallback", current.attempt, turn=current.turn, provider=provider, model=current.model,
                          reason=kind, error=str(exc), to_provider=target.provider, to_model=target.model)
                current = current.model_copy(update={"provider": target.provider, "model": target.model})

    return call


def _next(chain: Sequence[FallbackTarget], position: int, kind: str | None) -> int | None:
    """The next fallback after ``position`` whose ``on`` takes ``kind``, or ``None``."""
    if kind is None:
        return None
    return next((index for index in range(position + 1, len(chain)) if kind in chain[index].on), None)


def _provider_of(ctx: StepContext, request: LLMRequest) -> str:
    return request.provider or primary_provider(ctx.workflow.config, request.model) or "the gateway"


def _exhausted(ctx: StepContext, tried: list[tuple[str, str, ProviderError]]) -> StepError:
    """One error naming every provider tried, its model and why it failed. It is retried when the last
    failure would be (the step's retry table), so the whole chain runs again as one attempt."""
    parts = [f"{provider} (model {model}): {error}" for provider, model, error in tried]
    last = tried[-1][2]
    step = ctx.workflow.step(ctx.step_id)
    policy = ctx.retry_policy(step.retry)
    retryable = last.retryable is not False and (last.status is None or last.status in policy.retryable_status_codes)
    return StepError(f"{step.type} '{ctx.step_id}': every provider tried failed, in order: " + "; ".join(parts),
                     code=ErrorCode.FALLBACKS_EXHAUSTED, retryable=retryable)
