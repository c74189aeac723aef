"""OpenAI's Responses API on the wire: what the adapter sends, what it reads, and workflows that run over it.

Every call goes through the official SDK (``client.responses``) to the fake server on 127.0.0.1, which
answers in the shapes of the real recordings and refuses the request shapes the real API refuses.
"""

from __future__ import annotations

import asyncio
import textwrap

import httpx
import openai
import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom._core.types import Attachment, LLMRequest, Message, Thinking
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import MidStreamError, ProviderError, StepError, WorkflowError
from pytest_agentloom.providers import (
    AnthropicProvider,
    GenericOpenAIProvider,
    GoogleProvider,
    OpenAIProvider,
    default_gateway,
)
from pytest_agentloom.tools._registry import tool
from tests.providers.helpers import LOOKUP
from tests.servers.fake_llm import cut_stream, fail, refusal, text, tool_calls


def provider(server, **options) -> OpenAIProvider:
    return OpenAIProvider(api_key="k", base_url=server.openai_base_url, **{"api": "responses", **options})


def call(target, request: LLMRequest):
    return asyncio.run(target.complete(request))


def ask(model: str = "gpt-4o", *, stream: bool = False, **fields) -> LLMRequest:
    fields.setdefault("messages", (Message(role="system", content="Be brief."), Message(role="user", content="Hi")))
    return LLMRequest(step_id="ask", model=model, stream=stream, **fields)


# --------------------------------------------------------------------------- which API


def test_auto_speaks_chat_completions_except_for_responses_only_models(fake_llm) -> None:
    auto = OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)
    assert (auto.api_for("gpt-4o"), auto.api_for("o3"), auto.api_for("gpt-5")) == ("chat_completions",) * 3
    assert auto.api_for("o3-pro") == auto.api_for("gpt-5.1-codex-max") == auto.api_for("o1-pro-2025-03-19") == (
        "responses")
    generic = GenericOpenAIProvider(base_url=fake_llm.openai_base_url)
    assert generic.api_for("o3-pro") == "chat_completions"  # a compatible server's names mean nothing to us
    fake_llm.plan("responses", text("deep answer"))
    assert call(auto, ask("o3-pro")).text == "deep answer"
    assert [r.route for r in fake_llm.requests] == ["responses"]


@pytest.mark.parametrize("name", ["openai", "generic_openai"])
def test_config_chooses_the_api(fake_llm, monkeypatch, name) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("AGENTLOOM_GENERIC_OPENAI_BASE_URL", fake_llm.openai_base_url)
    workflow = parse_workflow(textwrap.dedent(f"""
        name: api
        config:
          model: gpt-4o
          provider: {name}
          providers:
            {name}: {{api: responses}}
        steps:
          - {{id: a, type: llm_call, prompt: "Hi"}}
    """))
    fake_llm.plan("responses", text("one"))
    result = run_workflow(workflow, provider=default_gateway(workflow.config), clock=VirtualClock())
    assert result.ok, result.steps
    assert [r.route for r in fake_llm.requests] == ["responses"] and result.steps["a"].provider == name


def test_api_is_refused_on_providers_without_a_choice() -> None:
    with pytest.raises(WorkflowError, match="'api' is a setting of openai and generic_openai only"):
        parse_workflow("name: x\nconfig:\n  providers:\n    anthropic: {api: responses}\nsteps: []\n")


# --------------------------------------------------------------------------- what is sent


def test_body_instructions_items_tools_and_format(fake_llm) -> None:
    fake_llm.plan("responses", text("{}"))
    schema = {"type": "json_schema", "json_schema": {"name": "out", "schema": {"type": "object"}, "strict": True}}
    call(provider(fake_llm), ask(tools=(LOOKUP,), tool_choice={"name": "lookup"},
                                 params={"temperature": 0.2, "max_tokens": 50, "response_format": schema}))
    body = fake_llm.requests[0].json
    assert body["instructions"] == "Be brief." and body["input"] == [{"role": "user", "content": "Hi"}]
    assert body["store"] is False and (body["temperature"], body["max_output_tokens"]) == (0.2, 50)
    assert body["tools"] == [{"type": "function", "name": "lookup", "description": LOOKUP.description,
                              "parameters": LOOKUP.parameters, "strict": False}]
    assert body["tool_choice"] == {"type": "function", "name": "lookup"}
    assert body["text"] == {"format": {"type": "json_schema", "name": "out", "schema": {"type": "object"},
                                       "strict": True}}
    assert "reasoning" not in body and "include" not in body


