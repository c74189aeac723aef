"""State the plugin keeps for one pytest session, under ``config.stash[SESSION_KEY]``: a short composition.

The session is its features, one object per feature (snapshots, unused cassettes and the shard report, judge
verdicts, cassettes, the harness's own checks, coverage and the review report, repetitions, the drift check),
each in its room of ``testing/`` and each owning its hooks' work and its summary lines. The hooks in
:mod:`pytest_agentloom.plugin` call the methods here, which ask the features in order; the xdist transport
(:mod:`._transport`) sends and merges what each feature shares. Two parts serve the tests rather than the
hooks: ``settings`` (:mod:`._test_settings`: what each test's markers, the ini and the command line say) and
``harnesses`` (:mod:`._harness_factory`: the harness behind the ``agentloom`` fixture).

To add a feature: write one :class:`~._feature.Feature` subclass in its room, overriding the hooks it needs,
and add it to :meth:`AgentloomSession._features` (see :mod:`._feature`). Nothing else changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._cassettes import CASSETTE_KEY, CassetteFeature
from ._feature import Feature, Observer, overrides
from ._harness_factory import HarnessFactory
from ._harness_feature import HarnessFeature, forget, harness_of
from ._judge.feature import JudgeFeature
from ._review.review import Review, ReviewSettings
from ._settings.option_table import read_setting
from ._snapshots.feature import SnapshotFeature
from ._test_cassette import ReplaySettings
from ._test_settings import TestSettings
from ._transport import WIRE_KEY, Transport
from ._usage.feature import UsageFeature

if TYPE_CHECKING:
    from ._live.drift import Drift
    from ._live.features import DriftFeature, RepetitionFeature
    from ._review.feature import ReviewFeature
    from ._snapshots.compare import SnapshotSession

__all__ = ["CASSETTE_KEY", "SESSION_KEY", "WIRE_KEY", "AgentloomSession"]


class AgentloomSession:
    """The session's features, asked in order by each hook, and the summary they make together."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.replay = ReplaySettings.from_config(config)  # cassettes: folder and record mode (refused under CI)
        self.settings = TestSettings(config)  # each test's markers, ini and command line (a bad ini fails here)
        self.drift = _drift(config, self.replay)  # --agentloom-drift: each recorded test replayed, then live
        self.features = self._features()
        self.transport = Transport(self.features)
        self._hooks = {hook: [f for f in self.features if overrides(f, hook)] for hook in _HOOKS}
        self._check_call = [f.check_call for f in self._hooks["check_call"]]  # bound once: run per test
        self._after_report = [f.after_report for f in self._hooks["after_report"]]
        # each harness tells its runs to the features that listen (in most sessions none does: no observer)
        self.harnesses = HarnessFactory(self.settings, self.replay, self.snapshot_feature, self.drift,
                                        observer=self.observer if self._hooks["observer"] else None)

    def _features(self) -> list[Feature]:
        """The features of this session, in the order each hook asks them (and their summary lines come)."""
        judged = not self.replay.live.live and self.drift is None  # live: no snapshot compared, no cassette kept
        self.snapshot_feature = SnapshotFeature(self.config, self.settings.snapshot_dir, judged=judged,
                                                recording=judged and self.replay.mode.records)
        mode = self.drift.live_replay.mode if self.drift is not None else self.replay.mode
        defaults = self.settings.defaults
        drift = _drift_feature(self.drift, defaults, is_worker=self.is_worker,
                               snapshots=self.snapshot_feature.snapshots)
        repetitions = _repetition_feature(self.config, defaults, self.replay) if self.replay.live.repeats else None
        review = _review_feature(self.config, drift, repetitions)
        usage = UsageFeature(self.config, self.replay, self.snapshot_feature, review, judged=judged)  # shard report
        chosen = (self.snapshot_feature, usage, JudgeFeature(harness_of),
                  CassetteFeature(mode, self.snapshot_feature.snapshots), HarnessFeature(), review, repetitions, drift)
        return [feature for feature in chosen if feature is not None]

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

    return DriftFeature(drift, defaults, is_worker=is_worker, harness_of=harness_of, snapshots=snapshots)


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
