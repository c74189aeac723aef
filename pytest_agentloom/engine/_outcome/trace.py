"""The trace: one event per decision the engine made, in a stable order.

Events of one layer are buffered per step and merged in the order the steps
appear in the file, so a trace never depends on which coroutine finished
first. ``seq`` numbers the merged events; ``time`` is the (virtual) clock
relative to the start of the run.

A run appends a handful of events per step, and most traces are never read
(a run in a benchmark, a test that asserts on the state), so an event is kept as
five entries of one list (:meth:`Trace.append`, :meth:`Trace.merge`): its time,
kind, step, attempt and data. The frozen :class:`TraceEvent` objects (times
rounded) are made the first time the trace is read, in order, with the same
``seq`` and the same rounded times either way.

None of those entries is a container the garbage collector follows: strings and
numbers are not, and a dict of them is never tracked (a list in an event's data,
``layer_start``'s ``steps``, is kept as a tuple until the event is made). Kept as a
tuple holding its dict, in a list per step as a step buffers them, the events of a
10,000-step run were some 100,000 containers that every full collection walked
again, in a heap too big for the processor's caches: about half of that run's time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EVENT_KINDS", "Trace", "TraceEvent"]

_Raw = tuple[float, str, str | None, int | None, dict[str, Any]]  # an event not made yet

EVENT_KINDS = (
    "run_start",
    "layer_start",
    "step_start",
    "provider_call",
    "retry",
    "fallback",  # a failed model call handed to the step's next fallback provider (engine/_calls/fallback.py)
    "tool_call",
    "router_choice",
    "template_warning",
    "state_write",
    "step_skip",
    "step_end",
    "run_end",
    "prompt",
    # persistence and approval gates (engine/_persist/checkpoints.py, engine/_steps/approval_gate.py)
    "run_resume",
    "checkpoint_saved",
    "approval_requested",
    "approval_waiting",
    "approval_timeout",
    "approval_decision",
    "webhook",
    # tool loops and agents (engine/tool_loop.py, engine/agents.py)
    "tool_calls_skipped",
    "agent_proposal",
    "agent_check",
    "agent_observation",
    "agent_stop",
    "agent_waiting",
    "agent_decision",
    "agent_redacted",
    # a subworkflow's run-level events, under its step (engine/subworkflow.py)
    "subworkflow",
    # a fault injected into a model or tool call (providers/_faults.py, docs/resilience.md)
    "fault_injected",
)


@dataclass(frozen=True)
class TraceEvent:
    """One decision: what happened (``kind``), to which step, on which attempt, when."""

    seq: int
    time: float
    kind: str
    step_id: str | None = None
    attempt: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "kind": self.kind,
            "step_id": self.step_id,
            "attempt": self.attempt,
            "data": self.data,
        }

    def line(self) -> str:
        """A one-line, human-readable form used in assertion messages."""
        where = f" {self.step_id}" if self.step_id else ""
        attempt = f" #{self.attempt}" if self.attempt else ""
        details = " ".join(f"{key}={value!r}" for key, value in self.data.items())
        return f"[{self.seq:>3}] t={self.time:g} {self.kind}{where}{attempt} {details}".rstrip()


def _as_made(data: dict[str, Any], listed: tuple[str, ...]) -> dict[str, Any]:
    """The data of an event as it was given: the lists :meth:`Trace.append` kept as tuples made lists again."""
    made = dict(data)
    for key in listed:
        made[key] = list(made[key])
    return made


class Trace:
    """The ordered events of a run, with small queries for assertions."""

    def __init__(self, events: list[TraceEvent] | None = None) -> None:
        self._made: list[TraceEvent] = list(events or [])
        # not made yet, field after field (see the module docs): time in seconds since the start, kind, step,
        # attempt and data of the first event, then of the next
        self._fields: list[Any] = []
        self._listed: dict[int, tuple[str, ...]] = {}  # position of an event -> the keys of its data kept as tuples
        self._count = len(self._made)

    @property
    def _events(self) -> list[TraceEvent]:
        """Every event, the pending ones made into :class:`TraceEvent` on the way."""
        if self._fields:
            seq = len(self._made)
            made = self._made
            listed = self._listed
            fields = iter(self._fields)
            for position, (time, kind, step_id, attempt, data) in enumerate(zip(fields, fields, fields, fields,
                                                                                fields, strict=True)):
                seq += 1
                if listed and position in listed:
                    data = _as_made(data, listed[position])
                made.append(TraceEvent(seq, round(time, 6), kind, step_id, attempt, data))
            self._fields, self._listed = [], {}
        return self._made

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self._events)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> TraceEvent:
        return self._events[index]

    def append(self, time: float, kind: str, step_id: str | None = None, attempt: int | None = None,
               **data: Any) -> None:
        """Add an event at ``time`` (rounded to the microsecond when the trace is read); numbered next."""
        listed: tuple[str, ...] = ()
        for key, value in data.items():
            if type(value) is list:  # kept as a tuple (see the module docs); the dict is this call's own
                data[key] = tuple(value)
                listed += (key,)
        if listed:
            self._listed[len(self._fields) // 5] = listed
        self._fields += (time, kind, step_id, attempt, data)
        self._count += 1

    def merge(self, buffered: Iterable[_Raw], start: float) -> None:
        """Add a step's buffered events (``(clock time, kind, step id, attempt, data)``), in their order.

        Their times are on the run's clock; ``start`` is the run's start on it, so each event's time becomes
        seconds since the start, as :meth:`append` takes it.
        """
        extend = self._fields.extend
        count = self._count
        for time, kind, step_id, attempt, data in buffered:
            extend((time - start, kind, step_id, attempt, data))
            count += 1
        self._count = count

    def _pending_has(self, kind: str) -> bool:
        """Whether an event not made yet is of ``kind`` (found without making any)."""
        return kind in self._fields[1::5]

    def events(self, kind: str | None = None, *, step: str | None = None) -> list[TraceEvent]:
        """Events of one kind (all kinds if ``None``), optionally of one step.

        Asking for a kind that no event not made yet has (the harness asks every run for its
        ``template_warning`` events, and most runs have none) reads only the events already made.
        """
        events = self._made if kind is not None and not self._pending_has(kind) else self._events
        return [e for e in events if (kind is None or e.kind == kind) and (step is None or e.step_id == step)]

    def step_ids(self) -> list[str]:
        """Ids of the steps that ran (were started), in execution order; found without making the events."""
        ids = [e.step_id for e in self._made if e.kind == "step_start" and e.step_id]
        fields = self._fields
        ids.extend(step for kind, step in zip(fields[1::5], fields[2::5], strict=True) if kind == "step_start" and step)
        return ids

    def calls(self, step: str | None = None, tool: str | None = None) -> list[TraceEvent]:
        """Provider and tool calls; ``tool=`` keeps only calls of that tool."""
        kinds = ("tool_call",) if tool is not None else ("provider_call", "tool_call")
        return [
            e for e in self._events
            if e.kind in kinds and (step is None or e.step_id == step) and (tool is None or e.data.get("tool") == tool)
        ]

    def decisions(self, step: str | None = None) -> list[str]:
        """An agent's decisions, one line each, for asserting the exact sequence.

        ``"1 proposal get_ticket"``, ``"1 check get_ticket ok"``, ``"1 tool get_ticket ok"``,
        ``"1 observation ok"``, ..., ``"3 proposal answer"``, ``"3 check answer ok"``, ``"3 stop done"``.
        """
        shown = []
        agents = {event.step_id for event in self._events if event.kind == "agent_proposal"}
        for event in self._events:
            if step is not None and event.step_id != step:
                continue
            data = event.data
            if event.kind == "agent_proposal":
                tools = " ".join(call["tool"] for call in data.get("calls", [])) or "answer"
                shown.append(f"{data['step']} proposal {tools}")
            elif event.kind == "agent_check":
                shown.append(f"{data['step']} check {data.get('tool', 'answer')} {data['code']}")
            elif event.kind == "tool_call" and event.step_id in agents:
                shown.append(f"{data['turn']} tool {data['tool']} {'ok' if data['ok'] else data.get('code')}")
            elif event.kind == "agent_observation":
                shown.append(f"{data['step']} observation {'ok' if data['ok'] else 'rejected or failed'}")
            elif event.kind == "agent_stop":
                shown.append(f"{data['step']} stop {data['reason']}")
            elif event.kind == "agent_decision":
                shown.append(f"{data['step']} decision {data['decision']}")
        return shown

    def lines(self, events: list[TraceEvent] | None = None) -> str:
        return "\n".join(event.line() for event in (self._events if events is None else events))

    def to_list(self) -> list[dict[str, Any]]:
        return [event.to_dict() for event in self._events]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return self._events == other._events

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Trace {len(self._events)} events>"
