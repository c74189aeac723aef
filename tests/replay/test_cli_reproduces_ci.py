"""A cassette the plugin recorded replays through ``agentloom run --replay``: a CI failure reproduced offline."""

from __future__ import annotations

import json

import pytest

from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import text


@pytest.mark.slow
def test_a_cassette_recorded_by_the_plugin_replays_from_the_command_line(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()  # server stopped, no keys

    done = project.cli("run", "flow.yaml", "--replay", "cassettes/test_support.py/test_support.yaml",
                       "--state", "ticket=Printer on fire", "--state", f"api_token={CANARY_SECRET}", "--json",
                       "--no-record")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["state"]["category"], result["state"]["answer"]) == ("bug", "We are on it.")
    assert CANARY_SECRET not in done.stdout and CANARY_KEY not in done.stdout

    # a different ticket is a different request: the step fails, as in the test
    changed = project.cli("run", "flow.yaml", "--replay", "cassettes/test_support.py/test_support.yaml",
                          "--state", "ticket=Scanner jammed", "--no-record")
    assert changed.returncode == 1, changed.stderr
    assert "classify: failed" in changed.stdout, changed.stdout
    assert "Scanner jammed" in changed.stdout and "UnusedInteractions" not in changed.stderr
