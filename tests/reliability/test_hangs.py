"""Inputs that used to hang a run or exhaust its memory: each now ends quickly with a named error.

No assertion here measures time: a test that hung before would now hang the suite (and fail under CI's timeout),
and each checks the error that says which limit was hit.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, run_workflow
from pytest_agentloom._core.clock import VirtualClock
from pytest_agentloom.engine._evaluate.expressions import EvaluationError, compile_expression
from pytest_agentloom.engine._evaluate.templates import check_template, render
from pytest_agentloom.engine._format.loader import MAX_LISTED_PROBLEMS, load_workflow, parse_workflow
from pytest_agentloom.engine._format.model import RetryPolicy
from pytest_agentloom.errors import TemplateError, ToolError, WorkflowError
from pytest_agentloom.tools import Sandbox, builtin_tools
from pytest_agentloom.tools._processes import run_command
from pytest_agentloom.tools._sandbox import SandboxConfig

PY = sys.executable


def tools(tmp_path: Path, **config: Any) -> dict[str, Any]:
    return {made.name: made for made in builtin_tools(Sandbox(SandboxConfig(**config), base_dir=tmp_path))}


def call(made: dict[str, Any], name: str, **arguments: Any) -> Any:
    return asyncio.run(made[name].invoke(arguments))


def command(argv: list[str], timeout: float = 5.0, **kwargs: Any) -> Any:
    return asyncio.run(run_command(argv, cwd=Path.cwd(), timeout=timeout, **kwargs))


def stopped(argv: list[str], timeout: float = 5.0, **kwargs: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        command(argv, timeout, **kwargs)
    return info.value


# -- shell_command ---------------------------------------------------------------------------------------------


def test_endless_output_is_stopped_at_the_byte_cap() -> None:
    error = stopped(["cat", "/dev/zero"])
    assert error.code == "output_limit"
    assert str(error).startswith("shell_command stopped: its stdout passed 1,000,000 bytes: cat /dev/zero")


def test_the_cap_counts_stderr_too() -> None:
    error = stopped([PY, "-c", "import sys; sys.stderr.write('e' * 5000)"], max_bytes=1000)
    assert error.code == "output_limit" and "its stderr passed 1,000 bytes" in str(error)


def test_output_under_the_cap_is_returned_whole_and_the_exit_code_kept() -> None:
    done = command([PY, "-c", "import sys; print('x' * 70000); sys.exit(3)"])
    assert done["exit_code"] == 3 and done["stdout"] == "x" * 70000 + "\n"


def test_a_command_past_its_timeout_is_stopped_after_filling_the_pipe() -> None:
    # more than a pipe's 64 KB, then wait: the old code waited on the killed child without draining
    script = "import time; print('x' * 100000, flush=True); time.sleep(60)"
    error = stopped([PY, "-c", script], timeout=1)
    assert error.code == "timeout" and "ran past its timeout of 1s" in str(error)


def test_a_child_that_keeps_the_pipe_open_is_stopped_with_its_command() -> None:
    error = stopped(["sh", "-c", "sleep 60 & echo started"], timeout=1)
    assert error.code == "timeout"


def test_the_timeout_of_a_shell_command_step_fails_the_step_with_its_code(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text(
        "name: shell\nconfig: {sandbox: {allowed_commands: [cat]}}\nsteps:\n"
        "  - {id: s, type: tool, tool_name: shell_command, tool_args: {command: cat /dev/zero}, output: o}\n")
    result = run_workflow(tmp_path / "flow.yaml", runs_dir=False)
    step = result.steps["s"]
    assert (result.status.value, step.error_code) == ("failed", "output_limit")


# -- file_read -------------------------------------------------------------------------------------------------


def test_file_read_reads_only_what_it_returns(tmp_path: Path) -> None:
    with (tmp_path / "huge.txt").open("wb") as handle:
        handle.truncate(1_500_000_000)  # sparse: 1.5 GB of NULs, nothing on disk
    text = call(tools(tmp_path, readable_paths=["."]), "file_read", path="huge.txt")
    assert len(text) == 100_000


def test_file_read_cuts_at_a_character_not_inside_one(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("é" * 300_000)
    assert call(tools(tmp_path, readable_paths=["."]), "file_read", path="wide.txt") == "é" * 100_000


@pytest.mark.parametrize(("make", "problem"), [
    (lambda path: os.mkfifo(path), "not a regular file"),
    (lambda path: path.mkdir(), "is a directory"),
])
def test_file_read_refuses_what_is_not_a_regular_file(tmp_path: Path, make: Any, problem: str) -> None:
    make(tmp_path / "thing")
    with pytest.raises(ToolError, match=problem):
        call(tools(tmp_path, readable_paths=["."]), "file_read", path="thing")


def test_file_read_refuses_a_device(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not a regular file"):
        call(tools(tmp_path, enabled=False), "file_read", path="/dev/zero")


@pytest.mark.parametrize(("name", "arguments"), [("file_read", {}), ("file_write", {"content": "x"})])
def test_a_nul_in_a_path_is_a_tool_error(tmp_path: Path, name: str, arguments: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="holds a NUL character"):
        call(tools(tmp_path, readable_paths=["."], writable_paths=["."]), name, path="a\0b", **arguments)


# -- the loader ------------------------------------------------------------------------------------------------


def test_a_subworkflow_that_is_a_device_is_refused_at_validate(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("name: p\nsteps:\n  - {id: c, type: subworkflow, workflow: /dev/zero}\n")
    with pytest.raises(WorkflowError) as info:
        load_workflow(tmp_path / "p.yaml")
    assert "Subworkflow '/dev/zero' cannot be loaded" in str(info.value)
    assert "not a regular file" in str(info.value)


def test_a_subworkflow_path_with_a_nul_is_a_problem_of_its_step(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="Subworkflow path 'a\\\\x00b' cannot be used"):
        parse_workflow('name: p\nsteps:\n  - {id: c, type: subworkflow, workflow: "a\\0b"}\n',
                       source=tmp_path / "p.yaml")


def chain(count: int, *, cycle: bool) -> str:
    steps = "".join(f"  - {{id: s{i}, type: tool, tool_name: t, depends_on: [s{(i + 1) % count}]}}\n"
                    for i in range(count - (0 if cycle else 1)))
    if not cycle:
        steps += f"  - {{id: s{count - 1}, type: tool, tool_name: t}}\n"
    return "name: c\nsteps:\n" + steps


def test_a_1000_step_dependency_cycle_is_reported_not_a_recursion_error() -> None:
    with pytest.raises(WorkflowError) as info:
        parse_workflow(chain(1000, cycle=True))
    assert str(info.value).startswith("Dependency cycle: s0 -> s999 -> s998")


def test_a_chain_of_2000_steps_loads() -> None:
    assert len(parse_workflow(chain(2000, cycle=False)).steps) == 2000


def test_problem_lists_are_bounded_and_each_step_named_once() -> None:
    text = "name: l\nstate: {conv: []}\nsteps:\n" + "".join(
        f"  - {{id: s{i}, type: llm_call, model: m, prompt: hi, conversation: conv, output: o{i}}}\n"
        for i in range(300))
    with pytest.raises(WorkflowError) as info:
        parse_workflow(text)
    message = str(info.value)
    assert message.startswith("299 problems in workflow <string>:")  # one per step, not one per pair (44,850)
    assert f"... and {299 - MAX_LISTED_PROBLEMS} more" in message
    assert len(info.value.problems) == 299


def test_the_same_problem_is_listed_once() -> None:
    text = ("name: d\nsteps:\n  - {id: a, type: tool, tool_name: t, depends_on: [zz]}\n"
            "  - {id: a, type: tool, tool_name: t, depends_on: [zz]}\n")
    with pytest.raises(WorkflowError) as info:
        parse_workflow(text)
    lines = [line for line in str(info.value).splitlines() if "depends on unknown step 'zz'" in line]
    assert len(lines) == 1


def test_an_enormous_backoff_multiplier_waits_the_cap() -> None:
    policy = RetryPolicy(backoff_seconds=1, backoff_multiplier=1e300, max_backoff_seconds=30)
    assert [policy.delay(n) for n in (1, 2, 3)] == [1, 30, 30]
    with pytest.raises(ValueError, match="finite number"):
        RetryPolicy(backoff_multiplier=float("inf"))


def test_a_run_with_that_backoff_retries_on_the_virtual_clock(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(
        "name: b\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: hi, output: o, retry: "
        "{max_retries: 3, backoff_multiplier: 1e300, backoff_seconds: 1}}\n")
    provider = Scripted.from_data({"s": [{"error": 500}, {"error": 500}, {"error": 500}, "ok"]})
    result = run_workflow(tmp_path / "b.yaml", provider=provider, clock=VirtualClock(), runs_dir=False)
    assert (result.status.value, result.steps["s"].attempts) == ("success", 4)


# -- templates and expressions ---------------------------------------------------------------------------------


def test_a_huge_format_width_is_refused_when_the_workflow_loads() -> None:
    with pytest.raises(TemplateError, match="asks for a width or precision over 10,000"):
        check_template("{state.x:>999999999}")
    with pytest.raises(WorkflowError, match="width or precision over 10,000"):
        parse_workflow('name: t\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: "{state.x:.99999f}"}\n')
    assert render("{state.x:>12}", {"x": "a"}) == " " * 11 + "a"


def test_a_value_too_big_to_show_is_refused_before_it_is_built() -> None:
    shared = [[1] * 100_000] * 100_000  # 10 GB as text, 800 KB in memory
    with pytest.raises(TemplateError, match="would be longer than 10,000,000 characters as text"):
        render("{state.x}", {"x": shared})


def test_the_rendered_text_is_bounded() -> None:
    with pytest.raises(TemplateError, match="rendered text would be longer than 10,000,000"):
        render("{state.x}{state.x}", {"x": "a" * 6_000_000})


@pytest.mark.parametrize(("expression", "problem"), [
    ("('a'*100000).replace('a','a'*100000) == 'b'", ".replace() would build a string longer than 100000"),
    ("('a'*1000).replace('', 'b'*200) == 'c'", ".replace() would build"),
    ("len(str([[1]*100000]*100000)) > 1", "str() would build a string longer than 100000"),
    ("int('9' * 5000) > 1", "4300 digits"),
])
def test_expressions_that_would_build_enormous_values_fail_with_an_evaluation_error(expression: str,
                                                                                     problem: str) -> None:
    with pytest.raises(EvaluationError) as info:
        compile_expression(expression).evaluate({})
    assert problem in str(info.value) and info.value.code == "expression_error"


def test_replace_and_str_still_work_on_ordinary_values() -> None:
    assert compile_expression("'a-b'.replace('-', '+')").evaluate({}) == "a+b"
    assert compile_expression("'abc'.replace('b', 'x', 0)").evaluate({}) == "abc"
    assert compile_expression("str(x)").evaluate({"x": [1, {"a": None}]}) == "[1, {'a': None}]"


# -- --state on the command line -------------------------------------------------------------------------------


def test_a_deeply_nested_state_value_is_a_usage_error(tmp_path: Path, cli) -> None:
    (tmp_path / "flow.yaml").write_text("name: f\nsteps: []\n")
    done = cli("run", "flow.yaml", "--no-record", "--state", "x=" + "[" * 20000 + "]" * 20000)
    assert done.returncode == 2, done.stderr
    assert "--state: the JSON value is nested too deeply" in done.stderr and "Traceback" not in done.stderr
