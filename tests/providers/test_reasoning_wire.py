"""Reasoning and streaming (docs/providers.md) on the wire: what each adapter sends for ``thinking`` and reads back.

Every provider talks to the fake server over real HTTP on 127.0.0.1, through the real SDK where there is one.
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message, Provider, Thinking, text_listener
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import ProviderError
from pytest_agentloom.providers import (
    AnthropicProvider,
    GenericOpenAIProvider,
    GoogleProvider,
    OllamaProvider,
    OpenAIProvider,
)
from pytest_agentloom.providers._common import MidStreamError
from pytest_agentloom.providers._gateway import Gateway
from tests.servers.fake_llm import cut_stream, drop, fail, text

THOUGHT = "First the consumers, then the producers."


def providers(server) -> dict[str, Provider]:
    return {
        "openai": OpenAIProvider(api_key="k", base_url=server.openai_base_url),
        "anthropic": AnthropicProvider(api_key="k", base_url=server.url),
        "gemini": GoogleProvider(api_key="k", base_url=server.url),
        "ollama": OllamaProvider(host=server.url),
    }


def ask(model: str, thinking: Thinking | None, *, stream: bool = False, params: dict[str, Any] | None = None):
    return LLMRequest(step_id="plan", model=model, messages=(Message(role="user", content="Plan it."),),
                      params=params or {}, stream=stream, thinking=thinking)


def call(provider: Provider, request: LLMRequest) -> tuple[LLMResponse, list[str]]:
    """The response, and the pieces of text the adapter reported as they streamed."""
    seen: list[str] = []

    async def go() -> LLMResponse:
        text_listener.set(seen.append)  # in this task's own context only
        return await provider.complete(request)

    return asyncio.run(go()), seen


# --------------------------------------------------------------------------- what is sent


@pytest.mark.parametrize(
    ("model", "thinking", "effort"),
    [
        pytest.param("o3-mini", Thinking(enabled=True, level="high"), "high", id="o-series"),
        pytest.param("gpt-5", Thinking(enabled=True, level="low", budget_tokens=999), "low", id="gpt-5-budget-ignored"),
        pytest.param("o1-mini", Thinking(enabled=True, level="high"), None, id="o1-mini"),
        pytest.param("gpt-5-chat-latest", Thinking(enabled=True, level="high"), None, id="gpt-5-chat"),
        pytest.param("gpt-4o", Thinking(enabled=True, level="high"), None, id="not-a-reasoning-model"),
        pytest.param("o3", Thinking(enabled=True, budget_tokens=2000), None, id="no-level"),
        pytest.param("o3", Thinking(enabled=False, level="high"), None, id="not-enabled"),
    ],
)
def test_openai_sends_reasoning_effort_as_the_level(fake_llm, model, thinking, effort):
    call(providers(fake_llm)["openai"], ask(model, thinking))
    sent = fake_llm.requests[0].json
    assert sent.get("reasoning_effort") == effort
    assert "thinking" not in sent and "budget_tokens" not in str(sent)


def test_anthropic_sends_the_budget_and_ignores_the_level(fake_llm):
    anthropic = providers(fake_llm)["anthropic"]
    call(anthropic, ask("claude-test-model", Thinking(enabled=True, budget_tokens=4000, level="high")))
    call(anthropic, ask("claude-test-model", Thinking(enabled=True, budget_tokens=4000), params={"max_tokens": 8000}))
    call(anthropic, ask("claude-test-model", Thinking(enabled=False, budget_tokens=4000)))
    first, second, third = (r.json for r in fake_llm.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert first["max_tokens"] == 4000 + 4096 and "level" not in str(first["thinking"])
    assert second["max_tokens"] == 8000
    assert "thinking" not in third and third["max_tokens"] == 4096


def test_google_sends_thinking_config_with_budget_level_and_thoughts(fake_llm):
    gemini = providers(fake_llm)["gemini"]
    call(gemini, ask("gemini-2.5-pro", Thinking(enabled=True, budget_tokens=1024, level="medium")))
    call(gemini, ask("gemini-2.5-pro", Thinking(enabled=True, capture_reasoning=False)))
    call(gemini, ask("gemini-2.5-pro", Thinking(enabled=False, budget_tokens=1024)))
    first, second, third = (r.json for r in fake_llm.requests)
    assert first["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 1024, "thinkingLevel": "medium", "includeThoughts": True,
    }
    assert second["generationConfig"]["thinkingConfig"] == {"includeThoughts": False}
    assert "generationConfig" not in third


def test_ollama_sends_think_as_the_level_or_true(fake_llm):
    ollama = providers(fake_llm)["ollama"]
    call(ollama, ask("qwen3", Thinking(enabled=True, level="low", budget_tokens=50)))
    call(ollama, ask("qwen3", Thinking(enabled=True, budget_tokens=50)))
    call(ollama, ask("qwen3", None))
    first, second, third = (r.json for r in fake_llm.requests)
    assert first["think"] == "low" and "budget" not in str(first)
    assert second["think"] is True
    assert "think" not in third


# --------------------------------------------------------------------------- what is read back


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(
    ("route", "model", "thinking", "tokens"),
    [
        # Anthropic and Ollama count reasoning inside the reply's tokens; Google reports it apart
        pytest.param("anthropic", "claude-test-model", Thinking(enabled=True, budget_tokens=2000), (3 + 7, 0),
                     id="anthropic"),
        pytest.param("gemini", "gemini-2.5-flash", Thinking(enabled=True, level="low"), (3, 7), id="gemini"),
        pytest.param("ollama", "qwen3", Thinking(enabled=True), (3 + 7, 0), id="ollama"),
    ],
)
def test_reasoning_text_comes_back_apart_from_the_answer(fake_llm, stream, route, model, thinking, tokens):
    fake_llm.plan(route, text("Drain the queue.", output_tokens=3, reasoning_tokens=7, reasoning=THOUGHT))
    response, seen = call(providers(fake_llm)[route], ask(model, thinking, stream=stream))
    assert response.text == "Drain the queue."
    assert response.reasoning_content == THOUGHT
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == tokens
    if stream:  # only the answer streams to the listener, never the reasoning
        assert "".join(seen) == "Drain the queue." and len(seen) > 1
    else:
        assert seen == []


def test_openai_counts_reasoning_tokens_apart_and_returns_no_reasoning_text(fake_llm):
    fake_llm.plan("openai", text("Done.", output_tokens=2, reasoning_tokens=30, reasoning=THOUGHT))
    response, _ = call(providers(fake_llm)["openai"], ask("o3", Thinking(enabled=True, level="high")))
    assert response.reasoning_content is None
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (2, 30)


def test_no_reasoning_text_unless_the_request_asks_for_it(fake_llm):
    fake_llm.plan("gemini", text("a", reasoning=THOUGHT))
    fake_llm.plan("anthropic", text("b", reasoning=THOUGHT))
    gemini, _ = call(providers(fake_llm)["gemini"], ask("gemini-2.5-pro", Thinking(enabled=True,
                                                                                  capture_reasoning=False)))
    claude, _ = call(providers(fake_llm)["anthropic"], ask("claude-test-model", None))
    assert gemini.reasoning_content is None and claude.reasoning_content is None


@pytest.mark.parametrize("route", ["openai", "anthropic", "gemini", "ollama"])
def test_every_streaming_adapter_reports_its_text_as_it_arrives(fake_llm, route):
    fake_llm.plan(route, text("one two three four"))
    model = {"openai": "gpt-4o", "anthropic": "claude-x", "gemini": "gemini-2.0-flash", "ollama": "llama3"}[route]
    response, seen = call(providers(fake_llm)[route], ask(model, None, stream=True))
    assert seen == ["one ", "two ", "three ", "four"]
    assert response.text == "one two three four"


# --------------------------------------------------------------------------- through the engine


def test_a_streamed_reasoning_step_end_to_end(fake_llm):
    workflow = parse_workflow(textwrap.dedent("""\
        name: plan
        config: {stream: true}
        steps:
          - id: plan
            type: llm_call
            model: claude-test-model
            prompt: "Plan the migration."
            thinking: {enabled: true, budget_tokens: 4000}
            output: plan
        """))
    fake_llm.plan("anthropic", text("Move consumers first.", input_tokens=12, output_tokens=4, reasoning_tokens=20,
                                    reasoning=THOUGHT))
    gateway = Gateway(providers={"anthropic": providers(fake_llm)["anthropic"]})
    result = run_workflow(workflow, provider=gateway, clock=VirtualClock())
    step = result.steps["plan"]
    assert result.ok, step.error
    assert step.output == "Move consumers first." and step.reasoning_content == THOUGHT
    assert (step.input_tokens, step.output_tokens) == (12, 24)
    assert step.time_to_first_token == 0.0  # the virtual clock doesn't move during real I/O
    sent = fake_llm.requests[0].json
    assert sent["stream"] is True and sent["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert sent["max_tokens"] == 8096
    assert THOUGHT not in str(result.state)


# --------------------------------------------------------------------------- streams that break


@pytest.mark.parametrize("route", ["openai", "anthropic", "gemini", "ollama"])
def test_a_stream_cut_after_text_arrived_is_a_mid_stream_error(fake_llm, route):
    fake_llm.plan(route, cut_stream("one two three four five six seven", after=4))
    model = {"openai": "gpt-4o", "anthropic": "claude-x", "gemini": "gemini-2.0-flash", "ollama": "llama3"}[route]
    seen: list[str] = []

    async def go() -> None:
        text_listener.set(seen.append)
        await providers(fake_llm)[route].complete(ask(model, None, stream=True))

    with pytest.raises(MidStreamError) as caught:
        asyncio.run(go())
    assert caught.value.status is None  # no status: the engine's retry table retries it
    assert seen and "".join(seen) in "one two three four five six seven"


def openai_pair(server) -> Gateway:
    return Gateway(
        providers={"openai": OpenAIProvider(api_key="k", base_url=server.openai_base_url),
                   "generic_openai": GenericOpenAIProvider(base_url=server.openai_base_url)},
        routes=[("gpt-*", ["openai", "generic_openai"])], clock=VirtualClock(), failure_threshold=1,
    )


def test_a_streamed_call_falls_back_before_its_first_chunk_only(fake_llm):
    gateway = openai_pair(fake_llm)
    fake_llm.plan("openai", drop(), text("from the backup"))
    response, seen = call(gateway, ask("gpt-4o", None, stream=True))
    assert response.text == "from the backup" and response.provider == "generic_openai"
    assert "".join(seen) == "from the backup"

    fake_llm.reset()
    gateway = openai_pair(fake_llm)
    fake_llm.plan("openai", cut_stream("half of a reply that never ends", after=3), text("never sent"))
    with pytest.raises(MidStreamError):
        call(gateway, ask("gpt-4o", None, stream=True))
    assert len(fake_llm.requests) == 1 and fake_llm.pending("openai") == 1  # no fallback after the first chunk
    assert gateway.breakers["openai"].failures == 1


def test_a_429_on_a_stream_does_not_count_against_the_breaker(fake_llm):
    gateway = openai_pair(fake_llm)
    fake_llm.plan("openai", *[fail(429)] * 3)
    for _ in range(3):
        with pytest.raises(ProviderError) as caught:
            call(gateway, ask("gpt-4o", None, stream=True))
        assert caught.value.status == 429
    assert gateway.breakers["openai"].state == "closed" and gateway.breakers["openai"].failures == 0
    assert len(fake_llm.requests) == 3  # no fallback on a 429 either: the step's retry decides


def test_the_engine_retries_a_broken_stream_and_times_the_attempt_that_answered(fake_llm):
    workflow = parse_workflow(textwrap.dedent("""\
        name: retry
        config: {model: gpt-4o, provider: openai, stream: true}
        steps:
          - {id: write, type: llm_call, prompt: "Write.", retry: {max_retries: 1, backoff_seconds: 3}}
        """))
    fake_llm.plan("openai", cut_stream("lost words here", after=2), text("whole reply"))
    result = run_workflow(workflow, provider=Gateway(providers={"openai": providers(fake_llm)["openai"]}),
                          clock=VirtualClock())
    step = result.steps["write"]
    assert result.ok, step.error
    assert (step.output, step.attempts, step.time_to_first_token) == ("whole reply", 2, 0.0)
    [retry] = result.trace.events("retry")
    assert retry.data["status"] is None and retry.data["delay"] == 3



# --------------------------------------------------------------------------- thinking with tools (Anthropic)


TOOL_FLOW = """\
name: tools
config: {model: claude-test-model}
steps:
  - id: ask
    type: llm_call
    prompt: "What is the word?"
    thinking: {enabled: true, budget_tokens: 2000}
    tools: [{name: lookup, description: "Look a word up.", parameters: {type: object, properties: {}}}]
    output: answer
