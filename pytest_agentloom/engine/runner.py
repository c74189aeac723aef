"""Starting a run: :func:`run_workflow` and :func:`arun_workflow`.

Both load the workflow (a path, or an already loaded :class:`Workflow`), check
the options (:mod:`.options`), and hand a :class:`~.run.Run` its hooks
(:class:`~.persistence.Persistence`: checkpoints, run record, redaction). The
run itself is :mod:`.run`; continuing a paused one is :mod:`.resume`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Unpack

from ..core.clock import RunIdSource, derived_run_id, is_valid_run_id
from ..core.plain import to_plain
from ..errors import UsageError
from .loader import load_workflow
from .model import Workflow
from .options import RunOptions, check_options, prepare
from .persistence import Persistence
from .result import WorkflowResult
from .run import Run
from .sync import run_sync

__all__ = ["arun_workflow", "run_workflow"]


def run_workflow(workflow: Workflow | str | Path, **options: Unpack[RunOptions]) -> WorkflowResult:
    """Run a workflow to the end and return its result (see :func:`arun_workflow`)."""
    check_options(options, RunOptions, "run_workflow")
    return run_sync(arun_workflow(workflow, **options))


async def arun_workflow(workflow: Workflow | str | Path, **options: Unpack[RunOptions]) -> WorkflowResult:
    """Run a workflow.

    ``state`` adds or replaces top-level keys of the file's ``state:``;
    ``tools`` maps tool names to callables (sync or async). Without ``clock``
    real time is used; pass a :class:`~pytest_agentloom.core.clock.VirtualClock`
    for runs whose output is identical byte for byte. Without ``run_id`` the id
    is derived from the workflow and the inputs, so it is repeatable too.

    What leaves the process is redacted (see :mod:`.redaction`). ``checkpoint_dir``
    turns checkpointing on (as ``config.checkpoint`` does); ``runs_dir`` is where
    the run record goes (``False``: none); ``redaction_salt`` keys the markers;
    ``wall_clock`` (``time.time`` by default) dates checkpoints and records.
    Every option is listed in :class:`~.options.RunOptions`.
    """
    check_options(options, RunOptions, "arun_workflow")
    loaded = workflow if isinstance(workflow, Workflow) else load_workflow(workflow)
    inputs = prepare(loaded, loaded.state, options)
    hooks = Persistence.for_run(
        loaded, checkpoint_dir=options.get("checkpoint_dir"), runs_dir=options.get("runs_dir"),
        redaction_salt=options.get("redaction_salt"), wall_clock=options.get("wall_clock"), env=options.get("env"),
    )
    run = Run(loaded, inputs.state, provider=inputs.provider, tools=inputs.tools, clock=inputs.clock,
              run_id=_run_id(options.get("run_id"), loaded, inputs.state), hooks=hooks)
    return await run.execute()


def _run_id(source: str | RunIdSource | None, workflow: Workflow, state: dict[str, Any]) -> str:
    """The id given, made by ``source``, or derived from the definition and the initial state."""
    if isinstance(source, str) or callable(source):
        given = source if isinstance(source, str) else source()
        if not is_valid_run_id(given):  # it names the checkpoint and record files
            raise UsageError(f"run_id {given!r} is not a valid run id: it names files, so it may hold only letters, "
                             "digits, '.', '_' and '-' (no '..', no '/'), up to 128 characters.\n"
                             "How to fix: pass an id such as 'nightly-2024-05-01'.")
        return given
    definition = json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str)
    inputs = json.dumps(to_plain(state), sort_keys=True)
    return derived_run_id(definition, inputs)
