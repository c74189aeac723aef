"""Embeddings on the wire: each adapter against the fake server over real HTTP on 127.0.0.1 (through the real
openai SDK for OpenAI), the gateway's routes and fallback for embed, and Anthropic's refusal."""

from __future__ import annotations

import asyncio
import textwrap

import openai
import pytest
from openai.types import CreateEmbeddingResponse

from pytest_agentloom import VirtualClock, Workflow, run_workflow
from pytest_agentloom._core.types import EmbedRequest
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers import AnthropicProvider, GoogleProvider, OllamaProvider, OpenAIProvider
from pytest_agentloom.providers._gateway import Gateway
from tests.servers.fake_llm import fail, fake_vector

TEXTS = ("the cat sat", "a dog")


def ask(model: str) -> EmbedRequest:
    return EmbedRequest(step_id="vec", model=model, texts=TEXTS)


def test_the_fake_openai_answer_has_the_sdk_shape_and_its_base64_decodes_to_the_same_vectors(fake_llm) -> None:
    client = openai.OpenAI(api_key="k", base_url=fake_llm.openai_base_url)
    raw = client.embeddings.with_raw_response.create(model="text-embedding-3-small", input=list(TEXTS),
                                                     encoding_format="float")
    parsed = CreateEmbeddingResponse.model_validate(raw.http_response.json())
    assert [item.embedding for item in parsed.data] == [fake_vector(text) for text in TEXTS]
    assert parsed.usage.prompt_tokens == 5
    decoded = client.embeddings.create(model="text-embedding-3-small", input=list(TEXTS))  # SDK default: base64
    assert fake_llm.requests[-1].json["encoding_format"] == "base64"
    assert [item.embedding for item in decoded.data] == [fake_vector(text) for text in TEXTS]


def test_openai_embed_goes_through_the_sdk_and_keeps_the_order(fake_llm) -> None:
    provider = OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url)
    response = asyncio.run(provider.embed(ask("text-embedding-3-small")))
    assert response.vectors == [fake_vector(text) for text in TEXTS]
    assert response.usage.input_tokens == 5 and response.provider == "openai"
    [sent] = fake_llm.requests_for("openai_embed")
    assert sent.json == {"model": "text-embedding-3-small", "input": list(TEXTS), "encoding_format": "float"}
    assert sent.headers["authorization"] == "Bearer k"


def test_google_embed_uses_batch_embed_contents_with_the_key_in_a_header(fake_llm) -> None:
    provider = GoogleProvider(api_key="gk", base_url=fake_llm.url)
    response = asyncio.run(provider.embed(ask("text-embedding-004")))
    assert response.vectors == [fake_vector(text) for text in TEXTS] and response.provider == "google"
    [sent] = fake_llm.requests_for("gemini_embed")
    assert sent.path == "/v1beta/models/text-embedding-004:batchEmbedContents" and sent.query == {}
    assert sent.headers["x-goog-api-key"] == "gk"
    assert sent.json["requests"][1] == {"model": "models/text-embedding-004", "content": {"parts": [{"text": "a dog"}]}}


def test_ollama_embed_sends_every_text_as_input(fake_llm) -> None:
    provider = OllamaProvider(host=fake_llm.url)
    response = asyncio.run(provider.embed(ask("nomic-embed-text")))
    assert response.vectors == [fake_vector(text) for text in TEXTS] and response.usage.input_tokens == 5
    [sent] = fake_llm.requests_for("ollama_embed")
    assert sent.json == {"model": "nomic-embed-text", "input": list(TEXTS)}


def flow(model: str) -> Workflow:
    return parse_workflow(textwrap.dedent(f"""\
        name: emb
        state: {{docs: ["the cat sat", "a dog"]}}
        config: {{retry: {{max_retries: 2}}}}
        steps: [{{id: vec, type: embed, model: {model}, inputs: state.docs, output: vectors}}]
        """))


def test_anthropic_is_refused_clearly_and_nothing_is_sent(fake_llm) -> None:
    anthropic = AnthropicProvider(api_key="k", base_url=fake_llm.url)
    result = run_workflow(flow("text-embedding-3-small"), provider=anthropic, clock=VirtualClock())
    error = result.steps["vec"].error or ""
    assert result.status.value == "failed" and "How to fix" in error
    assert "provider anthropic cannot embed (Anthropic has no embeddings API)" in error
    assert fake_llm.requests == []


def test_the_gateway_routes_embedding_models_and_the_engine_retries_a_429(fake_llm) -> None:
    gateway = Gateway(providers={"openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url),
                                 "google": GoogleProvider(api_key="k", base_url=fake_llm.url)})
    assert gateway.candidates(ask("text-embedding-3-large")) == ["openai"]
    assert gateway.candidates(ask("text-embedding-004")) == ["google"]
    assert gateway.candidates(ask("gemini-embedding-001")) == ["google"]
    fake_llm.plan("openai_embed", fail(429, "slow down"))
    result = run_workflow(flow("text-embedding-3-small"), provider=gateway, clock=VirtualClock())
    assert result.status.value == "success" and result.steps["vec"].attempts == 2
    assert result.state["vectors"] == [fake_vector(text) for text in TEXTS]
    assert result.steps["vec"].provider == "openai" and result.steps["vec"].input_tokens == 5
    assert result.steps["vec"].cost_usd == pytest.approx(5 * 0.02 / 1_000_000)


def test_the_gateway_falls_back_on_a_5xx_and_skips_providers_that_cannot_embed(fake_llm) -> None:
    gateway = Gateway(
        providers={"anthropic": AnthropicProvider(api_key="k", base_url=fake_llm.url),
                   "openai": OpenAIProvider(api_key="k", base_url=fake_llm.openai_base_url),
                   "ollama": OllamaProvider(host=fake_llm.url)},
        routes=[("text-embedding-*", ("anthropic", "openai", "ollama"))],
    )
    fake_llm.plan("openai_embed", fail(503))
    response = asyncio.run(gateway.embed(ask("text-embedding-3-small")))
    assert response.provider == "ollama" and [name for _, name, _ in gateway.fallbacks] == ["openai"]
    only_anthropic = Gateway(providers={"anthropic": AnthropicProvider(api_key="k", base_url=fake_llm.url)},
                             routes=[("*", "anthropic")])
    result = run_workflow(flow("text-embedding-3-small"), provider=only_anthropic, clock=VirtualClock())
    assert "provider anthropic cannot embed" in (result.steps["vec"].error or "")
