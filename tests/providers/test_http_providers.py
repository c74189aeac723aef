"""OllamaProvider and GoogleProvider (plain httpx) against the fake server."""

from __future__ import annotations

import json

import pytest

from pytest_agentloom._core.types import Message
from pytest_agentloom.errors import ProviderConfigError, ProviderError
from pytest_agentloom.providers import GoogleProvider, OllamaProvider
from tests.providers.helpers import LOOKUP, complete, request
from tests.servers.fake_llm import drop, fail, text, tool_calls

# --------------------------------------------------------------------------- Ollama


@pytest.mark.parametrize("stream", [False, True], ids=["json", "ndjson"])
def test_ollama_text_usage_and_done_reason(fake_llm, stream):
    fake_llm.plan("ollama", text("local words here", input_tokens=6, output_tokens=3))
    prov = OllamaProvider(host=fake_llm.url)
    req = request(model="llama3.2", system="sys", stream=stream, params={"temperature": 0, "max_tokens": 50})
    response = complete(prov, req)
    assert response.text == "local words here" and response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (6, 3)
    assert response.provider == "ollama" and response.model == "llama3.2"
    sent = fake_llm.requests[0].json
    assert sent["stream"] is stream
    assert sent["options"] == {"temperature": 0, "num_predict": 50}
    assert sent["messages"][0] == {"role": "system", "content": "sys"}


def test_ollama_host_from_env_without_scheme(fake_llm, monkeypatch):
    prov = OllamaProvider()
    monkeypatch.setenv("OLLAMA_HOST", fake_llm.url.removeprefix("http://"))
    assert complete(prov, request(model="llama3")).text == "echo: hello"


def test_ollama_thinking_sends_think(fake_llm):
    prov = OllamaProvider(host=fake_llm.url)
    complete(prov, request(model="qwen3", params={"thinking": {"enabled": True, "level": "low"}}))
    complete(prov, request(model="qwen3", params={"thinking": {"enabled": True, "budget_tokens": 9}}))
    assert [r.json["think"] for r in fake_llm.requests] == ["low", True]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "ndjson"])
def test_ollama_tool_calls_round_trip(fake_llm, stream):
    fake_llm.plan("ollama", tool_calls(("lookup", {"word": "loom"})), text("ok"))
    prov = OllamaProvider(host=fake_llm.url)
    first = complete(prov, request(model="llama3", tools=(LOOKUP,), stream=stream))
    (call,) = first.tool_calls
    assert call.name == "lookup" and json.loads(call.arguments) == {"word": "loom"}
    assert fake_llm.requests[0].json["tools"][0]["function"]["name"] == "lookup"
    history = (
        Message(role="user", content="q"),
        Message(role="assistant", content="", tool_calls=first.tool_calls),
        Message(role="tool", content="frame", tool_call_id=call.id),
    )
    complete(prov, request(model="llama3", messages=history, tools=(LOOKUP,)))
    sent = fake_llm.requests[1].json["messages"]
    assert sent[1]["tool_calls"] == [{"function": {"name": "lookup", "arguments": {"word": "loom"}}}]
    assert sent[2] == {"role": "tool", "content": "frame", "tool_name": "lookup"}


@pytest.mark.parametrize(("plan", "status"), [(fail(404, "model not found"), 404), (fail(500), 500), (drop(), None)])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "ndjson"])
def test_ollama_errors(fake_llm, plan, status, stream):
    fake_llm.plan("ollama", plan)
    with pytest.raises(ProviderError) as caught:
        complete(OllamaProvider(host=fake_llm.url), request(model="llama3", stream=stream))
    assert caught.value.status == status and caught.value.provider == "ollama"
    if status == 404:
        assert "model not found" in str(caught.value)


# --------------------------------------------------------------------------- Google


def gemini(server):
    return GoogleProvider(api_key="g-key", base_url=server.url)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_gemini_text_usage_and_finish_reason(fake_llm, stream):
    fake_llm.plan("gemini", text("Gemini says hi", input_tokens=4, output_tokens=3, reasoning_tokens=7))
    req = request(model="gemini-2.5-flash", system="sys", stream=stream, params={"temperature": 0.1, "max_tokens": 64})
    response = complete(gemini(fake_llm), req)
    assert response.text == "Gemini says hi" and response.finish_reason == "STOP"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.reasoning_tokens) == (4, 3, 7)
    assert response.provider == "google" and response.model == "gemini-2.5-flash"
    recorded = fake_llm.requests[0]
    method = "streamGenerateContent" if stream else "generateContent"
    assert recorded.path == f"/v1beta/models/gemini-2.5-flash:{method}"
    assert recorded.headers["x-goog-api-key"] == "g-key" and "key" not in recorded.query
    assert recorded.json["systemInstruction"] == {"parts": [{"text": "sys"}]}
    assert recorded.json["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    assert recorded.json["generationConfig"] == {"temperature": 0.1, "maxOutputTokens": 64}


def test_gemini_key_from_either_env_var(fake_llm, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini-var")
    complete(GoogleProvider(base_url=fake_llm.url), request(model="gemini-x"))
    assert fake_llm.requests[0].headers["x-goog-api-key"] == "from-gemini-var"
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ProviderConfigError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        complete(GoogleProvider(base_url=fake_llm.url), request(model="gemini-x"))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_gemini_function_calls_round_trip(fake_llm, stream):
    fake_llm.plan("gemini", tool_calls(("lookup", {"word": "loom"})), text("ok"))
    prov = gemini(fake_llm)
    first = complete(prov, request(model="gemini-x", tools=(LOOKUP,), tool_choice={"name": "lookup"}, stream=stream))
    (call,) = first.tool_calls
    assert call.name == "lookup" and json.loads(call.arguments) == {"word": "loom"}
    sent = fake_llm.requests[0].json
    assert sent["tools"] == [
        {
            "functionDeclarations": [
                {"name": "lookup", "description": "Look a word up.", "parameters": LOOKUP.parameters}
            ]
        }
    ]
    assert sent["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}}
    history = (
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=first.tool_calls),
        Message(role="tool", content="frame", tool_call_id=call.id),
    )
    complete(prov, request(model="gemini-x", messages=history, tools=(LOOKUP,)))
    assert fake_llm.requests[1].json["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"word": "loom"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"result": "frame"}}}]},
    ]


@pytest.mark.parametrize(("plan", "status"), [(fail(429, "quota"), 429), (fail(400, "bad"), 400), (drop(), None)])
def test_gemini_errors(fake_llm, plan, status):
    fake_llm.plan("gemini", plan)
    with pytest.raises(ProviderError) as caught:
        complete(gemini(fake_llm), request(model="gemini-x"))
    assert caught.value.status == status and caught.value.provider == "google"
    if status == 429:
        assert "RESOURCE_EXHAUSTED: quota" in str(caught.value)


def test_gemini_json_mode_from_response_format(fake_llm):
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    complete(gemini(fake_llm), request(model="gemini-x", params={"response_format": fmt}))
    assert fake_llm.requests[0].json["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": schema,
    }
