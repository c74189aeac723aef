"""The checkpoint file: what a paused or interrupted run saves, and how it is found and read again.

A checkpoint is one JSON document, ``<checkpoint dir>/<run id>.json``, written
atomically by :class:`~.redacted_writes.Persistence`::

    format_version, kind, run_id, saved_at, status, reason, failed_step,
    paused_step, pending_approval, completed_steps, elapsed_seconds, resumes,
    workflow: {name, hash, file, definition,    # definition redacted, overrides included
               overrides},                      # config fields replaced for the run (--model, ...)
    state,                                      # redacted
    steps: {id: step result}                    # outputs redacted; reasoning text left out

It is saved after each layer when checkpointing is on (``config.checkpoint``,
``--checkpoint`` or ``checkpoint_dir=``), at the end of such a run, and always
when an approval gate pauses the run. :mod:`.._entry.resume_workflow` continues it.

Both ways go through a frozen value, never through the run: a run hands the writer a
:class:`~.._run.checkpoint_snapshot.CheckpointSnapshot` (:func:`checkpoint_document`), and the
reader (:func:`load_checkpoint`, :func:`check_checkpoint`) hands back a
:class:`~.._run.saved_checkpoint.SavedCheckpoint`, read-only, which writes the same bytes again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..._core.clock import is_valid_run_id
from ..._core.json_io import load_json
from ..._core.plain import to_plain
from ..._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ..._redaction.redactor import Redactor
from ...errors import CheckpointError, DataReadError, UsageError, render_message
from .._format.model import Workflow
from .._outcome.held_records import HeldRecords
from .._outcome.redacted import redact_step
from .._outcome.result import StepStatus
from .._run.checkpoint_snapshot import CHECKPOINT_FORMAT_VERSION, CHECKPOINT_KIND, CheckpointSnapshot
from .._run.saved_checkpoint import SavedCheckpoint
from .checkpoint_fields import field_problems
from .records import iso_time, list_records, resolve_runs_dir

__all__ = [
    "CHECKPOINT_DIR_ENV",
    "CHECKPOINT_FORMAT_VERSION",
    "CHECKPOINT_KIND",
    "RESUMABLE",
    "CheckpointError",
    "check_checkpoint",
    "check_checkpoint_target",
    "check_run_id",
    "checkpoint_document",
    "default_checkpoint_dir",
    "find_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "workflow_file",
    "workflow_hash",
]

CHECKPOINT_DIR_ENV = "AGENTLOOM_CHECKPOINT_DIR"
RESUMABLE = ("paused", "running")


# -- where checkpoints go -----------------------------------------------------------------------------------


def default_checkpoint_dir(runs_dir: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """``AGENTLOOM_CHECKPOINT_DIR``, else ``checkpoints/`` in the runs folder (``agentloom_runs/`` by default)."""
    environ = os.environ if env is None else env
    if environ.get(CHECKPOINT_DIR_ENV):
        return Path(environ[CHECKPOINT_DIR_ENV]).expanduser().resolve()
    base = runs_dir if runs_dir is not None else resolve_runs_dir(None, env)
    return (base or Path.cwd() / "agentloom_runs") / "checkpoints"


# -- the document -------------------------------------------------------------------------------------------


def workflow_hash(workflow: Workflow, redactor: Redactor) -> str:
    """A short hash of the workflow definition, computed on its redacted form so it leaks nothing.

    It is the hash of the definition as loaded: ``config`` fields replaced for one run (``--model``,
    ``--checkpoint``, ...) are left out, so the file still matches when the run is resumed; the
    checkpoint keeps those overrides apart and resume applies them again.

    Worked out once per workflow and redaction: besides the definition, the hash depends on the
    redactor's patterns, the environment's API keys (scrubbed from every string) and, when a value
    was redacted, the salt that keyed its marker; a run whose redactor differs in any of them
    hashes again.
    """
    loaded = workflow.as_loaded
    key = "hash " + repr((redactor.patterns, redactor.api_keys))
    salt, digest = loaded.memoized(key, lambda: _salted_hash(loaded, redactor))
    if salt is not None and salt != redactor.salt:
        return _hash(loaded, redactor)
    return digest


def _salted_hash(workflow: Workflow, redactor: Redactor) -> tuple[bytes | None, str]:
    """The hash, and the salt it used (``None`` when no value was redacted, so that no salt was read)."""
    digest = _hash(workflow, redactor)
    return redactor.loaded_salt(), digest


def _hash(workflow: Workflow, redactor: Redactor) -> str:
    definition = redactor.redact_definition(_dump(workflow), redactor.secret_values(workflow.state))
    text = json.dumps(to_plain(definition), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _dump(workflow: Workflow) -> dict[str, Any]:
    return workflow.model_dump(mode="json", exclude_unset=True)


def workflow_file(workflow: Workflow) -> str | None:
    """The workflow's file as the checkpoint and the run record name it."""
    return str(workflow.source) if workflow.source is not None else None


