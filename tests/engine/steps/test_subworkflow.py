"""The subworkflow step: loading the child, input rendering, return_keys, failures, cost, redaction, trace."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, VirtualClock, WorkflowError, reply, run_workflow
from pytest_agentloom.engine._format.loader import load_workflow
from pytest_agentloom.engine._format.model import FUTURE_STEP_TYPES

SALT = b"subworkflow-test-salt"

CHILD = """\
name: research
config: {model: gpt-4o}
state: {topic: default topic, depth: 1}
steps:
  - {id: search, type: llm_call, prompt: "Search {state.topic} at depth {state.depth}", output: found}
  - {id: summarize, type: llm_call, prompt: "Summarize {state.found}", output: summary, depends_on: [search]}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def parent(folder: Path, step: str, *, extra: str = "", name: str = "parent.yaml") -> Path:
    return write(folder, name, f"name: parent\nconfig: {{model: gpt-4o}}\nstate: {{question: tides}}\n{extra}"
                               f"steps:\n  - {step}\n")


def run(path: Path | str, provider: Scripted | None = None, **kwargs):
    provider = provider or Scripted({"research/search": "raw notes", "research/summarize": "short"})
    return run_workflow(path, provider=provider, clock=VirtualClock(), runs_dir=False, redaction_salt=SALT, **kwargs)


def test_subworkflow_is_no_longer_a_future_step_type() -> None:
    assert "subworkflow" not in FUTURE_STEP_TYPES


# -- loading ------------------------------------------------------------------------------------------------


def test_missing_child_file_is_a_load_error_naming_parent_step_and_field(tmp_path: Path) -> None:
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: nowhere.yaml}")
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path)
    error = caught.value
    assert (error.file, error.step_id, error.field) == (str(path), "research", "workflow")
    assert "Subworkflow 'nowhere.yaml' cannot be loaded" in str(error)
    assert "Workflow file not found" in str(error)


def test_invalid_child_is_a_load_error_that_includes_the_childs_problem(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", "name: c\nsteps: [{id: a, type: llm_call, promt: hi}]\n")
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml}")
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path)
    assert caught.value.step_id == "research"
    assert "promt" in str(caught.value)
    assert str(tmp_path / "child.yaml") in str(caught.value)


def test_a_cycle_of_subworkflows_is_a_load_error_naming_the_chain(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "name: a\nsteps: [{id: to_b, type: subworkflow, workflow: sub/b.yaml}]\n")
    write(tmp_path, "sub/b.yaml", "name: b\nsteps: [{id: to_a, type: subworkflow, workflow: ../a.yaml}]\n")
    with pytest.raises(WorkflowError) as caught:
        load_workflow(tmp_path / "a.yaml")
    text = str(caught.value)
    a, b = tmp_path / "a.yaml", tmp_path / "sub" / "b.yaml"
    assert f"cycle: {a} -> {b} -> {a}" in text


def test_a_file_running_itself_is_a_cycle(tmp_path: Path) -> None:
    path = write(tmp_path, "self.yaml", "name: s\nsteps: [{id: again, type: subworkflow, workflow: self.yaml}]\n")
    with pytest.raises(WorkflowError, match="cycle") as caught:
        load_workflow(path)
    assert (caught.value.step_id, caught.value.field) == ("again", "workflow")


def test_retry_on_the_step_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, retry: {max_retries: 2}}")
    with pytest.raises(WorkflowError, match="cannot be retried") as caught:
        load_workflow(path)
    assert (caught.value.step_id, caught.value.field) == ("research", "retry")


