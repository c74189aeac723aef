"""Running a workflow: layers of ready steps, run concurrently, written in file order.

One run goes like this:

1. Find the layer: every pending step whose dependencies are all finished.
   Steps whose dependencies were all skipped are skipped too.
2. Before starting it, stop if the budget is spent or the run timed out.
3. Take one snapshot of the state; run the layer's steps concurrently against
   it, each with its own fork of the clock and its own event buffer.
4. Apply the writes and merge the events in the order the steps appear in the
   file, so neither depends on which coroutine finished first.
5. A failed step stops the run after its layer; the remaining steps are
   skipped with an error naming the failure.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.clock import Clock, RunIdSource, SystemClock, derived_run_id, set_current_clock
from ..core.plain import to_plain
from ..core.types import Provider
from ..errors import AgentloomError, StepError, UsageError
from .checkpoints import Persistence
from .loader import dependency_graph, load_workflow
from .model import AgentStep, ApprovalGateStep, EmbedStep, LLMCallStep, RouterStep, SubworkflowStep, ToolStep, Workflow
from .paths import OutputPathError, parse_path, set_path
from .result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
from .steps.agent import run_agent
from .steps.approval_gate import PauseOutcome, PendingApproval, run_approval_gate
from .steps.base import StepContext, StepOutcome, ToolFunction
from .steps.embed import run_embed
from .steps.llm_call import run_llm_call
from .steps.router import run_router
from .steps.tool import run_tool
from .trace import Trace

__all__ = ["arun_workflow", "run_workflow"]

_RUNNERS: dict[type, Callable[[Any, StepContext], Awaitable[StepOutcome]]] = {
    LLMCallStep: run_llm_call,
    ToolStep: run_tool,
    RouterStep: run_router,
    EmbedStep: run_embed,
}


def run_workflow(
    workflow: Workflow | str | Path,
    *,
    state: Mapping[str, Any] | None = None,
    provider: Provider | None = None,
    tools: Mapping[str, ToolFunction] | None = None,
    clock: Clock | None = None,
    run_id: str | RunIdSource | None = None,
    checkpoint_dir: str | Path | None = None,
    runs_dir: str | Path | bool | None = None,
    redaction_salt: bytes | str | None = None,
    wall_clock: Callable[[], float] | None = None,
) -> WorkflowResult:
    """Run a workflow to the end and return its result (see :func:`arun_workflow`)."""
    coroutine = arun_workflow(workflow, state=state, provider=provider, tools=tools, clock=clock, run_id=run_id,
                              checkpoint_dir=checkpoint_dir, runs_dir=runs_dir, redaction_salt=redaction_salt,
                              wall_clock=wall_clock)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    return _run_in_thread(coroutine)


async def arun_workflow(
    workflow: Workflow | str | Path,
    *,
    state: Mapping[str, Any] | None = None,
    provider: Provider | None = None,
    tools: Mapping[str, ToolFunction] | None = None,
    clock: Clock | None = None,
    run_id: str | RunIdSource | None = None,
    checkpoint_dir: str | Path | None = None,
    runs_dir: str | Path | bool | None = None,
    redaction_salt: bytes | str | None = None,
    wall_clock: Callable[[], float] | None = None,
) -> WorkflowResult:
    """Run a workflow.

    ``state`` adds or replaces top-level keys of the file's ``state:``;
    ``tools`` maps tool names to callables (sync or async). Without ``clock``
    real time is used; pass a :class:`~pytest_agentloom.core.clock.VirtualClock`
    for runs whose output is identical byte for byte. Without ``run_id`` the id
    is derived from the workflow and the inputs, so it is repeatable too.

    What leaves the process is redacted (see :mod:`.redaction`). ``checkpoint_dir``
    turns checkpointing on (as ``config.checkpoint`` does); ``runs_dir`` is where
    the run record goes (``False``: none); ``redaction_salt`` keys the markers;
    ``wall_clock`` (``time.time`` by default) dates checkpoints and records.
    See :mod:`.checkpoints` and :mod:`.records`.
    """
    loaded = workflow if isinstance(workflow, Workflow) else load_workflow(workflow)
    _check_tools_argument(tools)
    if state is not None and not isinstance(state, Mapping):
        raise UsageError(f"state must map top-level state keys to values, got {type(state).__name__}")
    if provider is not None and not callable(getattr(provider, "complete", None)):
        raise UsageError(
            f"provider must have an async complete(request) method, got {type(provider).__name__}. "
            "How to fix: pass provider=Scripted({...}) or a provider from pytest_agentloom.providers."
        )
    initial = {**copy.deepcopy(loaded.state), **copy.deepcopy(dict(state or {}))}
    registry = _tool_registry(loaded, tools)
    persistence = Persistence.for_run(loaded, checkpoint_dir=checkpoint_dir, runs_dir=runs_dir,
                                      redaction_salt=redaction_salt, wall_clock=wall_clock)
    run = _Run(loaded, initial, provider, registry, clock or SystemClock(), _run_id(run_id, loaded, initial),
               persistence=persistence)
    return await run.execute()


def _run_id(source: str | RunIdSource | None, workflow: Workflow, state: dict[str, Any]) -> str:
    if isinstance(source, str):
        return source
    if callable(source):
        return source()
    import json

    definition = json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str)
    inputs = json.dumps(to_plain(state), sort_keys=True)
    return derived_run_id(definition, inputs)


def _check_tools_argument(tools: Any) -> None:
    """``tools`` is a mapping of names to callables, or a list of named tools (``@tool``, tool classes)."""
    if tools is None or isinstance(tools, Mapping):
        return
    from ..tools.registry import is_tool_like

    if isinstance(tools, (list, tuple)):
        nameless = [item for item in tools if not is_tool_like(item)]
        if not nameless:
            return
        shown = getattr(nameless[0], "__name__", repr(nameless[0]))
        raise UsageError(
            f"tools must map tool names to callables, got list with {shown}, which is not a tool. "
            f"How to fix: pass tools={{'{shown}': {shown}}}, or decorate it with @pytest_agentloom.tools.tool."
        )
    raise UsageError(f"tools must map tool names to callables, got {type(tools).__name__}")


def _tool_registry(workflow: Workflow, tools: Any) -> Any:
    """The run's tools: the four built-ins (bound to ``config.sandbox``), then the caller's, which win."""
    from ..tools import Sandbox, ToolRegistry, builtin_tools

    registry = ToolRegistry(builtin_tools(Sandbox(workflow.config.sandbox, base_dir=workflow.base_dir)))
    registry.update(tools or {})
    return registry


def _run_in_thread(coroutine: Awaitable[WorkflowResult]) -> WorkflowResult:
    """``run_workflow`` called from inside an event loop: run on a fresh loop in a thread."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(coroutine)  # type: ignore[arg-type]
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="agentloom-run")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


