"""The table the run dispatches on: the runner of each step type.

Every runner has the same shape: it reads the state through its
:class:`~.._outcome.step_context.StepContext`, and returns a :class:`~.._outcome.step_context.StepOutcome` (or a
:class:`~.._outcome.step_context.PauseOutcome`) or raises a :class:`~pytest_agentloom.errors.StepError`.
Helpers shared by several types live beside them: :mod:`.._calls.retry` (the retry
table of model calls), :mod:`.._calls.tool_loop`, :mod:`.._calls.structured`, :mod:`.._calls.agent_loop`.

A runner's module is imported the first time a workflow that has a step of its type
is prepared to run (:func:`load_runners`, called before the run's first step), not
when the engine is imported (likewise the tool loop, structured replies and attachments
of ``llm_call``): a process that runs only ``llm_call`` steps (a scenario
table) never pays for the agent loop, the approval gate's webhook, subworkflows or
embeddings. Since a run loads the runners of all its step types before it starts,
a runner that cannot be imported fails the run up front, never halfway through it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping

from .._format.model import (
    AgentStep,
    AnyStep,
    ApprovalGateStep,
    EmbedStep,
    LLMCallStep,
    RouterStep,
    SubworkflowStep,
    ToolStep,
)
from .._outcome.step_context import StepRunner

__all__ = ["STEP_RUNNERS", "load_runners"]


_STEP_TYPES = "pytest_agentloom.engine._steps"  # the package of the step types
#: Where each step type's runner is: a module of this package, and the function in it.
_RUNNER_AT: dict[type, tuple[str, str]] = {
    LLMCallStep: ("llm_call", "run_llm_call"),
    ToolStep: ("tool", "run_tool"),
    RouterStep: ("router", "run_router"),
    EmbedStep: ("embed", "run_embed"),
    ApprovalGateStep: ("approval_gate", "run_approval_gate"),
    AgentStep: ("agent", "run_agent"),
    SubworkflowStep: ("subworkflow", "run_subworkflow"),
}


def _importer(module: str, function: str) -> Callable[[], StepRunner]:
    """What imports one runner (as the provider registry imports a provider's class: by name, when needed)."""
    def load() -> StepRunner:
        runner: StepRunner = getattr(importlib.import_module(f"{_STEP_TYPES}.{module}"), function)
        return runner
    return load


_IMPORTERS: dict[type, Callable[[], StepRunner]] = {kind: _importer(*at) for kind, at in _RUNNER_AT.items()}


class _RunnerTable(Mapping[type, StepRunner]):
    """Step type -> runner, each runner imported on its first lookup and kept.

    A read-only mapping over every step type (iterating it imports them all); a lookup of a
    type already loaded is one dictionary lookup.
    """

    def __init__(self, importers: Mapping[type, Callable[[], StepRunner]]) -> None:
        self._importers = importers
        self._loaded: dict[type, StepRunner] = {}

    def __getitem__(self, kind: type) -> StepRunner:
        try:
            return self._loaded[kind]
        except KeyError:
            runner = self._loaded[kind] = self._importers[kind]()  # KeyError for a type that has no runner
            return runner

    def __iter__(self) -> Iterator[type]:
        return iter(self._importers)

    def __len__(self) -> int:
        return len(self._importers)


#: The runner of each step type.
STEP_RUNNERS: Mapping[type, StepRunner] = _RunnerTable(_IMPORTERS)


def load_runners(steps: Iterable[AnyStep]) -> None:
    """Import what these steps need to run: the run calls it with its workflow's steps before the first one runs.

    A step of a type without a runner (a ``Workflow`` built in Python with a type of its own) is left for
    the run to fail on when it reaches it, as it always did.
    """
    for step in steps:
        kind = type(step)
        if kind not in _IMPORTERS:
            continue
        STEP_RUNNERS[kind]
        if isinstance(step, LLMCallStep):
            from .._steps.llm_call import prepare

            prepare(step)
