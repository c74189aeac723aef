"""``pytest --agentloom-drift=DIR``: each recorded test replayed, then live against the fake server; what changed."""

from __future__ import annotations

import yaml

from tests.replay.drift_project import assert_no_secret_in, committed, drift, plan_bug, record
from tests.replay.helpers import Project
from tests.servers.fake_llm import text


def test_a_changed_route_is_reported_trace_by_trace_and_nothing_committed_changes(project: Project) -> None:
    record(project)
    before = committed(project)
    plan_bug(project, category="question", tokens=14)  # live, the model now calls it a question

    result = drift(project, "--agentloom-report=scratch/drift.md")

    result.assert_outcomes(passed=1)  # the test still passes live: only the report shows the drift
    result.stdout.fnmatch_lines([
        "agentloom drift: 1 test compared (replay -> live): 1 changed, 0 unchanged (1 regression, 0 benign, "
        "0 identical) · tokens * -> * (*)*",
        "  scratch folder (live cassettes and snapshots): */.agentloom/drift/check",
        "  test_triage.py::test_triage: passed -> passed, 8 changes: regression (route, tool calls, step "
        "investigate, step reply, agent stop investigate, output classify)",
        "    route: route -> investigate -> route -> reply",
        "    tool calls: lookup({\"ticket\": 7}) -> (none)",
        "    step investigate: success -> skipped",
        "    step reply: skipped -> success",
        "    agent stop investigate: done -> —",
        "    output classify: '{\"category\": \"bug\"}' -> '{\"category\": \"question\"}' (similarity 0.50 < 0.6)",
        "    snapshot __agentloom_snapshots__/test_triage/test_triage.yaml: changed",
        "    tokens * -> * (-*) · cost $* -> $* (-$*)",
    ])
    assert len(project.server.requests) == 2  # live: classify and reply; the replay sent nothing
    assert committed(project) == before  # byte for byte: cassette, snapshot, workflow, test
    scratch = project.path / ".agentloom/drift/check"
    live = yaml.safe_load((scratch / "cassettes/test_triage.py/test_triage.yaml").read_text())
    assert [i["response"]["status"] for i in live["interactions"]] == [200, 200]
    assert (scratch / "snapshots/__agentloom_snapshots__/test_triage/test_triage.yaml").is_file()
    assert (scratch / ".gitignore").read_text() == "*\n"
    assert_no_secret_in(scratch)
    assert_no_secret_in(project.path / "scratch")
    report = (project.path / "scratch/drift.md").read_text()
    assert "## Drift (replay -> live)" in report
    assert "- route: route -> investigate -> route -> reply" in report


def test_an_unchanged_test_says_so_and_the_report_is_the_same_bytes_each_time(project: Project) -> None:
    record(project)
    plan_bug(project)
    first = drift(project, "--agentloom-report=scratch/one.md", folder="scratch/one")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines([
        "agentloom drift: 1 test compared (replay -> live): 0 changed, 1 unchanged (0 regression, 0 benign, "
        "1 identical) · tokens 31 -> 31 (±0) *",
        "  test_triage.py::test_triage: identical, no change (tokens 31 -> 31 (±0) · cost $* -> $* (±$0))",
    ])
    project.server.reset()  # the fake server's ids count from zero again: the same bytes as the first time
    plan_bug(project)
    drift(project, "--agentloom-report=scratch/two.md", folder="scratch/two").assert_outcomes(passed=1)
    one, two = (project.path / "scratch/one.md").read_bytes(), (project.path / "scratch/two.md").read_bytes()
    assert one == two
    assert b"- no change" in one


def test_a_structured_output_that_stops_fitting_its_schema_fails_live_and_says_why(project: Project) -> None:
    record(project)
    before = committed(project)
    for _ in range(3):  # the first call and two re-asks: never JSON
        project.server.plan("openai", text("It is a bug, I think."))

    result = drift(project)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  test_triage.py::test_triage: passed -> failed, * changes: regression (outcome, termination, *)",
        "    outcome: passed -> failed",
        "    termination: success (completed) -> failed (step_failed)",
        "    route: route -> investigate -> (none)",
        "    schema classify: valid -> invalid: *",
        "    error classify: — -> invalid_output",
    ])
    assert committed(project) == before
    # the failed live run's recording is kept in the scratch folder, to study
    assert (project.path / ".agentloom/drift/check/cassettes/test_triage.py/test_triage.yaml").is_file()


def test_tool_arguments_that_change_are_shown(project: Project) -> None:
    record(project)
    plan_bug(project, ticket=8)
    result = drift(project)
    result.stdout.fnmatch_lines(['    tool calls: lookup({"ticket": 7}) -> lookup({"ticket": 8})'])
    assert "route:" not in result.stdout.str()
