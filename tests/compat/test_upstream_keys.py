"""Each upstream key, with the meaning docs/compatibility.md gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, VirtualClock, error, reply, run_workflow
from pytest_agentloom.cli import main as cli_main
from pytest_agentloom.engine._format.loader import load_workflow, parse_workflow
from pytest_agentloom.errors import SandboxRefusal, WorkflowError
from pytest_agentloom.tools._sandbox import Sandbox, SandboxConfig

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
EXAMPLES = HERE / "upstream_examples"


def run(path_or_workflow, **options):
    return run_workflow(path_or_workflow, clock=VirtualClock(), runs_dir=False, **options)


# -- config -------------------------------------------------------------------------------------------------------


def test_max_concurrent_steps_queues_a_layer_and_keeps_file_order() -> None:
    result = run(FIXTURES / "config_keys.yaml")  # 4 parallel calls of 250 ms, 2 at a time
    starts = {event.step_id: event.time for event in result.trace.events("step_start")}
    assert starts == {"tone": 0.0, "topic": 0.0, "urgency": 0.25, "language": 0.25, "summary": 0.5}
    assert list(result.steps) == ["tone", "topic", "urgency", "language", "summary"]
    unlimited = run(load_workflow(FIXTURES / "config_keys.yaml").with_config(max_concurrent_steps=None))
    assert unlimited.state == result.state
    assert [(e.kind, e.step_id) for e in unlimited.trace] == [(e.kind, e.step_id) for e in result.trace]
    assert {e.step_id: e.time for e in unlimited.trace.events("step_start")}["summary"] == 0.25


def test_config_max_retries_is_the_default_retry_count() -> None:
    text = "name: r\nconfig: {model: m, max_retries: 1}\nsteps: [{id: a, type: llm_call, prompt: hi}]\n"
    result = run(parse_workflow(text), provider=Scripted({"a": [error(503), error(503), reply("never")]}))
    assert result.steps["a"].attempts == 2 and result.status.value == "failed"
    own = text.replace("prompt: hi}", "prompt: hi, retry: {max_retries: 2}}")
    assert run(parse_workflow(own), provider=Scripted({"a": [error(503), error(503), reply("ok")]})).state["steps"][
        "a"]["output"] == "ok"


def test_upstream_backoff_names_mean_base_to_the_power_n() -> None:
    workflow = parse_workflow("name: r\nconfig: {model: m}\nsteps: [{id: a, type: llm_call, prompt: hi, "
                              "retry: {max_retries: 3, backoff_base: 3, backoff_max: 5}}]\n")
    policy = workflow.steps[0].retry
    assert [policy.delay(n) for n in (1, 2, 3)] == [1.0, 3.0, 5.0]


def test_an_upstream_key_we_leave_out_says_so_and_what_to_write() -> None:
    with pytest.raises(WorkflowError) as caught:
        parse_workflow("name: r\nconfig: {model: m}\nsteps: [{id: a, type: llm_call, prompt: hi, "
                       "retry: {jitter: true}}]\n")
    assert "Unknown key 'jitter' (from upstream agentloom, not supported here)" in str(caught.value)
    assert "How to fix: backoffs here are exact" in str(caught.value)
    with pytest.raises(WorkflowError, match="did you mean 'max_retries'"):
        parse_workflow("name: r\nconfig: {model: m, max_retrys: 2}\nsteps: [{id: a, type: llm_call, prompt: hi}]\n")


# -- the mock provider -----------------------------------------------------------------------------------------------


def test_mock_without_a_reply_fails_the_step_closed(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text("greet: {content: Hello}\n_version: 2\n")
    (tmp_path / "flow.yaml").write_text(
        "name: m\nconfig: {provider: mock, model: m, responses_file: replies.yaml}\n"
        "steps:\n  - {id: greet, type: llm_call, prompt: hi, output: hello}\n"
        "  - {id: other, type: llm_call, prompt: bye, depends_on: [greet]}\n")
    result = run(tmp_path / "flow.yaml")
    assert result.state["hello"] == "Hello"
    assert result.steps["other"].error_code == "script_exhausted"
    assert result.steps["other"].attempts == 1
    assert "step 'other'" in result.steps["other"].error and "step ids in it: greet" in result.steps["other"].error


def test_mock_responses_file_that_is_missing_is_a_load_problem(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text("name: m\nconfig: {provider: mock, model: m, responses_file: gone.json}\n"
                                        "steps: [{id: a, type: llm_call, prompt: hi}]\n")
    with pytest.raises(WorkflowError, match=r"config\.responses_file 'gone\.json' does not exist"):
        run(tmp_path / "flow.yaml")


def test_mock_replay_latency_advances_the_virtual_clock(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(json.dumps({"a": {"content": "x", "latency_ms": 1500}}))
    (tmp_path / "flow.yaml").write_text(
        "name: m\nconfig: {provider: mock, model: m, responses_file: r.json, latency_model: replay, "
        "latency_ms: 100, default_response: d}\n"
        "steps: [{id: a, type: llm_call, prompt: hi}, {id: b, type: llm_call, prompt: hi, depends_on: [a]}]\n")
    result = run(tmp_path / "flow.yaml")
    assert result.steps["a"].ended_at == 1.5 and result.steps["b"].ended_at == 1.6
    assert result.steps["b"].output == "d"


def test_upstream_recordings_replay_tool_loops_structured_output_and_conversations() -> None:
    calls = []

    async def http_request(url: str, method: str = "GET") -> dict:
        calls.append((url, method))
        return {"status": 200, "body": '{"url": "https://httpbin.org/get"}'}

    loop = run(EXAMPLES / "35_tool_calling.yaml", tools={"http_request": http_request})
    assert calls == [("https://httpbin.org/get", "GET")]
    assert loop.state["answer"].startswith("The /get endpoint of httpbin accepts the GET")
    chat = run(EXAMPLES / "38_chatbot_conversation.yaml")
    recorded = json.loads((EXAMPLES / "recordings/chatbot_conversation.json").read_text())
    assert [m["content"] for m in chat.state["chat"]["messages"] if m["role"] == "assistant"] == [
        recorded[key]["content"] for key in ("turn_1", "turn_2", "turn_3")]
    assert run(EXAMPLES / "39_multi_agent_conversation.yaml").status.value == "success"


# -- subworkflows ----------------------------------------------------------------------------------------------------


def test_inline_child_starts_from_the_parent_state_and_own_state_fills_gaps() -> None:
    result = run(FIXTURES / "subworkflows.yaml")
    child = result.state["investigation"]
    assert child["ticket"] == "Refund for order 1234" and child["category"] == "Mock response"


def test_exactly_one_child_key() -> None:
    with pytest.raises(WorkflowError, match="exactly one of 'workflow'"):
        parse_workflow("name: s\nsteps: [{id: a, type: subworkflow, workflow: x.yaml, workflow_path: y.yaml}]\n")


def test_an_inline_child_with_a_mistake_names_the_step_and_the_key() -> None:
    with pytest.raises(WorkflowError) as caught:
        parse_workflow("name: s\nsteps: [{id: a, type: subworkflow, workflow_inline: "
                       "{name: c, steps: [{id: x, type: llm_call, promt: hi}]}}]\n")
    text = str(caught.value)
    assert "inline subworkflow cannot be loaded" in text and "workflow_inline" in text and "promt" in text


# -- sandbox ---------------------------------------------------------------------------------------------------------


def test_allowed_schemes_refuses_plain_http() -> None:
    sandbox = Sandbox(SandboxConfig(allow_network=True, allowed_schemes=["https"]))
    with pytest.raises(SandboxRefusal) as caught:
        sandbox.check_url("http://example.org/")
    assert caught.value.rule == "allowed_schemes"
    sandbox.check_url("https://example.org/")
    with pytest.raises(ValueError):
        SandboxConfig(allowed_schemes=["ftp"])


def test_programs_that_run_programs_need_danger_opt_in() -> None:
    with pytest.raises(SandboxRefusal) as caught:
        Sandbox(SandboxConfig(allowed_commands=["sh"])).check_command(["sh", "-c", "rm -rf /"])
    assert caught.value.rule == "danger_opt_in"
    Sandbox(SandboxConfig(allowed_commands=["sh"], danger_opt_in=["sh"])).check_command(["sh", "-c", "true"])


def test_shell_command_cwd_runs_inside_a_readable_folder(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "flow.yaml").write_text(
        "name: s\nconfig: {sandbox: {allowed_commands: [pwd], readable_paths: [work]}}\nsteps:\n"
        "  - {id: here, type: tool, tool_name: shell_command, tool_args: {command: pwd, cwd: work}, output: here}\n"
        "  - {id: out, type: tool, tool_name: shell_command, tool_args: {command: pwd, cwd: /}, depends_on: [here]}\n")
    result = run(tmp_path / "flow.yaml")
    assert result.state["here"]["stdout"].strip() == str((tmp_path / "work").resolve())
    assert result.steps["out"].error_code == "sandbox_refused" and "readable_paths" in result.steps["out"].error


# -- validate ----------------------------------------------------------------------------------------------------------


def test_validate_refuses_a_file_whose_calls_have_no_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: v\nstate: {q: x}\nsteps:\n  - {id: ask, type: llm_call, prompt: '{state.q} {state.qq}'}\n"
                    "  - {id: route, type: router, depends_on: [ask], conditions: [{expression: q == 'x', "
                    "target: done}]}\n  - {id: done, type: llm_call, prompt: ok, model: m}\n"
                    "  - {id: t, type: tool, tool_name: x, tool_args: {a: state.gone, b: 'say {nope}', c: state.q}}\n")
    assert cli_main(["validate", str(flow)]) == 3
    err = capsys.readouterr().err
    assert "error: step 'ask', field 'model': no model is named, so every call would fail with no_model" in err
    assert "warning: step 'ask', field 'prompt': it reads state key 'qq'" in err
    assert "warning: step 'route', field 'default'" in err
    assert "warning: step 't', field 'tool_args.a': it reads state key 'gone'" in err
    assert "warning: step 't', field 'tool_args.b': it reads state key 'nope'" in err
    assert "tool_args.c" not in err
    assert cli_main(["validate", "--model", "gpt-4o-mini", str(flow)]) == 0
    assert "ok (v, 4 steps, 4 warnings)" in capsys.readouterr().out


def test_embed_dimensions_is_asked_for_and_checked() -> None:
    workflow = load_workflow(EXAMPLES / "37_embeddings.yaml")
    assert run(workflow).steps["vectorize"].error_code == "no_model"  # upstream embeds with config.model; not here
    result = run(workflow.with_config(embedding_model="text-embedding-3-small"))
    assert [len(vector) for vector in result.state["vectors"]] == [8, 8, 8]
    wrong = workflow.model_copy(update={"steps": [workflow.steps[0].model_copy(update={"dimensions": 4})]})
    failed = run(wrong.with_config(embedding_model="text-embedding-3-small"))
    assert "dimensions is 4 but a vector of 8 came back" in failed.steps["vectorize"].error


MOCK_FLOW = """\
name: mocked
config: {provider: mock, model: gpt-4o-mini, responses_file: replies.json, latency_ms: 500}
steps:
  - {id: ask, type: llm_call, prompt: hi, output: answer}
  - id: child
    type: subworkflow
    depends_on: [ask]
    workflow_inline:
      name: inner
      steps: [{id: draft, type: llm_call, model: m, prompt: "Draft from {state.answer}", output: draft}]
    output: child
