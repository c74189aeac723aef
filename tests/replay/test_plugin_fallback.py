"""A step's fallback through the ``agentloom`` fixture: recorded in order, replayed offline in order, no secret written.

Anthropic answers 529 (``overloaded_error``) while recording, OpenAI takes the call with its own model; the
replay, with the server stopped and no keys, plays the two answers back in that order, and the fallback shows
in the trace, the coverage table and the report page.
"""

from __future__ import annotations

import json

import yaml

from tests.replay.helpers import Project
from tests.servers.fake_llm import fail, text

FLOW = """\
name: support
state_schema:
  api_token: {redact: true}
state: {ticket: "", api_token: ""}
config:
  retry: {max_retries: 0}
steps:
  - id: classify
    type: llm_call
    model: claude-haiku-4-5
    prompt: "Classify (auth {state.api_token}): {state.ticket}"
    output: category
    fallback:
      - provider: openai
        model: gpt-4o-mini
        on: [overloaded, server_error]
"""

TEST_FILE = """\
import os

def test_support(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    assert result.state["category"] == "bug"
    step = result.steps["classify"]
    assert (step.provider, step.model) == ("openai", "gpt-4o-mini")
    [event] = [event for event in result.trace if event.kind == "fallback"]
    assert (event.data["provider"], event.data["model"], event.data["reason"]) == (
        "anthropic", "claude-haiku-4-5", "overloaded")
    assert (event.data["to_provider"], event.data["to_model"]) == ("openai", "gpt-4o-mini")
"""


def setup(project: Project) -> None:
    project.pytester.makefile(".yaml", flow=FLOW)
    project.pytester.makepyfile(test_support=TEST_FILE)


def test_the_failed_call_and_the_fallback_are_recorded_and_replayed_in_order(project: Project) -> None:
    setup(project)
    project.live()
    project.server.plan("anthropic", fail(529))
    project.server.plan("openai", text("bug"))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    assert [request.path for request in project.server.requests] == ["/v1/messages", "/v1/chat/completions"]

    document = yaml.safe_load(project.cassette().read_text())
    interactions = document["interactions"]
    assert [(i["request"]["url"].rsplit("/", 1)[1], i["response"]["status"]) for i in interactions] == [
        ("messages", 529), ("completions", 200)]
    assert interactions[0]["request"]["body"]["json"]["model"] == "claude-haiku-4-5"
    assert interactions[1]["request"]["body"]["json"]["model"] == "gpt-4o-mini"

    project.offline()
    replayed = project.run("--agentloom-cov", "--agentloom-report=report.html",
                           "--agentloom-cov-report=json:cov.json")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["*classify fell back from anthropic (overloaded) to openai*"])
    page = (project.path / "report.html").read_text()
    assert "classify fell back from anthropic (overloaded) to openai" in page
    assert "fell back from anthropic claude-haiku-4-5 (overloaded) to openai gpt-4o-mini" in page  # the timeline
    coverage = json.loads((project.path / "cov.json").read_text())
    assert "fell back" in json.dumps(coverage)

    project.assert_no_canaries()  # cassette, report, coverage map: no key, no redacted value


def test_a_replay_whose_primary_now_answers_differently_fails_closed(project: Project) -> None:
    """The recorded order is the order replayed: the fallback's answer is never served to the primary."""
    setup(project)
    project.live()
    project.server.plan("anthropic", fail(529))
    project.server.plan("openai", text("bug"))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    project.pytester.makefile(".yaml", flow=FLOW.replace("      - provider: openai\n        model: gpt-4o-mini\n"
                                                         "        on: [overloaded, server_error]\n",
                                                         "      - {provider: openai, model: gpt-4o-mini, on: "
                                                         "[rate_limit]}\n"))
    result = project.run()
    result.assert_outcomes(failed=1)  # the 529 replays, and this fallback does not take it
    result.stdout.fnmatch_lines(["*failed step 'classify' (provider_error): provider error (HTTP 529): anthropic: "
                                 "overloaded_error*"])


def test_a_timeout_that_fell_back_replays_as_a_timeout(project: Project) -> None:
    """Each hand-over is a call of its own through the cassette, so the unanswered one keeps its kind."""
    project.pytester.makefile(".yaml", flow=FLOW.replace(
        "  retry: {max_retries: 0}\n", "  retry: {max_retries: 0}\n  providers: {anthropic: {timeout: 0.1}}\n").replace(
        "on: [overloaded, server_error]", "on: [timeout]"))
    project.pytester.makepyfile(test_support=TEST_FILE.replace('"overloaded")', '"timeout")'))
    project.live()
    project.server.plan("anthropic", text("too late", delay=0.3))
    project.server.plan("openai", text("bug"))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    interactions = yaml.safe_load(project.cassette().read_text())["interactions"]
    assert [i["response"]["status"] for i in interactions] == [0, 200]
    assert "timed out" in interactions[0]["response"]["reason"]
    project.offline()
    project.run().assert_outcomes(passed=1)
