"""Support triage: a router sends each ticket to the right branch."""

import pytest

from pytest_agentloom import error, reply


def test_bug_ticket_opens_an_issue(agentloom):
    provider = agentloom.scripted(classify="bug")
    result = agentloom.run("triage.yaml", state={"ticket": "App crashes on login", "customer": "ada"},
                           provider=provider)

    result.assert_status("success", "completed")
    result.assert_steps("classify", "route", "open_bug")
    result.assert_tool_calls([("create_issue", {"title": "App crashes on login", "reporter": "ada"})])
    assert provider.requests[0].messages[-1]["content"] == "Ticket from ada: App crashes on login"
    agentloom.assert_snapshot(result)


def test_rate_limited_classifier_is_retried(agentloom):
    provider = agentloom.scripted(
        classify=[error(429, "slow down"), reply("Billing", input_tokens=42, output_tokens=1)],
        billing_reply="Your refund is on its way.",
    )
    result = agentloom.run("triage.yaml", state={"ticket": "I was charged twice"}, provider=provider)

    result.assert_steps("classify", "route", "billing_reply")
    result.assert_output("billing_reply", "Your refund is on its way.")
    assert result.steps["classify"].attempts == 2
    assert [event.data["delay"] for event in result.trace.events("retry")] == [1.0]
    agentloom.assert_snapshot(result)


@pytest.mark.agentloom(workflow="triage.yaml")
@pytest.mark.agentloom_scenarios("triage_cases.yaml")
def test_triage_table(agentloom, scenario):
    result = scenario.run(agentloom)
    scenario.check(result, agentloom)
