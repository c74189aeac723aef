"""An agent through the ``agentloom`` command: pause for approval, then resume with --approve or --cancel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentloom.cli import EXIT_CODES

TOOLS = """\
from pathlib import Path

from pytest_agentloom import tool

@tool
def get_ticket(ticket_id: str) -> str:
    \"\"\"Read a ticket.\"\"\"
    return f"{ticket_id}: refund for order 42"

@tool(side_effects=True)
def send_email(to: str) -> str:
    \"\"\"Email a customer.\"\"\"
    with open(Path(__file__).parent / "outbox.txt", "a") as outbox:
        outbox.write(to + "\\n")
    return "sent"

TOOLS = [get_ticket, send_email]
"""

FLOW = """\
name: desk
config: {model: gpt-4o-mini}
agents:
  triager:
    tools: [get_ticket, send_email]
    approval_required: [send_email]
steps:
  - {id: triage, type: agent, agent: triager, prompt: "Handle T-1.", output: answer}
"""

FIRST = """\
triage:
  - {tool_call: get_ticket, arguments: {ticket_id: T-1}}
  - {tool_call: send_email, arguments: {to: ana@example.org}}
"""


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "AGENTLOOM_REDACTION_SALT": "cli-agent"}
    for name in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR", "AGENTLOOM_REDACT_STATE_KEYS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("flag", "status", "outbox"), [("--approve", "success", "ana@example.org\n"),
                                                         ("--cancel", "cancelled", None)])
@pytest.mark.slow
def test_an_agent_paused_for_approval_resumes_from_the_command_line(
    tmp_path: Path, flag: str, status: str, outbox: str | None,
) -> None:
    (tmp_path / "desk_tools.py").write_text(TOOLS)
    (tmp_path / "desk.yaml").write_text(FLOW)
    (tmp_path / "first.yaml").write_text(FIRST)
    (tmp_path / "then.yaml").write_text("triage: Refund handled.\n")
    paused = cli(tmp_path, "run", "desk.yaml", "--tools", "desk_tools", "--script", "first.yaml", "--run-id", "d-1")
    assert paused.returncode == EXIT_CODES["paused"], paused.stderr
    assert not (tmp_path / "outbox.txt").exists()

    done = cli(tmp_path, "resume", "d-1", flag, "--tools", "desk_tools", "--script", "then.yaml", "--json")
    assert done.returncode == EXIT_CODES[status], done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == status
    assert result["steps"]["triage"]["finish_reason"] == ("done" if status == "success" else "cancelled")
    assert ((tmp_path / "outbox.txt").read_text() if outbox else None) == outbox
