"""State the plugin keeps for one pytest session, under ``config.stash[SESSION_KEY]``: a short composition.

The session reads each test's markers (merged once per sequence of mark objects) and builds the harness
behind the ``agentloom`` fixture; everything else is a feature object, one per feature (snapshots, judge
verdicts, cassettes, scripted replies and run records, coverage and the review report, repetitions, the
drift check), each in its room of ``testing/`` and each owning its hooks' work and its summary lines. The
hooks in :mod:`pytest_agentloom.plugin` call the methods here, which ask the features in order; the xdist
transport (:mod:`._transport`) sends and merges what each feature shares.

To add a feature: write one :class:`~._feature.Feature` subclass in its room, overriding the hooks it needs,
and add it to :meth:`AgentloomSession._features` (see :mod:`._feature`). Nothing else changes.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._cassettes import CASSETTE_KEY, CassetteFeature, forget_cassette
from ._feature import Feature, Observer, overrides
from ._judge.feature import JudgeFeature
from ._live.repetitions import REPETITION_KEY
from ._review.review import Review, ReviewSettings
from ._settings.option_table import marker_defaults, read_setting, read_setting_from
from ._snapshots.compare import SnapshotOptions, SnapshotSession, sanitize
from ._snapshots.feature import SnapshotFeature, module_name
from ._snapshots.per_test import TestSnapshots
from ._test_cassette import CassetteOptions, ReplaySettings, TestCassette
from ._transport import WIRE_KEY, Transport
from ._usage.feature import UsageFeature

if TYPE_CHECKING:
    from ..providers._faults import Fault
    from ._harness import AgentloomHarness
    from ._live.drift import Drift
    from ._live.features import DriftFeature, RepetitionFeature
    from ._review.feature import ReviewFeature

__all__ = ["CASSETTE_KEY", "SESSION_KEY", "WIRE_KEY", "AgentloomSession"]


class AgentloomSession:
    """Settings and markers, the harness factory, and the session's features, asked in order by each hook."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._known_settings: dict[str, tuple[Any, str]] = {}  # command line and ini: read once (see setting)
        self._unmarked_snapshot_options: SnapshotOptions | None = None
        #: merged markers by the ids of the marks merged, with those marks (see merged_markers)
        self._merged: dict[tuple[int, ...], _Marked] = {}
        self.scenario_glob = str(read_setting(config, "scenario_glob"))
        self.is_worker = hasattr(config, "workerinput")
        self.replay = ReplaySettings.from_config(config)  # cassettes: folder and record mode (refused under CI)
        _check_cassette_ini(config)
        self.drift = _drift(config, self.replay)  # --agentloom-drift: each recorded test replayed, then live
        self.features = self._features()
        self.transport = Transport(self.features)
        self._hooks = {hook: [f for f in self.features if overrides(f, hook)] for hook in _HOOKS}
        self._check_call = [f.check_call for f in self._hooks["check_call"]]  # bound once: run per test
        self._after_report = [f.after_report for f in self._hooks["after_report"]]
        #: whether anything observes the harness's runs (see observer); none does in most sessions
        self._observed = bool(self._hooks["observer"])

    def _features(self) -> list[Feature]:
        """The features of this session, in the order each hook asks them (and their summary lines come)."""
        judged = not self.live and self.drift is None
        self.snapshot_feature = SnapshotFeature(self.config, self.snapshot_location, judged=judged,
                                                recording=judged and self.replay.mode.records)
        self.snapshots = self.snapshot_feature.snapshots
        mode = self.drift.live_replay.mode if self.drift is not None else self.replay.mode
        drift = _drift_feature(self.drift, self.defaults, is_worker=self.is_worker, snapshots=self.snapshots)
        repetitions = _repetition_feature(self.config, self.defaults, self.replay) if self.replay.live.repeats \
            else None
        review = _review_feature(self.config, drift, repetitions)
        usage = UsageFeature(self.config, self.replay, self.snapshot_feature, review,
                             judged=not self.live and self.drift is None)  # unused cassettes, shard report
        chosen = (self.snapshot_feature, usage, JudgeFeature(_harness_of), CassetteFeature(mode, self.snapshots),
                  _HarnessFeature(), review, repetitions, drift)
        return [feature for feature in chosen if feature is not None]

    @property
    def live(self) -> bool:
        """``--agentloom-live``: tests call live providers, keep no cassette and compare no snapshot."""
        return self.replay.live.live

    # -- session hooks --------------------------------------------------------------------------------------

    def configure(self) -> None:
        for feature in self._hooks["configure"]:
            feature.configure(self.config)

    def select(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """The items the features deselect (``pytest_collection_modifyitems``), and ``items`` without them."""
        drop: list[pytest.Item] = []
        for feature in self._hooks["select"]:
            dropped = feature.select(items)
            if dropped:
                ids = set(map(id, dropped))
                items[:] = [item for item in items if id(item) not in ids]
                drop += dropped
        return drop

    def deselected(self, count: int) -> None:
        for feature in self._hooks["deselected"]:
            feature.deselected(count)

    def collected(self, items: list[pytest.Item], *, errors: int) -> None:
        for feature in self._hooks["collected"]:
            feature.collected(items, errors)

    def protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """``True`` when a feature ran the test itself (repetitions); the first to do so wins."""
        for feature in self._hooks["protocol"]:
            if feature.protocol(item, nextitem):
                return True
        return None

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        """Each phase's report of every test, in order (the ``pytest_runtest_makereport`` wrapper).

        A call's report first goes through the checks that may fail it (verdicts, cassette, scripted replies),
        then every phase's through the features that read its outcome (snapshots, run records, drift);
        teardown drops the harness and cassette. This runs three times for each row of a table.
        """
        if when == "call":
            for check in self._check_call:
                check(item, report)
        for after in self._after_report:
            after(item, when, report)
        if when == "teardown":  # after a failed teardown has kept the test's run records
            forget(item)

    def finish(self, session: pytest.Session | None = None) -> None:
        """On the controller (or alone): each feature's end of session; a failing one fails the exit status."""
        if self.is_worker:
            self.transport.send(self.config, session)
            return
        for feature in self._hooks["finish"]:
            statuses = feature.finish(session)
            if session is not None and session.exitstatus in statuses:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED  # reported in the summary

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        """The lines of the terminal summary's ``agentloom`` section, each feature's in turn."""
        return [line for feature in self._hooks["summary_lines"] for line in feature.summary_lines(stats)]

    # -- per test -----------------------------------------------------------------------------------------
    def defaults(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item`` (raises MarkerError on a bad argument), the caller's own."""
        return _own_copy(self.merged_markers(item))

    def merged_markers(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item``, shared: callers must not change it (see :meth:`defaults`)."""
        return self._marked(item).merged

    def _marked(self, item: pytest.Item) -> _Marked:
        """The merge of ``item``'s ``agentloom`` markers, and the settings the harness reads from it.

        Setup checks them and the fixture uses them, for every row of a table, whose rows share their
        function's mark objects: so the merge is kept per *sequence of mark objects* (the key holds their
        ids, the entry holds the marks themselves, so no id is reused while it is kept). A row's own marks
        (``pytest.param(marks=...)``) or a mark a fixture adds (``add_marker``) make another sequence,
        merged on its own. A bad marker raises each time, naming the test it is on.
        """
        marks = tuple(item.iter_markers("agentloom"))
        key = tuple(map(id, marks))
        known = self._merged.get(key)
        if known is None:
            if len(self._merged) >= _MAX_MERGED:
                self._merged.clear()
            # no marks, nothing to merge: and merging would import the engine's models for a session of
            # tests that never use the plugin
            merged = marker_defaults(marks, where=item.nodeid) if marks else {"config": {}}
            known = self._merged[key] = _Marked(marks, merged)
        return known

    def _settings(self, marked: _Marked) -> _MarkedSettings:
        """What a harness reads from the markers and the command line or ini, worked out once per merge (the
        command line and ini do not change while tests run; see :meth:`setting`)."""
        if marked.settings is None:
            merged = marked.merged
            marked.settings = _MarkedSettings(
                snapshot_dir=os.fspath(self.setting("snapshot_dir", merged)), matching=self.matching(merged),
                cassette_options=self.cassette_options(merged),
                snapshot_options=self.snapshot_options(merged),
                missing_template_keys=str(self.setting("missing_template_keys", merged)),
                faults=self.faults(merged), live_tools=self.live_tools(merged),
            )
        return marked.settings

    def faults(self, defaults: dict[str, Any]) -> tuple[Fault, ...]:
        """The faults injected into a test's runs (``--agentloom-inject``, the marker's ``inject=``, the ini)."""
        from ..providers._faults import parse_faults

        value, source = read_setting_from(self.config, "inject", defaults, known=self._known_settings)
        return parse_faults(value or None, source)

    def live_tools(self, defaults: dict[str, Any]) -> tuple[str, ...]:
        """The tools with side effects a test's replays run for real and compare with the tool tape."""
        value = self.setting("live_tools", defaults)
        if not value:
            return ()
        names = value.split(",") if isinstance(value, str) else list(value)
        return tuple(name.strip() for name in names if str(name).strip())

    def setting(self, name: str, defaults: dict[str, Any]) -> Any:
        """A setting of one test (command line, then its markers' ``defaults``, then ini), for the harness."""
        return read_setting(self.config, name, defaults, known=self._known_settings)

    def snapshot_location(self, item: pytest.Item) -> tuple[Path, str]:
        """This test's snapshot folder (``<dir>/<module>``) and file stem (``<test>[<param>]``)."""
        return self._snapshot_location(item, self._settings(self._marked(item)).snapshot_dir)

    def _snapshot_location(self, item: pytest.Item, setting: str) -> tuple[Path, str]:
        root, module_folder = _snapshot_folder(setting, item.path)
        self.snapshots.roots.add(root)
        parts = item.nodeid.split("::")[1:]
        return module_folder, sanitize(".".join(parts) or item.name)

    def harness(self, item: pytest.Item, tmp_path: Path, tools: Any = None, *,
                folder_exists: bool = True) -> AgentloomHarness:
        marked = self._marked(item)
        settings = self._settings(marked)
        defaults = _own_copy(marked.merged)
        if tools:
            from ..tools._registry import tools_by_name

            defaults["tools"] = {**tools_by_name(tools), **defaults.get("tools", {})}
        snapshot_dir, snapshot_name = self._snapshot_location(item, settings.snapshot_dir)
        replay, snapshots = self.replay, self.snapshots
        if self.drift is not None and self.drift.is_live(item.nodeid):  # the live side writes under DIR only
            replay, snapshots = self.drift.live_replay, self.drift.live_snapshots
            snapshot_dir = self.drift.snapshot_dir(snapshot_dir)
        cassette = item.stash[CASSETTE_KEY] = TestCassette(replay, item, matching=settings.matching,
                                                           repetition=item.stash.get(REPETITION_KEY, None),
                                                           options=settings.cassette_options)
        from ._harness import AgentloomHarness, TestPlace

        place = TestPlace(item.nodeid, item.path.parent, tmp_path, hold_records=not folder_exists)
        test_snapshots = TestSnapshots(item.nodeid, snapshot_dir, snapshot_name, snapshots,
                                       settings.snapshot_options, live=self.replay.live.repeats)
        harness = item.stash[HARNESS_KEY] = AgentloomHarness(
            place, test_snapshots, defaults=defaults, cassette=cassette,
            observer=self.observer(item.nodeid) if self._observed else None,
            missing_template_keys=settings.missing_template_keys, faults=settings.faults,
            live_tools=settings.live_tools,
        )
        return harness

    def observer(self, nodeid: str) -> Observer | None:
        """What the harness tells of each finished run: each feature that listens hears it (workflow coverage,
        in a live session the repetitions' summary, in a drift check the facts of each side)."""
        observers = [each for feature in self._hooks["observer"] if (each := feature.observer(nodeid)) is not None]
        if len(observers) < 2:
            return observers[0] if observers else None

        def observe(*run: Any) -> None:
            for each in observers:
                each(*run)

        return observe

    def snapshot_options(self, defaults: dict[str, Any]) -> SnapshotOptions:
        """A test's snapshot defaults: marker, then ini (see :mod:`._settings.option_table`), ``-vv`` for diffs.

        The same for every test whose markers set none of them (worked out once for those).
        """
        if any(key in defaults for key in _SNAPSHOT_KEYS):
            return self._snapshot_options(defaults)
        if self._unmarked_snapshot_options is None:
            self._unmarked_snapshot_options = self._snapshot_options(defaults)
        return self._unmarked_snapshot_options

    def _snapshot_options(self, defaults: dict[str, Any]) -> SnapshotOptions:
        matchers = self.setting("snapshot_matchers", defaults)
        if not isinstance(matchers, dict) and matchers:  # ini lines (none: no matchers, and no import for them)
            from ._snapshots.volatile import matchers_from_lines

            matchers = matchers_from_lines(matchers, "ini agentloom_snapshot_matchers")
        return SnapshotOptions(
            requests=bool(self.setting("snapshot_requests", defaults)),
            exclude=tuple(self.setting("snapshot_exclude", defaults)), matchers=dict(matchers),
            verbose=self.config.get_verbosity(),
        )

    def matching(self, defaults: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """A test's cassette matching additions: body paths to ignore and extra matchers (marker, then ini)."""
        ignore = tuple(self.setting("cassette_ignore", defaults))
        return ignore, tuple(self.setting("cassette_matchers", defaults))

    def cassette_options(self, defaults: dict[str, Any]) -> CassetteOptions:
        """A test's response filters and cassette age (marker, then ini); a bad value errors the test, naming it."""
        return CassetteOptions.read(lambda name: read_setting_from(self.config, name, defaults,
                                                                   known=self._known_settings))

    def is_scenario_file(self, path: Path) -> bool:
        return fnmatch.fnmatch(path.name, self.scenario_glob)



def _check_cassette_ini(config: pytest.Config) -> None:
    """A bad cassette age or on_expiry in the ini is a usage error of the session, before any test runs."""
    import pytest

    from ..errors import UsageError
    from ..providers._faults import parse_faults

    try:
        CassetteOptions.read(lambda name: read_setting_from(config, name))
        parse_faults(*read_setting_from(config, "inject"))  # a bad fault fails the session before any test
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


class _HarnessFeature(Feature):
    """The harness's own end of a test: scripted replies no request used fail a passed call; a failed or
    skipped test's run records (held until then) are written."""

    def check_call(self, item: pytest.Item, report: pytest.TestReport) -> None:
        harness = item.stash.get(HARNESS_KEY, None)
        if harness is None or not harness.has_scripted or not report.passed:
            return
        failure = harness.unused_replies_message()
        if failure is not None:
            report.outcome = "failed"
            report.longrepr = failure

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        if report.outcome != "passed":  # failed or skipped
            harness = item.stash.get(HARNESS_KEY, None)
            if harness is not None:
                harness.keep_records()
                if report.failed:
                    _add_run_section(item, when, report, harness)


def _add_run_section(item: pytest.Item, when: str, report: pytest.TestReport, harness: AgentloomHarness) -> None:
    """The first failed phase of a test that ran workflows: the ``agentloom`` section of its report (printed
    under the failure) and a property of the same name (the junit XML takes the teardown report's, which
    copies the item's)."""
    if item.stash.get(_REPORTED_KEY, False):
        return
    text = harness.report_section()
    if text is None:
        return
    item.stash[_REPORTED_KEY] = True
    from ._run_report import REPORT_SECTION

    report.sections.append((REPORT_SECTION, text))
    (report.user_properties if when == "teardown" else item.user_properties).append((REPORT_SECTION, text))


#: whether a failed phase of the test already got the ``agentloom`` report section
_REPORTED_KEY = pytest.StashKey[bool]()


def forget(item: pytest.Item) -> None:
    """After a test's teardown: drop its harness and cassette, which hold every result of its runs.

    Items live until the session ends, so what their stash holds adds up: a 1,000-row table kept
    1,000 harnesses with their results, traces and states, and every full garbage collection
    walked them all.
    """
    if HARNESS_KEY in item.stash:
        del item.stash[HARNESS_KEY]
    forget_cassette(item)


def _harness_of(item: pytest.Item) -> AgentloomHarness | None:
    return item.stash.get(HARNESS_KEY, None)


#: the hooks of :class:`~._feature.Feature` the session asks its features
_HOOKS = ("configure", "select", "deselected", "collected", "protocol", "check_call", "after_report", "observer",
          "finish", "summary_lines")


def _review_feature(config: pytest.Config, drift: DriftFeature | None,
                    repetitions: RepetitionFeature | None) -> ReviewFeature | None:
    """Workflow coverage and the review report, when asked for."""
    settings = ReviewSettings.from_config(config)
    if not settings.enabled:
        return None
    from ._review.feature import ReviewFeature

    return ReviewFeature(Review(settings, Path(config.rootpath)), drift, repetitions)


def _repetition_feature(config: pytest.Config, defaults: Any, replay: ReplaySettings) -> RepetitionFeature:
    from ._live.features import RepetitionFeature

    return RepetitionFeature(config, defaults, replay)


def _drift_feature(drift: Any, defaults: Any, *, is_worker: bool, snapshots: SnapshotSession) -> DriftFeature | None:
    if drift is None:
        return None
    from ._live.features import DriftFeature

    return DriftFeature(drift, defaults, is_worker=is_worker, harness_of=_harness_of, snapshots=snapshots)


def _drift(config: pytest.Config, replay: ReplaySettings) -> Drift | None:
    """The drift check's state when ``--agentloom-drift`` asks for it (its folder made and marked)."""
    if read_setting(config, "drift") in (None, ""):
        return None
    from ._live.drift import Drift, DriftSettings

    settings = DriftSettings.from_config(config, replay)
    if settings is None:
        return None
    settings.prepare()
    return Drift(settings, replay)


SESSION_KEY = pytest.StashKey[AgentloomSession]()
#: the marker keywords :meth:`AgentloomSession.snapshot_options` reads
_SNAPSHOT_KEYS = ("snapshot_matchers", "snapshot_requests", "snapshot_exclude")


@functools.lru_cache(maxsize=1024)
def _snapshot_folder(setting: str, test_file: Path) -> tuple[str, Path]:
    """The snapshot root (as text) and the test module's folder in it, worked out once per test file and
    setting: the rows of a table share both."""
    folder = Path(setting)
    root = folder if folder.is_absolute() else test_file.parent / folder
    return str(root), root / module_name(test_file)


HARNESS_KEY = pytest.StashKey["AgentloomHarness"]()  # the agentloom fixture's object of a test that used it


@dataclass
class _Marked:
    """The merge of one sequence of ``agentloom`` marks (kept with them: see ``AgentloomSession._marked``)."""

    marks: tuple[Any, ...]
    merged: dict[str, Any]
    settings: _MarkedSettings | None = None


@dataclass(frozen=True)
class _MarkedSettings:
    """The settings a harness reads that depend on the markers only (and the command line and ini)."""

    snapshot_dir: str
    matching: tuple[tuple[str, ...], tuple[Any, ...]]
    cassette_options: CassetteOptions
    snapshot_options: SnapshotOptions
    missing_template_keys: str
    faults: tuple[Fault, ...] = ()
    live_tools: tuple[str, ...] = ()


def _own_copy(merged: dict[str, Any]) -> dict[str, Any]:
    """A merge of markers that the caller may add to, and add to its ``config`` (the kept merge is shared)."""
    return {**merged, "config": dict(merged["config"])}


#: how many merged marker sequences a session keeps (one per marked test function, in most suites)
_MAX_MERGED = 4096
