"""--agentloom-report=PATH.md and PATH.html (and the ini key): what they hold, checked by parsing them.

The page as a browser shows it is checked in ``test_plugin_report_browser.py``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.plugin.test_plugin_coverage import CHILD, CONFTEST, FAST, GATED, ROWS, TESTS

SNAPSHOT_TEST = """\
def test_snapshot(agentloom):
    provider = agentloom.scripted(classify="REPLY", reply="Thanks!", allow_unused=True)  # reply runs only for questions
    result = agentloom.run("flow.yaml", state={"ticket": "t"}, provider=provider)
    agentloom.assert_snapshot(result)
"""


@pytest.fixture
def suite(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makefile(".yaml", child=CHILD, gated=GATED, rows=ROWS)
    triage.makeconftest(CONFTEST)
    triage.makepyfile(test_flows=TESTS, test_snap=SNAPSHOT_TEST.replace("REPLY", "bug"))
    triage.runpytest(*FAST, "--agentloom-update-snapshots").assert_outcomes(passed=4)
    triage.makepyfile(test_snap=SNAPSHOT_TEST.replace("REPLY", "question"))  # now the snapshot differs
    return triage


def _report(pytester: pytest.Pytester, name: str, *args: str) -> str:
    result = pytester.runpytest(*FAST, f"--agentloom-report={name}", *args)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([f"agentloom: wrote *{name}"])
    return (pytester.path / name).read_text(encoding="utf-8")


def test_markdown_report_has_totals_coverage_mermaid_graphs_tests_and_the_snapshot_diff(
        suite: pytest.Pytester) -> None:
    text = _report(suite, "review.md")
    assert text.startswith("# agentloom review report\n")
    assert "**4 tests (1 failed, 3 passed) · 5 runs · 0 tokens · $0.000000 · steps 8/9 (88.9%) · branches 4/6 " \
           "(66.7%)**" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows[:2] == [
        "| `flow.yaml` | 3 | 4/4 (100%) | 2/2 (100%) | — |",
        "| `gated.yaml` | 2 | 4/5 (80%) | 2/4 (50%) | step sub/do_b, branch sub/pick -> default, decision gate: "
        "rejected |",
    ]
    blocks = re.findall(r"```mermaid\n(.*?)\n```", text, flags=re.S)
    assert len(blocks) == 3 and all(block.startswith("flowchart LR\n") for block in blocks)
    assert "  class n0,n1,n2,n3 covered" in blocks[0]
    assert "  class n0 partial" in blocks[1] and "  class n1 covered" in blocks[1]  # the gate was never rejected
    assert "subworkflow step sub:\n\n```mermaid" in text  # the child, drawn with its own coverage
    assert "  class n0 partial" in blocks[2] and "  class n1 covered" in blocks[2] and "  class n2 missed" in blocks[2]
    tests = {row.split("|")[1].strip(" `"): row.split("|")[2].strip() for row in rows[2:]}
    assert tests["test_snap.py::test_snapshot"] == "failed"
    assert tests["test_flows.py::test_bug"] == "passed"
    failures = text.split("## Failures", 1)[1]
    assert "<code>test_snap.py::test_snapshot</code>" in failures and "```text" in failures
    assert "question" in failures  # the snapshot diff names what changed


def test_markdown_graph_marks_the_branch_never_taken_and_the_step_never_run(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_one="""
def test_bug(agentloom):
    assert agentloom.run("flow.yaml", state={"ticket": "x"}, provider=agentloom.scripted(classify="bug")).ok
""")
    triage.runpytest(*FAST, "--agentloom-report=r.md").assert_outcomes(passed=1)
    block = re.findall(r"```mermaid\n(.*?)\n```", (triage.path / "r.md").read_text(), flags=re.S)[0]
    assert "  n1 ==>|\"category == 'bug'\"| n2" in block
    assert "  n1 -.->|\"default\"| n3" in block  # dotted: never taken
    assert "  class n0,n2 covered" in block and "  class n1 partial" in block and "  class n3 missed" in block


class _Page(HTMLParser):
    """Counts of the tags and classes the report must hold, and every attribute value."""

    def __init__(self) -> None:
        super().__init__()
        self.classes: list[str] = []
        self.tags: list[str] = []
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.values.append(value or "")
            if name == "class" and value:
                self.classes += value.split()


def test_html_report_is_one_self_contained_page(suite: pytest.Pytester) -> None:
    text = _report(suite, "review.html")
    assert not re.search(r"https?://", text), "the page must name no server"
    page = _Page()
    page.feed(text)
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert page.classes.count("agentloom-graph") == 3  # one per workflow, and one for the subworkflow child
    assert page.classes.count("timeline") == 5  # one per run
    assert page.classes.count("outcome-failed") == 1 and page.classes.count("outcome-passed") == 3
    assert "failure" in page.classes and "question" in text
    assert all(not value.startswith(("//", "url(http")) for value in page.values)


@pytest.mark.xdist
def test_the_report_is_byte_identical_across_runs_and_with_xdist(suite: pytest.Pytester) -> None:
    first = _report(suite, "a.html")
    assert _report(suite, "b.html") == first
    pytest.importorskip("xdist")
    result = suite.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-report=c.html")
    result.assert_outcomes(passed=3, failed=1)
    assert (suite.path / "c.html").read_text(encoding="utf-8") == first


def test_ini_key_writes_the_report(triage: pytest.Pytester) -> None:
    triage.makeini("[pytest]\nagentloom_report = out/review.md\n")
    triage.makepyfile(test_one="""
def test_bug(agentloom):
    assert agentloom.run("flow.yaml", state={"ticket": "x"}, provider=agentloom.scripted(classify="bug")).ok
""")
    triage.runpytest(*FAST).assert_outcomes(passed=1)
    assert (triage.path / "out" / "review.md").read_text().startswith("# agentloom review report")
