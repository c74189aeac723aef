"""The router step: first match wins, default, skips that spread, joins that run."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

TRIAGE = """
name: triage
config: {model: gpt-4o}
steps:
  - {id: classify, type: llm_call, prompt: "Classify: {state.ticket}", output: label}
  - id: route
    type: router
    depends_on: [classify]
    conditions:
      - {expression: "steps.classify.output.strip().lower() == 'bug'", target: fix}
      - {expression: "label in ['bug', 'crash'] or state.urgent", target: escalate}
    default: answer
    output: route
  - {id: fix, type: tool, tool_name: record}
  - {id: escalate, type: tool, tool_name: record}
  - {id: answer, type: tool, tool_name: record}
  - {id: fix_followup, type: tool, tool_name: record, depends_on: [fix]}
  - {id: fix_followup_2, type: tool, tool_name: record, depends_on: [fix_followup]}
  - {id: join, type: tool, tool_name: record, depends_on: [fix, escalate, answer]}
"""


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def triage(label: str, state: dict[str, Any] | None = None):
    ran: list[str] = []
    result = run_workflow(
        flow(TRIAGE), state={"ticket": "t", **(state or {})}, provider=Scripted({"classify": label}),
        tools={"record": lambda: ran.append("x") or len(ran)}, clock=VirtualClock(),
    )
    return result


def statuses(result) -> dict[str, str]:
    return {step_id: step.status.value for step_id, step in result.steps.items()}


def test_the_first_matching_condition_wins() -> None:
    result = triage(" BUG\n")  # both conditions could hold for 'bug'; the first one is chosen

    assert result.steps["route"].output == "fix"
    assert result.state["route"] == "fix"
    assert result.state["steps"]["route"] == {"output": "fix", "status": "success"}
    assert statuses(result) == {
        "classify": "success", "route": "success", "fix": "success", "escalate": "skipped", "answer": "skipped",
        "fix_followup": "success", "fix_followup_2": "success", "join": "success",
    }
    [choice] = result.trace.events("router_choice")
    assert choice.data == {
        "target": "fix", "condition": 0, "expression": "steps.classify.output.strip().lower() == 'bug'"
    }


def test_a_later_condition_matches_when_earlier_ones_do_not() -> None:
    result = triage("question", {"urgent": True})

    assert result.steps["route"].output == "escalate"
    assert result.trace.events("router_choice")[0].data["condition"] == 1


def test_the_default_is_chosen_when_nothing_matches() -> None:
    result = triage("question")

    assert result.state["route"] == "answer"
    assert result.trace.events("router_choice")[0].data == {"target": "answer", "condition": "default"}
    assert statuses(result) == {
        "classify": "success", "route": "success", "fix": "skipped", "escalate": "skipped", "answer": "success",
        "fix_followup": "skipped", "fix_followup_2": "skipped", "join": "success",
    }


def test_unchosen_branches_and_what_depends_only_on_them_are_skipped_with_a_reason() -> None:
    result = triage("question")

    assert result.steps["fix"].error == "not chosen by router 'route' (it chose 'answer')"
    assert result.steps["fix"].error_code == "not_chosen"
    assert result.steps["fix_followup"].error == "all of its dependencies were skipped"
    assert result.steps["fix_followup_2"].error_code == "dependencies_skipped"
    assert result.steps["fix"].attempts == 0
    assert "fix" not in result.state["steps"]
    skipped = [e.step_id for e in result.trace.events("step_skip")]
    assert skipped == ["fix", "escalate", "fix_followup", "fix_followup_2"]
    assert result.status == "success" and result.reason == "completed"


def test_a_join_after_the_branches_runs_and_sees_the_chosen_branch() -> None:
    workflow = flow(
        """
        name: join
        config: {model: gpt-4o}
        state: {kind: b}
        steps:
          - id: r
            type: router
            conditions: [{expression: "kind == 'a'", target: a}, {expression: "kind == 'b'", target: b}]
          - {id: a, type: tool, tool_name: echo, tool_args: {v: A}, output: picked}
          - {id: b, type: tool, tool_name: echo, tool_args: {v: B}, output: picked}
          - {id: join, type: llm_call, prompt: "Picked {state.picked}", depends_on: [a, b]}
        """
    )
    provider = Scripted({"join": "done"})

    result = run_workflow(workflow, provider=provider, tools={"echo": lambda v: v}, clock=VirtualClock())

    assert statuses(result) == {"r": "success", "a": "skipped", "b": "success", "join": "success"}
    assert provider.requests[0].messages[-1]["content"] == "Picked B"


def test_no_match_and_no_default_fails_the_router_and_skips_its_targets() -> None:
    workflow = flow(
        """
        name: nomatch
        state: {kind: c}
        steps:
          - id: r
            type: router
            conditions: [{expression: "kind == 'a'", target: a}, {expression: "kind == 'b'", target: b}]
          - {id: a, type: tool, tool_name: echo}
          - {id: b, type: tool, tool_name: echo}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    step = result.steps["r"]
    assert step.status == "failed"
    assert step.error_code == "router_no_match"
    assert step.error.startswith("router 'r' matched no condition and has no default (tried: kind == 'a'; kind == 'b')")
    assert "How to fix: add 'default: <step id>'" in step.error
    assert result.steps["a"].error == "depends on failed step 'r'"
    assert (result.status, result.reason, result.failed_step) == ("failed", "step_failed", "r")
    assert "r" not in result.state.get("steps", {})


