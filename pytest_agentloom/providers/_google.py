"""Gemini's ``generateContent`` (and ``streamGenerateContent?alt=sse``) over httpx.

Key: constructor, else ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``, sent as the
``x-goog-api-key`` header (never in the URL). Base URL: constructor, else
``GOOGLE_GEMINI_BASE_URL``, else Google's. Gemini reports thinking tokens
apart (``thoughtsTokenCount``), and they count as reasoning tokens.
"""

from __future__ import annotations

from typing import Any

from .._core.arguments import check_provider_settings
from .._core.types import (
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
from ._common import (
    PLACEHOLDER_API_KEY,
    Setting,
    check_params,
    dump_arguments,
    key_setting,
    named_tool_choice,
    parse_arguments,
    plain_http_client,
    refuse_unsupported,
    required_unless_replay,
    thinking_of,
)
from ._http import HTTPStatusFailure, http_errors, iter_sse_data

__all__ = ["GoogleProvider"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


class GoogleProvider:
    """Google's Gemini API."""

    name = "google"
    #: calls the provider over HTTP: the ``agentloom`` fixture records and replays it in the test's cassette
    records_http = True

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeout: float = 600.0,
        api_key_env: str | None = None,
    ) -> None:
        check_provider_settings("GoogleProvider()", api_key=api_key, base_url=base_url, timeout=timeout,
                                api_key_env=api_key_env)
        self._api_key = key_setting(api_key, (api_key_env,) if api_key_env else ("GOOGLE_API_KEY", "GEMINI_API_KEY"))
        self._base_url = Setting(base_url, ("GOOGLE_GEMINI_BASE_URL",), DEFAULT_BASE_URL)
        self._timeout = timeout

    def _key(self) -> str:
        """The key; a replay (sealed: nothing leaves the process) needs none."""
        return required_unless_replay(self._api_key, self.name, "API key", PLACEHOLDER_API_KEY)

    def url_for(self, request: LLMRequest) -> str:
        base = (self._base_url.resolve() or DEFAULT_BASE_URL).rstrip("/")
        method = "streamGenerateContent?alt=sse" if request.stream else "generateContent"
        return f"{base}/v1beta/models/{request.model}:{method}"

    def build_body(self, request: LLMRequest) -> dict[str, Any]:
        params = check_params(request, self.name)
        refuse_unsupported(request, self.name, params=("service_tier",))  # no prefill, no strict tools
        system = [m.content or "" for m in request.messages if m.role == "system"]
        body: dict[str, Any] = {"contents": to_gemini_contents(request.messages)}
        if system:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
        config: dict[str, Any] = {}
        for ours, theirs in (
            ("temperature", "temperature"),
            ("max_tokens", "maxOutputTokens"),
            ("top_p", "topP"),
            ("seed", "seed"),
        ):
            if ours in params:
                config[theirs] = params[ours]
        if "stop" in params:
            stop = params["stop"]
            config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
        thinking = thinking_of(params, request.thinking)
        if thinking:
            block: dict[str, Any] = {"includeThoughts": bool(thinking.get("capture_reasoning", True))}
            if thinking.get("budget_tokens"):
                block["thinkingBudget"] = thinking["budget_tokens"]
            if thinking.get("level") or thinking.get("effort") in ("low", "medium", "high"):
                block["thinkingLevel"] = thinking.get("level") or thinking["effort"]
            config["thinkingConfig"] = block
        if "response_format" in params:
            config.update(gemini_response_format(params["response_format"]))
        if config:
            body["generationConfig"] = config
        if request.tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        {"name": t.name, "description": t.description, "parameters": t.parameters}
                        for t in request.tools
                    ]
                }
            ]
            tool_config = gemini_tool_config(request.tool_choice)
            if tool_config is not None:
                body["toolConfig"] = tool_config
        return body

    async def complete(self, request: LLMRequest) -> LLMResponse:
        import httpx

        refuse_attachments(request, self.name, pdf=True, audio=_GEMINI_AUDIO)
        body = self.build_body(request)
        started = [False]
        with http_errors(self.name, streaming_started=started):
            headers = {"x-goog-api-key": self._key()}
            async with plain_http_client(httpx, self._timeout) as client:
                if not request.stream:
                    response = await client.post(self.url_for(request), json=body, headers=headers)
                    if response.status_code >= 400:
                        raise HTTPStatusFailure(response.status_code, response.content)
                    return self._response([response.json()], request)
                async with client.stream("POST", self.url_for(request), json=body, headers=headers) as response:
                    if response.status_code >= 400:
                        raise HTTPStatusFailure(response.status_code, await response.aread())
                    events = []
                    async for event in iter_sse_data(response.aiter_lines()):
                        started[0] = True
                        events.append(event)
                        for candidate in (event.get("candidates") or [])[:1]:
                            for part in (candidate.get("content") or {}).get("parts") or []:
                                if not part.get("thought"):
                                    emit_text(part.get("text") or "")
                    return self._response(events, request)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """``batchEmbedContents``: one request per text, one vector back per text. Gemini reports no token count."""
        import httpx

        base = (self._base_url.resolve() or DEFAULT_BASE_URL).rstrip("/")
        url = f"{base}/v1beta/models/{request.model}:batchEmbedContents"
        size = {"outputDimensionality": request.dimensions} if request.dimensions is not None else {}
        body = {"requests": [{"model": f"models/{request.model}", "content": {"parts": [{"text": text}]}, **size}
                             for text in request.texts]}
        with http_errors(self.name):
            headers = {"x-goog-api-key": self._key()}
            async with plain_http_client(httpx, self._timeout) as client:
                response = await client.post(url, json=body, headers=headers)
                if response.status_code >= 400:
                    raise HTTPStatusFailure(response.status_code, response.content)
                data = response.json()
        vectors = [list(item.get("values") or []) for item in data.get("embeddings") or []]
        return EmbedResponse(vectors=vectors, model=request.model, provider=self.name)

    def _response(self, events: list[dict[str, Any]], request: LLMRequest) -> LLMResponse:
        text: list[str] = []
        thoughts: list[str] = []
        signatures: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        finish: str | None = None
        usage, model = Usage(), ""
        for event in events:
            model = event.get("modelVersion") or model
            if event.get("usageMetadata"):
                usage = _usage(event["usageMetadata"])
            for candidate in (event.get("candidates") or [])[:1]:
                finish = candidate.get("finishReason") or finish
                for part in (candidate.get("content") or {}).get("parts") or []:
                    if part.get("thought"):  # a thought summary, with includeThoughts
                        thoughts.append(part.get("text") or "")
                        continue
                    if "text" in part:
                        text.append(part["text"])
                    if "functionCall" in part:
                        call = part["functionCall"]
                        calls.append(
                            ToolCall(
                                id=call.get("id") or f"gemini_call_{request.turn}_{len(calls)}",
                                name=call.get("name", ""),
                                arguments=dump_arguments(call.get("args")),
                                signature=part.get("thoughtSignature"),  # goes back with the call, unchanged
                            )
                        )
                    elif part.get("thoughtSignature"):  # on a text part: goes back on the turn's text
                        signatures.append({"type": "thought_signature", "signature": part["thoughtSignature"]})
        return LLMResponse(
            text="".join(text),
            tool_calls=tuple(calls),
            usage=usage,
            reasoning_content="".join(thoughts) if thoughts else None,
            thinking_blocks=tuple(signatures),
            finish_reason=finish,
            model=model or request.model,
            provider=self.name,
        )


