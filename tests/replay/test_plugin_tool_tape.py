"""Tools with side effects under record and replay, end to end through pytester and the fake server."""

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
    tools: [{name: send_email}, {name: lookup}]
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
        return f"sent to {to}"

    @tool
    def lookup(ticket: int) -> str:
        \"\"\"Read a ticket (no side effects: runs in replay too).\"\"\"
        with open(os.environ["LOOKUPS"], "a") as lookups:
            lookups.write(f"{ticket}\\n")
        return "ana@example.org"

    def test_mail(agentloom):
        real = os.environ.get("REAL_TOOLS") == "1"
        result = agentloom.run("mail.yaml", tools={"send_email": send_email, "lookup": lookup}, real_tools=real)
        assert result.status == "success", result.steps["ask"].error
        assert result.state["answer"] == "Emailed Ana."
    """)


def setup(project: Project) -> tuple[object, object]:
    project.pytester.makefile(".yaml", mail=MAIL_FLOW)
    project.pytester.makepyfile(test_mail=MAIL_TEST)
    outbox, lookups = project.path / "outbox.txt", project.path / "lookups.txt"
    project.monkeypatch.setenv("OUTBOX", str(outbox))
    project.monkeypatch.setenv("LOOKUPS", str(lookups))
    return outbox, lookups


def test_a_side_effect_tool_is_recorded_then_replayed_without_running(project: Project) -> None:
    outbox, lookups = setup(project)
    project.live()
    project.server.plan("openai", tool_calls(("lookup", {"ticket": 7})),
                        tool_calls(("send_email", {"to": "ana@example.org"})), text("Emailed Ana."))
    project.run("test_mail.py", "--agentloom-record").assert_outcomes(passed=1)
    tape = project.cassette("test_mail.py/test_mail.tools.yaml")
    assert tape.read_text() == (
        "format_version: 1\ncalls:\n- tool: send_email\n  arguments:\n    to: ana@example.org\n"
        "  result: sent to ana@example.org\n")
    assert outbox.read_text() == "ana@example.org\n"
    recorded = tape.read_text()
    # new_episodes: what the recording has is replayed (the email is not sent again), nothing is lost
    project.run("test_mail.py", "--agentloom-record-mode=new_episodes").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n"
    assert tape.read_text() == recorded

    project.offline()
    project.run("test_mail.py").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n"  # not sent again: the recorded result was used
    assert lookups.read_text() == "7\n7\n7\n"  # a tool without side effects runs for real in replay too

    tape.write_text(recorded + "- tool: send_email\n  arguments:\n    to: bo@example.org\n  result: sent\n")
    unused = project.run("test_mail.py")  # the recording has a call the workflow no longer makes
    unused.assert_outcomes(failed=1)
    unused.stdout.fnmatch_lines(["*did not make 1 of the 2 recorded tool calls with side effects*",
                                 '*send_email {"to": "bo@example.org"}*'])
    assert outbox.read_text() == "ana@example.org\n"

    tape.write_text(recorded)

    tape.write_text("format_version: 1\ncalls: []\n")  # a recording without the call
    replayed = project.run("test_mail.py")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*Tool 'send_email' has side effects, and the recording has no call to it*"])
    assert outbox.read_text() == "ana@example.org\n"

    project.monkeypatch.setenv("REAL_TOOLS", "1")  # the test lets the tool run for real during replay
    project.run("test_mail.py").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\nana@example.org\n"
