"""The initial state is not copied in: a run copies what it writes through, and the result holds a copy.

Whatever a run writes, wherever it writes it, the workflow's ``state:`` and the
caller's ``state=`` values never change; whatever the caller later does to the
result (or to what it passed in), the other side and the next run never see it.
"""

from __future__ import annotations

import textwrap
from typing import Any

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

NESTED_WRITES = textwrap.dedent("""
    name: nested-writes
    config: {model: gpt-4o-mini}
    state:
      config: {mode: safe, limits: {depth: 1}}
      items: [{name: first}, {name: second}]
      untouched: {deep: {list: [1, 2, 3]}}
    steps:
      - {id: a, type: llm_call, prompt: "mode {state.config.mode}", output: config.limits.depth}
      - {id: b, type: llm_call, prompt: "b", output: "items[1].name", depends_on: [a]}
      - {id: c, type: llm_call, prompt: "c", output: config.added.here, depends_on: [b]}
      - {id: d, type: llm_call, prompt: "d {state.config.limits.depth}", output: config.limits.depth,
         depends_on: [c]}
""")

FILE_STATE = {"config": {"mode": "safe", "limits": {"depth": 1}}, "items": [{"name": "first"}, {"name": "second"}],
              "untouched": {"deep": {"list": [1, 2, 3]}}}


def run(workflow: Workflow, **options: Any) -> Any:
    provider = Scripted({"a": "two", "b": "renamed", "c": "new", "d": "three"})
    return run_workflow(workflow, provider=provider, clock=VirtualClock(), runs_dir=False, **options)


def test_writes_into_the_files_nested_state_leave_the_workflow_as_loaded() -> None:
    workflow = parse_workflow(NESTED_WRITES)

    result = run(workflow)

    assert result.ok
    assert result.state["config"] == {"mode": "safe", "limits": {"depth": "three"}, "added": {"here": "new"}}
    assert result.state["items"] == [{"name": "first"}, {"name": "renamed"}]
    assert result.steps["d"].output == "three"
    assert workflow.state == FILE_STATE
    assert run(workflow).to_json() == result.to_json()  # the second run starts from the same state


def test_writes_leave_the_callers_state_values_alone() -> None:
    workflow = parse_workflow(NESTED_WRITES)
    given = {"config": {"mode": "given", "limits": {"depth": 0}}, "items": [{"name": "x"}, {"name": "y"}]}
    before = {"config": {"mode": "given", "limits": {"depth": 0}}, "items": [{"name": "x"}, {"name": "y"}]}

    result = run(workflow, state=given)

    assert result.state["config"]["limits"] == {"depth": "three"}
    assert result.state["items"][1] == {"name": "renamed"}
    assert given == before


def test_the_result_shares_nothing_with_the_workflow_or_the_callers_state() -> None:
    workflow = parse_workflow(NESTED_WRITES)
    given = {"extra": {"values": [1, 2]}}

    result = run(workflow, state=given)
    result.state["untouched"]["deep"]["list"].append(4)
    result.state["extra"]["values"].append(3)
    result.state["config"]["mode"] = "changed"

    assert workflow.state == FILE_STATE
    assert given == {"extra": {"values": [1, 2]}}
    assert run(workflow, state={"extra": {"values": [1, 2]}}).state["untouched"]["deep"]["list"] == [1, 2, 3]


def test_changing_the_callers_state_after_the_run_leaves_the_result_alone() -> None:
    workflow = parse_workflow(NESTED_WRITES)
    given = {"extra": {"values": [1, 2]}}

    result = run(workflow, state=given)
    given["extra"]["values"].append(3)

    assert result.state["extra"] == {"values": [1, 2]}


def test_a_failed_write_through_shared_state_changes_nothing() -> None:
    workflow = parse_workflow(textwrap.dedent("""
        name: bad-write
        config: {model: gpt-4o-mini}
        state: {items: [1, 2]}
        steps:
          - {id: a, type: llm_call, prompt: "a", output: "items[5]"}
    """))

    result = run_workflow(workflow, provider=Scripted({"a": "x"}), clock=VirtualClock(), runs_dir=False)

    assert not result.ok and result.steps["a"].error_code == "output_path"
    assert workflow.state == {"items": [1, 2]}


def test_many_writes_through_one_shared_container_all_land() -> None:
    """The first write copies the file's container; the later ones write into that copy."""
    steps = "\n".join(f"  - {{id: s{i}, type: llm_call, prompt: p, output: 'big.k{i}'}}" for i in range(30))
    head = "name: many\nconfig: {model: gpt-4o-mini}\nstate: {big: {seed: 1}}\nsteps:\n"
    workflow = parse_workflow(f"{head}{steps}\n")

    result = run_workflow(workflow, provider=Scripted({f"s{i}": f"v{i}" for i in range(30)}), clock=VirtualClock(),
                          runs_dir=False)

    assert result.state["big"] == {"seed": 1, **{f"k{i}": f"v{i}" for i in range(30)}}
    assert workflow.state == {"big": {"seed": 1}}
