"""The shortcuts that cut a run's fixed cost and its cost per step give what the long ways gave.

Each shortcut replaces a general tool (``dataclasses.replace``, hashing the whole definition,
validating a model again) by a narrower one; these tests pin that the narrower one gives the same
thing, and that what is kept per workflow is worked out again when what it depends on changes.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom._core.clock import RunIdPrefix, derived_run_id
from pytest_agentloom.engine._entry.run_workflow import state_json
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._outcome.redacted import _replaced
from pytest_agentloom.engine._outcome.result import RunStatus, StepResult, StepStatus, TerminationReason, WorkflowResult
from pytest_agentloom.engine._outcome.trace import Trace

CHAIN = """
name: chain
config: {model: gpt-4o-mini}
state: {topic: tides}
steps:
  - {id: a, type: llm_call, prompt: "About {state.topic}", output: first}
  - {id: b, type: llm_call, prompt: "Then {state.first}", output: second, depends_on: [a]}
"""


def flow(text: str = CHAIN) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def run(workflow: Workflow, **state: object) -> WorkflowResult:
    return run_workflow(workflow, provider=Scripted({"a": "one", "b": "two"}), state=state, clock=VirtualClock(),
                        runs_dir=False)


def definition(workflow: Workflow) -> str:
    return json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str)


# --------------------------------------------------------------------------- the derived run id


def test_the_derived_run_id_is_the_hash_of_the_definition_and_the_state_for_every_run_and_every_copy() -> None:
    workflow = flow()
    for topic in ("tides", "waves", "tides"):  # the second and third runs hash from the kept digest
        assert run(workflow, topic=topic).run_id == derived_run_id(
            definition(workflow), state_json(workflow, {"topic": topic}))
    other = workflow.with_config(model="gpt-4o")  # another definition: its own digest, not the first one's
    assert run(other).run_id == derived_run_id(definition(other), state_json(other, {}))
    assert run(other).run_id != run(workflow).run_id


def test_the_kept_state_json_of_a_run_without_state_is_the_workflows_own_and_a_copy_keeps_its_own() -> None:
    workflow = flow()
    assert state_json(workflow, {}) == json.dumps({"topic": "tides"}) == state_json(workflow, {})
    other = workflow.model_copy(update={"state": {"topic": "waves"}})  # a copy starts with an empty memo
    assert state_json(other, {}) == json.dumps({"topic": "waves"})
    expected = derived_run_id(definition(other), json.dumps({"topic": "waves"}))
    assert run(other).run_id == expected != run(workflow).run_id


# --------------------------------------------------------------------------- copying results


def _step() -> StepResult:
    return StepResult("a", StepStatus.SUCCESS, output={"x": [1]}, attempts=2, cost_usd=0.5, model="m",
                      reasoning_content="why", time_to_first_token=0.25)


def _workflow_result() -> WorkflowResult:
    result = WorkflowResult("w", "run-1", RunStatus.SUCCESS, TerminationReason.COMPLETED, {"k": 1},
                            {"a": _step()}, Trace(), checkpoint={"c": 1}, unredacted_state={"k": 1})
    result.sent_requests = {"a": []}
    return result


@pytest.mark.parametrize("make, changes", [
    (_step, {"output": "new", "error": None, "reasoning_content": None}),
    (_workflow_result, {"state": {"k": 2}}),
    (_workflow_result, {"state": {}, "steps": {}, "trace": Trace()}),
])
def test_a_result_copied_with_changes_is_what_dataclasses_replace_gives(
        make: Callable[[], StepResult | WorkflowResult], changes: dict[str, Any]) -> None:
    original = make()
    copied, replaced = _replaced(original, **changes), dataclasses.replace(original, **changes)

    assert type(copied) is type(replaced)
    assert vars(copied) == vars(replaced)  # every field, those left out of == too
    assert copied is not original and vars(original) == vars(make())  # the original is unchanged


@pytest.mark.parametrize("parts", [("definition", "state"), ("a", "b", "c"), ("", ""), ("only",)])
def test_a_run_id_prefix_continued_with_the_last_part_is_the_derived_run_id(parts: tuple[str, ...]) -> None:
    assert RunIdPrefix(*parts[:-1]).run_id(parts[-1]) == derived_run_id(*parts)
