"""The checks a loaded workflow gets beyond its schema: what could never work at run time.

Each check returns a list of problems (:class:`WorkflowError`, naming the file,
the step and the field) instead of raising, so the loader can report them all
together. :func:`compile_routers` also stores each router's compiled
expressions on the workflow (``workflow.compiled.conditions``).
"""

from __future__ import annotations

from typing import Any

from ..._core.state_paths import get_path, parse_path
from ..._core.suggest import did_you_mean
from ...errors import TemplateError, WorkflowError
from ...tools._schema import find_additional_properties_true
from .._evaluate.expressions import ExpressionSyntaxError, compile_expression
from .._evaluate.templates import check_template
from .conversation_state import SPEAKER_PATTERN, conversation_key, read_conversation
from .fallbacks import fallbacks_of, primary_provider
from .graph import dependency_graph, step_depths
from .model import FALLBACK_KINDS, AgentStep, FallbackTarget, LLMCallStep, NamedToolChoice, RouterStep, Workflow

__all__ = [
    "check_agent_conversations",
    "check_agents",
    "check_call_shapes",
    "check_fallback_shapes",
    "check_fallbacks",
    "check_llm_calls",
    "check_shared_conversations",
    "check_thinking",
    "check_tool_calling",
    "compile_routers",
    "other_branches",
    "template_problem",
]


def check_llm_calls(workflow: Workflow, file: str) -> list[WorkflowError]:
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
    """Conversations: a readable state key, a well-formed starting value, a speaker name of the allowed shape."""

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


def check_agent_conversations(workflow: Workflow, file: str) -> list[WorkflowError]:
    """An agent step in a conversation speaks by the agent's name; its pauses can't carry a conversation yet."""

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


