"""Conversations kept in the state (docs: Conversations): turns, trimming, speakers, and what is stored."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, error, reply, run_workflow, tool_call
from pytest_agentloom.engine._calls.conversation import MESSAGE_OVERHEAD, estimate_tokens, trim, wire_messages
from pytest_agentloom.engine._format.conversation_state import read_conversation
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import WorkflowError


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def run(workflow: Workflow, provider: Scripted, state: dict[str, Any] | None = None):
    return run_workflow(workflow, provider=provider, state=state, clock=VirtualClock(), runs_dir=False)


def said(provider: Scripted, index: int) -> list[tuple[str, str | None, str | None]]:
    """(role, name, content) of every message the model saw in request ``index``."""
    return [(m["role"], m.get("name"), m["content"]) for m in provider.requests[index].messages]


def msg(role: str, content: str, name: str | None = None) -> dict[str, Any]:
    return {"role": role, "content": content, **({"name": name} if name else {})}


TWO_TURNS = """
    name: chat
    config: {model: gpt-4o}
    steps:
      - id: turn_1
        type: llm_call
        conversation: state.chat
        system_prompt: "You are concise."
        prompt: "Recommend one Python library for CLI apps."
        output: reply_1
      - id: turn_2
        type: llm_call
        depends_on: [turn_1]
        conversation: chat
        system_prompt: "You are verbose."
        prompt: "Any second choice for {state.size} apps?"
        output: reply_2
"""


# --------------------------------------------------------------------------- a turn


def test_a_missing_key_starts_a_conversation_that_later_steps_continue() -> None:
    provider = Scripted({"turn_1": "Typer.", "turn_2": "Click."})
    result = run(flow(TWO_TURNS), provider, state={"size": "larger"})
    assert result.status == "success", result.steps
    assert said(provider, 0) == [("system", None, "You are concise."),
                                 ("user", None, "Recommend one Python library for CLI apps.")]
    # state.chat and chat are the same key; the second step's different system_prompt is ignored
    assert said(provider, 1) == [
        ("system", None, "You are concise."), ("user", None, "Recommend one Python library for CLI apps."),
        ("assistant", None, "Typer."), ("user", None, "Any second choice for larger apps?"),
    ]
    assert result.state["chat"] == {"messages": [
        msg("system", "You are concise."), msg("user", "Recommend one Python library for CLI apps."),
        msg("assistant", "Typer."), msg("user", "Any second choice for larger apps?"), msg("assistant", "Click."),
    ]}
    assert result.state["reply_1"] == "Typer." and result.state["reply_2"] == "Click."


def test_a_plain_list_of_messages_is_a_conversation_and_stays_a_list() -> None:
    provider = Scripted({"turn_1": "a", "turn_2": "b"})
    start = [msg("user", "Hi"), msg("assistant", "Hello!")]
    result = run(flow(TWO_TURNS), provider, state={"chat": start, "size": "big"})
    # the conversation has no system message, so the first step's system_prompt goes first
    assert said(provider, 0)[:3] == [("system", None, "You are concise."), ("user", None, "Hi"),
                                     ("assistant", None, "Hello!")]
    assert isinstance(result.state["chat"], list)
    assert [m["content"] for m in result.state["chat"]] == [
        "You are concise.", "Hi", "Hello!", "Recommend one Python library for CLI apps.", "a",
        "Any second choice for big apps?", "b"]


def test_an_existing_system_message_wins_over_the_steps_system_prompt() -> None:
    provider = Scripted({"turn_1": "a", "turn_2": "b"})
    result = run(flow(TWO_TURNS), provider, state={"chat": {"messages": [msg("system", "Be kind.")]}, "size": "x"})
    assert said(provider, 0)[0] == ("system", None, "Be kind.")
    assert [m["role"] for m in result.state["chat"]["messages"]] == ["system", "user", "assistant", "user",
                                                                     "assistant"]
    assert sum(m["role"] == "system" for m in provider.requests[1].messages) == 1


NO_PROMPT = """
    name: chat
    config: {model: gpt-4o}
    steps:
      - {id: answer, type: llm_call, conversation: state.chat, output: reply}
