"""``agentloom drift --adopt TEST``: a drift check's live cassette, tool tape and snapshots over the committed ones,
all staged before any is replaced; refused for a failed live run (unless forced), unknown tests, bad manifests."""

from __future__ import annotations

import json

import pytest

from pytest_agentloom.cli import main
from tests.replay.drift_project import committed, drift, plan_bug, record
from tests.replay.helpers import Project
from tests.servers.fake_llm import text

CHECK = ".agentloom/drift/check"
CASSETTE = "cassettes/test_triage.py/test_triage.yaml"
SNAPSHOT = "__agentloom_snapshots__/test_triage/test_triage.yaml"


def _checked(project: Project, answer: str = "Completely different answer text.") -> None:
    record(project)
    plan_bug(project, answer=answer)
    drift(project).assert_outcomes(passed=1)
    project.server.reset()


def test_adopting_a_test_makes_its_live_run_the_committed_recording(project: Project,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _checked(project)
    scratch = project.path / CHECK
    manifest = json.loads((scratch / "drift.json").read_text())
    entry = manifest["tests"]["test_triage.py::test_triage"]
    assert (entry["outcome"], entry["verdict"]) == ("passed", "regression")

    assert main(["drift", "--adopt", "test_triage", "--dir", CHECK]) == 0  # a part of one node id is enough

    out = capsys.readouterr().out
    assert f"agentloom drift --adopt: from {CHECK}" in out
    assert "agentloom drift --adopt: 2 files changed:" in out
    assert f"  changed: {CASSETTE}" in out and f"  changed: {SNAPSHOT}" in out
    assert (project.path / CASSETTE).read_bytes() == (scratch / CASSETTE).read_bytes()
    assert (project.path / SNAPSHOT).read_bytes() == (scratch / "snapshots" / SNAPSHOT).read_bytes()
    assert "Completely different answer text." in (project.path / SNAPSHOT).read_text()
    project.run().assert_outcomes(passed=1)  # the adopted recording replays, its snapshot matches
    assert project.server.requests == []  # offline
    assert main(["drift", "--adopt", "test_triage.py::test_triage"]) == 0  # the newest check, by default
    assert "0 files changed (the committed files already hold the live recordings)" in capsys.readouterr().out


def test_a_failed_live_run_is_refused_unless_forced(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    record(project)
    for _ in range(3):
        project.server.plan("openai", text("It is a bug, I think."))  # never JSON: the live run fails
    drift(project).assert_outcomes(failed=1)
    before = committed(project)

    assert main(["drift", "--adopt", "test_triage.py::test_triage"]) == 1

    err = capsys.readouterr().err
    assert "DriftError: The live run of test_triage.py::test_triage failed: its recording is not adopted." in err
    assert "--force" in err
    assert committed(project) == before
    assert main(["drift", "--adopt", "test_triage.py::test_triage", "--force"]) == 0
    assert committed(project)[CASSETTE] != before[CASSETTE]


def test_unknown_names_and_missing_checks_are_named(project: Project, tmp_path_factory: pytest.TempPathFactory,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _checked(project)
    assert main(["drift", "--adopt", "test_triag.py::test_triage"]) == 1
    err = capsys.readouterr().err
    assert "'test_triag.py::test_triage' is not a test of the drift check" in err
    assert "did you mean 'test_triage.py::test_triage'?" in err
    assert main(["drift", "--adopt", "x", "--dir", str(tmp_path_factory.mktemp("empty"))]) == 1
    assert "holds no drift.json" in capsys.readouterr().err


def test_a_failure_while_staging_changes_no_committed_file(project: Project,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    _checked(project)
    (project.path / SNAPSHOT).unlink()
    (project.path / SNAPSHOT).mkdir()  # the snapshot cannot be replaced: staged after the cassette
    before = committed(project)

    assert main(["drift", "--adopt", "test_triage.py::test_triage"]) == 1

    assert "IsADirectoryError" in capsys.readouterr().err
    assert committed(project) == before  # the cassette, staged first, was not moved into place
    assert not [path for path in (project.path / "cassettes").rglob("*.adopt")]  # nor left behind


@pytest.mark.parametrize("bad", ["../outside.yaml", "/etc/passwd", ".agentloom/drift/check/x.yaml"])
def test_a_manifest_that_points_outside_is_refused(project: Project, bad: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _checked(project)
    path = project.path / CHECK / "drift.json"
    manifest = json.loads(path.read_text())
    manifest["tests"]["test_triage.py::test_triage"]["files"][0][1] = bad
    path.write_text(json.dumps(manifest))
    before = committed(project)

    assert main(["drift", "--adopt", "test_triage.py::test_triage"]) == 1

    assert "DriftError" in capsys.readouterr().err
    assert committed(project) == before
    assert not (project.path.parent / "outside.yaml").exists()
