"""What every step implementation receives, and what it hands back to the run.

A step never writes to the state itself: it returns a :class:`StepOutcome`
and the run applies the writes of a whole layer in file order. That is what
makes concurrent steps deterministic. What a step may ask of the run it is
part of (its id, the redactor, what is left of the budget, a decision it was
resumed with, a child run) goes through :class:`RunServices`, a protocol the
run implements, so no step module imports the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..._core.clock import Clock
from ..._core.types import Provider, Usage
from ...errors import StepError
from .._evaluate.templates import missing_key_message
from .._format.model import RetryPolicy, Workflow

if TYPE_CHECKING:
    from ..._redaction.redactor import Redactor
    from .result import WorkflowResult

__all__ = [
    "Awaiting",
    "ChildRun",
    "PauseOutcome",
    "PendingApproval",
    "RunServices",
    "StepContext",
    "StepOutcome",
    "StepRunner",
    "ToolFunction",
]

log = logging.getLogger("pytest_agentloom.templates")
_DEFAULT_RETRY = RetryPolicy()  # the policy of a step and a workflow that set none; read, never changed
_NO_USAGE = Usage()  # frozen, so every outcome and context that has spent nothing may share it
ToolFunction = Callable[..., Any]
T = TypeVar("T")


@dataclass
class StepOutcome:
    """A successful step's result: the value for ``output`` and what it cost."""

    value: Any
    attempts: int = 1
    writes: dict[str, Any] = field(default_factory=dict)  # more state paths to write with output (a conversation)
    finish_reason: str | None = None
    usage: Usage = _NO_USAGE
    cost_usd: float = 0.0
    model: str | None = None
    provider: str | None = None
    chosen: str | None = None  # routers only: the target they picked
    raw: str | None = None  # structured output: the reply as written, for steps.<id>.output
    reasoning_content: str | None = None  # llm_call with thinking.capture_reasoning: the model's reasoning text
    time_to_first_token: float | None = None  # a streamed llm_call: seconds on the step's clock to the first text


@dataclass
class PauseOutcome(StepOutcome):
    """Not a result: the step asks the run to pause here and wait for a person's decision.

    ``detail`` is what the step needs to go on after the pause (an agent's loop
    state and the call awaiting approval); it is saved in the checkpoint.
    """

    detail: dict[str, Any] | None = None


@dataclass(frozen=True)
class PendingApproval:
    """What a checkpoint remembers about the step the run paused at."""

    step_id: str
    clock: float  # the run clock's reading at the pause
    wall: float  # the wall clock's reading at the pause
    detail: dict[str, Any] | None = None  # an agent step's loop state and the call awaiting approval

    def to_dict(self) -> dict[str, Any]:
        data = {"step_id": self.step_id, "clock": self.clock, "wall": self.wall}
        return {**data, "detail": self.detail} if self.detail is not None else data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingApproval:
        detail = data.get("detail")
        return cls(str(data["step_id"]), float(data["clock"]), float(data["wall"]),
                   dict(detail) if isinstance(detail, dict) else None)


@dataclass(frozen=True)
class Awaiting:
    """A resumed run's pause at this step: when it began waiting, and the decision it was resumed with."""

    pending: PendingApproval
    decision: str | None


@dataclass(frozen=True)
class ChildRun:
    """A finished child run: its result (unredacted), its start on the clock, and the redactor it used.

    ``paused`` is what the parent's checkpoint keeps of a child paused at an approval gate (plain,
    redacted data: :func:`~.._run.child_pause.saved_child`), for the parent step's pause ``detail``.
    """

    result: WorkflowResult
    started: float
    redactor: Redactor
    paused: dict[str, Any] | None = None


class RunServices(Protocol):
    """What a step may ask of the run it belongs to. The run implements it."""

    @property
    def run_id(self) -> str: ...

    @property
    def redactor(self) -> Redactor: ...

    def wall_time(self) -> float:
        """The wall clock's reading (seconds since the epoch), for dating what outlives the process."""
        ...

    def budget_left(self) -> float | None:
        """Dollars left of ``config.budget_usd`` (``None``: no budget)."""
        ...

    def time_left(self) -> float | None:
        """Seconds left of ``config.timeout`` on the run's clock (``None``: no timeout)."""
        ...

    def awaiting(self, step_id: str) -> Awaiting | None:
        """The pause this step is being resumed from, if the run was resumed at it."""
        ...

    async def run_child(self, workflow: Workflow, state: dict[str, Any], *, step_id: str, clock: Clock,
                        provider: Provider | None, paused: Mapping[str, Any] | None = None,
                        decision: str | None = None, inherited: Mapping[str, Any] | None = None) -> ChildRun:
        """Run ``workflow`` as a child of this run (a subworkflow step): no files, its own redactor.

        ``paused`` (a :attr:`ChildRun.paused` saved at an earlier pause) resumes the child from there with
        ``decision`` instead of starting it from ``state``; ``inherited`` is the parent's state when the
        child started from it (redacted keys the parent has again are put back in the child).
        """
        ...


@dataclass(slots=True)
class StepContext:
    """The world as one step sees it: a read-only state snapshot, its own clock, and the run's services."""

    workflow: Workflow
    state: Mapping[str, Any]
    clock: Clock
    provider: Provider | None
    tools: Mapping[str, ToolFunction]
    step_id: str
    run: RunServices
    events: list[tuple[float, str, str | None, int | None, dict[str, Any]]] = field(default_factory=list)
    attempts: int = 0
    usage: Usage = _NO_USAGE
    cost_usd: float = 0.0

    def event(self, kind: str, attempt: int | None = None, **data: Any) -> None:
        """Buffer a trace event; the run merges buffers in file order."""
        self.events.append((self.clock.now(), kind, self.step_id, attempt, data))

    def record(self, kind: str, attempt: int | None, data: dict[str, Any]) -> None:
        """:meth:`event` with its data already in a dictionary (kept, not copied)."""
        self.events.append((self.clock.now(), kind, self.step_id, attempt, data))

    def missing_key(self, name: str) -> None:
        """Template callback: a ``{state.x}`` that the state lacks renders empty and is reported."""
        message = missing_key_message(name)
        log.warning(message)
        self.event("template_warning", field=name, message=message)

    def retry_policy(self, own: RetryPolicy | None) -> RetryPolicy:
        return own or self.workflow.config.retry or _DEFAULT_RETRY

    async def within(self, timeout: float | None, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call`` under the step's ``timeout`` on this step's clock.

        With a real clock the call is cancelled at the deadline. With a virtual
        clock nothing real can be cancelled, so a call whose virtual duration
        went past the deadline counts as timed out once it returns.
        """
        if timeout is None:
            return await call()
        started = self.clock.now()
        try:
            if self.clock.is_virtual:
                result = await call()
            else:
                result = await asyncio.wait_for(call(), timeout)
        except TimeoutError:
            raise StepError(f"timed out after {timeout:g}s", code="timeout", retryable=True) from None
        if self.clock.now() - started > timeout:
            raise StepError(f"timed out after {timeout:g}s", code="timeout", retryable=True)
        return result


StepRunner = Callable[[Any, StepContext], Awaitable[StepOutcome]]
