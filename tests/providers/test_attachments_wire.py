"""Attachments (docs) on the wire: each adapter's shape (checked against the SDK's own types where there is an SDK),
the provider table, refusal before any request, and the gateway moving on to a provider that can take it.

Every provider talks to the fake server over real HTTP on 127.0.0.1, through the real SDK where there is one.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom._core.types import Attachment, AttachmentRefused, LLMRequest, Message, Provider
from pytest_agentloom.engine._format.loader import load_workflow
from pytest_agentloom.providers import (
    AnthropicProvider,
    GenericOpenAIProvider,
    GoogleProvider,
    OllamaProvider,
    OpenAIProvider,
)
from pytest_agentloom.providers._gateway import Gateway
from tests.servers.fake_llm import text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.4\n" + b"1" * 30
WAV = b"RIFF" + b"\0" * 40
MP3 = b"ID3" + b"\1" * 40
URL = "https://93.184.215.14/cat.png"


def item(kind: str, media_type: str, data: bytes | None = None, url: str | None = None) -> Attachment:
    if url is not None:
        return Attachment(kind=kind, media_type=media_type, url=url)  # type: ignore[arg-type]
    assert data is not None
    return Attachment(kind=kind, media_type=media_type, data=data, size=len(data),  # type: ignore[arg-type]
                      sha256=hashlib.sha256(data).hexdigest())


IMAGE = item("image", "image/png", PNG)
BY_URL = item("image", "image/png", url=URL)
PDF_ITEM = item("pdf", "application/pdf", PDF)
WAV_ITEM = item("audio", "audio/wav", WAV)
MP3_ITEM = item("audio", "audio/mpeg", MP3)


def providers(server) -> dict[str, Provider]:
    return {
        "openai": OpenAIProvider(api_key="k", base_url=server.openai_base_url),
        "generic_openai": GenericOpenAIProvider(base_url=server.openai_base_url),
        "anthropic": AnthropicProvider(api_key="k", base_url=server.url),
        "gemini": GoogleProvider(api_key="k", base_url=server.url),
        "ollama": OllamaProvider(host=server.url),
    }


MODELS = {"openai": "gpt-4o", "generic_openai": "local", "anthropic": "claude-x",
          "gemini": "gemini-2.5-flash", "ollama": "llava"}
ROUTE = {"openai": "openai", "generic_openai": "openai", "anthropic": "anthropic", "gemini": "gemini",
         "ollama": "ollama"}


def ask(name: str, *items: Attachment) -> LLMRequest:
    return LLMRequest(step_id="look", model=MODELS[name],
                      messages=(Message(role="user", content="What is this?", attachments=items),))


def call(provider: Provider, request: LLMRequest):
    return asyncio.run(provider.complete(request))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --------------------------------------------------------------------------- each adapter's shape


@pytest.mark.parametrize("name", ["openai", "generic_openai"])
def test_openai_sends_image_url_and_input_audio_parts(fake_llm, name):
    from openai.types.chat import ChatCompletionContentPartParam

    fake_llm.plan("openai", text("a cat"))
    response = call(providers(fake_llm)[name], ask(name, IMAGE, BY_URL, WAV_ITEM, MP3_ITEM))
    assert response.text == "a cat"
    content = fake_llm.requests[0].json["messages"][0]["content"]
    checker = TypeAdapter(ChatCompletionContentPartParam)
    for part in content:
        checker.validate_python(part)
    assert content == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}},
        {"type": "image_url", "image_url": {"url": URL}},
        {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": b64(MP3), "format": "mp3"}},
    ]


def test_anthropic_sends_image_and_document_blocks(fake_llm):
    from anthropic.types import DocumentBlockParam, ImageBlockParam, TextBlockParam

    fake_llm.plan("anthropic", text("an invoice"))
    response = call(providers(fake_llm)["anthropic"], ask("anthropic", IMAGE, BY_URL, PDF_ITEM))
    assert response.text == "an invoice"
    content = fake_llm.requests[0].json["messages"][0]["content"]
    kinds = {"image": ImageBlockParam, "document": DocumentBlockParam, "text": TextBlockParam}
    for block in content:
        TypeAdapter(kinds[block["type"]]).validate_python(block)
    assert content == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}},
        {"type": "image", "source": {"type": "url", "url": URL}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}},
        {"type": "text", "text": "What is this?"},
    ]


def test_gemini_sends_inline_data_parts(fake_llm):
    fake_llm.plan("gemini", text("a song"))
    call(providers(fake_llm)["gemini"], ask("gemini", IMAGE, PDF_ITEM, WAV_ITEM))
    [turn] = fake_llm.requests[0].json["contents"]
    assert turn["parts"] == [
        {"text": "What is this?"},
        {"inlineData": {"mimeType": "image/png", "data": b64(PNG)}},
        {"inlineData": {"mimeType": "application/pdf", "data": b64(PDF)}},
        {"inlineData": {"mimeType": "audio/wav", "data": b64(WAV)}},
    ]


def test_ollama_sends_images_as_bare_base64(fake_llm):
    fake_llm.plan("ollama", text("a cat"))
    call(providers(fake_llm)["ollama"], ask("ollama", IMAGE))
    [message] = fake_llm.requests[0].json["messages"]
    assert message["images"] == [b64(PNG)] and message["content"] == "What is this?"


# --------------------------------------------------------------------------- the provider table


@pytest.mark.parametrize(
    ("name", "attachment"),
    [
        pytest.param("openai", PDF_ITEM, id="openai-pdf"),
        pytest.param("generic_openai", PDF_ITEM, id="generic-pdf"),
        pytest.param("openai", item("audio", "audio/ogg", b"OggS"), id="openai-ogg"),
        pytest.param("anthropic", WAV_ITEM, id="anthropic-audio"),
        pytest.param("gemini", BY_URL, id="gemini-image-url"),
        pytest.param("ollama", PDF_ITEM, id="ollama-pdf"),
        pytest.param("ollama", WAV_ITEM, id="ollama-audio"),
        pytest.param("ollama", BY_URL, id="ollama-image-url"),
    ],
)
def test_an_attachment_the_provider_cant_take_fails_before_any_request(fake_llm, name, attachment):
    with pytest.raises(AttachmentRefused, match="nothing was sent"):
        call(providers(fake_llm)[name], ask(name, attachment))
    assert fake_llm.requests == []


def test_the_gateway_moves_on_to_a_provider_that_can_take_it(fake_llm):
    fake_llm.plan("anthropic", text("an invoice"))
    both = providers(fake_llm)
    gateway = Gateway(providers={"openai": both["openai"], "anthropic": both["anthropic"]},
                      routes=[("*", ["openai", "anthropic"])], clock=VirtualClock())
    response = call(gateway, ask("openai", PDF_ITEM))
    assert response.text == "an invoice" and response.provider == "anthropic"
    assert [request.path for request in fake_llm.requests] == ["/v1/messages"]
    assert gateway.fallbacks[0][1] == "openai"


# --------------------------------------------------------------------------- a whole workflow


def _flow(tmp_path: Path, attachment: dict[str, str]) -> Path:
    (tmp_path / "invoice.pdf").write_bytes(PDF)
    path = tmp_path / "flow.yaml"
    path.write_text(
        "name: wire\nconfig:\n  model: gpt-4o\n  sandbox: {enabled: false}\nsteps:\n"
        "  - id: look\n    type: llm_call\n    prompt: What is this?\n"
        f"    attachments: [{json.dumps(attachment)}]\n    retry: {{max_retries: 3}}\n"
    )
    return path


def test_a_step_whose_attachment_no_provider_takes_fails_without_a_retry(fake_llm, tmp_path):
    gateway = Gateway(providers={"openai": providers(fake_llm)["openai"], "ollama": providers(fake_llm)["ollama"]},
                      routes=[("*", ["openai", "ollama"])], clock=VirtualClock())
    result = run_workflow(load_workflow(_flow(tmp_path, {"type": "pdf", "source": "invoice.pdf"})),
                          provider=gateway, clock=VirtualClock())
    step = result.steps["look"]
    assert step.status == "failed" and step.error_code == "attachment_unsupported"
    assert step.attempts == 1 and fake_llm.requests == []
    assert not result.trace.events("retry", step="look")


def test_a_workflow_pdf_reaches_anthropic_and_the_bytes_stay_out_of_the_result(fake_llm, tmp_path):
    fake_llm.plan("anthropic", text("an invoice"))
    path = _flow(tmp_path, {"type": "pdf", "source": "invoice.pdf"})
    path.write_text(path.read_text().replace("gpt-4o", "claude-x"))
    result = run_workflow(load_workflow(path), provider=providers(fake_llm)["anthropic"], clock=VirtualClock())
    assert result.status == "success", result.steps["look"].error
    [block, _] = fake_llm.requests[0].json["messages"][0]["content"]
    assert block["source"]["data"] == b64(PDF)
    assert b64(PDF) not in result.to_json()
