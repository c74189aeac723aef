"""A user's mistake shows its message and the user's own line, nothing of this package; an opt-in shows all."""

from __future__ import annotations

import pytest

FLOW = """\
name: flow
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify"
    output: category
  - id: answer
    type: llm_call
    model: gpt-4o-mini
    depends_on: [clasify]
    prompt: "Answer"
    output: reply
"""

TEST = """
def test_{n}(agentloom):
    result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug", answer="x"))
    assert result.ok
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_many="".join(TEST.format(n=n) for n in range(17)))
    (pytester.path / "test_rows.agentloom.yaml").write_text("- id: row\n  workflow: flow.yaml\n")
    return pytester


def test_one_typo_over_17_tests_is_the_message_and_the_users_line_per_test(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:randomly", "test_many.py")
    result.assert_outcomes(failed=17)
    lines = result.stdout.lines
    failures = "\n".join(lines[lines.index(next(x for x in lines if "FAILURES" in x)):])
    assert "pytest_agentloom/" not in failures and "site-packages" not in failures
    block = [line for line in failures.split("_ test_3 _")[1].split("_ test_4 _")[0].strip("_ \n").splitlines()
             if set(line.strip()) != {"^"}]  # pytest 8.3 draws no carets under the call
    assert block == [
        "agentloom = <AgentloomHarness 'test_many.py::test_3'>",
        "",
        "    def test_3(agentloom):",
        '>       result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug", answer="x"))',
        "E       pytest_agentloom.errors.WorkflowError: Step 'answer' depends on unknown step 'clasify'",
        f"E         file: {project.path / 'flow.yaml'}:11",
        "E         step: answer",
        "E         field: depends_on[0]",
        "E       How to fix: did you mean 'classify'?",
        "",
        "test_many.py:14: WorkflowError",
    ]
    # the failures section: the block above and a header per test (the short summary after it is pytest's,
    # whole under CI=true and cut to the terminal's width elsewhere); carets only where pytest draws them
    section = [line for line in failures.split("short test summary info")[0].splitlines()
               if set(line.strip()) != {"^"}]
    assert len(section) < 17 * 14 + 5


def test_a_yaml_row_shows_the_same_message_as_a_clean_block(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:randomly", "test_rows.agentloom.yaml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*_ scenario row _*",
        "Step 'answer' depends on unknown step 'clasify'",
        f"  file: {project.path / 'flow.yaml'}:11",
        "  step: answer",
        "  field: depends_on[0]",
        "How to fix: did you mean 'classify'?",
    ], consecutive=True)


def test_agentloom_full_trace_shows_every_frame_for_a_bug_in_agentloom(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:randomly", "--agentloom-full-trace", "-k", "test_3 or row")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert "pytest_agentloom/engine/_format/loader.py" in output
    assert "pytest_agentloom/testing/_harness.py" in output
    assert output.count("WorkflowError: Step 'answer' depends on unknown step 'clasify'") >= 2
