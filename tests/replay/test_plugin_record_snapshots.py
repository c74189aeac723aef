"""A recording session writes what the test needs: its cassette and its missing snapshots, together; a changed
snapshot names the one command that records and updates, and a run that sends no request needs no cassette."""

from __future__ import annotations

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

SNAPSHOT_TEST = """\
import os

def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    agentloom.assert_snapshot(result)
"""
SNAPSHOT = "__agentloom_snapshots__/test_support/test_support.yaml"


def record(project: Project, *replies: str, args: tuple[str, ...] = ("--agentloom-record",)) -> str:
    project.server.plan("openai", *(text(reply) for reply in replies))
    return str(project.run(*args).stdout.str())


def test_recording_writes_the_missing_snapshot_with_the_cassette(project: Project) -> None:
    project.pytester.makepyfile(test_support=SNAPSHOT_TEST)
    project.live()
    out = record(project, "bug", "We are on it.")
    assert "1 passed" in out, out
    assert project.cassette().is_file() and (project.path / SNAPSHOT).is_file()
    lines = out.splitlines()
    start = lines.index("agentloom: 1 snapshot created:")
    assert lines[start:start + 2] == ["agentloom: 1 snapshot created:", f"  {SNAPSHOT}"]
    start = lines.index("agentloom: 1 cassette recorded (record mode all):")
    assert lines[start + 1] == "  cassettes/test_support.py/test_support.yaml"
    project.offline()
    project.run().assert_outcomes(passed=1)  # what the recording wrote replays, and matches its snapshot


@pytest.mark.slow
def test_a_changed_snapshot_while_recording_names_the_command_that_keeps_the_recording(project: Project) -> None:
    project.pytester.makepyfile(test_support=SNAPSHOT_TEST)
    project.live()
    record(project, "bug", "We are on it.")
    cassette, snapshot = project.cassette().read_bytes(), (project.path / SNAPSHOT).read_bytes()
    out = record(project, "bug", "We are on it, promise.")
    assert "1 failed" in out
    command = "pytest --agentloom-record --agentloom-update-snapshots test_support.py::test_support"
    assert ("How to fix: this run was recording, and its recording is not written while the test fails; "
            "if the change is intended, record and update together:") in out
    assert f"E         {command}" in out.splitlines()
    assert "agentloom: 1 recording not written, so the cassette on disk (if any) is unchanged:" in out
    assert ("  cassettes/test_support.py/test_support.yaml: its snapshot changed; if that is intended, record and "
            f"update together: {command}") in out.splitlines()
    assert out.count("--agentloom-update-snapshots") == out.count(command)  # no hint to update without recording
    assert project.cassette().read_bytes() == cassette and (project.path / SNAPSHOT).read_bytes() == snapshot
    # the command the hint gives records and updates in one run, and both files then agree
    out = record(project, "bug", "We are on it, promise.", args=tuple(command.split()[1:]))
    assert "1 passed" in out, out
    assert "agentloom: 1 snapshot updated:" in out and "agentloom: 1 cassette recorded (record mode all):" in out
    assert b"promise" in project.cassette().read_bytes() and b"promise" in (project.path / SNAPSHOT).read_bytes()
    project.offline()
    project.run().assert_outcomes(passed=1)


ROUTED = """\
name: routed
state:
  ticket: ""
  category: ""
steps:
  - {id: classify, type: llm_call, model: gpt-4o-mini, prompt: "Classify: {state.ticket}", output: category}
  - id: route
    type: router
    depends_on: [classify]
    conditions:
      - {expression: "category == 'bug'", target: reply}
    default: close
  - {id: reply, type: llm_call, model: gpt-4o-mini, prompt: "Reply: {state.ticket}", output: answer}
  - {id: close, type: tool, tool_name: close_ticket, tool_args: {why: "not a bug"}, output: closed}
"""
ROUTED_TEST = """\
def close_ticket(why):
    return "closed: " + why

def test_route(agentloom):
    result = agentloom.run("routed.yaml", state={"ticket": "A question", "category": "question"},
                           start_at="route", tools={"close_ticket": close_ticket})
    assert result.status == "success", result.steps
    assert result.state["closed"] == "closed: not a bug"
"""


def test_a_run_that_sends_no_request_needs_no_cassette_and_records_none(project: Project) -> None:
    project.pytester.makefile(".yaml", routed=ROUTED)
    project.pytester.makepyfile(test_route=ROUTED_TEST)
    project.live()
    project.run("test_route.py", "--agentloom-record").assert_outcomes(passed=1)
    assert not (project.path / "cassettes").exists() and project.server.requests == []
    project.offline()
    project.run("test_route.py").assert_outcomes(passed=1)  # replay: no cassette file, none needed


def test_a_request_with_no_cassette_fails_its_step_with_the_missing_file_and_the_record_command(
        project: Project) -> None:
    project.pytester.makefile(".yaml", routed=ROUTED)
    project.pytester.makepyfile(test_route=ROUTED_TEST.replace('"category": "question"', '"category": "bug"'))
    project.offline()
    result = project.run("test_route.py", "-vv")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert ("No cassette to replay for this request (test test_route.py::test_route, step 'reply', turn 1): "
            "cassettes/test_route.py/test_route.yaml does not exist.") in out
    assert "pytest test_route.py::test_route --agentloom-record" in out


@pytest.mark.slow
def test_a_re_recording_that_sends_no_request_removes_the_cassette_nothing_replays(project: Project) -> None:
    project.pytester.makefile(".yaml", routed=ROUTED)
    project.pytester.makepyfile(test_route=ROUTED_TEST.replace('"category": "question"', '"category": "bug"'))
    project.live()
    project.server.plan("openai", text("Fixed soon."))
    project.run("test_route.py", "--agentloom-record").assert_outcomes(failed=1)  # no 'closed' key: a bug
    project.pytester.makepyfile(test_route=ROUTED_TEST.replace(
        'assert result.state["closed"] == "closed: not a bug"', 'assert result.state["answer"] == "Fixed soon."'
    ).replace('"category": "question"', '"category": "bug"'))
    project.server.plan("openai", text("Fixed soon."))
    project.run("test_route.py", "--agentloom-record").assert_outcomes(passed=1)
    cassette = project.cassette("test_route.py/test_route.yaml")
    assert cassette.is_file()
    project.pytester.makepyfile(test_route=ROUTED_TEST)  # the test now routes to the tool: no request
    result = project.run("test_route.py", "--agentloom-record")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "agentloom: 1 cassette removed: the test sent no request, so it needs no cassette:",
        "  cassettes/test_route.py/test_route.yaml",
    ])
    assert not cassette.exists()
    project.offline()
    project.run("test_route.py").assert_outcomes(passed=1)
