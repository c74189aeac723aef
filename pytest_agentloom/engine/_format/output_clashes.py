"""Two steps that may run side by side writing the same ``output``: upstream's ``config.strict_outputs``.

Neither step depends on the other (directly, through other steps, or through a router that
may choose it), so which write the state keeps depends on how the run happens to order them.
This engine always keeps the later one in file order (a layer's writes are applied in file
order, and a later layer's after an earlier one's), so nothing is random here, but the file
very likely did not mean it. ``agentloom validate`` warns about each such pair;
``strict_outputs: true`` makes it a load error, as upstream's does. Two targets on different
branches of one router are exempt (only one of them runs), and so is a step overwriting what
a step it depends on wrote (a deliberate overwrite).

Outputs are compared as state paths written the same way (``a.b`` and ``a[b]`` differ).
Finding the pairs costs one pass over the steps when no output is written twice; otherwise the
writers of one path are taken in a dependency order, and only neighbours are compared: when each
one follows the one before, all of them are in sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ...errors import WorkflowError
from .graph import dependency_graph, step_depths
from .load_checks import other_branches
from .model import Workflow

__all__ = ["OutputClash", "check_parallel_outputs", "parallel_outputs"]


@dataclass(frozen=True)
class OutputClash:
    """``first`` and ``second`` (file order) may run side by side and both write ``output``."""

    first: str
    second: str
    output: str

    @property
    def message(self) -> str:
        return (f"steps '{self.first}' and '{self.second}' both write output '{self.output}' and neither depends "
                "on the other, so which value the state keeps depends on how the run orders them")

    @property
    def hint(self) -> str:
        return (f"give one of them another 'output', or add depends_on: [{self.first}] to '{self.second}' "
                "if it is meant to overwrite it.")


def parallel_outputs(workflow: Workflow) -> list[OutputClash]:
    """Every pair of steps that may run side by side and write the same output, one per neighbour pair."""
    writers: dict[str, list[str]] = {}
    for step in workflow.steps:
        if step.output is not None:
            writers.setdefault(step.output, []).append(step.id)
    shared = {output: ids for output, ids in writers.items() if len(set(ids)) > 1}
    if not shared:
        return []
    graph = dependency_graph(workflow)
    depth = step_depths(graph)
    position = {step_id: index for index, step_id in enumerate(graph)}
    above = _ancestors(graph, position, depth)
    clashes = []
    for output, ids in shared.items():
        ordered = sorted(dict.fromkeys(ids), key=lambda sid: (depth[sid], position[sid]))
        for earlier, later in pairwise(ordered):
            if above[later] >> position[earlier] & 1 or other_branches(workflow, graph, earlier, later):
                continue
            first, second = sorted((earlier, later), key=position.__getitem__)
            clashes.append(OutputClash(first, second, output))
    return clashes


def _ancestors(graph: dict[str, list[str]], position: dict[str, int], depth: dict[str, int]) -> dict[str, int]:
    """Each step's ancestors as a bit set over file positions (dependencies first, by depth)."""
    above: dict[str, int] = {}
    for step_id in sorted(graph, key=lambda sid: (depth[sid], position[sid])):
        bits = 0
        for dep in graph[step_id]:
            if dep in above:
                bits |= above[dep] | 1 << position[dep]
        above[step_id] = bits
    return above


def check_parallel_outputs(workflow: Workflow, file: str) -> list[WorkflowError]:
    """With ``config.strict_outputs``: each clash is a load error naming the later step's ``output``."""
    if not workflow.config.strict_outputs:
        return []
    return [WorkflowError(f"{clash.message} (config.strict_outputs is on)", file=file, step_id=clash.second,
                          field="output", hint=clash.hint)
            for clash in parallel_outputs(workflow)]
