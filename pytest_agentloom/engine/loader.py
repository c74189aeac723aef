"""Reading a workflow file into a :class:`Workflow`, or explaining why it can't be.

Loading is all-or-nothing: the YAML is parsed, validated against the models,
then checked as a graph (ids, dependencies, cycles, router targets) and for
templates and router expressions that could never work. Every problem found is
reported, each naming the file, the step id and the field.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..core.suggest import did_you_mean
from ..errors import TemplateError, WorkflowError
from .expressions import ExpressionSyntaxError, compile_expression
from .model import (
    FUTURE_STEP_TYPES,
    STEP_TYPES,
    AgentStep,
    Condition,
    LLMCallStep,
    NamedToolChoice,
    RouterStep,
    ToolStep,
    Workflow,
)
from .templates import check_template

__all__ = ["load_workflow", "parse_workflow", "validate_workflow"]


def load_workflow(path: str | Path) -> Workflow:
    """Load and check the workflow at ``path``; raise :class:`WorkflowError` if anything is wrong."""
    source = Path(path).expanduser().resolve()
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkflowError(
            f"Workflow file not found: {path}", file=str(path), hint="check the path; relative paths are "
            "resolved against the current directory (or the test file's folder in the agentloom fixture)."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WorkflowError(
            f"Workflow file cannot be read: {reason}", file=str(source),
            hint="pass the path of a UTF-8 YAML file.",
        ) from None
    return parse_workflow(text, source=source)


def parse_workflow(text: str, *, source: Path | None = None) -> Workflow:
    """Parse YAML text into a checked workflow; ``source`` names the file in errors and anchors paths."""
    file = str(source) if source else "<string>"
    data = _read_yaml(text, file)
    bad_types = _check_step_types(data, file)
    try:
        workflow = Workflow.model_validate(data)
    except ValidationError as exc:
        schema = [_translate(error, data, file) for error in exc.errors() if not _about_step(error, bad_types)]
        raise _combine([*bad_types.values(), *schema, *_raw_graph_problems(data, file),
                        *_raw_text_problems(data, file, bad_types)], file) from None
    workflow._source = source
    validate_workflow(workflow, file=file)
    return workflow


def validate_workflow(workflow: Workflow, *, file: str = "<workflow>") -> None:
    """Run the checks that need the whole workflow; compile router expressions on success."""
    problems = [*_check_ids(workflow, file), *_check_references(workflow, file)]
    if not problems:
        problems.extend(_check_cycles(workflow, file))
    problems.extend(_check_llm_calls(workflow, file))
    problems.extend(_check_tool_calling(workflow, file))
    problems.extend(_check_shared_conversations(workflow, file))
    problems.extend(_check_agent_conversations(workflow, file))
    problems.extend(_check_thinking(workflow, file))
    problems.extend(_check_agents(workflow, file))
    problems.extend(_compile_routers(workflow, file))
    if not problems:  # children are loaded only once the parent itself is sound
        from .subworkflow import check_subworkflows

        problems.extend(check_subworkflows(workflow, file))
    if problems:
        raise _combine(problems, file)


# -- YAML and models --------------------------------------------------------------------------------------


def _read_yaml(text: str, file: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorkflowError(f"Invalid YAML{where}: {problem}", file=file, hint="fix the YAML syntax.") from None
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
    problems = [*_check_ids(graph, file), *_check_references(graph, file)]
    return problems or _check_cycles(graph, file)


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
                problems.extend(_template_problem(raw[field], file, step_id, field))
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
        if isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            model = _inner_model(annotation, loc)
        elif part in STEP_TYPES:
            model = STEP_TYPES[part]
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


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


def _combine(problems: list[WorkflowError], file: str) -> WorkflowError:
    if len(problems) == 1:
        return problems[0]
    lines = [f"{len(problems)} problems in workflow {file}:"]
    for number, problem in enumerate(problems, 1):
        body = str(problem).replace("\n", "\n     ")
        lines.append(f"  {number}. {body}")
    first = problems[0]
    combined = WorkflowError("\n".join(lines), problems=problems)
    # set after rendering: each problem already names its own file, step and field
    combined.file, combined.step_id, combined.field = file, first.step_id, first.field
    return combined


# -- whole-workflow checks ----------------------------------------------------------------------------------


def _check_ids(workflow: Workflow, file: str) -> list[WorkflowError]:
    seen: set[str] = set()
    problems = []
    for index, step in enumerate(workflow.steps):
        if step.id in seen:
            problems.append(WorkflowError(
                f"Duplicate step id '{step.id}'", file=file, step_id=step.id, field=f"steps[{index}].id",
                hint="give every step its own id.",
            ))
        seen.add(step.id)
    return problems


def _check_references(workflow: Workflow, file: str) -> list[WorkflowError]:
    ids = list(dict.fromkeys(step.id for step in workflow.steps))
    problems = []
    for step in workflow.steps:
        for position, dep in enumerate(step.depends_on):
            if dep not in ids:
                problems.append(WorkflowError(
                    f"Step '{step.id}' depends on unknown step '{dep}'", file=file, step_id=step.id,
                    field=f"depends_on[{position}]", hint=did_you_mean(dep, ids) or f"known steps: {', '.join(ids)}.",
                ))
            elif dep == step.id:
                problems.append(WorkflowError(
                    f"Step '{step.id}' depends on itself", file=file, step_id=step.id, field=f"depends_on[{position}]",
                ))
        if isinstance(step, RouterStep):
            problems.extend(_check_router_targets(step, ids, file))
    return problems


def _check_router_targets(step: RouterStep, ids: list[str], file: str) -> list[WorkflowError]:
    fields = [(f"conditions[{i}].target", c.target) for i, c in enumerate(step.conditions)]
    if step.default is not None:
        fields.append(("default", step.default))
    problems = []
    if not fields:
        problems.append(WorkflowError(
            f"Router '{step.id}' has no conditions and no default", file=file, step_id=step.id,
            field="conditions", hint="add at least one condition or a default target.",
        ))
    for field, target in fields:
        if not isinstance(target, str):
            continue  # a raw condition without a valid target: already a schema problem
        if target not in ids:
            problems.append(WorkflowError(
                f"Router '{step.id}' targets unknown step '{target}'", file=file, step_id=step.id, field=field,
                hint=did_you_mean(target, ids) or f"known steps: {', '.join(ids)}.",
            ))
        elif target == step.id:
            problems.append(WorkflowError(
                f"Router '{step.id}' targets itself", file=file, step_id=step.id, field=field,
            ))
    return problems


def dependency_graph(workflow: Workflow) -> dict[str, list[str]]:
    """Each step's dependencies, with the implicit edge from a router to each of its targets."""
    graph = {step.id: list(dict.fromkeys(step.depends_on)) for step in workflow.steps}
    for step in workflow.steps:
        if isinstance(step, RouterStep):
            for target in step.targets():
                if target in graph and step.id not in graph[target]:
                    graph[target].append(step.id)
    return graph


