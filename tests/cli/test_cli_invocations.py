"""``agentloom run`` from a project folder: identical invocations share a run id, and ``--tools`` imports a
module of the current folder through the installed ``agentloom`` script, without ``PYTHONPATH=.``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_agentloom

FLOW = """\
name: shout
state: {text: hi}
steps:
  - {id: s, type: tool, tool_name: shout, tool_args: {text: "{state.text}"}, output: loud}
"""
TOOLS = 'def shout(text):\n    return text.upper()\n\n\nTOOLS = {"shout": shout}\n'


def agentloom(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``agentloom`` script in ``folder``, this checkout's package on the path and nothing else."""
    script = shutil.which("agentloom", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("no agentloom script beside this interpreter")
    env = {key: value for key, value in os.environ.items() if key not in ("AGENTLOOM_RUNS_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(Path(pytest_agentloom.__file__).parent.parent)  # the package, never the folder
    return subprocess.run([script, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_identical_runs_share_a_run_id_and_tools_import_from_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text(FLOW)
    (tmp_path / "acme_tools.py").write_text(TOOLS)
    ids = []
    for state in ([], [], ["--state", "text=ho"]):
        done = agentloom(tmp_path, "run", "flow.yaml", "--tools", "acme_tools:TOOLS", *state)
        assert done.returncode == 0, done.stdout + done.stderr
        ids.append(re.search(r"run (run-[0-9a-f]{12})", done.stdout).group(1))  # type: ignore[union-attr]
    assert ids[0] == ids[1] != ids[2]
    assert sorted(path.name for path in (tmp_path / "agentloom_runs").iterdir()) == sorted(
        f"{run_id}.json" for run_id in set(ids))
