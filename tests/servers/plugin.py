"""Pytest fixtures for the fake LLM server.

Import the fixtures into the ``conftest.py`` of the tests that need them::

    from tests.servers.plugin import fake_llm, fake_llm_server  # noqa: F401

    def test_it(fake_llm):
        fake_llm.plan("openai", text("hi"))

(Listing ``"tests.servers.plugin"`` in a test module's ``pytest_plugins``
works too, but not together with a conftest import in the same run.)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_llm import FakeLLMServer

__all__ = ["fake_llm", "fake_llm_server"]


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """One fake LLM server for the session (per xdist worker), on an ephemeral 127.0.0.1 port."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The session's fake LLM server, with no plans, no recorded requests and its id counter at zero."""
    fake_llm_server.reset()
    yield fake_llm_server
    fake_llm_server.reset()
