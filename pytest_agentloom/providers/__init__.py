"""Providers: the neutral request/response types and the scripted provider for tests.

The SDK-backed providers are imported lazily from their own modules, so
importing this package stays cheap.
"""

from .scripted import Scripted, ScriptedCall, error, reply, tool_call
from .types import LLMRequest, LLMResponse, Message, Provider, ToolCall, ToolSpec, Usage

__all__ = [
    "LLMRequest",
    "LLMResponse",
    "Message",
    "Provider",
    "Scripted",
    "ScriptedCall",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "error",
    "reply",
    "tool_call",
]
