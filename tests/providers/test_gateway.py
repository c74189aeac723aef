"""Gateway: routing by model name, fallback before an answer, per-provider circuit breaker on a virtual clock."""

from __future__ import annotations

import asyncio

import pytest

from pytest_agentloom._core.clock import VirtualClock
from pytest_agentloom._core.types import LLMRequest, LLMResponse
from pytest_agentloom.engine._format.model import WorkflowConfig
from pytest_agentloom.errors import ProviderConfigError, ProviderError, StepError, UsageError
from pytest_agentloom.providers import (
    AnthropicProvider,
    Gateway,
    GenericOpenAIProvider,
    GoogleProvider,
    OpenAIProvider,
    Scripted,
    default_gateway,
)
from pytest_agentloom.providers._common import PLACEHOLDER_API_KEY, MidStreamError
from tests.providers.helpers import complete, request
from tests.servers.fake_llm import drop, fail, text


def gateway(server, **kwargs):
    providers = {
        "openai": OpenAIProvider(api_key="k", base_url=server.openai_base_url),
        "anthropic": AnthropicProvider(api_key="k", base_url=server.url),
        "google": GoogleProvider(api_key="k", base_url=server.url),
    }
    return Gateway(providers=providers, **kwargs)


@pytest.mark.parametrize(
    ("model", "route", "provider"),
    [
        ("gpt-4o-mini", "openai", "openai"),
        ("o3-mini", "openai", "openai"),
        ("o1", "openai", "openai"),
        ("o4-mini", "openai", "openai"),
        ("claude-test-model", "anthropic", "anthropic"),
        ("gemini-2.5-pro", "gemini", "google"),
    ],
)
def test_routes_by_model_name(fake_llm, model, route, provider):
    response = complete(gateway(fake_llm), request(model=model))
    assert response.provider == provider
    assert [r.route for r in fake_llm.requests] == [route]


def test_request_provider_wins_and_aliases(fake_llm):
    gw = gateway(fake_llm)
    assert complete(gw, request(model="gpt-4o", provider="anthropic")).provider == "anthropic"
    assert complete(gw, request(model="my-model", provider="gemini")).provider == "google"


def test_unknown_model_lists_routes(fake_llm):
    with pytest.raises(StepError) as caught:
        complete(gateway(fake_llm), request(model="mistral-large"))
    message = str(caught.value)
    assert "no provider for model 'mistral-large'" in message
    assert "gpt-* -> openai" in message and "claude* -> anthropic" in message and "How to fix" in message
    assert caught.value.code == "no_route" and caught.value.retryable is False


def test_unknown_provider_is_refused(fake_llm):
    with pytest.raises(StepError, match="doesn't have"):
        complete(gateway(fake_llm), request(model="gpt-4o", provider="ollama"))


def test_constructor_checks_its_arguments():
    with pytest.raises(UsageError, match="at least one provider"):
        Gateway(providers={})
    with pytest.raises(UsageError, match="'bad' must have an async complete"):
        Gateway(providers={"bad": object()})


def _two_openai_shaped(server, **kwargs):
    providers = {
        "openai": OpenAIProvider(api_key="k", base_url=server.openai_base_url),
        "generic_openai": GenericOpenAIProvider(base_url=server.openai_base_url),
    }
    return Gateway(providers=providers, routes=[("gpt-*", ["openai", "generic_openai"])], **kwargs)


@pytest.mark.parametrize("failure", [drop(), fail(500), fail(503)], ids=["connection", "500", "503"])
def test_falls_back_when_a_provider_fails_before_answering(fake_llm, failure):
    fake_llm.plan("openai", failure, text("from the backup"))
    gw = _two_openai_shaped(fake_llm, clock=VirtualClock())
    response = complete(gw, request(model="gpt-4o"))
    assert response.text == "from the backup" and response.provider == "generic_openai"
    assert [name for _, name, _ in gw.fallbacks] == ["openai"]
    assert gw.breakers["openai"].failures == 1 and gw.breakers["generic_openai"].failures == 0


@pytest.mark.parametrize("status", [400, 401, 429])
def test_answers_with_an_error_status_do_not_fall_back(fake_llm, status):
    fake_llm.plan("openai", fail(status))
    gw = _two_openai_shaped(fake_llm, clock=VirtualClock())
    with pytest.raises(ProviderError) as caught:
        complete(gw, request(model="gpt-4o"))
    assert caught.value.status == status and len(fake_llm.requests) == 1
    assert gw.breakers["openai"].failures == 0


