"""Every termination reason, and the tool-loop rules, through cassettes recorded against the fake
OpenAI- and Anthropic-compatible server, then replayed offline with the same outcome.

One pytester project holds one test per reason; a single recording run and a single replay run keep
this cheap. Tools write to a log file, so the test can tell which ones ran for real in each run.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import FakeToolCall, text, tool_calls

INNER = textwrap.dedent('''\
    import os

    from pytest_agentloom import tool
    from pytest_agentloom._core.clock import current_clock
    from pytest_agentloom.engine._format.loader import parse_workflow


    def log(line):
        with open(os.environ["TOOL_LOG"], "a") as out:
            out.write(line + "\\n")


    @tool
    def lookup(ticket: int) -> str:
        """Read a ticket."""
        log(f"lookup {ticket}")
        return f"ticket {ticket}: printer on fire"


    @tool
    async def slow_search(query: str, page: int = 1) -> str:
        """Search the archive (25 s each, on the run's clock)."""
        log(f"slow_search {page}")
        await current_clock().sleep(25)
        return "nothing"


    @tool(side_effects=True)
    def send_email(to: str) -> str:
        """Email a customer (needs approval)."""
        log(f"send_email {to}")
        return "sent"


    TOOLS = [lookup, slow_search, send_email]


    def agent(model, **limits):
        extra = "".join(f"    {key}: {value}\\n" for key, value in limits.items())
        return parse_workflow(
            "name: reasons\\nagents:\\n  a:\\n"
            f"    model: {model}\\n    tools: [lookup, slow_search, send_email]\\n"
            "    approval_required: [send_email]\\n    max_tokens: 1000\\n" + extra +
            "steps:\\n  - {id: s, type: agent, agent: a, prompt: 'Handle ticket 7.', output: out}\\n"
        )


    def ended(result, status, reason):
        assert (result.status.value, result.steps["s"].finish_reason) == (status, reason), result.steps["s"]


    def test_done(agentloom):
        ended(agentloom.run(agent("gpt-4o-mini"), tools=TOOLS), "success", "done")


    def test_step_budget(agentloom):
        ended(agentloom.run(agent("gpt-4o-mini", max_steps=2), tools=TOOLS), "failed", "step_budget")


    def test_time_budget(agentloom):
        ended(agentloom.run(agent("claude-test-model", max_seconds=40), tools=TOOLS), "failed", "time_budget")


    def test_cost_budget(agentloom):
        ended(agentloom.run(agent("gpt-4o-mini", max_cost_usd=0.001), tools=TOOLS), "failed", "cost_budget")


    def test_repeated_call(agentloom):
        ended(agentloom.run(agent("claude-test-model"), tools=TOOLS), "failed", "repeated_call")


    def test_stuck(agentloom):
        ended(agentloom.run(agent("gpt-4o-mini", max_stuck=2), tools=TOOLS), "failed", "stuck")


    def test_needs_approval_then_approved(agentloom):
        paused = agentloom.run(agent("gpt-4o-mini"), tools=TOOLS)
        ended(paused, "paused", "needs_approval")
        ended(agentloom.resume(paused, approve=True), "success", "done")


    def test_denied(agentloom):
        paused = agentloom.run(agent("claude-test-model"), tools=TOOLS)
        ended(paused, "paused", "needs_approval")
        ended(agentloom.resume(paused, approve=False), "failed", "denied")


    def test_cancelled(agentloom):
        paused = agentloom.run(agent("gpt-4o-mini"), tools=TOOLS)
        ended(agentloom.resume(paused, approve="cancelled"), "cancelled", "cancelled")


    def test_tool_loop_rules(agentloom):
        flow = parse_workflow(
            "name: loop\\nsteps:\\n  - id: s\\n    type: llm_call\\n    model: gpt-4o-mini\\n"
            "    prompt: 'Ticket 7?'\\n    tools: [{name: lookup}]\\n    max_tool_iterations: 3\\n"
        )
        result = agentloom.run(flow, tools=TOOLS)
        step = result.steps["s"]
        assert (step.output, step.finish_reason) == ("Partial: it is on fire.", "max_tool_iterations")
        codes = [event.data.get("code", "ok") for event in result.trace.events("tool_call")]
        assert codes == ["unknown_tool", "invalid_json", "ok", "ok"]
    ''')


def plan(project: Project) -> None:
    server = project.server
    server.plan("openai", tool_calls(("lookup", {"ticket": 7})), text("Printer fire."))  # done
    server.plan("openai", tool_calls(("lookup", {"ticket": 1})), tool_calls(("lookup", {"ticket": 2})))  # steps
    server.plan("anthropic", tool_calls(("slow_search", {"query": "fire", "page": 1})),
                tool_calls(("slow_search", {"query": "fire", "page": 2})))  # time: 25 s, then 50 s >= 40 s
    server.plan("openai", tool_calls(("lookup", {"ticket": 7}), input_tokens=2000, output_tokens=500))  # cost
    server.plan("anthropic", tool_calls(("lookup", {"ticket": 7})), tool_calls(("lookup", {"ticket": 7})))  # repeat
    server.plan("openai", tool_calls(("export_all", {})), tool_calls(("export_all", {})))  # stuck
    server.plan("openai", tool_calls(("send_email", {"to": "ana@example.org"})), text("Emailed Ana."))  # approve
    server.plan("anthropic", tool_calls(("send_email", {"to": "bo@example.org"})))  # denied
    server.plan("openai", tool_calls(("send_email", {"to": "cy@example.org"})))  # cancelled
    server.plan("openai",  # arguments that aren't JSON exist only in OpenAI's wire format
                tool_calls(("nope", {}), FakeToolCall("lookup", "{not json")),
                tool_calls(("lookup", {"ticket": 7}), ("lookup", {"ticket": 8})),
                tool_calls(("lookup", {"ticket": 9}), content="Partial: it is on fire."))  # the tool loop


@pytest.mark.slow
def test_every_termination_reason_records_and_replays_offline(project: Project) -> None:
    project.pytester.makepyfile(test_reasons=INNER)
    log = project.path / "tools.log"
    project.monkeypatch.setenv("TOOL_LOG", str(log))
    project.live()
    plan(project)
    recorded = project.run("test_reasons.py", "--agentloom-record")
    recorded.assert_outcomes(passed=10)
    assert project.server.pending() == 0
    live_log = log.read_text().splitlines()
    assert live_log.count("send_email ana@example.org") == 1  # approved: sent once
    assert not any(line.startswith(("send_email bo", "send_email cy")) for line in live_log)  # denied, cancelled
    assert "slow_search 3" not in live_log and "lookup 9" not in live_log  # time budget; max_tool_iterations

    log.unlink()
    project.offline()
    replayed = project.run("test_reasons.py")
    replayed.assert_outcomes(passed=10)
    replay_log = log.read_text().splitlines()
    assert not any(line.startswith("send_email") for line in replay_log)  # replayed from the recording
    assert replay_log == [line for line in live_log if not line.startswith("send_email")]
