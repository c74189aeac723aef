"""End to end through pytester: record against a local server, replay with it stopped and no keys."""

from __future__ import annotations

import pytest
import yaml

from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import drop, fail, text


def plan_support(project: Project) -> None:
    project.server.plan("openai", text("bug"), text("We are on it."))


def test_record_then_replay_offline_without_keys(project: Project) -> None:
    project.live()
    plan_support(project)
    recorded = project.run("--agentloom-record")
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines(["*agentloom: 1 cassette recorded (record mode all)*"])
    assert len(project.server.requests) == 2

    project.offline()
    replayed = project.run()
    replayed.assert_outcomes(passed=1)
    assert "cassette recorded" not in replayed.stdout.str()

    # no secret reached any file: neither the API key nor the redacted state value
    assert "<REDACTED:sha256=" in project.cassette().read_text()  # the prompt's secret, as the engine's marker
    project.assert_no_canaries()

    # readable YAML with provenance
    document = yaml.safe_load(project.cassette().read_text())
    assert document["format_version"] == 1
    provenance = document["provenance"]
    assert provenance["test"] == "test_support.py::test_support"
    assert provenance["record_mode"] == "all"
    assert set(provenance["sdks"]) >= {"openai", "anthropic"}
    assert list(provenance["workflows"]) == ["flow.yaml"]
    assert provenance["workflows"]["flow.yaml"].startswith("parsed-sha256:")  # the workflow's meaning
    first = document["interactions"][0]
    assert first["request"]["body"]["json"]["model"] == "gpt-4o-mini"  # a JSON body as data
    assert first["response"]["body"]["json"]["choices"][0]["message"]["content"] == "bug"
    assert sorted(first["request"]["headers"]) == ["accept", "content-type"]


def test_replay_never_reaches_the_network(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.server.reset()
    project.monkeypatch.delenv("OPENAI_API_KEY")  # base URL still points at the live server
    project.run().assert_outcomes(passed=1)
    assert project.server.requests == []


def test_missing_cassette_says_so_in_plain_words(project: Project) -> None:
    project.offline()
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*CassetteNotFoundError: Test test_support.py::test_support has no cassette to replay: "
        "cassettes/test_support.py/test_support.yaml does not exist.",
        f"*  looked for: {project.pytester.path}/cassettes/test_support.py/test_support.yaml",
        f"*  resolved against: {project.pytester.path} (the rootdir)",
        "*How to fix: record it once against live providers (API keys needed), then commit the file:",
        "*  pytest test_support.py::test_support --agentloom-record",
    ])


def test_a_changed_request_fails_the_step_with_a_diff(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    project.monkeypatch.setenv("TICKET", "Scanner jammed")
    project.pytester.makepyfile(test_support="""
        import os

        def test_support(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "Scanner jammed",
                                                        "api_token": os.environ["CANARY_SECRET"]})
            assert result.status == "failed"
            step = result.steps["classify"]
            assert step.error_code == "cassette_mismatch"
            assert step.attempts == 1  # never retried
    """)
    result = project.run()
    result.assert_outcomes(failed=1)  # the test failed too, although it did not look at the step's error
    result.stdout.fnmatch_lines([
        "Cassette has no recorded response for this request "
        "(test test_support.py::test_support, step 'classify', turn 1).",
        "  cassette: cassettes/test_support.py/test_support.yaml (record mode none; 2 interactions, 0 used)",
        "  request: POST /v1/chat/completions (attempt 1, model gpt-4o-mini)",
        "  matched on: method, url, body",
        "  closest recorded: interaction #1 (POST /v1/chat/completions); differences (recorded -> now):",
        "    body.messages[0].content: 'Classify (auth <REDACTED>): Printer on fire' -> "
        "'Classify (auth <REDACTED>): Scanner jammed'",
        "How to fix: if the change is intended, re-record this test against live providers:",
        "  pytest test_support.py::test_support --agentloom-record",
    ])


def test_unused_interactions_fail_the_test(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    project.pytester.makefile(".yaml", flow="""\
name: support
state: {ticket: "", api_token: ""}
state_schema: {api_token: {redact: true}}
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify (auth {state.api_token}): {state.ticket}"
    output: category
""")
    project.pytester.makepyfile(test_support="""
        import os

        def test_support(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                        "api_token": os.environ["CANARY_SECRET"]})
            assert result.status == "success"
    """)
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*Test test_support.py::test_support did not use 1 of the 2 recorded interactions of its cassette: "
        "the workflow now calls the model fewer times than when it was recorded.",
        "*cassette: cassettes/test_support.py/test_support.yaml",
        "*#2 POST /v1/chat/completions model=gpt-4o-mini last message='Reply to a bug ticket: Printer on fire'",
        "*How to fix: if the change is intended, re-record the cassette: "
        "pytest test_support.py::test_support --agentloom-record",
    ])


