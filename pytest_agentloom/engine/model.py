"""The workflow file as typed data: one pydantic model per step type.

Every model forbids unknown keys, so a typo such as ``promt`` is an error at
load time instead of a silently ignored field. The loader
(:mod:`pytest_agentloom.engine.loader`) turns pydantic's errors into
:class:`~pytest_agentloom.errors.WorkflowError` messages that name the file,
the step and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from ..core.types import Thinking
from ..tools.sandbox import SandboxConfig

if TYPE_CHECKING:
    from .expressions import Expression

__all__ = [
    "DEFAULT_RETRYABLE_STATUS_CODES",
    "FUTURE_STEP_TYPES",
    "STEP_TYPES",
    "AgentDefinition",
    "AgentStep",
    "AnyStep",
    "ApprovalGateStep",
    "Compiled",
    "Condition",
    "EmbedStep",
    "LLMCallStep",
    "NamedToolChoice",
    "ResponseSchema",
    "RetryPolicy",
    "RouterStep",
    "StateKeySchema",
    "Step",
    "SubworkflowStep",
    "ToolDeclaration",
    "ToolStep",
    "WebhookNotify",
    "Workflow",
    "WorkflowConfig",
]

DEFAULT_RETRYABLE_STATUS_CODES = (429, 500, 502, 503, 504)
STEP_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetryPolicy(_Strict):
    """How a failed call is retried: ``max_retries`` more attempts, exponential backoff.

    The n-th retry waits ``backoff_seconds * backoff_multiplier ** (n - 1)``,
    capped at ``max_backoff_seconds``, on the run's clock.
    """

    max_retries: int = Field(default=3, ge=0)
    backoff_seconds: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    backoff_multiplier: float = Field(default=2.0, ge=1, allow_inf_nan=False)
    max_backoff_seconds: float = Field(default=60.0, ge=0, allow_inf_nan=False)
    retryable_status_codes: list[int] = Field(default_factory=lambda: list(DEFAULT_RETRYABLE_STATUS_CODES))

    def delay(self, retry_number: int) -> float:
        """Seconds to wait before retry number ``retry_number`` (1 for the first retry)."""
        try:
            raw = self.backoff_seconds * self.backoff_multiplier ** (retry_number - 1)
        except OverflowError:  # backoff_multiplier: 1e300 passes any cap by the second retry
            return self.max_backoff_seconds
        return min(raw, self.max_backoff_seconds)


ProviderName = Literal["openai", "anthropic", "google", "ollama", "generic_openai"]


class ProviderSettings(_Strict):
    """Where one provider is reached. A key never goes in a workflow file: name the variable that holds it."""

    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout: float | None = Field(default=None, gt=0)


class WorkflowConfig(_Strict):
    """Run-wide settings; a step's own field wins over the matching one here."""

    model: str | None = None
    provider: str | None = None
    budget_usd: float | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    stream: bool = False
    retry: RetryPolicy | None = None
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    checkpoint: bool = False
    checkpoint_dir: str | None = None  # relative to the workflow file's folder
    providers: dict[ProviderName, ProviderSettings] = Field(default_factory=dict)
    embedding_model: str | None = None  # the model of an embed step without its own (never config.model)
    capture_prompts: bool = False  # add each llm_call's rendered messages to the trace (redacted on the way out)


class StateKeySchema(_Strict):
    """What the workflow says about one state key (or glob of keys)."""

    redact: bool = False
    type: str | None = None
    description: str | None = None


class _StepBase(_Strict):
    """The fields every step has."""

    id: str = Field(pattern=STEP_ID_PATTERN)
    description: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    output: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    retry: RetryPolicy | None = None


