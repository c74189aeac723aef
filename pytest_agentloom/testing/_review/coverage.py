"""Workflow coverage: which steps, branches and stop reasons a test session reached, per workflow file.

Every finished run (the ``agentloom`` fixture's ``run`` and ``resume``, so scenario
rows and YAML-only tests too) is read after the fact, from its result's trace:
the engine is not asked to do anything while it runs. A workflow file's map
starts from the file itself, so what was never reached is known by name:

- **steps** (a subworkflow's children as ``<step>/<child step>``): how often each
  finished, failed or was skipped. A step *ran* if it finished or failed at least once.
- **branches**: each router's conditions (``[0] <expression>``, ...) and its
  ``default``, and each approval gate's ``approved`` and ``rejected``. The branch
  percentage (what ``--agentloom-cov-fail-under`` checks) counts these.
- **reasons**: run termination reasons, each agent step's stop reasons (the nine
  of :data:`~pytest_agentloom.engine._calls.agent_loop.STOP_REASONS`), an agent's
  approval decisions, retry paths (a step retried, and one that succeeded after a
  retry) and fallbacks: a step's own (its ``fallback`` trace events: the provider that failed, why, and the
  one it went to) and a hand-built gateway's (a provider that failed and the next one answered).
  These are reported, not counted in the percentages: many are failure paths a
  suite may rightly never reach.

The map is plain data (dicts of counts), so an xdist worker sends it to the
controller with the used snapshots (:meth:`CoverageMap.to_wire`) and maps add up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...engine._calls.agent_loop import STOP_REASONS
from ...engine._format.model import AgentStep, ApprovalGateStep, RouterStep, SubworkflowStep, Workflow
from ...engine._outcome.result import TerminationReason, WorkflowResult
from ...engine._steps.approval_gate import DECISIONS
from .._workflow_key import workflow_key

__all__ = ["NOTHING_MISSED", "CoverageMap", "WorkflowCoverage", "gateway_fallbacks", "never_reached_text"]

def gateway_fallbacks(provider: Any) -> list[tuple[str, str, str]]:
    """The fallbacks a gateway took so far (``(step id, provider that failed, error)``), through wrappers."""
    seen = 0
    while provider is not None and seen < 8:
        found = getattr(provider, "fallbacks", None)
        if isinstance(found, list):
            return found
        provider = getattr(provider, "inner", None)
        seen += 1
    return []


class WorkflowCoverage:
    """The coverage of one workflow file: plain dicts of counts, keyed by what the file declares."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def from_workflow(cls, workflow: Workflow, key: str) -> WorkflowCoverage:
        data: dict[str, Any] = {
            "file": key, "workflow": workflow.name, "runs": 0, "steps": {}, "branches": {}, "agents": {},
            "approvals": {}, "terminations": {reason.value: 0 for reason in TerminationReason},
            "retries": {}, "fallbacks": {},
        }
        _declare(workflow, "", data)
        return cls(data)

    # -- adding a run -------------------------------------------------------------------------------------

    def add_run(self, result: WorkflowResult, fallbacks: Iterable[tuple[str, str, str]] = ()) -> None:
        """Count what one finished (or paused) run reached, from its trace."""
        data = self.data
        data["runs"] += 1
        _bump(data["terminations"], result.reason.value)
        retried: set[str] = set()
        for event in result.trace:
            step = event.step_id
            if step is None:
                continue
            kind = event.kind
            if kind == "step_end":
                status = event.data.get("status")
                column = "failed" if status == "failed" else "ran"
                _bump(self._step(step), column)
                if status == "success" and step in retried:
                    _bump(data["retries"].setdefault(step, {"retried": 0, "recovered": 0}), "recovered")
            elif kind == "step_skip":
                _bump(self._step(step), "skipped")
            elif kind == "router_choice":
                _bump(data["branches"].setdefault(step, {}), _branch_label(event.data))
            elif kind == "approval_decision":
                _bump(data["approvals"].setdefault(step, {}), str(event.data.get("decision")))
            elif kind == "agent_decision":
                _bump(data["approvals"].setdefault(step, {}), f"call {event.data.get('decision')}")
            elif kind == "agent_stop":
                _bump(data["agents"].setdefault(step, {}), str(event.data.get("reason")))
            elif kind == "fallback":  # a step's own fallback (the workflow file's): who failed, why, who took it
                label = f"{event.data.get('provider')} ({event.data.get('reason')}) to {event.data.get('to_provider')}"
                _bump(data["fallbacks"].setdefault(step, {}), label)
            elif kind == "retry" and step not in retried:
                retried.add(step)
                _bump(data["retries"].setdefault(step, {"retried": 0, "recovered": 0}), "retried")
        for step, provider, _error in fallbacks:
            _bump(data["fallbacks"].setdefault(step, {}), provider)

    def _step(self, step_id: str) -> dict[str, Any]:
        return self.data["steps"].setdefault(step_id, {"type": "?", "ran": 0, "failed": 0, "skipped": 0})

    def merge(self, other: Mapping[str, Any]) -> None:
        """Add another map of the same file (an xdist worker's) into this one."""
        _add_counts(self.data, other)

    # -- what it says -------------------------------------------------------------------------------------

    def steps_reached(self) -> tuple[int, int]:
        steps = self.data["steps"]
        return sum(1 for s in steps.values() if s["ran"] or s["failed"]), len(steps)

    def branches_reached(self) -> tuple[int, int]:
        counts = [count for branch in self._branch_tables() for count in branch.values()]
        return sum(1 for count in counts if count), len(counts)

    def _branch_tables(self) -> list[dict[str, int]]:
        gates = [{d: table.get(d, 0) for d in DECISIONS} for step, table in self.data["approvals"].items()
                 if self.data["steps"].get(step, {}).get("type") == "approval_gate"]
        return [*self.data["branches"].values(), *gates]

    def never_reached(self) -> list[str]:
        """Everything declared and never reached, by name: steps, then router branches and gate decisions."""
        data = self.data
        missed = [f"step {step}" for step, counts in data["steps"].items() if not (counts["ran"] or counts["failed"])]
        for router, table in data["branches"].items():
            missed += [f"branch {router} -> {label}" for label, count in table.items() if not count]
        for gate, table in data["approvals"].items():
            if data["steps"].get(gate, {}).get("type") == "approval_gate":
                missed += [f"decision {gate}: {d}" for d in DECISIONS if not table.get(d)]
        return missed

    def agent_stops_never_reached(self) -> list[str]:
        """Each agent step's stop reasons that no run reached, ``<step> <reason>``."""
        return [f"{agent} {reason}" for agent, table in self.data["agents"].items()
                for reason in STOP_REASONS if not table.get(reason)]

    def reasons_reached(self) -> list[str]:
        """Termination reasons, agent stops, retries and fallbacks reached, as short names."""
        data = self.data
        found = [f"run {reason}" for reason, count in data["terminations"].items() if count]
        for agent, table in data["agents"].items():
            found += [f"{agent} {reason}" for reason, count in table.items() if count]
        for step, table in data["approvals"].items():
            found += [f"{step} {label}" for label, count in table.items()
                      if count and label.startswith("call ")]
        found += [f"{step} retried" + (" and recovered" if t["recovered"] else "")
                  for step, t in data["retries"].items() if t["retried"]]
        found += [f"{step} fell back from {p}" for step, table in data["fallbacks"].items() for p in table]
        return found

    def step_marks(self, prefix: str = "") -> dict[str, str]:
        """A colour class per step of one level (see :data:`~pytest_agentloom.engine._format.diagram.MARK_CLASSES`):
        the top level, or a subworkflow's children with ``prefix="<step>/"``. Keys are the level's own ids.
        """
        marks = {}
        for step, counts in self.data["steps"].items():
            if not step.startswith(prefix) or "/" in step[len(prefix):]:
                continue
            own = step[len(prefix):]
            if not (counts["ran"] or counts["failed"]):
                marks[own] = "missed"
            elif not counts["ran"]:
                marks[own] = "failed"
            else:
                table = self.data["branches"].get(step) or self._gate_table(step)
                marks[own] = "partial" if table and not all(table.values()) else "covered"
        return marks

    def _gate_table(self, step: str) -> dict[str, int] | None:
        if self.data["steps"].get(step, {}).get("type") != "approval_gate":
            return None
        table = self.data["approvals"].get(step, {})
        return {d: table.get(d, 0) for d in DECISIONS}

    def missed_edges(self, workflow: Workflow, prefix: str = "") -> frozenset[tuple[str, str]]:
        """The router edges (router, target) no run took, for drawing them dashed (``prefix`` as above)."""
        taken: set[tuple[str, str]] = set()
        declared: set[tuple[str, str]] = set()
        for step in workflow.steps:
            if not isinstance(step, RouterStep):
                continue
            table = self.data["branches"].get(prefix + step.id, {})
            for index, condition in enumerate(step.conditions):
                declared.add((step.id, condition.target))
                if table.get(_condition_label(index, condition.expression)):
                    taken.add((step.id, condition.target))
            if step.default is not None:
                declared.add((step.id, step.default))
                if table.get("default"):
                    taken.add((step.id, step.default))
        return frozenset(declared - taken)

    def summary(self) -> dict[str, Any]:
        steps, steps_total = self.steps_reached()
        branches, branches_total = self.branches_reached()
        return {
            "steps": {"reached": steps, "total": steps_total, "percent": _percent(steps, steps_total)},
            "branches": {"reached": branches, "total": branches_total, "percent": _percent(branches, branches_total)},
            "reasons_reached": self.reasons_reached(),
            "never_reached": self.never_reached(),
            "agent_stops_never_reached": self.agent_stops_never_reached(),
        }


