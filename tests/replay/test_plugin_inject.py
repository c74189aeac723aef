"""Fault injection (docs/resilience.md) over real cassettes, recorded once against the local fake server.

Each test records its flow (or reuses the recording this module already made of it), goes offline, and
runs an inner test that injects one fault with ``--agentloom-inject``; the inner test asserts what the
engine did around the fault, from the run's result and trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

FAULT_FLOW = """\
name: faults
config: {model: gpt-4o-mini}
steps:
  - id: classify
    type: llm_call
    prompt: "Classify: {state.ticket}"
    output: category
  - id: triage
    type: llm_call
    depends_on: [classify]
    prompt: "Triage this {state.category} ticket: {state.ticket}"
    response_schema:
      type: json_schema
      name: Triage
      schema: {type: object, properties: {priority: {type: string}}, required: [priority]}
    retry: {max_retries: 0}
    output: triage
  - id: draft
    type: llm_call
    depends_on: [triage]
    stream: true
    prompt: "Draft a reply to: {state.ticket}"
    output: answer
"""

CLAUDE_FLOW = """\
name: claude
config: {model: claude-3-5-haiku-latest, retry: {retryable_status_codes: [429, 500, 503, 529]}}
steps:
  - id: classify
    type: llm_call
    prompt: "Classify: {state.ticket}"
    output: category
"""

RECORD_TEST = """\
def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire"})
    assert result.status == "success", result.steps
"""

_RECORDINGS: dict[str, str] = {}  # flow -> its cassette, recorded once per session of this module


def replayed(project: Project, flow: str, *replies: object, route: str = "openai") -> None:
    """``flow`` recorded (once) with ``replies`` from the fake server, then the project offline with ``flow``."""
    project.pytester.makefile(".yaml", flow=flow)
    cassette = project.cassette()
    if flow not in _RECORDINGS:
        project.pytester.makepyfile(test_support=RECORD_TEST)
        project.live()
        project.server.plan(route, *replies)
        project.run("--agentloom-record").assert_outcomes(passed=1)
        _RECORDINGS[flow] = cassette.read_text()
    else:
        cassette.parent.mkdir(parents=True, exist_ok=True)
        cassette.write_text(_RECORDINGS[flow])
    project.offline()


def inner(project: Project, body: str) -> None:
    """The inner test: one run of flow.yaml, then ``body`` (indented by 4) asserting on ``result``."""
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    project.pytester.makepyfile(test_support=(
        "def test_support(agentloom):\n"
        "    result = agentloom.run('flow.yaml', state={'ticket': 'Printer on fire'})\n"
        "    faults = [(e.step_id, e.data['target'], e.data['fault']) for e in result.trace.events('fault_injected')]\n"
        "    retries = [(e.step_id, e.data['status'], e.data['error']) for e in result.trace.events('retry')]\n"
        f"{lines}\n"))


def faulted(project: Project, *faults: str) -> pytest.RunResult:
    args = [arg for fault in faults for arg in ("--agentloom-inject", fault)]
    return project.run(*args)


def fault_flow(project: Project) -> None:
    replayed(project, FAULT_FLOW, text("bug"), text('{"priority": "high"}'), text("We are on it, promise."))


def test_a_429_fails_the_first_call_and_its_retry_replays_the_recording(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert result.status == "success", result.steps
assert result.steps["classify"].attempts == 2
assert faults == [("classify", "classify#1", "429")]
[(step, status, error)] = retries
assert (step, status) == ("classify", 429)
assert "injected fault classify#1=429 (--agentloom-inject)" in error
assert result.state["answer"] == "We are on it, promise."
""")
    faulted(project, "classify#1=429").assert_outcomes(passed=1)


def test_a_timeout_is_retried_as_a_request_that_got_no_response(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert result.status == "success", result.steps
[(step, status, error)] = retries
assert (step, status) == ("classify", None)
assert "timed out" in error.lower(), error
assert faults == [("classify", "classify#1", "timeout")]
""")
    faulted(project, "classify=timeout").assert_outcomes(passed=1)


def test_a_status_the_retry_table_does_not_list_fails_the_run_and_leaves_the_rest_unused(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert (result.status, result.reason) == ("failed", "step_failed")
assert result.steps["classify"].error_code == "provider_error"
assert "HTTP 501" in result.steps["classify"].error, result.steps["classify"].error
assert "not retryable, attempt 1" in result.steps["classify"].error
assert retries == []
""")
    faulted(project, "classify#1=501").assert_outcomes(passed=1)  # no unused-interactions failure


