"""The Scripted provider: queues per step, callables, recorded requests, and never a default reply."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pytest_agentloom import (
    LLMRequest,
    LLMResponse,
    ProviderError,
    Scripted,
    ScriptError,
    VirtualClock,
    error,
    reply,
    run_workflow,
    tool_call,
)
from pytest_agentloom._core.types import Message, ToolCall, Usage
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers._replies import ErrorSpec, ReplySpec


def request(step_id: str = "ask", *, attempt: int = 1, content: str = "hi", **params: Any) -> LLMRequest:
    return LLMRequest(step_id=step_id, model="gpt-4o", messages=(Message(role="user", content=content),),
                      params=params, attempt=attempt)


def complete(provider: Scripted, req: LLMRequest) -> LLMResponse:
    return asyncio.run(provider.complete(req))


# --------------------------------------------------------------------------- replies


def test_a_list_of_replies_is_consumed_in_order() -> None:
    provider = Scripted({"ask": ["one", reply("two", input_tokens=3, output_tokens=4, finish_reason="length")]})

    first = complete(provider, request())
    second = complete(provider, request())

    assert (first.text, first.finish_reason, first.usage) == ("one", "stop", Usage())
    assert (second.text, second.finish_reason) == ("two", "length")
    assert second.usage == Usage(input_tokens=3, output_tokens=4)
    assert (second.model, second.provider, second.cost) == ("gpt-4o", "scripted", None)
    assert provider.unused() == {}


def test_a_single_reply_answers_once() -> None:
    provider = Scripted({"ask": "only"})

    assert complete(provider, request()).text == "only"
    with pytest.raises(ScriptError, match="1 reply was scripted and all were used"):
        complete(provider, request())


def test_steps_have_their_own_queues() -> None:
    provider = Scripted({"a": ["a1", "a2"], "b": ["b1"]})

    texts = [complete(provider, request(step)).text for step in ("a", "b", "a")]

    assert texts == ["a1", "b1", "a2"]
    assert provider.unused() == {}


def test_unused_reports_replies_left_over() -> None:
    provider = Scripted({"a": ["a1", "a2", "a3"], "b": "b1"})

    complete(provider, request("a"))

    assert provider.unused() == {"a": 2, "b": 1}


def test_reply_carries_model_and_cost_when_given() -> None:
    provider = Scripted({"ask": reply("x", model="gpt-4o-2024-08-06", cost=0.5, reasoning_tokens=7)})

    response = complete(provider, request())

    assert (response.model, response.cost, response.usage.reasoning_tokens) == ("gpt-4o-2024-08-06", 0.5, 7)


def test_tool_call_reply_shape() -> None:
    spec = tool_call("http_request", url="https://example.com", method="GET")

    assert isinstance(spec, ReplySpec)
    assert spec.text == ""
    assert spec.finish_reason == "tool_calls"
    assert spec.tool_calls == (
        ToolCall(id="call_http_request", name="http_request", arguments='{"method": "GET", "url": "https://example.com"}'),
    )
    assert json.loads(spec.tool_calls[0].arguments) == {"url": "https://example.com", "method": "GET"}

    response = complete(Scripted({"ask": spec}), request())
    assert response.tool_calls == spec.tool_calls
    assert response.finish_reason == "tool_calls"


def test_tool_call_with_an_id_and_raw_arguments() -> None:
    spec = tool_call("f", call_id="c-1", raw_arguments="{not json")

    assert spec.tool_calls == (ToolCall(id="c-1", name="f", arguments="{not json"),)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 502, 503, 504, None])
def test_error_replies_raise_a_provider_error_with_the_status(status: int | None) -> None:
    spec = error(status, "boom")
    provider = Scripted({"ask": spec})

    with pytest.raises(ProviderError) as info:
        complete(provider, request())

    assert spec == ErrorSpec(status=status, message="boom")
    assert info.value.status == status
    assert info.value.provider == "scripted"
    label = f"HTTP {status}" if status is not None else "no status"
    assert str(info.value) == f"provider error ({label}): boom"


def test_an_error_without_a_message() -> None:
    with pytest.raises(ProviderError, match=r"^provider error \(HTTP 429\)$"):
        complete(Scripted({"ask": error(429)}), request())


# --------------------------------------------------------------------------- callables


def test_a_callable_answers_every_request_of_its_step_from_the_request() -> None:
    seen: list[int] = []

    def answer(req: LLMRequest) -> Any:
        seen.append(req.attempt)
        if req.attempt == 1:
            return error(503)
        return reply(f"echo: {req.messages[-1].content}", output_tokens=2)

    provider = Scripted({"ask": answer})

    with pytest.raises(ProviderError):
        complete(provider, request(attempt=1))
    response = complete(provider, request(attempt=2, content="ping"))
    again = complete(provider, request(attempt=2, content="pong"))

    assert response.text == "echo: ping" and response.usage.output_tokens == 2
    assert again.text == "echo: pong"  # a callable never runs out
    assert seen == [1, 2, 2]
    assert provider.unused() == {}


def test_an_async_callable_is_awaited() -> None:
    async def answer(req: LLMRequest) -> str:
        await asyncio.sleep(0)
        return req.step_id.upper()

    assert complete(Scripted({"ask": answer}), request()).text == "ASK"


def test_a_list_may_mix_callables_and_replies() -> None:
    provider = Scripted({"ask": [lambda req: f"first to {req.model}", "second"]})

    assert complete(provider, request()).text == "first to gpt-4o"
    assert complete(provider, request()).text == "second"


def test_a_callable_returning_something_else_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="must be a str, reply\\(\\), tool_call\\(\\) or error\\(\\), got int: 42"):
        complete(Scripted({"ask": lambda req: 42}), request())


# --------------------------------------------------------------------------- never a default


def test_a_step_without_a_script_is_an_error_naming_the_scripted_steps() -> None:
    provider = Scripted({"b": "x", "a": "y"})

    with pytest.raises(ScriptError) as info:
        complete(provider, request("other"))

    assert str(info.value).startswith("Scripted provider has no replies for step 'other' (steps with replies: a, b).")
    assert "How to fix: add 'other' to the script" in str(info.value)


def test_an_exhausted_script_names_the_step_the_count_and_the_request() -> None:
    provider = Scripted({"ask": ["one", "two"]})
    complete(provider, request())
    complete(provider, request())

    with pytest.raises(ScriptError) as info:
        complete(provider, request(attempt=3))

    assert str(info.value) == (
        "Scripted provider has no reply left for step 'ask': 2 replies were scripted and all were used "
        "(this is request 3 for the step, attempt 3, turn 1).\n"
        "How to fix: add another reply to the list for 'ask'."
    )


def test_an_empty_script() -> None:
    with pytest.raises(ScriptError, match="steps with replies: none"):
        complete(Scripted(), request())


# --------------------------------------------------------------------------- recorded requests


def test_requests_are_recorded_in_order_as_plain_data() -> None:
    workflow = parse_workflow(
        """