"""


@pytest.mark.parametrize("last", ["user", "tool"])
def test_without_a_prompt_the_model_answers_the_last_user_or_tool_message(last: str) -> None:
    provider = Scripted({"answer": "Done."})
    result = run(flow(NO_PROMPT), provider, state={"chat": [msg("user", "Q?"), msg(last, "latest")]})
    assert result.status == "success"
    assert said(provider, 0)[-1] == (last, None, "latest")
    assert result.state["chat"][-1] == msg("assistant", "Done.")


@pytest.mark.parametrize(("chat", "ends"), [([msg("user", "Q?"), msg("assistant", "A.")], "ends with an assistant"),
                                            ([], "is empty")])
def test_without_a_prompt_a_conversation_ending_otherwise_fails_at_once(chat: list[Any], ends: str) -> None:
    provider = Scripted({"answer": "never sent"})
    result = run(flow(NO_PROMPT), provider, state={"chat": chat})
    step = result.steps["answer"]
    assert result.status == "failed" and step.error_code == "conversation_no_user_turn"
    assert ends in step.error and "How to fix" in step.error
    assert provider.requests == [] and result.state["chat"] == chat


def test_a_failed_step_writes_neither_the_conversation_nor_the_output() -> None:
    provider = Scripted({"turn_1": "Typer.", "turn_2": error(400, "bad request")})
    result = run(flow(TWO_TURNS), provider, state={"size": "x"})
    assert result.status == "failed" and result.failed_step == "turn_2"
    assert len(result.state["chat"]["messages"]) == 3  # turn_1's three; turn_2's user turn is not kept
    assert "reply_2" not in result.state


def test_only_the_final_text_of_a_tool_loop_is_stored() -> None:
    workflow = flow("""
        name: tools
        config: {model: gpt-4o}
        steps:
          - id: ask
            type: llm_call
            conversation: state.chat
            prompt: "Weather in Oslo?"
            tools: [{name: weather, description: "Weather by city", parameters: {type: object}}]
            output: answer
    """)
    provider = Scripted({"ask": [tool_call("weather", city="Oslo"), "Sunny in Oslo."]})
    result = run_workflow(workflow, provider=provider, tools={"weather": lambda city: f"{city}: sun"},
                          clock=VirtualClock(), runs_dir=False)
    assert result.status == "success", result.steps["ask"].error
    assert [m["role"] for m in provider.requests[1].messages] == ["user", "assistant", "tool"]
    assert result.state["chat"] == {"messages": [msg("user", "Weather in Oslo?"), msg("assistant", "Sunny in Oslo.")]}


def test_a_structured_reply_is_stored_as_written_and_its_re_asks_are_not() -> None:
    workflow = flow("""
        name: structured
        config: {model: gpt-4o}
        steps:
          - id: pick
            type: llm_call
            conversation: state.chat
            prompt: "Pick a colour as JSON."
            response_schema: {type: json_object}
            output: choice
    """)
    provider = Scripted({"pick": ["no JSON here", 'Sure: {"colour": "red"}']})
    result = run(workflow, provider)
    assert result.status == "success", result.steps["pick"].error
    assert result.state["choice"] == {"colour": "red"}
    assert result.state["chat"]["messages"] == [msg("user", "Pick a colour as JSON."),
                                                msg("assistant", 'Sure: {"colour": "red"}')]


# --------------------------------------------------------------------------- checks at load


def test_two_steps_of_one_layer_on_one_conversation_are_refused_at_load() -> None:
    with pytest.raises(WorkflowError) as info:
        flow("""
            name: race
            steps:
              - {id: a, type: llm_call, conversation: state.chat, prompt: one}
              - {id: b, type: llm_call, conversation: chat, prompt: two}
        """)
    assert info.value.headline.startswith("steps 'a' and 'b' run in the same layer on the conversation state.chat")
    assert info.value.step_id == "b" and info.value.field == "conversation"
    assert "depends_on: [a]" in str(info.value)


def test_chained_steps_and_steps_of_other_layers_may_share_a_conversation() -> None:
    flow("""
        name: fine
        steps:
          - {id: a, type: llm_call, conversation: state.chat, prompt: one}
          - {id: other, type: llm_call, prompt: two}
          - {id: b, type: llm_call, depends_on: [other], conversation: state.chat, prompt: three}
    """)


def test_branches_of_one_router_are_exempt() -> None:
    workflow = flow("""
        name: branches
        config: {model: gpt-4o}
        steps:
          - id: pick
            type: router
            conditions: [{expression: "state.mood == 'happy'", target: cheer}]
            default: console
          - {id: cheer, type: llm_call, conversation: state.chat, prompt: "Celebrate.", output: said}
          - {id: console, type: llm_call, conversation: state.chat, prompt: "Comfort.", output: said}
    """)
    provider = Scripted({"console": "There, there."})
    result = run(workflow, provider, state={"mood": "sad"})
    assert result.state["chat"]["messages"][-1] == msg("assistant", "There, there.")


@pytest.mark.parametrize("speaker", ["has space", "x" * 65, "dot.ted", ""])
def test_a_speaker_name_of_the_wrong_shape_is_refused_at_load(speaker: str) -> None:
    with pytest.raises(WorkflowError) as info:
        flow(f"""
            name: bad
            steps:
              - {{id: a, type: llm_call, conversation: state.chat, speaker: "{speaker}", prompt: hi}}
        """)
    assert info.value.field == "speaker"
    assert "letters, digits, _ and -, up to 64 characters" in str(info.value)


def test_a_speaker_needs_a_conversation() -> None:
    with pytest.raises(WorkflowError) as info:
        flow("name: x\nsteps: [{id: a, type: llm_call, speaker: alice, prompt: hi}]\n")
    assert info.value.headline == "llm_call 'a' has a speaker but no conversation"


def test_a_malformed_conversation_in_the_files_state_is_refused_at_load() -> None:
    with pytest.raises(WorkflowError) as info:
        flow("""
            name: bad
            state: {chat: {messages: [], trim_policy: drop_newest}}
            steps: [{id: a, type: llm_call, conversation: state.chat, prompt: hi}]
        """)
    assert info.value.field == "state.chat"
    assert "'trim_policy' must be one of drop_oldest, drop_pairs, summarize_oldest" in info.value.headline


def test_a_malformed_conversation_given_at_run_time_fails_the_step_before_any_call() -> None:
    provider = Scripted({"answer": "never"})
    result = run(flow(NO_PROMPT), provider, state={"chat": [{"role": "narrator", "content": "Once"}]})
    assert result.steps["answer"].error_code == "conversation_invalid"
    assert "messages[0].role must be one of system, user, assistant, tool" in result.steps["answer"].error
    assert provider.requests == []


# --------------------------------------------------------------------------- speakers

DEBATE = """
    name: debate
    config: {model: gpt-4o}
    steps:
      - id: planner
        type: llm_call
        conversation: state.debate
        speaker: alice
        system_prompt: "You propose plans."
        prompt: "Propose a rollout plan for {state.feature}."
        output: plan
      - id: critic
        type: llm_call
        depends_on: [planner]
        conversation: state.debate
        speaker: bob
        system_prompt: "You find the weakest point."
        output: critique
      - id: reply
        type: llm_call
        depends_on: [critic]
        conversation: state.debate
        speaker: alice
        system_prompt: "You propose plans."
        output: answer