def _check_cycles(workflow: Workflow, file: str) -> list[WorkflowError]:
    graph = dependency_graph(workflow)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in graph[node]:
            if state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for step in workflow.steps:
        if step.id not in state and (cycle := visit(step.id)):
            shown = " -> ".join(reversed(cycle))
            return [WorkflowError(
                f"Dependency cycle: {shown}", file=file, step_id=cycle[-1], field="depends_on",
                hint="remove one of these dependencies (a router's targets depend on the router implicitly).",
            )]
    return []


def _check_llm_calls(workflow: Workflow, file: str) -> list[WorkflowError]:
    problems = []
    for step in workflow.steps:
        if not isinstance(step, LLMCallStep):
            continue
        if step.prompt is None and step.conversation is None:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' has neither 'prompt' nor 'conversation'", file=file, step_id=step.id,
                field="prompt", hint="add a prompt, e.g. prompt: \"Summarize {state.text}\".",
            ))
        problems.extend(_check_conversation_fields(workflow, step, file))
        for field in ("prompt", "system_prompt"):
            text = getattr(step, field)
            if text is None:
                continue
            try:
                check_template(text)
            except TemplateError as exc:
                problems.append(WorkflowError(
                    str(exc), file=file, step_id=step.id, field=field,
                    hint="write literal braces twice: {{ and }}.",
                ))
    return problems


