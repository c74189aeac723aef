"""AnthropicProvider against the fake server, through the real ``anthropic`` SDK."""

from __future__ import annotations

import json

import anthropic
import pytest

from pytest_agentloom._core.types import Message
from pytest_agentloom.errors import ProviderConfigError, ProviderError
from pytest_agentloom.providers import AnthropicProvider
from pytest_agentloom.providers._anthropic import anthropic_errors
from tests.providers.helpers import LOOKUP, complete, request, sdk_error_classes, sdk_error_instance
from tests.servers.fake_llm import drop, fail, text, tool_calls


def provider(server):
    return AnthropicProvider(api_key="sk-ant-test", base_url=server.url)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_text_usage_stop_reason_and_system(fake_llm, stream):
    fake_llm.plan("anthropic", text("Short answer.", input_tokens=20, output_tokens=3, model="claude-sonnet-4-5-x"))
    req = request(model="claude-test-model", system="You are terse.", prompt="Why?", stream=stream)
    response = complete(provider(fake_llm), req)
    assert response.text == "Short answer."
    assert response.finish_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.reasoning_tokens) == (20, 3, 0)
    assert response.model == "claude-sonnet-4-5-x" and response.provider == "anthropic"
    sent = fake_llm.requests[0].json
    assert sent["system"] == "You are terse."
    assert sent["messages"] == [{"role": "user", "content": "Why?"}]
    assert sent["max_tokens"] == 4096
    assert sent.get("stream", False) is stream


def test_max_tokens_and_thinking_budget(fake_llm):
    prov = provider(fake_llm)
    complete(
        prov,
        request(model="claude-x", params={"max_tokens": 8000, "thinking": {"enabled": True, "budget_tokens": 4000}}),
    )
    complete(prov, request(model="claude-x", params={"thinking": {"enabled": True, "budget_tokens": 1000}}))
    complete(prov, request(model="claude-x", params={"thinking": {"enabled": False, "budget_tokens": 1000}}))
    first, second, third = (r.json for r in fake_llm.requests)
    assert first["max_tokens"] == 8000 and first["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert second["max_tokens"] == 4096 + 1000
    assert third["max_tokens"] == 4096 and "thinking" not in third


def test_key_from_env_read_at_first_call(fake_llm, monkeypatch):
    built = AnthropicProvider()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    assert complete(built, request(model="claude-x")).text == "echo: hello"
    headers = fake_llm.requests[0].headers
    assert "sk-ant-env" in (headers.get("x-api-key", ""), headers.get("authorization", "").removeprefix("Bearer "))


def test_missing_key_is_a_clear_error():
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY") as caught:
        complete(AnthropicProvider(base_url="http://127.0.0.1:9"), request(model="claude-x"))
    assert caught.value.retryable is False and caught.value.code == "missing_credentials"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_tool_use_round_trip(fake_llm, stream):
    fake_llm.plan("anthropic", tool_calls(("lookup", {"word": "loom"}), content="Let me check."), text("Done."))
    prov = provider(fake_llm)
    first = complete(prov, request(model="claude-x", tools=(LOOKUP,), tool_choice="required", stream=stream))
    assert first.finish_reason == "tool_use" and first.text == "Let me check."
    (call,) = first.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("toolu_fake_0001_0", "lookup", {"word": "loom"})
    sent = fake_llm.requests[0].json
    assert sent["tools"] == [{"name": "lookup", "description": "Look a word up.", "input_schema": LOOKUP.parameters}]
    assert sent["tool_choice"] == {"type": "any"}

    history = (
        Message(role="system", content="sys"),
        Message(role="user", content="define loom"),
        Message(role="assistant", content="Let me check.", tool_calls=first.tool_calls),
        Message(role="tool", content="a weaving frame", tool_call_id=call.id),
    )
    second = complete(
        prov,
        request(model="claude-x", messages=history, tools=(LOOKUP,), tool_choice={"name": "lookup"}, stream=stream),
    )
    assert second.text == "Done."
    sent = fake_llm.requests[1].json
    assert sent["system"] == "sys"
    assert sent["messages"] == [
        {"role": "user", "content": "define loom"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": call.id, "name": "lookup", "input": {"word": "loom"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "a weaving frame"}]},
    ]
    assert sent["tool_choice"] == {"type": "tool", "name": "lookup"}


def test_parallel_tool_results_share_one_user_turn(fake_llm):
    fake_llm.plan("anthropic", tool_calls(("lookup", {"word": "a"}), ("lookup", {"word": "b"})))
    prov = provider(fake_llm)
    first = complete(prov, request(model="claude-x", tools=(LOOKUP,)))
    history = (
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=first.tool_calls),
        *(Message(role="tool", content=f"r{i}", tool_call_id=c.id) for i, c in enumerate(first.tool_calls)),
    )
    complete(prov, request(model="claude-x", messages=history, tools=(LOOKUP,)))
    last_turn = fake_llm.requests[1].json["messages"][-1]
    assert last_turn["role"] == "user" and [block["content"] for block in last_turn["content"]] == ["r0", "r1"]


def test_speaker_name_is_a_prefix(fake_llm):
    complete(provider(fake_llm), request(model="claude-x", messages=(Message(role="user", content="hi", name="bob"),)))
    assert fake_llm.requests[0].json["messages"] == [{"role": "user", "content": "[bob] hi"}]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 429, 500, 529])
def test_error_status_becomes_provider_error(fake_llm, status):
    fake_llm.plan("anthropic", fail(status, "not today"))
    with pytest.raises(ProviderError) as caught:
        complete(provider(fake_llm), request(model="claude-x"))
    assert caught.value.status == status and caught.value.provider == "anthropic"
    assert "not today" in str(caught.value)
    assert isinstance(caught.value.__cause__, anthropic.APIStatusError)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_dropped_connection_has_no_status(fake_llm, stream):
    fake_llm.plan("anthropic", drop())
    with pytest.raises(ProviderError) as caught:
        complete(provider(fake_llm), request(model="claude-x", stream=stream))
    assert caught.value.status is None


def test_every_anthropic_api_error_class_is_translated():
    classes = sdk_error_classes(anthropic)
    assert len(classes) >= 12
    for cls in classes:
        exc = sdk_error_instance(anthropic, cls)
        with pytest.raises(ProviderError) as caught, anthropic_errors("anthropic"):
            raise exc
        assert caught.value.__cause__ is exc, cls
        expected = 418 if isinstance(exc, (anthropic.APIStatusError, anthropic.APIResponseValidationError)) else None
        assert caught.value.status == expected, cls
