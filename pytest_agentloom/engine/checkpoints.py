"""Checkpoints, resume, and everything a run writes or returns once it ends.

:class:`Persistence` is the runner's one link to the outside world: it
redacts the result, saves checkpoints, writes the run record. The runner calls
it at three points (setup, after each layer, at the end).

A checkpoint is one JSON document, ``<checkpoint dir>/<run id>.json``, written
atomically (temporary file, then ``os.replace``)::

    format_version, kind, run_id, saved_at, status, reason, failed_step,
    paused_step, pending_approval, completed_steps, elapsed_seconds, resumes,
    workflow: {name, hash, file, definition},   # definition redacted
    state,                                      # redacted
    steps: {id: step result}                    # outputs redacted

It is saved after each layer when checkpointing is on (``config.checkpoint``,
``--checkpoint`` or ``checkpoint_dir=``), at the end of such a run, and always
when an approval gate pauses the run.

:func:`resume_workflow` continues a saved run: completed steps are not run
again, and the state is the checkpoint's, so redacted keys hold markers. A
warning names each redacted key that a remaining step reads; ``state=`` puts
values back.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.files import write_json_atomic
from ..core.plain import to_plain
from ..errors import AgentloomError, UsageError
from .model import RouterStep, Workflow
from .records import build_record, iso_time, list_records, resolve_runs_dir, write_record
from .redaction import MARKER_PATTERN, Redactor
from .result import RunStatus, StepResult, StepStatus, WorkflowResult
from .steps.approval_gate import PendingApproval
from .trace import Trace, TraceEvent

if TYPE_CHECKING:
    from ..core.clock import Clock
    from ..core.types import Provider
    from .steps.base import ToolFunction

__all__ = [
    "CHECKPOINT_DIR_ENV",
    "CHECKPOINT_FORMAT_VERSION",
    "CheckpointError",
    "Persistence",
    "aresume_workflow",
    "find_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "redacted_reads",
    "resume_workflow",
    "workflow_hash",
]

log = logging.getLogger("pytest_agentloom.resume")

CHECKPOINT_FORMAT_VERSION = 1
CHECKPOINT_KIND = "agentloom.checkpoint"
CHECKPOINT_DIR_ENV = "AGENTLOOM_CHECKPOINT_DIR"
RESUMABLE = ("paused", "running")


class CheckpointError(AgentloomError, ValueError):
    """A checkpoint cannot be found, read, or resumed."""

    code = "checkpoint_error"


# -- where things go ----------------------------------------------------------------------------------------


def default_checkpoint_dir(runs_dir: Path | None, env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    if environ.get(CHECKPOINT_DIR_ENV):
        return Path(environ[CHECKPOINT_DIR_ENV]).expanduser().resolve()
    base = runs_dir if runs_dir is not None else resolve_runs_dir(None, env)
    return (base or Path.cwd() / "agentloom_runs") / "checkpoints"


def workflow_hash(workflow: Workflow, redactor: Redactor) -> str:
    """A short hash of the workflow definition, computed on its redacted form so it leaks nothing."""
    definition = redactor.redact_definition(_dump(workflow), redactor.secret_values(workflow.state))
    text = json.dumps(to_plain(definition), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _dump(workflow: Workflow) -> dict[str, Any]:
    return workflow.model_dump(mode="json", exclude_unset=True)


# -- the runner's side ----------------------------------------------------------------------------------


@dataclass
class ResumePoint:
    """What a resumed run starts from."""

    checkpoint: dict[str, Any]
    results: dict[str, StepResult]
    pending: PendingApproval | None
    decision: str | None
    resumes: int
    elapsed: float
    warnings: list[str]


class Persistence:
    """Redaction, checkpoints and the run record of one run. Built by the runner with :meth:`for_run`."""

    def __init__(
        self,
        workflow: Workflow,
        *,
        redactor: Redactor,
        checkpoint_dir: Path,
        checkpoint_every_layer: bool,
        runs_dir: Path | None,
        wall_clock: Callable[[], float],
        resume: ResumePoint | None = None,
    ) -> None:
        self.workflow = workflow
        self.redactor = redactor
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_every_layer = checkpoint_every_layer
        self.runs_dir = runs_dir
        self.wall_clock = wall_clock
        self.resume = resume
        self.hash = workflow_hash(workflow, redactor)
        self.started_wall = wall_clock()
        self.checkpoint: dict[str, Any] | None = None
        self.checkpoint_path: Path | None = None

    @classmethod
    def for_run(
        cls,
        workflow: Workflow,
        *,
        checkpoint_dir: str | Path | None = None,
        runs_dir: str | Path | bool | None = None,
        redaction_salt: bytes | str | None = None,
        wall_clock: Callable[[], float] | None = None,
        env: Mapping[str, str] | None = None,
        resume: ResumePoint | None = None,
        redactor: Redactor | None = None,
    ) -> Persistence:
        """Resolve the folders: ``checkpoint_dir`` turns checkpointing on; ``runs_dir=False`` turns records off."""
        records = resolve_runs_dir(runs_dir, env)
        every_layer = checkpoint_dir is not None or workflow.config.checkpoint
        if checkpoint_dir is not None:
            folder = Path(checkpoint_dir).expanduser().resolve()
        elif workflow.config.checkpoint_dir:
            folder = workflow.resolve_path(workflow.config.checkpoint_dir)
        else:
            folder = default_checkpoint_dir(records, env)
        return cls(
            workflow, redactor=redactor or Redactor.from_workflow(workflow, env=env, salt=redaction_salt),
            checkpoint_dir=folder, checkpoint_every_layer=every_layer, runs_dir=records,
            wall_clock=wall_clock or time.time, resume=resume,
        )

    # -- hooks the runner calls ------------------------------------------------------------------------

    def prepare(self, run: Any) -> None:
        """Before the first layer: a resumed run takes over the finished steps and the elapsed time."""
        if self.resume is None:
            return
        run.results.update(copy.deepcopy(self.resume.results))
        run.start = run.clock.now() - self.resume.elapsed
        run.pending_approval = self.resume.pending
        run.approval_decision = self.resume.decision
        run.trace.append(run.now(), "run_resume", run_id=run.run_id, resumes=self.resume.resumes,
                         completed=list(self.resume.results), warnings=self.resume.warnings)

    def after_layer(self, run: Any) -> None:
        if self.checkpoint_every_layer and not getattr(run, "paused_step", None):
            self._save(run, status="running")

    def finish(self, run: Any, result: WorkflowResult) -> WorkflowResult:
        """Save the last checkpoint, redact the result, write the record; return the public result."""
        if result.status is RunStatus.PAUSED or self.checkpoint_every_layer or self.resume is not None:
            self._save(run, status=result.status.value)  # a resumed run marks its checkpoint as settled
        secrets = self.redactor.secret_values(run.state)
        public = redact_result(result, self.redactor, secrets)
        public.checkpoint = copy.deepcopy(self.checkpoint)
        public.checkpoint_path = self.checkpoint_path
        public._raw_state = result.state  # in-process only; never serialised
        if self.runs_dir is not None:
            resumes = self.resume.resumes if self.resume else 0
            record = build_record(
                public, workflow_hash=self.hash, workflow_file=_file(self.workflow),
                started_at=self.started_wall, duration=run.now(), steps_executed=run.trace.step_ids(),
                checkpoint=_under(self.checkpoint_path, self.runs_dir) if self.checkpoint_path else None,
                resumes=resumes,
            )
            public.record_path = write_record(self.runs_dir, record)
        return public

    # -- the checkpoint document -----------------------------------------------------------------------

    def _save(self, run: Any, *, status: str) -> None:
        document = self.document(run, status=status)
        self.checkpoint_path = write_json_atomic(self.checkpoint_dir / f"{run.run_id}.json", document)
        self.checkpoint = document
        run.trace.append(run.now(), "checkpoint_saved", status=status)

    def document(self, run: Any, *, status: str) -> dict[str, Any]:
        redactor = self.redactor
        secrets = sorted({*redactor.secret_values(run.state), *redactor.secret_values(self.workflow.state)},
                         key=lambda text: (-len(text), text))
        paused = getattr(run, "paused_step", None)
        pending = getattr(run, "pending_approval", None)
        earlier = self.resume.pending if self.resume else None
        if pending and earlier and earlier.step_id == pending.step_id and pending.detail is None:
            pending = earlier  # a gate still waiting keeps the time it started waiting
        steps = {sid: run.results[sid] for sid in run.order if sid in run.results}
        return to_plain({
            "format_version": CHECKPOINT_FORMAT_VERSION,
            "kind": CHECKPOINT_KIND,
            "run_id": run.run_id,
            "saved_at": iso_time(self.wall_clock()),
            "status": status,
            "reason": run.reason.value if status != "running" else None,
            "failed_step": run.failed_step,
            "paused_step": paused,
            "pending_approval": redactor.scrub(pending.to_dict(), secrets) if paused and pending else None,
            "completed_steps": [sid for sid, r in steps.items() if r.status is not StepStatus.PAUSED],
            "elapsed_seconds": round(run.now(), 6),
            "resumes": self.resume.resumes if self.resume else 0,
            "workflow": {
                "name": self.workflow.name, "hash": self.hash, "file": _file(self.workflow),
                "definition": redactor.redact_definition(_dump(self.workflow), secrets),
            },
            "state": redactor.redact_state(run.state),
            # 003: the reasoning text stays out of files; a checkpoint keeps the rest of each step's result
            "steps": {sid: replace(_redact_step(result, redactor, secrets), reasoning_content=None).to_dict()
                      for sid, result in steps.items()},
        })


def _under(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` (POSIX form) when inside it, so a record does not name a temporary folder."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def _file(workflow: Workflow) -> str | None:
    return str(workflow.source) if workflow.source is not None else None


# -- redacting a result -------------------------------------------------------------------------------------


def _redact_step(result: StepResult, redactor: Redactor, secrets: list[str]) -> StepResult:
    output = redactor.redact_output(result.step_id, result.output, secrets)
    error = redactor.scrub_text(result.error, secrets) if result.error else result.error
    reasoning = result.reasoning_content
    if reasoning is not None and redactor.active:  # 003: redacted whenever the step's output is
        reasoning = redactor.redact_output(result.step_id, reasoning, secrets)
    return replace(result, output=output, error=error, reasoning_content=reasoning)


def redact_trace(trace: Trace, redactor: Redactor, secrets: list[str]) -> Trace:
    """A copy of ``trace`` with tool arguments matched by key and every string scrubbed of secret values."""
    events = []
    for event in trace:
        data = {}
        for key, value in event.data.items():
            if key == "args" and isinstance(value, Mapping):
                data[key] = redactor.redact_mapping(value, secrets)
            else:
                data[key] = redactor.scrub(value, secrets)
        events.append(TraceEvent(event.seq, event.time, event.kind, event.step_id, event.attempt, data))
    return Trace(events)


def redact_result(result: WorkflowResult, redactor: Redactor, secrets: list[str]) -> WorkflowResult:
    """The result as it may leave the process: state, step outputs and trace redacted."""
    if not redactor.active:
        return replace(result, state=copy.deepcopy(result.state))
    return replace(
        result,
        state=redactor.redact_state(result.state),
        steps={sid: _redact_step(step, redactor, secrets) for sid, step in result.steps.items()},
        trace=redact_trace(result.trace, redactor, secrets),
    )


# -- finding and reading checkpoints ------------------------------------------------------------------------


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read and check a checkpoint file: JSON, the right kind, a known ``format_version``."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"Checkpoint not found: {file}") from None
    except ValueError as exc:
        raise CheckpointError(f"Checkpoint {file} is not valid JSON: {exc}") from None
    return check_checkpoint(data, str(file))


def check_checkpoint(data: Any, where: str = "<checkpoint>") -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("kind") != CHECKPOINT_KIND:
        raise CheckpointError(f"{where} is not an AgentLoom checkpoint (no kind: {CHECKPOINT_KIND!r})")
    version = data.get("format_version")
    if version != CHECKPOINT_FORMAT_VERSION:
        raise CheckpointError(
            f"Checkpoint {where} has format_version {version!r}; this version of pytest-agentloom reads "
            f"{CHECKPOINT_FORMAT_VERSION}.\nHow to fix: run the workflow again from the start with this version "
            "(checkpoints are not migrated between formats)."
        )
    return data


def list_checkpoints(folder: Path) -> list[dict[str, Any]]:
    """Summaries of the checkpoints in ``folder`` (unreadable files skipped), oldest first."""
    found: list[dict[str, Any]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            data = load_checkpoint(path)
        except CheckpointError:
            continue
        found.append({
            "run_id": data["run_id"], "workflow": data["workflow"]["name"], "status": data["status"],
            "paused_step": data.get("paused_step"), "saved_at": data.get("saved_at"), "path": str(path),
        })
    found.sort(key=lambda item: (str(item["saved_at"]), item["run_id"]))
    return found


def find_checkpoint(run_id: str, *, checkpoint_dir: str | Path | None = None,
                    runs_dir: str | Path | bool | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The checkpoint file of ``run_id``: in ``checkpoint_dir``, the default folder, or a run record's path."""
    records = resolve_runs_dir(runs_dir, env)
    folders = [Path(checkpoint_dir).resolve()] if checkpoint_dir is not None else []
    folders.append(default_checkpoint_dir(records, env))
    for folder in folders:
        candidate = folder / f"{run_id}.json"
        if candidate.is_file():
            return candidate
    if records is not None:
        for record in reversed(list_records(records)):
            saved = records / str(record.get("checkpoint") or "")  # relative to the runs folder, or absolute
            if record.get("run_id") == run_id and record.get("checkpoint") and saved.is_file():
                return saved
    searched = ", ".join(str(folder) for folder in folders)
    raise CheckpointError(
        f"No checkpoint for run '{run_id}' (searched {searched} and the run records).\n"
        "How to fix: check the id with 'agentloom runs', or pass the checkpoint file's path instead."
    )


