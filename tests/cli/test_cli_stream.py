"""``agentloom run --stream`` as a real subprocess against the fake LLM server on 127.0.0.1 (docs/providers.md).

Text is printed as it arrives, without step names; with ``--json`` nothing but the result is printed, and the
result carries each streamed step's ``time_to_first_token`` and a reasoning step's ``reasoning_content``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers.fake_llm import FakeLLMServer, text

pytestmark = pytest.mark.slow

FLOW = """\
name: stream
config: {model: gpt-4o-mini, provider: openai}
steps:
  - {id: a, type: llm_call, prompt: "first"}
  - {id: b, type: llm_call, prompt: "second", depends_on: [a]}
"""

REASONING = """\
name: think
config: {model: claude-test-model, provider: anthropic, stream: true}
steps:
  - id: plan
    type: llm_call
    prompt: "Plan it."
    thinking: {enabled: true, budget_tokens: 2000}
    output: plan
"""


@pytest.fixture
def server():
    with FakeLLMServer() as running:
        yield running


def agentloom(tmp_path: Path, server: FakeLLMServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OPENAI_", "ANTHROPIC_", "AGENTLOOM_"))}
    env.update(OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="sk-test-stream-0000",
               ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-test-stream-0000")
    return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args, "--no-record"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)


def test_stream_prints_text_as_it_arrives_then_the_summary(tmp_path, server):
    (tmp_path / "flow.yaml").write_text(FLOW)
    server.plan("openai", text("Alpha arrives in pieces."), text("Beta follows."))
    done = agentloom(tmp_path, server, "run", "flow.yaml", "--stream")
    assert done.returncode == 0, done.stderr
    streamed, _, summary = done.stdout.partition("stream: success")
    assert streamed == "Alpha arrives in pieces.Beta follows.\n"  # no step names; one newline before the summary
    assert "a: success" in summary and "b: success" in summary
    assert all(request.json["stream"] is True for request in server.requests_for("openai"))


def test_without_stream_nothing_is_printed_as_it_goes(tmp_path, server):
    (tmp_path / "flow.yaml").write_text(FLOW.replace("provider: openai}", "provider: openai, stream: true}"))
    server.plan("openai", text("Alpha."), text("Beta."))
    done = agentloom(tmp_path, server, "run", "flow.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stream: success") and "Alpha." not in done.stdout
    assert all(request.json["stream"] is True for request in server.requests_for("openai"))  # config.stream


def test_stream_with_json_prints_only_the_result(tmp_path, server):
    (tmp_path / "think.yaml").write_text(REASONING)
    server.plan("anthropic", text("Drain, then switch.", output_tokens=4, reasoning_tokens=6,
                                  reasoning="Consumers hold messages; drain them first."))
    done = agentloom(tmp_path, server, "run", "think.yaml", "--stream", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # nothing else on stdout
    step = result["steps"]["plan"]
    assert step["output"] == "Drain, then switch."
    assert step["reasoning_content"] == "Consumers hold messages; drain them first."
    assert isinstance(step["time_to_first_token"], float) and step["time_to_first_token"] >= 0
    assert "drain them first" not in json.dumps(result["state"])
    [sent] = server.requests_for("anthropic")
    assert sent.json["thinking"] == {"type": "enabled", "budget_tokens": 2000} and sent.json["max_tokens"] == 6096


SECRET_FLOW = """\
name: secret
config: {model: gpt-4o-mini, provider: openai}
state_schema: {passphrase: {redact: true}}
steps:
  - {id: a, type: llm_call, prompt: "Repeat {state.passphrase}"}
"""


def test_stream_redacts_a_secret_split_across_pieces_and_api_keys(tmp_path, server):
    (tmp_path / "flow.yaml").write_text(SECRET_FLOW)
    (tmp_path / ".agentloom").mkdir()
    (tmp_path / ".agentloom" / "salt").write_text("stream-salt\n")
    passphrase = "correct horse battery staple canary"
    server.plan("openai", text(f"It is {passphrase}, and the key is sk-test-stream-0000 ok."))
    done = agentloom(tmp_path, server, "run", "flow.yaml", "--stream", "--state", f"passphrase={passphrase}")
    assert done.returncode == 0, done.stderr
    streamed = done.stdout.partition("secret: success")[0]
    for word in ("horse", "battery", "staple", "canary", "sk-test-stream"):
        assert word not in done.stdout + done.stderr
    from pytest_agentloom._redaction.redactor import make_marker

    assert streamed == f"It is {make_marker(passphrase, salt=b'stream-salt')}, and the key is <SCRUBBED> ok.\n"
