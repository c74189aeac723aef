"""OpenAI's Responses API (``POST /v1/responses``) through the official SDK's ``client.responses``.

:class:`~._openai.OpenAIProvider` uses it when ``config.providers.openai.api`` is ``responses``, or
when it is ``auto`` (the default) and the model exists only there (docs/providers.md: OpenAI's two APIs).
This module holds the translation both ways; the provider holds the client and the errors.

What is sent: leading system turns as ``instructions``, the rest as input items (user and assistant
messages, ``function_call`` and ``function_call_output`` items, and the reasoning items of an earlier turn,
unchanged); ``store: false`` always, since the engine keeps the conversation itself; for reasoning models
``reasoning.effort`` from ``thinking.level``, a reasoning summary when the reasoning is captured, and
``include: [reasoning.encrypted_content]`` so a tool loop can send the reasoning back.

What is read: ``output_text`` parts as the text, ``refusal`` parts as the refusal, ``function_call`` items as
tool calls, reasoning summaries (else ``reasoning_text`` content parts) as ``reasoning_content`` and reasoning
items with ``encrypted_content`` as ``thinking_blocks``. A stream is read event by event (text deltas reach
the run's listener) and the answer is taken from ``response.completed``; a stream that ends without it is cut,
and fails like one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core.types import Attachment, LLMRequest, LLMResponse, Message, ToolCall, Usage, emit_text
from ..errors import ErrorCode, MidStreamError, ProviderError, StepError, render_message
from ._common import named_tool_choice, refuse_unsupported, thinking_of

__all__ = [
    "RESPONSES_ONLY_MODELS",
    "ResponsesStream",
    "build_responses_body",
    "from_response",
    "responses_only",
    "stream_error_text",
]

RESPONSES_ONLY_MODELS = ("o1-pro", "o3-pro", "o3-deep-research", "o4-mini-deep-research", "gpt-5-pro",
                         "gpt-5-codex", "gpt-5.1-codex", "codex-mini", "computer-use-preview")
"""Model name prefixes OpenAI serves only over the Responses API: ``api: auto`` sends them there."""

_NOT_SENT = ("stop", "seed")  # chat-completions parameters the Responses API has no field for


def responses_only(model: str) -> bool:
    name = model.rsplit("/", 1)[-1]
    return any(name == prefix or name.startswith(prefix + "-") for prefix in RESPONSES_ONLY_MODELS)


# -- request -----------------------------------------------------------------------------------------------------


def build_responses_body(request: LLMRequest, params: Mapping[str, Any], *, reasoning: bool,
                         provider: str) -> dict[str, Any]:
    """The JSON body of ``responses.create``; ``reasoning`` says the model reasons (no temperature)."""
    refused = sorted(set(params) & set(_NOT_SENT))
    if refused:
        raise StepError(
            render_message(
                    f"step '{request.step_id}': provider '{provider}' speaks OpenAI's Responses API, which has no "
                    f"{' or '.join(refused)} parameter.",
                    hint="drop it from the step, or set "
                         f"config.providers.{provider}.api: chat_completions", inline=True),
            code=ErrorCode.UNKNOWN_PARAMETER, retryable=False,
        )
    refuse_unsupported(request, provider, strict_tools=True)  # no prefill: the Responses API has none
    instructions, items = to_response_input(request.messages)
    body: dict[str, Any] = {"model": request.model, "input": items, "store": False}
    if instructions:
        body["instructions"] = instructions
    if "temperature" in params and not reasoning:
        body["temperature"] = params["temperature"]
    if "top_p" in params:
        body["top_p"] = params["top_p"]
    if "max_tokens" in params:
        body["max_output_tokens"] = params["max_tokens"]
    if "service_tier" in params:
        body["service_tier"] = params["service_tier"]
    text_format = _text_format(params.get("response_format"))
    if text_format is not None:
        body["text"] = {"format": text_format}
    thinking = thinking_of(params, request.thinking)
    if reasoning:
        block: dict[str, Any] = {}
        if thinking and (thinking.get("level") or thinking.get("effort")):
            block["effort"] = thinking.get("level") or thinking["effort"]
        if thinking and thinking.get("capture_reasoning", True):
            block["summary"] = "auto"
        if block:
            body["reasoning"] = block
        body["include"] = ["reasoning.encrypted_content"]
    if request.tools:
        body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                          "parameters": t.parameters, "strict": bool(t.strict)} for t in request.tools]
        choice = _tool_choice(request.tool_choice)
        if choice is not None:
            body["tool_choice"] = choice
    return body


def to_response_input(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """Leading system turns as instructions, everything else as input items in order."""
    leading: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system" and not items:
            leading.append(message.content or "")
        elif message.role == "tool":
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "",
                          "output": message.content or ""})
        elif message.role == "assistant":
            items += [dict(block) for block in message.thinking_blocks if block.get("type") == "reasoning"]
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            items += [{"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}
                      for call in message.tool_calls]
        else:
            items.append({"role": message.role, "content": _content(message)})
    return "\n\n".join(leading), items


def _content(message: Message) -> str | list[dict[str, Any]]:
    text = message.content or ""
    if message.name is not None and message.role == "user":
        text = f"[{message.name}] {text}"
    if not message.attachments:
        return text
    return [{"type": "input_text", "text": text}, *(_input_part(item) for item in message.attachments)]


def _input_part(item: Attachment) -> dict[str, Any]:
    """An image as ``input_image`` (a data: URL or the URL itself), a PDF as ``input_file``."""
    if item.kind == "pdf":
        if item.url is not None:
            return {"type": "input_file", "file_url": item.url}
        return {"type": "input_file", "filename": "attachment.pdf", "file_data": item.data_url()}
    return {"type": "input_image", "image_url": item.url if item.url is not None else item.data_url(),
            "detail": "auto"}


def _text_format(response_format: Any) -> dict[str, Any] | None:
    """Chat's ``response_format`` as the Responses API's flatter ``text.format``."""
    if not isinstance(response_format, Mapping):
        return None
    if response_format.get("type") == "json_schema":
        return {"type": "json_schema", **dict(response_format.get("json_schema") or {})}
    if response_format.get("type") == "json_object":
        return {"type": "json_object"}
    return None


def _tool_choice(choice: Any) -> Any:
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    name = named_tool_choice(choice)
    return {"type": "function", "name": name} if name else None


# -- response ----------------------------------------------------------------------------------------------------


def from_response(data: Mapping[str, Any], request: LLMRequest, provider: str) -> LLMResponse:
    """A whole Response object (the non-streamed body, or the one ``response.completed`` carries)."""
    if data.get("status") == "failed":
        error = data.get("error") or {}
        raise ProviderError(f"{provider}: the response failed: {error.get('code')}: {error.get('message')}",
                            provider=provider)
    texts: list[str] = []
    refusals: list[str] = []
    summaries: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    thoughts: list[str] = []  # reasoning_text parts: the raw reasoning some servers (DeepSeek, vLLM) return
    for item in data.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(part.get("text") or "")
                elif part.get("type") == "refusal":
                    refusals.append(part.get("refusal") or "")
        elif kind == "function_call":
            calls.append(ToolCall(id=item.get("call_id") or item.get("id") or "", name=item.get("name") or "",
                                  arguments=item.get("arguments") or "{}"))
        elif kind == "reasoning":
            summaries += [entry.get("text") or "" for entry in item.get("summary") or []]
            thoughts += [part.get("text") or "" for part in item.get("content") or []
                         if isinstance(part, Mapping) and part.get("type") == "reasoning_text"]
            if item.get("encrypted_content"):  # with store: false, only the encrypted item can go back
                kept.append({"type": "reasoning", "id": item.get("id"), "encrypted_content": item["encrypted_content"],
                             "summary": list(item.get("summary") or [])})
    refusal = "".join(refusals) if refusals else None
    return LLMResponse(
        text="".join(texts), tool_calls=tuple(calls), usage=responses_usage(data.get("usage")),
        reasoning_content=_reasoning(summaries, thoughts), thinking_blocks=tuple(kept),
        refusal=refusal, finish_reason=_finish(data, bool(calls), refusal is not None),
        model=data.get("model") or request.model, provider=provider,
    )


def _reasoning(summaries: list[str], thoughts: list[str]) -> str | None:
    """The reasoning summaries (OpenAI), else the reasoning_text parts (returned whether asked for or not)."""
    if summaries:
        return "\n\n".join(summaries)
    return "".join(thoughts) or None


def _finish(data: Mapping[str, Any], calls: bool, refused: bool) -> str:
    """Chat's vocabulary: ``stop``, ``tool_calls``, ``length``, ``content_filter``, and ``refusal``."""
    if refused:
        return "refusal"
    if data.get("status") == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        return "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    return "tool_calls" if calls else "stop"


