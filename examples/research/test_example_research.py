"""Research brief: a tool step feeds an LLM step; the tool's arguments and the prompt are checked."""

import pytest
from research_docs import search_docs

from pytest_agentloom import error, reply

pytestmark = pytest.mark.agentloom(workflow="research.yaml", tools={"search_docs": search_docs})

ANSWER = "Rotate keys from the dashboard at any time [1]."


def test_answer_cites_the_sources_found(agentloom):
    provider = agentloom.scripted(answer=reply(ANSWER, input_tokens=180, output_tokens=22))
    result = agentloom.run(state={"question": "How do I rotate API keys?"}, provider=provider)

    result.assert_status("success")
    result.assert_tool_calls([("search_docs", {"query": "How do I rotate API keys?", "limit": "3"})])
    assert [source["id"] for source in result.state["sources"]] == ["kb-1"]
    prompt = provider.requests[0].messages[-1]["content"]
    assert prompt.startswith("Question: How do I rotate API keys?\nSources: [{'id': 'kb-1'")
    assert provider.requests[0].params == {"max_tokens": 300}
    agentloom.assert_snapshot(result)


def test_one_retry_then_the_run_fails(agentloom):
    result = agentloom.run(state={"question": "Export?"}, provider=agentloom.scripted(answer=[error(500), error(500)]))

    result.assert_status("failed", "step_failed")
    assert result.steps["answer"].attempts == 2
    assert result.trace.events("retry")[0].data["delay"] == 2


def test_budget_override_applies_to_this_run_only(agentloom):
    expensive = agentloom.scripted(answer=reply(ANSWER, cost=0.5))
    first = agentloom.run(state={"question": "keys"}, provider=expensive, budget_usd=0.01)
    assert first.ok  # the budget is checked before a layer starts: the one call still finishes
    assert first.cost_usd == 0.5


@pytest.mark.agentloom_scenarios("questions.jsonl")
def test_questions(agentloom, scenario):
    scenario.check(scenario.run(agentloom), agentloom)
