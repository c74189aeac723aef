"""Where a resumed run starts: :class:`ResumePoint`, and the saved step results it is built from.

A top-level run is resumed from its checkpoint file (:mod:`.._entry.resume_workflow`); a
subworkflow's child run from what its parent's checkpoint saved of it (:mod:`.child_pause`).
Both read step results the same way, with :func:`saved_results`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._outcome.result import StepResult, StepStatus
from .._outcome.step_context import PendingApproval

__all__ = ["ResumePoint", "saved_results"]


@dataclass
class ResumePoint:
    """What a resumed run starts from: the finished steps, the pause, the decision, the time already spent."""

    checkpoint: dict[str, Any]
    results: dict[str, StepResult]
    pending: PendingApproval | None
    decision: str | None
    resumes: int
    elapsed: float
    warnings: list[str]


def saved_results(steps: Mapping[str, Any], completed: Iterable[str]) -> dict[str, StepResult]:
    """The saved results of the ``completed`` steps (checked for type already), as the run keeps them."""
    done = set(completed)
    results = {}
    for step_id, data in steps.items():
        if step_id in done:
            known = {key: value for key, value in data.items() if key in StepResult.__dataclass_fields__}
            results[step_id] = StepResult(**{**known, "status": StepStatus(data["status"])})
    return results