def test_the_steps_timeout_caps_the_child(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", """\
        name: c
        steps:
          - {id: slow, type: tool, tool_name: wait}
          - {id: later, type: tool, tool_name: wait, depends_on: [slow]}
        """)
    path = parent(tmp_path, "{id: sub, type: subworkflow, workflow: child.yaml, timeout: 5}")

    async def wait() -> str:
        from pytest_agentloom._core.clock import current_clock

        await current_clock().sleep(6)
        return "done"

    result = run(path, tools={"wait": wait})
    assert result.status == "failed"
    assert result.steps["sub"].error_code == "timeout"
    assert "run timeout of 5s reached" in result.steps["sub"].error
    assert [e.step_id for e in result.trace.events("step_start")] == ["sub", "sub/slow"]


def test_unknown_field_on_the_step_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, inputs: {}}")
    with pytest.raises(WorkflowError, match="inputs"):
        load_workflow(path)


# -- running ------------------------------------------------------------------------------------------------


def test_child_runs_with_rendered_input_and_output_gets_its_final_state(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, output: research, "
                            "input: {topic: 'about {state.question}'}}")
    provider = Scripted({"research/search": "raw notes", "research/summarize": "short"})
    result = run(path, provider)
    assert result.status == "success"
    assert [call.step_id for call in provider.requests] == ["research/search", "research/summarize"]
    assert provider.requests[0].messages[-1]["content"] == "Search about tides at depth 1"
    research = result.state["research"]
    assert (research["topic"], research["depth"], research["found"], research["summary"]) == (
        "about tides", 1, "raw notes", "short")
    assert research["steps"]["summarize"]["output"] == "short"
    assert result.state["steps"]["research"]["output"] == research


def test_input_follows_tool_args_rules(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", "name: c\nsteps: [{id: echo, type: tool, tool_name: echo, "
                                  "tool_args: {a: state.a, b: state.b, c: state.c}, output: echoed}]\n")
    path = write(tmp_path, "parent.yaml", """\
        name: p
        state: {numbers: [1, 2], n: 3}
        steps:
          - id: sub
            type: subworkflow
            workflow: child.yaml
            return_keys: [a, b, c]
            input:
              a: state.numbers
              b: "n={state.n}"
              c: {value: "{state.n}", template: false}
        """)
    result = run(path, tools={"echo": lambda **kw: kw})
    assert result.state["steps"]["sub"]["output"] == {"a": [1, 2], "b": "n=3", "c": "{state.n}"}


def test_return_keys_keep_only_those_keys(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, output: answer, "
                            "return_keys: [summary]}")
    result = run(path)
    assert result.state["answer"] == {"summary": "short"}
    assert result.steps["research"].output == {"summary": "short"}


def test_a_missing_return_key_fails_the_step_naming_it(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, return_keys: [summary, verdict]}")
    result = run(path)
    assert result.status == "failed"
    step = result.steps["research"]
    assert step.error_code == "missing_return_key"
    assert "no state key 'verdict'" in step.error


def test_a_failing_child_step_fails_the_parent_step_naming_it(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", "name: c\nsteps: [{id: boom, type: tool, tool_name: explode}]\n")
    path = write(tmp_path, "parent.yaml", """\
        name: p
        steps:
          - {id: sub, type: subworkflow, workflow: child.yaml}
          - {id: after, type: tool, tool_name: explode, depends_on: [sub]}
        """)

    def explode() -> None:
        raise RuntimeError("kaboom")

    result = run(path, tools={"explode": explode})
    assert (result.status, result.failed_step) == ("failed", "sub")
    assert result.steps["sub"].error.startswith("subworkflow 'child.yaml' failed at step 'boom': ")
    assert "kaboom" in result.steps["sub"].error
    assert result.steps["sub"].error_code == "tool_error"
    assert result.steps["after"].status == "skipped"


def test_child_tokens_and_cost_roll_up_into_the_step_and_the_parent_budget(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = write(tmp_path, "parent.yaml", """\
        name: p
        config: {model: gpt-4o, budget_usd: 0.01}
        steps:
          - {id: research, type: subworkflow, workflow: child.yaml}
          - {id: after, type: llm_call, prompt: more, depends_on: [research]}
        """)
    provider = Scripted({
        "research/search": reply("a", input_tokens=10, output_tokens=5, cost=0.004),
        "research/summarize": reply("b", input_tokens=20, output_tokens=7, cost=0.007),
        "after": "never",
    })
    result = run(path, provider)
    step = result.steps["research"]
    assert (step.input_tokens, step.output_tokens) == (30, 12)
    assert step.cost_usd == pytest.approx(0.011)
    assert result.status == "budget_exceeded"
    assert result.steps["after"].error_code == "budget_exceeded"
    assert provider.calls("after") == []


def test_the_parents_remaining_budget_caps_the_child(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml}",
                  name="p.yaml").read_text().replace("{model: gpt-4o}", "{model: gpt-4o, budget_usd: 0.005}", 1)
    path_file = write(tmp_path, "p.yaml", path)
    provider = Scripted({"research/search": reply("a", cost=0.006), "research/summarize": "b"})
    result = run(path_file, provider)
    assert result.status == "failed"
    assert "budget_exceeded" in result.steps["research"].error
    assert provider.calls("research/summarize") == []


def test_child_events_are_nested_under_the_step_in_order(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml}")
    result = run(path)
    kinds = [(e.kind, e.step_id, e.data.get("event")) for e in result.trace if e.step_id and "research" in e.step_id]
    assert kinds[0] == ("step_start", "research", None)
    assert kinds[1] == ("subworkflow", "research", "run_start")
    assert ("provider_call", "research/search", None) in kinds
    assert kinds.index(("step_start", "research/search", None)) < kinds.index(("step_start", "research/summarize",
                                                                                 None))
    assert kinds[-1] == ("step_end", "research", None)
    times = [e.time for e in result.trace]
    assert times == sorted(times)


def test_two_runs_are_identical(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", CHILD)
    path = parent(tmp_path, "{id: research, type: subworkflow, workflow: child.yaml, output: r}")
    assert run(path).to_json() == run(path).to_json()


def test_relative_child_path_is_resolved_against_the_parent_folder(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "flows/lib/child.yaml", CHILD)
    path = parent(tmp_path / "flows", "{id: research, type: subworkflow, workflow: lib/child.yaml, output: r}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert path == tmp_path / "flows" / "parent.yaml"
    result = run("../flows/parent.yaml")
    assert result.state["r"]["summary"] == "short"


# -- redaction ----------------------------------------------------------------------------------------------


def test_a_parent_pattern_redacts_a_child_value_on_the_way_out(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", """\
        name: c
        state: {api_key: ""}
        steps: [{id: call, type: tool, tool_name: use, tool_args: {key: state.api_key}, output: used}]
        """)
    path = write(tmp_path, "parent.yaml", """\
        name: p
        state: {secret: sk-very-secret-1234}
        state_schema: {api_key: {redact: true}}
        config: {checkpoint: true, checkpoint_dir: ckpt}
        steps:
          - {id: sub, type: subworkflow, workflow: child.yaml, output: child, input: {api_key: state.secret}}
        """)
    seen = []
    result = run(path, tools={"use": lambda key: seen.append(key) or "ok"})
    assert seen == ["sk-very-secret-1234"]  # the child ran on the plain value
    assert result.status == "success"
    assert result.state["child"]["api_key"].startswith("<REDACTED:sha256=")
    assert result.steps["sub"].output["api_key"].startswith("<REDACTED:sha256=")
    assert result.unredacted_state["child"]["api_key"] == "sk-very-secret-1234"  # in memory, plain
    call = result.trace.calls(step="sub/call")[0]
    assert call.data["args"]["key"].startswith("<REDACTED:sha256=")
    saved = Path(result.checkpoint_path).read_text()
    assert "sk-very-secret-1234" not in saved
    assert "sk-very-secret-1234" not in result.to_json()


def test_a_childs_own_pattern_still_redacts_what_it_returns(tmp_path: Path) -> None:
    write(tmp_path, "child.yaml", """\
        name: c
        state_schema: {token: {redact: true}}
        steps: [{id: mint, type: tool, tool_name: mint, output: token}]
        """)
    path = parent(tmp_path, "{id: sub, type: subworkflow, workflow: child.yaml, output: got, return_keys: [token]}")
    result = run(path, tools={"mint": lambda: "tok-abcdef-0987"})
    assert result.state["got"]["token"].startswith("<REDACTED:sha256=")
    assert "tok-abcdef-0987" not in result.to_json()
    assert json.loads(result.to_json())["state"]["got"]["token"] == result.state["got"]["token"]


def test_nested_and_parallel_subworkflows_have_distinct_ids_and_a_stable_trace(tmp_path: Path) -> None:
    write(tmp_path, "lib/child.yaml", CHILD)
    write(tmp_path, "lib/middle.yaml", """\
        name: middle
        steps: [{id: inner, type: subworkflow, workflow: child.yaml, return_keys: [summary], output: got}]
        """)
    path = write(tmp_path, "parent.yaml", """\
        name: p
        config: {model: gpt-4o}
        steps:
          - {id: left, type: subworkflow, workflow: lib/middle.yaml, return_keys: [got], output: l}
          - {id: right, type: subworkflow, workflow: lib/child.yaml, return_keys: [summary], output: r}
        """)

    def provider() -> Scripted:
        return Scripted({"left/inner/search": "x", "left/inner/summarize": "deep", "right/search": "y",
                         "right/summarize": "shallow"})

    first = run(path, provider())
    assert (first.state["l"], first.state["r"]) == ({"got": {"summary": "deep"}}, {"summary": "shallow"})
    starts = [e.step_id for e in first.trace.events("step_start")]
    assert starts == ["left", "left/inner", "left/inner/search", "left/inner/summarize",
                      "right", "right/search", "right/summarize"]
    assert first.to_json() == run(path, provider()).to_json()
