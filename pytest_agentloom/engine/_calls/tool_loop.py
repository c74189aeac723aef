"""The tool loop of an ``llm_call`` with ``tools`` (docs/running-workflows.md: Tools and tool calling).

1. Call the model with the step's tools. ``tool_choice`` ``required`` or a
   named tool applies to this first call only; later calls use ``auto``.
2. A reply without tool calls is the answer.
3. Otherwise run every call of the reply at once and send the results back
   in the order of the calls, then call the model again.
4. The call that reaches ``max_tool_iterations`` is the last: its text is the
   answer (``finish_reason`` ``max_tool_iterations``, or
   ``max_tool_iterations_no_answer`` when it is empty) and the tools it asked
   for don't run, since no call would read their results.

A failing tool never fails the step: an unknown or undeclared tool,
arguments that aren't a JSON object, an exception or a sandbox refusal go
back to the model as that call's result. :func:`execute_call` is shared with
the agent loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._core.plain import to_plain
from ..._core.step_notes import tool_call_place
from ..._core.types import LLMRequest, LLMResponse, Message, ToolCall, ToolSpec
from ...errors import STEP_FAILURES, AgentloomError, StepError, render_message
from ...tools._registry import Tool, as_tool
from .._format.model import LLMCallStep, NamedToolChoice, ToolDeclaration
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext, StepOutcome
from .structured import Shape, no_valid_reply, prepare_with_tools, read_reply

__all__ = [
    "ToolRun",
    "execute_call",
    "parse_arguments",
    "render_result",
    "run_tool_loop",
    "step_tools",
    "wire_tool_choice",
]


@dataclass(frozen=True)
class ToolRun:
    """One executed (or refused) call: what goes back to the model, and how it went."""

    call: ToolCall
    ok: bool
    content: str
    code: str = "ok"
    arguments: Any = None
    value: Any = None


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments as a dict, or ``None`` and why they can't be used."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {raw[:200]!r}"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}: {raw[:200]!r}"
    return value, None


def render_result(value: Any) -> str:
    """A tool's return value as the text sent back to the model: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False)


def _error_text(message: str) -> str:
    return f"Error: {message}"


async def execute_call(call: ToolCall, reachable: Mapping[str, Tool], *, unknown_message: str,
                       turn: int | None = None) -> ToolRun:
    """Run one call against the tools the step can reach; every failure becomes the call's result.

    ``turn`` (the model turn that asked for it) and the call's id are what a tool tape names when a tool
    run for real drifts from its recording (:data:`~pytest_agentloom._core.step_notes.tool_call_place`).
    """
    tool = reachable.get(call.name)
    if tool is None:
        return ToolRun(call, False, _error_text(unknown_message), code="unknown_tool")
    arguments, problem = parse_arguments(call.arguments)
    if arguments is None:
        return ToolRun(call, False, _error_text(problem or "invalid arguments"), code="invalid_json")
    place = tool_call_place.set((turn, call.id) if turn is not None else None)
    try:
        value = await tool.invoke(arguments)
    except STEP_FAILURES as exc:  # a sandbox refusal or another tool error with its own code
        return ToolRun(call, False, _error_text(str(exc)), code=exc.code, arguments=arguments)
    except AgentloomError:  # the engine's own failures (a tool replay miss) fail the step, not the call
        raise
    except Exception as exc:  # the tool's own failure, whatever its type, is the model's to read
        return ToolRun(call, False, _error_text(f"{type(exc).__name__}: {exc}"), code="tool_error",
                       arguments=arguments)
    finally:
        tool_call_place.reset(place)
    return ToolRun(call, True, render_result(value), arguments=arguments, value=value)


def step_tools(step: LLMCallStep, registry: Mapping[str, Any]) -> tuple[tuple[ToolSpec, ...], dict[str, Tool]]:
    """The specs sent to the model and the tools the step can reach: only those it declares.

    A declaration without ``description`` or ``parameters`` takes the registered tool's own.
    """
    missing = [declared.name for declared in step.tools if declared.name not in registry]
    if missing:
        known = ", ".join(sorted(registry)) or "none"
        raise StepError(
            render_message(f"llm_call '{step.id}' declares tool(s) that are not registered: {', '.join(missing)} "
                           f"(registered tools: {known}).",
                           hint="register them, e.g. run_workflow(tools=[my_tool]) "
                                "or the agentloom fixture's tools=.", inline=True),
            code="unknown_tool",
        )
    return declared_tools(step.tools, registry, strict=step.strict_tools)


def declared_tools(
    declarations: Sequence[ToolDeclaration], registry: Mapping[str, Any], *, strict: bool | None = None
) -> tuple[tuple[ToolSpec, ...], dict[str, Tool]]:
    """Specs for the model and the reachable tools, for declarations whose names are all registered.

    A declaration without ``description`` or ``parameters`` takes the registered tool's own; one without
    ``strict`` takes ``strict`` (the step's ``strict_tools``).
    """
    specs = []
    reachable: dict[str, Tool] = {}
    for declared in declarations:
        registered = as_tool(registry[declared.name], declared.name)
        reachable[declared.name] = registered
        specs.append(ToolSpec(
            name=declared.name,
            description=declared.description if declared.description is not None else registered.description,
            parameters=declared.parameters if declared.parameters is not None else registered.parameters,
            strict=declared.strict if declared.strict is not None else strict,
        ))
    return tuple(specs), reachable


