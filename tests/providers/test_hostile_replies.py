"""A live reply no LLM API sends (JSON nested 100,000 deep) is an unusable response, never ``provider_crashed``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_agentloom._core.types import LLMRequest, Message
from pytest_agentloom.errors import ErrorCode, UnusableResponseError
from pytest_agentloom.providers import OllamaProvider, OpenAIProvider
from tests.servers.fake_llm import recorded


def ask() -> LLMRequest:
    return LLMRequest(step_id="ask", model="gpt-4o-mini", messages=(Message(role="user", content="hi"),))


def test_a_live_reply_nested_too_deeply_is_an_unusable_response_not_a_crash(fake_llm: Any) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    fake_llm.plan("openai", recorded(deep, content_type="application/json"))
    fake_llm.plan("ollama", recorded(deep, content_type="application/json"))
    for provider in (OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url),
                     OllamaProvider(host=fake_llm.url)):
        with pytest.raises(UnusableResponseError, match="nested too deeply to read") as info:
            asyncio.run(provider.complete(ask()))
        assert info.value.code == ErrorCode.UNUSABLE_RESPONSE and info.value.retryable is False
