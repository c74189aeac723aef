"""The keyword options of runs and resumes: one list, checked the same way for sync and async, run and resume."""

from __future__ import annotations

import asyncio

import pytest

from pytest_agentloom import Scripted, UsageError, VirtualClock, arun_workflow, resume_workflow, run_workflow
from pytest_agentloom.engine._entry.options import ResumeOptions, RunOptions
from pytest_agentloom.engine._format.loader import parse_workflow

FLOW = parse_workflow("name: t\nconfig: {model: m}\nsteps:\n  - {id: a, type: llm_call, prompt: hi, output: x}\n")


def test_an_unknown_keyword_is_refused_with_the_closest_one() -> None:
    with pytest.raises(UsageError, match=r"run_workflow\(\) got an unexpected keyword argument 'stat'.*"
                                         r"did you mean 'state'\?"):
        run_workflow(FLOW, stat={"x": 1}, provider=Scripted({"a": "y"}))  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"arun_workflow.*'clok'.*did you mean 'clock'"):
        asyncio.run(arun_workflow(FLOW, clok=VirtualClock()))  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"resume_workflow.*'decison'.*did you mean 'decision'"):
        resume_workflow("run-x", decison="approved")  # type: ignore[call-arg]


def test_a_keyword_nothing_is_close_to_lists_them_all() -> None:
    with pytest.raises(UsageError, match="It takes: state, provider, tools, clock, run_id"):
        run_workflow(FLOW, zzz=1)  # type: ignore[call-arg]


def test_resume_takes_a_runs_options_and_its_own() -> None:
    assert set(RunOptions.__annotations__) < set(ResumeOptions.__annotations__)
    assert set(ResumeOptions.__annotations__) - set(RunOptions.__annotations__) == {"decision", "workflow"}


def test_the_sync_form_works_inside_a_running_event_loop() -> None:
    async def inside() -> str:
        result = run_workflow(FLOW, provider=Scripted({"a": "y"}), clock=VirtualClock(), runs_dir=False)
        return str(result.state["x"])

    assert asyncio.run(inside()) == "y"