def wire_tool_choice(choice: Any) -> Any:
    """The neutral ``tool_choice`` of a request: ``"auto"``, ``"none"``, ``"required"`` or ``{"name": ...}``."""
    if isinstance(choice, NamedToolChoice):
        return {"name": choice.name}
    return choice


async def run_tool_loop(
    step: LLMCallStep,
    ctx: StepContext,
    request: LLMRequest,
    reachable: Mapping[str, Tool],
    *,
    attempt: int,
    call_model: Callable[[LLMRequest], Awaitable[LLMResponse]],
    shape: Shape | None = None,
    reasks: int = 0,
) -> StepOutcome:
    """One attempt of the loop; a retry of the step calls this again from the start.

    With ``shape`` (the step's ``response_schema``) the final reply is parsed and checked: one that does
    not fit goes back to the model with the problem, up to ``reasks`` times (each one more call, tools
    still offered), as a structured step without tools re-asks.
    """
    if shape is not None:
        request = prepare_with_tools(request, shape)
    messages = list(request.messages)
    first_choice = wire_tool_choice(step.tool_choice)
    later_choice = "none" if first_choice == "none" else "auto"
    offered = ", ".join(reachable) or "none"
    text, finish, model, provider = "", None, request.model, None
    limit, asked, turn = step.max_tool_iterations, 0, 0
    while turn < limit:
        turn += 1
        turn_request = request.model_copy(update={
            "messages": tuple(messages), "tool_choice": first_choice if turn == 1 else later_choice,
            "turn": turn, "attempt": attempt, "stream": False,
        })
        response = await call_model(turn_request)
        model = response.model or request.model
        provider = response.provider
        text, finish = response.text, response.finish_reason
        calls = response.tool_calls if first_choice != "none" else ()
        checked = read_reply(shape, text) if shape is not None and not calls else None
        _count(ctx, response, model, attempt, turn, calls, checked)
        if checked is not None and checked[1] is not None and asked < reasks:  # re-ask, tools still offered
            asked, limit = asked + 1, limit + 1
            messages += [Message(role="assistant", content=text),
                         Message(role="user", content=f"That reply is not valid: {checked[1]}. "
                                                      "Reply again with only the JSON.")]
            continue
        if not calls:
            break
        if turn == limit:
            finish = "max_tool_iterations" if text.strip() else "max_tool_iterations_no_answer"
            ctx.event("tool_calls_skipped", attempt, turn=turn, tools=[call.name for call in calls],
                      reason=finish)
            break
        await _run_calls(ctx, reachable, response, calls, messages, attempt=attempt, turn=turn, offered=offered)
    value: Any = text
    if shape is not None:
        value, problem = checked if checked is not None else read_reply(shape, text)
        if problem is not None:
            raise no_valid_reply(step.id, turn, problem)
    return StepOutcome(
        value=value, raw=text if shape is not None else None, attempts=attempt, finish_reason=finish,
        usage=ctx.usage, cost_usd=round(ctx.cost_usd, 10), model=model, provider=provider,
        reasoning_content=response.reasoning_content,  # the last reply's
    )


async def _run_calls(ctx: StepContext, reachable: Mapping[str, Tool], response: LLMResponse,
                     calls: Sequence[ToolCall], messages: list[Message], *, attempt: int, turn: int,
                     offered: str) -> None:
    """Run one reply's calls at once; their results join ``messages`` in the order of the calls."""
    runs = await asyncio.gather(*(
        execute_call(call, reachable, unknown_message=f"unknown tool '{call.name}': this step offers {offered}",
                     turn=turn)
        for call in calls
    ))
    messages.append(Message(role="assistant", content=response.text or None, tool_calls=tuple(calls),
                            thinking_blocks=response.thinking_blocks))  # Anthropic wants them back
    for run in runs:  # results go back in the order of the calls, whichever finished first
        ctx.event("tool_call", attempt, turn=turn, call_id=run.call.id, tool=run.call.name,
                  args=run.arguments if run.arguments is not None else run.call.arguments, ok=run.ok,
                  **({} if run.ok else {"code": run.code, "error": run.content}))
        messages.append(Message(role="tool", content=run.content, tool_call_id=run.call.id, name=run.call.name))


def _count(ctx: StepContext, response: LLMResponse, model: str, attempt: int, turn: int,
           calls: Sequence[ToolCall], checked: tuple[Any, str | None] | None = None) -> None:
    """Add one call's tokens and cost to the step's totals, and trace it (a final reply checked against the
    step's ``response_schema`` says whether it was ``valid``, and if not, the ``problem``)."""
    cost = response.cost if response.cost is not None else cost_of(model, response.usage)
    ctx.usage = ctx.usage + response.usage
    ctx.cost_usd += cost or 0.0
    ctx.event(
        "provider_call", attempt, turn=turn, model=model, provider=response.provider,
        input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
        reasoning_tokens=response.usage.reasoning_tokens, **response.usage.cache_counts(),
        finish_reason=response.finish_reason,
        cost_usd=cost or 0.0, priced=cost is not None, tool_calls=[call.name for call in calls],
        **({} if checked is None else {"valid": checked[1] is None, **({"problem": checked[1]} if checked[1] else {})}),
    )
