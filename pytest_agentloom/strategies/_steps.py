"""Every step a run can reach, subworkflows' included, by the id its trace events and model requests carry.

A subworkflow's steps run as ``<parent step>/<child step>`` (deeper ones ``a/b/c``). The scripts
(:mod:`._scripts`) answer them by that id and the invariants (:mod:`._invariants`) judge them by it; both walk
the workflow here, which imports no hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..engine._format.model import AnyStep, SubworkflowStep, Workflow
from ..engine._steps.subworkflow import child_workflow

__all__ = ["all_steps"]


def all_steps(workflow: Workflow, prefix: str = "") -> Iterator[tuple[str, Workflow, AnyStep]]:
    """Every step of ``workflow`` and of its subworkflows (depth first), by the id the run gives it
    (``<parent step>/<child step>``), with the workflow it belongs to."""
    for step in workflow.steps:
        yield f"{prefix}{step.id}", workflow, step
        if isinstance(step, SubworkflowStep):
            yield from all_steps(child_workflow(workflow, step), f"{prefix}{step.id}/")
