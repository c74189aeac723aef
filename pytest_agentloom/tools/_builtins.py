"""The four built-in tools: ``http_request``, ``shell_command``, ``file_read``, ``file_write``.

Each is made by :func:`builtin_tools`, bound to a
:class:`~pytest_agentloom.tools._sandbox.Sandbox`, and checks the sandbox
before doing anything; :func:`run_tools` keeps them per workflow folder and
sandbox settings, so runs of one workflow share them. What they return is scrubbed of the value of every
``*_API_KEY`` environment variable (:mod:`pytest_agentloom._redaction.api_keys`), and
``shell_command`` runs its program with a minimal environment
(:meth:`~pytest_agentloom.tools._sandbox.Sandbox.command_env`). Blocking work (a subprocess, an HTTP request) runs off
the event loop, so concurrent tool calls of one reply don't wait on each other.
"""

from __future__ import annotations

import os
import shlex
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from .._core.speedups import speedups_on
from .._redaction.api_keys import redact_api_keys
from ..errors import ToolError
from ._processes import read_text_prefix, run_command
from ._registry import Tool, ToolRegistry, tool
from ._sandbox import Sandbox, SandboxConfig

__all__ = ["BUILTIN_TOOL_NAMES", "builtin_tools", "run_tools"]

BUILTIN_TOOL_NAMES = ("http_request", "shell_command", "file_read", "file_write")
_MAX_OUTPUT_CHARS = 100_000
#: each built-in's parameters and description: derived from its type hints and docstring once, not every run
_SCHEMAS: dict[str, tuple[dict[str, Any], str]] = {}


#: folders of workflows -> built-in tools made for them, each with the sandbox settings they check (see _bound)
_BOUND: OrderedDict[Path, list[tuple[SandboxConfig, ToolRegistry]]] = OrderedDict()
#: folders kept, the least recently used going first; and sandbox settings kept per folder
_MAX_FOLDERS = 64
_MAX_PER_FOLDER = 8


def run_tools(sandbox: SandboxConfig | None, base_dir: Path, tools: Mapping[str, Any] | None = None) -> ToolRegistry:
    """The tools of one run: the four built-ins bound to ``sandbox``, then ``tools``, which win on a name."""
    registry = ToolRegistry(_bound(sandbox or SandboxConfig(), base_dir))
    registry.update(tools or {})
    return registry


def _bound(settings: SandboxConfig, base_dir: Path) -> ToolRegistry:
    """The built-ins for ``settings`` in ``base_dir``: made once per folder and settings, not every run.

    Making them (four closures and their :class:`Tool`) was a fixed cost of every run, while a
    built-in holds nothing of a run: only its sandbox, which holds only the settings and the folder.
    Each kept set checks a private copy of the settings it was made for, found again by comparing
    values, so settings a test changes in place after a run (``workflow.config.sandbox.enabled =
    False``) are never checked with the old values: they no longer compare equal, and new built-ins
    are made for them. With ``AGENTLOOM_SPEEDUPS=0`` every run makes its own.
    """
    if not speedups_on():
        return ToolRegistry(builtin_tools(Sandbox(settings, base_dir=base_dir)))
    made = _BOUND.get(base_dir)
    if made is None:
        made = _BOUND[base_dir] = []
        while len(_BOUND) > _MAX_FOLDERS:
            _BOUND.popitem(last=False)
    else:
        _BOUND.move_to_end(base_dir)
    for kept, bound in made:
        if type(kept) is type(settings) and kept.__dict__ == settings.__dict__:  # their values: pydantic's == minus
            return bound  # the private and extra attributes a SandboxConfig has none of, in C
    own = settings.model_copy(deep=True)
    bound = ToolRegistry(builtin_tools(Sandbox(own, base_dir=base_dir)))  # never handed out: runs copy it
    made.insert(0, (own, bound))
    del made[_MAX_PER_FOLDER:]
    return bound


def _builtin(*, side_effects: bool = False) -> Callable[[Callable[..., Any]], Tool]:
    """``@tool`` for a built-in: its schema and description are the same for every run, so they are derived
    once (type hints, docstring), and each run only binds the functions to its sandbox."""

    def wrap(function: Callable[..., Any]) -> Tool:
        if not speedups_on():
            return tool(function, side_effects=side_effects)
        known = _SCHEMAS.get(function.__name__)
        if known is None:
            made = tool(function, side_effects=side_effects)
            known = _SCHEMAS[function.__name__] = (made.parameters, made.description)
        parameters, description = known
        return tool(function, side_effects=side_effects, parameters=parameters, description=description)

    return wrap


def builtin_tools(sandbox: Sandbox) -> list[Tool]:
    """The built-in tools of one run, each checking ``sandbox`` before it acts."""

    @_builtin(side_effects=True)
    async def http_request(
        url: str,
        method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = "GET",
        headers: dict[str, str] | None = None,
        body: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Make an HTTP request and return its status and body."""
        sandbox.check_url(url)
        await sandbox.check_resolved(url)
        import httpx  # imported here: the engine must stay cheap to import

        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                     transport=sandbox.http_transport()) as client:
            response = await client.request(method, url, headers=headers, content=body)
        return {"status": response.status_code, "body": redact_api_keys(response.text[:_MAX_OUTPUT_CHARS])}

    @_builtin(side_effects=True)
    async def shell_command(command: str, timeout: float = 30.0, cwd: str | None = None) -> dict[str, Any]:
        """Run a command (no shell: pipes and redirections are not interpreted) and return its output.

        ``cwd`` (upstream's argument) is the folder it runs in, relative to the workflow's folder; with the
        sandbox enabled it must be readable (``readable_paths``).
        """
        folder = sandbox.check_read(cwd, "shell_command") if cwd is not None else sandbox.base_dir
        argv = sandbox.check_command(shlex.split(command), cwd=folder)
        done = await run_command(argv, cwd=folder, timeout=timeout, env=sandbox.command_env())
        return {**done, "stdout": redact_api_keys(done["stdout"]), "stderr": redact_api_keys(done["stderr"])}

    @_builtin()
    def file_read(path: str) -> str:
        """Read a text file and return its content."""
        _refuse_nul("file_read", path)
        target = sandbox.check_read(path)
        return redact_api_keys(read_text_prefix(target, _MAX_OUTPUT_CHARS,
                                                opener=lambda: sandbox.open_checked(path, target, tool="file_read")))

    @_builtin(side_effects=True)
    def file_write(path: str, content: str, append: bool = False) -> dict[str, Any]:
        """Write text to a file (replacing it unless append is true) and return the bytes written."""
        _refuse_nul("file_write", path)
        data = content.encode("utf-8")
        target = sandbox.check_write(path, len(data))
        with os.fdopen(sandbox.open_checked(path, target, tool="file_write", append=append), "wb") as handle:
            handle.write(data)
        return {"path": str(path), "bytes": len(data)}

    return [http_request, shell_command, file_read, file_write]


def _refuse_nul(tool_name: str, path: str) -> None:
    """A NUL cannot be part of a path; say so instead of letting the operating system's ValueError through."""
    if "\0" in path:
        raise ToolError(f"{tool_name}: the path {path!r} holds a NUL character, which no file name can hold")
