"""``--agentloom-live-tools=all``: every tool without side effects is held against the recorded conversation
(the next model request carries its result), and the first that drifts is reported by step, turn and call
as ``tool_drift`` instead of the next turn's ``cassette_mismatch``; tools with side effects still run for
real only when named."""

from __future__ import annotations

import textwrap

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text, tool_calls

FLOW = """\
name: desk
steps:
  - id: ask
    type: llm_call
    model: {model}
    prompt: "Email the owner of ticket 7."
    tools: [{{name: lookup}}, {{name: send_email}}]
    output: answer
"""

TEST = textwrap.dedent("""\
    import os

    from pytest_agentloom import tool

    @tool(side_effects=True)
    def send_email(to: str) -> str:
        \"\"\"Send an email.\"\"\"
        with open(os.environ["OUTBOX"], "a") as outbox:
            outbox.write(to + "\\n")
        return f"sent to {to}"

    @tool
    def lookup(ticket: int) -> str:
        \"\"\"Read a ticket's owner.\"\"\"
        return os.environ.get("OWNER", "ana@example.org")

    def test_desk(agentloom):
        result = agentloom.run("desk.yaml", tools={"send_email": send_email, "lookup": lookup})
        assert result.status == "success", result.steps["ask"].error
        assert result.state["answer"] == "Emailed Ana."
    """)

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-latest"}


def recorded(project: Project, route: str = "openai") -> object:
    """Recorded once: turn 1 looks the ticket up, turn 2 sends the email, turn 3 answers."""
    project.pytester.makefile(".yaml", desk=FLOW.format(model=MODELS[route]))
    project.pytester.makepyfile(test_desk=TEST)
    outbox = project.path / "outbox.txt"
    project.monkeypatch.setenv("OUTBOX", str(outbox))
    project.live()
    project.server.plan(route, tool_calls(("lookup", {"ticket": 7})),
                        tool_calls(("send_email", {"to": "ana@example.org"})), text("Emailed Ana."))
    project.run("test_desk.py", "--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    outbox.unlink()
    return outbox


@pytest.mark.parametrize("route", sorted(MODELS))
def test_all_reports_a_changed_tool_without_side_effects_by_step_turn_and_call(project: Project, route: str) -> None:
    recorded(project, route)
    project.monkeypatch.setenv("OWNER", "bo@example.org")  # the pure tool now answers something else
    result = project.run("test_desk.py", "--agentloom-live-tools=all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*failed step 'ask' (tool_drift): Tool 'lookup' ran for real and returned something else than its "
        "recording (step 'ask', turn 1, call 1 of 'lookup' in the step (*)): the replay stops here, instead of "
        "the next model turn's cassette mismatch.*",
        "*arguments: {\"ticket\": 7}",
        "*recording: cassettes/test_desk.py/test_desk.yaml, interaction #2 (the next model turn)",
        "*recorded -> real:",
        "*result: 'ana@example.org' -> 'bo@example.org'",
    ])
    assert "cassette_mismatch" not in result.stdout.str()


def test_without_all_the_same_change_is_the_next_turns_cassette_mismatch(project: Project) -> None:
    recorded(project)
    project.monkeypatch.setenv("OWNER", "bo@example.org")
    result = project.run("test_desk.py")
    result.assert_outcomes(failed=1)
    assert "cassette_mismatch" in result.stdout.str() and "tool_drift" not in result.stdout.str()


def test_all_passes_when_nothing_changed_and_does_not_run_a_tool_with_side_effects(project: Project) -> None:
    outbox = recorded(project)
    result = project.run("test_desk.py", "--agentloom-live-tools=all")
    result.assert_outcomes(passed=1, warnings=1)
    assert not outbox.exists()  # replayed from the tape, not sent
    result.stdout.fnmatch_lines(["*--agentloom-live-tools=all runs only tools without side effects for real; "
                                 "'send_email' of test_desk.py::test_desk has side effects and is replayed*",
                                 "*--agentloom-live-tools=all,send_email*"])


def test_all_with_a_name_runs_that_tool_for_real_too(project: Project) -> None:
    outbox = recorded(project)
    project.run("test_desk.py", "--agentloom-live-tools=all,send_email").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n"


def test_all_in_the_ini_and_the_marker(project: Project) -> None:
    recorded(project)
    project.monkeypatch.setenv("OWNER", "bo@example.org")
    project.pytester.makeini("[pytest]\nagentloom_live_tools = all\n")
    project.run("test_desk.py").stdout.fnmatch_lines(["*(tool_drift): Tool 'lookup'*"])
    project.pytester.makeini("[pytest]\n")
    marked = TEST.replace("def test_desk", "import pytest\n\n@pytest.mark.agentloom(live_tools=['all'])\n"
                                          "def test_desk")
    project.pytester.makepyfile(test_desk=marked)
    project.run("test_desk.py").stdout.fnmatch_lines(["*(tool_drift): Tool 'lookup'*"])


def test_a_bad_name_beside_all_still_gets_did_you_mean(project: Project) -> None:
    recorded(project)
    result = project.run("test_desk.py", "--agentloom-live-tools=all,send_mail")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*names tool 'send_mail', which test_desk.py::test_desk does not have.*",
                                 "*did you mean 'send_email'?*"])
    typo = project.run("test_desk.py", "--agentloom-live-tools=al")
    typo.stdout.fnmatch_lines(["*did you mean 'all'?*"])
