"""Tools: the registry, JSON Schema from type hints, the sandbox and the four built-ins."""

from .builtins import BUILTIN_TOOL_NAMES, builtin_tools
from .registry import BaseTool, Tool, ToolRegistry, as_tool, tool
from .sandbox import Sandbox, SandboxRefusal
from .schema import schema_for_function, schema_for_type, validate_against
from .tape import TAPE_FORMAT_VERSION, ToolReplayMissError, ToolTape, tape_path

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "TAPE_FORMAT_VERSION",
    "BaseTool",
    "Sandbox",
    "SandboxRefusal",
    "Tool",
    "ToolRegistry",
    "ToolReplayMissError",
    "ToolTape",
    "as_tool",
    "builtin_tools",
    "schema_for_function",
    "schema_for_type",
    "tape_path",
    "tool",
    "validate_against",
]
