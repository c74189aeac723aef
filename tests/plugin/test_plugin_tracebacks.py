"""No run's raw state in any traceback: our frames are cut from what pytest prints, the user's stay (issue 28.4)."""

from __future__ import annotations

import pytest

CANARY = "tok-canary-9f8e7d6c5b4a"

FLOW = """\
name: triage
state:
  ticket: ""
  api_token: ""
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify: {state.ticket} {state.missing}"
    output: category
"""

TESTS = """\
import os
import pytest
from pytest_agentloom import error

def state():
    return {"ticket": "crash", "api_token": os.environ["CANARY_TOKEN"]}

def test_missing_cassette(agentloom):
    result = agentloom.run("flow.yaml", state=state())
    assert result.status == "success"

def test_step_error(agentloom):
    result = agentloom.run("flow.yaml", state=state(), provider=agentloom.scripted(classify=error(400, "bad")))
    assert result.status == "success"

def test_assertion_helper(agentloom):
    result = agentloom.run("flow.yaml", state=state(), provider=agentloom.scripted(classify=error(400, "bad")))
    result.assert_status("success")

@pytest.mark.agentloom(missing_template_keys="error")
def test_run_raises(agentloom):
    agentloom.run("flow.yaml", state=state(), provider=agentloom.scripted(classify="bug"))

def test_library_error_under_the_engine(agentloom):
    agentloom.run("flow.yaml", state=state(), provider=agentloom.scripted(classify="bug"), budget_usd="x")
"""

TABLE = """\
- id: no-cassette
  workflow: flow.yaml
  state: {ticket: crash, api_token: tok-canary-9f8e7d6c5b4a}
  expect: {status: success}
- id: step-error
  workflow: flow.yaml
  state: {ticket: crash, api_token: tok-canary-9f8e7d6c5b4a}
  script: {classify: [{error: 400}]}
  expect: {status: success}
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("CANARY_TOKEN", CANARY)
    monkeypatch.delenv("CI", raising=False)
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_runs=TESTS)
    (pytester.path / "test_rows.agentloom.yaml").write_text(TABLE)
    return pytester


@pytest.mark.parametrize("options", [
    ("--tb=long", "--showlocals", "-vv"),
    ("--tb=native", "-vv"),
    ("--full-trace", "--showlocals"),
    (),
], ids=["long-showlocals", "native", "full-trace", "default"])
def test_no_canary_in_any_output_of_a_failed_run(project: pytest.Pytester, options: tuple[str, ...]) -> None:
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--junitxml=x.xml",
                                          *options)
    result.assert_outcomes(failed=7)
    out, err = "\n".join(result.outlines), "\n".join(result.errlines)
    xml = (project.path / "x.xml").read_text()
    assert CANARY not in out
    assert CANARY not in err
    assert CANARY not in xml
    # the user's own test frames still show, with their locals under --showlocals
    assert "def test_missing_cassette(agentloom):" in out or "--tb=native" in options
    assert "test_runs.py:9" in out or 'test_runs.py", line 9' in out
    if "--showlocals" in options:
        assert "agentloom  = <AgentloomHarness 'test_runs.py::test_missing_cassette'>" in out
    assert "pytest_agentloom/testing/_harness.py" not in out
    assert "pytest_agentloom/engine" not in out
    assert "state = {" not in out


def test_a_frame_of_the_users_code_called_by_the_engine_still_shows(pytester: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool the workflow calls is the user's code: its frame stays, between the hidden ones of the engine."""
    monkeypatch.setenv("CANARY_TOKEN", CANARY)
    pytester.makefile(".yaml", flow=FLOW.replace(" {state.missing}", "") + """\
  - id: act
    type: tool
    depends_on: [classify]
    tool_name: act
    tool_args: {x: "{state.category}"}
""")
    pytester.makepyfile(test_tool="""\
import os

class Boom(BaseException):
    pass

def act(x):
    local_in_tool = "kept"
    raise Boom("raised by the user's tool")

def test_tool(agentloom):
    agentloom.run("flow.yaml", state={"ticket": "crash", "api_token": os.environ["CANARY_TOKEN"]},
                  provider=agentloom.scripted(classify="bug"), tools={"act": act})
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tb=long", "--showlocals")
    out = "\n".join(result.outlines)
    assert CANARY not in out
    assert "test_tool.py:8: Boom" in out
    assert "local_in_tool = 'kept'" in out
    assert "pytest_agentloom/" not in out.replace("site-packages/pytest_agentloom", "")
