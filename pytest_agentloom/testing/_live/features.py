"""The live features of the session: repetitions (``--agentloom-live``) and the drift check
(``--agentloom-drift``), each owning its hooks' work (see :mod:`.._feature`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from .._feature import NO_BODY_OPTIONS, Feature, Observer
from .._settings.drift_outputs import OutputMethods
from .drift import Drift
from .repetitions import Plan, RepetitionLog, kept_repetitions, repetition_plan

if TYPE_CHECKING:
    from .._snapshots.compare import SnapshotSession
    from .._test_cassette import ReplaySettings

__all__ = ["DriftFeature", "RepetitionFeature"]


class RepetitionFeature(Feature):
    """A live session: each agentloom test runs its number of repetitions, reported as one test."""

    def __init__(self, config: pytest.Config, defaults: Callable[[pytest.Item], dict[str, Any]],
                 replay: ReplaySettings) -> None:
        self.config = config
        self._defaults = defaults  # a test's merged markers (raises MarkerError on a bad one)
        self._replay = replay
        self.log = RepetitionLog()

    def plan(self, item: pytest.Item) -> Plan | None:
        """How often a test runs; ``None`` for a test that is no agentloom test, or whose marker is bad
        (pytest then runs it once and its setup reports the marker's error)."""
        if "agentloom" not in getattr(item, "fixturenames", ()):
            return None
        if any(getattr(self.config.option, name, False) for name in NO_BODY_OPTIONS):
            return None  # --setup-only, --setup-plan...: no body runs, so nothing to repeat
        try:
            plan = repetition_plan(self.config, self._defaults(item))
        except ValueError:  # MarkerError included
            return None
        if self._replay.live.replay_all:  # as many repetitions as were kept: 1.yaml, 2.yaml, ... on disk
            kept = kept_repetitions(self._replay, item)
            return dataclasses.replace(plan, repeat=kept, early_stop=False) if kept else None
        return plan

    def protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        plan = self.plan(item)
        if plan is None:
            return None
        from .repetitions import run_repetitions

        run_repetitions(item, nextitem, plan, self.log)
        return True

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        self.log.hear(item.nodeid, report)  # the repetition's outcome so far, for an early stop

    def observer(self, nodeid: str) -> Observer | None:
        return self.log.observer(nodeid)

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        return {"repetitions": self.log.to_wire()}

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        self.log.merge(data.get("repetitions"))

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        return self.log.summary_lines()


class DriftFeature(Feature):
    """The drift check: recorded tests only, each run replayed first, then live; its verdict at the end."""

    def __init__(self, drift: Drift, defaults: Callable[[pytest.Item], dict[str, Any]], *, is_worker: bool,
                 harness_of: Callable[[pytest.Item], Any] | None = None,
                 snapshots: SnapshotSession | None = None) -> None:
        self.drift = drift
        self._defaults = defaults  # a test's merged markers (raises MarkerError on a bad one)
        self._is_worker = is_worker
        self._harness_of = harness_of  # a test's harness, or None (see the session)
        drift.committed_snapshots = snapshots  # the replayed side's: its judge verdicts are kept there

    def select(self, items: list[pytest.Item]) -> list[pytest.Item]:
        return self.drift.select(items)[1]  # only recorded agentloom tests are compared

    def protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        self.drift.compare_outputs_by(item.nodeid, self._output_methods(item))
        self.drift.replay_first(item)  # pytest's own protocol then runs it live
        return None

    def _output_methods(self, item: pytest.Item) -> OutputMethods:
        """The test's ``drift_outputs`` (flag, then marker, then ini); the default when its marker is bad (its
        setup then fails with the marker's error)."""
        from .._settings.drift_outputs import parse_methods
        from .._settings.option_table import read_setting_from

        try:
            value, source = read_setting_from(item.config, "drift_outputs", self._defaults(item))
            return parse_methods(value, source)
        except ValueError:  # MarkerError included
            return OutputMethods()

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        if when == "call" and self._harness_of is not None and not self.drift.is_live(item.nodeid):
            harness = self._harness_of(item)  # the replayed run's: its snapshot folder is the committed one
            if harness is not None:
                self.drift.note_snapshot_place(item.nodeid, harness.snapshot_dir, harness.snapshot_name)
        self.drift.note_report(item, report)  # after the checks, which may fail the test

    def observer(self, nodeid: str) -> Observer | None:
        return self.drift.observer(nodeid)

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        return {"drift": self.drift.to_wire()}

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        self.drift.merge(data.get("drift"), died=died)

    def finish(self, session: pytest.Session | None) -> tuple[pytest.ExitCode, ...]:
        """Fail the session when it compared nothing, a worker died (an empty session too), or a verdict is
        at least ``--agentloom-drift-fail-on``."""
        if self._is_worker:
            return ()
        self.drift.write_manifest()
        if self.drift.nothing_compared() is not None or self.drift.partial:
            return (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        return (pytest.ExitCode.OK,) if self.drift.failing() else ()

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        if self._is_worker:
            return []
        from .drift_report import summary_lines

        return summary_lines(self.drift)
