"""Assertion helpers behind ``WorkflowResult.assert_*``: plain ``AssertionError`` with the trace lines that matter.

No pytest here: the messages must read well in any test runner. Each failure
has a headline (what was expected, what happened) and then only the trace
events that explain it, never the repr of the whole result.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .trace import Trace, TraceEvent

__all__ = ["check_output", "check_status", "check_steps", "check_tool_calls"]


class _Step(Protocol):
    """What the checks read of a :class:`~.result.StepResult`."""

    @property
    def status(self) -> enum.Enum: ...
    @property
    def output(self) -> Any: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_code(self) -> str | None: ...


class CheckedRun(Protocol):
    """What the checks read of a :class:`~.result.WorkflowResult`, whose ``assert_*`` methods call them.

    A protocol, not the class itself: :mod:`.result` imports this module, so this one does not import it.
    """

    @property
    def workflow(self) -> str: ...
    @property
    def status(self) -> enum.Enum: ...
    @property
    def reason(self) -> enum.Enum: ...
    @property
    def failed_step(self) -> str | None: ...
    @property
    def steps(self) -> Mapping[str, _Step]: ...
    @property
    def trace(self) -> Trace: ...
    @property
    def state(self) -> dict[str, Any]: ...


def _expected(result: CheckedRun, expected: Any) -> Any:
    """``expected`` as the run recorded it: ``redacted(...)`` bound to the run's markers, the run's secrets
    replaced by theirs, so a match does not depend on redaction and a failure never prints a secret."""
    from ..._redaction.expected import resolve_expected

    return resolve_expected(expected, result.state, getattr(result, "unredacted_state", None))


def _fail(headline: str, events: Iterable[TraceEvent], extra: Sequence[str] = (), shown: str | None = None
          ) -> AssertionError:
    """``shown``: an error text already in ``extra``, written once: a trace line carrying it says so instead."""
    lines = [headline, *extra]
    events = list(events)
    if events:
        lines.append("Relevant trace:")
        lines += [f"  {_line(event, shown)}" for event in events]
    return AssertionError("\n".join(lines))


def _line(event: TraceEvent, shown: str | None) -> str:
    if shown is None or event.data.get("error") != shown:
        return event.line()
    from dataclasses import replace

    rest = replace(event, data={key: value for key, value in event.data.items() if key != "error"})
    return f"{rest.line()} error=(the failed step's, above)"


def check_status(result: CheckedRun, status: str, reason: str | None = None) -> None:
    __tracebackhide__ = True
    status_ok = result.status.value == str(status)
    reason_ok = reason is None or result.reason.value == str(reason)
    if status_ok and reason_ok:
        return
    wanted = f"status '{status}'" + (f" and reason '{reason}'" if reason is not None else "")
    headline = (f"Run of '{result.workflow}' ended with status '{result.status.value}' "
                f"and reason '{result.reason.value}', expected {wanted}.")
    extra = []
    events = [e for e in result.trace if e.kind == "run_end"]
    shown = None
    if result.failed_step:
        step = result.steps[result.failed_step]
        extra.append(f"  failed step '{result.failed_step}' ({step.error_code}): {step.error}")
        shown = step.error
        events = [e for e in result.trace if e.step_id == result.failed_step and e.kind in
                  ("fault_injected", "provider_call", "tool_call", "retry", "step_end")] + events
    else:
        events = [e for e in result.trace if e.kind == "step_skip"] + events
    raise _fail(headline, events, extra, shown)


def check_steps(result: CheckedRun, expected: Sequence[str]) -> None:
    __tracebackhide__ = True
    ran = result.trace.step_ids()
    if ran == list(expected):
        return
    missing = [step for step in expected if step not in ran]
    unexpected = [step for step in ran if step not in expected]
    extra = []
    if missing:
        extra.append(f"  expected but not run: {', '.join(missing)}")
    if unexpected:
        extra.append(f"  run but not expected: {', '.join(unexpected)}")
    if not missing and not unexpected:
        extra.append("  same steps, different order")
    events = [e for e in result.trace if e.kind in ("step_start", "step_skip", "router_choice")]
    raise _fail(f"Steps run: {ran}, expected: {list(expected)}.", events, extra)


def _call_text(name: str, args: Any) -> str:
    if args is None:
        return name
    return f"{name}({json.dumps(args, sort_keys=True, default=str)})"


def check_tool_calls(result: CheckedRun, expected: Sequence[Any]) -> None:
    """``expected`` holds ``(name, args)`` pairs, or bare names to ignore the arguments."""
    __tracebackhide__ = True
    events = result.trace.events("tool_call")
    actual = [(e.data.get("tool"), e.data.get("args")) for e in events]
    wanted = [(item, None) if isinstance(item, str) else (item[0], _expected(result, item[1])) for item in expected]
    same = len(actual) == len(wanted) and all(
        name == got_name and (args is None or args == got_args)
        for (name, args), (got_name, got_args) in zip(wanted, actual, strict=True)
    )
    if same:
        return
    extra = [f"  expected: [{', '.join(_call_text(n, a) for n, a in wanted)}]",
             f"  actual:   [{', '.join(_call_text(str(n), a) for n, a in actual)}]"]
    for index, ((name, args), (got_name, got_args)) in enumerate(zip(wanted, actual, strict=False)):
        if name != got_name or (args is not None and args != got_args):
            extra.append(f"  first difference at call {index}: expected {_call_text(name, args)}, "
                         f"got {_call_text(str(got_name), got_args)}")
            break
    raise _fail(f"Tool calls differ: {len(actual)} made, {len(wanted)} expected.", events, extra)


def check_output(result: CheckedRun, step_id: str, expected: Any) -> None:
    __tracebackhide__ = True
    step = result.steps.get(step_id)
    if step is None:
        raise AssertionError(
            f"No result for step '{step_id}' in run of '{result.workflow}'; steps: {', '.join(result.steps)}."
        )
    expected = _expected(result, expected)
    if step.output == expected and step.status.value == "success":
        return
    extra = [f"  expected: {expected!r}", f"  actual:   {step.output!r}"]
    if step.status.value != "success":
        extra.append(f"  step status: {step.status.value} ({step.error_code}): {step.error}")
    events = [e for e in result.trace if e.step_id == step_id and e.kind != "state_write"]
    raise _fail(f"Output of step '{step_id}' differs.", events, extra)
