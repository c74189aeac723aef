"""The sandbox invariant: :func:`check_sandbox` asks the run's own sandbox about every built-in tool call."""

from __future__ import annotations

from pathlib import Path

from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom.strategies import check_sandbox


def unchecked_file_read(path: str) -> str:
    """The seeded bug: a ``file_read`` of the test's own that reads any path, sandbox or not."""
    return Path(path).read_text()[:40]


def test_a_tool_that_acts_before_asking_the_sandbox_is_reported(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nconfig: {model: gpt-4o-mini}\nsteps:\n"
                    "  - {id: read, type: llm_call, prompt: p, output: out, tools: [{name: file_read}]}\n")

    def file_read(path: str) -> str:
        raise FileNotFoundError(path)  # it went to the file first: the sandbox was never asked

    def run(arguments, tools=None):
        script = Scripted.from_data({"read": [{"tool_call": "file_read", "arguments": arguments}, "done"]})
        return run_workflow(flow, provider=script, tools=tools, clock=VirtualClock(), runs_dir=False)

    assert check_sandbox(run({"path": "/etc/passwd"})) == []  # the built-in refuses it
    assert check_sandbox(run({"path": "/etc/passwd"}, {"file_read": file_read})) == [
        "step 'read' called file_read {\"path\": \"/etc/passwd\"}, which failed with tool_error where the sandbox "
        "refuses it (rule 'readable_paths'): the tool acted before it asked the sandbox"]
    # arguments the built-in does not take fail before its sandbox check, whichever tool it is
    assert check_sandbox(run({"path": "/etc/passwd", "unexpected": 1}, {"file_read": file_read})) == []


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
