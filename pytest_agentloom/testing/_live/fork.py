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

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.suggest import did_you_mean
from ...errors import UsageError, render_message
from .._settings.drift_outputs import OutputMethods, parse_methods
from .drift_diff import TestDrift, compare_test
from .trace_facts import run_facts

if TYPE_CHECKING:
    from ..._core.types import LLMRequest, LLMResponse, Provider
    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult
    from .._test_cassette import TestCassette

__all__ = ["ForkResult", "ForkedProvider", "TestFork", "compare_fork"]


@dataclass(frozen=True)
class TestFork:
    """What ``agentloom.fork`` needs of its test: where it is, its cassette and merged markers (``defaults``),
    how it loads a workflow (``load``: a workflow, a path, or ``None`` for the marker's) and runs one (``run``:
    the harness's, so the forked runs are the test's runs)."""

    __test__ = False

    nodeid: str
    test_dir: Path
    cassette: TestCassette | None
    defaults: Mapping[str, Any]
    load: Callable[[Any], Workflow]
    run: Callable[..., WorkflowResult]

    def compare(self, workflow_or_path: Any, state: Mapping[str, Any] | None, *, at: str, then: Provider | None,
                model: str | None, variant: Any, tools: Any, outputs: Any, cassette: str | Path | None) -> ForkResult:
        """The recorded run and its fork from step ``at``, compared (see ``AgentloomHarness.fork``)."""
        __tracebackhide__ = True
        methods = parse_methods(outputs, "agentloom.fork(outputs=...)")
        forked_source = variant if variant is not None else workflow_or_path
        workflow = self.load(forked_source)
        steps = [step.id for step in workflow.steps]
        if at not in steps:
            raise UsageError(render_message(
                f"agentloom.fork(at='{at}') in {self.nodeid}: the workflow has no step '{at}'.",
                hint=did_you_mean(at, steps) or "name one of its steps"))
        if then is None:
            from ...providers._factory import default_gateway

            then = default_gateway(workflow.config)
        runs = [self._run(source, state, tools, self._reading(at, cassette), fork, at, model)
                for source, fork in ((workflow_or_path, None), (forked_source, then))]
        from .._workflow_key import workflow_key

        name = workflow.config.provider if workflow.config.provider != "mock" else None
        return compare_fork(self.nodeid, workflow_key(workflow, self.test_dir), runs[0], runs[1], at, methods,
                            then=then, provider_name=name)

    def _run(self, source: Any, state: Mapping[str, Any] | None, tools: Any, reading: TestCassette,
             fork: Provider | None, at: str, model: str | None) -> WorkflowResult:
        """One run of the fork, on its own reading of the recording: replayed whole, or forked to ``fork``."""
        __tracebackhide__ = True
        from ...tools._registry import tools_by_name

        try:
            loaded = self.load(source)
            replayed = reading.provider(loaded, {**self.defaults.get("state", {}), **dict(state or {})})
            taped = reading.tools(loaded, {**self.defaults.get("tools", {}), **tools_by_name(tools)})
            provider = replayed if fork is None else ForkedProvider(replayed, fork, at, model=model)
            return self.run(source, state, tools=dict(taped), provider=provider)
        finally:
            reading.release()

    def _reading(self, at: str, cassette: str | Path | None) -> TestCassette:
        """A reading of the recording a fork replays (this test's cassette, or ``cassette``); only a replay can
        be forked."""
        if self.cassette is None or self.cassette.mode.records:
            raise UsageError(render_message(
                f"agentloom.fork(at='{at}') in {self.nodeid} forks a recorded run: it needs a cassette, replayed.",
                hint="record the test first (pytest --agentloom-record), then fork it in a plain pytest run"))
        path = None if cassette is None else self.cassette.settings.rootdir / cassette
        return dataclasses.replace(self.cassette, session=None, tape=None, path_override=path)


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
