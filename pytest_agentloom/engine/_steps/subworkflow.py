"""The ``subworkflow`` step: another workflow file run as one step of this one.

The child file is loaded and checked with the parent, by the loader
(:func:`pytest_agentloom.engine._format.loader.load_children`); this module only runs it.


- The child's initial state is its file's ``state:`` with the rendered
  ``input`` laid over its top-level keys (rendered like ``tool_args``). A child
  given by upstream's keys (``workflow_path``, ``workflow_inline``) starts, as
  upstream's does, from a copy of the parent's whole state laid over its own
  ``state:``, then ``input``. Upstream's ``isolated_state`` decides it outright
  (``true``: the child's ``state:`` and ``input`` only; ``false``: the parent's too).
- It runs with the parent's provider, tools and the step's clock. Its model
  requests carry the step id ``<parent step>/<child step>``, so a scripted
  reply for the child's ``search`` step under the parent's ``research`` step is
  ``Scripted({"research/search": "..."})``; cassettes key on the same id.
- Its redaction patterns are its own plus the parent's
  (:func:`~pytest_agentloom.engine._format.redaction_patterns.child_redactor`).
- Its trace events join the parent's trace under the step, in the child's own
  order: events of a child step keep their kind with the step id
  ``<parent step>/<child step>``; the child's run-level events (start, layers,
  end) become ``subworkflow`` events of the parent step (``data.event`` is the
  original kind).
- Tokens and cost of every child step add up into the parent step's result,
  and so count against the parent's ``budget_usd``. What is left of the
  parent's budget and run timeout (and the step's own ``timeout``) caps the child's
  own; a ``retry`` on the step is refused at load (the child's steps retry by
  their own policies).
- The step's value is the child's final state (its ``steps`` bookkeeping
  included), or a dict of just the ``return_keys`` (top-level keys; a missing
  one fails the step). A failed, stopped or timed-out child fails the step with
  an error naming the child step.
- A child that pauses (an approval gate, an agent awaiting approval, a
  grandchild that paused) pauses the parent at this step: the pause's ``detail``
  holds the child as :mod:`.._run.child_pause` saves it. Resuming the parent
  runs this step again, which resumes the child with the parent's decision; the
  child then goes on, and the parent after it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..._core.types import LLMRequest, LLMResponse, Usage
from ...errors import StepError, render_message
from .._evaluate.templates import render_args
from .._format.loader import load_children
from .._format.model import SubworkflowStep, Workflow
from .._outcome.redacted import redact_trace
from .._outcome.result import RunStatus, WorkflowResult
from .._outcome.step_context import ChildRun, PauseOutcome, StepContext, StepOutcome

__all__ = ["child_workflow", "run_subworkflow"]


def child_workflow(workflow: Workflow, step: SubworkflowStep) -> Workflow:
    """The loaded child of ``step`` (loaded now if the parent was built without the loader)."""
    child = workflow.compiled.children.get(step.id)
    if child is None:
        problems = load_children(workflow, str(workflow.source or "<workflow>"))
        if problems:
            raise problems[0]
        child = workflow.compiled.children[step.id]
    return child


class _PrefixedProvider:
    """The parent's provider, with the child's requests renamed ``<parent step>/<child step>``."""

    def __init__(self, provider: Any, prefix: str) -> None:
        self._provider = provider
        self._prefix = prefix

    async def complete(self, request: LLMRequest) -> LLMResponse:
        renamed = request.model_copy(update={"step_id": f"{self._prefix}/{request.step_id}"})
        return await self._provider.complete(renamed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)


async def run_subworkflow(step: SubworkflowStep, ctx: StepContext) -> StepOutcome:
    child = _with_limits(child_workflow(ctx.workflow, step), step, ctx)
    awaiting = ctx.run.awaiting(step.id)
    paused = awaiting.pending.detail.get("subworkflow") if awaiting and awaiting.pending.detail else None
    initial: dict[str, Any] = {}
    if paused is None:  # a first run: the child's state is made now (a resumed child has its own)
        inputs = render_args(step.input, ctx.state, on_missing=ctx.missing_key, where="input")
        initial = {**copy.deepcopy(child.state), **inputs}
        if step.inherits_state:  # upstream's keys or isolated_state: false: from the parent's whole state
            initial = {**copy.deepcopy(child.state), **copy.deepcopy(dict(ctx.state)), **inputs}
    provider = _PrefixedProvider(ctx.provider, step.id) if ctx.provider is not None else None
    finished = await ctx.run.run_child(child, initial, step_id=step.id, clock=ctx.clock, provider=provider,
                                       paused=paused, decision=awaiting.decision if awaiting else None,
                                       inherited=ctx.state if step.inherits_state else None)
    _merge_trace(step, ctx, finished)
    usage, cost = _spend(finished.result)
    ctx.usage, ctx.cost_usd, ctx.attempts = usage, cost, 1
    result = finished.result
    if result.status is RunStatus.PAUSED and finished.paused is not None:
        return PauseOutcome(value=None, usage=usage, cost_usd=cost, detail={"subworkflow": finished.paused})
    if result.status is not RunStatus.SUCCESS:
        raise _child_failed(step, result)
    return StepOutcome(value=_returned(step, result.state), attempts=1, usage=usage, cost_usd=cost)


def _with_limits(child: Workflow, step: SubworkflowStep, ctx: StepContext) -> Workflow:
    """The child capped by what is left of the parent's budget and run timeout, and by the step's timeout."""
    limits: dict[str, float] = {}
    budget_left = ctx.run.budget_left()
    if budget_left is not None:
        own = child.config.budget_usd
        limits["budget_usd"] = max(min(own, budget_left) if own is not None else budget_left, 1e-12)
    time_left = ctx.run.time_left()
    if step.timeout is not None:
        time_left = step.timeout if time_left is None else min(time_left, step.timeout)
    if time_left is not None:
        own_time = child.config.timeout
        limits["timeout"] = max(min(own_time, time_left) if own_time is not None else time_left, 1e-9)
    return child.with_config(**limits) if limits else child


def _merge_trace(step: SubworkflowStep, ctx: StepContext, finished: ChildRun) -> None:
    """The child's events, redacted with its own patterns, under this step in the parent's trace."""
    result, redactor = finished.result, finished.redactor
    trace = redact_trace(redactor, result.trace, redactor.secret_values(result.state)) if redactor.active \
        else result.trace
    for event in trace:
        when = finished.started + event.time
        if event.step_id is None:
            ctx.events.append((when, "subworkflow", step.id, None, {"event": event.kind, **event.data}))
        else:
            ctx.events.append((when, event.kind, f"{step.id}/{event.step_id}", event.attempt, dict(event.data)))


def _spend(result: WorkflowResult) -> tuple[Usage, float]:
    usage = Usage()
    cost = 0.0
    for child_step in result.steps.values():
        usage = usage + Usage(input_tokens=child_step.input_tokens, output_tokens=child_step.output_tokens,
                              reasoning_tokens=child_step.reasoning_tokens)
        cost += child_step.cost_usd
    return usage, round(cost, 10)


def _child_failed(step: SubworkflowStep, result: WorkflowResult) -> StepError:
    failed = result.failed_step
    detail = result.steps[failed].error if failed and failed in result.steps else None
    if detail is None:  # stopped by its budget or timeout: the first step it did not run says why
        detail = next((r.error for r in result.steps.values() if r.error_code == result.reason.value), None)
    where = f" at step '{failed}'" if failed else ""
    return StepError(
        f"subworkflow '{step.child_name}' {result.status.value}{where}: {detail or result.reason.value}",
        code=(result.steps[failed].error_code if failed and failed in result.steps else None) or result.reason.value,
    )


def _returned(step: SubworkflowStep, state: dict[str, Any]) -> Any:
    """The child's final state, or just its ``return_keys``."""
    if step.return_keys is None:
        return state
    missing = [key for key in step.return_keys if key not in state]
    if missing:
        keys = ", ".join(sorted(key for key in state if key != "steps"))
        raise StepError(
            render_message(
                f"subworkflow '{step.child_name}' has no state key {', '.join(map(repr, missing))} to return "
                f"(its state keys: {keys or 'none'}).",
                hint="correct return_keys, or make the child write it.", inline=True),
            code="missing_return_key",
        )
    return {key: copy.deepcopy(state[key]) for key in step.return_keys}
