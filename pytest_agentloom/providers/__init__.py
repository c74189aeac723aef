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
    from ..core.types import (
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
    from .anthropic_provider import AnthropicProvider
    from .gateway import CircuitBreaker, Gateway
    from .generic_openai import GenericOpenAIProvider
    from .google import GoogleProvider
    from .misbehaving import (
        calls_unknown_tool,
        claims_done,
        invalid_call,
        never_finishes,
        obeys_injection,
        repeats,
    )
    from .ollama import OllamaProvider
    from .openai_provider import OpenAIProvider
    from .registry import create_provider, default_gateway
    from .replies import embedding, error, reply, tool_call, tool_calls
    from .scripted import Scripted, ScriptedCall

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
    "AnthropicProvider": ".anthropic_provider",
    "CircuitBreaker": ".gateway",
    "Gateway": ".gateway",
    "GenericOpenAIProvider": ".generic_openai",
    "GoogleProvider": ".google",
    "OllamaProvider": ".ollama",
    "OpenAIProvider": ".openai_provider",
    "create_provider": ".registry",
    "default_gateway": ".registry",
    "Scripted": ".scripted",
    "ScriptedCall": ".scripted",
    "calls_unknown_tool": ".misbehaving",
    "claims_done": ".misbehaving",
    "embedding": ".replies",
    "error": ".replies",
    "invalid_call": ".misbehaving",
    "never_finishes": ".misbehaving",
    "obeys_injection": ".misbehaving",
    "repeats": ".misbehaving",
    "reply": ".replies",
    "tool_call": ".replies",
    "tool_calls": ".replies",
    "EmbedRequest": "..core.types",
    "EmbedResponse": "..core.types",
    "LLMRequest": "..core.types",
    "LLMResponse": "..core.types",
    "Message": "..core.types",
    "Provider": "..core.types",
    "ToolCall": "..core.types",
    "ToolSpec": "..core.types",
    "Usage": "..core.types",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
