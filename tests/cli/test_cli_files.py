"""What ``agentloom run`` leaves on disk: modes per kind of file, and no temporary file after ``kill -9``.

Files meant for a repository (cassettes, tool tapes) and run records follow the umask; checkpoints
(the run's state and outputs) and the redaction salt (the key of the markers) are the owner's only.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes and kill -9 are POSIX")

TOOLS = """\
from pytest_agentloom.tools._registry import tool

@tool(side_effects=True)
def ship(service):
    return f"shipped {service}"

TOOLS = [ship]
"""

FLOW = """\
name: release
state: {service: billing, token: t0ps3cret}
state_schema: {token: {redact: true}}
steps:
  - {id: ship, type: tool, tool_name: ship, tool_args: {service: "{state.service}"}, output: shipped}
  - {id: gate, type: approval_gate, depends_on: [ship], message: "Announce it?", output: decision}
"""

# os.replace hangs for the checkpoint of run "hang", after the temporary file is written: kill -9 lands mid-write
HANGING = """\
import os, sys, time
real = os.replace
def replace(src, dst, *args, **kwargs):
    if str(dst).endswith("hang.json"):
        open("ready", "w").close()
        time.sleep(120)
    return real(src, dst, *args, **kwargs)
os.replace = replace
from pytest_agentloom.cli import main
sys.exit(main(sys.argv[1:]))
"""


def environment(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR", "AGENTLOOM_REDACTION_SALT")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    return env


def agentloom(tmp_path: Path, *args: str, umask: int = 0o022) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env=environment(tmp_path), preexec_fn=lambda: os.umask(umask))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o002, 0o022])
@pytest.mark.slow
def test_repository_files_follow_the_umask_and_secret_bearing_ones_are_private(tmp_path: Path, umask: int) -> None:
    (tmp_path / "pyproject.toml").write_text("")  # the project root, where .agentloom/salt is created
    (tmp_path / "release_tools.py").write_text(TOOLS)
    (tmp_path / "release.yaml").write_text(FLOW)
    (tmp_path / "script.yaml").write_text("{}\n")
    done = agentloom(tmp_path, "run", "release.yaml", "--tools", "release_tools", "--checkpoint", "--run-id", "r1",
                     "--record", "release.cassette.yaml", "--script", "script.yaml", umask=umask)
    assert done.returncode == 4, done.stdout + done.stderr
    shared = 0o666 & ~umask
    assert not (tmp_path / "release.cassette.yaml").exists()  # the run sent no model request: no cassette
    assert mode(tmp_path / "release.cassette.tools.yaml") == shared  # written like a cassette (atomic, umask)
    assert mode(tmp_path / "agentloom_runs" / "r1.json") == shared  # a run record holds no state or output
    assert mode(tmp_path / "agentloom_runs" / "checkpoints" / "r1.json") == 0o600
    assert mode(tmp_path / ".agentloom" / "salt") == 0o600


@pytest.mark.slow
def test_kill_9_mid_checkpoint_leaves_no_temporary_file_after_the_next_start(tmp_path: Path) -> None:
    (tmp_path / "release_tools.py").write_text(TOOLS)
    (tmp_path / "release.yaml").write_text(FLOW)
    (tmp_path / "hanging.py").write_text(HANGING)
    env = {**environment(tmp_path), "AGENTLOOM_REDACTION_SALT": "files-test"}
    victim = subprocess.Popen([sys.executable, "hanging.py", "run", "release.yaml", "--tools", "release_tools",
                               "--checkpoint", "--run-id", "hang"], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # the checkpoint's temporary file is written once "ready" exists
            if (tmp_path / "ready").exists() or victim.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "ready").exists(), "the run never reached its checkpoint write"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
    checkpoints = tmp_path / "agentloom_runs" / "checkpoints"
    left = [path.name for path in checkpoints.iterdir() if path.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".hang.json."), left  # what kill -9 leaves behind
    again = subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", "run", "release.yaml", "--tools",
                            "release_tools", "--checkpoint", "--run-id", "next"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 4, again.stderr
    assert sorted(path.name for path in checkpoints.iterdir()) == ["next.json"]