# -- resume ---------------------------------------------------------------------------------------------------


def _decision(value: str | bool | None) -> str | None:
    if value is None:
        return None
    if value is True or value in ("approve", "approved"):
        return "approved"
    if value is False or value in ("reject", "rejected"):
        return "rejected"
    if value in ("cancel", "cancelled"):  # an agent waiting for approval stops as 'cancelled'
        return "cancelled"
    raise UsageError(f"decision must be 'approved', 'rejected' or 'cancelled' (or True/False), got {value!r}.\n"
                     "How to fix: pass one of those, e.g. agentloom.resume(result, approve='cancelled').")


def _reads(step: Any, workflow: Workflow) -> set[str]:
    """Dotted state paths a step reads, from its templates, ``state.`` values and router expressions."""
    from .paths import parse_path
    from .templates import template_fields

    found: set[str] = set()

    def add(path_text: str) -> None:
        try:
            segments = parse_path(path_text)
        except ValueError:
            return
        names = [segment for segment in segments if isinstance(segment, str)]
        if names:
            found.add(".".join(names))

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            if value.startswith("state."):
                add(value[len("state."):])
            if "{" not in value:
                return
            try:
                fields = template_fields(value)
            except (AgentloomError, ValueError):
                return
            for name in fields:
                add(name[len("state."):] if name.startswith("state.") else name)

    dumped = step.model_dump(mode="json", exclude={"id", "type", "output", "depends_on", "description"})
    walk(dumped)
    if isinstance(step, RouterStep):
        for index in range(len(step.conditions)):
            compiled = workflow._compiled.get(f"{step.id}/{index}")
            if compiled is not None:
                found.update(compiled.names())
    return found


