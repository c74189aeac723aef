"""Tables for agents: a table-level default script, per-row allow_unused, tool calls with usage and cost."""

from __future__ import annotations

import pytest

FLOW = """\
name: desk
config: {model: gpt-4o-mini}
agents:
  helper:
    tools: [get_ticket]
steps:
  - id: classify
    type: llm_call
    prompt: "Classify"
    output: category
  - id: help
    type: agent
    agent: helper
    depends_on: [classify]
    prompt: "Help with a {state.category} ticket"
    output: answer
"""

CONFTEST = """\
import pytest
from pytest_agentloom.tools import tool

@tool
def get_ticket(ticket_id: str) -> dict:
    return {"id": ticket_id, "title": "Printer on fire"}

@pytest.fixture
def agentloom_tools():
    return [get_ticket]
"""

TABLE = """\
- defaults:
    script:
      classify: bug
      help:
        - {tool_call: get_ticket, arguments: {ticket_id: T-1}, input_tokens: 100, output_tokens: 7, cost: 0.002}
        - {text: "Fixed.", input_tokens: 150, output_tokens: 3, cost: 0.001}
- id: uses-the-defaults
  expect:
    status: success
    tool_calls: [[get_ticket, {ticket_id: T-1}]]
    outputs: {classify: bug, help: Fixed.}
- id: own-classify
  script: {classify: question}
  expect: {outputs: {classify: question, help: Fixed.}}
- id: spare-replies
  script: {help: ["Fixed at once.", "never asked"]}
  allow_unused: true
  expect: {outputs: {help: Fixed at once.}}
- id: spare-replies-not-allowed
  script: {help: ["Fixed at once.", "never asked"]}
  expect: {outputs: {help: Fixed at once.}}
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makeconftest(CONFTEST)
    (pytester.path / "test_desk.agentloom.yaml").write_text(TABLE.replace("- id:", "- workflow: flow.yaml\n  id:"))
    return pytester


def test_rows_start_from_the_tables_default_script_and_may_keep_spare_replies(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:randomly", "-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*::uses-the-defaults PASSED*", "*::own-classify PASSED*", "*::spare-replies PASSED*",
        "*::spare-replies-not-allowed FAILED*",
    ])
    result.stdout.fnmatch_lines(["*step 'help': 1 of 2 scripted replies never used*"])


def test_a_tool_call_reply_carries_its_usage_and_cost(project: pytest.Pytester) -> None:
    project.makepyfile(test_costs="""
        import pytest

        @pytest.mark.agentloom_scenarios("test_desk.agentloom.yaml")
        def test_row(agentloom, scenario):
            result = scenario.run(agentloom)
            if scenario.id == "uses-the-defaults":
                step = result.steps["help"]
                assert (step.input_tokens, step.output_tokens) == (250, 10)
                assert step.cost_usd == pytest.approx(0.003)
    """)
    result = project.runpytest_inprocess("-p", "no:randomly", "test_costs.py", "-k", "uses-the-defaults")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(("defaults", "words"), [
    ("- defaults: {script: {classify: bug}, allow_unsed: true}", ["unknown key 'defaults.allow_unsed'",
                                                                  "did you mean 'allow_unused'?"]),
    ("- defaults: {script: {clasify: bug}}", ["'script' has replies for 'clasify'", "did you mean 'classify'?"]),
    ("- defaults: {script: {help: [{tool_call: get_ticket, cots: 1}]}}", ["defaults.script.help[0].cots",
                                                                          "did you mean 'cost'?"]),
], ids=["key", "step", "reply"])
def test_a_bad_defaults_row_fails_collection(pytester: pytest.Pytester, defaults: str, words: list[str]) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_bad.agentloom.yaml").write_text(f"{defaults}\n- id: row\n  workflow: flow.yaml\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    for word in words:
        assert word in result.stdout.str(), word
