"""Snapshot file names are one-to-one: parameter ids that sanitise alike get distinct files; a clash is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

IDS = ["a b", "a_b", "a?b", "a/b"]

TESTS = """
import pytest

@pytest.mark.parametrize("ticket", IDS_HERE)
def test_snap(agentloom, ticket):
    result = agentloom.run("flow.yaml", state={"ticket": ticket}, provider=agentloom.scripted(classify="question"))
    agentloom.assert_snapshot(result)
""".replace("IDS_HERE", repr(IDS))


def snapshot_files(pytester: pytest.Pytester) -> list[Path]:
    return sorted(pytester.path.rglob("__agentloom_snapshots__/**/*.yaml"))


def test_ids_that_sanitise_alike_get_one_file_each(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_names=TESTS)
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=4)
    written = snapshot_files(triage)
    assert len(written) == 4
    assert "test_snap[a_b].yaml" in [path.name for path in written]  # an id that needs no change keeps its name
    tickets = sorted(path.read_text().split("ticket: ", 1)[1].split("\n", 1)[0] for path in written)
    assert tickets == sorted(["a b", "a_b", "a?b", "a/b"])  # each file holds its own test's run
    triage.runpytest_inprocess().assert_outcomes(passed=4)


def same_named_modules_sharing_a_snapshot_folder(triage: pytest.Pytester) -> Path:
    """Two test modules of the same name in two folders, sharing one absolute snapshot folder."""
    shared = triage.path / "snaps"
    triage.makeini(f"[pytest]\nagentloom_snapshot_dir = {shared}\n")
    body = """
import pytest

@pytest.mark.agentloom(workflow="../flow.yaml")
def test_same(agentloom):
    result = agentloom.run(provider=agentloom.scripted(classify=%r))
    agentloom.assert_snapshot(result)
"""
    for folder in ("one", "two"):
        (triage.path / folder).mkdir()
        (triage.path / folder / "test_m.py").write_text(body % folder)
    return shared


def test_two_tests_on_one_file_is_an_error_not_an_overwrite(triage: pytest.Pytester) -> None:
    shared = same_named_modules_sharing_a_snapshot_folder(triage)
    result = triage.runpytest_inprocess("-p", "no:randomly", "--import-mode=importlib",
                                        "--agentloom-update-snapshots")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FileNameClashError: Tests one/test_m.py::test_same and two/test_m.py::test_same "
                                 "would both use the snapshot file snaps/test_m/test_same.yaml; neither may "
                                 "overwrite the other.*"])
    assert "category: one" in (shared / "test_m" / "test_same.yaml").read_text()  # the first test's, kept


@pytest.mark.xdist
def test_a_clash_between_xdist_workers_fails_the_run(triage: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    same_named_modules_sharing_a_snapshot_folder(triage)
    result = triage.runpytest_subprocess("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:randomly",
                                         "--import-mode=importlib", "-n", "2", "--dist", "loadfile",
                                         "--agentloom-update-snapshots")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # on one worker the second test fails; on two, the controller fails the run and names both tests
    assert "FileNameClashError" in result.stdout.str()
    assert "one/test_m.py::test_same" in result.stdout.str() and "two/test_m.py::test_same" in result.stdout.str()



def test_only_tests_that_use_their_cassette_claim_its_file(triage: pytest.Pytester) -> None:
    """A cassette (and tool tape) file is claimed at its first use: a scripted test has none that could clash."""
    (triage.path / "conftest.py").write_text((triage.path / "conftest.py").read_text() + """
from pytest_agentloom.testing._session import SESSION_KEY

def pytest_sessionfinish(session):
    owners = session.config.stash[SESSION_KEY].replay.owners
    (session.config.rootpath / "owners.txt").write_text("\\n".join(sorted(owners.values())))
""")
    triage.makepyfile(test_claims="""
        import pytest
        from pytest_agentloom.errors import CassetteNotFoundError

        def test_scripted(agentloom):
            assert agentloom.run("flow.yaml", provider=agentloom.scripted(classify="q", reply="r")).ok

        def test_replayed(agentloom):
            with pytest.raises(CassetteNotFoundError):
                agentloom.run("flow.yaml")
    """)
    triage.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=2)
    assert (triage.path / "owners.txt").read_text().split("\n") == ["test_claims.py::test_replayed"] * 2
