"""Ollama's native ``/api/chat`` over httpx: JSON, or NDJSON when streaming.

Host: constructor, else ``OLLAMA_HOST`` (``host:port`` or a URL), else
``http://127.0.0.1:11434``. Ollama ignores ``tool_choice`` (docs/workflow-format.md, llm_call) and counts
reasoning inside ``eval_count``.
"""

from __future__ import annotations

import json
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
    Setting,
    check_params,
    dump_arguments,
    parse_arguments,
    plain_http_client,
    refuse_unsupported,
    speaker_prefixed,
    thinking_of,
)
from ._http import HTTPStatusFailure, http_errors

__all__ = ["OllamaProvider"]


class OllamaProvider:
    """A local (or remote) Ollama server."""

    name = "ollama"
    #: calls the provider over HTTP: the ``agentloom`` fixture records and replays it in the test's cassette
    records_http = True

    def __init__(self, *, host: str | None = None, timeout: float = 600.0) -> None:
        check_provider_settings("OllamaProvider()", host=host, timeout=timeout)
        self._host = Setting(host, ("OLLAMA_HOST",), "http://127.0.0.1:11434")
        self._timeout = timeout

    def base_url(self) -> str:
        host = self._host.resolve() or ""
        if "://" not in host:
            host = f"http://{host}"
        return host.rstrip("/")

    def build_body(self, request: LLMRequest) -> dict[str, Any]:
        params = check_params(request, self.name)
        refuse_unsupported(request, self.name, params=("service_tier",), prefill=True)  # no strict tools
        messages = [_to_ollama(message, request.messages) for message in request.messages]
        if request.prefill is not None:  # Ollama continues a last assistant turn; the reply comes back without it
            messages.append({"role": "assistant", "content": request.prefill})
        body: dict[str, Any] = {"model": request.model, "messages": messages, "stream": request.stream}
        options: dict[str, Any] = {}
        if "temperature" in params:
            options["temperature"] = params["temperature"]
        if "max_tokens" in params:
            options["num_predict"] = params["max_tokens"]
        for key in ("top_p", "seed", "stop"):
            if key in params:
                options[key] = params[key]
        if options:
            body["options"] = options
        thinking = thinking_of(params, request.thinking)
        if thinking:
            body["think"] = thinking.get("level") or True
        if "response_format" in params:
            body["format"] = _format_of(params["response_format"])
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        return body

    async def complete(self, request: LLMRequest) -> LLMResponse:
        import httpx

        refuse_attachments(request, self.name)
        body = self.build_body(request)
        started = [False]
        with http_errors(self.name, streaming_started=started):
            async with plain_http_client(httpx, self._timeout) as client:
                if not request.stream:
                    response = await client.post(f"{self.base_url()}/api/chat", json=body)
                    if response.status_code >= 400:
                        raise HTTPStatusFailure(response.status_code, response.content)
                    return self._response([response.json()], request)
                async with client.stream("POST", f"{self.base_url()}/api/chat", json=body) as response:
                    if response.status_code >= 400:
                        raise HTTPStatusFailure(response.status_code, await response.aread())
                    lines = []
                    async for line in response.aiter_lines():
                        if line.strip():
                            started[0] = True
                            lines.append(json.loads(line))
                            emit_text((lines[-1].get("message") or {}).get("content") or "")
                    return self._response(lines, request)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """``POST /api/embed`` with every text as ``input``; ``prompt_eval_count`` is the input token count."""
        import httpx

        body: dict[str, Any] = {"model": request.model, "input": list(request.texts)}
        if request.dimensions is not None:
            body["dimensions"] = request.dimensions
        with http_errors(self.name):
            async with plain_http_client(httpx, self._timeout) as client:
                response = await client.post(f"{self.base_url()}/api/embed", json=body)
                if response.status_code >= 400:
                    raise HTTPStatusFailure(response.status_code, response.content)
                data = response.json()
        usage = Usage(input_tokens=int(data.get("prompt_eval_count") or 0))
        return EmbedResponse(vectors=[list(vector) for vector in data.get("embeddings") or []], usage=usage,
                             model=data.get("model") or request.model, provider=self.name)

    def _response(self, lines: list[dict[str, Any]], request: LLMRequest) -> LLMResponse:
        text: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        final = lines[-1] if lines else {}
        for line in lines:
            if line.get("error"):
                raise HTTPStatusFailure(500, json.dumps({"error": line["error"]}).encode())
            message = line.get("message") or {}
            text.append(message.get("content") or "")
            thoughts.append(message.get("thinking") or "")
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls.append(
                    ToolCall(
                        id=call.get("id") or f"ollama_call_{request.turn}_{len(calls)}",
                        name=function.get("name", ""),
                        arguments=dump_arguments(function.get("arguments")),
                    )
                )
        return LLMResponse(
            text="".join(text),
            tool_calls=tuple(calls),
            usage=Usage(input_tokens=final.get("prompt_eval_count") or 0, output_tokens=final.get("eval_count") or 0),
            reasoning_content="".join(thoughts) or None,
            finish_reason=final.get("done_reason"),
            model=final.get("model") or request.model,
            provider=self.name,
        )


def _to_ollama(message: Message, history: tuple[Message, ...]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "role": message.role,
        "content": speaker_prefixed(message.role, message.content, message.name) or "",
    }
    if message.tool_calls:
        data["tool_calls"] = [
            {"function": {"name": call.name, "arguments": parse_arguments(call)}} for call in message.tool_calls
        ]
    if message.attachments:  # images only (refused before the call otherwise), as bare base64
        data["images"] = [item.base64() for item in message.attachments]
    if message.role == "tool":
        name = _tool_name(message.tool_call_id, history)
        if name:
            data["tool_name"] = name
    return data


def _tool_name(call_id: str | None, history: tuple[Message, ...]) -> str | None:
    for message in history:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.name
    return None


def _format_of(response_format: Any) -> Any:
    if isinstance(response_format, dict):
        schema = (response_format.get("json_schema") or {}).get("schema")
        return schema if schema is not None else "json"
    return response_format
