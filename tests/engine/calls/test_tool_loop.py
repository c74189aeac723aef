"""Tool calling in llm_call (docs/running-workflows.md): every rule, through the scripted provider."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, WorkflowError, error, reply, run_workflow, tool_call
from pytest_agentloom._core.types import ToolCall
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.tools import tool

LOOKUP_SCHEMA = {"type": "object", "properties": {"ticket_id": {"type": "string"}}, "required": ["ticket_id"]}


@tool
def lookup(ticket_id: str) -> dict[str, str]:
    """Find a ticket by id."""
    return {"id": ticket_id, "status": "open"}


@tool
def boom(reason: str = "") -> str:
    """Always fails."""
    raise ValueError(f"database down {reason}".strip())


def flow(extra: str = "", *, tools: str = "[{name: lookup}]", base: Path | None = None) -> Any:
    text = textwrap.dedent(f"""\
        name: tools
        config: {{model: gpt-4o-mini}}
        steps:
          - id: ask
            type: llm_call
            prompt: "Status of T-1?"
            tools: {tools}
            output: answer
        """)
    text += "".join(f"    {line}\n" for line in textwrap.dedent(extra).splitlines() if line.strip())
    return parse_workflow(text, source=(base / "flow.yaml") if base else None)


def run(workflow: Any, provider: Scripted, tools: Any = None, **kwargs: Any) -> Any:
    registered = [lookup, boom] if tools is None else tools
    return run_workflow(workflow, provider=provider, tools=registered, clock=VirtualClock(), **kwargs)


def calls(*pairs: tuple[str, dict[str, Any]] | ToolCall, text: str = "", **usage: Any) -> Any:
    made = [p if isinstance(p, ToolCall) else ToolCall(id=f"c{i}", name=p[0], arguments=json.dumps(p[1]))
            for i, p in enumerate(pairs, 1)]
    return reply(text, tool_calls=made, finish_reason="tool_calls", **usage)


def tool_messages(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.messages if m["role"] == "tool"]


# -- the loop -----------------------------------------------------------------------------------------------


def test_a_reply_without_tool_calls_is_the_answer() -> None:
    provider = Scripted({"ask": reply("All good.", finish_reason="stop")})
    result = run(flow(), provider)
    step = result.steps["ask"]
    assert (result.status, step.output, step.finish_reason) == ("success", "All good.", "stop")
    assert result.state["answer"] == "All good."
    [request] = provider.requests
    assert request.tools == ["lookup"]
    assert request.request.tool_choice == "auto"
    assert request.request.stream is False


def test_tool_results_go_back_and_the_model_is_called_again() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1", call_id="c1"), "T-1 is open."]})
    result = run(flow(), provider)
    assert result.steps["ask"].output == "T-1 is open."
    first, second = provider.requests
    assert (first.turn, second.turn) == (1, 2)
    assert second.messages[-2] == {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "name": "lookup", "arguments": '{"ticket_id": "T-1"}'}],
    }
    assert second.messages[-1] == {
        "role": "tool", "content": '{"id": "T-1", "status": "open"}', "name": "lookup", "tool_call_id": "c1"}


def test_the_steps_tools_are_sent_with_the_registered_description_and_parameters_when_left_out() -> None:
    declared = "[{name: lookup}, {name: boom, description: Explodes., parameters: {type: object, properties: {}}}]"
    provider = Scripted({"ask": "ok"})
    run(flow(tools=declared), provider)
    specs = [spec.model_dump() for spec in provider.requests[0].request.tools]
    assert specs == [
        {"name": "lookup", "description": "Find a ticket by id.", "parameters": {
            "type": "object", "properties": {"ticket_id": {"type": "string"}}, "required": ["ticket_id"],
            "additionalProperties": False}},
        {"name": "boom", "description": "Explodes.", "parameters": {"type": "object", "properties": {}}},
    ]


def test_all_calls_of_one_reply_run_at_once_and_results_keep_the_call_order() -> None:
    started: list[str] = []
    release = asyncio.Event()

    @tool
    async def slow(name: str) -> str:
        """Waits until the fast one ran: only possible when both run at once."""
        started.append(name)
        await asyncio.wait_for(release.wait(), timeout=5)
        return f"slow {name}"

    @tool
    async def fast(name: str) -> str:
        """Returns at once and lets the slow one go."""
        started.append(name)
        release.set()
        return f"fast {name}"

    provider = Scripted({"ask": [calls(("slow", {"name": "a"}), ("fast", {"name": "b"})), "done"]})
    result = run(flow(tools="[{name: slow}, {name: fast}]"), provider, tools=[slow, fast])
    assert result.status == "success", result.steps["ask"].error
    assert started == ["a", "b"]
    assert [m["content"] for m in tool_messages(provider.requests[1])] == ["slow a", "fast b"]
    tool_events = [(e.data["tool"], e.data["call_id"]) for e in result.trace.events("tool_call")]
    assert tool_events == [("slow", "c1"), ("fast", "c2")]


# -- failing tools go back to the model ---------------------------------------------------------------------


def test_failing_tools_go_back_to_the_model_and_the_loop_goes_on(tmp_path: Path) -> None:
    failing = calls(
        ("nonexistent", {}),
        ("boom", {"reason": "today"}),
        ToolCall(id="c3", name="lookup", arguments="{not json"),
        ToolCall(id="c4", name="lookup", arguments="[1, 2]"),
        ("file_read", {"path": "/etc/passwd"}),
        ("lookup", {"wrong": "argument"}),
    )
    declared = "[{name: lookup}, {name: boom}, {name: file_read}]"
    provider = Scripted({"ask": [failing, "I could not find it."]})
    result = run(flow(tools=declared, base=tmp_path), provider)
    assert result.status == "success"
    assert result.steps["ask"].output == "I could not find it."
    contents = [m["content"] for m in tool_messages(provider.requests[1])]
    assert contents[0] == "Error: unknown tool 'nonexistent': this step offers lookup, boom, file_read"
    assert contents[1] == "Error: ValueError: database down today"
    assert contents[2].startswith("Error: arguments are not valid JSON (Expecting property name")
    assert contents[3] == "Error: arguments must be a JSON object, got list: '[1, 2]'"
    assert contents[4].startswith("Error: sandbox refused file_read: rule 'readable_paths':")
    assert contents[5].startswith("Error: TypeError:")  # arguments aren't checked against parameters
    codes = [e.data.get("code", "ok") for e in result.trace.events("tool_call")]
    assert codes == ["unknown_tool", "tool_error", "invalid_json", "invalid_json", "sandbox_refused", "tool_error"]


def test_a_registered_tool_the_step_does_not_declare_is_out_of_reach() -> None:
    provider = Scripted({"ask": [tool_call("boom", call_id="c1"), "ok"]})
    result = run(flow(), provider)  # boom is registered, but the step declares only lookup
    assert tool_messages(provider.requests[1])[0]["content"] == (
        "Error: unknown tool 'boom': this step offers lookup")
    assert result.trace.events("tool_call")[0].data["code"] == "unknown_tool"


def test_a_declared_tool_that_is_not_registered_fails_before_any_call() -> None:
    provider = Scripted({"ask": "never sent"})
    result = run(flow(tools="[{name: lookup}, {name: missing_tool}]"), provider)
    step = result.steps["ask"]
    assert (result.status, step.error_code) == ("failed", "unknown_tool")
    assert "declares tool(s) that are not registered: missing_tool" in step.error
    assert provider.requests == []


# -- tool_choice --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "first"),
    [("required", "required"), ("{name: lookup}", {"name": "lookup"}), ("auto", "auto")],
)
def test_required_and_a_named_tool_apply_to_the_first_call_only(choice: str, first: Any) -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1"), tool_call("lookup", ticket_id="T-2"), "ok"]})
    run(flow(f"tool_choice: {choice}"), provider)
    assert [r.request.tool_choice for r in provider.requests] == [first, "auto", "auto"]


def test_tool_choice_none_turns_the_tools_off() -> None:
    ran: list[str] = []

    @tool(name="lookup")
    def spy(ticket_id: str) -> str:
        ran.append(ticket_id)
        return "x"

    provider = Scripted({"ask": reply("Answer without tools.", tool_calls=[ToolCall(id="c", name="lookup")])})
    result = run(flow("tool_choice: none"), provider, tools=[spy])
    assert result.steps["ask"].output == "Answer without tools."
    assert provider.requests[0].request.tool_choice == "none"
    assert ran == []
    assert len(provider.requests) == 1


# -- max_tool_iterations ------------------------------------------------------------------------------------


def test_max_tool_iterations_defaults_to_five_counting_the_answering_call() -> None:
    never_done = [tool_call("lookup", ticket_id=f"T-{n}", call_id=f"c{n}") for n in range(1, 6)]
    provider = Scripted({"ask": never_done})
    result = run(flow(), provider)
    assert len(provider.requests) == 5
    assert len(result.trace.events("tool_call")) == 4  # the fifth reply's call does not run


def test_at_max_tool_iterations_the_step_succeeds_with_the_last_text_and_its_tools_dont_run() -> None:
    ran: list[str] = []

    @tool(name="lookup")
    def spy(ticket_id: str) -> str:
        ran.append(ticket_id)
        return "found"

    last = reply("Partial answer: T-1 is open.", tool_calls=[ToolCall(id="c2", name="lookup", arguments="{}")])
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1"), last]})
    result = run(flow("max_tool_iterations: 2"), provider, tools=[spy])
    step = result.steps["ask"]
    assert (result.status, step.output, step.finish_reason) == (
        "success", "Partial answer: T-1 is open.", "max_tool_iterations")
    assert ran == ["T-1"]
    [skipped] = result.trace.events("tool_calls_skipped")
    assert skipped.data == {"turn": 2, "tools": ["lookup"], "reason": "max_tool_iterations"}


def test_with_max_tool_iterations_1_no_tool_ever_runs() -> None:
    provider = Scripted({"ask": calls(("lookup", {"ticket_id": "T-1"}), text="Let me check.")})
    result = run(flow("max_tool_iterations: 1"), provider)
    assert (result.steps["ask"].output, result.steps["ask"].finish_reason) == ("Let me check.", "max_tool_iterations")
    assert result.trace.events("tool_call") == []


def test_an_empty_last_reply_ends_with_no_answer() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1"), tool_call("lookup", ticket_id="T-2")]})
    result = run(flow("max_tool_iterations: 2"), provider)
    step = result.steps["ask"]
    assert (result.status, step.output, step.finish_reason) == ("success", "", "max_tool_iterations_no_answer")


# -- tokens, cost, retries, trace ---------------------------------------------------------------------------


def test_tokens_and_cost_cover_every_call_of_the_loop() -> None:
    provider = Scripted({"ask": [
        calls(("lookup", {"ticket_id": "T-1"}), input_tokens=100, output_tokens=10),
        reply("open", input_tokens=200, output_tokens=20, reasoning_tokens=5),
    ]})
    result = run(flow(), provider)
    step = result.steps["ask"]
    assert (step.input_tokens, step.output_tokens, step.reasoning_tokens) == (300, 30, 5)
    # gpt-4o-mini: $0.15 / $0.60 per million tokens
    assert step.cost_usd == pytest.approx((300 * 0.15 + 35 * 0.60) / 1_000_000)
    assert [e.data["input_tokens"] for e in result.trace.events("provider_call")] == [100, 200]


def test_a_retry_runs_the_whole_loop_again_tools_included() -> None:
    ran: list[str] = []

    @tool(name="lookup")
    def spy(ticket_id: str) -> str:
        ran.append(ticket_id)
        return "open"

    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1"), error(503, "busy"),
                                 tool_call("lookup", ticket_id="T-1"), "T-1 is open."]})
    result = run(flow(), provider, tools=[spy])
    step = result.steps["ask"]
    assert (result.status, step.output, step.attempts) == ("success", "T-1 is open.", 2)
    assert ran == ["T-1", "T-1"]
    assert [(r.attempt, r.turn) for r in provider.requests] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert len(provider.requests[2].messages) == 1  # the second attempt starts from the prompt again


def test_the_trace_has_one_event_per_model_turn_and_per_tool_run() -> None:
    provider = Scripted({"ask": [calls(("lookup", {"ticket_id": "T-1"}), ("lookup", {"ticket_id": "T-2"})), "ok"]})
    result = run(flow(), provider)
    kinds = [(e.kind, e.data.get("turn"), e.data.get("tool")) for e in result.trace
             if e.kind in ("provider_call", "tool_call")]
    assert kinds == [
        ("provider_call", 1, None), ("tool_call", 1, "lookup"), ("tool_call", 1, "lookup"), ("provider_call", 2, None)]
    assert result.trace.events("provider_call")[0].data["tool_calls"] == ["lookup", "lookup"]
    assert result.trace.events("tool_call")[1].data["args"] == {"ticket_id": "T-2"}


def test_same_inputs_same_trace() -> None:
    def once() -> str:
        provider = Scripted({"ask": [calls(("lookup", {"ticket_id": "T-1"}), ("boom", {})), "ok"]})
        return run(flow(tools="[{name: lookup}, {name: boom}]"), provider).to_json()

    assert once() == once()


# -- load-time rules ----------------------------------------------------------------------------------------


STATUS_SCHEMA = """\
response_schema:
  type: json_schema
  name: status
  schema: {type: object, properties: {status: {type: string}}, required: [status]}