def test_reasoning_model_gets_effort_summary_and_encrypted_items(fake_llm) -> None:
    fake_llm.plan("responses", text("ok", reasoning="Weigh both.", reasoning_tokens=7))
    answer = call(provider(fake_llm), ask("o4-mini", thinking=Thinking(enabled=True, level="low"),
                                          params={"temperature": 0.5}))
    body = fake_llm.requests[0].json
    assert body["reasoning"] == {"effort": "low", "summary": "auto"} and "temperature" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert (answer.reasoning_content, answer.usage.reasoning_tokens, answer.usage.output_tokens) == (
        "Weigh both.", 7, 1)


def test_parameters_the_api_lacks_fail_before_sending(fake_llm) -> None:
    with pytest.raises(StepError, match="Responses API, which has no stop parameter") as caught:
        call(provider(fake_llm), ask(params={"stop": ["\n"]}))
    assert caught.value.code == "unknown_parameter" and fake_llm.requests == []


def test_attachments_as_input_image_and_input_file(fake_llm) -> None:
    fake_llm.plan("responses", text("seen"))
    image = Attachment(kind="image", media_type="image/png", data=b"\x89PNG", size=4)
    pdf = Attachment(kind="pdf", media_type="application/pdf", url="https://example.org/a.pdf")
    turn = Message(role="user", content="Look", attachments=(image, pdf))
    call(provider(fake_llm), ask(messages=(turn,)))
    (sent,) = fake_llm.requests[0].json["input"]
    assert [part["type"] for part in sent["content"]] == ["input_text", "input_image", "input_file"]
    assert sent["content"][1]["image_url"].startswith("data:image/png;base64,")
    assert sent["content"][2] == {"type": "input_file", "file_url": "https://example.org/a.pdf"}


# --------------------------------------------------------------------------- what is read


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_fake_server_passes_the_sdks_strict_validation(fake_llm, stream) -> None:
    """Every shape the fake sends is one the SDK's own types accept, field for field."""
    client = openai.OpenAI(api_key="k", base_url=fake_llm.openai_base_url, _strict_response_validation=True)
    fake_llm.plan("responses", text("Hello there", reasoning="Think."), tool_calls(("lookup", {"word": "x"})),
                  refusal("No."))
    kwargs = {"model": "o3", "input": "Hi", "reasoning": {"effort": "low", "summary": "auto"}, "store": False,
              "include": ["reasoning.encrypted_content"]}
    for _ in range(3):
        if stream:
            events = list(client.responses.create(**kwargs, stream=True))
            assert events[-1].type == "response.completed"
            assert [e.sequence_number for e in events] == list(range(len(events)))
        else:
            assert client.responses.create(**kwargs).status == "completed"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_tool_calls_and_refusals(fake_llm, stream) -> None:
    fake_llm.plan("responses", tool_calls(("lookup", {"word": "x"}), ("lookup", {"word": "y"})), refusal("I can't."))
    first = call(provider(fake_llm), ask(stream=stream, tools=(LOOKUP,)))
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("lookup", '{"word": "x"}'),
                                                                  ("lookup", '{"word": "y"}')]
    assert first.finish_reason == "tool_calls"
    second = call(provider(fake_llm), ask(stream=stream))
    assert (second.refusal, second.finish_reason, second.text) == ("I can't.", "refusal", "")


def test_a_cut_stream_is_a_mid_stream_error_and_statuses_keep_the_retry_table(fake_llm) -> None:
    fake_llm.plan("responses", cut_stream("one two three four", after=4))
    with pytest.raises(MidStreamError):
        call(provider(fake_llm), ask(stream=True))
    fake_llm.plan("responses", fail(429, "slow down"))
    with pytest.raises(ProviderError) as caught:
        call(provider(fake_llm), ask())
    assert caught.value.status == 429 and "rate_limit_exceeded: slow down" in str(caught.value)


# --------------------------------------------------------------------------- workflows over Responses

LOOP = textwrap.dedent("""
    name: loop
    config:
      model: o4-mini
      providers: {{openai: {{api: responses}}}}
    steps:
      - id: solve
        type: llm_call
        prompt: "Add 12 and 7."
        stream: {stream}
        thinking: {{enabled: true, level: high}}
        tools:
          - name: add
            description: Add two numbers.
            parameters: {{type: object, properties: {{a: {{type: integer}}, b: {{type: integer}}}}}}
        output: answer
""")


