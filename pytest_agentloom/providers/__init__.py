"""Providers: the neutral request/response types and the scripted provider for tests.

The SDK-backed providers (OpenAI, Anthropic, Google, Ollama, any
OpenAI-compatible server) and the gateway live in their own (internal) modules;
they import ``openai``/``anthropic`` only inside the calls that need them, so
importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._anthropic": ("AnthropicProvider",),
    "._factory": ("create_provider", "default_gateway"),
    "._gateway": ("CircuitBreaker", "Gateway"),
    "._generic_openai": ("GenericOpenAIProvider",),
    "._google": ("GoogleProvider",),
    "._misbehaving": (
        "calls_unknown_tool", "claims_done", "invalid_call", "never_finishes", "obeys_injection", "repeats",
    ),
    "._ollama": ("OllamaProvider",),
    "._openai": ("OpenAIProvider",),
    "._replies": ("embedding", "error", "reply", "tool_call", "tool_calls"),
    "._scripted": ("Scripted", "ScriptedCall"),
    ".._core.types": (
        "EmbedRequest", "EmbedResponse", "LLMRequest", "LLMResponse", "Message", "Provider", "ToolCall", "ToolSpec",
        "Usage",
    ),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from .._core.types import EmbedRequest as EmbedRequest
    from .._core.types import EmbedResponse as EmbedResponse
    from .._core.types import LLMRequest as LLMRequest
    from .._core.types import LLMResponse as LLMResponse
    from .._core.types import Message as Message
    from .._core.types import Provider as Provider
    from .._core.types import ToolCall as ToolCall
    from .._core.types import ToolSpec as ToolSpec
    from .._core.types import Usage as Usage
    from ._anthropic import AnthropicProvider as AnthropicProvider
    from ._factory import create_provider as create_provider
    from ._factory import default_gateway as default_gateway
    from ._gateway import CircuitBreaker as CircuitBreaker
    from ._gateway import Gateway as Gateway
    from ._generic_openai import GenericOpenAIProvider as GenericOpenAIProvider
    from ._google import GoogleProvider as GoogleProvider
    from ._misbehaving import calls_unknown_tool as calls_unknown_tool
    from ._misbehaving import claims_done as claims_done
    from ._misbehaving import invalid_call as invalid_call
    from ._misbehaving import never_finishes as never_finishes
    from ._misbehaving import obeys_injection as obeys_injection
    from ._misbehaving import repeats as repeats
    from ._ollama import OllamaProvider as OllamaProvider
    from ._openai import OpenAIProvider as OpenAIProvider
    from ._replies import embedding as embedding
    from ._replies import error as error
    from ._replies import reply as reply
    from ._replies import tool_call as tool_call
    from ._replies import tool_calls as tool_calls
    from ._scripted import Scripted as Scripted
    from ._scripted import ScriptedCall as ScriptedCall
