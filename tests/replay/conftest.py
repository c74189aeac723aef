"""Fixtures of the cassette tests: a fake LLM server on 127.0.0.1 and a pytester project that uses it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

# Import the heavy modules once, when this conftest is collected: pytester's in-process runs keep what was
# imported before them instead of importing the SDKs again for every inner run. This must happen before any
# pytester fixture snapshots sys.modules (so not inside a fixture): httpx fills its exception map once, from
# the httpcore copy it first sees; a copy imported during a pytester test is dropped when that test ends, and
# a later dropped connection in this process would then escape as a raw httpcore error, not a connection error.
import anthropic  # noqa: F401
import deepdiff  # noqa: F401
import httpcore  # noqa: F401
import openai  # noqa: F401
import pytest
import vcr  # noqa: F401

with contextlib.suppress(ImportError):  # SDK versions still on httpx have no httpcore2
    import httpcore2  # noqa: F401

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
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_support=TEST_FILE)
    pytester.makeini("[pytest]\n")
    return Project(pytester, monkeypatch, fake_server)
