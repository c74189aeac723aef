"""Clients built for separate runs share one verifying TLS context (loading the CA bundle once per process)."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import pytest

from pytest_agentloom.providers._anthropic import AnthropicProvider
from pytest_agentloom.providers._common import shared_ssl_context
from pytest_agentloom.providers._openai import OpenAIProvider


def _client_of_a_new_run(provider: Any) -> Any:
    async def get() -> Any:
        return provider._client.get()

    return asyncio.run(get())  # each run_workflow call has its own event loop, so its own SDK client


def _tls_context(client: Any) -> ssl.SSLContext:
    return client._client._transport._pool._ssl_context


@pytest.mark.newest_sdks
@pytest.mark.parametrize("provider", [OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"),
                                      AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9")],
                         ids=["openai", "anthropic"])
def test_sdk_clients_of_two_runs_share_one_verifying_context(provider: Any) -> None:
    first, second = _client_of_a_new_run(provider), _client_of_a_new_run(provider)
    assert first is not second  # a client per loop, as before
    context = _tls_context(first)
    assert _tls_context(second) is context
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert first.timeout == 600.0 and first._client.follow_redirects  # the SDK's own client defaults are kept


@pytest.mark.newest_sdks
def test_openai_and_anthropic_share_it_too_and_the_ca_setting_is_read_at_each_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import httpx
    import httpx2

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    openai_client = _client_of_a_new_run(OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9/v1"))
    anthropic_client = _client_of_a_new_run(AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9"))
    assert _tls_context(openai_client) is _tls_context(anthropic_client) is shared_ssl_context(httpx2)
    assert shared_ssl_context(httpx) is shared_ssl_context(httpx)  # Ollama and Gemini (plain httpx)

    import certifi

    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert shared_ssl_context(httpx2) is not _tls_context(openai_client)  # another CA setting, another context
