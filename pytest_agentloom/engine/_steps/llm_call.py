"""The ``llm_call`` step: render the prompt, call the model, retry what the retry table says to retry.

One attempt is a plain call, a whole tool loop (:mod:`.._calls.tool_loop`) or a
structured reply with its re-asks (:mod:`.._calls.structured`); the attempts are
driven by :func:`.._calls.retry.call_with_retries`. Conversations, attachments and
streaming are handled around the attempts.

The tool loop, structured replies and attachments are imported only for a workflow
that has a step using them (:func:`prepare`, which the run calls before its first
step): most ``llm_call`` steps make one plain call and never need them.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from ..._core.clock import Clock
from ..._core.types import LLMRequest, LLMResponse, Message, text_listener
from ...errors import ModelRefused, StepError, render_message
from .._calls.conversation import Turn, close_turn, open_turn
from .._calls.fallback import with_fallbacks
from .._calls.refusal import CallModel, is_refusal, refusal_error, refusals_raise
from .._calls.retry import call_with_retries
from .._evaluate.templates import render
from .._format.fallbacks import fallbacks_of
from .._format.model import LLMCallStep, RetryPolicy
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext, StepOutcome

__all__ = ["prepare", "run_llm_call"]


def prepare(step: LLMCallStep) -> None:
    """Import the helpers ``step`` will need, so that a broken install fails before the run's first step."""
    if step.tools or step.response_schema is not None:  # as _attempt_call imports them
        from .._calls import structured  # noqa: F401
    if step.tools:
        from .._calls import tool_loop  # noqa: F401
    if step.attachments:
        from .._calls import attachments  # noqa: F401


async def run_llm_call(step: LLMCallStep, ctx: StepContext) -> StepOutcome:
    model = _checked_model(step, ctx)
    turn = None
    if step.conversation is not None:  # conversations: the stored turns, trimmed, are the messages sent
        turn = await open_turn(step, ctx, model)
    request = _build_request(step, ctx, model, turn.messages if turn is not None else None)
    if step.attachments and step.prompt is not None:  # with this step's user turn only, never stored
        request = await _attach(step, ctx, request)
    wants_stream = request.stream  # a step with tools still sends its answer to the stream, in one piece
    if ctx.workflow.config.capture_prompts:  # redacted on the way out, like every other trace field
        ctx.event("prompt", messages=[message.to_dict() for message in request.messages])
    policy = ctx.retry_policy(step.retry)
    attempt_call = _attempt_call(step, ctx, request, policy)
    watched = _Watched(ctx.clock, attempt_call) if wants_stream else None
    try:
        response, attempt = await call_with_retries(ctx, policy, step.timeout, watched or attempt_call)
    except ModelRefused as refused:
        if step.on_refusal != "output":
            raise
        return _refusal_as_output(ctx, refused, model, turn)
    watch = watched.last if watched is not None else None  # the watch of the attempt that answered
    ttft = watch.seconds() if watch is not None and not step.tools else None  # a tool loop never streams
    if isinstance(response, StepOutcome):  # a tool loop (or a structured reply) counted its own calls
        response.time_to_first_token = ttft
        if not _keeps_reasoning(step):
            response.reasoning_content = None
        outcome = response
    else:
        outcome = _succeed(ctx, response, attempt, model, step, ttft)
    if watch is not None and watch.first is None:  # nothing streamed: the text reaches the stream whole
        whole = outcome.raw if outcome.raw is not None else outcome.value
        if isinstance(whole, str) and (listener := text_listener.get()) is not None and whole:
            listener(whole)
    if turn is not None:  # the reply joins the conversation, written with output
        outcome = close_turn(turn, outcome, spend_counted=isinstance(response, StepOutcome))
    return outcome


def _refusal_as_output(ctx: StepContext, refused: ModelRefused, model: str, turn: Turn | None) -> StepOutcome:
    """``on_refusal: output``: the refusal text is the step's answer, with ``finish_reason: refusal``."""
    outcome = StepOutcome(value=refused.refusal, attempts=ctx.attempts, finish_reason="refusal", usage=ctx.usage,
                          cost_usd=round(ctx.cost_usd, 10), model=model)
    return close_turn(turn, outcome, spend_counted=True) if turn is not None else outcome


