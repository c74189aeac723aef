"""The factory of the harness behind the ``agentloom`` fixture: one per test that takes the fixture.

A harness is put together from the test's settings (:mod:`._test_settings`), its snapshot files (the
snapshot feature's folder for it), its cassette, and what the session's features hear of each run (the
``observer``). Under a drift check, the live side of a test writes under the drift folder only. The harness
and the cassette are kept in the test's stash until its teardown (see :mod:`._harness_feature`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._cassettes import CASSETTE_KEY
from ._harness_feature import HARNESS_KEY
from ._live.repetitions import REPETITION_KEY
from ._snapshots.per_test import TestSnapshots
from ._test_cassette import ReplaySettings, TestCassette

if TYPE_CHECKING:
    from ._feature import Observer
    from ._harness import AgentloomHarness
    from ._live.drift import Drift
    from ._snapshots.feature import SnapshotFeature
    from ._test_settings import MarkedSettings, TestSettings

__all__ = ["HarnessFactory"]


class HarnessFactory:
    """Builds each test's harness from the session's settings, snapshots, cassettes and drift check.

    ``observer`` gives what hears a test's runs (``None``: nothing in this session listens).
    """

    def __init__(self, settings: TestSettings, replay: ReplaySettings, snapshots: SnapshotFeature,
                 drift: Drift | None, observer: Callable[[str], Observer | None] | None) -> None:
        self._settings = settings
        self._replay = replay
        self._snapshots = snapshots
        self._drift = drift
        self._observer = observer

    def build(self, item: pytest.Item, tmp_path: Path, tools: Any = None, *,
              folder_exists: bool = True) -> AgentloomHarness:
        """The harness of ``item`` (``tools``: the ``agentloom_tools`` fixture's, under the markers' own)."""
        defaults, settings = self._settings.for_harness(item)
        if tools:
            from ..tools._registry import tools_by_name

            defaults["tools"] = {**tools_by_name(tools), **defaults.get("tools", {})}
        replay, snapshots = self._snapshot_files(item, settings)
        cassette = item.stash[CASSETTE_KEY] = TestCassette(replay, item, matching=settings.matching,
                                                           repetition=item.stash.get(REPETITION_KEY, None),
                                                           options=settings.cassette_options)
        from ._harness import AgentloomHarness, TestPlace

        place = TestPlace(item.nodeid, item.path.parent, tmp_path, hold_records=not folder_exists)
        harness = item.stash[HARNESS_KEY] = AgentloomHarness(
            place, snapshots, defaults=defaults, cassette=cassette,
            observer=self._observer(item.nodeid) if self._observer is not None else None,
            missing_template_keys=settings.missing_template_keys, faults=settings.faults,
            live_tools=settings.live_tools,
        )
        return harness

    def _snapshot_files(self, item: pytest.Item, settings: MarkedSettings) -> tuple[ReplaySettings, TestSnapshots]:
        """The test's cassette settings and snapshot files: under a drift check, the live side's (which write
        under the drift folder only)."""
        folder, name = self._snapshots.location(item, settings.snapshot_dir)
        replay, store = self._replay, self._snapshots.snapshots
        if self._drift is not None and self._drift.is_live(item.nodeid):
            replay, store = self._drift.live_replay, self._drift.live_snapshots
            folder = self._drift.snapshot_dir(folder)
        return replay, TestSnapshots(item.nodeid, folder, name, store, settings.snapshot_options,
                                     live=self._replay.live.repeats)
