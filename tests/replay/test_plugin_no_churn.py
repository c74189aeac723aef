"""Re-recording leaves a cassette's bytes as they were when only volatile response fields changed (ids,
``created``, ``system_fingerprint``, date and request-id headers, and the fields a test names); a changed
answer rewrites it; ``before_record_response`` edits each response as vcrpy's hook does."""

from __future__ import annotations

import pytest

from pytest_agentloom.replay._response_filters import DEFAULT_RESPONSE_IGNORE, same_but_volatile
from tests.replay.helpers import TEST_FILE, Project
from tests.servers.fake_llm import text


def record(project: Project, *replies: str) -> str:
    project.server.plan("openai", *(text(reply) for reply in replies))
    result = project.run("--agentloom-record")
    result.assert_outcomes(passed=1)
    return str(result.stdout.str())


def test_re_recording_the_same_answers_with_fresh_ids_leaves_the_file_byte_for_byte(project: Project) -> None:
    project.live()
    record(project, "bug", "We are on it.")
    first = project.cassette().read_bytes()
    out = record(project, "bug", "We are on it.")  # the server's ids and created times are new ones
    assert project.cassette().read_bytes() == first
    assert "cassette recorded" not in out
    lines = out.splitlines()
    start = lines.index("agentloom: 1 cassette re-recorded unchanged (the same calls and answers but for volatile "
                        "response fields: the file is left as it was):")
    assert lines[start + 1] == "  cassettes/test_support.py/test_support.yaml"
    project.server.plan("openai", text("bug"), text("We are on it.", output_tokens=9))
    project.run("--agentloom-record").assert_outcomes(passed=1)  # a changed answer (its usage) changes the file
    changed = project.cassette().read_text()
    assert "completion_tokens: 9" in changed and changed.encode() != first


def test_fresh_ids_really_differ_between_the_two_recordings(project: Project) -> None:
    """The check above means something only if the server answers the second recording with other ids."""
    project.live()
    record(project, "bug", "We are on it.")
    first = project.cassette().read_text()
    project.cassette().unlink()
    record(project, "bug", "We are on it.")
    second = project.cassette().read_text()
    assert first != second and "chatcmpl" in first


def test_response_fields_named_in_the_ini_are_volatile_too(project: Project) -> None:
    project.live()
    project.pytester.makeini("[pytest]\nagentloom_cassette_response_ignore =\n    usage.completion_tokens\n"
                             "    usage.total_tokens\n")
    project.server.plan("openai", text("bug"), text("We are on it.", output_tokens=4))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    first = project.cassette().read_bytes()
    project.server.plan("openai", text("bug"), text("We are on it.", output_tokens=9))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    assert project.cassette().read_bytes() == first


HOOK_TEST = TEST_FILE.replace("def test_support(agentloom):", '''\
import pytest

def tag(response):
    response["headers"]["x-reviewed"] = ["yes"]
    return response

@pytest.mark.agentloom(before_record_response=tag)
def test_support(agentloom):''')


def test_before_record_response_from_the_marker_edits_what_is_recorded(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=HOOK_TEST)
    record(project, "bug", "We are on it.")
    assert project.cassette().read_text().count("x-reviewed:\n      - 'yes'") == 2
    project.offline()
    project.run().assert_outcomes(passed=1)


def test_a_hook_that_returns_nothing_fails_the_recording_with_why(project: Project) -> None:
    project.live()
    project.pytester.makepyfile(test_support=HOOK_TEST.replace("    return response\n", ""))
    project.server.plan("openai", text("bug"), text("We are on it."))
    result = project.run("--agentloom-record", "-vv")
    result.assert_outcomes(failed=1)
    assert "before_record_response tag returned NoneType, not the response to record." in result.stdout.str()
    assert not project.cassette().exists()


def sse(*events: str) -> dict:
    return {"request": {"method": "POST"}, "response": {"status": 200, "reason": "OK", "headers": {},
                                                          "body": {"text": "".join(events)}}}


@pytest.mark.parametrize(("left", "right", "same"), [
    ('data: {"id": "a", "created": 1, "choices": [{"delta": {"content": "hi"}}]}\n\n',
     'data: {"id": "b", "created": 2, "choices": [{"delta": {"content": "hi"}}]}\n\n', True),
    ('data: {"id": "a", "choices": [{"delta": {"content": "hi"}}]}\n\n',
     'data: {"id": "a", "choices": [{"delta": {"content": "ho"}}]}\n\n', False),
    ('event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1"}}\n\n',
     'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_2"}}\n\n', True),
])
def test_streamed_bodies_are_compared_event_by_event(left: str, right: str, same: bool) -> None:
    assert same_but_volatile(sse(left), sse(right), DEFAULT_RESPONSE_IGNORE) is same


def test_a_changed_request_is_never_volatile() -> None:
    one, other = sse("data: {}\n\n"), sse("data: {}\n\n")
    other["request"] = {"method": "GET"}
    assert not same_but_volatile(one, other, DEFAULT_RESPONSE_IGNORE)
