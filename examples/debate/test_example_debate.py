"""Rollout debate: two speakers (alice plans, bob criticises) continue one conversation kept in the state."""

import pytest

from pytest_agentloom import reply

pytestmark = pytest.mark.agentloom(workflow="debate.yaml")

PLAN = "Ship dark mode to 5% of users, then 50%, then everyone."
CRITIQUE = "There is no way back if the 5% complain."
REVISED = "Ship to 5% behind a flag we can turn off in a minute, then widen weekly."


def test_speakers_take_turns_in_one_conversation(agentloom):
    provider = agentloom.scripted(
        plan=reply(PLAN, input_tokens=40, output_tokens=14),
        critique=reply(CRITIQUE, input_tokens=60, output_tokens=11),
        revise=reply(REVISED, input_tokens=90, output_tokens=18),
    )
    result = agentloom.run(state={"feature": "dark mode"}, provider=provider)

    result.assert_status("success", "completed")
    # bob sees alice's plan as a turn of hers, under his own instructions only
    [critic_call] = provider.calls("critique")
    assert critic_call.messages[0]["content"] == "You find the weakest point of a plan, in one sentence."
    assert critic_call.messages[-1] == {"role": "user", "content": PLAN, "name": "alice"}
    # the stored conversation keeps every turn with its speaker, and no speaker's instructions
    turns = [(m["role"], m.get("name")) for m in result.state["debate"]["messages"]]
    assert turns == [("user", None), ("assistant", "alice"), ("assistant", "bob"), ("user", None),
                     ("assistant", "alice")]
    agentloom.assert_snapshot(result)