@pytest.mark.parametrize(
    ("expression", "state", "chosen"),
    [
        pytest.param("missing == 'x'", {}, "other", id="missing-key-is-none"),
        pytest.param("state.missing.lower() == 'x'", {}, "other", id="method-on-missing-is-none"),
        pytest.param("not missing", {}, "hit", id="not-missing"),
        pytest.param("score >= 0.5 and 'urgent' in tags", {"score": 0.7, "tags": ["urgent"]}, "hit", id="and-in"),
        pytest.param("items[0].name == 'A'", {"items": [{"name": "A"}]}, "hit", id="index-path"),
        pytest.param("items[5] == None", {"items": []}, "hit", id="index-past-end-is-none"),
        pytest.param("len(items) > 1", {"items": [1, 2]}, "hit", id="len"),
    ],
)
def test_expressions_read_the_layer_state(expression: str, state: dict[str, Any], chosen: str) -> None:
    workflow = flow(
        f"""
        name: expr
        steps:
          - {{id: r, type: router, conditions: [{{expression: "{expression}", target: hit}}], default: other}}
          - {{id: hit, type: tool, tool_name: echo}}
          - {{id: other, type: tool, tool_name: echo}}
        """
    )

    result = run_workflow(workflow, state=state, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert result.steps["r"].output == chosen


def test_an_expression_that_fails_at_run_time_fails_the_router() -> None:
    workflow = flow(
        """
        name: expr
        state: {n: null}
        steps:
          - {id: r, type: router, conditions: [{expression: "n < 1", target: a}], default: a}
          - {id: a, type: tool, tool_name: echo}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert result.steps["r"].status == "failed"
    assert result.steps["r"].error_code == "expression_error"
    assert result.steps["r"].error.startswith("condition 0 ('n < 1') failed:")


def test_a_router_target_waits_for_the_router_even_without_depends_on() -> None:
    workflow = flow(
        """
        name: order
        steps:
          - {id: first, type: tool, tool_name: echo, output: seen}
          - {id: r, type: router, depends_on: [first], default: t}
          - {id: t, type: tool, tool_name: echo}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert [e.data["steps"] for e in result.trace.events("layer_start")] == [["first"], ["r"], ["t"]]


def test_an_unchosen_router_skips_its_own_targets_too() -> None:
    workflow = flow(
        """
        name: nested
        steps:
          - {id: top, type: router, conditions: [{expression: "True", target: leaf}], default: inner}
          - {id: leaf, type: tool, tool_name: echo}
          - {id: inner, type: router, default: deep}
          - {id: deep, type: tool, tool_name: echo}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert statuses(result) == {"top": "success", "leaf": "success", "inner": "skipped", "deep": "skipped"}


TWO_ROUTERS = """
name: two-routers
state: {kind: a}
steps:
  - {id: first, type: router, conditions: [{expression: "kind == 'a'", target: shared}], default: only_first}
  - {id: second, type: router, conditions: [{expression: "kind == 'z'", target: shared}], default: only_second}
  - {id: shared, type: tool, tool_name: echo}
  - {id: only_first, type: tool, tool_name: echo}
  - {id: only_second, type: tool, tool_name: echo}
"""


@pytest.mark.parametrize("swap", [False, True], ids=["chooser-first", "chooser-second"])
def test_a_step_chosen_by_one_router_runs_even_when_another_router_of_the_layer_passes_it_over(swap: bool) -> None:
    lines = TWO_ROUTERS.splitlines()
    first, second = (line for line in lines if "type: router" in line)
    if swap:  # the router that passes 'shared' over comes first in the file, so its outcome is settled first
        lines = [second if line == first else first if line == second else line for line in lines]
    workflow = flow("\n".join(lines))

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert result.trace.events("layer_start")[0].data["steps"] == (["second", "first"] if swap else ["first", "second"])
    assert result.steps["first"].output == "shared" and result.steps["second"].output == "only_second"
    assert statuses(result)["shared"] == "success"
    assert statuses(result)["only_first"] == "skipped" and statuses(result)["only_second"] == "success"
    assert result.steps["only_first"].error == "not chosen by router 'first' (it chose 'shared')"


def test_a_step_no_router_chooses_is_skipped_naming_every_router() -> None:
    result = run_workflow(flow(TWO_ROUTERS), state={"kind": "b"}, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert statuses(result) == {
        "first": "success", "second": "success", "shared": "skipped", "only_first": "success", "only_second": "success",
    }
    assert result.steps["shared"].error == (
        "not chosen by router 'first' (it chose 'only_first') or router 'second' (it chose 'only_second')"
    )
    assert result.steps["shared"].error_code == "not_chosen"


def test_a_later_router_can_choose_a_step_an_earlier_router_passed_over() -> None:
    workflow = flow(
        """
        name: later
        steps:
          - {id: early, type: router, default: other}
          - {id: other, type: tool, tool_name: echo}
          - {id: late, type: router, depends_on: [other], conditions: [{expression: "True", target: target}]}
          - {id: target, type: tool, tool_name: echo}
          - {id: early_to_target, type: router, conditions: [{expression: "False", target: target}], default: other}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert statuses(result)["target"] == "success"
    assert [e.data["steps"] for e in result.trace.events("layer_start")] == [
        ["early", "early_to_target"], ["other"], ["late"], ["target"],
    ]


def test_a_step_passed_over_by_the_router_that_ran_is_skipped_when_the_other_router_was_skipped() -> None:
    workflow = flow(
        """
        name: skipped-router
        steps:
          - {id: top, type: router, conditions: [{expression: "False", target: right}], default: left}
          - {id: left, type: tool, tool_name: echo}
          - {id: right, type: tool, tool_name: echo}
          - {id: inner, type: router, depends_on: [right], default: target}
          - {id: chooser, type: router, depends_on: [left], conditions: [{expression: "False", target: target}],
             default: done}
          - {id: target, type: tool, tool_name: echo}
          - {id: done, type: tool, tool_name: echo}
        """
    )

    result = run_workflow(workflow, tools={"echo": lambda: 1}, clock=VirtualClock())

    assert statuses(result)["right"] == "skipped" and statuses(result)["inner"] == "skipped"
    assert statuses(result)["target"] == "skipped"
    assert result.steps["target"].error == "not chosen by router 'chooser' (it chose 'done')"
