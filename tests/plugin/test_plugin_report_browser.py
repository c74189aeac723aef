"""The HTML report as a reviewer sees it: opened in headless Chromium (Debian's package) driven by Playwright.

One browser for the module. Every request the page makes other than the file
itself is refused and counted, so a page that needed the network would show it
here. The screenshot lands in the test's tmp folder, for a person to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.test_plugin_coverage import CHILD, CONFTEST, FAST, GATED, ROWS, TESTS

playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# as root on a machine with no internet: no sandbox, and none of Chromium's own background connections
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is missing at {CHROMIUM}: .ci/run installs it (apt-get install -y chromium).")
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def report(triage: pytest.Pytester) -> Path:
    triage.makefile(".yaml", child=CHILD, gated=GATED, rows=ROWS)
    triage.makeconftest(CONFTEST)
    triage.makepyfile(test_flows=TESTS)
    triage.runpytest(*FAST, "--agentloom-report=review.html").assert_outcomes(passed=3)
    return triage.path / "review.html"


def open_offline(browser: Any, report: Path) -> tuple[Any, Any, list[str], list[str]]:
    """``report`` opened in a new offline context: the context, the page, console errors, refused requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    page = context.new_page()
    problems: list[str] = []
    requested: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))

    def refuse(route: Any) -> None:
        if route.request.url != report.as_uri():
            requested.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    page.goto(report.as_uri())
    return context, page, problems, requested


@pytest.mark.slow
def test_the_report_renders_its_graphs_and_timelines_offline_without_console_errors(
        browser: Any, report: Path, tmp_path: Path) -> None:
    context, page, problems, requested = open_offline(browser, report)

    assert page.title() == "agentloom review report"
    graphs = page.locator("svg.agentloom-graph")
    assert graphs.count() == 3  # flow.yaml, gated.yaml and gated.yaml's child
    first = graphs.first.bounding_box()
    assert first is not None and first["width"] > 300 and first["height"] > 60
    assert page.locator("svg.agentloom-graph g.node").count() == 9  # 4 + 2 steps, and the child's 3
    missed = page.locator("g.node.missed")
    assert [missed.nth(i).get_attribute("data-step") for i in range(missed.count())] == ["reply", "do_b"]
    partial = page.locator("g.node.partial")  # routers with the default never taken, a gate never rejected
    assert [partial.nth(i).get_attribute("data-step") for i in range(partial.count())] == ["route", "gate", "pick"]
    assert page.locator("path.missed-branch").count() == 2

    timelines = page.locator("svg.timeline")
    assert timelines.count() == 4  # two triage runs, and the gated row's pause and resume
    for index in range(timelines.count()):
        box = timelines.nth(index).bounding_box()
        assert box is not None and box["width"] > 400 and box["height"] > 20
    bar = page.locator("svg.timeline rect.bar.paused").first.bounding_box()
    assert bar is not None and bar["width"] >= 3
    assert page.locator("article.test.outcome-passed").count() == 3

    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert problems == [] and requested == []
    context.close()


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def examples_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The review report of the examples' own tests (replayed from their cassettes), in a pytest of its own."""
    import subprocess
    import sys

    page = tmp_path_factory.mktemp("examples-report") / "review.html"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    done = subprocess.run([sys.executable, "-m", "pytest", "examples", "-q", "-p", "no:randomly", "-p",
                           "no:cacheprovider", f"--agentloom-report={page}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return page


def boxes_overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


@pytest.mark.slow
def test_the_examples_report_at_1400_px_reads_without_hover_or_sideways_scrolling(
        browser: Any, examples_report: Path, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    page = context.new_page()
    page.goto(examples_report.as_uri())
    page.screenshot(path=str(tmp_path / "examples-report.png"), full_page=True)

    # no horizontal scroll: not the page, not a graph's or a timeline's box
    assert page.evaluate("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")
    assert page.evaluate("[...document.querySelectorAll('.graph, .run')]"
                         ".filter(box => box.scrollWidth > box.clientWidth).length") == 0

    # the router's branches written out in full, each label clear of the others and of every box
    triage = page.locator("article.workflow", has_text="examples/support_triage/triage.yaml")
    triage.screenshot(path=str(tmp_path / "support-triage-graph.png"))
    labels = triage.locator("text.edge-label")
    texts = [" ".join(labels.nth(i).locator("tspan").all_text_contents()) for i in range(labels.count())]
    assert texts == ["category.strip().lower() == 'bug'", "category.strip().lower() == 'billing'", "otherwise"]
    label_boxes = [labels.nth(i).bounding_box() for i in range(labels.count())]
    nodes = triage.locator("g.node rect")
    node_boxes = [nodes.nth(i).bounding_box() for i in range(nodes.count())]
    assert all(box is not None for box in [*label_boxes, *node_boxes])
    for index, box in enumerate(label_boxes):
        assert not any(boxes_overlap(box, other) for other in label_boxes[index + 1:]), texts[index]
        assert not any(boxes_overlap(box, node) for node in node_boxes), texts[index]

    # a run that took no virtual time is drawn in the order its steps ran, not as bars all at 0 s
    ordered = page.locator("svg.timeline", has_text="in the order they ran")
    assert ordered.count() >= 1
    several = [ordered.nth(i) for i in range(ordered.count()) if ordered.nth(i).locator("rect.bar").count() >= 3]
    assert several, "no run of three steps or more at 0 s"
    several[0].screenshot(path=str(tmp_path / "timeline-in-order.png"))
    bars = several[0].locator("rect.bar")
    starts = [float(bars.nth(i).get_attribute("x") or 0) for i in range(bars.count())]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert page.locator("svg.timeline text.attempts").count() >= 1  # a retried step says so without hover

    # coverage wording: never "nothing" followed by agent stops that were never reached
    text = page.inner_text("body")
    assert "never reached: nothing" not in text
    agent = page.locator("article.workflow", has_text="examples/agent_triage/triage.yaml")
    if agent.locator("text=agent stops never reached").count():
        assert "never reached: no step, branch or gate decision" in agent.inner_text()
    context.close()
