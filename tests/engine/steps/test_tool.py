"""The tool step, and the tool_args rules (docs/workflow-format.md#tool), through real runs."""

from __future__ import annotations

import asyncio
import json
import logging
import textwrap
from typing import Any

import pytest

from pytest_agentloom import UsageError, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

STATE: dict[str, Any] = {
    "user_id": 42,
    "total": 3.14159,
    "user": "alice",
    "token": "t0k",
    "items": [{"name": "A"}, {"name": "B"}],
    "limits": {"max_words": 120},
    "q": "cats",
}


def tool_flow(args: dict[str, Any], *, extra: str = "") -> Workflow:
    """A one-step workflow calling the tool ``call`` with ``args`` (written as JSON, which YAML reads)."""
    text = f"""
    name: tools
    steps:
      - id: call
        type: tool
        tool_name: call
        tool_args: {json.dumps(args)}
    """
    text = textwrap.dedent(text) + "".join(f"    {line}\n" for line in extra.splitlines() if line.strip())
    return parse_workflow(text)


def call_with(args: dict[str, Any], state: dict[str, Any] | None = None, **kwargs: Any):
    """Run the tool step; answer (result, the keyword arguments the tool received)."""
    received: list[dict[str, Any]] = []

    def call(**arguments: Any) -> str:
        received.append(arguments)
        return "done"

    result = run_workflow(
        tool_flow(args, **kwargs), state=STATE if state is None else state, tools={"call": call}, clock=VirtualClock()
    )
    return result, (received[0] if received else None)


# --------------------------------------------------------------------------- when a string is a template


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        pytest.param("https://api.example.com/users/{state.user_id}", "https://api.example.com/users/42",
                     id="state-dot"),
        pytest.param("{state[user]}", "alice", id="state-bracket"),
        pytest.param("Total: {total:.2f}", "Total: 3.14", id="bare-name-with-spec"),
        pytest.param("Hi {user}", "Hi alice", id="bare-name"),
        pytest.param("Hi {user!r}", "Hi 'alice'", id="bare-name-with-conversion"),
        pytest.param("{state.items[1].name}", "B", id="state-path-in-braces"),
        pytest.param("{{literal}} and {user}", "{literal} and alice", id="doubled-braces-with-placeholder"),
        pytest.param('{"k": [1, 2, 3], "v": true}', '{"k": [1, 2, 3], "v": true}', id="json-unchanged"),
        pytest.param("<style>.x { color: red; }</style>", "<style>.x { color: red; }</style>", id="css-unchanged"),
        pytest.param("{a: 1}", "{a: 1}", id="space-after-colon-is-not-a-spec"),
        pytest.param("function() { return 1; }", "function() { return 1; }", id="code-unchanged"),
        pytest.param("{{not a template}}", "{{not a template}}", id="doubled-braces-alone-unchanged"),
        pytest.param("plain text", "plain text", id="plain"),
        pytest.param("", "", id="empty"),
        pytest.param("{name}", "{name}", id="missing-bare-name-stays"),
    ],
)
def test_a_string_is_rendered_only_when_it_holds_a_placeholder(value: str, passed: str) -> None:
    result, received = call_with({"arg": value})

    assert result.status == "success", result.steps["call"].error
    assert received == {"arg": passed}
    assert result.trace.events("tool_call")[0].data["args"] == {"arg": passed}


def test_non_string_values_pass_as_they_are() -> None:
    args = {"n": 3, "f": 1.5, "b": True, "none": None}

    _, received = call_with(args)

    assert received == args


def test_a_missing_state_key_in_a_template_renders_empty_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytest_agentloom")

    result, received = call_with({"url": "/users/{state.nobody}"})

    assert received == {"url": "/users/"}
    assert caplog.messages == ["Template variable 'state.nobody' not found, rendering as empty."]
    assert result.trace.events("template_warning")[0].data["field"] == "state.nobody"


