"""What a top-level run leaves behind: checkpoints, the redacted result, the run record.

:class:`Persistence` implements the run's hooks (:class:`~.._run.loop.RunHooks`):
after each layer it saves a checkpoint when checkpointing is on; at the end it
saves the last checkpoint (always when the run paused), redacts the result
(:func:`~.._outcome.redacted.redact_result`) and writes the run record
(:mod:`.records`). This is the one place that decides what a run writes to
disk, and everything it writes goes through the redactor first.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..._core.files import write_json_atomic
from ..._redaction.redactor import Redactor
from .._format.model import Workflow
from .._format.redaction_patterns import redactor_for
from .._outcome.held_records import HeldRecords, check_record_target, write_record_file
from .._outcome.redacted import redact_result
from .._outcome.result import RunStatus, WorkflowResult
from .._run.loop import ResumePoint, Run
from .._run.saved_checkpoint import SavedCheckpoint
from .checkpoints import (
    check_checkpoint_target,
    checkpoint_document,
    default_checkpoint_dir,
    workflow_file,
    workflow_hash,
)
from .records import build_record, record_name, resolve_runs_dir

__all__ = ["Persistence"]


class Persistence:
    """Redaction, checkpoints and the run record of one run. Build it with :meth:`for_run`."""

    def __init__(
        self,
        workflow: Workflow,
        *,
        redactor: Redactor,
        checkpoint_dir: Path | Callable[[], Path],
        checkpoint_every_layer: bool,
        runs_dir: Path | None,
        wall_clock: Callable[[], float],
        held_records: HeldRecords | None = None,
        resume: ResumePoint | None = None,
    ) -> None:
        self.workflow = workflow
        self._redactor = redactor
        self._checkpoint_dir = checkpoint_dir
        self.checkpoint_every_layer = checkpoint_every_layer
        self.runs_dir = runs_dir
        self.held_records = held_records  # the agentloom fixture's: records wait in memory until asked for
        self.wall_clock = wall_clock
        self.resume = resume
        self.hash = workflow_hash(workflow, redactor)
        self.started_wall = wall_clock()
        self.checkpoint: dict[str, object] | None = None
        self.checkpoint_path: Path | None = None

    @property
    def checkpoint_dir(self) -> Path:
        """Where checkpoints go; a folder given as a function is found the first time it is needed.

        Most runs save no checkpoint, and finding the default folder resolves the working
        directory on disk: a fixed cost per run that only checkpoints should pay.
        """
        if callable(self._checkpoint_dir):
            self._checkpoint_dir = self._checkpoint_dir()
        return self._checkpoint_dir

    @classmethod
    def for_run(
        cls,
        workflow: Workflow,
        *,
        checkpoint_dir: str | Path | None = None,
        runs_dir: str | Path | bool | HeldRecords | None = None,
        redaction_salt: bytes | str | None = None,
        wall_clock: Callable[[], float] | None = None,
        env: Mapping[str, str] | None = None,
        resume: ResumePoint | None = None,
    ) -> Persistence:
        """Resolve the folders: ``checkpoint_dir`` turns checkpointing on; ``runs_dir=False`` turns records off."""
        records = resolve_runs_dir(runs_dir, env)
        every_layer = checkpoint_dir is not None or workflow.config.checkpoint
        folder: Path | Callable[[], Path]
        if checkpoint_dir is not None:
            folder = Path(checkpoint_dir).expanduser().resolve()
        elif workflow.config.checkpoint_dir:
            folder = workflow.resolve_path(workflow.config.checkpoint_dir)
        else:
            folder = functools.partial(default_checkpoint_dir, records, env)
        return cls(
            workflow, redactor=redactor_for(workflow, env=env, salt=redaction_salt),
            checkpoint_dir=folder, checkpoint_every_layer=every_layer, runs_dir=records,
            wall_clock=wall_clock or time.time, resume=resume,
            held_records=runs_dir if isinstance(runs_dir, HeldRecords) else None,
        )

    # -- the run's hooks --------------------------------------------------------------------------------

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    def wall_time(self) -> float:
        return self.wall_clock()

    def after_layer(self, run: Run) -> None:
        if self.checkpoint_every_layer and not run.paused_step:
            self._save(run, status="running")

    def finish(self, run: Run, result: WorkflowResult) -> WorkflowResult:
        """Save the last checkpoint, redact the result, write the record; return the public result."""
        if self.resume is not None and result.status is RunStatus.FAILED:
            self._keep_resumable(run)
        elif result.status is RunStatus.PAUSED or self.checkpoint_every_layer or self.resume is not None:
            self._save(run, status=result.status.value)  # a resumed run marks its checkpoint as settled
        public = redact_result(self.redactor, result, self.redactor.secret_values(run.state))
        public.checkpoint = copy.deepcopy(self.checkpoint) if self.checkpoint is not None else None
        public.checkpoint_path = self.checkpoint_path
        public.unredacted_state = result.state  # in-process only; never serialised
        public.ran_workflow = self.workflow  # in-process only: what resuming this result may run
        if self.runs_dir is not None:
            self._write_record(run, result, public, self.runs_dir)
        return public

    def _write_record(self, run: Run, result: WorkflowResult, public: WorkflowResult, folder: Path) -> None:
        """Write the run's record, or hand it to the :class:`HeldRecords` to build and write when released.

        The record reads only ids and counters, which ``result`` (the run's own, never handed out) and the
        public result share; a held one is built from ``result``, so a test changing what it got back
        changes nothing in it.
        """
        resumes = self.resume.resumes if self.resume else 0
        checkpoint, duration = self.checkpoint_path, run.now()

        def record() -> dict[str, Any]:
            return build_record(
                result, workflow_hash=self.hash, workflow_file=workflow_file(self.workflow),
                started_at=self.started_wall, duration=duration, steps_executed=run.trace.step_ids(),
                checkpoint=_under(checkpoint, folder) if checkpoint else None, resumes=resumes,
            )

        name = record_name(run.run_id, resumes)
        if self.held_records is None:
            public.record_path = write_record_file(folder / name, record())
            return
        self.held_records.add(name, record)
        public.hold_record(name, self.held_records)

    def check_record(self, run_id: str) -> None:
        """Refuse, before the run starts, a record that would replace a file agentloom did not write
        (checked again when the record is written: :func:`~.._outcome.held_records.write_record_file`)."""
        if self.runs_dir is not None and self.held_records is None:
            check_record_target(self.runs_dir / record_name(run_id, self.resume.resumes if self.resume else 0))
        if self.checkpoint_every_layer:  # the folder is known anyway; a paused run's first save checks too
            check_checkpoint_target(self.checkpoint_dir / f"{run_id}.json")

    def _keep_resumable(self, run: Run) -> None:
        """A resumed run that failed leaves its checkpoint resumable, so the same resume can be typed again
        once the cause is fixed: the last checkpoint saved during this resume (after a layer that
        succeeded) stays; when none was, the checkpoint it resumed from is kept, its resume count raised so
        that the next attempt's run record does not replace this one's.

        That checkpoint is written from the frozen value it was read as
        (:class:`~.._run.saved_checkpoint.SavedCheckpoint`), not from an edited document: the file is the
        one read, byte for byte, but for its resume count.
        """
        saved = self.resume.saved if self.resume is not None else None
        if self.checkpoint is None and self.resume is not None and isinstance(saved, SavedCheckpoint):
            kept = saved.with_resumes(self.resume.resumes)
            self._write(run, kept.to_document())
            run.event("checkpoint_saved", status=kept.status)

    def _save(self, run: Run, *, status: str) -> None:
        document = checkpoint_document(run.checkpoint_snapshot(), status=status, redactor=self.redactor, hash=self.hash,
                                       saved_at=self.wall_clock())
        self._write(run, document)
        run.event("checkpoint_saved", status=status)

    def _write(self, run: Run, document: dict[str, object]) -> None:
        path = self.checkpoint_dir / f"{run.run_id}.json"
        if self.checkpoint_path != path:  # the run's first save: the file there must be a checkpoint, or nothing
            check_checkpoint_target(path)
        # owner-only: a checkpoint holds the run's state and outputs (redacted, but not meant to be shared)
        self.checkpoint_path = write_json_atomic(path, document, private=True)
        self.checkpoint = document


def _under(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` (POSIX form) when inside it, so a record does not name a temporary folder."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)
