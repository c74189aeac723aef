"""The ``agent`` step: run an agent of the top-level ``agents:``; the loop itself is in :mod:`.._calls.agent_loop`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..._core.types import emit_text
from ..._redaction.redactor import Redactor
from ...errors import StepError
from .._calls.agent_loop import AgentLoop, AgentPaused, AgentSnapshot
from .._calls.conversation import agent_turn, close_turn, open_turn
from .._format.model import AgentStep
from .._outcome.step_context import PauseOutcome, StepContext, StepOutcome

__all__ = ["run_agent"]


async def run_agent(step: AgentStep, ctx: StepContext) -> StepOutcome:
    """Run the step's agent; resumed at a call that waited for approval, continue it with the decision.

    The checkpoint holds the loop scrubbed of secret values. Each marker whose value the resumed
    run's state has again (``state=`` on resume) is put back, so the model, the pending call and
    the repeat check see the real value; markers that stay are traced (``agent_redacted``).
    """
    awaiting = ctx.run.awaiting(step.id)
    snapshot = awaiting.pending.detail.get("loop") if awaiting and awaiting.pending.detail is not None else None
    decision = awaiting.decision if awaiting else None
    agent = ctx.workflow.agents.get(step.agent)
    if agent is None:  # the loader refuses this; a Workflow built in Python may still have it
        known = ", ".join(ctx.workflow.agents) or "none"
        raise StepError(f"agent step '{step.id}' runs unknown agent '{step.agent}' (defined agents: {known})",
                        code="unknown_agent")
    ctx.attempts = 1
    turn = None
    model = agent.model or ctx.workflow.config.model
    if step.conversation is not None and snapshot is None and model:  # the agent speaks in it by its name
        turn = await open_turn(agent_turn(step, agent), ctx, model)
    loop = AgentLoop(step, ctx, agent, first_messages=turn.messages if turn is not None else None)
    if snapshot is not None:
        snapshot = _restore_secrets(snapshot, ctx.run.redactor, ctx)
        result = await loop.resume(AgentSnapshot.from_dict(snapshot), decision)
    else:
        result = await loop.run()
    if isinstance(result, AgentPaused):
        snap = result.snapshot
        return PauseOutcome(
            value=None, finish_reason="needs_approval", usage=snap.usage, cost_usd=snap.cost_usd,
            detail={"agent": step.agent, "call": result.call.model_dump(), "loop": snap.to_dict()},
        )
    if ctx.workflow.config.stream and isinstance(result.value, str):  # agent turns don't stream; the
        emit_text(result.value)  # answer reaches the stream (agentloom run --stream) whole, at the end
    if turn is not None:
        return close_turn(turn, result, spend_counted=False, text=loop.snapshot.last_text)
    return result


def _restore_secrets(snapshot: Mapping[str, Any], redactor: Redactor, ctx: StepContext) -> Mapping[str, Any]:
    """``snapshot`` with the markers of secrets the state holds again replaced by their values."""
    secrets = {*redactor.secret_values(ctx.state), *redactor.secret_values(ctx.workflow.state)}
    values = {redactor.marker(secret): secret for secret in secrets}
    markers = redactor.policy.marker_pattern

    def put_back(value: Any) -> Any:
        if isinstance(value, str):
            return markers.sub(lambda match: values.get(match.group(0), match.group(0)), value)
        if isinstance(value, Mapping):
            return {key: put_back(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [put_back(item) for item in value]
        return value

    restored = put_back(snapshot)
    left = sorted(set(markers.findall(json.dumps(restored, sort_keys=True))))
    if left:  # the model will read these markers instead of the values
        ctx.event("agent_redacted", markers=len(left), hint=(
            "the paused loop held redacted values that this resume did not put back; resume with state={...} "
            "holding the redacted keys to give the agent the real values"))
    return restored
