"""Cassette and tool tape names are one-to-one: ids that sanitise alike record to distinct files."""

from __future__ import annotations

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

IDS = ["x/y", "x_y", "x:y"]

TESTS = """
import os
import pytest

@pytest.mark.parametrize("ticket", IDS_HERE)
def test_named(agentloom, ticket):
    result = agentloom.run("flow.yaml", state={"ticket": ticket, "api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    assert result.state["category"] == "bug " + ticket  # replayed from this test's own cassette
""".replace("IDS_HERE", repr(IDS))


def test_ids_that_sanitise_alike_record_distinct_cassettes(project: Project) -> None:
    project.pytester.makepyfile(test_names=TESTS)
    project.live()
    for ticket in IDS:
        project.server.plan("openai", text(f"bug {ticket}"), text(f"answer {ticket}"))
    project.run("-p", "no:randomly", "test_names.py", "--agentloom-record").assert_outcomes(passed=3)
    folder = project.path / "cassettes" / "test_names.py"
    names = sorted(path.name for path in folder.iterdir())
    assert len(names) == 3 and "test_named[x_y].yaml" in names, names  # the id needing no change keeps its name
    project.offline()
    project.run("-p", "no:randomly", "test_names.py").assert_outcomes(passed=3)
