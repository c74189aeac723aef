"""assert_no_secrets searches the cassette a test is recording, before it is written at the end of the test."""

from __future__ import annotations

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

RECORDING_TEST = """\
import os

import pytest

def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.ok
    agentloom.assert_no_secrets(os.environ["CANARY_SECRET"])  # scrubbed from what will be written
    with pytest.raises(AssertionError) as info:
        agentloom.assert_no_secrets("Classify (auth")  # only in the request the cassette holds
    message = str(info.value)
    assert "in 1 place(s)" in message
    assert "test_support.yaml (cassette, written when the test ends): 'Clas…' at line" in message
"""


def test_assert_no_secrets_searches_the_cassette_being_recorded(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.pytester.makepyfile(test_support=RECORDING_TEST)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    assert "Classify (auth" in project.cassette().read_text()  # what was searched is what got written


TOOL_FLOW = """\
name: mailer
steps:
  - {id: send, type: tool, tool_name: send_email, tool_args: {to: only-in-args@example.org}, output: sent}
"""

TOOL_TEST = """\
import pytest

from pytest_agentloom import tool

@tool(side_effects=True)
def send_email(to: str) -> str:
    '''Send an email.'''
    return "sent"

def test_mailer(agentloom):
    agentloom.run("mailer.yaml", tools=[send_email]).assert_status("success")
    with pytest.raises(AssertionError) as info:
        agentloom.assert_no_secrets("only-in-args@example.org")
    assert "test_mailer.tools.yaml (tool recording, written when the test ends): 'only…' at line" in str(info.value)
"""


def test_assert_no_secrets_searches_the_tool_recording_being_recorded(project: Project) -> None:
    project.pytester.makefile(".yaml", mailer=TOOL_FLOW)
    project.pytester.makepyfile(test_mailer=TOOL_TEST)
    project.run("--agentloom-record", "test_mailer.py").assert_outcomes(passed=1)
    assert "only-in-args@example.org" in project.cassette("test_mailer.py/test_mailer.tools.yaml").read_text()
    # replayed, the recording exists: it is searched as a file
    project.pytester.makepyfile(test_mailer=TOOL_TEST.replace(" (tool recording, written when the test ends)", ""))
    project.run("test_mailer.py").assert_outcomes(passed=1)
