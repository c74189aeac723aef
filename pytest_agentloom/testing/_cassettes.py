"""Cassettes as a feature of the session: finish each test's cassette after its call, and sum them up.

A test's :class:`~._test_cassette.TestCassette` is made with its harness (see the session) and kept in the
test's stash under :data:`CASSETTE_KEY` until its teardown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ..replay._modes import RecordMode
from ._feature import Feature
from ._snapshots.compare import SnapshotSession
from ._test_cassette import ReplaySummary, TestCassette

__all__ = ["CASSETTE_KEY", "CassetteFeature", "forget_cassette"]

CASSETTE_KEY = pytest.StashKey[TestCassette]()  # the cassette of a test that used the agentloom fixture


class CassetteFeature(Feature):
    """After each call: write the cassette when recording, flag it if stale, fail on unused interactions."""

    def __init__(self, mode: RecordMode, snapshots: SnapshotSession | None = None) -> None:
        self.mode = mode  # the record mode the summary names (the live side's, in a drift check)
        self._snapshots = snapshots  # to say why a recording was not written: its snapshot changed

    def check_call(self, item: pytest.Item, report: pytest.TestReport) -> None:
        cassette = item.stash.get(CASSETTE_KEY, None)
        if cassette is None or cassette.session is None:  # nothing to finish for a cassette no run opened
            return
        snapshot_changed = self._snapshots is not None and item.nodeid in self._snapshots.mismatched
        failure, properties = cassette.finish(passed=report.passed, snapshot_changed=snapshot_changed)
        report.user_properties.extend(properties)
        if failure is not None:
            report.outcome = "failed"
            report.longrepr = failure

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        """Lines about cassettes, read from every report (those of xdist workers too)."""
        summary = ReplaySummary()
        for reports in stats.values():
            for report in reports:
                summary.add_report(report)
        return summary.lines(self.mode)


def forget_cassette(item: pytest.Item) -> None:
    """After a test's teardown: release and drop its cassette (a run in a fixture's teardown opened it again)."""
    if CASSETTE_KEY in item.stash:
        item.stash[CASSETTE_KEY].release()
        del item.stash[CASSETTE_KEY]
