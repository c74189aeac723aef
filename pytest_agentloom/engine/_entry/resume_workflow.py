"""Continuing a saved run: :func:`resume_workflow` and :func:`aresume_workflow`.

Completed steps are not run again, and the state is the checkpoint's, so
redacted keys hold markers: a warning names each redacted key that a remaining
step reads (:func:`~.._format.reads.redacted_reads`), and ``state=`` puts values back.
The workflow is reloaded from its file, which must not have changed since the
checkpoint was saved (``workflow=`` overrides); the definition saved in the
checkpoint is never run, since a checkpoint is untrusted data (without the file,
resuming is refused). Whatever the checkpoint is given as (a file, a run id, a
document, a result), it is checked and read into one frozen
:class:`~.._run.saved_checkpoint.SavedCheckpoint`, and everything below reads that
value. The run then goes on as any other (:class:`~.._run.loop.Run` starting from
a :class:`~.._run.resume_point.ResumePoint`).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from ...errors import UsageError, render_message
from .._format.loader import load_workflow
from .._format.model import Workflow
from .._format.reads import redacted_reads
from .._format.redaction_patterns import redactor_for
from .._outcome.held_records import HeldRecords
from .._outcome.result import WorkflowResult
from .._persist.checkpoints import (
    RESUMABLE,
    CheckpointError,
    check_checkpoint,
    find_checkpoint,
    load_checkpoint,
    workflow_hash,
)
from .._persist.redacted_writes import Persistence
from .._run.loop import Run
from .._run.resume_point import ResumePoint
from .._run.saved_checkpoint import SavedCheckpoint
from .options import ResumeOptions, RunOptions, check_options, prepare
from .running import RunningWorkflow, running_workflow
from .sync import run_sync

__all__ = ["aresume_workflow", "resume_workflow"]

log = logging.getLogger("pytest_agentloom.resume")

Checkpoint = str | Path | Mapping[str, Any] | WorkflowResult


def resume_workflow(checkpoint: Checkpoint, **options: Unpack[ResumeOptions]) -> WorkflowResult:
    """Continue a paused (or interrupted) run from its checkpoint.

    ``checkpoint`` is a checkpoint file, its loaded document, a run id (looked
    up with :func:`~.._persist.checkpoints.find_checkpoint`) or a paused :class:`WorkflowResult`.
    ``decision`` (``"approved"``/``"rejected"``, or ``True``/``False``)
    settles the approval gate or agent call the run paused at (``"cancelled"``
    stops a waiting agent as ``cancelled``); ``state`` replaces top-level
    keys, e.g. to put back a redacted secret. Completed steps are not run
    again. The workflow is reloaded from its file, which must not have changed
    (pass ``workflow=`` to override). Every option is listed in :class:`~.options.ResumeOptions`.
    """
    check_options(options, ResumeOptions, "resume_workflow")
    return run_sync(aresume_workflow(checkpoint, **options))


async def aresume_workflow(checkpoint: Checkpoint, **options: Unpack[ResumeOptions]) -> WorkflowResult:
    """Continue a saved run. See :func:`resume_workflow`."""
    check_options(options, ResumeOptions, "aresume_workflow")
    env, salt, checkpoint_dir = options.get("env"), options.get("redaction_salt"), options.get("checkpoint_dir")
    saved, where = _locate(checkpoint, checkpoint_dir=checkpoint_dir, runs_dir=options.get("runs_dir"), env=env)
    given = options.get("workflow")
    if given is None and isinstance(checkpoint, WorkflowResult) and checkpoint.ran_workflow is not None \
            and checkpoint.ran_workflow.source is None:
        given = checkpoint.ran_workflow  # the run's own workflow, held in memory (it has no file to reload)
    loaded, notes = _workflow_for(saved, given, env, salt)
    point, saved_state = _resume_point(saved, loaded, _decision(options.get("decision")), options.get("state"),
                                       notes)
    inputs = prepare(loaded, saved_state, RunOptions(provider=options.get("provider"), tools=options.get("tools"),
                                                     clock=options.get("clock")))
    _check_tools(saved, loaded, point, inputs.tools)  # before anything is written: the checkpoint stays as it is
    folder = checkpoint_dir if checkpoint_dir is not None else (where.parent if where is not None else None)
    hooks = Persistence.for_run(
        loaded, checkpoint_dir=folder, runs_dir=options.get("runs_dir"), redaction_salt=salt,
        wall_clock=options.get("wall_clock"), env=env, resume=point,
    )
    if folder is not None and not (checkpoint_dir is not None or loaded.config.checkpoint):
        hooks.checkpoint_every_layer = False  # saved only at a pause, as in the original run
    hooks.redactor.check_secret_lengths(dict(options.get("state") or {}))  # the values put back (the rest: markers)
    hooks.check_record(saved.run_id)
    run = Run(loaded, inputs.state, provider=inputs.provider, tools=inputs.tools, clock=inputs.clock,
              run_id=saved.run_id, hooks=hooks, resume=point)
    token = running_workflow.set(RunningWorkflow(saved.run_id, loaded, inputs.state))
    try:
        return await run.execute()
    finally:
        running_workflow.reset(token)


def _check_tools(checkpoint: SavedCheckpoint, workflow: Workflow, point: ResumePoint, tools: Mapping[str, Any]) -> None:
    """Refuse to resume when a step still to run names a tool this resume was not given.

    Otherwise the step would fail, and with it the resumed run; typically the tools the run was
    started with (``--tools``) were not passed again.
    """
    missing: dict[str, list[str]] = {}
    for step in workflow.steps:
        if step.id in point.results:
            continue
        names = [step.tool_name] if step.type == "tool" else []
        if step.type == "agent" and step.agent in workflow.agents:
            names = workflow.agents[step.agent].tool_names()
        for name in names:
            if name not in tools:
                missing.setdefault(name, []).append(step.id)
    if missing:
        needed = ", ".join(f"'{name}' (step {', '.join(repr(sid) for sid in steps)})"
                           for name, steps in sorted(missing.items()))
        raise CheckpointError(
            render_message(
                f"Run '{checkpoint.run_id}' cannot be resumed: steps still to run need tools this resume was not "
                f"given: {needed}. The checkpoint is unchanged.",
                hint="pass the tools the run was started with, "
                     f"e.g. agentloom resume {checkpoint.run_id} --tools MODULE:ATTR (resume_workflow(..., "
                     f"tools=...)).")
        )


def _decision(value: str | bool | None) -> str | None:
    """A decision as the run records it: ``approved``, ``rejected`` or ``cancelled``."""
    if value is None:
        return None
    if value is True or value in ("approve", "approved"):
        return "approved"
    if value is False or value in ("reject", "rejected"):
        return "rejected"
    if value in ("cancel", "cancelled"):  # an agent waiting for approval stops as 'cancelled'
        return "cancelled"
    raise UsageError(render_message(
            f"decision must be 'approved', 'rejected' or 'cancelled' (or True/False), got {value!r}.",
            hint="pass one of those, e.g. agentloom.resume(result, approve='cancelled')."))


def _workflow_for(checkpoint: SavedCheckpoint, given: Workflow | str | Path | None,
                  env: Mapping[str, str] | None, salt: bytes | str | None) -> tuple[Workflow, list[str]]:
    """The workflow to resume with: the one given, else the checkpoint's file (which must not have changed)."""
    workflow, notes = _saved_workflow(checkpoint, given, env, salt)
    overrides = _overrides(checkpoint)
    return (workflow.with_config(**overrides) if overrides else workflow), notes


