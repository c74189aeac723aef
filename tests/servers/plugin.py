"""Pytest fixtures for the fake LLM server.

List this module in a test module's ``pytest_plugins`` (or import the
fixtures into a ``conftest.py``)::

    pytest_plugins = ["tests.servers.plugin"]

    def test_it(fake_llm):
        fake_llm.plan("openai", text("hi"))
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
