"""Weekly report: a fan-out of two drafting steps and a join; multi-line outputs in the snapshot."""

import pytest

from pytest_agentloom import error, reply

pytestmark = pytest.mark.agentloom(
    workflow="report.yaml", tools={"count_words": lambda text: len(text.split())}
)

OUTLINE = "1. Shipped search\n2. Hiring\n3. Risks: on-call load"
REPORT = "Weekly report: Platform\n\nWe shipped search.\nOn-call load is a risk."


def script(agentloom, **changes):
    replies = {
        "outline": reply(OUTLINE, input_tokens=120, output_tokens=20),
        "highlights": reply("We shipped search.", input_tokens=60, output_tokens=5),
        "risks": reply("On-call load is a risk.", input_tokens=60, output_tokens=6),
        "assemble": reply(REPORT, input_tokens=90, output_tokens=16),
    }
    return agentloom.scripted({**replies, **changes})


def test_report_is_assembled_from_both_sections(agentloom):
    provider = script(agentloom)
    result = agentloom.run(state={"team": "Platform", "notes": "- search launched\n- two hires"}, provider=provider)

    result.assert_status("success", "completed")
    result.assert_steps("outline", "highlights", "risks", "assemble", "word_count")
    result.assert_output("word_count", 11)
    assert result.state["sections"] == {"highlights": "We shipped search.", "risks": "On-call load is a risk."}
    assert "Risks: On-call load is a risk." in provider.calls("assemble")[0].messages[-1]["content"]
    assert result.usage == {"input_tokens": 330, "output_tokens": 47, "reasoning_tokens": 0}
    agentloom.assert_snapshot(result)


def test_a_failed_section_skips_the_join(agentloom):
    # the join never runs, so its reply stays unused: the script says so
    provider = script(agentloom, risks=error(400, "bad request"))
    provider.allow_unused = True
    result = agentloom.run(state={"team": "Platform"}, provider=provider)

    result.assert_status("failed", "step_failed")
    assert result.steps["assemble"].status == "skipped"
    assert result.steps["highlights"].status == "success"  # same layer: it still finished
    agentloom.assert_snapshot(result)


def test_same_inputs_give_the_same_run(agentloom):
    state = {"team": "Platform", "notes": "n"}
    first = agentloom.run(state=state, provider=script(agentloom))
    second = agentloom.run(state=state, provider=script(agentloom))
    assert first.run_id != second.run_id  # each run of a test gets its own derived id
    assert first.state == second.state
    assert first.steps == second.steps


@pytest.mark.agentloom_scenarios("report_cases.csv")
def test_report_cases(agentloom, scenario):
    scenario.check(scenario.run(agentloom), agentloom)