def _marker_paths(value: Any, path: str = "") -> set[str]:
    """Dotted paths (list positions dropped) whose value holds a redaction marker."""
    found: set[str] = set()
    if isinstance(value, Mapping):
        for key, item in value.items():
            found |= _marker_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for item in value:
            found |= _marker_paths(item, path)
    elif isinstance(value, str) and MARKER_PATTERN.search(value) and path:
        found.add(path)
    return found


def redacted_reads(workflow: Workflow, state: Mapping[str, Any], remaining: list[str]) -> list[tuple[str, str]]:
    """``(step id, key)`` for each remaining step that reads a key the state holds redacted."""
    redacted = _marker_paths(state)
    hits = []
    for step_id in remaining:
        for read in sorted(_reads(workflow.step(step_id), workflow)):
            for path in sorted(redacted):
                if path == read or path.startswith(read + ".") or read.startswith(path + "."):
                    hits.append((step_id, read))
                    break
    return hits


def _workflow_for(checkpoint: dict[str, Any], given: Workflow | str | Path | None, redactor_env: Any,
                  salt: bytes | str | None) -> tuple[Workflow, list[str]]:
    from .loader import load_workflow, parse_workflow

    notes: list[str] = []
    saved = checkpoint["workflow"]
    if given is not None:
        return (given if isinstance(given, Workflow) else load_workflow(given)), notes
    file = saved.get("file")
    if file and Path(file).is_file():
        workflow = load_workflow(file)
        current = workflow_hash(workflow, Redactor.from_workflow(workflow, env=redactor_env, salt=salt))
        if current != saved.get("hash"):
            raise CheckpointError(
                f"The workflow file {file} changed since run '{checkpoint['run_id']}' was saved "
                f"(hash {saved.get('hash')} then, {current} now).\n"
                "How to fix: restore the file, or pass the workflow explicitly (workflow=...) to resume with the "
                "new definition anyway."
            )
        return workflow, notes
    import yaml

    notes.append(f"workflow file {file!r} not found; resuming from the definition saved in the checkpoint, "
                 "whose redacted fields hold markers")
    return parse_workflow(yaml.safe_dump(saved["definition"], sort_keys=False)), notes


