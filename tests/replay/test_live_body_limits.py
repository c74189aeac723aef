"""Recording a live response: its body is decompressed piece by piece and capped (32 MiB, as cassette bodies
are); over the cap, or of an encoding that cannot be decoded to be scrubbed, is an
``UnrecordableResponseError`` (code ``response_unrecordable``), never ``MemoryError`` or ``provider_crashed``."""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom.errors import UnrecordableResponseError
from pytest_agentloom.providers import OpenAIProvider
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
from pytest_agentloom.replay._body_limits import MAX_BODY_BYTES
from tests.replay.test_cassette import request as ask
from tests.servers.fake_llm import FakeLLMServer, recorded

REPLY = {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "fine"}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def bomb() -> bytes:
    """A gzip body of about 40 KB that inflates past the cap (to 40 MiB of spaces inside a JSON string)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    parts = [squeeze.compress(b'{"pad": "')]
    chunk = b" " * (1 << 20)
    parts += [squeeze.compress(chunk) for _ in range(MAX_BODY_BYTES // len(chunk) + 8)]
    parts += [squeeze.compress(b'"}'), squeeze.flush()]
    return b"".join(parts)


def record(tmp_path: Path, server: FakeLLMServer) -> tuple[Any, Path]:
    path = tmp_path / "c.yaml"

    async def go(session: CassetteSession) -> Any:
        provider = OpenAIProvider(api_key="sk-live-body-limits-0123", base_url=server.openai_base_url)
        try:
            return await session.wrap(provider).complete(ask())
        except Exception as exc:
            return exc

    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
        outcome = asyncio.run(go(session))
    return outcome, path


def test_a_gzip_bomb_from_a_live_provider_is_a_named_error(tmp_path: Path, fake_server: FakeLLMServer) -> None:
    body = bomb()
    assert len(body) < 200_000
    fake_server.plan("openai", recorded(body, headers={"content-encoding": "gzip"}))
    outcome, path = record(tmp_path, fake_server)
    assert isinstance(outcome, UnrecordableResponseError), repr(outcome)
    assert outcome.code == "response_unrecordable"
    assert f"inflates to more than {MAX_BODY_BYTES:,} bytes" in str(outcome) and "Nothing was written" in str(outcome)
    assert not path.exists() or "pad" not in path.read_text()


def test_a_gzip_reply_under_the_cap_is_recorded_decompressed(tmp_path: Path, fake_server: FakeLLMServer) -> None:
    body = gzip.compress(json.dumps(REPLY).encode())
    fake_server.plan("openai", recorded(body, headers={"content-encoding": "gzip"}))
    outcome, path = record(tmp_path, fake_server)
    assert getattr(outcome, "text", None) == "fine", repr(outcome)
    assert "fine" in path.read_text()  # stored decompressed (so it can be scrubbed)


def test_a_plain_body_over_the_cap_is_a_named_error(tmp_path: Path, fake_server: FakeLLMServer) -> None:
    body = json.dumps({**REPLY, "pad": " " * (MAX_BODY_BYTES + 10)}).encode()
    fake_server.plan("openai", recorded(body))
    outcome, _ = record(tmp_path, fake_server)
    assert isinstance(outcome, UnrecordableResponseError), repr(outcome)
    assert "over the cassette limit" in str(outcome)


@pytest.mark.skipif(importlib.util.find_spec("brotli") is not None, reason="brotli is installed: br is decoded")
def test_a_br_body_without_brotli_fails_closed(tmp_path: Path, fake_server: FakeLLMServer) -> None:
    fake_server.plan("openai", recorded(b"\x1b\x03\x00\xf8\xa5\x00\x00", headers={"content-encoding": "br"}))
    outcome, path = record(tmp_path, fake_server)
    assert isinstance(outcome, UnrecordableResponseError), repr(outcome)
    assert "content-encoding is br" in str(outcome) and "pip install brotli" in str(outcome)
    assert not path.exists()


def test_the_step_fails_with_the_code_and_is_not_retried(tmp_path: Path, fake_server: FakeLLMServer) -> None:
    from pytest_agentloom import run_workflow

    flow = tmp_path / "flow.yaml"
    flow.write_text("name: big\nconfig: {model: gpt-4o-mini}\nsteps:\n"
                    "  - {id: say, type: llm_call, prompt: hi, output: said, retry: {max_retries: 2}}\n")
    fake_server.plan("openai", recorded(bomb(), headers={"content-encoding": "gzip"}))
    provider = OpenAIProvider(api_key="sk-live-body-limits-0123", base_url=fake_server.openai_base_url)
    with CassetteSession(CassetteConfig(path=tmp_path / "c.yaml", mode=RecordMode.ALL)) as session:
        result = run_workflow(flow, provider=session.wrap(provider), runs_dir=False)
    step = result.steps["say"]
    assert step.error_code == "response_unrecordable", step
    assert step.attempts == 1
