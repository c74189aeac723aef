"""Fault injection on scripted runs, scenario table rows and tool calls (docs/resilience.md)."""

from __future__ import annotations

import pytest

FLOW = """\
name: triage
config: {model: gpt-4o-mini}
steps:
  - id: classify
    type: llm_call
    prompt: "Classify"
    output: category
  - id: triage
    type: llm_call
    depends_on: [classify]
    prompt: "Triage a {state.category} ticket"
    response_schema:
      type: json_schema
      name: Triage
      schema: {type: object, properties: {priority: {type: string}}, required: [priority]}
    output: triage
"""

TOOL_FLOW = """\
name: lookup
steps:
  - id: fetch
    type: tool
    tool_name: lookup
    tool_args: {key: T-1}
    retry: {max_retries: 1}
    output: found
"""


def test_a_scripted_run_retries_an_injected_503_with_the_same_reply(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_it="""
        def test_it(agentloom):
            provider = agentloom.scripted(classify="bug", triage='{"priority": "high"}')
            result = agentloom.run("flow.yaml", provider=provider, inject="classify#1=503")
            assert result.status == "success", result.steps
            assert result.steps["classify"].attempts == 2
            [retry] = result.trace.events("retry")
            assert retry.data["status"] == 503
            assert "injected fault classify#1=503 (agentloom.run(inject=...))" in retry.data["error"]
            assert [e.data["target"] for e in result.trace.events("fault_injected")] == ["classify#1"]
    """)
    pytester.runpytest_inprocess().assert_outcomes(passed=1)


def test_malformed_json_on_a_scripted_run_is_re_asked(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_it="""
        def test_it(agentloom):
            provider = agentloom.scripted(classify="bug", triage=['{"priority": "high"}', '{"priority": "low"}'])
            result = agentloom.run("flow.yaml", provider=provider, inject="triage=malformed_json")
            assert result.status == "success", result.steps
            assert result.state["triage"] == {"priority": "low"}  # the first reply was broken, the re-ask's kept
            calls = [e.data.get("valid") for e in result.trace.events("provider_call") if e.step_id == "triage"]
            assert calls == [False, True]
    """)
    pytester.runpytest_inprocess().assert_outcomes(passed=1)


def test_a_table_row_injects_its_own_fault(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_rows.agentloom.yaml").write_text(
        "- id: plain\n  workflow: flow.yaml\n  script: {classify: bug, triage: '{\"priority\": \"high\"}'}\n"
        "  expect: {status: success}\n"
        "- id: refused\n  workflow: flow.yaml\n  script: {classify: bug, triage: '{\"priority\": \"high\"}'}\n"
        "  allow_unused: true\n  inject: classify=refusal\n"
        "  expect: {status: failed, reason: step_failed, steps: {classify: failed, triage: skipped}}\n")
    pytester.runpytest_inprocess().assert_outcomes(passed=2)


def test_a_rows_mistyped_fault_target_fails_collection_with_a_did_you_mean(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_rows.agentloom.yaml").write_text(
        "- id: typo\n  workflow: flow.yaml\n  script: {classify: bug}\n  inject: [triag#1=429]\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "Invalid scenario table: fault 'triag#1=429' in flow.yaml targets step 'triag', which the workflow "
        "doesn't have.",
        "*row: typo",
        "*field: inject",
        "How to fix: did you mean 'triage'?",
    ])


def test_a_rows_unknown_fault_kind_fails_collection(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    (pytester.path / "test_rows.agentloom.yaml").write_text(
        "- id: typo\n  workflow: flow.yaml\n  script: {classify: bug}\n  inject: classify=truncate\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fault 'classify=truncate' has an unknown kind 'truncate'.*",
                                 "*did you mean 'truncated'?*"])


def test_a_tool_timeout_fails_its_call_and_the_steps_retry_runs_it_again(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=TOOL_FLOW)
    pytester.makepyfile(test_it="""
        import pytest

        calls = []

        def lookup(key: str) -> str:
            calls.append(key)
            return f"found {key}"

        @pytest.mark.agentloom(tools={"lookup": lookup}, inject="lookup=timeout")
        def test_it(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted())
            assert result.status == "success", result.steps
            assert result.state["found"] == "found T-1"
            assert calls == ["T-1"]  # the faulted call never reached the tool
            [fault] = result.trace.events("fault_injected")
            assert (fault.step_id, fault.data["target"], fault.data["fault"]) == ("fetch", "tool:lookup#1", "timeout")
            [retry] = result.trace.events("retry")
            assert "injected fault lookup=timeout" in retry.data["error"]
    """)
    pytester.runpytest_inprocess().assert_outcomes(passed=1)


def test_an_unknown_tool_is_named_with_a_did_you_mean(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=TOOL_FLOW)
    pytester.makepyfile(test_it="""
        import pytest

        @pytest.mark.agentloom(tools={"lookup": lambda key: key}, inject="tool:lokup=error")
        def test_it(agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted())
    """)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*fault 'tool:lokup=error' in test_it.py::test_it (lookup) targets tool 'lokup', "
                                 "which the workflow doesn't have.*", "*did you mean 'lookup'?*"])
