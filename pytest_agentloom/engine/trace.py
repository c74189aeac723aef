"""The trace: one event per decision the engine made, in a stable order.

Events of one layer are buffered per step and merged in the order the steps
appear in the file, so a trace never depends on which coroutine finished
first. ``seq`` numbers the merged events; ``time`` is the (virtual) clock
relative to the start of the run.

A run appends a handful of events per step, and most traces are never read
(a run in a benchmark, a test that asserts on the state), so :meth:`Trace.append`
keeps a plain tuple, :meth:`Trace.merge` keeps a step's whole buffer as it is, and
the frozen :class:`TraceEvent` objects (times rounded) are made the first time the
trace is read. They are made in order, with the same ``seq`` and the same rounded
times, either way.
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
    "tool_call",
    "router_choice",
    "template_warning",
    "state_write",
    "step_skip",
    "step_end",
    "run_end",
    "prompt",
    # persistence and approval gates (engine/checkpoints.py, engine/steps/approval_gate.py)
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


class Trace:
    """The ordered events of a run, with small queries for assertions."""

    def __init__(self, events: list[TraceEvent] | None = None) -> None:
        self._made: list[TraceEvent] = list(events or [])
        # not made yet: chunks of (start, raw events), each event's time counted from its chunk's start
        self._pending: list[tuple[float, list[_Raw]]] = []
        self._tail: list[_Raw] | None = None  # the chunk append() adds to (start 0), while it is the last one
        self._count = len(self._made)

    @property
    def _events(self) -> list[TraceEvent]:
        """Every event, the pending ones made into :class:`TraceEvent` on the way."""
        if self._pending:
            seq = len(self._made)
            made = self._made
            for start, chunk in self._pending:
                for time, kind, step_id, attempt, data in chunk:
                    seq += 1
                    made.append(TraceEvent(seq, round(time - start, 6), kind, step_id, attempt, data))
            self._pending = []
            self._tail = None
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
        tail = self._tail
        if tail is None:
            tail = self._tail = []
            self._pending.append((0.0, tail))
        tail.append((time, kind, step_id, attempt, data))
        self._count += 1

    def merge(self, buffered: Iterable[_Raw], start: float) -> None:
        """Add a step's buffered events (``(clock time, kind, step id, attempt, data)``), in their order.

        Their times are on the run's clock; ``start`` is the run's start on it, so each event's time becomes
        seconds since the start, as :meth:`append` takes it. A list is kept as it is, not copied: the
        caller hands it over and never changes it again.
        """
        if not isinstance(buffered, list):
            buffered = list(buffered)
        if buffered:
            self._pending.append((start, buffered))
            self._tail = None
            self._count += len(buffered)

    def _pending_has(self, kind: str) -> bool:
        """Whether an event not made yet is of ``kind`` (found without making any)."""
        for _, chunk in self._pending:
            for raw in chunk:
                if raw[1] == kind:
                    return True
        return False

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
        for _, chunk in self._pending:
            ids.extend(raw[2] for raw in chunk if raw[1] == "step_start" and raw[2])
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
