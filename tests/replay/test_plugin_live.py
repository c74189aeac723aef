"""``--agentloom-live`` and ``--agentloom-repeat`` through pytester, against the fake LLM server on 127.0.0.1.

The server answers from a queue, so successive calls (and so successive repetitions) get different
answers: that is the variation a live model shows.
"""

from __future__ import annotations

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

GOOD = (text("bug", input_tokens=10, output_tokens=1), text("We are on it.", input_tokens=20, output_tokens=4))
BAD = (text("bug", input_tokens=10, output_tokens=1), text("Nope.", input_tokens=20, output_tokens=2))

SNAPSHOT_TEST = """
import os

def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.state["answer"] == "We are on it."
    agentloom.assert_snapshot(result)
"""


def files_of(project: Project) -> dict[str, bytes]:
    return {str(path.relative_to(project.path)): path.read_bytes() for path in project.files()
            if "__pycache__" not in path.parts and ".agentloom" not in path.parts}  # the engine's redaction salt


def test_live_calls_the_provider_and_writes_or_reads_no_cassette_or_snapshot(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=SNAPSHOT_TEST)
    cassette = project.cassette()
    cassette.parent.mkdir(parents=True)
    cassette.write_text("not a cassette: a live run must never read it\n")
    golden = project.path / "__agentloom_snapshots__" / "test_support" / "test_support.yaml"
    golden.parent.mkdir(parents=True)
    golden.write_text("status: something else entirely\n")
    before = files_of(project)
    project.server.plan("openai", *GOOD)

    result = project.run("--agentloom-live")

    result.assert_outcomes(passed=1)
    assert len(project.server.requests) == 2  # both calls reached the provider
    assert project.server.requests[0].headers["authorization"].startswith("Bearer sk-canary")  # the real key
    assert files_of(project) == before  # nothing written, changed or deleted
    assert "cassette recorded" not in result.stdout.str()
    result.stdout.fnmatch_lines([
        "agentloom live repetitions:",
        "  test_support.py::test_support: 1/1 passed (100%; needs 1, min pass rate 1): passed",
    ])


def test_repetitions_pass_on_the_pass_rate_and_the_summary_counts_what_they_did(project: Project) -> None:
    project.live()
    project.server.plan("openai", *GOOD, *BAD, *GOOD)
    passed = project.run("--agentloom-live", "--agentloom-repeat=3", "--agentloom-min-pass-rate=0.6", "--agentloom-cov")
    passed.assert_outcomes(passed=1)
    assert len(project.server.requests) == 6
    passed.stdout.fnmatch_lines(["agentloom workflow coverage:", "*flow.yaml  3 *"])  # both observers saw each run
    passed.stdout.fnmatch_lines([
        "agentloom live repetitions:",
        "  test_support.py::test_support: 2/3 passed (67%; needs 2, min pass rate 0.6): passed",
        "    repetitions: . F .",
        "    termination reasons: completed x3",
        "    outputs: 'We are on it.' x2, 'Nope.' x1",
        "    tokens: 103 (in 90, out 13), cost $0.000021, over 3 runs",
    ])

    project.server.reset()
    project.server.plan("openai", *GOOD, *BAD, *GOOD)
    failed = project.run("--agentloom-live", "--agentloom-repeat=3")  # default rate 1.0: every one must pass
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "agentloom: 2 of 3 repetitions of test_support.py::test_support passed (67%); the minimum pass rate 1 "
        "(default) needs 3.",
        "  repetitions: 1:passed 2:failed 3:passed",
        "--- repetition 2 (call failed) ---",
        "*AssertionError: assert 'Nope.' == 'We are on it.'*",
        "How to fix: make the workflow or its prompts more reliable, or lower the bar on purpose: *",
    ])
    failed.stdout.fnmatch_lines(["  test_support.py::test_support: 2/3 passed (67%; needs 3, min pass rate 1): FAILED"])


FIXTURES_TEST = """
import os
import pytest

calls = {"module": 0, "function": 0}

@pytest.fixture(scope="module")
def shared():
    calls["module"] += 1
    return calls

@pytest.fixture
def fresh():
    calls["function"] += 1
    return []

def test_support(agentloom, shared, fresh):
    assert agentloom.results == [] and fresh == []  # a new harness and new function fixtures each time
    fresh.append(1)
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.ok

def test_plain_after():
    assert calls == {"module": 1, "function": 3}
"""


