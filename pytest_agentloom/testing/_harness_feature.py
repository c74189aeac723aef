"""The harness's own end of a test, as a feature of the session, and where a test's harness is kept.

The harness behind the ``agentloom`` fixture (built by :mod:`._harness_factory`) lives in its test's stash
under :data:`HARNESS_KEY` until the test's teardown, when :func:`forget` drops it: items live until the
session ends, and their harnesses hold every result, trace and state of their runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ._cassettes import forget_cassette
from ._feature import Feature

if TYPE_CHECKING:
    from ._harness import AgentloomHarness

__all__ = ["HARNESS_KEY", "HarnessFeature", "forget", "harness_of"]

HARNESS_KEY = pytest.StashKey["AgentloomHarness"]()  # the agentloom fixture's object of a test that used it

#: whether a failed phase of the test already got the ``agentloom`` report section
_REPORTED_KEY = pytest.StashKey[bool]()


class HarnessFeature(Feature):
    """Scripted replies no request used fail a passed call; a failed or skipped test's run records (held until
    then) are written, and its first failed phase gets the ``agentloom`` report section."""

    def check_call(self, item: pytest.Item, report: pytest.TestReport) -> None:
        harness = harness_of(item)
        if harness is None or not harness.has_scripted or not report.passed:
            return
        failure = harness.unused_replies_message()
        if failure is not None:
            report.outcome = "failed"
            report.longrepr = failure

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        if report.outcome != "passed":  # failed or skipped
            harness = harness_of(item)
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


def harness_of(item: pytest.Item) -> AgentloomHarness | None:
    """The harness of a test that took the ``agentloom`` fixture, until its teardown; else ``None``."""
    return item.stash.get(HARNESS_KEY, None)


def forget(item: pytest.Item) -> None:
    """After a test's teardown: drop its harness and cassette, which hold every result of its runs.

    Items live until the session ends, so what their stash holds adds up: a 1,000-row table kept
    1,000 harnesses with their results, traces and states, and every full garbage collection
    walked them all.
    """
    if HARNESS_KEY in item.stash:
        del item.stash[HARNESS_KEY]
    forget_cassette(item)