def checkpoint_document(snapshot: CheckpointSnapshot, *, status: str, redactor: Redactor, hash: str,
                        saved_at: float) -> dict[str, Any]:
    """The checkpoint of a run's ``snapshot``, redacted: ready to be written as JSON.

    Only the snapshot is read (never the run), so the file's fields are those of :class:`CheckpointSnapshot`.
    """
    workflow = snapshot.workflow
    secrets = sorted({*redactor.secret_values(snapshot.state), *redactor.secret_values(workflow.state)},
                     key=lambda text: (-len(text), text))
    pending = snapshot.pending_approval
    steps = snapshot.steps
    return to_plain({
        "format_version": CHECKPOINT_FORMAT_VERSION,
        "kind": CHECKPOINT_KIND,
        "run_id": snapshot.run_id,
        "saved_at": iso_time(saved_at),
        "status": status,
        "reason": snapshot.reason if status != "running" else None,
        "failed_step": snapshot.failed_step,
        "paused_step": snapshot.paused_step,
        "pending_approval": redactor.redact_strings(pending.to_dict(), secrets) if pending else None,
        "completed_steps": [sid for sid, r in steps.items() if r.status is not StepStatus.PAUSED],
        "elapsed_seconds": round(snapshot.elapsed_seconds, 6),
        "resumes": snapshot.resumes,
        "workflow": {
            "name": workflow.name, "hash": hash, "file": workflow_file(workflow),
            "definition": redactor.redact_definition(_dump(workflow), secrets),
            "overrides": redactor.redact_definition({"config": workflow.config_overrides}, secrets)["config"],
        },
        "state": redactor.redact_state(snapshot.state),
        # the reasoning text stays out of files; a checkpoint keeps the rest of each step's result
        "steps": {sid: replace(redact_step(redactor, result, secrets), reasoning_content=None).to_dict()
                  for sid, result in steps.items()},
    })


