"""Structured output through the real OpenAI and Anthropic adapters, against the fake server on 127.0.0.1."""

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
    name: wire
    config: {{model: {model}}}
    steps:
      - id: extract
        type: llm_call
        prompt: "Name in: Ana wrote."
        response_schema: {{type: json_schema, schema: {{type: object, properties: {{name: {{type: string}}}}}}}}
        output: person
    """)


@pytest.mark.parametrize(("model", "route", "reply"), [
    ("gpt-4o-mini", "openai", '{"name": "Ana"}'),
    ("claude-test-model", "anthropic", '"name": "Ana"}'),  # continues the prefilled "{"
])
def test_structured_output_over_the_wire(fake_llm: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # noqa: F811
                                         model: str, route: str, reply: str) -> None:
    for name, value in {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_llm.openai_base_url,
                        "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "wire.yaml"
    path.write_text(FLOW.format(model=model))
    fake_llm.plan(route, text(reply))
    result = run_workflow(path, provider=default_gateway(), clock=VirtualClock(), runs_dir=False)
    assert result.status == "success", result.steps["extract"].error
    assert result.state["person"] == {"name": "Ana"}
    [request] = fake_llm.requests
    body = request.json
    if route == "openai":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["name"]
    else:
        assert "response_format" not in body
        assert body["messages"][-1]["role"] == "assistant"
        assert "JSON Schema" in str(body["system"])
