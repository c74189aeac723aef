"""Scripts a hypothesis search writes for a workflow: :func:`scripts` and the :class:`FuzzScript` it draws.

The replies are plain data (the forms of ``Scripted.from_data``) and each choice lists its simplest
option first, so hypothesis shrinks a failing script to a few readable lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from .._core.arguments import bad_argument
from .._core.clock import VirtualClock
from .._core.types import LLMRequest
from ..engine import WorkflowResult, load_workflow, run_workflow
from ..engine._format.model import AgentStep, EmbedStep, LLMCallStep, RouterStep, Workflow
from ..errors import ScriptError
from ..providers import Scripted
from ..providers._replies import Reply, is_answer
from ..providers._script_data import reply_from_data
from ..tools import BUILTIN_TOOL_NAMES, Sandbox, ToolRegistry, run_tools
from ._embed_plan import EmbedPlan
from ._escapes import escape_attempts
from ._steps import all_steps

__all__ = ["FuzzScript", "scripts"]

REFUSAL = {"text": "", "refusal": "I can't help with that."}


@dataclass(frozen=True)
class FuzzScript:
    """One generated script: per step, ``replies`` in order, then ``then`` for every request after them.

    A step missing from ``then`` gets its right-kind answer (``right``) once its replies are used up (the
    printed script leaves out a ``then`` that is the right answer); a step
    that asks the model more than ``max_calls`` times fails with ``script_exhausted``, which
    :func:`assert_invariants` reports: no loop cap stopped it.
    """

    replies: Mapping[str, tuple[Any, ...]]
    then: Mapping[str, Any]
    right: Mapping[str, Any] = field(repr=False)
    workflow: Workflow = field(repr=False)
    max_calls: int = field(default=25, repr=False)

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example: only the steps that misbehave
        replies = {step: list(items) for step, items in self.replies.items() if items}
        then = {step: item for step, item in self.then.items() if item != self.right.get(step)}
        return f"FuzzScript(replies={replies!r}, then={then!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis prints examples with this
        printer.text(repr(self))

    def provider(self) -> Scripted:
        """A fresh scripted provider answering this script (each run needs its own: it counts requests)."""
        return Scripted({step: self._answers(step) for step in self.right}, allow_unused=True)

    def run(self, *, tools: Any = None, state: Mapping[str, Any] | None = None, **options: Any) -> WorkflowResult:
        """Run the workflow on this script with a virtual clock and no run record (``options`` as run_workflow's)."""
        options.setdefault("clock", VirtualClock())
        options.setdefault("runs_dir", False)
        return run_workflow(self.workflow, provider=self.provider(), tools=tools, state=dict(state or {}), **options)

    def _answers(self, step: str) -> Callable[[LLMRequest], Any]:
        listed = [_reply(item, f"{step}[{index}]") for index, item in enumerate(self.replies.get(step, ()))]
        after = _reply(self.then.get(step, self.right[step]), f"then.{step}")
        count = [0]

        def answer(request: LLMRequest) -> Any:
            count[0] += 1
            if count[0] > self.max_calls:
                raise ScriptError(f"fuzz script: step '{step}' asked the model more than {self.max_calls} times "
                                  "(max_calls): no cap of the workflow stopped it")
            made = listed[count[0] - 1] if count[0] <= len(listed) else after
            return made if is_answer(made) or not callable(made) else made(request)
        return answer


def _reply(item: Any, where: str) -> Reply:
    """A reply from its data form; a right answer made from the request (an embed step's) is one already."""
    return item if callable(item) else reply_from_data(item, where=where)


def scripts(workflow: Workflow | str | Path, *, tools: Any = None, max_replies: int = 4,
            max_calls: int = 25) -> st.SearchStrategy[FuzzScript]:
    """Scripts for every ``llm_call``, ``agent`` and ``embed`` step of ``workflow`` (a loaded workflow or its
    file), those of its subworkflows included (as ``<parent step>/<child step>``).

    ``tools`` (as ``run_workflow`` takes them) give the tools' parameter schemas, for valid and invalid
    arguments; a step offering a built-in tool also gets escape attempts its sandbox must refuse. Each step
    gets up to ``max_replies`` replies, then a final reply repeated; a step that asks more than ``max_calls``
    times is cut off (and reported by :func:`assert_invariants`).
    """
    loaded = workflow if isinstance(workflow, Workflow) else load_workflow(workflow)
    if isinstance(max_replies, bool) or not isinstance(max_replies, int) or max_replies < 0:
        raise bad_argument("scripts()", "max_replies", max_replies, "a number of replies, 0 or more")
    if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1:
        raise bad_argument("scripts()", "max_calls", max_calls, "a number of model calls per step, at least 1")
    registry = run_tools(loaded.config.sandbox, loaded.base_dir, tools)  # the built-ins' schemas, then yours
    sandbox = Sandbox(loaded.config.sandbox, base_dir=loaded.base_dir)  # subworkflows run with these tools too
    answered = list(all_steps(loaded))
    words = _router_words(owner for _, owner, _ in answered)
    plans: dict[str, _StepPlan | EmbedPlan] = {
        step_id: EmbedPlan(step) if isinstance(step, EmbedStep) else _StepPlan(owner, step, registry, words, sandbox)
        for step_id, owner, step in answered if isinstance(step, (EmbedStep, LLMCallStep, AgentStep))}
    if not plans:
        raise bad_argument("scripts()", "workflow", loaded.name,
                           "a workflow with an llm_call, agent or embed step",
                           hint="there is no model step to script.")
    replies = st.fixed_dictionaries({step: st.lists(plan.reply(), max_size=max_replies).map(tuple)
                                     for step, plan in plans.items()})
    then = st.fixed_dictionaries({step: plan.tail() for step, plan in plans.items()})
    right = {step: plan.right for step, plan in plans.items()}
    return st.tuples(replies, then).map(lambda drawn: FuzzScript(drawn[0], drawn[1], right, loaded, max_calls))


def _router_words(workflows: Iterable[Workflow]) -> list[str]:
    """The quoted words router conditions compare with: the answers that steer the run."""
    found: dict[str, None] = {}
    for workflow in workflows:
        for step in workflow.steps:
            if isinstance(step, RouterStep):
                for condition in step.conditions:
                    for quoted in re.findall(r"'([^']*)'|\"([^\"]*)\"", condition.expression):
                        found.setdefault(quoted[0] or quoted[1])
    return list(found)


class _StepPlan:
    """What one model step can be answered with: its right final answer, its tools, its schema."""

    def __init__(self, workflow: Workflow, step: LLMCallStep | AgentStep, registry: ToolRegistry,
                 words: list[str], sandbox: Sandbox) -> None:
        self.schema: dict[str, Any] | None = None
        self.tools: dict[str, dict[str, Any]] = {}
        if isinstance(step, AgentStep):
            agent = workflow.agents.get(step.agent)
            names = agent.tool_names() if agent is not None else []
            self.schema = agent.output_schema if agent is not None else None
            self.tools = {name: _parameters(registry, name, None) for name in names}
        else:
            shape = step.response_schema
            if shape is not None:
                self.schema = shape.schema_ if shape.type == "json_schema" and shape.schema_ else {"type": "object"}
            self.tools = {declared.name: _parameters(registry, declared.name, declared.parameters)
                          for declared in step.tools}
        self.words = words or ["ok"]
        #: per built-in tool the step offers (by name: a tool of yours under that name is judged as it), the
        #: arguments its sandbox must refuse
        self.escapes = {name: escape_attempts(name, sandbox) for name in sorted(self.tools)
                        if name in BUILTIN_TOOL_NAMES}
        self.right: Any = json.dumps(_example(self.schema), sort_keys=True) if self.schema else self.words[0]

    def answer(self) -> st.SearchStrategy[Any]:
        """A final answer: right first (the steering words, JSON that fits), then wrong kinds."""
        if self.schema is not None:
            right = st.just(json.dumps(_example(self.schema), sort_keys=True))
            fitting = _values(self.schema).map(lambda value: json.dumps(value, sort_keys=True))
            wrong = st.sampled_from(["{}", "[]", '{"', "not json", "null"])
            return st.one_of(right, fitting, wrong)
        return st.one_of(st.sampled_from(self.words), st.just(""), st.text(max_size=8))

    def reply(self) -> st.SearchStrategy[Any]:
        """One reply: an answer, a tool call (valid or not), a provider error, a refusal, an empty or cut reply."""
        kinds = [self.answer()]
        if self.tools:
            kinds.append(self.tool_call())
        kinds += [
            st.builds(lambda status: {"error": status}, st.sampled_from([429, 500, None, 400])),
            st.just(REFUSAL),
            self.answer().map(lambda text: {"text": text[: len(text) // 2], "finish_reason": "length"}),
        ]
        return st.one_of(*kinds)

    def tool_call(self) -> st.SearchStrategy[Any]:
        """A call of one of the step's tools: an escape attempt (for a built-in tool; first, so a sandbox bug
        shrinks to one), fitting arguments, unfitting ones, bad JSON, or a call of an unknown tool."""
        name = st.sampled_from(sorted(self.tools))
        valid = name.flatmap(lambda tool: _values(self.tools[tool]).map(
            lambda args: {"tool_call": tool, "arguments": args if isinstance(args, dict) else {}}))
        invalid = name.flatmap(lambda tool: _wrong_arguments(self.tools[tool]).map(
            lambda args: {"tool_call": tool, "arguments": args}))
        kinds = [valid, invalid, name.map(lambda tool: {"misbehave": "invalid_call", "tool": tool}),
                 st.just({"misbehave": "calls_unknown_tool"})]
        escapes = [{"tool_call": tool, "arguments": args} for tool, attempts in self.escapes.items()
                   for args in attempts]
        return st.one_of(st.sampled_from(escapes), *kinds) if escapes else st.one_of(*kinds)

    def tail(self) -> st.SearchStrategy[Any]:
        """What the step gets every time after its replies: its right answer (the simplest), another answer, a
        storm of calls that never ends, the same call again and again, or errors and refusals forever."""
        kinds = [st.just(self.right), self.answer()]
        if self.tools:
            stormy = sorted(tool for tool in self.tools if _number_keys(self.tools[tool])) or sorted(self.tools)
            kinds += [st.sampled_from(stormy).map(self._storm),
                      st.sampled_from(sorted(self.tools)).map(
                          lambda tool: {"misbehave": "repeats", "tool": tool, "arguments": _example(self.tools[tool])}),
                      st.just({"misbehave": "calls_unknown_tool"})]
        kinds += [st.builds(lambda status: {"error": status}, st.sampled_from([429, 500, None])), st.just(REFUSAL)]
        return st.one_of(*kinds)

    def _storm(self, tool: str) -> dict[str, Any]:
        """A model that calls ``tool`` forever with fitting arguments, each time with another number (a storm no
        repeat check stops: only the loop's own caps do)."""
        schema = self.tools[tool]
        numbers = _number_keys(schema)
        storm: dict[str, Any] = {"misbehave": "never_finishes", "tool": tool, "arguments": _example(schema)}
        if numbers:
            storm["vary"] = numbers[0]
            storm["arguments"] = {k: v for k, v in storm["arguments"].items() if k != numbers[0]}
        return storm


def _number_keys(schema: Mapping[str, Any]) -> list[str]:
    """The integer parameters of a tool: a storm varies one, so that no repeat check stops it."""
    return sorted(key for key, value in (schema.get("properties") or {}).items()
                  if isinstance(value, Mapping) and value.get("type") == "integer")


def _parameters(registry: ToolRegistry, name: str, declared: dict[str, Any] | None) -> dict[str, Any]:
    if declared is not None:
        return declared
    if name in registry:
        return dict(registry[name].spec().parameters or {})
    return {"type": "object", "properties": {}}


_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.sampled_from(["", "a", "T-1"]) | st.text(max_size=6),
    "integer": st.integers(-2, 50), "number": st.floats(-2, 50, allow_nan=False), "boolean": st.booleans(),
    "null": st.none(),
}


def _values(schema: Mapping[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that fit ``schema`` (the common JSON Schema keywords: type, enum, const, properties, items)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        return st.one_of(*(_values({**schema, "type": one}, depth) for one in kind))
    if kind == "object":
        properties = schema.get("properties") or {}
        required = [key for key in schema.get("required", []) if key in properties]
        return st.fixed_dictionaries(
            {key: _values(properties[key], depth + 1) for key in required},
            optional={key: _values(value, depth + 1) for key, value in properties.items() if key not in required})
    if kind == "array":
        return st.lists(_values(schema.get("items") or {"type": "string"}, depth + 1), max_size=2 if depth < 2 else 0)
    return _SCALARS.get(kind, st.none())


def _wrong_arguments(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments that do not fit: a required key left out, a value of the wrong type, or a key it has not."""
    properties = schema.get("properties") or {}
    required = [key for key in schema.get("required", []) if key in properties]
    example = _example(schema) if isinstance(_example(schema), dict) else {}
    kinds: list[st.SearchStrategy[dict[str, Any]]] = [st.just({**example, "unexpected": 1})]
    if required:
        kinds.insert(0, st.sampled_from(required).map(lambda key: {k: v for k, v in example.items() if k != key}))
    if properties:
        kinds.append(st.sampled_from(sorted(properties)).map(lambda key: {**example, key: [[None]]}))
    return st.one_of(*kinds)


def _example(schema: Mapping[str, Any] | None) -> Any:
    """The simplest value that fits ``schema``: what a right answer is before hypothesis varies it."""
    schema = schema or {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: _example(properties[key]) for key in schema.get("required", []) if key in properties}
    return {"array": [], "string": "a", "integer": 0, "number": 0, "boolean": False}.get(str(kind))
