"""The object behind the ``agentloom`` fixture: load, run, script and snapshot workflows in one test.

Every run gets a :class:`~pytest_agentloom._core.clock.VirtualClock` and a run
id derived from the test's node id, so the same test gives the same result byte
for byte. Files the engine writes go under :attr:`AgentloomHarness.tmp_path`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, final

from .._core.clock import VirtualClock, derived_run_id
from .._core.files import resolved
from ..engine._entry.options import mock_provider
from ..engine._entry.resume_workflow import aresume_workflow, resume_workflow
from ..engine._entry.run_workflow import arun_workflow, run_workflow
from ..engine._format.model import Workflow
from ..engine._outcome.held_records import HeldRecords
from ..errors import UsageError, render_message
from ..providers._factory import records_http
from ..providers._faults import parse_faults
from ..providers._scripted import Scripted
from ..tools._registry import tools_by_name
from ._injection import inject_faults
from ._secrets_scan import check_no_secrets, files_written, pending_writes
from ._snapshots.per_test import TestSnapshots
from ._snapshots.sent import SentLog, SentRequests
from ._unused_replies import unused_replies_message
from ._workflow_cache import load_cached

if TYPE_CHECKING:
    from .._core.types import Provider
    from ..engine._outcome.result import WorkflowResult
    from ..providers._faults import Fault
    from ._judge.verdict import Verdict
    from ._live.fork import ForkResult
    from ._review.review import Observer
    from ._side_calls import SideCalls
    from ._test_cassette import TestCassette

__all__ = ["TEST_EPOCH", "AgentloomHarness", "TestPlace", "virtual_wall_clock"]

#: The wall-clock time a test's run starts at: 2026-01-01T00:00:00Z. In tests, time is virtual, so the
#: ``saved_at``/``started_at`` dates in checkpoints and run records are the same on every run of a test.
TEST_EPOCH = 1_767_225_600.0


def virtual_wall_clock(clock: VirtualClock) -> Callable[[], float]:
    """A wall clock that reads :data:`TEST_EPOCH` plus ``clock``'s time, for dating what a test's run writes."""
    return lambda: TEST_EPOCH + clock.now()


@dataclass(frozen=True, slots=True)
class TestPlace:
    """Where a test is: its node id, its file's folder, its ``tmp_path`` (``hold_records``: not made yet, so
    run records wait in memory: see :attr:`AgentloomHarness.tmp_path`)."""

    __test__ = False

    nodeid: str
    test_dir: Path
    tmp_path: Path
    hold_records: bool = False


@final
class AgentloomHarness:
    """A per-test harness. Build it through the ``agentloom`` fixture; pass what differs per run to :meth:`run`.

    A thin facade: ``place`` is where the test is (its node id, folder and ``tmp_path``), ``snapshots`` its
    snapshot files (:class:`~._snapshots.per_test.TestSnapshots`), ``cassette`` its cassette; ``defaults`` are
    the merged ``agentloom`` markers (``workflow``, ``tools``, ``state``, ``config``). Runs go to the engine;
    what the session's features do with them (coverage, repetitions, drift) goes through ``observer``.
    """

    __test__ = False

    def __init__(self, place: TestPlace, snapshots: TestSnapshots, *, defaults: Mapping[str, Any] | None = None,
                 cassette: TestCassette | None = None, observer: Observer | None = None,
                 missing_template_keys: str = "error", faults: tuple[Fault, ...] = (),
                 live_tools: tuple[str, ...] = ()) -> None:
        self.nodeid = place.nodeid
        self.test_dir = place.test_dir
        self._folder = place.tmp_path
        self._folder_made = not place.hold_records
        # run records wait in memory until someone may read them (see tmp_path); the engine writes the rest
        self._records = HeldRecords(place.tmp_path / "runs", held=place.hold_records)
        self._snapshots = snapshots  # this test's snapshot files (see assert_snapshot)
        self._defaults = dict(defaults or {})
        self._cassette = cassette
        self._observer = observer  # what the session's features hear of each run (coverage, drift...), if any
        self._runs = 0
        self._run_inputs: dict[str, dict[str, Any]] = {}  # run id -> workflow, provider, tools (for resume)
        self._resumes: dict[str, int] = {}  # run id -> how many times this test resumed it (numbers the records)
        self._sent = SentLog()  # what each run sent, for its snapshot (a resumed run's: with those before its pause)
        self._missing_keys = missing_template_keys
        self._faults = faults  # injected into every run (--agentloom-inject, the marker's inject=)
        self._live_tools = live_tools  # run for real over a replay, compared with the tape (--agentloom-live-tools)
        self._row: tuple[str, Path, int] | None = None  # the scenario table row running (see running_row)
        self._scripted: list[Scripted] = []  # checked for unused replies when the test passed
        self._side_calls: SideCalls | None = None  # made at the first judge or embedding call (see _sides)
        self._via_cassette = False  # whether the run being prepared uses the test's cassette (see _finish)
        #: run id -> the cassette that run used, as the failure report names it (see report_section)
        self._cassette_runs: dict[str, str] = {}
        #: Every result this harness returned, in order.
        self.results: list[WorkflowResult] = []

    @property
    def snapshot_dir(self) -> Path:
        """This test's snapshot folder (``<snapshot_dir>/<module>``)."""
        return self._snapshots.folder

    @property
    def snapshot_name(self) -> str:
        """This test's snapshot file stem (test name and parameter id)."""
        return self._snapshots.name

    def __repr__(self) -> str:
        return f"<AgentloomHarness {self.nodeid!r}>"

    @property
    def _sides(self) -> SideCalls:
        """This test's judge and embedding calls (their providers, run ids, verdicts); made at the first."""
        if self._side_calls is None:
            from ._side_calls import SideCalls

            self._side_calls = SideCalls(self.nodeid, self._snapshots, self._cassette, self._records,
                                         runs=(self._run_inputs, self.results), watch=self._watch,
                                         wall_clock=virtual_wall_clock)
        return self._side_calls

    @property
    def tmp_path(self) -> Path:
        """A fresh folder for this test: everything its runs write goes here, never the current directory.

        Unless the test took pytest's ``tmp_path`` (then it is that folder), it is made the first time it
        is read or written to, and the run records of the runs so far are written into it then, each later
        one at its run's end (:class:`~pytest_agentloom.engine._persist.records.HeldRecords`): a test that never
        looks, and passes, writes no records. A failing test's are written when it fails.
        """
        if not self._folder_made:
            self._folder.mkdir(parents=True, exist_ok=True)
            self._folder_made = True
        self._records.release()
        return self._folder

    @property
    def run_dir(self) -> Path:
        """Where run records and checkpoints of this test's runs go (the engine's working folder), in
        :attr:`tmp_path`; reading it writes the records held so far."""
        return self.tmp_path / "runs"

    @property
    def has_verdict_book(self) -> bool:
        """Whether a judge call made this test's verdict book (which may have verdicts to write at its end)."""
        return self._side_calls is not None and self._side_calls.verdicts is not None

    @property
    def has_scripted(self) -> bool:
        """Whether a scripted provider of this test is watched for replies no request used."""
        return bool(self._scripted)

    def report_section(self) -> str | None:
        """What each run of this test did (status, reason, failed step and error, cassette), for the report of
        a failed test (see :mod:`._run_report`); ``None`` when it ran no workflow."""
        from ._run_report import runs_section

        return runs_section(self.results, self._cassette_runs)

    def keep_records(self) -> None:
        """Write the run records held so far (the test failed: someone will want to look)."""
        self._records.release()

    # -- loading and running ------------------------------------------------------------------------------

    def path(self, path: str | Path) -> Path:
        """``path`` made absolute against the test file's folder."""
        candidate = (path if isinstance(path, Path) else Path(path)).expanduser()
        return candidate if candidate.is_absolute() else resolved(self.test_dir / candidate)

    def load(self, path: str | Path) -> Workflow:
        """Load and check a workflow file; ``path`` is relative to the test file's folder.

        Loaded once per test process while the file is unchanged (:mod:`._workflow_cache`): the rows of a
        scenario table do not each parse and check it again. The workflow cannot be changed (each call gets
        the same object); a changed copy is ``model_copy(update=...)`` or ``with_config(...)``.
        """
        return load_cached(self.path(path))

    def scripted(self, replies: Mapping[str, Any] | None = None, /, *, allow_unused: bool = False,
                 **by_step: Any) -> Scripted:
        """A :class:`~pytest_agentloom.Scripted` provider: ``agentloom.scripted(classify="bug")``.

        A test that passes with replies of it that no request used fails (the workflow did less than the
        script says); ``allow_unused=True`` lets this provider keep replies, e.g. for a branch not taken.
        """
        provider = Scripted({**dict(replies or {}), **by_step})
        provider.allow_unused = allow_unused
        return provider

    def run(
        self,
        workflow_or_path: Workflow | str | Path | None = None,
        state: Mapping[str, Any] | None = None,
        provider: Provider | None = None,
        tools: Mapping[str, Callable[..., Any]] | list[Any] | None = None,
        *,
        real_tools: bool | list[str] = False,
        only: str | None = None,
        start_at: str | None = None,
        inject: str | list[str] | None = None,
        **config_overrides: Any,
    ) -> WorkflowResult:
        """Run a workflow with a virtual clock and a run id derived from the test; return its result.

        Without ``workflow_or_path`` the marker's ``workflow`` is used. ``state``
        and ``tools`` are added to the marker's; ``config_overrides`` (e.g.
        ``budget_usd=0.01``) replace ``config`` fields for this run only, over
        the marker's. Without ``provider`` the default provider is used (see
        :meth:`_default_provider`). In a replayed run, tools with side effects return their recorded
        results instead of running; ``real_tools=True`` (or a list of tool names) lets them run.
        ``only="step"`` runs that one step; ``start_at="step"`` runs it and the steps after it (see
        :func:`~._partial.partial_workflow`); give them the ``state`` they read. ``inject`` (a fault such as
        ``"classify#1=429"``, or a list) replaces the test's injected faults for this run (docs/resilience.md).
        """
        workflow, options, shared = self._prepare(workflow_or_path, state, provider, tools, real_tools=real_tools,
                                                  only=only, start_at=start_at, inject=inject, **config_overrides)
        before = self._fallbacks_so_far(options["provider"].inner)
        return self._finish(run_workflow(workflow, **options), workflow, options, before, shared)

    def fork(self, workflow_or_path: Workflow | str | Path | None = None, state: Mapping[str, Any] | None = None,
             *, at: str, then: Provider | None = None, model: str | None = None,
             variant: Workflow | str | Path | None = None, tools: Any = None, outputs: Any = None,
             cassette: str | Path | None = None) -> ForkResult:
        """Replay a recorded run (this test's cassette, or ``cassette``: a path relative to the rootdir), and again
        with every model request from step ``at`` on answered by ``then`` (a provider; by default the live
        gateway, API keys needed) with ``model`` in its place when given; compare the two as a drift check does
        (``outputs``: the ``drift_outputs`` methods). ``variant`` runs another workflow file for the fork (an
        edited prompt of ``at`` or a later step): the steps before ``at`` must send what was recorded. Nothing
        is written (see :mod:`._live.fork`)."""
        __tracebackhide__ = True
        from ._live.fork import TestFork

        fork = TestFork(self.nodeid, self.test_dir, self._cassette, self._defaults, run=self.run,
                        load=lambda source: self._workflow(source)[0])
        return fork.compare(workflow_or_path, state, at=at, then=then, model=model, variant=variant, tools=tools,
                            outputs=outputs, cassette=cassette)

    async def arun(self, workflow_or_path: Workflow | str | Path | None = None,
                   state: Mapping[str, Any] | None = None, provider: Provider | None = None,
                   tools: Mapping[str, Callable[..., Any]] | list[Any] | None = None, **options: Any) -> WorkflowResult:
        """:meth:`run` for async tests, with the same arguments: ``result = await agentloom.arun("flow.yaml")``."""
        workflow, prepared, shared = self._prepare(workflow_or_path, state, provider, tools, **options)
        before = self._fallbacks_so_far(prepared["provider"].inner)
        return self._finish(await arun_workflow(workflow, **prepared), workflow, prepared, before, shared)

    def _prepare(self, workflow_or_path: Workflow | str | Path | None, state: Mapping[str, Any] | None,
                 provider: Provider | None, tools: Any, *, real_tools: bool | list[str] = False,
                 only: str | None = None, start_at: str | None = None, inject: str | list[str] | None = None,
                 **config_overrides: Any) -> tuple[Workflow, dict[str, Any], bool]:
        """The workflow and the options of one run (both ``run`` and ``arun``), and whether the workflow is
        (or shares its parts with) the one the process's workflow cache keeps (see :meth:`_workflow`)."""
        workflow, shared = self._workflow(workflow_or_path)
        if only is not None or start_at is not None:
            from ._partial import partial_workflow

            workflow = partial_workflow(workflow, only=only, start_at=start_at)
        _check_overrides(config_overrides, self.nodeid)
        config = {**self._defaults.get("config", {}), **config_overrides}
        if config:
            workflow = workflow.with_config(**config)
        merged_state = {**self._defaults.get("state", {}), **dict(state or {})}
        merged_tools = {**self._defaults.get("tools", {}), **tools_by_name(tools)}
        self._via_cassette = False
        through_cassette = provider is None
        if provider is None:  # the default gateway, in the cassette
            provider = self._default_provider(workflow, merged_state)
        elif self._cassette is not None and records_http(provider):  # a live provider the test built (a Gateway
            provider = self._cassette.wrap(provider, workflow, merged_state)  # with routes): in the cassette too
            through_cassette = True
        if through_cassette:
            self._via_cassette = self._cassette is not None and workflow.config.provider != "mock"
            if self._cassette is not None:  # tools with side effects are replayed with the model calls
                merged_tools = dict(self._cassette.tools(workflow, merged_tools, allow_real=real_tools,
                                                         compare=self._live_tools, where=self.nodeid))
        self._watch(provider)
        faults = self._faults if inject is None else parse_faults(inject, "agentloom.run(inject=...)")
        if faults:
            recording = self._via_cassette and self._cassette is not None and (
                self._cassette.mode.records or self._cassette.settings.live.live)
            provider, faulted_tools = inject_faults(workflow, faults, provider, merged_tools, http=self._via_cassette,
                                                    recording=recording, where=self.nodeid)
            merged_tools = dict(faulted_tools)
        self._runs += 1
        parts = (self.nodeid,) if self._runs == 1 else (self.nodeid, str(self._runs))
        clock = VirtualClock()
        return workflow, {
            "state": merged_state, "provider": SentRequests(provider), "tools": merged_tools, "clock": clock,
            "run_id": derived_run_id(*parts), "runs_dir": self._records, "wall_clock": virtual_wall_clock(clock),
        }, shared

    def _finish(self, result: WorkflowResult, workflow: Workflow, options: dict[str, Any],
                fallbacks_before: int, shared: bool = False) -> WorkflowResult:
        """Note what the run sent (for snapshots) and its coverage, report template keys it missed, remember
        it for resume."""
        __tracebackhide__ = True
        if shared:
            _hide_shared(result)
        sent: SentRequests = options["provider"]
        if self._observer is not None:
            self._observer(workflow, result, sent.inner, fallbacks_before)
        self._sent.note(result, sent, workflow)
        self.results.append(result)
        self._run_inputs[result.run_id] = {"workflow": workflow, "provider": sent.inner, "tools": options["tools"],
                                           "shared": shared}
        if self._via_cassette and self._cassette is not None:
            self._cassette_runs[result.run_id] = self._cassette.describe()
        self._report_missing_keys(result, workflow)
        return result

    def _watch(self, provider: Any) -> None:
        if isinstance(provider, Scripted) and not any(provider is known for known in self._scripted):
            self._scripted.append(provider)

    def _report_missing_keys(self, result: WorkflowResult, workflow: Workflow, stacklevel: int = 4) -> None:
        """A ``{state.x}`` that rendered empty: an error (a :class:`MissingTemplateKeyWarning` under
        ``missing_template_keys='warn'``) naming the workflow file and line, the row and the closest key."""
        __tracebackhide__ = True
        from ._missing_keys import report_missing_keys

        report_missing_keys(result, workflow, self._missing_keys, row=self._row, stacklevel=stacklevel + 1)

    @contextlib.contextmanager
    def running_row(self, row_id: str, table: Path, line: int) -> Iterator[None]:
        """Runs inside are a scenario table row's: their messages name it."""
        before, self._row = self._row, (row_id, table, line)
        try:
            yield
        finally:
            self._row = before

    def unused_replies_message(self) -> str | None:
        """Why this test fails although it passed: scripted replies that no request used (or ``None``)."""
        return unused_replies_message(self.nodeid, self._scripted)

    def resume(self, result: WorkflowResult,
               approve: bool | Literal["approved", "rejected", "cancelled"] | None = True,
               state: Mapping[str, Any] | None = None, *, provider: Provider | None = None) -> WorkflowResult:
        """Resume a paused (or checkpointed) run from its saved, redacted checkpoint (``result.checkpoint``).

        ``approve=True``/``False`` (or ``"approved"``/``"rejected"``) approves or rejects the call or gate
        it waits at; ``"cancelled"`` cancels it (an agent stops as ``cancelled``, the run is cancelled);
        ``None`` resumes without a decision. ``state`` puts values back, e.g. a redacted secret a later
        step (or a paused agent's conversation) needs. The run goes on with the workflow, provider and tools
        of the run that paused (``provider=`` replaces the provider), on a fresh virtual clock.

        The same paused result can be resumed any number of times (approve it, then reject it: each resume
        starts from the pause, as saved then). The resumed result's snapshot holds the requests and tool
        calls of the steps before the pause too.
        """
        __tracebackhide__ = True
        checkpoint, options, inputs, fallbacks_before = self._prepare_resume(result, approve, state, provider)
        return self._finish_resume(result, resume_workflow(checkpoint, **options), inputs, provider,
                                   fallbacks_before, options["provider"])

    async def aresume(self, result: WorkflowResult,
                      approve: bool | Literal["approved", "rejected", "cancelled"] | None = True,
                      state: Mapping[str, Any] | None = None, *, provider: Provider | None = None) -> WorkflowResult:
        """:meth:`resume` for async tests, with the same arguments and the same cassette, coverage and tools:
        ``resumed = await agentloom.aresume(paused, approve=False)``."""
        __tracebackhide__ = True
        checkpoint, options, inputs, fallbacks_before = self._prepare_resume(result, approve, state, provider)
        return self._finish_resume(result, await aresume_workflow(checkpoint, **options), inputs, provider,
                                   fallbacks_before, options["provider"])

    def _prepare_resume(self, result: WorkflowResult, approve: Any, state: Mapping[str, Any] | None,
                        provider: Provider | None) -> tuple[Any, dict[str, Any], dict[str, Any], int]:
        """What to resume from (the checkpoint as saved at the pause) and the options of the resumed run."""
        __tracebackhide__ = True
        _check_resumable(result)
        inputs = self._run_inputs.get(result.run_id, {})
        self._watch(provider)
        clock = VirtualClock()
        inner = provider if provider is not None else inputs.get("provider")
        fallbacks_before = self._fallbacks_so_far(inner)
        # from the document saved at the pause, not the file: a resume rewrites the file with its own status,
        # and the next resume of the same result must start from the pause again (its record numbered on)
        checkpoint: Any = result
        if result.checkpoint is not None:
            earlier = self._resumes.get(result.run_id, 0)
            checkpoint = {**result.checkpoint, "resumes": int(result.checkpoint.get("resumes") or 0) + earlier}
            self._resumes[result.run_id] = earlier + 1
        options = {"decision": approve, "state": state, "tools": inputs.get("tools"),
                   "workflow": inputs.get("workflow"), "provider": SentRequests(inner) if inner is not None else None,
                   "clock": clock, "runs_dir": self._records, "wall_clock": virtual_wall_clock(clock)}
        return checkpoint, options, inputs, fallbacks_before

    def _finish_resume(self, result: WorkflowResult, resumed: WorkflowResult, inputs: dict[str, Any],
                       provider: Provider | None, fallbacks_before: int, sent: SentRequests | None) -> WorkflowResult:
        """As :meth:`_finish` for a run: coverage, snapshots (with what was sent before the pause), the report."""
        __tracebackhide__ = True
        workflow = inputs.get("workflow")
        if self._observer is not None and isinstance(workflow, Workflow):
            self._observer(workflow, resumed, sent.inner if sent is not None else None, fallbacks_before)
        resumed.resumed_from = result
        if inputs.get("shared"):
            _hide_shared(resumed)
        if sent is not None:
            self._sent.note_resumed(result, resumed, sent, workflow)
        self.results.append(resumed)
        self._run_inputs[resumed.run_id] = inputs
        if result.run_id in self._cassette_runs and provider is None:
            self._cassette_runs[resumed.run_id] = self._cassette_runs[result.run_id]
        if workflow is not None:
            self._report_missing_keys(resumed, workflow, stacklevel=3)
        return resumed

    def _fallbacks_so_far(self, provider: Any) -> int:
        """How many gateway fallbacks ``provider`` took before this run (only when coverage is collected)."""
        if self._observer is None:
            return 0
        from ._review.coverage import gateway_fallbacks

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
        verdicts = self._side_calls.verdicts if self._side_calls is not None else None
        pending = verdicts.book.pending if verdicts is not None else []
        kept = {f"{path} (verdict snapshot, written when the test ends)": text for path, text in pending}
        check_no_secrets(values, files, {**pending_writes(self._cassette), **kept, **printed})

    def _workflow(self, workflow_or_path: Workflow | str | Path | None) -> tuple[Workflow, bool]:
        """The workflow to run, and whether it is the one the process's workflow cache keeps for its file.

        A workflow named by its path is the one the process's cache keeps (:func:`~._workflow_cache.load_cached`),
        which cannot be changed.
        Nothing the test can reach may lead to it afterwards (:func:`_hide_shared`).
        """
        if isinstance(workflow_or_path, Workflow):
            return workflow_or_path, False
        if workflow_or_path is None:
            workflow_or_path = self._defaults.get("workflow")
            if workflow_or_path is None:
                raise UsageError(render_message(
                    f"agentloom.run() got no workflow in {self.nodeid}.",
                    hint="pass one, agentloom.run('flow.yaml'), or set "
                         "@pytest.mark.agentloom(workflow='flow.yaml') on the test, class or module.",
                ))
        if not isinstance(workflow_or_path, (str, Path)):
            raise UsageError(
                f"agentloom.run() takes a Workflow or a path, got {type(workflow_or_path).__name__}: "
                f"{workflow_or_path!r}"
            )
        return load_cached(self.path(workflow_or_path)), True

    def _default_provider(self, workflow: Workflow, state: Mapping[str, Any] | None = None) -> Provider:
        """The provider of a run that passed none: the real gateway wrapped in this test's cassette.

        Replay by default (placeholder keys, no network); ``--agentloom-record``
        records against live providers. See :mod:`pytest_agentloom.replay`.
        """
        mock = mock_provider(workflow)
        if mock is not None:  # config.provider: mock answers from its responses file, no cassette needed
            return mock
        if self._cassette is None:
            raise UsageError(render_message(
                f"agentloom.run() needs a provider for workflow '{workflow.name}' in {self.nodeid}: "
                "this harness has no cassette.",
                hint="pass one, e.g. agentloom.run(path, provider=agentloom.scripted(step_id='reply text')).",
            ))
        return self._cassette.provider(workflow, state)

    # -- judged assertions and embedding distance (see .judge, .verdicts, .checks) ---------------------------

    def judge(self, value: Any, rubric: str, *, model: str, threshold: float = 0.5, step: str | None = None,
              name: str | None = None, provider: Provider | None = None, snapshot: bool | None = None,
              check: bool = True) -> Verdict:
        """Ask ``model`` to grade ``value`` (a str, or a result by its final output or ``step``'s) against
        ``rubric``; return the :class:`~._judge.judge.Verdict`, failing the test when its score is below
        ``threshold`` (``check=False`` returns a failing verdict instead).

        The call goes to ``provider``, else the provider of the run that made ``value`` (or of the test's last
        run), else the test's cassette. Through the cassette the verdict is kept in a verdict snapshot (see
        :mod:`._judge.verdicts`; ``snapshot=`` forces it on or off) and a stale one fails the test; ``name`` names that
        file (``<test>.verdict.<name>.yaml``).
        """
        __tracebackhide__ = True
        asked = self._sides.ask_judge(value, rubric, model, threshold, step, name, provider, snapshot)
        return self._sides.judging.verdict(asked, run_workflow(asked.workflow, **asked.options), check)

    async def ajudge(self, value: Any, rubric: str, *, model: str, threshold: float = 0.5, step: str | None = None,
                     name: str | None = None, provider: Provider | None = None, snapshot: bool | None = None,
                     check: bool = True) -> Verdict:
        """:meth:`judge` for async tests, with the same arguments: ``verdict = await agentloom.ajudge(...)``."""
        __tracebackhide__ = True
        asked = self._sides.ask_judge(value, rubric, model, threshold, step, name, provider, snapshot)
        return self._sides.judging.verdict(asked, await arun_workflow(asked.workflow, **asked.options), check)

    def finish_verdicts(self, passed: bool) -> None:
        """At the end of the test: write the verdicts a recording refreshed, when the test passed."""
        if self._side_calls is not None and self._side_calls.verdicts is not None:
            self._side_calls.verdicts.book.flush(passed)

    def embedding_distance(self, value: Any, reference: Any, *, model: str, step: str | None = None,
                           provider: Provider | None = None) -> float:
        """The cosine distance (0: same direction, 2: opposite) between the embeddings of ``value`` and
        ``reference`` (str, or a result by its final output or ``step``'s), from ``model``.

        The embed request goes to the provider chosen as for :meth:`judge` (step id ``embedding_check``), so
        it is scripted, recorded and replayed like an ``embed`` step's.
        """
        __tracebackhide__ = True
        workflow, options = self._sides.ask_embeddings(value, reference, model, step, provider)
        return self._sides.distance(run_workflow(workflow, **options), model)

    async def aembedding_distance(self, value: Any, reference: Any, *, model: str, step: str | None = None,
                                  provider: Provider | None = None) -> float:
        """:meth:`embedding_distance` for async tests."""
        __tracebackhide__ = True
        workflow, options = self._sides.ask_embeddings(value, reference, model, step, provider)
        return self._sides.distance(await arun_workflow(workflow, **options), model)

    def assert_embedding_close(self, value: Any, reference: Any, *, model: str, max_distance: float = 0.2,
                               step: str | None = None, provider: Provider | None = None) -> float:
        """Fail unless the cosine distance of ``value``'s and ``reference``'s embeddings is at most
        ``max_distance``; return the distance. See :meth:`embedding_distance`.
        """
        __tracebackhide__ = True
        from ._output_checks import check_distance

        distance = self.embedding_distance(value, reference, model=model, step=step, provider=provider)
        check_distance(distance, max_distance, value, reference, step=step, model=model)
        return distance

    # -- snapshots ----------------------------------------------------------------------------------------

    def snapshot_path(self, name: str | None = None) -> Path:
        """The file a snapshot called ``name`` of this test lives in (without counting it as a use)."""
        return self._snapshots.path(name)

    def assert_snapshot(self, result: WorkflowResult | Any, name: str | None = None, *,
                        exclude: Iterable[str] = (), matchers: Mapping[str, Any] | None = None,
                        requests: bool | None = None) -> None:
        """Compare ``result`` with its golden snapshot file; ``--agentloom-create-snapshots`` writes a missing
        one, ``--agentloom-update-snapshots`` also rewrites a changed one.

        ``result`` is a run's result, or any plain value (a dict, list, str, number, pydantic model or
        dataclass), written under ``value:``; a plain value's ``exclude`` and ``matchers`` paths start at
        the value itself (``items[*].id``).

        Without ``name`` the first snapshot of a test is ``<test>.yaml``, the
        next ones ``<test>.2.yaml``, ``<test>.3.yaml``... ``exclude`` paths
        (``steps.*.output.id``) are left out and ``matchers`` (path -> type,
        regex or callable) write a matched value as a placeholder, both added to
        the marker's (or ini's); see :mod:`._snapshots.volatile`. ``requests=False`` leaves
        what the steps sent out of this snapshot.

        Under ``--agentloom-live`` this checks and writes nothing: a live output is not the recorded one, and
        only a replayed (or recorded) run may be compared with, or become, a golden file.
        """
        __tracebackhide__ = True
        self._snapshots.check(result, name, exclude=exclude, matchers=matchers, requests=requests)


