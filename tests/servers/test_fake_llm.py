"""The fake server's bodies are the real APIs' shapes: the SDKs' own types and clients accept them."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.servers.fake_llm import FakeLLMServer, FakeToolCall, drop, fail, text, tool_calls


def _post(server: FakeLLMServer, path: str, body: dict) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=5)


def test_openai_json_matches_sdk_type(fake_llm):
    fake_llm.plan("openai", text("hello there", input_tokens=7, output_tokens=2, reasoning_tokens=3))
    response = _post(
        fake_llm, "/v1/chat/completions", {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
    )
    completion = ChatCompletion.model_validate(response.json())
    assert completion.choices[0].message.content == "hello there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.prompt_tokens == 7
    assert completion.usage.completion_tokens == 5
    assert completion.usage.completion_tokens_details.reasoning_tokens == 3
    assert completion.id == "chatcmpl-fake-0001" and completion.created == 1_700_000_001


def test_openai_sdk_json_tool_calls_and_recorded_request(fake_llm):
    fake_llm.plan("openai", tool_calls(("lookup", {"q": "weather"}), FakeToolCall("now", {}, id="call_x")))
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="sk-test", max_retries=0)
    completion = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    calls = completion.choices[0].message.tool_calls
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_fake_0001_0", "lookup", {"q": "weather"}),
        ("call_x", "now", {}),
    ]
    assert completion.choices[0].finish_reason == "tool_calls"
    (request,) = fake_llm.requests
    assert request.route == "openai" and request.headers["authorization"] == "Bearer sk-test"
    assert request.json["messages"] == [{"role": "user", "content": "hi"}]


def test_openai_sdk_streaming_with_usage(fake_llm):
    fake_llm.plan("openai", text("one two three", input_tokens=4, output_tokens=3))
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "count"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 3


def test_openai_streamed_tool_call_arguments_join(fake_llm):
    fake_llm.plan("openai", tool_calls(("lookup", {"query": "a long query text"})))
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True)
    arguments = "".join(
        call.function.arguments or "" for chunk in stream for call in (chunk.choices[0].delta.tool_calls or [])
    )
    assert json.loads(arguments) == {"query": "a long query text"}


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
    ],
)
def test_openai_errors_have_openai_body(fake_llm, status, error_class):
    fake_llm.plan("openai", fail(status, "nope"))
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="sk-test", max_retries=0)
    with pytest.raises(error_class) as caught:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == status
    assert set(caught.value.body) == {"message", "type", "param", "code"}  # the SDK unwraps {"error": ...}
    assert caught.value.body["message"] == "nope"


def test_anthropic_json_matches_sdk_type(fake_llm):
    fake_llm.plan("anthropic", tool_calls(("lookup", {"q": 1}), content="let me look"))
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    message = AnthropicMessage.model_validate(_post(fake_llm, "/v1/messages", body).json())
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"q": 1}
    assert message.stop_reason == "tool_use"


def test_anthropic_sdk_json_and_stream(fake_llm):
    fake_llm.plan("anthropic", text("hi there", input_tokens=9, output_tokens=2), text("streamed reply here"))
    client = anthropic.Anthropic(base_url=fake_llm.url, api_key="sk-ant", max_retries=0)
    message = client.messages.create(model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "a"}])
    assert message.content[0].text == "hi there" and message.usage.input_tokens == 9
    assert message.stop_reason == "end_turn"
    with client.messages.stream(model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "b"}]) as s:
        assert "".join(s.text_stream) == "streamed reply here"
        final = s.get_final_message()
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == 3
    headers = fake_llm.requests[0].headers  # this SDK version sends the key as a bearer token
    assert headers.get("x-api-key") == "sk-ant" or headers.get("authorization") == "Bearer sk-ant"


def test_anthropic_stream_tool_use(fake_llm):
    fake_llm.plan("anthropic", tool_calls(("lookup", {"city": "Paris", "days": 3})))
    client = anthropic.Anthropic(base_url=fake_llm.url, api_key="sk-ant", max_retries=0)
    with client.messages.stream(model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "b"}]) as s:
        final = s.get_final_message()
    assert final.content[0].type == "tool_use" and final.content[0].input == {"city": "Paris", "days": 3}


@pytest.mark.newest_sdks
@pytest.mark.parametrize(
    ("status", "error_class", "kind"),
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.InternalServerError, "overloaded_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ],
)
def test_anthropic_errors_have_anthropic_body(fake_llm, status, error_class, kind):
    fake_llm.plan("anthropic", fail(status, "slow down"))
    client = anthropic.Anthropic(base_url=fake_llm.url, api_key="sk-ant", max_retries=0)
    with pytest.raises(error_class) as caught:
        client.messages.create(model="claude-x", max_tokens=5, messages=[{"role": "user", "content": "a"}])
    assert caught.value.body == {"type": "error", "error": {"type": kind, "message": "slow down"}}


def test_default_reply_echoes_and_ids_count(fake_llm):
    first = _post(fake_llm, "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "ping"}]})
    second = _post(
        fake_llm, "/v1/messages", {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "pong"}]}
    )
    assert first.json()["choices"][0]["message"]["content"] == "echo: ping"
    assert second.json()["content"][0]["text"] == "echo: pong" and second.json()["id"] == "msg_fake_0002"


def test_ollama_json_and_ndjson(fake_llm):
    fake_llm.plan("ollama", text("a b", input_tokens=3, output_tokens=2), text("c d e"))
    whole = _post(
        fake_llm, "/api/chat", {"model": "llama3", "stream": False, "messages": [{"role": "user", "content": "q"}]}
    )
    assert whole.json()["message"] == {"role": "assistant", "content": "a b"}
    assert whole.json()["done"] is True and whole.json()["prompt_eval_count"] == 3
    streamed = _post(fake_llm, "/api/chat", {"model": "llama3", "messages": [{"role": "user", "content": "q"}]})
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert "".join(line["message"]["content"] for line in lines) == "c d e"
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"


def test_gemini_json_and_sse(fake_llm):
    fake_llm.plan("gemini", text("x y", input_tokens=2, output_tokens=2), text("p q r"))
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    whole = _post(fake_llm, "/v1beta/models/gemini-2.0-flash:generateContent", body).json()
    assert whole["candidates"][0]["content"]["parts"] == [{"text": "x y"}]
    assert whole["candidates"][0]["finishReason"] == "STOP" and whole["usageMetadata"]["promptTokenCount"] == 2
    streamed = httpx.post(fake_llm.url + "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", json=body)
    events = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert "".join(e["candidates"][0]["content"]["parts"][0]["text"] for e in events) == "p q r"
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert fake_llm.requests[-1].query == {"alt": ["sse"]}


def test_dropped_connection_is_a_connection_error(fake_llm):
    fake_llm.plan("openai", drop())
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="sk-test", max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])


def test_context_manager_stops_the_server():
    with FakeLLMServer() as server:
        url = server.url
        assert _post(server, "/v1/chat/completions", {"model": "m", "messages": []}).status_code == 200
    assert not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.post(url + "/v1/chat/completions", json={}, timeout=2)


def test_refuses_other_hosts():
    with pytest.raises(ValueError, match=r"127\.0\.0\.1"):
        FakeLLMServer(host="0.0.0.0")


def _unknown_fields(value, path="$"):
    """Fields the SDK type does not declare (its models accept extras silently, so a misspelt field would pass)."""
    from pydantic import BaseModel

    found = []
    if isinstance(value, BaseModel):
        found += [f"{path}.{name}" for name in (value.model_extra or {})]
        for name in type(value).model_fields:
            found += _unknown_fields(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _unknown_fields(item, f"{path}[{index}]")
    return found


@pytest.mark.newest_sdks
def test_every_field_is_one_the_sdk_types_declare_under_strict_validation(fake_llm):
    fake_llm.plan("openai", text("hi", reasoning_tokens=2), tool_calls(("f", {"a": 1})), text("streamed"),
                  tool_calls(("g", {"b": 2})))
    client = openai.OpenAI(base_url=fake_llm.openai_base_url, api_key="k", max_retries=0,
                           _strict_response_validation=True)
    ask = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
    seen = [client.chat.completions.create(**ask), client.chat.completions.create(**ask)]
    seen += list(client.chat.completions.create(**ask, stream=True, stream_options={"include_usage": True}))
    seen += list(client.chat.completions.create(**ask, stream=True))
    fake_llm.plan("anthropic", text("hi"), tool_calls(("f", {"a": 1}), content="look"), text("streamed"),
                  tool_calls(("g", {"b": 2})))
    claude = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0, _strict_response_validation=True)
    ask = {"model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    seen += [claude.messages.create(**ask), claude.messages.create(**ask)]
    seen += list(claude.messages.create(**ask, stream=True)) + list(claude.messages.create(**ask, stream=True))
    assert len(seen) > 10
    assert [field for item in seen for field in _unknown_fields(item)] == []
