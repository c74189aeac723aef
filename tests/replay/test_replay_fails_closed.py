"""Replay fails closed whatever vcrpy does: a request vcrpy does not intercept stops the replay, and is not sent.

vcrpy 8.0 and 8.1 patch httpx but not httpx2, which the openai (3.x) and anthropic (2.x) SDKs send
through: without a guard of our own, a replay under them sent real requests to the providers. In a
replay the providers' HTTP clients are built on an offline transport (``_core/offline.py``) that cannot
open a connection; vcrpy intercepts it like the network transports, and a request that reaches it
raises :class:`RequestNotInterceptedError`.

Here the providers' base URLs point at a local server that counts the connections it is offered: it
must count none. The first tests make vcrpy skip one library (vcrpy's ``skip_patchers`` option), as an
old vcrpy would (under vcrpy 8.0 nothing needs skipping); the last replays a committed cassette through
the openai SDK with the vcrpy installed, which ``tox -e vcrpy80`` pins to 8.0.0.
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from pytest_agentloom import VirtualClock, load_workflow, run_workflow
from pytest_agentloom._core.types import LLMRequest, Message
from pytest_agentloom.errors import ReplayError, RequestNotInterceptedError
from pytest_agentloom.providers._common import PLACEHOLDER_API_KEY
from pytest_agentloom.providers._factory import default_gateway
from pytest_agentloom.providers._ollama import OllamaProvider
from pytest_agentloom.providers._openai import OpenAIProvider
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
from pytest_agentloom.replay import _cassette as cassette_module

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support_triage"
EXAMPLE_CASSETTE = (REPO / "cassettes" / "examples" / "support_triage" / "test_example_triage_recorded.py"
                    / "test_question_is_answered.yaml")
VCRPY = metadata.version("vcrpy")
KEY = "sk-fails-closed-key-0123456789"


class ConnectionCounter:
    """A TCP server on 127.0.0.1 that counts the connections it accepts and closes each at once."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.connections = 0
        self._running = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _serve(self) -> None:
        while self._running:
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._running = False
        self._thread.join()
        self._listener.close()


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConnectionCounter]:
    """Every provider's base URL points at the counting server."""
    server = ConnectionCounter()
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")  # the path the cassettes were recorded with
    for name in ("ANTHROPIC_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.setenv(name, server.url)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield server
    server.close()


def _skipping(monkeypatch: pytest.MonkeyPatch, library: str) -> None:
    """Sessions' vcrpy cassettes leave ``library`` unpatched, as a vcrpy that does not know it would (a vcrpy
    older than 8.2 needs no help: it patches neither library's ``MockTransport``)."""
    from vcr.cassette import Cassette

    if "skip_patchers" not in inspect.signature(Cassette.__init__).parameters:
        if Version(VCRPY) < Version("8.2"):
            return
        pytest.skip(f"vcrpy {VCRPY} has no skip_patchers: only the test with the installed vcrpy applies")
    build = cassette_module._cassette_class

    def without(session: CassetteSession) -> Any:
        class Unpatched(build(session)):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **{**kwargs, "skip_patchers": (library,)})

        return Unpatched

    monkeypatch.setattr(cassette_module, "_cassette_class", without)


def _ask(model: str, content: str = "hello") -> LLMRequest:
    return LLMRequest(step_id="ask", model=model, messages=(Message(role="user", content=content),))


def _record(path: Path, provider: Any, request: LLMRequest, route: str) -> None:
    """One call recorded against the fake LLM server (vcrpy patching everything)."""
    from tests.servers.fake_llm import FakeLLMServer, text

    with FakeLLMServer() as server:
        server.plan(route, text("recorded answer"))
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL, api_keys=(KEY,))) as session:
            live = asyncio.run(session.wrap(provider(server)).complete(request))
    assert live.text == "recorded answer"


def _replay(session: CassetteSession, provider: Any, request: LLMRequest) -> Any:
    async def go() -> Any:
        try:
            return await session.wrap(provider).complete(request)
        except Exception as exc:
            return exc

    return asyncio.run(go())


