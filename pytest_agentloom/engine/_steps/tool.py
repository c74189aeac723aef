"""The ``tool`` step: call a registered Python function with rendered arguments."""

from __future__ import annotations

import inspect
from typing import Any

from ...errors import STEP_FAILURES, ToolError, render_message
from .._evaluate.templates import render_args
from .._format.model import ToolStep
from .._outcome.step_context import StepContext, StepOutcome


async def run_tool(step: ToolStep, ctx: StepContext) -> StepOutcome:
    """Tools are retried only when the step sets ``retry`` itself: a side effect must not repeat by surprise."""
    function = ctx.tools.get(step.tool_name)
    if function is None:
        from ...tools._builtins import BUILTIN_TOOL_NAMES

        known = ", ".join(sorted(name for name in ctx.tools if name not in BUILTIN_TOOL_NAMES)) or "none"
        builtin = ", ".join(sorted(name for name in ctx.tools if name in BUILTIN_TOOL_NAMES))
        raise ToolError(
            render_message(f"no tool named '{step.tool_name}' is registered (registered tools: {known})"
                           f"{f'; built-in tools: {builtin}' if builtin else ''}.",
                           hint=f"pass tools={{'{step.tool_name}': your_function}}.", inline=True),
            code="unknown_tool",
        )
    arguments = render_args(step.tool_args, ctx.state, on_missing=ctx.missing_key)
    policy = step.retry
    max_attempts = 1 + (policy.max_retries if policy else 0)
    for attempt in range(1, max_attempts + 1):
        ctx.attempts = attempt
        try:
            value = await ctx.within(step.timeout, lambda: _call(function, arguments))
        except STEP_FAILURES as exc:
            error: Exception = exc
        except Exception as exc:  # a tool's own failure, whatever its type, fails or retries the step
            error = exc
        else:
            ctx.event("tool_call", attempt, tool=step.tool_name, args=arguments, ok=True)
            return StepOutcome(value=value, attempts=attempt)
        timed_out = isinstance(error, STEP_FAILURES)  # raised by ctx.within: the tool itself did not fail
        message = str(error) if timed_out else f"{type(error).__name__}: {error}"
        code = getattr(error, "code", "tool_error") if timed_out else "tool_error"  # as a tool loop's call says it
        ctx.event("tool_call", attempt, tool=step.tool_name, args=arguments, ok=False, code=code, error=message)
        if policy is not None and attempt < max_attempts:
            delay = policy.delay(attempt)
            ctx.event("retry", attempt, error=message, delay=delay)
            await ctx.clock.sleep(delay)
            continue
        if timed_out:
            raise ToolError(f"tool '{step.tool_name}' {message}", code=code) from error
        raise ToolError(f"tool '{step.tool_name}' raised {message}", code="tool_error") from error
    raise AssertionError("unreachable")


async def _call(function: Any, arguments: dict[str, Any]) -> Any:
    value = function(**arguments)
    if inspect.isawaitable(value):
        value = await value
    return value
