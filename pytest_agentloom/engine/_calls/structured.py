"""Structured output of ``llm_call`` (docs/running-workflows.md: Structured output): ``response_schema``.

How the shape reaches the model:

- OpenAI, Google, Ollama and the rest: ``params["response_format"]`` in OpenAI's
  form (``{"type": "json_schema", "json_schema": {name, schema, strict,
  description}}`` or ``{"type": "json_object"}``); each adapter translates it.
- Anthropic (``config.provider: anthropic``, or a ``claude*`` model without a
  provider): the schema goes into the system prompt and the reply is prefilled
  with ``{`` (an assistant turn the model continues), which every Claude model
  takes; the ``{`` is put back in front of the reply's text. A step that also has
  tools sends the schema natively instead (:func:`prepare_with_tools`).

How the reply is read: the whole text, else a fenced JSON block, else its first
``{...}``; then validated against the schema (or the pydantic model). An
invalid reply goes back to the model with the problem, up to
``retry.max_retries`` more calls within the same attempt; if none is valid
the step fails without a retry. A streamed reply is validated once, at the end.

``strict`` (default true) is OpenAI's strict mode, which makes every property
required; the schema sent is the one replies are validated against.
"""

from __future__ import annotations

import copy
import fnmatch
import importlib
import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..._core.types import LLMRequest, LLMResponse, Message
from ...errors import StepError, render_message
from ...tools._schema import find_additional_properties_true, validate_against
from .._format.model import LLMCallStep, ResponseSchema
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext, StepOutcome

