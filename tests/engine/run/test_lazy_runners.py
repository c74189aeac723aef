"""Step runners are imported when a workflow that has their step type is about to run, not with the engine.

A scenario table of ``llm_call`` steps never needs the agent loop, the approval gate, embeddings or
subworkflows; importing them cost every test process. These tests check the three promises that come
with importing them late: a run of a plain ``llm_call`` workflow leaves them unimported; a workflow
whose step types are imported late runs as before; and a runner that cannot be imported fails the run
before its first step, not halfway through it. The import checks run in a fresh interpreter, since
this test process has long imported every runner.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._format.model import LLMCallStep
from pytest_agentloom.engine._run import dispatch as runners
from pytest_agentloom.engine._run import loop as run_module

ROOT = Path(__file__).resolve().parents[3]

LATE = [
    "pytest_agentloom.engine._steps.agent", "pytest_agentloom.engine._calls.agent_loop",
    "pytest_agentloom.engine._steps.approval_gate", "pytest_agentloom.engine._steps.embed",
    "pytest_agentloom.engine._steps.router", "pytest_agentloom.engine._steps.subworkflow",
    "pytest_agentloom.engine._steps.tool", "pytest_agentloom.engine._calls.tool_loop",
    "pytest_agentloom.engine._calls.structured", "pytest_agentloom.engine._calls.attachments",
]


def in_fresh_python(code: str) -> str:
    """Run ``code`` in a new interpreter that imports this tree's package; its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_plain_llm_call_run_imports_no_other_runner() -> None:
    late = [*LATE, "pytest_agentloom.replay._tool_tape"]  # the harness needs it only for a test with a cassette
    out = in_fresh_python(f"""
        import sys
        from pytest_agentloom import Scripted, VirtualClock, run_workflow
        from pytest_agentloom.engine._format.loader import parse_workflow
        from pytest_agentloom.testing import _harness as harness  # what a scenario table's process imports
        from pytest_agentloom.testing._scenarios import table as scenarios

        flow = parse_workflow('''
        name: chain
        config: {{model: gpt-4o-mini}}
        steps:
          - {{id: a, type: llm_call, prompt: "one", output: x}}
          - {{id: b, type: llm_call, prompt: "two {{state.x}}", depends_on: [a]}}
        ''')
        result = run_workflow(flow, provider=Scripted({{"a": "1", "b": "2"}}), clock=VirtualClock(), runs_dir=False)
        assert result.status.value == "success", result
        print(sorted(name for name in {late!r} if name in sys.modules))
        print("pytest_agentloom.engine._steps.llm_call" in sys.modules)
    """)
    assert out.split("\n")[:2] == ["[]", "True"]


def test_step_types_whose_runners_are_imported_late_run_as_before() -> None:
    out = in_fresh_python(f"""
        import sys
        from pytest_agentloom import Scripted, VirtualClock, run_workflow
        from pytest_agentloom.engine._format.loader import parse_workflow

        before = sorted(name for name in {LATE!r} if name in sys.modules)
        flow = parse_workflow('''
        name: every-late-type
        config: {{model: gpt-4o-mini}}
        state: {{n: 2}}
        steps:
          - id: pick
            type: router
            conditions: [{{expression: "state.n > 1", target: big}}]
            default: small
          - {{id: big, type: tool, tool_name: double, tool_args: {{n: state.n}}, output: doubled, depends_on: [pick]}}
          - {{id: small, type: tool, tool_name: double, tool_args: {{n: 0}}, depends_on: [pick]}}
          - id: shaped
            type: llm_call
            prompt: "as JSON"
            response_schema: {{type: json_object}}
            output: shaped
          - id: child
            type: subworkflow
            workflow_inline:
              name: inner
              steps: [{{id: inner_double, type: tool, tool_name: double, tool_args: {{n: 5}}, output: ten}}]
            output: inner
        ''')
        result = run_workflow(flow, provider=Scripted({{"shaped": '{{"ok": true}}'}}),
                              tools={{"double": lambda n: 2 * n}}, clock=VirtualClock(), runs_dir=False)
        print(before)
        print(result.status.value, {{k: v.status.value for k, v in result.steps.items()}})
        print(result.state["doubled"], result.state["shaped"], result.state["inner"]["ten"])
    """)
    before, statuses, values = out.split("\n")[:3]
    assert before == "[]"
    assert statuses == ("success {'pick': 'success', 'big': 'success', 'small': 'skipped', 'shaped': 'success', "
                        "'child': 'success'}")
    assert values == "4 {'ok': True} 10"


def test_a_runner_that_cannot_be_imported_fails_the_run_before_its_first_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Any:
        raise ImportError("cannot import name 'run_llm_call' (a broken install)")

    table = runners._RunnerTable({**runners._IMPORTERS, LLMCallStep: broken})
    monkeypatch.setattr(runners, "STEP_RUNNERS", table)
    monkeypatch.setattr(run_module, "STEP_RUNNERS", table)
    calls: list[Any] = []

    def tool(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "ran"

    workflow: Workflow = parse_workflow(textwrap.dedent("""
        name: broken
        config: {model: gpt-4o-mini}
        steps:
          - {id: first, type: tool, tool_name: note}
          - {id: ask, type: llm_call, prompt: "hi", depends_on: [first]}
    """))
    with pytest.raises(ImportError, match="a broken install"):
        run_workflow(workflow, provider=Scripted({"ask": "hello"}), tools={"note": tool}, clock=VirtualClock(),
                     runs_dir=False)
    assert calls == []  # the tool step before the llm_call never ran


def test_the_runner_table_covers_every_step_type_and_keeps_what_it_imported() -> None:
    from pytest_agentloom.engine._format.model import STEP_TYPES

    assert set(runners.STEP_RUNNERS) == set(STEP_TYPES.values())
    assert len(runners.STEP_RUNNERS) == len(STEP_TYPES)
    first = runners.STEP_RUNNERS[LLMCallStep]
    assert runners.STEP_RUNNERS[LLMCallStep] is first
    assert first.__name__ == "run_llm_call"
