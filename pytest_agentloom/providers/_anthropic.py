"""Anthropic messages through the official ``anthropic`` SDK (imported at the first call).

``max_tokens`` is required by the API: 4096 when the step sets none, plus the
thinking budget when there is one (docs/providers.md: Reasoning). System turns become ``system``;
tool results become ``tool_result`` blocks of one user turn. Thinking is ``{type: enabled, budget_tokens}``
or ``{type: adaptive}``; ``effort`` and a json_schema ``response_format`` go in ``output_config``; a prefill is
the last (assistant) turn, which the reply continues.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._core.arguments import check_provider_settings
from .._core.types import Attachment, LLMRequest, LLMResponse, Message, ToolCall, Usage, emit_text, refuse_attachments
from ._common import (
    PLACEHOLDER_API_KEY,
    LoopLocal,
    Setting,
    check_params,
    dump_arguments,
    key_setting,
    named_tool_choice,
    parse_arguments,
    refuse_unsupported,
    required_unless_replay,
    sdk_http_client,
    speaker_prefixed,
    thinking_of,
)
from ._sdk_errors import translate_sdk_errors

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider", "anthropic_errors"]

DEFAULT_MAX_TOKENS = 4096


@contextlib.contextmanager
def anthropic_errors(provider: str, *, streaming_started: list[bool] | None = None) -> Iterator[None]:
    """Translate every ``anthropic`` SDK error (and a raw httpx one from a stream) to :class:`ProviderError`."""
    import anthropic

    with translate_sdk_errors(anthropic, provider, _status_message, streaming_started=streaming_started):
        yield


def _status_message(exc: Any) -> str:
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    inner: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
    detail = inner.get("message") or exc.message
    kind = inner.get("type")
    return f"{kind}: {detail}" if kind else str(detail)


class AnthropicProvider:
    """Anthropic's messages API. Key and base URL: constructor, else ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``."""

    name = "anthropic"
    #: calls the provider over HTTP: the ``agentloom`` fixture records and replays it in the test's cassette
    records_http = True

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeout: float = 600.0,
        api_key_env: str | None = None,
    ) -> None:
        check_provider_settings("AnthropicProvider()", api_key=api_key, base_url=base_url, timeout=timeout,
                                api_key_env=api_key_env)
        self._api_key = key_setting(api_key, (api_key_env or "ANTHROPIC_API_KEY",))
        self._base_url = Setting(base_url, ("ANTHROPIC_BASE_URL",))
        self._timeout = timeout
        self._client: LoopLocal[AsyncAnthropic] = LoopLocal(self._make_client)

    def _make_client(self) -> AsyncAnthropic:
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

        return AsyncAnthropic(
            api_key=required_unless_replay(self._api_key, self.name, "API key", PLACEHOLDER_API_KEY),
            base_url=self._base_url.resolve(),
            max_retries=0,
            timeout=self._timeout,
            http_client=sdk_http_client(DefaultAsyncHttpxClient, self._timeout),
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        refuse_attachments(request, self.name, image_urls=True, pdf=True)
        body = self.build_body(request)
        started = [False]
        with anthropic_errors(self.name, streaming_started=started):
            client = self._client.get()
            if request.stream:
                stream = await client.messages.create(**_sdk_arguments(body), stream=True)
                return await self._assemble(stream, request, started)
            message = await client.messages.create(**_sdk_arguments(body))
        return self._from_message(message, request)

    # -- request

    def build_body(self, request: LLMRequest) -> dict[str, Any]:
        """The JSON body of the request, as keyword arguments of ``messages.create``."""
        params = check_params(request, self.name)
        refuse_unsupported(request, self.name, prefill=True, strict_tools=True)
        system, messages = to_anthropic_messages(request.messages)
        if request.prefill is not None:  # the reply continues this turn; its text comes back without it
            messages.append({"role": "assistant", "content": request.prefill})
        thinking = thinking_of(params, request.thinking)
        budget = int(thinking.get("budget_tokens") or 0) if thinking else 0
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": params.get("max_tokens") or DEFAULT_MAX_TOKENS + budget,
            "messages": messages,
        }
        if system:
            body["system"] = system
        for key in ("temperature", "top_p", "service_tier"):
            if key in params:
                body[key] = params[key]
        if "stop" in params:
            stop = params["stop"]
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if thinking and thinking.get("type") == "adaptive":
            body["thinking"] = {"type": "adaptive"}
        elif thinking and budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        output_config = _output_config(params, thinking)
        if output_config:
            body["output_config"] = output_config
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters,
                 **({"strict": t.strict} if t.strict is not None else {})} for t in request.tools
            ]
            choice = anthropic_tool_choice(request.tool_choice)
            if choice is not None:
                body["tool_choice"] = choice
        return body

    # -- response

    def _from_message(self, message: Any, request: LLMRequest) -> LLMResponse:
        texts = [block.text for block in message.content if block.type == "text"]
        thoughts = [block.thinking for block in message.content if block.type == "thinking"]
        kept = tuple(_thinking_block(block) for block in message.content if block.type in _THINKING_TYPES)
        calls = tuple(
            ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input))
            for block in message.content
            if block.type == "tool_use"
        )
        return LLMResponse(
            text="".join(texts),
            tool_calls=calls,
            usage=_usage(message.usage),
            reasoning_content="".join(thoughts) if thoughts else None,
            thinking_blocks=kept,
            refusal=_refusal(message.stop_reason, getattr(message, "stop_details", None), "".join(texts)),
            finish_reason=message.stop_reason,
            model=message.model or request.model,
            provider=self.name,
        )

    async def _assemble(self, stream: Any, request: LLMRequest, started: list[bool]) -> LLMResponse:
        blocks: dict[int, dict[str, Any]] = {}
        model, finish, details = "", None, None
        usage = Usage()
        async for event in stream:
            started[0] = True
            kind = event.type
            if kind == "message_start":
                model = event.message.model or model
                usage = _usage(event.message.usage)
            elif kind == "content_block_start":
                block = event.content_block
                blocks[event.index] = {
                    "type": block.type,
                    "text": "",
                    "json": "",
                    "id": getattr(block, "id", ""),
                    "name": getattr(block, "name", ""),
                    "signature": getattr(block, "signature", "") or "",
                    "data": getattr(block, "data", "") or "",  # a redacted_thinking block's opaque text
                }
            elif kind == "content_block_delta":
                slot = blocks.setdefault(event.index, {"type": "text", "text": "", "json": "", "id": "", "name": ""})
                delta = event.delta
                if delta.type == "text_delta":
                    slot["text"] += delta.text
                    emit_text(delta.text)
                elif delta.type == "thinking_delta":
                    slot["text"] += delta.thinking
                elif delta.type == "signature_delta":
                    slot["signature"] = delta.signature
                elif delta.type == "input_json_delta":
                    slot["json"] += delta.partial_json
            elif kind == "message_delta":
                finish = event.delta.stop_reason or finish
                details = getattr(event.delta, "stop_details", None) or details
                if event.usage is not None:  # the totals so far: each count given replaces the start's
                    usage = _usage(event.usage, usage)
        ordered = [blocks[index] for index in sorted(blocks)]
        calls = tuple(
            ToolCall(id=slot["id"], name=slot["name"], arguments=dump_arguments(json.loads(slot["json"] or "{}")))
            for slot in ordered
            if slot["type"] == "tool_use"
        )
        thoughts = [slot["text"] for slot in ordered if slot["type"] == "thinking"]
        kept = tuple(
            {"type": "thinking", "thinking": slot["text"], "signature": slot["signature"]}
            if slot["type"] == "thinking" else {"type": "redacted_thinking", "data": slot["data"]}
            for slot in ordered if slot["type"] in _THINKING_TYPES
        )
        text = "".join(slot["text"] for slot in ordered if slot["type"] == "text")
        return LLMResponse(
            text=text,
            tool_calls=calls,
            usage=usage,
            reasoning_content="".join(thoughts) if thoughts else None,
            thinking_blocks=kept,
            refusal=_refusal(finish, details, text),
            finish_reason=finish,
            model=model or request.model,
            provider=self.name,
        )


