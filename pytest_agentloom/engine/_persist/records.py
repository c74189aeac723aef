"""Run records: one small JSON file per run, for auditing what ran, with what, at what cost.

A record holds the run id, when it started (from an injectable wall clock), the
workflow's name, file and hash, the package version, status and reason, the
providers and models used, tokens, cost, duration and the steps executed. It
never holds the state, step outputs or prompts.

Where records go, first match wins: ``runs_dir=`` given to the run (``False``
turns records off), ``AGENTLOOM_RUNS_DIR``, else ``agentloom_runs/`` in the
current directory. In pytest, the ``agentloom`` fixture puts them in the test's
temporary folder, through :class:`HeldRecords`: held in memory until someone may
read them (:mod:`~pytest_agentloom.engine._outcome.held_records`). A record is ``<run id>.json``; a resumed run writes
``<run id>.resume-<n>.json`` next to it.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.files import resolved
from ..._core.json_io import load_json
from ..._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ...errors import DataReadError
from .._outcome.held_records import RECORD_KIND, HeldRecords

if TYPE_CHECKING:
    from .._outcome.result import WorkflowResult

__all__ = [
    "RECORD_FORMAT_VERSION",
    "RUNS_DIR_ENV",
    "build_record",
    "iso_time",
    "list_records",
    "record_name",
    "resolve_runs_dir",
    "use_test_runs_dir",
]

RECORD_FORMAT_VERSION = 1
RUNS_DIR_ENV = "AGENTLOOM_RUNS_DIR"
DEFAULT_RUNS_DIR = "agentloom_runs"

WallClock = Callable[[], float]


def resolve_runs_dir(runs_dir: str | Path | bool | HeldRecords | None,
                     env: Mapping[str, str] | None = None) -> Path | None:
    """The folder records go to, or ``None`` when records are off (``runs_dir=False``)."""
    if runs_dir is False:
        return None
    if isinstance(runs_dir, HeldRecords):
        return runs_dir.folder
    if runs_dir is not None and runs_dir is not True:
        return resolved(Path(runs_dir))  # a test's run folder: each new, under a folder already resolved
    environ = os.environ if env is None else env
    if environ.get(RUNS_DIR_ENV):
        return Path(environ[RUNS_DIR_ENV]).expanduser().resolve()
    if _TEST_DEFAULT is not None:  # inside a pytest test: never the project folder
        return _TEST_DEFAULT()
    return (Path.cwd() / DEFAULT_RUNS_DIR).resolve()


#: Set by the pytest plugin while a test runs (:func:`use_test_runs_dir`): where a run given no ``runs_dir``
#: writes, instead of ``./agentloom_runs``. A function, so the folder is made only when a run writes there.
_TEST_DEFAULT: Callable[[], Path] | None = None


def use_test_runs_dir(folder: Callable[[], Path] | None) -> Callable[[], Path] | None:
    """Make ``folder()`` the records folder of runs given no ``runs_dir`` (``None``: ``./agentloom_runs`` again);
    return the one set before (a pytest session inside a test puts its outer session's back).

    The ``agentloom`` fixture hands its runs a folder of the test's; this covers the engine's own API
    called in a test (``run_workflow``, ``aresume_workflow``), which would otherwise write run records and
    checkpoints into the project folder. ``AGENTLOOM_RUNS_DIR`` still wins: it is an explicit choice.
    """
    global _TEST_DEFAULT
    before, _TEST_DEFAULT = _TEST_DEFAULT, folder
    return before


def iso_time(seconds: float) -> str:
    """A wall-clock reading as ISO 8601 UTC, to the microsecond: ``2026-01-02T03:04:05.000000Z``."""
    moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def build_record(
    result: WorkflowResult,
    *,
    workflow_hash: str,
    workflow_file: str | None,
    started_at: float,
    duration: float,
    steps_executed: list[str],
    checkpoint: str | None,
    resumes: int,
) -> dict[str, Any]:
    """The record of one run (or one resumed segment). Reads only counters and ids from ``result``."""
    from ... import __version__

    providers = sorted({step.provider for step in result.steps.values() if step.provider})
    models = sorted({step.model for step in result.steps.values() if step.model})
    usage = result.usage
    return {
        "format_version": RECORD_FORMAT_VERSION,
        "kind": RECORD_KIND,
        "run_id": result.run_id,
        "started_at": iso_time(started_at),
        "workflow": {"name": result.workflow, "hash": workflow_hash, "file": workflow_file},
        "agentloom_version": __version__,
        "status": result.status.value,
        "reason": result.reason.value,
        "failed_step": result.failed_step,
        "paused_step": getattr(result, "paused_step", None),
        "providers": providers,
        "models": models,
        "usage": {**usage, "total_tokens": sum(usage.values())},
        "cost_usd": result.cost_usd,
        "duration_seconds": round(duration, 6),
        "steps_executed": steps_executed,
        "step_status": {step_id: step.status.value for step_id, step in result.steps.items()},
        "checkpoint": checkpoint,
        "resumes": resumes,
    }


def record_name(run_id: str, resumes: int) -> str:
    """``<run id>.json``, or ``<run id>.resume-<n>.json`` for the n-th resume, so each attempt keeps its own."""
    return f"{run_id}.json" if not resumes else f"{run_id}.resume-{resumes}.json"


def list_records(runs_dir: Path) -> list[dict[str, Any]]:
    """Every readable record in ``runs_dir``, oldest first (unreadable files are skipped)."""
    records: list[dict[str, Any]] = []
    if not runs_dir.is_dir():
        return records
    for path in sorted(runs_dir.glob("*.json")):
        try:
            data = load_json(read_text_capped(path, max_bytes=DEFAULT_LIMITS.max_bytes, what="run record"),
                             file=str(path))
        except (OSError, DataReadError):  # DataReadError: not a file, not UTF-8, not JSON, nested too deep
            continue
        if isinstance(data, dict) and data.get("kind") == RECORD_KIND:
            data["_path"] = str(path)
            records.append(data)
    records.sort(key=lambda record: (str(record.get("started_at")), str(record.get("run_id"))))
    return records
