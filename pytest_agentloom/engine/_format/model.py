"""The workflow file as typed data: one pydantic model per step type.

Every model forbids unknown keys, so a typo such as ``promt`` is an error at
load time instead of a silently ignored field. The loader
(:mod:`pytest_agentloom.engine._format.loader`) turns pydantic's errors into
:class:`~pytest_agentloom.errors.WorkflowError` messages that name the file,
the step and the field.

A workflow, once built, cannot be changed (the workflow cache of a test process
gives the same object to every test that loads a file): the models are frozen and
the lists and dicts they hold are read-only (:mod:`pytest_agentloom._core.readonly`).
A changed workflow is a copy: ``model_copy(update=...)``, :meth:`Workflow.with_config`,
:meth:`Workflow.with_source`. Assigning a field raises a
:class:`~pytest_agentloom.errors.UsageError` that says so.

The module has no ``from __future__ import annotations``, unlike the rest of the package:
pydantic evaluates every string annotation of a model when the class is created (a
``ForwardRef`` compiled and evaluated per field), which made creating these twenty-odd
models cost about 40% more at every import of the engine. Only the few names used before
they are defined are written as strings.
"""

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from ..._core.readonly import ReadOnlyDict, read_only
from ..._core.types import Thinking
from ...errors import UsageError, render_message
from ...tools._sandbox import SandboxConfig

if TYPE_CHECKING:
    from .._evaluate.expressions import Expression

