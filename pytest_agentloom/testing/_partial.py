"""Part of a workflow, for unit tests of one node: ``agentloom.run(..., only="draft")`` or ``start_at="route"``.

``only`` keeps one step; ``start_at`` keeps a step and every step that runs
after it (that depends on it, directly or through others, a router's targets
included). Dependencies on steps left out are dropped, so the kept steps run as
soon as the state the test gives them is there: the test passes the state those
steps read (``state={"category": "bug"}``). A router kept alone still chooses;
its targets that are not kept are simply not run.
"""

from __future__ import annotations

from .._core.suggest import did_you_mean
from ..engine._format.graph import dependency_graph
from ..engine._format.model import Workflow
from ..errors import UsageError, render_message

__all__ = ["partial_workflow"]


def partial_workflow(workflow: Workflow, *, only: str | None = None, start_at: str | None = None) -> Workflow:
    """A copy of ``workflow`` with only the steps asked for (see the module docs)."""
    if only is not None and start_at is not None:
        raise UsageError(render_message(
                "agentloom.run() takes only= or start_at=, not both.",
                hint="only='step' runs one step; start_at='step' runs it and the steps after it."))
    first = only if only is not None else start_at
    ids = [step.id for step in workflow.steps]
    if first not in ids:
        hint = did_you_mean(str(first), ids)
        raise UsageError(
            render_message(
                f"agentloom.run() got {'only' if only is not None else 'start_at'}={first!r}, which is no step of "
                f"workflow '{workflow.name}' (steps: {', '.join(ids)}).",
                hint=f"{hint + ' ' if hint else ''}"
                     "name a step id of the file.")
        )
    keep = {first} if only is not None else _after(workflow, str(first))
    steps = [step.model_copy(update={"depends_on": [dep for dep in step.depends_on if dep in keep]})
             for step in workflow.steps if step.id in keep]
    return workflow.model_copy(update={"steps": steps})  # its source and compiled parts come along


def _after(workflow: Workflow, first: str) -> set[str]:
    """``first`` and every step that depends on it, directly or not (a router's targets depend on it)."""
    graph = dependency_graph(workflow)
    keep = {first}
    changed = True
    while changed:
        changed = False
        for step_id, deps in graph.items():
            if step_id not in keep and keep.intersection(deps):
                keep.add(step_id)
                changed = True
    return keep
