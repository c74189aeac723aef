"""The Ollama and Gemini routes, read by those services' own Python clients (dev extras)."""

from __future__ import annotations

import pytest

from tests.servers.fake_llm import fail, text, tool_calls

ollama = pytest.importorskip("ollama")
genai = pytest.importorskip("google.genai")


def test_ollama_client_reads_json_stream_and_tool_calls(fake_llm):
    fake_llm.plan(
        "ollama", text("hi there", input_tokens=4, output_tokens=2), tool_calls(("lookup", {"w": 1})), text("a b c")
    )
    client = ollama.Client(host=fake_llm.url)
    first = client.chat(model="llama3", messages=[{"role": "user", "content": "x"}])
    assert (first.message.content, first.done_reason, first.prompt_eval_count, first.eval_count) == (
        "hi there",
        "stop",
        4,
        2,
    )
    second = client.chat(model="llama3", messages=[{"role": "user", "content": "x"}])
    assert [(c.function.name, dict(c.function.arguments)) for c in second.message.tool_calls] == [("lookup", {"w": 1})]
    parts = list(client.chat(model="llama3", messages=[{"role": "user", "content": "x"}], stream=True))
    assert "".join(p.message.content for p in parts) == "a b c" and parts[-1].done


def test_ollama_client_error(fake_llm):
    fake_llm.plan("ollama", fail(404, "model 'nope' not found"))
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=fake_llm.url).chat(model="nope", messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == 404 and "not found" in caught.value.error


def _gemini(server):
    from google.genai import types

    return genai.Client(api_key="g-key", http_options=types.HttpOptions(base_url=server.url, api_version="v1beta"))


def test_gemini_client_reads_json_stream_and_function_calls(fake_llm):
    fake_llm.plan(
        "gemini",
        text("gem reply", input_tokens=3, output_tokens=2, reasoning_tokens=4),
        tool_calls(("lookup", {"w": 1})),
        text("s t u"),
    )
    client = _gemini(fake_llm)
    first = client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    assert first.text == "gem reply" and first.candidates[0].finish_reason.value == "STOP"
    usage = first.usage_metadata
    assert (usage.prompt_token_count, usage.candidates_token_count, usage.thoughts_token_count) == (3, 2, 4)
    second = client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    assert [(c.name, c.args) for c in second.function_calls] == [("lookup", {"w": 1})]
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hello"))
    assert "".join(c.text or "" for c in chunks) == "s t u"
    assert fake_llm.requests[-1].query == {"alt": ["sse"]}
    assert {r.headers["x-goog-api-key"] for r in fake_llm.requests} == {"g-key"}


def test_gemini_client_error(fake_llm):
    from google.genai import errors

    fake_llm.plan("gemini", fail(400, "bad schema"))
    client = _gemini(fake_llm)  # keep a reference: the client closes its connections when collected
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