class CoverageMap:
    """The coverage of a whole session: one :class:`WorkflowCoverage` per workflow file that a test ran."""

    def __init__(self, rootdir: Path) -> None:
        self.rootdir = rootdir
        self.workflows: dict[str, WorkflowCoverage] = {}

    def add_run(self, workflow: Workflow, result: WorkflowResult,
                fallbacks: Iterable[tuple[str, str, str]] = ()) -> str:
        """Count one run of ``workflow``; returns the workflow's key."""
        key = workflow_key(workflow, self.rootdir)
        entry = self.workflows.get(key)
        if entry is None:
            entry = self.workflows[key] = WorkflowCoverage.from_workflow(workflow, key)
        entry.add_run(result, fallbacks)
        return key

    def to_wire(self) -> dict[str, Any]:
        return {key: entry.data for key, entry in sorted(self.workflows.items())}

    def merge(self, wire: Mapping[str, Any]) -> None:
        for key, data in wire.items():
            if key in self.workflows:
                self.workflows[key].merge(data)
            else:
                self.workflows[key] = WorkflowCoverage(json.loads(json.dumps(data)))

    def totals(self) -> dict[str, Any]:
        steps = [entry.steps_reached() for entry in self.workflows.values()]
        branches = [entry.branches_reached() for entry in self.workflows.values()]
        step_hit, step_all = sum(s[0] for s in steps), sum(s[1] for s in steps)
        branch_hit, branch_all = sum(b[0] for b in branches), sum(b[1] for b in branches)
        return {
            "workflows": len(self.workflows),
            "runs": sum(entry.data["runs"] for entry in self.workflows.values()),
            "steps": {"reached": step_hit, "total": step_all, "percent": _percent(step_hit, step_all)},
            "branches": {"reached": branch_hit, "total": branch_all, "percent": _percent(branch_hit, branch_all)},
        }

    def branch_percent(self) -> float:
        """The session's branch coverage; 100 when the workflows run have no branch, 0 when none ran."""
        if not self.workflows:
            return 0.0
        return float(self.totals()["branches"]["percent"])

    def to_json(self) -> str:
        """The map for tools: canonical JSON (sorted keys), the same session giving the same bytes."""
        document = {
            "format": "agentloom-coverage/1",
            "totals": self.totals(),
            "workflows": [{**entry.data, "summary": entry.summary()} for _, entry in sorted(self.workflows.items())],
        }
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def table_lines(self) -> list[str]:
        """The terminal summary: one row per workflow, then what was never reached, by name."""
        rows = [("workflow", "runs", "steps", "branches", "reasons reached")]
        for key, entry in sorted(self.workflows.items()):
            summary = entry.summary()
            rows.append((key, str(entry.data["runs"]), _fraction(summary["steps"]), _fraction(summary["branches"]),
                         str(len(summary["reasons_reached"]))))
        totals = self.totals()
        rows.append(("TOTAL", str(totals["runs"]), _fraction(totals["steps"]), _fraction(totals["branches"]), ""))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                 for row in rows]
        for key, entry in sorted(self.workflows.items()):
            summary = entry.summary()
            lines.append(f"{key}:")
            if summary["reasons_reached"]:
                lines.append(f"  reached: {', '.join(summary['reasons_reached'])}")
            lines.append(f"  never reached: {never_reached_text(summary)}")
            if summary["agent_stops_never_reached"]:
                lines.append(f"  agent stops never reached: {', '.join(summary['agent_stops_never_reached'])}")
        return lines