def _check_conversation_fields(workflow: Workflow, step: LLMCallStep, file: str) -> list[WorkflowError]:
    """003 Conversations: a readable state key, a well-formed starting value, a speaker name of the allowed shape."""
    from .conversation import SPEAKER_PATTERN, conversation_key, read_conversation
    from .paths import get_path, parse_path

    problems = []
    if step.speaker is not None and not SPEAKER_PATTERN.match(step.speaker):
        problems.append(WorkflowError(
            f"llm_call '{step.id}' has speaker {step.speaker!r}, which isn't a valid speaker name", file=file,
            step_id=step.id, field="speaker", hint="use letters, digits, _ and -, up to 64 characters.",
        ))
    if step.speaker is not None and step.conversation is None:
        problems.append(WorkflowError(
            f"llm_call '{step.id}' has a speaker but no conversation", file=file, step_id=step.id, field="speaker",
            hint="add conversation: state.<key>, or remove speaker.",
        ))
    if step.conversation is None:
        return problems
    key = conversation_key(step.conversation)
    try:
        segments = parse_path(key)
    except ValueError as exc:
        return [*problems, WorkflowError(
            f"llm_call '{step.id}': conversation {step.conversation!r} is not a state key ({exc})", file=file,
            step_id=step.id, field="conversation", hint="name a state key, e.g. conversation: state.chat.",
        )]
    if step.output is not None and conversation_key(step.output) == key:
        problems.append(WorkflowError(
            f"llm_call '{step.id}' writes its output to its own conversation, state.{key}", file=file,
            step_id=step.id, field="output", hint="write the reply elsewhere, e.g. output: reply.",
        ))
    try:
        read_conversation(get_path(workflow.state, segments))
    except ValueError as exc:
        problems.append(WorkflowError(
            f"the conversation at state.{key} (used by llm_call '{step.id}') is not valid: {exc}", file=file,
            step_id=step.id, field=f"state.{key}",
            hint="give it messages (role and content each), and optionally token_budget, trim_policy "
                 "(drop_oldest, drop_pairs or summarize_oldest) and summary.",
        ))
    return problems


def _check_agent_conversations(workflow: Workflow, file: str) -> list[WorkflowError]:
    """An agent step in a conversation speaks by the agent's name; its pauses can't carry a conversation yet."""
    from .conversation import SPEAKER_PATTERN, conversation_key
    from .paths import parse_path

    problems = []
    for step in workflow.steps:
        if not isinstance(step, AgentStep) or step.conversation is None or step.agent not in workflow.agents:
            continue
        if not SPEAKER_PATTERN.match(step.agent):
            problems.append(WorkflowError(
                f"agent step '{step.id}' takes a conversation, but agent name {step.agent!r} isn't a valid speaker "
                "name", file=file, step_id=step.id, field="agent",
                hint="name the agent with letters, digits, _ and -, up to 64 characters.",
            ))
        if workflow.agents[step.agent].approval_required:
            problems.append(WorkflowError(
                f"agent step '{step.id}' takes a conversation, but agent '{step.agent}' may pause for approval, "
                "which this version can't do inside a conversation", file=file, step_id=step.id,
                field="conversation", hint="remove approval_required from the agent, or the conversation.",
            ))
        key = conversation_key(step.conversation)
        try:
            parse_path(key)
        except ValueError as exc:
            problems.append(WorkflowError(
                f"agent step '{step.id}': conversation {step.conversation!r} is not a state key ({exc})", file=file,
                step_id=step.id, field="conversation", hint="name a state key, e.g. conversation: state.chat.",
            ))
            continue
        if step.output is not None and conversation_key(step.output) == key:
            problems.append(WorkflowError(
                f"agent step '{step.id}' writes its output to its own conversation, state.{key}", file=file,
                step_id=step.id, field="output", hint="write the answer elsewhere, e.g. output: answer.",
            ))
    return problems


