"""The ``router`` step: the first condition that holds picks the next branch."""

from __future__ import annotations

from ...errors import ErrorCode, ExpressionBudgetError, StepError, render_message
from .._evaluate.expressions import EvaluationError, Expression, compile_expression
from .._format.model import RouterStep, Workflow
from .._outcome.step_context import StepContext, StepOutcome

__all__ = ["conditions_of", "run_router"]


def conditions_of(workflow: Workflow, step: RouterStep) -> tuple[Expression, ...]:
    """The router's compiled conditions: the loader's, or compiled now for a workflow built in Python."""
    compiled = workflow.compiled.conditions.get(step.id)
    sources = [condition.expression for condition in step.conditions]
    if compiled is None or [expression.source for expression in compiled] != sources:  # a copy with other steps
        compiled = tuple(compile_expression(condition.expression) for condition in step.conditions)
        workflow.compiled.conditions[step.id] = compiled
    return compiled


async def run_router(step: RouterStep, ctx: StepContext) -> StepOutcome:
    ctx.attempts = 1
    for index, (condition, expression) in enumerate(zip(step.conditions, conditions_of(ctx.workflow, step),
                                                        strict=True)):
        try:
            matched = bool(expression.evaluate(ctx.state))
        except ExpressionBudgetError as exc:
            raise _over_budget(step, ctx, index, exc) from exc
        except EvaluationError as exc:
            raise StepError(f"condition {index} ({condition.expression!r}) failed: {exc}",
                            code="expression_error") from exc
        if matched:
            ctx.event("router_choice", target=condition.target, condition=index, expression=condition.expression)
            return StepOutcome(value=condition.target, chosen=condition.target)
    if step.default is not None:
        ctx.event("router_choice", target=step.default, condition="default")
        return StepOutcome(value=step.default, chosen=step.default)
    tried = "; ".join(c.expression for c in step.conditions)
    raise StepError(
        render_message(f"router '{step.id}' matched no condition and has no default (tried: {tried}).",
                       hint="add 'default: <step id>' or a condition that covers this state.", inline=True),
        code="router_no_match",
    )


def _over_budget(step: RouterStep, ctx: StepContext, index: int, exc: ExpressionBudgetError) -> StepError:
    """The error of a condition that would work too long, naming where it is written and what to do."""
    source = ctx.workflow.source
    position = next((i for i, candidate in enumerate(ctx.workflow.steps) if candidate is step), None)
    field = f"conditions[{index}].expression"
    return StepError(
        render_message(
            f"router '{step.id}' condition {index} ({exc.expression!r}) stopped: it needs more than "
            f"{exc.budget:,} operations (items compared, scanned or built), the most one condition may spend.",
            [("file", source), ("step", step.id),
             ("field", field if position is None else f"steps[{position}].{field}")],
            hint="compare something smaller: a key, a length (len(x)) or a count the step writes, not whole "
                 "large values; or compute the answer in a tool step and route on its result."),
        code=ErrorCode.EXPRESSION_BUDGET,
    )
