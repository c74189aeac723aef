"""OpenAIProvider and GenericOpenAIProvider against the fake server, through the real ``openai`` SDK."""

from __future__ import annotations

import json

import openai
import pytest

from pytest_agentloom._core.types import Message
from pytest_agentloom.errors import ProviderConfigError, ProviderError, StepError
from pytest_agentloom.providers import GenericOpenAIProvider, OpenAIProvider
from pytest_agentloom.providers._openai import is_reasoning_model, openai_errors
from tests.providers.helpers import LOOKUP, complete, request, sdk_error_classes, sdk_error_instance
from tests.servers.fake_llm import FakeToolCall, drop, fail, text, tool_calls


def provider(server, cls=OpenAIProvider):
    return cls(api_key="sk-test", base_url=server.openai_base_url)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_text_usage_finish_reason_and_model(fake_llm, stream):
    fake_llm.plan(
        "openai",
        text("Paris is the capital.", input_tokens=11, output_tokens=5, reasoning_tokens=2, model="gpt-4o-2024-08-06"),
    )
    response = complete(provider(fake_llm), request(system="Be brief.", prompt="Capital of France?", stream=stream))
    assert response.text == "Paris is the capital."
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.reasoning_tokens) == (11, 5, 2)
    assert response.model == "gpt-4o-2024-08-06" and response.provider == "openai"
    sent = fake_llm.requests[0].json
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert sent.get("stream", False) is stream
    if stream:
        assert sent["stream_options"] == {"include_usage": True}


def test_key_and_base_url_from_env_read_at_first_call(fake_llm, monkeypatch):
    built = OpenAIProvider()  # nothing read yet
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    assert complete(built, request()).text == "echo: hello"
    assert fake_llm.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_missing_key_fails_without_retry_and_says_how_to_fix():
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY") as caught:
        complete(OpenAIProvider(base_url="http://127.0.0.1:9/v1"), request())
    assert caught.value.retryable is False and caught.value.code == "missing_credentials"
    assert caught.value.status is None and caught.value.provider == "openai"
    assert str(caught.value).startswith("provider 'openai' has no API key: neither the constructor nor OPENAI_API_KEY")
    assert "How to fix: export OPENAI_API_KEY=..." in str(caught.value)


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("o1-mini", False),
        ("gpt-5-chat-latest", False),
        ("gpt-4o", False),
        ("gpt-4.1", False),
    ],
)
def test_reasoning_model_params(fake_llm, model, reasoning):
    assert is_reasoning_model(model) is reasoning
    params = {"temperature": 0.2, "max_tokens": 400, "thinking": {"enabled": True, "level": "high"}}
    complete(provider(fake_llm), request(model=model, params=params))
    sent = fake_llm.requests[0].json
    if reasoning:
        assert sent["max_completion_tokens"] == 400 and "max_tokens" not in sent
        assert "temperature" not in sent and sent["reasoning_effort"] == "high"
    else:
        assert sent["max_tokens"] == 400 and sent["temperature"] == 0.2
        assert "max_completion_tokens" not in sent and "reasoning_effort" not in sent


def test_thinking_without_level_or_disabled_sends_nothing(fake_llm):
    complete(provider(fake_llm), request(model="o3", params={"thinking": {"enabled": True, "budget_tokens": 100}}))
    complete(provider(fake_llm), request(model="o3", params={"thinking": {"enabled": False, "level": "low"}}))
    assert all("reasoning_effort" not in r.json for r in fake_llm.requests)


def test_generic_openai_sends_params_as_given(fake_llm):
    generic = provider(fake_llm, GenericOpenAIProvider)
    response = complete(generic, request(model="o3-local", params={"temperature": 0.5, "max_tokens": 9}))
    sent = fake_llm.requests[0].json
    assert sent["max_tokens"] == 9 and sent["temperature"] == 0.5
    assert response.provider == "generic_openai"


