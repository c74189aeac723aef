"""A run's result, its steps' results and its trace as they may leave the process: redacted copies.

What the redactor (:class:`~pytest_agentloom._redaction.redactor.Redactor`) does to plain data, applied to
the engine's own values; the result in memory is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..._core.plain import copy_plain
from .result import StepResult, WorkflowResult
from .trace import Trace, TraceEvent

if TYPE_CHECKING:
    from ..._redaction.redactor import Redactor

__all__ = ["redact_result", "redact_step", "redact_trace"]


def redact_result(redactor: Redactor, result: WorkflowResult, secrets: list[str]) -> WorkflowResult:
    """The result as it may leave the process: state, step outputs, errors and trace redacted (copies)."""
    if not redactor.active and not redactor.api_keys:
        return _replaced(result, state=copy_plain(result.state))
    return _replaced(
        result,
        state=redactor.redact_state(result.state),
        steps={sid: redact_step(redactor, step, secrets) for sid, step in result.steps.items()},
        trace=redact_trace(redactor, result.trace, secrets),
    )


def redact_step(redactor: Redactor, result: StepResult, secrets: list[str]) -> StepResult:
    """A step's result with its output redacted like state, its error and reasoning scrubbed."""
    output = redactor.redact_output(result.step_id, result.output, secrets)
    error = redactor.redact_text(result.error, secrets) if result.error else result.error
    reasoning = result.reasoning_content
    if reasoning is not None and redactor.active:  # the reasoning text is redacted whenever the output is
        reasoning = redactor.redact_output(result.step_id, reasoning, secrets)
    return _replaced(result, output=output, error=error, reasoning_content=reasoning)

def redact_trace(redactor: Redactor, trace: Trace, secrets: list[str]) -> Trace:
    """A copy of ``trace`` with tool arguments matched by key and every string scrubbed of secret values."""
    events = []
    for event in trace:
        data = {}
        for key, value in event.data.items():
            if key == "args" and isinstance(value, Mapping):
                data[key] = redactor.redact_mapping(value, secrets)
            else:
                data[key] = redactor.redact_strings(value, secrets)
        events.append(TraceEvent(event.seq, event.time, event.kind, event.step_id, event.attempt, data))
    return Trace(events)


_Result = TypeVar("_Result", StepResult, WorkflowResult)


def _replaced(result: _Result, **changes: Any) -> _Result:
    """What ``dataclasses.replace(result, **changes)`` gives, without its walk over the fields.

    ``replace`` passes every field through ``__init__``; both result classes have only ``__init__``
    fields and no ``__post_init__``, so copying the attributes is the same and costs a fraction of
    it, once per run and once per step (tests compare the two).
    """
    copy = object.__new__(type(result))
    attributes = copy.__dict__
    attributes.update(result.__dict__)
    attributes.update(changes)
    return copy