def test_each_repetition_gets_fresh_function_fixtures_and_keeps_wider_ones(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=FIXTURES_TEST)
    result = project.run("--agentloom-live", "--agentloom-repeat=3", "-v")
    result.assert_outcomes(passed=2)  # one report per test, however many repetitions
    result.stdout.fnmatch_lines(["test_support.py::test_support PASSED*", "test_support.py::test_plain_after PASSED*"])
    assert len(project.server.requests) == 6
    assert "test_support.py::test_plain_after:" not in result.stdout.str()  # not an agentloom test: run once


MARKED_TEST = """
import os
import pytest

@pytest.mark.agentloom(repeat=2, min_pass_rate=0.5)
def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.state["answer"] == "We are on it."
"""


def test_the_marker_and_the_ini_key_set_repetitions_and_the_command_line_wins(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=MARKED_TEST)
    project.server.plan("openai", *BAD, *GOOD)
    project.run("--agentloom-live").assert_outcomes(passed=1)  # 1 of 2 passed: rate 0.5 from the marker
    assert len(project.server.requests) == 4

    project.server.reset()
    project.pytester.makeini("[pytest]\nagentloom_repeat = 3\nagentloom_min_pass_rate = 1\n")
    project.run("--agentloom-live").assert_outcomes(failed=1)  # the marker beats the ini: 2 runs, rate 0.5
    assert len(project.server.requests) == 4
    project.server.reset()
    result = project.run("--agentloom-live", "--agentloom-repeat=1", "--agentloom-min-pass-rate=1")
    result.assert_outcomes(failed=1)  # the command line beats the marker: 1 run, which fails (echo)
    assert len(project.server.requests) == 2
    result.stdout.fnmatch_lines(["*the minimum pass rate 1 (--agentloom-min-pass-rate) needs 1."])

    project.server.reset()
    project.pytester.makepyfile(test_support=MARKED_TEST.replace("@pytest.mark.agentloom(repeat=2, min_pass_rate=0.5)",
                                                                 ""))
    project.run("--agentloom-live").assert_outcomes(failed=1)  # the ini alone: 3 runs of echo answers
    assert len(project.server.requests) == 6


def test_without_live_the_marker_is_ignored_and_the_test_replays_once(project: Project) -> None:
    project.live()
    project.server.plan("openai", *GOOD)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    project.pytester.makepyfile(test_support=MARKED_TEST)
    result = project.run()
    result.assert_outcomes(passed=1)
    assert "repetitions" not in result.stdout.str()


@pytest.mark.parametrize(("args", "ini", "expected"), [
    (["--agentloom-live", "--agentloom-repeat=0"], "",
     "ERROR: --agentloom-repeat must be a whole number of repetitions, at least 1 (got '0')."),
    (["--agentloom-live", "--agentloom-repeat=two"], "",
     "ERROR: --agentloom-repeat must be a whole number of repetitions, at least 1 (got 'two')."),
    (["--agentloom-live", "--agentloom-min-pass-rate=80"], "",
     "ERROR: --agentloom-min-pass-rate must be a fraction of the repetitions, 0 < rate <= 1 (got '80') "
     "(for 80% write 0.8)."),
    (["--agentloom-live", "--agentloom-min-pass-rate=0"], "",
     "ERROR: --agentloom-min-pass-rate must be a fraction of the repetitions, 0 < rate <= 1 (got '0')."),
    (["--agentloom-live"], "agentloom_min_pass_rate = 1.5",
     "ERROR: ini agentloom_min_pass_rate must be a fraction of the repetitions, 0 < rate <= 1 (got '1.5')."),
    (["--agentloom-live"], "agentloom_repeat = -2",
     "ERROR: ini agentloom_repeat must be a whole number of repetitions, at least 1 (got '-2')."),
    (["--agentloom-repeat=3"], "",
     "ERROR: --agentloom-repeat needs --agentloom-live: without it the tests replay their cassettes, *"),
    (["--agentloom-min-pass-rate=0.5"], "", "ERROR: --agentloom-min-pass-rate needs --agentloom-live*"),
    (["--agentloom-record-repetitions"], "", "ERROR: --agentloom-record-repetitions needs --agentloom-live*"),
    (["--agentloom-live", "--agentloom-record"], "",
     "ERROR: --agentloom-live cannot be combined with --agentloom-record/--agentloom-record-mode."),
    (["--agentloom-live", "--agentloom-update-snapshots"], "",
     "ERROR: --agentloom-live cannot be combined with --agentloom-update-snapshots/--agentloom-create-snapshots."),
    (["--agentloom-live", "--agentloom-replay-repetition=1"], "",
     "ERROR: --agentloom-live cannot be combined with --agentloom-replay-repetition(s)."),
    (["--agentloom-replay-repetition=0"], "",
     "ERROR: --agentloom-replay-repetition must be a whole number of repetitions, at least 1 (got '0')."),
])
def test_bad_values_and_combinations_are_usage_errors_naming_the_flag(
        project: Project, args: list[str], ini: str, expected: str) -> None:
    project.pytester.makeini(f"[pytest]\n{ini}\n")
    result = project.run(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected, "How to fix: *"])
    assert "Traceback" not in result.stderr.str()
    assert project.server.requests == []


