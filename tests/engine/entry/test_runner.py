"""The runner: layers and their snapshots, file-order writes, failures, budget, timeout, event loops."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import (
    Scripted,
    UsageError,
    VirtualClock,
    Workflow,
    WorkflowResult,
    arun_workflow,
    reply,
    run_workflow,
)
from pytest_agentloom._core.clock import current_clock
from pytest_agentloom.engine._format.loader import parse_workflow

WORKFLOWS = Path(__file__).parent.parent / "workflows"


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def statuses(result: WorkflowResult) -> dict[str, str]:
    return {step_id: step.status.value for step_id, step in result.steps.items()}


def yielding(name: str, yields: int, finished: list[str]):
    """An async tool that gives the event loop ``yields`` turns before it returns, recording when it finished."""

    async def tool(**arguments: Any) -> dict[str, Any]:
        for _ in range(yields):
            await asyncio.sleep(0)
        finished.append(name)
        return {"by": name, "saw": arguments}

    return tool


# --------------------------------------------------------------------------- layers


LAYERS = """
name: layers
state: {x: start}
steps:
  - {id: a, type: tool, tool_name: a, tool_args: {x: state.x}, output: x}
  - {id: b, type: tool, tool_name: b, tool_args: {x: state.x}, output: x}
  - {id: c, type: tool, tool_name: c, tool_args: {x: state.x, a: state.steps.a.output.by}, depends_on: [a, b]}
"""


@pytest.mark.parametrize(("a_yields", "b_yields"), [(0, 5), (5, 0), (3, 3)], ids=["a-first", "b-first", "even"])
def test_siblings_see_the_layer_start_and_writes_land_in_file_order(a_yields: int, b_yields: int) -> None:
    finished: list[str] = []
    tools = {"a": yielding("a", a_yields, finished), "b": yielding("b", b_yields, finished),
             "c": yielding("c", 0, finished)}

    result = run_workflow(flow(LAYERS), tools=tools, clock=VirtualClock())

    if a_yields != b_yields:
        assert finished[:2] == (["a", "b"] if a_yields < b_yields else ["b", "a"])
    # both siblings read the state as it was when their layer started
    assert result.steps["a"].output["saw"] == {"x": "start"}
    assert result.steps["b"].output["saw"] == {"x": "start"}
    # the conflicting write to 'x' resolves by file order: b comes after a, so b wins, whoever finished first
    assert result.state["x"] == {"by": "b", "saw": {"x": "start"}}
    # the next layer sees every write of the previous one
    assert result.steps["c"].output["saw"] == {"x": {"by": "b", "saw": {"x": "start"}}, "a": "a"}
    # the trace is merged in file order too
    assert [(e.kind, e.step_id) for e in result.trace if e.kind in ("step_start", "step_end")] == [
        ("step_start", "a"), ("step_end", "a"), ("step_start", "b"), ("step_end", "b"),
        ("step_start", "c"), ("step_end", "c"),
    ]
    assert [e.data["steps"] for e in result.trace.events("layer_start")] == [["a", "b"], ["c"]]


def test_a_sibling_write_is_invisible_to_an_llm_call_in_the_same_layer() -> None:
    workflow = flow(
        """
        name: layers
        config: {model: gpt-4o}
        state: {topic: old}
        steps:
          - {id: set_topic, type: tool, tool_name: new_topic, output: topic}
          - {id: same_layer, type: llm_call, prompt: "Topic {state.topic} {state.steps.set_topic.output}"}
          - {id: next_layer, type: llm_call, prompt: "Topic {state.topic}", depends_on: [set_topic]}
        """
    )
    provider = Scripted({"same_layer": "ok", "next_layer": "ok"})

    run_workflow(workflow, provider=provider, tools={"new_topic": lambda: "new"}, clock=VirtualClock())

    assert provider.calls("same_layer")[0].messages[-1]["content"] == "Topic old "
    assert provider.calls("next_layer")[0].messages[-1]["content"] == "Topic new"


def test_steps_without_dependencies_form_one_layer_and_a_chain_one_layer_each() -> None:
    workflow = flow(
        """
        name: shape
        steps:
          - {id: p1, type: tool, tool_name: t}
          - {id: p2, type: tool, tool_name: t}
          - {id: c1, type: tool, tool_name: t, depends_on: [p1]}
          - {id: c2, type: tool, tool_name: t, depends_on: [c1, p2]}
          - {id: p3, type: tool, tool_name: t}
        """
    )

    result = run_workflow(workflow, tools={"t": lambda: 1}, clock=VirtualClock())

    assert [e.data["steps"] for e in result.trace.events("layer_start")] == [["p1", "p2", "p3"], ["c1"], ["c2"]]
    assert [e.data["layer"] for e in result.trace.events("layer_start")] == [1, 2, 3]
    assert list(result.steps) == ["p1", "p2", "c1", "c2", "p3"]  # results keep file order


def test_each_step_of_a_layer_has_its_own_clock_and_the_layer_ends_at_the_latest() -> None:
    async def sleeper(seconds: float) -> float:
        await current_clock().sleep(seconds)
        return current_clock().now()

    workflow = flow(
        """
        name: clocks
        steps:
          - {id: slow, type: tool, tool_name: sleep, tool_args: {seconds: 5}}
          - {id: fast, type: tool, tool_name: sleep, tool_args: {seconds: 2}}
          - {id: after, type: tool, tool_name: sleep, tool_args: {seconds: 1}, depends_on: [slow, fast]}
        """
    )
    clock = VirtualClock()

    result = run_workflow(workflow, tools={"sleep": sleeper}, clock=clock)

    assert result.steps["slow"].output == 5 and result.steps["fast"].output == 2
    assert (result.steps["fast"].started_at, result.steps["fast"].ended_at) == (0.0, 2.0)
    assert (result.steps["after"].started_at, result.steps["after"].ended_at) == (5.0, 6.0)
    assert clock.now() == 6.0
    assert result.trace.events("run_end")[0].time == 6.0


def test_a_virtual_clock_that_does_not_start_at_zero() -> None:
    workflow = flow("name: t\nsteps: [{id: a, type: tool, tool_name: t}]\n")

    result = run_workflow(workflow, tools={"t": lambda: 1}, clock=VirtualClock(start=1000.0))

    assert {e.time for e in result.trace} == {0.0}


# --------------------------------------------------------------------------- failures


FAILING = """
name: failing
steps:
  - {id: boom, type: tool, tool_name: boom}
  - {id: sibling, type: tool, tool_name: ok, output: sibling_ran}
  - {id: child, type: tool, tool_name: ok, depends_on: [boom]}
  - {id: grandchild, type: tool, tool_name: ok, depends_on: [child]}
  - {id: mixed, type: tool, tool_name: ok, depends_on: [sibling, grandchild]}
  - {id: unrelated, type: tool, tool_name: ok, depends_on: [sibling]}