def test_generic_openai_needs_a_base_url_but_no_key(fake_llm, monkeypatch):
    with pytest.raises(ProviderConfigError, match="AGENTLOOM_GENERIC_OPENAI_BASE_URL"):
        complete(GenericOpenAIProvider(), request())
    monkeypatch.setenv("AGENTLOOM_GENERIC_OPENAI_BASE_URL", fake_llm.openai_base_url)
    assert complete(GenericOpenAIProvider(), request()).text == "echo: hello"


def test_unknown_param_is_refused(fake_llm):
    with pytest.raises(StepError, match="top_k"):
        complete(provider(fake_llm), request(params={"top_k": 3}))
    assert fake_llm.requests == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_tool_calls_round_trip(fake_llm, stream):
    fake_llm.plan(
        "openai",
        tool_calls(("lookup", {"word": "loom"}), FakeToolCall("lookup", '{"word": "weft"}')),
        text("A loom weaves."),
    )
    prov = provider(fake_llm)
    first = complete(
        prov, request(prompt="define loom", tools=(LOOKUP,), tool_choice={"name": "lookup"}, stream=stream)
    )
    assert first.finish_reason == "tool_calls"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("call_fake_0001_0", "lookup", {"word": "loom"}),
        ("call_fake_0001_1", "lookup", {"word": "weft"}),
    ]
    sent = fake_llm.requests[0].json
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {"name": "lookup", "description": "Look a word up.", "parameters": LOOKUP.parameters},
        }
    ]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}

    history = (
        Message(role="user", content="define loom"),
        Message(role="assistant", content=None, tool_calls=first.tool_calls),
        Message(role="tool", content="a weaving frame", tool_call_id="call_fake_0001_0"),
        Message(role="tool", content="crosswise thread", tool_call_id="call_fake_0001_1"),
    )
    second = complete(prov, request(messages=history, tools=(LOOKUP,), tool_choice="auto", stream=stream))
    assert second.text == "A loom weaves." and second.tool_calls == ()
    sent = fake_llm.requests[1].json
    assert sent["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_fake_0001_0",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"word": "loom"}'},
            },
            {
                "id": "call_fake_0001_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"word": "weft"}'},
            },
        ],
    }
    assert sent["messages"][2] == {"role": "tool", "content": "a weaving frame", "tool_call_id": "call_fake_0001_0"}
    assert sent["tool_choice"] == "auto"


def test_speaker_name_is_sent_as_name(fake_llm):
    messages = (Message(role="user", content="my plan", name="alice"),)
    complete(provider(fake_llm), request(messages=messages))
    assert fake_llm.requests[0].json["messages"] == [{"role": "user", "content": "my plan", "name": "alice"}]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 429, 500, 503])
def test_error_status_becomes_provider_error(fake_llm, status):
    fake_llm.plan("openai", fail(status, "something is off"))
    with pytest.raises(ProviderError) as caught:
        complete(provider(fake_llm), request())
    assert caught.value.status == status and caught.value.provider == "openai"
    assert "something is off" in str(caught.value)
    assert isinstance(caught.value.__cause__, openai.APIStatusError)


def test_dropped_connection_has_no_status(fake_llm):
    fake_llm.plan("openai", drop())
    with pytest.raises(ProviderError) as caught:
        complete(provider(fake_llm), request())
    assert caught.value.status is None
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


def test_nothing_listening_has_no_status():
    with pytest.raises(ProviderError) as caught:
        complete(OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"), request())
    assert caught.value.status is None


def test_every_openai_api_error_class_is_translated():
    classes = sdk_error_classes(openai)
    assert len(classes) >= 12
    for cls in classes:
        exc = sdk_error_instance(openai, cls)
        with pytest.raises(ProviderError) as caught, openai_errors("openai"):
            raise exc
        assert caught.value.__cause__ is exc, cls
        expected = 418 if isinstance(exc, (openai.APIStatusError, openai.APIResponseValidationError)) else None
        assert caught.value.status == expected, cls
