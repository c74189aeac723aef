"""Reading a workflow file into a :class:`Workflow`, or explaining why it can't be.

Loading is all-or-nothing: the YAML is parsed, validated against the models,
then checked as a graph (ids, dependencies, cycles, router targets; see
:mod:`.graph`) and for templates and router expressions that could never work
(:mod:`.load_checks`). Every problem found is reported, each naming the file, the
step id and the field. Last, the child workflows of ``subworkflow`` steps are
loaded and checked the same way (:func:`load_children`), so a running workflow
never reads another file.
"""

from __future__ import annotations

import types
import typing
import warnings
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..._core.suggest import did_you_mean
from ..._core.yaml_io import DEFAULT_LIMITS, load_yaml, read_text_capped
from ...errors import DataReadError, UnreadDecisionWarning, WorkflowError, render_message
from .._evaluate.expressions import ExpressionSyntaxError, compile_expression
from . import load_checks as checks
from .gates import unread_gates
from .graph import check_cycles, check_ids, check_references
from .input_checks import check_inputs
from .model import (
    FUTURE_STEP_TYPES,
    STEP_TYPES,
    Condition,
    RouterStep,
    SubworkflowStep,
    ToolStep,
    Workflow,
)
from .output_clashes import check_parallel_outputs

__all__ = ["load_children", "load_workflow", "load_workflow_read", "parse_data", "parse_workflow", "validate_workflow"]

#: Keys of upstream ``agentloom`` files that this engine refuses, and what to write instead
#: (docs/compatibility.md lists every upstream key and what happens to it).
UPSTREAM_UNSUPPORTED = {
    "jitter": "backoffs here are exact, so a run repeats; remove 'jitter' (the waits stay "
              "backoff_seconds * backoff_multiplier ** n).",
    "seed": "the mock provider here is deterministic without a seed; remove it.",
}

#: Where other tools put a provider fallback chain, refused with the way to write it here (docs/workflow-format.md)
_FALLBACK_HINT = ("write the chain as config.fallbacks (e.g. fallbacks: {anthropic: [{provider: openai, model: "
                  "gpt-4o-mini}]}) or as a step's fallback list; each fallback names its own model.")
_FALLBACK_KEYS = ("routes", "fallback", "is_fallback", "fallback_providers")

#: The files being loaded, outermost first: a child that is already on the chain includes itself.
_CHAIN: ContextVar[tuple[Path, ...]] = ContextVar("agentloom_subworkflow_chain", default=())
#: Inside :func:`load_workflow_read`: every file read so far and the text the loader got from it.
_READ: ContextVar[dict[Path, str] | None] = ContextVar("agentloom_files_read", default=None)