#: The command-line overrides a resume applies again, with their types. A checkpoint is untrusted data:
#: nothing else it says about ``config`` is applied (a sandbox or a budget there could widen the run).
_RESUMED_OVERRIDES: dict[str, type] = {"model": str, "provider": str, "stream": bool, "checkpoint": bool}


def _overrides(checkpoint: SavedCheckpoint) -> dict[str, Any]:
    """The ``--model``, ``--provider``, ``--stream`` and ``--checkpoint`` the run was started with."""
    saved = checkpoint.workflow.overrides
    if saved is None:
        return {}
    return {key: value for key, value in saved.items()
            if key in _RESUMED_OVERRIDES and isinstance(value, _RESUMED_OVERRIDES[key])}


def _saved_workflow(checkpoint: SavedCheckpoint, given: Workflow | str | Path | None,
                    env: Mapping[str, str] | None, salt: bytes | str | None) -> tuple[Workflow, list[str]]:
    notes: list[str] = []
    saved = checkpoint.workflow
    if given is not None:
        return (given if isinstance(given, Workflow) else load_workflow(given)), notes
    file = saved.file
    if file and Path(file).is_file():
        workflow = load_workflow(file)
        current = workflow_hash(workflow, redactor_for(workflow, env=env, salt=salt))
        if current != saved.hash:
            raise CheckpointError(
                render_message(
                    f"The workflow file {file} changed since run '{checkpoint.run_id}' was saved "
                    f"(hash {saved.hash} then, {current} now).",
                    hint="restore the file, or pass the workflow explicitly (workflow=...) to resume with the "
                         "new definition anyway.")
            )
        return workflow, notes
    # the definition saved in a checkpoint is never run: a checkpoint is data anyone with the folder can edit,
    # and running it could widen what the run may do (a step added, the sandbox turned off)
    where = f"its workflow file {file} is not there" if file else "its workflow has no file (it was built in Python)"
    raise CheckpointError(
        render_message(
            f"Cannot resume run '{checkpoint.run_id}': {where}, and a checkpoint's saved definition is "
            "never run (a checkpoint is data; the definition it holds could allow what the workflow does not).",
            hint="restore the workflow file, or pass the workflow explicitly (workflow=... in Python, "
                 "--workflow FILE on the command line).")
    )


