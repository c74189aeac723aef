"""One run of a workflow: layers of ready steps, run concurrently, written in file order.

A run goes like this (:meth:`Run.execute`):

1. Find the layer: every pending step whose dependencies are all finished
   (a :class:`~.._format.graph.ReadySet` keeps them as steps settle, so this costs what
   settled, not a scan of the steps still pending). Steps whose dependencies
   were all skipped are skipped too.
2. Before starting it, stop if the budget is spent or the run timed out.
3. Run the layer's steps concurrently against the state as it is, each with
   its own fork of the clock and its own event buffer.
4. Apply the writes and merge the events in the order the steps appear in the
   file, so neither depends on which coroutine finished first.
5. A failed step stops the run after its layer; the remaining steps are
   skipped with an error naming the failure. ``config.on_step_failure`` (upstream's
   key) may say otherwise: ``skip_downstream`` skips only the steps that depend on
   a failed step, each naming its nearest failed ancestor, and runs the rest;
   ``continue`` runs every step, its dependents against the state as it is (a
   router that failed chooses none of its targets). The run's status is
   ``failed`` either way, ``failed_step`` the first step that failed.

What a run leaves behind is not its business: it calls its :class:`RunHooks`
after each layer and at the end. :class:`~.._persist.redacted_writes.Persistence` (checkpoints,
run records, redaction) implements them for a top-level run, :class:`ChildHooks`
for a subworkflow's child run, which leaves nothing behind. A run resumed from a
checkpoint starts from a :class:`ResumePoint`.

Every step of a layer reads the state as it was when the layer started, without
a copy of it: no write reaches the state until the whole layer has finished
(step 4), and what a step hands on to code that could change it is a copy of
just that value (tool arguments and subworkflow inputs:
:func:`~.._evaluate.templates.render_args`). Values written to the state are copies too
(:func:`~pytest_agentloom._core.plain.copy_plain`), so nothing the state holds is shared with a step's result
or a tool's memory. A step's cost thus grows with what it reads and writes,
never with the size of the state.

Nor is the initial state copied: the run starts from a new top-level dict whose
values are those of the workflow's ``state:`` and the caller's ``state=``, shared.
A write copies, once, each container on its path that the run did not make
(copy on write, :meth:`Run._own_path`), so neither the workflow nor the caller's
values ever change; the result the caller gets holds a copy of the final state
(:func:`~.._outcome.redacted.redact_result`). One run thus copies a big state
once, on the way out, and copies in only what it writes through.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from ..._core.clock import Clock, enter_clock, leave_clock
from ..._core.eager import gather_eager
from ..._core.plain import copy_plain
from ..._core.state_paths import OutputPathError, parse_path, set_path
from ..._core.step_notes import running_step, step_notes
from ..._core.types import Provider
from ..._redaction.redactor import Redactor
from ...errors import AgentloomError, CassetteMismatchError, StepError, UnrecordableResponseError
from .._format.graph import ReadySet, dependency_graph
from .._format.model import AnyStep, ApprovalGateStep, RouterStep, Workflow
from .._format.redaction_patterns import child_redactor
from .._outcome.result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
from .._outcome.step_context import (
    Awaiting,
    ChildRun,
    PauseOutcome,
    PendingApproval,
    StepContext,
    StepOutcome,
    ToolFunction,
)
from .._outcome.trace import Trace
from .checkpoint_snapshot import CheckpointSnapshot
from .child_pause import child_resume_point, saved_child
from .dispatch import STEP_RUNNERS, load_runners
from .resume_point import ResumePoint
from .skips import nearest_failed
from .slots import StepSlots

__all__ = ["ChildHooks", "ResumePoint", "Run", "RunHooks"]


class RunHooks(Protocol):
    """Where a run meets the world: its redactor and wall clock, and what happens after each layer and at the end.

    ``finish`` returns the result the caller gets (a top-level run's is redacted, and
    carries its checkpoint and run record).
    """

    @property
    def redactor(self) -> Redactor: ...

    def wall_time(self) -> float: ...

    def after_layer(self, run: Run) -> None: ...

    def finish(self, run: Run, result: WorkflowResult) -> WorkflowResult: ...


class ChildHooks:
    """The hooks of a subworkflow's child run: no checkpoint, no run record, the result stays plain."""

    def __init__(self, redactor: Redactor, wall_time: Callable[[], float]) -> None:
        self._redactor = redactor
        self._wall_time = wall_time

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    def wall_time(self) -> float:
        return self._wall_time()

    def after_layer(self, run: Run) -> None:
        return None

    def finish(self, run: Run, result: WorkflowResult) -> WorkflowResult:
        return result