def load_workflow(path: str | Path) -> Workflow:
    """Load and check the workflow at ``path``; raise :class:`WorkflowError` if anything is wrong."""
    try:
        source = Path(path).expanduser().resolve()
        text = read_text_capped(source, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file")
    except FileNotFoundError:
        raise WorkflowError(
            f"Workflow file not found: {path}", file=str(path), hint="check the path; relative paths are "
            "resolved against the current directory (or the test file's folder in the agentloom fixture)."
        ) from None
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL; RuntimeError: a symlink loop
        if isinstance(exc, DataReadError):
            raise WorkflowError(f"Workflow file cannot be read: {exc.problem}", file=exc.file, hint=exc.hint) from None
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WorkflowError(
            f"Workflow file cannot be read: {reason}", file=str(path),
            hint="pass the path of a UTF-8 YAML file.",
        ) from None
    read = _READ.get()
    if read is not None:
        read[source] = text
    return parse_workflow(text, source=source)


def load_workflow_read(path: str | Path) -> tuple[Workflow, dict[Path, str]]:
    """:func:`load_workflow`, and the text of every file it read: the workflow's and its subworkflows'.

    For caches of loaded workflows: the texts are exactly those the workflow was built from, so
    comparing them with the files later tells whether it is still what loading them would give.
    """
    token = _READ.set({})
    try:
        workflow = load_workflow(path)
        return workflow, dict(_READ.get() or {})
    finally:
        _READ.reset(token)


def parse_workflow(text: str, *, source: Path | None = None) -> Workflow:
    """Parse YAML text into a checked workflow; ``source`` names the file in errors and anchors paths."""
    file = str(source) if source else "<string>"
    data = _read_yaml(text, file)
    try:
        return parse_data(data, source=source, file=file)
    except WorkflowError as exc:
        raise _with_lines(exc, text, file) from None


def _with_lines(error: WorkflowError, text: str, file: str) -> WorkflowError:
    """``error`` with each of its problems in this file at the line it was written on (``file: x.yaml:12``)."""
    from ..._core.yaml_lines import line_of

    problems = error.problems or [error]
    for problem in problems:
        if problem.file == file and problem.line is None and (problem.step_id or problem.field):
            problem.at_line(line_of(text, problem.step_id, problem.field))
    return _combine(problems, file) if error.problems else error


def parse_data(data: dict[str, Any], *, source: Path | None = None, file: str = "<string>") -> Workflow:
    """A checked workflow from already parsed YAML (a file's, or a ``workflow_inline`` mapping)."""
    bad_types = _check_step_types(data, file)
    try:
        workflow = Workflow.model_validate(data)
    except ValidationError as exc:
        schema = [_translate(error, data, file) for error in exc.errors() if not _about_step(error, bad_types)]
        raise _combine([*bad_types.values(), *schema, *_raw_graph_problems(data, file),
                        *_raw_text_problems(data, file, bad_types)], file) from None
    if source is not None:
        workflow = workflow.with_source(source)
    validate_workflow(workflow, file=file)
    workflow.compiled.seal()  # complete: the workflow may now be shared (see engine.model)
    return workflow


def validate_workflow(workflow: Workflow, *, file: str = "<workflow>") -> None:
    """Run the checks that need the whole workflow; compile router expressions and load children on success."""
    problems = [*check_ids(workflow, file), *check_references(workflow, file)]
    if not problems:
        problems.extend(check_cycles(workflow, file))
    if not problems:  # the graph is sound: which steps may run side by side is known
        problems.extend(check_parallel_outputs(workflow, file))
    problems.extend(checks.check_llm_calls(workflow, file))
    problems.extend(checks.check_tool_calling(workflow, file))
    problems.extend(checks.check_shared_conversations(workflow, file))
    problems.extend(checks.check_agent_conversations(workflow, file))
    problems.extend(checks.check_thinking(workflow, file))
    problems.extend(checks.check_call_shapes(workflow, file))
    problems.extend(checks.check_fallbacks(workflow, file))
    problems.extend(checks.check_fallback_shapes(workflow, file))
    problems.extend(checks.check_agents(workflow, file))
    problems.extend(checks.compile_routers(workflow, file))
    if not problems:  # children are loaded only once the parent itself is sound
        problems.extend(load_children(workflow, file))
    if problems:
        raise _combine(problems, file)
    _warn_unread_gates(workflow, file)


def _warn_unread_gates(workflow: Workflow, file: str) -> None:
    """An :class:`UnreadDecisionWarning` per approval gate that gates nothing (see :mod:`.gates`), at the gate's
    line in the file (found as every load error's line is, :func:`~pytest_agentloom._core.yaml_lines.line_of`)."""
    from ..._core.yaml_lines import line_of

    gates = unread_gates(workflow)
    text = _source_text(workflow) if gates else ""
    for gate in gates:
        warning = UnreadDecisionWarning(render_message(
            gate.message + ".", [("file", file), ("step", gate.step_id), ("field", "output")], hint=gate.hint))
        line = (line_of(text, gate.step_id) if text else None) or 1
        warnings.warn_explicit(warning, UnreadDecisionWarning, filename=file, lineno=line)


def _source_text(workflow: Workflow) -> str:
    """The workflow file's text ("" for a workflow built from text), to point a warning at a step's line."""
    try:
        return workflow.source.read_text(encoding="utf-8") if workflow.source is not None else ""
    except (OSError, ValueError):
        return ""


# -- child workflows ----------------------------------------------------------------------------------------


def load_children(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Load the child file of every ``subworkflow`` step into ``workflow.compiled.children``.

    Returns the problems instead of raising: a missing or invalid child, files that
    include each other (named as the chain of files), and a ``retry`` on the step (the
    child's own steps retry by their own policies). A child may pause for approval: the
    parent pauses with it (:mod:`.._steps.subworkflow`).
    """
    steps = [step for step in workflow.steps if isinstance(step, SubworkflowStep)]
    if not steps:
        return []
    chain = _CHAIN.get()
    own = workflow.source.resolve() if workflow.source is not None else None
    if own is not None and (not chain or chain[-1] != own):
        chain = (*chain, own)
    problems: list[WorkflowError] = []
    for step in steps:
        if step.retry is not None:
            problems.append(WorkflowError(
                "A subworkflow step cannot be retried as a whole", file=file, step_id=step.id, field="retry",
                hint="remove 'retry' here and give the child's own steps a 'retry' policy.",
            ))
        child = _load_child(workflow, step, chain, file, problems)
        if child is not None:
            workflow.compiled.children[step.id] = child
            problems.extend(check_inputs(step, child, file))
    return problems


def _load_child(workflow: Workflow, step: SubworkflowStep, chain: tuple[Path, ...], file: str,
                problems: list[WorkflowError]) -> Workflow | None:
    if step.workflow_inline is not None:
        child = _inline_child(workflow, step, file, problems)
    else:
        child = _file_child(workflow, step, chain, file, problems)
    return child


def _child_field(step: SubworkflowStep) -> str:
    return "workflow_inline" if step.workflow_inline is not None else "workflow_path" if step.workflow_path \
        else "workflow"


def _file_child(workflow: Workflow, step: SubworkflowStep, chain: tuple[Path, ...], file: str,
                problems: list[WorkflowError]) -> Workflow | None:
    name = step.child_name
    try:
        path = workflow.resolve_path(name).resolve()
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        problems.append(WorkflowError(
            f"Subworkflow path {name!r} cannot be used: {exc}", file=file, step_id=step.id,
            field=_child_field(step), hint="give the path of the child workflow file.",
        ))
        return None
    if path in chain:
        loop = " -> ".join(str(item) for item in (*chain[chain.index(path):], path))
        problems.append(WorkflowError(
            f"Subworkflows include each other in a cycle: {loop}", file=file, step_id=step.id,
            field=_child_field(step), hint="a workflow may not run itself, directly or through another file.",
        ))
        return None
    token = _CHAIN.set((*chain, path))
    try:
        return load_workflow(path)
    except WorkflowError as exc:
        inner = str(exc).replace("\n", "\n    ")
        problems.append(WorkflowError(
            f"Subworkflow '{name}' cannot be loaded ({path}):\n    {inner}", file=file,
            step_id=step.id, field=_child_field(step),
            hint="fix the child file, or the path (relative paths start at this workflow file's folder).",
        ))
        return None
    finally:
        _CHAIN.reset(token)


def _inline_child(workflow: Workflow, step: SubworkflowStep, file: str,
                  problems: list[WorkflowError]) -> Workflow | None:
    """``workflow_inline``: the child written in the step, checked like a file; its paths start at the parent's."""
    inner_file = f"{file} (step '{step.id}', workflow_inline)"
    try:
        return parse_data(dict(step.workflow_inline or {}), source=workflow.source, file=inner_file)
    except WorkflowError as exc:
        inner = str(exc).replace("\n", "\n    ")
        problems.append(WorkflowError(
            f"The inline subworkflow cannot be loaded:\n    {inner}", file=file, step_id=step.id,
            field="workflow_inline", hint="fix the workflow written under 'workflow_inline'.",
        ))
        return None


# -- YAML and models --------------------------------------------------------------------------------------


def _read_yaml(text: str, file: str) -> dict[str, Any]:
    try:
        data = load_yaml(text, file=file)
    except DataReadError as exc:
        problem = exc.problem.removeprefix("invalid YAML: ")
        raise WorkflowError(f"Invalid YAML{exc.at_line}: {problem}", file=file, hint=exc.hint) from None
    if not isinstance(data, dict):
        raise WorkflowError(
            f"A workflow file must hold a mapping with 'name' and 'steps', got {type(data).__name__}",
            file=file,
        )
    return data


def _check_step_types(data: dict[str, Any], file: str) -> dict[int, WorkflowError]:
    """Explain unknown or not-yet-supported step types (by step index) instead of pydantic's union error."""
    steps = data.get("steps")
    problems: dict[int, WorkflowError] = {}
    if not isinstance(steps, list):
        return problems
    for index, raw in enumerate(steps):
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        step_id = raw.get("id") if isinstance(raw.get("id"), str) else f"steps[{index}]"
        if isinstance(kind, str) and kind in STEP_TYPES:
            continue
        if kind in FUTURE_STEP_TYPES:
            message = f"Step type '{kind}' is part of AgentLoom 0.5 but not supported by this version yet"
            hint = f"supported step types: {', '.join(STEP_TYPES)}."
        elif kind is None:
            message, hint = "Step has no 'type'", f"add 'type:' with one of: {', '.join(STEP_TYPES)}."
        else:
            message = f"Unknown step type '{kind}'"
            hint = did_you_mean(str(kind), STEP_TYPES) or f"use one of: {', '.join(STEP_TYPES)}."
        problems[index] = WorkflowError(message, file=file, step_id=step_id, field="type", hint=hint)
    return problems


def _about_step(error: Any, indexes: dict[int, WorkflowError]) -> bool:
    loc = error["loc"]
    return len(loc) >= 2 and loc[0] == "steps" and loc[1] in indexes


def _raw_graph_problems(data: dict[str, Any], file: str) -> list[WorkflowError]:
    """The graph checks on the raw steps, so a file with schema errors hears about its graph errors too.

    Only well-formed parts take part (string ids, lists of string dependencies, string targets, a
    router's targets only when its ``conditions`` and ``default`` have the right shape): what is
    malformed is already a schema error of its own.
    """
    steps = data.get("steps")
    nodes: list[Any] = []
    for raw in steps if isinstance(steps, list) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            continue
        deps = raw.get("depends_on")
        deps = [dep for dep in deps if isinstance(dep, str)] if isinstance(deps, list) else []
        conditions, default = raw.get("conditions", []), raw.get("default")
        if raw.get("type") == "router" and isinstance(conditions, list) and isinstance(default, str | None):
            targets = [condition.get("target") if isinstance(condition, dict) else None for condition in conditions]
            nodes.append(RouterStep.model_construct(
                id=raw["id"], depends_on=deps, default=default,
                conditions=[Condition.model_construct(target=_string_or_none(target)) for target in targets],
            ))
        else:
            nodes.append(ToolStep.model_construct(id=raw["id"], depends_on=deps))
    graph = Workflow.model_construct(steps=nodes)
    problems = [*check_ids(graph, file), *check_references(graph, file)]
    return problems or check_cycles(graph, file)


def _raw_text_problems(data: dict[str, Any], file: str, skip: dict[int, WorkflowError]) -> list[WorkflowError]:
    """Router expressions and prompt templates checked on the raw steps, so a file with schema errors hears
    about these too. Only string values take part: anything else is already a schema problem."""
    steps = data.get("steps")
    problems: list[WorkflowError] = []
    for index, raw in enumerate(steps if isinstance(steps, list) else []):
        if index in skip or not isinstance(raw, dict):
            continue
        step_id = raw["id"] if isinstance(raw.get("id"), str) else f"steps[{index}]"
        kind = raw.get("type")
        if kind == "router" and isinstance(raw.get("conditions"), list):
            for position, condition in enumerate(raw["conditions"]):
                expression = condition.get("expression") if isinstance(condition, dict) else None
                if not isinstance(expression, str):
                    continue
                try:
                    compile_expression(expression)
                except ExpressionSyntaxError as exc:
                    problems.append(WorkflowError(
                        f"Router expression not allowed: {exc}", file=file, step_id=step_id,
                        field=f"conditions[{position}].expression",
                        hint="use comparisons, and/or/not, in, literals, state paths and simple string methods.",
                    ))
        fields = ("prompt", "system_prompt") if kind == "llm_call" else ("prompt",) if kind == "agent" else ()
        for field in fields:
            if isinstance(raw.get(field), str):
                problems.extend(checks.template_problem(raw[field], file, step_id, field))
    return problems


def _string_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _translate(error: Any, data: dict[str, Any], file: str) -> WorkflowError:
    """Turn one pydantic error into a WorkflowError naming the step and the field."""
    loc = list(error["loc"])
    step_id = None
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        raw = data["steps"][loc[1]]
        step_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"steps[{loc[1]}]"
        loc = loc[3:] if len(loc) > 2 and loc[2] in STEP_TYPES else loc[2:]
    field = _format_loc(loc) or None
    hint = None
    if error["type"] == "extra_forbidden":
        key = str(loc[-1])
        known = _known_keys(error["loc"])
        message = f"Unknown key '{key}'"
        hint = did_you_mean(key, known) or (f"known keys here: {', '.join(sorted(known))}." if known else None)
        if key in UPSTREAM_UNSUPPORTED:
            message, hint = f"Unknown key '{key}' (from upstream agentloom, not supported here)", \
                UPSTREAM_UNSUPPORTED[key]
        elif key in _FALLBACK_KEYS and loc[0] == "config":
            hint = _FALLBACK_HINT
    elif error["type"] == "missing":
        message = f"Missing required key '{loc[-1]}'"
        inner = _format_loc(loc[:-1])
        where = f"step '{step_id}'" if step_id else (inner or "the top level of the file")
        where = f"{inner} of {where}" if step_id and inner else where
        hint = f"add '{loc[-1]}:' to {where}."
    else:
        message = f"Invalid value for '{field}': {error['msg']}" if field else error["msg"]
        if isinstance(error.get("input"), bool) and error["type"] == "string_type":
            hint = "YAML reads yes/no/on/off/true/false as booleans; put the value in quotes."
        elif loc == ["config", "provider"] and isinstance(error.get("input"), list):
            hint = "config.provider names one provider; " + _FALLBACK_HINT
    return WorkflowError(message, file=file, step_id=step_id, field=field, hint=hint)


def _format_loc(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model that holds the last key of ``loc``."""
    model: Any = Workflow
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if model is Workflow and part in STEP_TYPES:
            continue
        fields = _fields_as_written(model)
        if part in fields:
            model = _inner_model(fields[part].annotation, loc)
        elif part in STEP_TYPES:
            model = STEP_TYPES[part]
    return list(_fields_as_written(model))


def _fields_as_written(model: Any) -> dict[str, Any]:
    """A model's fields by the key a workflow file writes (a field's alias when it has one: ``schema``, not
    the Python name ``schema_``)."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return {}
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _inner_model(annotation: Any, loc: tuple[Any, ...]) -> Any:
    """The pydantic model inside ``list[X]``, ``X | None``, ``dict[str, X]`` or the step union."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return _inner_model(args[0], loc)
    if len(loc) >= 3 and loc[0] == "steps" and loc[2] in STEP_TYPES and set(args) == set(STEP_TYPES.values()):
        return STEP_TYPES[loc[2]]
    for arg in args:
        if arg is type(None):
            continue
        found = _inner_model(arg, loc)
        if found is not None:
            return found
    if isinstance(annotation, types.UnionType):
        return None
    return None


#: Most problems a message lists; the rest are counted (and kept in ``WorkflowError.problems``).
MAX_LISTED_PROBLEMS = 50


def _combine(problems: list[WorkflowError], file: str) -> WorkflowError:
    problems = list({str(problem): problem for problem in problems}.values())  # the same problem once
    if len(problems) == 1:
        return problems[0]
    lines = [f"{len(problems)} problems in workflow {file}:"]
    for number, problem in enumerate(problems[:MAX_LISTED_PROBLEMS], 1):
        body = str(problem).replace("\n", "\n     ")
        lines.append(f"  {number}. {body}")
    if len(problems) > MAX_LISTED_PROBLEMS:
        lines.append(f"  ... and {len(problems) - MAX_LISTED_PROBLEMS} more: fix these first, then validate again.")
    first = problems[0]
    combined = WorkflowError("\n".join(lines), problems=problems)
    # set after rendering: each problem already names its own file, step and field
    combined.file, combined.step_id, combined.field = file, first.step_id, first.field
    return combined


# -- whole-workflow checks ----------------------------------------------------------------------------------