"""


def test_a_failed_step_fails_the_run_and_its_dependents_name_it() -> None:
    def boom() -> None:
        raise RuntimeError("kaput")

    result = run_workflow(flow(FAILING), tools={"boom": boom, "ok": lambda: 1}, clock=VirtualClock())

    assert (result.status, result.reason, result.failed_step) == ("failed", "step_failed", "boom")
    assert not result.ok
    assert statuses(result) == {
        "boom": "failed", "sibling": "success", "child": "skipped", "grandchild": "skipped",
        "mixed": "skipped", "unrelated": "skipped",
    }
    assert result.state["sibling_ran"] == 1  # a step of the same layer still finishes and writes
    for step_id in ("child", "grandchild", "mixed"):
        assert result.steps[step_id].error == "depends on failed step 'boom'"
        assert result.steps[step_id].error_code == "dependency_failed"
    assert result.steps["unrelated"].error == "run stopped after step 'boom' failed"
    assert result.steps["unrelated"].error_code == "run_failed"
    assert result.trace.events("run_end")[0].data == {"status": "failed", "reason": "step_failed"}


def test_two_failures_in_one_layer_report_the_first_in_file_order() -> None:
    workflow = flow(
        """
        name: two
        steps:
          - {id: first, type: tool, tool_name: slow_boom}
          - {id: second, type: tool, tool_name: boom}
          - {id: after, type: tool, tool_name: boom, depends_on: [second]}
        """
    )

    async def slow_boom() -> None:
        for _ in range(5):
            await asyncio.sleep(0)
        raise RuntimeError("slow")

    def boom() -> None:
        raise RuntimeError("fast")

    result = run_workflow(workflow, tools={"slow_boom": slow_boom, "boom": boom}, clock=VirtualClock())

    assert result.failed_step == "first"
    assert result.steps["after"].error == "depends on failed step 'second'"


# --------------------------------------------------------------------------- budget and run timeout


BUDGET = """
name: budget
config: {model: gpt-4o, budget_usd: 0.01}
steps:
  - {id: a, type: llm_call, prompt: hi}
  - {id: b, type: llm_call, prompt: hi}
  - {id: c, type: llm_call, prompt: hi, depends_on: [a]}
  - {id: d, type: llm_call, prompt: hi, depends_on: [c]}
