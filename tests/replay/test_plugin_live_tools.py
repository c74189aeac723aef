"""Replay the model, run the tools: ``--agentloom-live-tools`` runs tools with side effects for real over a
replay and reports the first result that differs from the tool tape, by step, turn and call."""

from __future__ import annotations

import textwrap

from tests.replay.helpers import Project
from tests.servers.fake_llm import text, tool_calls

MAIL_FLOW = """\
name: mail
steps:
  - id: ask
    type: llm_call
    model: gpt-4o-mini
    prompt: "Email the customer about ticket 7."
    tools: [{name: send_email}]
    output: answer
"""

MAIL_TEST = textwrap.dedent("""\
    import os

    from pytest_agentloom import tool

    @tool(side_effects=True)
    def send_email(to: str) -> str:
        \"\"\"Send an email.\"\"\"
        with open(os.environ["OUTBOX"], "a") as outbox:
            outbox.write(to + "\\n")
        return os.environ.get("SENT", "sent") + f" to {to}"

    @tool
    def lookup(ticket: int) -> str:
        \"\"\"Read a ticket.\"\"\"
        return "ana@example.org"

    def test_mail(agentloom):
        result = agentloom.run("mail.yaml", tools={"send_email": send_email, "lookup": lookup})
        assert result.status == "success", result.steps["ask"].error
        assert result.state["answer"] == "Emailed Ana."
    """)


def recorded(project: Project) -> object:
    project.pytester.makefile(".yaml", mail=MAIL_FLOW)
    project.pytester.makepyfile(test_mail=MAIL_TEST)
    outbox = project.path / "outbox.txt"
    project.monkeypatch.setenv("OUTBOX", str(outbox))
    project.live()
    project.server.plan("openai", tool_calls(("send_email", {"to": "ana@example.org"})), text("Emailed Ana."))
    project.run("test_mail.py", "--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    outbox.unlink()
    return outbox


def test_a_tool_whose_real_result_matches_the_tape_runs_and_passes(project: Project) -> None:
    outbox = recorded(project)
    project.run("test_mail.py", "--agentloom-live-tools=send_email").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n"  # it ran for real


def test_the_first_divergence_is_reported_by_step_turn_and_call(project: Project) -> None:
    recorded(project)
    project.monkeypatch.setenv("SENT", "queued")  # the tool now answers something else
    result = project.run("test_mail.py", "--agentloom-live-tools=send_email")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*failed step 'ask' (tool_drift): Tool 'send_email' ran for real and returned something else than its "
        "recording (step 'ask', turn 1, call 1 of 'send_email' (call_*)): the replay stops here, before the next "
        "model turn goes off the cassette.*",
        "*arguments: {\"to\": \"ana@example.org\"}",
        "*recorded -> real:",
        "*result: 'sent to ana@example.org' -> 'queued to ana@example.org'",
    ])
    assert "cassette_mismatch" not in result.stdout.str()  # reported before the next turn went off the cassette


def test_without_the_option_the_tool_is_replayed_and_does_not_run(project: Project) -> None:
    outbox = recorded(project)
    project.monkeypatch.setenv("SENT", "queued")
    project.run("test_mail.py").assert_outcomes(passed=1)
    assert not outbox.exists()


def test_a_tool_without_side_effects_or_an_unknown_one_is_refused(project: Project) -> None:
    recorded(project)
    unknown = project.run("test_mail.py", "--agentloom-live-tools=send_mail")
    unknown.assert_outcomes(failed=1)
    unknown.stdout.fnmatch_lines(["*--agentloom-live-tools names tool 'send_mail', which test_mail.py::test_mail "
                                  "does not have.*", "*did you mean 'send_email'?*"])
    plain = project.run("test_mail.py", "--agentloom-live-tools=lookup")
    plain.assert_outcomes(failed=1)
    plain.stdout.fnmatch_lines(["*names tool 'lookup', which has no side effects*"])
