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
