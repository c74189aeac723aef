"""A run's timeline for the review report: steps as bars on the run's (virtual) clock, and what happened in them.

Plain data, read from the result's trace after the run: each step's start and
end (a subworkflow's children as ``<step>/<child>``), its status and attempts,
and marks for retries, fallbacks, tool calls and pauses. Times are the trace's, so the same
test gives the same timeline on every run. Each bar and mark also carries its place in the trace
(``first``/``last``, ``order``, out of ``events``): a scripted or replayed run takes no virtual time,
and its timeline is drawn in the order things happened instead.
"""

from __future__ import annotations

from typing import Any

from ...engine._outcome.result import WorkflowResult

__all__ = ["run_timeline"]

_MARKED = {"retry": "retry", "fallback": "fallback", "tool_call": "tool", "approval_waiting": "pause",
           "agent_waiting": "pause"}


def run_timeline(result: WorkflowResult, workflow_key: str) -> dict[str, Any]:
    """The report's view of one run: status, reason, tokens, cost, step bars and marks."""
    bars: dict[str, dict[str, Any]] = {}
    marks: list[dict[str, Any]] = []
    end = 0.0
    count = 0
    for count, event in enumerate(result.trace, start=1):
        end = max(end, event.time)
        step = event.step_id
        if step is None:
            continue
        if event.kind == "step_start":
            bars[step] = {"step": step, "start": event.time, "end": event.time, "status": "running", "attempts": 1,
                          "first": count, "last": count}
        elif event.kind == "step_end" and step in bars:
            bars[step].update(end=event.time, status=event.data.get("status", "?"), attempts=event.attempt or 1,
                              last=count)
        elif event.kind == "step_skip":
            bars.setdefault(step, {"step": step, "start": event.time, "end": event.time, "status": "skipped",
                                   "attempts": 0, "first": count, "last": count})
        elif event.kind in _MARKED:
            marks.append({"time": event.time, "step": step, "kind": _MARKED[event.kind],
                          "label": _mark_label(event.kind, event.data), "order": count})
    return {
        "workflow": workflow_key,
        "name": result.workflow,
        "run_id": result.run_id,
        "status": result.status.value,
        "reason": result.reason.value,
        "duration": round(end, 6),
        "cost_usd": result.cost_usd,
        "tokens": sum(result.usage.values()),
        "steps": list(bars.values()),
        "marks": marks,
        "events": count,
    }


def _mark_label(kind: str, data: dict[str, Any]) -> str:
    if kind == "tool_call":
        return f"{data.get('tool')} {'ok' if data.get('ok', True) else 'failed'}"
    if kind == "retry":
        return f"retry: {str(data.get('error', ''))[:80]}"
    if kind == "fallback":
        return (f"fell back from {data.get('provider')} {data.get('model')} ({data.get('reason')}) to "
                f"{data.get('to_provider')} {data.get('to_model')}: {str(data.get('error', ''))[:80]}")
    return "waiting for approval"