def _usage(metadata: dict[str, Any]) -> Usage:
    """``promptTokenCount`` includes the cached tokens (``cachedContentTokenCount``), as our input count does;
    thoughts are counted apart from ``candidatesTokenCount``, as ours are."""
    return Usage(
        input_tokens=metadata.get("promptTokenCount") or 0,
        output_tokens=metadata.get("candidatesTokenCount") or 0,
        reasoning_tokens=metadata.get("thoughtsTokenCount") or 0,
        cached_input_tokens=metadata.get("cachedContentTokenCount") or 0,
    )


_GEMINI_AUDIO = ("audio/wav", "audio/mpeg", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac")


def to_gemini_contents(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Turns as Gemini ``contents``: assistant is ``model``; a tool result is a ``functionResponse`` part."""
    names = {call.id: call.name for message in messages for call in message.tool_calls}
    contents: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            part = {
                "functionResponse": {
                    "name": names.get(message.tool_call_id or "", message.name or ""),
                    "response": {"result": message.content or ""},
                }
            }
            if contents and contents[-1].get("_tool_results"):
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part], "_tool_results": True})
            continue
        content = message.content
        if message.name and content is not None:
            content = f"[{message.name}] {content}"
        parts: list[dict[str, Any]] = [{"text": content}] if content else []
        signature = next((block["signature"] for block in message.thinking_blocks
                          if block.get("type") == "thought_signature"), None)
        if signature and parts:  # Gemini wants a text part's signature back on that part
            parts[0]["thoughtSignature"] = signature
        parts += [_call_part(call) for call in message.tool_calls]
        parts += [{"inlineData": {"mimeType": a.media_type, "data": a.base64()}} for a in message.attachments]
        contents.append({"role": "model" if message.role == "assistant" else "user", "parts": parts or [{"text": ""}]})
    for turn in contents:
        turn.pop("_tool_results", None)
    return contents


def _call_part(call: ToolCall) -> dict[str, Any]:
    """A ``functionCall`` part, with its ``thoughtSignature`` as it came (Gemini 3 refuses a call without it)."""
    part: dict[str, Any] = {"functionCall": {"name": call.name, "args": parse_arguments(call)}}
    if call.signature:
        part["thoughtSignature"] = call.signature
    return part


def gemini_tool_config(choice: Any) -> dict[str, Any] | None:
    """``tool_choice`` as Gemini's ``functionCallingConfig`` modes (a named tool is ``ANY`` limited to it)."""
    if choice is None:
        return None
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if isinstance(choice, str) and choice in modes:
        return {"functionCallingConfig": {"mode": modes[choice]}}
    name = named_tool_choice(choice)
    if name:
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    return None


def gemini_response_format(response_format: Any) -> dict[str, Any]:
    """OpenAI-style ``response_format`` as Gemini's JSON mode (the schema is passed as written)."""
    if not isinstance(response_format, dict) or response_format.get("type") not in ("json_object", "json_schema"):
        return {}
    config: dict[str, Any] = {"responseMimeType": "application/json"}
    schema = (response_format.get("json_schema") or {}).get("schema")
    if schema is not None:
        config["responseSchema"] = schema
    return config
