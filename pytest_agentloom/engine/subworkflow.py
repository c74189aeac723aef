"""The ``subworkflow`` step: another workflow file run as one step of this one.

Loading (spec 000): the child file named by ``workflow:`` is resolved against
the parent file's folder, loaded and checked when the parent loads. A problem
in the child is a load error of the parent naming the parent file, the step and
the field, with the child's own message inside. Files that include each other
(directly or through others) are refused with the chain of files. A child that
could pause for a decision (an ``approval_gate`` step, or an agent with
``approval_required``) is refused too: a paused child cannot be resumed from
the parent's checkpoint.

Running:

- The child's initial state is its file's ``state:`` with the rendered
  ``input`` laid over its top-level keys (rendered like ``tool_args``).
- It runs with the parent's provider, tools and the step's clock. Its model
  requests carry the step id ``<parent step>/<child step>``, so a scripted
  reply for the child's ``search`` step under the parent's ``research`` step is
  ``Scripted({"research/search": "..."})``; cassettes key on the same id.
- Its redaction patterns are its own plus the parent's (:meth:`Redactor.child`).
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
"""

from __future__ import annotations

import copy
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.types import LLMRequest, LLMResponse, Usage
from ..errors import StepError, WorkflowError
from .model import AgentStep, ApprovalGateStep, SubworkflowStep, Workflow
from .result import RunStatus
from .templates import render_args

if TYPE_CHECKING:
    from .redaction import Redactor
    from .steps.base import StepContext, StepOutcome

__all__ = ["check_subworkflows", "child_workflow", "run_subworkflow", "subworkflows"]

_CHAIN: ContextVar[tuple[Path, ...]] = ContextVar("agentloom_subworkflow_chain", default=())


def _key(step_id: str) -> str:
    return f"subworkflow:{step_id}"


def child_workflow(workflow: Workflow, step: SubworkflowStep) -> Workflow:
    """The loaded child of ``step`` (loaded now if the parent was built without the loader)."""
    child = workflow._compiled.get(_key(step.id))
    if child is None:
        problems = check_subworkflows(workflow, str(workflow.source or "<workflow>"))
        if problems:
            raise problems[0]
        child = workflow._compiled[_key(step.id)]
    return child


def subworkflows(workflow: Workflow) -> list[Workflow]:
    """The already loaded children of ``workflow``, in file order."""
    return [workflow._compiled[_key(step.id)] for step in workflow.steps
            if isinstance(step, SubworkflowStep) and _key(step.id) in workflow._compiled]


