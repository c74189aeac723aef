"""What ``agentloom validate`` reports beyond loading: files that load but would certainly fail or
silently misbehave when run.

- **errors** (``validate`` exits 3): a model step with no model anywhere. Every call of it would
  fail with ``no_model``; this engine never falls back to a default model (upstream ``agentloom``
  silently uses ``gpt-4o-mini``). A model given at run time (``--model``) counts.
- **warnings** (printed; ``validate`` still exits 0): a template or ``tool_args`` path whose first
  key is neither in ``state:`` nor written by any step's ``output`` (it would render empty, or fail
  with ``missing_state_key``); a deeper path into a key only ``state:`` gives (no step writes it) that
  the value there lacks (``{state.email.sendr}`` when ``state:`` has ``email: {sender: ...}``), with
  the closest path; a router without ``default`` (when no condition holds, the step fails with
  ``router_no_match``); and two steps that may run side by side writing one ``output``
  (:mod:`.output_clashes`; a load error under ``config.strict_outputs``); and an approval gate whose
  decision no router reads (a rejected run would go on as an approved one: :mod:`.gates`). Each finding
  names the file and line it is about.

Child workflows are checked too, their findings named ``<step>/<child step>``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._core.state_paths import MISSING, format_path, get_path, parse_path
from ..._core.suggest import closest_path, did_you_mean
from ..._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ..._core.yaml_lines import line_of
from ...errors import render_message
from .._evaluate.templates import template_fields
from .gates import unread_gates
from .model import AgentStep, EmbedStep, LLMCallStep, RouterStep, SubworkflowStep, ToolStep, Workflow
from .output_clashes import parallel_outputs

__all__ = ["Finding", "findings"]

_BOOKKEEPING = frozenset({"steps", "_approval"})  # keys every run has, never the key a typo meant
_FIRST_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Finding:
    """One thing ``validate`` reports: ``severity`` is ``error`` or ``warning``; ``line`` where it is written."""

    severity: str
    step_id: str
    field: str
    message: str
    hint: str
    line: int | None = None
    #: the text the finding is about (a placeholder), to find its line within the field
    needle: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return render_message(f"{self.severity}: step '{self.step_id}', field '{self.field}': {self.message}.",
                              hint=f"{self.hint}", inline=True)

    def at(self, text: str | None) -> Finding:
        """This finding with the line of its step and field in ``text`` (the workflow file's)."""
        if text is None or "/" in self.step_id:  # a child's step: its own file's lines are not these
            return self
        return dataclasses.replace(self, line=line_of(text, self.step_id, self.field, self.needle))


def findings(workflow: Workflow, *, model: str | None = None, inherited: frozenset[str] = frozenset(),
             prefix: str = "") -> list[Finding]:
    """Every finding for ``workflow``; ``model`` is a run-time ``--model``; ``inherited`` keys a parent passes."""
    found = [*_no_model(workflow, model, prefix), *_unknown_keys(workflow, inherited, prefix),
             *_routers_without_default(workflow, prefix), *_parallel_outputs(workflow, prefix),
             *(Finding("warning", prefix + gate.step_id, "output", gate.message, gate.hint)
               for gate in unread_gates(workflow))]
    for step in workflow.steps:
        child = workflow.compiled.children.get(step.id)
        if isinstance(step, SubworkflowStep) and child is not None:
            passed = set(step.input) | (_known_keys(workflow) | inherited if step.inherits_state else set())
            # --model replaces the parent's config.model only: a child keeps its own config
            found += findings(child, inherited=frozenset(passed), prefix=f"{prefix}{step.id}/")
    if not prefix and workflow.source is not None:
        text = _text_of(workflow.source)
        found = [finding.at(text) for finding in found]
    return found


def _text_of(source: Path) -> str | None:
    """The workflow file's text, to name lines (``None`` when it cannot be read again)."""
    try:
        return read_text_capped(source, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file")
    except (OSError, ValueError, RuntimeError):
        return None


def _no_model(workflow: Workflow, model: str | None, prefix: str) -> list[Finding]:
    found = []
    default = model or workflow.config.model
    for step in workflow.steps:
        if isinstance(step, LLMCallStep) and not (step.model or default):
            where, fix = "model", "set 'model' on the step or 'config.model' (upstream agentloom used gpt-4o-mini)"
        elif isinstance(step, AgentStep) and step.agent in workflow.agents \
                and not (workflow.agents[step.agent].model or default):
            where, fix = "agent", f"set 'model' on agent '{step.agent}' or 'config.model'"
        elif isinstance(step, EmbedStep) and not (step.model or workflow.config.embedding_model):
            where, fix = "model", "set 'model' on the step or 'config.embedding_model'"
        else:
            continue
        found.append(Finding("error", prefix + step.id, where,
                             "no model is named, so every call would fail with no_model", fix))
    return found


def _known_keys(workflow: Workflow) -> set[str]:
    return set(workflow.state) | _written_keys(workflow)


def _written_keys(workflow: Workflow) -> set[str]:
    """The top-level keys a run writes: each step's ``output``, a shared conversation's, ``steps``, ``_approval``."""
    keys = {"steps", "_approval"}
    for step in workflow.steps:
        if step.output:
            match = _FIRST_KEY.match(step.output)
            if match:
                keys.add(match.group())
        if isinstance(step, LLMCallStep | AgentStep) and step.conversation:
            match = _FIRST_KEY.match(step.conversation.removeprefix("state."))
            if match:
                keys.add(match.group())
    return keys


def _unknown_keys(workflow: Workflow, inherited: frozenset[str], prefix: str) -> list[Finding]:
    known = _known_keys(workflow) | inherited
    only_given = set(workflow.state) - _written_keys(workflow) - inherited
    found = []
    for step in workflow.steps:
        for field, key, name in _reads(step):
            if key not in known:
                closest = _closest(name, workflow.state)
                hint = f"did you mean '{closest}'?" if closest else did_you_mean(key, sorted(known - _BOOKKEEPING))
                found.append(Finding(
                    "warning", prefix + step.id, field,
                    f"it reads state key '{key}', which is neither in 'state:' nor any step's 'output'",
                    f"{hint + ' ' if hint else ''}add '{key}' to 'state:', pass it with --state, or correct the name",
                    needle=name,
                ))
            elif key in only_given and (deep := _missing_below(name, workflow.state)) is not None:
                path, closest = deep
                found.append(Finding(
                    "warning", prefix + step.id, field,
                    f"it reads '{path}', which the '{key}' that 'state:' gives does not hold (and no step "
                    f"writes '{key}')",
                    (f"did you mean '{closest}'? " if closest else "") + "add it to 'state:' or correct the path",
                    needle=name,
                ))
    return found


def _closest(name: str, state: Mapping[str, Any]) -> str | None:
    try:
        return closest_path(parse_path(name.removeprefix("state.")), state)
    except ValueError:
        return None


def _missing_below(name: str, state: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """``(path, closest path)`` when the path ``name`` reads goes past what ``state`` holds, else ``None``."""
    text = name.removeprefix("state.") if name.startswith("state.") else name
    try:
        segments = parse_path(text)
    except ValueError:
        return None
    if len(segments) < 2 or get_path(state, segments) is not MISSING:
        return None
    for depth in range(1, len(segments)):  # only a mapping or list that lacks the next part is a finding
        above = get_path(state, segments[:depth])
        if not isinstance(above, Mapping | list):
            return None
        if get_path(above, segments[depth:depth + 1]) is MISSING:
            break
    return format_path(segments), closest_path(segments, state)


def _reads(step: Any) -> list[tuple[str, str, str]]:
    """``(field, first state key, path)`` for each state path the step's templates and tool arguments read."""
    texts: list[tuple[str, str]] = []
    if isinstance(step, LLMCallStep):
        texts += [(name, text) for name in ("prompt", "system_prompt") if (text := getattr(step, name))]
    if isinstance(step, AgentStep):
        texts.append(("prompt", step.prompt))
    if isinstance(step, ToolStep | SubworkflowStep):
        arguments = step.tool_args if isinstance(step, ToolStep) else step.input
        label = "tool_args" if isinstance(step, ToolStep) else "input"
        texts += [(f"{label}.{name}", value) for name, value in arguments.items() if isinstance(value, str)]
    reads = []
    for field, text in texts:
        if text.startswith("state.") and "{" not in text:  # a whole-value path (tool_args, input)
            names = [text]
        else:
            try:
                names = template_fields(text)
            except Exception:  # a broken template is a load error already
                continue
        reads += [(field, key, name) for name in names if (key := _state_key(name))]
    return reads


def _state_key(name: str) -> str | None:
    """The top-level key a template field or path reads: ``state.a.b`` and a bare ``a.b`` both read ``a``."""
    if name.startswith(("state.", "state[")):
        name = name.removeprefix("state.").lstrip("['\"")
    elif name == "state":
        return None
    match = _FIRST_KEY.match(name)
    return match.group() if match else None


def _routers_without_default(workflow: Workflow, prefix: str) -> list[Finding]:
    return [
        Finding("warning", prefix + step.id, "default",
                "the router has no 'default': when no condition holds, the step fails with router_no_match",
                "add 'default: <step id>' for the case no condition covers")
        for step in workflow.steps
        if isinstance(step, RouterStep) and step.default is None
        and not any(condition.expression.strip() in ("True", "true") for condition in step.conditions)
    ]


def _parallel_outputs(workflow: Workflow, prefix: str) -> list[Finding]:
    return [Finding("warning", prefix + clash.second, "output", clash.message,
                    clash.hint.removesuffix(".") + " (config.strict_outputs: true makes this a load error)")
            for clash in parallel_outputs(workflow)]
