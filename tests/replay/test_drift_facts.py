"""The facts of a run (testing/_live/trace_facts.py) and a test's drift read from two sides'
facts (testing/_live/drift_diff.py).

Runs are scripted here (no HTTP): what a drift report says follows from the facts alone.
"""

from __future__ import annotations

import textwrap
from typing import Any

from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers._replies import reply, tool_call
from pytest_agentloom.testing._live.drift_diff import compare_test, signed
from pytest_agentloom.testing._live.trace_facts import run_facts

FLOW = textwrap.dedent("""\
    name: desk
    config: {model: gpt-4o-mini}
    state_schema: {token: {redact: true}}
    state: {token: ""}
    agents:
      reader: {tools: [lookup], max_steps: 3}
    steps:
      - id: classify
        type: llm_call
        prompt: "Classify"
        response_schema:
          type: json_schema
          schema: {type: object, properties: {kind: {type: string}}, required: [kind]}
        output: verdict
      - id: route
        type: router
        depends_on: [classify]
        conditions: [{expression: "verdict.kind == 'bug'", target: read}]
        default: answer
      - {id: read, type: agent, agent: reader, prompt: "Read it"}
      - {id: answer, type: tool, tool_name: note, tool_args: {text: "{state.token}"}}
    """)


def facts(classify: Any, **replies: Any) -> dict[str, Any]:
    result = run_workflow(parse_workflow(FLOW), state={"token": "canary-secret-7f3a9c"},
                          provider=Scripted({"classify": classify, **replies}), clock=VirtualClock(),
                          tools={"lookup": lambda ticket: f"ticket {ticket}", "note": lambda text: text})
    return run_facts(result, "desk.yaml")


def bug(ticket: int = 7) -> dict[str, Any]:
    return facts(reply('{"kind": "bug"}', input_tokens=10, output_tokens=2),
                 read=[tool_call("lookup", ticket=ticket), reply("It burns.", input_tokens=5, output_tokens=1)])


def test_a_runs_facts_name_its_route_tools_stops_schema_and_numbers() -> None:
    found = bug()
    assert found["route"] == ["route -> read"]
    assert found["tools"] == ['lookup({"ticket": 7})']
    assert found["stops"] == {"read": "done"}
    assert found["schema"] == {"classify": "valid"}
    assert found["steps"] == {"answer": "skipped", "classify": "success", "read": "success", "route": "success"}
    assert (found["status"], found["reason"], found["errors"]) == ("success", "completed", {})
    assert found["tokens"] == {"input": 15, "output": 3, "reasoning": 0}


def test_a_redacted_value_in_tool_arguments_stays_redacted() -> None:
    found = facts(reply('{"kind": "question"}'))
    assert found["route"] == ["route -> answer"]
    (call,) = found["tools"]
    assert call.startswith('note({"text": "<REDACTED') and "canary-secret" not in call


def test_two_sides_with_the_same_facts_make_no_change() -> None:
    side = {"outcome": "passed", "runs": [bug()]}
    drift = compare_test("t.py::test", side, side)
    assert not drift.changed and drift.changes == []
    assert drift.numbers() == "tokens 18 -> 18 (±0) · cost $0.000004 -> $0.000004 (±$0)"  # gpt-4o-mini prices


def test_every_kind_of_change_is_one_line() -> None:
    replayed = {"outcome": "passed", "runs": [bug()]}
    invalid = facts(["not json at all"] * 10)  # the step fails: no reply (the call and its re-asks) fits the schema
    live = {"outcome": "failed", "runs": [invalid, bug(ticket=8)], "snapshots": {"snap.yaml": "changed",
                                                                                 "same.yaml": "same"}}
    drift = compare_test("t.py::test", replayed, live)
    assert drift.changes[:2] == ["outcome: passed -> failed", "runs: 1 -> 2"]
    assert "run 1: termination: success (completed) -> failed (step_failed)" in drift.changes
    assert "run 1: route: route -> read -> (none)" in drift.changes
    assert 'run 1: tool calls: lookup({"ticket": 7}) -> (none)' in drift.changes
    assert "run 1: agent stop read: done -> —" in drift.changes
    assert "run 1: error classify: — -> invalid_output" in drift.changes
    assert any(line.startswith("run 1: schema classify: valid -> invalid: ") for line in drift.changes)
    assert "snapshot snap.yaml: changed" in drift.changes and not any("same.yaml" in c for c in drift.changes)
    assert drift.tokens == (18, 18) and not any(line.startswith("tokens") for line in drift.changes)  # same sums
    cheaper = compare_test("t.py::test", replayed, {"outcome": "passed", "runs": [facts(reply('{"kind": "x"}'))]})
    assert cheaper.changes[-1] == "tokens 18 -> 0 (-18) · cost $0.000004 -> $0.000000 (-$0.000004)"


def test_deltas_are_signed() -> None:
    assert (signed(14), signed(-3), signed(0)) == ("+14", "-3", "±0")
    assert (signed(0.00003, money=True), signed(-0.5, money=True), signed(0.0, money=True)) == (
        "+$0.000030", "-$0.500000", "±$0")
