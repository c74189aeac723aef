"""Workflow coverage: --agentloom-cov, --agentloom-cov-fail-under, --agentloom-cov-report=json:PATH, their ini keys.

One pytester folder holds every source of runs the map must count: the ``agentloom``
fixture in a Python test, rows of a scenario table marked on a test, and a YAML-only
table; one workflow pauses at an approval gate and runs a subworkflow child with a
router; one test's gateway falls back to a second provider.
"""

from __future__ import annotations

import json

import pytest

FAST = ("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio", "-p", "no:randomly")

CHILD = """\
name: child
state: {kind: ""}
steps:
  - id: pick
    type: router
    conditions:
      - expression: "kind == 'a'"
        target: do_a
    default: do_b
  - {id: do_a, type: tool, tool_name: echo, tool_args: {text: a}, output: a}
  - {id: do_b, type: tool, tool_name: echo, tool_args: {text: b}, output: b}
"""

GATED = """\
name: gated
state: {kind: a}
steps:
  - {id: gate, type: approval_gate, message: "go?", output: decision}
  - id: sub
    type: subworkflow
    depends_on: [gate]
    workflow: child.yaml
    input: {kind: "{state.kind}"}
"""

CONFTEST = """\
import pytest

@pytest.fixture
def agentloom_tools():
    return {"file_bug": lambda title: "BUG-" + str(len(title)), "echo": lambda text: text}
"""

TESTS = """\
import pytest
from pytest_agentloom import ProviderError, Scripted
from pytest_agentloom.providers import Gateway


class Down:
    name = "down"

    async def complete(self, request):
        raise ProviderError("service unavailable", status=503)


def test_bug(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "crash"}, provider=agentloom.scripted(classify="bug"))
    assert result.ok


def test_fallback(agentloom):
    backup = Scripted({"classify": "bug"})
    gateway = Gateway(providers={"down": Down(), "backup": backup}, routes=[("*", ["down", "backup"])])
    assert agentloom.run("flow.yaml", state={"ticket": "x"}, provider=gateway).ok


@pytest.mark.agentloom_scenarios("rows.yaml")
def test_rows(agentloom, scenario):
    scenario.check(scenario.run(agentloom), agentloom)
"""

ROWS = """\
- {id: approved, workflow: gated.yaml, resume: {decision: approved}, expect: {status: success}}
"""

YAML_ONLY = """\
- {id: rejected-b, workflow: gated.yaml, state: {kind: b}, resume: {decision: rejected}}
"""


@pytest.fixture
def suite(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makefile(".yaml", child=CHILD, gated=GATED, rows=ROWS)
    triage.makeconftest(CONFTEST)
    triage.makepyfile(test_flows=TESTS)
    (triage.path / "test_more.agentloom.yaml").write_text(YAML_ONLY)
    return triage


def _map(pytester: pytest.Pytester, *args: str) -> dict:
    result = pytester.runpytest(*FAST, "--agentloom-cov-report=json:cov.json", *args)
    result.assert_outcomes(passed=4)
    return json.loads((pytester.path / "cov.json").read_text())


def test_the_map_counts_every_kind_of_run_and_names_what_was_never_reached(suite: pytest.Pytester) -> None:
    document = _map(suite)
    by_file = {entry["file"]: entry for entry in document["workflows"]}
    assert sorted(by_file) == ["flow.yaml", "gated.yaml"]

    flow = by_file["flow.yaml"]
    assert flow["runs"] == 2
    assert flow["branches"]["route"] == {"[0] category == 'bug'": 2, "default": 0}
    assert flow["steps"]["reply"] == {"type": "llm_call", "ran": 0, "failed": 0, "skipped": 2}
    assert flow["fallbacks"] == {"classify": {"down": 1}}
    assert flow["summary"]["never_reached"] == ["step reply", "branch route -> default"]
    assert flow["summary"]["branches"] == {"reached": 1, "total": 2, "percent": 50.0}
    assert "classify fell back from down" in flow["summary"]["reasons_reached"]

    gated = by_file["gated.yaml"]  # a row of a marked table and a YAML-only row, each paused then resumed
    assert gated["runs"] == 4
    assert gated["terminations"]["awaiting_approval"] == 2 and gated["terminations"]["completed"] == 2
    assert gated["approvals"]["gate"] == {"approved": 1, "rejected": 1}
    assert gated["branches"]["sub/pick"] == {"[0] kind == 'a'": 1, "default": 1}  # the child's router
    assert gated["steps"]["sub/do_a"]["ran"] == 1 and gated["steps"]["sub/do_b"]["ran"] == 1
    assert gated["summary"]["never_reached"] == []
    assert document["totals"]["branches"] == {"reached": 5, "total": 6, "percent": 83.3}


@pytest.mark.slow
def test_cov_prints_a_table_in_the_terminal_summary(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*FAST, "--agentloom-cov")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([
        "agentloom workflow coverage:",
        "  workflow*runs*steps*branches*reasons reached",
        "  flow.yaml*2*3/4 75%*1/2 50%*",
        "  gated.yaml*4*5/5 100%*4/4 100%*",
        "  TOTAL*6*8/9 88.9%*5/6 83.3%",
        "  flow.yaml:",
        "*never reached: step reply, branch route -> default",
    ])
    assert result.ret == pytest.ExitCode.OK


def test_without_the_options_nothing_is_collected_or_printed(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*FAST)
    result.assert_outcomes(passed=4)
    assert "coverage" not in result.stdout.str()


def test_fail_under_fails_the_session_below_the_bar_and_passes_at_it(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*FAST, "--agentloom-cov-fail-under=90")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["agentloom workflow coverage:", "*FAIL branch coverage 83.3% is below "
                                 "--agentloom-cov-fail-under=90"])
    assert suite.runpytest(*FAST, "--agentloom-cov-fail-under=80").ret == pytest.ExitCode.OK


