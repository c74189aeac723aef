"""Providers: the neutral request/response types and the scripted provider for tests.

The SDK-backed providers (OpenAI, Anthropic, Google, Ollama, any
OpenAI-compatible server) and the gateway live in their own modules; they
import ``openai``/``anthropic`` only inside the calls that need them, so
importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from .._core.types import (
        EmbedRequest,
        EmbedResponse,
        LLMRequest,
        LLMResponse,
        Message,
        Provider,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from ._anthropic import AnthropicProvider
    from ._factory import create_provider, default_gateway
    from ._gateway import CircuitBreaker, Gateway
    from ._generic_openai import GenericOpenAIProvider
    from ._google import GoogleProvider
    from ._misbehaving import calls_unknown_tool, claims_done, invalid_call, never_finishes, obeys_injection, repeats
    from ._ollama import OllamaProvider
    from ._openai import OpenAIProvider
    from ._replies import embedding, error, reply, tool_call, tool_calls
    from ._scripted import Scripted, ScriptedCall

__all__ = [
    "AnthropicProvider",
    "CircuitBreaker",
    "EmbedRequest",
    "EmbedResponse",
    "Gateway",
    "GenericOpenAIProvider",
    "GoogleProvider",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "OllamaProvider",
    "OpenAIProvider",
    "Provider",
    "Scripted",
    "ScriptedCall",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "calls_unknown_tool",
    "claims_done",
    "create_provider",
    "default_gateway",
    "embedding",
    "error",
    "invalid_call",
    "never_finishes",
    "obeys_injection",
    "repeats",
    "reply",
    "tool_call",
    "tool_calls",
]

_EXPORTS = {
    "AnthropicProvider": "._anthropic",
    "CircuitBreaker": "._gateway",
    "Gateway": "._gateway",
    "GenericOpenAIProvider": "._generic_openai",
    "GoogleProvider": "._google",
    "OllamaProvider": "._ollama",
    "OpenAIProvider": "._openai",
    "create_provider": "._factory",
    "default_gateway": "._factory",
    "Scripted": "._scripted",
    "ScriptedCall": "._scripted",
    "calls_unknown_tool": "._misbehaving",
    "claims_done": "._misbehaving",
    "embedding": "._replies",
    "error": "._replies",
    "invalid_call": "._misbehaving",
    "never_finishes": "._misbehaving",
    "obeys_injection": "._misbehaving",
    "repeats": "._misbehaving",
    "reply": "._replies",
    "tool_call": "._replies",
    "tool_calls": "._replies",
    "EmbedRequest": ".._core.types",
    "EmbedResponse": ".._core.types",
    "LLMRequest": ".._core.types",
    "LLMResponse": ".._core.types",
    "Message": ".._core.types",
    "Provider": ".._core.types",
    "ToolCall": ".._core.types",
    "ToolSpec": ".._core.types",
    "Usage": ".._core.types",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
