"""An error of ours raised inside the HTTP call (as the replay layer's transport does) comes out unwrapped."""

from __future__ import annotations

import pytest

from pytest_agentloom.errors import StepError
from pytest_agentloom.providers import AnthropicProvider, Gateway, GenericOpenAIProvider, OpenAIProvider
from tests.providers.helpers import complete, request


class Miss(StepError):
    code = "test_miss"


@pytest.fixture
def transport_raises_ours(monkeypatch):
    """Both HTTP stacks refuse with our error: recent SDKs use ``httpx2``, older ones ``httpx``."""

    async def refuse(self, req):
        raise Miss("no recording for this request", retryable=False)

    for name in ("httpx", "httpx2"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        monkeypatch.setattr(module.AsyncHTTPTransport, "handle_async_request", refuse)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(
    ("make", "model"),
    [
        (lambda: OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"), "gpt-4o"),
        (lambda: AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9"), "claude-x"),
    ],
    ids=["openai", "anthropic"],
)
def test_sdk_wrapped_error_of_ours_is_unwrapped(transport_raises_ours, make, model, stream):
    with pytest.raises(Miss) as caught:
        complete(make(), request(model=model, stream=stream))
    assert caught.value.retryable is False


def test_gateway_does_not_fall_back_on_it(transport_raises_ours):
    providers = {
        "openai": OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"),
        "generic_openai": GenericOpenAIProvider(base_url="http://127.0.0.1:9/v1"),
    }
    gw = Gateway(providers=providers, routes=[("gpt-*", ["openai", "generic_openai"])])
    with pytest.raises(Miss):
        complete(gw, request(model="gpt-4o"))
    assert gw.fallbacks == [] and gw.breakers["openai"].failures == 0


@pytest.mark.parametrize("stack", ["httpx", "httpx2"])
@pytest.mark.parametrize("kind", ["ReadError", "RemoteProtocolError", "ReadTimeout"])
def test_raw_transport_errors_from_a_stream_have_no_status(stack, kind):
    from pytest_agentloom.errors import ProviderError
    from pytest_agentloom.providers._anthropic import anthropic_errors
    from pytest_agentloom.providers._openai import openai_errors

    module = pytest.importorskip(stack)
    for translate in (openai_errors, anthropic_errors):
        raw = getattr(module, kind)("stream cut")
        with pytest.raises(ProviderError) as caught, translate("p"):
            raise raw
        assert caught.value.status is None and caught.value.__cause__ is raw
