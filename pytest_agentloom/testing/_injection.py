"""Fault injection in a test's run: the faults checked against the workflow, put in front of its provider
and tools (the faults themselves: :mod:`pytest_agentloom.providers._faults`, docs/resilience.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, render_message
from ..providers._faults import Fault, FaultingProvider, check_faults, tool_faults
from ..tools._registry import Tool, as_tool

if TYPE_CHECKING:
    from .._core.types import Provider
    from ..engine._format.model import Workflow

__all__ = ["inject_faults", "model_steps", "tool_names"]


def model_steps(workflow: Workflow) -> dict[str, bool]:
    """Each step that calls a model (``llm_call``, ``agent``), and whether it streams."""
    default = bool(workflow.config.stream)
    steps: dict[str, bool] = {}
    for step in workflow.steps:
        if step.type in ("llm_call", "agent"):
            own = getattr(step, "stream", None)
            steps[step.id] = default if own is None else bool(own)
    return steps


def tool_names(workflow: Workflow, tools: Mapping[str, Any]) -> set[str]:
    """The tools a run has: those given to it, and those its steps name."""
    names = set(tools)
    for step in workflow.steps:
        if step.type == "tool":
            names.add(str(getattr(step, "tool_name", "")))
        for declared in getattr(step, "tools", None) or ():
            names.add(declared if isinstance(declared, str) else declared.name)
    return names


def inject_faults(workflow: Workflow, faults: tuple[Fault, ...], provider: Provider, tools: Mapping[str, Any], *,
                  http: bool, recording: bool, where: str) -> tuple[Provider, Mapping[str, Any]]:
    """The run's provider and tools with ``faults`` in front of them.

    ``http``: the provider is the test's cassette, which answers a status or timeout fault as the
    provider's real error response. A recording is refused: a fault would be recorded as the provider's
    answer. Unknown targets fail here, before any call, with a "did you mean".
    """
    if recording:
        raise UsageError(render_message(
            f"{where}: faults are injected into a replayed (or scripted) run, and this one records "
            f"({', '.join(fault.spec for fault in faults)}).",
            hint="record without --agentloom-inject, then replay with it"))
    checked = check_faults(faults, model_steps(workflow), tool_names(workflow, tools), f"{where} ({workflow.name})")
    before = tool_faults(checked)
    if before:
        tools = _faulted_tools(workflow, tools, before)
    if any(not fault.tool for fault in checked):
        provider = FaultingProvider(provider, checked, http=http)
    return provider, tools


def _faulted_tools(workflow: Workflow, tools: Mapping[str, Any],
                   before: Mapping[str, Callable[[int], None]]) -> dict[str, Any]:
    """``tools`` with each faulted one counting its calls and raising its fault on the targeted call."""
    present: Mapping[str, Any] = tools
    if any(name not in tools for name in before):  # a built-in the run adds itself
        from ..tools._builtins import run_tools

        present = run_tools(workflow.config.sandbox, workflow.base_dir, tools)
    out = dict(present)
    for name, hook in before.items():
        out[name] = _counted(as_tool(present[name], name), hook)
    return out


def _counted(tool: Tool, before: Callable[[int], None]) -> Tool:
    calls = 0

    async def call(**arguments: Any) -> Any:
        nonlocal calls
        calls += 1
        before(calls)
        return await tool.invoke(arguments)

    return dataclasses.replace(tool, function=call)
