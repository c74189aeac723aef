"""A workflow over OpenAI's Responses API (tools, reasoning, a stream) records, then replays offline through
the ``agentloom`` fixture and through ``agentloom run --replay``, with encrypted reasoning sent back."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import text, tool_calls

FLOW = """\
name: sums
config:
  model: o4-mini
  providers: {openai: {api: responses}}
state:
  api_token: ""
state_schema:
  api_token: {redact: true}
steps:
  - id: solve
    type: llm_call
    prompt: "Add 12 and 7 (auth {state.api_token})."
    thinking: {enabled: true, level: high}
    tools:
      - name: add
        description: Add two numbers.
        parameters: {type: object, properties: {a: {type: integer}, b: {type: integer}}}
    output: answer
  - id: explain
    type: llm_call
    depends_on: [solve]
    prompt: "Explain {state.answer}."
    stream: true
    thinking: {enabled: true, level: low}
    output: why
"""

TOOLS = """\
def add(a: int, b: int) -> int:
    return a + b

TOOLS = {"add": add}
"""

TEST_FILE = """\
import os
from sums_tools import TOOLS

def test_support(agentloom):
    result = agentloom.run("flow.yaml", tools=TOOLS, state={"api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    assert result.state["answer"] == "19" and result.state["why"] == "Because twelve and seven make nineteen."
    assert result.steps["solve"].reasoning_content == "Add them."
    assert result.steps["explain"].reasoning_content == "Say why."
    assert result.steps["solve"].reasoning_tokens == 5
"""


def setup(project: Project) -> None:
    project.pytester.makefile(".yaml", flow=FLOW)
    project.pytester.makepyfile(test_support=TEST_FILE, sums_tools=TOOLS)
    project.live()
    project.server.plan("responses", tool_calls(("add", {"a": 12, "b": 7})),
                        text("19", reasoning="Add them.", reasoning_tokens=5),
                        text("Because twelve and seven make nineteen.", reasoning="Say why."))


@pytest.mark.slow
def test_responses_record_then_replay_through_the_fixture_and_the_cli(project: Project) -> None:
    setup(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    sent = [request.json for request in project.server.requests]
    assert [request.path for request in project.server.requests] == ["/v1/responses"] * 3
    assert sent[1]["input"][1]["encrypted_content"] == "gAAAAA_fake_0001" and sent[2]["stream"] is True

    document = yaml.safe_load(project.cassette().read_text())
    streamed = document["interactions"][2]["response"]["body"]
    assert "event: response.completed" in json.dumps(streamed)  # the stream, kept as it came
    for path in project.files():
        assert CANARY_KEY.encode() not in path.read_bytes() and CANARY_SECRET.encode() not in path.read_bytes()

    project.offline()
    project.run().assert_outcomes(passed=1)

    done = project.cli("run", "flow.yaml", "--replay", "cassettes/test_support.py/test_support.yaml",
                       "--tools", "sums_tools:TOOLS", "--state", f"api_token={CANARY_SECRET}", "--json", "--no-record")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["state"]["answer"], result["state"]["why"]) == ("19", "Because twelve and seven make nineteen.")
