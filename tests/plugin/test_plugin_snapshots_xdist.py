"""Under pytest-xdist (``-n 2``): snapshots are written safely and the unused report is aggregated from workers."""

from __future__ import annotations

import pytest

pytest.importorskip("xdist")

pytestmark = pytest.mark.xdist

# plugins of this environment that the inner runs do not need (each subprocess would import them again)
FAST = ("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio")

TESTS = """
import pytest

@pytest.mark.parametrize("n", range(6))
def test_many(agentloom, n):
    result = agentloom.run("flow.yaml", state={"ticket": "t" * n}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)
"""


def test_two_workers_write_all_snapshots_and_report_unused_correctly(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_many=TESTS)
    (triage.path / "test_rows.agentloom.yaml").write_text(
        "- id: a\n  workflow: flow.yaml\n  script: {classify: bug}\n  expect: {snapshot: true}\n"
        "- id: b\n  workflow: flow.yaml\n  script: {classify: bug}\n  expect: {snapshot: true}\n"
    )
    result = triage.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-update-snapshots")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["agentloom: 8 snapshots created:"])
    written = sorted(p.name for p in triage.path.rglob("__agentloom_snapshots__/**/*.yaml"))
    assert len(written) == 8
    assert not list(triage.path.rglob("*.tmp"))

    stale = triage.path / "__agentloom_snapshots__" / "test_many" / "test_gone.yaml"
    stale.write_text("format_version: 1\n")
    result = triage.runpytest_subprocess(*FAST, "-n", "2")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot file unused:",
                                 "  __agentloom_snapshots__/test_many/test_gone.yaml"])
    assert result.stdout.str().count("snapshot file") == 1  # used by some worker = not unused
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    # -x under xdist: the controller stops the workers; nothing may be reported or deleted
    triage.makepyfile(test_aaa="def test_first():\n    assert False\n")
    result = triage.runpytest_subprocess(*FAST, "-n", "2", "-x", "--agentloom-update-snapshots")
    assert "snapshot file" not in result.stdout.str() and stale.exists()
    (triage.path / "test_aaa.py").unlink()

    result = triage.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-update-snapshots")
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot file deleted:"])
    assert not stale.exists()
    assert len(list(triage.path.rglob("__agentloom_snapshots__/**/*.yaml"))) == 8


def test_a_crashed_worker_makes_the_unused_report_unknown(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_many=TESTS)
    triage.runpytest_subprocess(*FAST, "-n", "1", "--agentloom-update-snapshots").assert_outcomes(passed=6)
    # one worker runs the six snapshot tests, then dies: what it used never reaches the controller
    triage.makepyfile(test_zzz="import os\n\ndef test_crash():\n    os._exit(3)\n")
    result = triage.runpytest_subprocess(*FAST, "-n", "1", "--max-worker-restart=1", "--agentloom-update-snapshots")
    result.assert_outcomes(passed=6, failed=1)
    assert "snapshot file" not in result.stdout.str()
    assert len(list(triage.path.rglob("__agentloom_snapshots__/**/*.yaml"))) == 6
