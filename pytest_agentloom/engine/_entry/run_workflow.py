"""Starting a run: :func:`run_workflow` and :func:`arun_workflow`.

Both load the workflow (a path, or an already loaded :class:`Workflow`), check
the options (:mod:`.options`), and hand a :class:`~.._run.loop.Run` its hooks
(:class:`~.._persist.redacted_writes.Persistence`: checkpoints, run record, redaction). The
run itself is :mod:`.._run.loop`; continuing a paused one is :mod:`.resume_workflow`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from ..._core.clock import RunIdPrefix, RunIdSource, is_valid_run_id
from ..._core.plain import copy_plain, to_plain
from ...errors import UsageError, render_message
from .._format.loader import load_workflow
from .._format.model import Workflow
from .._outcome.result import WorkflowResult
from .._persist.redacted_writes import Persistence
from .._run.loop import Run
from .options import RunOptions, check_options, prepare
from .running import RunningWorkflow, running_workflow
from .sync import run_sync
from .tool_check import check_agent_tools

__all__ = ["arun_workflow", "run_workflow"]


def run_workflow(workflow: Workflow | str | Path, **options: Unpack[RunOptions]) -> WorkflowResult:
    """Run a workflow to the end and return its result (see :func:`arun_workflow`)."""
    check_options(options, RunOptions, "run_workflow")
    return run_sync(_run(workflow, options))


async def arun_workflow(workflow: Workflow | str | Path, **options: Unpack[RunOptions]) -> WorkflowResult:
    """Run a workflow.

    ``state`` adds or replaces top-level keys of the file's ``state:``;
    ``tools`` maps tool names to callables (sync or async). Without ``clock``
    real time is used; pass a :class:`~pytest_agentloom._core.clock.VirtualClock`
    for runs whose output is identical byte for byte. Without ``run_id`` the id
    is derived from the workflow and the inputs, so it is repeatable too.

    What leaves the process is redacted (see :mod:`..._redaction.redactor`). ``checkpoint_dir``
    turns checkpointing on (as ``config.checkpoint`` does); ``runs_dir`` is where
    the run record goes (``False``: none); ``redaction_salt`` keys the markers;
    ``wall_clock`` (``time.time`` by default) dates checkpoints and records.
    Every option is listed in :class:`~.options.RunOptions`.
    """
    check_options(options, RunOptions, "arun_workflow")
    return await _run(workflow, options)


async def _run(workflow: Workflow | str | Path, options: RunOptions) -> WorkflowResult:
    """:func:`arun_workflow` once its options were checked (:func:`run_workflow` checked them already)."""
    loaded = workflow if isinstance(workflow, Workflow) else load_workflow(workflow)
    inputs = prepare(loaded, loaded.state, options)
    check_agent_tools(loaded, inputs.tools)  # before any step: a typo must not wait for the agent's turn
    hooks = Persistence.for_run(
        loaded, checkpoint_dir=options.get("checkpoint_dir"), runs_dir=options.get("runs_dir"),
        redaction_salt=options.get("redaction_salt"), wall_clock=options.get("wall_clock"), env=options.get("env"),
    )
    hooks.redactor.check_secret_lengths(inputs.state)  # a secret too short to scrub is refused before anything runs
    run_id = _run_id(options.get("run_id"), loaded, options.get("state") or {})
    hooks.check_record(run_id)  # before anything runs: a record must not replace a file agentloom did not write
    run = Run(loaded, inputs.state, provider=inputs.provider, tools=inputs.tools, clock=inputs.clock,
              run_id=run_id, hooks=hooks)
    token = running_workflow.set(RunningWorkflow(run_id, loaded, inputs.state))
    try:
        return await run.execute()
    finally:
        running_workflow.reset(token)


def _run_id(source: str | RunIdSource | None, workflow: Workflow, overrides: Mapping[str, Any]) -> str:
    """The id given, made by ``source``, or derived from the definition and the initial state.

    The initial state is the file's ``state:`` with ``overrides`` laid over its top-level keys.
    """
    if isinstance(source, str) or callable(source):
        given = source if isinstance(source, str) else source()
        if not is_valid_run_id(given):  # it names the checkpoint and record files
            raise UsageError(render_message(
                    f"run_id {given!r} is not a valid run id: it names files, so it may hold only letters, "
                    "digits, '.', '_' and '-' (no '..', no '/'), up to 128 characters.",
                    hint="pass an id such as 'nightly-2024-05-01'."))
        return given
    # derived_run_id(definition, state): the definition is hashed once per workflow (tests check the ids agree)
    prefix = workflow.memoized("run_id_prefix", lambda: RunIdPrefix(
        json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str)))
    return prefix.run_id(state_json(workflow, overrides))


def state_json(workflow: Workflow, overrides: Mapping[str, Any]) -> str:
    """``json.dumps(to_plain(initial state), sort_keys=True)``, without encoding the file's state on every run.

    A sorted JSON object is its sorted members joined, so each top-level key of the file's
    ``state:`` is encoded once per workflow and only the ``overrides`` are encoded per run.
    Keys that are not all strings take the plain way (``to_plain`` makes them strings). Without
    overrides the text is the same for every run, and kept whole.
    """
    if not overrides:
        return workflow.memoized("state_json_whole", lambda: _state_json(workflow, {}))
    return _state_json(workflow, overrides)


def _state_json(workflow: Workflow, overrides: Mapping[str, Any]) -> str:
    if not all(isinstance(key, str) for key in (*workflow.state, *overrides)):
        return json.dumps(to_plain({**workflow.state, **overrides}), sort_keys=True)
    members = dict(workflow.memoized("state_json", lambda: {key: _member(value)
                                                            for key, value in workflow.state.items()}))
    kept: dict[str, tuple[Any, Any, str]] = workflow.memoized("override_json", dict)
    members.update({key: _override_member(kept, key, value) for key, value in overrides.items()})
    return "{" + ", ".join(f"{json.dumps(key)}: {members[key]}" for key in sorted(members)) + "}"


def _member(value: Any) -> str:
    return json.dumps(to_plain(value), sort_keys=True)


#: an override whose JSON is at least this long is remembered (see :func:`_override_member`)
_KEPT_OVERRIDE = 64 * 1024


def _override_member(kept: dict[str, tuple[Any, Any, str]], key: str, value: Any) -> str:
    """:func:`_member` of a top-level key of ``run_workflow(state=...)``, remembered for a big value.

    Tests pass the same big state run after run; encoding megabytes each time cost a run several times what
    the same state in the workflow file costs (whose JSON is worked out once per workflow). So the JSON of a
    big value is kept per workflow and key with a copy of the value, and used again when the same object
    comes back unchanged: ``==`` against the copy runs in C, a hundredth of the encoding. A changed object, or
    another one, is encoded again. (``==`` takes ``1`` for ``1.0`` and ``True``: an override changed from one
    to the other in place, between two runs, keeps the id of the first.)
    """
    held = kept.get(key)
    if held is not None and held[0] is value and held[1] == value:
        return held[2]
    text = _member(value)
    if len(text) >= _KEPT_OVERRIDE:
        kept[key] = (value, copy_plain(value), text)
    return text
