"""Bodies real providers sent (recorded by other projects, tests/providers/recordings) through our adapters.

Each body is served byte for byte from the fake server on 127.0.0.1 and read by the adapter over real HTTP,
through the real SDK where there is one; the test checks the neutral result it must give.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message, Provider, ToolCall, ToolSpec
from pytest_agentloom.errors import MidStreamError, ProviderError
from pytest_agentloom.providers import (
    AnthropicProvider,
    GenericOpenAIProvider,
    GoogleProvider,
    OllamaProvider,
    OpenAIProvider,
)
from pytest_agentloom.providers._google import to_gemini_contents
from tests.providers import recorded as rec
from tests.servers.fake_llm import recorded


def ask(model: str, *, stream: bool = False, messages: tuple[Message, ...] | None = None,
        tools: tuple[ToolSpec, ...] = ()) -> LLMRequest:
    turns = messages or (Message(role="user", content="hi"),)
    return LLMRequest(step_id="ask", model=model, messages=turns, stream=stream, tools=tools)


def call(provider: Provider, request: LLMRequest) -> LLMResponse:
    return asyncio.run(provider.complete(request))


@pytest.fixture
def responses_api(fake_llm) -> OpenAIProvider:
    return OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url, api="responses")


@pytest.fixture
def chat(fake_llm) -> OpenAIProvider:
    return OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)


# --------------------------------------------------------------------------- OpenAI Responses


@pytest.mark.parametrize(("body", "text", "tokens"), [
    (rec.cassette_body("openai_responses_text.cassette.yaml")[1], "The capital of France is Paris.", (32, 8)),
    (rec.raw("openai_responses_text_2.json.txt"), "I can't provide real-time updates", (14, 50)),
    (rec.raw("openai_responses_newer_fields_2026.json.txt"), "OK", (41, 5)),
    (rec.cassette_body("openai_responses_structured_output_tools.cassette.yaml", 1)[1],
     '{"city":"Mexico City","country":"Mexico"}', (92, 16)),
], ids=["gpt-4o-2025-03", "gpt-4o-mini-2025-08", "fields-2026", "json-schema"])
def test_responses_text_bodies(fake_llm, responses_api, body, text, tokens) -> None:
    fake_llm.plan("responses", recorded(body))
    answer = call(responses_api, ask("gpt-4o"))
    assert answer.text.startswith(text)
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == tokens
    assert (answer.finish_reason, answer.refusal, answer.tool_calls) == ("stop", None, ())


def test_responses_function_call_then_answer(fake_llm, responses_api) -> None:
    name = "openai_responses_tools_roundtrip.cassette.yaml"
    fake_llm.plan("responses", recorded(rec.cassette_body(name, 0)[1]), recorded(rec.cassette_body(name, 1)[1]))
    first = call(responses_api, ask("gpt-4o", tools=(ToolSpec(name="get_capital"),)))
    assert first.tool_calls == (ToolCall(id="call_61cRAI5gleGxCN89umufHn2a", name="get_capital",
                                         arguments='{"country":"PotatoLand"}'),)
    assert first.finish_reason == "tool_calls"
    turns = (Message(role="user", content="capital?"), Message(role="assistant", tool_calls=first.tool_calls),
             Message(role="tool", content="Potato City", tool_call_id=first.tool_calls[0].id))
    second = call(responses_api, ask("gpt-4o", messages=turns, tools=(ToolSpec(name="get_capital"),)))
    assert second.text == "The capital of PotatoLand is Potato City."
    sent = fake_llm.requests_for("responses")[1].json["input"]
    recorded_input = rec.cassette_request(name, 1)["input"]
    # the follow-up carries the items the recorded client sent (which also sent an empty assistant message)
    typed = [(item["type"], item["call_id"]) for item in sent if "type" in item]
    assert typed == [(item["type"], item["call_id"]) for item in recorded_input if "type" in item]
    assert sent[1] == {key: recorded_input[2][key] for key in ("type", "call_id", "name", "arguments")}


def test_responses_stream_function_call_then_text(fake_llm, responses_api) -> None:
    name = "openai_responses_tools_roundtrip.stream.cassette.yaml"
    fake_llm.plan("responses", recorded(rec.cassette_body(name, 0)[1]), recorded(rec.cassette_body(name, 1)[1]))
    first = call(responses_api, ask("gpt-4o", stream=True))
    assert first.tool_calls == (ToolCall(id="call_HQHdUC4vy1PBrZTJ85nBHmeQ", name="get_capital",
                                         arguments='{"country":"France"}'),)
    assert (first.usage.input_tokens, first.usage.output_tokens) == (39, 16)
    second = call(responses_api, ask("gpt-4o", stream=True))
    assert (second.text, second.finish_reason) == ("The capital of France is Paris.", "stop")


def test_responses_stream_with_encrypted_reasoning_and_summary(fake_llm, responses_api) -> None:
    fake_llm.plan("responses", recorded(rec.named_events("openai_responses_reasoning_tools.stream.jsonl")))
    answer = call(responses_api, ask("gpt-5", stream=True))
    assert answer.tool_calls[0].name == "calculator"
    assert json.loads(answer.tool_calls[0].arguments) == {"a": 12, "b": 7, "op": "add"}
    assert answer.reasoning_content is not None and answer.reasoning_content.startswith("**Calculating")
    (item,) = answer.thinking_blocks
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAAAB")
    # sent back, unchanged, ahead of the call in the next turn of the loop
    turns = (Message(role="user", content="12+7?"),
             Message(role="assistant", tool_calls=answer.tool_calls, thinking_blocks=answer.thinking_blocks),
             Message(role="tool", content="19", tool_call_id=answer.tool_calls[0].id))
    fake_llm.plan("responses", recorded(rec.named_events("openai_responses_text_after_tools.stream.jsonl")))
    final = call(responses_api, ask("gpt-5", stream=True, messages=turns))
    assert final.text == "The final result is **570**."
    sent = fake_llm.requests_for("responses")[1].json
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert sent["input"][1] == item
    assert [entry.get("type") for entry in sent["input"][1:]] == ["reasoning", "function_call", "function_call_output"]


def test_responses_reasoning_tokens_are_kept_apart(fake_llm, responses_api) -> None:
    fake_llm.plan("responses", recorded(rec.raw("openai_responses_reasoning_encrypted_final.json.txt")))
    answer = call(responses_api, ask("gpt-5-mini"))
    assert (answer.usage.output_tokens, answer.usage.reasoning_tokens) == (163 - 128, 128)
    assert answer.text.endswith("Final result: 570")
    assert answer.thinking_blocks[0]["encrypted_content"].startswith("gAAAAAB")


@pytest.mark.parametrize(("status", "body", "words"), [
    (400, rec.cassette_body("openai_responses_error_400.cassette.yaml")[1], "decimal below minimum value"),
    (400, rec.raw("openai_responses_error_400_unsupported_param.json.txt"), "invalid_request_error"),
    (429, rec.raw("openai_responses_error_429_insufficient_quota.json.txt"), "insufficient_quota"),
], ids=["400", "400-code-null", "429-quota"])
def test_responses_error_bodies_keep_status_and_message(fake_llm, responses_api, status, body, words) -> None:
    fake_llm.plan("responses", recorded(body, status=status))
    with pytest.raises(ProviderError) as caught:
        call(responses_api, ask("gpt-4o"))
    assert caught.value.status == status and words in str(caught.value)


def test_responses_error_inside_a_stream_is_a_mid_stream_error(fake_llm, responses_api) -> None:
    fake_llm.plan("responses", recorded(rec.named_events("openai_responses_error_in_stream.jsonl")))
    with pytest.raises(MidStreamError, match="exceeded your current quota"):
        call(responses_api, ask("gpt-5-nano", stream=True))


# --------------------------------------------------------------------------- OpenAI chat completions


@pytest.mark.parametrize(("body", "stream", "refusal"), [
    (rec.raw("openai_chat_refusal.json.txt"), False, "I'm very sorry, but I can't assist with that."),
    (rec.raw("openai_chat_refusal.stream.sse.txt"), True, "I'm sorry, I can't assist with that request."),
], ids=["whole", "streamed"])
def test_chat_refusal_is_never_an_empty_success(fake_llm, chat, body, stream, refusal) -> None:
    fake_llm.plan("openai", recorded(body))
    answer = call(chat, ask("gpt-4o", stream=stream))
    assert (answer.refusal, answer.finish_reason, answer.text) == (refusal, "refusal", "")


def test_chat_reasoning_tokens_and_usage_details(fake_llm, chat) -> None:
    fake_llm.plan("openai", recorded(rec.cassette_body("openai_chat_usage_reasoning_tokens.cassette.yaml")[1]))
    answer = call(chat, ask("o3-mini"))
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.reasoning_tokens) == (7, 23, 64)
    fake_llm.plan("openai", recorded(rec.raw("openai_chat_text_usage_details.json.txt")),
                  recorded(rec.data_events("openai_chat_text.stream.excerpt.jsonl", done=True)))
    whole = call(chat, ask("gpt-4.1-nano"))
    streamed = call(chat, ask("gpt-4.1-nano", stream=True))
    assert whole.text.startswith("**Holiday Name:** Galaxy Day")
    assert (whole.refusal, streamed.refusal, streamed.usage.input_tokens) == (None, None, 16)


# --------------------------------------------------------------------------- OpenAI-compatible reasoning text


@pytest.mark.parametrize(("body", "stream", "reasoning", "usage"), [
    (rec.cassette_body("compat_deepseek_reasoning_content.cassette.yaml")[1], False, "Okay, the user is asking",
     (12, 374, 415, 0)),
    (rec.raw("compat_deepseek_reasoning_content.stream.excerpt.sse.txt"), True, "Hmm", (6, 14, 198, 0)),
    (rec.cassette_body("compat_openrouter_reasoning.stream.cassette.yaml")[1], True,
     "This is a simple arithmetic question.", (43, 23, 13, 0)),
    (rec.cassette_body("compat_openrouter_reasoning_nonstream.cassette.excerpt.yaml")[1], False,
     "1.  **Deconstruct the User's Prompt:**", (24, 2801, 0, 0)),
    (rec.cassette_body("compat_cerebras_reasoning_field.cassette.yaml")[1], False,
     "User asks simple question: capital of France", (74, 36, 0, 0)),
], ids=["deepseek", "deepseek-stream", "openrouter-stream", "openrouter", "cerebras"])
def test_compatible_servers_reasoning_text_is_captured(fake_llm, body, stream, reasoning, usage) -> None:
    provider = GenericOpenAIProvider(base_url=fake_llm.openai_base_url)
    fake_llm.plan("openai", recorded(body))
    answer = call(provider, ask("reasoner", stream=stream))
    assert answer.reasoning_content is not None and answer.reasoning_content.startswith(reasoning)
    assert answer.text and reasoning not in answer.text
    got = answer.usage
    assert (got.input_tokens, got.output_tokens, got.reasoning_tokens, got.cached_input_tokens) == usage


# --------------------------------------------------------------------------- Anthropic


@pytest.mark.parametrize(("body", "stream", "refusal"), [
    (rec.raw("anthropic_refusal.json.txt"), False, "This request triggered restrictions on violative cyber"),
    (rec.named_events("anthropic_refusal.stream.jsonl"), True, "This request triggered restrictions on violative"),
    (rec.raw("anthropic_refusal_no_details.json.txt"), False, ""),
], ids=["whole", "streamed", "no-details"])
def test_anthropic_refusal(fake_llm, body, stream, refusal) -> None:
    provider = AnthropicProvider(api_key="k", base_url=fake_llm.url)
    fake_llm.plan("anthropic", recorded(body))
    answer = call(provider, ask("claude-sonnet-4", stream=stream))
    assert answer.finish_reason == "refusal" and answer.text == ""
    assert answer.refusal is not None and answer.refusal.startswith(refusal)


def test_anthropic_cache_reads_and_writes_count_as_input(fake_llm) -> None:
    provider = AnthropicProvider(api_key="k", base_url=fake_llm.url)
    name = "anthropic_cache_read_creation.cassette.yaml"
    fake_llm.plan("anthropic", recorded(rec.cassette_body(name, 1)[1]))
    usage = call(provider, ask("claude-sonnet-4")).usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (3 + 1111 + 418, 1111, 418)
    assert usage.output_tokens == 33


def test_anthropic_thinking_signature_stream_and_tool_use(fake_llm) -> None:
    provider = AnthropicProvider(api_key="k", base_url=fake_llm.url)
    fake_llm.plan("anthropic", recorded(rec.cassette_body("anthropic_thinking_signature.stream.cassette.yaml")[1]),
                  recorded(rec.raw("anthropic_thinking_tool_use.json.txt")))
    streamed = call(provider, ask("claude-sonnet-4", stream=True))
    assert streamed.thinking_blocks[0]["signature"].startswith("Eu4CCkYI")
    assert streamed.text.startswith("Here's how to cross the street safely")
    whole = call(provider, ask("claude-sonnet-4"))
    assert whole.tool_calls[0].name == "checkSandboxErrors" and whole.thinking_blocks[0]["type"] == "thinking"


# --------------------------------------------------------------------------- Gemini


def test_gemini_signature_goes_back_with_the_call_unchanged(fake_llm) -> None:
    provider = GoogleProvider(api_key="k", base_url=fake_llm.url)
    name = "gemini_stream_functioncall_thoughtsignature.cassette.yaml"
    fake_llm.plan("gemini", recorded(rec.cassette_body(name, 0)[1]), recorded(rec.cassette_body(name, 1)[1]))
    first = call(provider, ask("gemini-3-pro-preview", stream=True, tools=(ToolSpec(name="get_country"),)))
    (tool_call,) = first.tool_calls
    assert tool_call.name == "get_country" and tool_call.signature and tool_call.signature.startswith("Et8ECtwE")
    assert first.text == ""  # the closing {text: ""} chunk adds nothing
    turns = (Message(role="user", content="What is the capital of the user country? Call the tool"),
             Message(role="assistant", tool_calls=first.tool_calls),
             Message(role="tool", content="Mexico", tool_call_id=tool_call.id, name="get_country"))
    second = call(provider, ask("gemini-3-pro-preview", stream=True, messages=turns))
    assert second.text == "The capital of Mexico is Mexico City."
    model_turn = fake_llm.requests_for("gemini")[1].json["contents"][1]
    recorded_turn = rec.cassette_request(name, 1)["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == tool_call.signature
    # the recording's client re-encoded the same bytes as base64url; the bytes are the ones we send
    ours = tool_call.signature.replace("+", "-").replace("/", "_")
    assert ours == recorded_turn["parts"][0]["thoughtSignature"]


@pytest.mark.parametrize(("body", "stream", "text", "usage"), [
    (rec.raw("gemini_generatecontent_functioncall_thoughtsignature.json.txt"), False, "", (29, 15, 1801)),
    (rec.data_events("gemini_stream_text_signature_on_empty_final_part.jsonl", crlf=True), True,
     'There are **3** "r"s in strawberry.', (9, 23, 302)),
    (rec.cassette_body("gemini_generatecontent_thought_parts.cassette.yaml")[1], False, "Crossing the street",
     (29, 736, 1001)),
    (rec.raw("gemini_stream_thought_parts.excerpt.sse.txt"), True, "Here is a step-by-step guide", (34, 42, 759)),
], ids=["call-whole", "empty-final-part", "thoughts-whole", "thoughts-stream"])
def test_gemini_signatures_and_thoughts(fake_llm, body, stream, text, usage) -> None:
    provider = GoogleProvider(api_key="k", base_url=fake_llm.url)
    fake_llm.plan("gemini", recorded(body))
    answer = call(provider, ask("gemini-3-pro-preview", stream=stream))
    assert answer.text.startswith(text)
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.reasoning_tokens) == usage
    signatures = [call.signature for call in answer.tool_calls] + [b["signature"] for b in answer.thinking_blocks]
    assert len(signatures) == 1 and signatures[0]
    if answer.thinking_blocks:  # a text part's signature goes back on the turn's text
        turn = Message(role="assistant", content=answer.text, thinking_blocks=answer.thinking_blocks)
        assert to_gemini_contents((turn,))[0]["parts"][0]["thoughtSignature"] == signatures[0]


def test_gemini_quota_error_keeps_its_status(fake_llm) -> None:
    provider = GoogleProvider(api_key="k", base_url=fake_llm.url)
    fake_llm.plan("gemini", recorded(rec.raw("gemini_error_429_retryinfo.json.txt"), status=429))
    with pytest.raises(ProviderError) as caught:
        call(provider, ask("gemini-2.5-flash"))
    assert caught.value.status == 429


# --------------------------------------------------------------------------- Ollama


def test_ollama_thinking_stream(fake_llm) -> None:
    # the excerpt's JSON lines as recorded; its author left out the closing record, so we add one in the
    # shape Ollama documents (done: true, with the counts)
    lines = [line for line in rec.json_lines("ollama_api_chat_thinking.stream.excerpt.ndjson") if line.startswith("{")]
    closing = {"model": "gpt-oss", "created_at": "2025-08-19T02:10:02Z",
               "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
               "prompt_eval_count": 70, "eval_count": 120}
    body = "\n".join([*lines, json.dumps(closing)]) + "\n"
    fake_llm.plan("ollama", recorded(body, content_type="application/x-ndjson"))
    answer = call(OllamaProvider(host=fake_llm.url), ask("gpt-oss", stream=True))
    assert answer.reasoning_content is not None and answer.reasoning_content.startswith("The user says")
    assert answer.text and (answer.usage.input_tokens, answer.finish_reason) == (70, "stop")


def test_an_empty_refusal_beside_an_answer_is_no_refusal(fake_llm, chat) -> None:
    body = json.loads(rec.raw("openai_chat_text_usage_details.json.txt"))
    body["choices"][0]["message"]["refusal"] = ""  # as some compatible servers write it
    fake_llm.plan("openai", recorded(json.dumps(body)))
    answer = call(chat, ask("gpt-4.1-nano"))
    assert (answer.refusal, answer.finish_reason) == (None, "stop") and answer.text


def test_anthropic_stream_cache_counts(fake_llm) -> None:
    """No public stream with cache hits was found, so this one is the recorded stream with its cache counts
    changed (ours, not recorded): message_start and message_delta carry them as in the non-streamed body."""
    body = rec.cassette_body("anthropic_thinking_signature.stream.cassette.yaml")[1].replace(
        b'"cache_creation_input_tokens":0,"cache_read_input_tokens":0',
        b'"cache_creation_input_tokens":20,"cache_read_input_tokens":900')
    fake_llm.plan("anthropic", recorded(body))
    usage = call(AnthropicProvider(api_key="k", base_url=fake_llm.url), ask("claude-sonnet-4", stream=True)).usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (43 + 900 + 20, 900, 20)
    assert usage.output_tokens == 277
