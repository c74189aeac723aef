"""``pytest_agentloom.strategies``: generated scripts fuzz a workflow's control logic, and find seeded bugs.

The examples' workflows survive every generated script (their invariants hold); a copy with a bug seeded in
(a router without a default, an agent whose step cap is gone) is caught, and hypothesis shrinks the script
that shows it to a line or two. Every search is derandomized with a small example budget, so it is the same
search on every run and stays fast.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from pytest_agentloom import Scripted, VirtualClock, load_workflow, reply, run_workflow
from pytest_agentloom.strategies import (
    DEFECT_CODES,
    FuzzScript,
    assert_invariants,
    check_caps,
    check_no_secrets,
    check_tool_policy,
    invariant_problems,
    scripts,
)
from tests.fuzz.helpers import AGENT, FAST, TRIAGE, Desk, create_issue, seeded, shrunk_failure, total_replies


def test_the_agent_example_holds_every_invariant_under_generated_scripts():
    @FAST
    @given(script=scripts(AGENT / "triage.yaml", tools=Desk().tools))
    def fuzz(script):
        assert_invariants(script.run(tools=Desk().tools))

    fuzz()


def test_the_support_example_holds_every_invariant_under_generated_scripts():
    @FAST
    @given(script=scripts(TRIAGE, tools={"create_issue": create_issue}))
    def fuzz(script):
        assert_invariants(script.run(tools={"create_issue": create_issue}, state={"ticket": "Printer on fire"}))

    fuzz()


def test_a_router_without_a_default_is_found_and_shrunk_to_one_reply(tmp_path):
    flow = seeded(tmp_path, TRIAGE, lambda data: data["steps"][1].pop("default"))
    tools = {"create_issue": create_issue}
    script, error = shrunk_failure(scripts(flow, tools=tools),
                                   lambda script: assert_invariants(script.run(tools=tools, state={"ticket": "x"})))
    assert "step 'route' failed with router_no_match" in error
    assert total_replies(script) == 1  # one classify reply that is neither 'bug' nor 'billing'
    assert "'classify': ['']" in repr(script) or "{'classify': ''}" in repr(script)
    assert repr(script).startswith("FuzzScript(replies={")  # what hypothesis prints: only what misbehaves


def test_an_agent_without_its_step_cap_is_found_and_shrunk_to_one_storm(tmp_path):
    flow = seeded(tmp_path, AGENT / "triage.yaml",
                  lambda data: data["agents"]["triager"].update(max_steps=1000))  # the cap, gone in effect
    script, error = shrunk_failure(scripts(flow, tools=Desk().tools),
                                   lambda script: assert_invariants(script.run(tools=Desk().tools)))
    assert "step 'triage' failed with script_exhausted" in error
    assert "asked the model more than 25 times (max_calls): no cap of the workflow stopped it" in error
    assert total_replies(script) == 1 and script.then["triage"]["misbehave"] == "never_finishes"
    assert script.replies == {"triage": ()}


def test_the_same_search_finds_the_same_minimal_script(tmp_path):
    flow = seeded(tmp_path, TRIAGE, lambda data: data["steps"][1].pop("default"))
    tools = {"create_issue": create_issue}

    def once():
        return repr(shrunk_failure(scripts(flow, tools=tools),
                                   lambda script: assert_invariants(script.run(tools=tools)))[0])

    assert once() == once()


def test_a_generated_script_is_plain_data_a_scripted_provider_reads():
    strategy = scripts(AGENT / "triage.yaml", tools=Desk().tools)

    @FAST
    @given(script=strategy)
    def readable(script):
        for step, items in script.replies.items():
            Scripted.from_data({step: list(items)})  # every reply is a data form (refusal, misbehave, ...)
        assert "workflow" not in repr(script)

    readable()


def test_a_step_past_its_replies_gets_its_right_answer(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nconfig: {model: gpt-4o-mini}\nsteps:\n"
                    "  - id: pick\n    type: llm_call\n    prompt: p\n    output: out\n"
                    "    response_schema: {type: json_schema, schema: {type: object, required: [n], "
                    "properties: {n: {type: integer}}}}\n")
    script = FuzzScript({"pick": ({"error": 500},)}, {}, {"pick": '{"n": 0}'}, load_workflow(flow))
    result = script.run()
    assert (result.status, result.state["out"], result.steps["pick"].attempts) == ("success", {"n": 0}, 2)


def test_the_invariants_name_each_broken_one(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nconfig: {model: gpt-4o-mini}\nstate_schema: {token: {redact: true}}\nsteps:\n"
                    "  - {id: a, type: llm_call, prompt: p, output: out}\n")
    result = run_workflow(flow, provider=Scripted({"a": "fine"}), state={"token": "sk-live-0000-1111"},
                          clock=VirtualClock(), runs_dir=False)
    assert invariant_problems(result) == []
    assert check_no_secrets(result, ["fine"]) == [
        "a redacted value (4 characters, starting 'fi') appears in the result's JSON",
        "a redacted value (4 characters, starting 'fi') appears in the state"]
    assert "router_no_match" in DEFECT_CODES and "provider_error" not in DEFECT_CODES


def test_the_caps_and_tool_checks_read_the_trace():
    desk = Desk()
    script = Scripted({"triage": [reply("", tool_calls=()), "done"]}, allow_unused=True)
    result = run_workflow(AGENT / "triage.yaml", provider=script, tools=desk.tools, clock=VirtualClock(),
                          runs_dir=False)
    assert check_caps(result) == [] and check_tool_policy(result) == []
    trace = result.trace
    event = trace.events("provider_call")[0]
    for _ in range(7):  # as if the loop had gone past max_steps 6
        trace._events.append(event)
    assert check_caps(result) == ["agent step 'triage' made 9 model calls in attempt 1, over its max_steps 6"]


def test_scripts_refuses_a_workflow_without_model_steps_and_bad_limits(tmp_path):
    flow = tmp_path / "tools.yaml"
    flow.write_text("name: t\nsteps:\n  - {id: t, type: tool, tool_name: x}\n")
    with pytest.raises(TypeError, match="scripts\\(\\): argument workflow"):
        scripts(flow)
    with pytest.raises(TypeError, match="scripts\\(\\): argument max_calls"):
        scripts(TRIAGE, max_calls=0)


@pytest.mark.slow
def test_the_plugin_does_not_import_hypothesis(pytester):
    pytester.makepyfile("""
        import sys
        def test_x():
            assert 'pytest_agentloom.plugin' in sys.modules
            assert 'pytest_agentloom.strategies' not in sys.modules
        """)
    pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:hypothesispytest").assert_outcomes(passed=1)


def test_the_caps_and_tool_checks_read_the_steps_of_subworkflows(tmp_path):
    (tmp_path / "child.yaml").write_text(
        "name: child\nagents:\n  helper: {model: gpt-4o-mini, tools: [lookup], max_steps: 2}\n"
        "steps:\n  - {id: work, type: agent, agent: helper, prompt: Help}\n")
    (tmp_path / "parent.yaml").write_text(
        "name: parent\nsteps:\n  - {id: review, type: subworkflow, workflow_path: child.yaml, output: done}\n")
    script = Scripted({"review/work": [{"tool_call": "lookup", "arguments": {}}, "done"]})
    result = run_workflow(tmp_path / "parent.yaml", provider=script, tools={"lookup": lambda: "found"},
                          clock=VirtualClock(), runs_dir=False)
    assert result.ok, result.steps
    assert [e.step_id for e in result.trace.events("tool_call")] == ["review/work"]
    assert check_caps(result) == [] and check_tool_policy(result) == []
    trace = result.trace
    call, tool = trace.events("provider_call")[0], trace.events("tool_call")[0]
    trace._events.append(call)  # as if the child's loop had gone past its max_steps 2
    trace._events.append(type(tool)(tool.seq, tool.time, tool.kind, tool.step_id, tool.attempt,
                                    {**tool.data, "tool": "shell_command"}))  # a tool the child's agent lacks
    assert check_caps(result) == ["agent step 'review/work' made 3 model calls in attempt 1, over its max_steps 2"]
    assert check_tool_policy(result) == ["step 'review/work' ran tool 'shell_command', which it does not offer"]
