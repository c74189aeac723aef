"""Structured output in llm_call (docs/running-workflows.md): shapes, validation, re-asks, storage."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, WorkflowError, error, reply, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

SCHEMA = "{type: object, properties: {name: {type: string}, date: {type: string}}, required: [name]}"


def flow(schema: str = f"{{type: json_schema, schema: {SCHEMA}}}", *, model: str = "gpt-4o-mini",
         extra: str = "") -> Any:
    text = textwrap.dedent(f"""\
        name: extract
        config: {{model: {model}}}
        steps:
          - id: extract
            type: llm_call
            system_prompt: "You extract."
            prompt: "Extract the name and date from: Ana, 2026-05-01"
            response_schema: {schema}
            output: extracted
        """)
    text += "".join(f"    {line}\n" for line in textwrap.dedent(extra).splitlines() if line.strip())
    return parse_workflow(text)


def run(workflow: Any, provider: Scripted) -> Any:
    return run_workflow(workflow, provider=provider, clock=VirtualClock(), runs_dir=False)


def test_a_valid_reply_is_parsed_and_the_raw_text_kept() -> None:
    raw = 'Here you go:\n```json\n{"name": "Ana", "date": "2026-05-01"}\n```'
    provider = Scripted({"extract": raw})
    result = run(flow(), provider)
    assert result.status == "success"
    assert result.state["extracted"] == {"name": "Ana", "date": "2026-05-01"}
    assert result.state["steps"]["extract"]["output"] == raw  # the reply as the model wrote it
    assert result.steps["extract"].output == {"name": "Ana", "date": "2026-05-01"}
    sent = provider.requests[0].params["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {
        "name": "extract", "strict": True,
        "schema": {"type": "object", "properties": {"name": {"type": "string"}, "date": {"type": "string"}},
                   "required": ["name", "date"], "additionalProperties": False},  # strict: every property required
    }}


def test_strict_false_sends_the_schema_as_written_and_name_and_description() -> None:
    provider = Scripted({"extract": '{"name": "Ana"}'})
    result = run(flow(f"{{type: json_schema, schema: {SCHEMA}, strict: false, name: Person, "
                      "description: A person.}"), provider)
    assert result.state["extracted"] == {"name": "Ana"}
    body = provider.requests[0].params["response_format"]["json_schema"]
    assert (body["name"], body["strict"], body["description"]) == ("Person", False, "A person.")
    assert body["schema"]["required"] == ["name"]


def test_an_invalid_reply_goes_back_with_the_problem_and_the_model_tries_again() -> None:
    provider = Scripted({"extract": [reply("no idea", input_tokens=10, output_tokens=2),
                                     reply('{"date": 5}', input_tokens=20, output_tokens=3),
                                     reply('{"name": "Ana"}', input_tokens=30, output_tokens=4)]})
    result = run(flow(f"{{type: json_schema, schema: {SCHEMA}, strict: false}}"), provider)
    step = result.steps["extract"]
    assert (result.status, step.attempts, step.input_tokens, step.output_tokens) == ("success", 1, 60, 9)
    second, third = provider.requests[1:]
    assert second.messages[-2:] == [
        {"role": "assistant", "content": "no idea"},
        {"role": "user", "content": "That reply is not valid: the reply holds no JSON (not as a whole, in a fenced "
                                    "block, or as a {...} part). Reply again with only the JSON."},
    ]
    assert third.messages[-1]["content"] == (
        "That reply is not valid: $: missing required property 'name'; $.date: expected string, got integer. "
        "Reply again with only the JSON.")
    assert [e.data["valid"] for e in result.trace.events("provider_call")] == [False, False, True]


def test_no_valid_reply_within_max_retries_fails_the_step_without_a_retry() -> None:
    provider = Scripted({"extract": ["nope", "[1]", "still not"]})
    result = run(flow(extra="retry: {max_retries: 2}"), provider)
    step = result.steps["extract"]
    assert (result.status, step.error_code, step.attempts) == ("failed", "invalid_output", 1)
    assert "no valid structured reply after 3 calls" in step.error
    assert len(provider.requests) == 3


def test_a_provider_error_during_the_re_asks_retries_the_whole_attempt() -> None:
    provider = Scripted({"extract": ["nope", error(503), '{"name": "Ana", "date": "2026-05-01"}']})
    result = run(flow(extra="retry: {max_retries: 1}"), provider)
    assert (result.status, result.steps["extract"].attempts) == ("success", 2)
    assert [(r.attempt, r.turn) for r in provider.requests] == [(1, 1), (1, 2), (2, 1)]


def test_json_object_asks_for_json_mode_and_takes_any_object() -> None:
    provider = Scripted({"extract": ['["a list"]', 'Sure: {"ideas": ["x", "y"]} - enjoy']})
    result = run(flow("{type: json_object}"), provider)
    assert provider.requests[0].params["response_format"] == {"type": "json_object"}
    assert result.state["extracted"] == {"ideas": ["x", "y"]}
    assert provider.requests[1].messages[-1]["content"].startswith("That reply is not valid: $: expected a JSON")


def test_a_streamed_reply_is_validated_once() -> None:
    provider = Scripted({"extract": ["nope", '{"name": "Ana"}']})
    result = run(flow(extra="stream: true\nretry: {max_retries: 0}"), provider)
    assert (result.status, result.steps["extract"].error_code, len(provider.requests)) == (
        "failed", "invalid_output", 1)


def test_anthropic_gets_the_schema_in_the_system_prompt_and_a_prefilled_brace() -> None:
    provider = Scripted({"extract": '"name": "Ana", "date": "2026-05-01"}'})
    result = run(flow(model="claude-haiku-4-5"), provider)
    assert result.state["extracted"] == {"name": "Ana", "date": "2026-05-01"}
    assert result.state["steps"]["extract"]["output"] == '{"name": "Ana", "date": "2026-05-01"}'
    request = provider.requests[0]
    assert "response_format" not in request.params
    assert request.messages[0]["content"].startswith("You extract.\n\nReply with one JSON value and nothing else")
    assert request.messages[-1] == {"role": "assistant", "content": "{"}


MODELS = '''\
from pydantic import BaseModel, ConfigDict


class Classification(BaseModel):
    label: str
    confidence: float


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    label: str
'''


def test_a_pydantic_model_is_imported_from_the_current_directory(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shapes_for_structured_test.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)
    provider = Scripted({"extract": ['{"label": "bug"}', '{"label": "bug", "confidence": 0.9}']})
    result = run(flow("{type: pydantic, model: 'shapes_for_structured_test:Classification'}"), provider)
    value = result.state["extracted"]
    assert type(value).__name__ == "Classification" and (value.label, value.confidence) == ("bug", 0.9)
    assert json.loads(result.to_json())["state"]["extracted"] == {"label": "bug", "confidence": 0.9}
    assert provider.requests[0].params["response_format"]["json_schema"]["name"] == "Classification"
    assert "$.confidence: Field required" in provider.requests[1].messages[-1]["content"]

    loose = run(flow("{type: pydantic, model: shapes_for_structured_test.Loose}"), Scripted({"extract": "{}"}))
    assert loose.steps["extract"].error_code == "invalid_response_schema"
    missing = run(flow("{type: pydantic, model: no_such_module_here.Thing}"), Scripted({"extract": "{}"}))
    assert "cannot import response_schema.model 'no_such_module_here.Thing'" in missing.steps["extract"].error


@pytest.mark.parametrize(
    ("schema", "headline"),
    [
        ("{type: pydantic}", "llm_call 'extract': response_schema of type pydantic needs 'model'"),
        ("{type: json_schema}", "llm_call 'extract': response_schema of type json_schema needs 'schema'"),
        ("{type: json_schema, schema: {type: object, properties: {a: {type: object, additionalProperties: true}}}}",
         "llm_call 'extract': response_schema has additionalProperties: true, which is refused"),
        ("{type: yaml}", "Invalid value for 'response_schema.type'"),
    ],
)
def test_response_schema_load_errors(schema: str, headline: str) -> None:
    with pytest.raises(WorkflowError) as info:
        flow(schema)
    assert headline in str(info.value)


def test_redaction_patterns_reach_the_fields_of_a_pydantic_instance(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shapes_for_redaction_test.py").write_text(
        "from pydantic import BaseModel\n\nclass Login(BaseModel):\n    user: str\n    password: str\n")
    monkeypatch.chdir(tmp_path)
    workflow = parse_workflow(textwrap.dedent("""\
        name: login
        config: {model: gpt-4o-mini}
        state_schema: {password: {redact: true}}
        steps:
          - {id: x, type: llm_call, prompt: hi, output: login,
             response_schema: {type: pydantic, model: shapes_for_redaction_test.Login}}
        """))
    secret = "hunter2-5ecret"
    provider = Scripted({"x": json.dumps({"user": "ana", "password": secret})})
    result = run_workflow(workflow, provider=provider, clock=VirtualClock(), runs_dir=False,
                          checkpoint_dir=tmp_path / "checkpoints")
    assert secret not in result.to_json()
    assert result.state["login"]["user"] == "ana"
    assert result.state["login"]["password"].startswith("<REDACTED:sha256=")
    assert secret not in (tmp_path / "checkpoints" / f"{result.run_id}.json").read_text()
