"""Scripts written as data: one reading for ``agentloom run --script`` files and scenario tables."""

from __future__ import annotations

import asyncio

import pytest

from pytest_agentloom._core.types import EmbedRequest, LLMRequest, Message
from pytest_agentloom.errors import ProviderError
from pytest_agentloom.providers._script_data import ScriptDataError
from pytest_agentloom.providers._scripted import Scripted


def ask(provider: Scripted, step: str) -> object:
    request = LLMRequest(step_id=step, model="m", messages=(Message(role="user", content="hi"),))
    return asyncio.run(provider.complete(request))


def test_every_form_becomes_the_reply_it_names() -> None:
    provider = Scripted.from_data({
        "plain": "text",
        "usage": {"text": "counted", "input_tokens": 3, "finish_reason": "length", "reasoning": "why"},
        "call": {"tool_call": "lookup", "arguments": {"id": 1}, "id": "c1"},
        "failing": [{"error": 503, "message": "busy"}],
        "vectors": {"embedding": [[0.5, 1]], "input_tokens": 2},
        "loop": {"misbehave": "repeats", "tool": "lookup", "arguments": {"id": 1}},
    })
    assert ask(provider, "plain").text == "text"
    counted = ask(provider, "usage")
    assert (counted.text, counted.usage.input_tokens, counted.finish_reason, counted.reasoning_content) == (
        "counted", 3, "length", "why")
    call = ask(provider, "call").tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("c1", "lookup", '{"id": 1}')
    with pytest.raises(ProviderError, match="busy") as raised:
        ask(provider, "failing")
    assert raised.value.status == 503
    vectors = asyncio.run(provider.embed(EmbedRequest(step_id="vectors", model="e", texts=("a",))))
    assert vectors.vectors == [[0.5, 1.0]] and vectors.usage.input_tokens == 2
    assert [ask(provider, "loop").tool_calls[0].name for _ in range(3)] == ["lookup"] * 3


@pytest.mark.parametrize(("data", "where", "headline"), [
    ([], "script", "expected a mapping of step id to replies, got list"),
    ({"a": 3}, "script.a", "a scripted reply must be a string or a mapping (got 3)"),
    ({"a": ["ok", {"txt": "x"}]}, "script.a[1].txt", "unknown key 'txt' in a text reply"),
    ({"a": {"error": "503"}}, "script.a.error", "'error' must be an HTTP status number or null (got '503')"),
    ({"a": {"tool_call": "t", "arguments": [1]}}, "script.a.arguments", "'arguments' must be a mapping"),
    ({"a": {"misbehave": "repeat", "tool": "t"}}, "script.a.misbehave", "unknown misbehaviour 'repeat'"),
    ({"a": {"misbehave": "repeats"}}, "script.a.tool", "misbehaviour 'repeats' needs 'tool'"),
    ({"a": {"embedding": [1, 2]}}, "script.a.embedding", "'embedding' must be a list of vectors"),
])
def test_a_bad_form_names_where_it_is_and_what_is_wrong(data: object, where: str, headline: str) -> None:
    with pytest.raises(ScriptDataError) as raised:
        Scripted.from_data(data)
    assert raised.value.where == where
    assert raised.value.headline.startswith(headline)


def test_an_unknown_key_suggests_the_closest_one() -> None:
    with pytest.raises(ScriptDataError) as raised:
        Scripted.from_data({"a": {"tool_call": "t", "argument": {}}})
    assert raised.value.hint is not None and raised.value.hint.startswith("did you mean 'arguments'?")


def test_a_refusal_and_a_storm_that_varies_a_named_argument_are_written_as_data() -> None:
    provider = Scripted.from_data({
        "refuse": {"text": "", "refusal": "I can't help with that."},
        "storm": {"misbehave": "never_finishes", "tool": "lookup_policy", "arguments": {"topic": "a"},
                  "vary": "page"},
    })
    refused = ask(provider, "refuse")
    assert (refused.refusal, refused.finish_reason) == ("I can't help with that.", "refusal")
    call = ask(provider, "storm").tool_calls[0]
    assert (call.name, call.arguments) == ("lookup_policy", '{"page": 1, "topic": "a"}')
