"""A re-recording that fails leaves the committed cassette as it was, and the summary counts only what was written."""

from __future__ import annotations

import socket

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import fail, text


def record_a_good_cassette(project: Project) -> bytes:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    return project.cassette().read_bytes()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends: nothing listens there


@pytest.mark.parametrize("failure", ["401", "repeated 500s", "unreachable host", "failed assertion"])
@pytest.mark.slow
def test_a_failed_re_recording_never_replaces_a_good_cassette(project: Project, failure: str) -> None:
    good = record_a_good_cassette(project)
    if failure == "401":
        project.server.plan("openai", fail(401, "Incorrect API key provided"))
    elif failure == "repeated 500s":
        project.server.plan("openai", *[fail(500, "server on fire")] * 10)
    elif failure == "unreachable host":
        url = f"http://127.0.0.1:{closed_port()}/v1"
        project.monkeypatch.setenv("OPENAI_BASE_URL", url)
    else:
        project.server.plan("openai", text("question"), text("Sure."))  # the test expects 'bug'
    result = project.run("--agentloom-record", "-vv")  # -vv: the step errors in the assertion are not cut
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "cassette recorded" not in out
    result.stdout.fnmatch_lines([
        "agentloom: 1 recording not written, so the cassette on disk (if any) is unchanged:",
        "  cassettes/test_support.py/test_support.yaml: the test failed while recording (its report says why)",
    ])
    assert project.cassette().read_bytes() == good
    assert sorted(path.name for path in project.cassette().parent.iterdir()) == ["test_support.yaml"]
    if failure == "unreachable host":
        assert f"connection failed to POST {url}/chat/completions" in out
    project.offline()
    project.run().assert_outcomes(passed=1)  # the good cassette still replays


def test_a_test_failing_while_recording_a_new_cassette_writes_nothing(project: Project) -> None:
    project.live()
    project.server.plan("openai", fail(401, "Incorrect API key provided"))
    result = project.run("--agentloom-record")
    result.assert_outcomes(failed=1)
    assert not project.cassette().exists()
    result.stdout.fnmatch_lines(["agentloom: 1 recording not written*"])


def test_agentloom_run_record_that_fails_keeps_the_cassette(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_agentloom.cli import main

    project.live()
    project.monkeypatch.chdir(project.path)
    project.server.plan("openai", text("bug"), text("We are on it."))
    args = ["run", "flow.yaml", "--record", "flow.cassette.yaml", "--state", "ticket=Printer", "--no-record"]
    assert main(args) == 0
    good = (project.path / "flow.cassette.yaml").read_bytes()
    project.server.plan("openai", fail(401, "Incorrect API key provided"))
    assert main(args) == 1
    assert "the run failed while recording: flow.cassette.yaml was not written" in capsys.readouterr().err
    assert (project.path / "flow.cassette.yaml").read_bytes() == good
