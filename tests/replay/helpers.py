"""Helpers of the cassette tests: the workflow, the test file and canary values used by the pytester projects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vcr.request import Request

import pytest_agentloom
from tests.servers.fake_llm import FakeLLMServer

CANARY_KEY = "sk-canary-0123456789abcdef"
CANARY_SECRET = "canary-secret-7f3a9c"

FLOW = """\
name: support
state_schema:
  api_token: {redact: true}
state:
  ticket: ""
  api_token: ""
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify (auth {state.api_token}): {state.ticket}"
    output: category
  - id: reply
    type: llm_call
    depends_on: [classify]
    model: gpt-4o-mini
    prompt: "Reply to a {state.category} ticket: {state.ticket}"
    output: answer
"""

TEST_FILE = """\
import os

def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    assert result.state["category"] == "bug"
    assert result.state["answer"] == "We are on it."
"""


class Project:
    """A pytester folder with a workflow and a test, and helpers to record and replay it."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.server = server
        self.path: Path = pytester.path
        monkeypatch.delenv("CI", raising=False)
        monkeypatch.setenv("CANARY_SECRET", CANARY_SECRET)
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                     "AGENTLOOM_REDACT_STATE_KEYS"):
            monkeypatch.delenv(name, raising=False)

    def live(self) -> None:
        """Point the SDKs at the fake server, with a canary key."""
        self.monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
        self.monkeypatch.setenv("OPENAI_BASE_URL", self.server.openai_base_url)
        self.monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY_KEY)
        self.monkeypatch.setenv("ANTHROPIC_BASE_URL", self.server.url)

    def offline(self) -> None:
        """No keys, no base URLs, and the server stopped."""
        self.server.stop()
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            self.monkeypatch.delenv(name, raising=False)

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:benchmark", *args)

    def refused_under_ci(self, addopts: str) -> pytest.RunResult:
        """Run under ``CI=true`` with ``addopts`` in ``PYTEST_ADDOPTS`` (not typed): a usage error, nothing sent."""
        self.monkeypatch.setenv("CI", "true")
        self.monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
        refused = self.run()
        self.monkeypatch.delenv("PYTEST_ADDOPTS")
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        assert self.server.requests == []
        return refused

    def cassette(self, name: str = "test_support.py/test_support.yaml") -> Path:
        return self.path / "cassettes" / name

    def files(self) -> list[Path]:
        return [path for path in self.path.rglob("*") if path.is_file()]

    def assert_no_canaries(self) -> None:
        """No file the project holds (cassettes, tapes, snapshots, reports...) has the canary key or secret."""
        for path in self.files():
            data = path.read_bytes()
            assert CANARY_KEY.encode() not in data, path
            assert CANARY_SECRET.encode() not in data, path

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``agentloom <args>`` in a subprocess, offline: no keys, and an OpenAI base URL nothing listens on."""
        env = {key: value for key, value in os.environ.items()
               if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                              "AGENTLOOM_REDACT_STATE_KEYS")}
        env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # a replay must not call out
        package_root = str(Path(pytest_agentloom.__file__).parent.parent)  # this checkout, not another install
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=self.path, env=env,
                              capture_output=True, text=True, timeout=60)


def make_request(payload: object, uri: str = "https://api.openai.com/v1/chat/completions",
                 headers: dict[str, str] | None = None) -> Request:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Request("POST", uri, raw, headers or {"content-type": "application/json"})