def test_editing_the_workflow_flags_the_cassette_as_stale(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    flow = project.path / "flow.yaml"
    flow.write_text(flow.read_text().replace("name: support", "name: support\ndescription: edited"))
    result = project.run()
    result.assert_outcomes(passed=1)  # same requests: it still replays, but may be stale
    result.stdout.fnmatch_lines([
        "*agentloom: 1 cassette possibly stale (the workflow file changed since recording):",
        "*cassettes/test_support.py/test_support.yaml (changed: flow.yaml)",
        "How to fix: re-record them with live providers: pytest test_support.py::test_support --agentloom-record",
    ])


def test_streaming_replays_the_same_text_usage_and_finish_reason(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug", input_tokens=11, output_tokens=1),
                        text("We are on it.", input_tokens=12, output_tokens=4))
    project.pytester.makepyfile(test_support="""
        import os

        def test_support(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                        "api_token": os.environ["CANARY_SECRET"]}, stream=True)
            assert result.status == "success", result.steps
            assert result.state["answer"] == "We are on it."
            step = result.steps["reply"]
            assert (step.input_tokens, step.output_tokens, step.finish_reason) == (12, 4, "stop")
    """)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    document = yaml.safe_load(project.cassette().read_text())
    body = document["interactions"][1]["response"]["body"]
    assert list(body) == ["text"] and body["text"].startswith("data: {")  # SSE kept as text
    assert "\ndata: [DONE]" in body["text"]
    project.offline()
    project.run().assert_outcomes(passed=1)


def test_a_recorded_429_is_retried_on_replay(project: Project) -> None:
    project.live()
    project.server.plan("openai", fail(429, "slow down"), text("bug"), text("We are on it."))
    project.pytester.makepyfile(test_support="""
        import os

        def test_support(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                        "api_token": os.environ["CANARY_SECRET"]})
            assert result.status == "success", result.steps
            assert result.steps["classify"].attempts == 2
            assert [e.data["status"] for e in result.trace.events("retry")] == [429]
    """)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    statuses = [item["response"]["status"] for item in yaml.safe_load(project.cassette().read_text())["interactions"]]
    assert statuses == [429, 200, 200]
    project.offline()
    project.run().assert_outcomes(passed=1)


def test_a_recorded_dropped_connection_is_retried_on_replay_as_it_was_live(project: Project) -> None:
    project.live()
    project.server.plan("openai", drop(), text("bug"), text("We are on it."))
    project.pytester.makepyfile(test_support="""
        import os

        def test_support(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "Printer on fire",
                                                        "api_token": os.environ["CANARY_SECRET"]})
            assert result.status == "success", result.steps
            assert result.steps["classify"].attempts == 2
            (retry,) = result.trace.events("retry")
            assert retry.data["status"] is None and "connection failed" in retry.data["error"], retry.data
    """)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    statuses = [item["response"]["status"] for item in yaml.safe_load(project.cassette().read_text())["interactions"]]
    assert statuses == [0, 200, 200]  # 0: the request got no response
    for path in project.files():  # the unanswered request was scrubbed like the others
        assert CANARY_KEY.encode() not in path.read_bytes() and CANARY_SECRET.encode() not in path.read_bytes()
    project.offline()
    project.run().assert_outcomes(passed=1)


def test_recording_is_refused_under_ci_unless_typed_on_the_command_line(project: Project) -> None:
    project.live()
    refused = project.refused_under_ci("--agentloom-record")
    refused.stderr.fnmatch_lines(["*Recording cassettes (record mode all) is refused under CI=true*"])
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)  # typed: asked for explicitly