def test_a_bad_marker_value_fails_the_test_naming_the_marker(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=MARKED_TEST.replace("repeat=2", "repeat=0"))
    result = project.run("--agentloom-live")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.agentloom argument 'repeat' must be a whole number of repetitions, at least 1 (got 0).",
        "How to fix: *",
        "  on: test_support.py::test_support",
    ])
    assert project.server.requests == []


def test_live_is_refused_under_ci_unless_typed_on_the_command_line(project: Project) -> None:
    project.live()
    refused = project.refused_under_ci("--agentloom-live")
    refused.stderr.fnmatch_lines([
        "ERROR: Live provider calls (--agentloom-live) are refused under CI=true: the flag does not come from the "
        "command line itself (addopts or PYTEST_ADDOPTS set it).",
        "How to fix: remove --agentloom-live from addopts/PYTEST_ADDOPTS so CI replays, *",
    ])
    project.pytester.makeini("[pytest]\naddopts = --agentloom-live\n")
    assert project.run().ret == pytest.ExitCode.USAGE_ERROR
    assert project.server.requests == []

    project.pytester.makeini("[pytest]\n")
    project.server.plan("openai", *GOOD)
    project.run("--agentloom-live").assert_outcomes(passed=1)  # typed: asked for explicitly
    assert len(project.server.requests) == 2


def test_a_skipped_test_is_reported_once_and_not_repeated(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support="""
        import pytest

        def test_support(agentloom):
            pytest.skip("not today")
    """)
    result = project.run("--agentloom-live", "--agentloom-repeat=4")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*test_support: 0/4 passed (0%; needs 4, min pass rate 1): skipped",
                                 "    repetitions: s s s s"])


def test_yaml_only_rows_are_repeated_too(project: Project) -> None:
    project.live()
    (project.path / "test_rows.agentloom.yaml").write_text(
        "- id: printer\n  workflow: flow.yaml\n  state: {ticket: Printer on fire}\n"
        "  expect: {status: success, outputs: {reply: We are on it.}}\n")
    project.pytester.makepyfile(test_support="")
    project.server.plan("openai", *GOOD, *GOOD)
    result = project.run("--agentloom-live", "--agentloom-repeat=2")
    result.assert_outcomes(passed=1)
    assert len(project.server.requests) == 4
    result.stdout.fnmatch_lines(["  test_rows.agentloom.yaml::printer: 2/2 passed (100%; needs 2, min pass rate 1): "
                                 "passed"])


XDIST_TEST = """
import os
import pytest

@pytest.mark.parametrize("ticket", ["one", "two"])
def test_support(agentloom, ticket):
    result = agentloom.run("flow.yaml", state={"ticket": ticket, "api_token": os.environ["CANARY_SECRET"]})
    assert result.state["answer"].endswith(ticket)  # the server echoes the last message
"""


