"""The table the run dispatches on: the runner of each step type.

Every runner has the same shape: it reads the state through its
:class:`~.base.StepContext`, and returns a :class:`~.base.StepOutcome` (or a
:class:`~.base.PauseOutcome`) or raises a :class:`~pytest_agentloom.errors.StepError`.
Helpers shared by several types live beside them: :mod:`.retry` (the retry
table of model calls), :mod:`.tool_loop`, :mod:`.structured`, :mod:`.agent_loop`.
"""

from __future__ import annotations

from ..model import AgentStep, ApprovalGateStep, EmbedStep, LLMCallStep, RouterStep, SubworkflowStep, ToolStep
from .agent import run_agent
from .approval_gate import run_approval_gate
from .base import StepRunner
from .embed import run_embed
from .llm_call import run_llm_call
from .router import run_router
from .subworkflow import run_subworkflow
from .tool import run_tool

__all__ = ["STEP_RUNNERS"]

#: The runner of each step type.
STEP_RUNNERS: dict[type, StepRunner] = {
    LLMCallStep: run_llm_call,
    ToolStep: run_tool,
    RouterStep: run_router,
    EmbedStep: run_embed,
    ApprovalGateStep: run_approval_gate,
    AgentStep: run_agent,
    SubworkflowStep: run_subworkflow,
}
