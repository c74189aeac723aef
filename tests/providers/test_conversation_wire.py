"""A two-speaker conversation through the real OpenAI and Anthropic adapters, against the fake server on 127.0.0.1."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.providers import default_gateway
from tests.servers.fake_llm import text
from tests.servers.plugin import fake_llm, fake_llm_server  # noqa: F401  (fixtures)

FLOW = textwrap.dedent("""\
    name: wire-debate
    config: {{model: {model}}}
    steps:
      - id: plan
        type: llm_call
        conversation: state.debate
        speaker: alice
        system_prompt: "You propose plans."
        prompt: "Plan a rollout."
        output: plan
      - id: critique
        type: llm_call
        depends_on: [plan]
        conversation: state.debate
        speaker: bob
        system_prompt: "You criticise plans."
        output: critique
    """)


@pytest.mark.parametrize(("model", "route"), [("gpt-4o-mini", "openai"), ("claude-test-model", "anthropic")])
def test_the_second_speaker_sees_the_first_by_name(fake_llm: Any, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                   tmp_path: Path, model: str, route: str) -> None:
    for name, value in {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_llm.openai_base_url,
                        "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "debate.yaml"
    path.write_text(FLOW.format(model=model))
    fake_llm.plan(route, text("Ship to 5% first."), text("No rollback."))
    result = run_workflow(path, provider=default_gateway(), clock=VirtualClock(), runs_dir=False)
    assert result.status == "success", {k: v.error for k, v in result.steps.items()}
    critic = fake_llm.requests[1].json
    if route == "openai":
        assert critic["messages"] == [
            {"role": "system", "content": "You criticise plans."},
            {"role": "user", "content": "Plan a rollout."},
            {"role": "user", "content": "Ship to 5% first.", "name": "alice"},
        ]
    else:
        assert critic["system"] == "You criticise plans."
        assert critic["messages"] == [{"role": "user", "content": "Plan a rollout."},
                                      {"role": "user", "content": "[alice] Ship to 5% first."}]
    assert [m.get("name") for m in result.state["debate"]["messages"]] == [None, "alice", "bob"]
