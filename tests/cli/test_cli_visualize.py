"""``agentloom visualize FILE [--format mermaid|ascii|svg] [--output PATH]``: a workflow drawn from the CLI."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_agentloom.cli import EXIT_INVALID_WORKFLOW, EXIT_OK, EXIT_USAGE, main

FLOW = """\
name: triage
steps:
  - {id: classify, type: llm_call, prompt: "Classify", output: category}
  - id: route
    type: router
    depends_on: [classify]
    conditions: [{expression: "category == 'bug'", target: file_bug}]
    default: reply
  - {id: file_bug, type: tool, tool_name: file_bug, output: bug_id}
  - {id: reply, type: llm_call, prompt: "Reply", output: answer}
"""


@pytest.fixture
def flow(tmp_path: Path) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    return path


def test_the_command_prints_a_mermaid_flowchart_by_default(flow: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", "visualize", str(flow)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "flowchart LR"
    assert '    n0["classify<br/><small>llm_call</small>"]' in lines
    assert '    n1{{"route<br/><small>router</small>"}}' in lines
    assert "  n0 --> n1" in lines
    assert "  n1 ==>|\"category == 'bug'\"| n2" in lines and '  n1 ==>|"default"| n3' in lines


def test_ascii_shows_the_layers_and_every_edge(flow: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["visualize", str(flow), "--format", "ascii"]) == EXIT_OK
    assert capsys.readouterr().out == (
        "workflow: triage\n"
        "layer 1: [ classify : llm_call ]\n"
        "layer 2: [ route : router ]\n"
        "layer 3: [ file_bug : tool ]  [ reply : llm_call ]\n"
        "edges:\n"
        "  classify --> route\n"
        "  route ==> file_bug  when category == 'bug'\n"
        "  route ==> reply  otherwise (no condition holds)\n"
    )


def test_ascii_says_a_branch_in_words_with_its_conditions_in_full(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "long.yaml"
    long = "classification.intent == 'billing_dispute' and classification.confidence > 0.8"
    path.write_text(FLOW.replace("category == 'bug'", long).replace("default: reply", "default: file_bug"))
    assert main(["visualize", str(path), "--format", "ascii"]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"  route ==> file_bug  when {long}, or otherwise\n" in out  # not cut at 40 characters
    assert "default" not in out


def test_svg_is_a_well_formed_standalone_file(flow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "drawings" / "flow.svg"
    assert main(["visualize", str(flow), "--format", "svg", "--output", str(out)]) == EXIT_OK
    assert capsys.readouterr().out.strip().endswith(f"svg drawing written to {out}")
    root = ET.fromstring(out.read_text())
    svg = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{svg}svg"
    steps = [group.get("data-step") for group in root.iter(f"{svg}g")]
    assert steps == ["classify", "route", "file_bug", "reply"]
    assert len([p for p in root.iter(f"{svg}path") if "edge" in (p.get("class") or "")]) == 3


def test_an_invalid_file_and_an_unknown_format_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsteps:\n  - {id: a, type: llm_call, prompt: p, depends_on: [nope]}\n")
    assert main(["visualize", str(bad)]) == EXIT_INVALID_WORKFLOW
    assert "depends on unknown step 'nope'" in capsys.readouterr().err
    assert main(["visualize", str(bad), "--format", "png"]) == EXIT_USAGE
    assert "invalid choice: 'png'" in capsys.readouterr().err
