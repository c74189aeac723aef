"""The sandbox invariant, the escape attempts of generated scripts, and replies for subworkflows and embed steps.

A step that offers a built-in tool gets calls that try to leave the sandbox; :func:`check_sandbox` says
whether the run's own sandbox refused each one it should. The agent example given the four built-ins
holds (nothing runs: its sandbox is closed); a copy whose ``file_read`` is replaced by one that checks
nothing is caught, and the search shrinks the script to the one call that escaped.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings

from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom.strategies import assert_invariants, check_sandbox, scripts
from tests.fuzz.helpers import AGENT, FAST, Desk, seeded, shrunk_failure, total_replies

BUILTINS = ["file_read", "file_write", "shell_command", "http_request"]
METADATA = "http://169.254.169.254/latest/meta-data/"


def with_builtins(folder: Path, names: list[str], sandbox: dict | None = None) -> Path:
    """A copy of the agent example whose triager is also offered the built-in tools ``names``."""
    def change(data):
        data["agents"]["triager"]["tools"] += names
        if sandbox is not None:
            data["config"]["sandbox"] = sandbox
    return seeded(folder, AGENT / "triage.yaml", change)


def unchecked_file_read(path: str) -> str:
    """The seeded bug: a ``file_read`` of the test's own that reads any path, sandbox or not."""
    return Path(path).read_text()[:40]


def file_read_acting_first(path: str) -> str:
    """A ``file_read`` that goes to the file before it asks the sandbox (it never does): the bug to catch."""
    raise FileNotFoundError(path)


def drawn_calls(flow: Path, tool: str) -> list[dict]:
    """The arguments of every call of ``tool`` a derandomized search draws for the triage step (drawing only:
    no run, so many examples stay fast, and every version of hypothesis draws some escape attempts)."""
    found: list[dict] = []

    @settings(FAST, max_examples=300)
    @given(script=scripts(flow, tools=Desk().tools))
    def draw(script):
        found.extend(item["arguments"] for item in script.replies["triage"]
                     if isinstance(item, dict) and item.get("tool_call") == tool)

    draw()
    return found


def test_the_agent_example_with_the_built_ins_holds_and_its_closed_sandbox_runs_nothing(tmp_path):
    flow = with_builtins(tmp_path, BUILTINS)
    codes: list[str] = []

    @FAST
    @given(script=scripts(flow, tools=Desk().tools))
    def fuzz(script):
        result = script.run(tools=Desk().tools)
        assert_invariants(result)
        calls = [event for event in result.trace.events("tool_call") if event.data["tool"] in BUILTINS]
        assert not any(event.data["ok"] for event in calls)  # the default sandbox is closed: nothing runs
        codes.extend(event.data["code"] for event in calls)

    fuzz()
    assert codes and set(codes) == {"sandbox_refused"}


def test_an_unchecked_file_read_is_found_and_shrunk_to_one_escape(tmp_path):
    flow = with_builtins(tmp_path, ["file_read"])
    tools = {**Desk().by_name(), "file_read": unchecked_file_read}
    script, error = shrunk_failure(scripts(flow, tools=tools),
                                   lambda script: assert_invariants(script.run(tools=tools)))
    assert ("sandbox: step 'triage' called file_read {\"path\": \"/etc/passwd\"}, which ran although the sandbox "
            "refuses it (rule 'readable_paths')") in error
    assert total_replies(script) == 1
    assert repr(script) == ("FuzzScript(replies={'triage': [{'tool_call': 'file_read', 'arguments': "
                            "{'path': '/etc/passwd'}}]}, then={})")


def test_a_tool_that_acts_before_asking_the_sandbox_is_reported(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nconfig: {model: gpt-4o-mini}\nsteps:\n"
                    "  - {id: read, type: llm_call, prompt: p, output: out, tools: [{name: file_read}]}\n")

    def run(arguments, tools=None):
        script = Scripted.from_data({"read": [{"tool_call": "file_read", "arguments": arguments}, "done"]})
        return run_workflow(flow, provider=script, tools=tools, clock=VirtualClock(), runs_dir=False)

    assert check_sandbox(run({"path": "/etc/passwd"})) == []  # the built-in refuses it
    assert check_sandbox(run({"path": "/etc/passwd"}, {"file_read": file_read_acting_first})) == [
        "step 'read' called file_read {\"path\": \"/etc/passwd\"}, which failed with tool_error where the sandbox "
        "refuses it (rule 'readable_paths'): the tool acted before it asked the sandbox"]
    # arguments the built-in does not take fail before its sandbox check, whichever tool it is
    assert check_sandbox(run({"path": "/etc/passwd", "unexpected": 1}, {"file_read": file_read_acting_first})) == []


