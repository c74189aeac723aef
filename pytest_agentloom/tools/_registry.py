"""Tools as the engine knows them, and the registry a run looks them up in.

Three ways to make a tool:

- the :func:`tool` decorator on a function (sync or async); the parameters'
  JSON Schema comes from its type hints unless ``parameters=`` is given, and
  the description from the first paragraph of its docstring;
- a class with ``name``, ``description`` and a ``run`` method (subclass
  :class:`BaseTool`, or any class with those attributes), registered as the
  class or as an instance;
- a plain callable under a name, as in ``run_workflow(tools={"lookup": fn})``.

A tool marked ``side_effects=True`` writes, sends or executes something; the
built-ins ``file_write``, ``shell_command`` and ``http_request`` are marked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._core.arguments import bad_argument
from .._core.types import ToolSpec
from ..errors import UsageError, render_message
from ._schema import schema_for_function

__all__ = ["BaseTool", "Tool", "ToolRegistry", "as_tool", "is_tool_like", "tool", "tools_by_name"]


@dataclass(frozen=True)
class Tool:
    """A named function the engine may call, with what the model is told about it.

    Calling a ``Tool`` calls its function, so a decorated function stays usable
    as a function.
    """

    name: str
    function: Callable[..., Any] = field(repr=False)
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    side_effects: bool = False

    def __post_init__(self) -> None:
        """A tool is named and callable from the start: a wrong one fails where it was made, not mid-run."""
        if not isinstance(self.name, str) or not self.name.strip():
            raise bad_argument("Tool()", "name", self.name, "a non-empty string: the name steps call it by")
        if not callable(self.function):
            raise bad_argument("Tool()", "function", self.function, "a function or other callable")
        if not isinstance(self.parameters, Mapping):
            raise bad_argument("Tool()", "parameters", self.parameters,
                               'a JSON Schema object as a dict, e.g. {"type": "object", "properties": {}}')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Call the function with keyword ``arguments``, awaiting it when it is async."""
        value = self.function(**arguments)
        if inspect.isawaitable(value):
            value = await value
        return value


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    side_effects: bool = False,
) -> Any:
    """Make a :class:`Tool` of a function; usable bare (``@tool``) or with arguments (``@tool(name=...)``)."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return _from_function(fn, name=name, description=description, parameters=parameters,
                              side_effects=side_effects)

    return wrap(function) if function is not None else wrap


class BaseTool:
    """Base class for class-style tools: set ``name`` and ``description``, implement ``run``.

    ``parameters`` defaults to the schema of ``run``'s keyword parameters;
    set it to give the schema yourself. Override ``run`` only.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any] | None] = None
    side_effects: ClassVar[bool] = False

    def run(self, **kwargs: Any) -> Any:  # pragma: no cover - the subclass's job
        raise NotImplementedError(f"{type(self).__name__}.run is not implemented")


#: what :func:`as_tool` takes, as a refusal names it
_TOOL_FORMS = "a Tool, a BaseTool subclass or instance, or a callable (a function, sync or async)"


def _from_function(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
    parameters: dict[str, Any] | None = None, side_effects: bool = False,
) -> Tool:
    if not callable(fn):
        raise bad_argument("the tool" + (f" '{name}'" if name else ""), "function", fn, _TOOL_FORMS)
    tool_name = name or getattr(fn, "__name__", None)
    if not tool_name or tool_name == "<lambda>":
        raise UsageError("a tool needs a name: pass name='...' (a lambda has none)")
    return Tool(
        name=tool_name, function=fn,
        description=description if description is not None else _first_paragraph(inspect.getdoc(fn)),
        parameters=dict(parameters) if parameters is not None else schema_for_function(fn),
        side_effects=side_effects,
    )


def _from_object(obj: Any, name: str | None = None) -> Tool:
    instance = obj() if isinstance(obj, type) else obj
    run = getattr(instance, "run", None)
    tool_name = name or getattr(instance, "name", "") or ""
    if not callable(run) or not tool_name:
        raise UsageError(
            render_message(f"{type(instance).__name__} is not a tool class: it needs a 'name' and a 'run' method.",
                           hint="subclass pytest_agentloom.tools.BaseTool, or decorate a function with @tool.",
                                inline=True)
        )
    description = getattr(instance, "description", None)
    return Tool(
        name=tool_name, function=run,
        description=description if description is not None else _first_paragraph(inspect.getdoc(type(instance))),
        parameters=dict(getattr(instance, "parameters", None) or schema_for_function(run)),
        side_effects=bool(getattr(instance, "side_effects", False)),
    )


