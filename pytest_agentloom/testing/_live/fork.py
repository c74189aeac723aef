"""Forking a recorded run: replayed up to a named step, then answered by another provider, model or prompt.

"What would another model do here?" should not need a full re-record. A fork runs the
test's workflow twice from its cassette: once replayed whole (the recorded run), once
with every model request from the first request of step ``at`` on (in the engine's
order, which is fixed) sent to ``then`` instead of the cassette, with ``model`` put in
its place when given. The steps before ``at`` replay their recorded answers, so the
fork starts from exactly the recorded state; the two runs are then compared by the
drift comparison (:mod:`.drift_diff`). Nothing is written: the cassette is only read,
and a fork's runs are compared with no snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._settings.drift_outputs import OutputMethods
from .drift_diff import TestDrift, compare_test
from .trace_facts import run_facts

if TYPE_CHECKING:
    from ..._core.types import LLMRequest, LLMResponse, Provider
    from ...engine._outcome.result import WorkflowResult

__all__ = ["ForkResult", "ForkedProvider", "compare_fork"]


class ForkedProvider:
    """Answers from ``recorded`` until the first request of step ``at``, from ``then`` from that one on."""

    def __init__(self, recorded: Provider, then: Provider, at: str, *, model: str | None = None) -> None:
        self.recorded, self.then, self.at, self.model = recorded, then, at, model
        self.forked = False  # set at the first request of ``at``: every later request goes to ``then``

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if not self.forked and request.step_id == self.at:
            self.forked = True
        if not self.forked:
            return await self.recorded.complete(request)
        if self.model is not None:
            request = request.model_copy(update={"model": self.model})
        return await self.then.complete(request)

    async def embed(self, request: Any) -> Any:
        side = self.then if self.forked else self.recorded
        return await side.embed(request)  # type: ignore[attr-defined]


@dataclass
class ForkResult:
    """A fork's two runs and what changed between them: ``recorded`` (replayed whole) and ``forked``."""

    __test__ = False

    recorded: WorkflowResult
    forked: WorkflowResult
    at: str
    drift: TestDrift = field(repr=False)

    @property
    def changes(self) -> list[str]:
        return self.drift.changes

    @property
    def verdict(self) -> str:
        """``identical``, ``benign`` or ``regression``, as a drift check says it."""
        return self.drift.verdict


def compare_fork(nodeid: str, workflow_key: str, recorded: WorkflowResult, forked: WorkflowResult, at: str,
                 methods: OutputMethods | None = None, *, then: Provider | None = None,
                 provider_name: str | None = None) -> ForkResult:
    """The :class:`ForkResult` of two finished runs of ``workflow_key``; an ``embedding`` or ``judge`` comparison
    asks ``then`` (the fork's provider, see :mod:`.output_scores`)."""
    from .output_scores import ask_scores

    methods = methods or OutputMethods()
    facts = [run_facts(result, workflow_key) for result in (recorded, forked)]
    ask_scores(methods, facts[0], facts[1], then, provider_name=provider_name,
               run_id=f"{nodeid}#fork")
    sides = [{"outcome": "passed", "runs": [each]} for each in facts]
    return ForkResult(recorded, forked, at, compare_test(nodeid, sides[0], sides[1], methods))