@pytest.mark.slow  # two inner sessions (or a recording of its own)
def test_anthropic_529_is_the_sdks_overloaded_error_and_is_retried_when_listed(project: Project) -> None:
    replayed(project, CLAUDE_FLOW, text("bug"), route="anthropic")
    inner(project, """
assert result.status == "success", result.steps
[(step, status, error)] = retries
assert (step, status) == ("classify", 529)
assert "overloaded_error" in error or "Overloaded" in error, error
assert result.state["category"] == "bug"
""")
    faulted(project, "classify#1=529").assert_outcomes(passed=1)


def test_malformed_json_fails_a_schema_step_that_may_not_re_ask(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert (result.status, result.reason) == ("failed", "step_failed")
assert result.steps["triage"].error_code == "invalid_output", result.steps["triage"]
assert result.steps["classify"].status == "success"
assert faults == [("triage", "triage#1", "malformed_json")]
""")
    faulted(project, "triage=malformed_json").assert_outcomes(passed=1)


def test_a_refusal_fails_its_step_unretried(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert result.steps["classify"].error_code == "refused", result.steps["classify"]
assert result.steps["classify"].finish_reason == "refusal"
assert result.steps["classify"].attempts == 1
assert "injected fault classify=refusal" in result.steps["classify"].error
""")
    faulted(project, "classify=refusal").assert_outcomes(passed=1)


def test_a_truncated_reply_is_kept_with_its_length_finish_reason(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert result.status == "success", result.steps
assert result.steps["draft"].finish_reason == "length"
assert result.state["answer"] == "We are on i"  # half of the recorded reply
""")
    faulted(project, "draft=truncated").assert_outcomes(passed=1)


def test_a_stream_break_is_a_mid_stream_error_and_the_retry_streams_the_recording(project: Project) -> None:
    fault_flow(project)
    inner(project, """
assert result.status == "success", result.steps
[(step, status, error)] = retries
assert (step, status) == ("draft", None)
assert "stream broke after 5 characters" in error, error
assert result.state["answer"] == "We are on it, promise."
assert result.steps["draft"].attempts == 2
""")
    faulted(project, "draft=stream_break@5").assert_outcomes(passed=1)


@pytest.mark.slow  # two inner sessions (or a recording of its own)
def test_the_marker_and_the_ini_inject_too(project: Project) -> None:
    fault_flow(project)
    inner(project, "assert faults == [('classify', 'classify#1', '503')], faults")
    source = (project.path / "test_support.py").read_text()
    project.pytester.makepyfile(test_support="import pytest\n\n@pytest.mark.agentloom(inject='classify#1=503')\n"
                                + source)
    project.run().assert_outcomes(passed=1)
    project.pytester.makepyfile(test_support=source)
    project.pytester.makeini("[pytest]\nagentloom_inject =\n    classify#1=503\n")
    project.run().assert_outcomes(passed=1)


def test_an_unknown_step_is_named_with_a_did_you_mean(project: Project) -> None:
    fault_flow(project)
    inner(project, "pass")
    result = faulted(project, "clasify#1=429")
    result.assert_outcomes(errors=0, failed=1)
    result.stdout.fnmatch_lines([
        "*UsageError: --agentloom-inject: fault 'clasify#1=429' in test_support.py::test_support (faults) "
        "targets step 'clasify', which the workflow doesn't have.",
        "*steps: classify, draft, triage",
        "*How to fix: did you mean 'classify'?",
    ])


def test_an_unknown_kind_stops_the_session_before_any_test(project: Project) -> None:
    fault_flow(project)
    inner(project, "pass")
    result = faulted(project, "classify=refusl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentloom-inject: fault 'classify=refusl' has an unknown kind 'refusl'.*"])
    assert "did you mean 'refusal'?" in result.stderr.str()


def test_stream_break_on_a_step_that_does_not_stream_is_refused(project: Project) -> None:
    fault_flow(project)
    inner(project, "pass")
    result = faulted(project, "classify=stream_break@3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 'classify' does not stream.*", "*set stream: true on step 'classify'*"])


def test_recording_with_a_fault_is_refused(project: Project) -> None:
    project.pytester.makefile(".yaml", flow=FAULT_FLOW)
    inner(project, "pass")
    project.live()
    result = project.run("--agentloom-record", "--agentloom-inject", "classify=429")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*faults are injected into a replayed (or scripted) run, and this one records*"])
    assert project.server.requests == []
    assert not Path(project.cassette()).exists()
