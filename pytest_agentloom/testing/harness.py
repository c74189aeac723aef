"""The object behind the ``agentloom`` fixture: load, run, script and snapshot workflows in one test.

Every run gets a :class:`~pytest_agentloom.core.clock.VirtualClock` and a run
id derived from the test's node id, so the same test gives the same result byte
for byte. Files the engine writes go under :attr:`AgentloomHarness.tmp_path`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, final

from ..core.clock import VirtualClock, derived_run_id
from ..engine.loader import load_workflow
from ..engine.model import Workflow
from ..engine.options import mock_provider
from ..engine.resume import resume_workflow
from ..engine.runner import run_workflow
from ..errors import UsageError
from ..providers.scripted import Scripted
from ..tools.registry import tools_by_name
from .secrets import check_no_secrets, files_written, pending_writes
from .snapshots import SnapshotSession, sanitize

if TYPE_CHECKING:
    from ..core.types import Provider
    from ..engine.result import WorkflowResult
    from .cassettes import TestCassette
    from .review import Observer

__all__ = ["TEST_EPOCH", "AgentloomHarness", "virtual_wall_clock"]

#: The wall-clock time a test's run starts at: 2026-01-01T00:00:00Z. In tests, time is virtual, so the
#: ``saved_at``/``started_at`` dates in checkpoints and run records are the same on every run of a test.
TEST_EPOCH = 1_767_225_600.0


def virtual_wall_clock(clock: VirtualClock) -> Callable[[], float]:
    """A wall clock that reads :data:`TEST_EPOCH` plus ``clock``'s time, for dating what a test's run writes."""
    return lambda: TEST_EPOCH + clock.now()


@final
class AgentloomHarness:
    """A per-test harness. Build it through the ``agentloom`` fixture; pass what differs per run to :meth:`run`.

    ``defaults`` are the merged ``agentloom`` markers (``workflow``, ``tools``,
    ``state``, ``config``); ``snapshot_dir`` is this test's snapshot folder;
    ``snapshot_name`` its file name stem (test name and parameter id).
    """

    __test__ = False

    def __init__(
        self,
        *,
        nodeid: str,
        test_dir: Path,
        tmp_path: Path,
        snapshot_dir: Path,
        snapshot_name: str,
        snapshots: SnapshotSession,
        defaults: Mapping[str, Any] | None = None,
        cassette: TestCassette | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.nodeid = nodeid
        self.test_dir = test_dir
        #: A fresh folder for this test: everything the engine writes goes here, never the current directory.
        self.tmp_path = tmp_path
        #: Where run records and checkpoints of this test's runs go (the engine's working folder).
        self.run_dir = tmp_path / "runs"
        self.snapshot_dir = snapshot_dir
        self.snapshot_name = snapshot_name
        self._snapshots = snapshots
        self._defaults = dict(defaults or {})
        self._cassette = cassette
        self._observer = observer  # workflow coverage and the review report, when the session collects them
        self._runs = 0
        self._run_inputs: dict[str, dict[str, Any]] = {}  # run id -> workflow, provider, tools (for resume)
        self._snapshot_count = 0
        #: Every result this harness returned, in order.
        self.results: list[WorkflowResult] = []

    def __repr__(self) -> str:
        return f"<AgentloomHarness {self.nodeid!r}>"

    # -- loading and running ------------------------------------------------------------------------------

    def path(self, path: str | Path) -> Path:
        """``path`` made absolute against the test file's folder."""
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else (self.test_dir / candidate).resolve()

    def load(self, path: str | Path) -> Workflow:
        """Load and check a workflow file; ``path`` is relative to the test file's folder."""
        return load_workflow(self.path(path))

    def scripted(self, replies: Mapping[str, Any] | None = None, /, **by_step: Any) -> Scripted:
        """A :class:`~pytest_agentloom.Scripted` provider: ``agentloom.scripted(classify="bug")``."""
        return Scripted({**dict(replies or {}), **by_step})

    def run(
        self,
        workflow_or_path: Workflow | str | Path | None = None,
        state: Mapping[str, Any] | None = None,
        provider: Provider | None = None,
        tools: Mapping[str, Callable[..., Any]] | list[Any] | None = None,
        *,
        real_tools: bool | list[str] = False,
        **config_overrides: Any,
    ) -> WorkflowResult:
        """Run a workflow with a virtual clock and a run id derived from the test; return its result.

        Without ``workflow_or_path`` the marker's ``workflow`` is used. ``state``
        and ``tools`` are added to the marker's; ``config_overrides`` (e.g.
        ``budget_usd=0.01``) replace ``config`` fields for this run only, over
        the marker's. Without ``provider`` the default provider is used (see
        :meth:`_default_provider`). In a replayed run, tools with side effects return their recorded
        results instead of running; ``real_tools=True`` (or a list of tool names) lets them run.
        """
        workflow = self._workflow(workflow_or_path)
        _check_overrides(config_overrides, self.nodeid)
        config = {**self._defaults.get("config", {}), **config_overrides}
        if config:
            workflow = workflow.with_config(**config)
        merged_state = {**self._defaults.get("state", {}), **dict(state or {})}
        merged_tools = {**self._defaults.get("tools", {}), **tools_by_name(tools)}
        if provider is None:
            provider = self._default_provider(workflow, merged_state)
            if self._cassette is not None:  # tools with side effects are replayed with the model calls
                merged_tools = dict(self._cassette.tools(workflow, merged_tools, allow_real=real_tools))
        self._runs += 1
        parts = (self.nodeid,) if self._runs == 1 else (self.nodeid, str(self._runs))
        clock = VirtualClock()
        fallbacks_before = self._fallbacks_so_far(provider)
        result = run_workflow(
            workflow, state=merged_state, provider=provider, tools=merged_tools, clock=clock,
            run_id=derived_run_id(*parts), runs_dir=self.run_dir, wall_clock=virtual_wall_clock(clock),
        )
        if self._observer is not None:
            self._observer(workflow, result, provider, fallbacks_before)
        self.results.append(result)
        self._run_inputs[result.run_id] = {"workflow": workflow, "provider": provider, "tools": merged_tools}
        return result

    def resume(self, result: WorkflowResult,
               approve: bool | Literal["approved", "rejected", "cancelled"] | None = True,
               state: Mapping[str, Any] | None = None, *, provider: Provider | None = None) -> WorkflowResult:
        """Resume a paused (or checkpointed) run from its saved, redacted checkpoint (``result.checkpoint``).

        ``approve=True``/``False`` (or ``"approved"``/``"rejected"``) approves or rejects the call or gate
        it waits at; ``"cancelled"`` cancels it (an agent stops as ``cancelled``, the run is cancelled);
        ``None`` resumes without a decision. ``state`` puts values back, e.g. a redacted secret a later
        step (or a paused agent's conversation) needs. The run goes on with the workflow, provider and tools
        of the run that paused (``provider=`` replaces the provider), on a fresh virtual clock.
        """
        if result.checkpoint is None and result.checkpoint_path is None:
            raise UsageError(
                f"agentloom.resume() got run '{result.run_id}' (status {result.status.value}), which has no "
                "checkpoint.\nHow to fix: resume a run that paused at an approval gate, or run with config "
                "checkpoint: true."
            )
        inputs = self._run_inputs.get(result.run_id, {})
        clock = VirtualClock()
        provider = provider if provider is not None else inputs.get("provider")
        fallbacks_before = self._fallbacks_so_far(provider)
        resumed = resume_workflow(
            result, decision=approve, state=state, tools=inputs.get("tools"), workflow=inputs.get("workflow"),
            provider=provider, clock=clock, runs_dir=self.run_dir, wall_clock=virtual_wall_clock(clock),
        )
        workflow = inputs.get("workflow")
        if self._observer is not None and isinstance(workflow, Workflow):
            self._observer(workflow, resumed, provider, fallbacks_before)
        resumed.resumed_from = result
        self.results.append(resumed)
        self._run_inputs[resumed.run_id] = inputs
        return resumed

    def _fallbacks_so_far(self, provider: Any) -> int:
        """How many gateway fallbacks ``provider`` took before this run (only when coverage is collected)."""
        if self._observer is None:
            return 0
        from .coverage import gateway_fallbacks

        return len(gateway_fallbacks(provider))

    def assert_no_secrets(self, *values: Any) -> None:
        """Fail if any value appears in a file this test's runs wrote or in a printed result, naming where.

        A cassette (and tool recording) this test is recording is written when the test ends; it is searched
        as it will be written.
        """
        __tracebackhide__ = True
        printed = {f"result {i + 1} ({r.run_id}) as printed": f"{r!r}\n{r.to_json(indent=2)}"
                   for i, r in enumerate(self.results)}
        files = files_written(self.tmp_path, self.snapshot_dir, self.snapshot_name, self._cassette)
        check_no_secrets(values, files, {**pending_writes(self._cassette), **printed})

    def _workflow(self, workflow_or_path: Workflow | str | Path | None) -> Workflow:
        if isinstance(workflow_or_path, Workflow):
            return workflow_or_path
        if workflow_or_path is None:
            workflow_or_path = self._defaults.get("workflow")
            if workflow_or_path is None:
                raise UsageError(
                    f"agentloom.run() got no workflow in {self.nodeid}.\n"
                    "How to fix: pass one, agentloom.run('flow.yaml'), or set "
                    "@pytest.mark.agentloom(workflow='flow.yaml') on the test, class or module."
                )
        if not isinstance(workflow_or_path, (str, Path)):
            raise UsageError(
                f"agentloom.run() takes a Workflow or a path, got {type(workflow_or_path).__name__}: "
                f"{workflow_or_path!r}"
            )
        return self.load(workflow_or_path)

    def _default_provider(self, workflow: Workflow, state: Mapping[str, Any] | None = None) -> Provider:
        """The provider of a run that passed none: the real gateway wrapped in this test's cassette.

        Replay by default (placeholder keys, no network); ``--agentloom-record``
        records against live providers. See :mod:`pytest_agentloom.replay`.
        """
        mock = mock_provider(workflow)
        if mock is not None:  # config.provider: mock answers from its responses file, no cassette needed
            return mock
        if self._cassette is None:
            raise UsageError(
                f"agentloom.run() needs a provider for workflow '{workflow.name}' in {self.nodeid}: "
                "this harness has no cassette.\n"
                "How to fix: pass one, e.g. agentloom.run(path, provider=agentloom.scripted(step_id='reply text'))."
            )
        return self._cassette.provider(workflow, state)

    # -- snapshots ----------------------------------------------------------------------------------------

    def snapshot_path(self, name: str | None = None) -> Path:
        """The file a snapshot called ``name`` of this test lives in (without counting it as a use)."""
        stem = self.snapshot_name if name is None else f"{self.snapshot_name}.{sanitize(name)}"
        return self.snapshot_dir / f"{stem}.yaml"

    def assert_snapshot(self, result: WorkflowResult, name: str | None = None) -> None:
        """Compare ``result`` with its golden snapshot file; ``--agentloom-update-snapshots`` (re)writes it.

        Without ``name`` the first snapshot of a test is ``<test>.yaml``, the
        next ones ``<test>.2.yaml``, ``<test>.3.yaml``...
        """
        __tracebackhide__ = True
        if name is None:
            self._snapshot_count += 1
            if self._snapshot_count > 1:
                name = str(self._snapshot_count)
        label = self.snapshot_name if name is None else f"{self.snapshot_name}.{name}"
        self._snapshots.assert_match(self.snapshot_path(name), result, label=label, nodeid=self.nodeid)


def _check_overrides(overrides: Mapping[str, Any], nodeid: str) -> None:
    """Refuse a keyword of ``run()`` that is no ``config`` field, naming it and the closest field."""
    from ..core.suggest import did_you_mean
    from ..engine.model import WorkflowConfig

    known = list(WorkflowConfig.model_fields)
    for key in overrides:
        if key not in known:
            hint = did_you_mean(key, known)
            raise UsageError(
                f"agentloom.run() got an unexpected keyword '{key}' in {nodeid}: it is no workflow config field.\n"
                f"  config fields: {', '.join(known)}\n"
                f"How to fix: {hint + ' ' if hint else ''}pass config fields as keywords, e.g. "
                "agentloom.run(path, budget_usd=0.01)."
            )


