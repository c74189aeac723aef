"""What a run writes to the state (docs/workflow-format.md#outputs), through real runs."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def one_tool_step(output: str) -> Workflow:
    return flow(
        f"""
        name: outputs
        steps:
          - {{id: produce, type: tool, tool_name: produce, output: "{output}"}}
        """
    )


def run_tool(workflow: Workflow, state: dict[str, Any] | None = None, value: Any = "V"):
    return run_workflow(workflow, state=state, tools={"produce": lambda: value}, clock=VirtualClock())


# --------------------------------------------------------------------------- output paths


@pytest.mark.parametrize(
    ("output", "state", "expected"),
    [
        pytest.param("answer", {}, {"answer": "V"}, id="plain-key"),
        pytest.param("report.summary", {}, {"report": {"summary": "V"}}, id="creates-parent"),
        pytest.param("a.b.c", {}, {"a": {"b": {"c": "V"}}}, id="creates-every-level"),
        pytest.param(
            "report.summary", {"report": {"title": "T"}}, {"report": {"title": "T", "summary": "V"}},
            id="writes-into-existing-dict",
        ),
        pytest.param("items[0]", {"items": [1, 2]}, {"items": ["V", 2]}, id="list-item"),
        pytest.param("items[-1]", {"items": [1, 2]}, {"items": [1, "V"]}, id="list-item-from-end"),
        pytest.param(
            "items[0].name", {"items": [{"name": "A", "id": 1}]}, {"items": [{"name": "V", "id": 1}]},
            id="key-of-list-item",
        ),
        pytest.param("answer", {"answer": {"old": 1}}, {"answer": "V"}, id="replaces-a-whole-value"),
    ],
)
def test_output_paths_write_where_000_says(output: str, state: dict[str, Any], expected: dict[str, Any]) -> None:
    result = run_tool(one_tool_step(output), state)

    assert result.status == "success"
    assert result.reason == "completed"
    del result.state["steps"]
    assert result.state == expected


@pytest.mark.parametrize(
    ("output", "state", "reason"),
    [
        pytest.param(
            "items[2]", {"items": [1, 2]},
            "index 2 is out of range for 'items' (a list of 2); lists never grow", id="index-past-the-end",
        ),
        pytest.param(
            "items[0].name", {"items": []},
            "index 0 is out of range for 'items' (a list of 0); lists never grow", id="item-of-empty-list",
        ),
        pytest.param(
            "user.name", {"user": "alice"}, "'user' holds a str, not a mapping", id="through-a-string",
        ),
        pytest.param(
            "count.x", {"count": 3}, "'count' holds an int, not a mapping", id="through-an-int",
        ),
        pytest.param(
            "items.name", {"items": [1]}, "'items' holds a list, not a mapping", id="key-on-a-list",
        ),
        pytest.param(
            "missing[0]", {}, "'missing' does not exist, so there is no list to index with [0]",
            id="index-into-nothing",
        ),
    ],
)
def test_a_bad_output_path_fails_the_step_and_leaves_the_state(
    output: str, state: dict[str, Any], reason: str
) -> None:
    result = run_tool(one_tool_step(output), state)

    step = result.steps["produce"]
    assert result.status == "failed"
    assert result.reason == "step_failed"
    assert result.failed_step == "produce"
    assert step.status == "failed"
    assert step.error == f"cannot write output '{output}': {reason}"
    assert step.error_code == "output_path"
    assert step.attempts == 1
    assert step.output is None
    assert result.state == state  # unchanged, and no steps.produce entry for a failed step


def test_a_failed_output_write_is_not_retried_even_with_retry() -> None:
    workflow = flow(
        """
        name: outputs
        steps:
          - {id: produce, type: tool, tool_name: produce, output: "user.name", retry: {max_retries: 3}}
        """
    )
    calls: list[int] = []

    result = run_workflow(
        workflow, state={"user": "alice"}, tools={"produce": lambda: calls.append(1)}, clock=VirtualClock()
    )

    assert result.steps["produce"].status == "failed"
    assert calls == [1]


def test_a_later_step_in_the_same_layer_still_writes_after_a_failed_write() -> None:
    workflow = flow(
        """
        name: outputs
        steps:
          - {id: bad, type: tool, tool_name: produce, output: "user.name"}
          - {id: good, type: tool, tool_name: produce, output: "other"}
        """
    )

    result = run_tool(workflow, {"user": "alice"})

    assert result.steps["bad"].status == "failed"
    assert result.steps["good"].status == "success"
    assert result.state["other"] == "V"
    assert result.state["user"] == "alice"


# --------------------------------------------------------------------------- keys the engine writes


def test_steps_id_output_and_status_are_written_for_successful_steps_only() -> None:
    workflow = flow(
        """
        name: outputs
        config: {model: gpt-4o}
        steps:
          - {id: ask, type: llm_call, prompt: hi}
          - {id: save, type: tool, tool_name: produce, output: saved, depends_on: [ask]}
          - {id: boom, type: tool, tool_name: boom}
          - {id: later, type: tool, tool_name: produce, depends_on: [boom]}
        """
    )

    def boom() -> None:
        raise RuntimeError("no")

    result = run_workflow(
        workflow, provider=Scripted({"ask": "the reply"}), tools={"produce": lambda: {"k": [1]}, "boom": boom},
        clock=VirtualClock(),
    )

    assert result.state["steps"] == {
        "ask": {"output": "the reply", "status": "success"},
    }
    assert "saved" not in result.state  # 'save' was in the layer after the failure, so it never ran
    assert result.steps["boom"].status == "failed"
    assert result.steps["later"].status == "skipped"


def test_steps_key_is_written_without_an_output_field_and_templates_read_it() -> None:
    workflow = flow(
        """
        name: outputs
        config: {model: gpt-4o}
        steps:
          - {id: classify, type: tool, tool_name: produce}
          - {id: use, type: llm_call, prompt: "Label: {state.steps.classify.output}", depends_on: [classify]}
        """
    )
    provider = Scripted({"use": "ok"})

    result = run_workflow(workflow, provider=provider, tools={"produce": lambda: "bug"}, clock=VirtualClock())

    assert result.state["steps"]["classify"] == {"output": "bug", "status": "success"}
    assert "classify" not in result.state
    assert provider.requests[0].messages == [{"role": "user", "content": "Label: bug"}]


def test_router_output_and_skipped_steps_in_steps_key() -> None:
    workflow = flow(
        """
        name: outputs
        steps:
          - {id: r, type: router, default: chosen, conditions: [{expression: "False", target: other}], output: route}
          - {id: chosen, type: tool, tool_name: produce}
          - {id: other, type: tool, tool_name: produce}
        """
    )

    result = run_tool(workflow)

    assert result.state["route"] == "chosen"
    assert result.state["steps"] == {
        "r": {"output": "chosen", "status": "success"},
        "chosen": {"output": "V", "status": "success"},
    }


def test_the_written_value_is_a_copy_the_tool_cannot_change_later() -> None:
    shared: dict[str, Any] = {"n": 1}
    workflow = one_tool_step("data")

    result = run_tool(workflow, value=shared)
    shared["n"] = 2

    assert result.state["data"] == {"n": 1}
    assert result.state["steps"]["produce"]["output"] == {"n": 1}


# --------------------------------------------------------------------------- state= and the file's state


def test_state_argument_adds_and_replaces_top_level_keys_only() -> None:
    workflow = flow(
        """
        name: outputs
        state:
          question: "from the file"
          limits: {max_words: 120, style: short}
          kept: 1
        steps:
          - {id: produce, type: tool, tool_name: produce, output: answer}
        """
    )

    result = run_tool(workflow, {"question": "from the call", "limits": {"max_words": 80}, "extra": [1, 2]})

    assert result.state["question"] == "from the call"
    assert result.state["limits"] == {"max_words": 80}  # replaced whole, not merged
    assert result.state["extra"] == [1, 2]
    assert result.state["kept"] == 1


def test_dotted_state_keys_are_taken_as_written() -> None:
    workflow = flow(
        "name: o\nstate: {limits: {max_words: 120}}\nsteps: [{id: produce, type: tool, tool_name: produce}]\n"
    )

    result = run_tool(workflow, {"limits.max_words": 80})

    assert result.state["limits"] == {"max_words": 120}
    assert result.state["limits.max_words"] == 80


def test_runs_do_not_mutate_the_file_state_or_the_caller_state() -> None:
    workflow = flow(
        """
        name: outputs
        state:
          report: {title: T}
          items: [{name: A}]
        steps:
          - {id: a, type: tool, tool_name: produce, output: report.summary}
          - {id: b, type: tool, tool_name: produce, output: "items[0].name"}
          - {id: c, type: tool, tool_name: produce, output: "given.inner"}
        """
    )
    given: dict[str, Any] = {"given": {"inner": "x"}}

    first = run_tool(workflow, given)
    second = run_tool(workflow, given)

    assert workflow.state == {"report": {"title": "T"}, "items": [{"name": "A"}]}
    assert given == {"given": {"inner": "x"}}
    assert first.state == second.state
    assert first.state["report"] == {"title": "T", "summary": "V"}


def test_a_tool_mutating_its_arguments_cannot_reach_the_state() -> None:
    workflow = flow(
        """
        name: outputs
        state: {items: [1, 2]}
        steps:
          - {id: produce, type: tool, tool_name: produce, tool_args: {items: state.items}}
        """
    )

    def mutate(items: list[int]) -> int:
        items.append(99)
        return len(items)

    result = run_workflow(workflow, tools={"produce": mutate}, clock=VirtualClock())

    assert result.steps["produce"].output == 3
    assert result.state["items"] == [1, 2]


def test_a_succeeded_steps_result_carries_every_field_of_its_outcome() -> None:
    """The run builds a successful step's result positionally: each field must land where it belongs."""
    import dataclasses

    from pytest_agentloom._core.clock import current_clock
    from pytest_agentloom._core.types import Usage
    from pytest_agentloom.engine._outcome.result import StepResult, StepStatus
    from pytest_agentloom.providers._replies import ReplySpec

    assert [field.name for field in dataclasses.fields(StepResult)] == [
        "step_id", "status", "output", "error", "error_code", "attempts", "finish_reason", "input_tokens",
        "output_tokens", "reasoning_tokens", "cached_input_tokens", "cache_write_tokens", "cost_usd", "model",
        "provider", "started_at", "ended_at", "reasoning_content", "time_to_first_token",
    ]
    workflow = parse_workflow(textwrap.dedent("""\
        name: fields
        config: {model: gpt-4o, stream: true}
        steps:
          - id: think
            type: llm_call
            prompt: "Think."
            thinking: {enabled: true, level: low}
            output: answer
        """))
    usage = Usage(input_tokens=120, output_tokens=30, reasoning_tokens=7, cached_input_tokens=100,
                  cache_write_tokens=5)
    answer = ReplySpec("done", usage=usage, model="gpt-4o-2024-08-06", finish_reason="length",
                       reasoning_content="because")
    async def slow(request: Any) -> ReplySpec:
        await current_clock().sleep(1.5)
        return answer

    result = run_workflow(workflow, provider=Scripted({"think": slow}), clock=VirtualClock(start=3))
    step = result.steps["think"]
    assert step == StepResult(
        step_id="think", status=StepStatus.SUCCESS, output="done", error=None, error_code=None, attempts=1,
        finish_reason="length", input_tokens=120, output_tokens=30, reasoning_tokens=7, cached_input_tokens=100,
        cache_write_tokens=5, cost_usd=step.cost_usd, model="gpt-4o-2024-08-06", provider="scripted",
        started_at=0.0, ended_at=1.5, reasoning_content="because", time_to_first_token=1.5,
    )
    assert step.cost_usd > 0


@pytest.mark.parametrize(("model", "priced_as"), [
    ("gpt-4o", "gpt-4o"),
    ("gpt-4o-2024-08-06", "gpt-4o"),  # a dated version: the longest name before a '-'
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # not the shorter gpt-4o
    ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),  # Vertex AI's '@' form
    ("gpt-4o-", "gpt-4o"),
    ("gpt-4omni", None),  # a prefix that the name does not go on from with '-' or '@'
    ("-gpt-4o", None),
    ("", None),
])
def test_price_for_matches_the_longest_known_name_before_a_separator(model: str, priced_as: str | None) -> None:
    from pytest_agentloom.engine._outcome.pricing import PRICES, price_for

    assert price_for(model) is (PRICES[priced_as] if priced_as is not None else None)
