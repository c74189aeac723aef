"""Providers: the neutral request/response types and the scripted provider for tests.

The SDK-backed providers (OpenAI, Anthropic, Google, Ollama, any
OpenAI-compatible server) and the gateway live in their own modules; they
import ``openai``/``anthropic`` only inside the calls that need them, so
importing this package stays cheap.
"""

from .anthropic_provider import AnthropicProvider
from .gateway import CircuitBreaker, Gateway
from .generic_openai import GenericOpenAIProvider
from .google import GoogleProvider
from .ollama import OllamaProvider
from .openai_provider import OpenAIProvider
from .registry import create_provider, default_gateway
from .scripted import (
    Scripted,
    ScriptedCall,
    calls_unknown_tool,
    claims_done,
    error,
    invalid_call,
    never_finishes,
    obeys_injection,
    repeats,
    reply,
    tool_call,
    tool_calls,
)
from .types import LLMRequest, LLMResponse, Message, Provider, ToolCall, ToolSpec, Usage

__all__ = [
    "AnthropicProvider",
    "CircuitBreaker",
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
    "error",
    "invalid_call",
    "never_finishes",
    "obeys_injection",
    "repeats",
    "reply",
    "tool_call",
    "tool_calls",
]