def test_all_candidates_failing_raises_the_last_error(fake_llm):
    fake_llm.plan("openai", fail(502), drop())
    with pytest.raises(ProviderError) as caught:
        complete(_two_openai_shaped(fake_llm, clock=VirtualClock()), request(model="gpt-4o"))
    assert caught.value.status is None and caught.value.provider == "generic_openai"
    message = str(caught.value)
    assert "every provider for model 'gpt-4o' failed, in order: openai: provider error (HTTP 502)" in message
    assert "; generic_openai: provider error (no status)" in message


class _BrokenMidStream:
    async def complete(self, request: LLMRequest) -> LLMResponse:
        raise MidStreamError("stream cut after the first chunk", status=None, provider="first")


def test_no_fallback_after_the_first_chunk():
    backup = Scripted({"ask": "never used"})
    gw = Gateway(
        providers={"first": _BrokenMidStream(), "backup": backup},
        routes=[("*", ["first", "backup"])],
        clock=VirtualClock(),
    )
    with pytest.raises(MidStreamError):
        complete(gw, request(model="m"))
    assert backup.requests == [] and gw.breakers["first"].failures == 1


def test_a_provider_without_a_key_is_handed_back_without_fallback(fake_llm, monkeypatch):
    """A missing key is never retried: the gateway neither tries the next provider nor counts a failure."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backup = Scripted({"ask": "never used"})
    gw = Gateway(providers={"openai": OpenAIProvider(base_url=fake_llm.openai_base_url), "backup": backup},
                 routes=[("*", ["openai", "backup"])], clock=VirtualClock())
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        complete(gw, request(model="gpt-4o"))
    assert backup.requests == [] and fake_llm.requests == []
    assert gw.fallbacks == [] and gw.breakers["openai"].failures == 0


def test_breaker_opens_then_half_opens_after_cooldown(fake_llm):
    clock = VirtualClock()
    gw = Gateway(
        providers={"openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)},
        clock=clock,
        failure_threshold=2,
        cooldown_seconds=10,
    )
    fake_llm.plan("openai", fail(503), drop())
    for _ in range(2):
        with pytest.raises(ProviderError):
            complete(gw, request())
    assert gw.breakers["openai"].state == "open"

    clock.advance(9)
    with pytest.raises(ProviderError, match=r"circuit open until t=10") as caught:
        complete(gw, request())
    assert caught.value.status is None  # retryable: the engine backs off, the cool-down passes
    assert len(fake_llm.requests) == 2  # the open breaker sent nothing

    clock.advance(1)
    fake_llm.plan("openai", drop())  # the half-open probe fails: open again, for another cool-down
    with pytest.raises(ProviderError):
        complete(gw, request())
    assert gw.breakers["openai"].state == "open" and gw.breakers["openai"].opened_at == 10

    clock.advance(10)
    assert complete(gw, request()).text == "echo: hello"  # probe succeeds: closed
    assert [state for _, state in gw.breakers["openai"].transitions] == [
        "open",
        "half_open",
        "open",
        "half_open",
        "closed",
    ]


def test_429_never_opens_the_breaker(fake_llm):
    gw = Gateway(
        providers={"openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)},
        clock=VirtualClock(),
        failure_threshold=1,
    )
    fake_llm.plan("openai", *[fail(429)] * 3)
    for _ in range(3):
        with pytest.raises(ProviderError):
            complete(gw, request())
    assert gw.breakers["openai"].state == "closed"


def test_breaker_uses_the_running_steps_clock_when_none_is_given(fake_llm):
    from pytest_agentloom._core.clock import use_clock

    clock = VirtualClock(start=100)
    gw = Gateway(
        providers={"openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)}, failure_threshold=1
    )
    fake_llm.plan("openai", drop())

    async def call() -> None:
        with use_clock(clock), pytest.raises(ProviderError):
            await gw.complete(request())

    asyncio.run(call())
    assert gw.breakers["openai"].opened_at == 100


def test_default_gateway_reads_env_lazily_and_placeholder_keys(fake_llm, monkeypatch):
    gw = default_gateway()
    assert sorted(gw.providers) == ["anthropic", "generic_openai", "google", "ollama", "openai"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    assert complete(gw, request()).provider == "openai"
    assert fake_llm.requests[0].headers["authorization"] == "Bearer sk-real-secret"

    replay = default_gateway(WorkflowConfig(model="gpt-4o", provider="openai"), api_key_placeholder=True)
    complete(replay, request(provider="openai"))
    assert fake_llm.requests[1].headers["authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"


def test_default_gateway_refuses_unknown_names():
    with pytest.raises(UsageError, match="not a provider"):
        default_gateway(WorkflowConfig(provider="azure"))
    with pytest.raises(UsageError, match="unknown provider"):
        default_gateway(options={"azure": {}})
