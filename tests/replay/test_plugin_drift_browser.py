"""The drift section of the HTML report as a reviewer sees it, in Debian's Chromium driven by Playwright, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.plugin.test_plugin_report_browser import browser, open_offline  # noqa: F401  (browser: a fixture)
from tests.replay.drift_project import drift, plan_bug, record
from tests.replay.helpers import Project


@pytest.mark.slow
def test_the_drift_section_shows_each_tests_changes_offline(browser: Any, project: Project,  # noqa: F811
                                                           tmp_path: Path) -> None:
    record(project)
    plan_bug(project, category="question")
    drift(project, "--agentloom-report=scratch/drift.html").assert_outcomes(passed=1)
    report = project.path / "scratch/drift.html"

    context, page, problems, requested = open_offline(browser, report)

    section = page.locator("section#drift")
    assert section.locator("h2").inner_text() == "Drift (replay → live)"
    assert section.locator("p.totals").inner_text().startswith("1 test compared (replay -> live): 1 changed")
    rows = section.locator("table.drift tbody tr.changed")
    assert rows.count() == 1
    assert rows.first.locator("td").nth(1).inner_text() == "passed → passed"
    changes = section.locator("article.drift-test.changed li").all_inner_texts()
    assert "route: route -> investigate -> route -> reply" in changes
    assert "snapshot __agentloom_snapshots__/test_triage/test_triage.yaml: changed" in changes
    box = section.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 100

    page.screenshot(path=str(tmp_path / "drift.png"), full_page=True)
    assert problems == [] and requested == []
    context.close()
