"""What a snapshot file holds, and how a file of the earlier format is read.

A run keeps each step's output in up to three places: the state key the step writes (``state.<output>``), the
engine's copy (``state.steps.<id>.output``) and the step's result (``steps.<id>.output``). A snapshot writes it
once, in the state, where a reviewer reads it:

- a step whose output is the value at its ``output`` key gets ``output_in: state.<output>`` instead of a second
  copy (a step with no ``output`` key, or whose key a later step overwrote, keeps its own ``output:``);
- the engine's ``state.steps.<id>`` copy is left out when it says nothing the step's entry does not; for a
  structured output that copy holds the reply's JSON text, the parsed value being in the state: it is left out
  too (the text as the model wrote it is in the cassette), so a changed field is one hunk, not two.

So a one-word change to an output is one hunk in ``git diff``. Format 1 wrote all three copies; such a file is
brought to this shape when read (:func:`upgrade`), with the run's step -> output key table, so it compares equal
with an unchanged run, and ``--agentloom-update-snapshots`` rewrites it.

Volatile values are applied to the run's full data first (see :mod:`.volatile`): a matcher on
``steps.<id>.output.id`` also covers ``state.<output>.id``, and both copies then compact to one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._core.plain import to_plain
from ..._core.state_paths import MISSING, get_path, parse_path

if TYPE_CHECKING:
    from ...engine._outcome.result import WorkflowResult

__all__ = ["FORMAT_VERSION", "OLD_FORMATS", "compact", "full_data", "output_notes", "output_paths", "upgrade",
           "without_reply_texts"]

#: 2: each output once (``output_in``); 1: three copies of every output
FORMAT_VERSION = 2
#: formats still read, and brought to the current one when read
OLD_FORMATS = frozenset({1})
_KEY = "output_in"


def output_paths(result: WorkflowResult) -> dict[str, str]:
    """Step id -> the state path its output was written to, from the run's ``state_write`` events.

    A step writes its conversation (if any), then its ``output`` key, then ``steps.<id>``: the output key is
    the last path before ``steps.<id>`` that is not the engine's own. A resumed run's steps from before the
    pause are found in the run it resumed (``resumed_from``).
    """
    earlier = result.resumed_from
    found: dict[str, str] = output_paths(earlier) if earlier is not None and earlier is not result else {}
    last: dict[str, str] = {}
    for event in result.trace.events("state_write"):
        step_id, path = event.step_id, event.data.get("path")
        if step_id is None or not isinstance(path, str):
            continue
        if path == f"steps.{step_id}":
            if step_id in last:
                found[step_id] = last.pop(step_id)
        elif not path.startswith(("steps.", "_approval.")):
            last[step_id] = path
    return found


def full_data(result: WorkflowResult, *, requests: bool = True) -> dict[str, Any]:
    """The stable part of a run with every copy of every output (format 1's shape, before :func:`compact`).

    Nothing time-dependent. ``requests`` come from ``result.sent_requests`` (set by the ``agentloom``
    fixture); with ``requests=False``, or for a result that has none, the key is left out.
    """
    steps: dict[str, Any] = {}
    calls_by_step: dict[str | None, list[dict[str, Any]]] = {}
    for event in _tool_call_events(result):
        calls_by_step.setdefault(event.step_id, []).append(
            {"tool": event.data.get("tool"), "args": to_plain(event.data.get("args", {})), "ok": event.data.get("ok")})
    for step_id, step in result.steps.items():
        entry: dict[str, Any] = {"status": step.status.value, "output": to_plain(step.output)}
        if step.finish_reason is not None:
            entry["finish_reason"] = step.finish_reason
        if step.error_code is not None:
            entry["error_code"] = step.error_code
        if step_id in calls_by_step:
            entry["tool_calls"] = calls_by_step[step_id]
        steps[step_id] = entry
    data: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "workflow": result.workflow,
        "status": result.status.value,
        "reason": result.reason.value,
        "failed_step": result.failed_step,
        "state": _sorted(result.state),
        "steps": steps,
    }
    if requests and result.sent_requests is not None:
        data["requests"] = result.sent_requests
    data["usage"] = dict(result.usage)
    data["cost_usd"] = result.cost_usd
    return data


def _tool_call_events(result: WorkflowResult) -> list[Any]:
    """The run's tool calls; a resumed run's (``resumed_from``, set by the fixture) start with those before its
    pause, whose steps it did not run again."""
    earlier = result.resumed_from
    return [*(_tool_call_events(earlier) if earlier is not None else []), *result.trace.events("tool_call")]


_ATOMS = frozenset({str, int, bool, type(None)})


def _sorted(value: Any) -> Any:
    """``to_plain(value)`` with every dict's keys sorted, in one walk (a state may hold megabytes)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        plain = {key if type(key) is str else str(key): item for key, item in value.items()}  # as to_plain
        return {key: _sorted(plain[key]) for key in sorted(plain)}
    if kind is list:
        return [_sorted(item) for item in value]
    plain = to_plain(value)  # a model, a tuple, a set, a read-only dict...: made plain, then sorted
    return plain if type(plain) in _ATOMS or type(plain) is float else _sorted(plain)


def compact(data: dict[str, Any], outputs: Mapping[str, str]) -> dict[str, Any]:
    """``data`` (full, volatile values applied) with each output written once; ``data`` is not changed."""
    state, steps = data.get("state"), data.get("steps")
    if not isinstance(state, dict) or not isinstance(steps, dict):
        return data
    state = _without_mirror(state, steps)
    new_steps = {step_id: _pointed(entry, outputs.get(step_id), state) for step_id, entry in steps.items()}
    return {**data, "state": _without_reply_texts(state, new_steps), "steps": new_steps}


def _without_mirror(state: dict[str, Any], steps: dict[str, Any]) -> dict[str, Any]:
    """The state without the ``steps.<id>`` entries that repeat ``steps.<id>``'s status and output."""
    mirror = state.get("steps")
    if not isinstance(mirror, dict):
        return state
    kept = {}
    for step_id, copy in mirror.items():
        entry = steps.get(step_id)
        if isinstance(entry, dict) and isinstance(copy, dict) and copy == {
                key: entry[key] for key in ("output", "status") if key in entry}:
            continue
        kept[step_id] = copy
    out = {key: value for key, value in state.items() if key != "steps"}
    if kept:
        out["steps"] = kept
        out = {key: out[key] for key in sorted(out)}
    return out


def _without_reply_texts(state: dict[str, Any], steps: dict[str, Any]) -> dict[str, Any]:
    """The state without the ``steps.<id>`` copies that are a structured output's reply text.

    Such a copy is ``{output: "<JSON text>", status}`` beside a step whose output (kept in its entry, or in the
    state where ``output_in`` points) is the parsed object or list. It works on data already compacted, so a
    format-2 file written before this rule reads as the same snapshot (see :func:`compact`'s callers).
    """
    mirror = state.get("steps")
    if not isinstance(mirror, dict):
        return state
    kept = {step_id: copy for step_id, copy in mirror.items()
            if not _is_reply_text(copy, steps.get(step_id), state)}
    if len(kept) == len(mirror):
        return state
    out = {key: value for key, value in state.items() if key != "steps"}
    if kept:
        out["steps"] = kept
        out = {key: out[key] for key in sorted(out)}
    return out


def without_reply_texts(data: Any) -> dict[str, Any] | None:
    """A stored format-2 run snapshot with its structured outputs' reply texts left out (as :func:`compact`
    writes it now); ``None`` when it holds none, so an unchanged file is told apart from one to rewrite."""
    if not isinstance(data, dict) or not isinstance(data.get("state"), dict) or not isinstance(data.get("steps"), dict):
        return None
    state = _without_reply_texts(data["state"], data["steps"])
    return None if state is data["state"] else {**data, "state": state}


def _is_reply_text(copy: Any, entry: Any, state: dict[str, Any]) -> bool:
    if not isinstance(copy, dict) or not isinstance(entry, dict) or set(copy) != {"output", "status"}:
        return False
    text = copy["output"]
    if not isinstance(text, str) or copy["status"] != entry.get("status") or text.lstrip()[:1] not in ("{", "["):
        return False
    parsed = _output_of(entry, state)
    if not isinstance(parsed, dict | list):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _output_of(entry: dict[str, Any], state: dict[str, Any]) -> Any:
    """A compacted step entry's output: its own, or the state value its ``output_in`` names."""
    pointer = entry.get(_KEY)
    if not isinstance(pointer, str) or not pointer.startswith("state."):
        return entry.get("output", MISSING)
    try:
        return get_path(state, parse_path(pointer[len("state."):]))
    except ValueError:
        return MISSING


def _pointed(entry: Any, path: str | None, state: dict[str, Any]) -> Any:
    """A step's entry with ``output_in: state.<path>`` for an output the state holds at ``path``."""
    if path is None or not isinstance(entry, dict) or "output" not in entry:
        return entry
    try:
        value = get_path(state, parse_path(path))
    except ValueError:
        return entry
    if value is MISSING or value != entry["output"]:
        return entry
    return {(_KEY if key == "output" else key): (f"state.{path}" if key == "output" else item)
            for key, item in entry.items()}


def upgrade(stored: dict[str, Any], outputs: Mapping[str, str]) -> dict[str, Any]:
    """A format-1 file's data in the current shape (``outputs`` from the run it is compared with).

    The caller applies the volatile values of the assertion first, so values its matchers now also cover (an
    output's state key) read as placeholders on both sides.
    """
    return {**compact(stored, outputs), "format_version": FORMAT_VERSION}


def output_notes(data: Any) -> dict[tuple[Any, ...], str]:
    """For a diff: the state paths that hold a step's output (``output_in``), each noted with its step."""
    steps = data.get("steps") if isinstance(data, dict) else None
    notes: dict[tuple[Any, ...], str] = {}
    for step_id, entry in (steps or {}).items():
        pointer = entry.get(_KEY) if isinstance(entry, dict) else None
        if isinstance(pointer, str) and pointer.startswith("state."):
            try:
                notes[("state", *parse_path(pointer[len("state."):]))] = f"output of step {step_id}"
            except ValueError:
                continue
    return notes
