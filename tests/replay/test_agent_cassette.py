"""An agent recorded against the fake OpenAI- and Anthropic-compatible server, replayed offline: the same run."""

from __future__ import annotations

import textwrap

from tests.replay.helpers import Project
from tests.servers.fake_llm import text, tool_calls

AGENT_FLOW = """\
name: desk
agents:
  reader:
    model: gpt-4o-mini
    tools: [lookup]
    max_tokens: 200
  wanderer:
    model: claude-test-model
    tools: [lookup]
    max_steps: 2
    max_tokens: 200
    on_budget: succeed
steps:
  - {id: read, type: agent, agent: reader, prompt: "What is ticket 7 about?", output: summary}
  - {id: wander, type: agent, agent: wanderer, depends_on: [read], prompt: "Dig into {state.summary}", output: more}
"""

AGENT_TEST = textwrap.dedent("""\
    import os

    from pytest_agentloom import tool

    @tool
    def lookup(ticket: int) -> str:
        \"\"\"Read a ticket.\"\"\"
        return f"ticket {ticket}: printer on fire"

    def test_desk(agentloom):
        result = agentloom.run("desk.yaml", tools=[lookup])
        assert result.status == "success", result.steps
        assert [result.steps[s].finish_reason for s in ("read", "wander")] == ["done", "step_budget"]
        assert result.state["summary"] == "A printer fire."
        with open(os.environ["RESULT_FILE"], "a") as out:
            out.write(result.to_json() + "\\n")
    """)


def test_an_agent_replays_from_its_cassette_with_the_same_result(project: Project) -> None:
    project.pytester.makefile(".yaml", desk=AGENT_FLOW)
    project.pytester.makepyfile(test_desk=AGENT_TEST)
    results = project.path / "results.jsonl"
    project.monkeypatch.setenv("RESULT_FILE", str(results))
    project.live()
    project.server.plan("openai", tool_calls(("lookup", {"ticket": 7})), text("A printer fire."))
    project.server.plan("anthropic", tool_calls(("lookup", {"ticket": 8})), tool_calls(("lookup", {"ticket": 9})))
    project.run("test_desk.py", "--agentloom-record").assert_outcomes(passed=1)
    assert len(project.server.requests) == 4

    project.offline()
    project.run("test_desk.py").assert_outcomes(passed=1)
    recorded, replayed = results.read_text().splitlines()
    assert recorded == replayed
    cassette = project.cassette("test_desk.py/test_desk.yaml").read_text()
    assert "claude-test-model" in cassette and "gpt-4o-mini" in cassette
