"""vcrpy still calls the public methods our cassette overrides, and lets through what our filter drops.

``replay/_cassette.py`` talks to vcrpy only through public names: the ``Cassette.use`` context
manager, its constructor's keyword arguments, public attributes, and four public methods it overrides
(``can_play_response_for``, ``__contains__``, ``play_response``, ``append``), which vcrpy's httpx stubs
call. A vcrpy that found recordings another way would still replay, through its own scan of every
recording (slower, and without our mismatch errors): these tests say so loudly instead.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_agentloom._core.types import LLMRequest, Message
from pytest_agentloom.providers._common import PLACEHOLDER_API_KEY
from pytest_agentloom.providers._openai import OpenAIProvider
from pytest_agentloom.replay import CassetteConfig, CassetteMismatchError, CassetteSession, RecordMode
from pytest_agentloom.replay import _cassette as cassette_module
from tests.servers.fake_llm import FakeLLMServer, text

KEY = "sk-contract-key-0123456789"


def _ask(content: str) -> LLMRequest:
    return LLMRequest(step_id="ask", model="gpt-4o-mini", messages=(Message(role="user", content=content),))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The overridden methods vcrpy calls, in order (the class each session builds, spied on)."""
    seen: list[str] = []
    build = cassette_module._cassette_class

    def spied(session: CassetteSession) -> Any:
        class Spied(build(session)):  # type: ignore[misc]
            def can_play_response_for(self, request: Any) -> bool:
                seen.append("can_play_response_for")
                return bool(super().can_play_response_for(request))

            def __contains__(self, request: Any) -> bool:
                seen.append("__contains__")
                return bool(super().__contains__(request))

            def play_response(self, request: Any) -> Any:
                seen.append("play_response")
                return super().play_response(request)

            def append(self, request: Any, response: Any) -> None:
                seen.append("append")
                super().append(request, response)

        return Spied

    monkeypatch.setattr(cassette_module, "_cassette_class", spied)
    return seen


def _call(session: CassetteSession, provider: Any, request: LLMRequest) -> Any:
    async def go() -> Any:
        try:
            return await session.wrap(provider).complete(request)
        except Exception as exc:
            return exc

    return asyncio.run(go())


def test_vcrpy_records_through_append_and_replays_through_the_index(tmp_path: Path, calls: list[str]) -> None:
    path = tmp_path / "cassette.yaml"
    with FakeLLMServer() as server:
        server.plan("openai", text("recorded answer"))
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL, api_keys=(KEY,))) as session:
            live = _call(session, OpenAIProvider(api_key=KEY, base_url=server.openai_base_url), _ask("hello"))
    assert live.text == "recorded answer"
    assert {"can_play_response_for", "append"} <= set(calls)

    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as session:
        calls.clear()  # loading appends every recording too
        replayed = _call(session, OpenAIProvider(api_key=PLACEHOLDER_API_KEY), _ask("hello"))
        assert replayed.text == "recorded answer"
        assert {"can_play_response_for", "__contains__", "play_response"} <= set(calls)
        calls.clear()
        missing = _call(session, OpenAIProvider(api_key=PLACEHOLDER_API_KEY), _ask("something else"))
    assert isinstance(missing, CassetteMismatchError)
    assert {"can_play_response_for", "__contains__"} <= set(calls) and "play_response" not in calls


def test_a_request_outside_a_provider_call_passes_through_unrecorded(tmp_path: Path) -> None:
    """vcrpy lets through a request its filter turns into ``None``: the test's own HTTP during a replayed test."""
    path = tmp_path / "cassette.yaml"
    with FakeLLMServer() as server:
        server.plan("openai", text("recorded answer"))
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL, api_keys=(KEY,))) as session:
            _call(session, OpenAIProvider(api_key=KEY, base_url=server.openai_base_url), _ask("hello"))
        recorded = path.read_bytes()
        for mode in (RecordMode.NONE, RecordMode.NEW_EPISODES):
            with CassetteSession(CassetteConfig(path=path, mode=mode)) as session:
                own = httpx.get(f"{server.url}/health", timeout=5)  # not a provider call: sent, not recorded
                replayed = _call(session, OpenAIProvider(api_key=PLACEHOLDER_API_KEY), _ask("hello"))
                assert replayed.text == "recorded answer"
                assert session.mismatches == [] and not session.needs_write()
            assert own.status_code in (200, 404)
    assert path.read_bytes() == recorded
