"""``config.providers``: a workflow says where each provider is and which variable holds its key."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentloom import VirtualClock, WorkflowError, run_workflow
from pytest_agentloom.engine import parse_workflow
from pytest_agentloom.providers import default_gateway
from tests.servers.fake_llm import text


def _workflow(providers_block: str):
    providers = textwrap.indent(providers_block, "    ")
    return parse_workflow(
        "name: configured\n"
        "config:\n"
        "  model: gpt-4o-mini\n"
        "  providers:\n"
        f"{providers}"
        "steps:\n"
        "  - {id: ask, type: llm_call, prompt: hello}\n"
        "  - {id: ask_claude, type: llm_call, model: claude-test, prompt: hi, depends_on: [ask]}\n"
    )


def test_base_urls_and_key_variables_come_from_config(fake_llm, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-team-openai")
    monkeypatch.setenv("TEAM_CLAUDE_KEY", "sk-team-claude")
    workflow = _workflow(
        f"openai: {{base_url: '{fake_llm.openai_base_url}', api_key_env: TEAM_OPENAI_KEY}}\n"
        f"anthropic: {{base_url: '{fake_llm.url}', api_key_env: TEAM_CLAUDE_KEY, timeout: 30}}\n"
    )
    fake_llm.plan("openai", text("from openai"))
    fake_llm.plan("anthropic", text("from claude"))

    result = run_workflow(workflow, provider=default_gateway(workflow.config), clock=VirtualClock(), runs_dir=False)

    assert result.ok, result.steps
    assert (result.state["steps"]["ask"]["output"], result.state["steps"]["ask_claude"]["output"]) == (
        "from openai", "from claude")
    openai_request, claude_request = fake_llm.requests_for("openai")[0], fake_llm.requests_for("anthropic")[0]
    assert openai_request.headers["authorization"] == "Bearer sk-team-openai"
    assert "sk-team-claude" in (claude_request.headers.get("x-api-key") or claude_request.headers["authorization"])


def test_a_named_key_variable_that_is_unset_fails_the_step_naming_it(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    monkeypatch.delenv("TEAM_OPENAI_KEY", raising=False)
    workflow = _workflow(f"openai: {{base_url: '{fake_llm.openai_base_url}', api_key_env: TEAM_OPENAI_KEY}}\n")

    result = run_workflow(workflow, provider=default_gateway(workflow.config), clock=VirtualClock(), runs_dir=False)

    assert result.steps["ask"].status == "failed"
    assert "TEAM_OPENAI_KEY" in result.steps["ask"].error
    assert fake_llm.requests_for("openai") == []


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        ("opneai: {base_url: 'http://127.0.0.1:1'}\n", "providers.opneai"),
        ("openai: {api_key: sk-secret}\n", "Unknown key 'api_key'"),
        ("openai: {api_key_env: 'not a name'}\n", "providers.openai.api_key_env"),
    ],
    ids=["unknown-provider", "no-keys-in-files", "bad-variable-name"],
)
def test_bad_provider_settings_fail_at_load(block, fragment):
    with pytest.raises(WorkflowError) as caught:
        _workflow(block)
    assert fragment in str(caught.value)
