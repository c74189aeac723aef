"""What a checkpoint saves of a run, as one frozen value the run hands over (:meth:`.loop.Run.checkpoint_snapshot`).

The checkpoint file is a versioned format: its fields must change only when
:data:`CHECKPOINT_FORMAT_VERSION` does. The checkpoint writer
(:func:`~.._persist.checkpoints.checkpoint_document`) reads nothing but this value, so renaming an
attribute of the run changes the run's one method that fills it, never the file; a test pins the
field list and the version together. The reader's side is :mod:`.saved_checkpoint`: a file read
back is a frozen :class:`~.saved_checkpoint.SavedCheckpoint`, never the run's attributes either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._format.model import Workflow
from .._outcome.result import StepResult
from .._outcome.step_context import PendingApproval

__all__ = ["CHECKPOINT_FORMAT_VERSION", "CHECKPOINT_KIND", "CheckpointSnapshot"]

#: the version of the checkpoint file's fields; raise it whenever :class:`CheckpointSnapshot` changes
CHECKPOINT_FORMAT_VERSION = 1
#: a checkpoint file's top-level ``kind``: what tells it from any other JSON file
CHECKPOINT_KIND = "agentloom.checkpoint"


@dataclass(frozen=True)
class CheckpointSnapshot:
    """A run as it stands, before redaction: everything a checkpoint file holds but its status and time.

    ``state`` and ``steps`` are read-only views of the run's own (the writer serialises them at once).
    """

    run_id: str
    #: the run's termination reason (a :class:`~.._outcome.result.TerminationReason` value)
    reason: str
    failed_step: str | None
    paused_step: str | None
    #: the gate the run is paused at (a gate still waiting keeps the time it began waiting); ``None`` unless paused
    pending_approval: PendingApproval | None
    #: the results so far, in file order
    steps: Mapping[str, StepResult]
    elapsed_seconds: float
    #: how many times the run was resumed before
    resumes: int
    workflow: Workflow
    state: Mapping[str, Any]