@pytest.mark.parametrize("stream", ["false", "true"])
def test_tool_loop_sends_encrypted_reasoning_back(fake_llm, monkeypatch, stream) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    workflow = parse_workflow(LOOP.format(stream=stream))
    fake_llm.plan("responses", tool_calls(("add", {"a": 12, "b": 7})), text("19", reasoning="Done.",
                                                                            reasoning_tokens=3))

    @tool(name="add")
    def add(a: int, b: int) -> int:
        return a + b

    result = run_workflow(workflow, provider=default_gateway(workflow.config), tools=[add], clock=VirtualClock())
    assert result.ok, result.steps
    assert result.state["answer"] == "19" and result.steps["solve"].reasoning_content == "Done."
    second = fake_llm.requests[1].json["input"]
    assert [item.get("type", item.get("role")) for item in second] == [
        "user", "reasoning", "function_call", "function_call_output"]
    assert second[1]["encrypted_content"] == "gAAAAA_fake_0001"  # as the first answer gave it


REFUSING = textwrap.dedent("""
    name: refusing
    config:
      model: {model}
    steps:
      - id: ask
        type: llm_call
        prompt: "Do the bad thing."
        stream: {stream}
        {extra}
        output: reply
""")


@pytest.mark.parametrize("route, model", [("responses", "o3-pro"), ("openai", "gpt-4o"),
                                          ("anthropic", "claude-test-model")])
@pytest.mark.parametrize("stream", ["false", "true"])
def test_a_refusal_fails_the_step_as_refused(fake_llm, monkeypatch, route, model, stream) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.plan(route, refusal("I can't help with that."))
    workflow = parse_workflow(REFUSING.format(model=model, stream=stream, extra=""))
    result = run_workflow(workflow, provider=default_gateway(), clock=VirtualClock())
    step = result.steps["ask"]
    assert (result.status, step.status, step.error_code, step.finish_reason) == (
        "failed", "failed", "refused", "refusal")
    assert "I can't help with that." in (step.error or "") and step.attempts == 1
    assert "reply" not in result.state and step.output_tokens > 0  # billed, and nothing written
    (event,) = result.trace.events("provider_call")
    assert event.data["refusal"] == "I can't help with that." and event.data["finish_reason"] == "refusal"
    assert len(fake_llm.requests) == 1  # never retried


def test_on_refusal_output_keeps_the_text_and_structured_output_is_not_reasked(fake_llm, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.plan("anthropic", refusal("No."), refusal("Still no."))
    kept = parse_workflow(REFUSING.format(model="claude-x", stream="false", extra="on_refusal: output"))
    result = run_workflow(kept, provider=AnthropicProvider(api_key="k", base_url=fake_llm.url), clock=VirtualClock())
    assert result.ok and result.state["reply"] == "No." and result.steps["ask"].finish_reason == "refusal"
    schema = "response_schema: {schema: {type: object, properties: {x: {type: string}}}}"
    structured = parse_workflow(REFUSING.format(model="claude-x", stream="false", extra=schema))
    result = run_workflow(structured, provider=AnthropicProvider(api_key="k", base_url=fake_llm.url),
                          clock=VirtualClock())
    assert result.steps["ask"].error_code == "refused" and len(fake_llm.requests) == 2  # one call each, no re-ask


# --------------------------------------------------------------------------- Gemini 3 signatures in a loop


def test_gemini_3_tool_loop_sends_the_signature_back(fake_llm, monkeypatch) -> None:
    """The fake refuses, as Gemini 3 does, a model turn whose function call lost its thoughtSignature."""
    workflow = parse_workflow(LOOP.format(stream="false").replace("o4-mini", "gemini-3-pro-preview")
                              .replace("providers: {openai: {api: responses}}", "provider: google"))
    fake_llm.plan("gemini", tool_calls(("add", {"a": 12, "b": 7})), text("19"))

    @tool(name="add")
    def add(a: int, b: int) -> int:
        return a + b

    google = GoogleProvider(api_key="k", base_url=fake_llm.url)
    result = run_workflow(workflow, provider=google, tools=[add], clock=VirtualClock())
    assert result.ok, result.steps
    model_turn = fake_llm.requests[1].json["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == "c2lnX2Zha2Vf0001"  # as the first answer gave it
    unsigned = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "add", "args": {}}}]}]}
    answer = httpx.post(f"{fake_llm.url}/v1beta/models/gemini-3-pro-preview:generateContent", json=unsigned)
    assert answer.status_code == 400 and "missing a thought_signature" in answer.text


def test_a_conversation_becomes_input_items_in_order() -> None:
    from pytest_agentloom.providers._openai_responses import to_response_input

    turns = (Message(role="system", content="You are terse."), Message(role="user", content="Hi", name="ana"),
             Message(role="assistant", content="Hello."), Message(role="system", content="Now in French."),
             Message(role="user", content="Again"))
    instructions, items = to_response_input(turns)
    assert instructions == "You are terse."
    assert items == [{"role": "user", "content": "[ana] Hi"}, {"role": "assistant", "content": "Hello."},
                     {"role": "system", "content": "Now in French."}, {"role": "user", "content": "Again"}]
