"""The ``agentloom`` section of a failed test's report: each run's status, reason, failed step, error, cassette."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

FLOW = """\
name: triage
state:
  ticket: ""
  api_token: ""
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify: {state.ticket}"
    output: category
"""

TESTS = """\
import os
from pytest_agentloom import error

STATE = {"ticket": "crash", "api_token": os.environ["CANARY_TOKEN"]}

def test_recorded_while_the_server_is_down(agentloom):
    result = agentloom.run("flow.yaml", state=STATE)
    assert result.status == "success"

def test_two_runs_scripted(agentloom):
    first = agentloom.run("flow.yaml", state=STATE, provider=agentloom.scripted(classify="bug"))
    second = agentloom.run("flow.yaml", state=STATE, provider=agentloom.scripted(classify=error(400, "down")))
    assert (first.status, second.status) == ("success", "success")

def test_passes(agentloom):
    assert agentloom.run("flow.yaml", state=STATE, provider=agentloom.scripted(classify="bug")).ok

def test_no_workflow(agentloom):
    assert False
"""

CANARY = "tok-canary-5e6f7a8b9c0d"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("CANARY_TOKEN", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-a-server-that-is-down")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_runs=TESTS)
    return pytester


def sections(project: pytest.Pytester) -> dict[str, str]:
    """The ``agentloom`` junit property of each test case, by test name."""
    root = ET.parse(project.path / "x.xml").getroot()
    return {case.get("name", ""): prop.get("value", "") for case in root.iter("testcase")
            for prop in case.iter("property") if prop.get("name") == "agentloom"}


def test_every_failed_run_is_explained_whatever_the_test_asserted(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", "--agentloom-record",
                               "--junitxml=x.xml")
    result.assert_outcomes(passed=1, failed=3)
    out = "\n".join(result.outlines)
    assert CANARY not in out
    result.stdout.fnmatch_lines([
        "*- agentloom -*",
        "run 1 of 1: workflow 'triage' (run run-*) ended failed / step_failed",
        "  failed step 'classify' (provider_error): provider error (no status): openai: connection failed to "
        "POST http://127.0.0.1:9/v1/chat/completions *",
        "  steps: classify=failed",
        "  cassette: cassettes/test_runs.py/test_recorded_while_the_server_is_down.yaml "
        "(recording, record mode all)",
        "*_ test_two_runs_scripted _*",
    ])
    result.stdout.fnmatch_lines([
        "*- agentloom -*",
        "run 1 of 2: workflow 'triage' (run run-*) ended success / completed",
        "  steps: classify=success",
        "  cassette: none (the run was given its provider)",
        "run 2 of 2: workflow 'triage' (run run-*) ended failed / step_failed",
        "  failed step 'classify' (provider_error): provider error (HTTP 400): down*",
    ])
    junit = sections(project)
    assert set(junit) == {"test_recorded_while_the_server_is_down", "test_two_runs_scripted"}
    assert "connection failed to POST http://127.0.0.1:9/v1/chat/completions" in junit[
        "test_recorded_while_the_server_is_down"]
    assert CANARY not in (project.path / "x.xml").read_text()


def test_a_failed_scenario_row_gets_the_section_too(project: pytest.Pytester) -> None:
    (project.path / "test_rows.agentloom.yaml").write_text(
        "- id: down\n  workflow: flow.yaml\n  state: {ticket: crash}\n  script: {classify: [{error: 400}]}\n"
        "  expect: {status: success}\n")
    result = project.runpytest("-p", "no:cacheprovider", "test_rows.agentloom.yaml", "--junitxml=x.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*- agentloom -*",
                                 "run 1 of 1: workflow 'triage' (run run-*) ended failed / step_failed",
                                 "  failed step 'classify' (provider_error): provider error (HTTP 400)*"])
    assert list(sections(project)) == ["down"]