@pytest.mark.xdist
def test_repetitions_under_xdist_are_summarised_by_the_controller(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=XDIST_TEST)
    result = project.pytester.runpytest_subprocess("-n", "2", "-p", "no:benchmark", "--agentloom-live",
                                                   "--agentloom-repeat=3")
    result.assert_outcomes(passed=2)
    assert len(project.server.requests) == 12
    result.stdout.fnmatch_lines([
        "agentloom live repetitions:",
        "  test_support.py::test_support[[]one[]]: 3/3 passed (100%; needs 3, min pass rate 1): passed",
        "    repetitions: . . .",
        "    termination reasons: completed x3",
        "    outputs: 'echo: Reply to a echo: Classify (auth <REDACTED:sha256=*...' x3",
        "  test_support.py::test_support[[]two[]]: 3/3 passed (100%; needs 3, min pass rate 1): passed",
    ])
    assert not list(project.path.rglob("*.yaml.tmp")) and not (project.path / "cassettes").exists()


EARLY_TEST = """
import os
import pytest

seen = []

@pytest.fixture(scope="module")
def shared():
    seen.append("up")
    yield
    seen.append("down")

def test_support(agentloom, shared):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.state["answer"] == "We are on it."
"""
OTHER_MODULE = """
from test_support import seen

def test_after():
    assert seen == ["up", "down"]  # the module fixture was torn down once, when the repetitions stopped
"""


def test_early_stop_ends_the_repetitions_once_the_verdict_is_decided(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=EARLY_TEST, test_zother=OTHER_MODULE)
    project.server.plan("openai", *GOOD, *GOOD, *GOOD, *GOOD)  # needs 4 of 5: decided after 4 passes
    passed = project.run("--agentloom-live", "--agentloom-repeat=5", "--agentloom-min-pass-rate=0.8",
                         "--agentloom-repeat-early-stop", "-p", "no:randomly")
    passed.assert_outcomes(passed=2)
    assert len(project.server.requests) == 8  # 4 repetitions of 2 calls; the fifth never ran
    passed.stdout.fnmatch_lines([
        "  test_support.py::test_support: 4/5 passed (100%; needs 4, min pass rate 0.8): passed (stopped early "
        "after 4 of 5: 4 passes reach the 4 needed)",
        "    repetitions: . . . .",
        "    statistics: pass rate 1.00 (95% CI 0.51-1.00) · pass@3 1.00 · pass^3 1.00 · stable pass",
    ])

    project.server.reset()
    project.server.plan("openai", *BAD, *BAD)  # needs 4 of 5: two failures leave 3, too few
    failed = project.run("--agentloom-live", "--agentloom-repeat=5", "--agentloom-min-pass-rate=0.8",
                         "--agentloom-repeat-early-stop", "-p", "no:randomly")
    failed.assert_outcomes(passed=1, failed=1)
    assert len(project.server.requests) == 4
    failed.stdout.fnmatch_lines([
        "agentloom: 0 of 2 repetitions of test_support.py::test_support passed (0%); the minimum pass rate 0.8 "
        "(--agentloom-min-pass-rate) needs 4 of 5 (stopped early: the other 3 could not reach it).",
    ])
    failed.stdout.fnmatch_lines(["*FAILED (stopped early after 2 of 5: 0 passes and 3 left cannot reach the 4 needed)",
                                 "    statistics: pass rate 0.00 (95% CI 0.00-0.66) · stable fail"])


def test_early_stop_needs_live(project: Project) -> None:
    result = project.run("--agentloom-repeat-early-stop")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--agentloom-repeat-early-stop needs --agentloom-live*"])


@pytest.mark.parametrize("name", ["report.md", "report.html"])
def test_the_review_report_lists_each_repeated_test_with_its_statistics(project: Project, name: str) -> None:
    project.live()
    project.server.plan("openai", *GOOD, *BAD, *GOOD)
    result = project.run("--agentloom-live", "--agentloom-repeat=3", "--agentloom-min-pass-rate=0.6",
                         f"--agentloom-report={name}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["    statistics: pass rate 0.67 (95% CI 0.21-0.94) · flaky"])
    report = (project.path / name).read_text()
    if name.endswith(".md"):
        assert ("| `test_support.py::test_support` | 2/3 | passed | flaky | pass rate 0.67 (95% CI 0.21-0.94) · "
                "flaky |") in report
    else:
        assert ("<tr class=\"flaky\"><td><code>test_support.py::test_support</code></td><td>2/3</td><td>passed</td>"
                "<td>flaky</td><td>pass rate 0.67 (95% CI 0.21-0.94) · flaky</td></tr>") in report
