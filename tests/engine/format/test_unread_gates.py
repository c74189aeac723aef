"""An approval gate whose decision no router reads gates nothing: the loader warns
(``UnreadDecisionWarning``, at the gate's line) and ``agentloom validate`` lists it, once."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import pytest_agentloom
from pytest_agentloom.cli import EXIT_OK, main
from pytest_agentloom.engine._format.loader import load_workflow, parse_workflow

UNGATED = """\
name: outreach
steps:
  - {id: draft, type: llm_call, model: gpt-4o-mini, prompt: "Draft", output: draft}
  - {id: gate, type: approval_gate, depends_on: [draft], output: decision}
  - {id: send, type: tool, tool_name: send_email, depends_on: [gate], tool_args: {body: "{state.draft}"}}
"""

ROUTED = """\
name: outreach
steps:
  - {id: gate, type: approval_gate, output: %(output)s}
  - id: route
    type: router
    depends_on: [gate]
    conditions: [{expression: "%(expression)s", target: send}]
    default: stop
  - {id: send, type: tool, tool_name: send_email}
  - {id: stop, type: tool, tool_name: discard}
"""


def test_the_warning_points_at_the_gate_itself_not_at_text_that_names_it(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(UNGATED.replace('prompt: "Draft"', 'prompt: "Draft the note for id: gate"').replace(
        "  - {id: gate, type: approval_gate, depends_on: [draft], output: decision}\n",
        "  - id: gate\n    type: approval_gate\n    depends_on: [draft]\n    output: decision\n"))
    with pytest.warns(pytest_agentloom.UnreadDecisionWarning) as caught:
        load_workflow(path)
    assert [(warning.filename, warning.lineno) for warning in caught] == [(str(path), 4)]


def test_a_gate_no_router_reads_warns_at_its_line_with_the_pattern_that_stops_a_rejected_run(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(UNGATED)
    with pytest.warns(pytest_agentloom.UnreadDecisionWarning) as caught:
        load_workflow(path)
    assert len(caught) == 1
    warning = caught[0]
    assert (warning.filename, warning.lineno) == (str(path), 4)
    text = str(warning.message)
    assert text.startswith("approval gate 'gate': no router condition reads its decision ('decision'), so a "
                           "rejected run goes on to the next steps exactly as an approved one.")
    assert "step: gate" in text and "\"decision == 'approved'\"" in text
    assert warning.message.code == "unread_decision"


@pytest.mark.parametrize(("output", "expression"), [
    ("decision", "decision == 'approved'"),
    ("decision", "state.decision != 'rejected'"),
    ("review.decision", "review.decision == 'approved'"),
    ("null", "steps.gate.output == 'approved'"),
    ("null", "_approval['gate'] == 'approved'"),
])
def test_a_router_reading_the_decision_any_way_it_is_written_is_no_warning(output: str, expression: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", pytest_agentloom.UnreadDecisionWarning)
        parse_workflow(ROUTED % {"output": output, "expression": expression})


def test_a_router_reading_another_gate_does_not_count() -> None:
    text = ROUTED % {"output": "null", "expression": "steps.other.output == 'approved'"}
    with pytest.warns(pytest_agentloom.UnreadDecisionWarning, match="'steps.gate.output'"):
        parse_workflow(text)


def test_validate_lists_it_once_as_a_warning_and_still_exits_0(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(UNGATED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # validate prints its findings; it raises no warning of its own
        assert main(["validate", str(path)]) == EXIT_OK
    out, err = capsys.readouterr()
    assert out == f"{path}: ok (outreach, 3 steps, 1 warning)\n"
    assert err.count("no router condition reads its decision") == 1
    assert err.startswith(f"{path}:4: warning: step 'gate', field 'output': approval gate 'gate': ")  # at its line