def _checked_model(step: LLMCallStep, ctx: StepContext) -> str:
    """The step's model; a step that could never call one fails before anything is sent."""
    if step.prompt is None and step.conversation is None:  # the loader refuses this; a Python-built Workflow may not
        raise StepError(
            render_message(
                f"llm_call '{step.id}' has neither 'prompt' nor 'conversation'; the provider was not called.",
                hint="add a prompt to the step.", inline=True),
            code="no_prompt",
        )
    model = step.model or ctx.workflow.config.model
    if not model:
        raise StepError(
            f"llm_call '{step.id}' has no model: set 'model' on the step or 'config.model'", code="no_model"
        )
    if ctx.provider is None:
        raise StepError(render_message("no provider was given for this run.",
                                       hint="pass provider=Scripted({...}).", inline=True),
                        code="no_provider")
    return model


Answer = LLMResponse | StepOutcome


def _attempt_call(step: LLMCallStep, ctx: StepContext, request: LLMRequest,
                  policy: RetryPolicy) -> Callable[[int], Awaitable[Answer]]:
    """One attempt of the step: a plain call, a whole tool loop, or a structured reply with its re-asks."""
    provider = ctx.provider
    assert provider is not None
    complete = with_fallbacks(ctx, fallbacks_of(step, ctx.workflow.config, request.model), provider.complete)
    if not step.tools and step.response_schema is None:  # the usual step: one call per attempt
        return functools.partial(_plain_call, ctx, complete, request)
    call_model = refusals_raise(ctx, complete)
    from .._calls.structured import resolve_shape, run_structured  # imported here: a plain step never needs them

    if step.tools:  # tool calling: the whole loop is one attempt, and a retry runs it again
        from .._calls.tool_loop import run_tool_loop, step_tools

        specs, reachable = step_tools(step, ctx.tools)
        tool_request = request.model_copy(update={"tools": specs, "stream": False})
        final_shape = resolve_shape(step) if step.response_schema is not None else None  # the final reply's

        def tool_loop(attempt: int) -> Awaitable[Answer]:
            return run_tool_loop(step, ctx, tool_request, reachable, attempt=attempt, call_model=call_model,
                                 shape=final_shape, reasks=policy.max_retries)
        return tool_loop
    shape = resolve_shape(step)
    reasks = 0 if request.stream else policy.max_retries

    def structured(attempt: int) -> Awaitable[Answer]:
        return run_structured(step, ctx, request, shape, attempt=attempt, reasks=reasks, call_model=call_model)
    return structured


async def _plain_call(ctx: StepContext, complete: CallModel, request: LLMRequest, attempt: int) -> LLMResponse:
    """One call of a step without tools or a schema; a refusal raises (:mod:`.._calls.refusal`)."""
    # the request of attempt 1 is the one built (its attempt is 1): frozen, so no copy is needed
    sent = request if attempt == request.attempt else request.model_copy(update={"attempt": attempt})
    response = await complete(sent)
    if is_refusal(response):
        raise refusal_error(ctx, sent, response)
    return response


class _Watched:
    """An attempt of a streaming step, with a :class:`_FirstText` listening around it.

    Only a step that streams needs one: a call that does not stream reports no time to first
    token, and any text a provider emits still reaches whoever watches the run (the listener in
    place is theirs). ``last`` is the watch of the latest attempt, the one that answered.
    """

    def __init__(self, clock: Clock, call: Callable[[int], Awaitable[Answer]]) -> None:
        self.clock = clock
        self.call = call
        self.last: _FirstText | None = None

    async def __call__(self, attempt: int) -> Answer:
        watch = self.last = _FirstText(self.clock)
        token = text_listener.set(watch)
        try:
            return await self.call(attempt)
        except BaseException:
            watch.abandon()
            raise
        finally:
            text_listener.reset(token)


#: the step's fields sent as the request's ``params`` when set
_PARAMS = ("temperature", "max_tokens", "stop", "service_tier")