"""


def test_speakers_keep_their_own_instructions_and_see_each_other_as_named_turns() -> None:
    provider = Scripted({"planner": "Ship to 5% first.", "critic": "No rollback plan.", "reply": "Add a kill switch."})
    result = run(flow(DEBATE), provider, state={"feature": "dark mode"})
    assert result.status == "success", {k: v.error for k, v in result.steps.items()}
    assert said(provider, 0) == [("system", None, "You propose plans."),
                                 ("user", None, "Propose a rollout plan for dark mode.")]
    # bob answers alice's turn, which he sees as a user turn under her name, with his own instructions only
    assert said(provider, 1) == [("system", None, "You find the weakest point."),
                                 ("user", None, "Propose a rollout plan for dark mode."),
                                 ("user", "alice", "Ship to 5% first.")]
    # alice sees her own turn as hers, bob's as his
    assert said(provider, 2)[-2:] == [("assistant", "alice", "Ship to 5% first."), ("user", "bob", "No rollback plan.")]
    # no speaker's system_prompt is stored; each assistant turn carries its speaker
    assert result.state["debate"]["messages"] == [
        msg("user", "Propose a rollout plan for dark mode."), msg("assistant", "Ship to 5% first.", "alice"),
        msg("assistant", "No rollback plan.", "bob"), msg("assistant", "Add a kill switch.", "alice"),
    ]


def test_a_speaker_without_a_prompt_may_not_answer_its_own_last_turn() -> None:
    provider = Scripted({"critic": "never"})
    workflow = flow("""
        name: echo
        config: {model: gpt-4o}
        steps: [{id: critic, type: llm_call, conversation: state.d, speaker: bob}]
    """)
    result = run(workflow, provider, state={"d": [msg("user", "Go"), msg("assistant", "Mine.", "bob")]})
    assert result.steps["critic"].error_code == "conversation_no_user_turn"
    assert provider.requests == []


def test_speaker_names_reach_the_wire_as_openai_names_and_as_prefixes_elsewhere() -> None:
    from pytest_agentloom.providers._common import speaker_prefixed
    from pytest_agentloom.providers._openai import to_openai_message

    [named] = wire_messages([msg("assistant", "Plan.", "alice")], speaker="bob")
    assert to_openai_message(named) == {"role": "user", "content": "Plan.", "name": "alice"}
    assert speaker_prefixed(named.role, named.content, named.name) == "[alice] Plan."


# --------------------------------------------------------------------------- trimming, pure


def t(n_chars: int) -> str:
    return "x" * n_chars


def tokens(messages: list[dict[str, Any]]) -> int:
    return sum(estimate_tokens(m) for m in messages)


def test_the_estimate_is_a_quarter_token_per_character_plus_role_and_name() -> None:
    assert estimate_tokens(msg("user", t(40))) == 10 + MESSAGE_OVERHEAD
    assert estimate_tokens(msg("user", t(41))) == 11 + MESSAGE_OVERHEAD
    assert estimate_tokens(msg("assistant", t(40), "alice")) == 10 + MESSAGE_OVERHEAD + 2 + 1


def test_drop_oldest_removes_the_oldest_messages_after_the_system_ones_until_the_rest_fits() -> None:
    messages = [msg("system", t(40)), msg("user", t(40)), msg("assistant", t(40)), msg("user", t(40))]
    budget = tokens(messages) - 1
    result = trim(messages, budget=budget, policy="drop_oldest")
    assert result.removed == (messages[1],) and result.kept == (messages[0], *messages[2:])
    assert not result.over_budget


def test_drop_pairs_removes_a_user_turn_with_its_replies() -> None:
    messages = [msg("system", "s"), msg("user", t(40)), msg("assistant", t(40)), msg("assistant", t(8), "bob"),
                msg("user", t(40)), msg("assistant", t(40)), msg("user", "now")]
    result = trim(messages, budget=tokens(messages) - 1, policy="drop_pairs")
    assert result.removed == tuple(messages[1:4])
    assert result.kept == (messages[0], *messages[4:])


def test_the_turn_being_answered_is_never_trimmed() -> None:
    messages = [msg("user", t(400)), msg("assistant", t(400)), msg("user", t(400))]
    result = trim(messages, budget=tokens(messages[2:]) - 1, policy="drop_pairs")
    assert result.kept == (messages[2],) and result.over_budget


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_pairs", "summarize_oldest"])
def test_when_system_messages_and_summary_reach_the_budget_nothing_is_removed(policy: str) -> None:
    messages = [msg("system", t(40)), msg("user", t(40)), msg("assistant", t(40)), msg("user", "now")]
    result = trim(messages, budget=20, policy=policy, fixed_tokens=6)  # system 14 + summary 6 = 20
    assert result.kept == tuple(messages) and result.removed == () and result.over_budget


def test_no_budget_means_no_trimming() -> None:
    messages = [msg("user", t(4000))] * 3
    assert trim(messages, budget=None).kept == tuple(messages)


def test_reading_refuses_unknown_fields_and_bad_budgets() -> None:
    with pytest.raises(ValueError, match="unknown field 'token_budgt'"):
        read_conversation({"messages": [], "token_budgt": 5})
    with pytest.raises(ValueError, match="'token_budget' must be a positive whole number"):
        read_conversation({"messages": [], "token_budget": 0})
    assert read_conversation(None).messages == ()


# --------------------------------------------------------------------------- trimming in a run

BUDGETED = """
    name: budget
    config: {model: gpt-4o}
    steps:
      - {id: ask, type: llm_call, conversation: state.chat, prompt: "{state.question}", output: answer}