def check_subworkflows(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Load every child file; return the problems (missing, invalid, cyclic, able to pause)."""
    from .loader import load_workflow

    steps = [step for step in workflow.steps if isinstance(step, SubworkflowStep)]
    if not steps:
        return []
    chain = _CHAIN.get()
    own = workflow.source.resolve() if workflow.source is not None else None
    if own is not None and (not chain or chain[-1] != own):
        chain = (*chain, own)
    problems: list[WorkflowError] = []
    for step in steps:
        if step.retry is not None:
            problems.append(WorkflowError(
                "A subworkflow step cannot be retried as a whole", file=file, step_id=step.id, field="retry",
                hint="remove 'retry' here and give the child's own steps a 'retry' policy.",
            ))
        path = workflow.resolve_path(step.workflow).resolve()
        if path in chain:
            loop = " -> ".join(str(item) for item in (*chain[chain.index(path):], path))
            problems.append(WorkflowError(
                f"Subworkflows include each other in a cycle: {loop}", file=file, step_id=step.id,
                field="workflow", hint="a workflow may not run itself, directly or through another file.",
            ))
            continue
        token = _CHAIN.set((*chain, path))
        try:
            child = load_workflow(path)
        except WorkflowError as exc:
            inner = str(exc).replace("\n", "\n    ")
            problems.append(WorkflowError(
                f"Subworkflow '{step.workflow}' cannot be loaded ({path}):\n    {inner}", file=file,
                step_id=step.id, field="workflow",
                hint="fix the child file, or the path (relative paths start at this workflow file's folder).",
            ))
            continue
        finally:
            _CHAIN.reset(token)
        pausing = [s.id for s in child.steps if isinstance(s, ApprovalGateStep)]
        pausing += [s.id for s in child.steps if isinstance(s, AgentStep)
                    and s.agent in child.agents and child.agents[s.agent].approval_required]
        if pausing:
            problems.append(WorkflowError(
                f"Subworkflow '{step.workflow}' could pause for approval (step {', '.join(map(repr, pausing))}); "
                "a subworkflow cannot pause", file=file, step_id=step.id, field="workflow",
                hint="move the approval gate into the parent workflow, before or after this step.",
            ))
            continue
        workflow._compiled[_key(step.id)] = child
    return problems


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


class _ChildPersistence:
    """A child run saves nothing of its own: no checkpoint, no run record; its result stays plain."""

    def __init__(self, redactor: Redactor, wall_clock: Any) -> None:
        self.redactor = redactor
        self.wall_clock = wall_clock

    def prepare(self, run: Any) -> None:
        return None

    def after_layer(self, run: Any) -> None:
        return None

    def finish(self, run: Any, result: Any) -> Any:
        return result


async def run_subworkflow(step: SubworkflowStep, ctx: StepContext, *, redactor: Redactor, wall_clock: Any,
                          run_id: str, budget_left: float | None, time_left: float | None) -> StepOutcome:
    from .checkpoints import redact_trace
    from .runner import _Run
    from .steps.base import StepOutcome

    child = child_workflow(ctx.workflow, step)
    limits: dict[str, float] = {}
    if budget_left is not None:
        own = child.config.budget_usd
        limits["budget_usd"] = max(min(own, budget_left) if own is not None else budget_left, 1e-12)
    if step.timeout is not None:  # the step's own timeout caps the child's run timeout too
        time_left = step.timeout if time_left is None else min(time_left, step.timeout)
    if time_left is not None:
        own_time = child.config.timeout
        limits["timeout"] = max(min(own_time, time_left) if own_time is not None else time_left, 1e-9)
    if limits:
        child = child.with_config(**limits)
    inputs = render_args(step.input, ctx.state, on_missing=ctx.missing_key, where="input")
    initial = {**copy.deepcopy(child.state), **inputs}
    provider = _PrefixedProvider(ctx.provider, step.id) if ctx.provider is not None else None
    child_redactor = redactor.child(child)
    run = _Run(child, initial, provider, dict(ctx.tools), ctx.clock, f"{run_id}/{step.id}",
               persistence=_ChildPersistence(child_redactor, wall_clock))  # type: ignore[arg-type]
    result = await run.execute()

    secrets = child_redactor.secret_values(result.state)
    trace = redact_trace(result.trace, child_redactor, secrets) if child_redactor.active else result.trace
    for event in trace:
        when = run.start + event.time
        if event.step_id is None:
            ctx.events.append((when, "subworkflow", step.id, None, {"event": event.kind, **event.data}))
        else:
            ctx.events.append((when, event.kind, f"{step.id}/{event.step_id}", event.attempt, dict(event.data)))

    usage = Usage()
    cost = 0.0
    for child_step in result.steps.values():
        usage = usage + Usage(input_tokens=child_step.input_tokens, output_tokens=child_step.output_tokens,
                              reasoning_tokens=child_step.reasoning_tokens)
        cost += child_step.cost_usd
    ctx.usage, ctx.cost_usd, ctx.attempts = usage, round(cost, 10), 1

    if result.status is not RunStatus.SUCCESS:
        failed = result.failed_step
        detail = result.steps[failed].error if failed and failed in result.steps else None
        if detail is None:  # stopped by its budget or timeout: the first step it did not run says why
            detail = next((r.error for r in result.steps.values() if r.error_code == result.reason.value), None)
        where = f" at step '{failed}'" if failed else ""
        raise StepError(
            f"subworkflow '{step.workflow}' {result.status.value}{where}: {detail or result.reason.value}",
            code=(result.steps[failed].error_code if failed and failed in result.steps else None)
            or result.reason.value,
        )
    state = result.state
    if step.return_keys is None:
        value: Any = state
    else:
        missing = [key for key in step.return_keys if key not in state]
        if missing:
            keys = ", ".join(sorted(key for key in state if key != "steps"))
            raise StepError(
                f"subworkflow '{step.workflow}' has no state key {', '.join(map(repr, missing))} to return "
                f"(its state keys: {keys or 'none'}). How to fix: correct return_keys, or make the child write it.",
                code="missing_return_key",
            )
        value = {key: copy.deepcopy(state[key]) for key in step.return_keys}
    return StepOutcome(value=value, attempts=1, usage=usage, cost_usd=round(cost, 10))