#: body fields that SDKs older than the API's have no keyword for (anthropic 0.48, our floor, has neither)
_EXTRA_BODY_FIELDS = ("output_config", "service_tier")


def _sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as ``messages.create`` keywords: the fields of :data:`_EXTRA_BODY_FIELDS` go in the SDK's public
    ``extra_body`` (merged into the JSON as it is), so every supported SDK version sends the same request."""
    extra = {key: body[key] for key in _EXTRA_BODY_FIELDS if key in body}
    if not extra:
        return body
    return {**{key: value for key, value in body.items() if key not in extra}, "extra_body": extra}


def _output_config(params: dict[str, Any], thinking: dict[str, Any] | None) -> dict[str, Any]:
    """Anthropic's ``output_config``: ``effort`` from the thinking settings, ``format`` from a ``json_schema``
    ``response_format`` (sent by a step with tools and a response_schema; a plain structured step asks in
    the system prompt instead, see :mod:`pytest_agentloom.engine._calls.structured`)."""
    config: dict[str, Any] = {}
    if thinking and thinking.get("effort"):
        config["effort"] = thinking["effort"]
    response_format = params.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        config["format"] = {"type": "json_schema", "schema": _closed(schema)}
    return config


def _closed(node: Any) -> Any:
    """A copy of ``node`` whose objects all say ``additionalProperties: false`` where they say nothing, as
    Anthropic's structured outputs require (an agent's ``output_schema`` is sent as written otherwise)."""
    if isinstance(node, dict):
        copy = {key: _closed(value) for key, value in node.items()}
        if copy.get("type") == "object" and "additionalProperties" not in copy:
            copy["additionalProperties"] = False
        return copy
    if isinstance(node, list):
        return [_closed(value) for value in node]
    return node


def _usage(usage: Any, before: Usage | None = None) -> Usage:
    """Anthropic's ``input_tokens`` leaves out cache reads and writes; ours counts every input token, with the
    cache reads as ``cached_input_tokens`` and the writes as ``cache_write_tokens``. A count the event leaves
    out (``None``) keeps its value from ``before``."""
    before = before or Usage()
    read = _count(usage, "cache_read_input_tokens", before.cached_input_tokens)
    written = _count(usage, "cache_creation_input_tokens", before.cache_write_tokens)
    plain = _count(usage, "input_tokens", before.input_tokens - before.cached_input_tokens - before.cache_write_tokens)
    output = _count(usage, "output_tokens", before.output_tokens)
    return Usage(input_tokens=plain + read + written, output_tokens=output, cached_input_tokens=read,
                 cache_write_tokens=written)


def _count(usage: Any, name: str, default: int) -> int:
    value = getattr(usage, name, None)
    return int(value) if value is not None else default


def _refusal(stop_reason: str | None, details: Any, text: str) -> str | None:
    """``stop_reason: refusal``: the explanation of ``stop_details`` when there is one, else the reply's text."""
    if stop_reason != "refusal":
        return None
    explanation = details.get("explanation") if isinstance(details, dict) else getattr(details, "explanation", None)
    return str(explanation or text)


