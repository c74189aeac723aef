"""A table row's script: step ids checked at collection, run-time messages in the table's own YAML (issue 31)."""

from __future__ import annotations

import pytest

FLOW = """\
name: triage
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify"
    output: category
  - id: answer
    type: llm_call
    model: gpt-4o-mini
    depends_on: [classify]
    prompt: "Answer a {state.category} ticket"
    output: reply
"""


def test_a_mistyped_script_step_fails_collection_with_the_row_and_the_closest_step(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_rows.agentloom.yaml").write_text(
        "- id: good\n  workflow: flow.yaml\n  script: {classify: bug, answer: sorry}\n"
        "- id: typo\n  workflow: flow.yaml\n  script: {clasify: bug, answer: sorry}\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "Invalid scenario table: 'script' has replies for 'clasify', which is no step of flow.yaml",
        f"  file: {pytester.path / 'test_rows.agentloom.yaml'}:4",
        "  row: typo",
        "  field: script.clasify",
        "How to fix: did you mean 'classify'? the steps are: classify, answer.",
    ], consecutive=True)


def test_a_python_test_of_a_table_hears_it_at_collection_too(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW, rows="- id: typo\n  script: {classify: bug, anser: sorry}\n")
    pytester.makepyfile(test_rows="""
        import pytest

        @pytest.mark.agentloom(workflow="flow.yaml")
        @pytest.mark.agentloom_scenarios("rows.yaml")
        def test_row(agentloom, scenario):
            scenario.check(scenario.run(agentloom), agentloom)
    """)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*'script' has replies for 'anser', which is no step of flow.yaml*",
                                 "*did you mean 'answer'?*"])


def test_a_step_the_rows_script_leaves_out_is_explained_in_yaml(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_rows.agentloom.yaml").write_text(
        "- id: short\n  workflow: flow.yaml\n  script: {classify: bug}\n  expect: {status: success}\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*Scripted provider has no replies for step 'answer' (steps with replies: classify).*",
        "*How to fix: add 'answer' to the script, e.g. script: {answer: the reply text}.*",
    ])
    assert "Scripted({" not in result.stdout.str()
