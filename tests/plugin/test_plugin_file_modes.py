"""Snapshots are meant for the repository: their permissions follow the umask, as any file the user writes."""

from __future__ import annotations

import os
import stat

import pytest


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_snapshot_files_follow_the_umask(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_snapshot_umask_inner="""
        def test_mode(agentloom):
            agentloom.assert_snapshot(agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question")))
    """)
    previous = os.umask(0o002)
    try:
        triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    finally:
        os.umask(previous)
    (written,) = triage.path.rglob("__agentloom_snapshots__/**/*.yaml")
    assert stat.S_IMODE(written.stat().st_mode) == 0o664
