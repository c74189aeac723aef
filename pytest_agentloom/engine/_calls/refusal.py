"""A model's refusal ends the step (docs/providers.md: Refusals): it is never an empty success, a retry or a re-ask.

Every model call of ``llm_call`` (plain, tool loop, structured) and of an agent
goes through :func:`refusals_raise`. A reply with ``refusal`` set (or
``finish_reason: refusal``) is counted and traced like any call, with the
refusal text on its ``provider_call`` event, then raised as
:class:`~pytest_agentloom.errors.ModelRefused`: the retry loop passes it
through untouched, so the step fails with ``error_code: refused`` and
``finish_reason: refusal`` (or, for an ``llm_call`` with ``on_refusal:
output``, succeeds with the refusal text as its output).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..._core.types import LLMRequest, LLMResponse
from ...errors import ModelRefused, render_message
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext

__all__ = ["CallModel", "is_refusal", "refusal_error", "refusals_raise"]

CallModel = Callable[[LLMRequest], Awaitable[LLMResponse]]


def is_refusal(response: LLMResponse) -> bool:
    return response.refusal is not None or response.finish_reason == "refusal"


def refusals_raise(ctx: StepContext, call_model: CallModel) -> CallModel:
    """``call_model`` that raises :class:`ModelRefused` (after counting the call) instead of returning a refusal."""

    async def call(request: LLMRequest) -> LLMResponse:
        response = await call_model(request)
        if not is_refusal(response):
            return response
        raise refusal_error(ctx, request, response)

    return call


def refusal_error(ctx: StepContext, request: LLMRequest, response: LLMResponse) -> ModelRefused:
    """Count and trace a refused call; the error that ends the step."""
    model = response.model or request.model
    cost = response.cost if response.cost is not None else cost_of(model, response.usage)
    ctx.usage = ctx.usage + response.usage  # a refusal is billed like any answer
    ctx.cost_usd += cost or 0.0
    text = response.refusal or ""
    ctx.event(
        "provider_call", request.attempt, turn=request.turn, model=model, provider=response.provider,
        input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
        reasoning_tokens=response.usage.reasoning_tokens, **response.usage.cache_counts(),
        finish_reason="refusal", refusal=text, cost_usd=cost or 0.0, priced=cost is not None,
    )
    kind = ctx.workflow.step(ctx.step_id).type
    shown = f": {text!r}" if text else " (it gave no reason)"
    message = (render_message(
            f"{kind} '{ctx.step_id}': model '{model}' refused to answer{shown}. Not retried: the same request "
            "would be refused again.",
            hint="change the prompt, or set 'on_refusal: output' on the "
                 "llm_call to keep the refusal text as the step's output.", inline=True))
    return ModelRefused(message, refusal=text, usage=ctx.usage, cost_usd=round(ctx.cost_usd, 10))