"""


def history(policy: str, budget: int, **extra: Any) -> dict[str, Any]:
    return {"messages": [msg("system", "Be brief."), msg("user", t(80)), msg("assistant", t(80)),
                         msg("user", t(80)), msg("assistant", t(80))],
            "token_budget": budget, "trim_policy": policy, **extra}


def test_trimmed_messages_leave_the_stored_conversation_too() -> None:
    provider = Scripted({"ask": "ok"})
    # system 7 + user 24 + 24 + 24 + 24 + new question 5 = 108: two turns must go to fit in 60
    result = run(flow(BUDGETED), provider, state={"chat": history("drop_oldest", 60), "question": "Now?"})
    assert [m["role"] for m in provider.requests[0].messages] == ["system", "user", "assistant", "user"]
    assert [m["role"] for m in result.state["chat"]["messages"]] == ["system", "user", "assistant", "user",
                                                                     "assistant"]
    assert result.state["chat"]["token_budget"] == 60
    [trimmed] = result.trace.events("conversation_trimmed", step="ask")
    assert trimmed.data["removed"] == 2 and trimmed.data["policy"] == "drop_oldest"


def test_a_budget_too_small_for_the_new_user_turn_fails_the_step_at_once() -> None:
    provider = Scripted({"ask": "never"})
    result = run(flow(BUDGETED), provider, state={"chat": history("drop_oldest", 10), "question": t(200)})
    step = result.steps["ask"]
    assert step.error_code == "conversation_budget" and "token_budget of 10" in step.error
    assert provider.requests == []


def test_summarize_oldest_folds_the_oldest_turns_into_the_summary_with_one_extra_call() -> None:
    provider = Scripted({"ask": [reply("They talked about x.", input_tokens=30, output_tokens=6),
                                 reply("ok", input_tokens=20, output_tokens=1)]})
    result = run(flow(BUDGETED), provider, state={"chat": history("summarize_oldest", 60), "question": "Now?"})
    assert result.status == "success", result.steps["ask"].error
    summary_request, answer_request = provider.requests
    assert len(summary_request.messages) == 2 and summary_request.messages[0]["role"] == "system"
    assert "user: " + t(80) in summary_request.messages[1]["content"]
    assert said(provider, 1)[:2] == [("system", None, "Be brief."),
                                     ("system", None, "Summary of the earlier conversation:\nThey talked about x.")]
    chat = result.state["chat"]
    assert chat["summary"] == "They talked about x." and chat["trim_policy"] == "summarize_oldest"
    assert [m["role"] for m in chat["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    step = result.steps["ask"]
    assert (step.input_tokens, step.output_tokens) == (50, 7)  # the summary call counts in the step's result
    assert answer_request.step_id == "ask"


def test_a_failed_summary_call_folds_the_messages_in_as_plain_text() -> None:
    provider = Scripted({"ask": [error(500, "down"), "ok"]})
    result = run(flow(BUDGETED), provider, state={"chat": history("summarize_oldest", 60, summary="Earlier: hi."),
                                                   "question": "Now?"})
    assert result.status == "success", result.steps["ask"].error
    summary = result.state["chat"]["summary"]
    assert summary.startswith("Earlier: hi.\nuser: " + t(80))
    assert "summary" not in [m["role"] for m in result.state["chat"]["messages"]]


# --------------------------------------------------------------------------- redaction


def test_a_conversation_is_state_and_a_secret_copied_into_it_is_redacted_on_the_way_out() -> None:
    workflow = flow("""
        name: secret
        config: {model: gpt-4o}
        state_schema: {api_key: {redact: true}}
        steps:
          - {id: ask, type: llm_call, conversation: state.chat, prompt: "Is {state.api_key} valid?", output: answer}
    """)
    provider = Scripted({"ask": "Looks valid."})
    result = run(workflow, provider, state={"api_key": "sk-live-0123456789"})
    assert provider.requests[0].messages[-1]["content"] == "Is sk-live-0123456789 valid?"  # the model gets it
    stored = result.state["chat"]["messages"]
    assert "sk-live-0123456789" not in str(stored) and stored[0]["content"].startswith("Is ")
    assert stored[1] == msg("assistant", "Looks valid.")  # nothing else changes


def test_a_step_may_not_write_its_output_over_its_own_conversation() -> None:
    with pytest.raises(WorkflowError) as info:
        flow("name: x\nsteps: [{id: a, type: llm_call, conversation: state.chat, prompt: hi, output: chat}]\n")
    assert info.value.headline == "llm_call 'a' writes its output to its own conversation, state.chat"
    assert info.value.field == "output"


def test_a_conversation_may_live_under_a_nested_key() -> None:
    workflow = flow("""
        name: nested
        config: {model: gpt-4o}
        steps: [{id: ask, type: llm_call, conversation: state.chats.support, prompt: "Hi", output: answer}]
    """)
    result = run(workflow, Scripted({"ask": "Hello."}))
    assert result.state["chats"] == {"support": {"messages": [msg("user", "Hi"), msg("assistant", "Hello.")]}}


# --------------------------------------------------------------------------- agents are speakers by their name

AGENT_TALK = """
    name: agents
    config: {model: gpt-4o}
    agents:
      researcher:
        instructions: "You research facts."
        tools: [lookup]
    steps:
      - id: ask
        type: llm_call
        conversation: state.chat
        speaker: host
        prompt: "What is the refund window?"
        output: opening
      - id: research
        type: agent
        depends_on: [ask]
        agent: researcher
        conversation: state.chat
        prompt: "Check the policy and answer the host."
        output: answer