def _is_checkpoint_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a link) holding a checkpoint agentloom wrote: its top-level
    ``kind`` (written indented by two, keys sorted; a checkpoint reformatted by hand is parsed instead)."""
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        text = read_text_capped(path, max_bytes=DEFAULT_LIMITS.max_bytes, what="checkpoint")
        if f'\n  "kind": "{CHECKPOINT_KIND}",' in text:
            return True
        data = load_json(text, file=str(path))
    except (OSError, DataReadError):
        return False
    return isinstance(data, dict) and data.get("kind") == CHECKPOINT_KIND


def check_checkpoint_target(path: Path) -> None:
    """Refuse (:class:`~pytest_agentloom.errors.UsageError`) to save a checkpoint over anything but a checkpoint.

    A run id names the file (``--run-id package --checkpoint-dir .`` would be ``package.json``), so, as run
    records do, a checkpoint replaces only a missing file or an earlier checkpoint; anything else (a file
    agentloom did not write, a folder, a link) is left as it is.
    """
    if not os.path.lexists(path) or _is_checkpoint_file(path):
        return
    raise UsageError(render_message(
        f"the checkpoint {path} would replace a file that is not a checkpoint agentloom wrote; it is left as it is.",
        hint="give the run another id (--run-id, run_id=) or another checkpoint folder (--checkpoint-dir, "
             "checkpoint_dir=, AGENTLOOM_CHECKPOINT_DIR), or move that file away."))


# -- finding and reading checkpoints ------------------------------------------------------------------------


_TAMPERED = ("restore the file from where it was copied, or run the workflow again from the start "
             "(the file is left as it is).")


def load_checkpoint(path: str | Path) -> SavedCheckpoint:
    """Read and check a checkpoint file (JSON, the right kind, a known ``format_version``, every field's
    type): the frozen value a resume starts from."""
    file = Path(path)
    try:
        data = load_json(read_text_capped(file, max_bytes=DEFAULT_LIMITS.max_bytes, what="checkpoint"), file=str(file))
    except FileNotFoundError:
        raise CheckpointError(f"Checkpoint not found: {file}") from None
    except DataReadError as exc:
        raise CheckpointError(render_message(f"Checkpoint {file} cannot be read: {exc.problem}{exc.at_line}.",
                                             hint=_TAMPERED)) from None
    return check_checkpoint(data, str(file))


def check_checkpoint(data: Any, where: str = "<checkpoint>") -> SavedCheckpoint:
    """``data`` read as a :class:`SavedCheckpoint` if it is a checkpoint this version can read; a checkpoint
    is untrusted input, so every field a resume reads is checked for type (:mod:`.checkpoint_fields`), and its
    run id (which names files) for the characters a run id may have, before anything is read."""
    if not isinstance(data, dict) or data.get("kind") != CHECKPOINT_KIND:
        raise CheckpointError(f"{where} is not an AgentLoom checkpoint (no kind: {CHECKPOINT_KIND!r})")
    version = data.get("format_version")
    if version != CHECKPOINT_FORMAT_VERSION:
        raise CheckpointError(
            render_message(
                f"Checkpoint {where} has format_version {version!r}; this version of pytest-agentloom reads "
                f"{CHECKPOINT_FORMAT_VERSION}.",
                hint="run the workflow again from the start with this version "
                     "(checkpoints are not migrated between formats).")
        )
    check_run_id(data.get("run_id"), f"Checkpoint {where}")
    problems = field_problems(data)
    if problems:
        raise CheckpointError(render_message(
                f"Checkpoint {where} is malformed: {'; '.join(problems)}.",
                hint="use the checkpoint file the run wrote, or run the workflow again "
                     "(the file is left as it is)."))
    return SavedCheckpoint.read(data)


def check_run_id(run_id: Any, where: str) -> str:
    """``run_id`` when it is one a file may be named after; else a :class:`CheckpointError` saying ``where``."""
    if not is_valid_run_id(run_id):
        raise CheckpointError(
            render_message(
                f"{where} has run id {run_id!r}, which is not a valid run id: it names files, so it may hold only "
                "letters, digits, '.', '_' and '-' (no '..', no '/'), up to 128 characters.",
                hint="use the checkpoint file the run wrote (run ids are never edited), or start a new run.")
        )
    return str(run_id)


def list_checkpoints(folder: Path) -> list[dict[str, Any]]:
    """Summaries of the checkpoints in ``folder`` (unreadable files skipped), oldest first."""
    found: list[dict[str, Any]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            saved = load_checkpoint(path)
        except CheckpointError:
            continue
        found.append({
            "run_id": saved.run_id, "workflow": saved.workflow.name, "status": saved.status,
            "paused_step": saved.paused_step, "saved_at": saved.saved_at, "path": str(path),
        })
    found.sort(key=lambda item: (str(item["saved_at"]), item["run_id"]))
    return found


def find_checkpoint(run_id: str, *, checkpoint_dir: str | Path | None = None,
                    runs_dir: str | Path | bool | HeldRecords | None = None,
                    env: Mapping[str, str] | None = None) -> Path:
    """The checkpoint file of ``run_id``: in ``checkpoint_dir``, the default folder, or a run record's path."""
    check_run_id(run_id, "The run to find")
    if isinstance(runs_dir, HeldRecords):
        runs_dir.release()  # the records are searched on disk
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
            # a record is untrusted too: it may only name a checkpoint file of the same run
            if record.get("run_id") == run_id and record.get("checkpoint") and saved.name == f"{run_id}.json" \
                    and saved.is_file():
                return saved
    searched = ", ".join(str(folder) for folder in folders)
    raise CheckpointError(
        render_message(f"No checkpoint for run '{run_id}' (searched {searched} and the run records).",
                       hint="check the id with 'agentloom runs', or pass the checkpoint file's path instead.")
    )
