"""The ``agent`` step: run an agent of the top-level ``agents:`` (see :mod:`..agents`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import StepError
from ..agents import AgentLoop, AgentPaused, AgentSnapshot
from ..model import AgentStep
from .approval_gate import PauseOutcome
from .base import StepContext, StepOutcome

__all__ = ["AgentPauseOutcome", "run_agent"]


@dataclass
class AgentPauseOutcome(PauseOutcome):
    """The agent proposed a call that needs approval: the run pauses, the loop's state goes in ``detail``."""

    detail: dict[str, Any] = field(default_factory=dict)


async def run_agent(
    step: AgentStep, ctx: StepContext, *, snapshot: Mapping[str, Any] | None = None, decision: str | None = None,
) -> StepOutcome:
    """Run the step's agent; with ``snapshot`` (from a checkpoint) continue it, settling ``decision``."""
    agent = ctx.workflow.agents.get(step.agent)
    if agent is None:  # the loader refuses this; a Workflow built in Python may still have it
        known = ", ".join(ctx.workflow.agents) or "none"
        raise StepError(f"agent step '{step.id}' runs unknown agent '{step.agent}' (defined agents: {known})",
                        code="unknown_agent")
    ctx.attempts = 1
    loop = AgentLoop(step, ctx, agent)
    if snapshot is not None:
        result = await loop.resume(AgentSnapshot.from_dict(snapshot), decision)
    else:
        result = await loop.run()
    if isinstance(result, AgentPaused):
        snap = result.snapshot
        return AgentPauseOutcome(
            value=None, finish_reason="needs_approval", usage=snap.usage, cost_usd=snap.cost_usd,
            detail={"agent": step.agent, "call": result.call.model_dump(), "loop": snap.to_dict()},
        )
    return result
