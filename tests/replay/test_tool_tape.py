"""Replay of tools with side effects: recorded results instead of real runs, misses fail the step."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, run_workflow, tool_call
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.replay._tool_tape import ToolReplayMissError, ToolTape, tape_path
from pytest_agentloom.tools import tool
from pytest_agentloom.tools._registry import Tool


class Outbox:
    def __init__(self) -> None:
        self.sent: list[str] = []

        @tool(side_effects=True)
        def send_email(to: str) -> str:
            """Send an email."""
            if to.endswith(".invalid"):
                raise ValueError(f"bad address {to}")
            self.sent.append(to)
            return f"sent to {to}"

        @tool
        def lookup(name: str) -> str:
            """No side effects: always runs for real."""
            return f"{name}@example.org"

        self.tools = {"send_email": send_email, "lookup": lookup}


def call(tools: dict[str, Tool], tool_name: str, **arguments: Any) -> Any:
    return asyncio.run(tools[tool_name].invoke(arguments))


def record(path: Path) -> Outbox:
    outbox = Outbox()
    tape = ToolTape(path, recording=True)
    tools = tape.wrap(outbox.tools)
    assert call(tools, "send_email", to="ana@example.org") == "sent to ana@example.org"
    with pytest.raises(ValueError, match=r"bad address x\.invalid"):
        call(tools, "send_email", to="x.invalid")
    assert call(tools, "lookup", name="ana") == "ana@example.org"
    assert tape.save() == path
    return outbox


def test_tape_path_sits_next_to_the_cassette() -> None:
    assert tape_path(Path("cassettes/test_x.yaml")) == Path("cassettes/test_x.tools.yaml")


def test_recording_runs_the_tools_and_keeps_only_those_with_side_effects(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    outbox = record(path)
    assert outbox.sent == ["ana@example.org"]
    text = path.read_text()
    assert text.startswith("format_version: 1\n")
    assert "lookup" not in text
    assert "ValueError" in text and "bad address x.invalid" in text


def test_replay_returns_recorded_results_without_running_the_tool(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    record(path)
    outbox = Outbox()
    tape = ToolTape(path, recording=False)
    tools = tape.wrap(outbox.tools)
    assert call(tools, "send_email", to="ana@example.org") == "sent to ana@example.org"
    with pytest.raises(Exception, match=r"bad address x\.invalid") as info:
        call(tools, "send_email", to="x.invalid")
    assert type(info.value).__name__ == "ValueError"  # same text as the real error for the model
    assert call(tools, "lookup", name="bo") == "bo@example.org"  # no side effects: runs for real
    assert outbox.sent == []
    assert tape.unused() == []


def test_a_call_the_recording_does_not_have_fails(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    record(path)
    tools = ToolTape(path, recording=False).wrap(Outbox().tools)
    call(tools, "send_email", to="ana@example.org")
    with pytest.raises(ToolReplayMissError) as info:
        call(tools, "send_email", to="ana@example.org")  # recorded once, used once
    message = str(info.value)
    assert message.startswith("Tool 'send_email' has side effects, and the recording has no call to it")
    assert "How to fix: re-record the test with --agentloom-record" in message


def test_allow_real_lets_named_tools_run_during_replay(tmp_path: Path) -> None:
    outbox = Outbox()
    tools = ToolTape(tmp_path / "none.tools.yaml", recording=False, allow_real=["send_email"]).wrap(outbox.tools)
    call(tools, "send_email", to="new@example.org")
    assert outbox.sent == ["new@example.org"]


def test_a_replay_that_leaves_recorded_calls_unused_says_which(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    record(path)
    tape = ToolTape(path, recording=False)
    tools = tape.wrap(Outbox().tools)
    call(tools, "send_email", to="ana@example.org")  # the failing call to x.invalid is never made now
    assert [entry["arguments"] for entry in tape.unused()] == [{"to": "x.invalid"}]
    message = tape.unused_message("test_x.py::test_mail", "pytest test_x.py::test_mail --agentloom-record")
    assert message is not None
    assert message.startswith("Test test_x.py::test_mail did not make 1 of the 2 recorded tool calls")
    assert '    send_email {"to": "x.invalid"}' in message
    assert message.endswith("How to fix: if the change is intended, re-record the test: "
                            "pytest test_x.py::test_mail --agentloom-record.")
    with pytest.raises(Exception, match="bad address"):
        call(tools, "send_email", to="x.invalid")
    assert tape.unused_message() is None

    real = ToolTape(path, recording=False, allow_real=True)  # tools that ran for real used no recorded call
    assert real.unused() == [] and real.unused_message() is None
    fresh = ToolTape(path, recording=True)  # a new recording has nothing from the file to leave unused
    fresh.wrap(Outbox().tools)
    assert fresh.unused_message() is None


def test_appending_replays_what_the_recording_has_and_records_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    record(path)
    outbox = Outbox()
    tape = ToolTape(path, recording=True, append=True)
    tools = tape.wrap(outbox.tools)
    assert call(tools, "send_email", to="ana@example.org") == "sent to ana@example.org"  # recorded: not run
    assert call(tools, "send_email", to="bo@example.org") == "sent to bo@example.org"  # new: runs, is added
    assert outbox.sent == ["bo@example.org"]
    assert [entry["arguments"] for entry in tape.unused()] == [{"to": "x.invalid"}]
    tape.save()
    kept = ToolTape(path, recording=False)
    assert [entry["arguments"]["to"] for entry in kept.entries] == ["ana@example.org", "x.invalid", "bo@example.org"]


def test_an_unknown_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    path.write_text("format_version: 99\ncalls: []\n")
    with pytest.raises(ToolReplayMissError, match="format_version 99"):
        ToolTape(path, recording=False)


FLOW = textwrap.dedent("""\
    name: mail
    config: {model: gpt-4o-mini}
    steps:
      - id: ask
        type: llm_call
        prompt: "Email Ana."
        tools: [{name: send_email}]
    """)


def test_a_replay_miss_in_a_tool_loop_fails_the_step_instead_of_going_back_to_the_model(tmp_path: Path) -> None:
    outbox = Outbox()
    tools = ToolTape(tmp_path / "empty.tools.yaml", recording=False).wrap(outbox.tools)
    provider = Scripted({"ask": [tool_call("send_email", to="ana@example.org"), "done"]})
    result = run_workflow(parse_workflow(FLOW), provider=provider, tools=tools, clock=VirtualClock(), runs_dir=False)
    step = result.steps["ask"]
    assert (result.status, step.error_code) == ("failed", "tool_replay_miss")
    assert outbox.sent == []
    assert len(provider.requests) == 1


def test_secrets_are_scrubbed_from_the_file_and_replay_still_matches(tmp_path: Path) -> None:
    path = tmp_path / "t.tools.yaml"
    redact = lambda text: text.replace("s3cret-7", "<REDACTED>")  # noqa: E731 - the cassette's http_redactor
    recording = ToolTape(path, recording=True, redact=redact)
    call(recording.wrap(Outbox().tools), "send_email", to="s3cret-7@example.org")
    recording.save()
    assert "s3cret-7" not in path.read_text()

    outbox = Outbox()
    tools = ToolTape(path, recording=False, redact=redact).wrap(outbox.tools)
    assert call(tools, "send_email", to="s3cret-7@example.org") == "sent to <REDACTED>@example.org"
    assert outbox.sent == []


def test_a_multi_line_or_long_secret_is_scrubbed_before_yaml_folds_it(tmp_path: Path) -> None:
    from pytest_agentloom._redaction.http_traffic import HttpRedactor

    secret = "-----BEGIN KEY-----\nMIIEvAIBADANBgkqhkiG9w0BAQEFAASC " + "x" * 90 + "\n-----END KEY-----"
    http_redactor = HttpRedactor(secrets=[secret], marker=lambda value: "<REDACTED:sha256=0123456789abcdef>")
    path = tmp_path / "t.tools.yaml"
    recording = ToolTape(path, recording=True, redact=http_redactor.text)
    call(recording.wrap(Outbox().tools), "send_email", to=f"{secret} ops@example.org")
    recording.save()
    text = path.read_text()
    assert "MIIEvAIBADANBgkqhkiG9w0BAQEFAASC" not in text and "x" * 40 not in text
    assert "<REDACTED:sha256=0123456789abcdef> ops@example.org" in text


def test_a_dummy_secret_replays_a_call_recorded_with_the_real_one(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching sees "a redacted value", not its digest; ``AGENTLOOM_SECRET_MARKERS=exact`` tells them apart."""
    from pytest_agentloom._redaction.http_traffic import HttpRedactor
    from pytest_agentloom._redaction.redactor import Redactor

    redactor = Redactor(["token"], salt="salt")

    def scrubber(secret: str) -> HttpRedactor:
        return HttpRedactor(secrets=[secret], marker=redactor.marker)

    @tool(side_effects=True)
    def open_ticket(token: str) -> dict[str, Any]:
        """Keyed by the token: its marker sorts elsewhere than the value."""
        return {"id": 7, token: "open"}

    path = tmp_path / "t.tools.yaml"
    recording = ToolTape(path, recording=True, redact=scrubber("real-token-1").text)
    call(recording.wrap({"open_ticket": open_ticket}), "open_ticket", token="real-token-1")
    recording.save()
    assert "real-token-1" not in path.read_text()
    monkeypatch.delenv("AGENTLOOM_SECRET_MARKERS", raising=False)
    replay = ToolTape(path, recording=False, redact=scrubber("dummy-token-2").text)
    result = call(replay.wrap({"open_ticket": open_ticket}), "open_ticket", token="dummy-token-2")
    assert result == {"id": 7, redactor.marker("real-token-1"): "open"}
    monkeypatch.setenv("AGENTLOOM_SECRET_MARKERS", "exact")
    exact = ToolTape(path, recording=False, redact=scrubber("dummy-token-2").text)
    with pytest.raises(ToolReplayMissError):
        call(exact.wrap({"open_ticket": open_ticket}), "open_ticket", token="dummy-token-2")