def to_anthropic_messages(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """System text and the turns in Anthropic's shape; consecutive tool results share one user turn."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content or "")
            continue
        if message.role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content or "",
            }
            last = turns[-1] if turns else None
            if last and last["role"] == "user" and isinstance(last["content"], list) and last.get("_tool_results"):
                last["content"].append(result)
            else:
                turns.append({"role": "user", "content": [result], "_tool_results": True})
            continue
        content = speaker_prefixed(message.role, message.content, message.name)
        if message.role == "assistant" and message.tool_calls:
            # with thinking on, the API wants the turn's thinking blocks back, first and unchanged
            blocks: list[dict[str, Any]] = [dict(block) for block in message.thinking_blocks
                                            if block.get("type") in _THINKING_TYPES]
            blocks += [{"type": "text", "text": content}] if content else []
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.name, "input": parse_arguments(call)}
                for call in message.tool_calls
            ]
            turns.append({"role": "assistant", "content": blocks})
        elif message.attachments:  # the files first, then the text, as Anthropic suggests
            parts = [_anthropic_block(item) for item in message.attachments]
            turns.append({"role": message.role, "content": [*parts, {"type": "text", "text": content or ""}]})
        else:
            turns.append({"role": message.role, "content": content or ""})
    for turn in turns:
        turn.pop("_tool_results", None)
    return "\n\n".join(system), turns


_THINKING_TYPES = ("thinking", "redacted_thinking")


def _anthropic_block(item: Attachment) -> dict[str, Any]:
    """An ``image`` block (base64 or url source) or a ``document`` block for a PDF."""
    kind = "document" if item.kind == "pdf" else "image"
    if item.url is not None:
        return {"type": kind, "source": {"type": "url", "url": item.url}}
    return {"type": kind, "source": {"type": "base64", "media_type": item.media_type, "data": item.base64()}}


def _thinking_block(block: Any) -> dict[str, Any]:
    """A thinking (or redacted_thinking) block of a reply, as the request sends it back."""
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {"type": "redacted_thinking", "data": block.data}


def anthropic_tool_choice(choice: Any) -> dict[str, Any] | None:
    """The ``tool_choice`` values in Anthropic's shape: ``required`` is ``any``, a named tool is ``tool``."""
    if choice is None:
        return None
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    name = named_tool_choice(choice)
    if name:
        return {"type": "tool", "name": name}
    return None
