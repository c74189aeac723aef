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
