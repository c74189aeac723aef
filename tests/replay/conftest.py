"""Fixtures of the cassette tests: a fake LLM server on 127.0.0.1 and a pytester project that uses it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.replay.helpers import FLOW, TEST_FILE, Project
from tests.servers.fake_llm import FakeLLMServer


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    """A fresh fake LLM server for one test (stop it to prove a replay needs no network)."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake_server: FakeLLMServer) -> Project:
    """A pytester folder with ``flow.yaml`` and ``test_support.py``, no API keys and no ``CI`` in the environment."""
    # Import the heavy modules once in this process: pytester's in-process runs keep what was imported before
    # them, instead of importing the SDKs again for every inner run.
    import anthropic  # noqa: F401
    import deepdiff  # noqa: F401
    import openai  # noqa: F401
    import vcr  # noqa: F401

    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_support=TEST_FILE)
    pytester.makeini("[pytest]\n")
    return Project(pytester, monkeypatch, fake_server)
