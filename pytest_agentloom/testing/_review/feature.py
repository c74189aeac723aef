"""Workflow coverage and the review report as a feature of the session (``--agentloom-cov``,
``--agentloom-report``): it hears every run, and writes its files at the end."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .._feature import Feature, Observer
from .review import Review

if TYPE_CHECKING:
    from .._live.features import DriftFeature, RepetitionFeature

__all__ = ["ReviewFeature"]


class ReviewFeature(Feature):
    """The session's :class:`~.review.Review`; in a drift check it hears the live side only, and reports drift."""

    def __init__(self, review: Review, drift: DriftFeature | None,
                 repetitions: RepetitionFeature | None = None) -> None:
        self.review = review
        self._drift = drift
        self._repetitions = repetitions
        self.written: list[Path] = []

    def configure(self, config: pytest.Config) -> None:
        if not hasattr(config, "workerinput"):  # the report reads every test's outcome, on the controller
            config.pluginmanager.register(self.review.outcome_listener(), "agentloom-review-outcomes")

    def observer(self, nodeid: str) -> Observer | None:
        if self._drift is not None and not self._drift.drift.is_live(nodeid):
            return None
        return self.review.observer(nodeid)

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        return {"review": self.review.to_wire()}

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        self.review.merge(data.get("review"), died=died)

    def finish(self, session: pytest.Session | None) -> tuple[pytest.ExitCode, ...]:
        """Write the coverage JSON and the report; fail when the branch coverage is below the bar."""
        if self._drift is not None:
            self.review.drift = self._drift.drift.results()  # the report gets a drift section
        if self._repetitions is not None:
            from .._live.repetition_report import repetition_rows

            self.review.repetitions = repetition_rows(self._repetitions.log.tests)
        self.written = self.review.write_files()
        return (pytest.ExitCode.OK,) if self.review.fails() else ()

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        return self.review.summary_lines(self.written)