__all__ = [
    "DEFAULT_RETRYABLE_STATUS_CODES",
    "FALLBACK_KINDS",
    "FUTURE_STEP_TYPES",
    "STEP_TYPES",
    "AgentDefinition",
    "AgentStep",
    "AnyStep",
    "ApprovalGateStep",
    "Compiled",
    "Condition",
    "EmbedStep",
    "FallbackTarget",
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

DEFAULT_RETRYABLE_STATUS_CODES = (429, 500, 502, 503, 504, 529)  # 529: Anthropic's overloaded_error
STEP_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"


class _Strict(BaseModel):
    """Unknown keys refused; frozen, its lists and dicts read-only once validated (see the module docs)."""

    model_config = ConfigDict(extra="forbid", defer_build=True, frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        for name in type(self).model_fields:
            value = getattr(self, name, None)  # None: a field model_construct was not given
            if type(value) is dict or type(value) is list:  # defaults included: they are not validated
                object.__setattr__(self, name, read_only(value))  # the frozen model's own field, set once

    def __setattr__(self, name: str, value: Any) -> None:
        field = name in type(self).model_fields
        if field or isinstance(getattr(type(self), name, None), property):
            copy = f"model_copy(update={{{name!r}: ...}})" if field else "workflow.with_source(path)"
            raise UsageError(render_message(
                    f"{type(self).__name__}.{name} cannot be set: a workflow is not changed once built "
                    "(the tests that load the same file share it).",
                    hint=f"make a changed copy: {copy}."))
        super().__setattr__(name, value)


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

    @model_validator(mode="before")
    @classmethod
    def _upstream_names(cls, data: Any) -> Any:
        """Upstream's ``backoff_base`` and ``backoff_max``: waits of base**0, base**1, ... seconds, capped."""
        if not isinstance(data, dict) or not {"backoff_base", "backoff_max"} & set(data):
            return data
        data = dict(data)
        for upstream, ours in (("backoff_base", "backoff_multiplier"), ("backoff_max", "max_backoff_seconds")):
            if upstream in data:
                if ours in data:
                    raise ValueError(f"'{upstream}' is upstream's name for '{ours}': give one of them, not both")
                data[ours] = data.pop(upstream)
        if "backoff_multiplier" in data:
            data.setdefault("backoff_seconds", 1.0)
        return data

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
    # openai and generic_openai only (docs/providers.md: OpenAI's two APIs): which API the calls go over
    api: Literal["auto", "chat_completions", "responses"] | None = None


#: the failures a model call may fall back on (engine/_calls/fallback.py says which error is which kind)
FALLBACK_KINDS = ("rate_limit", "overloaded", "server_error", "timeout", "connection")


class FallbackTarget(_Strict):
    """One provider a model call falls back to, with the model name it gets there (never the primary's).

    ``provider`` and ``on`` are plain strings here and checked by the loader
    (:func:`.load_checks.check_fallbacks`), which names the file, the line and the
    closest known name. YAML 1.1 reads a bare ``on`` key as ``true``; that key
    is taken as ``on``.
    """

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    on: list[str] = Field(default_factory=lambda: list(FALLBACK_KINDS), min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _yaml_on(cls, data: Any) -> Any:
        if isinstance(data, dict) and True in data:
            data = dict(data)
            if "on" in data:
                raise ValueError("'on' is given twice")
            data["on"] = data.pop(True)
        if isinstance(data, dict) and isinstance(data.get("on"), str):
            data = {**data, "on": [data["on"]]}
        return data


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
    #: upstream's workflow-wide retry count: the ``max_retries`` of ``retry`` when that doesn't set one
    max_retries: int | None = Field(default=None, ge=0)
    #: at most this many steps of one layer run at once (results and trace stay in file order)
    max_concurrent_steps: int | None = Field(default=None, ge=1)
    # ``provider: mock`` (providers/_mock.py): replies from a recording file instead of a model
    responses_file: str | None = None  # JSON or YAML, relative to the workflow file's folder
    default_response: str | None = None  # the reply when the file has none for a call (else the step fails)
    latency_model: Literal["constant", "normal", "replay"] = "constant"
    latency_ms: float = Field(default=0.0, ge=0)
    #: upstream's: two steps that may run side by side writing one output are a load error (.output_clashes)
    strict_outputs: bool = False
    #: what a failed step does to the rest of the run (engine._run.loop): ``stop`` it after the step's layer,
    #: or, as upstream's two values, ``skip_downstream`` (skip only what depends on it) or ``continue`` (run it all)
    on_step_failure: Literal["stop", "skip_downstream", "continue"] = "stop"
    #: provider -> where its calls fall back to, for every llm_call and agent step without a ``fallback`` of its own
    fallbacks: dict[str, list[FallbackTarget]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _upstream_retry_count(self) -> "WorkflowConfig":
        """``max_retries`` fills in the count of ``retry`` (a policy of its own when there is none)."""
        if self.max_retries is not None:
            policy = self.retry or RetryPolicy()
            if "max_retries" not in policy.model_fields_set:
                return self.model_copy(update={"retry": policy.model_copy(update={"max_retries": self.max_retries})})
        return self

    @field_validator("providers")
    @classmethod
    def _api_only_for_openai_wire(cls, value: dict[str, ProviderSettings]) -> dict[str, ProviderSettings]:
        for name, settings in value.items():
            if settings.api is not None and name not in ("openai", "generic_openai"):
                raise ValueError(f"'api' is a setting of openai and generic_openai only, not of {name}; "
                                 "remove it there")
        return value


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
    strict: bool | None = None  # the provider's strict tool mode (docs/providers.md); the step's strict_tools else


class NamedToolChoice(_Strict):
    """``tool_choice: {name: http_request}``: the first call must use that tool."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice


class ResponseSchema(_Strict):
    """``response_schema``: the JSON shape a reply must have (see :mod:`.._calls.structured`).

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
    def _consistent(self) -> "AttachmentSpec":
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
    thinking: Thinking | None = None  # docs/providers.md: Reasoning; each adapter translates it
    attachments: list[AttachmentSpec] = Field(default_factory=list)  # docs/running-workflows.md: Attachments
    on_refusal: Literal["fail", "output"] = "fail"  # docs/providers.md: Refusals; 'output' keeps the refusal text
    # docs/workflow-format.md, llm_call: sent where the provider has them, refused (before sending) where not
    stop: str | list[str] | None = Field(default=None, validation_alias=AliasChoices("stop", "stop_sequences"))
    prefill: str | None = Field(default=None, min_length=1)  # the assistant turn the reply continues
    service_tier: str | None = Field(default=None, min_length=1)
    strict_tools: bool | None = None  # every tool's strict mode, unless the tool sets its own
    #: the providers tried, in order, when a call fails in one of their ``on`` ways (``[]``: none, whatever
    #: config.fallbacks says); docs/workflow-format.md: Fallback
    fallback: list[FallbackTarget] | None = None

    @field_validator("stop")
    @classmethod
    def _stop_sequences(cls, value: str | list[str] | None) -> str | list[str] | None:
        sequences = [value] if isinstance(value, str) else value or []
        if any(not sequence for sequence in sequences):
            raise ValueError("a stop sequence cannot be empty")
        return value


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
    thinking: Thinking | None = None  # every turn of the loop; the agent's own thinking when unset
    fallback: list[FallbackTarget] | None = None  # each turn's, as on llm_call


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
    thinking: Thinking | None = None  # docs/providers.md: Reasoning; sent on every turn, as llm_call sends it

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
    """Runs another workflow as one step (see :mod:`.._steps.subworkflow`).

    ``workflow`` is a file resolved against this file's folder; ``input`` is
    rendered like ``tool_args`` and laid over the child's ``state:``; ``output``
    gets the child's final state, or only its ``return_keys``.

    Upstream's two keys are accepted with upstream's meaning: ``workflow_path``
    (a file) and ``workflow_inline`` (the child written in place). A child given
    by either starts from a copy of the parent's whole state (its own ``state:``
    only fills keys the parent lacks). Exactly one of the three keys is given.
    Upstream's ``isolated_state`` says it outright: ``true`` starts the child from
    its own ``state:`` and ``input`` only, ``false`` from the parent's state too.
    """

    type: Literal["subworkflow"]
    workflow: str | None = Field(default=None, min_length=1)
    workflow_path: str | None = Field(default=None, min_length=1)
    workflow_inline: dict[str, Any] | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    return_keys: list[str] | None = None
    isolated_state: bool | None = None  # upstream's; unset: isolated for 'workflow', inherited for upstream's keys

    @model_validator(mode="after")
    def _one_child(self) -> "SubworkflowStep":
        given = [key for key in ("workflow", "workflow_path", "workflow_inline") if getattr(self, key) is not None]
        if len(given) != 1:
            raise ValueError(
                "a subworkflow step needs exactly one of 'workflow' (a file), 'workflow_path' (upstream's name for "
                f"it) or 'workflow_inline' (the child written here); got {', '.join(given) or 'none'}"
            )
        return self

    @property
    def inherits_state(self) -> bool:
        """Whether the child starts from the parent's state: ``isolated_state`` when given, else for upstream's keys
        (``workflow_path``, ``workflow_inline``), as upstream agentloom does."""
        if self.isolated_state is not None:
            return not self.isolated_state
        return self.workflow is None

    @property
    def child_name(self) -> str:
        """How errors name the child: its file, or ``<inline>``."""
        return self.workflow or self.workflow_path or "<inline>"


class EmbedStep(_StepBase):
    """Turns the texts at ``inputs`` into vectors; ``output`` gets one vector per text, in order.

    ``inputs`` are state paths (``docs``, ``state.question``), never templates: each must hold a
    string or a list of strings. ``model`` defaults to ``config.embedding_model``.
    """

    type: Literal["embed"]
    inputs: str | list[str] = Field(min_length=1)
    model: str | None = None
    dimensions: int | None = Field(default=None, gt=0)  # the vector size to ask for; vectors of another fail

    @field_validator("inputs")
    @classmethod
    def _paths(cls, inputs: str | list[str]) -> str | list[str]:
        from ..._core.state_paths import parse_path

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
    compile or load what they need themselves. The loader seals (:meth:`seal`) what it
    filled in; a copy of the workflow gets an unsealed copy (its steps may differ).
    """

    conditions: "dict[str, tuple[Expression, ...]]" = field(default_factory=dict)
    children: "dict[str, Workflow]" = field(default_factory=dict)

    def seal(self) -> None:
        """Make both read-only: the workflow is complete, and may be shared."""
        self.conditions, self.children = ReadOnlyDict(self.conditions), ReadOnlyDict(self.children)

    def copy(self) -> "Compiled":
        """An unsealed copy with the same entries, for a copy of the workflow."""
        return Compiled(dict(self.conditions), dict(self.children))


_T = TypeVar("_T")


@functools.lru_cache(maxsize=16)
def _folder(name: str) -> Path:
    """One ``Path`` per folder name, kept: the same ``Path`` object hashes once, a new one every time."""
    return Path(name)


@functools.lru_cache(maxsize=64)
def _parent(source: Path) -> Path:
    """The folder of a workflow file, one ``Path`` per file (as :func:`_folder`): kept here, not on the
    workflow, so a workflow moved to another file finds its new folder, and the workflow is unchanged."""
    return source.parent


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
    _memo: dict[str, Any] = PrivateAttr(default_factory=dict)
    _as_loaded: "Workflow | None" = PrivateAttr(default=None)
    _overrides: dict[str, Any] = PrivateAttr(default_factory=dict)

    def _private(self, name: str) -> Any:
        """The private attribute ``name``, read from pydantic's table of them.

        ``self._source`` is not an instance attribute to Python: the ordinary lookup fails first, raising
        an ``AttributeError`` that pydantic's ``__getattr__`` catches, about 2 us a read against 0.1 us
        for the dictionary lookup. A run reads these several times per step (``memoized``, ``source``,
        ``base_dir``, ``step``), so the fast way adds up; ``getattr`` is the fallback for a model whose
        table lacks the name.
        """
        private = self.__pydantic_private__
        if private is not None and name in private:
            return private[name]
        return getattr(self, name)

    def _set_private(self, name: str, value: Any) -> None:
        """Set a private attribute straight in pydantic's table (see :meth:`_private`), else through pydantic."""
        private = self.__pydantic_private__
        if private is not None:
            private[name] = value
        else:
            setattr(self, name, value)

    @property
    def as_loaded(self) -> "Workflow":
        """This workflow before :meth:`with_config` replaced ``config`` fields (itself when nothing was)."""
        loaded = self._private("_as_loaded")
        return loaded if loaded is not None else self

    @property
    def config_overrides(self) -> dict[str, Any]:
        """The ``config`` fields :meth:`with_config` replaced (``--model``, ``--checkpoint``, ...), as given."""
        return dict(self._overrides)

    @property
    def source(self) -> Path | None:
        """The file this workflow was read from (``None`` when built from text or in Python)."""
        return self._private("_source")  # type: ignore[no-any-return]

    def with_source(self, path: Path | None) -> "Workflow":
        """A copy read as if from another file (``None``: from no file), its relative paths resolved there."""
        clone = self.model_copy()
        clone._set_private("_source", path)
        return clone

    @property
    def compiled(self) -> Compiled:
        """Router expressions and child workflows, filled in by the loader."""
        return self._private("_compiled")  # type: ignore[no-any-return]

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in this workflow are resolved against.

        The same ``Path`` object for the same folder (see :func:`_folder`): every run looks its
        built-in tools up by this folder, and a new ``Path`` each time is hashed again each time.
        Without a file it is the working directory, read on every call: it may change between runs.
        """
        source = self.source
        return _folder(os.getcwd()) if source is None else _parent(source)

    def resolve_path(self, value: str | Path) -> Path:
        """A path from the workflow, made absolute against the workflow file's folder."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.base_dir / path).resolve()

    def step(self, step_id: str) -> AnyStep:
        """The step called ``step_id`` (``KeyError`` if there is none).

        A dict lookup of the step's position, checked against ``steps`` on every call, so a
        copy with other steps (``model_copy(update={"steps": ...})``) never sees stale ones.
        """
        steps = self.steps
        position = self._private("_positions").get(step_id)
        if position is None or position >= len(steps) or steps[position].id != step_id:
            positions: dict[str, int] = {}
            for index, step in enumerate(steps):
                positions.setdefault(step.id, index)
            self._set_private("_positions", positions)
            position = positions[step_id]
        return steps[position]

    def memoized(self, key: str, make: Callable[[], _T]) -> _T:
        """``make()``, worked out once per workflow object: for what depends on the definition alone.

        A run's fixed costs (the definition's dump, hash and JSON form) are paid on the first run
        only. The memo is part of the object, which cannot change; a copy (``model_copy``,
        :meth:`with_config`, :meth:`with_source`) starts with an empty one (:meth:`__copy__`).
        """
        memo = self._private("_memo")
        if key not in memo:
            memo[key] = make()
        return memo[key]  # type: ignore[no-any-return]

    def __copy__(self) -> "Workflow":
        """A shallow copy (what ``model_copy`` makes), with a memo and compiled parts of its own: what was worked
        out for this workflow may not hold for a copy with other fields."""
        clone = super().__copy__()
        clone._fresh_privates(self)
        return clone

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> "Workflow":
        clone = super().__deepcopy__(memo)
        clone._fresh_privates(self)
        return clone

    def _fresh_privates(self, original: "Workflow") -> None:
        self._set_private("_memo", {})
        self._set_private("_positions", {})
        self._set_private("_compiled", original.compiled.copy())

    def with_config(self, **overrides: Any) -> "Workflow":
        """A copy with some ``config`` fields replaced, validated like the file's own."""
        config = WorkflowConfig.model_validate({**self.config.model_dump(exclude_unset=True), **overrides})
        clone = self.model_copy(update={"config": config})
        clone._compiled = self._compiled  # the same steps: the loader's sealed parts hold
        clone._as_loaded = self.as_loaded  # what the file says: checkpoints hash it, and keep the overrides apart
        clone._overrides = {**self._overrides, **overrides}
        return clone
