"""A replay opens no connection and resolves no name, whatever client the provider uses (_core/offline.py).

The providers' own HTTP clients are built on an offline transport during a replay (see
test_replay_fails_closed.py). A provider with a client of its own (raw sockets, asyncio streams, an
HTTP library vcrpy does not patch, or vcrpy's patching turned off) would still reach the network, so a
replay also guards the sockets: while a provider call must be answered from a cassette, an attempt to
connect or to resolve a name fails with :class:`RequestNotInterceptedError` before it happens. A local
server counts the connections it is offered: it must count none.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message
from pytest_agentloom.errors import ReplayError, RequestNotInterceptedError
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
from tests.replay.test_replay_fails_closed import EXAMPLE_CASSETTE, ConnectionCounter


@pytest.fixture
def counter() -> Iterator[ConnectionCounter]:
    server = ConnectionCounter()
    yield server
    server.close()


class OwnClient:
    """A provider that ignores every HTTP library and talks to ``url`` through ``how``."""

    name = "own"

    def __init__(self, port: int, how: str) -> None:
        self.port, self.how = port, how

    async def complete(self, request: LLMRequest) -> LLMResponse:
        if self.how == "asyncio":
            _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.close()
        elif self.how == "socket":
            with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                pass
        elif self.how == "thread":  # a blocking client run off the loop, as many SDKs do
            await asyncio.to_thread(socket.create_connection, ("127.0.0.1", self.port), 2)
        elif self.how == "dns":
            socket.getaddrinfo("example.org", 443)
        elif self.how == "plain thread":  # a thread started without the call's context
            failures: list[BaseException] = []

            def connect() -> None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                        pass
                except BaseException as exc:
                    failures.append(exc)

            worker = threading.Thread(target=connect)
            worker.start()
            await asyncio.to_thread(worker.join)
            if failures:
                raise failures[0]
        elif self.how == "run_in_executor":  # the loop's executor threads do not get the call's context
            await asyncio.get_running_loop().run_in_executor(None, socket.create_connection,
                                                              ("127.0.0.1", self.port), 2)
        elif self.how == "loop.getaddrinfo":  # asyncio resolves names in its executor
            await asyncio.get_running_loop().getaddrinfo("example.org", 443)
        elif self.how == "own executor":
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(socket.getaddrinfo, "example.org", 443).result()
        elif self.how == "httpcore":
            import httpcore

            async with httpcore.AsyncConnectionPool() as pool:
                await pool.request("GET", f"http://127.0.0.1:{self.port}/")
        elif self.how == "urllib":
            import urllib.request

            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2)
        return LLMResponse(text="from the network", model=request.model)


def _ask() -> LLMRequest:
    return LLMRequest(step_id="classify", model="gpt-4o-mini", messages=(Message(role="user", content="hi"),))


def _replay(provider: Any, mode: RecordMode = RecordMode.NONE) -> tuple[Any, CassetteSession]:
    async def go(session: CassetteSession) -> Any:
        try:
            return await session.wrap(provider).complete(_ask())
        except Exception as exc:
            return exc

    with CassetteSession(CassetteConfig(path=EXAMPLE_CASSETTE, mode=mode)) as session:
        outcome = asyncio.run(go(session))
    return outcome, session


@pytest.mark.parametrize("how", ["asyncio", "socket", "thread", "httpcore", "dns", "plain thread", "run_in_executor",
                                 "loop.getaddrinfo", "own executor"])
def test_a_provider_with_its_own_client_cannot_connect_during_a_replay(counter: ConnectionCounter, how: str) -> None:
    outcome, session = _replay(OwnClient(int(counter.url.rsplit(":", 1)[1]), how))
    assert counter.connections == 0
    assert isinstance(outcome, RequestNotInterceptedError), outcome
    assert outcome.code == "request_not_intercepted"
    message = str(outcome)
    assert "did not intercept a request sent through a socket" in message and "The request was not sent" in message
    assert "refused by the replay's socket guard" in message, message
    assert session.unsent and session.unsent[0] is outcome


def test_a_library_vcrpy_patches_is_answered_by_vcrpy_and_sends_nothing(counter: ConnectionCounter) -> None:
    """urllib goes through http.client, which vcrpy patches: the cassette answers (here: nothing matches)."""
    outcome, _ = _replay(OwnClient(int(counter.url.rsplit(":", 1)[1]), "urllib"))
    assert counter.connections == 0
    assert isinstance(outcome, ReplayError), outcome


def test_the_guard_is_off_outside_a_replay(counter: ConnectionCounter) -> None:
    """The same client connects when no replay is in progress (and when recording: nothing is sealed)."""
    port = int(counter.url.rsplit(":", 1)[1])
    asyncio.run(OwnClient(port, "asyncio").complete(_ask()))
    _replay(OwnClient(port, "asyncio"))  # installs the guard, if it was not yet
    asyncio.run(OwnClient(port, "socket").complete(_ask()))
    for _ in range(200):  # the server counts in its own thread: wait (up to 2 s) for it to see both
        if counter.connections == 2:
            break
        time.sleep(0.01)
    assert counter.connections == 2


def test_with_vcrpys_patching_all_skipped_the_sdk_still_sends_nothing(
        counter: ConnectionCounter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """vcrpy patching neither httpx nor httpx2: the openai SDK's request stops at the offline transport."""
    from vcr.cassette import Cassette

    from pytest_agentloom.replay import _cassette as cassette_module
    from tests.replay import test_replay_fails_closed as closed

    if "skip_patchers" not in inspect.signature(Cassette.__init__).parameters:
        pytest.skip("this vcrpy has no skip_patchers")
    build = cassette_module._cassette_class

    def without(session: CassetteSession) -> Any:
        class Unpatched(build(session)):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **{**kwargs, "skip_patchers": ("httpx", "httpx2")})

        return Unpatched

    monkeypatch.setattr(cassette_module, "_cassette_class", without)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{counter.url}/v1")
    result, _ = closed._replay_example()
    assert counter.connections == 0
    assert result.steps["classify"].error_code == "request_not_intercepted"