def _resume_point(checkpoint: dict[str, Any], workflow: Workflow, decision: str | None,
                  state: Mapping[str, Any] | None, notes: list[str]) -> tuple[ResumePoint, dict[str, Any]]:
    if checkpoint["status"] not in RESUMABLE:
        raise CheckpointError(
            f"Run '{checkpoint['run_id']}' ended with status '{checkpoint['status']}'; only paused or interrupted "
            "runs can be resumed.\nHow to fix: start a new run."
        )
    completed = set(checkpoint.get("completed_steps") or [])
    results = {}
    for step_id, data in (checkpoint.get("steps") or {}).items():
        if step_id in completed:
            known = {key: value for key, value in data.items() if key in StepResult.__dataclass_fields__}
            results[step_id] = StepResult(**{**known, "status": StepStatus(data["status"])})
    initial = {**copy.deepcopy(checkpoint.get("state") or {}), **copy.deepcopy(dict(state or {}))}
    remaining = [step.id for step in workflow.steps if step.id not in completed]
    warnings = list(notes)
    for step_id, key in redacted_reads(workflow, initial, remaining):
        warnings.append(
            f"step '{step_id}' reads state key '{key}', which the checkpoint holds redacted: it will receive "
            f"<REDACTED:sha256=…> instead of the original. How to fix: resume with state={{'{key.split('.')[0]}': "
            f"...}} (agentloom resume --state {key.split('.')[0]}=...)"
        )
    for message in warnings:
        log.warning("resume %s: %s", checkpoint["run_id"], message)
    pending = checkpoint.get("pending_approval")
    point = ResumePoint(
        checkpoint=checkpoint, results=results,
        pending=PendingApproval.from_dict(pending) if pending else None, decision=decision,
        resumes=int(checkpoint.get("resumes") or 0) + 1, elapsed=float(checkpoint.get("elapsed_seconds") or 0.0),
        warnings=warnings,
    )
    return point, initial


