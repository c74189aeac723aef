"""With every speed-up off (``AGENTLOOM_SPEEDUPS=0``) the package gives the same results: the examples' tests
(scenario tables, snapshots and cassettes among them), runs of workflows of each shape, and every YAML file of
the repository read back. A difference here is a bug in a speed-up."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

import pytest_agentloom
from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom._core.speedups import ENV_VAR
from pytest_agentloom._core.yaml_io import load_yaml
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import YamlReadError

ROOT = Path(pytest_agentloom.__file__).resolve().parents[1]


def outcomes(junit: Path) -> dict[str, str]:
    """Each test case of a JUnit XML report and how it ended."""
    found = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        ended = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        found[f"{case.get('classname')}::{case.get('name')}"] = ended[0] if ended else "passed"
    return found


def files_under(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


@pytest.mark.slow
def test_the_examples_pass_alike_and_write_nothing_with_speedups_off(tmp_path: Path) -> None:
    before = files_under(ROOT / "examples")
    reports = {}
    for switch in ("1", "0"):
        junit = tmp_path / f"speedups-{switch}.xml"
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        env = {**os.environ, ENV_VAR: switch, "PYTHONPATH": path}
        done = subprocess.run([sys.executable, "-m", "pytest", "examples", "-q", "-p", "no:cacheprovider",
                               "-p", "no:randomly", f"--junitxml={junit}"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        reports[switch] = outcomes(junit)
    assert reports["1"] == reports["0"] and len(reports["0"]) > 20
    assert files_under(ROOT / "examples") == before  # snapshots and cassettes are the same bytes


FLOWS = {
    "chain": "name: chain\nconfig: {model: m}\nstate: {topic: waves, items: [1, 2]}\nsteps:\n" + "".join(
        f"  - {{id: s{n}, type: llm_call, prompt: 'Step {n} on {{state.topic}}{after}', output: o{n}{depends}}}\n"
        for n, after, depends in [(0, "", "")] + [(n, f" after {{state.o{n - 1}}}", f", depends_on: [s{n - 1}]")
                                                for n in range(1, 12)]),
    "fan": "name: fan\nconfig: {model: m}\nsteps:\n  - {id: plan, type: llm_call, prompt: plan, output: plan}\n"
           + "".join(f"  - {{id: w{n}, type: llm_call, prompt: 'do {n} of {{state.plan}}', output: w{n}, "
                     "depends_on: [plan]}\n" for n in range(8))
           + "  - {id: join, type: llm_call, prompt: '{state.w0} {state.w7}', output: joined, "
           + "depends_on: [" + ", ".join(f"w{n}" for n in range(8)) + "]}\n",
    "router": "name: route\nconfig: {model: m}\nstate: {ticket: crash, seen: {a: [1]}}\nsteps:\n"
              "  - {id: classify, type: llm_call, prompt: 'Classify {state.ticket}', output: category}\n"
              "  - id: route\n    type: router\n    depends_on: [classify]\n"
              "    conditions: [{expression: \"category == 'bug'\", target: bug}]\n    default: other\n"
              "  - {id: bug, type: tool, tool_name: echo, tool_args: {x: '{state.seen}'}, output: seen.a}\n"
              "  - {id: other, type: llm_call, prompt: other, output: other}\n",
}
REPLIES = {"chain": {f"s{n}": f"answer {n}" for n in range(12)},
           "fan": {"plan": "the plan", **{f"w{n}": f"part {n}" for n in range(8)}, "join": "joined"},
           "router": {"classify": "bug", "other": "never"}}


@pytest.mark.parametrize("name", FLOWS)
def test_workflows_run_alike_with_speedups_off(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    results = []
    for switch in ("1", "0"):
        monkeypatch.setenv(ENV_VAR, switch)
        workflow = parse_workflow(FLOWS[name])
        runs = [run_workflow(workflow, provider=Scripted(REPLIES[name], allow_unused=True), clock=VirtualClock(),
                             runs_dir=False, tools={"echo": lambda x: x}) for _ in range(2)]
        results.append([run.to_json() for run in runs])
    assert results[0] == results[1]
    assert results[0][0] == results[0][1]  # a second run of the same workflow object too
    assert '"status":"success"' in results[0][0]


def read(path: Path) -> tuple[str, Any]:
    try:
        return "data", repr(load_yaml(path.read_text(encoding="utf-8"), file=path))
    except YamlReadError as exc:
        return "error", str(exc)


def test_every_yaml_file_of_the_repository_reads_alike_with_speedups_off(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [path for folder in ("tests", "examples", "cassettes") for path in sorted((ROOT / folder).rglob("*.y*ml"))
             if path.is_file()]
    assert len(paths) > 50
    monkeypatch.delenv(ENV_VAR, raising=False)
    fast = {path: read(path) for path in paths}
    monkeypatch.setenv(ENV_VAR, "0")
    assert {path: read(path) for path in paths} == fast
