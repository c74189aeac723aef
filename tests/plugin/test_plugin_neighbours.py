"""syrupy and pytest-recording in the same project as ours: no shared snapshot folder, YAML-only rows that run."""

from __future__ import annotations

import importlib

import pytest

importlib.import_module("syrupy")
importlib.import_module("pytest_recording")

TESTS = """\
def test_ours(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "crash"}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)

def test_theirs(snapshot):
    assert {"answer": 42} == snapshot
"""

TABLE = """\
- id: scripted-row
  workflow: flow.yaml
  state: {ticket: crash}
  script: {classify: bug}
  expect: {status: success, snapshot: true}
"""


@pytest.fixture
def project(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makepyfile(test_mixed=TESTS)
    (triage.path / "test_rows.agentloom.yaml").write_text(TABLE)
    return triage


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def ours(project: pytest.Pytester) -> list[str]:
    return sorted(p.relative_to(project.path).as_posix() for p in project.path.rglob("__agentloom_snapshots__/**/*")
                  if p.is_file())


def test_syrupys_update_flag_leaves_our_snapshots_alone(project: pytest.Pytester) -> None:
    written = run(project, "--snapshot-update", "--agentloom-create-snapshots")
    assert written.ret == 0, written.stdout.str()
    assert "syrupy" in written.stdout.str() and "recording" in written.stdout.str()  # both plugins were loaded
    expected = ["__agentloom_snapshots__/test_mixed/test_ours.yaml",
                "__agentloom_snapshots__/test_rows/scripted-row.yaml"]
    assert ours(project) == expected
    assert (project.path / "__snapshots__" / "test_mixed.ambr").is_file()  # syrupy's, in its own folder

    plain = run(project)
    plain.assert_outcomes(passed=3)
    assert plain.ret == 0
    assert "unused" not in plain.stdout.str()

    updated = run(project, "--snapshot-update")
    assert updated.ret == 0
    assert ours(project) == expected
    assert "deleted" not in updated.stdout.str()


def test_yaml_only_rows_run_with_pytest_recordings_autouse_fixture(project: pytest.Pytester) -> None:
    result = run(project, "test_rows.agentloom.yaml", "--agentloom-create-snapshots", "--block-network")
    result.assert_outcomes(passed=1)
    assert "Could not obtain a node" not in result.stdout.str()


OLD = "__snapshots__/test_mixed/test_ours.yaml"


def test_a_snapshot_in_the_old_folder_fails_with_the_move_to_make_and_is_never_touched(
        project: pytest.Pytester) -> None:
    written = run(project, "--agentloom-create-snapshots", "-k", "ours", "-p", "no:syrupy")
    assert written.ret == 0
    old = project.path / OLD
    old.parent.mkdir(parents=True)
    new = project.path / "__agentloom_snapshots__"
    (new / "test_mixed" / "test_ours.yaml").rename(old)  # as an older version of the plugin left it
    (new / "test_mixed").rmdir()
    new.rmdir()
    before = old.read_bytes()

    for flags in ((), ("--agentloom-create-snapshots",), ("--agentloom-update-snapshots",)):
        result = run(project, "test_mixed.py::test_ours", *flags)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([
            "*Snapshot 'test_ours' is in the old snapshot folder: __snapshots__/test_mixed/test_ours.yaml",
            "*  agentloom now reads and writes __agentloom_snapshots__/test_mixed/test_ours.yaml "
            "(__agentloom_snapshots__/: __snapshots__/ is syrupy's folder, whose --snapshot-update deletes files "
            "it does not know)",
            "*How to fix: move this module's snapshots once, then commit the move:",
            "*  mkdir -p __agentloom_snapshots__ && git mv __snapshots__/test_mixed __agentloom_snapshots__/test_mixed",
            "*or keep the old folder (a project without syrupy): ini agentloom_snapshot_dir = __snapshots__",
        ])
        assert old.read_bytes() == before
        assert ours(project) == []

    project.makeini("[pytest]\nagentloom_snapshot_dir = __snapshots__\n")  # keeping the old place works
    run(project, "test_mixed.py::test_ours").assert_outcomes(passed=1)
    project.makeini("[pytest]\n")
    new.mkdir()
    old.parent.rename(project.path / "__agentloom_snapshots__" / "test_mixed")  # the move the message gives
    run(project, "test_mixed.py::test_ours").assert_outcomes(passed=1)