def _resume_point(checkpoint: SavedCheckpoint, workflow: Workflow, decision: str | None,
                  state: Mapping[str, Any] | None, notes: list[str]) -> tuple[ResumePoint, dict[str, Any]]:
    if checkpoint.status not in RESUMABLE:
        raise CheckpointError(
            render_message(
                f"Run '{checkpoint.run_id}' ended with status '{checkpoint.status}'; only paused or interrupted "
                "runs can be resumed.",
                hint="start a new run.")
        )
    initial = {**checkpoint.plain_state(), **copy.deepcopy(dict(state or {}))}
    remaining = [step.id for step in workflow.steps if step.id not in checkpoint.completed_steps]
    warnings = list(notes)
    for step_id, key in redacted_reads(workflow, initial, remaining):
        warnings.append(
            render_message(
                f"step '{step_id}' reads state key '{key}', which the checkpoint holds redacted: it will receive "
                "<REDACTED:sha256=…> instead of the original.",
                hint=f"resume with state={{'{key.split('.')[0]}': "
                     f"...}} (agentloom resume --state {key.split('.')[0]}=...)", inline=True)
        )
    for message in warnings:
        log.warning("resume %s: %s", checkpoint.run_id, message)
    return ResumePoint.starting_from(checkpoint, decision=decision, warnings=warnings), initial


def _locate(checkpoint: Any, *, checkpoint_dir: str | Path | None,
            runs_dir: str | Path | bool | HeldRecords | None,
            env: Mapping[str, str] | None) -> tuple[SavedCheckpoint, Path | None]:
    """The checkpoint, checked and read (a frozen value, whatever it was given as), and its file when it came
    from one."""
    if isinstance(checkpoint, WorkflowResult):
        if checkpoint.checkpoint_path is not None and Path(checkpoint.checkpoint_path).is_file():
            return load_checkpoint(checkpoint.checkpoint_path), Path(checkpoint.checkpoint_path)
        if checkpoint.checkpoint is None:
            raise UsageError(
                render_message(f"run '{checkpoint.run_id}' has no checkpoint (status {checkpoint.status.value}).",
                               hint="only paused runs, or runs with checkpointing on, can be resumed.")
            )
        return check_checkpoint(copy.deepcopy(checkpoint.checkpoint)), None
    if isinstance(checkpoint, Mapping):
        return check_checkpoint(copy.deepcopy(dict(checkpoint))), None
    if isinstance(checkpoint, (str, Path)):
        path = Path(checkpoint)
        if path.suffix == ".json" or path.is_file():
            return load_checkpoint(path), path.resolve()
        found = find_checkpoint(str(checkpoint), checkpoint_dir=checkpoint_dir, runs_dir=runs_dir, env=env)
        return load_checkpoint(found), found
    raise UsageError(f"resume_workflow() needs a checkpoint path, run id, document or result, got "
                     f"{type(checkpoint).__name__}")