def _check_shared_conversations(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Two steps of one layer on one conversation would each write their own copy: refused (003).

    A step's layer is its depth in the dependency graph, as the runner forms layers. Steps on
    different branches of one router are exempt: only one of them runs.
    """
    from .conversation import conversation_key

    users: dict[str, list[LLMCallStep | AgentStep]] = {}
    for step in workflow.steps:
        if isinstance(step, LLMCallStep | AgentStep) and step.conversation is not None:
            users.setdefault(conversation_key(step.conversation), []).append(step)
    if not any(len(steps) > 1 for steps in users.values()):
        return []
    graph = dependency_graph(workflow)
    depth: dict[str, int] = {}

    def depth_of(step_id: str) -> int:
        if step_id not in depth:
            depth[step_id] = 0  # guards a cycle, which _check_cycles reports
            depth[step_id] = 1 + max((depth_of(dep) for dep in graph.get(step_id, ())), default=-1)
        return depth[step_id]

    problems = []
    for key, steps in users.items():
        for index, first in enumerate(steps):
            for second in steps[index + 1:]:
                if depth_of(first.id) != depth_of(second.id) or _other_branches(workflow, graph, first.id, second.id):
                    continue
                problems.append(WorkflowError(
                    f"steps '{first.id}' and '{second.id}' run in the same layer on the conversation "
                    f"state.{key}: each would write its own copy, and one turn would be lost", file=file,
                    step_id=second.id, field="conversation",
                    hint=f"chain them: add depends_on: [{first.id}] to '{second.id}'.",
                ))
    return problems


def _other_branches(workflow: Workflow, graph: dict[str, list[str]], first: str, second: str) -> bool:
    """Whether one router has two different targets, one leading to each step (only one branch runs)."""
    def ancestors(step_id: str) -> set[str]:
        seen, todo = {step_id}, [step_id]
        while todo:
            for dep in graph.get(todo.pop(), ()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen

    above_first, above_second = ancestors(first), ancestors(second)
    for step in workflow.steps:
        if isinstance(step, RouterStep):
            targets = step.targets()
            if any(a != b and a in above_first and b in above_second and a not in above_second
                   and b not in above_first for a in targets for b in targets):
                return True
    return False


def _check_tool_calling(workflow: Workflow, file: str) -> list[WorkflowError]:
    """003: tools and response_schema can't share a step; a named tool_choice must be a declared tool."""
    problems = []
    for step in workflow.steps:
        if not isinstance(step, LLMCallStep):
            continue
        names = [tool.name for tool in step.tools]
        if step.response_schema is not None and step.tools:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' has both 'tools' and 'response_schema', which can't share a step",
                file=file, step_id=step.id, field="response_schema",
                hint="split it into two steps (one with tools, one with response_schema), or use an agent "
                     "with an output_schema.",
            ))
        elif step.response_schema is not None:
            problems.extend(_check_response_schema(step, file))
        for index, name in enumerate(names):
            if name in names[:index]:
                problems.append(WorkflowError(
                    f"llm_call '{step.id}' declares tool '{name}' twice", file=file, step_id=step.id,
                    field=f"tools[{index}].name", hint="declare each tool once.",
                ))
        choice = step.tool_choice
        if isinstance(choice, NamedToolChoice) and choice.name not in names:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' sets tool_choice to '{choice.name}', which the step does not declare",
                file=file, step_id=step.id, field="tool_choice.name",
                hint=did_you_mean(choice.name, names) or (
                    f"declared tools: {', '.join(names)}." if names else "add the tool under 'tools:'."),
            ))
        elif choice == "required" and not names:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' sets tool_choice: required but declares no tools", file=file,
                step_id=step.id, field="tool_choice", hint="declare the tools under 'tools:' or remove tool_choice.",
            ))
    return problems


def _check_response_schema(step: LLMCallStep, file: str) -> list[WorkflowError]:
    from .structured import find_additional_properties_true

    spec = step.response_schema
    assert spec is not None
    problems = []
    if spec.type == "pydantic" and not spec.model:
        problems.append(WorkflowError(
            f"llm_call '{step.id}': response_schema of type pydantic needs 'model'", file=file, step_id=step.id,
            field="response_schema.model", hint="add model: package.module.Class (or package.module:Class).",
        ))
    if spec.type == "json_schema" and spec.schema_ is None:
        problems.append(WorkflowError(
            f"llm_call '{step.id}': response_schema of type json_schema needs 'schema'", file=file,
            step_id=step.id, field="response_schema.schema", hint="add schema: with the inline JSON Schema.",
        ))
    found = find_additional_properties_true(spec.schema_) if spec.schema_ is not None else None
    if found:
        problems.append(WorkflowError(
            f"llm_call '{step.id}': response_schema has additionalProperties: true, which is refused", file=file,
            step_id=step.id, field=f"response_schema.{found}", hint="remove it, or list the properties.",
        ))
    return problems