__all__ = ["Shape", "extract_json", "no_valid_reply", "prepare_with_tools", "read_reply", "resolve_shape",
           "run_structured"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class Shape:
    """A step's ``response_schema``, resolved: the JSON Schema (if any), its name and the pydantic class."""

    def __init__(self, spec: ResponseSchema, *, schema: dict[str, Any] | None, name: str,
                 model_class: Any = None) -> None:
        self.spec = spec
        self.schema = schema
        self.name = name
        self.model_class = model_class

    def response_format(self) -> dict[str, Any]:
        if self.schema is None:
            return {"type": "json_object"}
        body: dict[str, Any] = {"name": self.name, "schema": self.schema, "strict": self.spec.strict}
        if self.spec.description:
            body["description"] = self.spec.description
        return {"type": "json_schema", "json_schema": body}

    def instructions(self) -> str:
        if self.schema is None:
            return "Reply with one JSON object and nothing else."
        return ("Reply with one JSON value and nothing else, matching this JSON Schema:\n"
                + json.dumps(self.schema, sort_keys=True))

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The value to store (a pydantic instance for ``pydantic``), or why ``value`` doesn't fit."""
        if self.model_class is not None:
            from pydantic import ValidationError

            try:
                return self.model_class.model_validate(value), None
            except ValidationError as exc:
                problems = [f"$.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
                return None, "; ".join(problems)
        if self.schema is None:
            return (value, None) if isinstance(value, dict) else (None, "$: expected a JSON object")
        problems = validate_against(self.schema, value)
        return (value, None) if not problems else (None, "; ".join(problems))


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's strict mode: every object lists all its properties as required and allows no others."""
    schema = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                node["required"] = list(node["properties"])
                node.setdefault("additionalProperties", False)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
    return schema


def resolve_shape(step: LLMCallStep) -> Shape:
    """Import the pydantic model (from the current directory) or take the inline schema; check it."""
    spec = step.response_schema
    assert spec is not None
    model_class = None
    if spec.type == "pydantic":
        model_class = _import_model(spec.model or "", step.id)
        schema: dict[str, Any] | None = dict(model_class.model_json_schema())
        name = spec.name or model_class.__name__
    elif spec.type == "json_schema":
        schema = dict(spec.schema_ or {})
        name = spec.name or step.id
    else:
        schema, name = None, spec.name or step.id
    if schema is not None:
        found = find_additional_properties_true(schema)
        if found:
            raise StepError(
                render_message(
                    f"llm_call '{step.id}': response_schema has additionalProperties: true at {found}, which is "
                    "refused.",
                    hint="remove it, or list the properties (a pydantic model with extra='allow' makes it).",
                    inline=True),
                code="invalid_response_schema",
            )
        if spec.strict:
            schema = _strict(schema)
    return Shape(spec, schema=schema, name=name, model_class=model_class)


def _import_model(dotted: str, step_id: str) -> Any:
    module_name, _, attribute = dotted.partition(":") if ":" in dotted else dotted.rpartition(".")
    if not module_name or not attribute:
        raise StepError(f"llm_call '{step_id}': response_schema.model must be package.module.Class or "
                        f"package.module:Class, got {dotted!r}", code="invalid_response_schema")
    cwd = str(Path.cwd())
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)  # "imported from the directory you run from"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise StepError(
            render_message(f"llm_call '{step_id}': cannot import response_schema.model {dotted!r}: {exc}.",
                           hint="run from "
                                "the folder that holds the package, or fix the dotted path.", inline=True),
            code="invalid_response_schema",
        ) from None
    finally:
        if added:
            sys.path.remove(cwd)
    model = getattr(module, attribute, None)
    if not (isinstance(model, type) and hasattr(model, "model_validate")):
        raise StepError(f"llm_call '{step_id}': {dotted!r} is not a pydantic model class",
                        code="invalid_response_schema")
    return model


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON in a reply: the whole text, else a fenced block, else its first ``{...}``."""
    candidates = [text.strip(), *(block.strip() for block in _FENCE.findall(text))]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{"): text.rindex("}") + 1])
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate), None
        except ValueError:
            continue
    return None, "the reply holds no JSON (not as a whole, in a fenced block, or as a {...} part)"


def anthropic_style(request: LLMRequest) -> bool:
    provider = (request.provider or "").lower()
    return provider == "anthropic" or (not provider and fnmatch.fnmatchcase(request.model, "claude*"))


def prepare(request: LLMRequest, shape: Shape) -> tuple[LLMRequest, bool]:
    """The request with the shape attached, and whether the reply is prefilled with ``{``."""
    if not anthropic_style(request):
        params = {**request.params, "response_format": shape.response_format()}
        return request.model_copy(update={"params": params}), False
    messages = list(request.messages)
    note = shape.instructions()
    if messages and messages[0].role == "system":
        messages[0] = Message(role="system", content=f"{messages[0].content}\n\n{note}")
    else:
        messages.insert(0, Message(role="system", content=note))
    messages.append(Message(role="assistant", content="{"))
    return request.model_copy(update={"messages": tuple(messages)}), True


def prepare_with_tools(request: LLMRequest, shape: Shape) -> LLMRequest:
    """The request of a tool loop whose final reply must fit ``shape`` (OpenAI's "native output").

    Every provider gets the shape natively beside the tools as ``response_format``, which each adapter maps
    (chat ``response_format``, Responses ``text.format``, Anthropic ``output_config.format``, Gemini
    ``responseSchema``, Ollama ``format``). Anthropic has no "any JSON object" mode: a ``json_object`` shape
    goes in its system prompt, without the ``{`` prefill, which would keep the model from calling a tool.
    """
    if shape.schema is not None or not anthropic_style(request):
        return request.model_copy(update={"params": {**request.params, "response_format": shape.response_format()}})
    messages = list(request.messages)
    note = shape.instructions().replace("Reply with", "When you give your final answer (no more tool calls), reply "
                                        "with", 1)
    if messages and messages[0].role == "system":
        messages[0] = Message(role="system", content=f"{messages[0].content}\n\n{note}")
    else:
        messages.insert(0, Message(role="system", content=note))
    return request.model_copy(update={"messages": tuple(messages)})


def read_reply(shape: Shape, text: str) -> tuple[Any, str | None]:
    """The reply's value, checked against ``shape``, or ``None`` and the problem to send back."""
    value, problem = extract_json(text)
    if problem is not None:
        return None, problem
    return shape.check(value)


def no_valid_reply(step_id: str, calls: int, problem: str) -> StepError:
    """The step's failure when no reply fit the shape after its re-asks (never retried)."""
    return StepError(
        render_message(
            f"llm_call '{step_id}': no valid structured reply after {calls} call{'s' if calls != 1 else ''} "
            f"(last problem: {problem}).",
            hint="loosen response_schema, improve the prompt, or raise "
                 "retry.max_retries for more re-asks.", inline=True), code="invalid_output", retryable=False,
    )


async def run_structured(
    step: LLMCallStep, ctx: StepContext, request: LLMRequest, shape: Shape, *, attempt: int, reasks: int,
    call_model: Callable[[LLMRequest], Awaitable[LLMResponse]],
) -> StepOutcome:
    """One attempt: call, read, validate; re-ask up to ``reasks`` times with the problem."""
    prepared, prefilled = prepare(request, shape)
    messages = list(prepared.messages)
    problem = "no call made"
    raw = ""
    for turn in range(1, reasks + 2):
        response = await call_model(prepared.model_copy(update={
            "messages": tuple(messages), "attempt": attempt, "turn": turn}))
        model = response.model or request.model
        cost = response.cost if response.cost is not None else cost_of(model, response.usage)
        ctx.usage = ctx.usage + response.usage
        ctx.cost_usd += cost or 0.0
        raw = ("{" + response.text) if prefilled and not response.text.lstrip().startswith("{") else response.text
        parsed, problem_or_none = read_reply(shape, raw)
        ctx.event(
            "provider_call", attempt, turn=turn, model=model, provider=response.provider,
            input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
            reasoning_tokens=response.usage.reasoning_tokens, **response.usage.cache_counts(),
            finish_reason=response.finish_reason,
            cost_usd=cost or 0.0, priced=cost is not None, valid=problem_or_none is None,
            **({"problem": problem_or_none} if problem_or_none else {}),
        )
        if problem_or_none is None:
            return StepOutcome(
                value=parsed, raw=raw, attempts=attempt, finish_reason=response.finish_reason, usage=ctx.usage,
                cost_usd=round(ctx.cost_usd, 10), model=model, provider=response.provider,
                reasoning_content=response.reasoning_content,
            )
        problem = problem_or_none
        if prefilled:
            messages = messages[:-1]  # the prefill turn goes; the reply takes its place
        messages += [
            Message(role="assistant", content=raw),
            Message(role="user", content=f"That reply is not valid: {problem}. Reply again with only the JSON."),
        ]
        if prefilled:
            messages.append(Message(role="assistant", content="{"))
    raise no_valid_reply(step.id, reasks + 1, problem)
