"""Assertion helpers on results and the focused ``==`` explanation: exact failure messages."""

from __future__ import annotations

import pytest

from pytest_agentloom import Scripted, VirtualClock, error, run_workflow
from pytest_agentloom.testing._snapshots.assertrepr import explain_comparison


@pytest.fixture
def flow(triage_text, tmp_path):
    path = tmp_path / "flow.yaml"
    path.write_text(triage_text)
    return path


def run(flow, runs_dir, **script):
    return run_workflow(flow, state={"ticket": "crash"}, provider=Scripted(script), clock=VirtualClock(),
                        tools={"file_bug": lambda title: "BUG-1"}, **runs_dir)


@pytest.fixture
def runs_dir(tmp_path):
    import inspect

    return {"runs_dir": False} if "runs_dir" in inspect.signature(run_workflow).parameters else {}


def message(call) -> str:
    with pytest.raises(AssertionError) as info:
        call()
    return str(info.value)


def test_assert_status_shows_the_failed_step_and_its_trace(flow, runs_dir) -> None:
    result = run(flow, runs_dir, classify=error(400, "bad request"))
    text = message(lambda: result.assert_status("success"))
    lines = text.splitlines()
    assert lines[0] == "Run of 'triage' ended with status 'failed' and reason 'step_failed', expected status 'success'."
    assert lines[1].startswith("  failed step 'classify' (provider_error): provider error (HTTP 400): bad request")
    assert lines[2] == "Relevant trace:"
    assert all(" classify " in line or "run_end" in line for line in lines[3:])
    assert lines[-1].endswith("run_end status='failed' reason='step_failed'")
    result.assert_status("failed", "step_failed")


def test_assert_steps_names_missing_and_unexpected_steps(flow, runs_dir) -> None:
    result = run(flow, runs_dir, classify="question", reply="ok")
    result.assert_steps("classify", "route", "reply")
    text = message(lambda: result.assert_steps("classify", "route", "file_bug"))
    assert text.splitlines()[:4] == [
        "Steps run: ['classify', 'route', 'reply'], expected: ['classify', 'route', 'file_bug'].",
        "  expected but not run: file_bug",
        "  run but not expected: reply",
        "Relevant trace:",
    ]
    assert "router_choice route target='reply' condition='default'" in text
    assert "provider_call" not in text


def test_assert_tool_calls_compares_names_and_arguments(flow, runs_dir) -> None:
    result = run(flow, runs_dir, classify="bug")
    result.assert_tool_calls([("file_bug", {"title": "crash"})])
    result.assert_tool_calls(["file_bug"])
    text = message(lambda: result.assert_tool_calls([("file_bug", {"title": "fire"})]))
    assert text.splitlines()[:4] == [
        "Tool calls differ: 1 made, 1 expected.",
        '  expected: [file_bug({"title": "fire"})]',
        '  actual:   [file_bug({"title": "crash"})]',
        '  first difference at call 0: expected file_bug({"title": "fire"}), got file_bug({"title": "crash"})',
    ]
    assert text.splitlines()[-1].endswith("tool_call file_bug #1 tool='file_bug' args={'title': 'crash'} ok=True")


def test_assert_output_shows_expected_actual_and_the_steps_events(flow, runs_dir) -> None:
    result = run(flow, runs_dir, classify="question", reply="Hello!")
    result.assert_output("reply", "Hello!")
    text = message(lambda: result.assert_output("reply", "Bye"))
    assert text.splitlines()[:3] == ["Output of step 'reply' differs.", "  expected: 'Bye'", "  actual:   'Hello!'"]
    assert "step_start reply" in text and "classify" not in text
    assert message(lambda: result.assert_output("nope", 1)).startswith("No result for step 'nope' in run of 'triage'")


def test_results_compare_equal_when_runs_are_identical(flow, runs_dir) -> None:
    assert run(flow, runs_dir, classify="bug") == run(flow, runs_dir, classify="bug")


def test_explanation_of_two_results_lists_paths(flow, runs_dir) -> None:
    left = run(flow, runs_dir, classify="bug")
    right = run(flow, runs_dir, classify="question", reply="hi")
    lines = explain_comparison("==", left, right)
    assert lines is not None and len(lines) <= 22
    assert lines[1].startswith("The runs differ in ")
    assert "  state.category (output of step classify): 'bug' -> 'question'" in lines
    assert "  steps.reply.status: 'skipped' -> 'success'" in lines
    assert not any(line.startswith("  state.steps.classify") for line in lines)  # a mirror, shown once


def test_explanation_of_state_dicts_is_short_and_sorted() -> None:
    left = {"answer": "x", "steps": {"a": {"output": 1}}, **{f"k{i}": i for i in range(40)}}
    right = {"answer": "y", "steps": {"a": {"output": 2}}, **{f"k{i}": -i for i in range(1, 40)}}
    lines = explain_comparison("==", left, right)
    assert lines[0] == "{'answer', 'steps', 'k0', ...: ...} == {'answer', 'steps', 'k1', ...: ...}"
    assert lines[1] == "The states differ in 42 places (left -> right):"
    assert lines[2] == "  answer: 'x' -> 'y'"
    assert lines[-1] == "  ... 13 more lines (pytest -vv shows all)"
    assert len(lines) == 32
    assert len(explain_comparison("==", left, right, verbose=2)) == 44  # -vv: every place
    assert explain_comparison("==", {"a": 1}, {"a": 2}) is None  # other dicts: pytest's own diff
    assert explain_comparison("==", {"a": {"b": 1}}, {"a": {"b": 2}}) is None  # not a state: no "steps"
    assert explain_comparison("==", {"steps": {}, "x": 1}, {"x": 2}) is not None
    assert explain_comparison("!=", left, right) is None


def test_pytest_shows_the_focused_explanation(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_eq="""
        def test_eq(agentloom):
            a = agentloom.run("flow.yaml", state={"ticket": "x"}, provider=agentloom.scripted(classify="bug"))
            b = agentloom.run("flow.yaml", state={"ticket": "y"}, provider=agentloom.scripted(classify="bug"))
            assert a.state == b.state
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: assert {'ticket', *: ...} == {'ticket', *: ...}",
        "E         The states differ in 1 place (left -> right):",
        "E           ticket: 'x' -> 'y'",
    ])


def test_trace_queries_give_steps_calls_and_events_in_order(flow, runs_dir) -> None:
    result = run(flow, runs_dir, classify="bug")
    assert result.trace.step_ids() == ["classify", "route", "file_bug"]
    assert [(e.kind, e.step_id) for e in result.trace.calls()] == [
        ("provider_call", "classify"), ("tool_call", "file_bug")]
    assert [e.kind for e in result.trace.calls(step="classify")] == ["provider_call"]
    assert [e.data["args"] for e in result.trace.calls(tool="file_bug")] == [{"title": "crash"}]
    assert result.trace.calls(tool="other") == [] and result.trace.calls(step="reply") == []
    assert [e.step_id for e in result.trace.events("step_skip")] == ["reply"]
    assert [e.data["target"] for e in result.trace.events("router_choice", step="route")] == ["file_bug"]