# --------------------------------------------------------------------------- whole values


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        pytest.param("state.items", [{"name": "A"}, {"name": "B"}], id="list"),
        pytest.param("state.limits", {"max_words": 120}, id="dict"),
        pytest.param("state.user_id", 42, id="int-stays-int"),
        pytest.param("state.items[0].name", "A", id="path"),
        pytest.param("state.items[-1]", {"name": "B"}, id="negative-index"),
    ],
)
def test_a_state_dot_string_passes_the_value_itself(value: str, passed: Any) -> None:
    _, received = call_with({"arg": value})

    assert received == {"arg": passed}


@pytest.mark.parametrize("value", ["state.nobody", "state.items[9]", "state.limits.nope"])
def test_a_missing_whole_value_fails_the_step_without_retry(value: str) -> None:
    result, received = call_with({"arg": value}, extra="retry: {max_retries: 3}")

    step = result.steps["call"]
    assert received is None  # the tool never ran
    assert step.status == "failed"
    assert step.error_code == "missing_state_key"
    assert step.error == f"tool_args 'arg': state key '{value[len('state.'):]}' does not exist"
    assert result.trace.events("retry") == []
    assert result.reason == "step_failed"


def test_a_string_that_only_mentions_state_is_not_a_whole_value() -> None:
    _, received = call_with({"a": "the state.items key", "b": "mystate.items"})

    assert received == {"a": "the state.items key", "b": "mystate.items"}


# --------------------------------------------------------------------------- at any depth


def test_nested_mappings_and_lists_follow_the_same_rules() -> None:
    args = {
        "headers": {"Authorization": "Bearer {state.token}", "Accept": "application/json"},
        "body": {"items": "state.items", "raw": '{"a": 1}', "deeper": [{"x": "{user}"}, "state.user_id", 7]},
        "tags": ["{state.user}", "static", "state.limits"],
    }

    _, received = call_with(args)

    assert received == {
        "headers": {"Authorization": "Bearer t0k", "Accept": "application/json"},
        "body": {"items": STATE["items"], "raw": '{"a": 1}', "deeper": [{"x": "alice"}, 42, 7]},
        "tags": ["alice", "static", {"max_words": 120}],
    }


def test_a_missing_nested_whole_value_names_the_argument_path() -> None:
    result, _ = call_with({"body": {"list": [1, "state.gone"]}})

    assert result.steps["call"].error == "tool_args 'body.list[1]': state key 'gone' does not exist"


# --------------------------------------------------------------------------- mixed strings


def test_a_mixed_string_fails_on_its_literal_braces_without_retry() -> None:
    result, received = call_with({"payload": '{"user": "{state.user}"}'}, extra="retry: {max_retries: 2}")

    step = result.steps["call"]
    assert received is None
    assert step.status == "failed"
    assert step.error_code == "template_error"
    assert step.error.startswith("Prompt template error: ")
    assert step.error.endswith("(in tool_args 'payload')")
    assert result.trace.events("retry") == []


def test_a_mixed_string_with_doubled_braces_renders() -> None:
    _, received = call_with({"payload": '{{"user": "{state.user}"}}'})

    assert received == {"payload": '{"user": "alice"}'}


def test_a_spec_that_does_not_fit_fails_the_step() -> None:
    result, _ = call_with({"x": "{state.user:.2f}"})

    assert result.steps["call"].error.startswith("Prompt template error: Unknown format code 'f'")


# --------------------------------------------------------------------------- template: false


def test_value_with_template_false_passes_as_written() -> None:
    args = {
        "body": {"value": '{"query": "{state.q}"}', "template": False},
        "whole": {"value": "state.items", "template": False},
        "structured": {"value": {"k": "{state.q}"}, "template": False},
    }

    _, received = call_with(args)

    assert received == {"body": '{"query": "{state.q}"}', "whole": "state.items", "structured": {"k": "{state.q}"}}


def test_template_false_with_other_keys_is_an_ordinary_mapping() -> None:
    _, received = call_with({"m": {"value": "{state.q}", "template": False, "other": 1}})

    assert received == {"m": {"value": "cats", "template": False, "other": 1}}


def test_template_true_is_an_ordinary_mapping() -> None:
    _, received = call_with({"m": {"value": "{state.q}", "template": True}})

    assert received == {"m": {"value": "cats", "template": True}}