"""


def _mock_files(folder: Path) -> Path:
    (folder / "replies.json").write_text(json.dumps({"ask": {"content": "hello"}, "draft": {"content": "a draft"}}))
    (folder / "mocked.yaml").write_text(MOCK_FLOW)
    return folder / "mocked.yaml"


def test_agentloom_run_uses_the_mock_of_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow = _mock_files(tmp_path)
    assert cli_main(["run", str(flow), "--json", "--no-record"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["state"]["answer"] == "hello" and printed["state"]["child"]["draft"] == "a draft"


def test_the_agentloom_fixture_uses_the_mock_without_a_cassette(pytester: pytest.Pytester) -> None:
    _mock_files(pytester.path)
    pytester.makepyfile(test_mocked="""
        def test_mocked(agentloom):
            result = agentloom.run("mocked.yaml")
            result.assert_status("success", "completed")
            assert result.state["child"]["draft"] == "a draft"
            assert result.steps["ask"].ended_at == 0.5   # the mock's latency, on the virtual clock
    """)
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


def test_mock_normal_latency_is_drawn_the_same_way_every_run(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text(
        "name: n\nconfig: {provider: mock, model: m, default_response: ok, latency_model: normal, latency_ms: 100}\n"
        "steps: [{id: a, type: llm_call, prompt: hi}, {id: b, type: llm_call, prompt: hi}]\n")
    first, second = run(tmp_path / "flow.yaml"), run(tmp_path / "flow.yaml")
    ends = [first.steps[step].ended_at for step in ("a", "b")]
    assert ends == [second.steps[step].ended_at for step in ("a", "b")]
    assert ends[0] != ends[1] and all(0.05 < end < 0.15 for end in ends)


def test_an_inline_child_state_is_redacted_in_the_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text(
        "name: p\nconfig: {provider: mock, model: m, default_response: ok}\nstate_schema: {api_key: {redact: true}}\n"
        "steps:\n  - id: child\n    type: subworkflow\n    workflow_inline:\n      name: c\n"
        "      state: {api_key: sk-inline-canary-1234}\n"
        "      steps: [{id: t, type: tool, tool_name: echo, tool_args: {key: state.api_key}}]\n")
    result = run(tmp_path / "flow.yaml", tools={"echo": lambda key: "done"}, checkpoint_dir=tmp_path / "cp")
    assert result.status.value == "success"
    written = "".join(path.read_text() for path in (tmp_path / "cp").rglob("*.json"))
    assert written and "sk-inline-canary-1234" not in written


def test_short_base64_with_media_type_is_sent_as_data() -> None:
    workflow = load_workflow(FIXTURES / "base64_short.yaml")
    provider = Scripted({"look": "red"})
    assert run(workflow, provider=provider).status.value == "success"
    (attachment,) = provider.requests[0].request.messages[-1].attachments
    assert attachment.media_type == "image/png" and attachment.data is not None
    assert attachment.data.startswith(b"\x89PNG")


def test_the_sandbox_keys_fixture_runs_with_upstream_meanings() -> None:
    result = run(FIXTURES / "sandbox_keys.yaml")
    assert result.state["echo_result"]["stdout"] == "Hello from the sandbox\n"  # cwd: "." is the fixture's folder
    assert result.steps["shell"].error_code == "sandbox_refused" and "danger_opt_in" in result.steps["shell"].error
    assert result.steps["summarize"].output == "Mock response"
    assert [load_workflow(FIXTURES / "sandbox_keys.yaml").step("summarize").retry.delay(n) for n in (1, 2, 3)] == [
        1.0, 3.0, 9.0]
