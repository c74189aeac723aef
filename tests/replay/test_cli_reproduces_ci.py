"""A cassette the plugin recorded replays through ``agentloom run --replay``: a CI failure reproduced offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import text


def test_a_cassette_recorded_by_the_plugin_replays_from_the_command_line(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()  # server stopped, no keys

    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                          "AGENTLOOM_REDACT_STATE_KEYS")}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens there: a replay must not call out
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agentloom.cli", "run", "flow.yaml", "--replay",
         "cassettes/test_support.py/test_support.yaml", "--state", "ticket=Printer on fire",
         "--state", f"api_token={CANARY_SECRET}", "--json", "--no-record"],
        cwd=project.path, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["state"]["category"], result["state"]["answer"]) == ("bug", "We are on it.")
    assert CANARY_SECRET not in done.stdout and CANARY_KEY not in done.stdout

    changed = subprocess.run(  # a different ticket is a different request: the step fails, as in the test
        [sys.executable, "-m", "pytest_agentloom.cli", "run", "flow.yaml", "--replay",
         "cassettes/test_support.py/test_support.yaml", "--state", "ticket=Scanner jammed", "--no-record"],
        cwd=project.path, env=env, capture_output=True, text=True, timeout=60,
    )
    assert changed.returncode == 1, changed.stderr
    assert "classify: failed" in changed.stdout, changed.stdout
    assert "Scanner jammed" in changed.stdout and "UnusedInteractions" not in changed.stderr
