"""Where a resumed run starts: :class:`ResumePoint`, built from a saved run and nothing else.

A top-level run is resumed from its checkpoint file (:mod:`.._entry.resume_workflow`); a
subworkflow's child run from what its parent's checkpoint saved of it (:mod:`.child_pause`).
Both are read first into a frozen :class:`~.saved_checkpoint.SavedRun` (a checkpoint's is a
:class:`~.saved_checkpoint.SavedCheckpoint`), and :meth:`ResumePoint.starting_from` turns it into
what the run takes over, so the two are resumed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._outcome.result import StepResult
from .._outcome.step_context import PendingApproval
from .saved_checkpoint import SavedRun

__all__ = ["ResumePoint"]


@dataclass
class ResumePoint:
    """What a resumed run starts from: the finished steps, the pause, the decision, the time already spent.

    ``saved`` is the saved run it was built from, as read (a :class:`~.saved_checkpoint.SavedCheckpoint`
    for a top-level run: a failed resume writes it back, :mod:`.._persist.redacted_writes`).
    """

    saved: SavedRun
    results: dict[str, StepResult]
    pending: PendingApproval | None
    decision: str | None
    resumes: int
    elapsed: float
    warnings: list[str]

    @classmethod
    def starting_from(cls, saved: SavedRun, *, decision: str | None, warnings: list[str]) -> ResumePoint:
        """The point a run resumed from ``saved`` starts at, with ``decision``: one resume more than it had."""
        return cls(saved=saved, results=saved.results(), pending=saved.pending(), decision=decision,
                   resumes=saved.resumes + 1, elapsed=float(saved.elapsed_seconds), warnings=warnings)
