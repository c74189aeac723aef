"""Issue 30's call shapes over real SDKs and real HTTP on 127.0.0.1 (the fake server), and one real recording each.

Each test runs a workflow (or one request) through the provider that has the shape and checks both the
body the server received and the result the run gives.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers import default_gateway
from pytest_agentloom.tools import tool
from tests.providers import recorded as rec
from tests.servers.fake_llm import recorded, text, tool_calls


@tool
def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


CITY = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"], "additionalProperties": False}


def workflow(model: str, *, provider: str | None = None, api: str | None = None, extra: str = "") -> Any:
    config: dict[str, Any] = {"model": model}
    if provider:
        config["provider"] = provider
    if api:
        config["providers"] = {"openai": {"api": api}}
    body = textwrap.dedent(f"""\
        name: shapes
        config: {json.dumps(config)}
        steps:
          - id: ask
            type: llm_call
            prompt: What is the largest city in the user country?
            tools: [{{name: get_user_country}}]
            response_schema:
              type: json_schema
              name: CityLocation
              description: A city and its country.
              schema: {json.dumps(CITY)}
            output: city
        """)
    return parse_workflow(body + "".join(f"    {line}\n" for line in textwrap.dedent(extra).splitlines()))


@pytest.fixture
def gateway(fake_llm, monkeypatch):
    for name, value in (("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", fake_llm.openai_base_url),
                        ("ANTHROPIC_API_KEY", "sk-ant-test"), ("ANTHROPIC_BASE_URL", fake_llm.url),
                        ("GOOGLE_API_KEY", "g-test"), ("GOOGLE_GEMINI_BASE_URL", fake_llm.url),
                        ("OLLAMA_HOST", fake_llm.url)):
        monkeypatch.setenv(name, value)
    return default_gateway


def run(flow: Any, gateway: Any) -> Any:
    return run_workflow(flow, provider=gateway(flow.config), tools=[get_user_country], clock=VirtualClock())


# --------------------------------------------------------------------------- tools + response_schema


def test_native_output_over_the_responses_api_against_a_real_recording(fake_llm, gateway) -> None:
    name = "openai_responses_structured_output_tools.cassette.yaml"
    fake_llm.plan("responses", recorded(rec.cassette_body(name, 0)[1]), recorded(rec.cassette_body(name, 1)[1]))
    result = run(workflow("gpt-4o", api="responses"), gateway)
    assert result.ok, result.steps["ask"].error
    assert result.state["city"] == {"city": "Mexico City", "country": "Mexico"}
    first, second = (request.json for request in fake_llm.requests_for("responses"))
    real_first, real_second = rec.cassette_request(name, 0), rec.cassette_request(name, 1)
    for ours, theirs in ((first, real_first), (second, real_second)):  # the shape the real client sent
        assert ours["text"]["format"] == theirs["text"]["format"]
        assert [tool["name"] for tool in ours["tools"]] == [tool["name"] for tool in theirs["tools"]]
    assert [item.get("type") for item in second["input"]] == [item.get("type") for item in real_second["input"]]
    assert [event.data.get("valid") for event in result.trace.events("provider_call")] == [None, True]


@pytest.mark.parametrize("route", ["openai", "ollama", "gemini"])
def test_native_output_beside_the_tools(fake_llm, gateway, route) -> None:
    model, provider = {"openai": ("gpt-4o", None), "ollama": ("llama3.2", "ollama"),
                       "gemini": ("gemini-3-flash-preview", "google")}[route]
    fake_llm.plan(route, tool_calls(("get_user_country", {})), text('{"city": "Mexico City", "country": "Mexico"}'))
    result = run(workflow(model, provider=provider), gateway)
    assert result.ok, result.steps["ask"].error
    assert result.state["city"] == {"city": "Mexico City", "country": "Mexico"}
    for body in (request.json for request in fake_llm.requests_for(route)):
        assert body["tools"]
        if route == "openai":
            assert body["response_format"] == {"type": "json_schema", "json_schema": {
                "name": "CityLocation", "description": "A city and its country.", "schema": CITY, "strict": True}}
        elif route == "ollama":
            assert body["format"] == CITY
        else:
            config = body["generationConfig"]
            assert (config["responseMimeType"], config["responseSchema"]) == ("application/json", CITY)


def test_anthropic_gets_the_schema_as_output_config_format_beside_the_tools(fake_llm, gateway) -> None:
    fake_llm.plan("anthropic", tool_calls(("get_user_country", {})),
                  text('{"city": "Mexico City", "country": "Mexico"}'))
    result = run(workflow("claude-sonnet-4-5", provider="anthropic"), gateway)
    assert result.ok, result.steps["ask"].error
    assert result.state["city"] == {"city": "Mexico City", "country": "Mexico"}
    first, second = (request.json for request in fake_llm.requests_for("anthropic"))
    for body in (first, second):
        assert body["output_config"] == {"format": {"type": "json_schema", "schema": CITY}} and body["tools"]
        assert "system" not in body
    assert first["messages"][-1]["role"] == "user"
    assert second["messages"][-1]["content"][0]["type"] == "tool_result"


# --------------------------------------------------------------------------- replay with no key and no base URL


@pytest.mark.parametrize("name", ["openai", "anthropic", "google", "generic_openai"])
def test_every_provider_replays_from_a_cassette_with_no_key_and_no_base_url(tmp_path, fake_llm, name) -> None:
    from pytest_agentloom.providers import create_provider
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
    from tests.replay.test_cassette import request as ask
    from tests.replay.test_cassette import run_calls

    route, model, url = {"openai": ("openai", "gpt-4o-mini", fake_llm.openai_base_url),
                         "anthropic": ("anthropic", "claude-haiku-4-5", fake_llm.url),
                         "google": ("gemini", "gemini-2.5-flash", fake_llm.url),
                         "generic_openai": ("openai", "local-model", fake_llm.openai_base_url)}[name]
    fake_llm.plan(route, text("recorded answer"))
    path = tmp_path / "c.yaml"
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
        (live,) = run_calls(session, create_provider(name, api_key="sk-live-key", base_url=url), [ask(model=model)])
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as session:  # no key, no URL, no env
        (replayed,) = run_calls(session, create_provider(name), [ask(model=model)])
        session.check_unused()
    assert not isinstance(replayed, Exception), replayed
    assert live.text == replayed.text == "recorded answer"
    assert len(fake_llm.requests) == 1  # the replay sent nothing


def test_a_live_call_without_a_base_url_still_says_which_variable_to_set() -> None:
    import asyncio

    from pytest_agentloom.errors import ProviderConfigError
    from pytest_agentloom.providers import GenericOpenAIProvider
    from tests.replay.test_cassette import request as ask

    with pytest.raises(ProviderConfigError, match="AGENTLOOM_GENERIC_OPENAI_BASE_URL"):
        asyncio.run(GenericOpenAIProvider().complete(ask(model="local-model")))


# --------------------------------------------------------------------------- Responses stream error events


def _stream_flow() -> Any:
    return parse_workflow(textwrap.dedent("""\
        name: streamed
        config: {model: gpt-5-nano, stream: true, providers: {openai: {api: responses}}, retry: {max_retries: 0}}
        steps:
          - {id: ask, type: llm_call, prompt: hi}
        """))


def test_a_flat_error_event_keeps_its_code_and_message_in_the_steps_error(fake_llm, gateway) -> None:
    created = rec.json_lines("openai_responses_error_in_stream.jsonl")[0]
    flat = {"type": "error", "sequence_number": 2, "code": "rate_limit_exceeded", "param": None,
            "message": "Rate limit reached for gpt-5-nano on tokens per min."}
    body = f"event: response.created\ndata: {created}\n\nevent: error\ndata: {json.dumps(flat)}\n\n"
    fake_llm.plan("responses", recorded(body))
    flow = _stream_flow()
    step = run_workflow(flow, provider=gateway(flow.config), clock=VirtualClock()).steps["ask"]
    assert step.status == "failed"
    assert "rate_limit_exceeded: Rate limit reached for gpt-5-nano" in step.error


def test_a_nested_error_event_from_a_real_stream_keeps_its_code_and_message(fake_llm, gateway) -> None:
    fake_llm.plan("responses", recorded(rec.named_events("openai_responses_error_in_stream.jsonl")))
    flow = _stream_flow()
    step = run_workflow(flow, provider=gateway(flow.config), clock=VirtualClock()).steps["ask"]
    assert step.status == "failed"
    assert "insufficient_quota: You exceeded your current quota" in step.error


# --------------------------------------------------------------------------- one request, each provider


def _providers(fake_llm) -> dict[str, Any]:
    from pytest_agentloom.providers import (
        AnthropicProvider,
        GenericOpenAIProvider,
        GoogleProvider,
        OllamaProvider,
        OpenAIProvider,
    )

    return {"openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url),
            "responses": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url, api="responses"),
            "generic_openai": GenericOpenAIProvider(base_url=fake_llm.openai_base_url),
            "anthropic": AnthropicProvider(api_key="k", base_url=fake_llm.url),
            "gemini": GoogleProvider(api_key="k", base_url=fake_llm.url),
            "ollama": OllamaProvider(host=fake_llm.url)}


ROUTE = {"openai": "openai", "responses": "responses", "generic_openai": "openai", "anthropic": "anthropic",
         "gemini": "gemini", "ollama": "ollama"}
MODEL = {"openai": "gpt-4o", "responses": "gpt-4o", "generic_openai": "local", "anthropic": "claude-sonnet-4-5",
         "gemini": "gemini-2.5-flash", "ollama": "llama3.2"}


def _ask(name: str, *, stream: bool = False, **fields: Any) -> Any:
    from pytest_agentloom._core.types import LLMRequest, Message

    return LLMRequest(step_id="ask", model=MODEL[name], messages=(Message(role="user", content="hi"),),
                      stream=stream, **fields)


def _send(fake_llm, name: str, request: Any) -> tuple[Any, dict[str, Any]]:
    import asyncio

    answer = asyncio.run(_providers(fake_llm)[name].complete(request))
    return answer, fake_llm.requests_for(ROUTE[name])[-1].json


STOP_FIELD = {"openai": ("stop",), "generic_openai": ("stop",), "anthropic": ("stop_sequences",),
              "gemini": ("generationConfig", "stopSequences"), "ollama": ("options", "stop")}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("name", sorted(STOP_FIELD))
def test_stop_goes_out_where_the_provider_has_it(fake_llm, name, stream) -> None:
    _, body = _send(fake_llm, name, _ask(name, stream=stream, params={"stop": ["END", "###"]}))
    for key in STOP_FIELD[name]:
        body = body[key]
    assert body == ["END", "###"]


def test_stop_over_the_responses_api_is_a_documented_error_before_sending(fake_llm) -> None:
    from pytest_agentloom.errors import StepError

    with pytest.raises(StepError, match="Responses API, which has no stop parameter") as caught:
        _send(fake_llm, "responses", _ask("responses", params={"stop": "END"}))
    assert caught.value.code == "unknown_parameter" and fake_llm.requests == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("name", ["anthropic", "ollama"])
def test_prefill_is_the_last_assistant_turn_and_the_text_is_as_the_provider_returns_it(fake_llm, name,
                                                                                        stream) -> None:
    fake_llm.plan(ROUTE[name], text(' "ok": true}'))
    answer, body = _send(fake_llm, name, _ask(name, stream=stream, prefill='{'))
    assert body["messages"][-1] == {"role": "assistant", "content": "{"}
    assert answer.text == ' "ok": true}'  # the continuation only: the prefill is not put back


@pytest.mark.parametrize("name", ["openai", "responses", "generic_openai", "gemini"])
def test_prefill_is_refused_before_sending_where_the_provider_has_none(fake_llm, name) -> None:
    from pytest_agentloom.errors import StepError

    with pytest.raises(StepError, match="has no prefill") as caught:
        _send(fake_llm, name, _ask(name, prefill="Sure:"))
    assert caught.value.code == "unknown_parameter" and fake_llm.requests == []


@pytest.mark.parametrize("name", ["openai", "responses", "anthropic"])
def test_service_tier_goes_out(fake_llm, name) -> None:
    _, body = _send(fake_llm, name, _ask(name, params={"service_tier": "flex"}))
    assert body["service_tier"] == "flex"


@pytest.mark.parametrize("name", ["gemini", "ollama"])
def test_service_tier_is_refused_where_there_is_none(fake_llm, name) -> None:
    from pytest_agentloom.errors import StepError

    with pytest.raises(StepError, match="has no service_tier"):
        _send(fake_llm, name, _ask(name, params={"service_tier": "flex"}))


@pytest.mark.parametrize("name", ["openai", "responses", "anthropic"])
def test_strict_tools_go_out_per_tool(fake_llm, name) -> None:
    from pytest_agentloom._core.types import ToolSpec

    tools = (ToolSpec(name="exact", strict=True), ToolSpec(name="loose"))
    _, body = _send(fake_llm, name, _ask(name, tools=tools))
    sent = [tool.get("function", tool) for tool in body["tools"]]
    assert sent[0]["strict"] is True
    if name == "responses":
        assert sent[1]["strict"] is False  # the API's field is always sent, false as before
    else:
        assert "strict" not in sent[1]


@pytest.mark.parametrize("name", ["gemini", "ollama"])
def test_strict_tools_are_refused_where_there_is_no_strict_mode(fake_llm, name) -> None:
    from pytest_agentloom._core.types import ToolSpec
    from pytest_agentloom.errors import StepError

    with pytest.raises(StepError, match="has no strict tools"):
        _send(fake_llm, name, _ask(name, tools=(ToolSpec(name="exact", strict=True),)))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_anthropic_adaptive_thinking_and_effort(fake_llm, stream) -> None:
    from pytest_agentloom._core.types import Thinking

    fake_llm.plan("anthropic", text("ok", reasoning="weighing it"))
    thinking = Thinking.model_validate({"type": "adaptive", "effort": "medium"})
    answer, body = _send(fake_llm, "anthropic", _ask("anthropic", stream=stream, thinking=thinking))
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "medium"}
    assert body["max_tokens"] == 4096
    assert answer.text == "ok"


def test_effort_reaches_openai_reasoning_models_and_gemini_levels(fake_llm) -> None:
    from pytest_agentloom._core.types import Thinking

    thinking = Thinking.model_validate({"type": "adaptive", "effort": "low"})
    _, chat = _send(fake_llm, "openai", _ask("openai", thinking=thinking).model_copy(update={"model": "o4-mini"}))
    assert chat["reasoning_effort"] == "low"
    _, gemini = _send(fake_llm, "gemini", _ask("gemini", thinking=thinking))
    assert gemini["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "low"


def test_groq_usage_only_in_x_groq_is_counted_from_a_real_stream(fake_llm) -> None:
    fake_llm.plan("openai", recorded(rec.raw("compat_groq_x_groq_usage.stream.sse.txt")))
    answer, _ = _send(fake_llm, "generic_openai", _ask("generic_openai", stream=True))
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (18, 439)
    assert [(call.name, call.arguments) for call in answer.tool_calls] == [("test-tool", '{"value":"Sparkle Day"}')]


def test_responses_reasoning_text_parts_are_kept(fake_llm) -> None:
    body = {"id": "resp_1", "object": "response", "status": "completed", "model": "deepseek-reasoner",
            "output": [{"type": "reasoning", "id": "rs_1", "summary": [],
                        "content": [{"type": "reasoning_text", "text": "Two plus two "},
                                    {"type": "reasoning_text", "text": "is four."}]},
                       {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "4", "annotations": []}]}],
            "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}
    fake_llm.plan("responses", recorded(json.dumps(body)))
    answer, _ = _send(fake_llm, "responses", _ask("responses"))
    assert (answer.text, answer.reasoning_content) == ("4", "Two plus two is four.")


# --------------------------------------------------------------------------- real Anthropic recordings


@pytest.mark.parametrize("index", [0, 1], ids=["whole", "stream"])
def test_anthropic_prefill_against_a_real_recording(fake_llm, index) -> None:
    from pytest_agentloom._core.types import LLMRequest, Message

    name = "anthropic_prefill.cassette.yaml"
    fake_llm.plan("anthropic", recorded(rec.cassette_body(name, index)[1]))
    request = LLMRequest(step_id="ask", model="claude-sonnet-4-0", stream=bool(index), prefill="Su nombre es",
                         messages=(Message(role="system", content="Be concise."),
                                   Message(role="user", content="What is the name of color #FF0000")))
    answer, body = _send(fake_llm, "anthropic", request)
    theirs = rec.cassette_request(name, index)
    assert [turn["role"] for turn in body["messages"]] == [turn["role"] for turn in theirs["messages"]]
    assert body["messages"][-1]["content"] == theirs["messages"][-1]["content"][0]["text"] == "Su nombre es"
    assert answer.text.startswith(" **r") and not answer.text.startswith("Su nombre")  # as the provider returns it


def test_anthropic_adaptive_thinking_against_a_real_recording(fake_llm) -> None:
    from pytest_agentloom._core.types import LLMRequest, Message, Thinking

    name = "anthropic_adaptive_thinking.cassette.yaml"
    fake_llm.plan("anthropic", recorded(rec.cassette_body(name)[1]))
    question = (Message(role="user", content="What is 2+2?"),)
    request = LLMRequest(step_id="ask", model="claude-opus-4-6", messages=question,
                         thinking=Thinking.model_validate({"type": "adaptive"}))
    answer, body = _send(fake_llm, "anthropic", request)
    theirs = rec.cassette_request(name)
    assert (body["thinking"], body["max_tokens"]) == (theirs["thinking"], theirs["max_tokens"])
    assert answer.reasoning_content == "4" and answer.text.endswith("2 + 2 = **4**")
    assert answer.thinking_blocks[0]["type"] == "thinking" and answer.thinking_blocks[0]["signature"]


def test_an_agents_output_schema_reaches_anthropic_closed_as_its_structured_outputs_require(fake_llm) -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {
        "type": "object", "properties": {"name": {"type": "string"}}}}}}
    format_ = {"type": "json_schema", "json_schema": {"name": "triager", "schema": schema, "strict": False}}
    _, body = _send(fake_llm, "anthropic", _ask("anthropic", params={"response_format": format_}))
    sent = body["output_config"]["format"]["schema"]
    assert sent["additionalProperties"] is False
    assert sent["properties"]["tags"]["items"]["additionalProperties"] is False
    assert "additionalProperties" not in schema  # the agent's own schema is left as written


# --------------------------------------------------------------------------- an agent that thinks


def test_a_claude_agent_thinks_on_every_turn_and_sends_its_thinking_back(fake_llm, gateway) -> None:
    from tests.servers.fake_llm import FakeToolCall, Planned

    flow = parse_workflow(textwrap.dedent("""\
        name: thinker
        config: {model: claude-sonnet-4-5}
        agents:
          finder:
            tools: [get_user_country]
            thinking: {enabled: true, budget_tokens: 2048}
        steps:
          - {id: find, type: agent, agent: finder, prompt: "Where is the user?", output: where}
        """))
    fake_llm.plan("anthropic", Planned(tool_calls=(FakeToolCall("get_user_country", {}),), reasoning="look it up"),
                  text("Mexico", reasoning="the tool said so"))
    result = run_workflow(flow, provider=gateway(flow.config), tools=[get_user_country], clock=VirtualClock())
    assert result.ok, result.steps["find"].error
    assert result.state["where"] == "Mexico"
    first, second = (request.json for request in fake_llm.requests_for("anthropic"))
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == second["max_tokens"] == 4096 + 2048
    turn = second["messages"][1]
    assert turn["role"] == "assistant" and turn["content"][0]["type"] == "thinking"
    assert turn["content"][0]["thinking"] == "look it up" and turn["content"][0]["signature"]
