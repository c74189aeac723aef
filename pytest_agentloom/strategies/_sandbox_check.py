"""The sandbox invariant: every call of a built-in tool that ``config.sandbox`` refuses was refused, as a refusal.

A built-in tool checks the sandbox before it acts; a bug there (a check skipped, a path compared as text,
a tool of the same name that checks nothing) lets a model read, write, run or reach what the workflow's
author closed. After a run, :func:`check_sandbox` asks the run's own sandbox (the workflow's
``config.sandbox`` and folder, as the engine builds it for the built-ins) about each ``tool_call`` of the
trace. It only asks: the sandbox's checks resolve paths and find programs on ``PATH``, but nothing is run,
no file is opened and no host name is resolved (so a name that resolves to an internal address is left to
the run's own check at connection time; an IP literal or ``localhost`` is judged here).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from ..engine import WorkflowResult
from ..engine._format.model import Workflow
from ..errors import SandboxRefusal
from ..tools import BUILTIN_TOOL_NAMES, Sandbox, builtin_tools, validate_against

__all__ = ["check_sandbox", "refusal_due"]

#: the mark redaction leaves in place of a secret: arguments holding one are not what the tool was given
_REDACTED = "<REDACTED:"


def refusal_due(sandbox: Sandbox, tool: str, arguments: Mapping[str, Any]) -> SandboxRefusal | None:
    """The refusal ``sandbox`` owes a call of the built-in ``tool`` with ``arguments``, or ``None``: it allows
    the call, or the arguments are not ones the built-in would check (a path that is not text, a command
    ``shlex`` can't split), so the call fails before the sandbox is asked."""
    try:
        if tool in ("file_read", "file_write"):
            path = arguments.get("path")
            if not isinstance(path, str) or "\0" in path:
                return None
            if tool == "file_read":
                sandbox.check_read(path)
            else:
                content = arguments.get("content")
                sandbox.check_write(path, len(content.encode("utf-8")) if isinstance(content, str) else 0)
        elif tool == "shell_command":
            command, cwd = arguments.get("command"), arguments.get("cwd")
            if not isinstance(command, str) or not isinstance(cwd, (str, type(None))):
                return None
            folder = sandbox.check_read(cwd, "shell_command") if cwd is not None else sandbox.base_dir
            sandbox.check_command(shlex.split(command), cwd=folder)
        elif tool == "http_request":
            url = arguments.get("url")
            if not isinstance(url, str):
                return None
            sandbox.check_url(url)  # the checks that need no DNS; the run resolves names and checks each address
    except SandboxRefusal as refusal:
        return refusal
    except (OSError, ValueError, RuntimeError):  # a path or command the tool itself would fail on first
        return None
    return None


def check_sandbox(result: WorkflowResult) -> list[str]:
    """No built-in tool call that the run's sandbox refuses ran, and each failed as a sandbox refusal.

    A tool registered under a built-in's name (``file_read``, ``file_write``, ``shell_command``,
    ``http_request``) is judged as the built-in. A failed call must have failed with ``sandbox_refused`` when
    its arguments fit the built-in's parameters (others fail before any check), in a tool loop, an agent's
    turn or a ``tool`` step alike (each failed call's trace event carries its ``code``).
    """
    workflow = result.ran_workflow if isinstance(result.ran_workflow, Workflow) else None
    if workflow is None:
        return []
    sandbox = Sandbox(workflow.config.sandbox, base_dir=workflow.base_dir)  # children run with the parent's tools
    schemas: dict[str, dict[str, Any]] | None = None  # the built-ins' parameters, made once a failed call needs them
    problems = []
    for event in result.trace.events("tool_call"):
        tool, arguments = event.data.get("tool"), event.data.get("args")
        if tool not in BUILTIN_TOOL_NAMES or not isinstance(arguments, Mapping) or _REDACTED in str(arguments):
            continue
        due = refusal_due(sandbox, tool, arguments)
        if due is None:
            continue
        call = f"step '{event.step_id}' called {tool} {_shown(arguments)}"
        code = event.data.get("code")
        if event.data.get("ok"):
            problems.append(f"{call}, which ran although the sandbox refuses it (rule '{due.rule}')")
        elif code not in (None, due.code):
            if schemas is None:
                schemas = {made.name: made.parameters for made in builtin_tools(sandbox)}
            if not _fits(schemas[tool], arguments):
                continue
            problems.append(f"{call}, which failed with {code} where the sandbox refuses it (rule '{due.rule}'): "
                            "the tool acted before it asked the sandbox")
    return problems


def _fits(schema: dict[str, Any], arguments: Mapping[str, Any]) -> bool:
    """Whether the built-in would take ``arguments`` (so its sandbox check is what must refuse them)."""
    known = schema.get("properties") or {}
    return all(key in known for key in arguments) and not validate_against(schema, dict(arguments))


def _shown(arguments: Mapping[str, Any], limit: int = 100) -> str:
    text = json.dumps(dict(arguments), sort_keys=True, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
