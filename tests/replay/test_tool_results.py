"""The tool results a model request carries, read from each provider's wire format as the providers build it:
what ``--agentloom-live-tools=all`` compares with the recorded request of the next model turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_agentloom._core.types import LLMRequest, Message, ToolCall
from pytest_agentloom.errors import ToolDriftError
from pytest_agentloom.providers._anthropic import to_anthropic_messages
from pytest_agentloom.providers._google import GoogleProvider
from pytest_agentloom.providers._ollama import OllamaProvider
from pytest_agentloom.providers._openai import OpenAIProvider
from pytest_agentloom.providers._openai_responses import to_response_input
from pytest_agentloom.replay._tool_results import tool_drift, tool_outputs


def conversation(owner: str) -> tuple[Message, ...]:
    """Two turns of tool calls: one lookup, then a lookup and a send in one turn."""
    return (
        Message(role="user", content="Email the owner of ticket 7."),
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="lookup", arguments='{"ticket": 7}'),)),
        Message(role="tool", content=owner, tool_call_id="c1", name="lookup"),
        Message(role="assistant", tool_calls=(ToolCall(id="c2", name="lookup", arguments='{"ticket": 8}'),
                                              ToolCall(id="c3", name="send", arguments='{"to": "x"}'))),
        Message(role="tool", content="cy@example.org", tool_call_id="c2", name="lookup"),
        Message(role="tool", content='{"sent": true}', tool_call_id="c3", name="send"),
    )


def request(messages: tuple[Message, ...]) -> LLMRequest:
    return LLMRequest(model="m", messages=messages, step_id="ask", turn=3)


BUILDERS: dict[str, Callable[[tuple[Message, ...]], Any]] = {
    "openai": lambda messages: OpenAIProvider(api_key="k").build_body(request(messages)),
    "anthropic": lambda messages: {"messages": to_anthropic_messages(messages)[1]},
    "responses": lambda messages: {"input": to_response_input(messages)[1]},
    "gemini": lambda messages: GoogleProvider(api_key="k").build_body(request(messages)),
    "ollama": lambda messages: OllamaProvider().build_body(request(messages)),
}


def body(wire: str, owner: str = "ana@example.org") -> Any:
    return json.loads(json.dumps(BUILDERS[wire](conversation(owner))))  # as the cassette holds it: JSON data


@pytest.mark.parametrize("wire", sorted(BUILDERS))
def test_every_wire_format_gives_the_results_in_order_with_their_calls(wire: str) -> None:
    outputs = tool_outputs(body(wire))
    assert [output.name for output in outputs] == ["lookup", "lookup", "send"]
    first = outputs[0]
    assert "ana@example.org" in json.dumps(first.content)
    assert json.loads(json.dumps(first.arguments)) in ({"ticket": 7}, '{"ticket": 7}')


@pytest.mark.parametrize("wire", sorted(BUILDERS))
def test_a_changed_result_is_a_drift_naming_its_call(wire: str) -> None:
    error = tool_drift(body(wire), body(wire, owner="bo@example.org"), step="ask", turn=3, recording="c.yaml")
    assert isinstance(error, ToolDriftError) and error.code == "tool_drift"
    text = str(error)
    assert "Tool 'lookup' ran for real" in text and "step 'ask', turn 2, call 1 of 'lookup' in the step" in text
    assert "ana@example.org" in text and "bo@example.org" in text and "recording: c.yaml" in text


@pytest.mark.parametrize("wire", sorted(BUILDERS))
def test_a_request_that_differs_elsewhere_too_is_no_drift(wire: str) -> None:
    now = body(wire, owner="bo@example.org")
    prompt = Message(role="user", content="Email the owner of ticket 9.")  # and the prompt changed too
    changed = BUILDERS[wire]((prompt, *conversation("bo@example.org")[1:]))
    assert tool_drift(body(wire), json.loads(json.dumps(changed)), step="ask", turn=3, recording="c") is None
    assert tool_drift(body(wire), body(wire), step="ask", turn=3, recording="c") is None  # nothing differs
    assert tool_drift({"prompt": "a"}, now, step="ask", turn=3, recording="c") is None


def test_a_body_of_another_shape_has_no_tool_results() -> None:
    assert tool_outputs({"prompt": "hi"}) == [] and tool_outputs("text") == []
    assert tool_drift({"prompt": "a"}, {"prompt": "b"}, step="s", turn=2, recording="c") is None