@pytest.mark.parametrize("mode", [RecordMode.NONE, RecordMode.ONCE])
def test_a_request_vcrpy_does_not_intercept_stops_the_replay_unsent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counter: ConnectionCounter, mode: RecordMode) -> None:
    path = tmp_path / "cassette.yaml"
    _record(path, lambda server: OpenAIProvider(api_key=KEY, base_url=server.openai_base_url),
            _ask("gpt-4o-mini"), "openai")
    if not path.exists():  # vcrpy < 8.2 saw no httpx2 request, so nothing was recorded (no call, no cassette)
        assert Version(VCRPY) < Version("8.2")
        path.write_bytes(EXAMPLE_CASSETTE.read_bytes())  # any cassette: in mode once it must be replayed
    _skipping(monkeypatch, "httpx2")
    with CassetteSession(CassetteConfig(path=path, mode=mode, test_id="tests/x.py::test_x")) as session:
        error = _replay(session, OpenAIProvider(api_key=PLACEHOLDER_API_KEY), _ask("gpt-4o-mini"))
    assert counter.connections == 0
    assert isinstance(error, RequestNotInterceptedError) and isinstance(error, ReplayError)
    assert session.unsent == [error] and error.code == "request_not_intercepted"
    message = str(error)
    assert message.splitlines()[0] == (
        f"Replay stopped: vcrpy {VCRPY} did not intercept a request sent through httpx2, so the cassette "
        "could not answer it. The request was not sent.")
    for line in ("  cassette: ", "  test: tests/x.py::test_x", "  step: 'ask' (model gpt-4o-mini)",
                 f"  request: POST {counter.url}/v1/chat/completions", "  transport: httpx2.MockTransport",
                 "How to fix: install vcrpy 8.4 or later (8.2 is the first that patches httpx2): pip install"):
        assert line in message, message


def test_a_plain_http_provider_is_sealed_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             counter: ConnectionCounter) -> None:
    """Ollama's and Gemini's clients (httpx itself) get the offline transport as the SDKs' do."""
    path = tmp_path / "cassette.yaml"
    _record(path, lambda server: OllamaProvider(host=server.url), _ask("llama3.2"), "ollama")
    _skipping(monkeypatch, "httpx")
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as session:
        error = _replay(session, OllamaProvider(), _ask("llama3.2"))
    assert counter.connections == 0
    assert isinstance(error, RequestNotInterceptedError)
    assert "sent through httpx, so" in str(error) and "transport: httpx.MockTransport" in str(error)


def test_the_run_stops_at_the_step_and_nothing_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          counter: ConnectionCounter) -> None:
    """Through the engine (retries on, as the example's workflow has them): the step fails with the error."""
    _skipping(monkeypatch, "httpx2")
    result, session = _replay_example()
    assert counter.connections == 0
    step = result.steps["classify"]
    assert step.error_code == "request_not_intercepted" and "The request was not sent." in (step.error or "")
    assert len(session.unsent) == 1


def _replay_example() -> tuple[Any, CassetteSession]:
    """The example's committed cassette replayed through the openai SDK, as its test does (no key, no server)."""
    workflow = load_workflow(EXAMPLE / "triage.yaml")
    with CassetteSession(CassetteConfig(path=EXAMPLE_CASSETTE, mode=RecordMode.NONE)) as session:
        session.add_run(workflow)
        provider = session.wrap(default_gateway(workflow.config, api_key_placeholder=True))
        result = run_workflow(workflow, provider=provider, clock=VirtualClock(), runs_dir=False,
                              state={"ticket": "How do I export my data?", "customer": "ada"})
    return result, session


def test_a_committed_cassette_replays_or_stops_closed_with_the_installed_vcrpy(counter: ConnectionCounter) -> None:
    """With a vcrpy that patches httpx2 (8.2 on) the replay answers; with an older one it stops, unsent."""
    result, session = _replay_example()
    assert counter.connections == 0
    if Version(VCRPY) >= Version("8.2"):
        assert result.status == "success", result.steps
        assert result.state["reply"] == "Open Settings, then Export. Pick CSV or JSON."
        assert session.unsent == []
    else:
        assert result.steps["classify"].error_code == "request_not_intercepted"
        assert f"vcrpy {VCRPY} did not intercept a request sent through httpx2" in str(session.unsent[0])
