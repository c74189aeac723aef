"""Neutral request and response types at the provider boundary.

The engine speaks only these types; every provider (scripted, SDK-backed,
replayed) translates them to and from its own wire format. They are frozen so
a request recorded by a scripted provider cannot change after the fact.

No ``from __future__ import annotations`` here (see :mod:`pytest_agentloom.engine._format.model`):
pydantic would evaluate each string annotation again when it creates the class.
"""

import contextvars
from base64 import b64encode as _b64encode
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import AttachmentRefused, render_message

__all__ = [
    "Attachment", "AttachmentRefused", "EmbedRequest", "EmbedResponse",
    "LLMRequest", "LLMResponse", "Message", "Provider", "Thinking", "ToolCall",
    "ToolSpec", "Usage", "emit_text", "refuse_attachments", "text_listener",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ToolCall(_Frozen):
    """One call a model asked for: ``arguments`` is the raw JSON text it wrote.

    ``signature`` is an opaque token the provider attached to the call (Gemini's ``thoughtSignature``)
    that must go back, unchanged, with the call in the next turn. It is never shown in a trace or state.
    """

    id: str
    name: str
    arguments: str = "{}"
    signature: str | None = Field(default=None, exclude_if=lambda value: value is None)  # dumps stay as before

    def to_dict(self) -> dict[str, Any]:
        """Id, name and arguments: what a trace, a checkpoint or a conversation shows of the call."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


class Attachment(_Frozen):
    """An image, PDF or audio file sent with a user turn (docs/running-workflows.md: Attachments).

    Either ``data`` (the bytes, already read, downloaded or decoded) or ``url``
    (``fetch: provider``: the provider fetches it) is set. ``summary()`` is all
    that may reach a trace or a result: never the bytes.
    """

    kind: Literal["image", "pdf", "audio"]
    media_type: str
    data: bytes | None = None
    url: str | None = None
    size: int = 0
    sha256: str | None = None

    def base64(self) -> str:
        """The bytes as base64 text, as the wire formats want them."""
        return _b64encode(self.data or b"").decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"

    def summary(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"type": self.kind, "media_type": self.media_type}
        if self.url is not None:  # the URL itself stays out: a signed URL is a secret
            shown["fetch"] = "provider"
        else:
            shown["size"] = self.size
            shown["sha256"] = self.sha256
        return shown


def refuse_attachments(request: "LLMRequest", provider: str, *, images: bool = True, image_urls: bool = False,
                       pdf: bool = False, audio: tuple[str, ...] = ()) -> None:
    """Raise :class:`AttachmentRefused` when ``provider`` can't take one of the request's attachments."""
    for message in request.messages:
        for item in message.attachments:
            if item.kind == "image" and item.url is not None:
                ok, what = image_urls, "an image by URL (fetch: provider)"
            elif item.kind == "image":
                ok, what = images, "images"
            elif item.kind == "pdf":
                ok, what = pdf, "PDFs"
            else:
                ok, what = item.media_type in audio, f"audio as {item.media_type}"
            if not ok:
                raise AttachmentRefused(
                    render_message(
                        f"{provider} can't take {what}; nothing was sent.",
                        hint=f"route model '{request.model}' to a provider that takes it "
                             "(docs/running-workflows.md, Attachments), or change the attachment", inline=True),
                    provider=provider,
                )


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
    # images, PDFs and audio sent with a user turn; to_dict() shows only their summaries, never the bytes
    attachments: tuple[Attachment, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Role and content, plus the optional fields only when they are set (reasoning blocks never)."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            data["name"] = self.name
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.attachments:
            data["attachments"] = [item.summary() for item in self.attachments]
        return data


class ToolSpec(_Frozen):
    """A tool as the model sees it: name, description and JSON-Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = Field(default=None, exclude_if=lambda value: value is None)  # None: the API's default


class Usage(_Frozen):
    """Token counts of one call, as the provider reported them, in one accounting for every provider.

    ``input_tokens`` is every input token the model read, cached or not; ``cached_input_tokens`` (read
    from the provider's prompt cache) and ``cache_write_tokens`` (written to it: Anthropic's cache
    creation) are the parts of it billed at cache rates. ``output_tokens`` excludes ``reasoning_tokens``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = Field(default=0, exclude_if=lambda value: not value)  # dumped only when used
    cache_write_tokens: int = Field(default=0, exclude_if=lambda value: not value)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.reasoning_tokens

    def cache_counts(self) -> dict[str, int]:
        """The cache counts that are not zero, for a trace event or a step result that shows only those."""
        if not (self.cached_input_tokens or self.cache_write_tokens):  # most calls: read once per call
            return {}
        counts = {"cached_input_tokens": self.cached_input_tokens, "cache_write_tokens": self.cache_write_tokens}
        return {name: value for name, value in counts.items() if value}

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class Thinking(_Frozen):
    """A step's reasoning settings (docs/providers.md: Reasoning), as each adapter translates them.

    Without ``enabled`` nothing is sent. ``budget_tokens`` goes to providers
    that take a budget (Anthropic, Google), ``level`` to those that take a
    level (OpenAI's reasoning models, Google, Ollama). ``capture_reasoning``
    asks for the reasoning text where the API can return it.
    """

    enabled: bool = False
    budget_tokens: int | None = Field(default=None, gt=0)
    level: Literal["low", "medium", "high"] | None = None
    capture_reasoning: bool = True
    # Anthropic's wire names: ``type: adaptive`` (the model decides how much to think; implies enabled),
    # ``type: enabled`` (the same as enabled: true); ``effort`` is Anthropic's output_config.effort
    type: Literal["enabled", "adaptive"] | None = Field(default=None, exclude_if=lambda value: value is None)
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(default=None,
                                                                  exclude_if=lambda value: value is None)

    @model_validator(mode="before")
    @classmethod
    def _type_enables(cls, data: Any) -> Any:
        """``type: adaptive`` or ``type: enabled`` turns thinking on; ``enabled: false`` beside it contradicts it."""
        if isinstance(data, dict) and data.get("type") in ("enabled", "adaptive"):
            if data.get("enabled") is False:
                raise ValueError(f"thinking has type: {data['type']} and enabled: false; remove one of them")
            data = {**data, "enabled": True}
        return data


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
    # an assistant turn the reply continues (docs/workflow-format.md: llm_call); providers without one refuse it
    prefill: str | None = Field(default=None, exclude_if=lambda value: value is None)


class LLMResponse(_Frozen):
    """A model's answer. ``finish_reason`` is kept as the provider gave it, except for a refusal.

    ``refusal`` holds the model's refusal text when it refused (OpenAI's ``refusal`` fields, Anthropic's
    ``stop_reason: refusal``); ``finish_reason`` is then ``refusal`` whatever the wire said, and the
    engine never takes the empty ``text`` for an answer (docs/providers.md: Refusals).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    reasoning_content: str | None = None  # the model's reasoning text, where the provider returns it
    # the provider's own opaque reasoning items, to send back with the turn's tool calls: Anthropic thinking
    # blocks with signatures, OpenAI Responses reasoning items with encrypted_content, Gemini text signatures
    thinking_blocks: tuple[dict[str, Any], ...] = ()
    refusal: str | None = None
    finish_reason: str | None = None
    model: str = ""
    provider: str = ""
    cost: float | None = None


class EmbedRequest(_Frozen):
    """Texts to turn into vectors (an ``embed`` step). ``step_id`` and ``attempt`` are never sent."""

    step_id: str
    model: str
    texts: tuple[str, ...]
    attempt: int = 1
    provider: str | None = None
    dimensions: int | None = None  # the vector size asked for (models that can shorten their vectors)


class EmbedResponse(_Frozen):
    """One vector per text, in the order the texts were sent; only input tokens are billed."""

    vectors: list[list[float]] = Field(default_factory=list)
    usage: Usage = Usage()
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