async def aresume_workflow(
    checkpoint: str | Path | Mapping[str, Any] | WorkflowResult,
    *,
    decision: str | bool | None = None,
    state: Mapping[str, Any] | None = None,
    provider: Provider | None = None,
    tools: Mapping[str, ToolFunction] | None = None,
    clock: Clock | None = None,
    workflow: Workflow | str | Path | None = None,
    checkpoint_dir: str | Path | None = None,
    runs_dir: str | Path | bool | None = None,
    redaction_salt: bytes | str | None = None,
    wall_clock: Callable[[], float] | None = None,
    env: Mapping[str, str] | None = None,
) -> WorkflowResult:
    """Continue a saved run. See :func:`resume_workflow`."""
    from ..core.clock import SystemClock
    from .runner import _check_tools_argument, _Run, _tool_registry

    document, where = _locate(checkpoint, checkpoint_dir=checkpoint_dir, runs_dir=runs_dir, env=env)
    loaded, notes = _workflow_for(document, workflow, env, redaction_salt)
    point, initial = _resume_point(document, loaded, _decision(decision), state, notes)
    _check_tools_argument(tools)
    folder = checkpoint_dir if checkpoint_dir is not None else (where.parent if where is not None else None)
    persistence = Persistence.for_run(
        loaded, checkpoint_dir=folder, runs_dir=runs_dir, redaction_salt=redaction_salt, wall_clock=wall_clock,
        env=env, resume=point,
    )
    if folder is not None and not (checkpoint_dir is not None or loaded.config.checkpoint):
        persistence.checkpoint_every_layer = False  # saved only at a pause, as in the original run
    run = _Run(loaded, initial, provider, _tool_registry(loaded, tools), clock or SystemClock(), document["run_id"],
               persistence=persistence)
    return await run.execute()


