"""``redacted(...)`` in assert_tool_calls and assert_output, and no failure message that prints a secret.

Real runs of a workflow whose state holds two secrets; the tool gets the real token, the trace the marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentloom import Scripted, UsageError, VirtualClock, WorkflowResult, redacted, run_workflow

TOKEN = "hd-7f3a9c2e51"
OTHER = "other-5be21d90aa"

FLOW = """\
name: helpdesk
state: {helpdesk_token: "", backup_token: "", query: "printer"}
state_schema:
  "*_token": {redact: true}
steps:
  - id: lookup
    type: tool
    tool_name: lookup
    tool_args: {token: "{state.helpdesk_token}", header: "Bearer {state.helpdesk_token}", q: "{state.query}"}
    output: session_token
"""


@pytest.fixture
def result(tmp_path: Path) -> WorkflowResult:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    received: list[dict[str, str]] = []

    def lookup(token: str, header: str, q: str) -> str:
        received.append({"token": token})
        return "session-for-" + token

    run = run_workflow(path, state={"helpdesk_token": TOKEN, "backup_token": OTHER}, provider=Scripted({}),
                       tools={"lookup": lookup}, clock=VirtualClock(), runs_dir=False, redaction_salt="test-salt")
    assert received == [{"token": TOKEN}]  # the tool got the real value
    return run


def _failure(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(AssertionError) as info:
        call()
    return str(info.value)


def test_redacted_matches_the_marker_of_the_named_key(result: WorkflowResult) -> None:
    result.assert_tool_calls([("lookup", {"token": redacted("helpdesk_token"), "header": "Bearer " + TOKEN,
                                          "q": "printer"})])
    result.assert_tool_calls([("lookup", {"token": redacted(), "header": "Bearer " + TOKEN, "q": "printer"})])


def test_the_real_secret_matches_as_its_marker(result: WorkflowResult) -> None:
    result.assert_tool_calls([("lookup", {"token": TOKEN, "header": f"Bearer {TOKEN}", "q": "printer"})])


def test_another_secret_fails_and_the_message_shows_markers_only(result: WorkflowResult) -> None:
    for token in (redacted("backup_token"), OTHER):
        text = _failure(lambda token=token: result.assert_tool_calls(
            [("lookup", {"token": token, "header": f"Bearer {TOKEN}", "q": "printer"})]))
        assert "Tool calls differ" in text and "first difference at call 0" in text
        assert TOKEN not in text and OTHER not in text
        assert result.state["backup_token"] in text and result.state["helpdesk_token"] in text


def test_a_wrong_query_never_prints_the_secret_passed(result: WorkflowResult) -> None:
    text = _failure(lambda: result.assert_tool_calls(
        [("lookup", {"token": TOKEN, "header": f"Bearer {TOKEN}", "q": "scanner"})]))
    assert TOKEN not in text and "scanner" in text and "<REDACTED:sha256=" in text


def test_assert_output_takes_redacted_and_hides_the_secret(result: WorkflowResult) -> None:
    result.assert_output("lookup", redacted("session_token"))  # an output key that matches: redacted whole
    result.assert_output("lookup", "session-for-" + TOKEN)
    text = _failure(lambda: result.assert_output("lookup", "session-for-" + OTHER))
    assert OTHER not in text and TOKEN not in text
    assert "expected: 'session-for-<REDACTED:sha256=" in text
    text = _failure(lambda: result.assert_output("lookup", redacted("backup_token")))
    assert "expected: redacted('backup_token')" in text and OTHER not in text


def test_a_key_that_holds_no_redacted_value_is_a_usage_error(result: WorkflowResult) -> None:
    with pytest.raises(UsageError) as info:
        result.assert_tool_calls([("lookup", {"token": redacted("helpdesk_tokn")})])
    text = str(info.value)
    assert "redacted('helpdesk_tokn'): the run's state has no redacted value at 'helpdesk_tokn'" in text
    assert "backup_token, helpdesk_token, session_token" in text
    with pytest.raises(UsageError):
        redacted("")


def test_unbound_redacted_equals_any_marker_only(result: WorkflowResult) -> None:
    assert redacted() == result.state["helpdesk_token"]
    assert redacted() != TOKEN and redacted() != "printer"
    assert repr(redacted("a.b")) == "redacted('a.b')"