def responses_usage(usage: Mapping[str, Any] | None) -> Usage:
    """Reasoning tokens are inside ``output_tokens`` and cached ones inside ``input_tokens``; ours keeps
    reasoning apart and the cache as a part of the input."""
    if not usage:
        return Usage()
    reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0
    inputs = usage.get("input_tokens_details") or {}
    return Usage(input_tokens=usage.get("input_tokens") or 0,
                 output_tokens=max((usage.get("output_tokens") or 0) - reasoning, 0), reasoning_tokens=reasoning,
                 cached_input_tokens=inputs.get("cached_tokens") or 0,
                 cache_write_tokens=inputs.get("cache_write_tokens") or 0)


def stream_error_text(event: Mapping[str, Any]) -> str:
    """``code: message`` of a stream's ``error`` event, flat or with the fields nested under ``error``."""
    inner = event.get("error")
    fields = inner if isinstance(inner, Mapping) else event
    code = fields.get("code") or (fields.get("type") if fields is inner else None)
    message = fields.get("message") or "the provider sent an error event without a message"
    return f"{code}: {message}" if code else str(message)


class ResponsesStream:
    """Reads the ``response.*`` events of one streamed call, in order, into an :class:`LLMResponse`.

    Text deltas go to the run's listener as they come. The answer is the Response ``response.completed``
    (or ``response.incomplete``) carries; items seen done before it fill in an answer whose ``output`` is
    empty. ``response.failed`` raises, and so does an ``error`` event, flat (``{"type": "error", "code", "message"}``,
    as documented) or nested under ``error`` (as a recorded stream has it; the SDK raises that one first),
    with the event's code and message.
    """

    def __init__(self, request: LLMRequest, provider: str) -> None:
        self.request = request
        self.provider = provider
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            emit_text(event.get("delta") or "")
        elif kind == "response.output_item.done":
            self.items[int(event.get("output_index") or 0)] = dict(event.get("item") or {})
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.final = dict(event.get("response") or {})
        elif kind == "error":  # the documented shape is flat; the SDK raises a nested one itself
            raise MidStreamError(f"{self.provider}: the stream failed: {stream_error_text(event)}",
                                 provider=self.provider)

    def result(self) -> LLMResponse:
        if self.final is None:  # the connection closed cleanly, but the answer never came: a cut stream
            raise MidStreamError(f"{self.provider}: the stream ended before response.completed",
                                 provider=self.provider)
        if not self.final.get("output") and self.items:
            self.final["output"] = [self.items[index] for index in sorted(self.items)]
        return from_response(self.final, self.request, self.provider)
