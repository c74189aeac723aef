"""Upstream's ``embed.dimensions`` on the wire: each adapter asks for the size in its API's own field."""

from __future__ import annotations

import asyncio

from pytest_agentloom._core.types import EmbedRequest
from pytest_agentloom.providers import GoogleProvider, OllamaProvider, OpenAIProvider

TEXTS = ("the cat sat", "a dog")


def ask(model: str) -> EmbedRequest:
    return EmbedRequest(step_id="vec", model=model, texts=TEXTS, dimensions=8)


def test_each_adapter_sends_dimensions(fake_llm) -> None:
    asyncio.run(OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url).embed(ask("text-embedding-3-small")))
    asyncio.run(GoogleProvider(api_key="gk", base_url=fake_llm.url).embed(ask("text-embedding-004")))
    asyncio.run(OllamaProvider(host=fake_llm.url).embed(ask("nomic-embed-text")))
    [openai] = fake_llm.requests_for("openai_embed")
    [google] = fake_llm.requests_for("gemini_embed")
    [ollama] = fake_llm.requests_for("ollama_embed")
    assert openai.json["dimensions"] == 8
    assert [item["outputDimensionality"] for item in google.json["requests"]] == [8, 8]
    assert ollama.json["dimensions"] == 8
