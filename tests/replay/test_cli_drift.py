"""``agentloom drift`` in a subprocess: pytest in drift mode, a fresh scratch folder, the report, pytest's exit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_agentloom
from tests.replay.drift_project import assert_no_secret_in, committed, plan_bug, record
from tests.replay.helpers import CANARY_KEY, Project


def agentloom(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """``agentloom <args>`` in the project, with this checkout's package and the live environment of the test."""
    env = dict(os.environ)
    package_root = str(Path(pytest_agentloom.__file__).parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=project.path, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_agentloom_drift_writes_a_fresh_scratch_folder_and_the_report(project: Project) -> None:
    record(project)
    before = committed(project)
    plan_bug(project, category="question")

    done = agentloom(project, "drift", "--report", "scratch/drift.html", "--", "test_triage.py",
                     "-p", "no:cacheprovider")

    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (project.path / ".agentloom/drift").iterdir()
    assert re.fullmatch(r"\d{8}T\d{6}Z", folder.name)
    assert done.stdout.startswith(f"agentloom drift: replaying, then running live into .agentloom/drift/{folder.name}")
    assert "    route: route -> investigate -> route -> reply" in done.stdout
    page = (project.path / "scratch/drift.html").read_text()
    assert "<section id=\"drift\">" in page and "route: route -&gt; investigate -&gt; route -&gt; reply" in page
    assert committed(project) == before
    assert_no_secret_in(folder)
    assert CANARY_KEY not in done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr  # PytestAssertRewriteWarning: the plugin imported too early


@pytest.mark.slow
def test_agentloom_drift_exits_with_pytests_status_when_a_test_fails_live(project: Project) -> None:
    record(project)
    before = committed(project)
    project.monkeypatch.delenv("OPENAI_API_KEY")
    done = agentloom(project, "drift", "--dir", "scratch/run", "--", "-p", "no:cacheprovider")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DriftError: The live run of test_triage.py::test_triage got no answer from a provider." in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert (project.path / "scratch/run/drift-report.md").is_file()  # the default report, in the folder
    assert committed(project) == before
