"""A big ``run_workflow(state=...)`` value's JSON is remembered for the run id, and never used for another
value: the id is always what encoding the whole initial state gives."""

from __future__ import annotations

import json
from typing import Any

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom._core.plain import to_plain
from pytest_agentloom.engine import derived_run_id, parse_workflow
from pytest_agentloom.engine._entry import run_workflow as entry

FLOW = """\
name: big
state: {topic: tides}
steps:
  - {id: a, type: tool, tool_name: noop}
"""


def _expected(workflow: Any, state: dict[str, Any]) -> str:
    whole = json.dumps(to_plain({**workflow.state, **state}), sort_keys=True)
    return derived_run_id(json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str), whole)


def _run(workflow: Any, state: dict[str, Any]) -> str:
    return run_workflow(workflow, state=state, tools={"noop": lambda: "ok"}, clock=VirtualClock(),
                        runs_dir=False).run_id


def test_a_big_value_is_encoded_once_and_a_change_in_place_is_seen(monkeypatch: Any) -> None:
    workflow = parse_workflow(FLOW)
    big = {"rows": [{"id": index, "text": "x" * 40} for index in range(3000)]}
    encoded: list[int] = []
    member = entry._member
    monkeypatch.setattr(entry, "_member", lambda value: encoded.append(1) or member(value))
    first = _run(workflow, big)
    assert first == _run(workflow, big) == _expected(workflow, big)
    assert len(encoded) == 1 + 1  # the file's topic, and the big value once for both runs
    big["rows"][1500]["text"] = "changed"  # the same object, changed in place
    assert _run(workflow, big) == _expected(workflow, big) != first
    copy = json.loads(json.dumps(big))  # an equal value in another object: encoded again, same id
    assert _run(workflow, copy) == _expected(workflow, big)
    assert len(encoded) == 4


def test_a_small_value_is_not_kept() -> None:
    workflow = parse_workflow(FLOW)
    assert _run(workflow, {"topic": "waves"}) == _expected(workflow, {"topic": "waves"})
    assert workflow.memoized("override_json", dict) == {}
