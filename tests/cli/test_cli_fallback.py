"""``agentloom run`` and ``agentloom validate`` with a step's ``fallback``: the real SDKs against the fake server."""

from __future__ import annotations

import json

import pytest

from pytest_agentloom.cli import main
from tests.servers.fake_llm import FakeLLMServer, fail, text

FLOW = """\
name: triage
config: {retry: {max_retries: 0}}
steps:
  - id: classify
    type: llm_call
    model: claude-haiku-4-5
    prompt: "Label: printer on fire"
    output: label
    fallback:
      - {provider: openai, model: gpt-4o-mini, on: [overloaded]}
"""


@pytest.fixture
def server(monkeypatch):
    with FakeLLMServer() as running:
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENTLOOM_REDACT_STATE_KEYS"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", running.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli-fallback")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", running.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-cli-fallback")
        yield running


def test_run_falls_back_and_says_so_in_the_trace(tmp_path, monkeypatch, capsys, server):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flow.yaml").write_text(FLOW)
    server.plan("anthropic", fail(529))
    server.plan("openai", text("bug"))
    assert main(["run", "flow.yaml", "--json", "--no-record"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["state"]["label"] == "bug"
    [event] = [event for event in result["trace"] if event["kind"] == "fallback"]
    assert (event["data"]["provider"], event["data"]["to_provider"], event["data"]["to_model"]) == (
        "anthropic", "openai", "gpt-4o-mini")
    assert [request.json["model"] for request in server.requests] == ["claude-haiku-4-5", "gpt-4o-mini"]


def test_run_names_every_provider_when_all_fail(tmp_path, monkeypatch, capsys, server):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flow.yaml").write_text(FLOW)
    server.plan("anthropic", fail(529))
    server.plan("openai", fail(529, "busy too"))
    assert main(["run", "flow.yaml", "--no-record"]) != 0
    printed = capsys.readouterr()
    out = printed.out + printed.err
    assert "classify: failed  llm_call 'classify': every provider tried failed, in order:" in out
    assert "anthropic (model claude-haiku-4-5)" in out and "openai (model gpt-4o-mini)" in out


def test_validate_names_the_line_and_the_closest_provider_and_kind(tmp_path, capsys):
    (tmp_path / "flow.yaml").write_text(FLOW.replace("provider: openai", "provider: opnai").replace(
        "[overloaded]", "[overload]"))
    assert main(["validate", str(tmp_path / "flow.yaml")]) == 3
    out = capsys.readouterr()
    text_ = out.out + out.err
    assert "flow.yaml:10" in text_
    assert "fallback[0] names provider 'opnai', which is not a provider" in text_
    assert "did you mean 'openai'?" in text_
    assert "fallback[0].on lists 'overload'" in text_ and "did you mean 'overloaded'?" in text_
