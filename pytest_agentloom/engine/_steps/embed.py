"""The ``embed`` step: read texts from state paths, ask the provider for their vectors.

``inputs`` are state paths, not templates: ``docs`` and ``state.docs`` name
the same key. Each must hold a string or a list of strings; the texts are sent
in the order of ``inputs`` (a list's items in their own order), and ``output``
receives a list with one vector (a list of floats) per text, even when there
is a single string. A missing path fails the step at once, before any call.
Retries follow the retry table of model calls (:mod:`.._calls.retry`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..._core.state_paths import MISSING, get_path, parse_path
from ..._core.types import EmbedRequest, EmbedResponse
from ...errors import StepError, render_message
from .._calls.retry import call_with_retries
from .._format.model import EmbedStep
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext, StepOutcome

__all__ = ["embed_texts", "run_embed"]


def embed_texts(step: EmbedStep, state: Mapping[str, Any]) -> list[str]:
    """The texts the step's ``inputs`` name, in order; a clear :class:`StepError` for a bad path or value."""
    texts: list[str] = []
    for index, path in enumerate(step.input_paths()):
        where = "inputs" if isinstance(step.inputs, str) else f"inputs[{index}]"
        bare = path[len("state."):] if path.startswith("state.") else path
        try:
            value = get_path(state, parse_path(bare))
        except ValueError as exc:
            raise StepError(render_message(f"embed '{step.id}' {where}: {exc}.",
                                           hint="write a state path such as 'docs'.", inline=True),
                            code="bad_input") from exc
        if value is MISSING:
            raise StepError(
                render_message(
                    f"embed '{step.id}' {where}: the state has nothing at '{path}'; the provider was not called.",
                    hint="set it in 'state:' or in an earlier step's output, and depend on that step.", inline=True),
                code="missing_input",
            )
        items = value if isinstance(value, list) else [value]
        for position, item in enumerate(items):
            if not isinstance(item, str):
                at = path if not isinstance(value, list) else f"{path}[{position}]"
                raise StepError(
                    render_message(f"embed '{step.id}' {where}: '{at}' holds {type(item).__name__}, not text.",
                                   hint="point inputs at a string or a list of strings.", inline=True),
                    code="bad_input",
                )
            texts.append(item)
    return texts


async def run_embed(step: EmbedStep, ctx: StepContext) -> StepOutcome:
    model = step.model or ctx.workflow.config.embedding_model
    if not model:
        raise StepError(
            render_message(f"embed '{step.id}' has no model.",
                           hint="set 'model' on the step or 'config.embedding_model' "
                                "(config.model is a chat model and is not used).", inline=True), code="no_model",
        )
    texts = embed_texts(step, ctx.state)
    if ctx.provider is None:
        raise StepError(render_message("no provider was given for this run.",
                                       hint="pass provider=Scripted({...}).", inline=True),
                        code="no_provider")
    embed = getattr(ctx.provider, "embed", None)
    if not callable(embed) or not inspect.iscoroutinefunction(embed):
        name = getattr(ctx.provider, "name", type(ctx.provider).__name__)
        why = " (Anthropic has no embeddings API)" if name == "anthropic" else ""
        raise StepError(
            render_message(f"embed '{step.id}': provider {name} cannot embed{why}.",
                           hint="use a provider with embeddings "
                                "(openai, google, ollama, a gateway of them, or Scripted with embedding(...)).",
                                inline=True),
            code="embed_unsupported",
        )
    request = EmbedRequest(step_id=step.id, model=model, texts=tuple(texts), provider=ctx.workflow.config.provider,
                           dimensions=step.dimensions)

    async def attempt_call(attempt: int) -> Any:
        return await embed(request.model_copy(update={"attempt": attempt}))

    response, attempt = await call_with_retries(ctx, ctx.retry_policy(step.retry), step.timeout, attempt_call)
    return _succeed(ctx, step, response, attempt, model, len(texts))


def _succeed(ctx: StepContext, step: EmbedStep, response: EmbedResponse, attempt: int, model: str,
             count: int) -> StepOutcome:
    if not isinstance(response, EmbedResponse):
        raise StepError(f"embed '{step.id}': the provider answered {type(response).__name__}, not an EmbedResponse",
                        code="provider_crashed")
    if len(response.vectors) != count:
        raise StepError(
            f"embed '{step.id}': {count} texts were sent but {len(response.vectors)} vectors came back",
            code="provider_error",
        )
    wrong = [len(vector) for vector in response.vectors if len(vector) != step.dimensions]
    if step.dimensions is not None and wrong:
        raise StepError(
            render_message(
                f"embed '{step.id}': dimensions is {step.dimensions} but a vector of {wrong[0]} came "
                "back.",
                hint="use a model that can give vectors of that size, or change 'dimensions'.", inline=True),
            code="provider_error",
        )
    answered_by = response.model or model
    cost = response.cost if response.cost is not None else cost_of(answered_by, response.usage)
    ctx.event(
        "provider_call", attempt, model=answered_by, provider=response.provider, operation="embed",
        input_tokens=response.usage.input_tokens, output_tokens=0, texts=count,
        dimensions=len(response.vectors[0]) if response.vectors else 0, cost_usd=cost or 0.0, priced=cost is not None,
    )
    vectors = [[float(x) for x in vector] for vector in response.vectors]
    return StepOutcome(value=vectors, attempts=attempt, usage=response.usage, cost_usd=cost or 0.0,
                       model=answered_by, provider=response.provider)