class ToolDeclaration(_Strict):
    """A tool as a step offers it to the model; missing description/parameters come from the registry."""

    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class NamedToolChoice(_Strict):
    """``tool_choice: {name: http_request}``: the first call must use that tool."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice


class ResponseSchema(_Strict):
    """``response_schema``: the JSON shape a reply must have (see :mod:`.structured`).

    ``type`` is ``pydantic`` (``model``: ``package.module.Class`` or
    ``package.module:Class``), ``json_schema`` (``schema``: inline) or
    ``json_object`` (any JSON object). ``name`` defaults to the class name,
    else the step id; ``strict`` (OpenAI's strict mode) defaults to true.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["pydantic", "json_schema", "json_object"] = "json_object"
    model: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    name: str | None = None
    strict: bool = True
    description: str | None = None


class AttachmentSpec(_Strict):
    """One image, PDF or audio file sent with an ``llm_call``'s prompt; ``source`` is a template."""

    type: Literal["image", "pdf", "audio"] = "image"
    source: str = Field(min_length=1)
    media_type: str | None = None
    fetch: Literal["local", "provider"] = "local"

    @model_validator(mode="after")
    def _consistent(self) -> AttachmentSpec:
        if self.fetch == "provider" and self.type != "image":
            raise ValueError(f"fetch: provider takes images only, not type '{self.type}'; use fetch: local")
        wanted = {"image": "image/", "pdf": "application/pdf", "audio": "audio/"}[self.type]
        if self.media_type is not None and not self.media_type.lower().startswith(wanted):
            raise ValueError(f"media_type '{self.media_type}' contradicts type '{self.type}'")
        return self


class LLMCallStep(_StepBase):
    """One model call: a prompt in, the reply's text out (a loop of calls when it has ``tools``)."""

    type: Literal["llm_call"]
    prompt: str | None = None
    system_prompt: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    stream: bool | None = None
    conversation: str | None = None
    speaker: str | None = None  # names this step's assistant turns in its conversation
    tools: list[ToolDeclaration] = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    max_tool_iterations: int = Field(default=5, ge=1)
    response_schema: ResponseSchema | None = None
    thinking: Thinking | None = None  # README: Providers, Reasoning; each adapter translates it
    attachments: list[AttachmentSpec] = Field(default_factory=list)  # README: Attachments (engine/attachments.py)


class ToolStep(_StepBase):
    """Calls a registered Python tool with rendered ``tool_args``."""

    type: Literal["tool"]
    tool_name: str
    tool_args: dict[str, Any] = Field(default_factory=dict)


class Condition(_Strict):
    """One branch of a router: the first whose ``expression`` is true wins."""

    expression: str
    target: str


class RouterStep(_StepBase):
    """Chooses one of its targets; the branches not chosen are skipped."""

    type: Literal["router"]
    conditions: list[Condition] = Field(default_factory=list)
    default: str | None = None

    def targets(self) -> list[str]:
        """Every step this router may choose, conditions first, without repeats."""
        names = [condition.target for condition in self.conditions]
        if self.default is not None:
            names.append(self.default)
        return list(dict.fromkeys(names))


class AgentStep(_StepBase):
    """Runs an agent from the top-level ``agents:`` on a rendered ``prompt``."""

    type: Literal["agent"]
    agent: str
    prompt: str
    conversation: str | None = None  # the agent takes its turn in this conversation, as speaker by its name


class AgentDefinition(_Strict):
    """An agent, defined once under ``agents:``: its model, instructions, allowlist and limits.

    The limits are checked in code before every model call: ``max_steps``
    model calls, ``max_seconds`` on the run's clock, ``max_cost_usd`` as a
    worst case (spent so far, plus the next request's input and its whole
    ``max_tokens`` allowance). ``max_stuck`` consecutive steps that were
    rejected or failed end the loop as ``stuck``. A budget stop fails the
    step unless ``on_budget: succeed``. With ``require_evidence``, a final
    answer counts only once a tool of the loop ran successfully: an earlier
    one is rejected as ``unsupported_answer`` (a model claiming done too early).
    """

    model: str | None = None
    instructions: str | None = None
    tools: list[str | ToolDeclaration] = Field(default_factory=list)
    approval_required: list[str] = Field(default_factory=list)
    output_schema: dict[str, Any] | None = None
    max_steps: int = Field(default=10, ge=1)
    max_seconds: float | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_stuck: int = Field(default=3, ge=1)
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = None
    on_budget: Literal["fail", "succeed"] = "fail"
    require_evidence: bool = False

    def tool_names(self) -> list[str]:
        return [tool if isinstance(tool, str) else tool.name for tool in self.tools]


class WebhookNotify(_Strict):
    """Where an approval gate announces itself: ``body_template`` is rendered from the redacted state."""

    url: str
    method: Literal["POST", "PUT"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body_template: str | None = None
    timeout: float = Field(default=10.0, gt=0)


class ApprovalGateStep(_StepBase):
    """Pauses the run until someone approves or rejects; ``output`` receives ``approved`` or ``rejected``."""

    type: Literal["approval_gate"]
    message: str | None = None
    timeout_seconds: float | None = Field(default=None, gt=0)
    on_timeout: Literal["approve", "reject", "fail"] = "fail"
    notify: WebhookNotify | None = None


class SubworkflowStep(_StepBase):
    """Runs another workflow file as one step (see :mod:`.subworkflow`).

    ``workflow`` is resolved against this file's folder; ``input`` is rendered
    like ``tool_args`` and laid over the child's ``state:``; ``output`` gets the
    child's final state, or only its ``return_keys``.
    """

    type: Literal["subworkflow"]
    workflow: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    return_keys: list[str] | None = None


class EmbedStep(_StepBase):
    """Turns the texts at ``inputs`` into vectors; ``output`` gets one vector per text, in order.

    ``inputs`` are state paths (``docs``, ``state.question``), never templates: each must hold a
    string or a list of strings. ``model`` defaults to ``config.embedding_model``.
    """

    type: Literal["embed"]
    inputs: str | list[str] = Field(min_length=1)
    model: str | None = None

    @field_validator("inputs")
    @classmethod
    def _paths(cls, inputs: str | list[str]) -> str | list[str]:
        from .paths import parse_path

        for path in [inputs] if isinstance(inputs, str) else inputs:
            if "{" in path or "}" in path:
                bare = path.strip("{} ")
                raise ValueError(f"inputs are state paths, not templates: write '{bare}', not '{path}'")
            parse_path(path.removeprefix("state."))  # its ValueError names the path and the position
        return inputs

    def input_paths(self) -> list[str]:
        return [self.inputs] if isinstance(self.inputs, str) else list(self.inputs)


AnyStep = LLMCallStep | ToolStep | RouterStep | AgentStep | ApprovalGateStep | SubworkflowStep | EmbedStep
Step = Annotated[LLMCallStep | ToolStep | RouterStep | AgentStep | ApprovalGateStep | SubworkflowStep | EmbedStep,
                 Field(discriminator="type")]
STEP_TYPES: dict[str, type[_StepBase]] = {
    "llm_call": LLMCallStep, "tool": ToolStep, "router": RouterStep, "agent": AgentStep,
    "approval_gate": ApprovalGateStep, "subworkflow": SubworkflowStep, "embed": EmbedStep,
}
FUTURE_STEP_TYPES: tuple[str, ...] = ()


@dataclass
class Compiled:
    """What the loader works out once for a workflow, so running it never parses text again.

    ``conditions`` holds each router's compiled condition expressions, in order;
    ``children`` each subworkflow step's loaded child workflow. A ``Workflow``
    built in Python without the loader starts with both empty; the steps then
    compile or load what they need themselves.
    """

    conditions: dict[str, tuple[Expression, ...]] = field(default_factory=dict)
    children: dict[str, Workflow] = field(default_factory=dict)


class Workflow(_Strict):
    """A whole workflow file. ``source`` is where it was loaded from, if anywhere."""

    name: str
    description: str | None = None
    version: str | None = None
    config: WorkflowConfig = Field(default_factory=WorkflowConfig)
    state: dict[str, Any] = Field(default_factory=dict)
    state_schema: dict[str, StateKeySchema] = Field(default_factory=dict)
    agents: dict[str, AgentDefinition] = Field(default_factory=dict)
    steps: list[Step] = Field(min_length=1)

    _source: Path | None = PrivateAttr(default=None)
    _compiled: Compiled = PrivateAttr(default_factory=Compiled)
    _positions: dict[str, int] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> Path | None:
        """The file this workflow was read from (``None`` when built from text or in Python)."""
        return self._source

    @source.setter
    def source(self, path: Path | None) -> None:
        self._source = path

    @property
    def compiled(self) -> Compiled:
        """Router expressions and child workflows, filled in by the loader."""
        return self._compiled

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in this workflow are resolved against."""
        return self._source.parent if self._source is not None else Path.cwd()

    def resolve_path(self, value: str | Path) -> Path:
        """A path from the workflow, made absolute against the workflow file's folder."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.base_dir / path).resolve()

    def step(self, step_id: str) -> AnyStep:
        """The step called ``step_id`` (``KeyError`` if there is none).

        A dict lookup of the step's position, checked against ``steps`` on every call, so a
        copy with other steps (``model_copy(update={"steps": ...})``) never sees stale ones.
        """
        position = self._positions.get(step_id)
        if position is None or position >= len(self.steps) or self.steps[position].id != step_id:
            self._positions = {}
            for index, step in enumerate(self.steps):
                self._positions.setdefault(step.id, index)
            position = self._positions[step_id]
        return self.steps[position]

    def with_config(self, **overrides: Any) -> Workflow:
        """A copy with some ``config`` fields replaced, validated like the file's own."""
        config = WorkflowConfig.model_validate({**self.config.model_dump(exclude_unset=True), **overrides})
        clone = self.model_copy(update={"config": config})
        clone._source = self._source
        clone._compiled = self._compiled
        return clone
