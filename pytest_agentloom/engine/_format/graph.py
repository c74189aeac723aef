"""The workflow as a graph: each step's dependencies, and the checks that ids, references and cycles are sound.

A router adds an implicit edge to each of its targets: a target runs after the
router that may choose it. The checks take any object with ``steps`` (a loaded
:class:`Workflow`, or the raw steps of a file whose schema is still broken), so
a file with several kinds of problems hears about all of them at once.
"""

from __future__ import annotations

import heapq

from ..._core.suggest import did_you_mean
from ..._core.walk import post_order
from ...errors import WorkflowError
from .model import RouterStep, Workflow

__all__ = [
    "ReadySet", "check_cycles", "check_ids", "check_references", "dependency_graph", "known_steps", "step_depths",
]


def dependency_graph(workflow: Workflow) -> dict[str, list[str]]:
    """Each step's dependencies, with the implicit edge from a router to each of its targets."""
    graph = {step.id: list(dict.fromkeys(step.depends_on)) for step in workflow.steps}
    for step in workflow.steps:
        if isinstance(step, RouterStep):
            for target in step.targets():
                if target in graph and step.id not in graph[target]:
                    graph[target].append(step.id)
    return graph


class ReadySet:
    """The steps whose dependencies have all settled, kept up to date as each step settles.

    Each step counts its unsettled dependencies; settling a step counts down its
    dependents', and a step whose count reaches zero becomes ready. :meth:`pop`
    hands out ready steps by position in the file. Finding the next layer thus
    costs what settles in it, not a scan of every step still pending.
    """

    def __init__(self, graph: dict[str, list[str]]) -> None:
        self.position = {step_id: index for index, step_id in enumerate(graph)}
        self._ids = list(graph)
        self._waiting = {step_id: len(deps) for step_id, deps in graph.items()}
        self._dependents: dict[str, list[str]] = {step_id: [] for step_id in graph}
        for step_id, deps in graph.items():
            for dep in deps:
                self._dependents[dep].append(step_id)
        self._ready = [self.position[step_id] for step_id, count in self._waiting.items() if count == 0]
        heapq.heapify(self._ready)

    def copy(self) -> ReadySet:
        """A ready set in the same state, for another run: what settling changes is copied, the rest shared."""
        other = object.__new__(ReadySet)
        other.position, other._ids, other._dependents = self.position, self._ids, self._dependents
        other._waiting = dict(self._waiting)
        other._ready = list(self._ready)
        return other

    def settled(self, step_id: str) -> None:
        """``step_id`` has its result: its dependents wait for one step fewer."""
        for dependent in self._dependents[step_id]:
            self._waiting[dependent] -= 1
            if self._waiting[dependent] == 0:
                heapq.heappush(self._ready, self.position[dependent])

    def pop(self) -> str | None:
        """The ready step that comes first in the file (``None``: none is ready); it is handed out once."""
        return self._ids[heapq.heappop(self._ready)] if self._ready else None


def step_depths(graph: dict[str, list[str]]) -> dict[str, int]:
    """Each step's layer: 0 without dependencies, else one more than its deepest dependency (no recursion).

    A dependency that is not a step counts as nothing; in a cycle (reported by :func:`check_cycles`) the
    step met again counts as depth 0.
    """
    def known(node: str) -> list[str]:
        return [dep for dep in graph.get(node, ()) if dep in graph]

    depth: dict[str, int] = {}
    for node in post_order(graph, known, key=str):
        depth[node] = 1 + max((depth.get(dep, 0) for dep in graph[node]), default=-1)
    return depth


def known_steps(ids: list[str]) -> str:
    """``known steps: a, b, c.`` with at most 20 names, so 1,000 mistakes do not print a million names."""
    shown = ", ".join(ids[:20]) + (f", ... ({len(ids) - 20} more)" if len(ids) > 20 else "")
    return f"known steps: {shown}."


def check_ids(workflow: Workflow, file: str) -> list[WorkflowError]:
    seen: set[str] = set()
    problems = []
    for index, step in enumerate(workflow.steps):
        if step.id in seen:
            problems.append(WorkflowError(
                f"Duplicate step id '{step.id}'", file=file, step_id=step.id, field=f"steps[{index}].id",
                hint="give every step its own id.",
            ))
        seen.add(step.id)
    return problems


def check_references(workflow: Workflow, file: str) -> list[WorkflowError]:
    ids = list(dict.fromkeys(step.id for step in workflow.steps))
    problems = []
    for step in workflow.steps:
        for position, dep in enumerate(step.depends_on):
            if dep not in ids:
                problems.append(WorkflowError(
                    f"Step '{step.id}' depends on unknown step '{dep}'", file=file, step_id=step.id,
                    field=f"depends_on[{position}]", hint=did_you_mean(dep, ids) or known_steps(ids),
                ))
            elif dep == step.id:
                problems.append(WorkflowError(
                    f"Step '{step.id}' depends on itself", file=file, step_id=step.id, field=f"depends_on[{position}]",
                ))
        if isinstance(step, RouterStep):
            problems.extend(_check_router_targets(step, ids, file))
    return problems


def _check_router_targets(step: RouterStep, ids: list[str], file: str) -> list[WorkflowError]:
    fields = [(f"conditions[{i}].target", c.target) for i, c in enumerate(step.conditions)]
    if step.default is not None:
        fields.append(("default", step.default))
    problems = []
    if not fields:
        problems.append(WorkflowError(
            f"Router '{step.id}' has no conditions and no default", file=file, step_id=step.id,
            field="conditions", hint="add at least one condition or a default target.",
        ))
    for field, target in fields:
        if not isinstance(target, str):
            continue  # a raw condition without a valid target: already a schema problem
        if target not in ids:
            problems.append(WorkflowError(
                f"Router '{step.id}' targets unknown step '{target}'", file=file, step_id=step.id, field=field,
                hint=did_you_mean(target, ids) or known_steps(ids),
            ))
        elif target == step.id:
            problems.append(WorkflowError(
                f"Router '{step.id}' targets itself", file=file, step_id=step.id, field=field,
            ))
    return problems


def check_cycles(workflow: Workflow, file: str) -> list[WorkflowError]:
    graph = dependency_graph(workflow)
    state: dict[str, int] = {}

    def visit(start: str) -> list[str] | None:
        """Depth-first from ``start`` without recursion (a chain of 1,000 steps is an ordinary file)."""
        stack: list[str] = [start]
        pending = [iter(graph[start])]
        state[start] = 1
        while pending:
            dep = next(pending[-1], None)
            if dep is None:
                state[stack.pop()] = 2
                pending.pop()
            elif state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            elif dep not in state and dep in graph:
                state[dep] = 1
                stack.append(dep)
                pending.append(iter(graph[dep]))
        return None

    for step in workflow.steps:
        if step.id not in state and (cycle := visit(step.id)):
            shown = " -> ".join(reversed(cycle))
            return [WorkflowError(
                f"Dependency cycle: {shown}", file=file, step_id=cycle[-1], field="depends_on",
                hint="remove one of these dependencies (a router's targets depend on the router implicitly).",
            )]
    return []
