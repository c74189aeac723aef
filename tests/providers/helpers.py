"""Small builders shared by the provider tests."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import httpx

from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message, Provider, ToolSpec


def request(
    model: str = "gpt-4o",
    prompt: str = "hello",
    *,
    system: str | None = None,
    stream: bool = False,
    params: dict[str, Any] | None = None,
    tools: tuple[ToolSpec, ...] = (),
    tool_choice: Any = None,
    messages: tuple[Message, ...] | None = None,
    provider: str | None = None,
) -> LLMRequest:
    if messages is None:
        turns = [Message(role="system", content=system)] if system else []
        messages = (*turns, Message(role="user", content=prompt))
    return LLMRequest(
        step_id="ask",
        model=model,
        messages=messages,
        params=params or {},
        stream=stream,
        tools=tools,
        tool_choice=tool_choice,
        provider=provider,
    )


def complete(provider: Provider, req: LLMRequest) -> LLMResponse:
    return asyncio.run(provider.complete(req))


LOOKUP = ToolSpec(
    name="lookup",
    description="Look a word up.",
    parameters={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)


def sdk_error_classes(module):
    """Every class the SDK exports at its top level that subclasses its ``APIError`` (without loading lazy parts)."""
    exported = (vars(module).get(name) for name in getattr(module, "__all__", dir(module)))
    return [cls for cls in exported if inspect.isclass(cls) and issubclass(cls, module.APIError)]


def sdk_error_instance(module, cls):
    """An instance of ``cls`` built the way the SDK builds it, or bare when its constructor is special."""
    req = httpx.Request("POST", "http://127.0.0.1/v1/x")
    response = httpx.Response(418, request=req, json={"error": {"message": "teapot"}})
    try:
        if issubclass(cls, module.APIStatusError):
            return cls("teapot", response=response, body={"message": "teapot"})
        if issubclass(cls, module.APIConnectionError):
            return cls(request=req)
        if issubclass(cls, module.APIResponseValidationError):
            return cls(response=response, body=None)
        return cls("generic", req, body=None)
    except TypeError:
        exc = cls.__new__(cls)
        exc.request, exc.body, exc.message = req, None, "bare"
        if issubclass(cls, (module.APIStatusError, module.APIResponseValidationError)):
            exc.response, exc.status_code = response, 418
        return exc
