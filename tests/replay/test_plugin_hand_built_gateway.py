"""A live provider the test builds itself, given as ``provider=``, goes through the test's cassette.

A ``Gateway`` with a route of two providers (Anthropic first, OpenAI when it answers 5xx): recorded with
``--agentloom-record`` against the fake server (the 529 and the fallback's answer, in order), replayed offline
with no keys and the server stopped, and no key or redacted value written anywhere. A gateway holding a
scripted provider is used as it is (it answers without HTTP), as a scripted provider is.
"""

from __future__ import annotations

import yaml

from tests.replay.helpers import Project
from tests.replay.test_plugin_fallback import FLOW as FALLBACK_FLOW
from tests.servers.fake_llm import fail, text

FLOW = FALLBACK_FLOW.split("    fallback:\n")[0]  # the same step, with no fallback of its own

TEST_FILE = """\
import os

from pytest_agentloom.providers import AnthropicProvider, Gateway, OpenAIProvider

def test_support(agentloom):
    gateway = Gateway(providers={"anthropic": AnthropicProvider(), "openai": OpenAIProvider()},
                      routes=[("claude*", ["anthropic", "openai"])])
    result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                "api_token": os.environ["CANARY_SECRET"]}, provider=gateway)
    assert result.status == "success", result.steps
    assert result.state["category"] == "bug"
    assert result.steps["classify"].provider == "openai"
    assert [(step, failed) for step, failed, _ in gateway.fallbacks] == [("classify", "anthropic")]
"""


def setup(project: Project) -> None:
    project.pytester.makefile(".yaml", flow=FLOW)
    project.pytester.makepyfile(test_support=TEST_FILE)


def test_a_hand_built_gateway_is_recorded_and_replayed_through_the_cassette(project: Project) -> None:
    setup(project)
    project.live()
    project.server.plan("anthropic", fail(529))
    project.server.plan("openai", text("bug"))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    assert [request.path for request in project.server.requests] == ["/v1/messages", "/v1/chat/completions"]
    interactions = yaml.safe_load(project.cassette().read_text())["interactions"]
    assert [(i["request"]["url"].rsplit("/", 1)[1], i["response"]["status"]) for i in interactions] == [
        ("messages", 529), ("completions", 200)]

    project.offline()  # no keys, the server's address unreachable: only the cassette can answer
    project.run("--agentloom-cov").assert_outcomes(passed=1)

    project.assert_no_canaries()  # the cassette above all: no key, and the redacted value not even once


def test_without_a_recording_a_hand_built_gateway_fails_closed_in_replay(project: Project) -> None:
    setup(project)
    project.offline()
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cassette*test_support.yaml*"])
    assert project.server.requests == []


def test_a_gateway_holding_a_scripted_provider_is_used_as_it_is(project: Project) -> None:
    project.pytester.makefile(".yaml", flow=FLOW)
    project.pytester.makepyfile(test_support="""
        from pytest_agentloom import Scripted
        from pytest_agentloom.providers import Gateway

        def test_support(agentloom):
            gateway = Gateway(providers={"anthropic": Scripted({"classify": "bug"})})
            result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire"}, provider=gateway)
            assert result.state["category"] == "bug"
    """)
    project.offline()
    project.run().assert_outcomes(passed=1)
    assert not project.cassette().exists()