class _Run:
    """The mutable bookkeeping of one run; :meth:`execute` drives it layer by layer."""

    def __init__(self, workflow: Workflow, state: dict[str, Any], provider: Provider | None,
                 tools: dict[str, ToolFunction], clock: Clock, run_id: str,
                 persistence: Persistence | None = None) -> None:
        self.workflow = workflow
        self.state = state
        self.provider = provider
        self.tools = tools
        self.clock = clock
        self.run_id = run_id
        self.graph = dependency_graph(workflow)
        self.routers_of: dict[str, list[str]] = {}  # step id -> the routers that may choose it, in file order
        for step in workflow.steps:
            if isinstance(step, RouterStep):
                for target in step.targets():
                    self.routers_of.setdefault(target, []).append(step.id)
        self.order = [step.id for step in workflow.steps]
        self.results: dict[str, StepResult] = {}
        self.trace = Trace()
        self.start = clock.now()
        self.status = RunStatus.SUCCESS
        self.reason = TerminationReason.COMPLETED
        self.failed_step: str | None = None
        self.persistence = persistence or Persistence.for_run(workflow)
        self.paused_step: str | None = None
        self.pending_approval: PendingApproval | None = None  # the gate a resumed run paused at
        self.approval_decision: str | None = None

    def now(self) -> float:
        return self.clock.now() - self.start

    async def execute(self) -> WorkflowResult:
        self.trace.append(self.now(), "run_start", workflow=self.workflow.name, run_id=self.run_id)
        self.persistence.prepare(self)
        layer_number = 0
        while pending := [sid for sid in self.order if sid not in self.results]:
            layer = self._next_layer(pending)
            if not layer:
                continue  # only skips were decided; look again
            if self._out_of_budget_or_time():
                break
            layer_number += 1
            self.trace.append(self.now(), "layer_start", layer=layer_number, steps=layer)
            await self._run_layer(layer)
            if self.failed_step:
                self.paused_step = None
                self._skip_rest_after_failure()
                break
            self.persistence.after_layer(self)
            if self.paused_step:
                break
        self.trace.append(self.now(), "run_end", status=self.status.value, reason=self.reason.value)
        result = WorkflowResult(
            workflow=self.workflow.name, run_id=self.run_id, status=self.status, reason=self.reason,
            state=copy.deepcopy(self.state),
            steps={sid: self.results[sid] for sid in self.order if sid in self.results},
            trace=self.trace, failed_step=self.failed_step, paused_step=self.paused_step,
        )
        return self.persistence.finish(self, result)  # redacted; checkpoint and run record written

    # -- choosing what runs -------------------------------------------------------------------------------

    def _next_layer(self, pending: list[str]) -> list[str]:
        layer = []
        for step_id in pending:
            deps = self.graph[step_id]
            if not all(dep in self.results for dep in deps):
                continue
            if self._skip_if_unchosen(step_id):
                return []
            if deps and all(self.results[dep].status is StepStatus.SKIPPED for dep in deps):
                self._skip(step_id, "all of its dependencies were skipped", "dependencies_skipped")
                return []
            layer.append(step_id)
        return layer

    def _out_of_budget_or_time(self) -> bool:
        config = self.workflow.config
        spent = sum(result.cost_usd for result in self.results.values())
        if config.budget_usd is not None and spent >= config.budget_usd:
            self._stop(RunStatus.BUDGET_EXCEEDED, TerminationReason.BUDGET_EXCEEDED,
                       f"budget of ${config.budget_usd:g} reached (spent ${spent:.6f})", "budget_exceeded")
            return True
        if config.timeout is not None and self.now() >= config.timeout:
            self._stop(RunStatus.TIMEOUT, TerminationReason.TIMEOUT,
                       f"run timeout of {config.timeout:g}s reached", "timeout")
            return True
        return False

    def _stop(self, status: RunStatus, reason: TerminationReason, why: str, code: str) -> None:
        self.status, self.reason = status, reason
        for step_id in self.order:
            if step_id not in self.results:
                self._skip(step_id, f"run stopped: {why}", code)

    def _skip(self, step_id: str, why: str, code: str) -> None:
        self.results[step_id] = StepResult(step_id, StepStatus.SKIPPED, error=why, error_code=code)
        self.trace.append(self.now(), "step_skip", step_id, reason=why)

    def _skip_rest_after_failure(self) -> None:
        failed = {sid for sid, r in self.results.items() if r.status is StepStatus.FAILED}
        for step_id in self.order:
            if step_id in self.results:
                continue
            ancestor = self._failed_ancestor(step_id, failed)
            if ancestor:
                self._skip(step_id, f"depends on failed step '{ancestor}'", "dependency_failed")
            else:
                self._skip(step_id, f"run stopped after step '{self.failed_step}' failed", "run_failed")

    def _failed_ancestor(self, step_id: str, failed: set[str]) -> str | None:
        seen: set[str] = set()
        todo = list(self.graph[step_id])
        while todo:
            dep = todo.pop(0)
            if dep in failed:
                return dep
            if dep not in seen:
                seen.add(dep)
                todo.extend(self.graph[dep])
        return None

    # -- running a layer ----------------------------------------------------------------------------------

    async def _run_layer(self, layer: list[str]) -> None:
        snapshot = _snapshot(self.state)
        contexts = [self._context(step_id, snapshot) for step_id in layer]
        outcomes = await asyncio.gather(*(self._run_step(ctx) for ctx in contexts))
        self.clock.join(ctx.clock for ctx in contexts)
        for ctx, outcome in zip(contexts, outcomes, strict=True):
            self._settle(ctx, outcome)

    def _context(self, step_id: str, snapshot: dict[str, Any]) -> StepContext:
        return StepContext(
            workflow=self.workflow, state=snapshot, clock=self.clock.fork(), provider=self.provider,
            tools=self.tools, step_id=step_id,
        )

    async def _run_step(self, ctx: StepContext) -> StepOutcome | StepError:
        step = self.workflow.step(ctx.step_id)
        ctx.event("step_start", type=step.type)
        token = set_current_clock(ctx.clock)
        try:
            if isinstance(step, ApprovalGateStep):
                return await self._approval_gate(step, ctx)
            if isinstance(step, AgentStep):
                return await self._agent(step, ctx)
            if isinstance(step, SubworkflowStep):
                return await self._subworkflow(step, ctx)
            return await _RUNNERS[type(step)](step, ctx)
        except StepError as exc:
            return exc
        except AgentloomError as exc:
            return StepError(str(exc), code=exc.code)
        finally:
            from ..core.clock import _current

            _current.reset(token)

    def _settle(self, ctx: StepContext, outcome: StepOutcome | StepError) -> None:
        """Merge a step's events and apply its writes; a write that fails fails the step."""
        for time, kind, step_id, attempt, data in ctx.events:
            self.trace.append(time - self.start, kind, step_id, attempt, **data)
        step = self.workflow.step(ctx.step_id)
        ended = ctx.clock.now() - self.start
        if isinstance(outcome, PauseOutcome):
            self._pause(ctx, ended, outcome)
            return
        if isinstance(outcome, StepOutcome):
            try:
                for path, value in outcome.writes.items():  # a conversation (003): written only on success
                    set_path(self.state, parse_path(path), copy.deepcopy(value))
                    self.trace.append(ended, "state_write", step.id, path=path)
                self._write(step.id, step.output, outcome.value, ended, raw=outcome.raw)
            except OutputPathError as exc:
                outcome = StepError(str(exc), code=exc.code)
        result = self._result(ctx, outcome)
        result.started_at = round(ctx.events[0][0] - self.start, 6) if ctx.events else None  # its step_start
        result.ended_at = round(ended, 6)
        self.results[step.id] = result
        self.trace.append(ended, "step_end", step.id, result.attempts or None, status=result.status.value,
                          **({"error": result.error} if result.error else {}))
        if result.status is StepStatus.FAILED and self.failed_step is None:
            self.failed_step = step.id
            self.status, self.reason = RunStatus.FAILED, TerminationReason.STEP_FAILED
            if result.error_code == "cancelled":  # an agent stopped as 'cancelled' cancels the run
                self.status, self.reason = RunStatus.CANCELLED, TerminationReason.CANCELLED
        if isinstance(outcome, StepOutcome) and outcome.chosen is not None and isinstance(step, RouterStep):
            self._skip_unchosen(step, outcome.chosen)

    async def _approval_gate(self, step: ApprovalGateStep, ctx: StepContext) -> StepOutcome:
        pending = self.pending_approval if self.pending_approval and self.pending_approval.step_id == step.id else None
        return await run_approval_gate(
            step, ctx, pending=pending, decision=self.approval_decision if pending else None,
            wall_clock=self.persistence.wall_clock, redactor=self.persistence.redactor, run_id=self.run_id,
        )

    async def _agent(self, step: AgentStep, ctx: StepContext) -> StepOutcome:
        """An agent step; on a resume, the agent that paused continues with the decision."""
        pending = self.pending_approval
        if pending is not None and pending.step_id == step.id and pending.detail is not None:
            return await run_agent(step, ctx, snapshot=pending.detail.get("loop"), decision=self.approval_decision,
                                   redactor=self.persistence.redactor)
        return await run_agent(step, ctx)

    async def _subworkflow(self, step: SubworkflowStep, ctx: StepContext) -> StepOutcome:
        """A subworkflow step; what is left of this run's budget and timeout caps the child's."""
        from .subworkflow import run_subworkflow

        config = self.workflow.config
        spent = sum(result.cost_usd for result in self.results.values())
        return await run_subworkflow(
            step, ctx, redactor=self.persistence.redactor, wall_clock=self.persistence.wall_clock,
            run_id=self.run_id, budget_left=None if config.budget_usd is None else config.budget_usd - spent,
            time_left=None if config.timeout is None else config.timeout - self.now(),
        )

    def _pause(self, ctx: StepContext, ended: float, outcome: PauseOutcome | None = None) -> None:
        """An approval gate asked to pause: the run stops after this layer, waiting for a decision."""
        started = round(ctx.events[0][0] - self.start, 6) if ctx.events else None
        usage = outcome.usage if outcome is not None else ctx.usage
        self.results[ctx.step_id] = StepResult(
            ctx.step_id, StepStatus.PAUSED, attempts=1, started_at=started, ended_at=round(ended, 6),
            finish_reason=outcome.finish_reason if outcome is not None else None,
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens, cost_usd=outcome.cost_usd if outcome is not None else 0.0,
        )
        self.trace.append(ended, "step_end", ctx.step_id, 1, status=StepStatus.PAUSED.value)
        self.paused_step = self.paused_step or ctx.step_id
        detail = getattr(outcome, "detail", None)  # an agent's loop state, to continue from on resume
        previous = self.pending_approval
        owns_pause = self.paused_step == ctx.step_id  # with two gates in one layer, the first one waits
        if owns_pause and (previous is None or previous.step_id != ctx.step_id or detail is not None):
            self.pending_approval = PendingApproval(ctx.step_id, ctx.clock.now(), self.persistence.wall_clock(),
                                                    detail=detail)  # keeps the time it started waiting
        if self.failed_step is None:
            self.status, self.reason = RunStatus.PAUSED, TerminationReason.AWAITING_APPROVAL

    def _write(self, step_id: str, output: str | None, value: Any, time: float, raw: str | None = None) -> None:
        if output is not None:
            set_path(self.state, parse_path(output), copy.deepcopy(value))
            self.trace.append(time, "state_write", step_id, path=output)
        steps = self.state.setdefault("steps", {})
        # steps.<id>.output holds the raw reply text when the output was parsed (003, structured output)
        steps[step_id] = {"output": copy.deepcopy(value if raw is None else raw), "status": StepStatus.SUCCESS.value}
        self.trace.append(time, "state_write", step_id, path=f"steps.{step_id}")
        if isinstance(self.workflow.step(step_id), ApprovalGateStep):
            self.state.setdefault("_approval", {})[step_id] = value
            self.trace.append(time, "state_write", step_id, path=f"_approval.{step_id}")

    def _result(self, ctx: StepContext, outcome: StepOutcome | StepError) -> StepResult:
        step_id = ctx.step_id
        if isinstance(outcome, StepError):
            # an agent's stop, or a tool loop that failed part way, still spent what it spent
            return StepResult(step_id, StepStatus.FAILED, error=str(outcome), error_code=outcome.code,
                              attempts=ctx.attempts, finish_reason=getattr(outcome, "finish_reason", None),
                              input_tokens=ctx.usage.input_tokens, output_tokens=ctx.usage.output_tokens,
                              reasoning_tokens=ctx.usage.reasoning_tokens, cost_usd=round(ctx.cost_usd, 10))
        return StepResult(
            step_id, StepStatus.SUCCESS, output=outcome.value, attempts=outcome.attempts,
            finish_reason=outcome.finish_reason, input_tokens=outcome.usage.input_tokens,
            output_tokens=outcome.usage.output_tokens, reasoning_tokens=outcome.usage.reasoning_tokens,
            cost_usd=outcome.cost_usd, model=outcome.model, provider=outcome.provider,
            reasoning_content=outcome.reasoning_content, time_to_first_token=outcome.time_to_first_token,
        )

    def _skip_unchosen(self, router: RouterStep, chosen: str) -> None:
        for target in router.targets():
            if target != chosen and target not in self.results:
                self._skip_if_unchosen(target)

    def _skip_if_unchosen(self, step_id: str) -> bool:
        """Skip a router target once every router that may choose it has finished and none that ran did.

        A step chosen by any router runs, whatever the other routers chose. Routers that were
        skipped (or failed) choose nothing; if none of a target's routers ran, the usual skip rules apply.
        """
        passed_over = []
        for router_id in self.routers_of.get(step_id, ()):
            result = self.results.get(router_id)
            if result is None:
                return False  # a router still to run may choose it
            if result.status is StepStatus.SUCCESS:
                if result.output == step_id:
                    return False
                passed_over.append(f"router '{router_id}' (it chose '{result.output}')")
        if not passed_over:
            return False
        self._skip(step_id, "not chosen by " + " or ".join(passed_over), "not_chosen")
        return True


_ATOMS = (str, int, float, bool, type(None))


def _snapshot(value: Any) -> Any:
    """A deep copy of the state for one layer, fast for the JSON-like data states hold.

    Dicts and lists are rebuilt, immutable scalars shared, anything else goes through
    ``copy.deepcopy``. This runs once per layer, on a state that grows with the run.
    """
    kind = type(value)
    if kind is dict:
        return {key: _snapshot(item) for key, item in value.items()}
    if kind is list:
        return [_snapshot(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)
