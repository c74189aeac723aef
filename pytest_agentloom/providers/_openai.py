"""OpenAI chat completions, or the Responses API, through the official ``openai`` SDK (imported at the first call).

``api`` chooses the API: ``chat_completions``, ``responses`` (:mod:`._openai_responses`), or ``auto`` (the
default), which is chat completions except for the models OpenAI serves only over Responses.

Reasoning models (o-series and GPT-5, except ``o1-mini`` and ``gpt-5-chat``)
get ``max_tokens`` as ``max_completion_tokens`` and no ``temperature``, and
``reasoning_effort`` from ``thinking.level`` (docs/providers.md: Reasoning). The SDK's own retries are
off: the engine's retry table decides.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._core.arguments import check_choice, check_optional_text, check_positive_number
from .._core.types import (
    Attachment,
    EmbedRequest,
    EmbedResponse,
    LLMRequest,
    LLMResponse,
    Message,
    ToolCall,
    Usage,
    emit_text,
    refuse_attachments,
)
from ..errors import ProviderError
from ._common import (
    PLACEHOLDER_API_KEY,
    LoopLocal,
    Setting,
    check_params,
    key_setting,
    named_tool_choice,
    refuse_unsupported,
    required_unless_replay,
    sdk_http_client,
    thinking_of,
)
from ._openai_responses import ResponsesStream, build_responses_body, from_response, responses_only
from ._sdk_errors import translate_sdk_errors

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["APIS", "OpenAIProvider", "is_reasoning_model", "openai_errors"]

APIS = ("auto", "chat_completions", "responses")

_REASONING = re.compile(r"^(o\d|gpt-5)")
_NOT_REASONING = re.compile(r"^(o1-mini|gpt-5-chat)")


def is_reasoning_model(model: str) -> bool:
    """True for the models that reason on their own and take ``max_completion_tokens``."""
    name = model.rsplit("/", 1)[-1]
    return bool(_REASONING.match(name)) and not _NOT_REASONING.match(name)


@contextlib.contextmanager
def openai_errors(provider: str, *, streaming_started: list[bool] | None = None) -> Iterator[None]:
    """Translate every ``openai`` SDK error (and a raw httpx one from a stream) to :class:`ProviderError`.

    Most specific first: a status error keeps its HTTP status; a timeout or a
    dropped connection has none, so the engine retries it. ``streaming_started``
    marks errors after the first chunk, which the gateway must not fall back on.
    """
    import openai

    with translate_sdk_errors(openai, provider, _status_message, streaming_started=streaming_started):
        yield


def _status_message(exc: Any) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    detail = body.get("message") or exc.message
    kind = body.get("type") or body.get("code")
    code = body.get("code")
    if code and kind and code != kind:  # e.g. a stream's error event: type server_error, code rate_limit_exceeded
        kind = f"{kind} ({code})"
    return f"{kind}: {detail}" if kind else str(detail)


class OpenAIProvider:
    """OpenAI's chat completions. Key and base URL: constructor, else ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``."""

    name = "openai"
    #: calls the provider over HTTP: the ``agentloom`` fixture records and replays it in the test's cassette
    records_http = True
    _key_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    _url_env: tuple[str, ...] = ("OPENAI_BASE_URL",)
    _default_url: str | None = None  # the SDK's own default
    _reasoning_rules = True

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        name: str | None = None,
        api_key_env: str | None = None,
        api: str = "auto",
    ) -> None:
        call = f"{type(self).__name__}()"
        for label, text in (("api_key", api_key), ("base_url", base_url), ("name", name),
                            ("api_key_env", api_key_env)):
            check_optional_text(call, label, text)
        check_positive_number(call, "timeout", timeout)
        check_choice(call, "api", api, APIS)
        if name is not None:
            self.name = name
        self.api = api
        self._api_key = key_setting(api_key, (api_key_env,) if api_key_env else self._key_env)
        self._base_url = Setting(base_url, self._url_env, self._default_url)
        self._timeout = timeout
        self._client: LoopLocal[AsyncOpenAI] = LoopLocal(self._make_client)

    def _make_client(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        return AsyncOpenAI(
            api_key=self._resolve_key(),
            base_url=self._resolve_base_url(),
            max_retries=0,
            timeout=self._timeout,
            http_client=sdk_http_client(DefaultAsyncHttpxClient, self._timeout),
        )

    def _resolve_key(self) -> str:
        return required_unless_replay(self._api_key, self.name, "API key", PLACEHOLDER_API_KEY)

    def _resolve_base_url(self) -> str | None:
        return self._base_url.resolve()  # None: the SDK's own default

    def api_for(self, model: str) -> str:
        """The API a call to ``model`` goes over: the setting, or for ``auto`` what the model needs."""
        if self.api != "auto":
            return self.api
        return "responses" if self._reasoning_rules and responses_only(model) else "chat_completions"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if self.api_for(request.model) == "responses":
            return await self._respond(request)
        refuse_attachments(request, self.name, image_urls=True, audio=("audio/wav", "audio/mpeg", "audio/mp3"))
        body = self.build_body(request)
        started = [False]
        with openai_errors(self.name, streaming_started=started):
            client = self._client.get()
            if request.stream:
                stream = await client.chat.completions.create(
                    **body, stream=True, stream_options={"include_usage": True}
                )
                return await self._assemble(stream, request, started)
            completion = await client.chat.completions.create(**body)
        return self._from_completion(completion, request)

    async def _respond(self, request: LLMRequest) -> LLMResponse:
        """One call over the Responses API (``client.responses.create``), streamed or not."""
        refuse_attachments(request, self.name, image_urls=True, pdf=True)
        body = self.build_responses_body(request)
        started = [False]
        with openai_errors(self.name, streaming_started=started):
            client = self._client.get()
            if not request.stream:
                answer = await client.responses.create(**body)
                return from_response(answer.model_dump(mode="json"), request, self.name)
            reader = ResponsesStream(request, self.name)
            try:
                async for event in await client.responses.create(**body, stream=True):
                    started[0] = True
                    reader.feed(_event_data(event.model_dump(mode="json")))
            except Exception as exc:
                _raise_stream_error(exc, reader, started[0])
                raise
        return reader.result()

    def build_responses_body(self, request: LLMRequest) -> dict[str, Any]:
        """The JSON body of a Responses API call, as keyword arguments of ``responses.create``."""
        reasoning = self._reasoning_rules and is_reasoning_model(request.model)
        return build_responses_body(request, check_params(request, self.name), reasoning=reasoning,
                                    provider=self.name)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """``POST /v1/embeddings`` through the SDK, asking for floats; one vector per text, in order."""
        with openai_errors(self.name):
            client = self._client.get()
            create = client.embeddings.create
            if request.dimensions is not None:
                answer = await create(model=request.model, input=list(request.texts), encoding_format="float",
                                      dimensions=request.dimensions)
            else:
                answer = await create(model=request.model, input=list(request.texts), encoding_format="float")
        ordered = sorted(answer.data, key=lambda item: item.index)
        usage = Usage(input_tokens=answer.usage.prompt_tokens if answer.usage is not None else 0)
        return EmbedResponse(vectors=[list(item.embedding) for item in ordered], usage=usage,
                             model=answer.model or request.model, provider=self.name)

    # -- request

    def build_body(self, request: LLMRequest) -> dict[str, Any]:
        """The JSON body of the request, as keyword arguments of ``chat.completions.create``."""
        params = check_params(request, self.name)
        refuse_unsupported(request, self.name, strict_tools=True)  # no prefill: chat completions has none
        reasoning = self._reasoning_rules and is_reasoning_model(request.model)
        body: dict[str, Any] = {"model": request.model, "messages": [to_openai_message(m) for m in request.messages]}
        if "temperature" in params and not reasoning:
            body["temperature"] = params["temperature"]
        if "max_tokens" in params:
            body["max_completion_tokens" if reasoning else "max_tokens"] = params["max_tokens"]
        for key in ("top_p", "stop", "seed", "response_format", "service_tier"):
            if key in params:
                body[key] = params[key]
        thinking = thinking_of(params, request.thinking)
        effort = thinking and (thinking.get("level") or thinking.get("effort"))
        if reasoning and effort:
            body["reasoning_effort"] = effort
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters,
                                 **({"strict": t.strict} if t.strict is not None else {})},
                }
                for t in request.tools
            ]
            choice = openai_tool_choice(request.tool_choice)
            if choice is not None:
                body["tool_choice"] = choice
        return body

    # -- response

    def _from_completion(self, completion: Any, request: LLMRequest) -> LLMResponse:
        if not completion.choices:
            raise ProviderError(f"{self.name}: the reply has no choices", status=200, provider=self.name)
        choice = completion.choices[0]
        calls = tuple(
            ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "{}")
            for call in (choice.message.tool_calls or [])
            if getattr(call, "function", None) is not None
        )
        refusal = _refusal(getattr(choice.message, "refusal", None), choice.message.content, calls)
        return LLMResponse(
            text=choice.message.content or "",
            tool_calls=calls,
            usage=_usage(completion.usage),
            reasoning_content=_reasoning_text(choice.message) or None,
            refusal=refusal,
            finish_reason="refusal" if refusal is not None else choice.finish_reason,
            model=completion.model or request.model,
            provider=self.name,
        )

    async def _assemble(self, stream: Any, request: LLMRequest, started: list[bool]) -> LLMResponse:
        parts: list[str] = []
        thoughts: list[str] = []
        refusals: list[str] | None = None
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage = Usage()
        model = ""
        async for chunk in stream:
            started[0] = True
            model = chunk.model or model
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            elif (extra := _provider_usage(chunk)) is not None:
                usage = _usage(extra)
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    parts.append(delta.content)
                    emit_text(delta.content)
                thoughts.append(_reasoning_text(delta))
                if getattr(delta, "refusal", None) is not None:  # the first piece may be "": still a refusal
                    refusals = (refusals or []) + [delta.refusal]
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function is not None:
                        slot["name"] = call.function.name or slot["name"]
                        slot["arguments"] += call.function.arguments or ""
                if choice.finish_reason:
                    finish = choice.finish_reason
        tool_calls = tuple(
            ToolCall(id=slot["id"], name=slot["name"], arguments=slot["arguments"] or "{}")
            for _, slot in sorted(calls.items())
        )
        refusal = _refusal("".join(refusals) if refusals is not None else None, "".join(parts), tool_calls)
        return LLMResponse(
            text="".join(parts),
            tool_calls=tool_calls,
            usage=usage,
            reasoning_content="".join(thoughts) or None,
            refusal=refusal,
            finish_reason="refusal" if refusal is not None else finish,
            model=model or request.model,
            provider=self.name,
        )