def test_a_tool_steps_failed_call_carries_its_code_and_is_judged_as_a_loops_is(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nsteps:\n  - {id: read, type: tool, tool_name: file_read, "
                    "tool_args: {path: /etc/passwd}, output: out}\n")

    refused = run_workflow(flow, clock=VirtualClock(), runs_dir=False)  # the built-in, closed sandbox
    [event] = refused.trace.events("tool_call")
    assert (event.data["ok"], event.data["code"]) == (False, "sandbox_refused")
    assert refused.steps["read"].error_code == "sandbox_refused" and check_sandbox(refused) == []
    acted = run_workflow(flow, tools={"file_read": file_read_acting_first}, clock=VirtualClock(), runs_dir=False)
    assert acted.trace.events("tool_call")[0].data["code"] == "tool_error"
    assert check_sandbox(acted) == [
        "step 'read' called file_read {\"path\": \"/etc/passwd\"}, which failed with tool_error where the sandbox "
        "refuses it (rule 'readable_paths'): the tool acted before it asked the sandbox"]


def test_the_sandbox_check_asks_the_workflows_own_sandbox(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the unchecked tool reads relative paths from
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "notes.txt").write_text("hello")
    (tmp_path / "inside_sibling").mkdir()
    (tmp_path / "inside_sibling" / "notes.txt").write_text("secret")
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nconfig: {sandbox: {readable_paths: [inside]}}\nsteps:\n"
                    "  - {id: a, type: tool, tool_name: file_read, tool_args: {path: inside/notes.txt}, output: a}\n"
                    "  - {id: b, type: tool, tool_name: file_read, tool_args: {path: inside_sibling/notes.txt}, "
                    "output: b}\n")
    result = run_workflow(flow, tools={"file_read": unchecked_file_read}, clock=VirtualClock(), runs_dir=False)
    assert (result.state["a"], result.state["b"]) == ("hello", "secret")
    assert check_sandbox(result) == [
        "step 'b' called file_read {\"path\": \"inside_sibling/notes.txt\"}, which ran although the sandbox "
        "refuses it (rule 'readable_paths')"]
    assert check_sandbox(run_workflow(flow, clock=VirtualClock(), runs_dir=False)) == []  # the built-in's refusal


def test_escape_attempts_never_name_an_address_the_sandbox_would_connect_to(tmp_path):
    closed = {call["url"] for call in drawn_calls(with_builtins(tmp_path / "closed", ["http_request"]),
                                                  "http_request") if isinstance(call.get("url"), str)}
    opened = {call["url"] for call in drawn_calls(
        with_builtins(tmp_path / "open", ["http_request"], {"allow_network": True, "allow_internal_targets": True}),
        "http_request") if isinstance(call.get("url"), str)}
    internal = ("http://169.254.", "http://127.", "http://10.", "http://localhost", "http://[::1]", "http://0.0.0.0")
    assert any(url.startswith(internal) for url in closed)
    assert not any(url.startswith(internal) for url in opened)  # allowed there: it would connect


def nested_flow(tmp_path: Path, *, default: bool = True) -> Path:
    child_route = {"id": "route", "type": "router", "depends_on": ["label"],
                   "conditions": [{"expression": "state.label == 'good'", "target": "good"}]}
    if default:
        child_route["default"] = "other"
    flow = tmp_path / "nested.yaml"
    flow.write_text(yaml.safe_dump({
        "name": "nested", "config": {"model": "gpt-4o-mini", "embedding_model": "text-embedding-3-small"},
        "state": {"docs": ["a", "b"]},
        "steps": [
            {"id": "vectors", "type": "embed", "inputs": "docs", "output": "vectors"},
            {"id": "review", "type": "subworkflow", "depends_on": ["vectors"], "output": "review",
             "workflow_inline": {"name": "child", "config": {"model": "gpt-4o-mini"}, "steps": [
                 {"id": "label", "type": "llm_call", "prompt": "label", "output": "label"}, child_route,
                 {"id": "good", "type": "llm_call", "prompt": "good", "output": "done"},
                 {"id": "other", "type": "llm_call", "prompt": "other", "output": "done"}]}}]},
        sort_keys=False))
    return flow


def test_steps_inside_subworkflows_and_embed_steps_get_replies(tmp_path):
    misbehaved: set[str] = set()

    @FAST
    @given(script=scripts(nested_flow(tmp_path)))
    def fuzz(script):
        assert set(script.right) == {"vectors", "review/label", "review/good", "review/other"}
        assert_invariants(script.run())  # without replies, these steps failed with invalid_script
        misbehaved.update(step for step, items in script.replies.items() if items)

    fuzz()
    assert {"vectors", "review/label"} <= misbehaved


def test_a_router_without_a_default_inside_a_subworkflow_is_found_and_shrunk(tmp_path):
    script, error = shrunk_failure(scripts(nested_flow(tmp_path, default=False)),
                                   lambda script: assert_invariants(script.run()))
    assert "defects: step 'review' failed with router_no_match" in error
    assert "subworkflow '<inline>' failed at step 'route'" in error
    assert total_replies(script) == 1  # one empty reply of the child's step, named by its path
    assert repr(script) in ("FuzzScript(replies={'review/label': ['']}, then={})",
                            "FuzzScript(replies={}, then={'review/label': ''})")  # as hypothesis versions shrink