"""


def test_tools_and_a_response_schema_the_loop_runs_and_the_final_reply_is_parsed() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1", call_id="c1"), '{"status": "open"}']})
    result = run(flow(STATUS_SCHEMA), provider)
    step = result.steps["ask"]
    assert (result.status, step.output, result.state["answer"]) == ("success", {"status": "open"}, {"status": "open"})
    first, second = (call.request for call in provider.requests)
    assert first.tools and second.tools  # the tools stay offered while the shape is asked for
    wanted = {"name": "status", "strict": True, "schema": {"type": "object", "properties": {"status": {
        "type": "string"}}, "required": ["status"], "additionalProperties": False}}
    assert first.params["response_format"] == second.params["response_format"] == {
        "type": "json_schema", "json_schema": wanted}
    events = result.trace.events("provider_call")
    assert [event.data.get("valid") for event in events] == [None, True]
    assert [event.data["tool_calls"] for event in events] == [["lookup"], []]


def test_tools_and_a_response_schema_an_invalid_final_reply_is_asked_again() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1", call_id="c1"), "It is open.",
                                 '{"status": "open"}']})
    result = run(flow(STATUS_SCHEMA), provider)
    assert result.steps["ask"].output == {"status": "open"}
    third = provider.requests[2].request
    assert third.tools and third.messages[-1].content.startswith("That reply is not valid: the reply holds no JSON")
    events = result.trace.events("provider_call")
    assert [event.data.get("valid") for event in events] == [None, False, True]
    assert "problem" in events[1].data


def test_tools_and_a_response_schema_no_valid_reply_fails_without_a_retry() -> None:
    provider = Scripted({"ask": ["no", "still no"]})
    result = run(flow(STATUS_SCHEMA + "retry: {max_retries: 1}\n"), provider)
    step = result.steps["ask"]
    assert (result.status, step.error_code, step.attempts) == ("failed", "invalid_output", 1)
    assert "no valid structured reply after 2 calls" in step.error
    assert len(provider.requests) == 2


def claude_flow(extra: str) -> Any:
    data = json.loads(flow(extra).model_dump_json(by_alias=True, exclude_unset=True))
    return parse_workflow(json.dumps({**data, "config": {"model": "claude-sonnet-4-5", "provider": "anthropic"}}))


def test_tools_and_a_response_schema_for_claude_the_schema_goes_natively() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1", call_id="c1"), '{"status": "open"}']})
    result = run(claude_flow(STATUS_SCHEMA), provider)
    assert result.steps["ask"].output == {"status": "open"}
    first = provider.requests[0].request
    assert first.params["response_format"]["type"] == "json_schema" and first.tools
    assert first.messages[-1].role == "user"  # no "{" prefill: it would keep the model from calling a tool


def test_tools_and_a_json_object_shape_for_claude_asks_in_the_system_prompt_without_prefill() -> None:
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1", call_id="c1"), '{"status": "open"}']})
    result = run(claude_flow("response_schema: {type: json_object}"), provider)
    assert result.steps["ask"].output == {"status": "open"}
    first = provider.requests[0].request
    assert "response_format" not in first.params and first.tools
    assert first.messages[0].role == "system" and "final answer" in first.messages[0].content
    assert first.messages[-1].role == "user"


def test_a_named_tool_choice_must_be_declared() -> None:
    with pytest.raises(WorkflowError) as info:
        flow("tool_choice: {name: lookpu}")
    assert info.value.headline == "llm_call 'ask' sets tool_choice to 'lookpu', which the step does not declare"
    assert "did you mean 'lookup'?" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "tools", "headline"),
    [
        ("tool_choice: required", "[]", "llm_call 'ask' sets tool_choice: required but declares no tools"),
        ("", "[{name: lookup}, {name: lookup}]", "llm_call 'ask' declares tool 'lookup' twice"),
        ("max_tool_iterations: 0", "[{name: lookup}]", "Invalid value for 'max_tool_iterations'"),
        ("tool_choice: sometimes", "[{name: lookup}]", "Invalid value for 'tool_choice"),
    ],
)
def test_other_tool_calling_load_errors(extra: str, tools: str, headline: str) -> None:
    with pytest.raises(WorkflowError) as info:
        flow(extra, tools=tools)
    assert str(info.value).startswith(headline) or headline in str(info.value)
