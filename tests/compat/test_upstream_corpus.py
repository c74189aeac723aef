"""Files written for upstream ``agentloom`` load here, and run to the same final state.

``upstream_examples/`` holds upstream's own example workflows (see its README);
``fixtures/`` our small upstream-style files, one per upstream key. The expected
results under ``expected/`` were produced by upstream agentloom 0.4.0 itself
(``make_expected.py``), on its mock provider.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.engine._format.loader import load_workflow
from pytest_agentloom.errors import WorkflowError
from pytest_agentloom.providers._mock import MockProvider

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

HERE = Path(__file__).parent
EXAMPLES = sorted((HERE / "upstream_examples").glob("*.yaml"))
EXPECTED = sorted((HERE / "expected").glob("*.json"))
#: upstream keys we refuse on purpose (docs/compatibility.md says why), by example
REFUSED: dict[str, str] = {}


def _source(name: str) -> Path:
    for folder in ("upstream_examples", "fixtures"):
        if (HERE / folder / f"{name}.yaml").is_file():
            return HERE / folder / f"{name}.yaml"
    raise AssertionError(f"no workflow for expected/{name}.json")


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_every_upstream_example_loads(path: Path) -> None:
    if path.stem in REFUSED:
        with pytest.raises(WorkflowError) as caught:
            load_workflow(path)
        assert REFUSED[path.stem] in str(caught.value)
        assert "How to fix:" in str(caught.value)
        return
    workflow = load_workflow(path)
    assert workflow.steps


@pytest.mark.parametrize("expected", EXPECTED, ids=[path.stem for path in EXPECTED])
def test_same_final_state_as_upstream(expected: Path) -> None:
    want = json.loads(expected.read_text(encoding="utf-8"))
    workflow = load_workflow(_source(expected.stem))
    # upstream's examples name real providers: both engines ran them on a mock answering "Mock response"
    provider = None if workflow.config.provider == "mock" else MockProvider(default_response="Mock response")
    result = run_workflow(workflow, provider=provider, clock=VirtualClock(), runs_dir=False)
    assert result.status.value == want["status"]
    assert {step: r.status.value for step, r in result.steps.items() if step in want["steps"]} == want["steps"]
    assert json.loads(json.dumps(result.state, default=str)) == want["state"]


#: fixtures upstream cannot run to the same state, and why (test_upstream_keys.py checks them)
NOT_COMPARED = {
    "child_reply": "the child file of subworkflows.yaml",
    "sandbox_keys": "built-in tools return our shapes and render tool_args templates (docs/compatibility.md)",
}


def test_the_comparison_covers_every_upstream_key_fixture() -> None:
    fixtures = {path.stem for path in (HERE / "fixtures").glob("*.yaml")} - set(NOT_COMPARED)
    assert fixtures <= {path.stem for path in EXPECTED}
