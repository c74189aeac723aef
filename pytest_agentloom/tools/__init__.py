"""Tools: the registry, JSON Schema from type hints, the sandbox and the four built-ins.

Recorded results of tools with side effects (the tool tape) belong to record and replay:
:mod:`pytest_agentloom.replay._tool_tape`.
"""

from ..errors import SandboxRefusal
from ._builtins import BUILTIN_TOOL_NAMES, builtin_tools, run_tools
from ._registry import BaseTool, Tool, ToolRegistry, as_tool, tool, tools_by_name
from ._sandbox import Sandbox, SandboxConfig
from ._schema import schema_for_function, schema_for_type, validate_against

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "BaseTool",
    "Sandbox",
    "SandboxConfig",
    "SandboxRefusal",
    "Tool",
    "ToolRegistry",
    "as_tool",
    "builtin_tools",
    "run_tools",
    "schema_for_function",
    "schema_for_type",
    "tool",
    "tools_by_name",
    "validate_against",
]