def _check_resumable(result: WorkflowResult) -> None:
    """Refuse a result that cannot be resumed, with the failure that made it so (not only "it has no pause")."""
    __tracebackhide__ = True
    saved = result.checkpoint.get("status") if result.checkpoint is not None else None
    if result.status.value in ("paused", "running") or saved in ("paused", "running"):
        return
    if result.failed_step is not None:
        step = result.steps.get(result.failed_step)
        error = f" ({step.error_code}): {step.error}" if step is not None and step.error else ""
        from ..errors import CheckpointError

        raise CheckpointError(render_message(
            f"agentloom.resume() got run '{result.run_id}', which did not pause: step '{result.failed_step}' "
            f"failed first{error}",
            hint="fix that failure (the run's report below names its step and cassette); a run is resumed "
                 "from the pause it reached.",
        ))
    if result.checkpoint is None and result.checkpoint_path is None:
        raise UsageError(render_message(
            f"agentloom.resume() got run '{result.run_id}' (status {result.status.value}), which has no "
            "checkpoint.",
            hint="resume a run that paused at an approval gate, or run with config checkpoint: true.",
        ))


def _hide_shared(result: WorkflowResult) -> None:
    """Keep a shared cached workflow (see :meth:`AgentloomHarness._workflow`) out of the test's reach.

    ``ran_workflow`` is what resuming a result runs when its workflow has no file; a cached workflow
    always has one (resuming reloads it, and the fixture's ``resume`` keeps the workflow itself), so
    the field is left empty rather than handing the test an object that every later run of the file
    shares, where a change would reach them all.
    """
    result.ran_workflow = None


def _check_overrides(overrides: Mapping[str, Any], nodeid: str) -> None:
    """Refuse a keyword of ``run()`` that is no ``config`` field, naming it and the closest field."""
    if not overrides:
        return
    from .._core.suggest import did_you_mean
    from ..engine._format.model import WorkflowConfig

    known = list(WorkflowConfig.model_fields)
    for key in overrides:
        if key not in known:
            hint = did_you_mean(key, known)
            raise UsageError(render_message(
                f"agentloom.run() got an unexpected keyword '{key}' in {nodeid}: it is no workflow config field.",
                context=[("config fields", ", ".join(known))],
                hint=f"{hint + ' ' if hint else ''}pass config fields as keywords, e.g. "
                     "agentloom.run(path, budget_usd=0.01).",
            ))