"""


def test_an_agent_speaks_in_a_conversation_under_its_own_name() -> None:
    provider = Scripted({"ask": "Let's find out.", "research": [tool_call("lookup", topic="refunds"), "30 days."]})
    result = run_workflow(flow(AGENT_TALK), provider=provider, tools={"lookup": lambda topic: f"{topic}: 30 days"},
                          clock=VirtualClock(), runs_dir=False)
    assert result.status == "success", {k: v.error for k, v in result.steps.items()}
    # the agent's instructions are its own; the host's turn reaches it as a named user turn
    assert said(provider, 1) == [("system", None, "You research facts."), ("user", None, "What is the refund window?"),
                                 ("user", "host", "Let's find out."),
                                 ("user", None, "Check the policy and answer the host.")]
    assert result.state["chat"]["messages"][-2:] == [msg("user", "Check the policy and answer the host."),
                                                     msg("assistant", "30 days.", "researcher")]
    assert result.state["answer"] == "30 days."


def test_an_agent_that_may_pause_for_approval_cannot_take_a_conversation() -> None:
    text = AGENT_TALK.replace("tools: [lookup]", "tools: [lookup]\n        approval_required: [lookup]")
    with pytest.raises(WorkflowError) as info:
        flow(text)
    assert "may pause for approval" in info.value.headline and info.value.field == "conversation"
