"""Judge verdicts as a feature of the session: after a test's call, write the verdict snapshots a recording
refreshed, when the test passed (with its cassette, or not at all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pytest

from .._feature import Feature

__all__ = ["JudgeFeature"]


class _Judged(Protocol):
    """What this feature reads of a test's harness."""

    @property
    def has_verdict_book(self) -> bool: ...

    def finish_verdicts(self, passed: bool) -> None: ...


class JudgeFeature(Feature):
    """Flushes each test's verdict book; a test that made no judge call has none and costs a lookup."""

    def __init__(self, harness_of: Callable[[pytest.Item], Any]) -> None:
        self._harness_of = harness_of  # the test's harness, or None (see the session)

    def check_call(self, item: pytest.Item, report: pytest.TestReport) -> None:
        harness: _Judged | None = self._harness_of(item)
        if harness is not None and harness.has_verdict_book:  # before the cassette's check may fail the call
            harness.finish_verdicts(passed=report.passed)