def _provider_usage(chunk: Any) -> Any:
    """Usage a compatible server puts in its own field of a chunk when the standard one is absent: Groq's
    ``x_groq.usage`` (read as the SDK's ``CompletionUsage``), else ``None``."""
    extra = getattr(chunk, "x_groq", None)
    found = extra.get("usage") if isinstance(extra, dict) else None
    if not isinstance(found, dict):
        return None
    from openai.types import CompletionUsage

    return CompletionUsage.model_validate({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, **found})


def _event_data(event: dict[str, Any]) -> dict[str, Any]:
    """The event as the API sent it. Older SDKs (openai 1.81, our floor, among them) hand an event whose SSE name
    does not start with
    ``response.`` (the flat ``error`` event) over wrapped, as ``{"data": ..., "event": name}``."""
    data = event.get("data")
    if event.get("type") is None and isinstance(data, dict) and isinstance(event.get("event"), str):
        return {"type": event["event"], **data}
    return event


def _raise_stream_error(exc: Exception, reader: ResponsesStream, started: bool) -> None:
    """An ``error`` event the SDK raised itself (nested under ``error``, as ``openai.APIError`` with that
    object as ``body``) is read as the stream reader reads a flat one: its code and message are kept."""
    import openai

    body = getattr(exc, "body", None)
    if started and isinstance(exc, openai.APIError) and not isinstance(exc, openai.APIStatusError) \
            and isinstance(body, dict):
        reader.feed({"type": "error", "error": body})  # raises MidStreamError