@dataclass(frozen=True)
class _Shape:
    """What a run needs to know of its workflow's graph; worked out once per workflow, never changed."""

    graph: dict[str, list[str]]  # step id -> its dependencies (a router's targets depend on it)
    routers_of: dict[str, list[str]]  # step id -> the routers that may choose it, in file order
    order: list[str]  # the step ids in file order
    steps: dict[str, AnyStep]  # looked up several times per step; the first of an id, as Workflow.step()
    ready: ReadySet  # before anything has settled: each run takes a copy

    @classmethod
    def of(cls, workflow: Workflow) -> _Shape:
        graph = dependency_graph(workflow)
        routers_of: dict[str, list[str]] = {}
        for step in workflow.steps:
            if isinstance(step, RouterStep):
                for target in step.targets():
                    routers_of.setdefault(target, []).append(step.id)
        steps: dict[str, AnyStep] = {}
        for step in reversed(workflow.steps):
            steps[step.id] = step
        load_runners(workflow.steps)  # before the first step runs, so an import error fails the run up front
        return cls(graph, routers_of, [step.id for step in workflow.steps], steps, ReadySet(graph))


class Run:
    """The bookkeeping of one run; :meth:`execute` drives it layer by layer.

    Steps reach the run through the :class:`~.._outcome.step_context.RunServices` it implements
    (``run_id``, ``redactor``, ``wall_time``, ``budget_left``, ``time_left``,
    ``awaiting``, ``run_child``). Hooks read ``state``, ``results``, ``trace`` and the
    status fields, and may add trace events with :meth:`event`.
    """

    def __init__(self, workflow: Workflow, state: dict[str, Any], *, provider: Provider | None,
                 tools: Mapping[str, ToolFunction], clock: Clock, run_id: str, hooks: RunHooks,
                 resume: ResumePoint | None = None) -> None:
        self.workflow = workflow
        self.state = state  # a dict of the run's own; what it holds may be shared (see _own_path)
        self._own: dict[int, Any] = {id(state): state}  # containers the run made or copied, by id (kept alive)
        self.provider = provider
        self.tools = tools
        self.clock = clock
        self.run_id = run_id
        self.hooks = hooks
        self.resume = resume
        shape = workflow.memoized("run_shape", lambda: _Shape.of(workflow))  # read only: shared by runs
        self.graph = shape.graph
        self.routers_of = shape.routers_of
        self.order = shape.order
        self.steps = shape.steps
        self.ready = shape.ready.copy()
        self.results: dict[str, StepResult] = {}
        self._spent = 0.0  # the cost of the results so far, added up in the order they arrived
        self.trace = Trace()
        self.start = clock.now()
        self.status = RunStatus.SUCCESS
        self.reason = TerminationReason.COMPLETED
        self.failed_step: str | None = None
        self._below_failure: dict[str, tuple[int, str]] = {}  # skip_downstream: skipped step -> nearest failure
        self.paused_step: str | None = None
        self.pending_approval: PendingApproval | None = None  # the pause a resumed run starts at, then this run's
        self.approval_decision: str | None = None

    # -- what steps may ask (RunServices) -----------------------------------------------------------------

    @property
    def redactor(self) -> Redactor:
        return self.hooks.redactor

    def wall_time(self) -> float:
        return self.hooks.wall_time()

    def now(self) -> float:
        """Seconds since the run started, on its clock (a resumed run counts the time before its pause)."""
        return self.clock.now() - self.start

    def spent(self) -> float:
        return self._spent

    def budget_left(self) -> float | None:
        budget = self.workflow.config.budget_usd
        return None if budget is None else budget - self.spent()

    def time_left(self) -> float | None:
        timeout = self.workflow.config.timeout
        return None if timeout is None else timeout - self.now()

    def awaiting(self, step_id: str) -> Awaiting | None:
        pending = self.pending_approval
        if pending is None or pending.step_id != step_id:
            return None
        return Awaiting(pending, self.approval_decision)

    async def run_child(self, workflow: Workflow, state: dict[str, Any], *, step_id: str, clock: Clock,
                        provider: Provider | None, paused: Mapping[str, Any] | None = None,
                        decision: str | None = None, inherited: Mapping[str, Any] | None = None) -> ChildRun:
        redactor = child_redactor(self.redactor, workflow)
        resume = None
        if paused is not None:  # the child paused before: it goes on from there (engine._run.child_pause)
            resume, state = child_resume_point(paused, workflow, decision, inherited)
        child = Run(workflow, state, provider=provider, tools=dict(self.tools), clock=clock,
                    run_id=f"{self.run_id}/{step_id}", hooks=ChildHooks(redactor, self.hooks.wall_time),
                    resume=resume)
        result = await child.execute()
        saved = saved_child(child.checkpoint_snapshot(), redactor) if result.status is RunStatus.PAUSED else None
        return ChildRun(result, child.start, redactor, saved)

    def paused_path(self) -> str | None:
        """The step the run waits at, a gate inside a subworkflow named by its path (``review/approve``)."""
        if self.paused_step is None:
            return None
        pending = self.pending_approval
        detail = pending.detail if pending is not None and pending.step_id == self.paused_step else None
        inner = detail.get("subworkflow") if detail is not None else None
        if isinstance(inner, Mapping) and isinstance(inner.get("paused_step"), str):
            return f"{self.paused_step}/{inner['paused_step']}"
        return self.paused_step

    def checkpoint_snapshot(self) -> CheckpointSnapshot:
        """The run as a checkpoint saves it: the one place the checkpoint format reads the run's attributes."""
        pending = self.pending_approval
        earlier = self.resume.pending if self.resume else None
        if pending and earlier and earlier.step_id == pending.step_id and pending.detail is None:
            pending = earlier  # a gate still waiting keeps the time it started waiting
        return CheckpointSnapshot(
            run_id=self.run_id, reason=self.reason.value, failed_step=self.failed_step,
            paused_step=self.paused_path(), pending_approval=pending if self.paused_step else None,
            steps=MappingProxyType({sid: self.results[sid] for sid in self.order if sid in self.results}),
            elapsed_seconds=self.now(), resumes=self.resume.resumes if self.resume else 0,
            workflow=self.workflow, state=MappingProxyType(self.state),
        )

    def event(self, kind: str, step_id: str | None = None, attempt: int | None = None, **data: Any) -> None:
        """Add an event to the trace at the run's current time (hooks use it, e.g. ``checkpoint_saved``)."""
        self.trace.append(self.now(), kind, step_id, attempt, **data)

    # -- the loop -------------------------------------------------------------------------------------------

    async def execute(self) -> WorkflowResult:
        self.event("run_start", workflow=self.workflow.name, run_id=self.run_id)
        if self.resume is not None:
            self._take_over(self.resume)
        layer_number = 0
        while len(self.results) < len(self.order):
            layer = self._next_layer()
            if not layer:
                break  # nothing can run (cannot happen in a checked workflow: it has no cycles)
            config = self.workflow.config
            if (config.budget_usd is not None or config.timeout is not None) and self._out_of_budget_or_time():
                break
            layer_number += 1
            self.event("layer_start", layer=layer_number, steps=layer)
            await self._run_layer(layer)
            if self.failed_step and (config.on_step_failure == "stop" or self.paused_step):
                self.paused_step = None  # a failed run does not wait for a decision
                self._skip_rest_after_failure()
                break
            self.hooks.after_layer(self)
            if self.paused_step:
                break
        self.event("run_end", status=self.status.value, reason=self.reason.value)
        result = WorkflowResult(
            workflow=self.workflow.name, run_id=self.run_id, status=self.status, reason=self.reason,
            state=self.state,  # the run is over: nothing writes to it any more
            steps={sid: self.results[sid] for sid in self.order if sid in self.results},
            trace=self.trace, failed_step=self.failed_step, paused_step=self.paused_path(),
        )
        return self.hooks.finish(self, result)

    def _take_over(self, resume: ResumePoint) -> None:
        """A resumed run: the finished steps, the elapsed time and the pause are the checkpoint's."""
        for result in copy.deepcopy(resume.results).values():
            self._record(result)
            if result.status is StepStatus.FAILED and self.failed_step is None:  # on_step_failure went on past it
                self.failed_step = result.step_id
                self.status, self.reason = RunStatus.FAILED, TerminationReason.STEP_FAILED
        self.start = self.clock.now() - resume.elapsed
        self.pending_approval = resume.pending
        self.approval_decision = resume.decision
        self.event("run_resume", run_id=self.run_id, resumes=resume.resumes, completed=list(resume.results),
                   warnings=resume.warnings)

    # -- choosing what runs -------------------------------------------------------------------------------

    def _next_layer(self) -> list[str]:
        """The ready steps, in file order, once the skips they lead to are decided.

        Ready steps are taken first in file order; skipping one may make earlier
        ones ready, which are taken next, so skips are decided (and traced) in the
        order a fresh scan of the file after each skip would find them.
        """
        layer = []
        while (step_id := self.ready.pop()) is not None:
            if step_id in self.results:
                continue  # skipped early: a router passed it over, or the run stopped
            if self.failed_step and self._skip_below_failure(step_id):
                continue
            if step_id in self.routers_of and self._skip_if_unchosen(step_id):
                continue
            if self._all_skipped(self.graph[step_id]):
                self._skip(step_id, "all of its dependencies were skipped", "dependencies_skipped")
                continue
            layer.append(step_id)
        if len(layer) > 1:
            layer.sort(key=self.ready.position.__getitem__)
        return layer

    def _skip_below_failure(self, step_id: str) -> bool:
        """``on_step_failure: skip_downstream``: skip a step below a failed one, naming the nearest failure.

        The nearest is what :func:`~.skips.nearest_failed` finds (fewest steps away, then the earliest-listed
        dependency), worked out from the dependencies' own answers, so a long chain costs one look per step.
        """
        if self.workflow.config.on_step_failure != "skip_downstream":
            return False
        nearest: tuple[int, str] | None = None
        for dep in self.graph[step_id]:
            found = (0, dep) if self.results[dep].status is StepStatus.FAILED else self._below_failure.get(dep)
            if found is not None and (nearest is None or found[0] + 1 < nearest[0]):
                nearest = (found[0] + 1, found[1])
        if nearest is None:
            return False
        self._below_failure[step_id] = nearest
        self._skip(step_id, f"depends on failed step '{nearest[1]}'", "dependency_failed")
        return True

    def _all_skipped(self, deps: list[str]) -> bool:
        """Whether the step has dependencies and every one of them was skipped (most often the first is not)."""
        for dep in deps:
            if self.results[dep].status is not StepStatus.SKIPPED:
                return False
        return bool(deps)

    def _record(self, result: StepResult) -> None:
        """Keep a step's result: its cost counts against the budget, its dependents wait for one step fewer."""
        previous = self.results.get(result.step_id)
        self.results[result.step_id] = result
        if previous is None:
            self._spent += result.cost_usd
            self.ready.settled(result.step_id)
        else:  # replaced (not done by the engine today): count the costs again, in their order
            self._spent = sum(r.cost_usd for r in self.results.values())

    def _out_of_budget_or_time(self) -> bool:
        config = self.workflow.config
        spent = self.spent()
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
        if self.failed_step is None:  # a step that failed before (on_step_failure went on) stays the run's reason
            self.status, self.reason = status, reason
        for step_id in self.order:
            if step_id not in self.results:
                self._skip(step_id, f"run stopped: {why}", code)

    def _skip(self, step_id: str, why: str, code: str) -> None:
        self._record(StepResult(step_id, StepStatus.SKIPPED, error=why, error_code=code))
        self.event("step_skip", step_id, reason=why)

    def _skip_rest_after_failure(self) -> None:
        failed = {sid for sid, r in self.results.items() if r.status is StepStatus.FAILED}
        pending = [step_id for step_id in self.order if step_id not in self.results]
        nearest = nearest_failed(self.graph, pending, failed)
        for step_id in pending:
            ancestor = nearest.get(step_id)
            if ancestor:
                self._skip(step_id, f"depends on failed step '{ancestor[1]}'", "dependency_failed")
            else:
                self._skip(step_id, f"run stopped after step '{self.failed_step}' failed", "run_failed")

    def _skip_unchosen(self, router: RouterStep, chosen: str) -> None:
        for target in router.targets():
            if target != chosen and target not in self.results:
                self._skip_if_unchosen(target)

    def _skip_if_unchosen(self, step_id: str) -> bool:
        """Skip a router target once every router that may choose it has finished and none that ran did.

        A step chosen by any router runs, whatever the other routers chose. A router that failed
        passes its targets over (a run goes on past a failure only under ``on_step_failure: continue``);
        routers that were skipped choose nothing, and if none of a target's routers ran, the usual skip
        rules apply.
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
            elif result.status is StepStatus.FAILED:  # on_step_failure: continue; a failed router chose nothing
                passed_over.append(f"router '{router_id}' (it failed)")
        if not passed_over:
            return False
        self._skip(step_id, "not chosen by " + " or ".join(passed_over), "not_chosen")
        return True

    # -- running a layer ----------------------------------------------------------------------------------

    async def _run_layer(self, layer: list[str]) -> None:
        """Run one layer's steps concurrently, then settle them in file order.

        The steps read ``self.state`` directly: nothing writes to it until they have
        all finished, so each sees the state as the layer started (a read-only view
        keeps a step from writing to its top level by mistake).
        """
        state = MappingProxyType(self.state)
        limit = self.workflow.config.max_concurrent_steps
        if len(layer) == 1 and (limit is None or limit >= 1):  # a chain's layer: nothing runs beside it
            ctx = self._context(layer[0], state)
            outcome = await self._run_step(ctx)
            self.clock.join((ctx.clock,))
            self._settle(ctx, outcome)
            return
        contexts = [self._context(step_id, state) for step_id in layer]
        if limit is None or limit >= len(layer):  # every step has a slot: nothing to wait for
            outcomes = await gather_eager([self._run_step(ctx) for ctx in contexts])
        else:
            slots = StepSlots(limit, self.clock.now())
            outcomes = await gather_eager([slots.run(ctx.clock, self._run_step(ctx)) for ctx in contexts])
        self.clock.join(ctx.clock for ctx in contexts)
        for ctx, outcome in zip(contexts, outcomes, strict=True):
            self._settle(ctx, outcome)

    def _context(self, step_id: str, state: Mapping[str, Any]) -> StepContext:
        return StepContext(self.workflow, state, self.clock.fork(), self.provider, self.tools, step_id, self)

    async def _run_step(self, ctx: StepContext) -> StepOutcome | StepError:
        step = self.steps[ctx.step_id]
        ctx.event("step_start", type=step.type)
        token = enter_clock(ctx.clock)  # the step's clock is current_clock() inside it (use_clock, unwrapped)
        notes = step_notes.set(ctx.event)  # what a provider below notes (an injected fault) lands on this step
        running = running_step.set(ctx.step_id)
        try:
            return await STEP_RUNNERS[type(step)](step, ctx)
        except StepError as exc:
            return exc
        except (CassetteMismatchError, UnrecordableResponseError) as exc:  # ReplayErrors that fail their step as
            # they are, like a StepError, and are never retried (a retry would get the same answer)
            return StepError(str(exc), code=exc.code, retryable=False)
        except AgentloomError as exc:
            return StepError(str(exc), code=exc.code)
        finally:
            running_step.reset(running)
            step_notes.reset(notes)
            leave_clock(token)

    # -- settling a step ----------------------------------------------------------------------------------

    def _settle(self, ctx: StepContext, outcome: StepOutcome | StepError) -> None:
        """Merge a step's events and apply its writes; a write that fails fails the step.

        The events of settling (writes, ``step_end``) are gathered like the step's own, at the
        step's clock reading, and merged after them in one go.
        """
        start = self.start
        self.trace.merge(ctx.events, start)
        step = self.steps[ctx.step_id]
        now = ctx.clock.now()
        if isinstance(outcome, PauseOutcome):
            self._pause(ctx, now - start, outcome)
            return
        settled: list[tuple[float, str, str | None, int | None, dict[str, Any]]] = []
        if isinstance(outcome, StepOutcome):
            try:
                if outcome.writes:  # a conversation: written only on success
                    for path, value in outcome.writes.items():
                        self._set(parse_path(path), copy_plain(value))
                        settled.append((now, "state_write", step.id, None, {"path": path}))
                self._write(step.id, step.output, outcome.value, now, settled, raw=outcome.raw)
            except OutputPathError as exc:
                outcome = StepError(str(exc), code=exc.code)
        started = round(ctx.events[0][0] - start, 6) if ctx.events else None  # its step_start
        result = _result(ctx, outcome, started, round(now - start, 6))
        self._record(result)
        end = {"status": _TEXT[result.status]}
        if result.error:
            end["error"] = result.error
        settled.append((now, "step_end", step.id, result.attempts or None, end))
        self.trace.merge(settled, start)
        if result.status is StepStatus.FAILED and self.failed_step is None:
            self.failed_step = step.id
            self.status, self.reason = RunStatus.FAILED, TerminationReason.STEP_FAILED
            if result.error_code == "cancelled":  # an agent stopped as 'cancelled' cancels the run
                self.status, self.reason = RunStatus.CANCELLED, TerminationReason.CANCELLED
        if isinstance(outcome, StepOutcome) and outcome.chosen is not None and isinstance(step, RouterStep):
            self._skip_unchosen(step, outcome.chosen)

    def _pause(self, ctx: StepContext, ended: float, outcome: PauseOutcome) -> None:
        """A step asked to pause: the run stops after this layer, waiting for a decision."""
        started = round(ctx.events[0][0] - self.start, 6) if ctx.events else None
        usage = outcome.usage
        self._record(StepResult(
            ctx.step_id, StepStatus.PAUSED, attempts=1, started_at=started, ended_at=round(ended, 6),
            finish_reason=outcome.finish_reason, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens, cost_usd=outcome.cost_usd,
        ))
        self.trace.append(ended, "step_end", ctx.step_id, 1, status=StepStatus.PAUSED.value)
        self.paused_step = self.paused_step or ctx.step_id
        previous = self.pending_approval
        owns_pause = self.paused_step == ctx.step_id  # with two gates in one layer, the first one waits
        if owns_pause and (previous is None or previous.step_id != ctx.step_id or outcome.detail is not None):
            self.pending_approval = PendingApproval(ctx.step_id, ctx.clock.now(), self.wall_time(),
                                                    detail=outcome.detail)  # keeps the time it started waiting
        if self.failed_step is None:
            self.status, self.reason = RunStatus.PAUSED, TerminationReason.AWAITING_APPROVAL

    def _write(self, step_id: str, output: str | None, value: Any, now: float,
               events: list[tuple[float, str, str | None, int | None, dict[str, Any]]], raw: str | None = None) -> None:
        """Write a step's value to its ``output`` and ``steps.<id>``; ``events`` gets a ``state_write`` for each."""
        if output is not None:
            self._set(parse_path(output), value if type(value) is str else copy_plain(value))
            events.append((now, "state_write", step_id, None, {"path": output}))
        # steps.<id>.output holds the reply as written when the output was parsed (structured output);
        # its own copy, so that a later write into one of the two never shows in the other
        kept = value if raw is None else raw
        self._own_key("steps")[step_id] = {"output": kept if type(kept) is str else copy_plain(kept),
                                           "status": _SUCCEEDED}
        events.append((now, "state_write", step_id, None, {"path": f"steps.{step_id}"}))
        if type(self.steps[step_id]) is ApprovalGateStep:
            self._own_key("_approval")[step_id] = value
            events.append((now, "state_write", step_id, None, {"path": f"_approval.{step_id}"}))

    # -- writing to the state (copy on write) ---------------------------------------------------------------

    def _set(self, segments: tuple[Any, ...], value: Any) -> None:
        """``set_path`` into the state, through containers of the run's own only."""
        if len(segments) == 1 and type(segments[0]) is str:  # a top-level key: what set_path would do
            self.state[segments[0]] = value
            return
        self._own_path(segments)
        set_path(self.state, segments, value)

    def _own_path(self, segments: tuple[Any, ...]) -> None:
        """Copy each existing container on the way to ``segments`` that the run did not make, in place.

        The initial state's values are the workflow's and the caller's (never copied in), so a write
        must not go through them: each is replaced by a shallow copy the first time a write passes
        through it, and later writes find the copy. A path that cannot be written is left to
        ``set_path``, which refuses it without changing anything.
        """
        parent: Any = self.state
        for seg in segments[:-1]:
            if not _holds(parent, seg):
                return  # what follows does not exist yet (set_path makes it) or cannot be written
            child = parent[seg]
            if not isinstance(child, (MutableMapping, list)):
                return
            if id(child) not in self._own:
                child = self._adopt(copy.copy(child))
                parent[seg] = child
            parent = child

    def _own_key(self, key: str) -> Any:
        """The state's top-level dict ``key`` (``steps``, ``_approval``), made or copied as the run's own."""
        current = self.state.get(key)
        if current is None:
            current = self.state[key] = self._adopt({})
        elif id(current) not in self._own and isinstance(current, MutableMapping):
            current = self.state[key] = self._adopt(copy.copy(current))
        return current  # anything else refuses the write as it always has

    def _adopt(self, container: Any) -> Any:
        self._own[id(container)] = container
        return container