# --------------------------------------------------------------------------- calling the tool


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def test_sync_and_async_tools_and_their_output() -> None:
    workflow = flow(
        """
        name: tools
        steps:
          - {id: s, type: tool, tool_name: sync_tool, tool_args: {n: 2}, output: from_sync}
          - {id: a, type: tool, tool_name: async_tool, tool_args: {n: 3}, output: from_async}
        """
    )

    async def async_tool(n: int) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"n": n * 10}

    result = run_workflow(
        workflow, tools={"sync_tool": lambda n: [n] * n, "async_tool": async_tool}, clock=VirtualClock()
    )

    assert result.state["from_sync"] == [2, 2]
    assert result.state["from_async"] == {"n": 30}
    step = result.steps["a"]
    assert (step.status, step.output, step.attempts, step.model, step.provider, step.cost_usd) == (
        "success", {"n": 30}, 1, None, None, 0.0
    )
    assert [e.data for e in result.trace.events("tool_call")] == [
        {"tool": "sync_tool", "args": {"n": 2}, "ok": True},
        {"tool": "async_tool", "args": {"n": 3}, "ok": True},
    ]


def test_a_tool_that_raises_fails_the_step_once_by_default() -> None:
    calls: list[int] = []

    def boom() -> None:
        calls.append(1)
        raise ValueError("disk full")

    workflow = flow("name: t\nsteps: [{id: save, type: tool, tool_name: boom, output: x}]\n")
    result = run_workflow(workflow, tools={"boom": boom}, clock=VirtualClock())

    step = result.steps["save"]
    assert calls == [1]  # no retry unless the step asks for one: side effects must not repeat by surprise
    assert (step.status, step.attempts, step.error_code) == ("failed", 1, "tool_error")
    assert step.error == "tool 'boom' raised ValueError: disk full"
    assert result.trace.events("tool_call")[0].data["ok"] is False
    assert "x" not in result.state
    assert (result.status, result.reason) == ("failed", "step_failed")


def test_a_tool_step_with_retry_retries_with_backoff() -> None:
    outcomes = iter([RuntimeError("busy"), RuntimeError("busy"), "ok"])

    def flaky() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    clock = VirtualClock()
    workflow = flow("name: t\nsteps: [{id: s, type: tool, tool_name: flaky, retry: {max_retries: 2}}]\n")
    result = run_workflow(workflow, tools={"flaky": flaky}, clock=clock)

    assert (result.steps["s"].status, result.steps["s"].attempts, result.steps["s"].output) == ("success", 3, "ok")
    assert [e.data["delay"] for e in result.trace.events("retry")] == [1.0, 2.0]
    assert clock.now() == 3.0


def test_an_unknown_tool_fails_the_step_and_lists_the_registered_ones() -> None:
    workflow = flow("name: t\nsteps: [{id: s, type: tool, tool_name: nope}]\n")

    result = run_workflow(workflow, tools={"b": print, "a": print}, clock=VirtualClock())

    step = result.steps["s"]
    assert step.error_code == "unknown_tool"
    assert "no tool named 'nope' is registered (registered tools: a, b)" in step.error
    assert "How to fix: pass tools={'nope': your_function}" in step.error


def test_a_tool_timeout_under_the_virtual_clock() -> None:
    from pytest_agentloom._core.clock import current_clock

    async def slow() -> str:
        await current_clock().sleep(30)
        return "late"

    workflow = flow("name: t\nsteps: [{id: s, type: tool, tool_name: slow, timeout: 10}]\n")
    result = run_workflow(workflow, tools={"slow": slow}, clock=VirtualClock())

    assert result.steps["s"].status == "failed"
    assert result.steps["s"].error == "tool 'slow' timed out after 10s"
    assert result.steps["s"].error_code == "timeout"


def test_tools_must_be_a_mapping() -> None:
    workflow = flow("name: t\nsteps: [{id: s, type: tool, tool_name: x}]\n")

    with pytest.raises(UsageError, match="tools must map tool names to callables, got list"):
        run_workflow(workflow, tools=[print], clock=VirtualClock())  # type: ignore[arg-type]
