"""``agentloom validate`` names the line of every problem, and the template paths no state can fill (issue 31)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentloom.cli import main

TYPO = """\
name: reply
state:
  email: {sender: "", subject: ""}
steps:
  - id: draft
    type: llm_call
    model: gpt-4o-mini
    prompt: |
      Write a reply.
      To: {state.email.sendr}
      About: {state.email.subject}
    output: reply
  - id: polish
    type: llm_call
    model: gpt-4o-mini
    depends_on: [draft]
    prompt: "Polish {state.reply.text} for {state.emial.sender}"
    output: final
"""

BROKEN = """\
name: broken
steps:
  - id: a
    type: llm_call
    model: gpt-4o-mini
    prompt: hi
  - id: b
    type: llm_call
    depends_on: [aa]
    prompt: "x"
    temprature: 3
"""


def test_a_template_path_no_state_can_fill_is_a_warning_at_its_line(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reply.yaml"
    path.write_text(TYPO)
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{path}:10: warning: step 'draft', field 'prompt': it reads 'email.sendr', which the 'email' that "
        "'state:' gives does not hold (and no step writes 'email'). How to fix: did you mean 'email.sender'? "
        "add it to 'state:' or correct the path",
        f"{path}:17: warning: step 'polish', field 'prompt': it reads state key 'emial', which is neither in "
        "'state:' nor any step's 'output'. How to fix: did you mean 'email.sender'? add 'emial' to 'state:', "
        "pass it with --state, or correct the name",
    ]  # {state.reply.text}: 'reply' is a step's output, whatever it holds


def test_load_errors_carry_the_line_they_are_written_on(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    done = subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", "validate", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 3
    assert f"       file: {path}:11\n       step: b\n       field: temprature" in done.stderr
    assert f"       file: {path}:9\n       step: b\n       field: depends_on[0]" in done.stderr