_SUCCEEDED = StepStatus.SUCCESS.value  # steps.<id>.status of every step that wrote: a plain string
_TEXT = {status: status.value for status in StepStatus}  # a status as the trace shows it, without enum lookups


def _holds(container: Any, seg: Any) -> bool:
    """Whether ``container[seg]`` exists: a key of a mapping, an index of a list."""
    if isinstance(container, Mapping):
        return not isinstance(seg, int) and seg in container
    return isinstance(container, list) and isinstance(seg, int) and -len(container) <= seg < len(container)


def _result(ctx: StepContext, outcome: StepOutcome | StepError, started: float | None, ended: float) -> StepResult:
    step_id = ctx.step_id
    if isinstance(outcome, StepError):
        # an agent's stop, or a tool loop that failed part way, still spent what it spent
        return StepResult(step_id, StepStatus.FAILED, error=str(outcome), error_code=outcome.code,
                          attempts=ctx.attempts, finish_reason=getattr(outcome, "finish_reason", None),
                          input_tokens=ctx.usage.input_tokens, output_tokens=ctx.usage.output_tokens,
                          reasoning_tokens=ctx.usage.reasoning_tokens,
                          cached_input_tokens=ctx.usage.cached_input_tokens,
                          cache_write_tokens=ctx.usage.cache_write_tokens, cost_usd=round(ctx.cost_usd, 10),
                          started_at=started, ended_at=ended)
    usage = outcome.usage
    return StepResult(
        step_id, StepStatus.SUCCESS, output=outcome.value, attempts=outcome.attempts,
        finish_reason=outcome.finish_reason, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens, cached_input_tokens=usage.cached_input_tokens,
        cache_write_tokens=usage.cache_write_tokens, cost_usd=outcome.cost_usd, model=outcome.model,
        provider=outcome.provider, started_at=started, ended_at=ended, reasoning_content=outcome.reasoning_content,
        time_to_first_token=outcome.time_to_first_token,
    )