"""


def test_spend_reaching_the_budget_stops_the_run_before_the_next_layer() -> None:
    provider = Scripted({
        "a": reply("x", input_tokens=2000, output_tokens=500),  # 0.005 + 0.005 = $0.01
        "b": reply("y", input_tokens=400),  # $0.001
        "c": "never", "d": "never",
    })

    result = run_workflow(flow(BUDGET), provider=provider, clock=VirtualClock())

    assert (result.status, result.reason) == ("budget_exceeded", "budget_exceeded")
    assert statuses(result) == {"a": "success", "b": "success", "c": "skipped", "d": "skipped"}
    assert result.steps["a"].cost_usd == pytest.approx(0.01)
    assert result.cost_usd == pytest.approx(0.011)
    assert result.steps["c"].error == "run stopped: budget of $0.01 reached (spent $0.011000)"
    assert result.steps["c"].error_code == "budget_exceeded"
    assert [c.step_id for c in provider.requests] == ["a", "b"]
    assert result.usage == {"input_tokens": 2400, "output_tokens": 500, "reasoning_tokens": 0}
    assert result.trace.events("run_end")[0].data == {"status": "budget_exceeded", "reason": "budget_exceeded"}
    assert len(result.trace.events("layer_start")) == 1


def test_spend_under_the_budget_runs_everything() -> None:
    provider = Scripted({step: reply("x", input_tokens=100, output_tokens=100) for step in "abcd"})

    result = run_workflow(flow(BUDGET), provider=provider, clock=VirtualClock())

    assert (result.status, result.reason) == ("success", "completed")
    assert result.cost_usd == pytest.approx(4 * (100 * 2.5 + 100 * 10) / 1e6)


def test_overspending_in_the_last_layer_completes_the_run() -> None:
    """The budget is checked before each layer: with nothing left to dispatch, nothing is stopped."""
    workflow = flow("name: b\nconfig: {model: gpt-4o, budget_usd: 0.01}\nsteps: [{id: a, type: llm_call, prompt: x}]\n")

    result = run_workflow(workflow, provider=Scripted({"a": reply("x", cost=0.05)}), clock=VirtualClock())

    assert (result.status, result.reason, result.cost_usd) == ("success", "completed", 0.05)


def test_a_provider_reported_cost_counts_against_the_budget() -> None:
    provider = Scripted({"a": reply("x", cost=0.02), "b": "y", "c": "never", "d": "never"})

    result = run_workflow(flow(BUDGET), provider=provider, clock=VirtualClock())

    assert result.status == "budget_exceeded"
    assert result.steps["a"].cost_usd == 0.02


def test_the_run_timeout_stops_the_run_before_the_next_layer() -> None:
    async def slow() -> str:
        await current_clock().sleep(30)
        return "done"

    workflow = flow(
        """
        name: timeout
        config: {timeout: 20}
        steps:
          - {id: a, type: tool, tool_name: slow}
          - {id: b, type: tool, tool_name: slow, depends_on: [a]}
        """
    )

    result = run_workflow(workflow, tools={"slow": slow}, clock=VirtualClock())

    assert (result.status, result.reason) == ("timeout", "timeout")
    assert statuses(result) == {"a": "success", "b": "skipped"}
    assert result.steps["b"].error == "run stopped: run timeout of 20s reached"
    assert result.steps["b"].error_code == "timeout"


# --------------------------------------------------------------------------- the API


def test_run_workflow_accepts_a_path(tmp_path: Path) -> None:
    provider = Scripted({"classify": "bug"})
    calls: list[dict[str, Any]] = []

    result = run_workflow(
        WORKFLOWS / "triage.yaml", provider=provider, clock=VirtualClock(),
        tools={"create_issue": lambda **kw: calls.append(kw) or 7, "notify": lambda route: route},
    )

    assert result.ok
    assert result.workflow == "triage"
    assert calls == [{"title": "Printer on fire", "labels": ["bug"]}]
    assert result.steps["notify"].output == "file_bug"
    assert statuses(result)["answer"] == "skipped"


def test_run_workflow_inside_a_running_event_loop_falls_back_to_a_thread() -> None:
    workflow = flow("name: t\nconfig: {model: gpt-4o}\nsteps: [{id: a, type: llm_call, prompt: hi}]\n")

    async def caller() -> WorkflowResult:
        return run_workflow(workflow, provider=Scripted({"a": "from a thread"}), clock=VirtualClock())

    result = asyncio.run(caller())

    assert result.ok
    assert result.steps["a"].output == "from a thread"


def test_errors_inside_the_fallback_thread_reach_the_caller() -> None:
    async def caller() -> WorkflowResult:
        return run_workflow(Path("/nonexistent/flow.yaml"))

    with pytest.raises(Exception, match="Workflow file not found"):
        asyncio.run(caller())


def test_arun_workflow_is_awaitable() -> None:
    workflow = flow("name: t\nsteps: [{id: a, type: tool, tool_name: t, output: out}]\n")

    result = asyncio.run(arun_workflow(workflow, tools={"t": lambda: "v"}, clock=VirtualClock()))

    assert result.state["out"] == "v"


def test_run_ids_are_derived_from_the_inputs_unless_given() -> None:
    workflow = flow("name: t\nstate: {q: 1}\nsteps: [{id: a, type: tool, tool_name: t}]\n")
    tools = {"t": lambda: 1}

    first = run_workflow(workflow, tools=tools, clock=VirtualClock())
    again = run_workflow(workflow, tools=tools, clock=VirtualClock())
    other = run_workflow(workflow, tools=tools, clock=VirtualClock(), state={"q": 2})
    given = run_workflow(workflow, tools=tools, clock=VirtualClock(), run_id="run-fixed")
    sourced = run_workflow(workflow, tools=tools, clock=VirtualClock(), run_id=lambda: "run-from-source")

    assert first.run_id == again.run_id
    assert first.run_id.startswith("run-") and len(first.run_id) == len("run-") + 12
    assert other.run_id != first.run_id
    assert given.run_id == "run-fixed"
    assert sourced.run_id == "run-from-source"
    assert first.trace.events("run_start")[0].data == {"workflow": "t", "run_id": first.run_id}


def test_a_failed_llm_step_result_fields() -> None:
    workflow = flow("name: t\nconfig: {model: gpt-4o}\nsteps: [{id: a, type: llm_call, prompt: hi}]\n")
    from pytest_agentloom import error

    result = run_workflow(workflow, provider=Scripted({"a": error(401, "bad key")}), clock=VirtualClock())

    step = result.steps["a"]
    data = step.to_dict()
    assert data == {
        "step_id": "a", "status": "failed", "output": None,
        "error": "provider error (HTTP 401): bad key (not retryable, attempt 1)", "error_code": "provider_error",
        "attempts": 1, "finish_reason": None, "input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0,
        "cost_usd": 0.0, "model": None, "provider": None, "started_at": 0.0, "ended_at": 0.0,
    }


@pytest.mark.parametrize("state", ["abc", [("a", 1)], 5], ids=["str", "pairs", "int"])
def test_state_must_be_a_mapping(state: Any) -> None:
    workflow = flow("name: t\nsteps: [{id: a, type: tool, tool_name: t}]\n")

    with pytest.raises(UsageError, match="state must map top-level state keys to values, got"):
        run_workflow(workflow, state=state, tools={"t": lambda: 1}, clock=VirtualClock())


def test_a_provider_without_complete_is_a_usage_error() -> None:
    workflow = flow("name: t\nconfig: {model: gpt-4o}\nsteps: [{id: a, type: llm_call, prompt: hi}]\n")

    with pytest.raises(UsageError, match="provider must have an async complete\\(request\\) method, got dict"):
        run_workflow(workflow, provider={"a": "x"}, clock=VirtualClock())  # type: ignore[arg-type]