"""


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream-config"])
def test_a_claude_tool_loop_sends_its_thinking_blocks_back(fake_llm, stream):
    from tests.servers.fake_llm import FakeToolCall, Planned

    config = f"{{model: claude-test-model, stream: {str(stream).lower()}}}"
    flow = TOOL_FLOW.replace("{model: claude-test-model}", config)
    fake_llm.plan("anthropic", Planned(tool_calls=(FakeToolCall("lookup"),), reasoning="I should look it up."),
                  text("The word is 42.", reasoning="The tool said 42."))
    gateway = Gateway(providers={"anthropic": providers(fake_llm)["anthropic"]})
    result = run_workflow(parse_workflow(flow), provider=gateway, tools={"lookup": lambda: "42"},
                          clock=VirtualClock())
    step = result.steps["ask"]
    assert result.ok, step.error
    assert step.output == "The word is 42." and step.reasoning_content == "The tool said 42."
    first, second = (request.json for request in fake_llm.requests)
    assert first.get("stream", False) is False  # a step with tools doesn't stream
    turn = second["messages"][1]
    assert turn["role"] == "assistant"
    assert turn["content"][0] == {"type": "thinking", "thinking": "I should look it up.", "signature": "sig_fake_0001"}
    assert turn["content"][-1]["type"] == "tool_use"


def test_the_fake_refuses_a_tool_turn_without_its_thinking_like_the_api(fake_llm):
    from pytest_agentloom._core.types import ToolCall

    turns = (Message(role="user", content="q"),
             Message(role="assistant", tool_calls=(ToolCall(id="toolu_1", name="lookup"),)),
             Message(role="tool", content="42", tool_call_id="toolu_1"))
    request = LLMRequest(step_id="ask", model="claude-x", messages=turns,
                         thinking=Thinking(enabled=True, budget_tokens=2000))
    with pytest.raises(ProviderError) as caught:
        call(providers(fake_llm)["anthropic"], request)
    assert caught.value.status == 400 and "Expected `thinking` or `redacted_thinking`" in str(caught.value)
