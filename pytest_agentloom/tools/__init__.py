"""Tools: the registry, JSON Schema from type hints, the sandbox and the four built-ins.

Recorded results of tools with side effects (the tool tape) belong to record and replay:
:class:`pytest_agentloom.replay.ToolTape`. The modules behind these names (``_registry``, ``_schema``,
``_sandbox``, ``_commands`` and its ``_argv``, ``_git``, ``_sed``, ``_processes``, ``_builtins``) are
internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._builtins": ("BUILTIN_TOOL_NAMES", "builtin_tools", "run_tools"),
    "._registry": ("BaseTool", "Tool", "ToolRegistry", "as_tool", "tool", "tools_by_name"),
    "._sandbox": ("Sandbox", "SandboxConfig"),
    "._schema": ("schema_for_function", "schema_for_type", "validate_against"),
    "..errors": ("SandboxRefusal",),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from ..errors import SandboxRefusal as SandboxRefusal
    from ._builtins import BUILTIN_TOOL_NAMES as BUILTIN_TOOL_NAMES
    from ._builtins import builtin_tools as builtin_tools
    from ._builtins import run_tools as run_tools
    from ._registry import BaseTool as BaseTool
    from ._registry import Tool as Tool
    from ._registry import ToolRegistry as ToolRegistry
    from ._registry import as_tool as as_tool
    from ._registry import tool as tool
    from ._registry import tools_by_name as tools_by_name
    from ._sandbox import Sandbox as Sandbox
    from ._sandbox import SandboxConfig as SandboxConfig
    from ._schema import schema_for_function as schema_for_function
    from ._schema import schema_for_type as schema_for_type
    from ._schema import validate_against as validate_against