def resume_workflow(
    checkpoint: str | Path | Mapping[str, Any] | WorkflowResult,
    *,
    decision: str | bool | None = None,
    state: Mapping[str, Any] | None = None,
    provider: Provider | None = None,
    tools: Mapping[str, ToolFunction] | None = None,
    clock: Clock | None = None,
    workflow: Workflow | str | Path | None = None,
    checkpoint_dir: str | Path | None = None,
    runs_dir: str | Path | bool | None = None,
    redaction_salt: bytes | str | None = None,
    wall_clock: Callable[[], float] | None = None,
    env: Mapping[str, str] | None = None,
) -> WorkflowResult:
    """Continue a paused (or interrupted) run from its checkpoint.

    ``checkpoint`` is a checkpoint file, its loaded document, a run id (looked
    up with :func:`find_checkpoint`) or a paused :class:`WorkflowResult`.
    ``decision`` (``"approved"``/``"rejected"``, or ``True``/``False``)
    settles the approval gate or agent call the run paused at (``"cancelled"``
    stops a waiting agent as ``cancelled``); ``state`` replaces top-level
    keys, e.g. to put back a redacted secret. Completed steps are not run
    again. The workflow is reloaded from its file, which must not have changed
    (pass ``workflow=`` to override).
    """
    coroutine = aresume_workflow(
        checkpoint, decision=decision, state=state, provider=provider, tools=tools, clock=clock,
        workflow=workflow, checkpoint_dir=checkpoint_dir, runs_dir=runs_dir, redaction_salt=redaction_salt,
        wall_clock=wall_clock, env=env,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from .runner import _run_in_thread

    return _run_in_thread(coroutine)


def _locate(checkpoint: Any, *, checkpoint_dir: Any, runs_dir: Any,
            env: Mapping[str, str] | None) -> tuple[dict[str, Any], Path | None]:
    if isinstance(checkpoint, WorkflowResult):
        if checkpoint.checkpoint_path is not None and Path(checkpoint.checkpoint_path).is_file():
            return load_checkpoint(checkpoint.checkpoint_path), Path(checkpoint.checkpoint_path)
        if checkpoint.checkpoint is None:
            raise UsageError(
                f"run '{checkpoint.run_id}' has no checkpoint (status {checkpoint.status.value}).\n"
                "How to fix: only paused runs, or runs with checkpointing on, can be resumed."
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


