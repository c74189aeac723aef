"""Cassettes and tool tapes no test used: reported on a whole run, pruned on request, a rename suggested."""

from __future__ import annotations

import pytest

from pytest_agentloom.testing._secrets_scan import check_no_secrets
from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import text


@pytest.fixture
def recorded(project: Project) -> Project:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    return project


def leftovers(project: Project) -> list[str]:
    """A deleted test's cassette and tape, and the cassette of a test file that is gone."""
    names = ["cassettes/test_gone.py/test_x.yaml", "cassettes/test_support.py/test_old.tools.yaml",
             "cassettes/test_support.py/test_old.yaml"]
    for name in names:
        (project.path / name).parent.mkdir(parents=True, exist_ok=True)
        (project.path / name).write_text("format_version: 1\ninteractions: []\n")
    return names


def test_unused_cassettes_and_tapes_fail_a_whole_run_and_only_it(recorded: Project) -> None:
    names = leftovers(recorded)
    result = recorded.run()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "agentloom: 3 cassette files unused (cassettes and tool tapes no test used):",
        *[f"  {name}" for name in names],
        "How to fix: delete them, or run: pytest --agentloom-prune-cassettes",
        "(unused cassettes fail the run; --agentloom-warn-unused-cassettes only reports them)",
    ], consecutive=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for narrowed in (["-k", "support"], ["test_support.py::test_support"]):
        out = recorded.run("--agentloom-prune-cassettes", *narrowed)
        assert out.ret == pytest.ExitCode.OK and "cassette file" not in out.stdout.str()
    warned = recorded.run("--agentloom-warn-unused-cassettes")
    warned.stdout.fnmatch_lines(["agentloom: 3 cassette files unused *"])
    assert warned.ret == pytest.ExitCode.OK
    pruned = recorded.run("--agentloom-prune-cassettes")
    pruned.stdout.fnmatch_lines(["agentloom: 3 cassette files deleted *"])
    assert pruned.ret == pytest.ExitCode.OK
    assert all(not (recorded.path / name).exists() for name in names)
    assert not (recorded.path / "cassettes" / "test_gone.py").exists()
    assert recorded.cassette().is_file()
    assert recorded.run().ret == pytest.ExitCode.OK


def test_the_cassettes_of_a_test_file_not_collected_are_kept(recorded: Project) -> None:
    recorded.pytester.makepyfile(test_other="def test_x():\n    pass\n")
    kept = recorded.path / "cassettes" / "test_other.py" / "test_x.yaml"
    kept.parent.mkdir(parents=True)
    kept.write_text("format_version: 1\ninteractions: []\n")
    result = recorded.run("--ignore", "test_other.py", "--agentloom-prune-cassettes")
    assert result.ret == pytest.ExitCode.OK and "cassette file" not in result.stdout.str()
    assert kept.is_file()


def test_a_renamed_test_gets_the_git_mv_that_keeps_its_recording(recorded: Project) -> None:
    test_file = recorded.path / "test_support.py"
    test_file.write_text(test_file.read_text().replace("def test_support(", "def test_support_renamed("))
    result = recorded.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "agentloom: 1 cassette file unused (cassettes and tool tapes no test used):",
        "  cassettes/test_support.py/test_support.yaml",
        "How to fix: delete them, or run: pytest --agentloom-prune-cassettes",
        "agentloom: a test that failed with no cassette may be a renamed one; to keep its recording, run:",
        "  git mv cassettes/test_support.py/test_support.yaml cassettes/test_support.py/test_support_renamed.yaml",
    ], consecutive=True)
    old = recorded.cassette()
    old.rename(old.with_name("test_support_renamed.yaml"))  # what the git mv does
    recorded.run().assert_outcomes(passed=1)


def test_a_shard_report_of_a_replayed_test_holds_no_secret(recorded: Project) -> None:
    """Nor do the coverage map and the review reports, in any form the writers replace (raw, escaped, encoded)."""
    recorded.monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)  # a key in the environment, as in a CI job
    written = ("shard.json", "cov.json", "review.html", "review.md")
    result = recorded.run("--agentloom-shard-report=shard.json", "--agentloom-cov-report=json:cov.json",
                          "--agentloom-report=review.html")
    result.assert_outcomes(passed=1)
    recorded.run("--agentloom-report=review.md").assert_outcomes(passed=1)
    text = (recorded.path / "shard.json").read_text()
    assert '"test_support.py::test_support"' in text and '"cassettes/test_support.py/test_support"' in text
    check_no_secrets([CANARY_KEY, CANARY_SECRET], [recorded.path / name for name in written],
                     {"stdout": result.stdout.str(), "stderr": result.stderr.str()})
    assert all((recorded.path / name).stat().st_size for name in written)
