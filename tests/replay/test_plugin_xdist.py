"""Cassettes under pytest-xdist: each test writes its own file, and the stale flag reaches the summary."""

from __future__ import annotations

import pytest
import yaml

from tests.replay.helpers import Project

pytestmark = pytest.mark.xdist

PARALLEL_TESTS = """
import os
import pytest

@pytest.mark.parametrize("ticket", [f"ticket {n}" for n in range(4)])
def test_support(agentloom, ticket):
    result = agentloom.run("flow.yaml", state={"ticket": ticket, "api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    assert result.state["answer"].endswith(ticket)  # the fake server echoes the last message
"""


def test_record_and_replay_under_xdist(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=PARALLEL_TESTS)
    recorded = project.pytester.runpytest_subprocess("-n", "2", "-p", "no:benchmark", "--agentloom-record")
    recorded.assert_outcomes(passed=4)
    recorded.stdout.fnmatch_lines(["*agentloom: 4 cassettes recorded (record mode all)*"])
    files = sorted((project.path / "cassettes" / "test_support.py").iterdir())
    assert [f.name for f in files] == [f"test_support[ticket {n}].yaml" for n in range(4)]
    for number, path in enumerate(files):
        document = yaml.safe_load(path.read_text())  # whole files, each with its own two calls
        assert len(document["interactions"]) == 2
        assert document["interactions"][0]["request"]["body"]["json"]["messages"][0]["content"].endswith(
            f"ticket {number}")
    assert not [p for p in project.path.rglob("*.tmp")]

    project.offline()
    flow = project.path / "flow.yaml"
    flow.write_text(flow.read_text().replace("name: support", "name: support\ndescription: edited"))
    replayed = project.pytester.runpytest_subprocess("-n", "2", "-p", "no:benchmark")
    replayed.assert_outcomes(passed=4)
    replayed.stdout.fnmatch_lines([
        "*agentloom: 4 cassettes possibly stale (the workflow file changed since recording):",
        "*cassettes/test_support.py/test_support[[]ticket 0[]].yaml (changed: flow.yaml)",
    ])
