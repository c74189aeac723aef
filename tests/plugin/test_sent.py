"""What a run sent, as snapshots show it: secret values of the state replaced by their markers."""

from __future__ import annotations

import pytest

from pytest_agentloom._core.types import LLMRequest, Message
from pytest_agentloom._redaction.redactor import PATTERNS_ENV, make_marker
from pytest_agentloom._redaction.salt import SALT_ENV
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.testing._snapshots.sent import sent_data

FLOW = "name: w\nstate: {token: ''}\nSCHEMA\nsteps: [{id: s, type: llm_call, model: m, prompt: 'Use {state.token}'}]\n"
SECRET = "tok-secret-123"


def sent_text(schema: str = "") -> str:
    workflow = parse_workflow(FLOW.replace("SCHEMA", schema))
    request = LLMRequest(step_id="s", model="m", messages=(Message(role="user", content=f"Use {SECRET}"),))
    data = sent_data([request], workflow, {"token": SECRET})
    assert data is not None
    return str(data["s"][0]["messages"][0]["content"])


def test_the_requests_hide_the_values_of_redacted_keys_whichever_way_the_key_is_named_and_only_then(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "a-salt-for-this-test")
    monkeypatch.delenv(PATTERNS_ENV, raising=False)
    marked = f"Use {make_marker(SECRET, salt=b'a-salt-for-this-test')}"
    assert sent_text() == f"Use {SECRET}"  # no pattern: nothing is secret
    assert sent_text("state_schema: {token: {redact: true}}") == marked
    monkeypatch.setenv(PATTERNS_ENV, "tok*")  # a pattern of the environment, seen as soon as it is set
    assert sent_text() == marked
    monkeypatch.delenv(PATTERNS_ENV)
    assert sent_text() == f"Use {SECRET}"


def test_a_result_works_out_what_its_run_sent_when_first_asked_and_once() -> None:
    from pytest_agentloom.engine._entry.run_workflow import run_workflow
    from pytest_agentloom.providers._scripted import Scripted

    workflow = parse_workflow("name: w\nsteps:\n  - {id: a, type: llm_call, prompt: hi, output: x}\n")
    result = run_workflow(workflow, provider=Scripted({"a": "yo"}), runs_dir=False)
    assert result.sent_requests is None  # a run the fixture did not make: nothing noted
    calls: list[int] = []

    def work_out() -> dict[str, list[dict[str, object]]]:
        calls.append(1)
        return {"a": [{"model": "m"}]}

    result.sent_requests = work_out
    assert calls == []
    assert result.sent_requests == result.sent_requests == {"a": [{"model": "m"}]}
    assert calls == [1]
