"""``agentloom resume`` as the paused run printed it: it carries what the run needs, checks it before touching
the checkpoint, leaves the checkpoint resumable when it fails, and works after --model/--checkpoint/... runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli import test_cli
from tests.cli.test_cli import GATED, write

cli = test_cli.cli  # the fixture: a real subprocess in tmp_path, with cli_tools.py importable

FLAKY_TOOLS = """\
from pathlib import Path

def ship(service):
    if not Path("fixed").exists():
        raise RuntimeError("deploy target unreachable")
    return f"shipped {service}"

def echo(**kwargs):
    return kwargs

TOOLS = {"ship": ship, "echo": echo}
"""

ASKED = """\
name: asked
steps:
  - {id: gate, type: approval_gate, message: "Answer?", output: decision}
  - {id: reply, type: llm_call, depends_on: [gate], prompt: "Say hi", output: answer}
"""


def printed_command(stdout: str) -> list[str]:
    """The resume command the paused run printed, as words for ``python -m pytest_agentloom.cli``."""
    line = next(line for line in stdout.splitlines() if "Resume with:" in line)
    words = shlex.split(line.split("Resume with: ", 1)[1].removesuffix(" (or --reject)"))
    assert words[:2] == ["agentloom", "resume"]
    return words[1:]


def checkpoint(tmp_path: Path, run_id: str) -> Path:
    return tmp_path / "agentloom_runs" / "checkpoints" / f"{run_id}.json"


@pytest.mark.slow
def test_the_printed_resume_command_carries_the_tools_and_works(cli, tmp_path):
    flow = write(tmp_path, "release.yaml", GATED)
    paused = cli("run", flow, "--tools", "cli_tools", "--run-id", "rel-p")
    assert paused.returncode == 4, paused.stderr
    words = printed_command(paused.stdout)
    assert words == ["resume", "rel-p", "--approve", "--tools", "cli_tools"]
    done = cli(*words, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"]["result"] == "shipped billing"


@pytest.mark.slow
def test_a_resume_without_the_tools_is_refused_before_the_checkpoint_is_touched(cli, tmp_path):
    flow = write(tmp_path, "release.yaml", GATED)
    assert cli("run", flow, "--tools", "cli_tools", "--run-id", "rel-t").returncode == 4
    saved = checkpoint(tmp_path, "rel-t").read_bytes()
    refused = cli("resume", "rel-t", "--approve")
    assert refused.returncode == 8, refused.stderr
    assert "steps still to run need tools this resume was not given: 'echo' (step 'stop'), 'ship' (step 'ship')" \
        in refused.stderr
    assert checkpoint(tmp_path, "rel-t").read_bytes() == saved
    assert cli("resume", "rel-t", "--approve", "--tools", "cli_tools").returncode == 0


@pytest.mark.slow
def test_a_failed_resume_leaves_the_checkpoint_resumable(cli, tmp_path):
    (tmp_path / "flaky_tools.py").write_text(FLAKY_TOOLS)
    flow = write(tmp_path, "release.yaml", GATED)
    paused = cli("run", flow, "--tools", "flaky_tools", "--run-id", "rel-f")
    assert paused.returncode == 4, paused.stderr
    words = printed_command(paused.stdout)
    failed = cli(*words)
    assert failed.returncode == 1 and "deploy target unreachable" in failed.stdout
    runs = json.loads(cli("runs", "--json").stdout)
    assert [(run["run_id"], run["status"]) for run in runs] == [("rel-f", "paused")]
    (tmp_path / "fixed").write_text("")
    done = cli(*words, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"]["result"] == "shipped billing"
    records = sorted(path.name for path in (tmp_path / "agentloom_runs").glob("rel-f*.json"))
    assert records == ["rel-f.json", "rel-f.resume-1.json", "rel-f.resume-2.json"]  # each attempt's record kept


@pytest.mark.slow
def test_runs_started_with_command_line_overrides_can_be_resumed(cli, tmp_path):
    flow = write(tmp_path, "asked.yaml", ASKED)
    script = write(tmp_path, "script.yaml", "reply: Hello there\n")
    paused = cli("run", flow, "--checkpoint", "--model", "gpt-4o-mini", "--stream", "--provider", "openai",
                 "--script", script, "--run-id", "ask-1")
    assert paused.returncode == 4, paused.stdout + paused.stderr
    saved = json.loads(checkpoint(tmp_path, "ask-1").read_text())["workflow"]
    assert saved["overrides"] == {"checkpoint": True, "model": "gpt-4o-mini", "provider": "openai", "stream": True}
    words = printed_command(paused.stdout)
    assert words == ["resume", "ask-1", "--approve", "--script", script]
    done = cli(*words, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"]["answer"] == "Hello there"
    assert result["steps"]["reply"]["model"] == "gpt-4o-mini"  # the run's --model, applied again