def test_other_threads_get_the_network_back_once_the_sealed_call_ends(counter: ConnectionCounter) -> None:
    """The refusal of threads without the call's context lasts only while a sealed call runs."""
    port = int(counter.url.rsplit(":", 1)[1])
    outcome, _ = _replay(OwnClient(port, "plain thread"))
    assert isinstance(outcome, RequestNotInterceptedError), outcome
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(socket.create_connection(("127.0.0.1", port), 2).close()))
    worker.start()
    worker.join(5)
    assert done == [None]
    for _ in range(200):
        if counter.connections == 1:
            break
        time.sleep(0.01)
    assert counter.connections == 1


def test_a_thread_outside_the_replay_is_refused_while_a_sealed_call_runs(counter: ConnectionCounter) -> None:
    """A background thread of the process (no part of the call) is refused during the call, served after."""
    from pytest_agentloom._core import offline

    port = int(counter.url.rsplit(":", 1)[1])
    inside, results = threading.Event(), []

    class Waits:
        name = "waits"

        async def complete(self, request: LLMRequest) -> LLMResponse:
            inside.set()
            await asyncio.to_thread(time.sleep, 0.5)
            return LLMResponse(text="x", model=request.model)

    def background() -> None:
        inside.wait(5)
        try:
            socket.create_connection(("127.0.0.1", port), 2).close()
            results.append("connected")
        except RequestNotInterceptedError:
            results.append("refused")

    worker = threading.Thread(target=background)
    worker.start()
    _replay(Waits())
    worker.join(5)
    assert results == ["refused"] and counter.connections == 0
    assert offline._SEALED_THREADS == {}  # the count is back to nothing