#: what "never reached" says when every step, branch and gate decision was reached. Not "nothing": agent
#: stops never reached are listed after it, on a line of their own.
NOTHING_MISSED = "no step, branch or gate decision"


def never_reached_text(summary: dict[str, Any]) -> str:
    """The steps, branches and gate decisions a summary never reached, or :data:`NOTHING_MISSED`."""
    return ", ".join(summary["never_reached"]) or NOTHING_MISSED


def _declare(workflow: Workflow, prefix: str, data: dict[str, Any]) -> None:
    """Add every step, branch, gate and agent of ``workflow`` (and of its children) with zero counts."""
    for step in workflow.steps:
        step_id = prefix + step.id
        data["steps"][step_id] = {"type": step.type, "ran": 0, "failed": 0, "skipped": 0}
        if isinstance(step, RouterStep):
            table = {_condition_label(i, c.expression): 0 for i, c in enumerate(step.conditions)}
            if step.default is not None:
                table["default"] = 0
            data["branches"][step_id] = table
        elif isinstance(step, ApprovalGateStep):
            data["approvals"][step_id] = {decision: 0 for decision in DECISIONS}
        elif isinstance(step, AgentStep):
            data["agents"][step_id] = {reason: 0 for reason in STOP_REASONS}
        elif isinstance(step, SubworkflowStep):
            child = workflow.compiled.children.get(step.id)
            if child is not None:
                _declare(child, step_id + "/", data)


def _condition_label(index: int, expression: str) -> str:
    return f"[{index}] {expression}"


def _branch_label(data: Mapping[str, Any]) -> str:
    condition = data.get("condition")
    if condition == "default":
        return "default"
    return _condition_label(int(condition or 0), str(data.get("expression", "")))


def _bump(table: dict[str, Any], key: str) -> None:
    table[key] = table.get(key, 0) + 1


def _add_counts(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    """Add the numbers of ``other`` into ``into``, key by key, at any depth; other values are kept."""
    for key, value in other.items():
        if isinstance(value, Mapping):
            _add_counts(into.setdefault(key, {}), value)
        elif isinstance(value, int) and not isinstance(value, bool):
            into[key] = into.get(key, 0) + value
        else:
            into.setdefault(key, value)


def _percent(reached: int, total: int) -> float:
    return round(100.0 * reached / total, 1) if total else 100.0


def _fraction(part: Mapping[str, Any]) -> str:
    return f"{part['reached']}/{part['total']} {part['percent']:g}%"
