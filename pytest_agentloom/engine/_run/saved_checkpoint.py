"""A checkpoint as read back: the frozen value a resume starts from, which writes the same file again.

The writer's side is :class:`~.checkpoint_snapshot.CheckpointSnapshot` (a run as it stands, before
redaction). What a file holds is not that: its state and outputs are redacted, and its workflow is only a
name, a hash, a file and a definition that is never run. So the reader
(:func:`~.._persist.checkpoints.load_checkpoint`) yields this module's :class:`SavedCheckpoint`, whose
fields are the file's own fields: a resume (:class:`~.resume_point.ResumePoint`) is built from it and
nothing else, and :meth:`SavedCheckpoint.to_document` writes it back as the same bytes. A run's
attributes reach neither side, so renaming one cannot change the file.

Everything in it is read-only, however deep (:func:`~..._core.readonly.read_only`): one value can be
read, resumed from and written back without anyone changing it in between. What a resumed run goes on
with (its state, its step results, its pause) are plain copies it owns (:meth:`SavedRun.plain_state`,
:meth:`SavedRun.results`, :meth:`SavedRun.pending`).

:class:`SavedRun` is the part a run is resumed from; a subworkflow's child paused inside its parent
(:func:`~.child_pause.saved_child`) saves exactly that part, so it is read the same way. Values are read
as the file holds them (``0`` stays an integer where the writer wrote ``0``), so that writing them back
changes no byte; only a field left out or ``null`` is read as its empty value (no steps, no state, no
resumes). The data is checked for types before it is read
(:func:`~.._persist.checkpoints.check_checkpoint`); reading it assumes those types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..._core.plain import copy_plain
from ..._core.readonly import read_only
from .._outcome.result import StepResult, StepStatus
from .._outcome.step_context import PendingApproval
from .checkpoint_snapshot import CHECKPOINT_FORMAT_VERSION, CHECKPOINT_KIND

__all__ = ["SavedCheckpoint", "SavedRun", "SavedWorkflow"]


@dataclass(frozen=True)
class SavedRun:
    """What a run is resumed from: its pause, its finished steps, its redacted state, the time it had run.

    A checkpoint's (:class:`SavedCheckpoint` adds the rest of the file), or a paused child's as its
    parent's checkpoint keeps it (under ``pending_approval.detail.subworkflow``).
    """

    paused_step: str | None
    #: the pause as saved (``step_id``, ``clock``, ``wall``, ``detail``), read-only; :meth:`pending` reads it
    pending_approval: Mapping[str, Any] | None
    completed_steps: tuple[str, ...]
    elapsed_seconds: float
    #: how many times the run was resumed before this checkpoint was saved
    resumes: int
    state: Mapping[str, Any]
    #: each step's saved result, as :meth:`~.._outcome.result.StepResult.to_dict` wrote it (redacted)
    steps: Mapping[str, Mapping[str, Any]]

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> SavedRun:
        """The saved run in ``data`` (a paused child's, checked with its parent's checkpoint)."""
        return cls(**_run_fields(data))

    def to_document(self) -> dict[str, Any]:
        """The fields as plain JSON data, as they were read."""
        return {
            "paused_step": self.paused_step,
            "pending_approval": copy_plain(self.pending_approval),
            "completed_steps": list(self.completed_steps),
            "elapsed_seconds": self.elapsed_seconds,
            "resumes": self.resumes,
            "state": copy_plain(self.state),
            "steps": copy_plain(self.steps),
        }

    def pending(self) -> PendingApproval | None:
        """The pause a resumed run takes over: a plain copy (an agent's saved loop goes on from its data)."""
        if self.pending_approval is None:
            return None
        return PendingApproval.from_dict(copy_plain(self.pending_approval))

    def results(self) -> dict[str, StepResult]:
        """The results of the completed steps, as the run keeps them (plain copies of their outputs)."""
        done = set(self.completed_steps)
        results = {}
        for step_id, data in self.steps.items():
            if step_id in done:
                known = {key: copy_plain(value) for key, value in data.items()
                         if key in StepResult.__dataclass_fields__}
                results[step_id] = StepResult(**{**known, "status": StepStatus(data["status"])})
        return results

    def plain_state(self) -> dict[str, Any]:
        """The saved state as a plain dict of the caller's own, to start the resumed run with."""
        return dict(copy_plain(self.state))


@dataclass(frozen=True)
class SavedWorkflow:
    """The workflow a checkpoint names: what identifies it, never something to run.

    ``definition`` is the redacted definition as saved (kept for people reading the file; a resume
    reloads ``file`` and compares its ``hash``), ``overrides`` the ``config`` fields replaced for the run.
    """

    name: str | None
    hash: str | None
    file: str | None
    definition: Mapping[str, Any] | None
    overrides: Mapping[str, Any] | None

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> SavedWorkflow:
        return cls(name=data.get("name"), hash=data.get("hash"), file=data.get("file"),
                   definition=read_only(data.get("definition")), overrides=read_only(data.get("overrides")))

    def to_document(self) -> dict[str, Any]:
        return {"name": self.name, "hash": self.hash, "file": self.file,
                "definition": copy_plain(self.definition), "overrides": copy_plain(self.overrides)}


@dataclass(frozen=True)
class SavedCheckpoint(SavedRun):
    """A checkpoint file as read: the saved run, with the run's id, status and workflow.

    Its fields, with ``format_version`` and ``kind``, are the file's top-level fields, one for one.
    """

    run_id: str
    saved_at: str | None
    status: str
    #: the run's termination reason when it was saved; ``None`` while it was still running
    reason: str | None
    failed_step: str | None
    workflow: SavedWorkflow

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> SavedCheckpoint:
        """The checkpoint ``data`` (a checkpoint's JSON, checked by ``check_checkpoint``), read-only."""
        return cls(**_run_fields(data), run_id=str(data["run_id"]), saved_at=data.get("saved_at"),
                   status=data["status"], reason=data.get("reason"), failed_step=data.get("failed_step"),
                   workflow=SavedWorkflow.read(data["workflow"]))

    def to_document(self) -> dict[str, Any]:
        """The checkpoint as plain JSON data: written as the file is (sorted keys), the bytes it was read from."""
        run = super().to_document()
        return {
            "format_version": CHECKPOINT_FORMAT_VERSION, "kind": CHECKPOINT_KIND, "run_id": self.run_id,
            "saved_at": self.saved_at, "status": self.status, "reason": self.reason, "failed_step": self.failed_step,
            "paused_step": run["paused_step"], "pending_approval": run["pending_approval"],
            "completed_steps": run["completed_steps"], "elapsed_seconds": run["elapsed_seconds"],
            "resumes": run["resumes"], "workflow": self.workflow.to_document(), "state": run["state"],
            "steps": run["steps"],
        }

    def with_resumes(self, resumes: int) -> SavedCheckpoint:
        """The same checkpoint, counting ``resumes`` earlier resumes (a failed resume leaves it so)."""
        return replace(self, resumes=resumes)


def _run_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`SavedRun` fields of ``data``, read-only; a field left out or ``null`` is empty."""
    elapsed, resumes = data.get("elapsed_seconds"), data.get("resumes")
    return {
        "paused_step": data.get("paused_step"),
        "pending_approval": read_only(data.get("pending_approval")),
        "completed_steps": tuple(data.get("completed_steps") or ()),
        "elapsed_seconds": 0.0 if elapsed is None else elapsed,
        "resumes": 0 if resumes is None else resumes,
        "state": read_only(data.get("state") or {}),
        "steps": read_only(data.get("steps") or {}),
    }
