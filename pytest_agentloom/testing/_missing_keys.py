"""A ``{state.x}`` placeholder that rendered empty in a test: an error by default, pointing where it is written.

A missing key is almost always a typo (``{state.email.sendr}``), and a typo that renders as nothing lets
the test pass on a prompt nobody meant. So in tests it fails the run's call (``missing_template_keys =
error``, the default; ``warn`` relaxes it). Either way the message names the workflow file and the line
the placeholder is written on, the table row that ran it, and the closest path the run's state has; a
warning is filed at the workflow's line (``warnings.warn_explicit``), not at a line of this package.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.state_paths import parse_path
from .._core.suggest import closest_path
from .._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from .._core.yaml_lines import line_of
from ..engine._format.model import Workflow
from ..errors import MissingTemplateKeyWarning, render_message

if TYPE_CHECKING:
    from ..engine._outcome.result import WorkflowResult

__all__ = ["report_missing_keys"]


@dataclass(frozen=True)
class _Place:
    """Where a placeholder is written: the file (``None`` for a workflow built in Python) and the line."""

    file: Path | None
    line: int | None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.file and self.line else str(self.file or "")


def report_missing_keys(result: WorkflowResult, workflow: Workflow, mode: str, *, row: tuple[str, Path, int] | None,
                        stacklevel: int) -> None:
    """Raise (``mode == 'error'``) or warn for each placeholder of ``result``'s run that rendered empty.

    ``row`` is the scenario table row that ran it (id, table file, line), if one did.
    """
    __tracebackhide__ = True
    seen: set[tuple[str | None, str]] = set()
    for event in result.trace.events("template_warning"):
        key = (event.step_id, str(event.data.get("field")))
        if key in seen:
            continue
        seen.add(key)
        place = _place(workflow, *key)
        message = _message(workflow, *key, place, result.unredacted_state or result.state, row, mode)
        warning = MissingTemplateKeyWarning(message)
        if mode == "error":
            raise warning
        if place.file is not None:
            warnings.warn_explicit(warning, MissingTemplateKeyWarning, str(place.file), place.line or 1)
        elif row is not None:
            warnings.warn_explicit(warning, MissingTemplateKeyWarning, str(row[1]), row[2])
        else:
            warnings.warn(warning, stacklevel=stacklevel)  # the test's line that ran the workflow


def _text_of(source: Path | None) -> str:
    if source is None:
        return ""
    try:
        return read_text_capped(source, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file")
    except (OSError, ValueError, RuntimeError):
        return ""


def _place(workflow: Workflow, step_id: str | None, field: str) -> _Place:
    """The file and line of the placeholder: in the child's file for a subworkflow's step (``research/search``)."""
    owner, own_id = _owner(workflow, step_id)
    if owner.source is None:
        return _Place(None, None)
    text = _text_of(owner.source)
    line = line_of(text, own_id, None, "{" + field) if text else None
    return _Place(owner.source, line)


def _owner(workflow: Workflow, step_id: str | None) -> tuple[Workflow, str | None]:
    """The (sub)workflow a step id of the run's trace belongs to, and the step's id in it."""
    while step_id is not None and "/" in step_id:
        head, rest = step_id.split("/", 1)
        child = workflow.compiled.children.get(head)
        if child is None:
            break
        workflow, step_id = child, rest
    return workflow, step_id


def _message(workflow: Workflow, step_id: str | None, field: str, place: _Place, state: Any,
             row: tuple[str, Path, int] | None, mode: str) -> str:
    path = field.removeprefix("state.")
    closest = _closest(path, state)
    where = str(place) if place.file is not None else f"workflow '{workflow.name}' (built in Python)"
    relax = ("it only warns because missing_template_keys is 'warn'" if mode != "error" else
             "to let a missing key only warn, set ini agentloom_missing_template_keys = warn (or "
             "@pytest.mark.agentloom(missing_template_keys='warn'))")
    return render_message(
        f"Template placeholder {{state.{path}}} rendered empty in step '{step_id}': the state has no '{path}'.",
        [("workflow", where), ("row", f"{row[0]} ({row[1]}:{row[2]})" if row else None)],
        hint=(f"did you mean '{closest}'? " if closest else "")
        + f"fix the name in the template, or give the run that key in its state; {relax}.",
    )


def _closest(path: str, state: Any) -> str | None:
    try:
        return closest_path(parse_path(path), state)
    except ValueError:
        return None