def _first_paragraph(doc: str | None) -> str:
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() if doc else ""


def as_tool(obj: Any, name: str | None = None) -> Tool:
    """Whatever was registered (a Tool, a tool class or instance, a callable) as a :class:`Tool`."""
    if not isinstance(obj, Tool) and _looks_like_tool(obj):  # a Tool of a re-imported copy of this module
        obj = Tool(name=obj.name, function=obj.function, description=obj.description,
                   parameters=dict(obj.parameters), side_effects=bool(obj.side_effects))
    if isinstance(obj, Tool):
        return obj if name is None or name == obj.name else Tool(
            name=name, function=obj.function, description=obj.description, parameters=obj.parameters,
            side_effects=obj.side_effects,
        )
    if isinstance(obj, type) or (hasattr(obj, "run") and hasattr(obj, "name") and not inspect.isroutine(obj)):
        return _from_object(obj, name)
    return _from_function(obj, name=name)


def _looks_like_tool(obj: Any) -> bool:
    return not isinstance(obj, type) and all(
        hasattr(obj, attribute) for attribute in ("name", "function", "description", "parameters", "side_effects"))


def is_tool_like(obj: Any) -> bool:
    """Whether ``obj`` names itself: a :class:`Tool` (``@tool``), or a tool class or instance with ``run``."""
    return isinstance(obj, Tool) or _looks_like_tool(obj) or hasattr(obj, "run")


class ToolRegistry(Mapping[str, Tool]):
    """Tools by name. A later registration under the same name replaces the earlier one."""

    def __init__(self, tools: Iterable[Any] | Mapping[str, Any] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        if tools is not None:
            self.update(tools)

    def register(self, obj: Any, *, name: str | None = None) -> Tool:
        """Add a tool (a :class:`Tool`, a tool class or instance, or a callable) and return it."""
        made = as_tool(obj, name)
        self._tools[made.name] = made
        return made

    def update(self, tools: Iterable[Any] | Mapping[str, Any]) -> None:
        """Register many: a mapping of name to tool, or an iterable of tools.

        Another registry's tools are taken as they are: each already is a :class:`Tool` under its own
        name (every run starts from the kept registry of the built-ins).
        """
        if isinstance(tools, ToolRegistry):
            self._tools.update(tools._tools)
        elif isinstance(tools, Mapping):
            for key, value in tools.items():
                if not str(key).strip():
                    raise bad_argument("ToolRegistry()", "tools", dict(tools),
                                       "names that are non-empty strings, as the workflow's steps call them")
                self.register(value, name=str(key))
        elif isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise bad_argument("ToolRegistry()", "tools", tools,
                               "a mapping of tool names to tools, or a list of tools; each tool " + _TOOL_FORMS)
        else:
            for value in tools:
                self.register(value)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"<ToolRegistry {sorted(self._tools)}>"


def tools_by_name(tools: Any) -> dict[str, Any]:
    """A ``tools=`` argument as name -> tool: a mapping as it is, a list of named tools by their names.

    The one check of every API that takes ``tools=`` (runs, resumes, the fixture, markers): a
    list may only hold tools that name themselves (``@tool`` functions, tool classes or instances).
    """
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        return dict(tools)
    if isinstance(tools, (list, tuple)):
        nameless = [item for item in tools if not is_tool_like(item)]
        if nameless:
            shown = getattr(nameless[0], "__name__", repr(nameless[0]))
            raise UsageError(
                render_message(
                    f"tools must map tool names to callables, got list with {shown}, which is not a "
                    "tool.",
                    hint=f"pass tools={{'{shown}': {shown}}}, or decorate it with @pytest_agentloom.tools.tool.",
                    inline=True)
            )
        return dict(ToolRegistry(tools))
    raise UsageError(f"tools must map tool names to callables, got {type(tools).__name__}")
