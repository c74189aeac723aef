"""The drift check compares each step's output, replay against live, and gives each test a verdict:
``identical``, ``benign`` (outputs within their threshold) or ``regression`` (behaviour or an output beyond it);
``--agentloom-drift-fail-on`` turns a verdict into the session's exit status."""

from __future__ import annotations

import pytest

from tests.replay.drift_project import committed, drift, plan_bug, record
from tests.replay.helpers import Project


def test_a_rewritten_answer_on_the_same_route_is_a_regression(project: Project) -> None:
    record(project)
    before = committed(project)
    plan_bug(project, answer="Completely different answer text.")  # same route, same tool call

    result = drift(project, "--agentloom-report=scratch/drift.md")

    result.assert_outcomes(passed=1)
    assert result.ret == 0  # drift alone does not fail the session unless asked to
    result.stdout.fnmatch_lines([
        "agentloom drift: 1 test compared (replay -> live): 1 changed, 0 unchanged (1 regression, 0 benign, "
        "0 identical) · *",
        "  test_triage.py::test_triage: passed -> passed, * changes: regression (output investigate)",
        "    output investigate: 'A printer fire.' -> 'Completely different answer text.' (similarity 0.00 < 0.6)",
        "    snapshot __agentloom_snapshots__/test_triage/test_triage.yaml: changed",
    ])
    assert committed(project) == before
    report = (project.path / "scratch/drift.md").read_text()
    assert "| passed -> passed | regression (output investigate) | 3 |" in report


def test_an_answer_within_the_threshold_is_benign(project: Project) -> None:
    record(project)
    plan_bug(project, answer="The printer fire.")  # 2 of 3 words shared: cosine 0.67

    result = drift(project, "--agentloom-drift-fail-on=regression")

    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "agentloom drift: 1 test compared (replay -> live): 1 changed, 0 unchanged (0 regression, 1 benign, "
        "0 identical) · *",
        "  test_triage.py::test_triage: passed -> passed, * changes: benign",
        "    output investigate: similar (0.67 >= 0.6)",
    ])


@pytest.mark.parametrize("how", ["marker", "ini", "flag"])
def test_a_step_compared_exactly_makes_the_same_change_a_regression(project: Project, how: str) -> None:
    record(project)
    args = []
    if how == "marker":
        test = (project.path / "test_triage.py").read_text()
        (project.path / "test_triage.py").write_text(test.replace(
            "def test_triage(", "import pytest\n\n\n@pytest.mark.agentloom(drift_outputs={'investigate': 'exact'})\n"
                                "def test_triage("))
    elif how == "ini":
        project.pytester.makeini("[pytest]\nagentloom_drift_outputs =\n    similarity:0.6\n    investigate=exact\n")
    else:
        args = ["--agentloom-drift-outputs=investigate=exact"]
    plan_bug(project, answer="The printer fire.")

    result = drift(project, "--agentloom-drift-fail-on=regression", *args)

    assert result.ret == 1, result.stdout.str()  # the test passed; the verdict fails the session
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "  test_triage.py::test_triage: passed -> passed, * changes: regression (output investigate)",
        "    output investigate: 'A printer fire.' -> 'The printer fire.' (exact: differs)",
        "agentloom drift: the session fails (--agentloom-drift-fail-on=regression): 1 test at or beyond it:",
        "  test_triage.py::test_triage: regression (output investigate)",
    ])


def test_fail_on_benign_fails_on_any_change_and_never_on_an_identical_run(project: Project) -> None:
    record(project)
    plan_bug(project, answer="The printer fire.")
    assert drift(project, "--agentloom-drift-fail-on=benign", folder="scratch/one").ret == 1
    project.server.reset()
    plan_bug(project)
    same = drift(project, "--agentloom-drift-fail-on=benign", folder="scratch/two")
    assert same.ret == 0, same.stdout.str()
    same.stdout.fnmatch_lines(["  test_triage.py::test_triage: identical, no change (*"])


def test_bad_settings_are_named_errors_at_the_start_or_in_the_tests_setup(project: Project) -> None:
    record(project)
    bad_flag = drift(project, "--agentloom-drift-fail-on=always")
    assert bad_flag.ret == 4
    bad_flag.stderr.fnmatch_lines(["*--agentloom-drift-fail-on must be one of never, regression or benign "
                                   "(got 'always')*"])
    bad_method = drift(project, "--agentloom-drift-outputs=similarty:0.7")
    assert bad_method.ret == 4
    bad_method.stderr.fnmatch_lines(["*--agentloom-drift-outputs: unknown output comparison 'similarty:0.7'*",
                                     "*did you mean 'similarity'?*"])
    test = (project.path / "test_triage.py").read_text()
    (project.path / "test_triage.py").write_text(test.replace(
        "def test_triage(", "import pytest\n\n\n@pytest.mark.agentloom(drift_outputs='similarity:2')\n"
                            "def test_triage("))
    marked = project.run()  # a plain replay checks the marker too
    marked.assert_outcomes(errors=1)
    marked.stdout.fnmatch_lines(["*drift_outputs*the similarity threshold must be a number from 0 to 1 (got '2')*"])
