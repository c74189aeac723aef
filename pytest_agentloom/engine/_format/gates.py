"""Approval gates whose decision nothing acts on: a rejected run would go on like an approved one.

A gate only writes ``approved`` or ``rejected`` (to its ``output``, ``steps.<id>.output`` and
``_approval.<id>``); the run continues either way. What stops a rejected run is a router whose
condition reads the decision and sends a rejection elsewhere. A gate whose decision no router
condition reads gates nothing, which a test of the rejected path would only find out by luck, so
both the loader (:class:`~pytest_agentloom.errors.UnreadDecisionWarning`) and ``agentloom validate``
say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import ApprovalGateStep, RouterStep, Workflow

__all__ = ["UnreadGate", "unread_gates"]

_FIRST_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class UnreadGate:
    """A gate no router reads; ``message`` and ``hint`` are what both the loader and ``validate`` print."""

    step_id: str
    message: str
    hint: str


def unread_gates(workflow: Workflow) -> list[UnreadGate]:
    """The workflow's approval gates whose decision no router condition reads, in file order."""
    routers = [step for step in workflow.steps if isinstance(step, RouterStep)]
    found = []
    for gate in workflow.steps:
        if not isinstance(gate, ApprovalGateStep) or any(_reads_decision(router, gate, workflow) for router in routers):
            continue
        where = f"'{gate.output}'" if gate.output else f"'steps.{gate.id}.output'"
        found.append(UnreadGate(
            gate.id,
            f"approval gate '{gate.id}': no router condition reads its decision ({where}), so a rejected run goes "
            "on to the next steps exactly as an approved one",
            f"route on it after the gate: a router with depends_on: [{gate.id}], a condition "
            f"\"{gate.output or f'steps.{gate.id}.output'} == 'approved'\" targeting what needs approval, and "
            "default: a step for the rejected case",
        ))
    return found


def _reads_decision(router: RouterStep, gate: ApprovalGateStep, workflow: Workflow) -> bool:
    """Whether one of ``router``'s conditions reads the gate's ``output`` key, or its ``steps``/``_approval`` entry."""
    compiled = workflow.compiled.conditions.get(router.id, ())
    names: set[str] = set().union(*(expression.names() for expression in compiled)) if compiled else set()
    output_key = _FIRST_KEY.match(gate.output) if gate.output else None
    if output_key is not None and output_key.group() in names:
        return True
    mentions = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(gate.id)}(?![A-Za-z0-9_])")
    return bool(names & {"steps", "_approval"}) and any(
        mentions.search(condition.expression) for condition in router.conditions)
