"""Subworkflow inputs and agent tool lists are checked before anything runs (issue 31)."""

from __future__ import annotations

import pytest

CHILD = """\
name: research
state: {topic: general}
steps:
  - id: search
    type: llm_call
    model: gpt-4o-mini
    prompt: "Search for {state.topic}"
    output: found
"""

PARENT = """\
name: main
state: {subject: cats}
steps:
  - id: research
    type: subworkflow
    workflow: research.yaml
    input:
      topik: "{state.subject}"
    output: research
"""

AGENT = """\
name: desk
agents:
  helper:
    model: gpt-4o-mini
    tools: [get_ticket, serch_docs]
steps:
  - id: first
    type: llm_call
    model: gpt-4o-mini
    prompt: "Say hello"
    output: hello
  - id: help
    type: agent
    agent: helper
    depends_on: [first]
    prompt: "Help with {state.hello}"
    output: answer
"""

TESTS = """\
from pytest_agentloom.tools import tool

@tool
def get_ticket(ticket_id: str) -> dict:
    return {"id": ticket_id}

@tool
def search_docs(query: str) -> list:
    return []

def test_input_typo(agentloom):
    agentloom.run("main.yaml", provider=agentloom.scripted({"research/search": "found"}))

def test_tool_typo(agentloom):
    provider = agentloom.scripted(first="hi", help="done", allow_unused=True)
    try:
        agentloom.run("desk.yaml", provider=provider, tools=[get_ticket, search_docs])
    finally:
        assert provider.requests == []  # no step made a model call
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", research=CHILD, main=PARENT, desk=AGENT)
    pytester.makepyfile(test_strict=TESTS)
    return pytester


def test_a_subworkflow_input_key_the_child_does_not_use_fails_at_load_naming_the_key(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-k", "input_typo")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E*WorkflowError: Subworkflow step 'research' passes input 'topik', which research.yaml neither declares "
        "in its 'state:' nor reads in any step",
        f"E*  file: {project.path / 'main.yaml'}:8",
        "E*  step: research",
        "E*  field: input.topik",
        "E*How to fix: did you mean 'topic'? rename the key to one the child uses (topic), or remove it.",
    ], consecutive=True)


def test_an_agent_tool_that_is_not_registered_fails_before_the_first_model_call(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-k", "tool_typo")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E*UsageError: Workflow 'desk' cannot start: agent 'helper' lists tool 'serch_docs', which is not "
        "registered.",
        f"E*  file: {project.path / 'desk.yaml'}:5",
        "E*  field: agents.helper.tools?1?",
        "E*  registered tools: *get_ticket*search_docs*",
        "E*How to fix: did you mean 'search_docs'? register it *",
    ], consecutive=True)
    output = result.stdout.str()
    assert "AssertionError" not in output  # the provider was never asked
    assert "no running event loop" not in output  # no unrelated exception chained to the failure


def test_a_missing_key_in_a_childs_prompt_points_at_the_childs_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", research=CHILD.replace("state: {topic: general}\n", "").replace(
        "{state.topic}", "{state.topic} in {state.language}"), main=PARENT.replace("topik", "topic"))
    pytester.makepyfile(test_child="""
        def test_child(agentloom):
            agentloom.run("main.yaml", provider=agentloom.scripted({"research/search": "found"}))
    """)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E*Template placeholder {state.language} rendered empty in step 'research/search': the state has no "
        "'language'.",
        f"E*  workflow: {pytester.path / 'research.yaml'}:6",
    ], consecutive=True)