def _check_thinking(workflow: Workflow, file: str) -> list[WorkflowError]:
    """003 Reasoning: a Claude step with thinking needs a budget, and any max_tokens must leave room above it."""
    problems = []
    for step in workflow.steps:
        if not isinstance(step, LLMCallStep) or step.thinking is None or not step.thinking.enabled:
            continue
        model = step.model or workflow.config.model or ""
        budget = step.thinking.budget_tokens
        if model.startswith("claude") and budget is None:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' enables thinking on Claude model '{model}' without 'budget_tokens'",
                file=file, step_id=step.id, field="thinking.budget_tokens",
                hint="Anthropic takes a reasoning budget, not a level: add budget_tokens: 4000 (at least 1024).",
            ))
        if budget is not None and step.max_tokens is not None and step.max_tokens <= budget:
            problems.append(WorkflowError(
                f"llm_call '{step.id}' has max_tokens {step.max_tokens}, which isn't above its thinking budget "
                f"({budget}): the reply would have no room left after the reasoning",
                file=file, step_id=step.id, field="max_tokens",
                hint=f"raise max_tokens above {budget} (e.g. {budget + 4096}), or remove it to send budget + 4096.",
            ))
    return problems


def _check_agents(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Agent steps name a defined agent; an agent's approval list is part of its allowlist."""
    problems = []
    for name, agent in workflow.agents.items():
        allowed = agent.tool_names()
        for index, tool in enumerate(agent.approval_required):
            if tool not in allowed:
                problems.append(WorkflowError(
                    f"agent '{name}' requires approval for '{tool}', which is not in its tools", file=file,
                    field=f"agents.{name}.approval_required[{index}]",
                    hint=did_you_mean(tool, allowed) or "add the tool to the agent's 'tools:' list.",
                ))
        for index, tool in enumerate(allowed):
            if tool in allowed[:index]:
                problems.append(WorkflowError(
                    f"agent '{name}' lists tool '{tool}' twice", file=file, field=f"agents.{name}.tools[{index}]",
                    hint="list each tool once.",
                ))
        if agent.require_evidence and not allowed:
            problems.append(WorkflowError(
                f"agent '{name}' sets require_evidence but has no tools, so no answer could ever count",
                file=file, field=f"agents.{name}.require_evidence",
                hint="give the agent tools, or remove require_evidence.",
            ))
        if agent.instructions is not None:
            problems.extend(_template_problem(agent.instructions, file, None, f"agents.{name}.instructions"))
    for step in workflow.steps:
        if not isinstance(step, AgentStep):
            continue
        if step.agent not in workflow.agents:
            known = list(workflow.agents)
            problems.append(WorkflowError(
                f"agent step '{step.id}' runs unknown agent '{step.agent}'", file=file, step_id=step.id,
                field="agent", hint=did_you_mean(step.agent, known) or (
                    f"defined agents: {', '.join(known)}." if known else "define it under top-level 'agents:'."),
            ))
        problems.extend(_template_problem(step.prompt, file, step.id, "prompt"))
    return problems


def _template_problem(text: str, file: str, step_id: str | None, field: str) -> list[WorkflowError]:
    try:
        check_template(text)
    except TemplateError as exc:
        return [WorkflowError(str(exc), file=file, step_id=step_id, field=field,
                              hint="write literal braces twice: {{ and }}.")]
    return []


def _compile_routers(workflow: Workflow, file: str) -> list[WorkflowError]:
    problems = []
    for step in workflow.steps:
        if not isinstance(step, RouterStep):
            continue
        for index, condition in enumerate(step.conditions):
            try:
                workflow._compiled[f"{step.id}/{index}"] = compile_expression(condition.expression)
            except ExpressionSyntaxError as exc:
                problems.append(WorkflowError(
                    f"Router expression not allowed: {exc}", file=file, step_id=step.id,
                    field=f"conditions[{index}].expression",
                    hint="use comparisons, and/or/not, in, literals, state paths and simple string methods.",
                ))
    return problems
