"""A subworkflow's child paused at an approval gate: what the parent's checkpoint keeps of it, and the
child run a resume starts again from it.

The child's pause becomes the parent step's: the ``subworkflow`` step hands the run a pause whose
``detail`` is :func:`saved_child` (under ``subworkflow``), so the parent pauses at that step and its
checkpoint holds, inside ``pending_approval.detail``, all the child needs to go on: the gate it waits
at (its own ``pending_approval``, where a grandchild's pause nests the same way), its finished steps,
its state and the time it had run. The state and the step outputs are redacted by the child's own
redactor before they leave the run, exactly as a checkpoint's are. Resuming the parent runs the
``subworkflow`` step again; it finds that detail and resumes the child from
:func:`child_resume_point`, with the parent's decision, instead of starting it anew.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..._core.plain import to_plain
from ..._redaction.policy import POLICY
from ..._redaction.redactor import Redactor
from .._format.model import Workflow
from .._format.reads import redacted_reads
from .._outcome.redacted import redact_step
from .._outcome.result import StepStatus
from .checkpoint_snapshot import CheckpointSnapshot
from .resume_point import ResumePoint
from .saved_checkpoint import SavedRun

__all__ = ["child_resume_point", "saved_child"]


def saved_child(snapshot: CheckpointSnapshot, redactor: Redactor) -> dict[str, Any]:
    """What the parent's checkpoint keeps of a paused child run: plain data, redacted like a checkpoint."""
    secrets = sorted({*redactor.secret_values(snapshot.state), *redactor.secret_values(snapshot.workflow.state)},
                     key=lambda text: (-len(text), text))
    pending = snapshot.pending_approval
    return to_plain({
        "paused_step": snapshot.paused_step,
        "pending_approval": redactor.redact_strings(pending.to_dict(), secrets) if pending else None,
        "completed_steps": [sid for sid, r in snapshot.steps.items() if r.status is not StepStatus.PAUSED],
        "elapsed_seconds": round(snapshot.elapsed_seconds, 6),
        "resumes": snapshot.resumes,
        "state": redactor.redact_state(snapshot.state),
        "steps": {sid: replace(redact_step(redactor, result, secrets), reasoning_content=None).to_dict()
                  for sid, result in snapshot.steps.items()},
    })


def child_resume_point(saved: Mapping[str, Any], workflow: Workflow, decision: str | None,
                       inherited: Mapping[str, Any] | None = None) -> tuple[ResumePoint, dict[str, Any]]:
    """The resume point and state of a child run from :func:`saved_child` (its types checked with the checkpoint).

    The saved child is read first into a frozen :class:`~.saved_checkpoint.SavedRun`, as a checkpoint
    file is, and the child resumed from that value. ``inherited`` is the parent's state, for a child that
    started from it: a top-level key the child holds as a redaction marker takes the parent's value when
    the parent has a real one (a resume's ``state=`` put it back), so ``agentloom resume --state
    api_key=...`` reaches the child too. A redacted key that a step still to run reads is named in the
    child's ``run_resume`` event, as a top-level resume names it.
    """
    child = SavedRun.read(saved)
    state = child.plain_state()
    for key, value in (inherited or {}).items():
        if _is_marker(state.get(key)) and not _is_marker(value):
            state[key] = copy.deepcopy(value)
    remaining = [step.id for step in workflow.steps if step.id not in child.completed_steps]
    warnings = [f"step '{step_id}' reads state key '{key}', which the checkpoint holds redacted"
                for step_id, key in redacted_reads(workflow, state, remaining)]
    return ResumePoint.starting_from(child, decision=decision, warnings=warnings), state


def _is_marker(value: Any) -> bool:
    return isinstance(value, str) and POLICY.is_marker(value)