name: rec
config: {model: gpt-4o}
state: {who: Ann}
steps:
  - {id: first, type: llm_call, system_prompt: "Be brief.", prompt: "Hi {state.who}", temperature: 0, max_tokens: 5}
  - {id: second, type: llm_call, prompt: "Then", depends_on: [first], model: claude-haiku-4-5}
"""
    )
    provider = Scripted({"first": [error(500), "hello"], "second": "bye"})

    run_workflow(workflow, provider=provider, clock=VirtualClock())

    assert [(c.step_id, c.attempt, c.turn) for c in provider.requests] == [
        ("first", 1, 1), ("first", 2, 1), ("second", 1, 1)
    ]
    call = provider.requests[0]
    assert call.model == "gpt-4o"
    assert call.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi Ann"}]
    assert call.params == {"temperature": 0, "max_tokens": 5}
    assert call.tools == []
    assert call.request.step_id == "first"
    assert provider.calls("second")[0].model == "claude-haiku-4-5"
    assert [c.step_id for c in provider.calls("first")] == ["first", "first"]


def test_a_recorded_request_is_a_copy() -> None:
    provider = Scripted({"ask": "x"})
    complete(provider, request(temperature=1))

    provider.requests[0].params["temperature"] = 99

    assert provider.requests[0].request.params == {"temperature": 1}


def test_scripted_is_not_collected_as_a_test_class() -> None:
    assert Scripted.__test__ is False


def test_the_request_log_reads_the_same_whenever_it_is_read() -> None:
    """Requests are made into ScriptedCall objects when the log is read: reading between calls changes nothing."""
    from pytest_agentloom._core.types import EmbedRequest
    from pytest_agentloom.providers._replies import embedding

    provider = Scripted({"ask": ["one", "two"], "vectors": embedding([[0.5]])})
    complete(provider, request(content="first"))
    early = list(provider.requests)
    asyncio.run(provider.embed(EmbedRequest(step_id="vectors", model="emb", texts=("t",))))
    complete(provider, request(content="second"))

    assert provider.requests[:1] == early
    assert [(c.step_id, c.messages, c.texts) for c in provider.requests] == [
        ("ask", [{"role": "user", "content": "first"}], []),
        ("vectors", [], ["t"]),
        ("ask", [{"role": "user", "content": "second"}], []),
    ]
    assert provider.requests is provider.requests  # one list, kept