def test_recording_from_ini_addopts_is_refused_under_ci_too(project: Project) -> None:
    project.monkeypatch.setenv("CI", "1")
    project.pytester.makeini("[pytest]\naddopts = --agentloom-record-mode=new_episodes\n")
    refused = project.run()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*Recording cassettes (record mode new_episodes) is refused under CI=true*",
                                  "How to fix: *"])
    project.monkeypatch.setenv("CI", "false")
    project.offline()
    project.run().assert_outcomes(failed=1)  # not CI: the ini's mode applies (no cassette, nothing live to record)


def test_bad_record_mode_lists_the_valid_ones(project: Project) -> None:
    result = project.run("--agentloom-record-mode", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentloom-record-mode must be one of none, once, new_episodes, all "
                                 "(got 'sometimes')*"])


def test_cassette_dir_option_and_ini(project: Project) -> None:
    project.live()
    plan_support(project)
    project.pytester.makeini("[pytest]\nagentloom_cassette_dir = recorded/calls\n")
    project.run("--agentloom-record").assert_outcomes(passed=1)
    assert (project.path / "recorded/calls/test_support.py/test_support.yaml").is_file()
    plan_support(project)
    project.run("--agentloom-record", "--agentloom-cassette-dir", "other").assert_outcomes(passed=1)
    assert (project.path / "other/test_support.py/test_support.yaml").is_file()


def test_record_mode_once_records_only_a_missing_cassette(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record-mode=once").assert_outcomes(passed=1)
    assert len(project.server.requests) == 2
    before = project.cassette().read_text()
    project.run("--agentloom-record-mode=once").assert_outcomes(passed=1)
    assert len(project.server.requests) == 2  # replayed, nothing sent
    assert project.cassette().read_text() == before


def test_parametrized_tests_get_one_cassette_each(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."), text("bug"), text("We are on it."))
    project.pytester.makepyfile(test_support="""
        import os
        import pytest

        @pytest.mark.parametrize("ticket", ["Printer on fire", "Scanner jammed"], ids=["printer", "scanner"])
        def test_support(agentloom, ticket):
            result = agentloom.run("flow.yaml", state={"ticket": ticket, "api_token": os.environ["CANARY_SECRET"]})
            assert result.status == "success", result.steps
    """)
    project.run("--agentloom-record").assert_outcomes(passed=2)
    assert project.cassette("test_support.py/test_support[printer].yaml").is_file()
    assert project.cassette("test_support.py/test_support[scanner].yaml").is_file()
    project.offline()
    project.run().assert_outcomes(passed=2)


def test_help_lists_the_cassette_options(project: Project) -> None:
    result = project.run("--help")
    result.stdout.fnmatch_lines([
        "  --agentloom-cassette-dir=VALUE",
        "*folder of recorded provider calls (cassettes), relative",
        "  --agentloom-record    re-record the selected tests' cassettes against live",
        "*",
        "*",
        "  --agentloom-record-mode=VALUE",
        "*cassette record mode: none (replay only, the default),",
        "*",
        "*agentloom_cassette_dir (string):",
    ])


CHANGED_TICKET = """
    import os

    def test_support(agentloom):
        result = agentloom.run("flow.yaml", state={"ticket": "Scanner jammed",
                                                    "api_token": os.environ["CANARY_SECRET"]})
        assert result.ok, result.steps["classify"].error
"""


def test_ini_ignores_body_paths_and_the_marker_adds_matchers(project: Project) -> None:
    project.live()
    plan_support(project)
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()
    project.pytester.makepyfile(test_support=CHANGED_TICKET)
    project.pytester.makeini("[pytest]\nagentloom_cassette_ignore =\n    messages[*].content\n")
    project.run().assert_outcomes(passed=1)  # the prompts differ only in the ignored content
    project.pytester.makeconftest("""
        def same_length(request, recorded):
            if len(request.body) != len(recorded.body):
                raise AssertionError(f"body length {len(request.body)} != {len(recorded.body)}")
    """)
    project.pytester.makepyfile(test_support="import pytest\nfrom conftest import same_length\n\n"
                                "pytestmark = pytest.mark.agentloom(cassette_matchers=[same_length])\n"
                                + CHANGED_TICKET.replace("\n    ", "\n"))
    result = project.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*  matched on: method, url, body (ignoring messages[[]*].content), same_length",
        "*    matcher 'same_length': body length * != *",
    ])
