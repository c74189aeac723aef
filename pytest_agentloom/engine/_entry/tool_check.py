"""Before a run starts: every tool an agent lists must be one the run was given.

An agent's ``tools:`` names tools the run's registry must hold. Found only when the agent's step runs, a
typo (``serch``) failed the run after every earlier step had made its model calls (and spent their cost);
so a run checks them before its first step, for the workflow and its subworkflows, and fails naming the
agent, its ``tools`` entry (file and line) and the closest registered tool.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..._core.suggest import did_you_mean
from ..._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ..._core.yaml_lines import line_of
from ...errors import ErrorCode, UsageError, render_message
from .._format.model import AgentStep, ToolDeclaration, Workflow

__all__ = ["check_agent_tools"]


def check_agent_tools(workflow: Workflow, tools: Mapping[str, Any]) -> None:
    """Raise :class:`UsageError` (code ``unknown_tool``) for the first agent ``tools`` entry not in ``tools``."""
    for owner, agent_name, index, name in _listed(workflow):
        if name in tools:
            continue
        hint = did_you_mean(name, sorted(tools))
        error = UsageError(render_message(
            f"Workflow '{workflow.name}' cannot start: agent '{agent_name}' lists tool '{name}', which is not "
            "registered.",
            [("file", _where(owner, agent_name, index)), ("field", f"agents.{agent_name}.tools[{index}]"),
             ("registered tools", ", ".join(sorted(tools)) or "none")],
            hint=(hint + " " if hint else "") + "register it (run_workflow(tools=[...]), agentloom run --tools, or "
                 "the agentloom fixture's tools=), or correct the name in the agent's 'tools:'.",
        ))
        error.code = ErrorCode.UNKNOWN_TOOL.value
        raise error


def _listed(workflow: Workflow) -> Iterator[tuple[Workflow, str, int, str]]:
    """``(workflow, agent, position, tool name)`` for each tool an agent step of ``workflow`` (or of a child) uses."""
    used = {step.agent for step in workflow.steps if isinstance(step, AgentStep)}
    for agent_name in sorted(used):
        agent = workflow.agents.get(agent_name)
        for index, item in enumerate(agent.tools if agent is not None else ()):
            yield workflow, agent_name, index, item.name if isinstance(item, ToolDeclaration) else item
    for child in workflow.compiled.children.values():
        yield from _listed(child)


def _where(workflow: Workflow, agent: str, index: int) -> str | None:
    """``file:line`` of the entry (the file alone when it cannot be read again)."""
    if workflow.source is None:
        return None
    try:
        text = read_text_capped(workflow.source, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file")
    except (OSError, ValueError, RuntimeError):
        return str(workflow.source)
    line = line_of(text, None, f"agents.{agent}.tools[{index}]")
    return f"{workflow.source}:{line}" if line else str(workflow.source)
