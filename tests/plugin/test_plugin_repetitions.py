"""The pieces of repetitions that need no live session: values, the plan's arithmetic, the log and its summary.

The live protocol itself is tested end to end in tests/replay/test_plugin_live.py (pytester, fake server).
"""

from __future__ import annotations

import pytest

from pytest_agentloom.engine._entry.run_workflow import run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers._scripted import Scripted
from pytest_agentloom.testing._live.repetitions import Plan, RepetitionLog, run_output
from pytest_agentloom.testing._settings.option_table import pass_rate, repeat_count

FLOW = parse_workflow("""
name: answer
steps:
  - id: answer
    type: llm_call
    model: gpt-4o-mini
    prompt: "Say something"
    output: answer
""")


@pytest.mark.parametrize(("value", "expected"), [("3", 3), (1, 1), (" 12 ", 12)])
def test_repeat_counts(value: object, expected: int) -> None:
    assert repeat_count(value, "--agentloom-repeat") == expected


@pytest.mark.parametrize("value", [0, "0", -1, "2.5", 2.5, "many", True, None, ""])
def test_bad_repeat_counts_name_the_source(value: object) -> None:
    with pytest.raises(ValueError, match=r"^ini agentloom_repeat must be a whole number of repetitions, at least 1"):
        repeat_count(value, "ini agentloom_repeat")


@pytest.mark.parametrize(("value", "expected"), [("0.8", 0.8), (1, 1.0), ("1.0", 1.0), (0.05, 0.05)])
def test_pass_rates(value: object, expected: float) -> None:
    assert pass_rate(value, "--agentloom-min-pass-rate") == expected


@pytest.mark.parametrize(("value", "hint"), [(0, ""), ("-0.5", ""), ("1.01", ""), (True, ""), ("nan", ""),
                                             ("90", " (for 90% write 0.9)"), (50, " (for 50% write 0.5)")])
def test_bad_pass_rates_name_the_source_and_read_a_percentage(value: object, hint: str) -> None:
    with pytest.raises(ValueError) as caught:
        pass_rate(value, "@pytest.mark.agentloom argument 'min_pass_rate'")
    first, fix = str(caught.value).splitlines()
    assert first == (f"@pytest.mark.agentloom argument 'min_pass_rate' must be a fraction of the repetitions, "
                     f"0 < rate <= 1 (got {value!r}){hint}.")
    assert fix.startswith("How to fix: e.g. --agentloom-min-pass-rate=0.8")


@pytest.mark.parametrize(("repeat", "rate", "needed"), [(10, 0.9, 9), (3, 0.6, 2), (3, 1 / 3, 1), (3, 1.0, 3),
                                                         (5, 0.01, 1), (1, 1.0, 1)])
def test_passes_needed_rounds_up(repeat: int, rate: float, needed: int) -> None:
    assert Plan(repeat, rate).passes_needed == needed


def run(answer: str) -> object:
    return run_workflow(FLOW, provider=Scripted({"answer": answer}))


def test_the_log_counts_runs_and_merges_what_workers_send() -> None:
    worker = RepetitionLog()
    worker.start("test_a.py::test_a", Plan(3, 0.5, "--agentloom-min-pass-rate"))
    observe = worker.observer("test_a.py::test_a")
    for answer, outcome in (("yes", "passed"), ("no", "failed"), ("yes", "passed")):
        observe(FLOW, run(answer), None, 0)
        worker.end_repetition("test_a.py::test_a", outcome, [])
    worker.observer("not started")(FLOW, run("ignored"), None, 0)  # a test that is not repeated: nothing kept

    controller = RepetitionLog()
    controller.merge(worker.to_wire())
    controller.merge(None)  # a worker that died sent nothing
    lines = controller.summary_lines()
    assert lines[:6] == [
        "agentloom live repetitions:",
        "  test_a.py::test_a: 2/3 passed (67%; needs 2, min pass rate 0.5): passed",
        "    repetitions: . F .",
        "    statistics: pass rate 0.67 (95% CI 0.21-0.94) · flaky",
        "    termination reasons: completed x3",
        "    outputs: 'yes' x2, 'no' x1",
    ]
    assert lines[6].startswith("    tokens: ") and lines[6].endswith("over 3 runs")


def test_many_long_outputs_are_shortened_and_the_rest_counted() -> None:
    log = RepetitionLog()
    log.start("t", Plan(7, 1.0))
    observe = log.observer("t")
    for number in range(7):
        observe(FLOW, run(f"answer {number} " + "word " * 30), None, 0)
        log.end_repetition("t", "failed", [])
    (outputs,) = [line for line in log.summary_lines() if line.startswith("    outputs: ")]
    assert outputs.endswith(", ... 2 more")
    assert outputs.count("...' x1") == 5  # each shortened to 60 characters
    assert "  t: 0/7 passed (0%; needs 7, min pass rate 1): FAILED" in log.summary_lines()


def test_a_run_output_is_its_last_successful_step_on_one_line() -> None:
    assert run_output(run("line one\n  line two")) == "line one line two"
    assert RepetitionLog().summary_lines() == []
