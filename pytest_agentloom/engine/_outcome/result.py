"""What a run returns: per-step results and the run's status, reason and state.

``WorkflowResult.to_json()`` is canonical (sorted keys, fixed separators,
values normalised to JSON types), so two runs with the same inputs produce the
same bytes.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.plain import to_plain
from .trace import Trace

if TYPE_CHECKING:
    from .held_records import HeldRecords

__all__ = ["RunStatus", "StepResult", "StepStatus", "TerminationReason", "WorkflowResult"]


class RunStatus(enum.StrEnum):
    """How a run ended, in one word."""

    SUCCESS = "success"
    FAILED = "failed"
    PAUSED = "paused"
    BUDGET_EXCEEDED = "budget_exceeded"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


class TerminationReason(enum.StrEnum):
    """Why a run stopped: a closed set, documented in docs/errors.md (Termination reasons).

    - ``completed``: every step ran or was skipped by a router.
    - ``step_failed``: a step failed; later steps were skipped.
    - ``budget_exceeded``: spend reached ``config.budget_usd`` before another layer could start.
    - ``timeout``: ``config.timeout`` seconds passed before another layer could start.
    - ``cancelled``: the run was cancelled from outside.
    - ``awaiting_approval``: reserved for approval gates (paused runs).
    """

    COMPLETED = "completed"
    STEP_FAILED = "step_failed"
    BUDGET_EXCEEDED = "budget_exceeded"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    AWAITING_APPROVAL = "awaiting_approval"


class StepStatus(enum.StrEnum):
    """How one step ended: ``success``, ``failed``, ``skipped``, or ``paused`` (an approval gate waiting)."""

    SUCCESS = "success"
    FAILED = "failed"
    SKIPPED = "skipped"
    PAUSED = "paused"  # an approval gate waiting for a decision


@dataclass
class StepResult:
    """The outcome of one step. ``error_code`` is a short machine-readable code of ``error``."""

    step_id: str
    status: StepStatus
    output: Any = None
    error: str | None = None
    error_code: str | None = None
    attempts: int = 0
    finish_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    #: the parts of input_tokens read from / written to the provider's prompt cache (shown when not zero)
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    model: str | None = None
    provider: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    #: the model's reasoning text (docs/providers.md: Reasoning; with capture_reasoning); never written to the state
    reasoning_content: str | None = None
    #: a streamed llm_call: seconds on the step's clock from the call to its first text
    time_to_first_token: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.reasoning_tokens

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        data["output"] = to_plain(self.output)
        for optional in ("reasoning_content", "time_to_first_token"):  # only steps that have them show them
            if data[optional] is None:
                del data[optional]
        for optional in ("cached_input_tokens", "cache_write_tokens"):  # only calls that used a prompt cache
            if not data[optional]:
                del data[optional]
        return data


@dataclass
class WorkflowResult:
    """The outcome of a run: ``status`` and ``reason``, the final ``state``, every step's result."""

    workflow: str
    run_id: str
    status: RunStatus
    reason: TerminationReason
    state: dict[str, Any]
    steps: dict[str, StepResult]
    trace: Trace = field(repr=False)
    failed_step: str | None = None
    #: the approval gate a paused run waits at
    paused_step: str | None = None
    #: the saved (redacted) checkpoint of a paused or checkpointed run, and its file
    checkpoint: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    checkpoint_path: Path | None = field(default=None, repr=False, compare=False)
    #: the run record of this run (see :attr:`record_path`), and what holds it back when it is not written yet
    _record: Path | None = field(default=None, repr=False, compare=False)
    _held_by: HeldRecords | None = field(default=None, repr=False, compare=False)
    _held_name: str = field(default="", repr=False, compare=False)
    #: the final state before redaction, for in-process use only: never printed, compared or serialised
    unredacted_state: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: the workflow that ran, for in-process use only: resuming this result uses it when the workflow has no
    #: file (a checkpoint's saved definition is never run)
    ran_workflow: Any = field(default=None, repr=False, compare=False)
    #: the paused run this one resumed (set by the ``agentloom`` fixture's ``resume``), so checks can see both
    resumed_from: WorkflowResult | None = field(default=None, repr=False, compare=False)
    #: what the run sent its provider (see :attr:`sent_requests`), or the function that works it out
    _sent: Any = field(default=None, repr=False, compare=False)

    @property
    def record_path(self) -> Path | None:
        """The run record of this run, if records are on.

        The ``agentloom`` fixture holds its runs' records back (:class:`~.._persist.records.HeldRecords`); reading
        this writes them, so the file is there for whoever asks for its path.
        """
        if self._held_by is not None:
            self._held_by.release()
            self._record, self._held_by = self._held_by.folder / self._held_name, None
        return self._record

    @record_path.setter
    def record_path(self, path: Path | None) -> None:
        self._record, self._held_by = path, None

    @property
    def sent_requests(self) -> dict[str, list[dict[str, Any]]] | None:
        """What the run sent its provider, per step (set by the ``agentloom`` fixture; snapshots show it).

        The fixture hands over a function, called the first time this is read: only a test that takes a
        snapshot needs these, so a run whose test never asks does not work them out.
        """
        if callable(self._sent):
            self._sent = self._sent()
        return self._sent  # type: ignore[no-any-return]

    @sent_requests.setter
    def sent_requests(self, value: dict[str, list[dict[str, Any]]] | Callable[[], Any] | None) -> None:
        self._sent = value

    def hold_record(self, name: str, held_by: HeldRecords) -> None:
        """Point at the record ``held_by`` holds as ``name``: it is written when :attr:`record_path` is read."""
        self._held_name, self._held_by = name, held_by

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.SUCCESS

    @property
    def cost_usd(self) -> float:
        return round(sum(step.cost_usd for step in self.steps.values()), 10)

    @property
    def usage(self) -> dict[str, int]:
        return {
            "input_tokens": sum(s.input_tokens for s in self.steps.values()),
            "output_tokens": sum(s.output_tokens for s in self.steps.values()),
            "reasoning_tokens": sum(s.reasoning_tokens for s in self.steps.values()),
        }

    def output(self, step_id: str) -> Any:
        return self.steps[step_id].output

    # -- assertions: AssertionError with only the relevant trace lines (see result_assertions.py) ----------

    def assert_status(self, status: str, reason: str | None = None) -> None:
        """Fail unless the run ended with ``status`` (and ``reason``, when given)."""
        __tracebackhide__ = True
        from .result_assertions import check_status

        check_status(self, status, reason)

    def assert_steps(self, *step_ids: str) -> None:
        """Fail unless exactly these steps ran, in this order."""
        __tracebackhide__ = True
        from .result_assertions import check_steps

        check_steps(self, step_ids)

    def assert_tool_calls(self, expected: list[Any]) -> None:
        """Fail unless the tool calls were exactly ``[(name, args), ...]`` (a bare name ignores the args)."""
        __tracebackhide__ = True
        from .result_assertions import check_tool_calls

        check_tool_calls(self, expected)

    def assert_output(self, step_id: str, expected: Any) -> None:
        """Fail unless step ``step_id`` succeeded with ``expected`` as its output."""
        __tracebackhide__ = True
        from .result_assertions import check_output

        check_output(self, step_id, expected)

    def to_dict(self) -> dict[str, Any]:
        paused = {"paused_step": self.paused_step} if self.paused_step is not None else {}
        return {
            **paused,
            "workflow": self.workflow,
            "run_id": self.run_id,
            "status": self.status.value,
            "reason": self.reason.value,
            "failed_step": self.failed_step,
            "state": to_plain(self.state),
            "steps": {step_id: result.to_dict() for step_id, result in self.steps.items()},
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "trace": to_plain(self.trace.to_list()),
        }

    def to_json(self, *, indent: int | None = None) -> str:
        """Canonical JSON: the same result always gives the same bytes."""
        separators = (",", ": ") if indent else (",", ":")
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=separators, indent=indent)

    def __repr__(self) -> str:
        return f"<WorkflowResult {self.workflow!r} status={self.status.value} reason={self.reason.value}>"