def test_fail_under_with_no_workflow_run_fails_closed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest(*FAST, "--agentloom-cov-fail-under=10")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL branch coverage 0% is below --agentloom-cov-fail-under=10"])


def test_ini_keys_turn_on_the_table_the_bar_and_the_json(suite: pytest.Pytester) -> None:
    suite.makeini("[pytest]\nagentloom_cov = true\nagentloom_cov_fail_under = 95\n"
                  "agentloom_cov_report = json:out/map.json\n")
    result = suite.runpytest(*FAST)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["agentloom workflow coverage:", "*below --agentloom-cov-fail-under=95",
                                 "agentloom: wrote *out/map.json"])
    assert json.loads((suite.path / "out" / "map.json").read_text())["format"] == "agentloom-coverage/1"
    assert suite.runpytest(*FAST, "--agentloom-cov-fail-under=50").ret == pytest.ExitCode.OK  # the flag wins


@pytest.mark.parametrize(("option", "message"), [
    ("--agentloom-cov-fail-under=lots", "*--agentloom-cov-fail-under (ini agentloom_cov_fail_under) must be a "
                                        "percentage from 0 to 100, got 'lots'*"),
    ("--agentloom-cov-fail-under=120", "*must be a percentage from 0 to 100, got '120'*"),
    ("--agentloom-cov-report=xml:cov.xml", "*--agentloom-cov-report (ini agentloom_cov_report) takes json:PATH, "
                                           "got 'xml:cov.xml'*"),
    ("--agentloom-report=report.txt", "*--agentloom-report (ini agentloom_report) writes PATH.html or PATH.md*"),
])
def test_a_bad_value_is_a_usage_error_naming_the_option(pytester: pytest.Pytester, option: str,
                                                        message: str) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest(*FAST, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.xdist
def test_two_xdist_workers_give_the_same_map_as_one_process(suite: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    serial = _map(suite)
    result = suite.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-cov-report=json:cov.json")
    result.assert_outcomes(passed=4)
    assert json.loads((suite.path / "cov.json").read_text()) == serial


def test_an_agent_steps_stop_reasons_and_call_decisions_are_counted(pytester: pytest.Pytester) -> None:
    """The agent example's YAML-only table reaches all nine stop reasons: the map names each one."""
    import shutil
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "agent_triage"
    for name in ("conftest.py", "triage.yaml", "triage_desk.py", "test_agent_triage.agentloom.yaml"):
        shutil.copy(example / name, pytester.path / name)
    result = pytester.runpytest(*FAST, "--agentloom-cov-report=json:cov.json")
    assert result.ret == pytest.ExitCode.OK
    (entry,) = json.loads((pytester.path / "cov.json").read_text())["workflows"]
    reached = {reason for reason, count in entry["agents"]["triage"].items() if count}
    assert reached == {"done", "step_budget", "time_budget", "cost_budget", "repeated_call", "stuck",
                       "needs_approval", "denied", "cancelled"}
    assert entry["summary"]["agent_stops_never_reached"] == []
    assert set(entry["approvals"]["triage"]) == {"call approved", "call rejected", "call cancelled"}
    assert entry["terminations"]["awaiting_approval"] > 0 and entry["terminations"]["cancelled"] > 0


@pytest.mark.parametrize("option", ["--agentloom-cov-report=json:notes.md", "--agentloom-report=notes.md"])
def test_a_file_the_option_did_not_write_is_never_replaced(pytester: pytest.Pytester, option: str) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    notes = pytester.path / "notes.md"
    notes.write_text("# my notes\n")
    result = pytester.runpytest(*FAST, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*notes.md exists and is not a report this option wrote; it is left as it is.",
                                 "How to fix: give --agentloom-*report another path, or move that file away."])
    assert notes.read_text() == "# my notes\n"
    notes.unlink()
    assert pytester.runpytest(*FAST, option).ret == pytest.ExitCode.OK  # written, then replaced on the next run
    assert pytester.runpytest(*FAST, option).ret == pytest.ExitCode.OK and "# my notes" not in notes.read_text()


AGENT_ONLY = """\
name: helper
config: {model: gpt-4o-mini}
agents:
  helper: {instructions: "Answer.", tools: []}
steps:
  - {id: ask, type: agent, agent: helper, prompt: "Answer 7.", output: answer}
"""


def test_every_step_reached_is_said_so_and_the_agent_stops_never_reached_follow(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", helper=AGENT_ONLY)
    pytester.makepyfile(test_helper="""
        def test_helper(agentloom):
            assert agentloom.run("helper.yaml", provider=agentloom.scripted(ask="7")).status == "success"
    """)
    result = pytester.runpytest(*FAST, "--agentloom-cov", "--agentloom-report=review.md")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  helper.yaml:", "    reached: run completed, ask done",
                                 "    never reached: no step, branch or gate decision",
                                 "    agent stops never reached: ask step_budget, *"])
    assert "nothing" not in result.stdout.str()
    page = (pytester.path / "review.md").read_text()
    assert "- never reached: no step, branch or gate decision\n- agent stops never reached: ask step_budget, " in page