def check_shared_conversations(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Two steps of one layer on one conversation would each write their own copy: refused.

    A step's layer is its depth in the dependency graph, as the runner forms layers. Steps on
    different branches of one router are exempt: only one of them runs.
    """

    users: dict[str, list[LLMCallStep | AgentStep]] = {}
    for step in workflow.steps:
        if isinstance(step, LLMCallStep | AgentStep) and step.conversation is not None:
            users.setdefault(conversation_key(step.conversation), []).append(step)
    if not any(len(steps) > 1 for steps in users.values()):
        return []
    graph = dependency_graph(workflow)
    depth = step_depths(graph)
    problems = []
    for key, steps in users.items():
        for index, second in enumerate(steps):
            for first in steps[:index]:  # one problem per step: its first clash (not one per pair)
                if depth[first.id] != depth[second.id] or other_branches(workflow, graph, first.id, second.id):
                    continue
                problems.append(WorkflowError(
                    f"steps '{first.id}' and '{second.id}' run in the same layer on the conversation "
                    f"state.{key}: each would write its own copy, and one turn would be lost", file=file,
                    step_id=second.id, field="conversation",
                    hint=f"chain them: add depends_on: [{first.id}] to '{second.id}'.",
                ))
                break
    return problems


def other_branches(workflow: Workflow, graph: dict[str, list[str]], first: str, second: str) -> bool:
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


def check_tool_calling(workflow: Workflow, file: str) -> list[WorkflowError]:
    """A ``response_schema`` is well formed (with or without tools); a named tool_choice must be a declared tool."""
    problems = []
    for step in workflow.steps:
        if not isinstance(step, LLMCallStep):
            continue
        names = [tool.name for tool in step.tools]
        if step.response_schema is not None:  # with tools too: the loop's final reply must fit it
            problems.extend(_check_response_schema(step, file))
        if step.prefill is not None and (step.tools or step.response_schema is not None):
            problems.append(WorkflowError(
                f"llm_call '{step.id}' sets prefill beside {'tools' if step.tools else 'response_schema'}, "
                "which can't share a step",
                file=file, step_id=step.id, field="prefill",
                hint="a prefill is the start of a plain reply: a tool loop would repeat it on every turn, and a "
                     "structured reply brings its own (Claude) or a native format that takes none.",
            ))
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


#: each provider's documented thinking budgets (docs/providers.md: Reasoning): model prefix -> (least, most)
THINKING_BUDGETS: tuple[tuple[str, str, int, int | None], ...] = (
    ("anthropic", "", 1024, None),  # at least 1024, and below max_tokens (checked apart)
    ("google", "gemini-2.5-pro", 128, 32768),
    ("google", "gemini-2.5-flash-lite", 512, 24576),
    ("google", "gemini-2.5-flash", 1, 24576),
)


def _thinking_provider(provider: str | None, model: str) -> str | None:
    """Where a call of ``model`` goes, as far as the file says: ``config.provider``, else the model's name."""
    if provider:
        return {"gemini": "google"}.get(provider, provider)
    if model.startswith("claude"):
        return "anthropic"
    return "google" if model.startswith("gemini") else None


def check_thinking(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Reasoning, on llm_call steps and agents: each setting fits the provider the call goes to (a Claude
    call needs a budget of at least 1024 or ``type: adaptive``; Gemini's budgets have a documented range),
    and any max_tokens leaves room above the budget."""
    problems = []
    places: list[tuple[str, str | None, str, Any, int | None, str]] = []  # kind, step id, field, thinking, ...
    for step in workflow.steps:
        if isinstance(step, LLMCallStep) and step.thinking is not None:
            places.append(("llm_call", step.id, "thinking", step.thinking, step.max_tokens,
                           step.model or workflow.config.model or ""))
        elif isinstance(step, AgentStep) and step.thinking is not None and step.agent in workflow.agents:
            agent = workflow.agents[step.agent]
            places.append(("agent step", step.id, "thinking", step.thinking, agent.max_tokens,
                           agent.model or workflow.config.model or ""))
    for name, agent in workflow.agents.items():
        if agent.thinking is not None:
            places.append(("agent", None, f"agents.{name}.thinking", agent.thinking, agent.max_tokens,
                           agent.model or workflow.config.model or ""))
    for kind, step_id, field, thinking, max_tokens, model in places:
        if thinking.enabled:
            problems.extend(_thinking_problems(kind, step_id, field, thinking, max_tokens, model,
                                               _thinking_provider(workflow.config.provider, model), file))
    return problems


def _thinking_problems(kind: str, step_id: str | None, field: str, thinking: Any, max_tokens: int | None, model: str,
                       provider: str | None, file: str, *, via: str = "") -> list[WorkflowError]:
    where = (f"agent '{field.split('.')[1]}'" if step_id is None else f"{kind} '{step_id}'") + via
    budget = thinking.budget_tokens
    problems = []
    if provider == "anthropic" and thinking.type == "adaptive" and budget is not None:
        problems.append(WorkflowError(
            f"{where} sets thinking type: adaptive and budget_tokens; adaptive thinking takes no budget",
            file=file, step_id=step_id, field=f"{field}.budget_tokens",
            hint="remove budget_tokens (set effort: low/medium/high/max to steer it), or use type: enabled.",
        ))
    elif provider == "anthropic" and budget is None and thinking.type != "adaptive":
        problems.append(WorkflowError(
            f"{where} enables thinking on Claude model '{model}' without 'budget_tokens'",
            file=file, step_id=step_id, field=f"{field}.budget_tokens",
            hint="Anthropic takes a reasoning budget, not a level: add budget_tokens: 4000 (at least 1024), "
                 "or type: adaptive on models that have it.",
        ))
    if budget is not None and provider is not None:
        for name, prefix, least, most in THINKING_BUDGETS:
            if name == provider and model.startswith(prefix):
                if budget < least or (most is not None and budget > most):
                    span = f"at least {least}" if most is None else f"from {least} to {most}"
                    problems.append(WorkflowError(
                        f"{where} sets a thinking budget of {budget} tokens, outside what {provider} takes for "
                        f"'{model}' ({span})",
                        file=file, step_id=step_id, field=f"{field}.budget_tokens",
                        hint=f"set budget_tokens {span} (docs/providers.md: Reasoning).",
                    ))
                break
    if budget is not None and max_tokens is not None and max_tokens <= budget:
        problems.append(WorkflowError(
            f"{where} has max_tokens {max_tokens}, which isn't above its thinking budget "
            f"({budget}): the reply would have no room left after the reasoning",
            file=file, step_id=step_id, field="max_tokens" if field == "thinking" else f"{field[:-9]}.max_tokens",
            hint=f"raise max_tokens above {budget} (e.g. {budget + 4096}), or remove it to send budget + 4096.",
        ))
    return problems


#: the llm_call fields a provider has no wire form for (docs/providers.md: Call shapes); the adapters refuse
#: them too, before sending, for a call whose provider the file does not say
_NO_WIRE_FORM: dict[str, tuple[str, ...]] = {
    "responses": ("stop", "prefill"), "openai": ("prefill",), "generic_openai": ("prefill",),
    "google": ("prefill", "service_tier", "strict_tools"), "ollama": ("service_tier", "strict_tools"),
}


def check_call_shapes(workflow: Workflow, file: str) -> list[WorkflowError]:
    """An llm_call field the step's provider has no wire form for, when the file says the provider."""
    problems = []
    for step in workflow.steps:
        if isinstance(step, LLMCallStep):
            wire = _wire_of(workflow, step.model or workflow.config.model or "")
            hint = ("remove it, or send the step to a provider that has it (docs/providers.md: Call shapes)"
                    + (", e.g. config.providers.openai.api: chat_completions." if wire == "responses" else "."))
            problems.extend(_unsent_fields(step, wire, file, hint=hint))
    return problems


def _wire_of(workflow: Workflow, model: str) -> str | None:
    """The provider (``responses`` for OpenAI's Responses API) a call goes to, as far as the file says."""
    provider = _thinking_provider(workflow.config.provider, model)
    if provider is None and model.startswith(("gpt-", "chatgpt-", "o1", "o3", "o4")):
        provider = "openai"
    return _api_of(workflow, provider)


def _api_of(workflow: Workflow, provider: str | None) -> str | None:
    """``provider``, or ``responses`` when it is OpenAI's (or a compatible server's) set to the Responses API."""
    if provider in ("openai", "generic_openai"):
        settings = next((value for name, value in workflow.config.providers.items() if name == provider), None)
        if settings is not None and settings.api == "responses":
            return "responses"
    return provider


def check_fallback_shapes(workflow: Workflow, file: str) -> list[WorkflowError]:
    """What the primary provider's checks refuse, refused for each fallback too: an llm_call field the
    fallback's provider has no wire form for, and thinking settings that don't fit its provider and model
    (a fallback gets the step's request with only the provider and the model changed)."""
    from ...providers._gateway import PROVIDER_ALIASES

    problems = []
    for step in workflow.steps:
        if not isinstance(step, LLMCallStep | AgentStep) or (settings := _reasoning_of(workflow, step)) is None:
            continue
        thinking, max_tokens, model = settings
        targets = fallbacks_of(step, workflow.config, model)
        primary = primary_provider(workflow.config, model)
        field = "fallback" if step.fallback is not None else f"config.fallbacks.{primary}"
        for index, target in enumerate(targets):
            provider = PROVIDER_ALIASES.get(target.provider, target.provider)
            via = f" (its {field}[{index}]: provider '{target.provider}', model '{target.model}')"
            if isinstance(step, LLMCallStep):
                problems.extend(_unsent_fields(step, _api_of(workflow, provider), file, via=via, hint=(
                    "remove it, drop that fallback, or fall back to a provider that has it "
                    "(docs/providers.md: Call shapes).")))
            if thinking is not None and thinking.enabled:
                kind = "llm_call" if isinstance(step, LLMCallStep) else "agent step"
                problems.extend(_thinking_problems(kind, step.id, "thinking", thinking, max_tokens, target.model,
                                                   provider, file, via=via))
    return problems


def _reasoning_of(workflow: Workflow, step: LLMCallStep | AgentStep) -> tuple[Any, int | None, str] | None:
    """A model-calling step's thinking, max_tokens and model (an agent's come from its definition where the
    step leaves them unset); ``None`` for an agent step whose agent is not defined (reported elsewhere)."""
    if isinstance(step, LLMCallStep):
        return step.thinking, step.max_tokens, step.model or workflow.config.model or ""
    if step.agent in workflow.agents:
        agent = workflow.agents[step.agent]
        return step.thinking or agent.thinking, agent.max_tokens, agent.model or workflow.config.model or ""
    return None


def _unsent_fields(step: LLMCallStep, wire: str | None, file: str, *, hint: str, via: str = "") -> list[WorkflowError]:
    """The step's fields that ``wire`` has no field for (``via`` says which fallback, if one, goes there)."""
    problems = []
    for name in _NO_WIRE_FORM.get(wire or "", ()):
        if getattr(step, name) not in (None, False) or (name == "strict_tools" and any(
                tool.strict for tool in step.tools)):
            where = "OpenAI's Responses API" if wire == "responses" else f"provider '{wire}'"
            problems.append(WorkflowError(
                f"llm_call '{step.id}'{via} sets {name}, which {where} has no field for", file=file,
                step_id=step.id, field=name, hint=hint,
            ))
    return problems


def check_fallbacks(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Each fallback names a provider the gateway has and failure kinds a fallback can take
    (docs/workflow-format.md: Fallback); ``config.fallbacks`` is keyed by provider names too."""
    from ...providers._factory import PROVIDERS
    from ...providers._gateway import PROVIDER_ALIASES

    known = (*PROVIDERS, *PROVIDER_ALIASES)
    problems = []
    places: list[tuple[str | None, str, list[FallbackTarget]]] = []
    for name, targets in workflow.config.fallbacks.items():
        if name not in known:
            problems.append(WorkflowError(
                f"config.fallbacks names provider '{name}', which is not a provider", file=file,
                field=f"config.fallbacks.{name}",
                hint=_suggestion(name, PROVIDERS, "key config.fallbacks by the provider whose calls fall back")))
        places.append((None, f"config.fallbacks.{name}", list(targets)))
    for step in workflow.steps:
        if isinstance(step, LLMCallStep | AgentStep) and step.fallback:
            places.append((step.id, "fallback", list(step.fallback)))
    for step_id, field, targets in places:
        for index, target in enumerate(targets):
            where = f"{field}[{index}]"
            if target.provider not in known:
                problems.append(WorkflowError(
                    f"{where} names provider '{target.provider}', which is not a provider", file=file,
                    step_id=step_id, field=f"{where}.provider",
                    hint=_suggestion(target.provider, PROVIDERS, "name one of the providers")))
            for kind in target.on:
                if kind not in FALLBACK_KINDS:
                    problems.append(WorkflowError(
                        f"{where}.on lists '{kind}', which is no kind of failure a call falls back on", file=file,
                        step_id=step_id, field=f"{where}.on",
                        hint=_suggestion(kind, FALLBACK_KINDS, "list kinds of failure")))
    return problems


def _suggestion(word: str, choices: Any, what: str) -> str:
    close = did_you_mean(word, choices)
    return f"{close + ' ' if close else ''}{what}: {', '.join(sorted(choices))}."


def check_agents(workflow: Workflow, file: str) -> list[WorkflowError]:
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
            problems.extend(template_problem(agent.instructions, file, None, f"agents.{name}.instructions"))
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
        problems.extend(template_problem(step.prompt, file, step.id, "prompt"))
    return problems


def template_problem(text: str, file: str, step_id: str | None, field: str) -> list[WorkflowError]:
    try:
        check_template(text)
    except TemplateError as exc:
        return [WorkflowError(str(exc), file=file, step_id=step_id, field=field,
                              hint="write literal braces twice: {{ and }}.")]
    return []


def compile_routers(workflow: Workflow, file: str) -> list[WorkflowError]:
    """Compile every router's conditions into ``workflow.compiled.conditions``; a refused expression is a problem."""
    problems = []
    for step in workflow.steps:
        if not isinstance(step, RouterStep):
            continue
        compiled = []
        for index, condition in enumerate(step.conditions):
            try:
                compiled.append(compile_expression(condition.expression))
            except ExpressionSyntaxError as exc:
                problems.append(WorkflowError(
                    f"Router expression not allowed: {exc}", file=file, step_id=step.id,
                    field=f"conditions[{index}].expression",
                    hint="use comparisons, and/or/not, in, literals, state paths and simple string methods.",
                ))
        if len(compiled) == len(step.conditions):
            workflow.compiled.conditions[step.id] = tuple(compiled)
    return problems