def _build_request(step: LLMCallStep, ctx: StepContext, model: str,
                   conversation: tuple[Message, ...] | None = None) -> LLMRequest:
    if conversation is not None:
        messages = conversation
    else:  # the system prompt renders first, so its template warnings come first
        system = None
        if step.system_prompt is not None:
            system = Message(role="system", content=render(step.system_prompt, ctx.state,
                                                           on_missing=ctx.missing_key))
        user = Message(role="user", content=render(step.prompt or "", ctx.state, on_missing=ctx.missing_key))
        messages = (user,) if system is None else (system, user)
    config = ctx.workflow.config
    stream = step.stream if step.stream is not None else config.stream
    params = {name: getattr(step, name) for name in _PARAMS if getattr(step, name) is not None}
    thinking = step.thinking if step.thinking is not None and step.thinking.enabled else None
    if not params and thinking is None and step.prefill is None:
        # the usual step: the fields left out are their defaults (no params, no thinking), validated for less
        return LLMRequest(step_id=step.id, model=model, messages=messages, stream=stream, provider=config.provider)
    return LLMRequest(step_id=step.id, model=model, messages=messages, params=params, stream=stream,
                      thinking=thinking, provider=config.provider, prefill=step.prefill)


async def _attach(step: LLMCallStep, ctx: StepContext, request: LLMRequest) -> LLMRequest:
    """The step's attachments on the request's last user turn (the one its prompt made); the trace gets summaries."""
    from .._calls.attachments import resolve_attachments

    items = await resolve_attachments(step, ctx)
    ctx.event("attachments", items=[item.summary() for item in items])
    messages = list(request.messages)
    last = max(i for i, message in enumerate(messages) if message.role == "user")
    messages[last] = messages[last].model_copy(update={"attachments": items})
    return request.model_copy(update={"messages": tuple(messages)})


class _FirstText:
    """Notes when a call's first streamed text arrives, on the step's clock, and passes the text on."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.started = clock.now()
        self.first: float | None = None
        self.forward = text_listener.get()  # who watches the run (agentloom run --stream), if anyone

    def __call__(self, chunk: str) -> None:
        if self.first is None:
            self.first = self.clock.now()
        if self.forward is not None:
            self.forward(chunk)

    def abandon(self) -> None:
        """The attempt failed: a watcher that holds text back (a possible secret's start, see
        :class:`~pytest_agentloom._redaction.streamed_text.StreamedTextRedactor`) drops it, since the next
        attempt streams its reply from the start and the held piece would otherwise be shown before it."""
        drop = getattr(self.forward, "abandon", None)
        if callable(drop):
            drop()

    def seconds(self) -> float:
        """Seconds to the first text; a provider that streamed nothing (scripted) counts its whole reply."""
        return round((self.first if self.first is not None else self.clock.now()) - self.started, 6)


def _succeed(ctx: StepContext, response: LLMResponse, attempt: int, model: str, step: LLMCallStep,
             ttft: float | None) -> StepOutcome:
    answered_by = response.model or model
    usage = response.usage
    cost = response.cost if response.cost is not None else cost_of(answered_by, usage)
    spent = cost or 0.0
    data = {"model": answered_by, "provider": response.provider, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "reasoning_tokens": usage.reasoning_tokens,
            **usage.cache_counts()}
    data["finish_reason"] = response.finish_reason
    data["cost_usd"] = spent
    data["priced"] = cost is not None
    if ttft is not None:
        data["time_to_first_token"] = ttft
    ctx.record("provider_call", attempt, data)
    return StepOutcome(
        value=response.text, attempts=attempt, finish_reason=response.finish_reason, usage=usage,
        cost_usd=spent, model=answered_by, provider=response.provider,
        reasoning_content=response.reasoning_content if _keeps_reasoning(step) else None, time_to_first_token=ttft,
    )


def _keeps_reasoning(step: LLMCallStep) -> bool:
    """The reasoning text a provider returned reaches the result, asked for or not (DeepSeek, Groq and Ollama
    send it unasked), unless the step's thinking sets ``capture_reasoning: false``."""
    thinking = step.thinking
    return thinking is None or thinking.capture_reasoning
