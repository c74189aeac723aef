"""One test's side calls: judge and embedding calls, each a one-step run of its own beside the test's runs.

The harness behind the ``agentloom`` fixture hands them here (made at a test's first such call, as few tests
make one): which provider answers (given, the judged run's, or the test's cassette), each call's run id and
virtual clock, and the verdict snapshots of judge calls (:class:`~._judge.per_test.TestVerdicts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._core.clock import VirtualClock, derived_run_id
from ..engine._format.model import Workflow
from ..errors import UsageError, render_message
from ._judge.per_test import TestVerdicts
from ._snapshots.per_test import TestSnapshots

if TYPE_CHECKING:
    from .._core.types import Provider
    from ..engine._outcome.held_records import HeldRecords
    from ..engine._outcome.result import WorkflowResult
    from ._judge.judge import JudgeAsk

__all__ = ["SideCalls"]


class SideCalls:
    """Judge and embedding calls of one test. ``runs`` are the harness's run inputs by run id and its results
    (shared, read only here); ``watch`` notes a provider the test passed (its unused replies fail the test)."""

    def __init__(self, nodeid: str, snapshots: TestSnapshots, cassette: Any, records: HeldRecords, *,
                 runs: tuple[dict[str, dict[str, Any]], list[WorkflowResult]], watch: Callable[[Any], None],
                 wall_clock: Callable[[VirtualClock], Callable[[], float]]) -> None:
        self.nodeid = nodeid
        self._snapshots = snapshots
        self._cassette = cassette
        self._records = records
        self._runs = runs
        self._watch = watch
        self._wall_clock = wall_clock
        self._side_runs = 0  # judge and embedding calls, each a one-step run of its own
        self.verdicts: TestVerdicts | None = None  # made at the first judge call (see judging)

    @property
    def judging(self) -> TestVerdicts:
        """The verdict snapshots of this test's judge calls; made at the first."""
        if self.verdicts is None:
            self.verdicts = TestVerdicts(self._snapshots, self._cassette)
        return self.verdicts

    def ask_judge(self, value: Any, rubric: str, model: str, threshold: float, step: str | None, name: str | None,
                   provider: Provider | None, snapshot: bool | None) -> JudgeAsk:
        """Everything one judge call needs; a stale verdict snapshot fails here, before the judge is asked."""
        __tracebackhide__ = True
        from ._judge.judge import JudgeAsk, check_judge_arguments, judge_workflow, judged_text

        check_judge_arguments(rubric, model, threshold)
        text, judged_from = judged_text(value, step)
        stem = self.judging.stem(name)
        workflow = judge_workflow(model, self._run_config(value).get("provider"))
        chosen = self._side_provider(value, provider, workflow, "judge")
        asked = JudgeAsk(workflow=workflow, options=self._side_options("judge", {"rubric": rubric, "text": text},
                                                                        chosen),
                         label=f"{self._snapshots.name}.{stem}", model=model, rubric=rubric, text=text,
                         judged_from=judged_from, threshold=float(threshold))
        self.judging.prepare(asked, stem, snapshot, through_cassette=self._through_cassette(chosen))
        return asked

    def ask_embeddings(self, value: Any, reference: Any, model: str, step: str | None,
                        provider: Provider | None) -> tuple[Workflow, dict[str, Any]]:
        __tracebackhide__ = True
        from ._judge.embedding import embedding_workflow
        from ._judge.judge import judged_text

        text, _ = judged_text(value, step)
        other, _ = judged_text(reference)
        workflow = embedding_workflow(model, self._run_config(value).get("provider"))
        chosen = self._side_provider(value, provider, workflow, "embedding_distance")
        return workflow, self._side_options("embedding", {"texts": [text, other]}, chosen)

    def distance(self, result: WorkflowResult, model: str) -> float:
        __tracebackhide__ = True
        from ._judge.embedding import distance_from_run

        return distance_from_run(result, model)

    def _run_inputs_of(self, value: Any) -> dict[str, Any]:
        """The inputs of the run that made ``value`` (a result), else of the test's last run, else nothing."""
        inputs, results = self._runs
        run_id = getattr(value, "run_id", None)
        if isinstance(run_id, str) and run_id in inputs:
            return inputs[run_id]
        return inputs[results[-1].run_id] if results else {}

    def _run_config(self, value: Any) -> dict[str, Any]:
        """``config.provider`` of the run whose provider a judge call reuses (a mock answers no judge)."""
        workflow = self._run_inputs_of(value).get("workflow")
        name = workflow.config.provider if isinstance(workflow, Workflow) else None
        return {"provider": name} if name and name != "mock" else {}

    def _side_provider(self, value: Any, provider: Provider | None, workflow: Workflow, what: str) -> Provider:
        """The provider of a judge or embedding call: given, else the run's, else the test's cassette."""
        __tracebackhide__ = True
        if provider is not None:
            self._watch(provider)
            return provider
        reused = self._run_inputs_of(value).get("provider")
        if reused is not None:
            return reused  # type: ignore[no-any-return]
        if self._cassette is None:
            raise UsageError(render_message(
                f"agentloom.{what}() needs a provider in {self.nodeid}: no run of this test gave one, and this "
                "harness has no cassette.",
                hint=f"pass one, e.g. provider=agentloom.scripted("
                     f"{'judge' if what == 'judge' else 'embedding_check'}=...).",
            ))
        return self._cassette.provider(workflow)

    def _through_cassette(self, provider: Any) -> bool:
        session = getattr(provider, "session", None)
        return self._cassette is not None and session is not None and session is self._cassette.session

    def _side_options(self, kind: str, state: dict[str, Any], provider: Provider) -> dict[str, Any]:
        """Run options of a judge or embedding call: its own run id and virtual clock, nothing of the marker's."""
        self._side_runs += 1
        clock = VirtualClock()
        return {"state": state, "provider": provider, "clock": clock, "runs_dir": self._records,
                "run_id": derived_run_id(self.nodeid, kind, str(self._side_runs)),
                "wall_clock": self._wall_clock(clock)}
