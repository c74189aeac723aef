"""Neutral request and response types at the provider boundary.

The engine speaks only these types; every provider (scripted, SDK-backed,
replayed) translates them to and from its own wire format. They are frozen so
a request recorded by a scripted provider cannot change after the fact.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LLMRequest", "LLMResponse", "Message", "Provider", "Thinking", "ToolCall", "ToolSpec", "Usage", "emit_text",
    "text_listener",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One call a model asked for: ``arguments`` is the raw JSON text it wrote."""

    id: str
    name: str
    arguments: str = "{}"


class Message(_Frozen):
    """One turn of the conversation sent to a model."""

    role: str
    content: str | None = None
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # an assistant turn's reasoning blocks as its provider returned them (Anthropic thinking, with signatures),
    # sent back with the turn's tool calls where the API requires it; never part of to_dict()
    thinking_blocks: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Role and content, plus the optional fields only when they are set (reasoning blocks never)."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            data["name"] = self.name
        if self.tool_calls:
            data["tool_calls"] = [call.model_dump() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data


class ToolSpec(_Frozen):
    """A tool as the model sees it: name, description and JSON-Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Usage(_Frozen):
    """Token counts of one call, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.reasoning_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class Thinking(_Frozen):
    """A step's reasoning settings (003, Reasoning), as each adapter translates them.

    Without ``enabled`` nothing is sent. ``budget_tokens`` goes to providers
    that take a budget (Anthropic, Google), ``level`` to those that take a
    level (OpenAI's reasoning models, Google, Ollama). ``capture_reasoning``
    asks for the reasoning text where the API can return it.
    """

    enabled: bool = False
    budget_tokens: int | None = Field(default=None, gt=0)
    level: Literal["low", "medium", "high"] | None = None
    capture_reasoning: bool = True


class LLMRequest(_Frozen):
    """Everything a provider needs for one model call, and where it comes from.

    ``step_id``, ``attempt`` and ``turn`` identify the call for scripted
    providers, cassettes and error messages; providers do not send them.
    """

    step_id: str
    model: str
    messages: tuple[Message, ...]
    params: dict[str, Any] = Field(default_factory=dict)
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: Any = None
    stream: bool = False
    thinking: Thinking | None = None
    provider: str | None = None
    attempt: int = 1
    turn: int = 1


class LLMResponse(_Frozen):
    """A model's answer. ``finish_reason`` is kept exactly as the provider gave it."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    reasoning_content: str | None = None  # the model's reasoning text, where the provider returns it
    thinking_blocks: tuple[dict[str, Any], ...] = ()  # the same as the provider's own blocks, to send back
    finish_reason: str | None = None
    model: str = ""
    provider: str = ""
    cost: float | None = None


# -- streamed text ---------------------------------------------------------------------------------------------
# A streaming adapter hands each piece of reply text to ``emit_text`` as it arrives. The engine sets a listener
# around one step's call (a context variable, so parallel steps each see their own): it notes the time of the
# first piece and passes the text on to whoever watches the run (``agentloom run --stream``). No listener, no cost.

text_listener: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "agentloom_text_listener", default=None
)


def emit_text(chunk: str) -> None:
    """Report one piece of streamed reply text (empty pieces are dropped)."""
    listener = text_listener.get()
    if listener is not None and chunk:
        listener(chunk)


@runtime_checkable
class Provider(Protocol):
    """What the engine calls for every model request."""

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request, or raise :class:`~pytest_agentloom.errors.ProviderError`."""
        ...
