"""Human-in-the-loop tests through a cassette: one recording of a run that pauses at an approval gate,
replayed offline and resumed both ways (approved and rejected, sync and async), with the failure of a
run that never reached its pause shown as it is, and no run record left in the project folder.
"""

from __future__ import annotations

import textwrap

import pytest

# imported here, before the in-process runs: a module one of them first imports is dropped when it ends, and
# the package's lazy exports would hand the next run a function whose result class is no longer its own
import pytest_agentloom.engine._entry.resume_workflow
import pytest_agentloom.testing._harness  # noqa: F401
from tests.replay.helpers import Project

GATED = """\
name: outreach
steps:
  - {id: lookup, type: tool, tool_name: lookup, tool_args: {topic: "{state.topic}"}, output: facts}
  - id: draft
    type: llm_call
    depends_on: [lookup]
    model: gpt-4o-mini
    prompt: "Draft an email about {state.topic}: {state.facts}"
    output: draft
  - {id: gate, type: approval_gate, depends_on: [draft], message: "Send it?", output: decision}
  - id: route
    type: router
    depends_on: [gate]
    conditions:
      - {expression: "decision == 'approved'", target: send}
    default: discard
  - {id: send, type: tool, tool_name: send_email, tool_args: {body: "{state.draft}"}, output: sent}
  - {id: discard, type: tool, tool_name: discard, output: sent}
"""

INNER = textwrap.dedent('''\
    import os

    import pytest

    import pytest_agentloom
    from pytest_agentloom import tool


    @tool
    def lookup(topic: str) -> str:
        """Facts about a topic."""
        return f"{topic} purr"


    @tool(side_effects=True)
    def send_email(body: str) -> str:
        """Send the email (recorded once, replayed after)."""
        with open(os.environ["SENT_LOG"], "a") as log:
            log.write(body + "\\n")
        return "sent"


    @tool
    def discard() -> str:
        """Drop the draft."""
        return "discarded"


    TOOLS = [lookup, send_email, discard]


    @pytest.fixture
    def anyio_backend():
        return "asyncio"


    def test_both_ways(agentloom):
        paused = agentloom.run("flow.yaml", state={"topic": os.environ.get("TOPIC", "cats")}, tools=TOOLS)
        approved = agentloom.resume(paused, approve=True)
        rejected = agentloom.resume(paused, approve=False)
        again = agentloom.resume(paused, approve=True)
        assert (approved.state["sent"], rejected.state["sent"], again.state["sent"]) == ("sent", "discarded", "sent")
        agentloom.assert_snapshot(approved)


    @pytest.mark.anyio
    async def test_async(agentloom):
        paused = await agentloom.arun("flow.yaml", state={"topic": "cats"}, tools=TOOLS)
        rejected = await agentloom.aresume(paused, approve=False)
        approved = await agentloom.aresume(paused)
        assert (rejected.state["sent"], approved.state["sent"]) == ("discarded", "sent")
        assert rejected.resumed_from is paused and rejected in agentloom.results


    @pytest.mark.anyio
    async def test_engine_api(agentloom):
        paused = await agentloom.arun("flow.yaml", state={"topic": "cats"}, tools=TOOLS)
        rejected = await pytest_agentloom.aresume_workflow(paused, decision=False, tools=TOOLS)
        assert rejected.state["sent"] == "discarded"
        assert "agentloom_runs" not in str(rejected.record_path)
    ''')


@pytest.mark.slow
def test_one_recording_is_resumed_both_ways_and_a_run_that_never_paused_shows_why(project: Project) -> None:
    project.monkeypatch.delenv("AGENTLOOM_RUNS_DIR", raising=False)  # the suite's own: a test's default here
    log = project.path / "sent.log"
    project.monkeypatch.setenv("SENT_LOG", str(log))
    project.pytester.makefile(".yaml", flow=GATED)
    project.pytester.makepyfile(test_gated=INNER)
    project.live()
    project.server.plan("openai", *["Dear all, cats purr."] * 3)
    project.run("test_gated.py", "--agentloom-record", "--agentloom-create-snapshots", "-p", "anyio").assert_outcomes(
        passed=3)
    project.offline()
    log.unlink()

    project.run("test_gated.py", "-p", "anyio").assert_outcomes(passed=3)  # approve and reject, one recording
    assert not log.exists()  # the email was replayed from the recording, never sent
    snapshot = (project.path / "__agentloom_snapshots__" / "test_gated" / "test_both_ways.yaml").read_text()
    assert "content: 'Draft an email about cats: cats purr'" in snapshot  # the request sent before the pause
    assert "- tool: lookup" in snapshot and "- tool: send_email" in snapshot  # tool calls before and after it
    assert not (project.path / "agentloom_runs").exists()  # no test API wrote a run record into the project

    project.monkeypatch.setenv("TOPIC", "dogs")  # the draft's request is not the recorded one: no pause
    failed = project.run("test_gated.py", "-p", "anyio", "-k", "both_ways")
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    assert "no running event loop" not in out and "start a new run" not in out
    assert "CheckpointError: agentloom.resume() got run" in out
    assert "did not pause: step 'draft' failed first (cassette_mismatch)" in out
