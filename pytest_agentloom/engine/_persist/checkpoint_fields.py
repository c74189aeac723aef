"""Every field of a checkpoint, with the type a resume needs of it, checked before anything is resumed.

A checkpoint is a file anyone with the folder can edit, so a resume reads it as untrusted input: each
field the engine reads (top level, ``workflow``, ``pending_approval``, each step result, ``state.steps``)
is listed here with the types it may hold, and :func:`field_problems` names every field that holds
something else by its path (``state.steps``, ``steps.lookup.attempts``, ``completed_steps[0]``), so a
tampered value is a :class:`~pytest_agentloom.errors.CheckpointError` (exit code 8), never a
``TypeError`` deep in the run. What the engine never interprets is free: the state's own keys, a step's
``output``, the saved definition's insides (it is never run). An agent's saved loop
(``pending_approval.detail``) is read back into messages, a tool call and counters, so each of its fields is
checked too (``pending_approval.detail.loop.messages[2].role``). A subworkflow's child paused inside the run
(``pending_approval.detail.subworkflow``) is read like a checkpoint of its own, so its fields are checked the
same way, at every depth.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..._core.types import Message, ToolCall, Usage
from .._outcome.result import StepStatus

__all__ = ["field_problems"]

Check = Callable[[Any], bool]
Field = tuple[Check, str, bool]  # accepts the value, what it must be, whether it must be there


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _mapping(value: Any) -> bool:
    return isinstance(value, dict)


def _list(value: Any) -> bool:
    return isinstance(value, list)


def _status(value: Any) -> bool:
    return isinstance(value, str) and value in _STATUSES


def _or_null(check: Check) -> Check:
    return lambda value: value is None or check(value)


_STATUSES = frozenset(status.value for status in StepStatus)

TEXT: Field = (_text, "text", True)
OPTIONAL_TEXT: Field = (_or_null(_text), "text or null", False)
WHOLE: Field = (_whole, "a whole number (0 or more)", False)
NUMBER: Field = (_number, "a finite number", False)
OPTIONAL_NUMBER: Field = (_or_null(_number), "a finite number or null", False)
OPTIONAL_MAPPING: Field = (_or_null(_mapping), "a mapping or null", False)

TOP: dict[str, Field] = {
    "status": TEXT,
    "saved_at": OPTIONAL_TEXT, "reason": OPTIONAL_TEXT, "failed_step": OPTIONAL_TEXT, "paused_step": OPTIONAL_TEXT,
    "pending_approval": OPTIONAL_MAPPING,
    "completed_steps": (_or_null(_list), "a list of step ids or null", False),
    "elapsed_seconds": (_or_null(_number), "a finite number or null", False),
    "resumes": (_or_null(_whole), "a whole number (0 or more) or null", False),
    "workflow": (_mapping, "a mapping", True),
    "state": OPTIONAL_MAPPING,
    "steps": OPTIONAL_MAPPING,
}
"""The top-level fields (``kind``, ``format_version`` and ``run_id`` are checked first, on their own)."""

WORKFLOW: dict[str, Field] = {
    "name": OPTIONAL_TEXT, "hash": OPTIONAL_TEXT, "file": OPTIONAL_TEXT,
    "definition": OPTIONAL_MAPPING, "overrides": OPTIONAL_MAPPING,
}

PENDING: dict[str, Field] = {
    "step_id": TEXT, "clock": (_number, "a finite number", True), "wall": (_number, "a finite number", True),
    "detail": OPTIONAL_MAPPING,
}

DETAIL: dict[str, Field] = {
    "agent": TEXT, "call": (_mapping, "a mapping (the tool call awaiting approval)", True),
    "loop": (_mapping, "a mapping (the agent's saved loop)", True),
}
"""``pending_approval.detail``: what an agent step saved when a tool call waited for approval."""

LOOP: dict[str, Field] = {
    "messages": (_list, "a list of messages", False), "seen": (_list, "a list of call fingerprints (text)", False),
    "pending": (lambda value: isinstance(value, list) and bool(value), "a list holding the call awaiting approval",
                True),
    "usage": (_mapping, "a mapping of token counts", False),
    "steps": WHOLE, "stuck": WHOLE, "succeeded": WHOLE, "cost_usd": NUMBER, "elapsed": NUMBER,
    "last_text": (_text, "text", False), "progress": (lambda value: isinstance(value, bool), "true or false", False),
}
"""``pending_approval.detail.loop``: an :class:`~.._calls.agent_loop.AgentSnapshot` as saved."""

STEP_RESULT: dict[str, Field] = {
    "step_id": TEXT,
    "status": (_status, f"one of {', '.join(sorted(_STATUSES))}", True),
    "error": OPTIONAL_TEXT, "error_code": OPTIONAL_TEXT, "finish_reason": OPTIONAL_TEXT,
    "model": OPTIONAL_TEXT, "provider": OPTIONAL_TEXT, "reasoning_content": OPTIONAL_TEXT,
    "attempts": WHOLE, "input_tokens": WHOLE, "output_tokens": WHOLE, "reasoning_tokens": WHOLE,
    "cached_input_tokens": WHOLE, "cache_write_tokens": WHOLE,
    "cost_usd": NUMBER,
    "started_at": OPTIONAL_NUMBER, "ended_at": OPTIONAL_NUMBER, "time_to_first_token": OPTIONAL_NUMBER,
}
"""A saved :class:`~.._outcome.result.StepResult`: every field but ``output`` (a step's output may be anything)."""


CHILD: dict[str, Field] = {
    "paused_step": OPTIONAL_TEXT, "pending_approval": OPTIONAL_MAPPING,
    "completed_steps": (_or_null(_list), "a list of step ids or null", False),
    "elapsed_seconds": (_or_null(_number), "a finite number or null", False),
    "resumes": (_or_null(_whole), "a whole number (0 or more) or null", False),
    "state": OPTIONAL_MAPPING, "steps": OPTIONAL_MAPPING,
}
"""A paused subworkflow's child, as :func:`~.._run.child_pause.saved_child` keeps it in its parent's pause."""


def field_problems(data: Mapping[str, Any]) -> list[str]:
    """What is wrong with the fields of the checkpoint ``data``, each naming the field's path; empty if nothing."""
    problems = _table(data, TOP, "")
    if problems:
        return problems  # the parts below assume the top level has its types
    problems += _table(data["workflow"], WORKFLOW, "workflow.")
    return problems + _run_problems(data, "")


def _run_problems(data: Mapping[str, Any], prefix: str) -> list[str]:
    """The fields a run is resumed from (the checkpoint's, or a paused child's under ``prefix``)."""
    problems = []
    pending = data.get("pending_approval")
    if pending is not None:
        where = f"{prefix}pending_approval."
        problems += _table(pending, PENDING, where)
        detail = pending.get("detail")
        child = detail.get("subworkflow") if isinstance(detail, dict) else None
        if isinstance(detail, dict) and "subworkflow" not in detail:
            problems += _detail(detail, f"{where}detail.")
        if child is not None:
            inner = f"{where}detail.subworkflow"
            if not isinstance(child, dict):
                problems.append(_problem(inner, "a mapping (a paused subworkflow)", child))
            else:
                child_problems = _table(child, CHILD, inner + ".")
                problems += child_problems or _run_problems(child, inner + ".")
    for index, step_id in enumerate(data.get("completed_steps") or []):
        if not isinstance(step_id, str):
            problems.append(_problem(f"{prefix}completed_steps[{index}]", "a step id (text)", step_id))
    problems += _step_results(data.get("steps") or {}, prefix)
    problems += _state_steps(data.get("state") or {}, prefix)
    return problems


def _table(data: Mapping[str, Any], fields: Mapping[str, Field], prefix: str) -> list[str]:
    problems = []
    for name, (check, kind, required) in fields.items():
        if name not in data:
            if required:
                problems.append(f"'{prefix}{name}' is missing (it must be {kind})")
        elif not check(data[name]):
            problems.append(_problem(prefix + name, kind, data[name]))
    return problems


def _detail(detail: Mapping[str, Any], where: str) -> list[str]:
    """The fields of an agent's saved loop (``detail`` at ``where``), down to each message and tool call (read
    back with pydantic)."""
    problems = _table(detail, DETAIL, where)
    if problems:
        return problems
    problems += _model(ToolCall, detail["call"], where + "call")
    loop = detail["loop"]
    problems += _table(loop, LOOP, where + "loop.")
    if problems:
        return problems
    for name, model in (("messages", Message), ("pending", ToolCall)):
        for index, item in enumerate(loop.get(name) or []):
            problems += _model(model, item, f"{where}loop.{name}[{index}]")
    problems += _model(Usage, loop.get("usage") or {}, where + "loop.usage")
    problems += [_problem(f"{where}loop.seen[{index}]", "text", item)
                 for index, item in enumerate(loop.get("seen") or []) if not isinstance(item, str)]
    return problems


def _model(model: type[BaseModel], value: Any, where: str) -> list[str]:
    """What ``model`` finds wrong with ``value``, each problem by its path: read as the JSON it was, strictly
    (no text taken for a number), as the file holds it."""
    if not isinstance(value, dict):
        return [_problem(where, "a mapping", value)]
    try:
        model.model_validate_json(json.dumps(value), strict=True)
    except ValidationError as exc:
        return [f"'{where}{_location(error['loc'])}' {error['msg'].lower()} (got {_kind_of(error.get('input'))})"
                for error in exc.errors()[:5]]
    return []


def _location(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _step_results(steps: Mapping[str, Any], prefix: str = "") -> list[str]:
    problems = []
    for step_id, result in steps.items():
        where = f"{prefix}steps.{step_id}"
        if not isinstance(result, dict):
            problems.append(_problem(where, "a mapping (a step's result)", result))
            continue
        problems += _table(result, STEP_RESULT, where + ".")
        if isinstance(result.get("step_id"), str) and result["step_id"] != step_id:
            problems.append(f"'{where}.step_id' must be {step_id!r}, the step it is saved under "
                            f"(got {result['step_id']!r})")
    return problems


def _state_steps(state: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``state.steps`` is the engine's own record of each step's output and status: a mapping of mappings."""
    if "steps" not in state:
        return []
    steps = state["steps"]
    if not isinstance(steps, dict):
        return [_problem(f"{prefix}state.steps", "a mapping of step ids to their output and status", steps)]
    return [_problem(f"{prefix}state.steps.{step_id}", "a mapping (the step's output and status)", entry)
            for step_id, entry in steps.items() if not isinstance(entry, dict)]


def _problem(path: str, kind: str, value: Any) -> str:
    return f"'{path}' must be {kind} (got {_kind_of(value)})"


def _kind_of(value: Any) -> str:
    names = {str: "text", bool: "true/false", int: "a number", float: "a number", dict: "a mapping", list: "a list"}
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return names.get(type(value), type(value).__name__)