def _usage(usage: Any) -> Usage:
    """OpenAI counts reasoning inside ``completion_tokens`` and cached input inside ``prompt_tokens``.

    Ours keeps reasoning apart and the cache as a part of the input. DeepSeek reports its cache hits as
    ``prompt_cache_hit_tokens``; OpenRouter its cache writes as ``prompt_tokens_details.cache_write_tokens``.
    """
    if usage is None:
        return Usage()
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = (getattr(details, "reasoning_tokens", None) or 0) if details is not None else 0
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(prompt_details, "cached_tokens", None) or getattr(usage, "prompt_cache_hit_tokens", None) or 0
    completion = usage.completion_tokens or 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=max(completion - reasoning, 0),
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
        cache_write_tokens=getattr(prompt_details, "cache_write_tokens", None) or 0,
    )


def _refusal(refusal: str | None, text: str | None, calls: tuple[ToolCall, ...]) -> str | None:
    """The refusal text, when the reply is one: OpenAI streams a refusal's first piece as ``""``, but an empty
    ``refusal`` beside an answer (as some compatible servers send) is no refusal."""
    if refusal is None or (not refusal and (text or calls)):
        return None
    return refusal


def _reasoning_text(message: Any) -> str:
    """The reasoning text OpenAI-compatible servers add to a message or a delta: ``reasoning_content``
    (DeepSeek, vLLM) or ``reasoning`` (OpenRouter, Ollama's /v1, Cerebras). OpenAI itself sends neither."""
    for field in ("reasoning_content", "reasoning"):
        value = getattr(message, field, None)
        if isinstance(value, str) and value:
            return value
    return ""


def to_openai_message(message: Message) -> dict[str, Any]:
    """One neutral message in OpenAI's shape; a speaker's name travels as ``name``."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None and message.role in ("user", "assistant", "system"):
        data["name"] = message.name
    if message.tool_calls:
        data["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in message.tool_calls
        ]
    if message.role == "tool":
        data["tool_call_id"] = message.tool_call_id
        data["content"] = message.content or ""
    if message.attachments:
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content or ""}]
        parts += [_openai_part(item) for item in message.attachments]
        data["content"] = parts
    return data


def _openai_part(item: Attachment) -> dict[str, Any]:
    """An image as ``image_url`` (a data: URL, or the URL itself), audio as ``input_audio`` (wav or mp3)."""
    if item.kind == "audio":
        audio_format = "wav" if item.media_type == "audio/wav" else "mp3"
        return {"type": "input_audio", "input_audio": {"data": item.base64(), "format": audio_format}}
    url = item.url if item.url is not None else item.data_url()
    return {"type": "image_url", "image_url": {"url": url}}


def openai_tool_choice(choice: Any) -> Any:
    """``auto``/``none``/``required`` as given; ``{name: x}`` as OpenAI's named function choice."""
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    name = named_tool_choice(choice)
    if name:
        return {"type": "function", "function": {"name": name}}
    return choice
